/*
 * gemm_sm90.cu - cuops's default f16/bf16 GEMM on Hopper (sm_90a): TMA loads,
 * wgmma tensor-core MMAs, warp specialization, persistent CTAs.
 *
 *   C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C[m,n], fp32 accumulate,
 *   C in f16, bf16 or f32.
 *
 * Kernel "sm90_ws_128x256" (one table entry):
 *   - CTA tile 128 x 256 x 64, 384 threads = 3 warpgroups:
 *       warpgroup 0  producer: one thread issues every TMA load; the group
 *                    gives its registers back (setmaxnreg 40);
 *       warpgroups 1, 2  consumers: rows 0-63 and 64-127 of the tile, one
 *                    wgmma m64n256k16 per 16 of K (setmaxnreg 232; the
 *                    64 x 256 fp32 accumulator is 128 registers per thread).
 *   - 4-stage ring of (A 128x64, B 256x64) = 48 KB stages = 192 KB of shared
 *     memory, each stage guarded by a `full` mbarrier (TMA bytes landed) and
 *     an `empty` mbarrier (both consumers done reading it).
 *   - Persistent: grid = min(#SMs, #tiles); CTA b takes tiles b, b + grid, ...
 *     in grouped order (16 tile-rows per group) so the tiles in flight at once
 *     share A and B panels in L2. CUOPS_FLAG_NO_SWIZZLE: plain row-major
 *     order. CUOPS_FLAG_STAGGER_K: each tile starts its K loop at k-block
 *     (tile index mod #k-blocks), seed 000's StaggerU (the fp32 sum is taken
 *     in a rotated order, so results may differ in the last bits).
 *   - Epilogue: straight from the accumulator registers to global memory,
 *     masked at the ragged M/N edges; beta == 0 never reads C.
 *
 * Operands are read K-major (A as [m,k], B as [n,k]: the trans_a = N,
 * trans_b = T case of torch linear). Any other transpose, and any operand
 * whose base is not 16-byte aligned or whose row stride is not a multiple of
 * 16 bytes, is first packed into the workspace (gemm_sm90_pack.cu). TMA
 * zero-fills out-of-range rows and K columns, so no shape needs padding.
 *
 * Why these numbers (H200: 132 SMs, ~1.83 GHz under load, dense f16 989
 * TFLOP/s = ~4096 FLOP/clock/SM): a stage holds 128*256*64*2 = 4.2 MFLOP =
 * ~1024 clocks of tensor-core work and 48 KB of operands (47 B/clock/SM, from
 * L2 mostly). With 3 stages in flight ahead of the MMAs the loads have ~3000
 * clocks to land, several times the L2/HBM latency (Little's law: 3 x 48 KB
 * in flight per SM covers ~3000 clocks at 47 B/clock).
 *
 * Build: the body exists only in the sm_90a pass (CUOPS_SM90A_DEVICE); the
 * sm_80 pass compiles empty kernels that the dispatch never launches.
 */
#include "cuda/common/ptx_sm90.cuh"
#include "cuda/gemm/gemm_kernels.h"
#include "cuda/gemm/gemm_sm90.h"

#define SM90_BM 128
#define SM90_BN 256
#define SM90_BK 64
#define SM90_STAGES 4
#define SM90_THREADS 384
#define SM90_A_STAGE_BYTES (SM90_BM * SM90_BK * 2) /* 16 KB */
#define SM90_B_STAGE_BYTES (SM90_BN * SM90_BK * 2) /* 32 KB */
#define SM90_STAGE_BYTES (SM90_A_STAGE_BYTES + SM90_B_STAGE_BYTES)
/* stages + 2 mbarriers per stage + slack to align the base to 1024 bytes
 * (the 128B-swizzle atom: 8 rows x 128 bytes) */
#define SM90_SMEM_BYTES (SM90_STAGES * SM90_STAGE_BYTES + 2 * SM90_STAGES * 8 + 1024)
#define SM90_GROUP_ROWS 16
#define SM90_PRODUCER_REGS 40
#define SM90_CONSUMER_REGS 232

typedef struct sm90_gemm_params {
    void *c;
    int64_t ldc;
    int m, n, k;
    float alpha, beta;
    int tiles_m, tiles_n, num_tiles, k_blocks;
    int group_rows;   /* 0: row-major tile order */
    int stagger_k;
    int c_pair_ok;    /* two adjacent C elements can be stored as one word */
} sm90_gemm_params_t;

/* ---- per-CTA logic ------------------------------------------------------- */

#if CUOPS_SM90A_DEVICE

/* Tile t -> (tile row, tile column). Grouped order: tiles run down a group of
 * group_rows tile-rows, then across, so a wave of 132 tiles covers about
 * 16 x 8 tiles (2048 x 2048 of C) and its k-block reads ~2048 rows of A and
 * ~2048 rows of B; in row-major order (n = 8192: 32 tiles per row) the same
 * wave reads ~512 rows of A but all 8192 rows of B. */
__device__ __forceinline__ void sm90_tile_coords(const sm90_gemm_params_t &p, int t, int *tm,
                                                 int *tn)
{
    if (p.group_rows <= 0) {
        *tm = t / p.tiles_n;
        *tn = t - *tm * p.tiles_n;
        return;
    }
    const int per_group = p.group_rows * p.tiles_n;
    const int g = t / per_group;
    const int first = g * p.group_rows;
    const int rows = min(p.group_rows, p.tiles_m - first);
    const int local = t - g * per_group;
    *tm = first + local % rows;
    *tn = local / rows;
}

__device__ __forceinline__ void sm90_store_pair(__half *p, float a, float b)
{
    *(__half2 *)p = __floats2half2_rn(a, b);
}
__device__ __forceinline__ void sm90_store_pair(__nv_bfloat16 *p, float a, float b)
{
    *(__nv_bfloat162 *)p = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void sm90_store_pair(float *p, float a, float b)
{
    *(float2 *)p = make_float2(a, b);
}

/* Write this thread's part of a consumer's 64 x 256 accumulator tile.
 * row0/col0: the tile's first row/column of C for this consumer. */
template <typename OutT>
__device__ __forceinline__ void sm90_epilogue(const sm90_gemm_params_t &p, const float (&acc)[128],
                                              int row0, int col0)
{
    const int t = threadIdx.x % 128;
    const int warp = t / 32, lane = t % 32;
    const int row_a = row0 + warp * 16 + lane / 4;
    const int col_a = col0 + 2 * (lane % 4);
    OutT *c = (OutT *)p.c;
    const bool read_c = (p.beta != 0.0f);
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = row_a + 8 * half;
        if (row >= p.m) continue;
        OutT *c_row = c + (int64_t)row * p.ldc;
#pragma unroll
        for (int j = 0; j < 32; j++) {
            const int col = col_a + 8 * j;
            float v0 = p.alpha * acc[4 * j + 2 * half + 0];
            float v1 = p.alpha * acc[4 * j + 2 * half + 1];
            if (col + 1 < p.n) {
                if (read_c) {
                    v0 += p.beta * cuops_to_float(c_row[col]);
                    v1 += p.beta * cuops_to_float(c_row[col + 1]);
                }
                if (p.c_pair_ok) {
                    sm90_store_pair(c_row + col, v0, v1);
                } else {
                    c_row[col] = cuops_from_float<OutT>(v0);
                    c_row[col + 1] = cuops_from_float<OutT>(v1);
                }
            } else if (col < p.n) {
                if (read_c) v0 += p.beta * cuops_to_float(c_row[col]);
                c_row[col] = cuops_from_float<OutT>(v0);
            }
        }
    }
}

#endif /* CUOPS_SM90A_DEVICE */

/* ---- the kernel ---------------------------------------------------------- */

template <bool AB_BF16, typename OutT>
__global__ void __launch_bounds__(SM90_THREADS, 1)
sm90_ws_128x256_kernel(const __grid_constant__ CUtensorMap tmap_a,
                       const __grid_constant__ CUtensorMap tmap_b, const sm90_gemm_params_t p)
{
#if CUOPS_SM90A_DEVICE
    extern __shared__ uint8_t smem_raw[];
    const uint32_t smem_base = (cuops_smem_addr(smem_raw) + 1023u) & ~1023u;
    const uint32_t a_smem = smem_base;
    const uint32_t b_smem = smem_base + SM90_STAGES * SM90_A_STAGE_BYTES;
    const uint32_t bars = b_smem + SM90_STAGES * SM90_B_STAGE_BYTES;
#define SM90_FULL_BAR(s) (bars + 8u * (uint32_t)(s))
#define SM90_EMPTY_BAR(s) (bars + 8u * (uint32_t)(SM90_STAGES + (s)))

    const int warpgroup = threadIdx.x / 128;

    if (threadIdx.x == 0) {
        for (int s = 0; s < SM90_STAGES; s++) {
            /* full: the producer's one arrive.expect_tx + the TMA bytes. */
            cuops_mbar_init(SM90_FULL_BAR(s), 1);
            /* empty: every consumer thread arrives once it no longer reads
             * the stage (256 arrivals; cheap next to 1024 clocks of MMA). */
            cuops_mbar_init(SM90_EMPTY_BAR(s), 256);
        }
        cuops_mbar_init_fence();
    }
    __syncthreads();

    if (warpgroup == 0) {
        /* ---------------- producer ---------------- */
        cuops_setmaxnreg_dec<SM90_PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            int stage = 0;
            uint32_t phase = 0;
            for (int t = blockIdx.x; t < p.num_tiles; t += gridDim.x) {
                int tm, tn;
                sm90_tile_coords(p, t, &tm, &tn);
                int kb = p.stagger_k ? (t % p.k_blocks) : 0;
                for (int i = 0; i < p.k_blocks; i++) {
                    /* Wait for both consumers to have released this slot in
                     * the previous round (first round passes: parity 1 of a
                     * fresh barrier counts as complete). */
                    cuops_mbar_wait(SM90_EMPTY_BAR(stage), phase ^ 1u);
                    cuops_mbar_arrive_expect_tx(SM90_FULL_BAR(stage), SM90_STAGE_BYTES);
                    cuops_tma_load_2d(a_smem + stage * SM90_A_STAGE_BYTES, &tmap_a,
                                      SM90_FULL_BAR(stage), kb * SM90_BK, tm * SM90_BM);
                    cuops_tma_load_2d(b_smem + stage * SM90_B_STAGE_BYTES, &tmap_b,
                                      SM90_FULL_BAR(stage), kb * SM90_BK, tn * SM90_BN);
                    if (++kb == p.k_blocks) kb = 0;
                    if (++stage == SM90_STAGES) {
                        stage = 0;
                        phase ^= 1u;
                    }
                }
            }
        }
    } else {
        /* ---------------- consumers ---------------- */
        cuops_setmaxnreg_inc<SM90_CONSUMER_REGS>();
        const int consumer = warpgroup - 1;
        float acc[128];
#pragma unroll
        for (int i = 0; i < 128; i++) acc[i] = 0.0f;

        int stage = 0;
        uint32_t phase = 0;
        for (int t = blockIdx.x; t < p.num_tiles; t += gridDim.x) {
            int tm, tn;
            sm90_tile_coords(p, t, &tm, &tn);
            int prev_stage = 0;
            for (int i = 0; i < p.k_blocks; i++) {
                cuops_mbar_wait(SM90_FULL_BAR(stage), phase);
                const uint64_t desc_a = cuops_wgmma_desc_k_sw128(
                    a_smem + stage * SM90_A_STAGE_BYTES + consumer * (64 * SM90_BK * 2));
                const uint64_t desc_b = cuops_wgmma_desc_k_sw128(b_smem + stage * SM90_B_STAGE_BYTES);
#pragma unroll
                for (int r = 0; r < 128; r++) cuops_reg_fence(acc[r]);
                cuops_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < SM90_BK / 16; kk++) {
                    /* +32 bytes per 16 K-elements = +2 in the >>4 address field */
                    if (AB_BF16)
                        cuops_wgmma_m64n256k16_bf16(acc, desc_a + 2 * kk, desc_b + 2 * kk,
                                                    (i > 0 || kk > 0) ? 1 : 0);
                    else
                        cuops_wgmma_m64n256k16_f16(acc, desc_a + 2 * kk, desc_b + 2 * kk,
                                                   (i > 0 || kk > 0) ? 1 : 0);
                }
                cuops_wgmma_commit();
                /* Keep this k-block's group in flight; the previous one is
                 * done after wait<1>, so its stage can go back to the producer. */
                cuops_wgmma_wait<1>();
#pragma unroll
                for (int r = 0; r < 128; r++) cuops_reg_fence(acc[r]);
                if (i > 0) cuops_mbar_arrive(SM90_EMPTY_BAR(prev_stage));
                prev_stage = stage;
                if (++stage == SM90_STAGES) {
                    stage = 0;
                    phase ^= 1u;
                }
            }
            cuops_wgmma_wait<0>();
#pragma unroll
            for (int r = 0; r < 128; r++) cuops_reg_fence(acc[r]);
            cuops_mbar_arrive(SM90_EMPTY_BAR(prev_stage));

            sm90_epilogue<OutT>(p, acc, tm * SM90_BM + consumer * 64, tn * SM90_BN);
        }
    }
#undef SM90_FULL_BAR
#undef SM90_EMPTY_BAR
#endif /* CUOPS_SM90A_DEVICE */
}

/* ---- host side ----------------------------------------------------------- */

typedef void (*sm90_kernel_fn)(const CUtensorMap, const CUtensorMap, const sm90_gemm_params_t);

static sm90_kernel_fn sm90_pick_kernel(cuops_dtype_t ab, cuops_dtype_t c)
{
    const bool bf = (ab == CUOPS_DTYPE_BF16);
    switch (c) {
    case CUOPS_DTYPE_F16:
        return bf ? sm90_ws_128x256_kernel<true, __half> : sm90_ws_128x256_kernel<false, __half>;
    case CUOPS_DTYPE_BF16:
        return bf ? sm90_ws_128x256_kernel<true, __nv_bfloat16>
                  : sm90_ws_128x256_kernel<false, __nv_bfloat16>;
    case CUOPS_DTYPE_F32:
        return bf ? sm90_ws_128x256_kernel<true, float> : sm90_ws_128x256_kernel<false, float>;
    default:
        return NULL;
    }
}

/* TMA coordinates and the tile arithmetic are 32-bit. */
#define SM90_MAX_DIM ((int64_t)0x7fffffff - 1024)

static int sm90_ws_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    if (h->sm_major != 9) return 0;
    if (d->ab_type != CUOPS_DTYPE_F16 && d->ab_type != CUOPS_DTYPE_BF16) return 0;
    if (d->c_type != CUOPS_DTYPE_F16 && d->c_type != CUOPS_DTYPE_BF16 &&
        d->c_type != CUOPS_DTYPE_F32)
        return 0;
    if (h->smem_optin_bytes < SM90_SMEM_BYTES) return 0;
    /* Decode-sized M leaves a 128-row tile mostly empty and gives too few
     * tiles to spread a weight read over all SMs: left to other kernels. */
    if (d->m <= 64) return 0;
    if (d->m > SM90_MAX_DIM || d->n > SM90_MAX_DIM || d->k > SM90_MAX_DIM) return 0;
    if (cuops_ceil_div(d->m, SM90_BM) * cuops_ceil_div(d->n, SM90_BN) > 0x7fffffff) return 0;
    /* Elements must at least sit at their natural alignment. */
    if (!cuops_aligned(d->a, 2) || !cuops_aligned(d->b, 2) ||
        !cuops_aligned(d->c, cuops_dtype_size(d->c_type)))
        return 0;
    return 1;
}

static size_t sm90_align256(size_t x) { return (x + 255) & ~(size_t)255; }

static cuops_status_t sm90_ws_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                     const cuops_options_t *opt)
{
    static const char *const name = "sm90_ws_128x256";
    if (!sm90_ws_supports(h, d))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: needs sm_90, f16/bf16 inputs, f16/bf16/f32 output, m > 64", name);
    if (d->k == 0) {
        cuops_status_t st = cuops_sm90_scale_c(h, d);
        if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = name;
        return st;
    }
    const unsigned flags = opt ? opt->flags : 0u;

    /* Operands as K-major [rows, k] arrays, packed where TMA cannot read them. */
    const void *a = d->a, *b = d->b;
    int64_t lda = d->lda, ldb = d->ldb;
    const bool pack_a = d->trans_a != CUOPS_OP_N || !cuops_sm90_tma_ok(d->a, d->lda);
    const bool pack_b = d->trans_b != CUOPS_OP_T || !cuops_sm90_tma_ok(d->b, d->ldb);
    const int64_t ldp = cuops_sm90_packed_ld(d->k);
    const size_t a_bytes = pack_a ? sm90_align256((size_t)d->m * (size_t)ldp * 2u) : 0;
    const size_t b_bytes = pack_b ? sm90_align256((size_t)d->n * (size_t)ldp * 2u) : 0;
    if (pack_a || pack_b) {
        /* +256: a workspace given through cuops_set_workspace may start at
         * any address; the packed arrays must be 16-byte aligned for TMA. */
        void *ws_raw = NULL;
        cuops_status_t st = cuops_cuda_workspace(h, a_bytes + b_bytes + 256, &ws_raw);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        void *ws = (void *)(((uintptr_t)ws_raw + 255) & ~(uintptr_t)255);
        if (pack_a) {
            st = cuops_sm90_pack_kmajor(h, d->a, d->lda, d->trans_a == CUOPS_OP_N, d->m, d->k, ws,
                                        ldp);
            if (st != CUOPS_STATUS_SUCCESS) return st;
            a = ws;
            lda = ldp;
        }
        if (pack_b) {
            void *dst = (uint8_t *)ws + a_bytes;
            st = cuops_sm90_pack_kmajor(h, d->b, d->ldb, d->trans_b == CUOPS_OP_T, d->n, d->k, dst,
                                        ldp);
            if (st != CUOPS_STATUS_SUCCESS) return st;
            b = dst;
            ldb = ldp;
        }
    }

    CUtensorMap tmap_a, tmap_b;
    cuops_status_t st = cuops_sm90_encode_kmajor(h, &tmap_a, a, d->ab_type, d->m, d->k, lda, SM90_BM);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = cuops_sm90_encode_kmajor(h, &tmap_b, b, d->ab_type, d->n, d->k, ldb, SM90_BN);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    sm90_gemm_params_t p;
    memset(&p, 0, sizeof(p));
    p.c = d->c;
    p.ldc = d->ldc;
    p.m = (int)d->m;
    p.n = (int)d->n;
    p.k = (int)d->k;
    p.alpha = d->alpha;
    p.beta = d->beta;
    p.tiles_m = (int)cuops_ceil_div(d->m, SM90_BM);
    p.tiles_n = (int)cuops_ceil_div(d->n, SM90_BN);
    p.num_tiles = p.tiles_m * p.tiles_n;
    p.k_blocks = (int)cuops_ceil_div(d->k, SM90_BK);
    p.group_rows = (flags & CUOPS_FLAG_NO_SWIZZLE) ? 0 : SM90_GROUP_ROWS;
    p.stagger_k = (flags & CUOPS_FLAG_STAGGER_K) ? 1 : 0;
    const size_t esize = cuops_dtype_size(d->c_type);
    p.c_pair_ok = cuops_aligned(d->c, 2 * esize) && (d->ldc % 2 == 0);

    sm90_kernel_fn fn = sm90_pick_kernel(d->ab_type, d->c_type);
    if (!fn) return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "%s: no kernel for c_type", name);
    CUOPS_CUDA_TRY(h, cudaFuncSetAttribute((const void *)fn,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           SM90_SMEM_BYTES));
    const int grid = p.num_tiles < h->num_sms ? p.num_tiles : h->num_sms;
    fn<<<grid, SM90_THREADS, SM90_SMEM_BYTES, cuops_stream(h)>>>(tmap_a, tmap_b, p);
    return cuops_cuda_check_launch(h, name);
}

/* ---- table ----------------------------------------------------------------- */

static const cuops_gemm_kernel_t sm90_table[] = {
    {"sm90_ws_128x256", sm90_ws_supports, sm90_ws_launch},
};

extern "C" const cuops_gemm_kernel_t *cuops_gemm_sm90_kernel_table(int *count)
{
    *count = (int)(sizeof(sm90_table) / sizeof(sm90_table[0]));
    return sm90_table;
}
