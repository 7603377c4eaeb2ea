/*
 * dequant_common.cuh - what every int4 dequantization kernel of cuops shares:
 * the launch parameters, index helpers, the exact nibble-to-float step, and
 * the launchers each technique file (dequant_scalar.cu, dequant_vector.cu,
 * dequant_persistent.cu) provides to dequant_dispatch.cu.
 *
 * Exactness: out = RN_out((float(q) - float(z)) * float(s)). q - z is an
 * integer in -15..15, exact in fp32 whichever way it is formed, so the only
 * roundings are the one fp32 multiply and the final conversion, exactly as in
 * the CPU reference. The product is never fused with anything (there is no
 * add after it), so -fmad cannot change a bit.
 */
#ifndef CUOPS_DEQUANT_COMMON_CUH
#define CUOPS_DEQUANT_COMMON_CUH

#include <string.h>

#include "cuda/common/cuda_common.cuh"

/* Built once on the host per call; passed by value to every kernel. */
typedef struct dequant_params {
    const uint8_t *qweight;
    int64_t ldq;                /* bytes */
    const void *scales;
    const uint8_t *zeros;       /* NULL: symmetric, zero = 8 */
    void *out;
    int64_t ldo;                /* elements */
    int64_t n, k, group_size, num_groups;
    int group_log2;             /* log2(group_size), or -1 when not a power of two */
    /* vector kernels: a chunk is `vec` consecutive outputs of one row */
    int64_t chunks_per_row;     /* ceil(k / vec) */
    int chunks_per_row_log2;
    int64_t chunks_per_group;   /* group_size / vec */
    int chunks_per_group_log2;
    int64_t total_chunks;       /* n * chunks_per_row */
    /* persistent kernel: x / chunks_per_row and x / chunks_per_group for
     * x < 2^31 as (x * magic) >> shift (dequant_magic_divisor) */
    uint32_t cpr_magic, cpr_shift, cpg_magic, cpg_shift;
    /* Always 0. naive_order_b1 adds nibble * order_dep to the scale/zero index:
     * the value is zero, but neither NVVM nor ptxas can prove it, so the scale
     * and zero loads cannot be issued before the packed byte has arrived. */
    uint32_t order_dep;
} dequant_params_t;

static inline int dequant_log2_or_minus1(int64_t v)
{
    if (v <= 0 || (v & (v - 1)) != 0) return -1;
    int l = 0;
    while (((int64_t)1 << l) < v) l++;
    return l;
}

/* Division by a constant d (1 <= d <= 2^31) of any x < 2^31 without a
 * divide: with l = ceil(log2 d) and m = ceil(2^(31+l) / d) (< 2^32),
 * floor(x / d) = (x * m) >> (31 + l). Why: m*d = 2^(31+l) + e with
 * 0 <= e < d <= 2^l, so x*m / 2^(31+l) = x/d + x*e / (d * 2^(31+l)), and the
 * second term is below 2^31 * 2^l / (d * 2^(31+l)) = 1/d: it cannot carry
 * x/d past the next integer. One IMAD.WIDE.U32 and one shift, no branch. */
static inline void dequant_magic_divisor(uint32_t d, uint32_t *magic, uint32_t *shift)
{
    int l = 0;
    while (((uint64_t)1 << l) < (uint64_t)d) l++;
    *magic = (uint32_t)((((uint64_t)1 << (31 + l)) + d - 1) / d);
    *shift = (uint32_t)(31 + l);
}

/* The launch parameters every dequant kernel takes, from the call. vec > 0:
 * also the chunk geometry of the vector and persistent kernels (vec outputs
 * per chunk); vec == 0 (scalar kernels) leaves it zero. */
static inline dequant_params_t dequant_params_from_desc(const cuops_dequant_desc_t *d, int vec)
{
    dequant_params_t p;
    memset(&p, 0, sizeof p);
    p.qweight = d->qweight;
    p.ldq = d->ldq;
    p.scales = d->scales;
    p.zeros = d->zeros;
    p.out = d->out;
    p.ldo = d->ldo;
    p.n = d->n;
    p.k = d->k;
    p.group_size = d->group_size;
    p.num_groups = d->num_groups;
    p.group_log2 = dequant_log2_or_minus1(d->group_size);
    if (vec > 0) {
        p.chunks_per_row = cuops_ceil_div(d->k, vec);
        p.chunks_per_row_log2 = dequant_log2_or_minus1(p.chunks_per_row);
        /* a group wider than the row holds all of it: clamp so the value fits 32 bits */
        p.chunks_per_group = d->group_size / vec;
        if (p.chunks_per_group > p.chunks_per_row) p.chunks_per_group = p.chunks_per_row;
        p.chunks_per_group_log2 = dequant_log2_or_minus1(p.chunks_per_group);
    }
    p.order_dep = 0;
    return p;
}

__device__ __forceinline__ uint32_t dequant_magic_div(uint32_t x, uint32_t magic, uint32_t shift)
{
    return (uint32_t)(((uint64_t)x * magic) >> shift);
}

/* a / d for the index math: a shift when d is a power of two, a 32-bit
 * division when both fit (about 20 instructions instead of the ~70 of the
 * 64-bit routine); the branch is uniform across a warp in practice. */
__device__ __forceinline__ uint64_t dequant_div(uint64_t a, uint64_t d, int d_log2)
{
    if (d_log2 >= 0) return a >> d_log2;
    if (((a | d) >> 32) == 0) return (uint32_t)a / (uint32_t)d;
    return a / d;
}

/* float(q) - float(z) for q, z in 0..15 without I2F: 0x4B000000 | v is the
 * float 2^23 + v, and the difference of two such values is the exact integer
 * q - z (both operands and the result are exactly representable). One LOP3 and
 * one FADD per element instead of two conversions. */
__device__ __forceinline__ float dequant_magic(uint32_t v) { return __uint_as_float(0x4B000000u | v); }

template <typename T> struct dequant_is_bf16 { static constexpr bool value = false; };
template <> struct dequant_is_bf16<__nv_bfloat16> { static constexpr bool value = true; };

/* Scale element -> float, from an element-aligned pointer. */
template <typename S> __device__ __forceinline__ float dequant_load_scale(const S *p);
template <> __device__ __forceinline__ float dequant_load_scale<__half>(const __half *p)
{
    return __half2float(__ushort_as_half(__ldg((const unsigned short *)p)));
}
template <> __device__ __forceinline__ float dequant_load_scale<__nv_bfloat16>(const __nv_bfloat16 *p)
{
    return __uint_as_float((uint32_t)__ldg((const unsigned short *)p) << 16);
}
template <> __device__ __forceinline__ float dequant_load_scale<float>(const float *p)
{
    return __ldg(p);
}

/* ---- launchers (each returns the status of its launch) ------------------ */

/* One output per thread, any alignment, any even group size.
 * naive_order != 0: the scale and zero loads wait for the packed byte. */
cuops_status_t dequant_launch_scalar(struct cuops_handle *h, const cuops_dequant_desc_t *d,
                                     int naive_order, const char *kernel_name);

/* `vec` consecutive outputs per chunk (4, 8, 16 or 32), `unroll` chunks per
 * thread at a stride of 32 chunks (each warp instruction covers contiguous
 * memory). store: 0 st.global, 1 st.global.cs (evict-first), 2 st.global
 * after a lane-pair exchange that makes every store write whole 32-byte
 * sectors (vec 16, unroll 1 or 2). The caller has checked
 * dequant_vector_supported(). */
cuops_status_t dequant_launch_vector(struct cuops_handle *h, const cuops_dequant_desc_t *d,
                                     int vec, int unroll, int store, const char *kernel_name);

/* Whether the vector kernel can serve d with that chunk width; when not, a
 * reason is written to why (256 bytes). */
int dequant_vector_supported(const cuops_dequant_desc_t *d, int vec, char *why);
/* The warp-transposed store form (VEC 16, store 4 / 5) can serve d. */
int dequant_vector_transposed_supported(const cuops_dequant_desc_t *d, char *why);

/* Persistent double-buffered kernel (dequant_persistent.cu): 16-byte chunks,
 * `unroll` (1, 2, 4) chunks per lane and unit, a grid that gives every warp
 * the same number of units. store: 0 st.global, 1 st.global.cs, 2 shared
 * memory + cp.async.bulk (sm_90, contiguous output, unroll 4). The caller has
 * checked dequant_persistent_supported(). */
cuops_status_t dequant_launch_persistent(struct cuops_handle *h, const cuops_dequant_desc_t *d,
                                         int unroll, int store, const char *kernel_name);

/* Whether the persistent kernel can serve d (bulk != 0: with bulk stores);
 * when not, a reason is written to why (256 bytes). */
int dequant_persistent_supported(const struct cuops_handle *h, const cuops_dequant_desc_t *d, int bulk,
                                 char *why);

#endif /* CUOPS_DEQUANT_COMMON_CUH */
