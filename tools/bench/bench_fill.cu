/*
 * bench_fill.cu - fresh random inputs and NaN poison for cuops-bench, made
 * on the GPU: generating 2^30 values on the host and uploading them would
 * take longer than benchmarking them. Values come from a counter-based hash
 * (splitmix64 of seed + index), so every buffer gets its own stream and the
 * result does not depend on the launch shape.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

__device__ __forceinline__ uint64_t bench_hash(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Floats uniform in [lo, hi) (whole numbers when `integral`); integers
 * uniform in [lo, hi). */
__global__ void bench_fill_kernel(void *dst, int dtype, int64_t count, double lo, double hi,
                                  uint64_t seed, int integral)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        uint64_t r = bench_hash(seed ^ ((uint64_t)i * 0xD1B54A32D192ED03ull));
        double u = (double)(r >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
        double v = lo + (hi - lo) * u;
        if (integral) v = floor(v);
        switch (dtype) {
        case CUOPS_DTYPE_F16: ((__half *)dst)[i] = __double2half(v); break;
        case CUOPS_DTYPE_BF16: ((__nv_bfloat16 *)dst)[i] = __double2bfloat16(v); break;
        case CUOPS_DTYPE_F32: ((float *)dst)[i] = (float)v; break;
        case CUOPS_DTYPE_F64: ((double *)dst)[i] = v; break;
        case CUOPS_DTYPE_I32: ((int32_t *)dst)[i] = (int32_t)floor(v); break;
        case CUOPS_DTYPE_I64: ((int64_t *)dst)[i] = (int64_t)floor(v); break;
        case CUOPS_DTYPE_U8: ((uint8_t *)dst)[i] = (uint8_t)floor(v); break;
        default: break;
        }
    }
}

static int bench_fill_any(bench_env_t *env, void *dev, cuops_dtype_t t, size_t count, double lo,
                          double hi, int integral)
{
    if (count == 0) return 0;
    uint64_t seed = env->opt.seed * 0x2545F4914F6CDD1Dull + (++env->fill_counter) * 0x9E37ull;
    int64_t blocks = ((int64_t)count + 255) / 256;
    if (blocks > 65536) blocks = 65536;
    bench_fill_kernel<<<(unsigned)blocks, 256, 0, env->stream>>>(dev, (int)t, (int64_t)count, lo,
                                                                 hi, seed, integral);
    if (cudaGetLastError() != cudaSuccess) return -1;
    return cudaStreamSynchronize(env->stream) == cudaSuccess ? 0 : -1;
}

int bench_fill(bench_env_t *env, void *dev, cuops_dtype_t t, size_t count, double lo, double hi)
{
    return bench_fill_any(env, dev, t, count, lo, hi, 0);
}

int bench_fill_integral(bench_env_t *env, void *dev, cuops_dtype_t t, size_t count, double lo,
                        double hi)
{
    return bench_fill_any(env, dev, t, count, lo, hi, 1);
}

int bench_poison(bench_env_t *env, void *dev, cuops_dtype_t t, size_t count)
{
    /* 0xFF.. is a NaN in f16, bf16, f32 and f64; integers get a pattern
     * that a correct scan of small inputs never produces everywhere */
    int byte = bv_dtype_is_int(t) ? 0xA5 : 0xFF;
    if (cudaMemsetAsync(dev, byte, count * bv_dtype_size(t), env->stream) != cudaSuccess)
        return -1;
    return cudaStreamSynchronize(env->stream) == cudaSuccess ? 0 : -1;
}

void *bench_to_host(const void *dev, size_t bytes)
{
    void *h = malloc(bytes ? bytes : 1);
    if (!h) return NULL;
    if (bytes && cudaMemcpy(h, dev, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
        free(h);
        return NULL;
    }
    return h;
}
