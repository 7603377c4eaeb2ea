/*
 * cpu_import.c - reference GPTQ / AWQ importers: unpack a 4-bit checkpoint's
 * int32 packing into the seed format of cuops_dequant_int4 (qweight [n,
 * ceil(k/2)] bytes with the low nibble for even k, scales and zeros [n,
 * groups]). The formats are described in docs/dequant.md. Written for
 * clarity, one output element at a time; the GPU importers must match it bit
 * for bit.
 */
#include <string.h>

#include "api/cuops_internal.h"

static uint32_t nibble(int32_t word, int slot) { return ((uint32_t)word >> (4 * slot)) & 0xFu; }

/* The weight nibble of W[r, c] in the checkpoint. */
static uint32_t checkpoint_weight(const cuops_import_desc_t *d, int64_t r, int64_t c)
{
    if (d->format == CUOPS_IMPORT_GPTQ) /* [k/8, n]: row c/8, column r, slot c%8 */
        return nibble(d->qweight[(c / 8) * d->n + r], (int)(c % 8));
    /* AWQ [k, n/8]: row c, column r/8, slot of column offset r%8 */
    return nibble(d->qweight[c * (d->n / 8) + r / 8], cuops_awq_slot_of_column((int)(r % 8)));
}

/* The stored zero nibble of row r, group g (before GPTQ v1's +1). */
static uint32_t checkpoint_zero(const cuops_import_desc_t *d, int64_t r, int64_t g)
{
    const int32_t word = d->qzeros[g * (d->n / 8) + r / 8];
    if (d->format == CUOPS_IMPORT_GPTQ) return nibble(word, (int)(r % 8));
    return nibble(word, cuops_awq_slot_of_column((int)(r % 8)));
}

cuops_status_t cuops_cpu_import(struct cuops_handle *h, const cuops_import_desc_t *d)
{
    const int64_t n = d->n, k = d->k, ng = d->num_groups;
    const int v1 = d->format == CUOPS_IMPORT_GPTQ && d->gptq_version == 1;

    /* Check before writing anything: a GPTQ v1 stored zero of 15 means 16. */
    if (v1) {
        for (int64_t g = 0; g < ng; g++)
            for (int64_t r = 0; r < n; r++)
                if (checkpoint_zero(d, r, g) == 15u)
                    return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                                      "import_gptq: version 1 stores zero-1, and row %lld group %lld "
                                      "stores 15 (zero 16), which the 0..15 zeros cannot hold",
                                      (long long)r, (long long)g);
    }

    const int64_t row_bytes = k / 2 + (k & 1);
    for (int64_t r = 0; r < n; r++) {
        uint8_t *dst = d->qweight_out + r * d->ldq_out;
        for (int64_t b = 0; b < row_bytes; b++) {
            const int64_t c = 2 * b;
            const uint32_t lo = checkpoint_weight(d, r, c);
            const uint32_t hi = (c + 1 < k) ? checkpoint_weight(d, r, c + 1) : 0u;
            dst[b] = (uint8_t)(lo | (hi << 4));
        }
    }

    const size_t es = cuops_dtype_size(d->scale_type);
    const uint8_t *sin = (const uint8_t *)d->scales;
    uint8_t *sout = (uint8_t *)d->scales_out;
    for (int64_t r = 0; r < n; r++) {
        for (int64_t g = 0; g < ng; g++) {
            memcpy(sout + (size_t)(r * ng + g) * es, sin + (size_t)(g * n + r) * es, es);
            d->zeros_out[r * ng + g] = (uint8_t)(checkpoint_zero(d, r, g) + (v1 ? 1u : 0u));
        }
    }
    h->last_kernel = d->format == CUOPS_IMPORT_GPTQ ? "cpu_import_gptq" : "cpu_import_awq";
    return CUOPS_STATUS_SUCCESS;
}
