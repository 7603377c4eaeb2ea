/*
 * bench_quant.cu - cuops-bench rows for int4 weights:
 *  - dequant: cuops_dequant_int4 at the seed's shapes (128x4096, 4096x4096,
 *    16384x4096) and 32768x8192, group 128, zeros present, f16 and bf16 out,
 *    bit-exact against the CPU backend; baseline the seed's Triton kernel
 *    (tools/bench/triton_seed_dequant.py) when Triton is installed.
 *  - w4a16: cuops_w4_prepack once per weight set, then cuops_gemm_w4a16 at
 *    M in {1,16,64,1024,4096} against cuBLAS fp16 on the dense weight, the
 *    weights cold in L2; validated against cuBLAS on the dequantized weight.
 *    An extra row "dequant+gemm" times the unfused pair.
 * Both are memory-bound at small M, so every buffer set is rotated until the
 * sets together exceed 3x L2 (bench_rotation_sets).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define QUANT_GROUP 128
#define DEQUANT_FULL_CHECK ((int64_t)1 << 26) /* elements: beyond, sampled row blocks */
#define DEQUANT_SAMPLE_BLOCKS 16
#define DEQUANT_BLOCK_ROWS 64

/* Host copies of one int4 weight (set 0). */
typedef struct host_weight {
    uint8_t *q, *z;
    void *s;
} host_weight_t;

static void free_host_weight(host_weight_t *w)
{
    free(w->q); free(w->z); free(w->s);
    w->q = w->z = NULL;
    w->s = NULL;
}

/* Dense reference rows [r0, r0+rows) of a weight: the CPU backend, or the
 * independent formula when the CPU backend cannot serve the call. */
static int dequant_reference(bench_env_t *env, const host_weight_t *w, int64_t r0, int64_t rows,
                             int64_t k, int64_t ldq, cuops_dtype_t stype, cuops_dtype_t otype,
                             void *out)
{
    static int warned = 0;
    const int64_t groups = (k + QUANT_GROUP - 1) / QUANT_GROUP;
    const uint8_t *q = w->q + r0 * ldq;
    const void *s = (const char *)w->s + (size_t)(r0 * groups) * bv_dtype_size(stype);
    const uint8_t *z = w->z + r0 * groups;
    cuops_status_t st = cuops_dequant_int4(env->hc, rows, k, QUANT_GROUP, q, ldq, s, stype, z,
                                           out, k, otype);
    if (st == CUOPS_STATUS_SUCCESS) return 0;
    if (!warned) {
        warned = 1;
        fprintf(stderr, "  CPU backend dequant: %s (%s); using the bench's own formula\n",
                cuops_status_string(st), cuops_last_error(env->hc));
    }
    bv_dequant_ref(rows, k, QUANT_GROUP, q, ldq, s, stype, z, out, k, otype);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Triton seed baseline                                                     */
/* ------------------------------------------------------------------------ */

static int triton_available(void)
{
    static int state = -1;
    if (state < 0) {
        state = system("python3 -c 'import triton' >/dev/null 2>&1") == 0;
        if (!state) fprintf(stderr, "  Triton not importable: dequant baseline is null\n");
    }
    return state;
}

static int triton_script(char *buf, size_t len)
{
    const char *env_path = getenv("CUOPS_TRITON_SCRIPT");
    if (env_path && *env_path) snprintf(buf, len, "%s", env_path);
    else {
        char dir[1024];
        bench_exe_dir(dir, sizeof(dir));
        snprintf(buf, len, "%s/../../tools/bench/triton_seed_dequant.py", dir);
    }
    return access(buf, R_OK) == 0 && !strchr(buf, '\'');
}

/* The number after "key": in a one-line JSON object (NAN if absent/null). */
static double json_number(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\"", key);
    const char *p = strstr(line, pat);
    if (!p) return NAN;
    p = strchr(p + strlen(pat), ':');
    if (!p) return NAN;
    char *end = NULL;
    double v = strtod(p + 1, &end);
    return end == p + 1 ? NAN : v;
}

/* Runs the seed kernel through Triton; returns 0 and its two timings. */
static int run_triton_seed(int64_t n, int64_t k, cuops_dtype_t dtype, double *seed_us,
                           double *hoisted_us)
{
    *seed_us = *hoisted_us = NAN;
    if (!triton_available()) return -1;
    char script[1200];
    if (!triton_script(script, sizeof(script))) {
        static int warned = 0;
        if (!warned) fprintf(stderr, "  Triton seed script not found at %s\n", script);
        warned = 1;
        return -1;
    }
    char cmd[1400];
    snprintf(cmd, sizeof(cmd), "python3 '%s' --n %lld --k %lld --dtype %s --group %d 2>&1", script,
             (long long)n, (long long)k, dtype == CUOPS_DTYPE_BF16 ? "bfloat16" : "float16",
             QUANT_GROUP);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof(line), p)) {
        const char *brace = strchr(line, '{');
        if (!brace || !strstr(brace, "seed_us")) continue;
        *seed_us = json_number(brace, "seed_us");
        *hoisted_us = json_number(brace, "hoisted_us");
        double maxerr = json_number(brace, "maxerr");
        if (!(maxerr == 0.0)) {
            /* the seed kernels compute the reference's own fp32 formula: any
             * difference (or none reported) is a wrong result, not a baseline */
            fprintf(stderr, "  Triton seed kernel max error %g against its reference: its "
                            "timings are not used\n", maxerr);
            *seed_us = *hoisted_us = NAN;
            found = 1;
            continue;
        }
        fprintf(stderr, "  triton_seed: seed %.2f us, hoisted %.2f us, best BLOCK_K %g\n",
                *seed_us, *hoisted_us, json_number(brace, "best_block_k"));
        found = 1;
    }
    int rc = pclose(p);
    if (!found) fprintf(stderr, "  Triton seed script printed no result (exit %d)\n", rc);
    return found ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* dequant                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct dequant_shape_def {
    int64_t n, k;
    unsigned tags;
} dequant_shape_def_t;

static const dequant_shape_def_t dequant_shapes[] = {
    {128, 4096, BENCH_SUITE_DECODE | BENCH_SUITE_SQUARE | BENCH_SUITE_QUICK},
    {4096, 4096, BENCH_SUITE_SQUARE | BENCH_SUITE_LLM | BENCH_SUITE_QUICK},
    {16384, 4096, BENCH_SUITE_LLM},
    {32768, 8192, BENCH_SUITE_LLM | BENCH_SUITE_BIG},
    {257, 1000, BENCH_SUITE_QUICK}, /* odd rows, odd nibble count, partial last group */
};

typedef struct dequant_ctx {
    bench_env_t *env;
    int64_t n, k, ldq, groups;
    cuops_dtype_t type; /* scales and output */
    char *q, *s, *z, *out;
    size_t q_stride, s_stride, z_stride, out_stride;
    cuops_options_t opts;
} dequant_ctx_t;

static int enqueue_dequant(void *p, int set, char *err, size_t len)
{
    dequant_ctx_t *d = (dequant_ctx_t *)p;
    cuops_status_t st = cuops_dequant_int4_ex(
        d->env->h, d->n, d->k, QUANT_GROUP, d->q + set * d->q_stride, d->ldq,
        d->s + set * d->s_stride, d->type, d->z + set * d->z_stride, d->out + set * d->out_stride,
        d->k, d->type, &d->opts);
    if (st != CUOPS_STATUS_SUCCESS) {
        snprintf(err, len, "cuops_dequant_int4_ex: %s: %s", cuops_status_string(st),
                 cuops_last_error(d->env->h));
        return (int)st;
    }
    return 0;
}

/* Random weight in every set: any byte of q, zeros 0..15, positive scales
 * (a sign flip of zero would otherwise make -0 vs +0 a matter of formula). */
static int fill_weight(bench_env_t *env, int sets, char *q, size_t q_stride, char *s,
                       size_t s_stride, cuops_dtype_t stype, char *z, size_t z_stride)
{
    return bench_fill(env, q, CUOPS_DTYPE_U8, (size_t)sets * q_stride, 0.0, 256.0) ||
           bench_fill(env, s, stype, (size_t)sets * s_stride / bv_dtype_size(stype), 0.001,
                      0.05) ||
           bench_fill(env, z, CUOPS_DTYPE_U8, (size_t)sets * z_stride, 0.0, 16.0);
}

static int fetch_weight(host_weight_t *w, const char *q, size_t q_bytes, const char *s,
                        size_t s_bytes, const char *z, size_t z_bytes)
{
    w->q = (uint8_t *)bench_to_host(q, q_bytes);
    w->s = bench_to_host(s, s_bytes);
    w->z = (uint8_t *)bench_to_host(z, z_bytes);
    return (w->q && w->s && w->z) ? 0 : -1;
}

static bv_result_t check_dequant(bench_env_t *env, dequant_ctx_t *d, const host_weight_t *w)
{
    bv_result_t total;
    bv_result_init(&total);
    const size_t os = bv_dtype_size(d->type);
    const int full = d->n * d->k <= DEQUANT_FULL_CHECK;
    const int blocks = full ? 1 : DEQUANT_SAMPLE_BLOCKS;
    uint64_t rng = env->opt.seed ^ 0xDE0ull;
    for (int b = 0; b < blocks; b++) {
        int64_t rows = full ? d->n : (d->n < DEQUANT_BLOCK_ROWS ? d->n : DEQUANT_BLOCK_ROWS);
        int64_t r0 = 0;
        if (!full) {
            if (b == 1) r0 = d->n - rows; /* the first and last rows, then random blocks */
            else if (b > 1) r0 = (int64_t)(bv_rand_next(&rng) % (uint64_t)(d->n - rows + 1));
        }
        size_t bytes = (size_t)(rows * d->k) * os;
        void *ref = malloc(bytes);
        void *got = bench_to_host(d->out + (size_t)(r0 * d->k) * os, bytes);
        if (!ref || !got) {
            free(ref); free(got);
            total.pass = 0;
            total.max_rel_err = NAN;
            bv_note(&total, "host copies failed");
            return total;
        }
        dequant_reference(env, w, r0, rows, d->k, d->ldq, d->type, d->type, ref);
        bv_result_t r = bv_check_exact(got, d->k, ref, d->k, rows, d->k, d->type, r0);
        free(ref);
        free(got);
        if (!(r.max_rel_err <= total.max_rel_err)) total.max_rel_err = r.max_rel_err;
        if (!r.pass) {
            total.pass = 0;
            total.bad_count += r.bad_count;
            bv_note(&total, "rows %lld..%lld: %s; ", (long long)r0, (long long)(r0 + rows - 1),
                    r.msg);
        }
    }
    return total;
}

static void run_dequant_shape(bench_env_t *env, cuops_dtype_t type, int64_t n, int64_t k,
                              unsigned tags)
{
    const char *variants[BENCH_MAX_ITEMS];
    int num_variants = bench_variants(env, "dequant", variants, BENCH_MAX_ITEMS);
    if (num_variants == 0) return;

    dequant_ctx_t d;
    memset(&d, 0, sizeof(d));
    d.env = env;
    d.n = n; d.k = k;
    d.ldq = (k + 1) / 2;
    d.groups = (k + QUANT_GROUP - 1) / QUANT_GROUP;
    d.type = type;
    const size_t es = bv_dtype_size(type);
    const size_t q_bytes = (size_t)(n * d.ldq), s_bytes = (size_t)(n * d.groups) * es;
    const size_t z_bytes = (size_t)(n * d.groups), out_bytes = (size_t)(n * k) * es;
    d.q_stride = bench_round_up(q_bytes, 256);
    d.s_stride = bench_round_up(s_bytes, 256);
    d.z_stride = bench_round_up(z_bytes, 256);
    d.out_stride = bench_round_up(out_bytes, 256);
    const size_t set_bytes = d.q_stride + d.s_stride + d.z_stride + d.out_stride;
    const int sets = bench_rotation_sets(env, set_bytes, BENCH_MAX_SETS);
    const double bytes_moved = (double)(q_bytes + s_bytes + z_bytes + out_bytes);

    fprintf(stderr, "dequant %s %lldx%lld group %d (%d buffer set%s)\n", bv_dtype_name(type),
            (long long)n, (long long)k, QUANT_GROUP, sets, sets > 1 ? "s" : "");

    double seed_us = NAN, hoisted_us = NAN;
    run_triton_seed(n, k, type, &seed_us, &hoisted_us);
    double baseline_us = fmin(seed_us, hoisted_us); /* fmin ignores one NAN */

    const char *skip = NULL;
    if (!bench_fits((size_t)sets * set_bytes)) skip = "not enough device memory";
    else if (cudaMalloc((void **)&d.q, (size_t)sets * d.q_stride) != cudaSuccess ||
             cudaMalloc((void **)&d.s, (size_t)sets * d.s_stride) != cudaSuccess ||
             cudaMalloc((void **)&d.z, (size_t)sets * d.z_stride) != cudaSuccess ||
             cudaMalloc((void **)&d.out, (size_t)sets * d.out_stride) != cudaSuccess)
        skip = "device allocation failed";
    else if (fill_weight(env, sets, d.q, d.q_stride, d.s, d.s_stride, type, d.z, d.z_stride))
        skip = "filling the inputs failed";

    host_weight_t w = {NULL, NULL, NULL};
    if (!skip && fetch_weight(&w, d.q, q_bytes, d.s, s_bytes, d.z, z_bytes))
        skip = "host copies of the weight failed";

    const double copy_same_us = skip ? NAN : bench_copy_same_bytes(env, bytes_moved);
    for (int v = 0; v < num_variants; v++) {
        bench_row_t *row = bench_row_new(env, "dequant", variants[v], type);
        row->copy_same_us = copy_same_us;
        row->shape_kind = 1;
        row->n = n; row->k = k; row->group = QUANT_GROUP;
        row->suite = tags;
        row->baseline = isfinite(baseline_us) ? "triton_seed" : NULL;
        row->baseline_us = baseline_us;
        row->triton_seed_us = seed_us;
        row->triton_hoisted_us = hoisted_us;
        if (skip) {
            bench_row_fail(row, BENCH_ROW_SKIPPED, "%s", skip);
            bench_row_done(env, row);
            continue;
        }
        d.opts = bench_cuops_options(variants[v]);
        bench_poison(env, d.out, type, (size_t)(n * k));
        if (!bench_row_first_call(env, row, enqueue_dequant, &d)) continue;
        bv_result_t r = check_dequant(env, &d, &w);
        row->valid = r.pass;
        row->max_rel_err = r.max_rel_err;
        if (!r.pass) {
            fprintf(stderr, "  dequant %s %s %lldx%lld INVALID: %s\n", variants[v],
                    bv_dtype_name(type), (long long)n, (long long)k, r.msg);
            bench_row_fail(row, BENCH_ROW_INVALID, "%.150s", r.msg);
            bench_row_done(env, row);
            continue;
        }
        bench_timing_t t = bench_time(env, enqueue_dequant, &d, sets);
        bench_row_stream_numbers(env, row, &t, bytes_moved);
        bench_row_done(env, row);
    }
    free_host_weight(&w);
    cudaFree(d.q); cudaFree(d.s); cudaFree(d.z); cudaFree(d.out);
    (void)cudaGetLastError();
}

void bench_run_dequant(bench_env_t *env)
{
    static const cuops_dtype_t types[2] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
    for (int t = 0; t < 2; t++) {
        if (!bench_dtype_wanted(env, types[t], types, 2)) continue;
        if (env->opt.num_shapes) {
            for (int s = 0; s < env->opt.num_shapes; s++)
                if (env->opt.shapes[s].dims == 2)
                    run_dequant_shape(env, types[t], env->opt.shapes[s].d[0],
                                      env->opt.shapes[s].d[1], 0);
            continue;
        }
        for (size_t i = 0; i < sizeof(dequant_shapes) / sizeof(dequant_shapes[0]); i++)
            if (bench_suite_wanted(env, dequant_shapes[i].tags))
                run_dequant_shape(env, types[t], dequant_shapes[i].n, dequant_shapes[i].k,
                                  dequant_shapes[i].tags);
    }
}

/* ------------------------------------------------------------------------ */
/* w4a16                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct w4a16_ctx {
    bench_env_t *env;
    int64_t m, n, k, ldq, groups;
    cuops_dtype_t act;
    char *q, *s, *z, *packed, *dense, *x, *y;
    size_t q_stride, s_stride, z_stride, packed_stride, dense_stride, x_stride, y_stride;
    cuops_options_t opts;
} w4a16_ctx_t;

static int enqueue_w4a16(void *p, int set, char *err, size_t len)
{
    w4a16_ctx_t *c = (w4a16_ctx_t *)p;
    cuops_status_t st = cuops_gemm_w4a16_ex(c->env->h, c->m, c->n, c->k, QUANT_GROUP,
                                            c->x + set * c->x_stride, c->k,
                                            c->packed + set * c->packed_stride,
                                            c->y + set * c->y_stride, c->n, c->act, &c->opts);
    if (st != CUOPS_STATUS_SUCCESS) {
        snprintf(err, len, "cuops_gemm_w4a16_ex: %s: %s", cuops_status_string(st),
                 cuops_last_error(c->env->h));
        return (int)st;
    }
    return 0;
}

static int enqueue_w4_cublas(void *p, int set, char *err, size_t len)
{
    w4a16_ctx_t *c = (w4a16_ctx_t *)p;
    cublasStatus_t st = bench_cublas_gemm(c->env->cublas, CUOPS_OP_N, CUOPS_OP_T, c->m, c->n, c->k,
                                          c->x + set * c->x_stride, c->k,
                                          c->dense + set * c->dense_stride, c->k,
                                          c->y + set * c->y_stride, c->n, c->act, c->act);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, len, "cuBLAS: %s", cublasGetStatusString(st));
        return -1;
    }
    return 0;
}

static int enqueue_dequant_then_gemm(void *p, int set, char *err, size_t len)
{
    w4a16_ctx_t *c = (w4a16_ctx_t *)p;
    char *dense = c->dense + set * c->dense_stride;
    cuops_status_t st = cuops_dequant_int4(c->env->h, c->n, c->k, QUANT_GROUP,
                                           c->q + set * c->q_stride, c->ldq,
                                           c->s + set * c->s_stride, c->act,
                                           c->z + set * c->z_stride, dense, c->k, c->act);
    if (st == CUOPS_STATUS_SUCCESS)
        st = cuops_gemm(c->env->h, CUOPS_OP_N, CUOPS_OP_T, c->m, c->n, c->k, 1.0f,
                        c->x + set * c->x_stride, c->k, dense, c->k, 0.0f,
                        c->y + set * c->y_stride, c->n, c->act, c->act);
    if (st != CUOPS_STATUS_SUCCESS) {
        snprintf(err, len, "dequant+gemm: %s: %s", cuops_status_string(st),
                 cuops_last_error(c->env->h));
        return (int)st;
    }
    return 0;
}

static const int64_t w4_m[5] = {1, 16, 64, 1024, 4096};
static const int64_t w4_nk[4][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}, {28672, 8192}};

/* Dense weight of set 0 for the reference: cuops_dequant_int4 on the GPU,
 * checked against the CPU formula on every row up to 2^26 elements and on
 * every s-th row above (s = ceil(n k / 2^26): 1 row in 4 at 28672 x 8192),
 * the first and last rows always; the host formula uploaded instead when the
 * GPU path is missing or disagrees. The unfused row times the same call into
 * the same buffer, so these rows are what keeps it honest (8 sampled rows
 * until P214). Returns 1 when the GPU dequant works (then the other sets are
 * dequantized the same way). */
static int make_dense_reference(bench_env_t *env, w4a16_ctx_t *c, const host_weight_t *w)
{
    const size_t es = bv_dtype_size(c->act);
    cuops_status_t st = cuops_dequant_int4(env->h, c->n, c->k, QUANT_GROUP, c->q, c->ldq, c->s,
                                           c->act, c->z, c->dense, c->k, c->act);
    int gpu_ok = st == CUOPS_STATUS_SUCCESS && cudaStreamSynchronize(env->stream) == cudaSuccess;
    if (gpu_ok) {
        const int64_t budget = (int64_t)1 << 26;
        const int64_t step = c->n * c->k <= budget ? 1 : (c->n * c->k + budget - 1) / budget;
        for (int64_t row = 0; row < c->n + step - 1 && gpu_ok; row += step) {
            const int64_t r0 = row < c->n ? row : c->n - 1; /* the last row too */
            void *ref = malloc((size_t)c->k * es);
            void *got = bench_to_host(c->dense + (size_t)(r0 * c->k) * es, (size_t)c->k * es);
            if (ref && got) {
                bv_dequant_ref(1, c->k, QUANT_GROUP, w->q + r0 * c->ldq,
                               c->ldq, (const char *)w->s + (size_t)(r0 * c->groups) * es, c->act,
                               w->z + r0 * c->groups, ref, c->k, c->act);
                bv_result_t r = bv_check_exact(got, c->k, ref, c->k, 1, c->k, c->act, r0);
                if (!r.pass) {
                    fprintf(stderr, "  GPU dequant disagrees with the formula (%s); the w4a16 "
                                    "reference uses the host formula\n", r.msg);
                    gpu_ok = 0;
                }
            } else {
                gpu_ok = 0;
            }
            free(ref);
            free(got);
        }
    } else {
        (void)cudaGetLastError();
    }
    if (!gpu_ok) {
        size_t bytes = (size_t)(c->n * c->k) * es;
        void *dense = malloc(bytes);
        if (!dense) return -1;
        bv_dequant_ref(c->n, c->k, QUANT_GROUP, w->q, c->ldq, w->s, c->act, w->z, dense, c->k,
                       c->act);
        cudaError_t ce = cudaMemcpy(c->dense, dense, bytes, cudaMemcpyHostToDevice);
        free(dense);
        if (ce != cudaSuccess) return -1;
    }
    return gpu_ok;
}

static void run_w4a16_shape(bench_env_t *env, cuops_dtype_t act, int64_t m, int64_t n, int64_t k,
                            unsigned tags)
{
    const char *variants[BENCH_MAX_ITEMS + 1];
    int num_variants = bench_variants(env, "w4a16", variants, BENCH_MAX_ITEMS);
    int want_unfused = 0;
    for (int v = 0; v < num_variants; v++)
        if (strcmp(variants[v], "auto") == 0) want_unfused = 1;
    if (num_variants == 0) return;

    w4a16_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.env = env;
    c.m = m; c.n = n; c.k = k;
    c.ldq = (k + 1) / 2;
    c.groups = (k + QUANT_GROUP - 1) / QUANT_GROUP;
    c.act = act;
    const size_t es = bv_dtype_size(act);
    size_t packed_bytes = 0;
    cuops_status_t pst = cuops_w4_packed_size(env->h, n, k, QUANT_GROUP, act, &packed_bytes);
    char prepack_problem[200] = "";
    if (pst != CUOPS_STATUS_SUCCESS)
        snprintf(prepack_problem, sizeof(prepack_problem), "cuops_w4_packed_size: %s: %s",
                 cuops_status_string(pst), cuops_last_error(env->h));
    const size_t q_bytes = (size_t)(n * c.ldq), s_bytes = (size_t)(n * c.groups) * es;
    const size_t z_bytes = (size_t)(n * c.groups);
    c.q_stride = bench_round_up(q_bytes, 256);
    c.s_stride = bench_round_up(s_bytes, 256);
    c.z_stride = bench_round_up(z_bytes, 256);
    c.packed_stride = bench_round_up(packed_bytes ? packed_bytes : 1, 256);
    c.dense_stride = bench_round_up((size_t)(n * k) * es, 256);
    c.x_stride = bench_round_up((size_t)(m * k) * es, 256);
    c.y_stride = bench_round_up((size_t)(m * n) * es, 256);
    /* what one fused repetition touches decides the rotation: the packed
     * weight is the smallest footprint of the three timed paths */
    const size_t touched = (packed_bytes ? c.packed_stride : c.q_stride + c.s_stride + c.z_stride) +
                           c.x_stride + c.y_stride;
    const int sets = bench_rotation_sets(env, touched, BENCH_MAX_SETS);
    const size_t set_bytes = c.q_stride + c.s_stride + c.z_stride + c.packed_stride +
                             c.dense_stride + c.x_stride + c.y_stride;
    /* the weight as the fused kernel reads it (docs/w4a16.md, "The two
     * numbers"): the int4 values, a scale of act_type and a zero nibble per
     * row and group (the prepacked layout holds the seed's uint8 zeros as
     * nibbles; counted as a byte each until P214, which put GB/s ~0.75 %
     * high) */
    const double weight_bytes = (double)q_bytes + (double)s_bytes + 0.5 * (double)z_bytes;
    const int memory_bound = m <= 64;

    fprintf(stderr, "w4a16 %s m=%lld n=%lld k=%lld group %d (%d buffer set%s)\n",
            bv_dtype_name(act), (long long)m, (long long)n, (long long)k, QUANT_GROUP, sets,
            sets > 1 ? "s" : "");

    const char *skip = NULL;
    char *y_ref = NULL;
    if (!bench_fits((size_t)sets * set_bytes + c.y_stride)) skip = "not enough device memory";
    else if (cudaMalloc((void **)&c.q, (size_t)sets * c.q_stride) != cudaSuccess ||
             cudaMalloc((void **)&c.s, (size_t)sets * c.s_stride) != cudaSuccess ||
             cudaMalloc((void **)&c.z, (size_t)sets * c.z_stride) != cudaSuccess ||
             cudaMalloc((void **)&c.packed, (size_t)sets * c.packed_stride) != cudaSuccess ||
             cudaMalloc((void **)&c.dense, (size_t)sets * c.dense_stride) != cudaSuccess ||
             cudaMalloc((void **)&c.x, (size_t)sets * c.x_stride) != cudaSuccess ||
             cudaMalloc((void **)&c.y, (size_t)sets * c.y_stride) != cudaSuccess ||
             cudaMalloc((void **)&y_ref, c.y_stride) != cudaSuccess)
        skip = "device allocation failed";
    else if (fill_weight(env, sets, c.q, c.q_stride, c.s, c.s_stride, act, c.z, c.z_stride) ||
             bench_fill(env, c.x, act, (size_t)sets * c.x_stride / es, -1.0, 1.0))
        skip = "filling the inputs failed";

    host_weight_t w = {NULL, NULL, NULL};
    void *y_ref_host = NULL;
    int gpu_dequant = 0;
    double baseline_us = NAN;
    bench_power_t baseline_power = bench_power_none();
    if (!skip && fetch_weight(&w, c.q, q_bytes, c.s, s_bytes, c.z, z_bytes))
        skip = "host copies of the weight failed";
    if (!skip) {
        gpu_dequant = make_dense_reference(env, &c, &w);
        if (gpu_dequant < 0) skip = "building the dense reference weight failed";
    }
    if (!skip) {
        /* the other sets' dense weights only feed the cuBLAS timing */
        for (int s = 1; s < sets; s++) {
            char *dense = c.dense + s * c.dense_stride;
            if (gpu_dequant)
                cuops_dequant_int4(env->h, n, k, QUANT_GROUP, c.q + s * c.q_stride, c.ldq,
                                   c.s + s * c.s_stride, act, c.z + s * c.z_stride, dense, k, act);
            else
                bench_fill(env, dense, act, (size_t)(n * k), -0.5, 0.5);
        }
        /* reference output: cuBLAS on the dense weight of set 0 */
        char err[256] = "";
        w4a16_ctx_t ref = c;
        ref.y = y_ref;
        if (enqueue_w4_cublas(&ref, 0, err, sizeof(err)) ||
            cudaStreamSynchronize(env->stream) != cudaSuccess ||
            !(y_ref_host = bench_to_host(y_ref, (size_t)(m * n) * es)))
            skip = "the cuBLAS reference failed";
    }
    if (!skip && !prepack_problem[0]) {
        for (int s = 0; s < sets && !prepack_problem[0]; s++) {
            cuops_status_t st = cuops_w4_prepack(env->h, n, k, QUANT_GROUP, c.q + s * c.q_stride,
                                                 c.ldq, c.s + s * c.s_stride, act,
                                                 c.z + s * c.z_stride, act,
                                                 c.packed + s * c.packed_stride);
            if (st != CUOPS_STATUS_SUCCESS)
                snprintf(prepack_problem, sizeof(prepack_problem), "cuops_w4_prepack: %s: %s",
                         cuops_status_string(st), cuops_last_error(env->h));
        }
        if (!prepack_problem[0] && cudaStreamSynchronize(env->stream) != cudaSuccess)
            snprintf(prepack_problem, sizeof(prepack_problem), "cuops_w4_prepack: %s",
                     cudaGetErrorString(cudaGetLastError()));
    }
    /* --interleave: each row times cuBLAS alongside itself instead */
    if (!skip && !env->opt.interleave) {
        bench_timing_t t = bench_time(env, enqueue_w4_cublas, &c, sets);
        if (t.ok) {
            baseline_us = t.median_us;
            baseline_power = t.power;
        } else {
            fprintf(stderr, "  cublas timing failed: %s\n", t.err);
        }
    }

    /* decode rows: a copy of what the fused kernel must move at least (the
     * int4 weight and its metadata, x, y), the ceiling at the row's size */
    const double fused_bytes = weight_bytes + (double)(m * k + m * n) * (double)bv_dtype_size(act);
    const double copy_same_us = (skip || !memory_bound) ? NAN : bench_copy_same_bytes(env, fused_bytes);
    if (want_unfused) variants[num_variants++] = "dequant+gemm";
    for (int v = 0; v < num_variants; v++) {
        const int unfused = strcmp(variants[v], "dequant+gemm") == 0;
        bench_row_t *row = bench_row_new(env, "w4a16", variants[v], act);
        row->copy_same_us = copy_same_us;
        row->baseline_power = baseline_power;
        row->shape_kind = 3;
        row->m = m; row->n = n; row->k = k; row->group = QUANT_GROUP;
        row->suite = tags;
        row->baseline = "cublas";
        row->baseline_us = baseline_us;
        if (skip) {
            bench_row_fail(row, BENCH_ROW_SKIPPED, "%s", skip);
            bench_row_done(env, row);
            continue;
        }
        if (!unfused && prepack_problem[0]) {
            bench_row_fail(row, strstr(prepack_problem, "NOT_SUPPORTED") ? BENCH_ROW_UNSUPPORTED
                                                                        : BENCH_ROW_ERROR,
                           "%s", prepack_problem);
            bench_row_done(env, row);
            continue;
        }
        c.opts = bench_cuops_options(unfused ? "auto" : variants[v]);
        bench_enqueue_fn fn = unfused ? enqueue_dequant_then_gemm : enqueue_w4a16;
        bench_poison(env, c.y, act, (size_t)(m * n));
        if (!bench_row_first_call(env, row, fn, &c)) continue;
        if (unfused) {
            /* both kernels' names: the handle keeps only the last */
            const char *gemm_kernel = cuops_last_kernel(env->h);
            char gemm_name[64];
            snprintf(gemm_name, sizeof(gemm_name), "%s", gemm_kernel);
            cuops_dequant_int4(env->h, n, k, QUANT_GROUP, c.q, c.ldq, c.s, act, c.z, c.dense, k, act);
            cudaStreamSynchronize(env->stream);
            snprintf(row->kernel, sizeof(row->kernel), "%s+%s", cuops_last_kernel(env->h),
                     gemm_name);
        }
        void *y_host = bench_to_host(c.y, (size_t)(m * n) * es);
        bv_result_t r;
        if (y_host) {
            /* DESIGN's fp16/bf16 GEMM bound, 1e-2 norm-wise (2e-2 until P214; the
             * largest error of the 8879 valid w4a16 rows in bench/results is
             * 2.7e-3), each row within 2e-2 */
            r = bv_check_rel(y_host, n, act, y_ref_host, n, act, m, n, 1e-2, 2e-2);
        } else {
            bv_result_init(&r);
            r.pass = 0;
            r.max_rel_err = NAN;
            bv_note(&r, "copying y to the host failed");
        }
        free(y_host);
        row->valid = r.pass;
        row->max_rel_err = r.max_rel_err;
        if (!r.pass) {
            fprintf(stderr, "  w4a16 %s %s m=%lld n=%lld k=%lld INVALID: %s\n", variants[v],
                    bv_dtype_name(act), (long long)m, (long long)n, (long long)k, r.msg);
            bench_row_fail(row, BENCH_ROW_INVALID, "%.150s", r.msg);
            if (!env->opt.time_invalid) {
                bench_row_done(env, row);
                continue;
            }
        }
        bench_timing_t t = bench_time_row(env, row, fn, &c, enqueue_w4_cublas, &c, sets);
        if (!t.ok) {
            bench_row_fail(row, BENCH_ROW_ERROR, "timing: %s", t.err);
            row->valid = r.pass;
        } else {
            row->us = t.median_us;
            row->power = t.power;
            row->tflops = 2.0 * (double)m * (double)n * (double)k / (t.median_us * 1e6);
            /* DESIGN's bytes: every input read once and the output written
             * once (int4 weight and metadata, x, y; before the P212 review
             * the weight and metadata only) */
            row->gbps = fused_bytes / (t.median_us * 1e3);
            row->pct_of_ceiling = memory_bound ? 100.0 * row->gbps / env->copy_gbps
                                               : 100.0 * row->tflops / env->vendor_gemm_tflops;
        }
        bench_row_done(env, row);
    }
    free(y_ref_host);
    free_host_weight(&w);
    cudaFree(c.q); cudaFree(c.s); cudaFree(c.z); cudaFree(c.packed);
    cudaFree(c.dense); cudaFree(c.x); cudaFree(c.y); cudaFree(y_ref);
    (void)cudaGetLastError();
}

void bench_run_w4a16(bench_env_t *env)
{
    static const cuops_dtype_t defaults[1] = {CUOPS_DTYPE_F16};
    static const cuops_dtype_t types[2] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
    for (int t = 0; t < 2; t++) {
        if (!bench_dtype_wanted(env, types[t], defaults, 1)) continue;
        if (env->opt.num_shapes) {
            for (int s = 0; s < env->opt.num_shapes; s++) {
                const bench_shape_t *sh = &env->opt.shapes[s];
                if (sh->dims == 3) run_w4a16_shape(env, types[t], sh->d[0], sh->d[1], sh->d[2], 0);
            }
            continue;
        }
        if (env->opt.quick) {
            run_w4a16_shape(env, types[t], 1, 4096, 4096, BENCH_SUITE_QUICK | BENCH_SUITE_DECODE);
            run_w4a16_shape(env, types[t], 16, 4096, 4096, BENCH_SUITE_QUICK | BENCH_SUITE_DECODE);
            run_w4a16_shape(env, types[t], 33, 1000, 1536, BENCH_SUITE_QUICK);
            continue;
        }
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 4; j++) {
                unsigned tags = w4_m[i] <= 64 ? BENCH_SUITE_DECODE : BENCH_SUITE_LLM;
                if (w4_m[i] == 4096 && w4_nk[j][0] == 28672) tags |= BENCH_SUITE_BIG;
                if (bench_suite_wanted(env, tags))
                    run_w4a16_shape(env, types[t], w4_m[i], w4_nk[j][0], w4_nk[j][1], tags);
            }
    }
}
