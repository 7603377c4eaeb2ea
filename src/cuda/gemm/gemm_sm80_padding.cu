/*
 * gemm_sm80_padding.cu - bank-conflict avoidance by padding instead of XOR
 * swizzle: the tuned 128x256x32 x 4-stage kernel with every shared-memory
 * row widened by 16 bytes (sm80_tile_layout<..., PAD = true>), K-major
 * operands only. Variant: sm80_128x256x32_s4_pad.
 *
 * What it changes: ldmatrix stays conflict-free (row r starts 80*r bytes in,
 * eight rows -> eight distinct 16-byte bank groups), the cp.async writes of
 * 64-byte rows become 2-way conflicted on one chunk in eight, and each stage
 * grows from 24 KB to 30 KB (120 KB for 4 stages: no longer fits the 99 KB of
 * sm_86/89). The prediction is "no measurable difference" on the H200: the
 * swizzle costs one LOP3 per address and the kernel is not shared-memory
 * bound at 8 LDSM per 32 HMMA.
 */
#include "cuda/gemm/gemm_sm80_multistage.cuh"

#define PAD_CFG 128, 256, 32, 2, 4, 4, true, true, true

int sm80_supports_128x256x32_s4_pad(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    return sm80_supports_common(h, d, 128, 256, 32, sm80_multistage_smem<PAD_CFG>(),
                                SM80_LAYOUT_NT);
}

cuops_status_t sm80_launch_128x256x32_s4_pad(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                             const cuops_options_t *opt)
{
    return sm80_run_multistage<PAD_CFG>(h, d, sm80_flags(opt), "sm80_128x256x32_s4_pad");
}
