-- Review of setting generations (issue 34, item 2): only a rewrite that
-- re-encoded every row records a column's setting applied.  ALTER TABLE ..
-- SET ACCESS METHOD compressx on a table that is compressx already
-- rewrites nothing (core skips it): the setting stays pending.
CREATE TABLE gen_noop (id int, body text) USING compressx;
INSERT INTO gen_noop SELECT g, repeat(md5(g::text), 100) FROM generate_series(1, 300) g;
SELECT compressx.set_column_codec('gen_noop', 'body', 'zstd', 1);
SELECT values_rewritten > 0 AS rewritten FROM compressx.recompress_table('gen_noop');
SELECT compressx.set_column_codec('gen_noop', 'body', 'zstd', 19);
SELECT status LIKE 'setting changed%' AS pending
FROM compressx.column_codecs WHERE table_name = 'gen_noop';
ALTER TABLE gen_noop SET ACCESS METHOD compressx;  -- no rewrite
SELECT status LIKE 'setting changed%' AS pending
FROM compressx.column_codecs WHERE table_name = 'gen_noop';
-- so the rewrite still applies level 19
SELECT values_rewritten > 0 AS rewritten FROM compressx.recompress_table('gen_noop');
SELECT status FROM compressx.column_codecs WHERE table_name = 'gen_noop';
-- a rewrite earlier in the transaction does not count for a later no-op
SELECT compressx.set_column_codec('gen_noop', 'body', 'zstd', 3);
BEGIN;
ALTER TABLE gen_noop ALTER COLUMN id TYPE bigint;  -- rewrites every row
SELECT status FROM compressx.column_codecs WHERE table_name = 'gen_noop';
SELECT compressx.set_column_codec('gen_noop', 'body', 'zstd', 5);
ALTER TABLE gen_noop SET ACCESS METHOD compressx;  -- no rewrite
SELECT status LIKE 'setting changed%' AS pending
FROM compressx.column_codecs WHERE table_name = 'gen_noop';
COMMIT;
-- a move from heap rewrites every row: applied
CREATE TABLE gen_heap (id int, body text) USING heap;
INSERT INTO gen_heap SELECT g, repeat(md5(g::text), 100) FROM generate_series(1, 300) g;
SELECT compressx.set_column_codec('gen_heap', 'body', 'zstd', 19);
ALTER TABLE gen_heap SET ACCESS METHOD compressx;
SELECT status FROM compressx.column_codecs WHERE table_name = 'gen_heap';
DROP TABLE gen_noop, gen_heap;
-- stores_no_row takes a SHARE lock on the table it is given: the trigger's
-- alone, not PUBLIC's
SELECT pg_catalog.has_function_privilege('public', 'compressx.stores_no_row(oid)', 'EXECUTE') AS public_may_lock;
