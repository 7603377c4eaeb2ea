/*
 * cpu_elem.h - element loads and stores for the CPU reference backend.
 *
 * The API accepts any pointer alignment, so every access goes through memcpy
 * (which compilers turn into one plain load or store on x86 and Arm) rather
 * than a cast that would be undefined behaviour on a misaligned address.
 * Rounding to f16/bf16 uses float16.h, bit-identical to the GPU's _rn
 * conversions.
 */
#ifndef CUOPS_CPU_ELEM_H
#define CUOPS_CPU_ELEM_H

#include <stdint.h>
#include <string.h>

#include "api/cuops_internal.h"
#include "cpu/float16.h"

/* Element i of a float-like array (F16, BF16, F32) as float: exact. */
static inline float cpu_load_float(const void *base, cuops_dtype_t t, int64_t i)
{
    const unsigned char *p = (const unsigned char *)base;
    if (t == CUOPS_DTYPE_F32) {
        float v;
        memcpy(&v, p + i * 4, 4);
        return v;
    }
    uint16_t bits;
    memcpy(&bits, p + i * 2, 2);
    return t == CUOPS_DTYPE_F16 ? cuops_half_to_float(bits) : cuops_bf16_to_float(bits);
}

/* Store a float into element i of an F16, BF16 or F32 array, rounding to
 * nearest even. */
static inline void cpu_store_float(void *base, cuops_dtype_t t, int64_t i, float v)
{
    unsigned char *p = (unsigned char *)base;
    if (t == CUOPS_DTYPE_F32) {
        memcpy(p + i * 4, &v, 4);
        return;
    }
    uint16_t bits = t == CUOPS_DTYPE_F16 ? cuops_float_to_half(v) : cuops_float_to_bf16(v);
    memcpy(p + i * 2, &bits, 2);
}

/* Store a double result into element i of a float-like array, rounded once
 * to the element type (f16/bf16 through cuops_double_to_half/_bf16). */
static inline void cpu_store_double(void *base, cuops_dtype_t t, int64_t i, double v)
{
    unsigned char *p = (unsigned char *)base;
    if (t == CUOPS_DTYPE_F32) {
        const float f = (float)v;
        memcpy(p + i * 4, &f, 4);
        return;
    }
    uint16_t bits = t == CUOPS_DTYPE_F16 ? cuops_double_to_half(v) : cuops_double_to_bf16(v);
    memcpy(p + i * 2, &bits, 2);
}

/* v rounded to a float-like type and back (exact for F32). */
static inline float cpu_round_to(cuops_dtype_t t, float v)
{
    if (t == CUOPS_DTYPE_F16) return cuops_half_to_float(cuops_float_to_half(v));
    if (t == CUOPS_DTYPE_BF16) return cuops_bf16_to_float(cuops_float_to_bf16(v));
    return v;
}

#endif /* CUOPS_CPU_ELEM_H */
