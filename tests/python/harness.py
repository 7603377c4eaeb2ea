"""Tiny harness shared by the Python tests: check() counts, finish() prints the
closing line that scripts/run-tests.sh sums."""
import sys
import traceback

counts = {"passed": 0, "failed": 0, "skipped": 0}


def check(cond, msg=""):
    if cond:
        counts["passed"] += 1
    else:
        counts["failed"] += 1
        where = traceback.extract_stack()[-2]
        print(f"FAIL {where.filename}:{where.lineno}: {msg}", file=sys.stderr)


def skip(msg):
    counts["skipped"] += 1
    print(f"SKIP: {msg}", file=sys.stderr)


def run(tests):
    for t in tests:
        try:
            t()
        except Exception:  # a crash in one test is a failure, the rest still run
            counts["failed"] += 1
            print(f"FAIL {t.__name__} raised:", file=sys.stderr)
            traceback.print_exc()


def finish(name):
    print(f"{name}: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    sys.exit(1 if counts["failed"] else 0)
