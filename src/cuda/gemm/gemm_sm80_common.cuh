/*
 * gemm_sm80_common.cuh - the pieces every mma.sync GEMM of cuops shares
 * (gemm_sm80_multistage.cuh, gemm_sm80_inplace.cu): kernel parameters, the
 * shared-memory tile layouts (XOR swizzle or padding), the global->shared
 * tile loader with zero-filled edges, the ldmatrix fragment loaders for
 * K-major and MN-major operands, CTA rasterization, StaggerU, the epilogue,
 * and the host-side checks every variant's supports() makes.
 *
 * Vocabulary: an operand is "K-major" when K is its contiguous dimension
 * (A with trans_a = N, B with trans_b = T: the seed's case) and "MN-major"
 * otherwise; MN-major operands are stored in shared memory as [k][m|n] and
 * read with ldmatrix.trans.
 */
#ifndef CUOPS_GEMM_SM80_COMMON_CUH
#define CUOPS_GEMM_SM80_COMMON_CUH

#include <limits.h>
#include <stdint.h>

#include "cuda/common/cuda_common.cuh"
#include "cuda/common/ptx_sm80.cuh"
#include "cuda/gemm/gemm_kernels.h"

/* Grouped rasterization: this many tile rows are walked column by column
 * before moving on, so CTAs resident at the same time share A and B panels
 * in L2 (a group of 8 x tiles_n CTAs covers the 132 resident ones). */
#define SM80_RASTER_GROUP 8

/* Everything a kernel needs, passed by value (lives in the constant bank). */
typedef struct sm80_gemm_params {
    const void *a, *b;
    void *c;
    int64_t lda, ldb, ldc;
    int64_t m, n, k;
    float alpha, beta;
    int c_type;        /* cuops_dtype_t of C */
    int c_pair_ok;     /* C base and ldc allow 2-element vector stores */
    int tiles_m, tiles_n;
    int k_tiles;
    int raster_group;  /* 1: plain row-major tile order */
    int stagger;       /* StaggerU: CTA starts its K loop at k-tile (cta % k_tiles) */
} sm80_gemm_params;

/* ------------------------------------------------------------------------ */
/* Shared-memory tile layout                                                */
/* ------------------------------------------------------------------------ */

/*
 * A tile of ROWS rows of ROW_ELEMS 16-bit elements, moved in 16-byte chunks
 * (cp.async writes one chunk; each ldmatrix lane reads one chunk).
 *
 * Bank conflicts: ldmatrix serves an 8x8 matrix per phase, eight lanes each
 * reading one 16-byte chunk of eight consecutive rows at the same logical
 * chunk column. Unswizzled, rows of 64 or 128+ bytes put those eight chunks
 * in 2..8 of the same four banks (up to 8-way conflict).
 *  - XOR swizzle (PAD = false): physical chunk = chunk ^ (row & 7) when a
 *    row holds >= 8 chunks; with 4 chunks (BK = 32, 64-byte rows, two rows per
 *    128-byte bank line) chunk ^ ((row >> 1) & 3). Eight consecutive rows
 *    then land on eight distinct 16-byte bank groups: conflict-free, no
 *    wasted bytes. The cp.async writes (8 consecutive chunks of one row or
 *    of two rows) are permuted within a line and stay conflict-free too
 *    (for MN-major tiles, whose rows are >= 256 bytes, a thread's two
 *    adjacent chunks make the writes 2-way conflicted; ldmatrix is not).
 *  - Padding (PAD = true): each row gets 16 extra bytes, so row r starts
 *    16*r*(CPR+1) mod 128 bytes into the bank line; with CPR even that is 8
 *    distinct groups for 8 rows. Costs 16 B per row of shared memory and,
 *    for 4-chunk rows, a 2-way conflict on the cp.async writes.
 */
template <int ROWS_, int ROW_ELEMS, bool PAD>
struct sm80_tile_layout {
    static constexpr int ROWS = ROWS_;
    static constexpr int CPR = ROW_ELEMS / 8;                  /* chunks per row */
    static constexpr int STRIDE = ROW_ELEMS + (PAD ? 8 : 0);   /* elements */
    static constexpr int ELEMS = ROWS * STRIDE;
    static constexpr int BYTES = ELEMS * 2;
    static_assert(CPR >= 4 && (CPR & (CPR - 1)) == 0, "rows of 4, 8, 16 or 32 chunks");
    static_assert(ROWS % 8 == 0, "row groups of 8");

    static __device__ __forceinline__ int phys_chunk(int row, int chunk)
    {
        if (PAD) return chunk;
        if (CPR >= 8) return chunk ^ (row & 7);
        return chunk ^ ((row >> 1) & 3);
    }
    /* Byte offset of chunk `chunk` of row `row` inside the tile. */
    static __device__ __forceinline__ uint32_t offset(int row, int chunk)
    {
        return (uint32_t)((row * STRIDE + phys_chunk(row, chunk) * 8) * 2);
    }
    /* The same for row = row8 + row_in with row8 a multiple of 8: the
     * swizzle depends on row_in alone, so row8 becomes a plain additive
     * term the compiler can fold into the instruction's immediate offset. */
    static __device__ __forceinline__ uint32_t offset_split(int row8, int row_in, int chunk)
    {
        return (uint32_t)(row8 * STRIDE * 2) +
               (uint32_t)((row_in * STRIDE + phys_chunk(row_in, chunk) * 8) * 2);
    }
};

/* ------------------------------------------------------------------------ */
/* Global -> shared tile copy                                               */
/* ------------------------------------------------------------------------ */

/*
 * Copies part PART (of NPARTS) of one operand tile: rows [o0, o0+ROWS) of the
 * operand's outer (strided) dimension, elements [i0, i0+ROW_ELEMS) of its
 * contiguous dimension. A thread moves 32 contiguous bytes (two chunks, one
 * full DRAM/L2 sector) per unit: units tid, tid+NT, ... so consecutive threads
 * read consecutive sectors of a row (coalesced), and one 64-bit row pointer
 * serves two cp.async (register pressure is the limit of these kernels).
 * Everything beyond outer_lim / inner_lim is zero-filled. Splitting the copy
 * into parts lets the main loop spread its cp.async between MMAs (the seed's
 * hand-interleaved LDG).
 */
template <typename LAYOUT, int NT, int PART, int NPARTS, typename T>
static __device__ __forceinline__ void sm80_load_tile(uint32_t smem_tile, const T *base,
                                                      int64_t ld, int64_t o0, int64_t outer_lim,
                                                      int64_t i0, int64_t inner_lim, int tid)
{
    constexpr int PPR = LAYOUT::CPR / 2;                 /* 32-byte units per row */
    constexpr int UNITS = LAYOUT::ROWS * PPR;
    static_assert(UNITS % NT == 0, "tile units must divide among the threads");
    static_assert(NT % PPR == 0, "a thread keeps its column across units");
    constexpr int PER_THREAD = UNITS / NT;
    constexpr int ROW_STEP = NT / PPR;
    const int row_t = tid / PPR;
    const int chunk = (tid % PPR) * 2;
    const int64_t gi = i0 + (int64_t)chunk * 8;
    const int64_t left = inner_lim - gi;
#pragma unroll
    for (int j = 0; j < PER_THREAD; j++) {
        if (j % NPARTS != PART) continue;
        const int64_t go = o0 + row_t + j * ROW_STEP;
        const bool row_ok = go < outer_lim;
        const int bytes0 = (row_ok && left > 0) ? (left >= 8 ? 16 : (int)left * 2) : 0;
        const int bytes1 = (row_ok && left > 8) ? (left >= 16 ? 16 : (int)(left - 8) * 2) : 0;
        const T *src = base + (row_ok ? go * ld + gi : 0);
        uint32_t dst0, dst1;
        if (ROW_STEP % 8 == 0) {
            dst0 = smem_tile + LAYOUT::offset_split(j * ROW_STEP, row_t, chunk);
            dst1 = smem_tile + LAYOUT::offset_split(j * ROW_STEP, row_t, chunk + 1);
        } else {
            dst0 = smem_tile + LAYOUT::offset(row_t + j * ROW_STEP, chunk);
            dst1 = smem_tile + LAYOUT::offset(row_t + j * ROW_STEP, chunk + 1);
        }
        cuops_cp_async_16_zfill(dst0, bytes0 ? (const void *)src : (const void *)base, bytes0);
        cuops_cp_async_16_zfill(dst1, bytes1 ? (const void *)(src + 8) : (const void *)base, bytes1);
    }
}

/* ------------------------------------------------------------------------ */
/* Shared -> register fragments                                             */
/* ------------------------------------------------------------------------ */

/*
 * A fragments of m16 blocks [row0, row0 + 16*MI) for k-step ks (16 columns).
 * K-major tile [m][k]: lanes 0-15 address rows 0-15 at k chunk 2ks, lanes
 * 16-31 the same rows at chunk 2ks+1 -> registers (g,k) (g+8,k) (g,k+8)
 * (g+8,k+8), the mma A order. MN-major tile [k][m]: lanes address k rows
 * (lane&7) + 8*(lane>>4) at m chunk +(lane>>3)&1, read transposed.
 */
template <typename LAYOUT, bool KMAJ, int MI>
static __device__ __forceinline__ void sm80_load_a_frags(uint32_t (&af)[MI][4], uint32_t tile,
                                                         int row0, int ks, int lane)
{
#pragma unroll
    for (int i = 0; i < MI; i++) {
        if (KMAJ) {
            const int chunk = ks * 2 + (lane >> 4);
            cuops_ldmatrix_x4(af[i], tile + LAYOUT::offset_split(row0 + i * 16, lane & 15, chunk));
        } else {
            const int row_in = (lane & 7) + ((lane >> 4) << 3);
            const int chunk = ((row0 + i * 16) >> 3) + ((lane >> 3) & 1);
            cuops_ldmatrix_x4_trans(af[i], tile + LAYOUT::offset_split(ks * 16, row_in, chunk));
        }
    }
}

/*
 * B fragments of n8 blocks [col0, col0 + 8*NJ), two blocks per ldmatrix.x4:
 * matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
 * -> bf[2p][0], bf[2p][1], bf[2p+1][0], bf[2p+1][1]. K-major tile [n][k]
 * read as stored; MN-major tile [k][n] read transposed.
 */
template <typename LAYOUT, bool KMAJ, int NJ>
static __device__ __forceinline__ void sm80_load_b_frags(uint32_t (&bf)[NJ][2], uint32_t tile,
                                                         int col0, int ks, int lane)
{
    static_assert(NJ % 2 == 0, "n8 blocks come in pairs");
#pragma unroll
    for (int p = 0; p < NJ / 2; p++) {
        uint32_t r[4];
        if (KMAJ) {
            const int row_in = ((lane >> 4) << 3) + (lane & 7);
            const int chunk = ks * 2 + ((lane >> 3) & 1);
            cuops_ldmatrix_x4(r, tile + LAYOUT::offset_split(col0 + p * 16, row_in, chunk));
        } else {
            const int row_in = (lane & 7) + (((lane >> 3) & 1) << 3);
            const int chunk = ((col0 + p * 16) >> 3) + (lane >> 4);
            cuops_ldmatrix_x4_trans(r, tile + LAYOUT::offset_split(ks * 16, row_in, chunk));
        }
        bf[2 * p][0] = r[0];
        bf[2 * p][1] = r[1];
        bf[2 * p + 1][0] = r[2];
        bf[2 * p + 1][1] = r[3];
    }
}

/* ------------------------------------------------------------------------ */
/* Fragments of K-major tiles (the lean and warp-specialized kernels)       */
/* ------------------------------------------------------------------------ */

/*
 * Lane offset (k-step 0) for ldmatrix over a K-major [rows][BK] tile: the
 * lane addresses row r (within a 16-row block) at chunk h. For k-step ks the
 * chunk is 2ks + h, and with the swizzle phys = chunk ^ f(r) (f < CPR):
 * phys = (h ^ f(r)) ^ 2ks, so offset(ks) = offset(0) ^ 32*ks (the row term
 * r*ROW_BYTES has no bits below ROW_BYTES >= 64, and 32*ks < ROW_BYTES).
 */
template <typename LAYOUT, bool KMAJ>
static __device__ __forceinline__ uint32_t sm80_lean_lane_off(int r, int h)
{
    static_assert(LAYOUT::STRIDE == LAYOUT::CPR * 8, "XOR-swizzled layout (no padding)");
    static_assert(!KMAJ || LAYOUT::CPR == 4 || LAYOUT::CPR == 8, "K-major rows of BK = 32 or 64");
    return KMAJ ? LAYOUT::offset(r, h) : 0u; /* MN-major: the general loaders */
}

/* A: m16 blocks i at rows row0 + 16i; lanes 0-15 rows 0-15 chunk 2ks,
 * lanes 16-31 the same rows chunk 2ks+1 (as sm80_load_a_frags). */
template <typename LAYOUT, int MI>
static __device__ __forceinline__ void sm80_lean_a_frags(uint32_t (&af)[MI][4], uint32_t warp_tile,
                                                         uint32_t lane_off, int ks)
{
    const uint32_t base = warp_tile + (lane_off ^ (uint32_t)(32 * ks));
#pragma unroll
    for (int i = 0; i < MI; i++)
        cuops_ldmatrix_x4(af[i], base + (uint32_t)(i * 16 * LAYOUT::STRIDE * 2));
}

/* B: n16 pairs p at rows col0 + 16p; lanes 8q..8q+7 rows (q>>1)*8 + 0..7 at
 * chunk 2ks + (q&1) (as sm80_load_b_frags). */
template <typename LAYOUT, int NJ>
static __device__ __forceinline__ void sm80_lean_b_frags(uint32_t (&bf)[NJ][2], uint32_t warp_tile,
                                                         uint32_t lane_off, int ks)
{
    const uint32_t base = warp_tile + (lane_off ^ (uint32_t)(32 * ks));
#pragma unroll
    for (int p = 0; p < NJ / 2; p++) {
        uint32_t r[4];
        cuops_ldmatrix_x4(r, base + (uint32_t)(p * 16 * LAYOUT::STRIDE * 2));
        bf[2 * p][0] = r[0];
        bf[2 * p][1] = r[1];
        bf[2 * p + 1][0] = r[2];
        bf[2 * p + 1][1] = r[3];
    }
}

/* ------------------------------------------------------------------------ */
/* Warp-tile MMAs                                                           */
/* ------------------------------------------------------------------------ */

template <int MI, int NJ>
static __device__ __forceinline__ void sm80_zero_acc(float (&acc)[MI][NJ][4])
{
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NJ; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
}

/* One k-step of a warp tile: MI x NJ m16n8k16 MMAs into independent
 * accumulators, in a serpentine over j so consecutive MMAs share an
 * operand. */
template <typename T, int MI, int NJ>
static __device__ __forceinline__ void sm80_warp_tile_mma(float (&acc)[MI][NJ][4],
                                                          const uint32_t (&af)[MI][4],
                                                          const uint32_t (&bf)[NJ][2])
{
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int jj = 0; jj < NJ; jj++) {
            const int j = (i & 1) ? NJ - 1 - jj : jj;
            cuops_mma_m16n8k16<T>::run(acc[i][j], af[i], bf[j]);
        }
}

/* ------------------------------------------------------------------------ */
/* Raster and StaggerU                                                      */
/* ------------------------------------------------------------------------ */

static __device__ __forceinline__ void sm80_tile_coords(const sm80_gemm_params &p, int cta,
                                                        int *tile_m, int *tile_n)
{
    if (p.raster_group <= 1) {
        *tile_m = cta / p.tiles_n;
        *tile_n = cta % p.tiles_n;
        return;
    }
    const int per_group = p.raster_group * p.tiles_n;
    const int group = cta / per_group;
    const int first_m = group * p.raster_group;
    const int rows = min(p.tiles_m - first_m, p.raster_group);
    const int in_group = cta - group * per_group;
    *tile_m = first_m + in_group % rows;
    *tile_n = in_group / rows;
}

/* k-tile visited at step t: StaggerU rotates each CTA's start so that CTAs
 * running together do not hit the same power-of-two-strided addresses
 * (DRAM channels, L2 sets, TLB) at the same moment. */
static __device__ __forceinline__ int sm80_k_tile(int t, int start, int k_tiles)
{
    int kt = t + start;
    return kt >= k_tiles ? kt - k_tiles : kt;
}

/* ------------------------------------------------------------------------ */
/* Epilogue                                                                 */
/* ------------------------------------------------------------------------ */

template <typename CT> struct sm80_pair;
template <> struct sm80_pair<float> {
    typedef float2 type;
    static __device__ __forceinline__ float2 make(float x, float y) { return make_float2(x, y); }
    static __device__ __forceinline__ float lo(float2 v) { return v.x; }
    static __device__ __forceinline__ float hi(float2 v) { return v.y; }
};
template <> struct sm80_pair<__half> {
    typedef __half2 type;
    static __device__ __forceinline__ __half2 make(float x, float y) { return __floats2half2_rn(x, y); }
    static __device__ __forceinline__ float lo(__half2 v) { return __low2float(v); }
    static __device__ __forceinline__ float hi(__half2 v) { return __high2float(v); }
};
template <> struct sm80_pair<__nv_bfloat16> {
    typedef __nv_bfloat162 type;
    static __device__ __forceinline__ __nv_bfloat162 make(float x, float y) { return __floats2bfloat162_rn(x, y); }
    static __device__ __forceinline__ float lo(__nv_bfloat162 v) { return __low2float(v); }
    static __device__ __forceinline__ float hi(__nv_bfloat162 v) { return __high2float(v); }
};

/* One output pair of type CT (see sm80_store_pair). */
template <typename CT>
static __device__ __forceinline__ void sm80_store_pair_typed(void *c_, int64_t ldc, int64_t n,
                                                             float alpha, float beta, int pair_ok,
                                                             int64_t row, int64_t col, float a0,
                                                             float a1)
{
    typedef sm80_pair<CT> PAIR;
    typedef typename PAIR::type pair_t;
    CT *crow = (CT *)c_ + row * ldc;
    float v0 = alpha * a0, v1 = alpha * a1;
    if (col + 1 < n && pair_ok) {
        pair_t *dst = (pair_t *)(crow + col);
        if (beta != 0.0f) {
            const pair_t old = *dst;
            v0 += beta * PAIR::lo(old);
            v1 += beta * PAIR::hi(old);
        }
        *dst = PAIR::make(v0, v1);
        return;
    }
    if (col < n) {
        if (beta != 0.0f) v0 += beta * cuops_to_float(crow[col]);
        crow[col] = cuops_from_float<CT>(v0);
    }
    if (col + 1 < n) {
        if (beta != 0.0f) v1 += beta * cuops_to_float(crow[col + 1]);
        crow[col + 1] = cuops_from_float<CT>(v1);
    }
}

/*
 * C[row, col..col+1] = alpha * (a0, a1) + beta * C (beta == 0 never reads C),
 * masked against N, one vector store when C's alignment allows. Not inlined
 * on purpose: the epilogue has 64 call sites per thread and three output
 * types; inlining them all doubled the compile time of every kernel for no
 * measurable gain (the epilogue runs once per CTA, after K/BK k-tiles).
 */
static __device__ __noinline__ void sm80_store_pair(void *c, int64_t ldc, int64_t n, float alpha,
                                                    float beta, int c_type, int pair_ok,
                                                    int64_t row, int64_t col, float a0, float a1)
{
    if (c_type == CUOPS_DTYPE_F32)
        sm80_store_pair_typed<float>(c, ldc, n, alpha, beta, pair_ok, row, col, a0, a1);
    else if (c_type == CUOPS_DTYPE_F16)
        sm80_store_pair_typed<__half>(c, ldc, n, alpha, beta, pair_ok, row, col, a0, a1);
    else
        sm80_store_pair_typed<__nv_bfloat16>(c, ldc, n, alpha, beta, pair_ok, row, col, a0, a1);
}

/* C = alpha * acc + beta * C straight from the mma accumulator layout: each
 * thread owns pairs (row g / g+8 of each m16 block, columns 2t, 2t+1 of each
 * n8 block). Rows past M are skipped here, columns past N in the store.
 * Offsets are 64-bit. */
template <int MI, int NJ>
static __device__ __forceinline__ void sm80_epilogue(const sm80_gemm_params &p,
                                                     const float (&acc)[MI][NJ][4],
                                                     int64_t row0, int64_t col0, int lane)
{
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int64_t row = row0 + i * 16 + h * 8 + g;
            if (row >= p.m) continue;
#pragma unroll
            for (int j = 0; j < NJ; j++) {
                const int64_t col = col0 + j * 8 + 2 * t;
                if (col >= p.n) continue;
                sm80_store_pair(p.c, p.ldc, p.n, p.alpha, p.beta, p.c_type, p.c_pair_ok, row,
                                col, acc[i][j][2 * h], acc[i][j][2 * h + 1]);
            }
        }
}

/* ------------------------------------------------------------------------ */
/* Host side                                                                */
/* ------------------------------------------------------------------------ */

/* Operand layouts a variant serves, as a mask of SM80_LAYOUT_* bits. */
#define SM80_LAYOUT_NT 1u  /* A [m,k], B [n,k]: both K-major (the seed's case) */
#define SM80_LAYOUT_NN 2u  /* A [m,k], B [k,n] */
#define SM80_LAYOUT_TT 4u  /* A [k,m], B [n,k] */
#define SM80_LAYOUT_TN 8u  /* A [k,m], B [k,n] */
#define SM80_LAYOUT_ALL 15u

static inline unsigned sm80_layout_bit(const cuops_gemm_desc_t *d)
{
    if (d->trans_a == CUOPS_OP_N) return d->trans_b == CUOPS_OP_T ? SM80_LAYOUT_NT : SM80_LAYOUT_NN;
    return d->trans_b == CUOPS_OP_T ? SM80_LAYOUT_TT : SM80_LAYOUT_TN;
}

/* What every mma.sync variant needs: sm_80+, f16/bf16 inputs, a C type it can
 * write, 16-byte aligned A/B with leading dimensions a multiple of 8
 * elements (cp.async 16B), C aligned to its element, enough opt-in shared
 * memory, and tile counts that fit the int grid arithmetic. */
static inline int sm80_supports_common(const struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                       int bm, int bn, int bk, size_t smem_bytes,
                                       unsigned layouts)
{
    if (h->sm_major < 8) return 0;
    if (d->ab_type != CUOPS_DTYPE_F16 && d->ab_type != CUOPS_DTYPE_BF16) return 0;
    if (d->c_type != CUOPS_DTYPE_F16 && d->c_type != CUOPS_DTYPE_BF16 &&
        d->c_type != CUOPS_DTYPE_F32)
        return 0;
    if (!(layouts & sm80_layout_bit(d))) return 0;
    if (!cuops_aligned(d->a, 16) || !cuops_aligned(d->b, 16)) return 0;
    if (d->lda % 8 != 0 || d->ldb % 8 != 0) return 0;
    if (!cuops_aligned(d->c, cuops_dtype_size(d->c_type))) return 0;
    if ((int64_t)smem_bytes > h->smem_optin_bytes) return 0;
    if (d->m < 1 || d->n < 1 || d->k < 0) return 0;
    const int64_t tm = cuops_ceil_div(d->m, bm), tn = cuops_ceil_div(d->n, bn);
    if (tn > INT_MAX / SM80_RASTER_GROUP || tm > INT_MAX / tn) return 0;
    if (d->k > (int64_t)INT_MAX - bk) return 0;
    return 1;
}

/* Fill the kernel parameters; flags are the caller's CUOPS_FLAG_* bits. */
static inline sm80_gemm_params sm80_make_params(const cuops_gemm_desc_t *d, int bm, int bn, int bk,
                                                unsigned flags)
{
    sm80_gemm_params p;
    p.a = d->a;
    p.b = d->b;
    p.c = d->c;
    p.lda = d->lda;
    p.ldb = d->ldb;
    p.ldc = d->ldc;
    p.m = d->m;
    p.n = d->n;
    p.k = d->k;
    p.alpha = d->alpha;
    p.beta = d->beta;
    p.c_type = (int)d->c_type;
    const size_t es = cuops_dtype_size(d->c_type);
    p.c_pair_ok = cuops_aligned(d->c, 2 * es) && (d->ldc % 2 == 0);
    p.tiles_m = (int)cuops_ceil_div(d->m, bm);
    p.tiles_n = (int)cuops_ceil_div(d->n, bn);
    p.k_tiles = (int)cuops_ceil_div(d->k, bk);
    p.raster_group = (flags & CUOPS_FLAG_NO_SWIZZLE) ? 1 : SM80_RASTER_GROUP;
    p.stagger = (flags & CUOPS_FLAG_STAGGER_K) ? 1 : 0;
    return p;
}

/* Launch `kernel` over every output tile on the handle's stream. */
static inline cuops_status_t sm80_launch(struct cuops_handle *h, const void *kernel,
                                         const sm80_gemm_params *p, int threads,
                                         size_t smem_bytes, const char *name)
{
    if (smem_bytes > 48 * 1024) {
        /* Per function and device; cheap next to a launch, so simply repeated. */
        cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)smem_bytes);
        if (err != cudaSuccess) return cuops_cuda_fail(h, err, name);
    }
    const unsigned grid = (unsigned)((int64_t)p->tiles_m * p->tiles_n);
    void *args[] = {(void *)p};
    cudaError_t err = cudaLaunchKernel(kernel, dim3(grid), dim3(threads), args, smem_bytes,
                                       cuops_stream(h));
    if (err != cudaSuccess) return cuops_cuda_fail(h, err, name);
    return cuops_cuda_check_launch(h, name);
}

/* The options' flags, or 0 without options. */
static inline unsigned sm80_flags(const cuops_options_t *opt) { return opt ? opt->flags : 0u; }

#endif /* CUOPS_GEMM_SM80_COMMON_CUH */
