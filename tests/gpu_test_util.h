/*
 * gpu_test_util.h - what the GPU tests share beyond test_util.h (CUDA C++).
 */
#ifndef CUOPS_GPU_TEST_UTIL_H
#define CUOPS_GPU_TEST_UTIL_H

#include <cuda_runtime.h>

#include "test_util.h"

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

#endif /* CUOPS_GPU_TEST_UTIL_H */
