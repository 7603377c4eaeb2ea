/*
 * w4a16_warp_tile.cuh - the mma.sync math of one 512-byte strip-tile of the
 * prepacked int4 weight (w4a16_layout.cuh): dequantize the lane's 16 bytes
 * and multiply them into m16n8k16 accumulators with x fragments from shared
 * memory. Shared by the decode kernels that feed tiles to warps in different
 * ways: from registers (w4a16_decode_warp.cu) and from a shared-memory ring
 * filled by a producer warp (w4a16_decode_bulk_ring.cu).
 */
#ifndef CUOPS_W4A16_WARP_TILE_CUH
#define CUOPS_W4A16_WARP_TILE_CUH

#include "cuda/quant/w4a16_pair_ops.cuh"

/* v, as a value the compiler cannot derive: per-lane offsets computed once
 * and kept in registers, rather than re-derived from the thread index at
 * each use (what NVVM did with them inside the bulk ring's tile loop: ~124
 * SASS instructions per tile in its first build's ncu, docs/w4a16.md). */
static __device__ __forceinline__ uint32_t w4w_keep(uint32_t v)
{
    asm volatile("" : "+r"(v));
    return v;
}

/* ---- per-type helpers --------------------------------------------------- */

static __device__ __forceinline__ float2 w4w_pair_to_float2(__half, uint32_t p)
{
    __half2 h;
    memcpy(&h, &p, 4);
    return __half22float2(h);
}
/* bf16 is the top half of an fp32: exact, two integer ops */
static __device__ __forceinline__ float2 w4w_pair_to_float2(__nv_bfloat16, uint32_t p)
{
    return make_float2(__uint_as_float(p << 16), __uint_as_float(p & 0xFFFF0000u));
}

/* low / high 16 bits copied into both halves (one PRMT each) */
static __device__ __forceinline__ uint32_t w4w_splat_lo(uint32_t p)
{
    return __byte_perm(p, 0, 0x1010);
}
static __device__ __forceinline__ uint32_t w4w_splat_hi(uint32_t p)
{
    return __byte_perm(p, 0, 0x3232);
}

/* d = a * b + c (c in all four: the first k16 step of a tile's partial),
 * d = a * b + d (the following ones) */
template <typename T> struct w4w_mma;
template <> struct w4w_mma<__half> {
    static __device__ __forceinline__ void first(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                                 uint32_t b1, float c)
    {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%10,%10,%10,%10};\n"
            : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c));
    }
    static __device__ __forceinline__ void acc(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                               uint32_t b1)
    {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};
template <> struct w4w_mma<__nv_bfloat16> {
    static __device__ __forceinline__ void first(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                                 uint32_t b1, float c)
    {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%10,%10,%10,%10};\n"
            : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c));
    }
    static __device__ __forceinline__ void acc(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                               uint32_t b1)
    {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

/* ---- one strip-tile ----------------------------------------------------------- */

/*
 * Dequantize one 512-byte tile (this lane: rows g, g+8, 16 columns) and
 * multiply it into acc with the x fragments at xt (the tile's 128-byte
 * segment of each x row in shared memory; xoff_* are the lane's swizzled
 * chunk offsets of rows min(8i+g, m-1)).
 * SCALE_F32: the mma sees exact q - z (f16: rows g+8 as 16(q - z), since
 * 1024 + 16q is exact in f16 and the 0x00F000F0 mask then needs no shift) and
 * the scale multiplies the tile's fp32 partial; otherwise the weights are
 * (q - z) * s rounded to T, bit-identical to cuops_dequant_int4.
 */
/* x fragment i of a tile: rows 8i+g, the lane's 16 columns = 8 words;
 * words 2j, 2j+1 are the B registers of k16 step j */
template <int M8>
static __device__ __forceinline__ void w4w_load_x(uint32_t (&xr)[M8][8], const unsigned char *xt,
                                                  const uint32_t (&xoff_a)[M8],
                                                  const uint32_t (&xoff_b)[M8])
{
#pragma unroll
    for (int i = 0; i < M8; i++) {
        const uint4 xa = *(const uint4 *)(xt + xoff_a[i]);
        const uint4 xb = *(const uint4 *)(xt + xoff_b[i]);
        xr[i][0] = xa.x; xr[i][1] = xa.y; xr[i][2] = xa.z; xr[i][3] = xa.w;
        xr[i][4] = xb.x; xr[i][5] = xb.y; xr[i][6] = xb.z; xr[i][7] = xb.w;
    }
}

/* The zero points of rows g (low half) and g+8 (high half) as the pairs the
 * fp32-scale form subtracts from its nibbles: 1024 + z and, for f16, rows
 * g+8 as 1024 + 16 z (bf16: 128 + z for both). zs: the lane's zero word
 * shifted to its rows' nibbles. */
template <typename T>
static __device__ __forceinline__ void w4w_zero_pairs_f32(uint32_t zs, uint32_t &z_lo, uint32_t &z_hi)
{
    constexpr bool ROWS8_X16 = w4_type<T>::is_f16;
    const uint32_t zn = w4_nibbles<T, 0x000F000Fu>(zs); /* 1024 + z, or 128 + z */
    z_lo = w4w_splat_lo(zn);
    z_hi = ROWS8_X16 ? w4w_splat_hi(w4_nibbles<T, 0x00F000F0u>(zs << 4)) /* 1024 + 16 z */
                     : w4w_splat_hi(zn);
}

/* a biased pair less its zero's pair, or as it is (SUB_ZERO = false) */
template <typename T, bool SUB_ZERO>
static __device__ __forceinline__ uint32_t w4w_less_zero(uint32_t biased, uint32_t zero_pair)
{
    if constexpr (SUB_ZERO) return w4_sub2(T(), biased, zero_pair);
    else return biased;
}

/* The fp32-scale form's mma partial of one tile: exact q - z through the
 * tensor core (f16 rows g+8 as 16 (q - z)). The partial starts from +0
 * computed as acc & chain_zero (0 at run time): the mma chain of the next
 * tile then waits for this one's FFMAs. Without that dependency ptxas
 * overlaps the chains of several tiles, and the registers it takes for that
 * are the ones w4a16_decode_warp's weight pipeline needs (it spilled at
 * U = 8). The warps hide the chain's latency: at 80 % of HBM a warp needs a
 * tile only every ~500 clocks.
 * SUB_ZERO = false: the mma takes the biased pairs as the LOP3 builds them
 * (M + q; f16 rows g+8 M + 16 q) and the caller subtracts (M + z) times the
 * sum of x afterwards (w4w_zero_f32); z_lo, z_hi are then unused.
 * GO_ON = true: the chain goes on from part as it is (the next tile of a
 * run that shares one scale: the run's partial is scaled once); acc and
 * chain_zero are then unused. */
template <typename T, int M8, bool SUB_ZERO = true, bool GO_ON = false>
static __device__ __forceinline__ void w4w_partial_f32(float (&part)[M8][4], uint4 wq,
                                                       uint32_t z_lo, uint32_t z_hi,
                                                       const uint32_t (&xr)[M8][8],
                                                       const float (&acc)[M8][4],
                                                       uint32_t chain_zero)
{
    constexpr bool ROWS8_X16 = w4_type<T>::is_f16;
    const uint32_t words[4] = {wq.x, wq.y, wq.z, wq.w};
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const uint32_t w = words[j];
        uint32_t A[4];
        /* nibbles i, i+4 = mma register i: rows g, g+8, g, g+8 */
        if constexpr (ROWS8_X16) {
            const uint32_t w8 = w >> 8;
            A[0] = w4w_less_zero<T, SUB_ZERO>(w4_nibbles<T, 0x000F000Fu>(w), z_lo);
            A[1] = w4w_less_zero<T, SUB_ZERO>(w4_nibbles<T, 0x00F000F0u>(w), z_hi);
            A[2] = w4w_less_zero<T, SUB_ZERO>(w4_nibbles<T, 0x000F000Fu>(w8), z_lo);
            A[3] = w4w_less_zero<T, SUB_ZERO>(w4_nibbles<T, 0x00F000F0u>(w8), z_hi);
        } else {
            A[0] = w4w_less_zero<T, SUB_ZERO>(w4_nibbles<T, 0x000F000Fu>(w), z_lo);
            A[1] = w4w_less_zero<T, SUB_ZERO>(w4_nibbles<T, 0x000F000Fu>(w >> 4), z_hi);
            A[2] = w4w_less_zero<T, SUB_ZERO>(w4_nibbles<T, 0x000F000Fu>(w >> 8), z_lo);
            A[3] = w4w_less_zero<T, SUB_ZERO>(w4_nibbles<T, 0x000F000Fu>(w >> 12), z_hi);
        }
#pragma unroll
        for (int i = 0; i < M8; i++) {
            if (j == 0 && !GO_ON)
                w4w_mma<T>::first(part[i], A, xr[i][0], xr[i][1],
                                  __uint_as_float(__float_as_uint(acc[i][0]) & chain_zero));
            else
                w4w_mma<T>::acc(part[i], A, xr[i][2 * j], xr[i][2 * j + 1]);
        }
    }
}

/* The biases the SUB_ZERO = false partial carries, in fp32: M + z for rows g
 * and, for rows g+8, M + z (bf16) or M + 16 z (f16), where M is the magic's
 * 1024 (f16) or 128 (bf16). Built from the bits: 1024 is 0x44800000 with a
 * mantissa step of 2^-13, 128 is 0x43000000 with a step of 2^-16. zs: the
 * lane's zero word shifted to its rows' nibbles (row g bits 0-3, row g+8
 * bits 16-19). */
template <typename T>
static __device__ __forceinline__ float2 w4w_zero_f32(uint32_t zs)
{
    /* one shift and one LOP3 each (w4_nibbles_into: the magic in a register) */
    if constexpr (w4_type<T>::is_f16)
        return make_float2(__uint_as_float(w4_nibbles_into<0x0001E000u, 0x44800000u>(zs << 13)),
                           __uint_as_float(w4_nibbles_into<0x001E0000u, 0x44800000u>(zs << 1)));
    else
        return make_float2(__uint_as_float(w4_nibbles_into<0x000F0000u, 0x43000000u>(zs << 16)),
                           __uint_as_float(w4_nibbles_into<0x000F0000u, 0x43000000u>(zs)));
}

/* The scale pair (row g, row g+8) in fp32, rows g+8 divided by 16 in f16
 * (their partial carries 16 (q - z)). */
template <typename T>
static __device__ __forceinline__ float2 w4w_scale_f32(uint32_t sc)
{
    float2 sf = w4w_pair_to_float2(T(), sc);
    if (w4_type<T>::is_f16) sf.y *= 0.0625f;
    return sf;
}

/* acc += scale * partial; c0, c1: weight row g; c2, c3: row g+8 */
template <int M8>
static __device__ __forceinline__ void w4w_add_scaled(float (&acc)[M8][4], const float (&part)[M8][4],
                                                      float2 sf)
{
#pragma unroll
    for (int i = 0; i < M8; i++) {
        acc[i][0] = fmaf(sf.x, part[i][0], acc[i][0]);
        acc[i][1] = fmaf(sf.x, part[i][1], acc[i][1]);
        acc[i][2] = fmaf(sf.y, part[i][2], acc[i][2]);
        acc[i][3] = fmaf(sf.y, part[i][3], acc[i][3]);
    }
}

template <typename T, int M8, bool SCALE_F32>
static __device__ __forceinline__ void w4w_tile(float (&acc)[M8][4], uint4 wq, uint32_t sc,
                                                uint32_t zw, int zshift, uint32_t chain_zero,
                                                const unsigned char *xt,
                                                const uint32_t (&xoff_a)[M8],
                                                const uint32_t (&xoff_b)[M8])
{
    uint32_t xr[M8][8];
    w4w_load_x<M8>(xr, xt, xoff_a, xoff_b);

    /* low half: zero(row g), high half: zero(row g+8) */
    const uint32_t zs = zw >> zshift;
    if constexpr (SCALE_F32) {
        uint32_t z_lo, z_hi;
        w4w_zero_pairs_f32<T>(zs, z_lo, z_hi);
        float part[M8][4];
        w4w_partial_f32<T, M8>(part, wq, z_lo, z_hi, xr, acc, chain_zero);
        w4w_add_scaled<M8>(acc, part, w4w_scale_f32<T>(sc));
    } else {
        const uint32_t zn = w4_nibbles<T, 0x000F000Fu>(zs); /* 1024 + z, or 128 + z */
        const uint32_t words[4] = {wq.x, wq.y, wq.z, wq.w};
        const uint32_t z_lo = w4w_splat_lo(zn), z_hi = w4w_splat_hi(zn);
        const uint32_t s_lo = w4w_splat_lo(sc), s_hi = w4w_splat_hi(sc);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const uint32_t w = words[j];
            uint32_t A[4];
            A[0] = w4_mul2(T(), w4_sub2(T(), w4_nibbles<T, 0x000F000Fu>(w), z_lo), s_lo);
            A[1] = w4_mul2(T(), w4_sub2(T(), w4_nibbles<T, 0x000F000Fu>(w >> 4), z_hi), s_hi);
            A[2] = w4_mul2(T(), w4_sub2(T(), w4_nibbles<T, 0x000F000Fu>(w >> 8), z_lo), s_lo);
            A[3] = w4_mul2(T(), w4_sub2(T(), w4_nibbles<T, 0x000F000Fu>(w >> 12), z_hi), s_hi);
#pragma unroll
            for (int i = 0; i < M8; i++) w4w_mma<T>::acc(acc[i], A, xr[i][2 * j], xr[i][2 * j + 1]);
        }
    }
}

#endif /* CUOPS_W4A16_WARP_TILE_CUH */
