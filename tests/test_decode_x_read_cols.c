/*
 * test_decode_x_read_cols.c - how wide the decode kernel reads x stored
 * [k, m] (gemm_tuning.h, cuops_decode_x_read_cols), on the CPU. The GPU test
 * cannot see a read past the end of x (the allocation behind it is rounded up
 * to pages), so the bound is checked here: the named cases the H200 measured
 * (docs/gemm.md, "x read as wide as its box"), then every m = 1..64 and lda
 * up to m + 80 against the box widths and against a simulated allocation of
 * exactly (k - 1) * lda + m elements, whose element past the end no K-row but
 * the last may reach (the last is read only through the exact map).
 */
#include "test_util.h"

#include "cuda/gemm/gemm_tuning.h"

typedef struct cols_case {
    int64_t m, lda, want;
    const char *why;
} cols_case_t;

static void test_named(void)
{
    static const cols_case_t cases[] = {
        {24, 64, 32, "24 x 4096^2 with lda 64 (P202: 18.0 -> 15.1 us)"},
        {24, 24, 32, "24 with tight lda: rows that overlap the next K-row"},
        {40, 40, 64, "40 with tight lda"},
        {48, 64, 64, "48 with lda 64"},
        {32, 32, 32, "a full box: nothing past m"},
        {64, 64, 64, "a full box"},
        {16, 16, 16, "a full box"},
        {8, 8, 8, "a full box"},
        {7, 8, 8, "m = 7 with the least lda TMA can read"},
        {1, 8, 8, "m = 1 with lda 8"},
        {1, 1, 1, "m = 1, lda = 1: 7 columns past m would run past the allocation"},
        {3, 4, 3, "m = 3, lda = 4: the box's 5 extra columns would too"},
        {33, 40, 64, "33 with lda 40 (the quick test's shape)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const cols_case_t *c = &cases[i];
        const int64_t got = cuops_decode_x_read_cols(c->m, c->lda);
        CHECK(got == c->want, "m %lld, lda %lld: %lld columns, expected %lld (%s)", (long long)c->m,
              (long long)c->lda, (long long)got, (long long)c->want, c->why);
    }
}

static void test_sweep(void)
{
    int64_t bad_width = 0, bad_bound = 0, bad_wide = 0, wide_seen = 0;
    for (int64_t m = 1; m <= 64; m++) {
        const int64_t box = cuops_decode_x_box_cols(m);
        CHECK(box >= m && box <= 64 && (box & (box - 1)) == 0 && (box == 8 || 2 * m > box),
              "m %lld: box of %lld columns", (long long)m, (long long)box);
        for (int64_t lda = m; lda <= m + 80; lda++) {
            const int64_t cols = cuops_decode_x_read_cols(m, lda);
            if (cols != m && cols != box) bad_width++;
            /* TMA reads rows whose byte stride is a multiple of 16: there the
             * whole box must be taken (the point of the rule) */
            if (lda % 8 == 0 && cols != box) bad_wide++;
            wide_seen += cols > m;
            for (int64_t k = 2; k <= 5; k++) {
                const int64_t size = (k - 1) * lda + m; /* the least x can be */
                for (int64_t r = 0; r + 1 < k; r++)
                    if (r * lda + cols - 1 >= size) bad_bound++;
            }
        }
    }
    CHECK(bad_width == 0, "%lld cases read neither m nor the box", (long long)bad_width);
    CHECK(bad_bound == 0, "%lld K-rows before the last read past the allocation", (long long)bad_bound);
    CHECK(bad_wide == 0, "%lld cases with a TMA-readable lda kept the exact map", (long long)bad_wide);
    CHECK(wide_seen > 1000, "the sweep read past m only %lld times", (long long)wide_seen);
}

int main(void)
{
    test_named();
    test_sweep();
    return tu_finish("test_decode_x_read_cols");
}
