#!/usr/bin/env bash
# Run every test binary; each prints "name: P passed, F failed, S skipped" as
# its last line. Sum them and print the total as the closing line.
#
# CUOPS_TEST_SHARDS=N (N > 1): the tests that take CUOPS_TEST_SHARD=i/N
# (test_gpu_scan, whose full sweep outlasted a 330 s limit in one process)
# run as N processes side by side on the one GPU; each shard is counted as a
# test run of its own.
set -u
dir=${1:-build/tests}
shards=${CUOPS_TEST_SHARDS:-1}
sharded=" test_gpu_scan "
total_p=0; total_f=0; total_s=0; crashed=0

# print one run's output (its text in $1, its exit status in $2, its name in
# $3; 124 is timeout's) and add its counts to the totals
report_run() {
    local out=$1 rc=$2 name=$3 line p f s
    [ "$rc" -eq 124 ] && out="$out
!! $name timed out after ${CUOPS_TEST_TIMEOUT:-900} s"
    printf '%s\n' "$out"
    line=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
    p=$(printf '%s' "$line" | sed -nE 's/(^|.*[^0-9])([0-9]+) passed.*/\2/p')
    f=$(printf '%s' "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
    s=$(printf '%s' "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
    p=${p:-0}; f=${f:-0}; s=${s:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "!! $name exited with $rc"; f=1; crashed=$((crashed+1))
    fi
    # no summary: one failure (already counted above when it also exited nonzero)
    if [ -z "$line" ]; then
        echo "!! $name printed no summary"; [ "$rc" -ne 0 ] || f=$((f+1))
    fi
    total_p=$((total_p+p)); total_f=$((total_f+f)); total_s=$((total_s+s))
}

ran=0
for t in "$dir"/test_*; do
    [ -x "$t" ] || continue
    ran=$((ran+1))
    name=$(basename "$t")
    if [ "$shards" -gt 1 ] && [ "${sharded#* $name }" != "$sharded" ]; then
        tmp=$(mktemp -d)
        for i in $(seq 0 $((shards - 1))); do
            ( CUOPS_TEST_SHARD="$i/$shards" timeout "${CUOPS_TEST_TIMEOUT:-900}" "$t" \
                  > "$tmp/$i.out" 2>&1; echo $? > "$tmp/$i.rc" ) &
        done
        wait
        for i in $(seq 0 $((shards - 1))); do
            echo "== $name (shard $i of $shards)"
            report_run "$(cat "$tmp/$i.out")" "$(cat "$tmp/$i.rc")" "$name shard $i"
        done
        rm -rf "$tmp"
        continue
    fi
    echo "== $name"
    # a hung kernel (e.g. a barrier that never completes) must not stall the suite
    out=$(timeout "${CUOPS_TEST_TIMEOUT:-900}" "$t" 2>&1); rc=$?
    report_run "$out" "$rc" "$name"
done
# a wrong directory or a build that made nothing must not pass
if [ "$ran" -eq 0 ]; then echo "!! no test binaries in '$dir'"; total_f=$((total_f+1)); fi
echo
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
