/*
 * test_gpu_w4a16_prefill.cu - the W4A16 GEMM's prefill path (m >= 256:
 * variants "w4a16_dequant_gemm" and "w4a16_prefill_wgmma", and what "auto"
 * picks there) on the GPU
 * against an fp64 host GEMM of the weight dequantized with the exact formula
 * ((q - z) * s in fp32 with s rounded to the activation type, the product
 * rounded to it as cuops_dequant_int4 does).
 *
 * Covers m in {256, 257, 1000}; (n, k) in {(4096, 4096), (1000, 2048),
 * (1088, 1000), (64, 128)} (1088 and 64 rows: a last 128-row block of the
 * fused kernel with only 64 packed rows; k = 1000: a partial last k block
 * and group); group sizes 32, 64, 128 and per-channel; zeros and NULL
 * (symmetric) zeros; f16 and bf16; ldy > n; ldx > k; a 2-byte-aligned x
 * with an odd ldx (x is packed for TMA); a small user workspace that forces
 * many weight chunks (ragged last chunk) and one too small to hold a chunk
 * (NOT_SUPPORTED, nothing written). y is NaN-poisoned, with poisoned guard
 * bands around it and in the ldy padding: every element of y[0..m)[0..n)
 * must be written and nothing else. The host reference is computed on a
 * sample of rows of y (always the first and the last) to keep its cost
 * moderate; every row is checked for NaN. The fused kernel (sm_90 only)
 * runs with ldy % 8 != 0 (element stores), with 16-byte-aligned x and y
 * (vector stores) and with a 2-byte-aligned x (packed first); it refuses
 * group sizes that are not a multiple of 64 (NOT_SUPPORTED, nothing written).
 * Both fused forms (w4a16_prefill_wgmma, w4a16_prefill_wgmma_ahead) run every
 * fused case, and a 1100 x 4352 x 960 call gives their CTAs several tiles
 * each with an odd number of 64-k blocks per tile. The _ahead form cuts the
 * tiles of a last, partly filled wave along k (at m = 256 and 257 on most
 * weights here, 4 parts at m = 256, and 3 in the 1100 call, on 132 SMs);
 * there the split is also forced off and to 2 parts, and a repeated call
 * must give the same bits.
 *
 *   build/tests/test_gpu_w4a16_prefill      (CUOPS_TEST_SEED=... to replay)
 */
#include <cuda_runtime.h>

#include "gpu_test_util.h"
#include "w4a16_test_weight.h"

#define REL_TOL 1e-2
#define GUARD 256       /* poisoned elements before and after y */
#define SAMPLE_ROWS 12  /* rows of y compared with the host reference (large calls) */
#define FULL_CHECK_MACS ((int64_t)1 << 27) /* below this m * n * k, every row */
#define PREFILL_VARIANT "w4a16_dequant_gemm"
#define FUSED_VARIANT "w4a16_prefill_wgmma"
/* the fused kernels: int4 words through shared memory, or into registers
 * with each block dequantized a block ahead (what auto picks) */
static const char *const fused_variants[] = {FUSED_VARIANT, "w4a16_prefill_wgmma_ahead"};

/* ---- the weight, in the seed format, and its dense reference -------------- */

/* W[r][c] = round_act((q - z) * round_act(s)), as float. */
static float *dequant_reference(const host_weight_t *w, cuops_dtype_t act)
{
    return dequant_reference_rounded(w, act, 1);
}

static int gpu_prepack(cuops_handle_t h, const host_weight_t *w, cuops_dtype_t act,
                       void **packed)
{
    *packed = NULL;
    size_t bytes = 0;
    cuops_status_t st = cuops_w4_packed_size(h, w->n, w->k, w->group_size, act, &bytes);
    CHECK(st == CUOPS_STATUS_SUCCESS && bytes > 0, "packed_size n=%lld k=%lld g=%lld: %s (%s)",
          (long long)w->n, (long long)w->k, (long long)w->group_size, cuops_status_string(st),
          cuops_last_error(h));
    if (st != CUOPS_STATUS_SUCCESS || bytes == 0) return 0;
    size_t ns = (size_t)(w->n * w->num_groups);
    void *dq = NULL, *ds = NULL, *dz = NULL;
    int ok = cudaMalloc(packed, bytes) == cudaSuccess &&
             cudaMalloc(&dq, (size_t)(w->n * w->ldq)) == cudaSuccess &&
             cudaMalloc(&ds, ns * scale_bytes(w->scale_type)) == cudaSuccess &&
             (!w->zeros || cudaMalloc(&dz, ns) == cudaSuccess);
    CHECK(ok, "cudaMalloc for prepack failed");
    if (ok) {
        cudaMemset(*packed, 0xff, bytes);
        cudaMemcpy(dq, w->qweight, (size_t)(w->n * w->ldq), cudaMemcpyHostToDevice);
        cudaMemcpy(ds, w->scales, ns * scale_bytes(w->scale_type), cudaMemcpyHostToDevice);
        if (dz) cudaMemcpy(dz, w->zeros, ns, cudaMemcpyHostToDevice);
        st = cuops_w4_prepack(h, w->n, w->k, w->group_size, dq, w->ldq, ds, w->scale_type, dz,
                              act, *packed);
        CHECK(st == CUOPS_STATUS_SUCCESS, "prepack: %s (%s)", cuops_status_string(st),
              cuops_last_error(h));
        cudaError_t ce = cudaDeviceSynchronize();
        CHECK(ce == cudaSuccess, "prepack sync: %s", cudaGetErrorString(ce));
        ok = st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess;
    }
    cudaFree(dq);
    cudaFree(ds);
    cudaFree(dz);
    return ok;
}

/* ---- one activation matrix and its sampled reference ----------------------- */

typedef struct activation {
    int64_t m, k;
    uint16_t *x;        /* [m][k], dense */
    int64_t *rows;      /* every row where m * n * k <= FULL_CHECK_MACS, else a sample */
    int64_t nrows;
    double *ref;        /* [nrows][n]: fp64 x[rows[i]] . W^T */
} activation_t;

static void make_activation(activation_t *a, int64_t m, const host_weight_t *w, const float *wd,
                            cuops_dtype_t act)
{
    a->m = m;
    a->k = w->k;
    a->x = (uint16_t *)malloc((size_t)(m * w->k) * 2);
    tu_fill_float(a->x, act, (size_t)(m * w->k), -1.0, 1.0);
    /* every row where the host reference is cheap; else the first and last
     * rows (edges of the m tiles) and the rest at random (a bug confined to
     * one 64-row block of 1000 escaped a 12-row sample about half the time) */
    const int full = m * w->n * w->k <= FULL_CHECK_MACS;
    a->nrows = full || m < SAMPLE_ROWS ? m : SAMPLE_ROWS;
    a->rows = (int64_t *)malloc((size_t)a->nrows * sizeof(int64_t));
    for (int64_t i = 0; i < a->nrows; i++)
        a->rows[i] = full ? i
                     : i == 0 ? 0
                     : i == 1 ? m - 1
                              : (int64_t)(tu_rand_u64() % (uint64_t)m);
    a->ref = (double *)malloc((size_t)a->nrows * (size_t)w->n * sizeof(double));
    double *xr = (double *)malloc((size_t)w->k * sizeof(double));
    for (int64_t i = 0; i < a->nrows; i++) {
        const uint16_t *xrow = a->x + a->rows[i] * w->k;
        for (int64_t c = 0; c < w->k; c++) xr[c] = act_to_float(xrow[c], act);
        for (int64_t r = 0; r < w->n; r++) {
            const float *wr = wd + r * w->k;
            double s = 0.0;
            for (int64_t c = 0; c < w->k; c++) s += xr[c] * (double)wr[c];
            a->ref[(size_t)i * (size_t)w->n + (size_t)r] = s;
        }
    }
    free(xr);
}

static void free_activation(activation_t *a)
{
    free(a->x);
    free(a->rows);
    free(a->ref);
}

/* ---- one call ----------------------------------------------------------- */

typedef struct call_case {
    const char *variant;   /* NULL: the plain call (auto) */
    int64_t ldx_pad, ldy_pad;
    int x_offset;          /* elements; 1 leaves x only 2-byte aligned */
    size_t user_ws_bytes;  /* 0: the handle's own workspace */
    cuops_status_t expect; /* SUCCESS, or the refusal expected */
    int split_k;           /* options.split_k (0: the variant's choice) */
    int repeat;            /* call again and require the same bits in y */
} call_case_t;

/* Runs the call, checks the status, the sampled rows against the reference,
 * NaN in every row, and the poison outside y. Returns the kernel name. */
static void run_case(cuops_handle_t h, int sm_major, const host_weight_t *w, const void *packed,
                     const activation_t *a, cuops_dtype_t act, call_case_t c)
{
    const int64_t m = a->m, n = w->n, k = w->k;
    const int64_t ldx = k + c.ldx_pad, ldy = n + c.ldy_pad;
    size_t xelems = (size_t)(m * ldx);
    uint16_t *x = (uint16_t *)malloc(xelems * 2);
    tu_fill_float(x, act, xelems, -1.0, 1.0); /* padding: random, must not be read into y */
    for (int64_t i = 0; i < m; i++) memcpy(x + i * ldx, a->x + i * k, (size_t)k * 2);
    size_t yelems = (size_t)(m * ldy) + 2 * GUARD;
    uint16_t *y = (uint16_t *)malloc(yelems * 2);
    tu_poison(y, act, yelems);
    const uint16_t poison = y[0];

    void *dx_base = NULL, *dy_base = NULL, *ws = NULL;
    if (cudaMalloc(&dx_base, (xelems + 8) * 2) != cudaSuccess ||
        cudaMalloc(&dy_base, yelems * 2) != cudaSuccess ||
        (c.user_ws_bytes && cudaMalloc(&ws, c.user_ws_bytes) != cudaSuccess)) {
        CHECK(0, "cudaMalloc for the call failed");
        cudaFree(dx_base);
        cudaFree(dy_base);
        free(x);
        free(y);
        return;
    }
    uint16_t *dx = (uint16_t *)dx_base + c.x_offset;
    uint16_t *dy = (uint16_t *)dy_base + GUARD;
    cudaMemcpy(dx, x, xelems * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dy_base, y, yelems * 2, cudaMemcpyHostToDevice);
    if (ws) CHECK_STATUS(cuops_set_workspace(h, ws, c.user_ws_bytes), CUOPS_STATUS_SUCCESS);

    cuops_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.variant = c.variant;
    opt.split_k = c.split_k;
    cuops_status_t st;
    if (c.variant || c.split_k)
        st = cuops_gemm_w4a16_ex(h, m, n, k, w->group_size, dx, ldx, packed, dy, ldy, act, &opt);
    else
        st = cuops_gemm_w4a16(h, m, n, k, w->group_size, dx, ldx, packed, dy, ldy, act);
    const char *kernel = st == CUOPS_STATUS_SUCCESS ? cuops_last_kernel(h) : "";
    cudaError_t ce = cudaDeviceSynchronize();
    /* run to run: the same call again, and y must not change by one bit (a
     * k-split tile's parts are summed in a fixed order, whichever finished
     * last) */
    int64_t changed = -1;
    if (c.repeat && st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess) {
        uint16_t *first = (uint16_t *)malloc(yelems * 2);
        uint16_t *again = (uint16_t *)malloc(yelems * 2);
        changed = 0;
        cudaMemcpy(first, dy_base, yelems * 2, cudaMemcpyDeviceToHost);
        for (int r = 0; r < 3 && ce == cudaSuccess; r++) {
            if (cuops_gemm_w4a16_ex(h, m, n, k, w->group_size, dx, ldx, packed, dy, ldy, act,
                                    &opt) != CUOPS_STATUS_SUCCESS)
                changed++;
            ce = cudaDeviceSynchronize();
            cudaMemcpy(again, dy_base, yelems * 2, cudaMemcpyDeviceToHost);
            changed += memcmp(first, again, yelems * 2) != 0;
        }
        free(first);
        free(again);
    }
    if (ws) {
        CHECK_STATUS(cuops_set_workspace(h, NULL, 0), CUOPS_STATUS_SUCCESS);
        cudaFree(ws);
    }
    char what[256];
    snprintf(what, sizeof what,
             "%s %s m=%lld n=%lld k=%lld g=%lld zeros=%d ldx=%lld ldy=%lld xoff=%d ws=%zu "
             "split_k=%d",
             act_name(act), c.variant ? c.variant : "(auto)", (long long)m, (long long)n,
             (long long)k, (long long)w->group_size, w->zeros != NULL, (long long)ldx,
             (long long)ldy, c.x_offset, c.user_ws_bytes, c.split_k);
    CHECK(st == c.expect, "%s: got %s, expected %s (%s)", what, cuops_status_string(st),
          cuops_status_string(c.expect), cuops_last_error(h));
    CHECK(ce == cudaSuccess, "%s: sync: %s", what, cudaGetErrorString(ce));
    if (c.repeat)
        CHECK(changed == 0, "%s: %lld of 3 repeated calls changed y (or failed)", what,
              (long long)changed);
    cudaMemcpy(y, dy_base, yelems * 2, cudaMemcpyDeviceToHost);

    if (st == CUOPS_STATUS_SUCCESS && c.expect == CUOPS_STATUS_SUCCESS && ce == cudaSuccess) {
        /* auto must take the prefill path on Hopper from m = 256: the fused
         * kernel where it serves the call */
        const int fused_serves = w->group_size % 64 == 0 || w->group_size >= k;
        const char *want = fused_serves ? fused_variants[1] : PREFILL_VARIANT;
        if (!c.variant && sm_major == 9 && m >= 256)
            CHECK(strcmp(kernel, want) == 0, "%s: auto ran '%s', expected %s", what, kernel, want);
        if (c.variant) CHECK(strcmp(kernel, c.variant) == 0, "%s: ran '%s'", what, kernel);
        const uint16_t *yv = y + GUARD;
        int64_t nans = 0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t r = 0; r < n; r++)
                if (isnan(act_to_float(yv[i * ldy + r], act))) {
                    if (nans == 0)
                        fprintf(stderr, "  %s: first NaN at y[%lld][%lld]\n", what, (long long)i,
                                (long long)r);
                    nans++;
                }
        double num = 0.0, den = 0.0, max_err = 0.0;
        int64_t worst_row = -1, worst_col = -1;
        for (int64_t s = 0; s < a->nrows; s++) {
            const int64_t i = a->rows[s];
            for (int64_t r = 0; r < n; r++) {
                double v = act_to_float(yv[i * ldy + r], act);
                double e = a->ref[(size_t)s * (size_t)n + (size_t)r];
                if (isnan(v)) continue;
                num += (v - e) * (v - e);
                den += e * e;
                if (fabs(v - e) > max_err) {
                    max_err = fabs(v - e);
                    worst_row = i;
                    worst_col = r;
                }
            }
        }
        double rel = den > 0 ? sqrt(num / den) : sqrt(num);
        /* and every element: off by at most 8 x REL_TOL of the RMS of the
         * checked outputs plus 2^-7 of its own value (y's rounding) */
        const double rms = sqrt(den / (double)(a->nrows * n));
        int64_t outliers = 0;
        for (int64_t s = 0; s < a->nrows; s++)
            for (int64_t r = 0; r < n; r++) {
                const double v = act_to_float(yv[a->rows[s] * ldy + r], act);
                const double e = a->ref[(size_t)s * (size_t)n + (size_t)r];
                if (!isnan(v) && fabs(v - e) > 8.0 * REL_TOL * rms + ldexp(fabs(e), -7))
                    outliers++;
            }
        CHECK(nans == 0 && rel <= REL_TOL && outliers == 0,
              "%s kernel=%s: rel err %.3e (max abs %.3e at y[%lld][%lld]), %lld NaN, %lld "
              "element(s) off by more than %.2g of the RMS %.3g",
              what, kernel, rel, max_err, (long long)worst_row, (long long)worst_col,
              (long long)nans, (long long)outliers, 8.0 * REL_TOL, rms);
    }
    /* Nothing outside y[0..m)[0..n) may change; after a refusal nothing at all. */
    int64_t bad = 0;
    for (int64_t i = 0; i < GUARD; i++) {
        bad += y[i] != poison;
        bad += y[yelems - 1 - i] != poison;
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t r = (st == CUOPS_STATUS_SUCCESS ? n : 0); r < ldy; r++)
            bad += y[GUARD + i * ldy + r] != poison;
    CHECK(bad == 0, "%s: %lld elements written where they must not be", what, (long long)bad);

    cudaFree(dx_base);
    cudaFree(dy_base);
    free(x);
    free(y);
}

/* ---- the sweep ----------------------------------------------------------- */

typedef struct weight_case {
    int64_t n, k, group_size;
    int with_zeros;
    cuops_dtype_t scale_type;
} weight_case_t;

static void run_gpu_tests(cuops_handle_t h, int sm_major)
{
    static const weight_case_t wcases[] = {
        {4096, 4096, 128, 1, CUOPS_DTYPE_F16},
        {4096, 4096, 32, 0, CUOPS_DTYPE_BF16},
        {4096, 4096, 4096, 1, CUOPS_DTYPE_F32}, /* per-channel */
        {1000, 2048, 32, 1, CUOPS_DTYPE_F16},
        {1000, 2048, 64, 0, CUOPS_DTYPE_F32},
        {1000, 2048, 128, 1, CUOPS_DTYPE_BF16},
        {1000, 2048, 2048, 0, CUOPS_DTYPE_F16}, /* per-channel */
        {1088, 1000, 128, 1, CUOPS_DTYPE_BF16},
        {1088, 1000, 64, 0, CUOPS_DTYPE_F16},
        {64, 128, 32, 0, CUOPS_DTYPE_F16},
        {64, 128, 64, 1, CUOPS_DTYPE_BF16},
        {64, 128, 128, 0, CUOPS_DTYPE_F32},     /* per-channel (group_size == k) */
        {64, 128, 1000, 1, CUOPS_DTYPE_F16},    /* per-channel (group_size > k) */
    };
    static const int64_t m_list[] = {256, 257, 1000};
    /* CUOPS_TEST_QUICK (compute-sanitizer): weights up to 1000 x 2048, m = 256, 257 */
    const int quick = getenv("CUOPS_TEST_QUICK") != NULL;

    for (int ai = 0; ai < 2; ai++) {
        cuops_dtype_t act = ai ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16;
        for (size_t wi = 0; wi < sizeof wcases / sizeof wcases[0]; wi++) {
            const weight_case_t *wc = &wcases[wi];
            if (quick && wc->n * wc->k > 1000 * 2048) continue;
            host_weight_t w;
            make_weight(&w, wc->n, wc->k, wc->group_size, wc->scale_type, wc->with_zeros);
            void *packed = NULL;
            if (gpu_prepack(h, &w, act, &packed)) {
                float *wd = dequant_reference(&w, act);
                /* bytes of one dense row as the prefill path lays it out (k to 64) */
                const size_t row_bytes = (size_t)((w.k + 63) / 64 * 64) * 2;
                for (size_t mi = 0; mi < (quick ? 2u : sizeof m_list / sizeof m_list[0]); mi++) {
                    activation_t a;
                    make_activation(&a, m_list[mi], &w, wd, act);
                    /* variant, ldx pad, ldy pad, x offset, user workspace, expected */
                    const call_case_t plain = {PREFILL_VARIANT, 0, 3, 0, 0, CUOPS_STATUS_SUCCESS};
                    const call_case_t autoc = {NULL, 8, 8, 0, 0, CUOPS_STATUS_SUCCESS};
                    const call_case_t unaligned = {PREFILL_VARIANT, 5, 1, 1, 0,
                                                   CUOPS_STATUS_SUCCESS};
                    /* ~5 chunks of 64-row multiples: many GEMM calls, ragged last one */
                    const size_t small = row_bytes * (size_t)((w.n + 63) / 64 * 64 / 5 + 64) + 256;
                    const call_case_t chunked = {PREFILL_VARIANT, 0, 2, 0, small,
                                                 CUOPS_STATUS_SUCCESS};
                    /* less than one 64-row chunk: refused, y untouched */
                    const call_case_t refused = {PREFILL_VARIANT, 0, 2, 0, row_bytes * 32,
                                                 CUOPS_STATUS_NOT_SUPPORTED};
                    run_case(h, sm_major, &w, packed, &a, act, plain);
                    run_case(h, sm_major, &w, packed, &a, act, autoc);
                    if (sm_major == 9) {
                        const int serves = w.group_size % 64 == 0 || w.group_size >= w.k;
                        const cuops_status_t fe =
                            serves ? CUOPS_STATUS_SUCCESS : CUOPS_STATUS_NOT_SUPPORTED;
                        for (int fv = 0; fv < 2; fv++) {
                            const char *f = fused_variants[fv];
                            const call_case_t fused_scalar = {f, 0, 3, 0, 0, fe};
                            const call_case_t fused_vec = {f, 8, 8, 0, 0, fe};
                            const call_case_t fused_packed_x = {f, 5, 1, 1, 0, fe};
                            run_case(h, sm_major, &w, packed, &a, act, fused_scalar);
                            run_case(h, sm_major, &w, packed, &a, act, fused_vec);
                            if (mi != 1) run_case(h, sm_major, &w, packed, &a, act, fused_packed_x);
                        }
                    }
                    run_case(h, sm_major, &w, packed, &a, act, unaligned);
                    if (mi != 1) run_case(h, sm_major, &w, packed, &a, act, chunked);
                    if (mi == 0) run_case(h, sm_major, &w, packed, &a, act, refused);
                    free_activation(&a);
                }
                free(wd);
            }
            cudaFree(packed);
            free_weight(&w);
        }
    }

    /* Forced, the variant serves decode-sized m too (the GEMM picks its kernel). */
    {
        host_weight_t w;
        make_weight(&w, 200, 320, 64, CUOPS_DTYPE_F16, 1);
        void *packed = NULL;
        if (gpu_prepack(h, &w, CUOPS_DTYPE_F16, &packed)) {
            float *wd = dequant_reference(&w, CUOPS_DTYPE_F16);
            static const int64_t small_m[] = {1, 7, 65, 129};
            for (size_t mi = 0; mi < sizeof small_m / sizeof small_m[0]; mi++) {
                activation_t a;
                make_activation(&a, small_m[mi], &w, wd, CUOPS_DTYPE_F16);
                const call_case_t c = {PREFILL_VARIANT, 1, 1, 0, 0, CUOPS_STATUS_SUCCESS};
                run_case(h, sm_major, &w, packed, &a, CUOPS_DTYPE_F16, c);
                for (int fv = 0; fv < 2 && sm_major == 9; fv++) {
                    const call_case_t f = {fused_variants[fv], 0, 0, 0, 0, CUOPS_STATUS_SUCCESS};
                    run_case(h, sm_major, &w, packed, &a, CUOPS_DTYPE_F16, f);
                }
                free_activation(&a);
            }
            free(wd);
        }
        cudaFree(packed);
        free_weight(&w);
    }

    /* More tiles than SMs (170 tiles of 128 weight rows x 256 x rows), an odd
     * number of 64-k blocks per tile (15) and groups of 3 blocks: the fused
     * kernels' CTAs walk several tiles, and the _ahead form's loads (three
     * blocks ahead) and dequant (one block ahead) cross from one tile into
     * the next. */
    if (sm_major == 9) {
        static const int64_t group_sizes[] = {192, 64};
        for (int gi = 0; gi < 2; gi++) {
            const cuops_dtype_t act = gi ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16;
            host_weight_t w;
            make_weight(&w, 4352, 960, group_sizes[gi], act, gi == 0);
            void *packed = NULL;
            if (gpu_prepack(h, &w, act, &packed)) {
                float *wd = dequant_reference(&w, act);
                activation_t a;
                make_activation(&a, 1100, &w, wd, act);
                for (int fv = 0; fv < 2; fv++) {
                    const call_case_t f = {fused_variants[fv], 8, 8, 0, 0, CUOPS_STATUS_SUCCESS};
                    run_case(h, sm_major, &w, packed, &a, act, f);
                }
                /* the _ahead form cuts the last wave's 38 tiles along k
                 * (3 parts of 5 blocks, the second starting inside a group
                 * of 3 blocks at g = 192): forced to 1 (no split) and to 2
                 * parts (7 + 8 blocks; y without TMA stores), and the plain
                 * call repeated bit for bit */
                static const int splits[] = {1, 2};
                for (int si = 0; si < 2; si++) {
                    const call_case_t f = {fused_variants[1], 8, si == 1 ? 3 : 8, 0, 0,
                                           CUOPS_STATUS_SUCCESS, splits[si], 0};
                    run_case(h, sm_major, &w, packed, &a, act, f);
                }
                const call_case_t again = {NULL, 0, 8, 0, 0, CUOPS_STATUS_SUCCESS, 0, 1};
                run_case(h, sm_major, &w, packed, &a, act, again);
                free_activation(&a);
                free(wd);
            }
            cudaFree(packed);
            free_weight(&w);
        }
    }

    /* The variant is listed. */
    const char *const *names = NULL;
    int count = 0;
    CHECK_STATUS(cuops_variant_names("w4a16", &names, &count), CUOPS_STATUS_SUCCESS);
    int listed = 0;
    int listed_fused[2] = {0, 0};
    for (int i = 0; i < count; i++) {
        listed |= strcmp(names[i], PREFILL_VARIANT) == 0;
        for (int fv = 0; fv < 2; fv++) listed_fused[fv] |= strcmp(names[i], fused_variants[fv]) == 0;
    }
    CHECK(listed, "cuops_variant_names(\"w4a16\") does not list %s", PREFILL_VARIANT);
    for (int fv = 0; fv < 2; fv++)
        CHECK(listed_fused[fv], "cuops_variant_names(\"w4a16\") does not list %s", fused_variants[fv]);
}

int main(void)
{
    tu_seed_from_env();
    cuops_handle_t h = NULL;
    if (tu_gpu_handle(&h)) {
        cudaDeviceProp prop;
        int sm_major = cudaGetDeviceProperties(&prop, 0) == cudaSuccess ? prop.major : 0;
        run_gpu_tests(h, sm_major);
        cuops_destroy(h);
    }
    return tu_finish("test_gpu_w4a16_prefill");
}
