/*
 * test_gpu_gemm_sm90.cu - correctness of the Hopper GEMMs "sm90_ws_128x256"
 * (TMA + wgmma, warp-specialized, persistent) and "sm90_ws_128x256_splitk"
 * (the same main loop with K split over several CTAs, fp32 partials summed
 * by a fixup kernel) against the CPU backend.
 *
 * Forces the variant through cuops_gemm_ex and covers: f16/bf16 inputs with
 * f16/bf16/f32 outputs; all four transpose pairs; leading dimensions with
 * padding; base pointers off 16-byte alignment (the packing path); beta == 0
 * (C is NaN-poisoned and must not be read) and beta != 0; ragged M/N/K
 * (65, 129, 1537, 4095, ...); more tiles than SMs (the persistent loop and
 * its mbarrier phases across tiles); CUOPS_FLAG_NO_SWIZZLE and
 * CUOPS_FLAG_STAGGER_K; k == 0. Columns between n and ldc must stay NaN
 * (nothing written out of bounds). MN-major operands (A with trans_a = T, B
 * with trans_b = N) that TMA can address are read in place, without the
 * transposing pack (section 2c). A 16-bit C that TMA cannot store to in
 * place (section 2b) is stored with shifted rows (each box row moved onto
 * C's own 16-byte units, stored through maps over the rows j mod 8; the
 * multicast form: aligned workspace and a row copy): checked against the
 * reference, its padding and what lies before it untouched, and bit for bit
 * against the register epilogue ("sm90_ws_128x256_direct_c").
 *
 * Small shapes are compared with the CPU backend element by element; large
 * ones (4095^3, 1537x3001x2049, 4096^3) check whole rows and columns at tile
 * edges in fp64 plus C*x against A*(B*x) for a random x.
 *
 * Split-K (section 7): the shapes its plan splits (few tiles, k > 448) in
 * every dtype pair, every transpose, ragged m/n/k (uneven K ranges), ldc > n,
 * beta != 0, m = 1 (forced; the decode kernels take small-m NT calls in
 * auto); auto picks it exactly where the plan splits; two runs give
 * bitwise identical C; a forced call the plan would not split is declined
 * with NOT_SUPPORTED and a detail; a user workspace too small for the
 * partials runs the plain kernel instead (and cuops_last_kernel says so).
 * Every split case also runs "sm90_ws_128x256_splitk_dsmem" (the partials
 * reduced inside a thread-block cluster through distributed shared memory):
 * same checks, its own determinism check and declines.
 *
 * Decode-sized m (section 6): the entry forced at m = 1, 16, 64, and auto on
 * a small-m call off 16 bytes that no decode or split-K kernel takes.
 *
 * The 128 x 128 tile (section 8): sections 1-4 forced on "sm90_ws_128x128",
 * a C off 16 bytes (shifted rows), sampled suite shapes, and its cluster
 * split-K form "sm90_ws_128x128_splitk_dsmem" on split shapes, bitwise
 * reproducible;
 * the same plain checks on the 64 x 128 tile "sm90_ws_64x128" (shifted
 * rows in slabs of 8, one box per consumer).
 *
 * The multicast forms "sm90_ws_128x256_mc2", "sm90_ws_128x128_mc2" and
 * "sm90_ws_64x128_mc2" (section 9: clusters of two CTAs sharing B), and the
 * 64 x 128 tile in clusters of 4 along M ("sm90_ws_64x128_mc4"), 2 x 2 and
 * 4 x 2 (sharing A along N too: "_mc2x2", "_mc4x2"): sections 1-4, tile-row
 * and tile-column counts that leave a cluster's last tiles past m or n, a
 * staged C, sampled suite shapes with each flag, 1000^3 on the 128-column
 * tiles; auto's pick of the 64 x 128 form at 1000^3 (section 7).
 *
 * The split tail of the plain kernels (section 10: the tiles of a partial
 * last round split along K, partials summed by the last piece to arrive):
 * every tile shape, 2 and 3 pieces, more pieces than CTAs, full checks,
 * bitwise reproducible, split_k = 1, user workspaces; the "_tail" kernel
 * name wherever the plan splits.
 *
 * CUOPS_TEST_VARIANT=NAME runs sections 1-4 for that plain variant only.
 *
 * Skips (exit 0) without a CUDA device or on a device that is not sm_90.
 * CUOPS_TEST_QUICK=1 runs a reduced set (for compute-sanitizer).
 */
#include <cuda_runtime.h>

#include "gpu_test_util.h"

#include "cuda/gemm/gemm_tuning.h"

static const char *const VARIANT = "sm90_ws_128x256";
static const char *const SPLITK = "sm90_ws_128x256_splitk";
/* The same split with the partials reduced inside a thread-block cluster
 * (distributed shared memory); it serves every shape the split-K plan splits
 * whose tile grid is at most 32 tiles on these GPUs (its own plan lowers S
 * until the clusters fit), which covers every split case below. */
static const char *const DSMEM = "sm90_ws_128x256_splitk_dsmem";
/* the plain kernel writing C from registers where TMA cannot store it */
static const char *const DIRECT_C = "sm90_ws_128x256_direct_c";
/* the plain kernels with misaligned operands packed inside the kernel, where
 * the plain entries pack them by a launch before it (section 2b) */
static const char *const PACKIN = "sm90_ws_128x256_pack_inside";
static const char *const PACKIN128 = "sm90_ws_128x128_pack_inside";
static const char *const PACKBULK = "sm90_ws_128x256_pack_bulk";
static const char *const PACKBULK128 = "sm90_ws_128x128_pack_bulk";
/* whole CTAs packing while the others run the tiles (16, 8 of them) */
static const char *const PACKCTAS = "sm90_ws_128x256_pack_ctas";
static const char *const PACKCTAS8 = "sm90_ws_128x256_pack_ctas8";
/* the same, the packer CTAs then running tiles too, every unit claimed */
static const char *const PACKJOIN = "sm90_ws_128x256_pack_join";
static const char *const PACKJOIN128 = "sm90_ws_128x128_pack_join";
/* the same kernels with 128 x 128 tiles (section 8) */
static const char *const V128 = "sm90_ws_128x128";
static const char *const DSMEM128 = "sm90_ws_128x128_splitk_dsmem";
static const char *const V64 = "sm90_ws_64x128"; /* 64 x 128 tiles (section 8) */
/* 128 x 256 tiles in clusters of two sharing B by multicast (section 9) */
static const char *const MC2 = "sm90_ws_128x256_mc2";
/* the multicast form on the 128-column tiles (section 9) */
static const char *const MC2_128 = "sm90_ws_128x128_mc2";
static const char *const MC2_64 = "sm90_ws_64x128_mc2";
/* the 64 x 128 tile in clusters of 4 x 1, 2 x 2 and 4 x 2 (M x N) */
static const char *const MC4_64 = "sm90_ws_64x128_mc4";
static const char *const MC2X2_64 = "sm90_ws_64x128_mc2x2";
static const char *const MC4X2_64 = "sm90_ws_64x128_mc4x2";

/* The library's split-K plan (gemm_sm90.cu, sm90_splitk_splits) for tiles
 * 128 x bn: the number of K splits for this shape on `sms` SMs, 0 where it
 * does not split (each split keeps >= 4 k-blocks, >= 16 for bn = 128). */
static int splitk_plan_bn(int64_t m, int64_t n, int64_t k, int sms, int64_t bn)
{
    const int64_t tiles = ((m + 127) / 128) * ((n + bn - 1) / bn);
    const int64_t k_blocks = (k + 63) / 64;
    if (tiles <= 0 || 2 * tiles > sms || k_blocks < 8) return 0;
    int64_t s = sms / tiles;
    if (s > k_blocks / (bn == 128 ? 16 : 4)) s = k_blocks / (bn == 128 ? 16 : 4);
    if (s > 16) s = 16;
    return s >= 2 ? (int)s : 0;
}
static int splitk_plan(int64_t m, int64_t n, int64_t k, int sms) { return splitk_plan_bn(m, n, k, sms, 256); }

/* Clusters of four CTAs of ~225 KB of shared memory and 384 threads (the
 * 64 x 128 multicast kernels) the device holds at once: 30 on the H200.
 * Set in main from a kernel of the same shape. */
static int g_max_clusters4;
/* The device's peak DRAM bandwidth as the handle works it out (dram_peak.h):
 * the small-grid rule lets clusters of four take longer K below 4 TB/s. */
static int64_t g_dram_gbps;
__global__ void cluster_probe_kernel(int *p)
{
    extern __shared__ int smem_probe[];
    if (p) p[threadIdx.x] = smem_probe[threadIdx.x];
}
static int max_clusters4(void)
{
    const int smem = 230528; /* sm90_tile<64, 128>::SMEM_BYTES */
    if (cudaFuncSetAttribute(cluster_probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             smem) != cudaSuccess)
        return 0;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 4;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3(4 * 64);
    cfg.blockDim = dim3(384);
    cfg.dynamicSmemBytes = smem;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, cluster_probe_kernel, &cfg) != cudaSuccess) return 0;
    return n;
}

/* Auto's sm90 kernel for an NT call with m > 64, A [m, k] and B [n, k]
 * dense (lda = ldb = k) at 256-byte-aligned bases, a 16-bit C with ldc = n
 * and beta = 0 (gemm_sm90.cu, cuops_gemm_sm90_auto_tile128 and the table
 * after it): the small-grid rule (gemm_tuning.h, cuops_sm90_small_grid_pick,
 * whose picks tests/test_gemm_small_grid_pick.c pins on the CPU) asked with
 * the answers this test works out for the call: rows on 128-byte lines when
 * k * 2 bytes is a multiple of 128, C in place when n % 8 == 0, the clusters
 * of four from max_clusters4, every planned cluster of two fitting at once
 * (true for the shapes used here on H100/H200), the device's DRAM bandwidth;
 * then the 128 x 256 entries. */
static const char *auto_sm90_kernel(int64_t m, int64_t n, int64_t k, int sms)
{
    const int split128 = splitk_plan_bn(m, n, k, sms, 128) > 0;
    const cuops_sm90_small_call_t call = {m, n, k, sms, (k * 2) % 128 == 0, n % 8 != 0, 1, 1,
                                          g_max_clusters4, split128, split128, g_dram_gbps};
    switch (cuops_sm90_small_grid_pick(&call)) {
    case CUOPS_SM90_PICK_64: return V64;
    case CUOPS_SM90_PICK_64_MC2: return MC2_64;
    case CUOPS_SM90_PICK_64_MC4: return MC4_64;
    case CUOPS_SM90_PICK_128_DSMEM: return DSMEM128;
    case CUOPS_SM90_PICK_128: return V128;
    default: return splitk_plan(m, n, k, sms) > 0 ? DSMEM : VARIANT;
    }
}

typedef struct gemm_case {
    cuops_op_t ta, tb;
    int64_t m, n, k;
    cuops_dtype_t ab, ct;
    float alpha, beta;
    int64_t pad;       /* extra elements per row of A, B and C */
    int64_t offset;    /* element offset of every base pointer (1: misaligned) */
    unsigned flags;
    int sampled;       /* 1: check rows/cols + C*x instead of a full CPU GEMM */
    int split_k;       /* options.split_k (1: no split tail) */
} gemm_case_t;

/* The split-tail plan (gemm_tuning.h, cuops_sm90_tail_splits; pinned by
 * test_gemm_tail_plan on the CPU) for the plain kernel with bm x bn tiles:
 * into how many pieces the tiles of a partial last round are split along K
 * (then cuops_last_kernel names the kernel with "_tail"), 0 for none. */
static int g_sms;             /* the device's SMs (main) */
static int g_ws_limited;      /* a user workspace too small for the tail is set */
static int tail_plan(int64_t m, int64_t n, int64_t k, int sms, int64_t bm, int64_t bn)
{
    return cuops_sm90_tail_splits(((m + bm - 1) / bm) * ((n + bn - 1) / bn), (k + 63) / 64, sms);
}

/* The kernel name a call forced to (or auto-resolved to) `base` reports:
 * the plain entries add "_tail" where their plan splits the last round. */
static const char *expected_kernel(const char *base, const gemm_case_t *c)
{
    /* packers: the SMs the packer-CTA entries keep from the tiles (their
     * split tail is planned for the rest) */
    static const struct { const char *name, *tail; int bm, bn, packers; } plain[] = {
        {"sm90_ws_128x256", "sm90_ws_128x256_tail", 128, 256, 0},
        {"sm90_ws_128x256_direct_c", "sm90_ws_128x256_direct_c_tail", 128, 256, 0},
        {"sm90_ws_128x256_pack_inside", "sm90_ws_128x256_pack_inside_tail", 128, 256, 0},
        {"sm90_ws_128x128_pack_inside", "sm90_ws_128x128_pack_inside_tail", 128, 128, 0},
        {"sm90_ws_128x256_pack_bulk", "sm90_ws_128x256_pack_bulk_tail", 128, 256, 0},
        {"sm90_ws_128x128_pack_bulk", "sm90_ws_128x128_pack_bulk_tail", 128, 128, 0},
        {"sm90_ws_128x256_pack_ctas", "sm90_ws_128x256_pack_ctas_tail", 128, 256, 16},
        {"sm90_ws_128x256_pack_ctas8", "sm90_ws_128x256_pack_ctas8_tail", 128, 256, 8},
        {"sm90_ws_128x256_pack_ctas24", "sm90_ws_128x256_pack_ctas24_tail", 128, 256, 24},
        {"sm90_ws_128x256_pack_join", "sm90_ws_128x256_pack_join_tail", 128, 256, 0},
        {"sm90_ws_128x256_pack_join8", "sm90_ws_128x256_pack_join8_tail", 128, 256, 0},
        {"sm90_ws_128x128_pack_join", "sm90_ws_128x128_pack_join_tail", 128, 128, 0},
        {"sm90_ws_128x128", "sm90_ws_128x128_tail", 128, 128, 0},
        {"sm90_ws_64x128", "sm90_ws_64x128_tail", 64, 128, 0},
    };
    if (!base || c->split_k == 1 || g_ws_limited || c->k == 0) return base;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (!strcmp(base, plain[i].name)) {
            const int packers = plain[i].packers < g_sms / 2 ? plain[i].packers : g_sms / 2;
            return tail_plan(c->m, c->n, c->k, g_sms - packers, plain[i].bm, plain[i].bn)
                       ? plain[i].tail
                       : base;
        }
    return base;
}

static double elem(const void *p, cuops_dtype_t t, int64_t i) { return tu_get(p, t, (size_t)i); }

static const char *tname(cuops_dtype_t t) { return t == CUOPS_DTYPE_F16 ? "f16" : t == CUOPS_DTYPE_BF16 ? "bf16" : "f32"; }

/* op(A)[i,kk] and op(B)[kk,j] of the host copies. */
static double opa(const gemm_case_t *c, const void *a, int64_t lda, int64_t i, int64_t kk)
{
    return c->ta == CUOPS_OP_N ? elem(a, c->ab, i * lda + kk) : elem(a, c->ab, kk * lda + i);
}
static double opb(const gemm_case_t *c, const void *b, int64_t ldb, int64_t kk, int64_t j)
{
    return c->tb == CUOPS_OP_N ? elem(b, c->ab, kk * ldb + j) : elem(b, c->ab, j * ldb + kk);
}

static void describe(const gemm_case_t *c, char *buf, size_t len)
{
    snprintf(buf, len, "%c%c m=%lld n=%lld k=%lld %s->%s alpha=%g beta=%g pad=%lld off=%lld flags=%u",
             c->ta == CUOPS_OP_N ? 'N' : 'T', c->tb == CUOPS_OP_N ? 'N' : 'T', (long long)c->m,
             (long long)c->n, (long long)c->k, tname(c->ab), tname(c->ct), c->alpha, c->beta,
             (long long)c->pad, (long long)c->offset, c->flags);
}

/* Error bound for one element: the output rounding (bf16: 2^-8 relative)
 * plus a floor proportional to the typical magnitude, far below what a wrong
 * tile, a wrong k-block or a swizzle error produces (O(rms)). */
static int close_enough(double got, double ref, double rms)
{
    return fabs(got - ref) <= 1e-2 * (fabs(ref) + rms);
}

static void run_case(cuops_handle_t gpu, cuops_handle_t cpu, const gemm_case_t *c, const char *variant,
                     const char *expect_kernel)
{
    char what[256];
    describe(c, what, sizeof what);
    const size_t ab_es = 2, c_es = (c->ct == CUOPS_DTYPE_F32) ? 4 : 2;
    const int64_t a_rows = c->ta == CUOPS_OP_N ? c->m : c->k, a_cols = c->ta == CUOPS_OP_N ? c->k : c->m;
    const int64_t b_rows = c->tb == CUOPS_OP_N ? c->k : c->n, b_cols = c->tb == CUOPS_OP_N ? c->n : c->k;
    const int64_t lda = (a_cols > 0 ? a_cols : 1) + c->pad, ldb = (b_cols > 0 ? b_cols : 1) + c->pad;
    const int64_t ldc = c->n + c->pad;
    const size_t a_elems = (size_t)(a_rows * lda + c->offset), b_elems = (size_t)(b_rows * ldb + c->offset);
    const size_t c_elems = (size_t)(c->m * ldc + c->offset);

    void *ha = malloc(a_elems * ab_es + 1), *hb = malloc(b_elems * ab_es + 1);
    void *hc_in = malloc(c_elems * c_es), *hc_out = malloc(c_elems * c_es);
    tu_fill_float(ha, c->ab, a_elems, -1.0, 1.0);
    tu_fill_float(hb, c->ab, b_elems, -1.0, 1.0);
    tu_poison(hc_in, c->ct, c_elems);
    if (c->beta != 0.0f)
        for (int64_t i = 0; i < c->m; i++)
            tu_fill_float((char *)hc_in + (size_t)(c->offset + i * ldc) * c_es, c->ct, (size_t)c->n, -1.0, 1.0);

    void *da = NULL, *db = NULL, *dc = NULL;
    if (cudaMalloc(&da, a_elems * ab_es) != cudaSuccess || cudaMalloc(&db, b_elems * ab_es) != cudaSuccess ||
        cudaMalloc(&dc, c_elems * c_es) != cudaSuccess) {
        CHECK(0, "%s: cudaMalloc failed", what);
        goto done;
    }
    cudaMemcpy(da, ha, a_elems * ab_es, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, b_elems * ab_es, cudaMemcpyHostToDevice);
    cudaMemcpy(dc, hc_in, c_elems * c_es, cudaMemcpyHostToDevice);
    {
        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.variant = variant;
        opt.flags = c->flags;
        opt.split_k = c->split_k;
        const void *a_dev = (const char *)da + c->offset * ab_es;
        const void *b_dev = (const char *)db + c->offset * ab_es;
        void *c_dev = (char *)dc + c->offset * c_es;
        cuops_status_t st = cuops_gemm_ex(gpu, c->ta, c->tb, c->m, c->n, c->k, c->alpha, a_dev, lda, b_dev,
                                          ldb, c->beta, c_dev, ldc, c->ab, c->ct, &opt);
        CHECK(st == CUOPS_STATUS_SUCCESS, "%s: %s (%s)", what, cuops_status_string(st), cuops_last_error(gpu));
        if (st != CUOPS_STATUS_SUCCESS) goto done;
        expect_kernel = expected_kernel(expect_kernel, c);
        if (expect_kernel)
            CHECK(strcmp(cuops_last_kernel(gpu), expect_kernel) == 0, "%s: ran %s, expected %s", what,
                  cuops_last_kernel(gpu), expect_kernel);
        cudaError_t err = cudaDeviceSynchronize();
        CHECK(err == cudaSuccess, "%s: kernel failed: %s", what, cudaGetErrorString(err));
        if (err != cudaSuccess) goto done;
        cudaMemcpy(hc_out, dc, c_elems * c_es, cudaMemcpyDeviceToHost);
    }

    /* Nothing written outside the m x n region (padding and the offset stay poison). */
    {
        int64_t bad = 0;
        for (int64_t i = 0; i < c->offset; i++) bad += !isnan(elem(hc_out, c->ct, i));
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = c->n; j < ldc; j++) bad += !isnan(elem(hc_out, c->ct, c->offset + i * ldc + j));
        CHECK(bad == 0, "%s: %lld elements outside C's m x n region were written", what, (long long)bad);
    }

    if (!c->sampled) {
        /* Full reference: CPU backend, f32 output (fp64 accumulation), same
         * inputs, C given as f32 copies of the GPU's starting values. */
        float *ref = (float *)malloc((size_t)(c->m * c->n) * sizeof(float));
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++)
                ref[i * c->n + j] = c->beta != 0.0f ? (float)elem(hc_in, c->ct, c->offset + i * ldc + j) : NAN;
        cuops_status_t st = cuops_gemm(cpu, c->ta, c->tb, c->m, c->n, c->k, c->alpha,
                                       (const char *)ha + c->offset * ab_es, lda,
                                       (const char *)hb + c->offset * ab_es, ldb, c->beta, ref, c->n, c->ab,
                                       CUOPS_DTYPE_F32);
        CHECK(st == CUOPS_STATUS_SUCCESS, "%s: CPU reference: %s", what, cuops_last_error(cpu));
        if (st == CUOPS_STATUS_SUCCESS) {
            double sq = 0, sq_err = 0;
            for (int64_t i = 0; i < c->m * c->n; i++) sq += (double)ref[i] * ref[i];
            const double rms = sqrt(sq / (double)(c->m * c->n)) + 1e-30;
            int64_t bad = 0, nan_count = 0, first_i = -1, first_j = -1;
            for (int64_t i = 0; i < c->m; i++)
                for (int64_t j = 0; j < c->n; j++) {
                    const double got = elem(hc_out, c->ct, c->offset + i * ldc + j), r = ref[i * c->n + j];
                    if (isnan(got)) nan_count++;
                    else sq_err += (got - r) * (got - r);
                    if (isnan(got) || !close_enough(got, r, rms)) {
                        if (bad == 0) { first_i = i; first_j = j; }
                        bad++;
                    }
                }
            const double rel = sqrt(sq_err / (sq + 1e-300));
            CHECK(nan_count == 0, "%s: %lld NaN outputs (unwritten)", what, (long long)nan_count);
            CHECK(bad == 0, "%s: %lld bad elements, first at (%lld,%lld): got %g want %g", what, (long long)bad,
                  (long long)first_i, (long long)first_j,
                  first_i >= 0 ? elem(hc_out, c->ct, c->offset + first_i * ldc + first_j) : 0.0,
                  first_i >= 0 ? (double)ref[first_i * c->n + first_j] : 0.0);
            CHECK(rel <= 1e-2, "%s: relative error %g", what, rel);
        }
        free(ref);
    } else {
        /* Rows and columns at tile edges (0, 63, 64, 127, 128, ..., last) and
         * a few random ones, exactly in fp64; then C*x vs A*(B*x). */
        int64_t rows[12], cols[12];
        int nr = 0, nc = 0;
        const int64_t edge_r[] = {0, 63, 64, 127, 128, c->m - 1, c->m / 2};
        const int64_t edge_c[] = {0, 1, 255, 256, 511, c->n - 1, c->n / 2};
        for (int i = 0; i < 7; i++) if (edge_r[i] >= 0 && edge_r[i] < c->m) rows[nr++] = edge_r[i];
        for (int i = 0; i < 7; i++) if (edge_c[i] >= 0 && edge_c[i] < c->n) cols[nc++] = edge_c[i];
        while (nr < 12) rows[nr++] = (int64_t)(tu_rand_u64() % (uint64_t)c->m);
        while (nc < 12) cols[nc++] = (int64_t)(tu_rand_u64() % (uint64_t)c->n);
        int64_t bad = 0, checked = 0;
        double *acol = (double *)malloc((size_t)c->k * sizeof(double));
        const void *a0 = (const char *)ha + c->offset * ab_es, *b0 = (const char *)hb + c->offset * ab_es;
        for (int ri = 0; ri < nr; ri++) {
            const int64_t i = rows[ri];
            for (int64_t kk = 0; kk < c->k; kk++) acol[kk] = opa(c, a0, lda, i, kk);
            for (int64_t j = 0; j < c->n; j++) {
                double s = 0;
                for (int64_t kk = 0; kk < c->k; kk++) s += acol[kk] * opb(c, b0, ldb, kk, j);
                s *= c->alpha;
                if (c->beta != 0.0f) s += c->beta * elem(hc_in, c->ct, c->offset + i * ldc + j);
                const double got = elem(hc_out, c->ct, c->offset + i * ldc + j);
                const double rms_guess = sqrt((double)c->k / 9.0) * fabs(c->alpha) + 1e-30;
                if (isnan(got) || !close_enough(got, s, rms_guess)) {
                    if (bad < 3) fprintf(stderr, "  %s: (%lld,%lld) got %g want %g\n", what, (long long)i, (long long)j, got, s);
                    bad++;
                }
                checked++;
            }
        }
        for (int ci = 0; ci < nc; ci++) {
            const int64_t j = cols[ci];
            for (int64_t kk = 0; kk < c->k; kk++) acol[kk] = opb(c, b0, ldb, kk, j);
            for (int64_t i = 0; i < c->m; i++) {
                double s = 0;
                for (int64_t kk = 0; kk < c->k; kk++) s += opa(c, a0, lda, i, kk) * acol[kk];
                s *= c->alpha;
                if (c->beta != 0.0f) s += c->beta * elem(hc_in, c->ct, c->offset + i * ldc + j);
                const double got = elem(hc_out, c->ct, c->offset + i * ldc + j);
                const double rms_guess = sqrt((double)c->k / 9.0) * fabs(c->alpha) + 1e-30;
                if (isnan(got) || !close_enough(got, s, rms_guess)) {
                    if (bad < 3) fprintf(stderr, "  %s: (%lld,%lld) got %g want %g\n", what, (long long)i, (long long)j, got, s);
                    bad++;
                }
                checked++;
            }
        }
        free(acol);
        CHECK(bad == 0, "%s: %lld of %lld sampled elements wrong", what, (long long)bad, (long long)checked);

        /* y = C x against z = alpha*A(Bx) + beta*C0 x over every row, plus a
         * NaN scan of the whole output. */
        double *x = (double *)malloc((size_t)c->n * sizeof(double));
        double *bx = (double *)malloc((size_t)c->k * sizeof(double));
        for (int64_t j = 0; j < c->n; j++) x[j] = tu_rand_uniform(-1.0, 1.0);
        for (int64_t kk = 0; kk < c->k; kk++) {
            double s = 0;
            for (int64_t j = 0; j < c->n; j++) s += opb(c, b0, ldb, kk, j) * x[j];
            bx[kk] = s;
        }
        int64_t nan_count = 0, row_bad = 0;
        double zz = 0, ee = 0;
        double *z = (double *)malloc((size_t)c->m * sizeof(double)), *y = (double *)malloc((size_t)c->m * sizeof(double));
        for (int64_t i = 0; i < c->m; i++) {
            double s = 0, yi = 0;
            for (int64_t kk = 0; kk < c->k; kk++) s += opa(c, a0, lda, i, kk) * bx[kk];
            s *= c->alpha;
            for (int64_t j = 0; j < c->n; j++) {
                const double got = elem(hc_out, c->ct, c->offset + i * ldc + j);
                if (isnan(got)) nan_count++;
                else yi += got * x[j];
                if (c->beta != 0.0f) s += c->beta * elem(hc_in, c->ct, c->offset + i * ldc + j) * x[j];
            }
            z[i] = s; y[i] = yi;
            zz += s * s; ee += (yi - s) * (yi - s);
        }
        const double zrms = sqrt(zz / (double)c->m) + 1e-30;
        /* One wrong 128x256 tile moves its rows' y by >= ~25% of the rms;
         * rounding moves it by < 1%. */
        for (int64_t i = 0; i < c->m; i++) if (fabs(y[i] - z[i]) > 0.03 * zrms) {
            if (row_bad < 3) fprintf(stderr, "  %s: row %lld: Cx %g, A(Bx) %g\n", what, (long long)i, y[i], z[i]);
            row_bad++;
        }
        CHECK(nan_count == 0, "%s: %lld NaN outputs (unwritten)", what, (long long)nan_count);
        CHECK(row_bad == 0, "%s: C*x disagrees with A*(B*x) on %lld rows", what, (long long)row_bad);
        CHECK(sqrt(ee / (zz + 1e-300)) <= 1e-2, "%s: C*x relative error %g", what, sqrt(ee / (zz + 1e-300)));
        free(x); free(bx); free(z); free(y);
    }
    fprintf(stderr, "ok-checked %s\n", what);
done:
    cudaFree(da); cudaFree(db); cudaFree(dc);
    free(ha); free(hb); free(hc_in); free(hc_out);
}

/* run_case with a user workspace of `bytes` set through cuops_set_workspace
 * (the handle's own workspace back afterwards). 1 MB: too small for the
 * split and tail partials of the shapes used here; 64 MB: room for them,
 * and the tail's counters then live there, cleared per call. */
static void run_case_workspace(cuops_handle_t gpu, cuops_handle_t cpu, const gemm_case_t *c,
                               const char *variant, const char *expect_kernel, size_t bytes)
{
    void *ws = NULL;
    if (cudaMalloc(&ws, bytes) != cudaSuccess) {
        CHECK(0, "cudaMalloc %zu bytes failed", bytes);
        return;
    }
    CHECK_STATUS(cuops_set_workspace(gpu, ws, bytes), CUOPS_STATUS_SUCCESS);
    g_ws_limited = bytes < ((size_t)64 << 20);
    run_case(gpu, cpu, c, variant, expect_kernel);
    g_ws_limited = 0;
    CHECK_STATUS(cuops_set_workspace(gpu, NULL, 0), CUOPS_STATUS_SUCCESS);
    cudaFree(ws);
}

static void run_case_small_workspace(cuops_handle_t gpu, cuops_handle_t cpu, const gemm_case_t *c,
                                     const char *variant, const char *expect_kernel)
{
    run_case_workspace(gpu, cpu, c, variant, expect_kernel, (size_t)1 << 20);
}

/* Two runs of a forced variant that splits K (split-K, or the plain kernels'
 * split tail) on the same inputs must give the same bits (fixed
 * summation order, no atomics on the data). */
static void check_split_deterministic(cuops_handle_t gpu, int64_t m, int64_t n, int64_t k,
                                      cuops_dtype_t ab, cuops_dtype_t ct, const char *variant)
{
    const size_t c_es = ct == CUOPS_DTYPE_F32 ? 4 : 2;
    const size_t a_elems = (size_t)(m * k), b_elems = (size_t)(n * k), c_elems = (size_t)(m * n);
    void *ha = malloc(a_elems * 2), *hb = malloc(b_elems * 2);
    void *h1 = malloc(c_elems * c_es), *h2 = malloc(c_elems * c_es);
    void *da = NULL, *db = NULL, *dc = NULL;
    tu_fill_float(ha, ab, a_elems, -1.0, 1.0);
    tu_fill_float(hb, ab, b_elems, -1.0, 1.0);
    if (cudaMalloc(&da, a_elems * 2) != cudaSuccess || cudaMalloc(&db, b_elems * 2) != cudaSuccess ||
        cudaMalloc(&dc, c_elems * c_es) != cudaSuccess) {
        CHECK(0, "determinism %lldx%lldx%lld: cudaMalloc failed", (long long)m, (long long)n, (long long)k);
    } else {
        cudaMemcpy(da, ha, a_elems * 2, cudaMemcpyHostToDevice);
        cudaMemcpy(db, hb, b_elems * 2, cudaMemcpyHostToDevice);
        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.variant = variant;
        void *outs[2] = {h1, h2};
        int ok = 1;
        for (int run = 0; run < 2 && ok; run++) {
            cudaMemset(dc, 0xFF, c_elems * c_es); /* NaN in every dtype */
            cuops_status_t st = cuops_gemm_ex(gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, da, k, db, k, 0.0f,
                                              dc, n, ab, ct, &opt);
            CHECK(st == CUOPS_STATUS_SUCCESS, "determinism %s run %d: %s (%s)", variant, run, cuops_status_string(st),
                  cuops_last_error(gpu));
            ok = st == CUOPS_STATUS_SUCCESS && cudaDeviceSynchronize() == cudaSuccess;
            if (ok) cudaMemcpy(outs[run], dc, c_elems * c_es, cudaMemcpyDeviceToHost);
        }
        if (ok)
            CHECK(memcmp(h1, h2, c_elems * c_es) == 0,
                  "%s %lldx%lldx%lld %s->%s: two runs differ in their bits", variant, (long long)m,
                  (long long)n, (long long)k, tname(ab), tname(ct));
    }
    cudaFree(da); cudaFree(db); cudaFree(dc);
    free(ha); free(hb); free(h1); free(h2);
}

/* The same NT GEMM through several variants must give the same bits: C is
 * poisoned the same way before each, ld_a = k + pad_a, ld_b = k + pad_b,
 * ldc = n + pad_c, every pointer `offset` elements past an aligned base.
 * The shifted rows against the register epilogue writing C in place
 * (sm90_ws_128x256_direct_c): both round alpha * acc once, and neither may
 * touch C's padding or what lies before it. The operands packed inside the
 * kernel (the "_pack_inside" and "_pack_bulk" entries) against packed by a
 * launch before it: the same packed rows, the same main loop. Every variant
 * runs without the split tail (options.split_k = 1): the tail's plan depends
 * on the CTAs that run tiles (all SMs, or all but the packer CTAs of the
 * "_pack_ctas" entries), and a split tail adds its pieces in another order
 * (at 4095^3 on 132 SMs the base kernel does not split, "_pack_ctas" on 116
 * GEMM CTAs splits its last round in two, "_pack_ctas8" on 124 in three). */
static void check_same_bits(cuops_handle_t gpu, int64_t m, int64_t n, int64_t k, int64_t pad_a,
                            int64_t pad_b, int64_t pad_c, int64_t offset, cuops_dtype_t ab,
                            cuops_dtype_t ct, const char *const *variants, int count)
{
    const int64_t lda = k + pad_a, ldb = k + pad_b, ldc = n + pad_c;
    const size_t a_elems = (size_t)(m * lda + offset), b_elems = (size_t)(n * ldb + offset);
    const size_t c_elems = (size_t)(m * ldc + offset);
    void *ha = malloc(a_elems * 2), *hb = malloc(b_elems * 2);
    void *h0 = malloc(c_elems * 2), *h1 = malloc(c_elems * 2);
    void *da = NULL, *db = NULL, *dc = NULL;
    tu_fill_float(ha, ab, a_elems, -1.0, 1.0);
    tu_fill_float(hb, ab, b_elems, -1.0, 1.0);
    if (cudaMalloc(&da, a_elems * 2) != cudaSuccess || cudaMalloc(&db, b_elems * 2) != cudaSuccess ||
        cudaMalloc(&dc, c_elems * 2) != cudaSuccess) {
        CHECK(0, "same bits %lldx%lldx%lld: cudaMalloc failed", (long long)m, (long long)n, (long long)k);
    } else {
        cudaMemcpy(da, ha, a_elems * 2, cudaMemcpyHostToDevice);
        cudaMemcpy(db, hb, b_elems * 2, cudaMemcpyHostToDevice);
        for (int v = 0; v < count; v++) {
            cuops_options_t opt;
            memset(&opt, 0, sizeof opt);
            opt.variant = variants[v];
            opt.split_k = 1;
            cudaMemset(dc, 0xFF, c_elems * 2); /* NaN in f16 and bf16 */
            cuops_status_t st = cuops_gemm_ex(gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, -1.25f,
                                              (const uint16_t *)da + offset, lda,
                                              (const uint16_t *)db + offset, ldb, 0.0f,
                                              (uint16_t *)dc + offset, ldc, ab, ct, &opt);
            CHECK(st == CUOPS_STATUS_SUCCESS, "same bits %s: %s (%s)", variants[v],
                  cuops_status_string(st), cuops_last_error(gpu));
            if (st != CUOPS_STATUS_SUCCESS || cudaDeviceSynchronize() != cudaSuccess) {
                CHECK(0, "same bits %s: the kernel failed", variants[v]);
                break;
            }
            cudaMemcpy(v == 0 ? h0 : h1, dc, c_elems * 2, cudaMemcpyDeviceToHost);
            if (v > 0)
                CHECK(memcmp(h0, h1, c_elems * 2) == 0,
                      "%lldx%lldx%lld %s->%s lda %lld ldb %lld ldc %lld offset %lld: %s differs "
                      "from %s's bits",
                      (long long)m, (long long)n, (long long)k, tname(ab), tname(ct),
                      (long long)lda, (long long)ldb, (long long)ldc, (long long)offset,
                      variants[v], variants[0]);
        }
    }
    cudaFree(da); cudaFree(db); cudaFree(dc);
    free(ha); free(hb); free(h0); free(h1);
}

static void check_odd_c_matches_direct(cuops_handle_t gpu, int64_t m, int64_t n, int64_t k,
                                       int64_t pad, int64_t offset, cuops_dtype_t ab,
                                       cuops_dtype_t ct)
{
    const char *const variants[3] = {VARIANT, DIRECT_C, PACKIN};
    check_same_bits(gpu, m, n, k, pad, pad, pad, offset, ab, ct, variants, 3);
}

/* A forced split-K call on a shape its plan does not split: declined like
 * any variant that cannot serve a call (NOT_SUPPORTED plus a detail). */
static void check_split_declines(cuops_handle_t gpu, void *d, int64_t m, int64_t n, int64_t k)
{
    const char *const variants[2] = {SPLITK, DSMEM};
    for (int v = 0; v < 2; v++) {
        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.variant = variants[v];
        const int64_t ld = k > 0 ? k : 1; /* the API asks for ld >= 1 even when k == 0 */
        cuops_status_t st = cuops_gemm_ex(gpu, CUOPS_OP_N, CUOPS_OP_T, m, n, k, 1.0f, d, ld, d, ld, 0.0f,
                                          d, n, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, &opt);
        CHECK(st == CUOPS_STATUS_NOT_SUPPORTED,
              "forced %s on %lldx%lldx%lld: got %s, expected NOT_SUPPORTED", variants[v],
              (long long)m, (long long)n, (long long)k, cuops_status_string(st));
        CHECK(cuops_last_error(gpu)[0] != 0, "forced %s on %lldx%lldx%lld: no detail", variants[v],
              (long long)m, (long long)n, (long long)k);
        fprintf(stderr, "declined as expected: %s\n", cuops_last_error(gpu));
    }
}

/* Sections 1-4 of main for one plain (unsplit) variant: every dtype pair,
 * multi-tile grids with each flag, the TMA-store epilogue, every transpose
 * pair with padded and misaligned operands, k == 0. */
static void check_plain_variant(cuops_handle_t gpu, cuops_handle_t cpu, int quick, const char *variant)
{
    const cuops_dtype_t abs_[2] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
    const cuops_dtype_t cts[3] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32};
    const cuops_op_t N = CUOPS_OP_N, T = CUOPS_OP_T;
    /* 1. The native case (NT, aligned, no packing): every dtype pair, single
     *    and multi-tile, k-blocks below, at and above the stage count. */
    {
        const int64_t shapes[][3] = {{128, 256, 64}, {65, 8, 8}, {129, 257, 72}, {200, 300, 264}, {256, 512, 1024}};
        const int ns = quick ? 2 : 5;
        for (int a = 0; a < 2; a++)
            for (int ci = 0; ci < 3; ci++)
                for (int s = 0; s < ns; s++) {
                    gemm_case_t c = {N, T, shapes[s][0], shapes[s][1], shapes[s][2], abs_[a], cts[ci],
                                     1.0f, 0.0f, 0, 0, 0, 0};
                    run_case(gpu, cpu, &c, variant, variant);
                }
    }
    /* 2. More tiles than SMs: each CTA runs several tiles, mbarrier phases
     *    carry across tiles; with and without swizzle / stagger; beta != 0. */
    {
        const unsigned flag_sets[3] = {0, CUOPS_FLAG_NO_SWIZZLE, CUOPS_FLAG_STAGGER_K};
        for (int f = 0; f < (quick ? 1 : 3); f++) {
            gemm_case_t c = {N, T, 1537, 4353, 200, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32, 0.75f, 0.0f, 0, 0,
                             flag_sets[f], 0};
            if (quick) { c.m = 520; c.n = 8000; c.k = 136; } /* 5 x 32 = 160 tiles > 132 SMs */
            run_case(gpu, cpu, &c, variant, variant);
        }
        gemm_case_t c = {N, T, 1100, 2100, 136, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.25f, -0.5f, 8, 0, 0, 0};
        if (!quick) run_case(gpu, cpu, &c, variant, variant);
        /* The epilogue by TMA stores (16-bit C, beta == 0, ldc % 8 == 0, n % 8
         * == 0): several tiles per CTA (its two buffers reused across tiles),
         * boxes clipped at m and n inside a tile, the ldc padding untouched;
         * and n % 8 != 0 with the same ldc (the register epilogue). */
        const gemm_case_t tma_cases[] = {
            {N, T, 1537, 4352, 136, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 0.75f, 0.0f, 8, 0, 0, 0},
            {N, T, 300, 200, 136, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 8, 0, 0, 0},
            {N, T, 300, 65, 136, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 7, 0, 0, 0},
        };
        for (int i = 0; i < 3; i++) {
            if (quick && i == 0) continue;
            gemm_case_t t = tma_cases[i];
            run_case(gpu, cpu, &t, variant, variant);
        }
    }
    /* 3. Every transpose pair, ragged sizes, padded leading dimensions,
     *    misaligned bases (packing path), beta != 0. */
    {
        const cuops_op_t ops[4][2] = {{N, T}, {N, N}, {T, T}, {T, N}};
        const int64_t shapes[][3] = {{65, 7, 17}, {129, 129, 65}, {300, 520, 136}, {257, 1, 1}};
        for (int o = 0; o < 4; o++)
            for (int s = 0; s < (quick ? 2 : 4); s++)
                for (int v = 0; v < (quick ? 2 : 4); v++) {
                    gemm_case_t c = {ops[o][0], ops[o][1], shapes[s][0], shapes[s][1], shapes[s][2],
                                     abs_[v % 2], cts[(o + s + v) % 3], 1.0f, 0.0f, 0, 0, 0, 0};
                    if (v >= 1) c.pad = 3;                 /* row strides not multiples of 16 bytes */
                    if (v >= 2) { c.offset = 1; c.beta = 0.5f; c.alpha = -1.5f; }  /* misaligned bases */
                    if (v == 3) c.pad = 8;
                    run_case(gpu, cpu, &c, variant, variant);
                }
    }
    /* 4. k == 0: C = beta * C (beta == 0: zeros, C not read). */
    {
        gemm_case_t c = {N, T, 130, 70, 0, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, 1.0f, 0.5f, 2, 0, 0, 0};
        run_case(gpu, cpu, &c, variant, variant);
        c.beta = 0.0f; c.ct = CUOPS_DTYPE_BF16;
        run_case(gpu, cpu, &c, variant, variant);
    }
}

int main(void)
{
    tu_seed_from_env();
    const int quick = getenv("CUOPS_TEST_QUICK") != NULL;
    cuops_handle_t gpu = NULL, cpu = NULL;
    if (!tu_gpu_handle(&gpu)) return tu_finish("test_gpu_gemm_sm90");
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    if (prop.major != 9) {
        SKIP("device is sm_%d%d; sm90_ws_128x256 needs sm_90", prop.major, prop.minor);
        cuops_destroy(gpu);
        return tu_finish("test_gpu_gemm_sm90");
    }
    CHECK_STATUS(cuops_create(&cpu, CUOPS_DEVICE_CPU), CUOPS_STATUS_SUCCESS);
    if (!gpu || !cpu) return tu_finish("test_gpu_gemm_sm90");
    g_sms = prop.multiProcessorCount;
    g_max_clusters4 = max_clusters4();
    g_dram_gbps = tu_gpu_dram_peak_gbps();

    const cuops_dtype_t abs_[2] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16};
    const cuops_dtype_t cts[3] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32};
    const cuops_op_t N = CUOPS_OP_N, T = CUOPS_OP_T;

    const char *const only = getenv("CUOPS_TEST_VARIANT");
    if (only && only[0]) {
        check_plain_variant(gpu, cpu, quick, only);
        cuops_destroy(gpu);
        cuops_destroy(cpu);
        return tu_finish("test_gpu_gemm_sm90");
    }
    check_plain_variant(gpu, cpu, quick, VARIANT);
    /* 2b. C that TMA cannot store to in place (ldc not a multiple of 8,
     *     misaligned base, n % 8 != 0): stored with shifted rows, and
     *     misaligned K-major A and B packed by the row copy. Odd pads
     *     give every row its own misalignment (all 8 for rows r..r+7); the
     *     shapes reach rows shorter than a chunk (n = 1, k = 17), rows of
     *     many chunks, and n = 13 (one 16-byte unit per row, the rest past
     *     it). Checked against the CPU reference, the padding and the
     *     offset checked untouched (run_case), and bitwise against the
     *     register epilogue. */
    {
        const int64_t shapes[][3] = {{129, 61, 77}, {300, 520, 136}, {65, 1, 17}, {200, 1537, 33},
                                     {300, 13, 70}};
        const int64_t pads[3] = {1, 3, 5}, offsets[3] = {0, 1, 3};
        for (int s = 0; s < 5; s++)
            for (int v = 0; v < 3; v++) {
                if (quick && s >= 2) break;
                gemm_case_t c = {N, T, shapes[s][0], shapes[s][1], shapes[s][2], abs_[(s + v) % 2],
                                 cts[(s + v) % 2], v == 1 ? -0.75f : 1.0f, 0.0f, pads[v],
                                 offsets[(s + v) % 3], 0, 0};
                run_case(gpu, cpu, &c, VARIANT, VARIANT);
                run_case(gpu, cpu, &c, DIRECT_C, DIRECT_C);
            }
        check_odd_c_matches_direct(gpu, 300, 520, 136, 3, 1, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16);
        check_odd_c_matches_direct(gpu, 129, 1537, 200, 1, 5, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16);
        /* Packing inside the kernel (gemm_sm90_fused_pack.cuh) against a
         * launch before it: more tiles than SMs (rows outside the first
         * round, packed second), a split tail, a last slice of k shorter
         * than 256 (k = 300: 320 packed columns), K-major A or B alone off
         * 16 bytes (the other read in place), both tiles that pack. */
        {
            const char *const v256[6] = {VARIANT, PACKIN, PACKBULK, PACKCTAS, PACKCTAS8, PACKJOIN},
                              *const v128[4] = {V128, PACKIN128, PACKBULK128, PACKJOIN128};
            check_same_bits(gpu, 1537, 3001, 300, 3, 3, 1, 1, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, v256, 6);
            check_same_bits(gpu, 1537, 3001, 300, 5, 7, 3, 0, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, v128, 4);
            check_same_bits(gpu, 300, 520, 136, 1, 0, 1, 0, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, v256, 6);
            check_same_bits(gpu, 300, 520, 136, 0, 5, 3, 0, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F16, v256, 6);
            /* k < one slice: a bulk window spans several rows, so the last
             * rows' windows leave the operand (the bulk form's plain loads);
             * 13 items, fewer than the packer CTAs (some pack nothing) */
            check_same_bits(gpu, 77, 130, 40, 3, 1, 0, 3, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, v256, 6);
            /* 204 tiles: rounds on the packer-CTA grid's GEMM CTAs, three
             * slices */
            check_same_bits(gpu, 2049, 3001, 520, 1, 3, 1, 2, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, v256, 6);
            if (!quick) {
                check_same_bits(gpu, 4095, 4095, 4095, 0, 0, 0, 1, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16,
                                v256, 6);
                check_same_bits(gpu, 2049, 1537, 3001, 1, 3, 5, 0, CUOPS_DTYPE_BF16,
                                CUOPS_DTYPE_BF16, v128, 4);
            }
        }
        if (!quick) {
            check_odd_c_matches_direct(gpu, 1000, 2001, 257, 7, 2, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16);
            /* the suite's odd shape, sampled */
            gemm_case_t c = {N, T, 4095, 4095, 4095, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 1, 0, 1};
            run_case(gpu, cpu, &c, VARIANT, VARIANT);
        }
        /* A user workspace with room for the packed operands (256 KB) and
         * nothing more: the shifted rows need none for C. */
        gemm_case_t c = {N, T, 1000, 1000, 64, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 1, 1, 0, 0};
        run_case_small_workspace(gpu, cpu, &c, VARIANT, VARIANT);
    }
    /* 2c. MN-major operands read in place (A stored [k, m] for trans_a = T,
     *     B stored [k, n] for trans_b = N, 16-byte aligned with ld % 8 ==
     *     0): no transposing pack. Run under a 4 KB user workspace, where a
     *     pack (tens of KB here) could not run: the call succeeds only if
     *     it reads the operands where they lie. Every plain tile and auto's
     *     multicast forms, the three transpose pairs with an MN-major
     *     operand, ragged m / n / k (the dimension no leading dimension
     *     depends on), padded leading dimensions, more tiles than SMs,
     *     beta != 0, every C type (f32 where n % 8 != 0: a 16-bit C there
     *     takes the shifted rows, whose A maps are K-major, so TN and TT
     *     would pack A); NN in the shifted-rows form (B in place); auto's
     *     multicast picks in NN. The control: the same call with ld off 16
     *     bytes needs the pack and must be refused under that workspace. */
    {
        /* the plain tiles, and auto's multicast forms (clusters of two and
         * four along M, each CTA multicasting its K-rows of every B box) */
        const char *const tiles[5] = {VARIANT, "sm90_ws_128x128", "sm90_ws_64x128", MC2_64,
                                      MC4_64};
        /* {ta, tb, m, n, k}: NN needs n, k multiples of 8 (m ragged); TN m, n
         * (k ragged); TT m, k (n ragged) */
        const struct { cuops_op_t ta, tb; int64_t m, n, k; } mn_cases[] = {
            {N, N, 129, 264, 72},  {N, N, 1041, 4352, 136}, {N, N, 65, 8, 8},
            {T, N, 136, 264, 77},  {T, N, 1544, 1032, 200}, {T, N, 72, 16, 1},
            {T, T, 136, 257, 72},  {T, T, 520, 1001, 136},  {T, T, 1040, 4353, 64},
        };
        const int ncases = (int)(sizeof mn_cases / sizeof mn_cases[0]);
        for (int t = 0; t < 5; t++)
            for (int i = 0; i < ncases; i++) {
                if (quick && (i % 3) == 1) continue;
                /* clusters of four: only where the device holds one */
                if (t == 4 && g_max_clusters4 < 1) continue;
                const int v = t + i;
                /* n % 8 != 0 with a 16-bit C and beta == 0 takes the
                 * shifted rows, whose A maps are K-major (that form packs):
                 * an f32 C there (the register epilogue) */
                const cuops_dtype_t ct = mn_cases[i].n % 8 ? CUOPS_DTYPE_F32 : cts[v % 3];
                gemm_case_t c = {mn_cases[i].ta, mn_cases[i].tb, mn_cases[i].m, mn_cases[i].n,
                                 mn_cases[i].k, abs_[v % 2], ct, v % 2 ? -0.75f : 1.0f,
                                 v % 3 == 2 ? 0.5f : 0.0f, (v % 4 == 3) ? 8 : 0, 0, 0, 0};
                run_case_workspace(gpu, cpu, &c, tiles[t], tiles[t], 4096);
            }
        /* the shifted-rows form (a 16-bit C TMA cannot store: n % 8 != 0)
         * with B N-major in place: ld = n + 7 and k + 7 on 16 bytes, A
         * K-major in place, so nothing is packed */
        const struct { int64_t m, n, k; } shift_cases[] = {{300, 1001, 137}, {129, 65, 9},
                                                           {1041, 4345, 201}};
        for (int t = 0; t < 3; t++)
            for (int i = 0; i < (quick ? 2 : 3); i++) {
                const int v = t + i;
                gemm_case_t c = {N, N, shift_cases[i].m, shift_cases[i].n, shift_cases[i].k,
                                 abs_[v % 2], v % 2 ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16,
                                 v % 2 ? -0.75f : 1.0f, 0.0f, 7, 0, 0, 0};
                run_case_workspace(gpu, cpu, &c, tiles[t], tiles[t], 4096);
            }
        /* auto at small grids with operand rows off the 128-byte lines
         * (the multicast forms) in NN: the same pick as NT, both operands in
         * place (sampled checks) */
        if (!quick) {
            const int64_t off[3][3] = {{1000, 1000, 1000}, {640, 1024, 1000}, {896, 1024, 1000}};
            for (int i = 0; i < 3; i++) {
                gemm_case_t c = {N, N, off[i][0], off[i][1], off[i][2], abs_[i % 2],
                                 i % 2 ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 1};
                run_case_workspace(gpu, cpu, &c, NULL, auto_sm90_kernel(c.m, c.n, c.k, g_sms),
                                   4096);
            }
        }
        /* the control: NN with ldb = n + 1 (off 16 bytes) must be packed */
        void *dA = NULL, *dB = NULL, *dC = NULL, *ws = NULL;
        if (cudaMalloc(&dA, 1 << 20) == cudaSuccess && cudaMalloc(&dB, 1 << 20) == cudaSuccess &&
            cudaMalloc(&dC, 1 << 20) == cudaSuccess && cudaMalloc(&ws, 4096) == cudaSuccess) {
            CHECK_STATUS(cuops_set_workspace(gpu, ws, 4096), CUOPS_STATUS_SUCCESS);
            cuops_options_t opt;
            memset(&opt, 0, sizeof opt);
            opt.variant = VARIANT;
            const cuops_status_t st =
                cuops_gemm_ex(gpu, N, N, 129, 264, 72, 1.0f, dA, 72, dB, 265, 0.0f, dC, 264,
                              CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, &opt);
            CHECK(st != CUOPS_STATUS_SUCCESS,
                  "NN with ldb off 16 bytes ran under a 4 KB workspace: it cannot have been packed");
            CHECK_STATUS(cuops_set_workspace(gpu, NULL, 0), CUOPS_STATUS_SUCCESS);
            cudaDeviceSynchronize();
        } else {
            CHECK(0, "cudaMalloc failed (MN-major control)");
        }
        cudaFree(dA); cudaFree(dB); cudaFree(dC); cudaFree(ws);
    }
    /* 5. The benchmark's large shapes (sampled checks). */
    if (!quick) {
        gemm_case_t c1 = {N, T, 4095, 4095, 4095, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 1};
        run_case(gpu, cpu, &c1, VARIANT, VARIANT);
        gemm_case_t c2 = {N, T, 1537, 3001, 2049, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, 0, 1};
        run_case(gpu, cpu, &c2, VARIANT, VARIANT);
        gemm_case_t c3 = {N, T, 4096, 4096, 4096, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0,
                          CUOPS_FLAG_STAGGER_K, 1};
        run_case(gpu, cpu, &c3, VARIANT, VARIANT);
        gemm_case_t c4 = {T, N, 2049, 1537, 1000, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, 1.0f, 0.0f, 0, 0, 0, 1};
        run_case(gpu, cpu, &c4, VARIANT, VARIANT);
        /* The library's own choice for the torch-linear case on sm_90 is this kernel. */
        gemm_case_t c5 = {N, T, 2048, 2048, 1024, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, 0, 1};
        run_case(gpu, cpu, &c5, NULL, VARIANT);
    }
    /* 6. Decode-sized M (declined before P219): forced, the 128-row tile is
     *    mostly empty but correct; in auto it serves the small-m calls no
     *    decode or split-K kernel takes, operands off 16 bytes (odd k, a
     *    misaligned base) packed. */
    {
        gemm_case_t c1 = {N, T, 16, 64, 64, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 0};
        run_case(gpu, cpu, &c1, VARIANT, VARIANT);
        gemm_case_t c2 = {N, T, 1, 300, 301, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32, -0.75f, 0.5f, 0, 1, 0, 0};
        run_case(gpu, cpu, &c2, VARIANT, VARIANT);
        gemm_case_t c3 = {T, N, 64, 1000, 33, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 3, 0, 0, 0};
        run_case(gpu, cpu, &c3, VARIANT, VARIANT);
        /* auto: 16 x 20000 x 301 NT (odd k; the split-K plan does not split
         * 79 tiles on 132 SMs): not fallback_tiled, but since P225 the decode
         * cluster form for weight rows off 16 bytes (m > 8, n >= 8192, n a
         * multiple of its row group: gemm_tuning.h), ahead of this entry */
        gemm_case_t c4 = {N, T, 16, 20000, 301, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 0};
        run_case(gpu, cpu, &c4, NULL, "sm90_decode_shift");
        run_case(gpu, cpu, &c4, VARIANT, VARIANT);
    }
    /* 7. Split-K. Every case below is one the plan splits on an H100/H200
     *    (114-132 SMs); on a device where it would not, the case is skipped. */
    {
        const int sms = prop.multiProcessorCount;
#define SPLIT_CASE(c)                                                                      \
    do {                                                                                   \
        if (splitk_plan((c).m, (c).n, (c).k, sms) > 0) {                                   \
            run_case(gpu, cpu, &(c), SPLITK, SPLITK);                                      \
            run_case(gpu, cpu, &(c), DSMEM, DSMEM);                                        \
        } else                                                                             \
            SKIP("%lldx%lldx%lld: not split on %d SMs", (long long)(c).m, (long long)(c).n, \
                 (long long)(c).k, sms);                                                   \
    } while (0)
        /* a. NT, aligned, every dtype pair; 4 tiles, S = 8 on 132 SMs. */
        for (int a = 0; a < 2; a++)
            for (int ci = 0; ci < 3; ci++) {
                gemm_case_t c = {N, T, 128, 1024, 2048, abs_[a], cts[ci], 1.0f, 0.0f, 0, 0, 0, 0};
                if (quick) { c.n = 512; c.k = 512; } /* 2 tiles, 8 k-blocks, S = 2 */
                SPLIT_CASE(c);
                if (quick) break;
            }
        /* b. Ragged shapes: uneven K ranges (25 k-blocks over S = 6; 64 over 16;
         *    17 over 4), partial tiles, ldc > n, beta != 0 with C random, m = 1
         *    and m = 129 (two tile rows, the second holding one row). */
        {
            gemm_case_t cs[] = {
                {N, T, 100, 300, 1537, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32, 1.0f, 0.0f, 0, 0, 0, 0},
                {N, T, 65, 257, 4095, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, -0.5f, 0.75f, 5, 0, 0, 0},
                {N, T, 1, 7, 1025, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, 0, 0},
                {N, T, 129, 512, 1024, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, 2.0f, -1.0f, 8, 0, 0, 0},
                {N, T, 130, 300, 1000, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F16, 1.0f, 0.5f, 2, 0,
                 CUOPS_FLAG_STAGGER_K, 0}, /* stagger-K does not apply to a split */
                {N, T, 300, 700, 2000, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0,
                 CUOPS_FLAG_NO_SWIZZLE, 0},
            };
            const int nc = (int)(sizeof cs / sizeof cs[0]);
            for (int i = 0; i < nc; i++) {
                if (quick && i != 2 && i != 4) continue;
                SPLIT_CASE(cs[i]);
            }
        }
        /* c. Every transpose pair through the pack path, padded and misaligned
         *    operands: the packed operands and the partials share one
         *    workspace region. */
        {
            const cuops_op_t ops[4][2] = {{N, T}, {N, N}, {T, T}, {T, N}};
            for (int o = 0; o < 4; o++)
                for (int v = 0; v < (quick ? 1 : 3); v++) {
                    gemm_case_t c = {ops[o][0], ops[o][1], 130, 300, 1100, abs_[(o + v) % 2],
                                     cts[(o + v) % 3], 1.0f, 0.0f, 0, 0, 0, 0};
                    if (v >= 1) c.pad = 3;
                    if (v == 2) { c.offset = 1; c.alpha = -1.5f; c.beta = 0.5f; }
                    SPLIT_CASE(c);
                }
        }
        /* d. The suite's small-grid shapes (sampled checks), forced and auto. */
        if (!quick) {
            gemm_case_t c1 = {N, T, 128, 4096, 4096, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 1};
            SPLIT_CASE(c1);
            gemm_case_t c2 = {N, T, 1000, 1000, 1000, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, 0, 1};
            SPLIT_CASE(c2);
            gemm_case_t c3 = {N, T, 1024, 1024, 1024, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, 1.0f, 0.0f, 0, 0, 0, 1};
            SPLIT_CASE(c3);
            /* auto on these small grids: the cluster split on 128-column
             * tiles (128 x 4096 x 4096) or the 64 x 128 multicast form (1000^3:
             * rows off the 128-byte lines) */
            gemm_case_t c4 = {N, T, 128, 4096, 4096, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, 0, 1};
            run_case(gpu, cpu, &c4, NULL, auto_sm90_kernel(128, 4096, 4096, sms));
            gemm_case_t c5 = {N, T, 1000, 1000, 1000, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 1};
            run_case(gpu, cpu, &c5, NULL, auto_sm90_kernel(1000, 1000, 1000, sms));
            gemm_case_t c6 = {N, T, 1024, 2048, 4096, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 1};
            run_case(gpu, cpu, &c6, NULL, auto_sm90_kernel(1024, 2048, 4096, sms));
            /* rows off the lines on small grids (H100/H200): the plain 64 x 128
             * tile (768 x 1024 x 2000; clusters of four under 4 TB/s of DRAM
             * bandwidth, and at 768 x 1024 x 4000 too), its pairs at any k where the grid
             * covers 90 % of the SMs (1000 x 1000 x 4000) or k <= 1024 and
             * clusters of four do not fit at once (896 x 1024 x 1000), clusters
             * of four where they do (640 and 768 x 1024 x 1000); 32 tiles past
             * k = 3072 keep the split-K cluster form (256 x 1024 x 4000) */
            const int64_t off[7][3] = {{768, 1024, 2000}, {640, 1024, 1000}, {1000, 1000, 4000},
                                       {768, 1024, 1000}, {896, 1024, 1000}, {768, 1024, 4000},
                                       {256, 1024, 4000}};
            for (int i = 0; i < 7; i++) {
                gemm_case_t c = {N, T, off[i][0], off[i][1], off[i][2], i % 2 ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16,
                                 i % 2 ? CUOPS_DTYPE_BF16 : CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 1};
                run_case(gpu, cpu, &c, NULL, auto_sm90_kernel(c.m, c.n, c.k, sms));
            }
        }
        /* auto at a shape just outside the plan (k = 448: 7 k-blocks): 8
         * tiles of 128 x 128 fill more SMs than 4 of 128 x 256 */
        {
            gemm_case_t c = {N, T, 128, 1024, 448, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 0};
            run_case(gpu, cpu, &c, NULL, auto_sm90_kernel(128, 1024, 448, sms));
        }
        /* e. Bitwise identical run to run. */
        if (splitk_plan(128, 1024, 2048, sms) > 0) {
            check_split_deterministic(gpu, 128, 1024, 2048, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, SPLITK);
            check_split_deterministic(gpu, 128, 1024, 2048, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, DSMEM);
            if (!quick) {
                check_split_deterministic(gpu, 100, 300, 1537, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, SPLITK);
                check_split_deterministic(gpu, 100, 300, 1537, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, DSMEM);
            }
        }
        /* e2. options.split_k = 1 on the split entries: the plain kernel on
         * their tile, no split and no tail (63b92c1; they split regardless
         * before), beta != 0 so C is read */
        if (splitk_plan(128, 1024, 2048, sms) > 0) {
            gemm_case_t c = {N, T, 128, 1024, 2048, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, 1.0f, 0.5f, 0, 0, 0, 0, 1};
            run_case(gpu, cpu, &c, SPLITK, "sm90_ws_128x256");
            run_case(gpu, cpu, &c, DSMEM, "sm90_ws_128x256");
        }
        /* f. Shapes the plan does not split are declined when forced. */
        {
            void *d = NULL;
            if (cudaMalloc(&d, (size_t)64 << 20) != cudaSuccess) {
                CHECK(0, "cudaMalloc 64 MB failed");
            } else {
                cudaMemset(d, 0, (size_t)64 << 20);
                check_split_declines(gpu, d, 1024, 4096, 4096); /* 128 tiles: > half the SMs */
                check_split_declines(gpu, d, 128, 1024, 448);   /* 7 k-blocks */
                check_split_declines(gpu, d, 130, 70, 0);       /* k == 0 */
                cudaFree(d);
            }
        }
        /* g. A user workspace too small for the partials: the plain kernel
         *    serves the call (NT aligned: it needs no workspace itself). */
        if (splitk_plan(128, 1024, 2048, sms) > 0) {
            gemm_case_t c = {N, T, 128, 1024, 2048, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.5f, 8, 0, 0, 0};
            run_case_small_workspace(gpu, cpu, &c, SPLITK, VARIANT);
        }
        /* h. B N-major (stored [k, n], trans_b = N) read in place by both
         *    split forms: the cluster form under a 4 KB user workspace (it
         *    needs none), the fixup form under one with room for its
         *    partials only (B's pack, n x k x 2 bytes, would not fit), so
         *    either call succeeds only if B was not packed. NN calls with
         *    m from 1 (the decode shapes of `x @ W` with W stored [k, n]),
         *    ragged m and k, padded leading dimensions, every C type; and A
         *    M-major (stored [k, m], TN and TT) read in place the same way
         *    (m a multiple of 8, so that lda = m + pad lies on 16 bytes). */
        {
            /* k % 8 == 0 and pads of 0 or 8: lda = k + pad and ldb = n + pad
             * stay multiples of 8 (ragged k-blocks: 1032 = 16 x 64 + 8) */
            const struct { cuops_op_t ta, tb; int64_t m, n, k; } nn[] = {
                {N, N, 1, 1024, 4096}, {N, N, 64, 2048, 2048}, {T, N, 16, 1024, 4096},
                {T, T, 136, 512, 1096}, {N, N, 17, 512, 1032}, {N, N, 130, 512, 1096},
                {T, N, 64, 2048, 2048}, {T, T, 24, 512, 1032},
            };
            for (int i = 0; i < 8; i++) {
                if (quick && i >= 4) break;
                gemm_case_t c = {nn[i].ta, nn[i].tb, nn[i].m, nn[i].n, nn[i].k, abs_[i % 2],
                                 cts[(i + 1) % 3], i % 4 == 2 ? -0.5f : 1.0f,
                                 i % 4 == 3 ? 0.25f : 0.0f, i % 4 == 1 ? 8 : 0, 0, 0, 0};
                const int S = splitk_plan(c.m, c.n, c.k, sms);
                if (S <= 0) {
                    SKIP("%lldx%lldx%lld: not split on %d SMs", (long long)c.m, (long long)c.n,
                         (long long)c.k, sms);
                    continue;
                }
                run_case_workspace(gpu, cpu, &c, DSMEM, DSMEM, 4096);
                const size_t tiles = (size_t)((c.m + 127) / 128) * (size_t)((c.n + 255) / 256);
                const size_t partials = (tiles * (size_t)S * 131072u + 255) / 256 * 256;
                run_case_workspace(gpu, cpu, &c, SPLITK, SPLITK, partials + 4096);
            }
        }
#undef SPLIT_CASE
    }
    /* 8. The 128 x 128 tile (the ring of 6 stages of 32 KB, m64n128k16, the
     *    epilogue of two 64-column boxes per consumer): sections 1-4 forced
     *    on "sm90_ws_128x128", a C off 16 bytes, the sampled suite shapes; its
     *    cluster split-K form on the split cases (plan on 128-column tiles;
     *    every case here has a cluster size that fits at once on H100/H200),
     *    bitwise reproducible. */
    {
        check_plain_variant(gpu, cpu, quick, V128);
        gemm_case_t odd_c = {N, T, 300, 520, 136, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, -0.75f, 0.0f, 3, 1, 0, 0};
        run_case(gpu, cpu, &odd_c, V128, V128);
        if (!quick) {
            gemm_case_t c1 = {N, T, 1537, 3001, 2049, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 1};
            run_case(gpu, cpu, &c1, V128, V128);
            gemm_case_t c2 = {N, T, 1000, 1000, 1000, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32, 1.0f, 0.0f, 0, 0, 0, 1};
            run_case(gpu, cpu, &c2, V128, V128);
        }
        const int sms = prop.multiProcessorCount;
        /* every split keeps >= 16 k-blocks: uneven ranges (33 over 2, 47
         * over 2, 64 over 4), m = 1, ragged tiles, beta != 0, the pack path */
        const gemm_case_t cs[] = {
            {N, T, 128, 1024, 2048, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, 1.0f, 0.0f, 0, 0, 0, 0},
            {N, T, 1, 7, 2100, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, 0, 0},
            {N, T, 130, 300, 2000, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F16, 1.0f, 0.5f, 2, 0, 0, 0},
            {N, T, 65, 257, 4095, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, -0.5f, 0.75f, 5, 0, 0, 0},
            {T, N, 129, 512, 3000, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, 2.0f, -1.0f, 3, 1, 0, 0},
            {N, T, 256, 4096, 4096, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 1},
            {N, T, 128, 4096, 4096, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, 0, 1},
        };
        const int nc = (int)(sizeof cs / sizeof cs[0]);
        for (int i = 0; i < nc; i++) {
            if (quick && i >= 3) break;
            gemm_case_t c = cs[i];
            if (splitk_plan_bn(c.m, c.n, c.k, sms, 128) > 0)
                run_case(gpu, cpu, &c, DSMEM128, DSMEM128);
            else
                SKIP("%lldx%lldx%lld: not split on %d SMs with 128-column tiles", (long long)c.m,
                     (long long)c.n, (long long)c.k, sms);
        }
        if (splitk_plan_bn(128, 1024, 2048, sms, 128) > 0)
            check_split_deterministic(gpu, 128, 1024, 2048, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32, DSMEM128);
        /* the 64 x 128 tile (consumers split the columns: m64n64k16 each) */
        check_plain_variant(gpu, cpu, quick, V64);
        gemm_case_t odd_c64 = {N, T, 129, 1537, 200, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 5, 1, 0, 0};
        run_case(gpu, cpu, &odd_c64, V64, V64);
        if (!quick) {
            gemm_case_t c1 = {N, T, 1000, 1000, 1000, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, 0, 1};
            run_case(gpu, cpu, &c1, V64, V64);
            gemm_case_t c2 = {T, N, 1537, 3001, 2049, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32, 1.0f, 0.5f, 0, 0, 0, 1};
            run_case(gpu, cpu, &c2, V64, V64);
            /* auto at 1024^3 (the 64 x 128 tile on H100/H200) */
            gemm_case_t c3 = {N, T, 1024, 1024, 1024, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, 0, 1};
            run_case(gpu, cpu, &c3, NULL, auto_sm90_kernel(1024, 1024, 1024, sms));
        }
    }

    /* 9. The multicast forms (128 x 256, and the 128-column tiles; the
     *    64 x 128 tile in clusters of 2, 4, 2 x 2 and 4 x 2): the plain
     *    checks; tile-row counts that are not multiples of the cluster's
     *    (13, 3, 1 of 128 rows; 25, 5, 3, 2 of 64) put a cluster's last
     *    tiles past m, so those CTAs load no A, still multicast their piece
     *    of B and store nothing; tile-column counts that are odd (35, 1 of
     *    128 columns: 4353 and 100) do the same past n for the clusters two
     *    wide, whose CTAs past n still multicast their piece of A; n not a
     *    multiple of the tile width makes the B pieces ragged (wholly past n
     *    at n = 100 on 256 columns); several blocks per cluster with each
     *    flag; a staged C; the big suite's shape, sampled; 1000^3 (rows off
     *    the 128-byte lines) on the 128-column tiles. */
    const char *const mc_variants[] = {MC2, MC2_128, MC2_64, MC4_64, MC2X2_64, MC4X2_64};
    for (int mv = 0; mv < 6; mv++) {
        const char *const mc = mc_variants[mv];
        if (quick && mv > 0) {
            gemm_case_t q = {N, T, 300, 520, 136, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 0};
            run_case(gpu, cpu, &q, mc, mc);
            gemm_case_t r = {N, T, 129, 100, 70, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32, 1.0f, 0.5f, 3, 0, 0, 0};
            run_case(gpu, cpu, &r, mc, mc);
            continue;
        }
        check_plain_variant(gpu, cpu, quick, mc);
        const unsigned flag_sets[3] = {0, CUOPS_FLAG_NO_SWIZZLE, CUOPS_FLAG_STAGGER_K};
        const gemm_case_t cs[] = {
            {N, T, 1537, 4353, 200, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 0},
            {N, T, 300, 100, 520, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32, -1.0f, 0.5f, 3, 0, 0, 0},
            {N, T, 100, 8000, 136, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 8, 0, 0, 0},
            {N, T, 2000, 9000, 136, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 0.5f, 0.0f, 0, 0, 0, 1},
        };
        for (int i = 0; i < 4; i++)
            for (int f = 0; f < (quick ? 1 : 3); f++) {
                if (quick && i == 3) break;
                gemm_case_t c = cs[i];
                c.flags = flag_sets[f];
                run_case(gpu, cpu, &c, mc, mc);
            }
        gemm_case_t staged = {N, T, 300, 520, 136, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, -0.75f, 0.0f, 3, 1, 0, 0};
        run_case(gpu, cpu, &staged, mc, mc);
        if (!quick && mv == 0) {
            gemm_case_t c1 = {N, T, 4096, 4096, 4096, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0,
                              CUOPS_FLAG_STAGGER_K, 1};
            run_case(gpu, cpu, &c1, mc, mc);
            gemm_case_t c2 = {N, T, 8192, 8192, 1024, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 1};
            run_case(gpu, cpu, &c2, mc, mc);
            gemm_case_t c3 = {T, N, 1537, 3001, 2049, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32, 1.0f, 0.5f, 0, 0, 0, 1};
            run_case(gpu, cpu, &c3, mc, mc);
        }
        if (!quick && mv > 0) {
            gemm_case_t c1 = {N, T, 1000, 1000, 1000, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 0};
            run_case(gpu, cpu, &c1, mc, mc);
            gemm_case_t c2 = {N, T, 1000, 1000, 1000, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, 0, 0};
            run_case(gpu, cpu, &c2, mc, mc);
        }
    }

    /* 10. The split tail of the plain kernels (the tiles of a partial last
     *     round split along K over more CTAs, the pieces' partials summed by
     *     the last to arrive). Per tile shape, shapes whose last round is
     *     partial on H100/H200 (144-207 tiles on 132 SMs; on other devices
     *     the expected kernel name follows the plan): 3 pieces per tail tile
     *     (the sum that starts from the partials when piece 2 is last) and 2,
     *     more pieces than CTAs (some CTAs take two), ragged k, beta != 0
     *     and f32 C (register epilogue), a C off 16 bytes with packed
     *     operands, stagger-K on the whole tiles, transposed operands; fully
     *     checked against the CPU. Calls follow one another on one handle,
     *     so a counter left non-zero would leave a later tile unwritten
     *     (NaN). Then: bitwise reproducible; split_k = 1 runs without the
     *     tail; a user workspace with room for the partials (counters
     *     cleared per call) and one without (no tail). */
    {
        const struct { const char *variant; int64_t m, n, k; } shapes[] = {
            {VARIANT, 1100, 3900, 800},  /* 144 tiles: the last 12 in 3 pieces of 4-5 k-blocks */
            {V128, 1100, 2000, 1000},    /* 144 tiles: 12 in 3 pieces */
            {V64, 600, 1800, 600},       /* 150 tiles: 18 in 2 pieces (10 k-blocks) */
            {V128, 1100, 2900, 800},     /* 207 tiles: 75 in 3 pieces, 225 pieces on 132 CTAs */
        };
        for (int i = 0; i < 4; i++) {
            const char *v = shapes[i].variant;
            const int64_t m = shapes[i].m, n = shapes[i].n, k = shapes[i].k;
            const int bm = v == V64 ? 64 : 128, bn = v == VARIANT ? 256 : 128;
            if (g_sms == 132)
                CHECK(tail_plan(m, n, k, g_sms, bm, bn) == (i == 2 ? 2 : 3),
                      "%s %lldx%lldx%lld: the tail plan should split it", v, (long long)m,
                      (long long)n, (long long)k);
            const gemm_case_t cs[] = {
                {N, T, m, n, k, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 0, 0},
                {N, T, m, n, k + 7, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32, -0.75f, 0.5f, 0, 0, 0, 0, 0},
                {N, T, m, n, k, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.5f, 0.0f, 3, 1, 0, 0, 0},
                {N, T, m, n, k, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, CUOPS_FLAG_STAGGER_K, 0, 0},
                {T, N, m, n, k - 9, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, -1.0f, 0, 0, CUOPS_FLAG_NO_SWIZZLE, 0, 0},
                {N, T, m, n, k, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 0, 0, 0, 0, 1}, /* no tail */
            };
            for (int j = 0; j < 6; j++) {
                if (quick && j % 2 == 1) continue;
                run_case(gpu, cpu, &cs[j], v, v);
            }
            check_split_deterministic(gpu, m, n, k, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, v);
            check_split_deterministic(gpu, m, n, k + 7, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, v);
            run_case_workspace(gpu, cpu, &cs[0], v, v, (size_t)64 << 20);
            run_case_workspace(gpu, cpu, &cs[1], v, v, (size_t)64 << 20);
            run_case_small_workspace(gpu, cpu, &cs[0], v, v);
        }
        /* the direct-C study entry keeps the tail; auto on a tail shape */
        gemm_case_t d = {N, T, 1100, 3900, 800, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1.0f, 0.0f, 3, 0, 0, 0, 0};
        run_case(gpu, cpu, &d, DIRECT_C, DIRECT_C);
        gemm_case_t a = {N, T, 1100, 3900, 800, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1.0f, 0.0f, 0, 0, 0, 0, 0};
        run_case(gpu, cpu, &a, NULL, auto_sm90_kernel(a.m, a.n, a.k, g_sms));
    }

    cuops_destroy(gpu);
    cuops_destroy(cpu);
    return tu_finish("test_gpu_gemm_sm90");
}
