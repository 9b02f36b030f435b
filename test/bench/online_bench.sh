#!/usr/bin/env bash
# Benchmark of compressx.recompress_online against recompress_table and
# pg_repack under a client load (issue 12; not part of the pass/fail suite).
#
#   bash test/bench/online_bench.sh
#
# Data: docs, a table of JSON documents of 2-6 kB of text each (id, title,
# a small counter n, updated, body), made of PostgreSQL's HTML documentation
# with its tags stripped (postgresql-doc-NN, cut into 1 kB pieces; each
# document a run of 2-6 consecutive pieces with its own metadata), loaded
# until heap + TOAST + index reach CX_BENCH_MB (default 1024 MB).  Heap,
# default compression pglz, primary key on id only.  Built once into a
# template database (VACUUM FREEZE ANALYZE); every measurement runs on a
# fresh copy of it (CREATE DATABASE .. STRATEGY FILE_COPY: the same files,
# byte for byte, each time).  The compressx case: the same table turned
# into a compressx table with body in zstd 3 (set_column_codec, then ALTER
# TABLE .. SET ACCESS METHOD), in a second template.
#
# Load: CX_BENCH_CLIENTS (2) pgbench clients running three scripts drawn
# by weight: UPDATE docs SET n = n + 1, updated = now() of a random id (4),
# INSERT of a new document (1; raw text from a table of 4 000 uncompressed
# documents, so the server compresses it with docs' current setting),
# SELECT body of a random id (15).  Two loads: unthrottled ("full"), and
# paced (pgbench -R) at CX_BENCH_PACE (50) % of the tps the unthrottled
# clients reached alone: on a machine with few cores, unthrottled clients
# and the rewrite compete for the CPU, paced ones show whether the clients
# are still served what they ask for.
#
# Per table case (heap pglz -> lz4; compressx zstd 3 -> lz4) and load, one
# run each of:
#   baseline  the load alone for CX_BENCH_BASE_S (40) seconds
#   online    CALL compressx.recompress_online('docs', 'lz4')
#   offline   SELECT * FROM compressx.recompress_table('docs', 'lz4')
#   pg_repack pg_repack -t docs (rewrites without changing compression)
# each with the load running from CX_BENCH_WARMUP_S (10) seconds before to
# CX_BENCH_TAIL_S (5) seconds after the rewrite.  The window is the
# rewrite's wall time; measured in it: client tps (pgbench's per-transaction
# log, transactions ending in the window) against the baseline's, the
# longest client statement (each script is one statement; any statement
# overlapping the window; with -R without the schedule lag) and the 99th
# percentile of those statements, peak extra disk (du of the cluster's
# base/ every 0.5 s, minus its size at the start of the window; includes
# the clients' inserts, see the baseline rows), WAL (pg_current_wal_lsn
# difference over the window, all sessions; full-page images in it from
# pg_waldump --stats: every run starts right after a checkpoint).  After the
# run (clients stopped): the table's total size (pg_total_relation_size),
# again after a plain VACUUM, its stored bytes per row after VACUUM against
# the offline rewrite's of the same load, the table's access method and the
# stored methods of body (column_stats), and whether the bodies of the
# template's rows are unchanged (md5 against the template's).
#
# Writes bench-results/online/NN.md (NN: the major), NN.csv,
# NN-timeline.csv (transactions per second) and the chart chart.svg
# (test/bench/online_chart.py).  Default size: about 20 minutes on 2 cores.
#
#   CX_BENCH_PGBIN=DIR  the PostgreSQL installation whose programs are in DIR
#                       (default Debian's: /usr/lib/postgresql/15/bin);
#                       compressx is built in a private copy of the tree
#                       and installed there.  pg_repack comes from Debian's
#                       postgresql-NN-repack (installed if missing); for an
#                       installation other than Debian's its library,
#                       extension files and client are copied into it.
#   CX_BENCH_PORT       port of the throwaway cluster (55470)
#   CX_BENCH_MB         table size to reach, MB (1024)
#   CX_BENCH_CASES      "heap compressx" (either or both)
#   CX_BENCH_LOADS      "full paced" (paced needs full's baseline: run first)
#   CX_BENCH_METHODS    "online offline pg_repack" (baseline always runs)
set -eu
. "$(dirname "$0")/../lib.sh"

MB=${CX_BENCH_MB:-1024}
PORT=${CX_BENCH_PORT:-55470}
CLIENTS=${CX_BENCH_CLIENTS:-2}
BASE_S=${CX_BENCH_BASE_S:-40}
WARMUP_S=${CX_BENCH_WARMUP_S:-10}
TAIL_S=${CX_BENCH_TAIL_S:-5}
CASES=${CX_BENCH_CASES:-heap compressx}
METHODS=${CX_BENCH_METHODS:-online offline pg_repack}
LOADS=${CX_BENCH_LOADS:-full paced}
PACE=${CX_BENCH_PACE:-50}

cx_install_deps
cx_use_pg "${CX_BENCH_PGBIN:-/usr/lib/postgresql/$PG_MAJOR/bin}"
major=$("$PGBIN/pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
out="$cx_root/bench-results/online"
mkdir -p "$out"
bench_start=$(date +%s)

# compressx, built in a copy of the tree (the checkout stays clean)
cx_log "building and installing compressx into $("$PGBIN/pg_config" --pkglibdir)"
cx_build_install_copy

# pg_repack: Debian's package installs into Debian's tree only
if ! dpkg-query -W -f='${Status}' "postgresql-$major-repack" 2>/dev/null | grep -q "ok installed"; then
    cx_log "installing postgresql-$major-repack"
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "postgresql-$major-repack" >/dev/null ||
        { cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null &&
          cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "postgresql-$major-repack" >/dev/null; }
fi
deb=/usr/lib/postgresql/$major
pkglib=$("$PGBIN/pg_config" --pkglibdir)
ext=$("$PGBIN/pg_config" --sharedir)/extension
if [ "$pkglib" != "$deb/lib" ]; then
    cx_log "copying pg_repack into $PGBIN/.."
    cx_sudo cp "$deb/lib/pg_repack.so" "$pkglib/"
    cx_sudo cp /usr/share/postgresql/"$major"/extension/pg_repack.control \
        /usr/share/postgresql/"$major"/extension/pg_repack--*.sql "$ext/"
    cx_sudo cp "$deb/bin/pg_repack" "$PGBIN/"
fi
repack_version=$("$PGBIN/pg_repack" --version)
echo "server: $("$PGBIN/postgres" --version); $repack_version"

work=$(cx_workdir online-bench)
cx_start_cluster "$work" "$PORT"
trap 'kill $(jobs -p) 2>/dev/null || true; cx_stop_cluster "$work"; rm -rf "$work"' EXIT
# lib.sh's settings, then these (the later line wins); fsync stays off as
# in every throwaway cluster here: WAL is written and counted all the same
cat >>"$work/data/postgresql.conf" <<CONF
shared_buffers = 1GB
max_wal_size = 16GB
checkpoint_timeout = 30min
maintenance_work_mem = 256MB
autovacuum = on
jit = off
max_connections = 50
CONF
cx_as_user pg_ctl -D "$work/data" -l "$work/server.log" -w restart >/dev/null
data=$work/data

psql_d() { local db=$1; shift; cx_as_user psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
val() { local db=$1; shift; cx_as_user psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -c "$*"; }
now() { date +%s.%N; }

# results, in a database of their own
psql_d postgres -c "CREATE DATABASE results"
psql_d results <<'SQL'
CREATE TABLE runs (tcase text, load text, rate int, method text, ord int, t0 float8, t1 float8,
                   wal_bytes numeric, wal_fpi_bytes numeric, du0 bigint, size_before bigint, size_after bigint, size_vacuum bigint,
                   rows_after bigint, methods_after jsonb, am_after text, values_ok boolean, note text,
                   PRIMARY KEY (tcase, load, method));
CREATE TABLE xacts (tcase text, load text, method text, script int, t_end float8, lat float8);
CREATE INDEX ON xacts (tcase, load, method, t_end);
CREATE TABLE disk (tcase text, load text, method text, t float8, base_bytes bigint);
CREATE TABLE templates (tcase text PRIMARY KEY, total_bytes bigint, table_bytes bigint, nrows bigint,
                        raw_bytes bigint, methods jsonb, checksum text, build_s float8);
SQL

# The template of the heap case
cx_log "building the heap table (target $MB MB)"
tb=$(now)
psql_d postgres -c "CREATE DATABASE tpl_heap"
psql_d tpl_heap -v docdir="/usr/share/doc/postgresql-doc-$PG_MAJOR/html" -v mb="$MB" <<'SQL'
CREATE EXTENSION compressx;
CREATE EXTENSION pg_repack;
-- the documentation as text: tags stripped, spaces collapsed, 1 kB pieces
CREATE TEMP TABLE pages AS
SELECT f, coalesce(substring(h FROM '<title>([^<]*)</title>'), f) AS title,
       regexp_replace(regexp_replace(regexp_replace(h, '<[^>]*>', ' ', 'g'), '&[a-z]+;', ' ', 'g'),
                      '\s+', ' ', 'g') AS txt
FROM (SELECT f, pg_read_file(:'docdir' || '/' || f) AS h FROM pg_ls_dir(:'docdir') f
      WHERE f LIKE '%.html') s;
CREATE TABLE pieces (k int PRIMARY KEY, title text, piece text);
INSERT INTO pieces
SELECT row_number() OVER (ORDER BY f, i), title, substr(txt, i * 1000 + 1, 1000)
FROM pages, generate_series(0, (length(txt) - 1) / 1000) i;
-- document g: pieces s .. s + m - 1 (2-6 kB) with metadata, as JSON text
CREATE FUNCTION doc(g bigint, OUT title text, OUT body text) LANGUAGE sql STABLE AS $$
    WITH p AS (SELECT 1 + (hashint8(g) & 2147483647) % ((SELECT max(k) FROM pieces) - 6) AS s,
                      2 + (hashint8(g * 7 + 1) & 2147483647) % 5 AS m)
    SELECT (SELECT pc.title FROM pieces pc WHERE pc.k = p.s),
           json_build_object(
               'id', g,
               'title', (SELECT pc.title FROM pieces pc WHERE pc.k = p.s),
               'author', (ARRAY['ada', 'bruno', 'chen', 'dilnoza', 'emeka', 'frida', 'goran', 'hana'])[1 + g % 8],
               'tags', json_build_array('postgresql', 'docs', 'v' || (10 + g % 6), (ARRAY['sql', 'admin', 'internals', 'client'])[1 + g % 4]),
               'created', timestamptz '2020-01-01 00:00:00+00' + g * interval '37 seconds',
               'version', 1 + g % 9,
               'lang', 'en',
               'body', (SELECT string_agg(pc.piece, '' ORDER BY pc.k) FROM pieces pc
                        WHERE pc.k >= p.s AND pc.k < p.s + p.m))::text
    FROM p
$$;
CREATE TABLE docs (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, title text,
                   n integer NOT NULL DEFAULT 0, updated timestamptz NOT NULL DEFAULT now(), body text);
SET synchronous_commit = off;
SET bench.mb = :'mb';
DO $$
DECLARE g bigint := 0;
BEGIN
    WHILE pg_total_relation_size('docs') < current_setting('bench.mb')::bigint * 1048576 LOOP
        INSERT INTO docs (id, title, updated, body)
        SELECT i, d.title, timestamptz '2024-01-01 00:00:00+00' + i * interval '11 seconds', d.body
        FROM generate_series(g + 1, g + 10000) i, doc(i) d;
        g := g + 10000;
    END LOOP;
END $$;
SQL
psql_d tpl_heap <<'SQL'
DO $$ BEGIN PERFORM setval(pg_get_serial_sequence('docs', 'id'), (SELECT max(id) FROM docs)); END $$;
-- what the clients insert: raw documents, stored uncompressed
CREATE TABLE newdocs (k int PRIMARY KEY, title text, body text);
ALTER TABLE newdocs ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO newdocs SELECT i, d.title, d.body FROM generate_series(1, 4000) i, doc(100000000 + i) d;
DROP FUNCTION doc(bigint);
DROP TABLE pieces;
VACUUM (FREEZE, ANALYZE);
SQL
val tpl_heap "SELECT format(\$f\$INSERT INTO templates VALUES ('heap', %s, %s, %s, %s, %L, %L, %s)\$f\$,
              pg_total_relation_size('docs'), pg_table_size('docs'), count(*), sum(octet_length(body)),
              (SELECT methods FROM compressx.column_stats('docs') WHERE column_name = 'body'),
              md5(string_agg(md5(body), '' ORDER BY id)), $(now) - $tb) FROM docs" | psql_d results
maxid=$(val tpl_heap "SELECT max(id) FROM docs")
cx_log "heap template: $(val results "SELECT format('%s rows, %s MB total (heap + TOAST %s MB), raw body %s MB, %s s', nrows, total_bytes / 1048576, table_bytes / 1048576, raw_bytes / 1048576, round(build_s::numeric)) FROM templates WHERE tcase = 'heap'")"

case " $CASES " in *" compressx "*)
    cx_log "building the compressx table (body zstd 3)"
    tb=$(now)
    psql_d postgres -c "CREATE DATABASE tpl_compressx TEMPLATE tpl_heap STRATEGY FILE_COPY"
    psql_d tpl_compressx <<'SQL'
DO $$ BEGIN PERFORM compressx.set_column_codec('docs', 'body', 'zstd', 3); END $$;
ALTER TABLE docs SET ACCESS METHOD compressx;
VACUUM (FREEZE, ANALYZE);
SQL
    val tpl_compressx "SELECT format(\$f\$INSERT INTO templates VALUES ('compressx', %s, %s, %s, %s, %L, %L, %s)\$f\$,
              pg_total_relation_size('docs'), pg_table_size('docs'), count(*), sum(octet_length(body)),
              (SELECT methods FROM compressx.column_stats('docs') WHERE column_name = 'body'),
              md5(string_agg(md5(body), '' ORDER BY id)), $(now) - $tb) FROM docs" | psql_d results
    cx_log "compressx template: $(val results "SELECT format('%s MB total, methods %s, %s s', total_bytes / 1048576, methods, round(build_s::numeric)) FROM templates WHERE tcase = 'compressx'")"
    ;;
esac

# the clients' scripts
cat >"$work/update.sql" <<'EOF'
\set id random(1, :maxid)
UPDATE docs SET n = n + 1, updated = now() WHERE id = :id;
EOF
cat >"$work/insert.sql" <<'EOF'
\set k random(1, 4000)
INSERT INTO docs (title, body) SELECT title, body FROM newdocs WHERE k = :k;
EOF
cat >"$work/select.sql" <<'EOF'
\set id random(1, :maxid)
SELECT body FROM docs WHERE id = :id;
EOF
chmod 644 "$work"/*.sql

# run_one CASE LOAD RATE METHOD ORD: a fresh copy of the case's template,
# the load (RATE tps in total, 0: unthrottled), the rewrite (or the
# baseline's wait) in the middle, measurements
run_one() {
    local tcase=$1 load=$2 rate=$3 method=$4 ord=$5 db="run_${1}_${2}_${4}" pgb sampler t0 t1 lsn0 lsn1 du0
    local rate_arg="" note="" size_before size_after size_vacuum rows methods am ok fpi
    cx_log "$tcase / $load load$( [ "$rate" != 0 ] && echo " ($rate tps)" ) / $method"
    psql_d postgres -c "CREATE DATABASE $db TEMPLATE tpl_$tcase STRATEGY FILE_COPY"
    size_before=$(val "$db" "SELECT pg_total_relation_size('docs')")
    [ "$rate" != 0 ] && rate_arg="-R $rate"
    # disk sampler: bytes under base/ (every database, and pgsql_tmp)
    ( while :; do
          printf '%s\t%s\n' "$(now)" "$(du -sb "$data/base" 2>/dev/null | cut -f1)"
          sleep 0.5
      done ) >"$work/disk_$db.tsv" &
    sampler=$!
    # shellcheck disable=SC2086
    cx_as_user pgbench -n -c "$CLIENTS" -j 1 -T 36000 $rate_arg -D maxid="$maxid" \
        -f "$work/update.sql@4" -f "$work/insert.sql@1" -f "$work/select.sql@15" \
        --log --log-prefix="$work/xlog_$db" "$db" >"$work/pgbench_$db.out" 2>&1 &
    pgb=$!
    sleep "$WARMUP_S"
    du0=$(du -sb "$data/base" 2>/dev/null | cut -f1)
    lsn0=$(val "$db" "SELECT pg_current_wal_lsn()")
    t0=$(now)
    case "$method" in
        baseline) sleep "$BASE_S" ;;
        online) psql_d "$db" -c "CALL compressx.recompress_online('docs', 'lz4')" >"$work/m_$db.out" 2>&1 ||
                    note="recompress_online failed" ;;
        offline) psql_d "$db" -c "SELECT * FROM compressx.recompress_table('docs', 'lz4')" >"$work/m_$db.out" 2>&1 ||
                    note="recompress_table failed" ;;
        pg_repack) cx_as_user "$PGBIN/pg_repack" -h "$work" -p "$PORT" -U postgres -d "$db" -t docs \
                       >"$work/m_$db.out" 2>&1 || note="pg_repack failed (exit $?)" ;;
    esac
    t1=$(now)
    lsn1=$(val "$db" "SELECT pg_current_wal_lsn()")
    sleep "$TAIL_S"
    # stop the clients: pgbench has no stop signal, so their connections
    # end (it reports the clients aborted; finished transactions are logged)
    val postgres "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'pgbench'" >/dev/null
    wait "$pgb" || true
    kill "$sampler"; wait "$sampler" 2>/dev/null || true
    [ -s "$work/m_$db.out" ] && grep -v '^ *$' "$work/m_$db.out" | tail -n 12 | sed 's/^/   /' >&2
    if [ -n "$note" ]; then
        note="$note: $(grep -iE 'error|warning' "$work/m_$db.out" | head -n 3 | tr '\n' ' ')"
    elif [ "$method" = online ]; then
        note=$(grep -E 'NOTICE|DETAIL' "$work/m_$db.out" | sed -E 's/^(NOTICE|DETAIL): *//' | tr '\n' ' ')
    elif grep -qiE 'error|warning' "$work/m_$db.out" 2>/dev/null; then
        note=$(grep -iE 'error|warning' "$work/m_$db.out" | head -n 3 | tr '\n' ' ')
    fi
    grep -iE 'error' "$work/pgbench_$db.out" |
        grep -vE 'aborted in command|terminat|server closed|Run was aborted|perhaps the backend|connection' | head -n 5 >&2 || true
    # per-transaction logs: script, end time, statement time (s; with -R
    # the logged time counts from the scheduled start: the lag goes)
    cat "$work"/xlog_"$db".* | awk -v c="$tcase" -v l="$load" -v m="$method" \
        '{ printf "%s\t%s\t%s\t%d\t%.6f\t%.6f\n", c, l, m, $4, $5 + $6 / 1e6, ($3 - (NF >= 7 ? $7 : 0)) / 1e6 }' |
        psql_d results -c "COPY xacts FROM STDIN"
    awk -v c="$tcase" -v l="$load" -v m="$method" 'NF == 2 { printf "%s\t%s\t%s\t%s\t%s\n", c, l, m, $1, $2 }' \
        "$work/disk_$db.tsv" | psql_d results -c "COPY disk FROM STDIN"
    rm -f "$work"/xlog_"$db".*
    # full-page images in the window's WAL (no checkpoint runs in it: the
    # segments are still there)
    fpi=$(cx_as_user pg_waldump -p "$data/pg_wal" -s "$lsn0" -e "$lsn1" --stats 2>/dev/null |
          awk '/^Total/ { print $5 }')
    size_after=$(val "$db" "SELECT pg_total_relation_size('docs')")
    psql_d "$db" -c "VACUUM docs"
    size_vacuum=$(val "$db" "SELECT pg_total_relation_size('docs')")
    rows=$(val "$db" "SELECT count(*) FROM docs")
    methods=$(val "$db" "SELECT methods FROM compressx.column_stats('docs') WHERE column_name = 'body'")
    am=$(val "$db" "SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'docs'::regclass")
    ok=$(val "$db" "SELECT md5(string_agg(md5(body), '' ORDER BY id)) = '$(val results "SELECT checksum FROM templates WHERE tcase = '$tcase'")' FROM docs WHERE id <= $maxid")
    psql_d results -v tcase="$tcase" -v load="$load" -v method="$method" -v note="$note" -v methods="$methods" -v am="$am" <<SQL
INSERT INTO runs VALUES (:'tcase', :'load', $rate, :'method', $ord, $t0, $t1, pg_wal_lsn_diff('$lsn1', '$lsn0'),
                         ${fpi:-NULL}, $du0,
                         $size_before, $size_after, $size_vacuum, $rows, :'methods', :'am', '$ok', nullif(:'note', ''));
SQL
    psql_d postgres -c "DROP DATABASE $db"
    psql_d postgres -c "CHECKPOINT"
    cx_log "$tcase / $load / $method: $(val results "SELECT format('%s s, %s tps, %s MB WAL, size %s -> %s MB (VACUUM: %s MB), values intact: %s', round((t1 - t0)::numeric, 1), round((SELECT count(*) FROM xacts x WHERE (x.tcase, x.load, x.method) = (r.tcase, r.load, r.method) AND x.t_end BETWEEN r.t0 AND r.t1) / (r.t1 - r.t0)), round(wal_bytes / 1048576), size_before / 1048576, size_after / 1048576, size_vacuum / 1048576, values_ok) FROM runs r WHERE tcase = '$tcase' AND load = '$load' AND method = '$method'") (elapsed $(( $(date +%s) - bench_start )) s)"
}

ord=0
for tcase in $CASES; do
    for load in $LOADS; do
        rate=0
        if [ "$load" = paced ]; then
            # a fixed share of what the clients did alone, unthrottled
            [ -n "$(val results "SELECT 1 FROM runs WHERE tcase = '$tcase' AND load = 'full' AND method = 'baseline'")" ] ||
                { ord=$((ord + 1)); run_one "$tcase" full 0 baseline $ord; }
            rate=$(val results "SELECT round($PACE / 100.0 * count(*) / (r.t1 - r.t0)) FROM runs r JOIN xacts x USING (tcase, load, method)
                                WHERE r.tcase = '$tcase' AND r.load = 'full' AND r.method = 'baseline' AND x.t_end BETWEEN r.t0 AND r.t1
                                GROUP BY r.t0, r.t1")
        fi
        for method in baseline $METHODS; do
            ord=$((ord + 1))
            run_one "$tcase" "$load" "$rate" "$method" $ord
        done
    done
done

# the summary
psql_d results -v warm="$WARMUP_S" -v tail="$TAIL_S" -v out="$work" <<'SQL'
\pset footer off
CREATE VIEW win AS
SELECT r.tcase, r.load, r.rate, r.method, r.ord, r.t1 - r.t0 AS secs,
       (SELECT count(*) FROM xacts x WHERE (x.tcase, x.load, x.method) = (r.tcase, r.load, r.method)
                                       AND x.t_end >= r.t0 AND x.t_end <= r.t1) / (r.t1 - r.t0) AS tps,
       (SELECT max(x.lat) FROM xacts x WHERE (x.tcase, x.load, x.method) = (r.tcase, r.load, r.method)
                                         AND x.t_end > r.t0 AND x.t_end - x.lat < r.t1) AS max_lat,
       (SELECT (ARRAY['update', 'insert', 'select'])[x.script + 1] FROM xacts x
        WHERE (x.tcase, x.load, x.method) = (r.tcase, r.load, r.method) AND x.t_end > r.t0 AND x.t_end - x.lat < r.t1
        ORDER BY x.lat DESC LIMIT 1) AS max_lat_script,
       (SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY x.lat) FROM xacts x
        WHERE (x.tcase, x.load, x.method) = (r.tcase, r.load, r.method) AND x.t_end > r.t0 AND x.t_end - x.lat < r.t1) AS p99_lat,
       (SELECT max(d.base_bytes) FROM disk d WHERE (d.tcase, d.load, d.method) = (r.tcase, r.load, r.method)
                                               AND d.t >= r.t0 AND d.t <= r.t1 + 1) - r.du0 AS peak_extra,
       r.wal_bytes, r.wal_fpi_bytes, r.size_before, r.size_after, r.size_vacuum, r.rows_after, r.methods_after, r.am_after,
       r.values_ok, r.note
FROM runs r;
CREATE VIEW summary AS
SELECT w.*, b.tps AS base_tps, w.tps / b.tps AS tps_frac,
       CASE WHEN w.method <> 'baseline' THEN w.secs / o.secs END AS vs_offline,
       (w.size_vacuum::float8 / w.rows_after) / (o.size_vacuum::float8 / o.rows_after) AS per_row_vs_offline,
       b.wal_bytes / b.secs AS base_wal_rate, b.peak_extra / b.secs AS base_disk_rate
FROM win w JOIN win b ON (b.tcase, b.load, b.method) = (w.tcase, w.load, 'baseline')
     LEFT JOIN win o ON (o.tcase, o.load, o.method) = (w.tcase, w.load, 'offline');
CREATE VIEW md AS
SELECT ord, format('| %s | %s | %s | %s | %s | %s (%s %%) | %s (%s) | %s | %s | %s (%s) | %s | %s | %s | %s | %s |',
    CASE tcase WHEN 'heap' THEN 'heap pglz -> lz4' ELSE 'compressx zstd-3 -> lz4' END,
    CASE WHEN rate = 0 THEN 'unthrottled' ELSE rate || ' tps' END,
    method,
    CASE WHEN method = 'baseline' THEN '(' || round(secs::numeric) || ' s of load)' ELSE round(secs::numeric, 1)::text END,
    coalesce(round(vs_offline::numeric, 2)::text, ''),
    round(tps::numeric), round(100 * tps_frac::numeric),
    round(max_lat::numeric, 2), max_lat_script,
    round(p99_lat::numeric * 1000, 1),
    round(peak_extra / 1048576.0), round(wal_bytes / 1048576.0), coalesce(round(wal_fpi_bytes / 1048576.0)::text, '?'),
    round(size_after / 1048576.0), round(size_vacuum / 1048576.0),
    coalesce(round(per_row_vs_offline::numeric, 2)::text, ''),
    am_after || ': ' || (SELECT string_agg(k || ' ' || v, ', ' ORDER BY k) FROM jsonb_each_text(methods_after) e(k, v) WHERE v <> '0'),
    CASE WHEN values_ok THEN 'yes' ELSE 'NO' END) AS line
FROM summary;

\echo
\echo '== templates'
SELECT tcase, nrows, round(total_bytes / 1048576.0) AS total_mb, round(table_bytes / 1048576.0) AS heap_toast_mb,
       round(raw_bytes / 1048576.0) AS raw_body_mb, methods, round(build_s::numeric) AS build_s FROM templates;
\echo '== runs (tps and longest statement over the rewrite window)'
SELECT tcase, load, rate, method, round(secs::numeric, 1) AS secs, round(vs_offline::numeric, 2) AS vs_offline,
       round(tps::numeric) AS tps, round(100 * tps_frac::numeric) AS tps_pct,
       round(max_lat::numeric, 3) AS max_stmt_s, max_lat_script, round(p99_lat::numeric * 1000, 1) AS p99_ms,
       round(peak_extra / 1048576.0) AS peak_extra_mb, round(wal_bytes / 1048576.0) AS wal_mb,
       round(wal_fpi_bytes / 1048576.0) AS fpi_mb, round(size_after / 1048576.0) AS after_mb, round(size_vacuum / 1048576.0) AS vacuum_mb,
       round(per_row_vs_offline::numeric, 2) AS per_row_vs_offline, rows_after, am_after, values_ok, note
FROM summary ORDER BY ord;
\echo '== goals (recompress_online)'
SELECT tcase, load, goal, value, CASE WHEN met THEN 'met' ELSE 'NOT MET' END AS result FROM (
  SELECT ord, tcase, load, 1 AS o, 'time <= 2x recompress_table' AS goal, round(vs_offline::numeric, 2)::text || 'x' AS value,
         vs_offline <= 2 AS met
  FROM summary WHERE method = 'online'
  UNION ALL
  SELECT ord, tcase, load, 2, 'client tps >= 70 % of baseline', round(100 * tps_frac::numeric) || ' %', tps_frac >= 0.7
  FROM summary WHERE method = 'online'
  UNION ALL
  SELECT ord, tcase, load, 3, 'longest client statement <= 1 s', round(max_lat::numeric, 2) || ' s', max_lat <= 1
  FROM summary WHERE method = 'online') g
ORDER BY ord, o;

\pset format unaligned
\pset tuples_only on
\o :out/result.md
SELECT '| table | load | method | rewrite s | vs offline | client tps (% of baseline) | longest statement s | p99 ms | peak extra disk MB | WAL MB (of it full-page images) | size after MB | after VACUUM MB | bytes/row vs offline | body stored as | values intact |'
UNION ALL SELECT '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
UNION ALL SELECT * FROM (SELECT line FROM md ORDER BY ord) t;
\o
\o :out/goals.md
SELECT format('- %s, %s load: time %sx recompress_table (goal <= 2x: %s); client tps %s %% of baseline (goal >= 70 %%: %s); longest client statement %s s (goal <= 1 s: %s)',
              CASE tcase WHEN 'heap' THEN 'heap pglz -> lz4' ELSE 'compressx zstd-3 -> lz4' END,
              CASE WHEN rate = 0 THEN 'unthrottled' ELSE rate || ' tps' END,
              round(vs_offline::numeric, 2), CASE WHEN vs_offline <= 2 THEN 'met' ELSE 'NOT MET' END,
              round(100 * tps_frac::numeric), CASE WHEN tps_frac >= 0.7 THEN 'met' ELSE 'NOT MET' END,
              round(max_lat::numeric, 2), CASE WHEN max_lat <= 1 THEN 'met' ELSE 'NOT MET' END)
FROM summary WHERE method = 'online' ORDER BY ord;
SELECT format('- clients alone (baseline), %s, %s load: %s MB of WAL and %s MB of new data a second; the WAL and peak-disk columns include the clients'' share over the window',
              tcase, CASE WHEN rate = 0 THEN 'unthrottled' ELSE rate || ' tps' END,
              round((wal_bytes / secs / 1048576.0)::numeric, 1), round((peak_extra / secs / 1048576.0)::numeric, 1))
FROM summary WHERE method = 'baseline' ORDER BY ord;
SELECT format('- %s, %s load, %s: %s', tcase, CASE WHEN rate = 0 THEN 'unthrottled' ELSE rate || ' tps' END, method, note)
FROM summary WHERE note IS NOT NULL ORDER BY ord;
\o
\pset tuples_only off
\pset fieldsep ','
\o :out/result.csv
SELECT tcase, load, rate, method, round(secs::numeric, 2) AS secs, round(tps::numeric, 1) AS tps,
       round(tps_frac::numeric, 3) AS tps_frac, round(max_lat::numeric, 3) AS max_lat_s,
       round(p99_lat::numeric, 4) AS p99_lat_s,
       round(peak_extra / 1048576.0, 1) AS peak_extra_mb, round(wal_bytes / 1048576.0, 1) AS wal_mb,
       round(wal_fpi_bytes / 1048576.0, 1) AS wal_fpi_mb, round(size_after / 1048576.0, 1) AS size_after_mb, round(size_vacuum / 1048576.0, 1) AS size_vacuum_mb,
       round(per_row_vs_offline::numeric, 3) AS per_row_vs_offline, am_after, values_ok
FROM summary ORDER BY ord;
\o
-- transactions per second from the warm-up to the end of the tail,
-- against the rewrite's start (0); the window's length as a column
\o :out/timeline.csv
SELECT r.tcase, r.load, r.method, s.sec, count(x.t_end) AS xacts, round((r.t1 - r.t0)::numeric, 2) AS secs
FROM runs r
CROSS JOIN LATERAL generate_series(-(:warm)::int, floor(r.t1 - r.t0 + :tail)::int - 1) s(sec)
LEFT JOIN xacts x ON (x.tcase, x.load, x.method) = (r.tcase, r.load, r.method)
                 AND x.t_end >= r.t0 + s.sec AND x.t_end < r.t0 + s.sec + 1
GROUP BY r.tcase, r.load, r.method, r.ord, s.sec, r.t1, r.t0
ORDER BY r.ord, s.sec;
\o
SQL

{
    echo "Online recompression under load (\`test/bench/online_bench.sh\`, one run): $CLIENTS pgbench clients," \
         "scripts update 4 : insert 1 : select 15, unthrottled and paced at $PACE % of the unthrottled baseline's tps;" \
         "each row on a fresh copy of the template (CREATE DATABASE .. STRATEGY FILE_COPY), right after a checkpoint."
    echo "Window: the rewrite's wall time. tps: client transactions ending in it, against the baseline's;" \
         "longest statement and p99: statements overlapping it; peak extra disk: du of base/ every 0.5 s minus its size at the start;" \
         "WAL: LSN difference over the window (all sessions), full-page images from pg_waldump --stats;" \
         "sizes: pg_total_relation_size after the run and after a plain VACUUM; bytes/row: after VACUUM, against the offline rewrite" \
         "under the same load; body stored as: access method after the run and column_stats' methods;" \
         "values intact: md5 of the template's rows' bodies unchanged."
    echo
    val results "SELECT string_agg(format('- %s template: %s rows, %s MB (heap + TOAST + index; heap + TOAST %s MB), body raw %s MB, stored as %s',
                   tcase, nrows, round(total_bytes / 1048576.0), round(table_bytes / 1048576.0), round(raw_bytes / 1048576.0),
                   (SELECT string_agg(k || ' ' || v, ', ' ORDER BY k) FROM jsonb_each_text(methods) e(k, v) WHERE v <> '0')), E'\n' ORDER BY tcase DESC) FROM templates"
    echo
    cat "$work/result.md"
    echo
    cat "$work/goals.md"
    echo
    echo "server: $("$PGBIN/postgres" --version); $repack_version; shared_buffers 1GB, max_wal_size 16GB, fsync off, autovacuum on"
    echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r), $(date -u +%F); whole run $(( ($(date +%s) - bench_start) / 60 )) min"
} >"$out/$major.md"
cp "$work/result.csv" "$out/$major.csv"
cp "$work/timeline.csv" "$out/$major-timeline.csv"
python3 "$cx_root/test/bench/online_chart.py" "$out/$major.csv" "$out/$major-timeline.csv" "$out/chart.svg"
echo
cat "$out/$major.md"
echo "written: $out/$major.md, $out/$major.csv, $out/$major-timeline.csv, $out/chart.svg"
