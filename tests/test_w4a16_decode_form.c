/*
 * test_w4a16_decode_form.c - the CTA form w4a16_decode_wgmma takes
 * (w4a16_decode_wgmma_form.h), on the CPU: the decode shapes measured on the
 * H200 get the form docs/w4a16.md names, and over a sweep of m, n, k and SM
 * counts the 256-row form is taken where the 64-row blocks do not fit one
 * round, and beside that only at m <= 32, n >= 4096, with >= 24 blocks of
 * 64 k per rank of its split.
 */
#include "test_util.h"

#include "../src/cuda/quant/w4a16_decode_wgmma_form.h"

typedef struct form_case {
    int64_t m, n, k;
    int sms, study;
    int kphases; /* expected */
    const char *why;
} form_case_t;

static int64_t strips_of(int64_t n) { return (n + 15) / 16; }
static int64_t ktiles_of(int64_t k) { return (k + 63) / 64; }

static void test_named_shapes(void)
{
    static const form_case_t cases[] = {
        {32, 4096, 14336, 132, 0, 1, "4096x14336, m = 32: 28 blocks per rank of 8 (P143: 6 % faster)"},
        {17, 4096, 14336, 132, 0, 1, "4096x14336, m = 17"},
        {24, 4096, 14336, 132, 0, 1, "4096x14336, m = 24"},
        {48, 4096, 14336, 132, 0, 4, "4096x14336, m = 48: level in P143, the 64-row form stays"},
        {64, 4096, 14336, 132, 0, 4, "4096x14336, m = 64"},
        {32, 4096, 4096, 132, 0, 4, "4096^2, m = 32: 8 blocks per rank (P143: 6 % slower)"},
        {1, 4096, 4096, 132, 0, 4, "4096^2, m = 1"},
        {32, 8192, 4096, 132, 0, 4, "8192x4096: 16 blocks per rank of 4, not measured"},
        {32, 4096, 12288, 132, 0, 1, "192 blocks: 24 per rank"},
        {32, 4096, 12224, 132, 0, 4, "191 blocks: 23 per rank"},
        {32, 2048, 65536, 132, 0, 4, "n < 4096: a 256-row CTA would be partly empty"},
        {32, 8448, 14336, 132, 0, 1, "n = 64 x 132, 33 256-row blocks of 4 ranks: 56 blocks each"},
        {64, 8448, 14336, 132, 0, 4, "n = 64 x 132 at m = 64"},
        {64, 8464, 4096, 132, 0, 1, "n past 64 x 132: 64-row blocks take two rounds"},
        {1, 14336, 4096, 132, 0, 1, "14336x4096"},
        {64, 28672, 8192, 132, 0, 1, "28672x8192"},
        {32, 4096, 4096, 132, 1, 1, "the one-block-per-stage study form: always 256 rows"},
        {32, 4096, 14336, 114, 0, 1, "114 SMs: 16 blocks of 7 ranks, 32 blocks each"},
        {32, 4096, 14336, 0, 0, 1, "no SM count: the 256-row form (no rounds to compare)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const form_case_t *c = &cases[i];
        const int kp = w4a16_decode_wgmma_kphases(c->m, strips_of(c->n), ktiles_of(c->k), c->sms,
                                                  c->study);
        CHECK(kp == c->kphases, "%s (m %lld, n %lld, k %lld, sms %d): %d k phases, expected %d",
              c->why, (long long)c->m, (long long)c->n, (long long)c->k, c->sms, kp, c->kphases);
    }
}

static void test_sweep(void)
{
    static const int sms_list[] = {1, 2, 16, 78, 108, 114, 132, 144};
    static const int64_t m_list[] = {1, 8, 16, 17, 32, 33, 48, 64};
    int64_t bad = 0, wide = 0, beside = 0;
    for (size_t si = 0; si < sizeof sms_list / sizeof sms_list[0]; si++)
        for (size_t mi = 0; mi < sizeof m_list / sizeof m_list[0]; mi++)
            for (int64_t strips = 1; strips <= 1200; strips += 7)
                for (int64_t ktiles = 1; ktiles <= 600; ktiles += 13) {
                    const int sms = sms_list[si];
                    const int64_t m = m_list[mi];
                    const int kp = w4a16_decode_wgmma_kphases(m, strips, ktiles, sms, 0);
                    const int fits = (strips + 3) / 4 <= sms;
                    int ok = kp == 1 || kp == 4;
                    if (!fits) ok = ok && kp == 1;
                    if (fits && kp == 1) {
                        /* beside the 64-row form: only on the measured side */
                        const int64_t rows256 = (strips + 15) / 16;
                        int64_t splits = rows256 < sms ? sms / rows256 : 1;
                        if (splits > 8) splits = 8;
                        ok = ok && m <= 32 && strips >= 256 && ktiles / splits >= 24;
                        beside++;
                    }
                    if (kp == 1) wide++;
                    if (!ok && bad++ < 5)
                        CHECK(0, "m %lld, strips %lld, ktiles %lld, sms %d: %d k phases",
                              (long long)m, (long long)strips, (long long)ktiles, sms, kp);
                }
    CHECK(bad == 0, "%lld forms broke a rule", (long long)bad);
    CHECK(wide > 1000 && beside > 100, "the sweep took the 256-row form only %lld times (%lld beside the 64-row form)",
          (long long)wide, (long long)beside);
}

int main(void)
{
    test_named_shapes();
    test_sweep();
    return tu_finish("test_w4a16_decode_form");
}
