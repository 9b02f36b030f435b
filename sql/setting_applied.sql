-- A changed setting (level, dictionary) is applied by a rewrite with no
-- codec argument: recompress_table, recompress_online, VACUUM FULL
-- (issue 34, item 2).  Stored bytes are compared, never their exact size.
SET client_min_messages = notice;
\set VERBOSITY terse
CREATE TABLE sa_docs (id integer PRIMARY KEY, body text) USING compressx;
SELECT compressx.set_column_codec('sa_docs', 'body', 'zstd', 3);
-- ~4 kB of repetitive text per row: level 19 stores it smaller than level 3
INSERT INTO sa_docs
SELECT i, string_agg(format('<p class="%s">entry %s of section %s: %s</p>',
                            (ARRAY['note', 'warn', 'tip', 'code'])[1 + (i * j) % 4],
                            j, i % 17, md5((i * j % 23)::text)), E'\n')
FROM generate_series(1, 300) i, generate_series(1, 40) j GROUP BY i;
-- a setting made on the empty table is in effect
SELECT table_name, column_name, level, status FROM compressx.column_codecs
WHERE table_name = 'sa_docs';
CREATE TABLE sa_bytes AS
SELECT id, compressx.stored_size(tableoid, ctid, 'body') AS l3 FROM sa_docs;

-- the README's task: a new level, then a rewrite with no codec
SELECT compressx.set_column_codec('sa_docs', 'body', 'zstd', 19);
SELECT table_name, column_name, level, status FROM compressx.column_codecs
WHERE table_name = 'sa_docs';
SELECT column_name, values_rewritten = 300 AS all_rewritten, bytes_after < bytes_before AS smaller
FROM compressx.recompress_table('sa_docs');
SELECT count(*) FILTER (WHERE compressx.stored_size(d.tableoid, d.ctid, 'body') < b.l3) AS smaller_values
FROM sa_docs d JOIN sa_bytes b USING (id);
SELECT status FROM compressx.column_codecs WHERE table_name = 'sa_docs';
-- a second call has nothing to do
SELECT column_name, values_rewritten FROM compressx.recompress_table('sa_docs');
ALTER TABLE sa_bytes ADD COLUMN l19 bigint;
UPDATE sa_bytes b SET l19 = compressx.stored_size(d.tableoid, d.ctid, 'body')
FROM sa_docs d WHERE d.id = b.id;

-- online, the same: back to level 3
SELECT compressx.set_column_codec('sa_docs', 'body', 'zstd', 3);
CALL compressx.recompress_online('sa_docs', columns => '{body}');
SELECT count(*) FILTER (WHERE compressx.stored_size(d.tableoid, d.ctid, 'body') > b.l19) AS larger_values,
       count(*) FILTER (WHERE compressx.stored_size(d.tableoid, d.ctid, 'body') = b.l3) AS as_level_3
FROM sa_docs d JOIN sa_bytes b USING (id);
SELECT status FROM compressx.column_codecs WHERE table_name = 'sa_docs';
CALL compressx.recompress_online('sa_docs', columns => '{body}');
-- and online with no columns named
SELECT compressx.set_column_codec('sa_docs', 'body', 'zstd', 19);
CALL compressx.recompress_online('sa_docs');
SELECT count(*) FILTER (WHERE compressx.stored_size(d.tableoid, d.ctid, 'body') = b.l19) AS as_level_19
FROM sa_docs d JOIN sa_bytes b USING (id);
CALL compressx.recompress_online('sa_docs');

-- VACUUM FULL applies the setting too, and says so
SELECT compressx.set_column_codec('sa_docs', 'body', 'zstd', 3);
SELECT status FROM compressx.column_codecs WHERE table_name = 'sa_docs';
VACUUM FULL sa_docs;
SELECT status FROM compressx.column_codecs WHERE table_name = 'sa_docs';
SELECT column_name, values_rewritten FROM compressx.recompress_table('sa_docs');

-- a dictionary attached, then replaced: each applied by a rewrite, once
SELECT compressx.train_dictionary('sa_docs', 'body', 4096) > 0 AS trained;
SELECT status FROM compressx.column_codecs WHERE table_name = 'sa_docs';
SELECT column_name, values_rewritten = 300 AS all_rewritten, bytes_after < bytes_before AS smaller
FROM compressx.recompress_table('sa_docs');
SELECT column_name, values_rewritten FROM compressx.recompress_table('sa_docs');
SELECT compressx.train_dictionary('sa_docs', 'body', 8192) > 0 AS trained_again;
SELECT status FROM compressx.column_codecs WHERE table_name = 'sa_docs';
CALL compressx.recompress_online('sa_docs');
SELECT status FROM compressx.column_codecs WHERE table_name = 'sa_docs';
CALL compressx.recompress_online('sa_docs');
SELECT column_name, values_rewritten FROM compressx.recompress_table('sa_docs');

-- values too small to compress stay as they are, and do not keep a column
-- pending
CREATE TABLE sa_small (id integer, v text) USING compressx;
INSERT INTO sa_small SELECT i, 'x' FROM generate_series(1, 10) i;
SELECT compressx.set_column_codec('sa_small', 'v', 'zstd', 5);
SELECT status FROM compressx.column_codecs WHERE table_name = 'sa_small';
SELECT column_name, values_rewritten FROM compressx.recompress_table('sa_small');
SELECT status FROM compressx.column_codecs WHERE table_name = 'sa_small';

-- a heap table's setting applies when the table moves to compressx,
-- offline or online: then it is in effect
CREATE TABLE sa_heap (id integer, body text);
INSERT INTO sa_heap SELECT i, repeat('heap row ' || i, 50) FROM generate_series(1, 20) i;
SELECT compressx.set_column_codec('sa_heap', 'body', 'zstd', 7);
CREATE TABLE sa_heap2 AS SELECT * FROM sa_heap;
SELECT compressx.set_column_codec('sa_heap2', 'body', 'zstd', 7);
SELECT table_name, access_method, status FROM compressx.column_codecs
WHERE table_name IN ('sa_heap', 'sa_heap2') ORDER BY 1;
ALTER TABLE sa_heap SET ACCESS METHOD compressx;
CALL compressx.recompress_online('sa_heap2', access_method => 'compressx');
SELECT table_name, access_method, status FROM compressx.column_codecs
WHERE table_name IN ('sa_heap', 'sa_heap2') ORDER BY 1;
SELECT count(*) FILTER (WHERE compressx.stored_codec(tableoid, ctid, 'body') = 'zstd') AS zstd_values
FROM sa_heap;
DROP TABLE sa_heap, sa_heap2;

-- only the owner's functions move the counters: nobody else writes them
SELECT has_table_privilege('public', 'compressx.settings_applied', 'INSERT, UPDATE, DELETE') AS public_may_write,
       has_table_privilege('public', 'compressx.column_settings', 'INSERT, UPDATE, DELETE') AS public_may_write_settings;
DROP TABLE sa_docs, sa_bytes, sa_small;
