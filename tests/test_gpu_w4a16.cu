/*
 * test_gpu_w4a16.cu - W4A16 GEMM (cuops_w4_prepack + cuops_gemm_w4a16) on the
 * GPU against an fp64 GEMM of the weight dequantized on the host with the
 * exact formula ((q - z) * s in fp32, s rounded to the activation type), and
 * the same round trip through the CPU backend.
 *
 * Covers f16 and bf16, group sizes 32/64/128/per-channel (also per-channel
 * with k not a multiple of 16), zeros and symmetric (NULL) weights, scales in
 * f16/bf16/f32, m in {1, 3, 16, 17, 64, 65, 300}, odd n and k, a weight with
 * many groups (k = 4096, group 32), ldx > k, ldy > n, a misaligned x, forced
 * split-K, and every variant from cuops_variant_names("w4a16"). The decode
 * kernels (w4a16_decode_warp for m <= 16, else w4a16_decode_stream) are
 * checked to be what auto runs where they serve the call, with ragged k under a 16-byte-aligned ldx (its cp.async
 * zero-fill), row tiles only partly inside n, forced splits 1 and 1000, and a
 * bitwise repeat of its in-kernel split-K reduction. y is
 * NaN-poisoned with a guard band before and after it and in the ldy padding;
 * any write outside y[0..m)[0..n) shows up as a changed poison word.
 * w4a16_decode_warp, w4a16_decode_bulk_ring and w4a16_decode_phase_ring
 * have their own sweeps (run_warp_tests, run_bulk_ring_tests,
 * run_phase_ring_tests; CUOPS_TEST_QUICK=1 keeps them to a few shapes).
 * Split-K calls of two handles on two streams at once give the bits of a
 * call alone (run_concurrent_handles_tests). Last, random shapes through
 * auto (run_random_tests: CUOPS_TEST_RANDOM_CASES, CUOPS_TEST_RANDOM_CASE;
 * CUOPS_TEST_RANDOM_ONLY=1 runs that section alone).
 *
 *   build/tests/test_gpu_w4a16          (CUOPS_TEST_SEED=... to replay)
 */
#include <cuda_runtime.h>

#include "gpu_test_util.h"
#include "w4a16_test_weight.h"

#define REL_TOL 1e-2
#define GUARD 256 /* poisoned elements before and after y */

/* Dense weight as the dequant formula gives it: (q - z) * s in fp32, s
 * rounded to act first. */
static float *dequant_reference(const host_weight_t *w, cuops_dtype_t act)
{
    return dequant_reference_rounded(w, act, 0);
}

/* fp64 reference y = x W^T, m x n, followed in the same allocation by the
 * term norms sqrt(sum_c (x_c w_c)^2) of every output: the scale on which the
 * rounding of its terms adds up when signs are random. */
static double *gemm_reference(const float *wd, int64_t n, int64_t k, const uint16_t *x, int64_t m,
                              int64_t ldx, cuops_dtype_t act)
{
    double *ref = (double *)malloc((size_t)(2 * m * n) * sizeof(double));
    double *xr = (double *)malloc((size_t)k * sizeof(double));
    for (int64_t i = 0; i < m; i++) {
        for (int64_t c = 0; c < k; c++) xr[c] = act_to_float(x[i * ldx + c], act);
        for (int64_t r = 0; r < n; r++) {
            const float *wr = wd + r * k;
            double s = 0.0, a = 0.0;
            for (int64_t c = 0; c < k; c++) {
                s += xr[c] * (double)wr[c];
                a += (xr[c] * (double)wr[c]) * (xr[c] * (double)wr[c]);
            }
            ref[i * n + r] = s;
            ref[m * n + i * n + r] = sqrt(a);
        }
    }
    free(xr);
    return ref;
}

/* ||y - ref|| / ||term norms|| over the m x n block, NaN count. For random
 * data the term norm of an output is about |y| on average, so this is as
 * strict as ||y - ref|| / ||ref|| on large shapes; but with few terms (n = 1,
 * k = 2) the sum can cancel, while the rounding of each term (the weight in
 * f16/bf16 or the scale applied in fp32 after the mma) stays relative to the
 * term. *outliers counts the outputs off by more than ELEM_TOL of their own
 * term norm plus 2^-7 of their value (y's rounding): the norm over the block
 * alone let one wrong row of W (a column of y) through at n ~ 10^4. The
 * terms' rounding gives ~2^-9 of the term norm, far inside the bound. */
#define ELEM_TOL 0.08
static double compare_y(const uint16_t *y, int64_t ldy, const double *ref, int64_t m, int64_t n,
                        cuops_dtype_t act, int64_t *nans, int64_t *outliers)
{
    double num = 0.0, den = 0.0;
    *nans = 0;
    *outliers = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t r = 0; r < n; r++) {
            double v = act_to_float(y[i * ldy + r], act);
            double e = ref[i * n + r];
            double a = ref[m * n + i * n + r];
            if (isnan(v)) {
                if (*nans == 0)
                    fprintf(stderr, "  first NaN at y[%lld][%lld]\n", (long long)i, (long long)r);
                (*nans)++;
                continue;
            }
            num += (v - e) * (v - e);
            den += a * a;
            if (fabs(v - e) > ELEM_TOL * a + ldexp(fabs(e), -7)) {
                if (*outliers == 0)
                    fprintf(stderr, "  first outlier at y[%lld][%lld]: %.6g, reference %.6g\n",
                            (long long)i, (long long)r, v, e);
                (*outliers)++;
            }
        }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}


/* ---- GPU ------------------------------------------------------------------ */

typedef struct gpu_weight {
    void *packed;
    size_t bytes;
} gpu_weight_t;

static int gpu_prepack(cuops_handle_t h, const host_weight_t *w, cuops_dtype_t act,
                       gpu_weight_t *out)
{
    out->packed = NULL;
    cuops_status_t st =
        cuops_w4_packed_size(h, w->n, w->k, w->group_size, act, &out->bytes);
    CHECK(st == CUOPS_STATUS_SUCCESS, "packed_size n=%lld k=%lld g=%lld: %s (%s)", (long long)w->n,
          (long long)w->k, (long long)w->group_size, cuops_status_string(st), cuops_last_error(h));
    if (st != CUOPS_STATUS_SUCCESS) return 0;
    size_t ns = (size_t)(w->n * w->num_groups);
    void *dq = NULL, *ds = NULL, *dz = NULL;
    if (cudaMalloc(&out->packed, out->bytes) != cudaSuccess ||
        cudaMalloc(&dq, (size_t)(w->n * w->ldq)) != cudaSuccess ||
        cudaMalloc(&ds, ns * scale_bytes(w->scale_type)) != cudaSuccess ||
        (w->zeros && cudaMalloc(&dz, ns) != cudaSuccess)) {
        CHECK(0, "cudaMalloc for prepack failed");
        return 0;
    }
    /* garbage in the packed buffer: prepack must write every byte the GEMM reads */
    cudaMemset(out->packed, 0xff, out->bytes);
    cudaMemcpy(dq, w->qweight, (size_t)(w->n * w->ldq), cudaMemcpyHostToDevice);
    cudaMemcpy(ds, w->scales, ns * scale_bytes(w->scale_type), cudaMemcpyHostToDevice);
    if (dz) cudaMemcpy(dz, w->zeros, ns, cudaMemcpyHostToDevice);
    st = cuops_w4_prepack(h, w->n, w->k, w->group_size, dq, w->ldq, ds, w->scale_type, dz, act,
                          out->packed);
    CHECK(st == CUOPS_STATUS_SUCCESS, "prepack: %s (%s)", cuops_status_string(st),
          cuops_last_error(h));
    cudaError_t ce = cudaDeviceSynchronize();
    CHECK(ce == cudaSuccess, "prepack sync: %s", cudaGetErrorString(ce));
    cudaFree(dq);
    cudaFree(ds);
    cudaFree(dz);
    return st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess;
}

typedef struct gemm_case {
    int64_t m, ldx_pad, ldy_pad;
    int x_offset;         /* elements: 1 makes x only 2-byte aligned */
    const char *variant;  /* NULL = plain call */
    int split_k;
    int repeat;           /* run twice, y must be bitwise identical */
    const char *same_as;  /* also run this variant: y must be bitwise identical */
} gemm_case_t;

/* What w4a16_decode_stream serves (w4a16_dispatch.cu): m <= 64, group_size a
 * multiple of 64 or one group per row, x 16-byte aligned, ldx % 8 == 0. */
static int stream_serves(int64_t m, int64_t k, int64_t gs, int64_t ldx, int x_offset)
{
    return m <= 64 && (gs % 64 == 0 || gs >= k) && x_offset == 0 && ldx % 8 == 0;
}

/* What w4a16_decode_warp serves (w4a16_decode_warp.cu): m <= 16, any group
 * size of the layout, x 16-byte aligned, ldx % 8 == 0. */
static int warp_serves(int64_t m, int64_t ldx, int x_offset)
{
    return m <= 16 && x_offset == 0 && ldx % 8 == 0;
}

static int g_sm_major; /* the device's compute capability (major) */
static int g_smem_optin; /* the device's per-block opt-in shared memory */
static int g_num_sms;    /* the device's SM count */

/* The group sizes the two ring kernels serve (w4_tiles_per_group_log2 >= 0):
 * 64 * 2^p, or one group per row. */
static int group_by_shift(int64_t k, int64_t gs)
{
    if (gs >= k) return 1;
    if (gs % 64 != 0) return 0;
    const int64_t tpg = gs / 64;
    return (tpg & (tpg - 1)) == 0;
}

/* w4a16_decode_bulk_ring's shared memory beside its ring (w4b_fixed_smem):
 * x, the partial slots and, in the _xsum form, the x sums (64 bytes per 64-k
 * tile), plus the 512 bytes kept out of the budget */
static int64_t bulk_ring_fixed_smem(int64_t m, int64_t k, int xsum)
{
    return m * ((k + 63) / 64) * 128 + 4 * 16 * m * 64 + (xsum ? ((k + 63) / 64) * 64 : 0) + 512;
}

/* What w4a16_decode_bulk_ring (and _w8, _xsum) serves (w4a16_decode_bulk_ring.cu):
 * sm_90, m <= 8, group_size 64 * 2^p or one group per row, x 16-byte
 * aligned, ldx % 8 == 0, and x (m * ceil(k/64) * 128 bytes) with the 16-warp
 * form's four partial slots, 3 ring stages of 35456 bytes and 512 bytes of
 * slack in the per-block shared memory. */
static int bulk_ring_serves(int64_t m, int64_t k, int64_t gs, int64_t ldx, int x_offset, int xsum)
{
    if (g_sm_major != 9 || m > 8 || x_offset != 0 || ldx % 8 != 0) return 0;
    if (!group_by_shift(k, gs)) return 0;
    return bulk_ring_fixed_smem(m, k, xsum) + 3 * 35456 <= g_smem_optin;
}

/* Where auto takes it (w4a16_decode_bulk_ring_auto). 0: not taken; 1: the
 * plain form, where it serves the call, the strips are at least 10 per SM
 * and the ring gets 4 stages or more; 2: the _xsum form where it keeps 4
 * stages, on those strips for m <= 3, and for m <= 2 also where k >= 4096,
 * each CTA gets >= 2 strips and the CTAs fill >= 31/32 of the SMs. */
static int bulk_ring_auto(int64_t m, int64_t n, int64_t k, int64_t gs, int64_t ldx, int x_offset,
                          int split_k)
{
    if (split_k > 0 || !bulk_ring_serves(m, k, gs, ldx, x_offset, 0)) return 0;
    const int64_t strips = (n + 15) / 16, sms = g_num_sms;
    const int many = strips >= 10 * sms;
    const int64_t per_cta = (strips + sms - 1) / sms, ctas = (strips + per_cta - 1) / per_cta;
    const int few_ok = m <= 2 && k >= 4096 && per_cta >= 2 && ctas * 32 >= sms * 31;
    if (((many && m <= 3) || few_ok) && (g_smem_optin - bulk_ring_fixed_smem(m, k, 1)) / 35456 >= 4)
        return 2;
    return many && (g_smem_optin - bulk_ring_fixed_smem(m, k, 0)) / 35456 >= 4 ? 1 : 0;
}
/* What w4a16_decode_phase_ring (and _w8) serves: sm_90, m <= 16, group_size
 * 64 * 2^p or one group per row (any x alignment: x that TMA cannot read in
 * place is packed first; three stages always fit beside x's phase slots). */
static int phase_ring_serves(int64_t m, int64_t k, int64_t gs)
{
    return g_sm_major == 9 && m <= 16 && group_by_shift(k, gs);
}
/* Where auto takes it (w4a16_decode_phase_ring_auto): 5 <= m <= 16, it
 * serves the call, no split_k, and each CTA gets >= 3 strips or k <= 4096,
 * or (m > 8) its K split over clusters of 2 holds: each CTA's strips (a
 * pass's at most, 8) times 2 CTAs per cluster fill the SMs at most once
 * (for m <= 8 only where bulk_ring_auto does not hold: gpu_gemm_check). */
static int phase_ring_auto(int64_t m, int64_t n, int64_t k, int64_t gs, int split_k)
{
    if (m < 5 || split_k > 0 || !phase_ring_serves(m, k, gs)) return 0;
    const int64_t sms = g_num_sms > 0 ? g_num_sms : 132;
    const int64_t strips = (n + 15) / 16;
    const int64_t per_cta = (strips + sms - 1) / sms;
    if (per_cta >= 3 || (k + 63) / 64 <= 64) return 1;
    if (m <= 8) return 0;
    int64_t per2 = (2 * strips + sms - 1) / sms;
    if (per2 > 8) per2 = 8;
    return 2 * ((strips + per2 - 1) / per2) <= sms;
}
/* CUOPS_TEST_VARIANT=name: only the calls that force that variant (a
 * sanitizer run of one kernel) */
static const char *g_only_variant;

/* Run the call again into a poisoned y (with options opt, or the plain call
 * when opt is NULL; `what` names the run in a failure) and count the elements
 * of y, guard bands included, whose bits differ from want; -1 when the call
 * or its sync failed (checked here). */
static int64_t rerun_differ(cuops_handle_t h, const host_weight_t *w, const gpu_weight_t *gw,
                            cuops_dtype_t act, int64_t m, const uint16_t *dx, int64_t ldx,
                            void *dy_base, uint16_t *dy, int64_t ldy, size_t yelems,
                            const cuops_options_t *opt, const uint16_t *want, const char *what)
{
    uint16_t *y2 = (uint16_t *)malloc(yelems * 2);
    tu_poison(y2, act, yelems);
    cudaMemcpy(dy_base, y2, yelems * 2, cudaMemcpyHostToDevice);
    const cuops_status_t st =
        opt ? cuops_gemm_w4a16_ex(h, m, w->n, w->k, w->group_size, dx, ldx, gw->packed, dy, ldy,
                                  act, opt)
            : cuops_gemm_w4a16(h, m, w->n, w->k, w->group_size, dx, ldx, gw->packed, dy, ldy, act);
    const cudaError_t ce = cudaDeviceSynchronize();
    CHECK(st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess, "%s run: %s / %s (%s)", what,
          cuops_status_string(st), cudaGetErrorString(ce), cuops_last_error(h));
    int64_t differ = -1;
    if (st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess) {
        cudaMemcpy(y2, dy_base, yelems * 2, cudaMemcpyDeviceToHost);
        differ = 0;
        for (size_t i = 0; i < yelems; i++) differ += y2[i] != want[i];
    }
    free(y2);
    return differ;
}

static void gpu_gemm_check(cuops_handle_t h, const host_weight_t *w, const float *wd,
                           const gpu_weight_t *gw, cuops_dtype_t act, gemm_case_t c)
{
    if (g_only_variant && (!c.variant || strcmp(c.variant, g_only_variant) != 0)) return;
    int64_t m = c.m, n = w->n, k = w->k;
    int64_t ldx = k + c.ldx_pad, ldy = n + c.ldy_pad;
    size_t xelems = (size_t)(m * ldx);
    uint16_t *x = (uint16_t *)malloc(xelems * 2);
    tu_fill_float(x, act, xelems, -1.0, 1.0);
    size_t yelems = (size_t)(m * ldy) + 2 * GUARD;
    uint16_t *y = (uint16_t *)malloc(yelems * 2);
    tu_poison(y, act, yelems);
    uint16_t poison = y[0];

    void *dx_base = NULL, *dy_base = NULL;
    if (cudaMalloc(&dx_base, (xelems + 8) * 2) != cudaSuccess ||
        cudaMalloc(&dy_base, yelems * 2) != cudaSuccess) {
        CHECK(0, "cudaMalloc for gemm failed");
        free(x);
        free(y);
        return;
    }
    uint16_t *dx = (uint16_t *)dx_base + c.x_offset;
    uint16_t *dy = (uint16_t *)dy_base + GUARD;
    cudaMemcpy(dx, x, xelems * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dy_base, y, yelems * 2, cudaMemcpyHostToDevice);

    cuops_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.variant = c.variant;
    opt.split_k = c.split_k;
    cuops_status_t st = (c.variant || c.split_k)
                            ? cuops_gemm_w4a16_ex(h, m, n, k, w->group_size, dx, ldx, gw->packed,
                                                  dy, ldy, act, &opt)
                            : cuops_gemm_w4a16(h, m, n, k, w->group_size, dx, ldx, gw->packed, dy,
                                               ldy, act);
    const char *vname = c.variant ? c.variant : "(plain)";
    const int serves = stream_serves(m, k, w->group_size, ldx, c.x_offset);
    int refused = 0;
    if (c.variant && strcmp(c.variant, "w4a16_decode_splitk") == 0) refused = m > 64;
    if (c.variant && strcmp(c.variant, "w4a16_decode_stream") == 0) refused = !serves;
    const int is_warp = c.variant && strcmp(c.variant, "w4a16_decode_warp") == 0;
    if (is_warp) refused = !warp_serves(m, ldx, c.x_offset);
    /* the fused prefill kernels: sm_90, a group a multiple of 64 or one per row */
    const int is_fused = c.variant && strncmp(c.variant, "w4a16_prefill_wgmma", 19) == 0;
    if (is_fused)
        refused = !(g_sm_major == 9 && (w->group_size % 64 == 0 || w->group_size >= k));
    /* the decode kernel on wgmma: the same, and m <= 64 */
    const int is_dwgmma = c.variant && strncmp(c.variant, "w4a16_decode_wgmma", 18) == 0;
    if (is_dwgmma)
        refused = !(g_sm_major == 9 && m <= 64 && (w->group_size % 64 == 0 || w->group_size >= k));
    const int is_bulk = c.variant && strncmp(c.variant, "w4a16_decode_bulk_ring", 22) == 0;
    if (is_bulk)
        refused = !bulk_ring_serves(m, k, w->group_size, ldx, c.x_offset,
                                    strcmp(c.variant, "w4a16_decode_bulk_ring_xsum") == 0);
    const int is_phase = c.variant && strncmp(c.variant, "w4a16_decode_phase_ring", 23) == 0;
    if (is_phase) refused = !phase_ring_serves(m, k, w->group_size);
    if (refused) {
        CHECK(st == CUOPS_STATUS_NOT_SUPPORTED,
              "%s with m=%lld k=%lld g=%lld ldx=%lld xoff=%d should be NOT_SUPPORTED, got %s",
              vname, (long long)m, (long long)k, (long long)w->group_size, (long long)ldx,
              c.x_offset, cuops_status_string(st));
    } else {
        CHECK(st == CUOPS_STATUS_SUCCESS, "gemm_w4a16 %s m=%lld n=%lld k=%lld g=%lld: %s (%s)",
              vname, (long long)m, (long long)n, (long long)k, (long long)w->group_size,
              cuops_status_string(st), cuops_last_error(h));
    }
    /* auto picks the producer-fed ring for m <= 8 on many strips
     * (bulk_ring_auto), the phase ring for 5 <= m <= 16 (phase_ring_auto),
     * else the per-warp kernel for m <= 16 where it serves the call, else
     * the streaming kernel wherever that one serves it */
    const int is_auto = !c.variant || strcmp(c.variant, "auto") == 0;
    const int auto_bulk =
        is_auto ? bulk_ring_auto(m, n, k, w->group_size, ldx, c.x_offset, c.split_k) : 0;
    const int auto_phase = is_auto && !auto_bulk && phase_ring_auto(m, n, k, w->group_size, c.split_k);
    const int auto_warp = is_auto && !auto_bulk && !auto_phase && warp_serves(m, ldx, c.x_offset);
    if (st == CUOPS_STATUS_SUCCESS && auto_phase)
        CHECK(strcmp(cuops_last_kernel(h), "w4a16_decode_phase_ring") == 0,
              "%s m=%lld n=%lld k=%lld g=%lld ran %s, expected w4a16_decode_phase_ring", vname,
              (long long)m, (long long)n, (long long)k, (long long)w->group_size,
              cuops_last_kernel(h));
    if (st == CUOPS_STATUS_SUCCESS && auto_bulk) {
        const char *want = auto_bulk == 2 ? "w4a16_decode_bulk_ring_xsum" : "w4a16_decode_bulk_ring";
        CHECK(strcmp(cuops_last_kernel(h), want) == 0,
              "%s m=%lld n=%lld k=%lld g=%lld ran %s, expected %s", vname, (long long)m,
              (long long)n, (long long)k, (long long)w->group_size, cuops_last_kernel(h), want);
    }
    if (st == CUOPS_STATUS_SUCCESS && auto_warp)
        CHECK(strncmp(cuops_last_kernel(h), "w4a16_decode_warp_", 18) == 0,
              "%s m=%lld k=%lld g=%lld ldx=%lld ran %s, expected w4a16_decode_warp_*", vname,
              (long long)m, (long long)k, (long long)w->group_size, (long long)ldx,
              cuops_last_kernel(h));
    /* auto for the other m <= 64: the wgmma decode kernel on sm_90 where it
     * serves the call */
    const int dwgmma_serves =
        g_sm_major == 9 && m <= 64 && (w->group_size % 64 == 0 || w->group_size >= k);
    if (st == CUOPS_STATUS_SUCCESS && is_auto && !auto_warp && !auto_bulk && !auto_phase &&
        dwgmma_serves)
        CHECK(strcmp(cuops_last_kernel(h), "w4a16_decode_wgmma") == 0,
              "auto m=%lld k=%lld g=%lld ran %s, expected w4a16_decode_wgmma", (long long)m,
              (long long)k, (long long)w->group_size, cuops_last_kernel(h));
    if (st == CUOPS_STATUS_SUCCESS && serves && !auto_warp && !auto_bulk && !auto_phase &&
        ((is_auto && !dwgmma_serves) || (c.variant && strcmp(c.variant, "w4a16_decode_stream") == 0)))
        CHECK(strncmp(cuops_last_kernel(h), "w4a16_stream_", 13) == 0,
              "%s m=%lld k=%lld g=%lld ldx=%lld ran %s, expected w4a16_stream_*", vname,
              (long long)m, (long long)k, (long long)w->group_size, (long long)ldx,
              cuops_last_kernel(h));
    /* auto where none of those serves: w4a16_decode_splitk for m <= 64; past
     * that, from m = 256 on sm_90, the fused prefill kernel where its group
     * rule holds, else w4a16_dequant_gemm; else w4a16_mma (decode_splitk and
     * mma both run as w4a16_mma_splitk_*) */
    if (st == CUOPS_STATUS_SUCCESS && is_auto && !auto_warp && !auto_bulk && !auto_phase &&
        !dwgmma_serves && !serves) {
        const char *want = !(m >= 256 && g_sm_major == 9) ? "w4a16_mma_splitk_"
                           : (w->group_size % 64 == 0 || w->group_size >= k)
                               ? "w4a16_prefill_wgmma_ahead"
                               : "w4a16_dequant_gemm";
        CHECK(strncmp(cuops_last_kernel(h), want, strlen(want)) == 0,
              "auto m=%lld n=%lld k=%lld g=%lld ran %s, expected %s*", (long long)m, (long long)n,
              (long long)k, (long long)w->group_size, cuops_last_kernel(h), want);
    }
    /* a forced variant runs a kernel named after it */
    if (st == CUOPS_STATUS_SUCCESS && is_warp)
        CHECK(strstr(cuops_last_kernel(h), "w4a16_decode_warp") != NULL,
              "w4a16_decode_warp m=%lld ran %s", (long long)m, cuops_last_kernel(h));
    if (st == CUOPS_STATUS_SUCCESS && is_fused)
        CHECK(strcmp(cuops_last_kernel(h), c.variant) == 0, "%s m=%lld ran %s", c.variant,
              (long long)m, cuops_last_kernel(h));
    if (st == CUOPS_STATUS_SUCCESS && (is_dwgmma || is_bulk || is_phase))
        CHECK(strcmp(cuops_last_kernel(h), c.variant) == 0, "%s m=%lld ran %s", c.variant,
              (long long)m, cuops_last_kernel(h));
    char kernel_name[64];
    snprintf(kernel_name, sizeof kernel_name, "%s", cuops_last_kernel(h));
    cudaError_t ce = cudaDeviceSynchronize();
    CHECK(ce == cudaSuccess, "gemm sync: %s", cudaGetErrorString(ce));
    cudaMemcpy(y, dy_base, yelems * 2, cudaMemcpyDeviceToHost);

    if (st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess) {
        double *ref = gemm_reference(wd, n, k, x, m, ldx, act);
        int64_t nans = 0, outliers = 0;
        double rel = compare_y(y + GUARD, ldy, ref, m, n, act, &nans, &outliers);
        CHECK(nans == 0 && rel <= REL_TOL && outliers == 0,
              "%s %s m=%lld n=%lld k=%lld g=%lld zeros=%d ldx=%lld ldy=%lld xoff=%d split=%d "
              "kernel=%s: rel err %.3e, %lld NaN, %lld outlier(s)",
              act_name(act), vname, (long long)m, (long long)n, (long long)k,
              (long long)w->group_size, w->zeros != NULL, (long long)ldx, (long long)ldy,
              c.x_offset, c.split_k, cuops_last_kernel(h), rel, (long long)nans,
              (long long)outliers);
        free(ref);
    }
    /* split-K reduction order is fixed: a second run gives the same bits */
    if (c.repeat && st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess) {
        const int64_t differ = rerun_differ(h, w, gw, act, m, dx, ldx, dy_base, dy, ldy, yelems,
                                            (c.variant || c.split_k) ? &opt : NULL, y, "repeat");
        CHECK(differ == 0, "%s m=%lld n=%lld k=%lld kernel=%s: %lld elements differ between two runs",
              vname, (long long)m, (long long)n, (long long)k, kernel_name, (long long)differ);
    }
    /* a form that must give the same bits as this one (the same sums in the
     * same order, another instance or schedule) */
    if (c.same_as && st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess) {
        cuops_options_t opt3 = opt;
        opt3.variant = c.same_as;
        const int64_t differ = rerun_differ(h, w, gw, act, m, dx, ldx, dy_base, dy, ldy, yelems,
                                            &opt3, y, c.same_as);
        CHECK(differ == 0, "%s m=%lld n=%lld k=%lld split=%d: %lld elements differ from %s",
              c.same_as, (long long)m, (long long)n, (long long)k, c.split_k, (long long)differ,
              kernel_name);
    }
    /* nothing outside y[0..m)[0..n) may change: guard bands and ldy padding */
    int64_t bad = 0;
    for (int64_t i = 0; i < GUARD; i++) {
        bad += y[i] != poison;
        bad += y[yelems - 1 - i] != poison;
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t r = n; r < ldy; r++) bad += y[GUARD + i * ldy + r] != poison;
    CHECK(bad == 0, "%s m=%lld n=%lld: %lld elements written outside y", vname, (long long)m,
          (long long)n, (long long)bad);

    cudaFree(dx_base);
    cudaFree(dy_base);
    free(x);
    free(y);
}

typedef struct weight_case {
    int64_t n, k, group_size;
    int with_zeros;
    cuops_dtype_t scale_type;
    int full_m_sweep; /* all m in the list (small shapes) or just 1 and 17 */
    int not_quick;    /* left out of the CUOPS_TEST_QUICK sweep */
} weight_case_t;

static int g_quick; /* CUOPS_TEST_QUICK: the sanitizer's reduced sweep */

static void run_gpu_tests(cuops_handle_t h)
{
    static const int64_t m_list[] = {1, 3, 16, 17, 64, 65, 300};
    static const weight_case_t wcases[] = {
        {64, 64, 32, 1, CUOPS_DTYPE_F16, 1},       /* smallest tile-aligned shape */
        {1, 2, 2, 0, CUOPS_DTYPE_F32, 1},          /* one row, one byte, per-channel */
        {7, 17, 18, 1, CUOPS_DTYPE_BF16, 1},       /* per-channel, k not a multiple of 16 */
        {9, 17, 17, 0, CUOPS_DTYPE_F16, 1},        /* per-channel, group_size == k odd */
        {136, 320, 32, 1, CUOPS_DTYPE_F16, 1},
        {129, 1000, 64, 0, CUOPS_DTYPE_F32, 1},    /* last group partial, k % 64 != 0 */
        {65, 1537, 128, 1, CUOPS_DTYPE_BF16, 0},
        {200, 520, 520, 1, CUOPS_DTYPE_F16, 0},    /* per-channel, group_size == k */
        {64, 4096, 32, 1, CUOPS_DTYPE_F16, 0},     /* many groups */
        {1024, 4096, 128, 0, CUOPS_DTYPE_F16, 0},  /* a real layer slice; split-K kicks in */
        {520, 2048, 64, 1, CUOPS_DTYPE_BF16, 1},   /* stream: last 128-row tile half past n */
        {4096, 1024, 128, 1, CUOPS_DTYPE_F16, 0},  /* stream: 64 row tiles, in-kernel split-K */
        /* past 64 x 132 rows: w4a16_decode_wgmma's 256-row CTAs (below that,
         * on the H200, its 64-row CTAs with K in four phases) */
        {8512, 120, 64, 1, CUOPS_DTYPE_F16, 1},
        /* at every m: three 64-k tiles per group (the wgmma decode kernel's
         * group carry), groups that change between the lanes of a tile (16,
         * 48) past m = 16, and k off 16 with several groups past m = 64 */
        {200, 1152, 192, 1, CUOPS_DTYPE_F16, 1, 1},
        {136, 1000, 16, 1, CUOPS_DTYPE_BF16, 1, 1},
        {72, 1000, 48, 0, CUOPS_DTYPE_F32, 1, 1},
        {96, 1537, 128, 1, CUOPS_DTYPE_F16, 1, 1},
    };
    int nvariants = 0;
    const char *const *variants = NULL;
    CHECK_STATUS(cuops_variant_names("w4a16", &variants, &nvariants), CUOPS_STATUS_SUCCESS);

    for (int a = 0; a < 2; a++) {
        cuops_dtype_t act = a ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16;
        for (size_t wi = 0; wi < sizeof wcases / sizeof wcases[0]; wi++) {
            const weight_case_t *wc = &wcases[wi];
            if (g_quick && wc->not_quick) continue;
            host_weight_t w;
            make_weight(&w, wc->n, wc->k, wc->group_size, wc->scale_type, wc->with_zeros);
            gpu_weight_t gw;
            if (gpu_prepack(h, &w, act, &gw)) {
                float *wd = dequant_reference(&w, act);
                for (size_t mi = 0; mi < sizeof m_list / sizeof m_list[0]; mi++) {
                    int64_t m = m_list[mi];
                    if (!wc->full_m_sweep && m != 1 && m != 17) continue;
                    /* quick (compute-sanitizer): m in {1, 17, 65}, weights up to 2^20 */
                    if (g_quick && ((m != 1 && m != 17 && m != 65) || wc->n * wc->k > (1 << 20)))
                        continue;
                    if (wc->n * wc->k * m > ((int64_t)1 << 27)) continue; /* host ref cost */
                    gemm_case_t c = {m, 0, 0, 0, NULL, 0};
                    gpu_gemm_check(h, &w, wd, &gw, act, c);
                    for (int v = 0; v < nvariants; v++) {
                        c.variant = variants[v];
                        gpu_gemm_check(h, &w, wd, &gw, act, c);
                    }
                    /* strides, misaligned x, forced splits */
                    gemm_case_t s1 = {m, 5, 3, 0, NULL, 0};
                    gpu_gemm_check(h, &w, wd, &gw, act, s1);
                    gemm_case_t s2 = {m, 8, 8, 1, NULL, 0};
                    gpu_gemm_check(h, &w, wd, &gw, act, s2);
                    gemm_case_t s3 = {m, 0, 1, 0, NULL, 3, 1};
                    gpu_gemm_check(h, &w, wd, &gw, act, s3);
                    gemm_case_t s4 = {m, 0, 0, 0, "w4a16_mma", 1000};
                    gpu_gemm_check(h, &w, wd, &gw, act, s4);
                    /* ldx a multiple of 8 with any k: the streaming kernel's
                     * zero-filled x tail; forced splits 1 and as many as tiles */
                    const int64_t pad8 = (8 - wc->k % 8) % 8 + 8;
                    gemm_case_t s5 = {m, pad8, 2, 0, NULL, 0, 1};
                    gpu_gemm_check(h, &w, wd, &gw, act, s5);
                    gemm_case_t s6 = {m, pad8, 0, 0, "w4a16_decode_stream", 1};
                    gpu_gemm_check(h, &w, wd, &gw, act, s6);
                    gemm_case_t s7 = {m, pad8, 0, 0, "w4a16_decode_stream", 1000, 1};
                    gpu_gemm_check(h, &w, wd, &gw, act, s7);
                    /* the cluster split-K of the wgmma decode kernel: 2, 3 and
                     * 8 CTAs (capped at the 64-k blocks), twice each, and a
                     * misaligned x (packed for TMA) with a padded y */
                    static const int dw_splits[] = {2, 3, 8};
                    for (int si = 0; si < 3; si++) {
                        gemm_case_t s8 = {m, 0, 0, 0, "w4a16_decode_wgmma", dw_splits[si], 1};
                        gpu_gemm_check(h, &w, wd, &gw, act, s8);
                        s8.variant = "w4a16_decode_wgmma_kt1";
                        gpu_gemm_check(h, &w, wd, &gw, act, s8);
                    }
                    gemm_case_t s9 = {m, 5, 3, 1, "w4a16_decode_wgmma", 0, 1};
                    gpu_gemm_check(h, &w, wd, &gw, act, s9);
                }
                free(wd);
            }
            cudaFree(gw.packed);
            free_weight(&w);
        }
    }

    /* A user workspace that starts off 16 bytes (cuops_set_workspace takes
     * any address): the split-K partials are rounded up inside it (before
     * 63b92c1 w4a16_mma's partials were stored misaligned and the decode
     * kernels refused the call). */
    {
        const size_t ws_bytes = (size_t)64 << 20;
        void *ws = NULL;
        if (cudaMalloc(&ws, ws_bytes) == cudaSuccess) {
            CHECK_STATUS(cuops_set_workspace(h, (char *)ws + 2, ws_bytes - 16), CUOPS_STATUS_SUCCESS);
            host_weight_t w;
            make_weight(&w, 1024, 4096, 128, CUOPS_DTYPE_F16, 1);
            gpu_weight_t gw;
            if (gpu_prepack(h, &w, CUOPS_DTYPE_F16, &gw)) {
                float *wd = dequant_reference(&w, CUOPS_DTYPE_F16);
                static const char *const vs[] = {NULL, "w4a16_mma", "w4a16_decode_splitk",
                                                 "w4a16_decode_warp", "w4a16_decode_stream"};
                static const int64_t ms[] = {1, 17};
                for (int mi = 0; mi < 2; mi++)
                    for (int vi = 0; vi < 5; vi++) {
                        gemm_case_t c = {ms[mi], 0, 0, 0, vs[vi], 7};
                        gpu_gemm_check(h, &w, wd, &gw, CUOPS_DTYPE_F16, c);
                    }
                /* 64 bytes: no room for any split's partials. Where the plan
                 * chose the split (split_k = 0) the call runs unsplit; a
                 * forced split is refused (they all answered NOT_SUPPORTED
                 * before) */
                CHECK_STATUS(cuops_set_workspace(h, ws, 64), CUOPS_STATUS_SUCCESS);
                for (int mi = 0; mi < 2; mi++)
                    for (int vi = 0; vi < 5; vi++) {
                        gemm_case_t c = {ms[mi], 0, 0, 0, vs[vi], 0};
                        gpu_gemm_check(h, &w, wd, &gw, CUOPS_DTYPE_F16, c);
                        if (!vs[vi]) continue;
                        cuops_options_t opt;
                        memset(&opt, 0, sizeof opt);
                        opt.variant = vs[vi];
                        opt.split_k = 4;
                        void *dy = NULL;
                        if (cudaMalloc(&dy, (size_t)(ms[mi] * w.n) * 2) != cudaSuccess) continue;
                        void *dx = NULL;
                        if (cudaMalloc(&dx, (size_t)(ms[mi] * w.k) * 2) == cudaSuccess) {
                            cudaMemset(dx, 0, (size_t)(ms[mi] * w.k) * 2);
                            const cuops_status_t st =
                                cuops_gemm_w4a16_ex(h, ms[mi], w.n, w.k, w.group_size, dx, w.k,
                                                    gw.packed, dy, w.n, CUOPS_DTYPE_F16, &opt);
                            CHECK(st == CUOPS_STATUS_NOT_SUPPORTED,
                                  "%s m=%lld split_k=4 in a 64-byte workspace: %s, expected "
                                  "NOT_SUPPORTED",
                                  vs[vi], (long long)ms[mi], cuops_status_string(st));
                            cudaFree(dx);
                        }
                        cudaFree(dy);
                    }
                CHECK_STATUS(cuops_set_workspace(h, (char *)ws + 2, ws_bytes - 16),
                             CUOPS_STATUS_SUCCESS);
                free(wd);
            }
            cudaFree(gw.packed);
            free_weight(&w);
            CHECK_STATUS(cuops_set_workspace(h, NULL, 0), CUOPS_STATUS_SUCCESS);
            cudaFree(ws);
        } else {
            CHECK(0, "cudaMalloc of the workspace failed");
        }
    }

    /* k == 0: y = 0 exactly, nothing else touched */
    {
        const int64_t m = 3, n = 5, ldy = 7;
        uint16_t y[3 * 7];
        tu_poison(y, CUOPS_DTYPE_F16, (size_t)(m * ldy));
        uint16_t poison = y[0];
        void *dy = NULL;
        if (cudaMalloc(&dy, sizeof y) == cudaSuccess) {
            cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice);
            CHECK_STATUS(cuops_gemm_w4a16(h, m, n, 0, 32, NULL, 1, NULL, dy, ldy, CUOPS_DTYPE_F16),
                         CUOPS_STATUS_SUCCESS);
            cudaDeviceSynchronize();
            cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost);
            int64_t bad = 0;
            for (int64_t i = 0; i < m; i++)
                for (int64_t r = 0; r < ldy; r++)
                    bad += y[i * ldy + r] != (r < n ? 0 : poison);
            CHECK(bad == 0, "k = 0: %lld elements wrong (want 0 inside y, poison outside)",
                  (long long)bad);
            cudaFree(dy);
        }
    }
    /* group sizes the layout cannot serve are refused, not miscomputed */
    size_t bytes = 1;
    CHECK_STATUS(cuops_w4_packed_size(h, 64, 256, 24, CUOPS_DTYPE_F16, &bytes),
                 CUOPS_STATUS_NOT_SUPPORTED);
    /* an unknown variant name is refused */
    cuops_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.variant = "no_such_variant";
    CHECK_STATUS(cuops_gemm_w4a16_ex(h, 1, 64, 64, 32, (void *)16, 64, (void *)256, (void *)16, 64,
                                     CUOPS_DTYPE_F16, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
}

/* ---- w4a16_decode_warp ------------------------------------------------------ */

/*
 * The per-warp pipeline kernel on its own shapes: m in {1, 2, 7, 8, 9, 16}
 * (both instantiations and the edges of each), n in {16, 48, 1000, 4096}
 * (one CTA of 1 strip to 256 strips; 1000 ends inside a 64-row block), k in
 * {64, 128, 1088, 4096} (one tile to 64, many groups), every group size the
 * packed format has (16, 32, 48 = lane groups that differ inside a tile, 64,
 * 128 = one group per tile, per-channel with group_size == k and > k), with
 * and without zeros. Every call runs twice and must give the same bits; y is
 * NaN-poisoned with guard bands (gpu_gemm_check). Then forced splits (across
 * CTAs: the last-arriving CTA adds the partials) and the declines.
 * CUOPS_TEST_QUICK: five small weights (three f16, two bf16), m in {1, 9, 16},
 * plain strides, one forced-split pair.
 */
static void run_warp_tests(cuops_handle_t h, int quick)
{
    static const int64_t n_list[] = {16, 48, 1000, 4096};
    static const int64_t k_list[] = {64, 128, 1088, 4096};
    static const int64_t m_full[] = {1, 2, 7, 8, 9, 16};
    static const int64_t m_quick[] = {1, 9, 16};
    static const cuops_dtype_t stypes[] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32};
    const char *warp = "w4a16_decode_warp";
    /* group sizes by index: 16, 32, 48, 64, 128, k (per-channel), k + 40 */
    for (int a = 0; a < 2; a++) {
        cuops_dtype_t act = a ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16;
        for (int p = 0; p < 16; p++) {
            const int64_t n = n_list[p / 4], k = k_list[p % 4];
            if (quick && !(p == 6 || p == 9 || (p == 2 && a == 0))) continue;
            for (int second = 0; second < 2; second++) {
                if (quick && second) continue;
                const int gi = (p + 3 * second + a) % 7;
                static const int64_t fixed_gs[] = {16, 32, 48, 64, 128};
                const int64_t gs = gi < 5 ? fixed_gs[gi] : (gi == 5 ? k : k + 40);
                const int with_zeros = (p + second + a) % 2 == 0;
                host_weight_t w;
                make_weight(&w, n, k, gs, stypes[(p + second) % 3], with_zeros);
                gpu_weight_t gw;
                if (gpu_prepack(h, &w, act, &gw)) {
                    float *wd = dequant_reference(&w, act);
                    const int64_t *ms = quick ? m_quick : m_full;
                    const int nm = quick ? 3 : 6;
                    for (int mi = 0; mi < nm; mi++) {
                        const int64_t m = ms[mi];
                        if (n * k * m > ((int64_t)1 << 28)) continue; /* host reference cost */
                        /* plain strides; then ldx a multiple of 8 past k and
                         * ldy past n (the guards see any write past n) */
                        gemm_case_t c = {m, 0, 0, 0, warp, 0, 1};
                        gpu_gemm_check(h, &w, wd, &gw, act, c);
                        if (quick) continue;
                        gemm_case_t c2 = {m, 8 + (8 - k % 8) % 8, 3, 0, warp, 0, 1};
                        gpu_gemm_check(h, &w, wd, &gw, act, c2);
                    }
                    /* forced K splits across CTAs: 2, and one per tile */
                    if (!quick || p == 6) {
                        gemm_case_t f1 = {1, 0, 0, 0, warp, 2, 1};
                        gpu_gemm_check(h, &w, wd, &gw, act, f1);
                        gemm_case_t f2 = {9, 0, 1, 0, warp, 1000, 1};
                        gpu_gemm_check(h, &w, wd, &gw, act, f2);
                    }
                    /* declines: m > 16, x only 2-byte aligned, ldx % 8 != 0
                     * (gpu_gemm_check expects NOT_SUPPORTED for these) */
                    if (p == 5 && !second) {
                        gemm_case_t d1 = {17, 0, 0, 0, warp, 0, 0};
                        gpu_gemm_check(h, &w, wd, &gw, act, d1);
                        gemm_case_t d2 = {4, 8, 0, 1, warp, 0, 0};
                        gpu_gemm_check(h, &w, wd, &gw, act, d2);
                        gemm_case_t d3 = {4, 3, 0, 0, warp, 0, 0};
                        gpu_gemm_check(h, &w, wd, &gw, act, d3);
                    }
                    free(wd);
                }
                cudaFree(gw.packed);
                free_weight(&w);
            }
        }
    }

    /* Chunked staging: a long k on few strips, so each warp walks more
     * tiles than one chunk holds (x and the metadata double-buffered, 8..32
     * tiles per chunk): 128 x 16384 (256 tiles), one CTA row of strips, K not
     * split (forced 1) and auto. Group 128 (metadata staged per tile) and 32
     * (per lane group), m = 1 and 16, both activation types. */
    for (int a = 0; a < 2; a++) {
        cuops_dtype_t act = a ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16;
        for (int gi = 0; gi < 2; gi++) {
            if (quick && (a || gi)) continue;
            host_weight_t w;
            make_weight(&w, 128, 16384, gi ? 32 : 128, stypes[gi + a], (gi + a) % 2 == 0);
            gpu_weight_t gw;
            if (gpu_prepack(h, &w, act, &gw)) {
                float *wd = dequant_reference(&w, act);
                static const int64_t ms[] = {1, 16};
                for (int mi = 0; mi < 2; mi++) {
                    gemm_case_t c1 = {ms[mi], 0, 0, 0, warp, 1, 1};
                    gpu_gemm_check(h, &w, wd, &gw, act, c1);
                    if (quick) continue;
                    gemm_case_t c0 = {ms[mi], 0, 0, 0, warp, 0, 1};
                    gpu_gemm_check(h, &w, wd, &gw, act, c0);
                }
                free(wd);
            }
            cudaFree(gw.packed);
            free_weight(&w);
        }
    }
}

/* ---- w4a16_decode_bulk_ring ------------------------------------------------- */

/*
 * The producer-fed ring kernel (both math-warp counts) on its own shapes:
 * several strips per CTA (n = 8512: 532 strips, 5 per CTA on 132 SMs; 4096:
 * 2 per CTA), one strip in all (n = 16), a last strip past n (1000, 300);
 * k with a partial last stage (1088: 17 tiles; 8512: 2 full stages of 64
 * tiles + 5) and a k that ends inside a tile (1000); group sizes 64, 128,
 * 256 (16 groups per stage), 2048 (two per stage), 8192 with k = 16384 (a
 * group spanning two stages; x for m = 8 does not fit and is declined),
 * per-channel; m in {1, 3, 8}; zeros and symmetric. The 16-warp forms take
 * two full barriers per stage where a CTA streams <= 7 stages, <= 8 at
 * m >= 2 (w4b_stage_halves): every shape above does but n = 16912 (9 strips
 * of one stage per CTA), whose one stage of 41 tiles is a partial stage of
 * the one-barrier form; the last stage's second half holds tiles at
 * k = 3072 (48 tiles) and none at k = 1088 or 1000. Every call runs twice
 * and must give the same bits, with NaN-poisoned y, guard bands and ldy
 * padding (gpu_gemm_check). Then the declines: m = 9, group 192 (not
 * 64 * 2^p), group 32, x only 2-byte aligned, ldx % 8 != 0, and an x too
 * large for shared memory (m = 8, k = 32768). CUOPS_TEST_QUICK: four shapes
 * (n = 2000 x k = 3072 among them), m in {1, 8}.
 */
static void run_bulk_ring_tests(cuops_handle_t h, int quick)
{
    typedef struct {
        int64_t n, k, gs;
        int zeros;
        cuops_dtype_t st;
    } bcase_t;
    static const bcase_t cases[] = {
        {8512, 1088, 64, 1, CUOPS_DTYPE_F16},   {4096, 4096, 128, 0, CUOPS_DTYPE_BF16},
        {1000, 8512, 128, 1, CUOPS_DTYPE_F32},  {16, 1000, 256, 1, CUOPS_DTYPE_F16},
        {2000, 4096, 2048, 0, CUOPS_DTYPE_F16},  {520, 16384, 8192, 1, CUOPS_DTYPE_BF16},
        {2056, 1536, 1536, 1, CUOPS_DTYPE_F16}, {300, 2048, 4096, 0, CUOPS_DTYPE_F32},
        {16912, 2600, 128, 1, CUOPS_DTYPE_BF16}, {2000, 3072, 2048, 0, CUOPS_DTYPE_F32},
    };
    static const int64_t m_full[] = {1, 3, 8};
    static const int64_t m_quick[] = {1, 8};
    static const char *const forms[] = {"w4a16_decode_bulk_ring", "w4a16_decode_bulk_ring_w8",
                                        "w4a16_decode_bulk_ring_xsum"};
    for (int a = 0; a < 2; a++) {
        cuops_dtype_t act = a ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16;
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            if (quick && !(ci == 0 || ci == 2 || ci == 5 || ci == 9)) continue;
            const bcase_t *bc = &cases[ci];
            host_weight_t w;
            make_weight(&w, bc->n, bc->k, bc->gs, bc->st, bc->zeros);
            gpu_weight_t gw;
            if (gpu_prepack(h, &w, act, &gw)) {
                float *wd = dequant_reference(&w, act);
                const int64_t *ms = quick ? m_quick : m_full;
                const int nm = quick ? 2 : 3;
                for (int f = 0; f < 3; f++) {
                    for (int mi = 0; mi < nm; mi++) {
                        gemm_case_t c = {ms[mi], 0, 0, 0, forms[f], 0, 1};
                        gpu_gemm_check(h, &w, wd, &gw, act, c);
                        if (quick) continue;
                        gemm_case_t c2 = {ms[mi], 8 + (8 - bc->k % 8) % 8, 5, 0, forms[f], 0, 1};
                        gpu_gemm_check(h, &w, wd, &gw, act, c2);
                    }
                }
                if (ci == 1) { /* declines (gpu_gemm_check expects NOT_SUPPORTED) */
                    gemm_case_t d1 = {9, 0, 0, 0, forms[0], 0, 0};
                    gpu_gemm_check(h, &w, wd, &gw, act, d1);
                    gemm_case_t d2 = {4, 8, 0, 1, forms[0], 0, 0};
                    gpu_gemm_check(h, &w, wd, &gw, act, d2);
                    gemm_case_t d3 = {4, 3, 0, 0, forms[1], 0, 0};
                    gpu_gemm_check(h, &w, wd, &gw, act, d3);
                    gemm_case_t d4 = {9, 0, 0, 0, forms[2], 0, 0};
                    gpu_gemm_check(h, &w, wd, &gw, act, d4);
                }
                free(wd);
            }
            cudaFree(gw.packed);
            free_weight(&w);
        }
    }
    /* auto: many strips (>= 10 per SM on the H200's 132 SMs) at m = 1, 3
     * and 4 takes this kernel on sm_90, its _xsum form at m <= 3
     * (gpu_gemm_check checks which kernel ran: bulk_ring_auto), with split_k
     * set it does not; a short k keeps the host reference cheap */
    {
        host_weight_t w;
        make_weight(&w, 21200, 320, 64, CUOPS_DTYPE_BF16, 1);
        gpu_weight_t gw;
        if (gpu_prepack(h, &w, CUOPS_DTYPE_F16, &gw)) {
            float *wd = dequant_reference(&w, CUOPS_DTYPE_F16);
            static const int64_t ms[] = {1, 3, 4};
            for (int mi = 0; mi < (quick ? 1 : 3); mi++) {
                gemm_case_t c = {ms[mi], 0, 0, 0, NULL, 0, 1};
                gpu_gemm_check(h, &w, wd, &gw, CUOPS_DTYPE_F16, c);
                gemm_case_t c2 = {ms[mi], 0, 0, 0, "auto", 2, 0};
                gpu_gemm_check(h, &w, wd, &gw, CUOPS_DTYPE_F16, c2);
            }
            free(wd);
        }
        cudaFree(gw.packed);
        free_weight(&w);
    }
    /* auto on fewer strips (n = 4096: 2 per CTA on 128 of 132 SMs): the _xsum
     * form at m <= 2 where k >= 4096, the per-warp kernel at m = 4 and at
     * k = 2048 (bulk_ring_auto) */
    {
        static const int64_t ks[] = {4096, 2048};
        for (int ki = 0; ki < (quick ? 1 : 2); ki++) {
            host_weight_t w;
            make_weight(&w, 4096, ks[ki], 128, CUOPS_DTYPE_F16, 1);
            gpu_weight_t gw;
            if (gpu_prepack(h, &w, CUOPS_DTYPE_BF16, &gw)) {
                float *wd = dequant_reference(&w, CUOPS_DTYPE_BF16);
                static const int64_t ms[] = {1, 2, 4};
                for (int mi = 0; mi < (quick ? 1 : 3); mi++) {
                    gemm_case_t c = {ms[mi], 0, 0, 0, NULL, 0, 1};
                    gpu_gemm_check(h, &w, wd, &gw, CUOPS_DTYPE_BF16, c);
                }
                free(wd);
            }
            cudaFree(gw.packed);
            free_weight(&w);
        }
    }
    /* group sizes it does not serve, and an x that does not fit */
    static const bcase_t declines[] = {
        {64, 1536, 192, 1, CUOPS_DTYPE_F16},
        {64, 512, 32, 0, CUOPS_DTYPE_F16},
        {16, 32768, 128, 1, CUOPS_DTYPE_F16},
    };
    for (size_t di = 0; di < sizeof declines / sizeof declines[0]; di++) {
        if (quick && di != 2) continue;
        const bcase_t *bc = &declines[di];
        host_weight_t w;
        make_weight(&w, bc->n, bc->k, bc->gs, bc->st, bc->zeros);
        gpu_weight_t gw;
        if (gpu_prepack(h, &w, CUOPS_DTYPE_F16, &gw)) {
            float *wd = dequant_reference(&w, CUOPS_DTYPE_F16);
            gemm_case_t d = {di == 2 ? 8 : 1, 0, 0, 0, forms[di % 2], 0, 0};
            gpu_gemm_check(h, &w, wd, &gw, CUOPS_DTYPE_F16, d);
            if (di == 2) { /* the same weight at m = 1: x fits, served */
                gemm_case_t c1 = {1, 0, 0, 0, forms[0], 0, 1};
                gpu_gemm_check(h, &w, wd, &gw, CUOPS_DTYPE_F16, c1);
            }
            free(wd);
        }
        cudaFree(gw.packed);
        free_weight(&w);
    }
}

/* ---- w4a16_decode_wgmma, the 256-row form --------------------------------- */

/*
 * w4a16_decode_wgmma's 256-row form (n past 64 rows per SM) at the m that
 * choose its x tiles of 32 and 64 rows: ranges of whole 4-block stages (read
 * a block ahead, the next stage's first block once it has landed) and a last
 * stage of 1-3 blocks, group 64 (a group per block) and 128 (one group over
 * two blocks, the metadata of the next group loaded when one starts),
 * forced cluster splits that cut K inside a stage, twice each (bitwise
 * equal). CUOPS_TEST_QUICK: one weight, m = 40.
 */
static void run_decode_wgmma_rows_tests(cuops_handle_t h, int quick)
{
    if (g_sm_major != 9) return;
    const int64_t sms = g_num_sms > 0 ? g_num_sms : 132;
    const int64_t n = 64 * sms + 64; /* past the 64-row form's one round */
    static const struct {
        int64_t k, group_size;
        int with_zeros;
        cuops_dtype_t act;
    } cases[] = {
        {576, 128, 1, CUOPS_DTYPE_F16},   /* 9 blocks: 2 stages + 1 */
        {1088, 64, 0, CUOPS_DTYPE_BF16},  /* 17 blocks: 4 stages + 1 */
        {448, 448, 1, CUOPS_DTYPE_BF16},  /* per-channel, 7 blocks: 1 stage + 3 */
    };
    static const int64_t ms[] = {40, 24, 64};
    for (size_t ci = 0; ci < (quick ? 1 : sizeof cases / sizeof cases[0]); ci++) {
        host_weight_t w;
        make_weight(&w, n, cases[ci].k, cases[ci].group_size, CUOPS_DTYPE_F16, cases[ci].with_zeros);
        gpu_weight_t gw;
        if (gpu_prepack(h, &w, cases[ci].act, &gw)) {
            float *wd = dequant_reference(&w, cases[ci].act);
            for (size_t mi = 0; mi < (quick ? 1 : sizeof ms / sizeof ms[0]); mi++) {
                gemm_case_t c = {ms[mi], 0, 0, 0, "w4a16_decode_wgmma", 0, 1};
                gpu_gemm_check(h, &w, wd, &gw, cases[ci].act, c);
                c.split_k = 3; /* 3-6 blocks per rank: K cut inside stages */
                gpu_gemm_check(h, &w, wd, &gw, cases[ci].act, c);
                c.variant = "w4a16_decode_wgmma_kt1";
                gpu_gemm_check(h, &w, wd, &gw, cases[ci].act, c);
            }
            free(wd);
        }
        cudaFree(gw.packed);
        free_weight(&w);
    }
}

/* ---- w4a16_decode_phase_ring ------------------------------------------------ */

/*
 * The phase ring (both math-warp counts, and the one-quad form) on its own
 * shapes: m in {1, 5, 8} (one x fragment) and {9, 13, 16} (two); strips per
 * CTA 1 (n = 16, 300),
 * 2 (4096), 5 (8512), 15 (30000: two passes with 16 math warps at m > 8,
 * whose pass is 8 strips) and 18 (36000: two passes for every form, the
 * last quad partial); k of one partial phase (320: 5 tiles), a full phase
 * plus one tile (1088), two full phases (2048), a k that ends inside a tile
 * (1000) and 16384 with group 8192 (groups spanning phases); group sizes
 * 64 (16 groups per phase), 128, 256, 1024 (one group per phase), 2048,
 * 8192 and per-channel; zeros and symmetric; padded ldx / ldy and an x only
 * 2-byte aligned (packed for TMA first). Every call runs twice and must give
 * the same bits (gpu_gemm_check), and the default form's calls run again as
 * the one-quad form, which must give them too. K split over a cluster
 * (options.split_k 2 and 3; 5 and 8 at m = 1 and 16): two ranks of one phase each (2048), a
 * last rank of one tile (1088), 16 phases cut 6 / 6 / 4 or 2 each (16384,
 * groups spanning ranks), more ranks asked than phases (1000, 320, 448:
 * fewer run), strips per CTA cut to one pass (8512, 30000, 36000: more
 * clusters than SMs). Then the declines: m = 17, group 192, group 32.
 * CUOPS_TEST_QUICK: three shapes, m in {1, 16}, split 2.
 */
static void run_phase_ring_tests(cuops_handle_t h, int quick)
{
    typedef struct {
        int64_t n, k, gs;
        int zeros;
        cuops_dtype_t st;
    } pcase_t;
    static const pcase_t cases[] = {
        {8512, 1088, 64, 1, CUOPS_DTYPE_F16},   {4096, 2048, 128, 0, CUOPS_DTYPE_BF16},
        {30000, 320, 64, 1, CUOPS_DTYPE_F32},   {16, 1000, 256, 1, CUOPS_DTYPE_F16},
        {2000, 4096, 1024, 0, CUOPS_DTYPE_F16}, {520, 16384, 8192, 1, CUOPS_DTYPE_BF16},
        {36000, 448, 448, 1, CUOPS_DTYPE_F16},  {300, 2048, 2048, 0, CUOPS_DTYPE_F32},
    };
    static const int64_t m_full[] = {1, 5, 8, 9, 13, 16};
    static const int64_t m_quick[] = {1, 16};
    static const char *const forms[] = {"w4a16_decode_phase_ring", "w4a16_decode_phase_ring_w8",
                                        "w4a16_decode_phase_ring_q1"};
    const int nforms = (int)(sizeof forms / sizeof forms[0]);
    for (int a = 0; a < 2; a++) {
        cuops_dtype_t act = a ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16;
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            if (quick && !(ci == 0 || ci == 2 || ci == 5)) continue;
            const pcase_t *pc = &cases[ci];
            host_weight_t w;
            make_weight(&w, pc->n, pc->k, pc->gs, pc->st, pc->zeros);
            gpu_weight_t gw;
            if (gpu_prepack(h, &w, act, &gw)) {
                float *wd = dequant_reference(&w, act);
                const int64_t *ms = quick ? m_quick : m_full;
                const int nm = quick ? 2 : 6;
                for (int f = 0; f < nforms; f++) {
                    /* the default form (its one-quad instance where every
                     * CTA's strips fit one quad) against the one-quad form,
                     * which makes more passes elsewhere: the same sums in
                     * the same order, so the same bits */
                    const char *same = f == 0 ? forms[2] : NULL;
                    for (int mi = 0; mi < nm; mi++) {
                        gemm_case_t c = {ms[mi], 0, 0, 0, forms[f], 0, 1, same};
                        gpu_gemm_check(h, &w, wd, &gw, act, c);
                        /* K split over a cluster */
                        static const int splits[] = {2, 3, 5, 8};
                        const int nsplit = quick ? 1 : (ms[mi] == 1 || ms[mi] == 16) ? 4 : 2;
                        for (int si = 0; si < nsplit; si++) {
                            gemm_case_t cs = {ms[mi], 0, 0, 0, forms[f], splits[si], 1, same};
                            gpu_gemm_check(h, &w, wd, &gw, act, cs);
                        }
                        if (quick) continue;
                        /* padded rows, and (odd m) x only 2-byte aligned */
                        gemm_case_t c2 = {ms[mi], 3 + 8 * (mi & 1), 5, (int)(ms[mi] & 1),
                                          forms[f], 0, 1};
                        gpu_gemm_check(h, &w, wd, &gw, act, c2);
                    }
                }
                /* auto at m = 4, 5, 9 and 16 (gpu_gemm_check checks whether
                 * it took this kernel: phase_ring_auto), and with split_k set */
                if (ci <= 1) {
                    gemm_case_t a1 = {ci ? 9 : 16, 0, 0, 0, NULL, 0, 1};
                    gpu_gemm_check(h, &w, wd, &gw, act, a1);
                    gemm_case_t a3 = {ci ? 4 : 5, 0, 0, 0, NULL, 0, 1};
                    gpu_gemm_check(h, &w, wd, &gw, act, a3);
                    gemm_case_t a2 = {16, 0, 0, 0, "auto", 2, 0};
                    gpu_gemm_check(h, &w, wd, &gw, act, a2);
                }
                if (ci == 1) { /* declines (gpu_gemm_check expects NOT_SUPPORTED) */
                    gemm_case_t d1 = {17, 0, 0, 0, forms[0], 0, 0};
                    gpu_gemm_check(h, &w, wd, &gw, act, d1);
                    gemm_case_t d2 = {17, 0, 0, 0, forms[1], 0, 0};
                    gpu_gemm_check(h, &w, wd, &gw, act, d2);
                    gemm_case_t d3 = {17, 0, 0, 0, forms[2], 0, 0};
                    gpu_gemm_check(h, &w, wd, &gw, act, d3);
                }
                free(wd);
            }
            cudaFree(gw.packed);
            free_weight(&w);
        }
    }
    /* group sizes it does not serve */
    static const pcase_t declines[] = {
        {64, 1536, 192, 1, CUOPS_DTYPE_F16},
        {64, 512, 32, 0, CUOPS_DTYPE_F16},
    };
    for (size_t di = 0; di < sizeof declines / sizeof declines[0]; di++) {
        const pcase_t *pc = &declines[di];
        host_weight_t w;
        make_weight(&w, pc->n, pc->k, pc->gs, pc->st, pc->zeros);
        gpu_weight_t gw;
        if (gpu_prepack(h, &w, CUOPS_DTYPE_F16, &gw)) {
            float *wd = dequant_reference(&w, CUOPS_DTYPE_F16);
            gemm_case_t d = {di ? 16 : 1, 0, 0, 0, forms[di], 0, 0};
            gpu_gemm_check(h, &w, wd, &gw, CUOPS_DTYPE_F16, d);
            free(wd);
        }
        cudaFree(gw.packed);
        free_weight(&w);
    }
}

/* ---- a handle made while a stream is being captured ------------------------- */

/* cuops_create allocates and zeroes the handle's arrival counters: while
 * another stream is captured into a graph (global mode, the default and
 * torch.cuda.graph's) it must neither fail nor break that capture. */
static void test_create_during_capture(void)
{
    cudaStream_t s = NULL;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        CHECK(0, "stream for the capture");
        return;
    }
    cudaGraph_t graph = NULL;
    cudaError_t ce = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    CHECK(ce == cudaSuccess, "begin capture: %s", cudaGetErrorString(ce));
    cuops_handle_t h2 = NULL;
    const cuops_status_t st = cuops_create(&h2, 0);
    CHECK(st == CUOPS_STATUS_SUCCESS, "cuops_create during a capture: %s (%s)",
          cuops_status_string(st), cuops_create_error());
    if (ce == cudaSuccess) {
        ce = cudaStreamEndCapture(s, &graph);
        CHECK(ce == cudaSuccess && graph != NULL,
              "the capture around cuops_create was broken: %s", cudaGetErrorString(ce));
    }
    (void)cudaGetLastError();
    if (graph) cudaGraphDestroy(graph);
    cuops_destroy(h2);
    cudaStreamDestroy(s);
}

/* ---- two handles at once ----------------------------------------------------- */

/* A gate between two streams: gate_wait (one warp) spins until gate_open,
 * queued on the other stream, sets the value, so the calls queued behind each
 * start together. The wait gives up after ~2^31 clocks rather than hang, and
 * counts that in g_gate_timeouts (the calls then did not overlap). */
__device__ volatile int g_gate;
__device__ int g_gate_timeouts;
__global__ void gate_open(int v)
{
    g_gate = v;
    __threadfence();
}
__global__ void gate_wait(int v)
{
    const long long t0 = clock64();
    while (g_gate != v) {
        if (clock64() - t0 > (1ll << 31)) {
            if (threadIdx.x == 0) atomicAdd(&g_gate_timeouts, 1);
            break;
        }
    }
}

/* Split-K calls on two handles and two streams at once must not share their
 * arrival counters. (Until they became the handle's, every call took the
 * next of 16 blocks of one global array: a call and the one queued 16 calls
 * after it, on another stream, counted on the same counters when they ran at
 * the same time.) Here call A (handle 1) waits at a gate that handle 2 opens
 * after 15 calls of its own, right before its 16th: A and that call run
 * together. Both must give the bits of a call run alone. */
static void run_concurrent_handles_tests(cuops_handle_t h)
{
    typedef struct {
        const char *variant;
        int64_t m;
        int split_k;
    } cc_case_t;
    static const cc_case_t cases[] = {
        {"w4a16_decode_warp", 4, 4},
        {"w4a16_decode_stream", 16, 4},
        {"w4a16_prefill_wgmma_ahead", 256, 4},
    };
    const int64_t n = 4096, k = 4096, gs = 128, mmax = 256;
    const cuops_dtype_t act = CUOPS_DTYPE_F16;
    cudaStream_t s1 = NULL, s2 = NULL;
    cuops_handle_t h2 = NULL;
    host_weight_t w;
    make_weight(&w, n, k, gs, CUOPS_DTYPE_F16, 1);
    gpu_weight_t gw;
    gw.packed = NULL;
    uint16_t *hx = (uint16_t *)malloc((size_t)(mmax * k) * 2);
    uint16_t *want = (uint16_t *)malloc((size_t)(mmax * n) * 2);
    uint16_t *got = (uint16_t *)malloc((size_t)(mmax * n) * 2);
    uint16_t *dx = NULL, *dy1 = NULL, *dy2 = NULL;
    int ready = hx && want && got &&
                cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking) == cudaSuccess &&
                cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) == cudaSuccess &&
                cuops_create(&h2, 0) == CUOPS_STATUS_SUCCESS &&
                cudaMalloc((void **)&dx, (size_t)(mmax * k) * 2) == cudaSuccess &&
                cudaMalloc((void **)&dy1, (size_t)(mmax * n) * 2) == cudaSuccess &&
                cudaMalloc((void **)&dy2, (size_t)(mmax * n) * 2) == cudaSuccess;
    CHECK(ready, "two streams, a second handle and the buffers");
    if (ready) ready = gpu_prepack(h, &w, act, &gw);
    if (ready) {
        tu_fill_float(hx, act, (size_t)(mmax * k), -1.0, 1.0);
        cudaMemcpy(dx, hx, (size_t)(mmax * k) * 2, cudaMemcpyHostToDevice);
        /* the gate kernels loaded before the first wait (a lazy module load
         * while gate_wait spins could wait for it) */
        const int zero = 0;
        cudaMemcpyToSymbol(g_gate_timeouts, &zero, sizeof zero);
        gate_open<<<1, 1>>>(0);
        gate_wait<<<1, 32>>>(0);
        CHECK(cudaDeviceSynchronize() == cudaSuccess, "gate kernels");
    }
    int gate = 0;
    for (size_t c = 0; ready && c < sizeof cases / sizeof cases[0]; c++) {
        const cc_case_t *cc = &cases[c];
        if (g_only_variant && strcmp(g_only_variant, cc->variant) != 0) continue;
        if (strstr(cc->variant, "wgmma") && g_sm_major != 9) continue; /* sm_90a only */
        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.variant = cc->variant;
        opt.split_k = cc->split_k;
        const size_t ybytes = (size_t)(cc->m * n) * 2;
        /* alone, on the default stream */
        cuops_set_stream(h, NULL);
        cudaMemset(dy1, 0xff, ybytes);
        cuops_status_t st = cuops_gemm_w4a16_ex(h, cc->m, n, k, gs, dx, k, gw.packed, dy1, n, act,
                                                &opt);
        cudaError_t ce = cudaDeviceSynchronize();
        CHECK(st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess, "%s m=%lld alone: %s / %s (%s)",
              cc->variant, (long long)cc->m, cuops_status_string(st), cudaGetErrorString(ce),
              cuops_last_error(h));
        if (st != CUOPS_STATUS_SUCCESS || ce != cudaSuccess) continue;
        cudaMemcpy(want, dy1, ybytes, cudaMemcpyDeviceToHost);
        int64_t nans = 0;
        for (int64_t i = 0; i < cc->m * n; i++) nans += (want[i] & 0x7c00) == 0x7c00;
        CHECK(nans == 0, "%s m=%lld alone: %lld non-finite outputs", cc->variant, (long long)cc->m,
              (long long)nans);
        cuops_set_stream(h, s1);
        cuops_set_stream(h2, s2);
        /* one call of h2's first: its workspace grows now (a cudaFree while
         * gate_wait spins would wait for the gate), not inside a rep */
        st = cuops_gemm_w4a16_ex(h2, cc->m, n, k, gs, dx, k, gw.packed, dy2, n, act, &opt);
        ce = cudaDeviceSynchronize();
        CHECK(st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess, "%s m=%lld on handle 2: %s / %s",
              cc->variant, (long long)cc->m, cuops_status_string(st), cudaGetErrorString(ce));
        for (int rep = 0; rep < 4 && st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess; rep++) {
            gate++;
            cudaMemsetAsync(dy1, 0xff, ybytes, s1);
            cudaMemsetAsync(dy2, 0xff, ybytes, s2);
            gate_wait<<<1, 32, 0, s1>>>(gate);
            cuops_status_t sa = cuops_gemm_w4a16_ex(h, cc->m, n, k, gs, dx, k, gw.packed, dy1, n,
                                                    act, &opt);
            cuops_status_t sb = CUOPS_STATUS_SUCCESS;
            for (int i = 0; i < 15 && sb == CUOPS_STATUS_SUCCESS; i++)
                sb = cuops_gemm_w4a16_ex(h2, cc->m, n, k, gs, dx, k, gw.packed, dy2, n, act, &opt);
            gate_open<<<1, 1, 0, s2>>>(gate);
            if (sb == CUOPS_STATUS_SUCCESS)
                sb = cuops_gemm_w4a16_ex(h2, cc->m, n, k, gs, dx, k, gw.packed, dy2, n, act, &opt);
            ce = cudaDeviceSynchronize();
            CHECK(sa == CUOPS_STATUS_SUCCESS && sb == CUOPS_STATUS_SUCCESS && ce == cudaSuccess,
                  "%s m=%lld on two streams: %s, %s / %s", cc->variant, (long long)cc->m,
                  cuops_status_string(sa), cuops_status_string(sb), cudaGetErrorString(ce));
            if (sa != CUOPS_STATUS_SUCCESS || sb != CUOPS_STATUS_SUCCESS || ce != cudaSuccess) break;
            for (int which = 0; which < 2; which++) {
                cudaMemcpy(got, which ? dy2 : dy1, ybytes, cudaMemcpyDeviceToHost);
                int64_t differ = 0;
                for (int64_t i = 0; i < cc->m * n; i++) differ += got[i] != want[i];
                CHECK(differ == 0,
                      "%s m=%lld split_k=%d, rep %d: handle %d's call beside the other handle's: "
                      "%lld of %lld outputs differ from the call alone",
                      cc->variant, (long long)cc->m, cc->split_k, rep, which + 1, (long long)differ,
                      (long long)(cc->m * n));
            }
        }
        cuops_set_stream(h, NULL);
        cuops_set_stream(h2, NULL);
    }
    if (ready) {
        int timeouts = -1;
        cudaMemcpyFromSymbol(&timeouts, g_gate_timeouts, sizeof timeouts);
        CHECK(timeouts == 0, "%d gate(s) timed out: those calls did not run side by side",
              timeouts);
    }
    cudaFree(dx);
    cudaFree(dy1);
    cudaFree(dy2);
    cudaFree(gw.packed);
    free(hx);
    free(want);
    free(got);
    free_weight(&w);
    cuops_destroy(h2);
    if (s1) cudaStreamDestroy(s1);
    if (s2) cudaStreamDestroy(s2);
}

/* ---- random shapes through auto ------------------------------------------- */

/*
 * auto picks among the ring kernels, the per-warp, wgmma, stream and split-K
 * decode kernels and the prefill kernels, and each plans its own K split,
 * by m, n, k, group size, x's alignment and the SM count: more decisions
 * than the fixed shapes above can pin. Here N random calls of auto (80;
 * CUOPS_TEST_RANDOM_CASES=N; CUOPS_TEST_QUICK: 10 with n, k <= 2048) each go
 * through gpu_gemm_check: the kernel auto should run where this file models
 * the choice, the fp64 reference, NaN poison and guard bands, a bitwise
 * repeat. Drawn: act f16/bf16; m in 1..96 with extra weight on the kernels'
 * edges, sometimes 97..1100 (prefill, around m = 256 more often); n and k of
 * any size the API takes (n up to 14336, sometimes up to 32768 for the
 * many-strips picks; k up to 8192), off every tile multiple or at multiples
 * of 16/64/128/256; group 16 * j, 32, 64, 128, 64 * 2^p, per-channel (== k,
 * or > k); zeros or symmetric; f16/bf16/f32 scales; ldx and ldy padding, x
 * only 2-byte aligned. One case in four is a model's shape (see rnd_draw).
 *
 * Host cost, in units of one fp64 multiply-add of gemm_reference (0.8 ns on
 * one core): m * n * k for the reference plus RND_W_COST * n * k for
 * make_weight and dequant_reference (15 ns per weight element). The section
 * has RND_AVG = 2e8 units per case, 1.6e10 for the 80 cases (~13 s on one
 * core; the GPU's share is small beside it); a case may take up to 4x its
 * share of what is left, at most 2^31 units (~1.7 s), and one drawn larger
 * is shrunk (n, then m) to fit. The draws lean large, so a run uses about
 * the whole budget; CUOPS_TEST_QUICK has 2^23 units per case (~0.07 s in all).
 *
 * Each case draws from its own seed, made from CUOPS_TEST_SEED and its
 * index, so CUOPS_TEST_SEED replays the section, and CUOPS_TEST_RANDOM_CASE=i
 * (with the same seed and count) runs case i alone, none of the fixed
 * sections.
 */
#define RND_W_COST 20
#define RND_AVG ((int64_t)3 << 26)
#define RND_AVG_QUICK ((int64_t)1 << 23)
#define RND_MAX ((int64_t)1 << 31)
#define RND_MIN ((int64_t)1 << 20)

static uint64_t g_seed; /* the run's CUOPS_TEST_SEED */

typedef struct rnd_case {
    cuops_dtype_t act, scale_type;
    int64_t n, k, group_size;
    int zeros;
    gemm_case_t g; /* m, strides, x offset; auto */
} rnd_case_t;

static int64_t rnd_pick(const int64_t *v, size_t count) { return v[tu_rand_u64() % count]; }

static void rnd_draw(rnd_case_t *c, int quick, int64_t cap)
{
    /* the decode kernels' limits: xsum form m <= 3, bulk ring 8, phase ring
     * from 5, per-warp and phase ring 16, m fragments 32, wgmma decode 64 */
    static const int64_t m_edges[] = {1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 48, 64, 65};
    /* auto's prefill kernels from m = 256, x tiles of 256 rows */
    static const int64_t m_prefill[] = {255, 256, 257, 511, 512, 513};
    static const int64_t g_other[] = {16, 48, 80, 96, 192, 256, 512, 1024, 2048};
    static const cuops_dtype_t stypes[] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32};
    const int64_t nmax = quick ? 2048 : 14336, kmax = quick ? 2048 : 8192;
    /* one case in four a model's shape: n, k multiples of 256, x rows 16-byte
     * aligned, groups of 64 * 2^p or per-channel (what the ring kernels and
     * the 16-byte paths need); the others anything the API takes */
    const int model = tu_rand_u64() % 4 == 0;
    c->act = (tu_rand_u64() & 1) ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16;
    int64_t m;
    const uint64_t rm = tu_rand_u64() % 16;
    if (rm < 5)
        m = rnd_pick(m_edges, sizeof m_edges / sizeof m_edges[0]);
    else if (rm < 13)
        m = tu_rand_between(1, 96);
    else if (rm < 14)
        m = rnd_pick(m_prefill, sizeof m_prefill / sizeof m_prefill[0]);
    else
        m = tu_rand_between(97, quick ? 300 : 1100);
    /* n past 14336 for the many-strips picks (the bulk ring's from 21120
     * rows on 132 SMs, at m <= 8): half the model shapes at m <= 8, one in
     * eight of the rest; k is then drawn up to what fits the cap */
    const int wide = !quick && (model && m <= 8 ? tu_rand_u64() % 2 : tu_rand_u64() % 8 == 0);
    int64_t n, n_align = model ? 256 : 1;
    if (wide)
        n = tu_rand_between(nmax, 32768) / n_align * n_align;
    else if (model)
        n = 256 * tu_rand_between(1, nmax / 256);
    else
        switch (tu_rand_u64() % 6) {
        case 0: case 1: case 2: n = tu_rand_log(1, nmax); break;
        case 3: n = tu_rand_between(1, 200); break; /* a few strips, the last partly past n */
        case 4:
            n_align = (int64_t)64 << (tu_rand_u64() % 3);
            n = n_align * tu_rand_between(1, nmax / n_align);
            break;
        default: n = tu_rand_between(nmax / 2, nmax); break;
        }
    int64_t kfit = wide ? cap / ((m + RND_W_COST) * n) : kmax;
    if (kfit > kmax) kfit = kmax;
    if (kfit < 256) kfit = 256;
    int64_t k, a;
    if (model)
        k = 256 * tu_rand_between(1, kfit / 256);
    else
        switch (tu_rand_u64() % 8) {
        case 0: case 1: case 2: k = tu_rand_log(1, kfit); break;
        case 3: case 4:
            a = (int64_t)64 << (tu_rand_u64() % 3);
            k = a * tu_rand_between(1, kfit / a);
            break;
        case 5: k = 16 * tu_rand_between(1, kfit / 16); break;
        case 6: k = 64 * tu_rand_between(1, kfit / 64 - 1) + tu_rand_between(-15, 15); break; /* a partial tile */
        default: k = tu_rand_between(kfit / 2, kfit); break;
        }
    int64_t gs;
    switch (tu_rand_u64() % 8) {
    case 0: gs = 32; break;
    case 1: gs = 64; break;
    case 2: gs = 128; break;
    case 3: gs = k; break;                      /* per-channel */
    case 4: gs = k + tu_rand_between(1, 300); break;    /* per-channel, odd ones rounded up */
    case 5: gs = rnd_pick(g_other, sizeof g_other / sizeof g_other[0]); break;
    case 6: gs = 16 * tu_rand_between(1, k >= 32 ? k / 16 : 1); break;
    default: gs = (int64_t)64 << (tu_rand_u64() % 6); break; /* the rings' 64 * 2^p */
    }
    if (model && gs % 64 != 0 && gs < k) gs = (int64_t)64 << (tu_rand_u64() % 6);
    c->scale_type = stypes[tu_rand_u64() % 3];
    c->zeros = (int)(tu_rand_u64() & 1);
    gemm_case_t g = {m, 0, 0, 0, NULL, 0, 1};
    const uint64_t rs = tu_rand_u64() % 10;
    if (rs < 2)
        g.ldx_pad = (8 - k % 8) % 8 + 8 * tu_rand_between(0, 2); /* 16-byte rows past k */
    else if (rs < 4 && !model)
        g.ldx_pad = tu_rand_between(1, 13);
    if (tu_rand_u64() % 10 < 3) g.ldy_pad = tu_rand_between(1, 9);
    if (tu_rand_u64() % 8 == 0 && !model) g.x_offset = (int)tu_rand_between(1, 7);
    /* over the cap: fewer weight rows (kept on n's multiple; a prefill keeps
     * 256), then fewer x rows */
    if ((m + RND_W_COST) * n * k > cap) {
        int64_t fit = cap / ((m + RND_W_COST) * k);
        if (n_align > 1 && fit >= n_align) fit -= fit % n_align;
        const int64_t floor_n = m > 96 && n > 256 ? 256 : 1;
        n = fit > floor_n ? fit : floor_n;
        if ((m + RND_W_COST) * n * k > cap) {
            const int64_t mf = cap / (n * k) - RND_W_COST;
            m = mf > 1 ? mf : 1;
        }
        if ((m + RND_W_COST) * n * k > cap) {
            fit = cap / ((m + RND_W_COST) * k);
            n = fit > 1 ? fit : 1;
        }
        g.m = m;
    }
    c->n = n;
    c->k = k;
    c->group_size = gs;
    c->g = g;
}

static void run_random_tests(cuops_handle_t h, int quick, int only)
{
    const int cases = tu_random_cases(quick ? 10 : 80);
    if (cases <= 0) return;
    if (g_only_variant) { /* gpu_gemm_check runs forced variants only then */
        fprintf(stderr, "random shapes: not run (auto only; CUOPS_TEST_VARIANT is set)\n");
        return;
    }
    CHECK(only < cases, "CUOPS_TEST_RANDOM_CASE=%d: there are %d cases", only, cases);
    const int64_t avg = quick ? RND_AVG_QUICK : RND_AVG;
    int64_t left = avg * cases;
    int ran = 0, passed = 0;
    double used = 0.0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < cases; i++) {
        int64_t cap = 4 * left / (cases - i);
        if (cap > left) cap = left;
        if (cap > RND_MAX) cap = RND_MAX;
        if (cap < RND_MIN) cap = RND_MIN;
        tu_seed(tu_case_seed(g_seed, i));
        rnd_case_t c;
        rnd_draw(&c, quick, cap);
        const int64_t cost = (c.g.m + RND_W_COST) * c.n * c.k;
        left = left > cost ? left - cost : 0;
        if (only >= 0 && i != only) continue;
        used += (double)cost;
        const int failed0 = tu_failed;
        host_weight_t w;
        make_weight(&w, c.n, c.k, c.group_size, c.scale_type, c.zeros);
        gpu_weight_t gw;
        if (gpu_prepack(h, &w, c.act, &gw)) {
            float *wd = dequant_reference(&w, c.act);
            gpu_gemm_check(h, &w, wd, &gw, c.act, c.g);
            free(wd);
        }
        cudaFree(gw.packed);
        ran++;
        if (tu_failed == failed0)
            passed++;
        else
            fprintf(stderr,
                    "FAIL random case %d (CUOPS_TEST_SEED=%llu CUOPS_TEST_RANDOM_CASES=%d "
                    "CUOPS_TEST_RANDOM_CASE=%d%s): %s m=%lld n=%lld k=%lld group_size=%lld "
                    "zeros=%d scales=%s ldq=%lld ldx=%lld ldy=%lld x_offset=%d, kernel %s\n",
                    i, (unsigned long long)g_seed, cases, i, quick ? " CUOPS_TEST_QUICK=1" : "",
                    act_name(c.act), (long long)c.g.m, (long long)c.n, (long long)c.k,
                    (long long)c.group_size, c.zeros,
                    c.scale_type == CUOPS_DTYPE_F32 ? "f32" : act_name(c.scale_type),
                    (long long)w.ldq, (long long)(c.k + c.g.ldx_pad),
                    (long long)(c.n + c.g.ldy_pad), c.g.x_offset, cuops_last_kernel(h));
        free_weight(&w);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr,
            "random shapes: %d of %d cases passed (CUOPS_TEST_SEED=%llu; %.2g host units, %.1f s)\n",
            passed, ran, (unsigned long long)g_seed, used,
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
}

/* ---- CPU backend round trip ------------------------------------------------ */

static void run_cpu_tests(void)
{
    cuops_handle_t hc = NULL;
    cuops_status_t st = cuops_create(&hc, CUOPS_DEVICE_CPU);
    CHECK(st == CUOPS_STATUS_SUCCESS, "cpu handle: %s", cuops_status_string(st));
    if (st != CUOPS_STATUS_SUCCESS) return;
    static const weight_case_t wcases[] = {
        {24, 96, 32, 1, CUOPS_DTYPE_F16, 1},
        {33, 130, 64, 0, CUOPS_DTYPE_F32, 1},
        {5, 40, 40, 1, CUOPS_DTYPE_BF16, 1},
        {40, 1152, 192, 1, CUOPS_DTYPE_F16, 1},
        {24, 1000, 48, 0, CUOPS_DTYPE_BF16, 1},
    };
    static const int64_t m_list[] = {1, 5, 17};
    for (int a = 0; a < 2; a++) {
        cuops_dtype_t act = a ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16;
        for (size_t wi = 0; wi < sizeof wcases / sizeof wcases[0]; wi++) {
            const weight_case_t *wc = &wcases[wi];
            host_weight_t w;
            make_weight(&w, wc->n, wc->k, wc->group_size, wc->scale_type, wc->with_zeros);
            float *wd = dequant_reference(&w, act);
            size_t bytes = 0;
            st = cuops_w4_packed_size(hc, w.n, w.k, w.group_size, act, &bytes);
            CHECK(st == CUOPS_STATUS_SUCCESS && bytes > 0, "cpu packed_size: %s",
                  cuops_status_string(st));
            void *packed = st == CUOPS_STATUS_SUCCESS ? malloc(bytes ? bytes : 1) : NULL;
            if (packed) {
                st = cuops_w4_prepack(hc, w.n, w.k, w.group_size, w.qweight, w.ldq, w.scales,
                                      w.scale_type, w.zeros, act, packed);
                CHECK(st == CUOPS_STATUS_SUCCESS, "cpu prepack: %s (%s)", cuops_status_string(st),
                      cuops_last_error(hc));
                for (size_t mi = 0; st == CUOPS_STATUS_SUCCESS && mi < 3; mi++) {
                    int64_t m = m_list[mi], ldx = w.k + 3, ldy = w.n + 2;
                    uint16_t *x = (uint16_t *)malloc((size_t)(m * ldx) * 2);
                    uint16_t *y = (uint16_t *)malloc((size_t)(m * ldy) * 2);
                    tu_fill_float(x, act, (size_t)(m * ldx), -1.0, 1.0);
                    tu_poison(y, act, (size_t)(m * ldy));
                    uint16_t poison = y[0];
                    cuops_status_t gs = cuops_gemm_w4a16(hc, m, w.n, w.k, w.group_size, x, ldx,
                                                         packed, y, ldy, act);
                    CHECK(gs == CUOPS_STATUS_SUCCESS, "cpu gemm_w4a16: %s (%s)",
                          cuops_status_string(gs), cuops_last_error(hc));
                    if (gs == CUOPS_STATUS_SUCCESS) {
                        double *ref = gemm_reference(wd, w.n, w.k, x, m, ldx, act);
                        int64_t nans = 0, outliers = 0;
                        double rel = compare_y(y, ldy, ref, m, w.n, act, &nans, &outliers);
                        CHECK(nans == 0 && rel <= REL_TOL && outliers == 0,
                              "cpu %s m=%lld n=%lld k=%lld g=%lld: rel err %.3e, %lld NaN, "
                              "%lld outlier(s)",
                              act_name(act), (long long)m, (long long)w.n, (long long)w.k,
                              (long long)w.group_size, rel, (long long)nans, (long long)outliers);
                        int64_t bad = 0;
                        for (int64_t i = 0; i < m; i++)
                            for (int64_t r = w.n; r < ldy; r++) bad += y[i * ldy + r] != poison;
                        CHECK(bad == 0, "cpu: %lld elements written in the ldy padding",
                              (long long)bad);
                        free(ref);
                    }
                    free(x);
                    free(y);
                }
                free(packed);
            }
            free(wd);
            free_weight(&w);
        }
    }
    cuops_destroy(hc);
}

int main(void)
{
    g_quick = getenv("CUOPS_TEST_QUICK") != NULL;
    g_only_variant = getenv("CUOPS_TEST_VARIANT");
    g_seed = tu_seed_from_env();
    run_cpu_tests();

    cuops_handle_t h = NULL;
    if (tu_gpu_handle(&h)) {
        cudaDeviceProp prop;
        g_sm_major = cudaGetDeviceProperties(&prop, 0) == cudaSuccess ? prop.major : 0;
        g_smem_optin = g_sm_major ? (int)prop.sharedMemPerBlockOptin : 0;
        g_num_sms = g_sm_major ? prop.multiProcessorCount : 0;
        const char *one = getenv("CUOPS_TEST_RANDOM_CASE"); /* replay one random case */
        const int only = one ? atoi(one) : -1;
        /* CUOPS_TEST_RANDOM_ONLY=1: the random shapes alone (a longer search) */
        const int random_only = tu_env_flag("CUOPS_TEST_RANDOM_ONLY");
        if (only < 0 && !random_only) {
            run_gpu_tests(h);
            run_decode_wgmma_rows_tests(h, g_quick);
            run_warp_tests(h, g_quick);
            run_bulk_ring_tests(h, g_quick);
            run_phase_ring_tests(h, g_quick);
            /* not under the sanitizer's quick sweep: it runs kernels one at a
             * time, so the two calls could not overlap (the gates time out) */
            if (!g_quick) run_concurrent_handles_tests(h);
            test_create_during_capture();
        }
        run_random_tests(h, g_quick, only);
        cuops_destroy(h);
    }
    return tu_finish("test_gpu_w4a16");
}
