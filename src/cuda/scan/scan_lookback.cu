/*
 * scan_lookback.cu - the look-back scans: "lookback" (the tile in
 * registers; auto up to 64 MB), "lookback_wide" (8 windows per poll),
 * "lookback_smem" (the tile staged in shared memory, 5 CTAs per SM) and
 * "lookback_smem_64k" (64 KB tiles, 3 CTAs per SM; auto above 64 MB; the
 * smem kernels are below the first one): one pass over the data (2n elements
 * moved, the minimum), decoupled look-back across tiles (Merrill & Garland,
 * "Single-pass Parallel Prefix Scan with Decoupled Look-back", as in CUB),
 * and bitwise-deterministic float results, which CUB's scan does not give.
 *
 * Per CTA (256 threads, one 32 KB tile; scan_primitives.cuh has the layout):
 *   1. take the next tile id from an atomic counter, so tiles start in index
 *      order and every predecessor a tile waits on is already running (no
 *      deadlock however the hardware schedules CTAs);
 *   2. load the tile (16-byte streaming loads when in and out are 16-byte
 *      aligned, guarded scalar loads otherwise), scan each warp segment with
 *      shuffles, scan the 8 segment totals in warp 0 -> tile aggregate A_i;
 *   3. warp 0 publishes A_i, looks back for the exclusive prefix P_{i-1},
 *      publishes the inclusive prefix P_i = P_{i-1} op A_i;
 *   4. every thread combines P_{i-1} into its elements and stores.
 *
 * Determinism. Classic look-back adds "the nearest published inclusive
 * prefix P_j" to the aggregates A_{j+1..i-1} in whatever grouping the warp
 * reduction uses, and j depends on timing, so float sums change from run to
 * run. Here the inclusive prefix is *defined* as the left fold
 * P_i = P_{i-1} op A_i. A tile that finds P_j (the newest published one)
 * recomputes P_{i-1} = ((P_j op A_{j+1}) op A_{j+2}) ... op A_{i-1}, strictly
 * oldest first: that is the same sequence of float operations the chained
 * definition performs, so the bits are the same whichever j was found. The
 * price is a serial fold of up to 32 values per window on the look-back
 * critical path (about 32 dependent adds, ~0.1 us; docs/scan.md).
 *
 * The look-back walks back window by window (32 predecessors per warp-wide
 * poll) while no window holds an inclusive prefix, keeping the aggregates it
 * has seen in shared memory so the forward fold needs no second read. After
 * LOOKBACK_MAX_WINDOWS windows it stops walking and waits in the oldest window
 * for an inclusive prefix to appear (it always does: every predecessor is
 * running).
 *
 * Tile status words and their workspace: scan_tile_status.cuh (cleared by
 * one cudaMemsetAsync per call: n / 8192 words for 4-byte types, n / 4096 for
 * 8-byte ones).
 */
#include <type_traits>

#include "cuda/common/ptx_sm80.cuh"
#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_primitives.cuh"
#include "cuda/scan/scan_tile_status.cuh"

/* Windows of 32 predecessors polled per round trip, and searched before the
 * warp waits: `lookback` 1 and 8 (256 tiles; 2 KB of shared memory for 8-byte
 * types), `lookback_wide` 8 and 16 (4 KB). */
#define LOOKBACK_POLL 1
#define LOOKBACK_MAX_WINDOWS 8
#define LOOKBACK_WIDE_POLL 8
#define LOOKBACK_WIDE_MAX_WINDOWS 16

/* ---- look-back (warp 0 of the CTA; every lane returns P_{tile-1}) ------- */

/*
 * POLL windows of 32 predecessors are read per round trip: lane l loads the
 * status of tile - 32*(w+1) + l for the POLL windows w of the group at once
 * (independent loads, one L2 round trip for all of them). Why: a tile whose
 * nearest published inclusive prefix is d tiles back needs ceil(d / (32 *
 * POLL)) round trips to find it, and the prefix front can only advance by
 * that many tiles per round trip. With POLL = 1 (`lookback`) the front moves
 * 32 tiles (1 MB of i32) per ~0.5-1 us L2 round trip under full HBM load,
 * below the ~65 tiles/us a copy-speed scan of 32 KB tiles needs; POLL = 8
 * (`lookback_wide`) searches 256 predecessors per round trip.
 *
 * Entries that are not yet an inclusive prefix are re-read on every poll, so
 * a prefix that appears in a newer window while the warp waits is taken.
 * The search accepts window w when it holds a prefix and no empty entry
 * newer than that prefix, and every newer window is complete; a complete
 * group with no prefix moves the search to the next (older) group, up to
 * MAX windows, after which the warp keeps polling its last group.
 */
template <typename T, int OP, int POLL, int MAX>
static __device__ __forceinline__ T lookback_prefix(const tile_status<T> &status, int64_t tile,
                                                    int lane, T *s_window)
{
    static_assert(MAX % POLL == 0, "the search walks whole groups");
    int base = 0;       /* first window of the group being polled */
    int found = -1;     /* window (within the group) holding the prefix used */
    unsigned found_mask = 0;
    for (;;) {
        unsigned flag[POLL];
        T v[POLL];
#pragma unroll
        for (int w = 0; w < POLL; w++) {
            /* before tile 0: an inclusive identity, never the newest prefix
             * found, because tile 0 itself is always newer and must be ready */
            flag[w] = tile - 32 * (int64_t)(base + w + 1) + lane < 0 ? STATUS_PREFIX : STATUS_EMPTY;
            v[w] = scan_identity<T, OP>();
        }
        const bool last_group = base + POLL >= MAX;
        bool advance = false;
        for (;;) {
            /* all loads of the group first, then every use */
#pragma unroll
            for (int w = 0; w < POLL; w++)
                if (flag[w] != STATUS_PREFIX)
                    status.poll(tile - 32 * (int64_t)(base + w + 1) + lane, flag[w], v[w]);
            found = -1;
            bool blocked = false;
#pragma unroll
            for (int w = 0; w < POLL; w++) {
                const unsigned prefix_mask = __ballot_sync(SCAN_FULL_MASK, flag[w] == STATUS_PREFIX);
                const unsigned empty_mask = __ballot_sync(SCAN_FULL_MASK, flag[w] == STATUS_EMPTY);
                if (found < 0 && !blocked) {
                    if (prefix_mask != 0) {
                        const int newest = 31 - __clz(prefix_mask);
                        /* lanes newer than the prefix: bits above `newest` */
                        const unsigned newer = newest == 31 ? 0u : (~0u << (newest + 1));
                        if ((empty_mask & newer) == 0) {
                            found = w;
                            found_mask = prefix_mask;
                        } else {
                            blocked = true;
                        }
                    } else if (empty_mask != 0) {
                        blocked = true;
                    }
                }
            }
            if (found >= 0) break;
            if (!blocked && !last_group) {
                advance = true; /* a whole group of aggregates: search older tiles */
                break;
            }
        }
        /* read back by this lane, and the prefix slot by all (after the
         * __syncwarp below) */
#pragma unroll
        for (int w = 0; w < POLL; w++)
            if (advance || w <= found) s_window[(base + w) * 32 + lane] = v[w];
        if (!advance) break;
        base += POLL;
    }

    /* Forward fold, oldest first, from the newest prefix found. The first
     * read below is another lane's slot: order it after every lane's write. */
    __syncwarp();
    const int wp = base + found; /* window holding the prefix; newer ones are wp-1 .. 0 */
    const int newest = 31 - __clz(found_mask);
    T prefix = s_window[wp * 32 + newest]; /* a broadcast read */
    const T mine = s_window[wp * 32 + lane];
    if (std::is_integral<T>::value) {
        /* integers (wrapping sum, min, max): any grouping gives the same
         * bits, so each window is a 5-step shuffle tree */
        T a = warp_reduce<T, OP>(lane > newest ? mine : scan_identity<T, OP>());
        prefix = scan_combine<T, OP>(prefix, __shfl_sync(SCAN_FULL_MASK, a, 0));
        for (int w = wp - 1; w >= 0; w--) {
            a = warp_reduce<T, OP>(s_window[w * 32 + lane]);
            prefix = scan_combine<T, OP>(prefix, __shfl_sync(SCAN_FULL_MASK, a, 0));
        }
    } else {
        /* floats: the chained definition, bit for bit. The shuffles do not
         * depend on the running value, so only the combines are serial. */
#pragma unroll
        for (int l = 0; l < 32; l++) {
            const T a = __shfl_sync(SCAN_FULL_MASK, mine, l);
            if (l > newest) prefix = scan_combine<T, OP>(prefix, a);
        }
        for (int w = wp - 1; w >= 0; w--) {
            const T a_lane = s_window[w * 32 + lane];
#pragma unroll
            for (int l = 0; l < 32; l++)
                prefix = scan_combine<T, OP>(prefix, __shfl_sync(SCAN_FULL_MASK, a_lane, l));
        }
    }
    return prefix;
}

/* ---- the kernel ---------------------------------------------------------- */

/* Residency: 3 CTAs (24 warps) per SM for 4-byte sums, 2 otherwise. The wide
 * poll adds ~16 registers to warp 0's look-back; an 80-register cap keeps
 * the third CTA of a 4-byte sum without spills, while min/max spill under it
 * (12-36 bytes on sm_80 / sm_90a) and take the 2-CTA budget instead. */
#define LOOKBACK_MIN_CTAS(T, OP) (sizeof(T) == 4 && (OP) == SCAN_OP_SUM ? 3 : 2)
template <typename T, int OP, int VEC, int NV, int POLL, int MAX>
__global__ void __launch_bounds__(SCAN_BLOCK, LOOKBACK_MIN_CTAS(T, OP))
scan_lookback_kernel(const T *in, T *out, int64_t n, int exclusive, tile_status<T> status,
                     unsigned long long *tile_counter)
{
    constexpr int SEGMENT = 32 * VEC * NV;
    constexpr int64_t TILE = (int64_t)SCAN_BLOCK * VEC * NV;
    __shared__ int64_t s_tile;
    __shared__ T s_warp[SCAN_WARPS];
    __shared__ T s_window[MAX * 32];

    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) s_tile = (int64_t)atomicAdd(tile_counter, 1ull);
    __syncthreads();
    const int64_t tile = s_tile;
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
        T w_excl;
        const T aggregate = tile_scan_warp_totals<T, OP>(s_warp, lane, w_excl);
        T tile_prefix = scan_identity<T, OP>();
        if (tile == 0) {
            if (lane == 0) status.publish(0, STATUS_PREFIX, aggregate);
        } else {
            if (lane == 0) status.publish(tile, STATUS_AGGREGATE, aggregate);
            tile_prefix = lookback_prefix<T, OP, POLL, MAX>(status, tile, lane, s_window);
            if (lane == 0)
                status.publish(tile, STATUS_PREFIX, scan_combine<T, OP>(tile_prefix, aggregate));
        }
        tile_set_warp_prefixes<T, OP>(s_warp, lane, tile_prefix, w_excl);
    }
    __syncthreads();

    segment_apply_prefix<T, OP, VEC, NV>(x, pre, s_warp[warp], exclusive);
    tile_store<T, VEC, NV>(out, n, segment, lane, full, x);
}


/* ---- variant lookback_smem: the tile waits in shared memory ------------ */

/*
 * Why: ncu source-level sampling of scan_lookback_kernel (i32, n = 2^28,
 * H200) puts 46.7 % of warp samples at the barrier after the look-back and
 * 18.1 % on the first use of the tile's loads, with DRAM at 57 %. While warp
 * 0 looks back, the other seven warps wait holding the 32 KB tile in
 * registers (70 registers: 3 CTAs per SM), so an SM has loads in flight only
 * for the CTAs that are still loading. Here each thread copies its own part
 * of the tile into shared memory with cp.async (nothing held in registers),
 * keeps only the 8 lane prefixes of its loads across the look-back, and
 * reads its elements back from shared memory to store them: <= 48 registers
 * and 33 KB of shared memory per CTA, so 5 CTAs (40 warps) share an SM
 * (against 3) and some can be loading while others look back.
 *
 * Same striped layout, same per-lane arithmetic (serial inclusive scan of a
 * lane's VEC elements, then base = prefix op pre[j]) and the same look-back
 * as scan_lookback_kernel: the bits are those of `lookback` for every type
 * and op. A thread only reads back what it copied itself, so cp.async's
 * wait_group is all the synchronisation the tile data needs.
 */
/* 5 CTAs per SM (<= 48 registers) for 4-byte types: at 6 (40 registers)
 * ptxas spills 8-12 bytes in two of the six 4-byte kernels (f32 sum, i32
 * max); 4 for 8-byte types (<= 64 registers). */
#define LOOKBACK_SMEM_MIN_CTAS(T) (sizeof(T) == 4 ? 5 : 4)
/* Loads per thread: 8 (32 KB tiles, `lookback_smem`) or 16 (64 KB tiles,
 * `lookback_smem_64k`: 3 CTAs per SM by shared memory, half as many tiles
 * and look-backs for the same bytes). */
#define LOOKBACK_SMEM_NV_WIDE 16
#define LOOKBACK_SMEM_CTAS(T, NV) ((NV) == SCAN_NV_VEC ? LOOKBACK_SMEM_MIN_CTAS(T) : 3)

template <typename T, int OP, int NV>
__global__ void __launch_bounds__(SCAN_BLOCK, LOOKBACK_SMEM_CTAS(T, NV))
scan_lookback_smem_kernel(const T *in, T *out, int64_t n, int exclusive, tile_status<T> status,
                          unsigned long long *tile_counter)
{
    constexpr int VEC = SCAN_VEC(T);
    constexpr int SEGMENT = 32 * VEC * NV;
    constexpr int64_t TILE = (int64_t)SCAN_BLOCK * VEC * NV;
    /* The tile: static shared memory at 32 KB, dynamic at 64 KB (over the
     * 48 KB static limit). The two forms of the 32 KB kernel measured the
     * same (0.93x CUB at 2^30, docs/scan.md). */
    T *s_data;
    if constexpr (NV == SCAN_NV_VEC) {
        __shared__ __align__(16) T s_static[TILE];
        s_data = s_static;
    } else {
        extern __shared__ __align__(16) uint4 s_dynamic[];
        s_data = reinterpret_cast<T *>(s_dynamic);
    }
    __shared__ int64_t s_tile;
    __shared__ T s_warp[SCAN_WARPS];
    __shared__ T s_window[LOOKBACK_MAX_WINDOWS * 32];

    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) s_tile = (int64_t)atomicAdd(tile_counter, 1ull);
    __syncthreads();
    const int64_t tile = s_tile;
    const int64_t tile_base = tile * TILE;
    const bool full = tile_base + TILE <= n;
    const int64_t segment = tile_base + (int64_t)warp * SEGMENT;
    T *mine = s_data + warp * SEGMENT + lane * VEC; /* load j at mine + j * 32 * VEC */

    if (full) {
#pragma unroll
        for (int j = 0; j < NV; j++)
            cuops_cp_async_16_zfill(cuops_smem_addr(mine + j * 32 * VEC),
                                    in + segment + (j * 32 + lane) * VEC, 16);
        cuops_cp_async_commit();
        cuops_cp_async_wait<0>();
    } else {
        smem_segment_fill_guarded<T, OP, VEC, NV>(mine, in, n, segment, lane);
    }

    /* pass 1: lane totals of each load, scanned across the warp */
    T pre[NV];
    const T carry = smem_segment_scan<T, OP, VEC, NV>(mine, pre, lane);
    if (lane == 0) s_warp[warp] = carry;
    __syncthreads();

    if (warp == 0) {
        T w_excl;
        const T aggregate = tile_scan_warp_totals<T, OP>(s_warp, lane, w_excl);
        T tile_prefix = scan_identity<T, OP>();
        if (tile == 0) {
            if (lane == 0) status.publish(0, STATUS_PREFIX, aggregate);
        } else {
            if (lane == 0) status.publish(tile, STATUS_AGGREGATE, aggregate);
            tile_prefix = lookback_prefix<T, OP, LOOKBACK_POLL, LOOKBACK_MAX_WINDOWS>(
                status, tile, lane, s_window);
            if (lane == 0)
                status.publish(tile, STATUS_PREFIX, scan_combine<T, OP>(tile_prefix, aggregate));
        }
        tile_set_warp_prefixes<T, OP>(s_warp, lane, tile_prefix, w_excl);
    }
    __syncthreads();

    /* pass 2: the elements again, scanned with their prefix, and stored */
    smem_segment_store<T, OP, VEC, NV>(mine, pre, s_warp[warp], exclusive, out, n, segment, lane,
                                       full);
}

/* ---- host side ----------------------------------------------------------- */

/* SMEM: the lookback_smem kernel (vector path only; VEC, POLL, MAX must then
 * be its own: SCAN_VEC(T), LOOKBACK_POLL, LOOKBACK_MAX_WINDOWS; NV 8 or 16) */
template <typename T, int OP, int VEC, int NV, int POLL, int MAX, bool SMEM = false>
static cuops_status_t lookback_run(struct cuops_handle *h, const cuops_scan_desc_t *d,
                                   const char *kernel_name)
{
    const int64_t tile = (int64_t)SCAN_BLOCK * VEC * NV;
    const int64_t tiles = cuops_ceil_div(d->n, tile);
    tile_status<T> status;
    unsigned long long *counter = NULL;
    cuops_status_t st = tile_status_acquire<T>(h, tiles, &status, &counter);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    cudaStream_t stream = cuops_stream(h);
    if constexpr (SMEM) {
        static_assert(VEC == SCAN_VEC(T), "lookback_smem's tile");
        /* 32 KB tiles are static shared memory, 64 KB ones dynamic (above) */
        const int smem = NV == SCAN_NV_VEC ? 0 : (int)(tile * (int64_t)sizeof(T));
        /* 3-5 CTAs of tile per SM need the largest carveout */
        /* once per device: cudaFuncSetAttribute applies to the current one */
        static int attributes_set_on[SCAN_MAX_DEVICES];
        const bool cacheable = h->device >= 0 && h->device < SCAN_MAX_DEVICES;
        if (!cacheable || !__atomic_load_n(&attributes_set_on[h->device], __ATOMIC_RELAXED)) {
            if (smem > 0)
                CUOPS_CUDA_TRY(h, cudaFuncSetAttribute(scan_lookback_smem_kernel<T, OP, NV>,
                                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                       smem));
            CUOPS_CUDA_TRY(h, cudaFuncSetAttribute(scan_lookback_smem_kernel<T, OP, NV>,
                                                   cudaFuncAttributePreferredSharedMemoryCarveout,
                                                   (int)cudaSharedmemCarveoutMaxShared));
            if (cacheable) __atomic_store_n(&attributes_set_on[h->device], 1, __ATOMIC_RELAXED);
        }
        scan_lookback_smem_kernel<T, OP, NV><<<(unsigned)tiles, SCAN_BLOCK, smem, stream>>>(
            (const T *)d->in, (T *)d->out, d->n, d->exclusive, status, counter);
    } else {
        scan_lookback_kernel<T, OP, VEC, NV, POLL, MAX><<<(unsigned)tiles, SCAN_BLOCK, 0, stream>>>(
            (const T *)d->in, (T *)d->out, d->n, d->exclusive, status, counter);
    }
    return cuops_cuda_check_launch(h, kernel_name);
}

template <typename T, int OP, int POLL, int MAX>
static cuops_status_t lookback_typed(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    const bool wide = POLL > 1;
    if (cuops_aligned(d->in, 16) && cuops_aligned(d->out, 16))
        return lookback_run<T, OP, SCAN_VEC(T), SCAN_NV_VEC, POLL, MAX>(
            h, d, wide ? "scan_lookback_wide_vec16" : "scan_lookback_vec16");
    return lookback_run<T, OP, 1, SCAN_NV_SCALAR(T), POLL, MAX>(
        h, d, wide ? "scan_lookback_wide_scalar" : "scan_lookback_scalar");
}

template <typename T, int OP>
static cuops_status_t lookback_narrow(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    return lookback_typed<T, OP, LOOKBACK_POLL, LOOKBACK_MAX_WINDOWS>(h, d);
}

template <typename T, int OP>
static cuops_status_t lookback_wide(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    return lookback_typed<T, OP, LOOKBACK_WIDE_POLL, LOOKBACK_WIDE_MAX_WINDOWS>(h, d);
}

template <typename T, int OP, int NV>
static cuops_status_t lookback_smem_typed(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    /* unaligned pointers cannot be copied 16 bytes at a time: the scalar
     * path of `lookback` serves them */
    const bool wide = NV != SCAN_NV_VEC;
    if (cuops_aligned(d->in, 16) && cuops_aligned(d->out, 16))
        return lookback_run<T, OP, SCAN_VEC(T), NV, LOOKBACK_POLL, LOOKBACK_MAX_WINDOWS, true>(
            h, d, wide ? "scan_lookback_smem_64k_vec16" : "scan_lookback_smem_vec16");
    return lookback_run<T, OP, 1, SCAN_NV_SCALAR(T), LOOKBACK_POLL, LOOKBACK_MAX_WINDOWS>(
        h, d, wide ? "scan_lookback_smem_64k_scalar" : "scan_lookback_smem_scalar");
}

template <typename T, int OP>
static cuops_status_t lookback_smem(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    return lookback_smem_typed<T, OP, SCAN_NV_VEC>(h, d);
}

template <typename T, int OP>
static cuops_status_t lookback_smem_64k(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    return lookback_smem_typed<T, OP, LOOKBACK_SMEM_NV_WIDE>(h, d);
}

/* mode: 0 lookback, 1 lookback_wide, 2 lookback_smem, 3 lookback_smem_64k */
cuops_status_t cuops_scan_lookback_launch(struct cuops_handle *h, const cuops_scan_desc_t *d,
                                          int mode)
{
    if (mode == 3)
        return SCAN_TYPE_OP_CALL(d->type, d->op,
                                 cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: dtype %s",
                                            cuops_dtype_name(d->type)),
                                 lookback_smem_64k, h, d);
    if (mode == 2)
        return SCAN_TYPE_OP_CALL(d->type, d->op,
                                 cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: dtype %s",
                                            cuops_dtype_name(d->type)),
                                 lookback_smem, h, d);
    if (mode == 1)
        return SCAN_TYPE_OP_CALL(d->type, d->op,
                                 cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: dtype %s",
                                            cuops_dtype_name(d->type)),
                                 lookback_wide, h, d);
    return SCAN_TYPE_OP_CALL(d->type, d->op,
                             cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: dtype %s",
                                        cuops_dtype_name(d->type)),
                             lookback_narrow, h, d);
}
