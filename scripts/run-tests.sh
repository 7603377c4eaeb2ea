#!/usr/bin/env bash
# Run every test binary; each prints "name: P passed, F failed, S skipped" as
# its last line. Sum them and print the total as the closing line.
set -u
dir=${1:-build/tests}
total_p=0; total_f=0; total_s=0; crashed=0
for t in "$dir"/test_*; do
    [ -x "$t" ] || continue
    echo "== $(basename "$t")"
    # a hung kernel (e.g. a barrier that never completes) must not stall the suite
    out=$(timeout "${CUOPS_TEST_TIMEOUT:-900}" "$t" 2>&1); rc=$?
    [ $rc -eq 124 ] && out="$out
!! $(basename "$t") timed out after ${CUOPS_TEST_TIMEOUT:-900} s"
    printf '%s\n' "$out"
    line=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
    p=$(printf '%s' "$line" | sed -nE 's/(^|.*[^0-9])([0-9]+) passed.*/\2/p')
    f=$(printf '%s' "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
    s=$(printf '%s' "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
    p=${p:-0}; f=${f:-0}; s=${s:-0}
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "!! $(basename "$t") exited with $rc"; f=1; crashed=$((crashed+1))
    fi
    if [ -z "$line" ]; then echo "!! $(basename "$t") printed no summary"; f=$((f+1)); fi
    total_p=$((total_p+p)); total_f=$((total_f+f)); total_s=$((total_s+s))
done
echo
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
