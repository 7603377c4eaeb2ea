/*
 * reduce_textbook.cu - seed 002's reduction ladder, as forced variants of
 * cuops_reduce_ex: each block reduces 256 consecutive elements (one per
 * thread) with a tree, one partial per block, one launch per level until a
 * single value is left (n = 2^30: 2^22 -> 2^14 -> 64 -> 1).
 *
 *   interleaved_divergent  if (tid % (2s) == 0) s[tid] op= s[tid + s]
 *                          active threads are scattered over every warp, so
 *                          all 8 warps stay busy at every level (divergence)
 *                          and the modulo costs ~20 instructions.
 *   interleaved_strided    i = 2*s*tid; if (i < 256) s[i] op= s[i + s]
 *                          active threads are packed into the first warps, but
 *                          the stride of 2s words puts lanes on the same
 *                          bank: 2-way conflicts at s = 1, 8-way at s = 4
 *                          (4-byte types).
 *   sequential_addressing  if (tid < s) s[tid] op= s[tid + s], s halving
 *                          consecutive threads read consecutive words: no
 *                          conflicts, no divergence until s < 32.
 *   warp_shuffle           shfl_down tree inside each warp (no shared memory,
 *                          no barrier), one shared-memory exchange of the
 *                          8 warp totals.
 * All four still read each element with a scalar load and keep only one load
 * in flight per thread: with 256 threads x 4 B per CTA the bytes in flight per
 * SM are a fraction of what Little's law asks, which is the step the default
 * "vectorized" kernel (reduce.cu) takes. Beyond 2^28 elements the first level
 * caps its grid at 2^20 blocks and each thread folds several elements
 * (grid-stride) before the tree.
 *
 * Every type and op; any alignment; deterministic (fixed trees, no atomics).
 */
#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_primitives.cuh"

#define TEXTBOOK_REDUCE_BLOCK 256
#define TEXTBOOK_REDUCE_MAX_GRID (1 << 20)

template <typename T, int OP, int ALGO>
__global__ void __launch_bounds__(TEXTBOOK_REDUCE_BLOCK)
reduce_textbook_kernel(const T *in, int64_t n, T *out)
{
    __shared__ T s[TEXTBOOK_REDUCE_BLOCK];
    const unsigned tid = threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * TEXTBOOK_REDUCE_BLOCK;
    T x = scan_identity<T, OP>();
    for (int64_t i = (int64_t)blockIdx.x * TEXTBOOK_REDUCE_BLOCK + tid; i < n; i += stride)
        x = scan_combine<T, OP>(x, in[i]);

    if (ALGO == REDUCE_ALGO_WARP_SHUFFLE) {
        const int lane = tid & 31, warp = tid >> 5;
        x = warp_reduce<T, OP>(x);
        if (lane == 0) s[warp] = x;
        __syncthreads();
        if (warp == 0) {
            x = lane < TEXTBOOK_REDUCE_BLOCK / 32 ? s[lane] : scan_identity<T, OP>();
            x = warp_reduce<T, OP>(x);
            if (lane == 0) out[blockIdx.x] = x;
        }
        return;
    }

    s[tid] = x;
    __syncthreads();
    if (ALGO == REDUCE_ALGO_INTERLEAVED_DIVERGENT) {
        for (unsigned step = 1; step < TEXTBOOK_REDUCE_BLOCK; step *= 2) {
            if (tid % (2 * step) == 0) s[tid] = scan_combine<T, OP>(s[tid], s[tid + step]);
            __syncthreads();
        }
    } else if (ALGO == REDUCE_ALGO_INTERLEAVED_STRIDED) {
        for (unsigned step = 1; step < TEXTBOOK_REDUCE_BLOCK; step *= 2) {
            const unsigned i = 2 * step * tid;
            if (i < TEXTBOOK_REDUCE_BLOCK) s[i] = scan_combine<T, OP>(s[i], s[i + step]);
            __syncthreads();
        }
    } else {
        for (unsigned step = TEXTBOOK_REDUCE_BLOCK / 2; step > 0; step >>= 1) {
            if (tid < step) s[tid] = scan_combine<T, OP>(s[tid], s[tid + step]);
            __syncthreads();
        }
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

static const char *const textbook_reduce_names[] = {
    "reduce_interleaved_divergent", "reduce_interleaved_strided",
    "reduce_sequential_addressing", "reduce_warp_shuffle"};

static int64_t textbook_grid(int64_t n)
{
    int64_t g = cuops_ceil_div(n, TEXTBOOK_REDUCE_BLOCK);
    if (g > TEXTBOOK_REDUCE_MAX_GRID) g = TEXTBOOK_REDUCE_MAX_GRID;
    return g < 1 ? 1 : g;
}

template <typename T, int OP, int ALGO>
static cuops_status_t textbook_levels(struct cuops_handle *h, const cuops_reduce_desc_t *d)
{
    cudaStream_t stream = cuops_stream(h);
    int64_t grid = textbook_grid(d->n);
    /* ping-pong buffers for the partials of each level */
    T *buf[2] = {NULL, NULL};
    if (grid > 1) {
        const size_t first = cuops_align256((size_t)grid * sizeof(T));
        const size_t second = cuops_align256((size_t)textbook_grid(grid) * sizeof(T));
        void *ws = NULL;
        cuops_status_t st = cuops_cuda_workspace(h, 256 + first + second, &ws);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        char *base = (char *)(((uintptr_t)ws + 255) & ~(uintptr_t)255);
        buf[0] = (T *)base;
        buf[1] = (T *)(base + first);
    }
    const T *src = (const T *)d->in;
    int64_t m = d->n;
    for (int level = 0;; level++) {
        T *dst = grid == 1 ? (T *)d->out : buf[level & 1];
        reduce_textbook_kernel<T, OP, ALGO><<<(unsigned)grid, TEXTBOOK_REDUCE_BLOCK, 0, stream>>>(
            src, m, dst);
        cuops_status_t st = cuops_cuda_check_launch(h, textbook_reduce_names[ALGO]);
        if (st != CUOPS_STATUS_SUCCESS || grid == 1) return st;
        src = dst;
        m = grid;
        grid = textbook_grid(m);
    }
}

template <typename T, int OP>
static cuops_status_t textbook_typed(struct cuops_handle *h, const cuops_reduce_desc_t *d, int algo)
{
    switch (algo) {
    case REDUCE_ALGO_INTERLEAVED_DIVERGENT:
        return textbook_levels<T, OP, REDUCE_ALGO_INTERLEAVED_DIVERGENT>(h, d);
    case REDUCE_ALGO_INTERLEAVED_STRIDED:
        return textbook_levels<T, OP, REDUCE_ALGO_INTERLEAVED_STRIDED>(h, d);
    case REDUCE_ALGO_SEQUENTIAL:
        return textbook_levels<T, OP, REDUCE_ALGO_SEQUENTIAL>(h, d);
    case REDUCE_ALGO_WARP_SHUFFLE:
        return textbook_levels<T, OP, REDUCE_ALGO_WARP_SHUFFLE>(h, d);
    }
    return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "reduce: unknown textbook algorithm %d", algo);
}

cuops_status_t cuops_reduce_textbook_launch(struct cuops_handle *h, const cuops_reduce_desc_t *d,
                                            int algo)
{
    return SCAN_TYPE_OP_CALL(d->type, d->op,
                             cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "reduce: dtype %s",
                                        cuops_dtype_name(d->type)),
                             textbook_typed, h, d, algo);
}
