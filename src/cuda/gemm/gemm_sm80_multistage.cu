/*
 * gemm_sm80_multistage.cu - the tuned mma.sync GEMM: 128x256x32 CTA tile,
 * 8 warps of 64x64 (128 fp32 accumulators per thread, the seed's register
 * budget), 4 cp.async stages (96 KB: fits sm_80's 163 KB, sm_86/89's 99 KB
 * and sm_90's 227 KB), XOR-swizzled shared memory, grouped rasterization.
 * Serves all four transposes: K-major operands through plain ldmatrix,
 * MN-major ones (A stored [k,m], B stored [k,n]) through ldmatrix.trans.
 *
 * Why 128x256x32 x 4 stages: per k-tile a CTA issues 128*256*32*2 FLOP for
 * (128+256)*32*2 B = 24 KB of loads; at the ~640 TFLOP/s mma.sync ceiling
 * (4.85 TFLOP/s per SM) that is one k-tile every ~0.43 us per SM, so the
 * three tiles in flight cover ~1.3 us of L2/HBM latency (Little's law:
 * 24 KB x 3 = 72 KB in flight per SM, 9.5 MB over 132 SMs). BK = 32 keeps
 * the tile (and the stage count per KB) small; BK = 64 is the ablation.
 *
 * Named variants (gemm_sm80_table.cu): sm80_128x256x32_s4, and the same
 * kernel with StaggerU forced (_stagger) or grouped raster off (_noswizzle).
 * The flags CUOPS_FLAG_STAGGER_K / CUOPS_FLAG_NO_SWIZZLE work on every variant.
 */
#include "cuda/gemm/gemm_sm80_multistage.cuh"

#define TUNED_CFG 128, 256, 32, 2, 4, 4, false

int sm80_supports_128x256x32_s4(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    /* the MN-major layouts need the same bytes (BM*BK = BK*BM) */
    return sm80_supports_common(h, d, 128, 256, 32, sm80_multistage_smem<TUNED_CFG, true, true>(),
                                SM80_LAYOUT_ALL);
}

static cuops_status_t run_tuned(struct cuops_handle *h, const cuops_gemm_desc_t *d, unsigned flags,
                                const char *name)
{
    const bool a_kmaj = d->trans_a == CUOPS_OP_N;
    const bool b_kmaj = d->trans_b == CUOPS_OP_T;
    if (a_kmaj && b_kmaj) return sm80_run_multistage<TUNED_CFG, true, true>(h, d, flags, name);
    if (a_kmaj) return sm80_run_multistage<TUNED_CFG, true, false>(h, d, flags, name);
    if (b_kmaj) return sm80_run_multistage<TUNED_CFG, false, true>(h, d, flags, name);
    return sm80_run_multistage<TUNED_CFG, false, false>(h, d, flags, name);
}

cuops_status_t sm80_launch_128x256x32_s4(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                         const cuops_options_t *opt)
{
    return run_tuned(h, d, sm80_flags(opt), "sm80_128x256x32_s4");
}

cuops_status_t sm80_launch_128x256x32_s4_stagger(struct cuops_handle *h,
                                                 const cuops_gemm_desc_t *d,
                                                 const cuops_options_t *opt)
{
    return run_tuned(h, d, sm80_flags(opt) | CUOPS_FLAG_STAGGER_K, "sm80_128x256x32_s4_stagger");
}

cuops_status_t sm80_launch_128x256x32_s4_noswizzle(struct cuops_handle *h,
                                                   const cuops_gemm_desc_t *d,
                                                   const cuops_options_t *opt)
{
    return run_tuned(h, d, sm80_flags(opt) | CUOPS_FLAG_NO_SWIZZLE, "sm80_128x256x32_s4_noswizzle");
}
