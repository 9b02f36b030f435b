#!/bin/bash
# Debezium against compressx: the set-up and the recovery that
# doc/logical-replication.md ("Debezium") gives, run with Debezium's
# embedded engine (3.6.1.Final, pom.xml; DebeziumCheck.java) against a
# throwaway cluster.  Not part of the counted suite unless test/run_tests.sh
# runs it (unit "debezium", CX_SKIP_DEBEZIUM).
#
#  1. The tested set-up: shadow plugins enabled, publication made by the
#     DBA, plugin.name = pgoutput, the slot made by Debezium.  A heap table
#     and a compressx table (and a REPLICA IDENTITY FULL pair) get the same
#     rows and changes: the initial snapshot, inserts with inline and
#     out-of-line zstd values (a column without settings, one with its own
#     codec), an UPDATE leaving out-of-line values unchanged, one changing
#     them, FULL identity UPDATE and DELETE, a transaction spilled to disk,
#     a DELETE.  The change events of each compressx table must equal the
#     heap table's (operation, before, after).
#  2. A connector stuck on "invalid compression method id 2": its slot is
#     made without the shadow plugins; a transaction (heap row first, then
#     compressx rows with zstd values) stops it, a retry stops again; the
#     DBA enables the shadow plugins and reloads; the connector restarted
#     with its offsets must deliver every change once: nothing lost,
#     nothing repeated, compressx's events equal to heap's.
#  3. The same with Debezium's default errors.max.retries (-1): the
#     connector retries by itself every 10 s, and resumes after the DBA's
#     reload without being restarted.
#
# Needs java (17) and mvn; the first run downloads Debezium from Maven
# Central into ~/.m2 (about 70 MB).  Environment: CX_PGBIN (bin directory
# of a PostgreSQL with compressx installed), CX_TEST_PORT.
# Exit 0: both parts passed; 1: a check failed; 77: java or mvn missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
PGBIN=${CX_PGBIN:-/usr/lib/postgresql/15/bin}
PORT=${CX_TEST_PORT:-55432}

for tool in java mvn python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "debezium: skipped: $tool not found (apt-get install openjdk-17-jdk-headless maven)"
        exit 77
    fi
done

# fetch Debezium (once, into ~/.m2), then build
if ! (cd "$here" && { mvn -B -q -o dependency:resolve >/dev/null 2>&1 ||
                      mvn -B -q dependency:resolve >"$here/target-fetch.log" 2>&1; }); then
    echo "debezium: skipped: Debezium could not be fetched from Maven Central (mvn dependency:resolve, see $here/target-fetch.log)"
    exit 77
fi
rm -f "$here/target-fetch.log"
(cd "$here" && { mvn -B -q -o compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt \
                   >/dev/null 2>&1 ||
                 mvn -B -q compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt; })
CP="$here/target/classes:$(cat "$here/target/classpath.txt")"

work=$(mktemp -d /tmp/cx-debezium.XXXXXX)
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" -eq 0 ] && chown postgres "$work"
cleanup() { as_pg "$PGBIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true; }
trap cleanup EXIT

as_pg "$PGBIN/initdb" -D "$work/data" -A trust -U postgres >/dev/null
cat >>"$work/data/postgresql.conf" <<EOF
port = $PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$work'
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
logical_decoding_work_mem = 64kB
EOF
as_pg "$PGBIN/pg_ctl" -D "$work/data" -l "$work/server.log" -w start >/dev/null
psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$work" -p "$PORT" -U postgres -d postgres "$@"; }
q() { psql -Atc "$1"; }

engine() {  # engine SLOT NAME EXPECTED TIMEOUT SNAPSHOT_MODE [RETRIES]: one run of the connector
    local slot=$1 name=$2
    java -cp "$CP" -Dorg.slf4j.simpleLogger.defaultLogLevel=info -Dcx.retries="${6:-0}" cx.DebeziumCheck "$PORT" "$slot" \
        "$work/$slot.offsets" "$work/$name.events" "$3" "$4" "$5" >"$work/$name.out" 2>"$work/$name.log" || true
}
wait_for() {  # wait_for SQL: until it returns t (60 s)
    for _ in $(seq 1 300); do [ "$(q "$1")" = t ] && return 0; sleep 0.2; done
    echo "timed out waiting for: $1"; return 1
}

# both TABLE_H TABLE_C STATEMENT...: each statement (%1$s: the table) on the
# heap table, then on the compressx table, in one transaction
both() {
    local h=$1 c=$2 sql='BEGIN;'; shift 2
    for s in "$@"; do sql+="${s//%1\$s/$h};${s//%1\$s/$c};"; done
    psql -c "$sql COMMIT;"
}
rows() {  # rows FROM TO TAG: z inline zstd, s and big out of line
    echo "INSERT INTO %1\$s SELECT i, 'row ' || i, repeat('zstd inline ' || i || ' ', 40),
        (SELECT string_agg(md5('s' || k || '-' || i), ' ') FROM generate_series(1, 200) k),
        (SELECT string_agg(md5(k || '-' || i || '$3'), '') FROM generate_series(1, 300) k)
        FROM generate_series($1, $2) i"
}

cols='id int PRIMARY KEY, small text, z text, s text, big text'
psql -o /dev/null <<EOF
CREATE EXTENSION compressx;
CREATE TABLE h ($cols);
CREATE TABLE c ($cols) USING compressx;
CREATE TABLE hf ($cols);
CREATE TABLE cf ($cols) USING compressx;
ALTER TABLE hf REPLICA IDENTITY FULL;
ALTER TABLE cf REPLICA IDENTITY FULL;
SELECT compressx.set_column_codec('c', 's', 'zstd', 9);
SELECT compressx.set_column_codec('cf', 's', 'zstd', 9);
-- the publication, made by the DBA (publication.autocreate.mode = disabled)
CREATE PUBLICATION dbz_pub FOR TABLE h, c, hf, cf;
EOF

compare() {  # compare PAIRS NAME...: the events files, heap against compressx
    python3 - "$work" "$@" <<'PY'
import json, sys
work, pairs, names = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
events = {}
for name in names:
    for line in open(f"{work}/{name}.events", encoding="utf-8"):
        topic, value = line.rstrip("\n").split("\t", 1)
        if value == "null":
            continue
        v = json.loads(value)
        table = topic.split(".")[-1]
        events.setdefault(table, []).append((v["op"], v["before"], v["after"]))
ok = True
for heap, cx in (p.split(":") for p in pairs):
    a, b = events.get(heap, []), events.get(cx, [])
    ids = lambda ev: [(e[2] or e[1])["id"] for e in ev]
    same = a == b
    ok &= same and len(a) > 0
    print(f"  {heap}: {len(a)} events, {cx}: {len(b)} events, equal: {same}")
    if not same:
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                print(f"    first difference at event {i}: {heap} {str(x)[:300]}\n      {cx} {str(y)[:300]}")
                break
    dup = sorted({i for i in ids(b) if ids(b).count(i) > 1 and not any(e[0] in "ud" for e in b if (e[2] or e[1])["id"] == i)})
    if dup:
        print(f"    {cx}: inserted more than once: {dup[:20]}"); ok = False
unavailable = sum(json.dumps(e).count("__debezium_unavailable_value") for e in events.get("c", []))
print(f"  unchanged out-of-line values sent as Debezium's placeholder in c's events: {unavailable}")
sys.exit(0 if ok else 1)
PY
}

status=0
echo "debezium: Debezium $(grep -o '<debezium.version>[^<]*' "$here/pom.xml" | cut -d'>' -f2), PostgreSQL $(q 'SHOW server_version')"

# ---- 1. the tested set-up ------------------------------------------------
q "ALTER SYSTEM SET dynamic_library_path = '\$libdir/compressx_decoders:\$libdir'" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
both h c "$(rows 1 20 snap)" >/dev/null
both hf cf "$(rows 1 20 snap)" >/dev/null
# snapshot 80 events; then (3 + 1 + 1 + 151 + 1) * 2 + 3 * 2 streamed
engine dbz setup 400 150 initial &
pid=$!
wait_for "SELECT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = 'dbz' AND active)"
both h c "$(rows 21 23 a)" >/dev/null
both h c "UPDATE %1\$s SET small = 'updated' WHERE id = 21" >/dev/null
both h c "UPDATE %1\$s SET big = reverse(big), s = 'short now' WHERE id = 22" >/dev/null
both hf cf "UPDATE %1\$s SET small = 'full ' || id WHERE id IN (5, 7)" "DELETE FROM %1\$s WHERE id = 6" >/dev/null
both h c "$(rows 100 250 spill)" >/dev/null
both h c "DELETE FROM %1\$s WHERE id = 23" >/dev/null
wait "$pid"
echo "1. set-up as documented (shadow plugins, plugin.name=pgoutput, publication dbz_pub, slot dbz):"
sed 's/^/  /' "$work/setup.out"
echo "  slot: $(q "SELECT slot_name || ' plugin=' || plugin FROM pg_replication_slots WHERE slot_name = 'dbz'"),"\
     "spilled transactions: $(q "SELECT spill_txns FROM pg_stat_replication_slots WHERE slot_name = 'dbz'")"
grep -q '^EVENTS 400$' "$work/setup.out" || { echo "  FAILED: not every event arrived"; status=1; }
compare 'h:c hf:cf' setup || status=1
q "SELECT pg_drop_replication_slot('dbz')" >/dev/null

# ---- 2. stuck on a zstd value, and the recovery -----------------------
q "ALTER SYSTEM RESET dynamic_library_path" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
engine stuck run1 1000 60 no_data &
pid=$!
wait_for "SELECT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = 'stuck' AND active)"
both h c "INSERT INTO %1\$s (id, small) VALUES (1001, 'small')" >/dev/null
# delivered (and its offset committed) before the zstd values come
for _ in $(seq 1 300); do grep -q '^cx\.public\.c	.*"id":1001' "$work/run1.events" 2>/dev/null && break; sleep 0.2; done
both h c "$(rows 1002 1004 stuck)" >/dev/null
wait "$pid"
echo "2. a connector stuck on a zstd value (slot made without the shadow plugins):"
echo "  run 1: $(tr '\n' ' ' <"$work/run1.out" | cut -c1-300)"
grep -q 'invalid compression method id 2' "$work/run1.out" ||
    { echo "  FAILED: the connector did not stop on invalid compression method id 2"; status=1; }
before=$(q "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'stuck'")
engine stuck run2 1000 60 no_data
echo "  run 2 (a retry): $(tr '\n' ' ' <"$work/run2.out" | cut -c1-300)"
echo "  slot confirmed_flush_lsn: $before before the retry, $(q "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'stuck'") after"
# the recovery, as documented
q "ALTER SYSTEM SET dynamic_library_path = '\$libdir/compressx_decoders:\$libdir'" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
engine stuck run3 1000 90 no_data &
pid=$!
wait_for "SELECT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = 'stuck' AND active)"
both h c "INSERT INTO %1\$s (id, small) VALUES (1005, 'after the recovery')" >/dev/null
for _ in $(seq 1 300); do grep -q '^cx\.public\.c	.*"id":1005' "$work/run3.events" 2>/dev/null && break; sleep 0.2; done
touch "$work/run3.events.stop"
wait "$pid"
echo "  run 3 (after enabling the shadow plugins and reloading): $(tr '\n' ' ' <"$work/run3.out")"
for r in run1 run2 run3; do
    echo "  $r delivered: $(python3 -c '
import json, sys
print(" ".join(l.split("\t")[0].split(".")[-1] + ":" + str(json.loads(l.split("\t", 1)[1])["after"]["id"])
               for l in open(sys.argv[1], encoding="utf-8")) or "nothing")' "$work/$r.events" 2>/dev/null || echo nothing)"
done
touch "$work/run1.events" "$work/run2.events" "$work/run3.events"
want="c:1001 c:1002 c:1003 c:1004 c:1005 h:1001 h:1002 h:1003 h:1004 h:1005"
got=$(cat "$work"/run[123].events | python3 -c '
import json, sys
print(" ".join(sorted(l.split("\t")[0].split(".")[-1] + ":" + str(json.loads(l.split("\t", 1)[1])["after"]["id"]) for l in sys.stdin)))')
echo "  all runs, each change once: want $want"
echo "                               got  $got"
[ "$got" = "$want" ] || { echo "  FAILED: a change was lost or repeated"; status=1; }
compare h:c run1 run2 run3 || status=1

# ---- 3. the same, Debezium retrying by itself ----------------------------
q "ALTER SYSTEM RESET dynamic_library_path" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
engine retrying retry 1000 120 no_data default &
pid=$!
wait_for "SELECT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = 'retrying' AND active)"
both h c "INSERT INTO %1\$s (id, small) VALUES (2001, 'small')" >/dev/null
both h c "$(rows 2002 2003 retry)" >/dev/null
for _ in $(seq 1 300); do
    [ "$(grep -c 'Retry 2 of unlimited retries' "$work/retry.log")" -ge 1 ] && break; sleep 0.2
done
echo "3. the same with Debezium's default errors.max.retries (retries by itself):"
echo "  retries on invalid compression method id 2 before the recovery: $(grep -c 'Retry [0-9]* of unlimited retries' "$work/retry.log")"
q "ALTER SYSTEM SET dynamic_library_path = '\$libdir/compressx_decoders:\$libdir'" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
both h c "INSERT INTO %1\$s (id, small) VALUES (2004, 'after the recovery')" >/dev/null
for _ in $(seq 1 300); do grep -q '^cx\.public\.c	.*"id":2004' "$work/retry.events" 2>/dev/null && break; sleep 0.2; done
touch "$work/retry.events" "$work/retry.events.stop"
wait "$pid"
echo "  $(tr '\n' ' ' <"$work/retry.out")"
want="c:2001 c:2002 c:2003 c:2004 h:2001 h:2002 h:2003 h:2004"
got=$(python3 -c '
import json, sys
print(" ".join(sorted(l.split("\t")[0].split(".")[-1] + ":" + str(json.loads(l.split("\t", 1)[1])["after"]["id"])
               for l in open(sys.argv[1], encoding="utf-8"))))' "$work/retry.events")
echo "  delivered, each change once: want $want"
echo "                                got  $got"
[ "$got" = "$want" ] || { echo "  FAILED: a change was lost or repeated"; status=1; }
compare h:c retry || status=1

trap - EXIT; cleanup
if [ $status -eq 0 ]; then echo "debezium: passed"; rm -rf "$work"; else echo "debezium: FAILED (files in $work)"; fi
exit $status
