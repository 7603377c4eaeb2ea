/*
 * cpu_scan.c - the reference scan and reduce over i32, i64, f32 and f64,
 * for sum, min and max.
 *
 * Semantics the GPU kernels must match:
 *  - integer sums wrap in two's complement (done in uint32/uint64, where
 *    wrapping is defined);
 *  - float sums accumulate sequentially in double and round once to the
 *    element type per output: the most accurate cheap answer, which the GPU's
 *    reassociated fp32/f64 sums are compared against with a tolerance;
 *  - min and max combine a running value `acc` with the next element `x` as
 *        min: x < acc ? x : acc        max: x > acc ? x : acc
 *    starting from the identity (type max / +inf for min, type min / -inf for
 *    max). On data without NaN this is the exact minimum/maximum, independent
 *    of order, so GPU results compare bit for bit. A NaN element never wins a
 *    comparison and is skipped; the result on NaN data (and which zero wins
 *    between +0 and -0) is otherwise unspecified and not tested.
 *  - scan may run in place: in[i] is read before out[i] is written.
 */
#include <float.h>
#include <math.h>

#include "cpu/cpu_elem.h"

/* One generator per element type keeps each loop free of per-element type
 * switches; `acc_t` is the accumulator of sums, `bits_t` the type sums wrap in. */
#define DEFINE_SCAN_REDUCE(suffix, elem_t, acc_t, min_identity, max_identity)                 \
    static elem_t combine_##suffix(cuops_reduce_op_t op, elem_t acc, elem_t x)                \
    {                                                                                         \
        if (op == CUOPS_REDUCE_MIN) return x < acc ? x : acc;                                 \
        return x > acc ? x : acc;                                                             \
    }                                                                                         \
    static elem_t identity_##suffix(cuops_reduce_op_t op)                                     \
    {                                                                                         \
        if (op == CUOPS_REDUCE_SUM) return (elem_t)0;                                         \
        return op == CUOPS_REDUCE_MIN ? (min_identity) : (max_identity);                      \
    }                                                                                         \
    static void scan_##suffix(const cuops_scan_desc_t *d)                                     \
    {                                                                                         \
        const unsigned char *in = (const unsigned char *)d->in;                               \
        unsigned char *out = (unsigned char *)d->out;                                         \
        const size_t es = sizeof(elem_t);                                                     \
        if (d->op == CUOPS_REDUCE_SUM) {                                                      \
            acc_t sum = 0;                                                                    \
            for (int64_t i = 0; i < d->n; i++) {                                              \
                elem_t x, r;                                                                  \
                memcpy(&x, in + i * es, es);                                                  \
                acc_t before = sum;                                                           \
                sum = (acc_t)(sum + (acc_t)x);                                                \
                acc_t shown = d->exclusive ? before : sum;                                    \
                r = (elem_t)shown;                                                            \
                memcpy(out + i * es, &r, es);                                                 \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        elem_t acc = identity_##suffix(d->op);                                                \
        for (int64_t i = 0; i < d->n; i++) {                                                  \
            elem_t x;                                                                         \
            memcpy(&x, in + i * es, es);                                                      \
            elem_t before = acc;                                                              \
            acc = combine_##suffix(d->op, acc, x);                                            \
            memcpy(out + i * es, d->exclusive ? &before : &acc, es);                          \
        }                                                                                     \
    }                                                                                         \
    static void reduce_##suffix(const cuops_reduce_desc_t *d)                                 \
    {                                                                                         \
        const unsigned char *in = (const unsigned char *)d->in;                               \
        const size_t es = sizeof(elem_t);                                                     \
        elem_t r;                                                                             \
        if (d->op == CUOPS_REDUCE_SUM) {                                                      \
            acc_t sum = 0;                                                                    \
            for (int64_t i = 0; i < d->n; i++) {                                              \
                elem_t x;                                                                     \
                memcpy(&x, in + i * es, es);                                                  \
                sum = (acc_t)(sum + (acc_t)x);                                                \
            }                                                                                 \
            r = (elem_t)sum;                                                                  \
        } else {                                                                              \
            r = identity_##suffix(d->op);                                                     \
            for (int64_t i = 0; i < d->n; i++) {                                              \
                elem_t x;                                                                     \
                memcpy(&x, in + i * es, es);                                                  \
                r = combine_##suffix(d->op, r, x);                                            \
            }                                                                                 \
        }                                                                                     \
        memcpy(d->out, &r, es);                                                               \
    }

/* Integer sums wrap in the unsigned type of the same width; converting back
 * to the signed type keeps the bits (gcc/clang define the out-of-range
 * conversion as modulo 2^N, which is the two's complement wrap). */
DEFINE_SCAN_REDUCE(i32, int32_t, uint32_t, INT32_MAX, INT32_MIN)
DEFINE_SCAN_REDUCE(i64, int64_t, uint64_t, INT64_MAX, INT64_MIN)
DEFINE_SCAN_REDUCE(f32, float, double, INFINITY, -INFINITY)
DEFINE_SCAN_REDUCE(f64, double, double, INFINITY, -INFINITY)

cuops_status_t cuops_cpu_scan(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    switch (d->type) {
    case CUOPS_DTYPE_I32: scan_i32(d); return CUOPS_STATUS_SUCCESS;
    case CUOPS_DTYPE_I64: scan_i64(d); return CUOPS_STATUS_SUCCESS;
    case CUOPS_DTYPE_F32: scan_f32(d); return CUOPS_STATUS_SUCCESS;
    case CUOPS_DTYPE_F64: scan_f64(d); return CUOPS_STATUS_SUCCESS;
    default: break;
    }
    return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "cpu scan: type %s reached the backend",
                      cuops_dtype_name(d->type));
}

cuops_status_t cuops_cpu_reduce(struct cuops_handle *h, const cuops_reduce_desc_t *d)
{
    switch (d->type) {
    case CUOPS_DTYPE_I32: reduce_i32(d); return CUOPS_STATUS_SUCCESS;
    case CUOPS_DTYPE_I64: reduce_i64(d); return CUOPS_STATUS_SUCCESS;
    case CUOPS_DTYPE_F32: reduce_f32(d); return CUOPS_STATUS_SUCCESS;
    case CUOPS_DTYPE_F64: reduce_f64(d); return CUOPS_STATUS_SUCCESS;
    default: break;
    }
    return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "cpu reduce: type %s reached the backend",
                      cuops_dtype_name(d->type));
}
