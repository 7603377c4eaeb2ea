/*
 * scan_lookback_persistent.cu - the named variant "lookback_persistent"
 * (measured slower than the look-back and ring kernels, docs/scan.md): the
 * deterministic decoupled look-back of scan_lookback.cu, run by
 * persistent CTAs that keep their next tile's loads in flight while they look
 * back for the current one, with no memset per call.
 *
 * Why. In the one-tile-per-CTA kernel a CTA that waits for its look-back has
 * nothing in flight, and a CTA slot that has just finished issues nothing
 * until a new CTA has launched, fetched a tile id and sent its loads: the
 * measured 2840 GB/s (66 % of copy) is what ~3 tiles per SM, each in flight
 * for only part of its life, sustain. Little's law on the H200 probe asks
 * for >= 32 KB of loads in flight per SM at all times.
 *
 * Pipeline. grid = min(tiles, 2 x SMs) CTAs of 256 threads (<= 128 registers
 * so two fit per SM). Each CTA takes tile ids from an atomic counter (tiles
 * are taken in order, and only by running CTAs, so every predecessor a tile
 * waits on is held by a running CTA: no deadlock whatever the residency).
 * Step k of a CTA, current tile c (its loads issued one step earlier) and
 * next tile c' (id known):
 *   1. issue the 16-byte loads of tile c' into the second register buffer;
 *      thread 0 fetches the id of the tile after c' (atomic; its latency is
 *      hidden behind the rest of the step);
 *   2. scan tile c (striped layout of scan_primitives.cuh), publish its
 *      aggregate, look back, publish its inclusive prefix (warp 0);
 *   3. store tile c with streaming stores; swap buffers.
 * So each CTA has one to two 32 KB tiles of loads in flight while it waits,
 * 64-128 KB per SM, against the 32 KB Little's law asks for. The loop is
 * unrolled by two so the buffers swap by renaming, not by moves that would
 * wait on the loads.
 *
 * Look-back and determinism: as in scan_lookback.cu (the inclusive prefix is
 * defined as the left fold P_i = P_{i-1} op A_i, and a tile that finds P_j
 * folds A_{j+1..i-1} oldest first, so float bits never depend on timing).
 * Integer ops are associative and commutative bit for bit, so for them the
 * fold is a 5-step shuffle tree per window instead of 32 dependent combines.
 *
 * No memset. The status words carry a 30-bit epoch (scan_state.h); a word
 * counts only if its stamp equals the epoch of this call. The last CTA to
 * finish (done counter) resets the tile and done counters and advances the
 * epoch, so the next call finds a clean state without any host work; on the
 * wrap to epoch 0 it clears the stamped regions first.
 */
#include <type_traits>

#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_primitives.cuh"
#include "cuda/scan/scan_state.cuh"

#define PSTATUS_EMPTY 0u
#define PSTATUS_AGGREGATE 1u
#define PSTATUS_PREFIX 2u
/* 8 windows = 256 predecessors searched before waiting in the oldest window */
#define PERSISTENT_WINDOWS 8
#define PERSISTENT_CTAS_PER_SM 2

/* Device addresses of the state (scan_state.h) for one call. */
typedef struct persistent_state {
    unsigned long long *tile_counter;
    unsigned *done;
    unsigned *epoch;
    unsigned long long *words; /* 4-byte types */
    unsigned *flags;           /* 8-byte types */
    unsigned long long *aggregate;
    unsigned long long *prefix;
    int64_t capacity;          /* tiles in words / flags (cleared on the epoch wrap) */
} persistent_state_t;

/* ---- stamped tile status ------------------------------------------------- */

template <typename T, int SIZE = sizeof(T)> struct stamped_status;

template <typename T> union pbits32 { T v; uint32_t u; };
template <typename T> union pbits64 { T v; unsigned long long u; };

/* One 64-bit word per tile: {flag:2, epoch:30} high, value bits low; one
 * relaxed 64-bit access, so flag, stamp and value are never torn. */
template <typename T> struct stamped_status<T, 4> {
    unsigned long long *word;
    unsigned epoch;

    __device__ __forceinline__ void init(const persistent_state_t &s, unsigned e)
    {
        word = s.words;
        epoch = e;
    }
    __device__ __forceinline__ void publish(int64_t t, unsigned flag, T v) const
    {
        pbits32<T> b;
        b.v = v;
        const unsigned long long w = ((unsigned long long)((epoch << 2) | flag) << 32) | b.u;
        store_relaxed_u64(word + t, w);
    }
    __device__ __forceinline__ void poll(int64_t t, unsigned &flag, T &v) const
    {
        const unsigned long long w = load_relaxed_u64(word + t);
        const unsigned high = (unsigned)(w >> 32);
        pbits32<T> b;
        b.u = (uint32_t)w;
        flag = (high >> 2) == epoch ? (high & 3u) : PSTATUS_EMPTY;
        v = b.v;
    }
};

/* 8-byte types: stamped flag {epoch:30, flag:2} with release/acquire, the
 * aggregate and the prefix in separate slots (never a torn pair). */
template <typename T> struct stamped_status<T, 8> {
    unsigned *flag;
    unsigned long long *aggregate;
    unsigned long long *prefix;
    unsigned epoch;

    __device__ __forceinline__ void init(const persistent_state_t &s, unsigned e)
    {
        flag = s.flags;
        aggregate = s.aggregate;
        prefix = s.prefix;
        epoch = e;
    }
    __device__ __forceinline__ void publish(int64_t t, unsigned f, T v) const
    {
        pbits64<T> b;
        b.v = v;
        unsigned long long *slot = (f == PSTATUS_AGGREGATE ? aggregate : prefix) + t;
        store_relaxed_u64(slot, b.u);
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag + t), "r"((epoch << 2) | f)
                     : "memory");
    }
    __device__ __forceinline__ void poll(int64_t t, unsigned &f, T &v) const
    {
        unsigned raw;
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(raw) : "l"(flag + t) : "memory");
        f = (raw >> 2) == epoch ? (raw & 3u) : PSTATUS_EMPTY;
        if (f != PSTATUS_EMPTY) {
            const unsigned long long *slot = (f == PSTATUS_AGGREGATE ? aggregate : prefix) + t;
            pbits64<T> b;
            b.u = load_relaxed_u64(slot);
            v = b.v;
        }
    }
};

/* ---- look-back (warp 0; every lane returns P_{tile-1}) ------------------- */

template <typename T, int OP>
static __device__ __forceinline__ T persistent_lookback(const stamped_status<T> &status,
                                                        int64_t tile, int lane, T *s_window)
{
    int window = 0;
    unsigned prefix_mask;
    unsigned flag;
    T v;
    for (;;) {
        /* lane 31 is the newest predecessor of this window */
        const int64_t t = tile - 32 * (int64_t)(window + 1) + lane;
        const bool last_window = window == PERSISTENT_WINDOWS - 1;
        /* before tile 0: an inclusive identity, never the newest prefix
         * found (tile 0 is newer and always publishes a prefix) */
        flag = t < 0 ? PSTATUS_PREFIX : PSTATUS_EMPTY;
        v = scan_identity<T, OP>();
        for (;;) {
            if (t >= 0 && (flag == PSTATUS_EMPTY || (last_window && flag == PSTATUS_AGGREGATE)))
                status.poll(t, flag, v);
            prefix_mask = __ballot_sync(SCAN_FULL_MASK, flag == PSTATUS_PREFIX);
            const bool all_ready = __all_sync(SCAN_FULL_MASK, flag != PSTATUS_EMPTY);
            if (all_ready && (prefix_mask != 0 || !last_window)) break;
        }
        if (prefix_mask != 0) break;
        s_window[window * 32 + lane] = v; /* read back by this same lane only */
        window++;
    }
    const int newest = 31 - __clz(prefix_mask);
    T prefix = __shfl_sync(SCAN_FULL_MASK, v, newest);
    if (std::is_integral<T>::value) {
        /* any grouping gives the same bits: a shuffle tree per window */
        T a = warp_reduce<T, OP>(lane > newest ? v : scan_identity<T, OP>());
        prefix = scan_combine<T, OP>(prefix, __shfl_sync(SCAN_FULL_MASK, a, 0));
        for (int w = window - 1; w >= 0; w--) {
            a = warp_reduce<T, OP>(s_window[w * 32 + lane]);
            prefix = scan_combine<T, OP>(prefix, __shfl_sync(SCAN_FULL_MASK, a, 0));
        }
    } else {
        /* floats: the chained definition, oldest first, bit for bit */
#pragma unroll
        for (int l = 0; l < 32; l++) {
            T a = __shfl_sync(SCAN_FULL_MASK, v, l);
            if (l > newest) prefix = scan_combine<T, OP>(prefix, a);
        }
        for (int w = window - 1; w >= 0; w--) {
            T a_lane = s_window[w * 32 + lane];
#pragma unroll
            for (int l = 0; l < 32; l++)
                prefix = scan_combine<T, OP>(prefix, __shfl_sync(SCAN_FULL_MASK, a_lane, l));
        }
    }
    return prefix;
}

/* ---- one pipeline step ---------------------------------------------------- */

/* Shared memory of a CTA. The totals (written by each warp before barrier B,
 * read by warp 0 after it) and the prefixes (written by warp 0 between B and
 * C, read by each warp after C) are separate arrays, so a warp that runs
 * ahead into the next step never overwrites a value still to be read. */
template <typename T> struct persistent_smem {
    T total[SCAN_WARPS];
    T warp_prefix[SCAN_WARPS];
    T window[PERSISTENT_WINDOWS * 32];
    unsigned long long next_tile;
    unsigned long long first_tile;
    int last;
};

/* Scan and store tile `cur` held in x while the loads of tile `nxt` go into
 * y; on return cur = nxt and nxt = the tile after it (num_tiles: none). */
template <typename T, int OP, int VEC, int NV>
static __device__ __forceinline__ void persistent_step(
    const T *in, T *out, int64_t n, int exclusive, int64_t num_tiles,
    const stamped_status<T> &status, unsigned long long *tile_counter, persistent_smem<T> &sm,
    T (&x)[NV][VEC], T (&y)[NV][VEC], int64_t &cur, int64_t &nxt, int lane, int warp)
{
    constexpr int SEGMENT = 32 * VEC * NV;
    constexpr int64_t TILE = (int64_t)SCAN_BLOCK * VEC * NV;
    const int64_t warp_offset = (int64_t)warp * SEGMENT;

    /* 1. next tile's loads first: in flight during everything below */
    const bool have_next = nxt < num_tiles;
    if (have_next) {
        const int64_t next_base = nxt * TILE;
        tile_load<T, OP, VEC, NV>(in, n, next_base + warp_offset, lane, next_base + TILE <= n, y);
    }
    unsigned long long fetched = (unsigned long long)num_tiles;
    if (threadIdx.x == 0 && have_next) fetched = atomicAdd(tile_counter, 1ull);

    /* 2. scan the current tile */
    const int64_t tile_base = cur * TILE;
    const bool full = tile_base + TILE <= n;
    T pre[NV];
    const T segment_total = segment_scan<T, OP, VEC, NV>(x, pre, lane);
    if (lane == 0) sm.total[warp] = segment_total;
    __syncthreads(); /* B */

    if (warp == 0) {
        const T w = lane < SCAN_WARPS ? sm.total[lane] : scan_identity<T, OP>();
        const T w_incl = warp_scan_inclusive<T, OP>(w, lane);
        const T w_excl = __shfl_up_sync(SCAN_FULL_MASK, w_incl, 1);
        const T aggregate = __shfl_sync(SCAN_FULL_MASK, w_incl, SCAN_WARPS - 1);
        T tile_prefix = scan_identity<T, OP>();
        if (cur == 0) {
            if (lane == 0) status.publish(0, PSTATUS_PREFIX, aggregate);
        } else {
            if (lane == 0) status.publish(cur, PSTATUS_AGGREGATE, aggregate);
            tile_prefix = persistent_lookback<T, OP>(status, cur, lane, sm.window);
            if (lane == 0)
                status.publish(cur, PSTATUS_PREFIX, scan_combine<T, OP>(tile_prefix, aggregate));
        }
        if (lane < SCAN_WARPS)
            sm.warp_prefix[lane] = lane == 0 ? tile_prefix : scan_combine<T, OP>(tile_prefix, w_excl);
        /* the atomic has had the whole scan and look-back to return */
        if (lane == 0) sm.next_tile = fetched;
    }
    __syncthreads(); /* C */

    /* 3. finish and store the current tile */
    const unsigned long long after = sm.next_tile;
    segment_apply_prefix<T, OP, VEC, NV>(x, pre, sm.warp_prefix[warp], exclusive);
    tile_store<T, VEC, NV>(out, n, tile_base + warp_offset, lane, full, x);
    cur = nxt;
    nxt = after < (unsigned long long)num_tiles ? (int64_t)after : num_tiles;
}

/* ---- the kernel ----------------------------------------------------------- */

template <typename T, int OP, int VEC, int NV>
__global__ void __launch_bounds__(SCAN_BLOCK, PERSISTENT_CTAS_PER_SM)
scan_persistent_kernel(const T *in, T *out, int64_t n, int exclusive, int64_t num_tiles,
                       persistent_state_t state)
{
    constexpr int64_t TILE = (int64_t)SCAN_BLOCK * VEC * NV;
    __shared__ persistent_smem<T> sm;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int64_t warp_offset = (int64_t)warp * 32 * VEC * NV;

    /* written by the previous call's last CTA; constant during this call */
    const unsigned epoch = __ldcg(state.epoch);
    stamped_status<T> status;
    status.init(state, epoch);

    if (threadIdx.x == 0) sm.first_tile = atomicAdd(state.tile_counter, 1ull);
    __syncthreads();
    int64_t cur = sm.first_tile < (unsigned long long)num_tiles ? (int64_t)sm.first_tile : num_tiles;
    T x[NV][VEC], y[NV][VEC];
    if (cur < num_tiles) {
        const int64_t base = cur * TILE;
        tile_load<T, OP, VEC, NV>(in, n, base + warp_offset, lane, base + TILE <= n, x);
    }
    if (threadIdx.x == 0)
        sm.next_tile = cur < num_tiles ? atomicAdd(state.tile_counter, 1ull)
                                       : (unsigned long long)num_tiles;
    __syncthreads();
    int64_t nxt = sm.next_tile < (unsigned long long)num_tiles ? (int64_t)sm.next_tile : num_tiles;

    while (cur < num_tiles) {
        persistent_step<T, OP, VEC, NV>(in, out, n, exclusive, num_tiles, status,
                                        state.tile_counter, sm, x, y, cur, nxt, lane, warp);
        if (cur >= num_tiles) break;
        persistent_step<T, OP, VEC, NV>(in, out, n, exclusive, num_tiles, status,
                                        state.tile_counter, sm, y, x, cur, nxt, lane, warp);
    }

    /* Every status access of this CTA is behind it (warp 0 made them all
     * before the last barrier C). The last CTA leaves the state clean. */
    if (threadIdx.x == 0) {
        __threadfence();
        sm.last = atomicAdd(state.done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!sm.last) return;
    __threadfence();
    scan_state_next_epoch(state.epoch, epoch, state.words, state.flags, state.capacity);
    if (threadIdx.x == 0) {
        *state.tile_counter = 0ull;
        *state.done = 0u;
    }
}

/* ---- host side ------------------------------------------------------------ */

template <typename T, int OP, int VEC, int NV>
static cuops_status_t persistent_run(struct cuops_handle *h, const cuops_scan_desc_t *d,
                                     const char *kernel_name)
{
    const int64_t tile = (int64_t)SCAN_BLOCK * VEC * NV;
    const int64_t tiles = cuops_ceil_div(d->n, tile);
    scan_state_view_t view;
    cuops_status_t st = scan_state_acquire(h, tiles, &view);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    persistent_state_t s;
    s.tile_counter = (unsigned long long *)(view.base + SCAN_STATE_TILE_COUNTER);
    s.done = (unsigned *)(view.base + SCAN_STATE_DONE);
    s.epoch = (unsigned *)(view.base + SCAN_STATE_EPOCH);
    s.words = (unsigned long long *)(view.base + scan_state_words_offset(view.tiles));
    s.flags = (unsigned *)(view.base + scan_state_flags_offset(view.tiles));
    s.aggregate = (unsigned long long *)(view.base + scan_state_aggr_offset(view.tiles));
    s.prefix = (unsigned long long *)(view.base + scan_state_prefix_offset(view.tiles));
    s.capacity = view.tiles;

    int64_t grid = (int64_t)PERSISTENT_CTAS_PER_SM * (h->num_sms > 0 ? h->num_sms : 1);
    if (grid > tiles) grid = tiles;
    scan_persistent_kernel<T, OP, VEC, NV><<<(unsigned)grid, SCAN_BLOCK, 0, cuops_stream(h)>>>(
        (const T *)d->in, (T *)d->out, d->n, d->exclusive, tiles, s);
    return cuops_cuda_check_launch(h, kernel_name);
}

template <typename T, int OP>
static cuops_status_t persistent_typed(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    if (cuops_aligned(d->in, 16) && cuops_aligned(d->out, 16))
        return persistent_run<T, OP, SCAN_VEC(T), SCAN_NV_VEC>(h, d,
                                                               "scan_lookback_persistent_vec16");
    /* two scalar buffers of 16 eight-byte elements plus their prefixes would
     * pass 128 registers (spills): 8 per thread for 8-byte types */
    return persistent_run<T, OP, 1, sizeof(T) == 8 ? 8 : SCAN_NV_SCALAR(T)>(
        h, d, "scan_lookback_persistent_scalar");
}

cuops_status_t cuops_scan_lookback_persistent_launch(struct cuops_handle *h,
                                                     const cuops_scan_desc_t *d)
{
    return SCAN_TYPE_OP_CALL(d->type, d->op,
                             cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: dtype %s",
                                        cuops_dtype_name(d->type)),
                             persistent_typed, h, d);
}
