#!/usr/bin/env python3
"""Print two bench.sh runs side by side as a Markdown table.

    python3 test/bench/side_by_side.py bench-results/pg15 bench-results/pg18

Each directory holds a results.md written by test/bench/bench.sh (one run
each: its ratios are against heap pglz of the same run).  Prints, per data
set and variant, the value ratio, table MB, COPY x and read-all x of each
run next to each other.
"""
import sys


def load(d):
    rows = {}
    with open(d.rstrip('/') + '/results.md') as f:
        lines = [l for l in f if l.startswith('|')]
    head = [c.strip() for c in lines[0].strip('|\n').split('|')]
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip('|\n').split('|')]
        rec = dict(zip(head, cells))
        rows[(rec['dataset'], rec['variant'])] = rec
    return rows


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = sys.argv[1], sys.argv[2]
    ra, rb = load(a), load(b)
    na, nb = a.rstrip('/').split('/')[-1], b.rstrip('/').split('/')[-1]
    cols = ['value ratio', 'table MB', 'COPY x', 'read all x']
    print('| dataset | variant | ' + ' | '.join(f'{c} {n}' for c in cols for n in (na, nb)) + ' |')
    print('|---|---|' + '---|' * (2 * len(cols)))
    for key in ra:
        if key not in rb:
            continue
        cells = [ra[key].get(c, '') if n == na else rb[key].get(c, '') for c in cols for n in (na, nb)]
        print(f'| {key[0]} | {key[1]} | ' + ' | '.join(cells) + ' |')


if __name__ == '__main__':
    main()
