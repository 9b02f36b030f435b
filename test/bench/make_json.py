#!/usr/bin/env python3
"""Small JSON documents from real data: one document per package stanza of
dpkg's status file (/var/lib/dpkg/status), a few hundred bytes each.
Writes one JSON document per line (COPY text format, escaped) to stdout."""
import json
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "/var/lib/dpkg/status"
stanza, docs = {}, []
key = None
with open(path, encoding="utf-8", errors="replace") as f:
    for line in f:
        line = line.rstrip("\n")
        if not line:
            if stanza:
                docs.append(stanza)
            stanza, key = {}, None
        elif line[0] in " \t" and key:
            stanza[key] += "\n" + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            stanza[key] = value.strip()
if stanza:
    docs.append(stanza)

for d in docs:
    doc = {k: d[k] for k in ("Package", "Version", "Architecture", "Maintainer",
                             "Installed-Size", "Depends", "Section", "Priority",
                             "Description", "Homepage") if k in d}
    if "Description" in doc:
        doc["Description"] = doc["Description"][:600]
    text = json.dumps(doc, ensure_ascii=False)
    print(text.replace("\\", "\\\\"))
