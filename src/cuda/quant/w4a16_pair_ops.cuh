/*
 * w4a16_pair_ops.cuh - the f16/bf16 pair arithmetic every W4A16 kernel
 * dequantizes with, on pairs held as 32-bit words (mma.sync fragments and
 * packed loads are words; the pair types are only for the intrinsics).
 *
 * The exact int4 -> f16/bf16 conversion (docs/w4a16.md): OR a nibble pair
 * into the mantissa of w4_type<T>::magic (1024 in each f16 half, 128 in each
 * bf16 half) to get 1024 + q (128 + q) exactly; subtracting the zero's word
 * built the same way gives q - z exactly; one multiply by the scale rounds
 * once.
 */
#ifndef CUOPS_W4A16_PAIR_OPS_CUH
#define CUOPS_W4A16_PAIR_OPS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

template <typename T> struct w4_type;
template <> struct w4_type<__half> {
    static constexpr uint32_t magic = 0x64006400u; /* 1024.0 in each half */
    static constexpr bool is_f16 = true;
    typedef __half2 pair;
};
template <> struct w4_type<__nv_bfloat16> {
    static constexpr uint32_t magic = 0x43004300u; /* 128.0 in each half */
    static constexpr bool is_f16 = false;
    typedef __nv_bfloat162 pair;
};

template <typename P> static __device__ __forceinline__ P w4_as_pair(uint32_t u)
{
    P p;
    memcpy(&p, &u, 4);
    return p;
}
template <typename P> static __device__ __forceinline__ uint32_t w4_as_u32(P p)
{
    uint32_t u;
    memcpy(&u, &p, 4);
    return u;
}

/*
 * (w & MASK) | magic: the nibble pair(s) selected by MASK placed in the
 * mantissa of the magic word, in one LOP3 (a & b | c, truth table 0xea).
 * Written as C, ptxas emits an AND and an OR, since a LOP3 takes only one
 * immediate: the profile of w4a16_decode_warp counted 37 LOP3 per 512-byte
 * tile where 20 do (docs/w4a16.md). Here the magic is a register operand;
 * w4_nibbles_into takes any magic word (the prefill kernel reads f16 nibbles
 * at bits 4-7 through 64.0, 0x5400).
 */
template <uint32_t MASK, uint32_t MAGIC> static __device__ __forceinline__ uint32_t w4_nibbles_into(uint32_t w)
{
    uint32_t r;
    asm("lop3.b32 %0, %1, %2, %3, 0xea;\n" : "=r"(r) : "r"(w), "n"(MASK), "r"(MAGIC));
    return r;
}
template <typename T, uint32_t MASK> static __device__ __forceinline__ uint32_t w4_nibbles(uint32_t w)
{
    return w4_nibbles_into<MASK, w4_type<T>::magic>(w);
}

/* a - b and a * b, pairwise in T (the tag argument picks the type). */
template <typename T> static __device__ __forceinline__ uint32_t w4_sub2(T, uint32_t a, uint32_t b)
{
    typedef typename w4_type<T>::pair P;
    return w4_as_u32(__hsub2(w4_as_pair<P>(a), w4_as_pair<P>(b)));
}
template <typename T> static __device__ __forceinline__ uint32_t w4_mul2(T, uint32_t a, uint32_t b)
{
    typedef typename w4_type<T>::pair P;
    return w4_as_u32(__hmul2(w4_as_pair<P>(a), w4_as_pair<P>(b)));
}

#endif
