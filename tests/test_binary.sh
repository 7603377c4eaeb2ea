#!/usr/bin/env bash
# Checks on the built library that need no GPU: it needs neither libcuda nor
# a shared CUDA runtime (it must load without a driver); the PTX of the Hopper
# GEMM and of the other wgmma kernels holds wgmma/TMA/setmaxnreg, the Hopper
# GEMM's and the decode GEMM's also wgmma with its transpose immediates (and, for the
# decode kernels, the cluster barrier and distributed shared-memory loads of
# their split-K), the seed-style GEMM's mma.sync/ldmatrix/cp.async (its sm_90-only
# members: also setmaxnreg and mbarriers). Where cuobjdump exists (GPU
# machines): the fat binary holds sm_90a and sm_80 code plus compute_80 PTX,
# and the SASS shows HGMMA and HMMA.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ -f "$root/build/lib/libcuops.so" ] || root=$(cd "$here/.." && pwd)
lib=${CUOPS_LIBRARY:-$root/build/lib/libcuops.so}
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}
p=0; f=0; s=0
ok()   { p=$((p+1)); }
fail() { f=$((f+1)); echo "FAIL: $*" >&2; }
check() { if eval "$1"; then ok; else fail "$2"; fi; }

check "[ -f '$lib' ]" "library $lib not built"
needed=$(readelf -d "$lib" 2>/dev/null | grep NEEDED)
check "! printf '%s' \"\$needed\" | grep -q 'libcuda\\.so'" "libcuops.so links libcuda: $needed"
check "! printf '%s' \"\$needed\" | grep -q 'libcudart\\.so'" "libcuops.so links the shared CUDA runtime: $needed"

# PTX check (needs only nvcc): the Hopper GEMM is built from wgmma fed by TMA
# with register reallocation; the seed-style GEMM from mma.sync, ldmatrix, cp.async.
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ptxdir=$(mktemp -d); trap 'rm -rf "$ptxdir"' EXIT
ptx_of() { # file arch -> ptx path
    "$NVCC" -std=c++17 -I"$root/include" -I"$root/src" -ptx -gencode=arch=$2,code=$2 "$root/$1" \
        -o "$ptxdir/$(basename "$1").$2.ptx" 2> "$ptxdir/err" && echo "$ptxdir/$(basename "$1").$2.ptx"
}
if [ -f "$root/src/cuda/gemm/gemm_sm90.cu" ]; then
    f90=$(ptx_of src/cuda/gemm/gemm_sm90.cu compute_90a)
    check "[ -n '$f90' ]" "gemm_sm90.cu does not compile to compute_90a PTX: $(cat "$ptxdir/err" 2>/dev/null | head -n 3)"
    for ins in wgmma.mma_async cp.async.bulk.tensor setmaxnreg mbarrier.try_wait; do
        check "grep -q '$ins' '$f90'" "the Hopper GEMM PTX has no $ins"
    done
    # transposed operands read in place: wgmma with B N-major (imm-trans-b 1) and
    # with A M-major (imm-trans-a 1), besides the K-major forms
    check "grep -q 'p, 1, 1, 0, 1;' '$f90'" "the Hopper GEMM PTX has no wgmma reading B N-major"
    check "grep -q 'p, 1, 1, 1, 0;' '$f90'" "the Hopper GEMM PTX has no wgmma reading A M-major"
    check "grep -q 'p, 1, 1, 0, 0;' '$f90'" "the Hopper GEMM PTX has no wgmma on K-major operands"
    # the multicast kernels (here the 64 x 128 pairs): the barriers are set up, fenced
    # with fence.mbarrier_init, and the start-up cluster arrive is relaxed (a release
    # arrive costs every thread a MEMBAR.ALL.GPU); at the end no cluster barrier: the
    # producer's tail wait on the empty barriers keeps each CTA alive for its peers
    awk '/^\.visible \.entry/{on = /sm90_ws_kernelILi64ELi128ELb0E6__halfLi2ELi1ELi0E/} on' "$f90" \
        > "$ptxdir/mc2.ptx"
    first_arrive=$(grep -m1 'barrier.cluster.arrive' "$ptxdir/mc2.ptx")
    check "printf '%s' '$first_arrive' | grep -q 'arrive.relaxed'" \
          "the multicast GEMM's first cluster arrive is not relaxed: $first_arrive"
    check "[ \$(grep -n -m1 'fence.mbarrier_init' '$ptxdir/mc2.ptx' | cut -d: -f1) -lt \$(grep -n -m1 'barrier.cluster.arrive' '$ptxdir/mc2.ptx' | cut -d: -f1) ]" \
          "the multicast GEMM arrives on the cluster barrier before fence.mbarrier_init"
    check "[ \$(grep -c 'barrier.cluster.arrive' '$ptxdir/mc2.ptx') -eq 1 ]" \
          "the multicast GEMM has a cluster barrier besides the start-up one (end of kernel?)"
    # one wgmma width per tile: 128 x 256 (n256), 128 x 128 (n128), 64 x 128 (n64 per consumer)
    for nn in 256 128 64; do
        check "grep -q 'wgmma.mma_async.sync.aligned.m64n${nn}k16.f32' '$f90'" \
              "the Hopper GEMM PTX has no wgmma m64n${nn}k16 (tile width)"
    done
else
    fail "src/cuda/gemm/gemm_sm90.cu missing"
fi
# the other wgmma kernels: the W4A16 prefill and decode kernels (A from registers) and the
# dense decode GEMM (both operands from shared memory); the decode ones split K over a cluster
for rel in src/cuda/quant/w4a16_prefill_wgmma.cu src/cuda/quant/w4a16_decode_wgmma.cu \
           src/cuda/gemm/gemm_sm90_decode.cu; do
    [ -f "$root/$rel" ] || { fail "$rel missing"; continue; }
    fw=$(ptx_of "$rel" compute_90a)
    check "[ -n '$fw' ]" "$rel does not compile to compute_90a PTX"
    for ins in wgmma.mma_async cp.async.bulk.tensor setmaxnreg mbarrier.try_wait; do
        check "grep -q '$ins' '$fw'" "$rel PTX has no $ins"
    done
    case $rel in
    *decode*)
        for ins in barrier.cluster.arrive ld.shared::cluster; do
            check "grep -q '$ins' '$fw'" "$rel PTX has no $ins (cluster split-K)"
        done ;;
    esac
    case $rel in
    *gemm_sm90_decode.cu)
        # the cluster form also reads a weight stored [k, n] as an M-major A
        check "grep -q 'p, 1, 1, 1, 0;' '$fw'" "$rel PTX has no wgmma reading the weight M-major"
        # the narrow form's entries alone: x as the m64 A against weight
        # tiles by TMA, and no cluster step (it does not split K); the
        # 112-row instance multiplies each k16 step as N = 64 + 32 + 16
        awk '/^\.visible \.entry/{on = /sm90_decode_narrow/} on' "$fw" > "$ptxdir/narrow.ptx"
        check "grep -q 'wgmma.mma_async.sync.aligned.m64n32k16' '$ptxdir/narrow.ptx'" \
              "the narrow decode form's PTX has no wgmma m64n32k16"
        awk '/^\.visible \.entry/{on = /sm90_decode_narrow_kernelI6__halfLi112E/} on' "$fw" \
            > "$ptxdir/narrow112.ptx"
        for nn in 64 32 16; do
            check "[ \$(grep -c 'wgmma.mma_async.sync.aligned.m64n${nn}k16.f32.f16' '$ptxdir/narrow112.ptx') -eq 4 ]" \
                  "the 112-row narrow instance does not issue m64n${nn}k16 once per k16 step"
        done
        check "grep -q 'cp.async.bulk.tensor' '$ptxdir/narrow.ptx'" "the narrow decode form's PTX has no TMA"
        check "! grep -q 'barrier.cluster' '$ptxdir/narrow.ptx'" \
              "the narrow decode form's PTX has a cluster barrier" ;;
    esac
done
for src80 in "$root"/src/cuda/gemm/gemm_sm80_*.cu; do
    [ -f "$src80" ] || { fail "no src/cuda/gemm/gemm_sm80_*.cu"; break; }
    rel=${src80#"$root"/}
    grep -q "__global__" "$src80" || continue   # tables and helpers hold no kernels
    if grep -q "CUOPS_SM90A_DEVICE" "$src80"; then
        # sm_90-only members of the family (setmaxnreg): their body is in the sm_90a pass
        f80=$(ptx_of "$rel" compute_90a)
        check "[ -n '$f80' ]" "$rel does not compile to compute_90a PTX"
        for ins in setmaxnreg cp.async.mbarrier.arrive.noinc mbarrier.try_wait; do
            check "grep -q '$ins' '$f80'" "$rel PTX has no $ins"
        done
    else
        f80=$(ptx_of "$rel" compute_80)
        check "[ -n '$f80' ]" "$rel does not compile to compute_80 PTX"
    fi
    for ins in mma.sync.aligned.m16n8k16 ldmatrix cp.async; do
        check "grep -q '$ins' '$f80'" "$rel PTX has no $ins"
    done
done

# cuops-bench's environment knobs are parsed before any device is touched:
# an out-of-range CUOPS_BENCH_SCAN_SHIFT or CUOPS_BENCH_SCAN_OUT_SHIFT is a usage error
# (exit 2), and --help names both
bench=$(dirname "$lib")/../bin/cuops-bench
if [ -x "$bench" ]; then
    for var in CUOPS_BENCH_SCAN_SHIFT CUOPS_BENCH_SCAN_OUT_SHIFT; do
        for bad in 64 -1 x 3x ""; do
            env "$var=$bad" "$bench" reduce --quick > /dev/null 2>&1
            rc=$?
            check "[ $rc -eq 2 ]" "cuops-bench took $var='$bad' (exit $rc, not 2)"
        done
        check "'$bench' --help 2>&1 | grep -q $var" "cuops-bench --help does not name $var"
    done
    # a GEMM row records its operand layouts (--trans) in the JSON (without a
    # GPU the CPU reference backend runs the rows)
    "$bench" gemm --trans NN --shape 65x64x64 --dtype f16 --quick --json "$ptxdir/trans.json" \
        > /dev/null 2>&1
    check "grep -q '\"trans\": \"NN\"' '$ptxdir/trans.json'" \
          "cuops-bench's GEMM rows do not record --trans NN in the JSON"
    # every run records its board (null values without a GPU): which board,
    # its memory bus and cluster residency tell two machines of one name apart
    check "grep -q '\"board\": {\"uuid\": ' '$ptxdir/trans.json' && grep -q '\"mem_bus_bits\": ' '$ptxdir/trans.json' && grep -q '\"max_clusters\": {\"2\": ' '$ptxdir/trans.json'" \
          "cuops-bench's JSON has no board object (uuid, mem_bus_bits, max_clusters)"
    # a command line that selects no row is a usage error (exit 2), named
    "$bench" reduce --dtype f16 --quick > /dev/null 2> "$ptxdir/norow.err"
    rc=$?
    check "[ $rc -eq 2 ] && grep -q 'no row' '$ptxdir/norow.err'" \
          "cuops-bench reduce --dtype f16 selected no row but exited $rc without saying so"
    # without a GPU the CPU rows keep their own shapes: the options they ignore are named
    out=$("$bench" scan --shape 4096 --quick 2> "$ptxdir/cpu.err")
    if printf '%s' "$out" | grep -q 'no CUDA device'; then
        check "grep -q -- '--shape' '$ptxdir/cpu.err'" \
              "cuops-bench without a GPU ignored --shape without saying so"
    fi

else
    s=$((s+1)); echo "SKIP: no cuops-bench beside $lib: its environment checks skipped" >&2
fi

# SASS and fat-binary checks where cuobjdump exists (it does on GPU machines)
if [ -x "$CUOBJDUMP" ]; then
    elfs=$("$CUOBJDUMP" --list-elf "$lib" 2>/dev/null)
    check "printf '%s' \"\$elfs\" | grep -q 'sm_90a'" "no sm_90a machine code in the fat binary"
    check "printf '%s' \"\$elfs\" | grep -q 'sm_80'" "no sm_80 machine code in the fat binary"
    ptx=$("$CUOBJDUMP" --list-ptx "$lib" 2>/dev/null)
    check "printf '%s' \"\$ptx\" | grep -q 'compute_80'" "no compute_80 PTX in the fat binary"
    "$CUOBJDUMP" --dump-sass "$lib" > "$ptxdir/sass" 2>/dev/null
    census=$(awk '/Function : /{fn=$3} /HGMMA/{h[fn]++} /HMMA/{m[fn]++} /LDL|STL/{l[fn]++} END{for (k in h) print "HGMMA", k, h[k]; for (k in m) print "HMMA", k, m[k]; for (k in l) print "LOCAL", k, l[k]}' "$ptxdir/sass")
    check "printf '%s\n' \"\$census\" | grep -qE '^HGMMA .*sm90'" "the sm90 GEMM kernels contain no HGMMA in SASS"
    check "printf '%s\n' \"\$census\" | grep -qE '^HMMA '" "no HMMA (mma.sync) instruction in any kernel"
    printf '%s\n' "$census" | sort | head -n 60
else
    s=$((s+1)); echo "SKIP: cuobjdump not found: SASS and fat-binary checks skipped" >&2
fi

echo "test_binary: $p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
