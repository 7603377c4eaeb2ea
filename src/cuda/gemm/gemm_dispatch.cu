/* gemm_dispatch.cu - placeholder until the GEMM kernels land. */
#include "cuda/common/cuda_common.cuh"

static const char *const gemm_variants[] = {"auto"};
extern "C" const char *const *cuops_cuda_gemm_variant_names(int *count) { *count = 1; return gemm_variants; }
extern "C" cuops_status_t cuops_cuda_gemm(struct cuops_handle *h, const cuops_gemm_desc_t *d, const cuops_options_t *opt)
{
    (void)d; (void)opt;
    return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "gemm: no CUDA kernel yet");
}
