/*
 * ptx_sm80.cuh - inline-PTX wrappers for the Ampere-style tensor-core path
 * (sm_80 and later, also valid on sm_90): cp.async 16-byte copies with
 * zero-fill, their commit/wait groups, named barriers, ldmatrix x4 (plain and
 * .trans) and mma.sync m16n8k16 with fp32 accumulation for f16 and bf16.
 *
 * Why wrappers rather than intrinsics: cp.async's src-size operand (the
 * zero-fill that lets one code path serve ragged M/N/K edges) and ldmatrix
 * are not exposed as plain CUDA C, and naming each instruction once keeps
 * the kernels readable and their SASS easy to map back (LDGSTS, LDSM, HMMA).
 */
#ifndef CUOPS_PTX_SM80_CUH
#define CUOPS_PTX_SM80_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

/* Shared-window address of a generic pointer into shared memory. */
static __device__ __forceinline__ uint32_t cuops_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/*
 * 16-byte global->shared copy that bypasses L1 (.cg: the tile is reused
 * from shared memory, not L1). Only `src_bytes` (0..16) bytes are read; the
 * rest of the 16 destination bytes are zero-filled. src_bytes == 0 reads
 * nothing, so ragged edges and K tails need no separate code path: the
 * zeros contribute nothing to the MMA sums. Both addresses must be 16-byte
 * aligned.
 */
static __device__ __forceinline__ void cuops_cp_async_16_zfill(uint32_t smem_dst,
                                                               const void *gmem_src,
                                                               int src_bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_dst),
                 "l"(gmem_src), "r"(src_bytes)
                 : "memory");
#endif
}

/*
 * The same copy issued only when `issue` is non-zero, as a predicated
 * instruction rather than a branch: a main loop whose last iterations have
 * nothing left to fetch stays one basic block, so ptxas can interleave its
 * LDGSTS with the HMMAs around them (a branch ends its scheduling region).
 */
static __device__ __forceinline__ void cuops_cp_async_16_zfill_if(uint32_t smem_dst,
                                                                  const void *gmem_src,
                                                                  int src_bytes, int issue)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "{\n"
        " .reg .pred p;\n"
        " setp.ne.b32 p, %3, 0;\n"
        " @p cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
        "}\n" ::"r"(smem_dst),
        "l"(gmem_src), "r"(src_bytes), "r"(issue)
        : "memory");
#endif
}

/* Close the group of cp.async issued since the previous commit (an empty
 * group is legal and completes at once; the pipelines rely on that to keep
 * their group counting uniform at the end of K). */
static __device__ __forceinline__ void cuops_cp_async_commit(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/* Named barrier `id` (1..15; 0 is __syncthreads) over `threads` threads (a
 * multiple of 32). */
static __device__ __forceinline__ void cuops_named_bar_sync(uint32_t id, uint32_t threads)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/* The same barrier, returning whether any of the `threads` threads passed a
 * true `pred` (bar.red.or): a barrier and a broadcast in one instruction. */
static __device__ __forceinline__ bool cuops_named_bar_or(uint32_t id, uint32_t threads, bool pred)
{
    uint32_t any;
    asm volatile("{\n\t.reg .pred p, q;\n\t"
                 "setp.ne.u32 p, %1, 0;\n\t"
                 "bar.red.or.pred q, %2, %3, p;\n\t"
                 "selp.u32 %0, 1, 0, q;\n\t}"
                 : "=r"(any)
                 : "r"((uint32_t)pred), "r"(id), "r"(threads)
                 : "memory");
    return any != 0;
}

/* Wait until at most `Pending` committed groups of this thread are still in
 * flight. Other threads' copies become visible only after a barrier. */
template <int Pending>
static __device__ __forceinline__ void cuops_cp_async_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
}

/* Wait for every cp.async this thread issued, committed or not (a thread
 * that leaves must not leave copies in flight). */
static __device__ __forceinline__ void cuops_cp_async_wait_all(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

/* ---- mbarriers as sm_80 has them -------------------------------------------
 * The forms below are valid from sm_80 on (no transaction counts, no
 * clusters), for pipelines whose stages are filled by cp.async: a producer
 * thread's cp.async.mbarrier.arrive.noinc counts as one of the phase's
 * expected arrivals and fires once all of that thread's earlier cp.async
 * have landed, so a waiter that sees the phase complete sees the bytes.
 * Waiting on parity P returns once the phase of parity P has completed; a
 * fresh barrier lets a wait on parity 1 through at once. */
static __device__ __forceinline__ void cuops_mbar80_init(uint32_t bar, uint32_t arrivals)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
#endif
}

/* One arrival (release: this thread's earlier shared-memory reads are done
 * before a waiter on the phase can overwrite what they read). */
static __device__ __forceinline__ void cuops_mbar80_arrive(uint32_t bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "{\n"
        " .reg .b64 state;\n"
        " mbarrier.arrive.shared.b64 state, [%0];\n"
        "}\n" ::"r"(bar)
        : "memory");
#endif
}

/* The arrival fired by the completion of this thread's earlier cp.async. */
static __device__ __forceinline__ void cuops_cp_async_mbar80_arrive(uint32_t bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(bar) : "memory");
#endif
}

/* Spin until the phase of parity `parity` has completed (try_wait, which
 * suspends for a while before failing, where the GPU has it). */
static __device__ __forceinline__ void cuops_mbar80_wait(uint32_t bar, uint32_t parity)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint32_t done;
    do {
        asm volatile(
            "{\n"
            " .reg .pred p;\n"
#if __CUDA_ARCH__ >= 900
            " mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n"
#else
            " mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
#endif
            " selp.u32 %0, 1, 0, p;\n"
            "}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
#endif
}

/* Next slot of a STAGES-slot mbarrier ring (the sm_80 and the sm_90
 * pipelines alike): the parity a waiter expects
 * flips each time the ring wraps. */
template <int STAGES>
static __device__ __forceinline__ void cuops_ring_advance(int &stage, uint32_t &phase)
{
    if (++stage == STAGES) {
        stage = 0;
        phase ^= 1u;
    }
}

/* The same for a ring whose slot count is known only at run time (sized by
 * the shared memory a call leaves for it). */
static __device__ __forceinline__ void cuops_ring_advance(int &stage, uint32_t &phase, int stages)
{
    if (++stage == stages) {
        stage = 0;
        phase ^= 1u;
    }
}

/* Four 8x8 b16 matrices (volatile + memory clobber: the read must stay
 * between the barriers that make the tile valid and free it); lanes 8j..8j+7 give the row addresses of matrix j;
 * each lane receives row lane/4, elements 2*(lane%4) and +1 of each. */
static __device__ __forceinline__ void cuops_ldmatrix_x4(uint32_t (&r)[4], uint32_t smem_addr)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr)
                 : "memory");
#endif
}

/* As above but each matrix is delivered transposed: lane receives stored
 * rows 2*(lane%4) and +1 of column lane/4. Used for operands whose stored
 * contiguous dimension is M or N instead of K. */
static __device__ __forceinline__ void cuops_ldmatrix_x4_trans(uint32_t (&r)[4],
                                                               uint32_t smem_addr)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr)
                 : "memory");
#endif
}

/*
 * d += a * b for one m16n8k16 tile. Not volatile: a pure register operation,
 * so the compiler may interleave it freely with the (volatile, ordered)
 * ldmatrix and cp.async around it., fp32 accumulators.
 * a: 16x16 row-major fragment {(g,2t), (g+8,2t), (g,2t+8), (g+8,2t+8)} pairs,
 * b: 16x8 column fragment {(k=2t, n=g), (k=2t+8, n=g)} pairs,
 * d: {(g,2t), (g,2t+1), (g+8,2t), (g+8,2t+1)} with g = lane/4, t = lane%4.
 */
template <typename T> struct cuops_mma_m16n8k16;

template <> struct cuops_mma_m16n8k16<__half> {
    static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4],
                                               const uint32_t (&b)[2])
    {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
    }
};

template <> struct cuops_mma_m16n8k16<__nv_bfloat16> {
    static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4],
                                               const uint32_t (&b)[2])
    {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
    }
};

#endif /* CUOPS_PTX_SM80_CUH */
