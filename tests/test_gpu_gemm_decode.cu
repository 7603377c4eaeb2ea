/*
 * test_gpu_gemm_decode.cu - the decode GEMM variants (decode_splitk_m8, _m16,
 * _m32, _m64: C[m,n] = alpha * A[m,k] * B[n,k]^T + beta * C, m <= 64) on the
 * GPU against the CPU reference backend.
 *
 * Every case: fresh random A and B with NaN in their row padding (a kernel
 * reading past k shows it), C surrounded by a guard band of sentinels and
 * with sentinels in its own row padding, the m x n block NaN-poisoned when
 * beta == 0 (must not be read) or random when beta != 0. The CPU reference
 * runs once; then each forced variant runs on the same inputs: a variant
 * whose m tile is below m must answer NOT_SUPPORTED, the others must succeed
 * with ||gpu - ref|| / ||ref|| <= 1e-2 (f16/bf16 C) or 5e-3 (f32 C), no NaN
 * and every sentinel intact. Split-K is exercised through options.split_k
 * (1, 3, 7, and the automatic choice), stream-K through shapes whose tile
 * count leaves a thin last wave on a 132-SM part.
 *
 * Large shapes (16 x 28672 x 8192, 1 x 4096 x 14336, ...) are checked with
 * C x = alpha A (B x) + beta C0 x for a random x in fp64 on the host.
 * Determinism: two runs of a split shape give identical bytes. Unsupported
 * requests (m = 65, trans_b = N, misaligned or badly strided operands, k not
 * a multiple of 8, f32 inputs) answer NOT_SUPPORTED when forced.
 *
 * Without a CUDA device the test says SKIP and passes. CUOPS_TEST_SEED
 * reproduces a run.
 */
#include <cuda_runtime.h>

#include "test_util.h"

static cuops_handle_t g_gpu, g_cpu;
static int g_device_dead;

static const char *const k_variants[4] = {"decode_splitk_m8", "decode_splitk_m16",
                                          "decode_splitk_m32", "decode_splitk_m64"};
static const int64_t k_variant_m[4] = {8, 16, 32, 64};
static int g_ran[4];

static size_t esize(cuops_dtype_t t) { return t == CUOPS_DTYPE_F32 ? 4 : 2; }
static const char *dname(cuops_dtype_t t)
{
    return t == CUOPS_DTYPE_F16 ? "f16" : t == CUOPS_DTYPE_BF16 ? "bf16" : "f32";
}
static double tolerance(cuops_dtype_t ct) { return ct == CUOPS_DTYPE_F32 ? 5e-3 : 1e-2; }

static void set_elem(void *p, cuops_dtype_t t, size_t i, double v)
{
    switch (t) {
    case CUOPS_DTYPE_F16: ((uint16_t *)p)[i] = cuops_float_to_half((float)v); break;
    case CUOPS_DTYPE_BF16: ((uint16_t *)p)[i] = cuops_float_to_bf16((float)v); break;
    case CUOPS_DTYPE_F32: ((float *)p)[i] = (float)v; break;
    default: break;
    }
}

static int device_ok(const char *what)
{
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) {
        CHECK(e == cudaSuccess, "%s: CUDA error %s (%s)", what, cudaGetErrorName(e),
              cudaGetErrorString(e));
        g_device_dead = 1;
        return 0;
    }
    return 1;
}

typedef struct decode_case {
    int64_t m, n, k;
    int64_t pad_a, pad_b, pad_c; /* leading dimension minus row length */
    cuops_dtype_t ab, ct;
    float alpha, beta;
    int split_k;                 /* options.split_k */
} decode_case_t;

/* rows x cols of random values in [-1, 1) with leading dimension ld; NaN in
 * the padding and in the extra trailing element. */
static void *make_operand(cuops_dtype_t t, int64_t rows, int64_t cols, int64_t ld, size_t *count)
{
    *count = (size_t)(rows * ld + 8);
    void *p = malloc(*count * esize(t));
    if (!p) return NULL;
    tu_poison(p, t, *count);
    for (int64_t r = 0; r < rows; r++)
        tu_fill_float((char *)p + (size_t)(r * ld) * esize(t), t, (size_t)cols, -1.0, 1.0);
    return p;
}

static void check_result(const char *variant, const char *what, const decode_case_t *c,
                         int64_t ldc, int64_t c_off, size_t count_c, const void *hc0,
                         const void *href, const void *hout)
{
    const size_t es = esize(c->ct);
    double err2 = 0.0, ref2 = 0.0, max_err = 0.0;
    int64_t nan_count = 0, guard_bad = 0, first_bad = -1, wr = 0, wj = 0;
    for (size_t i = 0; i < count_c; i++) {
        const int64_t rel = (int64_t)i - c_off;
        const int in_matrix = rel >= 0 && rel < c->m * ldc && rel % ldc < c->n;
        if (!in_matrix) {
            if (memcmp((const char *)hout + i * es, (const char *)hc0 + i * es, es) != 0) {
                if (first_bad < 0) first_bad = (int64_t)i;
                guard_bad++;
            }
            continue;
        }
        const double g = tu_get(hout, c->ct, i), r = tu_get(href, c->ct, i);
        ref2 += r * r;
        if (g != g) { nan_count++; continue; }
        const double d = g - r;
        err2 += d * d;
        if (fabs(d) > max_err) { max_err = fabs(d); wr = rel / ldc; wj = rel % ldc; }
    }
    const double rel_err = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
    const double tol = ref2 > 0.0 ? tolerance(c->ct) : 0.0;
    CHECK(nan_count == 0, "%s: %lld NaN in C for %s", variant, (long long)nan_count, what);
    CHECK(guard_bad == 0, "%s: %lld sentinel(s) outside C changed, first at %lld (C at %lld) for %s",
          variant, (long long)guard_bad, (long long)first_bad, (long long)c_off, what);
    CHECK(rel_err <= tol,
          "%s: rel err %.3g > %.1g (max abs %.3g at [%lld,%lld]: gpu %.6g ref %.6g) for %s",
          variant, rel_err, tol, max_err, (long long)wr, (long long)wj,
          tu_get(hout, c->ct, (size_t)(c_off + wr * ldc + wj)),
          tu_get(href, c->ct, (size_t)(c_off + wr * ldc + wj)), what);
}

/* One case: CPU reference once, then every decode variant. */
static void run_case(const decode_case_t *c)
{
    if (g_device_dead) return;
    const int64_t lda = (c->k > 0 ? c->k : 1) + c->pad_a;
    const int64_t ldb = (c->k > 0 ? c->k : 1) + c->pad_b;
    const int64_t ldc = c->n + c->pad_c;
    const int64_t guard = 29;
    const size_t es_ab = esize(c->ab), es_c = esize(c->ct);
    char what[256];
    snprintf(what, sizeof what,
             "ab=%s c=%s m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld alpha=%g beta=%g "
             "split_k=%d",
             dname(c->ab), dname(c->ct), (long long)c->m, (long long)c->n, (long long)c->k,
             (long long)lda, (long long)ldb, (long long)ldc, (double)c->alpha, (double)c->beta,
             c->split_k);

    size_t count_a = 0, count_b = 0;
    void *ha = make_operand(c->ab, c->m, c->k, lda, &count_a);
    void *hb = make_operand(c->ab, c->n, c->k, ldb, &count_b);
    const int64_t c_off = guard;
    const size_t count_c = (size_t)(c_off + c->m * ldc + guard);
    void *hc0 = malloc(count_c * es_c), *href = malloc(count_c * es_c),
         *hout = malloc(count_c * es_c);
    void *da = NULL, *db = NULL, *dc = NULL;
    if (!ha || !hb || !hc0 || !href || !hout ||
        cudaMalloc(&da, count_a * es_ab) != cudaSuccess ||
        cudaMalloc(&db, count_b * es_ab) != cudaSuccess ||
        cudaMalloc(&dc, count_c * es_c) != cudaSuccess) {
        CHECK(0, "allocation failed for %s", what);
        goto done;
    }
    for (size_t i = 0; i < count_c; i++) set_elem(hc0, c->ct, i, 1234.5);
    for (int64_t r = 0; r < c->m; r++) {
        char *row = (char *)hc0 + (size_t)(c_off + r * ldc) * es_c;
        if (c->beta == 0.0f) tu_poison(row, c->ct, (size_t)c->n);
        else tu_fill_float(row, c->ct, (size_t)c->n, -1.0, 1.0);
    }
    cudaMemcpy(da, ha, count_a * es_ab, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, count_b * es_ab, cudaMemcpyHostToDevice);

    memcpy(href, hc0, count_c * es_c);
    {
        cuops_status_t st = cuops_gemm(g_cpu, CUOPS_OP_N, CUOPS_OP_T, c->m, c->n, c->k, c->alpha,
                                       ha, lda, hb, ldb, c->beta, (char *)href + c_off * es_c,
                                       ldc, c->ab, c->ct);
        CHECK(st == CUOPS_STATUS_SUCCESS, "CPU reference: %s (%s) for %s",
              cuops_status_string(st), cuops_last_error(g_cpu), what);
        if (st != CUOPS_STATUS_SUCCESS) goto done;
    }

    for (int v = 0; v < 4; v++) {
        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.variant = k_variants[v];
        opt.split_k = c->split_k;
        cudaMemcpy(dc, hc0, count_c * es_c, cudaMemcpyHostToDevice);
        cuops_status_t st = cuops_gemm_ex(g_gpu, CUOPS_OP_N, CUOPS_OP_T, c->m, c->n, c->k,
                                          c->alpha, da, lda, db, ldb, c->beta,
                                          (char *)dc + c_off * es_c, ldc, c->ab, c->ct, &opt);
        if (c->m > k_variant_m[v]) {
            CHECK(st == CUOPS_STATUS_NOT_SUPPORTED, "%s must decline m=%lld, got %s", k_variants[v],
                  (long long)c->m, cuops_status_string(st));
            continue;
        }
        CHECK(st == CUOPS_STATUS_SUCCESS, "%s: %s (%s) for %s", k_variants[v],
              cuops_status_string(st), cuops_last_error(g_gpu), what);
        if (st != CUOPS_STATUS_SUCCESS) continue;
        CHECK(!strcmp(cuops_last_kernel(g_gpu), k_variants[v]), "%s reported kernel '%s'",
              k_variants[v], cuops_last_kernel(g_gpu));
        if (!device_ok(k_variants[v])) goto done;
        g_ran[v]++;
        cudaMemcpy(hout, dc, count_c * es_c, cudaMemcpyDeviceToHost);
        check_result(k_variants[v], what, c, ldc, c_off, count_c, hc0, href, hout);
    }
done:
    cudaFree(da); cudaFree(db); cudaFree(dc);
    free(ha); free(hb); free(hc0); free(href); free(hout);
}

static const cuops_dtype_t k_ab[2] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
static const cuops_dtype_t k_ct[3] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32};
static const int k_splits[4] = {0, 1, 3, 7};

/* m x n x k over the lists of the brief, rotating dtype, c_type, beta, alpha,
 * split and leading-dimension padding so that every combination recurs. */
static void test_shape_grid(void)
{
    static const int64_t ms[9] = {1, 2, 7, 8, 9, 16, 17, 33, 64};
    static const int64_t ns[4] = {1, 8, 65, 4096 + 8};
    static const int64_t ks[3] = {8, 64, 4104};
    int idx = 0;
    for (int a = 0; a < 9; a++)
        for (int b = 0; b < 4; b++)
            for (int d = 0; d < 3; d++, idx++) {
                decode_case_t c;
                memset(&c, 0, sizeof c);
                c.m = ms[a]; c.n = ns[b]; c.k = ks[d];
                c.ab = k_ab[idx % 2];
                c.ct = k_ct[(idx / 2) % 3];
                c.beta = (idx / 6) % 2 ? 0.5f : 0.0f;
                c.alpha = (idx / 3) % 2 ? -0.75f : 1.0f;
                c.split_k = k_splits[(idx / 12) % 4];
                /* lda, ldb stay multiples of 8 (the variants need it); ldc anything */
                c.pad_a = (idx % 5 == 1) ? 8 : 0;
                c.pad_b = (idx % 7 == 2) ? 24 : 0;
                c.pad_c = (idx % 3 == 1) ? 3 : 0;
                run_case(&c);
            }
}

/* Every dtype pair at one ragged shape with both betas, auto split. */
static void test_dtypes(void)
{
    for (int ab = 0; ab < 2; ab++)
        for (int ct = 0; ct < 3; ct++)
            for (int bi = 0; bi < 2; bi++) {
                decode_case_t c;
                memset(&c, 0, sizeof c);
                c.m = 13; c.n = 1000 + 7 * ct; c.k = 1032;
                c.ab = k_ab[ab]; c.ct = k_ct[ct];
                c.alpha = 1.0f; c.beta = bi ? 0.5f : 0.0f;
                c.pad_c = 5;
                run_case(&c);
            }
}

/* Tile counts just past a full wave (132 SMs x 2-3 CTAs): the plan takes
 * stream-K there, with tiles split across CTAs and the fix-up pass. */
static void test_stream_k_shapes(void)
{
    static const int64_t shapes[6][3] = {{1, 4704, 1032}, {16, 4808, 520},  {33, 6440, 776},
                                         {64, 4808, 1032}, {64, 9000, 264}, {8, 4240 + 8, 4104}};
    for (int s = 0; s < 6; s++) {
        decode_case_t c;
        memset(&c, 0, sizeof c);
        c.m = shapes[s][0]; c.n = shapes[s][1]; c.k = shapes[s][2];
        c.ab = k_ab[s % 2]; c.ct = k_ct[s % 3];
        c.alpha = 1.0f; c.beta = (s & 1) ? 0.5f : 0.0f;
        run_case(&c);
    }
}

/* k == 0: C = beta * C (beta == 0: the poison becomes 0). */
static void test_k_zero(void)
{
    for (int bi = 0; bi < 2; bi++) {
        decode_case_t c;
        memset(&c, 0, sizeof c);
        c.m = 5; c.n = 77; c.k = 0;
        c.pad_a = 7; c.pad_b = 7; /* lda = ldb = 8 */
        c.ab = CUOPS_DTYPE_F16; c.ct = k_ct[bi];
        c.alpha = 1.0f; c.beta = bi ? 0.5f : 0.0f;
        run_case(&c);
    }
}

/* ---- random-vector check for big shapes ------------------------------------ */

static void run_vector_case(const char *variant, int64_t m, int64_t n, int64_t k,
                            cuops_dtype_t ab, cuops_dtype_t ct, float beta)
{
    if (g_device_dead) return;
    const int64_t guard = 1024;
    const size_t es_ab = esize(ab), es_c = esize(ct);
    const size_t count_a = (size_t)(m * k), count_b = (size_t)(n * k);
    const size_t count_c = (size_t)(m * n + 2 * guard);
    char what[192];
    snprintf(what, sizeof what, "%s ab=%s c=%s m=%lld n=%lld k=%lld beta=%g", variant, dname(ab),
             dname(ct), (long long)m, (long long)n, (long long)k, (double)beta);
    void *ha = malloc(count_a * es_ab), *hb = malloc(count_b * es_ab), *hc = malloc(count_c * es_c);
    double *x = (double *)malloc(sizeof(double) * (size_t)n);
    double *w = (double *)malloc(sizeof(double) * (size_t)k);
    double *z = (double *)malloc(sizeof(double) * (size_t)m);
    void *da = NULL, *db = NULL, *dc = NULL;
    if (!ha || !hb || !hc || !x || !w || !z || cudaMalloc(&da, count_a * es_ab) != cudaSuccess ||
        cudaMalloc(&db, count_b * es_ab) != cudaSuccess ||
        cudaMalloc(&dc, count_c * es_c) != cudaSuccess) {
        CHECK(0, "allocation failed for %s", what);
        goto done;
    }
    tu_fill_float(ha, ab, count_a, -1.0, 1.0);
    tu_fill_float(hb, ab, count_b, -1.0, 1.0);
    for (int64_t j = 0; j < n; j++) x[j] = tu_rand_uniform(-1.0, 1.0);
    for (size_t i = 0; i < count_c; i++) set_elem(hc, ct, i, 1234.5);
    {
        const double sentinel = tu_get(hc, ct, 0);
        if (beta == 0.0f) tu_poison((char *)hc + guard * es_c, ct, (size_t)(m * n));
        else tu_fill_float((char *)hc + guard * es_c, ct, (size_t)(m * n), -1.0, 1.0);
        cudaMemcpy(da, ha, count_a * es_ab, cudaMemcpyHostToDevice);
        cudaMemcpy(db, hb, count_b * es_ab, cudaMemcpyHostToDevice);
        cudaMemcpy(dc, hc, count_c * es_c, cudaMemcpyHostToDevice);

        /* z = A (B^T x) + beta C0 x, with w = B^T x (B stored [n,k]) */
        for (int64_t kk = 0; kk < k; kk++) w[kk] = 0.0;
        for (int64_t j = 0; j < n; j++) {
            const double xj = x[j];
            for (int64_t kk = 0; kk < k; kk++) w[kk] += tu_get(hb, ab, (size_t)(j * k + kk)) * xj;
        }
        for (int64_t i = 0; i < m; i++) {
            double s = 0.0;
            for (int64_t kk = 0; kk < k; kk++) s += tu_get(ha, ab, (size_t)(i * k + kk)) * w[kk];
            if (beta != 0.0f) {
                double c0x = 0.0;
                for (int64_t j = 0; j < n; j++)
                    c0x += tu_get(hc, ct, (size_t)(guard + i * n + j)) * x[j];
                s += beta * c0x;
            }
            z[i] = s;
        }

        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.variant = variant;
        cuops_status_t st = cuops_gemm_ex(g_gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, da, k, db,
                                          k, beta, (char *)dc + guard * es_c, n, ab, ct, &opt);
        CHECK(st == CUOPS_STATUS_SUCCESS, "%s: %s (%s)", what, cuops_status_string(st),
              cuops_last_error(g_gpu));
        if (st != CUOPS_STATUS_SUCCESS) goto done;
        fprintf(stderr, "%s ran %s\n", what, cuops_last_kernel(g_gpu));
        if (!device_ok(what)) goto done;
        cudaMemcpy(hc, dc, count_c * es_c, cudaMemcpyDeviceToHost);

        int64_t nan_count = 0, guard_bad = 0;
        for (int64_t i = 0; i < guard; i++) {
            if (tu_get(hc, ct, (size_t)i) != sentinel) guard_bad++;
            if (tu_get(hc, ct, count_c - 1 - (size_t)i) != sentinel) guard_bad++;
        }
        double err2 = 0.0, ref2 = 0.0;
        for (int64_t i = 0; i < m; i++) {
            double y = 0.0;
            for (int64_t j = 0; j < n; j++) {
                const double v = tu_get(hc, ct, (size_t)(guard + i * n + j));
                if (v != v) nan_count++;
                y += v * x[j];
            }
            err2 += (y - z[i]) * (y - z[i]);
            ref2 += z[i] * z[i];
        }
        const double rel = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
        CHECK(nan_count == 0, "%s: %lld NaN in C", what, (long long)nan_count);
        CHECK(guard_bad == 0, "%s: %lld guard sentinel(s) changed", what, (long long)guard_bad);
        CHECK(rel <= tolerance(ct), "%s: C x vs A (B x) rel err %.3g > %.1g", what, rel,
              tolerance(ct));
    }
done:
    cudaFree(da); cudaFree(db); cudaFree(dc);
    free(ha); free(hb); free(hc); free(x); free(w); free(z);
}

static void test_big(void)
{
    const cuops_dtype_t F16 = CUOPS_DTYPE_F16, BF16 = CUOPS_DTYPE_BF16, F32 = CUOPS_DTYPE_F32;
    run_vector_case("decode_splitk_m16", 16, 28672, 8192, F16, F16, 0.0f);
    run_vector_case("decode_splitk_m16", 16, 28672, 8192, BF16, BF16, 0.5f);
    run_vector_case("decode_splitk_m8", 1, 4096, 14336, F16, F16, 0.0f);
    run_vector_case("decode_splitk_m8", 1, 4096, 14336, BF16, F32, 0.0f);
    run_vector_case("decode_splitk_m64", 64, 14336, 4096, BF16, BF16, 0.0f);
    run_vector_case("decode_splitk_m64", 64, 4096, 14336, F16, F32, 0.5f);
    run_vector_case("decode_splitk_m32", 32, 28672, 8192, F16, BF16, 0.0f);
    run_vector_case("auto", 1, 28672, 8192, F16, F16, 0.0f);
    run_vector_case("auto", 16, 4096, 4096, BF16, BF16, 0.0f);
}

/* ---- determinism ----------------------------------------------------------- */

static void test_determinism(void)
{
    if (g_device_dead) return;
    /* split-K (forced 5), stream-K shape, plain */
    static const int64_t shapes[3][4] = {{16, 4096, 8192, 5}, {64, 9000, 1032, 0},
                                         {1, 4808, 2056, 0}};
    for (int s = 0; s < 3; s++) {
        const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        const size_t bytes_a = (size_t)(m * k) * 2, bytes_b = (size_t)(n * k) * 2;
        const size_t bytes_c = (size_t)(m * n) * 4;
        void *ha = malloc(bytes_a), *hb = malloc(bytes_b), *h1 = malloc(bytes_c),
             *h2 = malloc(bytes_c);
        void *da = NULL, *db = NULL, *dc = NULL;
        if (!ha || !hb || !h1 || !h2 || cudaMalloc(&da, bytes_a) != cudaSuccess ||
            cudaMalloc(&db, bytes_b) != cudaSuccess || cudaMalloc(&dc, bytes_c) != cudaSuccess) {
            CHECK(0, "allocation failed (determinism)");
        } else {
            tu_fill_float(ha, CUOPS_DTYPE_BF16, (size_t)(m * k), -1.0, 1.0);
            tu_fill_float(hb, CUOPS_DTYPE_BF16, (size_t)(n * k), -1.0, 1.0);
            cudaMemcpy(da, ha, bytes_a, cudaMemcpyHostToDevice);
            cudaMemcpy(db, hb, bytes_b, cudaMemcpyHostToDevice);
            const char *variant = m <= 8 ? "decode_splitk_m8" : m <= 16 ? "decode_splitk_m16"
                                                                      : "decode_splitk_m64";
            cuops_options_t opt;
            memset(&opt, 0, sizeof opt);
            opt.variant = variant;
            opt.split_k = (int)shapes[s][3];
            void *out[2] = {h1, h2};
            int ok = 1;
            for (int run = 0; run < 2 && ok; run++) {
                cudaMemset(dc, 0xFF, bytes_c); /* NaN bytes between runs */
                cuops_status_t st = cuops_gemm_ex(g_gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, da,
                                                  k, db, k, 0.0f, dc, n, CUOPS_DTYPE_BF16,
                                                  CUOPS_DTYPE_F32, &opt);
                CHECK(st == CUOPS_STATUS_SUCCESS, "determinism %s m=%lld n=%lld k=%lld: %s (%s)",
                      variant, (long long)m, (long long)n, (long long)k,
                      cuops_status_string(st), cuops_last_error(g_gpu));
                ok = st == CUOPS_STATUS_SUCCESS && device_ok("determinism");
                if (ok) cudaMemcpy(out[run], dc, bytes_c, cudaMemcpyDeviceToHost);
            }
            if (ok) {
                int64_t nan_count = 0;
                for (size_t i = 0; i < (size_t)(m * n); i++)
                    if (((float *)h1)[i] != ((float *)h1)[i]) nan_count++;
                CHECK(nan_count == 0, "determinism %s m=%lld n=%lld: %lld NaN", variant,
                      (long long)m, (long long)n, (long long)nan_count);
                CHECK(memcmp(h1, h2, bytes_c) == 0,
                      "%s m=%lld n=%lld k=%lld split_k=%lld: two runs differ", variant,
                      (long long)m, (long long)n, (long long)k, (long long)shapes[s][3]);
            }
        }
        cudaFree(da); cudaFree(db); cudaFree(dc);
        free(ha); free(hb); free(h1); free(h2);
    }
}

/* ---- what the variants must refuse ------------------------------------------ */

static void test_unsupported(void)
{
    if (g_device_dead) return;
    const int64_t m = 65, n = 64, k = 64;
    uint16_t *da = NULL, *db = NULL;
    float *dc = NULL;
    if (cudaMalloc((void **)&da, (size_t)(m * k + 64) * 2) != cudaSuccess ||
        cudaMalloc((void **)&db, (size_t)(n * k + 64) * 2) != cudaSuccess ||
        cudaMalloc((void **)&dc, (size_t)(m * n + 64) * 4) != cudaSuccess) {
        CHECK(0, "allocation failed (unsupported)");
        goto done;
    }
    cudaMemset(da, 0x3C, (size_t)(m * k + 64) * 2); /* finite f16 1.06 */
    cudaMemset(db, 0x3C, (size_t)(n * k + 64) * 2);
    for (int v = 0; v < 4; v++) {
        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.variant = k_variants[v];
        const cuops_dtype_t F16 = CUOPS_DTYPE_F16, F32 = CUOPS_DTYPE_F32;
        const cuops_op_t N = CUOPS_OP_N, T = CUOPS_OP_T;
        /* m = 65 */
        CHECK_STATUS(cuops_gemm_ex(g_gpu, N, T, 65, n, k, 1.0f, da, k, db, k, 0.0f, dc, n, F16, F32,
                                   &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);
        /* trans_b = N, trans_a = T */
        CHECK_STATUS(cuops_gemm_ex(g_gpu, N, N, 4, n, k, 1.0f, da, k, db, n, 0.0f, dc, n, F16, F32,
                                   &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);
        CHECK_STATUS(cuops_gemm_ex(g_gpu, T, T, 4, n, k, 1.0f, da, 4, db, k, 0.0f, dc, n, F16, F32,
                                   &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);
        /* misaligned A or B (one element off 16 bytes) */
        CHECK_STATUS(cuops_gemm_ex(g_gpu, N, T, 4, n, k, 1.0f, da + 1, k, db, k, 0.0f, dc, n, F16,
                                   F32, &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);
        CHECK_STATUS(cuops_gemm_ex(g_gpu, N, T, 4, n, k, 1.0f, da, k, db + 4, k, 0.0f, dc, n, F16,
                                   F32, &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);
        /* leading dimensions not multiples of 8; k not a multiple of 8 */
        CHECK_STATUS(cuops_gemm_ex(g_gpu, N, T, 4, n, k, 1.0f, da, k + 1, db, k, 0.0f, dc, n, F16,
                                   F32, &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);
        CHECK_STATUS(cuops_gemm_ex(g_gpu, N, T, 4, n, k, 1.0f, da, k, db, k + 4, 0.0f, dc, n, F16,
                                   F32, &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);
        CHECK_STATUS(cuops_gemm_ex(g_gpu, N, T, 4, n, k - 4, 1.0f, da, k, db, k, 0.0f, dc, n, F16,
                                   F32, &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);
        /* f32 inputs */
        CHECK_STATUS(cuops_gemm_ex(g_gpu, N, T, 4, n, k, 1.0f, (float *)da, k, (float *)db, k, 0.0f,
                                   dc, n, F32, F32, &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);
        CHECK(cuops_last_error(g_gpu)[0] != 0, "%s: a refusal leaves a detail", k_variants[v]);
    }
    device_ok("unsupported");
done:
    cudaFree(da); cudaFree(db); cudaFree(dc);
}

int main(void)
{
    tu_seed_from_env();
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        (void)cudaGetLastError();
        SKIP("no CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "count 0");
        return tu_finish("test_gpu_gemm_decode");
    }
    cuops_status_t st = cuops_create(&g_gpu, 0);
    if (st == CUOPS_STATUS_NO_DEVICE) {
        SKIP("cuops_create: %s", cuops_create_error());
        return tu_finish("test_gpu_gemm_decode");
    }
    CHECK_STATUS(st, CUOPS_STATUS_SUCCESS);
    CHECK_STATUS(cuops_create(&g_cpu, CUOPS_DEVICE_CPU), CUOPS_STATUS_SUCCESS);
    if (tu_failed) return tu_finish("test_gpu_gemm_decode");

    /* the four variants must be registered with the GEMM dispatch */
    const char *const *names = NULL;
    int count = 0;
    CHECK_STATUS(cuops_variant_names("gemm", &names, &count), CUOPS_STATUS_SUCCESS);
    int listed = 0;
    for (int v = 0; v < 4; v++)
        for (int i = 0; i < count; i++)
            if (!strcmp(names[i], k_variants[v])) { listed++; break; }
    CHECK(listed == 4, "only %d of the 4 decode variants are in cuops_variant_names(\"gemm\")",
          listed);
    if (listed != 4) {
        cuops_destroy(g_gpu);
        cuops_destroy(g_cpu);
        return tu_finish("test_gpu_gemm_decode");
    }

    test_unsupported();
    test_k_zero();
    test_dtypes();
    test_shape_grid();
    test_stream_k_shapes();
    test_determinism();
    test_big();

    for (int v = 0; v < 4; v++) {
        fprintf(stderr, "%-20s ran %d case(s)\n", k_variants[v], g_ran[v]);
        if (!g_device_dead)
            CHECK(g_ran[v] > 0, "%s ran no case", k_variants[v]);
    }
    cuops_destroy(g_gpu);
    cuops_destroy(g_cpu);
    return tu_finish("test_gpu_gemm_decode");
}
