#!/usr/bin/env bash
# pg_upgrade of a cluster holding compressx data, from PostgreSQL 15 (or
# CX_UPGRADE_OLD_MAJOR) to another major (default 18: the installation
# test/compile_check.sh builds into the cache outside the clone), in --copy
# and in --link mode.
#
# The old installation is Debian's 15.18 (bookworm's postgresql-15,
# postgresql-client-15 and postgresql-server-dev-15 packages, unpacked once
# into the cache, /opt/compressx-cache/debian-15.18-0+deb12u1): the 15.20
# security release installed here stores an internal attribute option,
# pg_attver, on every column, which 18.6's pg_dump copies into its dump and
# 18.6 then rejects ("unrecognized parameter "pg_attver""), so pg_upgrade
# from 15.20 to 18.6 fails for any database, with or without compressx.
# 15.18 is of the same release date as 18.6.
#
# The old cluster gets the fixture test/upgrade/fixture.sql (pglz, lz4 and
# zstd values inline and out of line, dictionaries (one retired), a
# partitioned table, a table that went heap -> compressx -> heap, a dropped
# column, an expression index, a recompressed heap table, per-column
# settings, ALTER DATABASE settings) and a second database keeping the
# extension at 0.1.0 (test/upgrade/fixture_old.sql).  Checked, each a
# counted line:
#   - a compressx.so built for the new major is refused by the old server
#     with PostgreSQL's magic-block error;
#   - pg_upgrade --check with compressx missing from the new installation
#     fails, names the library, and copies nothing;
#   - per mode: pg_upgrade --check, then the upgrade; the state of
#     test/upgrade/state.sql (rows and checksums of every table, stored
#     methods and bytes, verify(), settings, dictionaries, database
#     settings, an index scan) is identical before and after; the checks of
#     test/upgrade/after.sql pass (writes, recompress_table, VACUUM FULL
#     re-encoding, a new dictionary); ALTER EXTENSION compressx UPDATE
#     takes the 0.1.0 database to 0.5.0 (through 0.2.0, 0.3.0 and 0.4.0) with its rows unchanged
#     and a label for each setting.
# 18's and 19's initdb enable data checksums by default: the new cluster is
# made with --no-data-checksums when the old one has none (15, 16, 17); an
# old 18 cluster keeps 18's default (checksums), and so does the new 19
# one.  NEW_MAJOR 17 is the
# 17.10 server of test/prebuilt_pg.sh (compressx built with 17.12's
# headers, the test-only shim preloaded in the new clusters); 16 is the
# 16.2 of test/prebuilt_pg.sh 16.2 (server and pg_upgrade of one build:
# pg_upgrade refuses a new server of another minor).  Both 16 builds
# reachable here lack lz4: with 16 on either side, the fixture stores pglz
# where it stores lz4 otherwise (lz4 values could not be read after the
# upgrade, and pg_upgrade has no check for them that compressx could
# extend: --check only LOADs the library in the new cluster, which never
# sees the old data; doc/upgrading.md gives the query to run first).
#
# NEW_MAJOR 19 is Debian's 19~rc1 in the sid root of test/sid19_root.sh
# (made when missing; run as root): its programs need sid's C library, and
# pg_upgrade needs the old and the new programs in one filesystem view, so
# the whole check runs inside the root (chroot).  On the host, this script
# makes the work directory in the root's /tmp, copies the old installation
# there and builds and installs compressx into that copy with the host's
# compiler and headers (the build a server of the old major on Debian 12
# loads), copies into the work directory the few shared libraries of
# Debian 12 that the old programs need and sid lacks (sonames sid replaced:
# libicu*.so.72, libldap-2.5.so.0, libxml2.so.2, ...; found with ldd inside
# the root; the run inside puts them on LD_LIBRARY_PATH, where no program
# of sid looks for them), then runs itself inside the root
# (CX_IN_SID_ROOT=1), where compressx is built for a private copy of the
# root's /usr/lib/postgresql/19 and the clusters run.  An old 15 with
# Debian's LLVM JIT provider (libLLVM-14 is not in sid) runs with jit = off
# there; the JIT does not touch stored data.
#
# compressx is built from a copy of this tree and installed into private
# copies of both installations in the work directory (so that the
# missing-library case can remove it).  Ends with the line "N passed, N
# failed"; exits non-zero on failure.
#
#   test/upgrade_check.sh [NEW_MAJOR]     16, 17, 18 or 19
#
#   CX_UPGRADE_OLD_VERSION  Debian version of the old packages (15.18-0+deb12u1)
#   CX_UPGRADE_OLD_BIN      an installed 15 to use instead (its bin directory)
#   CX_UPGRADE_OLD_MAJOR    16, 17 or 18: upgrade from test/prebuilt_pg.sh's
#                      16.2 or 17.10 (17: the test-only shim preloaded in
#                      the old cluster), or from the 18.6 of
#                      test/compile_check.sh, instead
#   CX_UPGRADE_PORT    first of the two ports of its clusters (55450)
#   CX_SID19_ROOT      the sid root for 19 (/opt/compressx-cache/sid19)
#   CX_KEEP_WORKDIR=1  keep clusters and logs after a passing run too
set -u
umask 022
. "$(dirname "$0")/lib.sh"

new_major=${1:-18}
# the old major: 15 (Debian's 15.18), 16 (16.2), 17 (17.10) or 18 (18.6)
old_major=${CX_UPGRADE_OLD_MAJOR:-15}
port_old=${CX_UPGRADE_PORT:-55450}
port_new=$((port_old + 1))
passed=0
failed=0
failures=""

case $old_major in
    15|16|17|18) ;;
    *) echo "CX_UPGRADE_OLD_MAJOR: 15, 16, 17 or 18"; exit 2 ;;
esac
case $new_major in
    16|17|18|19) ;;
    *) echo "NEW_MAJOR: 16, 17, 18 or 19"; exit 2 ;;
esac
if [ "$new_major" -le "$old_major" ]; then
    echo "$old_major -> $new_major: the new major must be newer than the old one"
    exit 2
fi

# 19 runs in the sid root: "host" is this script's run on the host, which
# prepares the old side and runs itself inside the root ("inside")
sid=""
if [ "$new_major" = 19 ]; then
    if [ -n "${CX_IN_SID_ROOT:-}" ]; then sid=inside; else sid=host; fi
fi

# result NAME STATUS [DETAIL]: one counted line
result() {
    if [ "$2" -eq 0 ]; then
        echo "$1 ... ok"
        passed=$((passed + 1))
    else
        echo "$1 ... FAILED${3:+ ($3)}"
        failed=$((failed + 1)); failures="$failures $(echo "$1" | tr ' ' '_')"
    fi
}

cache=${CX_COMPILE_CACHE:-/opt/compressx-cache}
old_version=${CX_UPGRADE_OLD_VERSION:-15.18-0+deb12u1}

# debian_15 VERSION: Debian's PostgreSQL 15 packages of VERSION unpacked
# into the cache, once; prints the directory (its usr/lib/postgresql/15/bin
# holds the programs)
debian_15() {
    local v=$1 dir=$cache/debian-15-$1 stage p
    if [ ! -f "$dir/.complete" ]; then
        cx_sudo mkdir -p "$cache"
        (
            flock 9
            [ -f "$dir/.complete" ] && exit 0
            stage=$(mktemp -d "$cache/.debian-15.XXXXXX")
            cd "$stage" || exit 1
            for p in postgresql-15 postgresql-client-15 postgresql-server-dev-15; do
                apt-get download -q "$p=$v" >>download.log 2>&1 || { tail -n 5 download.log >&2; exit 1; }
            done
            mkdir root
            for p in ./*.deb; do dpkg-deb -x "$p" root || exit 1; done
            touch root/.complete
            rm -rf "$dir" && mv root "$dir" && cd / && rm -rf "$stage"
        ) 9>"$cache/.debian-15.lock" || return 1
    fi
    echo "$dir"
}

# install_copy FROM TO LABEL: copy the installation FROM (a prefix) to TO
# and build and install compressx into the copy (any compressx files the
# installation had, from another run's make install, removed first)
src=""
install_copy() {
    local from=$1 to=$2 label=$3 bin pkglib
    cp -a "$from" "$to"
    bin=$(find "$to" -path '*/bin/pg_config' | head -n 1)
    bin=${bin%/pg_config}
    pkglib=$("$bin/pg_config" --pkglibdir)
    rm -rf "$pkglib"/compressx* "$pkglib"/bitcode/compressx* "$("$bin/pg_config" --sharedir)"/extension/compressx*
    if [ -z "$src" ]; then
        src=$work/src
        mkdir -p "$src"
        tar -C "$cx_root" -cf - Makefile compressx.control src sql | tar -C "$src" -xf -
    fi
    make -C "$src" -s PG_CONFIG="$bin/pg_config" clean >/dev/null 2>&1
    if ! make -C "$src" -s -j"$(nproc)" PG_CONFIG="$bin/pg_config" with_llvm=no >"$work/build-$label.log" 2>&1 ||
       ! make -C "$src" -s PG_CONFIG="$bin/pg_config" with_llvm=no install >>"$work/build-$label.log" 2>&1; then
        cat "$work/build-$label.log"
        return 1
    fi
    echo "$bin"
}

# debian_layout SYSROOT MAJOR TO: the share and include directories of
# Debian's PostgreSQL MAJOR under SYSROOT copied to TO/usr/...; the caller
# copies SYSROOT/usr/lib/postgresql/MAJOR to TO/usr/lib/postgresql/MAJOR
# (Debian's builds find share/ and include/ relative to their bin/)
debian_layout() {
    local sysroot=$1 major=$2 to=$3
    mkdir -p "$to/usr/lib/postgresql" "$to/usr/share/postgresql" "$to/usr/include/postgresql"
    cp -a "$sysroot/usr/share/postgresql/$major" "$to/usr/share/postgresql/"
    cp -a "$sysroot/usr/include/postgresql/$major" "$to/usr/include/postgresql/"
}

[ -n "$sid" ] || cx_install_deps
root=""
case $new_major in
    16) prefix=$(bash "$cx_root/test/prebuilt_pg.sh" 16.2 2>/dev/null) || prefix="" ;;
    17) prefix=$(bash "$cx_root/test/prebuilt_pg.sh" 17 2>/dev/null) || prefix="" ;;
    19) if [ "$sid" = inside ]; then
            prefix=/usr/lib/postgresql/19
        elif [ "$(id -u)" -ne 0 ]; then
            echo "19 runs in a sid root, entered with chroot: run test/upgrade_check.sh 19 as root"
            result "PostgreSQL 19 installation with pg_upgrade" 1; cx_summary_exit
        else
            root=${CX_SID19_ROOT:-${CX_COMPILE_CACHE:-/opt/compressx-cache}/sid19}
            # made once into the cache when missing; binds /proc, /dev, /dev/pts
            bash "$cx_root/test/sid19_root.sh" "$root" >&2 || root=""
            prefix=$root/usr/lib/postgresql/19
        fi ;;
    *) prefix=$(bash "$cx_root/test/compile_check.sh" --build "$new_major" 2>/dev/null) || prefix="" ;;
esac
# 18's and 19's initdb enable checksums: the new cluster gets none when
# the old major's initdb made none; 17's new side (the 17.10 server with
# 17.12 headers) needs the test-only shim preloaded (test/prebuilt_pg.sh)
new_initdb_opts=""
[ "$new_major" -ge 18 ] && [ "$old_major" -lt 18 ] && new_initdb_opts=--no-data-checksums
new_conf=""
[ "$new_major" = 17 ] && new_conf="shared_preload_libraries = 'cx_pg17_shim'"
if [ -z "$prefix" ] || [ ! -x "$prefix/bin/pg_upgrade" ]; then
    result "PostgreSQL $new_major installation with pg_upgrade" 1; cx_summary_exit
fi
old_conf=""
[ "$old_major" = 17 ] && old_conf="shared_preload_libraries = 'cx_pg17_shim'"
if [ "$sid" = inside ]; then
    # the host built the old side into the work directory
    old_from=""
elif [ "$old_major" = 16 ]; then
    old_from=$(bash "$cx_root/test/prebuilt_pg.sh" 16.2 2>/dev/null) ||
        { result "PostgreSQL 16.2 from prebuilt packages (test/prebuilt_pg.sh 16.2)" 1; cx_summary_exit; }
elif [ "$old_major" = 17 ]; then
    old_from=$(bash "$cx_root/test/prebuilt_pg.sh" 17 2>/dev/null) ||
        { result "PostgreSQL 17 from prebuilt packages (test/prebuilt_pg.sh)" 1; cx_summary_exit; }
elif [ "$old_major" = 18 ]; then
    old_from=$(bash "$cx_root/test/compile_check.sh" --build 18 2>/dev/null) ||
        { result "PostgreSQL 18 built from source (test/compile_check.sh --build 18)" 1; cx_summary_exit; }
elif [ -n "${CX_UPGRADE_OLD_BIN:-}" ]; then
    old_from=$(cd "$CX_UPGRADE_OLD_BIN/../../../.." && pwd)   # .../usr/lib/postgresql/15/bin
elif ! old_from=$(debian_15 "$old_version"); then
    result "Debian's PostgreSQL 15 packages $old_version" 1; cx_summary_exit
fi

case $sid in
    inside) work=$CX_UPGRADE_WORK ;;
    host) work=$(TMPDIR=$root/tmp cx_workdir upgrade) ;;
    *) work=$(cx_workdir upgrade) ;;
esac
# stop_all: stop whichever clusters still run (at exit); any major's pg_ctl
# stops another's server, and the sid root has no pg_ctl on its PATH
stop_all() {
    local d ctl=pg_ctl
    [ -n "${new_bin:-}" ] && ctl=$new_bin/pg_ctl
    for d in old new-copy new-link old-link new-missing; do
        [ -f "$work/$d/postmaster.pid" ] && cx_as_user "$ctl" -D "$work/$d" -m fast -w stop >/dev/null 2>&1
    done
    return 0
}
trap stop_all EXIT

# private copies of both installations, with compressx built from a copy of
# this tree (no object files of the checkout)
if [ "$sid" = inside ]; then
    old_bin=$CX_UPGRADE_OLD_PREPARED
elif [ "$old_major" != 15 ]; then
    old_to=$work/pg$old_major-old
elif [ -n "${CX_UPGRADE_OLD_BIN:-}" ]; then
    debian_layout "$old_from" 15 "$work/pg15"
    old_from=$old_from/usr/lib/postgresql/15
    old_to=$work/pg15/usr/lib/postgresql/15
else
    old_to=$work/pg15
fi
if [ "$sid" != inside ]; then
    old_bin=$(install_copy "$old_from" "$old_to" "$old_major") ||
        { result "build and install compressx for $old_major" 1; cx_summary_exit; }
fi

# sid_old_libs BINDIR DIR: copy into DIR the host's shared libraries that
# the old installation's programs (BINDIR) and server modules need and the
# sid root lacks, until ldd inside the root (DIR on LD_LIBRARY_PATH) finds
# each; not the JIT provider llvmjit.so (libLLVM-14, 105 MB): the old
# cluster runs with jit = off there
sid_old_libs() {
    local bin=$1 dir=$2 pkglib files missing lib path round
    pkglib=$("$bin/pg_config" --pkglibdir)
    mkdir -p "$dir"
    files=$(find "$bin"/ "$pkglib" -maxdepth 1 -type f \( -perm -u+x -o -name '*.so' \) ! -name 'llvmjit*' |
        sed "s|^$root||")
    for round in 1 2 3 4 5 6 7 8; do
        # shellcheck disable=SC2086
        missing=$(chroot "$root" env LD_LIBRARY_PATH="${dir#"$root"}" sh -c \
            'for f in "$@"; do ldd "$f" 2>/dev/null; done' sh $files | awk '/not found/ {print $1}' | sort -u)
        [ -n "$missing" ] || return 0
        for lib in $missing; do
            path=$(/sbin/ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')
            [ -n "$path" ] || { echo "$lib: needed by the old installation, not on the host either"; return 1; }
            echo "from the host into the sid root: $lib"
            cp -L "$path" "$dir/$lib" || return 1
        done
    done
    return 1
}

if [ "$sid" = host ]; then
    sid_old_libs "$old_bin" "$work/oldlibs" ||
        { result "the old installation's shared libraries in the sid root" 1; cx_summary_exit; }
    mkdir -p "$work/tree/test"
    tar -C "$cx_root" -cf - Makefile compressx.control src sql | tar -C "$work/tree" -xf -
    cp -a "$cx_root/test/lib.sh" "$cx_root/test/upgrade_check.sh" "$cx_root/test/upgrade" "$work/tree/test/"
    trap - EXIT
    inner=${work#"$root"}
    echo "into the sid root $root: $inner"
    chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        CX_IN_SID_ROOT=1 CX_UPGRADE_WORK="$inner" CX_UPGRADE_OLD_PREPARED="${old_bin#"$root"}" \
        CX_UPGRADE_OLD_MAJOR="$old_major" LD_LIBRARY_PATH="$inner/oldlibs" \
        ${CX_UPGRADE_PORT+CX_UPGRADE_PORT="$CX_UPGRADE_PORT"} \
        ${CX_KEEP_WORKDIR+CX_KEEP_WORKDIR="$CX_KEEP_WORKDIR"} \
        bash "$inner/tree/test/upgrade_check.sh" 19
    rc=$?
    [ -d "$work" ] && echo "(the work directory on the host: $work)"
    exit $rc
fi

# the fixture and its checks; with 16 (no lz4) on either side, pglz where
# they name lz4
fixture=$work/fixture
mkdir -p "$fixture"
if [ "$old_major" = 16 ] || [ "$new_major" = 16 ]; then
    for f in "$cx_root"/test/upgrade/*.sql; do
        sed -e "s/'lz4', 1)/'pglz')/" -e "s/lz4/pglz/g" "$f" >"$fixture/$(basename "$f")"
    done
    echo "fixture: pglz instead of lz4 (the 16 builds lack lz4)"
else
    cp "$cx_root"/test/upgrade/*.sql "$fixture/"
fi

# an old 15 whose JIT provider's libraries the sid root lacks: no JIT
if [ "$sid" = inside ]; then
    jit=$("$old_bin/pg_config" --pkglibdir)/llvmjit.so
    if [ -f "$jit" ] && ldd "$jit" 2>/dev/null | grep -q 'not found'; then
        old_conf="$old_conf
jit = off"
        echo "old cluster: jit = off (its JIT provider's libLLVM is not in the sid root)"
    fi
fi
if [ "$new_major" = 19 ]; then
    debian_layout / 19 "$work/pg19"
    new_bin=$(install_copy "$prefix" "$work/pg19/usr/lib/postgresql/19" "$new_major") ||
        { result "build and install compressx for $new_major" 1; cx_summary_exit; }
else
    new_bin=$(install_copy "$prefix" "$work/pg$new_major" "$new_major") ||
        { result "build and install compressx for $new_major" 1; cx_summary_exit; }
fi
new_lib=$("$new_bin/pg_config" --pkglibdir)
new_ext=$("$new_bin/pg_config" --sharedir)/extension
old_lib=$("$old_bin/pg_config" --pkglibdir)
chown -R "$cx_user" "$work"
echo "old: $("$old_bin/postgres" --version) in $old_bin"
echo "new: $("$new_bin/postgres" --version) in $new_bin"

# psql_at BINDIR PORT DB [psql args]: a client of the cluster on PORT
psql_at() {
    local bin=$1 port=$2 db=$3
    shift 3
    cx_as_user "$bin/psql" -X -q -h "$work" -p "$port" -U postgres -d "$db" "$@"
}

# start_cluster BINDIR DIR PORT / stop_cluster BINDIR DIR
start_cluster() {
    cx_as_user "$1/pg_ctl" -D "$work/$2" -l "$work/$2.log" -o "-p $3 -k $work -c listen_addresses=''" -w start >/dev/null
}
stop_cluster() {
    cx_as_user "$1/pg_ctl" -D "$work/$2" -m fast -w stop >/dev/null
}

# init_cluster BINDIR DIR [initdb args]
init_cluster() {
    local bin=$1 dir=$2
    shift 2
    cx_as_user "$bin/initdb" -D "$work/$dir" -A trust -U postgres -E UTF8 --locale=C --no-sync "$@" >"$work/initdb-$dir.log" 2>&1
}

# init_new DIR: a cluster of the new major
init_new() {
    # shellcheck disable=SC2086
    init_cluster "$new_bin" "$1" $new_initdb_opts
    [ -z "$new_conf" ] || echo "$new_conf" >>"$work/$1/postgresql.conf"
}

# state BINDIR PORT LABEL: test/upgrade/state.sql in both databases
state() {
    local bin=$1 port=$2 label=$3 db
    for db in cx_upgrade cx_old; do
        psql_at "$bin" "$port" "$db" -f "$fixture/state.sql" >"$work/state-$label-$db.txt" 2>&1
    done
}

# refuses_build BINDIR PORT LIBRARY LABEL: the server on PORT refuses to load
# LIBRARY (a compressx.so built for another major) and keeps running
refuses_build() {
    local out
    out=$(psql_at "$1" "$2" postgres -c "LOAD '$3'" 2>&1)
    echo "$out" | sed 's/^/    /'
    echo "$out" | grep -qE 'could not load library|incompatible library' &&
        nm -D --defined-only "$3" | grep -qw Pg_magic_func &&
        [ "$(psql_at "$1" "$2" postgres -Atc 'SELECT 1')" = 1 ]
    result "$4 and keeps running" $?
}

# --- the old cluster and its data
init_cluster "$old_bin" old
cat >>"$work/old/postgresql.conf" <<CONF
fsync = off
shared_buffers = 128MB
$old_conf
CONF
echo "old cluster: $(cx_as_user "$old_bin/pg_controldata" "$work/old" | grep -i 'checksum version')"
start_cluster "$old_bin" old "$port_old" || { cat "$work/old.log"; result "start the old cluster" 1; cx_summary_exit; }
psql_at "$old_bin" "$port_old" postgres -c 'CREATE DATABASE cx_upgrade' -c 'CREATE DATABASE cx_old'
psql_at "$old_bin" "$port_old" cx_upgrade -f "$fixture/fixture.sql" >"$work/fixture.log" 2>&1
result "fixture in the old cluster" $? "$work/fixture.log"
psql_at "$old_bin" "$port_old" cx_old -f "$fixture/fixture_old.sql" >"$work/fixture_old.log" 2>&1
result "fixture of the 0.1.0 database" $? "$work/fixture_old.log"

# A library built for another major is refused.  Each build uses symbols
# only its major has (the new major's vacuum_get_cutoffs, 15's
# pg_class_ownercheck), so dlopen() fails before PostgreSQL reads the
# magic block, which the library has (Pg_magic_func) for any load that gets
# that far.
refuses_build "$old_bin" "$port_old" "$new_lib/compressx.so" "the $old_major server refuses compressx.so built for $new_major"

state "$old_bin" "$port_old" before
grep -h ' rows=' "$work"/state-before-*.txt | sed 's/^/    /'
stop_cluster "$old_bin" old
cp -a "$work/old" "$work/old-link"

# upgrade MODE NEWDIR OLDDIR: --check, then the upgrade
upgrade() {
    local mode=$1 dir=$2 olddir=$3 rc
    init_new "$dir"
    echo "new cluster for --$mode: $(cx_as_user "$new_bin/pg_controldata" "$work/$dir" | grep -i 'checksum version')"
    (cd "$work" && cx_as_user "$new_bin/pg_upgrade" --check "--$mode" -b "$old_bin" -B "$new_bin" \
        -d "$work/$olddir" -D "$work/$dir" -p "$port_old" -P "$port_new" -s "$work" -U postgres) \
        >"$work/check-$mode.log" 2>&1
    rc=$?
    grep -q 'Clusters are compatible' "$work/check-$mode.log" || rc=1
    result "pg_upgrade --check --$mode $old_major -> $new_major" $rc "$work/check-$mode.log"
    (cd "$work" && cx_as_user "$new_bin/pg_upgrade" "--$mode" -b "$old_bin" -B "$new_bin" \
        -d "$work/$olddir" -D "$work/$dir" -p "$port_old" -P "$port_new" -s "$work" -U postgres) \
        >"$work/upgrade-$mode.log" 2>&1
    rc=$?
    result "pg_upgrade --$mode $old_major -> $new_major" $rc "$work/upgrade-$mode.log"
    [ $rc -eq 0 ] || return 1
    start_cluster "$new_bin" "$dir" "$port_new" || { cat "$work/$dir.log"; return 1; }
    state "$new_bin" "$port_new" "$mode"
    for db in cx_upgrade cx_old; do
        diff "$work/state-before-$db.txt" "$work/state-$mode-$db.txt" >"$work/state-$mode-$db.diff"
        rc=$?
        [ $rc -eq 0 ] || cat "$work/state-$mode-$db.diff"
        result "state of $db identical after --$mode ($(grep -c ' rows=' "$work/state-before-$db.txt") tables, $(grep -c . "$work/state-before-$db.txt") lines)" $rc
    done
    if [ "$mode" = copy ]; then
        refuses_build "$new_bin" "$port_new" "$old_lib/compressx.so" "the $new_major server refuses compressx.so built for $old_major"
    fi
    psql_at "$new_bin" "$port_new" cx_upgrade -f "$fixture/after.sql" >"$work/after-$mode.txt" 2>&1
    rc=$?
    sed 's/^/    /' "$work/after-$mode.txt"
    [ $rc -eq 0 ] && [ "$(grep -c ': ok$' "$work/after-$mode.txt")" -eq 13 ] && ! grep -q FAILED "$work/after-$mode.txt"
    result "writes, recompress_table, VACUUM FULL, dictionaries after --$mode (13 checks)" $?
    # the 0.1.0 database: update the extension, rows unchanged, writes work
    out=$(psql_at "$new_bin" "$port_new" cx_old -At -v ON_ERROR_STOP=1 \
        -c 'ALTER EXTENSION compressx UPDATE' \
        -c "SELECT extversion FROM pg_extension WHERE extname = 'compressx'" 2>&1)
    state "$new_bin" "$port_new" "$mode-updated"
    out="$out $(psql_at "$new_bin" "$port_new" cx_old -At -v ON_ERROR_STOP=1 \
        -c 'SET client_min_messages = warning' \
        -c "INSERT INTO notes SELECT i, repeat('after ' || i, 40) FROM generate_series(2001, 2050) i" \
        -c "SELECT count(*) FROM notes WHERE body = repeat('after ' || id, 40)" \
        -c "SELECT count(*) FROM compressx.verify('notes')" 2>&1 | tr '\n' ' ')"
    # the column_codecs view changed with 0.2.0, and 0.5.0 gives each
    # setting its column's label; everything else stays
    grep -v -e '^extension ' -e '^codec ' -e '^label ' "$work/state-before-cx_old.txt" >"$work/old-a.txt"
    grep -v -e '^extension ' -e '^codec ' -e '^label ' "$work/state-$mode-updated-cx_old.txt" >"$work/old-b.txt"
    diff "$work/old-a.txt" "$work/old-b.txt" && [ "$out" = "0.5.0 50 0 " ] &&
        [ "$(grep -c '^label ' "$work/state-$mode-updated-cx_old.txt")" -eq \
          "$(grep -c '^setting ' "$work/state-$mode-updated-cx_old.txt")" ] &&
        [ "$(grep -c '^setting ' "$work/state-$mode-updated-cx_old.txt")" -gt 0 ]
    result "ALTER EXTENSION compressx UPDATE 0.1.0 -> 0.5.0 after --$mode: rows unchanged, writes" $? "$out"
    stop_cluster "$new_bin" "$dir"
}

# --- compressx missing from the new installation: --check fails before
# anything is copied, naming the library
mkdir -p "$work/aside"
mv "$new_lib/compressx.so" "$new_ext"/compressx* "$work/aside/"
init_new new-missing
# what pg_upgrade would copy: files of databases (base/) and shared
# catalogs (global/); --check starts the new server, which writes its
# relation cache files (pg_internal.init) and postmaster.opts
files_of() { (cd "$work/new-missing" && find base global -type f ! -name pg_internal.init -printf '%p %s\n' | sort); }
files_of >"$work/missing-before.txt"
(cd "$work" && cx_as_user "$new_bin/pg_upgrade" --check -b "$old_bin" -B "$new_bin" \
    -d "$work/old" -D "$work/new-missing" -p "$port_old" -P "$port_new" -s "$work" -U postgres) \
    >"$work/check-missing.log" 2>&1
rc=$?
files_of >"$work/missing-after.txt"
sed 's/^/    /' "$work/check-missing.log" | grep -i -A3 'loadable\|librar'
libs=$(find "$work/new-missing" -name loadable_libraries.txt | head -n 1)
[ -n "$libs" ] && sed 's/^/    /' "$libs"
[ $rc -ne 0 ] && grep -q 'loadable libraries' "$work/check-missing.log" && [ -n "$libs" ] &&
    grep -q 'compressx' "$libs" && diff -q "$work/missing-before.txt" "$work/missing-after.txt" >/dev/null
result "pg_upgrade --check without compressx in $new_major fails naming it, nothing copied" $?
mv "$work/aside/compressx.so" "$new_lib/" && mv "$work/aside"/compressx* "$new_ext/"

upgrade copy new-copy old
upgrade link new-link old-link

if [ -n "$failures" ]; then
    echo "failed:$failures (logs in $work)"
elif [ -z "${CX_KEEP_WORKDIR:-}" ]; then
    trap - EXIT
    rm -rf "$work"
fi
cx_summary_exit
