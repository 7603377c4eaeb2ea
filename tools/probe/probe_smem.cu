/*
 * probe_smem.cu - shared-memory bank conflicts, measured (seed 002's question).
 *
 * Every thread of one warp chases a self-pointing slot in shared memory
 * (s[i] == i), so each iteration is one dependent load whose address pattern
 * across the warp is fixed: the cycles per iteration are the load latency
 * plus one replay per extra wavefront the bank conflicts force.
 *  - word stride S (32-bit): gcd(S, 32)-way conflict, S = 1..32;
 *  - 64- and 128-bit accesses at unit and larger strides;
 *  - a 32x32 float tile read by column (the transpose case): plain (32-way),
 *    padded to 33 words per row, and XOR-swizzled (column c of row r stored
 *    at r*32 + (c ^ r)).
 */
#include <stdint.h>

#include "probe.h"

#define SMEM_WORDS (12 * 1024) /* 48 KB */

template <int VEC> static __device__ __forceinline__ uint32_t lds_index(uint32_t addr)
{
    uint32_t v0, v1, v2, v3;
    if (VEC == 1) {
        asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v0) : "r"(addr));
        return v0;
    } else if (VEC == 2) {
        asm volatile("ld.volatile.shared.v2.u32 {%0,%1}, [%2];" : "=r"(v0), "=r"(v1) : "r"(addr));
        return v0 + (v1 & 0u);
    } else {
        asm volatile("ld.volatile.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3)
                     : "r"(addr));
        return v0 + ((v1 | v2 | v3) & 0u);
    }
}

/* offsets[t]: thread t's element index (in VEC-word elements). Writes cycles per load. */
template <int VEC>
__global__ void smem_chase(const uint32_t *offsets, int iters, double *cycles, uint32_t *sink)
{
    __shared__ __align__(16) uint32_t s[SMEM_WORDS];
    /* element e (VEC words) holds its own index in its first word */
    for (int w = threadIdx.x; w < SMEM_WORDS; w += blockDim.x) s[w] = (w % VEC == 0) ? (uint32_t)(w / VEC) : 0u;
    __syncthreads();
    uint32_t base = (uint32_t)__cvta_generic_to_shared(s);
    uint32_t idx = offsets[threadIdx.x];
    __syncwarp();
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) idx = lds_index<VEC>(base + idx * 4u * VEC);
    __syncwarp();
    long long t1 = clock64();
    if (threadIdx.x == 0) *cycles = (double)(t1 - t0) / iters;
    sink[threadIdx.x] = idx;
}

static double run_pattern(int vec, const uint32_t *host_offsets)
{
    uint32_t *d_off, *sink;
    double *d_cyc, cyc = 0;
    PROBE_CHECK(cudaMalloc(&d_off, 32 * sizeof(uint32_t)));
    PROBE_CHECK(cudaMalloc(&sink, 32 * sizeof(uint32_t)));
    PROBE_CHECK(cudaMalloc(&d_cyc, sizeof(double)));
    PROBE_CHECK(cudaMemcpy(d_off, host_offsets, 32 * sizeof(uint32_t), cudaMemcpyHostToDevice));
    const int iters = 4096;
    for (int rep = 0; rep < 2; rep++) { /* first run warms the instruction cache */
        if (vec == 1) smem_chase<1><<<1, 32>>>(d_off, iters, d_cyc, sink);
        if (vec == 2) smem_chase<2><<<1, 32>>>(d_off, iters, d_cyc, sink);
        if (vec == 4) smem_chase<4><<<1, 32>>>(d_off, iters, d_cyc, sink);
        PROBE_CHECK(cudaGetLastError());
        PROBE_CHECK(cudaMemcpy(&cyc, d_cyc, sizeof(double), cudaMemcpyDeviceToHost));
    }
    cudaFree(d_off);
    cudaFree(sink);
    cudaFree(d_cyc);
    return cyc;
}

void probe_smem(void)
{
    uint32_t off[32];
    printf("\n== shared memory: cycles per dependent warp load (latency + conflict replays)\n");
    printf("%-34s %8s %10s\n", "pattern", "ways", "cycles");
    double base = 0;
    for (int s = 1; s <= 32; s *= 2) {
        for (int t = 0; t < 32; t++) off[t] = (uint32_t)(t * s);
        double c = run_pattern(1, off);
        if (s == 1) base = c;
        char name[64];
        snprintf(name, sizeof name, "32-bit, word stride %d", s);
        probe_add("smem_conflict", "32-bit stride", s, c, "cycles", c - base, "extra cycles");
        printf("%-34s %8d %10.1f\n", name, s, c);
    }
    const int vecs[2] = {2, 4};
    for (int vi = 0; vi < 2; vi++) {
        int vec = vecs[vi];
        for (int s = 1; s <= 32 / vec; s *= 2) {
            for (int t = 0; t < 32; t++) off[t] = (uint32_t)(t * s);
            double c = run_pattern(vec, off);
            char name[64], series[32];
            /* a warp's 32 x (4*vec) bytes take vec wavefronts even without conflicts */
            snprintf(name, sizeof name, "%d-bit, element stride %d", 32 * vec, s);
            snprintf(series, sizeof series, "%d-bit stride", 32 * vec);
            probe_add("smem_conflict", series, s, c, "cycles", c - base, "extra cycles");
            printf("%-34s %8d %10.1f\n", name, s * vec, c);
        }
    }
    /* column read of a 32x32 float tile: plain, padded, swizzled */
    for (int t = 0; t < 32; t++) off[t] = (uint32_t)(t * 32);
    double plain = run_pattern(1, off);
    for (int t = 0; t < 32; t++) off[t] = (uint32_t)(t * 33);
    double padded = run_pattern(1, off);
    for (int t = 0; t < 32; t++) off[t] = (uint32_t)(t * 32 + (0 ^ t));
    double swizzled = run_pattern(1, off);
    probe_add("smem_transpose", "column read of 32x32 floats", 0, plain, "cycles", -1, "plain");
    probe_add("smem_transpose", "column read of 32x32 floats", 1, padded, "cycles", -1, "padded 33");
    probe_add("smem_transpose", "column read of 32x32 floats", 2, swizzled, "cycles", -1, "xor swizzle");
    printf("%-34s %8d %10.1f\n", "32x32 tile column: plain", 32, plain);
    printf("%-34s %8d %10.1f\n", "32x32 tile column: padded [32][33]", 1, padded);
    printf("%-34s %8d %10.1f\n", "32x32 tile column: XOR swizzle", 1, swizzled);
}
