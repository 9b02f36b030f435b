-- Review round 3, item A5 (issue 27): operators planted in the extension's
-- schema by a role with CREATE on it are neither bound by the install and
-- update scripts nor called by what they create.  A planted operator wins
-- over pg_catalog's when it matches the argument types exactly and
-- pg_catalog's would need an implicit cast (numeric / bigint, oid =
-- integer, regclass = oid, ...); an unqualified operator in a script then
-- binds it, or, as in the issue, makes CREATE EXTENSION fail.
--
-- In a database of its own: the extension is dropped and created again
-- there, and the regression database is left as it was.
SELECT pg_catalog.current_database() AS regress_db \gset
CREATE DATABASE cx_review_scripts;
\c cx_review_scripts
SET client_min_messages = warning;
CREATE ROLE cx_planter;
GRANT CREATE ON SCHEMA public TO cx_planter;

-- cx_planter plants, in public, one operator for each of these operator
-- names and each pair of these types that pg_catalog has no exact operator
-- for; each returns boolean (what broke CREATE EXTENSION in the issue) and
-- raises an error when called.
SET ROLE cx_planter;
DO $$
DECLARE
    types text[] := '{int2,int4,int8,numeric,float4,float8,oid,regclass,regnamespace,regrole,'
                    'text,name,char,bool,bytea,jsonb,tid,timestamptz,interval}';
    l text;
    r text;
    o text;
BEGIN
    FOREACH l IN ARRAY types LOOP
        FOREACH r IN ARRAY types LOOP
            EXECUTE pg_catalog.format(
                'CREATE FUNCTION public.planted(pg_catalog.%I, pg_catalog.%I) RETURNS boolean '
                'LANGUAGE plpgsql AS $f$BEGIN RAISE EXCEPTION ''planted operator on (%s, %s) called''; END$f$',
                l, r, l, r);
            FOREACH o IN ARRAY '{=,<>,<,<=,>,>=,+,-,*,/,%,||,~~,!~~}'::text[] LOOP
                IF NOT EXISTS (
                    SELECT FROM pg_catalog.pg_operator p
                    WHERE p.oprname OPERATOR(pg_catalog.=) o::pg_catalog.name
                      AND p.oprleft OPERATOR(pg_catalog.=) l::pg_catalog.regtype::pg_catalog.oid
                      AND p.oprright OPERATOR(pg_catalog.=) r::pg_catalog.regtype::pg_catalog.oid
                      AND p.oprnamespace OPERATOR(pg_catalog.=) 'pg_catalog'::pg_catalog.regnamespace::pg_catalog.oid)
                THEN
                    EXECUTE pg_catalog.format(
                        'CREATE OPERATOR public.%s (LEFTARG = pg_catalog.%I, RIGHTARG = pg_catalog.%I, '
                        'FUNCTION = public.planted)', o, l, r);
                END IF;
            END LOOP;
        END LOOP;
    END LOOP;
END
$$;
RESET ROLE;
-- among them the issue's
SELECT o.oprcode::pg_catalog.regprocedure AS issue_operator
FROM pg_catalog.pg_operator o
WHERE o.oid OPERATOR(pg_catalog.=) 'public./(numeric, bigint)'::pg_catalog.regoperator::pg_catalog.oid;
SELECT pg_catalog.count(*) OPERATOR(pg_catalog.>) 1000::pg_catalog.int8 AS many_planted
FROM pg_catalog.pg_operator o
WHERE o.oprowner OPERATOR(pg_catalog.=) 'cx_planter'::pg_catalog.regrole::pg_catalog.oid;

-- what depends on a planted operator or function (views' rules, column
-- defaults, constraints, ...), apart from the planted operators themselves
CREATE VIEW planted_users AS
SELECT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) AS user_object,
       pg_catalog.pg_describe_object(d.refclassid, d.refobjid, 0) AS planted
FROM pg_catalog.pg_depend d
WHERE d.classid OPERATOR(pg_catalog.<>) 'pg_catalog.pg_operator'::pg_catalog.regclass::pg_catalog.oid
  AND ((d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_operator'::pg_catalog.regclass::pg_catalog.oid
        AND d.refobjid OPERATOR(pg_catalog.=) ANY (ARRAY(
            SELECT o.oid FROM pg_catalog.pg_operator o
            WHERE pg_catalog.pg_get_userbyid(o.oprowner) OPERATOR(pg_catalog.=) 'cx_planter'::pg_catalog.name)))
    OR (d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid
        AND d.refobjid OPERATOR(pg_catalog.=) ANY (ARRAY(
            SELECT p.oid FROM pg_catalog.pg_proc p
            WHERE pg_catalog.pg_get_userbyid(p.proowner) OPERATOR(pg_catalog.=) 'cx_planter'::pg_catalog.name))));

-- 1. A fresh install (0.1.0 and every update script) succeeds and binds none
CREATE EXTENSION compressx;
SELECT * FROM planted_users ORDER BY 1, 2;

-- every view reads right, and the functions whose SQL runs on call (SQL,
-- PL/pgSQL, triggers, event triggers) call no planted operator
CREATE TABLE public.sx (id int4, body text) USING compressx;
SELECT compressx.set_column_codec('public.sx', 'body', 'lz4');
INSERT INTO public.sx
SELECT i, pg_catalog.repeat(pg_catalog.format('row %s of a compressx table; ', i), 60)
FROM pg_catalog.generate_series(1, 200) i;
CREATE TABLE public.hp (id int4, body text) USING heap;
INSERT INTO public.hp
SELECT i, pg_catalog.repeat(pg_catalog.format('row %s of a heap table; ', i), 200)
FROM pg_catalog.generate_series(1, 50) i;
SELECT table_name, column_name, codec, explicit FROM compressx.column_codecs
WHERE table_name OPERATOR(pg_catalog.=) 'sx'::pg_catalog.name ORDER BY 2;
SELECT table_name, column_name, configured_compression,
       ratio OPERATOR(pg_catalog.>) 2.0 AS compressed
FROM compressx.column_ratios
WHERE table_name OPERATOR(pg_catalog.=) ANY ('{sx,hp}'::pg_catalog.name[])
  AND column_name OPERATOR(pg_catalog.=) 'body'::pg_catalog.name
ORDER BY 1;
SELECT table_name, access_method,
       ratio OPERATOR(pg_catalog.>) 2.0 AS compressed,
       toast_bytes OPERATOR(pg_catalog.>) 0::pg_catalog.int8 AS has_toast
FROM compressx.table_ratios
WHERE table_name OPERATOR(pg_catalog.=) ANY ('{sx,hp}'::pg_catalog.name[])
ORDER BY 1;
SELECT column_name, "values", ratio OPERATOR(pg_catalog.>) 2.0 AS compressed, methods
FROM compressx.column_stats('public.sx') ORDER BY 1;
SELECT pg_catalog.count(*) AS readable FROM compressx.readable_tables
WHERE table_name OPERATOR(pg_catalog.=) ANY ('{sx,hp}'::pg_catalog.name[]);
SELECT pg_catalog.count(*) AS running FROM compressx.recompress_progress;
SELECT pg_catalog.count(*) AS running FROM compressx.recompress_online_progress;
SELECT pg_catalog.count(*) AS leftovers FROM compressx.recompress_online_leftovers;
SELECT pg_catalog.count(*) AS slots FROM compressx.check_logical();
SELECT column_name, values_rewritten FROM compressx.recompress_table('public.hp', 'lz4');
CALL compressx.recompress_online('public.sx', 'zstd', 3);
SELECT compressx.train_dictionary('public.sx', 'body', 4096, 200) OPERATOR(pg_catalog.>) 0 AS trained;
SELECT compressx.set_column_codec('public.sx', 'body', 'zstd', dictionary => 'auto');
SELECT table_name, column_name, state FROM compressx.auto_dictionaries;
SELECT pg_catalog.count(*) AS problems FROM compressx.verify('public.sx');
ALTER TABLE public.sx RENAME COLUMN body TO doc;
SELECT column_name, codec FROM compressx.column_codec_settings('public.sx');
SELECT compressx.reset_column_codec('public.sx');
SELECT pg_catalog.sum(pg_catalog.length(doc)) AS chars FROM public.sx;
DROP TABLE public.sx, public.hp;
SELECT pg_catalog.count(*) AS settings_left FROM compressx.column_settings;

-- 2. Version 0.1.0, then ALTER EXTENSION UPDATE through every script
DROP EXTENSION compressx;
CREATE EXTENSION compressx VERSION '0.1.0';
SELECT * FROM planted_users ORDER BY 1, 2;
CREATE TABLE public.sx (id int4, body text) USING compressx;
SELECT compressx.set_column_codec('public.sx', 'body', 'pglz');
INSERT INTO public.sx
SELECT i, pg_catalog.repeat(pg_catalog.format('row %s of a compressx table; ', i), 60)
FROM pg_catalog.generate_series(1, 200) i;
SELECT table_name, ratio OPERATOR(pg_catalog.>) 2.0 AS compressed
FROM compressx.table_ratios WHERE table_name OPERATOR(pg_catalog.=) 'sx'::pg_catalog.name;
SELECT table_name, configured_compression FROM compressx.column_ratios
WHERE table_name OPERATOR(pg_catalog.=) 'sx'::pg_catalog.name
  AND column_name OPERATOR(pg_catalog.=) 'body'::pg_catalog.name;
SELECT table_name, column_name, codec FROM compressx.column_codecs;
ALTER EXTENSION compressx UPDATE;
SELECT extversion OPERATOR(pg_catalog.=) (SELECT default_version FROM pg_catalog.pg_available_extensions
                                          WHERE name OPERATOR(pg_catalog.=) 'compressx'::pg_catalog.name)
       AS updated
FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'compressx'::pg_catalog.name;
SELECT * FROM planted_users ORDER BY 1, 2;
SELECT table_name, configured_compression, ratio OPERATOR(pg_catalog.>) 2.0 AS compressed
FROM compressx.column_ratios
WHERE table_name OPERATOR(pg_catalog.=) 'sx'::pg_catalog.name
  AND column_name OPERATOR(pg_catalog.=) 'body'::pg_catalog.name;
SELECT column_name, values_rewritten FROM compressx.recompress_table('public.sx', 'zstd');
SELECT table_name, column_name, codec FROM compressx.column_codecs;
DROP TABLE public.sx;

-- the planted objects go without CASCADE: nothing else uses them
DROP OWNED BY cx_planter;
\c :regress_db
DROP DATABASE cx_review_scripts;
DROP ROLE cx_planter;
