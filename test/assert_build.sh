#!/usr/bin/env bash
# Ensures that an assert-enabled PostgreSQL (--enable-cassert) of a major
# (15 unless given) is installed in a cache outside the git clone, and
# prints its prefix on stdout; progress goes to stderr.  Idempotent: when
# the cache is complete (marker file written only after a successful
# install, for the same recipe) it does nothing.  Otherwise it installs the
# build dependencies, fetches the source of postgresql-NN from Debian
# (15: bookworm, with deb-src enabled; later majors: trixie or sid), and
# configures, builds and installs it (cx_pg_source_build in test/lib.sh,
# the same steps as test/compile_check.sh's builds).
#
#   test/assert_build.sh [MAJOR]
#
#   CX_ASSERT_PREFIX      install prefix (/opt/compressx-cache/pgNN-assert);
#                         set it only for a run of one major
#   CX_ASSERT_PG_VERSION  Debian source version to build (15: 15.18-0+deb12u1;
#                         others: the newest the mirror serves); if the
#                         mirror no longer has it, the newest postgresql-NN
#                         source it does have is built
#   CX_ASSERT_JOBS        make -j (number of cores + 1)
#
# The recipe is compile_check.sh's (lz4, zstd, TAP modules, contrib/
# pg_surgery, which sql/verify.sql uses) plus --enable-cassert
# --enable-debug and CFLAGS=-O1 -g.
set -euo pipefail
umask 022

major=${1:-15}
case $major in ''|*[!0-9]*) echo "usage: $0 [MAJOR]" >&2; exit 2 ;; esac
prefix=${CX_ASSERT_PREFIX:-${CX_COMPILE_CACHE:-/opt/compressx-cache}/pg$major-assert}
# 15 is pinned to bookworm's version; sid replaces its 18 with each minor
if [ "$major" = 15 ]; then
    pg_version=${CX_ASSERT_PG_VERSION:-15.18-0+deb12u1}
else
    pg_version=${CX_ASSERT_PG_VERSION:-}
fi
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
# the number), version, options or prefix rebuilds.  (The format of 15's
# key predates other majors: an existing pg15-assert stays valid.)
# contrib modules the tests use (pg_surgery: orphaned TOAST values in
# verify.sql; test_decoding: t/012_logical.pl)
contrib="pg_surgery test_decoding"
key="compressx-assert-build recipe=4 postgresql-$major=${pg_version:-newest} ${configure_args[*]} CFLAGS=$cflags contrib=$contrib"

start=$(date +%s)
. "$(dirname "$0")/lib.sh"   # cx_pg_source_apt, cx_pg_source_build
log() { printf '== assert build [%ds]: %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }

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
        [ -f "$("$prefix/bin/pg_config" --sharedir)/extension/$m.control" ] ||
            [ -f "$("$prefix/bin/pg_config" --pkglibdir)/$m.so" ] || return 1
    done
}

if cache_complete; then
    log "cached: $prefix ($(sed -n 's/^installed: //p' "$marker"))"
    echo "$prefix"
    exit 0
fi

# Serialise builds (and, through CX_ASSERT_LOCK_HELD, whole assert suites:
# they install compressx into the prefix) on this machine.
cx_sudo mkdir -p "$cache"
[ -w "$cache" ] || cx_sudo chown "$(id -u):$(id -g)" "$cache"
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

log "no complete assert-enabled build in $prefix: building PostgreSQL $major (about 3 minutes on 2 idle cores)"
t0=$(date +%s)
rm -rf "$logs"
mkdir -p "$logs"
cx_pg_source_apt "$major" "$logs/apt.log" || die "apt"

# Source: the pinned version, else the newest one the mirror serves.
versions="$pg_version $(apt-cache showsrc "postgresql-$major" 2>/dev/null | sed -n 's/^Version: //p' | sort -ruV || true)"
rc=0
got=$(cx_pg_source_build "$major" "$versions" "$prefix" "$build" "$logs" "$jobs" "$contrib" \
    "${configure_args[@]}" CFLAGS="$cflags") || rc=$?
[ "$rc" -ne 2 ] || die "no postgresql-$major source could be fetched (logs in $logs)"
[ "$rc" -eq 0 ] || die "building postgresql-$major (logs in $logs)"
[ -z "$pg_version" ] || [ "$got" = "$pg_version" ] || log "WARNING: built $got instead of $pg_version"

grep -q '^#define USE_ASSERT_CHECKING 1' "$("$prefix/bin/pg_config" --includedir-server)/pg_config.h" ||
    die "USE_ASSERT_CHECKING is not defined in the installed pg_config.h"
{
    echo "$key"
    echo "installed: postgresql-$major $got ($("$prefix/bin/postgres" --version)) $(date -u +%FT%TZ), build $(( $(date +%s) - t0 ))s"
} >"$marker.tmp"
mv "$marker.tmp" "$marker"
cache_complete || die "installation in $prefix is incomplete"
log "done: $prefix ($("$prefix/bin/postgres" --version), logs in $logs)"
echo "$prefix"
