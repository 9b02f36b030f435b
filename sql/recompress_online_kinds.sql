-- compressx.recompress_online() on every kind of table: no key, indexes of
-- every access method, triggers of every kind, foreign keys both ways,
-- TOAST and dropped columns, row-level security, inheritance, partitions,
-- compressx tables.  For each: the rows read the same before and after,
-- every compressed value is in the target method, every row is rewritten
-- (its ctid moved), index scans find every row, no trigger fires, and the
-- constraints still hold.
SET default_toast_compression = pglz;
-- the NOTICE's figures are covered by recompress_online; here the ctids
-- say which rows were rewritten
SET client_min_messages = warning;

-- the row versions of a table before a run: (ctid, xmin, row checksum);
-- a ctid alone does not name a version (a new one can take a pruned slot)
CREATE TABLE rk_before (rel regclass, tid tid, xmin_ xid, sum text);
CREATE FUNCTION rk_remember(rel regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM rk_before b WHERE b.rel = rk_remember.rel;
    EXECUTE format('INSERT INTO rk_before SELECT %L, t.ctid, t.xmin, md5(t::text) FROM ONLY %s t', rel, rel);
END $$;
-- after a run: whether the rows read the same (as a multiset), how many
-- there are, how many are still the version remembered, how many are new
CREATE FUNCTION rk_compare(rel regclass,
    OUT same_rows boolean, OUT rows integer, OUT kept_versions integer, OUT new_versions integer)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        WITH now AS (SELECT t.ctid AS tid, t.xmin AS xmin_, md5(t::text) AS sum FROM ONLY %s t),
             kept AS (SELECT count(*) AS n FROM now JOIN rk_before b
                      ON b.rel = %L::regclass AND b.tid = now.tid AND b.xmin_ = now.xmin_)
        SELECT (SELECT array_agg(sum ORDER BY sum) FROM now) IS NOT DISTINCT FROM
               (SELECT array_agg(sum ORDER BY sum) FROM rk_before b WHERE b.rel = %L::regclass),
               (SELECT count(*) FROM now),
               (SELECT n FROM kept),
               (SELECT count(*) FROM now) - (SELECT n FROM kept)
        $q$, rel, rel, rel)
    INTO same_rows, rows, kept_versions, new_versions;
END $$;
-- the stored methods of a table's values, one line per column
CREATE FUNCTION rk_methods(rel regclass) RETURNS TABLE (column_name name, methods jsonb, external bigint)
LANGUAGE sql AS $$
    SELECT s.column_name, s.methods, s.external_values FROM compressx.column_stats(rel) s ORDER BY 1
$$;
-- the values a table's TOAST relation holds (live or not)
CREATE FUNCTION rk_toasted(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE format('SELECT count(DISTINCT chunk_id) FROM %s',
                   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel))
    INTO n;
    RETURN n;
END $$;

---------------------------------------------------------------------------
-- 1. No primary key, no replica identity, duplicate rows: addressed by ctid
---------------------------------------------------------------------------
CREATE TABLE rk_nopk (a text, b text);
ALTER TABLE rk_nopk REPLICA IDENTITY NOTHING;
-- five identical rows, and distinct ones (some out of line)
INSERT INTO rk_nopk SELECT repeat('same row ', 400), repeat('b', 3000) FROM generate_series(1, 5);
INSERT INTO rk_nopk
SELECT repeat('row ' || i || ' ', 300),
       CASE WHEN i % 4 = 0 THEN NULL
            WHEN i % 4 = 1 THEN (SELECT string_agg(md5((i * 100 + g)::text) || md5((i * 100 + g)::text), '') FROM generate_series(1, 60) g)
            ELSE 'short ' || i END
FROM generate_series(1, 20) i;
SELECT rk_remember('rk_nopk');
SELECT * FROM rk_methods('rk_nopk');
CALL compressx.recompress_online('rk_nopk', 'lz4', batch_rows => 3);
SELECT * FROM rk_compare('rk_nopk');
-- three more values of a are compressed than before: in rows 1, 5 and 9
-- (short a, long b) the INSERT's toaster moved b out of line and left a
-- alone; the new version's b arrives compressed already, so the toaster
-- compresses a (then moves b out of line)
SELECT * FROM rk_methods('rk_nopk');
SELECT count(*) AS identical_rows FROM rk_nopk WHERE a = repeat('same row ', 400) AND b = repeat('b', 3000);
-- every value by pg_column_compression: lz4, or not compressed at all (short)
SELECT pg_column_compression(a) AS a, pg_column_compression(b) AS b, count(*)
FROM rk_nopk GROUP BY 1, 2 ORDER BY 1, 2;
-- a second run finds nothing to do
SELECT rk_remember('rk_nopk');
CALL compressx.recompress_online('rk_nopk', 'lz4');
SELECT * FROM rk_compare('rk_nopk');

---------------------------------------------------------------------------
-- 2. Indexes of every kind on the rewritten columns
---------------------------------------------------------------------------
CREATE TABLE rk_idx (
    id integer NOT NULL,
    r int4range,
    bt text,        -- btree, and a partial btree on an expression
    hs text,        -- hash, and btree on md5() (values out of line)
    gs text,        -- gist on a tsvector expression, deferrable unique
    gn jsonb,       -- gin
    br text,        -- brin
    sp text,        -- spgist, and a unique btree
    ex text,        -- exclusion constraint (hash, =)
    inc text        -- INCLUDE column of a covering unique index
);
INSERT INTO rk_idx
SELECT i, int4range(i * 10, i * 10 + 5),
       repeat('btree ' || i || ' ', 400),
       (SELECT string_agg(md5((i * 1000 + g)::text) || md5((i * 1000 + g)::text), '') FROM generate_series(1, 100) g),
       repeat('gist word' || i || ' ', 400),
       (SELECT jsonb_object_agg('key' || g, repeat('v' || i, 20)) FROM generate_series(1, 40) g),
       repeat('brin ' || lpad(i::text, 3, '0') || ' ', 400),
       repeat('spgist ' || i || ' ', 400),
       repeat('excl ' || i || ' ', 400),
       repeat('incl ' || i || ' ', 400)
FROM generate_series(1, 30) i;
CREATE INDEX rk_idx_bt ON rk_idx USING btree (bt);
CREATE INDEX rk_idx_hs ON rk_idx USING hash (hs);
CREATE INDEX rk_idx_gs ON rk_idx USING gist (to_tsvector('simple', gs));
CREATE INDEX rk_idx_gn ON rk_idx USING gin (gn jsonb_path_ops);
CREATE INDEX rk_idx_br ON rk_idx USING brin (br) WITH (pages_per_range = 1);
CREATE INDEX rk_idx_sp ON rk_idx USING spgist (sp);
CREATE INDEX rk_idx_expr ON rk_idx (md5(hs));
CREATE INDEX rk_idx_part ON rk_idx (left(bt, 20)) WHERE id % 2 = 0;
CREATE UNIQUE INDEX rk_idx_uniq ON rk_idx (sp);
ALTER TABLE rk_idx ADD CONSTRAINT rk_idx_excl_r EXCLUDE USING gist (r WITH &&);
ALTER TABLE rk_idx ADD CONSTRAINT rk_idx_excl_t EXCLUDE USING hash (ex WITH =);
CREATE UNIQUE INDEX rk_idx_cover ON rk_idx (id) INCLUDE (inc);
ALTER TABLE rk_idx ADD CONSTRAINT rk_idx_deferred UNIQUE (gs) DEFERRABLE INITIALLY DEFERRED;
SELECT rk_remember('rk_idx');
SELECT * FROM rk_methods('rk_idx');
CALL compressx.recompress_online('rk_idx', 'lz4', batch_rows => 7);
SELECT * FROM rk_compare('rk_idx');
SELECT * FROM rk_methods('rk_idx');

-- every row through every index: each lookup names the index it uses, then
-- each row's own values find exactly that row
CREATE FUNCTION rk_idx_lookups() RETURNS TABLE (index_name text, rows_found bigint)
LANGUAGE plpgsql AS $$
BEGIN
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_bitmapscan = off;
    RETURN QUERY
    SELECT 'btree', count(*) FROM rk_idx h WHERE (SELECT count(*) FROM rk_idx h2 WHERE h2.bt = h.bt) = 1
    UNION ALL
    SELECT 'hash', count(*) FROM rk_idx h WHERE (SELECT count(*) FROM rk_idx h2 WHERE h2.hs = h.hs) = 1
    UNION ALL
    SELECT 'gist', count(*) FROM rk_idx h
    WHERE (SELECT count(*) FROM rk_idx h2
           WHERE to_tsvector('simple', h2.gs) @@ to_tsquery('simple', 'word' || h.id)) = 1
    UNION ALL
    SELECT 'spgist', count(*) FROM rk_idx h WHERE (SELECT count(*) FROM rk_idx h2 WHERE h2.sp ~>=~ h.sp AND h2.sp ~<=~ h.sp) = 1
    UNION ALL
    SELECT 'expression', count(*) FROM rk_idx h WHERE (SELECT count(*) FROM rk_idx h2 WHERE md5(h2.hs) = md5(h.hs)) = 1
    UNION ALL
    SELECT 'partial', count(*) FROM rk_idx h
    WHERE h.id % 2 = 0 AND (SELECT count(*) FROM rk_idx h2 WHERE left(h2.bt, 20) = left(h.bt, 20) AND h2.id % 2 = 0) = 1
    UNION ALL
    SELECT 'exclusion gist', count(*) FROM rk_idx h WHERE (SELECT count(*) FROM rk_idx h2 WHERE h2.r && h.r) = 1
    UNION ALL
    SELECT 'exclusion hash', count(*) FROM rk_idx h WHERE (SELECT count(*) FROM rk_idx h2 WHERE h2.ex = h.ex) = 1
    UNION ALL
    SELECT 'deferrable unique', count(*) FROM rk_idx h WHERE (SELECT count(*) FROM rk_idx h2 WHERE h2.gs = h.gs) = 1
    UNION ALL
    SELECT 'covering', count(*) FROM rk_idx h WHERE (SELECT count(*) FROM rk_idx h2 WHERE h2.id = h.id AND h2.inc = h.inc) = 1;
    SET LOCAL enable_bitmapscan = on;
    SET LOCAL enable_indexscan = off;
    RETURN QUERY
    SELECT 'gin', count(*) FROM rk_idx h WHERE (SELECT count(*) FROM rk_idx h2 WHERE h2.gn @> h.gn) = 1
    UNION ALL
    SELECT 'brin', count(*) FROM rk_idx h WHERE (SELECT count(*) FROM rk_idx h2 WHERE h2.br = h.br) = 1;
END $$;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE bt = 'x';
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE hs = 'x';
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE to_tsvector('simple', gs) @@ to_tsquery('simple', 'x');
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE sp ~>=~ 'x' AND sp ~<=~ 'x';
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE md5(hs) = 'x';
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE left(bt, 20) = 'x' AND id % 2 = 0;
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE r && int4range(1, 2);
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE ex = 'x';
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE gs = 'x';
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE id = 1 AND inc = 'x';
SET enable_bitmapscan = on;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE gn @> '{}';
EXPLAIN (COSTS OFF) SELECT 1 FROM rk_idx WHERE br = 'x';
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
SELECT * FROM rk_idx_lookups();
-- the old versions' entries gone, the new ones still found
VACUUM rk_idx;
SELECT index_name, rows_found FROM rk_idx_lookups()
WHERE rows_found <> CASE index_name WHEN 'partial' THEN 15 ELSE 30 END;
-- the constraints still hold (VERBOSITY terse: the keys are long)
\set VERBOSITY terse
INSERT INTO rk_idx (id, sp) VALUES (100, repeat('spgist 3 ', 400));
INSERT INTO rk_idx (id, r) VALUES (101, int4range(31, 32));
INSERT INTO rk_idx (id, ex) VALUES (102, repeat('excl 4 ', 400));
INSERT INTO rk_idx (id) VALUES (5);
INSERT INTO rk_idx (id, gs) VALUES (104, repeat('gist word6 ', 400));
\set VERBOSITY default
-- and a row that breaks none goes in, found by the indexes too
INSERT INTO rk_idx (id, r, bt, sp, ex) VALUES (103, int4range(1, 2), repeat('btree new ', 400), 'sp new', 'ex new');
SET enable_seqscan = off;
SELECT count(*) FROM rk_idx WHERE bt = repeat('btree new ', 400);
RESET enable_seqscan;

---------------------------------------------------------------------------
-- 3. Triggers of every kind do not fire
---------------------------------------------------------------------------
CREATE TABLE rk_trig (id integer PRIMARY KEY, body text, note text);
INSERT INTO rk_trig SELECT i, repeat('trigger row ' || i || ' ', 300), repeat('n', 2500) FROM generate_series(1, 25) i;
CREATE TABLE rk_fired (trigger_name text, op text, level text, timing text);
CREATE FUNCTION rk_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rk_fired VALUES (TG_NAME, TG_OP, TG_LEVEL, TG_WHEN);
    IF TG_LEVEL = 'ROW' AND TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    IF TG_LEVEL = 'ROW' THEN RETURN NEW; END IF;
    RETURN NULL;
END $$;
-- a trigger that would make the row's update fail
CREATE FUNCTION rk_forbid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'trigger % fired on %', TG_NAME, TG_OP; END $$;
CREATE TRIGGER rk_b_row BEFORE UPDATE ON rk_trig FOR EACH ROW EXECUTE FUNCTION rk_log();
CREATE TRIGGER rk_a_row AFTER UPDATE ON rk_trig FOR EACH ROW EXECUTE FUNCTION rk_log();
CREATE TRIGGER rk_b_col BEFORE UPDATE OF body ON rk_trig FOR EACH ROW EXECUTE FUNCTION rk_log();
CREATE TRIGGER rk_a_when AFTER UPDATE ON rk_trig FOR EACH ROW
    WHEN (OLD.* IS NOT DISTINCT FROM NEW.*) EXECUTE FUNCTION rk_log();
CREATE TRIGGER rk_b_stmt BEFORE UPDATE ON rk_trig FOR EACH STATEMENT EXECUTE FUNCTION rk_log();
CREATE TRIGGER rk_a_stmt AFTER UPDATE ON rk_trig FOR EACH STATEMENT EXECUTE FUNCTION rk_log();
CREATE TRIGGER rk_a_trans AFTER UPDATE ON rk_trig REFERENCING OLD TABLE AS o NEW TABLE AS n
    FOR EACH STATEMENT EXECUTE FUNCTION rk_log();
CREATE CONSTRAINT TRIGGER rk_cons AFTER UPDATE ON rk_trig DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION rk_log();
CREATE CONSTRAINT TRIGGER rk_cons_now AFTER UPDATE ON rk_trig
    FOR EACH ROW EXECUTE FUNCTION rk_log();
CREATE TRIGGER rk_always BEFORE UPDATE ON rk_trig FOR EACH ROW EXECUTE FUNCTION rk_log();
ALTER TABLE rk_trig ENABLE ALWAYS TRIGGER rk_always;
CREATE TRIGGER rk_replica AFTER UPDATE ON rk_trig FOR EACH ROW EXECUTE FUNCTION rk_log();
ALTER TABLE rk_trig ENABLE REPLICA TRIGGER rk_replica;
CREATE TRIGGER rk_other_ops BEFORE INSERT OR DELETE ON rk_trig FOR EACH ROW EXECUTE FUNCTION rk_forbid();
CREATE TRIGGER rk_forbid_update BEFORE UPDATE ON rk_trig FOR EACH ROW EXECUTE FUNCTION rk_forbid();
CREATE TRIGGER rk_forbid_always AFTER UPDATE ON rk_trig FOR EACH ROW EXECUTE FUNCTION rk_forbid();
ALTER TABLE rk_trig ENABLE ALWAYS TRIGGER rk_forbid_always;
SELECT rk_remember('rk_trig');
CALL compressx.recompress_online('rk_trig', 'lz4', batch_rows => 4);
SELECT * FROM rk_compare('rk_trig');
SELECT * FROM rk_methods('rk_trig');
SELECT count(*) AS triggers_fired FROM rk_fired;
-- as a replica (ENABLE REPLICA and ALWAYS triggers fire there), back to pglz
SET session_replication_role = replica;
SELECT rk_remember('rk_trig');
CALL compressx.recompress_online('rk_trig', 'pglz', batch_rows => 4);
RESET session_replication_role;
SELECT * FROM rk_compare('rk_trig');
SELECT * FROM rk_methods('rk_trig');
SELECT count(*) AS triggers_fired FROM rk_fired;
-- the triggers are live: an UPDATE fires each of them (the forbidding ones
-- disabled for it)
ALTER TABLE rk_trig DISABLE TRIGGER rk_forbid_update, DISABLE TRIGGER rk_forbid_always;
UPDATE rk_trig SET body = body WHERE id <= 2;
SELECT trigger_name, op, level, timing, count(*) FROM rk_fired GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4;
TRUNCATE rk_fired;
SET session_replication_role = replica;
UPDATE rk_trig SET body = body WHERE id = 3;
RESET session_replication_role;
SELECT trigger_name, count(*) FROM rk_fired GROUP BY 1 ORDER BY 1;

---------------------------------------------------------------------------
-- 4. Foreign keys both ways, on the rewritten (compressed) key columns
---------------------------------------------------------------------------
-- rk_fk_mid references rk_fk_parent and is referenced by rk_fk_child; the
-- keys are long texts, so the key columns' stored bytes change
CREATE TABLE rk_fk_parent (code text PRIMARY KEY, body text);
CREATE TABLE rk_fk_mid (
    id integer PRIMARY KEY,
    code text NOT NULL REFERENCES rk_fk_parent ON UPDATE CASCADE,
    name text UNIQUE NOT NULL,
    body text);
CREATE TABLE rk_fk_child (
    id integer PRIMARY KEY,
    mid_name text REFERENCES rk_fk_mid (name) ON UPDATE CASCADE ON DELETE CASCADE,
    body text);
INSERT INTO rk_fk_parent SELECT repeat('code ' || i || ' ', 400), repeat('parent ', 400) FROM generate_series(1, 10) i;
INSERT INTO rk_fk_mid SELECT i, repeat('code ' || (i % 10 + 1) || ' ', 400), repeat('name ' || i || ' ', 400), repeat('mid ', 500)
FROM generate_series(1, 30) i;
INSERT INTO rk_fk_child SELECT i, repeat('name ' || (i % 30 + 1) || ' ', 400), repeat('child ', 500)
FROM generate_series(1, 40) i;
-- freeze: the row locks the RI checks of the INSERTs took are gone, so a
-- row lock or a new version of a parent or child row would show
VACUUM (FREEZE) rk_fk_parent, rk_fk_mid, rk_fk_child;
SELECT rk_remember('rk_fk_parent'), rk_remember('rk_fk_mid'), rk_remember('rk_fk_child');
CALL compressx.recompress_online('rk_fk_mid', 'lz4', batch_rows => 8);
SELECT * FROM rk_compare('rk_fk_mid');
-- the referenced and the referencing rows were neither updated nor locked
SELECT * FROM rk_compare('rk_fk_parent');
SELECT * FROM rk_compare('rk_fk_child');
SELECT 'parent' AS t, count(*) FILTER (WHERE xmax <> '0') AS locked_or_updated FROM rk_fk_parent
UNION ALL
SELECT 'child', count(*) FILTER (WHERE xmax <> '0') FROM rk_fk_child;
-- then the referenced table (ON UPDATE CASCADE: nothing cascades) and the
-- referencing one
CALL compressx.recompress_online('rk_fk_parent', 'lz4', batch_rows => 3);
CALL compressx.recompress_online('rk_fk_child', 'lz4', batch_rows => 8);
SELECT * FROM rk_compare('rk_fk_parent');
SELECT * FROM rk_compare('rk_fk_mid');
SELECT * FROM rk_compare('rk_fk_child');
SELECT * FROM rk_methods('rk_fk_parent');
SELECT * FROM rk_methods('rk_fk_mid');
SELECT * FROM rk_methods('rk_fk_child');
-- every reference still resolves, through the unique indexes
SET enable_seqscan = off;
SELECT count(*) AS mid_to_parent FROM rk_fk_mid m WHERE EXISTS (SELECT FROM rk_fk_parent p WHERE p.code = m.code);
SELECT count(*) AS child_to_mid FROM rk_fk_child c WHERE EXISTS (SELECT FROM rk_fk_mid m WHERE m.name = c.mid_name);
RESET enable_seqscan;
-- the constraints are enforced as before
\set VERBOSITY terse
INSERT INTO rk_fk_mid VALUES (100, 'no such code', 'name 100', NULL);
INSERT INTO rk_fk_child VALUES (100, 'no such name', NULL);
DELETE FROM rk_fk_parent WHERE code = repeat('code 1 ', 400);
INSERT INTO rk_fk_mid VALUES (101, repeat('code 1 ', 400), repeat('name 1 ', 400), NULL);
\set VERBOSITY default
-- and cascade as before
UPDATE rk_fk_parent SET code = 'code one' WHERE code = repeat('code 1 ', 400);
SELECT count(*) AS cascaded FROM rk_fk_mid WHERE code = 'code one';
DELETE FROM rk_fk_mid WHERE id = 1;
SELECT count(*) AS children_left FROM rk_fk_child;

---------------------------------------------------------------------------
-- 5. TOAST: values out of line (compressed or not), storage settings,
--    dropped columns
---------------------------------------------------------------------------
CREATE TABLE rk_toast (
    id integer PRIMARY KEY,
    gone1 text,
    ext_c text,     -- compressed, still out of line
    ext_u text,     -- incompressible for pglz: out of line, not compressed
    st_ext text,    -- STORAGE EXTERNAL: out of line, never compressed
    st_main text,   -- STORAGE MAIN: compressed, kept inline
    gone2 text,
    small text);
ALTER TABLE rk_toast ALTER COLUMN st_ext SET STORAGE EXTERNAL;
ALTER TABLE rk_toast ALTER COLUMN st_main SET STORAGE MAIN;
INSERT INTO rk_toast
SELECT i,
       repeat('dropped one ' || i, 300),
       (SELECT string_agg(md5((i * 1000 + g)::text) || md5((i * 1000 + g)::text), '') FROM generate_series(1, 150) g),
       (SELECT string_agg(md5((i * 7000 + g)::text), '') FROM generate_series(1, 100) g),
       repeat('external ' || i, 400),
       repeat('main ' || i || ' ', 400),
       (SELECT string_agg(md5((i * 9000 + g)::text), '') FROM generate_series(1, 100) g),
       'small ' || i
FROM generate_series(1, 20) i;
ALTER TABLE rk_toast DROP COLUMN gone1;
ALTER TABLE rk_toast DROP COLUMN gone2;
SELECT rk_remember('rk_toast');
SELECT * FROM rk_methods('rk_toast');
SELECT rk_toasted('rk_toast') AS toasted_values;
CALL compressx.recompress_online('rk_toast', 'lz4', batch_rows => 6);
SELECT * FROM rk_compare('rk_toast');
-- compressed values (inline or out of line) are lz4; the uncompressed ones
-- are left as they are; STORAGE MAIN values stay inline
SELECT * FROM rk_methods('rk_toast');
SELECT pg_column_compression(ext_c) AS ext_c, pg_column_compression(ext_u) AS ext_u,
       pg_column_compression(st_ext) AS st_ext, pg_column_compression(st_main) AS st_main,
       count(*)
FROM rk_toast GROUP BY 1, 2, 3, 4;
-- the replaced out-of-line values are deleted: after VACUUM the TOAST
-- relation holds only the live columns' values (the dropped columns' go,
-- as with an UPDATE), and every row still reads the same
VACUUM rk_toast;
SELECT rk_toasted('rk_toast') AS toasted_values;
SELECT * FROM rk_compare('rk_toast');
-- a column added after the drops is rewritten too
ALTER TABLE rk_toast ADD COLUMN added text;
UPDATE rk_toast SET added = repeat('added ' || id, 400) WHERE id <= 5;
SELECT rk_remember('rk_toast');
CALL compressx.recompress_online('rk_toast', 'pglz', columns => '{added, st_main}');
SELECT * FROM rk_compare('rk_toast');
SELECT * FROM rk_methods('rk_toast');

---------------------------------------------------------------------------
-- 6. Row-level security, enabled and forced, called by the owner
---------------------------------------------------------------------------
CREATE ROLE rk_owner;
CREATE TABLE rk_rls (id integer PRIMARY KEY, owner name, body text);
INSERT INTO rk_rls
SELECT i, CASE WHEN i % 2 = 0 THEN 'rk_owner' ELSE 'somebody' END, repeat('rls row ' || i || ' ', 300)
FROM generate_series(1, 20) i;
ALTER TABLE rk_rls OWNER TO rk_owner;
ALTER TABLE rk_rls ENABLE ROW LEVEL SECURITY;
ALTER TABLE rk_rls FORCE ROW LEVEL SECURITY;
-- the owner sees half the rows and may update none of them
CREATE POLICY rk_rls_read ON rk_rls FOR SELECT USING (owner = current_user);
CREATE POLICY rk_rls_write ON rk_rls FOR UPDATE USING (false);
SELECT rk_remember('rk_rls');
SET ROLE rk_owner;
SELECT count(*) AS visible_to_owner FROM rk_rls;
UPDATE rk_rls SET body = body;
CALL compressx.recompress_online('rk_rls', 'lz4', batch_rows => 4);
SELECT count(*) AS visible_to_owner FROM rk_rls;
RESET ROLE;
-- as superuser: every row, hidden ones included, was rewritten
SELECT * FROM rk_compare('rk_rls');
SELECT * FROM rk_methods('rk_rls');
SELECT owner, pg_column_compression(body), count(*) FROM rk_rls GROUP BY 1, 2 ORDER BY 1, 2;
-- the policies are unchanged
SET ROLE rk_owner;
SELECT count(*) AS visible_to_owner FROM rk_rls;
UPDATE rk_rls SET body = body;
RESET ROLE;
SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE oid = 'rk_rls'::regclass;

---------------------------------------------------------------------------
-- 7. Inheritance: a run covers the named table's own rows only
---------------------------------------------------------------------------
CREATE TABLE rk_par (id integer, body text);
CREATE TABLE rk_kid (extra text) INHERITS (rk_par);
CREATE INDEX rk_par_body ON rk_par (md5(body));
CREATE INDEX rk_kid_body ON rk_kid (md5(body));
INSERT INTO rk_par SELECT i, repeat('parent row ' || i || ' ', 300) FROM generate_series(1, 12) i;
INSERT INTO rk_kid SELECT i, repeat('child row ' || i || ' ', 300), repeat('extra ' || i, 400) FROM generate_series(101, 110) i;
CREATE TABLE rk_inh_sums (label text, sum text);
INSERT INTO rk_inh_sums SELECT 'before', md5(string_agg(p::text, ',' ORDER BY id)) FROM rk_par p;
SELECT rk_remember('rk_par'), rk_remember('rk_kid');
CALL compressx.recompress_online('rk_par', 'lz4', batch_rows => 5);
-- the parent's rows only; the child's attcompression is not changed either
-- (ALTER TABLE .. SET COMPRESSION would recurse)
SELECT * FROM rk_compare('rk_par');
SELECT * FROM rk_compare('rk_kid');
SELECT tableoid::regclass AS tab, pg_column_compression(body) AS body, count(*)
FROM rk_par GROUP BY 1, 2 ORDER BY 1, 2;
SELECT attrelid::regclass AS tab, attname, attcompression FROM pg_attribute
WHERE attrelid IN ('rk_par'::regclass, 'rk_kid'::regclass) AND attname = 'body' ORDER BY 1;
CALL compressx.recompress_online('rk_kid', 'lz4', batch_rows => 5);
SELECT * FROM rk_compare('rk_kid');
SELECT tableoid::regclass AS tab, pg_column_compression(body) AS body, pg_column_compression(extra) AS extra, count(*)
FROM rk_kid GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
INSERT INTO rk_inh_sums SELECT 'after', md5(string_agg(p::text, ',' ORDER BY id)) FROM rk_par p;
SELECT count(DISTINCT sum) AS distinct_sums, count(*) FROM rk_inh_sums;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS found_by_index FROM rk_par p
WHERE (SELECT count(*) FROM rk_par p2 WHERE md5(p2.body) = md5(p.body)) = 1;
RESET enable_seqscan;
RESET enable_bitmapscan;

---------------------------------------------------------------------------
-- 8. A partition (the partitioned table itself is refused: recompress_online
--    test), with an index and a trigger cloned from the partitioned table
---------------------------------------------------------------------------
CREATE TABLE rk_parted (id integer, body text) PARTITION BY RANGE (id);
CREATE TABLE rk_part1 PARTITION OF rk_parted FOR VALUES FROM (0) TO (100);
CREATE TABLE rk_part2 PARTITION OF rk_parted FOR VALUES FROM (100) TO (200);
CREATE UNIQUE INDEX rk_parted_key ON rk_parted (id, body);
CREATE TRIGGER rk_parted_forbid BEFORE UPDATE ON rk_parted FOR EACH ROW EXECUTE FUNCTION rk_forbid();
INSERT INTO rk_parted SELECT i, repeat('partition row ' || i || ' ', 300) FROM generate_series(1, 150, 5) i;
SELECT rk_remember('rk_part1'), rk_remember('rk_part2');
CALL compressx.recompress_online('rk_part1', 'lz4', batch_rows => 5);
SELECT * FROM rk_compare('rk_part1');
SELECT * FROM rk_compare('rk_part2');
SELECT tableoid::regclass AS tab, pg_column_compression(body) AS body, count(*)
FROM rk_parted GROUP BY 1, 2 ORDER BY 1, 2;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS found_by_index FROM rk_parted p
WHERE (SELECT count(*) FROM rk_parted p2 WHERE p2.id = p.id AND p2.body = p.body) = 1;
RESET enable_seqscan;
RESET enable_bitmapscan;

---------------------------------------------------------------------------
-- 9. Unlogged tables work; materialized views are not tables
---------------------------------------------------------------------------
CREATE UNLOGGED TABLE rk_unlogged (id integer PRIMARY KEY, body text);
INSERT INTO rk_unlogged SELECT i, repeat('unlogged ' || i || ' ', 300) FROM generate_series(1, 15) i;
SELECT rk_remember('rk_unlogged');
CALL compressx.recompress_online('rk_unlogged', 'lz4', batch_rows => 4);
SELECT * FROM rk_compare('rk_unlogged');
SELECT * FROM rk_methods('rk_unlogged');
CREATE MATERIALIZED VIEW rk_matview AS SELECT * FROM rk_unlogged;
CALL compressx.recompress_online('rk_matview', 'lz4');

---------------------------------------------------------------------------
-- 10. compressx tables: indexes, triggers, constraints, foreign keys,
--     dropped columns, out-of-line values
---------------------------------------------------------------------------
CREATE TABLE rk_cx (
    id integer PRIMARY KEY,
    gone text,
    body text CHECK (length(body) > 100),
    doc jsonb,
    note text UNIQUE,
    tail text) USING compressx;
SELECT compressx.set_column_codec('rk_cx', 'body', 'zstd');
SELECT compressx.set_column_codec('rk_cx', 'doc', 'zstd');
SELECT compressx.set_column_codec('rk_cx', 'note', 'pglz');
-- tail: compressx.default_codec (zstd)
INSERT INTO rk_cx
SELECT i,
       repeat('dropped ' || i, 300),
       CASE WHEN i % 3 = 0   -- hex: large even compressed, so out of line
            THEN (SELECT string_agg(md5((i * 1000 + g)::text), '') FROM generate_series(1, 100) g)
            ELSE repeat('compressx body word' || i || ' ', 30 + (i % 5) * 60) END,
       (SELECT jsonb_object_agg('k' || g, 'value ' || i) FROM generate_series(1, 80) g),
       repeat('note ' || i || ' ', 200),
       repeat('tail ' || i, 300)
FROM generate_series(1, 30) i;
ALTER TABLE rk_cx DROP COLUMN gone;
CREATE INDEX rk_cx_md5 ON rk_cx (md5(body));
CREATE INDEX rk_cx_hash ON rk_cx USING hash (body);
CREATE INDEX rk_cx_gin ON rk_cx USING gin (doc);
CREATE INDEX rk_cx_gist ON rk_cx USING gist (to_tsvector('simple', body));
CREATE INDEX rk_cx_brin ON rk_cx USING brin (tail);
CREATE TABLE rk_cx_ref (id integer PRIMARY KEY, cx_id integer REFERENCES rk_cx ON UPDATE CASCADE);
INSERT INTO rk_cx_ref SELECT i, i FROM generate_series(1, 30) i;
CREATE TRIGGER rk_cx_forbid BEFORE INSERT OR UPDATE OR DELETE ON rk_cx FOR EACH ROW EXECUTE FUNCTION rk_forbid();
CREATE TRIGGER rk_cx_forbid_stmt AFTER UPDATE ON rk_cx FOR EACH STATEMENT EXECUTE FUNCTION rk_forbid();
CREATE TRIGGER rk_cx_forbid_always AFTER UPDATE ON rk_cx FOR EACH ROW EXECUTE FUNCTION rk_forbid();
ALTER TABLE rk_cx ENABLE ALWAYS TRIGGER rk_cx_forbid_always;
VACUUM (FREEZE) rk_cx_ref;
SELECT rk_remember('rk_cx'), rk_remember('rk_cx_ref');
SELECT * FROM rk_methods('rk_cx');
CALL compressx.recompress_online('rk_cx', 'lz4', batch_rows => 6);
SELECT * FROM rk_compare('rk_cx');
SELECT * FROM rk_compare('rk_cx_ref');
SELECT * FROM rk_methods('rk_cx');
SELECT v.method, v.external, count(*)
FROM rk_cx c, compressx.value_storage(c.tableoid, c.ctid, 'body') v GROUP BY 1, 2 ORDER BY 1, 2;
SELECT column_name, codec FROM compressx.column_codec_settings('rk_cx') ORDER BY 1;
CREATE FUNCTION rk_cx_lookups() RETURNS TABLE (index_name text, rows_found bigint)
LANGUAGE plpgsql AS $$
BEGIN
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_bitmapscan = off;
    RETURN QUERY
    SELECT 'btree md5', count(*) FROM rk_cx c WHERE (SELECT count(*) FROM rk_cx c2 WHERE md5(c2.body) = md5(c.body)) = 1
    UNION ALL
    SELECT 'hash', count(*) FROM rk_cx c WHERE (SELECT count(*) FROM rk_cx c2 WHERE c2.body = c.body) = 1
    UNION ALL
    SELECT 'unique', count(*) FROM rk_cx c WHERE (SELECT count(*) FROM rk_cx c2 WHERE c2.note = c.note) = 1
    UNION ALL
    SELECT 'primary key', count(*) FROM rk_cx c WHERE (SELECT count(*) FROM rk_cx c2 WHERE c2.id = c.id) = 1
    UNION ALL
    SELECT 'gist', count(*) FROM rk_cx c
    WHERE c.id % 3 <> 0
      AND (SELECT count(*) FROM rk_cx c2
           WHERE to_tsvector('simple', c2.body) @@ to_tsquery('simple', 'word' || c.id)) = 1;
    SET LOCAL enable_bitmapscan = on;
    SET LOCAL enable_indexscan = off;
    RETURN QUERY
    SELECT 'gin', count(*) FROM rk_cx c WHERE (SELECT count(*) FROM rk_cx c2 WHERE c2.doc @> c.doc) = 1
    UNION ALL
    SELECT 'brin', count(*) FROM rk_cx c WHERE (SELECT count(*) FROM rk_cx c2 WHERE c2.tail = c.tail) = 1;
END $$;
SELECT * FROM rk_cx_lookups();
-- back to zstd, two columns only.  The out-of-line hex bodies lz4 could not
-- shrink were stored uncompressed ("none"); on a compressx table an
-- uncompressed value the setting would compress is compressed, so zstd
-- takes them too
SELECT rk_remember('rk_cx');
CALL compressx.recompress_online('rk_cx', 'zstd', columns => '{body,doc}', batch_rows => 6);
SELECT * FROM rk_compare('rk_cx');
SELECT * FROM rk_methods('rk_cx');
VACUUM rk_cx;
SELECT index_name, rows_found FROM rk_cx_lookups() WHERE rows_found <> CASE index_name WHEN 'gist' THEN 20 ELSE 30 END;
SELECT count(*) AS verify_problems FROM compressx.verify('rk_cx');
-- the constraints still hold, no trigger fired, and they are live
\set VERBOSITY terse
ALTER TABLE rk_cx DISABLE TRIGGER USER;
INSERT INTO rk_cx (id, body) VALUES (1, repeat('x', 200));
INSERT INTO rk_cx (id, body, note) VALUES (100, repeat('x', 200), repeat('note 7 ', 200));
INSERT INTO rk_cx (id, body) VALUES (101, 'too short');
INSERT INTO rk_cx_ref VALUES (100, 1000);
ALTER TABLE rk_cx ENABLE TRIGGER USER;
UPDATE rk_cx SET tail = tail WHERE id = 1;
\set VERBOSITY default

RESET client_min_messages;
DROP TABLE rk_nopk, rk_idx, rk_trig, rk_fired, rk_fk_child, rk_fk_mid, rk_fk_parent,
    rk_toast, rk_rls, rk_par, rk_kid, rk_inh_sums, rk_parted, rk_unlogged, rk_cx_ref, rk_cx,
    rk_before CASCADE;
DROP FUNCTION rk_remember(regclass), rk_compare(regclass), rk_methods(regclass),
    rk_toasted(regclass), rk_idx_lookups(), rk_cx_lookups(), rk_log(), rk_forbid();
DROP ROLE rk_owner;
