-- Servers built without lz4 (issue 29): compressx refuses every setting
-- that would store values in core's lz4 format, up front, naming the cause;
-- everything else works there.  This file has two expected outputs:
-- server_lz4.out (server with lz4) and server_lz4_1.out (without).
SELECT setting = 'pglz' AS pglz_default FROM pg_settings WHERE name = 'default_toast_compression';
SELECT 'lz4' = ANY (enumvals) AS server_has_lz4
FROM pg_settings WHERE name = 'default_toast_compression';

-- a heap table with pglz values, inline and out of line
CREATE TABLE nl_docs (id int PRIMARY KEY, body text, note text);
ALTER TABLE nl_docs ALTER COLUMN body SET COMPRESSION pglz;
INSERT INTO nl_docs
SELECT g, repeat('body of document ' || g || ' ', 20 + g % 400), 'note ' || g
FROM generate_series(1, 200) g;
SELECT md5(string_agg(body || note, ',' ORDER BY id)) AS sum_before FROM nl_docs \gset

-- the refusals (on a server with lz4 these succeed)
\set VERBOSITY default
SELECT column_name, values_rewritten FROM recompress_table('nl_docs', 'lz4');
CALL compressx.recompress_online('nl_docs', 'lz4');
SET compressx.default_codec = lz4;
SHOW compressx.default_codec;
RESET compressx.default_codec;
\set VERBOSITY terse
SELECT count(*) AS lz4_values FROM nl_docs WHERE pg_column_compression(body) = 'lz4';
SELECT column_name, values_rewritten FROM recompress_table('nl_docs', 'pglz');

-- heap -> compressx: zstd by default, pglz where asked; no lz4 involved
ALTER TABLE nl_docs SET ACCESS METHOD compressx;
SELECT compressx.set_column_codec('nl_docs', 'note', 'pglz');
\set VERBOSITY default
SELECT compressx.set_column_codec('nl_docs', 'body', 'lz4');
SELECT compressx.set_column_codec('nl_docs', 'body', 'lz4', 9);
\set VERBOSITY terse
SELECT column_name, codec FROM compressx.column_codec_settings('nl_docs') ORDER BY 1;
INSERT INTO nl_docs VALUES (201, repeat('one more document ', 50), 'note 201');
DELETE FROM nl_docs WHERE id = 201;
SELECT md5(string_agg(body || note, ',' ORDER BY id)) = :'sum_before' AS same_rows FROM nl_docs;
SELECT column_name, array(SELECT jsonb_object_keys(methods) ORDER BY 1) AS methods
FROM compressx.column_stats('nl_docs') ORDER BY 1;
SELECT count(*) AS problems FROM compressx.verify('nl_docs');
VACUUM FULL nl_docs;
SELECT md5(string_agg(body || note, ',' ORDER BY id)) = :'sum_before' AS same_after_vacuum_full FROM nl_docs;
SELECT column_name, array(SELECT jsonb_object_keys(methods) ORDER BY 1) AS methods
FROM compressx.column_stats('nl_docs') ORDER BY 1;

-- compressx's own frames carry lz4 compressed by compressx's liblz4, which
-- core never reads: they work on any server
SELECT compressx.decompress(compressx.compress(convert_to(repeat('frame ', 500), 'UTF8'), 'lz4'))
       = convert_to(repeat('frame ', 500), 'UTF8') AS frame_roundtrip;

DROP TABLE nl_docs;
