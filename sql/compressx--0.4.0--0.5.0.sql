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
-- Item 15 (issue 27): recompress_table and recompress_online report their
-- progress under a command of compressx's own, which no view of core
-- selects (pg_stat_progress_cluster showed them as CLUSTER with a null
-- command); compressx's progress views read it with progress_info().
CREATE FUNCTION compressx.progress_info(
    OUT pid integer, OUT datid oid, OUT relid oid,
    OUT param1 bigint, OUT param2 bigint, OUT param3 bigint, OUT param4 bigint,
    OUT param5 bigint, OUT param6 bigint, OUT param7 bigint, OUT param8 bigint,
    OUT param9 bigint, OUT param10 bigint, OUT param11 bigint, OUT param12 bigint,
    OUT param13 bigint, OUT param14 bigint, OUT param15 bigint, OUT param16 bigint,
    OUT param17 bigint, OUT param18 bigint, OUT param19 bigint, OUT param20 bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'compressx_progress_info'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.progress_info() IS
'progress of the compressx rewrites running in the backends whose statistics the caller may read, as pg_stat_get_progress_info() reports a command of core''s';

CREATE OR REPLACE VIEW compressx.recompress_progress AS
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
FROM compressx.progress_info() p
LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid
WHERE p.param20 OPERATOR(pg_catalog.=) 1129861699::pg_catalog.int8;

CREATE OR REPLACE VIEW compressx.recompress_online_progress AS
SELECT p.pid,
       d.datname,
       p.relid,
       p.relid::pg_catalog.regclass AS relation,
       CASE WHEN p.param2 OPERATOR(pg_catalog.=) 1::pg_catalog.int8 THEN 'setting target'
            WHEN p.param2 OPERATOR(pg_catalog.=) 2::pg_catalog.int8 THEN 'rewriting'
            WHEN p.param2 OPERATOR(pg_catalog.=) 3::pg_catalog.int8 THEN 'retrying held rows'
            WHEN p.param2 OPERATOR(pg_catalog.=) 4::pg_catalog.int8 THEN 'waiting for writers'
            WHEN p.param2 OPERATOR(pg_catalog.=) 5::pg_catalog.int8 THEN 'waiting for old row versions'
            WHEN p.param2 OPERATOR(pg_catalog.=) 6::pg_catalog.int8 THEN 'changing access method'
            ELSE 'starting'
       END AS phase,
       CASE WHEN p.param13 OPERATOR(pg_catalog.<>) 0::pg_catalog.int8
            THEN p.param13::pg_catalog.oid::pg_catalog.regclass END AS current_table,
       p.param14 AS tables_done,
       p.param15 AS tables_total,
       p.param3 AS pass,
       p.param4 AS heap_blks_total,
       p.param5 AS heap_blks_scanned,
       p.param6 AS rows_total_estimate,
       p.param7 AS rows_checked,
       p.param8 AS rows_rewritten,
       p.param9 AS bytes_before,
       p.param10 AS bytes_after,
       p.param11 AS retries,
       p.param12 AS batches
FROM compressx.progress_info() p
LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid
WHERE p.param20 OPERATOR(pg_catalog.=) 1129860942::pg_catalog.int8;
-- Items 2, 3, 10, 12 (dictionary cache bound, worker lock, snapshots,
-- worker leaving a dropped database): each session's cache of digested
-- dictionaries is bounded by compressx.dictionary_cache_memory; this
-- reports it.
CREATE FUNCTION compressx.dictionary_cache(OUT entries bigint, OUT bytes bigint,
                                           OUT max_bytes bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'compressx_dictionary_cache'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION compressx.dictionary_cache() IS
'this session''s cache of digested dictionaries: dictionaries held, the bytes they take (zstd and lz4 digests included), and its bound (compressx.dictionary_cache_memory)';
-- Item 11 (Citus): where Citus cannot send the compression settings of a
-- Citus table inside the coordinator's transaction, they go at commit, each
-- worker in a transaction of its own, and a failure after that leaves the
-- workers with settings the coordinator did not commit.  A check that
-- compares every worker with the coordinator, and a repair.

CREATE FUNCTION compressx.citus_settings_digest(rel regclass)
RETURNS text
AS 'MODULE_PATHNAME', 'compressx_citus_settings_digest'
LANGUAGE C STABLE STRICT;

COMMENT ON FUNCTION compressx.citus_settings_digest(regclass) IS
'used by citus_settings_check: a digest of the compression settings of rel on this node and of their dictionaries'' contents; owner only';

CREATE FUNCTION compressx.citus_settings_check()
RETURNS TABLE (relation regclass, node_name text, node_port integer, problem text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    names text[];
    digests text[];
    w record;
    theirs jsonb;
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RAISE EXCEPTION 'compressx.citus_settings_check() runs only in a database with Citus'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_dist_local_group g
                   WHERE g.groupid OPERATOR(pg_catalog.=) 0) THEN
        RAISE EXCEPTION 'compressx.citus_settings_check() runs on the coordinator'
            USING ERRCODE = 'feature_not_supported';
    END IF;
    -- the Citus tables of the caller's roles, as this transaction sees them
    SELECT pg_catalog.array_agg(pg_catalog.format('%I.%I', n.nspname, c.relname) ORDER BY c.oid),
           pg_catalog.array_agg(compressx.citus_settings_digest(c.oid::pg_catalog.regclass) ORDER BY c.oid)
      INTO names, digests
      FROM pg_catalog.pg_dist_partition p
      JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) p.logicalrelid
      JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
     WHERE pg_catalog.pg_has_role(c.relowner, 'USAGE');
    IF names IS NULL THEN
        RETURN;
    END IF;
    FOR w IN SELECT * FROM pg_catalog.run_command_on_workers(pg_catalog.format(
            'SELECT pg_catalog.jsonb_object_agg(n, CASE WHEN pg_catalog.to_regclass(n) IS NOT NULL '
            'THEN compressx.citus_settings_digest(n::pg_catalog.regclass) END) '
            'FROM pg_catalog.unnest(%L::pg_catalog.text[]) n', names))
    LOOP
        IF NOT w.success THEN
            RETURN QUERY SELECT NULL::pg_catalog.regclass, w.nodename, w.nodeport,
                'could not be checked: ' OPERATOR(pg_catalog.||) w.result;
            CONTINUE;
        END IF;
        theirs := w.result::jsonb;
        RETURN QUERY SELECT x.name::pg_catalog.regclass, w.nodename, w.nodeport,
                CASE WHEN (theirs OPERATOR(pg_catalog.->>) x.name) IS NULL
                     THEN 'the table is missing on this node'
                     ELSE 'the compression settings differ from the coordinator''s' END
            FROM ROWS FROM (pg_catalog.unnest(names), pg_catalog.unnest(digests)) AS x(name, digest)
           WHERE (theirs OPERATOR(pg_catalog.->>) x.name) IS DISTINCT FROM x.digest;
    END LOOP;
END
$$;

COMMENT ON FUNCTION compressx.citus_settings_check() IS
'on the coordinator: the workers whose compression settings or dictionaries of a Citus table (of the caller''s roles) differ from the coordinator''s, and the workers that could not be checked';

CREATE FUNCTION compressx.citus_settings_repair()
RETURNS SETOF regclass
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r pg_catalog.regclass;
BEGIN
    FOR r IN SELECT DISTINCT c.relation FROM compressx.citus_settings_check() c
             WHERE c.relation IS NOT NULL ORDER BY 1
    LOOP
        PERFORM compressx.citus_push(r);
        RETURN NEXT r;
    END LOOP;
END
$$;

COMMENT ON FUNCTION compressx.citus_settings_repair() IS
'on the coordinator: send the compression settings and dictionaries of every Citus table citus_settings_check reports to the other nodes again (citus_push); returns those tables';
-- Item 14: a DROP TABLE must not stop a lagging logical slot.  A dictionary
-- of a dropped table (or a retired automatic one) that a replication slot
-- may still need for decoding is kept, with relid 0 and the dropping
-- transaction in "dropped", until every slot's catalog_xmin has passed that
-- transaction (src/catalog/dict_dropped.c); such rows are not dumped.
ALTER TABLE compressx.dictionaries ADD COLUMN dropped pg_catalog.xid8;
COMMENT ON COLUMN compressx.dictionaries.dropped IS
'the transaction that dropped the dictionary''s table, or retired the automatic dictionary (relid is then 0): kept while a replication slot may still decode values that use it, then deleted by the next DROP TABLE, automatic-dictionary check or compressx.purge_dropped_dictionaries()';
SELECT pg_catalog.pg_extension_config_dump('compressx.dictionaries', 'WHERE dropped IS NULL');

CREATE FUNCTION compressx.purge_dropped_dictionaries()
RETURNS integer
AS 'MODULE_PATHNAME', 'compressx_purge_dropped_dictionaries'
LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION compressx.purge_dropped_dictionaries() FROM PUBLIC;
COMMENT ON FUNCTION compressx.purge_dropped_dictionaries() IS
'delete the dictionaries of dropped tables that no replication slot may still need; returns how many (DROP TABLE does this too)';
-- Issue 28 A1, A5: a column's COMPRESSION on compressx tables.  A statement
-- that chooses one (CREATE TABLE, ALTER COLUMN .. SET COMPRESSION, ADD
-- COLUMN .. COMPRESSION) says when it makes a column of a compressx table
-- stored with something other than compressx.default_codec, and a
-- COMPRESSION where compressx has a setting does not apply
-- (src/catalog/attcompression.c).
CREATE FUNCTION compressx.on_compression_ddl()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'compressx_on_compression_ddl'
LANGUAGE C;

CREATE EVENT TRIGGER compressx_compression_ddl ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE', 'ALTER MATERIALIZED VIEW')
    EXECUTE FUNCTION compressx.on_compression_ddl();

-- The codec and the stored size of one value, for any table (heap or
-- compressx): what pg_column_compression() and pg_column_size() say on
-- heap, also for compressx's zstd values, which reach functions decoded.
CREATE FUNCTION compressx.stored_codec(rel regclass, row_ctid tid, column_name name)
RETURNS text
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT s.method FROM compressx.value_storage(rel, row_ctid, column_name) s
$$;

COMMENT ON FUNCTION compressx.stored_codec(regclass, tid, name) IS
'how the value of column_name in row row_ctid of rel is stored: none, pglz, lz4, zstd or lz4+dict (NULL: a NULL value or no such row); pass tableoid and ctid: SELECT compressx.stored_codec(tableoid, ctid, ''body'') FROM docs (SELECT privilege)';

CREATE FUNCTION compressx.stored_size(rel regclass, row_ctid tid, column_name name)
RETURNS bigint
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT s.stored_bytes FROM compressx.value_storage(rel, row_ctid, column_name) s
$$;

COMMENT ON FUNCTION compressx.stored_size(regclass, tid, name) IS
'the bytes the value of column_name in row row_ctid of rel takes as stored (pg_column_size() on heap; compressx''s zstd values reach pg_column_size() decoded), NULL for a NULL value or no such row (SELECT privilege)';
-- Item A8 (issue 28): recompress_online ends each table with a compaction
-- (rows and TOAST values at the end of the table move into the room the
-- rewrite freed, so that a plain VACUUM truncates): its phase.
CREATE OR REPLACE VIEW compressx.recompress_online_progress AS
SELECT p.pid,
       d.datname,
       p.relid,
       p.relid::pg_catalog.regclass AS relation,
       CASE WHEN p.param2 OPERATOR(pg_catalog.=) 1::pg_catalog.int8 THEN 'setting target'
            WHEN p.param2 OPERATOR(pg_catalog.=) 2::pg_catalog.int8 THEN 'rewriting'
            WHEN p.param2 OPERATOR(pg_catalog.=) 3::pg_catalog.int8 THEN 'retrying held rows'
            WHEN p.param2 OPERATOR(pg_catalog.=) 4::pg_catalog.int8 THEN 'waiting for writers'
            WHEN p.param2 OPERATOR(pg_catalog.=) 5::pg_catalog.int8 THEN 'waiting for old row versions'
            WHEN p.param2 OPERATOR(pg_catalog.=) 6::pg_catalog.int8 THEN 'changing access method'
            WHEN p.param2 OPERATOR(pg_catalog.=) 7::pg_catalog.int8 THEN 'compacting'
            ELSE 'starting'
       END AS phase,
       CASE WHEN p.param13 OPERATOR(pg_catalog.<>) 0::pg_catalog.int8
            THEN p.param13::pg_catalog.oid::pg_catalog.regclass END AS current_table,
       p.param14 AS tables_done,
       p.param15 AS tables_total,
       p.param3 AS pass,
       p.param4 AS heap_blks_total,
       p.param5 AS heap_blks_scanned,
       p.param6 AS rows_total_estimate,
       p.param7 AS rows_checked,
       p.param8 AS rows_rewritten,
       p.param9 AS bytes_before,
       p.param10 AS bytes_after,
       p.param11 AS retries,
       p.param12 AS batches
FROM compressx.progress_info() p
LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid
WHERE p.param20 OPERATOR(pg_catalog.=) 1129860942::pg_catalog.int8;

-- Issue 28 A4: every restore (pg_restore -j too, and pg_dump -t) stores
-- each column as its settings say.  A column's settings and its current
-- dictionary are mirrored in a security label of provider compressx, which
-- pg_dump writes right after the table, before any data; restoring the
-- label (SECURITY LABEL FOR compressx) makes the settings again
-- (src/catalog/label.c).  The rows of column_settings and dictionaries are
-- no longer dumped: the labels carry all a restore needs (every value is
-- encoded afresh from its plain form, so only each column's current
-- dictionary).  Dumps taken by 0.4.0 still carry rows, and restore as
-- before.
CREATE FUNCTION compressx.settings_labels()
RETURNS trigger
AS 'MODULE_PATHNAME', 'compressx_settings_labels'
LANGUAGE C;

CREATE TRIGGER settings_labels
AFTER INSERT OR UPDATE OR DELETE ON compressx.column_settings
FOR EACH ROW EXECUTE FUNCTION compressx.settings_labels();

-- rows of a dump taken before 0.5.0 may name a dictionary loaded after them
CREATE TRIGGER settings_labels
AFTER INSERT ON compressx.dictionaries
FOR EACH ROW EXECUTE FUNCTION compressx.settings_labels();

SELECT pg_catalog.pg_extension_config_dump('compressx.column_settings', 'WHERE false');
SELECT pg_catalog.pg_extension_config_dump('compressx.dictionaries', 'WHERE false');

-- SECURITY LABEL FOR compressx needs the library loaded in the session (core
-- looks the provider up): this event trigger loads it first, for sessions
-- that have not used compressx yet (a restored heap table's pending setting)
CREATE FUNCTION compressx.on_security_label()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'compressx_on_security_label'
LANGUAGE C;

CREATE EVENT TRIGGER compressx_security_label ON ddl_command_start
    WHEN TAG IN ('SECURITY LABEL')
    EXECUTE FUNCTION compressx.on_security_label();

-- (the settings made before this release get their labels at the end of
-- this script, once the labels' dictionary keys exist)

-- Issue 33 A1: no dictionary byte in public view.  A label (pg_seclabel,
-- readable by every role) names a column's dictionary by a random key
-- only; the bytes travel in the data section of a dump, as rows of
-- compressx.dictionary_dump, which only the extension's owner (a
-- superuser) reads.  A restore applies the label first (the column's
-- codec, level, ..., and "dictionary K expected"), then the rows; the
-- dictionary is attached when its row arrives, and the automatic-dictionary
-- worker re-encodes the values loaded before it (src/catalog/dict_transfer.c,
-- src/dictionaries/restored.c).
ALTER TABLE compressx.dictionaries ADD COLUMN dict_key uuid;
UPDATE compressx.dictionaries SET dict_key = pg_catalog.gen_random_uuid();
ALTER TABLE compressx.dictionaries
    ALTER COLUMN dict_key SET DEFAULT pg_catalog.gen_random_uuid(),
    ALTER COLUMN dict_key SET NOT NULL;
COMMENT ON COLUMN compressx.dictionaries.dict_key IS
'a random key (not derived from the dictionary or the rows) by which a column''s security label names its dictionary';

ALTER TABLE compressx.column_settings ADD COLUMN restored_dict uuid;
ALTER TABLE compressx.column_settings ADD COLUMN restored_at timestamptz;
COMMENT ON COLUMN compressx.column_settings.restored_dict IS
'set by a restored label naming a dictionary: the key of the dictionary the column waits for (dict_id NULL) or whose values the automatic-dictionary worker still has to re-encode (dict_id set); NULL otherwise';

-- A reference to a table that reads a name no longer present as 0, so that
-- a dump's rows restore even when the table they name was left out (pg_dump
-- -T): compressx.dictionary_dump.rel.  Binary-compatible with oid.
CREATE TYPE compressx.table_ref;
CREATE FUNCTION compressx.table_ref_in(cstring) RETURNS compressx.table_ref
    AS 'MODULE_PATHNAME', 'compressx_table_ref_in' LANGUAGE C STABLE STRICT;
CREATE FUNCTION compressx.table_ref_out(compressx.table_ref) RETURNS cstring
    AS 'MODULE_PATHNAME', 'compressx_table_ref_out' LANGUAGE C STABLE STRICT;
CREATE TYPE compressx.table_ref (
    INPUT = compressx.table_ref_in,
    OUTPUT = compressx.table_ref_out,
    LIKE = pg_catalog.oid
);
CREATE CAST (compressx.table_ref AS pg_catalog.oid) WITHOUT FUNCTION;
CREATE CAST (pg_catalog.oid AS compressx.table_ref) WITHOUT FUNCTION;

-- What a dump carries of the dictionaries: each one's key, table and bytes
-- (a copy of compressx.dictionaries' row, kept by the trigger
-- dictionaries_dump); dumped for the dictionaries columns use now.  No
-- grant: only the extension's owner reads it, and only superusers dump it.
CREATE TABLE compressx.dictionary_dump (
    dict_key uuid PRIMARY KEY,
    rel compressx.table_ref NOT NULL,
    dict bytea NOT NULL,
    sample_values integer NOT NULL,
    sample_bytes bigint NOT NULL,
    auto boolean NOT NULL,
    trained_ratio double precision
) USING heap;
REVOKE ALL ON compressx.dictionary_dump FROM PUBLIC;
COMMENT ON TABLE compressx.dictionary_dump IS
'the dictionaries a dump carries, in its data section (readable by the extension''s owner only); a restored row is attached to the restored columns whose label names its key';
SELECT pg_catalog.pg_extension_config_dump('compressx.dictionary_dump',
    'WHERE dict_key IN (SELECT d.dict_key FROM compressx.dictionaries d JOIN compressx.column_settings s ON s.dict_id OPERATOR(pg_catalog.=) d.dict_id WHERE d.dropped IS NULL)');
CREATE TRIGGER skip_replicated_rows BEFORE INSERT OR UPDATE OR DELETE
    ON compressx.dictionary_dump FOR EACH ROW
    EXECUTE FUNCTION compressx.skip_replicated_rows();
ALTER TABLE compressx.dictionary_dump ENABLE REPLICA TRIGGER skip_replicated_rows;

INSERT INTO compressx.dictionary_dump
SELECT d.dict_key, d.relid::pg_catalog.oid::compressx.table_ref, d.dict, d.sample_values,
       d.sample_bytes, d.auto, d.trained_ratio
FROM compressx.dictionaries d WHERE d.dropped IS NULL;

CREATE FUNCTION compressx.dictionary_dump_sync()
RETURNS trigger
AS 'MODULE_PATHNAME', 'compressx_dictionary_dump_sync'
LANGUAGE C;
-- every dictionary made gets its copy; a restored copy gets its dictionary
CREATE TRIGGER dictionaries_dump
AFTER INSERT ON compressx.dictionaries
FOR EACH ROW EXECUTE FUNCTION compressx.dictionary_dump_sync();
CREATE TRIGGER dictionary_dump_restored
AFTER INSERT ON compressx.dictionary_dump
FOR EACH ROW EXECUTE FUNCTION compressx.dictionary_dump_sync();

-- the settings made before this release get their labels
UPDATE compressx.column_settings SET attnum = attnum;

-- ---------------------------------------------------------------------------
-- issue 33, item 15 (Debezium): check_logical() says how a stuck pgoutput or
-- test_decoding slot resumes where it stopped (the shadow plugins), and that
-- a slot of another plugin cannot be repaired.
CREATE OR REPLACE FUNCTION compressx.check_logical()
RETURNS TABLE (slot_name name, plugin name, problem text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH path AS (
        SELECT pg_catalog.string_to_array(pg_catalog.current_setting('dynamic_library_path'), ':') AS p
    )
    SELECT s.slot_name, s.plugin,
           CASE WHEN s.plugin OPERATOR(pg_catalog.=) ANY ('{pgoutput,test_decoding}'::pg_catalog.name[])
           THEN pg_catalog.format('plugin %s cannot decode compressx''s zstd values, so the slot stops at the first one it must send; '
                  'to keep this slot (its consumer resumes at the change it stopped at), put $libdir/compressx_decoders '
                  'before $libdir on dynamic_library_path and reload the configuration', s.plugin)
           ELSE pg_catalog.format('plugin %s cannot decode compressx''s zstd values, so the slot stops at the first one it must send, '
                  'and compressx has no wrapper for it; its consumer needs a new slot: plugin pgoutput with '
                  '$libdir/compressx_decoders before $libdir on dynamic_library_path, compressx (pgoutput''s protocol) '
                  'or compressx_test_decoding', s.plugin)
           END
    FROM pg_catalog.pg_replication_slots s, path
    WHERE s.slot_type OPERATOR(pg_catalog.=) 'logical'::pg_catalog.text
      AND s.database OPERATOR(pg_catalog.=) pg_catalog.current_database()
      AND NOT s.plugin OPERATOR(pg_catalog.=) ANY ('{compressx,compressx_test_decoding}'::pg_catalog.name[])
      AND NOT (s.plugin OPERATOR(pg_catalog.=) ANY ('{pgoutput,test_decoding}'::pg_catalog.name[])
               AND COALESCE(pg_catalog.array_position(path.p, '$libdir/compressx_decoders'), 2147483647)
                   OPERATOR(pg_catalog.<) COALESCE(pg_catalog.array_position(path.p, '$libdir'), 2147483647))
    ORDER BY 1
$$;
-- end of issue 33, item 15
-- ---------------------------------------------------------------------
-- issue 33 A3: automatic dictionaries follow who may read their table.
-- A column whose table its owner may no longer read in full (privileges
-- revoked, row-level security forced, another owner) loses its automatic
-- dictionary at the table's next check.  These commands start the worker
-- for that check when they leave such a column (a restore's last pass
-- grants, revokes and enables row-level security after the rows are in).
CREATE FUNCTION compressx.on_readability_change()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'compressx_on_readability_change'
LANGUAGE C;

CREATE EVENT TRIGGER compressx_readability ON ddl_command_end
    WHEN TAG IN ('GRANT', 'REVOKE', 'ALTER TABLE', 'ALTER MATERIALIZED VIEW')
    EXECUTE FUNCTION compressx.on_readability_change();
-- end of issue 33 A3
-- ---------------------------------------------------------------------
-- issue 34, item 2: a rewrite with no codec argument applies each column's
-- setting as it is now, level and dictionary included.  The stored form of
-- a value records its codec (and dictionary) but not its level, so each
-- change of a column's codec, level or dictionary takes a new generation
-- (from a sequence: numbers are never reused, whoever's table), and a
-- rewrite that covered every value of the column records the generation it
-- applied in compressx.settings_applied (src/catalog/generation.c).  A
-- rewrite re-encodes the compressed values of a column whose applied
-- generation is behind; column_codecs says which columns are.
-- Who moves the counters: the generation only this trigger (every path
-- that changes a setting writes column_settings, as its owner, after the
-- table owner's check); settings_applied only compressx's rewrites, as the
-- settings table's owner.  Neither table grants anything to PUBLIC.
-- Neither holds anything derived from row data (numbers only).
CREATE SEQUENCE compressx.settings_generation_seq;
ALTER TABLE compressx.column_settings ADD COLUMN generation bigint NOT NULL DEFAULT 0;
COMMENT ON COLUMN compressx.column_settings.generation IS
'a number taken from compressx.settings_generation_seq whenever the column''s codec, level or dictionary changes (0: unchanged since before 0.5.0); a rewrite records the generation it applied in compressx.settings_applied';
-- before 0.5.0 a rewrite re-encoded every value of a column with a
-- dictionary: such columns stay pending until their next rewrite
UPDATE compressx.column_settings
SET generation = pg_catalog.nextval('compressx.settings_generation_seq'::pg_catalog.regclass)
WHERE dict_id IS NOT NULL;

CREATE TABLE compressx.settings_applied (
    relid oid NOT NULL,
    attnum smallint NOT NULL,
    generation bigint NOT NULL,     -- the column_settings.generation applied
    PRIMARY KEY (relid, attnum)
) USING heap;
REVOKE ALL ON compressx.settings_applied FROM PUBLIC;
-- rows name this server's tables by OID: a subscriber of a publication FOR
-- ALL TABLES keeps its own, as for column_settings
CREATE TRIGGER skip_replicated_rows BEFORE INSERT OR UPDATE OR DELETE
    ON compressx.settings_applied FOR EACH ROW
    EXECUTE FUNCTION compressx.skip_replicated_rows();
ALTER TABLE compressx.settings_applied ENABLE REPLICA TRIGGER skip_replicated_rows;
COMMENT ON TABLE compressx.settings_applied IS
'the setting generation the last rewrite that covered every value of a column applied (recompress_table, a completed recompress_online, VACUUM FULL, CLUSTER, ALTER TABLE .. SET ACCESS METHOD compressx); not dumped: a restore encodes every value afresh';

-- Whether a table stores no row a rewrite would have to re-encode, for
-- the trigger below.  The size alone could be read while another session
-- inserts with the old setting (set_column_codec's SHARE UPDATE EXCLUSIVE
-- lets writers in): it answers true only when it gets a SHARE lock on the
-- table without waiting (no writer is in progress; none starts until this
-- transaction ends, which keeps the lock) and the table has no block.
-- Partitioned parents store nothing.  Not for PUBLIC: a caller could hold a
-- SHARE lock on any table; the trigger runs as the settings' owner.
CREATE FUNCTION compressx.stores_no_row(relid pg_catalog.oid)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'compressx_stores_no_row'
LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION compressx.stores_no_row(pg_catalog.oid) FROM PUBLIC;

CREATE FUNCTION compressx.settings_generation()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP OPERATOR(pg_catalog.=) 'INSERT'
       OR (NEW.codec, NEW.level, NEW.dict_id) IS DISTINCT FROM (OLD.codec, OLD.level, OLD.dict_id) THEN
        NEW.generation := pg_catalog.nextval('compressx.settings_generation_seq'::pg_catalog.regclass);
        -- a table with no stored row (new, truncated, a partitioned parent,
        -- a restore's table before its data) and no writer in progress:
        -- nothing to rewrite
        IF compressx.stores_no_row(NEW.relid::pg_catalog.oid) THEN
            INSERT INTO compressx.settings_applied AS a (relid, attnum, generation)
            VALUES (NEW.relid::pg_catalog.oid, NEW.attnum, NEW.generation)
            ON CONFLICT (relid, attnum) DO UPDATE SET generation = EXCLUDED.generation;
        END IF;
    ELSE
        NEW.generation := OLD.generation;
    END IF;
    RETURN NEW;
END
$$;

-- after settings_fix_attnum (BEFORE triggers fire in name order)
CREATE TRIGGER settings_generation
BEFORE INSERT OR UPDATE ON compressx.column_settings
FOR EACH ROW EXECUTE FUNCTION compressx.settings_generation();

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
       CASE WHEN am.amname OPERATOR(pg_catalog.<>) 'compressx'::pg_catalog.name
            THEN 'pending: applies after SET ACCESS METHOD compressx'
            WHEN EXISTS (SELECT FROM compressx.column_settings cs
                         LEFT JOIN compressx.settings_applied sa
                           ON sa.relid OPERATOR(pg_catalog.=) cs.relid::pg_catalog.oid
                          AND sa.attnum OPERATOR(pg_catalog.=) cs.attnum
                         WHERE cs.relid::pg_catalog.oid OPERATOR(pg_catalog.=) c.oid
                           AND cs.attname OPERATOR(pg_catalog.=) s.column_name
                           AND cs.generation OPERATOR(pg_catalog.>) COALESCE(sa.generation, 0::pg_catalog.int8))
            THEN 'setting changed since the last rewrite: run CALL compressx.recompress_online('
                 OPERATOR(pg_catalog.||) pg_catalog.quote_literal(pg_catalog.format('%I.%I', n.nspname, c.relname))
                 OPERATOR(pg_catalog.||) ')'
            ELSE 'in effect'
       END COLLATE pg_catalog."default" AS status
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
'codec, level and minimum size of each variable-length column of compressx tables you may read, and of tables with compressx settings (status: in effect; setting changed since the last rewrite, which a rewrite applies; or pending until the table uses the compressx access method)';
-- end of issue 34, item 2
-- issue 34, item 1: advise gives the same recommendation on the same
-- data, however busy the machine.  Speeds are compared with each other
-- (each candidate timed in CPU time beside zstd 3, several rounds, the
-- median), never with a figure in MB/s unless min_compress_mb_s is given
-- (now NULL by default); the sample is drawn from a fixed seed; the caller
-- says what matters (priority); every row says why it won or lost.
DROP FUNCTION compressx.advise(regclass, integer, double precision);
CREATE FUNCTION compressx.advise(rel regclass, sample_rows integer DEFAULT 1000,
                                 min_compress_mb_s double precision DEFAULT NULL,
                                 priority text DEFAULT 'balance')
RETURNS TABLE (column_name name, codec text, level integer, dictionary boolean,
               ratio numeric, compress_mb_s numeric, decompress_mb_s numeric,
               recommended boolean, note text, apply text,
               compress_relative numeric, decompress_relative numeric, reason text)
AS 'MODULE_PATHNAME', 'compressx_advise'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION compressx.advise(regclass, integer, double precision, text) IS
'every codec (and "none": as stored) on a sample of each column, with ratio, speeds (also relative to zstd 3) and one recommendation per column for the priority (size, speed or balance), each row with its reason (SELECT privilege)';

DROP FUNCTION compressx.citus_advise(regclass, integer, double precision);
-- One placement of each shard: the mean of the shards' figures, and the
-- recommendation made again on them by advise's rule (note and apply stay
-- empty: the statements are the coordinator's business; reason says which
-- rule chose the recommended row).
CREATE FUNCTION compressx.citus_advise(rel regclass, sample_rows integer,
                                       min_compress_mb_s double precision,
                                       priority text)
RETURNS TABLE (column_name name, codec text, level integer, dictionary boolean,
               ratio numeric, compress_mb_s numeric, decompress_mb_s numeric,
               recommended boolean, note text, apply text,
               compress_relative numeric, decompress_relative numeric, reason text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    results jsonb;
BEGIN
    PERFORM compressx.citus_fan_out_only('citus_advise');
    results := compressx.citus_on_shards(rel, format('compressx.advise(%%s, %%s, %L::float8, %L)',
                                                     min_compress_mb_s, priority), sample_rows);
    RETURN QUERY
    WITH m AS (
        SELECT x.column_name, x.codec, x.level, x.dictionary,
               round(avg(x.ratio), 2) AS ratio,
               round(avg(x.compress_mb_s), 1) AS compress_mb_s,
               round(avg(x.decompress_mb_s), 1) AS decompress_mb_s,
               round(avg(x.compress_relative), 2) AS compress_relative,
               round(avg(x.decompress_relative), 2) AS decompress_relative,
               a.attnum
        FROM jsonb_to_recordset(results) AS x(column_name name, codec text, level integer,
                                              dictionary boolean, ratio numeric,
                                              compress_mb_s numeric, decompress_mb_s numeric,
                                              compress_relative numeric, decompress_relative numeric)
        LEFT JOIN pg_attribute a ON a.attrelid = rel AND a.attname = x.column_name
        GROUP BY x.column_name, x.codec, x.level, x.dictionary, a.attnum),
    fastest AS (
        -- the fastest decompressor among the codecs storing the values 2% smaller
        SELECT m.column_name, max(m.decompress_relative) AS top
        FROM m JOIN m n ON n.column_name = m.column_name AND n.codec = 'none'
        WHERE m.ratio >= n.ratio * 1.02
        GROUP BY m.column_name),
    best AS (
        SELECT DISTINCT ON (m.column_name) m.column_name, m.codec, m.level, m.dictionary, m.ratio
        FROM m LEFT JOIN fastest f ON f.column_name = m.column_name
        WHERE m.compress_relative IS NOT NULL
          AND (min_compress_mb_s IS NULL OR m.compress_mb_s >= min_compress_mb_s)
          AND CASE priority
                WHEN 'balance' THEN m.compress_relative >= 0.5 AND m.decompress_relative >= 0.5
                WHEN 'speed' THEN m.decompress_relative >= 0.5 * f.top
                ELSE true END
        ORDER BY m.column_name, m.ratio DESC, m.compress_relative DESC),
    fallback AS (
        -- min_compress_mb_s given and no codec saving 2% meets it: the fastest
        SELECT DISTINCT ON (m.column_name) m.column_name, m.codec, m.level, m.dictionary, m.ratio
        FROM m JOIN m n ON n.column_name = m.column_name AND n.codec = 'none'
        WHERE min_compress_mb_s IS NOT NULL AND m.compress_relative IS NOT NULL
          AND m.ratio >= n.ratio * 1.02
          AND NOT EXISTS (SELECT FROM m o WHERE o.column_name = m.column_name
                          AND o.ratio >= n.ratio * 1.02 AND o.compress_mb_s >= min_compress_mb_s)
        ORDER BY m.column_name, m.compress_relative DESC),
    chosen AS (
        -- "none" (leave as is) where no codec is admitted or saves 2%
        SELECT n.column_name,
               CASE WHEN b.ratio >= n.ratio * 1.02 THEN b.codec ELSE 'none' END AS codec,
               CASE WHEN b.ratio >= n.ratio * 1.02 THEN b.level END AS level,
               CASE WHEN b.ratio >= n.ratio * 1.02 THEN b.dictionary ELSE false END AS dictionary
        FROM m n LEFT JOIN (SELECT * FROM best UNION ALL
                            SELECT * FROM fallback f WHERE NOT EXISTS
                                (SELECT FROM best b2 WHERE b2.column_name = f.column_name)) b
                  ON b.column_name = n.column_name
        WHERE n.codec = 'none')
    SELECT m.column_name, m.codec, m.level, m.dictionary, m.ratio, m.compress_mb_s,
           m.decompress_mb_s, c.column_name IS NOT NULL, NULL::text, NULL::text,
           m.compress_relative, m.decompress_relative,
           CASE WHEN c.column_name IS NOT NULL
                THEN format('priority %s, by the mean of the shards'' figures', priority) END
    FROM m LEFT JOIN chosen c ON c.column_name = m.column_name AND c.codec = m.codec
                             AND c.level IS NOT DISTINCT FROM m.level AND c.dictionary = m.dictionary
    ORDER BY m.attnum, m.codec, m.level, m.dictionary;
END
$$;
-- end of issue 34, item 1

-- Issue 34, item 5: progress of every compressx operation that can run
-- for long, in one view: the rewrite of ALTER TABLE .. SET ACCESS METHOD
-- compressx (and of any ALTER TABLE or REFRESH MATERIALIZED VIEW that
-- rewrites into a compressx relation), advise, train_dictionary, checks
-- of automatic dictionaries, recompress_table and recompress_online (their
-- own views keep their details).  CLUSTER and VACUUM FULL of a compressx
-- table report in core's pg_stat_progress_cluster.  Rows of the backends
-- whose statistics the caller may read (compressx.progress_info()).
CREATE VIEW compressx.progress AS
SELECT p.pid,
       d.datname,
       p.relid,
       p.relid::pg_catalog.regclass AS relation,
       CASE WHEN p.param1 OPERATOR(pg_catalog.=) 1::pg_catalog.int8 THEN 'table rewrite'
            WHEN p.param1 OPERATOR(pg_catalog.=) 2::pg_catalog.int8 THEN 'advise'
            WHEN p.param1 OPERATOR(pg_catalog.=) 3::pg_catalog.int8 THEN 'train_dictionary'
            WHEN p.param1 OPERATOR(pg_catalog.=) 4::pg_catalog.int8 THEN 'automatic dictionary check' END AS operation,
       CASE WHEN p.param2 OPERATOR(pg_catalog.=) 1::pg_catalog.int8 THEN 'sampling rows'
            WHEN p.param2 OPERATOR(pg_catalog.=) 2::pg_catalog.int8 THEN 'reading values'
            WHEN p.param2 OPERATOR(pg_catalog.=) 3::pg_catalog.int8 THEN 'trying codecs'
            WHEN p.param2 OPERATOR(pg_catalog.=) 4::pg_catalog.int8 THEN 'writing rows'
            WHEN p.param2 OPERATOR(pg_catalog.=) 5::pg_catalog.int8 THEN 'swapping relation files'
            WHEN p.param2 OPERATOR(pg_catalog.=) 6::pg_catalog.int8 THEN 'rebuilding indexes'
            WHEN p.param2 OPERATOR(pg_catalog.=) 7::pg_catalog.int8 THEN 'final cleanup'
            WHEN p.param2 OPERATOR(pg_catalog.=) 8::pg_catalog.int8 THEN 'training a dictionary'
            WHEN p.param2 OPERATOR(pg_catalog.=) 9::pg_catalog.int8 THEN 'measuring'
            ELSE 'starting' END AS phase,
       CASE WHEN p.param2 OPERATOR(pg_catalog.=) 1::pg_catalog.int8 THEN 'rows'
            WHEN p.param2 OPERATOR(pg_catalog.=) 2::pg_catalog.int8 THEN 'values'
            WHEN p.param2 OPERATOR(pg_catalog.=) 3::pg_catalog.int8 THEN 'candidates'
            WHEN p.param2 OPERATOR(pg_catalog.=) 4::pg_catalog.int8 THEN 'rows'
            WHEN p.param2 OPERATOR(pg_catalog.=) 9::pg_catalog.int8 THEN 'values' END AS unit,
       CASE WHEN p.param2 OPERATOR(pg_catalog.=) ANY ('{1,2,3,4,9}'::pg_catalog.int8[])
             AND p.param3 OPERATOR(pg_catalog.>=) 0::pg_catalog.int8
            THEN p.param3 END AS done,
       CASE WHEN p.param2 OPERATOR(pg_catalog.=) ANY ('{1,2,3,4,9}'::pg_catalog.int8[])
             AND p.param4 OPERATOR(pg_catalog.>) 0::pg_catalog.int8
            THEN p.param4 END AS total
FROM compressx.progress_info() p
LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid
WHERE p.param20 OPERATOR(pg_catalog.=) 1129860944::pg_catalog.int8
UNION ALL
SELECT r.pid, r.datname, r.relid, r.relation, 'recompress_table'::pg_catalog.text, r.phase,
       'blocks'::pg_catalog.text, r.heap_blks_scanned,
       CASE WHEN r.heap_blks_total OPERATOR(pg_catalog.>) 0::pg_catalog.int8 THEN r.heap_blks_total END
FROM compressx.recompress_progress r
UNION ALL
SELECT o.pid, o.datname, o.relid, o.relation, 'recompress_online'::pg_catalog.text, o.phase,
       'rows'::pg_catalog.text, o.rows_checked,
       CASE WHEN o.rows_total_estimate OPERATOR(pg_catalog.>) 0::pg_catalog.int8 THEN o.rows_total_estimate END
FROM compressx.recompress_online_progress o;

GRANT SELECT ON compressx.progress TO PUBLIC;

COMMENT ON VIEW compressx.progress IS
'one row per compressx operation running in a backend whose statistics you may read: table rewrite (ALTER TABLE into compressx), advise, train_dictionary, automatic dictionary check, recompress_table, recompress_online; phase, unit, done, total (NULL: not counted or not known)';
