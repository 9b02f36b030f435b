-- Issue 33 A1: no dictionary byte is readable by a role without SELECT on
-- the table.  A zstd dictionary holds verbatim pieces of the rows it was
-- trained on; pg_seclabel (and every catalog) is readable by every role, so
-- a column's label names its dictionary by a random key only, and the
-- bytes live in compressx.dictionaries and compressx.dictionary_dump, which
-- no role but their owner reads.  (test/t/060_restore_settings.pl: dumps.)
SET client_min_messages = warning;
CREATE ROLE cx_alice;
CREATE ROLE cx_eve;
GRANT CREATE ON SCHEMA public TO cx_alice, cx_eve;
SET ROLE cx_alice;
CREATE TABLE secrets (id integer, doc text) USING compressx;
SELECT compressx.set_column_codec('secrets', 'doc', 'zstd', 3);
INSERT INTO secrets SELECT i, json_build_object('customer', 'CUST-' || (100000 + i % 50),
                                               'api_key', 'AKIA-SUPERSECRET-7f3a9c',
                                               'note', 'order ' || i)::text
FROM generate_series(1, 3000) i;
SELECT compressx.train_dictionary('secrets', 'doc', 4096) > 0 AS trained;
-- an automatic dictionary's label alike
CREATE TABLE secrets_auto (id integer, doc text) USING compressx;
SELECT compressx.set_column_codec('secrets_auto', 'doc', 'zstd', dictionary => 'auto');
INSERT INTO secrets_auto SELECT * FROM secrets;
SELECT dictionary IS NOT NULL AS trained FROM compressx.auto_dictionary_run('secrets_auto');
RESET ROLE;
-- the dictionaries do hold the secret (what the review recovered)
SELECT bool_and(position('AKIA-SUPERSECRET-7f3a9c'::bytea IN dict) > 0) AS dictionaries_hold_it,
       count(*) AS dictionaries
FROM compressx.dictionaries WHERE relid IN ('secrets'::regclass, 'secrets_auto'::regclass);

SET ROLE cx_eve;
SELECT count(*) FROM secrets;
-- the labels: a codec, a level and a key; no base64, no ratio
SELECT objoid::regclass AS rel,
       regexp_replace(label, 'dict=[0-9a-f-]{36}$', 'dict=<key>') AS label
FROM pg_seclabel WHERE provider = 'compressx' AND objoid::regclass::text LIKE 'secrets%' ORDER BY 1;
-- no byte of the secret, nor of any customer id, in anything eve reads of pg_seclabel
SELECT count(*) AS labels_with_secrets FROM pg_seclabels
WHERE provider = 'compressx' AND (label ~ 'AKIA|CUST-' OR
      position('AKIA' IN convert_from(decode(coalesce(substring(label FROM 'dict=([A-Za-z0-9+/=]{40,})'), ''), 'base64'), 'SQL_ASCII')) > 0);
SELECT count(*) FROM pg_seclabel WHERE provider = 'compressx' AND objoid::regclass::text LIKE 'secrets%' AND label !~ '^v2 codec=zstd( level=3)?( dictionary=auto)? dict=[0-9a-f-]{36}$';
-- the tables with the bytes are closed to her
SELECT count(*) FROM compressx.dictionaries;
SELECT count(*) FROM compressx.dictionary_dump;
-- the views she may read name no dictionary of a table she cannot read
SELECT count(*) FROM compressx.column_codecs WHERE table_name LIKE 'secrets%';
SELECT count(*) FROM compressx.auto_dictionaries WHERE table_name LIKE 'secrets%';
-- copying alice's key into a label of her own gives her nothing of it
CREATE TABLE eve_probe (id integer, doc text) USING compressx;
DO $$ BEGIN
    EXECUTE format('SECURITY LABEL FOR compressx ON COLUMN eve_probe.doc IS %L',
                   (SELECT label FROM pg_seclabel WHERE provider = 'compressx'
                    AND objoid = 'secrets'::regclass));
END $$;
INSERT INTO eve_probe SELECT i, json_build_object('customer', 'CUST-1000' || i, 'api_key', 'AKIA-x')::text
FROM generate_series(1, 200) i;
SELECT column_name, methods FROM compressx.column_stats('eve_probe');
SELECT dictionary IS NULL AS no_dictionary FROM compressx.column_codecs WHERE table_name = 'eve_probe';
-- nor can she bring a dictionary "restored" for her table
INSERT INTO compressx.dictionary_dump (dict_key, rel, dict, sample_values, sample_bytes, auto)
SELECT substring(label FROM 'dict=(.*)$')::uuid, 'eve_probe', '\x00', 0, 0, false
FROM pg_seclabel WHERE provider = 'compressx' AND objoid = 'eve_probe'::regclass;
DROP TABLE eve_probe;
RESET ROLE;

-- nothing of the dictionaries in a schema-only dump: checked in
-- test/t/060_restore_settings.pl (pg_dump --schema-only)
DROP TABLE secrets, secrets_auto;
REVOKE CREATE ON SCHEMA public FROM cx_alice, cx_eve;
DROP ROLE cx_alice;
DROP ROLE cx_eve;
