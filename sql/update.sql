-- Installing 0.1.0 and updating to 0.2.0 gives what CREATE EXTENSION gives
-- (which runs the same two scripts), and keeps tables and settings
SELECT extversion FROM pg_extension WHERE extname = 'compressx';
DROP EXTENSION compressx;
CREATE EXTENSION compressx VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'compressx';
CREATE TABLE upd (id integer, body text) USING compressx;
SELECT compressx.set_column_codec('upd', 'body', 'zstd', 7);
INSERT INTO upd SELECT i, repeat('update path ' || i, 50) FROM generate_series(1, 10) i;
ALTER EXTENSION compressx UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'compressx';
SELECT column_name, codec, level FROM compressx.column_codec_settings('upd') ORDER BY 1;
SELECT count(*) FILTER (WHERE body = repeat('update path ' || id, 50)) AS intact FROM upd;
SELECT v.method, v.stored_bytes < v.raw_bytes AS smaller
FROM upd, compressx.value_storage('upd', upd.ctid, 'body') v WHERE id = 3;
SELECT configured_compression FROM compressx.column_ratios WHERE table_name = 'upd';
DROP TABLE upd;
