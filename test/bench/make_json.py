#!/usr/bin/env python3
"""Small JSON documents from real data: one document per package stanza of
Debian's package index (bookworm main, as apt keeps it in /var/lib/apt/lists,
about 63 000 packages), every field kept, a few hundred bytes each.  Falls
back to dpkg's status file when apt has no index.

    make_json.py [MAX_DOCS]

Writes one JSON document per line (COPY text format, escaped) to stdout."""
import glob
import json
import subprocess
import sys

limit = int(sys.argv[1]) if len(sys.argv) > 1 else 0


def stanzas(lines):
    stanza, key = {}, None
    for line in lines:
        line = line.rstrip("\n")
        if not line:
            if stanza:
                yield stanza
            stanza, key = {}, None
        elif line[0] in " \t" and key:
            stanza[key] += "\n" + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            stanza[key] = value.strip()
    if stanza:
        yield stanza


def source_lines():
    lists = sorted(glob.glob("/var/lib/apt/lists/*_dists_bookworm_main_binary-*_Packages*"))
    if lists:
        # apt-helper decompresses whatever format apt stored the list in
        out = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", lists[0]],
                             check=True, capture_output=True, text=True, errors="replace")
        return out.stdout.splitlines(True)
    with open("/var/lib/dpkg/status", encoding="utf-8", errors="replace") as f:
        return f.readlines()


count = 0
for d in stanzas(source_lines()):
    print(json.dumps(d, ensure_ascii=False).replace("\\", "\\\\"))
    count += 1
    if limit and count >= limit:
        break
