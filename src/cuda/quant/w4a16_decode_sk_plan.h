/*
 * w4a16_decode_sk_plan.h - how the stream-K form of the W4A16 decode kernel
 * (variant w4a16_decode_wgmma_sk, w4a16_decode_wgmma.cu) deals its work over
 * the CTAs: plain C, shared by the kernel and the host, tested on any machine
 * (tests/test_w4a16_sk_plan.c).
 *
 * The units are (weight block, 64-k block) pairs in block-major order, U =
 * blocks * ktiles of them over G CTAs. CTA c runs units [c U / G, (c + 1) U
 * / G): the end of one block, maybe whole blocks, the start of another, each
 * a "piece" (one block's contiguous k range). Every CTA gets the same work
 * to one unit, where one block per CTA leaves SMs idle whenever the blocks do
 * not divide by the SMs. (The kernel takes G >= blocks, so that a CTA has at
 * most two pieces; the plan itself allows any G <= U.)
 *
 * A block whose units fall to more than one CTA is "cut": its pieces q = 0
 * .. pieces - 1 (in k order, held by consecutive CTAs) leave fp32 partials
 * in workspace slots, and whichever piece arrives last adds them in q order
 * (the same sum whatever the arrival order: reproducible bit for bit). Slot
 * of a piece: 2c + 1 for q = 0 (the cut block starts inside CTA c's range,
 * so it is c's last piece), 2c for q >= 1 (it is c's first piece), so no two
 * pieces of a call share one. The block's arrival counter is that of its
 * first CTA (each CTA's last piece belongs to one block).
 */
#ifndef CUOPS_W4A16_DECODE_SK_PLAN_H
#define CUOPS_W4A16_DECODE_SK_PLAN_H

#include <stdint.h>

#ifdef __CUDACC__
#define W4S_HD __host__ __device__
#else
#define W4S_HD
#endif

typedef struct w4s_piece {
    int64_t block; /* weight block */
    int k0, k1;    /* its 64-k blocks [k0, k1) */
    int q, pieces; /* this piece of the block's `pieces`, in k order */
    int slot;      /* partials slot (when pieces > 1) */
    int counter;   /* arrival counter (when pieces > 1) */
} w4s_piece_t;

/* first unit of CTA c */
static inline W4S_HD int64_t w4s_unit_begin(int64_t c, int64_t units, int64_t ctas)
{
    return c * units / ctas;
}

/* the CTA whose range holds unit u: the largest c with c U / G <= u */
static inline W4S_HD int64_t w4s_owner(int64_t u, int64_t units, int64_t ctas)
{
    return ((u + 1) * ctas - 1) / units;
}

/* the piece that starts at unit u of a CTA whose range ends at u_end */
static inline W4S_HD w4s_piece_t w4s_piece_at(int64_t u, int64_t u_end, int ktiles, int64_t units,
                                              int64_t ctas)
{
    w4s_piece_t p;
    p.block = u / ktiles;
    const int64_t block_u = p.block * ktiles;
    p.k0 = (int)(u - block_u);
    p.k1 = u_end < block_u + ktiles ? (int)(u_end - block_u) : ktiles;
    const int64_t first = w4s_owner(block_u, units, ctas);
    const int64_t last = w4s_owner(block_u + ktiles - 1, units, ctas);
    const int64_t c = w4s_owner(u, units, ctas);
    p.pieces = (int)(last - first + 1);
    p.q = (int)(c - first);
    p.slot = (int)(2 * c + (p.q == 0 ? 1 : 0));
    p.counter = (int)first;
    return p;
}

/* CTAs for `units` units on `sms` SMs: one per SM, at most one per unit */
static inline int64_t w4s_ctas(int64_t units, int sms)
{
    return units < sms ? units : sms;
}

#endif /* CUOPS_W4A16_DECODE_SK_PLAN_H */
