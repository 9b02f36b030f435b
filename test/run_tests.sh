#!/usr/bin/env bash
# Runs compressx's whole test suite against real PostgreSQL servers that it
# starts itself: pg_regress files (sql/, expected/), isolation specs
# (test/isolation/) and TAP tests (test/t/).  Installs dependencies and the
# extension first.  Then runs the same tests against an assert-enabled
# PostgreSQL build (test/run_assert_suite.sh, one more counted unit; built
# once into a cache outside the clone, see test/assert_build.sh) unless
# CX_SKIP_ASSERT=1, and PostgreSQL's own regression suite under heap and
# under the compressx access method (test/core_regress.sh, one more counted
# unit) unless CX_SKIP_CORE=1, and a warnings-as-errors compile against
# PostgreSQL 15, 17 and 18 (test/compile_check.sh, one more counted unit;
# 17 and 18 built once into a cache outside the clone) unless
# CX_SKIP_COMPILE=1, the pg_regress files, isolation specs and TAP tests
# again on PostgreSQL 18 (test/run_version_suite.sh 18, one more counted
# unit) unless CX_SKIP_PG18=1, and on an assert-enabled 18
# (test/run_assert_suite.sh 18, one more counted unit) unless
# CX_SKIP_ASSERT18=1 or CX_SKIP_ASSERT=1 (which skips both assert suites),
# and the layer rule of src/ (test/check_layers.sh, one more counted unit).
# Ends with the line "N passed, N failed".
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

cx_run_parts "$cx_root" "$work" "$port"

# run_unit NAME SKIPVAR DESCRIPTION SCRIPT [ARGS]: one more counted unit;
# its output is indented, so that only the last line below is a summary
run_unit() {
    local name=$1 skipvar=$2 what=$3 script=$4
    shift 4
    if [ "${!skipvar:-}" = 1 ]; then
        return
    fi
    cx_log "$what: test/$script ($skipvar=1 skips it)"
    bash "$cx_root/test/$script" "$@" | sed -u 's/^/    /'
    if [ "${PIPESTATUS[0]}" -eq 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); failures="$failures $name"
    fi
}

# the assert suite starts its own cluster on the same port
[ "${CX_SKIP_ASSERT:-}" = 1 ] || cx_stop_cluster "$work"
run_unit assert-suite CX_SKIP_ASSERT "assert-enabled build" run_assert_suite.sh
run_unit core-regress CX_SKIP_CORE "PostgreSQL's regression suite, heap against compressx" \
    core_regress.sh --no-install
run_unit layers CX_SKIP_LAYERS "layer rule of src/" check_layers.sh
run_unit compile-check CX_SKIP_COMPILE "compile check against PostgreSQL 15, 17 and 18" compile_check.sh
run_unit suite-pg18 CX_SKIP_PG18 "the suite on PostgreSQL 18" run_version_suite.sh 18
: "${CX_SKIP_ASSERT18:=${CX_SKIP_ASSERT:-}}"
run_unit assert-suite-18 CX_SKIP_ASSERT18 "assert-enabled PostgreSQL 18" run_assert_suite.sh 18
run_unit fuzz CX_SKIP_FUZZ "fuzzing the decoders" fuzz/run_fuzz.sh

if [ -n "$failures" ]; then
    echo "failed:$failures (logs in $work)"
elif [ -z "${CX_KEEP_WORKDIR:-}" ]; then
    cx_stop_cluster "$work"; trap - EXIT; rm -rf "$work"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
