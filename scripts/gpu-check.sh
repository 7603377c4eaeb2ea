#!/usr/bin/env bash
# One device call: build everything (all cores), run the test suite on the GPU,
# compute-sanitizer memcheck/racecheck on the GPU tests, cuops-probe, then
# cuops-bench (which records the probe's ceilings). A whole run takes longer
# than one 10-minute device command: give the steps as arguments to split it,
# e.g. `gpu-check.sh build test` then `gpu-check.sh sanitize`, `probe bench`.
# Logs and JSON land in $OUT (at most a few files: logs are tarred).
#
#   scripts/gpu-check.sh [build|test|sanitize|bench|probe|profile|all]...   (default: all)
#   BENCH_ARGS="gemm --quick" scripts/gpu-check.sh bench
#   PROFILE_KERNEL=scan_lookback PROFILE_ARGS="scan --shape 268435456 --dtype i32" \
#       scripts/gpu-check.sh profile      (not part of all: ncu of one kernel, with
#       the per-instruction stall table of scripts/ncu_stalls.py)
set -u
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT" "$OUT/logs"
LOG=$OUT/logs
steps=${*:-all}
want() { case " $steps " in *" $1 "*|*" all "*) return 0;; esac; return 1; }
asked() { case " $steps " in *" $1 "*) return 0;; esac; return 1; } # named, not via all
export CUOPS_GIT_SHA=${CUOPS_GIT_SHA:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
status=0

if want build || want test || want sanitize || want bench || want probe || asked profile; then
    { nvidia-smi; nvidia-smi -q -d CLOCK; } > "$LOG/nvidia-smi.txt" 2>&1
    echo "== build"
    if ! make -j"$(nproc)" all > "$LOG/build.log" 2>&1; then
        tail -n 60 "$LOG/build.log"; echo "BUILD FAILED"; status=1
    else
        grep -iE "warning|spill" "$LOG/build.log" | grep -v "^nvcc warning : Support for offline" | head -n 30
        echo "build ok"
    fi
fi

if [ $status -eq 0 ] && want test; then
    echo "== tests"
    # test_gpu_scan's full sweep as 8 processes side by side (one outlasted 330 s);
    # 420 s a test: the full test_gpu_w4a16 took 267 s (P217) before its random
    # cases (~15 s more) were added
    CUOPS_TEST_SHARDS=${CUOPS_TEST_SHARDS:-8} CUOPS_TEST_TIMEOUT=${CUOPS_TEST_TIMEOUT:-420} \
        bash scripts/run-tests.sh build/tests > "$LOG/tests.log" 2>&1 || status=1
    grep -E "^(FAIL|!!)|passed, [0-9]+ failed" "$LOG/tests.log" | head -n 80
    # the forced-only study forms of decode_realign in the realign cases' slots
    # (quick: the same cases as auto's forms, ~10 s each)
    for form in study study2 study3; do
        CUOPS_TEST_REALIGN_FORM=$form CUOPS_TEST_QUICK=1 timeout 120 build/tests/test_gpu_gemm_decode \
            > "$LOG/test-gemm-decode-$form.log" 2>&1 || status=1
        echo "decode realign forms $form: $(tail -n 1 "$LOG/test-gemm-decode-$form.log")"
    done
    # the README's Python path: pip install ./python (no index), then the example
    site=$(mktemp -d)
    if python3 -m pip install --no-index --no-deps --target "$site" ./python > "$LOG/pip.log" 2>&1 &&
       (cd / && PYTHONPATH=$site python3 "$OLDPWD/python/examples/mlp_w4.py") > "$LOG/example.log" 2>&1; then
        echo "python example ok"; tail -n 12 "$LOG/example.log"
    else
        echo "PYTHON EXAMPLE FAILED"; tail -n 20 "$LOG/pip.log" "$LOG/example.log"; status=1
    fi
fi

if [ $status -eq 0 ] && want sanitize; then
    # every GPU test in quick mode under memcheck and racecheck, several at a
    # time (the GPU has room; each process runs its own small shapes)
    echo "== compute-sanitizer (quick mode, ${SANITIZE_JOBS:-6} at a time)"
    sanitize_one() {
        t=$1; tool=$2; log="$LOG/sanitize-$tool-$(basename "$t").log"
        CUOPS_TEST_QUICK=1 timeout "${SANITIZE_TIMEOUT:-420}" compute-sanitizer --tool "$tool" \
            --error-exitcode 9 "$t" > "$log" 2>&1
        rc=$?
        echo "$tool $(basename "$t"): rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1) | $(grep -E 'passed, [0-9]+ failed' "$log" | tail -n 1)"
    }
    export -f sanitize_one; export LOG SANITIZE_TIMEOUT
    for t in build/tests/test_gpu_*; do
        [ -x "$t" ] || continue
        for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do echo "$t $tool"; done
    done | xargs -P "${SANITIZE_JOBS:-6}" -n 2 bash -c 'sanitize_one "$0" "$1"' | sort
fi

if [ $status -eq 0 ] && want probe && [ -x build/bin/cuops-probe ]; then
    echo "== probe"
    build/bin/cuops-probe all --json "$OUT/probe.json" > "$LOG/probe.log" 2>&1
    echo "probe rc=$?"; tail -n 80 "$LOG/probe.log"
    python3 scripts/plot_probe.py "$OUT/probe.json" "$LOG/plots" > /dev/null 2>&1 || echo "(plots failed)"
    # the bench records the probe's tensor-core ceilings beside its own
    export CUOPS_PROBE_JSON="$OUT/probe.json"
fi

if [ $status -eq 0 ] && want bench; then
    echo "== bench ${BENCH_ARGS:-all}"
    # shellcheck disable=SC2086
    build/bin/cuops-bench ${BENCH_ARGS:-all} --json "$OUT/bench.json" > "$LOG/bench.log" 2> "$LOG/bench.err"
    echo "bench rc=$?"
    cat "$LOG/bench.log" | cut -c1-200 | tail -n 120
fi

if [ $status -eq 0 ] && asked profile; then
    # one kernel under ncu's full set with source counters; the source page as
    # CSV, summarised by instruction (which barrier, which load a warp waits on)
    name=${PROFILE_NAME:-$(echo "${PROFILE_KERNEL:-kernel}" | tr -c 'A-Za-z0-9_\n' '_')}
    echo "== profile ${PROFILE_KERNEL:-?}: cuops-bench ${PROFILE_ARGS:-}"
    # shellcheck disable=SC2086
    timeout "${PROFILE_TIMEOUT:-300}" ncu --clock-control none --set full --import-source yes -c 1 \
        -k "regex:${PROFILE_KERNEL:?set PROFILE_KERNEL}" -o "$LOG/$name" \
        build/bin/cuops-bench ${PROFILE_ARGS:?set PROFILE_ARGS} --reps 1 > "$LOG/ncu-$name-run.txt" 2>&1
    echo "ncu rc=$?"
    ncu -i "$LOG/$name.ncu-rep" --page details > "$LOG/ncu-$name.txt" 2>&1
    ncu -i "$LOG/$name.ncu-rep" --page source --csv --print-source sass > "$LOG/ncu-$name-sass.csv" 2>&1
    python3 scripts/ncu_stalls.py "$LOG/ncu-$name-sass.csv" --context 2 | tee "$LOG/ncu-$name-stalls.txt"
    rm -f "$LOG/$name.ncu-rep"
fi

tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$LOG"
exit $status
