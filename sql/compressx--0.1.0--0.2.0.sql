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
