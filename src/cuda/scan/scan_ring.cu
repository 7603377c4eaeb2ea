/*
 * scan_ring.cu - "ring" and "ring_64k": a single-pass scan whose CTAs never
 * wait on a chain of look-backs while their SM's memory pipe runs dry.
 *
 * Why. In the look-back scans (scan_lookback.cu) a CTA holds its tile while
 * it waits for its predecessors' prefixes, and the CTA slot issues no loads
 * until the wait ends and a new CTA starts: ncu put 47 % of the samples of
 * `lookback` at the barrier after the look-back, and every look-back scan of
 * cuops (and CUB's) stays at 68-73 % of the copy bandwidth on the H200.
 *
 * Here G persistent CTAs (every one resident: a cooperative launch) take the
 * tiles round-robin, tile t = k * G + b for CTA b in round k, and each thread
 * copies its part of the CTA's next STAGES - 1 tiles into a ring of
 * shared-memory slots with cp.async, so an SM always has loads in flight,
 * whatever its CTAs are waiting for. The exclusive prefix of tile t needs no
 * chain of inclusive prefixes: the CTA carries the inclusive prefix of its
 * own previous tile, P(t - G), and adds the aggregates of the G - 1 tiles
 * between:
 *
 *     P(t - 1) = ((P(t - G) op A(t - G + 1)) op A(t - G + 2)) ... op A(t - 1)
 *
 * (round 0: A(0) op ... op A(b - 1)). Those aggregates were published by the
 * other CTAs as soon as their tiles arrived (round k - 1 for the CTAs after
 * b, round k for those before), one L2 round trip for all of them, polled by
 * the whole CTA at once. Nothing waits for a prefix another CTA computed, so
 * no wait is longer than the skew between CTAs' loads.
 *
 * Determinism. The prefix is the left fold of the tile aggregates, oldest
 * first, exactly as `lookback` defines it (P(i) = P(i - 1) op A(i), P(0) =
 * A(0)), and the tile is scanned in the same striped order
 * (scan_primitives.cuh): `ring` (32 KB tiles) gives the bits of `lookback`,
 * `ring_64k` those of `lookback_smem_64k`, for every type and op. Floats fold
 * serially (G - 1 dependent combines in one thread, ~1000 clocks at G = 264,
 * against ~4 us per round of tiles); integers by a shuffle tree (any grouping
 * gives the same bits).
 *
 * Co-residency. A CTA spins on aggregates of CTAs of the same grid, so the
 * grid must be resident at once: it is launched cooperatively with at most
 * (resident CTAs per SM) x SMs CTAs, and the launch fails rather than
 * deadlocks if the device cannot hold it.
 *
 * Unaligned pointers take `lookback`'s scalar path (cp.async needs 16-byte
 * alignment); the last, partial tile is read with guarded element loads.
 */
#include <type_traits>

#include "cuda/common/ptx_sm80.cuh"
#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_primitives.cuh"
#include "cuda/scan/scan_tile_status.cuh"

/* Ring depth: tiles of a CTA in shared memory (one being scanned, the rest in
 * flight). `ring`: 3 x 32 KB per CTA, two CTAs per SM; `ring_64k`: 3 x 64 KB,
 * one CTA per SM. Either way 128-192 KB of loads per SM can be in flight,
 * several times the ~32 KB Little's law asks for at copy speed. */
#define RING_STAGES 3
#define RING_NV 8
#define RING_NV_WIDE 16
/* Largest grid (aggregates polled per tile + 1): 2 CTAs on up to 256 SMs. */
#define RING_MAX_GRID 512

template <typename T, int OP, int NV, int STAGES>
__global__ void __launch_bounds__(SCAN_BLOCK, 1)
scan_ring_kernel(const T *in, T *out, int64_t n, int exclusive, tile_status<T> status)
{
    constexpr int VEC = SCAN_VEC(T);
    constexpr int SEGMENT = 32 * VEC * NV;
    constexpr int64_t TILE = (int64_t)SCAN_BLOCK * VEC * NV;
    extern __shared__ __align__(16) uint4 s_ring_raw[];
    __shared__ T s_warp[SCAN_WARPS];
    __shared__ T s_aggregate[RING_MAX_GRID];

    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int64_t grid = gridDim.x;
    const int64_t cta = blockIdx.x;
    const int64_t tiles = (n + TILE - 1) / TILE;
    /* the lane's load j of slot s: mine0 + s * TILE + j * 32 * VEC */
    T *const mine0 = reinterpret_cast<T *>(s_ring_raw) + warp * SEGMENT + lane * VEC;

    /* Copy the lane's part of round k's tile into slot k % STAGES; always one
     * commit, so the group count stays uniform (an empty group completes at
     * once). The partial last tile is read later, guarded. */
    auto issue = [&](int64_t k) {
        const int64_t t = k * grid + cta;
        if (t < tiles && (t + 1) * TILE <= n) {
            T *dst = mine0 + (int)(k % STAGES) * TILE;
            const T *src = in + t * TILE + warp * SEGMENT + lane * VEC;
#pragma unroll
            for (int j = 0; j < NV; j++)
                cuops_cp_async_16_zfill(cuops_smem_addr(dst + j * 32 * VEC), src + j * 32 * VEC,
                                        16);
        }
        cuops_cp_async_commit();
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) issue(s);

    /* warp 0: the inclusive prefix of this CTA's previous tile */
    T carried = scan_identity<T, OP>();
    for (int64_t k = 0; k * grid + cta < tiles; k++) {
        const int64_t tile = k * grid + cta;
        /* slot (k - 1) % STAGES was last read by this thread in round k - 1 */
        issue(k + STAGES - 1);
        cuops_cp_async_wait<STAGES - 1>();
        T *mine = mine0 + (int)(k % STAGES) * TILE;
        const bool full = (tile + 1) * TILE <= n;
        const int64_t segment = tile * TILE + (int64_t)warp * SEGMENT;
        if (!full) smem_segment_fill_guarded<T, OP, VEC, NV>(mine, in, n, segment, lane);

        T pre[NV];
        const T segment_total = smem_segment_scan<T, OP, VEC, NV>(mine, pre, lane);
        if (lane == 0) s_warp[warp] = segment_total;
        __syncthreads();

        T w_excl, aggregate;
        if (warp == 0) {
            aggregate = tile_scan_warp_totals<T, OP>(s_warp, lane, w_excl);
            if (lane == 0) status.publish(tile, STATUS_AGGREGATE, aggregate);
        }
        /* the tiles between the previous own tile and this one: [first, tile) */
        const int64_t first = k == 0 ? 0 : tile - grid + 1;
        const int window = (int)(tile - first);
        for (int i = threadIdx.x; i < window; i += SCAN_BLOCK) {
            unsigned flag;
            T v;
            do {
                status.poll(first + i, flag, v);
            } while (flag == STATUS_EMPTY);
            s_aggregate[i] = v;
        }
        __syncthreads();

        if (warp == 0) {
            /* P(tile - 1): the left fold from the carried prefix (round 0:
             * from A(0) itself, as `lookback` publishes P(0) = A(0)) */
            T prefix = scan_identity<T, OP>();
            if (window > 0) {
                if (std::is_integral<T>::value) {
                    T part = scan_identity<T, OP>();
                    for (int i = lane; i < window; i += 32)
                        part = scan_combine<T, OP>(part, s_aggregate[i]);
                    part = __shfl_sync(SCAN_FULL_MASK, warp_reduce<T, OP>(part), 0);
                    prefix = scan_combine<T, OP>(carried, part);
                } else {
                    if (lane == 0) {
                        int i = 0;
                        T p = carried;
                        if (k == 0) p = s_aggregate[i++];
#pragma unroll 8
                        for (; i < window; i++) p = scan_combine<T, OP>(p, s_aggregate[i]);
                        prefix = p;
                    }
                    prefix = __shfl_sync(SCAN_FULL_MASK, prefix, 0);
                }
            }
            carried = tile == 0 ? aggregate : scan_combine<T, OP>(prefix, aggregate);
            tile_set_warp_prefixes<T, OP>(s_warp, lane, prefix, w_excl);
        }
        __syncthreads();

        smem_segment_store<T, OP, VEC, NV>(mine, pre, s_warp[warp], exclusive, out, n, segment,
                                           lane, full);
    }
    cuops_cp_async_wait<0>();
}

/* ---- host side ----------------------------------------------------------- */

template <typename T, int OP, int NV>
static cuops_status_t ring_run(struct cuops_handle *h, const cuops_scan_desc_t *d,
                               const char *kernel_name)
{
    constexpr int VEC = SCAN_VEC(T);
    const int64_t tile = (int64_t)SCAN_BLOCK * VEC * NV;
    const int64_t tiles = cuops_ceil_div(d->n, tile);
    const int smem = (int)(RING_STAGES * tile * (int64_t)sizeof(T));
    auto kernel = scan_ring_kernel<T, OP, NV, RING_STAGES>;

    static int ctas_per_sm = 0; /* per instantiation; the device's limits */
    if (ctas_per_sm == 0) {
        CUOPS_CUDA_TRY(h, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               smem));
        CUOPS_CUDA_TRY(h, cudaFuncSetAttribute(kernel,
                                               cudaFuncAttributePreferredSharedMemoryCarveout,
                                               (int)cudaSharedmemCarveoutMaxShared));
        int per_sm = 0;
        CUOPS_CUDA_TRY(h, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel,
                                                                        SCAN_BLOCK, smem));
        if (per_sm < 1)
            return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                              "%s: %d bytes of shared memory per CTA do not fit an SM",
                              kernel_name, smem);
        ctas_per_sm = per_sm;
    }
    int64_t grid = (int64_t)ctas_per_sm * (h->num_sms > 0 ? h->num_sms : 1);
    if (grid > RING_MAX_GRID) grid = RING_MAX_GRID;
    if (grid > tiles) grid = tiles;

    tile_status<T> status;
    unsigned long long *counter = NULL; /* unused: tiles are dealt by CTA index */
    cuops_status_t st = tile_status_acquire<T>(h, tiles, &status, &counter);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)grid);
    cfg.blockDim = dim3(SCAN_BLOCK);
    cfg.dynamicSmemBytes = (size_t)smem;
    cfg.stream = cuops_stream(h);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;
    attr[0].val.cooperative = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CUOPS_CUDA_TRY(h, cudaLaunchKernelEx(&cfg, kernel, (const T *)d->in, (T *)d->out, d->n,
                                         d->exclusive, status));
    return cuops_cuda_check_launch(h, kernel_name);
}

template <typename T, int OP, int NV>
static cuops_status_t ring_typed(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    const bool wide = NV != RING_NV;
    if (cuops_aligned(d->in, 16) && cuops_aligned(d->out, 16))
        return ring_run<T, OP, NV>(h, d, wide ? "scan_ring_64k_vec16" : "scan_ring_vec16");
    /* the scalar kernel of `lookback`, under this variant's name */
    cuops_scan_desc_t scalar = *d;
    cuops_status_t st = cuops_scan_lookback_launch(h, &scalar, 0);
    if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = wide ? "scan_ring_64k_scalar" : "scan_ring_scalar";
    return st;
}

template <typename T, int OP>
static cuops_status_t ring_narrow(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    return ring_typed<T, OP, RING_NV>(h, d);
}

template <typename T, int OP>
static cuops_status_t ring_wide(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    return ring_typed<T, OP, RING_NV_WIDE>(h, d);
}

cuops_status_t cuops_scan_ring_launch(struct cuops_handle *h, const cuops_scan_desc_t *d, int wide)
{
    if (wide)
        return SCAN_TYPE_OP_CALL(d->type, d->op,
                                 cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: dtype %s",
                                            cuops_dtype_name(d->type)),
                                 ring_wide, h, d);
    return SCAN_TYPE_OP_CALL(d->type, d->op,
                             cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: dtype %s",
                                        cuops_dtype_name(d->type)),
                             ring_narrow, h, d);
}
