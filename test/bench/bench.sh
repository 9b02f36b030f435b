#!/usr/bin/env bash
# Benchmark of compressx against heap (not part of the pass/fail suite).
#
#   bash test/bench/bench.sh [DOC_COPIES] [JSON_ROWS] [RUNS]
#
# Table size is pg_table_size (heap + TOAST, no indexes).
# Data, from Debian packages: PostgreSQL's HTML documentation (one file per
# row, DOC_COPIES copies, default 4) and small JSON documents, one per
# package of Debian's package index (test/bench/make_json.py; JSON_ROWS of
# them, default 0: all, about 63 000 of 500 B to 1 kB).  Variants: heap
# pglz, heap lz4, compressx lz4 and zstd 1, 3, 9, 19, and zstd 1 and 3 with
# a dictionary (compressx.train_dictionary() on a 10 000-row sample of the
# loaded table, which is then emptied and loaded again with it).  Measured
# in one run: table size (heap + TOAST), COPY load time, count(*), a
# narrow-column scan, reading every value, 200 point lookups by primary key,
# an UPDATE of a small column, VACUUM FULL and recompress_table (heap pglz
# table to lz4; medians of 3), and raw codec throughput on the same values
# (compressx.advise).  Timings are medians of RUNS (default 9) of the ratio
# against heap pglz measured pair by pair in each run.
# Writes bench-results/results.md, results.csv and PNG charts, and prints
# the targets as met or not.
#
#   CX_BENCH_PGBIN=DIR  run on the PostgreSQL installation whose programs
#                       are in DIR (e.g. /opt/compressx-cache/pg18/bin, see
#                       test/compile_check.sh) instead of Debian's 15:
#                       compressx is built in a private copy of the tree and
#                       installed there; results go to bench-results/pgNN/.
#                       The data are the same (15's documentation).
set -eu
. "$(dirname "$0")/../lib.sh"
# bench.sh --large [OPTIONS]: the benchmark on data larger than memory and
# the memory test (test/bench/large_bench.sh, which describes its options)
if [ "${1:-}" = --large ]; then
    shift
    exec bash "$(dirname "$0")/large_bench.sh" "$@"
fi
DOC_COPIES=${1:-4}
JSON_ROWS=${2:-0}
RUNS=${3:-9}
out="$cx_root/bench-results"

cx_install_deps
if [ -n "${CX_BENCH_PGBIN:-}" ]; then
    cx_use_pg "$CX_BENCH_PGBIN"
    out="$out/pg$("$PGBIN/pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')"
    cx_build_install_copy
else
    cx_build_install
fi
mkdir -p "$out"
echo "server: $("$PGBIN/postgres" --version)"
work=$(cx_workdir bench)
# the package index comes with apt's lists
ls /var/lib/apt/lists/*_dists_bookworm_main_binary-*_Packages* >/dev/null 2>&1 ||
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
python3 "$cx_root/test/bench/make_json.py" "$JSON_ROWS" > "$work/json.txt"
chmod 644 "$work/json.txt"
cx_start_cluster "$work" "${CX_BENCH_PORT:-55434}"
trap 'cx_stop_cluster "$work"; rm -rf "$work"' EXIT
psql_b() { cx_as_user psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }

psql_b -v docdir="/usr/share/doc/postgresql-doc-15/html" -v jsonfile="$work/json.txt" \
    -v doc_copies="$DOC_COPIES" -v docs_out="$work/docs.copy" -v json_out="$work/json.copy" <<'SQL'
CREATE EXTENSION compressx;
-- sources keep values uncompressed, so every variant compresses them
CREATE TABLE src_docs (id serial PRIMARY KEY, name text, body text, n integer DEFAULT 0);
ALTER TABLE src_docs ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO src_docs (name, body)
SELECT c || '/' || f, pg_read_file(:'docdir' || '/' || f)
FROM pg_ls_dir(:'docdir') f, generate_series(1, :doc_copies) c WHERE f LIKE '%.html';
CREATE TABLE json_lines (doc text);
COPY json_lines FROM :'jsonfile';
CREATE TABLE src_json (id serial PRIMARY KEY, name text, body text, n integer DEFAULT 0);
ALTER TABLE src_json ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO src_json (name, body) SELECT doc::jsonb->>'Package', doc FROM json_lines;
COPY src_docs TO :'docs_out';
COPY src_json TO :'json_out';
CREATE TABLE variants (label text, am text, codec text, level int, ord int, dict boolean DEFAULT false);
INSERT INTO variants VALUES
    ('heap pglz', 'heap', 'pglz', NULL, 1, false), ('heap lz4', 'heap', 'lz4', NULL, 2, false),
    ('compressx lz4', 'compressx', 'lz4', NULL, 3, false),
    ('compressx zstd-1', 'compressx', 'zstd', 1, 4, false), ('compressx zstd-3', 'compressx', 'zstd', 3, 5, false),
    ('compressx zstd-9', 'compressx', 'zstd', 9, 6, false), ('compressx zstd-19', 'compressx', 'zstd', 19, 7, false),
    ('compressx zstd-1 dict', 'compressx', 'zstd', 1, 8, true),
    ('compressx zstd-3 dict', 'compressx', 'zstd', 3, 9, true);
CREATE TABLE tables (dataset text, label text, tbl text, raw_bytes bigint, table_bytes bigint, load_ms numeric, value_ratio numeric);
CREATE TABLE timings (dataset text, label text, what text, run int, ms numeric);
CREATE FUNCTION tname(dataset text, label text) RETURNS text LANGUAGE sql AS
$$ SELECT 'b_' || dataset || '_' || regexp_replace(label, '\W', '_', 'g') $$;
SQL

# create and load (COPY) every variant, timed
for ds in docs json; do
    psql_b -At -c "SELECT label, am, codec, coalesce(level::text, ''), dict FROM variants ORDER BY ord" |
    while IFS='|' read -r label am codec level dict; do
        t=$(psql_b -At -c "SELECT tname('$ds', '$label')")
        psql_b -c "CREATE TABLE $t (id int PRIMARY KEY, name text, body text, n integer) USING $am"
        if [ "$am" = heap ]; then
            psql_b -c "ALTER TABLE $t ALTER COLUMN body SET COMPRESSION $codec"
        else
            psql_b -c "SELECT compressx.set_column_codec('$t', 'body', '$codec', ${level:-NULL})" >/dev/null
        fi
        if [ "$dict" = t ]; then
            # train on a sample of the data, then load it again with the dictionary
            psql_b -c "COPY $t FROM '$work/$ds.copy'" \
                   -c "SELECT compressx.train_dictionary('$t', 'body')" -c "TRUNCATE $t" >/dev/null
        fi
        psql_b -c "COPY $t FROM '$work/$ds.copy'"
        psql_b -c "INSERT INTO tables SELECT '$ds', '$label', '$t', (SELECT sum(octet_length(body)) FROM src_$ds), pg_table_size('$t'), NULL, (SELECT ratio FROM compressx.column_stats('$t') WHERE column_name = 'body')"
    done
done

# COPY, timed: three rounds, each loading every variant again (TRUNCATE
# keeps settings and dictionaries); ratios are taken pair by pair
for r in 1 2 3; do
    psql_b -At -c "SELECT t.dataset, t.label, t.tbl FROM tables t JOIN variants v USING (label) ORDER BY t.dataset, v.ord" |
    while IFS='|' read -r ds label t; do
        ms=$(psql_b -At -c "TRUNCATE $t" -c '\timing on' -c "COPY $t FROM '$work/$ds.copy'" |
             sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
        psql_b -c "INSERT INTO timings VALUES ('$ds', '$label', 'copy', $r, $ms)"
    done
done
psql_b -At -c "SELECT tbl FROM tables" | while read -r t; do psql_b -c "VACUUM ANALYZE $t"; done

# timings: each run measures every variant, ratios are taken pair by pair
psql_b -v runs="$RUNS" <<'SQL'
SET max_parallel_workers_per_gather = 0;
SET bench.runs = :'runs';
-- q run reps times: short queries repeat, so that timer jitter stays small
CREATE FUNCTION time_ms(q text, reps int DEFAULT 1) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz;
BEGIN
    t0 := clock_timestamp();
    FOR i IN 1..reps LOOP
        EXECUTE q;
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0)::numeric * 1000 / reps;
END $$;
CREATE FUNCTION lookups(tbl text, n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE maxid int; b text;
BEGIN
    EXECUTE format('SELECT max(id) FROM %I', tbl) INTO maxid;
    PERFORM setseed(0.5);
    FOR i IN 1..n LOOP
        EXECUTE format('SELECT body FROM %I WHERE id = $1', tbl) INTO b USING 1 + floor(random() * maxid)::int;
        PERFORM length(b);
    END LOOP;
END $$;
DO $$
DECLARE r int; t record;
BEGIN
    FOR r IN 0..current_setting('bench.runs')::int LOOP   -- run 0 warms the cache
        FOR t IN SELECT * FROM tables LOOP
            INSERT INTO timings VALUES
              (t.dataset, t.label, 'count', r, time_ms(format('SELECT count(*) FROM %I', t.tbl), 20)),
              (t.dataset, t.label, 'narrow', r, time_ms(format('SELECT sum(n) FROM %I', t.tbl), 20)),
              (t.dataset, t.label, 'read all', r, time_ms(format('SELECT sum(length(body)) FROM %I', t.tbl))),
              (t.dataset, t.label, 'lookup x200', r, time_ms(format('SELECT lookups(%L, 200)', t.tbl))),
              (t.dataset, t.label, 'update n', r, time_ms(format('UPDATE %I SET n = n + 1 WHERE id %% 10 = 0', t.tbl)));
        END LOOP;
    END LOOP;
    DELETE FROM timings WHERE run = 0;
END $$;
SQL

# VACUUM FULL and recompress_table, on the heap pglz table of each dataset:
# three rounds of VACUUM FULL, recompress_table to lz4 (both timed) and back
# to pglz (not timed); the medians are kept (a checkpoint may land in one)
for ds in docs json; do
    t=$(psql_b -At -c "SELECT tname('$ds', 'heap pglz')")
    for r in 1 2 3; do
        vf=$(psql_b -At -c '\timing on' -c "VACUUM FULL $t" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
        rc=$(psql_b -At -c '\timing on' -c "SELECT count(*) FROM recompress_table('$t', 'lz4')" |
             sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
        psql_b -c "SELECT count(*) FROM recompress_table('$t', 'pglz')" >/dev/null
        psql_b -c "INSERT INTO timings VALUES ('$ds', 'heap pglz', 'vacuum full', $r, $vf), ('$ds', 'heap pglz', 'recompress lz4', $r, $rc)"
    done
done

psql_b -v out="$work" <<'SQL'
\pset footer off
CREATE TABLE codec_speed AS
SELECT 'docs' AS dataset, * FROM compressx.advise('src_docs', 2000, 50) WHERE column_name = 'body'
UNION ALL
SELECT 'json', * FROM compressx.advise('src_json', 5000, 50) WHERE column_name = 'body';
CREATE VIEW ratios AS
SELECT t.dataset, t.label, t.what, percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms / h.ms) AS x,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms) AS ms
FROM timings t JOIN timings h ON h.dataset = t.dataset AND h.what = t.what AND h.run = t.run
                              AND h.label = 'heap pglz'
GROUP BY 1, 2, 3;
CREATE VIEW summary AS
SELECT tb.dataset, tb.label, v.ord,
       tb.value_ratio,
       round(tb.raw_bytes::numeric / tb.table_bytes, 2) AS table_ratio,
       round(tb.table_bytes / 1048576.0, 1) AS table_mb,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'copy') AS copy_x,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'count') AS count_x,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'narrow') AS narrow_x,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'read all') AS read_x,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'lookup x200') AS lookup_x,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'update n') AS update_x,
       (SELECT round(ms::numeric) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'copy') AS copy_ms,
       (SELECT round(ms::numeric, 1) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'read all') AS read_ms
FROM tables tb JOIN variants v USING (label);

\echo
\echo '== results (x: median over runs of the ratio against heap pglz in the same run)'
SELECT dataset, label, value_ratio, table_ratio, table_mb, copy_x, count_x, narrow_x, read_x, lookup_x, update_x
FROM summary ORDER BY dataset, ord;
\echo '== VACUUM FULL and recompress_table(heap pglz table, lz4), ms'
SELECT dataset, what, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 0) AS median_ms
FROM timings WHERE what IN ('vacuum full', 'recompress lz4') GROUP BY 1, 2 ORDER BY 1, 2;
\echo '== raw codec throughput on the same values (compressx.advise)'
SELECT dataset, codec, level, dictionary, ratio, compress_mb_s, decompress_mb_s FROM codec_speed ORDER BY 1, 2, 3, 4;

\echo '== targets'
WITH s AS (SELECT * FROM summary),
     enc AS (SELECT c.dataset,
                    (SELECT sum(octet_length(body)) FROM src_docs)::numeric AS raw_docs,
                    (SELECT sum(octet_length(body)) FROM src_json)::numeric AS raw_json,
                    c.compress_mb_s AS lz4_mb_s, p.decompress_mb_s AS pglz_dec_mb_s
             FROM codec_speed c JOIN codec_speed p ON p.dataset = c.dataset AND p.codec = 'pglz'
             WHERE c.codec = 'lz4' AND c.level = 1),
     vf AS (SELECT dataset,
                   (percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE what = 'vacuum full'))::numeric AS vf_ms,
                   (percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE what = 'recompress lz4'))::numeric AS rc_ms
            FROM timings GROUP BY dataset)
SELECT target, value, CASE WHEN met THEN 'met' ELSE 'NOT MET' END AS result FROM (
  SELECT 'docs: compressx zstd-3 stored ratio of the values >= 3.4' AS target,
         (SELECT value_ratio FROM s WHERE dataset = 'docs' AND label = 'compressx zstd-3')::text AS value,
         (SELECT value_ratio >= 3.4 FROM s WHERE dataset = 'docs' AND label = 'compressx zstd-3') AS met
  UNION ALL
  SELECT 'count(*) and narrow scans <= 1.1x heap (worst compressx variant: docs, json)',
         (SELECT string_agg(w::text, ', ' ORDER BY dataset) FROM
            (SELECT dataset, max(greatest(count_x, narrow_x)) AS w FROM s WHERE label LIKE 'compressx%' GROUP BY 1) t),
         (SELECT max(greatest(count_x, narrow_x)) <= 1.1 FROM s WHERE label LIKE 'compressx%')
  UNION ALL
  SELECT 'reading every value <= 1.3x heap pglz (worst compressx variant: docs, json)',
         (SELECT string_agg(format('%s (%s)', read_x, label), ', ' ORDER BY dataset) FROM
            (SELECT DISTINCT ON (dataset) dataset, label, read_x FROM s WHERE label LIKE 'compressx%'
             ORDER BY dataset, read_x DESC) t),
         (SELECT max(read_x) <= 1.3 FROM s WHERE label LIKE 'compressx%')
  UNION ALL
  SELECT '  json, zstd-3 and zstd-3 with a dictionary',
         (SELECT string_agg(read_x::text, ', ' ORDER BY ord) FROM s
          WHERE dataset = 'json' AND label IN ('compressx zstd-3', 'compressx zstd-3 dict')),
         (SELECT bool_and(read_x <= 1.3) FROM s
          WHERE dataset = 'json' AND label IN ('compressx zstd-3', 'compressx zstd-3 dict'))
  UNION ALL
  SELECT 'COPY into compressx zstd-3 <= 1.3x heap pglz (docs, json; json with a dictionary)',
         (SELECT string_agg(copy_x::text, ', ' ORDER BY dataset, ord) FROM s
          WHERE label = 'compressx zstd-3' OR (dataset = 'json' AND label = 'compressx zstd-3 dict')),
         (SELECT bool_and(copy_x <= 1.3) FROM s WHERE label = 'compressx zstd-3')
  UNION ALL
  SELECT 'recompress_table <= 1.25x (VACUUM FULL + encode time) (docs, json)',
         (SELECT string_agg(round(rc_ms / (vf_ms + 1000 * (CASE vf.dataset WHEN 'docs' THEN raw_docs ELSE raw_json END) / 1e6
                                  * (1 / lz4_mb_s + 1 / pglz_dec_mb_s)), 2)::text, ', ' ORDER BY vf.dataset)
          FROM vf JOIN enc USING (dataset)),
         (SELECT bool_and(rc_ms <= 1.25 * (vf_ms + 1000 * (CASE vf.dataset WHEN 'docs' THEN raw_docs ELSE raw_json END) / 1e6
                                  * (1 / lz4_mb_s + 1 / pglz_dec_mb_s)))
          FROM vf JOIN enc USING (dataset))
  UNION ALL
  SELECT 'small JSON documents: compressx table <= 0.75x the heap table (zstd-3; with a dictionary)',
         (SELECT string_agg(round(table_mb / (SELECT table_mb FROM s WHERE dataset = 'json' AND label = 'heap pglz'), 2)::text,
                            ', ' ORDER BY ord)
          FROM s WHERE dataset = 'json' AND label IN ('compressx zstd-3', 'compressx zstd-3 dict')),
         (SELECT (SELECT table_mb FROM s WHERE dataset = 'json' AND label = 'compressx zstd-3')
                 <= 0.75 * (SELECT table_mb FROM s WHERE dataset = 'json' AND label = 'heap pglz'))
) t;

\pset format unaligned
\pset tuples_only on
\o :out/results.md
SELECT '| dataset | variant | value ratio | table ratio | table MB | COPY x | count(*) x | narrow x | read all x | lookup x | update x |'
UNION ALL SELECT '|---|---|---|---|---|---|---|---|---|---|---|'
UNION ALL SELECT * FROM (
  SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |', dataset, label, value_ratio, table_ratio,
                table_mb, copy_x, count_x, narrow_x, read_x, lookup_x, update_x)
  FROM summary ORDER BY dataset, ord) t;
\o
\pset tuples_only off
\pset fieldsep ','
\o :out/results.csv
SELECT dataset, label, value_ratio, table_mb, copy_ms, read_ms, copy_x, read_x FROM summary ORDER BY dataset, ord;
\o
SQL
cp "$work/results.md" "$work/results.csv" "$out/"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r), $(date -u +%F)" >> "$out/results.md"

# charts
venv=/opt/compressx-cache/venv-bench
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" && "$venv/bin/pip" install -q matplotlib
fi
"$venv/bin/python" "$cx_root/test/bench/charts.py" "$out/results.csv" "$out"
echo "written: $out/results.md, $out/results.csv, $out/size_vs_load.png, $out/read_time.png"
