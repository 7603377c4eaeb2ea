/*
 * w4a16_decode_wgmma_form.h - which CTA form w4a16_decode_wgmma takes
 * (w4a16_decode_wgmma.cu): plain C, so that the choice is tested on any
 * machine (tests/test_w4a16_decode_form.c).
 */
#ifndef CUOPS_W4A16_DECODE_WGMMA_FORM_H
#define CUOPS_W4A16_DECODE_WGMMA_FORM_H

#include <stdint.h>

#include "cuda/common/cluster_size.h"

#define W4A16_DECODE_WGMMA_MAX_SPLITS CUOPS_CLUSTER_PORTABLE_SIZE

/* Cluster splits (CTAs per weight block, one k range each) that fill `sms`
 * SMs once with `blocks` weight blocks: sms / blocks, at least 1, at most
 * the cluster size. */
static inline int64_t w4a16_decode_wgmma_fill_splits(int64_t blocks, int sms)
{
    const int64_t s = blocks < sms ? sms / blocks : 1;
    return s > W4A16_DECODE_WGMMA_MAX_SPLITS ? W4A16_DECODE_WGMMA_MAX_SPLITS : s;
}

/*
 * K phases per CTA: 4 (64-row CTAs, each of its four consumers one 64-k block
 * of every 4-block stage) or 1 (256-row CTAs, each consumer its 64 rows over
 * the CTA's K range), for m rows of x, `strips` 16-row strips of weight,
 * `ktiles` 64-k blocks and `sms` SMs; `study` is the one-block-per-stage form
 * (always 256 rows).
 *
 * 64-row CTAs where 64-row blocks fit the SMs in one round (n <= 8448 on 132
 * SMs): 256-row blocks would need a 4-8-way cluster split there (16 CTAs of
 * 256 rows at n = 4096: 8 ranks). Except at m <= 32 (x tiles of 32 rows or
 * fewer) where n >= 4096 and each rank of that split still gets >= 24
 * blocks: there the 256-row form was 6 % faster at 4096 x 14336 (28 blocks
 * per rank), level at m = 48-64, and 5-14 % slower at 4096^2 (8 blocks per
 * rank) (docs/w4a16.md, Change 8, run P143). Between 8 and 28 blocks per
 * rank, and below n = 4096 (where a 256-row CTA would be partly empty),
 * nothing was measured, so the 64-row form stays.
 */
static inline int w4a16_decode_wgmma_kphases(int64_t m, int64_t strips, int64_t ktiles, int sms,
                                             int study)
{
    if (study || sms < 1) return 1;
    if ((strips + 3) / 4 > sms) return 1; /* 64-row blocks take more than one round */
    if (m > 32 || strips < 256) return 4;
    return ktiles / w4a16_decode_wgmma_fill_splits((strips + 15) / 16, sms) >= 24 ? 1 : 4;
}

#endif /* CUOPS_W4A16_DECODE_WGMMA_FORM_H */
