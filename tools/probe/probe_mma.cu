/*
 * probe_mma.cu - tensor-core latency and throughput, measured the way seed 000
 * measured its MMA unit: a dependent chain timed with clock64 gives latency;
 * independent accumulators (ILP) over every SM, timed with events, give the
 * throughput ceiling that a GEMM built on that instruction can reach.
 *
 *  mma.sync m16n8k16 (f16 and bf16 in, f32 accumulate; f16 in, f16 accumulate)
 *  wgmma m64nNk16 (N = 64, 128, 256; f16 and bf16 in, f32 accumulate; sm_90a)
 *  wgmma m64n256k16 with A from registers (as the W4A16 kernels feed it),
 *  A fixed or rewritten before every group
 *
 * Each throughput kernel also reads clock64 and %globaltimer at its start and
 * end, so the reported FLOP/clk/SM uses the clock the SMs ran at under load.
 */
#include <stdint.h>
#include <string.h>

#include "probe.h"
#include "probe_wgmma_ops.cuh"
#include "cuda/gemm/gemm_sm80_common.cuh" /* the lean GEMM's fragment loaders */
#include "cuda/common/ptx_sm90.cuh"        /* wgmma m64n256k16 with A from registers */

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PROBE_SM90A 1
#else
#define PROBE_SM90A 0
#endif

static __device__ __forceinline__ uint64_t globaltimer_ns()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}

/* timing[0..1] = clock64 at start/end, timing[2..3] = globaltimer at start/end (block 0, thread 0) */
static __device__ __forceinline__ void stamp(long long *timing, int slot)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        timing[slot] = clock64();
        timing[2 + slot] = (long long)globaltimer_ns();
    }
}

enum { KIND_F16_F32ACC = 0, KIND_BF16_F32ACC = 1, KIND_F16_F16ACC = 2 };

template <int KIND>
static __device__ __forceinline__ void mma_16816(float *acc, const uint32_t *a, const uint32_t *b)
{
    if (KIND == KIND_F16_F32ACC) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else if (KIND == KIND_BF16_F32ACC) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else {
        /* f16 accumulate: the 4 f32 slots carry 2 packed f16x2 registers */
        uint32_t *c = reinterpret_cast<uint32_t *>(acc);
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, "
                     "{%6,%7}, {%0,%1};\n"
                     : "+r"(c[0]), "+r"(c[1])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
}

/* ILP independent accumulator chains per warp; every warp of every block runs `iters` steps. */
template <int KIND, int ILP>
__global__ void mma_sync_loop(int iters, float *sink, long long *timing)
{
    /* small nonzero operands (0x2000 = 2^-7 in f16, 0x3c00 bf16 = 2^-7) keep sums finite */
    uint32_t a[4], b[2];
    uint32_t pat = (KIND == KIND_BF16_F32ACC) ? 0x3c003c00u : 0x20002000u;
    for (int i = 0; i < 4; i++) a[i] = pat ^ ((threadIdx.x + i) & 7u);
    for (int i = 0; i < 2; i++) b[i] = pat ^ ((threadIdx.x * 3u + i) & 7u);
    float acc[ILP][4];
    for (int j = 0; j < ILP; j++)
        for (int i = 0; i < 4; i++) acc[j][i] = 0.0f;
    stamp(timing, 0);
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int j = 0; j < ILP; j++) mma_16816<KIND>(acc[j], a, b);
    }
    stamp(timing, 1);
    float s = 0.0f;
    for (int j = 0; j < ILP; j++)
        for (int i = 0; i < 4; i++) s += acc[j][i];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

/*
 * The inner loop of the 64x64-warp-tile mma.sync GEMM (gemm_sm80_lean.cu,
 * gemm_sm80_ws.cu) without its copies: 8 warps per CTA (two per scheduler,
 * as that GEMM runs), 32 accumulators of m16n8k16 per warp, 4 A and 8 B
 * fragments per k-step, serpentine order, fragments double buffered across
 * k-steps. LDSM = 0: the fragments stay in registers (the HMMA stream alone);
 * LDSM = 1: each k-step's next fragments are read from a swizzled 48 KB
 * stage with ldmatrix, as the GEMM does (8 LDSM.x4 per 32 HMMA). What the
 * GEMM's main loop can reach per clock, and what ldmatrix costs it.
 * RANDOM = 0: near-constant operands (few bits toggle); RANDOM = 1: every
 * operand a random value of magnitude 0.5..1 with a random sign and
 * mantissa, as a GEMM on real data feeds the tensor cores (the power, and so
 * possibly the clock and the MMA rate, depend on the toggling).
 */
static __device__ __forceinline__ uint32_t probe_hash(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* Two random 16-bit values of magnitude 0.5..1 (f16 or bf16), or the
 * near-constant pattern. */
template <int KIND, int RANDOM>
static __device__ __forceinline__ uint32_t probe_operand(uint32_t pat, uint32_t index)
{
    if (!RANDOM) return pat ^ (index & 31u);
    const uint32_t r = probe_hash(index * 2654435761u + 12345u);
    const uint32_t keep = KIND == KIND_BF16_F32ACC ? 0x807f807fu : 0x83ff83ffu;
    const uint32_t half = KIND == KIND_BF16_F32ACC ? 0x3f003f00u : 0x38003800u;
    return (r & keep) | half;
}

/* One k-step of the 64x64 warp tile, in the GEMM's serpentine order. */
template <int KIND>
static __device__ __forceinline__ void gemm_loop_mmas(float (&acc)[4][8][4], const uint32_t (&af)[4][4],
                                                      const uint32_t (&bf)[8][2])
{
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int jj = 0; jj < 8; jj++) {
            const int j = (i & 1) ? 7 - jj : jj;
            mma_16816<KIND>(acc[i][j], af[i], bf[j]);
        }
}

/* The 48 KB stage the GEMM-loop kernels read (128 A rows + 256 B rows of
 * 64 elements, the lean GEMM's swizzled layout) and one warp's place in it:
 * the warp's A and B tiles (2 x 4 warps of 64 x 64) and its ldmatrix lane
 * offsets. */
typedef sm80_tile_layout<128, 64, false> gemm_loop_la;
typedef sm80_tile_layout<256, 64, false> gemm_loop_lb;
#define GEMM_LOOP_TILE (gemm_loop_la::BYTES + gemm_loop_lb::BYTES)

struct gemm_loop_warp {
    uint32_t a_tile, b_tile, a_lane, b_lane;

    /* fragments of k-step ks (0..3) of the stage */
    __device__ __forceinline__ void frags(uint32_t (&af)[4][4], uint32_t (&bf)[8][2], int ks) const
    {
        sm80_lean_a_frags<gemm_loop_la, 4>(af, a_tile, a_lane, ks);
        sm80_lean_b_frags<gemm_loop_lb, 8>(bf, b_tile, b_lane, ks);
    }
};

/* Fill the stage at `smem` with probe operands (every thread of the CTA),
 * then the calling warp's place in it. */
template <int KIND, int RANDOM>
static __device__ __forceinline__ gemm_loop_warp gemm_loop_setup(uint8_t *smem)
{
    const uint32_t pat = (KIND == KIND_BF16_F32ACC) ? 0x3c003c00u : 0x20002000u;
    uint32_t *s32 = reinterpret_cast<uint32_t *>(smem);
    for (int i = threadIdx.x; i < GEMM_LOOP_TILE / 4; i += blockDim.x)
        s32[i] = probe_operand<KIND, RANDOM>(pat, (uint32_t)i);
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint32_t base = cuops_smem_addr(smem);
    gemm_loop_warp w;
    w.a_tile = base + (uint32_t)((warp / 4) * 64 * gemm_loop_la::STRIDE * 2);
    w.b_tile = base + gemm_loop_la::BYTES + (uint32_t)((warp % 4) * 64 * gemm_loop_lb::STRIDE * 2);
    w.a_lane = sm80_lean_lane_off<gemm_loop_la, true>(lane & 15, lane >> 4);
    w.b_lane = sm80_lean_lane_off<gemm_loop_lb, true>(((lane >> 4) << 3) + (lane & 7), (lane >> 3) & 1);
    return w;
}

/* The accumulators' sum, so the compiler keeps every MMA. */
static __device__ __forceinline__ void gemm_loop_sink(const float (&acc)[4][8][4], float *sink)
{
    float s = 0.0f;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            for (int e = 0; e < 4; e++) s += acc[i][j][e];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int KIND, int LDSM, int RANDOM>
__global__ void __launch_bounds__(256, 1) mma_gemm_loop(int iters, float *sink, long long *timing)
{
    extern __shared__ __align__(1024) uint8_t smem[];
    const gemm_loop_warp w = gemm_loop_setup<KIND, RANDOM>(smem);
    const uint32_t pat = (KIND == KIND_BF16_F32ACC) ? 0x3c003c00u : 0x20002000u;
    uint32_t af[2][4][4], bf[2][8][2];
#pragma unroll
    for (int u = 0; u < 2; u++) {
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                af[u][i][e] = probe_operand<KIND, RANDOM>(pat, threadIdx.x * 64u + 16 * u + 4 * i + e);
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                bf[u][j][e] = probe_operand<KIND, RANDOM>(pat, threadIdx.x * 64u + 32 + 16 * u + 2 * j + e);
    }
    float acc[4][8][4];
    sm80_zero_acc(acc);
    stamp(timing, 0);
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int ks = 0; ks < 4; ks++) {
            const int buf = ks & 1, nbuf = buf ^ 1;
            if (LDSM) w.frags(af[nbuf], bf[nbuf], (ks + 1) & 3);
            gemm_loop_mmas<KIND>(acc, af[buf], bf[buf]);
        }
    }
    stamp(timing, 1);
    gemm_loop_sink(acc, sink);
}

/*
 * The same loop (ldmatrix, random operands) with the GEMM's global traffic
 * beside it: per 4 k-steps (one 64-deep k-tile) every thread issues its 12
 * line-complete 16-byte cp.async of a 48 KB tile (128 + 256 rows of 128
 * bytes) into a 3-slot ring of shared memory the loop never reads, commits
 * them and keeps one tile in flight behind them, as the lean GEMM does. No
 * barrier, no read of the copied bytes: what the copies cost the loop by
 * themselves (their shared-memory writes, the LSU and MIO slots, the global
 * traffic). The source is g_loop_src, `mask + 1` bytes: small enough to stay
 * in L2 or large enough to come from DRAM; each CTA walks its own offset.
 */
__device__ const char *g_loop_src;
__device__ unsigned long long g_loop_mask;

/* A CTA's walk over g_loop_src: tile after tile from its own start, wrapping
 * at the buffer's end (a power of two, so offsets that are multiples of a
 * piece size never straddle it). */
struct gemm_loop_source {
    const char *src;
    unsigned long long mask, off;
    __device__ gemm_loop_source()
        : src(g_loop_src), mask(g_loop_mask), off((unsigned long long)blockIdx.x * 7919ull * GEMM_LOOP_TILE)
    {
    }
    __device__ const char *at(unsigned long long o) const { return src + ((off + o) & mask); }
    __device__ void next_tile() { off = (off + GEMM_LOOP_TILE) & mask; }
};

template <int KIND>
__global__ void __launch_bounds__(256, 1) mma_gemm_loop_copies(int iters, float *sink, long long *timing)
{
    constexpr int TILE = GEMM_LOOP_TILE; /* 48 KB */
    extern __shared__ __align__(1024) uint8_t smem[];
    const gemm_loop_warp w = gemm_loop_setup<KIND, 1>(smem);
    const uint32_t base = cuops_smem_addr(smem);
    /* copies: thread t, unit j (0..11): row t / 8 + 32 j of the 384-row tile, chunk t % 8 */
    const uint32_t ring = base + TILE;
    const uint32_t dst0 = gemm_loop_la::offset(threadIdx.x / 8, threadIdx.x % 8);
    gemm_loop_source src;
    uint32_t af[2][4][4], bf[2][8][2];
    w.frags(af[0], bf[0], 0);
    float acc[4][8][4];
    sm80_zero_acc(acc);
    int slot = 0;
    stamp(timing, 0);
    for (int it = 0; it < iters; it++) {
        const uint32_t dst = ring + slot * TILE + dst0;
        const unsigned long long o = threadIdx.x / 8 * 128 + threadIdx.x % 8 * 16;
#pragma unroll
        for (int ks = 0; ks < 4; ks++) {
            const int buf = ks & 1, nbuf = buf ^ 1;
            /* this k-step's three of the tile's twelve copies */
#pragma unroll
            for (int u = 0; u < 3; u++) {
                const int j = ks * 3 + u;
                cuops_cp_async_16_zfill(dst + j * 32 * 128, src.at(o + j * 32 * 128), 16);
            }
            w.frags(af[nbuf], bf[nbuf], (ks + 1) & 3);
            gemm_loop_mmas<KIND>(acc, af[buf], bf[buf]);
        }
        cuops_cp_async_commit();
        cuops_cp_async_wait<1>();
        src.next_tile();
        slot = slot == 2 ? 0 : slot + 1;
    }
    cuops_cp_async_wait<0>();
    stamp(timing, 1);
    gemm_loop_sink(acc, sink);
}

/*
 * The same loop and the same 48 KB per k-tile into the same 3-slot ring, moved
 * by the bulk-copy engine instead: one thread announces the tile on its slot's
 * mbarrier and issues one 16 KB cp.async.bulk in each of the first three
 * k-steps; after the tile's four k-steps every thread waits for the tile
 * before it (one tile kept in flight, as above), and each warp's lane 0 says
 * so on the slot's `empty` barrier, which thread 0 waits on before it
 * announces the slot's next tile: the warps run the loop unsynchronized, and
 * a warp two tiles behind must not find its slot's barrier a phase further
 * on (thread 0 waits there only if a warp lags that far). The shared-memory
 * bytes written are the same; the 12 copies per thread and their address
 * math are gone. Against `mma_gemm_loop_copies` it splits the copies' cost
 * into their issue (LSU/MIO slots, which this form does not spend) and their
 * writes into shared memory beside ldmatrix's reads (which it still makes).
 * sm_90a only (the mbarrier helpers), like the wgmma loops.
 */
template <int KIND>
__global__ void __launch_bounds__(256, 1) mma_gemm_loop_bulk(int iters, float *sink, long long *timing)
{
#if PROBE_SM90A
    constexpr int TILE = GEMM_LOOP_TILE, PIECE = TILE / 3; /* 48 KB in three 16 KB pieces */
    constexpr int WARPS = 8;
    extern __shared__ __align__(1024) uint8_t smem[];
    __shared__ __align__(8) uint64_t bars[6]; /* full[3] (tile landed), empty[3] (every warp past it) */
    const gemm_loop_warp w = gemm_loop_setup<KIND, 1>(smem); /* ends with __syncthreads */
    const uint32_t ring = cuops_smem_addr(smem) + TILE;
    const uint32_t bar0 = cuops_smem_addr(bars), empty0 = bar0 + 24;
    if (threadIdx.x == 0) {
        for (int i = 0; i < 3; i++) {
            cuops_mbar_init(bar0 + 8 * i, 1);
            cuops_mbar_init(empty0 + 8 * i, WARPS);
        }
        cuops_mbar_init_fence();
    }
    __syncthreads();
    gemm_loop_source src; /* tiles and pieces start at multiples of PIECE: none straddles the end */
    uint32_t af[2][4][4], bf[2][8][2];
    w.frags(af[0], bf[0], 0);
    float acc[4][8][4];
    sm80_zero_acc(acc);
    int slot = 0;
    stamp(timing, 0);
    for (int it = 0; it < iters; it++) {
        const uint32_t bar = bar0 + 8 * slot;
#pragma unroll
        for (int ks = 0; ks < 4; ks++) {
            const int buf = ks & 1, nbuf = buf ^ 1;
            if (ks < 3 && threadIdx.x == 0) {
                if (ks == 0) {
                    /* the slot's last tile (it - 3) passed by every warp */
                    if (it >= 3) cuops_mbar_wait(empty0 + 8 * slot, (uint32_t)((it - 3) / 3) & 1u);
                    cuops_mbar_arrive_expect_tx(bar, TILE);
                }
                cuops_bulk_load(ring + slot * TILE + ks * PIECE, src.at(ks * PIECE), PIECE, bar);
            }
            w.frags(af[nbuf], bf[nbuf], (ks + 1) & 3);
            gemm_loop_mmas<KIND>(acc, af[buf], bf[buf]);
        }
        /* the tile before this one has landed (its slot is refilled two tiles later) */
        if (it > 0) {
            const int prev = it - 1;
            cuops_mbar_wait(bar0 + 8 * (prev % 3), (uint32_t)(prev / 3) & 1u);
            if ((threadIdx.x & 31) == 0) cuops_mbar_arrive(empty0 + 8 * (prev % 3));
        }
        src.next_tile();
        slot = slot == 2 ? 0 : slot + 1;
    }
    if (iters > 0) cuops_mbar_wait(bar0 + 8 * ((iters - 1) % 3), (uint32_t)((iters - 1) / 3) & 1u);
    stamp(timing, 1);
    gemm_loop_sink(acc, sink);
#else
    (void)iters; (void)sink; (void)timing;
#endif
}

/* One warpgroup per 128 threads issues back-to-back wgmmas into one accumulator
 * set, committing every 4 and keeping one group in flight, as a GEMM mainloop does. */
template <int N, int BF16>
__global__ void wgmma_loop(int iters, float *sink, long long *timing)
{
#if PROBE_SM90A
    extern __shared__ __align__(1024) uint8_t smem[];
    const int a_bytes = 64 * 16 * 2, b_bytes = N * 16 * 2;
    uint16_t *s16 = reinterpret_cast<uint16_t *>(smem);
    for (int i = threadIdx.x; i < (a_bytes + b_bytes) / 2; i += blockDim.x)
        s16[i] = (uint16_t)((BF16 ? 0x3c00u : 0x2000u) ^ (i & 7u));
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    /* no-swizzle K-major descriptors: core matrices of 8 rows x 16 bytes;
     * LBO = 128 B (next core matrix along K), SBO = 256 B (next 8-row group) */
    uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    uint64_t desc_a = ((uint64_t)((base >> 4) & 0x3fff)) | ((uint64_t)(128 >> 4) << 16) |
                      ((uint64_t)(256 >> 4) << 32);
    uint64_t desc_b = ((uint64_t)(((base + a_bytes) >> 4) & 0x3fff)) |
                      ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    float d[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; i++) d[i] = 0.0f;
    stamp(timing, 0);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < 4; u++) {
            if (N == 64) { if (BF16) wgmma_m64n64k16_bf16(d, desc_a, desc_b); else wgmma_m64n64k16_f16(d, desc_a, desc_b); }
            if (N == 128) { if (BF16) wgmma_m64n128k16_bf16(d, desc_a, desc_b); else wgmma_m64n128k16_f16(d, desc_a, desc_b); }
            if (N == 256) { if (BF16) wgmma_m64n256k16_bf16(d, desc_a, desc_b); else wgmma_m64n256k16_f16(d, desc_a, desc_b); }
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    stamp(timing, 1);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < N / 2; i++) s += d[i];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
#else
    (void)iters; (void)sink; (void)timing;
#endif
}

/* The same loop with A from registers, B from shared memory, the form the
 * W4A16 kernels issue: N = 256 (the prefill kernel) or N = 64 (the decode
 * kernel at m = 64, whose x tile is wgmma's N). REWRITE = 0: one A set, never
 * changed (the instruction's own rate). REWRITE = 1: two A sets used by
 * alternate groups, each rewritten by 16 ALU ops before its group (as a
 * dequantizing kernel must, after the wait that retires the set's previous
 * group). */
template <int N, int BF16, int REWRITE>
__global__ void wgmma_rs_loop(int iters, float *sink, long long *timing)
{
#if PROBE_SM90A
    extern __shared__ __align__(1024) uint8_t smem[];
    const int b_bytes = N * 16 * 2;
    uint16_t *s16 = reinterpret_cast<uint16_t *>(smem);
    for (int i = threadIdx.x; i < b_bytes / 2; i += blockDim.x)
        s16[i] = (uint16_t)((BF16 ? 0x3c00u : 0x2000u) ^ (i & 7u));
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    const uint64_t desc_b = ((uint64_t)((base >> 4) & 0x3fff)) | ((uint64_t)(128 >> 4) << 16) |
                            ((uint64_t)(256 >> 4) << 32);
    const uint32_t seed = (BF16 ? 0x3c003c00u : 0x20002000u) ^ (threadIdx.x & 7u);
    uint32_t a0[4][4], a1[4][4];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int r = 0; r < 4; r++) a0[j][r] = a1[j][r] = seed ^ (uint32_t)(j * 4 + r);
    float d[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; i++) d[i] = 0.0f;
    stamp(timing, 0);
    auto group = [&](uint32_t (&a)[4][4], int it) {
        if (REWRITE) {
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int r = 0; r < 4; r++) a[j][r] = seed ^ (uint32_t)((it + j * 4 + r) & 7);
        }
        cuops_wgmma_fence();
#pragma unroll
        for (int j = 0; j < 4; j++) cuops_wgmma_m64nk16<N, !BF16>(d, a[j], desc_b, 1);
        cuops_wgmma_commit();
        cuops_wgmma_wait<1>();
    };
    for (int it = 0; it < iters; it += 2) {
        group(a0, it);
        group(REWRITE ? a1 : a0, it + 1);
        /* the set's values must not be forgotten while its group may run */
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) asm volatile("" ::"r"(a0[j][r]), "r"(a1[j][r]) : "memory");
    }
    cuops_wgmma_wait<0>();
    stamp(timing, 1);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < N / 2; i++) s += d[i];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
#else
    (void)iters; (void)sink; (void)timing;
#endif
}

typedef void (*loop_kernel_t)(int, float *, long long *);

/* Runs `kernel` and returns {ms, clock MHz measured in block 0, cycles per iteration}. */
static void run_loop(loop_kernel_t kernel, int blocks, int threads, size_t smem, int iters,
                     double *ms, double *mhz, double *cycles_per_iter)
{
    float *sink;
    long long *timing, host[4];
    PROBE_CHECK(cudaMalloc(&sink, sizeof(float) * blocks * threads));
    PROBE_CHECK(cudaMalloc(&timing, sizeof(long long) * 4));
    if (smem > 48 * 1024)
        PROBE_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    *ms = probe_time_ms([&] { kernel<<<blocks, threads, smem>>>(iters, sink, timing); }, 5);
    PROBE_CHECK(cudaMemcpy(host, timing, sizeof(host), cudaMemcpyDeviceToHost));
    double cyc = (double)(host[1] - host[0]), ns = (double)(host[3] - host[2]);
    *mhz = ns > 0 ? cyc / ns * 1e3 : 0.0;
    *cycles_per_iter = cyc / iters;
    cudaFree(sink);
    cudaFree(timing);
}

template <int KIND> static loop_kernel_t mma_kernel(int ilp)
{
    switch (ilp) {
    case 1: return mma_sync_loop<KIND, 1>;
    case 2: return mma_sync_loop<KIND, 2>;
    case 4: return mma_sync_loop<KIND, 4>;
    default: return mma_sync_loop<KIND, 8>;
    }
}

/* wgmma_rs_loop at N for the type (bf) and A form (rw: rewritten per group) */
template <int N> static loop_kernel_t wgmma_rs_kernel(int bf, int rw)
{
    return bf ? (rw ? wgmma_rs_loop<N, 1, 1> : wgmma_rs_loop<N, 1, 0>)
              : (rw ? wgmma_rs_loop<N, 0, 1> : wgmma_rs_loop<N, 0, 0>);
}

static loop_kernel_t mma_kernel_of(int kind, int ilp)
{
    if (kind == KIND_F16_F32ACC) return mma_kernel<KIND_F16_F32ACC>(ilp);
    if (kind == KIND_BF16_F32ACC) return mma_kernel<KIND_BF16_F32ACC>(ilp);
    return mma_kernel<KIND_F16_F16ACC>(ilp);
}

/* One GEMM-loop kernel over every SM (one CTA of 8 warps each, 2048 k-tiles):
 * recorded as `series`, printed as a row `kind fragments operands` + note. */
static void run_gemm_loop(loop_kernel_t k, size_t smem, const char *series, const char *kind,
                          const char *fragments, const char *operands, const char *note)
{
    const int sms = g_dev.prop.multiProcessorCount, iters = 2048;
    double ms, mhz, cpi;
    run_loop(k, sms, 256, smem, iters, &ms, &mhz, &cpi);
    const double flop = 4096.0 * 128 * iters * 8 * (double)sms;
    const double tflops = flop / (ms * 1e-3) / 1e12;
    const double per_clk_sm = flop / (ms * 1e-3) / (mhz * 1e6) / sms;
    probe_add("mma_gemm_loop", series, 8, tflops, "TFLOP/s", per_clk_sm, "FLOP/clk/SM");
    printf("%-14s %10s %8s %12.0f %12.1f %9.0f%s\n", kind, fragments, operands, per_clk_sm, tflops,
           mhz, note);
}

void probe_mma(void)
{
    const int sms = g_dev.prop.multiProcessorCount;
    const char *kind_names[3] = {"f16 f32acc", "bf16 f32acc", "f16 f16acc"};
    printf("\n== mma.sync m16n8k16 (4096 FLOP per warp instruction)\n");
    printf("%-14s %5s %6s %10s %12s %12s %9s\n", "kind", "ILP", "warps", "cyc/iter", "FLOP/clk/SM", "TFLOP/s",
           "MHz");
    for (int kind = 0; kind < 3; kind++) {
        /* latency: one warp, one dependent chain */
        double ms, mhz, cpi;
        run_loop(mma_kernel_of(kind, 1), 1, 32, 0, 4096, &ms, &mhz, &cpi);
        char series[64];
        snprintf(series, sizeof series, "mma.sync %s latency", kind_names[kind]);
        probe_add("mma_latency", series, 1, cpi, "cycles", -1, "");
        printf("%-14s %5d %6d %10.1f %12s %12s %9.0f   <- latency\n", kind_names[kind], 1, 1, cpi, "-", "-", mhz);
        const int ilps[4] = {1, 2, 4, 8};
        const int warps_list[3] = {4, 8, 16};
        for (int wi = 0; wi < 3; wi++) {
            for (int ii = 0; ii < 4; ii++) {
                int ilp = ilps[ii], warps = warps_list[wi];
                if (warps == 16 && ilp < 4) continue;
                int iters = 16384 / ilp;
                int blocks = 2 * sms;
                run_loop(mma_kernel_of(kind, ilp), blocks, warps * 32, 0, iters, &ms, &mhz, &cpi);
                double flop = 4096.0 * ilp * iters * warps * (double)blocks;
                double tflops = flop / (ms * 1e-3) / 1e12;
                double per_clk_sm = flop / (ms * 1e-3) / (mhz * 1e6) / sms;
                snprintf(series, sizeof series, "mma.sync %s warps/CTA=%d", kind_names[kind], warps);
                probe_add("mma_sync", series, ilp, tflops, "TFLOP/s", per_clk_sm, "FLOP/clk/SM");
                printf("%-14s %5d %6d %10.1f %12.0f %12.1f %9.0f\n", kind_names[kind], ilp, warps, cpi,
                       per_clk_sm, tflops, mhz);
            }
        }
    }
    printf("\n== mma.sync inside the 64x64-warp-tile GEMM loop (8 warps per SM, 32 accumulators each)\n");
    printf("%-14s %10s %8s %12s %12s %9s\n", "kind", "fragments", "operands", "FLOP/clk/SM", "TFLOP/s", "MHz");
    for (int kind = 0; kind < 2; kind++) {
        for (int mode = 0; mode < 4; mode++) {
            const int ldsm = mode & 1, rnd = mode >> 1;
            loop_kernel_t k;
            if (kind == 0)
                k = mode == 0 ? mma_gemm_loop<KIND_F16_F32ACC, 0, 0> : mode == 1 ? mma_gemm_loop<KIND_F16_F32ACC, 1, 0>
                  : mode == 2 ? mma_gemm_loop<KIND_F16_F32ACC, 0, 1> : mma_gemm_loop<KIND_F16_F32ACC, 1, 1>;
            else
                k = mode == 0 ? mma_gemm_loop<KIND_BF16_F32ACC, 0, 0> : mode == 1 ? mma_gemm_loop<KIND_BF16_F32ACC, 1, 0>
                  : mode == 2 ? mma_gemm_loop<KIND_BF16_F32ACC, 0, 1> : mma_gemm_loop<KIND_BF16_F32ACC, 1, 1>;
            char series[96];
            snprintf(series, sizeof series, "mma.sync %s gemm loop 64x64 %s%s", kind_names[kind],
                     ldsm ? "+ldmatrix" : "registers", rnd ? " random" : "");
            run_gemm_loop(k, GEMM_LOOP_TILE, series, kind_names[kind], ldsm ? "ldmatrix" : "registers",
                          rnd ? "random" : "pattern", "");
        }
    }
    /* the loop beside the GEMM's copies: from a 16 MB buffer (L2) and a 1 GB one (DRAM) */
    if (g_dev.prop.sharedMemPerBlockOptin >= 4 * GEMM_LOOP_TILE) {
        const size_t sizes[2] = {(size_t)16 << 20, (size_t)1 << 30};
        for (int si = 0; si < 2; si++) {
            char *buf = NULL;
            PROBE_CHECK(cudaMalloc(&buf, sizes[si]));
            PROBE_CHECK(cudaMemset(buf, 0x2c, sizes[si]));
            const char *cbuf = buf;
            unsigned long long mask = sizes[si] - 1;
            PROBE_CHECK(cudaMemcpyToSymbol(g_loop_src, &cbuf, sizeof cbuf));
            PROBE_CHECK(cudaMemcpyToSymbol(g_loop_mask, &mask, sizeof mask));
            for (int kind = 0; kind < 2; kind++) {
                loop_kernel_t k = kind == 0 ? mma_gemm_loop_copies<KIND_F16_F32ACC>
                                            : mma_gemm_loop_copies<KIND_BF16_F32ACC>;
                char series[96], note[64];
                snprintf(series, sizeof series, "mma.sync %s gemm loop 64x64 +ldmatrix random +copies %s",
                         kind_names[kind], si ? "DRAM" : "L2");
                snprintf(note, sizeof note, "   <- + 48 KB of cp.async per k-tile from %s", si ? "DRAM" : "L2");
                run_gemm_loop(k, 4 * GEMM_LOOP_TILE, series, kind_names[kind], "ldmatrix", "random", note);
                if (g_dev.prop.major != 9) continue; /* sm_90a code only, as the wgmma loops */
                k = kind == 0 ? mma_gemm_loop_bulk<KIND_F16_F32ACC> : mma_gemm_loop_bulk<KIND_BF16_F32ACC>;
                snprintf(series, sizeof series, "mma.sync %s gemm loop 64x64 +ldmatrix random +bulk %s",
                         kind_names[kind], si ? "DRAM" : "L2");
                snprintf(note, sizeof note, "   <- the same 48 KB by cp.async.bulk from %s", si ? "DRAM" : "L2");
                run_gemm_loop(k, 4 * GEMM_LOOP_TILE, series, kind_names[kind], "ldmatrix", "random", note);
            }
            cudaFree(buf);
        }
    }
    if (g_dev.prop.major != 9) {
        printf("\n(wgmma needs sm_90a: skipped on sm_%d%d)\n", g_dev.prop.major, g_dev.prop.minor);
        return;
    }
    printf("\n== wgmma m64nNk16 (f32 accumulate, A and B from shared memory)\n");
    printf("%-6s %5s %10s %10s %12s %12s %9s\n", "type", "N", "WG/CTA", "cyc/wgmma", "FLOP/clk/SM", "TFLOP/s",
           "MHz");
    for (int bf = 0; bf < 2; bf++) {
        const int ns[3] = {64, 128, 256};
        for (int ni = 0; ni < 3; ni++) {
            int n = ns[ni];
            loop_kernel_t k = bf ? (n == 64 ? wgmma_loop<64, 1> : n == 128 ? wgmma_loop<128, 1> : wgmma_loop<256, 1>)
                                 : (n == 64 ? wgmma_loop<64, 0> : n == 128 ? wgmma_loop<128, 0> : wgmma_loop<256, 0>);
            size_t smem = 64 * 16 * 2 + (size_t)n * 16 * 2;
            double ms, mhz, cpi;
            /* latency-ish: one warpgroup alone, 4 wgmmas per commit, one group kept in flight */
            run_loop(k, 1, 128, smem, 256, &ms, &mhz, &cpi);
            char series[64];
            snprintf(series, sizeof series, "wgmma %s N=%d single warpgroup", bf ? "bf16" : "f16", n);
            probe_add("wgmma_latency", series, n, cpi / 4.0, "cycles/wgmma", -1, "");
            printf("%-6s %5d %10d %10.1f %12s %12s %9.0f   <- one warpgroup\n", bf ? "bf16" : "f16", n, 1, cpi / 4.0,
                   "-", "-", mhz);
            const int wgs[2] = {1, 2};
            for (int wi = 0; wi < 2; wi++) {
                int iters = 8192 * 64 / n;
                run_loop(k, sms, 128 * wgs[wi], smem, iters, &ms, &mhz, &cpi);
                double flop = 2.0 * 64 * n * 16 * 4.0 * iters * wgs[wi] * sms;
                double tflops = flop / (ms * 1e-3) / 1e12;
                double per_clk_sm = flop / (ms * 1e-3) / (mhz * 1e6) / sms;
                snprintf(series, sizeof series, "wgmma %s N=%d WG/CTA=%d", bf ? "bf16" : "f16", n, wgs[wi]);
                probe_add("wgmma", series, n, tflops, "TFLOP/s", per_clk_sm, "FLOP/clk/SM");
                printf("%-6s %5d %10d %10.1f %12.0f %12.1f %9.0f\n", bf ? "bf16" : "f16", n, wgs[wi], cpi / 4.0,
                       per_clk_sm, tflops, mhz);
            }
        }
    }
    printf("\n== wgmma m64nNk16 with A from registers (B from shared memory)\n");
    printf("%-6s %5s %7s %-26s %10s %12s %12s %9s\n", "type", "N", "WG/CTA", "A", "cyc/wgmma", "FLOP/clk/SM",
           "TFLOP/s", "MHz");
    /* N = 256 with two warpgroups (the prefill kernel's CTA; its 128 accumulators
     * per thread leave no room for four), N = 64 with two and four (the decode
     * kernel at m = 64 runs four consumer warpgroups) */
    const int rs_n[3] = {256, 64, 64}, rs_wg[3] = {2, 2, 4};
    for (int ci = 0; ci < 3; ci++)
        for (int bf = 0; bf < 2; bf++)
            for (int rw = 0; rw < 2; rw++) {
                const int n = rs_n[ci], wg = rs_wg[ci];
                const loop_kernel_t k = n == 256 ? wgmma_rs_kernel<256>(bf, rw) : wgmma_rs_kernel<64>(bf, rw);
                const int iters = 8192 * 256 / n / wg * 2;
                double ms, mhz, cpi;
                run_loop(k, sms, 128 * wg, (size_t)n * 16 * 2, iters, &ms, &mhz, &cpi);
                double flop = 2.0 * 64 * n * 16 * 4.0 * iters * wg * sms;
                double tflops = flop / (ms * 1e-3) / 1e12;
                double per_clk_sm = flop / (ms * 1e-3) / (mhz * 1e6) / sms;
                char series[96];
                snprintf(series, sizeof series, "wgmma rs %s N=%d WG/CTA=%d %s", bf ? "bf16" : "f16", n, wg,
                         rw ? "A rewritten per group" : "A fixed");
                probe_add("wgmma_rs", series, n, tflops, "TFLOP/s", per_clk_sm, "FLOP/clk/SM");
                printf("%-6s %5d %7d %-26s %10.1f %12.0f %12.1f %9.0f\n", bf ? "bf16" : "f16", n, wg,
                       rw ? "rewritten per group" : "fixed", cpi / 4.0, per_clk_sm, tflops, mhz);
            }
}
