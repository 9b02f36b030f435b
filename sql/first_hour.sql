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
