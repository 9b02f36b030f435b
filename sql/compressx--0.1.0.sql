/* compressx 0.1.0: install script (frozen once released) */

\echo Use "CREATE EXTENSION compressx" to load this file. \quit

-- The schema belongs to the extension: DROP EXTENSION removes it, and a
-- pre-existing schema of that name makes CREATE EXTENSION fail.
CREATE SCHEMA compressx;
GRANT USAGE ON SCHEMA compressx TO PUBLIC;

-- Codecs -------------------------------------------------------------------

CREATE FUNCTION compressx.codecs(
    OUT name text, OUT id integer, OUT min_level integer,
    OUT max_level integer, OUT default_level integer,
    OUT library_version text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'compressx_codecs'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION compressx.codecs() IS
'one row per built-in codec: name, persisted id, level range and default, library version';

-- Not strict: the codec and level are checked even for a NULL datum.
CREATE FUNCTION compressx.compress(data bytea, codec text, level integer DEFAULT NULL)
RETURNS bytea
AS 'MODULE_PATHNAME', 'compressx_compress'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION compressx.compress(bytea, text, integer) IS
'compress data into a self-describing compressx frame';

CREATE FUNCTION compressx.decompress(data bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'compressx_decompress'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION compressx.decompress(bytea) IS
'decode a frame made by compressx.compress(); corrupt input raises SQLSTATE XX001';

-- Inspection ---------------------------------------------------------------

CREATE FUNCTION compressx.stored_summary(rel regclass, sample_rows integer)
RETURNS TABLE (column_name name, method text, "values" bigint,
               external_values bigint, raw_bytes bigint, stored_bytes bigint)
AS 'MODULE_PATHNAME', 'compressx_stored_summary'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.stored_summary(regclass, integer) IS
'per varlena column and stored method: values, out-of-line values, raw and stored bytes, read from stored forms without decoding';

CREATE FUNCTION compressx.ratio_sample_rows()
RETURNS integer
AS 'MODULE_PATHNAME', 'compressx_ratio_sample_rows'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION compressx.ratio_sample_rows() IS
'current value of compressx.ratio_sample_rows';

CREATE FUNCTION compressx.column_stats(rel regclass, sample_rows integer DEFAULT NULL)
RETURNS TABLE (column_name name, "values" bigint, raw_bytes bigint,
               stored_bytes bigint, ratio numeric, methods jsonb,
               external_values bigint)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT s.column_name,
           pg_catalog.sum(s."values")::bigint,
           pg_catalog.sum(s.raw_bytes)::bigint,
           pg_catalog.sum(s.stored_bytes)::bigint,
           CASE WHEN pg_catalog.sum(s.stored_bytes) OPERATOR(pg_catalog.>) 0::pg_catalog.numeric
                THEN pg_catalog.round(pg_catalog.sum(s.raw_bytes)::pg_catalog.numeric
                                      OPERATOR(pg_catalog./) pg_catalog.sum(s.stored_bytes), 2)
           END,
           COALESCE(pg_catalog.jsonb_object_agg(s.method, s."values")
                        FILTER (WHERE s.method IS NOT NULL),
                    '{}'::pg_catalog.jsonb),
           pg_catalog.sum(s.external_values)::bigint
    FROM compressx.stored_summary(rel, sample_rows) WITH ORDINALITY AS s
    GROUP BY s.column_name
    ORDER BY pg_catalog.min(s.ordinality)
$$;

COMMENT ON FUNCTION compressx.column_stats(regclass, integer) IS
'per varlena column: values, raw and stored bytes, ratio, method mix, out-of-line count; exact when sample_rows is NULL';

-- The tables the ratio views cover: heap and compressx tables and
-- materialized views the current user may read, outside the system schemas
-- and other sessions' temporary schemas.
CREATE VIEW compressx.readable_tables AS
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
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT');

GRANT SELECT ON compressx.readable_tables TO PUBLIC;

CREATE VIEW compressx.column_ratios AS
SELECT t.schema_name,
       t.table_name,
       s.column_name,
       t.access_method,
       CASE WHEN a.attcompression OPERATOR(pg_catalog.=) 'p'::pg_catalog."char" THEN 'pglz'
            WHEN a.attcompression OPERATOR(pg_catalog.=) 'l'::pg_catalog."char" THEN 'lz4'
            ELSE 'default (' OPERATOR(pg_catalog.||)
                 pg_catalog.current_setting('default_toast_compression')
                 OPERATOR(pg_catalog.||) ')'
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

GRANT SELECT ON compressx.column_ratios TO PUBLIC;

COMMENT ON VIEW compressx.column_ratios IS
'per varlena column of every table you may read: method mix, raw and stored bytes, ratio (sampled: compressx.ratio_sample_rows)';

CREATE VIEW compressx.table_ratios AS
SELECT t.schema_name,
       t.table_name,
       t.access_method,
       pg_catalog.pg_relation_size(t.relid) AS heap_bytes,
       COALESCE(pg_catalog.pg_total_relation_size(
                    CASE WHEN t.reltoastrelid OPERATOR(pg_catalog.=) 0::pg_catalog.oid
                         THEN NULL ELSE t.reltoastrelid END), 0) AS toast_bytes,
       pg_catalog.pg_indexes_size(t.relid) AS index_bytes,
       pg_catalog.pg_total_relation_size(t.relid) AS total_bytes,
       s.values_sampled,
       s.raw_bytes,
       s.stored_bytes,
       CASE WHEN s.stored_bytes OPERATOR(pg_catalog.>) 0::pg_catalog.int8
            THEN pg_catalog.round(s.raw_bytes::pg_catalog.numeric
                                  OPERATOR(pg_catalog./) s.stored_bytes::pg_catalog.numeric, 2)
       END AS ratio
FROM compressx.readable_tables t
CROSS JOIN LATERAL (
    SELECT pg_catalog.sum(cs."values")::bigint AS values_sampled,
           pg_catalog.sum(cs.raw_bytes)::bigint AS raw_bytes,
           pg_catalog.sum(cs.stored_bytes)::bigint AS stored_bytes
    FROM compressx.column_stats(t.relid, compressx.ratio_sample_rows()) cs
) s;

GRANT SELECT ON compressx.table_ratios TO PUBLIC;

COMMENT ON VIEW compressx.table_ratios IS
'per table you may read: heap, TOAST and index sizes, sampled raw and stored bytes of varlena values, ratio';

CREATE FUNCTION compressx.verify(rel regclass)
RETURNS TABLE (relation regclass, ctid tid, column_name name, problem text)
AS 'MODULE_PATHNAME', 'compressx_verify'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.verify(regclass) IS
'decode every stored value of a heap or compressx table; one row per value that cannot be read back';

CREATE FUNCTION compressx.advise(rel regclass, sample_rows integer DEFAULT 1000,
                                 min_compress_mb_s double precision DEFAULT 50)
RETURNS TABLE (column_name name, codec text, level integer, dictionary boolean,
               ratio numeric, compress_mb_s numeric, decompress_mb_s numeric,
               recommended boolean)
AS 'MODULE_PATHNAME', 'compressx_advise'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.advise(regclass, integer, double precision) IS
'per column: ratio and speed of each codec and level, and of zstd with a trained dictionary, on a sample of values; recommends the best ratio among those compressing at least min_compress_mb_s';

-- Recompression ------------------------------------------------------------

-- The one function outside schema compressx: in the extension's schema
-- (public by default), so the default search_path reaches it.
CREATE FUNCTION @extschema@.recompress_table(
    rel regclass, codec text DEFAULT NULL, level integer DEFAULT NULL,
    columns name[] DEFAULT NULL)
RETURNS TABLE (column_name name, values_rewritten bigint,
               bytes_before bigint, bytes_after bigint)
AS 'MODULE_PATHNAME', 'compressx_recompress_table'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.recompress_table(regclass, text, integer, name[]) IS
'rewrite existing values of a table with a codec; takes ACCESS EXCLUSIVE lock; owner only';

CREATE VIEW compressx.recompress_progress AS
SELECT p.pid,
       d.datname,
       p.relid,
       p.relid::pg_catalog.regclass AS relation,
       CASE WHEN p.param2 OPERATOR(pg_catalog.=) 0::pg_catalog.int8 THEN 'checking values'
            WHEN p.param2 OPERATOR(pg_catalog.=) 1::pg_catalog.int8 THEN 'rewriting'
            WHEN p.param2 OPERATOR(pg_catalog.=) 5::pg_catalog.int8 THEN 'swapping relation files'
            WHEN p.param2 OPERATOR(pg_catalog.=) 6::pg_catalog.int8 THEN 'rebuilding indexes'
            WHEN p.param2 OPERATOR(pg_catalog.=) 7::pg_catalog.int8 THEN 'final cleanup'
       END AS phase,
       p.param19 AS partition_number,
       p.param6 AS heap_blks_total,
       p.param7 AS heap_blks_scanned,
       p.param5 AS tuples_written,
       p.param18 AS values_rewritten,
       p.param8 AS indexes_rebuilt
FROM pg_catalog.pg_stat_get_progress_info('CLUSTER') p
LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid
WHERE p.param20 OPERATOR(pg_catalog.=) 1129861699::pg_catalog.int8;

GRANT SELECT ON compressx.recompress_progress TO PUBLIC;

COMMENT ON VIEW compressx.recompress_progress IS
'one row per running recompress_table(): phase, blocks and tuples copied, values rewritten';

-- The table access method -------------------------------------------------

CREATE FUNCTION compressx.tableam_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME', 'compressx_tableam_handler'
LANGUAGE C;

CREATE ACCESS METHOD compressx TYPE TABLE HANDLER compressx.tableam_handler;

COMMENT ON ACCESS METHOD compressx IS
'heap storage with per-column codecs (pglz, lz4, zstd with levels), decoded lazily';

CREATE FUNCTION compressx.decoded_values()
RETURNS bigint
AS 'MODULE_PATHNAME', 'compressx_decoded_values'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION compressx.decoded_values() IS
'number of compressx-format values this backend has decoded since it started';

-- Per-column settings.  Always heap: compressx reads it while writing rows.
CREATE TABLE compressx.column_settings (
    relid regclass NOT NULL,
    attname name NOT NULL,
    attnum smallint NOT NULL,
    codec text NOT NULL,
    level integer,
    min_size integer,
    dict_id integer,            -- zstd dictionary (compressx.dictionaries)
    PRIMARY KEY (relid, attname)
) USING heap;

COMMENT ON TABLE compressx.column_settings IS
'per-column codec settings; change them with compressx.set_column_codec() and compressx.reset_column_codec()';

SELECT pg_catalog.pg_extension_config_dump('compressx.column_settings', '');

-- zstd dictionaries.  Every value compressed with one names its dict_id, so
-- a row is never changed and stays until its table is dropped; ids are
-- never reused.  Always heap: compressx reads it while decoding.
CREATE SEQUENCE compressx.dictionaries_seq;
CREATE TABLE compressx.dictionaries (
    dict_id integer PRIMARY KEY DEFAULT pg_catalog.nextval('compressx.dictionaries_seq'),
    relid regclass NOT NULL,    -- the table it was trained on and serves
    attname name NOT NULL,      -- the column it was trained on (at the time)
    dict bytea NOT NULL,
    sample_values integer NOT NULL,
    sample_bytes bigint NOT NULL,
    created timestamptz NOT NULL DEFAULT pg_catalog.now()
) USING heap;
ALTER SEQUENCE compressx.dictionaries_seq OWNED BY compressx.dictionaries.dict_id;

COMMENT ON TABLE compressx.dictionaries IS
'zstd dictionaries trained by compressx.train_dictionary(); kept while their table exists';

SELECT pg_catalog.pg_extension_config_dump('compressx.dictionaries', '');
SELECT pg_catalog.pg_extension_config_dump('compressx.dictionaries_seq', '');

-- Rows loaded by pg_restore carry the column numbers of the dumped
-- database: take the number from the column's name, which is what counts.
CREATE FUNCTION compressx.settings_fix_attnum()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    SELECT a.attnum INTO NEW.attnum
    FROM pg_attribute a
    WHERE a.attrelid = NEW.relid AND a.attname = NEW.attname AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', NEW.attname, NEW.relid
            USING ERRCODE = 'undefined_column';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER settings_fix_attnum
BEFORE INSERT OR UPDATE OF relid, attname ON compressx.column_settings
FOR EACH ROW EXECUTE FUNCTION compressx.settings_fix_attnum();

CREATE FUNCTION compressx.settings_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'compressx_settings_changed'
LANGUAGE C;

CREATE TRIGGER settings_changed
AFTER INSERT OR UPDATE OR DELETE ON compressx.column_settings
FOR EACH ROW EXECUTE FUNCTION compressx.settings_changed();

CREATE FUNCTION compressx.set_column_codec(
    rel regclass, column_name name, codec text,
    level integer DEFAULT NULL, min_size integer DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'compressx_set_column_codec'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.set_column_codec(regclass, name, text, integer, integer) IS
'set the codec, level and minimum size of a column of a compressx table; applies to new values (VACUUM FULL re-encodes old ones); owner only';

CREATE FUNCTION compressx.reset_column_codec(rel regclass, column_name name DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'compressx_reset_column_codec'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.reset_column_codec(regclass, name) IS
'return a column (NULL: every column) to the defaults compressx.default_codec, default_level and min_size; owner only';

CREATE FUNCTION compressx.column_codec_settings(rel regclass)
RETURNS TABLE (column_name name, codec text, level integer, min_size integer,
               explicit boolean, dictionary integer)
AS 'MODULE_PATHNAME', 'compressx_column_codec_settings'
LANGUAGE C STABLE STRICT;

CREATE VIEW compressx.column_codecs AS
SELECT n.nspname AS schema_name,
       c.relname AS table_name,
       s.column_name,
       am.amname AS access_method,
       s.codec,
       s.level,
       s.min_size,
       s.explicit,
       s.dictionary
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) c.relam
CROSS JOIN LATERAL compressx.column_codec_settings(c.oid) s
WHERE c.relkind OPERATOR(pg_catalog.=) ANY ('{r,m}'::pg_catalog."char"[])
  AND (am.amname OPERATOR(pg_catalog.=) 'compressx'::pg_catalog.name
       OR EXISTS (SELECT 1 FROM compressx.column_settings cs
                  WHERE cs.relid::pg_catalog.oid OPERATOR(pg_catalog.=) c.oid))
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT');

GRANT SELECT ON compressx.column_codecs TO PUBLIC;

COMMENT ON VIEW compressx.column_codecs IS
'codec, level and minimum size in effect for each variable-length column of compressx tables you may read (explicit: set with set_column_codec; dictionary: zstd dictionary of new values)';

CREATE FUNCTION compressx.train_dictionary(rel regclass, column_name name,
    dict_size integer DEFAULT 16384, sample_rows integer DEFAULT 10000)
RETURNS integer
AS 'MODULE_PATHNAME', 'compressx_train_dictionary'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.train_dictionary(regclass, name, integer, integer) IS
'train a zstd dictionary on a sample of a column of a compressx table and compress its new values with it (VACUUM FULL or recompress_table re-encodes old ones); returns the dictionary id; owner only';

-- Settings follow column renames and go with dropped tables and columns.
-- Any role's DDL fires these; they write the settings table as its owner.
CREATE FUNCTION compressx.on_ddl_end()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'compressx_on_ddl_end'
LANGUAGE C;

CREATE FUNCTION compressx.on_sql_drop()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'compressx_on_sql_drop'
LANGUAGE C;

CREATE EVENT TRIGGER compressx_ddl_end ON ddl_command_end
    WHEN TAG IN ('ALTER TABLE', 'ALTER MATERIALIZED VIEW')
    EXECUTE FUNCTION compressx.on_ddl_end();

CREATE EVENT TRIGGER compressx_sql_drop ON sql_drop
    EXECUTE FUNCTION compressx.on_sql_drop();

-- Publications: logical decoding reads WAL, never the access method, so it
-- cannot decode compressx's zstd values.  Refuse every DDL that would
-- leave a compressx table published: directly, through FOR ALL TABLES or
-- FOR TABLES IN SCHEMA, or as a partition of a published table.
CREATE FUNCTION compressx.check_publications()
RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    pub name;
    tbl regclass;
BEGIN
    SELECT p.pubname, t.relid::regclass INTO pub, tbl
    FROM pg_publication p
    CROSS JOIN LATERAL pg_get_publication_tables(p.pubname::text) g
    CROSS JOIN LATERAL (SELECT g.relid
                        UNION
                        SELECT pt.relid FROM pg_partition_tree(g.relid) pt) t
    JOIN pg_class c ON c.oid = t.relid
    JOIN pg_am am ON am.oid = c.relam
    WHERE am.amname = 'compressx'
    ORDER BY p.pubname, t.relid::regclass::text
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'compressx table % cannot be part of publication "%"', tbl, pub
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Logical replication decodes WAL, not the table access method, so it cannot read values compressx stores in its own format.',
                  HINT = format('Leave the table out of the publication, or store it as heap: ALTER TABLE %s SET ACCESS METHOD heap.', tbl);
    END IF;
END
$$;

CREATE EVENT TRIGGER compressx_publications ON ddl_command_end
    WHEN TAG IN ('CREATE PUBLICATION', 'ALTER PUBLICATION', 'CREATE TABLE',
                 'CREATE TABLE AS', 'SELECT INTO', 'ALTER TABLE')
    EXECUTE FUNCTION compressx.check_publications();
