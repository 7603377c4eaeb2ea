/*
 * gemm_kernels.h - the contract between GEMM kernel files and the GEMM
 * dispatch (gemm_dispatch.cu, which holds the tuning table).
 *
 * Each kernel file (one technique per file) exports one or more
 * cuops_gemm_kernel_t objects. The dispatch walks its table in order of
 * preference and launches the first entry whose `supports` accepts the call;
 * a forced variant (cuops_options_t.variant) is looked up by `name`.
 */
#ifndef CUOPS_GEMM_KERNELS_H
#define CUOPS_GEMM_KERNELS_H

#include "api/cuops_internal.h"

typedef struct cuops_gemm_kernel {
    /* Stable name: what cuops_last_kernel() reports and --variant selects. */
    const char *name;
    /* Non-zero when this kernel can run this call on this device (arch,
     * dtypes, transposes, alignment, shape limits). Must not launch anything. */
    int (*supports)(const struct cuops_handle *h, const cuops_gemm_desc_t *d);
    /* Enqueue the GEMM on h->stream. Sets h->last_kernel on success. */
    cuops_status_t (*launch)(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                             const cuops_options_t *opt);
} cuops_gemm_kernel_t;

/* How many study forms gemm_decode.cu's cuops_gemm_decode_study holds */
#define CUOPS_GEMM_DECODE_STUDY_COUNT 10

#endif /* CUOPS_GEMM_KERNELS_H */
