/*
 * scan_reduce_then_scan.cu - the classic three-kernel multi-block scan with
 * the fast tile of the default scan (scan_primitives.cuh: 256 threads, 32 KB
 * striped tiles, 16-byte loads when in and out are 16-byte aligned):
 *   1. reduce every tile to its total (reads n);
 *   2. exclusive-scan the tile totals, recursively with the same three steps
 *      (n / 8192 values for 4-byte types: negligible);
 *   3. scan every tile again, starting from its offset (reads n, writes n).
 * 3n elements moved against the look-back scan's 2n, so its ceiling is 2/3 of
 * the copy rate; what it shows is that a second launch and a second read
 * cost ~1/3, and that without a look-back no tile ever waits on another.
 * Deterministic: every float combine is in a fixed order.
 */
#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_primitives.cuh"

/* One CTA per tile: n <= 2^40 gives at most 2^28 tiles, within the grid limit. */

template <typename T, int OP, int VEC, int NV>
__global__ void __launch_bounds__(SCAN_BLOCK)
rts_tile_reduce_kernel(const T *in, int64_t n, T *tile_sums)
{
    constexpr int SEGMENT = 32 * VEC * NV;
    constexpr int64_t TILE = (int64_t)SCAN_BLOCK * VEC * NV;
    __shared__ T s_warp[SCAN_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    {
        const int64_t tile = blockIdx.x;
        const int64_t tile_base = tile * TILE;
        T x[NV][VEC];
        tile_load<T, OP, VEC, NV>(in, n, tile_base + (int64_t)warp * SEGMENT, lane,
                                  tile_base + TILE <= n, x);
        T t = x[0][0];
#pragma unroll
        for (int j = 0; j < NV; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++)
                if (j != 0 || k != 0) t = scan_combine<T, OP>(t, x[j][k]);
        t = block_reduce<T, OP, SCAN_BLOCK>(t, s_warp);
        if (threadIdx.x == 0) tile_sums[tile] = t;
    }
}

template <typename T, int OP, int VEC, int NV>
/* at 80 registers ptxas spills the float min/max instances; 128 keeps 2 CTAs/SM */
__global__ void __maxnreg__(128)
rts_tile_scan_kernel(const T *in, T *out, int64_t n, int exclusive, const T *tile_offsets)
{
    constexpr int SEGMENT = 32 * VEC * NV;
    constexpr int64_t TILE = (int64_t)SCAN_BLOCK * VEC * NV;
    __shared__ T s_warp[SCAN_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    {
        const int64_t tile = blockIdx.x;
        const int64_t tile_base = tile * TILE;
        const bool full = tile_base + TILE <= n;
        const int64_t segment = tile_base + (int64_t)warp * SEGMENT;
        T x[NV][VEC];
        T pre[NV];
        tile_load<T, OP, VEC, NV>(in, n, segment, lane, full, x);
        const T segment_total = segment_scan<T, OP, VEC, NV>(x, pre, lane);
        if (lane == 0) s_warp[warp] = segment_total;
        __syncthreads();
        if (warp == 0) {
            const T offset = tile_offsets != NULL ? tile_offsets[tile] : scan_identity<T, OP>();
            const T w = lane < SCAN_WARPS ? s_warp[lane] : scan_identity<T, OP>();
            const T w_incl = warp_scan_inclusive<T, OP>(w, lane);
            const T w_excl = __shfl_up_sync(SCAN_FULL_MASK, w_incl, 1);
            if (lane < SCAN_WARPS) /* own slot only */
                s_warp[lane] = lane == 0 ? offset : scan_combine<T, OP>(offset, w_excl);
        }
        __syncthreads();
        segment_apply_prefix<T, OP, VEC, NV>(x, pre, s_warp[warp], exclusive);
        tile_store<T, VEC, NV>(out, n, segment, lane, full, x);
    }
}

static unsigned rts_grid(int64_t tiles) { return (unsigned)tiles; }

template <typename T, int OP, int VEC, int NV>
static cuops_status_t rts_level(struct cuops_handle *h, const T *in, T *out, int64_t n,
                                int exclusive, char *ws, const char *name)
{
    constexpr int64_t TILE = (int64_t)SCAN_BLOCK * VEC * NV;
    cudaStream_t stream = cuops_stream(h);
    const int64_t tiles = cuops_ceil_div(n, TILE);
    T *sums = NULL;
    if (tiles > 1) {
        sums = (T *)ws;
        ws += cuops_align256((size_t)tiles * sizeof(T));
        rts_tile_reduce_kernel<T, OP, VEC, NV><<<rts_grid(tiles), SCAN_BLOCK, 0, stream>>>(
            in, n, sums);
        cuops_status_t st = cuops_cuda_check_launch(h, name);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        /* the totals live in the 256-byte aligned workspace: vector path */
        st = rts_level<T, OP, SCAN_VEC(T), SCAN_NV_VEC>(h, sums, sums, tiles, 1, ws, name);
        if (st != CUOPS_STATUS_SUCCESS) return st;
    }
    rts_tile_scan_kernel<T, OP, VEC, NV><<<rts_grid(tiles), SCAN_BLOCK, 0, stream>>>(
        in, out, n, exclusive, sums);
    return cuops_cuda_check_launch(h, name);
}

/* Workspace for every level: the first with the caller's tile, the rest
 * with the vector tile. */
template <typename T>
static size_t rts_workspace_bytes(int64_t n, int64_t first_tile)
{
    const int64_t vec_tile = (int64_t)SCAN_BLOCK * SCAN_VEC(T) * SCAN_NV_VEC;
    size_t bytes = 256;
    int64_t m = n, tile = first_tile;
    while (m > tile) {
        m = cuops_ceil_div(m, tile);
        bytes += cuops_align256((size_t)m * sizeof(T));
        tile = vec_tile;
    }
    return bytes;
}

template <typename T, int OP, int VEC, int NV>
static cuops_status_t rts_run(struct cuops_handle *h, const cuops_scan_desc_t *d, const char *name)
{
    const size_t bytes = rts_workspace_bytes<T>(d->n, (int64_t)SCAN_BLOCK * VEC * NV);
    char *base = NULL;
    if (bytes > 256) {
        void *ws = NULL;
        cuops_status_t st = cuops_cuda_workspace(h, bytes, &ws);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        base = (char *)(((uintptr_t)ws + 255) & ~(uintptr_t)255);
    }
    return rts_level<T, OP, VEC, NV>(h, (const T *)d->in, (T *)d->out, d->n, d->exclusive, base,
                                     name);
}

template <typename T, int OP>
static cuops_status_t rts_typed(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    if (cuops_aligned(d->in, 16) && cuops_aligned(d->out, 16))
        return rts_run<T, OP, SCAN_VEC(T), SCAN_NV_VEC>(h, d, "scan_reduce_then_scan_vec16");
    return rts_run<T, OP, 1, SCAN_NV_SCALAR(T)>(h, d, "scan_reduce_then_scan_scalar");
}

cuops_status_t cuops_scan_reduce_then_scan_launch(struct cuops_handle *h,
                                                  const cuops_scan_desc_t *d)
{
    return SCAN_TYPE_OP_CALL(d->type, d->op,
                             cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: dtype %s",
                                        cuops_dtype_name(d->type)),
                             rts_typed, h, d);
}
