"""scripts/ncu_stalls.py on a trimmed real ncu source page (113 SASS lines of
scan_lookback_kernel at n = 2^28 on an H200, data/ncu-source-sass-sample.csv):
the parse, the totals and the ranking the profile notes in docs/ rely on."""
import io
import os
import sys
import tempfile
from contextlib import redirect_stdout

from harness import check, finish, run

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import ncu_stalls  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(__file__), "data", "ncu-source-sass-sample.csv")


def test_parse():
    kernel, instrs = ncu_stalls.read_source_page(SAMPLE)
    check("scan_lookback_kernel" in kernel, f"kernel name: {kernel!r}")
    check(len(instrs) == 113, f"{len(instrs)} instructions, expected 113")
    check([i for i, _, _, _ in instrs] == list(range(len(instrs))), "indices are not 0..n-1")
    top = max(instrs, key=lambda x: x[2])
    check(top[1].startswith("ULDC") and top[2] == 46049, f"top instruction {top[1]!r} {top[2]}")
    check(max(top[3], key=top[3].get) == "barrier" and top[3]["barrier"] == 46042,
          f"top reasons {top[3]}")
    # the instruction before the hot one is what it waits for: the barrier
    before = [t for i, t, _, _ in instrs if i == top[0] - 3]
    check(before and before[0].startswith("BAR.SYNC"), f"3 before the top: {before}")
    loads = [x for x in instrs if x[1].startswith("IMAD.IADD R33, R32")]
    check(len(loads) == 1 and loads[0][3].get("long_sb") == 17787, f"first use of the loads: {loads}")


def test_summary():
    kernel, instrs = ncu_stalls.read_source_page(SAMPLE)
    total = sum(n for _, _, n, _ in instrs)
    text = ncu_stalls.summarize(kernel, instrs, top=3, min_pct=1.0, context=1)
    check(f"warp-state samples: {total}" in text, "total line missing")
    hot = [line for line in text.splitlines() if "%" in line and line.strip()[:1].isdigit()]
    check(len(hot) == 3, f"{len(hot)} ranked lines, expected 3:\n{text}")
    shares = [float(line.split("%")[0].split()[-1]) for line in hot]
    check(abs(sum(shares) - 100.0 * (46049 + 17868 + 8634) / total) < 0.2,
          f"shares {shares} do not add up to the three largest")
    check(text.splitlines()[2].startswith("by reason: barrier"), f"reason order: {text.splitlines()[2]}")


def test_errors():
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as fh:
        fh.write('"Address","Source"\n"0x0","NOP"\n')
        bad = fh.name
    try:
        raised = False
        try:
            ncu_stalls.read_source_page(bad)
        except ValueError:
            raised = True
        check(raised, "a page without the sampling column was accepted")
        out = io.StringIO()
        with redirect_stdout(out):
            rc = ncu_stalls.main([os.path.join(tempfile.gettempdir(), "no-such-ncu-page.csv")])
        check(rc == 1, f"missing file: rc {rc}")
    finally:
        os.unlink(bad)


run([test_parse, test_summary, test_errors])
finish("test_ncu_stalls")
