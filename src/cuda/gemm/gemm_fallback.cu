/*
 * gemm_fallback.cu - "fallback_tiled": the GEMM that serves every call the
 * API accepts, last in every preference list.
 *
 * C = alpha * op(A) * op(B) + beta * C with ab F16/BF16/F32 and c F16/BF16/F32
 * (F32 ab with F32 c only), all four transposes, any m, n, k (k == 0 gives
 * beta*C), any leading dimension, any pointer alignment (scalar loads and
 * stores), 64-bit offsets everywhere, fp32 accumulation. beta == 0 never
 * reads C, so C may hold NaN.
 *
 * Shape of the work: a 64x64 CTA tile, 256 threads, 4x4 outputs per thread,
 * K in steps of 16 through shared memory (converted to fp32 on the way in).
 * It is a correctness path, a few TFLOP/s; the fast kernels are elsewhere.
 *
 * Grid: the larger tile count goes on grid.x (2^31-1 blocks), the smaller on
 * grid.y (65535); both loop, so m = 1, n = 2^20 and m = 2^22, n = 1 work.
 *
 * Force it with cuops_options_t.variant = "fallback_tiled".
 */
#include <limits.h>

#include "cuda/common/cuda_common.cuh"
#include "cuda/gemm/gemm_tuning.h"

#define FB_TILE_M 64
#define FB_TILE_N 64
#define FB_TILE_K 16
#define FB_THREADS 256
/* 16 x 16 threads, each owning rows ty + 16*r and columns tx + 16*c */
#define FB_THREADS_X 16
#define FB_PER_THREAD 4

/*
 * Shared tiles hold fp32, [k][m] and [k][n]. Compute reads: a warp covers two
 * thread rows (ty) and 16 thread columns (tx): the A read is a broadcast of two
 * words, the B read is 16 consecutive words, both conflict-free. The +1 pad
 * spreads the transposed stores (A with trans_a = N, B with trans_b = T) over
 * the banks instead of piling 16 k values of one row onto one bank.
 */
template <typename TAB, typename TC>
__global__ void __launch_bounds__(FB_THREADS)
gemm_fallback_kernel(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                     const TAB *__restrict__ a, int64_t lda, const TAB *__restrict__ b,
                     int64_t ldb, float beta, TC *__restrict__ c, int64_t ldc, int m_on_x,
                     int64_t tiles_x, int64_t tiles_y)
{
    __shared__ float a_tile[FB_TILE_K][FB_TILE_M + 1];
    __shared__ float b_tile[FB_TILE_K][FB_TILE_N + 1];

    const int tid = threadIdx.x;
    const int tx = tid % FB_THREADS_X;
    const int ty = tid / FB_THREADS_X;

    for (int64_t grid_y = blockIdx.y; grid_y < tiles_y; grid_y += gridDim.y) {
        for (int64_t grid_x = blockIdx.x; grid_x < tiles_x; grid_x += gridDim.x) {
            const int64_t m0 = (m_on_x ? grid_x : grid_y) * FB_TILE_M;
            const int64_t n0 = (m_on_x ? grid_y : grid_x) * FB_TILE_N;

            float acc[FB_PER_THREAD][FB_PER_THREAD];
#pragma unroll
            for (int r = 0; r < FB_PER_THREAD; r++)
#pragma unroll
                for (int q = 0; q < FB_PER_THREAD; q++) acc[r][q] = 0.0f;

            for (int64_t k0 = 0; k0 < k; k0 += FB_TILE_K) {
                /* 64x16 elements of op(A), 4 per thread; consecutive threads walk
                 * the stored row (k for N, m for T) so global reads coalesce. */
#pragma unroll
                for (int r = 0; r < (FB_TILE_M * FB_TILE_K) / FB_THREADS; r++) {
                    const int l = tid + r * FB_THREADS;
                    int i, kk;
                    if (trans_a == CUOPS_OP_N) { kk = l % FB_TILE_K; i = l / FB_TILE_K; }
                    else                       { i = l % FB_TILE_M; kk = l / FB_TILE_M; }
                    const int64_t gi = m0 + i, gk = k0 + kk;
                    float v = 0.0f;
                    if (gi < m && gk < k)
                        v = cuops_to_float(trans_a == CUOPS_OP_N ? a[gi * lda + gk]
                                                                 : a[gk * lda + gi]);
                    a_tile[kk][i] = v;
                }
                /* 16x64 elements of op(B). */
#pragma unroll
                for (int r = 0; r < (FB_TILE_N * FB_TILE_K) / FB_THREADS; r++) {
                    const int l = tid + r * FB_THREADS;
                    int j, kk;
                    if (trans_b == CUOPS_OP_N) { j = l % FB_TILE_N; kk = l / FB_TILE_N; }
                    else                       { kk = l % FB_TILE_K; j = l / FB_TILE_K; }
                    const int64_t gj = n0 + j, gk = k0 + kk;
                    float v = 0.0f;
                    if (gj < n && gk < k)
                        v = cuops_to_float(trans_b == CUOPS_OP_N ? b[gk * ldb + gj]
                                                                 : b[gj * ldb + gk]);
                    b_tile[kk][j] = v;
                }
                __syncthreads();
#pragma unroll
                for (int kk = 0; kk < FB_TILE_K; kk++) {
                    float av[FB_PER_THREAD], bv[FB_PER_THREAD];
#pragma unroll
                    for (int r = 0; r < FB_PER_THREAD; r++) av[r] = a_tile[kk][ty + 16 * r];
#pragma unroll
                    for (int q = 0; q < FB_PER_THREAD; q++) bv[q] = b_tile[kk][tx + 16 * q];
#pragma unroll
                    for (int r = 0; r < FB_PER_THREAD; r++)
#pragma unroll
                        for (int q = 0; q < FB_PER_THREAD; q++)
                            acc[r][q] = fmaf(av[r], bv[q], acc[r][q]);
                }
                /* the next tile overwrites what this one read */
                __syncthreads();
            }

#pragma unroll
            for (int r = 0; r < FB_PER_THREAD; r++) {
                const int64_t gi = m0 + ty + 16 * r;
                if (gi >= m) continue;
#pragma unroll
                for (int q = 0; q < FB_PER_THREAD; q++) {
                    const int64_t gj = n0 + tx + 16 * q;
                    if (gj >= n) continue;
                    TC *out = c + gi * ldc + gj;
                    float v = alpha * acc[r][q];
                    if (beta != 0.0f) v = fmaf(beta, cuops_to_float(*out), v);
                    *out = cuops_from_float<TC>(v);
                }
            }
        }
    }
}

template <typename TAB, typename TC>
static cuops_status_t launch_typed(struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    const int64_t tiles_m = cuops_ceil_div(d->m, FB_TILE_M);
    const int64_t tiles_n = cuops_ceil_div(d->n, FB_TILE_N);
    const int m_on_x = tiles_m >= tiles_n;
    const int64_t tiles_x = m_on_x ? tiles_m : tiles_n;
    const int64_t tiles_y = m_on_x ? tiles_n : tiles_m;
    dim3 grid((unsigned)(tiles_x < INT_MAX ? tiles_x : INT_MAX),
              (unsigned)(tiles_y < 65535 ? tiles_y : 65535), 1);
    gemm_fallback_kernel<TAB, TC><<<grid, FB_THREADS, 0, cuops_stream(h)>>>(
        (int)d->trans_a, (int)d->trans_b, d->m, d->n, d->k, d->alpha, (const TAB *)d->a, d->lda,
        (const TAB *)d->b, d->ldb, d->beta, (TC *)d->c, d->ldc, m_on_x, tiles_x, tiles_y);
    return cuops_cuda_check_launch(h, "fallback_tiled");
}

template <typename TAB>
static cuops_status_t launch_for_c(struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    switch (d->c_type) {
    case CUOPS_DTYPE_F16: return launch_typed<TAB, __half>(h, d);
    case CUOPS_DTYPE_BF16: return launch_typed<TAB, __nv_bfloat16>(h, d);
    case CUOPS_DTYPE_F32: return launch_typed<TAB, float>(h, d);
    default: break;
    }
    return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "fallback_tiled: c_type %s",
                      cuops_dtype_name(d->c_type));
}

static int fallback_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    if (h->sm_major < 8) return 0;
    const int c_ok = d->c_type == CUOPS_DTYPE_F16 || d->c_type == CUOPS_DTYPE_BF16 ||
                     d->c_type == CUOPS_DTYPE_F32;
    if (d->ab_type == CUOPS_DTYPE_F16 || d->ab_type == CUOPS_DTYPE_BF16) return c_ok;
    if (d->ab_type == CUOPS_DTYPE_F32) return d->c_type == CUOPS_DTYPE_F32;
    return 0;
}

static cuops_status_t fallback_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                      const cuops_options_t *opt)
{
    (void)opt; /* no split-K, no study flags: one plain schedule */
    if (!fallback_supports(h, d))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "fallback_tiled: ab=%s c=%s",
                          cuops_dtype_name(d->ab_type), cuops_dtype_name(d->c_type));
    switch (d->ab_type) {
    case CUOPS_DTYPE_F16: return launch_for_c<__half>(h, d);
    case CUOPS_DTYPE_BF16: return launch_for_c<__nv_bfloat16>(h, d);
    default: return launch_typed<float, float>(h, d);
    }
}

extern "C" const cuops_gemm_kernel_t cuops_gemm_fallback_tiled = {
    "fallback_tiled", fallback_supports, fallback_launch};
