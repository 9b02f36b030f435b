-- Review round 3, item A6 (issue 27): every function and procedure of
-- compressx that writes refuses in a read-only transaction with SQLSTATE
-- 25006, as core's commands do, before any lock or work; the error names
-- the function and the table, and shows no internal SQL.  (Recovery:
-- test/t/003_streaming.pl calls them on a standby.)
CREATE TABLE ro_heap (id integer, body text);
INSERT INTO ro_heap SELECT i, repeat('heap row ' || i || ' ', 300) FROM generate_series(1, 2010) i;
CREATE TABLE ro_cx (id integer, body text) USING compressx;
SELECT compressx.set_column_codec('ro_cx', 'body', 'zstd', 3);
INSERT INTO ro_cx SELECT i, repeat('compressx row ' || i || ' ', 30) FROM generate_series(1, 500) i;
-- the five-argument set_column_codec of versions before 0.4.0
CREATE FUNCTION ro_old_set_column_codec(regclass, name, text, integer, integer)
RETURNS void AS '$libdir/compressx', 'compressx_set_column_codec' LANGUAGE C;

-- what a writing function could change: files, core's setting, compressx's
-- settings, dictionaries and runs, and the stored methods of the values
CREATE VIEW ro_state AS
SELECT 'filenode' AS what, c.relname::text AS rel, pg_relation_filenode(c.oid)::text AS val
FROM pg_class c WHERE c.relname IN ('ro_heap', 'ro_cx')
UNION ALL
SELECT 'attcompression', a.attrelid::regclass::text, a.attcompression::text
FROM pg_attribute a
WHERE a.attrelid IN ('ro_heap'::regclass, 'ro_cx'::regclass) AND a.attname = 'body'
UNION ALL
SELECT 'settings', s.relid::text, (to_jsonb(s) - 'relid')::text
FROM compressx.column_settings s WHERE s.relid IN ('ro_heap'::regclass, 'ro_cx'::regclass)
UNION ALL
SELECT 'dictionaries', NULL, count(*)::text FROM compressx.dictionaries
UNION ALL
SELECT 'online_runs', NULL, count(*)::text FROM compressx.online_runs
UNION ALL
SELECT 'auto_dictionary_state', NULL, count(*)::text FROM compressx.auto_dictionary_state
UNION ALL
SELECT 'stored', t.rel, (SELECT string_agg(m.method || '=' || m."values", ',' ORDER BY m.method)
                         FROM compressx.stored_summary(t.rel::regclass, NULL) m)
FROM (VALUES ('ro_heap'), ('ro_cx')) t(rel);
CREATE TABLE ro_before AS SELECT * FROM ro_state;
SELECT what, rel, val FROM ro_before WHERE what IN ('attcompression', 'stored') ORDER BY 1, 2;

\set VERBOSITY default
\set SHOW_CONTEXT always
-- 1. default_transaction_read_only: each statement a read-only transaction
SET default_transaction_read_only = on;
SELECT * FROM recompress_table('ro_heap', 'lz4');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM compressx.recompress_table('ro_cx', 'lz4');
\echo :LAST_ERROR_SQLSTATE
SELECT compressx.set_column_codec('ro_cx', 'body', 'lz4');
\echo :LAST_ERROR_SQLSTATE
SELECT compressx.set_column_codec('ro_cx', 'body', 'zstd', dictionary => 'auto');
\echo :LAST_ERROR_SQLSTATE
SELECT ro_old_set_column_codec('ro_cx', 'body', 'pglz', NULL, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT compressx.reset_column_codec('ro_cx');
\echo :LAST_ERROR_SQLSTATE
SELECT compressx.set_column_inline('ro_cx', 'body', 100);
\echo :LAST_ERROR_SQLSTATE
SELECT compressx.train_dictionary('ro_cx', 'body');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM compressx.auto_dictionary_run('ro_cx');
\echo :LAST_ERROR_SQLSTATE
CALL compressx.recompress_online('ro_cx', 'lz4');
\echo :LAST_ERROR_SQLSTATE
CALL compressx.recompress_online('ro_heap', 'lz4');
\echo :LAST_ERROR_SQLSTATE
SELECT compressx.recompress_online_cleanup('ro_cx');
\echo :LAST_ERROR_SQLSTATE
SELECT compressx.citus_apply('ro_cx', '{}', '0.5.0');
\echo :LAST_ERROR_SQLSTATE
SELECT compressx.citus_push('ro_cx');
\echo :LAST_ERROR_SQLSTATE
-- refused before the arguments are checked, as core's commands are
SELECT * FROM recompress_table(NULL);
\echo :LAST_ERROR_SQLSTATE
-- functions that only read still run
SELECT column_name, "values" FROM compressx.column_stats('ro_cx');
SELECT count(*) AS problems FROM compressx.verify('ro_cx');
RESET default_transaction_read_only;

-- 2. SET TRANSACTION READ ONLY and BEGIN READ ONLY
BEGIN;
SET TRANSACTION READ ONLY;
SELECT * FROM recompress_table('ro_heap', 'lz4');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
BEGIN READ ONLY;
SELECT compressx.set_column_codec('ro_cx', 'body', 'lz4');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE
-- and a transaction made read-only after its first query, in a savepoint
BEGIN;
SELECT count(*) FROM ro_heap;
SAVEPOINT s;
SET transaction_read_only = on;
SELECT * FROM compressx.train_dictionary('ro_cx', 'body');
ROLLBACK;
\echo :LAST_ERROR_SQLSTATE

-- 3. nothing changed
SELECT * FROM ro_state EXCEPT SELECT * FROM ro_before;
SELECT * FROM ro_before EXCEPT SELECT * FROM ro_state;
-- and out of a read-only transaction they write as before
SELECT column_name, values_rewritten FROM recompress_table('ro_heap', 'lz4');
SELECT what, rel FROM (SELECT * FROM ro_state EXCEPT SELECT * FROM ro_before) d ORDER BY 1, 2;

DROP FUNCTION ro_old_set_column_codec(regclass, name, text, integer, integer);
DROP VIEW ro_state;
DROP TABLE ro_before, ro_heap, ro_cx;
