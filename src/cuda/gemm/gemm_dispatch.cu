/*
 * gemm_dispatch.cu - the CUDA backend's GEMM entry: picks a kernel and
 * launches it.
 *
 *  - auto (no variant, or "auto"): the candidates of gemm_tuning.h in order;
 *    the first whose supports() accepts the call runs. The fallback accepts
 *    every call the API validates, so auto never answers NOT_SUPPORTED on a
 *    device the binary has code for.
 *  - forced (options->variant = a kernel name): that kernel or nothing;
 *    NOT_SUPPORTED with the reason when it cannot serve the call,
 *    INVALID_VALUE when no kernel has that name.
 *
 * The preference order lives in gemm_tuning.h only.
 */
#include <stdio.h>
#include <string.h>

#include "cuda/common/cuda_common.cuh"
#include "cuda/gemm/gemm_tuning.h"

/* "auto" followed by every kernel name; built once, static afterwards. */
typedef struct gemm_variant_list {
    const char *names[CUOPS_GEMM_MAX_KERNELS + 1];
    int count;
} gemm_variant_list_t;

static gemm_variant_list_t build_variant_list(void)
{
    gemm_variant_list_t list;
    const cuops_gemm_kernel_t *kernels[CUOPS_GEMM_MAX_KERNELS];
    int nk = cuops_gemm_all_kernels(kernels, CUOPS_GEMM_MAX_KERNELS);
    list.names[0] = "auto";
    list.count = 1;
    for (int i = 0; i < nk; i++) list.names[list.count++] = kernels[i]->name;
    return list;
}

extern "C" const char *const *cuops_cuda_gemm_variant_names(int *count)
{
    /* C++ guarantees this initialisation runs once, even with threads. */
    static const gemm_variant_list_t list = build_variant_list();
    *count = list.count;
    return list.names;
}

static const char *trans_name(cuops_op_t t) { return t == CUOPS_OP_T ? "T" : "N"; }

static cuops_status_t launch_kernel(struct cuops_handle *h, const cuops_gemm_kernel_t *kern,
                                    const cuops_gemm_desc_t *d, const cuops_options_t *opt)
{
    h->last_kernel = "";
    cuops_status_t st = kern->launch(h, d, opt);
    if (st == CUOPS_STATUS_SUCCESS && (!h->last_kernel || !h->last_kernel[0]))
        h->last_kernel = kern->name;
    return st;
}

extern "C" cuops_status_t cuops_cuda_gemm(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                          const cuops_options_t *opt)
{
    /* Kernels may read the options; give them zeros rather than NULL. */
    cuops_options_t defaults;
    memset(&defaults, 0, sizeof(defaults));
    const cuops_options_t *o = opt ? opt : &defaults;

    if (h->sm_major < 8)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "gemm: device %d is sm_%d%d; cuops holds GEMM code for sm_80 and newer",
                          h->device, h->sm_major, h->sm_minor);

    if (opt == NULL || cuops_variant_is_auto(opt)) {
        const cuops_gemm_kernel_t *cand[CUOPS_GEMM_MAX_KERNELS];
        int nc = cuops_gemm_auto_candidates(h, d, cand, CUOPS_GEMM_MAX_KERNELS);
        for (int i = 0; i < nc; i++)
            if (cand[i]->supports(h, d)) return launch_kernel(h, cand[i], d, o);
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "gemm: no kernel serves ab=%s c=%s %s%s m=%lld n=%lld k=%lld on sm_%d%d",
                          cuops_dtype_name(d->ab_type), cuops_dtype_name(d->c_type),
                          trans_name(d->trans_a), trans_name(d->trans_b), (long long)d->m,
                          (long long)d->n, (long long)d->k, h->sm_major, h->sm_minor);
    }

    const cuops_gemm_kernel_t *all[CUOPS_GEMM_MAX_KERNELS];
    int na = cuops_gemm_all_kernels(all, CUOPS_GEMM_MAX_KERNELS);
    for (int i = 0; i < na; i++) {
        if (strcmp(all[i]->name, opt->variant) != 0) continue;
        if (!all[i]->supports(h, d))
            return cuops_fail(
                h, CUOPS_STATUS_NOT_SUPPORTED,
                "gemm: variant '%s' cannot serve ab=%s c=%s %s%s m=%lld n=%lld k=%lld "
                "lda=%lld ldb=%lld ldc=%lld on sm_%d%d (dtype, transpose, alignment, shape "
                "or arch outside what it implements)",
                opt->variant, cuops_dtype_name(d->ab_type), cuops_dtype_name(d->c_type),
                trans_name(d->trans_a), trans_name(d->trans_b), (long long)d->m,
                (long long)d->n, (long long)d->k, (long long)d->lda, (long long)d->ldb,
                (long long)d->ldc, h->sm_major, h->sm_minor);
        return launch_kernel(h, all[i], d, o);
    }
    return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                      "gemm: no variant named '%s' (cuops_variant_names(\"gemm\") lists them)",
                      opt->variant);
}
