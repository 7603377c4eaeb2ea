/*
 * gemm_sm90_pack.cu - operand packing for the Hopper GEMM, and its k == 0 case.
 *
 * The TMA + wgmma kernel reads both operands K-major through tensor maps,
 * which need a 16-byte-aligned base and a row stride that is a multiple of
 * 16 bytes. Any operand that is transposed (A with trans_a = T, B with
 * trans_b = N) or misaligned is first rewritten here into the handle's
 * workspace as a dense K-major [rows, ld] array, ld = k rounded up to 8
 * elements, zero-padded. Cost: one read and one write of the operand,
 * O(MK + NK) bytes against the GEMM's O(MNK) work (see docs/gemm.md).
 *
 * One kernel serves both sources: a 64 x 64 tile goes through shared memory
 * as tile[row][k] so the global writes are 16-byte row segments whatever the
 * source order. The tile row pitch is 66 halves = 33 words: 33 = 1 mod 32, so
 * the transposed fill (32 consecutive rows, one k) and the row read-out (4
 * rows x 8 threads of 4 consecutive words) each hit 32 distinct banks.
 */
#include "cuda/gemm/gemm_sm90.h"

#define PACK_TILE 64
#define PACK_PITCH_WORDS 33 /* 66 halves */
#define PACK_THREADS 256

template <bool SRC_K_MAJOR>
__global__ void __launch_bounds__(PACK_THREADS)
sm90_pack_kmajor_kernel(const uint16_t *__restrict__ src, int64_t lds, int64_t rows, int64_t k,
                        uint16_t *__restrict__ dst, int64_t ld_dst)
{
    __shared__ uint32_t tile_words[PACK_TILE * PACK_PITCH_WORDS];
    uint16_t *tile = (uint16_t *)tile_words;
    const int t = threadIdx.x;
    const int64_t r0 = (int64_t)blockIdx.x * PACK_TILE;
    const int64_t k_tiles = (ld_dst + PACK_TILE - 1) / PACK_TILE;

    for (int64_t kt = blockIdx.y; kt < k_tiles; kt += gridDim.y) {
        const int64_t k0 = kt * PACK_TILE;
        /* Fill: the fast-varying thread index walks the source's contiguous
         * dimension, so each warp reads 32 consecutive elements. */
        const int fast = t % PACK_TILE;
        for (int slow = t / PACK_TILE; slow < PACK_TILE; slow += PACK_THREADS / PACK_TILE) {
            int r_local, k_local;
            if (SRC_K_MAJOR) { r_local = slow; k_local = fast; }
            else             { r_local = fast; k_local = slow; }
            const int64_t r = r0 + r_local, c = k0 + k_local;
            uint16_t v = 0;
            if (r < rows && c < k)
                v = SRC_K_MAJOR ? src[r * lds + c] : src[c * lds + r];
            tile[r_local * (2 * PACK_PITCH_WORDS) + k_local] = v;
        }
        __syncthreads();
        /* Drain: 8 threads per row, 8 halves (16 bytes) each. */
        for (int pass = 0; pass < PACK_TILE / (PACK_THREADS / 8); pass++) {
            const int r_local = t / 8 + pass * (PACK_THREADS / 8);
            const int k_local = (t % 8) * 8;
            const int64_t r = r0 + r_local, c = k0 + k_local;
            if (r < rows && c < ld_dst) { /* ld_dst % 8 == 0: c < ld_dst implies c + 8 <= ld_dst */
                const uint32_t *w = tile_words + r_local * PACK_PITCH_WORDS + k_local / 2;
                uint4 out = make_uint4(w[0], w[1], w[2], w[3]);
                *(uint4 *)(dst + r * ld_dst + c) = out;
            }
        }
        __syncthreads();
    }
}

cuops_status_t cuops_sm90_pack_kmajor(struct cuops_handle *h, const void *src, int64_t lds,
                                      int src_k_major, int64_t rows, int64_t k, void *dst,
                                      int64_t ld_dst)
{
    if (!cuops_aligned(dst, 16) || ld_dst % 8 != 0 || ld_dst < k)
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "gemm sm90 pack: bad destination");
    const int64_t row_tiles = cuops_ceil_div(rows, PACK_TILE);
    const int64_t k_tiles = cuops_ceil_div(ld_dst, PACK_TILE);
    if (row_tiles > 0x7fffffff)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "gemm sm90 pack: %lld rows too many",
                          (long long)rows);
    dim3 grid((unsigned)row_tiles, (unsigned)(k_tiles < 65535 ? k_tiles : 65535));
    if (src_k_major)
        sm90_pack_kmajor_kernel<true><<<grid, PACK_THREADS, 0, cuops_stream(h)>>>(
            (const uint16_t *)src, lds, rows, k, (uint16_t *)dst, ld_dst);
    else
        sm90_pack_kmajor_kernel<false><<<grid, PACK_THREADS, 0, cuops_stream(h)>>>(
            (const uint16_t *)src, lds, rows, k, (uint16_t *)dst, ld_dst);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return cuops_cuda_fail(h, err, "sm90_pack_kmajor_kernel");
    return CUOPS_STATUS_SUCCESS;
}

/* ---- k == 0: C = beta * C ------------------------------------------------ */

template <typename T>
__global__ void sm90_scale_c_kernel(T *c, int64_t ldc, int64_t m, int64_t n, float beta)
{
    const int64_t total = m * n;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / n, col = i - r * n;
        T *p = c + r * ldc + col;
        const float v = (beta == 0.0f) ? 0.0f : beta * cuops_to_float(*p);
        *p = cuops_from_float<T>(v);
    }
}

cuops_status_t cuops_sm90_scale_c(struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    const int64_t total = d->m * d->n;
    int64_t blocks = cuops_ceil_div(total, 256);
    const int64_t cap = (int64_t)(h->num_sms > 0 ? h->num_sms : 1) * 16;
    if (blocks > cap) blocks = cap;
    dim3 grid((unsigned)blocks);
    cudaStream_t s = cuops_stream(h);
    switch (d->c_type) {
    case CUOPS_DTYPE_F16:
        sm90_scale_c_kernel<__half><<<grid, 256, 0, s>>>((__half *)d->c, d->ldc, d->m, d->n, d->beta);
        break;
    case CUOPS_DTYPE_BF16:
        sm90_scale_c_kernel<__nv_bfloat16><<<grid, 256, 0, s>>>((__nv_bfloat16 *)d->c, d->ldc, d->m,
                                                                d->n, d->beta);
        break;
    default:
        sm90_scale_c_kernel<float><<<grid, 256, 0, s>>>((float *)d->c, d->ldc, d->m, d->n, d->beta);
        break;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return cuops_cuda_fail(h, err, "sm90_scale_c_kernel");
    return CUOPS_STATUS_SUCCESS;
}
