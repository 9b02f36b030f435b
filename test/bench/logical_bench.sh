#!/usr/bin/env bash
# Benchmark of logical replication from compressx tables against heap
# tables (issue 13; not part of the pass/fail suite).
#
#   bash test/bench/logical_bench.sh
#
# Two clusters on this machine: a publisher (wal_level = logical) and a
# subscriber with plain heap tables (no compressx there).  Data: JSON
# documents of 2-6 kB of text (PostgreSQL's HTML documentation, tags
# stripped, cut into 1 kB pieces; 4 000 distinct documents, reused with new
# ids and metadata), CX_BENCH_MB (default 1024) MB of raw text per phase.
#
# Cases, each with a table and a subscription of its own (slot made on the
# publisher with the plugin named, subscription with create_slot = false,
# copy_data = false, streaming = off):
#   heap        heap table (pglz), plugin pgoutput: the reference
#   heap+cx     heap table, plugin compressx (the wrapper's pass-through)
#   compressx   compressx table, body in zstd (level 3), plugin compressx
# Phases, in batches of CX_BENCH_BATCH (2000) rows per transaction:
#   insert      INSERT of the documents
#   update big  UPDATE of every document's body (a new value each)
#   update n    UPDATE of a small column; bodies unchanged (sent as 'u'
#               when stored out of line)
# Each phase is written while the subscription is disabled, then replicated
# as a backlog: measured are the publisher's time to write it, the time from
# the re-enabled subscription's walsender becoming active until the
# subscriber has applied everything (pg_stat_replication
# replay_lsn reaching the publisher's WAL position after the last commit:
# decoding, sending and applying, without the writes), and the WAL written
# on the publisher.  Ratios are against heap measured in the same run.
#
#   CX_BENCH_PGBIN=DIR  run on the PostgreSQL installation whose programs are
#                       in DIR instead of Debian's 15 (compressx is built in
#                       a private copy of the tree and installed there).
# Writes bench-results/logical/pgNN.md and prints the goal (<= 1.3x heap's
# replication time) as met or not.
set -eu
. "$(dirname "$0")/../lib.sh"
MB=${CX_BENCH_MB:-1024}
BATCH=${CX_BENCH_BATCH:-2000}
cx_install_deps
if [ -n "${CX_BENCH_PGBIN:-}" ]; then
    cx_use_pg "$CX_BENCH_PGBIN"
    cx_build_install_copy
else
    cx_build_install
fi
major=$("$PGBIN/pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
out="$cx_root/bench-results/logical"
mkdir -p "$out"
echo "server: $("$PGBIN/postgres" --version)"
docdir=/usr/share/doc/postgresql-doc-15/html
[ -d "$docdir" ] || cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-doc-15 >/dev/null

work=$(cx_workdir logical-bench)
ppub=${CX_BENCH_PORT:-55436}
psub=$((ppub + 1))
node() {
    local dir=$1 port=$2 opl=""
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown "$cx_user" "$dir"
    "$PGBIN/postgres" --describe-config 2>/dev/null | grep -q '^output_plugin_libraries' &&
        opl="output_plugin_libraries = 'pgoutput, compressx'"
    cx_start_cluster "$dir" "$port" "shared_buffers = 512MB
max_wal_size = 8GB
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
wal_retrieve_retry_interval = 100ms
$opl"
}
stop_all() {
    cx_as_user pg_ctl -D "$work/pub/data" -m fast -w stop >/dev/null 2>&1 || true
    cx_as_user pg_ctl -D "$work/sub/data" -m fast -w stop >/dev/null 2>&1 || true
}
trap 'stop_all; rm -rf "$work"' EXIT
node "$work/pub" "$ppub"
node "$work/sub" "$psub"
pub() { cx_as_user psql -X -q -v ON_ERROR_STOP=1 -h "$work/pub" -p "$ppub" -U postgres -d postgres "$@"; }
sub() { cx_as_user psql -X -q -v ON_ERROR_STOP=1 -h "$work/sub" -p "$psub" -U postgres -d postgres "$@"; }
now() { date +%s.%N; }

cx_log "publisher: documents"
pub -v docdir="$docdir" <<'SQL'
CREATE EXTENSION compressx;
CREATE TEMP TABLE pages AS
SELECT f, coalesce(substring(h FROM '<title>([^<]*)</title>'), f) AS title,
       regexp_replace(regexp_replace(regexp_replace(h, '<[^>]*>', ' ', 'g'), '&[a-z]+;', ' ', 'g'),
                      '\s+', ' ', 'g') AS txt
FROM (SELECT f, pg_read_file(:'docdir' || '/' || f) AS h FROM pg_ls_dir(:'docdir') f
      WHERE f LIKE '%.html') s;
CREATE TEMP TABLE pieces (k int PRIMARY KEY, title text, piece text);
INSERT INTO pieces
SELECT row_number() OVER (ORDER BY f, i), title, substr(txt, i * 1000 + 1, 1000)
FROM pages, generate_series(0, (length(txt) - 1) / 1000) i;
CREATE TABLE raw (k int PRIMARY KEY, title text, body text);
ALTER TABLE raw ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO raw
SELECT g, (SELECT pc.title FROM pieces pc WHERE pc.k = p.s),
       (SELECT string_agg(pc.piece, '' ORDER BY pc.k) FROM pieces pc WHERE pc.k >= p.s AND pc.k < p.s + p.m)
FROM generate_series(0, 3999) g,
     LATERAL (SELECT 1 + (hashint8(g) & 2147483647) % ((SELECT max(k) FROM pieces) - 6) AS s,
                     2 + (hashint8(g * 7 + 1) & 2147483647) % 5 AS m) p;
-- document i: raw document i % 4000 with metadata of its own, as JSON text
CREATE FUNCTION doc(i bigint, body text, title text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT json_build_object('id', i, 'title', title,
        'author', (ARRAY['ada', 'bruno', 'chen', 'dilnoza', 'emeka', 'frida', 'goran', 'hana'])[1 + i % 8],
        'tags', json_build_array('postgresql', 'docs', 'v' || (10 + i % 6)),
        'created', timestamptz '2020-01-01 00:00:00+00' + i * interval '37 seconds',
        'version', 1 + i % 9, 'body', body)::text
$$;
ANALYZE raw;
SQL
avg=$(pub -At -c "SELECT avg(octet_length(doc(k, body, title)))::int FROM raw")
rows=$(( MB * 1048576 / avg ))
batches=$(( (rows + BATCH - 1) / BATCH ))
cx_log "$rows documents of $avg bytes on average ($MB MB) per phase, $batches transactions of $BATCH rows"

pub -c "CREATE TABLE results (ord int, tcase text, phase text, pub_s float8, total_s float8, wal_bytes numeric, table_bytes bigint)"

# phase_sql PHASE TABLE: the phase's statements, one transaction each
phase_sql() {
    local phase=$1 t=$2 b lo hi
    for ((b = 0; b < batches; b++)); do
        lo=$((b * BATCH + 1)); hi=$(( (b + 1) * BATCH < rows ? (b + 1) * BATCH : rows ))
        case $phase in
            insert) echo "INSERT INTO $t SELECT i, 0, r.title, doc(i, r.body, r.title) FROM generate_series($lo, $hi) i JOIN raw r ON r.k = i % 4000;" ;;
            'update big') echo "UPDATE $t SET body = doc(id + 1, r.body, r.title) FROM raw r WHERE r.k = (id + 1) % 4000 AND id BETWEEN $lo AND $hi;" ;;
            'update n') echo "UPDATE $t SET n = n + 1 WHERE id BETWEEN $lo AND $hi;" ;;
        esac
    done
}

ord=0
for c in "heap pgoutput heap" "heap+cx compressx heap" "compressx compressx compressx"; do
    set -- $c
    tcase=$1 plugin=$2 am=$3
    t="t_$(echo "$tcase" | tr -c 'a-z\n' '_')"
    cx_log "case $tcase: $am table $t, plugin $plugin"
    pub <<SQL
CREATE TABLE $t (id bigint PRIMARY KEY, n int, title text, body text) USING $am;
$( [ "$am" = compressx ] && echo "SELECT compressx.set_column_codec('$t', 'body', 'zstd', 3);" )
CREATE PUBLICATION p_$t FOR TABLE $t;
SELECT pg_create_logical_replication_slot('s_$t', '$plugin');
SQL
    sub <<SQL
CREATE TABLE $t (id bigint PRIMARY KEY, n int, title text, body text);
CREATE SUBSCRIPTION s_$t CONNECTION 'host=$work/pub port=$ppub user=postgres dbname=postgres'
    PUBLICATION p_$t WITH (create_slot = false, slot_name = 's_$t', copy_data = false);
SQL
    until [ "$(pub -At -c "SELECT count(*) FROM pg_stat_replication WHERE application_name = 's_$t' AND state = 'streaming'")" = 1 ]; do
        sleep 0.2
    done
    for phase in insert 'update big' 'update n'; do
        ord=$((ord + 1))
        phase_sql "$phase" "$t" >"$work/phase.sql"
        chmod 644 "$work/phase.sql"
        # written while the subscription is off, then replicated as a backlog
        sub -c "ALTER SUBSCRIPTION s_$t DISABLE"
        until [ "$(pub -At -c "SELECT active FROM pg_replication_slots WHERE slot_name = 's_$t'")" = f ]; do
            sleep 0.1
        done
        pub -c CHECKPOINT
        lsn0=$(pub -At -c "SELECT pg_current_wal_insert_lsn()")
        t0=$(now)
        pub -f "$work/phase.sql"
        t1=$(now)
        lsn1=$(pub -At -c "SELECT pg_current_wal_insert_lsn()")
        sub -c "ALTER SUBSCRIPTION s_$t ENABLE"
        until [ "$(pub -At -c "SELECT active FROM pg_replication_slots WHERE slot_name = 's_$t'")" = t ]; do
            sleep 0.02
        done
        t2=$(now)
        until [ "$(pub -At -c "SELECT replay_lsn >= '$lsn1' FROM pg_stat_replication WHERE application_name = 's_$t'")" = t ]; do
            sleep 0.05
        done
        t3=$(now)
        pub -c "INSERT INTO results VALUES ($ord, '$tcase', '$phase', $t1 - $t0, $t3 - $t2,
                pg_wal_lsn_diff('$lsn1', '$lsn0'), pg_table_size('$t'))"
        [ "$(sub -At -c "SELECT count(*) FROM $t")" = "$rows" ] || { echo "subscriber of $tcase lacks rows" >&2; exit 1; }
        cx_log "  $phase: written in $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s, replicated in $(awk "BEGIN { printf \"%.1f\", $t3 - $t2 }") s"
    done
    # the subscriber holds what the publisher holds
    a=$(pub -At -c "SELECT md5(string_agg(md5(body) || n, ',' ORDER BY id)) FROM $t")
    b=$(sub -At -c "SELECT md5(string_agg(md5(body) || n, ',' ORDER BY id)) FROM $t")
    [ "$a" = "$b" ] || { echo "subscriber of $tcase differs from the publisher" >&2; exit 1; }
    sub -c "DROP SUBSCRIPTION s_$t" -c "DROP TABLE $t"
    pub -c "DROP PUBLICATION p_$t" -c "DROP TABLE $t"
done

report=$out/pg$major.md
{
    echo "# Logical replication: compressx vs heap (PostgreSQL $major)"
    echo
    echo "\`bash test/bench/logical_bench.sh\` on $(date -u +%F), $("$PGBIN/postgres" --version | sed 's/^postgres (PostgreSQL) //'),"
    echo "$(nproc) cores; $rows documents ($MB MB of raw JSON text, $avg bytes on average) per phase,"
    echo "$batches transactions of $BATCH rows; a publisher and a stock subscriber (heap) on the same machine."
    echo "Each phase is written with the subscription disabled (\"written s\"), then replicated as a"
    echo "backlog: \"replicated s\" from the re-enabled subscription's walsender starting until the subscriber has applied the last change"
    echo "(decoding, sending, applying). x heap: against the heap case, same phase, same run."
    echo
    pub -At -F '|' <<'SQL' | sed 's/^/| /; s/$/ |/'
SELECT 'case | phase | written s | replicated s | x heap | WAL MB | WAL x heap | table MB';
SELECT '--- | --- | --: | --: | --: | --: | --: | --:';
SELECT r.tcase, r.phase, round(r.pub_s::numeric, 1), round(r.total_s::numeric, 1),
       round((r.total_s / h.total_s)::numeric, 2), round(r.wal_bytes / 1048576, 0),
       round(r.wal_bytes / h.wal_bytes, 2), round(r.table_bytes / 1048576.0, 0)
FROM results r JOIN results h ON h.tcase = 'heap' AND h.phase = r.phase
ORDER BY r.ord;
SQL
    echo
    pub -At <<'SQL'
SELECT format('Goal (compressx replicated in <= 1.3x heap''s time, every phase): %s (worst %sx, %s).',
              CASE WHEN max(r.total_s / h.total_s) <= 1.3 THEN 'met' ELSE 'not met' END,
              round(max(r.total_s / h.total_s)::numeric, 2),
              (array_agg(r.phase ORDER BY r.total_s / h.total_s DESC))[1])
FROM results r JOIN results h ON h.tcase = 'heap' AND h.phase = r.phase
WHERE r.tcase = 'compressx';
SQL
} >"$report"
cat "$report"
