#!/usr/bin/env python3
"""Draw cuops-probe JSON as PNG plots: latency vs footprint, bandwidth vs bytes
in flight, shared-memory conflict cycles, tensor-core throughput vs ILP.

    python3 scripts/plot_probe.py bench/results/h200-probe.json docs/img
"""
import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series(points, family):
    out = defaultdict(list)
    for p in points:
        if p["family"] == family:
            out[p["series"]].append((p["x"], p["value"]))
    return {k: sorted(v) for k, v in out.items()}


def save(fig, outdir, name):
    path = os.path.join(outdir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path)


def main():
    src, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    data = json.load(open(src))
    pts, gpu = data["points"], data["gpu"]

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, xy in series(pts, "latency").items():
        ax.plot([x / 1024 for x, _ in xy], [y for _, y in xy], "o-", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("footprint (KB)")
    ax.set_ylabel("cycles per load")
    ax.set_title(f"{gpu}: pointer-chase latency")
    ax.grid(True, alpha=0.3)
    save(fig, outdir, "probe-latency.png")

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, xy in series(pts, "bandwidth_vs_inflight").items():
        ax.plot([x / 1024 for x, _ in xy], [y for _, y in xy], "o-", label=name)
    copy = [p["value"] for p in pts if p["family"] == "bandwidth" and p["series"].startswith("copy")]
    if copy:
        ax.axhline(copy[0], color="gray", ls="--", label="device copy, read + write counted")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes in flight per SM (KB)")
    ax.set_ylabel("read GB/s")
    ax.set_title(f"{gpu}: bandwidth vs bytes in flight (Little's law)")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    save(fig, outdir, "probe-bandwidth.png")

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, xy in series(pts, "smem_conflict").items():
        ax.plot([x for x, _ in xy], [y for _, y in xy], "o-", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("stride (elements)")
    ax.set_ylabel("cycles per dependent warp load")
    ax.set_title(f"{gpu}: shared-memory bank conflicts")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    save(fig, outdir, "probe-smem.png")

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, xy in series(pts, "mma_sync").items():
        ax.plot([x for x, _ in xy], [y for _, y in xy], "o-", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("independent accumulators per warp (ILP)")
    ax.set_ylabel("TFLOP/s (whole GPU)")
    ax.set_title(f"{gpu}: mma.sync m16n8k16 throughput")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    save(fig, outdir, "probe-mma.png")


if __name__ == "__main__":
    main()
