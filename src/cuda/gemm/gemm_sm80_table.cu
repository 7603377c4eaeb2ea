/*
 * gemm_sm80_table.cu - the mma.sync (cp.async + ldmatrix + mma.sync
 * m16n8k16) GEMM variants, in order of preference, for gemm_dispatch.cu.
 *
 * The lean-loop kernels (gemm_sm80_lean.cu) come first, as measured fastest;
 * the classic sm80_128x256x32_s4 after them serves every transpose, dtype
 * and shape the family accepts; the dispatch uses the first entry that
 * accepts a call on sm_80..89 (and after the sm_90 kernels on sm_90). Then
 * the study's ablations of seed 000's ideas, each selectable by name (cuops_options_t.variant) so cuops-bench can
 * time them side by side; docs/gemm-mma-sync.md predicts what each is worth.
 */
#include "cuda/gemm/gemm_sm80_common.cuh"

#define DECLARE_VARIANT(ID)                                                                    \
    int sm80_supports_##ID(const struct cuops_handle *h, const cuops_gemm_desc_t *d);          \
    cuops_status_t sm80_launch_##ID(struct cuops_handle *h, const cuops_gemm_desc_t *d,        \
                                    const cuops_options_t *opt);

/* gemm_sm80_lean.cu */
DECLARE_VARIANT(lean_128x256x64_s3)
DECLARE_VARIANT(lean_128x256x32_s4)
cuops_status_t sm80_launch_lean_128x256x64_s3_halfline(struct cuops_handle *h,
                                                       const cuops_gemm_desc_t *d,
                                                       const cuops_options_t *opt);
/* gemm_sm80_ws.cu */
DECLARE_VARIANT(ws_128x256x64_s4)
/* gemm_sm80_multistage.cu */
DECLARE_VARIANT(128x256x32_s4)
cuops_status_t sm80_launch_128x256x32_s4_stagger(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                                 const cuops_options_t *opt);
cuops_status_t sm80_launch_128x256x32_s4_noswizzle(struct cuops_handle *h,
                                                   const cuops_gemm_desc_t *d,
                                                   const cuops_options_t *opt);
/* gemm_sm80_stages.cu */
DECLARE_VARIANT(128x256x32_s3)
DECLARE_VARIANT(128x256x32_s2)
DECLARE_VARIANT(128x256x64_s3)
DECLARE_VARIANT(128x256x64_s4)
DECLARE_VARIANT(128x128x32_s4)
/* gemm_sm80_padding.cu */
DECLARE_VARIANT(128x256x32_s4_pad)
/* gemm_sm80_inplace.cu */
DECLARE_VARIANT(seed_inplace)
DECLARE_VARIANT(seed_s2)
cuops_status_t sm80_launch_seed_inplace_stagger(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                                const cuops_options_t *opt);

static const cuops_gemm_kernel_t sm80_table[] = {
    /* lean main loop (hoisted copy and ldmatrix addresses, branch-free body),
     * measured first (H200, f16 8192^3, run bff2c38): BK 64 x 3 stages
     * (144 KB: sm_80, sm_90) 386.6 TFLOP/s for NT; BK 32 x 4 stages (96 KB)
     * 340.3 for every transpose; the classic loop 306.2 */
    {"sm80_lean_128x256x64_s3", sm80_supports_lean_128x256x64_s3, sm80_launch_lean_128x256x64_s3},
    {"sm80_lean_128x256x32_s4", sm80_supports_lean_128x256x32_s4, sm80_launch_lean_128x256x32_s4},
    /* the lean loop's math with a producer warpgroup and per-stage mbarriers
     * (NT, sm_90 only: setmaxnreg) */
    {"sm80_ws_128x256x64_s4", sm80_supports_ws_128x256x64_s4, sm80_launch_ws_128x256x64_s4},
    /* classic loop: all transposes, 96 KB (fits every sm_8x and sm_90) */
    {"sm80_128x256x32_s4", sm80_supports_128x256x32_s4, sm80_launch_128x256x32_s4},
    /* (b) stage count and tile shape */
    {"sm80_128x256x64_s3", sm80_supports_128x256x64_s3, sm80_launch_128x256x64_s3},
    {"sm80_128x256x64_s4", sm80_supports_128x256x64_s4, sm80_launch_128x256x64_s4},
    {"sm80_128x256x32_s3", sm80_supports_128x256x32_s3, sm80_launch_128x256x32_s3},
    {"sm80_128x256x32_s2", sm80_supports_128x256x32_s2, sm80_launch_128x256x32_s2},
    {"sm80_128x128x32_s4", sm80_supports_128x128x32_s4, sm80_launch_128x128x32_s4},
    /* the lean kernel's copies covering half lines (its first build) */
    {"sm80_lean_128x256x64_s3_halfline", sm80_supports_lean_128x256x64_s3,
     sm80_launch_lean_128x256x64_s3_halfline},
    /* (e) padding instead of XOR swizzle */
    {"sm80_128x256x32_s4_pad", sm80_supports_128x256x32_s4_pad, sm80_launch_128x256x32_s4_pad},
    /* (c) StaggerU forced, (d) grouped rasterization off */
    {"sm80_128x256x32_s4_stagger", sm80_supports_128x256x32_s4, sm80_launch_128x256x32_s4_stagger},
    {"sm80_128x256x32_s4_noswizzle", sm80_supports_128x256x32_s4,
     sm80_launch_128x256x32_s4_noswizzle},
    /* (a) the seed's tile: classic double buffer vs in-place refill */
    {"sm80_seed_256x128x64_s2", sm80_supports_seed_s2, sm80_launch_seed_s2},
    {"sm80_seed_256x128x64_inplace", sm80_supports_seed_inplace, sm80_launch_seed_inplace},
    {"sm80_seed_256x128x64_inplace_stagger", sm80_supports_seed_inplace,
     sm80_launch_seed_inplace_stagger},
};

extern "C" const cuops_gemm_kernel_t *cuops_gemm_sm80_kernel_table(int *count)
{
    *count = (int)(sizeof(sm80_table) / sizeof(sm80_table[0]));
    return sm80_table;
}
