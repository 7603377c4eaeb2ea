/* scan_dispatch.cu - placeholder until the scan/reduce kernels land. */
#include "cuda/common/cuda_common.cuh"

static const char *const scan_variants[] = {"auto"};
extern "C" const char *const *cuops_cuda_scan_variant_names(int *count) { *count = 1; return scan_variants; }
extern "C" const char *const *cuops_cuda_reduce_variant_names(int *count) { *count = 1; return scan_variants; }
extern "C" cuops_status_t cuops_cuda_scan(struct cuops_handle *h, const cuops_scan_desc_t *d, const cuops_options_t *opt)
{
    (void)d; (void)opt;
    return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: no CUDA kernel yet");
}
extern "C" cuops_status_t cuops_cuda_reduce(struct cuops_handle *h, const cuops_reduce_desc_t *d, const cuops_options_t *opt)
{
    (void)d; (void)opt;
    return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "reduce: no CUDA kernel yet");
}
