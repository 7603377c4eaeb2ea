#!/usr/bin/env bash
# The measurement record holds together: every result file the docs and the
# README name (`h200-....json`, `logs/....txt`, brace lists such as
# `-{1,2}.json` expanded, globs matched) and every relative link they make
# exists in the repository, under bench/results/ or bench/results/logs/ or at
# the path given. Shorthand that names no one file (a leading '-' suffix, a
# <placeholder>, a P154..P159 range) is left alone. Needs python3 only.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ -d "$root/docs" ] || root=$(cd "$here/.." && pwd)
if ! command -v python3 > /dev/null 2>&1; then
    echo "SKIP: no python3: the docs' references are not checked"
    echo "test_docs: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
exec python3 - "$root" <<'EOF'
import glob, os, re, sys

root = sys.argv[1]
os.chdir(root)

def expand(s):
    """`a{b,c}d` -> [abd, acd], nested and repeated braces included."""
    m = re.search(r"\{([^{}]*)\}", s)
    if not m:
        return [s]
    out = []
    for alt in m.group(1).split(","):
        out += expand(s[: m.start()] + alt + s[m.end():])
    return out

def found(name, doc):
    base = os.path.basename(name)
    cands = [name, os.path.join("bench/results", name), os.path.join("bench/results/logs", name),
             os.path.join("bench/results", base), os.path.join("bench/results/logs", base),
             os.path.normpath(os.path.join(os.path.dirname(doc), name))]
    return any(glob.glob(c) for c in cands)

files = sorted(glob.glob("docs/*.md")) + ["README.md"]
passed = failed = 0
for doc in files:
    if not os.path.exists(doc):
        continue
    for ln, line in enumerate(open(doc, encoding="utf-8"), 1):
        names = re.findall(r"`([^` ]+\.(?:json|txt|csv|png|gz))`", line)
        names += [t for t in re.findall(r"\]\(([^)#\s]+)\)", line) if not re.match(r"[a-z]+:", t)]
        for tok in names:
            for name in expand(tok):
                if name.startswith("-") or "<" in name or ".." in os.path.basename(name):
                    continue  # shorthand for a family of files, not one file
                if found(name, doc):
                    passed += 1
                else:
                    failed += 1
                    print(f"FAIL: {doc}:{ln} names {name}, which is not in the repository")
if passed == 0:
    failed += 1
    print("FAIL: no reference found in docs/*.md and README.md (the scan is broken)")
print(f"test_docs: {passed} passed, {failed} failed, 0 skipped")
sys.exit(1 if failed else 0)
EOF
