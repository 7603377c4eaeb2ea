/*
 * float16.h - host conversions between float and the 16-bit types, rounding
 * to nearest even exactly as the GPU's __float2half_rn / __float2bfloat16_rn
 * do (so the CPU oracle can demand bit-exact dequantization). Header-only C11.
 */
#ifndef CUOPS_FLOAT16_H
#define CUOPS_FLOAT16_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cuops.h"

static inline uint32_t cuops_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float cuops_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* binary16 -> float: exact. */
static inline float cuops_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) /* inf / nan: keep the payload */
        return cuops_bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return cuops_bits_f32(sign);
        /* subnormal: man * 2^-24 is exact in float */
        float v = (float)man * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return cuops_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

/* float -> binary16, round to nearest even (overflow to inf, NaN stays NaN). */
static inline uint16_t cuops_float_to_half(float f)
{
    uint32_t u = cuops_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u) /* NaN: the canonical 0x7fff, as __float2half_rn gives */
        return (uint16_t)0x7fffu;
    if (abs >= 0x477ff000u) /* >= 65520 rounds to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (abs < 0x38800000u) { /* below 2^-14: subnormal half (or zero) */
        if (abs < 0x33000000u) /* below 2^-25: rounds to zero (2^-25 ties to even 0) */
            return sign;
        uint32_t e = abs >> 23;               /* 102..112 */
        uint32_t m = (abs & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e;            /* keep 24-(shift) bits: result = m >> (shift) */
        uint32_t r = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    /* normal: rebias exponent, round the 13 dropped mantissa bits */
    uint32_t r = ((abs >> 13) - (112u << 10));
    uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
    return (uint16_t)(sign | r);
}

/* bfloat16 -> float: exact. */
static inline float cuops_bf16_to_float(uint16_t b) { return cuops_bits_f32((uint32_t)b << 16); }

/* float -> bfloat16, round to nearest even (NaN: the canonical 0x7fff, as
 * __float2bfloat16_rn gives). */
static inline uint16_t cuops_float_to_bf16(float f)
{
    uint32_t u = cuops_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)0x7fffu;
    uint32_t lsb = (u >> 16) & 1u;
    u += 0x7fffu + lsb;
    return (uint16_t)(u >> 16);
}

/* double -> float rounded to odd: the float neighbour of d whose last bit is
 * 1 when d is not a float. Rounding that to a type with at least two fewer
 * significant bits (binary16: 11, bfloat16: 8, against 24) gives the same
 * result as rounding d directly, where (float)d then float -> half would
 * round twice (e.g. 1 + 2^-11 + 2^-40 to 1.0 instead of 1 + 2^-10). */
static inline float cuops_double_to_float_odd(double d)
{
    const float f = (float)d;
    if ((double)f == d || f != f || isinf(f)) return f;
    if (cuops_f32_bits(f) & 1u) return f;
    return (double)f < d ? nextafterf(f, INFINITY) : nextafterf(f, -INFINITY);
}

/* double -> binary16 / bfloat16, rounded once to nearest even. */
static inline uint16_t cuops_double_to_half(double d) { return cuops_float_to_half(cuops_double_to_float_odd(d)); }
static inline uint16_t cuops_double_to_bf16(double d) { return cuops_float_to_bf16(cuops_double_to_float_odd(d)); }

/* Element i of a host array of type t, as double (exact for every type but
 * int64 values beyond 2^53). Shared by the tests and the bench validators. */
static inline double cuops_elem_to_double(const void *p, cuops_dtype_t t, int64_t i)
{
    switch (t) {
    case CUOPS_DTYPE_F16: return cuops_half_to_float(((const uint16_t *)p)[i]);
    case CUOPS_DTYPE_BF16: return cuops_bf16_to_float(((const uint16_t *)p)[i]);
    case CUOPS_DTYPE_F32: return ((const float *)p)[i];
    case CUOPS_DTYPE_F64: return ((const double *)p)[i];
    case CUOPS_DTYPE_I32: return ((const int32_t *)p)[i];
    case CUOPS_DTYPE_I64: return (double)((const int64_t *)p)[i];
    case CUOPS_DTYPE_U8: return ((const uint8_t *)p)[i];
    }
    return NAN;
}

#endif /* CUOPS_FLOAT16_H */
