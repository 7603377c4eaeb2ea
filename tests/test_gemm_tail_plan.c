/*
 * test_gemm_tail_plan.c - the split-tail plan of the sm90 plain GEMM kernels
 * (gemm_tuning.h, cuops_sm90_tail_splits), on the CPU: into how many pieces
 * (0, 2 or 3) the tiles of a partial last round are split along K, at the
 * shapes measured on the H200 (docs/gemm.md, "The split tail"), at the edges
 * of its ranges on 132 SMs worked out by hand, and over a sweep of tile
 * counts, k-blocks and SM counts against the rule it implements: the fewest
 * pieces' time for that round, ceil(L S / #SMs) / S of a tile (L = tiles mod
 * #SMs), among S = 2 and 3 with >= 4 k-blocks a piece, 2 on a tie, none
 * unless under a whole tile.
 */
#include "test_util.h"

#include "cuda/gemm/gemm_tuning.h"

typedef struct tail_case {
    int64_t tiles, k_blocks, sms;
    int splits;
    const char *why;
} tail_case_t;

static void test_named(void)
{
    static const tail_case_t cases[] = {
        {312, 33, 132, 2, "1537 x 3001 x 2049, 128 x 128 tiles: 2 rounds + 48"},
        {156, 33, 132, 3, "1537 x 3001 x 2049, 128 x 256 tiles: 1 round + 24"},
        {2048, 128, 132, 3, "8192^3 and 8192 x 8192 x 28672 (k-blocks 448 there): 15 + 68"},
        {2048, 448, 132, 3, "8192 x 8192 x 28672: 15 + 68"},
        {7168, 128, 132, 3, "8192 x 28672 x 8192: 54 + 40"},
        {8192, 256, 132, 3, "16384^3: 62 + 8"},
        {512, 64, 132, 0, "4095^3: 3 + 116, nothing under a whole tile"},
        /* the packer-CTA entries plan on the CTAs that run tiles (132 - 16,
         * 132 - 8), so at 4095^3 they split where the base kernel does not
         * (test_gpu_gemm_sm90 compares their bits with split_k = 1) */
        {512, 64, 116, 2, "4095^3 on 116 GEMM CTAs (_pack_ctas): 4 rounds + 48"},
        {512, 64, 124, 3, "4095^3 on 124 GEMM CTAs (_pack_ctas8): 4 rounds + 16"},
        {2112, 65, 132, 0, "8191 x 8193 x 4097: 16 rounds exactly"},
        {32, 16, 132, 0, "1024^3: one round"},
        {132, 64, 132, 0, "one full round"},
        /* the ranges on 132 SMs (tiles = 132 + L) */
        {133, 64, 132, 3, "L = 1: thirds"},
        {176, 64, 132, 3, "L = 44: 132 pieces, thirds"},
        {177, 64, 132, 2, "L = 45: halves (thirds would need two rounds of pieces)"},
        {198, 64, 132, 2, "L = 66: 132 halves"},
        {199, 64, 132, 3, "L = 67: 201 thirds, two of them on some CTAs: 2/3"},
        {220, 64, 132, 3, "L = 88: 264 thirds, 2/3"},
        {221, 64, 132, 0, "L = 89: 267 thirds would take 3 rounds"},
        {263, 64, 132, 0, "L = 131"},
        /* k-blocks per piece */
        {142, 12, 132, 3, "L = 10, 12 k-blocks: thirds of 4"},
        {142, 11, 132, 2, "L = 10, 11 k-blocks: halves"},
        {142, 8, 132, 2, "L = 10, 8 k-blocks: halves of 4"},
        {142, 7, 132, 0, "L = 10, 7 k-blocks: too short to split"},
        {202, 11, 132, 0, "L = 70, 11 k-blocks: halves would take a whole tile"},
        /* other devices and the limits */
        {2048, 128, 114, 0, "114 SMs: 17 rounds + 110"},
        {982, 64, 114, 3, "114 SMs: 8 rounds + 70 (210 thirds, 2/3)"},
        {1000, 64, 114, 0, "114 SMs: 8 rounds + 88 (thirds would take 3 rounds, halves 2)"},
        {1324, 64, 1024, 3, "1024 SMs: 1 round + 300"},
        {1325, 64, 1025, 0, "more than 1024 SMs: no counters for them"},
        {100, 64, 0, 0, "no SMs"},
        {(int64_t)0x7fffffff - 10, 64, 132, 0, "L = 57 (halves), but the units would pass 2^31 - 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const tail_case_t *c = &cases[i];
        const int s = cuops_sm90_tail_splits(c->tiles, c->k_blocks, c->sms);
        CHECK(s == c->splits, "%s (%lld tiles, %lld k-blocks, %lld SMs): %d pieces, expected %d",
              c->why, (long long)c->tiles, (long long)c->k_blocks, (long long)c->sms, s, c->splits);
    }
}

/* The tail round's time in pieces for S pieces per tile, as a fraction of a
 * tile: ceil(L S / sms) / S, compared exactly as numerator x other's S. */
static int64_t rounds_of(int64_t last, int64_t s, int64_t sms) { return (last * s + sms - 1) / sms; }

static void test_sweep(void)
{
    static const int64_t sms_list[] = {1, 2, 7, 66, 78, 114, 132, 144, 1024};
    int64_t bad = 0, seen[4] = {0, 0, 0, 0};
    for (size_t si = 0; si < sizeof sms_list / sizeof sms_list[0]; si++)
        for (int64_t tiles = 1; tiles <= 3000; tiles += 1)
            for (int64_t kb = 1; kb <= 16; kb += 3) {
                const int64_t sms = sms_list[si];
                const int s = cuops_sm90_tail_splits(tiles, kb, sms);
                const int64_t last = tiles > sms ? tiles % sms : 0;
                /* the best allowed S: time r(S) / S under a whole tile, 2 on a tie */
                int best = 0;
                for (int cand = 2; cand <= 3; cand++) {
                    if (last == 0 || kb < 4 * cand) continue;
                    const int64_t r = rounds_of(last, cand, sms);
                    if (r >= cand) continue; /* a whole tile or more */
                    if (best == 0 || r * best < rounds_of(last, best, sms) * cand) best = cand;
                }
                int ok = s == best;
                if (s > 0) ok = ok && kb >= 4 * s && last > 0;
                seen[s]++;
                if (!ok && bad++ < 5)
                    CHECK(0, "%lld tiles, %lld k-blocks, %lld SMs: %d pieces, the rule says %d",
                          (long long)tiles, (long long)kb, (long long)sms, s, best);
            }
    CHECK(bad == 0, "%lld shapes broke the rule", (long long)bad);
    CHECK(seen[1] == 0, "one piece is never a plan");
    CHECK(seen[0] > 1000 && seen[2] > 1000 && seen[3] > 1000,
          "the sweep met no tail %lld times, halves %lld, thirds %lld", (long long)seen[0],
          (long long)seen[2], (long long)seen[3]);
}

int main(void)
{
    test_named();
    test_sweep();
    return tu_finish("test_gemm_tail_plan");
}
