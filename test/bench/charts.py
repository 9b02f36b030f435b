#!/usr/bin/env python3
"""Charts of bench.sh's results.csv, one panel per dataset: stored size
against COPY load time per variant (size_vs_load.png), the time to read
every value per variant (read_time.png), and stored size against that read
time for every variant, the columnar peer among them (size_vs_read.png).
Points are coloured by access method."""
import csv
import math
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = [r for r in csv.DictReader(open(sys.argv[1])) if r.get("dataset")]
out = sys.argv[2]
datasets = sorted({r["dataset"] for r in rows})
# an access method's colour; a results.csv from before the am column has none
AM_COLOURS = {"heap": "tab:gray", "compressx": "tab:blue", "columnar": "tab:orange"}


def panels():
    # squeeze=False: a list of axes even for one dataset
    fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4.5), squeeze=False)
    return fig, axes[0]


def scatter_labelled(ax, sel, x, y, log_x=False):
    """Points (x, y) of the rows sel, each named by its variant and coloured
    by its access method."""
    seen = set()
    pts = [(float(r[x]), float(r[y])) for r in sel]
    xs = [math.log10(px) if log_x else px for px, _ in pts]
    xr = (max(xs) - min(xs)) or 1
    yr = (max(py for _, py in pts) - min(py for _, py in pts)) or 1
    for i, r in enumerate(sel):
        # variants that land (almost) on an earlier point get their label
        # stacked under that point's, not over it
        near = sum(1 for j in range(i) if abs(xs[j] - xs[i]) < 0.03 * xr
                   and abs(pts[j][1] - pts[i][1]) < 0.04 * yr)
        am = r.get("am") or ""
        kw = {"color": AM_COLOURS.get(am, "tab:green")}
        if am not in seen:
            kw["label"] = am or "?"
            seen.add(am)
        ax.scatter(pts[i][0], pts[i][1], **kw)
        # else alternate label sides, so that neighbouring points stay readable
        dy = -11 * (near + 1) if near else (5 if i % 2 else -11)
        ax.annotate(r["label"], pts[i], fontsize=8, xytext=(5, dy), textcoords="offset points")


fig, axes = panels()
for ax, ds in zip(axes, datasets):
    scatter_labelled(ax, [r for r in rows if r["dataset"] == ds], "copy_ms", "table_mb", log_x=True)
    ax.set_xscale("log")
    ax.legend(fontsize=8)
    ax.set_xlabel("COPY load time, ms (log)")
    ax.set_ylabel("table size (pg_table_size), MB")
    ax.set_title(ds)
fig.tight_layout()
fig.savefig(out + "/size_vs_load.png", dpi=100)

fig, axes = panels()
for ax, ds in zip(axes, datasets):
    sel = [r for r in rows if r["dataset"] == ds]
    ax.barh([r["label"] for r in sel], [float(r["read_ms"]) for r in sel])
    ax.set_xlabel("reading every value, ms (median)")
    ax.set_title(ds)
fig.tight_layout()
fig.savefig(out + "/read_time.png", dpi=100)

fig, axes = panels()
for ax, ds in zip(axes, datasets):
    scatter_labelled(ax, [r for r in rows if r["dataset"] == ds], "read_ms", "table_mb")
    ax.set_xlabel("reading every value, ms (median)")
    ax.set_ylabel("table size (pg_table_size), MB")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    ax.set_title(ds + ": size vs read time with the columnar peer")
fig.tight_layout()
fig.savefig(out + "/size_vs_read.png", dpi=100)
