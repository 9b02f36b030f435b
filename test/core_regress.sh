#!/usr/bin/env bash
# PostgreSQL's own regression suite (src/test/regress of the server's major
# version, from Debian's source package, with regress.so built from it) run
# twice, each time against a throwaway cluster: once under heap, once with
# default_table_access_method set to a table access method (compressx by
# default, with zstd on every value of 64 bytes or more).  A test differs
# under the AM when it fails in the AM run and either passes under heap or
# fails there with other output.  A differing test is a failure unless the
# list of the server's major, test/core_regress_expected_NN.txt, lists it as
# "test<TAB>one-line reason".  Tests failing in both runs with the same
# output (the environment's) are reported only.  Ends with the line "N
# passed, N failed" (N counts tests).  Reads pg_regress's output of 15
# ("test x ... ok") and of 16 and later ("ok 1 - x", "not ok 2 + y").
#
# usage: bash test/core_regress.sh [options] [AM]
#
#   AM                 table access method of the second run (default
#                      compressx); "heap" runs heap against heap, which
#                      checks this script and the environment
#   --set NAME=VALUE   setting added to postgresql.conf of the AM run
#                      (repeatable); default for compressx:
#                      compressx.default_codec=zstd, compressx.min_size=64
#   --extension NAME   extension that creates the AM, created in template1
#                      and in the suite's database (default: compressx,
#                      none when AM is heap)
#   --no-extension     no extension
#   --no-install       do not build and install the extension from this
#                      checkout first (default: build and install, as
#                      test/run_tests.sh does)
#   --pg BINDIR        the PostgreSQL installation to test (default Debian's
#                      /usr/lib/postgresql/15/bin), e.g. an assert-enabled one
#                      or /opt/compressx-cache/pg18/bin
#   --major NN         the installation of major NN: 15 is Debian's, another
#                      major the one test/compile_check.sh builds into the
#                      cache (built first when missing), e.g. --major 18
#   --serial           one test at a time, as "make installcheck" (slower);
#                      default: the parallel schedule, as
#                      "make installcheck-parallel"
#   --expected FILE    list of accepted differences
#                      (default test/core_regress_expected_NN.txt, NN the
#                      server's major)
#
# A server of another major than Debian's 15 (whose build the checkout
# holds) gets compressx built in a private copy of the tree; the run then
# holds the installation's lock, PREFIX/../.NAME.suite.lock (the one
# test/run_version_suite.sh takes), from the install to its end, so that no
# other run installs another build into it meanwhile.  The source of 18 comes
# from Debian's sid, through the deb-src file test/compile_check.sh adds.
#
# Environment: CX_PG_SRC (an unpacked PostgreSQL source tree of the same
# major; default: Debian's source package of the server's version, or the
# newest the mirror serves, fetched once into $CX_CACHE_DIR/src, with
# CX_CACHE_DIR default /opt/compressx-cache), CX_CORE_PORT (default 55442),
# CX_CORE_TIMEOUT (seconds per run, default 1800), CX_KEEP_WORKDIR=1 (keep
# the work directory after a passing run; a failing run always keeps it).
set -u
. "$(dirname "$0")/lib.sh"

die() {
    printf 'core_regress: %s\n' "$*" >&2
    [ -n "${work:-}" ] && printf 'core_regress: logs in %s\n' "$work" >&2
    exit 2
}

am=""
pg_bindir=""
ext="(default)"
install=1
serial=0
settings=()
expected_file=""
major=""
while [ $# -gt 0 ]; do
    case $1 in
        --set) [ $# -ge 2 ] || die "--set needs NAME=VALUE"
               case $2 in *=*) ;; *) die "--set needs NAME=VALUE, got '$2'";; esac
               settings+=("$2"); shift;;
        --set=*) settings+=("${1#--set=}");;
        --extension) [ $# -ge 2 ] || die "--extension needs a name"; ext=$2; shift;;
        --extension=*) ext=${1#--extension=};;
        --no-extension) ext="";;
        --no-install) install=0;;
        --pg) [ $# -ge 2 ] || die "--pg needs a directory"; pg_bindir=$2; shift;;
        --pg=*) pg_bindir=${1#--pg=};;
        --major) [ $# -ge 2 ] || die "--major needs a version"; major=$2; shift;;
        --major=*) major=${1#--major=};;
        --serial) serial=1;;
        --expected) [ $# -ge 2 ] || die "--expected needs a file"; expected_file=$2; shift;;
        --expected=*) expected_file=${1#--expected=};;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
        -*) die "unknown option $1 (see --help)";;
        *) [ -z "$am" ] || die "only one access method, got '$am' and '$1'"; am=$1;;
    esac
    shift
done
am=${am:-compressx}
# Debian's major (lib.sh): its packages are the dependencies, and the
# checkout's own build is for it.
debian_major=$PG_MAJOR
if [ -n "$major" ]; then
    [[ $major =~ ^[0-9]+$ ]] || die "--major needs a major version number, got '$major'"
    [ -z "$pg_bindir" ] || die "--major and --pg name the installation both"
    if [ "$major" != "$debian_major" ]; then
        prefix=$(bash "$cx_root/test/compile_check.sh" --build "$major") ||
            die "no PostgreSQL $major installation (test/compile_check.sh --build $major failed)"
        pg_bindir=$prefix/bin
    fi
fi
if [ -n "$pg_bindir" ]; then
    [ -x "$pg_bindir/pg_config" ] && [ -x "$pg_bindir/postgres" ] || die "--pg $pg_bindir: no pg_config and postgres there"
    cx_use_pg "$(cd "$pg_bindir" && pwd)"
fi
server_ver=$("$PGBIN/pg_config" --version | awk '{print $2}')
PG_MAJOR=${server_ver%%.*}
[ -z "$major" ] || [ "$PG_MAJOR" = "$major" ] || die "$PGBIN is PostgreSQL $server_ver, not $major"
[[ $PG_MAJOR =~ ^[0-9]+$ ]] || die "$PGBIN/pg_config reports version '$server_ver'"
expected_file=${expected_file:-$cx_root/test/core_regress_expected_$PG_MAJOR.txt}
[[ $am =~ ^[a-z_][a-z0-9_]*$ ]] || die "bad access method name '$am'"
if [ "$ext" = "(default)" ]; then
    if [ "$am" = heap ]; then ext=""; else ext=compressx; fi
fi
if [ "$am" = compressx ] && [ ${#settings[@]} -eq 0 ]; then
    settings=(compressx.default_codec=zstd compressx.min_size=64)
fi
for s in "${settings[@]}"; do
    [[ ${s%%=*} =~ ^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$ ]] ||
        die "bad setting name in '$s'"
done
[ -f "$expected_file" ] || die "missing $expected_file (the accepted differences of PostgreSQL $PG_MAJOR's suite)"
port=${CX_CORE_PORT:-55442}
run_timeout=${CX_CORE_TIMEOUT:-1800}
exec </dev/null

# ---------------------------------------------------------------- expected list
# "test<TAB>reason" per line; blank lines and lines starting with # ignored.
declare -A listed=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    case $line in ''|'#'*) continue;; esac
    name=${line%%$'\t'*}
    reason=${line#*$'\t'}
    if [ "$name" = "$line" ] || ! [[ $name =~ ^[A-Za-z0-9_.]+$ ]] ||
       ! [[ $reason =~ [^[:space:]] ]]; then
        die "$expected_file:$lineno: expected 'test<TAB>one-line reason', got: $line"
    fi
    [ -z "${listed[$name]+x}" ] || die "$expected_file:$lineno: $name listed twice"
    listed[$name]=$reason
done <"$expected_file"

# ---------------------------------------------------------------- dependencies
# build_install_copy: build compressx in a private copy of the tree (the
# checkout's object files are for Debian's major) and install it into $PGBIN's
# installation.
build_install_copy() {
    local src rc
    src=$(mktemp -d "${TMPDIR:-/tmp}/compressx-core$PG_MAJOR-src.XXXXXX")
    tar -C "$cx_root" --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - \
        src sql Makefile compressx.control | tar -C "$src" -xf -
    cx_log "building compressx in $src and installing it into $(dirname "$PGBIN")"
    { make -C "$src" -s PG_CONFIG="$PGBIN/pg_config" with_llvm=no &&
      cx_sudo make -C "$src" -s PG_CONFIG="$PGBIN/pg_config" with_llvm=no install; } >"$src/build.log" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] || cat "$src/build.log" >&2
    rm -rf "$src"
    return "$rc"
}

PG_MAJOR=$debian_major cx_install_deps
if [ "$PG_MAJOR" != "$debian_major" ]; then
    # held until the script exits
    inst=$(cd "$PGBIN/.." && pwd)
    lockfile=$(dirname "$inst")/.$(basename "$inst").suite.lock
    exec 8>>"$lockfile" || die "cannot open $lockfile"
    cx_log "waiting for $lockfile"
    flock 8
fi
if [ -n "$ext" ]; then
    if [ "$install" = 1 ]; then
        if [ "$PG_MAJOR" = "$debian_major" ]; then
            cx_build_install
        else
            build_install_copy || die "building or installing compressx against $PGBIN/pg_config failed"
        fi
    fi
    [ -f "$("$PGBIN/pg_config" --sharedir)/extension/$ext.control" ] ||
        die "extension $ext is not installed in $("$PGBIN/pg_config" --sharedir)/extension (run make install, or drop --no-install)"
fi

work=$(cx_workdir core-regress)
running=""
cleanup() { [ -n "$running" ] && cx_stop_cluster "$running"; running=""; }
trap cleanup EXIT
cx_log "work directory $work"

as_psql() {  # as_psql DIR DB SQL: run SQL, stop at the first error
    local dir=$1 db=$2
    shift 2
    cx_as_user psql -X -q -At -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d "$db" "$@"
}

# ---------------------------------------------------------------- AM cluster
# Started first so that a missing access method or setting stops us before the
# slow parts.  Checks, in order: the extension can be created, it creates the
# table access method, every setting exists once the AM's library is loaded,
# and after the settings are in postgresql.conf a new table uses the AM and
# round-trips a value without warnings.
am_dir=$work/$am
cx_as_user mkdir "$am_dir"
running=$am_dir
cx_start_cluster "$am_dir" "$port" 8>&-   # the server does not inherit the lock
if [ -n "$ext" ]; then
    out=$(as_psql "$am_dir" template1 -c "CREATE EXTENSION \"$ext\"" 2>&1) ||
        die "CREATE EXTENSION $ext failed: $out"
fi
amtype=$(as_psql "$am_dir" template1 -c "SELECT amtype FROM pg_am WHERE amname = '$am'")
if [ "$amtype" != t ]; then
    if [ -z "$amtype" ]; then
        die "table access method '$am' does not exist${ext:+ after CREATE EXTENSION $ext} (does this build of $ext provide it yet?)"
    fi
    die "'$am' is not a table access method (amtype $amtype)"
fi
as_psql "$am_dir" template1 -c "CREATE DATABASE cx_preflight" >/dev/null || die "cannot create database cx_preflight"
if [ ${#settings[@]} -gt 0 ]; then
    names=""
    for s in "${settings[@]}"; do names="$names${names:+,}'$(printf '%s' "${s%%=*}" | tr 'A-Z' 'a-z')'"; done
    known=$(as_psql "$am_dir" cx_preflight -c "SET default_table_access_method = $am" \
        -c "CREATE TEMP TABLE cx_probe (t text)" \
        -c "SELECT name FROM pg_settings WHERE name IN ($names)" 2>&1) ||
        die "cannot create a table using $am: $known"
    for s in "${settings[@]}"; do
        n=$(printf '%s' "${s%%=*}" | tr 'A-Z' 'a-z')
        grep -qx "$n" <<<"$known" ||
            die "setting $n does not exist (once a table using $am exists); the $am run needs it"
    done
fi
{
    echo "# core_regress.sh: run under table access method $am"
    echo "default_table_access_method = '$am'"
    for s in "${settings[@]}"; do
        v=${s#*=} q="'"
        echo "${s%%=*} = '${v//$q/$q$q}'"
    done
} >>"$am_dir/data/postgresql.conf"
cx_as_user pg_ctl -D "$am_dir/data" reload >/dev/null
for _ in $(seq 50); do  # new sessions see the reloaded file once the postmaster read it
    [ "$(as_psql "$am_dir" cx_preflight -c "SHOW default_table_access_method")" = "$am" ] && break
    sleep 0.2
done
probe=$(as_psql "$am_dir" cx_preflight \
    -c "CREATE TABLE cx_probe (t text)" \
    -c "INSERT INTO cx_probe SELECT repeat('compressx ', 100)" \
    -c "SELECT current_setting('default_table_access_method') || ' ' || a.amname || ' ' || (p.t = repeat('compressx ', 100))
          FROM cx_probe p, pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'cx_probe'::regclass" 2>&1)
[ "$probe" = "$am $am true" ] || die "after setting default_table_access_method = '$am' in postgresql.conf, a probe table gave: $probe"
for s in "${settings[@]}"; do
    n=${s%%=*}
    cx_log "$am run: $n = $(as_psql "$am_dir" cx_preflight -c "SELECT current_setting('$n')")"
done
as_psql "$am_dir" template1 -c "DROP DATABASE cx_preflight" >/dev/null
cx_log "$am run: default_table_access_method = $am${ext:+, extension $ext in template1 and in the database of the suite}"

# ---------------------------------------------------------------- source
# Debian's source package of the installed server (the same version if the
# mirror still serves it, else the newest it serves), fetched once into the
# cache, outside the clone.  Needs deb-src entries: Debian's own archive
# (cx_enable_deb_src in lib.sh) for 15, trixie's and sid's for later majors,
# in the file test/compile_check.sh adds to build them (written here too,
# with the same content, when missing).  Debian's patches of postgresql-18
# leave src/test/regress and contrib/spi alone, so the patched tree's suite
# is upstream's, which the unpatched build of compile_check.sh runs.
source_with_deb_src() {
    local pkg=postgresql-$PG_MAJOR
    apt-cache showsrc "$pkg" 2>/dev/null | grep -q '^Package:' && return 0
    if [ "$PG_MAJOR" = "$debian_major" ]; then
        cx_enable_deb_src
    else
        cx_deb_src_list cx_log
    fi
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    apt-cache showsrc "$pkg" 2>/dev/null | grep -q '^Package:' ||
        die "no source package $pkg available from apt even with deb-src enabled"
}

src_ok() {
    [ -f "$1/src/test/regress/parallel_schedule" ] && [ -f "$1/src/test/regress/regress.c" ] &&
        [ -f "$1/contrib/spi/refint.c" ] && [ -f "$1/contrib/spi/autoinc.c" ]
}

cx_pg_source() {  # prints the source tree's path
    local cache=${CX_CACHE_DIR:-${CX_COMPILE_CACHE:-/opt/compressx-cache}}/src
    local pkg=postgresql-$PG_MAJOR upstream=$server_ver dir v
    cached() {  # the tree of the server's version, else the newest tree of the major
        src_ok "$cache/$pkg-$upstream" && { echo "$cache/$pkg-$upstream"; return; }
        ls -d "$cache/$pkg-$PG_MAJOR".*/ 2>/dev/null | sed 's:/$::' | sort -rV |
            while read -r d; do src_ok "$d" && echo "$d"; done | head -n 1
    }
    dir=$(cached)
    if [ -z "$dir" ]; then
        cx_sudo mkdir -p "$cache"
        [ -w "$cache" ] || cx_sudo chown "$(id -u)" "$cache"
        (
            flock 9
            [ -n "$(cached)" ] && exit 0
            source_with_deb_src
            dpkg-query -W -f='${Status}' dpkg-dev 2>/dev/null | grep -q "ok installed" ||
                cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q dpkg-dev >/dev/null
            cd "$cache" || exit 1
            : >apt-source.log
            # the server's version first, then the newest
            for v in $(apt-cache showsrc "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | sort -ruV |
                       awk -v u="$upstream" '{print (index($0, u "-") == 1 ? 0 : 1), $0}' | sort -s -k1,1n | awk '!seen[$2]++ {print $2}'); do
                cx_log "fetching the source package $pkg=$v into $cache"
                rm -rf "$cache/$pkg-${v%%-*}"
                apt-get source -q "$pkg=$v" >>apt-source.log 2>&1 && src_ok "$cache/$pkg-${v%%-*}" && exit 0
                cx_log "$pkg=$v: source not available from the mirror"
            done
            tail -n 20 apt-source.log
            exit 1
        ) 9>"$cache/.lock" >&2 || die "could not fetch the source package $pkg (see $cache/apt-source.log)"
        dir=$(cached)
        [ -n "$dir" ] || die "no usable source tree under $cache"
    fi
    [ "$dir" = "$cache/$pkg-$upstream" ] ||
        cx_log "note: the suite comes from $(basename "$dir"), the server is $upstream (same major; the source of $upstream is not available or not cached)"
    echo "$dir"
}

if [ -n "${CX_PG_SRC:-}" ]; then
    pgsrc=$CX_PG_SRC
    src_ok "$pgsrc" || die "CX_PG_SRC=$pgsrc has no src/test/regress or contrib/spi"
else
    pgsrc=$(cx_pg_source) || exit 2
fi
suite_ver=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'/\1/p" "$pgsrc/configure" 2>/dev/null)
[ -z "$suite_ver" ] || [ "${suite_ver%%.*}" = "$PG_MAJOR" ] || die "$pgsrc is PostgreSQL $suite_ver, the server is $PG_MAJOR"
cx_log "suite from $pgsrc (${suite_ver:-version unknown}), server $("$PGBIN/postgres" --version) in $PGBIN"

# The suite runs with the psql of its own minor version.  Minor releases
# change psql in ways the suite's scripts depend on: since 15.19
# (CVE-2026-6464) psql skips in-line data after a COPY .. FROM STDIN that
# fails, so 15.18's scripts, which have no data after such commands, lose
# the rest of copy, copy2, alter_table, privileges, ... under a newer psql.
# When the installed psql is another minor version, take psql from Debian's
# postgresql-client package of the suite's version (apt-get download, cached).
cx_psql_of() {  # cx_psql_of UPSTREAM_VERSION: prints a bindir holding that psql
    local want=$1 pkg=postgresql-client-$PG_MAJOR dir v tmp
    dir=${CX_CACHE_DIR:-${CX_COMPILE_CACHE:-/opt/compressx-cache}}/client-$want
    if [ "$("$dir/usr/lib/postgresql/$PG_MAJOR/bin/psql" --version 2>/dev/null | awk '{print $3}')" != "$want" ]; then
        v=$(apt-cache madison "$pkg" 2>/dev/null | awk -F'|' -v w="$want" '{gsub(/ /, "", $2)} $2 ~ "^" w "-" {print $2; exit}')
        [ -n "$v" ] || { cx_log "no $pkg package of version $want in apt"; return 1; }
        tmp=$(mktemp -d)
        if ! (cd "$tmp" && apt-get download -q "$pkg=$v") >"$tmp/download.log" 2>&1; then
            tail -n 5 "$tmp/download.log" >&2; rm -rf "$tmp"; return 1
        fi
        cx_sudo rm -rf "$dir" && cx_sudo mkdir -p "$dir" && cx_sudo dpkg-deb -x "$tmp"/*.deb "$dir" || { rm -rf "$tmp"; return 1; }
        rm -rf "$tmp"
        [ "$("$dir/usr/lib/postgresql/$PG_MAJOR/bin/psql" --version 2>/dev/null | awk '{print $3}')" = "$want" ] || return 1
        cx_log "psql $want from $pkg=$v in $dir"
    fi
    echo "$dir/usr/lib/postgresql/$PG_MAJOR/bin"
}
psql_bindir=$PGBIN
psql_ver=$("$PGBIN/psql" --version | awk '{print $3}')
if [ -n "$suite_ver" ] && [ "$suite_ver" != "$psql_ver" ]; then
    if d=$(cx_psql_of "$suite_ver"); then
        psql_bindir=$d
        cx_log "the suite is $suite_ver, the installed psql $psql_ver: the suite runs with psql $suite_ver"
    else
        cx_log "WARNING: no psql $suite_ver; the suite ($suite_ver) runs with psql $psql_ver, some tests may fail in both runs"
    fi
fi

# The suite's files, readable by the server (tests COPY from data/).
suite=$work/suite
mkdir "$suite"
cp -r "$pgsrc/src/test/regress/sql" "$pgsrc/src/test/regress/expected" "$pgsrc/src/test/regress/data" \
      "$pgsrc/src/test/regress/parallel_schedule" "$pgsrc/src/test/regress/resultmap" "$suite/"

# ---------------------------------------------------------------- C modules
# What "make -C src/test/regress" builds besides pg_regress: regress.so and,
# copied from contrib/spi, refint.so and autoinc.so (refint with
# REFINT_VERBOSE, as contrib/spi/Makefile says the tests need).  The tests
# load them from $libdir, which pg_regress sets from --dlpath.
lib=$work/lib
mkdir "$lib"
cp "$pgsrc/src/test/regress/regress.c" "$pgsrc/contrib/spi/refint.c" "$pgsrc/contrib/spi/autoinc.c" "$lib/"
cat >"$lib/Makefile" <<EOF
MODULES = regress refint autoinc
PG_CPPFLAGS = -DREFINT_VERBOSE
PG_CONFIG = $PGBIN/pg_config
PGXS := \$(shell \$(PG_CONFIG) --pgxs)
include \$(PGXS)
EOF
make -C "$lib" -s >"$lib/build.log" 2>&1 || { cat "$lib/build.log" >&2; die "building regress.so failed"; }
[ "$(id -u)" -eq 0 ] && chown -R "$cx_user" "$work"

# ---------------------------------------------------------------- runs
regress_opts=(--inputdir="$suite" --bindir="$psql_bindir" --dlpath="$lib"
              --schedule="$suite/parallel_schedule" --max-concurrent-tests=20
              --port="$port" --user=postgres)
[ "$serial" = 1 ] && regress_opts+=(--max-connections=1)

declare -A secs=()
run_suite() {  # run_suite LABEL DIR [pg_regress options]: suite's log in DIR/regress.log
    local label=$1 dir=$2 t0 rc
    shift 2
    cx_log "$(basename "$dir") run: pg_regress ${regress_opts[*]} --host=$dir --outputdir=$dir/out $*"
    t0=$(date +%s)
    # from DIR: pg_regress of 16 and later takes expected/NAME.out from the
    # current directory first (--expecteddir, default "."), and this
    # checkout's expected/ has files named as tests of the suite (update.out)
    (cd "$dir" && cx_as_user timeout -k 30 "$run_timeout" "$PGXS_DIR/src/test/regress/pg_regress" \
        "${regress_opts[@]}" --host="$dir" --outputdir="$dir/out" "$@") >"$dir/regress.log" 2>&1
    rc=$?
    secs[$label]=$(($(date +%s) - t0))
    [ "$rc" -eq 124 ] && cx_log "$label run: timed out after ${run_timeout}s"
    cx_log "$(basename "$dir") run: pg_regress exit $rc after ${secs[$label]}s:$(grep -E '^(# )? *(All [0-9]+ tests passed|[0-9]+ of [0-9]+ tests (failed|passed))' "$dir/regress.log" | tr -s ' \n' ' ')"
}

run_suite am "$am_dir" ${ext:+--load-extension="$ext"}
cx_stop_cluster "$am_dir"; running=""

heap_dir=$work/heap-baseline
cx_as_user mkdir "$heap_dir"
running=$heap_dir
cx_start_cluster "$heap_dir" "$port" 8>&-
run_suite base "$heap_dir"
cx_stop_cluster "$heap_dir"; running=""

# ---------------------------------------------------------------- compare
# pg_regress prints one line per test: on 15 "test NAME ... ok|FAILED" or, in
# a parallel group, "     NAME ... ok|FAILED"; on 16 and later (TAP)
# "ok N - NAME" or "not ok N - NAME", "+" instead of "-" in a parallel group.
# A test of the schedule with no line (the run stopped before it) counts as
# failed.
#
# A test differs under the AM when it fails in the AM run and either passes
# under heap or fails there with other output (results/NAME.out of the two
# runs compared): a test that fails under heap for a reason of the
# environment still checks the AM against heap's output.  Differing tests are
# failures unless listed; tests failing in both runs with the same output are
# the environment's and reported only.
schedule_tests=$(sed -n 's/^test: *//p' "$suite/parallel_schedule" | tr -s ' \t' '\n' | grep -v '^$' | awk '!seen[$0]++')
outcomes() {  # outcomes LOG: "name ok|failed" per reported test
    sed -nE -e 's/^(test |     )([A-Za-z0-9_.]+) +\.\.\. (ok|FAILED|failed \(ignored\)).*/\2 \3/p' \
            -e 's/^(not )?ok +[0-9]+ +[-+] +([A-Za-z0-9_.]+) .*/\2 \1ok/p' "$1" |
        sed -E 's/ (FAILED|failed \(ignored\)|not ok)$/ failed/'
}
declare -A heap_res=() am_res=()
while read -r n r; do heap_res[$n]=$r; done < <(outcomes "$heap_dir/regress.log")
while read -r n r; do am_res[$n]=$r; done < <(outcomes "$am_dir/regress.log")
[ ${#heap_res[@]} -gt 0 ] || { cat "$heap_dir/regress.log"; die "the heap run reported no tests (log above)"; }
[ ${#am_res[@]} -gt 0 ] || { cat "$am_dir/regress.log"; die "the $am run reported no tests (log above)"; }

passed=0 failed=0 total=0 heap_ok=0 am_ok=0
differ=() accepted=() env=() heap_only=() stale=()
declare -A why=()
mkdir "$work/diffs"
diffs=$work/heap-vs-$am.diffs
: >"$diffs"
for t in $schedule_tests; do
    total=$((total + 1))
    h=${heap_res[$t]:-missing} a=${am_res[$t]:-missing}
    [ "$h" = ok ] && heap_ok=$((heap_ok + 1))
    [ "$a" = ok ] && am_ok=$((am_ok + 1))
    d=""
    if [ "$a" != ok ]; then
        if [ "$a" = missing ]; then
            d="no result: the $am run stopped before it"
        elif [ "$h" = ok ]; then
            d="fails only under $am"
        elif ! cmp -s "$heap_dir/out/results/$t.out" "$am_dir/out/results/$t.out"; then
            d="fails in both runs, with other output under $am"
        fi
        if [ -n "$d" ]; then
            diff -U3 --label "heap/results/$t.out" --label "$am/results/$t.out" \
                "$heap_dir/out/results/$t.out" "$am_dir/out/results/$t.out" >"$work/diffs/$t.diff" 2>&1
            cat "$work/diffs/$t.diff" >>"$diffs"
        fi
    fi
    if [ -n "$d" ]; then
        why[$t]=$d
        if [ -n "${listed[$t]+x}" ]; then
            passed=$((passed + 1)); accepted+=("$t")
        else
            failed=$((failed + 1)); differ+=("$t")
        fi
        continue
    fi
    passed=$((passed + 1))
    [ -n "${listed[$t]+x}" ] && stale+=("$t")
    if [ "$a" != ok ]; then
        env+=("$t")
    elif [ "$h" != ok ]; then
        heap_only+=("$t")
    fi
done
for t in "${!listed[@]}"; do
    grep -qxF "$t" <<<"$schedule_tests" || stale+=("$t")
done

crashes() { grep -E 'terminated by signal|TRAP:|PANIC:' "$1/server.log" 2>/dev/null | head -n 5; }

echo
echo "=== PostgreSQL $PG_MAJOR regression suite, heap against $am: $total tests, $([ "$serial" = 1 ] && echo serial || echo parallel) schedule"
echo "suite: $pgsrc (${suite_ver:-?}), psql from $psql_bindir"
echo "$am run: default_table_access_method = $am${settings[*]:+, ${settings[*]}}${ext:+, extension $ext}"
printf '  %-16s %3d ok, %3d failed, %4ds\n' 'heap (baseline)' "$heap_ok" "$((total - heap_ok))" "${secs[base]}"
printf '  %-16s %3d ok, %3d failed, %4ds\n' "$am" "$am_ok" "$((total - am_ok))" "${secs[am]}"
for dd in "$heap_dir" "$am_dir"; do
    c=$(crashes "$dd")
    [ -n "$c" ] && printf 'server log of the %s run shows a crash:\n%s\n' "$(basename "$dd")" "$c"
done
# a crash under the access method fails the unit, even inside an accepted test
if [ -n "$(crashes "$am_dir")" ] && [ -z "$(crashes "$heap_dir")" ]; then
    failed=$((failed + 1)); differ+=("server-crash")
fi
if [ ${#differ[@]} -gt 0 ]; then
    echo
    echo "FAILED under $am (${#differ[@]}); results heap -> $am, first 40 lines each (all: $diffs):"
    for t in "${differ[@]}"; do
        echo "--- $t: ${why[$t]}"
        [ "${am_res[$t]:-missing}" = missing ] || head -n 40 "$work/diffs/$t.diff"
    done
fi
if [ ${#accepted[@]} -gt 0 ]; then
    echo
    echo "differ under $am, accepted by $(basename "$expected_file") (${#accepted[@]}; diffs in $work/diffs):"
    for t in "${accepted[@]}"; do printf '  %-24s %s\n' "$t" "${listed[$t]}"; done
fi
if [ ${#env[@]} -gt 0 ]; then
    echo
    echo "fail in both runs with the same output (environment; not failures): ${env[*]}"
fi
if [ ${#heap_only[@]} -gt 0 ]; then
    echo
    echo "WARNING: fail only under heap (timing-dependent?): ${heap_only[*]}"
fi
if [ ${#stale[@]} -gt 0 ]; then
    echo
    echo "WARNING: stale entries in $(basename "$expected_file") (these tests do not differ under $am): ${stale[*]}"
fi
echo
if [ "$failed" -gt 0 ]; then
    echo "failed under $am:$(printf ' %s' "${differ[@]}") (logs and results kept in $work)"
elif [ -z "${CX_KEEP_WORKDIR:-}" ]; then
    rm -rf "$work"
else
    echo "work directory kept: $work"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
