/*
 * gemm_sm90_fused_pack.cuh - misaligned K-major operands packed inside the
 * Hopper GEMM kernel, beside the main loop, instead of by a launch before it.
 *
 * An operand whose rows TMA cannot read (an odd ld such as 4095: rows off 16
 * bytes) is copied onto aligned rows of cuops_sm90_packed_ld(k) elements in
 * the workspace (gemm_sm90_pack.cu). As a kernel of its own that copy is a
 * memory-bound pass the tensor cores sit out: 44 us of a 248 us call at
 * 4095^3 on the H200 (docs/gemm.md). Here the three warps of the producer
 * warpgroup that issue no TMA do it while the GEMM runs, and the TMA thread
 * waits, k-block by k-block, only for the part it is about to load.
 * Measured slower than the launch before the kernel (an H100 at 4095^3:
 * 303 against 261 us in P226; the bulk form 269 against 259 in P227: three
 * warps, one per scheduler, issue too slowly to pack at the row copy's rate,
 * and the tiles wait for their slices), so auto does not use it: the study
 * entries sm90_ws_128x{256,128}_pack_inside and _pack_bulk.
 *
 * Work: a slice is 256 columns of k (4 k-blocks, one 16-byte chunk per lane)
 * of a list of rows; an item is one slice of 16 consecutive rows of the
 * list, taken by a warp from a global counter in order, so slices finish
 * roughly in k order. Two phases: phase 0's list is the rows the grid's
 * first round of tiles reads (A rows [0, a_first), then B rows [0, b_first)),
 * phase 1's the rest, so that the first round waits only for its own rows.
 * An item's 16 rows go through shared memory as two batches of 8: cp.async
 * of the 33 aligned 16-byte source chunks that cover each row's 256 columns
 * (element-wise only at the operand's two ends, zeros past k: sm90_pack_fetch),
 * then per lane one chunk shifted onto the packed row's 16-byte grid (LDS,
 * funnel shifts, STG). The next one or two batches' copies are in flight
 * while one batch is shifted and stored (sm90_pack_slots). The bulk form
 * (pk.bulk, entries "_pack_bulk") fetches each row's 33 chunks with one
 * cp.async.bulk on the slot's mbarrier instead (sm90_pack_issue_bulk).
 * A warp stores an item's rows, fences, and counts the item into its
 * (phase, slice) counter; the TMA thread reads the counters with acquire
 * loads before its first load of a slice (then a proxy fence: TMA reads
 * through the async proxy what the packers wrote through the generic one).
 *
 * Shared memory: the kernel's stage ring is one stage shorter, and the
 * packers take that room (two or three batch slots per warp). A first
 * version put them in the consumers' epilogue buffers, which the first
 * epilogue then had to wait for until the whole pack was done: 4095^3 ran
 * 23 % slower than with the pack launched before the kernel (P226).
 *
 * Packer CTAs (pk.pack_ctas > 0, sm90_pack_cta): instead of three warps in
 * every CTA, the first pack_ctas CTAs to start do all the packing with all
 * their warps and shared memory, items dealt to them in turn, while the
 * others run the tiles; with pk.join they run tiles once packed, and every
 * CTA claims its units from a counter (sm90_unit_post / sm90_unit_take).
 *
 * Counters (the handle's, zero between calls): [0] the next item (packer
 * warps) or the CTAs' start tickets (packer CTAs), [1] CTAs done, [2 +
 * phase * slices + slice] items done, then the next unit (join). The last
 * CTA to finish zeroes them. No CTA waits for another to start: items are
 * claimed only by running warps (or dealt to packer CTAs, which are chosen
 * among the CTAs already running), and a claimed item is always finished.
 */
#pragma once

#include "cuda/common/ptx_sm80.cuh"
#include "cuda/common/ptx_sm90.cuh"

#define SM90_PACK_SLICE 256   /* k columns per slice: 32 lanes x 8 elements */
#define SM90_PACK_SLICE_KB 4  /* k-blocks of 64 per slice */
#define SM90_PACK_ITEM_ROWS 16
#define SM90_PACK_BATCH 8     /* rows per batch, one cp.async group */
#define SM90_PACK_CHUNKS 33   /* aligned source chunks that cover a row's 32 packed chunks */
#define SM90_PACK_SLOT_BYTES (SM90_PACK_BATCH * SM90_PACK_CHUNKS * 16)
#define SM90_PACK_WARPS 3     /* warps 1-3 of the producer warpgroup */
/* Batch slots per packer warp: three (two batches in flight while one is
 * stored) where the shared memory has room, on 256-column tiles */
__host__ __device__ constexpr int sm90_pack_slots(int bn) { return bn == 256 ? 3 : 2; }
/* Rows whose loads the drain has in flight together: four under the
 * 128-column kernel's 80 producer registers, two under the 256-column
 * kernel's 56 (four spilled there) */
__host__ __device__ constexpr int sm90_pack_drain_rows(int bn) { return bn == 256 ? 2 : 4; }
#define SM90_PACK_BAR_ID 4    /* named barrier of the producer warpgroup at the end */
/* The bulk form's slot barriers (one per warp and slot), after the slots */
#define SM90_PACK_BAR_BYTES 128
static_assert(SM90_PACK_WARPS * sm90_pack_slots(256) * 8 <= SM90_PACK_BAR_BYTES,
              "a barrier per packer slot");

typedef struct sm90_fused_pack {
    const uint16_t *a, *b; /* K-major sources, any 2-byte alignment */
    int64_t lda, ldb;
    uint16_t *pa, *pb;     /* packed rows, ld = ldp, 16-byte aligned */
    int64_t ldp;
    const uint16_t *a_end, *b_end; /* one past the last row's element k - 1 */
    int a_rows, b_rows;    /* rows to pack: m or 0, n or 0 */
    int k;
    int a_first, b_first;  /* phase 0: A rows [0, a_first), B rows [0, b_first) */
    int slices;            /* ceil(ldp / SM90_PACK_SLICE) */
    int groups0, groups1;  /* items per slice in phase 0, 1 */
    unsigned *counters;    /* sm90_pack_counters(slices) of them, zero */
    int bulk;              /* rows fetched by bulk copies (sm90_pack_issue_bulk) */
    int pack_ctas;         /* > 0: that many whole CTAs pack (sm90_pack_cta), the
                            * others run the GEMM and pack nothing */
    int join;              /* pack_ctas: units claimed from a counter, the packer
                            * CTAs too once packed (sm90_unit_post) */
} sm90_fused_pack_t;

/* Counters a call needs (cuops_cuda_counters): [0] the next item (packer
 * warps) or CTA start tickets (packer CTAs), [1] CTAs done, then the items
 * done per (phase, slice), then the next unit (join) */
__host__ __device__ static inline int64_t sm90_pack_counters(int64_t slices) { return 3 + 2 * slices; }

/* After a warp's stores of an item (ordered before this lane by a warp
 * barrier), before the atomic that counts it in: the stores visible at gpu
 * scope, and to the async proxy that TMA reads them through */
__device__ __forceinline__ void sm90_pack_release(void)
{
    asm volatile("fence.acq_rel.gpu;\n\tfence.proxy.async.global;" ::: "memory");
}

/* Item -> (phase, slice, group of 16 rows in the phase's list) */
__device__ __forceinline__ void sm90_pack_item(const sm90_fused_pack_t &pk, int item, int *phase,
                                               int *slice, int *group)
{
    const int total0 = pk.slices * pk.groups0;
    const int p = item >= total0 ? 1 : 0;
    const int i = p ? item - total0 : item;
    const int groups = p ? pk.groups1 : pk.groups0;
    *phase = p;
    *slice = i / groups;
    *group = i - *slice * groups;
}

/* Row x of phase p's list: its source and packed rows, and its operand's
 * span (from the first row's element 0 to one past the last row's element
 * k - 1); false past the list */
__device__ __forceinline__ bool sm90_pack_row(const sm90_fused_pack_t &pk, int p, int x,
                                              const uint16_t **src, uint16_t **dst,
                                              const uint16_t **begin, const uint16_t **end)
{
    const int a0 = p ? pk.a_first : 0, a_cnt = p ? pk.a_rows - pk.a_first : pk.a_first;
    if (x < a_cnt) {
        *src = pk.a + (int64_t)(a0 + x) * pk.lda;
        *dst = pk.pa + (int64_t)(a0 + x) * pk.ldp;
        *begin = pk.a;
        *end = pk.a_end;
        return true;
    }
    x -= a_cnt;
    const int b0 = p ? pk.b_first : 0, b_cnt = p ? pk.b_rows - pk.b_first : pk.b_first;
    if (x < b_cnt) {
        *src = pk.b + (int64_t)(b0 + x) * pk.ldb;
        *dst = pk.pb + (int64_t)(b0 + x) * pk.ldp;
        *begin = pk.b;
        *end = pk.b_end;
        return true;
    }
    return false;
}

/* Halves a row starts past its 16-byte chunk */
__device__ __forceinline__ int sm90_pack_mis(const uint16_t *row)
{
    return (int)(((uintptr_t)row & 15u) / 2u);
}

/* Aligned source chunk c of a row that starts `mis` halves into its chunk
 * (elements 8c - mis .. 8c - mis + 7), element by element: zeros outside
 * [0, k). For the chunks that would cross the operand's span (below). */
__device__ __forceinline__ uint4 sm90_pack_chunk_elems(const uint16_t *row, int64_t e0, int k)
{
    uint32_t w[4];
#pragma unroll
    for (int x = 0; x < 4; x++) {
        const int64_t e = e0 + 2 * x;
        const uint32_t lo = e >= 0 && e < k ? __ldg(row + e) : 0u;
        const uint32_t hi = e + 1 >= 0 && e + 1 < k ? __ldg(row + e + 1) : 0u;
        w[x] = lo | hi << 16;
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ __forceinline__ void sm90_pack_st_shared(uint32_t dst, uint4 v)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(dst), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}

/* Chunk c into shared memory. One cp.async wherever the chunk lies within
 * the operand's span [begin, end) (its first row's element 0 to its last
 * row's element k - 1): a chunk that reaches past this row's ends reads the
 * neighbouring row's elements, which land only in packed columns the shift
 * drops (before element 0) or past k, which the tensor maps end at (their
 * boxes read zeros there). Zeros for a chunk wholly past k; element by
 * element only where the chunk would cross the span's ends (the first row's
 * first chunk, the last row's last), so nothing outside the operand is
 * read. A synchronous load per row in the issue loop would cost the warp a
 * memory round trip per row: the first version took every row's first and
 * last chunk that way and ran 27 % slower than the launch before the kernel
 * (P226). SYNC: a plain load instead of the cp.async (the bulk form's rows
 * whose window leaves the span, sm90_pack_issue_bulk). */
template <bool SYNC = false>
__device__ __forceinline__ void sm90_pack_fetch(uint32_t dst, const uint16_t *row, int mis,
                                                int64_t c, int k, const uint16_t *begin,
                                                const uint16_t *end)
{
    const int64_t e0 = 8 * c - mis;
    const uint16_t *chunk = row + e0;
    if (e0 < k && chunk >= begin && chunk + 8 <= end) {
        if (SYNC)
            sm90_pack_st_shared(dst, __ldg((const uint4 *)chunk));
        else
            cuops_cp_async_16_zfill(dst, chunk, 16);
        return;
    }
    sm90_pack_st_shared(dst, sm90_pack_chunk_elems(row, e0, k));
}

/* One row's chunks of slice s into its row slot: chunk s * 32 + lane per
 * lane, and lane 0 the 33rd, which a row off the chunk grid reaches into
 * (SYNC: sm90_pack_fetch's plain loads) */
template <bool SYNC>
__device__ __forceinline__ void sm90_pack_fetch_row(uint32_t row_slot, const uint16_t *src, int s,
                                                    int k, const uint16_t *begin,
                                                    const uint16_t *end, int lane)
{
    const int mis = sm90_pack_mis(src);
    const int64_t c0 = (int64_t)s * 32;
    sm90_pack_fetch<SYNC>(row_slot + 16u * (uint32_t)lane, src, mis, c0 + lane, k, begin, end);
    if (lane == 0 && mis > 0)
        sm90_pack_fetch<SYNC>(row_slot + 16u * 32u, src, mis, c0 + 32, k, begin, end);
}

/* Issue the copies of batch `half` of `item` into `slot`, row by row (a
 * loop unrolled over the rows ran slower, P227 call 2) */
__device__ __forceinline__ void sm90_pack_issue(const sm90_fused_pack_t &pk, int item, int half,
                                                uint32_t slot, int lane)
{
    int p, s, g;
    sm90_pack_item(pk, item, &p, &s, &g);
#pragma unroll 1
    for (int r = 0; r < SM90_PACK_BATCH; r++) {
        const uint16_t *src, *begin, *end;
        uint16_t *dst;
        if (!sm90_pack_row(pk, p, g * SM90_PACK_ITEM_ROWS + half * SM90_PACK_BATCH + r, &src, &dst,
                           &begin, &end))
            break;
        sm90_pack_fetch_row<false>(slot + (uint32_t)(r * SM90_PACK_CHUNKS * 16), src, s, pk.k, begin,
                                   end, lane);
    }
}

/* The rows of a bulk batch whose window leaves the operand's span (bits of
 * `fallback`, each lane's own row in src / begin / end), fetched by the
 * whole warp with plain loads into their row slots */
__device__ __forceinline__ void sm90_pack_fetch_fallback(const sm90_fused_pack_t &pk, unsigned fallback,
                                                         const uint16_t *src, const uint16_t *begin,
                                                         const uint16_t *end, int s, uint32_t slot,
                                                         int lane)
{
    while (fallback) {
        const int r = __ffs(fallback) - 1;
        fallback &= fallback - 1;
        const uint16_t *rs = (const uint16_t *)__shfl_sync(0xffffffffu, (unsigned long long)src, r);
        const uint16_t *rb = (const uint16_t *)__shfl_sync(0xffffffffu, (unsigned long long)begin, r);
        const uint16_t *re = (const uint16_t *)__shfl_sync(0xffffffffu, (unsigned long long)end, r);
        sm90_pack_fetch_row<true>(slot + (uint32_t)(r * SM90_PACK_CHUNKS * 16), rs, s, pk.k, rb, re,
                                  lane);
    }
}

/* The bulk form of sm90_pack_issue (ROWS rows from row half * ROWS of the
 * item: a packer warp's batch of 8, or a packer CTA's whole item of 16):
 * lane r < ROWS fetches row r's 33 (or 32, on the chunk grid) aligned source
 * chunks of the slice with one bulk copy completing on the slot's barrier
 * `bar`, where that window lies within the
 * operand's span; the rows whose window leaves it (the operand's first and
 * last rows) are fetched by the whole warp with plain loads, chunk per lane.
 * Per row one instruction instead of a cp.async per lane with its address
 * arithmetic: the rolled per-lane loops held the packers at ~0.7 TB/s
 * (P226 call 4). The caller has stopped reading the slot (__syncwarp). */
template <int ROWS = SM90_PACK_BATCH, bool OTHER_DRAINS = false>
__device__ __forceinline__ void sm90_pack_issue_bulk(const sm90_fused_pack_t &pk, int item, int half,
                                                     uint32_t slot, uint32_t bar, int lane)
{
#if CUOPS_SM90A_DEVICE
    int p, s, g;
    sm90_pack_item(pk, item, &p, &s, &g);
    const uint16_t *src = NULL, *begin = NULL, *end = NULL;
    uint16_t *dst = NULL;
    const bool ok = lane < ROWS &&
                    sm90_pack_row(pk, p, g * SM90_PACK_ITEM_ROWS + half * ROWS + lane, &src, &dst,
                                  &begin, &end);
    uint32_t bytes = 0;
    const uint16_t *from = NULL;
    if (ok) {
        const int mis = sm90_pack_mis(src);
        const int elems = mis > 0 ? SM90_PACK_CHUNKS * 8 : SM90_PACK_SLICE;
        from = src - mis + (int64_t)s * SM90_PACK_SLICE;
        if (from >= begin && from + elems <= end) bytes = 2u * (uint32_t)elems;
    }
    const uint32_t total = __reduce_add_sync(0xffffffffu, bytes);
    unsigned fallback = __ballot_sync(0xffffffffu, ok && bytes == 0);
    /* OTHER_DRAINS: another warp drains the slot once the barrier completes,
     * so the plain-load rows go first, ordered before it by the arrive */
    if (OTHER_DRAINS) {
        sm90_pack_fetch_fallback(pk, fallback, src, begin, end, s, slot, lane);
        __syncwarp(); /* every lane's stores before lane 0's arrive */
    }
    if (lane == 0) {
        /* the slot's last reads (generic proxy) before the bulk writes */
        cuops_fence_proxy_async_smem();
        cuops_mbar_arrive_expect_tx(bar, total);
    }
    __syncwarp();
    if (bytes) cuops_bulk_load(slot + (uint32_t)(lane * SM90_PACK_CHUNKS * 16), from, bytes, bar);
    if (!OTHER_DRAINS) sm90_pack_fetch_fallback(pk, fallback, src, begin, end, s, slot, lane);
#endif
}

/* lo, hi: two consecutive aligned source chunks; the 8 halves that start
 * `mis` halves into lo. Selects, no branches: the drain interleaves rows
 * of different shifts. */
__device__ __forceinline__ uint4 sm90_pack_shift(uint4 lo, uint4 hi, int mis)
{
    const bool two = (mis & 4) != 0, one = (mis & 2) != 0; /* words on: 2, then 1 */
    const uint32_t a0 = two ? lo.z : lo.x, a1 = two ? lo.w : lo.y, a2 = two ? hi.x : lo.z,
                   a3 = two ? hi.y : lo.w, a4 = two ? hi.z : hi.x, a5 = two ? hi.w : hi.y;
    const uint32_t w0 = one ? a1 : a0, w1 = one ? a2 : a1, w2 = one ? a3 : a2, w3 = one ? a4 : a3,
                   w4 = one ? a5 : a4;
    const uint32_t bits = (uint32_t)(mis & 1) * 16u;
    return make_uint4(__funnelshift_r(w0, w1, bits), __funnelshift_r(w1, w2, bits),
                      __funnelshift_r(w2, w3, bits), __funnelshift_r(w3, w4, bits));
}

/* Shift and store batch `half` of `item` from `slot`: lane l writes packed
 * chunk 32 s + l of each row (those below ldp). Lane r < ROWS finds row r's
 * packed row and shift once (the slice's packed chunk 0 is 16-byte aligned:
 * the shift rides in its low bits), the warp takes them by shuffles, and
 * the 8 rows' loads, shifts and stores are independent, unrolled: the
 * packers are one warp per scheduler, so only their own instruction-level
 * parallelism hides a chain (ncu, P227 call 2: with a loop over rows that
 * each found their pointers again, `wait` and `selected` held the packers,
 * ~820 warp instructions per batch of 8 rows, issue and drain, while the
 * bulk copies arrived in time). */
template <int GROUP, int ROWS = SM90_PACK_BATCH>
__device__ __forceinline__ void sm90_pack_drain(const sm90_fused_pack_t &pk, int item, int half,
                                                uint32_t slot, int lane)
{
    int p, s, g;
    sm90_pack_item(pk, item, &p, &s, &g);
    unsigned long long info = 0; /* packed chunk 0 of the slice | shift; 0 past the list */
    {
        const uint16_t *src, *begin, *end;
        uint16_t *dst;
        if (lane < ROWS &&
            sm90_pack_row(pk, p, g * SM90_PACK_ITEM_ROWS + half * ROWS + lane, &src, &dst, &begin,
                          &end))
            info = (unsigned long long)(uintptr_t)(dst + (int64_t)s * SM90_PACK_SLICE) |
                   (unsigned long long)sm90_pack_mis(src);
    }
    const bool stored = 8 * ((int64_t)s * 32 + lane) < pk.ldp;
    const uint32_t at = slot + 16u * (uint32_t)lane;
    /* GROUP rows at a time: their loads issued back to back, then their
     * shifts and stores (rows past the list, 0, load stale bytes and store
     * nothing) */
    static_assert(ROWS % GROUP == 0 && ROWS <= 32, "groups of whole rows, a row per lane");
#pragma unroll
    for (int r0 = 0; r0 < ROWS; r0 += GROUP) {
        unsigned long long row[GROUP];
        uint4 lo[GROUP], hi[GROUP];
#pragma unroll
        for (int i = 0; i < GROUP; i++) row[i] = __shfl_sync(0xffffffffu, info, r0 + i);
#pragma unroll
        for (int i = 0; i < GROUP; i++) {
            /* hi is read on the chunk grid too (the shift drops it) */
            const uint32_t c = at + (uint32_t)((r0 + i) * SM90_PACK_CHUNKS * 16);
            asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(lo[i].x), "=r"(lo[i].y), "=r"(lo[i].z), "=r"(lo[i].w)
                         : "r"(c)
                         : "memory");
            asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(hi[i].x), "=r"(hi[i].y), "=r"(hi[i].z), "=r"(hi[i].w)
                         : "r"(c + 16u)
                         : "memory");
        }
#pragma unroll
        for (int i = 0; i < GROUP; i++) {
            uint16_t *const dst = (uint16_t *)(uintptr_t)(row[i] & ~15ull);
            if (stored && row[i] != 0)
                *(uint4 *)(dst + 8 * lane) = sm90_pack_shift(lo[i], hi[i], (int)(row[i] & 7u));
        }
    }
}

/* One warp's share of the packing: items claimed in order until none is
 * left, two batches per item, SLOTS - 1 batches in flight while one is
 * shifted and stored; `smem` holds its SLOTS batch slots. Lane 0 claims
 * each item one item ahead of its first issue, so the atomic's round trip
 * overlaps a batch. GROUP: sm90_pack_drain's rows in flight. BULK: the batches fetched by sm90_pack_issue_bulk, each
 * slot completing on its barrier at `bars` (SLOTS of them), instead of one
 * cp.async group per batch. */
template <int SLOTS, int GROUP, bool BULK>
__device__ __forceinline__ void sm90_pack_worker(const sm90_fused_pack_t &pk, uint32_t smem,
                                                 uint32_t bars)
{
    static_assert(SLOTS == 2 || SLOTS == 3, "two or three batch slots");
    const int lane = (int)(threadIdx.x % 32);
    const int total = pk.slices * (pk.groups0 + pk.groups1);
    unsigned *const done = pk.counters + 2;
    if (BULK) {
#if CUOPS_SM90A_DEVICE
        if (lane == 0) {
            for (int q = 0; q < SLOTS; q++) cuops_mbar_init(bars + 8u * (uint32_t)q, 1);
            cuops_mbar_init_fence();
        }
#endif
        __syncwarp();
    }
    uint32_t parity = 0; /* BULK: bit q, the phase slot q's next batch completes */
    unsigned claimed = 0; /* lane 0: the item after the issue cursor's */
    if (lane == 0) claimed = atomicAdd(pk.counters, 1u);
    /* the issue cursor (item, half) and the batches in flight behind it:
     * b[0] is the next to drain */
    int it_item = (int)__shfl_sync(0xffffffffu, claimed, 0), it_half = 0;
    if (lane == 0 && it_item < total) claimed = atomicAdd(pk.counters, 1u);
    int b_item[SLOTS], b_half[SLOTS];
    int it_slot = 0, dr_slot = 0;
    /* issue the batch at the cursor into the next slot (one cp.async group,
     * empty past the last item), record it at b[q], move the cursor on */
    auto issue_next = [&](int q) {
        b_item[q] = it_item;
        b_half[q] = it_half;
        if (it_item < total) {
            const uint32_t slot = smem + (uint32_t)(it_slot * SM90_PACK_SLOT_BYTES);
            if (BULK)
                sm90_pack_issue_bulk(pk, it_item, it_half, slot, bars + 8u * (uint32_t)it_slot, lane);
            else
                sm90_pack_issue(pk, it_item, it_half, slot, lane);
            if (it_half) {
                it_item = (int)__shfl_sync(0xffffffffu, claimed, 0);
                if (lane == 0 && it_item < total) claimed = atomicAdd(pk.counters, 1u);
            }
            it_half ^= 1;
        }
        if (!BULK) cuops_cp_async_commit();
        it_slot = it_slot + 1 == SLOTS ? 0 : it_slot + 1;
    };
#pragma unroll
    for (int q = 0; q < SLOTS - 1; q++) issue_next(q);
    while (b_item[0] < total) {
        issue_next(SLOTS - 1);
        if (BULK) {
#if CUOPS_SM90A_DEVICE
            cuops_mbar_wait(bars + 8u * (uint32_t)dr_slot, (parity >> dr_slot) & 1u);
#endif
            parity ^= 1u << dr_slot;
        } else {
            cuops_cp_async_wait<SLOTS - 1>(); /* the oldest batch's copies */
        }
        __syncwarp();
        sm90_pack_drain<GROUP>(pk, b_item[0], b_half[0], smem + (uint32_t)(dr_slot * SM90_PACK_SLOT_BYTES),
                               lane);
        __syncwarp(); /* every lane has read the slot, and stored its rows */
        if (b_half[0] && lane == 0) {
            /* the item's 16 rows are stored (the warp barrier orders every
             * lane's stores before lane 0's fence): count the item in at
             * gpu scope, visible to the async proxy */
            int p, s, g;
            sm90_pack_item(pk, b_item[0], &p, &s, &g);
            sm90_pack_release();
            atomicAdd(done + p * pk.slices + s, 1u);
        }
        dr_slot = dr_slot + 1 == SLOTS ? 0 : dr_slot + 1;
#pragma unroll
        for (int q = 0; q < SLOTS - 1; q++) {
            b_item[q] = b_item[q + 1];
            b_half[q] = b_half[q + 1];
        }
    }
    if (!BULK) cuops_cp_async_wait_all();
    __syncwarp();
}

/* Shared memory of a packer CTA (sm90_pack_cta) per slot: an item's rows,
 * then its two barriers (full, empty) at the end of the region */
#define SM90_PACK_ITEM_SLOT_BYTES (SM90_PACK_ITEM_ROWS * SM90_PACK_CHUNKS * 16)
__host__ __device__ constexpr int sm90_pack_cta_slots(int smem_bytes)
{
    return (smem_bytes - 1024) / (SM90_PACK_ITEM_SLOT_BYTES + 16);
}

/* A whole CTA packing (pk.pack_ctas > 0; this CTA is packer j of them):
 * items j, j + pack_ctas, ... (the CTA's item q is j + q * pack_ctas), by
 * WARPS / 2 pairs of warps. Pair i takes the CTA's items q = i, i + PAIRS,
 * ... in order through its own SLOTS item slots (one item = 16 rows x 33
 * chunks) from `smem`: its issuing warp i waits on the slot's empty barrier,
 * then issues one bulk copy per row (lanes 0-15) on the slot's full
 * barrier; its draining warp PAIRS + i waits on the full barrier, shifts and
 * stores the rows, frees the slot and, after every second item, fences
 * once and counts both items in (the fence per item held the packer warps
 * in P227: ncu `membar`).
 * Why pairs: with one issuing warp for all eleven drains (P228 call 1) the
 * issue held the packers (ncu, P229: ~310 instructions per item, a
 * one-warp chain of ~2100 cycles, the UBLKCP loop over the rows among
 * them, while the drains waited on full barriers and the issuer never on
 * an empty one): ~19 GB/s per packer SM. And a slot that one warp fills
 * and one warp drains, each in order, keeps the barriers' parity waits
 * exact; in a ring shared by warps that take its uses in turn, a warp
 * could wait for the parity of a use two ahead of the slot's last
 * completed phase and pass early. */
template <int NSLOTS, int GROUP, int WARPS>
__device__ __forceinline__ void sm90_pack_cta(const sm90_fused_pack_t &pk, uint32_t smem, int j)
{
#if CUOPS_SM90A_DEVICE
    constexpr int PAIRS = WARPS / 2, SLOTS = NSLOTS / PAIRS, ROWS = SM90_PACK_ITEM_ROWS;
    static_assert(PAIRS >= 1 && SLOTS >= 2, "a pair of warps and two slots per pair");
    const uint32_t bars = smem + (uint32_t)(NSLOTS * SM90_PACK_ITEM_SLOT_BYTES);
#define SM90_PACK_FULL(q) (bars + 16u * (uint32_t)(q))
#define SM90_PACK_EMPTY(q) (bars + 16u * (uint32_t)(q) + 8u)
    const int warp = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;
    const int total = pk.slices * (pk.groups0 + pk.groups1);
    const int mine = j < total ? (total - j + pk.pack_ctas - 1) / pk.pack_ctas : 0;
    if (threadIdx.x == 0) {
        for (int q = 0; q < PAIRS * SLOTS; q++) {
            cuops_mbar_init(SM90_PACK_FULL(q), 1);
            cuops_mbar_init(SM90_PACK_EMPTY(q), 1);
        }
        cuops_mbar_init_fence();
    }
    __syncthreads();
    if (warp >= 2 * PAIRS) return; /* an odd warp count: the last one idles */
    const int pair = warp % PAIRS;
    const bool issuer = warp < PAIRS;
    unsigned *const done = pk.counters + 2;
    int pending = -1; /* drain lane 0: the counter of an item stored, not yet counted */
    for (int u = 0, q = pair; q < mine; u++, q += PAIRS) {
        const int slot = pair * SLOTS + u % SLOTS;
        const uint32_t parity = (uint32_t)(u / SLOTS) & 1u;
        const uint32_t slot_smem = smem + (uint32_t)(slot * SM90_PACK_ITEM_SLOT_BYTES);
        const int item = j + q * pk.pack_ctas;
        if (issuer) {
            /* the slot's previous item drained (a fresh barrier passes) */
            cuops_mbar_wait(SM90_PACK_EMPTY(slot), parity ^ 1u);
            sm90_pack_issue_bulk<ROWS, true>(pk, item, 0, slot_smem, SM90_PACK_FULL(slot), lane);
            continue;
        }
        cuops_mbar_wait(SM90_PACK_FULL(slot), parity);
        sm90_pack_drain<GROUP, ROWS>(pk, item, 0, slot_smem, lane);
        __syncwarp(); /* every lane has read the slot and stored its rows */
        if (lane == 0) {
            cuops_mbar_arrive(SM90_PACK_EMPTY(slot));
            int p, s, g;
            sm90_pack_item(pk, item, &p, &s, &g);
            const int counter = p * pk.slices + s;
            if (pending < 0) {
                pending = counter;
            } else {
                sm90_pack_release();
                atomicAdd(done + pending, 1u);
                atomicAdd(done + counter, 1u);
                pending = -1;
            }
        }
    }
    if (!issuer && lane == 0 && pending >= 0) {
        sm90_pack_release();
        atomicAdd(done + pending, 1u);
    }
#undef SM90_PACK_FULL
#undef SM90_PACK_EMPTY
#endif
}

/* The join form's unit mailbox at `box`: 4 full barriers (the producer's
 * arrive), 4 empty ones (lane 0 of each of the 8 consumer warps), then 4
 * unit words. */
__device__ __forceinline__ void sm90_unit_box_init(uint32_t box)
{
#if CUOPS_SM90A_DEVICE
    for (int q = 0; q < 4; q++) {
        cuops_mbar_init(box + 8u * (uint32_t)q, 1);
        cuops_mbar_init(box + 32u + 8u * (uint32_t)q, 8);
    }
#endif
}

/* The TMA thread's next unit (join): claimed from the call's counter at the
 * start of the unit (the claim's round trip hides behind the stages the
 * producer runs ahead of the consumers), posted to the consumers; `units`
 * when none is left, which ends both loops. */
__device__ __forceinline__ int sm90_unit_post(uint32_t box, const sm90_fused_pack_t &pk, int units,
                                              int &n)
{
    int u = units;
#if CUOPS_SM90A_DEVICE
    const unsigned claimed = atomicAdd(pk.counters + 2 + 2 * pk.slices, 1u);
    u = claimed < (unsigned)units ? (int)claimed : units;
    const int q = n & 3;
    cuops_mbar_wait(box + 32u + 8u * (uint32_t)q, ((uint32_t)(n >> 2) & 1u) ^ 1u);
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(box + 64u + 4u * (uint32_t)q), "r"(u) : "memory");
    cuops_mbar_arrive(box + 8u * (uint32_t)q);
    n++;
#endif
    return u;
}

/* A consumer warp's next unit (join), as its producer posted it */
__device__ __forceinline__ int sm90_unit_take(uint32_t box, int &n)
{
    int u = 0;
#if CUOPS_SM90A_DEVICE
    const int q = n & 3;
    cuops_mbar_wait(box + 8u * (uint32_t)q, (uint32_t)(n >> 2) & 1u);
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(u) : "r"(box + 64u + 4u * (uint32_t)q) : "memory");
    __syncwarp();
    if (threadIdx.x % 32 == 0) cuops_mbar_arrive(box + 32u + 8u * (uint32_t)q);
    n++;
#endif
    return u;
}

/* The TMA thread: return once slice s of phase p is packed; *ready counts
 * the slices of that phase already seen complete (all slices below it). */
__device__ __forceinline__ void sm90_pack_wait(const sm90_fused_pack_t &pk, int p, int s, int *ready)
{
    if (s < *ready) return;
    const unsigned want = (unsigned)(p ? pk.groups1 : pk.groups0);
    const unsigned *done = pk.counters + 2 + p * pk.slices;
    int r = *ready;
    while (r <= s) {
        unsigned v;
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(done + r) : "memory");
        if (v >= want)
            r++;
        else
            __nanosleep(200);
    }
    *ready = r;
    /* what the packers stored (generic proxy) is read next by TMA (async proxy) */
    asm volatile("fence.proxy.async.global;" ::: "memory");
}

/* Warp 0 of the producer warpgroup, after the whole warpgroup is done with
 * the call's packing: the last CTA out zeroes the counters. */
__device__ __forceinline__ void sm90_pack_finish(const sm90_fused_pack_t &pk)
{
    const int lane = (int)(threadIdx.x % 32);
    unsigned last = 0;
    if (lane == 0) {
        __threadfence();
        last = atomicAdd(pk.counters + 1, 1u) == gridDim.x - 1 ? 1u : 0u;
    }
    last = __shfl_sync(0xffffffffu, last, 0);
    if (!last) return;
    __threadfence();
    const int count = (int)sm90_pack_counters(pk.slices);
    for (int i = lane; i < count; i += 32) pk.counters[i] = 0u;
}
