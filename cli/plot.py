# rnicsim plot DIR: PNG figures from the CSV files `rnicsim run --out DIR` writes.
# Run by `rnicsim plot` (the program embeds this file); needs python3-matplotlib.
import csv
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        return None, None
    head = rows[0]
    cols = list(zip(*[[float(x) for x in r] for r in rows[1:]]))
    return head, cols


def series_plot(path, out, ylabel, title, limit=12, scale=1.0):
    head, cols = read(path)
    if head is None:
        return False
    t = cols[0]
    series = [(max(c), name, c) for name, c in zip(head[1:], cols[1:])]
    series = [s for s in series if s[0] > 0] or series
    series.sort(key=lambda s: -s[0])
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for _, name, c in series[:limit]:
        ax.plot(t, [v * scale for v in c], label=name, linewidth=1)
    ax.set_xlabel("simulated time (us)")
    ax.set_ylabel(ylabel)
    ax.set_title(title + ("" if len(series) <= limit else f" (the {limit} largest of {len(series)})"))
    ax.grid(True, alpha=0.3)
    if series:
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def fct_plot(files, out):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for path in files:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        s = sorted(float(r["slowdown"]) for r in rows if r.get("slowdown") not in (None, "", "0"))
        if not s:
            continue
        ys = [(i + 1) / len(s) for i in range(len(s))]
        ax.step(s, ys, where="post", label=os.path.basename(path)[6:-4])
        drawn = True
    if not drawn:
        plt.close(fig)
        return False
    ax.set_xscale("log")
    ax.set_xlabel("flow completion slowdown (FCT / ideal)")
    ax.set_ylabel("fraction of flows")
    ax.set_title("FCT slowdown, CDF")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def main():
    if len(sys.argv) != 2:
        print("usage: rnicsim plot DIR", file=sys.stderr)
        return 2
    d = sys.argv[1]
    if not os.path.isdir(d):
        print(f"rnicsim plot: {d} is not a directory written by rnicsim run --out", file=sys.stderr)
        return 2
    made = []
    jobs = [
        ("throughput.csv", "throughput.png", "Gb/s", "throughput per workload", 1.0),
        ("queues.csv", "queues.png", "KiB queued", "egress queue depth per port", 1 / 1024),
        ("pauses.csv", "pauses.png", "us paused (cumulative)", "PFC paused time per port", 1.0),
    ]
    for src, dst, ylabel, title, scale in jobs:
        p = os.path.join(d, src)
        if os.path.exists(p) and series_plot(p, os.path.join(d, dst), ylabel, title, scale=scale):
            made.append(dst)
    flows = sorted(glob.glob(os.path.join(d, "flows_*.csv")))
    if flows and fct_plot(flows, os.path.join(d, "fct_slowdown.png")):
        made.append("fct_slowdown.png")
    if not made:
        print(f"rnicsim plot: no time series in {d} (run a scenario with --out {d} first)", file=sys.stderr)
        return 1
    for m in made:
        print(os.path.join(d, m))
    return 0


sys.exit(main())
