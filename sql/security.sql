-- Privileges and hostile objects
CREATE ROLE cx_owner;
CREATE ROLE cx_other;
GRANT CREATE ON SCHEMA public TO cx_owner, cx_other;

-- no function of the extension runs with its owner's rights
SELECT count(*) AS security_definer_functions
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'compressx'
WHERE p.prosecdef;

-- a table owned by a non-superuser, and another role
SET ROLE cx_owner;
CREATE TABLE owned (id integer PRIMARY KEY, body text) USING compressx;
INSERT INTO owned SELECT i, repeat('owned row ' || i, 20) FROM generate_series(1, 50) i;
SELECT compressx.set_column_codec('owned', 'body', 'lz4');
SELECT column_name, values_rewritten FROM recompress_table('owned', 'zstd');
SELECT compressx.reset_column_codec('owned');
CREATE TABLE owned_json (id integer, doc text) USING compressx;
INSERT INTO owned_json
SELECT i, json_build_object('id', i, 'item', 'thing ' || i % 37, 'note', 'owned by cx_owner, row ' || i)::text
FROM generate_series(1, 2000) i;
SELECT compressx.train_dictionary('owned_json', 'doc', 2048) > 0 AS owner_trains;
RESET ROLE;

SET ROLE cx_other;
-- mutating functions refuse a non-owner, before any work
SELECT compressx.set_column_codec('owned', 'body', 'pglz');
SELECT compressx.reset_column_codec('owned', 'body');
SELECT compressx.set_column_inline('owned', 'body', 500);
SELECT * FROM recompress_table('owned', 'lz4');
-- the settings table cannot be written directly
INSERT INTO compressx.column_settings VALUES ('owned', 'body', 2, 'none', NULL, NULL);
UPDATE compressx.column_settings SET codec = 'none';
DELETE FROM compressx.column_settings;
SELECT compressx.train_dictionary('owned_json', 'doc', 2048);
-- dictionaries hold pieces of the tables' data: no direct access
SELECT count(*) FROM compressx.dictionaries;
DELETE FROM compressx.dictionaries;
-- reading sizes needs SELECT on the table; the views show only readable tables
SELECT * FROM compressx.column_stats('owned');
SELECT * FROM compressx.stored_summary('owned', NULL);
SELECT count(*) FROM compressx.column_ratios WHERE table_name = 'owned';
SELECT count(*) FROM compressx.table_ratios WHERE table_name = 'owned';
SELECT count(*) FROM compressx.column_codecs WHERE table_name = 'owned';
-- so does reading a table's settings: an error, not the settings
SELECT * FROM compressx.column_codec_settings('owned');
SELECT * FROM compressx.column_codec_settings('owned_json');
-- debug settings are superuser-only
SET compressx.debug_rewrite_delay = '1ms';
RESET ROLE;
GRANT SELECT ON owned TO cx_other;
SET ROLE cx_other;
SELECT column_name, "values" FROM compressx.column_stats('owned');
SELECT count(*) FROM compressx.column_codecs WHERE table_name = 'owned';
SELECT column_name, codec, explicit FROM compressx.column_codec_settings('owned');
RESET ROLE;

-- compressx's own tables take no codecs, dictionaries or rewrites, even
-- from a superuser: compressx reads them while encoding and decoding
SELECT compressx.set_column_codec('compressx.column_settings', 'codec', 'lz4');
SELECT compressx.reset_column_codec('compressx.column_settings');
SELECT compressx.set_column_codec('compressx.dictionaries', 'dict', 'zstd');
SELECT compressx.train_dictionary('compressx.dictionaries', 'dict');
SELECT * FROM recompress_table('compressx.column_settings', 'lz4');
SELECT * FROM recompress_table('compressx.dictionaries');
SELECT count(*) AS own_table_settings FROM compressx.column_settings
WHERE relid IN ('compressx.column_settings'::regclass, 'compressx.dictionaries'::regclass);

-- hostile objects in public cannot hijack extension code: an operator and
-- functions shadowing the ones compressx's SQL and SPI statements use
CREATE FUNCTION public.hijack_eq(regclass, regclass) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked ='; END $$;
CREATE OPERATOR public.= (LEFTARG = regclass, RIGHTARG = regclass, FUNCTION = public.hijack_eq);
CREATE FUNCTION public.hijack_name_eq(name, name) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked name ='; END $$;
CREATE OPERATOR public.= (LEFTARG = name, RIGHTARG = name, FUNCTION = public.hijack_name_eq);
CREATE FUNCTION public.jsonb_object_agg(text, bigint) RETURNS jsonb
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked jsonb_object_agg'; END $$;
CREATE FUNCTION public.pg_get_publication_tables(text) RETURNS SETOF oid
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked pg_get_publication_tables'; END $$;
SET search_path = public, pg_catalog;
SELECT compressx.set_column_codec('owned', 'body', 'pglz');
SELECT codec FROM compressx.column_codecs WHERE table_name::text = 'owned';
SELECT compressx.reset_column_codec('owned');
SELECT column_name, methods FROM compressx.column_stats('owned');
ALTER TABLE owned RENAME COLUMN body TO body2;
ALTER TABLE owned RENAME COLUMN body2 TO body;
CREATE TABLE hostile_new (t text) USING compressx;
DROP TABLE hostile_new;
SELECT count(*) > 0 AS views_work FROM compressx.table_ratios WHERE table_name::text = 'owned';
RESET search_path;
DROP OPERATOR public.= (regclass, regclass);
DROP OPERATOR public.= (name, name);
DROP FUNCTION public.hijack_eq(regclass, regclass), public.hijack_name_eq(name, name),
              public.jsonb_object_agg(text, bigint), public.pg_get_publication_tables(text);

-- the install script does not take over pre-created objects
DROP EXTENSION compressx CASCADE;
CREATE FUNCTION public.recompress_table(rel regclass, codec text DEFAULT NULL, level integer DEFAULT NULL,
                                        columns name[] DEFAULT NULL)
RETURNS TABLE (column_name name, values_rewritten bigint, bytes_before bigint, bytes_after bigint)
LANGUAGE sql AS $$ SELECT NULL::name, 0::bigint, 0::bigint, 0::bigint $$;
\set SHOW_CONTEXT never
CREATE EXTENSION compressx;
\set SHOW_CONTEXT errors
DROP FUNCTION public.recompress_table(regclass, text, integer, name[]);
CREATE EXTENSION compressx;

DROP TABLE IF EXISTS owned, owned_json;
REVOKE CREATE ON SCHEMA public FROM cx_owner, cx_other;
DROP ROLE cx_owner;
DROP ROLE cx_other;
