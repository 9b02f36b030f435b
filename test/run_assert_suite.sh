#!/usr/bin/env bash
# Runs compressx's test suite (the pg_regress files, isolation specs and TAP
# tests that test/run_tests.sh runs) against an assert-enabled PostgreSQL
# build of a major (15 unless given), and fails on any assertion failure
# ("TRAP:") or crashed server process in the server logs.
# test/assert_build.sh provides the build (from
# its cache outside the clone, building it once if missing).  compressx is
# built in a private copy of this tree, so the checkout's object files are
# left alone, and installed into the assert-enabled installation only.
# Ends with the line "N passed, N failed"; exits non-zero on failure.
#
#   test/run_assert_suite.sh [MAJOR]
#
#   CX_ASSERT_PREFIX     the installation (/opt/compressx-cache/pgNN-assert);
#                        set it only for a run of one major
#   CX_ASSERT_TEST_PORT  port of its throwaway cluster (15: 55433, others:
#                        55436, so that two majors' suites can run at once)
#   CX_KEEP_WORKDIR=1    keep logs and results after a passing run too
set -u
umask 022
. "$(dirname "$0")/lib.sh"

major=${1:-15}
prefix=${CX_ASSERT_PREFIX:-${CX_COMPILE_CACHE:-/opt/compressx-cache}/pg$major-assert}
export CX_ASSERT_PREFIX=$prefix
case $major in
    15) port=${CX_ASSERT_TEST_PORT:-55433} ;;
    *) port=${CX_ASSERT_TEST_PORT:-55436} ;;
esac
passed=0
failed=0
failures=""


cx_install_deps

# One assert suite at a time per cache: it installs compressx into the
# cached installation.  assert_build.sh sees the lock is held.
# (The same lock file as assert_build.sh's.)
lockfile=$(dirname "$prefix")/.$(basename "$prefix").lock
cx_sudo mkdir -p "$(dirname "$prefix")"
exec 9>>"$lockfile" || { echo "cannot open $lockfile"; failed=1; cx_summary_exit; }
cx_log "assert suite: waiting for $lockfile"
flock 9
export CX_ASSERT_LOCK_HELD=1

if ! bash "$cx_root/test/assert_build.sh" "$major" >/dev/null; then
    echo "assert-enabled PostgreSQL $major build ... FAILED"
    failed=1; cx_summary_exit
fi
cx_use_pg "$prefix/bin"
echo "assert-enabled build: $("$PGBIN/postgres" --version), $("$PGBIN/pg_config" --configure | grep -o "'--enable-cassert'")"

# A private copy of the tree, without git data and build output.
src=$(mktemp -d "${TMPDIR:-/tmp}/compressx-assert-src.XXXXXX")
trap 'rm -rf "$src"' EXIT
tar -C "$cx_root" --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
    --exclude=./results --exclude=./log --exclude='tmp_check' --exclude=regression.diffs \
    --exclude=regression.out -cf - . | tar -C "$src" -xf -
if ! cx_build_install "$src" 2>"$src/build.log"; then
    cat "$src/build.log"
    echo "build and install compressx against $PGBIN/pg_config ... FAILED"
    failed=1; cx_summary_exit
fi

work=$(cx_workdir assert)
cp -r "$src/sql" "$src/expected" "$src/test" "$src/README.md" "$work/"
[ "$(id -u)" -eq 0 ] && chown -R "$cx_user" "$work"
cx_log "starting a cluster with the assert-enabled server in $work"
cx_start_cluster "$work" "$port"
if ! cx_as_user pg_ctl -D "$work/data" status >/dev/null 2>&1; then
    cat "$work/server.log" 2>/dev/null
    echo "start assert-enabled cluster ... FAILED (logs in $work)"
    failed=1; cx_summary_exit
fi
trap 'cx_stop_cluster "$work"; rm -rf "$src"' EXIT
asserts=$(cx_as_user psql -X -At -h "$work" -p "$port" -U postgres -d postgres -c 'SHOW debug_assertions' 2>&1)
if [ "$asserts" != on ]; then
    echo "server has debug_assertions = $asserts ... FAILED (logs in $work)"
    failed=1; cx_summary_exit
fi
echo "server: debug_assertions = $asserts"

cx_run_parts "$src" "$work" "$port"

# Stop first: an assertion can fail at shutdown too.  Then the server logs
# of this cluster and of the TAP tests' clusters.
cx_stop_cluster "$work"
cx_log "server logs: assertion failures and crashes"
cx_check_server_logs "$work"
cx_finish_workdir "$work"
cx_summary_exit
