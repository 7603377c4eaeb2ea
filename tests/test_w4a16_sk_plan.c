/*
 * test_w4a16_sk_plan.c - how the stream-K form of the W4A16 decode kernel
 * (w4a16_decode_wgmma_sk) deals its units over the CTAs
 * (w4a16_decode_sk_plan.h), on the CPU: over a sweep of block counts,
 * 64-k blocks and SM counts, walking every CTA's range piece by piece as the
 * kernel does, each unit is run exactly once, every CTA gets the same count
 * to one, a block's pieces are numbered 0.. in k order with the count the
 * kernel sums over, a cut block's pieces have slots no other piece of the
 * call has (inside the 2 x CTAs the host allocates) and one counter, the
 * first CTA's; and the shapes measured get the deal docs/w4a16.md names.
 */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include "../src/cuda/quant/w4a16_decode_sk_plan.h"

/* Walks the plan for one call; returns the number of broken rules (the
 * first few reported) and counts the cut blocks. */
static int64_t check_plan(int64_t blocks, int ktiles, int sms, int64_t *cut_blocks)
{
    const int64_t units = blocks * ktiles;
    const int64_t ctas = w4s_ctas(units, sms);
    int64_t bad = 0;
    unsigned char *seen = (unsigned char *)calloc((size_t)units, 1);
    unsigned char *slot_used = (unsigned char *)calloc((size_t)(2 * ctas), 1);
    int *block_pieces = (int *)calloc((size_t)blocks, sizeof(int));   /* pieces met */
    int *block_expect = (int *)calloc((size_t)blocks, sizeof(int));   /* pieces claimed */
    int *block_next_k = (int *)calloc((size_t)blocks, sizeof(int));   /* k order */
    int64_t *block_counter = (int64_t *)malloc((size_t)blocks * sizeof(int64_t));
    if (!seen || !slot_used || !block_pieces || !block_expect || !block_next_k || !block_counter) {
        CHECK(0, "allocation");
        return 1;
    }
    const int64_t lo = units / ctas, hi = (units + ctas - 1) / ctas;
#define RULE(cond, ...)                                                                       \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            if (bad++ < 3) CHECK(0, __VA_ARGS__);                                             \
        }                                                                                     \
    } while (0)
    for (int64_t c = 0; c < ctas; c++) {
        const int64_t u0 = w4s_unit_begin(c, units, ctas), u1 = w4s_unit_begin(c + 1, units, ctas);
        RULE(u1 - u0 >= lo && u1 - u0 <= hi && u1 > u0,
             "blocks %lld ktiles %d sms %d: CTA %lld gets %lld units (%lld..%lld)",
             (long long)blocks, ktiles, sms, (long long)c, (long long)(u1 - u0), (long long)lo,
             (long long)hi);
        for (int64_t u = u0; u < u1;) {
            const w4s_piece_t pc = w4s_piece_at(u, u1, ktiles, units, ctas);
            RULE(pc.block >= 0 && pc.block < blocks && pc.k0 >= 0 && pc.k1 > pc.k0 &&
                     pc.k1 <= ktiles && pc.block * ktiles + pc.k0 == u,
                 "blocks %lld ktiles %d sms %d: piece at unit %lld is block %lld k [%d, %d)",
                 (long long)blocks, ktiles, sms, (long long)u, (long long)pc.block, pc.k0, pc.k1);
            if (bad) break;
            for (int64_t v = u; v < u + (pc.k1 - pc.k0); v++) seen[v]++;
            const int64_t b = pc.block;
            RULE(block_next_k[b] == pc.k0 && pc.q == block_pieces[b],
                 "blocks %lld ktiles %d sms %d: block %lld piece q %d at k %d, expected q %d at %d",
                 (long long)blocks, ktiles, sms, (long long)b, pc.q, pc.k0, block_pieces[b],
                 block_next_k[b]);
            if (block_pieces[b] == 0) {
                block_expect[b] = pc.pieces;
                block_counter[b] = pc.counter;
            }
            RULE(pc.pieces == block_expect[b] && pc.counter == block_counter[b] && pc.pieces >= 1,
                 "blocks %lld ktiles %d sms %d: block %lld's pieces disagree on their count or "
                 "counter", (long long)blocks, ktiles, sms, (long long)b);
            block_pieces[b]++;
            block_next_k[b] = pc.k1;
            if (pc.pieces > 1) {
                RULE(pc.slot >= 0 && pc.slot < 2 * ctas && !slot_used[pc.slot],
                     "blocks %lld ktiles %d sms %d: slot %d of block %lld piece %d reused or out "
                     "of range", (long long)blocks, ktiles, sms, pc.slot, (long long)b, pc.q);
                if (pc.slot >= 0 && pc.slot < 2 * ctas) slot_used[pc.slot] = 1;
                /* the kernel finds piece q's slot from the counter's CTA */
                const int want = pc.q == 0 ? 2 * pc.counter + 1 : 2 * (pc.counter + pc.q);
                RULE(pc.slot == want, "slot %d, the summer looks in %d", pc.slot, want);
                RULE(pc.counter >= 0 && pc.counter < ctas, "counter %d of %lld CTAs", pc.counter,
                     (long long)ctas);
            }
            u += pc.k1 - pc.k0;
        }
    }
    for (int64_t v = 0; v < units; v++)
        RULE(seen[v] == 1, "blocks %lld ktiles %d sms %d: unit %lld run %d times",
             (long long)blocks, ktiles, sms, (long long)v, seen[v]);
    /* counters: one per cut block, and no two cut blocks share one */
    unsigned char *counter_used = (unsigned char *)calloc((size_t)ctas, 1);
    for (int64_t b = 0; b < blocks && counter_used; b++) {
        RULE(block_pieces[b] == block_expect[b] && block_next_k[b] == ktiles,
             "blocks %lld ktiles %d sms %d: block %lld got %d of %d pieces, k to %d",
             (long long)blocks, ktiles, sms, (long long)b, block_pieces[b], block_expect[b],
             block_next_k[b]);
        if (block_expect[b] > 1) {
            (*cut_blocks)++;
            RULE(!counter_used[block_counter[b]], "counter %lld shared", (long long)block_counter[b]);
            counter_used[block_counter[b]] = 1;
        }
    }
#undef RULE
    free(counter_used);
    free(seen);
    free(slot_used);
    free(block_pieces);
    free(block_expect);
    free(block_next_k);
    free(block_counter);
    return bad;
}

static void test_sweep(void)
{
    static const int sms_list[] = {1, 2, 7, 78, 132, 144};
    static const int ktiles_list[] = {1, 2, 3, 4, 7, 64, 128, 224};
    int64_t bad = 0, cut = 0;
    for (size_t si = 0; si < sizeof sms_list / sizeof sms_list[0]; si++)
        for (size_t ki = 0; ki < sizeof ktiles_list / sizeof ktiles_list[0]; ki++)
            for (int64_t blocks = 1; blocks <= 400; blocks += blocks < 40 ? 1 : 7)
                bad += check_plan(blocks, ktiles_list[ki], sms_list[si], &cut);
    CHECK(bad == 0, "%lld rules broken", (long long)bad);
    CHECK(cut > 10000, "the sweep cut only %lld blocks", (long long)cut);
}

static void test_named_shapes(void)
{
    /* 64 x 28672 x 8192 with 192-row blocks on 132 SMs: 150 blocks (the last
     * 64 rows past n), 128 64-k blocks: 19200 units, 145 or 146 per CTA */
    const int64_t units = 150 * 128;
    CHECK(w4s_ctas(units, 132) == 132, "one CTA per SM");
    const int64_t per = w4s_unit_begin(1, units, 132) - w4s_unit_begin(0, units, 132);
    CHECK(per == 145 || per == 146, "28672 x 8192: %lld units on CTA 0", (long long)per);
    /* CTA 0: block 0 whole (pieces 1, stored from the registers), then the
     * first 17 k-blocks of block 1, which CTA 1 ends */
    const w4s_piece_t a = w4s_piece_at(0, per, 128, units, 132);
    CHECK(a.block == 0 && a.k0 == 0 && a.k1 == 128 && a.pieces == 1, "CTA 0's first piece");
    const w4s_piece_t b = w4s_piece_at(128, per, 128, units, 132);
    CHECK(b.block == 1 && b.k0 == 0 && b.k1 == per - 128 && b.pieces == 2 && b.q == 0 &&
              b.slot == 1 && b.counter == 0,
          "CTA 0's second piece: block %lld k [%d, %d), %d of %d, slot %d", (long long)b.block,
          b.k0, b.k1, b.q, b.pieces, b.slot);
    /* the 256-row form at 28672 x 8192: 112 blocks, 14336 units, 108 or 109
     * per CTA: at most two pieces each */
    const int64_t u256 = 112 * 128;
    for (int64_t c = 0; c < 132; c++) {
        const int64_t u0 = w4s_unit_begin(c, u256, 132), u1 = w4s_unit_begin(c + 1, u256, 132);
        const w4s_piece_t f = w4s_piece_at(u0, u1, 128, u256, 132);
        const int64_t u = u0 + (f.k1 - f.k0);
        const int two = u < u1 && w4s_piece_at(u, u1, 128, u256, 132).k1 - 0 == (int)(u1 - u);
        CHECK((u1 - u0 == 108 || u1 - u0 == 109) && (u >= u1 || two),
              "256-row CTA %lld: %lld units, a second piece that ends the range", (long long)c,
              (long long)(u1 - u0));
    }
    /* few units: one CTA each, every block cut into ktiles pieces */
    CHECK(w4s_ctas(6, 132) == 6, "6 units, 6 CTAs");
    const w4s_piece_t c = w4s_piece_at(4, 5, 3, 6, 6);
    CHECK(c.block == 1 && c.k0 == 1 && c.k1 == 2 && c.q == 1 && c.pieces == 3 && c.slot == 8 &&
              c.counter == 3,
          "unit 4 of 2 x 3: block %lld k [%d, %d) piece %d of %d slot %d counter %d",
          (long long)c.block, c.k0, c.k1, c.q, c.pieces, c.slot, c.counter);
}

int main(void)
{
    test_named_shapes();
    test_sweep();
    return tu_finish("test_w4a16_sk_plan");
}
