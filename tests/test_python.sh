#!/usr/bin/env bash
# The Python binding's tests: numpy on the CPU backend (needs numpy: Debian's
# python3-numpy in CI), torch on the GPU where torch and a device exist.
here=$(cd "$(dirname "$0")" && pwd)
root=${CUOPS_ROOT:-$(cd "$here/../.." && pwd)}
# run from build/tests (installed copy) or from tests/ (source)
[ -d "$root/tests/python" ] || root=$(cd "$here/.." && pwd)
export CUOPS_LIBRARY=${CUOPS_LIBRARY:-$root/build/lib/libcuops.so}
py=""
for c in python3 /usr/bin/python3; do
    if "$c" -c "import numpy" 2>/dev/null; then py=$c; break; fi
done
p=0; f=0; s=0
if [ -z "$py" ]; then
    echo "SKIP: no python3 with numpy: Python binding tests skipped"; s=1
else
    for t in "$root"/tests/python/test_*.py; do
        runner=$py
        case "$t" in *torch*) command -v python3 >/dev/null && python3 -c "import torch" 2>/dev/null && runner=python3;; esac
        out=$("$runner" "$t" 2>&1); rc=$?
        printf '%s\n' "$out"
        line=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
        tp=$(printf '%s' "$line" | sed -nE 's/(^|.*[^0-9])([0-9]+) passed.*/\2/p')
        tf=$(printf '%s' "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
        ts=$(printf '%s' "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
        p=$((p+${tp:-0})); f=$((f+${tf:-0})); s=$((s+${ts:-0}))
        if [ -z "$line" ] || { [ $rc -ne 0 ] && [ "${tf:-0}" -eq 0 ]; }; then f=$((f+1)); fi
    done
fi
echo "test_python: $p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
