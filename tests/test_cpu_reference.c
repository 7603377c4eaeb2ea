/*
 * test_cpu_reference.c - the CPU reference backend (the oracle of every GPU
 * test) checked against independent computations written here:
 *  - GEMM: a naive triple loop in double for all four transposes, every dtype
 *    combination, alpha/beta (beta == 0 over NaN-poisoned C), shapes 1..130
 *    with padded leading dimensions, and C*x == A*(B*x) on a 512^3 problem;
 *  - dequant: a separate nibble decode and the fp32 formula, bit for bit;
 *  - W4A16: prepack + GEMM against dequantize-then-dot in double;
 *  - scan and reduce: running results for every op, type, inclusive and
 *    exclusive, in place, with wrapping integer sums;
 *  - float16.h: exhaustive half and bf16 decoding/round trips, and
 *    round-to-nearest-even on random floats and on the tie cases.
 * Fresh random data every run (the seed is printed; CUOPS_TEST_SEED replays).
 *
 *   make build/tests/test_cpu_reference && ./build/tests/test_cpu_reference
 */
#include <inttypes.h>

#include "test_util.h"

#define F16 CUOPS_DTYPE_F16
#define BF16 CUOPS_DTYPE_BF16
#define F32 CUOPS_DTYPE_F32
#define F64 CUOPS_DTYPE_F64
#define I32 CUOPS_DTYPE_I32
#define I64 CUOPS_DTYPE_I64

static cuops_handle_t cpu;

static size_t elem_size(cuops_dtype_t t)
{
    switch (t) {
    case F16: case BF16: return 2;
    case F32: case I32: return 4;
    case F64: case I64: return 8;
    default: return 1;
    }
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

/* Relative size of one rounding step of the output type (an ulp at 1.0), with
 * room for the double -> float -> 16-bit double rounding. */
static double type_eps(cuops_dtype_t t)
{
    return t == F16 ? 1.0 / 1024 : t == BF16 ? 1.0 / 128 : 1.0 / 8388608;
}

/* The value a float result rounds to in type t (float16.h is tested below). */
/* v rounded once to t (f16/bf16 through a float rounded to odd). */
static double round_to(cuops_dtype_t t, double v)
{
    if (t == F16) return cuops_half_to_float(cuops_double_to_half(v));
    if (t == BF16) return cuops_bf16_to_float(cuops_double_to_bf16(v));
    return (float)v;
}

/* ------------------------------------------------------------------------ */
/* GEMM                                                                     */
/* ------------------------------------------------------------------------ */

static int gemm_case(cuops_op_t ta, cuops_op_t tb, int64_t m, int64_t n, int64_t k,
                     cuops_dtype_t ab, cuops_dtype_t ct, float alpha, float beta)
{
    int64_t a_rows = ta == CUOPS_OP_N ? m : k, a_cols = ta == CUOPS_OP_N ? k : m;
    int64_t b_rows = tb == CUOPS_OP_N ? k : n, b_cols = tb == CUOPS_OP_N ? n : k;
    int64_t lda = a_cols + (int64_t)(tu_rand_u64() % 4);
    int64_t ldb = b_cols + (int64_t)(tu_rand_u64() % 4);
    int64_t ldc = n + (int64_t)(tu_rand_u64() % 4);
    size_t a_n = (size_t)(a_rows * lda), b_n = (size_t)(b_rows * ldb), c_n = (size_t)(m * ldc);
    void *a = xmalloc(a_n * elem_size(ab)), *b = xmalloc(b_n * elem_size(ab));
    void *c = xmalloc(c_n * elem_size(ct)), *c0 = xmalloc(c_n * elem_size(ct));
    tu_fill_float(a, ab, a_n, -1, 1);
    tu_fill_float(b, ab, b_n, -1, 1);
    if (beta == 0.0f)
        tu_poison(c, ct, c_n); /* must not be read */
    else
        tu_fill_float(c, ct, c_n, -2, 2);
    memcpy(c0, c, c_n * elem_size(ct));

    cuops_status_t st = cuops_gemm(cpu, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ab, ct);
    int bad = 0;
    if (st != CUOPS_STATUS_SUCCESS) {
        CHECK(0, "gemm %s: %s", cuops_status_string(st), cuops_last_error(cpu));
        bad = 1;
    }
    double eps = type_eps(ct);
    for (int64_t i = 0; i < m && !bad; i++)
        for (int64_t j = 0; j < ldc && !bad; j++) {
            size_t ci = (size_t)(i * ldc + j);
            if (j >= n) { /* padding between rows: untouched, bit for bit */
                if (memcmp((char *)c + ci * elem_size(ct), (char *)c0 + ci * elem_size(ct),
                           elem_size(ct)) != 0) {
                    CHECK(0, "gemm wrote padding C[%" PRId64 ",%" PRId64 "]", i, j);
                    bad = 1;
                }
                continue;
            }
            double acc = 0.0, mag = 0.0;
            for (int64_t p = 0; p < k; p++) {
                double av = tu_get(a, ab, (size_t)(ta == CUOPS_OP_N ? i * lda + p : p * lda + i));
                double bv = tu_get(b, ab, (size_t)(tb == CUOPS_OP_N ? p * ldb + j : j * ldb + p));
                acc += av * bv;
                mag += fabs(av * bv);
            }
            double want = (double)alpha * acc;
            if (beta != 0.0f) want += (double)beta * tu_get(c0, ct, ci);
            double got = tu_get(c, ct, ci);
            /* The oracle's contract: products and the p = 0..k-1 sum in double,
             * alpha*acc + beta*C in double, one rounding to float, then RNE to
             * c_type. Summed in the same order here, so the result must match
             * bit for bit; the tolerance only frames the message. */
            double tol = fabs(want) * eps + 1e-12 * (fabs(alpha) * mag + 1) +
                         (ct == F16 ? 1.0 / 16777216 : 1e-30);
            if (!(got == round_to(ct, want)) || !(fabs(got - want) <= tol)) {
                CHECK(0,
                      "gemm %s%s m=%" PRId64 " n=%" PRId64 " k=%" PRId64
                      " ab=%d c=%d alpha=%g beta=%g: C[%" PRId64 ",%" PRId64 "] = %.9g, want %.9g",
                      ta ? "T" : "N", tb ? "T" : "N", m, n, k, (int)ab, (int)ct, (double)alpha,
                      (double)beta, i, j, got, want);
                bad = 1;
            }
        }
    free(a);
    free(b);
    free(c);
    free(c0);
    return !bad;
}

static void test_gemm_small(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1},   {1, 7, 17},   {7, 1, 65},  {17, 65, 7},
                                        {65, 17, 65}, {7, 17, 1},  {33, 29, 130}, {2, 3, 4}};
    static const cuops_dtype_t combos[][2] = {{F16, F16},  {F16, BF16},  {F16, F32}, {BF16, F16},
                                              {BF16, BF16}, {BF16, F32}, {F32, F32}};
    static const float scalars[][2] = {{1.0f, 0.0f}, {0.5f, -1.25f}, {-2.0f, 0.75f}};
    int cases = 0, good = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t d = 0; d < sizeof combos / sizeof combos[0]; d++)
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++)
                    for (size_t ab = 0; ab < 3; ab++) {
                        cases++;
                        good += gemm_case((cuops_op_t)ta, (cuops_op_t)tb, shapes[s][0],
                                          shapes[s][1], shapes[s][2], combos[d][0], combos[d][1],
                                          scalars[ab][0], scalars[ab][1]);
                    }
    CHECK(good == cases, "gemm: %d of %d cases correct", good, cases);
    CHECK(strcmp(cuops_last_kernel(cpu), "cpu_reference") == 0, "last_kernel '%s'",
          cuops_last_kernel(cpu));
}

/* C = A * B^T on 512^3 (bf16 in, f32 out), checked as C*x against A*(B^T*x)
 * for a random x: O(mk + nk + mn) work that sees any wrong element of C. */
static void test_gemm_random_vector(void)
{
    const int64_t m = 512, n = 512, k = 512;
    uint16_t *a = xmalloc((size_t)(m * k) * 2), *b = xmalloc((size_t)(n * k) * 2);
    float *c = xmalloc((size_t)(m * n) * 4);
    double *x = xmalloc((size_t)n * 8), *bx = xmalloc((size_t)k * 8);
    tu_fill_float(a, BF16, (size_t)(m * k), -1, 1);
    tu_fill_float(b, BF16, (size_t)(n * k), -1, 1);
    tu_poison(c, F32, (size_t)(m * n));
    for (int64_t j = 0; j < n; j++) x[j] = tu_rand_uniform(-1, 1);

    clock_t t0 = clock();
    CHECK_STATUS(cuops_gemm(cpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n,
                            BF16, F32),
                 CUOPS_STATUS_SUCCESS);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    fprintf(stderr, "cpu gemm 512^3 (bf16 -> f32, N/T): %.3f s\n", secs);

    /* bx = B^T x  (B stored [n,k]) */
    for (int64_t p = 0; p < k; p++) bx[p] = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t p = 0; p < k; p++) bx[p] += tu_get(b, BF16, (size_t)(j * k + p)) * x[j];
    double err2 = 0, ref2 = 0;
    for (int64_t i = 0; i < m; i++) {
        double cx = 0, abx = 0;
        for (int64_t j = 0; j < n; j++) cx += (double)c[i * n + j] * x[j];
        for (int64_t p = 0; p < k; p++) abx += tu_get(a, BF16, (size_t)(i * k + p)) * bx[p];
        err2 += (cx - abx) * (cx - abx);
        ref2 += abx * abx;
    }
    double rel = sqrt(err2 / ref2);
    CHECK(rel <= 1e-6, "C*x vs A*(B^T*x): relative error %.3g", rel);
    free(a);
    free(b);
    free(c);
    free(x);
    free(bx);
}

/* ------------------------------------------------------------------------ */
/* int4 dequantization and W4A16                                            */
/* ------------------------------------------------------------------------ */

/* Independent decode: shift by 4 for odd columns, mask. */
static unsigned decode_nibble(const uint8_t *q, int64_t ldq, int64_t r, int64_t c)
{
    unsigned byte = q[r * ldq + c / 2];
    return (byte >> (4 * (unsigned)(c % 2))) & 15u;
}

static uint32_t output_bits(cuops_dtype_t t, float w)
{
    if (t == F16) return cuops_float_to_half(w);
    if (t == BF16) return cuops_float_to_bf16(w);
    return cuops_f32_bits(w);
}

static uint32_t stored_bits(const void *p, cuops_dtype_t t, size_t i)
{
    if (t == F32) {
        uint32_t u;
        memcpy(&u, (const char *)p + i * 4, 4);
        return u;
    }
    uint16_t u;
    memcpy(&u, (const char *)p + i * 2, 2);
    return u;
}

static int dequant_case(int64_t n, int64_t k, int64_t group, cuops_dtype_t st, cuops_dtype_t ot,
                        int with_zeros)
{
    int64_t packed_k = (k + 1) / 2, groups = (k + group - 1) / group;
    int64_t ldq = packed_k + (int64_t)(tu_rand_u64() % 3);
    int64_t ldo = k + (int64_t)(tu_rand_u64() % 3);
    uint8_t *q = xmalloc((size_t)(n * ldq));
    void *scales = xmalloc((size_t)(n * groups) * elem_size(st));
    uint8_t *zeros = with_zeros ? xmalloc((size_t)(n * groups)) : NULL;
    size_t out_n = (size_t)(n * ldo);
    void *out = xmalloc(out_n * elem_size(ot)), *out0 = xmalloc(out_n * elem_size(ot));
    for (int64_t i = 0; i < n * ldq; i++) q[i] = (uint8_t)tu_rand_u64();
    tu_fill_float(scales, st, (size_t)(n * groups), -0.07, 0.07);
    for (int64_t i = 0; with_zeros && i < n * groups; i++) zeros[i] = (uint8_t)(tu_rand_u64() % 16);
    tu_poison(out, ot, out_n);
    memcpy(out0, out, out_n * elem_size(ot));

    cuops_status_t s = cuops_dequant_int4(cpu, n, k, group, q, ldq, scales, st, zeros, out, ldo, ot);
    int bad = 0;
    if (s != CUOPS_STATUS_SUCCESS) {
        CHECK(0, "dequant: %s (%s)", cuops_status_string(s), cuops_last_error(cpu));
        bad = 1;
    }
    for (int64_t r = 0; r < n && !bad; r++)
        for (int64_t c = 0; c < ldo && !bad; c++) {
            size_t oi = (size_t)(r * ldo + c);
            uint32_t want;
            if (c < k) {
                int64_t g = r * groups + c / group;
                float scale = (float)tu_get(scales, st, (size_t)g);
                float zero = with_zeros ? (float)zeros[g] : 8.0f;
                float q_minus_z = (float)decode_nibble(q, ldq, r, c) - zero;
                want = output_bits(ot, q_minus_z * scale);
            } else {
                want = stored_bits(out0, ot, oi); /* padding keeps its poison */
            }
            uint32_t got = stored_bits(out, ot, oi);
            if (got != want) {
                CHECK(0,
                      "dequant n=%" PRId64 " k=%" PRId64 " g=%" PRId64
                      " scale=%d out=%d zeros=%d: [%" PRId64 ",%" PRId64 "] bits %#x, want %#x",
                      n, k, group, (int)st, (int)ot, with_zeros, r, c, got, want);
                bad = 1;
            }
        }
    free(q);
    free(scales);
    free(zeros);
    free(out);
    free(out0);
    return !bad;
}

static void test_dequant(void)
{
    static const int64_t shapes[][3] = {{1, 1, 2},    {1, 2, 2},    {3, 7, 2},    {5, 17, 4},
                                        {4, 65, 64},  {2, 129, 128}, {3, 130, 128}, {2, 256, 256},
                                        {1, 1537, 128}, {2, 10, 1000000}, {3, 33, 32}};
    static const cuops_dtype_t types[] = {F16, BF16, F32};
    int cases = 0, good = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int si = 0; si < 3; si++)
            for (int oi = 0; oi < 3; oi++)
                for (int z = 0; z < 2; z++) {
                    cases++;
                    good += dequant_case(shapes[s][0], shapes[s][1], shapes[s][2], types[si],
                                         types[oi], z);
                }
    CHECK(good == cases, "dequant: %d of %d cases bit-exact", good, cases);
}

static int w4a16_case(int64_t m, int64_t n, int64_t k, int64_t group, cuops_dtype_t act,
                      cuops_dtype_t st, int with_zeros)
{
    int64_t packed_k = (k + 1) / 2, groups = (k + group - 1) / group;
    int64_t ldq = packed_k + (int64_t)(tu_rand_u64() % 3);
    int64_t ldx = k + (int64_t)(tu_rand_u64() % 3), ldy = n + (int64_t)(tu_rand_u64() % 3);
    uint8_t *q = xmalloc((size_t)(n * ldq));
    void *scales = xmalloc((size_t)(n * groups) * elem_size(st));
    uint8_t *zeros = with_zeros ? xmalloc((size_t)(n * groups)) : NULL;
    uint16_t *x = xmalloc((size_t)(m * ldx) * 2), *y = xmalloc((size_t)(m * ldy) * 2);
    for (int64_t i = 0; i < n * ldq; i++) q[i] = (uint8_t)tu_rand_u64();
    tu_fill_float(scales, st, (size_t)(n * groups), -0.07, 0.07);
    for (int64_t i = 0; with_zeros && i < n * groups; i++) zeros[i] = (uint8_t)(tu_rand_u64() % 16);
    tu_fill_float(x, act, (size_t)(m * ldx), -1, 1);
    tu_poison(y, act, (size_t)(m * ldy));

    size_t bytes = 0;
    int bad = 0;
    cuops_status_t s = cuops_w4_packed_size(cpu, n, k, group, act, &bytes);
    CHECK(s == CUOPS_STATUS_SUCCESS && bytes >= (size_t)(n * packed_k),
          "packed size: %s, %zu bytes", cuops_status_string(s), bytes);
    uint8_t *packed = xmalloc(bytes);
    memset(packed, 0xA5, bytes);
    s = cuops_w4_prepack(cpu, n, k, group, q, ldq, scales, st, zeros, act, packed);
    if (s != CUOPS_STATUS_SUCCESS) {
        CHECK(0, "prepack: %s (%s)", cuops_status_string(s), cuops_last_error(cpu));
        bad = 1;
    }
    s = cuops_gemm_w4a16(cpu, m, n, k, group, x, ldx, packed, y, ldy, act);
    if (!bad && s != CUOPS_STATUS_SUCCESS) {
        CHECK(0, "w4a16: %s (%s)", cuops_status_string(s), cuops_last_error(cpu));
        bad = 1;
    }
    double eps = type_eps(act);
    for (int64_t i = 0; i < m && !bad; i++)
        for (int64_t j = 0; j < ldy && !bad; j++) {
            double got = tu_get(y, act, (size_t)(i * ldy + j));
            if (j >= n) {
                if (!isnan(got)) {
                    CHECK(0, "w4a16 wrote padding y[%" PRId64 ",%" PRId64 "]", i, j);
                    bad = 1;
                }
                continue;
            }
            double want = 0, mag = 0;
            for (int64_t p = 0; p < k; p++) {
                int64_t g = j * groups + p / group;
                /* the scale as the GEMM's activation type holds it */
                float scale = (float)round_to(act, tu_get(scales, st, (size_t)g));
                float zero = with_zeros ? (float)zeros[g] : 8.0f;
                /* the weight in act_type, as dequantization to act_type gives it */
                float w = (float)round_to(act, ((float)decode_nibble(q, ldq, j, p) - zero) * scale);
                double xv = tu_get(x, act, (size_t)(i * ldx + p));
                want += xv * (double)w;
                mag += fabs(xv * (double)w);
            }
            /* same order of summation as the oracle: equal after rounding */
            double tol = fabs(want) * eps + 1e-12 * (mag + 1) + (act == F16 ? 1.0 / 16777216 : 1e-30);
            if (!(got == round_to(act, want)) || !(fabs(got - want) <= tol)) {
                CHECK(0,
                      "w4a16 m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " g=%" PRId64
                      " act=%d scale=%d zeros=%d: y[%" PRId64 ",%" PRId64 "] = %.7g, want %.7g",
                      m, n, k, group, (int)act, (int)st, with_zeros, i, j, got, want);
                bad = 1;
            }
        }
    free(q);
    free(scales);
    free(zeros);
    free(x);
    free(y);
    free(packed);
    return !bad;
}

static void test_w4a16(void)
{
    static const int64_t shapes[][4] = {{1, 1, 2, 2},    {3, 7, 17, 4},   {7, 17, 65, 64},
                                        {5, 33, 130, 128}, {2, 9, 257, 256}, {1, 4, 1, 2}};
    static const cuops_dtype_t acts[] = {F16, BF16};
    static const cuops_dtype_t scale_types[] = {F16, BF16, F32};
    int cases = 0, good = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ai = 0; ai < 2; ai++)
            for (int si = 0; si < 3; si++)
                for (int z = 0; z < 2; z++) {
                    cases++;
                    good += w4a16_case(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3],
                                       acts[ai], scale_types[si], z);
                }
    CHECK(good == cases, "w4a16: %d of %d cases correct", good, cases);
}

/* ------------------------------------------------------------------------ */
/* Scan and reduce                                                          */
/* ------------------------------------------------------------------------ */

/* Random input: full-range integers (so sums wrap), floats in [-1, 1). */
static void fill_scan_input(void *p, cuops_dtype_t t, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = tu_rand_u64();
        switch (t) {
        case I32: { uint32_t u = (uint32_t)r; memcpy((char *)p + i * 4, &u, 4); break; }
        case I64: memcpy((char *)p + i * 8, &r, 8); break;
        case F32: ((float *)p)[i] = (float)tu_rand_uniform(-1, 1); break;
        case F64: ((double *)p)[i] = tu_rand_uniform(-1, 1); break;
        default: break;
        }
    }
}

/* The expected results, element by element, as raw 64-bit patterns of the
 * element type: a running value kept per type without shared helpers. */
static void expected_scan(const void *in, cuops_dtype_t t, cuops_reduce_op_t op, int exclusive,
                          int64_t n, void *want)
{
    if (t == I32) {
        const int32_t *x = in;
        int32_t *w = want;
        uint32_t sum = 0;
        int32_t run = op == CUOPS_REDUCE_MIN ? INT32_MAX : INT32_MIN;
        for (int64_t i = 0; i < n; i++) {
            if (op == CUOPS_REDUCE_SUM) {
                uint32_t next = sum + (uint32_t)x[i];
                uint32_t shown = exclusive ? sum : next;
                memcpy(&w[i], &shown, 4);
                sum = next;
            } else {
                int32_t next = op == CUOPS_REDUCE_MIN ? (x[i] < run ? x[i] : run)
                                                      : (x[i] > run ? x[i] : run);
                w[i] = exclusive ? run : next;
                run = next;
            }
        }
    } else if (t == I64) {
        const int64_t *x = in;
        int64_t *w = want;
        uint64_t sum = 0;
        int64_t run = op == CUOPS_REDUCE_MIN ? INT64_MAX : INT64_MIN;
        for (int64_t i = 0; i < n; i++) {
            if (op == CUOPS_REDUCE_SUM) {
                uint64_t next = sum + (uint64_t)x[i];
                uint64_t shown = exclusive ? sum : next;
                memcpy(&w[i], &shown, 8);
                sum = next;
            } else {
                int64_t next = op == CUOPS_REDUCE_MIN ? (x[i] < run ? x[i] : run)
                                                      : (x[i] > run ? x[i] : run);
                w[i] = exclusive ? run : next;
                run = next;
            }
        }
    } else if (t == F32) {
        const float *x = in;
        float *w = want;
        double sum = 0;
        float run = op == CUOPS_REDUCE_MIN ? INFINITY : -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            if (op == CUOPS_REDUCE_SUM) {
                double next = sum + x[i];
                w[i] = (float)(exclusive ? sum : next);
                sum = next;
            } else {
                float next = op == CUOPS_REDUCE_MIN ? fminf(run, x[i]) : fmaxf(run, x[i]);
                w[i] = exclusive ? run : next;
                run = next;
            }
        }
    } else {
        const double *x = in;
        double *w = want;
        double sum = 0;
        double run = op == CUOPS_REDUCE_MIN ? INFINITY : -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            if (op == CUOPS_REDUCE_SUM) {
                double next = sum + x[i];
                w[i] = exclusive ? sum : next;
                sum = next;
            } else {
                double next = op == CUOPS_REDUCE_MIN ? fmin(run, x[i]) : fmax(run, x[i]);
                w[i] = exclusive ? run : next;
                run = next;
            }
        }
    }
}

static const char *op_label(cuops_reduce_op_t op)
{
    return op == CUOPS_REDUCE_SUM ? "sum" : op == CUOPS_REDUCE_MIN ? "min" : "max";
}

static void test_scan(void)
{
    static const cuops_dtype_t types[] = {I32, I64, F32, F64};
    static const int64_t sizes[] = {1, 31, 32, 33, 1000};
    static const int exclusives[] = {0, 1, 7};
    int cases = 0, good = 0;
    for (int ti = 0; ti < 4; ti++)
        for (int op = 0; op < 3; op++)
            for (int ei = 0; ei < 3; ei++)
                for (int si = 0; si < 5; si++)
                    for (int in_place = 0; in_place < 2; in_place++) {
                        cuops_dtype_t t = types[ti];
                        int64_t n = sizes[si];
                        size_t es = elem_size(t);
                        void *in = xmalloc((size_t)n * es), *out = xmalloc((size_t)(n + 1) * es);
                        void *want = xmalloc((size_t)n * es);
                        fill_scan_input(in, t, n);
                        memset(out, 0xA5, (size_t)(n + 1) * es);
                        expected_scan(in, t, (cuops_reduce_op_t)op, exclusives[ei] != 0, n, want);
                        if (in_place) memcpy(out, in, (size_t)n * es);
                        cuops_status_t st = cuops_scan(cpu, (cuops_reduce_op_t)op, exclusives[ei],
                                                       t, n, in_place ? out : in, out);
                        cases++;
                        int ok = st == CUOPS_STATUS_SUCCESS &&
                                 memcmp(out, want, (size_t)n * es) == 0;
                        unsigned char tail[8];
                        memset(tail, 0xA5, sizeof tail);
                        ok = ok && memcmp((char *)out + n * es, tail, es) == 0;
                        if (!ok)
                            CHECK(0, "scan %s type=%d exclusive=%d n=%" PRId64 " in_place=%d: %s",
                                  op_label((cuops_reduce_op_t)op), (int)t, exclusives[ei], n,
                                  in_place, cuops_status_string(st));
                        good += ok;
                        free(in);
                        free(out);
                        free(want);
                    }
    CHECK(good == cases, "scan: %d of %d cases exact", good, cases);

    /* wrapping and double accumulation, spelled out */
    int32_t w32[2] = {INT32_MAX, 1}, o32[2];
    CHECK_STATUS(cuops_scan(cpu, CUOPS_REDUCE_SUM, 0, I32, 2, w32, o32), CUOPS_STATUS_SUCCESS);
    CHECK(o32[1] == INT32_MIN, "i32 sum must wrap: %d", (int)o32[1]);
    float f[3] = {1e8f, 1.0f, -1e8f}, of[3];
    CHECK_STATUS(cuops_scan(cpu, CUOPS_REDUCE_SUM, 0, F32, 3, f, of), CUOPS_STATUS_SUCCESS);
    CHECK(of[2] == 1.0f, "f32 scan must accumulate in double: %g", (double)of[2]);
    CHECK_STATUS(cuops_scan(cpu, CUOPS_REDUCE_MAX, 1, F32, 3, f, of), CUOPS_STATUS_SUCCESS);
    CHECK(isinf(of[0]) && of[0] < 0 && of[1] == 1e8f && of[2] == 1e8f,
          "exclusive max: %g %g %g", (double)of[0], (double)of[1], (double)of[2]);
}

static void test_reduce(void)
{
    static const cuops_dtype_t types[] = {I32, I64, F32, F64};
    static const int64_t sizes[] = {0, 1, 31, 32, 33, 1000, 100000};
    int cases = 0, good = 0;
    for (int ti = 0; ti < 4; ti++)
        for (int op = 0; op < 3; op++)
            for (int si = 0; si < 7; si++) {
                cuops_dtype_t t = types[ti];
                int64_t n = sizes[si];
                size_t es = elem_size(t);
                void *in = xmalloc((size_t)n * es), *prefix = xmalloc((size_t)(n + 1) * es);
                unsigned char got[8], want[8];
                fill_scan_input(in, t, n);
                memset(got, 0xA5, sizeof got);
                /* an exclusive scan over n+1 elements ends with the reduction of n:
                 * reuse the scan reference with one extra element appended */
                void *ext = xmalloc((size_t)(n + 1) * es);
                memcpy(ext, in, (size_t)n * es);
                memset((char *)ext + n * es, 0, es);
                expected_scan(ext, t, (cuops_reduce_op_t)op, 1, n + 1, prefix);
                memcpy(want, (char *)prefix + n * es, es);
                cuops_status_t st = cuops_reduce(cpu, (cuops_reduce_op_t)op, t, n, in, got);
                cases++;
                int ok = st == CUOPS_STATUS_SUCCESS && memcmp(got, want, es) == 0;
                if (!ok)
                    CHECK(0, "reduce %s type=%d n=%" PRId64 ": %s", op_label((cuops_reduce_op_t)op),
                          (int)t, n, cuops_status_string(st));
                good += ok;
                free(in);
                free(prefix);
                free(ext);
            }
    CHECK(good == cases, "reduce: %d of %d cases exact", good, cases);

    int64_t w64[2] = {INT64_MAX, 1}, r64 = 0;
    CHECK_STATUS(cuops_reduce(cpu, CUOPS_REDUCE_SUM, I64, 2, w64, &r64), CUOPS_STATUS_SUCCESS);
    CHECK(r64 == INT64_MIN, "i64 sum must wrap: %lld", (long long)r64);
    float f[3] = {1e8f, 1.0f, -1e8f}, rf = 0;
    CHECK_STATUS(cuops_reduce(cpu, CUOPS_REDUCE_SUM, F32, 3, f, &rf), CUOPS_STATUS_SUCCESS);
    CHECK(rf == 1.0f, "f32 reduce must accumulate in double: %g", (double)rf);
    double d[4] = {3.5, -7.25, 2.0, -7.0}, rd = 0;
    CHECK_STATUS(cuops_reduce(cpu, CUOPS_REDUCE_MIN, F64, 4, d, &rd), CUOPS_STATUS_SUCCESS);
    CHECK(rd == -7.25, "f64 min: %g", rd);
    /* a buffer one element past an aligned base works; one that is not a
     * multiple of the element size is refused (as on the GPU, where it
     * would fault) and nothing is written */
    int32_t buf[9];
    unsigned char raw[4 * 9 + 1];
    int32_t vals[8] = {5, -3, 9, 1, -8, 4, 2, 7}, r32 = 0;
    memcpy(buf + 1, vals, sizeof vals);
    CHECK_STATUS(cuops_reduce(cpu, CUOPS_REDUCE_MAX, I32, 8, buf + 1, &r32), CUOPS_STATUS_SUCCESS);
    CHECK(r32 == 9, "i32 max one element past an aligned base: %d", (int)r32);
    memcpy(raw + 1, vals, sizeof vals);
    r32 = 12345;
    CHECK_STATUS(cuops_reduce(cpu, CUOPS_REDUCE_MAX, I32, 8, raw + 1, &r32), CUOPS_STATUS_INVALID_VALUE);
    CHECK(r32 == 12345, "a refused reduce wrote its output: %d", (int)r32);
}

/* ------------------------------------------------------------------------ */
/* float16.h                                                                */
/* ------------------------------------------------------------------------ */

/* binary16 decoded from its fields, independent of float16.h. */
static double half_value(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    double v;
    if (exp == 31) v = man ? NAN : INFINITY;
    else if (exp == 0) v = ldexp(man, -24);
    else v = ldexp(man + 1024, exp - 25);
    return sign ? -v : v;
}

static double bf16_value(uint16_t b)
{
    int sign = b >> 15, exp = (b >> 7) & 255, man = b & 127;
    double v;
    if (exp == 255) v = man ? NAN : INFINITY;
    else if (exp == 0) v = ldexp(man, -133);
    else v = ldexp(man + 128, exp - 134);
    return sign ? -v : v;
}

/* r is the correctly rounded (nearest, ties to even) 16-bit code of d when no
 * same-sign neighbour code is closer, and an equally close one is odd. */
static int is_rne_d(double d, uint16_t r, double (*value)(uint16_t), uint16_t inf_code)
{
    uint16_t sign = r & 0x8000u, mag = r & 0x7fffu;
    if (mag >= inf_code) return 0; /* callers pass finite-range inputs */
    double dr = fabs(d - value(r));
    for (int delta = -1; delta <= 1; delta += 2) {
        int nb = (int)mag + delta;
        if (nb < 0 || nb >= inf_code) continue; /* none below 0 or past the largest finite code */
        double dn = fabs(d - value((uint16_t)(sign | nb)));
        if (dn < dr) return 0;
        if (dn == dr && (mag & 1u)) return 0;
    }
    return 1;
}

/* The same for a float (exact as a double). */
static int is_rne(float f, uint16_t r, double (*value)(uint16_t), uint16_t inf_code)
{
    return is_rne_d((double)f, r, value, inf_code);
}

/* cuops_double_to_half / _bf16 against the definition, on doubles at,
 * just past and between the midpoints of neighbouring codes (where rounding
 * through float first goes wrong), checked by distances computed here. */
static void test_double_rounding(void)
{
    int bad_half = 0, bad_bf16 = 0, cases = 0;
    for (int i = 0; i < 100000; i++) {
        const uint16_t h = (uint16_t)(tu_rand_u64() % 0x7bffu), b = (uint16_t)(tu_rand_u64() % 0x7f7fu);
        const double hm = 0.5 * (half_value(h) + half_value((uint16_t)(h + 1)));
        const double bm = 0.5 * (bf16_value(b) + bf16_value((uint16_t)(b + 1)));
        const double off[4] = {0.0, 0x1p-45, -0x1p-45, (double)(tu_rand_u64() % 1000) / 2000.0 - 0.25};
        for (int o = 0; o < 4; o++) {
            const double sh = (tu_rand_u64() & 1) ? -1.0 : 1.0;
            const double dh = sh * (hm + off[o] * (half_value((uint16_t)(h + 1)) - half_value(h)));
            const double db = sh * (bm + off[o] * (bf16_value((uint16_t)(b + 1)) - bf16_value(b)));
            bad_half += !is_rne_d(dh, cuops_double_to_half(dh), half_value, 0x7c00u);
            bad_bf16 += !is_rne_d(db, cuops_double_to_bf16(db), bf16_value, 0x7f80u);
            cases++;
        }
    }
    CHECK(bad_half == 0, "double->half not round-to-nearest-even on %d of %d", bad_half, cases);
    CHECK(bad_bf16 == 0, "double->bf16 not round-to-nearest-even on %d of %d", bad_bf16, cases);
}

static void test_float16(void)
{
    int bad_decode = 0, bad_trip = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = cuops_half_to_float((uint16_t)h);
        double v = half_value((uint16_t)h);
        if (isnan(v) ? !isnan(f) : (double)f != v || !signbit(f) != !signbit(v)) bad_decode++;
        uint16_t back = cuops_float_to_half(f);
        if (isnan(v) ? ((back & 0x7c00u) != 0x7c00u || (back & 0x3ffu) == 0) : back != h) bad_trip++;
    }
    CHECK(bad_decode == 0, "half decode: %d of 65536 wrong", bad_decode);
    CHECK(bad_trip == 0, "half round trip: %d of 65536 wrong", bad_trip);

    bad_decode = bad_trip = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        float f = cuops_bf16_to_float((uint16_t)b);
        double v = bf16_value((uint16_t)b);
        if (isnan(v) ? !isnan(f) : (double)f != v || !signbit(f) != !signbit(v)) bad_decode++;
        uint16_t back = cuops_float_to_bf16(f);
        if (isnan(v) ? ((back & 0x7f80u) != 0x7f80u || (back & 0x7fu) == 0) : back != b) bad_trip++;
    }
    CHECK(bad_decode == 0, "bf16 decode: %d of 65536 wrong", bad_decode);
    CHECK(bad_trip == 0, "bf16 round trip: %d of 65536 wrong", bad_trip);

    /* random floats over the whole finite range of each type, incl. subnormals */
    int bad_half = 0, bad_bf16 = 0;
    for (int i = 0; i < 200000; i++) {
        uint32_t u = (uint32_t)tu_rand_u64();
        /* exponents 2^-26 .. 2^15 for half */
        uint32_t e = 101u + (uint32_t)(tu_rand_u64() % 42u);
        float fh = cuops_bits_f32((u & 0x807fffffu) | (e << 23));
        if (fabsf(fh) < 65520.0f && !is_rne(fh, cuops_float_to_half(fh), half_value, 0x7c00u))
            bad_half++;
        float fb = cuops_bits_f32(u);
        if (!isnan(fb) && fabsf(fb) < 3.38953139e38f &&
            !is_rne(fb, cuops_float_to_bf16(fb), bf16_value, 0x7f80u))
            bad_bf16++;
    }
    CHECK(bad_half == 0, "float->half not round-to-nearest-even on %d of 200000", bad_half);
    CHECK(bad_bf16 == 0, "float->bf16 not round-to-nearest-even on %d of 200000", bad_bf16);

    /* ties and edges */
    CHECK(cuops_float_to_half(1.0f + 0x1p-11f) == 0x3c00u, "tie 1+2^-11 -> even 1.0");
    CHECK(cuops_float_to_half(1.0f + 3 * 0x1p-11f) == 0x3c02u, "tie 1+3*2^-11 -> even up");
    CHECK(cuops_float_to_half(-(1.0f + 0x1p-11f)) == 0xbc00u, "negative tie");
    CHECK(cuops_float_to_half(65504.0f) == 0x7bffu, "max half");
    CHECK(cuops_float_to_half(65519.99f) == 0x7bffu, "just below the overflow tie");
    CHECK(cuops_float_to_half(65520.0f) == 0x7c00u, "overflow tie -> inf");
    CHECK(cuops_float_to_half(0x1p-25f) == 0x0000u, "2^-25 ties to even 0");
    CHECK(cuops_float_to_half(0x1.000002p-25f) == 0x0001u, "just above 2^-25 -> min subnormal");
    CHECK(cuops_float_to_half(3 * 0x1p-25f) == 0x0002u, "1.5 subnormal steps -> 2");
    CHECK(cuops_float_to_half(0x1p-14f) == 0x0400u, "min normal");
    CHECK(cuops_float_to_half(0x1.ffcp-15f) == 0x0400u, "subnormal rounding up into normal");
    CHECK(cuops_float_to_half(INFINITY) == 0x7c00u && cuops_float_to_half(-INFINITY) == 0xfc00u, "inf");
    CHECK(isnan(cuops_half_to_float(cuops_float_to_half(NAN))), "NaN stays NaN (half)");
    CHECK(cuops_float_to_bf16(1.0f + 0x1p-8f) == 0x3f80u, "bf16 tie -> even down");
    CHECK(cuops_float_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82u, "bf16 tie -> even up");
    CHECK(cuops_float_to_bf16(cuops_bits_f32(0x7f7fffffu)) == 0x7f80u, "bf16 overflow -> inf");
    CHECK(isnan(cuops_bf16_to_float(cuops_float_to_bf16(NAN))), "NaN stays NaN (bf16)");
    CHECK(isnan(cuops_bf16_to_float(cuops_float_to_bf16(cuops_bits_f32(0x7f800001u)))),
          "signalling NaN with a low payload stays NaN (bf16)");
}

/* Results rounded once: f16/bf16 outputs whose double value lies just past a
 * rounding midpoint of the float (rounding to float first would land on the
 * midpoint and then tie to even), and the W4A16 weight rounded to act_type
 * as dequantization to act_type gives it. The expected bits are worked out
 * by hand in the comments. */
static void test_rounded_once(void)
{
    /* f16: 1 + 2^-11 + 2^-40 is above the midpoint 1 + 2^-11 between 1 and
     * 1 + 2^-10: 0x3c01 (float first: 1 + 2^-11 exactly, ties to 0x3c00) */
    float a32[3] = {1.0f, 0x1p-11f, 0x1p-20f}, b32[3] = {1.0f, 1.0f, 0x1p-20f};
    uint16_t a16[3], b16[3], c16 = 0;
    for (int i = 0; i < 3; i++) { a16[i] = cuops_float_to_half(a32[i]); b16[i] = cuops_float_to_half(b32[i]); }
    CHECK(cuops_gemm(cpu, CUOPS_OP_N, CUOPS_OP_T, 1, 1, 3, 1.0f, a16, 3, b16, 3, 0.0f, &c16, 1, F16, F16) ==
                  CUOPS_STATUS_SUCCESS && c16 == 0x3c01,
          "f16 GEMM rounded twice: 0x%04x, want 0x3c01", c16);
    /* bf16: 1 + 2^-8 + 2^-50 (a double holds it) is above the midpoint
     * between 1 and 1 + 2^-7: 0x3f81 (float first: 1 + 2^-8, ties to 0x3f80) */
    float ab32[3] = {1.0f, 0x1p-8f, 0x1p-30f};
    uint16_t abf[3], bbf[3], cbf = 0;
    for (int i = 0; i < 3; i++) { abf[i] = cuops_float_to_bf16(ab32[i]); bbf[i] = cuops_float_to_bf16(i < 2 ? 1.0f : 0x1p-20f); }
    CHECK(cuops_gemm(cpu, CUOPS_OP_N, CUOPS_OP_T, 1, 1, 3, 1.0f, abf, 3, bbf, 3, 0.0f, &cbf, 1, BF16, BF16) ==
                  CUOPS_STATUS_SUCCESS && cbf == 0x3f81,
          "bf16 GEMM rounded twice: 0x%04x, want 0x3f81", cbf);
    /* W4A16, bf16, one group of 8, scale 1.65625 (exact in bf16), zero 8,
     * q - z = -7 4 -5 5 6 5 -6 -1 and x all ones: the weights rounded to bf16
     * are -11.625 6.625 -8.25 8.25 9.9375 8.25 -9.9375 -1.65625, summing to
     * 1.59375 = 0x3fcc (unrounded weights would sum to 1.65625 = 0x3fd4) */
    static const int qz[8] = {-7, 4, -5, 5, 6, 5, -6, -1};
    uint8_t q[4] = {0}, zero = 8;
    for (int c = 0; c < 8; c++) q[c / 2] |= (uint8_t)((qz[c] + 8) << ((c & 1) * 4));
    uint16_t scale = cuops_float_to_bf16(1.65625f), x[8], y = 0;
    for (int c = 0; c < 8; c++) x[c] = cuops_float_to_bf16(1.0f);
    size_t bytes = 0;
    CHECK(cuops_w4_packed_size(cpu, 1, 8, 8, BF16, &bytes) == CUOPS_STATUS_SUCCESS && bytes > 0, "packed size");
    unsigned char *packed = malloc(bytes);
    CHECK(packed && cuops_w4_prepack(cpu, 1, 8, 8, q, 4, &scale, BF16, &zero, BF16, packed) == CUOPS_STATUS_SUCCESS,
          "prepack");
    CHECK(packed && cuops_gemm_w4a16(cpu, 1, 1, 8, 8, x, 8, packed, &y, 1, BF16) == CUOPS_STATUS_SUCCESS &&
              y == 0x3fcc,
          "w4a16 weight not rounded to bf16: 0x%04x, want 0x3fcc", y);
    free(packed);
}

int main(void)
{
    tu_seed_from_env();
    cuops_status_t st = cuops_create(&cpu, CUOPS_DEVICE_CPU);
    CHECK(st == CUOPS_STATUS_SUCCESS, "create cpu handle: %s", cuops_status_string(st));
    if (st != CUOPS_STATUS_SUCCESS) return tu_finish("test_cpu_reference");

    test_float16();
    test_double_rounding();
    test_gemm_small();
    test_gemm_random_vector();
    test_dequant();
    test_w4a16();
    test_rounded_once();
    test_scan();
    test_reduce();

    cuops_destroy(cpu);
    return tu_finish("test_cpu_reference");
}
