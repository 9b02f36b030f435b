-- Review round 3 (issue 27) of recompress_online: items 13 and 15.
SET client_min_messages = warning;

-- 13: compressx.recompress_online_leftovers offers to resume the latest
-- interrupted run, not the first: after an interrupted level change and an
-- interrupted move to heap, resuming finishes the move.  Cleanup restores
-- the settings of before the first interrupted run.
CREATE TABLE rv_lm (id int PRIMARY KEY, body text) USING compressx;
SELECT compressx.set_column_codec('rv_lm', 'body', 'zstd', 1);
INSERT INTO rv_lm SELECT i, repeat(md5((i % 13)::text) || ' latest intent ' || i || ' ', 40)
FROM generate_series(1, 200) i;
CREATE TABLE rv_lm_sum AS SELECT md5(string_agg(id || body, ',' ORDER BY id)) AS sum FROM rv_lm;
-- interrupted: a level change
SET compressx.debug_rewrite_delay = 100;	-- per batch, before its commit
SET statement_timeout = '350ms';
CALL compressx.recompress_online('rv_lm', 'zstd', 19, batch_rows => 10);
RESET statement_timeout;
SELECT relation, codec, level, target_access_method, resume
FROM compressx.recompress_online_leftovers;
SELECT epoch IS NOT NULL AS has_epoch FROM compressx.online_runs
WHERE relid = 'rv_lm'::regclass;
-- interrupted: a move to heap, in pglz
SET statement_timeout = '350ms';
CALL compressx.recompress_online('rv_lm', 'pglz', access_method => 'heap', batch_rows => 10);
RESET statement_timeout;
RESET compressx.debug_rewrite_delay;
SELECT relation, codec, level, columns, target_access_method, access_method, resume
FROM compressx.recompress_online_leftovers;
-- the level change's epoch is not the move's
SELECT epoch IS NULL AS no_epoch FROM compressx.online_runs
WHERE relid = 'rv_lm'::regclass;
-- cleanup would restore the settings of before the level change
SELECT settings_before->0->>'codec' AS codec_before, settings_before->0->>'level' AS level_before
FROM compressx.online_runs WHERE relid = 'rv_lm'::regclass;
-- resuming as offered finishes the move
SELECT resume FROM compressx.recompress_online_leftovers \gset
:resume;
SELECT a.amname, (SELECT count(*) FROM compressx.recompress_online_leftovers) AS leftovers
FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'rv_lm'::regclass;
SELECT attcompression FROM pg_attribute WHERE attrelid = 'rv_lm'::regclass AND attname = 'body';
SELECT string_agg(DISTINCT pg_column_compression(body), ',') AS methods FROM rv_lm;
SELECT (SELECT md5(string_agg(id || body, ',' ORDER BY id)) FROM rv_lm) = sum AS same FROM rv_lm_sum;
DROP TABLE rv_lm, rv_lm_sum;

-- two interrupted runs with different levels, then cleanup: the settings
-- of before the first come back
CREATE TABLE rv_lc (id int PRIMARY KEY, body text) USING compressx;
SELECT compressx.set_column_codec('rv_lc', 'body', 'zstd', 2);
INSERT INTO rv_lc SELECT i, repeat('cleanup after two ' || i || ' ', 60)
FROM generate_series(1, 200) i;
SET compressx.debug_rewrite_delay = 100;
SET statement_timeout = '350ms';
CALL compressx.recompress_online('rv_lc', 'zstd', 19, batch_rows => 10);
SET statement_timeout = '350ms';
CALL compressx.recompress_online('rv_lc', 'lz4', batch_rows => 10);
RESET statement_timeout;
RESET compressx.debug_rewrite_delay;
SELECT relation, codec, level FROM compressx.recompress_online_leftovers;
SELECT attname, codec, level FROM compressx.column_settings WHERE relid = 'rv_lc'::regclass;
SELECT compressx.recompress_online_cleanup('rv_lc');
SELECT attname, codec, level FROM compressx.column_settings WHERE relid = 'rv_lc'::regclass;
SELECT count(*) FROM compressx.recompress_online_leftovers;
SELECT count(*) AS problems FROM compressx.verify('rv_lc');
DROP TABLE rv_lc;
