#!/usr/bin/env bash
# Shared helpers of compressx's scripts: install dependencies, build and
# install the extension, run commands as an unprivileged user, and start or
# stop a throwaway PostgreSQL cluster.  Sourced, not run.

PG_MAJOR=${PG_MAJOR:-15}
# CX_PGBIN: the bin directory of another installation of the same major to
# build, install and test in (a relocated copy of Debian's, say, so that
# several checkouts can test side by side without installing over each other)
PGBIN=${CX_PGBIN:-/usr/lib/postgresql/$PG_MAJOR/bin}
PGXS_DIR=${PGBIN%/bin}/lib/pgxs
export PATH="$PGBIN:$PATH"

cx_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

cx_log() { printf '== %s\n' "$*" >&2; }

cx_sudo() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Enable deb-src for the Debian archive, if missing.  Debian 12 keeps its
# sources in the deb822 file debian.sources: deb-src goes onto its Types
# lines (a one-line deb-src entry next to it would configure the same
# sources twice and break apt).  Only an old-style sources.list gets deb-src
# lines copied from its deb lines.  The caller runs apt-get update.
cx_enable_deb_src() {
    local f=/etc/apt/sources.list.d/debian.sources
    if [ -f "$f" ]; then
        if grep -E '^Types:' "$f" | grep -qvE '(^|[[:space:]])deb-src([[:space:]]|$)'; then
            cx_log "enabling deb-src in $f"
            cx_sudo sed -i -E '/^Types:/{/(^|[[:space:]])deb-src([[:space:]]|$)/!s/[[:space:]]*$/ deb-src/}' "$f"
        fi
    elif [ -f /etc/apt/sources.list ] && ! grep -qE '^[[:space:]]*deb-src[[:space:]]' \
            /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null; then
        cx_log "adding deb-src lines to /etc/apt/sources.list"
        grep -E '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list | sed -E 's/^([[:space:]]*)deb /\1deb-src /' |
            cx_sudo tee -a /etc/apt/sources.list >/dev/null
    fi
}

# What building PostgreSQL from Debian's source package needs.
cx_pg_build_deps="gcc make perl bison flex libreadline-dev zlib1g-dev liblz4-dev libzstd-dev
    pkg-config dpkg-dev bzip2 xz-utils libipc-run-perl"

# cx_pg_source_apt MAJOR LOG: make the source of postgresql-MAJOR reachable
# through apt-get source, refresh the package lists and install
# $cx_pg_build_deps; apt's output goes to LOG.  15 is bookworm's own
# (deb-src on debian.sources); later majors come from trixie and sid,
# deb-src only, in a file of their own (a one-line deb-src entry would
# conflict with debian.sources' Signed-By).  Progress through the caller's
# log function.
cx_pg_source_apt() {
    local major=$1 out=$2
    if [ "$major" = 15 ]; then
        cx_enable_deb_src
    else
        cx_deb_src_list log
    fi
    log "apt-get update"
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >"$out" 2>&1 ||
        { tail -n 20 "$out" >&2; log "apt-get update failed"; return 1; }
    log "installing build dependencies"
    # shellcheck disable=SC2086
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        $cx_pg_build_deps >>"$out" 2>&1 ||
        { tail -n 20 "$out" >&2; log "apt-get install failed"; return 1; }
}

# cx_pg_source_build MAJOR VERSIONS PREFIX BUILD LOGS JOBS CONTRIB [CONFIGURE_ARG...]:
# build Debian's source package postgresql-MAJOR, the first of the source
# versions VERSIONS (newest first, say) that downloads, with ./configure
# CONFIGURE_ARG... (--prefix=PREFIX among them, CFLAGS=... too if wanted)
# and make -jJOBS, and install it and the contrib modules CONTRIB into
# PREFIX.  BUILD is its work directory, removed on success; the logs go
# into the existing directory LOGS.  Prints the version built on stdout, progress through the
# caller's log function; returns 0 when installed, 2 when no version's
# source downloads, 1 on failure.  The caller holds its lock, checks the
# installation and writes its marker last: until then PREFIX has none.
#
# Downloads are kept in the cache next to PREFIX (dl/postgresql-NN_VERSION,
# about 25 MB; older versions of the major are removed), so the
# non-assert and assert builds of a major fetch it once.  Upstream's tree:
# Debian's patches are not applied (one makes `make install` write modules
# into /usr/lib/postgresql/NN/lib, the Debian installation, whatever the
# prefix).  `make install` goes to a staging directory, is checked to stay
# inside PREFIX and then moved into place, so PREFIX is complete or absent.
cx_pg_source_build() (
    local major=$1 versions=$2 prefix=$3 build=$4 logs=$5 jobs=$6 contrib=$7
    shift 7
    local dl ver dir tmp got="" dsc stage stray m pkglibdir
    dl=$(dirname "$prefix")/dl
    rm -rf "$build"
    mkdir -p "$build" "$dl" || exit 1
    for ver in $versions; do
        dir=$dl/postgresql-${major}_$ver
        if ls "$dir"/*.dsc >/dev/null 2>&1; then
            log "pg$major: source $ver already downloaded ($dir)"
            got=$ver; break
        fi
        # into a directory of this run's, renamed into place: a concurrent
        # build of the same major may be fetching it too
        log "pg$major: apt-get source postgresql-$major=$ver"
        tmp=$(mktemp -d "$dir.tmp.XXXXXX") && chmod 755 "$tmp" || exit 1
        if (cd "$tmp" && apt-get source -q --download-only "postgresql-$major=$ver") >>"$logs/source.log" 2>&1; then
            mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
            got=$ver; break
        fi
        # an index can name a source whose files are gone (trixie's 17)
        rm -rf "$tmp"
        log "pg$major: postgresql-$major=$ver: source not available from the mirror"
    done
    [ -n "$got" ] || { tail -n 3 "$logs/source.log" >&2; rm -rf "$build"; exit 2; }
    find "$dl" -mindepth 1 -maxdepth 1 -name "postgresql-${major}_*" ! -name "*.tmp.*" \
        ! -path "$dir" -exec rm -rf {} +
    dsc=$(ls "$dir"/postgresql-"$major"_*.dsc)
    log "pg$major: unpacking $(basename "$dsc") without Debian's patches"
    # dpkg-source checks the files against the .dsc: a damaged download
    # is removed, so that the next run fetches it again
    dpkg-source -x --skip-patches "$dsc" "$build/src" >>"$logs/source.log" 2>&1 ||
        { tail -n 20 "$logs/source.log" >&2; rm -rf "$dir"; log "pg$major: dpkg-source -x failed"; exit 1; }
    cd "$build/src" || exit 1
    log "pg$major: configure $* (log: $logs/configure.log)"
    ./configure "$@" >"$logs/configure.log" 2>&1 ||
        { tail -n 30 "$logs/configure.log" >&2; log "pg$major: configure failed"; exit 1; }
    log "pg$major: make -j$jobs (log: $logs/make.log)"
    make -j"$jobs" >"$logs/make.log" 2>&1 ||
        { grep -E 'error|Error' "$logs/make.log" | tail -n 30 >&2; log "pg$major: make failed"; exit 1; }
    stage=$build/stage
    log "pg$major: make install into a staging directory (log: $logs/install.log)"
    make install DESTDIR="$stage" >"$logs/install.log" 2>&1 ||
        { tail -n 30 "$logs/install.log" >&2; log "pg$major: make install failed"; exit 1; }
    for m in $contrib; do
        make -C "contrib/$m" install DESTDIR="$stage" >>"$logs/install.log" 2>&1 ||
            { tail -n 30 "$logs/install.log" >&2; log "pg$major: make install of contrib/$m failed"; exit 1; }
    done
    stray=$(cd "$stage" && find . -mindepth 1 \( -type f -o -type l \) ! -path ".$prefix/*" | head -n 5)
    [ -z "$stray" ] || { log "pg$major: make install would write outside $prefix: $stray"; exit 1; }
    log "pg$major: moving the installation to $prefix"
    rm -rf "$prefix"
    mkdir -p "$(dirname "$prefix")" && mv "$stage$prefix" "$prefix" || exit 1
    pkglibdir=$("$prefix/bin/pg_config" --pkglibdir)
    case "$pkglibdir" in
        "$prefix"/*) ;;
        *) log "pg$major: pg_config --pkglibdir is $pkglibdir, outside $prefix"; rm -rf "$prefix"; exit 1 ;;
    esac
    cd / && rm -rf "$build"
    echo "$got"
)

# Install what building and testing need, if anything is missing.
cx_install_deps() {
    local pkgs="postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR liblz4-dev libzstd-dev libipc-run-perl postgresql-doc-$PG_MAJOR make gcc"
    local missing=""
    for p in $pkgs; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        cx_log "installing:$missing"
        cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
        cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null
    fi
}

# cx_use_pg BINDIR: use the PostgreSQL installation whose programs are in
# BINDIR (pg_config, initdb, pg_ctl, psql, ...) instead of Debian's.
cx_use_pg() {
    PGBIN=$1
    PGXS_DIR=$("$PGBIN/pg_config" --pgxs)
    PGXS_DIR=${PGXS_DIR%/src/makefiles/pgxs.mk}
    export PATH="$PGBIN:$PATH"
}

# cx_build_install [SRCDIR]: build compressx in SRCDIR (default: this
# checkout) against $PGBIN/pg_config and install it there.
cx_build_install() {
    local src=${1:-$cx_root}
    cx_log "building and installing compressx"
    make -C "$src" -s PG_CONFIG="$PGBIN/pg_config" >/dev/null
    cx_sudo make -C "$src" -s PG_CONFIG="$PGBIN/pg_config" install >/dev/null
}

# The user that runs servers and clients: PostgreSQL refuses to run as root.
if [ "$(id -u)" -eq 0 ]; then cx_user=postgres; else cx_user=$(id -un); fi

cx_as_user() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "$cx_user" -- env PATH="$PATH" "$@"
    else
        "$@"
    fi
}

# A work directory the server user owns.
cx_workdir() {
    local d
    d=$(mktemp -d "${TMPDIR:-/tmp}/compressx-$1.XXXXXX")
    chmod 755 "$d"
    [ "$(id -u)" -eq 0 ] && chown "$cx_user" "$d"
    echo "$d"
}

# cx_start_cluster DIR PORT [SETTINGS]: initdb in DIR/data, socket in DIR,
# start; SETTINGS (lines of postgresql.conf) come after the defaults.
cx_start_cluster() {
    local dir=$1 port=$2 extra=${3:-}
    cx_as_user initdb -D "$dir/data" -A trust -U postgres --no-sync >/dev/null
    cat >>"$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
fsync = off
shared_buffers = 256MB
max_wal_size = 4GB
$extra
CONF
    cx_as_user pg_ctl -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
    export PGHOST=$dir PGPORT=$port PGUSER=postgres
}

cx_stop_cluster() {
    local dir=$1
    cx_as_user pg_ctl -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}

# cx_count_regress LOG RC NAME: pg_regress and pg_isolation_regress print
# one line per test ending in "ok" or "FAILED"; count them into passed,
# failed and failures.  A run that exited non-zero without a FAILED line (it
# could not start, say) counts as one failure named NAME.
cx_count_regress() {
    local log=$1 rc=$2 name=$3 p f
    # "test x ... ok" / "FAILED" (15), "ok 1 - x" / "not ok 1 - x" (16+)
    p=$(grep -cE '\.\.\. +ok|^ok +[0-9]+ ' "$log")
    f=$(grep -cE 'FAILED|failed \(ignored\)|^not ok +[0-9]+ ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1; failures="$failures $name"
    fi
    passed=$((passed + p)); failed=$((failed + f))
    [ "$f" -gt 0 ] && failures="$failures $(grep -E 'FAILED' "$log" | awk '{print $2}' | tr '\n' ' ')$(grep -E '^not ok' "$log" | awk '{print $5}' | tr '\n' ' ')"
    return 0
}

# cx_run_parts SRC WORK PORT: run the pg_regress files, isolation specs and
# TAP tests of source tree SRC, copied into WORK, with the installation in
# $PGBIN / $PGXS_DIR; pg_regress and isolation use the running cluster at
# socket directory WORK, port PORT.  Prints each part's results; counts them
# into passed, failed and failures.  CX_TAP_PERL: the directory of the
# PostgreSQL::Test modules when the installation has none (its
# PGXS_DIR/src/test/perl).  For work on one part: CX_ONLY_REGRESS,
# CX_ONLY_SPECS and CX_ONLY_TAP (space-separated names, "-" for none)
# restrict each kind to those tests; unset runs all.
cx_run_parts() {
    local src=$1 work=$2 port=$3 regress_tests specs t name rc codec
    regress_tests=$(sed -n 's/^REGRESS = //p' "$src/Makefile")
    [ -n "${CX_ONLY_REGRESS:-}" ] && regress_tests=${CX_ONLY_REGRESS//-/}
    cx_log "pg_regress: $regress_tests"
    cx_as_user "$PGXS_DIR/src/test/regress/pg_regress" \
        --inputdir="$work" --outputdir="$work/regress" --bindir="$PGBIN" \
        --host="$work" --port="$port" --user=postgres \
        --load-extension=compressx --dbname=cx_regression \
        $regress_tests >"$work/regress.log" 2>&1
    rc=$?
    cat "$work/regress.log"
    cx_count_regress "$work/regress.log" "$rc" pg_regress
    [ -f "$work/regress/regression.diffs" ] && cat "$work/regress/regression.diffs"

    specs=$(cd "$src/test/isolation/specs" && ls *.spec | sed 's/\.spec$//' | tr '\n' ' ')
    # On a server built without lz4 (compressx refuses lz4 there): a spec
    # marked "# without lz4: lz4 -> CODEC" runs as a copy with every "lz4"
    # replaced by CODEC, against its alternative expected file
    # expected/SPEC_1.out; a spec marked "# needs: lz4" is skipped.
    if [ "$(cx_as_user psql -X -Atq -h "$work" -p "$port" -U postgres -d postgres -c \
            "SELECT 'lz4' = ANY (enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")" = f ]; then
        for t in "$work"/test/isolation/specs/*.spec; do
            codec=$(sed -n 's/^# without lz4: lz4 -> \([a-z0-9]*\)$/\1/p' "$t")
            [ -n "$codec" ] || continue
            sed -i "s/lz4/$codec/g" "$t"
            echo "isolation spec $(basename "$t" .spec): lz4 -> $codec (the server was built without lz4)"
        done
        t=$(cd "$src/test/isolation/specs" && grep -l '^# needs: lz4' *.spec | sed 's/\.spec$//' | tr '\n' ' ')
        for name in $t; do
            specs=$(echo " $specs " | sed "s/ $name / /")
        done
        if [ -n "$t" ]; then
            echo "isolation specs skipped (the server was built without lz4): $t"
            spec_skipped=$t
        fi
    fi
    [ -n "${CX_ONLY_SPECS:-}" ] && specs=${CX_ONLY_SPECS//-/}
    cx_log "isolation: $specs"
    cx_as_user "$PGXS_DIR/src/test/isolation/pg_isolation_regress" \
        --inputdir="$work/test/isolation" --outputdir="$work/isolation" \
        --bindir="$PGBIN" --host="$work" --port="$port" --user=postgres \
        --load-extension=compressx --dbname=cx_isolation \
        $specs >"$work/isolation.log" 2>&1
    rc=$?
    cat "$work/isolation.log"
    cx_count_regress "$work/isolation.log" "$rc" isolation
    [ -f "$work/isolation/regression.diffs" ] && cat "$work/isolation/regression.diffs"

    cx_log "TAP tests"
    for t in "$work"/test/t/*.pl; do
        name=$(basename "$t")
        if [ -n "${CX_ONLY_TAP:-}" ]; then
            case " $CX_ONLY_TAP " in *" ${name%.pl} "*|*" $name "*) ;; *) continue;; esac
        fi
        # TESTDIR for PostgreSQL 15's test modules, TESTDATADIR and
        # TESTLOGDIR for 16 and later's (else they use relative paths)
        if (cd "$work/test" && cx_as_user env TESTDIR="$work/test" \
                TESTDATADIR="$work/test/tmp_check" TESTLOGDIR="$work/test/tmp_check/log" \
                PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
                prove -I "${CX_TAP_PERL:-$PGXS_DIR/src/test/perl}" "t/$name") >"$work/tap-$name.log" 2>&1; then
            passed=$((passed + 1))
            tail -n 3 "$work/tap-$name.log"
            # a skip_all passes: name it (cx_summary_exit prints the names)
            grep -q "^t/$name \.* skipped:" "$work/tap-$name.log" && tap_skipped="${tap_skipped:-} $name"
        else
            failed=$((failed + 1)); failures="$failures $name"
            cat "$work/tap-$name.log"
            ls "$work"/test/tmp_check/log/ 2>/dev/null | head
        fi
    done
}

# cx_summary_exit: the summary line of the counters passed and failed, and
# exit with its status (the counted scripts end this way)
cx_summary_exit() {
    [ -n "${spec_skipped:-}" ] && echo "isolation specs skipped (not counted): $spec_skipped"
    [ -n "${tap_skipped:-}" ] && echo "TAP tests skipped (counted as passed):$tap_skipped"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
}

# cx_deb_src_list LOGFN: deb-src for trixie and sid (PostgreSQL sources newer
# than bookworm's) in a file of its own, if missing; a one-line deb-src entry
# would conflict with debian.sources' Signed-By.  The caller runs apt-get
# update.
cx_deb_src_list() {
    local list=/etc/apt/sources.list.d/compressx-pg-src.sources
    [ -f "$list" ] && return 0
    "$1" "adding deb-src for trixie and sid: $list"
    cx_sudo tee "$list" >/dev/null <<'EOF'
# compressx (test/lib.sh): PostgreSQL sources newer than bookworm's
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
}

# cx_check_server_logs WORK: after cx_run_parts and the cluster's stop,
# count one passed unit if neither the cluster's log nor the TAP tests'
# server logs show an assertion failure or a crashed process, else one
# failed unit.
cx_check_server_logs() {
    local work=$1 logs=("$1/server.log") f bad
    for f in "$work"/test/tmp_check/log/*.log; do
        [ -f "$f" ] && logs+=("$f")
    done
    bad=$(grep -H -E 'TRAP:|process .* was terminated by signal' "${logs[@]}")
    if [ -z "$bad" ]; then
        echo "server logs (${#logs[@]}): no TRAP, no process terminated by signal ... ok"
        passed=$((passed + 1))
    else
        echo "$bad"
        echo "server logs (${#logs[@]}): assertion failure or crash ... FAILED"
        failed=$((failed + 1)); failures="$failures server-logs"
    fi
}

# cx_finish_workdir WORK: name it when something failed, else remove it
# (unless CX_KEEP_WORKDIR is set).
cx_finish_workdir() {
    if [ -n "$failures" ]; then
        echo "failed:$failures (logs in $1)"
    elif [ -z "${CX_KEEP_WORKDIR:-}" ]; then
        rm -rf "$1"
    fi
}

# cx_build_install_copy: build compressx from a copy of the tree (the
# checkout stays clean) against $PGBIN/pg_config and install it there
# (the benchmarks, on an installation of their choice).
cx_build_install_copy() {
    local bsrc
    bsrc=$(mktemp -d "${TMPDIR:-/tmp}/compressx-bench-src.XXXXXX")
    tar -C "$cx_root" --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
        -cf - Makefile compressx.control src sql | tar -C "$bsrc" -xf -
    make -C "$bsrc" -s PG_CONFIG="$PGBIN/pg_config" with_llvm=no >/dev/null
    cx_sudo make -C "$bsrc" -s PG_CONFIG="$PGBIN/pg_config" with_llvm=no install >/dev/null
    rm -rf "$bsrc"
}
