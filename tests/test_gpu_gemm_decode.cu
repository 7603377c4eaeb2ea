/*
 * test_gpu_gemm_decode.cu - the decode GEMM variants (decode_splitk_m8, _m16,
 * _m32, _m64: C[m,n] = alpha * A[m,k] * B[n,k]^T + beta * C, m <= 64, and
 * decode_realign_m8 to _m64, the same for operand rows off 16 bytes) on the
 * GPU against the CPU reference backend.
 *
 * Every case: fresh random A and B with NaN in their row padding (a kernel
 * reading past k shows it). Every other case allocates A and B with exactly
 * rows x ld elements (no trailing slack: a read past the last row leaves the
 * allocation, which compute-sanitizer reports and a 2 MiB-sized weight may
 * fault on); the others carry 8 trailing NaN elements. C is surrounded by a
 * guard band of sentinels, has sentinels in its own row padding, and its
 * m x n block is NaN-poisoned when beta == 0 (must not be read) or random
 * when beta != 0. C starts 29 elements into its buffer (no 16-byte
 * alignment), except in test_aligned_c and the second pass of
 * test_narrow_rows, which give the Hopper cluster and narrow forms the
 * aligned C their fast stores need (align_c). The CPU reference runs once
 * per case; then each forced variant and auto run on the same inputs, each
 * twice: a variant whose m tile is below m must answer NOT_SUPPORTED, the
 * others must succeed, give
 * the same bytes both times, leave every byte outside the m x n block
 * untouched, hold no NaN, and match the reference element by element within
 *     2 (E + u_c (|ref| + E)) + tiny_c,
 *     E = |alpha| 2^-22 (k/8 + 16) |A_i| |B_j| + 2^-23 (|alpha| |A_i| |B_j| + |beta c0|)
 * where |A_i| |B_j| (row norms, Cauchy-Schwarz) bounds sum_p |a_ip b_jp|,
 * (k/8 + 16) counts the fp32 accumulation steps along any path (mma steps,
 * warp and split sums) with margin, and u_c is one ulp of the output type
 * relative to the value (2^-10 f16, 2^-7 bf16, 2^-23 f32). The bound grows
 * with k as the kernel's rounding does, and stays far below the error of a
 * wrong or missing column of K.
 *
 * Split-K and stream-K: the test hands the handle a user workspace filled
 * with NaN bytes before every call and counts afterwards which words changed.
 * A forced split_k >= 2 (with two or more 32-column chunks) must write
 * partials there and split_k = 1 must not; a NaN partial read back by the
 * fix-up pass would show in C. The automatic plan must split some small-n
 * cases, and at m = 64, n = 14336, k = 4096 on a 132-SM part it must take
 * stream-K (896 tiles over 264 resident CTAs).
 *
 * Large shapes are checked with C x = alpha A (B x) + beta C0 x for a random
 * x in fp64 on the host, plus the CPU reference on column windows at both
 * ends and in the middle. Unsupported requests (m = 65, trans_b = N,
 * misaligned or badly strided operands, k not a multiple of 8, lda > 2^24,
 * f32 inputs) answer NOT_SUPPORTED when forced. On sm_90 the Hopper cluster
 * form also takes the weight stored [k, n] (trans_b = N) and x stored [k, m]
 * (trans_a = T; test_transposed).
 *
 * The decode_realign variants (test_realign) are the same split-K / stream-K
 * GEMM reading operand rows that do not start on 16 bytes in place. Their
 * cases start A and B 0 to 7 elements past a 16-byte boundary (NaN in the
 * elements before them, inside the allocation), with lda, ldb = k + 0, 1, 3
 * or 8 (a few k + 4), k from 1 to 4095 (mostly odd), m 1 to 64, n 1 to 4096 and one call
 * of 16 x 4100 x 4095; every other case allocates A and B to end exactly at
 * the last row's k-th element (no padding after it), so a read past either
 * operand's last element leaves the allocation, the others end in that
 * row's NaN padding and 8 NaN more. All dtype pairs, alpha != 1, beta 0 and
 * not, C 29 elements into its buffer, forced split_k 0, 1, 2, 3 and 64, and
 * k = 0. The checks are those above: NOT_SUPPORTED past the m tile, the
 * bound, C's guard band and padding untouched, the same bytes twice,
 * split_k = 1 writes no partials and a split over two or more chunks does,
 * with a 64-byte workspace the plan's own split runs unsplit and writes
 * none; and they refuse m = 65, trans_b = N, trans_a = T, f32 inputs and
 * lda > 2^24. Each decode_splitk variant must decline every such case with
 * a row off 16 bytes or k % 8 != 0. Where the weight's rows are off 16 bytes
 * (B's base, or ldb % 8 != 0) the Hopper forms must decline too (sm_90) and
 * auto must run the tightest decode_realign variant. With the weight's rows
 * on 16 bytes the Hopper cluster forms must serve (sm_90, k >= 1), packing
 * an x off the grid into the workspace: output checked, the same bytes
 * twice, no workspace written past x's copy. sm90_decode_shift (the cluster
 * form for a weight off 16 bytes) is forced on every realign case: where n
 * is a multiple of its row group (G ldb on 8 elements) and x fits the
 * workspace it must serve (the same checks), elsewhere decline; auto must
 * run it at m > 8 with n >= 8192 where it serves, the realigning kernel
 * otherwise. Where A alone is off,
 * or k % 8 != 0 with the weight's rows on 16 bytes, auto's pick is left
 * open: its result is
 * checked and what it ran is printed. With the weight's rows on 16 bytes and
 * k % 8 == 0 (A off or not) the realign variants must decline when forced
 * (on sm_90 the m32 and m64 ones with any k), and auto picks as in the
 * other sections where every row is on 16 bytes.
 * decode_realign_m16, _m32 and _m64 copy an x off the 16-byte grid onto it
 * in the workspace first: every call that ran one with x off the grid must have
 * changed at least that copy's words (m rows of k rounded up to 64), and
 * the split checks count the words past them; the default forms must make
 * such a copy somewhere.
 *
 * Without a CUDA device the test says SKIP and passes. CUOPS_TEST_QUICK=1
 * (the compute-sanitizer runs) keeps small shapes. CUOPS_TEST_SEED
 * reproduces a run.
 */
#include <cuda_runtime.h>

#include "gpu_test_util.h"

#define NUM_VARIANTS 4
#define AUTO_SLOT NUM_VARIANTS /* index of auto in the per-variant counters */

static cuops_handle_t g_gpu, g_cpu;
static int g_device_dead, g_quick, g_num_sms, g_sm_major;
static int64_t g_dram_gbps; /* peak DRAM bandwidth from the memory clock and bus width */
/* the Hopper decode kernel (gemm_sm90_decode.cu): forced on every case on
 * sm_90, where it must serve every case with k >= 1 (the cases keep lda, ldb
 * multiples of 8 and the operands 16-byte aligned) */
static const char *const k_wgmma = "sm90_decode_wgmma";
/* its narrow form (x as the wgmma A, 8-256-row tiles by n, all of K per
 * tile, k-blocks issued in pairs, CTAs persistent over the tiles): forced on
 * every case on sm_90 too */
static const char *const k_narrow = "sm90_decode_narrow";
/* the cluster form held to 128- or 64-row blocks whatever n (each with its
 * own split): forced on every case on sm_90 as well */
static const char *const k_fixed_rows[2] = {"sm90_decode_wgmma128", "sm90_decode_wgmma64"};
static const int64_t k_fixed_rows_n[2] = {128, 64};
#define WGMMA_SLOT (NUM_VARIANTS + 1)
#define NARROW_SLOT (NUM_VARIANTS + 2)
#define FIXED_SLOT (NUM_VARIANTS + 3) /* and + 4: k_fixed_rows[slot - FIXED_SLOT] */
/* the study forms of the weight's issue (gemm_sm90_decode.cu, SDW_ISSUE_*):
 * the cluster form one stage at a time and in interleaved pairs at every
 * block height, the narrow form one stage at a time (it issues pairs
 * itself); forced on every case on sm_90 */
#define NUM_ISSUE_FORMS 3
static const char *const k_issue_forms[NUM_ISSUE_FORMS] = {
    "sm90_decode_wgmma_single", "sm90_decode_wgmma_pairs64", "sm90_decode_narrow_single"};
#define ISSUE_SLOT (FIXED_SLOT + 2) /* k_issue_forms[slot - ISSUE_SLOT] */
/* the cluster form's variants (the narrow ones read x in place only; these
 * pack an x that TMA cannot read into the workspace first) */
static int is_cluster_form(const char *name)
{
    return !strcmp(name, k_wgmma) || !strcmp(name, k_fixed_rows[0]) ||
           !strcmp(name, k_fixed_rows[1]) || !strcmp(name, k_issue_forms[0]) ||
           !strcmp(name, k_issue_forms[1]);
}
static int g_issue_ran[NUM_ISSUE_FORMS];
static int g_fixed_ran[2], g_fixed_split[2]; /* cases each served; of those, split (auto or forced) */
static int g_narrow_ran, g_narrow_multi; /* cases it served; of those, with > 1 tile per CTA */
static unsigned long long g_narrow_rows_seen[33]; /* bit per tile height (rows / 8) it ran */
static int g_wgmma_ran, g_wgmma_split; /* cases it served; of those, with a forced split >= 2 */
static int g_auto_wgmma;               /* auto calls that ran it */
static int g_auto_narrow;              /* auto calls that ran the narrow form */

/* the narrow form's weight rows per tile: the fewest multiple of 8 that
 * covers n with one tile per SM, 8 to 256 (gemm_tuning.h) */
static int64_t narrow_rows(int64_t n)
{
    const int64_t sms = g_num_sms > 0 ? g_num_sms : 132;
    int64_t rows = (n + sms - 1) / sms;
    rows = (rows + 7) / 8 * 8;
    return rows < 8 ? 8 : rows > 256 ? 256 : rows;
}

/* rounds of tiles the narrow form's persistent CTAs take */
static int64_t narrow_rounds(int64_t n)
{
    const int64_t sms = g_num_sms > 0 ? g_num_sms : 132;
    const int64_t tiles = (n + narrow_rows(n) - 1) / narrow_rows(n);
    return (tiles + sms - 1) / sms;
}

/* the cluster form's rows per CTA: 128 where 256-row blocks cover under 3/4
 * of the SMs and 128-row blocks 3/4 to all of them, else 256 (gemm_tuning.h) */
static int64_t wgmma_rows(int64_t n)
{
    const int64_t sms = g_num_sms > 0 ? g_num_sms : 132;
    const int64_t b256 = (n + 255) / 256, b128 = (n + 127) / 128;
    return 4 * b256 < 3 * sms && 4 * b128 >= 3 * sms && b128 <= sms ? 128 : 256;
}

/* auto on sm_90 takes the narrow form when its tiles keep 3/4 of the SMs
 * busy (n >= 3/4 x rounds x SMs x rows per tile) and hold 32 rows or more;
 * with 4 TB/s of DRAM bandwidth or more (or an unknown one) also only where
 * the cluster form's blocks would cover under 3/4 of the SMs, and not where
 * 64-row blocks would cover at most half of them (gemm_tuning.h) */
static int auto_takes_narrow(int64_t n, int64_t k)
{
    const int64_t sms = g_num_sms > 0 ? g_num_sms : 132;
    const int64_t wrows = wgmma_rows(n);
    if (g_sm_major != 9 || k < 1) return 0;
    if (narrow_rows(n) < 32) return 0;
    const int fills = 4 * n >= 3 * narrow_rounds(n) * sms * narrow_rows(n);
    if (g_dram_gbps > 0 && g_dram_gbps < 4000) return fills;
    if (2 * ((n + 63) / 64) <= sms) return 0;
    if (4 * ((n + wrows - 1) / wrows) >= 3 * sms) return 0;
    return fills;
}

/* auto on sm_90 takes the Hopper kernel for every call it serves (k >= 1
 * here) that the narrow form does not take (gemm_tuning.h) */
static int auto_takes_wgmma(int64_t m, int64_t n, int64_t k)
{
    (void)m;
    (void)n;
    return g_sm_major == 9 && k >= 1;
}

static const char *const k_variants[NUM_VARIANTS] = {"decode_splitk_m8", "decode_splitk_m16",
                                                     "decode_splitk_m32", "decode_splitk_m64"};
static const int64_t k_variant_m[NUM_VARIANTS] = {8, 16, 32, 64};
static int g_ran[NUM_VARIANTS + 1];     /* calls served and checked, per variant and auto */
static int g_ws_used[NUM_VARIANTS + 1]; /* of those, calls that wrote split partials */
static int g_auto_plan_split;           /* calls with split_k = 0 that wrote partials */
/* the same split-K / stream-K decode GEMM reading rows off 16 bytes in place
 * (test_realign): slot v of a realign case runs k_realign[v] */
static const char *const k_realign[NUM_VARIANTS] = {"decode_realign_m8", "decode_realign_m16",
                                                    "decode_realign_m32", "decode_realign_m64"};
/* the kernels the realign cases force in slot v: k_realign, or with
 * CUOPS_TEST_REALIGN_FORM=study the study forms decode_realign_runs_hint_m8,
 * decode_realign_rr_nohint_m16 and decode_realign_nohint_m32 in slots 0-2,
 * with =study2 decode_realign_nohint_m8, decode_realign_rr_l2_128_m16 and
 * decode_realign_runs_hint_m32, with =study3 decode_realign_xinplace_m16,
 * _m32 and _m64 in slots 1-3 (auto is still expected to pick k_realign's) */
static const char *g_realign_forced[NUM_VARIANTS];
static int g_realign_ran[NUM_VARIANTS + 1]; /* realign cases served, per variant and auto */
static int g_realign_ws[NUM_VARIANTS + 1];  /* of those, calls that wrote split partials */
static int g_realign_plan_split;            /* forced realign calls with split_k = 0 that split */
static int g_auto_realign;                  /* auto calls that had to and did run decode_realign */
static int g_x_copies;                      /* decode_realign_m16-m64 calls that copied x onto the grid */
static int g_cluster_x_copies; /* Hopper cluster-form calls on realign cases that packed x (sm_90) */
/* sm90_decode_shift (the cluster form for a weight off 16 bytes, forced on
 * the realign cases, sm_90): cases served, of those with the weight's rows
 * in groups of 8 (odd ldb), with a partial last k-block, with x packed, and
 * cases it had to decline */
static int g_shift_ran, g_shift_g8, g_shift_tail, g_shift_x_copies, g_shift_declined;
static int g_auto_shift; /* auto calls that ran it (m > 8, n >= 8192, the weight off 16 bytes) */
static const char *const k_shift = "sm90_decode_shift";
/* what auto ran on the realign cases where the test leaves the pick open (A
 * alone off 16 bytes, or k % 8 != 0 with the weight on 16 bytes): a tally */
#define AUTO_OPEN_NAMES 8
static char g_auto_open_name[AUTO_OPEN_NAMES][64];
static int g_auto_open_count[AUTO_OPEN_NAMES];

/* ---- the workspace probe ---------------------------------------------------- */

/* A user workspace of NaN bytes: which words a call changed tells whether its
 * plan split a tile across CTAs (only then does the decode family use it). */
#define WS_BYTES ((size_t)64 << 20)
static unsigned *g_ws;
static size_t g_ws_room = WS_BYTES; /* bytes of it the handle was last given */
static unsigned long long *g_ws_count;

__global__ void count_changed_words(const unsigned *ws, size_t words, unsigned long long *count)
{
    unsigned long long local = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words;
         i += (size_t)gridDim.x * blockDim.x)
        local += ws[i] != 0xFFFFFFFFu;
    if (local) atomicAdd(count, local);
}

static void ws_poison(void) { cudaMemset(g_ws, 0xFF, WS_BYTES); }

static unsigned long long ws_changed(void)
{
    unsigned long long n = 0;
    cudaMemset(g_ws_count, 0, sizeof n);
    count_changed_words<<<264, 256>>>(g_ws, WS_BYTES / 4, g_ws_count);
    cudaMemcpy(&n, g_ws_count, sizeof n, cudaMemcpyDeviceToHost);
    return n;
}

/* ---- helpers ------------------------------------------------------------------ */

static size_t esize(cuops_dtype_t t) { return t == CUOPS_DTYPE_F32 ? 4 : 2; }
static const char *dname(cuops_dtype_t t)
{
    return t == CUOPS_DTYPE_F16 ? "f16" : t == CUOPS_DTYPE_BF16 ? "bf16" : "f32";
}
/* One ulp of the output type relative to the value, and its smallest step. */
static double ulp_rel(cuops_dtype_t ct)
{
    return ct == CUOPS_DTYPE_F16 ? 0x1p-10 : ct == CUOPS_DTYPE_BF16 ? 0x1p-7 : 0x1p-23;
}
static double ulp_tiny(cuops_dtype_t ct) { return ct == CUOPS_DTYPE_F16 ? 0x1p-24 : 1e-30; }

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

/* The tightest decode variant for m, which auto must pick on sm_80+. */
static int tightest_variant(int64_t m)
{
    for (int v = 0; v < NUM_VARIANTS; v++)
        if (m <= k_variant_m[v]) return v;
    return -1;
}

/* Chunks of 32 columns: a forced split_k >= 2 splits only when there are two. */
static int64_t chunk_count(int64_t k) { return (k + 31) / 32; }

/* An array of `count` elements holding rows x cols random values in [-1, 1)
 * with leading dimension ld, the first `lead` elements into it; every other
 * element (before the first row, row padding, after the last row) NaN. */
static void *make_operand_in(cuops_dtype_t t, int64_t rows, int64_t cols, int64_t ld,
                             int64_t lead, size_t count)
{
    void *p = malloc((count > 0 ? count : 1) * esize(t));
    if (!p) return NULL;
    if (count > (size_t)(rows * cols)) tu_poison(p, t, count);
    for (int64_t r = 0; r < rows; r++)
        tu_fill_float((char *)p + (size_t)(lead + r * ld) * esize(t), t, (size_t)cols, -1.0, 1.0);
    return p;
}

/* Rows x cols of random values in [-1, 1) with leading dimension ld, NaN in
 * the row padding; `slack` NaN elements after the last row (0: exact size). */
static void *make_operand(cuops_dtype_t t, int64_t rows, int64_t cols, int64_t ld, size_t slack,
                          size_t *count)
{
    *count = (size_t)(rows * ld) + slack;
    return make_operand_in(t, rows, cols, ld, 0, *count);
}

/* Squared 2-norms of the first `cols` elements of each row. */
static double *row_norms2(const void *p, cuops_dtype_t t, int64_t rows, int64_t cols, int64_t ld)
{
    double *out = (double *)malloc(sizeof(double) * (size_t)(rows > 0 ? rows : 1));
    if (!out) return NULL;
    for (int64_t r = 0; r < rows; r++) {
        double s = 0.0;
        for (int64_t c = 0; c < cols; c++) {
            const double v = tu_get(p, t, (size_t)(r * ld + c));
            s += v * v;
        }
        out[r] = s;
    }
    return out;
}

/* Squared 2-norms of the first `cols` columns over `rows` rows (an operand
 * stored K-row by K-row: x [k, m], the weight [k, n]). */
static double *col_norms2(const void *p, cuops_dtype_t t, int64_t rows, int64_t cols, int64_t ld)
{
    double *out = (double *)calloc((size_t)(cols > 0 ? cols : 1), sizeof(double));
    if (!out) return NULL;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            const double v = tu_get(p, t, (size_t)(r * ld + c));
            out[c] += v * v;
        }
    return out;
}

/* Per-element bound of the header comment. */
static double element_tolerance(double ref, double c0, double a2, double b2, int64_t k,
                                float alpha, float beta, cuops_dtype_t ct)
{
    const double s = sqrt(a2 * b2), u = ulp_rel(ct);
    const double e = fabs((double)alpha) * 0x1p-22 * ((double)k / 8.0 + 16.0) * s +
                     0x1p-23 * (fabs((double)alpha) * s + fabs((double)beta * c0));
    return 2.0 * (e + u * (fabs(ref) + e)) + ulp_tiny(ct);
}

/* ---- one case against the full CPU reference ---------------------------------- */

typedef struct decode_case {
    int64_t m, n, k;
    int64_t pad_a, pad_b, pad_c; /* leading dimension minus row length */
    int exact;                   /* 1: A and B allocated with no trailing element */
    cuops_dtype_t ab, ct;
    float alpha, beta;
    int split_k;                 /* options.split_k of the forced runs (auto gets 0) */
    int aligned_c;               /* 1: C starts 16-byte aligned (else 29 elements into its buffer) */
    int realign;                 /* 1: the decode_realign variants instead of decode_splitk */
    int64_t off_a, off_b;        /* realign: A and B start this many elements (0-15) past the
                                  * 256-byte start of their allocation */
} decode_case_t;

typedef struct case_buffers {
    int64_t lda, ldb, ldc, c_off;
    int64_t off_a, off_b;        /* elements of A's and B's allocation before the matrix */
    size_t count_a, count_b, count_c;
    void *ha, *hb, *hc0, *href, *hout, *hout2;
    double *a2, *b2;
    void *da, *db, *dc;
} case_buffers_t;

/* Compare an m x n block of the output with the reference: no NaN, every
 * element within its bound. Leading dimensions are those of each array; c0
 * is C before the call (read only when beta != 0); a2/b2 are the squared row
 * norms of A's and B's rows of this block. */
static void compare_block(const char *who, const char *what, cuops_dtype_t ct, int64_t m,
                          int64_t n, int64_t k, float alpha, float beta, const void *out,
                          int64_t ld_out, const void *ref, int64_t ld_ref, const void *c0,
                          int64_t ld_c0, const double *a2, const double *b2)
{
    int64_t nan_count = 0, over = 0, wr = -1, wj = -1;
    double worst_ratio = 0.0, err2 = 0.0, ref2 = 0.0;
    for (int64_t r = 0; r < m; r++)
        for (int64_t j = 0; j < n; j++) {
            const double g = tu_get(out, ct, (size_t)(r * ld_out + j));
            const double rv = tu_get(ref, ct, (size_t)(r * ld_ref + j));
            if (g != g) { nan_count++; continue; }
            const double cv = beta != 0.0f ? tu_get(c0, ct, (size_t)(r * ld_c0 + j)) : 0.0;
            const double tol = element_tolerance(rv, cv, a2[r], b2[j], k, alpha, beta, ct);
            const double d = fabs(g - rv);
            err2 += d * d;
            ref2 += rv * rv;
            if (!(d <= tol)) over++;
            if (!(d / tol <= worst_ratio)) { worst_ratio = d / tol; wr = r; wj = j; }
        }
    CHECK(nan_count == 0, "%s: %lld NaN in C for %s", who, (long long)nan_count, what);
    if (wr >= 0)
        CHECK(over == 0,
              "%s: %lld element(s) beyond the bound; worst [%lld,%lld] gpu %.7g ref %.7g "
              "(%.3g x its bound), rel err %.3g, for %s",
              who, (long long)over, (long long)wr, (long long)wj,
              tu_get(out, ct, (size_t)(wr * ld_out + wj)),
              tu_get(ref, ct, (size_t)(wr * ld_ref + wj)), worst_ratio, ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2), what);
}

/* A whole case's output: the m x n block against the reference, and every
 * byte outside it (guard band, row padding) as it was. */
static void check_output(const char *who, const char *what, const decode_case_t *c,
                         const case_buffers_t *b, const void *hout)
{
    const size_t es = esize(c->ct);
    int64_t guard_bad = 0, first_guard = -1;
    for (size_t i = 0; i < b->count_c; i++) {
        const int64_t rel = (int64_t)i - b->c_off;
        const int in_matrix = rel >= 0 && rel < c->m * b->ldc && rel % b->ldc < c->n;
        if (in_matrix) continue;
        if (memcmp((const char *)hout + i * es, (const char *)b->hc0 + i * es, es) != 0) {
            if (first_guard < 0) first_guard = (int64_t)i;
            guard_bad++;
        }
    }
    CHECK(guard_bad == 0, "%s: %lld element(s) outside C's m x n block changed, first at %lld "
          "(C at %lld) for %s", who, (long long)guard_bad, (long long)first_guard,
          (long long)b->c_off, what);
    const size_t off = (size_t)b->c_off * es;
    compare_block(who, what, c->ct, c->m, c->n, c->k, c->alpha, c->beta, (const char *)hout + off,
                  b->ldc, (const char *)b->href + off, b->ldc, (const char *)b->hc0 + off, b->ldc,
                  b->a2, b->b2);
}

/* The weight's rows off 16 bytes: B's base (cudaMalloc'd, so 16-byte aligned,
 * plus off_b elements) or ldb. Auto must take decode_realign there. */
static int weight_off(const case_buffers_t *b) { return b->off_b % 8 != 0 || b->ldb % 8 != 0; }

/* Every row of A and B on 16 bytes and k % 8 == 0: what decode_splitk takes. */
static int all_aligned(const decode_case_t *c, const case_buffers_t *b)
{
    return !weight_off(b) && b->off_a % 8 == 0 && b->lda % 8 == 0 && c->k % 8 == 0;
}

/* What the realign variant in slot v takes: the weight's rows off 16 bytes
 * or k % 8 != 0 (with only A off 16 bytes, or every row on 16 bytes, they
 * decline: the packed-x paths and decode_splitk serve those); on sm_90 the
 * m32 and m64 tiles decline k % 8 != 0 with the weight's rows on 16 bytes
 * too (the TMA GEMMs read that weight in place). */
static int realign_takes(const decode_case_t *c, const case_buffers_t *b, int v)
{
    if (weight_off(b)) return 1;
    return c->k % 8 != 0 && !(g_sm_major == 9 && k_variant_m[v] >= 32);
}

/* x off the 16-byte grid (its base or lda) */
static int x_off(const case_buffers_t *b) { return b->off_a % 8 != 0 || b->lda % 8 != 0; }

/* x in place, or packable by the Hopper forms: the workspace has room for
 * its copy (m rows of k rounded up to 64 elements, on 256 bytes, and the
 * alignment's 256). */
static int x_fits(const decode_case_t *c, const case_buffers_t *b)
{
    const size_t copy = ((size_t)c->m * (size_t)((c->k + 63) / 64 * 64) * 2 + 255) / 256 * 256;
    return !x_off(b) || g_ws_room >= copy + 256;
}

/* Whether the Hopper cluster forms serve a realign case (sm_90, k >= 1):
 * the weight's rows on 16 bytes, x in place or packed (x_fits). */
static int cluster_takes(const decode_case_t *c, const case_buffers_t *b)
{
    return g_sm_major == 9 && c->k >= 1 && !weight_off(b) && x_fits(c, b);
}

/* The weight's rows per map row of sm90_decode_shift: the fewest G in 1, 2,
 * 4, 8 with G ldb a multiple of 8 elements. */
static int64_t shift_group(const case_buffers_t *b)
{
    int64_t g = 1;
    while ((g * b->ldb) % 8 != 0) g *= 2;
    return g;
}

/* Whether sm90_decode_shift serves a realign case (sm_90, k >= 1): n a
 * multiple of the row group, x in place or packed (x_fits). */
static int shift_takes(const decode_case_t *c, const case_buffers_t *b)
{
    return g_sm_major == 9 && c->k >= 1 && c->n % shift_group(b) == 0 && x_fits(c, b);
}

/* The kernel auto must run on a case, or NULL where the test leaves the pick
 * open: realign cases with k == 0, with A alone off 16 bytes, or with k % 8
 * != 0 and the weight's rows on 16 bytes. The realign cases with every row
 * on 16 bytes follow the rules of the others. */
static const char *auto_expect(const decode_case_t *c, const case_buffers_t *b)
{
    const int want = tightest_variant(c->m);
    if (c->realign && c->k == 0) return NULL;
    if (c->realign && weight_off(b))
        return c->m > 8 && c->n >= 8192 && shift_takes(c, b) ? k_shift : k_realign[want];
    if (c->realign && !all_aligned(c, b)) return NULL;
    return auto_takes_narrow(c->n, c->k)       ? k_narrow
           : auto_takes_wgmma(c->m, c->n, c->k) ? k_wgmma
                                                : k_variants[want];
}

/* Counts what auto ran where the test leaves its pick open. */
static void tally_auto_open(const char *kernel)
{
    for (int i = 0; i < AUTO_OPEN_NAMES; i++) {
        if (g_auto_open_name[i][0] == 0)
            snprintf(g_auto_open_name[i], sizeof g_auto_open_name[i], "%s", kernel);
        if (!strcmp(g_auto_open_name[i], kernel)) {
            g_auto_open_count[i]++;
            return;
        }
    }
}

/* The variant a slot forces: v < NUM_VARIANTS the case's decode family
 * (decode_splitk, or decode_realign for a realign case), AUTO_SLOT auto, the
 * others the Hopper forms. */
static const char *slot_name(const decode_case_t *c, int v)
{
    return v < NUM_VARIANTS    ? (c->realign ? g_realign_forced[v] : k_variants[v])
           : v == WGMMA_SLOT   ? k_wgmma
           : v == NARROW_SLOT  ? k_narrow
           : v >= ISSUE_SLOT   ? k_issue_forms[v - ISSUE_SLOT]
           : v >= FIXED_SLOT   ? k_fixed_rows[v - FIXED_SLOT]
                               : "auto";
}

/* The case's cuops_gemm_ex call with `variant` and options.split_k = split_k
 * on the device buffers as they are. */
static cuops_status_t gemm_call(const decode_case_t *c, const case_buffers_t *b,
                                const char *variant, int split_k)
{
    const size_t es_ab = esize(c->ab), es_c = esize(c->ct);
    cuops_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.variant = variant;
    opt.split_k = split_k;
    return cuops_gemm_ex(g_gpu, CUOPS_OP_N, CUOPS_OP_T, c->m, c->n, c->k, c->alpha,
                         (const char *)b->da + (size_t)b->off_a * es_ab, b->lda,
                         (const char *)b->db + (size_t)b->off_b * es_ab, b->ldb, c->beta,
                         (char *)b->dc + b->c_off * es_c, b->ldc, c->ab, c->ct, &opt);
}

/* One GPU call of `variant` with options.split_k = split_k on fresh C and a
 * NaN workspace; reads C back into hout. Returns the status; *ws_words gets
 * the number of workspace words the call wrote. */
/* Workspace words a call that ran decode_realign_m32 wrote for x's copy onto
 * the 16-byte grid (m rows of k rounded up to 64 elements, zeros past k):
 * where x is off the grid, k > 0 and the workspace has room for it; else 0. */
static unsigned long long x_copy_words(const decode_case_t *c, const case_buffers_t *b)
{
    const char *ran = cuops_last_kernel(g_gpu);
    /* the realign variants from m16 up (k_realign[1..]) copy x; the Hopper
     * cluster forms pack x that TMA cannot read the same way */
    int copier = is_cluster_form(ran) || !strcmp(ran, k_shift);
    for (int v = 1; v < NUM_VARIANTS; v++) copier |= !strcmp(ran, k_realign[v]);
    if (!copier || c->k == 0) return 0;
    if (!x_off(b)) return 0;
    const unsigned long long halves = (unsigned long long)c->m * (unsigned long long)((c->k + 63) / 64 * 64);
    if (g_ws_room < 2 * halves + 256) return 0;
    return halves / 2;
}

/* One call; *ws_words: the workspace words it changed past x's copy (the
 * split's partials), the copy itself checked whole here. */
static cuops_status_t call_variant(const decode_case_t *c, const case_buffers_t *b,
                                   const char *variant, int split_k, void *hout,
                                   unsigned long long *ws_words)
{
    const size_t es_c = esize(c->ct);
    cudaMemcpy(b->dc, b->hc0, b->count_c * es_c, cudaMemcpyHostToDevice);
    ws_poison();
    cuops_status_t st = gemm_call(c, b, variant, split_k);
    *ws_words = 0;
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (!device_ok(variant)) return CUOPS_STATUS_CUDA_ERROR;
    *ws_words = ws_changed();
    const unsigned long long xw = x_copy_words(c, b);
    CHECK(*ws_words >= xw, "%s: x's copy onto the 16-byte grid changed %llu workspace words, "
          "expected at least %llu (%lld x %lld x %lld, lda %lld)", variant, *ws_words, xw,
          (long long)c->m, (long long)c->n, (long long)c->k, (long long)b->lda);
    if (xw && !strcmp(cuops_last_kernel(g_gpu), k_shift)) g_shift_x_copies++;
    else if (xw && is_cluster_form(cuops_last_kernel(g_gpu))) g_cluster_x_copies++;
    else if (xw) g_x_copies++;
    *ws_words -= *ws_words >= xw ? xw : *ws_words;
    cudaMemcpy(hout, b->dc, b->count_c * es_c, cudaMemcpyDeviceToHost);
    return st;
}

/* One GPU call of slot v (v < NUM_VARIANTS: forced; AUTO_SLOT: auto, with
 * split_k = 0; the Hopper slots: forced), as call_variant. */
static cuops_status_t gpu_call(const decode_case_t *c, const case_buffers_t *b, int v,
                               void *hout, unsigned long long *ws_words)
{
    return call_variant(c, b, slot_name(c, v), v == AUTO_SLOT ? 0 : c->split_k, hout, ws_words);
}

/* A realign case that decode_splitk cannot serve (a row off 16 bytes or
 * k % 8 != 0): each decode_splitk variant declines it; where the weight's
 * rows are off 16 bytes, the Hopper decode forms (16-byte strides for TMA)
 * decline it too. k == 0 reads no operand and is left out. */
static void check_realign_declines(const decode_case_t *c, const case_buffers_t *b,
                                   const char *what)
{
    if (c->k == 0 || all_aligned(c, b)) return;
    const int hopper = g_sm_major == 9 && weight_off(b);
    const char *const names[NUM_VARIANTS + 2] = {k_variants[0], k_variants[1], k_variants[2],
                                                 k_variants[3], k_wgmma, k_narrow};
    for (int v = 0; v < NUM_VARIANTS + 2 * hopper && !g_device_dead; v++) {
        const cuops_status_t st = gemm_call(c, b, names[v], c->split_k);
        CHECK(st == CUOPS_STATUS_NOT_SUPPORTED, "%s must decline %s, got %s", names[v], what,
              cuops_status_string(st));
        if (st == CUOPS_STATUS_SUCCESS) device_ok(names[v]);
    }
}

/* sm90_decode_shift forced on a realign case: where it serves, C checked,
 * the same bytes twice, no workspace written past x's copy; elsewhere on
 * sm_90 (k >= 1) NOT_SUPPORTED. */
static void run_shift(const decode_case_t *c, const case_buffers_t *b, const char *what)
{
    if (g_sm_major != 9 || c->k < 1 || g_device_dead) return;
    unsigned long long ws1 = 0, ws2 = 0;
    cuops_status_t st = call_variant(c, b, k_shift, c->split_k, b->hout, &ws1);
    if (!shift_takes(c, b)) {
        CHECK(st == CUOPS_STATUS_NOT_SUPPORTED, "%s must decline %s (n %% %lld != 0 or no room "
              "for x's copy), got %s", k_shift, what, (long long)shift_group(b),
              cuops_status_string(st));
        if (st == CUOPS_STATUS_SUCCESS) device_ok(k_shift);
        g_shift_declined++;
        return;
    }
    CHECK(st == CUOPS_STATUS_SUCCESS, "%s: %s (%s) for %s", k_shift, cuops_status_string(st),
          cuops_last_error(g_gpu), what);
    if (st != CUOPS_STATUS_SUCCESS) return;
    CHECK(!strcmp(cuops_last_kernel(g_gpu), k_shift), "%s ran kernel '%s'", k_shift,
          cuops_last_kernel(g_gpu));
    CHECK(ws1 == 0, "%s wrote %llu workspace words past x's copy for %s", k_shift, ws1, what);
    g_shift_ran++;
    if (shift_group(b) == 8) g_shift_g8++;
    if (c->k % 64 != 0) g_shift_tail++;
    check_output(k_shift, what, c, b, b->hout);
    st = call_variant(c, b, k_shift, c->split_k, b->hout2, &ws2);
    CHECK(st == CUOPS_STATUS_SUCCESS && memcmp(b->hout, b->hout2, b->count_c * esize(c->ct)) == 0,
          "%s: two runs differ for %s", k_shift, what);
}

static void run_variants(const decode_case_t *c, const case_buffers_t *b, const char *what)
{
    const size_t es_c = esize(c->ct);
    int *const ran = c->realign ? g_realign_ran : g_ran;
    int *const ws_used = c->realign ? g_realign_ws : g_ws_used;
    for (int v = 0; v <= NUM_VARIANTS && !g_device_dead; v++) {
        const char *who = slot_name(c, v);
        unsigned long long ws1 = 0, ws2 = 0;
        cuops_status_t st = gpu_call(c, b, v, b->hout, &ws1);
        if (v < NUM_VARIANTS && c->m > k_variant_m[v]) {
            CHECK(st == CUOPS_STATUS_NOT_SUPPORTED, "%s must decline m=%lld, got %s", who,
                  (long long)c->m, cuops_status_string(st));
            continue;
        }
        if (v < NUM_VARIANTS && c->realign && !realign_takes(c, b, v)) {
            CHECK(st == CUOPS_STATUS_NOT_SUPPORTED,
                  "%s must decline a weight on 16 bytes with k %% 8 == 0 (or, from m32 on sm_90, "
                  "any k) (%s), got %s", who, what, cuops_status_string(st));
            if (st == CUOPS_STATUS_SUCCESS) device_ok(who);
            continue;
        }
        CHECK(st == CUOPS_STATUS_SUCCESS, "%s: %s (%s) for %s", who, cuops_status_string(st),
              cuops_last_error(g_gpu), what);
        if (st != CUOPS_STATUS_SUCCESS) continue;
        const char *want_name = v != AUTO_SLOT ? who : auto_expect(c, b);
        if (want_name)
            CHECK(!strcmp(cuops_last_kernel(g_gpu), want_name), "%s ran kernel '%s', not %s for %s",
                  who, cuops_last_kernel(g_gpu), want_name, what);
        else
            tally_auto_open(cuops_last_kernel(g_gpu));
        if (v == AUTO_SLOT && want_name == k_wgmma) g_auto_wgmma++;
        if (v == AUTO_SLOT && want_name == k_narrow) g_auto_narrow++;
        if (v == AUTO_SLOT && want_name == k_shift) g_auto_shift++;
        if (v == AUTO_SLOT && c->realign && want_name == k_realign[tightest_variant(c->m)] &&
            !strcmp(cuops_last_kernel(g_gpu), want_name))
            g_auto_realign++;
        ran[v]++;
        if (ws1) ws_used[v]++;
        if (ws1 && !c->realign && (v == AUTO_SLOT || c->split_k == 0)) g_auto_plan_split++;
        if (ws1 && c->realign && v < NUM_VARIANTS && c->split_k == 0) g_realign_plan_split++;
        check_output(who, what, c, b, b->hout);

        /* the plan the forced split implies */
        if (v < NUM_VARIANTS && c->split_k == 1)
            CHECK(ws1 == 0, "%s: split_k=1 wrote %llu workspace words for %s", who, ws1, what);
        if (v < NUM_VARIANTS && c->split_k >= 2 && chunk_count(c->k) >= 2)
            CHECK(ws1 > 0, "%s: split_k=%d wrote no partials for %s", who, c->split_k, what);

        /* the same call again: the same bytes */
        st = gpu_call(c, b, v, b->hout2, &ws2);
        CHECK(st == CUOPS_STATUS_SUCCESS, "%s (second run): %s for %s", who,
              cuops_status_string(st), what);
        if (st == CUOPS_STATUS_SUCCESS)
            CHECK(memcmp(b->hout, b->hout2, b->count_c * es_c) == 0 && ws1 == ws2,
                  "%s: two runs differ for %s", who, what);
    }
    if (c->realign) {
        check_realign_declines(c, b, what);
        run_shift(c, b, what);
        /* the cluster forms on the cases whose weight they read in place (x
         * packed where TMA cannot read it), as on the others below */
        if (!cluster_takes(c, b)) return;
    }
    if (g_sm_major != 9 || g_device_dead) return;
    /* the Hopper kernels: serve k >= 1, decline k == 0; no workspace (the
     * cluster form's split-K meets in distributed shared memory, the narrow
     * form does not split); the same bytes twice */
    for (int slot = WGMMA_SLOT; slot < ISSUE_SLOT + NUM_ISSUE_FORMS && !g_device_dead; slot++) {
        const char *who = slot == WGMMA_SLOT    ? k_wgmma
                          : slot == NARROW_SLOT ? k_narrow
                          : slot >= ISSUE_SLOT  ? k_issue_forms[slot - ISSUE_SLOT]
                                                : k_fixed_rows[slot - FIXED_SLOT];
        if (c->realign && !is_cluster_form(who)) continue;
        unsigned long long ws1 = 0, ws2 = 0;
        cuops_status_t st = gpu_call(c, b, slot, b->hout, &ws1);
        if (c->k == 0) {
            CHECK(st == CUOPS_STATUS_NOT_SUPPORTED, "%s must decline k = 0, got %s", who,
                  cuops_status_string(st));
            continue;
        }
        CHECK(st == CUOPS_STATUS_SUCCESS, "%s: %s (%s) for %s", who, cuops_status_string(st),
              cuops_last_error(g_gpu), what);
        if (st != CUOPS_STATUS_SUCCESS) continue;
        CHECK(!strcmp(cuops_last_kernel(g_gpu), who), "%s ran kernel '%s'", who,
              cuops_last_kernel(g_gpu));
        CHECK(ws1 == 0, "%s wrote %llu workspace words for %s", who, ws1, what);
        if (slot >= ISSUE_SLOT) {
            g_issue_ran[slot - ISSUE_SLOT]++;
        } else if (slot == WGMMA_SLOT) {
            g_wgmma_ran++;
            if (c->split_k >= 2 && c->k > 64) g_wgmma_split++;
        } else if (slot >= FIXED_SLOT) {
            /* unforced they split where their blocks leave half of the SMs idle */
            const int f = slot - FIXED_SLOT;
            const int64_t sms = g_num_sms > 0 ? g_num_sms : 132;
            const int64_t blocks = (c->n + k_fixed_rows_n[f] - 1) / k_fixed_rows_n[f];
            g_fixed_ran[f]++;
            if (c->k > 64 && (c->split_k >= 2 || (c->split_k == 0 && 2 * blocks <= sms)))
                g_fixed_split[f]++;
        } else {
            g_narrow_ran++;
            if (narrow_rounds(c->n) > 1) g_narrow_multi++;
            g_narrow_rows_seen[narrow_rows(c->n) / 8] = 1;
        }
        check_output(who, what, c, b, b->hout);
        st = gpu_call(c, b, slot, b->hout2, &ws2);
        CHECK(st == CUOPS_STATUS_SUCCESS && memcmp(b->hout, b->hout2, b->count_c * es_c) == 0,
              "%s: two runs differ for %s", who, what);
    }
}

static void run_case(const decode_case_t *c)
{
    if (g_device_dead) return;
    case_buffers_t b;
    memset(&b, 0, sizeof b);
    b.lda = (c->k > 0 ? c->k : 8) + c->pad_a;
    b.ldb = (c->k > 0 ? c->k : 8) + c->pad_b;
    b.ldc = c->n + c->pad_c;
    const int64_t guard = 29;
    const size_t es_ab = esize(c->ab), es_c = esize(c->ct);
    const size_t slack = c->exact ? 0 : 8;
    b.off_a = c->off_a;
    b.off_b = c->off_b;
    char what[288];
    snprintf(what, sizeof what,
             "ab=%s c=%s m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld alpha=%g beta=%g "
             "split_k=%d %s",
             dname(c->ab), dname(c->ct), (long long)c->m, (long long)c->n, (long long)c->k,
             (long long)b.lda, (long long)b.ldb, (long long)b.ldc, (double)c->alpha,
             (double)c->beta, c->split_k, c->exact ? "exact-size A/B" : "A/B with NaN tail");
    if (c->realign) {
        /* A and B start off_a / off_b elements into their allocation (NaN
         * before them); exact: the allocation ends with the last row's last
         * element, else that row's padding and 8 NaN follow it */
        const size_t len = strlen(what);
        snprintf(what + len, sizeof what - len, ", A +%lld B +%lld elements past the allocation",
                 (long long)b.off_a, (long long)b.off_b);
        b.count_a = (size_t)(b.off_a + (c->m - 1) * b.lda + (c->exact ? c->k : b.lda + 8));
        b.count_b = (size_t)(b.off_b + (c->n - 1) * b.ldb + (c->exact ? c->k : b.ldb + 8));
        if (b.count_a == 0) b.count_a = 1; /* k == 0: nothing is read, but allocate */
        if (b.count_b == 0) b.count_b = 1;
        b.ha = make_operand_in(c->ab, c->m, c->k, b.lda, b.off_a, b.count_a);
        b.hb = make_operand_in(c->ab, c->n, c->k, b.ldb, b.off_b, b.count_b);
    } else {
        b.ha = make_operand(c->ab, c->m, c->k, b.lda, slack, &b.count_a);
        b.hb = make_operand(c->ab, c->n, c->k, b.ldb, slack, &b.count_b);
    }
    /* the matrices themselves, in the host images */
    const char *ha_mat = b.ha ? (const char *)b.ha + (size_t)b.off_a * es_ab : NULL;
    const char *hb_mat = b.hb ? (const char *)b.hb + (size_t)b.off_b * es_ab : NULL;
    b.c_off = c->aligned_c ? 32 : guard;
    b.count_c = (size_t)(b.c_off + c->m * b.ldc + guard);
    b.hc0 = malloc(b.count_c * es_c);
    b.href = malloc(b.count_c * es_c);
    b.hout = malloc(b.count_c * es_c);
    b.hout2 = malloc(b.count_c * es_c);
    if (b.ha && b.hb) {
        b.a2 = row_norms2(ha_mat, c->ab, c->m, c->k, b.lda);
        b.b2 = row_norms2(hb_mat, c->ab, c->n, c->k, b.ldb);
    }
    if (!b.ha || !b.hb || !b.hc0 || !b.href || !b.hout || !b.hout2 || !b.a2 || !b.b2 ||
        cudaMalloc(&b.da, b.count_a * es_ab) != cudaSuccess ||
        cudaMalloc(&b.db, b.count_b * es_ab) != cudaSuccess ||
        cudaMalloc(&b.dc, b.count_c * es_c) != cudaSuccess) {
        CHECK(0, "allocation failed for %s", what);
        goto done;
    }
    for (size_t i = 0; i < b.count_c; i++) set_elem(b.hc0, c->ct, i, 1234.5);
    for (int64_t r = 0; r < c->m; r++) {
        char *row = (char *)b.hc0 + (size_t)(b.c_off + r * b.ldc) * es_c;
        if (c->beta == 0.0f) tu_poison(row, c->ct, (size_t)c->n);
        else tu_fill_float(row, c->ct, (size_t)c->n, -1.0, 1.0);
    }
    cudaMemcpy(b.da, b.ha, b.count_a * es_ab, cudaMemcpyHostToDevice);
    cudaMemcpy(b.db, b.hb, b.count_b * es_ab, cudaMemcpyHostToDevice);

    memcpy(b.href, b.hc0, b.count_c * es_c);
    {
        cuops_status_t st = cuops_gemm(g_cpu, CUOPS_OP_N, CUOPS_OP_T, c->m, c->n, c->k, c->alpha,
                                       ha_mat, b.lda, hb_mat, b.ldb, c->beta,
                                       (char *)b.href + b.c_off * es_c, b.ldc, c->ab, c->ct);
        CHECK(st == CUOPS_STATUS_SUCCESS, "CPU reference: %s (%s) for %s",
              cuops_status_string(st), cuops_last_error(g_cpu), what);
        if (st != CUOPS_STATUS_SUCCESS) goto done;
    }
    run_variants(c, &b, what);
done:
    cudaFree(b.da); cudaFree(b.db); cudaFree(b.dc);
    free(b.ha); free(b.hb); free(b.hc0); free(b.href); free(b.hout); free(b.hout2);
    free(b.a2); free(b.b2);
}

/* ---- case lists --------------------------------------------------------------- */

static const cuops_dtype_t k_ab[2] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
static const cuops_dtype_t k_ct[3] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32};
static const float k_alpha[3] = {1.0f, -0.75f, 1.5f};
static const float k_beta[3] = {0.0f, 0.5f, -1.25f};
static const int k_splits[5] = {0, 1, 2, 3, 7};

/* Rotate dtype, c type, alpha, beta, split, padding and exact allocation over
 * a case index so that every combination recurs across the grid. */
static decode_case_t grid_case(int idx, int64_t m, int64_t n, int64_t k)
{
    decode_case_t c;
    memset(&c, 0, sizeof c);
    c.m = m; c.n = n; c.k = k;
    c.ab = k_ab[idx % 2];
    c.ct = k_ct[(idx / 2) % 3];
    c.alpha = k_alpha[(idx / 3) % 3];
    c.beta = k_beta[(idx / 5) % 3];
    c.split_k = k_splits[(idx / 7) % 5];
    /* lda, ldb stay multiples of 8 (the variants need it); ldc anything */
    c.pad_a = (idx % 5 == 1) ? 8 : 0;
    c.pad_b = (idx % 7 == 2) ? 24 : 0;
    c.pad_c = (idx % 3 == 1) ? 3 : (idx % 3 == 2) ? 5 : 0;
    c.exact = idx % 2 == 0;
    return c;
}

/* Every m x n x k of the lists (k outermost), case idx made by `make` from
 * its running index, run on the GPU and the reference. */
static void run_grid(decode_case_t (*make)(int, int64_t, int64_t, int64_t), const int64_t *ms,
                     int nm, const int64_t *ns, int nn, const int64_t *ks, int nk)
{
    int idx = 0;
    for (int d = 0; d < nk; d++)
        for (int b = 0; b < nn; b++)
            for (int a = 0; a < nm; a++, idx++) {
                decode_case_t c = make(idx, ms[a], ns[b], ks[d]);
                run_case(&c);
            }
}

/* m x n x k over the lists, every variant and auto on each. */
static void test_shape_grid(void)
{
    static const int64_t ms_full[12] = {1, 7, 8, 9, 13, 16, 17, 31, 32, 33, 63, 64};
    static const int64_t ns_full[5] = {1, 7, 64, 1000, 4097};
    static const int64_t ks_full[4] = {8, 40, 1032, 4096};
    static const int64_t ms_quick[5] = {1, 8, 9, 33, 64};
    static const int64_t ns_quick[3] = {1, 7, 100};
    static const int64_t ks_quick[3] = {8, 40, 264};
    const int64_t *ms = g_quick ? ms_quick : ms_full, *ns = g_quick ? ns_quick : ns_full;
    const int64_t *ks = g_quick ? ks_quick : ks_full;
    const int nm = g_quick ? 5 : 12, nn = g_quick ? 3 : 5, nk = g_quick ? 3 : 4;
    run_grid(grid_case, ms, nm, ns, nn, ks, nk);
}

/* k = 32 and k = 64 with ld = k and exact-size allocations: the last lanes'
 * columns end exactly at the end of the last row. The n = 2^20 / k cases make
 * B exactly 2 MiB. Every split choice. */
static void test_exact_small_k(void)
{
    static const int64_t ms[6] = {1, 5, 8, 16, 33, 64};
    static const int64_t ns[4] = {1, 9, 64, 257};
    int idx = 0;
    for (int kk = 0; kk < 2; kk++) {
        const int64_t k = kk ? 64 : 32;
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 4; b++, idx++) {
                if (g_quick && (a + b) % 3 != 0) continue;
                decode_case_t c = grid_case(idx, ms[a], ns[b], k);
                c.pad_a = c.pad_b = 0;
                c.exact = 1;
                run_case(&c);
            }
        if (g_quick) continue;
        for (int a = 0; a < 3; a++) {
            decode_case_t c = grid_case(idx++, a == 0 ? 1 : a == 1 ? 8 : 64, ((int64_t)1 << 20) / k,
                                        k);
            c.pad_a = c.pad_b = 0;
            c.exact = 1;
            run_case(&c);
        }
    }
}

/* Every dtype pair at one ragged shape, both betas, auto split. */
static void test_dtypes(void)
{
    for (int ab = 0; ab < 2; ab++)
        for (int ct = 0; ct < 3; ct++)
            for (int bi = 0; bi < 2; bi++) {
                decode_case_t c;
                memset(&c, 0, sizeof c);
                c.m = 13; c.n = 1000 + 7 * ct; c.k = g_quick ? 264 : 1032;
                c.ab = k_ab[ab]; c.ct = k_ct[ct];
                c.alpha = 1.0f; c.beta = bi ? 0.5f : 0.0f;
                c.pad_c = 5;
                c.exact = bi;
                run_case(&c);
            }
}

/* Forced splits from 1 to well past the chunk count (clamped), on shapes with
 * few tiles, where every CTA of a tile writes partials and the fix-up sums
 * them; and the automatic split on the same shapes. */
static void test_forced_splits(void)
{
    static const int splits[7] = {0, 1, 2, 5, 33, 100, 4096};
    static const int64_t shapes[4][3] = {{1, 16, 1032}, {9, 40, 520}, {33, 100, 264}, {64, 7, 96}};
    int idx = 0;
    for (int s = 0; s < 4; s++)
        for (int sp = 0; sp < 7; sp++, idx++) {
            if (g_quick && sp % 2) continue;
            decode_case_t c = grid_case(idx, shapes[s][0], shapes[s][1], shapes[s][2]);
            c.split_k = splits[sp];
            run_case(&c);
        }
}

/* A user workspace that starts off 16 bytes (cuops_set_workspace takes any
 * address): the split-K partials are rounded up inside it (before 63b92c1
 * the decode kernels refused it and the W4A16 split-K stored misaligned
 * floats). Forced splits and a stream-K shape, every variant. */
static void test_unaligned_workspace(void)
{
    static const int64_t shapes[3][3] = {{9, 40, 520}, {33, 100, 264}, {1, 4704, 1032}};
    CHECK_STATUS(cuops_set_workspace(g_gpu, (char *)g_ws + 2, g_ws_room = WS_BYTES - 16), CUOPS_STATUS_SUCCESS);
    for (int s = 0; s < 3; s++) {
        decode_case_t c = grid_case(s, shapes[s][0], shapes[s][1], shapes[s][2]);
        c.split_k = s < 2 ? 5 : 0;
        run_case(&c);
    }
    CHECK_STATUS(cuops_set_workspace(g_gpu, g_ws, g_ws_room = WS_BYTES), CUOPS_STATUS_SUCCESS);
}

/* A user workspace too small for the split partials: where the plan split K
 * on its own (split_k = 0; stream-K at 1 x 4704 x 1032 and split-K at
 * 9 x 40 x 520 on 132 SMs) every variant runs the call unsplit, as the sm90
 * split-K does (they answered NOT_SUPPORTED before). */
static void test_small_workspace(void)
{
    static const int64_t shapes[2][3] = {{1, 4704, 1032}, {9, 40, 520}};
    for (int s = 0; s < 2; s++) {
        decode_case_t c = grid_case(s, shapes[s][0], shapes[s][1], shapes[s][2]);
        c.split_k = 0;
        /* with room, some variant splits here (else the case shows nothing) */
        int split_before = 0, split_after = 0;
        for (int v = 0; v < NUM_VARIANTS; v++) split_before += g_ws_used[v];
        run_case(&c);
        for (int v = 0; v < NUM_VARIANTS; v++) split_after += g_ws_used[v];
        /* the plans that split here are those of 132 SMs (H100 SXM, H200);
         * elsewhere the shape may not split, and the case then shows nothing */
        if (g_num_sms == 132)
            CHECK(split_after > split_before || g_device_dead,
                  "%lld x %lld x %lld: no variant split with a large workspace", (long long)c.m,
                  (long long)c.n, (long long)c.k);
        else if (split_after == split_before)
            SKIP("%lld x %lld x %lld: no variant split on %d SMs: the fallback is not exercised",
                 (long long)c.m, (long long)c.n, (long long)c.k, g_num_sms);
        CHECK_STATUS(cuops_set_workspace(g_gpu, g_ws, g_ws_room = 64), CUOPS_STATUS_SUCCESS);
        run_case(&c);
        CHECK_STATUS(cuops_set_workspace(g_gpu, g_ws, g_ws_room = WS_BYTES), CUOPS_STATUS_SUCCESS);
    }
}

/* Tile counts just past a full wave (132 SMs x 2-3 CTAs): the plan takes
 * stream-K there, with tiles split across CTAs and the fix-up pass. */
static void test_stream_k_shapes(void)
{
    static const int64_t shapes[6][3] = {{1, 4704, 1032}, {16, 4808, 520},  {33, 6440, 776},
                                         {64, 4808, 1032}, {64, 9000, 264}, {8, 4240 + 8, 4104}};
    for (int s = 0; s < 6; s++) {
        if (g_quick && s != 0 && s != 4) continue;
        decode_case_t c = grid_case(s, shapes[s][0], shapes[s][1], shapes[s][2]);
        c.k = g_quick ? 64 : c.k;
        c.split_k = 0;
        run_case(&c);
    }
}

/* Shapes inside and just outside the narrow form's auto range (its tiles
 * keep 3/4 of the SMs busy): auto takes the narrow form on sm_90 exactly
 * there (checked in run_variants). */
static void test_auto_narrow(void)
{
    static const int64_t shapes[11][3] = {
        {5, 4096, 264},    {64, 4000, 136},   {1, 4224 + 8, 72}, {3, 8192, 136},
        {17, 8448 + 1, 72}, {2, 2200, 72},     {9, 34000, 40},    {1, 2048, 2056},
        {4, 25400, 40},    {1, 25088, 40},    {7, 2048, 2048}};
    for (int s = 0; s < 11; s++) {
        if (g_quick && (s == 1 || s == 6 || s == 8)) continue;
        const int64_t n = shapes[s][1] * g_num_sms / 132; /* the same tile fill on any GPU */
        decode_case_t c = grid_case(100 + s, shapes[s][0], n, shapes[s][2]);
        c.split_k = 0;
        run_case(&c);
    }
}

/* The cluster form's 128-row blocks (two consumer warpgroups, unsplit):
 * n from the first to the last block count that takes them (3/4 of the SMs
 * to all of them, the last block partial), at m = 1 / 8 / 16 / 33 / 64 and
 * k inside one block, across stages and with a partial last block; then the
 * same n with a forced split (256-row blocks again) and n just outside the
 * range (auto: the narrow form below it, 256-row blocks above). The forced
 * wgmma slot of run_variants runs every one of them. */
static void test_wgmma_rows128(void)
{
    const int64_t sms = g_num_sms > 0 ? g_num_sms : 132;
    if (g_sm_major != 9) return;
    const int64_t first = ((3 * sms + 3) / 4 - 1) * 128 + 5, last = sms * 128 - 7;
    const int64_t shapes[8][3] = {{1, first, 72},  {8, last, 1000},  {16, 14336 * sms / 132, 200},
                                  {33, first, 4104}, {64, last, 136}, {17, (first + last) / 2, 64},
                                  {1, first - 256, 72}, {5, last + 256, 72}};
    for (int i = 0; i < 8; i++) {
        if (g_quick && (i == 3 || i == 5)) continue;
        decode_case_t c = grid_case(240 + i, shapes[i][0], shapes[i][1], shapes[i][2]);
        c.split_k = 0;
        run_case(&c);
        if (i < 6) CHECK(wgmma_rows(c.n) == 128, "n = %lld: the mirror gives %lld rows, not 128",
                         (long long)c.n, (long long)wgmma_rows(c.n));
        else CHECK(wgmma_rows(c.n) == 256, "n = %lld: the mirror gives %lld rows, not 256",
                   (long long)c.n, (long long)wgmma_rows(c.n));
        if (i == 1 || i == 4) { /* a forced split: 256-row blocks over a cluster */
            c.split_k = 2;
            run_case(&c);
        }
    }
}

/* The case's C 16-byte aligned, ldc = n rounded up to a multiple of 8
 * elements plus `extra` (a multiple of 8), beta = 0. */
static void align_c(decode_case_t *c, int64_t extra)
{
    c->aligned_c = 1;
    c->beta = 0.0f;
    c->pad_c = (8 - c->n % 8) % 8 + extra;
}

/* C 16-byte aligned, ldc a multiple of 8 elements and beta = 0: the
 * conditions under which the cluster form stores C from the block's base
 * without per-chunk checks (unsplit: 16-byte pieces; split: one store per
 * summed chunk, and at S = 2 in 64-row blocks the unrolled two-rank sum),
 * which the other cases, C 29 elements into its buffer, never meet. n = 4097
 * and 200 leave a last block partly outside C (that CTA takes the checked
 * path, the others the fast one); m below 64 leaves tile rows unstored;
 * forced splits 2 and 3 over every forced height. */
static void test_aligned_c(void)
{
    static const int64_t ms[4] = {1, 7, 33, 64};
    static const int64_t ns[4] = {64, 200, 1000, 4097};
    static const int64_t ks[2] = {264, 1032};
    static const int splits[3] = {0, 2, 3};
    int idx = 0;
    for (int d = 0; d < 2; d++)
        for (int b = 0; b < 4; b++)
            for (int a = 0; a < 4; a++, idx++) {
                if (g_quick && (a + b + d) % 3 != 0) continue;
                decode_case_t c = grid_case(idx, ms[a], ns[b], ks[d]);
                align_c(&c, (idx / 4) % 2 ? 8 : 0);
                c.split_k = splits[idx % 3];
                run_case(&c);
            }
}

/* The narrow form's tile heights: n = SMs x rows - 3 gives tiles of `rows`
 * rows (8 to 256, the last tile 3 rows short), and two shapes past 256 rows
 * per SM give its persistent CTAs a second round of tiles. Each height is
 * its own kernel instance; its wgmma is split into N = 64, 32, 16, 8 parts
 * whose fragments must land in the right accumulators. Each height runs
 * twice: C 29 elements into its buffer (the checked per-element stores),
 * then C aligned with ldc a multiple of 8 and beta = 0, where every tile but
 * the last stores its fragment in column pairs from the tile's base
 * (sdn_store_frag_fast) and the last, 3 rows short, takes the checked path. */
static void test_narrow_rows(void)
{
    static const int rows_full[12] = {8, 16, 24, 40, 64, 88, 112, 136, 184, 200, 224, 256};
    static const int rows_quick[4] = {8, 56, 112, 248};
    static const int64_t ms[4] = {1, 9, 64, 17};
    static const int64_t ks[3] = {72, 200, 1032};
    const int *rows = g_quick ? rows_quick : rows_full;
    const int count = g_quick ? 4 : 12;
    const int64_t sms = g_num_sms > 0 ? g_num_sms : 132;
    if (g_sm_major != 9) return;
    for (int i = 0; i < count; i++) {
        const int64_t n = sms * rows[i] - 3;
        for (int aligned = 0; aligned < 2; aligned++) {
            decode_case_t c = grid_case(200 + i, ms[(i + aligned) % 4], n, ks[i % 3]);
            c.split_k = 0;
            if (aligned) align_c(&c, 0);
            run_case(&c);
        }
        CHECK(narrow_rows(n) == rows[i], "n = %lld: expected %d-row tiles, the mirror says %lld",
              (long long)n, rows[i], (long long)narrow_rows(n));
    }
    const int64_t past[2][3] = {{1, sms * 256 + 5, 72}, {33, sms * 300 - 1, 40}};
    for (int i = 0; i < (g_quick ? 1 : 2); i++) {
        decode_case_t c = grid_case(220 + i, past[i][0], past[i][1], past[i][2]);
        c.split_k = 0;
        run_case(&c);
    }
}

/* Transposed operands on sm_90: the weight stored [k, n] (trans_b = N, as
 * `x @ W` keeps it; an M-major wgmma A) and / or x stored [k, m] (trans_a =
 * T; an N-major wgmma B in tiles as wide as m), read in place by the Hopper
 * cluster form, forced at every block height and as auto's pick; the narrow
 * form declines them. Shapes with n and k off 64 (partial weight boxes and
 * k-blocks), m from 1 to 64, padded lda, ldb and ldc, beta != 0 with C
 * random; checked against the CPU reference with the bound of the header,
 * and C's row padding unchanged. */
static void test_transposed(cuops_op_t ta, cuops_op_t tb)
{
    if (g_device_dead || g_sm_major != 9) return;
    /* every x tile width (m 1-8, 9-16, 17-32, 33-64: 8, 16, 32, 64 columns;
     * x stored [k, m] then has its own swizzle per width) in the quick set.
     * x stored [k, m] is read as wide as its box but in the last k-block
     * (gemm_sm90_decode.cu, sdw_prepare): the row padding holds NaN, which
     * must stay in the tile's rows past m; m = 33 with lda 40, m = 24 with
     * lda 24 and m = 40 with lda 48 read rows that overlap the next K-row */
    const int64_t shapes[][3] = {{1, 64, 8},      {7, 136, 72},    {16, 520, 1032},
                                 {24, 392, 136},  {33, 4096, 520}, {64, 200, 4096},
                                 {1, 4096, 4096}, {9, 1000, 3000}, {24, 136, 4104},
                                 {40, 264, 200}};
    /* and the weight's issue forced (gemm_sm90_decode.cu, SDW_ISSUE_*): one
     * stage at a time, or interleaved pairs of k-blocks (with the weight
     * stored [k, n], pairs of whole k-blocks) */
    const char *const forced[6] = {k_wgmma,
                                   k_fixed_rows[0],
                                   k_fixed_rows[1],
                                   "sm90_decode_wgmma_single",
                                   "sm90_decode_wgmma_pairs64",
                                   NULL};
    const int nforced = (int)(sizeof forced / sizeof forced[0]);
    int served = 0;
    for (int s = 0; s < 10; s++) {
        if (g_quick && s >= 5) break;
        const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        const cuops_dtype_t ab = k_ab[s % 2], ct = k_ct[s % 3];
        const float alpha = k_alpha[s % 3], beta = k_beta[(s + 1) % 3];
        const int tna = ta == CUOPS_OP_T, tnb = tb == CUOPS_OP_N;
        /* leading dimensions TMA can read: multiples of 8 elements; but the
         * first shape's x stored [k, 1] with lda = 1, the same memory as x
         * [1, k], which the API hands to the kernels as such */
        const int64_t pad = s % 2 ? 8 : 0;
        const int64_t lda = tna ? (s == 0 ? 1 : (m + 7) / 8 * 8 + pad) : k;
        const int64_t ldb = tnb ? n + pad : k + pad, ldc = n + 3;
        size_t na = 0, nb = 0;
        void *ha = tna ? make_operand(ab, k, m, lda, 0, &na) : make_operand(ab, m, k, lda, 0, &na);
        void *hb = tnb ? make_operand(ab, k, n, ldb, 0, &nb) : make_operand(ab, n, k, ldb, 0, &nb);
        const size_t nc = (size_t)(m * ldc), es = esize(ct);
        void *hc0 = malloc(nc * es), *href = malloc(nc * es), *hout = malloc(nc * es);
        /* squared norms of op(A)'s rows and op(B)'s columns */
        double *a2 = tna ? col_norms2(ha, ab, k, m, lda) : row_norms2(ha, ab, m, k, lda);
        double *b2 = tnb ? col_norms2(hb, ab, k, n, ldb) : row_norms2(hb, ab, n, k, ldb);
        void *da = NULL, *db = NULL, *dc = NULL;
        char what[160];
        snprintf(what, sizeof what, "%c%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld %s->%s",
                 tna ? 'T' : 'N', tnb ? 'N' : 'T', (long long)m, (long long)n, (long long)k,
                 (long long)lda, (long long)ldb, dname(ab), dname(ct));
        if (!ha || !hb || !hc0 || !href || !hout || !a2 || !b2 ||
            cudaMalloc(&da, na * 2) != cudaSuccess || cudaMalloc(&db, nb * 2) != cudaSuccess ||
            cudaMalloc(&dc, nc * es) != cudaSuccess) {
            CHECK(0, "allocation failed (%s)", what);
            goto next;
        }
        tu_poison(hc0, ct, nc); /* the row padding, and C itself where beta == 0 */
        if (beta != 0.0f)
            for (int64_t r = 0; r < m; r++)
                tu_fill_float((char *)hc0 + (size_t)(r * ldc) * es, ct, (size_t)n, -1.0, 1.0);
        memcpy(href, hc0, nc * es);
        CHECK_STATUS(cuops_gemm(g_cpu, ta, tb, m, n, k, alpha, ha, lda, hb, ldb, beta, href, ldc,
                                ab, ct),
                     CUOPS_STATUS_SUCCESS);
        cudaMemcpy(da, ha, na * 2, cudaMemcpyHostToDevice);
        cudaMemcpy(db, hb, nb * 2, cudaMemcpyHostToDevice);
        for (int v = 0; v < nforced; v++) {
            cudaMemcpy(dc, hc0, nc * es, cudaMemcpyHostToDevice);
            cuops_options_t opt;
            memset(&opt, 0, sizeof opt);
            opt.variant = forced[v];
            const char *who = forced[v] ? forced[v] : "auto";
            const cuops_status_t st = cuops_gemm_ex(g_gpu, ta, tb, m, n, k, alpha, da, lda, db,
                                                    ldb, beta, dc, ldc, ab, ct, &opt);
            CHECK(st == CUOPS_STATUS_SUCCESS, "%s: %s for %s (%s)", who, cuops_status_string(st),
                  what, cuops_last_error(g_gpu));
            if (st != CUOPS_STATUS_SUCCESS) continue;
            /* auto: the cluster form at every m (the narrow form takes NT only) */
            CHECK(strcmp(cuops_last_kernel(g_gpu), forced[v] ? forced[v] : k_wgmma) == 0,
                  "%s ran %s for %s", who, cuops_last_kernel(g_gpu), what);
            if (!device_ok(what)) goto next;
            cudaMemcpy(hout, dc, nc * es, cudaMemcpyDeviceToHost);
            int64_t pad_changed = 0;
            for (int64_t r = 0; r < m; r++)
                for (int64_t j = n; j < ldc; j++)
                    pad_changed += memcmp((const char *)hout + (size_t)(r * ldc + j) * es,
                                          (const char *)hc0 + (size_t)(r * ldc + j) * es, es) != 0;
            CHECK(pad_changed == 0, "%s: %lld element(s) of C's row padding changed for %s", who,
                  (long long)pad_changed, what);
            compare_block(who, what, ct, m, n, k, alpha, beta, hout, ldc, href, ldc, hc0, ldc,
                          a2, b2);
            served++;
        }
        {
            /* the narrow form takes NT only (TT with x stored [k, 1], lda = 1,
             * is NT to the kernels) */
            cuops_options_t opt;
            memset(&opt, 0, sizeof opt);
            opt.variant = k_narrow;
            const int as_nt = tna && !tnb && m == 1 && lda == 1;
            CHECK_STATUS(cuops_gemm_ex(g_gpu, ta, tb, m, n, k, alpha, da, lda, db, ldb, beta, dc,
                                       ldc, ab, ct, &opt),
                         as_nt ? CUOPS_STATUS_SUCCESS : CUOPS_STATUS_NOT_SUPPORTED);
        }
    next:
        cudaFree(da); cudaFree(db); cudaFree(dc);
        free(ha); free(hb); free(hc0); free(href); free(hout); free(a2); free(b2);
    }
    CHECK(served > 0, "no %c%c call was served", ta == CUOPS_OP_T ? 'T' : 'N',
          tb == CUOPS_OP_N ? 'N' : 'T');
}

/* k == 0: C = beta * C (beta == 0: the poison becomes 0). */
static void test_k_zero(void)
{
    for (int bi = 0; bi < 2; bi++) {
        decode_case_t c;
        memset(&c, 0, sizeof c);
        c.m = 5; c.n = 77; c.k = 0;
        c.ab = CUOPS_DTYPE_F16; c.ct = k_ct[bi];
        c.alpha = 1.0f; c.beta = bi ? 0.5f : 0.0f;
        run_case(&c);
    }
}

/* ---- big shapes: random-vector check plus reference column windows ------------ */

typedef struct big_case {
    const char *variant;   /* a decode variant or "auto" */
    int64_t m, n, k;
    cuops_dtype_t ab, ct;
    float alpha, beta;
    int split_k;
    int expect_stream_k;   /* 1: the plan must write partials (stream-K on 132 SMs) */
} big_case_t;

static void big_case_body(const big_case_t *bc, const char *what, void *ha, void *hb, void *hc0,
                          void *hout, void *hout2, double *x, double *w, void *da, void *db,
                          void *dc, size_t count_c, int64_t guard);

static void run_big_case(const big_case_t *bc)
{
    if (g_device_dead) return;
    const int64_t guard = 1024;
    const size_t es_ab = esize(bc->ab), es_c = esize(bc->ct);
    const size_t count_a = (size_t)(bc->m * bc->k), count_b = (size_t)(bc->n * bc->k);
    const size_t count_c = (size_t)(bc->m * bc->n + 2 * guard);
    char what[224];
    snprintf(what, sizeof what, "%s ab=%s c=%s m=%lld n=%lld k=%lld alpha=%g beta=%g split_k=%d",
             bc->variant, dname(bc->ab), dname(bc->ct), (long long)bc->m, (long long)bc->n,
             (long long)bc->k, (double)bc->alpha, (double)bc->beta, bc->split_k);
    void *ha = malloc(count_a * es_ab), *hb = malloc(count_b * es_ab);
    void *hc0 = malloc(count_c * es_c), *hout = malloc(count_c * es_c),
         *hout2 = malloc(count_c * es_c);
    double *x = (double *)malloc(sizeof(double) * (size_t)bc->n);
    double *w = (double *)malloc(sizeof(double) * (size_t)bc->k);
    void *da = NULL, *db = NULL, *dc = NULL;
    /* exact-size operands, as a model's weight tensor would be */
    if (!ha || !hb || !hc0 || !hout || !hout2 || !x || !w ||
        cudaMalloc(&da, count_a * es_ab) != cudaSuccess ||
        cudaMalloc(&db, count_b * es_ab) != cudaSuccess ||
        cudaMalloc(&dc, count_c * es_c) != cudaSuccess)
        CHECK(0, "allocation failed for %s", what);
    else
        big_case_body(bc, what, ha, hb, hc0, hout, hout2, x, w, da, db, dc, count_c, guard);
    cudaFree(da); cudaFree(db); cudaFree(dc);
    free(ha); free(hb); free(hc0); free(hout); free(hout2); free(x); free(w);
}

static void big_case_body(const big_case_t *bc, const char *what, void *ha, void *hb, void *hc0,
                          void *hout, void *hout2, double *x, double *w, void *da, void *db,
                          void *dc, size_t count_c, int64_t guard)
{
    const int64_t m = bc->m, n = bc->n, k = bc->k;
    const size_t es_ab = esize(bc->ab), es_c = esize(bc->ct);
    tu_fill_float(ha, bc->ab, (size_t)(m * k), -1.0, 1.0);
    tu_fill_float(hb, bc->ab, (size_t)(n * k), -1.0, 1.0);
    for (int64_t j = 0; j < n; j++) x[j] = tu_rand_uniform(-1.0, 1.0);
    for (size_t i = 0; i < count_c; i++) set_elem(hc0, bc->ct, i, 1234.5);
    char *c0 = (char *)hc0 + guard * es_c;
    if (bc->beta == 0.0f) tu_poison(c0, bc->ct, (size_t)(m * n));
    else tu_fill_float(c0, bc->ct, (size_t)(m * n), -1.0, 1.0);
    cudaMemcpy(da, ha, (size_t)(m * k) * es_ab, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, (size_t)(n * k) * es_ab, cudaMemcpyHostToDevice);

    cuops_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.variant = bc->variant;
    opt.split_k = bc->split_k;
    unsigned long long ws_words[2] = {0, 0};
    void *out[2] = {hout, hout2};
    for (int run = 0; run < 2; run++) {
        cudaMemcpy(dc, hc0, count_c * es_c, cudaMemcpyHostToDevice);
        ws_poison();
        cuops_status_t st = cuops_gemm_ex(g_gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, bc->alpha, da, k,
                                          db, k, bc->beta, (char *)dc + guard * es_c, n, bc->ab,
                                          bc->ct, &opt);
        CHECK(st == CUOPS_STATUS_SUCCESS, "%s: %s (%s)", what, cuops_status_string(st),
              cuops_last_error(g_gpu));
        if (st != CUOPS_STATUS_SUCCESS || !device_ok(what)) return;
        ws_words[run] = ws_changed();
        cudaMemcpy(out[run], dc, count_c * es_c, cudaMemcpyDeviceToHost);
    }
    fprintf(stderr, "%s ran %s, %llu workspace words of partials\n", what,
            cuops_last_kernel(g_gpu), ws_words[0]);
    CHECK(memcmp(hout, hout2, count_c * es_c) == 0, "%s: two runs differ", what);
    if (bc->expect_stream_k) {
        CHECK(ws_words[0] > 0, "%s: the plan split no tile (stream-K expected on %d SMs)", what,
              g_num_sms);
        if (ws_words[0] > 0) g_auto_plan_split++;
    }

    /* guard band and NaN */
    const double sentinel = tu_get(hc0, bc->ct, 0);
    int64_t guard_bad = 0, nan_count = 0;
    for (int64_t i = 0; i < guard; i++) {
        if (tu_get(hout, bc->ct, (size_t)i) != sentinel) guard_bad++;
        if (tu_get(hout, bc->ct, count_c - 1 - (size_t)i) != sentinel) guard_bad++;
    }
    for (int64_t i = 0; i < m * n; i++) {
        const double v = tu_get(hout, bc->ct, (size_t)(guard + i));
        if (v != v) nan_count++;
    }
    CHECK(guard_bad == 0, "%s: %lld guard sentinel(s) changed", what, (long long)guard_bad);
    CHECK(nan_count == 0, "%s: %lld NaN in C", what, (long long)nan_count);

    /* C x against alpha A (B x) + beta C0 x, per row, in fp64 */
    for (int64_t p = 0; p < k; p++) w[p] = 0.0;
    for (int64_t j = 0; j < n; j++) {
        const double xj = x[j];
        for (int64_t p = 0; p < k; p++) w[p] += tu_get(hb, bc->ab, (size_t)(j * k + p)) * xj;
    }
    /* the scale of row i is the larger of |z_i| and the root sum of squares
     * of its terms C_ij x_j: a z_i that cancels to near zero (at m = 1 a
     * single row decides) would otherwise turn the output's rounding into a
     * large relative error (rel 0.04 once at 1 x 4096 x 14336, f16 C) */
    double err2 = 0.0, ref2 = 0.0;
    for (int64_t i = 0; i < m; i++) {
        double z = 0.0, y = 0.0, terms2 = 0.0;
        for (int64_t p = 0; p < k; p++) z += tu_get(ha, bc->ab, (size_t)(i * k + p)) * w[p];
        z *= bc->alpha;
        for (int64_t j = 0; j < n; j++) {
            const size_t at = (size_t)(guard + i * n + j);
            if (bc->beta != 0.0f) z += bc->beta * tu_get(hc0, bc->ct, at) * x[j];
            const double t = tu_get(hout, bc->ct, at) * x[j];
            y += t;
            terms2 += t * t;
        }
        err2 += (y - z) * (y - z);
        ref2 += z * z > terms2 ? z * z : terms2;
    }
    const double rel = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
    CHECK(rel <= 1e-2, "%s: C x vs alpha A (B x) + beta C0 x: rel err %.3g > 1e-2", what, rel);

    /* element-wise against the CPU reference on three column windows: both
     * ends and a stretch across a tile boundary in the middle */
    const int64_t win = n < 256 ? n : 256;
    const int64_t mid = (n / 2) / 64 * 64 - 8;
    const int64_t starts[3] = {0, mid > 0 && mid + win <= n ? mid : 0, n - win};
    double *a2 = row_norms2(ha, bc->ab, m, k, k);
    void *ref = malloc((size_t)(m * win) * es_c);
    for (int s = 0; s < 3 && a2 && ref; s++) {
        const int64_t j0 = starts[s];
        const char *bj = (const char *)hb + (size_t)(j0 * k) * es_ab;
        double *b2 = row_norms2(bj, bc->ab, win, k, k);
        if (!b2) break;
        for (int64_t i = 0; i < m; i++) /* C0 of the window, m x win */
            memcpy((char *)ref + (size_t)(i * win) * es_c, c0 + (size_t)(i * n + j0) * es_c,
                   (size_t)win * es_c);
        cuops_status_t st = cuops_gemm(g_cpu, CUOPS_OP_N, CUOPS_OP_T, m, win, k, bc->alpha, ha, k,
                                       bj, k, bc->beta, ref, win, bc->ab, bc->ct);
        CHECK(st == CUOPS_STATUS_SUCCESS, "CPU reference (window) for %s", what);
        if (st == CUOPS_STATUS_SUCCESS) {
            char wwhat[288];
            snprintf(wwhat, sizeof wwhat, "%s, columns %lld..%lld", what, (long long)j0,
                     (long long)(j0 + win - 1));
            compare_block(bc->variant, wwhat, bc->ct, m, win, k, bc->alpha, bc->beta,
                          (const char *)hout + (size_t)(guard + j0) * es_c, n, ref, win,
                          c0 + (size_t)j0 * es_c, n, a2, b2);
        }
        free(b2);
    }
    CHECK(a2 && ref, "allocation failed (windows) for %s", what);
    free(a2);
    free(ref);
}

static void test_big(void)
{
    const cuops_dtype_t F16 = CUOPS_DTYPE_F16, BF16 = CUOPS_DTYPE_BF16, F32 = CUOPS_DTYPE_F32;
    /* 896 tiles of 16 rows over 132 SMs x 2 CTAs: stream-K with a fix-up */
    const int streamk = g_num_sms == 132;
    if (g_quick) {
        const big_case_t q = {"auto", 64, 1792, 512, BF16, F32, 1.0f, 0.0f, 0, 0};
        run_big_case(&q);
        return;
    }
    const big_case_t cases[] = {
        {"decode_splitk_m64", 64, 14336, 4096, BF16, BF16, 1.0f, 0.0f, 0, streamk},
        /* on sm_90 auto takes sm90_decode_wgmma here: no workspace */
        {"auto", 64, 14336, 4096, F16, F32, -0.75f, 0.5f, 0, streamk && g_sm_major != 9},
        {"decode_splitk_m16", 16, 28672, 8192, F16, F16, 1.0f, 0.0f, 0, 0},
        {"decode_splitk_m8", 1, 4096, 14336, BF16, F32, 1.0f, 0.0f, 0, 0},
        {"decode_splitk_m32", 32, 4096, 14336, F16, BF16, 1.0f, 0.5f, 5, 0},
        {"auto", 1, 28672, 8192, F16, F16, 1.0f, 0.0f, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_big_case(&cases[i]);
    if (g_sm_major != 9) return;
    /* the narrow form: one tile per CTA (4096 rows), several (14336, 28672) */
    const big_case_t hopper[] = {
        {"sm90_decode_narrow", 16, 4096, 14336, BF16, F16, 1.0f, 0.5f, 0, 0},
        {"sm90_decode_narrow", 64, 14336, 4096, F16, F32, -0.75f, 0.5f, 0, 0},
        {"sm90_decode_narrow_single", 1, 28672, 8192, BF16, BF16, 1.0f, 0.0f, 0, 0},
        /* 128-row blocks, K split 4 ways over 32 blocks (its own choice) and 2 (forced) */
        {"sm90_decode_wgmma128", 1, 4096, 14336, F16, F16, 1.0f, 0.0f, 0, 0},
        {"sm90_decode_wgmma128", 64, 4096, 14336, BF16, F32, -0.75f, 0.5f, 2, 0},
        /* 64-row blocks, K split 2 ways over 64 blocks (its own choice) and 8 (forced) */
        {"sm90_decode_wgmma64", 16, 4096, 14336, F16, BF16, 1.0f, 0.5f, 0, 0},
        {"sm90_decode_wgmma64", 64, 1024, 14336, F16, F16, 1.0f, 0.0f, 8, 0},
        /* the weight's boxes issued one stage at a time (auto pairs them on
         * 128- and 256-row blocks), and in interleaved pairs of k-blocks at
         * every height: unsplit 256-row blocks (128 k-blocks each), split 3
         * (single) and 5 ways (pairs64: 44-45 k-blocks per rank, a rank's odd
         * last block issued alone), 64-row blocks (auto issues those singly) */
        {"sm90_decode_wgmma_single", 1, 28672, 8192, F16, F16, 1.0f, 0.0f, 0, 0},
        {"sm90_decode_wgmma_single", 64, 1024, 14336, BF16, F32, -0.75f, 0.5f, 3, 0},
        {"sm90_decode_wgmma_pairs64", 16, 28672, 8192, BF16, BF16, 1.0f, 0.0f, 0, 0},
        {"sm90_decode_wgmma_pairs64", 64, 1024, 14336, F16, BF16, 1.0f, 0.5f, 5, 0},
        {"sm90_decode_wgmma_pairs64", 3, 4096, 14336, F16, F32, 1.0f, 0.0f, 0, 0},
        /* the narrow form's tiles in pairs of k-blocks: one tile per CTA with
         * an odd count (65 k-blocks; 32-row tiles), and on 132 SMs 133 tiles
         * of 256 rows, so one CTA runs two with 65 k-blocks each (the ring
         * goes on across the tiles, the odd block between them alone); and
         * its single issue at 14336 x 4096, beside the paired run above */
        {"sm90_decode_narrow", 16, 4096, 4160, BF16, F16, 1.0f, 0.5f, 0, 0},
        {"sm90_decode_narrow_single", 64, 14336, 4096, F16, F32, -0.75f, 0.5f, 0, 0},
        {"sm90_decode_narrow", 1, 33797, 4160, F16, F16, 1.0f, 0.0f, 0, 0},
        /* auto takes the cluster form here: 64-row blocks, K split 2 */
        {"auto", 64, 4096, 14336, F16, F16, 1.0f, 0.0f, 0, 0},
        {"auto", 1, 4096, 14336, BF16, BF16, 1.0f, 0.5f, 0, 0},
        /* and 128-row blocks, K split 8 */
        {"auto", 3, 1024, 14336, F16, F32, 1.0f, 0.0f, 0, 0},
    };
    for (size_t i = 0; i < sizeof hopper / sizeof hopper[0]; i++) run_big_case(&hopper[i]);
}

/* ---- what the variants must refuse -------------------------------------------- */

/* The operands of refused_everywhere's calls: a, b as f16 and a32, b32 as f32
 * (the same buffers), k, their leading dimensions for NT, B's for NN, A's for
 * TT (4 rows of k), and one past 2^24 for A. */
typedef struct {
    const void *a, *b, *a32, *b32;
    int64_t k, lda, ldb, ldb_nn, lda_tt, lda_huge;
} refusal_operands_t;

/* What every decode variant refuses, each call otherwise one that `variant`
 * takes: m = 65 (past the largest tile), trans_b = N, trans_a = T, lda past
 * the 32-bit offset bound, f32 inputs; a refusal leaves a detail. */
static void refused_everywhere(const char *variant, const refusal_operands_t *o, int64_t n,
                               float *dc)
{
    cuops_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.variant = variant;
    const cuops_dtype_t F16 = CUOPS_DTYPE_F16, F32 = CUOPS_DTYPE_F32;
    const cuops_op_t N = CUOPS_OP_N, T = CUOPS_OP_T;
    const int64_t k = o->k;
    CHECK_STATUS(cuops_gemm_ex(g_gpu, N, T, 65, n, k, 1.0f, o->a, o->lda, o->b, o->ldb, 0.0f, dc,
                               n, F16, F32, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cuops_gemm_ex(g_gpu, N, N, 4, n, k, 1.0f, o->a, o->lda, o->b, o->ldb_nn, 0.0f, dc,
                               n, F16, F32, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cuops_gemm_ex(g_gpu, T, T, 4, n, k, 1.0f, o->a, o->lda_tt, o->b, o->ldb, 0.0f, dc,
                               n, F16, F32, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
    /* m = 1 reads one row only, so the small buffer is a valid operand for
     * the API */
    CHECK_STATUS(cuops_gemm_ex(g_gpu, N, T, 1, n, k, 1.0f, o->a, o->lda_huge, o->b, o->ldb, 0.0f,
                               dc, n, F16, F32, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cuops_gemm_ex(g_gpu, N, T, 4, n, k, 1.0f, o->a32, o->lda, o->b32, o->ldb, 0.0f, dc,
                               n, F32, F32, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
    CHECK(cuops_last_error(g_gpu)[0] != 0, "%s: a refusal leaves a detail", variant);
}

/* refused_everywhere on 16-byte operands, then what decode_splitk alone
 * refuses: an operand off 16 bytes, leading dimensions or k not multiples
 * of 8. */
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
    for (int v = 0; v < NUM_VARIANTS; v++) {
        const refusal_operands_t ops = {da, db, da, db, k, k, k, n, 4, ((int64_t)1 << 24) + 8};
        refused_everywhere(k_variants[v], &ops, n, dc);
        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.variant = k_variants[v];
        const cuops_dtype_t F16 = CUOPS_DTYPE_F16, F32 = CUOPS_DTYPE_F32;
        const cuops_op_t N = CUOPS_OP_N, T = CUOPS_OP_T;
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
        CHECK(cuops_last_error(g_gpu)[0] != 0, "%s: a refusal leaves a detail", k_variants[v]);
    }
    device_ok("unsupported");
done:
    cudaFree(da); cudaFree(db); cudaFree(dc);
}

/* ---- the decode_realign variants: operand rows off 16 bytes ------------------- */

static const int64_t k_rpads[4] = {0, 1, 3, 8};
static const int k_rsplits[5] = {0, 1, 2, 3, 64};

/* A realign case: grid_case's dtypes, alpha, beta and ldc padding, with A and
 * B 0-15 elements past a 32-byte boundary, lda and ldb k + {0, 1, 3, 8},
 * exact-size A and B every other case and a forced split of 0, 1, 2, 3 or 64,
 * each rotated over the case index with its own period, so that every pair
 * of these choices meets across the full grid. */
static decode_case_t realign_case(int idx, int64_t m, int64_t n, int64_t k)
{
    decode_case_t c = grid_case(idx, m, n, k);
    c.realign = 1;
    /* 0-15 elements: the weight's rows start anywhere on the 32-byte grid
     * the realigning kernels load from */
    c.off_a = (idx / 2 + idx / 48) % 16;
    c.off_b = (5 * idx / 3 + idx / 24) % 16;
    c.pad_a = k_rpads[(idx / 5 + idx / 40) % 4];
    c.pad_b = k_rpads[(idx / 3 + idx / 11) % 4];
    c.exact = (idx + idx / 2) % 2 == 0;
    c.split_k = k_rsplits[(idx / 7) % 5];
    return c;
}

/* What the realign variants refuse: m past the largest tile, trans_b = N or
 * trans_a = T, f32 inputs, lda past 2^24. Every other argument of each call
 * is one they take (operands 1 and 3 elements off 16 bytes, odd k and
 * leading dimensions), so the named condition alone declines it. */
static void test_realign_unsupported(void)
{
    if (g_device_dead) return;
    const int64_t n = 64, k = 63, lda = 63, ldb = 63;
    const size_t elems = (size_t)(65 * lda + 64);
    uint16_t *da = NULL, *db = NULL;
    float *dc = NULL;
    if (cudaMalloc((void **)&da, elems * 4) != cudaSuccess ||
        cudaMalloc((void **)&db, elems * 4) != cudaSuccess ||
        cudaMalloc((void **)&dc, (size_t)(65 * n + 64) * 4) != cudaSuccess) {
        CHECK(0, "allocation failed (realign unsupported)");
        goto done;
    }
    cudaMemset(da, 0x3C, elems * 4); /* finite f16 1.06 */
    cudaMemset(db, 0x3C, elems * 4);
    for (int v = 0; v < NUM_VARIANTS; v++) {
        /* A 1 and B 3 elements off 16 bytes (f16 and f32 alike); NN with an
         * odd ldb, TT with an odd lda */
        const refusal_operands_t ops = {
            da + 1, db + 3, (float *)da + 1, (float *)db + 3, k, lda, ldb, n + 1, 5,
            ((int64_t)1 << 24) + 1};
        refused_everywhere(g_realign_forced[v], &ops, n, dc);
    }
    device_ok("realign unsupported");
done:
    cudaFree(da); cudaFree(db); cudaFree(dc);
}

/* m x n x k over odd lists, every realign variant and auto on each, A and B
 * off 16 bytes as realign_case rotates them. */
static void test_realign_grid(void)
{
    static const int64_t ks_full[12] = {1, 3, 7, 9, 17, 31, 33, 65, 300, 301, 1537, 4095};
    static const int64_t ns_full[6] = {1, 15, 17, 64, 300, 1537};
    static const int64_t ms_full[8] = {1, 7, 8, 9, 16, 17, 33, 64};
    static const int64_t ks_quick[4] = {1, 7, 33, 301};
    static const int64_t ns_quick[3] = {1, 17, 300};
    static const int64_t ms_quick[4] = {1, 9, 33, 64};
    const int64_t *ks = g_quick ? ks_quick : ks_full, *ns = g_quick ? ns_quick : ns_full;
    const int64_t *ms = g_quick ? ms_quick : ms_full;
    const int nk = g_quick ? 4 : 12, nn = g_quick ? 3 : 6, nm = g_quick ? 4 : 8;
    run_grid(realign_case, ms, nm, ns, nn, ks, nk);
}

/* Each kind of operand layout auto meets, at m = 1, 9, 17, 33 and 64 (the
 * tightest realign variant m8, m16, m32, m64, m64; two of them per kind in
 * the quick run), every forced realign variant on the same calls. The
 * weight's rows off 16 bytes by B's base, by an odd ldb, by an odd k with
 * ld = k, by an even ldb off 8: auto must take the tightest decode_realign
 * (m64 at m = 33 and 64), but sm90_decode_shift on sm_90 from m = 9 where n
 * >= 8192 (the last kind). A alone off 16 bytes by its base or by lda, and k % 8 != 0
 * with the weight on 16 bytes: auto's pick is left open (tallied), its
 * result checked. With the weight on 16 bytes and k % 8 == 0 (A off or not)
 * the realign variants must decline when forced; with every row on 16
 * bytes auto picks as in the other sections. */
static void test_realign_auto(void)
{
    static const int64_t ms[5] = {1, 9, 17, 33, 64};
    static const struct {
        int64_t n, k, pad_a, pad_b, off_a, off_b;
    } kinds[12] = {
        {1000, 256, 0, 0, 0, 3},  /* B's base off */
        {1000, 255, 0, 0, 0, 11}, /* odd k, B's base 16 bytes past the 32-byte grid and off */
        {77, 256, 0, 1, 0, 0},    /* ldb odd */
        {1537, 1001, 0, 0, 0, 0}, /* odd k, lda = ldb = k */
        {300, 64, 8, 4, 2, 0},    /* ldb = 68 (A off too) */
        {1537, 256, 0, 0, 5, 0},  /* A's base alone off */
        {64, 256, 3, 0, 0, 0},    /* lda = 259 alone */
        {300, 301, 3, 3, 0, 0},   /* k = 301, lda = ldb = 304, both bases on 16 bytes */
        {2000, 100, 4, 4, 6, 0},  /* k = 100, ldb = 104 on 16 bytes; A off */
        {1000, 256, 0, 0, 0, 0},  /* every row on 16 bytes */
        {4096, 512, 8, 8, 0, 0},  /* the same, padded */
        {8192, 255, 0, 0, 0, 0},  /* odd k, ld = k, n >= 8192: sm90_decode_shift from m = 9 */
    };
    int idx = 300;
    for (int i = 0; i < 12; i++)
        for (int a = 0; a < 5; a++, idx++) {
            if (g_quick && a != i % 5 && a != (i + 2) % 5) continue;
            decode_case_t c = realign_case(idx, ms[a], kinds[i].n, kinds[i].k);
            c.pad_a = kinds[i].pad_a;
            c.pad_b = kinds[i].pad_b;
            c.off_a = kinds[i].off_a;
            c.off_b = kinds[i].off_b;
            run_case(&c);
        }
}

/* Forced splits 0, 1, 2, 3 and 64 on shapes with few tiles (every CTA of a
 * tile writes partials, the fix-up sums them), odd k over 2 to 33 chunks of
 * 32 columns, the last chunk partial (one column at k = 33). */
static void test_realign_splits(void)
{
    static const int64_t shapes[5][3] = {
        {1, 16, 1031}, {9, 40, 519}, {33, 100, 263}, {64, 7, 95}, {17, 300, 33}};
    int idx = 400;
    for (int s = 0; s < 5; s++)
        for (int sp = 0; sp < 5; sp++, idx++) {
            if (g_quick && (s + sp) % 2) continue;
            decode_case_t c = realign_case(idx, shapes[s][0], shapes[s][1], shapes[s][2]);
            c.split_k = k_rsplits[sp];
            run_case(&c);
        }
}

/* The plan's own split (split_k = 0) with the weight off 16 bytes (ld = k
 * odd): stream-K at 1 x 4704 x 1031 and split-K at 9 x 40 x 519 on 132 SMs,
 * as decode_splitk at k + 1; at 24 x 4096 x 1031 the m32 slot's 256 tiles
 * would fill 256 of its 396 slots (3 CTAs of 4 warps per SM), where the
 * 4-warp realigning kernels take stream-K over every slot, so that slot
 * must write partials. With a 64-byte user workspace every realign variant
 * runs the call unsplit: it succeeds, matches and writes no partials. */
static void test_realign_small_workspace(void)
{
    static const int64_t shapes[3][3] = {{1, 4704, 1031}, {9, 40, 519}, {24, 4096, 1031}};
    for (int s = 0; s < 3; s++) {
        decode_case_t c = realign_case(500 + s, shapes[s][0], shapes[s][1], shapes[s][2]);
        c.split_k = 0;
        c.pad_a = c.pad_b = 0;
        const int split_before = g_realign_plan_split, m32_ws_before = g_realign_ws[2];
        run_case(&c);
        if (g_num_sms == 132)
            CHECK(g_realign_plan_split > split_before || g_device_dead,
                  "%lld x %lld x %lld: no realign variant split with a large workspace",
                  (long long)c.m, (long long)c.n, (long long)c.k);
        if (g_num_sms == 132 && s == 2)
            CHECK(g_realign_ws[2] > m32_ws_before || g_device_dead,
                  "24 x 4096 x 1031: %s did not fill its slots by stream-K", g_realign_forced[2]);
        else if (g_realign_plan_split == split_before)
            SKIP("%lld x %lld x %lld: no realign variant split on %d SMs: the fallback is not "
                 "exercised", (long long)c.m, (long long)c.n, (long long)c.k, g_num_sms);
        int ws_before = 0, ws_after = 0;
        for (int v = 0; v <= NUM_VARIANTS; v++) ws_before += g_realign_ws[v];
        CHECK_STATUS(cuops_set_workspace(g_gpu, g_ws, g_ws_room = 64), CUOPS_STATUS_SUCCESS);
        run_case(&c);
        CHECK_STATUS(cuops_set_workspace(g_gpu, g_ws, g_ws_room = WS_BYTES), CUOPS_STATUS_SUCCESS);
        for (int v = 0; v <= NUM_VARIANTS; v++) ws_after += g_realign_ws[v];
        CHECK(ws_after == ws_before, "%lld x %lld x %lld: a realign call wrote partials into a "
              "64-byte workspace", (long long)c.m, (long long)c.n, (long long)c.k);
    }
}

/* k == 0 with A and B off 16 bytes and odd leading dimensions: C = beta * C
 * (beta == 0: the poison becomes 0), forced split 0 and 2. */
static void test_realign_k_zero(void)
{
    for (int bi = 0; bi < 2; bi++) {
        decode_case_t c = realign_case(600 + bi, 5, 77, 0);
        c.ct = k_ct[bi + 1];
        c.alpha = 1.0f;
        c.beta = bi ? 0.5f : 0.0f;
        c.off_a = 3;
        c.off_b = 6;
        c.pad_a = 1;
        c.pad_b = 3;
        c.exact = 0;
        c.split_k = 2 * bi;
        run_case(&c);
    }
}

/* One larger call (not in the quick run): 16 x 4100 x 4095, ld = k, A and B
 * 3 and 5 elements off 16 bytes, exact-size, the plan's own split. */
static void test_realign_big(void)
{
    if (g_quick) return;
    decode_case_t c = realign_case(700, 16, 4100, 4095);
    c.ab = CUOPS_DTYPE_BF16;
    c.ct = CUOPS_DTYPE_F32;
    c.alpha = -0.75f;
    c.beta = 0.5f;
    c.off_a = 3;
    c.off_b = 5;
    c.pad_a = c.pad_b = 0;
    c.exact = 1;
    c.split_k = 0;
    run_case(&c);
}

static void test_realign(void)
{
    test_realign_unsupported();
    test_realign_k_zero();
    test_realign_grid();
    test_realign_auto();
    test_realign_splits();
    test_realign_small_workspace();
    test_realign_big();
}

/* The eight variants (decode_splitk and decode_realign, four m tiles each)
 * are registered with the GEMM dispatch (no device needed). */
static int check_listed(void)
{
    const char *const *names = NULL;
    int count = 0;
    CHECK_STATUS(cuops_variant_names("gemm", &names, &count), CUOPS_STATUS_SUCCESS);
    int listed = 0;
    for (int v = 0; v < 2 * NUM_VARIANTS; v++) {
        const char *want = v < NUM_VARIANTS ? k_variants[v] : k_realign[v - NUM_VARIANTS];
        int found = 0;
        for (int i = 0; names && i < count && !found; i++) found = !strcmp(names[i], want);
        CHECK(found, "%s is not in cuops_variant_names(\"gemm\")", want);
        listed += found;
    }
    return listed == 2 * NUM_VARIANTS;
}

int main(void)
{
    tu_seed_from_env();
    const char *q = getenv("CUOPS_TEST_QUICK");
    g_quick = q && q[0] && strcmp(q, "0") != 0;
    for (int v = 0; v < NUM_VARIANTS; v++) g_realign_forced[v] = k_realign[v];
    const char *form = getenv("CUOPS_TEST_REALIGN_FORM");
    if (form && !strcmp(form, "study")) {
        g_realign_forced[0] = "decode_realign_runs_hint_m8";
        g_realign_forced[1] = "decode_realign_rr_nohint_m16";
        g_realign_forced[2] = "decode_realign_nohint_m32";
    } else if (form && !strcmp(form, "study2")) {
        g_realign_forced[0] = "decode_realign_nohint_m8";
        g_realign_forced[1] = "decode_realign_rr_l2_128_m16";
        g_realign_forced[2] = "decode_realign_runs_hint_m32";
    } else if (form && !strcmp(form, "study3")) {
        g_realign_forced[1] = "decode_realign_xinplace_m16";
        g_realign_forced[2] = "decode_realign_xinplace_m32";
        g_realign_forced[3] = "decode_realign_xinplace_m64";
    }
    const int listed = check_listed();

    if (!tu_gpu_handle(&g_gpu)) return tu_finish("test_gpu_gemm_decode");
    CHECK_STATUS(cuops_create(&g_cpu, CUOPS_DEVICE_CPU), CUOPS_STATUS_SUCCESS);
    if (tu_failed || !listed) return tu_finish("test_gpu_gemm_decode");

    cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess, "cudaGetDeviceProperties failed");
    g_num_sms = prop.multiProcessorCount;
    g_sm_major = prop.major;
    g_dram_gbps = tu_gpu_dram_peak_gbps();
    printf("device: %d SMs, %lld GB/s of DRAM bandwidth (peak)\n", g_num_sms, (long long)g_dram_gbps);
    if (prop.major < 8) {
        SKIP("device is sm_%d%d; the decode kernels need sm_80", prop.major, prop.minor);
        cuops_destroy(g_gpu);
        cuops_destroy(g_cpu);
        return tu_finish("test_gpu_gemm_decode");
    }
    if (cudaMalloc((void **)&g_ws, WS_BYTES) != cudaSuccess ||
        cudaMalloc((void **)&g_ws_count, sizeof *g_ws_count) != cudaSuccess) {
        CHECK(0, "allocation failed (workspace probe)");
        cuops_destroy(g_gpu);
        cuops_destroy(g_cpu);
        return tu_finish("test_gpu_gemm_decode");
    }
    CHECK_STATUS(cuops_set_workspace(g_gpu, g_ws, g_ws_room = WS_BYTES), CUOPS_STATUS_SUCCESS);

    test_unsupported();
    test_k_zero();
    test_exact_small_k();
    test_dtypes();
    test_forced_splits();
    test_unaligned_workspace();
    test_small_workspace();
    test_shape_grid();
    test_stream_k_shapes();
    test_auto_narrow();
    test_narrow_rows();
    test_wgmma_rows128();
    test_aligned_c();
    test_transposed(CUOPS_OP_N, CUOPS_OP_N);
    test_transposed(CUOPS_OP_T, CUOPS_OP_N);
    test_transposed(CUOPS_OP_T, CUOPS_OP_T);
    test_big();
    test_realign();

    if (!g_device_dead) {
        for (int v = 0; v <= NUM_VARIANTS; v++) {
            const char *who = v < NUM_VARIANTS ? k_variants[v] : "auto";
            fprintf(stderr, "%-20s ran %4d case(s), %4d with split partials\n", who, g_ran[v],
                    g_ws_used[v]);
            CHECK(g_ran[v] > 0, "%s ran no case", who);
            /* on sm_90 auto's split cases go to the Hopper kernel, whose
             * split-K needs no workspace */
            if (v < NUM_VARIANTS || g_sm_major != 9)
                CHECK(g_ws_used[v] > 0, "%s never split K across CTAs", who);
        }
        if (g_sm_major == 9) {
            fprintf(stderr, "%-20s ran %4d case(s), %4d with a forced cluster split\n", k_wgmma,
                    g_wgmma_ran, g_wgmma_split);
            CHECK(g_wgmma_ran > 0 && g_wgmma_split > 0, "%s ran %d cases, %d split", k_wgmma,
                  g_wgmma_ran, g_wgmma_split);
            CHECK(g_auto_wgmma > 0, "auto never took %s", k_wgmma);
            for (int f = 0; f < NUM_ISSUE_FORMS; f++) {
                fprintf(stderr, "%-20s ran %4d case(s)\n", k_issue_forms[f], g_issue_ran[f]);
                CHECK(g_issue_ran[f] > 0, "%s ran no case", k_issue_forms[f]);
            }
            for (int f = 0; f < 2; f++) {
                fprintf(stderr, "%-20s ran %4d case(s), %4d with a cluster split\n",
                        k_fixed_rows[f], g_fixed_ran[f], g_fixed_split[f]);
                CHECK(g_fixed_ran[f] > 0 && g_fixed_split[f] > 0, "%s ran %d cases, %d split",
                      k_fixed_rows[f], g_fixed_ran[f], g_fixed_split[f]);
            }
            fprintf(stderr, "%-20s ran %4d case(s), %4d with more than one tile per CTA\n",
                    k_narrow, g_narrow_ran, g_narrow_multi);
            CHECK(g_narrow_ran > 0 && g_narrow_multi > 0, "%s ran %d cases, %d multi-tile",
                  k_narrow, g_narrow_ran, g_narrow_multi);
            CHECK(g_auto_narrow > 0, "auto never took %s", k_narrow);
            int heights = 0;
            for (int r = 1; r <= 32; r++) heights += g_narrow_rows_seen[r] != 0;
            fprintf(stderr, "%-20s ran %d different tile heights\n", k_narrow, heights);
            CHECK(heights >= (g_quick ? 4 : 12), "%s ran only %d tile heights", k_narrow, heights);
        }
        fprintf(stderr, "automatic plans that split a tile: %d\n", g_auto_plan_split);
        CHECK(g_auto_plan_split > 0, "no automatic plan split K (split-K or stream-K)");

        /* the realign cases */
        for (int v = 0; v <= NUM_VARIANTS; v++) {
            const char *who = v < NUM_VARIANTS ? g_realign_forced[v] : "auto (realign cases)";
            fprintf(stderr, "%-20s ran %4d case(s), %4d with split partials\n", who,
                    g_realign_ran[v], g_realign_ws[v]);
            CHECK(g_realign_ran[v] > 0, "%s ran no realign case", who);
            if (v < NUM_VARIANTS)
                CHECK(g_realign_ws[v] > 0, "%s never split K across CTAs", who);
        }
        fprintf(stderr, "realign plans that split a tile (split_k = 0): %d\n",
                g_realign_plan_split);
        fprintf(stderr, "auto took decode_realign on %d call(s) with the weight off 16 bytes\n",
                g_auto_realign);
        CHECK(g_auto_realign > 0, "auto never took decode_realign");
        fprintf(stderr, "decode_realign_m16/m32/m64 copied x onto the 16-byte grid on %d call(s)\n",
                g_x_copies);
        CHECK(g_x_copies > 0, "decode_realign_m16/m32/m64 never copied x onto the 16-byte grid");
        if (g_sm_major == 9) {
            fprintf(stderr, "the cluster forms packed x on %d realign call(s)\n",
                    g_cluster_x_copies);
            CHECK(g_cluster_x_copies > 0, "the cluster forms never packed an x off the grid");
            fprintf(stderr, "%s served %d realign case(s) (%d with rows in groups of 8, %d with "
                    "a partial last k-block, %d with x packed), declined %d\n", k_shift,
                    g_shift_ran, g_shift_g8, g_shift_tail, g_shift_x_copies, g_shift_declined);
            CHECK(g_shift_ran > 0 && g_shift_g8 > 0 && g_shift_tail > 0 && g_shift_x_copies > 0,
                  "%s: a kind of realign case it never served", k_shift);
            CHECK(g_shift_declined > 0, "%s never had to decline a case", k_shift);
            fprintf(stderr, "auto took %s on %d call(s)\n", k_shift, g_auto_shift);
            CHECK(g_auto_shift > 0, "auto never took %s", k_shift);
        }
        for (int i = 0; i < AUTO_OPEN_NAMES && g_auto_open_name[i][0]; i++)
            fprintf(stderr, "auto, pick left open (A alone off, or k %% 8 != 0): %s %d time(s)\n",
                    g_auto_open_name[i], g_auto_open_count[i]);
    }
    cuops_set_workspace(g_gpu, NULL, 0);
    cudaFree(g_ws);
    cudaFree(g_ws_count);
    cuops_destroy(g_gpu);
    cuops_destroy(g_cpu);
    return tu_finish("test_gpu_gemm_decode");
}
