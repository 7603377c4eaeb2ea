/*
 * gpu_test_util.h - what the GPU tests share beyond test_util.h (CUDA C++).
 */
#ifndef CUOPS_GPU_TEST_UTIL_H
#define CUOPS_GPU_TEST_UTIL_H

#include <cuda_runtime.h>

#include "test_util.h"
#include "cuda/common/dram_peak.h"

/* A cuops handle on device 0 for a GPU test. Without a device (no CUDA
 * device, or cuops_create answers NO_DEVICE) the test is skipped, as on a
 * build machine: returns 0 with one SKIP counted. Any other failure of
 * cuops_create is a failed check: returns 0. */
static int tu_gpu_handle(cuops_handle_t *h)
{
    *h = NULL;
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        SKIP("no CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 0;
    }
    const cuops_status_t st = cuops_create(h, 0);
    if (st == CUOPS_STATUS_NO_DEVICE) {
        SKIP("cuops_create(0): %s", cuops_create_error());
        return 0;
    }
    CHECK(st == CUOPS_STATUS_SUCCESS, "cuops_create(0): %s (%s)", cuops_status_string(st),
          cuops_create_error());
    return st == CUOPS_STATUS_SUCCESS;
}

/* Device 0's peak DRAM bandwidth in GB/s, worked out as the handle does
 * (dram_peak.h), for tests that mirror auto's bandwidth-keyed rules; 0 where
 * the runtime does not report it. */
static inline int64_t tu_gpu_dram_peak_gbps(void)
{
    int mem_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return cuops_dram_peak_gbps(mem_khz, bus_bits);
}

#endif /* CUOPS_GPU_TEST_UTIL_H */
