/*
 * cpu_quant.c - the reference int4 ops: group-wise dequantization, the CPU's
 * own "prepacked" W4A16 weight, and the W4A16 GEMM.
 *
 * Dequantization is the seed's formula evaluated exactly as the GPU must:
 *     w = (float(q) - float(zero)) * float(scale)      two fp32 operations
 * then one round-to-nearest-even to the output type. Both operations are
 * correctly rounded IEEE fp32 on either side (no FMA shape, no double), so
 * the GPU result is compared bit for bit. zero is the stored byte as given
 * (the API documents 0..15) or 8 when zeros is NULL.
 *
 * The CPU packed weight is the seed format made contiguous:
 *     [n][ceil(k/2)] bytes of nibbles      (rows of qweight without padding)
 *     pad to 16 bytes
 *     [n][groups] scales, rounded to act_type (2 bytes each)
 *     [n][groups] zero bytes (8 everywhere for symmetric weights)
 * The GEMM dequantizes each weight in fp32 from those act_type scales and
 * rounds it to act_type, the weight a GPU kernel feeds its f16/bf16 tensor
 * cores (dequantization to act_type, then the GEMM), and sums x * w in
 * double, rounded once to act_type at the end.
 */
#include <stdlib.h>

#include "cpu/cpu_elem.h"

#define SYMMETRIC_ZERO 8

static int64_t round_up16(int64_t v) { return (v + 15) & ~(int64_t)15; }

/* Byte offsets of the sections of the CPU packed weight. */
typedef struct w4_layout {
    int64_t packed_k;      /* bytes per row of nibbles: ceil(k/2) */
    int64_t num_groups;
    int64_t scales_offset;
    int64_t zeros_offset;
    int64_t total_bytes;
} w4_layout_t;

static w4_layout_t w4_layout_of(int64_t n, int64_t k, int64_t group_size)
{
    w4_layout_t l;
    l.packed_k = k / 2 + (k & 1); /* ceil(k/2) without k + 1, which overflows at INT64_MAX */
    l.num_groups = k / group_size + (k % group_size != 0);
    l.scales_offset = round_up16(n * l.packed_k);
    l.zeros_offset = l.scales_offset + n * l.num_groups * 2;
    l.total_bytes = l.zeros_offset + n * l.num_groups;
    return l;
}

/* Nibble c of a row of packed int4: low nibble for even c, high for odd. */
static inline unsigned nibble_at(const uint8_t *row, int64_t c)
{
    uint8_t byte = row[c >> 1];
    return (c & 1) ? (unsigned)(byte >> 4) : (unsigned)(byte & 0x0f);
}

static inline float dequant_value(unsigned q, float zero, float scale)
{
    float diff = (float)q - zero;
    return diff * scale;
}

cuops_status_t cuops_cpu_dequant_int4(struct cuops_handle *h, const cuops_dequant_desc_t *d)
{
    (void)h;
    for (int64_t r = 0; r < d->n; r++) {
        const uint8_t *q_row = d->qweight + r * d->ldq;
        for (int64_t c = 0; c < d->k; c++) {
            const int64_t g = r * d->num_groups + c / d->group_size;
            const float scale = cpu_load_float(d->scales, d->scale_type, g);
            const float zero = d->zeros ? (float)d->zeros[g] : (float)SYMMETRIC_ZERO;
            cpu_store_float(d->out, d->out_type, r * d->ldo + c,
                            dequant_value(nibble_at(q_row, c), zero, scale));
        }
    }
    return CUOPS_STATUS_SUCCESS;
}

size_t cuops_cpu_w4_packed_size(int64_t n, int64_t k, int64_t group_size, cuops_dtype_t act)
{
    (void)act; /* scales are 2 bytes for both f16 and bf16 */
    if (n <= 0 || k <= 0 || group_size <= 0) return 0;
    return (size_t)w4_layout_of(n, k, group_size).total_bytes;
}

cuops_status_t cuops_cpu_w4_prepack(struct cuops_handle *h, const cuops_w4_prepack_desc_t *d)
{
    (void)h;
    const cuops_dequant_desc_t *w = &d->w;
    const w4_layout_t l = w4_layout_of(w->n, w->k, w->group_size);
    uint8_t *packed = (uint8_t *)d->packed;
    for (int64_t r = 0; r < w->n; r++)
        memcpy(packed + r * l.packed_k, w->qweight + r * w->ldq, (size_t)l.packed_k);
    /* padding bytes get a fixed value so the packed buffer is deterministic */
    memset(packed + w->n * l.packed_k, 0, (size_t)(l.scales_offset - w->n * l.packed_k));
    const int64_t count = w->n * l.num_groups;
    for (int64_t g = 0; g < count; g++)
        cpu_store_float(packed + l.scales_offset, d->act_type, g,
                        cpu_load_float(w->scales, w->scale_type, g));
    if (w->zeros)
        memcpy(packed + l.zeros_offset, w->zeros, (size_t)count);
    else
        memset(packed + l.zeros_offset, SYMMETRIC_ZERO, (size_t)count);
    return CUOPS_STATUS_SUCCESS;
}

cuops_status_t cuops_cpu_gemm_w4a16(struct cuops_handle *h, const cuops_w4a16_desc_t *d)
{
    const int64_t m = d->m, n = d->n, k = d->k;
    if (k == 0) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) cpu_store_float(d->y, d->act_type, i * d->ldy + j, 0.0f);
        return CUOPS_STATUS_SUCCESS;
    }
    const w4_layout_t l = w4_layout_of(n, k, d->group_size);
    const uint8_t *packed = (const uint8_t *)d->packed;

    /* x converted once: m*k doubles; one weight row at a time beside it. */
    size_t x_elems, x_bytes, w_bytes;
    if (__builtin_mul_overflow((size_t)m, (size_t)k, &x_elems) ||
        __builtin_mul_overflow(x_elems, sizeof(double), &x_bytes) ||
        __builtin_mul_overflow(sizeof(double), (size_t)k, &w_bytes))
        return cuops_fail(h, CUOPS_STATUS_ALLOC_FAILED,
                          "cpu w4a16: m = %lld, k = %lld is too large to buffer", (long long)m,
                          (long long)k);
    double *x_all = malloc(x_bytes);
    double *w_row = malloc(w_bytes);
    if (x_all == NULL || w_row == NULL) {
        free(x_all);
        free(w_row);
        return cuops_fail(h, CUOPS_STATUS_ALLOC_FAILED,
                          "cpu w4a16: could not allocate %zu + %zu bytes of buffers", x_bytes,
                          w_bytes);
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++)
            x_all[i * k + p] = (double)cpu_load_float(d->x, d->act_type, i * d->ldx + p);

    for (int64_t j = 0; j < n; j++) {
        const uint8_t *q_row = packed + j * l.packed_k;
        for (int64_t p = 0; p < k; p++) {
            const int64_t g = j * l.num_groups + p / d->group_size;
            const float scale = cpu_load_float(packed + l.scales_offset, d->act_type, g);
            const float zero = (float)packed[l.zeros_offset + g];
            /* the weight in act_type ((q - z) * s is exact in fp32 and
             * rounded once): the oracle is dequant to act_type, then the
             * GEMM. Kernels that fold the scale into the weight form it so;
             * those that apply s in fp32 after the products differ from it
             * by less than the GEMM tolerance (cuops.h, cuops_gemm_w4a16) */
            w_row[p] = (double)cpu_round_to(d->act_type,
                                            dequant_value(nibble_at(q_row, p), zero, scale));
        }
        for (int64_t i = 0; i < m; i++) {
            const double *x_row = x_all + i * k;
            double acc = 0.0;
            for (int64_t p = 0; p < k; p++) acc += x_row[p] * w_row[p];
            cpu_store_double(d->y, d->act_type, i * d->ldy + j, acc);
        }
    }
    free(x_all);
    free(w_row);
    return CUOPS_STATUS_SUCCESS;
}
