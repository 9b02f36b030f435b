#!/usr/bin/env bash
# Shared helpers of compressx's scripts: install dependencies, build and
# install the extension, run commands as an unprivileged user, and start or
# stop a throwaway PostgreSQL cluster.  Sourced, not run.

PG_MAJOR=${PG_MAJOR:-15}
PGBIN=/usr/lib/postgresql/$PG_MAJOR/bin
PGXS_DIR=/usr/lib/postgresql/$PG_MAJOR/lib/pgxs
export PATH="$PGBIN:$PATH"

cx_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

cx_log() { printf '== %s\n' "$*" >&2; }

cx_sudo() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

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

cx_build_install() {
    cx_log "building and installing compressx"
    make -C "$cx_root" -s PG_CONFIG="$PGBIN/pg_config" >/dev/null
    cx_sudo make -C "$cx_root" -s PG_CONFIG="$PGBIN/pg_config" install >/dev/null
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

# cx_start_cluster DIR PORT: initdb in DIR/data, socket in DIR, start.
cx_start_cluster() {
    local dir=$1 port=$2
    cx_as_user initdb -D "$dir/data" -A trust -U postgres --no-sync >/dev/null
    cat >>"$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
fsync = off
shared_buffers = 256MB
max_wal_size = 4GB
CONF
    cx_as_user pg_ctl -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
    export PGHOST=$dir PGPORT=$port PGUSER=postgres
}

cx_stop_cluster() {
    local dir=$1
    cx_as_user pg_ctl -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}
