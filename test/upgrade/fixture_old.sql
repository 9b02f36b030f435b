-- A second database of the old cluster keeps the extension at 0.1.0, as a
-- database installed before 0.2.0 does; test/upgrade_check.sh updates it
-- after pg_upgrade.
\set ON_ERROR_STOP on
CREATE EXTENSION compressx VERSION '0.1.0';
CREATE TABLE notes (id integer PRIMARY KEY, body text) USING compressx;
SELECT compressx.set_column_codec('notes', 'body', 'zstd', 7);
INSERT INTO notes SELECT i, repeat('note ' || i || ' of the old extension ', 10) FROM generate_series(1, 800) i;
INSERT INTO notes
SELECT i, (SELECT string_agg(md5((i * 1000 + k)::text), '') FROM generate_series(1, 300) k)
FROM generate_series(801, 810) i;
CHECKPOINT;
