#!/usr/bin/env python3
"""Split one cuops-bench JSON into bench/results/<gpu>-<op>.json files (one per
op, same header, that op's rows). A newer run replaces the file; git keeps
the history.

    python3 scripts/split_results.py out/bench.json [bench/results]
"""
import json
import os
import re
import sys


def gpu_slug(name):
    name = name.lower().replace("nvidia", "").strip()
    return re.sub(r"[^a-z0-9]+", "-", name).strip("-") or "gpu"


def main():
    src = sys.argv[1]
    dest = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "bench", "results")
    data = json.load(open(src))
    ops = {}
    for row in data.get("rows", []):
        ops.setdefault(row["op"], []).append(row)
    os.makedirs(dest, exist_ok=True)
    for op, rows in ops.items():
        out = {k: v for k, v in data.items() if k != "rows"}
        out["rows"] = rows
        path = os.path.join(dest, f"{gpu_slug(data['gpu'])}-{op}.json")
        with open(path, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        print(f"{path}: {len(rows)} rows")


if __name__ == "__main__":
    main()
