/*
 * dequant_dispatch.cu - the CUDA backend of cuops_dequant_int4: the table of
 * named variants (the seed 001 load-order study, the vector-width ladder
 * and the persistent stream), what each supports, and the auto choice. The
 * kernels live in one file per technique: dequant_scalar.cu (one output per
 * thread, both load orders, any alignment), dequant_vector.cu (vector chunks,
 * one unit per warp; plain, evict-first or lane-pair sector-complete stores)
 * and dequant_persistent.cu (vector chunks, persistent double-buffered warps;
 * plain, evict-first or bulk-copy stores).
 *
 * hoisted_b16_pair / hoisted_b16_pair_x2 are hoisted_b16 (UNROLL 1 / 2) with
 * the lane-pair exchange, so each store instruction writes whole 32-byte
 * sectors; they serve exactly the calls hoisted_b16 serves (f16, bf16 and f32
 * out: a 64-byte f32 chunk is two sectors, exchanged the same way) and are
 * named variants only until the H200 has measured them.
 *
 * Auto, by what the H200 measured (see choose_auto): hoisted_b16_wt_t128
 * (warp-transposed stores, 32 registers, CTAs of 128 threads) for weights of 2^24 elements and
 * more where it serves (16-bit out, k a multiple of 512), else hoisted_b16
 * there (hoisted_b16_occ8, the same kernel at 8 CTAs per SM, from 2^27),
 * warp_coalesced (16-byte, warp-contiguous
 * stores) below that or where b16 does not fit, then the widest hoisted_bN
 * that fits, then hoisted_b1 (any alignment, any even group). The persistent
 * kernels measured slower than both (80% of copy at 32768x8192 against 88%
 * for hoisted_b16) and stay as named variants.
 * Plain stores in auto, not st.global.cs: the output is usually read next
 * (by a GEMM), and evict-first would push it out of L2 sooner.
 */
#include <stdio.h>
#include <string.h>

#include "cuda/quant/dequant_common.cuh"

typedef enum { KIND_SCALAR_NAIVE, KIND_SCALAR_HOISTED, KIND_VECTOR, KIND_PERSISTENT } dequant_kind_t;

typedef struct dequant_variant {
    const char *name;        /* what cuops_options_t.variant selects */
    const char *kernel;      /* what cuops_last_kernel() reports */
    dequant_kind_t kind;
    int vec;                 /* outputs per chunk; 0 = 16 bytes of output */
    int unroll;              /* chunks per thread */
    int store;               /* vector: 0 st.global, 1 st.global.cs, 2 st.global after
                                the lane-pair exchange (sector-complete stores), 3
                                st.global, 32 registers (8 CTAs per SM); 4 / 5
                                warp-transposed stores, without / with that hold;
                                6 the held one in CTAs of 128 threads;
                                persistent: 0 st.global, 1 st.global.cs, 2 shared
                                memory + bulk copy (sm_90) */
} dequant_variant_t;

static const dequant_variant_t dequant_table[] = {
    {"naive_order_b1", "dequant_naive_order_b1", KIND_SCALAR_NAIVE, 1, 1, 0},
    {"hoisted_b1", "dequant_hoisted_b1", KIND_SCALAR_HOISTED, 1, 1, 0},
    {"hoisted_b4", "dequant_hoisted_b4", KIND_VECTOR, 4, 1, 0},
    {"hoisted_b8", "dequant_hoisted_b8", KIND_VECTOR, 8, 1, 0},
    {"hoisted_b16", "dequant_hoisted_b16", KIND_VECTOR, 16, 1, 0},
    {"hoisted_b16_pair", "dequant_hoisted_b16_pair", KIND_VECTOR, 16, 1, 2},
    {"hoisted_b16_pair_x2", "dequant_hoisted_b16_pair_x2", KIND_VECTOR, 16, 2, 2},
    {"hoisted_b16_occ8", "dequant_hoisted_b16_occ8", KIND_VECTOR, 16, 1, 3},
    {"hoisted_b16_wt", "dequant_hoisted_b16_wt", KIND_VECTOR, 16, 1, 4},
    {"hoisted_b16_wt_occ8", "dequant_hoisted_b16_wt_occ8", KIND_VECTOR, 16, 1, 5},
    {"hoisted_b16_wt_t128", "dequant_hoisted_b16_wt_t128", KIND_VECTOR, 16, 1, 6},
    {"hoisted_b32", "dequant_hoisted_b32", KIND_VECTOR, 32, 1, 0},
    {"warp_coalesced_x1", "dequant_warp_coalesced_x1", KIND_VECTOR, 0, 1, 0},
    {"warp_coalesced_x2", "dequant_warp_coalesced_x2", KIND_VECTOR, 0, 2, 0},
    {"warp_coalesced_x4", "dequant_warp_coalesced_x4", KIND_VECTOR, 0, 4, 0},
    {"warp_coalesced_x4_stream", "dequant_warp_coalesced_x4_stream", KIND_VECTOR, 0, 4, 1},
    {"warp_coalesced_x1_occ8", "dequant_warp_coalesced_x1_occ8", KIND_VECTOR, 0, 1, 3},
    {"warp_coalesced_x2_occ8", "dequant_warp_coalesced_x2_occ8", KIND_VECTOR, 0, 2, 3},
    {"persistent_x1", "dequant_persistent_x1", KIND_PERSISTENT, 0, 1, 0},
    {"persistent_x2", "dequant_persistent_x2", KIND_PERSISTENT, 0, 2, 0},
    {"persistent_x4", "dequant_persistent_x4", KIND_PERSISTENT, 0, 4, 0},
    {"persistent_x4_cs", "dequant_persistent_x4_cs", KIND_PERSISTENT, 0, 4, 1},
    {"bulk_store_x4", "dequant_bulk_store_x4", KIND_PERSISTENT, 0, 4, 2},
};
#define DEQUANT_NUM_VARIANTS ((int)(sizeof dequant_table / sizeof dequant_table[0]))

static const char *const dequant_names[] = {
    "auto",
    "naive_order_b1",
    "hoisted_b1",
    "hoisted_b4",
    "hoisted_b8",
    "hoisted_b16",
    "hoisted_b16_pair",
    "hoisted_b16_pair_x2",
    "hoisted_b16_occ8",
    "hoisted_b16_wt",
    "hoisted_b16_wt_occ8",
    "hoisted_b16_wt_t128",
    "hoisted_b32",
    "warp_coalesced_x1",
    "warp_coalesced_x2",
    "warp_coalesced_x4",
    "warp_coalesced_x4_stream",
    "warp_coalesced_x1_occ8",
    "warp_coalesced_x2_occ8",
    "persistent_x1",
    "persistent_x2",
    "persistent_x4",
    "persistent_x4_cs",
    "bulk_store_x4",
};

extern "C" const char *const *cuops_cuda_dequant_variant_names(int *count)
{
    *count = (int)(sizeof dequant_names / sizeof dequant_names[0]);
    return dequant_names;
}

static int variant_vec(const dequant_variant_t *v, const cuops_dequant_desc_t *d)
{
    return v->vec ? v->vec : 16 / (int)cuops_dtype_size(d->out_type);
}

static int variant_supported(const struct cuops_handle *h, const dequant_variant_t *v,
                             const cuops_dequant_desc_t *d, char *why)
{
    if (v->kind == KIND_PERSISTENT) return dequant_persistent_supported(h, d, v->store == 2, why);
    if (v->kind != KIND_VECTOR) return 1;
    if (v->store >= 4 && v->store <= 6) return dequant_vector_transposed_supported(d, why);
    return dequant_vector_supported(d, variant_vec(v, d), why);
}

static cuops_status_t variant_launch(struct cuops_handle *h, const dequant_variant_t *v,
                                     const cuops_dequant_desc_t *d)
{
    switch (v->kind) {
    case KIND_SCALAR_NAIVE: return dequant_launch_scalar(h, d, 1, v->kernel);
    case KIND_SCALAR_HOISTED: return dequant_launch_scalar(h, d, 0, v->kernel);
    case KIND_VECTOR: return dequant_launch_vector(h, d, variant_vec(v, d), v->unroll, v->store, v->kernel);
    case KIND_PERSISTENT: return dequant_launch_persistent(h, d, v->unroll, v->store, v->kernel);
    }
    return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "dequant: bad variant kind");
}

static const dequant_variant_t *find_variant(const char *name)
{
    for (int i = 0; i < DEQUANT_NUM_VARIANTS; i++)
        if (strcmp(dequant_table[i].name, name) == 0) return &dequant_table[i];
    return NULL;
}

/* The auto choice (see the header comment). */
static const dequant_variant_t *choose_auto(const struct cuops_handle *h, const cuops_dequant_desc_t *d)
{
    char why[256];
    const int c16 = 16 / (int)cuops_dtype_size(d->out_type);
    const int64_t sms = h->num_sms > 0 ? h->num_sms : 132;
    /* Measured on the H200 (bench/results/h200-dequant-variants.json, f16 out):
     * from 4096x4096 up, hoisted_b16 is the fastest variant (16.0 / 48.4 /
     * 179.8 us at 4096x4096 / 16384x4096 / 32768x8192, against 16.5-17.1 /
     * 49.9-54.4 / 185-204 for warp_coalesced_x2/x4 and persistent_x4); below
     * that, warp_coalesced_x1 (4.80 us at 128x4096; persistent_x1 4.90).
     * From 2^27 outputs, the same kernel held to 32 registers (8 CTAs per
     * SM): 177.3 / 176.9 us against 180.0 / 179.7 at 32768x8192 f16 / bf16,
     * level at 16384x4096 (48.3 / 48.5), 1 % slower at 4096x4096 (3caa261).
     * Ahead of both where it serves, the same loads with warp-transposed
     * stores held to 8 CTAs per SM: 15.17 / 45.9 / 169.2 us at the three
     * sizes against 16.1 / 48.5 / 177.2 for auto before (f16 and bf16
     * alike; docs/dequant.md, P202). The same kernel in CTAs of 128 threads
     * (16 per SM): 0.1-0.5 % faster than in CTAs of 256 at 4096x4096 to
     * 32768x8192, 27 of 28 pairs, one tie (P207). */
    if (d->n * d->k >= ((int64_t)1 << 24)) {
        const dequant_variant_t *v = find_variant("hoisted_b16_wt_t128");
        if (variant_supported(h, v, d, why)) return v;
    }
    if (d->n * d->k >= ((int64_t)1 << 27)) {
        const dequant_variant_t *v = find_variant("hoisted_b16_occ8");
        if (variant_supported(h, v, d, why)) return v;
    }
    if (d->n * d->k >= ((int64_t)1 << 24)) {
        const dequant_variant_t *v = find_variant("hoisted_b16");
        if (variant_supported(h, v, d, why)) return v;
    }
    if (dequant_vector_supported(d, c16, why)) {
        const int64_t chunks = d->n * cuops_ceil_div(d->k, c16);
        const int64_t full_machine = sms * 2048;
        if (chunks / 4 >= full_machine) return find_variant("warp_coalesced_x4");
        if (chunks / 2 >= full_machine) return find_variant("warp_coalesced_x2");
        return find_variant("warp_coalesced_x1");
    }
    static const char *const ladder[] = {"hoisted_b32", "hoisted_b16", "hoisted_b8", "hoisted_b4"};
    for (int i = 0; i < 4; i++) {
        const dequant_variant_t *v = find_variant(ladder[i]);
        if (variant_supported(h, v, d, why)) return v;
    }
    return find_variant("hoisted_b1");
}

extern "C" cuops_status_t cuops_cuda_dequant_int4(struct cuops_handle *h, const cuops_dequant_desc_t *d,
                                                  const cuops_options_t *opt)
{
    const dequant_variant_t *v;
    if (cuops_variant_is_auto(opt)) {
        v = choose_auto(h, d);
    } else {
        v = find_variant(opt->variant);
        if (v == NULL)
            return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                              "dequant: no variant named \"%s\" (see cuops_variant_names)", opt->variant);
        char why[256];
        why[0] = '\0';
        if (!variant_supported(h, v, d, why))
            return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "dequant: variant %s cannot serve this call: %s",
                              v->name, why);
    }
    return variant_launch(h, v, d);
}
