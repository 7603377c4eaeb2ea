/*
 * probe_launch.cu - what a call costs before its kernel moves a byte.
 *
 * The ring scans spend 3-8 us per call outside their kernel (docs/scan.md:
 * event-timed call against the ncu kernel duration): a cudaMemsetAsync of the
 * tile status, then a cooperative launch of one 512-thread CTA per SM with
 * 192 KB of dynamic shared memory. This probe times, between events, each
 * piece with an empty kernel body, so the pieces can be told apart:
 *   - an empty kernel of one CTA;
 *   - the ring's grid shape (SMs x 512 threads, 192 KB dynamic shared memory),
 *     plain and cooperative;
 *   - cudaMemsetAsync of 176 KB (the status of 2^28 4-byte elements in 48 KB
 *     tiles) alone, and before the cooperative launch;
 *   - a copy kernel's equivalent: cudaMemcpyAsync D2D of 4 bytes.
 * Each row is timed two ways:
 *   - unqueued: event, call, event, then wait for it (probe_time_ms): the
 *     GPU is idle when the first event runs, so the host's submission of the
 *     call is inside the pair;
 *   - queued, as cuops-bench times a row (tools/bench/bench_timing.cu): a
 *     one-thread kernel holds the stream while the host enqueues a batch of
 *     event pairs around calls, then lets them run back to back, so only
 *     what the GPU spends between the two events is counted.
 */
#include "probe.h"

static __global__ void empty_kernel(int *sink)
{
    if (sink != NULL && threadIdx.x == 0 && blockIdx.x == 0x7fffffff) sink[0] = 1;
}

/* Holds the stream until the host sets *release (or a second passes). */
static __global__ void hold_kernel(volatile int *release)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(2000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (*release == 0 && now - start < 1000000000ull);
}

/* `launch` timed as cuops-bench times a row: batches of QUEUED_BATCH event
 * pairs enqueued behind hold_kernel, released together; median ms. */
#define QUEUED_BATCH 64
template <typename F> static float probe_time_queued_ms(F launch, int reps, volatile int *flag, int *flag_dev)
{
    cudaEvent_t a[QUEUED_BATCH], b[QUEUED_BATCH];
    for (int i = 0; i < QUEUED_BATCH; i++) {
        PROBE_CHECK(cudaEventCreate(&a[i]));
        PROBE_CHECK(cudaEventCreate(&b[i]));
    }
    launch(); /* warm-up */
    PROBE_CHECK(cudaDeviceSynchronize());
    float *t = (float *)malloc(sizeof(float) * reps);
    for (int done = 0; done < reps; done += QUEUED_BATCH) {
        const int batch = reps - done < QUEUED_BATCH ? reps - done : QUEUED_BATCH;
        *flag = 0;
        hold_kernel<<<1, 1>>>(flag_dev);
        for (int i = 0; i < batch; i++) {
            PROBE_CHECK(cudaEventRecord(a[i]));
            launch();
            PROBE_CHECK(cudaEventRecord(b[i]));
        }
        __sync_synchronize();
        *flag = 1;
        PROBE_CHECK(cudaDeviceSynchronize());
        for (int i = 0; i < batch; i++) PROBE_CHECK(cudaEventElapsedTime(&t[done + i], a[i], b[i]));
    }
    const float med = probe_median(t, reps);
    free(t);
    for (int i = 0; i < QUEUED_BATCH; i++) {
        cudaEventDestroy(a[i]);
        cudaEventDestroy(b[i]);
    }
    return med;
}

void probe_launch(void)
{
    const int reps = 400;
    const int sms = g_dev.prop.multiProcessorCount;
    const int block = 512;
    const size_t smem = 4 * 48 * 1024; /* the ring_lead2_wide512 slots */
    const size_t status_bytes = 176 * 1024;
    int *sink = NULL;
    void *status = NULL, *copy_src = NULL, *copy_dst = NULL;
    PROBE_CHECK(cudaMalloc(&sink, sizeof(int)));
    PROBE_CHECK(cudaMalloc(&status, status_bytes));
    PROBE_CHECK(cudaMalloc(&copy_src, 16));
    PROBE_CHECK(cudaMalloc(&copy_dst, 16));
    PROBE_CHECK(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));

    auto plain = [&](int grid, int threads, size_t bytes) {
        empty_kernel<<<grid, threads, bytes>>>(sink);
    };
    auto cooperative = [&]() {
        void *args[] = {&sink};
        PROBE_CHECK(cudaLaunchCooperativeKernel((const void *)empty_kernel, dim3(sms), dim3(block), args,
                                                smem, 0));
    };
    void *flag_host = NULL;
    int *flag_dev = NULL;
    PROBE_CHECK(cudaHostAlloc(&flag_host, sizeof(int), cudaHostAllocMapped));
    PROBE_CHECK(cudaHostGetDevicePointer((void **)&flag_dev, flag_host, 0));
    volatile int *flag = (volatile int *)flag_host;
    struct {
        const char *name;
        float ms, queued_ms;
    } rows[6];
    /* both timings of one call: unqueued, then queued */
#define PROBE_LAUNCH_ROW(i, label, call)                                             \
    do {                                                                             \
        rows[i].name = label;                                                        \
        rows[i].ms = probe_time_ms([&] { call; }, reps);                             \
        rows[i].queued_ms = probe_time_queued_ms([&] { call; }, reps, flag, flag_dev); \
    } while (0)
    PROBE_LAUNCH_ROW(0, "empty kernel, 1 CTA of 32 threads", plain(1, 32, 0));
    PROBE_LAUNCH_ROW(1, "empty kernel, SMs x 512 threads, 192 KB dynamic smem", plain(sms, block, smem));
    PROBE_LAUNCH_ROW(2, "the same, cooperative launch", cooperative());
    PROBE_LAUNCH_ROW(3, "cudaMemsetAsync 176 KB", PROBE_CHECK(cudaMemsetAsync(status, 0, status_bytes, 0)));
    PROBE_LAUNCH_ROW(4, "cudaMemsetAsync 176 KB + the cooperative launch",
                     PROBE_CHECK(cudaMemsetAsync(status, 0, status_bytes, 0)); cooperative());
    PROBE_LAUNCH_ROW(5, "cudaMemcpyAsync D2D of 4 bytes",
                     PROBE_CHECK(cudaMemcpyAsync(copy_dst, copy_src, 4, cudaMemcpyDeviceToDevice, 0)));
#undef PROBE_LAUNCH_ROW
    printf("\nlaunch: event-timed cost of a call with an empty body (median of %d): unqueued (host "
           "submission inside the pair) / queued (as cuops-bench times a row)\n", reps);
    for (int i = 0; i < 6; i++) {
        printf("  %-56s %7.2f us %7.2f us\n", rows[i].name, rows[i].ms * 1e3, rows[i].queued_ms * 1e3);
        probe_add("launch", rows[i].name, i, rows[i].ms * 1e3, "us", rows[i].queued_ms * 1e3, "us queued");
    }
    cudaFreeHost(flag_host);
    cudaFree(sink);
    cudaFree(status);
    cudaFree(copy_src);
    cudaFree(copy_dst);
}
