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
 */
#include "probe.h"

static __global__ void empty_kernel(int *sink)
{
    if (sink != NULL && threadIdx.x == 0 && blockIdx.x == 0x7fffffff) sink[0] = 1;
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
    struct {
        const char *name;
        float ms;
    } rows[6];
    rows[0].name = "empty kernel, 1 CTA of 32 threads";
    rows[0].ms = probe_time_ms([&] { plain(1, 32, 0); }, reps);
    rows[1].name = "empty kernel, SMs x 512 threads, 192 KB dynamic smem";
    rows[1].ms = probe_time_ms([&] { plain(sms, block, smem); }, reps);
    rows[2].name = "the same, cooperative launch";
    rows[2].ms = probe_time_ms(cooperative, reps);
    rows[3].name = "cudaMemsetAsync 176 KB";
    rows[3].ms = probe_time_ms([&] { PROBE_CHECK(cudaMemsetAsync(status, 0, status_bytes, 0)); }, reps);
    rows[4].name = "cudaMemsetAsync 176 KB + the cooperative launch";
    rows[4].ms = probe_time_ms([&] { PROBE_CHECK(cudaMemsetAsync(status, 0, status_bytes, 0)); cooperative(); },
                               reps);
    rows[5].name = "cudaMemcpyAsync D2D of 4 bytes";
    rows[5].ms = probe_time_ms([&] { PROBE_CHECK(cudaMemcpyAsync(copy_dst, copy_src, 4, cudaMemcpyDeviceToDevice, 0)); },
                               reps);
    printf("\nlaunch: event-timed cost of a call with an empty body (median of %d)\n", reps);
    for (int i = 0; i < 6; i++) {
        printf("  %-56s %7.2f us\n", rows[i].name, rows[i].ms * 1e3);
        probe_add("launch", rows[i].name, i, rows[i].ms * 1e3, "us", -1, "");
    }
    cudaFree(sink);
    cudaFree(status);
    cudaFree(copy_src);
    cudaFree(copy_dst);
}
