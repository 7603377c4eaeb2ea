/*
 * scan_state.cu - where the persistent look-back scan and the multi-wave
 * reduce find their counters and tile status words (layout: scan_state.h).
 *
 * Handle-managed workspace: one buffer per handle, zeroed once when it is
 * allocated and kept clean by the kernels themselves (the last CTA of every
 * call resets the counters and advances the epoch), so a call enqueues its
 * kernel and nothing else. It is separate from the general workspace because
 * the other ops write arbitrary bytes there.
 *
 * User workspace (cuops_set_workspace): the caller promised that memory and no
 * other, and may be capturing a graph, so nothing is allocated; the state
 * lives at the start of the user's block and its header, words and flags are
 * cleared with one cudaMemsetAsync per call (the old cost, nothing worse).
 * That view has no reduce partials region (256 + 512 + 12 bytes per tile are
 * asked of the user's block, as before); the reduce does not come here then.
 *
 * Like the workspace, the state assumes the handle's calls run in stream
 * order: two calls of one handle in flight at once on different streams
 * would share it.
 */
#include "cuda/scan/scan_kernels.h"
#include "cuda/scan/scan_state.h"
#include "cuda/common/cuda_common.cuh"

cuops_status_t scan_state_acquire(struct cuops_handle *h, int64_t tiles, scan_state_view_t *view)
{
    cudaStream_t stream = cuops_stream(h);
    if (tiles < 0) tiles = 0;
    if (h->user_workspace) {
        void *ws = NULL;
        /* no reduce partials region: the reduce keeps its own path there */
        cuops_status_t st = cuops_cuda_workspace(h, 256 + scan_state_partials_offset(tiles), &ws);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        view->base = (char *)(((uintptr_t)ws + 255) & ~(uintptr_t)255);
        view->tiles = tiles;
        CUOPS_CUDA_TRY(h, cudaMemsetAsync(view->base, 0, scan_state_clear_bytes(tiles), stream));
        return CUOPS_STATUS_SUCCESS;
    }
    if (h->scan_state == NULL || h->scan_state_tiles < tiles) {
        int64_t cap = h->scan_state_tiles * 2;
        if (cap < SCAN_STATE_MIN_TILES) cap = SCAN_STATE_MIN_TILES;
        if (cap < tiles) cap = tiles;
        if (h->scan_state) {
            /* queued calls may still use the old buffer */
            CUOPS_CUDA_TRY(h, cudaStreamSynchronize(stream));
            cudaFree(h->scan_state);
            h->scan_state = NULL;
            h->scan_state_tiles = 0;
        }
        void *p = NULL;
        cudaError_t err = cudaMalloc(&p, scan_state_bytes(cap));
        if (err != cudaSuccess) return cuops_cuda_fail(h, err, "cudaMalloc(scan state)");
        /* once per buffer; stream-ordered before the first kernel that uses it */
        err = cudaMemsetAsync(p, 0, scan_state_clear_bytes(cap), stream);
        if (err != cudaSuccess) {
            cudaFree(p);
            return cuops_cuda_fail(h, err, "cudaMemsetAsync(scan state)");
        }
        h->scan_state = p;
        h->scan_state_tiles = cap;
    }
    view->base = (char *)h->scan_state;
    view->tiles = h->scan_state_tiles;
    return CUOPS_STATUS_SUCCESS;
}

extern "C" void cuops_cuda_scan_state_release(struct cuops_handle *h)
{
    cuops_cuda_release(h, &h->scan_state);
    h->scan_state_tiles = 0;
}
