#!/usr/bin/env python3
"""plot_results.py - turn cuops-bench JSON (bench/results/*.json) into a
markdown table and PNG plots, so the README numbers are regenerated from the
measurements rather than typed in.

    scripts/plot_results.py [FILE.json ...] [--out DIR] [--md FILE]

Without files it reads bench/results/*.json. The markdown table goes to
--md (default: stdout). Plots go to --out (default: bench/results/plots):
one PNG per (file, op, compute- or memory-bound rows) with the library's
rate beside the vendor baseline per shape (TFLOP/s for compute-bound GEMMs,
GB/s with the copy ceiling drawn for memory-bound rows: dequant, scan,
reduce, and GEMMs with m <= 64) and the speed-up over the vendor. Without
matplotlib only the table is made.
"""
import argparse
import glob
import json
import math
import os
import sys


def shape_text(op, shape):
    if "m" in shape and "group" in shape:
        return "%dx%dx%d/g%d" % (shape["m"], shape["n"], shape["k"], shape["group"])
    if "m" in shape:
        return "%dx%dx%d" % (shape["m"], shape["n"], shape["k"])
    if "k" in shape:
        return "%dx%d/g%d" % (shape["n"], shape["k"], shape.get("group", 0))
    return str(shape.get("n", "?"))


def num(v, fmt):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return fmt % v


DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4}


def memory_bound(row, ceilings=None):
    """As the bench classifies a row (bench_gemm_memory_bound): dequant, scan
    and reduce always; GEMM and W4A16 at m <= 64; a GEMM also where its FLOP
    per byte moved is under the ridge of the run's ceilings (vendor GEMM
    TFLOP/s over copy GB/s), e.g. 128 x 4096 x 4096 on the H200."""
    op = row["op"]
    if op in ("dequant", "scan", "reduce"):
        return True
    shape = row["shape"]
    m = shape.get("m", 1 << 30)
    if op not in ("gemm", "w4a16"):
        return False
    if m <= 64:
        return True
    ceilings = ceilings or {}
    tflops, gbps = ceilings.get("vendor_gemm_tflops"), ceilings.get("copy_gbps")
    es = DTYPE_BYTES.get(row.get("dtype"))
    if op != "gemm" or es is None or row.get("dtype") == "f32" or not tflops or not gbps:
        return False
    n, k = shape.get("n", 0), shape.get("k", 0)
    flops = 2.0 * m * n * k
    moved = (m * k + n * k + m * n) * es
    return moved > 0 and flops / moved < tflops * 1e12 / (gbps * 1e9)


def geomean(values):
    values = [v for v in values if isinstance(v, (int, float)) and v > 0 and math.isfinite(v)]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def markdown(runs):
    out = []
    for path, run in runs:
        ceil = run.get("ceilings", {})
        out.append("### %s (sm_%s), cuops %s, %s, CUDA %s" % (
            run.get("gpu"), run.get("sm"), run.get("git_sha"), run.get("date"), run.get("cuda")))
        out.append("")
        out.append("Ceilings measured in the same run: copy %s GB/s, cuBLAS bf16 8192^3 %s TFLOP/s. "
                   "Source: `%s`." % (num(ceil.get("copy_gbps"), "%.0f"),
                                      num(ceil.get("vendor_gemm_tflops"), "%.1f"),
                                      os.path.basename(path)))
        out.append("")
        # runs since cec16a3 carry copy_same_us on memory-bound rows: a copy of
        # the row's own bytes, so the row can be read against its own size too
        same = any(r.get("copy_same_us") is not None for r in run.get("rows", []))
        extra_head = " same-size copy us | % of same-size copy |" if same else ""
        out.append("| op | variant | kernel | dtype | shape | us | TFLOP/s | GB/s | % ceiling | "
                   "baseline | base us | speed-up | valid |" + extra_head)
        out.append("|---|---|---|---|---|---:|---:|---:|---:|---|---:|---:|---|" +
                   ("---:|---:|" if same else ""))
        for r in run.get("rows", []):
            note = r.get("note")
            valid = "yes" if r.get("valid") else ("no: " + note[:48] if note else "**NO**")
            extra = ""
            if same:
                cs, us = r.get("copy_same_us"), r.get("us")
                pct = 100.0 * cs / us if cs is not None and us else None
                extra = " %s | %s |" % (num(cs, "%.2f"), num(pct, "%.1f"))
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s" % (
                r["op"], r["variant"], r.get("kernel") or "-", r["dtype"],
                shape_text(r["op"], r["shape"]), num(r.get("us"), "%.2f"),
                num(r.get("tflops"), "%.1f"), num(r.get("gbps"), "%.0f"),
                num(r.get("pct_of_ceiling"), "%.1f"), r.get("baseline") or "-",
                num(r.get("baseline_us"), "%.2f"), num(r.get("speedup"), "%.3f"),
                valid.replace("|", "/"), extra))
        out.append("")
        groups = {}
        for r in run.get("rows", []):
            if r.get("valid") and r.get("speedup") is not None:
                groups.setdefault((r["op"], r["variant"], r.get("baseline")), []).append(r["speedup"])
        for (op, variant, base), values in sorted(groups.items()):
            g = geomean(values)
            if g is not None:
                out.append("- %s %s vs %s: geometric-mean speed-up %.3fx over %d rows" % (
                    op, variant, base, g, len(values)))
        out.append("")
    return "\n".join(out)


def plot(runs, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("matplotlib not available: table only\n")
        return []
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for path, run in runs:
        stem = os.path.splitext(os.path.basename(path))[0]
        ceilings = run.get("ceilings", {})
        copy = ceilings.get("copy_gbps")
        ops = sorted({r["op"] for r in run.get("rows", [])})
        for op, want_mem in [(op, m) for op in ops for m in (False, True)]:
            # compute-bound and memory-bound rows get their own figure (own unit)
            rows = [r for r in run["rows"] if r["op"] == op and r["variant"] == "auto"
                    and r.get("valid") and r.get("us") and memory_bound(r, ceilings) == want_mem]
            if not rows:
                continue
            fig, axes = plt.subplots(1, 2, figsize=(max(8, 0.5 * len(rows) + 4), 4.5))
            labels = ["%s %s" % (r["dtype"], shape_text(op, r["shape"])) for r in rows]
            xs = list(range(len(rows)))
            mem = [memory_bound(r, ceilings) for r in rows]
            # left: our rate and the vendor's, in the unit that bounds the row
            ours, theirs = [], []
            for r, is_mem in zip(rows, mem):
                key = "gbps" if is_mem else "tflops"
                v = r.get(key) or 0.0
                ours.append(v)
                sp = r.get("speedup")
                theirs.append(v / sp if sp else 0.0)
            w = 0.4
            ax = axes[0]
            ax.bar([x - w / 2 for x in xs], ours, w, label="cuops")
            ax.bar([x + w / 2 for x in xs], theirs, w, label=rows[0].get("baseline") or "baseline")
            if want_mem and copy:
                ax.axhline(copy, color="k", linestyle="--", linewidth=1, label="copy ceiling")
            ax.set_ylabel("GB/s" if want_mem else "TFLOP/s")
            ax.set_xticks(xs)
            ax.set_xticklabels(labels, rotation=70, ha="right", fontsize=7)
            ax.set_title("%s: rate" % op)
            ax.legend(fontsize=8)
            # right: speed-up over the vendor
            ax = axes[1]
            sps = [r.get("speedup") or 0.0 for r in rows]
            ax.bar(xs, sps, color=["tab:green" if s >= 1.0 else "tab:red" for s in sps])
            ax.axhline(1.0, color="k", linewidth=1)
            ax.set_xticks(xs)
            ax.set_xticklabels(labels, rotation=70, ha="right", fontsize=7)
            ax.set_title("%s: speed-up over %s" % (op, rows[0].get("baseline") or "baseline"))
            fig.suptitle("%s, cuops %s" % (run.get("gpu"), run.get("git_sha")), fontsize=9)
            fig.tight_layout()
            kind = "memory" if want_mem else "compute"
            name = os.path.join(out_dir, "%s-%s-%s.png" % (stem, op, kind))
            fig.savefig(name, dpi=110)
            plt.close(fig)
            written.append(name)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--out", default=os.path.join("bench", "results", "plots"))
    ap.add_argument("--md", default=None, help="write the markdown table here (default stdout)")
    args = ap.parse_args()
    files = args.files or sorted(glob.glob(os.path.join("bench", "results", "*.json")))
    if not files:
        sys.stderr.write("no JSON files (bench/results/*.json)\n")
        return 1
    runs = []
    for f in files:
        try:
            with open(f) as fh:
                runs.append((f, json.load(fh)))
        except (OSError, ValueError) as e:
            sys.stderr.write("skipping %s: %s\n" % (f, e))
    if not runs:
        return 1
    table = markdown(runs)
    if args.md:
        with open(args.md, "w") as fh:
            fh.write(table + "\n")
    else:
        print(table)
    for name in plot(runs, args.out):
        sys.stderr.write("wrote %s\n" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
