/*
 * cluster_splitk.cuh - split-K across the CTAs of a thread-block cluster,
 * reduced through distributed shared memory: what the wgmma decode kernels
 * (w4a16_decode_wgmma.cu, gemm_sm90_decode.cu) share.
 *
 * The S CTAs of one output tile form a cluster along x; each writes its fp32
 * accumulator fragments to its own shared memory as [float4 j][thread], the
 * cluster synchronises, and CTA rank r adds the float4s [r*F/S, (r+1)*F/S)
 * of every thread over ranks 0..S-1 in that order (bitwise reproducible),
 * then stores them; a second cluster barrier keeps every CTA alive until its
 * partials are read.
 */
#ifndef CUOPS_CLUSTER_SPLITK_CUH
#define CUOPS_CLUSTER_SPLITK_CUH

#include "cuda/common/cluster_size.h"
#include "cuda/common/ptx_sm90.cuh"

#define CUOPS_CLUSTER_MAX_SPLITS CUOPS_CLUSTER_PORTABLE_SIZE

#if CUOPS_SM90A_DEVICE

/* Rank `rank`'s share [*lo, *hi) of n blocks along K split over `splits`
 * ranks (the shares differ by at most one). In 32 bits: both kernels take
 * k < 2^31, so n (64-k blocks) < 2^25 and rank * n < 2^28; the 64-bit
 * division it replaced is the ~70-instruction routine, run by every thread
 * before the first copy (H200, P207: 0.5-5 % at 4096^2, docs/w4a16.md
 * Change 15 and docs/gemm.md). */
__device__ __forceinline__ void cuops_cluster_k_share(int rank, int n, int splits, int *lo, int *hi)
{
    *lo = (int)((uint32_t)(rank * n) / (uint32_t)splits);
    *hi = (int)((uint32_t)((rank + 1) * n) / (uint32_t)splits);
}

/* The sum over ranks 0..splits-1, in that order, of the float4 at this CTA's
 * shared address `addr` as laid out in each rank (all loads first: they
 * cross the cluster network). */
__device__ __forceinline__ float4 cuops_cluster_sum_f4(uint32_t addr, int splits)
{
    float4 v[CUOPS_CLUSTER_MAX_SPLITS];
#pragma unroll
    for (int q = 0; q < CUOPS_CLUSTER_MAX_SPLITS; q++)
        if (q < splits) v[q] = cuops_ld_dsmem_f4(addr, (uint32_t)q);
    return cuops_f4_sum_in_order(v, splits);
}

/* For j in [j0, j1): store(j, sum), sum = the float4 at this CTA's shared
 * address addr_of(j) as laid out in each rank, summed over ranks
 * 0..splits-1 in that order (the bits of cuops_cluster_sum_f4). The loads
 * of a batch of NB float4s from every rank are issued before the first add
 * (NB * MAXS = 16 float4s, 64 registers, in flight per thread), not one
 * float4 at a time. Measured on the 1024^3 split-K GEMM (S = 3, H200): 1 us
 * of ~15 faster; the warps still wait on these loads as long (ncu), so the
 * distributed-shared-memory path's own throughput, not its round trips,
 * bounds the reduction. */
template <int NB, int MAXS, typename Addr, typename Store>
__device__ __forceinline__ void cuops_cluster_reduce_batches(Addr addr_of, int splits, int j0,
                                                             int j1, Store store)
{
    for (int jb = j0; jb < j1; jb += NB) {
        float4 v[NB][MAXS];
#pragma unroll
        for (int q = 0; q < MAXS; q++)
#pragma unroll
            for (int i = 0; i < NB; i++)
                if (q < splits && jb + i < j1)
                    v[i][q] = cuops_ld_dsmem_f4(addr_of(jb + i), (uint32_t)q);
#pragma unroll
        for (int i = 0; i < NB; i++) {
            if (jb + i >= j1) break;
            float4 sum = v[i][0];
#pragma unroll
            for (int q = 1; q < MAXS; q++) {
                if (q < splits) {
                    sum.x += v[i][q].x;
                    sum.y += v[i][q].y;
                    sum.z += v[i][q].z;
                    sum.w += v[i][q].w;
                }
            }
            store(jb + i, sum);
        }
    }
}

/* The batch size by the cluster size: 16 float4s in flight per thread. */
template <typename Addr, typename Store>
__device__ __forceinline__ void cuops_cluster_reduce_store_at(Addr addr_of, int splits, int j0,
                                                              int j1, Store store)
{
    if (splits <= 2)
        cuops_cluster_reduce_batches<8, 2>(addr_of, splits, j0, j1, store);
    else if (splits <= 4)
        cuops_cluster_reduce_batches<4, 4>(addr_of, splits, j0, j1, store);
    else
        cuops_cluster_reduce_batches<2, CUOPS_CLUSTER_MAX_SPLITS>(addr_of, splits, j0, j1, store);
}

/* The same for the float4s at addr + j * stride. */
template <typename Store>
__device__ __forceinline__ void cuops_cluster_reduce_store(uint32_t addr, uint32_t stride,
                                                           int splits, int j0, int j1, Store store)
{
    cuops_cluster_reduce_store_at([&](int j) { return addr + (uint32_t)j * stride; }, splits, j0,
                                  j1, store);
}

/* This thread's float4 j of its fragment to shared memory at `addr`. */
__device__ __forceinline__ void cuops_st_shared_f4(uint32_t addr, float x, float y, float z, float w)
{
    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(x), "f"(y), "f"(z),
                 "f"(w)
                 : "memory");
}

/* The float4 at this CTA's shared address `addr`. */
__device__ __forceinline__ float4 cuops_ld_shared_f4(uint32_t addr)
{
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

#endif /* CUOPS_SM90A_DEVICE */

/* A launch of `grid` CTAs of `threads` in clusters of `cluster` along x, with
 * `smem` bytes of dynamic shared memory. cfg->attrs points at *attr. */
static inline void cuops_cluster_launch_config(cudaLaunchConfig_t *cfg, cudaLaunchAttribute *attr,
                                               int grid, int threads, int cluster, int smem,
                                               cudaStream_t stream)
{
    *cfg = cudaLaunchConfig_t{};
    cfg->gridDim = dim3((unsigned)grid, 1, 1);
    cfg->blockDim = dim3((unsigned)threads, 1, 1);
    cfg->dynamicSmemBytes = (size_t)smem;
    cfg->stream = stream;
    *attr = cudaLaunchAttribute{};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = (unsigned)cluster;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg->attrs = attr;
    cfg->numAttrs = 1;
}

/* How many clusters of `size` CTAs of `fn` (launched with `threads` threads
 * and `smem` bytes) the current device holds at once; -1 when the query
 * fails. Not cached: callers cache per device and configuration. */
static inline int cuops_cluster_max_active(const void *fn, int threads, int size, int smem)
{
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr;
    cuops_cluster_launch_config(&cfg, &attr, size, threads, size, smem, 0);
    int n = 0;
    if (cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess ||
        cudaOccupancyMaxActiveClusters(&n, fn, &cfg) != cudaSuccess || n < 1) {
        (void)cudaGetLastError();
        return -1;
    }
    return n;
}

#endif /* CUOPS_CLUSTER_SPLITK_CUH */
