#!/usr/bin/env bash
# Runs compressx's suite (pg_regress files, isolation specs, TAP tests, the
# server logs' check) on PostgreSQL 19.  19 is Debian's 19~rc1 from the
# experimental suite, whose binary packages need a newer C library than
# Debian 12's: they live in a sid root (debootstrap --variant=minbase sid;
# doc/testing.md says how to make one), entered with chroot.  This script,
# run as root on the host, copies this tree (without .git and vendor/) into
# the root's /tmp and runs test/run_version_suite.sh 19 there, which builds
# and installs compressx into the root's /usr/lib/postgresql/19 and runs
# the parts as user postgres.  Ends with the line "N passed, N failed";
# exits non-zero on failure.
#
#   test/run_pg19.sh
#
#   CX_SID19_ROOT         the sid root (default: sid19 in the cache,
#                         /opt/compressx-cache/sid19; test/sid19_root.sh
#                         makes it when it is not there)
#   CX_VERSION_TEST_PORT  port of its throwaway cluster (55419)
#   CX_ONLY_REGRESS, CX_ONLY_SPECS, CX_ONLY_TAP, CX_KEEP_WORKDIR
#                         as for test/run_version_suite.sh
set -u
umask 022
root=${CX_SID19_ROOT:-${CX_COMPILE_CACHE:-/opt/compressx-cache}/sid19}
cx_root=$(cd "$(dirname "$0")/.." && pwd)

fail() { echo "$1 ... FAILED"; echo "0 passed, 1 failed"; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "test/run_pg19.sh enters the sid root with chroot: run it as root"
# made once into the cache (test/sid19_root.sh, about 5 minutes)
[ -x "$root/usr/lib/postgresql/19/bin/pg_config" ] || bash "$cx_root/test/sid19_root.sh" "$root" ||
    fail "making the sid root $root (test/sid19_root.sh)"
[ -x "$root/usr/lib/postgresql/19/bin/postgres" ] && [ -x "$root/usr/lib/postgresql/19/bin/pg_config" ] ||
    fail "PostgreSQL 19 in the sid root $root (postgresql-19, postgresql-server-dev-19; see doc/testing.md)"

# what the root's processes need from the host: /proc (ps, pg_ctl), /dev
for m in proc dev dev/pts; do
    if ! mountpoint -q "$root/$m"; then
        mkdir -p "$root/$m"
        mount --bind "/$m" "$root/$m" || fail "mount --bind /$m $root/$m"
    fi
done
# the TAP tests need IPC::Run; lz4 and zstd for the build
missing=""
for p in libipc-run-perl liblz4-dev libzstd-dev make gcc; do
    chroot "$root" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing into $root:$missing"
    # the archive's Release files may be past their date (experimental)
    chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -q \
        -o Acquire::Check-Valid-Until=false install -y $missing >/dev/null ||
        fail "apt-get install$missing in $root"
fi

copy=$(mktemp -d "$root/tmp/compressx-pg19-tree.XXXXXX") || fail "mktemp in $root/tmp"
chmod 755 "$copy"
trap 'rm -rf "$copy"' EXIT
tar -C "$cx_root" --exclude=./.git --exclude=./vendor --exclude='*.o' --exclude='*.so' \
    --exclude='*.bc' --exclude=./results --exclude=./log --exclude='tmp_check' \
    -cf - . | tar -C "$copy" -xf - || fail "copy the tree into $copy"

chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    CX_IN_SID_ROOT=1 CX_VERSION_TEST_PORT="${CX_VERSION_TEST_PORT:-55419}" \
    ${CX_ONLY_REGRESS+CX_ONLY_REGRESS="$CX_ONLY_REGRESS"} \
    ${CX_ONLY_SPECS+CX_ONLY_SPECS="$CX_ONLY_SPECS"} \
    ${CX_ONLY_TAP+CX_ONLY_TAP="$CX_ONLY_TAP"} \
    ${CX_KEEP_WORKDIR+CX_KEEP_WORKDIR="$CX_KEEP_WORKDIR"} \
    bash "${copy#"$root"}/test/run_version_suite.sh" 19
