/*
 * test_gpu_gemm.cu - cuops_gemm on the GPU against the CPU reference backend.
 *
 * Every case is built once (fresh random A, B, C; NaN in the padding of A and
 * B so a kernel that multiplies padding shows it; C poisoned with NaN when
 * beta == 0; a guard band of sentinels around C and in its row padding), the
 * CPU backend computes the reference once, and then "auto" and every forced
 * variant of cuops_variant_names("gemm") run on the same inputs. A variant
 * may answer NOT_SUPPORTED for a case (counted as skipped); a variant that
 * serves none of the cases is a failure, and so is auto answering anything
 * but SUCCESS.
 *
 * Bounds, ||gpu - ref|| / ||ref|| over the m x n result: f32 inputs 1e-5,
 * f16/bf16 inputs with f32 output 5e-3, with f16/bf16 output 1e-2. No NaN
 * anywhere in the result; every sentinel outside the m x n result unchanged.
 *
 * GEMMs too large for the O(mnk) CPU loop (4096^3, 8191x8193x4097,
 * 1x28672x8192) are checked by C x = alpha A (B x) + beta C0 x for a random x,
 * in fp64 on the host: O(mk + kn + mn), and any wrong tile shows. The error
 * of row i is relative to |z_i| or, where z_i cancelled to less, to
 * |A_i| |B x| / sqrt(k), the size of such a dot product at a random angle
 * (one row at m = 1 once came out at 1.0 where that size is ~2900, so the
 * fp32 rounding of 8192-term sums read as a 5e-3 relative error).
 *
 * Last, random shapes through auto alone (test_random_shapes): 120 cases,
 * or CUOPS_TEST_RANDOM_CASES, for the dispatch decisions no fixed list covers;
 * CUOPS_TEST_RANDOM_ONLY=1 runs that section alone.
 *
 * Without a CUDA device the test says SKIP and passes. CUOPS_TEST_QUICK=1
 * (the compute-sanitizer runs) keeps small shapes and fewer dtype pairs (still
 * every variant and every transpose). CUOPS_TEST_SEED
 * reproduces a run.
 */
#include <cuda_runtime.h>

#include "gpu_test_util.h"

#define MAX_VARIANTS 129 /* "auto" + CUOPS_GEMM_MAX_KERNELS */

static cuops_handle_t g_gpu, g_cpu;
static const char *const *g_variants;
static int g_variant_count;
static int g_served[MAX_VARIANTS];      /* cases each variant ran and passed or failed */
static int g_unsupported[MAX_VARIANTS]; /* cases it declined with NOT_SUPPORTED */
static int g_quick;
static double g_cpu_mnk;                /* work given to the CPU reference, m*n*k summed */
static int g_device_dead;               /* a kernel faulted: the context is gone */
static int g_auto_only;                 /* run_case runs auto alone (the random shapes) */
static uint64_t g_seed;                 /* CUOPS_TEST_SEED of this run */

typedef struct gemm_case {
    cuops_op_t ta, tb;
    int64_t m, n, k;
    float alpha, beta;
    cuops_dtype_t ab, ct;
    int64_t pad_a, pad_b, pad_c; /* leading dimension minus the row length */
    int64_t misalign;            /* elements added to each cudaMalloc'd base pointer */
    int align_c;                 /* C 16-byte aligned (else 37 elements past its base) */
} gemm_case_t;

static const char *tn(cuops_op_t t) { return t == CUOPS_OP_T ? "T" : "N"; }

static double tolerance(cuops_dtype_t ab, cuops_dtype_t ct)
{
    if (ab == CUOPS_DTYPE_F32) return 1e-5;
    if (ct == CUOPS_DTYPE_F32) return 5e-3;
    return 1e-2;
}

static size_t esize(cuops_dtype_t t) { return t == CUOPS_DTYPE_F32 ? 4 : 2; }

static void set_elem(void *p, cuops_dtype_t t, size_t i, double v)
{
    switch (t) {
    case CUOPS_DTYPE_F16: ((uint16_t *)p)[i] = cuops_float_to_half((float)v); break;
    case CUOPS_DTYPE_BF16: ((uint16_t *)p)[i] = cuops_float_to_bf16((float)v); break;
    case CUOPS_DTYPE_F32: ((float *)p)[i] = (float)v; break;
    default: break;
    }
}

static void describe(char *buf, size_t len, const gemm_case_t *c, int64_t lda, int64_t ldb,
                     int64_t ldc)
{
    snprintf(buf, len,
             "ab=%s c=%s %s%s m=%lld n=%lld k=%lld alpha=%g beta=%g lda=%lld ldb=%lld "
             "ldc=%lld misalign=%lld",
             c->ab == CUOPS_DTYPE_F16 ? "f16" : c->ab == CUOPS_DTYPE_BF16 ? "bf16" : "f32",
             c->ct == CUOPS_DTYPE_F16 ? "f16" : c->ct == CUOPS_DTYPE_BF16 ? "bf16" : "f32",
             tn(c->ta), tn(c->tb), (long long)c->m, (long long)c->n, (long long)c->k,
             (double)c->alpha, (double)c->beta, (long long)lda, (long long)ldb,
             (long long)ldc, (long long)c->misalign);
}

/* After a GPU call: a fault leaves the context unusable; stop testing then. */
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

/* Host buffer of `count` elements with NaN everywhere, then random values in
 * the rows x cols block of leading dimension ld starting at `offset`. */
static void *make_operand(cuops_dtype_t t, int64_t offset, int64_t rows, int64_t cols,
                          int64_t ld, size_t count)
{
    size_t es = esize(t);
    void *p = malloc(count * es);
    if (!p) return NULL;
    tu_poison(p, t, count);
    for (int64_t r = 0; r < rows; r++)
        tu_fill_float((char *)p + (size_t)(offset + r * ld) * es, t, (size_t)cols, -1.0, 1.0);
    return p;
}

static void run_case_body(const gemm_case_t *c, const char *what, int64_t lda, int64_t ldb,
                          int64_t ldc, int64_t c_off, size_t count_a, size_t count_b,
                          size_t count_c, void *ha, void *hb, void *hc0, void *href,
                          void *hout, void *da, void *db, void *dc);

/*
 * One case: CPU reference once, then auto and every variant on the same
 * inputs, each checked for error bound, NaN and sentinels.
 */
static void run_case(const gemm_case_t *c)
{
    if (g_device_dead) return;
    const int64_t rows_a = c->ta == CUOPS_OP_N ? c->m : c->k;
    const int64_t cols_a = c->ta == CUOPS_OP_N ? c->k : c->m;
    const int64_t rows_b = c->tb == CUOPS_OP_N ? c->k : c->n;
    const int64_t cols_b = c->tb == CUOPS_OP_N ? c->n : c->k;
    const int64_t lda = (cols_a > 1 ? cols_a : 1) + c->pad_a;
    const int64_t ldb = (cols_b > 1 ? cols_b : 1) + c->pad_b;
    const int64_t ldc = c->n + c->pad_c;
    /* sentinels before and after C: 37 elements put C off 16 bytes (the
     * vector kernels decline it); align_c puts it on 16 bytes (144 / 80 B) */
    const int64_t guard = !c->align_c ? 37 : c->ct == CUOPS_DTYPE_F32 ? 36 : 40;
    const size_t es_ab = esize(c->ab), es_c = esize(c->ct);
    /* the operand's extent, (rows - 1) * ld + cols, when a huge leading
     * dimension would make rows * ld more than memory (a one-row operand) */
    const int64_t span_a = rows_a * lda > ((int64_t)1 << 28) ? (rows_a - 1) * lda + cols_a : rows_a * lda;
    const int64_t span_b = rows_b * ldb > ((int64_t)1 << 28) ? (rows_b - 1) * ldb + cols_b : rows_b * ldb;
    const size_t count_a = (size_t)(c->misalign + span_a + 1);
    const size_t count_b = (size_t)(c->misalign + span_b + 1);
    const int64_t c_off = c->misalign + guard;
    const size_t count_c = (size_t)(c_off + c->m * ldc + guard);
    char what[320];
    describe(what, sizeof what, c, lda, ldb, ldc);

    void *ha = make_operand(c->ab, c->misalign, rows_a, cols_a, lda, count_a);
    void *hb = make_operand(c->ab, c->misalign, rows_b, cols_b, ldb, count_b);
    void *hc0 = malloc(count_c * es_c), *href = malloc(count_c * es_c),
         *hout = malloc(count_c * es_c);
    void *da = NULL, *db = NULL, *dc = NULL;
    if (!ha || !hb || !hc0 || !href || !hout ||
        cudaMalloc(&da, count_a * es_ab) != cudaSuccess ||
        cudaMalloc(&db, count_b * es_ab) != cudaSuccess ||
        cudaMalloc(&dc, count_c * es_c) != cudaSuccess)
        CHECK(0, "allocation failed for %s", what);
    else
        run_case_body(c, what, lda, ldb, ldc, c_off, count_a, count_b, count_c, ha, hb, hc0,
                      href, hout, da, db, dc);
    cudaFree(da); cudaFree(db); cudaFree(dc);
    free(ha); free(hb); free(hc0); free(href); free(hout);
}

static void run_case_body(const gemm_case_t *c, const char *what, int64_t lda, int64_t ldb,
                          int64_t ldc, int64_t c_off, size_t count_a, size_t count_b,
                          size_t count_c, void *ha, void *hb, void *hc0, void *href,
                          void *hout, void *da, void *db, void *dc)
{
    const size_t es_ab = esize(c->ab), es_c = esize(c->ct);
    /* C: sentinels everywhere, then the m x n block: NaN (beta == 0: must not
     * be read) or random (beta != 0: must be read). */
    for (size_t i = 0; i < count_c; i++) set_elem(hc0, c->ct, i, 1234.5);
    for (int64_t r = 0; r < c->m; r++) {
        char *row = (char *)hc0 + (size_t)(c_off + r * ldc) * es_c;
        if (c->beta == 0.0f) tu_poison(row, c->ct, (size_t)c->n);
        else tu_fill_float(row, c->ct, (size_t)c->n, -1.0, 1.0);
    }
    cudaMemcpy(da, ha, count_a * es_ab, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, count_b * es_ab, cudaMemcpyHostToDevice);

    /* reference */
    memcpy(href, hc0, count_c * es_c);
    {
        cuops_status_t st = cuops_gemm(g_cpu, c->ta, c->tb, c->m, c->n, c->k, c->alpha,
                                       (char *)ha + c->misalign * es_ab, lda,
                                       (char *)hb + c->misalign * es_ab, ldb, c->beta,
                                       (char *)href + c_off * es_c, ldc, c->ab, c->ct);
        g_cpu_mnk += (double)c->m * (double)c->n * (double)c->k;
        CHECK(st == CUOPS_STATUS_SUCCESS, "CPU reference failed (%s: %s) for %s",
              cuops_status_string(st), cuops_last_error(g_cpu), what);
        if (st != CUOPS_STATUS_SUCCESS) return;
    }
    double ref2 = 0.0;
    for (int64_t r = 0; r < c->m; r++)
        for (int64_t j = 0; j < c->n; j++) {
            double v = tu_get(href, c->ct, (size_t)(c_off + r * ldc + j));
            ref2 += v * v;
        }

    const int variants = g_auto_only ? 1 : g_variant_count;
    for (int v = 0; v < variants && v < MAX_VARIANTS; v++) {
        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.variant = g_variants[v];
        cudaMemcpy(dc, hc0, count_c * es_c, cudaMemcpyHostToDevice);
        cuops_status_t st = cuops_gemm_ex(g_gpu, c->ta, c->tb, c->m, c->n, c->k, c->alpha,
                                          (char *)da + c->misalign * es_ab, lda,
                                          (char *)db + c->misalign * es_ab, ldb, c->beta,
                                          (char *)dc + c_off * es_c, ldc, c->ab, c->ct, &opt);
        if (st == CUOPS_STATUS_NOT_SUPPORTED && v > 0) {
            g_unsupported[v]++;
            continue;
        }
        CHECK(st == CUOPS_STATUS_SUCCESS, "variant %s: %s (%s) for %s", g_variants[v],
              cuops_status_string(st), cuops_last_error(g_gpu), what);
        if (st != CUOPS_STATUS_SUCCESS) continue;
        const char *kernel = cuops_last_kernel(g_gpu);
        g_served[v]++;
        if (!device_ok(kernel)) return;
        cudaMemcpy(hout, dc, count_c * es_c, cudaMemcpyDeviceToHost);

        /* per element as well as over C: the Frobenius bound alone let one
         * wrong element of average size through on shapes of ~10^4 outputs.
         * The element bound: 8x the relative tolerance of C's RMS, plus
         * 2^-6 of the element for a 16-bit C's rounding (both sides round) */
        const double tol_c = ref2 > 0.0 ? tolerance(c->ab, c->ct) : 0.0;
        const double rms = sqrt(ref2 / (double)(c->m * c->n));
        double err2 = 0.0, max_err = 0.0;
        int64_t nan_count = 0, guard_bad = 0, first_guard = -1, worst_r = 0, worst_j = 0;
        int64_t elem_bad = 0;
        for (size_t i = 0; i < count_c; i++) {
            const int64_t rel = (int64_t)i - c_off;
            const int in_matrix = rel >= 0 && rel < c->m * ldc && rel % ldc < c->n;
            if (!in_matrix) {
                if (memcmp((char *)hout + i * es_c, (char *)hc0 + i * es_c, es_c) != 0) {
                    if (first_guard < 0) first_guard = (int64_t)i;
                    guard_bad++;
                }
                continue;
            }
            const double g = tu_get(hout, c->ct, i), r = tu_get(href, c->ct, i);
            if (g != g) { nan_count++; continue; }
            const double d = g - r;
            err2 += d * d;
            if (fabs(d) > max_err) { max_err = fabs(d); worst_r = rel / ldc; worst_j = rel % ldc; }
            if (fabs(d) > 8.0 * tol_c * rms + (es_c == 2 ? ldexp(fabs(r), -6) : 0.0)) elem_bad++;
        }
        const double rel_err = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
        const double tol = tol_c;
        CHECK(nan_count == 0, "variant %s (kernel %s): %lld NaN in the result for %s",
              g_variants[v], kernel, (long long)nan_count, what);
        CHECK(guard_bad == 0,
              "variant %s (kernel %s): %lld sentinel(s) outside C overwritten, first at "
              "element %lld (C starts at %lld) for %s",
              g_variants[v], kernel, (long long)guard_bad, (long long)first_guard,
              (long long)c_off, what);
        CHECK(rel_err <= tol,
              "variant %s (kernel %s): rel err %.3g > %.1g (max abs err %.3g at [%lld,%lld]: "
              "gpu %.6g ref %.6g) for %s",
              g_variants[v], kernel, rel_err, tol, max_err, (long long)worst_r,
              (long long)worst_j,
              tu_get(hout, c->ct, (size_t)(c_off + worst_r * ldc + worst_j)),
              tu_get(href, c->ct, (size_t)(c_off + worst_r * ldc + worst_j)), what);
        CHECK(elem_bad == 0,
              "variant %s (kernel %s): %lld element(s) off by more than %.3g of the RMS %.3g "
              "(worst %.3g at [%lld,%lld]: gpu %.6g ref %.6g) for %s",
              g_variants[v], kernel, (long long)elem_bad, 8.0 * tol_c, rms, max_err,
              (long long)worst_r, (long long)worst_j,
              tu_get(hout, c->ct, (size_t)(c_off + worst_r * ldc + worst_j)),
              tu_get(href, c->ct, (size_t)(c_off + worst_r * ldc + worst_j)), what);
    }
}

/* ------------------------------------------------------------------------ */
/* Random-vector check for GEMMs too big for the CPU reference               */
/* ------------------------------------------------------------------------ */

static void vector_case_body(const char *variant, const gemm_case_t *cs, const char *what,
                             int64_t guard, size_t count_a, size_t count_b, size_t count_c,
                             void *ha, void *hb, void *hc, double *x, double *w, double *z,
                             void *da, void *db, void *dc);

static void run_vector_case(const char *variant, cuops_op_t ta, cuops_op_t tb, int64_t m,
                            int64_t n, int64_t k, float alpha, float beta, cuops_dtype_t ab,
                            cuops_dtype_t ct)
{
    if (g_device_dead) return;
    gemm_case_t cs = {ta, tb, m, n, k, alpha, beta, ab, ct, 0, 0, 0, 0};
    const int64_t rows_a = ta == CUOPS_OP_N ? m : k, cols_a = ta == CUOPS_OP_N ? k : m;
    const int64_t rows_b = tb == CUOPS_OP_N ? k : n, cols_b = tb == CUOPS_OP_N ? n : k;
    const int64_t lda = cols_a, ldb = cols_b, ldc = n;
    const int64_t guard = 4096;
    const size_t es_ab = esize(ab), es_c = esize(ct);
    const size_t count_a = (size_t)(rows_a * lda), count_b = (size_t)(rows_b * ldb);
    const size_t count_c = (size_t)(m * ldc + 2 * guard);
    char what[320];
    describe(what, sizeof what, &cs, lda, ldb, ldc);

    void *ha = malloc(count_a * es_ab), *hb = malloc(count_b * es_ab);
    void *hc = malloc(count_c * es_c);
    double *x = (double *)malloc(sizeof(double) * (size_t)n);
    double *w = (double *)malloc(sizeof(double) * (size_t)(k > 0 ? k : 1));
    /* z, then the squared norms of A's rows (op(A)[i][:]) after it */
    double *z = (double *)malloc(sizeof(double) * (size_t)(2 * m));
    void *da = NULL, *db = NULL, *dc = NULL;
    if (!ha || !hb || !hc || !x || !w || !z || cudaMalloc(&da, count_a * es_ab) != cudaSuccess ||
        cudaMalloc(&db, count_b * es_ab) != cudaSuccess ||
        cudaMalloc(&dc, count_c * es_c) != cudaSuccess)
        CHECK(0, "allocation failed for %s", what);
    else
        vector_case_body(variant, &cs, what, guard, count_a, count_b, count_c, ha, hb, hc, x,
                         w, z, da, db, dc);
    cudaFree(da); cudaFree(db); cudaFree(dc);
    free(ha); free(hb); free(hc); free(x); free(w); free(z);
}

/* C[i][j] = alpha op(A)[i,:] . op(B)[:,j] + beta C0[i][j] in fp64, for the
 * vector cases' edge rows and columns (C0 at hc + guard, leading dimension n). */
static double vector_elem_ref(const gemm_case_t *cs, const void *ha, const void *hb,
                              const void *hc, int64_t guard, int64_t i, int64_t j)
{
    const int64_t lda = cs->ta == CUOPS_OP_N ? cs->k : cs->m;
    const int64_t ldb = cs->tb == CUOPS_OP_N ? cs->n : cs->k;
    double s = 0.0;
    for (int64_t kk = 0; kk < cs->k; kk++) {
        const size_t ai = (size_t)(cs->ta == CUOPS_OP_N ? i * lda + kk : kk * lda + i);
        const size_t bi = (size_t)(cs->tb == CUOPS_OP_N ? kk * ldb + j : j * ldb + kk);
        s += tu_get(ha, cs->ab, ai) * tu_get(hb, cs->ab, bi);
    }
    s *= cs->alpha;
    if (cs->beta != 0.0f) s += cs->beta * tu_get(hc, cs->ct, (size_t)(guard + i * cs->n + j));
    return s;
}

static void vector_case_body(const char *variant, const gemm_case_t *cs, const char *what,
                             int64_t guard, size_t count_a, size_t count_b, size_t count_c,
                             void *ha, void *hb, void *hc, double *x, double *w, double *z,
                             void *da, void *db, void *dc)
{
    const cuops_op_t ta = cs->ta, tb = cs->tb;
    const int64_t m = cs->m, n = cs->n, k = cs->k;
    const float alpha = cs->alpha, beta = cs->beta;
    const cuops_dtype_t ab = cs->ab, ct = cs->ct;
    const int64_t rows_a = ta == CUOPS_OP_N ? m : k, cols_a = ta == CUOPS_OP_N ? k : m;
    const int64_t rows_b = tb == CUOPS_OP_N ? k : n, cols_b = tb == CUOPS_OP_N ? n : k;
    const int64_t lda = cols_a, ldb = cols_b, ldc = n;
    const size_t es_ab = esize(ab), es_c = esize(ct);
    tu_fill_float(ha, ab, count_a, -1.0, 1.0);
    tu_fill_float(hb, ab, count_b, -1.0, 1.0);
    for (int64_t j = 0; j < n; j++) x[j] = tu_rand_uniform(-1.0, 1.0);
    /* sentinels around C; `sentinel` is what the type makes of 1234.5 */
    for (size_t i = 0; i < count_c; i++) set_elem(hc, ct, i, 1234.5);
    const double sentinel = tu_get(hc, ct, 0);
    if (beta == 0.0f) tu_poison((char *)hc + guard * es_c, ct, (size_t)(m * ldc));
    else tu_fill_float((char *)hc + guard * es_c, ct, (size_t)(m * ldc), -1.0, 1.0);
    cudaMemcpy(da, ha, count_a * es_ab, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, count_b * es_ab, cudaMemcpyHostToDevice);
    cudaMemcpy(dc, hc, count_c * es_c, cudaMemcpyHostToDevice);

    /* expected: z = alpha * op(A) (op(B) x) + beta * C0 x */
    for (int64_t kk = 0; kk < k; kk++) w[kk] = 0.0;
    for (int64_t r = 0; r < rows_b; r++)
        for (int64_t col = 0; col < cols_b; col++) {
            const double bv = tu_get(hb, ab, (size_t)(r * ldb + col));
            if (tb == CUOPS_OP_N) w[r] += bv * x[col];    /* B[kk=r][j=col] */
            else w[col] += bv * x[r];                     /* B[j=r][kk=col] */
        }
    double *a_norm2 = z + m;
    for (int64_t i = 0; i < m; i++) z[i] = a_norm2[i] = 0.0;
    for (int64_t r = 0; r < rows_a; r++)
        for (int64_t col = 0; col < cols_a; col++) {
            const double av = tu_get(ha, ab, (size_t)(r * lda + col));
            if (ta == CUOPS_OP_N) z[r] += av * w[col];    /* A[i=r][kk=col] */
            else z[col] += av * w[r];                     /* A[kk=r][i=col] */
            a_norm2[ta == CUOPS_OP_N ? r : col] += av * av;
        }
    double w_norm2 = 0.0;
    for (int64_t kk = 0; kk < k; kk++) w_norm2 += w[kk] * w[kk];
    for (int64_t i = 0; i < m; i++) {
        z[i] *= alpha;
        if (beta != 0.0f) {
            double c0x = 0.0;
            for (int64_t j = 0; j < n; j++)
                c0x += tu_get(hc, ct, (size_t)(guard + i * ldc + j)) * x[j];
            z[i] += beta * c0x;
        }
    }

    /* C's first and last rows and columns element by element, in fp64: the
     * ragged edges these shapes exist for (the projection onto x alone let a
     * wrong last column through about half the time at 8191 x 8193) */
    const int64_t edges = 2 * n + 2 * m;
    double *edge_ref = (double *)malloc((size_t)edges * sizeof(double));
    if (edge_ref) {
        for (int64_t j = 0; j < n; j++) {
            edge_ref[j] = vector_elem_ref(cs, ha, hb, hc, guard, 0, j);
            edge_ref[n + j] = vector_elem_ref(cs, ha, hb, hc, guard, m - 1, j);
        }
        for (int64_t i = 0; i < m; i++) {
            edge_ref[2 * n + i] = vector_elem_ref(cs, ha, hb, hc, guard, i, 0);
            edge_ref[2 * n + m + i] = vector_elem_ref(cs, ha, hb, hc, guard, i, n - 1);
        }
    }

    {
        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.variant = variant;
        cuops_status_t st = cuops_gemm_ex(g_gpu, ta, tb, m, n, k, alpha, da, lda, db, ldb, beta,
                                          (char *)dc + guard * es_c, ldc, ab, ct, &opt);
        if (st == CUOPS_STATUS_NOT_SUPPORTED && variant && strcmp(variant, "auto") != 0) {
            for (int v = 0; v < g_variant_count && v < MAX_VARIANTS; v++)
                if (!strcmp(g_variants[v], variant)) g_unsupported[v]++;
            free(edge_ref);
            return;
        }
        CHECK(st == CUOPS_STATUS_SUCCESS, "variant %s: %s (%s) for %s", variant ? variant : "auto",
              cuops_status_string(st), cuops_last_error(g_gpu), what);
        if (st != CUOPS_STATUS_SUCCESS) {
            free(edge_ref);
            return;
        }
        const char *kernel = cuops_last_kernel(g_gpu);
        for (int v = 0; v < g_variant_count && v < MAX_VARIANTS; v++)
            if (!strcmp(g_variants[v], variant ? variant : "auto")) g_served[v]++;
        if (!device_ok(kernel)) {
            free(edge_ref);
            return;
        }
        cudaMemcpy(hc, dc, count_c * es_c, cudaMemcpyDeviceToHost);

        int64_t nan_count = 0, guard_bad = 0;
        for (int64_t i = 0; i < guard; i++) {
            const double lo = tu_get(hc, ct, (size_t)i);
            const double hi = tu_get(hc, ct, count_c - 1 - (size_t)i);
            if (lo != sentinel) guard_bad++;
            if (hi != sentinel) guard_bad++;
        }
        double err2 = 0.0, ref2 = 0.0, max_err = 0.0;
        int64_t worst = 0;
        for (int64_t i = 0; i < m; i++) {
            double y = 0.0;
            for (int64_t j = 0; j < n; j++) {
                const double v = tu_get(hc, ct, (size_t)(guard + i * ldc + j));
                if (v != v) nan_count++;
                y += v * x[j];
            }
            const double d = y - z[i];
            err2 += d * d;
            /* the scale of row i: |z_i|, or the size a dot product of A's
             * row with w has at a random angle (|A_i| |w| / sqrt(k)) where
             * z_i cancelled to less: with one row (m = 1) a z_i near zero
             * would turn rounding into a large relative error */
            const double typical2 = (double)alpha * alpha * a_norm2[i] * w_norm2 / (double)(k > 0 ? k : 1);
            ref2 += z[i] * z[i] > typical2 ? z[i] * z[i] : typical2;
            if (fabs(d) > max_err) { max_err = fabs(d); worst = i; }
        }
        const double rel = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
        const double tol = tolerance(ab, ct);
        CHECK(nan_count == 0, "variant %s (kernel %s): %lld NaN in C for %s",
              variant ? variant : "auto", kernel, (long long)nan_count, what);
        CHECK(guard_bad == 0, "variant %s (kernel %s): %lld guard sentinel(s) overwritten for %s",
              variant ? variant : "auto", kernel, (long long)guard_bad, what);
        CHECK(rel <= tol,
              "variant %s (kernel %s): C*x vs A*(B*x): rel err %.3g > %.1g (worst row %lld, "
              "abs err %.3g) for %s",
              variant ? variant : "auto", kernel, rel, tol, (long long)worst, max_err, what);
        if (edge_ref) {
            /* each edge element within 8x the relative tolerance of the
             * edges' RMS, plus 2^-6 of itself for a 16-bit C's rounding */
            double e2 = 0.0;
            for (int64_t e = 0; e < edges; e++) e2 += edge_ref[e] * edge_ref[e];
            const double rms = sqrt(e2 / (double)edges);
            int64_t edge_bad = 0, first_bad = -1;
            for (int64_t e = 0; e < edges; e++) {
                const int64_t i = e < n ? 0 : e < 2 * n ? m - 1 : e < 2 * n + m ? e - 2 * n : e - 2 * n - m;
                const int64_t j = e < n ? e : e < 2 * n ? e - n : e < 2 * n + m ? 0 : n - 1;
                const double g = tu_get(hc, ct, (size_t)(guard + i * ldc + j));
                const double bound = 8.0 * tol * rms + (es_c == 2 ? ldexp(fabs(edge_ref[e]), -6) : 0.0);
                if (!(fabs(g - edge_ref[e]) <= bound)) {
                    if (first_bad < 0) first_bad = e;
                    edge_bad++;
                }
            }
            CHECK(edge_bad == 0,
                  "variant %s (kernel %s): %lld element(s) of C's first/last rows and columns "
                  "off (first at edge index %lld) for %s",
                  variant ? variant : "auto", kernel, (long long)edge_bad, (long long)first_bad,
                  what);
        }
    }
    free(edge_ref);
}

/* ------------------------------------------------------------------------ */
/* Case lists                                                               */
/* ------------------------------------------------------------------------ */

static const cuops_dtype_t k_ab[7] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16,
                                      CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16,
                                      CUOPS_DTYPE_F32};
static const cuops_dtype_t k_c[7] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32,
                                     CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32,
                                     CUOPS_DTYPE_F32};
static const float k_alpha[2] = {1.0f, -0.75f};
static const float k_beta[2] = {0.0f, 0.5f};

static gemm_case_t make_case(int trans, int dt, int64_t m, int64_t n, int64_t k, int ab_idx)
{
    gemm_case_t c;
    memset(&c, 0, sizeof c);
    c.ta = (trans & 2) ? CUOPS_OP_T : CUOPS_OP_N;
    c.tb = (trans & 1) ? CUOPS_OP_T : CUOPS_OP_N;
    c.m = m; c.n = n; c.k = k;
    c.alpha = k_alpha[ab_idx & 1];
    c.beta = k_beta[(ab_idx >> 1) & 1];
    c.ab = k_ab[dt];
    c.ct = k_c[dt];
    return c;
}

/* Every transpose pair x every dtype combination. */
static void test_transposes_and_dtypes(void)
{
    static const int64_t full[3][3] = {{65, 129, 7}, {129, 65, 1537}, {7, 1537, 65}};
    static const int64_t quick[1][3] = {{17, 33, 129}};
    const int ns = g_quick ? 1 : 3;
    int idx = 0;
    for (int s = 0; s < ns; s++)
        for (int trans = 0; trans < 4; trans++)
            for (int dt = 0; dt < 7; dt++) {
                const int64_t *sh = g_quick ? quick[s] : full[s];
                gemm_case_t c = make_case(trans, dt, sh[0], sh[1], sh[2], idx++);
                run_case(&c);
            }
}

/* The most m*n*k one case gives the CPU reference (~0.7 ns per multiply-add,
 * so ~20 ms); larger GEMMs are skipped or go through the random-vector check. */
static double cpu_case_cap(void) { return g_quick ? 2e5 : 3e7; }

/* Shapes {1, 7, 65, 129, 1537}^3 (CPU work per case capped), rotating dtype,
 * transposes, alpha and beta so each shape sees a different mix. */
static void test_shape_sweep(void)
{
    static const int64_t dims_full[5] = {1, 7, 65, 129, 1537};
    static const int64_t dims_quick[3] = {1, 7, 65};
    const int nd = g_quick ? 3 : 5;
    const int64_t *dims = g_quick ? dims_quick : dims_full;
    const double cap = cpu_case_cap();
    int idx = 0;
    for (int a = 0; a < nd; a++)
        for (int b = 0; b < nd; b++)
            for (int d = 0; d < nd; d++) {
                const int64_t m = dims[a], n = dims[b], k = dims[d];
                if ((double)m * n * k > cap) continue;
                gemm_case_t c = make_case(idx % 4, (idx / 4 + idx) % 7, m, n, k, idx / 3);
                idx++;
                run_case(&c);
            }
}

/* Padded leading dimensions and pointers one element off alignment. */
static void test_padding_and_misalignment(void)
{
    int idx = 0;
    for (int trans = 0; trans < 4; trans++)
        for (int dt = 0; dt < 7; dt++) {
            if (g_quick && dt % 3 != 0) continue; /* quick: f16->f16, bf16->f16, f32 */
            gemm_case_t c = make_case(trans, dt, 67, 131, 45, idx++);
            c.pad_a = 3; c.pad_b = 5; c.pad_c = 7; c.misalign = 1;
            run_case(&c);
            /* padded but aligned: leading dims stay multiples of 8, so fast
             * paths that need alignment still get the row-padding check */
            gemm_case_t d = make_case(trans, dt, 72, 136, 40, idx++);
            d.pad_a = 8; d.pad_b = 8; d.pad_c = 8;
            if (!g_quick) run_case(&d);
        }
}

/* One-row operands with leading dimensions past what a TMA map can hold
 * (2^40 bytes): the API accepts any ld there, so every variant must either
 * serve the call or decline it, never fail (before 5f4feaf the decode and
 * sm90 kernels let cuTensorMapEncodeTiled refuse it: CUDA_ERROR). */
static void test_huge_leading_dimension(void)
{
    gemm_case_t a = make_case(1, 0, 1, 300, 70, 0); /* NT, x [1, k] */
    a.ta = CUOPS_OP_N; a.tb = CUOPS_OP_T;
    a.pad_a = ((int64_t)1 << 40) - a.k;
    run_case(&a);
    gemm_case_t b = make_case(1, 1, 100, 1, 72, 1); /* NT, W [1, k] */
    b.ta = CUOPS_OP_N; b.tb = CUOPS_OP_T;
    b.pad_b = ((int64_t)1 << 39) + 8 - b.k;
    run_case(&b);
}

/* k == 0: C = beta * C, and with beta == 0 the NaN poison must become 0. */
static void test_k_zero(void)
{
    for (int dt = 0; dt < 7; dt++)
        for (int bi = 0; bi < 2; bi++) {
            gemm_case_t c = make_case(dt % 4, dt, 33, 70, 0, 2 * bi + (dt & 1));
            run_case(&c);
        }
}

/* The f32 SIMT kernels (auto for f32 with 16-byte-aligned pointers and
 * leading dimensions that are multiples of 4): ragged shapes against the CPU
 * element by element, every transpose pair, k off every BK and off 4 (the
 * scalar and zero-filled tails of the k-contiguous loads), n off 4 (the
 * scalar epilogue), ld past the rows, beta != 0 and k == 0. The other cases
 * put C 37 elements past its base, which these kernels decline. */
static void test_simt_ragged(void)
{
    static const int64_t shapes[6][3] = {{131, 1027, 1029}, {17, 260, 70}, {1, 36, 4095},
                                         {257, 4, 33},      {33, 68, 0},   {64, 129, 18}};
    const int ns = g_quick ? 2 : 6;
    int before[MAX_VARIANTS];
    for (int v = 0; v < g_variant_count && v < MAX_VARIANTS; v++) before[v] = g_served[v];
    int idx = 0;
    for (int s = 0; s < ns && !g_device_dead; s++)
        for (int trans = 0; trans < 4; trans++) {
            gemm_case_t c = make_case(trans, 6, shapes[s][0], shapes[s][1], shapes[s][2], idx++);
            c.align_c = 1;
            /* leading dimensions multiples of 4, some a row past the tight one */
            const int64_t cols_a = c.ta == CUOPS_OP_N ? c.k : c.m;
            const int64_t cols_b = c.tb == CUOPS_OP_N ? c.n : c.k;
            const int64_t ca = cols_a > 1 ? cols_a : 1, cb = cols_b > 1 ? cols_b : 1;
            c.pad_a = (4 - ca % 4) % 4 + ((s + trans) % 2 ? 4 : 0);
            c.pad_b = (4 - cb % 4) % 4 + ((s + trans) % 3 == 0 ? 8 : 0);
            c.pad_c = (4 - c.n % 4) % 4 + (trans == 3 ? 4 : 0);
            run_case(&c);
        }
    for (int v = 0; v < g_variant_count && v < MAX_VARIANTS && !g_device_dead; v++)
        if (!strncmp(g_variants[v], "sgemm_simt_", 11))
            CHECK(g_served[v] > before[v], "%s served none of the ragged f32 cases",
                  g_variants[v]);
}

/* k == 0 with A and B NULL (the API allows it): C = beta * C, every variant
 * and operand type, whatever alpha is: an infinite or NaN alpha must not
 * turn the empty sum into NaN, nor a negative one give -0 where beta == 0
 * (C is then NaN-poisoned and must become +0). */
static void test_k_zero_null_operands(void)
{
    if (g_device_dead) return;
    const int64_t m = 19, n = 45, ldc = 48;
    const size_t count = (size_t)(m * ldc);
    float *hc0 = (float *)malloc(count * 4), *hout = (float *)malloc(count * 4);
    float *dc = NULL;
    if (!hc0 || !hout || cudaMalloc((void **)&dc, count * 4) != cudaSuccess) {
        CHECK(0, "allocation failed");
        cudaFree(dc);
        free(hc0); free(hout);
        return;
    }
    static const cuops_dtype_t ab_types[3] = {CUOPS_DTYPE_F32, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
    static const char *const ab_names[3] = {"f32", "f16", "bf16"};
    static const float alphas[3] = {1.0f, INFINITY, -1.0f};
    static const float betas[3] = {0.5f, 0.5f, 0.0f};
    for (int t = 0; t < 3 && !g_device_dead; t++)
        for (int ab = 0; ab < 3 && !g_device_dead; ab++) {
            const float alpha = t == 2 && ab == 1 ? NAN : alphas[t], beta = betas[t];
            tu_fill_float(hc0, CUOPS_DTYPE_F32, count, -1.0, 1.0);
            if (beta == 0.0f)
                for (int64_t r = 0; r < m; r++)
                    for (int64_t j = 0; j < n; j++) hc0[r * ldc + j] = NAN;
            for (int v = 0; v < g_variant_count && v < MAX_VARIANTS; v++) {
                cuops_options_t opt;
                memset(&opt, 0, sizeof opt);
                opt.variant = g_variants[v];
                cudaMemcpy(dc, hc0, count * 4, cudaMemcpyHostToDevice);
                cuops_status_t st = cuops_gemm_ex(g_gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, 0, alpha,
                                                  NULL, 1, NULL, 1, beta, dc, ldc, ab_types[ab],
                                                  CUOPS_DTYPE_F32, &opt);
                if (st == CUOPS_STATUS_NOT_SUPPORTED && v > 0) { g_unsupported[v]++; continue; }
                CHECK(st == CUOPS_STATUS_SUCCESS, "variant %s: k=0 with NULL A/B (ab %s): %s (%s)",
                      g_variants[v], ab_names[ab], cuops_status_string(st),
                      cuops_last_error(g_gpu));
                if (st != CUOPS_STATUS_SUCCESS) continue;
                const char *kernel = cuops_last_kernel(g_gpu);
                g_served[v]++;
                if (!device_ok(kernel)) break;
                cudaMemcpy(hout, dc, count * 4, cudaMemcpyDeviceToHost);
                int64_t bad = 0;
                for (int64_t r = 0; r < m; r++)
                    for (int64_t j = 0; j < ldc; j++) {
                        const size_t i = (size_t)(r * ldc + j);
                        const float want = j >= n ? hc0[i] : beta == 0.0f ? 0.0f : beta * hc0[i];
                        if (memcmp(&hout[i], &want, 4) != 0) bad++;
                    }
                CHECK(bad == 0,
                      "variant %s (kernel %s): k=0, ab %s, alpha=%g, beta=%g: %lld element(s) "
                      "not beta*C",
                      g_variants[v], kernel, ab_names[ab], alpha, beta,
                      (long long)bad);
            }
        }
    cudaFree(dc);
    free(hc0); free(hout);
}

/* Tile-friendly aligned shapes, so that every fast kernel gets to run, with
 * enough K for several pipeline stages. */
static void test_aligned_shapes(void)
{
    /* {8, 264, 64}: small m, NT, k % 8 == 0, so the decode kernels serve one */
    static const int64_t full[4][3] = {{128, 256, 64}, {256, 128, 512}, {256, 256, 264}, {8, 264, 64}};
    static const int64_t quick[2][3] = {{128, 128, 64}, {8, 264, 64}};
    const int ns = g_quick ? 2 : 4;
    int idx = 0;
    for (int s = 0; s < ns; s++)
        for (int trans = 0; trans < 4; trans++)
            for (int dt = 0; dt < 7; dt++) {
                if (g_quick && dt % 3 != 0) continue;
                const int64_t *sh = g_quick ? quick[s] : full[s];
                gemm_case_t c = make_case(trans, dt, sh[0], sh[1], sh[2], idx++);
                run_case(&c);
            }
}

/* Grids with one huge dimension: more than 65535 tiles along m or n. */
static void test_large_grids(void)
{
    if (g_quick) return;
    gemm_case_t c = make_case(1, 0, 1, (1 << 20) + 3, 33, 0);        /* f16, NT */
    run_case(&c);
    gemm_case_t d = make_case(0, 6, (1 << 22) + 1, 2, 3, 2);         /* f32, NN, beta */
    run_case(&d);
    gemm_case_t e = make_case(2, 5, (1 << 22) + 9, 3, 5, 1);         /* bf16->f32, TN */
    run_case(&e);
}

/* Big GEMMs through the random-vector check, auto and each variant. */
static void test_big(void)
{
    const cuops_op_t N = CUOPS_OP_N, T = CUOPS_OP_T;
    const cuops_dtype_t F16 = CUOPS_DTYPE_F16, BF16 = CUOPS_DTYPE_BF16, F32 = CUOPS_DTYPE_F32;
    if (g_quick) {
        run_vector_case(NULL, N, T, 1024, 1024, 1024, 1.0f, 0.0f, F16, F16);
        run_vector_case(NULL, N, N, 513, 1031, 257, 1.0f, 0.0f, F32, F32);
        /* every forced variant once, small (the sanitizer's run): the f32
         * kernels need 16-byte aligned C, which the element-wise cases'
         * guard offsets do not give */
        for (int v = 1; v < g_variant_count && v < MAX_VARIANTS; v++) {
            run_vector_case(g_variants[v], N, T, 256, 264, 128, 1.0f, 0.0f, F16, F16);
            run_vector_case(g_variants[v], N, N, 256, 264, 128, 1.0f, 0.5f, F32, F32);
            /* a shape the split-K planner splits (4 tiles, 8 k-blocks) */
            run_vector_case(g_variants[v], N, T, 128, 512, 512, 1.0f, 0.0f, F16, F16);
            /* one its 128-column form splits too (>= 16 k-blocks per split) */
            run_vector_case(g_variants[v], N, T, 128, 512, 2048, 1.0f, 0.0f, BF16, BF16);
        }
        return;
    }
    run_vector_case(NULL, N, T, 4096, 4096, 4096, 1.0f, 0.0f, F16, F16);
    run_vector_case(NULL, N, N, 4096, 4096, 4096, 1.0f, 0.0f, BF16, F32);
    run_vector_case(NULL, N, T, 4096, 4096, 4096, 1.0f, 0.0f, F32, F32);
    run_vector_case(NULL, T, N, 4096, 4096, 4096, -0.75f, 0.0f, F32, F32);
    run_vector_case(NULL, N, T, 8191, 8193, 4097, 1.0f, 0.0f, F16, F32);
    run_vector_case(NULL, N, T, 8191, 8193, 4097, 1.0f, 0.5f, BF16, BF16);
    run_vector_case(NULL, N, N, 8191, 8193, 4097, 1.0f, 0.5f, F32, F32);
    run_vector_case(NULL, N, T, 1, 28672, 8192, 1.0f, 0.0f, BF16, BF16);
    run_vector_case(NULL, N, T, 1, 28672, 8192, 1.0f, 0.0f, F16, F16);
    run_vector_case(NULL, N, T, 1, 28672, 8192, 1.0f, 0.0f, F32, F32);
    /* every forced variant at a size where full tiles and deep K loops run */
    for (int v = 1; v < g_variant_count && v < MAX_VARIANTS; v++) {
        run_vector_case(g_variants[v], N, T, 2048, 2048, 2048, 1.0f, 0.0f, F16, F16);
        run_vector_case(g_variants[v], N, N, 1537, 2049, 1031, 1.0f, 0.5f, BF16, F32);
        run_vector_case(g_variants[v], N, T, 2048, 2048, 2048, 1.0f, 0.0f, F32, F32);
        run_vector_case(g_variants[v], T, T, 1537, 2049, 1031, -0.75f, 0.5f, F32, F32);
        /* few tiles, deep K: the split-K variants (both tile widths) serve it */
        run_vector_case(g_variants[v], N, T, 128, 512, 2048, 1.0f, 0.0f, BF16, BF16);
    }
}

/* ------------------------------------------------------------------------ */
/* Random shapes through auto                                               */
/* ------------------------------------------------------------------------ */

/*
 * auto picks among many kernels by shape (decode kernels for small m, split-K
 * and tail plans, cluster sizes, small-grid picks, packs for operands off 16
 * bytes, shifted-row epilogues for C rows off 16 bytes); the fixed shapes
 * above meet only some of those decisions. Here each case is drawn at random
 * and run through auto alone (the forced variants have their own sweeps):
 * a random transpose pair and dtype pair, alpha and beta (beta == 0 half the
 * time, C then NaN-poisoned), and one of four shape regimes: small (up to
 * 300), any (log-uniform up to 5000 on each dimension), large (250..5000),
 * decode (m up to 64, n or k 256..30000, the other up to 8192; NT and whole
 * multiples of 64 more often than elsewhere). Each dimension is tiny (up to
 * 80) a quarter of the time, else log-uniform, two thirds of those moved to
 * a multiple of 8, 64, 128 or 256 and half of these then 1..3 off it: the
 * aligned paths and their near misses.
 *
 * Cases within cpu_case_cap() go through run_case (CPU reference, element by
 * element), with padded leading dimensions, a base off alignment and C off
 * 16 bytes drawn a part of the time; larger ones through the random-vector
 * check, whose buffers are tight and 16-byte aligned (its rows still fall off
 * 16 bytes wherever a dimension is off a multiple of 8).
 *
 * Cost, at the default 120 cases: about 70 go to the CPU reference (at most
 * ~20 ms each) and 50 to the vector check, whose host work, O(mk + kn + mn),
 * is capped per case at ~2 s (random_case_work). Its estimate of the sum is
 * ~9 s of one core (12 s in nine runs of ten); an H100 host measured 6.2,
 * 7.8, 11.2 and 11.5 s for four seeds (600 cases: 53 s), nearly all of it
 * host time: the largest GPU call is ~2.5e11 flops. CUOPS_TEST_RANDOM_CASES
 * sets the count; CUOPS_TEST_QUICK draws 12 cases with dimensions up to 256
 * (1024 for decode's n or k).
 * The cases depend on CUOPS_TEST_SEED alone, not on what the sections
 * above drew, so a seed replays them even after those sections change.
 */

/* A dimension in [lo, hi] as the header above draws it; `whole`: a multiple
 * of 64, 128 or 256 (log-uniform before rounding), as model weights are. */
static int64_t random_dim(int64_t lo, int64_t hi, int whole)
{
    static const int64_t steps[4] = {8, 64, 128, 256};
    const int64_t style = whole ? 2 : tu_rand_below(4);
    int64_t v;
    if (style == 0 && lo <= 80) {
        v = tu_rand_between(lo, hi < 80 ? hi : 80);
    } else {
        v = tu_rand_log(lo, hi);
        if (style >= 2) {
            const int64_t step = steps[whole ? 1 + tu_rand_below(3) : tu_rand_below(4)];
            v = (v + step / 2) / step * step;
            if (v < step) v = step;
            while (whole && v > hi && v > step) v -= step;
            if (!whole && tu_rand_below(2)) v += tu_rand_between(1, 3) * (tu_rand_below(2) ? 1 : -1);
        }
    }
    return v < lo ? lo : v > hi ? hi : v;
}

/* Host work of a case in CPU-reference multiply-adds (~0.7 ns each): the
 * reference's m*n*k, or for the vector check about 25 per element of A and B
 * (filling one, the fp16 conversion the dearest; B x and A (B x); the fp64 dot
 * products along C's edges, 2 (m + n) k) and 15 per element of C. */
static double random_case_work(int64_t m, int64_t n, int64_t k)
{
    const double mnk = (double)m * n * k, ab = (double)m * k + (double)k * n, mn = (double)m * n;
    return mnk <= cpu_case_cap() ? mnk + 15.0 * (ab + mn) : 25.0 * ab + 15.0 * mn;
}

static gemm_case_t random_case(void)
{
    const int64_t small = g_quick ? 80 : 300, big = g_quick ? 256 : 5000;
    const int64_t wide = g_quick ? 1024 : 30000, deep = g_quick ? 512 : 8192;
    gemm_case_t c;
    memset(&c, 0, sizeof c);
    int64_t regime;
    do {
        regime = tu_rand_below(4);
        if (regime < 3) {
            const int64_t lo = regime == 2 ? big / 20 : 1, hi = regime == 0 ? small : big;
            c.m = random_dim(lo, hi, 0);
            c.n = random_dim(lo, hi, 0);
            c.k = random_dim(lo, hi, 0);
        } else {
            /* decode: a few rows against a weight of model size, wide or
             * deep; half of the weights whole multiples, the rows of 16
             * bytes that the decode kernels' tensor maps need */
            const int whole = (int)tu_rand_below(2), wide_n = (int)tu_rand_below(2);
            c.m = random_dim(1, 64, 0);
            c.n = random_dim(256, wide_n ? wide : deep, whole);
            c.k = random_dim(wide_n ? 64 : 256, wide_n ? deep : wide, whole);
        }
    } while (random_case_work(c.m, c.n, c.k) > 3e9); /* ~2 s of host work */
    /* decode: NT (x [m, k] times W [n, k]^T), a model's projections, half the time */
    const int trans = regime == 3 && tu_rand_below(2) ? 1 : (int)tu_rand_below(4);
    const int dt = (int)tu_rand_below(7);
    c.ta = (trans & 2) ? CUOPS_OP_T : CUOPS_OP_N;
    c.tb = (trans & 1) ? CUOPS_OP_T : CUOPS_OP_N;
    c.ab = k_ab[dt];
    c.ct = k_c[dt];
    /* multiples of 1/16, which describe()'s %g prints exactly */
    c.alpha = tu_rand_below(4) == 0 ? 1.0f : (float)tu_rand_between(-32, 32) / 16.0f;
    c.beta = tu_rand_below(2) ? 0.0f : tu_rand_below(3) == 0 ? 1.0f : (float)tu_rand_between(-24, 24) / 16.0f;
    c.align_c = 1;
    if ((double)c.m * c.n * c.k <= cpu_case_cap()) {
        if (tu_rand_below(4) == 0) c.pad_a = tu_rand_between(1, 8);
        if (tu_rand_below(4) == 0) c.pad_b = tu_rand_between(1, 8);
        if (tu_rand_below(4) == 0) c.pad_c = tu_rand_between(1, 8);
        if (tu_rand_below(4) == 0) c.misalign = tu_rand_between(1, 7);
        c.align_c = (int)tu_rand_below(2);
    }
    return c;
}

static void test_random_shapes(void)
{
    const int count = tu_random_cases(g_quick ? 12 : 120);
    /* which kernels auto ran, to see what the draw reached */
    struct { char name[64]; int cases; } picks[64];
    memset(picks, 0, sizeof picks);
    int npicks = 0, ran = 0, passed = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tu_seed(g_seed ^ 0x52414E444F4D53ull);
    g_auto_only = 1;
    for (int i = 0; i < count && !g_device_dead; i++) {
        const gemm_case_t c = random_case();
        const int exact = (double)c.m * c.n * c.k <= cpu_case_cap();
        const int failed0 = tu_failed, passed0 = tu_passed;
        if (exact) run_case(&c);
        else run_vector_case(NULL, c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.beta, c.ab, c.ct);
        ran++;
        const char *kernel = cuops_last_kernel(g_gpu);
        CHECK(tu_passed > passed0 || tu_failed > failed0, "random case %d checked nothing", i);
        if (tu_failed == failed0) {
            passed++;
            int p = 0;
            while (p < npicks && strcmp(picks[p].name, kernel) != 0) p++;
            if (p == npicks && npicks < 64)
                snprintf(picks[npicks++].name, sizeof picks[0].name, "%s", kernel);
            if (p < npicks) picks[p].cases++;
            continue;
        }
        /* the leading dimensions as run_case and run_vector_case build them */
        const int64_t cols_a = c.ta == CUOPS_OP_N ? c.k : c.m;
        const int64_t cols_b = c.tb == CUOPS_OP_N ? c.n : c.k;
        char what[320];
        describe(what, sizeof what, &c, cols_a + c.pad_a, cols_b + c.pad_b, c.n + c.pad_c);
        fprintf(stderr,
                "FAILED random case %d of %d (auto ran '%s', checked by %s): %s align_c=%d; "
                "replay: CUOPS_TEST_SEED=%llu%s\n",
                i, count, kernel, exact ? "the CPU reference" : "C x = alpha A (B x) + beta C0 x",
                what, c.align_c, (unsigned long long)g_seed, g_quick ? " CUOPS_TEST_QUICK=1" : "");
    }
    g_auto_only = 0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "random shapes: %d of %d case(s) ran, %d passed, %.1f s (auto ran:", ran, count,
            passed, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    for (int p = 0; p < npicks; p++) fprintf(stderr, " %s x%d", picks[p].name, picks[p].cases);
    fprintf(stderr, ")\n");
}

/* A user workspace too small for the packs that a call off 16 bytes needs:
 * auto still serves it (the sm90 entries decline it, fallback_tiled runs).
 * m = 65: at m <= 64 decode_realign reads such rows in place (its copy of x
 * onto the 16-byte grid left out where the workspace cannot hold it). */
static void test_small_user_workspace(void)
{
    void *ws = NULL;
    if (cudaMalloc(&ws, 4096) != cudaSuccess) {
        CHECK(0, "cudaMalloc 4096 bytes failed");
        return;
    }
    CHECK_STATUS(cuops_set_workspace(g_gpu, ws, 4096), CUOPS_STATUS_SUCCESS);
    gemm_case_t c;
    memset(&c, 0, sizeof c);
    c.ta = CUOPS_OP_N;
    c.tb = CUOPS_OP_T;
    c.m = 65;
    c.n = 300;
    c.k = 301; /* rows off 16 bytes: x and the weight would be packed */
    c.alpha = 1.0f;
    c.ab = CUOPS_DTYPE_F16;
    c.ct = CUOPS_DTYPE_F16;
    c.align_c = 1;
    g_auto_only = 1;
    run_case(&c);
    g_auto_only = 0;
    CHECK(!strcmp(cuops_last_kernel(g_gpu), "fallback_tiled"),
          "auto with a 4 KB user workspace, 65 x 300 x 301 NT, ran '%s'", cuops_last_kernel(g_gpu));
    CHECK_STATUS(cuops_set_workspace(g_gpu, NULL, 0), CUOPS_STATUS_SUCCESS);
    cudaFree(ws);
}

/* The dispatch's own contract: names, forced variants, the auto choice. */
static void test_dispatch_contract(void)
{
    CHECK(g_variant_count >= 3 && !strcmp(g_variants[0], "auto"),
          "variant list must start with auto and hold the kernels (count %d)", g_variant_count);
    int has_fallback = 0, has_simt = 0;
    for (int v = 0; v < g_variant_count; v++) {
        if (!strcmp(g_variants[v], "fallback_tiled")) has_fallback = 1;
        if (!strcmp(g_variants[v], "sgemm_simt_128x128")) has_simt = 1;
    }
    CHECK(has_fallback && has_simt, "fallback_tiled=%d sgemm_simt_128x128=%d listed",
          has_fallback, has_simt);

    const int64_t m = 256, n = 256, k = 256;
    float *da = NULL, *db = NULL, *dc = NULL;
    if (cudaMalloc((void **)&da, (m * k + 8) * 4) != cudaSuccess ||
        cudaMalloc((void **)&db, (k * n + 8) * 4) != cudaSuccess ||
        cudaMalloc((void **)&dc, (m * n + 8) * 4) != cudaSuccess) {
        CHECK(0, "cudaMalloc failed");
        goto done;
    }
    {
        /* finite non-zero data (bytes 0x3C); values are not checked here */
        cudaMemset(da, 0x3C, (m * k + 8) * 4);
        cudaMemset(db, 0x3C, (k * n + 8) * 4);
        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);

        opt.variant = "no_such_kernel";
        CHECK_STATUS(cuops_gemm_ex(g_gpu, CUOPS_OP_N, CUOPS_OP_N, m, n, k, 1.0f, da, k, db, n,
                                   0.0f, dc, n, CUOPS_DTYPE_F32, CUOPS_DTYPE_F32, &opt),
                     CUOPS_STATUS_INVALID_VALUE);
        CHECK(cuops_last_error(g_gpu)[0] != 0, "an unknown variant leaves a detail");

        opt.variant = "sgemm_simt_128x128";
        CHECK_STATUS(cuops_gemm_ex(g_gpu, CUOPS_OP_N, CUOPS_OP_N, m, n, k, 1.0f, da, k, db, n,
                                   0.0f, dc, n, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);
        CHECK(cuops_last_error(g_gpu)[0] != 0, "a refused variant leaves a detail");
        CHECK_STATUS(cuops_gemm_ex(g_gpu, CUOPS_OP_N, CUOPS_OP_N, m, n, k, 1.0f, da + 1, k, db,
                                   n, 0.0f, dc, n, CUOPS_DTYPE_F32, CUOPS_DTYPE_F32, &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);
        CHECK_STATUS(cuops_gemm_ex(g_gpu, CUOPS_OP_N, CUOPS_OP_N, m, n, k - 1, 1.0f, da, k - 1,
                                   db, n, 0.0f, dc, n, CUOPS_DTYPE_F32, CUOPS_DTYPE_F32, &opt),
                     CUOPS_STATUS_NOT_SUPPORTED);

        /* auto: aligned f32 -> the SIMT SGEMM; misaligned f32 -> the SIMT SGEMM
         * on operands copied onto aligned rows; k == 0 -> the fallback */
        CHECK_STATUS(cuops_gemm(g_gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, da, k, db, k, 0.0f,
                                dc, n, CUOPS_DTYPE_F32, CUOPS_DTYPE_F32),
                     CUOPS_STATUS_SUCCESS);
        /* any SIMT SGEMM variant: which one is the tuning table's choice */
        CHECK(!strncmp(cuops_last_kernel(g_gpu), "sgemm_simt_", 11),
              "auto f32 aligned ran '%s'", cuops_last_kernel(g_gpu));
        CHECK_STATUS(cuops_gemm(g_gpu, CUOPS_OP_N, CUOPS_OP_T, m - 1, n, k, 1.0f, da + 1, k, db,
                                k, 0.0f, dc, n, CUOPS_DTYPE_F32, CUOPS_DTYPE_F32),
                     CUOPS_STATUS_SUCCESS);
        CHECK(!strcmp(cuops_last_kernel(g_gpu), "sgemm_simt_packed"),
              "auto f32 misaligned ran '%s'", cuops_last_kernel(g_gpu));
        CHECK_STATUS(cuops_gemm(g_gpu, CUOPS_OP_N, CUOPS_OP_T, m - 1, n, 0, 1.0f, da + 1, 1, db,
                                1, 0.5f, dc, n, CUOPS_DTYPE_F32, CUOPS_DTYPE_F32),
                     CUOPS_STATUS_SUCCESS);
        CHECK(!strcmp(cuops_last_kernel(g_gpu), "fallback_tiled"),
              "auto f32 k = 0 ran '%s'", cuops_last_kernel(g_gpu));
        /* auto f16 runs some kernel and says which */
        CHECK_STATUS(cuops_gemm(g_gpu, CUOPS_OP_N, CUOPS_OP_T, 128, 128, 64, 1.0f, da, 64, db,
                                64, 0.0f, dc, 128, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16),
                     CUOPS_STATUS_SUCCESS);
        CHECK(cuops_last_kernel(g_gpu)[0] != 0, "auto f16 names the kernel it ran");
        fprintf(stderr, "auto f16 128x128x64 NT ran %s\n", cuops_last_kernel(g_gpu));
        device_ok("dispatch contract");
    }
done:
    cudaFree(da); cudaFree(db); cudaFree(dc);
}

int main(void)
{
    g_seed = tu_seed_from_env();
    const char *q = getenv("CUOPS_TEST_QUICK");
    g_quick = q && q[0] && strcmp(q, "0") != 0;

    if (!tu_gpu_handle(&g_gpu)) return tu_finish("test_gpu_gemm");
    CHECK_STATUS(cuops_create(&g_cpu, CUOPS_DEVICE_CPU), CUOPS_STATUS_SUCCESS);
    if (tu_failed) return tu_finish("test_gpu_gemm");

    CHECK_STATUS(cuops_variant_names("gemm", &g_variants, &g_variant_count),
                 CUOPS_STATUS_SUCCESS);
    /* every variant tested: a longer list needs a larger MAX_VARIANTS */
    CHECK(g_variant_count <= MAX_VARIANTS, "%d gemm variants, room for %d", g_variant_count,
          MAX_VARIANTS);
    if (g_variant_count > MAX_VARIANTS) g_variant_count = MAX_VARIANTS;
    fprintf(stderr, "gemm variants:");
    for (int v = 0; v < g_variant_count; v++) fprintf(stderr, " %s", g_variants[v]);
    fprintf(stderr, "\n");

    /* CUOPS_TEST_RANDOM_ONLY=1: the random shapes alone (a longer search
     * with CUOPS_TEST_RANDOM_CASES, without the fixed sweeps' minutes) */
    const int random_only = tu_env_flag("CUOPS_TEST_RANDOM_ONLY");
    if (!random_only) {
        test_dispatch_contract();
        test_transposes_and_dtypes();
        test_shape_sweep();
        test_padding_and_misalignment();
        test_huge_leading_dimension();
        test_k_zero();
        test_k_zero_null_operands();
        test_simt_ragged();
        test_aligned_shapes();
        test_large_grids();
        test_big();
        test_small_user_workspace();
    }
    test_random_shapes();

    fprintf(stderr, "CPU reference work: %.3g multiply-adds\n", g_cpu_mnk);
    if (!g_device_dead && !random_only) {
        for (int v = 0; v < g_variant_count; v++) {
            fprintf(stderr, "variant %-28s ran %4d case(s), declined %4d\n", g_variants[v],
                    g_served[v], g_unsupported[v]);
            CHECK(g_served[v] > 0, "variant %s served none of the %d cases it was offered",
                  g_variants[v], g_unsupported[v]);
            tu_skipped += g_unsupported[v];
        }
    }
    cuops_destroy(g_gpu);
    cuops_destroy(g_cpu);
    return tu_finish("test_gpu_gemm");
}
