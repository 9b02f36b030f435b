/* compressx 0.1.0 -> 0.2.0 (ALTER EXTENSION compressx UPDATE) */
\echo Use "ALTER EXTENSION compressx UPDATE TO '0.2.0'" to load this file. \quit

-- How one stored value is kept, which pg_column_compression() and
-- pg_column_size() cannot say for compressx tables (their values reach
-- functions decoded).
CREATE FUNCTION compressx.value_storage(rel regclass, row_ctid tid, column_name name)
RETURNS TABLE (method text, stored_bytes bigint, raw_bytes bigint, external boolean)
AS 'MODULE_PATHNAME', 'compressx_value_storage'
LANGUAGE C STABLE STRICT;

COMMENT ON FUNCTION compressx.value_storage(regclass, tid, name) IS
'how one value is stored: method, stored and raw bytes, out of line or not (rel: the table or partition holding the row; SELECT privilege)';

-- configured_compression of compressx columns: the codec compressx applies
-- (it said "default (pglz)", heap's default, before)
CREATE OR REPLACE VIEW compressx.column_ratios AS
SELECT t.schema_name,
       t.table_name,
       s.column_name,
       t.access_method,
       CASE WHEN t.access_method OPERATOR(pg_catalog.=) 'compressx'::pg_catalog.name
            THEN (SELECT cc.codec OPERATOR(pg_catalog.||)
                         COALESCE(' level ' OPERATOR(pg_catalog.||) cc.level::pg_catalog.text, '')
                         OPERATOR(pg_catalog.||)
                         CASE WHEN cc.dictionary IS NOT NULL THEN ' with dictionary' ELSE '' END
                  FROM compressx.column_codec_settings(t.relid) cc
                  WHERE cc.column_name OPERATOR(pg_catalog.=) s.column_name)
            ELSE CASE a.attcompression
                      WHEN 'p' THEN 'pglz'
                      WHEN 'l' THEN 'lz4'
                      ELSE 'default (' OPERATOR(pg_catalog.||)
                           pg_catalog.current_setting('default_toast_compression')
                           OPERATOR(pg_catalog.||) ')'
                 END
       END AS configured_compression,
       s."values" AS values_sampled,
       s.methods,
       s.external_values,
       s.raw_bytes,
       s.stored_bytes,
       s.ratio
FROM compressx.readable_tables t
CROSS JOIN LATERAL compressx.column_stats(t.relid, compressx.ratio_sample_rows()) s
JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) t.relid
     AND a.attname OPERATOR(pg_catalog.=) s.column_name;

-- pg_dump dumps the settings rows of existing columns of existing tables
-- only: a row left behind by a drop (made where neither the event trigger
-- nor the library's hook ran) would name its relation by OID, which the
-- restored database may give to another table.  pg_dump runs this with an
-- empty search_path, on the table named compressx.column_settings.
SELECT pg_catalog.pg_extension_config_dump('compressx.column_settings',
    'WHERE EXISTS (SELECT FROM pg_catalog.pg_attribute a'
    ' JOIN pg_catalog.pg_class c ON c.oid = a.attrelid'
    ' WHERE a.attrelid = column_settings.relid AND a.attname = column_settings.attname'
    ' AND NOT a.attisdropped AND c.relpersistence <> ''t'')');

-- Every backend caches digested dictionaries; a changed or deleted row
-- must empty those caches (deleting rows sends no invalidation itself).
CREATE FUNCTION compressx.dictionaries_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'compressx_dictionaries_changed'
LANGUAGE C;

CREATE TRIGGER dictionaries_changed
AFTER UPDATE OR DELETE OR TRUNCATE ON compressx.dictionaries
FOR EACH STATEMENT EXECUTE FUNCTION compressx.dictionaries_changed();

-- Rows loaded by pg_restore carry the column numbers of the dumped
-- database: take the number from the column's name, which is what counts.
-- A row inserted for a relation or column that does not exist is skipped
-- with a warning rather than failing: pg_restore loads every row of this
-- table in one COPY, and one such row (in a dump made by a version that
-- dumped rows of dropped tables) would lose every table's settings.
-- Temporary tables cannot have settings (their rows could outlive them).
CREATE OR REPLACE FUNCTION compressx.settings_fix_attnum()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    persistence "char";
BEGIN
    SELECT c.relpersistence INTO persistence FROM pg_class c WHERE c.oid = NEW.relid;
    IF NOT FOUND AND TG_OP = 'INSERT' THEN
        RAISE WARNING 'skipping compressx settings of column "%" of relation with OID %, which does not exist',
                      NEW.attname, NEW.relid::oid
            USING ERRCODE = 'undefined_table',
                  DETAIL = 'Such a row is left behind by a table dropped where neither compressx''s event trigger nor its library ran.';
        RETURN NULL;
    ELSIF persistence = 't' THEN
        RAISE EXCEPTION 'temporary table % cannot have compressx column settings', NEW.relid
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'A temporary table can be dropped without its settings being deleted.';
    END IF;
    SELECT a.attnum INTO NEW.attnum
    FROM pg_attribute a
    WHERE a.attrelid = NEW.relid AND a.attname = NEW.attname AND NOT a.attisdropped;
    IF NOT FOUND AND TG_OP = 'INSERT' THEN
        RAISE WARNING 'skipping compressx settings of column "%" of relation %, which does not exist',
                      NEW.attname, NEW.relid
            USING ERRCODE = 'undefined_column',
                  DETAIL = 'Such a row is left behind by a column dropped or renamed where compressx''s event triggers did not run.';
        RETURN NULL;
    ELSIF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', NEW.attname, NEW.relid
            USING ERRCODE = 'undefined_column';
    END IF;
    RETURN NEW;
END
$$;
