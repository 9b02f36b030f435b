#!/usr/bin/env python3
"""Rows for test/bench/large_bench.sh: many copies of one of two small real
data sets, each copy a little different and in an order of its own, written
as COPY text (id, name, body, n) to stdout, one row at a time.

    large_data.py docs|json FIRST_COPY LAST_COPY FIRST_ID [DOCDIR|JSONFILE]

docs: PostgreSQL's HTML documentation, one file per row (about 1 170 files,
18 MB); each copy prepends a small HTML comment naming the copy.  json: the
JSON documents of test/bench/make_json.py (one per package of Debian's
package index, about 63 000 of 500 B - 1 kB; JSONFILE is its output); each
copy appends "+bN" (N the copy number) to the package's Version.

Copies are numbered; copy c lists the source values in a permutation seeded
with c, so the same source value comes back about one copy length later,
never in the rows next to it (a store that compresses thousands of rows
together must not find the previous copy's value in its window; compressing
each value alone, as heap and compressx do, does not care).  The same
arguments always give the same rows.  n is a small integer (id * 7 mod 100)
for the narrow-column scan."""
import os
import random
import sys

DOCDIR = "/usr/share/doc/postgresql-doc-15/html"


def copy_escape(s):
    # COPY text format: backslash first, then the characters that end a
    # field or a row
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
             .replace("\n", "\\n").replace("\r", "\\r"))


def load_docs(docdir):
    """[(name, escaped body)], in name order, .html files only, as bench.sh"""
    out = []
    for f in sorted(os.listdir(docdir)):
        if f.endswith(".html"):
            with open(os.path.join(docdir, f), encoding="utf-8", errors="replace") as fh:
                out.append((f, copy_escape(fh.read())))
    return out


def load_json(path):
    """[(package, text before the end of Version's value, text after)]: the
    lines of make_json.py are already escaped for COPY; the copy's suffix
    goes in between"""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            pkg = line.split('"Package": "', 1)[1].split('"', 1)[0] if '"Package": "' in line else "?"
            key = '"Version": "'
            i = line.find(key)
            if i < 0:
                # no Version: the suffix goes into a field of its own
                out.append((pkg, line[:-1] + ', "Copy": "', '"}'))
                continue
            j = line.index('"', i + len(key))
            out.append((pkg, line[:j], line[j:]))
    return out


def docs_header(c):
    return "<!-- compressx bench copy %d -->\\n" % c


def main():
    kind = sys.argv[1]
    first, last, next_id = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    src = sys.argv[5] if len(sys.argv) > 5 else None
    out = sys.stdout
    if kind == "docs":
        rows = load_docs(src or DOCDIR)
        for c in range(first, last + 1):
            order = list(range(len(rows)))
            random.Random(c).shuffle(order)
            head = docs_header(c)
            for i in order:
                name, body = rows[i]
                out.write("%d\t%d/%s\t%s%s\t%d\n" % (next_id, c, name, head, body, next_id * 7 % 100))
                next_id += 1
    elif kind == "json":
        rows = load_json(src)
        for c in range(first, last + 1):
            order = list(range(len(rows)))
            random.Random(c).shuffle(order)
            suffix = "+b%d" % c
            lines = []
            for i in order:
                pkg, head, tail = rows[i]
                lines.append("%d\t%s/%d\t%s%s%s\t%d\n" % (next_id, pkg, c, head, suffix, tail, next_id * 7 % 100))
                next_id += 1
            out.write("".join(lines))
    else:
        sys.exit("large_data.py: unknown data set %r (docs or json)" % kind)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        # a reader that stops early (head, a failed COPY) is not our error
        os._exit(1)
