#!/usr/bin/env bash
# The main job on real data: PostgreSQL's HTML documentation (Debian's
# postgresql-doc package), one file per row.  Installs dependencies, builds
# and installs compressx, starts a throwaway cluster, and shows, each under
# a header that says what the output shows: per-column ratios and method mix
# of the heap table, what each codec makes of the same values, a plain
# VACUUM FULL (values stay as they were) next to recompress_table(docs, lz4),
# the ratios after it, the table moved to the compressx access method (zstd,
# compressx.default_codec: the COMPRESSION pglz that recompress_table left on
# the heap table is not kept, and a NOTICE says so), and zstd level 19.
set -eu
. "$(dirname "$0")/lib.sh"

cx_install_deps
cx_build_install

docdir=/usr/share/doc/postgresql-doc-$PG_MAJOR/html
work=$(cx_workdir demo)
cx_start_cluster "$work" "${CX_DEMO_PORT:-55433}"
trap 'cx_stop_cluster "$work"; rm -rf "$work"' EXIT

cx_as_user psql -X -q -v ON_ERROR_STOP=1 -d postgres -v docdir="$docdir" <<'SQL'
\pset footer off
\set stats 'SELECT column_name, "values", raw_bytes, stored_bytes, ratio, methods, external_values FROM compressx.column_stats(''docs'');'
SET default_toast_compression = pglz;
CREATE EXTENSION compressx;
CREATE TABLE docs (name text PRIMARY KEY, body text);
INSERT INTO docs
SELECT f, pg_read_file(:'docdir' || '/' || f)
FROM pg_ls_dir(:'docdir') f
WHERE f LIKE '%.html';
ANALYZE docs;

\echo
\echo '== PostgreSQL HTML documentation, one file per row (heap, default pglz)'
SELECT count(*) AS files, pg_size_pretty(sum(octet_length(body))) AS raw_size,
       pg_size_pretty(pg_total_relation_size('docs')) AS table_size
FROM docs;

\echo
\echo '== per-column ratios and method mix, before'
:stats

\echo
\echo '== what each codec makes of the same values (compressx.compress(), per value)'
SELECT c.codec, c.level,
       round(sum(octet_length(d.body))::numeric
             / sum(octet_length(compressx.compress(convert_to(d.body, 'UTF8'), c.codec, c.level)) - 12), 2) AS ratio
FROM docs d
CROSS JOIN (VALUES ('pglz', NULL::int), ('lz4', 1), ('lz4', 9), ('zstd', 1),
                   ('zstd', 3), ('zstd', 9), ('zstd', 19)) c(codec, level)
GROUP BY c.codec, c.level
ORDER BY ratio;

\echo
\echo '== VACUUM FULL (copies values as they are: methods and bytes unchanged) next to recompress_table(docs, lz4)'
SELECT clock_timestamp() AS t0 \gset
VACUUM FULL docs;
SELECT extract(epoch FROM clock_timestamp() - :'t0') * 1000 AS vacuum_full_ms \gset
SELECT column_name, stored_bytes, methods AS methods_after_vacuum_full
FROM compressx.column_stats('docs');
SELECT clock_timestamp() AS t0 \gset
CREATE TEMP TABLE rc AS SELECT * FROM recompress_table('docs', 'lz4');
SELECT extract(epoch FROM clock_timestamp() - :'t0') * 1000 AS recompress_ms \gset
SELECT round(:vacuum_full_ms) AS vacuum_full_ms, round(:recompress_ms) AS recompress_table_ms,
       round(:recompress_ms / :vacuum_full_ms, 2) AS time_ratio;
SELECT * FROM rc;

\echo
\echo '== per-column ratios and method mix, after recompress_table(docs, lz4)'
:stats

\echo
\echo '== compressx.table_ratios'
SELECT table_name, pg_size_pretty(heap_bytes) AS heap, pg_size_pretty(toast_bytes) AS toast,
       pg_size_pretty(index_bytes) AS indexes, values_sampled, ratio
FROM compressx.table_ratios WHERE table_name = 'docs';

\echo
\echo '== back to pglz: recompress_table(docs, pglz)'
SELECT column_name, values_rewritten, bytes_before, bytes_after
FROM recompress_table('docs', 'pglz');
SELECT column_name, ratio, methods FROM compressx.column_stats('docs');

\echo
\echo '== the compressx access method: ALTER TABLE docs SET ACCESS METHOD compressx (zstd by default; the NOTICE: the COMPRESSION pglz of the heap table is not kept)'
SELECT pg_size_pretty(pg_total_relation_size('docs')) AS size_as_heap_pglz \gset
ALTER TABLE docs SET ACCESS METHOD compressx;
:stats
SELECT :'size_as_heap_pglz' AS size_as_heap_pglz,
       pg_size_pretty(pg_total_relation_size('docs')) AS size_as_compressx_zstd;
\echo
\echo '== zstd level 19 on body: recompress_table(docs, zstd, 19)'
SELECT column_name, values_rewritten, bytes_before, bytes_after
FROM recompress_table('docs', 'zstd', 19, '{body}');
SELECT * FROM compressx.column_codecs;
SELECT pg_size_pretty(pg_total_relation_size('docs')) AS size_as_compressx_zstd_19;
SQL
