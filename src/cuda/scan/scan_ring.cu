/*
 * scan_ring.cu - "ring" and "ring_deep": a single-pass scan whose
 * CTAs never wait on a chain of look-backs while their SM's memory pipe runs
 * dry.
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
 * (round 0: A(0) op ... op A(b - 1)). Each CTA scans its next tile's
 * aggregate one round ahead (pass 1 over round k + 1's tile while round k is
 * stored) and publishes it at once, so the aggregates tile t needs were
 * published a round earlier by the CTAs before b and two rounds earlier by
 * those after it; the whole CTA polls them at once, the loads issued while
 * the previous tile is stored and waited on after the look-ahead pass. Nothing waits for a prefix
 * another CTA computed, only for aggregates of tiles whose data arrived a
 * round ago, and the ring's later tiles stay in flight meanwhile.
 *
 * Determinism. The prefix is the left fold of the tile aggregates, oldest
 * first, exactly as `lookback` defines it (P(i) = P(i - 1) op A(i), P(0) =
 * A(0)), and the tile is scanned in the same striped order
 * (scan_primitives.cuh): `ring` and `ring_deep` give the bits of `lookback`
 * (same 32 KB tiles) for every type and op. Floats fold
 * serially (G - 1 dependent combines in one thread, ~1000 clocks at G = 264,
 * against ~4 us per round of tiles); integers by a shuffle tree (any grouping
 * gives the same bits). The forms that look ahead two rounds (`ring_lead2*`)
 * fold floats by the same tree: lane i combines entries i, i + 32, ... in
 * order, then a fixed shuffle tree, then the carried prefix. The grouping
 * depends only on the window (G - 1, fixed by n and the device), so the bits
 * repeat run to run, but they are not `lookback`'s: the serial chain measured
 * 5-9 points of the copy bandwidth at f32 (docs/scan.md).
 *
 * Co-residency. A CTA spins on aggregates of CTAs of the same grid, so the
 * grid must be resident at once: it is launched cooperatively with at most
 * (resident CTAs per SM) x SMs CTAs, and the launch fails rather than
 * deadlocks if the device cannot hold it.
 *
 * Misaligned pointers. When `in` and `out` sit at the same offset within 16
 * bytes (in place, or both a few elements past aligned bases), the kernel
 * runs on the aligned body and the `head` elements before it (up to `in`'s
 * next 256-byte boundary, or 16-byte one where the two pointers agree only
 * that far; < 64): every CTA loads them at its start, its thread 0 scans
 * them in order while the first copies fly, and their total is the prefix
 * before tile 0. Every CTA reads the head before it publishes anything, so
 * once the CTA of the last tile has polled its window (one tile of every
 * other CTA) no read of the head is outstanding, and it writes the head's
 * outputs then: in place is safe without a second launch (a separate head
 * kernel cost ~2.3 us of launch and dependency, P175). Float bits depend on
 * the head (fixed by the pointer), so they repeat run to run but are not
 * `lookback`'s. Pairs that disagree modulo 16 bytes run, in the forms auto
 * takes, on `in`'s body from its next 256-byte boundary, copied as for
 * aligned pointers; `out` + head then lies 1-3 elements (8-byte types: 1)
 * past a 16-byte boundary, and each lane stores the aligned 16 bytes that
 * hold its first elements and the previous lane's last (a shuffle away),
 * whole chunks but at the ends of a warp's segment (smem_segment_store, one
 * kernel per shift). Copying `in` by elements instead (4-byte cp.async,
 * through L1) cost 18-22 % at 2^26-2^30 (P177). The other forms give such
 * pairs `lookback`'s scalar path. The last, partial tile is read with
 * guarded element loads.
 */
#include <type_traits>

#include <cooperative_groups.h>

#include "cuda/common/ptx_sm80.cuh"
#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_primitives.cuh"
#include "cuda/scan/scan_tile_status.cuh"

/* Ring forms: 32 KB tiles of a CTA in shared memory (one being stored, one
 * looked ahead, the rest in flight). `ring`: 3 slots per CTA, two CTAs per
 * SM; `ring_deep`: 6 slots, one CTA per SM (four tiles in flight). A form
 * with 3 x 64 KB slots (`ring_64k`, one CTA per SM) measured no faster than
 * `ring` in two runs (docs/scan.md) and was withdrawn. */
#define RING_NV 8
#define RING_STAGES 3
#define RING_STAGES_DEEP 6
/* Study forms with the same 96 KB of slots per CTA cut finer, two CTAs per
 * SM: `ring_4x24k` (4 slots of 24 KB: two tiles loading while one is looked
 * ahead and one stored) and `ring_6x16k` (6 of 16 KB: four loading). More
 * bytes in flight per SM at the price of more tiles (polls, barriers) per
 * byte; the float sums are grouped by their own tile size. */
#define RING_NV_24K 6
#define RING_STAGES_24K 4
#define RING_NV_16K 4
#define RING_STAGES_16K 6
/* Largest grid (aggregates polled per tile + 1): 2 CTAs on up to 256 SMs. */
#define RING_MAX_GRID 512
/* Largest head of a misaligned call (< 256 bytes of 4-byte elements), one per thread. */
#define RING_HEAD_MAX 64

/* `ring_lead2_5x20k`: five 20 KB slots, two CTAs per SM, so two tiles
 * load while one is stored and two are looked ahead (80 KB of copies in
 * flight per SM against `ring_lead2`'s 48 KB and `ring_lead2_deep`'s 96 KB,
 * at two CTAs per SM). */
#define RING_NV_20K 5
#define RING_STAGES_20K 5
/* Study forms of 512 threads, one CTA per SM with 192 KB of slots: twice the
 * warps of `ring_lead2_deep` to cover its latencies (27 % of its samples at
 * barriers, 15 % `wait`, 13 % short scoreboard with 8 warps per SM).
 * `ring_lead2_deep512`: 6 x 32 KB (NV 4: each warp's segment is half as
 * long); `ring_lead2_wide512`: 4 x 48 KB (NV 6: a third fewer rounds, polls
 * and barriers per byte than 32 KB tiles). */
#define RING_BLOCK_512 512
#define RING_NV_512_32K 4
#define RING_NV_512_48K 6
#define RING_STAGES_48K 4
/* H200 (P55, fb07094): both 512-thread forms 1.9 points above
 * `ring_lead2_deep` at 2^30 (96.2 % of copy), `ring_lead2_wide512` ahead at
 * 2^26 / 2^28 (90.0 / 94.8 % against 87.8 / 94.1 %). Study forms around it:
 * `ring_lead2_wide768` and `ring_lead2_wide1024`, the same 4 x 48 KB in 768
 * (NV 4) and 1024 threads (NV 3: 64 registers at most), more warps still;
 * `ring_lead2_5x40k`: 512 threads on 5 x 40 KB (NV 5), a second tile in
 * flight during the look-ahead passes. */
#define RING_BLOCK_768 768
#define RING_BLOCK_1024 1024
#define RING_NV_768_48K 4
#define RING_NV_1024_48K 3
#define RING_NV_512_40K 5
#define RING_STAGES_40K 5
/* two CTAs per SM where the slots fit twice (<= 104 KB per CTA, <= 128
 * registers) */
#define RING_CTAS_PER_SM(BLOCK, NV, STAGES) ((BLOCK) * 16 * (NV) * (STAGES) <= 26 * 4096 ? 2 : 1)

/* POLLS: where round k's aggregate loads are issued. RING_POLLS_EARLY:
 * while round k - 1's tile is stored (a whole store pass ahead of their
 * use); RING_POLLS_LATE: at the top of round k, after the round's cp.async
 * copies, before the look-ahead pass (the c172ef6 form); RING_POLLS_FIRST:
 * at the top of round k before the round's copies. A poll's round trip
 * measured longer than a store pass (ring_polls_twice, b42d184); issuing it
 * ahead of the copies did not shorten it for i32 (level with late: the time
 * is spent past the SM, docs/scan.md) but the 8-byte types, whose poll
 * waits for the flag before it loads the value, gained 1-2 %. Each type
 * keeps its fastest. */
#define RING_POLLS_LATE 0
#define RING_POLLS_EARLY 1
#define RING_POLLS_FIRST 2
/* RING_POLLS_LEAD2: the look-ahead pass runs two rounds ahead (round k
 * scans tile k + 2 and publishes its aggregate), so the aggregates round
 * k + 1 needs were all published a round before it starts, and its polls are
 * issued at the end of round k, a whole round before their test: the polls'
 * round trip leaves the round's serial path. Needs a fourth slot. */
#define RING_POLLS_LEAD2 3
/* RING_POLLS_LEAD2_FUSED: LEAD2 with two CTA barriers per round instead of
 * three. The look-ahead aggregate (tile k + 2) is not needed before round
 * k + 1 ends, so warp 0 publishes it after the barrier that follows the
 * polls' test, together with the fold, instead of behind a barrier of its
 * own: look-ahead, polls tested -> barrier -> warp 0 publishes and folds ->
 * barrier -> store. */
#define RING_POLLS_LEAD2_FUSED 4
template <typename T, int OP, int NV, int STAGES, int POLLS, int BLOCK, bool SELF_CLEAR = false,
          int OUT_SHIFT = 0>
__global__ void __launch_bounds__(BLOCK, RING_CTAS_PER_SM(BLOCK, NV, STAGES))
scan_ring_kernel(const T *in, T *out, int64_t n, int exclusive, tile_status<T> status, int head)
{
    static_assert(STAGES >= 3, "one tile stored, one looked ahead, one in flight");
    constexpr bool FUSED = POLLS == RING_POLLS_LEAD2_FUSED;
    constexpr int LEAD = POLLS == RING_POLLS_LEAD2 || FUSED ? 2 : 1; /* rounds looked ahead */
    static_assert(STAGES >= 2 + LEAD, "one tile stored, LEAD looked ahead, one in flight");
    static_assert(RING_MAX_GRID <= 2 * BLOCK, "two polls per thread");
    constexpr int WARPS = BLOCK / 32;
    constexpr int VEC = SCAN_VEC(T);
    constexpr int SEGMENT = 32 * VEC * NV;
    constexpr int64_t TILE = (int64_t)BLOCK * VEC * NV;
    extern __shared__ __align__(16) uint4 s_ring_raw[];
    __shared__ T s_total[WARPS];  /* segment totals of the look-ahead tile */
    __shared__ T s_prefix[WARPS]; /* segment prefixes of the tile being stored */
    __shared__ T s_aggregate[RING_MAX_GRID];
    __shared__ T s_head[RING_HEAD_MAX]; /* the head, then its scanned outputs */

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
    /* Pass 1 over round k's tile (its copies complete): pre[] and the
     * segment total in s_total; the partial last tile is filled here. */
    auto look_ahead = [&](int64_t k, T (&pre)[NV]) {
        const int64_t t = k * grid + cta;
        T *mine = mine0 + (int)(k % STAGES) * TILE;
        if ((t + 1) * TILE > n)
            smem_segment_fill_guarded<T, OP, VEC, NV>(mine, in, n, t * TILE + warp * SEGMENT, lane);
        const T total = smem_segment_scan<T, OP, VEC, NV>(mine, pre, lane);
        if (lane == 0) s_total[warp] = total;
    };
    /* Warp 0, after a barrier: the look-ahead tile's aggregate, published. */
    auto publish = [&](int64_t k, T &w_excl) {
        const T aggregate = tile_scan_warp_totals<T, OP, WARPS>(s_total, lane, w_excl);
        if (lane == 0) status.publish(k * grid + cta, STATUS_AGGREGATE, aggregate);
        return aggregate;
    };

    /* The aggregates round k's tile needs: tiles [first, tile) (round 0:
     * every tile before it). Thread i polls entries i and i + BLOCK;
     * the loads are issued a pass ahead of their use (`poll_issue`) and
     * re-polled only if an aggregate was not there yet. */
    const int i0 = threadIdx.x, i1 = threadIdx.x + BLOCK;
    unsigned f0, f1;
    T v0, v1;
    auto window_of = [&](int64_t k, int64_t &first) {
        const int64_t t = k * grid + cta;
        first = k == 0 ? 0 : t - grid + 1;
        return (int)(t - first);
    };
    auto poll_issue = [&](int64_t k) {
        int64_t first;
        const int window = window_of(k, first);
        f0 = f1 = STATUS_PREFIX; /* "nothing to wait for" */
        v0 = v1 = scan_identity<T, OP>();
        if (i0 < window) status.poll(first + i0, f0, v0);
        if (i1 < window) status.poll(first + i1, f1, v1);
    };

    /* SELF_CLEAR (no memset before the launch): each CTA clears the status
     * words of its own tiles while its first copies fly; the grid barrier
     * (the launch is cooperative) before the first publish orders every
     * clear before every publish and poll of this call. */
    if (SELF_CLEAR)
        for (int64_t k = threadIdx.x; k * grid + cta < tiles; k += BLOCK) status.clear(k * grid + cta);
    if (threadIdx.x < head) s_head[threadIdx.x] = in[(int)threadIdx.x - head];
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) issue(s);
    T pre[NV];
    T w_excl, aggregate; /* warp 0: of the tile being stored */
    cuops_cp_async_wait<STAGES - 2>();
    look_ahead(0, pre);
    if (SELF_CLEAR) {
        __threadfence();
        cooperative_groups::this_grid().sync();
    } else {
        __syncthreads();
    }
    /* warp 0: the head scanned in order by lane 0 (its outputs kept in
     * s_head for the last tile's CTA), its total the prefix before tile 0;
     * the head was read before this barrier, so before any publish */
    T head_total = scan_identity<T, OP>();
    if (head > 0 && warp == 0) {
        if (lane == 0)
            for (int j = 0; j < head; j++) {
                const T next = scan_combine<T, OP>(head_total, s_head[j]);
                s_head[j] = exclusive ? head_total : next;
                head_total = next;
            }
        head_total = __shfl_sync(SCAN_FULL_MASK, head_total, 0);
    }
    if (warp == 0) aggregate = publish(0, w_excl);
    if (POLLS == RING_POLLS_EARLY) poll_issue(0);
    __syncthreads(); /* s_total is read by warp 0 before the loop rewrites it */
    /* LEAD 2: round 1's tile scanned and published too, round 0's polls out */
    T pre1[NV];
    T w_excl1, aggregate1; /* warp 0: of round 1's tile */
    if (LEAD == 2) {
        cuops_cp_async_wait<(STAGES >= 3 ? STAGES - 3 : 0)>();
        const bool has1 = cta + grid < tiles;
        if (has1) look_ahead(1, pre1);
        __syncthreads();
        if (has1 && warp == 0) aggregate1 = publish(1, w_excl1);
        poll_issue(0);
        __syncthreads();
    }

    /* warp 0: the inclusive prefix of this CTA's previous tile; before tile 0,
     * the head's total where the scan runs on an aligned body */
    const bool has_carry = head > 0;
    T carried = head_total;
    for (int64_t k = 0; k * grid + cta < tiles; k++) {
        const int64_t tile = k * grid + cta;
        const bool ahead = tile + grid < tiles; /* the same for the whole CTA */
        if (POLLS == RING_POLLS_FIRST) poll_issue(k);
        /* slot (k - 1) % STAGES was last read by this thread in round k - 1 */
        issue(k + STAGES - 1);
        if (POLLS == RING_POLLS_LATE) poll_issue(k);

        /* Round k + LEAD's tile: pass 1 and its aggregate published a round
         * (LEAD 2: two) before any CTA needs it. */
        T pre_next[NV];
        T w_excl_next, aggregate_next;
        const bool ahead_lead = tile + LEAD * grid < tiles;
        cuops_cp_async_wait<STAGES - 1 - LEAD>();
        if (ahead_lead) look_ahead(k + LEAD, pre_next);
        if (!FUSED) {
            /* A CTA barrier, although only warp 0 reads the totals: a named
             * barrier that warps 1-7 only arrive at measured no faster
             * (dce30d1, docs/scan.md), and racecheck flagged s_prefix across
             * it. */
            __syncthreads();
            if (ahead_lead && warp == 0) aggregate_next = publish(k + LEAD, w_excl_next);
        }

        int64_t first;
        const int window = window_of(k, first);
        while (f0 == STATUS_EMPTY) status.poll(first + i0, f0, v0);
        while (f1 == STATUS_EMPTY) status.poll(first + i1, f1, v1);
        if (i0 < window) s_aggregate[i0] = v0;
        if (i1 < window) s_aggregate[i1] = v1;
        __syncthreads();
        /* the window holds a tile of every other CTA: all have read the head */
        if (tile == tiles - 1 && threadIdx.x < head) out[(int)threadIdx.x - head] = s_head[threadIdx.x];

        /* FUSED: s_total (the look-ahead pass's) is complete at the barrier
         * above and rewritten only after the one below */
        if (FUSED && ahead_lead && warp == 0) aggregate_next = publish(k + LEAD, w_excl_next);
        if (warp == 0) {
            /* P(tile - 1) from the carried prefix: integers (and every type
             * in the lead2 forms) by a fixed shuffle tree over the window,
             * floats otherwise by the left fold (round 0: from A(0) itself,
             * as `lookback` publishes P(0) = A(0)) */
            T prefix = carried; /* tile 0 (window 0; every later window is > 0) */
            if (window > 0) {
                if (std::is_integral<T>::value || LEAD == 2) {
                    T part = scan_identity<T, OP>();
                    for (int i = lane; i < window; i += 32)
                        part = scan_combine<T, OP>(part, s_aggregate[i]);
                    part = __shfl_sync(SCAN_FULL_MASK, warp_reduce<T, OP>(part), 0);
                    prefix = scan_combine<T, OP>(carried, part);
                } else {
                    if (lane == 0) {
                        int i = 0;
                        T p = carried;
                        if (k == 0 && !has_carry) p = s_aggregate[i++];
#pragma unroll 8
                        for (; i < window; i++) p = scan_combine<T, OP>(p, s_aggregate[i]);
                        prefix = p;
                    }
                    prefix = __shfl_sync(SCAN_FULL_MASK, prefix, 0);
                }
            }
            carried = tile == 0 && !has_carry ? aggregate : scan_combine<T, OP>(prefix, aggregate);
            tile_set_warp_prefixes<T, OP, WARPS>(s_prefix, lane, prefix, w_excl);
        }
        __syncthreads();

        /* the next round's polls travel while this tile is stored */
        if ((POLLS == RING_POLLS_EARLY || LEAD == 2) && ahead) poll_issue(k + 1);
        const bool full = (tile + 1) * TILE <= n;
        smem_segment_store<T, OP, VEC, NV, OUT_SHIFT>(mine0 + (int)(k % STAGES) * TILE, pre,
                                                      s_prefix[warp], exclusive, out, n,
                                                      tile * TILE + (int64_t)warp * SEGMENT, lane,
                                                      full);
        if (LEAD == 1 && ahead) {
#pragma unroll
            for (int j = 0; j < NV; j++) pre[j] = pre_next[j];
            w_excl = w_excl_next;
            aggregate = aggregate_next;
        }
        if (LEAD == 2) {
            if (ahead) {
#pragma unroll
                for (int j = 0; j < NV; j++) pre[j] = pre1[j];
                w_excl = w_excl1;
                aggregate = aggregate1;
            }
            if (ahead_lead) {
#pragma unroll
                for (int j = 0; j < NV; j++) pre1[j] = pre_next[j];
                w_excl1 = w_excl_next;
                aggregate1 = aggregate_next;
            }
        }
    }
    cuops_cp_async_wait<0>();
}

/* ---- host side ----------------------------------------------------------- */

/* head > 0: the ring kernel scans d->n - head elements from in + head, out +
 * head (both 16-byte aligned; with OUT_SHIFT > 0, in + head is and out +
 * head lies OUT_SHIFT elements past a 16-byte boundary), and the head
 * itself. */
template <typename T, int OP, int NV, int STAGES, int POLLS, int BLOCK, bool SELF_CLEAR = false,
          int OUT_SHIFT = 0>
static cuops_status_t ring_run(struct cuops_handle *h, const cuops_scan_desc_t *d, int64_t head,
                               const char *kernel_name)
{
    constexpr int VEC = SCAN_VEC(T);
    const int64_t tile = (int64_t)BLOCK * VEC * NV;
    const int64_t n = d->n - head;
    const int64_t tiles = cuops_ceil_div(n, tile);
    const int smem = (int)(STAGES * tile * (int64_t)sizeof(T));
    auto kernel = scan_ring_kernel<T, OP, NV, STAGES, POLLS, BLOCK, SELF_CLEAR, OUT_SHIFT>;

    /* per instantiation and device: cudaFuncSetAttribute applies to the
     * current device only, and devices may differ in their limits */
    static int ctas_per_sm_of[SCAN_MAX_DEVICES];
    const bool cacheable = h->device >= 0 && h->device < SCAN_MAX_DEVICES;
    int ctas_per_sm = cacheable ? __atomic_load_n(&ctas_per_sm_of[h->device], __ATOMIC_RELAXED) : 0;
    if (ctas_per_sm == 0) {
        CUOPS_CUDA_TRY(h, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               smem));
        CUOPS_CUDA_TRY(h, cudaFuncSetAttribute(kernel,
                                               cudaFuncAttributePreferredSharedMemoryCarveout,
                                               (int)cudaSharedmemCarveoutMaxShared));
        int per_sm = 0;
        CUOPS_CUDA_TRY(h, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel,
                                                                        BLOCK, smem));
        if (per_sm < 1)
            return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                              "%s: %d bytes of shared memory per CTA do not fit an SM",
                              kernel_name, smem);
        ctas_per_sm = per_sm;
        if (cacheable) __atomic_store_n(&ctas_per_sm_of[h->device], per_sm, __ATOMIC_RELAXED);
    }
    int64_t grid = (int64_t)ctas_per_sm * (h->num_sms > 0 ? h->num_sms : 1);
    if (grid > RING_MAX_GRID) grid = RING_MAX_GRID;
    if (grid > tiles) grid = tiles;

    tile_status<T> status; /* no tile counter: tiles are dealt by CTA index */
    cuops_status_t st = tile_status_acquire<T>(h, tiles, &status, NULL, !SELF_CLEAR);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    static_assert(256 / sizeof(T) <= RING_HEAD_MAX, "the head fits s_head");

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)grid);
    cfg.blockDim = dim3(BLOCK);
    cfg.dynamicSmemBytes = (size_t)smem;
    cfg.stream = cuops_stream(h);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;
    attr[0].val.cooperative = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    const cudaError_t err = cudaLaunchKernelEx(&cfg, kernel, (const T *)d->in + head,
                                               (T *)d->out + head, n, d->exclusive, status,
                                               (int)head);
    if (err == cudaErrorCooperativeLaunchTooLarge) {
        /* the stream reaches fewer SMs than the device has (an MPS limit, a
         * green context): the ring needs every CTA resident at once, the
         * look-back kernel nothing of the kind */
        (void)cudaGetLastError();
        return cuops_scan_lookback_launch(h, d, 0);
    }
    if (err != cudaSuccess) return cuops_cuda_fail(h, err, "cudaLaunchKernelEx");
    return cuops_cuda_check_launch(h, kernel_name);
}

/* The ring forms: the kernel names (16-byte-aligned path, the scalar path
 * of `lookback` that runs under the form's name for misaligned pointers,
 * and for auto's forms the path with the stores realigned where `in` and
 * `out` disagree modulo 16 bytes) and the geometry: threads per CTA,
 * 16-byte loads per thread per slot (NV), slots (STAGES) and poll order
 * (RING_POLLS_BY_TYPE: each type's fastest, ring_polls<T>()), by the form
 * number the variant table (scan_dispatch.cu) passes to
 * cuops_scan_ring_launch. */
#define RING_POLLS_BY_TYPE -1
typedef struct ring_form_desc {
    const char *vec_name, *scalar_name;
    int block, nv, stages, polls;
    bool self_clear; /* the kernel clears its status (no memset per call) */
    /* non-NULL: `in` and `out` that disagree modulo 16 bytes run the ring on
     * `in`'s aligned body, each warp's stores realigned to `out` by shuffles
     * (the forms auto takes); NULL: they take `lookback`'s scalar path */
    const char *shifted_name;
} ring_form_desc_t;
static constexpr ring_form_desc_t ring_forms[] = {
    /* 0 ring: 3 x 32 KB, two CTAs per SM */
    {"scan_ring_vec16", "scan_ring_scalar", SCAN_BLOCK, RING_NV, RING_STAGES, RING_POLLS_BY_TYPE,
     false, "scan_ring_vec16_out_shifted"},
    /* 1 ring_deep: 6 x 32 KB, one CTA per SM */
    {"scan_ring_deep_vec16", "scan_ring_deep_scalar", SCAN_BLOCK, RING_NV, RING_STAGES_DEEP,
     RING_POLLS_BY_TYPE},
    /* 2, 3: `ring` with the poll order fixed, for the study */
    {"scan_ring_polls_early_vec16", "scan_ring_polls_early_scalar", SCAN_BLOCK, RING_NV, RING_STAGES,
     RING_POLLS_EARLY},
    {"scan_ring_polls_late_vec16", "scan_ring_polls_late_scalar", SCAN_BLOCK, RING_NV, RING_STAGES,
     RING_POLLS_LATE},
    /* 4 ring_4x24k, 5 ring_6x16k: `ring`'s 96 KB cut finer */
    {"scan_ring_4x24k_vec16", "scan_ring_4x24k_scalar", SCAN_BLOCK, RING_NV_24K, RING_STAGES_24K,
     RING_POLLS_BY_TYPE},
    {"scan_ring_6x16k_vec16", "scan_ring_6x16k_scalar", SCAN_BLOCK, RING_NV_16K, RING_STAGES_16K,
     RING_POLLS_BY_TYPE},
    /* 6 ring_polls_first: `ring` with the polls before the round's copies */
    {"scan_ring_polls_first_vec16", "scan_ring_polls_first_scalar", SCAN_BLOCK, RING_NV, RING_STAGES,
     RING_POLLS_FIRST},
    /* 7 ring_lead2: 4 x 24 KB, looked ahead two rounds, polls a round ahead */
    {"scan_ring_lead2_vec16", "scan_ring_lead2_scalar", SCAN_BLOCK, RING_NV_24K, RING_STAGES_24K,
     RING_POLLS_LEAD2, false, "scan_ring_lead2_vec16_out_shifted"},
    /* 8 ring_lead2_fused: the same with two barriers per round */
    {"scan_ring_lead2_fused_vec16", "scan_ring_lead2_fused_scalar", SCAN_BLOCK, RING_NV_24K,
     RING_STAGES_24K, RING_POLLS_LEAD2_FUSED, false, "scan_ring_lead2_fused_vec16_out_shifted"},
    /* 9 ring_lead2_deep: lead2 on ring_deep's 6 x 32 KB, one CTA per SM */
    {"scan_ring_lead2_deep_vec16", "scan_ring_lead2_deep_scalar", SCAN_BLOCK, RING_NV,
     RING_STAGES_DEEP, RING_POLLS_LEAD2},
    /* 10 ring_lead2_5x20k: lead2 on 5 x 20 KB, two CTAs per SM */
    {"scan_ring_lead2_5x20k_vec16", "scan_ring_lead2_5x20k_scalar", SCAN_BLOCK, RING_NV_20K,
     RING_STAGES_20K, RING_POLLS_LEAD2},
    /* 11 ring_lead2_deep512 (6 x 32 KB), 12 ring_lead2_wide512 (4 x 48 KB):
     * lead2 in 512-thread CTAs, one per SM */
    {"scan_ring_lead2_deep512_vec16", "scan_ring_lead2_deep512_scalar", RING_BLOCK_512,
     RING_NV_512_32K, RING_STAGES_DEEP, RING_POLLS_LEAD2},
    {"scan_ring_lead2_wide512_vec16", "scan_ring_lead2_wide512_scalar", RING_BLOCK_512,
     RING_NV_512_48K, RING_STAGES_48K, RING_POLLS_LEAD2, false,
     "scan_ring_lead2_wide512_vec16_out_shifted"},
    /* 13 ring_lead2_wide768, 14 ring_lead2_wide1024: 4 x 48 KB in more threads */
    {"scan_ring_lead2_wide768_vec16", "scan_ring_lead2_wide768_scalar", RING_BLOCK_768,
     RING_NV_768_48K, RING_STAGES_48K, RING_POLLS_LEAD2},
    {"scan_ring_lead2_wide1024_vec16", "scan_ring_lead2_wide1024_scalar", RING_BLOCK_1024,
     RING_NV_1024_48K, RING_STAGES_48K, RING_POLLS_LEAD2},
    /* 15 ring_lead2_5x40k: 512 threads on 5 x 40 KB */
    {"scan_ring_lead2_5x40k_vec16", "scan_ring_lead2_5x40k_scalar", RING_BLOCK_512,
     RING_NV_512_40K, RING_STAGES_40K, RING_POLLS_LEAD2},
    /* 16 ring_lead2_wide512_selfclear: 12 with the status cleared in the
     * kernel, behind a grid barrier, instead of a memset before it */
    {"scan_ring_lead2_wide512_selfclear_vec16", "scan_ring_lead2_wide512_selfclear_scalar",
     RING_BLOCK_512, RING_NV_512_48K, RING_STAGES_48K, RING_POLLS_LEAD2, true},
};
#define RING_FORMS ((int)(sizeof ring_forms / sizeof ring_forms[0]))

/* Shared memory of a ring CTA of `form`: its slots of BLOCK x NV 16-byte
 * loads and at most 8 KB of static arrays, against this device's limit. */
static int ring_form_fits(const struct cuops_handle *h, int form)
{
    const ring_form_desc_t &f = ring_forms[form];
    return h->smem_optin_bytes >= (int64_t)f.stages * f.block * 16 * f.nv + 8192;
}

/* Elements before the aligned body of a ring scan: 0 when `in` and `out` are
 * 16-byte aligned; up to `in`'s next 256-byte boundary when the two agree
 * modulo 256 bytes (whole lines for every warp's loads and stores, as at a
 * cudaMalloc'd base: a 16-byte body cost the reduce 6 % at 2^30), else its
 * next 16-byte one when they agree modulo 16; -1 (no vector path) when they
 * do not, or when the head would cover every element. */
int64_t cuops_scan_ring_head(const cuops_scan_desc_t *d)
{
    const uintptr_t in = (uintptr_t)d->in, out = (uintptr_t)d->out;
    if (cuops_aligned(d->in, 16) && cuops_aligned(d->out, 16)) return 0;
    const uintptr_t to = (in - out) % 256 == 0 ? 256 : (in - out) % 16 == 0 ? 16 : 0;
    if (to == 0) return -1;
    const int64_t head = cuops_elems_to_boundary(d->in, to, cuops_dtype_size(d->type));
    return head < d->n ? head : -1;
}

/* Elements before `in`'s aligned body where `in` and `out` disagree modulo
 * 16 bytes (cuops_scan_ring_head is -1): up to `in`'s next 256-byte
 * boundary (whole lines for every warp's copies; `out` then lies a few
 * elements past a 16-byte boundary and the stores are realigned); -1 when
 * the head would cover every element. */
int64_t cuops_scan_ring_head_apart(const cuops_scan_desc_t *d)
{
    const int64_t head = cuops_elems_to_boundary(d->in, 256, cuops_dtype_size(d->type));
    return head < d->n ? head : -1;
}

/* The auto scan's test: `ring`'s three 32 KB slots and its static shared
 * memory fit one CTA of this device. */
int cuops_scan_ring_serves(const struct cuops_handle *h)
{
    return ring_form_fits(h, 0);
}

/* The ring form auto takes for this call (aligned pointers, `ring` served),
 * by element size and input bytes, from the H200 runs (docs/scan.md, "Looked
 * ahead two rounds" and "CTAs of 512 threads"). 4-byte types:
 * `ring_lead2_wide512` from 4 MB where its 192 KB of slots fit (P55: i32
 * 90.0 / 94.8 / 96.2 % of copy at 2^26 / 2^28 / 2^30 against
 * `ring_lead2_deep`'s 86.2 / 92.4 / 94.3 %; P56: 9.92 / 18.14 / 42.59 /
 * 75.68 us at 2^20 / 2^22 / 2^24 / 2^25 against `ring`'s 10.05 / 18.59 /
 * 44.48 / 79.42, f32 likewise), else `ring_lead2` from 256 MB. 8-byte
 * types from 128 MB: i64 `ring_lead2_fused` (P56: 0.969 / 0.960 / 0.953x
 * CUB at 2^24 / 2^26 / 2^28, `ring_lead2` 0.956 / 0.951 / 0.950x), f64
 * `ring_lead2` (1.060 / 1.067 / 1.062x against fused's 1.058 / 1.035 /
 * 1.024x; ahead in P53 and P55 too). Below those sizes `ring`. The floats
 * of the lead2 forms fold by a fixed tree (their own bits, deterministic;
 * below these sizes auto's float bits are `ring`'s = `lookback`'s). */
int cuops_scan_ring_auto_form(const struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    static_assert(ring_forms[0].shifted_name && ring_forms[7].shifted_name &&
                      ring_forms[8].shifted_name && ring_forms[12].shifted_name,
                  "every form auto takes serves pairs that disagree modulo 16 (scan_auto)");
    const int64_t bytes = d->n * (int64_t)cuops_dtype_size(d->type);
    if (cuops_dtype_size(d->type) == 8) {
        if (bytes < ((int64_t)128 << 20)) return 0;
        return d->type == CUOPS_DTYPE_F64 ? 7 : 8;
    }
    if (bytes >= ((int64_t)4 << 20) && ring_form_fits(h, 12)) return 12;
    return bytes >= ((int64_t)256 << 20) ? 7 : 0;
}

/* The poll order `ring` and `ring_deep` use for type T (POLLS above),
 * each type's fastest measured (H200, docs/scan.md). 8-byte types: polls
 * before the round's copies, 2.2 / 2.0 % faster than early at 2^28 (i64 /
 * f64, 44c1c6a); before that, the faster of the first two orders:
 * i32 5-9 % faster with the polls at the top of the round (90.0 % of copy
 * at 2^30 against 83.4 %, dbca219); f32 3-5 % faster with them a store pass
 * ahead (89.4 % against 85.7 %), and so were i64 (72.7 % against 66.8 % at
 * 2^28) and f64 (71.0 % against 61.9 %, 18bffc2). Only i32 polls late. */
template <typename T> static constexpr int ring_polls()
{
    return sizeof(T) == 8                  ? RING_POLLS_FIRST
           : std::is_integral<T>::value ? RING_POLLS_LATE
                                          : RING_POLLS_EARLY;
}

template <typename T, int OP, int FORM>
static cuops_status_t ring_typed(struct cuops_handle *h, const cuops_scan_desc_t *d)
{
    constexpr ring_form_desc_t f = ring_forms[FORM];
    constexpr int polls = f.polls == RING_POLLS_BY_TYPE ? ring_polls<T>() : f.polls;
    const int64_t head = cuops_scan_ring_head(d);
    if (head >= 0)
        return ring_run<T, OP, f.nv, f.stages, polls, f.block, f.self_clear>(h, d, head,
                                                                             f.vec_name);
    if constexpr (f.shifted_name != nullptr) {
        /* in and out disagree modulo 16 bytes: in's aligned body, out + head
         * `shift` elements past a 16-byte boundary */
        const int64_t apart = cuops_scan_ring_head_apart(d);
        if (apart >= 0) {
            /* 1-3 elements of 4 bytes, 1 of 8: one kernel per shift */
            const uintptr_t body_out = (uintptr_t)d->out + (uintptr_t)apart * sizeof(T);
            const int shift = (int)(body_out % 16 / sizeof(T));
            if constexpr (sizeof(T) == 4) {
                if (shift == 2)
                    return ring_run<T, OP, f.nv, f.stages, polls, f.block, f.self_clear, 2>(
                        h, d, apart, f.shifted_name);
                if (shift == 3)
                    return ring_run<T, OP, f.nv, f.stages, polls, f.block, f.self_clear, 3>(
                        h, d, apart, f.shifted_name);
            }
            return ring_run<T, OP, f.nv, f.stages, polls, f.block, f.self_clear, 1>(
                h, d, apart, f.shifted_name);
        }
    }
    /* the scalar kernel of `lookback`, under this variant's name */
    cuops_status_t st = cuops_scan_lookback_launch(h, d, 0);
    if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = f.scalar_name;
    return st;
}

/* ring_typed with FORM fixed, as the <T, OP> template SCAN_TYPE_OP_CALL expects */
template <int FORM> struct ring_form {
    template <typename T, int OP>
    static cuops_status_t run(struct cuops_handle *h, const cuops_scan_desc_t *d)
    {
        return ring_typed<T, OP, FORM>(h, d);
    }
};

cuops_status_t cuops_scan_ring_launch(struct cuops_handle *h, const cuops_scan_desc_t *d, int form)
{
    static_assert(RING_FORMS == 17, "one case below per entry of ring_forms");
#define RING_CALL(FN)                                                                             \
    SCAN_TYPE_OP_CALL(d->type, d->op,                                                             \
                      cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "scan: dtype %s",                 \
                                 cuops_dtype_name(d->type)),                                      \
                      FN, h, d)
    switch (form) {
    case 1: return RING_CALL(ring_form<1>::run);
    case 2: return RING_CALL(ring_form<2>::run);
    case 3: return RING_CALL(ring_form<3>::run);
    case 4: return RING_CALL(ring_form<4>::run);
    case 5: return RING_CALL(ring_form<5>::run);
    case 6: return RING_CALL(ring_form<6>::run);
    case 7: return RING_CALL(ring_form<7>::run);
    case 8: return RING_CALL(ring_form<8>::run);
    case 9: return RING_CALL(ring_form<9>::run);
    case 10: return RING_CALL(ring_form<10>::run);
    case 11: return RING_CALL(ring_form<11>::run);
    case 12: return RING_CALL(ring_form<12>::run);
    case 13: return RING_CALL(ring_form<13>::run);
    case 14: return RING_CALL(ring_form<14>::run);
    case 15: return RING_CALL(ring_form<15>::run);
    case 16: return RING_CALL(ring_form<16>::run);
    default: return RING_CALL(ring_form<0>::run);
    }
#undef RING_CALL
}
