/*
 * test_gemm_small_grid_pick.c - auto's tile for grids that 128 x 256 tiles
 * fill poorly (gemm_tuning.h, cuops_sm90_small_grid_pick), on the CPU: the
 * kernel the rule names at the shapes measured on the H200 (docs/gemm.md,
 * "Small grids" and "Larger clusters": each case is the kernel auto ran
 * there, with the device's answers of that run: 132 SMs, 30 clusters of four
 * 64 x 128 CTAs at once, the cluster split's plan), then the same shapes
 * with one of those answers changed (no clusters of four, no pairs, no
 * 64-row kernel, a C off 16 bytes), then a sweep over shapes and answers
 * against the guards every pick must respect, and the longer K the clusters
 * of four take on a device under 4 TB/s of DRAM bandwidth.
 */
#include "test_util.h"

#include "cuda/gemm/gemm_tuning.h"

typedef struct pick_case {
    int64_t m, n, k;
    int lines, c_shifted, can_run64, mc2_ok, mc4_clusters, dsmem128, splitk128;
    cuops_sm90_small_pick_t want;
    const char *why;
} pick_case_t;

static const char *pick_name(cuops_sm90_small_pick_t p)
{
    switch (p) {
    case CUOPS_SM90_PICK_TABLE: return "the table";
    case CUOPS_SM90_PICK_64: return "sm90_ws_64x128";
    case CUOPS_SM90_PICK_64_MC2: return "sm90_ws_64x128_mc2";
    case CUOPS_SM90_PICK_64_MC4: return "sm90_ws_64x128_mc4";
    case CUOPS_SM90_PICK_128_DSMEM: return "sm90_ws_128x128_splitk_dsmem";
    case CUOPS_SM90_PICK_128: return "sm90_ws_128x128";
    }
    return "?";
}

static cuops_sm90_small_pick_t pick(const pick_case_t *c, int64_t sms)
{
    cuops_sm90_small_call_t call = {c->m, c->n, c->k, sms, c->lines, c->c_shifted,
                                    c->can_run64, c->mc2_ok, c->mc4_clusters, c->dsmem128,
                                    c->splitk128, 0 /* bandwidth unknown: the H200's rule */};
    return cuops_sm90_small_grid_pick(&call);
}

#define TABLE CUOPS_SM90_PICK_TABLE
#define P64 CUOPS_SM90_PICK_64
#define MC2 CUOPS_SM90_PICK_64_MC2
#define MC4 CUOPS_SM90_PICK_64_MC4
#define DSMEM CUOPS_SM90_PICK_128_DSMEM
#define P128 CUOPS_SM90_PICK_128

static void test_measured(void)
{
    /* lines, c_shifted, can_run64, mc2_ok, mc4_clusters, dsmem128, splitk128 */
    static const pick_case_t cases[] = {
        /* rows off the 128-byte lines (k * 2 bytes not a multiple of 128) */
        {1000, 1000, 1000, 0, 0, 1, 1, 30, 0, 0, MC2, "1000^3: 32 clusters of four do not fit"},
        {256, 1024, 1000, 0, 0, 1, 1, 30, 0, 0, MC4, "256 x 1024 x 1000 (P198: 9.57 us)"},
        {640, 1024, 1000, 0, 0, 1, 1, 30, 0, 0, MC4, "640 x 1024 x 1000 (9.95 us)"},
        {768, 1024, 1000, 0, 0, 1, 1, 30, 0, 0, MC4, "768 x 1024 x 1000 (10.02 us)"},
        {896, 1024, 1000, 0, 0, 1, 1, 30, 0, 0, MC2, "896 x 1024 x 1000: 32 clusters of four"},
        {960, 1024, 1000, 0, 0, 1, 1, 30, 0, 0, MC2, "960 x 1024 x 1000: 120 tiles"},
        {1024, 1024, 1000, 0, 0, 1, 1, 30, 0, 0, MC2, "1024 x 1024 x 1000"},
        {768, 1024, 2000, 0, 0, 1, 1, 30, 1, 0, P64, "768 x 1024 x 2000 (12.35 us)"},
        {896, 1024, 2000, 0, 0, 1, 1, 30, 1, 0, P64, "896 x 1024 x 2000 (13.02 us)"},
        {1000, 1000, 2000, 0, 0, 1, 1, 30, 1, 0, MC2, "1000 x 1000 x 2000: 128 tiles"},
        {768, 1024, 4000, 0, 0, 1, 1, 30, 1, 0, P64, "768 x 1024 x 4000 (18.08 us)"},
        {1000, 1000, 4000, 0, 0, 1, 1, 30, 1, 0, MC2, "1000 x 1000 x 4000 (21.31 us)"},
        /* rows on the lines */
        {1024, 1024, 1024, 1, 0, 1, 1, 30, 0, 0, P64, "1024^3"},
        {1000, 1000, 1024, 1, 0, 1, 1, 30, 0, 0, P64, "1000 x 1000 x 1024"},
        {768, 1024, 1024, 1, 0, 1, 1, 30, 0, 0, P64, "768 x 1024 x 1024"},
        {768, 1024, 2048, 1, 0, 1, 1, 30, 1, 0, P64, "768 x 1024 x 2048"},
        {1000, 1000, 8000, 1, 0, 1, 1, 30, 1, 0, DSMEM, "1000 x 1000 x 8000: k > 2048"},
        {128, 4096, 4096, 1, 0, 1, 1, 30, 1, 0, DSMEM, "128 x 4096 x 4096"},
        {256, 4096, 4096, 1, 0, 1, 1, 30, 1, 0, DSMEM, "256 x 4096 x 4096"},
        {1024, 2048, 4096, 1, 0, 1, 1, 30, 0, 0, P128, "1024 x 2048 x 4096"},
        /* operands whose rows TMA cannot read in place are packed onto the lines */
        {1537, 3001, 2049, 1, 1, 1, 1, 30, 0, 0, P128, "1537 x 3001 x 2049: 312 tiles in 3 rounds"},
        {2048, 2048, 2048, 1, 0, 1, 1, 30, 0, 0, TABLE, "2048^3: 128 x 256 fills its round"},
        {4096, 4096, 4096, 1, 0, 1, 1, 30, 0, 0, TABLE, "4096^3"},
        {4095, 4095, 4095, 1, 1, 1, 1, 30, 0, 0, TABLE, "4095^3"},
        /* one of the device's answers changed */
        {640, 1024, 1000, 0, 0, 1, 1, 0, 0, 0, P64, "640 x 1024 x 1000, no clusters of four"},
        {768, 1024, 1000, 0, 0, 1, 1, 0, 0, 0, MC2, "768 x 1024 x 1000, no clusters of four"},
        {768, 1024, 1000, 0, 0, 1, 1, 23, 0, 0, MC2, "768 x 1024 x 1000, 23 clusters of four"},
        {768, 1024, 1000, 0, 0, 1, 1, 24, 0, 0, MC4, "768 x 1024 x 1000, exactly 24 of four"},
        {1000, 1000, 1000, 0, 0, 1, 0, 30, 0, 0, P64, "1000^3 without pairs"},
        {1000, 1000, 1000, 0, 1, 1, 1, 30, 0, 0, P64, "1000^3 with a C off 16 bytes"},
        {640, 1024, 1000, 0, 1, 1, 1, 30, 0, 0, P64, "640 x 1024 x 1000 with a C off 16 bytes"},
        {1000, 1000, 1000, 0, 0, 0, 1, 30, 0, 0, P128, "1000^3 without the 64-row kernels"},
        {128, 1024, 1000, 0, 0, 1, 1, 30, 0, 0, P64, "128 x 1024 x 1000: 16 tiles, too few for fours"},
        {64, 4096, 4096, 1, 0, 1, 1, 30, 0, 1, TABLE, "m = 64: split-K plan, left to the table"},
        {64, 4096, 4096, 1, 0, 1, 1, 30, 1, 1, DSMEM, "m = 64 with the cluster split"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const pick_case_t *c = &cases[i];
        const cuops_sm90_small_pick_t got = pick(c, 132);
        CHECK(got == c->want, "%s (%lldx%lldx%lld): %s, expected %s", c->why, (long long)c->m,
              (long long)c->n, (long long)c->k, pick_name(got), pick_name(c->want));
    }
    const pick_case_t any = {1000, 1000, 1000, 0, 0, 1, 1, 30, 0, 0, TABLE, ""};
    CHECK(pick(&any, 0) == CUOPS_SM90_PICK_TABLE, "no SMs: the table");
    pick_case_t empty = any;
    empty.k = 0;
    CHECK(pick(&empty, 132) == CUOPS_SM90_PICK_TABLE, "k = 0: the table");
}

/* A device under 4 TB/s of DRAM bandwidth (an H100's 3352 GB/s) lets the
 * clusters of four serve rows off the lines up to k = 4096 (P236 call 3 on
 * an H100: 768 x 1024 x 2000 12.0 us against the plain tile's 14.8, x 4000
 * 17.2 against 21.7); an H200's 4814-4916 GB/s, or an unknown 0, keeps
 * k <= 1024; past k = 3072 the slow device's range needs >= 64 tiles; every
 * other guard of the clusters of four holds at any speed. */
static void test_slow_dram(void)
{
    static const struct { int64_t m, n, k, gbps; cuops_sm90_small_pick_t want; const char *why; } cases[] = {
        {768, 1024, 2000, 3352, MC4, "768 x 1024 x 2000 on an H100"},
        {768, 1024, 4000, 3352, MC4, "768 x 1024 x 4000 on an H100"},
        {768, 1024, 4096, 3352, MC4, "k = 4096, the end of the range"},
        {768, 1024, 4100, 3352, P64, "k = 4100: past the range measured"},
        {640, 1024, 2000, 3352, MC4, "640 x 1024 x 2000 on an H100"},
        {768, 1024, 2000, 4916, P64, "768 x 1024 x 2000 on an H200 (P198)"},
        {768, 1024, 2000, 4814, P64, "768 x 1024 x 2000 on an H200 of 6016 bits"},
        {768, 1024, 2000, 0, P64, "768 x 1024 x 2000, bandwidth unknown"},
        {768, 1024, 4000, 4916, P64, "768 x 1024 x 4000 on an H200"},
        {768, 1024, 1000, 3352, MC4, "768 x 1024 x 1000: k <= 1024 either way"},
        {896, 1024, 2000, 3352, P64, "896 x 1024 x 2000: 32 clusters of four do not fit"},
        {1000, 1000, 2000, 3352, MC2, "1000 x 1000 x 2000: 32 clusters of four, the pairs"},
        {128, 1024, 2000, 3352, P64, "128 x 1024 x 2000: 16 tiles, too few for fours"},
        {256, 1024, 2000, 3352, MC4, "256 x 1024 x 2000: 32 tiles at k <= 3072"},
        {256, 1024, 3072, 3352, MC4, "256 x 1024 x 3072: 32 tiles, the end of their range"},
        {448, 1024, 3000, 3352, MC4, "448 x 1024 x 3000: 56 tiles at k <= 3072"},
        {512, 1024, 4000, 3352, MC4, "512 x 1024 x 4000: 64 tiles past k = 3072"},
        {256, 2048, 4000, 3352, MC4, "256 x 2048 x 4000: 64 tiles past k = 3072"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const cuops_sm90_small_call_t call = {cases[i].m, cases[i].n, cases[i].k, 132, 0, 0, 1, 1,
                                              30, 0, 0, cases[i].gbps};
        const cuops_sm90_small_pick_t got = cuops_sm90_small_grid_pick(&call);
        CHECK(got == cases[i].want, "%s (%lldx%lldx%lld, %lld GB/s): %s, expected %s", cases[i].why,
              (long long)cases[i].m, (long long)cases[i].n, (long long)cases[i].k,
              (long long)cases[i].gbps, pick_name(got), pick_name(cases[i].want));
    }
    /* past k = 3072 with fewer than 64 tiles the split-K cluster form
     * keeps the call where it splits (P237: 256 x 1024 x 4000 16.0 us
     * against the fours' 17.0), as it does on a fast device */
    static const int64_t few[3][4] = {{256, 1024, 4000, 3352}, {384, 1024, 4000, 3352}, {256, 1024, 4000, 4916}};
    for (int i = 0; i < 3; i++) {
        const cuops_sm90_small_call_t call = {few[i][0], few[i][1], few[i][2], 132, 0, 0, 1, 1, 30, 1, 1, few[i][3]};
        const cuops_sm90_small_pick_t got = cuops_sm90_small_grid_pick(&call);
        CHECK(got == DSMEM, "%lldx%lldx%lld at %lld GB/s, the split planned: %s, expected the split",
              (long long)few[i][0], (long long)few[i][1], (long long)few[i][2], (long long)few[i][3],
              pick_name(got));
    }
    /* the other guards at the slow speed: rows on the lines, a C off 16
     * bytes, no room for the clusters */
    cuops_sm90_small_call_t c = {768, 1024, 2000, 132, 1, 0, 1, 1, 30, 0, 0, 3352};
    CHECK(cuops_sm90_small_grid_pick(&c) != MC4, "rows on the lines took clusters of four");
    c.lines = 0;
    c.c_shifted = 1;
    CHECK(cuops_sm90_small_grid_pick(&c) != MC4, "a C off 16 bytes took clusters of four");
    c.c_shifted = 0;
    c.mc4_clusters = 23;
    CHECK(cuops_sm90_small_grid_pick(&c) != MC4, "24 clusters of four where 23 fit");
}

/* Over shapes and device answers: a 64-row pick needs the 64-row kernels,
 * m > 64 and 128 x 128 tiles on at most half of the SMs; the multicast
 * picks need rows off the lines and C in place, the pairs a device that
 * holds them, clusters of four k <= 1024, >= 32 tiles and room for all of
 * their clusters; the cluster split only where its plan splits; and nothing
 * but the table for m <= 64 unless the cluster split serves it. */
static void test_sweep(void)
{
    static const int64_t ms[] = {1, 64, 65, 128, 200, 256, 500, 640, 768, 896, 1000, 1024, 1500, 4096};
    static const int64_t ns[] = {8, 100, 512, 1000, 1024, 2048, 3001, 8192};
    static const int64_t ks[] = {64, 1000, 1024, 2000, 2048, 4000, 8000};
    static const int64_t sms_list[] = {78, 114, 132};
    int64_t bad = 0, seen[6] = {0, 0, 0, 0, 0, 0};
    for (size_t si = 0; si < sizeof sms_list / sizeof sms_list[0]; si++)
        for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
            for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
                for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                    for (int flags = 0; flags < 64; flags++) {
                        const int64_t sms = sms_list[si], m = ms[mi], n = ns[ni], k = ks[ki];
                        pick_case_t c = {m, n, k, flags & 1, (flags >> 1) & 1, (flags >> 2) & 1,
                                         (flags >> 3) & 1, (flags & 16) ? 30 : 0,
                                         (flags >> 5) & 1, 0, TABLE, ""};
                        const int64_t t128 = ((m + 127) / 128) * ((n + 127) / 128);
                        const int64_t t64 = ((m + 63) / 64) * ((n + 127) / 128);
                        const int64_t blocks4 = ((m + 255) / 256) * ((n + 127) / 128);
                        const cuops_sm90_small_pick_t p = pick(&c, sms);
                        const int is64 = p == P64 || p == MC2 || p == MC4;
                        int ok = 1;
                        if (is64) ok = ok && c.can_run64 && m > 64 && 2 * t128 <= sms;
                        if (p == MC2 || p == MC4) ok = ok && !c.lines && !c.c_shifted;
                        if (p == MC2) ok = ok && c.mc2_ok;
                        if (p == MC4) ok = ok && k <= 1024 && t64 >= 32 && blocks4 <= c.mc4_clusters;
                        if (p == DSMEM) ok = ok && c.dsmem128;
                        if (m <= 64) ok = ok && (p == TABLE || p == DSMEM);
                        seen[p]++;
                        if (!ok && bad++ < 5)
                            CHECK(0, "%lldx%lldx%lld on %lld SMs, flags %d: %s breaks a guard",
                                  (long long)m, (long long)n, (long long)k, (long long)sms, flags,
                                  pick_name(p));
                    }
    CHECK(bad == 0, "%lld calls broke a guard", (long long)bad);
    for (int p = 0; p < 6; p++)
        CHECK(seen[p] > 100, "the sweep met %s only %lld times",
              pick_name((cuops_sm90_small_pick_t)p), (long long)seen[p]);
}

int main(void)
{
    test_measured();
    test_slow_dram();
    test_sweep();
    return tu_finish("test_gemm_small_grid_pick");
}
