/*
 * dequant_scalar.cu - int4 dequantization with one output per thread: the
 * seed 001 kernel's shape (each Triton lane one output; a byte load, a
 * scale load and a zero load per element), in two load orders.
 *
 *  naive_order_b1  the packed byte is loaded and used (nibble extracted)
 *                  before the scale and zero loads are issued: their index
 *                  gets + nibble * order_dep, where order_dep is a kernel
 *                  argument that is always 0. Neither NVVM nor ptxas can fold
 *                  it, so the SASS must wait for the packed load (scoreboard)
 *                  before the IMAD that forms the scale address: two DRAM
 *                  round trips in series per thread, the schedule the seed
 *                  saw on RDNA3.
 *  hoisted_b1      all three loads issued back to back, one wait before the
 *                  first use: one round trip.
 *
 * These are also the generic path: they accept any pointer alignment (scales
 * and outputs not aligned to their element size are read and written byte by
 * byte) and any even group size, so the dispatch falls back to hoisted_b1
 * whenever the vector kernels cannot serve a call.
 *
 * Grid: x covers the columns of a row (256 per CTA), y the rows (strided when
 * n > 65535), so no division is needed for the row; the group index is a
 * shift for power-of-two groups.
 *
 * Run: cuops-bench dequant --variant naive_order_b1 (or hoisted_b1).
 */
#include <string.h>

#include "cuda/quant/dequant_common.cuh"

#define SCALAR_THREADS 256

/* Scale element idx as float; byte-wise when the pointer may be unaligned. */
template <typename S, bool ALIGNED>
__device__ __forceinline__ float scalar_load_scale(const void *scales, int64_t idx)
{
    if constexpr (ALIGNED) {
        return dequant_load_scale<S>((const S *)scales + idx);
    } else {
        const uint8_t *b = (const uint8_t *)scales + idx * (int64_t)sizeof(S);
        uint32_t bits = 0;
#pragma unroll
        for (int i = 0; i < (int)sizeof(S); i++) bits |= (uint32_t)__ldg(b + i) << (8 * i);
        if constexpr (sizeof(S) == 4) return __uint_as_float(bits);
        else if constexpr (dequant_is_bf16<S>::value) return __uint_as_float(bits << 16);
        else return __half2float(__ushort_as_half((unsigned short)bits));
    }
}

template <typename O, bool ALIGNED>
__device__ __forceinline__ void scalar_store(void *out, int64_t idx, float v)
{
    uint32_t bits;
    if constexpr (sizeof(O) == 4) bits = __float_as_uint(v);
    else bits = cuops_pack2<O>(v, 0.0f) & 0xFFFFu;
    if constexpr (ALIGNED) {
        if constexpr (sizeof(O) == 4) ((uint32_t *)out)[idx] = bits;
        else ((unsigned short *)out)[idx] = (unsigned short)bits;
    } else {
        uint8_t *b = (uint8_t *)out + idx * (int64_t)sizeof(O);
#pragma unroll
        for (int i = 0; i < (int)sizeof(O); i++) b[i] = (uint8_t)(bits >> (8 * i));
    }
}

template <typename S, typename O, bool NAIVE_ORDER, bool ALIGNED>
__global__ void __launch_bounds__(SCALAR_THREADS) dequant_scalar_kernel(dequant_params_t p)
{
    const int64_t col = (int64_t)blockIdx.x * SCALAR_THREADS + threadIdx.x;
    if (col >= p.k) return;
    const int64_t group = (int64_t)dequant_div((uint64_t)col, (uint64_t)p.group_size, p.group_log2);
    const uint32_t shift = (uint32_t)(col & 1) * 4u;
    for (int64_t row = blockIdx.y; row < p.n; row += gridDim.y) {
        const uint8_t *qp = p.qweight + row * p.ldq + (col >> 1);
        int64_t sidx = row * p.num_groups + group;
        uint32_t q, z;
        float s;
        if (NAIVE_ORDER) {
            q = ((uint32_t)__ldg(qp) >> shift) & 0xFu;
            /* the use of q comes first; the dependency below keeps it there */
            sidx += (int64_t)(q * p.order_dep);
            s = scalar_load_scale<S, ALIGNED>(p.scales, sidx);
            z = p.zeros ? (uint32_t)__ldg(p.zeros + sidx) : 8u;
        } else {
            const uint32_t byte = __ldg(qp);
            s = scalar_load_scale<S, ALIGNED>(p.scales, sidx);
            z = p.zeros ? (uint32_t)__ldg(p.zeros + sidx) : 8u;
            q = (byte >> shift) & 0xFu;
        }
        const float v = (dequant_magic(q) - dequant_magic(z)) * s;
        scalar_store<O, ALIGNED>(p.out, row * p.ldo + col, v);
    }
}

template <typename S, typename O>
static void launch_scalar_typed(const dequant_params_t &p, int naive, int aligned, dim3 grid,
                                cudaStream_t st)
{
    if (naive) {
        if (aligned) dequant_scalar_kernel<S, O, true, true><<<grid, SCALAR_THREADS, 0, st>>>(p);
        else dequant_scalar_kernel<S, O, true, false><<<grid, SCALAR_THREADS, 0, st>>>(p);
    } else {
        if (aligned) dequant_scalar_kernel<S, O, false, true><<<grid, SCALAR_THREADS, 0, st>>>(p);
        else dequant_scalar_kernel<S, O, false, false><<<grid, SCALAR_THREADS, 0, st>>>(p);
    }
}

template <typename S>
static int launch_scalar_out(cuops_dtype_t out_type, const dequant_params_t &p, int naive,
                             int aligned, dim3 grid, cudaStream_t st)
{
    switch (out_type) {
    case CUOPS_DTYPE_F16: launch_scalar_typed<S, __half>(p, naive, aligned, grid, st); return 1;
    case CUOPS_DTYPE_BF16: launch_scalar_typed<S, __nv_bfloat16>(p, naive, aligned, grid, st); return 1;
    case CUOPS_DTYPE_F32: launch_scalar_typed<S, float>(p, naive, aligned, grid, st); return 1;
    default: return 0;
    }
}

cuops_status_t dequant_launch_scalar(struct cuops_handle *h, const cuops_dequant_desc_t *d,
                                     int naive_order, const char *kernel_name)
{
    dequant_params_t p = dequant_params_from_desc(d, 0);

    const size_t ss = cuops_dtype_size(d->scale_type), os = cuops_dtype_size(d->out_type);
    const int aligned = cuops_aligned(d->scales, ss) && cuops_aligned(d->out, os);
    const int64_t gx = cuops_ceil_div(d->k, SCALAR_THREADS);
    if (gx > 0x7fffffff)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "dequant: k = %lld is too large",
                          (long long)d->k);
    dim3 grid((unsigned)gx, (unsigned)(d->n < 65535 ? d->n : 65535));
    cudaStream_t st = cuops_stream(h);
    int ok = 0;
    switch (d->scale_type) {
    case CUOPS_DTYPE_F16: ok = launch_scalar_out<__half>(d->out_type, p, naive_order, aligned, grid, st); break;
    case CUOPS_DTYPE_BF16: ok = launch_scalar_out<__nv_bfloat16>(d->out_type, p, naive_order, aligned, grid, st); break;
    case CUOPS_DTYPE_F32: ok = launch_scalar_out<float>(d->out_type, p, naive_order, aligned, grid, st); break;
    default: break;
    }
    if (!ok)
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "dequant: no scalar kernel for %s -> %s",
                          cuops_dtype_name(d->scale_type), cuops_dtype_name(d->out_type));
    return cuops_cuda_check_launch(h, kernel_name);
}
