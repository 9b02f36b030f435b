-- A hostile role sharing the database (issue 17): cx_bob has the default
-- privileges plus CREATE on schema public, as in databases created before
-- PostgreSQL 15; cx_alice owns data bob must not learn.
CREATE ROLE cx_alice;
CREATE ROLE cx_bob;
GRANT CREATE ON SCHEMA public TO cx_alice, cx_bob;

-- 1. Operators planted before CREATE EXTENSION are not bound into the
-- extension's views: one for each type pair compressx's views compare that
-- pg_catalog has no exact operator for.  Each logs its call.
DROP EXTENSION compressx CASCADE;
SET ROLE cx_bob;
CREATE TABLE public.hijack_log (what text);
GRANT INSERT ON public.hijack_log TO PUBLIC;
CREATE FUNCTION public.hj_regclass_oid(regclass, oid) RETURNS boolean LANGUAGE sql
AS $$ INSERT INTO public.hijack_log VALUES ('regclass = oid'); SELECT $1::oid OPERATOR(pg_catalog.=) $2 $$;
CREATE OPERATOR public.= (LEFTARG = regclass, RIGHTARG = oid, FUNCTION = public.hj_regclass_oid);
CREATE FUNCTION public.hj_oid_int(oid, integer) RETURNS boolean LANGUAGE sql
AS $$ INSERT INTO public.hijack_log VALUES ('oid = integer'); SELECT $1 OPERATOR(pg_catalog.=) $2::oid $$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = integer, FUNCTION = public.hj_oid_int);
CREATE FUNCTION public.hj_oid_int_ne(oid, integer) RETURNS boolean LANGUAGE sql
AS $$ INSERT INTO public.hijack_log VALUES ('oid <> integer'); SELECT $1 OPERATOR(pg_catalog.<>) $2::oid $$;
CREATE OPERATOR public.<> (LEFTARG = oid, RIGHTARG = integer, FUNCTION = public.hj_oid_int_ne);
CREATE FUNCTION public.hj_num_div(numeric, bigint) RETURNS numeric LANGUAGE sql
AS $$ INSERT INTO public.hijack_log VALUES ('numeric / bigint'); SELECT $1 OPERATOR(pg_catalog./) $2 $$;
CREATE OPERATOR public./ (LEFTARG = numeric, RIGHTARG = bigint, FUNCTION = public.hj_num_div);
CREATE FUNCTION public.hj_smallint_int(smallint, integer) RETURNS boolean LANGUAGE sql
AS $$ INSERT INTO public.hijack_log VALUES ('smallint = integer'); SELECT $1 OPERATOR(pg_catalog.=) $2 $$;
CREATE OPERATOR public.= (LEFTARG = smallint, RIGHTARG = integer, FUNCTION = public.hj_smallint_int);
CREATE FUNCTION public.hj_char_text("char", text) RETURNS boolean LANGUAGE sql
AS $$ INSERT INTO public.hijack_log VALUES ('"char" = text'); SELECT $1::text OPERATOR(pg_catalog.=) $2 $$;
CREATE OPERATOR public.= (LEFTARG = "char", RIGHTARG = text, FUNCTION = public.hj_char_text);
-- and a recompress_table that matches an unqualified call better
CREATE FUNCTION public.recompress_table(text, text)
RETURNS TABLE (column_name name, values_rewritten bigint, bytes_before bigint, bytes_after bigint)
LANGUAGE sql AS $$ INSERT INTO public.hijack_log VALUES ('recompress_table');
                   SELECT NULL::name, 0::bigint, 0::bigint, 0::bigint $$;
RESET ROLE;

-- version 0.1.0 binds none (its views bound three before their operators
-- were qualified: issue 27, item A5; sql/review_scripts.sql plants more) ...
CREATE EXTENSION compressx VERSION '0.1.0';
CREATE VIEW extension_view_deps AS
SELECT DISTINCT v.objid::regclass AS view, pg_catalog.pg_describe_object(d.refclassid, d.refobjid, 0) AS uses
FROM pg_depend v
JOIN pg_rewrite r ON r.ev_class = v.objid
JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
WHERE v.classid = 'pg_class'::regclass AND v.refclassid = 'pg_extension'::regclass
  AND v.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'compressx')
  AND d.refclassid IN ('pg_operator'::regclass, 'pg_proc'::regclass)
  AND (pg_identify_object(d.refclassid, d.refobjid, 0)).schema NOT IN ('pg_catalog', 'compressx');
SELECT * FROM extension_view_deps ORDER BY 1, 2;
-- ... nor does the update to 0.2.0, which replaces those views
ALTER EXTENSION compressx UPDATE;
SELECT * FROM extension_view_deps ORDER BY 1, 2;
-- a fresh install binds none
DROP EXTENSION compressx;
CREATE EXTENSION compressx;
SELECT * FROM extension_view_deps ORDER BY 1, 2;
-- functions in SQL and PL/pgSQL resolve names when called: each fixes its
-- search_path to pg_catalog (and pg_temp, never searched for operators)
SELECT p.oid::regprocedure AS function_without_search_path
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'compressx'
JOIN pg_language l ON l.oid = p.prolang
WHERE l.lanname <> 'c'
  AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false);
-- reading every view and running the functions calls no planted operator
CREATE TABLE hx (id integer, body text) USING compressx;
SELECT compressx.set_column_codec('hx', 'body', 'lz4');
INSERT INTO hx SELECT i, repeat('hostile ' || i, 400) FROM generate_series(1, 20) i;
CREATE TABLE hx_heap (id integer, body text);
INSERT INTO hx_heap SELECT i, repeat('heap ' || i, 1000) FROM generate_series(1, 20) i;
SELECT count(*) > 0 AS read FROM compressx.column_codecs WHERE table_name = 'hx';
SELECT count(*) > 0 AS read FROM compressx.column_ratios WHERE table_name IN ('hx', 'hx_heap');
SELECT count(*) > 0 AS read FROM compressx.table_ratios WHERE table_name IN ('hx', 'hx_heap');
SELECT count(*) >= 0 AS read FROM compressx.recompress_progress;
SELECT column_name, values_rewritten FROM compressx.recompress_table('hx', 'zstd');
ALTER TABLE hx RENAME COLUMN body TO body2;
ALTER TABLE hx RENAME COLUMN body2 TO body;
SELECT compressx.reset_column_codec('hx');
SELECT what, count(*) FROM public.hijack_log GROUP BY what ORDER BY what;
-- an unqualified call in the extension's schema would find bob's function
-- first; compressx.recompress_table cannot be shadowed
SELECT oid::regprocedure FROM pg_proc WHERE proname = 'recompress_table' ORDER BY 1::text;
DROP VIEW extension_view_deps;
DROP TABLE hx, hx_heap;
SET ROLE cx_bob;
DROP TABLE public.hijack_log;
DROP OPERATOR public.= (regclass, oid), public.= (oid, integer), public.<> (oid, integer),
              public./ (numeric, bigint), public.= (smallint, integer), public.= ("char", text);
DROP FUNCTION public.hj_regclass_oid(regclass, oid), public.hj_oid_int(oid, integer),
              public.hj_oid_int_ne(oid, integer), public.hj_num_div(numeric, bigint),
              public.hj_smallint_int(smallint, integer), public.hj_char_text("char", text),
              public.recompress_table(text, text);
RESET ROLE;

-- 2. A dictionary trained on alice's rows is no oracle for bob: a
-- temporary table named after alice's ("pg_temp_<oid>", the name ALTER
-- TABLE gives its transient copy) gets neither her settings nor her
-- dictionary, so the stored size of bob's guesses does not depend on them.
SET ROLE cx_alice;
CREATE TABLE secrets (id integer, doc text) USING compressx;
INSERT INTO secrets
SELECT i, format('{"user": "user%s", "service": "billing", "api_key": "7305918264", "quota": %s}', i, i % 97)
FROM generate_series(1, 3000) i;
SELECT compressx.set_column_codec('secrets', 'doc', 'zstd', 3, 16);
SELECT compressx.train_dictionary('secrets', 'doc', 4096) > 0 AS trained;
SELECT 'pg_temp_' || 'secrets'::regclass::oid AS lookalike \gset
-- the oracle: in alice's table, guesses of the key's first digit compressed
-- with her dictionary are not all the same size
INSERT INTO secrets
SELECT 10000 + d, format('{"user": "user1", "service": "billing", "api_key": "%s', d)
FROM generate_series(0, 9) d;
SELECT (array_agg(t.id - 10000 ORDER BY v.stored_bytes, t.id))[1] AS smallest_digit,
       count(DISTINCT v.stored_bytes) > 1 AS sizes_differ, min(v.method) AS method
FROM secrets t, compressx.value_storage('secrets', t.ctid, 'doc') v WHERE t.id >= 10000;
DELETE FROM secrets WHERE id >= 10000;
RESET ROLE;
SET ROLE cx_bob;
CREATE TEMP TABLE :"lookalike" (id integer, doc text) USING compressx;
INSERT INTO :"lookalike"
SELECT d, format('{"user": "user1", "service": "billing", "api_key": "%s', d)
FROM generate_series(0, 9) d;
-- with alice's dictionary the right first digit (7) stored smaller
SELECT count(DISTINCT v.stored_bytes) AS distinct_sizes, min(v.method) AS method
FROM :"lookalike" t, compressx.value_storage(:'lookalike', t.ctid, 'doc') v;
SELECT column_name, codec, dictionary FROM compressx.column_codec_settings(:'lookalike');
DROP TABLE :"lookalike";
RESET ROLE;

-- 3. Renames by ALTER TYPE .. RENAME ATTRIBUTE .. CASCADE keep the settings
-- with their columns and break nobody's DDL (a -> c, then b -> a made the
-- next rename anywhere fail on the settings table's key).
SET ROLE cx_bob;
CREATE TYPE public.rowt2 AS (a text, b text);
CREATE TABLE typed_t OF public.rowt2 USING compressx;
SELECT compressx.set_column_codec('typed_t', 'a', 'lz4');
SELECT compressx.set_column_codec('typed_t', 'b', 'pglz');
ALTER TYPE public.rowt2 RENAME ATTRIBUTE a TO c CASCADE;
ALTER TYPE public.rowt2 RENAME ATTRIBUTE b TO a CASCADE;
SELECT column_name, codec FROM compressx.column_codec_settings('typed_t') ORDER BY 1;
-- a temporary typed table cannot have settings at all
CREATE TEMP TABLE typed_tmp OF public.rowt2 USING compressx;
SELECT compressx.set_column_codec('typed_tmp', 'a', 'lz4');
RESET ROLE;
SELECT attname, attnum, codec FROM compressx.column_settings
WHERE relid = 'typed_t'::regclass ORDER BY attnum;
-- everyone's DDL goes on, the superuser's too
CREATE TABLE ddl_victim (id integer, t text) USING compressx;
SELECT compressx.set_column_codec('ddl_victim', 't', 'lz4');
ALTER TABLE ddl_victim RENAME COLUMN t TO t2;
ALTER TABLE ddl_victim ADD COLUMN u text;
SELECT column_name, codec, explicit FROM compressx.column_codec_settings('ddl_victim') ORDER BY 1;
DROP TABLE ddl_victim;
SET ROLE cx_bob;
DROP TABLE typed_t, typed_tmp;
DROP TYPE public.rowt2;
RESET ROLE;

-- 6. Row-level security: rows a policy hides are not measured, verified or
-- sampled for a role the policy applies to; the views leave such tables out.
SET ROLE cx_alice;
CREATE TABLE rls_t (id integer, owner_name name, doc text) USING compressx;
INSERT INTO rls_t VALUES (1, 'cx_bob', repeat('bob can read this ', 50)),
                         (2, 'cx_alice', repeat('alice only 1 ', 300)),
                         (3, 'cx_alice', repeat('alice only 2 ', 300));
ALTER TABLE rls_t ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON rls_t FOR SELECT USING (owner_name = current_user);
GRANT SELECT ON rls_t TO cx_bob;
SELECT 'rls_t'::regclass::oid AS rls_oid \gset
RESET ROLE;
SET ROLE cx_bob;
SELECT count(*) AS rows_bob_sees FROM rls_t;
SELECT * FROM compressx.column_stats('rls_t');
SELECT * FROM compressx.stored_summary('rls_t', NULL);
SELECT * FROM compressx.verify('rls_t');
SELECT * FROM compressx.advise('rls_t');
SELECT * FROM compressx.value_storage('rls_t', '(0,2)', 'doc');
SELECT count(*) AS listed FROM compressx.column_ratios WHERE table_name = 'rls_t';
SELECT count(*) AS listed FROM compressx.table_ratios WHERE table_name = 'rls_t';
RESET ROLE;
-- the owner, to whom the policy does not apply, reads every row
SET ROLE cx_alice;
SELECT column_name, "values" FROM compressx.column_stats('rls_t') ORDER BY 1;
-- a dictionary would make sizes of inserted values an oracle over hidden rows
INSERT INTO rls_t SELECT i, 'cx_alice', 'alice row ' || i FROM generate_series(4, 600) i;
SELECT compressx.train_dictionary('rls_t', 'doc', 1024) > 0 AS trained;
SELECT compressx.reset_column_codec('rls_t');
SELECT count(*) AS listed FROM compressx.column_ratios WHERE table_name = 'rls_t';
-- unless the table forces its policies on the owner too
ALTER TABLE rls_t FORCE ROW LEVEL SECURITY;
SELECT * FROM compressx.column_stats('rls_t');
RESET ROLE;

-- 8. No settings of a table bob may not read, even by OID, and nothing of
-- a table in a schema he cannot use.
CREATE SCHEMA alice_private AUTHORIZATION cx_alice;
SET ROLE cx_alice;
CREATE TABLE alice_private.hidden (id integer, note text) USING compressx;
SELECT compressx.set_column_codec('alice_private.hidden', 'note', 'zstd', 19);
SELECT 'alice_private.hidden'::regclass::oid AS hidden_oid \gset
RESET ROLE;
SET ROLE cx_bob;
SELECT * FROM compressx.column_codec_settings(:hidden_oid);
SELECT count(*) AS listed FROM compressx.column_codecs WHERE table_name = 'hidden';
SELECT * FROM compressx.column_stats(:hidden_oid);
RESET ROLE;

DROP SCHEMA alice_private CASCADE;
DROP TABLE rls_t, secrets;
REVOKE CREATE ON SCHEMA public FROM cx_alice, cx_bob;
DROP ROLE cx_alice;
DROP ROLE cx_bob;
