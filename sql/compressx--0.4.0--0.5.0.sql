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
