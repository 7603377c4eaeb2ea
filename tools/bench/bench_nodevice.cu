/*
 * bench_nodevice.cu - what cuops-bench does on a machine without a CUDA
 * device: each selected op runs once on tiny shapes through the CPU
 * reference backend, is validated by the bench's own independent host checks
 * (the same bench_validate.h math the GPU rows use), and is timed with a
 * host clock. No vendor baseline. This keeps the main command working in CI
 * and shows the validation path end to end.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Host-side random data (the GPU filler is not available here). */
static void host_fill(uint64_t *rng, void *p, cuops_dtype_t t, int64_t count, double lo, double hi)
{
    for (int64_t i = 0; i < count; i++) {
        double u = 0.5 * (bv_rand_pm1(rng) + 1.0); /* [0, 1) */
        double v = lo + (hi - lo) * u;
        if (bv_dtype_is_int(t)) v = floor(v);
        bv_store(p, t, i, v);
    }
}

/* Host clock around three calls, median: the first call pays page faults. */
#define HOST_TIMED(secs, status, call)                                \
    do {                                                              \
        double host_times_[3];                                        \
        for (int rep_ = 0; rep_ < 3; rep_++) {                        \
            double t0_ = bench_host_seconds();                        \
            (status) = (call);                                        \
            host_times_[rep_] = bench_host_seconds() - t0_;           \
            if ((status) != CUOPS_STATUS_SUCCESS) break;              \
        }                                                             \
        (secs) = (status) == CUOPS_STATUS_SUCCESS ? bv_median(host_times_, 3) : 0.0; \
    } while (0)

static void host_poison(void *p, cuops_dtype_t t, int64_t count)
{
    memset(p, bv_dtype_is_int(t) ? 0xA5 : 0xFF, (size_t)count * bv_dtype_size(t));
}

static void finish(bench_env_t *env, bench_row_t *row, cuops_status_t st, const bv_result_t *r,
                   double seconds)
{
    if (!bench_row_status_from(env, row, st, row->op)) {
        bench_row_done(env, row);
        return;
    }
    snprintf(row->kernel, sizeof(row->kernel), "%s", cuops_last_kernel(env->hc));
    row->valid = r->pass;
    row->max_rel_err = r->max_rel_err;
    if (!r->pass) {
        fprintf(stderr, "  %s %s INVALID: %s\n", row->op, row->dtype, r->msg);
        bench_row_fail(row, BENCH_ROW_INVALID, "%.150s", r->msg);
    } else {
        row->us = seconds * 1e6;
    }
    bench_row_done(env, row);
}

static void cpu_gemm(bench_env_t *env, uint64_t *rng, cuops_dtype_t t, int64_t m, int64_t n,
                     int64_t k)
{
    const cuops_op_t ta = env->opt.trans_a, tb = env->opt.trans_b;
    const int64_t lda = ta == CUOPS_OP_N ? k : m, ldb = tb == CUOPS_OP_N ? n : k;
    const size_t es = bv_dtype_size(t);
    void *a = malloc((size_t)(m * k) * es), *b = malloc((size_t)(n * k) * es);
    void *c = malloc((size_t)(m * n) * es);
    bench_row_t *row = bench_row_new(env, "gemm", "auto", t);
    row->m = m; row->n = n; row->k = k;
    if (!a || !b || !c) {
        bench_row_fail(row, BENCH_ROW_ERROR, "host allocation failed");
        bench_row_done(env, row);
        free(a); free(b); free(c);
        return;
    }
    host_fill(rng, a, t, m * k, -1.0, 1.0);
    host_fill(rng, b, t, n * k, -1.0, 1.0);
    host_poison(c, t, m * n);
    cuops_status_t st;
    double secs;
    HOST_TIMED(secs, st, cuops_gemm(env->hc, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n, t, t));
    bv_result_t r;
    bv_result_init(&r);
    if (st == CUOPS_STATUS_SUCCESS) {
        bv_gemm_t g;
        g.trans_a = ta; g.trans_b = tb;
        g.m = m; g.n = n; g.k = k; g.alpha = 1.0;
        g.a = a; g.lda = lda; g.b = b; g.ldb = ldb; g.ab_type = t;
        g.c = c; g.ldc = n; g.c_type = t;
        r = bv_check_gemm(&g, t == CUOPS_DTYPE_F32 ? 1e-5 : 1e-2, (int64_t)1 << 27, 256,
                          env->opt.seed);
        row->tflops = 2.0 * (double)m * (double)n * (double)k / (secs * 1e12);
    }
    finish(env, row, st, &r, secs);
    free(a); free(b); free(c);
}

static void cpu_dequant(bench_env_t *env, uint64_t *rng, cuops_dtype_t t, int64_t n, int64_t k)
{
    const int64_t group = 128, groups = (k + group - 1) / group, ldq = (k + 1) / 2;
    const size_t es = bv_dtype_size(t);
    uint8_t *q = (uint8_t *)malloc((size_t)(n * ldq));
    uint8_t *z = (uint8_t *)malloc((size_t)(n * groups));
    void *s = malloc((size_t)(n * groups) * es);
    void *out = malloc((size_t)(n * k) * es), *ref = malloc((size_t)(n * k) * es);
    bench_row_t *row = bench_row_new(env, "dequant", "auto", t);
    row->shape_kind = 1;
    row->n = n; row->k = k; row->group = group;
    if (!q || !z || !s || !out || !ref) {
        bench_row_fail(row, BENCH_ROW_ERROR, "host allocation failed");
        bench_row_done(env, row);
    } else {
        host_fill(rng, q, CUOPS_DTYPE_U8, n * ldq, 0.0, 256.0);
        host_fill(rng, z, CUOPS_DTYPE_U8, n * groups, 0.0, 16.0);
        host_fill(rng, s, t, n * groups, 0.001, 0.05);
        host_poison(out, t, n * k);
        cuops_status_t st;
        double secs;
        HOST_TIMED(secs, st, cuops_dequant_int4(env->hc, n, k, group, q, ldq, s, t, z, out, k, t));
        bv_result_t r;
        bv_result_init(&r);
        if (st == CUOPS_STATUS_SUCCESS) {
            bv_dequant_ref(n, k, group, q, ldq, s, t, z, ref, k, t);
            r = bv_check_exact(out, k, ref, k, n, k, t, 0);
            row->gbps = (double)(n * ldq + n * groups * (int64_t)es + n * groups +
                                 n * k * (int64_t)es) / (secs * 1e9);
        }
        finish(env, row, st, &r, secs);
    }
    free(q); free(z); free(s); free(out); free(ref);
}

static void cpu_w4a16(bench_env_t *env, uint64_t *rng, cuops_dtype_t act, int64_t m, int64_t n,
                      int64_t k)
{
    const int64_t group = 128, groups = (k + group - 1) / group, ldq = (k + 1) / 2;
    const size_t es = bv_dtype_size(act);
    size_t packed_bytes = 0;
    bench_row_t *row = bench_row_new(env, "w4a16", "auto", act);
    row->shape_kind = 3;
    row->m = m; row->n = n; row->k = k; row->group = group;
    cuops_status_t st = cuops_w4_packed_size(env->hc, n, k, group, act, &packed_bytes);
    if (!bench_row_status_from(env, row, st, "cuops_w4_packed_size")) {
        bench_row_done(env, row);
        return;
    }
    uint8_t *q = (uint8_t *)malloc((size_t)(n * ldq));
    uint8_t *z = (uint8_t *)malloc((size_t)(n * groups));
    void *s = malloc((size_t)(n * groups) * es), *w = malloc((size_t)(n * k) * es);
    void *x = malloc((size_t)(m * k) * es), *y = malloc((size_t)(m * n) * es);
    void *y_ref = malloc((size_t)(m * n) * es), *packed = malloc(packed_bytes ? packed_bytes : 1);
    if (!q || !z || !s || !w || !x || !y || !y_ref || !packed) {
        bench_row_fail(row, BENCH_ROW_ERROR, "host allocation failed");
        bench_row_done(env, row);
    } else {
        host_fill(rng, q, CUOPS_DTYPE_U8, n * ldq, 0.0, 256.0);
        host_fill(rng, z, CUOPS_DTYPE_U8, n * groups, 0.0, 16.0);
        host_fill(rng, s, act, n * groups, 0.001, 0.05);
        host_fill(rng, x, act, m * k, -1.0, 1.0);
        host_poison(y, act, m * n);
        st = cuops_w4_prepack(env->hc, n, k, group, q, ldq, s, act, z, act, packed);
        double secs = 0.0;
        if (st == CUOPS_STATUS_SUCCESS)
            HOST_TIMED(secs, st, cuops_gemm_w4a16(env->hc, m, n, k, group, x, k, packed, y, n, act));
        bv_result_t r;
        bv_result_init(&r);
        if (st == CUOPS_STATUS_SUCCESS) {
            /* reference: the formula's dense weight, then x W^T in double */
            bv_dequant_ref(n, k, group, q, ldq, s, act, z, w, k, act);
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    double acc = 0.0;
                    for (int64_t p = 0; p < k; p++)
                        acc += bv_load(x, act, i * k + p) * bv_load(w, act, j * k + p);
                    bv_store(y_ref, act, i * n + j, acc);
                }
            r = bv_check_rel(y, n, act, y_ref, n, act, m, n, 2e-2, 2e-2);
            row->tflops = 2.0 * (double)m * (double)n * (double)k / (secs * 1e12);
        }
        finish(env, row, st, &r, secs);
    }
    free(q); free(z); free(s); free(w); free(x); free(y); free(y_ref); free(packed);
}

static void cpu_scan(bench_env_t *env, uint64_t *rng, int reduce, cuops_dtype_t t, int64_t n)
{
    const size_t es = bv_dtype_size(t);
    void *in = malloc((size_t)n * es), *out = malloc((size_t)n * es), *ref = malloc((size_t)n * es);
    bench_row_t *row = bench_row_new(env, reduce ? "reduce" : "scan", "auto", t);
    row->shape_kind = 2;
    row->n = n;
    if (!in || !out || !ref) {
        bench_row_fail(row, BENCH_ROW_ERROR, "host allocation failed");
        bench_row_done(env, row);
    } else {
        if (bv_dtype_is_int(t)) host_fill(rng, in, t, n, -1000.0, 1001.0);
        else host_fill(rng, in, t, n, -1.0, 1.0);
        host_poison(out, t, n);
        cuops_status_t st;
        double secs;
        HOST_TIMED(secs, st, reduce ? cuops_reduce(env->hc, CUOPS_REDUCE_SUM, t, n, in, out)
                                    : cuops_scan(env->hc, CUOPS_REDUCE_SUM, 0, t, n, in, out));
        bv_result_t r;
        bv_result_init(&r);
        if (st == CUOPS_STATUS_SUCCESS) {
            if (reduce) {
                double abs_sum = 0.0;
                bv_reduce_ref(in, ref, t, n, &abs_sum);
                r = bv_check_scalar(out, ref, t, abs_sum, bv_scan_tol(t));
            } else {
                bv_scan_ref(in, ref, t, n);
                r = bv_check_scan(out, ref, in, t, n, 0, 0.0, bv_scan_tol(t));
            }
            row->gbps = (reduce ? 1.0 : 2.0) * (double)n * (double)es / (secs * 1e9);
        }
        finish(env, row, st, &r, secs);
    }
    free(in); free(out); free(ref);
}

void bench_run_nodevice(bench_env_t *env)
{
    uint64_t rng = env->opt.seed;
    static const cuops_dtype_t gemm_types[3] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32};
    static const cuops_dtype_t half_types[2] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
    static const cuops_dtype_t scan_defaults[2] = {CUOPS_DTYPE_I32, CUOPS_DTYPE_F32};
    static const cuops_dtype_t scan_types[4] = {CUOPS_DTYPE_I32, CUOPS_DTYPE_F32, CUOPS_DTYPE_I64,
                                                CUOPS_DTYPE_F64};
    bench_print_header();
    if (env->opt.run_op[BENCH_GEMM])
        for (int t = 0; t < 3; t++)
            if (bench_dtype_wanted(env, gemm_types[t], gemm_types, 3)) {
                cpu_gemm(env, &rng, gemm_types[t], 33, 17, 65);
                cpu_gemm(env, &rng, gemm_types[t], 7, 129, 31);
            }
    if (env->opt.run_op[BENCH_DEQUANT])
        for (int t = 0; t < 2; t++)
            if (bench_dtype_wanted(env, half_types[t], half_types, 2))
                cpu_dequant(env, &rng, half_types[t], 7, 257);
    if (env->opt.run_op[BENCH_W4A16])
        for (int t = 0; t < 2; t++)
            if (bench_dtype_wanted(env, half_types[t], half_types, 1))
                cpu_w4a16(env, &rng, half_types[t], 3, 17, 256);
    for (int reduce = 0; reduce < 2; reduce++) {
        if (!env->opt.run_op[reduce ? BENCH_REDUCE : BENCH_SCAN]) continue;
        for (int t = 0; t < 4; t++)
            if (bench_dtype_wanted(env, scan_types[t], scan_defaults, 2))
                cpu_scan(env, &rng, reduce, scan_types[t], 1000);
    }
}
