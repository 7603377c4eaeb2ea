/*
 * cpu_gemm.c - the reference GEMM: C = alpha * op(A) * op(B) + beta * C with
 * every product and sum in double, the oracle the GPU kernels are tested
 * against.
 *
 * Each output is one dot product summed in order p = 0 .. k-1 with a single
 * double accumulator, so the result is exactly what a naive triple loop in
 * double gives. To keep that loop on contiguous memory for every transpose,
 * a block of columns of op(B) is converted once into a K-major double panel
 * (column j of op(B) becomes row j of the panel) and each row of op(A) into a
 * double row buffer; the inner loop is then a dot of two unit-stride rows.
 * The panel is capped at PANEL_DOUBLES (8 MiB) so any n fits; the row of
 * op(A) is re-converted once per panel, which is O(m*k) per panel against
 * the O(m*k*panel_cols) of the dot products.
 *
 * The final value is alpha*acc + beta*C in double, rounded once (nearest
 * even) to c_type (cpu_store_double: to f16/bf16 through a float rounded to
 * odd, so not twice). beta == 0 never reads C (it may hold NaN). k == 0
 * gives C = beta*C.
 */
#include <stdlib.h>

#include "cpu/cpu_elem.h"

#define PANEL_DOUBLES ((int64_t)1 << 20)

static double gemm_output(const cuops_gemm_desc_t *d, int64_t i, int64_t j, double acc,
                          int have_acc)
{
    double v = have_acc ? (double)d->alpha * acc : 0.0;
    if (d->beta != 0.0f)
        v += (double)d->beta * (double)cpu_load_float(d->c, d->c_type, i * d->ldc + j);
    return v;
}

cuops_status_t cuops_cpu_gemm(struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    const int64_t m = d->m, n = d->n, k = d->k;
    if (k == 0) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
                cpu_store_double(d->c, d->c_type, i * d->ldc + j, gemm_output(d, i, j, 0.0, 0));
        return CUOPS_STATUS_SUCCESS;
    }

    int64_t panel_cols = PANEL_DOUBLES / k;
    if (panel_cols < 1) panel_cols = 1;
    if (panel_cols > n) panel_cols = n;
    size_t panel_bytes, row_bytes;
    if (__builtin_mul_overflow((size_t)panel_cols * sizeof(double), (size_t)k, &panel_bytes) ||
        __builtin_mul_overflow(sizeof(double), (size_t)k, &row_bytes))
        return cuops_fail(h, CUOPS_STATUS_ALLOC_FAILED, "cpu gemm: k = %lld is too large to buffer",
                          (long long)k);
    double *panel = malloc(panel_bytes);
    double *a_row = malloc(row_bytes);
    if (panel == NULL || a_row == NULL) {
        free(panel);
        free(a_row);
        return cuops_fail(h, CUOPS_STATUS_ALLOC_FAILED,
                          "cpu gemm: could not allocate %zu + %zu bytes of buffers", panel_bytes,
                          row_bytes);
    }

    for (int64_t j0 = 0; j0 < n; j0 += panel_cols) {
        const int64_t cols = (n - j0 < panel_cols) ? n - j0 : panel_cols;
        /* panel[jj*k + p] = op(B)[p, j0 + jj] */
        if (d->trans_b == CUOPS_OP_T) {
            for (int64_t jj = 0; jj < cols; jj++)
                for (int64_t p = 0; p < k; p++)
                    panel[jj * k + p] =
                        (double)cpu_load_float(d->b, d->ab_type, (j0 + jj) * d->ldb + p);
        } else {
            for (int64_t p = 0; p < k; p++)
                for (int64_t jj = 0; jj < cols; jj++)
                    panel[jj * k + p] =
                        (double)cpu_load_float(d->b, d->ab_type, p * d->ldb + j0 + jj);
        }
        for (int64_t i = 0; i < m; i++) {
            /* a_row[p] = op(A)[i, p] */
            if (d->trans_a == CUOPS_OP_N) {
                for (int64_t p = 0; p < k; p++)
                    a_row[p] = (double)cpu_load_float(d->a, d->ab_type, i * d->lda + p);
            } else {
                for (int64_t p = 0; p < k; p++)
                    a_row[p] = (double)cpu_load_float(d->a, d->ab_type, p * d->lda + i);
            }
            for (int64_t jj = 0; jj < cols; jj++) {
                const double *b_col = panel + jj * k;
                double acc = 0.0;
                for (int64_t p = 0; p < k; p++) acc += a_row[p] * b_col[p];
                const int64_t j = j0 + jj;
                cpu_store_double(d->c, d->c_type, i * d->ldc + j, gemm_output(d, i, j, acc, 1));
            }
        }
    }
    free(panel);
    free(a_row);
    return CUOPS_STATUS_SUCCESS;
}
