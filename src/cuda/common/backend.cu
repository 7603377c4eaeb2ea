/*
 * backend.cu - the CUDA backend's life cycle: device check and properties at
 * create, the handle's own workspace, and mapping runtime errors to statuses.
 * The runtime is linked statically and the driver is never linked: on a
 * machine with no driver cudaGetDeviceCount fails and cuops_create reports
 * CUOPS_STATUS_NO_DEVICE.
 */
#include <stdio.h>
#include <string.h>

#include "cuda/common/cuda_common.cuh"
#include "cuda/common/dram_peak.h"

extern "C" cuops_status_t cuops_cuda_init(struct cuops_handle *h, char *why)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        snprintf(why, CUOPS_ERROR_LEN, "no usable CUDA driver/device: %s (%s)",
                 cudaGetErrorString(err), cudaGetErrorName(err));
        (void)cudaGetLastError();
        return CUOPS_STATUS_NO_DEVICE;
    }
    if (h->device >= count) {
        snprintf(why, CUOPS_ERROR_LEN, "device %d requested but %d CUDA device(s) present",
                 h->device, count);
        return CUOPS_STATUS_NO_DEVICE;
    }
    cudaDeviceProp prop;
    err = cudaGetDeviceProperties(&prop, h->device);
    if (err != cudaSuccess) {
        snprintf(why, CUOPS_ERROR_LEN, "cudaGetDeviceProperties(%d): %s", h->device,
                 cudaGetErrorString(err));
        return CUOPS_STATUS_NO_DEVICE;
    }
    h->sm_major = prop.major;
    h->sm_minor = prop.minor;
    h->num_sms = prop.multiProcessorCount;
    h->l2_bytes = prop.l2CacheSize;
    h->smem_optin_bytes = (int64_t)prop.sharedMemPerBlockOptin;
    /* peak DRAM bandwidth from the memory clock and bus width (dram_peak.h) */
    int mem_khz = 0, bus_bits = 0;
    h->dram_gbps = 0;
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, h->device) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, h->device) == cudaSuccess)
        h->dram_gbps = cuops_dram_peak_gbps(mem_khz, bus_bits);
    (void)cudaGetLastError();

    /* The arrival counters (cuops_cuda_counters), allocated and zeroed here
     * once: no call allocates them, so a call captured into a CUDA graph
     * (where cudaMalloc is refused, or its memset would only become a node
     * of the graph) finds them ready. The handle itself may be made while a
     * stream is being captured (a wrapper's handle for a new stream, made on
     * its first call): this thread's capture mode is relaxed meanwhile, so
     * that the allocation is allowed and breaks no capture, and the zeros go
     * through a private non-blocking stream, never the legacy one (which a
     * capture of any blocking stream forbids, and whose synchronization
     * would wait for every blocking stream of the device). */
    int prev = 0;
    (void)cudaGetDevice(&prev);
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    const size_t bytes = (size_t)CUOPS_COUNTERS_MAX * sizeof(unsigned);
    cudaStream_t zero_stream = NULL;
    err = cudaSetDevice(h->device);
    if (err == cudaSuccess) err = cudaMalloc(&h->counters, bytes);
    if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&zero_stream, cudaStreamNonBlocking);
    if (err == cudaSuccess) err = cudaMemsetAsync(h->counters, 0, bytes, zero_stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(zero_stream);
    if (zero_stream) (void)cudaStreamDestroy(zero_stream);
    if (err != cudaSuccess) {
        snprintf(why, CUOPS_ERROR_LEN, "device %d: %zu bytes of counters: %s", h->device, bytes,
                 cudaGetErrorString(err));
        (void)cudaGetLastError();
        if (h->counters) cudaFree(h->counters);
        h->counters = NULL;
    }
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    (void)cudaSetDevice(prev);
    if (err == cudaSuccess) return CUOPS_STATUS_SUCCESS;
    if (err == cudaErrorMemoryAllocation) return CUOPS_STATUS_ALLOC_FAILED;
    if (err == cudaErrorNoDevice || err == cudaErrorInvalidDevice ||
        err == cudaErrorInsufficientDriver)
        return CUOPS_STATUS_NO_DEVICE;
    return CUOPS_STATUS_CUDA_ERROR;
}

extern "C" cuops_status_t cuops_cuda_switch_stream(struct cuops_handle *h, void *stream)
{
    if (stream == h->stream) return CUOPS_STATUS_SUCCESS;
    /* nothing queued yet (a fresh handle): nothing to order */
    if (!h->queued) {
        h->stream = stream;
        return CUOPS_STATUS_SUCCESS;
    }
    const int prev = cuops_cuda_enter(h);
    /* a stream being captured into a graph may not wait on an event recorded
     * outside the capture (and a capture may not record one for a stream
     * outside it): the caller orders captured work, as CUDA asks */
    cudaStreamCaptureStatus cap_old = cudaStreamCaptureStatusNone, cap_new = cudaStreamCaptureStatusNone;
    const bool capturing = cudaStreamIsCapturing(cuops_stream(h), &cap_old) != cudaSuccess ||
                           cudaStreamIsCapturing((cudaStream_t)stream, &cap_new) != cudaSuccess ||
                           cap_old != cudaStreamCaptureStatusNone ||
                           cap_new != cudaStreamCaptureStatusNone;
    cudaError_t err = cudaSuccess;
    if (!capturing) {
        if (h->stream_event == NULL)
            err = cudaEventCreateWithFlags((cudaEvent_t *)&h->stream_event, cudaEventDisableTiming);
        if (err == cudaSuccess) err = cudaEventRecord((cudaEvent_t)h->stream_event, cuops_stream(h));
        if (err == cudaSuccess)
            err = cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)h->stream_event, 0);
        /* the old stream destroyed meanwhile (or another failure to order):
         * wait for the whole device instead, so the handle is never left
         * bound to a stream it cannot leave */
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            err = cudaDeviceSynchronize();
        }
    }
    (void)cudaGetLastError(); /* the capture queries' answers on the legacy stream */
    cuops_status_t st = CUOPS_STATUS_SUCCESS;
    if (err != cudaSuccess) st = cuops_cuda_fail(h, err, "set_stream (ordering the old stream's work first)");
    else h->stream = stream;
    cuops_cuda_leave(h, prev);
    return st;
}

extern "C" void cuops_cuda_fini(struct cuops_handle *h)
{
    if (h->stream_event) {
        const int prev = cuops_cuda_enter(h);
        cudaEventDestroy((cudaEvent_t)h->stream_event);
        cuops_cuda_leave(h, prev);
        h->stream_event = NULL;
    }
    cuops_cuda_scan_state_release(h);
    cuops_cuda_release(h, &h->counters);
    cuops_cuda_release(h, &h->own_workspace);
    h->own_workspace_bytes = 0;
}

void cuops_cuda_release(struct cuops_handle *h, void **p)
{
    if (*p == NULL) return;
    int prev = 0;
    cudaGetDevice(&prev);
    cudaSetDevice(h->device);
    cudaStreamSynchronize(cuops_stream(h));
    cudaFree(*p);
    cudaSetDevice(prev);
    *p = NULL;
}

cuops_status_t cuops_cuda_fail(struct cuops_handle *h, cudaError_t err, const char *what)
{
    (void)cudaGetLastError(); /* clear a sticky-free error so the next call starts clean */
    cuops_status_t st = (err == cudaErrorMemoryAllocation) ? CUOPS_STATUS_ALLOC_FAILED
                                                           : CUOPS_STATUS_CUDA_ERROR;
    return cuops_fail(h, st, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}

cuops_status_t cuops_cuda_check_launch(struct cuops_handle *h, const char *kernel)
{
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return cuops_cuda_fail(h, err, kernel);
    h->last_kernel = kernel;
    return CUOPS_STATUS_SUCCESS;
}

cuops_status_t cuops_cuda_workspace(struct cuops_handle *h, size_t bytes, void **ptr)
{
    *ptr = NULL;
    if (bytes == 0) return CUOPS_STATUS_SUCCESS;
    if (h->user_workspace) {
        if (h->user_workspace_bytes < bytes)
            return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                              "the workspace set with cuops_set_workspace holds %zu bytes; "
                              "this call needs %zu",
                              h->user_workspace_bytes, bytes);
        *ptr = h->user_workspace;
        return CUOPS_STATUS_SUCCESS;
    }
    if (h->own_workspace_bytes < bytes) {
        /* Work already queued may still use the old block. */
        CUOPS_CUDA_TRY(h, cudaStreamSynchronize(cuops_stream(h)));
        if (h->own_workspace) cudaFree(h->own_workspace);
        h->own_workspace = NULL;
        h->own_workspace_bytes = 0;
        size_t grow = bytes < ((size_t)1 << 20) ? ((size_t)1 << 20) : bytes;
        cudaError_t err = cudaMalloc(&h->own_workspace, grow);
        if (err != cudaSuccess) return cuops_cuda_fail(h, err, "cudaMalloc(workspace)");
        h->own_workspace_bytes = grow;
    }
    *ptr = h->own_workspace;
    return CUOPS_STATUS_SUCCESS;
}

cuops_status_t cuops_cuda_workspace_aligned(struct cuops_handle *h, size_t bytes, size_t align,
                                            void **ptr)
{
    *ptr = NULL;
    if (bytes == 0) return CUOPS_STATUS_SUCCESS;
    if (bytes > SIZE_MAX - align)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "a workspace of %zu bytes overflows", bytes);
    /* the handle's own block comes from cudaMalloc (256-byte aligned); a
     * user workspace pays exactly the bytes that bring it to `align` */
    const size_t pad = h->user_workspace ? (align - (uintptr_t)h->user_workspace % align) % align : 0;
    void *raw = NULL;
    cuops_status_t st = cuops_cuda_workspace(h, bytes + pad, &raw);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    *ptr = (void *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    return CUOPS_STATUS_SUCCESS;
}

cuops_status_t cuops_cuda_counters(struct cuops_handle *h, size_t count, void *in_workspace,
                                   unsigned **out)
{
    *out = NULL;
    if (count > CUOPS_COUNTERS_MAX)
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "%zu arrival counters asked, at most %d",
                          count, CUOPS_COUNTERS_MAX);
    if (h->user_workspace) {
        if (in_workspace == NULL || (uintptr_t)in_workspace % 4 != 0)
            return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR,
                              "arrival counters without room in the workspace");
        CUOPS_CUDA_TRY(h, cudaMemsetAsync(in_workspace, 0, count * 4, cuops_stream(h)));
        *out = (unsigned *)in_workspace;
        return CUOPS_STATUS_SUCCESS;
    }
    if (h->counters == NULL) /* allocated by cuops_cuda_init */
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "the handle has no arrival counters");
    *out = (unsigned *)h->counters;
    return CUOPS_STATUS_SUCCESS;
}

int cuops_cuda_in_workspace(const struct cuops_handle *h, const void *p)
{
    const uintptr_t q = (uintptr_t)p;
    const uintptr_t u = (uintptr_t)h->user_workspace, o = (uintptr_t)h->own_workspace;
    if (h->user_workspace && q >= u && q - u < h->user_workspace_bytes) return 1;
    if (h->own_workspace && q >= o && q - o < h->own_workspace_bytes) return 1;
    return 0;
}

/* Calls run on the handle's device; the caller's current device is restored.
 * An error the runtime still holds from earlier work of the caller's (a
 * failed cudaMalloc, say) is cleared, so that the call's launch checks report
 * its own launches only. */
extern "C" int cuops_cuda_enter(struct cuops_handle *h)
{
    (void)cudaGetLastError();
    h->queued = 1;
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
    if (prev != h->device) cudaSetDevice(h->device);
    return prev;
}

extern "C" void cuops_cuda_leave(struct cuops_handle *h, int prev)
{
    if (prev >= 0 && prev != h->device) cudaSetDevice(prev);
}
