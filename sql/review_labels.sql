-- Issue 28 A4: a column's settings are mirrored in a security label of
-- provider compressx, which pg_dump writes before any data (so pg_restore
-- -j and pg_dump -t carry them; test/t/060_restore_settings.pl restores).
-- Here: every writer of settings keeps the label in step, and SECURITY
-- LABEL FOR compressx makes a label the column's settings, after strict
-- checks.
SET client_min_messages = warning;
CREATE TABLE lab (id integer, a text, b text, c text, n integer) USING compressx;
INSERT INTO lab SELECT i, json_build_object('id', i, 'kind', 'kind ' || i % 7, 'note', 'label test row ' || i)::text,
                       'b' || i, 'c' || i, i
FROM generate_series(1, 2000) i;
CREATE VIEW lab_labels AS
SELECT l.objoid::regclass AS rel, a.attname, regexp_replace(l.label, 'dict=[A-Za-z0-9+/=]+$', 'dict=<base64>') AS label
FROM pg_seclabel l JOIN pg_attribute a ON a.attrelid = l.objoid AND a.attnum = l.objsubid
WHERE l.provider = 'compressx' AND a.attrelid::regclass::text LIKE 'lab%' ORDER BY 1, 2;

-- set_column_codec, set_column_inline, train_dictionary, reset write it
SELECT compressx.set_column_codec('lab', 'b', 'zstd', 19, 16);
SELECT compressx.set_column_inline('lab', 'b', 500);
SELECT compressx.set_column_codec('lab', 'c', 'none');
SELECT compressx.set_column_codec('lab', 'a', 'zstd', 5);
SELECT compressx.train_dictionary('lab', 'a', 2048) > 0 AS trained;
SELECT * FROM lab_labels;
-- the dictionary in the label is the column's, byte for byte
SELECT decode(substring(l.label from 'dict=(.*)$'), 'base64') = d.dict AS dict_in_label
FROM pg_seclabel l, compressx.column_settings s JOIN compressx.dictionaries d USING (dict_id)
WHERE l.provider = 'compressx' AND l.objoid = 'lab'::regclass AND l.objsubid = 2
  AND s.relid = 'lab'::regclass AND s.attname = 'a';
SELECT compressx.set_column_codec('lab', 'b', 'zstd', dictionary => 'auto');
SELECT * FROM lab_labels WHERE attname = 'b';
SELECT compressx.reset_column_codec('lab', 'c');
SELECT * FROM lab_labels;

-- SECURITY LABEL makes a label the settings (a dictionary is imported for
-- the table, or an identical one of the table is used)
CREATE TABLE lab2 (id integer, a text, b text) USING compressx;
DO $$ BEGIN
    EXECUTE format('SECURITY LABEL FOR compressx ON COLUMN lab2.a IS %L',
                   (SELECT label FROM pg_seclabel WHERE provider = 'compressx'
                    AND objoid = 'lab'::regclass AND objsubid = 2));
END $$;
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd level=7 min_size=0 inline_max=100';
SELECT column_name, codec, level, min_size, dictionary IS NOT NULL AS has_dictionary, status
FROM compressx.column_codecs WHERE table_name = 'lab2' ORDER BY 1;
SELECT s.attname, s.inline_max, d.relid, d.dict = (SELECT d2.dict FROM compressx.column_settings s2
       JOIN compressx.dictionaries d2 USING (dict_id) WHERE s2.relid = 'lab'::regclass AND s2.attname = 'a') AS same_dict
FROM compressx.column_settings s LEFT JOIN compressx.dictionaries d USING (dict_id)
WHERE s.relid = 'lab2'::regclass ORDER BY 1;
-- the label given is what is stored; applying it again imports nothing new
SELECT count(*) AS dictionaries_of_lab2 FROM compressx.dictionaries WHERE relid = 'lab2'::regclass;
DO $$ BEGIN
    EXECUTE format('SECURITY LABEL FOR compressx ON COLUMN lab2.a IS %L',
                   (SELECT label FROM pg_seclabel WHERE provider = 'compressx'
                    AND objoid = 'lab'::regclass AND objsubid = 2));
END $$;
SELECT count(*) AS dictionaries_of_lab2 FROM compressx.dictionaries WHERE relid = 'lab2'::regclass;
INSERT INTO lab2 SELECT id, a, b FROM lab;
SELECT column_name, methods FROM compressx.column_stats('lab2') ORDER BY 1;
-- NULL resets the column
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS NULL;
SELECT attname FROM compressx.column_settings WHERE relid = 'lab2'::regclass;

-- strict checks, SQLSTATE 22023, naming the column; nothing is written
\set VERBOSITY default
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'codec=zstd';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd colour=blue';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 level=3 codec=zstd';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd level=3 level=4';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd level=x';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd level=23';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=brotli';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd min_size=-1';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd inline_max=24';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=lz4 dictionary=auto';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=pglz dict=AAAA';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd dict=not*base64';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd dictionary=auto ratio=2.5';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd dictionary=auto ratio=-1 dict=AAAA';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd ';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx';
SECURITY LABEL FOR compressx ON COLUMN lab2.id IS 'v1 codec=zstd';
SECURITY LABEL FOR compressx ON TABLE lab2 IS 'v1 codec=zstd';
\set VERBOSITY sqlstate
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd level=99';
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd dict=@@@@';
\set VERBOSITY default
SELECT attname FROM compressx.column_settings WHERE relid = 'lab2'::regclass;
-- a dictionary larger than 1 MB is refused (its detail only: the statement is long)
DO $$
DECLARE
    d text;
BEGIN
    EXECUTE format('SECURITY LABEL FOR compressx ON COLUMN lab2.b IS %L',
                   'v1 codec=zstd dict=' || translate(encode(convert_to(repeat('x', 1024 * 1024 + 3), 'UTF8'), 'base64'), E'\n', ''));
EXCEPTION WHEN invalid_parameter_value THEN
    GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
    RAISE WARNING '%', d;
END $$;

-- only the owner (core's check), and only the column itself: a label on
-- a partitioned table's parent does not reach its partitions
CREATE ROLE cx_lab_other;
SET ROLE cx_lab_other;
SECURITY LABEL FOR compressx ON COLUMN lab2.b IS 'v1 codec=zstd';
RESET ROLE;
CREATE TABLE labp (id integer, body text) PARTITION BY RANGE (id);
CREATE TABLE labp1 PARTITION OF labp FOR VALUES FROM (0) TO (10) USING compressx;
SECURITY LABEL FOR compressx ON COLUMN labp.body IS 'v1 codec=pglz';
SELECT relid, attname, codec FROM compressx.column_settings WHERE relid::text LIKE 'labp%' ORDER BY 1;
SELECT compressx.set_column_codec('labp', 'body', 'none');
SELECT * FROM lab_labels WHERE rel::text LIKE 'labp%';

-- a heap table's pending setting has a label too
CREATE TABLE labh (id integer, body text);
SECURITY LABEL FOR compressx ON COLUMN labh.body IS 'v1 codec=zstd level=19';
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
