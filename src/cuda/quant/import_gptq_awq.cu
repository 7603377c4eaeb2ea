/*
 * import_gptq_awq.cu - GPU importers of 4-bit GPTQ and AWQ checkpoints into
 * the seed format of cuops_dequant_int4 (formats: docs/dequant.md). One-time
 * work, so the kernels are plain transposes with one thread per output unit;
 * threadIdx.x runs over the output row r, which is the contiguous index of
 * every checkpoint tensor, so the reads coalesce and the strided writes land
 * in L2.
 *
 *  GPTQ qweight [k/8, n]: word (i, r) holds W[r, 8i..8i+7] in nibble order,
 *    which is exactly output bytes 4i..4i+3 of row r (little-endian) - a
 *    32-bit transpose. Written byte by byte: ldq_out and the pointer may be
 *    unaligned.
 *  AWQ qweight [k, n/8]: byte b of row r gathers nibble slot(r%8) of words
 *    (2b, r/8) and (2b+1, r/8).
 *  scales / zeros: [groups, n] -> [n, groups]; GPTQ v1 adds 1 to each zero.
 *
 * GPTQ v1 with a stored zero of 15 cannot be represented; a check kernel runs
 * first and the call returns NOT_SUPPORTED (after a stream sync) before any
 * output is written, as the CPU importer does.
 */
#include <stdio.h>

#include "cuda/common/cuda_common.cuh"

#define IMPORT_THREADS 256

__device__ __forceinline__ uint32_t import_nibble(int32_t word, int slot)
{
    return ((uint32_t)word >> (4 * slot)) & 0xFu;
}

/* AWQ stores column offset o of a word in slot (o/2) + 4*(o%2). */
__device__ __forceinline__ int import_awq_slot(int o) { return (o >> 1) + ((o & 1) << 2); }

__global__ void __launch_bounds__(IMPORT_THREADS)
import_gptq_qweight_kernel(const int32_t *__restrict__ qweight, int64_t n, int64_t words_per_row,
                           uint8_t *__restrict__ out, int64_t ldq_out)
{
    const int64_t r = (int64_t)blockIdx.x * IMPORT_THREADS + threadIdx.x;
    if (r >= n) return;
    for (int64_t i = blockIdx.y; i < words_per_row; i += gridDim.y) {
        const uint32_t w = (uint32_t)__ldg(qweight + i * n + r);
        uint8_t *dst = out + r * ldq_out + 4 * i;
        dst[0] = (uint8_t)w;
        dst[1] = (uint8_t)(w >> 8);
        dst[2] = (uint8_t)(w >> 16);
        dst[3] = (uint8_t)(w >> 24);
    }
}

__global__ void __launch_bounds__(IMPORT_THREADS)
import_awq_qweight_kernel(const int32_t *__restrict__ qweight, int64_t n, int64_t k,
                          uint8_t *__restrict__ out, int64_t ldq_out)
{
    const int64_t r = (int64_t)blockIdx.x * IMPORT_THREADS + threadIdx.x;
    if (r >= n) return;
    const int64_t words = n / 8;
    const int slot = import_awq_slot((int)(r % 8));
    const int64_t row_bytes = (k + 1) / 2;
    for (int64_t b = blockIdx.y; b < row_bytes; b += gridDim.y) {
        const int64_t c = 2 * b;
        const uint32_t lo = import_nibble(__ldg(qweight + c * words + r / 8), slot);
        const uint32_t hi = (c + 1 < k) ? import_nibble(__ldg(qweight + (c + 1) * words + r / 8), slot) : 0u;
        out[r * ldq_out + b] = (uint8_t)(lo | (hi << 4));
    }
}

/* Sets *flag when any GPTQ v1 stored zero is 15. */
__global__ void __launch_bounds__(IMPORT_THREADS)
import_gptq_v1_check_kernel(const int32_t *__restrict__ qzeros, int64_t words, unsigned *flag)
{
    for (int64_t i = (int64_t)blockIdx.x * IMPORT_THREADS + threadIdx.x; i < words;
         i += (int64_t)gridDim.x * IMPORT_THREADS) {
        const uint32_t w = (uint32_t)__ldg(qzeros + i);
        /* a nibble is 15 iff all four of its bits are set */
        const uint32_t all = w & (w >> 1) & (w >> 2) & (w >> 3) & 0x11111111u;
        if (all) atomicOr(flag, 1u);
    }
}

template <int ES>
__global__ void __launch_bounds__(IMPORT_THREADS)
import_groups_kernel(const int32_t *__restrict__ qzeros, const uint8_t *__restrict__ scales, int64_t n,
                     int64_t ng, int awq, uint32_t zero_add, uint8_t *__restrict__ scales_out,
                     uint8_t *__restrict__ zeros_out)
{
    const int64_t r = (int64_t)blockIdx.x * IMPORT_THREADS + threadIdx.x;
    if (r >= n) return;
    const int slot = awq ? import_awq_slot((int)(r % 8)) : (int)(r % 8);
    for (int64_t g = blockIdx.y; g < ng; g += gridDim.y) {
        const uint32_t z = import_nibble(__ldg(qzeros + g * (n / 8) + r / 8), slot) + zero_add;
        zeros_out[r * ng + g] = (uint8_t)z;
        /* element copy byte by byte: scales_out may be unaligned */
        const uint8_t *src = scales + (g * n + r) * ES;
        uint8_t *dst = scales_out + (r * ng + g) * ES;
#pragma unroll
        for (int i = 0; i < ES; i++) dst[i] = __ldg(src + i);
    }
}

static dim3 import_grid(int64_t n, int64_t units)
{
    const int64_t gy = units < 65535 ? units : 65535;
    return dim3((unsigned)cuops_ceil_div(n, IMPORT_THREADS), (unsigned)(gy > 0 ? gy : 1));
}

extern "C" cuops_status_t cuops_cuda_import(struct cuops_handle *h, const cuops_import_desc_t *d)
{
    cudaStream_t st = cuops_stream(h);
    const int gptq = d->format == CUOPS_IMPORT_GPTQ;
    const int v1 = gptq && d->gptq_version == 1;
    if (cuops_ceil_div(d->n, IMPORT_THREADS) > 0x7fffffff)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "import: n = %lld is too large", (long long)d->n);

    if (v1) {
        void *ws = NULL;
        cuops_status_t s = cuops_cuda_workspace_aligned(h, sizeof(unsigned), sizeof(unsigned), &ws);
        if (s != CUOPS_STATUS_SUCCESS) return s;
        CUOPS_CUDA_TRY(h, cudaMemsetAsync(ws, 0, sizeof(unsigned), st));
        const int64_t words = d->num_groups * (d->n / 8);
        int64_t blocks = cuops_ceil_div(words, IMPORT_THREADS);
        if (blocks > 4096) blocks = 4096;
        import_gptq_v1_check_kernel<<<(unsigned)blocks, IMPORT_THREADS, 0, st>>>(d->qzeros, words, (unsigned *)ws);
        s = cuops_cuda_check_launch(h, "import_gptq_v1_check");
        if (s != CUOPS_STATUS_SUCCESS) return s;
        unsigned flag = 0;
        CUOPS_CUDA_TRY(h, cudaMemcpyAsync(&flag, ws, sizeof flag, cudaMemcpyDeviceToHost, st));
        CUOPS_CUDA_TRY(h, cudaStreamSynchronize(st));
        if (flag)
            return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                              "import_gptq: version 1 stores zero-1, and a stored zero is 15 (zero 16), "
                              "which the 0..15 zeros cannot hold");
    }

    if (gptq) {
        const int64_t words_per_row = d->k / 8;
        import_gptq_qweight_kernel<<<import_grid(d->n, words_per_row), IMPORT_THREADS, 0, st>>>(
            d->qweight, d->n, words_per_row, d->qweight_out, d->ldq_out);
    } else {
        import_awq_qweight_kernel<<<import_grid(d->n, (d->k + 1) / 2), IMPORT_THREADS, 0, st>>>(
            d->qweight, d->n, d->k, d->qweight_out, d->ldq_out);
    }
    cuops_status_t s = cuops_cuda_check_launch(h, gptq ? "import_gptq_qweight" : "import_awq_qweight");
    if (s != CUOPS_STATUS_SUCCESS) return s;

    const dim3 grid = import_grid(d->n, d->num_groups);
    const uint8_t *sin = (const uint8_t *)d->scales;
    uint8_t *sout = (uint8_t *)d->scales_out;
    const uint32_t add = v1 ? 1u : 0u;
    switch (cuops_dtype_size(d->scale_type)) {
    case 2:
        import_groups_kernel<2><<<grid, IMPORT_THREADS, 0, st>>>(d->qzeros, sin, d->n, d->num_groups, !gptq,
                                                                 add, sout, d->zeros_out);
        break;
    case 4:
        import_groups_kernel<4><<<grid, IMPORT_THREADS, 0, st>>>(d->qzeros, sin, d->n, d->num_groups, !gptq,
                                                                 add, sout, d->zeros_out);
        break;
    default:
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "import: scale type %s",
                          cuops_dtype_name(d->scale_type));
    }
    return cuops_cuda_check_launch(h, gptq ? "import_gptq" : "import_awq");
}
