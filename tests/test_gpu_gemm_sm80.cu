/*
 * test_gpu_gemm_sm80.cu - correctness of every mma.sync GEMM variant
 * ("sm80_*" in cuops_variant_names("gemm")), each forced by name, against
 * the CPU backend.
 *
 * Covers: shapes that are non-multiples of every tile (1, 7, 17, 65, 129,
 * 1537, ...), ragged K, all four transposes on the variants that claim them
 * (and NOT_SUPPORTED on those that do not), f16/bf16 inputs x f16/bf16/f32
 * outputs, alpha/beta (beta == 0 with NaN-poisoned C, which must not be
 * read), leading dimensions larger than a row (odd ldc for the scalar store
 * path), StaggerU and raster flags, k == 0, misaligned operands refused,
 * and no write outside C's m x n window (padding and a guard tail checked
 * byte for byte). sm80_packed gets operands the other variants refuse (odd
 * and tight leading dimensions, bases off 16 bytes, in every layout, A or
 * B or both), must refuse a user workspace too small for its packs and
 * operands inside the workspace, and leaves what it reads unchanged. Large shapes are checked with random vectors (C·x against
 * A·(B·x) and xᵀ·C against (xᵀ·A)·B, in fp64) element by element.
 *
 * CUOPS_TEST_QUICK=1 (compute-sanitizer runs) keeps only the small shapes.
 * Without a CUDA device it prints SKIP and exits 0.
 */
#include <cuda_runtime.h>

#include "gpu_test_util.h"

static int quick_mode;
static size_t device_smem_optin;
static int device_major;

static size_t dsize(cuops_dtype_t t) { return t == CUOPS_DTYPE_F32 ? 4 : 2; }
static int64_t round_up8(int64_t v) { return (v + 7) / 8 * 8; }
static int has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* Which transposes a variant claims (by its name; see gemm_sm80_table.cu). */
static int variant_all_layouts(const char *name)
{
    return strcmp(name, "sm80_128x256x32_s4") == 0 || strcmp(name, "sm80_lean_128x256x32_s4") == 0 ||
           strcmp(name, "sm80_packed") == 0 ||
           strcmp(name, "sm80_128x256x32_s4_stagger") == 0 ||
           strcmp(name, "sm80_128x256x32_s4_noswizzle") == 0;
}

/* Whether a variant must serve its layouts on this GPU: the large-smem ones
 * need >= 200 KB per block, the warp-specialized ones (sm80_ws_*, setmaxnreg)
 * sm_90. */
static int variant_runs_here(const char *name)
{
    if (has_prefix(name, "sm80_ws_") && device_major != 9) return 0;
    return device_smem_optin >= 200 * 1024;
}

typedef struct gemm_case {
    const char *variant;
    cuops_op_t ta, tb;
    int64_t m, n, k;
    cuops_dtype_t ab, ct;
    float alpha, beta;
    unsigned flags;
    int ldc_extra;   /* ldc = n + ldc_extra */
    int vector_check;/* 1: random-vector check instead of the full CPU GEMM */
    int64_t lda, ldb;/* 0: a row rounded up to 8 elements, plus 8 */
    int a_off, b_off;/* elements between a 256-byte aligned buffer and A / B */
} gemm_case;

static double op_a(const void *a, cuops_dtype_t t, cuops_op_t ta, int64_t lda, int64_t i, int64_t l)
{
    return tu_get(a, t, (size_t)(ta == CUOPS_OP_N ? i * lda + l : l * lda + i));
}
static double op_b(const void *b, cuops_dtype_t t, cuops_op_t tb, int64_t ldb, int64_t l, int64_t j)
{
    return tu_get(b, t, (size_t)(tb == CUOPS_OP_N ? l * ldb + j : j * ldb + l));
}

/* Runs one case; returns 1 when the variant ran (and was checked). */
static int run_case(cuops_handle_t gpu, cuops_handle_t cpu, const gemm_case *cs)
{
    const int64_t m = cs->m, n = cs->n, k = cs->k;
    const int64_t lda = cs->lda ? cs->lda : round_up8(cs->ta == CUOPS_OP_N ? k : m) + 8;
    const int64_t ldb = cs->ldb ? cs->ldb : round_up8(cs->tb == CUOPS_OP_T ? k : n) + 8;
    const int64_t ldc = n + cs->ldc_extra;
    const int64_t a_rows = cs->ta == CUOPS_OP_N ? m : k, b_rows = cs->tb == CUOPS_OP_T ? n : k;
    const size_t a_elems = (size_t)(a_rows > 0 ? a_rows : 1) * lda;
    const size_t b_elems = (size_t)(b_rows > 0 ? b_rows : 1) * ldb;
    const size_t guard = 64;
    const size_t c_elems = (size_t)m * ldc + guard;
    const size_t es = dsize(cs->ab), cs_ = dsize(cs->ct);

    void *ha = malloc(a_elems * es), *hb = malloc(b_elems * es);
    void *hc0 = malloc(c_elems * cs_), *hc = malloc(c_elems * cs_), *href = malloc(c_elems * cs_);
    tu_fill_float(ha, cs->ab, a_elems, -1.0, 1.0);
    tu_fill_float(hb, cs->ab, b_elems, -1.0, 1.0);
    if (cs->beta != 0.0f) {
        tu_fill_float(hc0, cs->ct, c_elems, -1.0, 1.0);
    } else {
        tu_poison(hc0, cs->ct, c_elems);
    }
    memcpy(href, hc0, c_elems * cs_);

    void *da_buf = NULL, *db_buf = NULL, *dc = NULL;
    cudaMalloc(&da_buf, (a_elems + cs->a_off) * es);
    cudaMalloc(&db_buf, (b_elems + cs->b_off) * es);
    cudaMalloc(&dc, c_elems * cs_);
    void *da = (char *)da_buf + (size_t)cs->a_off * es, *db = (char *)db_buf + (size_t)cs->b_off * es;
    cudaMemcpy(da, ha, a_elems * es, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, b_elems * es, cudaMemcpyHostToDevice);
    cudaMemcpy(dc, hc0, c_elems * cs_, cudaMemcpyHostToDevice);

    cuops_options_t opt = {0};
    opt.variant = cs->variant;
    opt.flags = cs->flags;
    const int nt = cs->ta == CUOPS_OP_N && cs->tb == CUOPS_OP_T;
    const int claimed = nt || variant_all_layouts(cs->variant);
    cuops_status_t st = cuops_gemm_ex(gpu, cs->ta, cs->tb, m, n, k, cs->alpha, da, lda, db, ldb,
                                      cs->beta, dc, ldc, cs->ab, cs->ct, &opt);
    cudaError_t sync = cudaDeviceSynchronize();
    CHECK(sync == cudaSuccess, "%s: CUDA error %s", cs->variant, cudaGetErrorString(sync));
    int ran = 0, cannot_run_here = 0;
    char what[256];
    snprintf(what, sizeof what,
             "%s %c%c m=%lld n=%lld k=%lld %s->%s a=%g b=%g flags=%u ldc=+%d lda=%lld+%d "
             "ldb=%lld+%d",
             cs->variant, cs->ta == CUOPS_OP_N ? 'N' : 'T', cs->tb == CUOPS_OP_N ? 'N' : 'T',
             (long long)m, (long long)n, (long long)k, cs->ab == CUOPS_DTYPE_F16 ? "f16" : "bf16",
             cs->ct == CUOPS_DTYPE_F32 ? "f32" : cs->ct == CUOPS_DTYPE_F16 ? "f16" : "bf16",
             cs->alpha, cs->beta, cs->flags, cs->ldc_extra, (long long)lda, cs->a_off,
             (long long)ldb, cs->b_off);
    if (!claimed) {
        CHECK(st == CUOPS_STATUS_NOT_SUPPORTED, "%s: a layout it does not claim gave %s", what,
              cuops_status_string(st));
    } else if (st == CUOPS_STATUS_NOT_SUPPORTED && !variant_runs_here(cs->variant)) {
        /* a large-smem variant on a GPU that cannot hold it, or an sm_90-only
         * one elsewhere: skipped, not passed */
        cannot_run_here = 1;
    } else {
        CHECK(st == CUOPS_STATUS_SUCCESS, "%s: %s (%s)", what, cuops_status_string(st),
              cuops_last_error(gpu));
        if (st == CUOPS_STATUS_SUCCESS) {
            ran = 1;
            /* (k == 0 may be answered by the API layer without a kernel) */
            if (k > 0)
                CHECK(strcmp(cuops_last_kernel(gpu), cs->variant) == 0, "%s: ran %s", what,
                  cuops_last_kernel(gpu));
        }
    }
    cudaMemcpy(hc, dc, c_elems * cs_, cudaMemcpyDeviceToHost);
    if (cs->a_off || cs->b_off || cs->lda || cs->ldb) {
        /* the packs read A and B in place: both unchanged, byte for byte */
        void *ca = malloc(a_elems * es), *cb = malloc(b_elems * es);
        cudaMemcpy(ca, da, a_elems * es, cudaMemcpyDeviceToHost);
        cudaMemcpy(cb, db, b_elems * es, cudaMemcpyDeviceToHost);
        CHECK(memcmp(ca, ha, a_elems * es) == 0 && memcmp(cb, hb, b_elems * es) == 0,
              "%s: A or B changed", what);
        free(ca);
        free(cb);
    }

    if (cannot_run_here) {
        SKIP("%s: the variant cannot run on this GPU", what);
        CHECK(memcmp(hc, hc0, c_elems * cs_) == 0, "%s: C changed by a refused call", what);
    } else if (!ran) {
        /* nothing may have been written */
        CHECK(memcmp(hc, hc0, c_elems * cs_) == 0, "%s: C changed by a refused call", what);
    } else {
        /* outside the m x n window: byte-identical (row padding and guard tail) */
        int outside_ok = 1;
        for (int64_t r = 0; r < m && outside_ok; r++)
            if (ldc > n && memcmp((char *)hc + (r * ldc + n) * cs_, (char *)hc0 + (r * ldc + n) * cs_,
                                  (size_t)(ldc - n) * cs_) != 0)
                outside_ok = 0;
        if (memcmp((char *)hc + (size_t)m * ldc * cs_, (char *)hc0 + (size_t)m * ldc * cs_,
                   guard * cs_) != 0)
            outside_ok = 0;
        CHECK(outside_ok, "%s: wrote outside C's m x n window", what);

        if (!cs->vector_check) {
            CHECK_STATUS(cuops_gemm(cpu, cs->ta, cs->tb, m, n, k, cs->alpha, ha, lda, hb, ldb,
                                    cs->beta, href, ldc, cs->ab, cs->ct),
                         CUOPS_STATUS_SUCCESS);
            double ss = 0.0, se = 0.0;
            for (int64_t r = 0; r < m; r++)
                for (int64_t c = 0; c < n; c++) {
                    double v = tu_get(href, cs->ct, (size_t)(r * ldc + c));
                    ss += v * v;
                }
            const double rms = sqrt(ss / (double)(m * n)) + 1e-30;
            long bad = 0;
            for (int64_t r = 0; r < m; r++)
                for (int64_t c = 0; c < n; c++) {
                    const double ref = tu_get(href, cs->ct, (size_t)(r * ldc + c));
                    const double out = tu_get(hc, cs->ct, (size_t)(r * ldc + c));
                    const double err = fabs(out - ref);
                    se += (out - ref) * (out - ref);
                    if (!(err <= 0.02 * fabs(ref) + 0.01 * rms)) {
                        if (bad < 5)
                            fprintf(stderr, "  %s: C[%lld,%lld] = %g, expected %g\n", what,
                                    (long long)r, (long long)c, out, ref);
                        bad++;
                    }
                }
            CHECK(bad == 0, "%s: %ld of %lld elements wrong", what, bad, (long long)(m * n));
            CHECK(sqrt(se) <= 1e-2 * sqrt(ss) + 1e-30, "%s: relative error %g", what,
                  sqrt(se / (ss + 1e-300)));
        } else {
            /* y = C x and yref = alpha A (B x) + beta C0 x; z = x2' C and zref likewise */
            double *x = (double *)malloc(sizeof(double) * n), *x2 = (double *)malloc(sizeof(double) * m);
            double *bx = (double *)calloc((size_t)(k > 0 ? k : 1), sizeof(double));
            double *xa = (double *)calloc((size_t)(k > 0 ? k : 1), sizeof(double));
            double *y = (double *)calloc(m, sizeof(double)), *yr = (double *)calloc(m, sizeof(double));
            double *z = (double *)calloc(n, sizeof(double)), *zr = (double *)calloc(n, sizeof(double));
            for (int64_t j = 0; j < n; j++) x[j] = tu_rand_uniform(-1, 1);
            for (int64_t i = 0; i < m; i++) x2[i] = tu_rand_uniform(-1, 1);
            for (int64_t l = 0; l < k; l++)
                for (int64_t j = 0; j < n; j++) bx[l] += op_b(hb, cs->ab, cs->tb, ldb, l, j) * x[j];
            for (int64_t i = 0; i < m; i++)
                for (int64_t l = 0; l < k; l++) xa[l] += x2[i] * op_a(ha, cs->ab, cs->ta, lda, i, l);
            for (int64_t i = 0; i < m; i++) {
                double s = 0.0;
                for (int64_t l = 0; l < k; l++) s += op_a(ha, cs->ab, cs->ta, lda, i, l) * bx[l];
                yr[i] = cs->alpha * s;
            }
            for (int64_t j = 0; j < n; j++) {
                double s = 0.0;
                for (int64_t l = 0; l < k; l++) s += xa[l] * op_b(hb, cs->ab, cs->tb, ldb, l, j);
                zr[j] = cs->alpha * s;
            }
            long nan_count = 0;
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    const double c = tu_get(hc, cs->ct, (size_t)(i * ldc + j));
                    if (c != c) nan_count++;
                    y[i] += c * x[j];
                    z[j] += x2[i] * c;
                    if (cs->beta != 0.0f) {
                        const double c0 = tu_get(hc0, cs->ct, (size_t)(i * ldc + j));
                        yr[i] += cs->beta * c0 * x[j];
                        zr[j] += cs->beta * x2[i] * c0;
                    }
                }
            CHECK(nan_count == 0, "%s: %ld NaN outputs", what, nan_count);
            double sy = 0.0, sz = 0.0;
            for (int64_t i = 0; i < m; i++) sy += yr[i] * yr[i];
            for (int64_t j = 0; j < n; j++) sz += zr[j] * zr[j];
            const double rms_y = sqrt(sy / (double)m) + 1e-30, rms_z = sqrt(sz / (double)n) + 1e-30;
            long bad = 0;
            for (int64_t i = 0; i < m; i++)
                if (!(fabs(y[i] - yr[i]) <= 0.01 * rms_y)) {
                    if (bad < 5)
                        fprintf(stderr, "  %s: (C x)[%lld] = %g, expected %g\n", what, (long long)i,
                                y[i], yr[i]);
                    bad++;
                }
            for (int64_t j = 0; j < n; j++)
                if (!(fabs(z[j] - zr[j]) <= 0.01 * rms_z)) {
                    if (bad < 5)
                        fprintf(stderr, "  %s: (x' C)[%lld] = %g, expected %g\n", what,
                                (long long)j, z[j], zr[j]);
                    bad++;
                }
            CHECK(bad == 0, "%s: %ld random-vector rows/columns wrong", what, bad);
            free(x); free(x2); free(bx); free(xa); free(y); free(yr); free(z); free(zr);
        }
    }
    cudaFree(da_buf);
    cudaFree(db_buf);
    cudaFree(dc);
    free(ha); free(hb); free(hc0); free(hc); free(href);
    return ran;
}

/* A forced sm80 variant must refuse operands cp.async cannot read. */
static void check_refusals(cuops_handle_t gpu, const char *variant)
{
    const int64_t m = 40, n = 48, k = 64;
    void *da = NULL, *db = NULL, *dc = NULL;
    cudaMalloc(&da, 4096 * 2 * 2);
    cudaMalloc(&db, 4096 * 2 * 2);
    cudaMalloc(&dc, 4096 * 4);
    cuops_options_t opt = {0};
    opt.variant = variant;
    /* lda not a multiple of 8 */
    CHECK_STATUS(cuops_gemm_ex(gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, da, k + 1, db, k, 0.0f,
                               dc, n, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
    /* B not 16-byte aligned */
    CHECK_STATUS(cuops_gemm_ex(gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, da, k,
                               (const char *)db + 2, k, 0.0f, dc, n, CUOPS_DTYPE_F16,
                               CUOPS_DTYPE_F32, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
    /* f32 inputs are not a tensor-core type */
    CHECK_STATUS(cuops_gemm_ex(gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, da, k, db, k, 0.0f, dc,
                               n, CUOPS_DTYPE_F32, CUOPS_DTYPE_F32, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
}

/* Whether cp.async reads an operand in place: a 16-byte base, ld % 8 == 0 */
static int in_place(int off, int64_t ld) { return off % 8 == 0 && ld % 8 == 0; }

/*
 * sm80_packed on operands the other variants refuse. Placements per layout
 * and shape: both leading dimensions tight (the row length: odd k, m or n
 * go off 8 elements), A alone off 16 bytes, B alone off 16 bytes with an
 * odd ld, both off 16 bytes with padded odd lds. Returns the cases that ran.
 */
static int run_packed_cases(cuops_handle_t gpu, cuops_handle_t cpu)
{
    static const int64_t shapes[][3] = {
        {1, 1, 1},     {7, 17, 65},   {17, 7, 33},    {65, 129, 17},  {129, 65, 257},
        {1, 300, 129}, {300, 1, 70},  {257, 263, 95}, {200, 136, 999}, {64, 1000, 4095},
        /* k % 8 == 0 at small m: an A packed alone goes to the decode kernels */
        {16, 300, 256}, {40, 1000, 512},
    };
    static const int64_t medium[][3] = {{1537, 257, 129}, {513, 600, 1025}, {129, 1537, 201}};
    const cuops_op_t ops[2] = {CUOPS_OP_N, CUOPS_OP_T};
    const cuops_dtype_t abs_[2] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
    const cuops_dtype_t cts[3] = {CUOPS_DTYPE_F32, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
    const int n_shapes = (int)(sizeof shapes / sizeof shapes[0]);
    const int n_medium = quick_mode ? 0 : (int)(sizeof medium / sizeof medium[0]);
    int ran = 0, rot = 0, packed = 0;
    for (int s = 0; s < n_shapes + n_medium; s++)
        for (int lay = 0; lay < 4; lay++)
            for (int place = 0; place < 4; place++, rot++) {
                const int64_t *sh = s < n_shapes ? shapes[s] : medium[s - n_shapes];
                gemm_case cs;
                memset(&cs, 0, sizeof cs);
                cs.variant = "sm80_packed";
                cs.ta = ops[lay % 2];
                cs.tb = ops[lay / 2];
                cs.m = sh[0];
                cs.n = sh[1];
                cs.k = sh[2];
                const int64_t a_row = cs.ta == CUOPS_OP_N ? cs.k : cs.m;
                const int64_t b_row = cs.tb == CUOPS_OP_T ? cs.k : cs.n;
                switch (place) {
                case 0: cs.lda = a_row; cs.ldb = b_row; break;
                case 1: cs.a_off = 1 + rot % 7; break;
                case 2: cs.b_off = 3; cs.ldb = b_row | 1; break;
                default:
                    cs.a_off = 5;
                    cs.b_off = 2;
                    cs.lda = round_up8(a_row) + 3;
                    cs.ldb = round_up8(b_row) + 1;
                    break;
                }
                cs.ab = abs_[rot % 2];
                cs.ct = cts[(rot / 2) % 3];
                cs.alpha = (rot % 3 == 0) ? 1.0f : 0.75f;
                cs.beta = (rot % 4 == 1) ? 0.5f : (rot % 4 == 3 ? -1.0f : 0.0f);
                cs.ldc_extra = (rot % 2) ? 3 : 0;
                cs.flags = (rot % 5 == 2) ? CUOPS_FLAG_STAGGER_K : 0u;
                const int64_t lda = cs.lda ? cs.lda : round_up8(a_row) + 8;
                const int64_t ldb = cs.ldb ? cs.ldb : round_up8(b_row) + 8;
                if (!in_place(cs.a_off, lda) || !in_place(cs.b_off, ldb)) packed++;
                ran += run_case(gpu, cpu, &cs);
            }
    CHECK(packed >= 3 * rot / 4, "sm80_packed: only %d of %d cases had an operand to pack", packed,
          rot);
    if (!quick_mode) {
        /* several CTA waves with odd k and tight rows (4095^3-like), NT and
         * NN; random-vector check */
        for (int lay = 0; lay < 2; lay++) {
            gemm_case cs;
            memset(&cs, 0, sizeof cs);
            cs.variant = "sm80_packed";
            cs.ta = CUOPS_OP_N;
            cs.tb = lay ? CUOPS_OP_N : CUOPS_OP_T;
            cs.m = lay ? 4095 : 1029;
            cs.n = lay ? 1029 : 4095;
            cs.k = 2049;
            cs.lda = cs.k;
            cs.ldb = lay ? cs.n : cs.k;
            cs.ab = abs_[lay];
            cs.ct = cts[lay];
            cs.alpha = 1.0f;
            cs.beta = lay ? 0.25f : 0.0f;
            cs.vector_check = 1;
            ran += run_case(gpu, cpu, &cs);
        }
    }
    return ran;
}

/* sm80_packed must decline (C untouched) where its packs have no room: a
 * user workspace too small, or an operand inside the workspace; auto then
 * still serves the call. */
static void check_packed_refusals(cuops_handle_t gpu)
{
    const int64_t m = 40, n = 48, k = 63; /* k odd: rows off 16 bytes */
    void *da = NULL, *db = NULL, *dc = NULL, *ws = NULL;
    cudaMalloc(&da, m * k * 2);
    cudaMalloc(&db, n * k * 2);
    cudaMalloc(&dc, m * n * 4);
    cudaMalloc(&ws, 1 << 20);
    void *ha = malloc(m * k * 2), *hb = malloc(n * k * 2);
    tu_fill_float(ha, CUOPS_DTYPE_F16, (size_t)(m * k), -1.0, 1.0);
    tu_fill_float(hb, CUOPS_DTYPE_F16, (size_t)(n * k), -1.0, 1.0);
    cudaMemcpy(da, ha, m * k * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, n * k * 2, cudaMemcpyHostToDevice);
    cudaMemset(dc, 0x7f, m * n * 4);
    cuops_options_t opt = {0};
    opt.variant = "sm80_packed";
    /* a workspace smaller than the packs (2 x ~6 KB) */
    CHECK_STATUS(cuops_set_workspace(gpu, ws, 1024), CUOPS_STATUS_SUCCESS);
    CHECK_STATUS(cuops_gemm_ex(gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, da, k, db, k, 0.0f, dc,
                               n, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
    float *hc = (float *)malloc(m * n * 4);
    cudaMemcpy(hc, dc, m * n * 4, cudaMemcpyDeviceToHost);
    int untouched = 1;
    for (int64_t i = 0; i < m * n; i++) untouched &= ((uint32_t *)hc)[i] == 0x7f7f7f7fu;
    CHECK(untouched, "sm80_packed: C changed by a call refused for its workspace");
    CHECK_STATUS(cuops_gemm(gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, da, k, db, k, 0.0f, dc, n,
                            CUOPS_DTYPE_F16, CUOPS_DTYPE_F32),
                 CUOPS_STATUS_SUCCESS);
    CHECK(strcmp(cuops_last_kernel(gpu), "sm80_packed") != 0,
          "auto ran sm80_packed with a 1 KB workspace");
    /* the same call, its result checked: C[0][j] against the fp64 sum */
    cudaMemcpy(hc, dc, m * n * 4, cudaMemcpyDeviceToHost);
    long bad = 0;
    for (int64_t i = 0; i < m; i += 13)
        for (int64_t j = 0; j < n; j++) {
            double ref = 0.0;
            for (int64_t l = 0; l < k; l++)
                ref += tu_get(ha, CUOPS_DTYPE_F16, (size_t)(i * k + l)) *
                       tu_get(hb, CUOPS_DTYPE_F16, (size_t)(j * k + l));
            if (!(fabs(hc[i * n + j] - ref) <= 1e-3 * (1.0 + fabs(ref)))) bad++;
        }
    CHECK(bad == 0, "auto with a 1 KB workspace: %ld wrong elements", bad);
    /* A inside a workspace large enough for the packs */
    CHECK_STATUS(cuops_set_workspace(gpu, ws, 1 << 20), CUOPS_STATUS_SUCCESS);
    cudaMemcpy((char *)ws + 2, ha, m * k * 2, cudaMemcpyHostToDevice);
    CHECK_STATUS(cuops_gemm_ex(gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, (char *)ws + 2, k, db,
                               k, 0.0f, dc, n, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
    /* with room and the operands outside it, the forced call runs */
    CHECK_STATUS(cuops_gemm_ex(gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, da, k, db, k, 0.0f, dc,
                               n, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, &opt),
                 CUOPS_STATUS_SUCCESS);
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "sm80_packed refusals: CUDA error");
    CHECK_STATUS(cuops_set_workspace(gpu, NULL, 0), CUOPS_STATUS_SUCCESS);
    free(ha);
    free(hb);
    free(hc);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(ws);
}

int main(void)
{
    tu_seed_from_env();
    quick_mode = getenv("CUOPS_TEST_QUICK") != NULL;
    cuops_handle_t gpu = NULL, cpu = NULL;
    if (!tu_gpu_handle(&gpu)) return tu_finish("test_gpu_gemm_sm80");
    CHECK_STATUS(cuops_create(&cpu, CUOPS_DEVICE_CPU), CUOPS_STATUS_SUCCESS);
    if (!gpu || !cpu) return tu_finish("test_gpu_gemm_sm80");

    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    device_smem_optin = prop.sharedMemPerBlockOptin;
    device_major = prop.major;
    if (prop.major < 8) {
        SKIP("mma.sync variants need sm_80+, device is sm_%d%d", prop.major, prop.minor);
        cuops_destroy(gpu);
        cuops_destroy(cpu);
        return tu_finish("test_gpu_gemm_sm80");
    }

    const char *const *names = NULL;
    int count = 0;
    CHECK_STATUS(cuops_variant_names("gemm", &names, &count), CUOPS_STATUS_SUCCESS);
    const char *variants[64];
    int nv = 0;
    /* CUOPS_TEST_VARIANT=name: that variant only (a sanitizer run of one kernel) */
    const char *only = getenv("CUOPS_TEST_VARIANT");
    for (int i = 0; i < count && nv < 64; i++)
        if (has_prefix(names[i], "sm80_") && (!only || strcmp(names[i], only) == 0))
            variants[nv++] = names[i];
    if (only)
        CHECK(nv == 1, "CUOPS_TEST_VARIANT=%s is not an sm80_ gemm variant", only);
    else
        CHECK(nv >= 17, "expected the 17 sm80_ variants in cuops_variant_names(\"gemm\"), found %d",
              nv);

    static const int64_t small_shapes[][3] = {
        {1, 1, 1},     {7, 17, 65},   {17, 7, 33},    {65, 129, 17},  {129, 65, 257},
        {1, 300, 129}, {300, 1, 70},  {257, 263, 95}, {130, 520, 64}, {200, 136, 1000},
    };
    static const int64_t medium_shapes[][3] = {
        {1537, 257, 129}, {129, 1537, 200}, {513, 600, 1025},
    };
    const cuops_op_t ops[2] = {CUOPS_OP_N, CUOPS_OP_T};
    const cuops_dtype_t abs_[2] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
    const cuops_dtype_t cts[3] = {CUOPS_DTYPE_F32, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
    const int n_small = (int)(sizeof small_shapes / sizeof small_shapes[0]);
    const int n_medium = (int)(sizeof medium_shapes / sizeof medium_shapes[0]);

    int ran_total = 0;
    for (int v = 0; v < nv; v++) {
        const char *name = variants[v];
        int ran = 0, rot = 0;
        const int packed = strcmp(name, "sm80_packed") == 0;
        if (packed)
            check_packed_refusals(gpu);
        else
            check_refusals(gpu, name);
        /* the kernels the dispatch prefers get every dtype pair and the
         * 4096^3 steady state */
        const int full = strcmp(name, "sm80_128x256x32_s4") == 0 ||
                         strcmp(name, "sm80_lean_128x256x32_s4") == 0 ||
                         strcmp(name, "sm80_lean_128x256x64_s3") == 0 ||
                         strcmp(name, "sm80_ws_128x256x64_s4") == 0;
        /* small shapes: every layout; dtype/alpha/beta/ldc rotate (the tuned
         * variant gets every dtype pair) */
        for (int s = 0; s < n_small; s++)
            for (int ia = 0; ia < 2; ia++)
                for (int ib = 0; ib < 2; ib++) {
                    const int pairs = full ? 6 : 1;
                    for (int pc = 0; pc < pairs; pc++, rot++) {
                        gemm_case cs;
                        memset(&cs, 0, sizeof cs);
                        cs.variant = name;
                        cs.ta = ops[ia];
                        cs.tb = ops[ib];
                        cs.m = small_shapes[s][0];
                        cs.n = small_shapes[s][1];
                        cs.k = small_shapes[s][2];
                        const int sel = full ? pc : rot;
                        cs.ab = abs_[sel % 2];
                        cs.ct = cts[(sel / 2) % 3];
                        cs.alpha = (rot % 3 == 0) ? 1.0f : 0.75f;
                        cs.beta = (rot % 4 == 1) ? 0.5f : (rot % 4 == 3 ? -1.0f : 0.0f);
                        cs.ldc_extra = (rot % 2) ? 3 : 0;
                        cs.flags = (rot % 5 == 2) ? CUOPS_FLAG_STAGGER_K
                                                  : (rot % 5 == 4 ? CUOPS_FLAG_NO_SWIZZLE : 0u);
                        ran += run_case(gpu, cpu, &cs);
                    }
                }
        if (!quick_mode) {
            for (int s = 0; s < n_medium; s++, rot++) {
                gemm_case cs;
                memset(&cs, 0, sizeof cs);
                cs.variant = name;
                cs.ta = variant_all_layouts(name) ? ops[s % 2] : CUOPS_OP_N;
                cs.tb = variant_all_layouts(name) ? ops[(s / 2 + 1) % 2] : CUOPS_OP_T;
                cs.m = medium_shapes[s][0];
                cs.n = medium_shapes[s][1];
                cs.k = medium_shapes[s][2];
                cs.ab = abs_[rot % 2];
                cs.ct = cts[rot % 3];
                cs.alpha = 1.25f;
                cs.beta = (s == 1) ? 0.5f : 0.0f;
                cs.ldc_extra = s == 2 ? 5 : 0;
                cs.flags = s == 2 ? CUOPS_FLAG_STAGGER_K : 0u;
                ran += run_case(gpu, cpu, &cs);
            }
            /* large: several CTA waves, ragged everything; random-vector check */
            gemm_case cs;
            memset(&cs, 0, sizeof cs);
            cs.variant = name;
            cs.ta = CUOPS_OP_N;
            cs.tb = CUOPS_OP_T;
            cs.m = 1029;
            cs.n = 4095;
            cs.k = 2049;
            cs.ab = abs_[v % 2];
            cs.ct = cts[v % 3];
            cs.alpha = 1.0f;
            cs.beta = (v % 2) ? 0.25f : 0.0f;
            cs.flags = (v % 3 == 1) ? CUOPS_FLAG_STAGGER_K : 0u;
            cs.vector_check = 1;
            ran += run_case(gpu, cpu, &cs);
            if (full) {
                /* steady state of the tuned kernel, every layout */
                for (int ia = 0; ia < 2; ia++)
                    for (int ib = 0; ib < 2; ib++) {
                        cs.ta = ops[ia];
                        cs.tb = ops[ib];
                        cs.m = cs.n = cs.k = 4096;
                        cs.ab = abs_[(ia + ib) % 2];
                        cs.ct = cts[(2 * ia + ib) % 3];
                        cs.beta = 0.0f;
                        cs.flags = 0;
                        ran += run_case(gpu, cpu, &cs);
                    }
            }
        }
        if (packed) ran += run_packed_cases(gpu, cpu);
        /* k == 0: C = beta * C */
        {
            gemm_case cs;
            memset(&cs, 0, sizeof cs);
            cs.variant = name;
            cs.ta = CUOPS_OP_N;
            cs.tb = CUOPS_OP_T;
            cs.m = 70;
            cs.n = 33;
            cs.k = 0;
            cs.ab = CUOPS_DTYPE_F16;
            cs.ct = CUOPS_DTYPE_F32;
            cs.alpha = 1.0f;
            cs.beta = 0.5f;
            run_case(gpu, cpu, &cs); /* the API may answer k == 0 without a kernel */
        }
        fprintf(stderr, "%s: %d cases ran\n", name, ran);
        if (variant_runs_here(name)) CHECK(ran > 0, "%s never ran", name);
        ran_total += ran;
    }
    CHECK(ran_total > 0, "no sm80 variant ran");

    cuops_destroy(gpu);
    cuops_destroy(cpu);
    return tu_finish("test_gpu_gemm_sm80");
}
