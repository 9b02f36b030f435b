-- Issue 28 A4: a column's settings are mirrored in a security label of
-- provider compressx, which pg_dump writes before any data (so pg_restore
-- -j and pg_dump -t carry them; test/t/060_restore_settings.pl restores).
-- Issue 33 A1: the label names a dictionary by a random key, never by its
-- bytes (test dict_privacy); A4: a type change drops the settings.
-- Here: every writer of settings keeps the label in step, and SECURITY
-- LABEL FOR compressx makes a label the column's settings, after strict
-- checks.
SET client_min_messages = warning;
CREATE TABLE lab (id integer, a text, b text, c text, n integer) USING compressx;
INSERT INTO lab SELECT i, json_build_object('id', i, 'kind', 'kind ' || i % 7, 'note', 'label test row ' || i)::text,
                       'b' || i, 'c' || i, i
FROM generate_series(1, 2000) i;
CREATE VIEW lab_labels AS
SELECT l.objoid::regclass AS rel, a.attname, regexp_replace(l.label, 'dict=[0-9a-f-]{36}$', 'dict=<key>') AS label
FROM pg_seclabel l JOIN pg_attribute a ON a.attrelid = l.objoid AND a.attnum = l.objsubid
WHERE l.provider = 'compressx' AND a.attrelid::regclass::text LIKE 'lab%' ORDER BY 1, 2;

-- set_column_codec, set_column_inline, train_dictionary, reset write it
SELECT compressx.set_column_codec('lab', 'b', 'zstd', 19, 16);
SELECT compressx.set_column_inline('lab', 'b', 500);
SELECT compressx.set_column_codec('lab', 'c', 'none');
SELECT compressx.set_column_codec('lab', 'a', 'zstd', 5);
SELECT compressx.train_dictionary('lab', 'a', 2048) > 0 AS trained;
SELECT * FROM lab_labels;
-- the label names the column's dictionary by its key, never by its bytes
SELECT substring(l.label from 'dict=(.*)$')::uuid = d.dict_key AS key_in_label,
       position(encode(d.dict, 'base64') in l.label) = 0 AND l.label !~ 'ratio' AS no_bytes
FROM pg_seclabel l, compressx.column_settings s JOIN compressx.dictionaries d USING (dict_id)
WHERE l.provider = 'compressx' AND l.objoid = 'lab'::regclass AND l.objsubid = 2
  AND s.relid = 'lab'::regclass AND s.attname = 'a';
SELECT compressx.set_column_codec('lab', 'b', 'zstd', dictionary => 'auto');
SELECT * FROM lab_labels WHERE attname = 'b';
SELECT compressx.reset_column_codec('lab', 'c');
SELECT * FROM lab_labels;

-- SECURITY LABEL makes a label the settings.  A key names a dictionary of
-- the same table, or one a restore will bring: another table's key (any
-- role reads it) gives that table's dictionary to no one; the column
-- waits for a restored dictionary of its own (restored_dict)
CREATE TABLE lab2 (id integer, a text, b text) USING compressx;
DO $$ BEGIN
    EXECUTE format('SECURITY LABEL FOR compressx ON COLUMN lab2.a IS %L',
                   (SELECT label FROM pg_seclabel WHERE provider = 'compressx'
                    AND objoid = 'lab'::regclass AND objsubid = 2));
END $$;
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd level=7 min_size=0 inline_max=100';
SELECT column_name, codec, level, min_size, dictionary IS NOT NULL AS has_dictionary, status
FROM compressx.column_codecs WHERE table_name = 'lab2' ORDER BY 1;
SELECT s.attname, s.inline_max, s.dict_id, s.restored_dict = (SELECT d.dict_key FROM compressx.column_settings s2
       JOIN compressx.dictionaries d USING (dict_id) WHERE s2.relid = 'lab'::regclass AND s2.attname = 'a') AS waits_for_labs_key
FROM compressx.column_settings s WHERE s.relid = 'lab2'::regclass ORDER BY 1;
SELECT count(*) AS dictionaries_of_lab2 FROM compressx.dictionaries WHERE relid = 'lab2'::regclass;
-- the label given is what is stored
SELECT * FROM lab_labels WHERE rel = 'lab2'::regclass;
INSERT INTO lab2 SELECT id, a, b FROM lab;
SELECT column_name, methods FROM compressx.column_stats('lab2') ORDER BY 1;
-- applying lab's label to lab again finds lab's own dictionary
DO $$ BEGIN
    EXECUTE format('SECURITY LABEL FOR compressx ON COLUMN lab.a IS %L',
                   (SELECT label FROM pg_seclabel WHERE provider = 'compressx'
                    AND objoid = 'lab'::regclass AND objsubid = 2));
END $$;
SELECT s.dict_id = d.dict_id AS same_dictionary, s.restored_dict IS NULL AS waits_for_nothing
FROM compressx.column_settings s, compressx.dictionaries d
WHERE s.relid = 'lab'::regclass AND s.attname = 'a' AND d.relid = 'lab'::regclass AND d.dropped IS NULL
ORDER BY d.dict_id DESC LIMIT 1;
-- NULL resets the column
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS NULL;
SELECT attname FROM compressx.column_settings WHERE relid = 'lab2'::regclass;

-- strict checks, SQLSTATE 22023, naming the column; nothing is written
\set VERBOSITY default
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'codec=zstd';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd colour=blue';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 level=3 codec=zstd';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd level=3 level=4';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd level=x';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd level=23';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=brotli';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd min_size=-1';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd inline_max=24';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=lz4 dictionary=auto';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=pglz dict=0b7c5d4e-1111-4222-8333-944455556666';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd dict=not-a-key';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd dictionary=auto ratio=2.5';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd dict=AAAA';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd ';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx';
SECURITY LABEL FOR compressx ON COLUMN lab2.id IS 'v2 codec=zstd';
-- a type that cannot be compressed: skipped with a WARNING (a dump's label
-- for a column whose type changed since), so that a strict restore goes on
CREATE TABLE lab_int (id integer, c text) USING compressx;
SELECT compressx.set_column_codec('lab_int', 'c', 'zstd', 5);
SELECT * FROM lab_labels WHERE rel = 'lab_int'::regclass;
-- ALTER COLUMN .. TYPE to such a type deletes the settings and the label
ALTER TABLE lab_int ALTER COLUMN c TYPE integer USING 0;
SELECT count(*) AS settings_left FROM compressx.column_settings WHERE relid = 'lab_int'::regclass;
SELECT count(*) AS labels_left FROM pg_seclabel WHERE objoid = 'lab_int'::regclass;
BEGIN;
SECURITY LABEL FOR compressx ON COLUMN lab_int.c IS 'v2 codec=zstd level=5';
COMMIT;
SELECT count(*) AS settings_left FROM compressx.column_settings WHERE relid = 'lab_int'::regclass;
SECURITY LABEL FOR compressx ON COLUMN lab_int.c IS NULL;
DROP TABLE lab_int;
SECURITY LABEL FOR compressx ON TABLE lab2 IS 'v2 codec=zstd';
\set VERBOSITY sqlstate
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd level=99';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd dict=AAAA';
\set VERBOSITY default
SELECT attname FROM compressx.column_settings WHERE relid = 'lab2'::regclass;
-- only the owner (core's check), and only the column itself: a label on
-- a partitioned table's parent does not reach its partitions
CREATE ROLE cx_lab_other;
SET ROLE cx_lab_other;
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v2 codec=zstd';
RESET ROLE;
CREATE TABLE labp (id integer, body text) PARTITION BY RANGE (id);
CREATE TABLE labp1 PARTITION OF labp FOR VALUES FROM (0) TO (10) USING compressx;
SECURITY LABEL FOR compressx ON COLUMN labp.body IS 'v2 codec=pglz';
SELECT relid, attname, codec FROM compressx.column_settings WHERE relid::text LIKE 'labp%' ORDER BY 1;
SELECT compressx.set_column_codec('labp', 'body', 'none');
SELECT * FROM lab_labels WHERE rel::text LIKE 'labp%';

-- a heap table's pending setting has a label too
CREATE TABLE labh (id integer, body text);
SECURITY LABEL FOR compressx ON COLUMN labh.body IS 'v2 codec=zstd level=19';
SELECT table_name, column_name, codec, level, status FROM compressx.column_codecs WHERE table_name = 'labh';
-- a dropped column takes its label with it
ALTER TABLE lab DROP COLUMN c;
ALTER TABLE lab DROP COLUMN b;
SELECT * FROM lab_labels WHERE rel = 'lab'::regclass;

-- what pg_dump --no-security-labels leaves out, as statements to run on
-- the restored database (doc/dump-restore.md)
SELECT format('SECURITY LABEL FOR compressx ON COLUMN %s.%I IS %L;',
              l.objoid::regclass, a.attname, left(l.label, 30)) AS statement
FROM pg_seclabel l JOIN pg_attribute a ON a.attrelid = l.objoid AND a.attnum = l.objsubid
WHERE l.provider = 'compressx' AND l.classoid = 'pg_class'::regclass AND l.objoid = 'labh'::regclass;

DROP TABLE lab, lab2, labp, labh;
DROP VIEW lab_labels;
DROP ROLE cx_lab_other;
SELECT count(*) AS labels_left FROM pg_seclabel l LEFT JOIN pg_class c ON c.oid = l.objoid
WHERE l.provider = 'compressx' AND (c.relname IS NULL OR c.relname LIKE 'lab%');
