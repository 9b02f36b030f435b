#!/usr/bin/env bash
# Runs compressx's whole test suite against real PostgreSQL servers that it
# starts itself: pg_regress files (sql/, expected/), isolation specs
# (test/isolation/) and TAP tests (test/t/).  Installs dependencies and the
# extension first.  Ends with the line "N passed, N failed".
#
# On Debian's PostgreSQL 15 it runs the suite, then these counted units
# (each skipped by its variable set to 1):
#   assert-suite   the suite on an assert-enabled 15 (test/run_assert_suite.sh;
#                  built once into a cache outside the clone, see
#                  test/assert_build.sh)                        CX_SKIP_ASSERT
#   core-regress   PostgreSQL's regression suite under heap and under the
#                  compressx access method (test/core_regress.sh)   CX_SKIP_CORE
# On PostgreSQL 18 (built once into the cache by test/compile_check.sh):
#   suite-pg18     the suite (test/run_version_suite.sh 18)      CX_SKIP_PG18
#   assert-suite-18  the suite on an assert-enabled 18 (test/run_assert_suite.sh
#                  18, built by test/assert_build.sh 18)         CX_SKIP_ASSERT18
#                  (CX_SKIP_ASSERT=1 skips both assert suites)
#   core-regress-18  PostgreSQL 18's regression suite, heap against
#                  compressx (test/core_regress.sh --major 18)   CX_SKIP_CORE
#   upgrade-15-18  pg_upgrade 15 -> 18, --copy and --link
#                  (test/upgrade_check.sh 18; needs 15 too)      CX_SKIP_UPGRADE
#   upgrade-15-17  the same, 15 -> the 17.10 server (test/upgrade_check.sh
#                  17; needs 15 and 17 in PGVERSIONS)            CX_SKIP_UPGRADE
#   upgrade-17-18  the same, the 17.10 server -> 18 (CX_UPGRADE_OLD_MAJOR=17
#                  test/upgrade_check.sh 18; needs 17 and 18)    CX_SKIP_UPGRADE
#   upgrade-15-16, upgrade-16-17, upgrade-16-18  the same with 16.2 (from
#                  test/prebuilt_pg.sh 16.2) as new or old side; its
#                  fixture stores pglz where the others store lz4 (16's
#                  builds lack lz4)                              CX_SKIP_UPGRADE
# On PostgreSQL 19 (19~rc1 in the sid root, test/sid19_root.sh; run as root),
# in a second lane beside the Citus, fuzz, Debezium and package units (both
# cores; its output printed when it ends):
#   suite-pg19     the suite (test/run_pg19.sh)                  CX_SKIP_PG19
#   upgrade-15-19, upgrade-16-19, upgrade-17-19, upgrade-18-19  pg_upgrade
#                  from Debian's 15.18, 16.2, 17.10 and 18.6 to 19~rc1,
#                  --copy and --link (test/upgrade_check.sh 19 with
#                  CX_UPGRADE_OLD_MAJOR; the check runs inside the sid
#                  root, the old side's compressx built on the host; each
#                  needs 19 and its old major in PGVERSIONS)      CX_SKIP_UPGRADE
# On PostgreSQL 16 and 17 (prebuilt packages assembled once into the cache
# by test/prebuilt_pg.sh):
#   suite-pg16     the suite on 16.14's server, compressx built against
#                  16.2's headers; both builds lack lz4 (tests that store
#                  core lz4 have alternative outputs or skip)
#                  (test/run_version_suite.sh 16)                CX_SKIP_PG16
#   suite-pg17     the suite on a 17.10 server, compressx built against
#                  17.12's headers with a preloaded test-only shim
#                  (test/run_version_suite.sh 17)                CX_SKIP_PG17
# With Citus (built once from vendor/citus/ into the cache by
# test/citus_build.sh; a coordinator and two workers, test/citus/):
#   citus-15       Citus 13.2.2 on Debian's 15 (test/citus_suite.sh 15)
#                                                                CX_SKIP_CITUS
#   citus-17       Citus 13.2.2 on the 17.10 server of test/prebuilt_pg.sh,
#                  built against 17.12's headers (test/citus_suite.sh 17;
#                  the logical shard move is skipped there)      CX_SKIP_CITUS
#   citus-18       Citus 14.0.1 on the cached 18 (test/citus_suite.sh 18)
#                                                                CX_SKIP_CITUS
#   citus-regress-15  a subset of Citus 13.2.2's own regression tests with
#                  compressx as the default access method
#                  (test/citus_regress.sh)                       CX_SKIP_CITUS
# Version-neutral:
#   layers         the layer rule of src/ (test/check_layers.sh) CX_SKIP_LAYERS
#   compile-check  warnings-as-errors compile against each major of
#                  PGVERSIONS, 16 and 17 (test/compile_check.sh) CX_SKIP_COMPILE
#   fuzz           the decoders fuzzed (test/fuzz/run_fuzz.sh)   CX_SKIP_FUZZ
# On 15, when java and mvn are there (else skipped, not counted):
#   debezium       Debezium 3.6.1's embedded engine: the documented set-up
#                  and the recovery of a stuck connector
#                  (test/debezium/run.sh)                        CX_SKIP_DEBEZIUM
# On Debian's 15, last (it removes the suite's install of compressx from
# Debian's 15 and puts it back at the end):
#   package        the release archive (git archive) builds; META.json
#                  passes PGXN's validator; `pgxn install` of the archive
#                  and its uninstall; the Debian package
#                  postgresql-15-compressx builds (debian/), installs with
#                  apt-get into a 15 without compressx files, passes its own
#                  tests (debian/tests) and purges without a trace
#                  (test/package_check.sh)                       CX_SKIP_PACKAGE
#
# PGVERSIONS selects the majors whose parts run, among 15 16 17 18 19
# (default: all five; 19's suite, suite-pg19 (test/run_pg19.sh,
# CX_SKIP_PG19), runs in a sid root with 19~rc1's packages, which
# test/sid19_root.sh makes once into the cache):
#   PGVERSIONS=18 bash test/run_tests.sh     only 18's parts (and the
#                                            version-neutral ones)
#   PGVERSIONS="15 18" bash test/run_tests.sh   15's and 18's
# The cache of builds (CX_COMPILE_CACHE, default /opt/compressx-cache)
# lives outside the clone: a run with an empty one fetches and builds
# everything first.
# compile_check.sh compiles against 16 and 17 always.
set -u
. "$(dirname "$0")/lib.sh"

pgversions=" ${PGVERSIONS:-15 16 17 18 19} "
for v in $pgversions; do
    case $v in
        15|16|17|18|19) ;;
        *) echo "PGVERSIONS: $v is not a major this suite runs on (15, 16, 17, 18, 19)" >&2; exit 2;;
    esac
done
wants() { case $pgversions in *" $1 "*) return 0;; esac; return 1; }

cx_install_deps
passed=0
failed=0
failures=""

if wants 15; then
    cx_build_install

    work=$(cx_workdir tests)
    cp -r "$cx_root/sql" "$cx_root/expected" "$cx_root/test" "$cx_root/README.md" "$work/"
    [ "$(id -u)" -eq 0 ] && chown -R "$cx_user" "$work"
    port=${CX_TEST_PORT:-55432}
    cx_start_cluster "$work" "$port"
    trap 'cx_stop_cluster "$work"' EXIT
    # CX_KEEP_WORKDIR=1 keeps logs and results after a passing run too

    cx_run_parts "$cx_root" "$work" "$port"
    cx_log "the suite on 15: $SECONDS s since the start (dependencies, build and install included)"
fi

# run_unit NAME SKIPVAR MAJORS DESCRIPTION SCRIPT [ARGS]: one more counted
# unit, run when every major of MAJORS ("-": none) is in PGVERSIONS; its
# output is indented, so that only the last line below is a summary
run_unit() {
    local name=$1 skipvar=$2 majors=$3 what=$4 script=$5 v
    shift 5
    if [ "${!skipvar:-}" = 1 ]; then
        return
    fi
    for v in ${majors//-/}; do
        wants "$v" || return
    done
    cx_log "$what: test/$script ($skipvar=1 skips it)"
    local t0=$SECONDS rc
    bash "$cx_root/test/$script" "$@" | sed -u 's/^/    /'
    rc=${PIPESTATUS[0]}
    cx_log "$name: $([ "$rc" -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - t0)) s"
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); failures="$failures $name"
    fi
}

# the assert suite starts its own cluster on the same port
wants 15 && cx_stop_cluster "$work"
run_unit assert-suite CX_SKIP_ASSERT 15 "assert-enabled build" run_assert_suite.sh
run_unit core-regress CX_SKIP_CORE 15 "PostgreSQL's regression suite, heap against compressx" \
    core_regress.sh --no-install
run_unit layers CX_SKIP_LAYERS - "layer rule of src/" check_layers.sh
# 19 is compiled with -Werror by suite-pg19, in the sid root
compile_versions=$(for v in $pgversions 16 17; do [ "$v" = 19 ] || echo "$v"; done | sort -un | tr '\n' ' ')
CX_COMPILE_VERSIONS=${CX_COMPILE_VERSIONS:-$compile_versions} \
    run_unit compile-check CX_SKIP_COMPILE - "compile check against PostgreSQL $compile_versions" compile_check.sh
run_unit suite-pg16 CX_SKIP_PG16 16 "the suite on PostgreSQL 16" run_version_suite.sh 16
run_unit suite-pg17 CX_SKIP_PG17 17 "the suite on PostgreSQL 17" run_version_suite.sh 17
run_unit suite-pg18 CX_SKIP_PG18 18 "the suite on PostgreSQL 18" run_version_suite.sh 18
: "${CX_SKIP_ASSERT18:=${CX_SKIP_ASSERT:-}}"
run_unit assert-suite-18 CX_SKIP_ASSERT18 18 "assert-enabled PostgreSQL 18" run_assert_suite.sh 18
run_unit core-regress-18 CX_SKIP_CORE 18 "PostgreSQL 18's regression suite, heap against compressx" \
    core_regress.sh --major 18
run_unit upgrade-15-18 CX_SKIP_UPGRADE "15 18" "pg_upgrade 15 -> 18, --copy and --link" upgrade_check.sh 18
run_unit upgrade-15-17 CX_SKIP_UPGRADE "15 17" "pg_upgrade 15 -> 17, --copy and --link" upgrade_check.sh 17
CX_UPGRADE_OLD_MAJOR=17 \
    run_unit upgrade-17-18 CX_SKIP_UPGRADE "17 18" "pg_upgrade 17 -> 18, --copy and --link" upgrade_check.sh 18
run_unit upgrade-15-16 CX_SKIP_UPGRADE "15 16" "pg_upgrade 15 -> 16, --copy and --link" upgrade_check.sh 16
CX_UPGRADE_OLD_MAJOR=16 \
    run_unit upgrade-16-17 CX_SKIP_UPGRADE "16 17" "pg_upgrade 16 -> 17, --copy and --link" upgrade_check.sh 17
CX_UPGRADE_OLD_MAJOR=16 \
    run_unit upgrade-16-18 CX_SKIP_UPGRADE "16 18" "pg_upgrade 16 -> 18, --copy and --link" upgrade_check.sh 18
# 19~rc1 runs in a sid root (doc/testing.md), beside the units below, on
# the second core: its suite and the upgrades to it share no server, port
# or installation with them (ports 55419, 55490-55491; the root is made once
# into the cache by test/sid19_root.sh, its old sides are the caches the
# units above filled).  Its output is printed, and its units counted, when
# it ends.
lane19_log=""
if wants 19; then
    lane19_log=$(mktemp "${TMPDIR:-/tmp}/compressx-lane19.XXXXXX")
    cx_log "PostgreSQL 19 (sid root) beside the units below; its output follows them"
    (
        passed=0; failed=0; failures=""
        run_unit suite-pg19 CX_SKIP_PG19 19 "the suite on PostgreSQL 19 (sid root)" run_pg19.sh
        # to 19~rc1: inside the sid root (test/upgrade_check.sh 19 enters it)
        CX_UPGRADE_PORT=55490 \
            run_unit upgrade-15-19 CX_SKIP_UPGRADE "15 19" "pg_upgrade 15 -> 19, --copy and --link (sid root)" upgrade_check.sh 19
        for upgrade_old in 16 17 18; do
            CX_UPGRADE_PORT=55490 CX_UPGRADE_OLD_MAJOR=$upgrade_old \
                run_unit "upgrade-$upgrade_old-19" CX_SKIP_UPGRADE "$upgrade_old 19" "pg_upgrade $upgrade_old -> 19, --copy and --link (sid root)" upgrade_check.sh 19
        done
        echo "$passed $failed $failures" >"$lane19_log.counts"
    ) >"$lane19_log" 2>&1 &
    lane19_pid=$!
fi
run_unit citus-15 CX_SKIP_CITUS 15 "Citus 13.2.2 on PostgreSQL 15" citus_suite.sh 15
run_unit citus-17 CX_SKIP_CITUS 17 "Citus 13.2.2 on PostgreSQL 17" citus_suite.sh 17
run_unit citus-18 CX_SKIP_CITUS 18 "Citus 14.0.1 on PostgreSQL 18" citus_suite.sh 18
run_unit citus-regress-15 CX_SKIP_CITUS 15 "Citus 13.2.2's regression tests under compressx" citus_regress.sh
run_unit fuzz CX_SKIP_FUZZ - "fuzzing the decoders" fuzz/run_fuzz.sh

# debezium: Debezium's embedded engine against 15 (test/debezium/run.sh);
# exit 77 (no java or mvn, or Debezium cannot be fetched) is a skip, its
# reason printed, not counted
if [ "${CX_SKIP_DEBEZIUM:-}" != 1 ] && wants 15; then
    cx_log "Debezium 3.6.1's embedded engine, pgoutput set-up and recovery: test/debezium/run.sh (CX_SKIP_DEBEZIUM=1 skips it)"
    t0=$SECONDS
    CX_PGBIN=$PGBIN bash "$cx_root/test/debezium/run.sh" | sed -u 's/^/    /'
    rc=${PIPESTATUS[0]}
    if [ "$rc" -eq 77 ]; then
        cx_log "debezium: skipped (not counted), see the reason above"
    else
        cx_log "debezium: $([ "$rc" -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - t0)) s"
        if [ "$rc" -eq 0 ]; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1)); failures="$failures debezium"
        fi
    fi
fi

run_unit package CX_SKIP_PACKAGE 15 "the Debian package, PGXN's client and the release archive" package_check.sh

if [ -n "$lane19_log" ]; then
    wait "$lane19_pid"
    cx_log "PostgreSQL 19 (sid root), run beside the units above:"
    cat "$lane19_log"
    if read -r p f fl <"$lane19_log.counts" 2>/dev/null; then
        passed=$((passed + p)); failed=$((failed + f)); failures="$failures${fl:+ $fl}"
    else
        failed=$((failed + 1)); failures="$failures lane-pg19"
    fi
    rm -f "$lane19_log" "$lane19_log.counts"
fi

if [ -n "$failures" ]; then
    echo "failed:$failures${work:+ (logs of the 15 suite in $work)}"
elif [ -n "${work:-}" ] && [ -z "${CX_KEEP_WORKDIR:-}" ]; then
    cx_stop_cluster "$work"; trap - EXIT; rm -rf "$work"
fi
cx_log "$SECONDS s in all"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
