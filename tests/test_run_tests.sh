#!/usr/bin/env bash
# Checks of scripts/run-tests.sh, the runner `make test` uses, on stand-in
# test binaries (no GPU): it sums every binary's "P passed, F failed, S
# skipped" line; a nonzero exit without failures, a missing summary and a
# timeout count as failures; with CUOPS_TEST_SHARDS=N the tests it shards run
# as N processes, each told its CUOPS_TEST_SHARD=i/N and counted on its own,
# and the others run once.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ -f "$root/scripts/run-tests.sh" ] || root=$(cd "$here/.." && pwd)
runner=$root/scripts/run-tests.sh
p=0; f=0
ok()   { p=$((p+1)); }
fail() { f=$((f+1)); echo "FAIL: $*" >&2; }
expect() { # what, got, want
    if [ "$2" = "$3" ]; then ok; else fail "$1: got '$2', want '$3'"; fi
}
if [ ! -f "$runner" ]; then
    fail "no runner at $runner"; echo "test_run_tests: $p passed, $f failed, 0 skipped"; exit 1
fi
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
# a stand-in for the sharded test: shard 1 of 3 reports a failure, every
# shard records the shard it was given
cat > "$dir/test_gpu_scan" <<'STUB'
#!/usr/bin/env bash
echo "${CUOPS_TEST_SHARD:-none}" >> "$(dirname "$0")/shards.seen"
if [ "${CUOPS_TEST_SHARD:-}" = "1/3" ]; then echo "test_gpu_scan: 5 passed, 1 failed, 0 skipped"; exit 1; fi
echo "test_gpu_scan: 10 passed, 0 failed, 2 skipped"
STUB
cat > "$dir/test_a" <<'STUB'
#!/usr/bin/env bash
echo "${CUOPS_TEST_SHARD:-none}" >> "$(dirname "$0")/a.seen"
echo "test_a: 7 passed, 0 failed, 1 skipped"
STUB
chmod +x "$dir/test_gpu_scan" "$dir/test_a"

# one process each
out=$(bash "$runner" "$dir" 2>&1); rc=$?
expect "unsharded total" "$(printf '%s\n' "$out" | tail -n 1)" "17 passed, 0 failed, 3 skipped"
expect "unsharded exit status" "$rc" "0"
expect "unsharded shard given" "$(cat "$dir/shards.seen")" "none"
rm -f "$dir"/*.seen

# three shards of the sharded test, one run of the other
out=$(CUOPS_TEST_SHARDS=3 bash "$runner" "$dir" 2>&1); rc=$?
expect "sharded total" "$(printf '%s\n' "$out" | tail -n 1)" "32 passed, 1 failed, 5 skipped"
expect "sharded exit status (a shard failed)" "$rc" "1"
expect "shards given" "$(sort "$dir/shards.seen" | tr '\n' ' ')" "0/3 1/3 2/3 "
expect "the other test once, unsharded" "$(cat "$dir/a.seen")" "none"
expect "each shard reported" "$(printf '%s\n' "$out" | grep -c '^== test_gpu_scan (shard')" "3"
rm -f "$dir"/*.seen

# a test that exits nonzero without a failure line, one with no summary,
# one that outlasts the timeout
cat > "$dir/test_b" <<'STUB'
#!/usr/bin/env bash
echo "test_b: 3 passed, 0 failed, 0 skipped"; exit 2
STUB
cat > "$dir/test_c" <<'STUB'
#!/usr/bin/env bash
echo "no summary here"
STUB
cat > "$dir/test_d" <<'STUB'
#!/usr/bin/env bash
sleep 5; echo "test_d: 1 passed, 0 failed, 0 skipped"
STUB
chmod +x "$dir/test_b" "$dir/test_c" "$dir/test_d"
rm -f "$dir/test_gpu_scan"
out=$(CUOPS_TEST_TIMEOUT=1 bash "$runner" "$dir" 2>&1); rc=$?
expect "failures counted" "$(printf '%s\n' "$out" | tail -n 1)" "10 passed, 3 failed, 1 skipped"
expect "exit status with failures" "$rc" "1"
expect "timeout named" "$(printf '%s\n' "$out" | grep -c 'test_d timed out after 1 s')" "1"

# a directory with no test binary (a wrong path, a build that made nothing)
# must fail, not report 0 passed
empty=$(mktemp -d)
out=$(bash "$runner" "$empty" 2>&1); rc=$?
expect "empty directory: a failure" "$(printf '%s\n' "$out" | tail -n 1)" "0 passed, 1 failed, 0 skipped"
expect "empty directory: exit status" "$rc" "1"
out=$(bash "$runner" "$empty/nonexistent" 2>&1); rc=$?
expect "missing directory: exit status" "$rc" "1"
rmdir "$empty"

echo "test_run_tests: $p passed, $f failed, 0 skipped"
[ "$f" -eq 0 ]
