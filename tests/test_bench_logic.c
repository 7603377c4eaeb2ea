/*
 * test_bench_logic.c - the validation logic of cuops-bench (tools/bench/
 * bench_validate.h), on the CPU: each check must accept the right result and
 * reject a wrong one (one wrong element, a swapped tile, a flipped bit, an
 * off-by-one scan element, a NaN anywhere); plus median, geometric mean and
 * JSON escaping. A bench whose validator cannot fail would report any
 * kernel as valid, so this runs everywhere, GPU or not.
 */
#include "test_util.h"

#include "../tools/bench/bench_validate.h"

/* ------------------------------------------------------------------------ */
/* GEMM                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct gemm_case {
    bv_gemm_t g;
    void *a, *b, *c;
} gemm_case_t;

/* Random A, B (uniform [-1,1) in ab_type) and the correctly rounded
 * C = alpha op(A) op(B), computed in double. Leading dimensions are padded
 * by `pad` elements so that stride mistakes would show. */
static gemm_case_t make_gemm(cuops_op_t ta, cuops_op_t tb, int64_t m, int64_t n, int64_t k,
                             cuops_dtype_t ab, cuops_dtype_t ct, double alpha, int64_t pad)
{
    gemm_case_t gc;
    memset(&gc, 0, sizeof(gc));
    bv_gemm_t *g = &gc.g;
    g->trans_a = ta; g->trans_b = tb;
    g->m = m; g->n = n; g->k = k; g->alpha = alpha;
    g->ab_type = ab; g->c_type = ct;
    int64_t a_rows = ta == CUOPS_OP_N ? m : k, a_cols = ta == CUOPS_OP_N ? k : m;
    int64_t b_rows = tb == CUOPS_OP_N ? k : n, b_cols = tb == CUOPS_OP_N ? n : k;
    g->lda = a_cols + pad;
    g->ldb = b_cols + pad;
    g->ldc = n + pad;
    gc.a = malloc((size_t)(a_rows * g->lda) * bv_dtype_size(ab));
    gc.b = malloc((size_t)(b_rows * g->ldb) * bv_dtype_size(ab));
    gc.c = malloc((size_t)(m * g->ldc) * bv_dtype_size(ct));
    tu_fill_float(gc.a, ab, (size_t)(a_rows * g->lda), -1.0, 1.0);
    tu_fill_float(gc.b, ab, (size_t)(b_rows * g->ldb), -1.0, 1.0);
    tu_poison(gc.c, ct, (size_t)(m * g->ldc)); /* the padding stays NaN: it must not be read */
    g->a = gc.a; g->b = gc.b; g->c = gc.c;
    /* C by its own loop (not bv_gemm_element, the validator's reference) */
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double v = 0.0;
            for (int64_t p = 0; p < k; p++) {
                const double av = bv_load(gc.a, ab, ta == CUOPS_OP_N ? i * g->lda + p : p * g->lda + i);
                const double bw = bv_load(gc.b, ab, tb == CUOPS_OP_N ? p * g->ldb + j : j * g->ldb + p);
                v += av * bw;
            }
            bv_store(gc.c, ct, i * g->ldc + j, alpha * v);
        }
    return gc;
}

static void free_gemm(gemm_case_t *gc)
{
    free(gc->a); free(gc->b); free(gc->c);
}

static void test_gemm_accepts_right(void)
{
    const cuops_op_t ops[2] = {CUOPS_OP_N, CUOPS_OP_T};
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            gemm_case_t gc = make_gemm(ops[ta], ops[tb], 37, 29, 53, CUOPS_DTYPE_F16,
                                       CUOPS_DTYPE_F16, 1.0, 3);
            bv_result_t r = bv_check_gemm(&gc.g, 1e-2, (int64_t)1 << 40, 0, 11);
            CHECK(r.pass, "f16 trans %d%d rejected a right result: %s", ta, tb, r.msg);
            CHECK(r.max_rel_err < 2e-3, "f16 error %g too large for a right result",
                  r.max_rel_err);
            /* sampled mode (no full recomputation) must agree */
            r = bv_check_gemm(&gc.g, 1e-2, 0, 64, 12);
            CHECK(r.pass, "sampled check rejected a right result: %s", r.msg);
            free_gemm(&gc);
        }
    gemm_case_t gc = make_gemm(CUOPS_OP_N, CUOPS_OP_T, 65, 17, 129, CUOPS_DTYPE_BF16,
                               CUOPS_DTYPE_BF16, 0.5, 0);
    bv_result_t r = bv_check_gemm(&gc.g, 1e-2, (int64_t)1 << 40, 0, 13);
    CHECK(r.pass, "bf16 rejected a right result: %s", r.msg);
    free_gemm(&gc);

    gc = make_gemm(CUOPS_OP_N, CUOPS_OP_T, 64, 48, 200, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, 1.0, 1);
    r = bv_check_gemm(&gc.g, 1e-2, (int64_t)1 << 40, 0, 14);
    CHECK(r.pass, "f16->f32 rejected a right result: %s", r.msg);
    free_gemm(&gc);

    /* f32 at the tight 1e-5 bound: C computed in double and rounded once */
    gc = make_gemm(CUOPS_OP_T, CUOPS_OP_N, 33, 41, 300, CUOPS_DTYPE_F32, CUOPS_DTYPE_F32, 1.0, 2);
    r = bv_check_gemm(&gc.g, 1e-5, (int64_t)1 << 40, 0, 15);
    CHECK(r.pass, "f32 rejected a right result: %s", r.msg);
    free_gemm(&gc);

    /* a larger bf16 product in projection-only mode: the per-row bound must
     * leave room for bf16 rounding (no false failures) */
    gc = make_gemm(CUOPS_OP_N, CUOPS_OP_T, 256, 384, 256, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16,
                   1.0, 0);
    r = bv_check_gemm(&gc.g, 1e-2, 0, 32, 16);
    CHECK(r.pass, "bf16 256x384x256 rejected a right result: %s", r.msg);
    free_gemm(&gc);
}

static void test_gemm_rejects_wrong(void)
{
    /* one wrong element: caught by the full check and by projections alone */
    gemm_case_t gc = make_gemm(CUOPS_OP_N, CUOPS_OP_T, 96, 80, 64, CUOPS_DTYPE_F16,
                               CUOPS_DTYPE_F16, 1.0, 0);
    int64_t wi = 41, wj = 57, idx = wi * gc.g.ldc + wj;
    double orig = bv_load(gc.c, CUOPS_DTYPE_F16, idx);
    bv_store(gc.c, CUOPS_DTYPE_F16, idx, orig + 8.0);
    bv_result_t r = bv_check_gemm(&gc.g, 1e-2, (int64_t)1 << 40, 0, 21);
    CHECK(!r.pass, "one wrong element accepted (full check)");
    CHECK(strstr(r.msg, "C[41,57]") != NULL, "the message does not name the element: %s", r.msg);
    r = bv_check_gemm(&gc.g, 1e-2, 0, 0, 22);
    CHECK(!r.pass, "one wrong element accepted (projections only)");
    CHECK(strstr(r.msg, "row 41") != NULL, "the message does not name the row: %s", r.msg);

    /* a small error in one element: only an exact check can see it */
    bv_store(gc.c, CUOPS_DTYPE_F16, idx, orig + 0.25);
    r = bv_check_gemm(&gc.g, 1e-2, (int64_t)1 << 40, 0, 23);
    CHECK(!r.pass, "an element off by 0.25 accepted (full check)");
    bv_store(gc.c, CUOPS_DTYPE_F16, idx, orig);
    r = bv_check_gemm(&gc.g, 1e-2, (int64_t)1 << 40, 0, 24);
    CHECK(r.pass, "restored result rejected: %s", r.msg);

    /* swapped 16x16 tiles (what a wrong tile index produces) */
    uint16_t *c = (uint16_t *)gc.c;
    for (int64_t i = 0; i < 16; i++)
        for (int64_t j = 0; j < 16; j++) {
            int64_t p = (16 + i) * gc.g.ldc + (32 + j), q = (48 + i) * gc.g.ldc + (0 + j);
            uint16_t tmp = c[p]; c[p] = c[q]; c[q] = tmp;
        }
    r = bv_check_gemm(&gc.g, 1e-2, 0, 0, 25);
    CHECK(!r.pass, "swapped tiles accepted (projections only)");
    r = bv_check_gemm(&gc.g, 1e-2, 0, 200, 26);
    CHECK(!r.pass, "swapped tiles accepted (projections + samples)");
    free_gemm(&gc);

    /* one set of fp64 projections serves several results of the same A, B */
    gc = make_gemm(CUOPS_OP_T, CUOPS_OP_T, 70, 90, 110, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0, 0);
    bv_gemm_ref_t pr;
    CHECK(bv_gemm_ref_init(&pr, &gc.g, 31) == 0, "bv_gemm_ref_init failed");
    r = bv_check_gemm_ref(&gc.g, &pr, 1e-2, 0, 16, 32);
    CHECK(r.pass, "shared projections rejected a right result: %s", r.msg);
    bv_store(gc.c, CUOPS_DTYPE_F16, 69 * gc.g.ldc, bv_load(gc.c, CUOPS_DTYPE_F16, 69 * gc.g.ldc) + 64.0);
    r = bv_check_gemm_ref(&gc.g, &pr, 1e-2, 0, 0, 33);
    CHECK(!r.pass, "shared projections accepted a wrong element in the last row");
    bv_gemm_ref_free(&pr);
    free_gemm(&gc);

    /* a NaN anywhere: first, last and an interior element */
    const int64_t spots[3][2] = {{0, 0}, {95, 79}, {50, 3}};
    for (int s = 0; s < 3; s++) {
        gc = make_gemm(CUOPS_OP_N, CUOPS_OP_T, 96, 80, 64, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16,
                       1.0, 0);
        ((uint16_t *)gc.c)[spots[s][0] * gc.g.ldc + spots[s][1]] = 0x7fc0;
        r = bv_check_gemm(&gc.g, 1e-2, 0, 0, 27);
        CHECK(!r.pass, "NaN at [%lld,%lld] accepted", (long long)spots[s][0],
              (long long)spots[s][1]);
        CHECK(r.bad_count == 1, "NaN count %lld, expected 1", (long long)r.bad_count);
        free_gemm(&gc);
    }

    /* the wrong transpose: A*B instead of A*B^T (square, so shapes agree) */
    gc = make_gemm(CUOPS_OP_N, CUOPS_OP_N, 40, 40, 40, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0, 0);
    gc.g.trans_b = CUOPS_OP_T;
    r = bv_check_gemm(&gc.g, 1e-2, 0, 0, 28);
    CHECK(!r.pass, "a product with the wrong transpose accepted");
    free_gemm(&gc);

    /* f32: one row off by a relative 1e-3 passes at 1e-2 but not at 1e-5 */
    gc = make_gemm(CUOPS_OP_N, CUOPS_OP_T, 48, 64, 96, CUOPS_DTYPE_F32, CUOPS_DTYPE_F32, 1.0, 0);
    for (int64_t j = 0; j < 64; j++) ((float *)gc.c)[7 * gc.g.ldc + j] *= 1.001f;
    r = bv_check_gemm(&gc.g, 1e-5, 0, 0, 29);
    CHECK(!r.pass, "f32 row scaled by 1.001 accepted at 1e-5");
    free_gemm(&gc);

    /* an all-zero result (a kernel that wrote zeros) */
    gc = make_gemm(CUOPS_OP_N, CUOPS_OP_T, 20, 24, 32, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, 1.0, 0);
    memset(gc.c, 0, (size_t)(20 * gc.g.ldc) * sizeof(float));
    r = bv_check_gemm(&gc.g, 1e-2, 0, 0, 30);
    CHECK(!r.pass, "an all-zero C accepted");
    free_gemm(&gc);
}

/* ------------------------------------------------------------------------ */
/* Dequantization                                                           */
/* ------------------------------------------------------------------------ */

static void test_dequant(void)
{
    /* the formula itself, by hand: byte 0x21 holds q=1 (even column, low
     * nibble) and q=2 (odd column); zero 8, scale 0.5 -> -3.5 and -3.0 */
    uint8_t q1[1] = {0x21};
    uint16_t s1[1] = {cuops_float_to_half(0.5f)};
    uint8_t z1[1] = {8};
    uint16_t o1[2];
    bv_dequant_ref(1, 2, 2, q1, 1, s1, CUOPS_DTYPE_F16, z1, o1, 2, CUOPS_DTYPE_F16);
    CHECK(o1[0] == 0xC300, "(1-8)*0.5 gave 0x%04x, want 0xC300 (-3.5)", o1[0]);
    CHECK(o1[1] == 0xC200, "(2-8)*0.5 gave 0x%04x, want 0xC200 (-3.0)", o1[1]);
    /* symmetric (zeros NULL means 8): q = 15 -> 7 * scale */
    uint8_t q2[1] = {0xF0};
    float s2[1] = {0.25f};
    float o2[2];
    bv_dequant_ref(1, 2, 2, q2, 1, s2, CUOPS_DTYPE_F32, NULL, o2, 2, CUOPS_DTYPE_F32);
    CHECK(o2[0] == -2.0f && o2[1] == 1.75f, "symmetric gave %g %g, want -2 1.75",
          (double)o2[0], (double)o2[1]);

    /* a random weight, odd k and a partial last group, padded ldq / ldo */
    const int64_t n = 13, k = 301, group = 128, groups = 3, ldq = 160, ldo = 305;
    uint8_t *q = (uint8_t *)malloc((size_t)(n * ldq));
    uint8_t *z = (uint8_t *)malloc((size_t)(n * groups));
    uint16_t *s = (uint16_t *)malloc(sizeof(uint16_t) * (size_t)(n * groups));
    for (int64_t i = 0; i < n * ldq; i++) q[i] = (uint8_t)tu_rand_u64();
    for (int64_t i = 0; i < n * groups; i++) z[i] = (uint8_t)(tu_rand_u64() & 15);
    tu_fill_float(s, CUOPS_DTYPE_BF16, (size_t)(n * groups), 0.01, 0.1);
    const cuops_dtype_t outs[2] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
    for (int t = 0; t < 2; t++) {
        uint16_t *ref = (uint16_t *)malloc(sizeof(uint16_t) * (size_t)(n * ldo));
        uint16_t *got = (uint16_t *)malloc(sizeof(uint16_t) * (size_t)(n * k));
        memset(ref, 0xFF, sizeof(uint16_t) * (size_t)(n * ldo)); /* NaN in f16 and bf16 */
        bv_dequant_ref(n, k, group, q, ldq, s, CUOPS_DTYPE_BF16, z, ref, ldo, outs[t]);
        for (int64_t r = 0; r < n; r++) memcpy(got + r * k, ref + r * ldo, sizeof(uint16_t) * k);

        bv_result_t res = bv_check_exact(got, k, ref, ldo, n, k, outs[t], 0);
        CHECK(res.pass && res.max_rel_err == 0.0, "%s: identical output rejected: %s",
              bv_dtype_name(outs[t]), res.msg);

        /* one flipped bit: the lowest mantissa bit of one element */
        got[7 * k + 299] ^= 1;
        res = bv_check_exact(got, k, ref, ldo, n, k, outs[t], 0);
        CHECK(!res.pass && res.bad_count == 1, "%s: one flipped bit accepted",
              bv_dtype_name(outs[t]));
        CHECK(strstr(res.msg, "[7,299]") != NULL, "message does not name the element: %s",
              res.msg);
        got[7 * k + 299] ^= 1;

        /* the sign bit of the first element; a NaN in the last */
        got[0] ^= 0x8000;
        res = bv_check_exact(got, k, ref, ldo, n, k, outs[t], 0);
        CHECK(!res.pass, "%s: a flipped sign accepted", bv_dtype_name(outs[t]));
        got[0] ^= 0x8000;
        got[n * k - 1] = outs[t] == CUOPS_DTYPE_F16 ? 0x7e00 : 0x7fc0;
        res = bv_check_exact(got, k, ref, ldo, n, k, outs[t], 0);
        CHECK(!res.pass && isinf(res.max_rel_err), "%s: a NaN accepted",
              bv_dtype_name(outs[t]));
        free(ref);
        free(got);
    }
    /* swapping nibble order (high for even columns) is a classic bug */
    uint16_t *ref = (uint16_t *)malloc(sizeof(uint16_t) * (size_t)(n * k));
    uint16_t *bad = (uint16_t *)malloc(sizeof(uint16_t) * (size_t)(n * k));
    uint8_t *swapped = (uint8_t *)malloc((size_t)(n * ldq));
    for (int64_t i = 0; i < n * ldq; i++) swapped[i] = (uint8_t)((q[i] >> 4) | (q[i] << 4));
    bv_dequant_ref(n, k, group, q, ldq, s, CUOPS_DTYPE_BF16, z, ref, k, CUOPS_DTYPE_F16);
    bv_dequant_ref(n, k, group, swapped, ldq, s, CUOPS_DTYPE_BF16, z, bad, k, CUOPS_DTYPE_F16);
    bv_result_t res = bv_check_exact(bad, k, ref, k, n, k, CUOPS_DTYPE_F16, 0);
    CHECK(!res.pass, "swapped nibbles accepted");
    free(ref); free(bad); free(swapped);
    free(q); free(z); free(s);
}

/* ------------------------------------------------------------------------ */
/* Relative comparison (W4A16 against its reference)                        */
/* ------------------------------------------------------------------------ */

static void test_rel(void)
{
    const int64_t rows = 16, cols = 256;
    uint16_t *ref = (uint16_t *)malloc(sizeof(uint16_t) * rows * cols);
    uint16_t *got = (uint16_t *)malloc(sizeof(uint16_t) * rows * cols);
    tu_fill_float(ref, CUOPS_DTYPE_F16, (size_t)(rows * cols), -4.0, 4.0);
    /* a right result up to fp16 rounding of a slightly different order */
    for (int64_t i = 0; i < rows * cols; i++)
        got[i] = cuops_float_to_half(cuops_half_to_float(ref[i]) * 1.0005f);
    bv_result_t r = bv_check_rel(got, cols, CUOPS_DTYPE_F16, ref, cols, CUOPS_DTYPE_F16, rows,
                                 cols, 2e-2, 2e-2);
    CHECK(r.pass, "rel: right result rejected: %s", r.msg);
    /* one wrong 1x64 block in one row */
    for (int64_t j = 64; j < 128; j++) got[5 * cols + j] = cuops_float_to_half(0.0f);
    r = bv_check_rel(got, cols, CUOPS_DTYPE_F16, ref, cols, CUOPS_DTYPE_F16, rows, cols, 2e-2,
                     2e-2);
    CHECK(!r.pass, "rel: a zeroed block accepted");
    memcpy(got, ref, sizeof(uint16_t) * rows * cols);
    got[3] = 0x7e00;
    r = bv_check_rel(got, cols, CUOPS_DTYPE_F16, ref, cols, CUOPS_DTYPE_F16, rows, cols, 2e-2,
                     2e-2);
    CHECK(!r.pass, "rel: a NaN accepted");
    /* a NaN in the reference: no comparison can hold, so the row fails */
    memcpy(got, ref, sizeof(uint16_t) * rows * cols);
    ref[7 * cols + 9] = 0x7e00;
    r = bv_check_rel(got, cols, CUOPS_DTYPE_F16, ref, cols, CUOPS_DTYPE_F16, rows, cols, 2e-2,
                     2e-2);
    CHECK(!r.pass, "rel: a NaN in the reference accepted");
    for (int64_t i = 0; i < rows * cols; i++) ref[i] = 0x7e00;
    r = bv_check_rel(got, cols, CUOPS_DTYPE_F16, ref, cols, CUOPS_DTYPE_F16, rows, cols, 2e-2,
                     2e-2);
    CHECK(!r.pass, "rel: an all-NaN reference accepted");
    free(ref);
    free(got);
}

/* ------------------------------------------------------------------------ */
/* Scan and reduce                                                          */
/* ------------------------------------------------------------------------ */

static void test_scan_reduce(void)
{
    const int64_t n = 5000;
    int32_t *in = (int32_t *)malloc(sizeof(int32_t) * n);
    int32_t *ref = (int32_t *)malloc(sizeof(int32_t) * n);
    int32_t *got = (int32_t *)malloc(sizeof(int32_t) * n);
    for (int64_t i = 0; i < n; i++) in[i] = (int32_t)(tu_rand_u64() % 2001) - 1000;
    bv_scan_ref(in, ref, CUOPS_DTYPE_I32, n);
    memcpy(got, ref, sizeof(int32_t) * n);
    bv_result_t r = bv_check_scan(got, ref, in, CUOPS_DTYPE_I32, n, 0, 0.0, 0.0);
    CHECK(r.pass, "i32 scan: right result rejected: %s", r.msg);
    got[4321] += 1; /* off by one */
    r = bv_check_scan(got, ref, in, CUOPS_DTYPE_I32, n, 0, 0.0, 0.0);
    CHECK(!r.pass && r.bad_count == 1, "i32 scan: an off-by-one element accepted");
    CHECK(strstr(r.msg, "out[4321]") != NULL, "message does not name the element: %s", r.msg);
    got[4321] -= 1;
    /* an exclusive result where inclusive was asked: every element shifted */
    got[0] = 0;
    for (int64_t i = 1; i < n; i++) got[i] = ref[i - 1];
    r = bv_check_scan(got, ref, in, CUOPS_DTYPE_I32, n, 0, 0.0, 0.0);
    CHECK(!r.pass, "i32 scan: a shifted (exclusive) result accepted");

    /* two's-complement wrap-around of the reference */
    int32_t big[3] = {INT32_MAX, 1, 5}, wrapped[3];
    bv_scan_ref(big, wrapped, CUOPS_DTYPE_I32, 3);
    CHECK(wrapped[1] == INT32_MIN && wrapped[2] == INT32_MIN + 5,
          "i32 scan reference does not wrap: %d %d", wrapped[1], wrapped[2]);

    /* float scan: one element off by a relative 1e-3 of the running sum */
    float *fin = (float *)malloc(sizeof(float) * n);
    float *fref = (float *)malloc(sizeof(float) * n);
    float *fgot = (float *)malloc(sizeof(float) * n);
    tu_fill_float(fin, CUOPS_DTYPE_F32, (size_t)n, -1.0, 1.0);
    bv_scan_ref(fin, fref, CUOPS_DTYPE_F32, n);
    /* the float result a sequential fp32 loop gives is within the bound */
    float acc = 0.0f;
    for (int64_t i = 0; i < n; i++) { acc += fin[i]; fgot[i] = acc; }
    r = bv_check_scan(fgot, fref, fin, CUOPS_DTYPE_F32, n, 0, 0.0, bv_scan_tol(CUOPS_DTYPE_F32));
    CHECK(r.pass, "f32 scan: an fp32-accumulated result rejected: %s", r.msg);
    memcpy(fgot, fref, sizeof(float) * n);
    double abs_to_3000 = 0.0;
    for (int64_t i = 0; i <= 3000; i++) abs_to_3000 += fabs(fin[i]);
    fgot[3000] += (float)(1e-3 * abs_to_3000);
    r = bv_check_scan(fgot, fref, fin, CUOPS_DTYPE_F32, n, 0, 0.0, bv_scan_tol(CUOPS_DTYPE_F32));
    CHECK(!r.pass, "f32 scan: an element off by 1e-3 sum|x| accepted");
    fgot[3000] = fref[3000];
    fgot[n - 1] = NAN;
    r = bv_check_scan(fgot, fref, fin, CUOPS_DTYPE_F32, n, 0, 0.0, bv_scan_tol(CUOPS_DTYPE_F32));
    CHECK(!r.pass, "f32 scan: a NaN accepted");
    fgot[n - 1] = fref[n - 1];
    /* a sampled chunk checked with its offset and the |x| sum before it */
    double abs_before = 0.0;
    for (int64_t i = 0; i < 2000; i++) abs_before += fabs(fin[i]);
    r = bv_check_scan(fgot + 2000, fref + 2000, fin + 2000, CUOPS_DTYPE_F32, 1000, 2000,
                      abs_before, bv_scan_tol(CUOPS_DTYPE_F32));
    CHECK(r.pass, "f32 scan chunk: right result rejected: %s", r.msg);
    fgot[2500] = -fgot[2500] + 1.0f;
    r = bv_check_scan(fgot + 2000, fref + 2000, fin + 2000, CUOPS_DTYPE_F32, 1000, 2000,
                      abs_before, bv_scan_tol(CUOPS_DTYPE_F32));
    CHECK(!r.pass && strstr(r.msg, "out[2500]") != NULL, "f32 scan chunk: wrong element %s",
          r.msg);

    /* reduce */
    int32_t isum;
    double iabs;
    bv_reduce_ref(in, &isum, CUOPS_DTYPE_I32, n, &iabs);
    CHECK(isum == ref[n - 1], "reduce %d != last scan element %d", isum, ref[n - 1]);
    int32_t igot = isum;
    r = bv_check_scalar(&igot, &isum, CUOPS_DTYPE_I32, iabs, 0.0);
    CHECK(r.pass, "i32 reduce: right result rejected: %s", r.msg);
    igot = isum - 1;
    r = bv_check_scalar(&igot, &isum, CUOPS_DTYPE_I32, iabs, 0.0);
    CHECK(!r.pass, "i32 reduce: off by one accepted");
    float fsum, fabs_ok;
    double fabs_sum;
    bv_reduce_ref(fin, &fsum, CUOPS_DTYPE_F32, n, &fabs_sum);
    fabs_ok = fsum + (float)(1e-7 * fabs_sum);
    r = bv_check_scalar(&fabs_ok, &fsum, CUOPS_DTYPE_F32, fabs_sum, 1e-5);
    CHECK(r.pass, "f32 reduce: a result within 1e-7 sum|x| rejected: %s", r.msg);
    float fbad = fsum + (float)(1e-4 * fabs_sum);
    r = bv_check_scalar(&fbad, &fsum, CUOPS_DTYPE_F32, fabs_sum, 1e-5);
    CHECK(!r.pass, "f32 reduce: a result off by 1e-4 sum|x| accepted");
    fbad = NAN;
    r = bv_check_scalar(&fbad, &fsum, CUOPS_DTYPE_F32, fabs_sum, 1e-5);
    CHECK(!r.pass, "f32 reduce: NaN accepted");
    free(in); free(ref); free(got);
    free(fin); free(fref); free(fgot);
}

/* ------------------------------------------------------------------------ */
/* Statistics and JSON                                                      */
/* ------------------------------------------------------------------------ */

static void test_stats(void)
{
    double odd[5] = {9.0, 1.0, 5.0, 3.0, 7.0};
    CHECK(bv_median(odd, 5) == 5.0, "median of 5 = %g, want 5", bv_median(odd, 5));
    double even[4] = {4.0, 1.0, 3.0, 2.0};
    CHECK(bv_median(even, 4) == 2.5, "median of 4 = %g, want 2.5", bv_median(even, 4));
    double one[1] = {42.0};
    CHECK(bv_median(one, 1) == 42.0, "median of 1");
    double two[2] = {10.0, 2.0};
    CHECK(bv_median(two, 2) == 6.0, "median of 2 = %g, want 6", bv_median(two, 2));
    CHECK(isnan(bv_median(NULL, 0)), "median of nothing must be NaN");
    /* an outlier (a clock drop) does not move the median */
    double spikes[7] = {10.0, 10.1, 9.9, 500.0, 10.0, 10.2, 9.8};
    CHECK(bv_median(spikes, 7) == 10.0, "median with an outlier = %g", bv_median(spikes, 7));

    int used = -1;
    double g1[2] = {1.0, 4.0};
    CHECK(fabs(bv_geomean(g1, 2, &used) - 2.0) < 1e-12 && used == 2, "geomean(1,4) != 2");
    double g2[3] = {2.0, 8.0, 4.0};
    CHECK(fabs(bv_geomean(g2, 3, &used) - 4.0) < 1e-12, "geomean(2,8,4) != 4");
    double g3[5] = {0.5, NAN, 2.0, 0.0, -1.0}; /* missing / failed rows are left out */
    double gm = bv_geomean(g3, 5, &used);
    CHECK(fabs(gm - 1.0) < 1e-12 && used == 2, "geomean skipping invalid = %g (used %d)", gm,
          used);
    CHECK(isnan(bv_geomean(g3 + 1, 1, &used)) && used == 0, "geomean of nothing must be NaN");
}

/* The summary's geomean lines: one per (op, variant, baseline), and one per
 * dtype inside a group whose rows mix dtypes; rows that did not count
 * (NAN) are left out, other variants and baselines are not mixed in. */
static void test_geomean_groups(void)
{
    const bv_speedup_row_t rows[] = {
        {"reduce", "auto", "cub", "i32", 1.0},  /* 0 */
        {"reduce", "auto", "cub", "f32", 2.0},  /* 1 */
        {"reduce", "auto", "cub", "i32", 4.0},  /* 2 */
        {"reduce", "other", "cub", "i32", 9.0}, /* 3: another variant */
        {"reduce", "auto", NULL, "i32", 100.0}, /* 4: no baseline */
        {"reduce", "auto", "cub", "f32", NAN},  /* 5: a failed row */
        {"scan", "auto", "cub", "i32", 3.0},    /* 6: another op, one dtype */
        {"scan", "auto", "cub", "i32", 3.0},    /* 7 */
    };
    const int n = (int)(sizeof rows / sizeof rows[0]);
    int used = -1;
    double scratch[8];
    double g = bv_group_geomean(rows, n, 0, NULL, scratch, &used);
    CHECK(fabs(g - 2.0) < 1e-12 && used == 3, "reduce auto vs cub = %g over %d, want 2 over 3", g,
          used);
    g = bv_group_geomean(rows, n, 1, "i32", scratch, &used);
    CHECK(fabs(g - 2.0) < 1e-12 && used == 2, "i32 only = %g over %d, want 2 over 2", g, used);
    g = bv_group_geomean(rows, n, 0, "f32", scratch, &used);
    CHECK(fabs(g - 2.0) < 1e-12 && used == 1, "f32 only = %g over %d, want 2 over 1", g, used);
    g = bv_group_geomean(rows, n, 6, NULL, scratch, &used);
    CHECK(fabs(g - 3.0) < 1e-12 && used == 2, "scan auto = %g over %d, want 3 over 2", g, used);
    g = bv_group_geomean(rows, n, 3, NULL, scratch, &used);
    CHECK(fabs(g - 9.0) < 1e-12 && used == 1, "other variant = %g over %d", g, used);
    g = bv_group_geomean(rows, n, 4, NULL, scratch, &used);
    CHECK(fabs(g - 100.0) < 1e-12 && used == 1, "no-baseline group = %g over %d", g, used);
    CHECK(isnan(bv_group_geomean(rows, n, 0, "f64", scratch, &used)) && used == 0,
          "a dtype with no rows must give NaN");

    /* which rows open a line: the first of each group; per dtype, the first
     * of each dtype where the group mixes them */
    const int opens[] = {1, 0, 0, 1, 1, 0, 1, 0};
    const int opens_dtype[] = {1, 1, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        CHECK(bv_opens_geomean_line(rows, n, i, 0) == opens[i], "row %d opens its group: %d", i,
              bv_opens_geomean_line(rows, n, i, 0));
        CHECK(bv_opens_geomean_line(rows, n, i, 1) == opens_dtype[i],
              "row %d opens a dtype line: %d", i, bv_opens_geomean_line(rows, n, i, 1));
    }
}

/* The clock/power summary of a timed series: which NVML clock event
 * reasons count as "held down by power", and the means. */
static void test_power_summary(void)
{
    CHECK(bv_clock_reasons_power(0x4ull), "software power cap is power");
    CHECK(bv_clock_reasons_power(0x8ull), "hardware slowdown is power");
    CHECK(bv_clock_reasons_power(0x80ull), "power brake is power");
    CHECK(bv_clock_reasons_power(0x5ull), "idle + power cap is power");
    CHECK(!bv_clock_reasons_power(0x0ull), "no reason is not power");
    CHECK(!bv_clock_reasons_power(0x1ull), "idle is not power");
    CHECK(!bv_clock_reasons_power(0x20ull), "software thermal is not power");
    CHECK(!bv_clock_reasons_power(0x40ull), "hardware thermal is not power");
    CHECK(!bv_clock_reasons_power(0x2ull), "application clocks are not power");

    bv_power_acc_t a;
    memset(&a, 0, sizeof a);
    double mhz, w, share;
    bv_power_summary(&a, &mhz, &w, &share);
    CHECK(isnan(mhz) && isnan(w) && isnan(share), "no samples: NAN, not 0");
    bv_power_add(&a, 1980, 300000, 0x0ull);
    bv_power_add(&a, 1500, 690000, 0x4ull);
    bv_power_add(&a, 1410, 694500, 0x4ull);
    bv_power_add(&a, 1530, 650000, 0x20ull);
    bv_power_summary(&a, &mhz, &w, &share);
    CHECK(a.samples == 4, "samples counted: %d", a.samples);
    CHECK(fabs(mhz - 1605.0) < 1e-9, "mean clock %.6f, expected 1605", mhz);
    CHECK(fabs(w - 583.625) < 1e-9, "mean power %.6f W, expected 583.625", w);
    CHECK(fabs(share - 0.5) < 1e-12, "power-limited share %.6f, expected 0.5", share);

    /* the series' mean power from the energy counter: 138 J over 0.2 s */
    double e = bv_energy_watts(5000000ull, 5138000ull, 0.2);
    CHECK(fabs(e - 690.0) < 1e-9, "energy counter: %.6f W, expected 690", e);
    CHECK(isnan(bv_energy_watts(0ull, 5138000ull, 0.2)), "no start reading: NAN");
    CHECK(isnan(bv_energy_watts(5138000ull, 5000000ull, 0.2)), "a counter that went back: NAN");
    CHECK(isnan(bv_energy_watts(5000000ull, 5138000ull, 0.0)), "no time: NAN");
    CHECK(isnan(bv_energy_watts(5000000ull, 5138000ull, -1.0)), "negative time: NAN");
    CHECK(isnan(bv_energy_watts(5000000ull, 5000000ull, 0.2)), "a counter that did not move: NAN");
}

/* The board line of the bench's header: peak DRAM bandwidth from the memory
 * clock and bus width, and the UUID as nvidia-smi prints it. */
static void test_board(void)
{
    CHECK(cuops_dram_peak_gbps(3201000, 6144) == 4916, "H200 3201 MHz x 6144 bits: %lld",
          (long long)cuops_dram_peak_gbps(3201000, 6144));
    CHECK(cuops_dram_peak_gbps(2619000, 5120) == 3352, "H100 SXM 2619 MHz x 5120 bits: %lld",
          (long long)cuops_dram_peak_gbps(2619000, 5120));
    /* a board reporting two 64-bit channels fewer reads 2 % lower */
    CHECK(cuops_dram_peak_gbps(3201000, 6016) == 4814, "3201 MHz x 6016 bits: %lld",
          (long long)cuops_dram_peak_gbps(3201000, 6016));
    CHECK(cuops_dram_peak_gbps(0, 6144) == 0 && cuops_dram_peak_gbps(3201000, 0) == 0 &&
              cuops_dram_peak_gbps(-1, 6144) == 0,
          "an unknown clock or bus gives 0");

    unsigned char u[16];
    for (int i = 0; i < 16; i++) u[i] = (unsigned char)(0x10 * i + 15 - i);
    char s[41];
    memset(s, 'x', sizeof s);
    bv_format_uuid(u, s);
    CHECK(strcmp(s, "GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0") == 0, "uuid formatted as %s", s);
    CHECK(strlen(s) == 40, "uuid length %zu", strlen(s));
    memset(u, 0, sizeof u);
    bv_format_uuid(u, s);
    CHECK(strcmp(s, "GPU-00000000-0000-0000-0000-000000000000") == 0, "zero uuid as %s", s);
}

static void test_json_escape(void)
{
    char buf[128];
    size_t len = bv_json_escape("plain", buf, sizeof(buf));
    CHECK(len == 5 && strcmp(buf, "plain") == 0, "plain -> '%s'", buf);
    len = bv_json_escape("a\"b\\c", buf, sizeof(buf));
    CHECK(strcmp(buf, "a\\\"b\\\\c") == 0 && len == 7, "quotes/backslash -> '%s'", buf);
    len = bv_json_escape("x\ny\tz\r\b\f", buf, sizeof(buf));
    CHECK(strcmp(buf, "x\\ny\\tz\\r\\b\\f") == 0, "control -> '%s'", buf);
    len = bv_json_escape("\x01\x1f!", buf, sizeof(buf));
    CHECK(strcmp(buf, "\\u0001\\u001f!") == 0 && len == 13, "low control -> '%s'", buf);
    len = bv_json_escape("caf\xc3\xa9", buf, sizeof(buf));
    CHECK(strcmp(buf, "caf\xc3\xa9") == 0, "UTF-8 must pass through: '%s'", buf);
    /* truncation never splits an escape and still reports the full length */
    char small[4];
    len = bv_json_escape("ab\"c", small, sizeof(small));
    CHECK(len == 5 && strcmp(small, "ab") == 0, "truncated -> '%s' (len %zu)", small, len);
    len = bv_json_escape("", buf, sizeof(buf));
    CHECK(len == 0 && buf[0] == '\0', "empty string");

    /* the FILE writer: quoted, escaped, null for NULL */
    FILE *f = tmpfile();
    if (!f) {
        SKIP("tmpfile() unavailable: JSON writer not checked");
        return;
    }
    bv_json_write_string(f, "q\"\n");
    fputc(' ', f);
    bv_json_write_string(f, NULL);
    rewind(f);
    char line[64] = {0};
    size_t got = fread(line, 1, sizeof(line) - 1, f);
    fclose(f);
    CHECK(got > 0 && strcmp(line, "\"q\\\"\\n\" null") == 0, "writer wrote '%s'", line);
}

/* The probe-ceiling reader takes the best point of each tensor-core family
 * and ignores every other family and malformed lines. */
static void test_probe_ceilings(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/cuops_probe_%llu.json", (unsigned long long)tu_rand_u64());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f) return;
    fputs("{\"gpu\": \"X\", \"points\": [\n", f);
    fputs("  {\"family\": \"mma_sync\", \"series\": \"a\", \"x\": 1, \"value\": 312.5, \"unit\": \"TFLOP/s\"},\n", f);
    fputs("  {\"family\": \"mma_sync\", \"series\": \"b\", \"x\": 8, \"value\": 639.75, \"unit\": \"TFLOP/s\"},\n", f);
    fputs("  {\"family\": \"mma_latency\", \"series\": \"c\", \"x\": 1, \"value\": 9999, \"unit\": \"cycles\"},\n", f);
    fputs("  {\"family\": \"wgmma\", \"series\": \"d\", \"x\": 256, \"value\": 967.25, \"unit\": \"TFLOP/s\"},\n", f);
    fputs("  {\"family\": \"wgmma_latency\", \"series\": \"e\", \"x\": 256, \"value\": 5000, \"unit\": \"c\"},\n", f);
    fputs("  {\"family\": \"wgmma\", \"series\": \"f\", \"x\": 64, \"value\": 900, \"unit\": \"TFLOP/s\"}\n ]}\n", f);
    fclose(f);
    double mma = 0, wg = 0;
    CHECK(bv_probe_ceilings(path, &mma, &wg) == 0, "could not read %s", path);
    CHECK(mma == 639.75, "mma_sync ceiling %g, expected 639.75", mma);
    CHECK(wg == 967.25, "wgmma ceiling %g, expected 967.25", wg);
    remove(path);
    CHECK(bv_probe_ceilings("/nonexistent/cuops_probe.json", &mma, &wg) != 0, "missing file read");
    CHECK(isnan(mma) && isnan(wg), "missing file must leave NAN ceilings");
}

/* --variant NAME[:split_k=N]: the name and the option, and a refusal of
 * anything else (a typo must not time the variant without its option). */
static void test_variant_spec(void)
{
    char name[16];
    int split_k = -1;
    CHECK(bv_parse_variant_spec("w4a16_x", name, sizeof name, &split_k) == 0 &&
              strcmp(name, "w4a16_x") == 0 && split_k == 0,
          "plain name: '%s' split_k %d", name, split_k);
    CHECK(bv_parse_variant_spec("w4a16_x:split_k=1", name, sizeof name, &split_k) == 0 &&
              strcmp(name, "w4a16_x") == 0 && split_k == 1,
          "split_k=1: '%s' split_k %d", name, split_k);
    CHECK(bv_parse_variant_spec("v:split_k=12", name, sizeof name, &split_k) == 0 &&
              strcmp(name, "v") == 0 && split_k == 12,
          "split_k=12: '%s' split_k %d", name, split_k);
    static const char *const bad[] = {
        "",                    /* no name */
        ":split_k=2",          /* no name */
        "v:split_k=",          /* no number */
        "v:split_k=0",         /* not a split */
        "v:split_k=-3",        /* negative */
        "v:split_k=2x",        /* trailing junk */
        "v:splitk=2",          /* unknown option */
        "v:",                  /* empty option */
        "name_of_sixteen_:split_k=2", /* name longer than the buffer */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(bv_parse_variant_spec(bad[i], name, sizeof name, &split_k) == -1,
              "'%s' accepted as a variant spec", bad[i]);
}

/* The bench's number parsing: whole numbers in range, 2^e dimensions, and
 * a refusal of everything else (garbage must not become a silent 0 or 1). */
static void test_number_parsing(void)
{
    long long v = 0;
    CHECK(bv_parse_ll("20", 1, 100, &v) == 0 && v == 20, "20 -> %lld", v);
    CHECK(bv_parse_ll("010", 1, 100, &v) == 0 && v == 10, "010 -> %lld (decimal, not octal)", v);
    static const char *const bad_ll[] = {"", "20abc", "abc", "0", "101", "99999999999999999999", " ", "1.5",
                                         "0x10", " 5", "+5"};
    for (size_t i = 0; i < sizeof bad_ll / sizeof bad_ll[0]; i++)
        CHECK(bv_parse_ll(bad_ll[i], 1, 100, &v) == -1, "'%s' accepted in 1..100", bad_ll[i]);
    uint64_t u = 0;
    CHECK(bv_parse_u64("18446744073709551615", &u) == 0 && u == UINT64_MAX, "u64 max");
    CHECK(bv_parse_u64("0", &u) == 0 && u == 0, "u64 0");
    static const char *const bad_u[] = {"", "abc", "-1", " -1", " 5", "+5", "12x", "18446744073709551616"};
    for (size_t i = 0; i < sizeof bad_u / sizeof bad_u[0]; i++)
        CHECK(bv_parse_u64(bad_u[i], &u) == -1, "'%s' accepted as a seed", bad_u[i]);
    int64_t d = 0;
    static const struct { const char *s; int64_t want; } good_dim[] = {
        {"4096", 4096}, {"2^20", 1 << 20}, {"3^4", 81}, {"2^0", 1}, {"1", 1}};
    for (size_t i = 0; i < sizeof good_dim / sizeof good_dim[0]; i++) {
        const char *s = good_dim[i].s;
        CHECK(bv_parse_dim(s, s + strlen(s), &d) == 0 && d == good_dim[i].want, "'%s' -> %lld", s,
              (long long)d);
    }
    static const char *const bad_dim[] = {"", "2^", "^3", "0", "-4", "4k", "2^63", "2^-1",
                                          "99999999999999999999", "10^19"};
    for (size_t i = 0; i < sizeof bad_dim / sizeof bad_dim[0]; i++) {
        const char *s = bad_dim[i];
        CHECK(bv_parse_dim(s, s + strlen(s), &d) == -1, "'%s' accepted as a dimension", s);
    }
}

/* Which GEMM rows are timed L2-cold and against the copy ceiling, and how
 * many repetitions a series over rotating sets runs. */
static void test_memory_bound_and_series(void)
{
    /* H200-like ceilings: 700 TFLOP/s, 4300 GB/s: a ridge of ~163 FLOP/B */
    const double tf = 700.0, gb = 4300.0;
    CHECK(bench_gemm_memory_bound(1, 28672, 8192, 2, 2, tf, gb), "m = 1 is memory-bound");
    CHECK(bench_gemm_memory_bound(64, 4096, 4096, 2, 2, NAN, NAN), "m = 64 without ceilings");
    CHECK(bench_gemm_memory_bound(128, 4096, 4096, 2, 2, tf, gb),
          "128 x 4096 x 4096 (~124 FLOP/B) is memory-bound");
    CHECK(!bench_gemm_memory_bound(128, 4096, 4096, 2, 2, NAN, gb),
          "past m = 64 without a GEMM ceiling: compute-bound, as before");
    CHECK(!bench_gemm_memory_bound(256, 4096, 4096, 2, 2, tf, gb),
          "256 x 4096 x 4096 (~240 FLOP/B) is compute-bound");
    CHECK(!bench_gemm_memory_bound(1000, 1000, 1000, 2, 2, tf, gb), "1000^3 is compute-bound");
    CHECK(!bench_gemm_memory_bound(4096, 4096, 4096, 4, 4, 50.0, gb),
          "f32 4096^3 against the SGEMM ceiling is compute-bound");
    CHECK(bench_series_reps(10, 142) == 142, "quick reps over 142 sets: one per set");
    CHECK(bench_series_reps(500, 142) == 500, "more reps than sets: as asked");
    CHECK(bench_series_reps(3, 1) == 3, "one set: as asked");
    CHECK(bench_series_reps(20, 2) == 20, "two sets: as asked");
}

int main(void)
{
    tu_seed_from_env();
    test_gemm_accepts_right();
    test_gemm_rejects_wrong();
    test_dequant();
    test_rel();
    test_scan_reduce();
    test_stats();
    test_geomean_groups();
    test_json_escape();
    test_power_summary();
    test_board();
    test_probe_ceilings();
    test_variant_spec();
    test_number_parsing();
    test_memory_bound_and_series();
    return tu_finish("test_bench_logic");
}
