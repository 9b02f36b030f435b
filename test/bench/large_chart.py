#!/usr/bin/env python3
"""Chart of large_bench.sh's CSV: how the cold cost grows from 1x to 2x to
4x, per variant and data set: reading every value (s) and one primary-key
lookup (ms), against the raw size of the table.

    large_chart.py REPORT.csv OUT.png TITLE"""
import csv
import statistics
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

src, out, title = sys.argv[1], sys.argv[2], sys.argv[3]
rows = [r for r in csv.DictReader(open(src)) if r.get("dataset") and r["temp"] == "cold"]
datasets = sorted({r["dataset"] for r in rows})
labels = sorted({r["label"] for r in rows}, key=lambda lb: int(next(r["ord"] for r in rows if r["label"] == lb)))

# (dataset, what, label) -> [(raw GiB, median per-op time)]
series = {}
for ds in datasets:
    for what in ("readall", "lookups"):
        for lb in labels:
            pts = []
            for mult in sorted({int(r["mult"]) for r in rows if r["dataset"] == ds}):
                sel = [r for r in rows if r["dataset"] == ds and r["what"] == what and r["label"] == lb
                       and int(r["mult"]) == mult]
                if sel:
                    per_op = statistics.median(float(r["ms"]) / int(r["ops"]) for r in sel)
                    pts.append((float(sel[0]["raw_gib"]), per_op / 1000 if what == "readall" else per_op, mult))
            series[(ds, what, lb)] = pts

fig, axes = plt.subplots(len(datasets), 2, figsize=(12, 4.2 * len(datasets)), squeeze=False)
for row, ds in enumerate(datasets):
    for col, (what, ylabel) in enumerate((("readall", "read every value, cold, s"),
                                          ("lookups", "one primary-key lookup, cold, ms (log)"))):
        ax = axes[row][col]
        for lb in labels:
            pts = series[(ds, what, lb)]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=lb)
        xs = sorted({p[0] for (d, w, lb), ps in series.items() if d == ds and w == what for p in ps})
        mults = sorted({p[2] for (d, w, lb), ps in series.items() if d == ds and w == what for p in ps})
        ax.set_xticks(xs)
        ax.set_xticklabels(["%sx\n%.2g GiB" % (m, x) for m, x in zip(mults, xs)])
        if what == "lookups":
            # columnar's lookups cost a hundred times the others'
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.set_xlabel("raw size of the table")
        ax.set_ylabel(ylabel)
        ax.set_title(ds)
        ax.grid(alpha=0.3)
        if row == 0 and col == 0:
            ax.legend(fontsize=8)
fig.suptitle(title)
fig.tight_layout()
fig.savefig(out, dpi=100)
