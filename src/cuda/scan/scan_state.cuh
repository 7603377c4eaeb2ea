/*
 * scan_state.cuh - the device side of the handle's scan state (layout and
 * epochs: scan_state.h): the one step every kernel that stamps words there
 * ends with.
 */
#ifndef CUOPS_SCAN_STATE_CUH
#define CUOPS_SCAN_STATE_CUH

#include "cuda/scan/scan_state.h"

/* Advance the epoch from `epoch` for the next call. Called by all threads of
 * the one CTA that finishes the call, after every stamped access of the call
 * (its own and, through what it waited for, everyone else's). On the wrap to
 * epoch 0 the stamped regions are cleared first: stamps written 2^30 calls
 * ago would otherwise count again. The next kernel in the stream sees all of
 * it; within this one nobody reads the state any more. */
static __device__ __forceinline__ void scan_state_next_epoch(unsigned *epoch_word, unsigned epoch,
                                                             unsigned long long *words,
                                                             unsigned *flags, int64_t capacity)
{
    const unsigned next = (epoch + 1) & SCAN_EPOCH_MASK;
    if (next == 0) {
        for (int64_t i = threadIdx.x; i < capacity; i += blockDim.x) {
            words[i] = 0ull;
            flags[i] = 0u;
        }
    }
    if (threadIdx.x == 0) *epoch_word = next;
}

#endif /* CUOPS_SCAN_STATE_CUH */
