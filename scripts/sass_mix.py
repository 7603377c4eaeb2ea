#!/usr/bin/env python3
"""Instruction mix of kernels in the SASS of libcuops.so (needs cuobjdump).

  scripts/sass_mix.py [--lib build/lib/libcuops.so] [--arch sm_90a] [--order N] REGEX...

For every function whose (demangled) name matches a REGEX: its opcode counts
(HMMA, LDSM, LDGSTS, LDG, STG, BAR, ... grouped by base opcode) and, with
--order N, the first N memory/barrier/mma instructions in program order, which
is what shows whether loads are issued before the math that uses them.
"""
import argparse
import collections
import re
import subprocess
import sys

KEEP = re.compile(r"^(HMMA|HGMMA|IMMA|LDSM|STSM|LDGSTS|LDG|STG|LDS|STS|LDL|STL|BAR|SYNCS|UTMALDG|"
                  r"UTMASTG|UBLKCP|DEPBAR|SHFL|FFMA|FADD|FMUL|HADD2|HMUL2|HFMA2|LOP3|PRMT|I2F|F2F|"
                  r"F2FP|ATOM|RED|MEMBAR|WARPSYNC|BRA|EXIT|IMAD|IADD3|SHF|LEA|ISETP)")
MEMORY = re.compile(r"^(LDG|STG|LDGSTS|LDSM|LDS|STS|BAR|DEPBAR|HMMA|HGMMA|UTMALDG|UTMASTG|SYNCS|ATOM|RED)")


def functions(sass):
    name, body = None, []
    for line in sass.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
            continue
        m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if name and m:
            body.append(m.group(2))
    if name:
        yield name, body


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout
        return out.splitlines()
    except OSError:
        return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build/lib/libcuops.so")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--order", type=int, default=0)
    ap.add_argument("patterns", nargs="+")
    a = ap.parse_args()
    sass = subprocess.run(["cuobjdump", "-sass", "-arch", a.arch, a.lib], capture_output=True,
                          text=True)
    if sass.returncode:
        sys.exit(f"cuobjdump failed: {sass.stderr.strip()}")
    funcs = list(functions(sass.stdout))
    pretty = demangle([f for f, _ in funcs])
    pats = [re.compile(p) for p in a.patterns]
    for (mangled, body), name in zip(funcs, pretty):
        if not any(p.search(name) or p.search(mangled) for p in pats):
            continue
        counts = collections.Counter(op.split(".")[0] for op in body)
        shown = sorted(((k, v) for k, v in counts.items() if KEEP.match(k)), key=lambda kv: -kv[1])
        print(f"== {name[:160]}\n   {len(body)} instructions; " +
              ", ".join(f"{k} {v}" for k, v in shown))
        if a.order:
            seq = [op for op in body if MEMORY.match(op)][: a.order]
            print("   order: " + " ".join(seq))


if __name__ == "__main__":
    main()
