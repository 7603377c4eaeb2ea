/*
 * bench_gemm.cu - cuops-bench rows for cuops_gemm: every default shape of
 * anchors/h200.md (square, odd, decode, llm) in f16 and bf16 against cuBLAS
 * cublasGemmEx, and f32 at 1024..8192 against cublasSgemm in pedantic math
 * (no TF32), each variant validated by C.x = A.(B.x) in fp64 before timing.
 *
 * Decode shapes (m <= 64) read the weight once and do little else: they
 * rotate over buffer sets larger than 3x L2 so the number is HBM, as a
 * decode step sees it; the larger shapes are compute-bound and reuse one set.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct gemm_shape_def {
    int64_t m, n, k;
    unsigned tags;
} gemm_shape_def_t;

#define SQ BENCH_SUITE_SQUARE
#define ODD BENCH_SUITE_ODD
#define DEC BENCH_SUITE_DECODE
#define LLM BENCH_SUITE_LLM
#define BIG BENCH_SUITE_BIG
#define QK BENCH_SUITE_QUICK

static const gemm_shape_def_t gemm_shapes_16bit[] = {
    {1024, 1024, 1024, SQ | QK}, {2048, 2048, 2048, SQ}, {4096, 4096, 4096, SQ},
    {8192, 8192, 8192, SQ}, {16384, 16384, 16384, SQ | BIG},
    {4095, 4095, 4095, ODD}, {1537, 3001, 2049, ODD | QK}, {1000, 1000, 1000, ODD},
    {8191, 8193, 4097, ODD},
    {1, 4096, 4096, DEC}, {16, 4096, 4096, DEC | QK}, {64, 4096, 4096, DEC},
    {1, 14336, 4096, DEC}, {16, 14336, 4096, DEC}, {64, 14336, 4096, DEC},
    {1, 4096, 14336, DEC}, {16, 4096, 14336, DEC}, {64, 4096, 14336, DEC},
    {1, 28672, 8192, DEC}, {16, 28672, 8192, DEC}, {64, 28672, 8192, DEC},
    {128, 4096, 4096, LLM}, {1024, 4096, 4096, LLM}, {4096, 14336, 4096, LLM},
    {4096, 4096, 14336, LLM}, {8192, 28672, 8192, LLM | BIG}, {8192, 8192, 28672, LLM | BIG},
    {16384, 4096, 4096, LLM},
    {7, 129, 65, QK}, /* odd everything, smaller than any tile */
};

static const gemm_shape_def_t gemm_shapes_f32[] = {
    {1024, 1024, 1024, SQ | QK}, {2048, 2048, 2048, SQ}, {4096, 4096, 4096, SQ},
    {8192, 8192, 8192, SQ}, {65, 1537, 129, QK},
};

#undef SQ
#undef ODD
#undef DEC
#undef LLM
#undef BIG
#undef QK

/* Products at or below this many multiply-adds are checked element by element. */
#define GEMM_FULL_CHECK_LIMIT ((int64_t)1 << 27)
#define GEMM_SAMPLES 256

cublasStatus_t bench_cublas_gemm(cublasHandle_t handle, cuops_op_t trans_a, cuops_op_t trans_b,
                                 int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                                 const void *b, int64_t ldb, void *c, int64_t ldc,
                                 cuops_dtype_t ab_type, cuops_dtype_t c_type)
{
    /* Row-major C[m,n] = op(A) op(B) is column-major C^T[n,m] = op(B)^T op(A)^T,
     * and a row-major X read column-major is X^T: so B goes first, with
     * cuBLAS transposing it exactly when cuops would (trans_b == T: B is
     * stored [n,k], i.e. column-major k x n, and op(B)^T = B), A second. */
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
        ldc > INT_MAX)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    cublasOperation_t op_b = trans_b == CUOPS_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t op_a = trans_a == CUOPS_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
    const float alpha = 1.0f, beta = 0.0f;
    if (ab_type == CUOPS_DTYPE_F32)
        return cublasSgemm(handle, op_b, op_a, (int)n, (int)m, (int)k, &alpha, (const float *)b,
                           (int)ldb, (const float *)a, (int)lda, &beta, (float *)c, (int)ldc);
    cudaDataType_t ab = ab_type == CUOPS_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
    cudaDataType_t ct = c_type == CUOPS_DTYPE_F32 ? CUDA_R_32F
                                                  : (c_type == CUOPS_DTYPE_BF16 ? CUDA_R_16BF
                                                                                : CUDA_R_16F);
    return cublasGemmEx(handle, op_b, op_a, (int)n, (int)m, (int)k, &alpha, b, ab, (int)ldb, a, ab,
                        (int)lda, &beta, c, ct, (int)ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

typedef struct gemm_ctx {
    bench_env_t *env;
    cuops_op_t ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    cuops_dtype_t ab, ct;
    char *a, *b, *c;                  /* arenas of num_sets buffers */
    size_t a_stride, b_stride, c_stride;
    cuops_options_t opts;
    cublasHandle_t cublas;
} gemm_ctx_t;

static int enqueue_cuops_gemm(void *p, int set, char *err, size_t len)
{
    gemm_ctx_t *g = (gemm_ctx_t *)p;
    cuops_status_t st = cuops_gemm_ex(g->env->h, g->ta, g->tb, g->m, g->n, g->k, 1.0f,
                                      g->a + set * g->a_stride, g->lda, g->b + set * g->b_stride,
                                      g->ldb, 0.0f, g->c + set * g->c_stride, g->ldc, g->ab, g->ct,
                                      &g->opts);
    if (st != CUOPS_STATUS_SUCCESS) {
        snprintf(err, len, "cuops_gemm_ex: %s: %s", cuops_status_string(st),
                 cuops_last_error(g->env->h));
        return (int)st;
    }
    return 0;
}

static int enqueue_cublas_gemm(void *p, int set, char *err, size_t len)
{
    gemm_ctx_t *g = (gemm_ctx_t *)p;
    cublasStatus_t st = bench_cublas_gemm(g->cublas, g->ta, g->tb, g->m, g->n, g->k,
                                          g->a + set * g->a_stride, g->lda,
                                          g->b + set * g->b_stride, g->ldb,
                                          g->c + set * g->c_stride, g->ldc, g->ab, g->ct);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, len, "cuBLAS: %s", cublasGetStatusString(st));
        return -1;
    }
    return 0;
}

/* Host copies of set 0's A and B and the fp64 projections made from them:
 * once per shape, shared by the baseline check and every variant. */
typedef struct gemm_host {
    void *a, *b;
    int have_ref;
    bv_gemm_ref_t ref;
} gemm_host_t;

static bv_result_t check_gemm_output(gemm_ctx_t *g, gemm_host_t *host, double tol)
{
    bv_result_t r;
    bv_result_init(&r);
    size_t es = bv_dtype_size(g->ab);
    const int64_t a_rows = g->ta == CUOPS_OP_N ? g->m : g->k; /* rows of A as stored */
    const int64_t b_rows = g->tb == CUOPS_OP_N ? g->k : g->n; /* rows of B as stored */
    if (!host->a) host->a = bench_to_host(g->a, (size_t)(a_rows * g->lda) * es);
    if (!host->b) host->b = bench_to_host(g->b, (size_t)(b_rows * g->ldb) * es);
    void *c = bench_to_host(g->c, (size_t)(g->m * g->n) * bv_dtype_size(g->ct));
    if (!host->a || !host->b || !c) {
        free(c);
        r.pass = 0;
        r.max_rel_err = NAN;
        bv_note(&r, "could not copy A, B, C to the host");
        return r;
    }
    bv_gemm_t spec;
    spec.trans_a = g->ta; spec.trans_b = g->tb;
    spec.m = g->m; spec.n = g->n; spec.k = g->k; spec.alpha = 1.0;
    spec.a = host->a; spec.lda = g->lda;
    spec.b = host->b; spec.ldb = g->ldb;
    spec.ab_type = g->ab;
    spec.c = c; spec.ldc = g->ldc; spec.c_type = g->ct;
    const uint64_t seed = g->env->opt.seed ^ (uint64_t)(g->m * 1000003 + g->n * 1009 + g->k);
    if (!host->have_ref) {
        if (bv_gemm_ref_init(&host->ref, &spec, seed)) {
            free(c);
            r.pass = 0;
            r.max_rel_err = NAN;
            bv_note(&r, "host memory for the reference vectors is short");
            return r;
        }
        host->have_ref = 1;
    }
    r = bv_check_gemm_ref(&spec, &host->ref, tol, GEMM_FULL_CHECK_LIMIT, GEMM_SAMPLES,
                          seed ^ 0x5A5Aull);
    free(c);
    return r;
}

static void fill_row_numbers(bench_env_t *env, bench_row_t *row, const gemm_ctx_t *g, double us,
                             int memory_bound)
{
    double es = (double)bv_dtype_size(g->ab), os = (double)bv_dtype_size(g->ct);
    double m = (double)g->m, n = (double)g->n, k = (double)g->k;
    row->us = us;
    row->tflops = 2.0 * m * n * k / (us * 1e6);
    row->gbps = ((m * k + n * k) * es + m * n * os) / (us * 1e3);
    if (memory_bound) row->pct_of_ceiling = 100.0 * row->gbps / env->copy_gbps;
    else if (g->ab != CUOPS_DTYPE_F32) row->pct_of_ceiling = 100.0 * row->tflops / env->vendor_gemm_tflops;
}

static void run_gemm_shape(bench_env_t *env, cuops_dtype_t dtype, int64_t m, int64_t n, int64_t k,
                           unsigned tags)
{
    const char *variants[BENCH_MAX_ITEMS];
    int num_variants = bench_variants(env, "gemm", variants, BENCH_MAX_ITEMS);
    if (num_variants == 0) return;

    gemm_ctx_t g;
    memset(&g, 0, sizeof(g));
    g.env = env;
    g.ta = env->opt.trans_a;
    g.tb = env->opt.trans_b;
    g.m = m; g.n = n; g.k = k;
    g.lda = g.ta == CUOPS_OP_N ? k : m;
    if (env->opt.lda > g.lda) g.lda = env->opt.lda;
    const int64_t a_rows = g.ta == CUOPS_OP_N ? m : k; /* rows of A as stored */
    g.ldb = g.tb == CUOPS_OP_N ? n : k;
    if (env->opt.ldb > g.ldb) g.ldb = env->opt.ldb;
    const int64_t b_rows = g.tb == CUOPS_OP_N ? k : n; /* rows of B as stored */
    g.ldc = n;
    g.ab = g.ct = dtype;
    g.cublas = dtype == CUOPS_DTYPE_F32 ? env->cublas_pedantic : env->cublas;
    const size_t es = bv_dtype_size(dtype);
    g.a_stride = bench_round_up((size_t)(a_rows * g.lda) * es, 256);
    g.b_stride = bench_round_up((size_t)(b_rows * g.ldb) * es, 256);
    g.c_stride = bench_round_up((size_t)(m * n) * es, 256);
    /* the ridge of the bf16 GEMM ceiling; f32 rows (no f32 ceiling measured,
     * a ridge ~14x lower) stay memory-bound at m <= 64 only */
    const int memory_bound = bench_gemm_memory_bound(
        m, n, k, (double)es, (double)es,
        dtype == CUOPS_DTYPE_F32 ? NAN : env->vendor_gemm_tflops, env->copy_gbps);
    const size_t set_bytes = g.a_stride + g.b_stride + g.c_stride;
    const int sets = memory_bound ? bench_rotation_sets(env, set_bytes, BENCH_MAX_SETS) : 1;
    const double tol = dtype == CUOPS_DTYPE_F32 ? 1e-5 : 1e-2;
    const char *baseline = dtype == CUOPS_DTYPE_F32 ? "cublas_sgemm" : "cublas";

    fprintf(stderr, "gemm %s %lldx%lldx%lld (%s, %d buffer set%s)\n", bv_dtype_name(dtype),
            (long long)m, (long long)n, (long long)k, bench_suite_name(tags), sets,
            sets > 1 ? "s" : "");
    const char *skip = NULL;
    if (!bench_fits((size_t)sets * set_bytes)) skip = "not enough device memory";
    else if (cudaMalloc((void **)&g.a, (size_t)sets * g.a_stride) != cudaSuccess ||
             cudaMalloc((void **)&g.b, (size_t)sets * g.b_stride) != cudaSuccess ||
             cudaMalloc((void **)&g.c, (size_t)sets * g.c_stride) != cudaSuccess)
        skip = "device allocation failed";
    else if (bench_fill(env, g.a, dtype, (size_t)sets * g.a_stride / es, -1.0, 1.0) ||
             bench_fill(env, g.b, dtype, (size_t)sets * g.b_stride / es, -1.0, 1.0))
        skip = "filling the inputs failed";
    if (skip) {
        (void)cudaGetLastError();
        for (int v = 0; v < num_variants; v++) {
            bench_row_t *row = bench_row_new(env, "gemm", variants[v], dtype);
            row->m = m; row->n = n; row->k = k; row->suite = tags;
            row->lda = env->opt.lda > 0 ? g.lda : 0;
            row->ldb = env->opt.ldb > 0 ? g.ldb : 0;
            bench_row_fail(row, BENCH_ROW_SKIPPED, "%s (%zu MiB in %d set(s))", skip,
                           ((size_t)sets * set_bytes) >> 20, sets);
            bench_row_done(env, row);
        }
        cudaFree(g.a); cudaFree(g.b); cudaFree(g.c);
        return;
    }

    gemm_host_t host;
    memset(&host, 0, sizeof(host));

    /* the vendor baseline: its operand mapping is checked once per layout and type */
    static int cublas_checked[8][4];
    double baseline_us = NAN;
    bench_power_t baseline_power = bench_power_none();
    int layout = (g.ta == CUOPS_OP_T) * 2 + (g.tb == CUOPS_OP_T);
    int baseline_ok = 1;
    if (!cublas_checked[dtype][layout]) {
        cublas_checked[dtype][layout] = 1;
        char err[256] = "";
        bench_poison(env, g.c, dtype, (size_t)(m * n));
        if (enqueue_cublas_gemm(&g, 0, err, sizeof(err)) ||
            cudaStreamSynchronize(env->stream) != cudaSuccess) {
            fprintf(stderr, "  %s failed: %s\n", baseline, err);
            baseline_ok = 0;
            /* not checked yet: the next shape of this layout checks it again */
            cublas_checked[dtype][layout] = 0;
            (void)cudaGetLastError();
        } else {
            bv_result_t r = check_gemm_output(&g, &host, tol);
            if (!r.pass) {
                fprintf(stderr, "  %s result does not validate (operand mapping?): %s\n",
                        baseline, r.msg);
                baseline_ok = 0;
                cublas_checked[dtype][layout] = 2;
            }
        }
    } else if (cublas_checked[dtype][layout] == 2) {
        baseline_ok = 0;
    }
    /* --interleave: each row times the baseline alongside itself instead */
    if (baseline_ok && !env->opt.interleave) {
        bench_timing_t t = bench_time(env, enqueue_cublas_gemm, &g, sets);
        if (t.ok) {
            baseline_us = t.median_us;
            baseline_power = t.power;
        } else {
            fprintf(stderr, "  %s timing failed: %s\n", baseline, t.err);
        }
    }

    for (int v = 0; v < num_variants; v++) {
        bench_row_t *row = bench_row_new(env, "gemm", variants[v], dtype);
        row->shape_kind = 0;
        row->m = m; row->n = n; row->k = k;
        row->suite = tags;
        row->lda = env->opt.lda > 0 ? g.lda : 0;
        row->ldb = env->opt.ldb > 0 ? g.ldb : 0;
        row->baseline = baseline;
        row->baseline_us = baseline_us;
        row->baseline_power = baseline_power;
        g.opts = bench_cuops_options(variants[v]);

        if (bench_poison(env, g.c, dtype, (size_t)(m * n))) {
            bench_row_fail(row, BENCH_ROW_ERROR, "poisoning C failed");
            bench_row_done(env, row);
            continue;
        }
        if (!bench_row_first_call(env, row, enqueue_cuops_gemm, &g)) continue;
        bv_result_t r = check_gemm_output(&g, &host, tol);
        row->valid = r.pass;
        row->max_rel_err = r.max_rel_err;
        if (!r.pass) {
            fprintf(stderr, "  gemm %s %s %lldx%lldx%lld INVALID: %s\n", variants[v],
                    bv_dtype_name(dtype), (long long)m, (long long)n, (long long)k, r.msg);
            bench_row_fail(row, BENCH_ROW_INVALID, "%.150s", r.msg);
            if (!env->opt.time_invalid) {
                bench_row_done(env, row);
                continue;
            }
        }
        bench_timing_t t = bench_time_row(env, row, enqueue_cuops_gemm, &g,
                                          baseline_ok ? enqueue_cublas_gemm : NULL, &g, sets);
        if (!t.ok) bench_row_fail(row, BENCH_ROW_ERROR, "timing: %s", t.err);
        else fill_row_numbers(env, row, &g, t.median_us, memory_bound);
        row->power = t.power;
        row->valid = r.pass;
        bench_row_done(env, row);
    }
    free(host.a);
    free(host.b);
    if (host.have_ref) bv_gemm_ref_free(&host.ref);
    cudaFree(g.a);
    cudaFree(g.b);
    cudaFree(g.c);
}

void bench_run_gemm(bench_env_t *env)
{
    static const cuops_dtype_t types[3] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32};
    for (int t = 0; t < 3; t++) {
        cuops_dtype_t dtype = types[t];
        if (!bench_dtype_wanted(env, dtype, types, 3)) continue;
        /* user shapes run f32 only when asked for: SGEMM is a study of its own */
        if (env->opt.num_shapes && !env->opt.num_dtypes && dtype == CUOPS_DTYPE_F32) continue;
        if (env->opt.num_shapes) {
            for (int s = 0; s < env->opt.num_shapes; s++) {
                const bench_shape_t *sh = &env->opt.shapes[s];
                if (sh->dims == 3) run_gemm_shape(env, dtype, sh->d[0], sh->d[1], sh->d[2], 0);
            }
            continue;
        }
        const gemm_shape_def_t *list = dtype == CUOPS_DTYPE_F32 ? gemm_shapes_f32 : gemm_shapes_16bit;
        size_t count = dtype == CUOPS_DTYPE_F32
                           ? sizeof(gemm_shapes_f32) / sizeof(gemm_shapes_f32[0])
                           : sizeof(gemm_shapes_16bit) / sizeof(gemm_shapes_16bit[0]);
        for (size_t i = 0; i < count; i++)
            if (bench_suite_wanted(env, list[i].tags))
                run_gemm_shape(env, dtype, list[i].m, list[i].n, list[i].k, list[i].tags);
    }
}
