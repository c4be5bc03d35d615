#!/usr/bin/env python3
"""Plots of tutorials/bench CSV files (make plots).

    python3 tutorials/plots.py OUTDIR FILE.csv [FILE.csv ...]

For every CSV: OUTDIR/<name>-gflops.png, a bar chart of GFLOP/s per matrix and type, and
OUTDIR/<name>-roofline.png, the achieved bandwidth (modelled bytes / median time) per matrix and type against the
measured bandwidth (STREAM triad on the CPU, the column stream_gbs; or the device copy bandwidth given with
--peak-gbs for GPU runs, where bench does not measure it).
"""
import argparse
import csv
import os
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append(r)
    return rows


def grouped(rows, key):
    """{matrix: {type: value}} keeping the first appearance order; the last row wins for repeated pairs"""
    out = OrderedDict()
    types = []
    for r in rows:
        m, t = r["matrix"], r["type"]
        if r["ranks"] != "1":
            t = f'{t} ({r["ranks"]} ranks)'
        elif r.get("threads") not in (None, "", "1") and t.startswith("csrk") and "cuda" not in t:
            t = f'{t} ({r["threads"]} thr)'
        if not r.get(key):
            continue
        out.setdefault(m, OrderedDict())[t] = float(r[key])
        if t not in types:
            types.append(t)
    return out, types


def bars(ax, data, types, ylabel):
    matrices = list(data)
    width = 0.8 / max(len(types), 1)
    for i, t in enumerate(types):
        xs = [j + i * width for j in range(len(matrices))]
        ys = [data[m].get(t, 0.0) for m in matrices]
        ax.bar(xs, ys, width, label=t)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(matrices))])
    ax.set_xticklabels(matrices, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--peak-gbs", type=float, default=None, help="bandwidth to draw when the CSV has no STREAM column values")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    for path in a.csv:
        rows = read(path)
        if not rows:
            continue
        name = os.path.splitext(os.path.basename(path))[0]
        gf, types = grouped(rows, "gflops")
        fig, ax = plt.subplots(figsize=(8, 4))
        bars(ax, gf, types, "GFLOP/s (2 flops per nonzero)")
        ax.set_title(f"MatMult, {name}")
        fig.tight_layout()
        fig.savefig(os.path.join(a.outdir, f"{name}-gflops.png"), dpi=80)
        plt.close(fig)

        gbs, types = grouped(rows, "gbs")
        fig, ax = plt.subplots(figsize=(8, 4))
        bars(ax, gbs, types, "GB/s (12 B/nonzero + 20 B/row) / median time")
        streams = [float(r["stream_gbs"]) for r in rows if r.get("stream_gbs")]
        peak = max(streams) if streams else a.peak_gbs
        if peak:
            ax.axhline(peak, color="k", linestyle="--", linewidth=1)
            ax.text(0, peak * 1.01, f"measured bandwidth {peak:.0f} GB/s", fontsize=7)
        ax.set_title(f"Roofline: achieved bandwidth, {name}")
        fig.tight_layout()
        fig.savefig(os.path.join(a.outdir, f"{name}-roofline.png"), dpi=80)
        plt.close(fig)
        print(f"{path}: {name}-gflops.png, {name}-roofline.png")


if __name__ == "__main__":
    main()
