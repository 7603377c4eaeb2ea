/*
 * w4a16_bulk_ring_form.h - whether auto takes w4a16_decode_bulk_ring for an
 * m <= 8 call, and in which form (w4a16_decode_bulk_ring.cu): plain C, so
 * that the choice is tested on any machine (tests/test_w4a16_bulk_ring_form.c).
 */
#ifndef CUOPS_W4A16_BULK_RING_FORM_H
#define CUOPS_W4A16_BULK_RING_FORM_H

#include <stdint.h>

enum { W4B_AUTO_NONE = 0, W4B_AUTO_PLAIN = 1, W4B_AUTO_XSUM = 2 };

#define W4B_AUTO_STRIPS_PER_SM 10
#define W4B_AUTO_MIN_STAGES 4
#define W4B_AUTO_XSUM_MAX_M 3
#define W4B_AUTO_XSUM_FEW_STRIPS_MAX_M 2
#define W4B_AUTO_XSUM_FEW_STRIPS_MIN_K 4096

/*
 * For a call the kernel serves: m rows of x, n weight rows (strips of 16),
 * k, `sms` SMs, and the ring stages each form has room for beside x in
 * shared memory (stages_plain, stages_xsum: the XSUM form also holds its x
 * sums). The rule was measured with rings of 4-6 stages, as many as fit,
 * and still asks for that room; since P208 the ring is shorter on some
 * calls (w4b_ring_stages below).
 * Measured (H200, docs/w4a16.md):
 *  - the plain form where each CTA gets >= W4B_AUTO_STRIPS_PER_SM strips and
 *    room for >= W4B_AUTO_MIN_STAGES stages: 14 strips per CTA (28672 x 8192)
 *    7-10 % faster than w4a16_decode_warp at m = 1, 2 and 4 (5, 5 and 4
 *    stages), 7 (14336 x 4096) 2-3 % slower, 2 (4096 rows) level (Change 6);
 *  - the XSUM form, where it keeps those stages (P203, Change 11), on those
 *    many strips for m <= 3: at 28672 x 8192 2-4 % faster than the plain form
 *    at m = 1 and 2, f16 2 % and bf16 level at m = 3, slower at m >= 4 (the x
 *    sums cost each CTA ~0.5 us before its first stage, paid back only where
 *    the math warps, not the start, hold the kernel);
 *  - and for m <= 2 on fewer strips, where k >= 4096, each CTA gets >= 2
 *    strips and the grid fills >= 31/32 of the SMs: 4-9 % faster than
 *    w4a16_decode_warp at 4096 x 4096, 14336 x 4096 and 4096 x 14336 (2, 7
 *    and 2 strips per CTA on 128 CTAs), 4 % slower at m = 4. Fewer strips, a
 *    shorter k and m = 3 there were not measured and stay with the per-warp
 *    kernel.
 * sms <= 0 counts as 132 (the H200's).
 */
static inline int w4b_auto_form(int64_t m, int64_t n, int64_t k, int64_t sms,
                                int64_t stages_plain, int64_t stages_xsum)
{
    if (sms <= 0) sms = 132;
    const int64_t strips = (n + 15) / 16;
    const int many = strips >= W4B_AUTO_STRIPS_PER_SM * sms;
    const int64_t per_cta = (strips + sms - 1) / sms;
    const int64_t ctas = (strips + per_cta - 1) / per_cta;
    const int few_ok = m <= W4B_AUTO_XSUM_FEW_STRIPS_MAX_M && k >= W4B_AUTO_XSUM_FEW_STRIPS_MIN_K &&
                       per_cta >= 2 && ctas * 32 >= sms * 31;
    if (((many && m <= W4B_AUTO_XSUM_MAX_M) || few_ok) && stages_xsum >= W4B_AUTO_MIN_STAGES)
        return W4B_AUTO_XSUM;
    if (many && stages_plain >= W4B_AUTO_MIN_STAGES) return W4B_AUTO_PLAIN;
    return W4B_AUTO_NONE;
}

/*
 * The ring's stages for a call: `room` is how many fit beside x, the CTA
 * holds strips_per_cta strips. Three (104 KB in flight per SM) at m = 1 and
 * wherever a CTA's stream is short (fewer than W4B_AUTO_STRIPS_PER_SM
 * strips); as many as fit, up to W4B_RING_MAX_STAGES, otherwise. Measured
 * (H200, P208, docs/w4a16.md Change 16): the stream runs at the same ~1.0
 * us per stage and SM either way once it runs, but a first round of 3
 * stages queues fewer bytes ahead of x and each CTA's first stage (at 1 x
 * 14336 x 4096 x reached shared memory 0.6 us and the first stage 0.4 us
 * sooner): 3 stages made m = 1 1.5-4.4 % faster at 14336 x 4096, 4096 x
 * 14336 and 28672 x 8192 (f16; bf16 0.4-2.6 %) and m = 2 at 14336 x 4096
 * 1.5-3.8 %, level at 4096^2; but m = 2 and 3 at 28672 x 8192 (14 strips
 * per CTA, 5 and 4 stages of room) 1.5-2.8 % slower (not explained), so
 * those keep the deeper ring. Two stages were slower than three at 4096 x
 * 14336.
 */
#define W4B_RING_SHORT_STAGES 3
#define W4B_RING_MAX_STAGES 6
static inline int64_t w4b_ring_stages(int64_t m, int64_t strips_per_cta, int64_t room)
{
    const int64_t want = m == 1 || strips_per_cta < W4B_AUTO_STRIPS_PER_SM ? W4B_RING_SHORT_STAGES
                                                                           : W4B_RING_MAX_STAGES;
    return room < want ? room : want;
}

/*
 * Whether each stage lands in two halves on two full barriers (the HALVES
 * form of the 16-math-warp kernels): where a CTA streams at most
 * W4B_HALVES_MAX_CTA_STAGES stages of 64 tiles (strips_per_cta strips of
 * ktiles tiles each), or W4B_HALVES_MAX_CTA_STAGES_M2 at m >= 2. A math
 * warp then computes the first half of a stage while the second lands, so
 * less math is left after a CTA's last byte (calls 1 and 6 of P208 put ~0.7
 * us of it there, a warp's 4 tiles).
 * Measured (H200, f16 / bf16):
 *  - P208 call 7, every call taking the halves: 4096^2 (2 stages per CTA)
 *    4.3-4.5 % faster at m = 1, 2; 14336 x 4096 (7) 1.7-2.2 % at m = 1, 2;
 *    4096 x 14336 (8) level / 1.5 % slower at m = 1 but 3.0 / 2.8 % faster
 *    at m = 2; 28672 x 8192 (28) 0.8-1.5 % slower at m = 1-3 (each stage
 *    waits twice and frees its slot later, which costs where the stream,
 *    not the tail, holds the kernel);
 *  - P209 call 3, the halves at m >= 2 on 8 stages: m = 2 at 4096 x 14336
 *    1.8 / 1.7 % faster, 4096 x 16384 1.4 / 1.6 %, 8192^2 +0.4 / -1.2 %,
 *    while m = 1 rows on the same path in both libraries read 0.7-0.9 %
 *    slower (the A/B's drift). m >= 2 past 8 stages was not measured with
 *    this form and keeps one barrier.
 */
#define W4B_HALVES_MAX_CTA_STAGES 7
#define W4B_HALVES_MAX_CTA_STAGES_M2 8
static inline int w4b_stage_halves(int64_t m, int64_t strips_per_cta, int64_t ktiles)
{
    const int64_t stages_per_strip = (ktiles + 63) / 64;
    const int64_t most = m >= 2 ? W4B_HALVES_MAX_CTA_STAGES_M2 : W4B_HALVES_MAX_CTA_STAGES;
    return strips_per_cta * stages_per_strip <= most;
}

#endif
