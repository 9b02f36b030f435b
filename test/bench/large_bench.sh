#!/usr/bin/env bash
# Benchmark on data larger than memory, and a backend's memory (RSS) through
# a long COPY, scan and recompress (not part of the pass/fail suite).
#
#   bash test/bench/large_bench.sh [--scale-gb GB] [--datasets "docs json"]
#                                  [--runs N] [--lookups N] [--rss-rows N]
#   bash test/bench/bench.sh --large [same options]
#
#   --scale-gb GB   raw size of the 1x step of each data set (default 3, in
#                   GiB of body text; 0.2 is a quick test of the script)
#   --datasets L    which data sets, in order (default "docs json")
#   --runs N        cold runs of each query (default 1; ratios are medians
#                   over the runs of the ratio measured pair by pair)
#   --lookups N     primary-key lookups per measurement (default 500)
#   --rss-rows N    rows of the memory test's COPY (default 10000000; 0
#                   skips the memory test)
#   CX_BENCH_PGBIN=DIR  the PostgreSQL installation whose programs are in
#                   DIR (e.g. /opt/compressx-cache/pg18/bin) instead of
#                   Debian's 15.  Either is copied into the work directory
#                   and compressx, built from this tree, is installed into
#                   the copy only: builds that other work installs into the
#                   same server during the run change nothing here
#   CX_BENCH_PORT   the server's port (default 55472)
#
# Data (test/bench/large_data.py): copies of PostgreSQL's HTML
# documentation (docs: one file per row, 1 169 files, 16 MB a copy; each
# copy prepends an HTML comment naming it) and of the JSON documents of
# Debian's package index (json: test/bench/make_json.py, 63 440 documents
# of 500 B - 1 kB, 55 MB a copy; each copy appends "+bN" to the Version),
# every copy in an order of its own, so that a value's previous copy is
# about a copy length away and never in the next rows.  The 1x step holds
# enough copies for GB GiB of body text.  Each step's rows are written to a
# file once and loaded with COPY into every variant.
#
# Variants: the table `variants` below (heap pglz, the reference, heap lz4,
# compressx zstd 3 with and without a dictionary, Citus columnar zstd when
# citus_columnar is installed); one line adds one.  The dictionary is
# trained on a sample (one copy of the data, numbered 0, loaded into the
# table and truncated again), so every row loaded later uses it.
#
# Per data set, on a server with shared_buffers = 128MB: load 1x, measure,
# append 1x (2x), measure, append 2x (4x), measure; then drop the tables.
# Measured: table size (pg_table_size: heap + TOAST, or columnar's storage;
# no indexes), COPY time of the step's rows, count(*), sum(n) (a small int
# column: the narrow scan), sum(length(body)) (read all), and LOOKUPS
# primary-key lookups reading the whole row (the same ids for every
# variant).  Every timed query is cold: the server is restarted before it
# (shared_buffers empty), and
#   - where the server has debug_io_direct (16 and later), measured with
#     debug_io_direct = data (reads bypass the OS page cache; heap, TOAST
#     heap, indexes, compressx and columnar alike: the script shows how
#     much of the tables' files the OS cache holds after the cold queries,
#     expected 0); loads run without it, as servers normally write;
#   - on 15, which has no direct I/O for data, the OS page cache is dropped
#     before each cold query (sync; echo 3 > /proc/sys/vm/drop_caches: needs
#     root, and empties the cache of everything else on the machine too).
# The same query repeated at once gives the warm number: lookups always;
# read all only without direct I/O (with it, 128MB of shared_buffers hold
# nothing of tables this big, warm would repeat cold).  Results of each
# query must agree across variants, or the script fails.  Parallel query,
# JIT and autovacuum are off (each load is followed by VACUUM).
#
# Goal, printed as met or NOT MET for each compressx variant and scale:
# reading every value (cold) is faster than heap pglz by at least half of
# the size advantage: heap_ms / cx_ms >= 1 + 0.5 * (heap_MB / cx_MB - 1).
# (For a table half heap's size: at least 1.5x faster.)
#
# Memory: a compressx zstd 3 table with a dictionary; one backend runs a
# COPY of RSS_ROWS json rows (from the generator through COPY FROM PROGRAM,
# no file), a full scan (sum(length(body))) and compressx.recompress_table
# (which rewrites every value of a column with a dictionary, then rebuilds
# the indexes: the primary key's sort takes up to maintenance_work_mem, 64MB
# by default), and recompress_table again with maintenance_work_mem = 1MB,
# which shows the rewrite's own memory.  Before each
# step the backend's peak is reset (echo 5 > /proc/PID/clear_refs); after
# it VmHWM (peak of all resident memory, shared memory included) is read,
# and a sampler reads /proc/PID/status every 100 ms.  VmHWM grows with every
# page of shared_buffers the backend touches (up to 128MB and more), so the
# goal (memory flat within 20 MB) is judged on private memory: the largest
# RssAnon sampled during a step, against the backend's RssAnon before the
# first step.
#
# Disk: after a small calibration load (one copy of each data set into every
# variant) the script estimates the peak disk use, 1.2 times (4 x 1x raw x
# each variant's stored fraction), plus the step-3 file (2x raw) and 5 GB of
# WAL, for the larger data set (data sets run one after the other, the
# tables dropped between), and the memory test's table twice (recompress
# writes a new copy), and refuses, before writing any large file, when the
# file system of the work directory has less free space.  At 3 GiB that is
# about 55 GB (json: heap does not compress values under 2 kB).
#
# Writes bench-results/large/pgNN.md (tables per data set and scale, the
# goal, the memory table), pgNN.csv (every timing) and pgNN.png (read-all
# and lookup time at 1x/2x/4x per variant), NN the server's major; a run of
# one data set writes pgNN-docs.* or pgNN-json.*.
#
# Time, measured on this 2-core machine shared with other work: see
# README.md (Performance, "Larger than memory").
set -eu
# the server's user reads what root writes here: the work directory's files
umask 022
. "$(dirname "$0")/../lib.sh"

usage() { sed -n '4,21p' "$0" | sed 's/^# \{0,1\}//'; }

SCALE_GB=3
DATASETS="docs json"
RUNS=1
LOOKUPS=500
RSS_ROWS=10000000
while [ $# -gt 0 ]; do
    case $1 in
        --scale-gb) SCALE_GB=${2:?}; shift 2 ;;
        --datasets) DATASETS=${2:?}; shift 2 ;;
        --runs) RUNS=${2:?}; shift 2 ;;
        --lookups) LOOKUPS=${2:?}; shift 2 ;;
        --rss-rows) RSS_ROWS=${2:?}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "large_bench.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
echo "$SCALE_GB" | grep -qE '^[0-9]*\.?[0-9]+$' || { echo "--scale-gb: a number of GiB" >&2; exit 2; }
for v in "$RUNS" "$LOOKUPS" "$RSS_ROWS"; do
    echo "$v" | grep -qE '^[0-9]+$' || { echo "--runs, --lookups, --rss-rows: whole numbers" >&2; exit 2; }
done
[ "$RUNS" -ge 1 ] && [ "$LOOKUPS" -ge 1 ] || { echo "--runs and --lookups: at least 1" >&2; exit 2; }
for ds in $DATASETS; do
    case $ds in docs|json) ;; *) echo "--datasets: docs and/or json, not $ds" >&2; exit 2 ;; esac
done

# The variants, measured and printed in this order; the first is the
# reference of every ratio.  Columns: label | access method | extension
# that provides it ('-': none; a variant whose extension the server lacks
# is left out, with a note) | lookups per measurement ('-': --lookups;
# columnar decodes a whole 10 000-row chunk group for each lookup, about
# 0.2-0.4 s on docs, so it does fewer: the first of the same ids, compared per
# lookup) | SQL after CREATE TABLE | SQL after loading the sample, before
# TRUNCATE ('-': none).  %t is the table's name.  citus_columnar needs no
# shared_preload_libraries, but its reloptions (columnar.compression) exist
# only in a session that has loaded the library, hence the LOAD.
variants=$(cat <<'EOF'
heap pglz             | heap      | -              | -   | ALTER TABLE %t ALTER COLUMN body SET COMPRESSION pglz | -
heap lz4              | heap      | -              | -   | ALTER TABLE %t ALTER COLUMN body SET COMPRESSION lz4 | -
compressx zstd-3 dict | compressx | compressx      | -   | SELECT compressx.set_column_codec('%t', 'body', 'zstd', 3) | SELECT compressx.train_dictionary('%t', 'body')
compressx zstd-3      | compressx | compressx      | -   | SELECT compressx.set_column_codec('%t', 'body', 'zstd', 3) | -
columnar zstd-3       | columnar  | citus_columnar | 20  | LOAD 'citus_columnar'; ALTER TABLE %t SET (columnar.compression = zstd, columnar.compression_level = 3) | -
EOF
)

t_start=$(date +%s)
port=${CX_BENCH_PORT:-55472}
cx_install_deps
work=$(cx_workdir large-bench)
cleanup() {
    local rc=$?
    # a failed run removes its work directory too: keep the server's last
    # words on the terminal
    if [ "$rc" -ne 0 ] && [ -f "$work/server.log" ]; then
        echo "large_bench.sh failed ($rc); the end of the server's log:" >&2
        tail -n 20 "$work/server.log" >&2
    fi
    # the memory sampler ends with its backend; this is for an interrupted run
    if [ -f "$work/sampler.pid" ]; then kill "$(cat "$work/sampler.pid")" 2>/dev/null || true; fi
    cx_stop_cluster "$work"
    rm -rf "$work"
}
trap cleanup EXIT

# A private copy of the installation, with compressx built from this tree
# into it: other work on this machine installs its own builds of compressx
# into the same servers, and a library replaced in the middle of an hour's
# run would mix two builds' numbers (it happened).  The directories are
# copied to the same paths under $work/pg; PostgreSQL finds its library,
# share and include directories relative to its programs, so the copy
# uses its own (citus_columnar comes along).
pg_src=${CX_BENCH_PGBIN:-$PGBIN}
for d in "$("$pg_src/pg_config" --bindir)" "$("$pg_src/pg_config" --pkglibdir)" \
         "$("$pg_src/pg_config" --sharedir)" "$("$pg_src/pg_config" --includedir-server)" \
         "$("$pg_src/pg_config" --pkgincludedir)/internal"; do
    [ -d "$d" ] || continue
    mkdir -p "$work/pg$(dirname "$d")"
    cp -a "$d" "$work/pg$(dirname "$d")/"
done
cx_use_pg "$work/pg$("$pg_src/pg_config" --bindir)"
[ "$("$PGBIN/pg_config" --pkglibdir)" = "$work/pg$("$pg_src/pg_config" --pkglibdir)" ] ||
    { echo "large_bench.sh: the copy of $pg_src does not find its own library directory" >&2; exit 1; }
cx_build_install_copy
major=$("$PGBIN/pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
out="$cx_root/bench-results/large"
mkdir -p "$out"
# pgNN.md for both data sets; a run of one, pgNN-docs.md say, so that the
# two halves of a split run do not overwrite each other
base=pg$major
[ "$(echo "$DATASETS" | tr ' ' '\n' | sort | tr '\n' ' ')" = "docs json " ] || base="$base-$(echo $DATASETS | tr ' ' '-')"
server_version=$("$PGBIN/postgres" --version)
echo "server: $server_version"


docdir=/usr/share/doc/postgresql-doc-15/html
[ -d "$docdir" ] || cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-doc-15 >/dev/null
# the package index comes with apt's lists
ls /var/lib/apt/lists/*_dists_bookworm_main_binary-*_Packages* >/dev/null 2>&1 ||
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null

# the server runs the generator in the memory test: a copy it can read
cp "$cx_root/test/bench/large_data.py" "$work/"
python3 "$cx_root/test/bench/make_json.py" > "$work/json.txt"
chmod 644 "$work/json.txt" "$work/large_data.py"
gen() { python3 "$work/large_data.py" "$@" "$([ "$1" = json ] && echo "$work/json.txt" || echo "$docdir")"; }

cx_start_cluster "$work" "$port" "shared_buffers = 128MB
max_wal_size = 4GB
checkpoint_timeout = 30min
autovacuum = off
jit = off
max_parallel_workers_per_gather = 0
max_parallel_maintenance_workers = 0
include_if_exists = 'bench_io.conf'"
psql_b() { cx_as_user psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
# debug_io_direct (16 and later) is a developer setting that
# --describe-config does not list: ask the running server
if [ "$(psql_b -At -c "SELECT count(*) FROM pg_settings WHERE name = 'debug_io_direct'")" = 1 ]; then
    direct_io=yes
    cold_how="server restarted before each timed query (shared_buffers empty), reads with debug_io_direct = data (no OS page cache); loads without it"
else
    direct_io=no
    cold_how="server restarted and the OS page cache dropped (sync; echo 3 > /proc/sys/vm/drop_caches) before each timed query: this server has no direct I/O for data"
fi
drop_caches() {
    sync
    echo 3 | cx_sudo tee /proc/sys/vm/drop_caches >/dev/null
}
# cold numbers depend on it (and a direct-I/O server's check below): fail
# now rather than measure warm caches
drop_caches || { echo "cannot drop the OS page cache (needs root): no cold numbers on $server_version" >&2; exit 1; }
echo "cold: $cold_how"
# restart MODE: the server stopped and started again (shared_buffers
# empty), for loading (MODE load: buffered I/O) or for a cold query (MODE
# cold: debug_io_direct = data where the server has it, else the OS page
# cache dropped while the server is down)
mode=load
restart() {
    mode=$1
    cx_as_user pg_ctl -D "$work/data" -m fast -w stop >/dev/null
    if [ "$mode" = cold ] && [ "$direct_io" = yes ]; then
        echo "debug_io_direct = data" > "$work/data/bench_io.conf"
    else
        : > "$work/data/bench_io.conf"
    fi
    if [ "$mode" = cold ] && [ "$direct_io" = no ]; then
        drop_caches
    fi
    cx_as_user pg_ctl -D "$work/data" -l "$work/server.log" -w start >/dev/null
}
# timed N PRE Q: EXPLAIN PRE untimed (catalogs and libraries loaded before
# the clock starts), then Q N times with \timing; one line "RESULT MS" each.
# A subshell with pipefail: a failing query must stop the script, not
# vanish into the pipe
timed() (
    set -o pipefail
    local n=$1 pre=$2 q=$3 args=() i res
    for i in $(seq 1 "$n"); do args+=(-c "$q"); done
    res=$(psql_b -At -c "EXPLAIN (COSTS OFF) $pre" -c '\timing on' "${args[@]}" |
          awk '/^Time: / { print prev, $2; next } { prev = $0 }')
    [ "$(echo "$res" | grep -c .)" -eq "$n" ] || { echo "timed: $n timings expected: $res" >&2; exit 1; }
    echo "$res"
)

psql_b <<'SQL'
CREATE EXTENSION compressx;
CREATE TABLE variants (ord int, label text, am text, lookups int);
CREATE TABLE calib (dataset text, label text, rows bigint, raw_bytes bigint, total_bytes bigint);
CREATE TABLE steps (dataset text, step int, mult int, copies int, rows bigint, raw_bytes bigint, gen_s numeric);
CREATE TABLE sizes (dataset text, step int, label text, table_bytes bigint, total_bytes bigint, load_ms numeric);
CREATE TABLE timings (dataset text, step int, label text, what text, temp text, run int, ms numeric, ops int, result text);
CREATE TABLE cache_check (dataset text, step int, label text, file_bytes bigint, cached_bytes bigint);
CREATE TABLE rss_log (t numeric, event text, step text, hwm_kb bigint, rss_kb bigint, anon_kb bigint, shmem_kb bigint);
CREATE TABLE rss_steps (step text, ord int, note text);
CREATE TABLE phases (phase text, seconds numeric);
-- N lookups by primary key reading the whole row, ids drawn from 1..maxid
-- with a fixed seed: every variant reads the same rows; the sum of the
-- lengths lets the script check that they agree
CREATE FUNCTION lookups(tbl regclass, maxid int, n int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE total bigint := 0; nm text; b text; k int; q text;
BEGIN
    q := format('SELECT name, body, n FROM %s WHERE id = $1', tbl);
    PERFORM setseed(0.42);
    FOR i IN 1..n LOOP
        EXECUTE q INTO nm, b, k USING 1 + floor(random() * maxid)::int;
        total := total + length(nm) + length(b) + k;
    END LOOP;
    RETURN total;
END $$;
SQL

# the variants this server can run
avail_ext=$(psql_b -At -c "SELECT string_agg(name, ' ') FROM pg_available_extensions")
v_label=(); v_am=(); v_ext=(); v_look=(); v_setup=(); v_train=(); skipped=""
while IFS='|' read -r label am ext look setup train; do
    trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; echo "${s%"${s##*[![:space:]]}"}"; }
    label=$(trim "$label"); am=$(trim "$am"); ext=$(trim "$ext"); look=$(trim "$look")
    setup=$(trim "$setup"); train=$(trim "$train")
    [ -n "$label" ] || continue
    if [ "$ext" != - ] && ! echo " $avail_ext " | grep -q " $ext "; then
        skipped="$skipped; $label (extension $ext not installed in this server)"
        continue
    fi
    if [ "$ext" != - ]; then psql_b -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS $ext"; fi
    [ "$look" = - ] && look=$LOOKUPS
    [ "$look" -gt "$LOOKUPS" ] && look=$LOOKUPS
    v_label+=("$label"); v_am+=("$am"); v_ext+=("$ext"); v_look+=("$look")
    v_setup+=("$setup"); v_train+=("$train")
    psql_b -c "INSERT INTO variants VALUES (${#v_label[@]}, '$label', '$am', $look)"
done <<<"$variants"
skipped=${skipped#; }
[ -n "$skipped" ] && echo "left out: $skipped"
nv=${#v_label[@]}
tname() { echo "l_$1_$(echo "$2" | sed 's/[^A-Za-z0-9]/_/g')"; }

# Calibration and the dictionaries: one copy of each data set (copy 0: the
# measured copies are 1 and up) into every variant; stored size per raw
# byte, then training where the variant trains, then TRUNCATE.
declare -A copy_raw copy_rows copy_file copies1
for ds in $DATASETS; do
    gen "$ds" 0 0 1 > "$work/$ds.sample"
    copy_file[$ds]=$(stat -c %s "$work/$ds.sample")
    for i in $(seq 0 $((nv - 1))); do
        t=$(tname "$ds" "${v_label[$i]}")
        psql_b -c "CREATE TABLE $t (id int PRIMARY KEY, name text, body text, n int) USING ${v_am[$i]}"
        psql_b -c "${v_setup[$i]//%t/$t}" >/dev/null
        psql_b -c "COPY $t FROM '$work/$ds.sample'"
        psql_b -c "INSERT INTO calib SELECT '$ds', '${v_label[$i]}', count(*), sum(octet_length(body)), pg_total_relation_size('$t') FROM $t"
        [ "${v_train[$i]}" != - ] && psql_b -c "${v_train[$i]//%t/$t}" >/dev/null
        psql_b -c "TRUNCATE $t"
    done
    rm -f "$work/$ds.sample"
    copy_raw[$ds]=$(psql_b -At -c "SELECT max(raw_bytes) FROM calib WHERE dataset = '$ds'")
    copy_rows[$ds]=$(psql_b -At -c "SELECT max(rows) FROM calib WHERE dataset = '$ds'")
    copies1[$ds]=$(python3 -c "import math; print(max(1, math.ceil($SCALE_GB * 2**30 / ${copy_raw[$ds]})))")
    echo "$ds: ${copy_rows[$ds]} rows, $((copy_raw[$ds] / 1048576)) MiB a copy; 1x = ${copies1[$ds]} copies"
done

# Disk: refuse before writing anything large
avail=$(df -B1 --output=avail "$work" | tail -n 1 | tr -d ' ')
need=0; report=""
for ds in $DATASETS; do
    raw4=$((4 * copies1[$ds] * copy_raw[$ds]))
    tables=$(psql_b -At -c "SELECT round(1.2 * $raw4 * sum(total_bytes::numeric / raw_bytes)) FROM calib WHERE dataset = '$ds'")
    file=$((2 * copies1[$ds] * copy_file[$ds]))
    n=$((tables + file + 5 * 1073741824))
    report="$report  $ds: tables at 4x $((tables / 1000000000)) GB (1.2 x calibrated), step-3 file $((file / 1000000000)) GB, WAL 5 GB: $((n / 1000000000)) GB
"
    [ "$n" -gt "$need" ] && need=$n
done
if [ "$RSS_ROWS" -gt 0 ]; then
    # as if stored uncompressed (bytes of a json row in the generator's
    # source), twice: recompress_table writes a new copy before it drops
    # the old one
    n=$((2 * RSS_ROWS * $(stat -c %s "$work/json.txt") / $(wc -l < "$work/json.txt") + 5 * 1073741824))
    report="$report  memory test: $RSS_ROWS json rows, twice (recompress), WAL 5 GB: $((n / 1000000000)) GB
"
    [ "$n" -gt "$need" ] && need=$n
fi
printf 'disk: need about %s GB at the peak, %s GB free in %s\n%s' "$((need / 1000000000))" "$((avail / 1000000000))" "$work" "$report"
if [ "$need" -gt "$avail" ]; then
    echo "large_bench.sh: not enough disk for --scale-gb $SCALE_GB: about $((need / 1000000000)) GB needed, $((avail / 1000000000)) GB free; nothing was loaded" >&2
    exit 1
fi

# ---- the data sets, one after the other ----
for ds in $DATASETS; do
    t_ds=$(date +%s)
    done_copies=0
    step=0
    for mult in 1 2 4; do
        step=$((step + 1))
        first=$((done_copies + 1)); last=$((mult * copies1[$ds]))
        first_id=$((done_copies * copy_rows[$ds] + 1))
        echo "== $ds step $step (${mult}x): copies $first-$last"
        t0=$(date +%s.%N)
        gen "$ds" "$first" "$last" "$first_id" > "$work/$ds.copy"
        chmod 644 "$work/$ds.copy"
        gen_s=$(echo "$(date +%s.%N) - $t0" | bc)
        [ "$mode" = load ] || restart load
        for i in $(seq 0 $((nv - 1))); do
            t=$(tname "$ds" "${v_label[$i]}")
            ms=$(psql_b -At -c '\timing on' -c "COPY $t FROM '$work/$ds.copy'" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
            echo "   load ${v_label[$i]}: $ms ms"
            # hint bits and the visibility map now, not in the first timed
            # scan (heap would write pages during it); VACUUM reads only the
            # pages this step added
            psql_b -c "VACUUM $t"
            psql_b -c "INSERT INTO sizes SELECT '$ds', $step, '${v_label[$i]}', pg_table_size('$t'), pg_total_relation_size('$t'), $ms"
        done
        rm -f "$work/$ds.copy"
        done_copies=$last
        rows=$((done_copies * copy_rows[$ds]))
        psql_b -c "INSERT INTO steps VALUES ('$ds', $step, $mult, $done_copies, $rows, $done_copies::bigint * ${copy_raw[$ds]}, $gen_s)"
        psql_b -c "CHECKPOINT"

        # cold queries; on a direct-I/O server the OS cache is emptied once
        # here, so that the check below sees only what the queries read
        # through it
        [ "$direct_io" = yes ] && drop_caches
        for what in count narrow readall lookups; do
            for run in $(seq 1 "$RUNS"); do
                for i in $(seq 0 $((nv - 1))); do
                    t=$(tname "$ds" "${v_label[$i]}")
                    ops=1; warm=no
                    case $what in
                        count) q="SELECT count(*) FROM $t"; pre=$q ;;
                        narrow) q="SELECT sum(n) FROM $t"; pre=$q ;;
                        readall) q="SELECT sum(length(body)) FROM $t"; pre=$q
                                 [ "$direct_io" = no ] && warm=yes ;;
                        lookups) ops=${v_look[$i]}; warm=yes
                                 q="SELECT lookups('$t', $rows, $ops)"
                                 pre="SELECT * FROM $t WHERE id = 1" ;;
                    esac
                    restart cold
                    res=$(timed "$([ "$warm" = yes ] && echo 2 || echo 1)" "$pre" "$q")
                    temp=cold
                    while read -r value ms; do
                        psql_b -c "INSERT INTO timings VALUES ('$ds', $step, '${v_label[$i]}', '$what', '$temp', $run, $ms, $ops, '$value')"
                        temp=warm
                    done <<<"$res"
                    echo "   $what ${v_label[$i]}: $(echo "$res" | awk '{ printf "%s ms ", $2 }')"
                done
            done
        done
        if [ "$direct_io" = yes ]; then
            # what the OS cache holds of each table's files (main, TOAST,
            # their indexes, forks) after the cold queries: direct I/O read
            # them without it
            for i in $(seq 0 $((nv - 1))); do
                t=$(tname "$ds" "${v_label[$i]}")
                files=$(psql_b -At -c "SELECT pg_relation_filepath(oid) FROM pg_class
                    WHERE oid = '$t'::regclass OR oid = (SELECT reltoastrelid FROM pg_class WHERE oid = '$t'::regclass)
                       OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN ('$t'::regclass,
                                  (SELECT reltoastrelid FROM pg_class WHERE oid = '$t'::regclass)))")
                sizes=$(cd "$work/data" && for f in $files; do ls "$f" "$f".[0-9]* "$f"_* 2>/dev/null; done |
                        xargs -r fincore -b -n -o RES,SIZE | awk '{ r += $1; s += $2 } END { print r + 0, s + 0 }')
                psql_b -c "INSERT INTO cache_check VALUES ('$ds', $step, '${v_label[$i]}', ${sizes#* }, ${sizes% *})"
            done
        fi
        # queries of every variant must agree (lookups: among variants
        # doing as many)
        bad=$(psql_b -At -c "SELECT string_agg(DISTINCT what, ', ') FROM (SELECT what, ops FROM timings
                 WHERE dataset = '$ds' AND step = $step GROUP BY what, ops HAVING count(DISTINCT result) > 1) t")
        [ -z "$bad" ] || { echo "large_bench.sh: $ds step $step: variants disagree on: $bad" >&2; exit 1; }
    done
    for i in $(seq 0 $((nv - 1))); do
        psql_b -c "DROP TABLE $(tname "$ds" "${v_label[$i]}")"
    done
    psql_b -c "INSERT INTO phases VALUES ('$ds', $(date +%s) - $t_ds)"
done

# ---- memory of one backend through COPY, scan and recompress ----
if [ "$RSS_ROWS" -gt 0 ]; then
    t_rss=$(date +%s)
    [ "$mode" = load ] || restart load
    echo "== memory: $RSS_ROWS json rows into compressx zstd-3 with a dictionary"
    gen json 0 0 1 > "$work/json.sample"
    chmod 644 "$work/json.sample"
    psql_b -c "CREATE TABLE rss_json (id int PRIMARY KEY, name text, body text, n int) USING compressx" \
           -c "SELECT compressx.set_column_codec('rss_json', 'body', 'zstd', 3)" \
           -c "COPY rss_json FROM '$work/json.sample'" \
           -c "SELECT compressx.train_dictionary('rss_json', 'body')" -c "TRUNCATE rss_json" >/dev/null
    rm -f "$work/json.sample"
    jrows=$(wc -l < "$work/json.txt")
    copies=$(( (RSS_ROWS + jrows - 1) / jrows ))
    # the helper the session calls between steps: (mark|sample) as the
    # server's user, appending to one log
    cat > "$work/rss.sh" <<'EOF'
#!/bin/sh
# rss.sh mark EVENT STEP: reset the peak at "begin", log the counters
# rss.sh sampler: log RssAnon every 100 ms until the backend ends
pid=$CX_BPID log=$CX_RSSLOG
line() {
    awk -v t="$(date +%s.%N)" -v e="$1" -v s="$2" '
        /^VmHWM:/ { h = $2 } /^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^RssShmem:/ { m = $2 }
        END { printf "%s,%s,%s,%s,%s,%s,%s\n", t, e, s, h, r, a, m }' "/proc/$pid/status"
}
case $1 in
    mark) [ "$2" = begin ] && echo 5 > "/proc/$pid/clear_refs"
          line "$2" "$3" >> "$log" ;;
    sampler) while [ -d "/proc/$pid" ]; do line sample - >> "$log" 2>/dev/null || break; sleep 0.1; done ;;
esac
EOF
    chmod 755 "$work/rss.sh"
    : > "$work/rss.log"; chown "$cx_user" "$work/rss.log"
    psql_b -c "INSERT INTO rss_steps VALUES
        ('copy', 1, 'COPY of $RSS_ROWS rows (COPY FROM PROGRAM: the generator, no file)'),
        ('scan', 2, 'SELECT sum(length(body)): every value decoded'),
        ('recompress', 3, 'compressx.recompress_table: every value rewritten, then the primary key rebuilt'),
        ('recompress (1MB)', 4, 'the same with maintenance_work_mem = 1MB: the rewrite without the index sort''s memory')"
    node_before=$(psql_b -At -c "SELECT pg_relation_filenode('rss_json')")
    psql_b -v rsssh="$work/rss.sh" -v rsslog="$work/rss.log" -v prog="python3 $work/large_data.py json 1 $copies 1 $work/json.txt | head -n $RSS_ROWS" <<'SQL'
SELECT pg_backend_pid() AS pid \gset
\setenv CX_BPID :pid
\setenv CX_RSSLOG :rsslog
\setenv CX_RSSSH :rsssh
-- the baseline: compressx loaded, the table opened
\o /dev/null
SELECT count(*) FROM rss_json;
\! "$CX_RSSSH" mark baseline -
\! "$CX_RSSSH" sampler </dev/null >/dev/null 2>&1 & echo $! > "$(dirname "$CX_RSSLOG")/sampler.pid"
\! "$CX_RSSSH" mark begin copy
COPY rss_json FROM PROGRAM :'prog';
\! "$CX_RSSSH" mark end copy
\! "$CX_RSSSH" mark begin scan
SELECT sum(length(body)) FROM rss_json;
\! "$CX_RSSSH" mark end scan
\o
\! "$CX_RSSSH" mark begin recompress
SELECT * FROM compressx.recompress_table('rss_json') WHERE column_name = 'body';
\! "$CX_RSSSH" mark end recompress
SET maintenance_work_mem = '1MB';
\! "$CX_RSSSH" mark begin "recompress (1MB)"
SELECT * FROM compressx.recompress_table('rss_json') WHERE column_name = 'body';
\! "$CX_RSSSH" mark end "recompress (1MB)"
RESET maintenance_work_mem;
SQL
    rm -f "$work/sampler.pid"
    # recompress_table counts values whose stored form changed: re-encoded
    # with the same dictionary and level, none does; a new relfilenode shows
    # the rewrite took place
    node_after=$(psql_b -At -c "SELECT pg_relation_filenode('rss_json')")
    [ "$node_after" != "$node_before" ] || { echo "large_bench.sh: recompress_table did not rewrite rss_json" >&2; exit 1; }
    got=$(psql_b -At -c "SELECT count(*) FROM rss_json")
    [ "$got" -eq "$RSS_ROWS" ] || { echo "large_bench.sh: memory test loaded $got rows, not $RSS_ROWS" >&2; exit 1; }
    psql_b -c "\\copy rss_log FROM '$work/rss.log' (FORMAT csv)"
    psql_b -c "DROP TABLE rss_json"
    psql_b -c "INSERT INTO phases VALUES ('memory', $(date +%s) - $t_rss)"
fi

# ---- results ----
total_min=$(( ($(date +%s) - t_start + 30) / 60 ))
psql_b -v out="$work" -v server="$server_version" -v cold="$cold_how" -v scale="$SCALE_GB" \
    -v machine="$(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM, $(uname -r), $(date -u +%F)" \
    -v total_min="$total_min" -v runs="$RUNS" -v lookups="$LOOKUPS" -v skipped="$skipped" <<'SQL'
\pset footer off
CREATE VIEW ref AS SELECT label FROM variants WHERE ord = 1;
-- per-op time against the reference's in the same run and step: medians
CREATE VIEW ratios AS
SELECT t.dataset, t.step, t.label, t.what, t.temp,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY (t.ms / t.ops) / (h.ms / h.ops)) AS x,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms / t.ops) AS ms_per_op
FROM timings t JOIN timings h ON h.dataset = t.dataset AND h.step = t.step AND h.what = t.what
                              AND h.temp = t.temp AND h.run = t.run AND h.label = (SELECT label FROM ref)
GROUP BY 1, 2, 3, 4, 5;
CREATE VIEW summary AS
SELECT s.dataset, s.step, st.mult, v.ord, s.label, v.am,
       round(s.table_bytes / 1048576.0) AS mb,
       round(s.table_bytes::numeric / r.table_bytes, 2) AS size_x,
       round(s.load_ms / 1000, 1) AS load_s,
       (SELECT round(x::numeric, 2) FROM ratios x WHERE (x.dataset, x.step, x.label, x.what, x.temp) = (s.dataset, s.step, s.label, 'count', 'cold')) AS count_x,
       (SELECT round(x::numeric, 2) FROM ratios x WHERE (x.dataset, x.step, x.label, x.what, x.temp) = (s.dataset, s.step, s.label, 'narrow', 'cold')) AS narrow_x,
       (SELECT round(x::numeric, 2) FROM ratios x WHERE (x.dataset, x.step, x.label, x.what, x.temp) = (s.dataset, s.step, s.label, 'readall', 'cold')) AS read_x,
       (SELECT round(x::numeric, 2) FROM ratios x WHERE (x.dataset, x.step, x.label, x.what, x.temp) = (s.dataset, s.step, s.label, 'lookups', 'cold')) AS lookup_x,
       (SELECT round((ms_per_op / 1000)::numeric, 1) FROM ratios x WHERE (x.dataset, x.step, x.label, x.what, x.temp) = (s.dataset, s.step, s.label, 'readall', 'cold')) AS read_s,
       (SELECT round(ms_per_op::numeric, 2) FROM ratios x WHERE (x.dataset, x.step, x.label, x.what, x.temp) = (s.dataset, s.step, s.label, 'lookups', 'cold')) AS lookup_ms,
       (SELECT round(x::numeric, 2) FROM ratios x WHERE (x.dataset, x.step, x.label, x.what, x.temp) = (s.dataset, s.step, s.label, 'readall', 'warm')) AS read_warm_x,
       (SELECT round(ms_per_op::numeric, 2) FROM ratios x WHERE (x.dataset, x.step, x.label, x.what, x.temp) = (s.dataset, s.step, s.label, 'lookups', 'warm')) AS lookup_warm_ms,
       v.lookups
FROM sizes s JOIN variants v USING (label) JOIN steps st USING (dataset, step)
     JOIN sizes r ON r.dataset = s.dataset AND r.step = s.step AND r.label = (SELECT label FROM ref);
-- the goal: heap_ms / cx_ms >= 1 + 0.5 * (heap_MB / cx_MB - 1) for reading every value, cold
CREATE VIEW goal AS
SELECT dataset, step, mult, label, round(size_ratio, 2) AS size_ratio, round(speedup, 2) AS speedup,
       round(1 + 0.5 * (size_ratio - 1), 2) AS needed, speedup >= 1 + 0.5 * (size_ratio - 1) AS met
FROM (SELECT s.dataset, s.step, st.mult, s.label,
             r.table_bytes::numeric / s.table_bytes AS size_ratio, (1 / x.x)::numeric AS speedup
      FROM sizes s JOIN variants v USING (label) JOIN steps st USING (dataset, step)
           JOIN sizes r ON r.dataset = s.dataset AND r.step = s.step AND r.label = (SELECT label FROM ref)
           JOIN ratios x ON (x.dataset, x.step, x.label, x.what, x.temp) = (s.dataset, s.step, s.label, 'readall', 'cold')
      WHERE v.am = 'compressx') g;
CREATE VIEW rss AS
WITH base AS (SELECT anon_kb, rss_kb FROM rss_log WHERE event = 'baseline'),
     b AS (SELECT step, t AS t0 FROM rss_log WHERE event = 'begin'),
     e AS (SELECT step, t AS t1, hwm_kb, anon_kb AS end_anon FROM rss_log WHERE event = 'end')
SELECT rs.ord, b.step, rs.note, round(e.t1 - b.t0, 1) AS seconds,
       round(e.hwm_kb / 1024.0, 1) AS hwm_mb,
       round((SELECT max(anon_kb) FROM rss_log l WHERE l.t BETWEEN b.t0 AND e.t1 AND l.anon_kb IS NOT NULL) / 1024.0, 1) AS anon_peak_mb,
       round(((SELECT max(anon_kb) FROM rss_log l WHERE l.t BETWEEN b.t0 AND e.t1 AND l.anon_kb IS NOT NULL) - base.anon_kb) / 1024.0, 1) AS anon_growth_mb,
       round((e.hwm_kb - base.rss_kb) / 1024.0, 1) AS hwm_growth_mb,
       (SELECT count(*) FROM rss_log l WHERE l.event = 'sample' AND l.t BETWEEN b.t0 AND e.t1) AS samples
FROM b JOIN e USING (step) JOIN rss_steps rs USING (step) CROSS JOIN base;

\echo
\echo '== results (x: time against heap pglz in the same step, cold unless marked warm)'
SELECT dataset, mult || 'x' AS scale, label, mb, size_x, load_s, count_x, narrow_x, read_x, lookup_x, read_s, lookup_ms, read_warm_x, lookup_warm_ms
FROM summary ORDER BY dataset, step, ord;
\echo '== goal: reading every value (cold) heap_ms / cx_ms >= 1 + 0.5 * (heap_MB / cx_MB - 1)'
SELECT dataset, mult || 'x' AS scale, label, size_ratio, speedup, needed, CASE WHEN met THEN 'met' ELSE 'NOT MET' END AS result
FROM goal ORDER BY dataset, step, label;
SELECT EXISTS (SELECT FROM rss) AS has_rss \gset
\if :has_rss
\echo '== memory of one backend (MB); goal: private memory (RssAnon) within 20 MB of the start'
SELECT step, seconds, hwm_mb, hwm_growth_mb, anon_peak_mb, anon_growth_mb, samples,
       CASE WHEN anon_growth_mb <= 20 THEN 'met' ELSE 'NOT MET' END AS result FROM rss ORDER BY ord;
\endif

\t on
SELECT format('direct I/O check: the OS page cache held at most %s MB of a table''s files after the cold queries', round(max(cached_bytes) / 1048576.0, 1))
FROM cache_check HAVING count(*) > 0;
\t off

\pset format unaligned
\pset tuples_only on
\o :out/report.md
SELECT format('# compressx: data larger than memory, %s', :'server');
SELECT '';
SELECT format('Run of `test/bench/large_bench.sh --scale-gb %s --runs %s --lookups %s` (%s), %s minutes in all (%s).',
              :'scale', :'runs', :'lookups', :'machine', :'total_min',
              (SELECT string_agg(format('%s %s min', phase, round(seconds / 60)), ', ') FROM phases));
SELECT '';
SELECT format('shared_buffers = 128MB; cold: %s. Parallel query, JIT and autovacuum off.', :'cold');
SELECT '';
SELECT 'MB: pg_table_size (heap + TOAST; columnar: its storage; no indexes). size x: MB against heap pglz. load s: COPY of the rows that step added (1x, then 1x, then 2x). '
    || 'count, narrow (sum of a small int column), read-all (sum(length(body))) and lookups (primary-key lookups reading the whole row, the same ids for every variant; compared per lookup): '
    || 'cold time against heap pglz in the same step (x: lower is faster); read-all s and lookup ms: cold, absolute; warm: the same query again at once'
    || CASE WHEN (SELECT count(*) FROM timings WHERE what = 'readall' AND temp = 'warm') = 0 THEN ' (read-all warm not measured under direct I/O: 128MB of shared_buffers hold nothing of these tables).' ELSE '.' END;
SELECT format('Variants doing fewer lookups: %s.', string_agg(format('%s %s', label, lookups), ', '))
FROM variants WHERE lookups < :lookups HAVING count(*) > 0;
SELECT format('Left out: %s.', :'skipped') WHERE :'skipped' <> '';
SELECT * FROM (
  SELECT line FROM (
    SELECT st.dataset, st.step, 0 AS k, format(E'\n## %s, %sx: %s rows, %s GiB raw (%s copies; data file written in %s s)\n\n| variant | MB | size x | load s | count x | narrow x | read-all x | lookups x | read-all s | lookup ms | warm read-all x | warm lookup ms |\n|---|---|---|---|---|---|---|---|---|---|---|---|',
                   st.dataset, st.mult, st.rows, round(st.raw_bytes / 1073741824.0, 2), st.copies, round(st.gen_s)) AS line
    FROM steps st
    UNION ALL
    SELECT dataset, step, ord, format('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |', label, mb, size_x, load_s, count_x, narrow_x,
                                      read_x, lookup_x, read_s, lookup_ms, coalesce(read_warm_x::text, '-'), lookup_warm_ms)
    FROM summary) t ORDER BY dataset, step, k) u;
SELECT '';
SELECT '## Goal: scans that read compressed columns faster than heap by at least half of the size ratio';
SELECT '';
SELECT 'Reading every value, cold: speedup = heap pglz ms / compressx ms, size ratio = heap pglz MB / compressx MB; met when speedup >= 1 + 0.5 * (size ratio - 1), i.e. at least half of the size advantage shows as speed (a table half the size must read at least 1.5x faster).';
SELECT '';
SELECT '| data | scale | variant | size ratio | speedup | needed | result |';
SELECT '|---|---|---|---|---|---|---|';
SELECT format('| %s | %sx | %s | %s | %s | %s | %s |', dataset, mult, label, size_ratio, speedup, needed, CASE WHEN met THEN 'met' ELSE '**NOT MET**' END)
FROM goal ORDER BY dataset, step, label;
SELECT '';
SELECT format('Overall: %s.', CASE WHEN bool_and(met) THEN 'met at every scale by every compressx variant'
                                   ELSE 'NOT MET (' || string_agg(format('%s %sx %s', dataset, mult, label), ', ') FILTER (WHERE NOT met) || ')' END)
FROM goal;
SELECT E'\n## Memory of one backend (compressx zstd-3 with a dictionary)\n' WHERE EXISTS (SELECT FROM rss);
SELECT 'VmHWM: peak of all its resident memory during the step (reset before it with clear_refs), shared memory included: it grows with every page of shared_buffers the backend touches. '
    || 'RssAnon: its private memory, sampled every 100 ms; growth against its value before the first step (after opening the table). '
    || 'Goal: the private memory stays within 20 MB of the start through every step.' WHERE EXISTS (SELECT FROM rss);
SELECT E'\n| step | what | s | VmHWM MB | VmHWM - start VmRSS MB | RssAnon peak MB | RssAnon growth MB | samples | within 20 MB |\n|---|---|---|---|---|---|---|---|---|'
WHERE EXISTS (SELECT FROM rss);
SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s | %s |', step, note, seconds, hwm_mb, hwm_growth_mb, anon_peak_mb, anon_growth_mb, samples,
              CASE WHEN anon_growth_mb <= 20 THEN 'met' ELSE '**NOT MET**' END)
FROM rss ORDER BY ord;
SELECT format(E'\nStart: VmRSS %s MB, RssAnon %s MB. Overall: %s. recompress_table rebuilds the table''s indexes after the rewrite, as VACUUM FULL does, and a btree build sorts in up to maintenance_work_mem (%s by default); the last step shows the rewrite with that sort limited to 1MB.',
              round(rss_kb / 1024.0, 1), round(anon_kb / 1024.0, 1),
              CASE WHEN (SELECT bool_and(anon_growth_mb <= 20) FROM rss) THEN 'met'
                   ELSE 'NOT MET (' || (SELECT string_agg(step, ', ' ORDER BY ord) FROM rss WHERE anon_growth_mb > 20) || ')' END,
              current_setting('maintenance_work_mem'))
FROM rss_log WHERE event = 'baseline';
SELECT E'\n## Direct I/O check\n' WHERE EXISTS (SELECT FROM cache_check);
SELECT format('After the cold queries of each step, the OS page cache held %s MB of the tables'' files (heap, TOAST, indexes, all forks; %s MB in all at 4x): the reads bypassed it.',
              round(max(cached_bytes) / 1048576.0, 1), (SELECT round(sum(file_bytes) / 1048576.0) FROM cache_check WHERE step = (SELECT max(step) FROM cache_check)))
FROM cache_check HAVING count(*) > 0;
\o
\o :out/report.csv
\pset fieldsep ','
\pset tuples_only off
SELECT s.dataset, s.step, st.mult, round(st.raw_bytes / 1073741824.0, 2) AS raw_gib, s.label, v.ord, s.table_bytes, s.load_ms,
       t.what, t.temp, t.run, t.ms, t.ops
FROM sizes s JOIN steps st USING (dataset, step) JOIN variants v USING (label)
     JOIN timings t ON (t.dataset, t.step, t.label) = (s.dataset, s.step, s.label)
ORDER BY 1, 2, v.ord, t.what, t.temp, t.run;
\o
SQL
cp "$work/report.md" "$out/$base.md"
cp "$work/report.csv" "$out/$base.csv"

venv=/opt/compressx-cache/venv-bench
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" && "$venv/bin/pip" install -q matplotlib
fi
"$venv/bin/python" "$cx_root/test/bench/large_chart.py" "$out/$base.csv" "$out/$base.png" "$server_version"
echo "written: $out/$base.md, $base.csv, $base.png ($(( ($(date +%s) - t_start + 30) / 60 )) min)"
