-- A DBA's first hour (issue 28): what the views and calls show a newcomer
-- the ratio views list user tables, not compressx's own (nor any other
-- extension's member tables), even for a superuser
CREATE TABLE fh_docs (id int, body text);
INSERT INTO fh_docs SELECT g, repeat('first hour ' || g, 40) FROM generate_series(1, 50) g;
SELECT count(*) AS own_tables_in_column_ratios FROM compressx.column_ratios
WHERE schema_name = 'compressx';
SELECT count(*) AS own_tables_in_table_ratios FROM compressx.table_ratios
WHERE schema_name = 'compressx';
SELECT table_name FROM compressx.table_ratios WHERE table_name = 'fh_docs';
-- stored_summary samples like column_stats: sample_rows may be left out
SELECT column_name, method, "values" FROM compressx.stored_summary('fh_docs') ORDER BY 1, 2;
DROP TABLE fh_docs;

-- recompress_table on a heap table of small rows says why nothing was
-- compressed and what would compress it
CREATE TABLE fh_small (id int, doc text);
INSERT INTO fh_small SELECT g, '{"event": "login", "user": ' || g || ', "ok": true, "agent": "' || repeat('Mozilla/5.0 ', 20) || '"}'
FROM generate_series(1, 200) g;
SELECT column_name, values_rewritten FROM compressx.recompress_table('fh_small', 'lz4');
SELECT pg_catalog.count(*) FILTER (WHERE pg_column_compression(doc) IS NULL) AS still_plain FROM fh_small;
-- rows above the threshold are compressed, and then nothing is said
CREATE TABLE fh_big (id int, doc text COMPRESSION pglz);
INSERT INTO fh_big SELECT g, repeat('big row ' || g, 400) FROM generate_series(1, 20) g;
SELECT column_name, values_rewritten FROM compressx.recompress_table('fh_big', 'lz4');
DROP TABLE fh_small, fh_big;

-- settings of a heap table are pending, said at once and shown so
CREATE TABLE fh_hp (id int, body text);
SELECT compressx.set_column_codec('fh_hp', 'body', 'zstd');
SELECT table_name, column_name, access_method, codec, status
FROM compressx.column_codecs WHERE table_name = 'fh_hp';
CREATE TABLE fh_parted (id int, body text) PARTITION BY RANGE (id);
CREATE TABLE fh_parted_1 PARTITION OF fh_parted FOR VALUES FROM (0) TO (10);
CREATE TABLE fh_parted_2 PARTITION OF fh_parted FOR VALUES FROM (10) TO (20);
SELECT compressx.set_column_codec('fh_parted', 'body', 'zstd', 9);
CREATE TABLE fh_cx (id int, body text) USING compressx;
SELECT compressx.set_column_codec('fh_cx', 'body', 'zstd', 9);
SELECT table_name, status FROM compressx.column_codecs
WHERE table_name IN ('fh_cx', 'fh_parted_1') ORDER BY 1;
DROP TABLE fh_hp, fh_parted, fh_cx;

-- the way out: DROP EXTENSION names the tables that use the access method
-- and the call that moves each back to heap online; then it succeeds
SELECT current_database() AS fh_db \gset
CREATE DATABASE fh_uninstall;
\c fh_uninstall
SET client_min_messages = warning;
CREATE EXTENSION compressx;
CREATE TABLE fh_a (id int PRIMARY KEY, body text) USING compressx;
CREATE TABLE fh_b (id int, body text) USING compressx;
INSERT INTO fh_a SELECT g, repeat('way out ' || g, 30) FROM generate_series(1, 100) g;
DROP EXTENSION compressx;
-- the list of tables, as a DBA finds them
SELECT c.oid::regclass AS compressx_table FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE a.amname = 'compressx' ORDER BY 1;
CALL compressx.recompress_online('fh_a', access_method => 'heap');
CALL compressx.recompress_online('fh_b', access_method => 'heap');
SELECT count(*) FILTER (WHERE body = repeat('way out ' || id, 30)) AS intact FROM fh_a;
DROP EXTENSION compressx;
SELECT count(*) AS rows_after_uninstall FROM fh_a;
\c :fh_db
DROP DATABASE fh_uninstall;
