/*
 * bench_scan.cu - cuops-bench rows for cuops_scan (inclusive sum) and
 * cuops_reduce (sum) at n = 2^16 .. 2^30, i32 and f32 (i64, f64 with
 * --dtype), against CUB's DeviceScan::InclusiveSum / DeviceReduce::Sum on
 * the same buffers (CUB's temp storage allocated once, outside the timing).
 * Both ops move every byte once, so bytes = 2n*elem (scan) and n*elem
 * (reduce) and the ceiling is the copy bandwidth; small n rotates over
 * buffer sets that together exceed 3x L2.
 * Validation: the CPU backend (double accumulation) on the same input;
 * integers exact, floats within 1e-5 * sum|x| (f64: 1e-12); every output up
 * to 2^24 elements, sampled 4096-element chunks beyond.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cub/cub.cuh>

#include "bench.h"

#define SCAN_FULL_CHECK ((int64_t)1 << 24)
#define SCAN_CHUNKS 32
#define SCAN_CHUNK 4096

static size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

/* ------------------------------------------------------------------------ */
/* CUB, one instantiation per element type                                  */
/* ------------------------------------------------------------------------ */

template <typename T>
static cudaError_t cub_scan_t(void *temp, size_t *temp_bytes, const void *in, void *out, int64_t n,
                              cudaStream_t stream)
{
    return cub::DeviceScan::InclusiveSum(temp, *temp_bytes, (const T *)in, (T *)out, n, stream);
}

template <typename T>
static cudaError_t cub_reduce_t(void *temp, size_t *temp_bytes, const void *in, void *out,
                                int64_t n, cudaStream_t stream)
{
    return cub::DeviceReduce::Sum(temp, *temp_bytes, (const T *)in, (T *)out, n, stream);
}

static cudaError_t cub_call(int reduce, cuops_dtype_t t, void *temp, size_t *temp_bytes,
                            const void *in, void *out, int64_t n, cudaStream_t stream)
{
    switch (t) {
    case CUOPS_DTYPE_I32:
        return reduce ? cub_reduce_t<int32_t>(temp, temp_bytes, in, out, n, stream)
                      : cub_scan_t<int32_t>(temp, temp_bytes, in, out, n, stream);
    case CUOPS_DTYPE_I64:
        return reduce ? cub_reduce_t<int64_t>(temp, temp_bytes, in, out, n, stream)
                      : cub_scan_t<int64_t>(temp, temp_bytes, in, out, n, stream);
    case CUOPS_DTYPE_F32:
        return reduce ? cub_reduce_t<float>(temp, temp_bytes, in, out, n, stream)
                      : cub_scan_t<float>(temp, temp_bytes, in, out, n, stream);
    case CUOPS_DTYPE_F64:
        return reduce ? cub_reduce_t<double>(temp, temp_bytes, in, out, n, stream)
                      : cub_scan_t<double>(temp, temp_bytes, in, out, n, stream);
    default: return cudaErrorInvalidValue;
    }
}

/* ------------------------------------------------------------------------ */
/* Enqueue                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct scan_ctx {
    bench_env_t *env;
    int reduce;
    cuops_dtype_t type;
    int64_t n;
    char *in, *out;
    size_t in_stride, out_stride;
    void *cub_temp;
    size_t cub_temp_bytes;
    cuops_options_t opts;
} scan_ctx_t;

static int enqueue_cuops_scan(void *p, int set, char *err, size_t len)
{
    scan_ctx_t *c = (scan_ctx_t *)p;
    const void *in = c->in + set * c->in_stride;
    void *out = c->out + set * c->out_stride;
    cuops_status_t st = c->reduce
                            ? cuops_reduce_ex(c->env->h, CUOPS_REDUCE_SUM, c->type, c->n, in, out,
                                              &c->opts)
                            : cuops_scan_ex(c->env->h, CUOPS_REDUCE_SUM, 0, c->type, c->n, in, out,
                                            &c->opts);
    if (st != CUOPS_STATUS_SUCCESS) {
        snprintf(err, len, "%s: %s: %s", c->reduce ? "cuops_reduce_ex" : "cuops_scan_ex",
                 cuops_status_string(st), cuops_last_error(c->env->h));
        return (int)st;
    }
    return 0;
}

static int enqueue_cub(void *p, int set, char *err, size_t len)
{
    scan_ctx_t *c = (scan_ctx_t *)p;
    size_t bytes = c->cub_temp_bytes;
    cudaError_t e = cub_call(c->reduce, c->type, c->cub_temp, &bytes, c->in + set * c->in_stride,
                             c->out + set * c->out_stride, c->n, c->env->stream);
    if (e != cudaSuccess) {
        snprintf(err, len, "CUB: %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Validation                                                               */
/* ------------------------------------------------------------------------ */

/* The reference for the whole input: the CPU backend, or the bench's own
 * loop when the CPU backend cannot serve the call. */
static void scan_reference(bench_env_t *env, int reduce, cuops_dtype_t t, int64_t n,
                           const void *in, void *ref)
{
    static int warned = 0;
    cuops_status_t st = reduce ? cuops_reduce(env->hc, CUOPS_REDUCE_SUM, t, n, in, ref)
                               : cuops_scan(env->hc, CUOPS_REDUCE_SUM, 0, t, n, in, ref);
    if (st == CUOPS_STATUS_SUCCESS) return;
    if (!warned) {
        warned = 1;
        fprintf(stderr, "  CPU backend %s: %s (%s); using the bench's own loop\n",
                reduce ? "reduce" : "scan", cuops_status_string(st), cuops_last_error(env->hc));
    }
    if (reduce) bv_reduce_ref(in, ref, t, n, NULL);
    else bv_scan_ref(in, ref, t, n);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* got (device, set 0) against ref (host, whole output) with in (host). */
static bv_result_t check_scan(bench_env_t *env, const scan_ctx_t *c, const void *in_host,
                              const void *ref_host)
{
    bv_result_t total;
    bv_result_init(&total);
    const size_t es = bv_dtype_size(c->type);
    /* float inputs are whole numbers (above): exact sums, no tolerance */
    const double tol = 0.0;
    if (c->reduce) {
        char got[8];
        double abs_sum = 0.0;
        for (int64_t i = 0; i < c->n && !bv_dtype_is_int(c->type); i++)
            abs_sum += fabs(bv_load(in_host, c->type, i));
        if (cudaMemcpy(got, c->out, es, cudaMemcpyDeviceToHost) != cudaSuccess) {
            total.pass = 0;
            total.max_rel_err = NAN;
            bv_note(&total, "copy failed");
            return total;
        }
        return bv_check_scalar(got, ref_host, c->type, abs_sum, tol);
    }
    if (c->n <= SCAN_FULL_CHECK) {
        void *got = bench_to_host(c->out, (size_t)c->n * es);
        if (!got) {
            total.pass = 0;
            total.max_rel_err = NAN;
            bv_note(&total, "copy failed");
            return total;
        }
        total = bv_check_scan(got, ref_host, in_host, c->type, c->n, 0, 0.0, tol);
        free(got);
        return total;
    }
    /* sampled chunks: the first, the last, and random ones, in order so
     * the sum of |x| before each comes from one pass */
    int64_t starts[SCAN_CHUNKS];
    uint64_t rng = env->opt.seed ^ 0x5CA7ull;
    starts[0] = 0;
    starts[1] = c->n - SCAN_CHUNK;
    for (int i = 2; i < SCAN_CHUNKS; i++)
        starts[i] = (int64_t)(bv_rand_next(&rng) % (uint64_t)(c->n - SCAN_CHUNK + 1));
    qsort(starts, SCAN_CHUNKS, sizeof(int64_t), cmp_i64);
    double abs_before = 0.0;
    int64_t pos = 0;
    void *got = malloc((size_t)SCAN_CHUNK * es);
    if (!got) {
        total.pass = 0;
        total.max_rel_err = NAN;
        return total;
    }
    for (int i = 0; i < SCAN_CHUNKS; i++) {
        if (!bv_dtype_is_int(c->type))
            for (; pos < starts[i]; pos++) abs_before += fabs(bv_load(in_host, c->type, pos));
        if (cudaMemcpy(got, c->out + (size_t)starts[i] * es, (size_t)SCAN_CHUNK * es,
                       cudaMemcpyDeviceToHost) != cudaSuccess) {
            total.pass = 0;
            bv_note(&total, "copy failed");
            break;
        }
        bv_result_t r = bv_check_scan(got, (const char *)ref_host + (size_t)starts[i] * es,
                                      (const char *)in_host + (size_t)starts[i] * es, c->type,
                                      SCAN_CHUNK, starts[i], abs_before, tol);
        if (!(r.max_rel_err <= total.max_rel_err)) total.max_rel_err = r.max_rel_err;
        if (!r.pass) {
            total.pass = 0;
            total.bad_count += r.bad_count;
            bv_note(&total, "%s; ", r.msg);
        }
    }
    free(got);
    return total;
}

/* ------------------------------------------------------------------------ */
/* Rows                                                                     */
/* ------------------------------------------------------------------------ */

static void run_scan_size(bench_env_t *env, int reduce, cuops_dtype_t type, int64_t n,
                          unsigned tags)
{
    const char *op = reduce ? "reduce" : "scan";
    const char *variants[BENCH_MAX_ITEMS];
    int num_variants = bench_variants(env, op, variants, BENCH_MAX_ITEMS);
    if (num_variants == 0) return;

    scan_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.env = env;
    c.reduce = reduce;
    c.type = type;
    c.n = n;
    const size_t es = bv_dtype_size(type);
    /* c.in and c.out point shift_bytes / out_shift_bytes into their allocations
       (CUOPS_BENCH_SCAN_SHIFT, CUOPS_BENCH_SCAN_OUT_SHIFT): every use below, cuops's, CUB's
       and the checks', sees the shifted buffers */
    const int out_shift = env->opt.scan_out_shift >= 0 ? env->opt.scan_out_shift : env->opt.scan_shift;
    const size_t shift_bytes = (size_t)env->opt.scan_shift * es;
    const size_t out_shift_bytes = (size_t)out_shift * es;
    char *in_base = NULL, *out_base = NULL;
    /* n past the API's bound is a row the op refuses; its sizes would wrap */
    const int n_ok = n >= 0 && n <= ((int64_t)1 << 40);
    const size_t n_bytes = n_ok ? (size_t)n * es : 0;
    c.in_stride = round_up(n_bytes + shift_bytes, 256);
    c.out_stride = round_up((reduce ? es : n_bytes) + out_shift_bytes, 256);
    const int sets = bench_rotation_sets(env, c.in_stride + c.out_stride, 4096);
    const double bytes_moved = (reduce ? 1.0 : 2.0) * (double)n * (double)es;

    fprintf(stderr, "%s %s n=%lld (%d buffer set%s)\n", op, bv_dtype_name(type), (long long)n,
            sets, sets > 1 ? "s" : "");
    const char *skip = NULL;
    void *in_host = NULL, *ref_host = NULL;
    double baseline_us = NAN;
    /* the host keeps the input and the reference: 2 n elements */
    if (!n_ok)
        skip = "n above 2^40, the largest cuops_scan/cuops_reduce take";
    else if (!bench_fits((size_t)sets * (c.in_stride + c.out_stride) + ((size_t)64 << 20)))
        skip = "not enough device memory";
    else if (cudaMalloc((void **)&in_base, (size_t)sets * c.in_stride) != cudaSuccess ||
             cudaMalloc((void **)&out_base, (size_t)sets * c.out_stride) != cudaSuccess)
        skip = "device allocation failed";
    else {
        int bad;
        c.in = in_base + shift_bytes;
        c.out = out_base + out_shift_bytes;
        if (type == CUOPS_DTYPE_I32)
            bad = bench_fill(env, in_base, type, (size_t)sets * c.in_stride / es, -1000.0, 1001.0);
        else if (type == CUOPS_DTYPE_I64) /* large enough that 32-bit accumulation would wrap */
            bad = bench_fill(env, in_base, type, (size_t)sets * c.in_stride / es, -1099511627776.0,
                             1099511627776.0);
        else /* whole numbers in [-8, 8]: every partial sum of up to 2^30 of them is
              * exact in f32 (a random walk stays far below 2^24), so the check
              * below can ask for the reference's bits and a lost or repeated tile
              * cannot hide inside a rounding tolerance */
            bad = bench_fill_integral(env, in_base, type, (size_t)sets * c.in_stride / es, -8.0, 9.0);
        if (bad) skip = "filling the inputs failed";
    }
    if (!skip) {
        in_host = bench_to_host(c.in, (size_t)n * es);
        ref_host = malloc(reduce ? es : (size_t)n * es);
        if (!in_host || !ref_host) skip = "host memory for the reference is short";
        else scan_reference(env, reduce, type, n, in_host, ref_host);
    }
    if (!skip) {
        cudaError_t e = cub_call(reduce, type, NULL, &c.cub_temp_bytes, c.in, c.out, n,
                                 env->stream);
        if (e == cudaSuccess && cudaMalloc(&c.cub_temp, c.cub_temp_bytes ? c.cub_temp_bytes : 1) ==
                                    cudaSuccess) {
            /* the baseline is checked as cuops is: a speed-up over a wrong
             * result would mean nothing (no baseline then) */
            char err[256] = "";
            bench_poison(env, c.out, type, reduce ? 1 : (size_t)n);
            int rc = enqueue_cub(&c, 0, err, sizeof(err));
            cudaError_t ce = rc ? cudaSuccess : cudaStreamSynchronize(env->stream);
            bv_result_t r;
            bv_result_init(&r);
            if (!rc && ce == cudaSuccess) r = check_scan(env, &c, in_host, ref_host);
            if (rc || ce != cudaSuccess || !r.pass) {
                fprintf(stderr, "  cub %s n=%lld failed its check: %s\n", bv_dtype_name(type),
                        (long long)n, rc ? err : ce != cudaSuccess ? cudaGetErrorString(ce) : r.msg);
                (void)cudaGetLastError();
            } else {
                bench_timing_t t = bench_time(env, enqueue_cub, &c, sets);
                if (t.ok) baseline_us = t.median_us;
                else fprintf(stderr, "  cub timing failed: %s\n", t.err);
            }
        } else {
            fprintf(stderr, "  cub setup failed: %s\n", cudaGetErrorString(e));
            (void)cudaGetLastError();
        }
    }

    /* scan only: a reduce reads n and writes nothing, which a copy does not model */
    const double copy_same_us = (skip || reduce) ? NAN : bench_copy_same_bytes(env, bytes_moved);
    for (int v = 0; v < num_variants; v++) {
        bench_row_t *row = bench_row_new(env, op, variants[v], type);
        row->copy_same_us = copy_same_us;
        row->shape_kind = 2;
        row->n = n;
        row->suite = tags;
        row->baseline = "cub";
        row->baseline_us = baseline_us;
        if (shift_bytes && out_shift == env->opt.scan_shift)
            snprintf(row->note, sizeof(row->note), "input and output %d elements past a 256-byte "
                     "boundary", env->opt.scan_shift);
        else if (shift_bytes || out_shift_bytes)
            snprintf(row->note, sizeof(row->note), "input %d, output %d elements past a 256-byte "
                     "boundary", env->opt.scan_shift, out_shift);
        if (skip) {
            bench_row_fail(row, BENCH_ROW_SKIPPED, "%s", skip);
            bench_row_done(env, row);
            continue;
        }
        c.opts = bench_cuops_options(variants[v]);
        bench_poison(env, c.out, type, reduce ? 1 : (size_t)n);
        if (!bench_row_first_call(env, row, enqueue_cuops_scan, &c)) continue;
        bv_result_t r = check_scan(env, &c, in_host, ref_host);
        row->valid = r.pass;
        row->max_rel_err = r.max_rel_err;
        if (!r.pass) {
            fprintf(stderr, "  %s %s %s n=%lld INVALID: %s\n", op, variants[v],
                    bv_dtype_name(type), (long long)n, r.msg);
            bench_row_fail(row, BENCH_ROW_INVALID, "%.150s", r.msg);
            bench_row_done(env, row);
            continue;
        }
        bench_timing_t t = bench_time(env, enqueue_cuops_scan, &c, sets);
        bench_row_stream_numbers(env, row, &t, bytes_moved);
        bench_row_done(env, row);
    }
    free(in_host);
    free(ref_host);
    cudaFree(in_base);
    cudaFree(out_base);
    cudaFree(c.cub_temp);
    (void)cudaGetLastError();
}

void bench_run_scan(bench_env_t *env, int reduce)
{
    static const cuops_dtype_t defaults[2] = {CUOPS_DTYPE_I32, CUOPS_DTYPE_F32};
    static const cuops_dtype_t types[4] = {CUOPS_DTYPE_I32, CUOPS_DTYPE_F32, CUOPS_DTYPE_I64,
                                           CUOPS_DTYPE_F64};
    static const struct { int64_t n; unsigned tags; } sizes[] = {
        {(int64_t)1 << 16, BENCH_SUITE_LLM | BENCH_SUITE_QUICK},
        {(int64_t)1 << 20, BENCH_SUITE_LLM | BENCH_SUITE_QUICK},
        {(int64_t)1 << 24, BENCH_SUITE_LLM},
        {(int64_t)1 << 26, BENCH_SUITE_LLM},
        {(int64_t)1 << 28, BENCH_SUITE_BIG},
        {(int64_t)1 << 30, BENCH_SUITE_BIG},
        {1000003, BENCH_SUITE_QUICK}, /* prime: a partial tile at the end */
    };
    for (int t = 0; t < 4; t++) {
        if (!bench_dtype_wanted(env, types[t], defaults, 2)) continue;
        if (env->opt.num_shapes) {
            for (int s = 0; s < env->opt.num_shapes; s++)
                if (env->opt.shapes[s].dims == 1)
                    run_scan_size(env, reduce, types[t], env->opt.shapes[s].d[0], 0);
            continue;
        }
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
            if (bench_suite_wanted(env, sizes[i].tags))
                run_scan_size(env, reduce, types[t], sizes[i].n, sizes[i].tags);
    }
}
