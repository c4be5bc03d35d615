#!/usr/bin/env python3
"""Charts of the CSV files of make bench (tutorials/bench -o) and make apps (tutorials/apps.sh), for make plots.

    python3 tutorials/plots.py OUTDIR FILE.csv [FILE.csv ...] [--peak-gbs GB/s]

A bench CSV gives OUTDIR/<name>-gflops.png (MatMult GFLOP/s per matrix and type) and OUTDIR/<name>-roofline.png (the
bandwidth a product would need under the CSR model, 12 bytes per nonzero + 20 per row, divided by its median time,
against the measured STREAM triad, or --peak-gbs for GPU runs where bench does not measure it). An apps CSV gives
OUTDIR/<name>-speedup.png: the solve time of the reference type (the first, aij) over that of each type, per
application (above 1: faster than the reference).
Every series is labelled with its MPI ranks and OpenMP threads per rank.
"""
import argparse
import csv
import os
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "legend.fontsize": 8})


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def plural(n, word):
    return f"{n} {word}" + ("" if str(n) == "1" else "s")


def series_name(r):
    """'csrk, 2 ranks x 1 thread'; GPU types by their ranks only"""
    t = r["type"]
    if "cuda" in t or "cusparse" in t or "hip" in t or "kokkos" in t:
        return f"{t}, {plural(r['ranks'], 'rank')}"
    return f"{t}, {plural(r['ranks'], 'rank')} x {plural(r.get('threads') or 1, 'thread')}"


def grouped(rows, key, group):
    """{group value: {series: value}} in order of first appearance (the last row wins for a repeated pair)"""
    out, series = OrderedDict(), []
    for r in rows:
        if not r.get(key):
            continue
        s = series_name(r)
        out.setdefault(r[group], OrderedDict())[s] = float(r[key])
        if s not in series:
            series.append(s)
    return out, series


def bars(ax, data, series, ylabel, label_values=False):
    groups = list(data)
    width = 0.8 / max(len(series), 1)
    drawn = {}
    for i, s in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(groups))]
        ys = [data[g].get(s, 0.0) for g in groups]
        drawn[s] = ax.bar(xs, ys, width, label=s)
        if label_values:
            for x, y in zip(xs, ys):
                if y:
                    ax.text(x, y, f"{y:.2f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    return drawn


def bench_charts(rows, name, outdir, peak_gbs):
    gf, series = grouped(rows, "gflops", "matrix")
    fig, ax = plt.subplots(figsize=(9, 4.5))
    bars(ax, gf, series, "GFLOP/s (2 flops per nonzero)")
    ax.set_title(f"MatMult rate, {name} (median of the timed products)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, f"{name}-gflops.png"), dpi=100)
    plt.close(fig)

    gbs, series = grouped(rows, "gbs", "matrix")
    fig, ax = plt.subplots(figsize=(9, 5))
    bars(ax, gbs, series, "modelled GB/s = (12 B/nonzero + 20 B/row) / time")
    streams = [(float(r["stream_gbs"]), r) for r in rows if r.get("stream_gbs")]
    if streams:
        peak, r = max(streams, key=lambda p: p[0])
        roof = f"STREAM triad, {plural(r['ranks'], 'rank')} x {plural(r.get('threads') or 1, 'thread')}: {peak:.0f} GB/s"
    elif peak_gbs:
        peak, roof = peak_gbs, f"device copy bandwidth: {peak_gbs:.0f} GB/s"
    else:
        peak = None
    if peak:
        ax.axhline(peak, color="k", linestyle="--", linewidth=1.2, label=roof)
    ax.set_title(f"Roofline: the bandwidth of the CSR model at the measured time, {name}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.text(0.01, 0.01,
             "Bars above the dashed roof are not faster memory: the matrix or the vectors stayed in cache between products,\n"
             "or the type moves fewer bytes than the model (csrk: 16-bit column offsets, 10 B/nonzero; row patterns, 8 B/nonzero).",
             fontsize=8, va="bottom")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(os.path.join(outdir, f"{name}-roofline.png"), dpi=100)
    plt.close(fig)
    return [f"{name}-gflops.png", f"{name}-roofline.png"]


def apps_chart(rows, name, outdir):
    data, series = OrderedDict(), []
    for r in rows:
        if not r.get("speedup_vs_ref"):
            continue
        g = f"{r['app']} ({r['event']})"
        s = series_name(r)
        data.setdefault(g, OrderedDict())[s] = float(r["speedup_vs_ref"])
        if s not in series:
            series.append(s)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ref = rows[0].get("ref", "aij")
    bars(ax, data, series, f"{ref}'s solve time / this type's (above 1: faster)", label_values=True)
    ax.axhline(1.0, color="k", linewidth=1)
    where = rows[0].get("machine", "")
    when = rows[0].get("date", "")
    ax.set_title(f"End-to-end solve speedup over {ref}, PETSc's tutorials\n{where}{', ' if where and when else ''}{when}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, f"{name}-speedup.png"), dpi=100)
    plt.close(fig)
    return [f"{name}-speedup.png"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--peak-gbs", type=float, default=None, help="roof for GPU runs (bench measures STREAM on the CPU only)")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    for path in a.csv:
        rows = read(path)
        if not rows:
            print(f"{path}: empty, skipped")
            continue
        name = os.path.splitext(os.path.basename(path))[0]
        if "app" in rows[0]:
            made = apps_chart(rows, name, a.outdir)
        elif "gflops" in rows[0]:
            made = bench_charts(rows, name, a.outdir, a.peak_gbs)
        else:
            print(f"{path}: neither a bench nor an apps CSV, skipped")
            continue
        print(f"{path}: " + ", ".join(os.path.join(a.outdir, m) for m in made))


if __name__ == "__main__":
    main()
