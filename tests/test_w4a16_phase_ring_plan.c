/*
 * test_w4a16_phase_ring_plan.c - how w4a16_decode_phase_ring deals its work
 * and where auto takes it (w4a16_decode_phase_ring_plan.h), on the CPU: the
 * decode shapes measured on the H200 get the plan docs/w4a16.md (Change 9)
 * names, and over a sweep of strips, phases, SMs and splits every CTA of a
 * cluster gets at least one phase, every strip a CTA, a split CTA at most
 * one pass, and auto splits only where its rule says and the clusters fill
 * the SMs at most once; and which kernel instance (quads per pass) runs a
 * plan.
 */
#include "test_util.h"

#include "../src/cuda/quant/w4a16_decode_phase_ring_plan.h"

#define PASS_M16 8 /* strips of a pass in the auto form at m > 8 */

static int64_t strips_of(int64_t n) { return (n + 15) / 16; }
static int64_t ktiles_of(int64_t k) { return (k + 63) / 64; }

typedef struct named_case {
    int64_t m, n, k;
    int takes;           /* auto takes the ring */
    int64_t splits;      /* auto's split */
    int64_t per_cta, ctas; /* its plan (when taken) */
    const char *why;
} named_case_t;

static void test_named_shapes(void)
{
    static const named_case_t cases[] = {
        {16, 4096, 14336, 1, 2, 4, 128, "16 x 4096 x 14336: split 2, 4 strips over 7 phases (P147 19.7 us)"},
        {9, 4096, 14336, 1, 2, 4, 128, "9 x 4096 x 14336: the m > 8 form splits too"},
        {16, 2048, 8192, 1, 2, 2, 128, "16 x 2048 x 8192: split 2 (P147 12.4 us)"},
        {8, 4096, 14336, 0, 1, 0, 0, "8 x 4096 x 14336: m <= 8 stays on the per-warp kernel"},
        {5, 4096, 14336, 0, 1, 0, 0, "5 x 4096 x 14336"},
        {16, 4096, 4096, 1, 1, 2, 128, "16 x 4096^2: k <= 4096, unsplit"},
        {16, 14336, 4096, 1, 1, 7, 128, "16 x 14336 x 4096: 7 strips per CTA, unsplit"},
        {16, 28672, 8192, 1, 1, 14, 128, "16 x 28672 x 8192: 14 strips per CTA, unsplit"},
        {4, 28672, 8192, 0, 1, 0, 0, "m = 4: not the ring's"},
        {17, 4096, 14336, 0, 1, 0, 0, "m = 17: not the ring's"},
        {16, 256, 8192, 1, 2, 1, 32, "16 x 256 x 8192: 16 clusters of 2, one strip and 4 phases each"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const named_case_t *c = &cases[i];
        const int64_t strips = strips_of(c->n), kt = ktiles_of(c->k);
        const int takes = w4a16_phase_ring_auto_takes(c->m, strips, kt, 132, PASS_M16);
        const int64_t s = w4a16_phase_ring_auto_splits(c->m, strips, kt, 132, PASS_M16);
        CHECK(takes == c->takes, "%s: auto takes %d, expected %d", c->why, takes, c->takes);
        CHECK(s == c->splits, "%s: split %lld, expected %lld", c->why, (long long)s,
              (long long)c->splits);
        if (!c->takes) continue;
        const w4a16_phase_ring_plan_t pl = w4a16_phase_ring_make_plan(
            strips, (kt + W4A16_PHASE_RING_PHASE_TILES - 1) / W4A16_PHASE_RING_PHASE_TILES, 132, s,
            PASS_M16);
        CHECK(pl.splits == c->splits && pl.strips_per_cta == c->per_cta && pl.ctas == c->ctas,
              "%s: plan %lld splits x %lld strips per CTA, %lld CTAs; expected %lld x %lld, %lld",
              c->why, (long long)pl.splits, (long long)pl.strips_per_cta, (long long)pl.ctas,
              (long long)c->splits, (long long)c->per_cta, (long long)c->ctas);
    }
}

/* Forced splits: clamped to the cluster size and the phases; none empty. */
static void test_forced(void)
{
    static const int64_t cases[][5] = {
        /* strips, phases, splits asked -> splits, phases per split */
        {256, 2, 3, 2, 1},  {256, 1, 8, 1, 1},   {256, 16, 3, 3, 6},
        {256, 16, 5, 4, 4}, {256, 16, 8, 8, 2},  {256, 16, 100, 8, 2},
        {33, 16, 2, 2, 8},  {2250, 1, 2, 1, 1},  {532, 2, 2, 2, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const w4a16_phase_ring_plan_t pl =
            w4a16_phase_ring_make_plan(cases[i][0], cases[i][1], 132, cases[i][2], PASS_M16);
        CHECK(pl.splits == cases[i][3] && pl.phases_per_split == cases[i][4],
              "strips %lld, phases %lld, split %lld asked: %lld splits of %lld phases, expected "
              "%lld of %lld",
              (long long)cases[i][0], (long long)cases[i][1], (long long)cases[i][2],
              (long long)pl.splits, (long long)pl.phases_per_split, (long long)cases[i][3],
              (long long)cases[i][4]);
    }
    /* 532 strips split 2: 9 per CTA asked, a pass (8) given; more CTAs than SMs */
    const w4a16_phase_ring_plan_t pl = w4a16_phase_ring_make_plan(532, 2, 132, 2, PASS_M16);
    CHECK(pl.strips_per_cta == 8 && pl.ctas == 134, "532 strips split 2: %lld per CTA, %lld CTAs",
          (long long)pl.strips_per_cta, (long long)pl.ctas);
}

static void test_sweep(void)
{
    static const int64_t sms_list[] = {1, 16, 78, 114, 132, 144};
    int64_t bad = 0, split_auto = 0, plans = 0;
    for (size_t si = 0; si < sizeof sms_list / sizeof sms_list[0]; si++)
        for (int64_t strips = 1; strips <= 2400; strips += 11)
            for (int64_t phases = 1; phases <= 40; phases += 3)
                for (int64_t asked = 1; asked <= 9; asked++) {
                    const int64_t sms = sms_list[si];
                    const w4a16_phase_ring_plan_t pl =
                        w4a16_phase_ring_make_plan(strips, phases, sms, asked, PASS_M16);
                    plans++;
                    int ok = pl.splits >= 1 && pl.splits <= W4A16_PHASE_RING_MAX_SPLITS &&
                             pl.splits <= asked && pl.splits <= phases;
                    /* every rank has a phase, and the ranks cover all of them */
                    ok = ok && (pl.splits - 1) * pl.phases_per_split < phases &&
                         pl.splits * pl.phases_per_split >= phases;
                    /* every strip has a CTA; a split CTA makes one pass */
                    ok = ok && pl.strips_per_cta >= 1 &&
                         (pl.ctas / pl.splits) * pl.strips_per_cta >= strips &&
                         (pl.ctas / pl.splits - 1) * pl.strips_per_cta < strips &&
                         (pl.splits == 1 || pl.strips_per_cta <= PASS_M16);
                    if (!ok && bad++ < 5)
                        CHECK(0, "strips %lld, phases %lld, sms %lld, split %lld: %lld x %lld "
                                 "strips, %lld phases each, %lld CTAs",
                              (long long)strips, (long long)phases, (long long)sms, (long long)asked,
                              (long long)pl.splits, (long long)pl.strips_per_cta,
                              (long long)pl.phases_per_split, (long long)pl.ctas);
                }
    /* auto's split: only at m > 8, few strips per CTA, k > 4096, one wave */
    for (size_t si = 0; si < sizeof sms_list / sizeof sms_list[0]; si++)
        for (int64_t m = 1; m <= 16; m++)
            for (int64_t strips = 1; strips <= 2400; strips += 13)
                for (int64_t kt = 1; kt <= 700; kt += 17) {
                    const int64_t sms = sms_list[si];
                    const int64_t s = w4a16_phase_ring_auto_splits(m, strips, kt, sms, PASS_M16);
                    int ok = s == 1 || s == 2;
                    if (s == 2) {
                        const w4a16_phase_ring_plan_t pl = w4a16_phase_ring_make_plan(
                            strips, (kt + W4A16_PHASE_RING_PHASE_TILES - 1) / W4A16_PHASE_RING_PHASE_TILES, sms, 2,
                            PASS_M16);
                        ok = ok && m > 8 && (strips + sms - 1) / sms < 3 && kt > 64 &&
                             pl.splits == 2 && pl.ctas <= sms &&
                             w4a16_phase_ring_auto_takes(m, strips, kt, sms, PASS_M16);
                        split_auto++;
                    }
                    if (!ok && bad++ < 10)
                        CHECK(0, "auto: m %lld, strips %lld, ktiles %lld, sms %lld: split %lld",
                              (long long)m, (long long)strips, (long long)kt, (long long)sms,
                              (long long)s);
                }
    CHECK(bad == 0, "%lld plans broke a rule", (long long)bad);
    CHECK(plans > 100000 && split_auto > 1000, "the sweep made %lld plans, %lld auto splits",
          (long long)plans, (long long)split_auto);
}

/* The kernel instance's quads per pass (w4a16_phase_ring_instance_quads):
 * the measured shapes of docs/w4a16.md Change 12 on 132 SMs, the edges at 4
 * and 8 strips per CTA, and a sweep: the instance never has more quads than
 * its form, makes one pass wherever the form does, with the fewest quads
 * (of 1, 2, 4) that do, and is the form's own where the form makes several
 * passes. */
static void test_instance_quads(void)
{
    typedef struct {
        int64_t m, n, k;
        int quads;
        const char *why;
    } icase_t;
    static const icase_t cases[] = {
        {16, 4096, 4096, 1, "16 x 4096^2: 2 strips per CTA, one quad (P204 11.4 -> 10.9 us)"},
        {16, 4096, 14336, 1, "16 x 4096 x 14336: split 2, 4 strips per CTA, one quad (19.7 -> 18.4)"},
        {16, 14336, 4096, 2, "16 x 14336 x 4096: 7 strips, the form's two quads"},
        {16, 28672, 8192, 2, "16 x 28672 x 8192: 14 strips, two passes of the form's two quads"},
        {8, 4096, 4096, 1, "8 x 4096^2: 2 strips, one quad (9.9 -> 9.7)"},
        {5, 14336, 4096, 2, "5 x 14336 x 4096: 7 strips, two quads (-0.7..-1 %)"},
        {6, 12288, 4096, 2, "6 x 12288 x 4096: 6 strips, two quads"},
        {8, 11008, 4096, 2, "8 x 11008 x 4096: 6 strips, two quads"},
        {8, 28672, 8192, 4, "8 x 28672 x 8192: 14 strips, the form's four quads"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const icase_t *c = &cases[i];
        const int64_t strips = strips_of(c->n), kt = ktiles_of(c->k);
        const int form = c->m > 8 ? 2 : 4;
        const int64_t s = w4a16_phase_ring_auto_splits(c->m, strips, kt, 132, PASS_M16);
        const w4a16_phase_ring_plan_t pl = w4a16_phase_ring_make_plan(
            strips, (kt + W4A16_PHASE_RING_PHASE_TILES - 1) / W4A16_PHASE_RING_PHASE_TILES, 132, s,
            4 * form);
        const int q = w4a16_phase_ring_instance_quads(form, pl.strips_per_cta);
        CHECK(q == c->quads, "%s: %d quads (%lld strips per CTA), expected %d", c->why, q,
              (long long)pl.strips_per_cta, c->quads);
    }
    static const int edges[][3] = {/* form, strips per CTA, quads */
                                   {2, 4, 1}, {2, 5, 2}, {4, 4, 1}, {4, 5, 2},
                                   {4, 8, 2}, {4, 9, 4}, {1, 1, 1}, {1, 40, 1}};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        const int q = w4a16_phase_ring_instance_quads(edges[i][0], edges[i][1]);
        CHECK(q == edges[i][2], "form of %d quads, %d strips per CTA: %d quads, expected %d",
              edges[i][0], edges[i][1], q, edges[i][2]);
    }
    static const int forms[] = {1, 2, 4};
    int64_t bad = 0, checked = 0;
    for (int fi = 0; fi < 3; fi++)
        for (int64_t st = 1; st <= 64; st++) {
            const int f = forms[fi];
            const int q = w4a16_phase_ring_instance_quads(f, st);
            const int64_t qs = W4A16_PHASE_RING_QUAD_STRIPS;
            int fewest = f;
            for (int c = 2; c >= 0; c--)
                if (forms[c] <= f && forms[c] * qs >= st) fewest = forms[c];
            const int ok = (q == 1 || q == 2 || q == 4) && q <= f &&
                           (st <= f * qs ? q == fewest && q * qs >= st : q == f);
            if (!ok && bad++ < 10)
                CHECK(0, "form of %d quads, %lld strips per CTA: %d quads", f, (long long)st, q);
            checked++;
        }
    CHECK(bad == 0 && checked == 192, "%lld of %lld instance picks broke a rule", (long long)bad,
          (long long)checked);
}

int main(void)
{
    test_named_shapes();
    test_forced();
    test_sweep();
    test_instance_quads();
    return tu_finish("test_w4a16_phase_ring_plan");
}
