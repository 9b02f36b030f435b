#!/usr/bin/env bash
# Compiles compressx with warnings as errors (COPT=-Werror; the Makefile
# never sets -Werror) against the PostgreSQL major versions it must build
# on: Debian's 15 (the primary target, when installed) and 16, 17 and 18
# from installations cached outside the clone.  16 is the 16.2 of PyPI's
# pgserver wheel (headers and PGXS; test/prebuilt_pg.sh fetches it, no
# Debian suite reachable here serves postgresql-16).  A missing cached
# 17 or 18 is built first, once
# (about 2.5 minutes each on 2 cores): the source package postgresql-NN
# comes from Debian (deb-src for trixie and sid, added in a file of its
# own), unpacked without Debian's patches, and installed into
# /opt/compressx-cache/pgNN.  Each compile runs in a private copy of the
# tree (src/, sql/, Makefile, compressx.control; no object files), so the
# checkout is left alone.  Prints one line per version, "pgNN (version): ok"
# or "... FAILED" followed by the compiler's errors, and ends with
# "N passed, N failed"; exits non-zero on failure.
#
#   CX_COMPILE_VERSIONS  majors to check ("15 16 17 18"); 15 is Debian's
#                        installation, never built here; 16 comes from
#                        test/prebuilt_pg.sh.  A listed version that is
#                        neither cached nor served is reported as skipped,
#                        not failed.
#   CX_COMPILE_CACHE     cache directory (/opt/compressx-cache)
#   CX_COMPILE_JOBS      make -j for PostgreSQL builds (number of cores)
#   CX_COMPILE_BUILD_ONLY=1  only make sure the cached versions are built
#
# `compile_check.sh --build NN` builds (or finds cached) version NN and
# prints its prefix.
#
# The PostgreSQL builds use upstream's tree: one of Debian's patches makes
# `make install` write modules into /usr/lib/postgresql/NN/lib, the Debian
# installation's directory, whatever the prefix.  `make install` goes to a
# staging directory first, is checked to stay inside the prefix and is then
# moved into place, so a prefix is either complete (marker file, written
# last) or absent: cx_pg_source_build in test/lib.sh, which
# test/assert_build.sh uses too.
set -uo pipefail
umask 022

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${CX_COMPILE_CACHE:-/opt/compressx-cache}
versions=${CX_COMPILE_VERSIONS:-15 16 17 18}
jobs=${CX_COMPILE_JOBS:-$(nproc)}
# First line of each marker: what was asked for.  A change of recipe (bump
# the number) or options rebuilds; any minor version of the major will do.
# Recipe 2: TAP modules and contrib/pg_surgery too, for the suite on the
# major (test/run_version_suite.sh).  Recipe 3: contrib/test_decoding too
# (test/t/012_logical.pl).
recipe=3
configure_opts="--without-icu --with-lz4 --with-zstd --enable-tap-tests"
# The Debian 15 installation test/lib.sh uses.
debian15=/usr/lib/postgresql/15/bin/pg_config

start=$(date +%s)
. "$root/test/lib.sh"   # cx_pg_source_apt, cx_pg_source_build
log() { printf '== compile check [%ds]: %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

key_of() { echo "compressx-compile-build recipe=$recipe postgresql-$1 --prefix=$cache/pg$1 $configure_opts"; }

# cached_ok NN: the installation in $cache/pgNN is complete.
cached_ok() {
    local v=$1 prefix=$cache/pg$1 marker=$cache/pg$1/.compressx-compile-build pgxs
    [ -f "$marker" ] && [ "$(head -n 1 "$marker")" = "$(key_of "$v")" ] || return 1
    [ -x "$prefix/bin/pg_config" ] || return 1
    "$prefix/bin/pg_config" --version | grep -q "^PostgreSQL $v\." || return 1
    pgxs=$("$prefix/bin/pg_config" --pgxs 2>/dev/null) && [ -f "$pgxs" ] || return 1
    [ -f "$("$prefix/bin/pg_config" --includedir-server)/postgres.h" ]
}

# Debian's source archive and fresh package lists, only when something
# must be built.
apt_ready=""
ensure_apt() {
    [ -n "$apt_ready" ] && return 0
    cx_pg_source_apt "$1" "$cache/apt-compile.log" && apt_ready=1
}

# headers_only NN: when no source of NN downloads, install the server
# headers and PGXS files of Debian's binary packages postgresql-server-dev-NN
# and postgresql-client-NN (trixie or sid, through an apt configuration of
# its own in the cache: the system's package lists and status are never
# touched) into $cache/pgNN, with a pg_config script in place of Debian's
# binary (built for a newer glibc, it does not run on bookworm).  Enough to
# compile against, not to run.  Returns 0 when installed, 2 when no suite
# serves NN, 1 on failure.  Runs inside build's subshell, lock held.
headers_only() {
    local v=$1 apt=$cache/apt-bin prefix=$cache/pg$v marker=$cache/pg$v/.compressx-compile-build
    local stage=$cache/stage.pg$v deb got ver
    local opts=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
                -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Dir::State::status=/dev/null
                -o APT::Sandbox::User=root)
    as_root mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/dl"
    printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian %s main\n' \
        trixie sid | as_root tee "$apt/sources.list" >/dev/null
    log "pg$v: falling back to the headers of Debian's binary packages"
    as_root apt-get "${opts[@]}" update -q >"$apt/update.log" 2>&1 ||
        { tail -n 5 "$apt/update.log" >&2; log "pg$v: apt-get update (binary index) failed"; return 1; }
    got=$(apt-cache "${opts[@]}" show "postgresql-server-dev-$v" 2>/dev/null | sed -n 's/^Version: //p' |
          sort -ruV | sed -n 1p)
    [ -n "$got" ] || { log "pg$v: no Debian suite reachable here serves postgresql-server-dev-$v"; return 2; }
    ver=${got%%-*}
    as_root rm -rf "$apt/dl" "$stage"
    as_root mkdir -p "$apt/dl"
    (cd "$apt/dl" && as_root apt-get "${opts[@]}" download "postgresql-server-dev-$v=$got" \
        "postgresql-client-$v=$got") >"$apt/download.log" 2>&1 ||
        { tail -n 5 "$apt/download.log" >&2; log "pg$v: apt-get download failed"; return 1; }
    mkdir -p "$stage"
    for deb in "$apt/dl"/*.deb; do dpkg-deb -x "$deb" "$stage" || return 1; done
    rm -rf "$prefix"
    mkdir -p "$prefix/bin" "$prefix/lib" "$prefix/share"
    mv "$stage/usr/include/postgresql" "$prefix/include" || return 1    # Debian's layout: include/NN/server
    mv "$stage/usr/lib/postgresql/$v/lib/pgxs" "$prefix/lib/pgxs" || return 1
    rm -rf "$stage"
    # Built against glibc 2.38, which declares strlcpy and strlcat;
    # bookworm's 2.36 does not, so port.h must declare them.
    sed -i -E -e 's/^#define HAVE_DECL_(STRLCPY|STRLCAT) 1$/#define HAVE_DECL_\1 0/' \
        -e '/^#define HAVE_(STRLCPY|STRLCAT) 1$/d' "$prefix/include/$v/server/pg_config.h"
    # PGXS asks pg_config for directories only (Makefile.global, PGXS part)
    {
        echo '#!/bin/sh'
        echo "# compressx compile check: headers of postgresql-server-dev-$v $got, no server"
        echo "p=$prefix"
        echo 'case "$1" in'
        echo "  --version) echo 'PostgreSQL $ver (headers only, Debian postgresql-server-dev-$v $got)' ;;"
        echo '  --pgxs) echo "$p/lib/pgxs/src/makefiles/pgxs.mk" ;;'
        echo "  --includedir-server) echo \"\$p/include/$v/server\" ;;"
        echo '  --includedir|--pkgincludedir) echo "$p/include" ;;'
        echo '  --bindir) echo "$p/bin" ;;'
        echo '  --libdir|--pkglibdir) echo "$p/lib" ;;'
        echo '  --sharedir|--sysconfdir|--mandir|--docdir|--localedir) echo "$p/share" ;;'
        echo '  *) echo "pg_config (compressx compile check): $1 is not known here" >&2; exit 1 ;;'
        echo 'esac'
    } >"$prefix/bin/pg_config"
    chmod 755 "$prefix/bin/pg_config"
    {
        key_of "$v"
        echo "installed: headers of postgresql-server-dev-$v $got, no server, $(date -u +%FT%TZ)"
    } >"$marker.tmp"
    mv "$marker.tmp" "$marker"
    cached_ok "$v" || { log "pg$v: header installation in $prefix is incomplete"; return 1; }
    log "pg$v: compiling against the headers of postgresql-server-dev-$v $got ($prefix)"
}

# build NN: make sure $cache/pgNN is complete, building it if not.  Returns
# 0 when it is, 2 when Debian serves no source for NN, 1 on failure.
# Runs in a subshell (its own cd, traps and lock).
build() (
    set -e
    v=$1
    # 16: prebuilt packages (16.2's headers and PGXS), see test/prebuilt_pg.sh
    if [ "$v" = 16 ]; then
        bash "$root/test/prebuilt_pg.sh" 16 >/dev/null
        exit
    fi
    prefix=$cache/pg$v
    marker=$prefix/.compressx-compile-build
    build=$cache/build.pg$v
    logs=$cache/logs.pg$v
    cached_ok "$v" && exit 0
    as_root mkdir -p "$cache"
    [ -w "$cache" ] || as_root chown "$(id -u):$(id -g)" "$cache"
    exec 8>>"$cache/.pg$v.lock"
    log "pg$v: waiting for $cache/.pg$v.lock"
    flock 8
    cached_ok "$v" && exit 0       # built by another run meanwhile

    ensure_apt "$v" || exit 1
    got=$(apt-cache showsrc "postgresql-$v" 2>/dev/null | sed -n 's/^Version: //p' | sort -ruV | sed -n 1p)
    if [ -z "$got" ]; then
        log "pg$v: no Debian suite reachable here serves the source of postgresql-$v"
        headers_only "$v"
        exit
    fi
    t0=$(date +%s)
    log "pg$v: building postgresql-$v $got into $prefix (about 3 minutes on 2 cores; logs in $logs)"
    rm -rf "$logs"
    mkdir -p "$logs"
    rc=0
    # shellcheck disable=SC2086
    cx_pg_source_build "$v" "$got" "$prefix" "$build" "$logs" "$jobs" "pg_surgery test_decoding" \
        --prefix="$prefix" $configure_opts >/dev/null || rc=$?
    if [ "$rc" -eq 2 ]; then
        log "pg$v: the source of postgresql-$v $got does not download"
        headers_only "$v"
        exit
    fi
    [ "$rc" -eq 0 ] || exit 1
    {
        key_of "$v"
        echo "installed: postgresql-$v $got ($("$prefix/bin/pg_config" --version)) $(date -u +%FT%TZ), build $(( $(date +%s) - t0 ))s"
    } >"$marker.tmp"
    mv "$marker.tmp" "$marker"
    cached_ok "$v" || { log "pg$v: installation in $prefix is incomplete"; exit 1; }
    log "pg$v: done in $(( $(date +%s) - t0 ))s: $prefix ($("$prefix/bin/pg_config" --version))"
)

if [ "${1:-}" = "--build" ]; then
    [ $# -eq 2 ] || { echo "usage: $0 [--build NN]" >&2; exit 2; }
    build "$2" && echo "$cache/pg$2"
    exit
fi

passed=0
failed=0
skipped=""
tmp=$(mktemp -d "${TMPDIR:-/tmp}/compressx-compile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for v in $versions; do
    if [ "$v" = 15 ]; then
        if [ ! -x "$debian15" ]; then
            skipped="$skipped 15"; echo "pg15: skipped ($debian15 is not installed)"; continue
        fi
        pg_config=$debian15
    else
        build "$v"
        rc=$?
        if [ "$rc" -eq 2 ]; then
            skipped="$skipped $v"; echo "pg$v: skipped (no Debian source for postgresql-$v)"; continue
        elif [ "$rc" -ne 0 ]; then
            failed=$((failed + 1)); echo "pg$v: FAILED (PostgreSQL $v could not be built, logs in $cache/logs.pg$v)"; continue
        fi
        pg_config=$cache/pg$v/bin/pg_config
    fi
    [ "${CX_COMPILE_BUILD_ONLY:-}" = 1 ] && continue
    # A private copy of the sources, without object files or .git.
    dir=$tmp/pg$v
    mkdir -p "$dir"
    tar -C "$root" --exclude='*.o' --exclude='*.bc' --exclude='*.so' -cf - \
        src sql Makefile compressx.control | tar -C "$dir" -xf -
    version=$("$pg_config" --version)
    # -k: every file's errors, not just the first failing file's
    # with_llvm=no: no bitcode (Debian's Makefile.global names a clang not installed)
    if make -k -C "$dir" PG_CONFIG="$pg_config" COPT=-Werror with_llvm=no >"$tmp/pg$v.log" 2>&1; then
        passed=$((passed + 1)); echo "pg$v ($version): ok"
    else
        failed=$((failed + 1)); echo "pg$v ($version): FAILED"
        grep -E '(error|warning):|\*\*\*' "$tmp/pg$v.log" | sed 's/^/    /' | head -n 40
    fi
done

# A major older than 15 stops at make with a message (MAJORVERSION=14 on the
# command line stands for a pg_config of 14, which is not installed here).
if [ -x "$debian15" ] && [ "${CX_COMPILE_BUILD_ONLY:-}" != 1 ]; then
    if out=$(make -n -C "$root" PG_CONFIG="$debian15" MAJORVERSION=14 2>&1); then
        failed=$((failed + 1)); echo "pg14: make did not refuse it ... FAILED"
    elif echo "$out" | grep -q "compressx needs PostgreSQL 15 or later"; then
        passed=$((passed + 1)); echo "pg14: make refuses it with a message ... ok"
    else
        failed=$((failed + 1)); echo "pg14: make failed without the message ... FAILED"; echo "$out" | head -n 5
    fi
fi

[ -n "$skipped" ] && log "skipped:$skipped"
# nothing compiled is no check at all
if [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ] && [ "${CX_COMPILE_BUILD_ONLY:-}" != 1 ]; then
    failed=1; echo "no version could be compiled against"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
