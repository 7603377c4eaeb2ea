/*
 * gemm_sm80_stages.cu - the pipeline-depth and tile-shape ablations of the
 * classic multistage mma.sync GEMM (kernel in gemm_sm80_multistage.cuh),
 * K-major operands only (trans_a = N, trans_b = T):
 *
 *   sm80_128x256x32_s3 / _s2   fewer stages than the tuned s4: 48 / 24 KB in
 *                              flight per SM instead of 72 KB (Little's law:
 *                              at ~56 GB/s per SM of operand traffic at the
 *                              mma.sync ceiling, 1 us of latency needs ~56 KB)
 *   sm80_128x256x64_s3         BK = 64: half the barriers and k-tile
 *                              bookkeeping per FLOP, 144 KB (sm_80, sm_90)
 *   sm80_128x256x64_s4         the sm_90 variant: 192 KB of shared memory,
 *                              only Hopper's 227 KB holds it
 *   sm80_128x128x32_s4         4 warps of 64x64, 64 KB: two CTAs per SM, so
 *                              one CTA's barrier stall is covered by the other
 *
 * All keep 64x64 warp tiles (128 accumulators per thread).
 */
#include "cuda/gemm/gemm_sm80_multistage.cuh"

#define DEFINE_VARIANT(ID, BM, BN, BK, WM, WN, ST)                                              \
    int sm80_supports_##ID(const struct cuops_handle *h, const cuops_gemm_desc_t *d)           \
    {                                                                                          \
        return sm80_supports_common(                                                           \
            h, d, BM, BN, BK, sm80_multistage_smem<BM, BN, BK, WM, WN, ST, false, true, true>(), \
            SM80_LAYOUT_NT);                                                                   \
    }                                                                                          \
    cuops_status_t sm80_launch_##ID(struct cuops_handle *h, const cuops_gemm_desc_t *d,        \
                                    const cuops_options_t *opt)                                \
    {                                                                                          \
        return sm80_run_multistage<BM, BN, BK, WM, WN, ST, false, true, true>(                 \
            h, d, sm80_flags(opt), "sm80_" #ID);                                               \
    }

DEFINE_VARIANT(128x256x32_s3, 128, 256, 32, 2, 4, 3)
DEFINE_VARIANT(128x256x32_s2, 128, 256, 32, 2, 4, 2)
DEFINE_VARIANT(128x256x64_s3, 128, 256, 64, 2, 4, 3)
DEFINE_VARIANT(128x256x64_s4, 128, 256, 64, 2, 4, 4)
DEFINE_VARIANT(128x128x32_s4, 128, 128, 32, 2, 2, 4)
