#!/usr/bin/env python3
"""Charts of bench.sh's results.csv: stored size against COPY load time per
codec and level, and read-every-value time per codec, for each dataset."""
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = [r for r in csv.DictReader(open(sys.argv[1])) if r.get("dataset")]
out = sys.argv[2]
datasets = sorted({r["dataset"] for r in rows})

fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4.5))
for ax, ds in zip(axes, datasets):
    for i, r in enumerate(r for r in rows if r["dataset"] == ds):
        ax.scatter(float(r["copy_ms"]), float(r["table_mb"]))
        # alternate label sides, so that neighbouring points stay readable
        ax.annotate(r["label"], (float(r["copy_ms"]), float(r["table_mb"])), fontsize=8,
                    xytext=(5, 5 if i % 2 else -11), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("COPY load time, ms (log)")
    ax.set_ylabel("table size (heap + TOAST), MB")
    ax.set_title(ds)
fig.tight_layout()
fig.savefig(out + "/size_vs_load.png", dpi=100)

fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4.5))
for ax, ds in zip(axes, datasets):
    sel = [r for r in rows if r["dataset"] == ds]
    ax.barh([r["label"] for r in sel], [float(r["read_ms"]) for r in sel])
    ax.set_xlabel("reading every value, ms (median)")
    ax.set_title(ds)
fig.tight_layout()
fig.savefig(out + "/read_time.png", dpi=100)
