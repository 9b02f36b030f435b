#!/usr/bin/env bash
# Benchmark (not part of the pass/fail suite): PostgreSQL's HTML
# documentation, one file per row (copies x COPIES), stored as heap pglz,
# heap lz4 and compressx zstd levels 1, 3, 9, 19 and lz4.  Prints stored
# ratio and table size, and the median time (ms) of count(*), a scan of a
# narrow column and a read of every value, with ratios against heap pglz
# measured in the same run.  Usage: bash test/bench/am_docs.sh [COPIES] [RUNS]
set -eu
. "$(dirname "$0")/../lib.sh"
COPIES=${1:-4}
RUNS=${2:-15}

cx_install_deps
cx_build_install
docdir=/usr/share/doc/postgresql-doc-$PG_MAJOR/html
work=$(cx_workdir bench)
cx_start_cluster "$work" "${CX_BENCH_PORT:-55434}"
trap 'cx_stop_cluster "$work"; rm -rf "$work"' EXIT

cx_as_user psql -X -q -v ON_ERROR_STOP=1 -d postgres -v docdir="$docdir" \
    -v copies="$COPIES" -v runs="$RUNS" <<'SQL'
\pset footer off
SET bench.runs = :'runs';
CREATE EXTENSION compressx;
-- the source keeps values uncompressed, so every variant compresses them
CREATE TABLE src (id serial, name text, body text);
ALTER TABLE src ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO src (name, body)
SELECT c || '/' || f, pg_read_file(:'docdir' || '/' || f)
FROM pg_ls_dir(:'docdir') f, generate_series(1, :copies) c
WHERE f LIKE '%.html';

CREATE FUNCTION bench_median(q text, runs int) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; times numeric[] := '{}';
BEGIN
    EXECUTE q;                                   -- warm the cache
    FOR i IN 1..runs LOOP
        t0 := clock_timestamp();
        EXECUTE q;
        times := times || extract(epoch FROM clock_timestamp() - t0)::numeric * 1000;
    END LOOP;
    RETURN (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(times) x);
END $$;

CREATE TABLE variants (label text, am text, codec text, level int);
INSERT INTO variants VALUES
    ('heap pglz', 'heap', 'pglz', NULL), ('heap lz4', 'heap', 'lz4', NULL),
    ('compressx lz4', 'compressx', 'lz4', NULL),
    ('compressx zstd-1', 'compressx', 'zstd', 1), ('compressx zstd-3', 'compressx', 'zstd', 3),
    ('compressx zstd-9', 'compressx', 'zstd', 9), ('compressx zstd-19', 'compressx', 'zstd', 19);
CREATE TABLE results (label text, raw_bytes bigint, table_bytes bigint, load_ms numeric,
                      count_ms numeric, narrow_ms numeric, read_ms numeric);

DO $$
DECLARE v record; t0 timestamptz; load_ms numeric; tbl text;
BEGIN
    FOR v IN SELECT * FROM variants LOOP
        tbl := 'b_' || regexp_replace(v.label, '\W', '_', 'g');
        EXECUTE format('CREATE TABLE %I (id int, name text, body text) USING %s', tbl, v.am);
        IF v.am = 'heap' THEN
            EXECUTE format('ALTER TABLE %I ALTER COLUMN body SET COMPRESSION %s', tbl, v.codec);
            EXECUTE format('ALTER TABLE %I ALTER COLUMN name SET COMPRESSION %s', tbl, v.codec);
        ELSE
            PERFORM compressx.set_column_codec(tbl, 'body', v.codec, v.level);
        END IF;
        t0 := clock_timestamp();
        EXECUTE format('INSERT INTO %I SELECT * FROM src', tbl);
        load_ms := extract(epoch FROM clock_timestamp() - t0)::numeric * 1000;
        EXECUTE format('ANALYZE %I', tbl);
        EXECUTE format('INSERT INTO results SELECT %L, (SELECT sum(octet_length(body)) FROM src), '
                       'pg_total_relation_size(%L), %s, '
                       'bench_median(%L, %s), bench_median(%L, %s), bench_median(%L, %s)',
                       v.label, tbl, load_ms,
                       format('SELECT count(*) FROM %I', tbl), current_setting('bench.runs'),
                       format('SELECT sum(octet_length(name)) FROM %I', tbl), current_setting('bench.runs'),
                       format('SELECT sum(length(body)) FROM %I', tbl), current_setting('bench.runs'));
    END LOOP;
END $$;

\echo
\echo '== PostgreSQL HTML documentation, one file per row'
SELECT count(*) AS rows, pg_size_pretty(sum(octet_length(body))) AS raw FROM src;
\echo
\echo '== stored size and timings (median ms); x = ratio against heap pglz in this run'
SELECT r.label,
       round(r.raw_bytes::numeric / r.table_bytes, 2) AS stored_ratio,
       pg_size_pretty(r.table_bytes) AS table_size,
       round(r.load_ms) AS load_ms,
       round(r.count_ms, 2) AS count_ms, round(r.count_ms / b.count_ms, 2) AS count_x,
       round(r.narrow_ms, 2) AS narrow_ms, round(r.narrow_ms / b.narrow_ms, 2) AS narrow_x,
       round(r.read_ms, 2) AS read_all_ms, round(r.read_ms / b.read_ms, 2) AS read_x
FROM results r, results b
WHERE b.label = 'heap pglz'
ORDER BY r.table_bytes DESC;
SQL
