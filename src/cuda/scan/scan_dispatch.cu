/*
 * scan_dispatch.cu - the scan and reduce variant tables and the CUDA
 * backend entries cuops_cuda_scan / cuops_cuda_reduce.
 *
 * "auto" is the default technique: for scans, "ring" (tiles dealt
 * round-robin to persistent CTAs, a cp.async ring of tiles in flight, each
 * tile's prefix from the CTA's previous tile and aggregates published a round
 * ahead) wherever the pointers are 16-byte aligned and the device holds its
 * 96 KB of slots: on the H200 (e06fd36, a30ef3b) it read and wrote
 * 3379-3604 GB/s i32 and 3524-3816 GB/s f32 at 2^26..2^30 (80-90 % of copy,
 * 1.12-1.20x CUB), 1.05-1.07x at 2^24 and 1.08-1.11x at 2^16..2^20, ahead of
 * every look-back kernel at every size (docs/scan.md). By type and size,
 * auto runs the forms that look ahead two rounds instead (4-byte types from
 * 4 MB of input in 512-thread CTAs, 8-byte types from 128 MB;
 * cuops_scan_ring_auto_form: i32 96.5 % of copy and 1.30x CUB at 2^30,
 * 95.0 % at 2^28, 1.15x at 2^20 in runs P57-P58). Otherwise "lookback" (the tile in registers) up to 64 MB of
 * input and "lookback_smem_64k" (64 KB tiles staged in shared memory by
 * cp.async, 3 CTAs per SM) above: in two H200 runs of the
 * same commit (cbc9989, a7f1cc4) the 64 KB-tile kernel read and wrote
 * 3019-3114 GB/s at 2^26..2^30 (0.96-0.98x CUB) against 2709-2865 GB/s
 * (0.90-0.91x) for "lookback", level with it at 2^24 (64 MB of i32) and
 * slower below (one wave of fewer, larger CTAs). For reduce, the interleaved
 * one-wave vectorized single-launch kernel: up to 64 MB of input its form
 * with stamped partials and no ticket ("vectorized_stamped", 16 KB rounds),
 * above it the same with 32 KB rounds ("vectorized_stamped_x8";
 * reduce_auto_mode). The
 * 32 KB-tile "lookback_smem" (5 CTAs per SM) measured 1.03x CUB in its first
 * run and 0.92-0.93x in the three after it, same code: a named variant.
 * Measured on the
 * H200: the persistent, software-pipelined look-back scan ran at 1700 GB/s
 * at 2^28 (0.55x CUB) against 2840 GB/s for "lookback", so
 * "lookback_persistent" is a named variant; the multi-wave
 * reduce measured level with or ahead of the first "vectorized" one, and the
 * one-wave interleaved reduce ahead of both at every size (1.049x CUB
 * geomean against 1.017x for multi-wave; 1.00x at 2^30 against 0.975x), and
 * its stamped form, without the last CTA's fence, ticket and read, 1.0-1.5 us
 * ahead of it at 2^20-2^24 (H100, P231), so auto takes that up to 64 MB and
 * its 32 KB-round form above (1.3-1.5 % ahead of the ticket's at 2^26,
 * P232). "lookback_wide" (eight
 * windows per poll) measured slower than "lookback" from 2^24 up (0.85x
 * against 0.90x CUB) and stays a named variant. The other rows are seed
 * 002's ladder, selectable by name through cuops_options_t.variant for
 * study and benchmarking (docs/scan.md predicts each one's rate). Every
 * row serves every type (I32, I64, F32, F64), op, n and alignment.
 */
#include <string.h>

#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_primitives.cuh"

typedef struct scan_variant {
    const char *name;
    int algo; /* textbook algorithm, or -1 */
    cuops_status_t (*launch)(struct cuops_handle *h, const cuops_scan_desc_t *d, int algo);
} scan_variant_t;

typedef struct reduce_variant {
    const char *name;
    int algo;
    cuops_status_t (*launch)(struct cuops_handle *h, const cuops_reduce_desc_t *d, int algo);
} reduce_variant_t;

static cuops_status_t scan_persistent_entry(struct cuops_handle *h, const cuops_scan_desc_t *d,
                                           int)
{
    return cuops_scan_lookback_persistent_launch(h, d);
}
/* algo = 0 lookback, 1 lookback_wide, 2 lookback_smem, 3 lookback_smem_64k */
static cuops_status_t scan_lookback_entry(struct cuops_handle *h, const cuops_scan_desc_t *d,
                                          int mode)
{
    return cuops_scan_lookback_launch(h, d, mode);
}
/* algo = 0 ring, 1 ring_deep, 2 ring_polls_early, 3 ring_polls_late,
 * 4 ring_4x24k, 5 ring_6x16k, 6 ring_polls_first, 7 ring_lead2, 8 ring_lead2_fused,
 * 9 ring_lead2_deep, 10 ring_lead2_5x20k, 11 ring_lead2_deep512, 12 ring_lead2_wide512,
 * 13 ring_lead2_wide768, 14 ring_lead2_wide1024, 15 ring_lead2_5x40k,
 * 16 ring_lead2_wide512_selfclear */
static cuops_status_t scan_ring_entry(struct cuops_handle *h, const cuops_scan_desc_t *d, int form)
{
    return cuops_scan_ring_launch(h, d, form);
}
static cuops_status_t scan_rts_entry(struct cuops_handle *h, const cuops_scan_desc_t *d, int)
{
    return cuops_scan_reduce_then_scan_launch(h, d);
}
/* algo = grid policy (reduce.cu: 0 one wave, 1 multi-wave, 2 interleaved,
 * 3 interleaved with 32 KB rounds, 4 and 5: 2 and 3 with stamped partials
 * instead of the ticket) */
static cuops_status_t reduce_vectorized_entry(struct cuops_handle *h, const cuops_reduce_desc_t *d,
                                              int mode)
{
    return cuops_reduce_vectorized_launch(h, d, mode);
}

/* "auto" for scans: scan_auto below; for reduce, reduce_auto_mode. */
static const scan_variant_t scan_table[] = {
    {"lookback", 0, scan_lookback_entry},
    {"lookback_smem", 2, scan_lookback_entry},
    {"lookback_smem_64k", 3, scan_lookback_entry},
    {"lookback_wide", 1, scan_lookback_entry},
    {"lookback_persistent", -1, scan_persistent_entry},
    {"ring", 0, scan_ring_entry},
    {"ring_deep", 1, scan_ring_entry},
    {"ring_polls_early", 2, scan_ring_entry},
    {"ring_polls_late", 3, scan_ring_entry},
    {"ring_4x24k", 4, scan_ring_entry},
    {"ring_6x16k", 5, scan_ring_entry},
    {"ring_polls_first", 6, scan_ring_entry},
    {"ring_lead2", 7, scan_ring_entry},
    {"ring_lead2_fused", 8, scan_ring_entry},
    {"ring_lead2_deep", 9, scan_ring_entry},
    {"ring_lead2_5x20k", 10, scan_ring_entry},
    {"ring_lead2_deep512", 11, scan_ring_entry},
    {"ring_lead2_wide512", 12, scan_ring_entry},
    {"ring_lead2_wide768", 13, scan_ring_entry},
    {"ring_lead2_wide1024", 14, scan_ring_entry},
    {"ring_lead2_5x40k", 15, scan_ring_entry},
    {"ring_lead2_wide512_selfclear", 16, scan_ring_entry},
    {"blelloch_smem", SCAN_ALGO_BLELLOCH, cuops_scan_textbook_launch},
    {"blelloch_smem_padded", SCAN_ALGO_BLELLOCH_PADDED, cuops_scan_textbook_launch},
    {"warp_shuffle", SCAN_ALGO_WARP_SHUFFLE, cuops_scan_textbook_launch},
    {"reduce_then_scan", -1, scan_rts_entry},
};
/* The scan "auto" (header comment; docs/scan.md): a `ring` form where it
 * fits (cuops_scan_ring_auto_form: by type and size) for aligned pointers,
 * for misaligned ones at the same offset within 16 bytes (the ring kernel on
 * the aligned body, the head scanned in it: cuops_scan_ring_head) and for
 * pairs that disagree modulo 16 (the body aligned for `in`, the stores
 * realigned to `out` by shuffles: cuops_scan_ring_head_apart; every form
 * auto takes has that path), else (n within the head) input bytes decide
 * between `lookback`'s scalar kernels. Every kernel here
 * gives the same results for integers; float sums are grouped by the
 * kernel's tile (32 KB for `ring` and `lookback`, whose bits are equal on
 * aligned pointers; the lead2 forms, auto's from 4 MB (4-byte types) or
 * 128 MB, fold floats by a fixed tree; 64 KB for `lookback_smem_64k`) and
 * by a misaligned call's head, so the bits never depend on timing. */
#define SCAN_AUTO_LARGE_BYTES ((int64_t)64 << 20)
static cuops_status_t scan_auto(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    if (cuops_scan_ring_serves(h) &&
        (cuops_scan_ring_head(d) >= 0 || cuops_scan_ring_head_apart(d) >= 0))
        return cuops_scan_ring_launch(h, d, cuops_scan_ring_auto_form(h, d));
    const int64_t bytes = d->n * (int64_t)cuops_dtype_size(d->type);
    return cuops_scan_lookback_launch(h, d, bytes > SCAN_AUTO_LARGE_BYTES ? 3 : 0);
}

static const reduce_variant_t reduce_table[] = {
    {"vectorized_interleaved", 2, reduce_vectorized_entry},
    {"vectorized_interleaved_x8", 3, reduce_vectorized_entry},
    {"vectorized_stamped", 4, reduce_vectorized_entry},
    {"vectorized_stamped_x8", 5, reduce_vectorized_entry},
    {"vectorized_multiwave", 1, reduce_vectorized_entry},
    {"vectorized", 0, reduce_vectorized_entry},
    {"interleaved_divergent", REDUCE_ALGO_INTERLEAVED_DIVERGENT, cuops_reduce_textbook_launch},
    {"interleaved_strided", REDUCE_ALGO_INTERLEAVED_STRIDED, cuops_reduce_textbook_launch},
    {"sequential_addressing", REDUCE_ALGO_SEQUENTIAL, cuops_reduce_textbook_launch},
    {"warp_shuffle", REDUCE_ALGO_WARP_SHUFFLE, cuops_reduce_textbook_launch},
};
#define SCAN_TABLE_LEN ((int)(sizeof(scan_table) / sizeof(scan_table[0])))
#define REDUCE_TABLE_LEN ((int)(sizeof(reduce_table) / sizeof(reduce_table[0])))

/* Names for cuops_variant_names: "auto" first, then the table. */
static const char *const scan_names[] = {"auto", "blelloch_smem", "blelloch_smem_padded",
                                         "warp_shuffle", "reduce_then_scan", "lookback",
                                         "lookback_wide", "lookback_persistent", "lookback_smem",
                                         "lookback_smem_64k", "ring", "ring_deep",
                                         "ring_polls_early", "ring_polls_late", "ring_4x24k",
                                         "ring_6x16k", "ring_polls_first",
                                         "ring_lead2", "ring_lead2_fused", "ring_lead2_deep",
                                         "ring_lead2_5x20k", "ring_lead2_deep512",
                                         "ring_lead2_wide512", "ring_lead2_wide768",
                                         "ring_lead2_wide1024", "ring_lead2_5x40k",
                                         "ring_lead2_wide512_selfclear"};
static const char *const reduce_names[] = {"auto", "interleaved_divergent", "interleaved_strided",
                                           "sequential_addressing", "warp_shuffle", "vectorized",
                                           "vectorized_multiwave", "vectorized_interleaved",
                                           "vectorized_interleaved_x8", "vectorized_stamped",
                                           "vectorized_stamped_x8"};

extern "C" const char *const *cuops_cuda_scan_variant_names(int *count)
{
    *count = (int)(sizeof(scan_names) / sizeof(scan_names[0]));
    return scan_names;
}

extern "C" const char *const *cuops_cuda_reduce_variant_names(int *count)
{
    *count = (int)(sizeof(reduce_names) / sizeof(reduce_names[0]));
    return reduce_names;
}

extern "C" cuops_status_t cuops_cuda_scan(struct cuops_handle *h, const cuops_scan_desc_t *d,
                                          const cuops_options_t *opt)
{
    if (!scan_supported_type(d->type))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: dtype %s is not supported "
                          "(i32, i64, f32, f64)", cuops_dtype_name(d->type));
    if (opt == NULL || cuops_variant_is_auto(opt)) return scan_auto(h, d);
    const scan_variant_t *v = NULL;
    for (int i = 0; i < SCAN_TABLE_LEN; i++)
        if (strcmp(opt->variant, scan_table[i].name) == 0) v = &scan_table[i];
    if (v == NULL)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: no variant named '%s'",
                          opt->variant);
    return v->launch(h, d, v->algo); /* src/api made the handle's device current */
}

/* The reduce "auto": the stamped partials (no ticket, no fence) at every
 * size, 16 KB rounds up to 64 MB of input and 32 KB rounds above. On an
 * H100 (P231, P232) the 16 KB stamped form is 0.9-1.0 us faster than the
 * ticket form at 2^20 and 1.1-1.6 us faster than the 32 KB-round ticket
 * form at 2^24 (64 MB); above 64 MB the 32 KB stamped form is 1.3-1.5 %
 * faster than its ticket form at 2^26 and 0.1-0.5 % at 2^28-2^30, i32 and
 * f32 (docs/scan.md). The choice depends only on n and the type, so float
 * sums stay reproducible. */
#define REDUCE_AUTO_X8_BYTES ((int64_t)64 << 20)
static int reduce_auto_mode(const cuops_reduce_desc_t *d)
{
    return d->n * (int64_t)cuops_dtype_size(d->type) > REDUCE_AUTO_X8_BYTES ? 5 : 4;
}

extern "C" cuops_status_t cuops_cuda_reduce(struct cuops_handle *h, const cuops_reduce_desc_t *d,
                                            const cuops_options_t *opt)
{
    if (!scan_supported_type(d->type))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "reduce: dtype %s is not supported "
                          "(i32, i64, f32, f64)", cuops_dtype_name(d->type));
    if (opt == NULL || cuops_variant_is_auto(opt))
        return reduce_vectorized_entry(h, d, reduce_auto_mode(d)); /* device made current by src/api */
    const reduce_variant_t *v = NULL;
    for (int i = 0; i < REDUCE_TABLE_LEN; i++)
        if (strcmp(opt->variant, reduce_table[i].name) == 0) v = &reduce_table[i];
    if (v == NULL)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "reduce: no variant named '%s'",
                          opt->variant);
    return v->launch(h, d, v->algo);
}
