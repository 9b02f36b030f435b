-- Maintenance runs the table owner's code as the owner (issue 27, item 1).
-- recompress_online writes new index entries, so index expressions and
-- partial-index predicates run; as core's CLUSTER, REINDEX and VACUUM
-- (since CVE-2022-1552) they must run as the table's owner, in a
-- security-restricted operation, whoever calls: a superuser's routine
-- maintenance must not make the owner superuser, and a member of the
-- owner's role must not lend the owner its own privileges.
SET client_min_messages = warning;
CREATE ROLE cx_ro_bob;
CREATE ROLE cx_ro_carol;
GRANT cx_ro_bob TO cx_ro_carol;
CREATE SCHEMA cx_ro_bob AUTHORIZATION cx_ro_bob;
GRANT USAGE ON SCHEMA compressx TO cx_ro_bob, cx_ro_carol;
-- carol's own data, which bob may not read
CREATE TABLE cx_ro_carol_secret (s text);
INSERT INTO cx_ro_carol_secret VALUES ('carol''s secret');
ALTER TABLE cx_ro_carol_secret OWNER TO cx_ro_carol;

SET ROLE cx_ro_bob;
-- what the index functions saw, one row per call
CREATE TABLE cx_ro_bob.log (step text, cur name, sess name, super boolean, secret text);
CREATE FUNCTION cx_ro_bob.step() RETURNS text LANGUAGE sql STABLE
    AS $$ SELECT coalesce(current_setting('cx_ro.step', true), '') $$;
-- the volatile part: record who runs it, try to become superuser, try to
-- read carol's table
CREATE FUNCTION cx_ro_bob.g() RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    secret text;
BEGIN
    BEGIN
        SELECT s INTO secret FROM public.cx_ro_carol_secret;
    EXCEPTION WHEN insufficient_privilege THEN
        secret := 'denied';
    END;
    INSERT INTO cx_ro_bob.log
    SELECT cx_ro_bob.step(), current_user, session_user,
           (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), secret;
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE cx_ro_bob SUPERUSER';
    END IF;
END $$;
-- an index expression and a partial-index predicate that call it
CREATE FUNCTION cx_ro_bob.f(text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS
    $$ BEGIN PERFORM cx_ro_bob.g(); RETURN $1; END $$;
CREATE FUNCTION cx_ro_bob.p(text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS
    $$ BEGIN PERFORM cx_ro_bob.g(); RETURN length($1) > 0; END $$;

-- the issue's table (compressx), one with a partial index, a heap table,
-- a partitioned table
CREATE TABLE cx_ro_bob.t (id int, body text) USING compressx;
INSERT INTO cx_ro_bob.t SELECT g, repeat('x', 200) || g FROM generate_series(1, 20) g;
CREATE INDEX ON cx_ro_bob.t (cx_ro_bob.f(body));
CREATE TABLE cx_ro_bob.tp (id int, body text) USING compressx;
INSERT INTO cx_ro_bob.tp SELECT g, repeat('y', 200) || g FROM generate_series(1, 20) g;
CREATE INDEX ON cx_ro_bob.tp (id) WHERE cx_ro_bob.p(body);
CREATE TABLE cx_ro_bob.tx (id int, body text) USING compressx;
INSERT INTO cx_ro_bob.tx SELECT g, repeat('v', 200) || g FROM generate_series(1, 20) g;
ALTER TABLE cx_ro_bob.tx ADD EXCLUDE USING btree (cx_ro_bob.f(body) WITH =);
SET default_toast_compression = pglz;
CREATE TABLE cx_ro_bob.th (id int, body text) USING heap;
INSERT INTO cx_ro_bob.th SELECT g, repeat('z', 3000) || g FROM generate_series(1, 10) g;
CREATE INDEX ON cx_ro_bob.th (cx_ro_bob.f(body));
CREATE TABLE cx_ro_bob.tparted (id int, body text) PARTITION BY RANGE (id);
CREATE TABLE cx_ro_bob.tparted_1 PARTITION OF cx_ro_bob.tparted FOR VALUES FROM (0) TO (10) USING compressx;
CREATE TABLE cx_ro_bob.tparted_2 PARTITION OF cx_ro_bob.tparted FOR VALUES FROM (10) TO (100) USING compressx;
INSERT INTO cx_ro_bob.tparted SELECT g, repeat('w', 200) || g FROM generate_series(1, 20) g;
CREATE INDEX ON cx_ro_bob.tparted (cx_ro_bob.f(body));
RESET default_toast_compression;
TRUNCATE cx_ro_bob.log;
RESET ROLE;

-- 1. a superuser's CALL on bob's compressx table: the index expression runs
-- as bob, bob stays a plain role
SET cx_ro.step = 'online expression';
CALL compressx.recompress_online('cx_ro_bob.t', 'pglz');
-- 2. a partial-index predicate
SET cx_ro.step = 'online predicate';
CALL compressx.recompress_online('cx_ro_bob.tp', 'pglz');
-- ... an exclusion constraint on an expression
SET cx_ro.step = 'online exclusion';
CALL compressx.recompress_online('cx_ro_bob.tx', 'pglz');
-- 3. a heap table
SET cx_ro.step = 'online heap';
CALL compressx.recompress_online('cx_ro_bob.th', 'lz4');
-- 4. each partition of a partitioned table
SET cx_ro.step = 'online partitions';
CALL compressx.recompress_online('cx_ro_bob.tparted', 'pglz');
-- 5. moves: compressx -> heap (passes before the move), heap -> compressx
SET cx_ro.step = 'online to heap';
CALL compressx.recompress_online('cx_ro_bob.t', 'lz4', access_method => 'heap');
SET cx_ro.step = 'online to compressx';
CALL compressx.recompress_online('cx_ro_bob.t', 'zstd', access_method => 'compressx');
-- 6. recompress_table (the rewrite rebuilds the index)
SET cx_ro.step = 'recompress_table';
SELECT column_name FROM compressx.recompress_table('cx_ro_bob.tp', 'lz4');
SELECT rolsuper AS bob_is_superuser FROM pg_roles WHERE rolname = 'cx_ro_bob';
-- every call ran as bob, in a session of the superuser; none was superuser
SELECT step, cur, sess = current_user AS session_user_kept, super, secret, count(*) > 0 AS ran
FROM cx_ro_bob.log GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2;
TRUNCATE cx_ro_bob.log;

-- 7. carol, a member of bob, may run it on bob's tables (she owns them
-- through bob); bob's functions run as bob and cannot read carol's table
SET ROLE cx_ro_carol;
SET cx_ro.step = 'carol online';
CALL compressx.recompress_online('cx_ro_bob.t', 'lz4');
SET cx_ro.step = 'carol predicate';
CALL compressx.recompress_online('cx_ro_bob.tp', 'zstd');
SET cx_ro.step = 'carol recompress_table';
SELECT column_name FROM compressx.recompress_table('cx_ro_bob.t', 'pglz');
RESET ROLE;
SELECT step, cur, sess = current_user AS session_user_kept, super, secret, count(*) > 0 AS ran
FROM cx_ro_bob.log GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2;
SELECT rolsuper AS bob_is_superuser FROM pg_roles WHERE rolname = 'cx_ro_bob';

-- 8. the caller's settings stay the caller's: a GUC the owner's code sets
-- goes with the step (NewGUCNestLevel), and the procedure's commits see
-- the caller again
SET ROLE cx_ro_bob;
CREATE OR REPLACE FUNCTION cx_ro_bob.g() RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM set_config('work_mem', '1234kB', false);
    INSERT INTO cx_ro_bob.log SELECT cx_ro_bob.step(), current_user, session_user, false, NULL;
END $$;
RESET ROLE;
SET work_mem = '4MB';
TRUNCATE cx_ro_bob.log;
SET cx_ro.step = 'guc';
CALL compressx.recompress_online('cx_ro_bob.t', 'lz4');
SHOW work_mem;
SELECT current_user = session_user AS caller_again;
SELECT step, cur, count(*) > 0 AS ran FROM cx_ro_bob.log GROUP BY 1, 2;

-- 9. a security-restricted operation: the owner's code cannot do what
-- core forbids there (here: create a temporary table); the CALL fails
SET ROLE cx_ro_bob;
CREATE OR REPLACE FUNCTION cx_ro_bob.g() RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS cx_ro_tmp (a int);
END $$;
RESET ROLE;
\set VERBOSITY terse
CALL compressx.recompress_online('cx_ro_bob.t', 'pglz');
\set VERBOSITY default
SELECT current_user = session_user AS caller_again;

-- 10. recompress_online_cleanup after an interrupted run: restores the
-- settings, runs no user code, and leaves the caller as it was
SELECT compressx.recompress_online_cleanup('cx_ro_bob.t');
SELECT current_user = session_user AS caller_again;

RESET cx_ro.step;
RESET work_mem;
DROP SCHEMA cx_ro_bob CASCADE;
DROP TABLE cx_ro_carol_secret;
REVOKE USAGE ON SCHEMA compressx FROM cx_ro_bob, cx_ro_carol;
DROP ROLE cx_ro_carol;
DROP ROLE cx_ro_bob;
