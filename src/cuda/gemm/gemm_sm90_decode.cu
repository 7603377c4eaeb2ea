/*
 * gemm_sm90_decode.cu - the decode-shaped GEMM (m <= 64, C = A * B^T with B
 * the weight stored [n, k]) on sm_90a: the weight streamed by TMA into a
 * shared-memory ring and multiplied by wgmma straight from there. Two forms:
 * "sm90_decode_wgmma" (256-row blocks, K split across a thread-block cluster
 * and reduced in distributed shared memory) and "sm90_decode_narrow" (x as
 * the wgmma A, 32-row tiles that each run all of K: no split; below, with
 * why it exists and where auto takes it). On 128- and 256-row blocks the
 * producer issues two consecutive k-blocks' tiles at once, in 64-row boxes
 * interleaved (SDW_ISSUE_PAIRS64, below: each weight row's 256 bytes
 * together streamed 5 % faster than 128 bytes of twice the rows).
 *
 * Why. At m <= 64 the GEMM is a stream of the weight (28672 x 8192 is 470 MB
 * against 1 MB of activations); the mma.sync decode kernels (gemm_decode.cu)
 * load it into registers lane by lane and reach 0.41-0.59x cuBLAS at m = 64,
 * where each weight element also feeds 64 products. Here the weight never
 * passes through registers: one TMA per stage brings a 256-row x 64-k tile
 * (32 KB), the tensor cores read it from shared memory, and the SM's warps
 * only issue the copies and the wgmma.
 *
 * C^T = B A^T: weight rows are the wgmma M, activation rows its N = XN, the
 * smallest of 8, 16, 32, 64 that holds m (rows past m are TMA zeros and
 * never stored; columns past k are TMA zeros for both operands).
 *
 * CTA: 640 threads, one unit = 256 weight rows x a K range. Warpgroup 0 is
 * the producer (one thread issues per stage the TMA of the weight tile and of
 * the XN x 64 activation tile); warpgroups 1-4 each own 64 weight rows and
 * per 64-k block issue four wgmma.m64nXNk16 (A: rows 64c.. of the weight
 * tile, B: the activation tile), commit, wait for the previous block's
 * group and release its stage. The same CTA shape, split and reduction as
 * w4a16_decode_wgmma.cu (there the weight is int4 and dequantized in
 * registers), so one CTA per SM and as many stages of 32 KB + the activation
 * tile as fit 224 KB (5 at XN = 64, 6 at XN = 8-32): 160-192 KB of weight in
 * flight per SM (a 200 KB ring held 5 at XN = 16, and 16 x 28672 x 8192 ran
 * 2 % slower: docs/gemm.md, decode step 14). Where 256-row blocks would
 * need K split and 128-row blocks fill the SMs once unsplit (n ~
 * 12550-16900 on 132 SMs), the CTA is 384
 * threads with two consumers over 128 rows, 9-13 stages of 16 KB + the
 * activation tile (cuops_decode_wgmma_rows, gemm_tuning.h). Where even those
 * would split K, the blocks are 64 rows (one consumer, 256 threads, 14-24
 * stages of 8 KB + the activation tile), or 128 for a long K split 4 ways or
 * more (cuops_decode_wgmma_block_rows); the "sm90_decode_wgmma128" and
 * "sm90_decode_wgmma64" variants force those heights.
 *
 * Epilogue: every thread writes its fragment as fp32 into a C tile in the
 * (then free) ring, and the consumers store C rows four columns per access.
 * Split-K (cluster_splitk.cuh): the S CTAs of a block form a cluster
 * (S <= 8), rank r takes 64-k blocks [r*K/S, (r+1)*K/S), the C tiles meet
 * in distributed shared memory and rank r sums its share of the tile's
 * 4-column chunks in rank order (bitwise reproducible) and stores
 * C = alpha * sum + beta * C; S = 1 is a plain launch (no cluster). S: as
 * many as fill the SMs once, at most 8 and one per 64-k block, lowered
 * until every cluster is resident at once; options.split_k forces it.
 *
 * supports(): sm_90 with the shared memory, ab F16/BF16, c F16/BF16/F32,
 * trans_a = N, trans_b = T, 1 <= m <= 64, k >= 1, A and B readable by TMA in
 * place (16-byte aligned, lda and ldb multiples of 8), c aligned to its
 * element, k and n < 2^31. The cluster form also packs an x that TMA
 * cannot read into the workspace first. It also takes trans_b = N (the
 * weight stored [k, n], as `x @ W` keeps it): the weight tile then arrives
 * as ROWS / 64 boxes of 64 K-rows x 64 weight rows, and wgmma reads it as an
 * M-major A (transpose immediate 1, cuops_wgmma_desc_mn_sw128); and
 * trans_a = T (x stored [k, m]): x's tile is then one box of 64 K-rows x XN
 * columns (zero past m) read as an N-major B, with the swizzle as wide as
 * its rows (128B at XN = 64, 64B at 32, 32B at 16, none at 8). The narrow
 * form, whose tiles of 8-256 rows are the wgmma B, takes NT only.
 */
#include <string.h>

#include <type_traits>

#include "cuda/common/cluster_splitk.cuh"
#include "decode_stamps.cuh"
#include "cuda/common/ptx_sm90.cuh"
#include "cuda/gemm/gemm_kernels.h"
#include "cuda/gemm/gemm_sm90.h"
#include "cuda/gemm/gemm_tuning.h"

/* CONS consumer warpgroups of 64 weight rows each: 4 (256-row blocks), 2
 * (128-row blocks) where those fill the SMs once without a split and 256-row
 * blocks would need one (cuops_decode_wgmma_rows, gemm_tuning.h), or 1
 * (64-row blocks, 256 threads, 14-24 stages) */
#define SDW_ROWS(CONS) (64 * (CONS))
#define SDW_BK 64
#define SDW_THREADS(CONS) (128 * (1 + (CONS)))
#define SDW_RING_BYTES (224 * 1024)
#define SDW_W_TILE_BYTES(CONS) (SDW_ROWS(CONS) * SDW_BK * 2) /* 32 KB at CONS = 4 */
#define SDW_X_TILE_BYTES(XN) ((XN) * SDW_BK * 2)
#define SDW_STAGES(XN, CONS) (SDW_RING_BYTES / (SDW_W_TILE_BYTES(CONS) + SDW_X_TILE_BYTES(XN)))
#define SDW_SMEM_BYTES(XN, CONS)                                                              \
    (SDW_STAGES(XN, CONS) * (SDW_W_TILE_BYTES(CONS) + SDW_X_TILE_BYTES(XN)) +                 \
     2 * SDW_STAGES(XN, CONS) * 8 + 1024)
/* CONS = 4: 640 threads start at 96 registers; the producer gives back 64
 * each, the consumers take 16 (as in w4a16_decode_wgmma.cu). CONS = 2: 384
 * threads have 168 each, no exchange needed */
/* How the cluster form's producer issues the weight: one stage at a time
 * as each frees (SINGLE); two stages of consecutive 64-k blocks back to back
 * once both are free (PAIRS, whole boxes); or the same with the pair's tiles
 * cut into 64-row boxes and interleaved (PAIRS64: rows 0-63 of k-blocks j
 * and j + 1, then rows 64-127, ...), so that each weight row's 256 bytes
 * reach the memory system together. cuops-probe tma streamed a 128 x 128
 * stage (two 64-k boxes) 5 % faster than the 256 x 64 one on the same 112
 * CTAs (docs/probe.md), and PAIRS64 took 1 x 28672 x 8192 from 117.9 to
 * 111.3 us (H200, P213: docs/gemm.md, decode step "paired issue"), 1-2 % off
 * 14336 x 4096 (128-row blocks), but made the 64-row blocks 0.2-2.6 %
 * slower. AUTO: PAIRS64 on 128- and 256-row blocks of a K-major weight,
 * SINGLE on 64-row blocks and on the weight stored [k, n] (whose CONS boxes
 * of a k-block already bring 64 x CONS contiguous columns together; not
 * measured paired). The variants "sm90_decode_wgmma_single" and
 * "_pairs64" force one (PAIRS64 issues as PAIRS for the [k, n] weight).
 * (Four k-blocks at a time, "_quads64", was measured and withdrawn: P214 call
 * 2, 0-1.6 % behind pairs on most rows; docs/gemm.md.) */
#define SDW_ISSUE_AUTO (-1)
#define SDW_ISSUE_SINGLE 0
#define SDW_ISSUE_PAIRS 1
#define SDW_ISSUE_PAIRS64 2
#define SDW_PRODUCER_REGS 32
#define SDW_CONSUMER_REGS 112
/* the narrow form (below): NW weight rows per tile (a multiple of 8 up to
 * 256, chosen by n: gemm_tuning.h), 160 threads, as many stages of the NW x
 * 64 weight tile and the 64-row x tile as fit 200 KB, at most 14 */
#define SDN_NW_MAX 256
#define SDN_THREADS 160
#define SDN_W_TILE_BYTES(NW) ((NW) * SDW_BK * 2) /* 4 KB at NW = 32 */
#define SDN_X_TILE_BYTES (64 * SDW_BK * 2)       /* 8 KB: the A operand is 64 rows */
#define SDN_RING_BYTES (200 * 1024)
#define SDN_FIT_STAGES(NW) (SDN_RING_BYTES / (SDN_W_TILE_BYTES(NW) + SDN_X_TILE_BYTES))
#define SDN_STAGES(NW) (SDN_FIT_STAGES(NW) < 14 ? SDN_FIT_STAGES(NW) : 14)
#define SDN_SMEM_BYTES(NW)                                                                    \
    (SDN_STAGES(NW) * (SDN_W_TILE_BYTES(NW) + SDN_X_TILE_BYTES) + 2 * SDN_STAGES(NW) * 8 + 1024)

/* the shifted form (sds_cta, below): staging rows of 72 elements, the
 * k-block and up to 7 elements before it; as many stages as fit the ring */
#define SDS_SROW_ELEMS 72 /* a staging row: the k-block and up to 7 elements before it */
#define SDS_SROW_BYTES (SDS_SROW_ELEMS * 2)
#define SDS_W_STAGE_BYTES(CONS) (SDW_ROWS(CONS) * SDS_SROW_BYTES)
#define SDS_STAGES(XN, CONS) (SDW_RING_BYTES / (SDS_W_STAGE_BYTES(CONS) + SDW_X_TILE_BYTES(XN)))
#define SDS_SMEM_BYTES(XN, CONS)                                                              \
    (SDS_STAGES(XN, CONS) * (SDS_W_STAGE_BYTES(CONS) + SDW_X_TILE_BYTES(XN)) +                \
     2 * SDS_STAGES(XN, CONS) * 8 + 1024)

typedef struct sdw_params {
    void *c;
    int64_t ldc;
    float alpha, beta;
    int c_type;   /* cuops_dtype_t */
    int m, n;
    int kblocks;  /* ceil(k / 64) */
    int splits;   /* cluster size: CTAs per weight block */
    int tiles;    /* narrow form: ceil(n / NW) tiles of NW weight rows */
    int issue;    /* cluster form: SDW_ISSUE_* (how the producer issues the weight's boxes) */
    /* the shifted form (sm90_decode_shift): the weight's rows through a map
     * of groups of wgroup = G rows (wlog = log2 G), woff elements from the
     * map's 16-byte aligned base to the weight's, wld = ldb; wtail = k % 64
     * (0: no partial last k-block) */
    int wgroup, wlog, woff, wld, wtail;
#ifdef CUOPS_DECODE_STAMPS
    unsigned long long *stamps; /* the study probe's per-CTA times (decode_stamps.cuh) */
#endif
} sdw_params_t;

#if CUOPS_SM90A_DEVICE

template <typename T> struct sdw_is_f16 { static constexpr bool value = false; };
template <> struct sdw_is_f16<__half> { static constexpr bool value = true; };

/* C[row][col] = alpha * v + beta * C[row][col] (C not read when beta == 0) */
static __device__ __forceinline__ void sdw_store(const sdw_params_t &p, int row, int col, float v)
{
    const int64_t off = (int64_t)row * p.ldc + col;
    if (p.c_type == CUOPS_DTYPE_F32) {
        float *c = (float *)p.c + off;
        *c = p.beta != 0.0f ? p.alpha * v + p.beta * *c : p.alpha * v;
    } else if (p.c_type == CUOPS_DTYPE_F16) {
        __half *c = (__half *)p.c + off;
        *c = __float2half_rn(p.beta != 0.0f ? p.alpha * v + p.beta * __half2float(*c) : p.alpha * v);
    } else {
        __nv_bfloat16 *c = (__nv_bfloat16 *)p.c + off;
        *c = __float2bfloat16_rn(p.beta != 0.0f ? p.alpha * v + p.beta * __bfloat162float(*c)
                                                : p.alpha * v);
    }
}

/* Two 16-bit values of C's type T (__half / __nv_bfloat16) in one word, to
 * fp32 (the other way: cuops_pack2, cuda_common.cuh). */
template <typename T> static __device__ __forceinline__ float2 sdw_unpack2(uint32_t w);
template <> __device__ __forceinline__ float2 sdw_unpack2<__half>(uint32_t w)
{
    return __half22float2(*(const __half2 *)&w);
}
template <> __device__ __forceinline__ float2 sdw_unpack2<__nv_bfloat16>(uint32_t w)
{
    return __bfloat1622float2(*(const __nv_bfloat162 *)&w);
}
/* Four 16-bit elements of C at the 8-byte aligned `c`: o = alpha * v on
 * entry, alpha * v + beta * C where beta != 0. */
template <typename T>
static __device__ __forceinline__ void sdw_store4_16(const sdw_params_t &p, uint2 *c,
                                                     const float4 &v, float (&o)[4])
{
    if (p.beta != 0.0f) {
        const uint2 old = *c;
        const float2 a = sdw_unpack2<T>(old.x), b = sdw_unpack2<T>(old.y);
        o[0] = p.alpha * v.x + p.beta * a.x;
        o[1] = p.alpha * v.y + p.beta * a.y;
        o[2] = p.alpha * v.z + p.beta * b.x;
        o[3] = p.alpha * v.w + p.beta * b.y;
    }
    *c = make_uint2(cuops_pack2<T>(o[0], o[1]), cuops_pack2<T>(o[2], o[3]));
}

/* C[row][col + e] = alpha * v[e] + beta * C[row][col + e] for e = 0..3,
 * masked at n: one 16- (f32) or 8-byte (f16, bf16) access where all four
 * columns are inside C and the address is aligned to it, else per element
 * (the same rounding either way: fp32 math, one rounding to C's type). */
static __device__ __forceinline__ void sdw_store4(const sdw_params_t &p, int row, int col,
                                                  const float4 &v)
{
    const int64_t off = (int64_t)row * p.ldc + col;
    const int es = p.c_type == CUOPS_DTYPE_F32 ? 4 : 2;
    const uintptr_t addr = (uintptr_t)p.c + (uintptr_t)(off * es);
    if (col + 3 >= p.n || (addr & (uintptr_t)(4 * es - 1)) != 0) {
        const float vals[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int e = 0; e < 4; e++)
            if (col + e < p.n) sdw_store(p, row, col + e, vals[e]);
        return;
    }
    float o[4] = {p.alpha * v.x, p.alpha * v.y, p.alpha * v.z, p.alpha * v.w};
    if (p.c_type == CUOPS_DTYPE_F32) {
        float4 *c = (float4 *)addr;
        if (p.beta != 0.0f) {
            const float4 old = *c;
            o[0] = p.alpha * v.x + p.beta * old.x;
            o[1] = p.alpha * v.y + p.beta * old.y;
            o[2] = p.alpha * v.z + p.beta * old.z;
            o[3] = p.alpha * v.w + p.beta * old.w;
        }
        *c = make_float4(o[0], o[1], o[2], o[3]);
    } else if (p.c_type == CUOPS_DTYPE_F16) {
        sdw_store4_16<__half>(p, (uint2 *)addr, v, o);
    } else {
        sdw_store4_16<__nv_bfloat16>(p, (uint2 *)addr, v, o);
    }
}

/* ---- the C tile's fast stores ----
 *
 * Why: the epilogue runs once per CTA with 4-8 warps on the SM, so its
 * stores are bound by the latency of each thread's instruction chain, not by
 * bytes (H200, P160: at 64 x 14336 x 4096 the 8 four-column stores per
 * thread took 1.2 us, 0.8 us of it with the global stores taken out; ncu
 * puts the loop's samples on dependent integer math, branches and
 * instruction fetch). Where the block lies inside C, C's rows are 16-byte
 * aligned and beta = 0 (checked once per CTA), a chunk is stored from a
 * base address with no per-chunk checks, in 16-byte pieces. */

/* 16 bytes to global memory (the address is in the global window). */
static __device__ __forceinline__ void sdw_st_global_16(void *addr, uint32_t a, uint32_t b,
                                                        uint32_t c, uint32_t d)
{
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(addr), "r"(a), "r"(b), "r"(c),
                 "r"(d)
                 : "memory");
}

/* 8 bytes to global memory. */
static __device__ __forceinline__ void sdw_st_global_8(void *addr, uint32_t a, uint32_t b)
{
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(addr), "r"(a), "r"(b) : "memory");
}

/* 4 bytes to global memory. */
static __device__ __forceinline__ void sdw_st_global_4(void *addr, uint32_t a)
{
    asm volatile("st.global.b32 [%0], %1;" ::"l"(addr), "r"(a) : "memory");
}

/* Whether C's columns [col0, col0 + cols) take the fast stores: inside C,
 * the block's base and C's rows aligned to `align` bytes, beta = 0 (the
 * same for every thread of the CTA). Sets the block's base and ldc in bytes. */
static __device__ __forceinline__ bool sdw_fast_c(const sdw_params_t &p, int col0, int cols,
                                                  int align, char **block, int64_t *ldc_bytes)
{
    const int es = p.c_type == CUOPS_DTYPE_F32 ? 4 : 2;
    *block = (char *)p.c + (int64_t)col0 * es;
    *ldc_bytes = (int64_t)p.ldc * es;
    return p.beta == 0.0f && col0 + cols <= p.n && ((uintptr_t)*block & (align - 1)) == 0 &&
           (*ldc_bytes & (align - 1)) == 0;
}

/* The [XN][PITCH] fp32 tile at `tile` (rows past mrows skipped) to C at
 * `block` (ldc_bytes apart) as alpha * tile, 16 bytes per store: 8 columns
 * of C's 16-bit type T, or 4 of fp32 (T = float). Thread ci of the
 * THREADS storing threads takes every THREADS-th piece; the loop is
 * unrolled, so its loads and stores do not wait on each other. */
template <typename T, int XN, int ROWS, int PITCH, int THREADS>
static __device__ __forceinline__ void sdw_store_tile_fast(uint32_t tile, int mrows, char *block,
                                                           int64_t ldc_bytes, float alpha, int ci)
{
    constexpr bool F32 = std::is_same<T, float>::value;
    constexpr int COLS = F32 ? 4 : 8;
    constexpr int PER_ROW = ROWS / COLS;
    constexpr int ITER = (XN * PER_ROW + THREADS - 1) / THREADS;
#pragma unroll
    for (int it = 0; it < ITER; it++) {
        const int i = ci + it * THREADS;
        const int row = i / PER_ROW, piece = i % PER_ROW;
        if (row >= mrows) continue;
        const uint32_t src = tile + (uint32_t)((row * PITCH + piece * COLS) * 4);
        char *dst = block + row * ldc_bytes + piece * 16;
        const float4 a = cuops_ld_shared_f4(src);
        if constexpr (F32) {
            sdw_st_global_16(dst, __float_as_uint(alpha * a.x), __float_as_uint(alpha * a.y),
                             __float_as_uint(alpha * a.z), __float_as_uint(alpha * a.w));
        } else {
            const float4 b = cuops_ld_shared_f4(src + 16);
            sdw_st_global_16(dst, cuops_pack2<T>(alpha * a.x, alpha * a.y),
                             cuops_pack2<T>(alpha * a.z, alpha * a.w),
                             cuops_pack2<T>(alpha * b.x, alpha * b.y),
                             cuops_pack2<T>(alpha * b.z, alpha * b.w));
        }
    }
}

/* The fast form's split path at S = 2: rank `split` sums chunks [i0, i1)
 * of the [XN][PITCH] fp32 tiles of ranks 0 and 1 (in that order) and
 * stores alpha * sum to C at `block`, 4 columns per store (8 bytes of C's
 * 16-bit type T, or 16 of fp32 for T = float). Unrolled to the most chunks
 * a thread can own, every address from the block's base: the loads of both
 * ranks are all in flight before the first add, and no store waits on a
 * branch (P161: the general loop's chain of masks, type switches and rank
 * loops took ~1.1 us after the cluster barrier). */
template <typename T, int XN, int ROWS, int PITCH, int THREADS>
static __device__ __forceinline__ void sdw_pull2_store_fast(uint32_t tile, int i0, int i1, int ci,
                                                            char *block, int64_t ldc_bytes,
                                                            float alpha)
{
    constexpr bool F32 = std::is_same<T, float>::value;
    constexpr int CPR = ROWS / 4; /* 4-column chunks per row of the tile */
    constexpr int MAXI = (XN * CPR / 2 + THREADS - 1) / THREADS;
    float4 a[MAXI], b[MAXI];
#pragma unroll
    for (int it = 0; it < MAXI; it++) {
        const int i = i0 + ci + it * THREADS;
        if (i < i1) {
            const uint32_t src = tile + (uint32_t)(((i / CPR) * PITCH + 4 * (i % CPR)) * 4);
            a[it] = cuops_ld_dsmem_f4(src, 0);
            b[it] = cuops_ld_dsmem_f4(src, 1);
        }
    }
#pragma unroll
    for (int it = 0; it < MAXI; it++) {
        const int i = i0 + ci + it * THREADS;
        if (i < i1) {
            char *dst = block + (i / CPR) * ldc_bytes + (i % CPR) * (F32 ? 16 : 8);
            const float x = alpha * (a[it].x + b[it].x), y = alpha * (a[it].y + b[it].y);
            const float z = alpha * (a[it].z + b[it].z), w = alpha * (a[it].w + b[it].w);
            if constexpr (F32)
                sdw_st_global_16(dst, __float_as_uint(x), __float_as_uint(y), __float_as_uint(z),
                                 __float_as_uint(w));
            else
                sdw_st_global_8(dst, cuops_pack2<T>(x, y), cuops_pack2<T>(z, w));
        }
    }
}

/* Four columns (fp32 sums) of C at `dst` as alpha * v, one 8-byte (16-bit
 * C) or 16-byte (fp32) store; the fast form's general split path. */
static __device__ __forceinline__ void sdw_store4_fast(int c_type, char *dst, float alpha,
                                                       const float4 &v)
{
    if (c_type == CUOPS_DTYPE_F32)
        sdw_st_global_16(dst, __float_as_uint(alpha * v.x), __float_as_uint(alpha * v.y),
                         __float_as_uint(alpha * v.z), __float_as_uint(alpha * v.w));
    else if (c_type == CUOPS_DTYPE_F16)
        sdw_st_global_8(dst, cuops_pack2<__half>(alpha * v.x, alpha * v.y),
                        cuops_pack2<__half>(alpha * v.z, alpha * v.w));
    else
        sdw_st_global_8(dst, cuops_pack2<__nv_bfloat16>(alpha * v.x, alpha * v.y),
                        cuops_pack2<__nv_bfloat16>(alpha * v.z, alpha * v.w));
}

/* The producer's next n (1 or 2) stages of its STAGES-stage ring, in ring
 * order, each waited free (stage s's empty barrier at empty_bars + 8 s):
 * st[0], and st[1] when n == 2. Both forms' paired issue (SDW_ISSUE_*).
 * Written out for two, not as a loop over 1-4: one producer thread issues
 * every instruction of a stage in turn, and the rolled 1-4 loops a4300f3 put
 * here (~100 more dependent instructions per pair of 256-row stages) made
 * the forced split-K calls, whose few CTAs each stream fast, 13-48 % slower
 * and 1 x 14336 x 4096 2 % slower (H100, P216 call 2; docs/gemm.md). */
template <int STAGES>
static __device__ __forceinline__ void sdw_claim_stages(uint32_t empty_bars, int n, int (&st)[2],
                                                        int &stage, uint32_t &phase)
{
    st[0] = stage;
    cuops_mbar_wait(empty_bars + 8u * (uint32_t)stage, phase ^ 1u);
    cuops_ring_advance<STAGES>(stage, phase);
    st[1] = stage;
    if (n == 2) {
        cuops_mbar_wait(empty_bars + 8u * (uint32_t)stage, phase ^ 1u);
        cuops_ring_advance<STAGES>(stage, phase);
    }
}

/* ---- the pieces every form's CTA shares ---- */

/* The ring's barriers, set up by one thread: stage s's full barrier at
 * bars + 8 s (one arrival: the producer's expect_tx) and its empty one at
 * bars + 8 (STAGES + s) (`consumers` arrivals, one per consumer thread). */
template <int STAGES>
static __device__ __forceinline__ void sdw_init_ring_bars(uint32_t bars, uint32_t consumers)
{
    for (int s = 0; s < STAGES; s++) {
        cuops_mbar_init(bars + 8u * (uint32_t)s, 1);
        cuops_mbar_init(bars + 8u * (uint32_t)(STAGES + s), consumers);
    }
    cuops_mbar_init_fence();
}

/* This CTA's share of a split block: its rank in the cluster, its weight
 * block and its 64-k blocks [kb0, kb1) (S = 1: rank 0, all of K). */
static __device__ __forceinline__ void sdw_split_share(const sdw_params_t &p, int &split, int &wb,
                                                       int &kb0, int &kb1)
{
    split = (int)cuops_cluster_ctarank();
    wb = (int)blockIdx.x / p.splits;
    cuops_cluster_k_share(split, p.kblocks, p.splits, &kb0, &kb1);
}

/* The producer warpgroup's part in sdw_epilogue's two cluster barriers
 * (split blocks only: every thread of the cluster takes them). */
static __device__ __forceinline__ void sdw_producer_cluster_barriers(const sdw_params_t &p)
{
    if (p.splits > 1) {
        /* the .aligned barriers want the whole warp: lane 0 rejoins it
         * from the copy loop above */
        __syncwarp();
        cuops_cluster_sync();
        cuops_cluster_sync_relaxed();
    }
}

template <int N> static __device__ __forceinline__ void sdw_zero_acc(float (&acc)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) acc[i] = 0.0f;
}

/* The accumulators tied in place (cuops_reg_fence) around the async wgmma,
 * so that no access to them moves across an in-flight group: before a
 * k-block's wgmma (then the wgmma fence), after its commit once the previous
 * block's group is retired (wait 1), and after the last group (wait 0). */
template <int N> static __device__ __forceinline__ void sdw_acc_fence(float (&acc)[N])
{
#pragma unroll
    for (int r = 0; r < N; r++) cuops_reg_fence(acc[r]);
}

template <int N> static __device__ __forceinline__ void sdw_wgmma_begin(float (&acc)[N])
{
    sdw_acc_fence(acc);
    cuops_wgmma_fence();
}

template <int N> static __device__ __forceinline__ void sdw_wgmma_commit_wait_prev(float (&acc)[N])
{
    cuops_wgmma_commit();
    cuops_wgmma_wait<1>();
    sdw_acc_fence(acc);
}

template <int N> static __device__ __forceinline__ void sdw_wgmma_drain(float (&acc)[N])
{
    cuops_wgmma_wait<0>();
    sdw_acc_fence(acc);
}

/* The consumers' step to the next stage of the STAGES-stage ring (empty
 * barriers at bars + 8 (STAGES + s)): the previous block's group being
 * retired, its stage goes back to the producer (`release`: unless this
 * block is the first); returns this stage, the next step's previous one.
 * prev_stage in and out by value: taken by reference, it changed the PTX's
 * register order. */
template <int STAGES>
static __device__ __forceinline__ int sdw_release_prev(bool release, uint32_t bars, int prev_stage,
                                                       int &stage, uint32_t &phase)
{
    if (release) cuops_mbar_arrive(bars + 8u * (uint32_t)(STAGES + prev_stage));
    const int cur = stage;
    cuops_ring_advance<STAGES>(stage, phase);
    return cur;
}

/* The consumers' end of the cluster form (both weight paths), once every
 * consumer is past its last wgmma (the ring is free): C through shared
 * memory. Each thread writes its fragment as fp32 into the [XN][ROWS + 4] C
 * tile of this CTA (the 4-float pad puts a warp's 32 stores in 32 banks), tile
 * row c going to the block's weight row row_of(c); then the consumers store
 * rows of C four columns at a time (16-byte stores where C allows): at m = 64
 * 8-16 vector stores per thread instead of 32-64 scalar ones. With a split,
 * the C tiles meet in distributed shared memory. */
template <int XN, int CONS, typename RowOf>
static __device__ __forceinline__ void sdw_epilogue(const sdw_params_t &p, const float (&acc)[XN / 2],
                                                    uint32_t base, int wb, int split, int consumer,
                                                    int warp, int lane, RowOf row_of)
{
    constexpr int F4 = XN / 8;
    constexpr int ROWS = SDW_ROWS(CONS);
    constexpr int PITCH = ROWS + 4;
    constexpr int CHUNKS_PER_ROW = ROWS / 4;
    const uint32_t ctile = base;
    const int g = lane >> 2, tq = lane & 3;
    cuops_named_bar_sync(1, 128 * CONS);
    if (threadIdx.x == 128) DSTAMP(p, DSTAMP_FREED);
#pragma unroll
    for (int j = 0; j < F4; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int r = 8 * j + 2 * tq + (e & 1);
            const int c = row_of(consumer * 64 + warp * 16 + g + 8 * (e >> 1));
            asm volatile("st.shared.f32 [%0], %1;" ::"r"(ctile + (uint32_t)((r * PITCH + c) * 4)),
                         "f"(acc[4 * j + e])
                         : "memory");
        }
    /* chunk i: C row i / CHUNKS_PER_ROW, columns 4 (i % CHUNKS_PER_ROW) + 0..3
     * of the block; rows past m are never stored */
    const int mrows = p.m < XN ? p.m : XN;
    const int chunks = mrows * CHUNKS_PER_ROW;
    const int ci = threadIdx.x - 128; /* 0 .. 128 * CONS - 1 */
    auto chunk_addr = [&](int i) {
        return ctile + (uint32_t)(((i / CHUNKS_PER_ROW) * PITCH + 4 * (i % CHUNKS_PER_ROW)) * 4);
    };
    char *cblock;
    int64_t ldc_bytes;
    const bool fast = sdw_fast_c(p, wb * ROWS, ROWS, 16, &cblock, &ldc_bytes);
    auto chunk_store = [&](int i, const float4 &v) {
        const int row = i / CHUNKS_PER_ROW, c4 = i % CHUNKS_PER_ROW;
        const int piece = p.c_type == CUOPS_DTYPE_F32 ? 16 : 8; /* bytes of 4 columns */
        if (fast)
            sdw_store4_fast(p.c_type, cblock + row * ldc_bytes + c4 * piece, p.alpha, v);
        else
            sdw_store4(p, row, wb * ROWS + 4 * c4, v);
    };
    if (p.splits == 1) {
        /* no partner (and no cluster launched) */
        cuops_named_bar_sync(1, 128 * CONS);
        if (threadIdx.x == 128) DSTAMP(p, DSTAMP_SYNCED);
        constexpr int NT = 128 * CONS; /* the storing threads */
        if (fast && p.c_type == CUOPS_DTYPE_F32)
            sdw_store_tile_fast<float, XN, ROWS, PITCH, NT>(ctile, mrows, cblock, ldc_bytes,
                                                           p.alpha, ci);
        else if (fast && p.c_type == CUOPS_DTYPE_F16)
            sdw_store_tile_fast<__half, XN, ROWS, PITCH, NT>(ctile, mrows, cblock, ldc_bytes,
                                                             p.alpha, ci);
        else if (fast)
            sdw_store_tile_fast<__nv_bfloat16, XN, ROWS, PITCH, NT>(ctile, mrows, cblock,
                                                                    ldc_bytes, p.alpha, ci);
        else
            for (int i = ci; i < chunks; i += 128 * CONS) chunk_store(i, cuops_ld_shared_f4(chunk_addr(i)));
        if (threadIdx.x == 128) DSTAMP(p, DSTAMP_END);
        return;
    }
    /* every rank's tile written; rank r sums chunks [r C / S, (r+1) C / S)
     * over the ranks in rank order (bitwise reproducible) and stores them;
     * this thread takes every (128 CONS)-th of them */
    cuops_cluster_sync();
    if (threadIdx.x == 128) DSTAMP(p, DSTAMP_SYNCED);
    const int i0 = split * chunks / p.splits, i1 = (split + 1) * chunks / p.splits;
    /* Only the 64-row kernels carry this path: auto splits 128-row blocks
     * only 4+ ways and 256-row ones never, so it would be dead code there
     * (with it compiled in, their unsplit m = 64 calls ran 0.5-1 us slower
     * in P163 / P164, but the 128-row row moves that much between runs of
     * identical code, P165: the cause is not established) */
    if (CONS == 1 && fast && p.splits == 2) {
        constexpr int NT = 128 * CONS; /* the storing threads */
        if (p.c_type == CUOPS_DTYPE_F32)
            sdw_pull2_store_fast<float, XN, ROWS, PITCH, NT>(ctile, i0, i1, ci, cblock,
                                                            ldc_bytes, p.alpha);
        else if (p.c_type == CUOPS_DTYPE_F16)
            sdw_pull2_store_fast<__half, XN, ROWS, PITCH, NT>(ctile, i0, i1, ci, cblock,
                                                              ldc_bytes, p.alpha);
        else
            sdw_pull2_store_fast<__nv_bfloat16, XN, ROWS, PITCH, NT>(ctile, i0, i1, ci, cblock,
                                                                     ldc_bytes, p.alpha);
    } else {
        const int mine = i1 - i0 > ci ? (i1 - i0 - ci + 128 * CONS - 1) / (128 * CONS) : 0;
        cuops_cluster_reduce_store_at(
            [&](int j) { return chunk_addr(i0 + ci + j * 128 * CONS); }, p.splits, 0, mine,
            [&](int j, const float4 &sum) { chunk_store(i0 + ci + j * 128 * CONS, sum); });
    }
    cuops_cluster_sync_relaxed();
    if (threadIdx.x == 128) DSTAMP(p, DSTAMP_END);
}

template <typename T, int XN, int CONS, bool WMN, bool XMN>
static __device__ __forceinline__ void sdw_cta(const CUtensorMap &tmap_w, const CUtensorMap &tmap_x,
                                               const CUtensorMap &tmap_x_last,
                                               const sdw_params_t &p)
{
    /* XMN: x stored [k, m] (trans_a = T), one box of 64 K-rows x XN columns
     * per stage read as an N-major B (swizzled as wide as its rows:
     * cuops_wgmma_desc_mn_box); the last k-block's box through tmap_x_last
     * (sdw_prepare says why) */
    constexpr int ACC = XN / 2;
    constexpr int STAGES = SDW_STAGES(XN, CONS);
    constexpr int ROWS = SDW_ROWS(CONS);
    constexpr uint32_t WBYTES = SDW_W_TILE_BYTES(CONS);
    constexpr uint32_t XBYTES = SDW_X_TILE_BYTES(XN);
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = cuops_smem_align1024(smem_raw);
    const uint32_t w_smem = base;                    /* STAGES x WBYTES */
    const uint32_t x_smem = w_smem + STAGES * WBYTES; /* STAGES x XBYTES */
    const uint32_t bars = x_smem + STAGES * XBYTES;
#define SDW_FULL_BAR(s) (bars + 8u * (uint32_t)(s))
#define SDW_EMPTY_BAR(s) (bars + 8u * (uint32_t)(STAGES + (s)))

    int split, wb, kb0, kb1;
    sdw_split_share(p, split, wb, kb0, kb1);

    const int warpgroup = threadIdx.x / 128;
    if (threadIdx.x == 0) DSTAMP(p, DSTAMP_ENTRY);
    if (threadIdx.x == 0) {
        /* the first TMA's descriptor fetch overlaps the barrier set-up */
        cuops_tma_prefetch_map(&tmap_w);
        cuops_tma_prefetch_map(&tmap_x);
        if (XMN) cuops_tma_prefetch_map(&tmap_x_last);
        sdw_init_ring_bars<STAGES>(bars, 128 * CONS);
    }
    __syncthreads();

    if (warpgroup == 0) {
        /* ---------------- producer ---------------- */
        if (CONS == 4) cuops_setmaxnreg_dec<SDW_PRODUCER_REGS>();
        if (threadIdx.x == 0) {
#ifdef CUOPS_STUDY_NO_X /* study build only: x loaded into the first round of stages, then
                         * reused (wrong results) */
            auto load_x = [&](int kb) { return kb - kb0 < STAGES; };
#else
            auto load_x = [&](int) { return true; };
#endif
            /* stage st's barrier expects k-block kb's bytes */
            auto expect = [&](int st, int kb) {
                cuops_mbar_arrive_expect_tx(SDW_FULL_BAR(st), WBYTES + (load_x(kb) ? XBYTES : 0u));
            };
            /* rows [64 c, 64 (c + 1)) of the block's weight tile of k-block kb
             * into stage st, where one ROWS-row box would put them (8 KB x c),
             * from a map of 64-row boxes (PAIRS64); c = 0 with the map's
             * ROWS-row boxes brings the whole tile */
            auto load_w = [&](int st, int kb, int c) {
                if (WMN)
                    cuops_tma_load_mn_boxes<CONS>(w_smem + st * WBYTES, &tmap_w,
                                                  SDW_FULL_BAR(st), wb * ROWS, kb * SDW_BK);
                else
                    cuops_tma_load_2d(w_smem + st * WBYTES + c * 8192u, &tmap_w,
                                      SDW_FULL_BAR(st), kb * SDW_BK, wb * ROWS + 64 * c);
            };
            auto load_xt = [&](int st, int kb) {
                if (!load_x(kb)) return;
                if (XMN)
                    cuops_tma_load_2d(x_smem + st * XBYTES,
                                      kb == p.kblocks - 1 ? &tmap_x_last : &tmap_x,
                                      SDW_FULL_BAR(st), 0, kb * SDW_BK);
                else
                    cuops_tma_load_2d(x_smem + st * XBYTES, &tmap_x, SDW_FULL_BAR(st),
                                      kb * SDW_BK, 0);
            };
            /* PAIRS64 cuts the tile into 64-row boxes (the host passes it for
             * a K-major weight only: the [k, n] weight arrives in CONS boxes) */
            const int pieces = p.issue == SDW_ISSUE_PAIRS64 ? CONS : 1;
            uint32_t phase = 0;
            int stage = 0;
            for (int kb = kb0; kb < kb1;) {
                /* SINGLE: one stage per step; PAIRS / PAIRS64: two (k-blocks kb
                 * and kb + 1) once both stages are free, but for a last odd one */
                const int n = p.issue != SDW_ISSUE_SINGLE && kb + 1 < kb1 ? 2 : 1;
                int st[2];
                sdw_claim_stages<STAGES>(SDW_EMPTY_BAR(0), n, st, stage, phase);
                for (int t = 0; t < n; t++) expect(st[t], kb + t);
                /* row group by row group, each group's k-blocks back to back */
                for (int c = 0; c < pieces; c++)
                    for (int t = 0; t < n; t++) load_w(st[t], kb + t, c);
                for (int t = 0; t < n; t++) load_xt(st[t], kb + t);
                kb += n;
            }
        }
        sdw_producer_cluster_barriers(p);
    } else {
        /* ---------------- consumers ---------------- */
        if (CONS == 4) cuops_setmaxnreg_inc<SDW_CONSUMER_REGS>();
        const int consumer = warpgroup - 1;
        const int ct = threadIdx.x - 128 * warpgroup;
        const int warp = ct / 32, lane = ct % 32;
        float acc[ACC];
        sdw_zero_acc(acc);
        int stage = 0, prev_stage = 0;
        uint32_t phase = 0;
#pragma unroll 1
        for (int kb = kb0; kb < kb1; kb++) {
            cuops_mbar_wait(SDW_FULL_BAR(stage), phase);
            if (threadIdx.x == 128 && kb == kb0) DSTAMP(p, DSTAMP_FIRST);
            if (threadIdx.x == 128 && kb == kb1 - 1) DSTAMP(p, DSTAMP_LAST);
            /* this consumer's 64 rows: 8 KB into the 1024-aligned tile (64
             * K-major rows of 128 bytes, or one M-major box) */
            const uint32_t w_addr = w_smem + stage * WBYTES + consumer * 64 * 128;
            const uint64_t desc_w =
                WMN ? cuops_wgmma_desc_mn_sw128(w_addr) : cuops_wgmma_desc_k_sw128(w_addr);
            constexpr uint64_t W_KSTEP = cuops_wgmma_k16_step<WMN>();
            const uint32_t x_addr = x_smem + stage * XBYTES;
            const uint64_t desc_x =
                XMN ? cuops_wgmma_desc_mn_box<XN>(x_addr) : cuops_wgmma_desc_k_sw128(x_addr);
            constexpr uint64_t X_KSTEP =
                XMN ? cuops_wgmma_k16_step_mn_box<XN>() : cuops_wgmma_k16_step<false>();
            sdw_wgmma_begin(acc);
#ifndef CUOPS_STUDY_NO_MMA /* study build only: the stream without its products (wrong results) */
#pragma unroll
            for (int j = 0; j < 4; j++)
                cuops_wgmma_m64nk16<XN, sdw_is_f16<T>::value, WMN ? 1 : 0, XMN ? 1 : 0>(
                    acc, desc_w + W_KSTEP * j, desc_x + X_KSTEP * j, 1);
#endif
            sdw_wgmma_commit_wait_prev(acc);
            prev_stage = sdw_release_prev<STAGES>(kb > kb0, bars, prev_stage, stage, phase);
        }
        sdw_wgmma_drain(acc);

        if (threadIdx.x == 128) DSTAMP(p, DSTAMP_DRAINED);
        sdw_epilogue<XN, CONS>(p, acc, base, wb, split, consumer, warp, lane,
                               [](int c) { return c; });
    }
#undef SDW_FULL_BAR
#undef SDW_EMPTY_BAR
}


/* ---- the shifted form: weight rows off 16 bytes (sm90_decode_shift) ----
 *
 * Why: a weight whose rows do not start on 16 bytes (odd k with ldb = k, an
 * ldb off 8 elements, a base off 16 bytes) cannot be read by TMA one row per
 * box: a box's innermost start must lie on 16 bytes, in every swizzle mode
 * (H100, P225: illegal instruction otherwise; docs/gemm.md). Such rows went
 * to the mma.sync realigning kernels (decode_realign_*), 0.7-1.3x cuBLAS.
 * Here TMA reads a superset of each row's k-block and the shift is undone on
 * the way into registers, with the weight as wgmma's A from registers.
 *
 * The map: rows of G consecutive weight rows, G = 8 / gcd(ldb, 8), so that
 * its row stride (G ldb 2 bytes) is a multiple of 16; based at the weight's
 * base rounded down to 16 bytes (woff elements before it). Weight row G i +
 * c starts at map element (woff + c ldb, i): the rows of one residue c all
 * share the shift s_c = (woff + c ldb) mod 8. Per 64-k block the producer
 * loads, for each c, one box of 72 elements x ROWS / G map rows from the
 * 16-byte boundary below the k-block's start (no swizzle): staging rows of
 * 144 bytes, tile row (ROWS / G) c + i holding weight row G i + c of the
 * block. A consumer thread reads each A register (two elements of one row)
 * as two aligned 4-byte words and a PRMT that takes the shift (s_c odd) or
 * the first word (s_c even); with 144-byte rows a warp's 32 reads of one
 * register fall in 32 banks. The last k-block's columns past k (the next row
 * of the map row, or what lies between rows) are masked in the registers.
 * x is K-major in place or packed (sdw_launch_rows' copy), read as wgmma's
 * B by TMA with the 128B swizzle. The split, the C tile and its stores are
 * the cluster form's (sdw_epilogue), tile row s written to weight row
 * G (s mod (ROWS / G)) + s / (ROWS / G). n % G == 0: a partial last group
 * would have TMA read past the weight's last row.
 */

/* The block's weight row of tile row s (rows in groups of G = p.wgroup). */
template <int ROWS>
static __device__ __forceinline__ int sds_weight_row(const sdw_params_t &p, int s)
{
    static_assert(ROWS == 64 || ROWS == 128 || ROWS == 256, "blocks of 64, 128 or 256 rows");
    const int per_log = (ROWS == 64 ? 6 : ROWS == 128 ? 7 : 8) - p.wlog; /* log2 (ROWS / G) */
    return ((s & ((1 << per_log) - 1)) << p.wlog) | (s >> per_log);
}

template <typename T, int XN, int CONS>
static __device__ __forceinline__ void sds_cta(const CUtensorMap &tmap_w, const CUtensorMap &tmap_x,
                                               const sdw_params_t &p)
{
    constexpr int ACC = XN / 2;
    constexpr int STAGES = SDS_STAGES(XN, CONS);
    constexpr int ROWS = SDW_ROWS(CONS);
    constexpr uint32_t WBYTES = SDS_W_STAGE_BYTES(CONS);
    constexpr uint32_t XBYTES = SDW_X_TILE_BYTES(XN);
    static_assert(STAGES >= 2, "a ring of two stages at least");
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = cuops_smem_align1024(smem_raw);
    const uint32_t x_smem = base;                     /* STAGES x XBYTES, each 1024-aligned */
    const uint32_t w_smem = x_smem + STAGES * XBYTES; /* STAGES x WBYTES of staging rows */
    const uint32_t bars = w_smem + STAGES * WBYTES;
#define SDS_FULL_BAR(s) (bars + 8u * (uint32_t)(s))
#define SDS_EMPTY_BAR(s) (bars + 8u * (uint32_t)(STAGES + (s)))

    int split, wb, kb0, kb1;
    sdw_split_share(p, split, wb, kb0, kb1);
    const int per = ROWS >> p.wlog; /* map rows (tile rows) per residue */

    const int warpgroup = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        cuops_tma_prefetch_map(&tmap_w);
        cuops_tma_prefetch_map(&tmap_x);
        sdw_init_ring_bars<STAGES>(bars, 128 * CONS);
    }
    __syncthreads();

    if (warpgroup == 0) {
        /* ---------------- producer ---------------- */
        if (CONS == 4) cuops_setmaxnreg_dec<SDW_PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            uint32_t phase = 0;
            int stage = 0;
            for (int kb = kb0; kb < kb1; kb++) {
                cuops_mbar_wait(SDS_EMPTY_BAR(stage), phase ^ 1u);
                cuops_mbar_arrive_expect_tx(SDS_FULL_BAR(stage), WBYTES + XBYTES);
                for (int c = 0; c < p.wgroup; c++)
                    cuops_tma_load_2d(w_smem + stage * WBYTES + (uint32_t)(c * per) * SDS_SROW_BYTES,
                                      &tmap_w, SDS_FULL_BAR(stage),
                                      ((p.woff + c * p.wld) & ~7) + kb * SDW_BK, wb * per);
                cuops_tma_load_2d(x_smem + stage * XBYTES, &tmap_x, SDS_FULL_BAR(stage),
                                  kb * SDW_BK, 0);
                cuops_ring_advance<STAGES>(stage, phase);
            }
        }
        sdw_producer_cluster_barriers(p);
    } else {
        /* ---------------- consumers ---------------- */
        if (CONS == 4) cuops_setmaxnreg_inc<SDW_CONSUMER_REGS>();
        const int consumer = warpgroup - 1;
        const int ct = threadIdx.x - 128 * warpgroup;
        const int warp = ct / 32, lane = ct % 32;
        const int g = lane >> 2, tq = lane & 3;
        /* tile rows g and g + 8 of the warp's 16: each a staging row, the
         * word at or below its shift, and the PRMT that takes the shift */
        uint32_t lane_off[2], sel[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = consumer * 64 + warp * 16 + g + 8 * h;
            const int shift = (p.woff + (row / per) * p.wld) & 7;
            lane_off[h] = (uint32_t)(row * SDS_SROW_BYTES + (shift & ~1) * 2 + 4 * tq);
            sel[h] = shift & 1 ? 0x5432u : 0x3210u;
        }
        float acc[ACC];
        sdw_zero_acc(acc);
        uint32_t a_even[4][4], a_odd[4][4];
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) a_even[j][r] = a_odd[j][r] = 0u;
        int stage = 0, prev_stage = 0;
        uint32_t phase = 0;

        /* k-block kb of this CTA's range: its A registers from the staging
         * rows (register q of step j: row g + 8 (q & 1), columns 16 j + 8
         * (q >> 1) + 2 tq and + 1), its four wgmma, then the previous block's
         * group retired and its stage released */
        auto block = [&](int kb, uint32_t (&a)[4][4], uint32_t (&other)[4][4]) {
            cuops_mbar_wait(SDS_FULL_BAR(stage), phase);
            const uint32_t sb = w_smem + stage * WBYTES;
            const int kr = kb == p.kblocks - 1 ? p.wtail : 0; /* columns past k to mask */
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const uint32_t addr = sb + lane_off[q & 1] + (uint32_t)(32 * j + 16 * (q >> 1));
                    uint32_t w0, w1;
                    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(w0) : "r"(addr));
                    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(w1) : "r"(addr + 4u));
                    uint32_t v = __byte_perm(w0, w1, sel[q & 1]);
                    if (kr != 0) {
                        const int col = 16 * j + 8 * (q >> 1) + 2 * tq;
                        v = col >= kr ? 0u : col + 1 >= kr ? (v & 0xffffu) : v;
                    }
                    a[j][q] = v;
                }
            const uint64_t desc_x = cuops_wgmma_desc_k_sw128(x_smem + stage * XBYTES);
            sdw_wgmma_begin(acc);
#pragma unroll
            for (int j = 0; j < 4; j++)
                cuops_wgmma_m64nk16<XN, sdw_is_f16<T>::value>(acc, a[j], desc_x + 2 * j, 1);
            sdw_wgmma_commit_wait_prev(acc);
            cuops_keep_alive_set(other);
            prev_stage = sdw_release_prev<STAGES>(kb > kb0, bars, prev_stage, stage, phase);
        };
        /* two blocks a turn, so that each block's A set is known at compile time */
        int kb = kb0;
#pragma unroll 1
        for (; kb + 1 < kb1; kb += 2) {
            block(kb, a_even, a_odd);
            block(kb + 1, a_odd, a_even);
        }
        if (kb < kb1) block(kb, a_even, a_odd);
        sdw_wgmma_drain(acc);
        cuops_keep_alive_set(a_even);
        cuops_keep_alive_set(a_odd);
        sdw_epilogue<XN, CONS>(p, acc, base, wb, split, consumer, warp, lane,
                               [&](int c) { return sds_weight_row<ROWS>(p, c); });
    }
#undef SDS_FULL_BAR
#undef SDS_EMPTY_BAR
}

/* ---- the narrow form: x as the wgmma A, NW weight rows per tile, all of K ----
 *
 * Why: the 256-row blocks above need K split over a cluster wherever the
 * blocks alone do not fill the SMs (4096 rows: 16 blocks, S = 8), and the
 * split costs ~2.4 us per call (H200, 5013a4d: 128 CTAs of one 64-k block
 * each took 9.15 us with S = 8 against 6.75 us for 132 unsplit CTAs). With
 * the weight as the wgmma B operand a tile can be any multiple of 8 rows up
 * to 256 (N = NW) and x the 64-row A (rows past m are zeros), so n rows are
 * cut into about one tile per SM that each run the whole K: no split, no
 * cluster, no reduction. NW is chosen by n (gemm_tuning.h): 32 rows at
 * n = 4096, 112 at 14336, 224 at 28672 on 132 SMs (128 tiles each). The
 * cost: x is re-read per tile (XN / NW of the weight bytes from L2) and the
 * tensor cores multiply 64 rows of x whatever m is (at m = 1, 64 * 32 * 16 *
 * 2 FLOP per 1 KB of weight, a fifth of the wgmma rate at copy speed).
 *
 * CTA: 160 threads, persistent: tiles blockIdx.x, + gridDim.x, ... Warp 4
 * issues per 64-k block the TMA of the NW x 64 weight tile and of the XN x
 * 64 x tile into the first XN rows of a 64-row A buffer; warps 0-3 (one
 * warpgroup) zero rows XN..63 of every A buffer once, then per block issue
 * the wgmma of four k16 steps (each m64nNWk16 as up to six instructions of
 * N = 64, 32, 16, 8 over consecutive weight rows: one accumulator array,
 * the m64nNW fragment), commit, wait for the previous block's group and
 * release its stage; at a tile's last block they wait for the group and
 * store C from the registers while the producer already streams the next
 * tile. SDN_STAGES(NW) stages: 14 x 12 KB at NW = 32 (56 KB of weight in
 * flight per SM), 9 x 22 KB at 112 (126 KB), 5 x 36 KB at 224 (140 KB).
 */

/* The fast form of sdn_store_frag (beta = 0, the tile inside n, C's rows
 * and base aligned to two elements, all checked by the caller): each pair of
 * adjacent columns in one 4-byte (16-bit C, T = __half / __nv_bfloat16)
 * or 8-byte (fp32, T = float) store from the tile's base, unrolled, the
 * row < m mask the only condition (the general form's per-element type and
 * beta switches made a dependent chain: docs/gemm.md decode step 10). */
template <typename T, int NW>
static __device__ __forceinline__ void sdn_store_frag_fast(char *block, int64_t ldc_bytes, int m,
                                                           float alpha, int warp, int lane,
                                                           const float (&acc)[NW / 2])
{
    constexpr bool F32 = std::is_same<T, float>::value;
    constexpr int ES = F32 ? 4 : 2;
    const int row = 16 * warp + (lane >> 2);
    char *base = block + row * ldc_bytes + 2 * (lane & 3) * ES;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        if (row + 8 * h >= m) continue;
#pragma unroll
        for (int j = 0; j < NW / 8; j++) {
            char *dst = base + 8 * h * ldc_bytes + 8 * j * ES;
            const float a = alpha * acc[4 * j + 2 * h], b = alpha * acc[4 * j + 2 * h + 1];
            if constexpr (F32)
                sdw_st_global_8(dst, __float_as_uint(a), __float_as_uint(b));
            else
                sdw_st_global_4(dst, cuops_pack2<T>(a, b));
        }
    }
}

/* C from a thread's m64nNW fragment: x rows 16w + l/4 (+8), weight rows
 * NW * tile + 8j + 2(l%4) (+1), masked at m and n. */
template <int NW>
static __device__ __forceinline__ void sdn_store_frag(const sdw_params_t &p, int tile, int warp,
                                                      int lane, const float (&acc)[NW / 2])
{
    char *block;
    int64_t ldc_bytes;
    const int pair_bytes = p.c_type == CUOPS_DTYPE_F32 ? 8 : 4; /* one store per column pair */
    if (sdw_fast_c(p, tile * NW, NW, pair_bytes, &block, &ldc_bytes)) {
        if (p.c_type == CUOPS_DTYPE_F32)
            sdn_store_frag_fast<float, NW>(block, ldc_bytes, p.m, p.alpha, warp, lane, acc);
        else if (p.c_type == CUOPS_DTYPE_F16)
            sdn_store_frag_fast<__half, NW>(block, ldc_bytes, p.m, p.alpha, warp, lane, acc);
        else
            sdn_store_frag_fast<__nv_bfloat16, NW>(block, ldc_bytes, p.m, p.alpha, warp, lane, acc);
        return;
    }
    const int row = 16 * warp + (lane >> 2);
    const int col = tile * NW + 2 * (lane & 3);
    if (row >= p.m) return;
#pragma unroll
    for (int e = 0; e < NW / 2; e++) {
        const int r = row + 8 * ((e >> 1) & 1), cc = col + 8 * (e >> 2) + (e & 1);
        if (r < p.m && cc < p.n) sdw_store(p, r, cc, acc[e]);
    }
}

/* One k16 step of x (A, 64 rows) times weight rows [OFF, NW) of the tile
 * (B): the widest of N = 64, 32, 16, 8 that fits, then the rest. Weight row
 * OFF starts OFF * 128 bytes into the 1024-aligned swizzled tile (OFF is a
 * multiple of 8, so a whole swizzle atom), and its accumulators are
 * acc[OFF / 2 ..]: the sub-fragments tile the m64nNW fragment. */
template <int NW, int OFF, bool F16>
static __device__ __forceinline__ void sdn_wgmma_k16(float (&acc)[NW / 2], uint64_t desc_x,
                                                     uint64_t desc_w, int accumulate)
{
    if constexpr (OFF < NW) {
        constexpr int REM = NW - OFF;
        constexpr int N = REM >= 64 ? 64 : REM >= 32 ? 32 : REM >= 16 ? 16 : 8;
        cuops_wgmma_m64nk16<N, F16>(*reinterpret_cast<float(*)[N / 2]>(&acc[OFF / 2]), desc_x,
                                    desc_w + (uint64_t)((OFF * 128) >> 4), accumulate);
        sdn_wgmma_k16<NW, OFF + N, F16>(acc, desc_x, desc_w, accumulate);
    }
}

template <typename T, int NW>
static __device__ __forceinline__ void sdn_cta(const CUtensorMap &tmap_w, const CUtensorMap &tmap_x,
                                               const sdw_params_t &p, int xn)
{
    constexpr bool f16 = sdw_is_f16<T>::value;
    constexpr int STAGES = SDN_STAGES(NW);
    constexpr uint32_t WBYTES = SDN_W_TILE_BYTES(NW);
    constexpr int ACC = NW / 2;
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = cuops_smem_align1024(smem_raw);
    const uint32_t x_smem = base;                              /* STAGES x 8 KB */
    const uint32_t w_smem = x_smem + STAGES * SDN_X_TILE_BYTES; /* STAGES x WBYTES */
    const uint32_t bars = w_smem + STAGES * WBYTES;
#define SDN_FULL_BAR(s) (bars + 8u * (uint32_t)(s))
#define SDN_EMPTY_BAR(s) (bars + 8u * (uint32_t)(STAGES + (s)))
    const uint32_t xbytes = (uint32_t)xn * SDW_BK * 2;

    if (threadIdx.x == 0) DSTAMP(p, DSTAMP_ENTRY);
    if (threadIdx.x == 128) {
        cuops_tma_prefetch_map(&tmap_w);
        cuops_tma_prefetch_map(&tmap_x);
        sdw_init_ring_bars<STAGES>(bars, 128);
    }
    __syncthreads();

    if (threadIdx.x >= 128) {
        /* ---------------- producer (warp 4) ---------------- */
        if (threadIdx.x == 128) {
            uint32_t phase = 0;
            int stage = 0;
            for (int tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
                for (int kb = 0; kb < p.kblocks;) {
                    /* SINGLE: a stage per step; PAIRS: the tile's k-blocks kb
                     * and kb + 1 back to back once both stages are free (as the
                     * cluster form's SDW_ISSUE_PAIRS), but for a last odd one */
                    const int n = p.issue != SDW_ISSUE_SINGLE && kb + 1 < p.kblocks ? 2 : 1;
                    int st[2];
                    sdw_claim_stages<STAGES>(SDN_EMPTY_BAR(0), n, st, stage, phase);
                    for (int t = 0; t < n; t++)
                        cuops_mbar_arrive_expect_tx(SDN_FULL_BAR(st[t]), WBYTES + xbytes);
                    for (int t = 0; t < n; t++)
                        cuops_tma_load_2d(w_smem + st[t] * WBYTES, &tmap_w, SDN_FULL_BAR(st[t]),
                                          (kb + t) * SDW_BK, tile * NW);
                    for (int t = 0; t < n; t++)
                        cuops_tma_load_2d(x_smem + st[t] * SDN_X_TILE_BYTES, &tmap_x,
                                          SDN_FULL_BAR(st[t]), (kb + t) * SDW_BK, 0);
                    kb += n;
                }
            }
        }
        return;
    }

    /* ---------------- consumers (warpgroup 0) ---------------- */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    /* rows xn..63 of every A buffer are zeros for the whole kernel (the
     * TMA writes rows 0..xn-1 only); the zeros reach the tensor cores
     * through the async proxy */
    {
        const uint32_t row_bytes = (uint32_t)(64 - xn) * 128u;
        for (int s = 0; s < STAGES; s++)
            for (uint32_t o = threadIdx.x * 16u; o < row_bytes; o += 128u * 16u)
                cuops_st_shared_f4(x_smem + s * SDN_X_TILE_BYTES + xbytes + o, 0.0f, 0.0f, 0.0f,
                                   0.0f);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        cuops_named_bar_sync(1, 128);
    }
    float acc[ACC];
    sdw_zero_acc(acc);
    int stage = 0, prev_stage = 0;
    uint32_t phase = 0;
    bool first = true;
#pragma unroll 1
    for (int tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
#pragma unroll 1
        for (int kb = 0; kb < p.kblocks; kb++) {
            cuops_mbar_wait(SDN_FULL_BAR(stage), phase);
            if (threadIdx.x == 0 && first) DSTAMP(p, DSTAMP_FIRST);
            if (threadIdx.x == 0 && kb == p.kblocks - 1 && tile + (int)gridDim.x >= p.tiles)
                DSTAMP(p, DSTAMP_LAST);
            const uint64_t desc_x = cuops_wgmma_desc_k_sw128(x_smem + stage * SDN_X_TILE_BYTES);
            const uint64_t desc_w = cuops_wgmma_desc_k_sw128(w_smem + stage * WBYTES);
            sdw_wgmma_begin(acc);
            /* a tile's first block overwrites the accumulators (scale-d 0) */
#pragma unroll
            for (int j = 0; j < 4; j++)
                sdn_wgmma_k16<NW, 0, f16>(acc, desc_x + 2 * j, desc_w + 2 * j, kb > 0 || j > 0);
            sdw_wgmma_commit_wait_prev(acc);
            prev_stage = sdw_release_prev<STAGES>(!first, bars, prev_stage, stage, phase);
            first = false;
        }
        sdw_wgmma_drain(acc);
        sdn_store_frag<NW>(p, tile, warp, lane, acc);
    }
    cuops_wgmma_wait<0>();
    if (threadIdx.x == 0) DSTAMP(p, DSTAMP_END);
#undef SDN_FULL_BAR
#undef SDN_EMPTY_BAR
}

#endif /* CUOPS_SM90A_DEVICE */

template <typename T, int XN, int CONS, bool WMN = false, bool XMN = false>
__global__ void __launch_bounds__(SDW_THREADS(CONS), 1)
sm90_decode_wgmma_kernel(const __grid_constant__ CUtensorMap tmap_w,
                         const __grid_constant__ CUtensorMap tmap_x,
                         const __grid_constant__ CUtensorMap tmap_x_last, const sdw_params_t p)
{
#if CUOPS_SM90A_DEVICE
    sdw_cta<T, XN, CONS, WMN, XMN>(tmap_w, tmap_x, tmap_x_last, p);
#endif
}

template <typename T, int XN, int CONS>
__global__ void __launch_bounds__(SDW_THREADS(CONS), 1)
sm90_decode_shift_kernel(const __grid_constant__ CUtensorMap tmap_w,
                         const __grid_constant__ CUtensorMap tmap_x, const sdw_params_t p)
{
#if CUOPS_SM90A_DEVICE
    sds_cta<T, XN, CONS>(tmap_w, tmap_x, p);
#endif
}

template <typename T, int NW>
__global__ void __launch_bounds__(SDN_THREADS, 1)
sm90_decode_narrow_kernel(const __grid_constant__ CUtensorMap tmap_w,
                          const __grid_constant__ CUtensorMap tmap_x, const sdw_params_t p, int xn)
{
#if CUOPS_SM90A_DEVICE
    sdn_cta<T, NW>(tmap_w, tmap_x, p, xn);
#endif
}

/* ---- host ------------------------------------------------------------------- */

typedef void (*sdw_kernel_fn)(const CUtensorMap, const CUtensorMap, const CUtensorMap,
                              const sdw_params_t);

template <int CONS, bool WMN, bool XMN = false>
static sdw_kernel_fn sdw_pick_cons(cuops_dtype_t ab, int xn)
{
    const int bf = ab == CUOPS_DTYPE_BF16;
    switch (xn) {
    case 8: return bf ? sm90_decode_wgmma_kernel<__nv_bfloat16, 8, CONS, WMN, XMN> : sm90_decode_wgmma_kernel<__half, 8, CONS, WMN, XMN>;
    case 16: return bf ? sm90_decode_wgmma_kernel<__nv_bfloat16, 16, CONS, WMN, XMN> : sm90_decode_wgmma_kernel<__half, 16, CONS, WMN, XMN>;
    case 32: return bf ? sm90_decode_wgmma_kernel<__nv_bfloat16, 32, CONS, WMN, XMN> : sm90_decode_wgmma_kernel<__half, 32, CONS, WMN, XMN>;
    default: return bf ? sm90_decode_wgmma_kernel<__nv_bfloat16, 64, CONS, WMN, XMN> : sm90_decode_wgmma_kernel<__half, 64, CONS, WMN, XMN>;
    }
}

/* One layout's instance by consumer warpgroups */
template <bool WMN, bool XMN>
static sdw_kernel_fn sdw_pick_layout(cuops_dtype_t ab, int xn, int cons)
{
    return cons == 1   ? sdw_pick_cons<1, WMN, XMN>(ab, xn)
           : cons == 2 ? sdw_pick_cons<2, WMN, XMN>(ab, xn)
                       : sdw_pick_cons<4, WMN, XMN>(ab, xn);
}

/* wmn: the weight stored [k, n] (trans_b = N); xmn: x stored [k, m]
 * (trans_a = T) */
static sdw_kernel_fn sdw_pick(cuops_dtype_t ab, int xn, int cons, int wmn = 0, int xmn = 0)
{
    if (xmn)
        return wmn ? sdw_pick_layout<true, true>(ab, xn, cons)
                   : sdw_pick_layout<false, true>(ab, xn, cons);
    return wmn ? sdw_pick_layout<true, false>(ab, xn, cons)
               : sdw_pick_layout<false, false>(ab, xn, cons);
}

template <int CONS> static int sdw_smem_bytes_cons(int xn)
{
    switch (xn) {
    case 8: return SDW_SMEM_BYTES(8, CONS);
    case 16: return SDW_SMEM_BYTES(16, CONS);
    case 32: return SDW_SMEM_BYTES(32, CONS);
    default: return SDW_SMEM_BYTES(64, CONS);
    }
}

static int sdw_smem_bytes(int xn, int cons)
{
    return cons == 1 ? sdw_smem_bytes_cons<1>(xn)
           : cons == 2 ? sdw_smem_bytes_cons<2>(xn)
                       : sdw_smem_bytes_cons<4>(xn);
}

/* x that TMA cannot read in place (a base off 16 bytes, lda % 8 != 0) is
 * packed K-major into the workspace first (cuops_sm90_pack_kmajor, the copy
 * decode_realign_m16-m64 make): possible unless an operand lives in the
 * workspace or a user workspace is too small for the copy. */
static int sdw_x_packable(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    if (cuops_cuda_gemm_operands_in_workspace(h, d)) return 0;
    return !h->user_workspace ||
           h->user_workspace_bytes >= cuops_sm90_packed_bytes(d->m, d->k) + 256;
}

/* Resident clusters of `size` CTAs of a kernel of form `form` (0: the
 * cluster form, 1: the shifted form) for XN, CONS on device `dev`, asked
 * once through `fn` with `smem` bytes (cached; f16 and bf16 instances use
 * the same resources). */
static int sdw_resident_clusters(int form, int dev, int xn, int cons, int size, const void *fn,
                                 int smem)
{
    static int cache[2][16][3][4][CUOPS_CLUSTER_MAX_SPLITS + 1];
    const int xi = xn == 8 ? 0 : xn == 16 ? 1 : xn == 32 ? 2 : 3;
    if (form < 0 || form > 1 || dev < 0 || dev >= 16 || size < 1 ||
        size > CUOPS_CLUSTER_MAX_SPLITS)
        return -1;
    int *slot = &cache[form][dev][cons == 1 ? 0 : cons == 2 ? 1 : 2][xi][size];
    if (__atomic_load_n(slot, __ATOMIC_RELAXED) == 0)
        __atomic_store_n(slot, cuops_cluster_max_active(fn, SDW_THREADS(cons), size, smem),
                         __ATOMIC_RELAXED);
    return __atomic_load_n(slot, __ATOMIC_RELAXED);
}

static int sdw_max_clusters(int dev, int xn, int cons, int size)
{
    return sdw_resident_clusters(0, dev, xn, cons, size,
                                 (const void *)sdw_pick(CUOPS_DTYPE_F16, xn, cons),
                                 sdw_smem_bytes(xn, cons));
}

/* x that TMA cannot read (or, with kmajor, x stored [k, m]) packed K-major
 * into the workspace: *d then points at `packed`, the call as NT on the copy.
 * NOT_SUPPORTED where sdw_x_packable says no. */
static cuops_status_t sdw_pack_x(struct cuops_handle *h, const cuops_gemm_desc_t **d,
                                 cuops_gemm_desc_t *packed, int kmajor, const char *name)
{
    const cuops_gemm_desc_t *c = *d;
    if (cuops_sm90_tma_ok(c->a, c->lda) && (!kmajor || c->trans_a == CUOPS_OP_N))
        return CUOPS_STATUS_SUCCESS;
    if (!sdw_x_packable(h, c))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: x (lda %lld) needs a packed copy and the workspace cannot hold it",
                          name, (long long)c->lda);
    void *ws = NULL;
    cuops_status_t st = cuops_cuda_workspace_aligned(h, cuops_sm90_packed_bytes(c->m, c->k), 256, &ws);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    const int64_t ld = cuops_sm90_packed_ld(c->k);
    st = cuops_sm90_pack_kmajor(h, c->a, c->lda, c->trans_a == CUOPS_OP_N, c->m, c->k, ws, ld);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    *packed = *c;
    packed->a = ws;
    packed->lda = ld;
    packed->trans_a = CUOPS_OP_N;
    *d = packed;
    return CUOPS_STATUS_SUCCESS;
}

/* The split of `blocks` weight blocks over a cluster: as many as fill the
 * SMs once (one CTA each), at most 8 and one per 64-k block; auto: every
 * cluster resident at once (max_clusters(s)), forced: one fits. */
template <typename MaxClusters>
static int64_t sdw_plan_splits(int64_t blocks, int sms, int kblocks, int64_t forced,
                               MaxClusters max_clusters)
{
    int64_t s = forced > 0 ? forced : (blocks < sms ? sms / blocks : 1);
    if (s > CUOPS_CLUSTER_MAX_SPLITS) s = CUOPS_CLUSTER_MAX_SPLITS;
    if (s > kblocks) s = kblocks;
    if (s < 1) s = 1;
    while (s > 1 && (forced > 0 ? 1 : blocks) > max_clusters((int)s)) s--;
    return s;
}


/* What every form asks of the call but its operands' alignment. */
static int sdw_supports_call(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    if (h->sm_major != 9) return 0;
    /* every instance's ring fits (the largest: 64-row blocks at XN = 64,
     * 14 stages of 16 KB + their barriers + the alignment slack) */
    for (int cons = 1; cons <= 4; cons *= 2)
        for (int xn = 8; xn <= 64; xn *= 2)
            if (h->smem_optin_bytes < sdw_smem_bytes(xn, cons)) return 0;
    if (d->ab_type != CUOPS_DTYPE_F16 && d->ab_type != CUOPS_DTYPE_BF16) return 0;
    if (d->c_type != CUOPS_DTYPE_F16 && d->c_type != CUOPS_DTYPE_BF16 &&
        d->c_type != CUOPS_DTYPE_F32)
        return 0;
    /* the weight stored [n, k] (trans_b = T) or [k, n] (trans_b = N), x
     * stored [m, k] (trans_a = N) or [k, m] (trans_a = T); the transposed
     * layouts in the cluster form only (sdn_supports) */
    if (d->m < 1 || d->m > 64 || d->n < 1 || d->k < 1) return 0;
    if (d->k > 0x7fffff00 || d->n > 0x7fffff00) return 0;
    return cuops_aligned(d->c, cuops_dtype_size(d->c_type));
}

/* The cluster form: the weight in place, x in place or packed. */
static int sdw_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    return sdw_supports_call(h, d) && cuops_sm90_tma_ok(d->b, d->ldb) &&
           (cuops_sm90_tma_ok(d->a, d->lda) || sdw_x_packable(h, d));
}

/* The parameters every form takes from the call; the form's own (splits,
 * tiles, issue, the shifted form's map) zero. */
static void sdw_params_init(const cuops_gemm_desc_t *d, sdw_params_t *p)
{
    memset(p, 0, sizeof *p);
    p->c = d->c;
    p->ldc = d->ldc;
    p->alpha = d->alpha;
    p->beta = d->beta;
    p->c_type = (int)d->c_type;
    p->m = (int)d->m;
    p->n = (int)d->n;
    p->kblocks = (int)cuops_ceil_div(d->k, SDW_BK);
}

/* fn's grid of blocks x s CTAs of `threads` with `smem` bytes of dynamic
 * shared memory: a plain launch at s = 1 (the kernel takes no cluster step
 * then), else clusters of s along x. The plain launch's errors are left
 * to cuops_cuda_check_launch. */
template <typename... Args>
static cuops_status_t sdw_launch_split(struct cuops_handle *h, void (*fn)(Args...), int64_t blocks,
                                       int64_t s, int threads, int smem, Args... args)
{
    CUOPS_CUDA_TRY(h, cudaFuncSetAttribute((const void *)fn,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    if (s == 1) {
        fn<<<(unsigned)blocks, threads, smem, cuops_stream(h)>>>(args...);
    } else {
        cudaLaunchConfig_t cfg;
        cudaLaunchAttribute attr;
        cuops_cluster_launch_config(&cfg, &attr, (int)(blocks * s), threads, (int)s, smem,
                                    cuops_stream(h));
        CUOPS_CUDA_TRY(h, cudaLaunchKernelEx(&cfg, fn, args...));
    }
    return CUOPS_STATUS_SUCCESS;
}

/* What both forms set up alike: the weight's tensor map in boxes of
 * `w_rows` rows, x's in boxes of XN rows (x stored [k, m]: tmap_x for every
 * k-block but the last, tmap_x_last for the last; the narrow form, NT only,
 * passes NULL), and the parameters but the form's own (splits, tiles). */
static cuops_status_t sdw_prepare(struct cuops_handle *h, const cuops_gemm_desc_t *d, int xn,
                                  uint32_t w_rows, CUtensorMap *tmap_w, CUtensorMap *tmap_x,
                                  CUtensorMap *tmap_x_last, sdw_params_t *p)
{
    /* the weight stored [k, n] (trans_b = N; the cluster form, the narrow
     * form takes NT only): boxes of 64 K-rows x 64 rows; stored [n, k]: boxes
     * of 64 k x w_rows rows. Both without the 256-byte L2 promotion that the
     * GEMM tiles use: each weight line is read once here, and with it the
     * stream ran slower on the H200 (P202, docs/gemm.md): NN 6-7 % (1 x 28672
     * x 8192 118.1-118.7 against 111.2-111.4 us; P201's profile: the same
     * DRAM work spread over more time), NT 2-4 % (113.1-113.2 against
     * 110.7-110.8 us) */
    cuops_status_t st =
        d->trans_b == CUOPS_OP_N
            ? cuops_sm90_encode_mnmajor(h, tmap_w, d->b, d->ab_type, d->n, d->k, d->ldb, 64, 0)
            : cuops_sm90_encode_kmajor_l2(h, tmap_w, d->b, d->ab_type, d->n, d->k, d->ldb, w_rows,
                                          0);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (d->trans_a == CUOPS_OP_T) {
        /* x stored [k, m] (the cluster form): boxes of 64 K-rows x xn
         * columns. A map m columns wide has TMA zero-fill the columns past m,
         * which cost the call up to 30 % (40 x 4096 x 4096 TN with lda 64:
         * 21.3 us, 15.0 with the box read whole; docs/gemm.md, P202). So every
         * k-block but the last reads the columns cuops_decode_x_read_cols
         * allows (the whole box, gemm_tuning.h says when and why it stays in
         * the caller's x): the products of the columns past m land in rows
         * >= m of the tile, never stored. The last k-block reads through a map
         * m columns wide; so does every k-block where a driver refuses the
         * wide map (rows that overlap, where lda < xn). */
        const int64_t cols = cuops_decode_x_read_cols(d->m, d->lda);
        CUtensorMap *exact = tmap_x_last ? tmap_x_last : tmap_x;
        st = cuops_sm90_encode_mnmajor_box(h, exact, d->a, d->ab_type, d->m, d->k, d->lda,
                                           (uint32_t)xn);
        if (st != CUOPS_STATUS_SUCCESS || !tmap_x_last) return st;
        if (cols == d->m ||
            cuops_sm90_encode_mnmajor_box_try(h, tmap_x, d->a, d->ab_type, cols, d->k, d->lda,
                                              (uint32_t)xn) != CUOPS_STATUS_SUCCESS)
            *tmap_x = *tmap_x_last;
    } else {
        /* x stored [m, k]: boxes of xn rows x 64 k, the rows past m zero-filled */
        st = cuops_sm90_encode_kmajor(h, tmap_x, d->a, d->ab_type, d->m, d->k, d->lda,
                                      (uint32_t)xn);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        if (tmap_x_last) *tmap_x_last = *tmap_x;
    }
    sdw_params_init(d, p);
    return CUOPS_STATUS_SUCCESS;
}

/* `rows_forced`: 0 lets n and k choose the block height
 * (cuops_decode_wgmma_block_rows; a forced split keeps 256 rows), 128 or 64
 * takes blocks of that height whatever n and split (the
 * "sm90_decode_wgmma128" / "_wgmma64" variants). */
static cuops_status_t sdw_launch_rows(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                      const cuops_options_t *opt, int rows_forced, int issue,
                                      const char *name)
{
    const int xn = cuops_decode_x_box_cols(d->m); /* x stored [k, m] alike: boxes of 64 K-rows x xn */
    const int sms = h->num_sms > 0 ? h->num_sms : 132;
    const int64_t forced = opt && opt->split_k > 0 ? opt->split_k : 0;
    /* block rows by n and k (gemm_tuning.h); a forced split keeps 256 */
    const int rows = rows_forced > 0  ? rows_forced
                     : forced > 0     ? SDW_ROWS(4)
                                      : cuops_decode_wgmma_block_rows(d->n, d->k, sms);
    const int cons = rows / 64;
    const int smem = sdw_smem_bytes(xn, cons);
    CUtensorMap tmap_w, tmap_x, tmap_x_last;
    sdw_params_t p;
    if (issue == SDW_ISSUE_AUTO)
        issue = cons >= 2 && d->trans_b == CUOPS_OP_T ? SDW_ISSUE_PAIRS64 : SDW_ISSUE_SINGLE;
    /* the [k, n] weight's k-block comes as CONS 64-column boxes already:
     * paired, it issues whole k-blocks */
    if (issue == SDW_ISSUE_PAIRS64 && d->trans_b == CUOPS_OP_N) issue = SDW_ISSUE_PAIRS;
    /* PAIRS64 reads the (K-major) weight in 64-row boxes */
    const int box_rows = issue == SDW_ISSUE_PAIRS64 ? 64 : rows;
    /* x that TMA cannot read: packed K-major into the workspace, and the
     * call goes on as NT on the copy (x [k, m] alike) */
    cuops_gemm_desc_t packed;
    cuops_status_t st = sdw_pack_x(h, &d, &packed, 0, name);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = sdw_prepare(h, d, xn, (uint32_t)box_rows, &tmap_w, &tmap_x, &tmap_x_last, &p);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    p.issue = issue;

    const int64_t blocks = cuops_ceil_div(d->n, rows);
    const int64_t s = sdw_plan_splits(blocks, sms, p.kblocks, forced, [&](int size) {
        return sdw_max_clusters(h->device, xn, cons, size);
    });
    if (blocks * s > 0x7fffffff)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "%s: n %lld too large", name,
                          (long long)d->n);
    p.splits = (int)s;
#ifdef CUOPS_DECODE_STAMPS
    p.stamps = dstamp_buffer((int)(blocks * s));
#endif

    sdw_kernel_fn fn =
        sdw_pick(d->ab_type, xn, cons, d->trans_b == CUOPS_OP_N, d->trans_a == CUOPS_OP_T);
    st = sdw_launch_split(h, fn, blocks, s, SDW_THREADS(cons), smem, tmap_w, tmap_x, tmap_x_last,
                          p);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = cuops_cuda_check_launch(h, name);
    if (st != CUOPS_STATUS_SUCCESS) return st;
#ifdef CUOPS_DECODE_STAMPS
    dstamp_report(cuops_stream(h), p.stamps, (int)(blocks * s), name, (long long)d->m,
                  (long long)d->n, (long long)d->k);
#endif
    h->last_kernel = name;
    return CUOPS_STATUS_SUCCESS;
}

static cuops_status_t sdw_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                 const cuops_options_t *opt)
{
    return sdw_launch_rows(h, d, opt, 0, SDW_ISSUE_AUTO, "sm90_decode_wgmma");
}

static cuops_status_t sdw_launch_single(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                        const cuops_options_t *opt)
{
    return sdw_launch_rows(h, d, opt, 0, SDW_ISSUE_SINGLE, "sm90_decode_wgmma_single");
}

static cuops_status_t sdw_launch_pairs64(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                         const cuops_options_t *opt)
{
    return sdw_launch_rows(h, d, opt, 0, SDW_ISSUE_PAIRS64, "sm90_decode_wgmma_pairs64");
}

static cuops_status_t sdw_launch_128(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                     const cuops_options_t *opt)
{
    return sdw_launch_rows(h, d, opt, SDW_ROWS(2), SDW_ISSUE_AUTO, "sm90_decode_wgmma128");
}

static cuops_status_t sdw_launch_64(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                    const cuops_options_t *opt)
{
    return sdw_launch_rows(h, d, opt, SDW_ROWS(1), SDW_ISSUE_AUTO, "sm90_decode_wgmma64");
}

/* ---- the shifted form's host side ---- */

typedef void (*sds_kernel_fn)(const CUtensorMap, const CUtensorMap, const sdw_params_t);

template <int CONS> static sds_kernel_fn sds_pick_cons(cuops_dtype_t ab, int xn)
{
    const int bf = ab == CUOPS_DTYPE_BF16;
    switch (xn) {
    case 8: return bf ? sm90_decode_shift_kernel<__nv_bfloat16, 8, CONS> : sm90_decode_shift_kernel<__half, 8, CONS>;
    case 16: return bf ? sm90_decode_shift_kernel<__nv_bfloat16, 16, CONS> : sm90_decode_shift_kernel<__half, 16, CONS>;
    case 32: return bf ? sm90_decode_shift_kernel<__nv_bfloat16, 32, CONS> : sm90_decode_shift_kernel<__half, 32, CONS>;
    default: return bf ? sm90_decode_shift_kernel<__nv_bfloat16, 64, CONS> : sm90_decode_shift_kernel<__half, 64, CONS>;
    }
}

static sds_kernel_fn sds_pick(cuops_dtype_t ab, int xn, int cons)
{
    return cons == 1 ? sds_pick_cons<1>(ab, xn) : cons == 2 ? sds_pick_cons<2>(ab, xn)
                                                            : sds_pick_cons<4>(ab, xn);
}

template <int CONS> static int sds_smem_bytes_cons(int xn)
{
    switch (xn) {
    case 8: return SDS_SMEM_BYTES(8, CONS);
    case 16: return SDS_SMEM_BYTES(16, CONS);
    case 32: return SDS_SMEM_BYTES(32, CONS);
    default: return SDS_SMEM_BYTES(64, CONS);
    }
}

static int sds_smem_bytes(int xn, int cons)
{
    return cons == 1 ? sds_smem_bytes_cons<1>(xn) : cons == 2 ? sds_smem_bytes_cons<2>(xn)
                                                              : sds_smem_bytes_cons<4>(xn);
}


/* The weight's rows as the shifted form's map sees them: groups of G rows
 * (G ldb a multiple of 8 elements), the base rounded down to 16 bytes, off
 * elements from it to the weight. 0 where the form cannot read the weight:
 * stored [k, n], its base off 2 bytes, a partial last group (n % G != 0),
 * or map coordinates past an int. */
typedef struct sds_rows {
    int g, log, off;
    const void *base;
} sds_rows_t;

static int sds_rows(const cuops_gemm_desc_t *d, sds_rows_t *r)
{
    if (d->trans_b != CUOPS_OP_T || !cuops_aligned(d->b, 2) || d->ldb < d->k) return 0;
    int g = 1, lg = 0;
    while ((g * d->ldb) % 8 != 0) {
        g *= 2;
        lg++;
    }
    if (d->n % g != 0 || d->ldb > 0x7fffff00 / 8) return 0;
    const int off = (int)(((uintptr_t)d->b % 16) / 2);
    if (off + (int64_t)(g - 1) * d->ldb + d->k + SDS_SROW_ELEMS > 0x7fffff00) return 0;
    r->g = g;
    r->log = lg;
    r->off = off;
    r->base = (const char *)d->b - 2 * off;
    return 1;
}

static int sds_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    sds_rows_t r;
    if (!sdw_supports_call(h, d) || !sds_rows(d, &r)) return 0;
    for (int cons = 1; cons <= 4; cons *= 2)
        for (int xn = 8; xn <= 64; xn *= 2)
            if (h->smem_optin_bytes < sds_smem_bytes(xn, cons)) return 0;
    /* x K-major in place, or packed */
    return (d->trans_a == CUOPS_OP_N && cuops_sm90_tma_ok(d->a, d->lda)) || sdw_x_packable(h, d);
}

static cuops_status_t sds_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                 const cuops_options_t *opt)
{
    const char *const name = "sm90_decode_shift";
    sds_rows_t wr;
    if (!sds_supports(h, d) || !sds_rows(d, &wr))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: serves sm_90, m <= 64, a weight [n, k] on 2 bytes with n a "
                          "multiple of its row groups (m %lld, n %lld, ldb %lld)",
                          name, (long long)d->m, (long long)d->n, (long long)d->ldb);
    const int xn = cuops_decode_x_box_cols(d->m);
    const int sms = h->num_sms > 0 ? h->num_sms : 132;
    const int64_t forced = opt && opt->split_k > 0 ? opt->split_k : 0;
    const int rows = forced > 0 ? SDW_ROWS(4) : cuops_decode_wgmma_block_rows(d->n, d->k, sms);
    const int cons = rows / 64;
    const int smem = sds_smem_bytes(xn, cons);
    /* x K-major on the 16-byte grid: in place, or packed into the workspace */
    cuops_gemm_desc_t packed;
    cuops_status_t st = sdw_pack_x(h, &d, &packed, 1, name);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    CUtensorMap tmap_w, tmap_x;
    /* the weight: map rows of G weight rows, 72-element boxes of a G-th of the
     * block's rows, no swizzle (staging rows of 144 bytes) */
    st = cuops_sm90_encode_rows_plain(
        h, &tmap_w, wr.base, d->ab_type, d->n / wr.g, wr.off + (int64_t)(wr.g - 1) * d->ldb + d->k,
        (int64_t)wr.g * d->ldb, SDS_SROW_ELEMS, (uint32_t)(rows / wr.g));
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = cuops_sm90_encode_kmajor(h, &tmap_x, d->a, d->ab_type, d->m, d->k, d->lda, (uint32_t)xn);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    sdw_params_t p;
    sdw_params_init(d, &p);
    p.wgroup = wr.g;
    p.wlog = wr.log;
    p.woff = wr.off;
    p.wld = (int)d->ldb;
    p.wtail = (int)(d->k % SDW_BK);

    /* splits as the cluster form's */
    const int64_t blocks = cuops_ceil_div(d->n, rows);
    const int64_t s = sdw_plan_splits(blocks, sms, p.kblocks, forced, [&](int size) {
        return sdw_resident_clusters(1, h->device, xn, cons, size,
                                     (const void *)sds_pick(CUOPS_DTYPE_F16, xn, cons),
                                     sds_smem_bytes(xn, cons));
    });
    if (blocks * s > 0x7fffffff)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "%s: n %lld too large", name,
                          (long long)d->n);
    p.splits = (int)s;

    sds_kernel_fn fn = sds_pick(d->ab_type, xn, cons);
    st = sdw_launch_split(h, fn, blocks, s, SDW_THREADS(cons), smem, tmap_w, tmap_x, p);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = cuops_cuda_check_launch(h, name);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    h->last_kernel = name;
    return CUOPS_STATUS_SUCCESS;
}

/* The cluster form for a weight whose rows are off 16 bytes (auto at m > 8,
 * n >= 8192: gemm_tuning.h; docs/gemm.md, P225) */
extern "C" const cuops_gemm_kernel_t cuops_gemm_sm90_decode_shift = {"sm90_decode_shift",
                                                                     sds_supports, sds_launch};

extern "C" const cuops_gemm_kernel_t cuops_gemm_sm90_decode_wgmma = {"sm90_decode_wgmma",
                                                                     sdw_supports, sdw_launch};
/* The same blocks and splits with the weight issued one stage at a time
 * (SDW_ISSUE_SINGLE, the form before P213) or in interleaved pairs of
 * k-blocks at every block height (SDW_ISSUE_PAIRS64): for study */
extern "C" const cuops_gemm_kernel_t cuops_gemm_sm90_decode_wgmma_single = {
    "sm90_decode_wgmma_single", sdw_supports, sdw_launch_single};
extern "C" const cuops_gemm_kernel_t cuops_gemm_sm90_decode_wgmma_pairs64 = {
    "sm90_decode_wgmma_pairs64", sdw_supports, sdw_launch_pairs64};
/* 128-row blocks with the split chosen for them (or forced): for study, and
 * for auto where gemm_tuning.h sends it */
extern "C" const cuops_gemm_kernel_t cuops_gemm_sm90_decode_wgmma128 = {
    "sm90_decode_wgmma128", sdw_supports, sdw_launch_128};
/* 64-row blocks (one consumer warpgroup, 256 threads): the most bytes in
 * flight per weight row, K split over up to 8 CTAs */
extern "C" const cuops_gemm_kernel_t cuops_gemm_sm90_decode_wgmma64 = {
    "sm90_decode_wgmma64", sdw_supports, sdw_launch_64};

/* The narrow form: NW rows per tile by n (gemm_tuning.h), one CTA per SM (or
 * per tile), tiles dealt round-robin. */
typedef void (*sdn_kernel_fn)(const CUtensorMap, const CUtensorMap, const sdw_params_t, int);

/* The instance for `nw` rows (a multiple of 8 in [8, 256]): one per NW. */
template <typename T, int NW> static sdn_kernel_fn sdn_pick_nw(int nw)
{
    if constexpr (NW > SDN_NW_MAX) {
        (void)nw;
        return NULL;
    } else {
        return nw == NW ? sm90_decode_narrow_kernel<T, NW> : sdn_pick_nw<T, NW + 8>(nw);
    }
}

static int sdn_rows(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    return cuops_decode_narrow_rows(d->n, h->num_sms > 0 ? h->num_sms : 132);
}

static int sdn_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    return sdw_supports_call(h, d) && cuops_sm90_tma_ok(d->a, d->lda) &&
           cuops_sm90_tma_ok(d->b, d->ldb) && d->trans_a == CUOPS_OP_N && d->trans_b == CUOPS_OP_T &&
           h->smem_optin_bytes >= SDN_SMEM_BYTES(sdn_rows(h, d));
}

/* `issue`: SDW_ISSUE_PAIRS (a tile's k-blocks two at a time: H200, P214,
 * within 0.4 % of one at a time or up to 5.5 % faster on every shape auto
 * sends here, docs/gemm.md) or SDW_ISSUE_SINGLE (the "sm90_decode_narrow_single"
 * study variant) */
static cuops_status_t sdn_launch_issue(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                       int issue, const char *name)
{
    const int xn = cuops_decode_x_box_cols(d->m);
    const int nw = sdn_rows(h, d);
    const int smem = SDN_SMEM_BYTES(nw);
    CUtensorMap tmap_w, tmap_x;
    sdw_params_t p;
    cuops_status_t st = sdw_prepare(h, d, xn, (uint32_t)nw, &tmap_w, &tmap_x, NULL, &p);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    p.tiles = (int)cuops_ceil_div(d->n, nw);
    p.issue = issue;
    const int sms = h->num_sms > 0 ? h->num_sms : 132;
    const int grid = p.tiles < sms ? p.tiles : sms;
    sdn_kernel_fn fn = d->ab_type == CUOPS_DTYPE_BF16 ? sdn_pick_nw<__nv_bfloat16, 8>(nw)
                                                      : sdn_pick_nw<__half, 8>(nw);
    if (!fn)
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "%s: no instance for %d-row tiles",
                          name, nw);
    CUOPS_CUDA_TRY(h, cudaFuncSetAttribute((const void *)fn,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
#ifdef CUOPS_DECODE_STAMPS
    p.stamps = dstamp_buffer(grid);
#endif
    fn<<<grid, SDN_THREADS, smem, cuops_stream(h)>>>(tmap_w, tmap_x, p, xn);
#ifdef CUOPS_DECODE_STAMPS
    dstamp_report(cuops_stream(h), p.stamps, grid, name, (long long)d->m, (long long)d->n,
                  (long long)d->k);
#endif
    return cuops_cuda_check_launch(h, name);
}

static cuops_status_t sdn_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                 const cuops_options_t *opt)
{
    (void)opt;
    return sdn_launch_issue(h, d, SDW_ISSUE_PAIRS, "sm90_decode_narrow");
}

static cuops_status_t sdn_launch_single(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                        const cuops_options_t *opt)
{
    (void)opt;
    return sdn_launch_issue(h, d, SDW_ISSUE_SINGLE, "sm90_decode_narrow_single");
}

extern "C" const cuops_gemm_kernel_t cuops_gemm_sm90_decode_narrow = {"sm90_decode_narrow",
                                                                      sdn_supports, sdn_launch};
/* The narrow form with the weight issued one stage at a time: for study
 * (what it ran before P214) */
extern "C" const cuops_gemm_kernel_t cuops_gemm_sm90_decode_narrow_single = {
    "sm90_decode_narrow_single", sdn_supports, sdn_launch_single};
