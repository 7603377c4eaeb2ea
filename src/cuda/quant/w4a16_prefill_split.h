/*
 * w4a16_prefill_split.h - how the fused prefill kernel's last wave of tiles
 * is cut along k (w4a16_prefill_wgmma_ahead, w4a16_prefill_wgmma.cu): plain
 * C, so that the plan is tested on any machine (tests/test_w4a16_split_plan.c).
 */
#ifndef CUOPS_W4A16_PREFILL_SPLIT_H
#define CUOPS_W4A16_PREFILL_SPLIT_H

#define W4A16_PREFILL_MAX_SPLIT_PARTS 4    /* k parts of one tile */
#define W4A16_PREFILL_MAX_SPLIT_TILES 1024 /* tiles cut in one call (the kernel's counters) */

/* The persistent grid runs whole tiles in waves of `sms`; a last wave of r
 * tiles leaves sms - r SMs idle for a whole tile's time (1024 x 14336 x 4096:
 * 448 tiles = 3 waves + 52, the last wave 39 % full). Cut each of those r
 * tiles along k into parts that the idle SMs run side by side: parts =
 * sms / r (so every CTA runs at most one part), at most
 * W4A16_PREFILL_MAX_SPLIT_PARTS and each part at least 4 blocks of 64 k,
 * where the last wave is under 60 % full (a fuller wave loses less than the
 * partials' store, reload and sum would cost). forced > 0 (the call's
 * split_k option) asks for that many parts instead (still at most sms / r,
 * W4A16_PREFILL_MAX_SPLIT_PARTS and ktiles); 1 turns the split off. Returns
 * the parts (1: no split) and, in *split_tiles, the tiles cut (the last r). */
static inline int w4a16_prefill_split_plan(int num_tiles, int sms, int ktiles, int forced,
                                           int *split_tiles)
{
    const int r = num_tiles < sms ? num_tiles : num_tiles % sms;
    *split_tiles = 0;
    if (r == 0 || r > W4A16_PREFILL_MAX_SPLIT_TILES) return 1;
    int parts;
    if (forced > 0) {
        parts = forced < W4A16_PREFILL_MAX_SPLIT_PARTS ? forced : W4A16_PREFILL_MAX_SPLIT_PARTS;
        if (parts > ktiles) parts = ktiles;
    } else {
        if (10 * r >= 6 * sms) return 1;
        parts = W4A16_PREFILL_MAX_SPLIT_PARTS;
        if (parts > ktiles / 4) parts = ktiles / 4;
    }
    /* at most one part per CTA: the kernel sums a split tile after its loop */
    if (parts > sms / r) parts = sms / r;
    if (parts < 2) return 1;
    *split_tiles = r;
    return parts;
}

#endif /* CUOPS_W4A16_PREFILL_SPLIT_H */
