/*
 * w4a16_decode_stream.cu - the decode W4A16 GEMM (m <= 64) built to keep HBM
 * busy: a cp.async ring in shared memory fed by the whole CTA, the activations
 * staged once per CTA and shared by its warps, and a split-K whose partial sums
 * are added in the same kernel by the last CTA of each output tile, in fixed
 * split order (bitwise reproducible, no second launch).
 *
 * Variant "w4a16_decode_stream" (auto for m <= 64 when it serves the call);
 * the earlier register-batch kernel stays as "w4a16_decode_splitk" so one
 * cuops-bench run times both side by side:
 *   cuops-bench w4a16 --variant auto --variant w4a16_decode_splitk
 *
 * What the previous kernel left on the table, and what this one does instead:
 *  - bytes in flight. It loaded a batch of U tiles, then consumed all of them
 *    before issuing the next batch, so on average half a batch was in flight
 *    and none during the math. Here each CTA keeps STAGES-1 k-tiles of every
 *    one of its strips in flight at all times (cp.async.cg, 16 B per thread per
 *    strip-tile, no registers held): m <= 8 keeps 7 x 4 KB per CTA, 5 CTAs per
 *    SM = 140 KB per SM, far past the ~32 KB at which the probe saturates HBM
 *    (4.4 TB/s); m <= 16 keeps 5 x 4 KB per CTA, 4 CTAs per SM = 80 KB.
 *  - x through L1 per lane. Every warp read its own copy of the x fragment for
 *    every tile (m = 16: 2 KB of L1 traffic per 512 B of weight, L2 misses
 *    when k*m*2 exceeds L1). Here x[0..m)[64 k] is copied once per stage into
 *    shared memory and read by all warps of the CTA; each warp owns S strips
 *    so one x fragment in registers feeds S mma.
 *  - the tail. Its second (reduce) kernel cost a launch and a pass over the
 *    partials; the CTA count was not matched to the resident slots. Here the
 *    split count fills one resident wave (slots from the occupancy API) and the
 *    reduction is the last arriving CTA's job.
 *  - instructions per byte. For m <= 16 the scale is applied in fp32 after the
 *    mma (exact q - z go into the mma, one group per 64-k tile), which drops
 *    the per-pair multiply; for f16 the rows g+8 are extracted as 16*q with
 *    the 0x00F000F0 mask (1024 + 16q is exact in f16), which drops half of the
 *    shifts. Per 512 B weight tile and warp at m = 1: 1 LDS.128 (weight),
 *    2 LDS.128 (x, shared by the warp's 2 strips), 4 x (1 shift, 4 lop3,
 *    4 sub), 4 mma, 4 FFMA; the ring's bookkeeping (wait, barrier, copy
 *    issue) is paid once per 2 strips. The previous kernel also spent a
 *    64-bit division per tile on the group index (ncu: issue-bound at 0.60
 *    warp-instructions per scheduler-clock with HBM at 29 %).
 *
 * Serves: m <= 64, act f16/bf16, group_size a multiple of 64 or one group per
 * row (so one group covers a whole 64-k tile and the scale can be factored out
 * of the mma sum), x 16-byte aligned with ldx % 8 == 0 (cp.async sources).
 * Everything else is served by the register-batch kernel (w4a16_mma_splitk.cu).
 *
 * Shared memory per stage (bytes), R = NW*S strips per CTA, XR = 8*M8 rows:
 *   W  [R][32 lanes][16]   the packed tiles, lane-private: conflict-free LDS.128
 *   X  [XR][8 chunks][16]  x row r, 16-byte chunk c stored at chunk c ^ (r & 7):
 *                          lane (g, t) reads chunks 2t, 2t+1 of row 8i+g, so a
 *                          quarter-warp (g in {2h, 2h+1}, t = 0..3) hits chunk
 *                          positions (2t)^g = 8 distinct 16-byte bank groups
 *   SC [R][8] u32          scale pairs of the tile's group
 *   ZW [R][2] u32          zero words of the tile's group
 * Rows m..XR-1 of X are zeroed once and never written again; x past k is
 * zero-filled by cp.async (src-size < 16), so padding contributes 0 (the
 * packed padding already dequantizes to 0, and 0 * finite = 0).
 */
#include <string.h>

#include "cuda/common/ptx_sm80.cuh"
#include "cuda/quant/w4a16_layout.cuh"
#include "cuda/quant/w4a16_pair_ops.cuh"

/* Arrival counters for the cross-CTA split-K, one per row tile: the
 * handle's (w4a16_splitk_partials); the last CTA of a tile puts its counter
 * back to zero. */
#define W4S_MAX_SPLIT_TILES W4A16_SPLITK_MAX_TILES

/* The last CTA reads splits * m * R*16 floats; keep that below the larger of
 * this and the CTA's own weight bytes so the serial tail stays short
 * (~0.3 us at ~64 B/clk of L2 per SM). */
#define W4S_REDUCE_FLOOR_BYTES 32768

typedef struct w4s_args {
    const uint16_t *x;
    int64_t ldx;
    const uint8_t *packed;
    void *y;
    int64_t ldy;
    float *ws; /* [row tiles][splits][m][R*16] partials; NULL when splits == 1 */
    int64_t m, n, k, group_size, num_groups, strips, ktiles;
    int64_t scale_offset, zero_offset;
    int64_t tiles_per_split;
    int64_t tiles_per_group; /* group_size / 64, or ktiles when one group spans k */
    int splits;
    unsigned int *counters; /* [row tile] arrivals, zero between calls; NULL when splits == 1 */
} w4s_args_t;

/* ---- per-type helpers --------------------------------------------------- */

static __device__ __forceinline__ float2 w4s_pair_to_float2(__half, uint32_t p)
{
    __half2 h;
    memcpy(&h, &p, 4);
    return __half22float2(h);
}
static __device__ __forceinline__ float2 w4s_pair_to_float2(__nv_bfloat16, uint32_t p)
{
    __nv_bfloat162 h;
    memcpy(&h, &p, 4);
    return __bfloat1622float2(h);
}

/* low / high 16 bits copied into both halves (one PRMT each) */
static __device__ __forceinline__ uint32_t w4s_splat_lo(uint32_t p) { return __byte_perm(p, 0, 0x1010); }
static __device__ __forceinline__ uint32_t w4s_splat_hi(uint32_t p) { return __byte_perm(p, 0, 0x3232); }

/* 8-byte global->shared copy with zero-fill (.ca: the only form that takes 8). */
static __device__ __forceinline__ void w4s_cp_async_8_zfill(uint32_t smem_dst, const void *src,
                                                            int src_bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(smem_dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
#endif
}

/* Shared loads as volatile asm with a memory clobber: they must stay between
 * the barrier that makes a stage valid and the one that lets it be refilled. */
static __device__ __forceinline__ uint4 w4s_lds128(uint32_t addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}
static __device__ __forceinline__ uint32_t w4s_lds32(uint32_t addr)
{
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

/* ---- compile-time shape of one configuration ------------------------------ */

template <int M8, int NW, int S, int STAGES> struct w4s_cfg {
    static constexpr int threads = 32 * NW;
    static constexpr int strips = NW * S;          /* R */
    static constexpr int x_rows = 8 * M8;
    static constexpr int w_bytes = strips * W4_TILE_BYTES;
    static constexpr int x_bytes = x_rows * 128;
    static constexpr int sc_bytes = strips * 32;
    static constexpr int zw_bytes = ((strips * 8 + 15) / 16) * 16;
    static constexpr int stage_bytes = w_bytes + x_bytes + sc_bytes + zw_bytes;
    static constexpr int smem_bytes = STAGES * stage_bytes;
    /* 16-byte x chunks per thread per stage (rows 0..x_rows-1, 8 each) */
    static constexpr int x_copies = (x_rows * 8 + threads - 1) / threads;
    static_assert(3 * strips <= threads, "metadata copies need 3 threads per strip");
    static_assert(smem_bytes <= 48 * 1024, "stay under the default dynamic smem limit");
};

/* ---- the kernel ------------------------------------------------------------ */

/*
 * Each thread's share of one stage, worked out once per CTA so that issuing a
 * stage costs a few adds per copy (the previous kernel spent a 64-bit
 * division per tile on the group index; ncu showed it issue-bound at 0.6
 * warp-instructions per scheduler per clock while HBM ran at 29 %).
 * Pointers are those of the CTA's first k-tile; tile d of the range is
 * +512*d (weights) or +64*d elements (x). A copy with 0 bytes zero-fills and
 * is given a pointer that is always valid.
 */
template <int M8, int NW, int S, int STAGES> struct w4s_plan {
    typedef w4s_cfg<M8, NW, S, STAGES> C;
    const uint8_t *w_src[S];
    int w_bytes[S];
    const uint16_t *x_src[C::x_copies];
    int64_t x_col[C::x_copies]; /* column of the chunk in the first tile; -1: row >= m */
    uint32_t x_dst[C::x_copies];
    const uint8_t *meta_src;    /* this thread's metadata of group 0, or NULL */
    int meta_bytes;             /* 16 (scale half), 8 (zero word) or 0 */
    int meta_group_stride;      /* 32 or 8 */
    uint32_t meta_dst;
};

template <int M8, int NW, int S, int STAGES>
static __device__ __forceinline__ void w4s_plan_init(w4s_plan<M8, NW, S, STAGES> &pl,
                                                     const w4s_args_t &a, int64_t strip0,
                                                     int64_t kt_begin, int tid)
{
    typedef w4s_cfg<M8, NW, S, STAGES> C;
#pragma unroll
    for (int i = 0; i < S; i++) {
        int c = tid + i * C::threads; /* consecutive threads: one strip's 512 B tile */
        int64_t strip = strip0 + (c >> 5);
        pl.w_src[i] = a.packed;
        pl.w_bytes[i] = 0;
        if (strip < a.strips) {
            pl.w_src[i] = a.packed + ((strip * a.ktiles + kt_begin) * 32 + (c & 31)) * 16;
            pl.w_bytes[i] = 16;
        }
    }
#pragma unroll
    for (int i = 0; i < C::x_copies; i++) {
        int c = tid + i * C::threads;
        int row = c >> 3, ch = c & 7;
        pl.x_src[i] = a.x;
        pl.x_col[i] = -1;
        pl.x_dst[i] = C::w_bytes + row * 128 + ((ch ^ (row & 7)) << 4);
        if (row < a.m) {
            pl.x_col[i] = kt_begin * W4_TILE_K + ch * 8;
            pl.x_src[i] = a.x + row * a.ldx + pl.x_col[i];
        }
    }
    pl.meta_src = NULL;
    pl.meta_bytes = 0;
    pl.meta_group_stride = 0;
    pl.meta_dst = 0;
    if (tid < 2 * C::strips) { /* two 16-byte halves of a strip's 8 scale pairs */
        int r = tid >> 1, half = tid & 1;
        int64_t strip = strip0 + r;
        pl.meta_dst = C::w_bytes + C::x_bytes + r * 32 + half * 16;
        pl.meta_group_stride = 32;
        if (strip < a.strips) {
            pl.meta_src = a.packed + a.scale_offset + strip * a.num_groups * 32 + half * 16;
            pl.meta_bytes = 16;
        }
    } else if (tid < 3 * C::strips) { /* a strip's two zero words */
        int r = tid - 2 * C::strips;
        int64_t strip = strip0 + r;
        pl.meta_dst = C::w_bytes + C::x_bytes + C::sc_bytes + r * 8;
        pl.meta_group_stride = 8;
        if (strip < a.strips) {
            pl.meta_src = a.packed + a.zero_offset + strip * a.num_groups * 8;
            pl.meta_bytes = 8;
        }
    }
}

/* Issue the copies of tile kt_begin + d (quantization group grp) into the
 * stage at shared-window address st. */
template <int M8, int NW, int S, int STAGES>
static __device__ __forceinline__ void w4s_issue_stage(const w4s_plan<M8, NW, S, STAGES> &pl,
                                                       const w4s_args_t &a, uint32_t st, int d,
                                                       int64_t grp, int tid)
{
    typedef w4s_cfg<M8, NW, S, STAGES> C;
#pragma unroll
    for (int i = 0; i < S; i++) {
        const uint8_t *src = pl.w_bytes[i] ? pl.w_src[i] + (int64_t)d * W4_TILE_BYTES : pl.w_src[i];
        cuops_cp_async_16_zfill(st + (tid + i * C::threads) * 16, src, pl.w_bytes[i]);
    }
#pragma unroll
    for (int i = 0; i < C::x_copies; i++) {
        if (pl.x_col[i] < 0) continue; /* row >= m: zeroed once, never copied */
        int64_t left = a.k - (pl.x_col[i] + (int64_t)d * W4_TILE_K); /* columns from here to k */
        int bytes = left >= 8 ? 16 : (left > 0 ? (int)left * 2 : 0);
        const uint16_t *src = bytes ? pl.x_src[i] + (int64_t)d * W4_TILE_K : a.x;
        cuops_cp_async_16_zfill(st + pl.x_dst[i], src, bytes);
    }
    if (pl.meta_group_stride == 32) {
        const uint8_t *src = pl.meta_bytes ? pl.meta_src + grp * 32 : a.packed;
        cuops_cp_async_16_zfill(st + pl.meta_dst, src, pl.meta_bytes);
    } else if (pl.meta_group_stride == 8) {
        const uint8_t *src = pl.meta_bytes ? pl.meta_src + grp * 8 : a.packed;
        w4s_cp_async_8_zfill(st + pl.meta_dst, src, pl.meta_bytes);
    }
}

/*
 * grid = (row tiles of R strips, splits); NW warps, warp w owns strips
 * w*S .. w*S+S-1 of the tile. M8 fragments of 8 x rows (m <= 8*M8).
 * SCALE_F32: the mma sees exact (q - z) (f16: rows g+8 as 16(q - z)) and the
 * scale is applied to each tile's fp32 partial; otherwise the weights are
 * (q - z) * s rounded to T, bit-identical to cuops_dequant_int4.
 */
template <typename T, int M8, int NW, int S, int STAGES, int MIN_CTAS, bool SCALE_F32>
__global__ void __launch_bounds__(32 * NW, MIN_CTAS) w4a16_decode_stream_kernel(w4s_args_t a)
{
    typedef w4s_cfg<M8, NW, S, STAGES> C;
    constexpr uint32_t magic = w4_type<T>::magic;
    /* f16 only: 1024 + 16q is exact in f16; in bf16 the 0x00F0 bits would
     * reach the exponent */
    constexpr bool ROWS8_X16 = SCALE_F32 && sizeof(T) == 2 && magic == 0x64006400u;
    extern __shared__ __align__(128) unsigned char w4s_smem[];

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t = lane & 3;
    const int64_t strip0 = (int64_t)blockIdx.x * C::strips;
    const int64_t kt_begin = (int64_t)blockIdx.y * a.tiles_per_split;
    int64_t kt_stop = kt_begin + a.tiles_per_split;
    if (kt_stop > a.ktiles) kt_stop = a.ktiles;
    const int ntiles = (int)(kt_stop - kt_begin); /* >= 1: the dispatch makes no empty split */
    const uint32_t smem0 = cuops_smem_addr(w4s_smem);

    /* x rows m..XR-1 stay zero in every stage (cp.async never writes them) */
    {
        const int zero_rows = C::x_rows - (int)a.m;
        for (int c = tid; c < STAGES * zero_rows * 8; c += C::threads) {
            int stage = c / (zero_rows * 8), rest = c - stage * zero_rows * 8;
            uint4 *p = (uint4 *)(w4s_smem + stage * C::stage_bytes + C::w_bytes +
                                 ((int)a.m + (rest >> 3)) * 128 + (rest & 7) * 16);
            *p = make_uint4(0, 0, 0, 0);
        }
    }

    /* prologue: STAGES-1 tiles in flight, one commit group each. The group
     * of the next tile to issue is tracked incrementally (no division in
     * the loop): tiles_per_group = group_size / 64, or ktiles for one group. */
    w4s_plan<M8, NW, S, STAGES> plan;
    w4s_plan_init<M8, NW, S, STAGES>(plan, a, strip0, kt_begin, tid);
    int64_t issue_grp = kt_begin / a.tiles_per_group;
    int64_t issue_in_grp = kt_begin - issue_grp * a.tiles_per_group;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ntiles) {
            w4s_issue_stage<M8, NW, S, STAGES>(plan, a, smem0 + s * C::stage_bytes, s, issue_grp, tid);
            if (++issue_in_grp == a.tiles_per_group) {
                issue_in_grp = 0;
                issue_grp++;
            }
        }
        cuops_cp_async_commit();
    }

    float acc[S][M8][4];
#pragma unroll
    for (int s = 0; s < S; s++)
#pragma unroll
        for (int i = 0; i < M8; i++) acc[s][i][0] = acc[s][i][1] = acc[s][i][2] = acc[s][i][3] = 0.0f;

    int read_slot = 0, write_slot = STAGES - 1;
    for (int it = 0; it < ntiles; it++) {
        /* groups committed so far: STAGES-1+it; tile `it` is group `it` */
        cuops_cp_async_wait<STAGES - 2>();
        /* everyone's copies of tile `it` landed, and everyone finished tile
         * it-1, whose buffer (write_slot) the refill below overwrites */
        __syncthreads();
        if (it + STAGES - 1 < ntiles) {
            w4s_issue_stage<M8, NW, S, STAGES>(plan, a, smem0 + write_slot * C::stage_bytes,
                                               it + STAGES - 1, issue_grp, tid);
            if (++issue_in_grp == a.tiles_per_group) {
                issue_in_grp = 0;
                issue_grp++;
            }
        }
        cuops_cp_async_commit();
        write_slot = write_slot == STAGES - 1 ? 0 : write_slot + 1;
        const uint32_t st = smem0 + read_slot * C::stage_bytes;
        read_slot = read_slot == STAGES - 1 ? 0 : read_slot + 1;

        /* dequantize this warp's S strips into mma A registers */
        uint32_t A[S][4][4];
        float2 sf[S];
#pragma unroll
        for (int s = 0; s < S; s++) {
            const int r = warp * S + s;
            uint4 wq = w4s_lds128(st + (r * 32 + lane) * 16);
            uint32_t sc = w4s_lds32(st + C::w_bytes + C::x_bytes + r * 32 + g * 4);
            uint32_t zw = w4s_lds32(st + C::w_bytes + C::x_bytes + C::sc_bytes + r * 8 + (g >> 2) * 4);
            /* low half: zero(row g), high half: zero(row g+8) */
            const uint32_t zs = zw >> (4 * (g & 3));
            const uint32_t zn = w4_nibbles<T, 0x000F000Fu>(zs); /* 1024 + z, or 128 + z */
            uint32_t words[4] = {wq.x, wq.y, wq.z, wq.w};
            if constexpr (ROWS8_X16) {
                uint32_t z_lo = w4s_splat_lo(zn);                              /* 1024 + z(g)      */
                uint32_t z_hi = w4s_splat_hi(w4_nibbles<T, 0x00F000F0u>(zs << 4)); /* 1024 + 16 z(g+8) */
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    uint32_t w = words[j], w8 = w >> 8;
                    /* nibbles i, i+4 = mma register i: rows g, g+8, g, g+8 */
                    A[s][j][0] = w4_sub2(T(), w4_nibbles<T, 0x000F000Fu>(w), z_lo);
                    A[s][j][1] = w4_sub2(T(), w4_nibbles<T, 0x00F000F0u>(w), z_hi);
                    A[s][j][2] = w4_sub2(T(), w4_nibbles<T, 0x000F000Fu>(w8), z_lo);
                    A[s][j][3] = w4_sub2(T(), w4_nibbles<T, 0x00F000F0u>(w8), z_hi);
                }
                float2 f = w4s_pair_to_float2(T(), sc);
                sf[s] = make_float2(f.x, f.y * 0.0625f); /* rows g+8 carry 16(q - z) */
            } else {
                uint32_t z_lo = w4s_splat_lo(zn), z_hi = w4s_splat_hi(zn);
                uint32_t s_lo = w4s_splat_lo(sc), s_hi = w4s_splat_hi(sc);
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    uint32_t w = words[j];
                    uint32_t q0 = w4_nibbles<T, 0x000F000Fu>(w), q1 = w4_nibbles<T, 0x000F000Fu>(w >> 4);
                    uint32_t q2 = w4_nibbles<T, 0x000F000Fu>(w >> 8);
                    uint32_t q3 = w4_nibbles<T, 0x000F000Fu>(w >> 12);
                    if constexpr (SCALE_F32) {
                        A[s][j][0] = w4_sub2(T(), q0, z_lo);
                        A[s][j][1] = w4_sub2(T(), q1, z_hi);
                        A[s][j][2] = w4_sub2(T(), q2, z_lo);
                        A[s][j][3] = w4_sub2(T(), q3, z_hi);
                    } else {
                        A[s][j][0] = w4_mul2(T(), w4_sub2(T(), q0, z_lo), s_lo);
                        A[s][j][1] = w4_mul2(T(), w4_sub2(T(), q1, z_hi), s_hi);
                        A[s][j][2] = w4_mul2(T(), w4_sub2(T(), q2, z_lo), s_lo);
                        A[s][j][3] = w4_mul2(T(), w4_sub2(T(), q3, z_hi), s_hi);
                    }
                }
                sf[s] = w4s_pair_to_float2(T(), sc);
            }
        }

        /* x fragment i (rows 8i+g, 16 columns of lane t) feeds all S strips */
#pragma unroll
        for (int i = 0; i < M8; i++) {
            const int row = 8 * i + g;
            const uint32_t xrow = st + C::w_bytes + row * 128;
            uint4 xa = w4s_lds128(xrow + (((2 * t) ^ g) << 4));
            uint4 xb = w4s_lds128(xrow + (((2 * t + 1) ^ g) << 4));
            const uint32_t xr[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
#pragma unroll
            for (int s = 0; s < S; s++) {
                if constexpr (SCALE_F32) {
                    float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        const uint32_t b[2] = {xr[2 * j], xr[2 * j + 1]};
                        cuops_mma_m16n8k16<T>::run(part, A[s][j], b);
                    }
                    /* c0, c1: weight row g; c2, c3: row g+8 */
                    acc[s][i][0] = fmaf(sf[s].x, part[0], acc[s][i][0]);
                    acc[s][i][1] = fmaf(sf[s].x, part[1], acc[s][i][1]);
                    acc[s][i][2] = fmaf(sf[s].y, part[2], acc[s][i][2]);
                    acc[s][i][3] = fmaf(sf[s].y, part[3], acc[s][i][3]);
                } else {
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        const uint32_t b[2] = {xr[2 * j], xr[2 * j + 1]};
                        cuops_mma_m16n8k16<T>::run(acc[s][i], A[s][j], b);
                    }
                }
            }
        }
    }
    cuops_cp_async_wait<0>(); /* only empty groups remain; leave nothing in flight */

    /* ---- epilogue: c0,c1 = weight row g, x rows 2t, 2t+1; c2,c3 = row g+8 ---- */
    constexpr int R16 = C::strips * W4_STRIP_ROWS;
    if (a.splits == 1) {
#pragma unroll
        for (int s = 0; s < S; s++) {
            const int64_t col0 = (strip0 + warp * S + s) * W4_STRIP_ROWS + g;
#pragma unroll
            for (int i = 0; i < M8; i++)
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    int64_t row = 8 * i + 2 * t + (c & 1);
                    int64_t col = col0 + 8 * (c >> 1);
                    if (row < a.m && col < a.n)
                        ((T *)a.y)[row * a.ldy + col] = cuops_from_float<T>(acc[s][i][c]);
                }
        }
        return;
    }

    /* split-K: this split's partial tile, then the arrival count */
    const int64_t tile_floats = a.m * R16;
    float *part_base = a.ws + ((int64_t)blockIdx.x * a.splits + blockIdx.y) * tile_floats;
#pragma unroll
    for (int s = 0; s < S; s++) {
        const int col0 = (warp * S + s) * W4_STRIP_ROWS + g;
#pragma unroll
        for (int i = 0; i < M8; i++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                int row = 8 * i + 2 * t + (c & 1);
                if (row < a.m) __stcg(part_base + (int64_t)row * R16 + col0 + 8 * (c >> 1), acc[s][i][c]);
            }
    }
    /* release: the partial is visible at device scope before the arrival */
    __threadfence();
    __syncthreads();
    __shared__ int w4s_is_last;
    unsigned int *counter = a.counters + blockIdx.x;
    if (tid == 0) w4s_is_last = atomicAdd(counter, 1u) == (unsigned int)(a.splits - 1);
    __syncthreads();
    if (!w4s_is_last) return;
    /* acquire: every other split's partial (fenced before its arrival) is
     * visible; .cg loads read L2, never a stale L1 line */
    __threadfence();
    const float *tile_base = a.ws + (int64_t)blockIdx.x * a.splits * tile_floats;
    const int64_t quads = tile_floats / 4; /* R16 is a multiple of 64 */
    for (int64_t q = tid; q < quads; q += C::threads) {
        float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        const float4 *p = (const float4 *)tile_base + q;
#pragma unroll 4
        for (int sp = 0; sp < a.splits; sp++) {
            float4 v = __ldcg(p + (int64_t)sp * (tile_floats / 4));
            sum.x += v.x;
            sum.y += v.y;
            sum.z += v.z;
            sum.w += v.w;
        }
        const int64_t row = (4 * q) / R16;
        const int64_t col = strip0 * W4_STRIP_ROWS + (4 * q - row * R16);
        T *yrow = (T *)a.y + row * a.ldy;
        const float out[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
        for (int e = 0; e < 4; e++)
            if (col + e < a.n) yrow[col + e] = cuops_from_float<T>(out[e]);
    }
    /* every split of this tile has arrived: the counter can go back to zero */
    if (tid == 0) atomicExch(counter, 0u);
}

/* ---- host side: configurations, split choice, launch ----------------------- */

/* Resident CTAs per SM of one instantiation (cached; only steers the split
 * choice, never correctness). */
template <typename T, int M8, int NW, int S, int STAGES, int MIN_CTAS, bool SCALE_F32>
static int w4s_ctas_per_sm(void)
{
    static int cached = 0;
    if (cached == 0) {
        int v = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &v, w4a16_decode_stream_kernel<T, M8, NW, S, STAGES, MIN_CTAS, SCALE_F32>, 32 * NW,
                w4s_cfg<M8, NW, S, STAGES>::smem_bytes) != cudaSuccess ||
            v < 1) {
            (void)cudaGetLastError();
            v = MIN_CTAS;
        }
        cached = v;
    }
    return cached;
}

/*
 * Splits: fill one resident wave (row_tiles * splits <= slots: the whole
 * weight is requested at once, no second wave and no tail), at least 4 tiles
 * (256 k) per split so the ring has work to pipeline, and the last CTA's
 * reduction (splits * m * R*16 * 4 bytes read) no larger than the larger of
 * 32 KB and the CTA's own weight bytes.
 */
static int64_t w4s_choose_splits(int64_t slots, int64_t row_tiles, int64_t ktiles, int64_t m,
                                 int strips_per_cta)
{
    if (row_tiles > W4S_MAX_SPLIT_TILES) return 1;
    int64_t s = slots / row_tiles;
    int64_t by_tiles = ktiles / 4 > 1 ? ktiles / 4 : 1;
    if (s > by_tiles) s = by_tiles;
    while (s > 1) {
        int64_t reduce_bytes = s * m * strips_per_cta * W4_STRIP_ROWS * 4;
        int64_t own_bytes = cuops_ceil_div(ktiles, s) * strips_per_cta * W4_TILE_BYTES;
        int64_t cap = own_bytes > W4S_REDUCE_FLOOR_BYTES ? own_bytes : W4S_REDUCE_FLOOR_BYTES;
        if (reduce_bytes <= cap) break;
        s--;
    }
    return s < 1 ? 1 : s;
}

template <typename T, int M8, int NW, int S, int STAGES, int MIN_CTAS, bool SCALE_F32>
static cuops_status_t w4s_launch(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                 const w4_geometry_t *geo, int64_t forced_splits, const char *name)
{
    typedef w4s_cfg<M8, NW, S, STAGES> C;
    const int64_t row_tiles = cuops_ceil_div(geo->strips, C::strips);
    if (row_tiles > 0x7fffffff)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "w4a16 (cuda): n %lld too large",
                          (long long)d->n);
    int64_t sms = h->num_sms > 0 ? h->num_sms : 132;
    int64_t splits;
    if (forced_splits > 0)
        splits = forced_splits;
    else
        splits = w4s_choose_splits(sms * w4s_ctas_per_sm<T, M8, NW, S, STAGES, MIN_CTAS, SCALE_F32>(),
                                   row_tiles, geo->ktiles, d->m, C::strips);
    if (row_tiles > W4S_MAX_SPLIT_TILES) splits = 1; /* the counters cover this many tiles */
    if (splits > geo->ktiles) splits = geo->ktiles;
    if (splits > 65535) splits = 65535;
    if (splits < 1) splits = 1;
    /* no empty split: all but the last get ceil(ktiles / splits) tiles */
    int64_t tiles_per_split = cuops_ceil_div(geo->ktiles, splits);
    splits = cuops_ceil_div(geo->ktiles, tiles_per_split);

    float *ws = NULL;
    unsigned *counters = NULL;
    if (splits > 1) {
        cuops_status_t s = w4a16_splitk_partials(h, row_tiles, splits,
                                                 d->m * C::strips * W4_STRIP_ROWS, &ws, &counters);
        /* a user workspace without room for the split the plan chose: the
         * call runs unsplit */
        if (cuops_cuda_workspace_short(h, s) && forced_splits <= 0)
            return w4s_launch<T, M8, NW, S, STAGES, MIN_CTAS, SCALE_F32>(h, d, geo, 1, name);
        if (s != CUOPS_STATUS_SUCCESS) return s;
    }

    w4s_args_t a;
    a.x = (const uint16_t *)d->x;
    a.ldx = d->ldx;
    a.packed = (const uint8_t *)d->packed;
    a.y = d->y;
    a.ldy = d->ldy;
    a.ws = ws;
    a.m = d->m;
    a.n = geo->n;
    a.k = geo->k;
    a.group_size = geo->group_size;
    a.num_groups = geo->num_groups;
    a.strips = geo->strips;
    a.ktiles = geo->ktiles;
    a.scale_offset = geo->scale_offset;
    a.zero_offset = geo->zero_offset;
    a.tiles_per_split = tiles_per_split;
    a.tiles_per_group = geo->num_groups == 1 ? geo->ktiles : geo->group_size / W4_TILE_K;
    a.splits = (int)splits;
    a.counters = counters;
    dim3 grid((unsigned)row_tiles, (unsigned)splits, 1);
    w4a16_decode_stream_kernel<T, M8, NW, S, STAGES, MIN_CTAS, SCALE_F32>
        <<<grid, C::threads, C::smem_bytes, cuops_stream(h)>>>(a);
    return cuops_cuda_check_launch(h, name);
}

int w4a16_decode_stream_serves(const cuops_w4a16_desc_t *d, const w4_geometry_t *geo)
{
    if (d->m < 1 || d->m > 64) return 0;
    if (geo->group_size % W4_TILE_K != 0 && geo->num_groups != 1) return 0;
    if (!cuops_aligned(d->x, 16) || d->ldx % 8 != 0) return 0;
    if (geo->ktiles > 0x3fffffff) return 0; /* tile counts are int in the kernel */
    return 1;
}

/*
 * Configurations (M8, warps, strips per warp, stages, min CTAs per SM):
 *  m <= 8:  4 warps x 2 strips, 8 stages of 5.3 KB (7 x 4 KB of weight in
 *           flight per CTA), fp32 scale; 2 strips per warp halve the per-tile
 *           share of the ring's bookkeeping;
 *  m <= 16: 4 x 2 strips (x fragment reused twice: 1 KB of x LDS per 512 B of
 *           weight), 6 stages of 6.3 KB, fp32 scale;
 *  m <= 32, 64: 4 x 2 strips, 4 / 3 stages; the scale is folded into the
 *           weights in T (fp32 scaling would need a second accumulator set:
 *           M8*S*4 more registers), as the mma, not HBM, is the limit there.
 */
cuops_status_t w4a16_launch_decode_stream(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                          const w4_geometry_t *geo, int64_t forced_splits,
                                          const char **kernel_name)
{
    static const char *const names[2][4] = {
        {"w4a16_stream_f16_m8", "w4a16_stream_f16_m16", "w4a16_stream_f16_m32",
         "w4a16_stream_f16_m64"},
        {"w4a16_stream_bf16_m8", "w4a16_stream_bf16_m16", "w4a16_stream_bf16_m32",
         "w4a16_stream_bf16_m64"}};
    const int bf = d->act_type == CUOPS_DTYPE_BF16;
    const int mi = d->m <= 8 ? 0 : d->m <= 16 ? 1 : d->m <= 32 ? 2 : 3;
    const char *name = names[bf][mi];
    *kernel_name = name;
    if (!bf) {
        switch (mi) {
        case 0: return w4s_launch<__half, 1, 4, 2, 8, 5, true>(h, d, geo, forced_splits, name);
        case 1: return w4s_launch<__half, 2, 4, 2, 6, 4, true>(h, d, geo, forced_splits, name);
        case 2: return w4s_launch<__half, 4, 4, 2, 4, 4, false>(h, d, geo, forced_splits, name);
        default: return w4s_launch<__half, 8, 4, 2, 3, 2, false>(h, d, geo, forced_splits, name);
        }
    }
    switch (mi) {
    case 0: return w4s_launch<__nv_bfloat16, 1, 4, 2, 8, 5, true>(h, d, geo, forced_splits, name);
    case 1: return w4s_launch<__nv_bfloat16, 2, 4, 2, 6, 4, true>(h, d, geo, forced_splits, name);
    case 2: return w4s_launch<__nv_bfloat16, 4, 4, 2, 4, 4, false>(h, d, geo, forced_splits, name);
    default: return w4s_launch<__nv_bfloat16, 8, 4, 2, 3, 2, false>(h, d, geo, forced_splits, name);
    }
}
