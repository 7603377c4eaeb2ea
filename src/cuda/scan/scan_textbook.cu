/*
 * scan_textbook.cu - seed 002's block scans, as forced variants of
 * cuops_scan_ex, each made multi-block the textbook way (scan-then-propagate):
 *   1. scan every tile on its own, write it, and write the tile's total;
 *   2. exclusive-scan the tile totals (the same three steps, recursively,
 *      until they fit one tile);
 *   3. combine each tile's offset into its elements (read + write again).
 * That moves 4n elements (plus the small totals) against the look-back
 * scan's 2n: the ladder's first lesson is traffic, not arithmetic.
 *
 * Block algorithms (512 threads, scalar coalesced loads, any alignment):
 *   blelloch_smem         Blelloch up-sweep/down-sweep on a 1024-element tile
 *                         in shared memory (2 elements per thread). The tree
 *                         strides 2^d words apart, so level d has 2^d-way bank
 *                         conflicts (up to 32-way) on 4-byte types.
 *   blelloch_smem_padded  the same with index + (index >> 5): one pad word per
 *                         32 moves elements 32 apart onto different banks, so
 *                         the strided tree accesses spread out (GPU Gems 3,
 *                         ch. 39). For 8-byte types a pad of one element is
 *                         two banks, which removes fewer conflicts.
 *   warp_shuffle          one element per thread: a 5-step shuffle scan per
 *                         warp, one warp scans the 16 warp totals; no tree in
 *                         shared memory, two barriers per tile.
 * Tiles beyond 2^20 per level are walked by a grid-stride loop. Deterministic
 * (fixed trees, no atomics). In place works: a tile is read whole before it
 * is written and tiles are disjoint.
 */
#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_primitives.cuh"

#define TEXTBOOK_SCAN_BLOCK 512
#define TEXTBOOK_MAX_GRID (1 << 20)
#define ADD_OFFSETS_BLOCK 256

template <int ALGO> struct textbook_tile {
    static constexpr int elems = ALGO == SCAN_ALGO_WARP_SHUFFLE ? TEXTBOOK_SCAN_BLOCK
                                                                : 2 * TEXTBOOK_SCAN_BLOCK;
    static constexpr int smem = ALGO == SCAN_ALGO_WARP_SHUFFLE ? 32
                                : ALGO == SCAN_ALGO_BLELLOCH_PADDED ? elems + elems / 32
                                                                    : elems;
};

template <int ALGO> static __device__ __forceinline__ int smem_index(int i)
{
    return ALGO == SCAN_ALGO_BLELLOCH_PADDED ? i + (i >> 5) : i;
}

/* Blelloch work-efficient scan of TILE elements in s[] (BLOCK = TILE/2
 * threads): leaves the exclusive scan in s[] and returns the total. */
template <typename T, int OP, int ALGO>
static __device__ __forceinline__ T blelloch_block_scan(T *s, T *s_total)
{
    constexpr int TILE = textbook_tile<ALGO>::elems;
    const int tid = threadIdx.x;
    int offset = 1;
    for (int d = TILE >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            const int ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
            s[smem_index<ALGO>(bi)] =
                scan_combine<T, OP>(s[smem_index<ALGO>(ai)], s[smem_index<ALGO>(bi)]);
        }
        offset <<= 1;
    }
    __syncthreads();
    if (tid == 0) {
        *s_total = s[smem_index<ALGO>(TILE - 1)];
        s[smem_index<ALGO>(TILE - 1)] = scan_identity<T, OP>();
    }
    for (int d = 1; d < TILE; d <<= 1) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            const int ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
            /* left child gets the parent's prefix, right child the parent's
             * prefix combined with the left subtree */
            const T left = s[smem_index<ALGO>(ai)];
            s[smem_index<ALGO>(ai)] = s[smem_index<ALGO>(bi)];
            s[smem_index<ALGO>(bi)] = scan_combine<T, OP>(s[smem_index<ALGO>(bi)], left);
        }
    }
    __syncthreads();
    return *s_total;
}

template <typename T, int OP, int ALGO>
__global__ void __launch_bounds__(TEXTBOOK_SCAN_BLOCK)
scan_textbook_kernel(const T *in, T *out, int64_t n, int exclusive, T *tile_sums, int64_t tiles)
{
    constexpr int TILE = textbook_tile<ALGO>::elems;
    __shared__ T s[textbook_tile<ALGO>::smem];
    __shared__ T s_total;
    const int tid = threadIdx.x;

    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t base = tile * TILE;
        T total;
        if (ALGO == SCAN_ALGO_WARP_SHUFFLE) {
            const int lane = tid & 31, warp = tid >> 5;
            constexpr int WARPS = TEXTBOOK_SCAN_BLOCK / 32;
            const int64_t i = base + tid;
            const T x = i < n ? in[i] : scan_identity<T, OP>();
            const T incl = warp_scan_inclusive<T, OP>(x, lane);
            if (lane == 31) s[warp] = incl;
            __syncthreads();
            if (warp == 0) {
                const T w = lane < WARPS ? s[lane] : scan_identity<T, OP>();
                const T w_incl = warp_scan_inclusive<T, OP>(w, lane);
                if (lane < WARPS) s[lane] = w_incl; /* own slot only */
            }
            __syncthreads();
            const T warp_prefix = warp == 0 ? scan_identity<T, OP>() : s[warp - 1];
            const T excl_up = __shfl_up_sync(SCAN_FULL_MASK, incl, 1);
            const T lane_excl = lane == 0 ? scan_identity<T, OP>() : excl_up;
            const T y = scan_combine<T, OP>(warp_prefix, exclusive ? lane_excl : incl);
            if (i < n) out[i] = y;
            total = s[WARPS - 1];
        } else {
            const int i0 = tid, i1 = tid + TEXTBOOK_SCAN_BLOCK;
            const T x0 = base + i0 < n ? in[base + i0] : scan_identity<T, OP>();
            const T x1 = base + i1 < n ? in[base + i1] : scan_identity<T, OP>();
            s[smem_index<ALGO>(i0)] = x0;
            s[smem_index<ALGO>(i1)] = x1;
            total = blelloch_block_scan<T, OP, ALGO>(s, &s_total);
            const T e0 = s[smem_index<ALGO>(i0)], e1 = s[smem_index<ALGO>(i1)];
            if (base + i0 < n) out[base + i0] = exclusive ? e0 : scan_combine<T, OP>(e0, x0);
            if (base + i1 < n) out[base + i1] = exclusive ? e1 : scan_combine<T, OP>(e1, x1);
        }
        if (tile_sums != NULL && tid == 0) tile_sums[tile] = total;
        __syncthreads(); /* s and s_total are reused by the next tile */
    }
}

/* out[i] = offsets[i / TILE] op out[i] for every element past tile 0 (whose
 * offset is the identity). */
template <typename T, int OP, int TILE>
__global__ void __launch_bounds__(ADD_OFFSETS_BLOCK)
scan_add_offsets_kernel(T *out, int64_t n, const T *offsets)
{
    const int64_t stride = (int64_t)gridDim.x * ADD_OFFSETS_BLOCK;
    for (int64_t i = TILE + (int64_t)blockIdx.x * ADD_OFFSETS_BLOCK + threadIdx.x; i < n;
         i += stride)
        out[i] = scan_combine<T, OP>(offsets[i / TILE], out[i]);
}

static const char *const textbook_scan_names[] = {"scan_blelloch_smem", "scan_blelloch_smem_padded",
                                                  "scan_warp_shuffle"};

static unsigned grid_for(int64_t blocks)
{
    return (unsigned)(blocks < TEXTBOOK_MAX_GRID ? (blocks < 1 ? 1 : blocks) : TEXTBOOK_MAX_GRID);
}

template <typename T, int OP, int ALGO>
static cuops_status_t textbook_level(struct cuops_handle *h, const T *in, T *out, int64_t n,
                                     int exclusive, char *ws)
{
    constexpr int TILE = textbook_tile<ALGO>::elems;
    cudaStream_t stream = cuops_stream(h);
    const char *name = textbook_scan_names[ALGO];
    const int64_t tiles = cuops_ceil_div(n, TILE);
    if (tiles == 1) {
        scan_textbook_kernel<T, OP, ALGO><<<1, TEXTBOOK_SCAN_BLOCK, 0, stream>>>(in, out, n, exclusive,
                                                                              NULL, 1);
        return cuops_cuda_check_launch(h, name);
    }
    T *sums = (T *)ws;
    ws += cuops_align256((size_t)tiles * sizeof(T));
    scan_textbook_kernel<T, OP, ALGO><<<grid_for(tiles), TEXTBOOK_SCAN_BLOCK, 0, stream>>>(
        in, out, n, exclusive, sums, tiles);
    cuops_status_t st = cuops_cuda_check_launch(h, name);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = textbook_level<T, OP, ALGO>(h, sums, sums, tiles, 1, ws);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    scan_add_offsets_kernel<T, OP, TILE>
        <<<grid_for(cuops_ceil_div(n - TILE, ADD_OFFSETS_BLOCK)), ADD_OFFSETS_BLOCK, 0, stream>>>(
            out, n, sums);
    return cuops_cuda_check_launch(h, name);
}

template <typename T, int OP, int ALGO>
static cuops_status_t textbook_run(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    constexpr int TILE = textbook_tile<ALGO>::elems;
    size_t bytes = 256;
    for (int64_t m = d->n; m > TILE;) {
        m = cuops_ceil_div(m, TILE);
        bytes += cuops_align256((size_t)m * sizeof(T));
    }
    char *base = NULL;
    if (bytes > 256) {
        void *ws = NULL;
        cuops_status_t st = cuops_cuda_workspace(h, bytes, &ws);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        base = (char *)(((uintptr_t)ws + 255) & ~(uintptr_t)255);
    }
    return textbook_level<T, OP, ALGO>(h, (const T *)d->in, (T *)d->out, d->n, d->exclusive, base);
}

template <typename T, int OP>
static cuops_status_t textbook_typed(struct cuops_handle *h, const cuops_scan_desc_t *d, int algo)
{
    switch (algo) {
    case SCAN_ALGO_BLELLOCH: return textbook_run<T, OP, SCAN_ALGO_BLELLOCH>(h, d);
    case SCAN_ALGO_BLELLOCH_PADDED: return textbook_run<T, OP, SCAN_ALGO_BLELLOCH_PADDED>(h, d);
    case SCAN_ALGO_WARP_SHUFFLE: return textbook_run<T, OP, SCAN_ALGO_WARP_SHUFFLE>(h, d);
    }
    return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "scan: unknown textbook algorithm %d", algo);
}

cuops_status_t cuops_scan_textbook_launch(struct cuops_handle *h, const cuops_scan_desc_t *d,
                                          int algo)
{
    return SCAN_TYPE_OP_CALL(d->type, d->op,
                             cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: dtype %s",
                                        cuops_dtype_name(d->type)),
                             textbook_typed, h, d, algo);
}
