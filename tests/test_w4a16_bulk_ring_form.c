/*
 * test_w4a16_bulk_ring_form.c - whether auto takes w4a16_decode_bulk_ring,
 * and in which form (w4a16_bulk_ring_form.h), on the CPU: the shapes measured
 * on the H200 (docs/w4a16.md, Changes 6 and 11) get the choice the
 * measurements made, and the rule's edges sit where the measured side ends
 * (n = 4096's 128 CTAs of 2 strips, k = 4096, m = 2 on fewer strips, m = 3 on
 * many, 4 ring stages).
 */
#include "test_util.h"

#include "../src/cuda/quant/w4a16_bulk_ring_form.h"

/* The H200's per-block shared memory and the ring's stage size: the stages
 * each form has room for beside x (w4b_room_stages in
 * w4a16_decode_bulk_ring.cu; the ring takes w4b_ring_stages of them). */
#define OPTIN 232448
#define STAGE 35456
static int64_t stages(int64_t m, int64_t k, int xsum)
{
    const int64_t ktiles = (k + 63) / 64;
    const int64_t fixed = m * ktiles * 128 + 4 * 16 * m * 64 + (xsum ? ktiles * 64 : 0) + 512;
    return (OPTIN - fixed) / STAGE;
}

/* strips of 16 rows per CTA for n rows on the H200's 132 SMs */
static int64_t per_cta(int64_t n) { return (n / 16 + 131) / 132; }

typedef struct form_case {
    int64_t m, n, k;
    int form; /* expected */
    const char *why;
} form_case_t;

static void test_named_shapes(void)
{
    enum { N = W4B_AUTO_NONE, P = W4B_AUTO_PLAIN, X = W4B_AUTO_XSUM };
    static const form_case_t cases[] = {
        {1, 28672, 8192, X, "1 x 28672 x 8192: xsum 2-4 % ahead of the plain form (P203 call 2)"},
        {2, 28672, 8192, X, "m = 2: 3-4.5 % ahead"},
        {3, 28672, 8192, X, "m = 3: f16 2 % ahead, bf16 level (call 7)"},
        {4, 28672, 8192, P, "m = 4: xsum level / 1.5 % behind, the plain form stays"},
        {8, 28672, 4096, N, "m = 8 x 28672 x 4096: x leaves 3 stages (measured forced: xsum 2-4.5 % behind)"},
        {1, 21200, 320, X, "many strips at any k (the GPU test's auto case)"},
        {4, 21200, 320, P, "many strips, m = 4"},
        {1, 14336, 4096, X, "1 x 14336 x 4096 (7 strips per CTA): xsum 4-6 % ahead of the per-warp kernel"},
        {2, 14336, 4096, X, "m = 2: 5-7 % ahead"},
        {4, 14336, 4096, N, "m = 4: 4 % behind the per-warp kernel"},
        {3, 14336, 4096, N, "m = 3 on fewer strips: not measured"},
        {1, 4096, 14336, X, "1 x 4096 x 14336 (2 strips per CTA): 8.5-9 % ahead"},
        {1, 4096, 4096, X, "1 x 4096^2: 5-6 % ahead; 128 CTAs, 31/32 of 132 SMs"},
        {1, 4000, 4096, N, "250 strips: 125 CTAs, under 31/32 of the SMs"},
        {1, 2112, 4096, N, "132 strips: one per CTA, not measured"},
        {1, 4096, 2048, N, "k < 4096 on fewer strips: not measured"},
        {1, 4096, 4032, N, "k just under 4096"},
        {8, 28672, 8192, N, "m = 8 x 8192: x leaves the plain ring 2 stages"},
        {1, 28672, 200000, N, "k = 200000 at m = 1: x leaves 2 stages"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const form_case_t *c = &cases[i];
        const int f = w4b_auto_form(c->m, c->n, c->k, 132, stages(c->m, c->k, 0), stages(c->m, c->k, 1));
        CHECK(f == c->form, "%s (m %lld, n %lld, k %lld): form %d, expected %d", c->why,
              (long long)c->m, (long long)c->n, (long long)c->k, f, c->form);
    }
}

/* The stage counts alone: the xsum form gives way to the plain one when its
 * sums leave it under 4 stages, and neither is taken under 4. */
static void test_stages(void)
{
    CHECK(w4b_auto_form(1, 28672, 8192, 132, 5, 3) == W4B_AUTO_PLAIN, "xsum at 3 stages");
    CHECK(w4b_auto_form(1, 4096, 8192, 132, 5, 3) == W4B_AUTO_NONE, "few strips, xsum at 3 stages");
    CHECK(w4b_auto_form(4, 28672, 8192, 132, 3, 3) == W4B_AUTO_NONE, "plain at 3 stages");
    CHECK(w4b_auto_form(1, 28672, 8192, 0, 5, 5) == W4B_AUTO_XSUM, "no SM count: 132");
}

/* The ring's depth: 3 stages at m = 1 and on short streams (the shapes
 * P208 measured faster so), the deeper ring where m = 2, 3 stream 14
 * strips per CTA (measured slower at 3), never more than fit. */
static void test_ring_stages(void)
{
    const int64_t s28672 = per_cta(28672), s14336 = per_cta(14336);
    CHECK(s28672 == 14 && s14336 == 7, "strips per CTA %lld / %lld", (long long)s28672,
          (long long)s14336);
    CHECK(w4b_ring_stages(1, s28672, stages(1, 8192, 1)) == 3, "1 x 28672 x 8192: 3");
    CHECK(w4b_ring_stages(1, s14336, stages(1, 4096, 1)) == 3, "1 x 14336 x 4096: 3");
    CHECK(w4b_ring_stages(2, s14336, stages(2, 4096, 1)) == 3, "2 x 14336 x 4096: 3");
    CHECK(w4b_ring_stages(1, 2, stages(1, 14336, 1)) == 3, "1 x 4096 x 14336: 3");
    CHECK(w4b_ring_stages(2, s28672, stages(2, 8192, 1)) == stages(2, 8192, 1) &&
              stages(2, 8192, 1) >= 4,
          "2 x 28672 x 8192: every stage that fits (%lld)", (long long)stages(2, 8192, 1));
    CHECK(w4b_ring_stages(3, s28672, stages(3, 8192, 1)) == stages(3, 8192, 1),
          "3 x 28672 x 8192: every stage that fits");
    CHECK(w4b_ring_stages(4, s28672, stages(4, 8192, 0)) == stages(4, 8192, 0),
          "4 x 28672 x 8192: every stage that fits");
    CHECK(w4b_ring_stages(2, 20, 9) == W4B_RING_MAX_STAGES, "at most W4B_RING_MAX_STAGES");
    CHECK(w4b_ring_stages(1, 20, 2) == 2 && w4b_ring_stages(2, 20, 3) == 3, "never more than fit");
}

/* The HALVES form (two full barriers per stage) where a CTA streams at most
 * 7 stages, 8 at m >= 2: the shapes measured faster so (4096^2: 2 stages
 * per CTA, 14336 x 4096: 7, and at m = 2 4096 x 14336 and 4096 x 16384: 8)
 * take it; those measured level or slower (m = 1 at 4096 x 14336: 8;
 * 28672 x 8192: 28 at m = 1-3) do not; the edge counts stages, not strips. */
static void test_stage_halves(void)
{
    const int64_t s28672 = per_cta(28672), s14336 = per_cta(14336), s4096 = per_cta(4096);
    CHECK(w4b_stage_halves(1, s4096, 4096 / 64) && w4b_stage_halves(2, s4096, 4096 / 64),
          "4096^2: halves");
    CHECK(w4b_stage_halves(1, s14336, 4096 / 64) && w4b_stage_halves(2, s14336, 4096 / 64),
          "14336 x 4096: halves");
    CHECK(!w4b_stage_halves(1, s4096, 14336 / 64), "1 x 4096 x 14336: one barrier");
    CHECK(w4b_stage_halves(2, s4096, 14336 / 64) && w4b_stage_halves(2, s4096, 16384 / 64),
          "2 x 4096 x 14336 and 2 x 4096 x 16384: halves");
    for (int64_t m = 1; m <= 3; m++)
        CHECK(!w4b_stage_halves(m, s28672, 8192 / 64), "%lld x 28672 x 8192: one barrier",
              (long long)m);
    CHECK(w4b_stage_halves(1, 7, 64) && !w4b_stage_halves(1, 8, 64), "m = 1: 7 stages halves, 8 not");
    CHECK(w4b_stage_halves(8, 8, 64) && !w4b_stage_halves(8, 9, 64), "m = 8: 8 stages halves, 9 not");
    CHECK(w4b_stage_halves(1, 1, 7 * 64) && !w4b_stage_halves(1, 1, 7 * 64 + 1),
          "a partial stage counts: 7 x 64 tiles in 7 stages, one more tile in 8");
    CHECK(w4b_stage_halves(1, 1, 1), "one strip of one tile: halves");
}

/* A sweep of m, n, k and SM counts: every choice on the measured side. */
static void test_sweep(void)
{
    static const int64_t sms_list[] = {16, 78, 108, 114, 132, 144};
    int64_t bad = 0, xsum_few = 0, xsum_many = 0, plain = 0;
    for (size_t si = 0; si < sizeof sms_list / sizeof sms_list[0]; si++)
        for (int64_t m = 1; m <= 8; m++)
            for (int64_t n = 16; n <= 40000; n += 16 * 37)
                for (int64_t k = 64; k <= 20000; k += 64 * 29) {
                    const int64_t sms = sms_list[si];
                    const int f = w4b_auto_form(m, n, k, sms, stages(m, k, 0), stages(m, k, 1));
                    const int64_t strips = (n + 15) / 16;
                    const int many = strips >= 10 * sms;
                    int ok = 1;
                    if (f == W4B_AUTO_PLAIN) {
                        /* the xsum form where it fits, at m <= 3 */
                        ok = many && stages(m, k, 0) >= 4 && (m >= 4 || stages(m, k, 1) < 4);
                        plain++;
                    }
                    if (f == W4B_AUTO_XSUM) {
                        ok = stages(m, k, 1) >= 4 && m <= 3;
                        if (!many) {
                            const int64_t per = (strips + sms - 1) / sms;
                            ok = ok && m <= 2 && k >= 4096 && per >= 2 &&
                                 32 * ((strips + per - 1) / per) >= 31 * sms;
                            xsum_few++;
                        } else {
                            xsum_many++;
                        }
                    }
                    if (f == W4B_AUTO_NONE) ok = !(many && stages(m, k, 0) >= 4);
                    if (!ok && bad++ < 5)
                        CHECK(0, "m %lld, n %lld, k %lld, sms %lld: form %d", (long long)m,
                              (long long)n, (long long)k, (long long)sms, f);
                }
    CHECK(bad == 0, "%lld choices off the measured side", (long long)bad);
    CHECK(xsum_few > 50 && xsum_many > 50 && plain > 50,
          "the sweep reached each choice too rarely: xsum %lld / %lld, plain %lld",
          (long long)xsum_few, (long long)xsum_many, (long long)plain);
}

int main(void)
{
    test_named_shapes();
    test_stages();
    test_ring_stages();
    test_stage_halves();
    test_sweep();
    return tu_finish("test_w4a16_bulk_ring_form");
}
