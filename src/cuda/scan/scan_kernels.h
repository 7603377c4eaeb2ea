/*
 * scan_kernels.h - the contract between the scan/reduce kernel files (one
 * technique per file) and scan_dispatch.cu, which holds the variant tables.
 *
 * Every launch function serves the types I32, I64, F32, F64 and the ops
 * SUM, MIN, MAX, any n the API accepts and any pointer alignment; it enqueues
 * its kernels on h->stream, takes its scratch from cuops_cuda_workspace and
 * sets h->last_kernel on success.
 */
#ifndef CUOPS_SCAN_KERNELS_H
#define CUOPS_SCAN_KERNELS_H

#include "api/cuops_internal.h"

/* Textbook block algorithms of the scan ladder (scan_textbook.cu). */
enum {
    SCAN_ALGO_BLELLOCH = 0,        /* up/down-sweep in shared memory */
    SCAN_ALGO_BLELLOCH_PADDED = 1, /* same, index + (index >> 5) padding */
    SCAN_ALGO_WARP_SHUFFLE = 2     /* warp-shuffle scans + one warp over warp totals */
};

/* Textbook block algorithms of the reduce ladder (reduce_textbook.cu). */
enum {
    REDUCE_ALGO_INTERLEAVED_DIVERGENT = 0, /* tid % (2s) == 0 */
    REDUCE_ALGO_INTERLEAVED_STRIDED = 1,   /* index = 2*s*tid */
    REDUCE_ALGO_SEQUENTIAL = 2,            /* tid < s, s halving */
    REDUCE_ALGO_WARP_SHUFFLE = 3           /* shfl_down tree per warp */
};

/* scan_state.cu: the counters and status words of the persistent scan and the
 * multi-wave reduce (layout in scan_state.h). `tiles`: status slots needed. */
typedef struct scan_state_view {
    char *base;    /* 256-byte aligned start of the layout */
    int64_t tiles; /* capacity in tiles the offsets are computed with */
} scan_state_view_t;
cuops_status_t scan_state_acquire(struct cuops_handle *h, int64_t tiles, scan_state_view_t *view);

/* scan_lookback_persistent.cu: a named variant; persistent CTAs that load their
 * next tile while looking back for the current one; no memset per call. */
cuops_status_t cuops_scan_lookback_persistent_launch(struct cuops_handle *h,
                                                     const cuops_scan_desc_t *d);
/* scan_lookback.cu: single pass, decoupled look-back, deterministic. `mode`
 * 0: one window of 32 predecessors per poll ("lookback"); 1: eight windows
 * per poll ("lookback_wide"); 2: the tile staged in shared memory by
 * cp.async, 5 CTAs per SM ("lookback_smem"); 3: the same with 64 KB tiles,
 * 3 CTAs per SM ("lookback_smem_64k"). */
cuops_status_t cuops_scan_lookback_launch(struct cuops_handle *h, const cuops_scan_desc_t *d,
                                          int mode);
/* scan_ring.cu: persistent CTAs dealt tiles round-robin, a ring of tiles in
 * flight per CTA (cp.async), each tile's prefix from the CTA's previous tile
 * and the aggregates between: no look-back chain. `form` 0: 3 slots of 32 KB,
 * 2 CTAs per SM ("ring"); 1: 6 slots, 1 CTA per SM ("ring_deep"); 2 and 3:
 * "ring" with the aggregate polls issued a store pass ahead or at the top of
 * the round ("ring_polls_early", "ring_polls_late"; "ring" picks per type);
 * 4, 5: the same 96 KB cut into 4 x 24 KB or 6 x 16 KB slots ("ring_4x24k",
 * "ring_6x16k"); 6: at the top of the round before the round's copies
 * ("ring_polls_first"); 7: 4 x 24 KB slots, the look-ahead two rounds ahead
 * and the polls a round ahead ("ring_lead2"); 8: the same with two CTA
 * barriers per round ("ring_lead2_fused"); 9: 7's order on 6 x 32 KB slots,
 * one CTA per SM ("ring_lead2_deep"); 10: 7's order on 5 x 20 KB slots, two
 * CTAs per SM ("ring_lead2_5x20k"); 11, 12: 7's order in CTAs of 512
 * threads, one per SM, on 6 x 32 KB and 4 x 48 KB slots ("ring_lead2_deep512",
 * "ring_lead2_wide512"); 13, 14: 7's order on 4 x 48 KB slots in CTAs of
 * 768 and 1024 threads ("ring_lead2_wide768", "ring_lead2_wide1024"); 15:
 * 512 threads on 5 x 40 KB slots ("ring_lead2_5x40k"). */
cuops_status_t cuops_scan_ring_launch(struct cuops_handle *h, const cuops_scan_desc_t *d, int form);
/* The form auto runs for an aligned call once `ring` is served: 0 `ring`,
 * 7 `ring_lead2`, 8 `ring_lead2_fused`, 12 `ring_lead2_wide512` (by type
 * and input bytes, as measured on the H200). */
int cuops_scan_ring_auto_form(const struct cuops_handle *h, const cuops_scan_desc_t *d);
/* Whether the device holds a `ring` CTA (its shared memory). */
int cuops_scan_ring_serves(const struct cuops_handle *h);
/* Elements a ring scan takes apart before its aligned body (< 256 bytes;
 * 0: aligned; -1: `in` and `out` disagree modulo 16 bytes). */
int64_t cuops_scan_ring_head(const cuops_scan_desc_t *d);
/* Where cuops_scan_ring_head is -1: the elements before `in`'s 256-byte
 * aligned body, over which auto's ring forms realign their stores to `out`
 * (-1 when that head would cover every element). */
int64_t cuops_scan_ring_head_apart(const cuops_scan_desc_t *d);
/* scan_reduce_then_scan.cu: tile reduce, scan of tile sums, scan with offsets. */
cuops_status_t cuops_scan_reduce_then_scan_launch(struct cuops_handle *h,
                                                  const cuops_scan_desc_t *d);
/* scan_textbook.cu: scan tiles + block sums, scan the sums, add offsets. */
cuops_status_t cuops_scan_textbook_launch(struct cuops_handle *h, const cuops_scan_desc_t *d,
                                          int algo);

/* reduce.cu: one launch, one CTA combines the partials. `mode` 0: one
 * wave of 4 CTAs per SM, contiguous ranges, ticket cleared by a memset
 * ("vectorized"); 1: up to 8 waves for large n, ticket in the handle's scan
 * state, no memset ("vectorized_multiwave"); 2: one wave, 16 KB
 * rounds dealt round-robin, ticket in the scan state ("vectorized_interleaved");
 * 3: the same with 32 KB rounds, 8 loads in flight per thread
 * ("vectorized_interleaved_x8"); 4: mode 2's grid and rounds, the partials
 * published as epoch-stamped words in the scan state and combined by the
 * grid's last CTA, with no ticket and no fence ("vectorized_stamped"); 5:
 * mode 3's rounds, stamped ("vectorized_stamped_x8"). */
cuops_status_t cuops_reduce_vectorized_launch(struct cuops_handle *h,
                                              const cuops_reduce_desc_t *d, int mode);
/* reduce_textbook.cu: one element per thread, a tree per block, one launch per level. */
cuops_status_t cuops_reduce_textbook_launch(struct cuops_handle *h, const cuops_reduce_desc_t *d,
                                            int algo);

#endif /* CUOPS_SCAN_KERNELS_H */
