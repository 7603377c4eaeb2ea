/*
 * scan_stamped_status.cuh - tile status words stamped with the call's epoch,
 * in the handle's scan state (layout and epochs: scan_state.h), for the scans
 * that run without a memset before their kernel: `lookback_persistent` and the
 * ring forms.
 *
 * A word counts only if its stamp equals the epoch read at the start of the
 * call; the last CTA to finish (done counter) resets the counters and advances
 * the epoch (scan_state_end_call), so the next call, or the next replay of a
 * captured graph, finds a clean state with no host work.
 */
#ifndef CUOPS_SCAN_STAMPED_STATUS_CUH
#define CUOPS_SCAN_STAMPED_STATUS_CUH

#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_primitives.cuh"
#include "cuda/scan/scan_state.h"

#define PSTATUS_EMPTY 0u
#define PSTATUS_AGGREGATE 1u
#define PSTATUS_PREFIX 2u

/* Device addresses of the state (scan_state.h) for one call. */
typedef struct scan_state_ptrs {
    unsigned long long *tile_counter;
    unsigned *done;
    unsigned *epoch;
    unsigned long long *words; /* 4-byte types */
    unsigned *flags;           /* 8-byte types */
    unsigned long long *aggregate;
    unsigned long long *prefix;
    int64_t capacity;          /* tiles in words / flags (cleared on the epoch wrap) */
} scan_state_ptrs_t;

static inline scan_state_ptrs_t scan_state_ptrs(const scan_state_view_t &view)
{
    scan_state_ptrs_t s;
    s.tile_counter = (unsigned long long *)(view.base + SCAN_STATE_TILE_COUNTER);
    s.done = (unsigned *)(view.base + SCAN_STATE_DONE);
    s.epoch = (unsigned *)(view.base + SCAN_STATE_EPOCH);
    s.words = (unsigned long long *)(view.base + scan_state_words_offset(view.tiles));
    s.flags = (unsigned *)(view.base + scan_state_flags_offset(view.tiles));
    s.aggregate = (unsigned long long *)(view.base + scan_state_aggr_offset(view.tiles));
    s.prefix = (unsigned long long *)(view.base + scan_state_prefix_offset(view.tiles));
    s.capacity = view.tiles;
    return s;
}

template <typename T, int SIZE = sizeof(T)> struct stamped_status;

template <typename T> union pbits32 { T v; uint32_t u; };
template <typename T> union pbits64 { T v; unsigned long long u; };

/* One 64-bit word per tile: {flag:2, epoch:30} high, value bits low; one
 * relaxed 64-bit access, so flag, stamp and value are never torn. */
template <typename T> struct stamped_status<T, 4> {
    unsigned long long *word;
    unsigned epoch;

    __device__ __forceinline__ void init(const scan_state_ptrs_t &s, unsigned e)
    {
        word = s.words;
        epoch = e;
    }
    __device__ __forceinline__ void publish(int64_t t, unsigned flag, T v) const
    {
        pbits32<T> b;
        b.v = v;
        const unsigned long long w = ((unsigned long long)((epoch << 2) | flag) << 32) | b.u;
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(word + t), "l"(w) : "memory");
    }
    __device__ __forceinline__ void poll(int64_t t, unsigned &flag, T &v) const
    {
        unsigned long long w;
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(word + t) : "memory");
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

    __device__ __forceinline__ void init(const scan_state_ptrs_t &s, unsigned e)
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
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(slot), "l"(b.u) : "memory");
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
            asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(b.u) : "l"(slot) : "memory");
            v = b.v;
        }
    }
};

/* The end of a call, by every thread of each CTA once its status accesses are
 * behind a CTA barrier: the last CTA to arrive resets the counters and
 * advances the epoch (on the wrap to 0 it first clears the stamped regions,
 * so stamps of 2^30 calls ago cannot come back to life). `s_last`: a shared
 * int. */
static __device__ __forceinline__ void scan_state_end_call(const scan_state_ptrs_t &state,
                                                           unsigned epoch, int *s_last, int block)
{
    if (threadIdx.x == 0) {
        __threadfence();
        *s_last = atomicAdd(state.done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!*s_last) return;
    __threadfence();
    const unsigned next_epoch = (epoch + 1) & SCAN_EPOCH_MASK;
    if (next_epoch == 0) {
        for (int64_t i = threadIdx.x; i < state.capacity; i += block) {
            state.words[i] = 0ull;
            state.flags[i] = 0u;
        }
    }
    if (threadIdx.x == 0) {
        *state.tile_counter = 0ull;
        *state.done = 0u;
        *state.epoch = next_epoch;
    }
}

#endif /* CUOPS_SCAN_STAMPED_STATUS_CUH */
