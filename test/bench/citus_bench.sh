#!/usr/bin/env bash
# Citus benchmark (not part of the pass/fail suite): a coordinator and two
# workers on this machine, Debian's package index as JSON documents
# (test/bench/make_json.py, one per package, 500 B - 1 kB), loaded into a
# distributed heap table and a distributed compressx table (zstd 3), and
# the same rows into a compressx table on one node.  Prints, side by side in
# one run:
#   - size of all placements (citus_table_size) and the ratio to heap;
#   - load (COPY through the coordinator), full scan (sum of lengths) and
#     count(*), medians of RUNS, and the ratio to heap;
#   - recompress_table('t', 'lz4') of the distributed table (its shards in
#     parallel on 2 workers) against the same call on the one-node table.
# Writes bench-results/citus/pgMM.md.
#
#   test/bench/citus_bench.sh [15|18] [ROWS] [RUNS]
set -u
umask 022
. "$(dirname "$0")/../lib.sh"

v=${1:-15}
rows=${2:-63000}
runs=${3:-5}
cx_install_deps
bindir=$(bash "$cx_root/test/citus_build.sh" "$v") || exit 1
cx_use_pg "$bindir"
cx_build_install_copy

work=$(cx_workdir citus-bench)
trap 'for n in coord w1 w2 single; do cx_stop_cluster "$work/$n"; done; rm -rf "$work"' EXIT
base=${CX_CITUS_BENCH_PORT:-57600}
i=0
for n in coord w1 w2 single; do
    mkdir -p "$work/$n"; [ "$(id -u)" -eq 0 ] && chown "$cx_user" "$work/$n"
    pre="shared_preload_libraries = 'citus, compressx'"
    [ "$n" = single ] && pre="shared_preload_libraries = 'compressx'"
    cx_start_cluster "$work/$n" $((base + i)) "$pre
listen_addresses = '127.0.0.1'
citus.local_hostname = '127.0.0.1'
citus.shard_count = 8
max_prepared_transactions = 50
max_parallel_workers_per_gather = 0
shared_buffers = 512MB"
    i=$((i + 1))
done
psql_on() { local p=$1; shift; cx_as_user psql -X -h 127.0.0.1 -p "$p" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }
c=$base
for p in $c $((base + 1)) $((base + 2)); do psql_on "$p" -qc 'CREATE EXTENSION citus' >/dev/null; done
psql_on $c -qAt >/dev/null <<SQL
SELECT citus_set_coordinator_host('127.0.0.1', $c);
SELECT citus_add_node('127.0.0.1', $((base + 1)));
SELECT citus_add_node('127.0.0.1', $((base + 2)));
CREATE EXTENSION compressx;
SQL
psql_on $((base + 3)) -qc 'CREATE EXTENSION compressx' >/dev/null

python3 "$cx_root/test/bench/make_json.py" "$rows" >"$work/docs.txt"
chmod 644 "$work/docs.txt"
nrows=$(wc -l <"$work/docs.txt")

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
declare -A load scan cnt size
for t in heap compressx; do
    psql_on $c -qAt >/dev/null <<SQL
CREATE TABLE d_$t (id bigserial, doc jsonb) USING $t;
SELECT create_distributed_table('d_$t', 'id');
SQL
    [ $t = compressx ] && psql_on $c -qAt -c "SELECT compressx.set_column_codec('d_compressx', 'doc', 'zstd', 3)" >/dev/null
    ts=""
    for r in $(seq 1 "$runs"); do
        psql_on $c -qc "TRUNCATE d_$t" >/dev/null
        s=$(now); psql_on $c -qc "\\copy d_$t (doc) FROM '$work/docs.txt'" >/dev/null; e=$(now)
        ts="$ts $(echo "$e - $s" | bc)"
    done
    load[$t]=$(echo $ts | tr ' ' '\n' | median)
    psql_on $c -qc "VACUUM ANALYZE d_$t" >/dev/null
    size[$t]=$(psql_on $c -qAt -c "SELECT citus_table_size('d_$t')")
    ts=""; tc=""
    for r in $(seq 1 "$runs"); do
        s=$(now); psql_on $c -qAt -c "SELECT sum(length(doc::text)) FROM d_$t" >/dev/null; e=$(now)
        ts="$ts $(echo "$e - $s" | bc)"
        s=$(now); psql_on $c -qAt -c "SELECT count(*) FROM d_$t" >/dev/null; e=$(now)
        tc="$tc $(echo "$e - $s" | bc)"
    done
    scan[$t]=$(echo $ts | tr ' ' '\n' | median)
    cnt[$t]=$(echo $tc | tr ' ' '\n' | median)
done

# recompress_table: 8 shards on 2 workers against one node
s1=$(( base + 3 ))
psql_on $s1 -qAt >/dev/null <<SQL
CREATE TABLE d_compressx (id bigserial, doc jsonb) USING compressx;
SELECT compressx.set_column_codec('d_compressx', 'doc', 'zstd', 3);
SQL
psql_on $s1 -qc "\\copy d_compressx (doc) FROM '$work/docs.txt'" >/dev/null
s=$(now); psql_on $c -qAt -c "SELECT * FROM recompress_table('d_compressx', 'lz4')" >/dev/null; e=$(now)
rd=$(echo "$e - $s" | bc)
s=$(now); psql_on $s1 -qAt -c "SELECT * FROM recompress_table('d_compressx', 'lz4')" >/dev/null; e=$(now)
r1=$(echo "$e - $s" | bc)
same=$(psql_on $c -qAt -c "SELECT md5(string_agg(doc::text, ',' ORDER BY doc::text)) FROM d_compressx")
same1=$(psql_on $s1 -qAt -c "SELECT md5(string_agg(doc::text, ',' ORDER BY doc::text)) FROM d_compressx")
[ "$same" = "$same1" ] && check="equal" || check="DIFFER"

server=$("$PGBIN/postgres" --version)
citus=$(psql_on $c -qAt -c "SELECT extversion FROM pg_extension WHERE extname = 'citus'")
out="$cx_root/bench-results/citus/pg$v.md"
mkdir -p "$(dirname "$out")"
ratio() { printf '%.2f' "$(echo "scale=4; $1 / $2" | bc)"; }
sec() { printf '%.3f' "$1"; }
{
    echo "# Citus benchmark, $server, Citus $citus"
    echo
    echo "$(date -u +%F), $(nproc) cores; coordinator and 2 workers on one machine, 8 shards;"
    echo "$nrows JSON documents (Debian's package index, make_json.py); medians of $runs runs."
    echo
    echo "| distributed table | size | size / heap | load s | x heap | scan s | x heap | count s | x heap |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    for t in heap compressx; do
        echo "| $t$([ $t = compressx ] && echo ' (zstd 3)') | $(numfmt --to=iec "${size[$t]}") | $(ratio "${size[$t]}" "${size[heap]}") | $(sec "${load[$t]}") | $(ratio "${load[$t]}" "${load[heap]}") | $(sec "${scan[$t]}") | $(ratio "${scan[$t]}" "${scan[heap]}") | $(sec "${cnt[$t]}") | $(ratio "${cnt[$t]}" "${cnt[heap]}") |"
    done
    echo
    echo "| recompress_table('d_compressx', 'lz4') | s |"
    echo "| --- | --- |"
    echo "| distributed (8 shards, 2 workers, in parallel) | $(sec "$rd") |"
    echo "| one node | $(sec "$r1") |"
    echo
    echo "Ratio distributed / one node: $(ratio "$rd" "$r1")."
    echo
    echo "Rows after both rewrites: $check (md5 of the documents)."
} >"$out"
cat "$out"
