/*
 * import.c - public entry points of the GPTQ / AWQ importers: validate the
 * arguments (nothing is touched on a bad call), build one descriptor, and
 * hand it to the CPU or CUDA backend.
 */
#include <stdint.h>

#include "api/cuops_internal.h"

static cuops_status_t import_call(struct cuops_handle *h, const char *fn, cuops_import_format_t format,
                                  int64_t n, int64_t k, int64_t group_size, const int32_t *qweight,
                                  const int32_t *qzeros, const void *scales, cuops_dtype_t scale_type,
                                  int gptq_version, uint8_t *qweight_out, int64_t ldq_out,
                                  void *scales_out, uint8_t *zeros_out)
{
    if (h == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(h);
    if (n < 0 || k < 0)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "%s: n (%lld) and k (%lld) must be >= 0", fn,
                          (long long)n, (long long)k);
    if (cuops_check_int4_group(h, fn, k, &group_size) != CUOPS_STATUS_SUCCESS)
        return CUOPS_STATUS_INVALID_VALUE;
    if (n % 8 != 0)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: n (%lld) must be a multiple of 8 (qzeros pack 8 rows per int32)", fn,
                          (long long)n);
    if (format == CUOPS_IMPORT_GPTQ && k % 8 != 0)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: k (%lld) must be a multiple of 8 (qweight packs 8 k per int32)", fn,
                          (long long)k);
    if (format == CUOPS_IMPORT_GPTQ && gptq_version != 1 && gptq_version != 2)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "%s: gptq_version (%d) must be 1 or 2", fn,
                          gptq_version);
    /* class 1 (ops.c's order): the output pitch, int64 byte offsets, NULL
     * pointers the call would touch, the scale enum; then an unserved scale
     * dtype; then the empty problem; then alignment */
    const int64_t row_bytes = k / 2 + (k & 1);
    if (ldq_out < row_bytes)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "%s: ldq_out (%lld) < ceil(k/2) (%lld)", fn,
                          (long long)ldq_out, (long long)row_bytes);
    const int64_t num_groups = k / group_size + (k % group_size != 0);
    /* every byte offset the backends form must fit in int64 */
    const int64_t lim = INT64_MAX / 8;
    if (n > 0 && k > 0 &&
        (k > lim || n > lim / ldq_out || n > lim / k || n > lim / (num_groups * 4)))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "%s: n=%lld, k=%lld, ldq_out=%lld overflow", fn,
                          (long long)n, (long long)k, (long long)ldq_out);
    const int empty = n == 0 || k == 0;
    if (!empty && (!qweight || !qzeros || !scales || !qweight_out || !scales_out || !zeros_out))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: NULL pointer (qweight %p, qzeros %p, scales %p, qweight_out %p, "
                          "scales_out %p, zeros_out %p)",
                          fn, (const void *)qweight, (const void *)qzeros, scales, (void *)qweight_out,
                          scales_out, (void *)zeros_out);
    switch (scale_type) {
    case CUOPS_DTYPE_F16: case CUOPS_DTYPE_BF16: case CUOPS_DTYPE_F32: break;
    case CUOPS_DTYPE_F64: case CUOPS_DTYPE_I32: case CUOPS_DTYPE_I64: case CUOPS_DTYPE_U8:
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "%s: scale_type %s is not f16, bf16 or f32", fn,
                          cuops_dtype_name(scale_type));
    default:
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "%s: scale_type %d is not a cuops_dtype_t", fn,
                          (int)scale_type);
    }
    if (empty) return CUOPS_STATUS_SUCCESS;
    const size_t ses = cuops_dtype_size(scale_type);
    cuops_status_t st = cuops_check_elem_pointer(h, fn, "qweight", qweight, sizeof(int32_t));
    if (st == CUOPS_STATUS_SUCCESS) st = cuops_check_elem_pointer(h, fn, "qzeros", qzeros, sizeof(int32_t));
    if (st == CUOPS_STATUS_SUCCESS) st = cuops_check_elem_pointer(h, fn, "scales", scales, ses);
    if (st == CUOPS_STATUS_SUCCESS) st = cuops_check_elem_pointer(h, fn, "scales_out", scales_out, ses);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    cuops_import_desc_t d;
    d.format = format;
    d.gptq_version = gptq_version;
    d.n = n;
    d.k = k;
    d.group_size = group_size;
    d.num_groups = num_groups;
    d.qweight = qweight;
    d.qzeros = qzeros;
    d.scales = scales;
    d.scale_type = scale_type;
    d.qweight_out = qweight_out;
    d.ldq_out = ldq_out;
    d.scales_out = scales_out;
    d.zeros_out = zeros_out;

    if (h->device == CUOPS_DEVICE_CPU) return cuops_cpu_import(h, &d);
    int prev = cuops_cuda_enter(h);
    st = cuops_cuda_import(h, &d);
    return cuops_cuda_end_call(h, prev, st);
}

CUOPS_API cuops_status_t cuops_import_gptq(cuops_handle_t handle, int64_t n, int64_t k,
                                           int64_t group_size, const int32_t *qweight,
                                           const int32_t *qzeros, const void *scales,
                                           cuops_dtype_t scale_type, int gptq_version,
                                           uint8_t *qweight_out, int64_t ldq_out,
                                           void *scales_out, uint8_t *zeros_out)
{
    return import_call(handle, "import_gptq", CUOPS_IMPORT_GPTQ, n, k, group_size, qweight, qzeros,
                       scales, scale_type, gptq_version, qweight_out, ldq_out, scales_out, zeros_out);
}

CUOPS_API cuops_status_t cuops_import_awq(cuops_handle_t handle, int64_t n, int64_t k,
                                          int64_t group_size, const int32_t *qweight,
                                          const int32_t *qzeros, const void *scales,
                                          cuops_dtype_t scale_type, uint8_t *qweight_out,
                                          int64_t ldq_out, void *scales_out, uint8_t *zeros_out)
{
    return import_call(handle, "import_awq", CUOPS_IMPORT_AWQ, n, k, group_size, qweight, qzeros,
                       scales, scale_type, 2, qweight_out, ldq_out, scales_out, zeros_out);
}
