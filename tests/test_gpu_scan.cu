/*
 * test_gpu_scan.cu - cuops_scan and cuops_reduce on the GPU against the CPU
 * reference backend, for every variant, type, op, inclusive/exclusive, in
 * place and misaligned (base + 1 element), with NaN/sentinel-poisoned outputs
 * and a guard band after the end (and one element before a misaligned start)
 * that must stay untouched. Then bitwise reproducibility (10 runs of f32 sum
 * scan and reduce at n = 2^24) and one huge case, n = 2^31 + 7 i32 sum, for
 * every variant (skipped when the device lacks the memory).
 *
 * The persistent scan and the multi-wave reduce keep counters and epoch-
 * stamped status words in the handle instead of clearing them per call;
 * three more groups target that state: calls queued back to back with no
 * synchronization (alternating 4- and 8-byte layouts, so the counters must
 * come back to 0 inside the kernels), stale stamps of the previous epoch
 * planted in every status slot, and the epoch wrap (the state aged to the
 * last epoch with stamps of epoch 0 planted: the wrapping call must clear
 * them). A user workspace full of 0xFF bytes covers the memset path.
 *
 * Last, random cases of auto's scan and reduce (random_cases: op, type,
 * size, placement drawn per case; CUOPS_TEST_RANDOM_CASES, default 150;
 * CUOPS_TEST_RANDOM_ONLY=1 runs them alone).
 *
 * Tolerances: integers and float min/max exact; f32 sum |out - ref| <=
 * 1e-5 * (running sum of |x|), f64 sum 1e-12 * (running sum of |x|).
 * Without a CUDA device every case is skipped and the test exits 0.
 *
 *   build/tests/test_gpu_scan                 everything
 *   CUOPS_TEST_SEED=123 build/tests/test_gpu_scan    reproduce a run
 */
#include <cuda_runtime.h>

#include "gpu_test_util.h"
/* the handle's scan state (h->scan_state, its layout) for the epoch tests */
#include "api/cuops_internal.h"
#include "cuda/scan/scan_state.h"

#define GUARD_ELEMS 16384 /* past the largest tile any variant uses */

static cuops_handle_t g_gpu, g_cpu;
/* CUOPS_TEST_VARIANT=prefix: only the named variants starting so (a
 * sanitizer run of one kernel family) */
static const char *g_only_variant;
static int variant_skipped(const char *name)
{
    return g_only_variant != NULL && strncmp(name, g_only_variant, strlen(g_only_variant)) != 0;
}
/* CUOPS_TEST_SHARD=i/N (scripts/run-tests.sh with CUOPS_TEST_SHARDS=N): the
 * full sweep (every variant at sizes up to 2^26) runs as N processes side by
 * side. Shard i takes the variants of index v with v % N == i of each sweep
 * (auto, v = 0, in shard 0); the cases that compare variants with one
 * another or with auto (reproducibility, auto's forms, the scan state, the
 * 2^31 + 7 case) run in shard 0 only. */
static int g_shard = 0, g_shards = 1;
static int shard_skipped(int v)
{
    return g_shards > 1 && v % g_shards != g_shard;
}
static int shard_parse(const char *s)
{
    int i = 0, n = 0;
    char end = 0;
    if (s == NULL) return 1;
    if (sscanf(s, "%d/%d%c", &i, &n, &end) != 2 || n < 1 || i < 0 || i >= n) return 0;
    g_shard = i;
    g_shards = n;
    return 1;
}
static const char *const *g_scan_variants;
static int g_scan_variant_count;
static const char *const *g_reduce_variants;
static int g_reduce_variant_count;

static const cuops_dtype_t k_types[] = {CUOPS_DTYPE_I32, CUOPS_DTYPE_I64, CUOPS_DTYPE_F32,
                                        CUOPS_DTYPE_F64};
static const cuops_reduce_op_t k_ops[] = {CUOPS_REDUCE_SUM, CUOPS_REDUCE_MIN, CUOPS_REDUCE_MAX};
static const char *op_name(cuops_reduce_op_t op)
{
    return op == CUOPS_REDUCE_SUM ? "sum" : op == CUOPS_REDUCE_MIN ? "min" : "max";
}
static const char *type_name(cuops_dtype_t t)
{
    switch (t) {
    case CUOPS_DTYPE_I32: return "i32";
    case CUOPS_DTYPE_I64: return "i64";
    case CUOPS_DTYPE_F32: return "f32";
    case CUOPS_DTYPE_F64: return "f64";
    default: return "?";
    }
}
static size_t elem_size(cuops_dtype_t t)
{
    return (t == CUOPS_DTYPE_I32 || t == CUOPS_DTYPE_F32) ? 4 : 8;
}
static int is_float(cuops_dtype_t t) { return t == CUOPS_DTYPE_F32 || t == CUOPS_DTYPE_F64; }
/* Poison byte: 0xFF bytes are a NaN in f32 and f64; 0xA5 is the int sentinel. */
static int poison_byte(cuops_dtype_t t) { return is_float(t) ? 0xFF : 0xA5; }

/* Fresh random input. Integer sums use the full range (so they wrap); min
 * and max get a drift so the running extreme keeps changing across tiles;
 * floats are in [-1, 1) (plus the drift for min/max). */
static void fill_input(void *p, cuops_dtype_t t, cuops_reduce_op_t op, size_t n)
{
    const double drift = op == CUOPS_REDUCE_MIN ? -0.25 : op == CUOPS_REDUCE_MAX ? 0.25 : 0.0;
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case CUOPS_DTYPE_I32:
            ((int32_t *)p)[i] = op == CUOPS_REDUCE_SUM
                                    ? (int32_t)(uint32_t)tu_rand_u64()
                                    : (int32_t)((int64_t)(tu_rand_u64() % 1000003) - 500000 +
                                                (int64_t)(drift * (double)i));
            break;
        case CUOPS_DTYPE_I64:
            ((int64_t *)p)[i] = op == CUOPS_REDUCE_SUM
                                    ? (int64_t)tu_rand_u64()
                                    : (int64_t)(tu_rand_u64() % 1000003) - 500000 +
                                          (int64_t)(drift * (double)i);
            break;
        case CUOPS_DTYPE_F32:
            ((float *)p)[i] = (float)(tu_rand_uniform(-1.0, 1.0) + drift * (double)i * 1e-3);
            break;
        case CUOPS_DTYPE_F64:
            ((double *)p)[i] = tu_rand_uniform(-1.0, 1.0) + drift * (double)i * 1e-3;
            break;
        default: break;
        }
    }
}

static int guard_intact(const unsigned char *p, size_t bytes, int byte)
{
    for (size_t i = 0; i < bytes; i++)
        if (p[i] != (unsigned char)byte) return 0;
    return 1;
}

/* Compare n results; returns the number of mismatches and prints the first few.
 * abs_sum: running sum of |x| per element (float sums), NULL otherwise. */
static size_t compare(const void *got, const void *ref, const double *abs_sum, cuops_dtype_t t,
                      cuops_reduce_op_t op, size_t n, const char *what)
{
    size_t bad = 0;
    const double rel = t == CUOPS_DTYPE_F32 ? 1e-5 : 1e-12;
    for (size_t i = 0; i < n; i++) {
        int ok;
        if (!is_float(t)) {
            ok = memcmp((const char *)got + i * elem_size(t), (const char *)ref + i * elem_size(t),
                        elem_size(t)) == 0;
        } else {
            const double g = tu_get(got, t, i), r = tu_get(ref, t, i);
            if (op == CUOPS_REDUCE_SUM)
                ok = fabs(g - r) <= rel * abs_sum[i]; /* false for NaN */
            else
                ok = g == r;
        }
        if (!ok) {
            if (bad < 5)
                fprintf(stderr, "  %s: [%zu] got %.17g ref %.17g\n", what, i, tu_get(got, t, i),
                        tu_get(ref, t, i));
            bad++;
        }
    }
    return bad;
}

/* ---- scan ----------------------------------------------------------------- */

/* Where each mode puts the input and the output. The misaligned modes cover
 * every path of the ring forms (scan_ring.cu, cuops_scan_ring_head and
 * cuops_scan_ring_head_apart): in and out at the same offset within 256
 * bytes (a head of 63 / 31 elements before the aligned body), agreeing only
 * within 16 bytes (a head of 3 / 1), not agreeing (auto's forms: in's body
 * from its 256-byte boundary, the stores realigned to out + head, 1, 2 or 3
 * elements past a 16-byte boundary for 4-byte types, 1 for 8-byte ones (the
 * "out two elements further" mode is 16 bytes further for those, so alike);
 * the other forms: `lookback`'s scalar path), in aligned with out one
 * element past, and misaligned in place. */
enum { MODE_OUT_OF_PLACE, MODE_IN_PLACE, MODE_MISALIGNED, MODE_MISALIGNED_16,
       MODE_MISALIGNED_APART, MODE_APART_2, MODE_APART_3, MODE_APART_IN_ALIGNED,
       MODE_IN_PLACE_MISALIGNED, MODE_COUNT };
static const char *const k_mode_names[] = {"out-of-place", "in-place", "misaligned",
                                           "misaligned, out 16 bytes further",
                                           "misaligned, out one element further",
                                           "misaligned, out two elements further",
                                           "misaligned, out three elements further",
                                           "in aligned, out one element past",
                                           "in place, misaligned"};
static int mode_in_place(int mode) { return mode == MODE_IN_PLACE || mode == MODE_IN_PLACE_MISALIGNED; }
/* bytes from the input base to in (out of place) */
static size_t mode_in_lead(int mode, size_t es)
{
    return mode == MODE_OUT_OF_PLACE || mode == MODE_APART_IN_ALIGNED ? 0 : es;
}
static int ring_fits(void);
/* The ring forms that give pairs disagreeing modulo 16 the realigned-store
 * path (auto's forms, scan_ring.cu; auto takes them where `ring` fits) */
static int variant_has_apart_path(const char *variant)
{
    if (strcmp(variant, "auto") == 0) return ring_fits();
    static const char *const forms[] = {"ring", "ring_lead2", "ring_lead2_fused",
                                        "ring_lead2_wide512"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (strcmp(variant, forms[i]) == 0) return 1;
    return 0;
}
/* bytes from the output base to out (in place: to in as well) */
static size_t mode_out_lead(int mode, size_t es)
{
    switch (mode) {
    case MODE_MISALIGNED: return es;
    case MODE_MISALIGNED_16: return es + 16;
    case MODE_MISALIGNED_APART: return 2 * es;
    case MODE_APART_2: return 3 * es;
    case MODE_APART_3: return 4 * es;
    case MODE_APART_IN_ALIGNED: return es;
    case MODE_IN_PLACE_MISALIGNED: return es;
    default: return 0;
    }
}

/* Whether the mode's in and out disagree modulo 16 bytes for elements of
 * es bytes (the realigned-store ring's placements; the bases are 256-byte
 * aligned) */
static int mode_apart(int mode, size_t es)
{
    return !mode_in_place(mode) && (mode_out_lead(mode, es) - mode_in_lead(mode, es)) % 16 != 0;
}
/* CUOPS_TEST_SCAN_APART=1 (a racecheck run of the realigned-store ring,
 * which a full quick sweep does not finish under the sanitizer): only the
 * placements where mode_apart holds, at a few sizes */
static int g_apart_only;

static void scan_case(cuops_dtype_t t, cuops_reduce_op_t op, int exclusive, size_t n, int all_modes)
{
    const size_t es = elem_size(t);
    const size_t out_bytes = (n + 4 + GUARD_ELEMS) * es + 16; /* the largest lead: 4 es or es + 16 */
    unsigned char *in = (unsigned char *)malloc((n + 1) * es);
    unsigned char *ref = (unsigned char *)malloc(n * es);
    unsigned char *got = (unsigned char *)malloc(out_bytes);
    double *abs_sum = NULL;
    void *d_in = NULL, *d_out = NULL;
    if (!in || !ref || !got || cudaMalloc(&d_in, (n + 1) * es) != cudaSuccess ||
        cudaMalloc(&d_out, out_bytes) != cudaSuccess) {
        SKIP("scan %s %s n=%zu: out of memory", type_name(t), op_name(op), n);
        goto done;
    }
    fill_input(in, t, op, n);
    CHECK_STATUS(cuops_scan(g_cpu, op, exclusive, t, (int64_t)n, in, ref), CUOPS_STATUS_SUCCESS);
    if (is_float(t) && op == CUOPS_REDUCE_SUM) {
        abs_sum = (double *)malloc(n * sizeof(double));
        double s = 0;
        for (size_t i = 0; i < n; i++) abs_sum[i] = (s += fabs(tu_get(in, t, i)));
    }
    for (int v = 0; v < g_scan_variant_count; v++) {
        const char *variant = g_scan_variants[v];
        if (variant_skipped(variant) || shard_skipped(v)) continue;
        cuops_options_t opt = {0};
        opt.variant = variant;
        for (int mode = 0; mode < MODE_COUNT; mode++) {
            if (mode != MODE_OUT_OF_PLACE && !all_modes && v != 0) continue;
            if (g_apart_only && !mode_apart(mode, es)) continue;
            char what[160];
            snprintf(what, sizeof what, "scan %s %s %s n=%zu variant=%s %s", type_name(t),
                     op_name(op), exclusive ? "exclusive" : "inclusive", n, variant,
                     k_mode_names[mode]);
            const int pb = poison_byte(t);
            cudaMemset(d_out, pb, out_bytes);
            const size_t lead = mode_out_lead(mode, es);
            unsigned char *dst = (unsigned char *)d_out + lead;
            const unsigned char *src =
                mode_in_place(mode) ? dst : (unsigned char *)d_in + mode_in_lead(mode, es);
            cudaMemcpy((void *)src, in, n * es, cudaMemcpyHostToDevice);
            cuops_status_t st = cuops_scan_ex(g_gpu, op, exclusive, t, (int64_t)n, src, dst, &opt);
            cudaError_t err = cudaDeviceSynchronize();
            CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess, "%s: %s (%s) %s", what,
                  cuops_status_string(st), cuops_last_error(g_gpu), cudaGetErrorString(err));
            if (st != CUOPS_STATUS_SUCCESS || err != cudaSuccess) continue;
            if (v != 0)
                CHECK(strstr(cuops_last_kernel(g_gpu), variant) != NULL,
                      "%s: ran '%s'", what, cuops_last_kernel(g_gpu));
            /* pairs that disagree modulo 16 take the realigned-store ring
             * where the form has it and n reaches past in's next 256-byte
             * boundary (the bases are cudaMalloc'd: 256-byte aligned) */
            const size_t in_lead = mode_in_lead(mode, es);
            if (mode_apart(mode, es) && variant_has_apart_path(variant) &&
                n > (256 - in_lead) % 256 / es)
                CHECK(strstr(cuops_last_kernel(g_gpu), "_out_shifted") != NULL,
                      "%s: ran '%s', not the realigned-store ring", what, cuops_last_kernel(g_gpu));
            cudaMemcpy(got, d_out, out_bytes, cudaMemcpyDeviceToHost);
            size_t bad = compare(got + lead, ref, abs_sum, t, op, n, what);
            CHECK(bad == 0, "%s: %zu of %zu elements wrong", what, bad, n);
            CHECK(guard_intact(got + lead + n * es, out_bytes - lead - n * es, pb),
                  "%s: wrote past the end", what);
            if (lead) CHECK(guard_intact(got, lead, pb), "%s: wrote before the start", what);
            if (!mode_in_place(mode) && n <= (1u << 20)) {
                /* the input of an out-of-place scan is left alone */
                unsigned char *back = (unsigned char *)malloc(n * es);
                cudaMemcpy(back, (const unsigned char *)src, n * es, cudaMemcpyDeviceToHost);
                CHECK(memcmp(back, in, n * es) == 0, "%s: input modified", what);
                free(back);
            }
        }
    }
done:
    cudaFree(d_in);
    cudaFree(d_out);
    free(in);
    free(ref);
    free(got);
    free(abs_sum);
}

/* ---- reduce ----------------------------------------------------------------- */

/* The input at 0, 1, .. 16 / es elements past a 256-byte base: the aligned
 * case, heads of 63-61 elements of 4 bytes (31 of 8) that the kernels fold
 * before their 256-byte aligned body, and a 16-byte aligned start that is
 * not 256-byte aligned (head 60 / 30). */
static void reduce_case(cuops_dtype_t t, cuops_reduce_op_t op, size_t n)
{
    const size_t es = elem_size(t);
    const int offsets = (int)(16 / es) + 1;
    unsigned char *in = (unsigned char *)malloc((n + offsets) * es);
    unsigned char ref[8], got[3 * 8];
    void *d_in = NULL, *d_out = NULL;
    if (!in || cudaMalloc(&d_in, (n + offsets) * es) != cudaSuccess ||
        cudaMalloc(&d_out, 3 * es) != cudaSuccess) {
        SKIP("reduce %s %s n=%zu: out of memory", type_name(t), op_name(op), n);
        goto done;
    }
    fill_input(in, t, op, n + offsets);
    CHECK_STATUS(cuops_reduce(g_cpu, op, t, (int64_t)n, in, ref), CUOPS_STATUS_SUCCESS);
    {
        double abs_sum = 0;
        for (size_t i = 0; i < n; i++) abs_sum += fabs(tu_get(in, t, i));
        for (int v = 0; v < g_reduce_variant_count; v++) {
            const char *variant = g_reduce_variants[v];
            if (variant_skipped(variant) || shard_skipped(v)) continue;
            cuops_options_t opt = {0};
            opt.variant = variant;
            for (int shift = 0; shift < offsets; shift++) {
                char what[160];
                snprintf(what, sizeof what, "reduce %s %s n=%zu variant=%s input %d elements past "
                         "a 256-byte base", type_name(t), op_name(op), n, variant, shift);
                const int pb = poison_byte(t);
                cudaMemset(d_out, pb, 3 * es);
                const unsigned char *src = (const unsigned char *)d_in + shift * es;
                cudaMemcpy((void *)src, in, n * es, cudaMemcpyHostToDevice);
                void *dst = (unsigned char *)d_out + es;
                cuops_status_t st = cuops_reduce_ex(g_gpu, op, t, (int64_t)n, src, dst, &opt);
                cudaError_t err = cudaDeviceSynchronize();
                CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess, "%s: %s (%s) %s", what,
                      cuops_status_string(st), cuops_last_error(g_gpu), cudaGetErrorString(err));
                if (st != CUOPS_STATUS_SUCCESS || err != cudaSuccess) continue;
                if (v != 0)
                    CHECK(strstr(cuops_last_kernel(g_gpu), variant) != NULL, "%s: ran '%s'", what,
                          cuops_last_kernel(g_gpu));
                cudaMemcpy(got, d_out, 3 * es, cudaMemcpyDeviceToHost);
                size_t bad = compare(got + es, ref, &abs_sum, t, op, 1, what);
                CHECK(bad == 0, "%s: wrong result", what);
                CHECK(guard_intact(got, es, pb) && guard_intact(got + 2 * es, es, pb),
                      "%s: wrote next to *out", what);
            }
        }
    }
done:
    cudaFree(d_in);
    cudaFree(d_out);
    free(in);
}

/* Whether the device holds one CTA of a ring form: its slots and 8 KB of
 * static arrays (the library's test, scan_ring.cu). `ring`: 3 x 32 KB;
 * `ring_lead2_wide512`, auto's form for 4-byte types from 4 MB: 4 x 48 KB. */
static int ring_slots_fit(int slot_bytes, int slots)
{
    int optin = 0;
    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
    return optin >= slots * slot_bytes + 8192;
}
static int ring_fits(void) { return ring_slots_fit(32768, 3); }
static int wide512_fits(void) { return ring_slots_fit(49152, 4); }

/* ---- bitwise reproducibility ------------------------------------------------- */

static void reproducibility(void)
{
    const size_t n = (size_t)1 << 24;
    float *in = (float *)malloc(n * sizeof(float));
    float *first = (float *)malloc(n * sizeof(float));
    float *again = (float *)malloc(n * sizeof(float));
    float *vfirst = (float *)malloc(n * sizeof(float));
    float *lbfirst = (float *)malloc(n * sizeof(float)); /* `lookback`'s bits */
    const int wide = wide512_fits(); /* auto is ring_lead2_wide512 at 2^24 */
    float *d_in = NULL, *d_out = NULL;
    if (!in || !first || !again || !vfirst || !lbfirst || cudaMalloc(&d_in, (n + 1) * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&d_out, (n + 1) * sizeof(float)) != cudaSuccess) {
        SKIP("reproducibility: out of memory");
        goto done;
    }
    tu_fill_float(in, CUOPS_DTYPE_F32, n, -1.0, 1.0);
    cudaMemcpy(d_in, in, n * sizeof(float), cudaMemcpyHostToDevice);
    /* aligned (vector path) and misaligned (scalar path), inclusive and exclusive */
    for (int misaligned = 0; misaligned < 2; misaligned++) {
        const float *src = d_in;
        float *dst = d_out + misaligned;
        if (misaligned) {
            cudaMemcpy(d_in + 1, in, n * sizeof(float), cudaMemcpyHostToDevice);
            src = d_in + 1;
        }
        /* Each variant must repeat its own bits. `lookback`, `lookback_wide`,
         * `lookback_smem` and the `ring` forms share the tile layout and
         * the definition of the float prefix (the left fold over 32 KB
         * tiles), so they must also match `lookback`'s bits exactly, the
         * ring forms only where aligned (misaligned, here in and out one
         * element past their bases, they scan a 255-byte head first and
         * their tiles start after it); auto is `ring_lead2_wide512` at 2^24
         * f32 where its slots fit (`ring` where not), aligned or not, and
         * must give that kernel's bits; the
         * persistent kernel's misaligned tiles, `lookback_smem_64k`'s
         * 64 KB tiles and the 24 KB / 16 KB tiles of `ring_4x24k` and
         * `ring_6x16k` group the sums differently, so they are only held to
         * themselves. `ring_polls_first` folds as `ring`: `lookback`'s bits.
         * The `ring_lead2` forms fold floats by a fixed tree (and have
         * 24 / 32 / 20 / 40 / 48 KB tiles): held to themselves. */
        static const char *const det_variants[] = {"auto", "lookback", "lookback_wide",
                                                   "lookback_persistent", "lookback_smem",
                                                   "lookback_smem_64k", "ring", "ring_deep",
                                                   "ring_polls_early", "ring_polls_late",
                                                   "ring_4x24k", "ring_6x16k",
                                                   "ring_polls_first", "ring_lead2",
                                                   "ring_lead2_fused", "ring_lead2_deep",
                                                   "ring_lead2_5x20k", "ring_lead2_deep512",
                                                   "ring_lead2_wide512", "ring_lead2_wide768",
                                                   "ring_lead2_wide1024", "ring_lead2_5x40k",
                                                   "ring_lead2_wide512_selfclear"};
        for (int exclusive = 0; exclusive < 2; exclusive++) {
            int have_lookback = 0;
            for (int v = 0; v < (int)(sizeof det_variants / sizeof det_variants[0]); v++) {
                if (v > 0 && variant_skipped(det_variants[v])) continue;
                cuops_options_t opt = {0};
                opt.variant = det_variants[v];
                int differing = 0, differs_from_ref = 0;
                for (int run = 0; run < 10; run++) {
                    cudaMemset(d_out, 0xFF, (n + 1) * sizeof(float));
                    cuops_status_t st = cuops_scan_ex(g_gpu, CUOPS_REDUCE_SUM, exclusive,
                                                      CUOPS_DTYPE_F32, (int64_t)n, src, dst, &opt);
                    CHECK_STATUS(st, CUOPS_STATUS_SUCCESS);
                    float *into = run == 0 ? (v == 0 ? first : vfirst) : again;
                    cudaMemcpy(into, dst, n * sizeof(float), cudaMemcpyDeviceToHost);
                    const float *mine = v == 0 ? first : vfirst;
                    if (run > 0 && memcmp(mine, again, n * sizeof(float)) != 0) differing++;
                }
                if (v == 1) have_lookback = 1, memcpy(lbfirst, vfirst, n * sizeof(float));
                /* the lookback group against `lookback` (and auto where it runs `lookback`'s kernel) */
                const int ring_form = (v >= 6 && v <= 9) || v == 12;
                if (have_lookback && (v == 2 || v == 4 || (ring_form && !misaligned)))
                    differs_from_ref = memcmp(lbfirst, vfirst, n * sizeof(float)) != 0;
                if ((v == 1 && !wide && !misaligned) || (v == 6 && !wide) || (v == 18 && wide))
                    differs_from_ref |= memcmp(first, vfirst, n * sizeof(float)) != 0;
                CHECK(differing == 0 && differs_from_ref == 0,
                      "f32 sum scan n=2^24 %s %s variant %s: %d of 9 reruns differ bitwise%s",
                      exclusive ? "exclusive" : "inclusive", misaligned ? "misaligned" : "aligned",
                      det_variants[v], differing,
                      differs_from_ref ? "; differs from auto or lookback" : "");
            }
        }
        float r0 = 0, r = 0;
        int differing = 0;
        for (int run = 0; run < 10; run++) {
            cuops_status_t st = cuops_reduce(g_gpu, CUOPS_REDUCE_SUM, CUOPS_DTYPE_F32, (int64_t)n, src, d_out);
            CHECK_STATUS(st, CUOPS_STATUS_SUCCESS);
            cudaMemcpy(run == 0 ? &r0 : &r, d_out, sizeof(float), cudaMemcpyDeviceToHost);
            if (run > 0 && memcmp(&r0, &r, sizeof r) != 0) differing++;
        }
        CHECK(differing == 0, "f32 sum reduce n=2^24 %s: %d of 9 reruns differ bitwise",
              misaligned ? "misaligned" : "aligned", differing);
        /* auto's rule (scan_dispatch.cu, reduce_auto_mode): up to 64 MB of
         * input (2^24 f32 is 64 MB) the stamped 16 KB-round kernel */
        /* misaligned input: the same kernel over its 16-byte aligned body */
        const char *want = "reduce_vectorized_stamped_vec16";
        CHECK(strcmp(cuops_last_kernel(g_gpu), want) == 0,
              "auto reduce f32 n=2^24 %s ran '%s', expected '%s'", misaligned ? "misaligned" : "aligned",
              cuops_last_kernel(g_gpu), want);
        /* each stamped form combines the same partials in the same order as
         * its ticket form on the same grid: the same bits, every run */
        static const char *const pairs[2][2] = {{"vectorized_interleaved", "vectorized_stamped"},
                                                {"vectorized_interleaved_x8", "vectorized_stamped_x8"}};
        for (int p = 0; p < 2; p++) {
            if (variant_skipped(pairs[p][1])) continue;
            float ticket_bits = 0, stamped_bits = 0;
            int mismatches = 0;
            for (int run = 0; run < 6; run++) {
                cuops_options_t opt = {0};
                opt.variant = pairs[p][run & 1];
                cudaMemset(d_out, 0xFF, sizeof(float));
                CHECK_STATUS(cuops_reduce_ex(g_gpu, CUOPS_REDUCE_SUM, CUOPS_DTYPE_F32, (int64_t)n,
                                             src, d_out, &opt), CUOPS_STATUS_SUCCESS);
                cudaMemcpy((run & 1) ? &stamped_bits : &ticket_bits, d_out, sizeof(float),
                           cudaMemcpyDeviceToHost);
                if ((run & 1) && memcmp(&ticket_bits, &stamped_bits, sizeof(float)) != 0) mismatches++;
            }
            CHECK(mismatches == 0, "f32 sum reduce n=2^24 %s: %s's bits differ from %s's in %d of "
                  "3 runs (%.9g vs %.9g)", misaligned ? "misaligned" : "aligned", pairs[p][1],
                  pairs[p][0], mismatches, stamped_bits, ticket_bits);
        }
    }
done:
    cudaFree(d_in);
    cudaFree(d_out);
    free(in);
    free(first);
    free(again);
    free(vfirst);
    free(lbfirst);
}

/* ---- the handle's scan state ------------------------------------------------ */

/* One scan on device buffers, checked against the CPU; `what` names it. */
typedef struct queued_scan {
    cuops_dtype_t t;
    size_t n;
    unsigned char *in, *ref;
    double *abs_sum;
    void *d_in, *d_out;
} queued_scan_t;

static int queued_scan_init(queued_scan_t *q, cuops_dtype_t t, size_t n)
{
    memset(q, 0, sizeof *q);
    q->t = t;
    q->n = n;
    const size_t es = elem_size(t);
    q->in = (unsigned char *)malloc(n * es);
    q->ref = (unsigned char *)malloc(n * es);
    if (!q->in || !q->ref || cudaMalloc(&q->d_in, n * es) != cudaSuccess ||
        cudaMalloc(&q->d_out, n * es) != cudaSuccess)
        return 0;
    fill_input(q->in, t, CUOPS_REDUCE_SUM, n);
    if (cuops_scan(g_cpu, CUOPS_REDUCE_SUM, 0, t, (int64_t)n, q->in, q->ref) != CUOPS_STATUS_SUCCESS)
        return 0;
    if (is_float(t)) {
        q->abs_sum = (double *)malloc(n * sizeof(double));
        if (!q->abs_sum) return 0;
        double s = 0;
        for (size_t i = 0; i < n; i++) q->abs_sum[i] = (s += fabs(tu_get(q->in, t, i)));
    }
    cudaMemcpy(q->d_in, q->in, n * es, cudaMemcpyHostToDevice);
    cudaMemset(q->d_out, poison_byte(t), n * es);
    return 1;
}

static void queued_scan_check(queued_scan_t *q, const char *what)
{
    const size_t es = elem_size(q->t);
    unsigned char *got = (unsigned char *)malloc(q->n * es);
    if (!got) return;
    cudaMemcpy(got, q->d_out, q->n * es, cudaMemcpyDeviceToHost);
    size_t bad = compare(got, q->ref, q->abs_sum, q->t, CUOPS_REDUCE_SUM, q->n, what);
    CHECK(bad == 0, "%s: %zu of %zu elements wrong", what, bad, q->n);
    free(got);
}

/* The sum of q's input by reduce `variant` (NULL: auto) into the first
 * element of q->d_out (poisoned first), checked against the last element of
 * the inclusive reference. */
static void queued_reduce_check(queued_scan_t *q, const char *variant, const char *what)
{
    const size_t es = elem_size(q->t);
    cuops_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.variant = variant;
    cudaMemset(q->d_out, poison_byte(q->t), es);
    cuops_status_t st = cuops_reduce_ex(g_gpu, CUOPS_REDUCE_SUM, q->t, (int64_t)q->n, q->d_in,
                                        q->d_out, variant ? &opt : NULL);
    cudaError_t err = cudaDeviceSynchronize();
    unsigned char got[8];
    cudaMemcpy(got, q->d_out, es, cudaMemcpyDeviceToHost);
    double abs_total = q->abs_sum ? q->abs_sum[q->n - 1] : 0;
    CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess &&
              compare(got, q->ref + (q->n - 1) * es, &abs_total, q->t, CUOPS_REDUCE_SUM, 1,
                      what) == 0,
          "%s: wrong result or %s (%s) %s", what, cuops_status_string(st), cuops_last_error(g_gpu),
          cudaGetErrorString(err));
}

static void queued_scan_free(queued_scan_t *q)
{
    cudaFree(q->d_in);
    cudaFree(q->d_out);
    free(q->in);
    free(q->ref);
    free(q->abs_sum);
}

/* The persistent look-back scan keeps epoch-stamped state on the handle
 * (no per-call memset); the tests of that state force it by name, since the
 * default scan is the non-persistent look-back. */
static cuops_status_t scan_persistent(cuops_reduce_op_t op, int exclusive, cuops_dtype_t t, int64_t n,
                                      const void *in, void *out)
{
    cuops_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.variant = "lookback_persistent";
    return cuops_scan_ex(g_gpu, op, exclusive, t, n, in, out, &opt);
}

/* Scans and reduces queued with no synchronization in between, alternating
 * the 4-byte (stamped words) and 8-byte (stamped flags) layouts and sizes
 * below and above one persistent wave: each kernel must leave the counters
 * at 0 and the epoch advanced for the next one. Each scan is followed by
 * auto's reduce (stamped partials in the status words, then the epoch
 * advanced) and the ticket form's (the ticket in the state's header). */
static void back_to_back(void)
{
    enum { CALLS = 8 };
    static const size_t sizes[CALLS] = {(3u << 21) + 1, 100003, 1u << 22, 5, 1u << 20, 4097,
                                        (1u << 22) + 77, 65536};
    queued_scan_t q[CALLS];
    int ok = 1;
    for (int i = 0; i < CALLS; i++) {
        const cuops_dtype_t t = (i & 1) ? CUOPS_DTYPE_F64 : ((i & 2) ? CUOPS_DTYPE_F32 : CUOPS_DTYPE_I32);
        ok &= queued_scan_init(&q[i], t, sizes[i]);
    }
    int64_t *d_red = NULL;
    if (!ok || cudaMalloc(&d_red, 2 * CALLS * sizeof(int64_t)) != cudaSuccess) {
        SKIP("back-to-back: out of memory");
    } else {
        cudaDeviceSynchronize();
        for (int rep = 0; rep < 2; rep++) {
            for (int i = 0; i < CALLS; i++) {
                CHECK_STATUS(scan_persistent(CUOPS_REDUCE_SUM, 0, q[i].t, (int64_t)q[i].n,
                                        q[i].d_in, q[i].d_out), CUOPS_STATUS_SUCCESS);
                /* a reduce between scans shares the state's header */
                CHECK_STATUS(cuops_reduce(g_gpu, CUOPS_REDUCE_SUM, q[i].t, (int64_t)q[i].n,
                                          q[i].d_in, d_red + i), CUOPS_STATUS_SUCCESS);
                cuops_options_t opt;
                memset(&opt, 0, sizeof opt);
                opt.variant = "vectorized_interleaved";
                CHECK_STATUS(cuops_reduce_ex(g_gpu, CUOPS_REDUCE_SUM, q[i].t, (int64_t)q[i].n,
                                             q[i].d_in, d_red + CALLS + i, &opt),
                             CUOPS_STATUS_SUCCESS);
            }
            cudaError_t err = cudaDeviceSynchronize();
            CHECK(err == cudaSuccess, "back-to-back: %s", cudaGetErrorString(err));
            for (int i = 0; i < CALLS; i++) {
                char what[96];
                snprintf(what, sizeof what, "back-to-back scan %s n=%zu round %d", type_name(q[i].t),
                         q[i].n, rep);
                queued_scan_check(&q[i], what);
                /* the reduce result equals the last inclusive-scan element */
                const size_t es = elem_size(q[i].t);
                for (int form = 0; form < 2; form++) {
                    unsigned char got[8];
                    cudaMemcpy(got, d_red + form * CALLS + i, es, cudaMemcpyDeviceToHost);
                    double abs_total = q[i].abs_sum ? q[i].abs_sum[q[i].n - 1] : 0;
                    snprintf(what, sizeof what, "back-to-back reduce %s %s n=%zu round %d",
                             form ? "ticket" : "auto", type_name(q[i].t), q[i].n, rep);
                    size_t bad = compare(got, q[i].ref + (q[i].n - 1) * es, &abs_total, q[i].t,
                                         CUOPS_REDUCE_SUM, 1, what);
                    CHECK(bad == 0, "%s: wrong result", what);
                }
                cudaMemset(q[i].d_out, poison_byte(q[i].t), q[i].n * es);
            }
        }
    }
    cudaFree(d_red);
    for (int i = 0; i < CALLS; i++) queued_scan_free(&q[i]);
}

/* Plant PREFIX stamps with random values in every status slot of the
 * handle's state, stamped `stamp`, then set the epoch to `epoch`. */
static int plant_state(unsigned stamp, unsigned epoch)
{
    struct cuops_handle *h = g_gpu;
    if (h->scan_state == NULL) return 0;
    const int64_t cap = h->scan_state_tiles;
    uint64_t *words = (uint64_t *)malloc((size_t)cap * 8);
    uint32_t *flags = (uint32_t *)malloc((size_t)cap * 4);
    uint64_t *values = (uint64_t *)malloc((size_t)cap * 8);
    if (!words || !flags || !values) {
        free(words); free(flags); free(values);
        return 0;
    }
    for (int64_t i = 0; i < cap; i++) {
        /* flags 1 and 2 (a scan's aggregate and prefix; 1 is also a published
         * reduce partial) */
        words[i] = ((uint64_t)((stamp << 2) | (1u + (unsigned)(i & 1))) << 32) | (uint32_t)tu_rand_u64();
        flags[i] = (stamp << 2) | 2u;
        values[i] = tu_rand_u64();
    }
    char *base = (char *)h->scan_state;
    cudaMemcpy(base + scan_state_words_offset(cap), words, (size_t)cap * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(base + scan_state_flags_offset(cap), flags, (size_t)cap * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(base + scan_state_aggr_offset(cap), values, (size_t)cap * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(base + scan_state_prefix_offset(cap), values, (size_t)cap * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(base + SCAN_STATE_EPOCH, &epoch, 4, cudaMemcpyHostToDevice);
    free(words); free(flags); free(values);
    return cudaDeviceSynchronize() == cudaSuccess;
}

static unsigned read_epoch(void)
{
    unsigned e = 0xffffffffu;
    cudaMemcpy(&e, (char *)g_gpu->scan_state + SCAN_STATE_EPOCH, 4, cudaMemcpyDeviceToHost);
    return e;
}

/* wrap == 0: stamps of the epoch just before the current one, which the
 * call must ignore. wrap == 1: the state aged to the last epoch before the
 * wrap with stamps of epoch 0 planted: the call at the last epoch ignores
 * them, then must clear them, since the next call runs at epoch 0. Each
 * round is a stamped reduce, then a scan: so it is the reduce that wraps,
 * and the scan at epoch 0 after it finds any stamp it failed to clear. */
static void planted_stamps(int wrap)
{
    static const cuops_dtype_t types[2] = {CUOPS_DTYPE_I32, CUOPS_DTYPE_F64};
    for (int ti = 0; ti < 2; ti++) {
        queued_scan_t q;
        if (!queued_scan_init(&q, types[ti], (3u << 21) + 1)) {
            SKIP("planted stamps: out of memory");
            queued_scan_free(&q);
            continue;
        }
        /* the state exists after one call */
        CHECK_STATUS(scan_persistent(CUOPS_REDUCE_SUM, 0, q.t, (int64_t)q.n, q.d_in, q.d_out),
                     CUOPS_STATUS_SUCCESS);
        cudaDeviceSynchronize();
        if (g_gpu->scan_state == NULL) {
            CHECK(0, "planted stamps: the persistent scan left no state on the handle");
            queued_scan_free(&q);
            continue;
        }
        const unsigned now = read_epoch();
        const unsigned epoch = wrap ? SCAN_EPOCH_MASK : (now == 0 ? 1u : now);
        const unsigned stamp = wrap ? 0u : epoch - 1;
        CHECK(plant_state(stamp, epoch), "planted stamps: could not write the state");
        for (int call = 0; call < 2; call++) {
            char what[96];
            snprintf(what, sizeof what, "%s stamps %s call %d", wrap ? "wrap" : "stale",
                     type_name(q.t), call);
            queued_reduce_check(&q, "vectorized_stamped", what);
            const unsigned after_reduce = read_epoch();
            const unsigned want_after_reduce = (epoch + 1 + 2 * (unsigned)call) & SCAN_EPOCH_MASK;
            CHECK(after_reduce == want_after_reduce, "%s: epoch %u after the reduce, want %u",
                  what, after_reduce, want_after_reduce);
            cudaMemset(q.d_out, poison_byte(q.t), q.n * elem_size(q.t));
            cuops_status_t st =
                scan_persistent(CUOPS_REDUCE_SUM, 0, q.t, (int64_t)q.n, q.d_in, q.d_out);
            cudaError_t err = cudaDeviceSynchronize();
            CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess, "%s: %s %s", what,
                  cuops_status_string(st), cudaGetErrorString(err));
            queued_scan_check(&q, what);
            const unsigned want = (epoch + 2 + 2 * (unsigned)call) & SCAN_EPOCH_MASK;
            const unsigned got = read_epoch();
            CHECK(got == want, "%s: epoch %u after the call, want %u", what, got, want);
        }
        queued_scan_free(&q);
    }
}

/* One handle moved between two streams with scans queued on both and no
 * host wait in between: cuops_set_stream orders the old stream's work first,
 * so the scans (auto and the persistent form, which share the handle's
 * status words and counters) neither corrupt each other nor hang. */
static void stream_switch(void)
{
    cudaStream_t s[2];
    if (cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking) != cudaSuccess ||
        cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking) != cudaSuccess) {
        SKIP("stream switch: no streams");
        return;
    }
    enum { CALLS = 6 };
    queued_scan_t q[CALLS];
    int ok = 1;
    for (int i = 0; i < CALLS; i++)
        ok &= queued_scan_init(&q[i], (i & 1) ? CUOPS_DTYPE_F32 : CUOPS_DTYPE_I32, (3u << 21) + 7 * i);
    if (!ok) {
        SKIP("stream switch: out of memory");
    } else {
        cudaDeviceSynchronize();
        for (int i = 0; i < CALLS; i++) {
            CHECK_STATUS(cuops_set_stream(g_gpu, s[i & 1]), CUOPS_STATUS_SUCCESS);
            const cuops_status_t st =
                i < 3 ? cuops_scan(g_gpu, CUOPS_REDUCE_SUM, 0, q[i].t, (int64_t)q[i].n, q[i].d_in, q[i].d_out)
                      : scan_persistent(CUOPS_REDUCE_SUM, 0, q[i].t, (int64_t)q[i].n, q[i].d_in, q[i].d_out);
            CHECK_STATUS(st, CUOPS_STATUS_SUCCESS);
        }
        cudaError_t err = cudaDeviceSynchronize();
        CHECK(err == cudaSuccess, "stream switch: %s", cudaGetErrorString(err));
        for (int i = 0; i < CALLS; i++) {
            char what[96];
            snprintf(what, sizeof what, "stream switch scan %d (%s)", i, type_name(q[i].t));
            queued_scan_check(&q[i], what);
        }
    }
    for (int i = 0; i < CALLS; i++) queued_scan_free(&q[i]);
    CHECK_STATUS(cuops_set_stream(g_gpu, NULL), CUOPS_STATUS_SUCCESS);
    cudaStreamDestroy(s[0]);
    cudaStreamDestroy(s[1]);
}

/* A user workspace (memset path) full of 0xFF bytes, then back to the
 * handle's own state. */
static void user_workspace(void)
{
    const size_t ws_bytes = (size_t)8 << 20;
    void *ws = NULL;
    if (cudaMalloc(&ws, ws_bytes) != cudaSuccess) {
        SKIP("user workspace: out of memory");
        return;
    }
    static const cuops_dtype_t types[2] = {CUOPS_DTYPE_F32, CUOPS_DTYPE_I64};
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0) {
            cudaMemset(ws, 0xFF, ws_bytes);
            CHECK_STATUS(cuops_set_workspace(g_gpu, ws, ws_bytes), CUOPS_STATUS_SUCCESS);
        } else {
            CHECK_STATUS(cuops_set_workspace(g_gpu, NULL, 0), CUOPS_STATUS_SUCCESS);
        }
        for (int ti = 0; ti < 2; ti++) {
            for (int rep = 0; rep < 2; rep++) {
                queued_scan_t q;
                if (!queued_scan_init(&q, types[ti], (3u << 21) + 1)) {
                    SKIP("user workspace: out of memory");
                    queued_scan_free(&q);
                    continue;
                }
                char what[96];
                snprintf(what, sizeof what, "%s workspace scan %s rep %d",
                         pass == 0 ? "user" : "own", type_name(q.t), rep);
                cuops_status_t st =
                    scan_persistent(CUOPS_REDUCE_SUM, 0, q.t, (int64_t)q.n, q.d_in, q.d_out);
                cudaError_t err = cudaDeviceSynchronize();
                CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess, "%s: %s (%s) %s", what,
                      cuops_status_string(st), cuops_last_error(g_gpu), cudaGetErrorString(err));
                queued_scan_check(&q, what);
                /* reduces into the first element of d_out: auto (stamped
                 * words in the cleared state), then the ticket form */
                for (int form = 0; form < 2; form++) {
                    snprintf(what, sizeof what, "%s workspace reduce %s %s rep %d",
                             pass == 0 ? "user" : "own", form ? "ticket" : "auto",
                             type_name(q.t), rep);
                    queued_reduce_check(&q, form ? "vectorized_interleaved" : NULL, what);
                }
                queued_scan_free(&q);
            }
        }
    }
    cudaFree(ws);
}

/* ---- n = 2^31 + 7 ----------------------------------------------------------- */

static __host__ __device__ uint32_t mix32(uint64_t i, uint32_t seed)
{
    uint32_t x = (uint32_t)i ^ (uint32_t)(i >> 32) * 0x9E3779B9u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

__global__ void fill_mix32(int32_t *p, int64_t n, uint32_t seed)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        p[i] = (int32_t)mix32((uint64_t)i, seed);
}

static void huge_case(void)
{
    const int64_t n = ((int64_t)1 << 31) + 7;
    const int64_t stride = 4096, tail = 10000;
    const int64_t samples = (n - 1) / stride + 1;
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    if (free_b < (size_t)n * 4 + ((size_t)512 << 20)) {
        SKIP("n = 2^31+7: %zu MB free on the device, %lld MB needed", free_b >> 20,
             (long long)(((size_t)n * 4 + ((size_t)512 << 20)) >> 20));
        return;
    }
    const uint32_t seed = (uint32_t)tu_rand_u64();
    /* host reference: inclusive running sums (wrapping) at the sampled indices */
    uint32_t *want_s = (uint32_t *)malloc(samples * 4), *want_t = (uint32_t *)malloc(tail * 4);
    uint32_t *got_s = (uint32_t *)malloc(samples * 4), *got_t = (uint32_t *)malloc(tail * 4);
    uint32_t *x_t = (uint32_t *)malloc(tail * 4);
    int32_t *d = NULL;
    if (!want_s || !want_t || !got_s || !got_t || !x_t ||
        cudaMalloc(&d, (size_t)n * 4) != cudaSuccess) {
        SKIP("n = 2^31+7: allocation failed");
        goto done;
    }
    {
        uint32_t run = 0;
        for (int64_t i = 0; i < n; i++) {
            const uint32_t x = mix32((uint64_t)i, seed);
            run += x;
            if (i % stride == 0) want_s[i / stride] = run;
            if (i >= n - tail) {
                want_t[i - (n - tail)] = run;
                x_t[i - (n - tail)] = x;
            }
        }
        const uint32_t total = run;

        for (int v = 0; v < g_reduce_variant_count; v++) {
            cuops_options_t opt = {0};
            opt.variant = g_reduce_variants[v];
            fill_mix32<<<4096, 256>>>(d, n, seed);
            int32_t *d_res = NULL;
            cudaMalloc(&d_res, 4);
            cuops_status_t st = cuops_reduce_ex(g_gpu, CUOPS_REDUCE_SUM, CUOPS_DTYPE_I32, n, d, d_res, &opt);
            cudaError_t err = cudaDeviceSynchronize();
            uint32_t got = 0;
            cudaMemcpy(&got, d_res, 4, cudaMemcpyDeviceToHost);
            cudaFree(d_res);
            CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess && got == total,
                  "reduce i32 sum n=2^31+7 variant=%s: %s %s got %u want %u", opt.variant,
                  cuops_status_string(st), cudaGetErrorString(err), got, total);
        }
        for (int v = 0; v < g_scan_variant_count; v++) {
            for (int exclusive = 0; exclusive < 2; exclusive++) {
                if (exclusive && v != 0) continue; /* exclusive: the default only */
                cuops_options_t opt = {0};
                opt.variant = g_scan_variants[v];
                fill_mix32<<<4096, 256>>>(d, n, seed);
                cuops_status_t st =
                    cuops_scan_ex(g_gpu, CUOPS_REDUCE_SUM, exclusive, CUOPS_DTYPE_I32, n, d, d, &opt);
                cudaError_t err = cudaDeviceSynchronize();
                CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess,
                      "scan i32 sum n=2^31+7 in place variant=%s: %s (%s) %s", opt.variant,
                      cuops_status_string(st), cuops_last_error(g_gpu), cudaGetErrorString(err));
                if (st != CUOPS_STATUS_SUCCESS || err != cudaSuccess) continue;
                cudaMemcpy2D(got_s, 4, d, stride * 4, 4, samples, cudaMemcpyDeviceToHost);
                cudaMemcpy(got_t, d + (n - tail), tail * 4, cudaMemcpyDeviceToHost);
                int64_t bad = 0, first_bad = -1;
                for (int64_t s = 0; s < samples; s++) {
                    /* exclusive = inclusive minus the element itself */
                    const uint32_t want =
                        exclusive ? want_s[s] - mix32((uint64_t)(s * stride), seed) : want_s[s];
                    if (got_s[s] != want) { bad++; if (first_bad < 0) first_bad = s * stride; }
                }
                for (int64_t k = 0; k < tail; k++) {
                    const uint32_t want = exclusive ? want_t[k] - x_t[k] : want_t[k];
                    if (got_t[k] != want) { bad++; if (first_bad < 0) first_bad = n - tail + k; }
                }
                CHECK(bad == 0, "scan i32 sum n=2^31+7 %s variant=%s: %lld sampled elements wrong, "
                      "first at %lld", exclusive ? "exclusive" : "inclusive", opt.variant,
                      (long long)bad, (long long)first_bad);
            }
        }
    }
done:
    cudaFree(d);
    free(want_s);
    free(want_t);
    free(got_s);
    free(got_t);
    free(x_t);
}

/* ---- 8-byte elements past 2^31 bytes -------------------------------------- */

__global__ void fill_mix64(int64_t *p, int64_t n, uint32_t seed, int as_double)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t v = (int32_t)mix32((uint64_t)i, seed);
        if (as_double) ((double *)p)[i] = (double)v;
        else p[i] = v;
    }
}

/* n = 2^28 + 5 elements of 8 bytes (2 GB): byte offsets past 2^31, which the
 * 4-byte cases reach only at 2^31 + 7 elements. Auto's i64 sum scan in place
 * (inclusive and exclusive) checked at every element, the i64 sum reduce and
 * an f64 max reduce (whole numbers: exact). */
static void large_8byte_case(void)
{
    const int64_t n = ((int64_t)1 << 28) + 5;
    const size_t bytes = (size_t)n * 8;
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    int64_t *d = NULL, *d_res = NULL;
    int64_t *got = (int64_t *)malloc(bytes);
    if (free_b < bytes + ((size_t)512 << 20) || !got || cudaMalloc(&d, bytes) != cudaSuccess ||
        cudaMalloc(&d_res, 8) != cudaSuccess) {
        SKIP("n = 2^28+5 of 8 bytes: %zu MB free on the device, or allocation failed",
             free_b >> 20);
        goto done;
    }
    {
        const uint32_t seed = (uint32_t)tu_rand_u64();
        int64_t total = 0;
        double maxv = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            const int64_t v = (int32_t)mix32((uint64_t)i, seed);
            total += v;
            if ((double)v > maxv) maxv = (double)v;
        }
        fill_mix64<<<4096, 256>>>(d, n, seed, 0);
        cuops_status_t st = cuops_reduce(g_gpu, CUOPS_REDUCE_SUM, CUOPS_DTYPE_I64, n, d, d_res);
        int64_t r = 0;
        cudaError_t err = cudaMemcpy(&r, d_res, 8, cudaMemcpyDeviceToHost);
        CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess && r == total,
              "reduce i64 sum n=2^28+5: %s %s got %lld want %lld", cuops_status_string(st),
              cudaGetErrorString(err), (long long)r, (long long)total);
        for (int exclusive = 0; exclusive < 2; exclusive++) {
            fill_mix64<<<4096, 256>>>(d, n, seed, 0);
            st = cuops_scan(g_gpu, CUOPS_REDUCE_SUM, exclusive, CUOPS_DTYPE_I64, n, d, d);
            err = cudaDeviceSynchronize();
            CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess,
                  "scan i64 sum n=2^28+5 %s: %s (%s) %s", exclusive ? "exclusive" : "inclusive",
                  cuops_status_string(st), cuops_last_error(g_gpu), cudaGetErrorString(err));
            if (st != CUOPS_STATUS_SUCCESS || err != cudaSuccess) continue;
            cudaMemcpy(got, d, bytes, cudaMemcpyDeviceToHost);
            int64_t run = 0, bad = 0, first_bad = -1;
            for (int64_t i = 0; i < n; i++) {
                const int64_t v = (int32_t)mix32((uint64_t)i, seed);
                const int64_t want = exclusive ? run : run + v;
                run += v;
                if (got[i] != want) { bad++; if (first_bad < 0) first_bad = i; }
            }
            CHECK(bad == 0, "scan i64 sum n=2^28+5 %s (kernel %s): %lld elements wrong, first at %lld",
                  exclusive ? "exclusive" : "inclusive", cuops_last_kernel(g_gpu), (long long)bad,
                  (long long)first_bad);
        }
        fill_mix64<<<4096, 256>>>(d, n, seed, 1);
        st = cuops_reduce(g_gpu, CUOPS_REDUCE_MAX, CUOPS_DTYPE_F64, n, d, d_res);
        double rm = 0.0;
        err = cudaMemcpy(&rm, d_res, 8, cudaMemcpyDeviceToHost);
        CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess && rm == maxv,
              "reduce f64 max n=2^28+5: %s %s got %.17g want %.17g", cuops_status_string(st),
              cudaGetErrorString(err), rm, maxv);
    }
done:
    cudaFree(d);
    cudaFree(d_res);
    free(got);
}

/* The auto scan for aligned pointers on a device that holds `ring`'s 96 KB
 * of slots (the H200 does): `ring_lead2_wide512` for 4-byte types from 4 MB
 * of input where its 192 KB fit (its bits), `ring` below (`lookback`'s bits:
 * same 32 KB tiles, same left-fold prefix); for pointers misaligned alike
 * (both one element past their bases), the same forms over the aligned body
 * (each form's own bits); for pointers that disagree modulo 16 bytes, the
 * same forms with their stores realigned (the forced form's bits on the same
 * pointers; `lookback`'s scalar kernels where `ring` does not fit). Checked on
 * each side of 4 MB and of 2^24 (the old 64 MB line). */
static void auto_dispatch(void)
{
    static const size_t sizes[3] = {((size_t)1 << 20) - 1000, (size_t)1 << 24, ((size_t)1 << 24) + 1000};
    const int ring = ring_fits();
    const int wide = wide512_fits();
    const size_t nmax = sizes[2];
    float *h = (float *)malloc(nmax * sizeof(float));
    float *a = (float *)malloc(nmax * sizeof(float));
    float *b = (float *)malloc(nmax * sizeof(float));
    float *d_in = NULL, *d_out = NULL;
    if (h == NULL || a == NULL || b == NULL ||
        cudaMalloc(&d_in, (nmax + 1) * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&d_out, (nmax + 2) * sizeof(float)) != cudaSuccess) {
        SKIP("auto dispatch: no memory for %zu floats", nmax);
        free(h); free(a); free(b); cudaFree(d_in); cudaFree(d_out);
        return;
    }
    fill_input(h, CUOPS_DTYPE_F32, CUOPS_REDUCE_SUM, nmax);
    static const char *const placement[3] = {"aligned", "misaligned alike", "misaligned apart"};
    for (int misaligned = 0; misaligned < 3; misaligned++) {
        float *src = d_in + (misaligned ? 1 : 0), *dst = d_out + misaligned;
        cudaMemcpy(src, h, nmax * sizeof(float), cudaMemcpyHostToDevice);
        for (int i = 0; i < 3; i++) {
            const size_t n = sizes[i];
            const int large = wide && n * sizeof(float) >= ((size_t)4 << 20);
            /* misaligned apart where `ring` does not fit: the size rule of
             * the look-back kernels, whose scalar path is `lookback`'s under
             * either name */
            const char *kernel =
                misaligned < 2 ? (large ? "scan_ring_lead2_wide512_vec16" : ring ? "scan_ring_vec16" : NULL)
                : large        ? "scan_ring_lead2_wide512_vec16_out_shifted"
                : ring         ? "scan_ring_vec16_out_shifted"
                : n * sizeof(float) > ((size_t)64 << 20) ? "scan_lookback_smem_64k_scalar"
                                                         : "scan_lookback_scalar";
            const char *same_bits = large ? "ring_lead2_wide512"
                                    : misaligned && ring ? "ring"
                                                         : "lookback";
            cudaMemset(d_out, 0xFF, (n + 2) * sizeof(float));
            CHECK_STATUS(cuops_scan(g_gpu, CUOPS_REDUCE_SUM, 0, CUOPS_DTYPE_F32, (int64_t)n, src, dst),
                         CUOPS_STATUS_SUCCESS);
            if (kernel != NULL)
                CHECK(strcmp(cuops_last_kernel(g_gpu), kernel) == 0,
                      "auto scan f32 n=%zu %s ran '%s', expected '%s'", n,
                      placement[misaligned], cuops_last_kernel(g_gpu), kernel);
            cudaMemcpy(a, dst, n * sizeof(float), cudaMemcpyDeviceToHost);
            cuops_options_t opt = {0};
            opt.variant = same_bits;
            cudaMemset(d_out, 0xFF, (n + 2) * sizeof(float));
            CHECK_STATUS(cuops_scan_ex(g_gpu, CUOPS_REDUCE_SUM, 0, CUOPS_DTYPE_F32, (int64_t)n, src, dst, &opt),
                         CUOPS_STATUS_SUCCESS);
            cudaMemcpy(b, dst, n * sizeof(float), cudaMemcpyDeviceToHost);
            CHECK(memcmp(a, b, n * sizeof(float)) == 0, "auto scan f32 n=%zu %s: bits differ from %s",
                  n, placement[misaligned], same_bits);
        }
    }
    free(h); free(a); free(b);
    cudaFree(d_in); cudaFree(d_out);
}

/* Auto's ring form by type and size (cuops_scan_ring_auto_form): 4-byte
 * types ring_lead2_wide512 from 4 MB of input (ring_lead2 from 256 MB where
 * its 192 KB of slots do not fit), `ring` below; i64 ring_lead2_fused and
 * f64 ring_lead2 from 128 MB. Checked by kernel name just below and at each
 * line (the values at these sizes: scan_case and huge_case); f32 at 256 MB
 * must give the large form's bits (its tiles and its tree fold group the
 * sums). */
static void auto_large_forms(void)
{
    if (!ring_fits()) {
        SKIP("auto large forms: the device does not hold ring's slots");
        return;
    }
    const int wide = wide512_fits();
    const char *large = wide ? "scan_ring_lead2_wide512_vec16" : "scan_ring_lead2_vec16";
    const char *large_variant = wide ? "ring_lead2_wide512" : "ring_lead2";
    const char *mid = wide ? "scan_ring_lead2_wide512_vec16" : "scan_ring_vec16"; /* 4-256 MB */
    const struct {
        cuops_dtype_t t;
        size_t n;
        const char *kernel;
    } cases[] = {
        {CUOPS_DTYPE_I32, ((size_t)1 << 20) - 1024, "scan_ring_vec16"},
        {CUOPS_DTYPE_I32, (size_t)1 << 20, mid},
        {CUOPS_DTYPE_I32, ((size_t)64 << 20) - 1024, mid},
        {CUOPS_DTYPE_I32, (size_t)64 << 20, large},
        {CUOPS_DTYPE_I32, (size_t)128 << 20, large},
        {CUOPS_DTYPE_F32, ((size_t)1 << 20) - 1024, "scan_ring_vec16"},
        {CUOPS_DTYPE_F32, (size_t)1 << 20, mid},
        {CUOPS_DTYPE_F32, (size_t)64 << 20, large},
        {CUOPS_DTYPE_I64, ((size_t)16 << 20) - 1024, "scan_ring_vec16"},
        {CUOPS_DTYPE_I64, (size_t)16 << 20, "scan_ring_lead2_fused_vec16"},
        {CUOPS_DTYPE_F64, ((size_t)16 << 20) - 1024, "scan_ring_vec16"},
        {CUOPS_DTYPE_F64, (size_t)16 << 20, "scan_ring_lead2_vec16"},
        {CUOPS_DTYPE_F64, (size_t)64 << 20, "scan_ring_lead2_vec16"},
    };
    const size_t max_bytes = (size_t)512 << 20;
    void *d_in = NULL, *d_out = NULL;
    unsigned char *a = (unsigned char *)malloc((size_t)256 << 20), *b = (unsigned char *)malloc((size_t)256 << 20);
    if (!a || !b || cudaMalloc(&d_in, max_bytes) != cudaSuccess || cudaMalloc(&d_out, max_bytes) != cudaSuccess) {
        SKIP("auto large forms: no memory for 2 x 512 MB");
        free(a); free(b); cudaFree(d_in); cudaFree(d_out);
        return;
    }
    cudaMemset(d_in, 0x3c, max_bytes); /* 0x3c3c3c3c: 0.0115 as f32, a valid value of every type */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t n = cases[c].n;
        const cuops_dtype_t t = cases[c].t;
        CHECK_STATUS(cuops_scan(g_gpu, CUOPS_REDUCE_SUM, 0, t, (int64_t)n, d_in, d_out), CUOPS_STATUS_SUCCESS);
        CHECK(strcmp(cuops_last_kernel(g_gpu), cases[c].kernel) == 0,
              "auto scan %s n=%zu ran '%s', expected '%s'", type_name(t), n, cuops_last_kernel(g_gpu),
              cases[c].kernel);
        if (t == CUOPS_DTYPE_F32 && n == ((size_t)64 << 20)) {
            cudaMemcpy(a, d_out, n * 4, cudaMemcpyDeviceToHost);
            cuops_options_t opt = {0};
            opt.variant = large_variant;
            CHECK_STATUS(cuops_scan_ex(g_gpu, CUOPS_REDUCE_SUM, 0, t, (int64_t)n, d_in, d_out, &opt),
                         CUOPS_STATUS_SUCCESS);
            cudaMemcpy(b, d_out, n * 4, cudaMemcpyDeviceToHost);
            CHECK(memcmp(a, b, n * 4) == 0, "auto scan f32 n=2^26: bits differ from %s", large_variant);
        }
    }
    free(a); free(b);
    cudaFree(d_in); cudaFree(d_out);
}

/* ---- random cases of auto -------------------------------------------------- */

/* Auto's scan picks a ring form by type and input bytes (the 4 MB and
 * 128 MB lines), a head scanned before an aligned body by where in and out
 * sit modulo 16 and 256 bytes, realigned stores where they disagree modulo
 * 16, `lookback`'s kernels where n is within the head; the reduce picks its
 * rounds by bytes. The sweeps above fix those at chosen points; each case
 * here draws them: op, type, inclusive or exclusive; a placement (aligned,
 * in place at any offset, in and out at the same offset modulo 256 bytes,
 * the same modulo 16 only, or apart, each within 256 bytes of its base); n
 * log-uniform to 2^25 (2^20 quick), within 3 of a power of two, of a
 * multiple of a tile or reduce round (16-64 KB) past in's head, or of a
 * whole wave of such tiles, or within three heads (0 included). The scan
 * must give the CPU's results (compare's rules), run the kernel
 * auto_scan_kernel names, leave the poison before and after the output
 * and, out of place, the input alone; the reduce of the same input must
 * give the CPU's result, run the kernel auto_reduce_kernel names and leave
 * the elements beside *out alone.
 *
 * Case i draws from its own seed (CUOPS_TEST_SEED and i): a failure,
 * printed with that seed and i, replays with the same CUOPS_TEST_SEED, and
 * shard s of N takes the cases with i % N == s. Cost on an H100 host: n
 * averages ~3M elements over the draws and the host work (fill, the CPU
 * scan and reduce, the copies, the compare) is ~12 ns per element, the GPU's
 * share negligible, so the default 150 cases take ~6 s (5.6 s measured). */
static uint64_t g_seed;

/* The kernel auto's scan runs (scan_auto, cuops_scan_ring_head,
 * cuops_scan_ring_auto_form): a ring form's vector kernel where `ring`
 * fits and n reaches past in's head (to its 16-byte boundary where in and
 * out agree only modulo 16, else to its 256-byte one; none where both are
 * aligned), realigned where they disagree modulo 16; NULL where `lookback`'s
 * kernels run instead (not named here). */
static const char *auto_scan_kernel(cuops_dtype_t t, size_t n, uintptr_t in, uintptr_t out, char *buf,
                                    size_t size)
{
    const size_t es = elem_size(t), bytes = n * es;
    const int apart = (in - out) % 16 != 0;
    const size_t to = in % 16 == 0 && out % 16 == 0 ? 0 : apart || (in - out) % 256 == 0 ? 256 : 16;
    if (!ring_fits() || (to ? (to - in % to) % to / es : 0) >= n) return NULL;
    const char *form = es == 8 ? (bytes < ((size_t)128 << 20) ? "ring"
                                  : t == CUOPS_DTYPE_F64      ? "ring_lead2"
                                                              : "ring_lead2_fused")
                       : bytes >= ((size_t)4 << 20) && wide512_fits() ? "ring_lead2_wide512"
                       : bytes >= ((size_t)256 << 20)                 ? "ring_lead2"
                                                                      : "ring";
    snprintf(buf, size, "scan_%s_vec16%s", form, apart ? "_out_shifted" : "");
    return buf;
}

/* The kernel auto's reduce runs (scan_dispatch.cu, reduce_auto_mode): the
 * stamped kernel, 16 KB rounds up to 64 MB of input and 32 KB rounds above;
 * named only from 2^20 elements, where it certainly runs with many CTAs. */
static const char *auto_reduce_kernel(cuops_dtype_t t, size_t n)
{
    if (n < ((size_t)1 << 20)) return NULL;
    return n * elem_size(t) > ((size_t)64 << 20) ? "reduce_vectorized_stamped_x8_vec16"
                                                 : "reduce_vectorized_stamped_vec16";
}

/* Buffers of the random cases, sized once for the largest n. */
typedef struct random_bufs {
    size_t nmax;
    unsigned char *in, *ref, *got, *back;
    double *abs_sum;
    unsigned char *d_in, *d_out, *d_red;
} random_bufs_t;

/* One case as drawn: in place, in and out are both d_out + out_off. */
typedef struct random_scan {
    cuops_dtype_t t;
    cuops_reduce_op_t op;
    int exclusive, in_place;
    int64_t n;
    size_t in_off, out_off; /* elements past the 256-byte aligned bases */
} random_scan_t;

static random_scan_t random_draw(int64_t nmax, int sms)
{
    random_scan_t r;
    memset(&r, 0, sizeof r);
    r.t = k_types[tu_rand_below(4)];
    r.op = k_ops[tu_rand_below(3)];
    r.exclusive = (int)tu_rand_below(2);
    const size_t es = elem_size(r.t), per256 = 256 / es;
    const int place = (int)tu_rand_below(5);
    r.in_place = place == 1;
    if (place == 1 || place == 2) { /* in place, or alike modulo 256 bytes */
        r.out_off = r.in_off = (size_t)tu_rand_below((int64_t)per256);
    } else if (place == 3) { /* alike modulo 16 bytes, not 256 */
        r.in_off = (size_t)tu_rand_below((int64_t)per256);
        r.out_off = (r.in_off + (size_t)(1 + tu_rand_below(15)) * (16 / es)) % per256;
    } else if (place == 4) { /* apart modulo 16 bytes */
        size_t d;
        do d = (size_t)(1 + tu_rand_below((int64_t)per256 - 1)); while (d * es % 16 == 0);
        r.in_off = (size_t)tu_rand_below((int64_t)per256);
        r.out_off = (r.in_off + d) % per256;
    }
    const int64_t head = (int64_t)((per256 - r.in_off) % per256); /* to in's 256-byte boundary */
    static const int64_t tile_kb[7] = {16, 20, 24, 32, 40, 48, 64};
    const int64_t tile = tile_kb[tu_rand_below(7)] * 1024 / (int64_t)es, d = tu_rand_below(7) - 3;
    const int64_t wave = tile * sms * (1 + tu_rand_below(2)); /* a grid of one or two CTAs per SM */
    int64_t n;
    switch (tu_rand_below(8)) {
    case 0: case 1: n = tu_rand_below(32) == 0 ? 0 : tu_rand_log(1, nmax); break;
    case 2: case 3: n = ((int64_t)1 << tu_rand_below(64 - __builtin_clzll((uint64_t)nmax))) + d; break;
    case 4: case 5: n = head + tile * tu_rand_log(1, nmax / tile) + d; break;
    case 6: n = head + wave * tu_rand_log(1, nmax / wave > 1 ? nmax / wave : 1) + d; break;
    default: n = tu_rand_below(3 * (int64_t)per256); break;
    }
    r.n = n < 0 ? 0 : n > nmax ? nmax : n;
    return r;
}

/* Runs case i as drawn; returns 1 when every check passed. */
static int random_case(int i, const random_bufs_t *b, int sms)
{
    const int failed = tu_failed;
    const random_scan_t r = random_draw((int64_t)b->nmax, sms);
    const cuops_dtype_t t = r.t;
    const cuops_reduce_op_t op = r.op;
    const int exclusive = r.exclusive, in_place = r.in_place;
    const int64_t n = r.n;
    const size_t es = elem_size(t), in_off = r.in_off, out_off = r.out_off;

    char what[200];
    snprintf(what, sizeof what, "random case %d of CUOPS_TEST_SEED=%llu: %s %s %s n=%lld, in +%zu, out +%zu "
             "elements%s", i, (unsigned long long)g_seed, type_name(t), op_name(op),
             exclusive ? "exclusive" : "inclusive", (long long)n, in_place ? out_off : in_off, out_off,
             in_place ? " (in place)" : "");
    fill_input(b->in, t, op, (size_t)n);
    CHECK_STATUS(cuops_scan(g_cpu, op, exclusive, t, n, b->in, b->ref), CUOPS_STATUS_SUCCESS);
    if (is_float(t) && op == CUOPS_REDUCE_SUM) {
        double sum = 0;
        for (int64_t k = 0; k < n; k++) b->abs_sum[k] = (sum += fabs(tu_get(b->in, t, (size_t)k)));
    }
    const int pb = poison_byte(t);
    const size_t bytes = (size_t)n * es, out_bytes = (out_off + (size_t)n + GUARD_ELEMS) * es;
    unsigned char *src = b->d_in + in_off * es, *dst = b->d_out + out_off * es;
    cudaMemset(b->d_out, pb, out_bytes);
    cudaMemcpy(src, b->in, bytes, cudaMemcpyHostToDevice); /* the reduce's input, in place or not */
    if (in_place) cudaMemcpy(dst, b->in, bytes, cudaMemcpyHostToDevice);
    cuops_status_t st = cuops_scan(g_gpu, op, exclusive, t, n, in_place ? dst : src, dst);
    cudaError_t err = cudaDeviceSynchronize();
    CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess, "%s: %s (%s) %s", what, cuops_status_string(st),
          cuops_last_error(g_gpu), cudaGetErrorString(err));
    if (st == CUOPS_STATUS_SUCCESS && err == cudaSuccess) {
        char want[80];
        const char *kernel = cuops_last_kernel(g_gpu);
        if (auto_scan_kernel(t, (size_t)n, (uintptr_t)(in_place ? dst : src), (uintptr_t)dst, want, sizeof want))
            CHECK(strcmp(kernel, want) == 0, "%s: ran '%s', not '%s'", what, kernel, want);
        cudaMemcpy(b->got, b->d_out, out_bytes, cudaMemcpyDeviceToHost);
        const size_t bad = compare(b->got + out_off * es, b->ref, b->abs_sum, t, op, (size_t)n, what);
        CHECK(bad == 0, "%s (kernel %s): %zu of %lld elements wrong", what, kernel, bad, (long long)n);
        CHECK(guard_intact(b->got, out_off * es, pb) &&
                  guard_intact(b->got + out_off * es + bytes, GUARD_ELEMS * es, pb),
              "%s (kernel %s): wrote before the start or past the end", what, kernel);
        if (!in_place) {
            cudaMemcpy(b->back, src, bytes, cudaMemcpyDeviceToHost);
            CHECK(memcmp(b->back, b->in, bytes) == 0, "%s (kernel %s): input modified", what, kernel);
        }
    }
    /* the reduce over the same input at in's offset */
    unsigned char rref[8], rgot[3 * 8];
    CHECK_STATUS(cuops_reduce(g_cpu, op, t, n, b->in, rref), CUOPS_STATUS_SUCCESS);
    cudaMemset(b->d_red, pb, 3 * es);
    st = cuops_reduce(g_gpu, op, t, n, src, b->d_red + es);
    err = cudaDeviceSynchronize();
    CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess, "%s, reduce: %s (%s) %s", what,
          cuops_status_string(st), cuops_last_error(g_gpu), cudaGetErrorString(err));
    if (st == CUOPS_STATUS_SUCCESS && err == cudaSuccess) {
        cudaMemcpy(rgot, b->d_red, 3 * es, cudaMemcpyDeviceToHost);
        const double abs_total = is_float(t) && op == CUOPS_REDUCE_SUM && n > 0 ? b->abs_sum[n - 1] : 0;
        CHECK(compare(rgot + es, rref, &abs_total, t, op, 1, what) == 0, "%s, reduce (kernel %s): wrong result",
              what, cuops_last_kernel(g_gpu));
        const char *want = auto_reduce_kernel(t, (size_t)n);
        if (want != NULL)
            CHECK(strcmp(cuops_last_kernel(g_gpu), want) == 0, "%s, reduce: ran '%s', not '%s'", what,
                  cuops_last_kernel(g_gpu), want);
        CHECK(guard_intact(rgot, es, pb) && guard_intact(rgot + 2 * es, es, pb), "%s, reduce: wrote next to *out",
              what);
    }
    return tu_failed == failed;
}

static void random_cases(int quick)
{
    const int cases = tu_random_cases(quick ? 15 : 150);
    random_bufs_t b;
    memset(&b, 0, sizeof b);
    b.nmax = quick ? ((size_t)1 << 20) + 3 : ((size_t)1 << 25) + 3;
    const size_t in_bytes = (64 + b.nmax) * 8, out_bytes = (64 + b.nmax + GUARD_ELEMS) * 8;
    int sms = 0, run = 0, passed = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    b.in = (unsigned char *)malloc(b.nmax * 8);
    b.ref = (unsigned char *)malloc(b.nmax * 8);
    b.back = (unsigned char *)malloc(b.nmax * 8);
    b.got = (unsigned char *)malloc(out_bytes);
    b.abs_sum = (double *)malloc(b.nmax * sizeof(double));
    if (!b.in || !b.ref || !b.back || !b.got || !b.abs_sum || cudaMalloc((void **)&b.d_in, in_bytes) != cudaSuccess ||
        cudaMalloc((void **)&b.d_out, out_bytes) != cudaSuccess || cudaMalloc((void **)&b.d_red, 3 * 8) != cudaSuccess) {
        SKIP("random cases: out of memory");
    } else {
        const uint64_t saved = tu_rng_state;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < cases; i++) {
            if (shard_skipped(i)) continue;
            tu_seed(tu_case_seed(g_seed, i));
            run++;
            passed += random_case(i, &b, sms > 0 ? sms : 132);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        tu_rng_state = saved;
        printf("random scan/reduce cases (auto): %d run, %d passed (%.1f s)\n", run, passed,
               (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    }
    free(b.in); free(b.ref); free(b.back); free(b.got); free(b.abs_sum);
    cudaFree(b.d_in); cudaFree(b.d_out); cudaFree(b.d_red);
}

int main(void)
{
    if (!tu_gpu_handle(&g_gpu)) return tu_finish("test_gpu_scan");
    CHECK_STATUS(cuops_create(&g_cpu, CUOPS_DEVICE_CPU), CUOPS_STATUS_SUCCESS);
    if (g_cpu == NULL) return tu_finish("test_gpu_scan");
    g_seed = tu_seed_from_env();

    CHECK_STATUS(cuops_variant_names("scan", &g_scan_variants, &g_scan_variant_count),
                 CUOPS_STATUS_SUCCESS);
    CHECK_STATUS(cuops_variant_names("reduce", &g_reduce_variants, &g_reduce_variant_count),
                 CUOPS_STATUS_SUCCESS);
    CHECK(g_scan_variant_count == 27 && strcmp(g_scan_variants[0], "auto") == 0,
          "scan variants: %d, first '%s'", g_scan_variant_count,
          g_scan_variant_count ? g_scan_variants[0] : "");
    CHECK(g_reduce_variant_count == 11 && strcmp(g_reduce_variants[0], "auto") == 0,
          "reduce variants: %d, first '%s'", g_reduce_variant_count,
          g_reduce_variant_count ? g_reduce_variants[0] : "");
    if (g_scan_variant_count < 1 || g_reduce_variant_count < 1) return tu_finish("test_gpu_scan");

    {   /* an unknown variant is refused and writes nothing */
        cuops_options_t opt = {0};
        opt.variant = "no_such_variant";
        int32_t *d = NULL;
        cudaMalloc(&d, 64 * sizeof(int32_t));
        CHECK(cuops_scan_ex(g_gpu, CUOPS_REDUCE_SUM, 0, CUOPS_DTYPE_I32, 64, d, d, &opt) !=
                  CUOPS_STATUS_SUCCESS, "unknown scan variant accepted");
        CHECK(cuops_reduce_ex(g_gpu, CUOPS_REDUCE_SUM, CUOPS_DTYPE_I32, 64, d, d, &opt) !=
                  CUOPS_STATUS_SUCCESS, "unknown reduce variant accepted");
        cudaFree(d);
    }

    /* CUOPS_TEST_QUICK=1 (compute-sanitizer runs): sizes up to 2^20 + 3 and
     * no 2^31 + 7 case; every variant, type, op and mode still runs. */
    const int quick = getenv("CUOPS_TEST_QUICK") != NULL;
    g_only_variant = getenv("CUOPS_TEST_VARIANT");
    if (!shard_parse(getenv("CUOPS_TEST_SHARD"))) {
        CHECK(0, "CUOPS_TEST_SHARD='%s': expected i/N with 0 <= i < N", getenv("CUOPS_TEST_SHARD"));
        return tu_finish("test_gpu_scan");
    }
    if (g_shards > 1) printf("shard %d of %d\n", g_shard, g_shards);
    g_apart_only = getenv("CUOPS_TEST_SCAN_APART") != NULL;
    if (g_apart_only) {
        /* a head only, one partial tile past the head, several ring tiles
         * (40000 elements: 160 / 320 KB), each with sum and max */
        static const size_t apart_sizes[] = {33, 4097, 40000};
        static const cuops_reduce_op_t apart_ops[] = {CUOPS_REDUCE_SUM, CUOPS_REDUCE_MAX};
        for (size_t s = 0; s < sizeof apart_sizes / sizeof apart_sizes[0]; s++)
            for (int ti = 0; ti < 4; ti++)
                for (int oi = 0; oi < 2; oi++)
                    for (int ex = 0; ex < 2; ex++)
                        scan_case(k_types[ti], apart_ops[oi], ex, apart_sizes[s], 1);
        cuops_destroy(g_gpu);
        cuops_destroy(g_cpu);
        return tu_finish("test_gpu_scan");
    }
    /* CUOPS_TEST_RANDOM_ONLY=1: the random cases alone (a longer search) */
    if (tu_env_flag("CUOPS_TEST_RANDOM_ONLY")) {
        if (!variant_skipped("auto")) random_cases(quick);
        cuops_destroy(g_gpu);
        cuops_destroy(g_cpu);
        return tu_finish("test_gpu_scan");
    }
    /* 3*2^21+1: 769 tiles of 8192, so each persistent CTA runs several, and
     * the wide look-back walks more than one group of 256 predecessors */
    /* 61440 +- 1: exact multiples of every ring form's tile (20, 24, 40 and
     * 48 KB for 4-byte types; half as many 8-byte elements) and one off */
    static const size_t scan_sizes[] = {1,      31,    32,    33,      4095,           4096,
                                        4097,   61439, 61440, 61441,   1u << 20,       (1u << 20) + 3,
                                        (3u << 21) + 1, 1u << 26};
    static const size_t quick_scan_sizes[] = {1, 33, 4097, (1u << 20) + 3};
    const size_t *sizes = quick ? quick_scan_sizes : scan_sizes;
    const size_t n_sizes = quick ? sizeof quick_scan_sizes / sizeof quick_scan_sizes[0]
                                 : sizeof scan_sizes / sizeof scan_sizes[0];
    for (size_t s = 0; s < n_sizes; s++)
        for (int ti = 0; ti < 4; ti++)
            for (int oi = 0; oi < 3; oi++)
                for (int ex = 0; ex < 2; ex++)
                    scan_case(k_types[ti], k_ops[oi], ex, sizes[s], sizes[s] < (1u << 26));

    /* 2049 and 4097: one 16 KB round of 8- / 4-byte elements and one more (a
     * two-CTA grid) */
    static const size_t reduce_sizes[] = {0, 1, 31, 32, 33, 2049, 4097, 1u << 20, (1u << 26) + 1};
    const size_t n_reduce = sizeof reduce_sizes / sizeof reduce_sizes[0] - (quick ? 1 : 0);
    for (size_t s = 0; s < n_reduce; s++)
        for (int ti = 0; ti < 4; ti++)
            for (int oi = 0; oi < 3; oi++) reduce_case(k_types[ti], k_ops[oi], reduce_sizes[s]);

    if (g_shard == 0) {
        reproducibility();
        auto_dispatch();
        if (!quick) auto_large_forms();
        back_to_back();
        planted_stamps(0);
        planted_stamps(1);
        user_workspace();
        stream_switch();
        if (!quick) huge_case();
        if (!quick) large_8byte_case();
    }
    if (!variant_skipped("auto")) random_cases(quick);

    cuops_destroy(g_gpu);
    cuops_destroy(g_cpu);
    return tu_finish("test_gpu_scan");
}
