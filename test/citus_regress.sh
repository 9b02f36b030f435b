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
#   --setup SCHED   Citus schedule run before the tests (base_schedule)
#
# Citus's tests connect to the fixed ports 57636-57638 on localhost: when
# the kernel allows it the cluster runs in a network namespace of its own
# (unshare -n; the Unix sockets go into the work directory), so
# concurrent runs and other servers do not collide;
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
# The subset: each passes under heap (Citus's own configuration) and under
# compressx, the ones marked * (and the setup test
# multi_create_table_superuser) after normalize_am.sed / dedup_context.awk
# (the output names the access method, or compressx's event triggers add a
# DEBUG context).  Order of Citus's multi_1_schedule, then multi_schedule:
# some use tables of earlier ones (multi_load_more_data's lineitem rows, the
# data of multi_behavioral_analytics_create_table).  Left out: with_modifying,
# with_executors, with_join, multi_complex_count_distinct, multi_copy,
# multi_modifying_xacts (fail under heap too outside the whole
# multi_1_schedule), multi_size_queries (needs multi_copy's tables),
# alter_table_set_access_method,
# insert_select_into_local_table, merge_repartition1 (their CREATE EXTENSION
# citus_columnar runs under default_table_access_method = compressx, so
# columnar's metadata tables become compressx tables, which columnar cannot
# use: "attempted columnar write ... to invalid logical offset: 0").
default_tests="
multi_behavioral_analytics_basics multi_behavioral_analytics_single_shard_queries
multi_insert_select_non_pushable_queries multi_insert_select
multi_shard_update_delete recursive_dml_with_different_planners_executors
insert_select_repartition window_functions dml_recursive multi_insert_select_window
multi_insert_select_conflict citus_table_triggers*
multi_row_insert alter_index
multi_partitioning*
multi_tpch_query1 multi_tpch_query3 multi_tpch_query6 multi_tpch_query10
multi_tpch_query12 multi_tpch_query14 multi_tpch_query19
multi_tpch_query7 multi_tpch_query7_nested
multi_load_more_data multi_join_order_tpch_repartition
multi_repartition_join_planning multi_repartition_join_pruning
multi_repartition_join_task_assignment multi_repartition_join_ref
cte_prepared_modify cte_nested_modification
with_partitioning with_transactions with_dml
multi_index_statements multi_alter_table_statements alter_table_add_column*
sequential_modifications multi_outer_join multi_select_distinct
multi_modifications multi_update_select
multi_upsert multi_simple_queries multi_data_types
citus_copy_shard_placement multi_utilities
multi_subtransactions multi_generate_ddl_commands*
local_dist_join_modifications local_table_join
fast_path_router_modify multi_router_planner null_parameters multi_router_planner_fast_path
multi_truncate multi_foreign_key
multi_reference_table* citus_local_tables_queries
subquery_in_where pg15 tableam
multi_subquery_complex_reference_clause multi_subquery_in_where_clause
merge pgmerge merge_repartition2 merge_schema_sharding merge_partition_tables
merge_vcore merge_unsupported
"

am=compressx
keep=""
tests=""
while [ $# -gt 0 ]; do
    case $1 in
        --am) am=${2:?--am needs a value}; shift 2 ;;
        --am=*) am=${1#--am=}; shift ;;
        --keep) keep=1; shift ;;
        --setup) setup_schedule=${2:?--setup needs a schedule name}; shift 2 ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        -*) echo "$0: unknown option $1" >&2; exit 2 ;;
        *) tests="$tests $1"; shift ;;
    esac
done
case $am in compressx|heap|heap+cx) ;; *) echo "$0: --am compressx|heap|heap+cx" >&2; exit 2 ;; esac
[ -n "$tests" ] || tests=$(echo "$default_tests" | tr -d '*')

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

# compressx run: a diff in front of Citus's bin/diff that first applies
# citus_regress/normalize_am.sed and dedup_context.awk to the expected and
# the actual output (see there: the access method's name, compressx's event
# triggers); Citus's diff then normalizes as usual
pathdirs=$r/bin
if [ "$am" = compressx ]; then
    mkdir -p "$r/cxbin"
    cp "$data/normalize_am.sed" "$data/dedup_context.awk" "$r/cxbin/"
    cat >"$r/cxbin/diff" <<WRAPPER
#!/usr/bin/env bash
for f in "\${@:(-2):1}" "\${@:(-1):1}"; do
    [ -f "\$f" ] || continue
    sed -Ef "$r/cxbin/normalize_am.sed" "\$f" | awk -f "$r/cxbin/dedup_context.awk" >"\$f.cx" &&
        mv -f "\$f.cx" "\$f"
done
exec "$r/bin/diff" "\$@"
WRAPPER
    chmod 755 "$r/cxbin/diff"
    pathdirs=$r/cxbin:$r/bin
fi

[ "$(id -u)" -eq 0 ] && chown -R "$cx_user" "$work"
pgxs=$("$PGBIN/pg_config" --pgxs)
pgxs=${pgxs%/src/makefiles/pgxs.mk}
run=(env PATH="$pathdirs:$PGBIN:/usr/local/bin:/usr/bin:/bin" LANG=C LC_ALL=C
     PG_REGRESS_DIFF_OPTS="-dU10 -w"
     perl "$r/pg_regress_multi.pl" --pgxsdir="$pgxs" --bindir="$PGBIN"
     --libdir="$("$PGBIN/pg_config" --libdir)" --majorversion=15
     --postgres-builddir=/nonexistent --postgres-srcdir=/nonexistent
     --citus_abs_srcdir="$r" "${ext[@]}"
     --server-option="shared_preload_libraries='$preload'"
     --server-option="unix_socket_directories='$work'"
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
# one unit per test line of pg_regress ("test x ... ok", "     x ... FAILED";
# initdb's "... ok" lines in the same log are not tests)
tlines=$(grep -E '^(test +|     )[A-Za-z0-9_]+ +\.\.\. ' "$work/regress.log")
p=$(printf '%s\n' "$tlines" | grep -cE '\.\.\. +ok ')
f=$(printf '%s\n' "$tlines" | grep -cE '\.\.\. +FAILED|failed \(ignored\)')
passed=$((passed + p)); failed=$((failed + f))
[ "$f" -gt 0 ] && failures="$failures $(printf '%s\n' "$tlines" | grep -E 'FAILED|failed \(ignored\)' | awk '{print ($1 == "test") ? $2 : $1}' | tr '\n' ' ')"
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    failed=$((failed + 1)); failures="$failures pg_regress_multi(exit $rc)"
fi
if [ -s "$r/regression.diffs" ]; then
    cat "$r/regression.diffs"
    echo "diffs: $r/regression.diffs"
fi
echo "runtime: $(( $(date +%s) - start ))s"
if [ -n "$keep" ]; then
    echo "work directory kept: $work"
else
    cx_finish_workdir "$work"
fi
cx_summary_exit
