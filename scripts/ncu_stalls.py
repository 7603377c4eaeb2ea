#!/usr/bin/env python3
"""Where a kernel's warps wait, by instruction: a summary of ncu's source page.

    ncu --set full --import-source yes -k regex:KERNEL -c 1 -o rep <program...>
    ncu -i rep.ncu-rep --page source --csv --print-source sass > kernel-sass.csv
    scripts/ncu_stalls.py kernel-sass.csv [--top 12] [--min-pct 0.3] [--context 3]

Prints the total of the warp-state samples, the stall reasons summed over the
kernel, and the instructions holding at least --min-pct of the samples (at most
--top of them) with their two main reasons. A barrier wait is sampled on the
instruction after the BAR, so --context N also prints the N instructions before
each listed one: that is how the two barriers of a kernel are told apart.
"""
import argparse
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"


def read_source_page(path):
    """(kernel name, [(index, sass text, samples, {reason: samples})])."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    kernel = ""
    header_at = None
    for i, r in enumerate(rows):
        if r and r[0] == "Kernel Name" and len(r) > 1:
            kernel = r[1]
        if SAMPLES in r:
            header_at = i
            break
    if header_at is None:
        raise ValueError("%s: no '%s' column (was the report taken with --import-source "
                         "and source counters?)" % (path, SAMPLES))
    header = rows[header_at]
    col_samples = header.index(SAMPLES)
    col_source = header.index("Source") if "Source" in header else 1
    reasons = [(c, name) for c, name in enumerate(header)
               if name.startswith("stall_") and "Not Issued" not in name]
    out = []
    for r in rows[header_at + 1:]:
        if len(r) <= col_samples:
            continue
        try:
            n = int(float(r[col_samples] or 0))
        except ValueError:
            continue
        why = {}
        for c, name in reasons:
            if c < len(r) and r[c]:
                try:
                    v = int(float(r[c]))
                except ValueError:
                    continue
                if v:
                    why[name[len("stall_"):]] = v
        out.append((len(out), r[col_source].strip(), n, why))
    return kernel, out


def summarize(kernel, instrs, top=12, min_pct=0.3, context=0):
    total = sum(n for _, _, n, _ in instrs)
    lines = ["kernel: %s" % (kernel or "?"), "warp-state samples: %d" % total]
    if total == 0:
        lines.append("(no samples)")
        return "\n".join(lines)
    by_reason = {}
    for _, _, _, why in instrs:
        for k, v in why.items():
            by_reason[k] = by_reason.get(k, 0) + v
    lines.append("by reason: " + ", ".join(
        "%s %.1f%%" % (k, 100.0 * v / total)
        for k, v in sorted(by_reason.items(), key=lambda kv: -kv[1])[:8]))
    hot = [x for x in instrs if 100.0 * x[2] / total >= min_pct]
    hot = sorted(hot, key=lambda x: -x[2])[:top]
    lines.append("%6s %6s %6s  %-48s %s" % ("instr", "samples", "%", "sass", "main reasons"))
    for idx, text, n, why in sorted(hot):
        for j in range(max(0, idx - context), idx):
            lines.append("%6d %6s %6s  %-48s" % (j, "", "", instrs[j][1][:48]))
        main = sorted(why.items(), key=lambda kv: -kv[1])[:2]
        lines.append("%6d %6d %5.1f%%  %-48s %s" % (idx, n, 100.0 * n / total, text[:48],
                                                     ", ".join("%s %d" % kv for kv in main)))
        if context:
            lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--min-pct", type=float, default=0.3)
    ap.add_argument("--context", type=int, default=0)
    a = ap.parse_args(argv)
    try:
        kernel, instrs = read_source_page(a.csv)
    except (OSError, ValueError) as e:
        sys.stderr.write("ncu_stalls: %s\n" % e)
        return 1
    print(summarize(kernel, instrs, a.top, a.min_pct, a.context))
    return 0


if __name__ == "__main__":
    sys.exit(main())
