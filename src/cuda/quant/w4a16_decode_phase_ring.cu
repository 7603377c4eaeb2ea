/*
 * w4a16_decode_phase_ring.cu - the m <= 16 decode W4A16 GEMM with the
 * weight streamed by a producer warp per CTA through a ring of bulk copies,
 * and x streamed beside it in phases of K by a second producer warp, so
 * that x need not be resident in shared memory (docs/w4a16.md, "Change 7").
 *
 * Variants "w4a16_decode_phase_ring" (CW = 16 math warps; auto on sm_90 for
 * 5 <= m <= 16 where w4a16_decode_phase_ring_auto holds; where every CTA's
 * strips fit fewer quads than its pass, the instance with the fewest that
 * hold them: w4a16_phase_ring_instance_quads), "..._w8" (CW = 8, a study
 * form) and "..._q1" (one quad per pass whatever the strips, a study form:
 * slower where a CTA has more than 4 strips, P204).
 *
 * Why. w4a16_decode_bulk_ring keeps all of x (m x k x 2 bytes) in shared
 * memory beside its ring, which caps it at m <= 8 (at m = 16, k = 8192, x
 * alone is 256 KB). The per-warp kernel that serves m = 16 instead
 * (w4a16_decode_warp) streamed the weight at half of copy speed or less
 * there (docs/w4a16.md). This kernel keeps the bulk ring's stream shape
 * (one CTA per SM, a contiguous run of whole strips, ~32 KB stages from a
 * producer that only waits for free slots) but walks the CTA's strips
 * phase by phase: a phase is 16 tiles (1024 k) of every strip of the CTA,
 * and only that phase's x (m x 1024 x 2 bytes, 32 KB at m = 16) is in
 * shared memory, in 3 (m <= 8) or 2 slots, loaded by TMA boxes of 64 k x 8
 * or 16 rows (128-byte swizzle: chunk c of row r at c ^ (r & 7), the layout
 * w4w_load_x reads without bank conflicts; rows past m and k past k arrive
 * as zeros) by its own producer warp, so that the weight stream never
 * waits for an x slot.
 *  - stage: 4 strips x the phase's 16 tiles (4 x 8 KB of weight) plus the
 *    scale pairs and zero words of their groups: 3 bulk copies per strip on
 *    the stage's full barrier (at m <= 8 issued by 4 producer lanes, one
 *    strip each);
 *  - math warp w takes strip w / (CW/4) of each stage and its k part
 *    w % (CW/4): TPW = 16 / (CW/4) consecutive tiles. Its accumulators for
 *    the pass's (up to W4P_QUADS) strip quads live in registers across the
 *    phases, each tile's mma chain starting from zero and added in fp32
 *    with the group's scale (w4a16_decode_bulk_ring's tile math, x rows in
 *    two fragments at m > 8);
 *  - a pass is up to W4P_QUADS x 4 strips; a CTA with more strips makes
 *    several passes, each reading x again (from L2);
 *  - at the end of a pass the CW/4 k parts of each strip are added in k
 *    order through shared memory and y is stored: the sum order is fixed,
 *    so y is bitwise reproducible.
 *
 * Serves (w4a16_decode_phase_ring_serves): sm_90, m <= 16, f16/bf16,
 * group_size 64 * 2^p or one group per row, k < 2^29 (x that TMA cannot
 * read in place is packed into the workspace first, w4_wgmma_x_map).
 */
#include <string.h>

#include "cuda/common/cluster_splitk.cuh"
#include "cuda/common/ptx_sm90.cuh"
#include "cuda/gemm/gemm_sm90.h"
#include "cuda/quant/w4a16_decode_phase_ring_plan.h"
#include "cuda/quant/w4a16_layout.cuh"
#include "cuda/quant/w4a16_warp_tile.cuh"
#include "cuda/quant/w4a16_wgmma.cuh"

#define W4P_STRIPS 4        /* strips per stage */
#define W4P_PHASE_TILES 16  /* 64-k tiles of each strip per phase */
static_assert(W4P_PHASE_TILES == W4A16_PHASE_RING_PHASE_TILES, "the plan's phase");
static_assert(W4P_STRIPS == W4A16_PHASE_RING_QUAD_STRIPS, "the plan's quad");
static_assert(W4A16_PHASE_RING_MAX_SPLITS == CUOPS_CLUSTER_MAX_SPLITS, "the plan's cluster size");
#define W4P_PHASE_TILES_LOG2 4
/* strip quads whose sums a math thread holds in registers: 16 strips per
 * pass, but 8 with 16 math warps at m > 8 (96 registers each: 4 quads
 * spilled) */
#define W4P_QUADS(CW, M8) ((CW) == 16 && (M8) == 2 ? 2 : 4)
#define W4P_WEIGHT_BYTES (W4P_STRIPS * W4P_PHASE_TILES * W4_TILE_BYTES) /* 32 KB */
/* per strip: at most one group per tile, 8 scale pairs of 4 bytes each */
#define W4P_SCALE_STRIDE (W4P_PHASE_TILES * 32)
#define W4P_SCALE_BYTES (W4P_STRIPS * W4P_SCALE_STRIDE)
/* per strip: the groups' zero words (8 bytes each) copied from the 16-byte
 * boundary at or below the first: up to 8 + 128 bytes, rounded to 16 */
#define W4P_ZERO_STRIDE 160
#define W4P_ZERO_BYTES (W4P_STRIPS * W4P_ZERO_STRIDE)
#define W4P_STAGE_BYTES (W4P_WEIGHT_BYTES + W4P_SCALE_BYTES + W4P_ZERO_BYTES) /* 35456 */
#define W4P_MAX_STAGES 6
#define W4P_MIN_STAGES 3
/* x phase slots: 3 (16 KB each) at m <= 8, 2 (32 KB) at m > 8 */
#define W4P_MAX_XSLOTS 3
/* static shared memory (the barriers), slack, and the 1024-byte alignment
 * of the x slots, kept out of the budget */
#define W4P_RESERVED_SMEM (512 + 1024)

typedef struct w4p_args {
    const uint8_t *packed;
    void *y;
    int64_t ldy;
    int64_t n;
    int64_t scale_offset, zero_offset;
    int ktiles, num_groups;
    int m;
    int strips;          /* strips holding rows < n */
    int strips_per_cta;
    int tpg_log2;        /* 64-k tiles per group, log2; 30 when one group spans k */
    int stages;          /* ring slots, W4P_MIN_STAGES .. W4P_MAX_STAGES */
    int phases;          /* ceil(ktiles / W4P_PHASE_TILES) */
    int xslots;          /* x phase slots, 2 .. W4P_MAX_XSLOTS */
} w4p_args_t;

/* K split over a cluster (the SPLIT instances; a parameter of its own, so
 * that the unsplit instances' arguments and code stay as they were) */
typedef struct w4p_split {
    int splits;           /* CTAs per cluster, >= 2 */
    int phases_per_split; /* phases of each CTA but the last */
} w4p_split_t;

#if CUOPS_SM90A_DEVICE

static __device__ __forceinline__ unsigned char *w4p_smem_raw(void)
{
    extern __shared__ __align__(128) unsigned char w4p_smem[];
    return w4p_smem;
}

/*
 * One stage of a math warp: its TPW tiles of its strip and their groups'
 * metadata are read into registers, the slot is released (every thread
 * arrives on the empty barrier), then the math runs into acc. FULL: all of
 * the warp's tiles exist (the phase has 16 tiles).
 */
template <typename T, int M8, int TPW, int GS, bool FULL>
static __device__ __forceinline__ void w4p_stage(float (&acc)[M8][4], const unsigned char *slot,
                                                 const unsigned char *xt, int first_tile, int nt,
                                                 uint32_t w_lane, uint32_t sc_off, uint32_t zw_off,
                                                 uint32_t zoff, uint32_t zshift, uint32_t xoff_a,
                                                 uint32_t xoff_b, uint32_t empty_bar)
{
    constexpr int XTILE = M8 * 8 * 128;
    /* run r's group is the run before it + 1; x fragment i is 8 rows (1 KB)
     * below fragment i - 1: immediate offsets off one register each */
    uint32_t xa[M8], xb[M8];
#pragma unroll
    for (int i = 0; i < M8; i++) {
        xa[i] = xoff_a + (uint32_t)i * 1024u;
        xb[i] = xoff_b + (uint32_t)i * 1024u;
    }
    uint4 wq[TPW];
    uint32_t sc[TPW / GS], zw[TPW / GS];
#pragma unroll
    for (int r = 0; r < TPW / GS; r++) {
        sc[r] = zw[r] = 0;
        if (FULL || first_tile + r * GS < nt) {
            sc[r] = *(const uint32_t *)(slot + sc_off + r * 32);
            zw[r] = *(const uint32_t *)(slot + zw_off + zoff + r * 8);
        }
    }
#pragma unroll
    for (int u = 0; u < TPW; u++) {
        if (!FULL) wq[u] = make_uint4(0, 0, 0, 0);
        if (FULL || first_tile + u < nt) wq[u] = *(const uint4 *)(slot + w_lane + u * W4_TILE_BYTES);
    }
    cuops_mbar_arrive(empty_bar);
    /* Each mma chain starts from zero and its partial is added to acc in
     * fp32 with the run's scale, in tile order. CHAIN_RUNS (m > 8): one
     * chain goes on through a run's tiles and is scaled once per run, 4 M8
     * FFMA per tile fewer at GS >= 2 (P206: 1-4 % faster at m = 12 and 16);
     * at m <= 8 a chain per tile (the chained form there was level in f16
     * and 1 % slower in bf16 at 28672 x 8192). */
    constexpr bool CHAIN_RUNS = M8 >= 2;
    const float zero_chain[M8][4] = {};
#pragma unroll
    for (int r = 0; r < TPW / GS; r++) {
        if (FULL || first_tile + r * GS < nt) {
            /* a run of GS tiles in one group: its operands once */
            uint32_t z_lo, z_hi;
            w4w_zero_pairs_f32<T>(zw[r] >> zshift, z_lo, z_hi);
            const float2 sf = w4w_scale_f32<T>(sc[r]);
            float part[M8][4];
#pragma unroll
            for (int v = 0; v < GS; v++) {
                const int u = r * GS + v;
                if (FULL || first_tile + u < nt) { /* always for v = 0 */
                    uint32_t xr[M8][8];
                    w4w_load_x<M8>(xr, xt + u * XTILE, xa, xb);
                    if (v == 0 || !CHAIN_RUNS)
                        w4w_partial_f32<T, M8>(part, wq[u], z_lo, z_hi, xr, zero_chain, 0u);
                    else
                        w4w_partial_f32<T, M8, true, true>(part, wq[u], z_lo, z_hi, xr,
                                                           zero_chain, 0u);
                    if (!CHAIN_RUNS) w4w_add_scaled<M8>(acc, part, sf);
                }
            }
            if (CHAIN_RUNS) w4w_add_scaled<M8>(acc, part, sf);
        }
    }
}

/* This CTA's phases [begin, end): rank r of a K-split cluster takes the r-th
 * run of sp.phases_per_split; unsplit, all of them. The rank is read again
 * where it is used, not held in a register across the math warps' loops
 * (which are at their register limit). */
template <bool SPLIT>
static __device__ __forceinline__ int w4p_phase_begin(const w4p_split_t &sp)
{
    return SPLIT ? (int)cuops_cluster_ctarank() * sp.phases_per_split : 0;
}
template <bool SPLIT>
static __device__ __forceinline__ int w4p_phase_end(const w4p_args_t &a, const w4p_split_t &sp)
{
    return SPLIT ? min(a.phases, w4p_phase_begin<SPLIT>(sp) + sp.phases_per_split) : a.phases;
}

/*
 * K split over a cluster (sp.splits CTAs, one pass each): every CTA has left
 * its strips' sums over its phases in its x slots as [strip][x row][16]
 * fp32 (its last phase's x is read by then); after a cluster barrier CTA
 * rank r adds the float4s [r F / S, (r + 1) F / S) over ranks 0..S-1 in
 * that order (bitwise reproducible) and stores them to y; a second barrier
 * keeps every CTA alive until its sums are read. The producer warps take
 * part in both barriers.
 */
template <typename T, int CW>
static __device__ __forceinline__ void w4p_cluster_store(const w4p_args_t &a, const w4p_split_t &sp,
                                                         int tid, int strip0, int strip_end,
                                                         const unsigned char *xslots)
{
    cuops_cluster_sync();
    const int per_strip = a.m * 16;
    const int f4 = (strip_end - strip0) * per_strip / 4;
    const int rank = (int)cuops_cluster_ctarank();
    const int j0 = (int)((int64_t)f4 * rank / sp.splits);
    const int j1 = (int)((int64_t)f4 * (rank + 1) / sp.splits);
    const uint32_t base = cuops_smem_addr(xslots);
    for (int j = j0 + tid; j < j1; j += 32 * CW) {
        const float4 v = cuops_cluster_sum_f4(base + 16u * (uint32_t)j, sp.splits);
        const int e = 4 * j;
        const int si = e / per_strip, rem = e - si * per_strip; /* strip si of the CTA's */
        const int64_t col = (int64_t)(strip0 + si) * W4_STRIP_ROWS + (rem & 15);
        T *yrow = (T *)a.y + (int64_t)(rem >> 4) * a.ldy;
        const float vv[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; i++)
            if (col + i < a.n) yrow[col + i] = cuops_from_float<T>(vv[i]);
    }
    cuops_cluster_sync_relaxed();
}

/*
 * The math warps' walk: passes of up to W4P_QUADS x 4 strips, each over
 * every phase of K; per phase the pass's quads in order, one stage each.
 */
template <typename T, int CW, int M8, int QD, int GS, bool SPLIT>
static __device__ __forceinline__ void w4p_math(const w4p_args_t &a, const w4p_split_t &sp,
                                                int warp, int lane,
                                                int strip0, int strip_end, uint32_t full0,
                                                uint32_t empty0, uint32_t xfull0, uint32_t xempty0,
                                                const unsigned char *ring, unsigned char *xslots,
                                                float *red)
{
    constexpr int WPS = CW / W4P_STRIPS;          /* warps per strip */
    constexpr int TPW = W4P_PHASE_TILES / WPS;    /* tiles per warp per stage */
    constexpr int XTILE = M8 * 8 * 128;
    constexpr int XSLOT = W4P_PHASE_TILES * XTILE;
    static_assert(TPW % GS == 0, "group runs divide a warp's tiles");
    const int S = a.stages, m = a.m;
    const int g = lane >> 2, t = lane & 3;
    const int si = warp / WPS, kp = warp % WPS;
    const int tid = warp * 32 + lane;

    /* x fragment 0 of this lane: row g of each tile box, chunks 2t and
     * 2t + 1 swizzled by the row (TMA's 128-byte swizzle), + this warp's
     * first tile of a phase */
    const uint32_t c0 = (uint32_t)((2 * t) ^ g);
    const uint32_t xoff_a = w4w_keep((uint32_t)g * 128u + (c0 << 4) + (uint32_t)(kp * TPW) * XTILE);
    const uint32_t xoff_b = w4w_keep(xoff_a ^ 16u);
    const uint32_t zshift = w4w_keep(4u * (uint32_t)(g & 3));
    const uint32_t w_lane = w4w_keep((uint32_t)si * (W4P_PHASE_TILES * W4_TILE_BYTES) +
                                     (uint32_t)(kp * TPW) * W4_TILE_BYTES + (uint32_t)lane * 16u);
    /* a phase starts at a multiple of 16 tiles, so its tile i lies in its
     * group i >> tpg_log2 (0 for groups of >= 16 tiles); the warp's first
     * run's group here, run r's is r further (a run is a whole group when
     * there are several) */
    const uint32_t gl = (uint32_t)(kp * TPW) >> min(a.tpg_log2, W4P_PHASE_TILES_LOG2);
    const uint32_t sc_off = w4w_keep(W4P_WEIGHT_BYTES + (uint32_t)si * W4P_SCALE_STRIDE + gl * 32u +
                                     4u * (uint32_t)g);
    const uint32_t zw_off = w4w_keep(W4P_WEIGHT_BYTES + W4P_SCALE_BYTES +
                                     (uint32_t)si * W4P_ZERO_STRIDE + gl * 8u + 4u * (uint32_t)(g >> 2));

    int stage = 0;
    uint32_t phase = 0;
    int xs = 0; /* x slot of the phase, and its parity */
    uint32_t xpar = 0;
    for (int pass0 = strip0; pass0 < strip_end; pass0 += QD * W4P_STRIPS) {
        const int pass_end = min(pass0 + QD * W4P_STRIPS, strip_end);
        const int nq = (pass_end - pass0 + W4P_STRIPS - 1) / W4P_STRIPS;
        float acc[QD][M8][4];
#pragma unroll
        for (int q = 0; q < QD; q++)
#pragma unroll
            for (int i = 0; i < M8; i++) acc[q][i][0] = acc[q][i][1] = acc[q][i][2] = acc[q][i][3] = 0.0f;

        for (int p = w4p_phase_begin<SPLIT>(sp); p < w4p_phase_end<SPLIT>(a, sp); p++) {
            const int j0 = p * W4P_PHASE_TILES;
            const int nt = min(W4P_PHASE_TILES, a.ktiles - j0);
            cuops_mbar_wait(xfull0 + 8 * xs, xpar);
            const unsigned char *xt = xslots + xs * XSLOT;
            const int gp = j0 >> a.tpg_log2; /* the phase's first group */
#pragma unroll
            for (int q = 0; q < QD; q++) {
                if (q < nq) {
                    const int s = pass0 + q * W4P_STRIPS + si;
                    /* zero words were copied from the 16-byte boundary below
                     * the first: 8 bytes in when its index is odd */
                    const uint32_t zoff = (uint32_t)(((int64_t)s * a.num_groups + gp) & 1) * 8u;
                    cuops_mbar_wait(full0 + 8 * stage, phase);
                    const unsigned char *slot = ring + (uint32_t)stage * (uint32_t)W4P_STAGE_BYTES;
                    const uint32_t empty_bar = empty0 + 8 * stage;
                    if (s >= pass_end)
                        cuops_mbar_arrive(empty_bar); /* no strip here: release only */
                    else if (nt == W4P_PHASE_TILES)
                        w4p_stage<T, M8, TPW, GS, true>(acc[q], slot, xt, kp * TPW, nt, w_lane,
                                                        sc_off, zw_off, zoff, zshift, xoff_a,
                                                        xoff_b, empty_bar);
                    else /* the last, partial phase */
                        w4p_stage<T, M8, TPW, GS, false>(acc[q], slot, xt, kp * TPW, nt, w_lane,
                                                         sc_off, zw_off, zoff, zshift, xoff_a,
                                                         xoff_b, empty_bar);
                    cuops_ring_advance(stage, phase, S);
                }
            }
            /* this thread's reads of the x slot are done */
            cuops_mbar_arrive(xempty0 + 8 * xs);
            cuops_ring_advance(xs, xpar, a.xslots);
        }

        /* ---- the pass's strips: k parts added in order, then y ---- */
#pragma unroll
        for (int q = 0; q < QD; q++) {
            if (q < nq) {
                float *mine = red + (size_t)(si * WPS + kp) * (size_t)m * 16;
#pragma unroll
                for (int i = 0; i < M8; i++)
#pragma unroll
                    for (int cc = 0; cc < 4; cc++) {
                        /* c0, c1: weight row g, x rows 8i+2t, 8i+2t+1; c2, c3: row g+8 */
                        const int xrow = 8 * i + 2 * t + (cc & 1);
                        if (xrow < m) mine[xrow * 16 + g + 8 * (cc >> 1)] = acc[q][i][cc];
                    }
                cuops_named_bar_sync(1, 32 * CW);
                const int per_strip = m * 16;
                for (int e = tid; e < W4P_STRIPS * per_strip; e += 32 * CW) {
                    const int s_in = e / per_strip, rem = e - s_in * per_strip;
                    const int s = pass0 + q * W4P_STRIPS + s_in;
                    const int64_t col = (int64_t)s * W4_STRIP_ROWS + (rem & 15);
                    if (SPLIT || (s < pass_end && col < a.n)) {
                        const float *part = red + (size_t)(s_in * WPS) * (size_t)per_strip + rem;
                        float v = part[0];
#pragma unroll
                        for (int w = 1; w < WPS; w++) v += part[w * per_strip];
                        if (SPLIT) /* this CTA's part of the cluster's sum (one pass) */
                            ((float *)xslots)[q * W4P_STRIPS * per_strip + e] = v;
                        else
                            ((T *)a.y)[(int64_t)(rem >> 4) * a.ldy + col] = cuops_from_float<T>(v);
                    }
                }
                cuops_named_bar_sync(1, 32 * CW);
            }
        }
    }
    if (SPLIT) w4p_cluster_store<T, CW>(a, sp, tid, strip0, strip_end, xslots);
}

#endif

template <typename T, int CW, int M8, int QD, bool SPLIT>
__global__ void __launch_bounds__(32 * CW + 64, 1)
    w4a16_decode_phase_ring_kernel(const __grid_constant__ CUtensorMap tmap_x, const w4p_args_t a,
                                   const w4p_split_t sp)
{
#if CUOPS_SM90A_DEVICE
    constexpr int XTILE = M8 * 8 * 128;
    constexpr int XSLOT = W4P_PHASE_TILES * XTILE;
    __shared__ __align__(8) uint64_t full_bar[W4P_MAX_STAGES], empty_bar[W4P_MAX_STAGES];
    __shared__ __align__(8) uint64_t xfull_bar[W4P_MAX_XSLOTS], xempty_bar[W4P_MAX_XSLOTS];

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int S = a.stages;
    /* SPLIT: the sp.splits CTAs of a cluster (consecutive blockIdx.x) share
     * their strips, each over its own run of phases */
    const int strip0 = (SPLIT ? (int)blockIdx.x / sp.splits : (int)blockIdx.x) * a.strips_per_cta;
    const int strip_end = min(strip0 + a.strips_per_cta, a.strips);
    const int p_begin = w4p_phase_begin<SPLIT>(sp), p_end = w4p_phase_end<SPLIT>(a, sp);
    /* x slots from the first 1024-byte boundary (the swizzle's phase), then
     * the ring, then the k-part sums */
    unsigned char *raw = w4p_smem_raw();
    const uint32_t xs_addr = cuops_smem_align1024(raw);
    unsigned char *xslots = raw + (xs_addr - cuops_smem_addr(raw));
    const unsigned char *ring = xslots + a.xslots * XSLOT;
    const uint32_t ring_addr = xs_addr + (uint32_t)(a.xslots * XSLOT);
    float *red = (float *)(ring + (size_t)S * W4P_STAGE_BYTES);
    const uint32_t full0 = cuops_smem_addr(&full_bar[0]);
    const uint32_t empty0 = cuops_smem_addr(&empty_bar[0]);
    const uint32_t xfull0 = cuops_smem_addr(&xfull_bar[0]);
    const uint32_t xempty0 = cuops_smem_addr(&xempty_bar[0]);

    if (tid == 32 * (CW + 1)) cuops_tma_prefetch_map(&tmap_x);
    if (tid == 0) {
        for (int s = 0; s < S; s++) {
            cuops_mbar_init(full0 + 8 * s, 1);
            cuops_mbar_init(empty0 + 8 * s, 32 * CW);
        }
        for (int s = 0; s < a.xslots; s++) {
            cuops_mbar_init(xfull0 + 8 * s, 1);
            cuops_mbar_init(xempty0 + 8 * s, 32 * CW);
        }
        cuops_mbar_init_fence();
    }
    __syncthreads();

    if (warp == CW + 1) {
        /* ---- x producer: per pass, per phase, the phase's x as 64 x 8M8
         * boxes, as soon as a slot is free: its own thread, so that the
         * weight stream never waits for an x slot ---- */
        if (lane == 0) {
            int xs = 0;
            uint32_t xpar = 0;
            for (int pass0 = strip0; pass0 < strip_end; pass0 += QD * W4P_STRIPS) {
                for (int p = p_begin; p < p_end; p++) {
                    const int j0 = p * W4P_PHASE_TILES;
                    const int nt = min(W4P_PHASE_TILES, a.ktiles - j0);
                    /* the slot's previous phase is read by every math thread */
                    cuops_mbar_wait(xempty0 + 8 * xs, xpar ^ 1u);
                    cuops_mbar_arrive_expect_tx(xfull0 + 8 * xs, (uint32_t)(nt * XTILE));
                    for (int u = 0; u < nt; u++)
                        cuops_tma_load_2d(xs_addr + (uint32_t)(xs * XSLOT + u * XTILE), &tmap_x,
                                          xfull0 + 8 * xs, (j0 + u) * W4_TILE_K, 0);
                    cuops_ring_advance(xs, xpar, a.xslots);
                }
            }
        }
        if (SPLIT) { /* the math warps' two cluster barriers, the warp converged */
            __syncwarp();
            cuops_cluster_sync();
            cuops_cluster_sync_relaxed();
        }
        return;
    }

    if (warp == CW) {
        /* ---- weight producer: per pass, per phase, the pass's quads of
         * strips, front to back. At m <= 8 lane i copies strips i, i + PL,
         * ... of the quad (PL = 4: its three bulk copies in the same
         * instructions as the other lanes'), lane 0 waits for the slot and
         * announces the bytes: one thread doing all twelve copies and their
         * 64-bit address math took longer per stage than the math warps
         * there (it never found a slot still full, ncu P134; 4 lanes: 4 %
         * faster at 28672 x 8192, P135). At m > 8 one lane (4 lanes: level
         * to 1 % slower, P135). ---- */
        constexpr int PL = M8 == 1 ? W4P_STRIPS : 1;
        constexpr unsigned PL_MASK = (1u << PL) - 1u;
        if (lane < PL) {
            int stage = 0;
            uint32_t phase = 0;
            for (int pass0 = strip0; pass0 < strip_end; pass0 += QD * W4P_STRIPS) {
                const int pass_end = min(pass0 + QD * W4P_STRIPS, strip_end);
                for (int p = p_begin; p < p_end; p++) {
                    const int j0 = p * W4P_PHASE_TILES;
                    const int nt = min(W4P_PHASE_TILES, a.ktiles - j0);
                    const int g0 = j0 >> a.tpg_log2;
                    const int ng = ((j0 + nt - 1) >> a.tpg_log2) - g0 + 1;
                    const uint32_t wbytes = (uint32_t)nt * W4_TILE_BYTES, sbytes = (uint32_t)ng * 32u;
                    for (int q0 = pass0; q0 < pass_end; q0 += W4P_STRIPS) {
                        const int nstr = min(W4P_STRIPS, pass_end - q0);
                        uint32_t bytes = 0;
                        for (int i = lane; i < nstr; i += PL) {
                            const uint32_t odd = (uint32_t)(((int64_t)(q0 + i) * a.num_groups + g0) & 1);
                            bytes += wbytes + sbytes + ((odd * 8u + 8u * (uint32_t)ng + 15u) & ~15u);
                        }
                        if (PL > 1) bytes = __reduce_add_sync(PL_MASK, bytes);
                        const uint32_t full = full0 + 8 * stage;
                        if (lane == 0) {
                            cuops_mbar_wait(empty0 + 8 * stage, phase ^ 1u);
                            cuops_mbar_arrive_expect_tx(full, bytes);
                        }
                        if (PL > 1) __syncwarp(PL_MASK);
                        const uint32_t dst = ring_addr + (uint32_t)stage * W4P_STAGE_BYTES;
                        for (int i = lane; i < nstr; i += PL) {
                            const int64_t s = q0 + i;
                            const int64_t sg = s * a.num_groups + g0;
                            const int64_t zaddr = a.zero_offset + sg * 8;
                            const int64_t zstart = zaddr & ~(int64_t)15;
                            const uint32_t zbytes = (uint32_t)((zaddr + 8 * ng - zstart + 15) & ~(int64_t)15);
                            cuops_bulk_load(dst + (uint32_t)i * (W4P_PHASE_TILES * W4_TILE_BYTES),
                                            a.packed + (s * a.ktiles + j0) * W4_TILE_BYTES, wbytes, full);
                            cuops_bulk_load(dst + W4P_WEIGHT_BYTES + (uint32_t)i * W4P_SCALE_STRIDE,
                                            a.packed + a.scale_offset + sg * 32, sbytes, full);
                            cuops_bulk_load(dst + W4P_WEIGHT_BYTES + W4P_SCALE_BYTES +
                                                (uint32_t)i * W4P_ZERO_STRIDE,
                                            a.packed + zstart, zbytes, full);
                        }
                        cuops_ring_advance(stage, phase, S);
                    }
                }
            }
        }
        if (SPLIT) { /* the math warps' two cluster barriers, the warp converged */
            __syncwarp();
            cuops_cluster_sync();
            cuops_cluster_sync_relaxed();
        }
        return;
    }

    /* ---- math warps ---- */
    constexpr int TPW = W4P_PHASE_TILES / (CW / W4P_STRIPS);
    const int run_log2 = min(a.tpg_log2, TPW == 8 ? 3 : 2);
    if (run_log2 == 0)
        w4p_math<T, CW, M8, QD, 1, SPLIT>(a, sp, warp, lane, strip0, strip_end, full0, empty0, xfull0, xempty0,
                               ring, xslots, red);
    else if (run_log2 == 1)
        w4p_math<T, CW, M8, QD, 2, SPLIT>(a, sp, warp, lane, strip0, strip_end, full0, empty0, xfull0, xempty0,
                               ring, xslots, red);
    else if (run_log2 == 2)
        w4p_math<T, CW, M8, QD, 4, SPLIT>(a, sp, warp, lane, strip0, strip_end, full0, empty0, xfull0, xempty0,
                               ring, xslots, red);
    else
        w4p_math<T, CW, M8, QD, (TPW == 8 ? 8 : 4), SPLIT>(a, sp, warp, lane, strip0, strip_end, full0, empty0,
                                                xfull0, xempty0, ring, xslots, red);
#endif
}

/* ---- host side ------------------------------------------------------------------ */

static int w4p_m8(int64_t m) { return m <= 8 ? 1 : 2; }

/* x phase slots: one quad per pass (the one-quad instance, the _q1 form)
 * loads a phase's x for every stage, so its x slots are as many as its
 * weight stages can be (3 at m > 8, where x phases are 32 KB) */
static int w4p_xslots(int64_t m, int qd) { return m <= 8 || qd == 1 ? 3 : 2; }

/* Shared memory besides the ring: the x slots and the k-part sums. */
static int64_t w4p_fixed_smem(int64_t m, int cw, int qd)
{
    const int64_t xslot = (int64_t)W4P_PHASE_TILES * w4p_m8(m) * 8 * 128;
    return w4p_xslots(m, qd) * xslot + (int64_t)cw * m * W4_STRIP_ROWS * 4;
}

static int64_t w4p_stages(const struct cuops_handle *h, int64_t m, int cw, int qd)
{
    const int64_t room = h->smem_optin_bytes - W4P_RESERVED_SMEM - w4p_fixed_smem(m, cw, qd);
    const int64_t s = room / W4P_STAGE_BYTES;
    return s > W4P_MAX_STAGES ? W4P_MAX_STAGES : s;
}

int w4a16_decode_phase_ring_serves(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                   const w4_geometry_t *geo)
{
    if (h->sm_major != 9) return 0;
    if (d->m < 1 || d->m > 16) return 0;
    if (w4_tiles_per_group_log2(geo) < 0) return 0;
    if (!cuops_aligned(d->x, 2) || !cuops_aligned(d->y, 2)) return 0;
    /* 32-bit tile and strip arithmetic in the kernel; TMA coordinates */
    if (geo->k >= ((int64_t)1 << 29) || geo->strips >= ((int64_t)1 << 30)) return 0;
    return w4p_stages(h, d->m, 16, W4P_QUADS(16, w4p_m8(d->m))) >= W4P_MIN_STAGES;
}

/* The pass of the form auto runs at m > 8 (16 math warps, two x fragments):
 * a split CTA's strips are at most this many. */
#define W4P_AUTO_PASS_STRIPS ((int64_t)W4P_QUADS(16, 2) * W4P_STRIPS)

static int64_t w4p_auto_splits(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                               const w4_geometry_t *geo)
{
    return w4a16_phase_ring_auto_splits(d->m, cuops_ceil_div(d->n, W4_STRIP_ROWS), geo->ktiles,
                                        h->num_sms > 0 ? h->num_sms : 132, W4P_AUTO_PASS_STRIPS);
}

/* Auto's choice for 5 <= m <= 16 on sm_90 (w4a16_dispatch.cu; for m <= 8
 * after w4a16_decode_bulk_ring_auto): where it serves the call and the rule
 * of w4a16_decode_phase_ring_plan.h holds. */
int w4a16_decode_phase_ring_auto(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                 const w4_geometry_t *geo)
{
    if (!w4a16_decode_phase_ring_serves(h, d, geo)) return 0;
    return w4a16_phase_ring_auto_takes(d->m, cuops_ceil_div(d->n, W4_STRIP_ROWS), geo->ktiles,
                                       h->num_sms > 0 ? h->num_sms : 132, W4P_AUTO_PASS_STRIPS);
}

template <typename T, int CW, int M8, int QD>
static cuops_status_t w4p_launch(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                 const w4_geometry_t *geo, int64_t forced_splits, const char *name)
{
    const int64_t sms = h->num_sms > 0 ? h->num_sms : 132;
    const int64_t strips = cuops_ceil_div(d->n, W4_STRIP_ROWS);
    const int64_t phases = cuops_ceil_div(geo->ktiles, W4P_PHASE_TILES);
    const int64_t splits = forced_splits > 0 ? forced_splits : w4p_auto_splits(h, d, geo);
    const w4a16_phase_ring_plan_t pl = w4a16_phase_ring_make_plan(
        strips, phases, sms, splits, (int64_t)QD * W4P_STRIPS);
    /* Every CTA's strips fit fewer quads than the form's pass: the instance
     * with the fewest that hold them (w4a16_phase_ring_instance_quads) does
     * the same work in the same order (the same bits) with less of the quad
     * loop unrolled (one quad: half at m > 8, a quarter at m <= 8, and a
     * third x slot at m > 8). H200 (P204): 16 x 4096^2 11.4 -> 10.8 us,
     * 16 x 4096 x 14336 (split 2, 4 strips per CTA) 19.7 -> 18.4, 8 x 4096^2
     * 9.9 -> 9.7; two quads at m <= 8 on 5-8 strips 0.5-1.5 % faster. */
    if constexpr (QD > 1 && CW == 16) {
        const int iq = w4a16_phase_ring_instance_quads(QD, pl.strips_per_cta);
        if (iq == 1 && w4p_stages(h, d->m, CW, 1) >= W4P_MIN_STAGES)
            return w4p_launch<T, CW, M8, 1>(h, d, geo, pl.splits, name);
        if constexpr (QD > 2)
            if (iq == 2) return w4p_launch<T, CW, M8, 2>(h, d, geo, pl.splits, name);
    }
    const int64_t stages = w4p_stages(h, d->m, CW, QD);
    if (stages < W4P_MIN_STAGES)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: m %lld leaves %lld ring stages beside its x slots (needs %d)", name,
                          (long long)d->m, (long long)stages, W4P_MIN_STAGES);
    if (pl.ctas > 0x7fffffff)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "%s: n %lld too large", name,
                          (long long)d->n);
    /* x's map once the instance is chosen: an x that TMA cannot read in
     * place is packed into the workspace here, once per call */
    CUtensorMap tmap_x;
    cuops_status_t st = w4_wgmma_x_map(h, d, (uint32_t)(8 * M8), name, &tmap_x);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    w4p_args_t a;
    memset(&a, 0, sizeof a);
    w4_ring_common_args(&a, d, geo, strips, pl.strips_per_cta, stages);
    a.phases = (int)phases;
    a.xslots = w4p_xslots(d->m, QD);
    w4p_split_t sp;
    sp.splits = (int)pl.splits;
    sp.phases_per_split = (int)pl.phases_per_split;

    const size_t smem =
        (size_t)(stages * W4P_STAGE_BYTES + w4p_fixed_smem(d->m, CW, QD) + 1024 /* alignment */);
    const void *fn = pl.splits > 1 ? (const void *)w4a16_decode_phase_ring_kernel<T, CW, M8, QD, true>
                                   : (const void *)w4a16_decode_phase_ring_kernel<T, CW, M8, QD, false>;
    cudaError_t err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess) return cuops_cuda_fail(h, err, name);
    if (pl.splits == 1) {
        w4a16_decode_phase_ring_kernel<T, CW, M8, QD, false>
            <<<(unsigned)pl.ctas, 32 * CW + 64, smem, cuops_stream(h)>>>(tmap_x, a, sp);
    } else {
        cudaLaunchConfig_t cfg;
        cudaLaunchAttribute attr;
        cuops_cluster_launch_config(&cfg, &attr, (int)pl.ctas, 32 * CW + 64, (int)pl.splits,
                                    (int)smem, cuops_stream(h));
        CUOPS_CUDA_TRY(h, cudaLaunchKernelEx(&cfg, w4a16_decode_phase_ring_kernel<T, CW, M8, QD, true>,
                                             tmap_x, a, sp));
    }
    st = cuops_cuda_check_launch(h, name);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    h->last_kernel = name;
    return CUOPS_STATUS_SUCCESS;
}

/* w4p_launch for the call's activation type */
template <int CW, int M8, int QD>
static cuops_status_t w4p_launch_act(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                     const w4_geometry_t *geo, int64_t forced_splits,
                                     const char *name)
{
    return d->act_type == CUOPS_DTYPE_BF16
               ? w4p_launch<__nv_bfloat16, CW, M8, QD>(h, d, geo, forced_splits, name)
               : w4p_launch<__half, CW, M8, QD>(h, d, geo, forced_splits, name);
}

/* math_warps 16 or 8; quads 0: the form's own (W4P_QUADS), 1: one strip
 * quad per pass (the _q1 study form, 16 math warps) */
cuops_status_t w4a16_launch_decode_phase_ring(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                              const w4_geometry_t *geo, int math_warps, int quads,
                                              int64_t forced_splits, const char **kernel_name)
{
    const char *const name = math_warps == 8 ? "w4a16_decode_phase_ring_w8"
                             : quads == 1    ? "w4a16_decode_phase_ring_q1"
                                             : "w4a16_decode_phase_ring";
    *kernel_name = name;
    if (!w4a16_decode_phase_ring_serves(h, d, geo))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: serves sm_90 with m <= 16, group_size 64 * 2^p or one group per "
                          "row, x and y 2-byte aligned, k < 2^29 (sm_%d%d, m %lld, group_size "
                          "%lld, k %lld)",
                          name, h->sm_major, h->sm_minor, (long long)d->m,
                          (long long)d->group_size, (long long)d->k);
    const int m16 = w4p_m8(d->m) == 2;
    if (math_warps == 8)
        return m16 ? w4p_launch_act<8, 2, W4P_QUADS(8, 2)>(h, d, geo, forced_splits, name)
                   : w4p_launch_act<8, 1, W4P_QUADS(8, 1)>(h, d, geo, forced_splits, name);
    if (quads == 1)
        return m16 ? w4p_launch_act<16, 2, 1>(h, d, geo, forced_splits, name)
                   : w4p_launch_act<16, 1, 1>(h, d, geo, forced_splits, name);
    return m16 ? w4p_launch_act<16, 2, W4P_QUADS(16, 2)>(h, d, geo, forced_splits, name)
               : w4p_launch_act<16, 1, W4P_QUADS(16, 1)>(h, d, geo, forced_splits, name);
}
