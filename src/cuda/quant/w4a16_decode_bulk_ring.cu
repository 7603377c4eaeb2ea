/*
 * w4a16_decode_bulk_ring.cu - the m <= 8 decode W4A16 GEMM with the weight
 * streamed by one producer thread per CTA: 32 KB bulk copies (64 tiles of
 * one strip) into a shared-memory ring on mbarriers, consumed by CW math
 * warps with the tile math of w4a16_decode_warp (w4a16_warp_tile.cuh).
 *
 * Variants "w4a16_decode_bulk_ring" (CW = 16 math warps; auto for m <= 8
 * on sm_90 where each CTA gets >= 10 strips, w4a16_decode_bulk_ring_auto),
 * "w4a16_decode_bulk_ring_w8" (CW = 8, a study form) and
 * "w4a16_decode_bulk_ring_xsum" (CW = 16, XSUM: auto's form for m <= 3, and
 * for m <= 2 on fewer strips, w4a16_decode_bulk_ring_auto);
 * docs/w4a16.md.
 *
 * XSUM: the zero point comes off through sums of x instead of from every
 * weight pair. The mma takes the nibble pairs as the LOP3 biases them, M + q
 * (M = 1024 in f16, rows g+8 as M + 16 q; 128 in bf16), and
 *     sum_k (q - z) x = sum_k (M + q) x - (M + z) X,   X = sum_k x
 * over a run of tiles sharing one group, so each run's first chain takes
 * one FFMA per output with s (M + z) X (w4b_stage) where the plain form
 * spends one HSUB2 per weight pair (16 per 512-byte tile). X comes from x
 * in shared memory once per CTA (w4b_x_sums). The (M + q) x products are
 * exact in fp32; the subtraction cancels ~7 bits of the fp32 partial in f16
 * (~4 in bf16), far below y's 16-bit rounding.
 *
 * Why this shape. w4a16_decode_warp's time at 1 x 28672 x 8192 follows its
 * busiest SM (224 CTAs of 8 strips on 132 SMs: 92 SMs hold two), and every
 * form that evened the SMs out from per-warp pipelines streamed slower per
 * byte (docs/w4a16.md, the withdrawn experiments). The dense decode GEMM's
 * narrow form moves the same 917 KB per CTA on 128 CTAs from a TMA-fed ring
 * at the stream rate; this kernel gives the int4 weight that stream shape:
 *  - work: runs of whole strips (16 rows, all of K), ceil(strips / SMs) per
 *    CTA, one CTA per SM. A CTA's weight is one contiguous byte range of the
 *    strip-major layout, read front to back; no split-K, so each y element
 *    is summed by one CTA in a fixed order (bitwise reproducible);
 *  - stage: 64 tiles of one strip (a strip's last stage may hold fewer:
 *    tiles are never mixed across strips) plus the scale pairs and zero
 *    words of the groups they touch: three cp.async.bulk on the stage's full
 *    barrier, issued by one thread that only waits for free slots, so the
 *    bytes in flight per SM are the ring's (3 to 6 x 34.6 KB,
 *    w4b_ring_stages), whatever the math warps are doing;
 *  - math warp w takes tiles w*TPW .. w*TPW + TPW-1 of each stage (TPW =
 *    64 / CW), one mma chain per tile slot, each tile's chain starting from
 *    zero (no dependency on the previous tile: registers are not scarce
 *    here, unlike in w4a16_decode_warp); tiles of one quantization group
 *    next to each other share their zero pairs and fp32 scale (built once
 *    per run of 1, 2 or 4 tiles); a math thread reads its tiles and their
 *    metadata into registers, arrives on the stage's empty barrier (per
 *    thread, not per warp: racecheck then sees every read of the slot
 *    ordered before the copy that refills it) and only then computes, so
 *    the slot is refilled while the math runs;
 *  - where a CTA streams few stages (<= 7; <= 8 at m >= 2: w4b_stage_halves),
 *    the 16-warp forms split each stage over two full barriers, 32 tiles
 *    each (HALVES):
 *    a warp takes 2 tiles of each half and computes the first pair while
 *    the second half lands, so less math is left after the CTA's last byte;
 *  - at a strip's end each math warp adds its chains in slot order and
 *    writes its [m][16] partial into one of W4B_RED_SLOTS slots, and goes on
 *    to the next strip; a reducer warp adds the CW partials in warp order and
 *    stores y, then frees the slot (mbarriers both ways, no CTA barrier on
 *    the math warps' path). Warps: CW math, 1 producer, 1 reducer.
 *
 * x (m rows x ceil(k/64) tiles x 128 B, chunk c of row r at c ^ (r & 7) as
 * in w4a16_decode_warp, zero past k) is copied into shared memory once per
 * CTA by the math threads while the first stages stream in; each strip
 * reads all of it.
 *
 * Serves (w4a16_decode_bulk_ring_serves): sm_90, m <= 8, f16/bf16,
 * group_size 64 * 2^p or one group per row (a tile's group is then a shift
 * of its index), x 16-byte aligned with ldx % 8 == 0, k < 2^29, and x with
 * at least W4B_MIN_STAGES ring stages in the per-block shared memory.
 */
#include <string.h>

#include "cuda/common/ptx_sm90.cuh"
#include "cuda/quant/w4a16_bulk_ring_form.h"
#include "cuda/quant/w4a16_layout.cuh"
#include "cuda/quant/w4a16_warp_tile.cuh"

/* 64 tiles of one strip per stage: a warp's per-stage cost (barrier wait,
 * arrival, slot and group bookkeeping, ~30 instructions) spread over 4
 * tiles at 16 math warps (at 32 tiles it was ~15 of ~80 per tile, P79) */
#define W4B_STAGE_TILES 64
#define W4B_STAGE_TILES_LOG2 6
#define W4B_WEIGHT_BYTES (W4B_STAGE_TILES * W4_TILE_BYTES) /* 32 KB */
/* at most one group per tile: 64 groups x 8 scale pairs of 4 bytes */
#define W4B_SCALE_BYTES (W4B_STAGE_TILES * 32)
/* their zero words (8 bytes per group), copied from the 16-byte boundary at
 * or below the first one: up to 8 + 512 bytes, rounded up to 16 (and the
 * stage to a multiple of 128) */
#define W4B_ZERO_BYTES 640
#define W4B_STAGE_BYTES (W4B_WEIGHT_BYTES + W4B_SCALE_BYTES + W4B_ZERO_BYTES)
/* the HALVES form's halves of a stage, each on its own full barrier */
#define W4B_HALF_TILES (W4B_STAGE_TILES / 2)
/* ring stages: as w4b_ring_stages (w4a16_bulk_ring_form.h) picks from those
 * that fit beside x; the kernel serves where W4B_MIN_STAGES fit */
#define W4B_MAX_STAGES W4B_RING_MAX_STAGES
#define W4B_MIN_STAGES 3
/* static shared memory (the barriers) and slack kept out of the budget */
#define W4B_RESERVED_SMEM 512
/* strip partials in flight between the math warps and the reducer warp */
#define W4B_RED_SLOTS 4

typedef struct w4b_args {
    const uint16_t *x;
    int64_t ldx;
    const uint8_t *packed;
    void *y;
    int64_t ldy;
    int64_t n;
    int64_t scale_offset, zero_offset;
    int k, ktiles, num_groups;
    int m;
    int strips;          /* strips holding rows < n */
    int strips_per_cta;
    int tpg_log2;        /* 64-k tiles per group, log2; 30 when one group spans k */
    int stages;          /* ring slots, W4B_MIN_STAGES .. W4B_MAX_STAGES */
    uint32_t x_bytes;    /* m * ktiles * 128 */
} w4b_args_t;

#if CUOPS_SM90A_DEVICE /* device helpers of the sm_90a pass only (the mbarrier wrappers) */

/* The dynamic shared memory: the ring, then x, then the strip partials. */
static __device__ __forceinline__ unsigned char *w4b_smem_base(void)
{
    extern __shared__ __align__(128) unsigned char w4b_smem[];
    return w4b_smem;
}

/* A math warp's tile v of half h of a stage (TPW tiles per warp per stage):
 * with HALVES each half (W4B_HALF_TILES tiles, its own full barrier) gives
 * each warp TPW / 2 contiguous tiles; without, the warp's TPW tiles are
 * contiguous in the one half, the stage. */
template <int TPW, bool HALVES>
static __device__ __forceinline__ int w4b_half_tile(int h, int warp, int v)
{
    return h * W4B_HALF_TILES + warp * (HALVES ? TPW / 2 : TPW) + v;
}

/*
 * One stage of a math warp: its TPW tiles (FULL: all of them exist) and
 * their groups' metadata are read into registers first, then the slot is
 * released (every thread arrives on its empty barrier), then the math runs:
 * the producer can refill the slot while this warp computes, so the ring
 * keeps one more stage in flight than if the slot were held until the math
 * is done.
 *
 * HALVES: the stage lands in two halves of 32 tiles on two full barriers
 * (the first with the metadata; w4b_issue_stage), and the warp's tiles are
 * TPW / 2 contiguous ones of each half (w4b_half_tile): it computes the
 * first half's while the second lands, and reads the second half's before
 * it releases the slot. The caller has waited on the first barrier; full1
 * is the second. Without HALVES there is one half, the whole stage.
 */
template <typename T, int TPW, int GS, bool FULL, bool XSUM, bool HALVES>
static __device__ __forceinline__ void w4b_stage(float (&acc)[TPW][1][4], const unsigned char *slot,
                                                 const unsigned char *xt, int warp, int nt,
                                                 uint32_t w_lane, const uint32_t (&sc_off)[TPW / GS],
                                                 const uint32_t (&zw_off)[TPW / GS], uint32_t zoff,
                                                 uint32_t zshift, const uint32_t (&xoff_a)[1],
                                                 const uint32_t (&xoff_b)[1], uint32_t full1,
                                                 uint32_t phase, uint32_t empty_bar,
                                                 const float *xsum)
{
    constexpr int NH = HALVES ? 2 : 1;
    constexpr int TPH = TPW / NH; /* a warp's tiles in each half */
    constexpr int RPH = TPH / GS; /* its runs of one group in each half */
    static_assert(TPH % GS == 0, "runs lie inside a half");
#pragma unroll
    for (int h = 0; h < NH; h++) {
        if (h == 1) cuops_mbar_wait(full1, phase);
        uint4 wq[TPH];
        uint32_t sc[RPH], zw[RPH];
#pragma unroll
        for (int q = 0; q < RPH; q++) {
            const int r = h * RPH + q;
            sc[q] = zw[q] = 0;
            if (FULL || w4b_half_tile<TPW, HALVES>(h, warp, q * GS) < nt) {
                sc[q] = *(const uint32_t *)(slot + sc_off[r]);
                zw[q] = *(const uint32_t *)(slot + zw_off[r] + zoff);
            }
        }
#pragma unroll
        for (int v = 0; v < TPH; v++) {
            if (!FULL) wq[v] = make_uint4(0, 0, 0, 0);
            if (FULL || w4b_half_tile<TPW, HALVES>(h, warp, v) < nt)
                wq[v] = *(const uint4 *)(slot + w_lane + (h * W4B_HALF_TILES + v) * W4_TILE_BYTES);
        }
        if (h == NH - 1) cuops_mbar_arrive(empty_bar);
#pragma unroll
        for (int q = 0; q < RPH; q++) {
            if (FULL || w4b_half_tile<TPW, HALVES>(h, warp, q * GS) < nt) {
                /* a run of GS tiles in one group: its operands once */
                uint32_t z_lo = 0, z_hi = 0;
                if (!XSUM) w4w_zero_pairs_f32<T>(zw[q] >> zshift, z_lo, z_hi);
                const float2 sf = w4w_scale_f32<T>(sc[q]);
#pragma unroll
                for (int e = 0; e < GS; e++) {
                    const int v = q * GS + e, u = h * TPH + v;
                    if (FULL || w4b_half_tile<TPW, HALVES>(h, warp, v) < nt) {
                        uint32_t xr[1][8];
                        w4w_load_x<1>(xr, xt + (h * W4B_HALF_TILES + v) * 128, xoff_a, xoff_b);
                        float part[1][4];
                        w4w_partial_f32<T, 1, !XSUM>(part, wq[v], z_lo, z_hi, xr, acc[u], 0u);
                        w4w_add_scaled<1>(acc[u], part, sf);
                    }
                }
                if (XSUM) {
                    /* the run's partials carried (M + q) x: take off s (M + z) times
                     * the run's x sums (x rows 2t, 2t+1; w4b_x_sums) */
                    const float2 zf = w4w_zero_f32<T>(zw[q] >> zshift);
                    const float2 xs2 =
                        *(const float2 *)(xsum + ((h * W4B_HALF_TILES + q * GS) / GS) * 8);
                    const float sz_lo = sf.x * zf.x, sz_hi = sf.y * zf.y;
                    float(&a0)[4] = acc[h * TPH + q * GS][0];
                    a0[0] = fmaf(-sz_lo, xs2.x, a0[0]);
                    a0[1] = fmaf(-sz_lo, xs2.y, a0[1]);
                    a0[2] = fmaf(-sz_hi, xs2.x, a0[2]);
                    a0[3] = fmaf(-sz_hi, xs2.y, a0[3]);
                }
            }
        }
    }
}

/*
 * The math warps' walk over the CTA's strips. TPW tiles per warp per stage,
 * contiguous (tiles warp*TPW .. +TPW-1 of each stage), or with HALVES TPW/2
 * contiguous ones of each half (w4b_half_tile); GS consecutive ones share
 * their quantization group (GS = min(tiles per group, those contiguous
 * tiles, 4)), so the zero pairs and the fp32 scale are built once per GS
 * tiles.
 */
template <typename T, int CW, int GS, bool XSUM, bool HALVES>
static __device__ __forceinline__ void w4b_math(const w4b_args_t &a, int warp, int lane,
                                                int strip0, int strip_end, int chunks,
                                                uint32_t full0, uint32_t empty0,
                                                uint32_t red_full0, uint32_t red_empty0,
                                                const unsigned char *xs, float *red,
                                                const float *xsum)
{
    constexpr int TPW = W4B_STAGE_TILES / CW;
    constexpr int TPH = HALVES ? TPW / 2 : TPW; /* a warp's contiguous tiles of a half stage */
    constexpr int FB = HALVES ? 16 : 8;         /* bytes of full barriers per stage */
    static_assert(TPH % GS == 0, "group runs divide a warp's tiles of a half");
    const int S = a.stages, m = a.m;
    const int g = lane >> 2, t = lane & 3;
    /* x fragment of this lane: row min(g, m-1), chunks 2t, 2t+1 swizzled;
     * lanes of rows past m feed only product columns never stored */
    uint32_t xoff_a[1], xoff_b[1];
    {
        const int row = min(g, m - 1);
        const uint32_t base = (uint32_t)row * (uint32_t)a.ktiles * 128u;
        const uint32_t c0 = (uint32_t)((2 * t) ^ (row & 7));
        /* + this warp's first tile of a (half) stage */
        xoff_a[0] = w4w_keep(base + (c0 << 4) + (uint32_t)(warp * TPH) * 128u);
        xoff_b[0] = w4w_keep(base + ((c0 ^ 1u) << 4) + (uint32_t)(warp * TPH) * 128u);
    }
    const uint32_t zshift = w4w_keep(4u * (uint32_t)(g & 3));
    /* XSUM: this lane's x sums (rows 2t, 2t+1) of the warp's first run of a
     * stage, at run granularity (w4b_x_sums) */
    constexpr int GS_LOG2 = GS == 4 ? 2 : GS == 2 ? 1 : 0;
    const float *xsum_lane = XSUM ? xsum + (warp * TPH / GS) * 8 + 2 * t : xsum;
    /* Offsets fixed per lane and tile slot u: the weight chunk, and the
     * metadata of the slot's group. A stage starts at a multiple of 64
     * tiles, so its tile i lies in its group i >> tpg_log2 (0 for any group
     * of >= 64 tiles). */
    const uint32_t w_lane = w4w_keep((uint32_t)(warp * TPH) * W4_TILE_BYTES + (uint32_t)lane * 16u);
    uint32_t sc_off[TPW / GS], zw_off[TPW / GS];
#pragma unroll
    for (int r = 0; r < TPW / GS; r++) {
        const int tile = w4b_half_tile<TPW, HALVES>(r / (TPH / GS), warp, (r % (TPH / GS)) * GS);
        const uint32_t gl = (uint32_t)tile >> min(a.tpg_log2, W4B_STAGE_TILES_LOG2);
        sc_off[r] = w4w_keep(W4B_WEIGHT_BYTES + gl * 32u + 4u * (uint32_t)g);
        zw_off[r] = w4w_keep(W4B_WEIGHT_BYTES + W4B_SCALE_BYTES + gl * 8u + 4u * (uint32_t)(g >> 2));
    }

    int stage = 0;
    uint32_t phase = 0;
    for (int s = strip0, i = 0; s < strip_end; s++, i++) {
        float acc[TPW][1][4];
#pragma unroll
        for (int u = 0; u < TPW; u++) acc[u][0][0] = acc[u][0][1] = acc[u][0][2] = acc[u][0][3] = 0.0f;
        /* index of the strip's first group in the zero-word region */
        const int64_t sg0 = (int64_t)s * a.num_groups;

        for (int c = 0; c < chunks; c++) {
            const int j0 = c * W4B_STAGE_TILES;
            const int nt = min(W4B_STAGE_TILES, a.ktiles - j0);
            /* the zero words were copied from the 16-byte boundary below the
             * first one: 8 bytes in when that group's index in the region is
             * odd (the region starts 16-byte aligned) */
            const uint32_t zoff = (uint32_t)((sg0 + (j0 >> a.tpg_log2)) & 1) * 8u;
            cuops_mbar_wait(full0 + FB * stage, phase);
            const unsigned char *slot = w4b_smem_base() + (uint32_t)stage * (uint32_t)W4B_STAGE_BYTES;
            const unsigned char *xt = xs + (uint32_t)j0 * 128u;
            const uint32_t empty_bar = empty0 + 8 * stage;
            const float *xsum_stage = xsum_lane + (XSUM ? (j0 >> GS_LOG2) * 8 : 0);
            const uint32_t full1 = full0 + FB * stage + 8; /* HALVES: the second half's */
            if (nt == W4B_STAGE_TILES)
                w4b_stage<T, TPW, GS, true, XSUM, HALVES>(acc, slot, xt, warp, nt, w_lane, sc_off,
                                                          zw_off, zoff, zshift, xoff_a, xoff_b,
                                                          full1, phase, empty_bar, xsum_stage);
            else /* a strip's last, partial stage */
                w4b_stage<T, TPW, GS, false, XSUM, HALVES>(acc, slot, xt, warp, nt, w_lane, sc_off,
                                                           zw_off, zoff, zshift, xoff_a, xoff_b,
                                                           full1, phase, empty_bar, xsum_stage);
            cuops_ring_advance(stage, phase, S);
        }

        /* ---- the strip's partial: chains in slot order, into reduction
         * slot i % W4B_RED_SLOTS once the reducer has emptied it ---- */
        float sum[4];
#pragma unroll
        for (int cc = 0; cc < 4; cc++) {
            sum[cc] = acc[0][0][cc];
#pragma unroll
            for (int u = 1; u < TPW; u++) sum[cc] += acc[u][0][cc];
        }
        const int rs = i % W4B_RED_SLOTS;
        const uint32_t rpar = (uint32_t)(i / W4B_RED_SLOTS) & 1u;
        cuops_mbar_wait(red_empty0 + 8 * rs, rpar ^ 1u);
        float *mine = red + ((size_t)rs * CW + warp) * (size_t)m * 16;
#pragma unroll
        for (int cc = 0; cc < 4; cc++) {
            /* c0, c1: weight row g, x rows 2t, 2t+1; c2, c3: weight row g+8 */
            const int xrow = 2 * t + (cc & 1);
            if (xrow < m) mine[xrow * 16 + g + 8 * (cc >> 1)] = sum[cc];
        }
        cuops_mbar_arrive(red_full0 + 8 * rs);
    }
}

/*
 * XSUM: the sums of x over each run of 2^gs_log2 tiles (the tiles that share
 * a quantization group's scale and zero in w4b_stage), fp32, at
 * xsum[run * 8 + row] for x rows < m and 0 for the rows past m (their
 * products land in columns never stored). Two steps, every math thread busy
 * in each: a thread sums one tile of one x row (its 8 chunks loaded at once,
 * then a fixed tree) into tsum[tile * 8 + row]; after a barrier of the math
 * warps, a thread adds the tiles of one run in order. Fixed orders, so the
 * sums (and y) are the same bits on every call. Runs in the math warps once
 * x is in shared memory, before the first stage.
 */
template <typename T, int CW>
static __device__ __forceinline__ void w4b_x_sums(const unsigned char *xs, float *tsum, float *xsum,
                                                  int m, int ktiles, int gs_log2, int tid)
{
    for (int item = tid; item < m * ktiles; item += 32 * CW) {
        const int r = item / ktiles, j = item - r * ktiles;
        const unsigned char *tile = xs + ((size_t)r * ktiles + j) * 128;
        uint4 q[8];
#pragma unroll
        for (int c = 0; c < 8; c++) q[c] = *(const uint4 *)(tile + ((c ^ (r & 7)) << 4));
        float part[8];
#pragma unroll
        for (int c = 0; c < 8; c++) {
            const float2 f0 = w4w_pair_to_float2(T(), q[c].x), f1 = w4w_pair_to_float2(T(), q[c].y);
            const float2 f2 = w4w_pair_to_float2(T(), q[c].z), f3 = w4w_pair_to_float2(T(), q[c].w);
            part[c] = ((f0.x + f0.y) + (f1.x + f1.y)) + ((f2.x + f2.y) + (f3.x + f3.y));
        }
        tsum[j * 8 + r] = ((part[0] + part[1]) + (part[2] + part[3])) +
                          ((part[4] + part[5]) + (part[6] + part[7]));
    }
    cuops_named_bar_sync(1, 32 * CW);
    const int gs = 1 << gs_log2, runs = (ktiles + gs - 1) >> gs_log2;
    for (int i = tid; i < runs * 8; i += 32 * CW) {
        const int q = i >> 3, r = i & 7;
        float v = 0.0f;
        if (r < m) {
            const int j0 = q << gs_log2, j1 = min(j0 + gs, ktiles);
            v = tsum[j0 * 8 + r];
            for (int j = j0 + 1; j < j1; j++) v += tsum[j * 8 + r];
        }
        xsum[i] = v;
    }
}

#endif

/* The producer's place in the CTA's strips and in the ring. */
typedef struct w4b_producer {
    int strip, chunk, stage;
    uint32_t phase;
} w4b_producer_t;

#if CUOPS_SM90A_DEVICE
/* Issue the next stage's three bulk copies (once its slot is free) and step
 * on to the stage after it. */
template <bool HALVES>
static __device__ __forceinline__ void w4b_issue_stage(const w4b_args_t &a, w4b_producer_t &p,
                                                       int chunks, uint32_t ring, uint32_t full0,
                                                       uint32_t empty0, int S)
{
    const int s = p.strip, c = p.chunk;
    const int j0 = c * W4B_STAGE_TILES;
    const int nt = min(W4B_STAGE_TILES, a.ktiles - j0);
    const int g0 = j0 >> a.tpg_log2;
    const int ng = ((j0 + nt - 1) >> a.tpg_log2) - g0 + 1;
    const int64_t sg = (int64_t)s * a.num_groups + g0;
    const int64_t zaddr = a.zero_offset + sg * 8;
    const int64_t zstart = zaddr & ~(int64_t)15;
    const uint32_t zbytes = (uint32_t)((zaddr + 8 * ng - zstart + 15) & ~(int64_t)15);
    const uint32_t wbytes = (uint32_t)nt * W4_TILE_BYTES, sbytes = (uint32_t)ng * 32u;
    /* HALVES: two full barriers per stage, the first for the first half's
     * tiles and the metadata, the second for the rest (no bytes where the
     * stage has <= W4B_HALF_TILES tiles: its phase completes on the
     * arrival alone) */
    const uint32_t full = full0 + (HALVES ? 16 : 8) * p.stage, full1 = full + 8;
    const uint32_t w0 = HALVES ? min(wbytes, (uint32_t)(W4B_HALF_TILES * W4_TILE_BYTES)) : wbytes;
    /* the slot's previous tiles are consumed (a fresh barrier passes the
     * first round's wait on parity 1 at once) */
    cuops_mbar_wait(empty0 + 8 * p.stage, p.phase ^ 1u);
    cuops_mbar_arrive_expect_tx(full, w0 + sbytes + zbytes);
    const uint32_t dst = ring + (uint32_t)p.stage * W4B_STAGE_BYTES;
    const uint8_t *wsrc = a.packed + ((int64_t)s * a.ktiles + j0) * W4_TILE_BYTES;
    cuops_bulk_load(dst, wsrc, w0, full);
    cuops_bulk_load(dst + W4B_WEIGHT_BYTES, a.packed + a.scale_offset + sg * 32, sbytes, full);
    cuops_bulk_load(dst + W4B_WEIGHT_BYTES + W4B_SCALE_BYTES, a.packed + zstart, zbytes, full);
    if (HALVES) {
        cuops_mbar_arrive_expect_tx(full1, wbytes - w0);
        if (wbytes > w0) cuops_bulk_load(dst + w0, wsrc + w0, wbytes - w0, full1);
    }
    cuops_ring_advance(p.stage, p.phase, S);
    if (++p.chunk == chunks) {
        p.chunk = 0;
        p.strip++;
    }
}
#endif

template <typename T, int CW, bool XSUM, bool HALVES>
__global__ void __launch_bounds__(32 * CW + 64, 1) w4a16_decode_bulk_ring_kernel(w4b_args_t a)
{
#if CUOPS_SM90A_DEVICE
    constexpr int TPW = W4B_STAGE_TILES / CW; /* tiles per math warp per stage */
    static_assert(TPW * CW == W4B_STAGE_TILES, "CW divides the stage");
    constexpr int NH = HALVES ? 2 : 1;        /* full barriers per stage */
    constexpr int TPH = TPW / NH;             /* a warp's tiles per (half) stage */
    __shared__ __align__(8) uint64_t full_bar[NH * W4B_MAX_STAGES], empty_bar[W4B_MAX_STAGES];
    __shared__ __align__(8) uint64_t red_full_bar[W4B_RED_SLOTS], red_empty_bar[W4B_RED_SLOTS];

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int S = a.stages;
    const int strip0 = (int)blockIdx.x * a.strips_per_cta;
    const int strip_end = min(strip0 + a.strips_per_cta, a.strips);
    const int chunks = (a.ktiles + W4B_STAGE_TILES - 1) / W4B_STAGE_TILES; /* stages per strip */
    const uint32_t ring = cuops_smem_addr(w4b_smem_base());
    const uint32_t full0 = cuops_smem_addr(&full_bar[0]);
    const uint32_t empty0 = cuops_smem_addr(&empty_bar[0]);
    const uint32_t red_full0 = cuops_smem_addr(&red_full_bar[0]);
    const uint32_t red_empty0 = cuops_smem_addr(&red_empty_bar[0]);

    /* The start of the stream (P182-P185, docs/w4a16.md): the math warps
     * request x first, 16 bytes per cp.async, zero past k (the packed padding
     * dequantizes to exactly 0; 0 * x must not meet a NaN left in shared
     * memory); x's slice of shared memory is theirs alone, so this needs no
     * barrier. Meanwhile the producer thread initializes the barriers and
     * issues the ring's first round, also before the CTA barrier. With x
     * requested after that barrier and the ring after x (the order before),
     * the first stage reached the math warps ~0.4 us later. */
    w4b_producer_t prod = {strip0, 0, 0, 0u};
    const unsigned char *xs = w4b_smem_base() + (size_t)S * W4B_STAGE_BYTES; /* after the ring */
    const int m = a.m;
    if (warp < CW) {
        const uint32_t xs_addr = cuops_smem_addr(xs);
        const int pieces = a.ktiles * 8;
        for (int r = 0; r < m; r++) {
            const uint16_t *src_row = a.x + (int64_t)r * a.ldx;
            const uint32_t dst_row = xs_addr + (uint32_t)r * (uint32_t)a.ktiles * 128u;
            for (int q = tid; q < pieces; q += 32 * CW) {
                const int left = a.k - q * 8;
                const int bytes = left >= 8 ? 16 : (left > 0 ? left * 2 : 0);
                const void *src = bytes ? (const void *)(src_row + q * 8) : (const void *)a.x;
                cuops_cp_async_16_zfill(dst_row + ((q >> 3) << 7) + (((q & 7) ^ (r & 7)) << 4), src,
                                        bytes);
            }
        }
        cuops_cp_async_commit();
    }
    if (tid == 32 * CW) {
        for (int s = 0; s < S; s++) {
            for (int hf = 0; hf < NH; hf++) cuops_mbar_init(full0 + 8 * (NH * s + hf), 1);
            cuops_mbar_init(empty0 + 8 * s, 32 * CW);
        }
        for (int r = 0; r < W4B_RED_SLOTS; r++) {
            cuops_mbar_init(red_full0 + 8 * r, 32 * CW);
            cuops_mbar_init(red_empty0 + 8 * r, 32);
        }
        cuops_mbar_init_fence();
        /* the first round: every slot is free; the math warps wait on these
         * barriers only after the CTA barrier below, which orders the
         * initialization before their waits */
        for (int q = 0; q < S && prod.strip < strip_end; q++)
            w4b_issue_stage<HALVES>(a, prod, chunks, ring, full0, empty0, S);
    }
    __syncthreads();

    float *red = (float *)(xs + a.x_bytes); /* [slots][CW][m][16] strip partials */
    /* XSUM: the x sums of each tile, then of each run, [ktiles][8] each,
     * after the partials (w4b_x_sums) */
    float *tsum = red + (size_t)W4B_RED_SLOTS * CW * (size_t)m * 16;
    float *xsum = tsum + (size_t)a.ktiles * 8;

    if (warp == CW) {
        /* ---- producer: one thread walks the CTA's strips front to back ---- */
        if (lane != 0) return;
        while (prod.strip < strip_end)
            w4b_issue_stage<HALVES>(a, prod, chunks, ring, full0, empty0, S);
        return;
    }

    if (warp == CW + 1) {
        /* ---- reducer: each strip's CW partials in warp order, then y ---- */
        for (int s = strip0, i = 0; s < strip_end; s++, i++) {
            const int rs = i % W4B_RED_SLOTS;
            cuops_mbar_wait(red_full0 + 8 * rs, (uint32_t)(i / W4B_RED_SLOTS) & 1u);
            const float *all = red + (size_t)rs * CW * (size_t)m * 16;
            for (int q = lane; q < m * 16; q += 32) {
                float v = all[q];
                for (int w = 1; w < CW; w++) v += all[w * m * 16 + q];
                const int64_t col = (int64_t)s * W4_STRIP_ROWS + (q & 15);
                if (col < a.n) ((T *)a.y)[(int64_t)(q >> 4) * a.ldy + col] = cuops_from_float<T>(v);
            }
            cuops_mbar_arrive(red_empty0 + 8 * rs);
        }
        return;
    }

    /* ---- math warps: x (requested above) in shared memory for all of them ---- */
    cuops_cp_async_wait<0>();
    cuops_named_bar_sync(1, 32 * CW);
    /* consecutive tiles of a warp's (half) stage that share a group: 1, 2
     * or 4 (at most TPH) */
    const int run_log2 = min(a.tpg_log2, TPH >= 4 ? 2 : TPH == 2 ? 1 : 0);
    if (XSUM) {
        w4b_x_sums<T, CW>(xs, tsum, xsum, m, a.ktiles, run_log2, tid);
        cuops_named_bar_sync(1, 32 * CW);
    }
    if (run_log2 == 0)
        w4b_math<T, CW, 1, XSUM, HALVES>(a, warp, lane, strip0, strip_end, chunks, full0, empty0,
                                         red_full0, red_empty0, xs, red, xsum);
    else if (run_log2 == 1)
        w4b_math<T, CW, 2, XSUM, HALVES>(a, warp, lane, strip0, strip_end, chunks, full0, empty0,
                                         red_full0, red_empty0, xs, red, xsum);
    else if constexpr (TPH >= 4)
        w4b_math<T, CW, 4, XSUM, HALVES>(a, warp, lane, strip0, strip_end, chunks, full0, empty0,
                                         red_full0, red_empty0, xs, red, xsum);
#endif
}

/* ---- host side ------------------------------------------------------------------ */

/* Shared memory besides the ring: x, the partial slots, and for the XSUM
 * form the x sums (8 floats per tile and 8 per run of tiles, at most one run
 * per tile). */
static int64_t w4b_fixed_smem(int64_t m, int64_t ktiles, int cw, int xsum)
{
    return m * ktiles * 128 + W4B_RED_SLOTS * (int64_t)cw * m * W4_STRIP_ROWS * 4 +
           (xsum ? ktiles * 64 : 0);
}

/* How many ring stages shared memory holds beside x (what serves and auto
 * judge by; the ring takes w4b_ring_stages of them). */
static int64_t w4b_room_stages(const struct cuops_handle *h, int64_t m, int64_t ktiles, int cw,
                               int xsum)
{
    const int64_t room =
        h->smem_optin_bytes - W4B_RESERVED_SMEM - w4b_fixed_smem(m, ktiles, cw, xsum);
    return room > 0 ? room / W4B_STAGE_BYTES : 0;
}

/* The plain forms (xsum = 0) or the XSUM form: the same calls but for the
 * shared memory the x sums take. */
static int w4b_serves(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                      const w4_geometry_t *geo, int xsum)
{
    if (h->sm_major != 9) return 0;
    if (d->m < 1 || d->m > 8) return 0;
    if (w4_tiles_per_group_log2(geo) < 0) return 0;
    if (!cuops_aligned(d->x, 16) || d->ldx % 8 != 0) return 0;
    /* 32-bit tile, strip and x-offset arithmetic in the kernel */
    if (geo->k >= ((int64_t)1 << 29) || geo->strips >= ((int64_t)1 << 30)) return 0;
    /* the fewer math warps need the less shared memory; both must fit */
    return w4b_room_stages(h, d->m, geo->ktiles, 16, xsum) >= W4B_MIN_STAGES;
}

int w4a16_decode_bulk_ring_serves(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                  const w4_geometry_t *geo)
{
    return w4b_serves(h, d, geo, 0);
}

/* Auto's choice for m <= 8 on sm_90 (w4a16_dispatch.cu): the rule and what
 * it rests on are in w4a16_bulk_ring_form.h. */
int w4a16_decode_bulk_ring_auto(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                const w4_geometry_t *geo)
{
    if (!w4a16_decode_bulk_ring_serves(h, d, geo)) return W4B_AUTO_NONE;
    return w4b_auto_form(d->m, d->n, d->k, h->num_sms, w4b_room_stages(h, d->m, geo->ktiles, 16, 0),
                         w4b_room_stages(h, d->m, geo->ktiles, 16, 1));
}

/* One instance's launch: its shared memory limit, then the grid. */
template <typename T, int CW, bool XSUM, bool HALVES>
static cudaError_t w4b_run(const w4b_args_t &a, int64_t ctas, size_t smem, cudaStream_t stream)
{
    const void *fn = (const void *)w4a16_decode_bulk_ring_kernel<T, CW, XSUM, HALVES>;
    cudaError_t err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess) return err;
    w4a16_decode_bulk_ring_kernel<T, CW, XSUM, HALVES>
        <<<(unsigned)ctas, 32 * CW + 64, smem, stream>>>(a);
    return cudaSuccess;
}

template <typename T, int CW, bool XSUM>
static cuops_status_t w4b_launch(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                 const w4_geometry_t *geo, const char *name)
{
    const int64_t sms = h->num_sms > 0 ? h->num_sms : 132;
    const int64_t strips = cuops_ceil_div(d->n, W4_STRIP_ROWS);
    const int64_t per_cta = cuops_ceil_div(strips, sms);
    const int64_t ctas = cuops_ceil_div(strips, per_cta);
    const int64_t stages =
        w4b_ring_stages(d->m, per_cta, w4b_room_stages(h, d->m, geo->ktiles, CW, XSUM));

    w4b_args_t a;
    memset(&a, 0, sizeof a);
    w4_ring_common_args(&a, d, geo, strips, per_cta, stages);
    a.x = (const uint16_t *)d->x;
    a.ldx = d->ldx;
    a.k = (int)geo->k;
    a.x_bytes = (uint32_t)(d->m * geo->ktiles * 128);

    const size_t smem =
        (size_t)(stages * W4B_STAGE_BYTES + w4b_fixed_smem(d->m, geo->ktiles, CW, XSUM));
    /* the 8-warp study form keeps one barrier per stage */
    cudaError_t err;
    if constexpr (CW == 16)
        err = w4b_stage_halves(d->m, per_cta, geo->ktiles)
                  ? w4b_run<T, CW, XSUM, true>(a, ctas, smem, cuops_stream(h))
                  : w4b_run<T, CW, XSUM, false>(a, ctas, smem, cuops_stream(h));
    else
        err = w4b_run<T, CW, XSUM, false>(a, ctas, smem, cuops_stream(h));
    if (err != cudaSuccess) return cuops_cuda_fail(h, err, name);
    cuops_status_t st = cuops_cuda_check_launch(h, name);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    h->last_kernel = name;
    return CUOPS_STATUS_SUCCESS;
}

cuops_status_t w4a16_launch_decode_bulk_ring(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                             const w4_geometry_t *geo, int math_warps, int xsum,
                                             const char **kernel_name)
{
    const char *const name = math_warps == 8 ? "w4a16_decode_bulk_ring_w8"
                             : xsum          ? "w4a16_decode_bulk_ring_xsum"
                                             : "w4a16_decode_bulk_ring";
    *kernel_name = name;
    if (!w4b_serves(h, d, geo, xsum))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: serves sm_90 with m <= 8, group_size 64 * 2^p or one group per "
                          "row, x 16-byte aligned and ldx %% 8 == 0, k < 2^29, and x (m * "
                          "ceil(k / 64) * 128 bytes%s) beside %d ring stages of %d bytes in "
                          "shared memory (sm_%d%d, m %lld, group_size %lld, k %lld, ldx %lld)",
                          name, xsum ? ", and its sums, 64 bytes per 64 k" : "", W4B_MIN_STAGES,
                          W4B_STAGE_BYTES, h->sm_major, h->sm_minor,
                          (long long)d->m, (long long)d->group_size, (long long)d->k,
                          (long long)d->ldx);
    const int bf = d->act_type == CUOPS_DTYPE_BF16;
    if (math_warps == 8)
        return bf ? w4b_launch<__nv_bfloat16, 8, false>(h, d, geo, name)
                  : w4b_launch<__half, 8, false>(h, d, geo, name);
    if (xsum)
        return bf ? w4b_launch<__nv_bfloat16, 16, true>(h, d, geo, name)
                  : w4b_launch<__half, 16, true>(h, d, geo, name);
    return bf ? w4b_launch<__nv_bfloat16, 16, false>(h, d, geo, name)
              : w4b_launch<__half, 16, false>(h, d, geo, name);
}
