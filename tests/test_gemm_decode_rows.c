/*
 * test_gemm_decode_rows.c - the dense decode GEMM's forms by n and k
 * (gemm_tuning.h), on the CPU: the weight rows per CTA of the cluster form
 * unsplit (cuops_decode_wgmma_rows: 128 where 256-row blocks would split K
 * and 128-row blocks fill 3/4 to all of the SMs, else 256) and as launched
 * (cuops_decode_wgmma_block_rows: 64 or 128 where K is split), and where
 * auto takes the narrow form (cuops_decode_narrow_fits) instead, at the
 * shapes measured on the H200 (docs/gemm.md, decode steps 3-8), their
 * edges, a sweep of n, k and SM counts, and the rule under 4 TB/s of DRAM
 * bandwidth (measured on an H100).
 */
#include "test_util.h"

#include "cuda/gemm/gemm_tuning.h"

typedef struct rows_case {
    int64_t n, k, sms;
    int rows, narrow, block; /* expected: unsplit height, narrow form, launched height */
    const char *why;
} rows_case_t;

static void test_named_shapes(void)
{
    static const rows_case_t cases[] = {
        {14336, 4096, 132, 128, 0, 128, "14336 x 4096: 112 blocks of 128 rows, unsplit (P151)"},
        {4096, 14336, 132, 256, 0, 64, "4096 x 14336: 64-row blocks, K split 2 (P155)"},
        {4096, 4096, 132, 256, 0, 64, "4096^2: 64-row blocks split 2, not the narrow form (P214)"},
        {4096, 8192, 132, 256, 0, 64, "4096 x 8192: 64-row blocks split 2 (P214)"},
        {4224, 4096, 132, 256, 0, 64, "66 blocks of 64 rows: K split 2, not the narrow form"},
        {4232, 4096, 132, 256, 1, 256, "67 blocks of 64 rows would not split: the narrow form"},
        {6144, 4096, 132, 256, 1, 256, "6144 x 4096: the narrow form, 48-row tiles"},
        {4224, 14336, 132, 256, 0, 64, "66 blocks of 64 rows: K split 2, not the narrow form"},
        {4232, 14336, 132, 256, 1, 256, "67 blocks of 64 rows would not split: the narrow form"},
        {28672, 8192, 132, 256, 0, 256, "28672 x 8192: 112 blocks of 256 rows, unsplit"},
        {8192, 4096, 132, 256, 1, 256, "8192 x 4096: the narrow form, 64-row tiles"},
        {12544, 4096, 132, 256, 1, 256, "98 blocks of 128 rows: under 3/4 of 132 SMs, the narrow form"},
        {12552, 4096, 132, 128, 0, 128, "99 blocks of 128 rows: 3/4 of 132"},
        {16896, 4096, 132, 128, 0, 128, "132 blocks of 128 rows"},
        {16904, 4096, 132, 256, 1, 256, "133 blocks: 256-row blocks would split, the narrow form"},
        {25088, 4096, 132, 256, 1, 256, "98 blocks of 256 rows: the narrow form's last n"},
        {25344, 4096, 132, 256, 0, 256, "99 blocks of 256 rows: unsplit"},
        {14336, 4096, 114, 128, 0, 128, "114 SMs: 112 blocks of 128 rows"},
        {2048, 8192, 132, 256, 0, 64, "2048 x 8192: 16-row narrow tiles, 64-row blocks split 4"},
        {2048, 14336, 132, 256, 0, 128, "2048 x 14336: long K, 128-row blocks split 8"},
        {1024, 14336, 132, 256, 0, 128, "1024 x 14336: long K, 128-row blocks split 8"},
        {3072, 4096, 132, 256, 0, 64, "3072 x 4096: 24-row narrow tiles, 64-row blocks split 2"},
        {2048, 2048, 132, 256, 0, 64, "2048^2: 64-row blocks split 4 (P155), not 16-row tiles"},
        {64, 64, 132, 256, 0, 64, "one 64-row block"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const rows_case_t *c = &cases[i];
        const int rows = cuops_decode_wgmma_rows(c->n, c->sms);
        const int narrow = cuops_decode_narrow_fits(c->n, c->sms, 0);
        /* the H200's own bandwidth takes the same rule as an unknown one */
        CHECK(cuops_decode_narrow_fits(c->n, c->sms, 4917) == narrow,
              "%s: the rule at 4917 GB/s differs from the default", c->why);
        const int block = cuops_decode_wgmma_block_rows(c->n, c->k, c->sms);
        CHECK(rows == c->rows && narrow == c->narrow && block == c->block,
              "%s (n %lld, k %lld, %lld SMs): %d rows, narrow %d, blocks of %d; expected %d, %d, %d",
              c->why, (long long)c->n, (long long)c->k, (long long)c->sms, rows, narrow, block,
              c->rows, c->narrow, c->block);
    }
}

/* Under 4 TB/s of DRAM bandwidth (an H100 SXM: 3352 GB/s) auto takes the
 * narrow form wherever its tiles hold 32 rows or more and keep 3/4 of the
 * SMs busy, including where the H200 rule leaves the call to the cluster
 * form: the decode suite's shapes (P214 call 2, H100). */
static void test_low_bandwidth(void)
{
    static const struct { int64_t n; int h200, h100; const char *why; } cases[] = {
        {4096, 0, 1, "4096 x *: 64-row split blocks on the H200, narrow on the H100"},
        {14336, 0, 1, "14336 x 4096: 128-row blocks unsplit on the H200, narrow on the H100"},
        {28672, 0, 1, "28672 x 8192: 256-row blocks unsplit on the H200, narrow on the H100"},
        {6144, 1, 1, "6144: narrow on both"},
        {2048, 0, 0, "2048: 16-row narrow tiles, the cluster form on both"},
        {3072, 0, 0, "3072: 24-row narrow tiles, the cluster form on both"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int h200 = cuops_decode_narrow_fits(cases[i].n, 132, 4917);
        const int h100 = cuops_decode_narrow_fits(cases[i].n, 132, 3352);
        CHECK(h200 == cases[i].h200 && h100 == cases[i].h100, "%s: narrow %d at 4917 GB/s, %d at 3352",
              cases[i].why, h200, h100);
    }
    /* at any bandwidth the narrow form needs its tile rule; under 4 TB/s that rule alone */
    int64_t bad = 0, more = 0;
    for (int64_t n = 1; n <= 40000; n += 7) {
        const int64_t rows = cuops_decode_narrow_rows(n, 132), tiles = (n + rows - 1) / rows;
        const int tile_rule = 4 * n >= 3 * ((tiles + 131) / 132) * 132 * rows && rows >= 32;
        const int lo = cuops_decode_narrow_fits(n, 132, 3352), hi = cuops_decode_narrow_fits(n, 132, 0);
        bad += lo != tile_rule || (hi && !lo);
        more += lo && !hi;
    }
    CHECK(bad == 0 && more > 1000, "low-bandwidth sweep: %lld shapes broke the rule, %lld more narrow",
          (long long)bad, (long long)more);
}

static void test_sweep(void)
{
    static const int64_t sms_list[] = {1, 16, 78, 108, 114, 132, 144};
    static const int64_t k_list[] = {4096, 14336};
    int64_t bad = 0, r128 = 0, narrow = 0, b64 = 0, b128 = 0;
    for (size_t si = 0; si < sizeof sms_list / sizeof sms_list[0]; si++)
        for (size_t ki = 0; ki < 2; ki++)
            for (int64_t n = 1; n <= 40000; n += 7) {
                const int64_t sms = sms_list[si], k = k_list[ki];
                const int rows = cuops_decode_wgmma_rows(n, sms);
                const int block = cuops_decode_wgmma_block_rows(n, k, sms);
                const int fits = cuops_decode_narrow_fits(n, sms, 0);
                const int64_t n256 = (n + 255) / 256, n128 = (n + 127) / 128, n64 = (n + 63) / 64;
                int ok = rows == 128 || rows == 256;
                if (rows == 128) {
                    /* only where 256-row blocks would split and 128-row ones fill the SMs once */
                    ok = ok && 4 * n256 < 3 * sms && 4 * n128 >= 3 * sms && n128 <= sms;
                    r128++;
                } else {
                    ok = ok && !(4 * n256 < 3 * sms && 4 * n128 >= 3 * sms && n128 <= sms);
                }
                /* launched heights below the unsplit one only where that one would split
                 * K and 64-row blocks would too; 128 only for a long K split 4+ */
                if (block != rows) {
                    ok = ok && (block == 64 || block == 128) && 2 * ((n + rows - 1) / rows) <= sms &&
                         2 * n64 <= sms;
                    if (block == 128) ok = ok && k > 8192 && n64 <= sms / 4;
                    if (block == 64) ok = ok && !(k > 8192 && n64 <= sms / 4);
                    b64 += block == 64;
                    b128 += block == 128;
                }
                /* the narrow form only where the cluster form's blocks would split K,
                 * with 32-row tiles or more, and not where 64-row blocks would split it */
                if (fits) {
                    ok = ok && 4 * ((n + rows - 1) / rows) < 3 * sms &&
                         cuops_decode_narrow_rows(n, sms) >= 32 && 2 * n64 > sms;
                    narrow++;
                }
                if (!ok && bad++ < 5)
                    CHECK(0, "n %lld, k %lld, %lld SMs: %d rows, blocks of %d, narrow %d",
                          (long long)n, (long long)k, (long long)sms, rows, block, fits);
            }
    CHECK(bad == 0, "%lld shapes broke a rule", (long long)bad);
    CHECK(r128 > 1000 && narrow > 1000 && b64 > 1000 && b128 > 100,
          "the sweep met 128-row blocks %lld times, the narrow form %lld, 64- / 128-row split "
          "blocks %lld / %lld",
          (long long)r128, (long long)narrow, (long long)b64, (long long)b128);
}

int main(void)
{
    test_named_shapes();
    test_low_bandwidth();
    test_sweep();
    return tu_finish("test_gemm_decode_rows");
}
