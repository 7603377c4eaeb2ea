/*
 * probe_memory.cu - the memory hierarchy as a kernel sees it.
 *
 * latency:   one thread chases a random cyclic permutation of 128-byte lines
 *            over footprints from 4 KB to 1 GB (ld.global.ca, so L1 holds what
 *            fits); cycles per load show the L1, L2 and HBM plateaus (large
 *            footprints also pay TLB misses: the permutation is random).
 * bandwidth: achieved read bandwidth against bytes in flight per SM
 *            (resident warps x 32 lanes x loads in flight per thread x 16 B):
 *            the Little's-law knee (seed 002) where latency x bandwidth is met;
 *            the copy ceiling (cudaMemcpy device to device, read + write); and
 *            the read throughput of cp.async (16 B per thread into shared
 *            memory) and of the bulk-copy engine (cp.async.bulk into shared
 *            memory, completing on an mbarrier; sm_90).
 */
#include <stdint.h>
#include <string.h>

#include "probe.h"

/* ------------------------------------------------------------------ latency */

__global__ void chase(const uint64_t *next, uint64_t start, int steps, double *cycles, uint64_t *sink)
{
    uint64_t p = start;
    for (int i = 0; i < steps / 4; i++) /* warm pass: brings what fits into the caches */
        asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(p) : "l"(next + p));
    long long t0 = clock64();
    for (int i = 0; i < steps; i++) asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(p) : "l"(next + p));
    long long t1 = clock64();
    *cycles = (double)(t1 - t0) / steps;
    *sink = p;
}

void probe_latency(void)
{
    printf("\n== pointer-chase latency (one thread, random 128-byte lines)\n");
    printf("%12s %10s %10s\n", "footprint", "cycles", "ns");
    const size_t line_words = 128 / 8;
    size_t max_bytes = (size_t)1 << 30;
    uint64_t *d_buf, *d_sink;
    double *d_cyc;
    if (cudaMalloc(&d_buf, max_bytes) != cudaSuccess) { printf("(not enough memory)\n"); return; }
    PROBE_CHECK(cudaMalloc(&d_sink, 8));
    PROBE_CHECK(cudaMalloc(&d_cyc, sizeof(double)));
    uint64_t *host = (uint64_t *)malloc(max_bytes);
    uint64_t *order = (uint64_t *)malloc(sizeof(uint64_t) * (max_bytes / 128));
    uint64_t rng = 0x243F6A8885A308D3ull;
    for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
        size_t lines = bytes / 128;
        for (size_t i = 0; i < lines; i++) order[i] = i;
        for (size_t i = lines - 1; i > 0; i--) { /* Fisher-Yates with xorshift */
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
            size_t j = rng % (i + 1);
            uint64_t t = order[i]; order[i] = order[j]; order[j] = t;
        }
        for (size_t i = 0; i < lines; i++)
            host[order[i] * line_words] = order[(i + 1) % lines] * line_words;
        /* only the first word of each line is read: copy the whole span */
        PROBE_CHECK(cudaMemcpy(d_buf, host, bytes, cudaMemcpyHostToDevice));
        int steps = bytes <= ((size_t)64 << 20) ? 200000 : 50000;
        double cyc = 0;
        chase<<<1, 1>>>(d_buf, order[0] * line_words, steps, d_cyc, d_sink);
        PROBE_CHECK(cudaGetLastError());
        PROBE_CHECK(cudaMemcpy(&cyc, d_cyc, sizeof(double), cudaMemcpyDeviceToHost));
        double ns = cyc / g_dev.sm_clock_mhz * 1e3;
        probe_add("latency", "pointer chase", (double)bytes, cyc, "cycles", ns, "ns");
        printf("%10zu K %10.1f %10.1f\n", bytes >> 10, cyc, ns);
    }
    free(host);
    free(order);
    cudaFree(d_buf);
    cudaFree(d_sink);
    cudaFree(d_cyc);
}

/* ---------------------------------------------------------------- bandwidth */

/* Each thread keeps UNROLL independent 16-byte loads in flight per step. */
template <int UNROLL>
__global__ void read_sweep(const uint4 *__restrict__ in, size_t n16, uint32_t *sink)
{
    uint32_t acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x * UNROLL;
    for (size_t base = (size_t)blockIdx.x * blockDim.x * UNROLL + threadIdx.x; base < n16; base += stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            size_t i = base + (size_t)u * blockDim.x;
            v[u] = i < n16 ? __ldcs(in + i) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    if (acc == 0x9e3779b9u) sink[0] = acc; /* keeps the loads; practically never stores */
}

/* cp.async 16 B per thread into a 4-deep shared ring; each thread waits on its own copies. */
__global__ void read_cp_async(const uint4 *__restrict__ in, size_t n16, uint32_t *sink)
{
    __shared__ __align__(16) uint4 ring[4][256];
    uint32_t acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    int stage = 0;
    for (; i < n16; i += stride) {
        uint32_t dst = (uint32_t)__cvta_generic_to_shared(&ring[stage][threadIdx.x]);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(in + i));
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 3;\n" ::);
        stage = (stage + 1) & 3;
        acc ^= ring[stage][threadIdx.x].x; /* oldest landed copy (own thread's, no barrier needed) */
    }
    asm volatile("cp.async.wait_group 0;\n" ::);
    if (acc == 0x9e3779b9u) sink[0] = acc;
}

#define BULK_BYTES (32 * 1024)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
static __device__ __forceinline__ void bulk_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}
/* `bytes` from global to shared memory by the bulk-copy engine, completing
 * on the mbarrier `bar`, which this thread arms for exactly those bytes. */
static __device__ __forceinline__ void bulk_issue(uint32_t dst, const void *src, uint32_t bytes,
                                                  uint32_t bar)
{
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes));
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
#endif
#define BULK_STAGES 4
/* One elected thread per CTA streams 32 KB chunks with the bulk-copy engine
 * into a 4-stage ring, each stage completing on its own mbarrier. */
__global__ void read_bulk(const uint8_t *__restrict__ in, size_t nbytes, uint32_t *sink)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(128) uint8_t ring[];
    __shared__ __align__(8) uint64_t full[BULK_STAGES];
    size_t chunks = nbytes / BULK_BYTES;
    if (threadIdx.x == 0) {
        for (int s = 0; s < BULK_STAGES; s++) {
            uint32_t bar = (uint32_t)__cvta_generic_to_shared(&full[s]);
            asm volatile("mbarrier.init.shared.b64 [%0], 1;\n" ::"r"(bar));
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    uint32_t acc = 0;
    if (threadIdx.x == 0) {
        uint32_t phase[BULK_STAGES] = {0, 0, 0, 0};
        int pending[BULK_STAGES] = {0, 0, 0, 0};
        int s = 0;
        for (size_t c = blockIdx.x; c < chunks; c += gridDim.x) {
            uint32_t bar = (uint32_t)__cvta_generic_to_shared(&full[s]);
            if (pending[s]) { /* the stage's previous copy must land before it is reused */
                bulk_wait(bar, phase[s]);
                phase[s] ^= 1u;
                acc ^= ring[s * BULK_BYTES];
            }
            bulk_issue((uint32_t)__cvta_generic_to_shared(ring + (size_t)s * BULK_BYTES),
                       in + c * BULK_BYTES, BULK_BYTES, bar);
            pending[s] = 1;
            s = (s + 1) % BULK_STAGES;
        }
        for (int t = 0; t < BULK_STAGES; t++) { /* drain */
            if (!pending[t]) continue;
            bulk_wait((uint32_t)__cvta_generic_to_shared(&full[t]), phase[t]);
            acc ^= ring[t * BULK_BYTES];
        }
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
#else
    (void)in; (void)nbytes; (void)sink;
#endif
}

void probe_bandwidth(void)
{
    const int sms = g_dev.prop.multiProcessorCount;
    size_t bytes = (size_t)2 << 30; /* 2 GiB: far beyond the 50-60 MB L2 */
    uint8_t *a, *b;
    uint32_t *sink;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
        printf("(not enough memory for the bandwidth probe)\n");
        return;
    }
    PROBE_CHECK(cudaMalloc(&sink, 4));
    PROBE_CHECK(cudaMemset(a, 0x5a, bytes));
    size_t n16 = bytes / 16;

    float ms = probe_time_ms([&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); }, 10);
    double copy_gbps = 2.0 * bytes / (ms * 1e-3) / 1e9;
    probe_add("bandwidth", "copy (cudaMemcpy D2D, read+write)", (double)bytes, copy_gbps, "GB/s", -1, "");
    printf("\n== bandwidth\ncopy ceiling (cudaMemcpy D2D, 2 GiB, read + write): %.0f GB/s\n", copy_gbps);

    printf("\n%-8s %8s %8s %16s %10s\n", "threads", "CTA/SM", "loads", "bytes/SM in flt", "GB/s");
    const int unrolls[4] = {1, 2, 4, 8};
    const int ctas[5] = {1, 2, 4, 8, 16};
    for (int ui = 0; ui < 4; ui++) {
        for (int ci = 0; ci < 5; ci++) {
            int threads = 128, per_sm = ctas[ci], u = unrolls[ui];
            int blocks = sms * per_sm;
            auto launch = [&] {
                if (u == 1) read_sweep<1><<<blocks, threads>>>((const uint4 *)a, n16, sink);
                if (u == 2) read_sweep<2><<<blocks, threads>>>((const uint4 *)a, n16, sink);
                if (u == 4) read_sweep<4><<<blocks, threads>>>((const uint4 *)a, n16, sink);
                if (u == 8) read_sweep<8><<<blocks, threads>>>((const uint4 *)a, n16, sink);
            };
            float t = probe_time_ms(launch, 7);
            double gbps = bytes / (t * 1e-3) / 1e9;
            double inflight = (double)per_sm * threads * u * 16;
            char series[32];
            snprintf(series, sizeof series, "ld.global 16B x%d", u);
            probe_add("bandwidth_vs_inflight", series, inflight, gbps, "GB/s", per_sm, "CTAs/SM");
            printf("%-8d %8d %8d %16.0f %10.0f\n", threads, per_sm, u, inflight, gbps);
        }
    }
    {
        int blocks = sms * 8;
        float t = probe_time_ms([&] { read_cp_async<<<blocks, 256>>>((const uint4 *)a, n16, sink); }, 7);
        double gbps = bytes / (t * 1e-3) / 1e9;
        probe_add("bandwidth", "cp.async 16B, 4 groups in flight, 8x256 threads/SM", (double)bytes, gbps, "GB/s", -1, "");
        printf("cp.async 16 B (4 in flight per thread, 8 CTAs x 256 threads per SM): %.0f GB/s\n", gbps);
    }
    if (g_dev.prop.major >= 9) {
        size_t smem = (size_t)BULK_STAGES * BULK_BYTES;
        PROBE_CHECK(cudaFuncSetAttribute(read_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        for (int per_sm = 1; per_sm <= 1; per_sm++) {
            int blocks = sms * per_sm;
            float t = probe_time_ms([&] { read_bulk<<<blocks, 32, smem>>>(a, bytes, sink); }, 7);
            double gbps = bytes / (t * 1e-3) / 1e9;
            probe_add("bandwidth", "bulk copy (cp.async.bulk 32 KB, 4 stages, 1 CTA/SM)", (double)bytes, gbps, "GB/s", -1, "");
            printf("bulk copy engine (cp.async.bulk 32 KB chunks, 4 stages, 1 CTA per SM): %.0f GB/s\n", gbps);
        }
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(sink);
}

/* ---------------------------------------------------------------- streams */

/*
 * The weight stream of w4a16_decode_warp without its math: warp w of the grid
 * reads `tiles` tiles of 512 bytes (one 16-byte load per lane), U in flight in
 * registers, each refilled only once the tile it replaces has been used, as
 * the decode kernel's pipeline does. STRIPS: warp w's tiles are the
 * contiguous region [w * tiles, (w + 1) * tiles) (the packed layout's
 * strip-major order: W separate streams); otherwise warp w's tile j is
 * j * W + w (all warps sweep one moving window). 256 threads per CTA and
 * ~100 KB of shared memory requested so that two CTAs fit an SM, as the
 * decode kernel's registers allow.
 */
template <int U, bool STRIPS>
__global__ void __launch_bounds__(256) read_tiles(const uint4 *__restrict__ in, int tiles,
                                                  uint32_t *sink)
{
    const int lane = threadIdx.x & 31;
    const long w = (long)blockIdx.x * 8 + (threadIdx.x >> 5);
    const long nw = (long)gridDim.x * 8;
    auto at = [&](int j) -> const uint4 * {
        const long t = STRIPS ? w * tiles + j : (long)j * nw + w;
        return in + t * 32 + lane;
    };
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++)
        v[u] = u < tiles ? __ldcs(at(u)) : make_uint4(0, 0, 0, 0);
    uint32_t acc = 0;
    for (int j = 0; j < tiles; j += U) {
#pragma unroll
        for (int u = 0; u < U; u++) {
            acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
            if (j + u + U < tiles) v[u] = __ldcs(at(j + u + U));
        }
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}

/*
 * The same stream fed by the bulk-copy engine: lane 0 of warp w copies its
 * strip CT tiles at a time (CT x 512 contiguous bytes, one cp.async.bulk)
 * into the warp's own ring of S stages in shared memory, each stage
 * completing on its own mbarrier; the warp waits for a stage, every lane
 * reads its 16 bytes of each tile, and lane 0 refills the stage. Same grid,
 * same two CTAs per SM, the same 16 tiles (8 KB) in flight per warp as the
 * U = 16 rows above (CT x S = 16): only the width of the requests differs
 * (4, 2 or 1 KB).
 */
template <int CT, int S>
__global__ void __launch_bounds__(256) read_tiles_bulk(const uint8_t *__restrict__ in, int tiles,
                                                       uint32_t *sink)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(128) uint8_t smem_tiles[];
    __shared__ __align__(8) uint64_t bars[8][S];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const long w = (long)blockIdx.x * 8 + warp;
    const uint8_t *src = in + w * (long)tiles * 512;
    uint8_t *ring = smem_tiles + (size_t)warp * S * CT * 512;
    const int chunks = tiles / CT;
    if (lane == 0) {
        for (int s = 0; s < S; s++) {
            uint32_t bar = (uint32_t)__cvta_generic_to_shared(&bars[warp][s]);
            asm volatile("mbarrier.init.shared.b64 [%0], 1;\n" ::"r"(bar));
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        for (int c = 0; c < S && c < chunks; c++) {
            uint32_t bar = (uint32_t)__cvta_generic_to_shared(&bars[warp][c]);
            bulk_issue((uint32_t)__cvta_generic_to_shared(ring + (size_t)c * CT * 512),
                       src + (size_t)c * CT * 512, CT * 512, bar);
        }
    }
    __syncwarp();
    uint32_t acc = 0;
    for (int c = 0; c < chunks; c++) {
        const int s = c % S;
        const uint32_t bar = (uint32_t)__cvta_generic_to_shared(&bars[warp][s]);
        bulk_wait(bar, (uint32_t)((c / S) & 1));
        const uint4 *stage = (const uint4 *)(ring + (size_t)s * CT * 512);
#pragma unroll
        for (int j = 0; j < CT; j++) {
            const uint4 v = stage[j * 32 + lane];
            acc ^= v.x ^ v.y ^ v.z ^ v.w;
        }
        __syncwarp();
        if (lane == 0 && c + S < chunks) {
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            bulk_issue((uint32_t)__cvta_generic_to_shared(ring + (size_t)s * CT * 512),
                       src + (size_t)(c + S) * CT * 512, CT * 512, bar);
        }
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
#else
    (void)in; (void)tiles; (void)sink;
#endif
}

void probe_streams(void)
{
    const int sms = g_dev.prop.multiProcessorCount;
    const int tiles = 128; /* k = 8192: 128 tiles of 64 columns per 16-row strip */
    const int rows_list[3] = {25344, 28672, 33792};
    const size_t max_bytes = (size_t)33792 / 16 * tiles * 512;
    const int nbuf = 4; /* rotated: 4 x 138 MB, so each launch reads HBM, not L2 */
    uint8_t *buf[4];
    uint32_t *sink;
    for (int i = 0; i < nbuf; i++) {
        if (cudaMalloc(&buf[i], max_bytes) != cudaSuccess) {
            printf("(not enough memory for the streams probe)\n");
            while (i-- > 0) cudaFree(buf[i]);
            return;
        }
        PROBE_CHECK(cudaMemset(buf[i], 0x5a, max_bytes));
    }
    PROBE_CHECK(cudaMalloc(&sink, 4));
    const int smem = 100 * 1024; /* two CTAs per SM */
    PROBE_CHECK(cudaFuncSetAttribute(read_tiles<8, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    PROBE_CHECK(cudaFuncSetAttribute(read_tiles<8, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    PROBE_CHECK(cudaFuncSetAttribute(read_tiles<16, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    PROBE_CHECK(cudaFuncSetAttribute(read_tiles<16, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    printf("\n== streams (the decode W4A16 weight stream without math: 16-row strips x %d tiles of 512 B, "
           "one warp per strip, 8 warps per CTA, 2 CTAs per SM at most; %d SMs)\n", tiles, sms);
    printf("%-8s %6s %4s %-8s %10s %10s\n", "rows", "CTAs", "U", "order", "us", "GB/s");
    int rot = 0;
    for (int ri = 0; ri < 3; ri++) {
        const int rows = rows_list[ri];
        const int warps = rows / 16, blocks = warps / 8;
        const size_t bytes = (size_t)warps * tiles * 512;
        for (int ui = 0; ui < 2; ui++) {
            for (int order = 0; order < 2; order++) {
                const int u = ui ? 16 : 8;
                const bool strips = order == 0;
                auto launch = [&] {
                    const uint4 *in = (const uint4 *)buf[rot++ % nbuf];
                    if (u == 8 && strips) read_tiles<8, true><<<blocks, 256, smem>>>(in, tiles, sink);
                    if (u == 8 && !strips) read_tiles<8, false><<<blocks, 256, smem>>>(in, tiles, sink);
                    if (u == 16 && strips) read_tiles<16, true><<<blocks, 256, smem>>>(in, tiles, sink);
                    if (u == 16 && !strips) read_tiles<16, false><<<blocks, 256, smem>>>(in, tiles, sink);
                };
                const float t = probe_time_ms(launch, 15);
                const double gbps = bytes / (t * 1e-3) / 1e9;
                char series[64];
                snprintf(series, sizeof series, "%s, %d tiles in flight per warp, %d rows",
                         strips ? "strip-major" : "moving window", u, rows);
                probe_add("streams", series, (double)bytes, gbps, "GB/s", blocks, "CTAs");
                printf("%-8d %6d %4d %-8s %10.2f %10.0f\n", rows, blocks, u, strips ? "strips" : "window",
                       t * 1e3, gbps);
            }
        }
    }
    if (g_dev.prop.major >= 9) {
        PROBE_CHECK(cudaFuncSetAttribute(read_tiles_bulk<8, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        PROBE_CHECK(cudaFuncSetAttribute(read_tiles_bulk<4, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        PROBE_CHECK(cudaFuncSetAttribute(read_tiles_bulk<2, 8>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        printf("bulk-copy fed, strip-major (lane 0 of each warp copies CT tiles per request, S stages):\n");
        printf("%-8s %6s %8s %10s %10s\n", "rows", "CTAs", "CTxS", "us", "GB/s");
        for (int ri = 0; ri < 3; ri++) {
            const int rows = rows_list[ri];
            const int warps = rows / 16, blocks = warps / 8;
            const size_t bytes = (size_t)warps * tiles * 512;
            for (int cfg = 0; cfg < 3; cfg++) {
                const int ct = cfg == 0 ? 8 : cfg == 1 ? 4 : 2, st = 16 / ct; /* 16 tiles per warp in flight */
                auto launch = [&] {
                    const uint8_t *in = buf[rot++ % nbuf];
                    if (cfg == 0) read_tiles_bulk<8, 2><<<blocks, 256, smem>>>(in, tiles, sink);
                    if (cfg == 1) read_tiles_bulk<4, 4><<<blocks, 256, smem>>>(in, tiles, sink);
                    if (cfg == 2) read_tiles_bulk<2, 8><<<blocks, 256, smem>>>(in, tiles, sink);
                };
                const float t = probe_time_ms(launch, 15);
                const double gbps = bytes / (t * 1e-3) / 1e9;
                char series[64];
                snprintf(series, sizeof series, "bulk %d tiles x %d stages per warp, %d rows", ct, st, rows);
                probe_add("streams", series, (double)bytes, gbps, "GB/s", blocks, "CTAs");
                char cfgs[16];
                snprintf(cfgs, sizeof cfgs, "%dx%d", ct, st);
                printf("%-8d %6d %8s %10.2f %10.0f\n", rows, blocks, cfgs, t * 1e3, gbps);
            }
        }
    }
    for (int i = 0; i < nbuf; i++) cudaFree(buf[i]);
    cudaFree(sink);
}
