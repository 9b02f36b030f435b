-- Installing 0.1.0 and updating (through 0.2.0, 0.3.0 and 0.4.0 to 0.5.0) gives what CREATE EXTENSION gives
-- (which runs the same scripts), and keeps tables and settings
SELECT extversion FROM pg_extension WHERE extname = 'compressx';
DROP EXTENSION compressx;
CREATE EXTENSION compressx VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'compressx';
CREATE TABLE upd (id integer, body text) USING compressx;
SELECT compressx.set_column_codec('upd', 'body', 'zstd', 7);
INSERT INTO upd SELECT i, repeat('update path ' || i, 50) FROM generate_series(1, 10) i;
-- rows whose names went stale (renames while event triggers were off):
-- 0.2.0 keys settings by column number and mends the names
CREATE TABLE upd2 (a text, b text) USING compressx;
SELECT compressx.set_column_codec('upd2', 'a', 'lz4');
SELECT compressx.set_column_codec('upd2', 'b', 'pglz');
ALTER EVENT TRIGGER compressx_ddl_end DISABLE;
ALTER TABLE upd2 RENAME a TO c;
ALTER TABLE upd2 RENAME b TO a;
ALTER EVENT TRIGGER compressx_ddl_end ENABLE;
ALTER EXTENSION compressx UPDATE;
SELECT attname, attnum, codec FROM compressx.column_settings
WHERE relid = 'upd2'::regclass ORDER BY attnum;
SELECT column_name, codec FROM compressx.column_codec_settings('upd2') ORDER BY 1;
SELECT a.attname AS key_column
FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
WHERE i.indrelid = 'compressx.column_settings'::regclass AND i.indisprimary ORDER BY a.attnum;
DROP TABLE upd2;
SELECT extversion FROM pg_extension WHERE extname = 'compressx';
SELECT column_name, codec, level FROM compressx.column_codec_settings('upd') ORDER BY 1;
SELECT count(*) FILTER (WHERE body = repeat('update path ' || id, 50)) AS intact FROM upd;
SELECT v.method, v.stored_bytes < v.raw_bytes AS smaller
FROM upd, compressx.value_storage('upd', upd.ctid, 'body') v WHERE id = 3;
SELECT configured_compression FROM compressx.column_ratios WHERE table_name = 'upd';
DROP TABLE upd;

-- 0.3.0 -> 0.4.0: set_column_codec takes a dictionary; calls of the
-- five-argument form, positional or named, keep working, before and after
DROP EXTENSION compressx;
CREATE EXTENSION compressx VERSION '0.3.0';
CREATE TABLE upd3 (id integer, body text) USING compressx;
SELECT compressx.set_column_codec('upd3', 'body', 'zstd', 3, 16);
INSERT INTO upd3 SELECT i, repeat('update path ' || i, 50) FROM generate_series(1, 10) i;
ALTER EXTENSION compressx UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'compressx';
SELECT attname, codec, level, min_size, auto_dictionary
FROM compressx.column_settings WHERE relid = 'upd3'::regclass;
SELECT pg_get_function_identity_arguments(p.oid) FROM pg_proc p
WHERE p.proname = 'set_column_codec' AND p.pronamespace = 'compressx'::regnamespace;
SELECT compressx.set_column_codec('upd3', 'body', 'zstd', 5, 16);
SELECT compressx.set_column_codec('upd3', 'body', 'zstd', level => 5, min_size => 16);
SET compressx.auto_dictionary_worker = off;
SELECT compressx.set_column_codec('upd3', 'body', 'zstd', dictionary => 'auto');
SELECT table_name, column_name, state, values_seen, values_needed FROM compressx.auto_dictionaries;
SELECT count(*) FILTER (WHERE body = repeat('update path ' || id, 50)) AS intact FROM upd3;
DROP TABLE upd3;
