#!/usr/bin/env python3
"""Chart of online_bench.sh's results as one SVG (standard library only).

    online_chart.py RESULT.csv TIMELINE.csv OUT.svg

Top: client tps during each rewrite as % of the baseline (goal line at
70 %), and the longest client statement during it (log scale, goal line
at 1 s), per table case and method.  Below: client transactions per
second of each run, one panel per table case and load, x in seconds from
the start of the rewrite; a tick in each method's colour marks where its
rewrite ended."""
import csv
import math
import sys
from xml.sax.saxutils import escape

COLORS = {"baseline": "#8c8c8c", "online": "#1f77b4", "offline": "#d62728", "pg_repack": "#2ca02c"}
CASE_LABEL = {"heap": "heap pglz \u2192 lz4", "compressx": "compressx zstd-3 \u2192 lz4"}
FONT = 'font-family="sans-serif"'


def text(x, y, s, size=11, anchor="start", weight="normal", color="#222"):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{color}" {FONT}>{escape(s)}</text>')


def line(x1, y1, x2, y2, color="#222", width=1, dash=None):
    d = f' stroke-dasharray="{dash}"' if dash else ""
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" stroke-width="{width}"{d}/>'


def nice_step(span, ticks=8):
    """1, 2 or 5 times a power of ten, giving at most about ticks steps."""
    raw = span / ticks
    p = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * p >= raw:
            return m * p
    return 10 * p


def group(r):
    load = "unthrottled" if r.get("rate", "0") in ("0", "") else f"paced, {r['rate']} tps"
    return f"{CASE_LABEL.get(r['tcase'], r['tcase'])}, {load}"


def bars(out, x0, y0, w, rows, value, label, scale, goal, goal_label, title):
    """Horizontal bars, one per (case, load, method) row but the baselines."""
    out.append(text(x0, y0 - 8, title, 13, weight="bold"))
    lab_w, bh, gap = 190, 16, 5
    y = y0 + 6
    px = lambda v: x0 + lab_w + scale(v) * (w - lab_w - 60)
    top = y
    last_case = None
    for r in rows:
        if group(r) != last_case:
            out.append(text(x0, y + 11, group(r), 11, weight="bold"))
            y += bh + gap
            last_case = group(r)
        v = value(r)
        out.append(text(x0 + lab_w - 6, y + 12, r["method"], 11, anchor="end"))
        x1 = px(v)
        out.append(f'<rect x="{x0 + lab_w:.1f}" y="{y:.1f}" width="{max(x1 - x0 - lab_w, 1):.1f}" '
                   f'height="{bh}" fill="{COLORS.get(r["method"], "#555")}"/>')
        out.append(text(x1 + 4, y + 12, label(v), 10))
        y += bh + gap
    gx = px(goal)
    out.append(line(gx, top - 4, gx, y, "#000", 1, "4,3"))
    out.append(text(gx, y + 12, goal_label, 10, anchor="middle"))
    out.append(line(x0 + lab_w, top - 4, x0 + lab_w, y))
    return y + 20


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    res = [r for r in csv.DictReader(open(sys.argv[1])) if r.get("tcase")]
    tl = [r for r in csv.DictReader(open(sys.argv[2])) if r.get("tcase")]
    groups = []
    for r in res:
        if (r["tcase"], r["load"]) not in groups:
            groups.append((r["tcase"], r["load"]))
    label_of = {(r["tcase"], r["load"]): group(r) for r in res}
    rewrites = [r for r in res if r["method"] != "baseline"]

    W = 1000
    out = []
    out.append(text(20, 24, "Rewriting a table under load: recompress_online vs recompress_table vs pg_repack", 15, weight="bold"))
    out.append(text(20, 42, "2 pgbench clients (update / insert / select by id), unthrottled and paced; "
                    "figures over each rewrite's wall time (bench-results/online)", 11, color="#555"))

    # top: tps % and longest statement
    maxpct = max([100.0] + [float(r["tps_frac"]) * 100 for r in rewrites]) * 1.08
    y1 = bars(out, 20, 75, W / 2 - 30, rewrites, lambda r: float(r["tps_frac"]) * 100,
              lambda v: f"{v:.0f} %", lambda v: v / maxpct, 70, "goal 70 %",
              "client tps during the rewrite, % of baseline")
    lats = [float(r["max_lat_s"]) for r in rewrites] + [1.0]
    lo = 10 ** math.floor(math.log10(max(min(lats), 1e-3)))
    hi = 10 ** math.ceil(math.log10(max(lats) * 1.5))
    lscale = lambda v: (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    y2 = bars(out, W / 2 + 10, 75, W / 2 - 30, rewrites, lambda r: float(r["max_lat_s"]),
              lambda v: f"{v:.2f} s" if v < 10 else f"{v:.0f} s", lscale, 1.0, "goal 1 s",
              "longest client statement, s (log scale)")
    y = max(y1, y2) + 10

    # timelines
    ph, pw, px0 = 150, W - 110, 70
    for g in groups:
        rows = [r for r in tl if (r["tcase"], r["load"]) == g]
        if not rows:
            continue
        secs = [int(r["sec"]) for r in rows]
        xmin, xmax = min(secs), max(secs) + 1
        ymax = max(int(r["xacts"]) for r in rows) * 1.1 or 1
        X = lambda s: px0 + (s - xmin) / (xmax - xmin) * pw
        Y = lambda v: y + 20 + ph - v / ymax * ph
        out.append(text(20, y + 10, f"client tps, {label_of[g]}", 13, weight="bold"))
        out.append(line(px0, y + 20 + ph, px0 + pw, y + 20 + ph))
        out.append(line(px0, y + 20, px0, y + 20 + ph))
        step = nice_step(xmax - xmin, 12)
        s = math.ceil(xmin / step) * step
        while s <= xmax:
            out.append(line(X(s), y + 20 + ph, X(s), y + 24 + ph))
            out.append(text(X(s), y + 36 + ph, f"{s:g}", 10, anchor="middle"))
            s += step
        out.append(line(X(0), y + 20, X(0), y + 20 + ph, "#999", 1, "3,3"))
        ystep = nice_step(ymax, 4)
        v = 0
        while v <= ymax:
            out.append(line(px0 - 4, Y(v), px0, Y(v)))
            out.append(text(px0 - 6, Y(v) + 3, f"{v:g}", 10, anchor="end"))
            v += ystep
        methods = []
        for r in rows:
            if r["method"] not in methods:
                methods.append(r["method"])
        for i, m in enumerate(methods):
            pts = sorted((int(r["sec"]), int(r["xacts"]), float(r["secs"])) for r in rows if r["method"] == m)
            path = " ".join(f"{X(s + 0.5):.1f},{Y(v):.1f}" for s, v, _ in pts)
            col = COLORS.get(m, "#555")
            out.append(f'<polyline points="{path}" fill="none" stroke="{col}" stroke-width="1.3"/>')
            if m != "baseline":
                end = pts[0][2]
                out.append(line(X(end), y + 20, X(end), y + 32, col, 2))
            lx = px0 + pw - 90 * (len(methods) - i)
            out.append(f'<rect x="{lx}" y="{y + 1}" width="10" height="10" fill="{col}"/>')
            out.append(text(lx + 14, y + 10, m, 10))
        out.append(text(px0 + pw, y + ph + 50, "s from the start of the rewrite (tick on top: where it ended)",
                        10, anchor="end", color="#555"))
        y += ph + 70

    H = y
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H:.0f}" viewBox="0 0 {W} {H:.0f}">',
           f'<rect width="{W}" height="{H:.0f}" fill="#fff"/>'] + out + ["</svg>"]
    with open(sys.argv[3], "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
