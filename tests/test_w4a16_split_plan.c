/*
 * test_w4a16_split_plan.c - the plan that cuts the fused prefill kernel's
 * last, partly filled wave of tiles along k (w4a16_prefill_split.h), on the
 * CPU: the shapes measured on the H200 get the parts docs/w4a16.md names,
 * the forced forms (options.split_k) do what the API says, and over a sweep
 * of tile counts, SM counts and k no plan gives a CTA two parts, a part no
 * block, or cuts a wave that is 60 % full or more.
 */
#include "test_util.h"

#include "../src/cuda/quant/w4a16_prefill_split.h"

typedef struct plan_case {
    int num_tiles, sms, ktiles, forced;
    int parts, split_tiles; /* expected */
    const char *why;
} plan_case_t;

static void test_named_shapes(void)
{
    static const plan_case_t cases[] = {
        /* 128 x 256 tiles of the prefill suite on 132 SMs (64-k blocks) */
        {448, 132, 64, 0, 2, 52, "1024x14336x4096: 3 waves + 52 tiles (39 %)"},
        {3584, 132, 128, 0, 4, 20, "4096x28672x8192: 27 waves + 20 tiles, 4 parts at most"},
        {32, 132, 64, 0, 4, 32, "256x4096x4096: one wave of 32 tiles"},
        {128, 132, 64, 0, 1, 0, "1024x4096x4096: one wave 97 % full"},
        {896, 132, 128, 0, 1, 0, "1024x28672x8192: last wave 79 % full"},
        {1792, 132, 64, 0, 1, 0, "4096x14336x4096: 58 %, but only one part per CTA fits"},
        {512, 132, 64, 0, 1, 0, "4096x4096x4096: last wave 88 % full"},
        {264, 132, 64, 0, 1, 0, "whole waves"},
        /* the test's 1100 x 4352 x 960 call: 170 tiles, 15 blocks */
        {170, 132, 15, 0, 3, 38, "parts of at least 4 blocks: 3"},
        {170, 132, 15, 2, 2, 38, "forced 2"},
        {170, 132, 15, 4, 3, 38, "forced 4, one part per CTA: 3"},
        {170, 132, 15, 1, 1, 0, "forced off"},
        {1, 132, 2, 0, 1, 0, "2 blocks: no part of 4"},
        {1, 132, 2, 3, 2, 1, "forced 3, at most one part per block"},
        {128, 132, 64, 2, 1, 0, "forced, but 128 tiles leave no CTA for a second part"},
        {3100, 2048, 64, 0, 1, 0, "more tail tiles than the counters hold"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const plan_case_t *c = &cases[i];
        int tiles = -1;
        const int parts = w4a16_prefill_split_plan(c->num_tiles, c->sms, c->ktiles, c->forced, &tiles);
        CHECK(parts == c->parts && tiles == c->split_tiles,
              "%s (tiles %d, sms %d, ktiles %d, forced %d): %d parts of %d tiles, expected %d of %d",
              c->why, c->num_tiles, c->sms, c->ktiles, c->forced, parts, tiles, c->parts,
              c->split_tiles);
    }
}

static void test_sweep(void)
{
    static const int sms_list[] = {1, 2, 7, 108, 132, 144};
    static const int ktiles_list[] = {1, 2, 3, 4, 7, 15, 16, 64, 129};
    int64_t bad = 0, split = 0;
    for (size_t si = 0; si < sizeof sms_list / sizeof sms_list[0]; si++)
        for (size_t ki = 0; ki < sizeof ktiles_list / sizeof ktiles_list[0]; ki++)
            for (int num_tiles = 1; num_tiles <= 700; num_tiles++)
                for (int forced = 0; forced <= 5; forced++) {
                    const int sms = sms_list[si], ktiles = ktiles_list[ki];
                    int tiles = -1;
                    const int parts = w4a16_prefill_split_plan(num_tiles, sms, ktiles, forced, &tiles);
                    const int r = num_tiles < sms ? num_tiles : num_tiles % sms;
                    int ok;
                    if (parts == 1) {
                        ok = tiles == 0;
                    } else {
                        split++;
                        ok = parts >= 2 && parts <= W4A16_PREFILL_MAX_SPLIT_PARTS &&
                             tiles == r && (int64_t)tiles * parts <= sms && /* one part per CTA */
                             parts <= ktiles &&                            /* no empty part */
                             forced != 1 &&
                             (forced > 1 || (10 * r < 6 * sms && ktiles / parts >= 4)) &&
                             (forced == 0 || parts <= forced);
                    }
                    if (!ok && bad++ < 5)
                        CHECK(0, "tiles %d, sms %d, ktiles %d, forced %d: %d parts of %d tiles",
                              num_tiles, sms, ktiles, forced, parts, tiles);
                }
    CHECK(bad == 0, "%lld plans broke a rule", (long long)bad);
    CHECK(split > 1000, "the sweep split only %lld times", (long long)split);
}

int main(void)
{
    test_named_shapes();
    test_sweep();
    return tu_finish("test_w4a16_split_plan");
}
