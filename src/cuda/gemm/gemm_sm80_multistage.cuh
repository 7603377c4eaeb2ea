/*
 * gemm_sm80_multistage.cuh - the classic Ampere multistage mma.sync GEMM as a
 * template, instantiated by gemm_sm80_multistage.cu (the tuned configuration,
 * all four transposes) and gemm_sm80_ablation.cu (the study variants).
 *
 * Shape of the kernel (seed 000's pipeline in its NVIDIA form):
 *  - STAGES buffers of one BMxBK A tile + one BNxBK B tile in shared memory,
 *    filled by cp.async (16 B, zero-filled past M, N, K); tile kt+STAGES-1 is
 *    in flight while tile kt is consumed; one __syncthreads per k-tile.
 *  - each warp owns a WTMxWTN accumulator tile = MI x NJ mma m16n8k16 tiles:
 *    MI*NJ independent accumulator chains per k-step (32 for a 64x64 warp
 *    tile), which is what NVIDIA's mma.sync needs to reach its throughput
 *    (the anchors: 1 chain 292, 8 chains 640 TFLOP/s on the H200).
 *  - register double buffering: fragments of k-step ks+1 are read with
 *    ldmatrix while the MMAs of k-step ks issue;
 *  - hand-ordered main loop: each k-step issues its share of the next tile's
 *    cp.async, then the next fragments' ldmatrix, then its MMAs, so LDGSTS,
 *    LDSM and HMMA interleave in the instruction stream as in the seed.
 */
#ifndef CUOPS_GEMM_SM80_MULTISTAGE_CUH
#define CUOPS_GEMM_SM80_MULTISTAGE_CUH

#include "cuda/gemm/gemm_sm80_common.cuh"

template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool PAD, bool A_KMAJ, bool B_KMAJ>
struct sm80_ms_config {
    static constexpr int THREADS = WM * WN * 32;
    static constexpr int WTM = BM / WM, WTN = BN / WN;
    static constexpr int MI = WTM / 16, NJ = WTN / 8, KS = BK / 16;
    /* A stored [m][k] when K-major, [k][m] otherwise; likewise B. */
    typedef sm80_tile_layout<A_KMAJ ? BM : BK, A_KMAJ ? BK : BM, PAD> A_LAYOUT;
    typedef sm80_tile_layout<B_KMAJ ? BN : BK, B_KMAJ ? BK : BN, PAD> B_LAYOUT;
    static constexpr int STAGE_BYTES = A_LAYOUT::BYTES + B_LAYOUT::BYTES;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES;
    static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile of m16 x n16 blocks");
    static_assert(KS >= 2, "BK >= 32: the fragment double buffer spans two k-steps");
    static_assert(STAGES >= 2, "at least double buffering");
};

/* Copy part PART of KS of k-tile `kt` of A and B into one stage. */
template <typename CFG, int PART, typename T>
static __device__ __forceinline__ void sm80_ms_load_stage(const sm80_gemm_params &p,
                                                          uint32_t stage, int kt, int64_t m0,
                                                          int64_t n0, int tid, bool a_kmaj,
                                                          bool b_kmaj)
{
    constexpr int BK = CFG::KS * 16;
    const int64_t k0 = (int64_t)kt * BK;
    const T *a = (const T *)p.a;
    const T *b = (const T *)p.b;
    if (a_kmaj)
        sm80_load_tile<typename CFG::A_LAYOUT, CFG::THREADS, PART, CFG::KS>(stage, a, p.lda, m0, p.m, k0, p.k, tid);
    else
        sm80_load_tile<typename CFG::A_LAYOUT, CFG::THREADS, PART, CFG::KS>(stage, a, p.lda, k0, p.k, m0, p.m, tid);
    const uint32_t bstage = stage + CFG::A_LAYOUT::BYTES;
    if (b_kmaj)
        sm80_load_tile<typename CFG::B_LAYOUT, CFG::THREADS, PART, CFG::KS>(bstage, b, p.ldb, n0, p.n, k0, p.k, tid);
    else
        sm80_load_tile<typename CFG::B_LAYOUT, CFG::THREADS, PART, CFG::KS>(bstage, b, p.ldb, k0, p.k, n0, p.n, tid);
}

template <typename CFG, typename T>
static __device__ __forceinline__ void sm80_ms_load_stage_all(const sm80_gemm_params &p,
                                                              uint32_t stage, int kt, int64_t m0,
                                                              int64_t n0, int tid, bool a_kmaj,
                                                              bool b_kmaj)
{
    /* All KS parts of the tile (the prologue has nothing to overlap with). */
#pragma unroll
    for (int part = 0; part < CFG::KS; part++) {
        if (part == 0) sm80_ms_load_stage<CFG, 0, T>(p, stage, kt, m0, n0, tid, a_kmaj, b_kmaj);
        if (part == 1) sm80_ms_load_stage<CFG, 1, T>(p, stage, kt, m0, n0, tid, a_kmaj, b_kmaj);
        if (part == 2) sm80_ms_load_stage<CFG, 2, T>(p, stage, kt, m0, n0, tid, a_kmaj, b_kmaj);
        if (part == 3) sm80_ms_load_stage<CFG, 3, T>(p, stage, kt, m0, n0, tid, a_kmaj, b_kmaj);
    }
    static_assert(CFG::KS <= 4, "BK <= 64");
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool PAD, bool A_KMAJ, bool B_KMAJ,
          typename T>
__global__ void __launch_bounds__(WM *WN * 32, 1)
    sm80_gemm_multistage_kernel(const sm80_gemm_params p)
{
    typedef sm80_ms_config<BM, BN, BK, WM, WN, STAGES, PAD, A_KMAJ, B_KMAJ> CFG;
    constexpr int MI = CFG::MI, NJ = CFG::NJ, KS = CFG::KS;
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t smem_base = cuops_smem_addr(smem);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp / WN, warp_n = warp % WN;
    int tile_m, tile_n;
    sm80_tile_coords(p, blockIdx.x, &tile_m, &tile_n);
    const int64_t m0 = (int64_t)tile_m * BM, n0 = (int64_t)tile_n * BN;
    const int KT = p.k_tiles;
    const int k_start = (p.stagger && KT > 0) ? (int)(blockIdx.x % (unsigned)KT) : 0;

    float acc[MI][NJ][4];
    sm80_zero_acc(acc);

    /* Prologue: tiles 0..STAGES-2 in flight, one commit group each (empty
     * groups past K keep the count uniform). */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT)
            sm80_ms_load_stage_all<CFG, T>(p, smem_base + s * CFG::STAGE_BYTES,
                                           sm80_k_tile(s, k_start, KT), m0, n0, tid, A_KMAJ, B_KMAJ);
        cuops_cp_async_commit();
    }
    cuops_cp_async_wait<STAGES - 2>();
    __syncthreads();

    uint32_t af[2][MI][4];
    uint32_t bf[2][NJ][2];
    int read_stage = 0, write_stage = STAGES - 1;
    if (KT > 0) {
        const uint32_t st = smem_base;
        sm80_load_a_frags<typename CFG::A_LAYOUT, A_KMAJ, MI>(af[0], st, warp_m * CFG::WTM, 0, lane);
        sm80_load_b_frags<typename CFG::B_LAYOUT, B_KMAJ, NJ>(bf[0], st + CFG::A_LAYOUT::BYTES,
                                                               warp_n * CFG::WTN, 0, lane);
    }

    for (int kt = 0; kt < KT; kt++) {
        /* Tile kt+STAGES-1 goes into the stage tile kt-1 used: every warp
         * left it before the barrier that ended k-tile kt-1. */
        const int fetch = kt + STAGES - 1;
        const bool do_fetch = fetch < KT;
        const int fetch_kt = do_fetch ? sm80_k_tile(fetch, k_start, KT) : 0;
        const uint32_t wst = smem_base + write_stage * CFG::STAGE_BYTES;
#pragma unroll
        for (int ks = 0; ks < KS; ks++) {
            /* 1. this k-step's share of the next tile's global loads */
            if (do_fetch) {
                if (ks == 0) sm80_ms_load_stage<CFG, 0, T>(p, wst, fetch_kt, m0, n0, tid, A_KMAJ, B_KMAJ);
                if (ks == 1) sm80_ms_load_stage<CFG, 1, T>(p, wst, fetch_kt, m0, n0, tid, A_KMAJ, B_KMAJ);
                if (ks == 2) sm80_ms_load_stage<CFG, 2, T>(p, wst, fetch_kt, m0, n0, tid, A_KMAJ, B_KMAJ);
                if (ks == 3) sm80_ms_load_stage<CFG, 3, T>(p, wst, fetch_kt, m0, n0, tid, A_KMAJ, B_KMAJ);
            }
            if (ks == KS - 1) {
                /* Groups committed: STAGES-1 + kt+1; allowing STAGES-2 pending
                 * guarantees tiles 0..kt+1 landed (ours); the barrier makes
                 * the other threads' copies visible and frees stage kt. */
                cuops_cp_async_commit();
                cuops_cp_async_wait<STAGES - 2>();
                __syncthreads();
                read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
                write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
            }
            /* 2. fragments of the next k-step (of this tile or the next) */
            const int nks = (ks + 1) % KS;
            const int nbuf = (ks + 1) & 1;
            const uint32_t rst = smem_base + read_stage * CFG::STAGE_BYTES;
            sm80_load_a_frags<typename CFG::A_LAYOUT, A_KMAJ, MI>(af[nbuf], rst, warp_m * CFG::WTM, nks, lane);
            sm80_load_b_frags<typename CFG::B_LAYOUT, B_KMAJ, NJ>(bf[nbuf], rst + CFG::A_LAYOUT::BYTES,
                                                                   warp_n * CFG::WTN, nks, lane);
            /* 3. MMAs of this k-step: MI*NJ independent accumulators, walked
             * in a serpentine over j so consecutive MMAs share an operand. */
            sm80_warp_tile_mma<T>(acc, af[ks & 1], bf[ks & 1]);
        }
    }
    cuops_cp_async_wait<0>();

    sm80_epilogue<MI, NJ>(p, acc, m0 + warp_m * CFG::WTM, n0 + warp_n * CFG::WTN, lane);
}

/* Host: launch one instantiation (T chosen from ab_type). */
template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool PAD, bool A_KMAJ, bool B_KMAJ>
static cuops_status_t sm80_run_multistage(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                          unsigned flags, const char *name)
{
    typedef sm80_ms_config<BM, BN, BK, WM, WN, STAGES, PAD, A_KMAJ, B_KMAJ> CFG;
    const sm80_gemm_params p = sm80_make_params(d, BM, BN, BK, flags);
    const void *kernel =
        d->ab_type == CUOPS_DTYPE_BF16
            ? (const void *)sm80_gemm_multistage_kernel<BM, BN, BK, WM, WN, STAGES, PAD, A_KMAJ, B_KMAJ, __nv_bfloat16>
            : (const void *)sm80_gemm_multistage_kernel<BM, BN, BK, WM, WN, STAGES, PAD, A_KMAJ, B_KMAJ, __half>;
    return sm80_launch(h, kernel, &p, CFG::THREADS, CFG::SMEM_BYTES, name);
}

/* Shared memory a configuration needs (for supports()). */
template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool PAD, bool A_KMAJ, bool B_KMAJ>
static size_t sm80_multistage_smem(void)
{
    return (size_t)sm80_ms_config<BM, BN, BK, WM, WN, STAGES, PAD, A_KMAJ, B_KMAJ>::SMEM_BYTES;
}

#endif /* CUOPS_GEMM_SM80_MULTISTAGE_CUH */
