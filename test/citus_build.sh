#!/usr/bin/env bash
# Builds Citus from the source archive vendored in vendor/citus/ (the tag
# that supports the major: 13.2.2 for 15 and 17, 14.0.1 for 18) and
# installs it into that major's PostgreSQL: Debian's 15, the 18 that
# test/compile_check.sh builds into the cache, or the 17.10 server with
# 17.12's headers of test/prebuilt_pg.sh 17 (whose test-only shim also
# gives Citus the 17.12 functions 17.10 lacks).  The build tree is kept in
# the cache outside the clone (/opt/compressx-cache/citus-VER-pgMM, about 9
# minutes on 2 cores the first time), so later runs only `make install`,
# which also repairs an installation that lost the files.  Prints the
# installation's bin directory on stdout; progress goes to stderr.
#
#   test/citus_build.sh 15|17|18
#
#   CX_COMPILE_CACHE   cache directory (/opt/compressx-cache)
#   CX_PGBIN           (15) the bin directory of another installation of 15
#                      (a relocated copy of Debian's, see test/lib.sh):
#                      the build against Debian's headers is installed there
#   CX_CITUS_JOBS      make -j (number of cores)
#
# Citus 13.2.2 declares have_createdb_privilege() static inline for
# PostgreSQL 15, which exports it itself from 15.20 on (the declarations
# conflict).  vendor/citus/13.2.2-have_createdb_privilege.patch puts the
# definition under #ifndef CITUS_CORE_HAS_HAVE_CREATEDB_PRIVILEGE, defined
# here when the server's commands/dbcommands.h declares the function.
set -euo pipefail
umask 022

major=${1:?usage: $0 15|17|18}
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${CX_COMPILE_CACHE:-/opt/compressx-cache}
jobs=${CX_CITUS_JOBS:-$(nproc)}
start=$(date +%s)
log() { printf '== citus build [%ds]: %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

case $major in
    15) ver=13.2.2; pg_config=/usr/lib/postgresql/15/bin/pg_config
        [ -n "${CX_PGBIN:-}" ] && install_config=$CX_PGBIN/pg_config ;;
    17) ver=13.2.2
        pg_config=$(bash "$root/test/prebuilt_pg.sh" 17)/bin/pg_config || exit 1 ;;
    18) ver=14.0.1
        bash "$root/test/compile_check.sh" --build 18 >/dev/null
        pg_config=$cache/pg18/bin/pg_config ;;
    *) echo "$0: no Citus build for PostgreSQL $major here (15, 17 and 18)" >&2; exit 2 ;;
esac
install_config=${install_config:-$pg_config}
archive=$root/vendor/citus/citus-$ver.tar.gz
[ -f "$archive" ] || { log "missing $archive"; exit 1; }

# What the build needs beyond compressx's own dependencies: headers that
# PostgreSQL's server headers and Makefile.global refer to, and libpq.
deps="libkrb5-dev libssl-dev libselinux1-dev libxslt1-dev libpam0g-dev libpq-dev liblz4-dev libzstd-dev gcc make"
missing=""
for p in $deps; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    log "installing:$missing"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    # shellcheck disable=SC2086
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null
fi

cppflags=""
incdir=$("$pg_config" --includedir-server)
if grep -q "have_createdb_privilege" "$incdir/commands/dbcommands.h"; then
    cppflags=-DCITUS_CORE_HAS_HAVE_CREATEDB_PRIVILEGE
fi

dir=$cache/citus-$ver-pg$major
# the build is reused while the archive, the patch, the server version and
# these options are the same
key="recipe=1 $(sha256sum "$archive" | cut -c1-16) $(cat "$root"/vendor/citus/*.patch | sha256sum | cut -c1-16) $("$pg_config" --version) cppflags=$cppflags --without-libcurl with_llvm=no"
mkdir -p "$cache"
exec 7>>"$cache/.citus-pg$major.lock"
flock 7
if [ ! -f "$dir/.compressx-citus-build" ] || [ "$(cat "$dir/.compressx-citus-build")" != "$key" ]; then
    log "building Citus $ver for $("$pg_config" --version) in $dir (log: $dir.log)"
    rm -rf "$dir"
    mkdir -p "$dir"
    tar -C "$dir" --strip-components=1 -xzf "$archive"
    if [ ! -f "$("$pg_config" --includedir)/libpq-fe.h" ]; then
        # an installation without client headers (17's prebuilt): libpq's
        # three from libpq-dev, searched last (its pg_config.h is not the
        # server's)
        mkdir -p "$dir/.libpq"
        cp /usr/include/postgresql/libpq-fe.h /usr/include/postgresql/postgres_ext.h \
            /usr/include/postgresql/pg_config_ext.h "$dir/.libpq/"
        cppflags="$cppflags -idirafter $dir/.libpq"
    fi
    (cd "$dir" && for p in "$root"/vendor/citus/"$ver"-*.patch; do
         [ -f "$p" ] && patch -s -p1 <"$p"
     done
     ./configure PG_CONFIG="$pg_config" --without-libcurl CPPFLAGS="$cppflags" &&
     make -j"$jobs" with_llvm=no) >"$dir.log" 2>&1 ||
        { grep -E 'error|Error' "$dir.log" | tail -n 20 >&2; log "Citus $ver: build failed"; exit 1; }
    echo "$key" >"$dir/.compressx-citus-build"
fi
log "installing Citus $ver into $("$install_config" --pkglibdir)"
as_root make -C "$dir" -s install with_llvm=no PG_CONFIG="$install_config" >>"$dir.log" 2>&1 ||
    { tail -n 20 "$dir.log" >&2; log "Citus $ver: make install failed"; exit 1; }
cmp -s "$dir/src/backend/distributed/citus.so" "$("$install_config" --pkglibdir)/citus.so" ||
    { log "citus.so in $("$install_config" --pkglibdir) is not the one built"; exit 1; }
"$install_config" --bindir
