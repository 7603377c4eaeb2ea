/*
 * probe.h - what the cuops-probe files share: result records, a JSON writer,
 * CUDA error checks, event timing.
 */
#ifndef CUOPS_PROBE_H
#define CUOPS_PROBE_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define PROBE_CHECK(call)                                                              \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                    cudaGetErrorString(e_));                                           \
            exit(2);                                                                   \
        }                                                                              \
    } while (0)

/* One measured point: a probe family, a series within it (e.g. "f16 acc=4"),
 * an x value (footprint, ILP, bytes in flight...) and its measured values. */
typedef struct probe_point {
    char family[24];
    char series[64];
    double x;
    double value;     /* the headline number (cycles, GB/s, TFLOP/s) */
    char unit[16];
    double extra;     /* a second number where useful (e.g. FLOP/clk/SM), or -1 */
    char extra_unit[16];
} probe_point_t;

void probe_add(const char *family, const char *series, double x, double value, const char *unit,
               double extra, const char *extra_unit);

typedef struct probe_device {
    cudaDeviceProp prop;
    int device;
    double sm_clock_mhz; /* measured inside a kernel: clock64 ticks over globaltimer ns */
} probe_device_t;

extern probe_device_t g_dev;

/* The median of t[0..n) (sorts t; insertion sort: n is small). */
static inline float probe_median(float *t, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { float s = t[j]; t[j] = t[j - 1]; t[j - 1] = s; }
    return t[n / 2];
}

/* One thread holding the stream for `ns` of %globaltimer (probe_main.cu). */
__global__ void probe_spin_kernel(long long ns);

/* Run a kernel launch `launch` (a lambda) `reps` times between events; median
 * ms. queued: each timed launch waits behind a ~50 us spin on the stream, so
 * that its host submission happens while the GPU is busy and stays out of the
 * event pair (the bench's clock; unqueued, an idle GPU adds ~1.5 us per
 * launch: docs/probe.md "The fixed cost of a call"). */
template <typename F> static float probe_time_ms(F launch, int reps, bool queued = false)
{
    cudaEvent_t a, b;
    PROBE_CHECK(cudaEventCreate(&a));
    PROBE_CHECK(cudaEventCreate(&b));
    launch(); /* warm-up */
    PROBE_CHECK(cudaDeviceSynchronize());
    float *t = (float *)malloc(sizeof(float) * reps);
    for (int i = 0; i < reps; i++) {
        if (queued) probe_spin_kernel<<<1, 1>>>(50000);
        PROBE_CHECK(cudaEventRecord(a));
        launch();
        PROBE_CHECK(cudaEventRecord(b));
        PROBE_CHECK(cudaEventSynchronize(b));
        PROBE_CHECK(cudaEventElapsedTime(&t[i], a, b));
    }
    PROBE_CHECK(cudaGetLastError());
    const float med = probe_median(t, reps);
    free(t);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return med;
}

void probe_mma(void);
void probe_smem(void);
void probe_latency(void);
void probe_bandwidth(void);
void probe_streams(void);
void probe_writes(void);
void probe_tma(void);
void probe_launch(void);
double probe_measure_clock_mhz(void);

#endif
