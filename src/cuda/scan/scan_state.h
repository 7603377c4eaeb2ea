/*
 * scan_state.h - layout of the device-resident state that the persistent
 * look-back scan and the multi-wave reduce keep across calls, so that no call
 * needs a cudaMemsetAsync before its kernel (one graph node and ~1-2 us less
 * per call, which is most of the gap at n = 2^20).
 *
 * One buffer per handle (h->scan_state, allocated zeroed on first use, grown
 * geometrically), separate from the general workspace because other ops
 * overwrite that one. Layout, byte offsets from the start:
 *
 *   [   0] u64 tile counter    next tile id; reset to 0 by the last CTA
 *   [ 128] u32 done counter    CTAs finished; reset to 0 by the last CTA
 *   [ 256] u32 epoch           stamp of the current call; advanced by the last CTA
 *   [ 384] u32 reduce ticket   reduce partials published; reset by the last CTA
 *   [words]  u64 x capacity    4-byte types: {flag:2, epoch:30, value:32} per tile;
 *                              also the stamped reduce's partials, one word per
 *                              32 bits of partial ("vectorized_stamped")
 *   [flags]  u32 x capacity    8-byte types: {epoch:30, flag:2} per tile
 *   [aggr ]  u64 x capacity    8-byte types: tile aggregates
 *   [pref ]  u64 x capacity    8-byte types: inclusive prefixes
 *   [parts]  u64 x 16384       reduce: one partial per CTA (never needs clearing)
 *
 * Everything before [aggr] must start zeroed; a user-supplied workspace gets
 * exactly that range cleared by one memset per call instead.
 *
 * Each counter sits in its own 128-byte line (the tile counter is hammered by
 * atomics; the epoch is read by every CTA). The words region is only ever
 * written with stamped words and the flags region only with stamped flags, so
 * a value's arbitrary bits can never be mistaken for a current stamp.
 *
 * Epochs. A status word counts only if its stamp equals the epoch read at the
 * start of the call; every earlier call stamped a smaller epoch (or the word
 * is still zero: flag EMPTY). When the 30-bit epoch wraps to 0 the last CTA
 * clears both stamped regions first, so stamps from 2^30 calls ago cannot
 * come back to life.
 *
 * Plain C: the GPU test includes it to age the epoch to the wrap.
 */
#ifndef CUOPS_SCAN_STATE_H
#define CUOPS_SCAN_STATE_H

#include <stddef.h>
#include <stdint.h>

#define SCAN_STATE_TILE_COUNTER 0
#define SCAN_STATE_DONE 128
#define SCAN_STATE_EPOCH 256
#define SCAN_STATE_REDUCE_TICKET 384
#define SCAN_STATE_HEADER_BYTES 512
/* reduce partial slots (8 bytes each): 8 waves of 8 CTAs on up to 256 SMs */
#define SCAN_STATE_MAX_PARTIALS 16384
#define SCAN_EPOCH_MASK 0x3fffffffu
/* smallest capacity allocated: 2^14 tiles (n = 2^27 four-byte elements), ~590 KB */
#define SCAN_STATE_MIN_TILES ((int64_t)1 << 14)

static inline size_t scan_state_round256(size_t b) { return (b + 255) & ~(size_t)255; }

/* Offsets of the regions for a capacity of `tiles` tiles. */
static inline size_t scan_state_words_offset(int64_t tiles)
{
    (void)tiles;
    return SCAN_STATE_HEADER_BYTES;
}
static inline size_t scan_state_flags_offset(int64_t tiles)
{
    return scan_state_words_offset(tiles) + scan_state_round256((size_t)tiles * 8);
}
static inline size_t scan_state_aggr_offset(int64_t tiles)
{
    return scan_state_flags_offset(tiles) + scan_state_round256((size_t)tiles * 4);
}
static inline size_t scan_state_prefix_offset(int64_t tiles)
{
    return scan_state_aggr_offset(tiles) + scan_state_round256((size_t)tiles * 8);
}
static inline size_t scan_state_partials_offset(int64_t tiles)
{
    return scan_state_prefix_offset(tiles) + scan_state_round256((size_t)tiles * 8);
}
static inline size_t scan_state_bytes(int64_t tiles)
{
    return scan_state_partials_offset(tiles) + 8 * (size_t)SCAN_STATE_MAX_PARTIALS;
}
/* The range that must be zero before a call: header, words and flags. */
static inline size_t scan_state_clear_bytes(int64_t tiles) { return scan_state_aggr_offset(tiles); }

#endif /* CUOPS_SCAN_STATE_H */
