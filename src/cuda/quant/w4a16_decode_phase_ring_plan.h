/*
 * w4a16_decode_phase_ring_plan.h - how w4a16_decode_phase_ring
 * (w4a16_decode_phase_ring.cu) deals its work and where auto takes it:
 * plain C, so that the rules are tested on any machine
 * (tests/test_w4a16_phase_ring_plan.c).
 */
#ifndef CUOPS_W4A16_DECODE_PHASE_RING_PLAN_H
#define CUOPS_W4A16_DECODE_PHASE_RING_PLAN_H

#include <stdint.h>

#include "cuda/common/cluster_size.h"

#define W4A16_PHASE_RING_MAX_SPLITS CUOPS_CLUSTER_PORTABLE_SIZE
#define W4A16_PHASE_RING_PHASE_TILES 16 /* 64-k tiles per phase */
#define W4A16_PHASE_RING_QUAD_STRIPS 4  /* strips per stage (a quad) */
/* auto: m from which the ring serves (below, the bulk ring or the per-warp
 * kernel), strips per CTA that make an unsplit CTA worth it, and the k
 * (in 64-k tiles) up to which it serves whatever the strips */
#define W4A16_PHASE_RING_AUTO_MIN_M 5
#define W4A16_PHASE_RING_AUTO_MIN_STRIPS_PER_CTA 3
#define W4A16_PHASE_RING_AUTO_SHORT_KTILES 64

static inline int64_t w4a16_phase_ring_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The CTAs' work with K split over clusters of `splits` CTAs (1: no split):
 * strips per CTA (a cluster's CTAs share them), phases per CTA, and the
 * split count itself once no CTA of a cluster is left without a phase. A
 * split CTA makes one pass (the cluster's sums meet in its x slots), so its
 * strips are at most a pass's (`pass_strips`). */
typedef struct w4a16_phase_ring_plan {
    int64_t splits, strips_per_cta, phases_per_split, ctas;
} w4a16_phase_ring_plan_t;

static inline w4a16_phase_ring_plan_t w4a16_phase_ring_make_plan(int64_t strips, int64_t phases,
                                                                 int64_t sms, int64_t splits,
                                                                 int64_t pass_strips)
{
    w4a16_phase_ring_plan_t pl;
    if (splits > W4A16_PHASE_RING_MAX_SPLITS) splits = W4A16_PHASE_RING_MAX_SPLITS;
    if (splits > phases) splits = phases;
    if (splits < 1) splits = 1;
    pl.phases_per_split = w4a16_phase_ring_ceil_div(phases, splits);
    pl.splits = w4a16_phase_ring_ceil_div(phases, pl.phases_per_split);
    pl.strips_per_cta = w4a16_phase_ring_ceil_div(strips * pl.splits, sms);
    if (pl.splits > 1 && pl.strips_per_cta > pass_strips) pl.strips_per_cta = pass_strips;
    pl.ctas = w4a16_phase_ring_ceil_div(strips, pl.strips_per_cta) * pl.splits;
    return pl;
}

/* Auto's K split: 2 where the unsplit form would leave each CTA fewer than
 * W4A16_PHASE_RING_AUTO_MIN_STRIPS_PER_CTA strips over a long K (the calls
 * auto gave to w4a16_decode_warp), at m > 8 (two x fragments: the per-warp
 * kernel's cost grows with m, the ring's hardly), when the clusters fill the
 * SMs at most once; `pass_strips` is the m > 8 form's pass (8). Measured
 * (H200, f16, P146-P147, docs/w4a16.md Change 9): m = 16 at 4096 x 14336
 * 19.7 us against 21.0 for w4a16_decode_warp (24.8 unsplit), at 2048 x 8192
 * 12.4 against 14.5; at m = 5 and 8 (4096 x 14336) 1-3 % behind
 * w4a16_decode_warp; splits of 3 and 4 took 29-35 us (clusters of 3 or 4
 * CTAs of ~200 KB each, probably not all resident at once: not checked).
 * 1 elsewhere. */
static inline int64_t w4a16_phase_ring_auto_splits(int64_t m, int64_t strips, int64_t ktiles,
                                                   int64_t sms, int64_t pass_strips)
{
    if (m <= 8 || m > 16 ||
        w4a16_phase_ring_ceil_div(strips, sms) >= W4A16_PHASE_RING_AUTO_MIN_STRIPS_PER_CTA ||
        ktiles <= W4A16_PHASE_RING_AUTO_SHORT_KTILES)
        return 1;
    const w4a16_phase_ring_plan_t pl = w4a16_phase_ring_make_plan(
        strips, w4a16_phase_ring_ceil_div(ktiles, W4A16_PHASE_RING_PHASE_TILES), sms, 2, pass_strips);
    return pl.splits == 2 && pl.ctas <= sms ? 2 : 1;
}

/* Whether auto takes the ring for a call it serves (5 <= m <= 16; for
 * m <= 8 after the bulk ring's own rule): each CTA gets at least 3 strips,
 * or k is at most one 4096-k stretch of phases, or the K split above
 * applies. Measured (H200, f16, docs/w4a16.md Change 7): at m = 16 1.22x /
 * 1.17x / 1.23x w4a16_decode_warp at 4096^2 (2 strips per CTA, k = 4096),
 * 14336 x 4096 (7) and 28672 x 8192 (14); 0.89x at 4096 x 14336 unsplit
 * (2 strips per CTA: 16 KB stages, half of the math warps idle, 14 phases);
 * at m = 5..8 1.00-1.16x on the three shapes it takes; at m <= 3
 * 0.97-0.99x, m = 4 level. */
static inline int w4a16_phase_ring_auto_takes(int64_t m, int64_t strips, int64_t ktiles,
                                              int64_t sms, int64_t pass_strips)
{
    if (m < W4A16_PHASE_RING_AUTO_MIN_M || m > 16) return 0;
    return w4a16_phase_ring_ceil_div(strips, sms) >= W4A16_PHASE_RING_AUTO_MIN_STRIPS_PER_CTA ||
           ktiles <= W4A16_PHASE_RING_AUTO_SHORT_KTILES ||
           w4a16_phase_ring_auto_splits(m, strips, ktiles, sms, pass_strips) > 1;
}

/* The quads per pass of the kernel instance that runs a plan of a form
 * whose pass is `form_quads` quads (16 math warps: 4 at m <= 8, 2 at m > 8;
 * 1 for the _q1 study form). Where every CTA's strips fit fewer quads, the
 * instance with the fewest that hold them in one pass (1, or 2 below a form
 * of 4): it makes the same single pass, the same sums in the same order, with
 * less of the quad loop unrolled. Measured (H200, docs/w4a16.md Change 12):
 * one quad 4-7 % faster at m = 9..16 on 2-4 strips per CTA (16 x 4096^2,
 * 16 x 4096 x 14336 split 2) and 2-3.5 % at m = 5..8 on 2; two quads
 * 0.5-1.5 % faster at m = 5..8 on 6-7 strips. */
static inline int w4a16_phase_ring_instance_quads(int form_quads, int64_t strips_per_cta)
{
    if (form_quads > 1 && strips_per_cta <= W4A16_PHASE_RING_QUAD_STRIPS) return 1;
    if (form_quads > 2 && strips_per_cta <= 2 * W4A16_PHASE_RING_QUAD_STRIPS) return 2;
    return form_quads;
}

#endif /* CUOPS_W4A16_DECODE_PHASE_RING_PLAN_H */
