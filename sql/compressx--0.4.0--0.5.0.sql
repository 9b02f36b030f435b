/* compressx 0.4.0 -> 0.5.0 (ALTER EXTENSION compressx UPDATE) */
\echo Use "ALTER EXTENSION compressx UPDATE TO '0.5.0'" to load this file. \quit

-- Review round 3 (issue 27): privileges, lock order and resources.
-- Every operator and function this script binds is schema-qualified
-- (pg_catalog. or compressx.): a role with CREATE on public must not be
-- able to plant an object that this script picks up.

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
