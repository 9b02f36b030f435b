#!/usr/bin/env bash
# Runs compressx's test suite (the pg_regress files, isolation specs and TAP
# tests that test/run_tests.sh runs on Debian's PostgreSQL 15) on another
# major, in an installation cached outside the clone:
#   18  the one test/compile_check.sh builds from Debian's source package
#       (/opt/compressx-cache/pg18, with TAP support and contrib/pg_surgery,
#       which sql/verify.sql uses);
#   16  16.2's headers, PGXS and clients with 16.14's server
#       (/opt/compressx-cache/pg16), 17  a 17.10 server with 17.12's headers
#       and a preloaded test-only shim (/opt/compressx-cache/pg17-run), both
#       assembled from prebuilt packages by test/prebuilt_pg.sh.  Neither has
#       PostgreSQL's TAP modules: the TAP tests use Debian 15's
#       (postgresql-client-15), which drive 16 and 17 servers unchanged.
#   19  Debian's 19 packages (19~rc1 from experimental) in a sid root: run
#       test/run_pg19.sh on the host, which copies this tree into the root
#       and runs this script there (CX_IN_SID_ROOT=1); the packages ship
#       pg_regress, the isolation tester and the TAP modules.
# compressx is built in a private copy of this tree and installed into that
# installation only.  Ends with the line "N passed, N failed"; exits
# non-zero on failure.
#
#   test/run_version_suite.sh 16|17|18
#   test/run_version_suite.sh 19        (inside the sid root only)
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


server_conf=""
[ "$v" = 19 ] || cx_install_deps
case $v in
    19)
        # the sid root's own packages (test/run_pg19.sh); no cache there
        if [ -z "${CX_IN_SID_ROOT:-}" ]; then
            echo "PostgreSQL 19 runs inside its sid root: use test/run_pg19.sh ... FAILED"
            failed=1; cx_summary_exit
        fi
        prefix=/usr/lib/postgresql/19
        cache=/tmp
        # 19 made lz4 heap's default_toast_compression (pglz in 15 to 18):
        # the tests' heap tables and their expected outputs (how many values
        # a recompression to lz4 rewrites, the methods heap stored) assume
        # pglz, which a server of 15 to 18 with this setting changed shows
        # the same way; the TAP tests' clusters get it through TEMP_CONFIG
        server_conf="default_toast_compression = pglz"
        ;;
    16|17)
        if ! prefix=$(bash "$cx_root/test/prebuilt_pg.sh" "$v"); then
            echo "PostgreSQL $v from prebuilt packages (test/prebuilt_pg.sh) ... FAILED"
            failed=1; cx_summary_exit
        fi
        export CX_TAP_PERL=${CX_TAP_PERL:-/usr/lib/postgresql/15/lib/pgxs/src/test/perl}
        if [ "$v" = 17 ]; then
            # the TAP tests' clusters get it through TEMP_CONFIG (PostgreSQL::Test::Cluster)
            server_conf="shared_preload_libraries = 'cx_pg17_shim'"
            # 17.10's ReorderBufferChange is 8 bytes shorter than 17.12's
            # headers say (its list node at byte 64, not 72): compressx's
            # logical decoding wrapper reads the reorder buffer's changes
            # and crashes on them in this mixed build
            export CX_SKIP_LOGICAL_DECODING="a 17.10 server with 17.12 headers: the reorder buffer's ReorderBufferChange differs between them"
        fi
        ;;
    *)
        if ! bash "$cx_root/test/compile_check.sh" --build "$v" >/dev/null; then
            echo "PostgreSQL $v build in $prefix ... FAILED"
            failed=1; cx_summary_exit
        fi
        ;;
esac
if [ ! -x "$prefix/bin/postgres" ]; then
    echo "PostgreSQL $v in $prefix has no server (headers only) ... FAILED"
    failed=1; cx_summary_exit
fi

# One run at a time per installation: it installs compressx into it.
exec 9>>"$cache/.pg$v.suite.lock" || { echo "cannot open the lock"; failed=1; cx_summary_exit; }
flock 9
cx_use_pg "$prefix/bin"
echo "server: $("$PGBIN/postgres" --version), headers: PostgreSQL $(sed -n 's/^#define PG_VERSION "\(.*\)"$/\1/p' "$("$PGBIN/pg_config" --includedir-server)/pg_config.h")"

src=$(mktemp -d "${TMPDIR:-/tmp}/compressx-pg$v-src.XXXXXX")
trap 'rm -rf "$src"' EXIT
tar -C "$cx_root" --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
    --exclude=./results --exclude=./log --exclude='tmp_check' --exclude=regression.diffs \
    --exclude=regression.out -cf - . | tar -C "$src" -xf -
# 19 is not in test/compile_check.sh (its headers live in the sid root):
# its build here is the warnings-as-errors check
werror=""
[ "$v" = 19 ] && werror=COPT=-Werror
if ! make -C "$src" -s PG_CONFIG="$PGBIN/pg_config" with_llvm=no $werror >"$src/build.log" 2>&1 ||
   ! make -C "$src" -s PG_CONFIG="$PGBIN/pg_config" with_llvm=no install >>"$src/build.log" 2>&1; then
    cat "$src/build.log"
    echo "build and install compressx against $PGBIN/pg_config ... FAILED"
    failed=1; cx_summary_exit
fi

work=$(cx_workdir "pg$v")
cp -r "$src/sql" "$src/expected" "$src/test" "$src/README.md" "$work/"
[ "$(id -u)" -eq 0 ] && chown -R "$cx_user" "$work"
if [ -n "$server_conf" ]; then
    echo "$server_conf" >"$work/temp.conf"
    export TEMP_CONFIG=$work/temp.conf
fi
# servers started from here must not inherit the lock (fd 9): a server a
# failed TAP test leaves running would hold it for the next run
cx_start_cluster "$work" "$port" "$server_conf" 9>&-
if ! cx_as_user pg_ctl -D "$work/data" status >/dev/null 2>&1; then
    cat "$work/server.log" 2>/dev/null
    echo "start PostgreSQL $v cluster ... FAILED (logs in $work)"
    failed=1; cx_summary_exit
fi
trap 'cx_stop_cluster "$work"; rm -rf "$src"' EXIT

cx_run_parts "$src" "$work" "$port" 9>&-
cx_stop_cluster "$work"
cx_check_server_logs "$work"
cx_finish_workdir "$work"
cx_summary_exit
