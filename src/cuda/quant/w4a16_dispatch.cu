/*
 * w4a16_dispatch.cu - chooses the W4A16 GEMM kernel and its split-K for a
 * call: the variant table, the split heuristic and the workspace.
 *
 * Variants (cuops_options_t.variant, cuops_variant_names("w4a16")):
 *   auto                 m <= 8 on sm_90: w4a16_decode_bulk_ring where each
 *                        CTA gets >= 10 strips (n >= ~21000 on 132 SMs) and
 *                        room for >= 4 ring stages beside x (the ring runs
 *                        3 of them at m = 1 and on short streams,
 *                        w4b_ring_stages, and each stage on two barriers
 *                        where a CTA streams <= 7 stages, <= 8 at m >= 2,
 *                        w4b_stage_halves), unless options.split_k is set
 *                        (m <= 3: its form w4a16_decode_bulk_ring_xsum,
 *                        which m <= 2 also takes from n >= ~4096 where
 *                        k >= 4096: w4a16_decode_bulk_ring_auto);
 *                        else 5 <= m <= 16: w4a16_decode_phase_ring where
 *                        each CTA gets >= 3 strips or k <= 4096, or (m > 8)
 *                        with K split over clusters of 2 CTAs where that
 *                        fills the SMs once, unless options.split_k is set;
 *                        m <= 16: w4a16_decode_warp where it serves the call;
 *                        m <= 64: on sm_90 w4a16_decode_wgmma where it serves
 *                        the call, else w4a16_decode_stream where it serves it
 *                        (group_size % 64 == 0 or one group, x 16-byte aligned,
 *                        ldx % 8 == 0), else w4a16_decode_splitk;
 *                        m >= 256 on sm_90: w4a16_prefill_wgmma_ahead where
 *                        it serves the call, else w4a16_dequant_gemm;
 *                        otherwise w4a16_mma
 *   w4a16_decode_stream  m <= 64: cp.async ring, x shared per CTA, split-K
 *                        reduced in the same kernel (w4a16_decode_stream.cu);
 *                        NOT_SUPPORTED, with the reason, outside what it serves
 *   w4a16_decode_splitk  m <= 64: one m block of 8/16/32/64 rows, K split
 *                        across CTAs until the SMs are busy (register batches,
 *                        second kernel for the reduction; w4a16_mma_splitk.cu)
 *   w4a16_mma            any m: m in blocks of 64 rows (grid.z), no split
 *                        unless options.split_k asks for one
 *   w4a16_dequant_gemm   any m (auto: m >= 256 on sm_90): dequantize chunks
 *                        of W into the workspace, then the dense GEMM
 *                        (w4a16_prefill_dequant_gemm.cu); options.split_k
 *                        is ignored
 *   w4a16_decode_warp    m <= 16 (auto there): per-warp register pipeline
 *                        of weight tiles, x staged once per chunk, split-K
 *                        reduced in the same kernel (w4a16_decode_warp.cu);
 *                        NOT_SUPPORTED, with the reason, outside what it serves
 *   w4a16_prefill_wgmma  sm_90, any m (auto: m >= 256), group_size % 64 == 0
 *                        or one group per row: the weight dequantized in
 *                        registers as wgmma's A operand, x by TMA
 *                        (w4a16_prefill_wgmma.cu); NOT_SUPPORTED elsewhere
 *   w4a16_decode_wgmma   sm_90, m <= 64, group_size % 64 == 0 or one group
 *                        per row: the same in-register dequantization with
 *                        the x tile cut to m and K split across a cluster,
 *                        reduced in distributed shared memory
 *                        (w4a16_decode_wgmma.cu); NOT_SUPPORTED elsewhere
 *   w4a16_decode_wgmma_kt1  the same with one 64-k block per pipeline stage
 *                        (the default takes 4: fewer, larger bulk copies)
 *   w4a16_decode_bulk_ring  sm_90, m <= 8, group_size 64 * 2^p or one group
 *                        per row: whole strips per CTA, the weight streamed
 *                        by one producer thread through a ring of 32 KB bulk
 *                        copies, 16 math warps with w4a16_decode_warp's tile
 *                        math (w4a16_decode_bulk_ring.cu); no split-K, so
 *                        options.split_k is ignored
 *   w4a16_decode_bulk_ring_w8  the same with 8 math warps
 *   w4a16_decode_bulk_ring_xsum  the same with 16 math warps, the zero point
 *                        taken off through sums of x instead of from every
 *                        weight pair (one FFMA per output and group run)
 *   w4a16_decode_phase_ring  sm_90, m <= 16, group_size 64 * 2^p or one group
 *                        per row: the bulk ring's stream of whole strips, with
 *                        x streamed beside it by TMA in phases of 1024 k
 *                        instead of resident (w4a16_decode_phase_ring.cu);
 *                        options.split_k > 0 splits K over clusters of that
 *                        many CTAs (at most 8 and one per 1024-k phase)
 *   w4a16_decode_phase_ring_w8  the same with 8 math warps
 *   w4a16_decode_phase_ring_q1  the same with one quad of 4 strips per pass
 *                        (x read again for every 4 strips; a study form)
 *   w4a16_prefill_wgmma_ahead  w4a16_prefill_wgmma with the int4 words loaded
 *                        from global memory into registers, not through
 *                        shared memory, and each block dequantized while the
 *                        two before it run (three A register sets)
 * options.split_k > 0 forces the number of K splits on the split-K variants.
 * k == 0 writes y = 0 with a 2-D memset (no weight is read).
 *
 * Split-K choice: the N tiles give strips/4 CTAs (64 weight rows each). We
 * want ~4 CTAs (16 warps, ~32 KB of loads in flight) per SM, so
 * splits = ceil(4 * SMs / CTAs), but (a) at least 4 tiles (256 k) per split,
 * and (b) the fp32 partials (splits * m * n * 4 bytes, written then read) should
 * stay under ~1/8 of the int4 weight bytes, unless that leaves fewer CTAs
 * than SMs, in which case we split just enough to cover the SMs once.
 */
#include <string.h>

#include "cuda/quant/w4a16_layout.cuh"

static const char *const w4a16_variants[] = {"auto", "w4a16_decode_splitk", "w4a16_mma",
                                             "w4a16_dequant_gemm", "w4a16_decode_stream",
                                             "w4a16_decode_warp", "w4a16_prefill_wgmma",
                                             "w4a16_decode_wgmma", "w4a16_decode_wgmma_kt1",
                                             "w4a16_decode_bulk_ring",
                                             "w4a16_decode_bulk_ring_w8",
                                             "w4a16_prefill_wgmma_ahead",
                                             "w4a16_decode_phase_ring",
                                             "w4a16_decode_phase_ring_w8",
                                             "w4a16_decode_bulk_ring_xsum",
                                             "w4a16_decode_phase_ring_q1"};
enum {
    W4A16_AUTO = 0,
    W4A16_DECODE_SPLITK = 1,
    W4A16_MMA = 2,
    W4A16_DEQUANT_GEMM = 3,
    W4A16_DECODE_STREAM = 4,
    W4A16_DECODE_WARP = 5,
    W4A16_PREFILL_WGMMA = 6,
    W4A16_DECODE_WGMMA = 7,
    W4A16_DECODE_WGMMA_KT1 = 8,
    W4A16_DECODE_BULK_RING = 9,
    W4A16_DECODE_BULK_RING_W8 = 10,
    W4A16_PREFILL_WGMMA_AHEAD = 11,
    W4A16_DECODE_PHASE_RING = 12,
    W4A16_DECODE_PHASE_RING_W8 = 13,
    W4A16_DECODE_BULK_RING_XSUM = 14,
    W4A16_DECODE_PHASE_RING_Q1 = 15,
    W4A16_NUM_VARIANTS = 16
};

/* ---- prefill (m >= 256): w4a16_prefill_dequant_gemm.cu --------------------
 * Dequantize chunks of the weight into the workspace and run the dense GEMM;
 * auto picks it on sm_90 from this many rows of x on (the tensor-core GEMM
 * is compute-bound there, so the dense chunk's extra traffic is a fraction). */
#define W4A16_PREFILL_MIN_M 256
cuops_status_t w4a16_launch_prefill_dequant_gemm(struct cuops_handle *h,
                                                 const cuops_w4a16_desc_t *d,
                                                 const w4_geometry_t *geo,
                                                 const char **kernel_name);

extern "C" const char *const *cuops_cuda_w4a16_variant_names(int *count)
{
    *count = W4A16_NUM_VARIANTS;
    return w4a16_variants;
}

static int64_t w4a16_choose_splits(const struct cuops_handle *h, const w4_geometry_t *geo,
                                   int64_t m, int64_t m_blocks)
{
    int64_t sms = h->num_sms > 0 ? h->num_sms : 132;
    int64_t ctas = (geo->strips / 4) * m_blocks;
    int64_t want = cuops_ceil_div(4 * sms, ctas);
    int64_t cover = cuops_ceil_div(sms, ctas);
    int64_t by_tiles = geo->ktiles / 4 > 1 ? geo->ktiles / 4 : 1;
    /* weight bytes / 8 >= splits * m * n * 8 (partials written and read) */
    int64_t weight_bytes = geo->strips * geo->ktiles * W4_TILE_BYTES;
    int64_t by_bytes = weight_bytes / (64 * m * geo->strips * W4_STRIP_ROWS);
    int64_t s = want < by_bytes ? want : by_bytes;
    if (s < cover) s = cover;
    if (s > by_tiles) s = by_tiles;
    if (s > 64) s = 64;
    return s < 1 ? 1 : s;
}

extern "C" cuops_status_t cuops_cuda_gemm_w4a16(struct cuops_handle *h,
                                                const cuops_w4a16_desc_t *d,
                                                const cuops_options_t *opt)
{
    if (d->k == 0) { /* an empty sum: y = 0 (all-zero bits are +0 in f16 and bf16) */
        CUOPS_CUDA_TRY(h, cudaMemset2DAsync(d->y, (size_t)d->ldy * 2, 0, (size_t)d->n * 2,
                                            (size_t)d->m, cuops_stream(h)));
        h->last_kernel = "w4a16_k0_memset";
        return CUOPS_STATUS_SUCCESS;
    }
    w4_geometry_t geo;
    if (!w4_geometry_init(&geo, d->n, d->k, d->group_size, d->act_type))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "w4a16 (cuda): group_size %lld with k %lld is not supported "
                          "(need a multiple of 16, or group_size >= k; act f16/bf16)",
                          (long long)d->group_size, (long long)d->k);
    if (!cuops_aligned(d->packed, 16))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "w4a16 (cuda): the packed weight must be 16-byte aligned");
    if (h->sm_major < 8)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "w4a16 (cuda): needs sm_80 or newer (mma.sync bf16), device is sm_%d%d",
                          h->sm_major, h->sm_minor);
    if (geo.strips / 4 > 0x7fffffff)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "w4a16 (cuda): n %lld too large",
                          (long long)d->n);

    int variant = W4A16_AUTO;
    if (!cuops_variant_is_auto(opt)) {
        variant = -1;
        for (int i = 1; i < W4A16_NUM_VARIANTS; i++)
            if (strcmp(opt->variant, w4a16_variants[i]) == 0) variant = i;
        if (variant < 0)
            return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "w4a16 (cuda): no variant named '%s'",
                              opt->variant);
    }
    if (variant == W4A16_AUTO) {
        /* m <= 8 on many strips: the producer-fed ring, 7-10 % faster than
         * the per-warp kernel at m = 1, 2, 4 x 28672 x 8192 (H200, docs/w4a16.md);
         * for m <= 3 its form with the zero point through x sums, 2-4 % faster
         * again there, which at m <= 2 also beats the per-warp kernel by 4-9 %
         * from n = 4096 where k >= 4096 (P203).
         * 5 <= m <= 16: the same stream with x in phases, 17-23 % faster than
         * the per-warp kernel at m = 16 and 0-16 % at m = 5..8 where each CTA
         * gets >= 3 strips or k <= 4096 (H200, docs/w4a16.md).
         * m <= 16: the per-warp kernel measured 1.58x cuBLAS geomean against
         * 1.36x for the stream kernel on the decode suite (H200, bff2c38),
         * faster on 15 of 16 rows (docs/w4a16.md) */
        const int bulk = d->m <= 8 && !(opt && opt->split_k > 0)
                             ? w4a16_decode_bulk_ring_auto(h, d, &geo)
                             : W4B_AUTO_NONE;
        if (bulk != W4B_AUTO_NONE)
            variant = bulk == W4B_AUTO_XSUM ? W4A16_DECODE_BULK_RING_XSUM : W4A16_DECODE_BULK_RING;
        else if (!(opt && opt->split_k > 0) && w4a16_decode_phase_ring_auto(h, d, &geo))
            variant = W4A16_DECODE_PHASE_RING;
        else if (d->m <= 16 && w4a16_decode_warp_serves(d, &geo))
            variant = W4A16_DECODE_WARP;
        else if (d->m <= 64 && w4a16_decode_wgmma_serves(h, d, &geo))
            variant = W4A16_DECODE_WGMMA;
        else if (d->m <= 64)
            variant = w4a16_decode_stream_serves(d, &geo) ? W4A16_DECODE_STREAM : W4A16_DECODE_SPLITK;
        else
            variant = W4A16_MMA;
    }
    /* prefill: chosen in auto on sm_90 only, the fused kernel where it serves
     * the call (the form that dequantizes a block ahead: +2-5 % on every row
     * of the prefill suite over the shared-memory form, H200, docs/w4a16.md);
     * forced, w4a16_dequant_gemm serves any shape */
    if (cuops_variant_is_auto(opt) && d->m >= W4A16_PREFILL_MIN_M && h->sm_major == 9)
        variant = w4a16_prefill_wgmma_serves(h, d, &geo) ? W4A16_PREFILL_WGMMA_AHEAD
                                                         : W4A16_DEQUANT_GEMM;
    if (variant == W4A16_PREFILL_WGMMA || variant == W4A16_PREFILL_WGMMA_AHEAD) {
        const char *kernel = NULL;
        return w4a16_launch_prefill_wgmma(h, d, &geo, variant == W4A16_PREFILL_WGMMA_AHEAD,
                                          opt && opt->split_k > 0 ? opt->split_k : 0, &kernel);
    }
    if (variant == W4A16_DECODE_WGMMA || variant == W4A16_DECODE_WGMMA_KT1) {
        const char *kernel = NULL;
        return w4a16_launch_decode_wgmma(h, d, &geo, variant == W4A16_DECODE_WGMMA_KT1 ? 1 : 0,
                                         opt && opt->split_k > 0 ? opt->split_k : 0, &kernel);
    }
    if (variant == W4A16_DECODE_BULK_RING || variant == W4A16_DECODE_BULK_RING_W8 ||
        variant == W4A16_DECODE_BULK_RING_XSUM) {
        const char *kernel = NULL;
        return w4a16_launch_decode_bulk_ring(h, d, &geo,
                                             variant == W4A16_DECODE_BULK_RING_W8 ? 8 : 16,
                                             variant == W4A16_DECODE_BULK_RING_XSUM, &kernel);
    }
    if (variant == W4A16_DECODE_PHASE_RING || variant == W4A16_DECODE_PHASE_RING_W8 ||
        variant == W4A16_DECODE_PHASE_RING_Q1) {
        const char *kernel = NULL;
        return w4a16_launch_decode_phase_ring(h, d, &geo,
                                              variant == W4A16_DECODE_PHASE_RING_W8 ? 8 : 16,
                                              variant == W4A16_DECODE_PHASE_RING_Q1 ? 1 : 0,
                                              opt && opt->split_k > 0 ? opt->split_k : 0, &kernel);
    }
    if (variant == W4A16_DEQUANT_GEMM) {
        const char *kernel = NULL;
        return w4a16_launch_prefill_dequant_gemm(h, d, &geo, &kernel);
    }
    if (variant == W4A16_DECODE_STREAM) {
        if (!w4a16_decode_stream_serves(d, &geo))
            return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                              "w4a16 (cuda): w4a16_decode_stream serves m <= 64, group_size a "
                              "multiple of 64 or >= k, x 16-byte aligned and ldx %% 8 == 0 "
                              "(m %lld, group_size %lld, k %lld, ldx %lld)",
                              (long long)d->m, (long long)d->group_size, (long long)d->k,
                              (long long)d->ldx);
        const char *kernel = NULL;
        return w4a16_launch_decode_stream(h, d, &geo, opt && opt->split_k > 0 ? opt->split_k : 0,
                                          &kernel);
    }
    if (variant == W4A16_DECODE_WARP) {
        if (!w4a16_decode_warp_serves(d, &geo))
            return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                              "w4a16 (cuda): w4a16_decode_warp serves m <= 16, x 16-byte aligned "
                              "and ldx %% 8 == 0, k < 2^29, n < 2^34 "
                              "(m %lld, k %lld, ldx %lld)",
                              (long long)d->m, (long long)d->k, (long long)d->ldx);
        const char *kernel = NULL;
        return w4a16_launch_decode_warp(h, d, &geo, opt && opt->split_k > 0 ? opt->split_k : 0,
                                        &kernel);
    }
    if (variant == W4A16_DECODE_SPLITK && d->m > 64)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "w4a16 (cuda): w4a16_decode_splitk serves m <= 64, m is %lld",
                          (long long)d->m);

    int m_frags = d->m <= 8 ? 1 : d->m <= 16 ? 2 : d->m <= 32 ? 4 : 8;
    int64_t m_blocks = cuops_ceil_div(d->m, 8 * (int64_t)m_frags);
    int64_t splits = 1;
    if (opt && opt->split_k > 0)
        splits = opt->split_k;
    else if (variant == W4A16_DECODE_SPLITK)
        splits = w4a16_choose_splits(h, &geo, d->m, m_blocks);
    if (splits > geo.ktiles) splits = geo.ktiles;
    if (splits > 65535) splits = 65535;
    /* no empty split: every split gets ceil(ktiles / splits) tiles but the last */
    splits = cuops_ceil_div(geo.ktiles, cuops_ceil_div(geo.ktiles, splits));

    float *ws = NULL;
    if (splits > 1) {
        if (d->m > INT64_MAX / 4 / splits / (geo.strips * W4_STRIP_ROWS))
            return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                              "w4a16 (cuda): split-K workspace for m %lld overflows",
                              (long long)d->m);
        size_t bytes = (size_t)splits * (size_t)d->m * (size_t)(geo.strips * W4_STRIP_ROWS) * 4;
        void *p = NULL;
        cuops_status_t s = cuops_cuda_workspace_aligned(h, bytes, 16, &p);
        if (cuops_cuda_workspace_short(h, s) && !(opt && opt->split_k > 0)) {
            /* a user workspace without room for the split the plan chose:
             * the call runs unsplit */
            splits = 1;
            s = CUOPS_STATUS_SUCCESS;
        }
        if (s != CUOPS_STATUS_SUCCESS) return s;
        ws = (float *)p;
    }
    const char *kernel = NULL;
    return w4a16_launch_mma_splitk(h, d, &geo, m_frags, (int)splits, ws, &kernel);
}
