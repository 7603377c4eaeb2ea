/*
 * ptx_sm90.cuh - inline-PTX wrappers for the Hopper (sm_90a) asynchronous
 * machinery the cuops sm90 kernels are built from: mbarriers with
 * transaction counts, TMA (cp.async.bulk.tensor) 2D loads and stores, the
 * async-proxy fence, warpgroup MMA (wgmma) with shared-memory descriptors,
 * and setmaxnreg.
 *
 * Every wrapper compiles to nothing useful outside the sm_90a pass; callers
 * guard their kernel bodies with CUOPS_SM90A_DEVICE (cuda_common.cuh) so the
 * sm_80 pass of the fat binary never sees these instructions.
 *
 * Conventions: shared-memory operands are passed as 32-bit shared-window
 * addresses (cuops_smem_addr), the form the PTX state spaces take.
 */
#ifndef CUOPS_PTX_SM90_CUH
#define CUOPS_PTX_SM90_CUH

#include <stdint.h>

#include "cuda/common/cuda_common.cuh"
#include "cuda/common/ptx_sm80.cuh" /* cuops_smem_addr, named barriers */

#if CUOPS_SM90A_DEVICE

/* ---- mbarrier ------------------------------------------------------------
 * A phase of an mbarrier completes when its pending arrival count reaches
 * zero AND its transaction count (bytes announced by expect_tx, paid off by
 * TMA completions) is zero. Waiters name the phase by its parity: waiting on
 * parity P returns once the phase with parity P has completed, so a fresh
 * barrier (current phase 0) lets a wait on parity 1 through at once - the
 * producer's first pass over the empty barriers relies on that. */

__device__ __forceinline__ void cuops_mbar_init(uint32_t bar, uint32_t arrivals)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}

/* Make the initialised barriers visible to the async proxy (TMA complete_tx)
 * before any thread uses them; follow with a CTA barrier. */
__device__ __forceinline__ void cuops_mbar_init_fence(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void cuops_mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/* One arrival plus `bytes` of expected TMA transactions for this phase. */
__device__ __forceinline__ void cuops_mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}

/* Spin until the phase of parity `parity` has completed. try_wait suspends
 * the thread for a hardware-chosen time slice before returning false, so the
 * loop is not a hot spin. */
__device__ __forceinline__ void cuops_mbar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done;
    do {
        asm volatile(
            "{\n"
            ".reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n"
            "}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}

/* ---- proxies --------------------------------------------------------------
 * Shared memory written with ordinary st.shared (generic proxy) and then read
 * by TMA or wgmma (async proxy) needs this fence in between. */
__device__ __forceinline__ void cuops_fence_proxy_async_smem(void)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* ---- clusters and distributed shared memory ------------------------------
 * All threads of every CTA of the cluster arrive and wait (the .aligned
 * forms: every thread of each warp executes them). release/acquire: shared
 * memory written before the barrier by any CTA of the cluster is visible to
 * ld.shared::cluster after it. */
__device__ __forceinline__ void cuops_cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/* A cluster barrier that publishes nothing: for "no CTA leaves while the
 * others still read its shared memory", where every read before it has
 * already returned its value, and after mbarrier.init + fence.mbarrier_init
 * (the fence orders the inits before a relaxed arrive). The release form
 * waits for this thread's outstanding global stores too (MEMBAR.ALL.GPU in
 * the SASS). */
__device__ __forceinline__ void cuops_cluster_sync_relaxed(void)
{
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n"
                 "barrier.cluster.wait.aligned;" ::: "memory");
}

__device__ __forceinline__ uint32_t cuops_cluster_ctarank(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

/* One arrival on the mbarrier at this CTA's shared address `bar` as laid
 * out in CTA `rank` of the cluster (rank may be this CTA's own). The plain
 * form (release at CTA scope): a cluster-scope release would order every
 * earlier memory access of the thread at cluster scope, which a stage
 * release after wgmma.wait_group does not need. */
__device__ __forceinline__ void cuops_mbar_arrive_rank(uint32_t bar, uint32_t rank)
{
    asm volatile("{\n"
                 ".reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
                 "}" ::"r"(bar), "r"(rank)
                 : "memory");
}

/* 16 bytes at this CTA's shared address `local` as laid out in CTA `rank`
 * of the cluster (same offset, the other CTA's shared memory). */
__device__ __forceinline__ float4 cuops_ld_dsmem_f4(uint32_t local, uint32_t rank)
{
    uint32_t remote;
    float4 v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(remote)
                 : "memory");
    return v;
}


/* The first 1024-byte boundary at or after the dynamic shared memory `raw`,
 * as a shared-window address: TMA's and wgmma's 128-byte swizzle repeats
 * every 8 rows x 128 bytes, and tiles laid out from that boundary keep the
 * swizzle phase their descriptors assume. */
__device__ __forceinline__ uint32_t cuops_smem_align1024(const void *raw)
{
    return (cuops_smem_addr(raw) + 1023u) & ~1023u;
}

/* ---- TMA ------------------------------------------------------------------
 * The tensor map is a __grid_constant__ kernel parameter; its generic address
 * is what cp.async.bulk.tensor takes. Coordinates are in elements, innermost
 * (contiguous) dimension first. Out-of-bounds elements of the box are filled
 * with zeros and still count toward the transaction bytes. */

__device__ __forceinline__ void cuops_tma_load_2d(uint32_t smem_dst, const void *tensor_map,
                                                  uint32_t bar, int32_t coord_inner,
                                                  int32_t coord_outer)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        ::"r"(smem_dst), "l"(tensor_map), "r"(coord_inner), "r"(coord_outer), "r"(bar)
        : "memory");
}

/* An MN-major operand tile of BOXES x 64 M/N elements by 64 K-rows from a
 * map with 64 x 64 boxes (cuops_sm90_encode_mnmajor): BOXES loads, box j
 * (elements mn0 + 64 j ..) 8 KB after box j - 1, as wgmma's MN-major
 * descriptor expects them (cuops_wgmma_desc_mn_sw128). */
template <int BOXES>
__device__ __forceinline__ void cuops_tma_load_mn_boxes(uint32_t smem_dst, const void *tensor_map,
                                                        uint32_t bar, int32_t mn0, int32_t k0)
{
#pragma unroll
    for (int j = 0; j < BOXES; j++)
        cuops_tma_load_2d(smem_dst + (uint32_t)j * 8192u, tensor_map, bar, mn0 + 64 * j, k0);
}

/* The same with a third coordinate (a 3D tensor map). */
__device__ __forceinline__ void cuops_tma_load_3d(uint32_t smem_dst, const void *tensor_map,
                                                  uint32_t bar, int32_t c0, int32_t c1, int32_t c2)
{
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4}], [%5];"
        ::"r"(smem_dst), "l"(tensor_map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}

/* The same box delivered to every CTA of the cluster named in `cta_mask`
 * (bit r: CTA rank r): it lands at smem_dst's offset in each one's shared
 * memory, and each one's mbarrier at bar's offset receives the box's bytes
 * as complete_tx. One L2 read feeds all of them. */
__device__ __forceinline__ void cuops_tma_load_2d_multicast(uint32_t smem_dst,
                                                            const void *tensor_map, uint32_t bar,
                                                            int32_t coord_inner,
                                                            int32_t coord_outer, uint16_t cta_mask)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
        ::"r"(smem_dst), "l"(tensor_map), "r"(coord_inner), "r"(coord_outer), "r"(bar),
        "h"(cta_mask)
        : "memory");
}

/* A cluster's share of an MN-major tile, multicast: of each of the BOXES
 * boxes of 64 K-rows x 64 M/N elements (cuops_tma_load_mn_boxes), this
 * CTA loads K-rows [piece * ROWS, piece * ROWS + ROWS) from a map with
 * boxes of ROWS K-rows (cuops_sm90_encode_mnmajor's box_k) and delivers
 * them to the CTAs in `cta_mask`, at the same rows of each box. ROWS x 128
 * bytes is a multiple of 1024, the 128B swizzle's period, so the pieces
 * land swizzled exactly as one whole box would. */
template <int BOXES, int ROWS>
__device__ __forceinline__ void cuops_tma_load_mn_piece_multicast(uint32_t smem_dst,
                                                                  const void *tensor_map,
                                                                  uint32_t bar, int32_t mn0,
                                                                  int32_t k0, int piece,
                                                                  uint16_t cta_mask)
{
    static_assert(ROWS % 8 == 0 && 64 % ROWS == 0, "pieces of whole 8-row swizzle atoms");
#pragma unroll
    for (int j = 0; j < BOXES; j++)
        cuops_tma_load_2d_multicast(smem_dst + (uint32_t)j * 8192u + (uint32_t)(piece * ROWS * 128),
                                    tensor_map, bar, mn0 + 64 * j, k0 + piece * ROWS, cta_mask);
}

/* Fetch a tensor map's descriptor ahead of its first TMA (the kernel
 * parameter's generic address), so that the fetch overlaps the set-up. */
__device__ __forceinline__ void cuops_tma_prefetch_map(const void *tensor_map)
{
    asm volatile("prefetch.tensormap [%0];" ::"l"(tensor_map) : "memory");
}

/* Store a box from shared memory to global; rows/cols outside the tensor are
 * skipped by the hardware. Complete with commit + wait_read before the
 * shared buffer is reused. */
__device__ __forceinline__ void cuops_tma_store_2d(const void *tensor_map, uint32_t smem_src,
                                                   int32_t coord_inner, int32_t coord_outer)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(tensor_map), "r"(coord_inner), "r"(coord_outer), "r"(smem_src)
                 : "memory");
}

__device__ __forceinline__ void cuops_tma_store_commit(void)
{
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

__device__ __forceinline__ void cuops_tma_store_wait_read_all(void)
{
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

/* Wait until at most N committed bulk store groups of this thread still read
 * their shared source. */
template <int N> __device__ __forceinline__ void cuops_tma_store_wait_read(void)
{
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

__device__ __forceinline__ void cuops_tma_store_wait_all(void)
{
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

/* ---- wgmma ----------------------------------------------------------------
 * Shared-memory matrix descriptor (64 bits):
 *   bits  0-13  start address >> 4
 *   bits 16-29  leading-dimension byte offset >> 4 (unused by swizzled
 *               K-major layouts; conventionally 1)
 *   bits 32-45  stride-dimension byte offset >> 4: distance between
 *               consecutive 8-row core-matrix groups
 *   bits 49-51  base offset (0: the swizzle atom starts 1024-aligned)
 *   bits 62-63  swizzle: 1 = 128B, 2 = 64B, 3 = 32B, 0 = none
 * For a K-major tile whose rows are 64 16-bit elements (128 bytes) written by
 * TMA with 128B swizzle, an 8-row group is 1024 bytes, so SBO = 1024. The
 * swizzle XORs address bits 4-6 with bits 7-9 of the absolute shared address,
 * which is why the tile must start 1024-aligned and why stepping K by 16
 * elements inside the 128-byte row is just start address + 32 bytes. */
/* A 128B-swizzle descriptor: start address, leading-dimension byte offset
 * lbo_bytes, stride-dimension byte offset 1024 (one 8-row swizzle atom). */
__device__ __forceinline__ uint64_t cuops_wgmma_desc_sw128(uint32_t smem_addr, uint32_t lbo_bytes)
{
    uint64_t desc = 0;
    desc |= (uint64_t)((smem_addr & 0x3FFFFu) >> 4);
    desc |= (uint64_t)(lbo_bytes >> 4) << 16;
    desc |= (uint64_t)(1024u >> 4) << 32;
    desc |= (uint64_t)1 << 62;
    return desc;
}

__device__ __forceinline__ uint64_t cuops_wgmma_desc_k_sw128(uint32_t smem_addr)
{
    return cuops_wgmma_desc_sw128(smem_addr, 16u); /* LBO unused: encoded 1 */
}

/* The same for an MN-major operand (A M-major, B N-major: wgmma's transpose
 * immediate 1) held as TMA boxes of 64 K-rows x 64 M/N elements (128 bytes)
 * with 128B swizzle, box after box along M/N: a swizzle atom is 8 K-rows
 * (1024 bytes, the stride-dimension offset between 8-row K groups) and the
 * next 64 M/N elements lie one box (8 KB, the leading-dimension offset)
 * further on. */
__device__ __forceinline__ uint64_t cuops_wgmma_desc_mn_sw128(uint32_t smem_addr)
{
    return cuops_wgmma_desc_sw128(smem_addr, 8192u);
}

/* What one k16 step adds to a descriptor (its address field counts 16
 * bytes): 32 bytes along a K-major 128-byte row, 16 K-rows of 128 bytes in
 * the MN-major layout. */
template <bool MN> __host__ __device__ constexpr uint64_t cuops_wgmma_k16_step()
{
    return MN ? 2048u / 16u : 32u / 16u;
}

/* An MN-major operand held as one TMA box of 64 K-rows x COLS M/N elements
 * (rows of 2 COLS bytes, one after the other), swizzled as wide as its rows:
 * COLS = 64 is cuops_wgmma_desc_mn_sw128; 32 -> 64B swizzle, 16 -> 32B, with
 * an 8-row K group (the swizzle atom) every 16 COLS bytes (SBO) and no
 * second atom along M/N (LBO unused); 8 -> no swizzle, where the core matrix
 * is 8 K-rows of 16 bytes and the leading offset is the step between 8-row K
 * groups (128 bytes). */
template <int COLS> __device__ __forceinline__ uint64_t cuops_wgmma_desc_mn_box(uint32_t smem_addr)
{
    static_assert(COLS == 8 || COLS == 16 || COLS == 32 || COLS == 64, "COLS: 8, 16, 32 or 64");
    if constexpr (COLS == 64) {
        return cuops_wgmma_desc_mn_sw128(smem_addr);
    } else {
        constexpr uint32_t ROW = 2u * COLS; /* bytes */
        constexpr uint64_t SWIZZLE = COLS == 32 ? 2u : COLS == 16 ? 3u : 0u;
        uint64_t desc = (uint64_t)((smem_addr & 0x3FFFFu) >> 4);
        desc |= (uint64_t)((COLS == 8 ? 8u * ROW : 16u) >> 4) << 16;
        desc |= (uint64_t)((8u * ROW) >> 4) << 32;
        desc |= SWIZZLE << 62;
        return desc;
    }
}

/* What one k16 step adds to that descriptor: 16 K-rows of 2 COLS bytes. */
template <int COLS> __host__ __device__ constexpr uint64_t cuops_wgmma_k16_step_mn_box()
{
    return 16u * 2u * COLS / 16u;
}

/* Order register accesses before the wgmma that follows (needed before the
 * first wgmma of a batch and whenever the accumulators were touched by other
 * instructions). */
__device__ __forceinline__ void cuops_wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void cuops_wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/* Wait until at most N committed wgmma groups of this thread are pending. */
template <int N> __device__ __forceinline__ void cuops_wgmma_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/* Keep the compiler from moving accumulator reads/writes across an
 * in-flight wgmma: ties each register to an empty asm. */
__device__ __forceinline__ void cuops_reg_fence(float &r)
{
    asm volatile("" : "+f"(r)::"memory");
}

/* A use the compiler cannot see through: keeps a register value alive (its
 * register not reused) up to this point. A use, not a redefinition: ptxas
 * serialises the wgmma pipeline (C7513) when non-wgmma instructions define a
 * wgmma input register while its group may be in flight. */
__device__ __forceinline__ void cuops_keep_alive(uint32_t r)
{
    asm volatile("" ::"r"(r) : "memory");
}

/* The same for a whole set of wgmma A registers (four k16 steps). */
__device__ __forceinline__ void cuops_keep_alive_set(const uint32_t (&a)[4][4])
{
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int r = 0; r < 4; r++) cuops_keep_alive(a[j][r]);
}

/* ---- register reallocation ------------------------------------------------
 * The 384-thread CTA is launched at 168 registers/thread (65536 / 384, rounded
 * down to a multiple of 8); the producer warpgroup gives registers back and
 * the two consumer warpgroups take them: 128*40 + 256*232 = 64512 = 384*168. */
template <int REGS> __device__ __forceinline__ void cuops_setmaxnreg_dec(void)
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}

template <int REGS> __device__ __forceinline__ void cuops_setmaxnreg_inc(void)
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}

/* %0 .. %63 (%127) of the accumulator operands, and their constraints */
#define CUOPS_WGMMA_ACC64_OPERANDS \
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

#define CUOPS_WGMMA_ACC_OPERANDS \
        CUOPS_WGMMA_ACC64_OPERANDS ", " \
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

#define CUOPS_WGMMA_ACC64_OUTPUTS \
        "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), \
        "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), \
        "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), \
        "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31]), \
        "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]), "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), \
        "+f"(acc[40]), "+f"(acc[41]), "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]), \
        "+f"(acc[48]), "+f"(acc[49]), "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]), "+f"(acc[55]), \
        "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]), "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63])

#define CUOPS_WGMMA_ACC_OUTPUTS \
        CUOPS_WGMMA_ACC64_OUTPUTS, \
        "+f"(acc[64]), "+f"(acc[65]), "+f"(acc[66]), "+f"(acc[67]), "+f"(acc[68]), "+f"(acc[69]), "+f"(acc[70]), "+f"(acc[71]), \
        "+f"(acc[72]), "+f"(acc[73]), "+f"(acc[74]), "+f"(acc[75]), "+f"(acc[76]), "+f"(acc[77]), "+f"(acc[78]), "+f"(acc[79]), \
        "+f"(acc[80]), "+f"(acc[81]), "+f"(acc[82]), "+f"(acc[83]), "+f"(acc[84]), "+f"(acc[85]), "+f"(acc[86]), "+f"(acc[87]), \
        "+f"(acc[88]), "+f"(acc[89]), "+f"(acc[90]), "+f"(acc[91]), "+f"(acc[92]), "+f"(acc[93]), "+f"(acc[94]), "+f"(acc[95]), \
        "+f"(acc[96]), "+f"(acc[97]), "+f"(acc[98]), "+f"(acc[99]), "+f"(acc[100]), "+f"(acc[101]), "+f"(acc[102]), "+f"(acc[103]), \
        "+f"(acc[104]), "+f"(acc[105]), "+f"(acc[106]), "+f"(acc[107]), "+f"(acc[108]), "+f"(acc[109]), "+f"(acc[110]), "+f"(acc[111]), \
        "+f"(acc[112]), "+f"(acc[113]), "+f"(acc[114]), "+f"(acc[115]), "+f"(acc[116]), "+f"(acc[117]), "+f"(acc[118]), "+f"(acc[119]), \
        "+f"(acc[120]), "+f"(acc[121]), "+f"(acc[122]), "+f"(acc[123]), "+f"(acc[124]), "+f"(acc[125]), "+f"(acc[126]), "+f"(acc[127])

/* m64n256k16, fp32 accumulate, A and B from shared memory through
 * descriptors, K-major by default; TA = 1 reads A M-major and TB = 1 reads B
 * N-major (the transpose immediates; descriptors from
 * cuops_wgmma_desc_mn_sw128 for those). `accumulate` == 0
 * overwrites the accumulators (D = A*B), != 0 adds (D += A*B).
 * Accumulator layout per thread t of the warpgroup (warp w = t/32, lane l):
 *   acc[4j + 0..1] -> row 16w + l/4,     cols 8j + 2(l%4) + 0..1
 *   acc[4j + 2..3] -> row 16w + l/4 + 8, same cols            (j = 0..31) */
#define CUOPS_WGMMA_SS_M64N256K16(NAME, TYPE)                                                      \
    template <int TA = 0, int TB = 0>                                                           \
    __device__ __forceinline__ void NAME(float (&acc)[128], uint64_t desc_a, uint64_t desc_b,   \
                                         int accumulate)                                        \
    {                                                                                           \
        asm volatile(                                                                           \
            "{\n"                                                                               \
            ".reg .pred p;\n"                                                                   \
            "setp.ne.b32 p, %130, 0;\n"                                                         \
            "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " {"                    \
            CUOPS_WGMMA_ACC_OPERANDS                                                            \
            "}, %128, %129, p, 1, 1, %131, %132;\n"                                             \
            "}\n"                                                                               \
            : CUOPS_WGMMA_ACC_OUTPUTS                                                           \
            : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TA), "n"(TB)                       \
            : "memory");                                                                        \
    }
CUOPS_WGMMA_SS_M64N256K16(cuops_wgmma_m64n256k16_f16, "f16")
CUOPS_WGMMA_SS_M64N256K16(cuops_wgmma_m64n256k16_bf16, "bf16")
#undef CUOPS_WGMMA_SS_M64N256K16


/* ---- bulk copies and matrix stores ------------------------------------------ */

/* `bytes` (a multiple of 16, both addresses 16-byte aligned) from global to
 * this CTA's shared memory, completing as transaction bytes on `bar`. */
__device__ __forceinline__ void cuops_bulk_load(uint32_t smem_dst, const void *src, uint32_t bytes,
                                                uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem_dst), "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

/* Four 8x8 16-bit matrices from mma-fragment registers (thread 4r + c holds
 * row r, columns 2c, 2c+1 of each) to shared memory transposed: row i of the
 * stored matrix q is column i of the fragment matrix q, 16 bytes at the
 * address thread 8q + i gives. */
__device__ __forceinline__ void cuops_stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1,
                                                        uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                 ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

/* The same, not transposed: row i of matrix q is row i of the fragment. */
__device__ __forceinline__ void cuops_stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                                  uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                 ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

/* m64n256k16, fp32 accumulate, A from registers (the four mma.sync-style
 * fragment words of this thread: rows 16w + l/4 (+8), k 2(l%4) (+1) and
 * +8, for warp w of the warpgroup and lane l), B from shared memory through
 * a descriptor, K-major. The A registers are read asynchronously: they must
 * not change until a wgmma wait retires this instruction's group. */
#define CUOPS_WGMMA_RS_M64N256K16(NAME, TYPE)                                                      \
    __device__ __forceinline__ void NAME(float (&acc)[128], const uint32_t (&a)[4],             \
                                         uint64_t desc_b, int accumulate)                       \
    {                                                                                           \
        asm volatile(                                                                           \
            "{\n"                                                                               \
            ".reg .pred p;\n"                                                                   \
            "setp.ne.b32 p, %133, 0;\n"                                                         \
            "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " {"                    \
            CUOPS_WGMMA_ACC_OPERANDS                                                            \
            "}, {%128, %129, %130, %131}, %132, p, 1, 1, 0;\n"                                  \
            "}\n"                                                                               \
            : CUOPS_WGMMA_ACC_OUTPUTS                                                           \
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)          \
            : "memory");                                                                        \
    }

CUOPS_WGMMA_RS_M64N256K16(cuops_wgmma_m64n256k16_rs_f16, "f16")
CUOPS_WGMMA_RS_M64N256K16(cuops_wgmma_m64n256k16_rs_bf16, "bf16")
#undef CUOPS_WGMMA_RS_M64N256K16

/* m64nNk16 (N = 8, 16, 32, 64), fp32 accumulate, A from registers (as for
 * the m64n256k16 form above), B K-major from shared memory through a
 * descriptor; `accumulate` != 0 adds (D += A*B), 0 overwrites. Accumulator
 * layout per thread t (warp w = t/32, lane l): acc[4j + 0..1] -> row 16w +
 * l/4, cols 8j + 2(l%4) + 0..1; acc[4j + 2..3] -> row 16w + l/4 + 8
 * (j < N/8). The A registers must not change until a wgmma wait retires the
 * group. */
#define CUOPS_WGMMA_RS_M64N8K16(NAME, TYPE)                                                     \
    __device__ __forceinline__ void NAME(float (&acc)[4], const uint32_t (&a)[4],               \
                                         uint64_t desc_b, int accumulate)                       \
    {                                                                                           \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"                                \
                     "wgmma.mma_async.sync.aligned.m64n8k16.f32." TYPE "." TYPE " {"            \
                     "%0, %1, %2, %3"                                                           \
                     "}, {%4, %5, %6, %7}, %8, p, 1, 1, 0;\n}\n"                                \
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])                   \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate) \
                     : "memory");                                                               \
    }
CUOPS_WGMMA_RS_M64N8K16(cuops_wgmma_m64n8k16_rs_f16, "f16")
CUOPS_WGMMA_RS_M64N8K16(cuops_wgmma_m64n8k16_rs_bf16, "bf16")
#undef CUOPS_WGMMA_RS_M64N8K16

#define CUOPS_WGMMA_RS_M64N16K16(NAME, TYPE)                                                                                          \
    __device__ __forceinline__ void NAME(float (&acc)[8], const uint32_t (&a)[4],                                                     \
                                         uint64_t desc_b, int accumulate)                                                             \
    {                                                                                                                                 \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"                                                                     \
                     "wgmma.mma_async.sync.aligned.m64n16k16.f32." TYPE "." TYPE " {"                                                 \
                     "%0, %1, %2, %3, %4, %5, %6, %7"                                                                                 \
                     "}, {%8, %9, %10, %11}, %12, p, 1, 1, 0;\n}\n"                                                                   \
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]) \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)                                       \
                     : "memory");                                                                                                     \
    }
CUOPS_WGMMA_RS_M64N16K16(cuops_wgmma_m64n16k16_rs_f16, "f16")
CUOPS_WGMMA_RS_M64N16K16(cuops_wgmma_m64n16k16_rs_bf16, "bf16")
#undef CUOPS_WGMMA_RS_M64N16K16

#define CUOPS_WGMMA_RS_M64N32K16(NAME, TYPE)                                                                                                \
    __device__ __forceinline__ void NAME(float (&acc)[16], const uint32_t (&a)[4],                                                          \
                                         uint64_t desc_b, int accumulate)                                                                   \
    {                                                                                                                                       \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"                                                                           \
                     "wgmma.mma_async.sync.aligned.m64n32k16.f32." TYPE "." TYPE " {"                                                       \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"                                                 \
                     "}, {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"                                                                       \
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]),      \
                       "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]) \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)                                             \
                     : "memory");                                                                                                           \
    }
CUOPS_WGMMA_RS_M64N32K16(cuops_wgmma_m64n32k16_rs_f16, "f16")
CUOPS_WGMMA_RS_M64N32K16(cuops_wgmma_m64n32k16_rs_bf16, "bf16")
#undef CUOPS_WGMMA_RS_M64N32K16

#define CUOPS_WGMMA_RS_M64N64K16(NAME, TYPE)                                                                                                   \
    __device__ __forceinline__ void NAME(float (&acc)[32], const uint32_t (&a)[4],                                                             \
                                         uint64_t desc_b, int accumulate)                                                                      \
    {                                                                                                                                          \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                                                              \
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {"                                                          \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                                  \
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"                                          \
                     "}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"                                                                          \
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]),         \
                       "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]),   \
                       "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), \
                       "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31])  \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)                                                \
                     : "memory");                                                                                                              \
    }
CUOPS_WGMMA_RS_M64N64K16(cuops_wgmma_m64n64k16_rs_f16, "f16")
CUOPS_WGMMA_RS_M64N64K16(cuops_wgmma_m64n64k16_rs_bf16, "bf16")
#undef CUOPS_WGMMA_RS_M64N64K16

/* m64nNk16 (N = 8, 16, 32, 64, 128), fp32 accumulate, A and B from shared memory
 * through descriptors, K-major unless TA / TB = 1 (as for m64n256k16 above);
 * `accumulate` != 0 adds, 0 overwrites.
 * Accumulator layout as for the register-A forms above. */
#define CUOPS_WGMMA_SS_M64N8K16(NAME, TYPE)                                                                                   \
    template <int TA = 0, int TB = 0> __device__ __forceinline__ void NAME(float (&acc)[4], uint64_t desc_a, uint64_t desc_b, \
                                         int accumulate)                                                                      \
    {                                                                                                                         \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"                                                              \
                     "wgmma.mma_async.sync.aligned.m64n8k16.f32." TYPE "." TYPE " {"                                          \
                     "%0, %1, %2, %3"                                                                                         \
                     "}, %4, %5, p, 1, 1, %7, %8;\n}\n"                                                                       \
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])                                                 \
                     : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TA), "n"(TB)                                            \
                     : "memory");                                                                                             \
    }
CUOPS_WGMMA_SS_M64N8K16(cuops_wgmma_m64n8k16_ss_f16, "f16")
CUOPS_WGMMA_SS_M64N8K16(cuops_wgmma_m64n8k16_ss_bf16, "bf16")
#undef CUOPS_WGMMA_SS_M64N8K16

#define CUOPS_WGMMA_SS_M64N16K16(NAME, TYPE)                                                                                          \
    template <int TA = 0, int TB = 0> __device__ __forceinline__ void NAME(float (&acc)[8], uint64_t desc_a, uint64_t desc_b,         \
                                         int accumulate)                                                                              \
    {                                                                                                                                 \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"                                                                     \
                     "wgmma.mma_async.sync.aligned.m64n16k16.f32." TYPE "." TYPE " {"                                                 \
                     "%0, %1, %2, %3, %4, %5, %6, %7"                                                                                 \
                     "}, %8, %9, p, 1, 1, %11, %12;\n}\n"                                                                             \
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]) \
                     : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TA), "n"(TB)                                                    \
                     : "memory");                                                                                                     \
    }
CUOPS_WGMMA_SS_M64N16K16(cuops_wgmma_m64n16k16_ss_f16, "f16")
CUOPS_WGMMA_SS_M64N16K16(cuops_wgmma_m64n16k16_ss_bf16, "bf16")
#undef CUOPS_WGMMA_SS_M64N16K16

#define CUOPS_WGMMA_SS_M64N32K16(NAME, TYPE)                                                                                                \
    template <int TA = 0, int TB = 0> __device__ __forceinline__ void NAME(float (&acc)[16], uint64_t desc_a, uint64_t desc_b,              \
                                         int accumulate)                                                                                    \
    {                                                                                                                                       \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"                                                                           \
                     "wgmma.mma_async.sync.aligned.m64n32k16.f32." TYPE "." TYPE " {"                                                       \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"                                                 \
                     "}, %16, %17, p, 1, 1, %19, %20;\n}\n"                                                                                 \
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]),      \
                       "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]) \
                     : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TA), "n"(TB)                                                          \
                     : "memory");                                                                                                           \
    }
CUOPS_WGMMA_SS_M64N32K16(cuops_wgmma_m64n32k16_ss_f16, "f16")
CUOPS_WGMMA_SS_M64N32K16(cuops_wgmma_m64n32k16_ss_bf16, "bf16")
#undef CUOPS_WGMMA_SS_M64N32K16

#define CUOPS_WGMMA_SS_M64N64K16(NAME, TYPE)                                                                                                   \
    template <int TA = 0, int TB = 0> __device__ __forceinline__ void NAME(float (&acc)[32], uint64_t desc_a, uint64_t desc_b,                 \
                                         int accumulate)                                                                                       \
    {                                                                                                                                          \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                                              \
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {"                                                          \
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                                  \
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"                                          \
                     "}, %32, %33, p, 1, 1, %35, %36;\n}\n"                                                                                    \
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]),         \
                       "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]),   \
                       "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), \
                       "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31])  \
                     : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TA), "n"(TB)                                                             \
                     : "memory");                                                                                                              \
    }
CUOPS_WGMMA_SS_M64N64K16(cuops_wgmma_m64n64k16_ss_f16, "f16")
CUOPS_WGMMA_SS_M64N64K16(cuops_wgmma_m64n64k16_ss_bf16, "bf16")
#undef CUOPS_WGMMA_SS_M64N64K16

#define CUOPS_WGMMA_SS_M64N128K16(NAME, TYPE)                                                                                                  \
    template <int TA = 0, int TB = 0> __device__ __forceinline__ void NAME(float (&acc)[64], uint64_t desc_a, uint64_t desc_b,                 \
                                         int accumulate)                                                                                       \
    {                                                                                                                                          \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                                              \
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {"                                                         \
                     CUOPS_WGMMA_ACC64_OPERANDS                                                                                                \
                     "}, %64, %65, p, 1, 1, %67, %68;\n}\n"                                                                                    \
                     : CUOPS_WGMMA_ACC64_OUTPUTS                                                                                               \
                     : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TA), "n"(TB)                                                             \
                     : "memory");                                                                                                              \
    }
CUOPS_WGMMA_SS_M64N128K16(cuops_wgmma_m64n128k16_ss_f16, "f16")
CUOPS_WGMMA_SS_M64N128K16(cuops_wgmma_m64n128k16_ss_bf16, "bf16")
#undef CUOPS_WGMMA_SS_M64N128K16

/* wgmma.m64nNk16, D += A * B, with N in {8, 16, 32, 64, 256} (also 128
 * with A from shared memory) and the input type (F16: f16, else bf16)
 * chosen at compile time: A from shared memory (a descriptor) or from
 * registers (the four registers of one k16 step). */
template <int N, bool F16, int TA = 0, int TB = 0>
__device__ __forceinline__ void cuops_wgmma_m64nk16(float (&acc)[N / 2], uint64_t desc_a,
                                                    uint64_t desc_b, int accumulate)
{
    static_assert(N == 8 || N == 16 || N == 32 || N == 64 || N == 128 || N == 256,
                  "N is 8, 16, 32, 64, 128 or 256");
    if constexpr (N == 8) {
        if constexpr (F16) cuops_wgmma_m64n8k16_ss_f16<TA, TB>(acc, desc_a, desc_b, accumulate);
        else cuops_wgmma_m64n8k16_ss_bf16<TA, TB>(acc, desc_a, desc_b, accumulate);
    } else if constexpr (N == 16) {
        if constexpr (F16) cuops_wgmma_m64n16k16_ss_f16<TA, TB>(acc, desc_a, desc_b, accumulate);
        else cuops_wgmma_m64n16k16_ss_bf16<TA, TB>(acc, desc_a, desc_b, accumulate);
    } else if constexpr (N == 32) {
        if constexpr (F16) cuops_wgmma_m64n32k16_ss_f16<TA, TB>(acc, desc_a, desc_b, accumulate);
        else cuops_wgmma_m64n32k16_ss_bf16<TA, TB>(acc, desc_a, desc_b, accumulate);
    } else if constexpr (N == 64) {
        if constexpr (F16) cuops_wgmma_m64n64k16_ss_f16<TA, TB>(acc, desc_a, desc_b, accumulate);
        else cuops_wgmma_m64n64k16_ss_bf16<TA, TB>(acc, desc_a, desc_b, accumulate);
    } else if constexpr (N == 128) {
        if constexpr (F16) cuops_wgmma_m64n128k16_ss_f16<TA, TB>(acc, desc_a, desc_b, accumulate);
        else cuops_wgmma_m64n128k16_ss_bf16<TA, TB>(acc, desc_a, desc_b, accumulate);
    } else {
        if constexpr (F16) cuops_wgmma_m64n256k16_f16<TA, TB>(acc, desc_a, desc_b, accumulate);
        else cuops_wgmma_m64n256k16_bf16<TA, TB>(acc, desc_a, desc_b, accumulate);
    }
}
template <int N, bool F16>
__device__ __forceinline__ void cuops_wgmma_m64nk16(float (&acc)[N / 2], const uint32_t (&a)[4],
                                                    uint64_t desc_b, int accumulate)
{
    static_assert(N == 8 || N == 16 || N == 32 || N == 64 || N == 256, "N is 8, 16, 32, 64 or 256");
    if constexpr (N == 8) {
        if constexpr (F16) cuops_wgmma_m64n8k16_rs_f16(acc, a, desc_b, accumulate);
        else cuops_wgmma_m64n8k16_rs_bf16(acc, a, desc_b, accumulate);
    } else if constexpr (N == 16) {
        if constexpr (F16) cuops_wgmma_m64n16k16_rs_f16(acc, a, desc_b, accumulate);
        else cuops_wgmma_m64n16k16_rs_bf16(acc, a, desc_b, accumulate);
    } else if constexpr (N == 32) {
        if constexpr (F16) cuops_wgmma_m64n32k16_rs_f16(acc, a, desc_b, accumulate);
        else cuops_wgmma_m64n32k16_rs_bf16(acc, a, desc_b, accumulate);
    } else if constexpr (N == 64) {
        if constexpr (F16) cuops_wgmma_m64n64k16_rs_f16(acc, a, desc_b, accumulate);
        else cuops_wgmma_m64n64k16_rs_bf16(acc, a, desc_b, accumulate);
    } else {
        if constexpr (F16) cuops_wgmma_m64n256k16_rs_f16(acc, a, desc_b, accumulate);
        else cuops_wgmma_m64n256k16_rs_bf16(acc, a, desc_b, accumulate);
    }
}

#endif /* CUOPS_SM90A_DEVICE */

#endif /* CUOPS_PTX_SM90_CUH */
