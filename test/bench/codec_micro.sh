#!/usr/bin/env bash
# Per-value cost of zstd and lz4 with a dictionary on the benchmark's small
# JSON documents, outside PostgreSQL (test/bench/PROFILES.md).  About a
# minute on 2 cores.
#
#   bash test/bench/codec_micro.sh
set -eu
. "$(dirname "$0")/../lib.sh"
cx_install_deps
work=$(mktemp -d "${TMPDIR:-/tmp}/compressx-micro.XXXXXX")
trap 'rm -rf "$work"' EXIT
ls /var/lib/apt/lists/*_dists_bookworm_main_binary-*_Packages* >/dev/null 2>&1 ||
    cx_sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
# the documents as COPY would read them: one per line, backslashes escaped
python3 "$cx_root/test/bench/make_json.py" 0 | python3 -c '
import struct, sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    v = line.rstrip(b"\n").replace(b"\\\\", b"\\")
    out.write(struct.pack("<I", len(v)) + v)
' > "$work/values.bin"
gcc -O2 -o "$work/codec_micro" "$cx_root/test/bench/codec_micro.c" -lzstd -llz4
"$work/codec_micro" "$work/values.bin"
