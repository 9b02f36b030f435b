#!/usr/bin/env bash
# Runs compressx's Citus tests (test/citus/*.pl: a coordinator and two
# workers each) on one major: builds Citus from vendor/citus/ if its cached
# build is missing (test/citus_build.sh) and installs it, builds compressx
# from a private copy of this tree and installs it into the same
# installation, then runs the TAP files.  Ends with "N passed, N failed".
#
#   test/citus_suite.sh 15|17|18
#
# 17 is the 17.10 server with 17.12's headers of test/prebuilt_pg.sh: its
# test-only shim is preloaded before Citus, PostgreSQL's TAP modules come
# from Debian's 15 (CX_TAP_PERL, as in test/run_version_suite.sh), and the
# logical shard move is skipped (compressx's decoders read the reorder
# buffer's changes, whose layout differs between 17.10 and 17.12).
#
# CX_PGBIN (15): test in that copy of 15 instead of Debian's (test/lib.sh);
# Citus and compressx are installed there.
set -u
umask 022
. "$(dirname "$0")/lib.sh"

v=${1:?usage: $0 15|17|18}
passed=0
failed=0
failures=""

cx_install_deps
if ! bindir=$(bash "$cx_root/test/citus_build.sh" "$v"); then
    echo "Citus build for PostgreSQL $v ... FAILED"
    failed=1; cx_summary_exit
fi
cache=${CX_COMPILE_CACHE:-/opt/compressx-cache}
# one run at a time per installation: compressx is installed into it
exec 9>>"$cache/.citus-pg$v-$(echo "$bindir" | md5sum | cut -c1-8).suite.lock" && flock 9
cx_use_pg "$bindir"
echo "server: $("$PGBIN/postgres" --version), Citus $(sed -n 's/^default_version = .\([0-9.-]*\).*/\1/p' "$("$PGBIN/pg_config" --sharedir)/extension/citus.control")"
cx_build_install_copy
tap_perl=$PGXS_DIR/src/test/perl
if [ "$v" = 17 ]; then
    tap_perl=${CX_TAP_PERL:-/usr/lib/postgresql/15/lib/pgxs/src/test/perl}
    export CX_PRELOAD_FIRST=cx_pg17_shim
    export CX_SKIP_LOGICAL_DECODING="a 17.10 server with 17.12 headers: the reorder buffer's ReorderBufferChange differs between them"
fi

work=$(cx_workdir "citus-pg$v")
mkdir -p "$work/test"
cp -r "$cx_root/test/citus" "$work/test/"
[ "$(id -u)" -eq 0 ] && chown -R "$cx_user" "$work"
for t in "$work"/test/citus/*.pl; do
    name=$(basename "$t")
    if (cd "$work/test" && cx_as_user env TESTDIR="$work/test" \
            TESTDATADIR="$work/test/tmp_check" TESTLOGDIR="$work/test/tmp_check/log" \
            PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
            CX_PRELOAD_FIRST="${CX_PRELOAD_FIRST:-}" CX_SKIP_LOGICAL_DECODING="${CX_SKIP_LOGICAL_DECODING:-}" \
            prove -I "$tap_perl" "citus/$name") >"$work/tap-$name.log" 2>&1; then
        passed=$((passed + 1))
        tail -n 3 "$work/tap-$name.log"
    else
        failed=$((failed + 1)); failures="$failures $name"
        cat "$work/tap-$name.log"
    fi
done
cx_finish_workdir "$work"
cx_summary_exit
