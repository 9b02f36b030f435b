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
