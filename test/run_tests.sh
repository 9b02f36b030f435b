#!/usr/bin/env bash
# Runs compressx's whole test suite against real PostgreSQL servers that it
# starts itself: pg_regress files (sql/, expected/), isolation specs
# (test/isolation/) and TAP tests (test/t/).  Installs dependencies and the
# extension first.  Ends with the line "N passed, N failed".
set -u
. "$(dirname "$0")/lib.sh"

cx_install_deps
cx_build_install

work=$(cx_workdir tests)
cp -r "$cx_root/sql" "$cx_root/expected" "$cx_root/test" "$work/"
[ "$(id -u)" -eq 0 ] && chown -R "$cx_user" "$work"
port=${CX_TEST_PORT:-55432}
cx_start_cluster "$work" "$port"
trap 'cx_stop_cluster "$work"' EXIT
# CX_KEEP_WORKDIR=1 keeps logs and results after a passing run too

passed=0
failed=0
failures=""

# pg_regress and pg_isolation_regress print one line per test ending in
# "ok" or "FAILED"; count them.
count_regress() {
    local log=$1 p f
    p=$(grep -cE '\.\.\. ok|\.\.\. +ok' "$log")
    f=$(grep -cE 'FAILED|failed \(ignored\)' "$log")
    passed=$((passed + p)); failed=$((failed + f))
    [ "$f" -gt 0 ] && failures="$failures $(grep -E 'FAILED' "$log" | awk '{print $2}' | tr '\n' ' ')"
}

regress_tests=$(sed -n 's/^REGRESS = //p' "$cx_root/Makefile")
cx_log "pg_regress: $regress_tests"
cx_as_user "$PGXS_DIR/src/test/regress/pg_regress" \
    --inputdir="$work" --outputdir="$work/regress" --bindir="$PGBIN" \
    --host="$work" --port="$port" --user=postgres \
    --load-extension=compressx --dbname=cx_regression \
    $regress_tests >"$work/regress.log" 2>&1
cat "$work/regress.log"
count_regress "$work/regress.log"
[ -f "$work/regress/regression.diffs" ] && cat "$work/regress/regression.diffs"

specs=$(cd "$cx_root/test/isolation/specs" && ls *.spec | sed 's/\.spec$//' | tr '\n' ' ')
cx_log "isolation: $specs"
cx_as_user "$PGXS_DIR/src/test/isolation/pg_isolation_regress" \
    --inputdir="$work/test/isolation" --outputdir="$work/isolation" \
    --bindir="$PGBIN" --host="$work" --port="$port" --user=postgres \
    --load-extension=compressx --dbname=cx_isolation \
    $specs >"$work/isolation.log" 2>&1
cat "$work/isolation.log"
count_regress "$work/isolation.log"
[ -f "$work/isolation/regression.diffs" ] && cat "$work/isolation/regression.diffs"

cx_log "TAP tests"
for t in "$work"/test/t/*.pl; do
    name=$(basename "$t")
    if (cd "$work/test" && cx_as_user env TESTDIR="$work/test" \
            PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
            prove -I "$PGXS_DIR/src/test/perl" "t/$name") >"$work/tap-$name.log" 2>&1; then
        passed=$((passed + 1))
        tail -n 3 "$work/tap-$name.log"
    else
        failed=$((failed + 1)); failures="$failures $name"
        cat "$work/tap-$name.log"
        ls "$work"/test/tmp_check/log/ 2>/dev/null | head
    fi
done

if [ -n "$failures" ]; then
    echo "failed:$failures (logs in $work)"
elif [ -z "${CX_KEEP_WORKDIR:-}" ]; then
    cx_stop_cluster "$work"; trap - EXIT; rm -rf "$work"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
