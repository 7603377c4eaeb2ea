/*
 * reduce.cu - the vectorized single-launch reduction, in three grid policies:
 * "vectorized_multiwave", "vectorized" (the first version, kept for
 * side-by-side timing) and "vectorized_interleaved" (one wave, 16 KB rounds
 * dealt round-robin to the CTAs; see reduce_interleaved; "_x8" with 32 KB
 * rounds), and "vectorized_stamped" ("auto": up to 64 MB of input, and its
 * "_x8" with 32 KB rounds above), the interleaved one without the last-CTA
 * ticket (see reduce_stamped_kernel).
 *
 * Kernel: CTAs of 256 threads; CTA b reduces the fixed contiguous range
 * [b*chunk, (b+1)*chunk) (chunk a multiple of the vector width, so every
 * range starts 16-byte aligned when `in` is): each thread keeps UNROLL
 * 16-byte loads in flight (256 threads x 4 x 16 B = 16 KB per CTA, 64 KB per
 * SM with 4 CTAs: above the ~32 KB per SM at which the probe's read stream
 * reaches ~4.4 TB/s) and VEC independent accumulators. The CTA total
 * (shuffle tree) goes to partials[b]; the last CTA to finish (atomic ticket
 * after __threadfence) combines the partials in index order, writes *out and
 * puts the ticket back to 0.
 *
 * Grids. "vectorized": one wave, min(ceil(n / 4096), 4 x SMs) CTAs, ticket
 * cleared by a 4-byte cudaMemsetAsync per call (the general workspace is
 * shared with other ops, so its content cannot be trusted).
 * "vectorized_multiwave": one wave up to 8 rounds per CTA (n <= ~2^24 for
 * 4-byte types), then whole waves (up to 8) so the block scheduler balances
 * the SMs; the ticket and partials live in the handle's scan state
 * (scan_state.h), which the last CTA leaves clean, so no memset is issued
 * (with a user workspace set it takes the first version's ticket + memset).
 *
 * Deterministic: the grid depends only on n and the SM count, every thread's
 * accumulation order and every tree is fixed, and the partials are combined
 * in index order whichever CTA happens to be last.
 *
 * Accuracy (f32 sum, accumulated in f32): each accumulator sums about
 * n / (grid*256*4) elements before the trees; for n = 2^30 that is ~2000
 * values per chain with one wave (~250 with 8 waves), so the error stays
 * below ~2000*eps*sum|x| in the worst case and far below it for random signs;
 * the tests bound it by 1e-5*sum|x|.
 *
 * `in` not 256-byte aligned (it is always element-aligned: the API checks)
 * takes the same vector kernel over the 256-byte aligned body: the < 256
 * bytes before it (`head`, at most 63 elements, fewer than a CTA's threads)
 * are folded by CTA 0's first threads. So every warp's 512-byte load covers
 * whole 128-byte lines, as at a cudaMalloc'd base, and a misaligned input
 * streams at the aligned rate; its float sum groups the elements
 * differently from the same values at another address (still the same bits
 * on every run with the same pointer). The scalar form this replaced (one
 * 4-byte load per element, 8 in flight per thread) ran 2^30 i32 at
 * 1300-1370 us against CUB's 1141-1295 us (run P172); a body aligned to
 * only 16 bytes ran 2^30 6 % slower than a 256-byte aligned one (P173).
 * n == 0 runs one CTA that writes the identity; so does any n that one CTA
 * covers, with no ticket at all.
 */
#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_primitives.cuh"
#include "cuda/scan/scan_state.cuh"

#define REDUCE_BLOCK 256
#define REDUCE_CTAS_PER_SM 4

/* The contiguous schedule: CTA b reduces [b*chunk, (b+1)*chunk). VEC
 * independent chains: the loads, not the adds, are the latency to hide, and
 * 16 accumulators would push the kernel past 64 registers (4 CTAs per SM). */
template <typename T, int OP, int VEC, int UNROLL>
static __device__ __forceinline__ void reduce_contiguous(const T *in, int64_t n, int64_t chunk,
                                                         T (&acc)[VEC])
{
    const int64_t begin = (int64_t)blockIdx.x * chunk;
    const int64_t end = begin + chunk < n ? begin + chunk : n;
    const int64_t len = end > begin ? end - begin : 0;
    const T *p = in + begin;
    const int64_t nvec = len / VEC;

    int64_t v = threadIdx.x;
    /* main loop: UNROLL independent loads issued before any is used */
    for (; v + (UNROLL - 1) * REDUCE_BLOCK < nvec; v += UNROLL * REDUCE_BLOCK) {
        T x[UNROLL][VEC];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) vec_load<T, VEC>(p + (v + u * REDUCE_BLOCK) * VEC, x[u]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
#pragma unroll
            for (int k = 0; k < VEC; k++) acc[k] = scan_combine<T, OP>(acc[k], x[u][k]);
    }
    for (; v < nvec; v += REDUCE_BLOCK) {
        T x[VEC];
        vec_load<T, VEC>(p + v * VEC, x);
#pragma unroll
        for (int k = 0; k < VEC; k++) acc[k] = scan_combine<T, OP>(acc[k], x[k]);
    }
    /* the < VEC elements past the last whole vector of this range */
    const int64_t rest = len - nvec * VEC;
    if (threadIdx.x < rest) acc[0] = scan_combine<T, OP>(acc[0], p[nvec * VEC + threadIdx.x]);
}

/* The interleaved schedule ("vectorized_interleaved"): the input is cut into
 * rounds of REDUCE_BLOCK * UNROLL vectors (16 KB), and CTA b of a one-wave
 * grid takes rounds b, b + grid, b + 2 grid, ... So the whole GPU sweeps the
 * input front to back together (one moving window of DRAM pages and TLB
 * entries instead of one stream per CTA, each in its own 2 MB page), and
 * every CTA has the same number of rounds (+-1) with no second wave. The
 * assignment depends only on n and the grid, so the sum is reproducible. */
template <typename T, int OP, int VEC, int UNROLL>
static __device__ __forceinline__ void reduce_interleaved(const T *in, int64_t n, T (&acc)[VEC])
{
    const int64_t nvec = n / VEC;
    const int64_t per_round = (int64_t)REDUCE_BLOCK * UNROLL; /* vectors */
    const int64_t full_rounds = nvec / per_round;
    for (int64_t r = blockIdx.x; r < full_rounds; r += gridDim.x) {
        const T *p = in + (r * per_round + threadIdx.x) * VEC;
        T x[UNROLL][VEC];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) vec_load<T, VEC>(p + u * REDUCE_BLOCK * VEC, x[u]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
#pragma unroll
            for (int k = 0; k < VEC; k++) acc[k] = scan_combine<T, OP>(acc[k], x[u][k]);
    }
    /* whole vectors past the last full round, then the < VEC last elements */
    for (int64_t v = full_rounds * per_round + (int64_t)blockIdx.x * REDUCE_BLOCK + threadIdx.x;
         v < nvec; v += (int64_t)gridDim.x * REDUCE_BLOCK) {
        T x[VEC];
        vec_load<T, VEC>(in + v * VEC, x);
#pragma unroll
        for (int k = 0; k < VEC; k++) acc[k] = scan_combine<T, OP>(acc[k], x[k]);
    }
    const int64_t rest = n - nvec * VEC;
    if (blockIdx.x == 0 && threadIdx.x < rest)
        acc[0] = scan_combine<T, OP>(acc[0], in[nvec * VEC + threadIdx.x]);
}

/* The CTA's total over its share (thread 0's result; s_warp free again
 * after a __syncthreads()): the schedule's chains, the misaligned head
 * folded by CTA 0 in a fixed place, then the block's tree. */
template <typename T, int OP, int VEC, int UNROLL, bool INTERLEAVED>
static __device__ __forceinline__ T reduce_cta_total(const T *in, int64_t n, int head,
                                                     int64_t chunk, T *s_warp)
{
    T acc[VEC];
#pragma unroll
    for (int k = 0; k < VEC; k++) acc[k] = scan_identity<T, OP>();
    if (INTERLEAVED) {
        reduce_interleaved<T, OP, VEC, UNROLL>(in, n, acc);
    } else {
        reduce_contiguous<T, OP, VEC, UNROLL>(in, n, chunk, acc);
    }
    /* the elements before the aligned body (misaligned `in`), in a fixed place */
    if (blockIdx.x == 0 && threadIdx.x < head)
        acc[0] = scan_combine<T, OP>(acc[0], in[(int)threadIdx.x - head]);

    T t = acc[0];
#pragma unroll
    for (int k = 1; k < VEC; k++) t = scan_combine<T, OP>(t, acc[k]);
    return block_reduce<T, OP, REDUCE_BLOCK>(t, s_warp);
}

template <typename T, int OP, int VEC, int UNROLL, bool INTERLEAVED>
__global__ void __launch_bounds__(REDUCE_BLOCK, REDUCE_CTAS_PER_SM)
reduce_vectorized_kernel(const T *in, int64_t n, int head, int64_t chunk, T *partials,
                         unsigned *ticket, T *out)
{
    __shared__ T s_warp[REDUCE_BLOCK / 32];
    __shared__ bool s_last;

    const T t = reduce_cta_total<T, OP, VEC, UNROLL, INTERLEAVED>(in, n, head, chunk, s_warp);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) *out = t;
        return;
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = t;
        __threadfence(); /* the partial is visible before the ticket says so */
        s_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!s_last) return;

    /* Last CTA: every other partial is published (their fences precede
     * their tickets). Read through L2 (__ldcg), never a stale L1 line. */
    __threadfence();
    T r = scan_identity<T, OP>();
    const int grid = (int)gridDim.x;
    int b = threadIdx.x;
    /* up to 16 partials per thread (multi-wave grids): 8 loads in flight per
     * batch instead of one dependent L2 round trip each; same order */
    for (; b + 7 * REDUCE_BLOCK < grid; b += 8 * REDUCE_BLOCK) {
        T q[8];
#pragma unroll
        for (int u = 0; u < 8; u++) q[u] = __ldcg(partials + b + u * REDUCE_BLOCK);
#pragma unroll
        for (int u = 0; u < 8; u++) r = scan_combine<T, OP>(r, q[u]);
    }
    for (; b < grid; b += REDUCE_BLOCK) r = scan_combine<T, OP>(r, __ldcg(partials + b));
    __syncthreads(); /* s_warp is reused */
    r = block_reduce<T, OP, REDUCE_BLOCK>(r, s_warp);
    if (threadIdx.x == 0) {
        *out = r;
        *ticket = 0;
    }
}

/* ---- the stamped form ("vectorized_stamped") ------------------------------
 * The interleaved schedule and partials, without the ticket. Every CTA
 * publishes its partial in the scan state's words region as stamped 64-bit
 * words ({flag:2, epoch:30} high, 32 value bits low; 8-byte types in two
 * words, low half first): one relaxed store each and no fence, since stamp
 * and value travel in one access. CTA grid-1, the last one dispatched,
 * polls them all, combines them in index order exactly as the ticket form's
 * last CTA does (so the float bits equal "vectorized_interleaved"'s), writes
 * *out and advances the epoch. What follows the slowest partial is its
 * store reaching L2 and one poll's read, where the ticket form has the
 * store and a fence, the ticket's atomic, then the read of the partials.
 * The waiter starts polling once its own round is done, so it spins only
 * for as long as the slowest CTA lags it. Only one CTA ever waits, so the
 * others always have the rest of the device to run on: a device shared with
 * other work delays the call but cannot stall it. */
#define REDUCE_STAMP_FLAG 1u /* any non-zero flag: a cleared word never reads as published */
#define REDUCE_STAMPED_SLOTS 4 /* partials polled per waiter thread: grids up to 1024 CTAs (4 per SM on 256 SMs) */

typedef struct reduce_stamps {
    unsigned *epoch;
    unsigned long long *words; /* >= 2 x grid of them */
    unsigned *flags;           /* cleared with the words on the wrap */
    int64_t capacity;
} reduce_stamps_t;

template <typename T> union reduce_bits {
    T v;
    uint32_t half[sizeof(T) / 4];
};

template <typename T, int OP, int VEC, int UNROLL>
__global__ void __launch_bounds__(REDUCE_BLOCK, REDUCE_CTAS_PER_SM)
reduce_stamped_kernel(const T *in, int64_t n, int head, reduce_stamps_t st, T *out)
{
    constexpr int WORDS = (int)sizeof(T) / 4;
    __shared__ T s_warp[REDUCE_BLOCK / 32];

    /* written by the previous call's waiter, constant during this one; its
     * round trip hides under the loads */
    const unsigned epoch = gridDim.x > 1 ? __ldcg(st.epoch) : 0u;

    const T t = reduce_cta_total<T, OP, VEC, UNROLL, true>(in, n, head, 0, s_warp);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) *out = t;
        return;
    }

    const unsigned long long stamp = (unsigned long long)((epoch << 2) | REDUCE_STAMP_FLAG) << 32;
    if (threadIdx.x == 0) {
        reduce_bits<T> b;
        b.v = t;
#pragma unroll
        for (int w = 0; w < WORDS; w++)
            store_relaxed_u64(st.words + (int64_t)blockIdx.x * WORDS + w, stamp | b.half[w]);
    }
    if (blockIdx.x != gridDim.x - 1) return;

    /* The waiter: thread i polls partials i, i + 256, ...; every pending
     * word is loaded before any is looked at (one round trip per poll). */
    const int grid = (int)gridDim.x;
    T q[REDUCE_STAMPED_SLOTS];
    unsigned pending = 0;
#pragma unroll
    for (int i = 0; i < REDUCE_STAMPED_SLOTS; i++)
        if (threadIdx.x + i * REDUCE_BLOCK < grid) pending |= 1u << i;
    while (pending) {
        unsigned long long w[REDUCE_STAMPED_SLOTS][WORDS];
#pragma unroll
        for (int i = 0; i < REDUCE_STAMPED_SLOTS; i++)
            if (pending & (1u << i))
#pragma unroll
                for (int k = 0; k < WORDS; k++)
                    w[i][k] = load_relaxed_u64(st.words + (int64_t)(threadIdx.x + i * REDUCE_BLOCK) * WORDS + k);
#pragma unroll
        for (int i = 0; i < REDUCE_STAMPED_SLOTS; i++) {
            if (!(pending & (1u << i))) continue;
            bool ready = true;
            reduce_bits<T> b;
#pragma unroll
            for (int k = 0; k < WORDS; k++) {
                ready = ready && (w[i][k] & 0xffffffff00000000ull) == stamp;
                b.half[k] = (uint32_t)w[i][k];
            }
            if (ready) {
                q[i] = b.v;
                pending &= ~(1u << i);
            }
        }
    }
    T r = scan_identity<T, OP>();
#pragma unroll
    for (int i = 0; i < REDUCE_STAMPED_SLOTS; i++)
        if (threadIdx.x + i * REDUCE_BLOCK < grid) r = scan_combine<T, OP>(r, q[i]);
    __syncthreads(); /* s_warp is reused */
    r = block_reduce<T, OP, REDUCE_BLOCK>(r, s_warp);
    if (threadIdx.x == 0) *out = r;
    /* every CTA's stamped store is seen, so all of them read the epoch */
    scan_state_next_epoch(st.epoch, epoch, st.words, st.flags, st.capacity);
}

/* Grid of the "vectorized" variant: one wave of REDUCE_CTAS_PER_SM per SM. */
static int64_t reduce_grid_one_wave(struct cuops_handle *h, int64_t rounds)
{
    const int64_t one_wave = (int64_t)REDUCE_CTAS_PER_SM * (h->num_sms > 0 ? h->num_sms : 1);
    return rounds < one_wave ? rounds : one_wave;
}

/* Grid of "vectorized_multiwave". Up to 8 rounds per CTA a single wave (at
 * 2^20..2^24 a second wave would only add a ramp); beyond that whole waves,
 * up to REDUCE_MAX_WAVES, each CTA >= 8 rounds. With one wave the slowest SM
 * sets the time (every CTA has the same share and nothing rebalances); with
 * w waves the block scheduler hands the later CTAs to whichever SM frees a
 * slot first, and the imbalance left is about one wave's worth / w. */
#define REDUCE_MAX_WAVES 8
#define REDUCE_ROUNDS_PER_CTA 8
static int64_t reduce_grid_multiwave(struct cuops_handle *h, int64_t rounds)
{
    const int64_t one_wave = (int64_t)REDUCE_CTAS_PER_SM * (h->num_sms > 0 ? h->num_sms : 1);
    if (rounds <= one_wave * REDUCE_ROUNDS_PER_CTA) return rounds < one_wave ? rounds : one_wave;
    int64_t waves = cuops_ceil_div(rounds, one_wave * REDUCE_ROUNDS_PER_CTA);
    if (waves > REDUCE_MAX_WAVES) waves = REDUCE_MAX_WAVES;
    int64_t grid = waves * one_wave;
    if (grid > SCAN_STATE_MAX_PARTIALS) grid = SCAN_STATE_MAX_PARTIALS;
    return grid;
}

/* mode: 0 "vectorized" (one wave, contiguous ranges, memset ticket),
 * 1 "vectorized_multiwave", 2 "vectorized_interleaved" (one wave, rounds
 * dealt round-robin), 4 "vectorized_stamped" (mode 2's grid and schedule,
 * stamped partials and a waiter instead of the ticket). Modes 1 and 2 keep
 * the ticket in the handle's scan state (no memset) unless a user workspace
 * is set. The grid is planned on the aligned body: n - head elements from
 * in + head. Mode 4 with UNROLL = 8 is "vectorized_stamped_x8". */
template <typename T, int OP, int VEC, int UNROLL>
static cuops_status_t reduce_run(struct cuops_handle *h, const cuops_reduce_desc_t *d, int mode,
                                 const char *kernel_name)
{
    static_assert(256 / sizeof(T) <= REDUCE_BLOCK, "the head is folded one element per thread");
    int64_t head = cuops_elems_to_boundary(d->in, 256, sizeof(T));
    if (head > d->n) head = d->n;
    const T *body = (const T *)d->in + head;
    const int64_t n = d->n - head;
    const int64_t per_round = (int64_t)REDUCE_BLOCK * VEC * UNROLL;
    const int64_t rounds = cuops_ceil_div(n, per_round);
    int64_t grid = mode == 1 ? reduce_grid_multiwave(h, rounds) : reduce_grid_one_wave(h, rounds);
    if (grid < 1) grid = 1;
    int64_t chunk = 0;
    if (mode != 2 && mode != 4) {
        /* equal ranges, each a whole number of vectors */
        chunk = cuops_ceil_div(cuops_ceil_div(n, grid), VEC) * VEC;
        if (chunk > 0) grid = cuops_ceil_div(n, chunk);
        if (grid < 1) grid = 1;
    }

    cudaStream_t stream = cuops_stream(h);
    if (mode == 4 && grid > 1) {
        /* the stamped form: its words in the scan state (with a user
         * workspace, a state cleared per call there, epoch 0) */
        if (grid > (int64_t)REDUCE_BLOCK * REDUCE_STAMPED_SLOTS)
            grid = (int64_t)REDUCE_BLOCK * REDUCE_STAMPED_SLOTS;
        scan_state_view_t view;
        cuops_status_t st = scan_state_acquire(h, grid * (int64_t)(sizeof(T) / 4), &view);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        reduce_stamps_t stamps;
        stamps.epoch = (unsigned *)(view.base + SCAN_STATE_EPOCH);
        stamps.words = (unsigned long long *)(view.base + scan_state_words_offset(view.tiles));
        stamps.flags = (unsigned *)(view.base + scan_state_flags_offset(view.tiles));
        stamps.capacity = view.tiles;
        reduce_stamped_kernel<T, OP, VEC, UNROLL><<<(unsigned)grid, REDUCE_BLOCK, 0, stream>>>(
            body, n, (int)head, stamps, (T *)d->out);
        return cuops_cuda_check_launch(h, kernel_name);
    }
    if (mode == 4) mode = 2; /* one CTA: no partials, the plain kernel */
    T *partials = NULL;
    unsigned *ticket = NULL;
    if (grid > 1 && mode != 0 && h->user_workspace == NULL) {
        /* the ticket lives in the handle's scan state, left at 0 by the last
         * CTA of every call: no memset (scan_state.cu clears it per call
         * only when the state sits in a user workspace) */
        scan_state_view_t view;
        cuops_status_t st = scan_state_acquire(h, 0, &view);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        ticket = (unsigned *)(view.base + SCAN_STATE_REDUCE_TICKET);
        partials = (T *)(view.base + scan_state_partials_offset(view.tiles));
    } else if (grid > 1) {
        void *ws = NULL;
        cuops_status_t st =
            cuops_cuda_workspace(h, 256 + 256 + (size_t)grid * sizeof(T), &ws);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        char *base = (char *)(((uintptr_t)ws + 255) & ~(uintptr_t)255);
        ticket = (unsigned *)base;
        partials = (T *)(base + 256);
        CUOPS_CUDA_TRY(h, cudaMemsetAsync(ticket, 0, sizeof(unsigned), stream));
    }
    if (mode == 2)
        reduce_vectorized_kernel<T, OP, VEC, UNROLL, true><<<(unsigned)grid, REDUCE_BLOCK, 0, stream>>>(
            body, n, (int)head, chunk, partials, ticket, (T *)d->out);
    else
        reduce_vectorized_kernel<T, OP, VEC, UNROLL, false><<<(unsigned)grid, REDUCE_BLOCK, 0, stream>>>(
            body, n, (int)head, chunk, partials, ticket, (T *)d->out);
    return cuops_cuda_check_launch(h, kernel_name);
}

template <typename T, int OP>
static cuops_status_t reduce_typed(struct cuops_handle *h, const cuops_reduce_desc_t *d, int mode)
{
    static const char *const vec_names[] = {"reduce_vectorized_vec16",
                                            "reduce_vectorized_multiwave_vec16",
                                            "reduce_vectorized_interleaved_vec16",
                                            "reduce_vectorized_interleaved_x8_vec16",
                                            "reduce_vectorized_stamped_vec16",
                                            "reduce_vectorized_stamped_x8_vec16"};
    /* the interleaved schedule with 8 loads in flight per thread (32 KB
     * rounds): 3 with the ticket, 5 stamped */
    if (mode == 3) return reduce_run<T, OP, SCAN_VEC(T), 8>(h, d, 2, vec_names[3]);
    if (mode == 5) return reduce_run<T, OP, SCAN_VEC(T), 8>(h, d, 4, vec_names[5]);
    return reduce_run<T, OP, SCAN_VEC(T), 4>(h, d, mode, vec_names[mode]);
}

cuops_status_t cuops_reduce_vectorized_launch(struct cuops_handle *h, const cuops_reduce_desc_t *d,
                                              int mode)
{
    if (mode < 0 || mode > 5)
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "reduce: mode %d", mode);
    return SCAN_TYPE_OP_CALL(d->type, d->op,
                             cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "reduce: dtype %s",
                                        cuops_dtype_name(d->type)),
                             reduce_typed, h, d, mode);
}
