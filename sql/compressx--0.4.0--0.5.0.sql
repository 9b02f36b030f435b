/* compressx 0.4.0 -> 0.5.0 (ALTER EXTENSION compressx UPDATE) */
\echo Use "ALTER EXTENSION compressx UPDATE TO '0.5.0'" to load this file. \quit

-- Review round 3 (issue 27): privileges, lock order and resources.
-- Every operator and function this script binds is schema-qualified
-- (pg_catalog. or compressx.): a role with CREATE on public must not be
-- able to plant an object that this script picks up.

-- Issue 28 A7: compressx's own tables (online_runs, column_settings,
-- dictionaries, auto_dictionary_state: members of an extension) are not
-- user data; the ratio views leave out every extension's member tables.
CREATE OR REPLACE VIEW compressx.readable_tables AS
SELECT c.oid AS relid,
       n.nspname AS schema_name,
       c.relname AS table_name,
       am.amname AS access_method,
       c.reltoastrelid
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) c.relam
WHERE c.relkind OPERATOR(pg_catalog.=) ANY ('{r,m}'::pg_catalog."char"[])
  AND am.amname OPERATOR(pg_catalog.=) ANY ('{heap,compressx}'::pg_catalog.name[])
  AND NOT n.nspname OPERATOR(pg_catalog.=) ANY ('{pg_catalog,information_schema,pg_toast}'::pg_catalog.name[])
  AND (c.relpersistence OPERATOR(pg_catalog.<>) 't'::pg_catalog."char"
       OR c.relnamespace OPERATOR(pg_catalog.=) pg_catalog.pg_my_temp_schema())
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
  AND NOT pg_catalog.row_security_active(c.oid)
  AND NOT EXISTS (
      SELECT FROM pg_catalog.pg_depend d
      WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
        AND d.objid OPERATOR(pg_catalog.=) c.oid
        AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
        AND d.deptype OPERATOR(pg_catalog.=) 'e'::pg_catalog."char");

-- stored_summary samples as column_stats does when sample_rows is left out
-- (NULL: every row)
CREATE OR REPLACE FUNCTION compressx.stored_summary(rel regclass, sample_rows integer DEFAULT NULL)
RETURNS TABLE (column_name name, method text, "values" bigint,
               external_values bigint, raw_bytes bigint, stored_bytes bigint)
AS 'MODULE_PATHNAME', 'compressx_stored_summary'
LANGUAGE C VOLATILE;

-- Issue 28 A2: a setting of a table that another access method stores
-- (heap) is pending: column_codecs says so instead of showing it in effect.
CREATE OR REPLACE VIEW compressx.column_codecs AS
SELECT n.nspname AS schema_name,
       c.relname AS table_name,
       s.column_name,
       am.amname AS access_method,
       s.codec,
       s.level,
       s.min_size,
       s.explicit,
       s.dictionary,
       CASE WHEN am.amname OPERATOR(pg_catalog.=) 'compressx'::pg_catalog.name
            THEN 'in effect'
            ELSE 'pending: applies after SET ACCESS METHOD compressx'
       END AS status
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) c.relam
CROSS JOIN LATERAL compressx.column_codec_settings(c.oid) s
WHERE c.relkind OPERATOR(pg_catalog.=) ANY ('{r,m}'::pg_catalog."char"[])
  AND (am.amname OPERATOR(pg_catalog.=) 'compressx'::pg_catalog.name
       OR EXISTS (SELECT 1 FROM compressx.column_settings cs
                  WHERE cs.relid::pg_catalog.oid OPERATOR(pg_catalog.=) c.oid))
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT');

COMMENT ON VIEW compressx.column_codecs IS
'codec, level and minimum size of each variable-length column of compressx tables you may read, and of tables with compressx settings (status: in effect, or pending until the table uses the compressx access method)';

-- Issue 28 A9: DROP EXTENSION compressx (without CASCADE) is refused while
-- tables use the access method, naming them and the call that moves each
-- to heap online (src/sql/uninstall.c); core's own refusal suggests CASCADE,
-- which drops the tables.
CREATE FUNCTION compressx.on_drop_extension()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'compressx_on_drop_extension'
LANGUAGE C;

CREATE EVENT TRIGGER compressx_drop_extension ON ddl_command_start
    WHEN TAG IN ('DROP EXTENSION')
    EXECUTE FUNCTION compressx.on_drop_extension();

-- Issue 28 A6: advise counts bytes as column_stats does, shows the values
-- as they are (codec "none") and recommends leaving a column as is when no
-- codec saves space, times small samples over repeated passes, and gives
-- the recommended row's reason (note) and the statements that apply it
-- (apply).  New result columns: drop and create (and the Citus wrapper,
-- whose rows the coordinator returns as advise's).
DROP FUNCTION compressx.advise(regclass, integer, double precision);
CREATE FUNCTION compressx.advise(rel regclass, sample_rows integer DEFAULT 1000,
                                 min_compress_mb_s double precision DEFAULT 50)
RETURNS TABLE (column_name name, codec text, level integer, dictionary boolean,
               ratio numeric, compress_mb_s numeric, decompress_mb_s numeric,
               recommended boolean, note text, apply text)
AS 'MODULE_PATHNAME', 'compressx_advise'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.advise(regclass, integer, double precision) IS
'every codec (and "none": as stored) on a sample of each column, with ratio, speeds and one recommendation per column, with its reason and the statements that apply it (SELECT privilege)';

DROP FUNCTION compressx.citus_advise(regclass, integer, double precision);
-- One placement of each shard: the mean of the shards' figures, and the
-- recommendation made again on them (the statements to apply it are the
-- coordinator's business: note and apply stay empty).
CREATE FUNCTION compressx.citus_advise(rel regclass, sample_rows integer,
                                       min_compress_mb_s double precision)
RETURNS TABLE (column_name name, codec text, level integer, dictionary boolean,
               ratio numeric, compress_mb_s numeric, decompress_mb_s numeric,
               recommended boolean, note text, apply text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    results jsonb;
BEGIN
    PERFORM compressx.citus_fan_out_only('citus_advise');
    results := compressx.citus_on_shards(rel, format('compressx.advise(%%s, %%s, %L)', min_compress_mb_s), sample_rows);
    RETURN QUERY
    WITH m AS (
        SELECT x.column_name, x.codec, x.level, x.dictionary,
               round(avg(x.ratio), 2) AS ratio,
               round(avg(x.compress_mb_s), 1) AS compress_mb_s,
               round(avg(x.decompress_mb_s), 1) AS decompress_mb_s,
               a.attnum
        FROM jsonb_to_recordset(results) AS x(column_name name, codec text, level integer,
                                              dictionary boolean, ratio numeric,
                                              compress_mb_s numeric, decompress_mb_s numeric)
        LEFT JOIN pg_attribute a ON a.attrelid = rel AND a.attname = x.column_name
        GROUP BY x.column_name, x.codec, x.level, x.dictionary, a.attnum),
    best AS (
        SELECT DISTINCT ON (m.column_name) m.column_name, m.codec, m.level, m.dictionary
        FROM m WHERE m.compress_mb_s >= min_compress_mb_s
        ORDER BY m.column_name, m.ratio DESC, m.compress_mb_s DESC)
    SELECT m.column_name, m.codec, m.level, m.dictionary, m.ratio, m.compress_mb_s,
           m.decompress_mb_s,
           EXISTS (SELECT FROM best b WHERE b.column_name = m.column_name AND b.codec = m.codec
                   AND b.level IS NOT DISTINCT FROM m.level AND b.dictionary = m.dictionary),
           NULL::text, NULL::text
    FROM m
    ORDER BY m.attnum, m.codec, m.level, m.dictionary;
END
$$;
