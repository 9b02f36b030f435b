#!/usr/bin/env bash
# Checks the layer rule of src/ (written down in src/compressx.c): a file
# includes compressx headers only from its own layer or the layers below it.
#   storage (0) < catalog (1) < am (2) < citus (3) < sql, logical (4)
#     < online, dictionaries (5) < src/compressx.c (6)
# The feature folders (citus, online, dictionaries) stand above the layers
# they use.  compat.h, at the top of src/, serves every layer.  Also checks that no two
# files of one layer include each other's headers in a circle (a .c file's
# own header excepted).  Prints each violation; ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../src" || exit 2
rank() {
    case "$1" in
        storage/*) echo 0 ;; catalog/*) echo 1 ;; am/*) echo 2 ;; citus/*) echo 3 ;;
        sql/*|logical/*) echo 4 ;; online/*|dictionaries/*) echo 5 ;;
        compat.h) echo -1 ;; *) echo 6 ;;
    esac
}
bad=0
files=0
for f in $(find . -name '*.[ch]' | sed 's|^\./||' | sort); do
    files=$((files + 1))
    r=$(rank "$f")
    for h in $(sed -n 's/^#include "\(\(storage\|catalog\|am\|citus\|sql\|logical\|online\|dictionaries\)\/[a-z_]*\.h\|compat\.h\)"$/\1/p' "$f"); do
        [ -f "$h" ] || continue     # one of PostgreSQL's own headers
        hr=$(rank "$h")
        if [ "$hr" -gt "$r" ]; then
            echo "layer violation: $f (layer $r) includes $h (layer $hr)"
            bad=$((bad + 1))
        fi
    done
done
# circles within a layer: header A's .c includes header B while B's .c includes A
for f in $(find . -name '*.c' | sed 's|^\./||'); do
    own=${f%.c}.h
    for h in $(sed -n 's/^#include "\(\(storage\|catalog\|am\|citus\|sql\|logical\|online\|dictionaries\)\/[a-z_]*\.h\)"$/\1/p' "$f"); do
        [ "$h" = "$own" ] && continue
        other=${h%.h}.c
        [ -f "$other" ] || continue
        if grep -q "^#include \"$own\"" "$other" 2>/dev/null && [ "$other" \< "$f" ]; then
            echo "include circle: $f <-> $other"
            bad=$((bad + 1))
        fi
    done
done
echo "layer check: $files files"
if [ "$bad" -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
[ "$bad" -eq 0 ]
