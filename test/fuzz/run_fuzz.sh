#!/usr/bin/env bash
# Builds the libFuzzer harness of compressx's decoders (clang, with
# AddressSanitizer and UndefinedBehaviorSanitizer) and runs it for a
# bounded time (CX_FUZZ_SECONDS, default 60) from the seed corpus in
# test/fuzz/corpus.  Any crash, sanitizer report or leak fails.  Ends with
# "N passed, N failed".  Regenerate the seeds with: run_fuzz.sh --seeds
set -u
. "$(dirname "$0")/../lib.sh"
here="$cx_root/test/fuzz"
seconds=${CX_FUZZ_SECONDS:-60}

need=""
for p in clang-14 libclang-rt-14-dev postgresql-server-dev-$PG_MAJOR liblz4-dev libzstd-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need >/dev/null
fi

pgc=$PGBIN/pg_config
libdir=$($pgc --pkglibdir)   # static libpgcommon/libpgport: /usr/lib/postgresql/NN/lib on Debian
build=$(mktemp -d "${TMPDIR:-/tmp}/compressx-fuzz.XXXXXX")
trap 'rm -rf "$build"' EXIT
srcs="$here/fuzz_decode.c $here/fuzz_stubs.c $cx_root/src/storage/codec.c $cx_root/src/sql/frame.c $cx_root/src/storage/format.c"
flags="-g -O1 -Wno-ignored-attributes -I$cx_root/src -I$here -I$($pgc --includedir-server) -I$($pgc --includedir)/internal"
libs="$libdir/libpgcommon.a $libdir/libpgport.a -llz4 -lzstd"

if [ "${1:-}" = --seeds ]; then
    clang-14 $flags -DFUZZ_SEEDS $srcs $libs -o "$build/seeds" || exit 1
    rm -rf "$here/corpus" && mkdir -p "$here/corpus"
    "$build/seeds" "$here/corpus" && ls -l "$here/corpus"
    exit
fi

passed=0
failed=0
if clang-14 $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        $srcs $libs -o "$build/fuzz_decode" 2>"$build/build.log"; then
    passed=$((passed + 1)); echo "build harness ... ok"
else
    cat "$build/build.log"; failed=$((failed + 1)); echo "build harness ... FAILED"
    echo "$passed passed, $failed failed"; exit 1
fi

cp -r "$here/corpus" "$build/corpus"
if "$build/fuzz_decode" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "$build/corpus" >"$build/fuzz.log" 2>&1; then
    passed=$((passed + 1))
    grep -E "stat::number_of_executed_units|stat::new_units_added" "$build/fuzz.log"
    echo "fuzz decoders for ${seconds}s ... ok"
else
    tail -60 "$build/fuzz.log"
    failed=$((failed + 1)); echo "fuzz decoders ... FAILED"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
