#!/usr/bin/env bash
# Benchmark of compressx against heap and against a peer, Citus's columnar
# access method (not part of the pass/fail suite).
#
#   bash test/bench/bench.sh [DOC_COPIES] [JSON_ROWS] [RUNS]
#
# Takes about 20 minutes with the defaults on 2 cores (19 measured while
# other jobs ran; about 5 before the columnar rows, whose primary-key
# lookups each decode the body column's whole chunk), `bench.sh 1 5000 1`
# about 2 minutes.
#
# Data, from Debian packages: PostgreSQL's HTML documentation (one file per
# row, DOC_COPIES copies, default 4) and small JSON documents, one per
# package of Debian's package index (test/bench/make_json.py; JSON_ROWS of
# them, default 0: all, about 63 000 of 500 B to 1 kB).
#
# Variants: the rows of the table `variants` below, the one place a variant
# is defined: heap pglz (the reference of every ratio), heap lz4, heap lz4
# with toast_tuple_target = 128 (what a user tries first; core compresses
# only rows over ~2 kB whatever the target, so on the small JSON documents
# it changes nothing), compressx lz4 and zstd 1, 3, 9, 19, zstd 1 and 3
# with a 16 kB and a 110 kB dictionary and lz4 with a 64 kB one
# (compressx.train_dictionary() on a 10 000-row sample of the loaded table,
# which is then emptied and loaded again with it), and
# Citus's columnar with zstd 3 and with lz4.  To add a variant, add a row:
# access method, codec, level, dictionary size, reloptions and whether the
# access method can UPDATE are its columns; create_variant() makes its
# table, and the loops, results and charts take every row.
#
# Measured in one run: table size (pg_table_size: main fork and TOAST, no
# indexes; a columnar table keeps all its data in its main fork, which is
# checked against its chunk list, and the few kB of metadata it keeps in
# columnar_internal's tables are printed), COPY load time, count(*), a
# narrow-column scan, reading every value, point lookups by primary key
# reading the whole row as text (500 random keys; 10 on columnar; the time
# per lookup is compared; checked to use the index: columnar's planner prefers its own scan, so
# the lookups of every variant run with enable_seqscan and
# columnar.enable_custom_scan off), an UPDATE of a small column (n/a for
# columnar, which has no UPDATE), VACUUM FULL and recompress_table (heap
# pglz table to lz4; medians of 3), and raw codec throughput on the same
# values (compressx.advise).  Timings are medians of RUNS (default 9) of
# the ratio against heap pglz measured pair by pair in each run.
# Writes bench-results/results.md, results.csv and PNG charts, and prints
# the targets as met or not.
#
# citus_columnar comes from the Citus sources in vendor/citus: when the
# server lacks it, test/citus_build.sh builds and installs it (for 15 and
# 18, about 9 minutes the first time; on another major the columnar rows
# are left out with a warning).  The bench cluster preloads it
# (shared_preload_libraries): its ProcessUtility hook is what accepts
# ALTER TABLE .. SET (columnar.compression = ..), and every psql call here
# is a new session, which has not loaded the library yet.
#
#   CX_BENCH_PGBIN=DIR  run on the PostgreSQL installation whose programs
#                       are in DIR (e.g. /opt/compressx-cache/pg18/bin, see
#                       test/compile_check.sh) instead of Debian's 15:
#                       compressx is built in a private copy of the tree and
#                       installed there; results go to bench-results/pgNN/.
#                       The data are the same (15's documentation).
#   CX_BENCH_PORT=N     port of the bench cluster (default 55434)
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

# ensure_columnar: citus_columnar installed into the server in use; built
# from vendor/citus by test/citus_build.sh when missing (a fresh machine).
# Fails when that cannot be done for this server.
ensure_columnar() {
    local lib ext
    lib=$("$PGBIN/pg_config" --pkglibdir)/citus_columnar.so
    ext=$("$PGBIN/pg_config" --sharedir)/extension/citus_columnar.control
    [ -f "$lib" ] && [ -f "$ext" ] && return 0
    cx_log "citus_columnar is not installed in $PGBIN: test/citus_build.sh $major"
    # on 15, into the installation in use (CX_PGBIN), never Debian's own
    # when CX_BENCH_PGBIN names another
    CX_PGBIN="$PGBIN" bash "$cx_root/test/citus_build.sh" "$major" >/dev/null || return 1
    # citus_build.sh installs the cache's 18 for 18, which need not be the
    # server CX_BENCH_PGBIN names
    [ -f "$lib" ] && [ -f "$ext" ]
}

cx_install_deps
[ -z "${CX_BENCH_PGBIN:-}" ] || cx_use_pg "$CX_BENCH_PGBIN"
major=$("$PGBIN/pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
if [ -n "${CX_BENCH_PGBIN:-}" ]; then
    out="$out/pg$major"
    cx_build_install_copy
else
    cx_build_install
fi
if ensure_columnar; then
    columnar=1
    settings="shared_preload_libraries = 'citus_columnar'"
else
    cx_log "WARNING: no citus_columnar for PostgreSQL $major: the columnar variants are left out"
    columnar=0
    settings=""
fi
mkdir -p "$out"
echo "server: $("$PGBIN/postgres" --version)"
work=$(cx_workdir bench)
# the package index comes with apt's lists
ls /var/lib/apt/lists/*_dists_bookworm_main_binary-*_Packages* >/dev/null 2>&1 ||
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
python3 "$cx_root/test/bench/make_json.py" "$JSON_ROWS" > "$work/json.txt"
chmod 644 "$work/json.txt"
cx_start_cluster "$work" "${CX_BENCH_PORT:-55434}" "$settings"
trap 'cx_stop_cluster "$work"; rm -rf "$work"' EXIT
psql_b() { cx_as_user psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }

psql_b -v docdir="/usr/share/doc/postgresql-doc-15/html" -v jsonfile="$work/json.txt" \
    -v doc_copies="$DOC_COPIES" -v docs_out="$work/docs.copy" -v json_out="$work/json.copy" \
    -v columnar="$columnar" <<'SQL'
CREATE EXTENSION compressx;
\if :columnar
CREATE EXTENSION citus_columnar;
\endif
-- sources keep values uncompressed, so every variant compresses them
CREATE TABLE src_docs (id serial PRIMARY KEY, name text, body text, n integer DEFAULT 0);
ALTER TABLE src_docs ALTER COLUMN body SET STORAGE EXTERNAL;
-- copy after copy, each in file-name order (not the directory's, which
-- varies): the copies of one file next to each other would let columnar,
-- which compresses up to 10 000 values of a column as one block, store the
-- 2nd to 4th copy almost for free (20x with zstd); a copy apart (16 MB)
-- they are beyond zstd's window
INSERT INTO src_docs (name, body)
SELECT c || '/' || f, pg_read_file(:'docdir' || '/' || f)
FROM pg_ls_dir(:'docdir') f, generate_series(1, :doc_copies) c WHERE f LIKE '%.html'
ORDER BY c, f;
CREATE TABLE json_lines (doc text);
COPY json_lines FROM :'jsonfile';
CREATE TABLE src_json (id serial PRIMARY KEY, name text, body text, n integer DEFAULT 0);
ALTER TABLE src_json ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO src_json (name, body) SELECT doc::jsonb->>'Package', doc FROM json_lines;
COPY src_docs TO :'docs_out';
COPY src_json TO :'json_out';
-- The variants, one row each, in the order of the results.  am: heap,
-- compressx or columnar; codec and level: of the body column (heap: SET
-- COMPRESSION, no level; compressx: set_column_codec; columnar: its
-- compression and compression_level options, which apply to every
-- column); dict_size: compressx trains a dictionary of that many bytes on
-- the loaded table, which is then loaded again; reloptions: ALTER TABLE ..
-- SET (reloptions); updates: false for an access method without UPDATE
-- (not timed, n/a in the results).
CREATE TABLE variants (ord serial, label text UNIQUE, am text, codec text, level int,
                       dict_size int, reloptions text, updates boolean NOT NULL DEFAULT true);
INSERT INTO variants (label, am, codec, level, dict_size, reloptions, updates) VALUES
    ('heap pglz',             'heap',      'pglz', NULL, NULL,  NULL,                       true),
    ('heap lz4',              'heap',      'lz4',  NULL, NULL,  NULL,                       true),
    ('heap lz4 ttt128',       'heap',      'lz4',  NULL, NULL,  'toast_tuple_target = 128', true),
    ('compressx lz4',         'compressx', 'lz4',  NULL, NULL,  NULL,                       true),
    ('compressx zstd-1',      'compressx', 'zstd', 1,    NULL,  NULL,                       true),
    ('compressx zstd-3',      'compressx', 'zstd', 3,    NULL,  NULL,                       true),
    ('compressx zstd-9',      'compressx', 'zstd', 9,    NULL,  NULL,                       true),
    ('compressx zstd-19',     'compressx', 'zstd', 19,   NULL,  NULL,                       true),
    ('compressx zstd-1 dict', 'compressx', 'zstd', 1,    16384, NULL,                       true),
    ('compressx zstd-3 dict', 'compressx', 'zstd', 3,    16384, NULL,                       true),
    ('compressx zstd-1 dict 110k', 'compressx', 'zstd', 1, 112640, NULL,                     true),
    ('compressx zstd-3 dict 110k', 'compressx', 'zstd', 3, 112640, NULL,                     true),
    ('compressx lz4 dict',    'compressx', 'lz4',  1,    65536, NULL,                       true),
    ('columnar zstd',         'columnar',  'zstd', 3,    NULL,  NULL,                       false),
    ('columnar lz4',          'columnar',  'lz4',  NULL, NULL,  NULL,                       false);
-- rows of an access method this server lacks (no citus_columnar) go
DELETE FROM variants WHERE am NOT IN (SELECT amname FROM pg_am);
CREATE TABLE tables (dataset text, label text, tbl text, raw_bytes bigint, table_bytes bigint, load_ms numeric, value_ratio numeric);
CREATE TABLE timings (dataset text, label text, what text, run int, ms numeric);
CREATE FUNCTION tname(dataset text, label text) RETURNS text LANGUAGE sql AS
$$ SELECT 'b_' || dataset || '_' || regexp_replace(label, '\W', '_', 'g') $$;

-- create_variant(tbl, label): the empty table of a variant, its codec and
-- options set; the one place that knows how each access method takes them
CREATE FUNCTION create_variant(tbl text, lbl text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE v variants;
BEGIN
    SELECT * INTO STRICT v FROM variants WHERE label = lbl;
    EXECUTE format('CREATE TABLE %I (id int PRIMARY KEY, name text, body text, n integer) USING %I', tbl, v.am);
    IF v.reloptions IS NOT NULL THEN
        EXECUTE format('ALTER TABLE %I SET (%s)', tbl, v.reloptions);
    END IF;
    CASE v.am
    WHEN 'heap' THEN
        EXECUTE format('ALTER TABLE %I ALTER COLUMN body SET COMPRESSION %I', tbl, v.codec);
    WHEN 'compressx' THEN
        PERFORM compressx.set_column_codec(tbl::regclass, 'body', v.codec, v.level);
    WHEN 'columnar' THEN
        EXECUTE format('ALTER TABLE %I SET (columnar.compression = %I%s)', tbl, v.codec,
                       CASE WHEN v.level IS NOT NULL THEN ', columnar.compression_level = ' || v.level ELSE '' END);
    END CASE;
END $$;

-- value_ratio(tbl, am, raw): raw bytes of the body column over its stored
-- bytes.  compressx's column_stats reads heap and compressx tables;
-- columnar compresses a column chunk by chunk (10 000 values each), so its
-- stored bytes are the streams of the body column's chunks (dynamic SQL:
-- columnar's catalog may be absent)
CREATE FUNCTION value_ratio(tbl text, am text, raw bigint) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE stored numeric;
BEGIN
    IF am = 'columnar' THEN
        EXECUTE $q$SELECT sum(c.value_stream_length + c.exists_stream_length) FROM columnar.chunk c
                   JOIN pg_attribute a ON a.attrelid = c.relation::oid AND a.attnum = c.attr_num
                   WHERE c.relation = $1::regclass AND a.attname = 'body'$q$ INTO stored USING tbl;
        RETURN round(raw / stored, 2);
    END IF;
    RETURN (SELECT ratio FROM compressx.column_stats(tbl::regclass) WHERE column_name = 'body');
END $$;
SQL

# create and load every variant; one with a dictionary trains it on a first
# load, is emptied and loaded again with it
for ds in docs json; do
    psql_b -At -c "SELECT label, am, coalesce(dict_size::text, '') FROM variants ORDER BY ord" |
    while IFS='|' read -r label am dict_size; do
        t=$(psql_b -At -c "SELECT tname('$ds', '$label')")
        psql_b -c "SELECT create_variant('$t', '$label')" >/dev/null
        if [ -n "$dict_size" ]; then
            psql_b -c "COPY $t FROM '$work/$ds.copy'" \
                   -c "SELECT compressx.train_dictionary('$t', 'body', $dict_size)" -c "TRUNCATE $t" >/dev/null
        fi
        psql_b -c "COPY $t FROM '$work/$ds.copy'"
        psql_b -c "INSERT INTO tables SELECT '$ds', '$label', '$t', raw, pg_table_size('$t'), NULL, value_ratio('$t', '$am', raw)
                   FROM (SELECT sum(octet_length(body)) AS raw FROM src_$ds) s"
    done
done

# A columnar table's pg_table_size must count its data: every chunk's
# streams lie in the main fork.  Its stripe and chunk lists (with each
# chunk's min/max values) live in columnar_internal's tables, outside it:
# printed, to show they are small.
psql_b <<'SQL'
DO $$
DECLARE t record; r record;
BEGIN
    FOR t IN SELECT tb.tbl FROM tables tb JOIN variants v USING (label) WHERE v.am = 'columnar' LOOP
        EXECUTE format($q$
            SELECT pg_table_size(%1$L) AS table_bytes, pg_relation_size(%1$L) AS main_bytes,
                   (SELECT sum(value_stream_length + exists_stream_length) FROM columnar.chunk
                    WHERE relation = %1$L::regclass) AS stream_bytes,
                   (SELECT sum(pg_column_size(c.*)) FROM columnar_internal.chunk c
                    WHERE storage_id = columnar.get_storage_id(%1$L))
                 + (SELECT sum(pg_column_size(c.*)) FROM columnar_internal.chunk_group c
                    WHERE storage_id = columnar.get_storage_id(%1$L))
                 + (SELECT sum(pg_column_size(c.*)) FROM columnar_internal.stripe c
                    WHERE storage_id = columnar.get_storage_id(%1$L)) AS meta_bytes$q$, t.tbl) INTO r;
        RAISE NOTICE '%: pg_table_size % B, main fork % B, chunk streams % B; metadata outside it % B',
            t.tbl, r.table_bytes, r.main_bytes, r.stream_bytes, r.meta_bytes;
        IF r.table_bytes < r.main_bytes OR r.main_bytes < r.stream_bytes THEN
            RAISE EXCEPTION 'pg_table_size of % does not count its columnar data', t.tbl;
        END IF;
    END LOOP;
END $$;
SQL

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
-- Lookups go through the primary key for every variant.  Columnar's
-- planner prefers its own scan (chunk groups filtered by their min/max id)
-- over an index, even with enable_seqscan off: both settings go on the
-- lookups and on the plan check, and on nothing else (an index-only scan
-- would change count(*)).  Off for every variant, heap and compressx plan
-- the same index scan as without.
CREATE FUNCTION lookup_plan(tbl text) RETURNS text LANGUAGE plpgsql
SET enable_seqscan = off SET columnar.enable_custom_scan = off AS $$
DECLARE p text;
BEGIN
    EXECUTE format('EXPLAIN (COSTS OFF) SELECT body FROM %I WHERE id = 1', tbl) INTO p;
    RETURN p;
END $$;
-- n random keys, each reading the whole row with every column as text
CREATE FUNCTION lookups(tbl text, n int) RETURNS void LANGUAGE plpgsql
SET enable_seqscan = off SET columnar.enable_custom_scan = off AS $$
DECLARE maxid int; b text;
BEGIN
    EXECUTE format('SELECT max(id) FROM %I', tbl) INTO maxid;
    PERFORM setseed(0.5);
    FOR i IN 1..n LOOP
        EXECUTE format('SELECT t::text FROM %I t WHERE id = $1', tbl) INTO b USING 1 + floor(random() * maxid)::int;
        PERFORM length(b);
    END LOOP;
END $$;
DO $$
DECLARE t record;
BEGIN
    FOR t IN SELECT tbl, lookup_plan(tbl) AS plan FROM tables LOOP
        IF t.plan NOT LIKE format('Index Scan using %s_pkey on %s%%', t.tbl, t.tbl) THEN
            RAISE EXCEPTION 'lookups on % do not use the primary key: %', t.tbl, t.plan;
        END IF;
    END LOOP;
END $$;
DO $$
DECLARE r int; t record;
BEGIN
    FOR r IN 0..current_setting('bench.runs')::int LOOP   -- run 0 warms the cache
        FOR t IN SELECT tb.*, v.updates, v.am FROM tables tb JOIN variants v USING (label) LOOP
            -- lookups: time per lookup, of 500 (columnar: 10, each of
            -- which decodes a whole chunk of 10 000 values)
            INSERT INTO timings VALUES
              (t.dataset, t.label, 'count', r, time_ms(format('SELECT count(*) FROM %I', t.tbl), 20)),
              (t.dataset, t.label, 'narrow', r, time_ms(format('SELECT sum(n) FROM %I', t.tbl), 20)),
              (t.dataset, t.label, 'read all', r, time_ms(format('SELECT sum(length(body)) FROM %I', t.tbl))),
              (t.dataset, t.label, 'lookup', r,
               time_ms(format('SELECT lookups(%L, %s)', t.tbl, CASE WHEN t.am = 'columnar' THEN 10 ELSE 500 END))
               / CASE WHEN t.am = 'columnar' THEN 10 ELSE 500 END);
            IF t.updates THEN
                INSERT INTO timings VALUES
                  (t.dataset, t.label, 'update n', r, time_ms(format('UPDATE %I SET n = n + 1 WHERE id %% 10 = 0', t.tbl)));
            END IF;
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

# Small rows with nothing to decode (issue 37): PLAIN_ROWS (default
# 1 000 000) rows (id int, a int, b int, s text), s = md5(id::text), on
# heap and on compressx with its defaults (nothing compressed: every value
# is below the minimum size), both with a primary key: count(*), sum(a), a
# LIKE filter on s, 2 000 primary-key lookups reading s and an index-only
# scan of 2 000 keys (each one query: id = ANY of 2 000 random keys, index
# scans only), and an UPDATE of b on every 20th row (in a loop of its own
# after the others, which see all-visible pages).  Heap and compressx
# alternate within each of RUNS runs (after one warming run); the ratio is
# of the minima, which noise on a shared machine only raises.
psql_b -v runs="$RUNS" -v plain_rows="${PLAIN_ROWS:-1000000}" <<'SQL'
SET max_parallel_workers_per_gather = 0;
CREATE TABLE plain_heap (id int PRIMARY KEY, a int, b int, s text) USING heap;
CREATE TABLE plain_cx (id int PRIMARY KEY, a int, b int, s text) USING compressx;
INSERT INTO plain_heap SELECT i, i % 1000, i % 7, md5(i::text) FROM generate_series(1, :plain_rows) i;
INSERT INTO plain_cx SELECT * FROM plain_heap;
VACUUM ANALYZE plain_heap, plain_cx;
CREATE TABLE plain_timings (what text, am text, run int, ms numeric);
-- q (with $1 = keys) run reps times: ms per run
CREATE FUNCTION plain_time_ms(q text, keys int[], reps int) RETURNS numeric LANGUAGE plpgsql AS $f$
DECLARE t0 timestamptz;
BEGIN
    t0 := clock_timestamp();
    FOR i IN 1..reps LOOP
        EXECUTE q USING keys;
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0)::numeric * 1000 / reps;
END $f$;
SET bench.runs = :'runs';
SET bench.plain_rows = :'plain_rows';
DO $$
DECLARE r int; q record; am text; keys int[];
BEGIN
    PERFORM setseed(0.37);
    keys := (SELECT array_agg(1 + floor(random() * current_setting('bench.plain_rows')::int)::int)
             FROM generate_series(1, 2000));
    FOR r IN 0..current_setting('bench.runs')::int LOOP
        FOR q IN SELECT * FROM (VALUES
            (1, 'count(*)', 'SELECT count(*) FROM %I', 5),
            (2, 'sum(a)', 'SELECT sum(a) FROM %I', 5),
            (3, 's LIKE ''ab%''', 'SELECT count(*) FROM %I WHERE s LIKE ''ab%%''', 5),
            (4, '2 000 pk lookups', 'SELECT count(s) FROM %I WHERE id = ANY ($1)', 20),
            (5, 'index-only scan, 2 000 keys', 'SELECT count(id) FROM %I WHERE id = ANY ($1)', 20)) v(ord, what, sql, reps)
            ORDER BY ord LOOP
            PERFORM set_config('enable_seqscan', CASE WHEN q.ord >= 4 THEN 'off' ELSE 'on' END, true);
            PERFORM set_config('enable_bitmapscan', CASE WHEN q.ord >= 4 THEN 'off' ELSE 'on' END, true);
            FOREACH am IN ARRAY ARRAY['heap', 'cx'] LOOP
                INSERT INTO plain_timings
                SELECT q.what, am, r, plain_time_ms(format(q.sql, 'plain_' || am), keys, q.reps);
            END LOOP;
        END LOOP;
    END LOOP;
END $$;
DO $$
DECLARE r int; am text;
BEGIN
    FOR r IN 0..current_setting('bench.runs')::int LOOP
        FOREACH am IN ARRAY ARRAY['heap', 'cx'] LOOP
            INSERT INTO plain_timings
            SELECT 'UPDATE b, every 20th row', am, r,
                   plain_time_ms(format('UPDATE %I SET b = b + 1 WHERE id %% 20 = 0', 'plain_' || am), NULL, 1);
        END LOOP;
    END LOOP;
    DELETE FROM plain_timings WHERE run = 0;
END $$;
-- the plans the figures are of
DO $$
DECLARE p text;
BEGIN
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_bitmapscan = off;
    FOR p IN SELECT format(q, t) FROM unnest(ARRAY['plain_heap', 'plain_cx']) t,
             unnest(ARRAY['SELECT count(s) FROM %I WHERE id = ANY (''{1,2}'')',
                          'SELECT count(id) FROM %I WHERE id = ANY (''{1,2}'')']) q LOOP
        EXECUTE 'EXPLAIN (COSTS OFF) ' || p INTO p;
        IF p NOT LIKE 'Aggregate%' THEN
            RAISE EXCEPTION 'unexpected plan: %', p;
        END IF;
    END LOOP;
END $$;
SQL

psql_b -v out="$work" <<'SQL'
\pset footer off
\pset null 'n/a'
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
SELECT tb.dataset, tb.label, v.ord, v.am, v.codec, v.dict_size, tb.table_bytes,
       tb.value_ratio,
       round(tb.raw_bytes::numeric / tb.table_bytes, 2) AS table_ratio,
       round(tb.table_bytes / 1048576.0, 1) AS table_mb,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'copy') AS copy_x,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'count') AS count_x,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'narrow') AS narrow_x,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'read all') AS read_x,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'lookup') AS lookup_x,
       (SELECT round(x::numeric, 2) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'update n') AS update_x,
       (SELECT round(ms::numeric) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'copy') AS copy_ms,
       (SELECT round(ms::numeric, 1) FROM ratios r WHERE r.dataset = tb.dataset AND r.label = tb.label AND r.what = 'read all') AS read_ms
FROM tables tb JOIN variants v USING (label);

\echo
\echo '== results (x: median over runs of the ratio against heap pglz in the same run)'
SELECT dataset, label, value_ratio, table_ratio, table_mb, copy_x, count_x, narrow_x, read_x, lookup_x, update_x
FROM summary ORDER BY dataset, ord;
\echo '== small rows with nothing to decode (plain_heap, plain_cx: compressx with its defaults): minimum ms over runs, heap and compressx alternating'
CREATE VIEW plain_summary AS
SELECT what, round(min(ms) FILTER (WHERE am = 'heap'), 2) AS heap_ms, round(min(ms) FILTER (WHERE am = 'cx'), 2) AS compressx_ms,
       round(min(ms) FILTER (WHERE am = 'cx') / min(ms) FILTER (WHERE am = 'heap'), 2) AS x
FROM plain_timings GROUP BY what;
SELECT * FROM plain_summary ORDER BY what LIKE 'UPDATE%', what;
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
            FROM timings GROUP BY dataset),
     best_dict AS (SELECT DISTINCT ON (dataset) dataset, label, table_bytes FROM s
                   WHERE am = 'compressx' AND dict_size IS NOT NULL ORDER BY dataset, table_bytes),
     peer_zstd AS (SELECT DISTINCT ON (dataset) dataset, label, table_bytes FROM s
                   WHERE am = 'columnar' AND codec = 'zstd' ORDER BY dataset, table_bytes)
SELECT target, value, CASE WHEN met THEN 'met' ELSE 'NOT MET' END AS result FROM (
  SELECT 'docs: compressx zstd-3 stored ratio of the values >= 3.4' AS target,
         (SELECT value_ratio FROM s WHERE dataset = 'docs' AND label = 'compressx zstd-3')::text AS value,
         (SELECT value_ratio >= 3.4 FROM s WHERE dataset = 'docs' AND label = 'compressx zstd-3') AS met
  UNION ALL
  SELECT 'count(*) and narrow scans <= 1.1x heap (worst compressx variant: docs, json)',
         (SELECT string_agg(w::text, ', ' ORDER BY dataset) FROM
            (SELECT dataset, max(greatest(count_x, narrow_x)) AS w FROM s WHERE am = 'compressx' GROUP BY 1) t),
         (SELECT max(greatest(count_x, narrow_x)) <= 1.1 FROM s WHERE am = 'compressx')
  UNION ALL
  SELECT 'reading every value <= 1.3x heap pglz (worst compressx variant: docs, json)',
         (SELECT string_agg(format('%s (%s)', read_x, label), ', ' ORDER BY dataset) FROM
            (SELECT DISTINCT ON (dataset) dataset, label, read_x FROM s WHERE am = 'compressx'
             ORDER BY dataset, read_x DESC) t),
         (SELECT max(read_x) <= 1.3 FROM s WHERE am = 'compressx')
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
  UNION ALL
  -- against the peer: compressx's smallest table with a dictionary, and
  -- columnar's smallest with zstd (whatever rows the variants table has)
  SELECT 'compressx with a dictionary (smallest) table <= 1.2x columnar zstd''s (docs, json)',
         (SELECT string_agg(format('%s (%s)', round(d.table_bytes::numeric / c.table_bytes, 2), d.label), ', '
                            ORDER BY dataset)
          FROM best_dict d JOIN peer_zstd c USING (dataset)),
         (SELECT count(*) = (SELECT count(DISTINCT dataset) FROM s) AND bool_and(d.table_bytes <= 1.2 * c.table_bytes)
          FROM best_dict d JOIN peer_zstd c USING (dataset))
  UNION ALL
  SELECT 'primary-key lookups of the whole row <= 1.05x heap pglz (worst compressx variant: docs, json)',
         (SELECT string_agg(format('%s (%s)', lookup_x, label), ', ' ORDER BY dataset) FROM
            (SELECT DISTINCT ON (dataset) dataset, label, lookup_x FROM s WHERE am = 'compressx'
             ORDER BY dataset, lookup_x DESC) t),
         (SELECT max(lookup_x) <= 1.05 FROM s WHERE am = 'compressx')
  UNION ALL
  -- issue 15: one configuration for small values meeting every bound
  SELECT 'json: one compressx variant with table <= 0.40x, read all <= 1.2x, COPY <= 1.2x, lookup <= 1.05x heap pglz',
         (SELECT string_agg(format('%s: %s/%s/%s/%s', label,
                                   round(table_mb / (SELECT table_mb FROM s h WHERE h.dataset = 'json' AND h.label = 'heap pglz'), 2),
                                   read_x, copy_x, lookup_x), '; ' ORDER BY ord)
          FROM s WHERE dataset = 'json' AND am = 'compressx' AND label LIKE '%dict%'),
         (SELECT count(*) > 0 FROM s WHERE dataset = 'json' AND am = 'compressx'
            AND table_mb <= 0.40 * (SELECT table_mb FROM s h WHERE h.dataset = 'json' AND h.label = 'heap pglz')
            AND read_x <= 1.2 AND copy_x <= 1.2 AND lookup_x <= 1.05)
  UNION ALL
  SELECT 'docs with a dictionary: stored ratio >= 5.0 with COPY <= 0.6x heap pglz (best)',
         (SELECT string_agg(format('%s: %s, COPY %s', label, value_ratio, copy_x), '; ' ORDER BY ord)
          FROM s WHERE dataset = 'docs' AND am = 'compressx' AND label LIKE '%dict%'),
         (SELECT count(*) > 0 FROM s WHERE dataset = 'docs' AND am = 'compressx' AND label LIKE '%dict%'
            AND value_ratio >= 5.0 AND copy_x <= 0.6)
  UNION ALL
  SELECT 'small rows with nothing to decode: every query <= 1.05x heap (worst)',
         (SELECT format('%s (%s)', x, what) FROM plain_summary ORDER BY x DESC LIMIT 1),
         (SELECT max(x) <= 1.05 FROM plain_summary)
  UNION ALL
  SELECT 'count(*) and narrow scans <= 1.05x heap (worst compressx variant: docs, json)',
         (SELECT string_agg(format('%s (%s)', w, label), ', ' ORDER BY dataset) FROM
            (SELECT DISTINCT ON (dataset) dataset, label, greatest(count_x, narrow_x) AS w FROM s
             WHERE am = 'compressx' ORDER BY dataset, greatest(count_x, narrow_x) DESC) t),
         (SELECT max(greatest(count_x, narrow_x)) <= 1.05 FROM s WHERE am = 'compressx')
) t;

\pset format unaligned
\pset tuples_only on
\pset null ''
\o :out/results.md
SELECT '| dataset | variant | value ratio | table ratio | table MB | COPY x | count(*) x | narrow x | read all x | lookup x | update x |'
UNION ALL SELECT '|---|---|---|---|---|---|---|---|---|---|---|'
UNION ALL SELECT * FROM (
  SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |', dataset, label, value_ratio, table_ratio,
                table_mb, copy_x, count_x, narrow_x, read_x, lookup_x, coalesce(update_x::text, 'n/a'))
  FROM summary ORDER BY dataset, ord) t;
\o
\pset tuples_only off
\pset fieldsep ','
\o :out/results.csv
SELECT dataset, label, value_ratio, table_mb, copy_ms, read_ms, copy_x, read_x, am, lookup_x, update_x
FROM summary ORDER BY dataset, ord;
\o
SQL
cp "$work/results.md" "$work/results.csv" "$out/"
[ "$columnar" = 0 ] || echo "peer: citus_columnar $(psql_b -At -c "SELECT extversion FROM pg_extension WHERE extname = 'citus_columnar'")" >> "$out/results.md"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r), $(date -u +%F)" >> "$out/results.md"

# charts
venv=/opt/compressx-cache/venv-bench
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" && "$venv/bin/pip" install -q matplotlib
fi
"$venv/bin/python" "$cx_root/test/bench/charts.py" "$out/results.csv" "$out"
echo "written: $out/results.md, $out/results.csv, $out/size_vs_load.png, $out/read_time.png, $out/size_vs_read.png"
