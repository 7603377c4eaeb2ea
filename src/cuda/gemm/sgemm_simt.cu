/*
 * sgemm_simt.cu - "sgemm_simt_128x128" (BK = 8), "sgemm_simt_128x128_bk16",
 * "sgemm_simt_128x128_bk16_paired" and "sgemm_simt_128x128_bk32_paired":
 * the three-level tiled FP32 GEMM of seed 002, true fp32 FFMA (no TF32).
 * The *_paired kernels (second half of the file) keep this design and cut
 * the shared-memory cycles per FFMA by a third (lane order chosen for the
 * pair-packing rule of LDS.128, conflict-free transposed stores); run them
 * side by side with --variant / cuops_options_t.variant to compare. What
 * follows describes the first kernel.
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

/* Elements idx..idx+3 of a row that ends at limit, read from p into v (zeroed
 * by the caller): one LDG.128 when all four lie in the row, else one LDG.32
 * per element that does. v is the caller's (see "pieces both kernels share"). */
static __device__ __forceinline__ void ldg_float4_upto(float4 &v, const float *p, int idx,
                                                       int limit)
{
    if (idx + 3 < limit) {
        v = __ldg((const float4 *)p);
    } else {
        if (idx + 0 < limit) v.x = __ldg(p + 0);
        if (idx + 1 < limit) v.y = __ldg(p + 1);
        if (idx + 2 < limit) v.z = __ldg(p + 2);
    }
}

/* op element (mn, k..k+3) of an operand stored [mn][k] (k contiguous). */
__device__ __forceinline__ float4 load_k_contiguous(const float *row, int mn_ok, int kidx, int k)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (mn_ok) ldg_float4_upto(v, row + kidx, kidx, k);
    return v;
}

/* op elements (mn..mn+3, kidx) of an operand stored [k][mn] (mn contiguous). */
__device__ __forceinline__ float4 load_mn_contiguous(const float *base, int64_t ld, int kidx,
                                                     int k, int mn, int mn_limit)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (kidx < k) ldg_float4_upto(v, base + (int64_t)kidx * ld + mn, mn, mn_limit);
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

/* ---- pieces both kernels share ----
 * Shaped so that both kernels compile to the PTX they had when each spelled
 * these out (byte for byte, compute_80 and compute_90a, nvcc 13.0): arrays
 * and float4 values stay the kernel's and reach a helper by reference, and
 * no helper has a local array. A local array (or a float4 by value) in a
 * helper reordered the accumulator registers and changed the SASS, as did
 * every helper holding both arms of the swizzle if/else. Hence unpack_frag
 * beside the FMA step, float4_elem, and grouped_tile for one arm only. */

/* Tile (row, column) of CTA bid with CTAs rasterised in groups of
 * SG_GROUP_ROWS tile rows, so the CTAs resident at one time share B tiles in L2. */
static __device__ __forceinline__ void grouped_tile(int bid, int tiles_m, int tiles_n, int *tile_m,
                                                    int *tile_n)
{
    const int per_group = SG_GROUP_ROWS * tiles_n;
    const int first_m = (bid / per_group) * SG_GROUP_ROWS;
    const int rows_here = min(tiles_m - first_m, SG_GROUP_ROWS);
    const int local = bid % per_group;
    *tile_m = first_m + local % rows_here;
    *tile_n = local / rows_here;
}

static __device__ __forceinline__ void zero_acc_8x8(float (&acc)[8][8])
{
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
}

/* The 8 values of a 2 x float4 fragment (sub-tile 0, then sub-tile 1). */
static __device__ __forceinline__ void unpack_frag(const float4 &lo, const float4 &hi,
                                                   float (&v)[8])
{
    v[0] = lo.x; v[1] = lo.y; v[2] = lo.z; v[3] = lo.w;
    v[4] = hi.x; v[5] = hi.y; v[6] = hi.z; v[7] = hi.w;
}

/* One k of the thread's 8x8 tile: acc += av (column) x bv (row), 64 FFMA. */
static __device__ __forceinline__ void fma_outer_product_8x8(float (&acc)[8][8],
                                                             const float (&av)[8],
                                                             const float (&bv)[8])
{
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
}

/* Element e of v: a constant e after unrolling, so a register, no array. */
static __device__ __forceinline__ float float4_elem(const float4 &v, int e)
{
    return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

/* Epilogue of the thread's 8x8 tile: C = alpha*acc + beta*C (C not read where
 * beta == 0); its rows are row0 + {0..3, 16..19}, its columns col0 + {0..3,
 * 32..35}: one STG.128 per 4 columns where the row holds them, else one STG.32
 * per column before n. */
static __device__ __forceinline__ void store_c_8x8(float *__restrict__ c, int64_t ldc, int m,
                                                   int n, int row0, int col0, float alpha,
                                                   float beta, const float (&acc)[8][8])
{
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int gm = row0 + (i & 3) + (i >> 2) * 16;
        if (gm >= m) continue;
        float *crow = c + (int64_t)gm * ldc;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int gn = col0 + h * 32;
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
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    if (gn + e >= n) break;
                    float out = float4_elem(v, e);
                    if (beta != 0.0f) out = fmaf(beta, crow[gn + e], out);
                    crow[gn + e] = out;
                }
            }
        }
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
        grouped_tile(bid, tiles_m, tiles_n, &tile_m, &tile_n);
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
    zero_acc_8x8(acc);

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
            float av[8], bv[8];
            unpack_frag(frag_a[s][0], frag_a[s][1], av);
            unpack_frag(frag_b[s][0], frag_b[s][1], bv);
            fma_outer_product_8x8(acc, av, bv);
        }
        if (has_next) SG_STORE_SLOT(LOADS - 1, cur ^ 1);
        __syncthreads();
    }
#undef SG_LOAD_SLOT
#undef SG_STORE_SLOT

    /* ---- epilogue: C = alpha*acc + beta*C, float4 where the row allows ---- */
    store_c_8x8(c, ldc, m, n, m0 + a_off, n0 + b_off, alpha, beta, acc);
}

/* ------------------------------------------------------------------------ */
/* Paired-lane kernel: "sgemm_simt_128x128_bk16_paired", "..._bk32_paired"   */
/* ------------------------------------------------------------------------ */
/*
 * Same tiling, pipeline and 8x8 outer product as sgemm_simt_kernel; what
 * changes is how much work each shared-memory access costs.
 *
 * 1. Lane order. Shared memory returns 128 B per clock to the SM: one 32-bit
 *    register for each of 32 lanes. An LDS.128 returns four registers per
 *    lane, so a warp's LDS.128 takes 4 return cycles however many lanes share
 *    an address, unless every lane pair (T, T^1), or every pair (T, T^2),
 *    reads the same address: then two lanes' values travel packed and the
 *    instruction takes 2. Per warp and per k the 8x8 tile reads 4 LDS.128
 *    for 64 FFMA. In 64 clocks the 4 sub-partitions of an SM issue 4 warp-k
 *    steps (one FFMA per clock each), so at 4 cycles per LDS.128 the reads
 *    alone would want 4 x 16 = 64 of the 64 shared cycles. The original lane
 *    order (row = lane / 8, col = lane % 8) meets the pair rule for A (T and
 *    T^1 share a row) but not for B: 2+2+4+4 = 12 cycles per warp-k, 75 % of
 *    the shared pipe at FFMA peak, before stores and the global loads that
 *    also pass through L1 (ncu of sgemm_simt_128x128 at 4096^3: L1/TEX 72 %
 *    busy at 65 % of FFMA peak). Here lane bit 0 picks a column and bit 1 a
 *    row, so (T, T^1) share every A address and (T, T^2) every B address:
 *    2+2+2+2 = 8 cycles per warp-k, 50 % at FFMA peak.
 *
 * 2. Conflict-free transposed stores at any BK. Rows of a shared tile are 128
 *    floats, and k row kk starts at kk*128 + R*(kk/4) with R = 128/BK. An
 *    operand stored with k contiguous is loaded by BK/4 threads per row (one
 *    float4 of k each: 64 B per row at BK 16, a full 128 B line at BK 32),
 *    so one warp's float4 loads cover R rows and BK/4 groups of 4 k; its
 *    scalar store e of group g goes to bank (R*g + row) mod 32: R rows times
 *    BK/4 groups = 32 distinct banks. The compute reads stay within one k
 *    row (16 or 32 consecutive words: conflict-free) and the shift is a
 *    compile-time constant per unrolled k, so the reads cost nothing extra.
 *    (The original kernel's 132-float rows leave BK 16 a 2-way conflict.)
 *
 * 3. BK 32 (dynamic shared memory, 66,048 B per CTA, still 2 CTAs per SM):
 *    one barrier per 2048 FFMA per thread instead of 1024 (the compute loop's
 *    code doubles to ~2048 FFMA, which the measurement has to weigh).
 *
 * Global loads: an operand stored with k contiguous is read as BK/4 float4
 * per row (zero filled past k; rows past m or n are zero); an operand stored
 * with m or n contiguous is read as 512 contiguous bytes per warp. One
 * float4 of A and one of B in flight per thread, as in the original kernel.
 */

/* Start (in floats) of k row kk in a paired-kernel tile. */
template <int BK>
__host__ __device__ constexpr int pr_row(int kk)
{
    return kk * SG_BM + (SG_BM / BK) * (kk >> 2);
}

/* Floats per tile: the last row ends at pr_row(BK - 1) + 128 <= pr_row(BK). */
template <int BK>
__host__ __device__ constexpr int pr_tile_floats()
{
    return pr_row<BK>(BK);
}

template <int BK>
static constexpr size_t pr_smem_bytes()
{
    return (size_t)4 * pr_tile_floats<BK>() * sizeof(float); /* 2 buffers x (A, B) */
}

/* One float4 of an operand stored [mn][k]: elements (row, kidx..kidx+3). */
__device__ __forceinline__ float4 pr_load_k_contiguous(const float *base, int64_t ld, int row,
                                                       int row_limit, int kidx, int k)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row < row_limit) ldg_float4_upto(v, base + (int64_t)row * ld + kidx, kidx, k);
    return v;
}

template <int BK, int TRANS_A, int TRANS_B>
__global__ void __launch_bounds__(SG_THREADS, 2)
sgemm_simt_paired_kernel(int m, int n, int k, float alpha, const float *__restrict__ a,
                         int64_t lda, const float *__restrict__ b, int64_t ldb, float beta,
                         float *__restrict__ c, int64_t ldc, int tiles_m, int tiles_n,
                         int swizzle)
{
    static_assert(BK == 8 || BK == 16 || BK == 32, "row shifts assume BK in {8, 16, 32}");
    constexpr int LOADS = BK / 8;               /* float4 per thread per operand per K step */
    constexpr int TILE = pr_tile_floats<BK>();  /* floats per operand per buffer */
    constexpr int KC_THREADS_PER_ROW = BK / 4;  /* k-contiguous: one float4 of k each */
    constexpr int KC_ROWS_PER_SLOT = SG_THREADS / KC_THREADS_PER_ROW;
    constexpr int A_K_CONTIGUOUS = (TRANS_A == CUOPS_OP_N);
    constexpr int B_K_CONTIGUOUS = (TRANS_B == CUOPS_OP_T);
    static_assert(LOADS * SG_THREADS * 4 == BK * SG_BM, "tile not covered by the loads");
    static_assert(KC_ROWS_PER_SLOT * LOADS == SG_BM, "k-contiguous slots must cover 128 rows");
    static_assert(TILE % 4 == 0, "tiles must stay 16-byte aligned");

    extern __shared__ float4 pr_smem4[];
    float *const smem = (float *)pr_smem4; /* [A buf 0][A buf 1][B buf 0][B buf 1] */

    /* ---- which C tile ---- */
    const int bid = blockIdx.x;
    int tile_m, tile_n;
    if (swizzle) {
        grouped_tile(bid, tiles_m, tiles_n, &tile_m, &tile_n);
    } else {
        tile_m = bid / tiles_n;
        tile_n = bid % tiles_n;
    }
    const int m0 = tile_m * SG_BM;
    const int n0 = tile_n * SG_BN;
    const int tid = threadIdx.x;

    /*
     * Global -> shared coordinates. k-contiguous operand, slot r: row
     * kc_row + r * KC_ROWS_PER_SLOT, k 4*kc_group .. +3, stored to rows
     * pr_row(4*kc_group + e) = kc_group*(512 + R) + 128*e of the tile.
     * mn-contiguous operand, slot r: k row mc_k + 8r, columns mc_mn .. +3.
     */
    const int kc_group = tid % KC_THREADS_PER_ROW;
    const int kc_row = tid / KC_THREADS_PER_ROW;
    const int kc_store = pr_row<BK>(4 * kc_group) + kc_row;
    const int mc_k = tid >> 5;
    const int mc_mn = (tid & 31) * 4;
    const int mc_store = pr_row<BK>(mc_k) + mc_mn;

    float4 a_stage, b_stage;
#define PR_LOAD_SLOT(r, k0)                                                                  \
    do {                                                                                     \
        if (A_K_CONTIGUOUS) {                                                                \
            a_stage = pr_load_k_contiguous(a, lda, m0 + kc_row + (r) * KC_ROWS_PER_SLOT, m,  \
                                           (k0) + 4 * kc_group, k);                          \
        } else {                                                                             \
            a_stage = load_mn_contiguous(a, lda, (k0) + mc_k + 8 * (r), k, m0 + mc_mn, m);   \
        }                                                                                    \
        if (B_K_CONTIGUOUS) {                                                                \
            b_stage = pr_load_k_contiguous(b, ldb, n0 + kc_row + (r) * KC_ROWS_PER_SLOT, n,  \
                                           (k0) + 4 * kc_group, k);                          \
        } else {                                                                             \
            b_stage = load_mn_contiguous(b, ldb, (k0) + mc_k + 8 * (r), k, n0 + mc_mn, n);   \
        }                                                                                    \
    } while (0)
    /* pr_row(mc_k + 8r) = pr_row(mc_k) + pr_row(8r): the shift term is linear
     * in kk/4 and 8r is a multiple of 4. */
#define PR_STORE_ONE(tile, K_CONTIGUOUS, r, v)                                               \
    do {                                                                                     \
        if (K_CONTIGUOUS) {                                                                  \
            float *dst_ = (tile) + kc_store + (r) * KC_ROWS_PER_SLOT;                        \
            dst_[0 * SG_BM] = (v).x;                                                         \
            dst_[1 * SG_BM] = (v).y;                                                         \
            dst_[2 * SG_BM] = (v).z;                                                         \
            dst_[3 * SG_BM] = (v).w;                                                         \
        } else {                                                                             \
            *(float4 *)((tile) + mc_store + pr_row<BK>(8 * (r))) = (v);                      \
        }                                                                                    \
    } while (0)
#define PR_STORE_SLOT(r, buf)                                                                \
    do {                                                                                     \
        PR_STORE_ONE(smem + (buf) * TILE, A_K_CONTIGUOUS, r, a_stage);                       \
        PR_STORE_ONE(smem + (2 + (buf)) * TILE, B_K_CONTIGUOUS, r, b_stage);                 \
    } while (0)

    /* ---- compute coordinates: 4x2 warps; lanes 4 (M) x 8 (N) with lane bit 0
     * a column bit and bit 1 a row bit (the pair rule above); 2x2 sub-tiles
     * of 4x4 at 16 rows / 32 columns ---- */
    const int warp = tid >> 5, lane = tid & 31;
    const int lane_row = (lane >> 1) & 3;                 /* lane bits 1, 2 */
    const int lane_col = (lane & 1) | ((lane >> 3) << 1); /* lane bits 0, 3, 4 */
    const int a_off = (warp >> 1) * 32 + lane_row * 4;   /* rows a_off+0..3, a_off+16..19 */
    const int b_off = (warp & 1) * 64 + lane_col * 4;    /* cols b_off+0..3, b_off+32..35 */

    float acc[8][8];
    zero_acc_8x8(acc);

    const int num_tiles = (k + BK - 1) / BK;
    if (num_tiles > 0) {
#pragma unroll
        for (int r = 0; r < LOADS; r++) {
            PR_LOAD_SLOT(r, 0);
            PR_STORE_SLOT(r, 0);
        }
        __syncthreads();
    }

    for (int t = 0; t < num_tiles; t++) {
        const int cur = t & 1;
        const int has_next = t + 1 < num_tiles;
        const int next_k0 = (t + 1) * BK;
        const float *a_tile = smem + cur * TILE + a_off;
        const float *b_tile = smem + (2 + cur) * TILE + b_off;

        float4 frag_a[2][2], frag_b[2][2];
        frag_a[0][0] = *(const float4 *)(a_tile + pr_row<BK>(0));
        frag_a[0][1] = *(const float4 *)(a_tile + pr_row<BK>(0) + 16);
        frag_b[0][0] = *(const float4 *)(b_tile + pr_row<BK>(0));
        frag_b[0][1] = *(const float4 *)(b_tile + pr_row<BK>(0) + 32);
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            /* The other buffer was last read in iteration t-1, before the
             * barrier that ended it; slot r of the next tile is loaded at
             * kk = 8r and stored 8 k later, so each load has 8 x 64 FFMA per
             * thread to arrive in and only one float4 per operand is staged. */
            if (kk % 8 == 0 && has_next) {
                if (kk > 0) PR_STORE_SLOT(kk / 8 - 1, cur ^ 1);
                PR_LOAD_SLOT(kk / 8, next_k0);
            }
            const int s = kk & 1;
            if (kk + 1 < BK) { /* next k's fragments issue ahead of this k's FFMAs */
                frag_a[s ^ 1][0] = *(const float4 *)(a_tile + pr_row<BK>(kk + 1));
                frag_a[s ^ 1][1] = *(const float4 *)(a_tile + pr_row<BK>(kk + 1) + 16);
                frag_b[s ^ 1][0] = *(const float4 *)(b_tile + pr_row<BK>(kk + 1));
                frag_b[s ^ 1][1] = *(const float4 *)(b_tile + pr_row<BK>(kk + 1) + 32);
            }
            float av[8], bv[8];
            unpack_frag(frag_a[s][0], frag_a[s][1], av);
            unpack_frag(frag_b[s][0], frag_b[s][1], bv);
            fma_outer_product_8x8(acc, av, bv);
        }
        if (has_next) PR_STORE_SLOT(LOADS - 1, cur ^ 1);
        __syncthreads();
    }
#undef PR_LOAD_SLOT
#undef PR_STORE_ONE
#undef PR_STORE_SLOT

    /* ---- epilogue: C = alpha*acc + beta*C, float4 where the row allows ---- */
    store_c_8x8(c, ldc, m, n, m0 + a_off, n0 + b_off, alpha, beta, acc);
}

/* ------------------------------------------------------------------------ */
/* Host side                                                                */
/* ------------------------------------------------------------------------ */

#define SG_MAX_DIM (INT_MAX - 2 * SG_BM) /* int coordinates inside the kernel never wrap */

/* An operand the kernels' 16-byte loads and stores can address: base on 16
 * bytes, rows a multiple of 4 floats (sgemm_simt_packed copies the others) */
static bool fits_simt(const void *p, int64_t ld) { return cuops_aligned(p, 16) && ld % 4 == 0; }

static int simt_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    if (h->sm_major < 8) return 0;
    if (d->ab_type != CUOPS_DTYPE_F32 || d->c_type != CUOPS_DTYPE_F32) return 0;
    if (!fits_simt(d->a, d->lda) || !fits_simt(d->b, d->ldb) || !fits_simt(d->c, d->ldc)) return 0;
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

template <int BK, int TRANS_A, int TRANS_B>
static cuops_status_t launch_paired_one(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                        int tiles_m, int tiles_n, int swizzle, const char *name)
{
    const size_t smem = pr_smem_bytes<BK>();
    if (smem > 48 * 1024) {
        /* Per function and device; cheap next to a launch, so simply repeated. */
        cudaError_t err = cudaFuncSetAttribute(sgemm_simt_paired_kernel<BK, TRANS_A, TRANS_B>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)smem);
        if (err != cudaSuccess) return cuops_cuda_fail(h, err, name);
    }
    sgemm_simt_paired_kernel<BK, TRANS_A, TRANS_B>
        <<<(unsigned)tiles_m * (unsigned)tiles_n, SG_THREADS, smem, cuops_stream(h)>>>(
            (int)d->m, (int)d->n, (int)d->k, d->alpha, (const float *)d->a, d->lda,
            (const float *)d->b, d->ldb, d->beta, (float *)d->c, d->ldc, tiles_m, tiles_n,
            swizzle);
    return cuops_cuda_check_launch(h, name);
}

template <int BK>
static cuops_status_t simt_launch_paired(struct cuops_handle *h, const cuops_gemm_desc_t *d,
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
        if (d->trans_b == CUOPS_OP_N)
            return launch_paired_one<BK, CUOPS_OP_N, CUOPS_OP_N>(h, d, tiles_m, tiles_n, swizzle, name);
        return launch_paired_one<BK, CUOPS_OP_N, CUOPS_OP_T>(h, d, tiles_m, tiles_n, swizzle, name);
    }
    if (d->trans_b == CUOPS_OP_N)
        return launch_paired_one<BK, CUOPS_OP_T, CUOPS_OP_N>(h, d, tiles_m, tiles_n, swizzle, name);
    return launch_paired_one<BK, CUOPS_OP_T, CUOPS_OP_T>(h, d, tiles_m, tiles_n, swizzle, name);
}

static cuops_status_t simt_launch_bk16_paired(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                              const cuops_options_t *opt)
{
    return simt_launch_paired<16>(h, d, opt, "sgemm_simt_128x128_bk16_paired");
}

static cuops_status_t simt_launch_bk32_paired(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                              const cuops_options_t *opt)
{
    return simt_launch_paired<32>(h, d, opt, "sgemm_simt_128x128_bk32_paired");
}

extern "C" const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_128x128 = {
    "sgemm_simt_128x128", simt_supports, simt_launch_bk8};
extern "C" const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_128x128_bk16 = {
    "sgemm_simt_128x128_bk16", simt_supports, simt_launch_bk16};
extern "C" const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_128x128_bk16_paired = {
    "sgemm_simt_128x128_bk16_paired", simt_supports, simt_launch_bk16_paired};
extern "C" const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_128x128_bk32_paired = {
    "sgemm_simt_128x128_bk32_paired", simt_supports, simt_launch_bk32_paired};

/* ---- "sgemm_simt_packed": operands off 16 bytes ------------------------- */

/*
 * The kernels above load and store 16 bytes at a time, so they decline an A,
 * B or C whose base is off 16 bytes or whose leading dimension is off 4
 * floats: any f32 GEMM with an odd k or n in the usual layouts. Those calls
 * went to fallback_tiled, a few TFLOP/s. This entry copies each such operand
 * onto rows of a multiple of 4 floats in the workspace (O(mk + kn + mn)
 * beside the O(mnk) product), runs the paired BK = 16 kernel on the copies,
 * and copies a C staged that way back (C is copied in first only when beta
 * reads it). Operands already fit for the kernel are read in place.
 */
__global__ void __launch_bounds__(256)
sgemm_copy_rows_kernel(const float *__restrict__ src, int64_t lds, float *__restrict__ dst,
                       int64_t ldd, int64_t rows, int64_t cols)
{
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
        for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < cols;
             c += (int64_t)gridDim.x * blockDim.x)
            dst[r * ldd + c] = src[r * lds + c];
}

static void copy_rows(struct cuops_handle *h, const float *src, int64_t lds, float *dst,
                      int64_t ldd, int64_t rows, int64_t cols)
{
    const int64_t bx = cuops_ceil_div(cols, 256);
    const dim3 grid((unsigned)(bx < 32 ? bx : 32), (unsigned)(rows < 65535 ? rows : 65535));
    sgemm_copy_rows_kernel<<<grid, 256, 0, cuops_stream(h)>>>(src, lds, dst, ldd, rows, cols);
}

static int64_t round4(int64_t x) { return (x + 3) & ~(int64_t)3; }

/* The operands as stored: rows x cols at stride ld. */
typedef struct packed_plan {
    int64_t rows[3], cols[3];
    bool pack[3];  /* A, B, C */
    size_t bytes[3];
    size_t total;
} packed_plan_t;

static packed_plan_t packed_plan(const cuops_gemm_desc_t *d)
{
    packed_plan_t p;
    p.rows[0] = d->trans_a == CUOPS_OP_N ? d->m : d->k;
    p.cols[0] = d->trans_a == CUOPS_OP_N ? d->k : d->m;
    p.rows[1] = d->trans_b == CUOPS_OP_N ? d->k : d->n;
    p.cols[1] = d->trans_b == CUOPS_OP_N ? d->n : d->k;
    p.rows[2] = d->m;
    p.cols[2] = d->n;
    p.pack[0] = !fits_simt(d->a, d->lda);
    p.pack[1] = !fits_simt(d->b, d->ldb);
    p.pack[2] = !fits_simt(d->c, d->ldc);
    p.total = 0;
    for (int i = 0; i < 3; i++) {
        p.bytes[i] = p.pack[i] ? cuops_align256((size_t)p.rows[i] * (size_t)round4(p.cols[i]) * 4u) : 0;
        p.total += p.bytes[i];
    }
    return p;
}

static int simt_packed_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    if (h->sm_major < 8) return 0;
    if (d->ab_type != CUOPS_DTYPE_F32 || d->c_type != CUOPS_DTYPE_F32) return 0;
    /* k == 0 (beta * C) and empty calls stay with the fallback */
    if (d->m < 1 || d->n < 1 || d->k < 1) return 0;
    if (d->m > SG_MAX_DIM || d->n > SG_MAX_DIM || d->k > SG_MAX_DIM) return 0;
    if (cuops_ceil_div(d->m, SG_BM) * cuops_ceil_div(d->n, SG_BN) > INT_MAX) return 0;
    if (!cuops_aligned(d->a, 4) || !cuops_aligned(d->b, 4) || !cuops_aligned(d->c, 4)) return 0;
    /* nothing of this call may go into a workspace that holds its operands */
    if (cuops_cuda_gemm_operands_in_workspace(h, d)) return 0;
    const packed_plan_t p = packed_plan(d);
    if (h->user_workspace && p.total > 0 && h->user_workspace_bytes < p.total + 256) return 0;
    return 1;
}

static cuops_status_t simt_packed_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                         const cuops_options_t *opt)
{
    const char *const name = "sgemm_simt_packed";
    if (!simt_packed_supports(h, d))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: needs f32 A/B/C, m, n, k >= 1 and workspace for the copies", name);
    const packed_plan_t p = packed_plan(d);
    cuops_gemm_desc_t g = *d;
    if (p.total > 0) {
        void *ws = NULL;
        cuops_status_t st = cuops_cuda_workspace_aligned(h, p.total, 256, &ws);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        char *at = (char *)ws;
        const void *src[3] = {d->a, d->b, d->c};
        const int64_t ld[3] = {d->lda, d->ldb, d->ldc};
        void *dst[3] = {NULL, NULL, NULL};
        for (int i = 0; i < 3; i++) {
            if (!p.pack[i]) continue;
            dst[i] = at;
            at += p.bytes[i];
            /* C is read only where beta is not 0 (beta == 0 never reads it) */
            if (i < 2 || d->beta != 0.0f)
                copy_rows(h, (const float *)src[i], ld[i], (float *)dst[i], round4(p.cols[i]),
                          p.rows[i], p.cols[i]);
        }
        if (p.pack[0]) { g.a = dst[0]; g.lda = round4(p.cols[0]); }
        if (p.pack[1]) { g.b = dst[1]; g.ldb = round4(p.cols[1]); }
        if (p.pack[2]) { g.c = dst[2]; g.ldc = round4(p.cols[2]); }
        st = cuops_cuda_check_launch(h, "sgemm_copy_rows_kernel");
        if (st != CUOPS_STATUS_SUCCESS) return st;
    }
    cuops_status_t st = simt_launch_paired<16>(h, &g, opt, name);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (p.pack[2]) {
        copy_rows(h, (const float *)g.c, g.ldc, (float *)d->c, d->ldc, d->m, d->n);
        st = cuops_cuda_check_launch(h, "sgemm_copy_rows_kernel");
        if (st != CUOPS_STATUS_SUCCESS) return st;
    }
    h->last_kernel = name;
    return CUOPS_STATUS_SUCCESS;
}

extern "C" const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_packed = {
    "sgemm_simt_packed", simt_packed_supports, simt_packed_launch};
