/*
 * test_gemm_decode_rows.c - the dense decode GEMM's forms by n
 * (gemm_tuning.h), on the CPU: the weight rows per CTA of the cluster form
 * (cuops_decode_wgmma_rows: 128 where 256-row blocks would split K and
 * 128-row blocks fill 3/4 to all of the SMs, else 256) and where auto takes
 * the narrow form (cuops_decode_narrow_fits) instead, at the shapes measured
 * on the H200 (docs/gemm.md, decode steps 3-7), their edges, and a sweep
 * of n and SM counts.
 */
#include "test_util.h"

#include "cuda/gemm/gemm_tuning.h"

typedef struct rows_case {
    int64_t n, k, sms;
    int rows, narrow; /* expected */
    const char *why;
} rows_case_t;

static void test_named_shapes(void)
{
    static const rows_case_t cases[] = {
        {14336, 4096, 132, 128, 0, "14336 x 4096: 112 blocks of 128 rows, unsplit (P151)"},
        {4096, 14336, 132, 256, 1, "4096 x 14336: the narrow form, 32-row tiles"},
        {4096, 4096, 132, 256, 1, "4096^2: the narrow form"},
        {28672, 8192, 132, 256, 0, "28672 x 8192: 112 blocks of 256 rows, unsplit"},
        {8192, 4096, 132, 256, 1, "8192 x 4096: the narrow form, 64-row tiles"},
        {12544, 4096, 132, 256, 1, "98 blocks of 128 rows: under 3/4 of 132 SMs, the narrow form"},
        {12552, 4096, 132, 128, 0, "99 blocks of 128 rows: 3/4 of 132"},
        {16896, 4096, 132, 128, 0, "132 blocks of 128 rows"},
        {16904, 4096, 132, 256, 1, "133 blocks: 256-row blocks would split, the narrow form"},
        {25088, 4096, 132, 256, 1, "98 blocks of 256 rows: the narrow form's last n"},
        {25344, 4096, 132, 256, 0, "99 blocks of 256 rows: unsplit"},
        {14336, 4096, 114, 128, 0, "114 SMs: 112 blocks of 128 rows"},
        {2048, 8192, 132, 256, 0, "2048 x 8192: 16-row narrow tiles over a long K, the cluster form"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const rows_case_t *c = &cases[i];
        const int rows = cuops_decode_wgmma_rows(c->n, c->sms);
        const int narrow = cuops_decode_narrow_fits(c->n, c->k, c->sms);
        CHECK(rows == c->rows && narrow == c->narrow,
              "%s (n %lld, k %lld, %lld SMs): %d rows, narrow %d; expected %d, %d", c->why,
              (long long)c->n, (long long)c->k, (long long)c->sms, rows, narrow, c->rows,
              c->narrow);
    }
}

static void test_sweep(void)
{
    static const int64_t sms_list[] = {1, 16, 78, 108, 114, 132, 144};
    int64_t bad = 0, r128 = 0, narrow = 0;
    for (size_t si = 0; si < sizeof sms_list / sizeof sms_list[0]; si++)
        for (int64_t n = 1; n <= 40000; n += 7) {
            const int64_t sms = sms_list[si];
            const int rows = cuops_decode_wgmma_rows(n, sms);
            const int64_t b256 = (n + 255) / 256, b128 = (n + 127) / 128;
            int ok = rows == 128 || rows == 256;
            if (rows == 128) {
                /* only where 256-row blocks would split and 128-row ones fill the SMs once */
                ok = ok && 4 * b256 < 3 * sms && 4 * b128 >= 3 * sms && b128 <= sms;
                r128++;
            } else {
                ok = ok && !(4 * b256 < 3 * sms && 4 * b128 >= 3 * sms && b128 <= sms);
            }
            /* the narrow form only where the cluster form's blocks would split K */
            if (cuops_decode_narrow_fits(n, 4096, sms)) {
                ok = ok && 4 * ((n + rows - 1) / rows) < 3 * sms;
                narrow++;
            }
            if (!ok && bad++ < 5)
                CHECK(0, "n %lld, %lld SMs: %d rows, narrow %d", (long long)n, (long long)sms, rows,
                      cuops_decode_narrow_fits(n, 4096, sms));
        }
    CHECK(bad == 0, "%lld shapes broke a rule", (long long)bad);
    CHECK(r128 > 1000 && narrow > 1000, "the sweep met 128-row blocks %lld times, the narrow form %lld",
          (long long)r128, (long long)narrow);
}

int main(void)
{
    test_named_shapes();
    test_sweep();
    return tu_finish("test_gemm_decode_rows");
}
