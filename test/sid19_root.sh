#!/usr/bin/env bash
# Makes the sid root in which the suite runs PostgreSQL 19 (19~rc1, from
# Debian's experimental suite), once, into the cache: Debian 12's C library
# is too old for 19's binary packages, and the source package's files are
# not reachable from here.  Run as root.  About 5 minutes and 400 MB.
#
#   test/sid19_root.sh [ROOT]     default ROOT: $CX_SID19_ROOT, else
#                                 /opt/compressx-cache/sid19
#
# Steps: debootstrap --variant=minbase sid ROOT (from the Debian archive
# apt uses here); sid and experimental in its sources.list; apt-get update
# with Acquire::Check-Valid-Until=false (experimental's Release files may
# be past their date); postgresql-19, postgresql-client-19,
# postgresql-server-dev-19, libpq-dev, libpq5 from experimental, liblz4-dev,
# libzstd-dev, make, gcc, libipc-run-perl; /proc, /dev and /dev/pts bound
# from the host (postgresql-common's scripts and pg_ctl need them).  A root
# that has PostgreSQL 19's pg_config is taken as it is.  The root is made
# under ROOT.partial and renamed when complete, so a failed or interrupted
# run leaves no root half made.
set -euo pipefail
root=${1:-${CX_SID19_ROOT:-/opt/compressx-cache/sid19}}
mirror=${CX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
apt_opts=(-o Acquire::Check-Valid-Until=false -o Dpkg::Use-Pty=0 -q)

bind_mounts() {
    local r=$1 m
    for m in proc dev dev/pts; do
        mkdir -p "$r/$m"
        mountpoint -q "$r/$m" || mount --bind "/$m" "$r/$m"
    done
}
unbind_mounts() {
    local r=$1 m
    for m in dev/pts dev proc; do
        mountpoint -q "$r/$m" && umount "$r/$m" || true
    done
}

if [ -x "$root/usr/lib/postgresql/19/bin/pg_config" ]; then
    bind_mounts "$root"
    echo "sid root with PostgreSQL 19: $root ($(chroot "$root" /usr/lib/postgresql/19/bin/pg_config --version))"
    exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "test/sid19_root.sh: run as root (debootstrap, chroot)" >&2; exit 1; }

if ! command -v debootstrap >/dev/null; then
    env DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
fi
partial=$root.partial
if [ -d "$partial" ]; then
    unbind_mounts "$partial"
    rm -rf "$partial"
fi
mkdir -p "$(dirname "$root")"
echo "debootstrap --variant=minbase sid $partial $mirror"
debootstrap --variant=minbase sid "$partial" "$mirror" >"$partial.log" 2>&1 ||
    { tail -20 "$partial.log"; exit 1; }
cat >"$partial/etc/apt/sources.list" <<EOF
deb $mirror sid main
deb $mirror experimental main
EOF
cp /etc/resolv.conf "$partial/etc/resolv.conf" 2>/dev/null || true
# no service starts inside the root (the package's own cluster included)
printf '#!/bin/sh\nexit 101\n' >"$partial/usr/sbin/policy-rc.d"
chmod 755 "$partial/usr/sbin/policy-rc.d"
bind_mounts "$partial"
trap 'unbind_mounts "$partial"' EXIT
echo "apt-get install postgresql-19 (experimental) and what the suite needs, in $partial"
chroot "$partial" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update >>"$partial.log" 2>&1
chroot "$partial" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y \
    postgresql-19/experimental postgresql-client-19/experimental \
    postgresql-server-dev-19/experimental libpq-dev/experimental libpq5/experimental \
    liblz4-dev libzstd-dev make gcc libipc-run-perl >>"$partial.log" 2>&1 ||
    { tail -20 "$partial.log"; exit 1; }
[ -x "$partial/usr/lib/postgresql/19/bin/pg_config" ] || { echo "no pg_config of 19 in $partial" >&2; exit 1; }
unbind_mounts "$partial"
trap - EXIT
mv "$partial" "$root"
mv "$partial.log" "$root.log"
bind_mounts "$root"
echo "sid root with PostgreSQL 19: $root ($(chroot "$root" /usr/lib/postgresql/19/bin/pg_config --version))"
