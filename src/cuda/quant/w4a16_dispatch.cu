/* w4a16_dispatch.cu - placeholder until the W4A16 kernels land. */
#include "cuda/common/cuda_common.cuh"

static const char *const w4a16_variants[] = {"auto"};
extern "C" const char *const *cuops_cuda_w4a16_variant_names(int *count) { *count = 1; return w4a16_variants; }
extern "C" size_t cuops_cuda_w4_packed_size(int64_t n, int64_t k, int64_t group_size, cuops_dtype_t act)
{
    (void)n; (void)k; (void)group_size; (void)act;
    return 0;
}
extern "C" cuops_status_t cuops_cuda_w4_prepack(struct cuops_handle *h, const cuops_w4_prepack_desc_t *d)
{
    (void)d;
    return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "w4 prepack: no CUDA kernel yet");
}
extern "C" cuops_status_t cuops_cuda_gemm_w4a16(struct cuops_handle *h, const cuops_w4a16_desc_t *d, const cuops_options_t *opt)
{
    (void)d; (void)opt;
    return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "w4a16: no CUDA kernel yet");
}
