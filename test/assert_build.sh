#!/usr/bin/env bash
# Ensures that an assert-enabled PostgreSQL 15 (--enable-cassert) is
# installed in a cache outside the git clone, and prints its prefix on
# stdout; progress goes to stderr.  Idempotent: when the cache is complete
# (marker file written only after a successful install, for the same recipe)
# it does nothing.  Otherwise it installs the build dependencies (apt-get),
# enables deb-src for the Debian archive, fetches the source of postgresql-15
# with `apt-get source`, configures, builds and installs it.
#
#   CX_ASSERT_PREFIX      install prefix (/opt/compressx-cache/pg15-assert)
#   CX_ASSERT_PG_VERSION  Debian source version to build (15.18-0+deb12u1);
#                         if the mirror no longer has it, the newest
#                         postgresql-15 source it does have is built
#   CX_ASSERT_JOBS        make -j (number of cores + 1)
#
# The build uses upstream's tree: Debian's patches are not applied (one of
# them makes `make install` write modules into /usr/lib/postgresql/15/lib,
# the Debian installation, whatever the prefix).  `make install` goes to a
# staging directory first, is checked to stay inside the prefix and is then
# moved into place, so the prefix is either complete or absent.
set -euo pipefail
umask 022

prefix=${CX_ASSERT_PREFIX:-/opt/compressx-cache/pg15-assert}
pg_version=${CX_ASSERT_PG_VERSION:-15.18-0+deb12u1}
jobs=${CX_ASSERT_JOBS:-$(( $(nproc) + 1 ))}
cache=$(dirname "$prefix")
marker=$prefix/.compressx-assert-build
build=$cache/build.$(basename "$prefix")
logs=$cache/logs.$(basename "$prefix")
lockfile=$cache/.$(basename "$prefix").lock
cflags="-O1 -g"
configure_args=(--prefix="$prefix" --enable-cassert --enable-debug
    --enable-tap-tests --with-lz4 --with-zstd --without-icu)
# First line of the marker: what was asked for.  A change of recipe (bump
# the number), version, options or prefix rebuilds.
# contrib modules the tests use (pg_surgery: orphaned TOAST values in verify.sql)
contrib="pg_surgery"
key="compressx-assert-build recipe=3 postgresql-15=$pg_version ${configure_args[*]} CFLAGS=$cflags contrib=$contrib"
build_deps="gcc make perl bison flex libreadline-dev zlib1g-dev liblz4-dev libzstd-dev
    pkg-config dpkg-dev libipc-run-perl bzip2 xz-utils"

start=$(date +%s)
. "$(dirname "$0")/lib.sh"   # cx_enable_deb_src
log() { printf '== assert build [%ds]: %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

cache_complete() {
    [ -f "$marker" ] && [ "$(head -n 1 "$marker")" = "$key" ] || return 1
    local pgxs
    pgxs=$("$prefix/bin/pg_config" --pgxs 2>/dev/null) || return 1
    pgxs=${pgxs%/src/makefiles/pgxs.mk}
    [ -x "$prefix/bin/postgres" ] && [ -x "$prefix/bin/initdb" ] &&
        [ -x "$prefix/bin/psql" ] && [ -x "$prefix/bin/pg_ctl" ] &&
        [ -x "$pgxs/src/test/regress/pg_regress" ] &&
        [ -x "$pgxs/src/test/isolation/pg_isolation_regress" ] &&
        [ -x "$pgxs/src/test/isolation/isolationtester" ] &&
        [ -f "$pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm" ] || return 1
    local m
    for m in $contrib; do
        [ -f "$("$prefix/bin/pg_config" --sharedir)/extension/$m.control" ] || return 1
    done
}

if cache_complete; then
    log "cached: $prefix ($(sed -n 's/^installed: //p' "$marker"))"
    echo "$prefix"
    exit 0
fi

# Serialise builds (and, through CX_ASSERT_LOCK_HELD, whole assert suites:
# they install compressx into the prefix) on this machine.
as_root mkdir -p "$cache"
[ -w "$cache" ] || as_root chown "$(id -u):$(id -g)" "$cache"
if [ -z "${CX_ASSERT_LOCK_HELD:-}" ]; then
    exec 9>>"$lockfile"
    log "waiting for $lockfile"
    flock 9
    if cache_complete; then
        log "cached: $prefix (built by another run)"
        echo "$prefix"
        exit 0
    fi
fi

log "no complete assert-enabled build in $prefix: building PostgreSQL (about 4 minutes on 2 cores)"

rm -rf "$logs"
mkdir -p "$logs"
cx_enable_deb_src
log "apt-get update"
as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >"$logs/apt.log" 2>&1 ||
    { tail -n 20 "$logs/apt.log" >&2; die "apt-get update"; }
log "installing build dependencies"
# shellcheck disable=SC2086
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $build_deps \
    >>"$logs/apt.log" 2>&1 || { tail -n 20 "$logs/apt.log" >&2; die "apt-get install"; }

# Source: the pinned version, else the newest one the mirror serves.
rm -rf "$build"
mkdir -p "$build/dl"
chmod 755 "$build" "$build/dl"
got=""
for v in "$pg_version" $(apt-cache showsrc postgresql-15 2>/dev/null | sed -n 's/^Version: //p' | sort -ruV); do
    log "apt-get source postgresql-15=$v"
    if (cd "$build/dl" && apt-get source -q --download-only "postgresql-15=$v") >>"$logs/source.log" 2>&1; then
        got=$v; break
    fi
    rm -f "$build"/dl/*
    log "postgresql-15=$v: source not available from the mirror"
done
[ -n "$got" ] || { tail -n 20 "$logs/source.log" >&2; die "no postgresql-15 source could be fetched (is deb-src enabled?)"; }
[ "$got" = "$pg_version" ] || log "WARNING: built $got instead of $pg_version"
dsc=$(ls "$build"/dl/postgresql-15_*.dsc)
log "unpacking $(basename "$dsc") without Debian's patches"
dpkg-source -x --skip-patches "$dsc" "$build/src" >>"$logs/source.log" 2>&1 ||
    { tail -n 20 "$logs/source.log" >&2; die "dpkg-source -x"; }

cd "$build/src"
log "configure ${configure_args[*]} CFLAGS='$cflags' (log: $logs/configure.log)"
./configure "${configure_args[@]}" CFLAGS="$cflags" >"$logs/configure.log" 2>&1 ||
    { tail -n 30 "$logs/configure.log" >&2; die "configure"; }
log "make -j$jobs (log: $logs/make.log)"
make -j"$jobs" >"$logs/make.log" 2>&1 || { grep -E 'error|Error' "$logs/make.log" | tail -n 30 >&2; die "make"; }
stage=$build/stage
log "make install into a staging directory (log: $logs/install.log)"
make install DESTDIR="$stage" >"$logs/install.log" 2>&1 || { tail -n 30 "$logs/install.log" >&2; die "make install"; }
for m in $contrib; do
    make -C "contrib/$m" install DESTDIR="$stage" >>"$logs/install.log" 2>&1 ||
        { tail -n 30 "$logs/install.log" >&2; die "make install of contrib/$m"; }
done
stray=$(cd "$stage" && find . -mindepth 1 \( -type f -o -type l \) ! -path ".$prefix/*" | head -n 5)
[ -z "$stray" ] || die "make install would write outside $prefix: $stray"

log "moving the installation to $prefix"
rm -rf "$prefix"
mkdir -p "$(dirname "$prefix")"
mv "$stage$prefix" "$prefix"
pkglibdir=$("$prefix/bin/pg_config" --pkglibdir)
case "$pkglibdir" in "$prefix"/*) ;; *) die "pg_config --pkglibdir is $pkglibdir, outside $prefix" ;; esac
grep -q '^#define USE_ASSERT_CHECKING 1' "$("$prefix/bin/pg_config" --includedir-server)/pg_config.h" ||
    die "USE_ASSERT_CHECKING is not defined in the installed pg_config.h"
{
    echo "$key"
    echo "installed: postgresql-15 $got ($("$prefix/bin/postgres" --version)) $(date -u +%FT%TZ)"
} >"$marker.tmp"
mv "$marker.tmp" "$marker"
cache_complete || die "installation in $prefix is incomplete"
cd /
rm -rf "$build"
log "done: $prefix ($("$prefix/bin/postgres" --version), logs in $logs)"
echo "$prefix"
