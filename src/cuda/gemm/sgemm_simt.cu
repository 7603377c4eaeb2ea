/*
 * sgemm_simt.cu - "sgemm_simt_128x128" (BK = 8) and "sgemm_simt_128x128_bk16":
 * the three-level tiled FP32 GEMM of seed 002, true fp32 FFMA (no TF32).
 *
 *   global -> shared : a 128x128 CTA tile of C, K in steps of BK, two shared
 *                      buffers so one barrier per K step suffices, the next
 *                      tile's global loads in flight (in registers) while the
 *                      current one is multiplied;
 *   shared -> regs   : 8 warps as 4 (M) x 2 (N), a 32x64 warp tile, lanes as
 *                      4 (M) x 8 (N);
 *   regs             : each thread an 8x8 tile held as 2x2 sub-tiles of 4x4
 *                      at stride 16 rows / 32 columns, so every shared read
 *                      is one float4 (LDS.128): per k, 4 LDS.128 feed 64 FFMA.
 *
 * Shared layout: both operands are stored K-outer, [k][m] and [k][n], with
 * rows of 128 + 4 floats. The compute loop then reads a float4 of A along M
 * and a float4 of B along N. Bank arguments:
 *  - B read: the 8 lanes of a quarter warp read 8 consecutive float4 (all 32
 *    banks once); the other lane rows read the same addresses (broadcast).
 *  - A read: 4 distinct float4 per warp (16 consecutive words), broadcast.
 *  - Transposed stores (A with trans_a = N, B with trans_b = T, 4 scalar STS
 *    per float4 loaded): a warp stores rows r..r+15 at k offsets 0 and 4 (BK
 *    = 8). With a 128-float row, k and k+4 land on the same bank (2-way
 *    conflict); with 132 the k+4 half is shifted by 16 banks: conflict-free.
 *    With BK = 16 the offsets 0, 4, 8, 12 fold onto two bank halves (2-way)
 *    on these stores only, which are 1/16 of the shared traffic.
 *  - Non-transposed stores are one STS.128 of consecutive addresses.
 *
 * Global loads are 128-bit, so supports() demands 16-byte aligned A, B, C
 * and leading dimensions that are multiples of 4; edges (M, N not multiples
 * of 128, K not a multiple of BK) are predicated, with zero fill in K.
 * CTAs are rasterised in groups of 8 tile rows (CUOPS_FLAG_NO_SWIZZLE turns
 * this off) so the CTAs resident at one time share B column tiles in L2.
 *
 * Budget: 64 accumulators + 2x16 fragment registers (the next k's
 * fragments load while this k's FFMAs issue) + 8 staging floats (one float4
 * of A and one of B in flight, for either BK); launch
 * bounds (256, 2) cap it at 128 registers for 2 CTAs = 16 warps per SM.
 * docs/sgemm.md holds the arithmetic-intensity argument and the numbers.
 */
#include <limits.h>

#include "cuda/common/cuda_common.cuh"
#include "cuda/gemm/gemm_tuning.h"

#define SG_BM 128
#define SG_BN 128
#define SG_THREADS 256
#define SG_ROW (SG_BM + 4) /* floats per k row of a shared tile: 16-byte multiple, shifts banks */
#define SG_GROUP_ROWS 8    /* tile rows per rasterisation group */

/* op element (mn, k..k+3) of an operand stored [mn][k] (k contiguous). */
__device__ __forceinline__ float4 load_k_contiguous(const float *row, int mn_ok, int kidx, int k)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (mn_ok) {
        const float *p = row + kidx;
        if (kidx + 3 < k) {
            v = __ldg((const float4 *)p);
        } else {
            if (kidx + 0 < k) v.x = __ldg(p + 0);
            if (kidx + 1 < k) v.y = __ldg(p + 1);
            if (kidx + 2 < k) v.z = __ldg(p + 2);
        }
    }
    return v;
}

/* op elements (mn..mn+3, kidx) of an operand stored [k][mn] (mn contiguous). */
__device__ __forceinline__ float4 load_mn_contiguous(const float *base, int64_t ld, int kidx,
                                                     int k, int mn, int mn_limit)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (kidx < k) {
        const float *p = base + (int64_t)kidx * ld + mn;
        if (mn + 3 < mn_limit) {
            v = __ldg((const float4 *)p);
        } else {
            if (mn + 0 < mn_limit) v.x = __ldg(p + 0);
            if (mn + 1 < mn_limit) v.y = __ldg(p + 1);
            if (mn + 2 < mn_limit) v.z = __ldg(p + 2);
        }
    }
    return v;
}

/*
 * Where thread `tid` loads slot r of one operand's BK x 128 tile.
 * K-contiguous storage: BK/4 threads cover one row's BK floats (coalesced 32
 * or 64 bytes per row). MN-contiguous storage: 32 threads cover one k row's
 * 128 floats (512 contiguous bytes per warp).
 */
template <int BK, int K_CONTIGUOUS>
__device__ __forceinline__ void load_slot(int tid, int r, int *mn_local, int *k_local)
{
    const int l = tid + r * SG_THREADS;
    if (K_CONTIGUOUS) {
        *mn_local = l / (BK / 4);
        *k_local = (l % (BK / 4)) * 4;
    } else {
        *k_local = l / (SG_BM / 4);
        *mn_local = (l % (SG_BM / 4)) * 4;
    }
}

template <int BK, int K_CONTIGUOUS>
__device__ __forceinline__ void store_slot(float (*tile)[SG_ROW], int mn_local, int k_local,
                                           float4 v)
{
    if (K_CONTIGUOUS) {
        tile[k_local + 0][mn_local] = v.x;
        tile[k_local + 1][mn_local] = v.y;
        tile[k_local + 2][mn_local] = v.z;
        tile[k_local + 3][mn_local] = v.w;
    } else {
        *(float4 *)&tile[k_local][mn_local] = v;
    }
}

template <int BK, int TRANS_A, int TRANS_B>
__global__ void __launch_bounds__(SG_THREADS, 2)
sgemm_simt_kernel(int m, int n, int k, float alpha, const float *__restrict__ a, int64_t lda,
                  const float *__restrict__ b, int64_t ldb, float beta, float *__restrict__ c,
                  int64_t ldc, int tiles_m, int tiles_n, int swizzle)
{
    /* float4 loads per thread per operand per K step: 1 for BK = 8, 2 for 16 */
    constexpr int LOADS = (BK * SG_BM / 4) / SG_THREADS;
    constexpr int A_K_CONTIGUOUS = (TRANS_A == CUOPS_OP_N);
    constexpr int B_K_CONTIGUOUS = (TRANS_B == CUOPS_OP_T);
    static_assert(LOADS * SG_THREADS * 4 == BK * SG_BM, "tile not covered by the loads");

    __shared__ __align__(16) float a_smem[2][BK][SG_ROW];
    __shared__ __align__(16) float b_smem[2][BK][SG_ROW];

    /* ---- which C tile ---- */
    const int bid = blockIdx.x;
    int tile_m, tile_n;
    if (swizzle) {
        const int per_group = SG_GROUP_ROWS * tiles_n;
        const int first_m = (bid / per_group) * SG_GROUP_ROWS;
        const int rows_here = min(tiles_m - first_m, SG_GROUP_ROWS);
        const int local = bid % per_group;
        tile_m = first_m + local % rows_here;
        tile_n = local / rows_here;
    } else {
        tile_m = bid / tiles_n;
        tile_n = bid % tiles_n;
    }
    const int m0 = tile_m * SG_BM;
    const int n0 = tile_n * SG_BN;

    const int tid = threadIdx.x;

    /* ---- global load coordinates: pure functions of tid (the compiler
     * rematerialises them rather than holding them across the loop) ---- */
    int a_mn[LOADS], a_k[LOADS], b_mn[LOADS], b_k[LOADS];
#pragma unroll
    for (int r = 0; r < LOADS; r++) {
        load_slot<BK, A_K_CONTIGUOUS>(tid, r, &a_mn[r], &a_k[r]);
        load_slot<BK, B_K_CONTIGUOUS>(tid, r, &b_mn[r], &b_k[r]);
    }

    /* One float4 of A and one of B in flight per thread at any time: slot r
     * of the next tile is loaded at the start of the r-th part of the k loop
     * and stored at its end, so BK = 16 needs no more staging registers than
     * BK = 8 and each load still has 8*64 FFMAs per thread to arrive in. */
    float4 a_stage, b_stage;
#define SG_LOAD_SLOT(r, k0)                                                                \
    do {                                                                                   \
        if (A_K_CONTIGUOUS) {                                                              \
            const int gm = m0 + a_mn[r];                                                   \
            const float *row = a + (int64_t)min(gm, m - 1) * lda;                          \
            a_stage = load_k_contiguous(row, gm < m, (k0) + a_k[r], k);                    \
        } else {                                                                           \
            a_stage = load_mn_contiguous(a, lda, (k0) + a_k[r], k, m0 + a_mn[r], m);       \
        }                                                                                  \
        if (B_K_CONTIGUOUS) {                                                              \
            const int gn = n0 + b_mn[r];                                                   \
            const float *row = b + (int64_t)min(gn, n - 1) * ldb;                          \
            b_stage = load_k_contiguous(row, gn < n, (k0) + b_k[r], k);                    \
        } else {                                                                           \
            b_stage = load_mn_contiguous(b, ldb, (k0) + b_k[r], k, n0 + b_mn[r], n);       \
        }                                                                                  \
    } while (0)
#define SG_STORE_SLOT(r, buf)                                                              \
    do {                                                                                   \
        store_slot<BK, A_K_CONTIGUOUS>(a_smem[buf], a_mn[r], a_k[r], a_stage);             \
        store_slot<BK, B_K_CONTIGUOUS>(b_smem[buf], b_mn[r], b_k[r], b_stage);             \
    } while (0)

    /* ---- compute coordinates: 4x2 warps, 4x8 lanes, 2x2 sub-tiles of 4x4 ---- */
    const int warp = tid >> 5, lane = tid & 31;
    const int a_off = (warp >> 1) * 32 + (lane >> 3) * 4; /* rows a_off+0..3, a_off+16..19 */
    const int b_off = (warp & 1) * 64 + (lane & 7) * 4;   /* cols b_off+0..3, b_off+32..35 */

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;

    constexpr int K_PER_SLOT = BK / LOADS; /* k steps between two slot loads: 8 */
    const int num_tiles = (k + BK - 1) / BK;
    if (num_tiles > 0) {
#pragma unroll
        for (int r = 0; r < LOADS; r++) {
            SG_LOAD_SLOT(r, 0);
            SG_STORE_SLOT(r, 0);
        }
        __syncthreads();
    }

    for (int t = 0; t < num_tiles; t++) {
        const int cur = t & 1;
        const int has_next = t + 1 < num_tiles;
        const int next_k0 = (t + 1) * BK;

        float4 frag_a[2][2], frag_b[2][2];
        frag_a[0][0] = *(const float4 *)&a_smem[cur][0][a_off];
        frag_a[0][1] = *(const float4 *)&a_smem[cur][0][a_off + 16];
        frag_b[0][0] = *(const float4 *)&b_smem[cur][0][b_off];
        frag_b[0][1] = *(const float4 *)&b_smem[cur][0][b_off + 32];
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            /* The other buffer was last read in iteration t-1, before the
             * barrier that ended it, so it may be filled at any point of this
             * iteration; the barrier below publishes it. */
            if (kk % K_PER_SLOT == 0 && has_next) {
                if (kk > 0) SG_STORE_SLOT(kk / K_PER_SLOT - 1, cur ^ 1);
                SG_LOAD_SLOT(kk / K_PER_SLOT, next_k0);
            }
            const int s = kk & 1;
            if (kk + 1 < BK) { /* next k's fragments issue ahead of this k's FFMAs */
                frag_a[s ^ 1][0] = *(const float4 *)&a_smem[cur][kk + 1][a_off];
                frag_a[s ^ 1][1] = *(const float4 *)&a_smem[cur][kk + 1][a_off + 16];
                frag_b[s ^ 1][0] = *(const float4 *)&b_smem[cur][kk + 1][b_off];
                frag_b[s ^ 1][1] = *(const float4 *)&b_smem[cur][kk + 1][b_off + 32];
            }
            const float av[8] = {frag_a[s][0].x, frag_a[s][0].y, frag_a[s][0].z, frag_a[s][0].w,
                                 frag_a[s][1].x, frag_a[s][1].y, frag_a[s][1].z, frag_a[s][1].w};
            const float bv[8] = {frag_b[s][0].x, frag_b[s][0].y, frag_b[s][0].z, frag_b[s][0].w,
                                 frag_b[s][1].x, frag_b[s][1].y, frag_b[s][1].z, frag_b[s][1].w};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        if (has_next) SG_STORE_SLOT(LOADS - 1, cur ^ 1);
        __syncthreads();
    }
#undef SG_LOAD_SLOT
#undef SG_STORE_SLOT

    /* ---- epilogue: C = alpha*acc + beta*C, float4 where the row allows ---- */
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int gm = m0 + a_off + (i & 3) + (i >> 2) * 16;
        if (gm >= m) continue;
        float *crow = c + (int64_t)gm * ldc;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int gn = n0 + b_off + h * 32;
            float4 v = make_float4(alpha * acc[i][4 * h + 0], alpha * acc[i][4 * h + 1],
                                   alpha * acc[i][4 * h + 2], alpha * acc[i][4 * h + 3]);
            if (gn + 3 < n) {
                float4 *p = (float4 *)(crow + gn);
                if (beta != 0.0f) {
                    const float4 old = *p;
                    v.x = fmaf(beta, old.x, v.x);
                    v.y = fmaf(beta, old.y, v.y);
                    v.z = fmaf(beta, old.z, v.z);
                    v.w = fmaf(beta, old.w, v.w);
                }
                *p = v;
            } else {
                const float vv[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    if (gn + e >= n) break;
                    float out = vv[e];
                    if (beta != 0.0f) out = fmaf(beta, crow[gn + e], out);
                    crow[gn + e] = out;
                }
            }
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Host side                                                                */
/* ------------------------------------------------------------------------ */

#define SG_MAX_DIM (INT_MAX - 2 * SG_BM) /* int coordinates inside the kernel never wrap */

static int simt_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    if (h->sm_major < 8) return 0;
    if (d->ab_type != CUOPS_DTYPE_F32 || d->c_type != CUOPS_DTYPE_F32) return 0;
    if (!cuops_aligned(d->a, 16) || !cuops_aligned(d->b, 16) || !cuops_aligned(d->c, 16))
        return 0;
    if (d->lda % 4 || d->ldb % 4 || d->ldc % 4) return 0;
    if (d->m > SG_MAX_DIM || d->n > SG_MAX_DIM || d->k > SG_MAX_DIM) return 0;
    const int64_t tiles = cuops_ceil_div(d->m, SG_BM) * cuops_ceil_div(d->n, SG_BN);
    return tiles <= INT_MAX;
}

template <int BK, int TRANS_A, int TRANS_B>
static void launch_one(struct cuops_handle *h, const cuops_gemm_desc_t *d, int tiles_m,
                       int tiles_n, int swizzle)
{
    sgemm_simt_kernel<BK, TRANS_A, TRANS_B>
        <<<(unsigned)tiles_m * (unsigned)tiles_n, SG_THREADS, 0, cuops_stream(h)>>>(
            (int)d->m, (int)d->n, (int)d->k, d->alpha, (const float *)d->a, d->lda,
            (const float *)d->b, d->ldb, d->beta, (float *)d->c, d->ldc, tiles_m, tiles_n,
            swizzle);
}

template <int BK>
static cuops_status_t simt_launch_bk(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                     const cuops_options_t *opt, const char *name)
{
    if (!simt_supports(h, d))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: needs f32 A/B/C, 16-byte aligned pointers and leading "
                          "dimensions that are multiples of 4", name);
    const int tiles_m = (int)cuops_ceil_div(d->m, SG_BM);
    const int tiles_n = (int)cuops_ceil_div(d->n, SG_BN);
    const int swizzle = !(opt && (opt->flags & CUOPS_FLAG_NO_SWIZZLE));
    if (d->trans_a == CUOPS_OP_N) {
        if (d->trans_b == CUOPS_OP_N) launch_one<BK, CUOPS_OP_N, CUOPS_OP_N>(h, d, tiles_m, tiles_n, swizzle);
        else                          launch_one<BK, CUOPS_OP_N, CUOPS_OP_T>(h, d, tiles_m, tiles_n, swizzle);
    } else {
        if (d->trans_b == CUOPS_OP_N) launch_one<BK, CUOPS_OP_T, CUOPS_OP_N>(h, d, tiles_m, tiles_n, swizzle);
        else                          launch_one<BK, CUOPS_OP_T, CUOPS_OP_T>(h, d, tiles_m, tiles_n, swizzle);
    }
    return cuops_cuda_check_launch(h, name);
}

static cuops_status_t simt_launch_bk8(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                      const cuops_options_t *opt)
{
    return simt_launch_bk<8>(h, d, opt, "sgemm_simt_128x128");
}

static cuops_status_t simt_launch_bk16(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                       const cuops_options_t *opt)
{
    return simt_launch_bk<16>(h, d, opt, "sgemm_simt_128x128_bk16");
}

extern "C" const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_128x128 = {
    "sgemm_simt_128x128", simt_supports, simt_launch_bk8};
extern "C" const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_128x128_bk16 = {
    "sgemm_simt_128x128_bk16", simt_supports, simt_launch_bk16};
