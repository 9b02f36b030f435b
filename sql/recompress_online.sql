-- compressx.recompress_online(): in place, in committed batches
SET default_toast_compression = pglz;

-- a heap table: pglz values inline and out of line, indexes on them
CREATE TABLE ro_heap (
    id integer PRIMARY KEY,
    title text,
    body text,
    note text
);
INSERT INTO ro_heap
SELECT i, 'doc ' || i,
       repeat('body of document ' || i || ' with some words. ', 60 + (i % 7) * 200),
       CASE WHEN i % 5 = 0 THEN NULL ELSE repeat('note ' || i, 300) END
FROM generate_series(1, 300) i;
CREATE INDEX ro_heap_body_md5 ON ro_heap (md5(body));
CREATE UNIQUE INDEX ro_heap_note ON ro_heap (note);
CREATE INDEX ro_heap_body_prefix ON ro_heap (left(body, 40)) WHERE id % 2 = 0;

-- no trigger may fire: they fail on any DML
CREATE FUNCTION ro_forbid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'trigger fired on %', TG_OP; END $$;
CREATE TRIGGER ro_heap_forbid BEFORE INSERT OR UPDATE OR DELETE ON ro_heap
    FOR EACH ROW EXECUTE FUNCTION ro_forbid();
CREATE TRIGGER ro_heap_forbid_after AFTER UPDATE ON ro_heap
    FOR EACH ROW EXECUTE FUNCTION ro_forbid();
CREATE TRIGGER ro_heap_forbid_stmt BEFORE INSERT OR UPDATE OR DELETE ON ro_heap
    FOR EACH STATEMENT EXECUTE FUNCTION ro_forbid();

CREATE TABLE ro_sums (label text, sum text);
INSERT INTO ro_sums
SELECT 'heap before', md5(string_agg(id || title || body || coalesce(note, '-'), ',' ORDER BY id))
FROM ro_heap;
SELECT column_name, methods FROM compressx.column_stats('ro_heap') ORDER BY 1;

-- bad input: clear errors, nothing changed
BEGIN;
CALL compressx.recompress_online('ro_heap', 'lz4');
ROLLBACK;
-- a function is atomic: it cannot commit
CREATE FUNCTION ro_call() RETURNS void LANGUAGE plpgsql AS $$
BEGIN CALL compressx.recompress_online('ro_heap', 'lz4'); END $$;
SELECT ro_call();
CALL compressx.recompress_online('no_such_table', 'lz4');
CALL compressx.recompress_online(NULL, 'lz4');
CALL compressx.recompress_online('ro_heap', 'lz4', columns => '{nope}');
CALL compressx.recompress_online('ro_heap', 'lz4', columns => '{}');
CALL compressx.recompress_online('ro_heap', 'lz4', columns => '{id}');
CALL compressx.recompress_online('ro_heap', 'brotli');
CALL compressx.recompress_online('ro_heap', 'zstd');
CALL compressx.recompress_online('ro_heap', 'lz4', 3);
CALL compressx.recompress_online('ro_heap', level => 3);
CALL compressx.recompress_online('ro_heap', 'lz4', access_method => 'brin');
CALL compressx.recompress_online('ro_heap', 'zstd', access_method => 'heap');
CALL compressx.recompress_online('ro_heap', 'lz4', batch_rows => 0);
CALL compressx.recompress_online('ro_heap', 'lz4', batch_rows => -5);
CALL compressx.recompress_online('ro_heap', 'lz4', max_lock_wait => '-1s');
CALL compressx.recompress_online('ro_heap', 'lz4', max_lock_wait => NULL);
CREATE TEMP TABLE ro_temp (t text);
CALL compressx.recompress_online('ro_temp', 'lz4');
CREATE VIEW ro_view AS SELECT * FROM ro_heap;
CALL compressx.recompress_online('ro_view', 'lz4');
CREATE FOREIGN DATA WRAPPER ro_fdw;
CREATE SERVER ro_srv FOREIGN DATA WRAPPER ro_fdw;
CREATE FOREIGN TABLE ro_foreign (t text) SERVER ro_srv;
CALL compressx.recompress_online('ro_foreign', 'lz4');
CALL compressx.recompress_online('pg_catalog.pg_class', 'lz4');
CALL compressx.recompress_online('pg_catalog.pg_rewrite', 'lz4');
CALL compressx.recompress_online('compressx.column_settings', 'lz4');
-- a partitioned table without partitions: nothing to do
CREATE TABLE ro_parted (id int, t text) PARTITION BY RANGE (id);
CALL compressx.recompress_online('ro_parted', 'lz4');
CREATE ROLE ro_other;
SET ROLE ro_other;
CALL compressx.recompress_online('ro_heap', 'lz4');
RESET ROLE;
-- nothing changed
SELECT attname, attcompression FROM pg_attribute
WHERE attrelid = 'ro_heap'::regclass AND attnum > 0 ORDER BY attnum;
SELECT column_name, methods FROM compressx.column_stats('ro_heap') ORDER BY 1;

-- a run: every value to lz4, rows unchanged, no trigger fired
CALL compressx.recompress_online('ro_heap', 'lz4', batch_rows => 7);
SELECT column_name, methods FROM compressx.column_stats('ro_heap') ORDER BY 1;
SELECT attname, attcompression FROM pg_attribute
WHERE attrelid = 'ro_heap'::regclass AND attnum > 0 ORDER BY attnum;
INSERT INTO ro_sums
SELECT 'heap after', md5(string_agg(id || title || body || coalesce(note, '-'), ',' ORDER BY id))
FROM ro_heap;
SELECT count(DISTINCT sum) AS distinct_sums FROM ro_sums WHERE label LIKE 'heap%';
-- no progress row is left
SELECT count(*) FROM compressx.recompress_online_progress;
-- indexes find every row through the new versions
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FILTER (WHERE (SELECT count(*) FROM ro_heap h2 WHERE md5(h2.body) = md5(h.body)) = 1) AS by_md5,
       count(*) FILTER (WHERE h.note IS NULL OR (SELECT count(*) FROM ro_heap h2 WHERE h2.note = h.note) = 1) AS by_note,
       count(*) FILTER (WHERE (SELECT count(*) FROM ro_heap h2 WHERE h2.id = h.id) = 1) AS by_id
FROM ro_heap h;
EXPLAIN (COSTS OFF) SELECT id FROM ro_heap WHERE md5(body) = 'x';
SELECT count(*) FROM ro_heap WHERE left(body, 40) = left(repeat('body of document 8 with some words. ', 2), 40) AND id % 2 = 0;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- the unique index still enforces uniqueness
ALTER TABLE ro_heap DISABLE TRIGGER USER;
\set VERBOSITY terse
INSERT INTO ro_heap VALUES (1000, 'dup', 'x', repeat('note 1', 300));
\set VERBOSITY default
-- a second call finds nothing to do
CALL compressx.recompress_online('ro_heap', 'lz4');
-- back to pglz, one column only
CALL compressx.recompress_online('ro_heap', 'pglz', columns => '{note}');
SELECT column_name, methods FROM compressx.column_stats('ro_heap') ORDER BY 1;

-- cancelled, then resumed: committed batches stay, the rest follows
CREATE TABLE ro_resume (id integer PRIMARY KEY, body text);
INSERT INTO ro_resume SELECT i, repeat('resume ' || i, 400) FROM generate_series(1, 200) i;
INSERT INTO ro_sums SELECT 'resume before', md5(string_agg(id || body, ',' ORDER BY id)) FROM ro_resume;
SET compressx.debug_rewrite_delay = 100;	-- per batch, before its commit
SET statement_timeout = '350ms';
CALL compressx.recompress_online('ro_resume', 'lz4', batch_rows => 10);
RESET statement_timeout;
RESET compressx.debug_rewrite_delay;
-- some batches committed, not all: each row whole, in one method or the other
SELECT (methods->>'lz4')::int BETWEEN 10 AND 190 AS partly_done,
       (methods->>'lz4')::int + (methods->>'pglz')::int AS all_values
FROM compressx.column_stats('ro_resume') WHERE column_name = 'body';
CREATE TABLE ro_done AS
SELECT id, ctid AS tid FROM ro_resume
WHERE pg_column_compression(body) = 'lz4';
SET client_min_messages = warning;	-- the count depends on timing
CALL compressx.recompress_online('ro_resume', 'lz4', batch_rows => 10);
RESET client_min_messages;
SELECT column_name, methods FROM compressx.column_stats('ro_resume') WHERE column_name = 'body';
-- the rows done before the cancel were not rewritten again
SELECT count(*) AS rewritten_again FROM ro_done d JOIN ro_resume r USING (id) WHERE r.ctid <> d.tid;
INSERT INTO ro_sums SELECT 'resume after', md5(string_agg(id || body, ',' ORDER BY id)) FROM ro_resume;
SELECT count(DISTINCT sum) AS distinct_sums FROM ro_sums WHERE label LIKE 'resume%';

-- a compressx table: zstd to lz4 and back, a column's own setting
CREATE TABLE ro_cx (id integer PRIMARY KEY, body text, meta text) USING compressx;
SELECT compressx.set_column_codec('ro_cx', 'body', 'zstd');
SELECT compressx.set_column_codec('ro_cx', 'meta', 'pglz');
INSERT INTO ro_cx
SELECT i,
       CASE WHEN i % 3 = 0   -- hex: large even compressed, so out of line
            THEN (SELECT string_agg(md5((i * 1000 + g)::text), '') FROM generate_series(1, 100) g)
            ELSE repeat('compressx body ' || i || ' ', 30 + (i % 9) * 150) END,
       repeat('meta ' || i, 40)
FROM generate_series(1, 250) i;
CREATE INDEX ro_cx_body ON ro_cx (md5(body));
CREATE TRIGGER ro_cx_forbid BEFORE INSERT OR UPDATE OR DELETE ON ro_cx
    FOR EACH ROW EXECUTE FUNCTION ro_forbid();
INSERT INTO ro_sums SELECT 'cx before', md5(string_agg(id || body || meta, ',' ORDER BY id)) FROM ro_cx;
SELECT v.method, v.external, count(*)
FROM ro_cx c, compressx.value_storage(c.tableoid, c.ctid, 'body') v GROUP BY 1, 2 ORDER BY 1, 2;
CALL compressx.recompress_online('ro_cx', 'lz4', 5, columns => '{body}', batch_rows => 20);
SELECT v.method, v.external, count(*)
FROM ro_cx c, compressx.value_storage(c.tableoid, c.ctid, 'body') v GROUP BY 1, 2 ORDER BY 1, 2;
SELECT column_name, codec, level FROM compressx.column_codec_settings('ro_cx') ORDER BY 1;
CALL compressx.recompress_online('ro_cx', 'zstd', columns => '{body}');
SELECT v.method, v.external, count(*)
FROM ro_cx c, compressx.value_storage(c.tableoid, c.ctid, 'body') v GROUP BY 1, 2 ORDER BY 1, 2;
INSERT INTO ro_sums SELECT 'cx after', md5(string_agg(id || body || meta, ',' ORDER BY id)) FROM ro_cx;
SELECT count(DISTINCT sum) AS distinct_sums FROM ro_sums WHERE label LIKE 'cx%';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FILTER (WHERE (SELECT count(*) FROM ro_cx c2 WHERE md5(c2.body) = md5(c.body)) = 1) AS by_md5
FROM ro_cx c;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- the out-of-line values of the replaced versions are gone after VACUUM
VACUUM ro_cx;
SELECT count(*) AS verify_problems FROM compressx.verify('ro_cx');

DROP TABLE ro_heap, ro_resume, ro_done, ro_cx, ro_sums, ro_parted, ro_temp CASCADE;
DROP FOREIGN TABLE ro_foreign;
DROP SERVER ro_srv;
DROP FOREIGN DATA WRAPPER ro_fdw;
DROP FUNCTION ro_forbid(), ro_call();
DROP ROLE ro_other;
