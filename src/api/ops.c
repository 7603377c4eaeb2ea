/*
 * ops.c - the public op calls: validate every argument, fill the op's
 * descriptor, and hand it to the handle's backend (CPU reference or CUDA).
 *
 * Validation is the same for both backends and touches no data, so a bad
 * call leaves every buffer as it was. Checks run in a fixed order, which
 * decides the status when a call has several faults:
 *   1. a negative options.split_k, enums out of range, negative sizes,
 *      leading dimensions too small, byte extents that overflow int64, NULL
 *      data pointers the call would touch       -> CUOPS_STATUS_INVALID_VALUE
 *   2. valid but unserved dtypes                 -> CUOPS_STATUS_NOT_SUPPORTED;
 *      data pointers that are not a multiple of their element size, where the
 *      kernels load or store whole elements (gemm, w4a16, prepack, scan,
 *      reduce, the importers; dequant serves any alignment), and for scan in
 *      and out that overlap without being equal -> CUOPS_STATUS_INVALID_VALUE;
 *      a forced variant the CPU backend does not have -> NOT_SUPPORTED (gemm,
 *      w4a16 check pointers after it, scan and reduce before)
 *   3. empty problems return CUOPS_STATUS_SUCCESS without calling a backend,
 *      except GEMM with k == 0 (C = beta*C), W4A16 with k == 0 (y = 0) and
 *      reduce with n == 0 (*out = identity), which have an output to write.
 * Every failure leaves a detail naming the argument and its value in
 * cuops_last_error(h).
 */
#include <inttypes.h>
#include <string.h>

#include "api/cuops_internal.h"

#define CPU_KERNEL_NAME "cpu_reference"

/* Scan and reduce accept up to 2^40 elements: enough for any one buffer on
 * today's GPUs, and small enough that tile counts stay far from overflow. */
#define MAX_SCAN_ELEMENTS ((int64_t)1 << 40)

static int op_is_valid(cuops_op_t op) { return op == CUOPS_OP_N || op == CUOPS_OP_T; }
static const char *op_name(cuops_op_t op) { return op == CUOPS_OP_T ? "T" : "N"; }

static int dtype_is_valid(cuops_dtype_t t)
{
    return (int)t >= (int)CUOPS_DTYPE_F16 && (int)t <= (int)CUOPS_DTYPE_U8;
}

static int reduce_op_is_valid(cuops_reduce_op_t op)
{
    return op == CUOPS_REDUCE_SUM || op == CUOPS_REDUCE_MIN || op == CUOPS_REDUCE_MAX;
}

static int dtype_is_half_or_float(cuops_dtype_t t)
{
    return t == CUOPS_DTYPE_F16 || t == CUOPS_DTYPE_BF16 || t == CUOPS_DTYPE_F32;
}

static int64_t max1(int64_t v) { return v > 1 ? v : 1; }

/* ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b. */
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* Bytes spanned by a rows x cols row-major matrix with leading dimension ld:
 * ((rows - 1) * ld + cols) * elem_size. Returns 0 when that does not fit in
 * int64 (the caller reports it); an empty matrix spans nothing. */
static int extent_fits(int64_t rows, int64_t cols, int64_t ld, size_t elem_size)
{
    if (rows == 0 || cols == 0) return 1;
    int64_t span;
    if (__builtin_mul_overflow(rows - 1, ld, &span)) return 0;
    if (__builtin_add_overflow(span, cols, &span)) return 0;
    if (__builtin_mul_overflow(span, (int64_t)elem_size, &span)) return 0;
    return 1;
}

/* The seed-format weight and any prepacked form of it (which holds the same
 * bytes plus alignment padding) must be addressable with int64 byte offsets:
 * n * ceil(k/2) + n * groups * (4 + 1) plus a page of slack. */
static int w4_weight_fits(int64_t n, int64_t k, int64_t group_size)
{
    int64_t groups = ceil_div(k, group_size), q_bytes, g_bytes, total;
    if (__builtin_mul_overflow(n, ceil_div(k, 2), &q_bytes)) return 0;
    if (__builtin_mul_overflow(n, groups, &g_bytes)) return 0;
    if (__builtin_mul_overflow(g_bytes, (int64_t)5, &g_bytes)) return 0;
    if (__builtin_add_overflow(q_bytes, g_bytes, &total)) return 0;
    if (__builtin_add_overflow(total, (int64_t)4096, &total)) return 0;
    return 1;
}

/* options.split_k: 0 lets the dispatch choose, 1 forbids splitting, more
 * forces a split; a negative count is no setting at all (class 1 above) */
static cuops_status_t check_split_k(struct cuops_handle *h, const char *op,
                                    const cuops_options_t *opt)
{
    if (opt != NULL && opt->split_k < 0)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: options.split_k (%d) < 0 (0: the dispatch chooses, 1: no split)",
                          op, opt->split_k);
    return CUOPS_STATUS_SUCCESS;
}

/* The CPU backend serves the dispatch's own choice and "cpu_reference"; a
 * GPU handle leaves forced variants to the family's dispatch, which knows
 * which of its kernels can serve the shape. */
static cuops_status_t check_cpu_variant(struct cuops_handle *h, const char *op,
                                        const cuops_options_t *opt)
{
    if (h->device != CUOPS_DEVICE_CPU || cuops_variant_is_auto(opt)) return CUOPS_STATUS_SUCCESS;
    if (strcmp(opt->variant, CPU_KERNEL_NAME) == 0) return CUOPS_STATUS_SUCCESS;
    return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                      "%s: variant \"%s\" does not exist on the CPU backend (it has \"auto\" "
                      "and \"" CPU_KERNEL_NAME "\")",
                      op, opt->variant);
}

/* Checks shared by dequant and prepack: the seed-format weight arguments;
 * *group_size becomes the size the backends see (cuops_check_int4_group). */
static cuops_status_t check_int4_weight(struct cuops_handle *h, const char *op, int64_t n,
                                        int64_t k, int64_t *group_size, int64_t ldq,
                                        cuops_dtype_t scale_type)
{
    if (n < 0) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "%s: n (%" PRId64 ") < 0", op, n);
    if (k < 0) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "%s: k (%" PRId64 ") < 0", op, k);
    if (cuops_check_int4_group(h, op, k, group_size) != CUOPS_STATUS_SUCCESS)
        return CUOPS_STATUS_INVALID_VALUE;
    if (!dtype_is_valid(scale_type))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: scale_type (%d) is not a cuops_dtype_t", op, (int)scale_type);
    int64_t packed_k = ceil_div(k, 2);
    if (ldq < max1(packed_k))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: ldq (%" PRId64 ") < max(1, ceil(k/2)) (%" PRId64 ") bytes", op,
                          ldq, max1(packed_k));
    int64_t groups = ceil_div(k, *group_size);
    if (!extent_fits(n, packed_k, ldq, 1))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: qweight extent (n = %" PRId64 ", ldq = %" PRId64
                          ") overflows int64 bytes",
                          op, n, ldq);
    /* scales and zeros are [n, groups] contiguous */
    if (!extent_fits(n, groups, groups, cuops_dtype_size(scale_type)))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: scales extent (n = %" PRId64 ", groups = %" PRId64
                          ") overflows int64 bytes",
                          op, n, groups);
    /* each buffer can fit while their sum does not: say so, not "scales" */
    if (!w4_weight_fits(n, k, *group_size))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: an n = %" PRId64 " x k = %" PRId64 " weight (nibbles, %" PRId64
                          " groups of scales and zeros per row) overflows int64 bytes",
                          op, n, k, groups);
    return CUOPS_STATUS_SUCCESS;
}

static cuops_status_t check_act_type(struct cuops_handle *h, const char *op,
                                     cuops_dtype_t act_type, int only_range)
{
    if (!dtype_is_valid(act_type))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "%s: act_type (%d) is not a cuops_dtype_t",
                          op, (int)act_type);
    if (only_range) return CUOPS_STATUS_SUCCESS;
    if (act_type != CUOPS_DTYPE_F16 && act_type != CUOPS_DTYPE_BF16)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: act_type %s is not supported (f16 or bf16)", op,
                          cuops_dtype_name(act_type));
    return CUOPS_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* GEMM                                                                     */
/* ------------------------------------------------------------------------ */

static cuops_status_t gemm_call(struct cuops_handle *h, cuops_op_t trans_a, cuops_op_t trans_b,
                                int64_t m, int64_t n, int64_t k, float alpha, const void *a,
                                int64_t lda, const void *b, int64_t ldb, float beta, void *c,
                                int64_t ldc, cuops_dtype_t ab_type, cuops_dtype_t c_type,
                                const cuops_options_t *opt)
{
    if (h == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(h);
    if (check_split_k(h, "gemm", opt) != CUOPS_STATUS_SUCCESS)
        return CUOPS_STATUS_INVALID_VALUE;
    if (!op_is_valid(trans_a))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "gemm: trans_a (%d) is neither CUOPS_OP_N nor CUOPS_OP_T", (int)trans_a);
    if (!op_is_valid(trans_b))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "gemm: trans_b (%d) is neither CUOPS_OP_N nor CUOPS_OP_T", (int)trans_b);
    if (!dtype_is_valid(ab_type))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "gemm: ab_type (%d) is not a cuops_dtype_t",
                          (int)ab_type);
    if (!dtype_is_valid(c_type))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "gemm: c_type (%d) is not a cuops_dtype_t",
                          (int)c_type);
    if (m < 0) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "gemm: m (%" PRId64 ") < 0", m);
    if (n < 0) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "gemm: n (%" PRId64 ") < 0", n);
    if (k < 0) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "gemm: k (%" PRId64 ") < 0", k);

    /* Stored shapes: A is [m,k] (N) or [k,m] (T); B is [k,n] (N) or [n,k] (T). */
    int64_t a_rows = trans_a == CUOPS_OP_N ? m : k, a_cols = trans_a == CUOPS_OP_N ? k : m;
    int64_t b_rows = trans_b == CUOPS_OP_N ? k : n, b_cols = trans_b == CUOPS_OP_N ? n : k;
    if (lda < max1(a_cols))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "gemm: lda (%" PRId64 ") < max(1, %s) (%" PRId64 ") for trans_a = %s", lda,
                          trans_a == CUOPS_OP_N ? "k" : "m", max1(a_cols), op_name(trans_a));
    if (ldb < max1(b_cols))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "gemm: ldb (%" PRId64 ") < max(1, %s) (%" PRId64 ") for trans_b = %s", ldb,
                          trans_b == CUOPS_OP_N ? "n" : "k", max1(b_cols), op_name(trans_b));
    if (ldc < max1(n))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "gemm: ldc (%" PRId64 ") < max(1, n) (%" PRId64 ")",
                          ldc, max1(n));
    size_t ab_size = cuops_dtype_size(ab_type), c_size = cuops_dtype_size(c_type);
    if (!extent_fits(a_rows, a_cols, lda, ab_size))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "gemm: A extent ([%" PRId64 ",%" PRId64 "], lda = %" PRId64
                          ", %zu-byte elements) overflows int64 bytes",
                          a_rows, a_cols, lda, ab_size);
    if (!extent_fits(b_rows, b_cols, ldb, ab_size))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "gemm: B extent ([%" PRId64 ",%" PRId64 "], ldb = %" PRId64
                          ", %zu-byte elements) overflows int64 bytes",
                          b_rows, b_cols, ldb, ab_size);
    if (!extent_fits(m, n, ldc, c_size))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "gemm: C extent ([%" PRId64 ",%" PRId64 "], ldc = %" PRId64
                          ", %zu-byte elements) overflows int64 bytes",
                          m, n, ldc, c_size);
    int empty = (m == 0 || n == 0);
    if (!empty) {
        if (c == NULL)
            return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                              "gemm: c is NULL (m = %" PRId64 ", n = %" PRId64 ")", m, n);
        if (k > 0 && a == NULL)
            return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "gemm: a is NULL (k = %" PRId64 ")", k);
        if (k > 0 && b == NULL)
            return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "gemm: b is NULL (k = %" PRId64 ")", k);
    }

    int supported = (ab_type == CUOPS_DTYPE_F16 || ab_type == CUOPS_DTYPE_BF16)
                        ? dtype_is_half_or_float(c_type)
                        : (ab_type == CUOPS_DTYPE_F32 && c_type == CUOPS_DTYPE_F32);
    if (!supported)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "gemm: ab_type %s with c_type %s is not supported (f16/bf16 with "
                          "f16/bf16/f32, or f32 with f32)",
                          cuops_dtype_name(ab_type), cuops_dtype_name(c_type));
    cuops_status_t st = check_cpu_variant(h, "gemm", opt);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (empty) return CUOPS_STATUS_SUCCESS;
    if (k > 0) {
        st = cuops_check_elem_pointer(h, "gemm", "a", a, ab_size);
        if (st == CUOPS_STATUS_SUCCESS) st = cuops_check_elem_pointer(h, "gemm", "b", b, ab_size);
        if (st != CUOPS_STATUS_SUCCESS) return st;
    }
    st = cuops_check_elem_pointer(h, "gemm", "c", c, c_size);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    cuops_gemm_desc_t d;
    memset(&d, 0, sizeof d);
    d.trans_a = trans_a;
    d.trans_b = trans_b;
    d.m = m;
    d.n = n;
    d.k = k;
    /* k == 0 gives beta * C: alpha times an empty sum is taken as 0, so an
     * infinite or NaN alpha cannot turn the kernels' alpha * 0 into NaN, and
     * a negative one no -0 (the CPU backend and the sm90 entries never
     * multiply by it) */
    d.alpha = k > 0 ? alpha : 0.0f;
    d.beta = beta;
    d.a = a;
    d.lda = lda;
    d.b = b;
    d.ldb = ldb;
    d.c = c;
    d.ldc = ldc;
    d.ab_type = ab_type;
    d.c_type = c_type;
    if (h->device == CUOPS_DEVICE_CPU) {
        st = cuops_cpu_gemm(h, &d);
        if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = CPU_KERNEL_NAME;
        return st;
    }
    /* One row of A stored [k, 1] with lda = 1 is the same k contiguous
     * elements as A [1, k]; likewise one column of B stored [k, 1] with
     * ldb = 1 and B [1, k]. The kernels see the K-major form, which every
     * one of them reads in place (x stored [k, m] with m = 1 otherwise has
     * rows of 2 bytes that TMA cannot address, and is packed). */
    if (d.trans_a == CUOPS_OP_T && m == 1 && lda == 1) {
        d.trans_a = CUOPS_OP_N;
        d.lda = max1(k);
    }
    if (d.trans_b == CUOPS_OP_N && n == 1 && ldb == 1) {
        d.trans_b = CUOPS_OP_T;
        d.ldb = max1(k);
    }
    int prev = cuops_cuda_enter(h);
    st = cuops_cuda_gemm(h, &d, opt);
    return cuops_cuda_end_call(h, prev, st);
}

CUOPS_API cuops_status_t cuops_gemm(cuops_handle_t handle, cuops_op_t trans_a, cuops_op_t trans_b,
                                    int64_t m, int64_t n, int64_t k, float alpha, const void *a,
                                    int64_t lda, const void *b, int64_t ldb, float beta, void *c,
                                    int64_t ldc, cuops_dtype_t ab_type, cuops_dtype_t c_type)
{
    return gemm_call(handle, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                     ab_type, c_type, NULL);
}

CUOPS_API cuops_status_t cuops_gemm_ex(cuops_handle_t handle, cuops_op_t trans_a,
                                       cuops_op_t trans_b, int64_t m, int64_t n, int64_t k,
                                       float alpha, const void *a, int64_t lda, const void *b,
                                       int64_t ldb, float beta, void *c, int64_t ldc,
                                       cuops_dtype_t ab_type, cuops_dtype_t c_type,
                                       const cuops_options_t *options)
{
    return gemm_call(handle, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                     ab_type, c_type, options);
}

/* ------------------------------------------------------------------------ */
/* int4 dequantization                                                      */
/* ------------------------------------------------------------------------ */

static cuops_status_t dequant_call(struct cuops_handle *h, int64_t n, int64_t k, int64_t group_size,
                                   const void *qweight, int64_t ldq, const void *scales,
                                   cuops_dtype_t scale_type, const void *zeros, void *out,
                                   int64_t ldo, cuops_dtype_t out_type, const cuops_options_t *opt)
{
    if (h == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(h);
    if (check_split_k(h, "dequant", opt) != CUOPS_STATUS_SUCCESS)
        return CUOPS_STATUS_INVALID_VALUE;
    cuops_status_t st = check_int4_weight(h, "dequant", n, k, &group_size, ldq, scale_type);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (!dtype_is_valid(out_type))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "dequant: out_type (%d) is not a cuops_dtype_t", (int)out_type);
    if (ldo < max1(k))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "dequant: ldo (%" PRId64 ") < max(1, k) (%" PRId64 ")", ldo, max1(k));
    if (!extent_fits(n, k, ldo, cuops_dtype_size(out_type)))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "dequant: out extent (n = %" PRId64 ", k = %" PRId64 ", ldo = %" PRId64
                          ") overflows int64 bytes",
                          n, k, ldo);
    int empty = (n == 0 || k == 0);
    if (!empty) {
        if (qweight == NULL)
            return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "dequant: qweight is NULL");
        if (scales == NULL)
            return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "dequant: scales is NULL");
        if (out == NULL) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "dequant: out is NULL");
    }
    if (!dtype_is_half_or_float(scale_type))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "dequant: scale_type %s is not supported (f16, bf16 or f32)",
                          cuops_dtype_name(scale_type));
    if (!dtype_is_half_or_float(out_type))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "dequant: out_type %s is not supported (f16, bf16 or f32)",
                          cuops_dtype_name(out_type));
    st = check_cpu_variant(h, "dequant", opt);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (empty) return CUOPS_STATUS_SUCCESS;

    cuops_dequant_desc_t d;
    memset(&d, 0, sizeof d);
    d.n = n;
    d.k = k;
    d.group_size = group_size;
    d.num_groups = ceil_div(k, group_size);
    d.qweight = (const uint8_t *)qweight;
    d.ldq = ldq;
    d.scales = scales;
    d.scale_type = scale_type;
    d.zeros = (const uint8_t *)zeros;
    d.out = out;
    d.ldo = ldo;
    d.out_type = out_type;
    if (h->device == CUOPS_DEVICE_CPU) {
        st = cuops_cpu_dequant_int4(h, &d);
        if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = CPU_KERNEL_NAME;
        return st;
    }
    int prev = cuops_cuda_enter(h);
    st = cuops_cuda_dequant_int4(h, &d, opt);
    return cuops_cuda_end_call(h, prev, st);
}

CUOPS_API cuops_status_t cuops_dequant_int4(cuops_handle_t handle, int64_t n, int64_t k,
                                            int64_t group_size, const void *qweight, int64_t ldq,
                                            const void *scales, cuops_dtype_t scale_type,
                                            const void *zeros, void *out, int64_t ldo,
                                            cuops_dtype_t out_type)
{
    return dequant_call(handle, n, k, group_size, qweight, ldq, scales, scale_type, zeros, out,
                        ldo, out_type, NULL);
}

CUOPS_API cuops_status_t cuops_dequant_int4_ex(cuops_handle_t handle, int64_t n, int64_t k,
                                               int64_t group_size, const void *qweight,
                                               int64_t ldq, const void *scales,
                                               cuops_dtype_t scale_type, const void *zeros,
                                               void *out, int64_t ldo, cuops_dtype_t out_type,
                                               const cuops_options_t *options)
{
    return dequant_call(handle, n, k, group_size, qweight, ldq, scales, scale_type, zeros, out,
                        ldo, out_type, options);
}

/* ------------------------------------------------------------------------ */
/* W4A16                                                                    */
/* ------------------------------------------------------------------------ */

CUOPS_API cuops_status_t cuops_w4_packed_size(cuops_handle_t handle, int64_t n, int64_t k,
                                              int64_t group_size, cuops_dtype_t act_type,
                                              size_t *bytes)
{
    struct cuops_handle *h = handle;
    if (h == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(h);
    if (bytes == NULL)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "w4_packed_size: bytes is NULL");
    if (n < 0)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "w4_packed_size: n (%" PRId64 ") < 0", n);
    if (k < 0)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "w4_packed_size: k (%" PRId64 ") < 0", k);
    if (cuops_check_int4_group(h, "w4_packed_size", k, &group_size) != CUOPS_STATUS_SUCCESS)
        return CUOPS_STATUS_INVALID_VALUE;
    if (!w4_weight_fits(n, k, group_size))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "w4_packed_size: an n = %" PRId64 " x k = %" PRId64
                          " weight overflows int64 bytes",
                          n, k);
    cuops_status_t st = check_act_type(h, "w4_packed_size", act_type, 0);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (n == 0 || k == 0) {
        *bytes = 0;
        return CUOPS_STATUS_SUCCESS;
    }
    size_t size = h->device == CUOPS_DEVICE_CPU
                      ? cuops_cpu_w4_packed_size(n, k, group_size, act_type)
                      : cuops_cuda_w4_packed_size(n, k, group_size, act_type);
    if (size == 0)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "w4_packed_size: the %s backend has no W4A16 layout for n = %" PRId64
                          ", k = %" PRId64 ", group_size = %" PRId64 ", act_type = %s",
                          h->device == CUOPS_DEVICE_CPU ? "CPU" : "CUDA", n, k, group_size,
                          cuops_dtype_name(act_type));
    *bytes = size;
    return CUOPS_STATUS_SUCCESS;
}

CUOPS_API cuops_status_t cuops_w4_prepack(cuops_handle_t handle, int64_t n, int64_t k,
                                          int64_t group_size, const void *qweight, int64_t ldq,
                                          const void *scales, cuops_dtype_t scale_type,
                                          const void *zeros, cuops_dtype_t act_type, void *packed)
{
    struct cuops_handle *h = handle;
    if (h == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(h);
    cuops_status_t st = check_int4_weight(h, "w4_prepack", n, k, &group_size, ldq, scale_type);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = check_act_type(h, "w4_prepack", act_type, 1);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    int empty = (n == 0 || k == 0);
    if (!empty) {
        if (qweight == NULL)
            return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "w4_prepack: qweight is NULL");
        if (scales == NULL)
            return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "w4_prepack: scales is NULL");
        if (packed == NULL)
            return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "w4_prepack: packed is NULL");
    }
    if (!dtype_is_half_or_float(scale_type))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "w4_prepack: scale_type %s is not supported (f16, bf16 or f32)",
                          cuops_dtype_name(scale_type));
    st = check_act_type(h, "w4_prepack", act_type, 0);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (empty) return CUOPS_STATUS_SUCCESS;
    st = cuops_check_elem_pointer(h, "w4_prepack", "scales", scales, cuops_dtype_size(scale_type));
    if (st != CUOPS_STATUS_SUCCESS) return st;

    cuops_w4_prepack_desc_t d;
    memset(&d, 0, sizeof d);
    d.w.n = n;
    d.w.k = k;
    d.w.group_size = group_size;
    d.w.num_groups = ceil_div(k, group_size);
    d.w.qweight = (const uint8_t *)qweight;
    d.w.ldq = ldq;
    d.w.scales = scales;
    d.w.scale_type = scale_type;
    d.w.zeros = (const uint8_t *)zeros;
    d.w.out = NULL;
    d.w.ldo = 0;
    d.w.out_type = act_type;
    d.act_type = act_type;
    d.packed = packed;
    if (h->device == CUOPS_DEVICE_CPU) {
        st = cuops_cpu_w4_prepack(h, &d);
        if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = CPU_KERNEL_NAME;
        return st;
    }
    int prev = cuops_cuda_enter(h);
    st = cuops_cuda_w4_prepack(h, &d);
    return cuops_cuda_end_call(h, prev, st);
}

static cuops_status_t w4a16_call(struct cuops_handle *h, int64_t m, int64_t n, int64_t k,
                                 int64_t group_size, const void *x, int64_t ldx, const void *packed,
                                 void *y, int64_t ldy, cuops_dtype_t act_type,
                                 const cuops_options_t *opt)
{
    if (h == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(h);
    if (check_split_k(h, "w4a16", opt) != CUOPS_STATUS_SUCCESS)
        return CUOPS_STATUS_INVALID_VALUE;
    if (m < 0) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "w4a16: m (%" PRId64 ") < 0", m);
    if (n < 0) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "w4a16: n (%" PRId64 ") < 0", n);
    if (k < 0) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "w4a16: k (%" PRId64 ") < 0", k);
    if (cuops_check_int4_group(h, "w4a16", k, &group_size) != CUOPS_STATUS_SUCCESS)
        return CUOPS_STATUS_INVALID_VALUE;
    cuops_status_t st = check_act_type(h, "w4a16", act_type, 1);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (ldx < max1(k))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "w4a16: ldx (%" PRId64 ") < max(1, k) (%" PRId64 ")", ldx, max1(k));
    if (ldy < max1(n))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "w4a16: ldy (%" PRId64 ") < max(1, n) (%" PRId64 ")", ldy, max1(n));
    size_t act_size = cuops_dtype_size(act_type);
    if (!extent_fits(m, k, ldx, act_size))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "w4a16: x extent (m = %" PRId64 ", k = %" PRId64 ", ldx = %" PRId64
                          ") overflows int64 bytes",
                          m, k, ldx);
    if (!extent_fits(m, n, ldy, act_size))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "w4a16: y extent (m = %" PRId64 ", n = %" PRId64 ", ldy = %" PRId64
                          ") overflows int64 bytes",
                          m, n, ldy);
    if (!w4_weight_fits(n, k, group_size))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "w4a16: an n = %" PRId64 " x k = %" PRId64 " weight overflows int64 bytes",
                          n, k);
    int empty = (m == 0 || n == 0);
    if (!empty) {
        if (y == NULL) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "w4a16: y is NULL");
        if (k > 0 && x == NULL)
            return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "w4a16: x is NULL (k = %" PRId64 ")", k);
        if (k > 0 && packed == NULL)
            return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                              "w4a16: packed is NULL (k = %" PRId64 ")", k);
    }
    st = check_act_type(h, "w4a16", act_type, 0);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = check_cpu_variant(h, "w4a16", opt);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (empty) return CUOPS_STATUS_SUCCESS;
    if (k > 0) st = cuops_check_elem_pointer(h, "w4a16", "x", x, act_size);
    if (st == CUOPS_STATUS_SUCCESS) st = cuops_check_elem_pointer(h, "w4a16", "y", y, act_size);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    /* k == 0 reaches the backend, which writes y = 0. */
    cuops_w4a16_desc_t d;
    memset(&d, 0, sizeof d);
    d.m = m;
    d.n = n;
    d.k = k;
    d.group_size = group_size;
    d.num_groups = ceil_div(k, group_size);
    d.x = x;
    d.ldx = ldx;
    d.packed = packed;
    d.y = y;
    d.ldy = ldy;
    d.act_type = act_type;
    if (h->device == CUOPS_DEVICE_CPU) {
        st = cuops_cpu_gemm_w4a16(h, &d);
        if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = CPU_KERNEL_NAME;
        return st;
    }
    int prev = cuops_cuda_enter(h);
    st = cuops_cuda_gemm_w4a16(h, &d, opt);
    return cuops_cuda_end_call(h, prev, st);
}

CUOPS_API cuops_status_t cuops_gemm_w4a16(cuops_handle_t handle, int64_t m, int64_t n, int64_t k,
                                          int64_t group_size, const void *x, int64_t ldx,
                                          const void *packed, void *y, int64_t ldy,
                                          cuops_dtype_t act_type)
{
    return w4a16_call(handle, m, n, k, group_size, x, ldx, packed, y, ldy, act_type, NULL);
}

CUOPS_API cuops_status_t cuops_gemm_w4a16_ex(cuops_handle_t handle, int64_t m, int64_t n,
                                             int64_t k, int64_t group_size, const void *x,
                                             int64_t ldx, const void *packed, void *y,
                                             int64_t ldy, cuops_dtype_t act_type,
                                             const cuops_options_t *options)
{
    return w4a16_call(handle, m, n, k, group_size, x, ldx, packed, y, ldy, act_type, options);
}

/* ------------------------------------------------------------------------ */
/* Scan and reduce                                                          */
/* ------------------------------------------------------------------------ */

/* The checks scan and reduce share: operator, element type and length. */
static cuops_status_t check_scan_args(struct cuops_handle *h, const char *op_label,
                                      cuops_reduce_op_t op, cuops_dtype_t type, int64_t n)
{
    if (!reduce_op_is_valid(op))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: op (%d) is not CUOPS_REDUCE_SUM, _MIN or _MAX", op_label, (int)op);
    if (!dtype_is_valid(type))
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "%s: type (%d) is not a cuops_dtype_t",
                          op_label, (int)type);
    if (n < 0)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "%s: n (%" PRId64 ") < 0", op_label, n);
    if (n > MAX_SCAN_ELEMENTS)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: n (%" PRId64 ") exceeds the limit of 2^40 elements", op_label, n);
    return CUOPS_STATUS_SUCCESS;
}

static cuops_status_t check_scan_type(struct cuops_handle *h, const char *op_label,
                                      cuops_dtype_t type)
{
    if (type == CUOPS_DTYPE_I32 || type == CUOPS_DTYPE_I64 || type == CUOPS_DTYPE_F32 ||
        type == CUOPS_DTYPE_F64)
        return CUOPS_STATUS_SUCCESS;
    return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                      "%s: type %s is not supported (i32, i64, f32 or f64)", op_label,
                      cuops_dtype_name(type));
}

cuops_status_t cuops_check_elem_pointer(struct cuops_handle *h, const char *op, const char *name,
                                        const void *p, size_t elem_size)
{
    if (p != NULL && elem_size > 1 && (uintptr_t)p % elem_size != 0)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: %s (%p) is not aligned to its %zu-byte elements", op, name, p,
                          elem_size);
    return CUOPS_STATUS_SUCCESS;
}

static cuops_status_t check_scan_pointer(struct cuops_handle *h, const char *op_label,
                                         const char *name, const void *p, cuops_dtype_t type)
{
    return cuops_check_elem_pointer(h, op_label, name, p, cuops_dtype_size(type));
}

static cuops_status_t scan_call(struct cuops_handle *h, cuops_reduce_op_t op, int exclusive,
                                cuops_dtype_t type, int64_t n, const void *in, void *out,
                                const cuops_options_t *opt)
{
    if (h == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(h);
    if (check_split_k(h, "scan", opt) != CUOPS_STATUS_SUCCESS)
        return CUOPS_STATUS_INVALID_VALUE;
    cuops_status_t st = check_scan_args(h, "scan", op, type, n);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (n > 0 && in == NULL) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "scan: in is NULL");
    if (n > 0 && out == NULL) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "scan: out is NULL");
    st = check_scan_type(h, "scan", type);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (n > 0) {
        st = check_scan_pointer(h, "scan", "in", in, type);
        if (st == CUOPS_STATUS_SUCCESS) st = check_scan_pointer(h, "scan", "out", out, type);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        /* in place is in == out; buffers that overlap otherwise would have
         * tiles read what other tiles have already written */
        const uintptr_t i0 = (uintptr_t)in, o0 = (uintptr_t)out;
        const uintptr_t bytes = (uintptr_t)n * cuops_dtype_size(type);
        if (in != out && i0 < o0 + bytes && o0 < i0 + bytes)
            return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                              "scan: in (%p) and out (%p) overlap without being equal (n = %" PRId64
                              "); in place is in == out",
                              in, (const void *)out, n);
    }
    st = check_cpu_variant(h, "scan", opt);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (n == 0) return CUOPS_STATUS_SUCCESS;

    cuops_scan_desc_t d;
    memset(&d, 0, sizeof d);
    d.op = op;
    d.exclusive = exclusive != 0;
    d.type = type;
    d.n = n;
    d.in = in;
    d.out = out;
    if (h->device == CUOPS_DEVICE_CPU) {
        st = cuops_cpu_scan(h, &d);
        if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = CPU_KERNEL_NAME;
        return st;
    }
    int prev = cuops_cuda_enter(h);
    st = cuops_cuda_scan(h, &d, opt);
    return cuops_cuda_end_call(h, prev, st);
}

CUOPS_API cuops_status_t cuops_scan(cuops_handle_t handle, cuops_reduce_op_t op, int exclusive,
                                    cuops_dtype_t type, int64_t n, const void *in, void *out)
{
    return scan_call(handle, op, exclusive, type, n, in, out, NULL);
}

CUOPS_API cuops_status_t cuops_scan_ex(cuops_handle_t handle, cuops_reduce_op_t op, int exclusive,
                                       cuops_dtype_t type, int64_t n, const void *in, void *out,
                                       const cuops_options_t *options)
{
    return scan_call(handle, op, exclusive, type, n, in, out, options);
}

static cuops_status_t reduce_call(struct cuops_handle *h, cuops_reduce_op_t op, cuops_dtype_t type,
                                  int64_t n, const void *in, void *out, const cuops_options_t *opt)
{
    if (h == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(h);
    if (check_split_k(h, "reduce", opt) != CUOPS_STATUS_SUCCESS)
        return CUOPS_STATUS_INVALID_VALUE;
    cuops_status_t st = check_scan_args(h, "reduce", op, type, n);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (n > 0 && in == NULL) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "reduce: in is NULL");
    /* n == 0 still writes the identity, so out is always needed. */
    if (out == NULL) return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE, "reduce: out is NULL");
    st = check_scan_type(h, "reduce", type);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = check_scan_pointer(h, "reduce", "in", n > 0 ? in : NULL, type);
    if (st == CUOPS_STATUS_SUCCESS) st = check_scan_pointer(h, "reduce", "out", out, type);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = check_cpu_variant(h, "reduce", opt);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    cuops_reduce_desc_t d;
    memset(&d, 0, sizeof d);
    d.op = op;
    d.type = type;
    d.n = n;
    d.in = in;
    d.out = out;
    if (h->device == CUOPS_DEVICE_CPU) {
        st = cuops_cpu_reduce(h, &d);
        if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = CPU_KERNEL_NAME;
        return st;
    }
    int prev = cuops_cuda_enter(h);
    st = cuops_cuda_reduce(h, &d, opt);
    return cuops_cuda_end_call(h, prev, st);
}

CUOPS_API cuops_status_t cuops_reduce(cuops_handle_t handle, cuops_reduce_op_t op,
                                      cuops_dtype_t type, int64_t n, const void *in, void *out)
{
    return reduce_call(handle, op, type, n, in, out, NULL);
}

CUOPS_API cuops_status_t cuops_reduce_ex(cuops_handle_t handle, cuops_reduce_op_t op,
                                         cuops_dtype_t type, int64_t n, const void *in, void *out,
                                         const cuops_options_t *options)
{
    return reduce_call(handle, op, type, n, in, out, options);
}
