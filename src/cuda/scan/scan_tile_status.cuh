/*
 * scan_tile_status.cuh - the per-tile status words of the single-pass scans
 * that publish tile aggregates to one another (scan_lookback.cu,
 * scan_ring.cu), and the workspace they live in.
 *
 * 4-byte types: one 64-bit word per tile, flag in the high half, value bits
 * in the low half, written and read with single 64-bit relaxed gpu-scope
 * accesses, so a reader can never see a flag with another state's value.
 * 8-byte types: separate arrays for the flag, the aggregate and the inclusive
 * prefix; the value is stored first and the flag with st.release, the flag
 * read with ld.acquire before the value, and the aggregate and the prefix
 * never share a slot, so no torn pair is possible either. The flags (and a
 * 256-byte header holding a tile counter) are cleared by one
 * cudaMemsetAsync per call.
 */
#ifndef CUOPS_SCAN_TILE_STATUS_CUH
#define CUOPS_SCAN_TILE_STATUS_CUH

#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_primitives.cuh"

#define STATUS_EMPTY 0u
#define STATUS_AGGREGATE 1u
#define STATUS_PREFIX 2u

template <typename T, int SIZE = sizeof(T)> struct tile_status;

template <typename T> union bits32 { T v; uint32_t u; };
template <typename T> union bits64 { T v; unsigned long long u; };

template <typename T> struct tile_status<T, 4> {
    unsigned long long *word;

    __device__ __forceinline__ void publish(int64_t t, unsigned flag, T v) const
    {
        bits32<T> b;
        b.v = v;
        unsigned long long w = ((unsigned long long)flag << 32) | b.u;
        store_relaxed_u64(word + t, w);
    }
    __device__ __forceinline__ void poll(int64_t t, unsigned &flag, T &v) const
    {
        unsigned long long w = load_relaxed_u64(word + t);
        bits32<T> b;
        b.u = (uint32_t)w;
        flag = (unsigned)(w >> 32);
        v = b.v;
    }
    /* tile t back to EMPTY (a kernel that clears its own status; its grid
     * barrier orders the clear before any poll or publish) */
    __device__ __forceinline__ void clear(int64_t t) const { word[t] = 0ull; }
};

template <typename T> struct tile_status<T, 8> {
    unsigned *flag;
    unsigned long long *aggregate;
    unsigned long long *prefix;

    __device__ __forceinline__ void publish(int64_t t, unsigned f, T v) const
    {
        bits64<T> b;
        b.v = v;
        unsigned long long *slot = (f == STATUS_AGGREGATE ? aggregate : prefix) + t;
        store_relaxed_u64(slot, b.u);
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag + t), "r"(f) : "memory");
    }
    __device__ __forceinline__ void poll(int64_t t, unsigned &f, T &v) const
    {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(f) : "l"(flag + t) : "memory");
        if (f != STATUS_EMPTY) {
            const unsigned long long *slot = (f == STATUS_AGGREGATE ? aggregate : prefix) + t;
            bits64<T> b;
            b.u = load_relaxed_u64(slot);
            v = b.v;
        }
    }
    __device__ __forceinline__ void clear(int64_t t) const { flag[t] = 0u; }
};

/*
 * Workspace of one call: [header: 256 B, a tile counter at its start]
 * [flags or words][aggregates][prefixes], the header and the flags cleared
 * on h's stream. `*counter` (when counter is not NULL) receives the header's
 * address.
 */
template <typename T>
static cuops_status_t tile_status_acquire(struct cuops_handle *h, int64_t tiles,
                                          tile_status<T> *status, unsigned long long **counter,
                                          bool clear = true)
{
    const size_t header = 256;
    const size_t flag_bytes = sizeof(T) == 4 ? (size_t)tiles * 8 : cuops_align256((size_t)tiles * 4);
    const size_t value_bytes = sizeof(T) == 4 ? 0 : (size_t)tiles * 8;
    const size_t bytes = 256 + header + flag_bytes + 2 * value_bytes;
    void *ws = NULL;
    cuops_status_t st = cuops_cuda_workspace(h, bytes, &ws);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    char *base = (char *)(((uintptr_t)ws + 255) & ~(uintptr_t)255);
    if constexpr (sizeof(T) == 4) {
        status->word = (unsigned long long *)(base + header);
    } else {
        status->flag = (unsigned *)(base + header);
        status->aggregate = (unsigned long long *)(base + header + flag_bytes);
        status->prefix = (unsigned long long *)(base + header + flag_bytes + value_bytes);
    }
    if (counter != NULL) *counter = (unsigned long long *)base;
    /* clear = false: the kernel clears the words itself (no counter then) */
    if (clear) CUOPS_CUDA_TRY(h, cudaMemsetAsync(base, 0, header + flag_bytes, cuops_stream(h)));
    return CUOPS_STATUS_SUCCESS;
}

#endif /* CUOPS_SCAN_TILE_STATUS_CUH */
