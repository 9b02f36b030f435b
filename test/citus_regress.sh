#!/usr/bin/env bash
# Runs a subset of Citus 13.2.2's own regression tests (src/test/regress of
# the cached Citus build, through its pg_regress_multi.pl: a coordinator and
# two workers) on Debian's PostgreSQL 15 with compressx as the access method
# of the tables the tests create: the setup tests of Citus's base_schedule
# (cluster, helpers, the TPC-H and behavioural-analytics tables and their
# data), then the DML, COPY, router and table-AM tests listed below.
# Ends with "N passed, N failed" (one unit per pg_regress test).
#
#   test/citus_regress.sh [--am compressx|heap|heap+cx] [--keep] [TEST...]
#
#   --am compressx  (default) compressx preloaded, CREATE EXTENSION compressx
#                   in the regression database of every node, then
#                   test/citus_regress/cx_default_am.sql makes
#                   default_table_access_method = compressx there (ALTER
#                   DATABASE; not postgresql.conf, or CREATE EXTENSION citus
#                   would make Citus's catalog tables compressx tables)
#   --am heap       Citus's own configuration, no compressx: the baseline
#   --am heap+cx    compressx preloaded and created, default heap
#   TEST...         run these after the setup tests instead of the subset
#   --keep          keep the work directory (removed on success otherwise)
#
# Citus's tests connect to the fixed ports 57636-57638 on localhost: when
# the kernel allows it the cluster runs in a network namespace of its own
# (unshare -n), so concurrent runs and other servers do not collide;
# otherwise the ports must be free and runs on this machine take turns
# (a lock in the cache directory).
#
#   CX_COMPILE_CACHE   cache directory with the Citus build (/opt/compressx-cache)
set -u
umask 022
. "$(dirname "$0")/lib.sh"

# The setup tests: Citus's base_schedule (what its run_test.py runs before
# a multi_1_schedule test that needs the loaded data).
setup_schedule=base_schedule
# The subset: each passes under heap and under compressx, in the order of
# Citus's multi_1_schedule / multi_schedule (later ones may use the tables
# of earlier ones, multi_size_queries those of multi_copy).
default_tests="
multi_insert_select
"

am=compressx
keep=""
tests=""
while [ $# -gt 0 ]; do
    case $1 in
        --am) am=${2:?--am needs a value}; shift 2 ;;
        --am=*) am=${1#--am=}; shift ;;
        --keep) keep=1; shift ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        -*) echo "$0: unknown option $1" >&2; exit 2 ;;
        *) tests="$tests $1"; shift ;;
    esac
done
case $am in compressx|heap|heap+cx) ;; *) echo "$0: --am compressx|heap|heap+cx" >&2; exit 2 ;; esac
[ -n "$tests" ] || tests=$default_tests

passed=0
failed=0
failures=""
start=$(date +%s)
data=$cx_root/test/citus_regress
cache=${CX_COMPILE_CACHE:-/opt/compressx-cache}
citus_dir=$cache/citus-13.2.2-pg15
regress_src=$citus_dir/src/test/regress

cx_install_deps
# pg_regress_multi.pl needs only Perl's core modules; Citus's diff wrapper
# (bin/diff -> bin/diff-filter) needs python3
if ! [ -x /usr/bin/python3 ]; then
    cx_log "installing python3 (Citus's diff filter)"
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3 >/dev/null
fi

# Citus: the installed one when it is the cached build's, else build
# (first time: about 9 minutes) and install it
bindir=/usr/lib/postgresql/15/bin
pkglib=$("$bindir/pg_config" --pkglibdir)
sharedir=$("$bindir/pg_config" --sharedir)
if ! [ -f "$citus_dir/.compressx-citus-build" ] ||
        ! cmp -s "$citus_dir/src/backend/distributed/citus.so" "$pkglib/citus.so" ||
        ! [ -f "$sharedir/extension/citus.control" ]; then
    bindir=$(bash "$cx_root/test/citus_build.sh" 15) ||
        { echo "Citus build for PostgreSQL 15 ... FAILED"; failed=1; cx_summary_exit; }
fi
cx_use_pg "$bindir"
# compressx: the installed one; built from a copy of this tree and
# installed only when missing
if [ "$am" != heap ] && ! [ -f "$sharedir/extension/compressx.control" -a -f "$pkglib/compressx.so" ]; then
    cx_log "compressx is not installed: building it from a copy of $cx_root"
    cx_build_install_copy
fi
echo "server: $("$PGBIN/postgres" --version), Citus $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$sharedir/extension/citus.control"), access method: $am"

# one run at a time on the fixed ports, unless in a network namespace
netns=""
if cx_sudo unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
    netns=1
else
    exec 8>>"$cache/.citus-regress-ports.lock" && flock 8
fi

work=$(cx_workdir citus-regress)
r=$work/regress
cp -a "$regress_src" "$r"
rm -rf "$r/tmp_check" "$r/results" "$r"/regression.* "$r/test_times.log"
cp "$data"/*.sql "$r/sql/"
cp "$data"/*.out "$r/expected/"

{
    [ "$am" = compressx ] && echo "test: cx_default_am"
    grep -E '^test:' "$regress_src/$setup_schedule"
    for t in $tests; do echo "test: $t"; done
} >"$r/cx_schedule"

ext=(--load-extension=citus)
preload=citus
[ -f "$sharedir/extension/pg_stat_statements.control" ] && preload="$preload,pg_stat_statements"
[ -f "$sharedir/extension/hll.control" ] && preload="$preload,hll"
if [ "$am" != heap ]; then
    ext+=(--load-extension=compressx)
    preload="$preload,compressx"
fi

[ "$(id -u)" -eq 0 ] && chown -R "$cx_user" "$work"
pgxs=$("$PGBIN/pg_config" --pgxs)
pgxs=${pgxs%/src/makefiles/pgxs.mk}
run=(env PATH="$r/bin:$PGBIN:/usr/local/bin:/usr/bin:/bin" LANG=C LC_ALL=C
     PG_REGRESS_DIFF_OPTS="-dU10 -w"
     perl "$r/pg_regress_multi.pl" --pgxsdir="$pgxs" --bindir="$PGBIN"
     --libdir="$("$PGBIN/pg_config" --libdir)" --majorversion=15
     --postgres-builddir=/nonexistent --postgres-srcdir=/nonexistent
     --citus_abs_srcdir="$r" "${ext[@]}"
     --server-option="shared_preload_libraries='$preload'"
     -- --inputdir="$r" --launcher="$r/log_test_times" --schedule="$r/cx_schedule")
cx_log "pg_regress_multi.pl in $r ($(grep -c . "$r/cx_schedule") schedule lines${netns:+, own network namespace})"
if [ -n "$netns" ]; then
    (cd "$r" && cx_sudo unshare -n sh -c 'ip link set lo up && exec "$@"' sh \
        runuser -u "$cx_user" -- "${run[@]}") >"$work/regress.log" 2>&1
else
    (cd "$r" && cx_as_user "${run[@]}") >"$work/regress.log" 2>&1
fi
rc=$?
cat "$work/regress.log"
cx_count_regress "$work/regress.log" "$rc" pg_regress_multi
[ -f "$r/regression.diffs" ] && [ -s "$r/regression.diffs" ] && echo "diffs: $r/regression.diffs"
echo "runtime: $(( $(date +%s) - start ))s"
if [ -n "$keep" ]; then
    echo "work directory kept: $work"
else
    cx_finish_workdir "$work"
fi
cx_summary_exit
