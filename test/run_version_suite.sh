#!/usr/bin/env bash
# Runs compressx's test suite (the pg_regress files, isolation specs and TAP
# tests that test/run_tests.sh runs on Debian's PostgreSQL 15) on another
# major: the installation test/compile_check.sh builds from Debian's source
# package into the cache outside the clone (/opt/compressx-cache/pgNN, with
# TAP support and contrib/pg_surgery, which sql/verify.sql uses).  compressx
# is built in a private copy of this tree and installed into that
# installation only.  Ends with the line "N passed, N failed"; exits
# non-zero on failure.
#
#   test/run_version_suite.sh 18
#
#   CX_VERSION_TEST_PORT  port of its throwaway cluster (55434)
#   CX_KEEP_WORKDIR=1     keep logs and results after a passing run too
set -u
umask 022
. "$(dirname "$0")/lib.sh"

v=${1:?usage: $0 MAJOR}
port=${CX_VERSION_TEST_PORT:-55434}
cache=${CX_COMPILE_CACHE:-/opt/compressx-cache}
prefix=$cache/pg$v
passed=0
failed=0
failures=""


cx_install_deps
if ! bash "$cx_root/test/compile_check.sh" --build "$v" >/dev/null; then
    echo "PostgreSQL $v build in $prefix ... FAILED"
    failed=1; cx_summary_exit
fi
if [ ! -x "$prefix/bin/postgres" ]; then
    echo "PostgreSQL $v in $prefix has no server (headers only) ... FAILED"
    failed=1; cx_summary_exit
fi

# One run at a time per installation: it installs compressx into it.
exec 9>>"$cache/.pg$v.suite.lock" || { echo "cannot open the lock"; failed=1; cx_summary_exit; }
flock 9
cx_use_pg "$prefix/bin"
echo "server: $("$PGBIN/postgres" --version)"

src=$(mktemp -d "${TMPDIR:-/tmp}/compressx-pg$v-src.XXXXXX")
trap 'rm -rf "$src"' EXIT
tar -C "$cx_root" --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
    --exclude=./results --exclude=./log --exclude='tmp_check' --exclude=regression.diffs \
    --exclude=regression.out -cf - . | tar -C "$src" -xf -
if ! make -C "$src" -s PG_CONFIG="$PGBIN/pg_config" with_llvm=no >"$src/build.log" 2>&1 ||
   ! make -C "$src" -s PG_CONFIG="$PGBIN/pg_config" with_llvm=no install >>"$src/build.log" 2>&1; then
    cat "$src/build.log"
    echo "build and install compressx against $PGBIN/pg_config ... FAILED"
    failed=1; cx_summary_exit
fi

work=$(cx_workdir "pg$v")
cp -r "$src/sql" "$src/expected" "$src/test" "$work/"
[ "$(id -u)" -eq 0 ] && chown -R "$cx_user" "$work"
cx_start_cluster "$work" "$port"
if ! cx_as_user pg_ctl -D "$work/data" status >/dev/null 2>&1; then
    cat "$work/server.log" 2>/dev/null
    echo "start PostgreSQL $v cluster ... FAILED (logs in $work)"
    failed=1; cx_summary_exit
fi
trap 'cx_stop_cluster "$work"; rm -rf "$src"' EXIT

cx_run_parts "$src" "$work" "$port"
cx_stop_cluster "$work"
cx_check_server_logs "$work"
cx_finish_workdir "$work"
cx_summary_exit
