/* dequant_dispatch.cu - placeholder until the dequant kernels land. */
#include "cuda/common/cuda_common.cuh"

static const char *const dequant_variants[] = {"auto"};
extern "C" const char *const *cuops_cuda_dequant_variant_names(int *count) { *count = 1; return dequant_variants; }
extern "C" cuops_status_t cuops_cuda_dequant_int4(struct cuops_handle *h, const cuops_dequant_desc_t *d, const cuops_options_t *opt)
{
    (void)d; (void)opt;
    return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "dequant: no CUDA kernel yet");
}
