/*
 * gemm_sm80_lean.cu - the multistage mma.sync GEMM with a lean main loop:
 * same tiles, stages, swizzle, pipeline and barriers as
 * gemm_sm80_multistage.cuh, but the non-HMMA instructions of the loop cut to
 * the minimum and the loop body kept free of branches.
 *
 * Why: at 8192^3 every classic variant sits at ~50 % of the mma.sync
 * ceiling. The PTX of the classic loop (128x256x32, NT, one k-tile per warp)
 * holds 64 mma, 16 ldmatrix and 6 cp.async but ~150 other instructions:
 * each cp.async recomputes its 64-bit row address, zero-fill sizes and
 * fallback pointer from scratch (~20 instructions, plus two branches), each
 * ldmatrix recomputes its swizzled lane address (~4). With 8 warps per SM
 * (2 per scheduler, 234 registers each) and all warps kept in step by the
 * per-k-tile barrier, the two warps of a scheduler spend those cycles at the
 * same time, and the tensor pipe (one HMMA.16816 per ~6 cycles per
 * scheduler at the probe's ceiling) starves. The branches also cut the body
 * into small blocks that ptxas schedules separately, so cp.async cannot be
 * slid between HMMAs.
 *
 * What changes against the classic kernel:
 *  - copy plan: each thread's global source address of every copy unit is
 *    computed once per CTA (tile 0, coordinates clamped into the matrix);
 *    a k-tile adds one uniform offset (BK elements for K-major operands,
 *    BK*ld for MN-major ones). For K-major operands rows past M/N are read
 *    from the last valid row instead of zero-filled: they only feed
 *    accumulator rows/columns the epilogue never stores, so the copy needs
 *    no size operand at all (16 bytes, always). MN-major operands keep a
 *    per-thread zero-fill size for the ragged M/N edge (the chunk may end
 *    past the matrix); it does not change along K.
 *  - the ragged K tail is visited first: the k-tile order is [tail], then
 *    the full tiles (rotated by StaggerU when asked), so the tail always
 *    falls into the prologue (general loader, zero-fill) and every copy in
 *    the main loop reads a full k-tile;
 *  - the copies of the last STAGES-1 iterations (nothing left to fetch) are
 *    predicated off instead of branched around: one basic block per k-step;
 *  - ldmatrix addresses: one per-lane offset per operand, computed once; a
 *    k-step is an XOR (the swizzle permutes 16-byte chunks inside a row, and
 *    chunk 2ks+h ^ f(row) = (h ^ f(row)) ^ 2ks), m16/n16 blocks are
 *    immediate offsets (MN-major operands keep the general loaders).
 *
 * Variants (gemm_sm80_table.cu), first in the family's preference:
 *   sm80_lean_128x256x64_s3   BK = 64, 3 stages (144 KB: sm_80, sm_90), NT
 *   sm80_lean_128x256x32_s4   BK = 32, 4 stages (96 KB: every sm_8x), all
 *                             four transposes
 * Both: 8 warps of 64x64, 128 fp32 accumulators per thread.
 */
#include "cuda/gemm/gemm_sm80_multistage.cuh"

/* ------------------------------------------------------------------------ */
/* Copy plan                                                                */
/* ------------------------------------------------------------------------ */

/*
 * One thread's share of one operand tile, with everything that does not
 * depend on the k-tile held in registers. A copy unit is U 16-byte chunks of
 * one smem row (units tid, tid+NT, ...):
 *  - U = 1 (line-complete, the default): lanes 8i..8i+7 of a warp copy the 8
 *    chunks of one 128-byte line, so one cp.async instruction fills whole
 *    lines (4 smem wavefronts for 512 bytes);
 *  - U = 2 (half-line, the first lean build): a thread copies two adjacent
 *    chunks with two instructions, so each instruction covers half of 8
 *    lines; ncu on the H200 (run P85) counted 8 smem wavefronts per such
 *    cp.async where 4 are ideal (22 % of the kernel's shared-memory
 *    wavefronts wasted). Kept as the ablation sm80_lean_128x256x64_s3_halfline.
 */
template <typename LAYOUT, int NT, bool KMAJ, int U>
struct sm80_lean_copy {
    static_assert(U == 1 || U == 2, "one or two chunks per unit");
    static constexpr int PPR = LAYOUT::CPR / U;             /* units per smem row */
    static constexpr int UNITS = LAYOUT::ROWS * PPR;
    static constexpr int PER_THREAD = UNITS / NT;
    static constexpr int ROW_STEP = NT / PPR;               /* smem rows between a thread's units */
    static constexpr int ROW_BYTES = LAYOUT::STRIDE * 2;
    static_assert(UNITS % NT == 0 && NT % PPR == 0, "units divide among the threads");
    /* a unit's smem row is row_t + j*ROW_STEP; with ROW_STEP a multiple of 8
     * its swizzle equals row_t's, so one offset serves every unit */
    static_assert(ROW_STEP % 8 == 0, "unit rows 8 apart");
    const char *src[PER_THREAD]; /* unit j's first chunk in k-tile 0 */
    uint32_t dst0, dst1;         /* smem offsets of the thread's chunks (dst1: U = 2), unit 0 */
    int bytes0, bytes1;          /* MN-major: zero-fill sizes of the chunks (M/N edge) */
    int second;                  /* U = 2, MN-major: byte distance to the second chunk's source */
};

/*
 * K-major (KMAJ): smem rows are M (or N) rows o0 + r, a row holds BK
 * consecutive k. MN-major: smem rows are k rows, a row holds BM (or BN)
 * consecutive m (or n) starting at o0. lim is M (or N), >= 1.
 */
template <typename LAYOUT, int NT, bool KMAJ, int U, typename T>
static __device__ __forceinline__ void sm80_lean_copy_init(sm80_lean_copy<LAYOUT, NT, KMAJ, U> &c,
                                                           const T *base, int64_t ld, int64_t o0,
                                                           int64_t lim, int tid)
{
    typedef sm80_lean_copy<LAYOUT, NT, KMAJ, U> C;
    const int row_t = tid / C::PPR;
    const int chunk = (tid % C::PPR) * U;
    c.dst0 = LAYOUT::offset(row_t, chunk);
    c.dst1 = U == 2 ? LAYOUT::offset(row_t, chunk + 1) : c.dst0;
    if (KMAJ) {
        /* past M/N: read the last valid row (see the header) */
#pragma unroll
        for (int j = 0; j < C::PER_THREAD; j++) {
            int64_t o = o0 + row_t + j * C::ROW_STEP;
            if (o > lim - 1) o = lim - 1;
            c.src[j] = (const char *)(base + o * ld + chunk * 8);
        }
        c.bytes0 = c.bytes1 = 16;
        c.second = 16;
    } else {
        const int64_t inner = o0 + chunk * 8;
        const int64_t left = lim - inner;
        c.bytes0 = left >= 8 ? 16 : (left > 0 ? (int)left * 2 : 0);
        c.bytes1 = left >= 16 ? 16 : (left > 8 ? (int)(left - 8) * 2 : 0);
        /* chunks wholly past the edge read nothing; point them at the row start */
        const int64_t inner_c = c.bytes0 ? inner : 0;
#pragma unroll
        for (int j = 0; j < C::PER_THREAD; j++)
            c.src[j] = (const char *)(base + (int64_t)(row_t + j * C::ROW_STEP) * ld + inner_c);
        c.second = c.bytes1 ? 16 : 0;
    }
}

/* Part PART of NPARTS of a full k-tile whose sources lie koff bytes past
 * k-tile 0; nothing is issued when `issue` is 0. */
template <int PART, int NPARTS, typename LAYOUT, int NT, bool KMAJ, int U>
static __device__ __forceinline__ void sm80_lean_copy_part(const sm80_lean_copy<LAYOUT, NT, KMAJ, U> &c,
                                                           uint32_t tile, int64_t koff, int issue)
{
    typedef sm80_lean_copy<LAYOUT, NT, KMAJ, U> C;
#pragma unroll
    for (int j = 0; j < C::PER_THREAD; j++) {
        if (j % NPARTS != PART) continue;
        const char *s = c.src[j] + koff;
        const uint32_t row_off = (uint32_t)(j * C::ROW_STEP * C::ROW_BYTES);
        cuops_cp_async_16_zfill_if(tile + row_off + c.dst0, s, KMAJ ? 16 : c.bytes0, issue);
        if (U == 2)
            cuops_cp_async_16_zfill_if(tile + row_off + c.dst1, s + (KMAJ ? 16 : c.second),
                                       KMAJ ? 16 : c.bytes1, issue);
    }
}

/* ------------------------------------------------------------------------ */
/* Kernel                                                                   */
/* ------------------------------------------------------------------------ */

/* k-tile visited at step t: the ragged tail (index full_tiles) first when
 * there is one, then the full tiles from `start` around. */
static __device__ __forceinline__ int sm80_lean_k_tile(int t, int has_tail, int full_tiles,
                                                       int start)
{
    const int u = t - has_tail;
    if (u < 0) return full_tiles;
    const int kt = u + start;
    return kt >= full_tiles ? kt - full_tiles : kt;
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool A_KMAJ, bool B_KMAJ, int U,
          typename T>
__global__ void __launch_bounds__(WM *WN * 32, 1) sm80_gemm_lean_kernel(const sm80_gemm_params p)
{
    typedef sm80_ms_config<BM, BN, BK, WM, WN, STAGES, false, A_KMAJ, B_KMAJ> CFG;
    typedef typename CFG::A_LAYOUT LA;
    typedef typename CFG::B_LAYOUT LB;
    constexpr int MI = CFG::MI, NJ = CFG::NJ, KS = CFG::KS, NT = CFG::THREADS;
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t smem_base = cuops_smem_addr(smem);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp / WN, warp_n = warp % WN;
    int tile_m, tile_n;
    sm80_tile_coords(p, blockIdx.x, &tile_m, &tile_n);
    const int64_t m0 = (int64_t)tile_m * BM, n0 = (int64_t)tile_n * BN;
    const int KT = p.k_tiles;
    const int full_tiles = (int)(p.k / BK);
    const int has_tail = KT - full_tiles; /* 0 or 1 */
    const int k_start =
        (p.stagger && full_tiles > 0) ? (int)(blockIdx.x % (unsigned)full_tiles) : 0;

    float acc[MI][NJ][4];
    sm80_zero_acc(acc);

    /* Prologue: steps 0..STAGES-2 (the K tail among them) through the
     * general zero-filling loader, one commit group each. */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT)
            sm80_ms_load_stage_all<CFG, T>(p, smem_base + s * CFG::STAGE_BYTES,
                                           sm80_lean_k_tile(s, has_tail, full_tiles, k_start), m0,
                                           n0, tid, A_KMAJ, B_KMAJ);
        cuops_cp_async_commit();
    }

    sm80_lean_copy<LA, NT, A_KMAJ, U> copy_a;
    sm80_lean_copy<LB, NT, B_KMAJ, U> copy_b;
    sm80_lean_copy_init(copy_a, (const T *)p.a, p.lda, m0, p.m, tid);
    sm80_lean_copy_init(copy_b, (const T *)p.b, p.ldb, n0, p.n, tid);
    const int64_t a_step = A_KMAJ ? (int64_t)BK * 2 : (int64_t)BK * p.lda * 2;
    const int64_t b_step = B_KMAJ ? (int64_t)BK * 2 : (int64_t)BK * p.ldb * 2;

    /* ldmatrix lane offsets (K-major operands) and the warp's block offsets */
    const uint32_t a_lane = sm80_lean_lane_off<LA, A_KMAJ>(lane & 15, lane >> 4);
    const uint32_t b_lane = sm80_lean_lane_off<LB, B_KMAJ>(((lane >> 4) << 3) + (lane & 7), (lane >> 3) & 1);
    const uint32_t a_warp = (uint32_t)(warp_m * CFG::WTM * LA::STRIDE * 2);
    const uint32_t b_warp = (uint32_t)LA::BYTES + (uint32_t)(warp_n * CFG::WTN * LB::STRIDE * 2);

    cuops_cp_async_wait<STAGES - 2>();
    __syncthreads();

    uint32_t af[2][MI][4];
    uint32_t bf[2][NJ][2];
    int read_stage = 0, write_stage = STAGES - 1;
    if (KT > 0) {
        if (A_KMAJ)
            sm80_lean_a_frags<LA, MI>(af[0], smem_base + a_warp, a_lane, 0);
        else
            sm80_load_a_frags<LA, false, MI>(af[0], smem_base, warp_m * CFG::WTM, 0, lane);
        if (B_KMAJ)
            sm80_lean_b_frags<LB, NJ>(bf[0], smem_base + b_warp, b_lane, 0);
        else
            sm80_load_b_frags<LB, false, NJ>(bf[0], smem_base + LA::BYTES, warp_n * CFG::WTN, 0,
                                             lane);
    }

    for (int kt = 0; kt < KT; kt++) {
        /* Step kt+STAGES-1 (>= 1, hence a full k-tile) goes into the stage
         * step kt-1 used: every warp left it before the last barrier. */
        const int fetch = kt + STAGES - 1;
        const int issue = fetch < KT;
        const int fetch_tile = issue ? sm80_lean_k_tile(fetch, has_tail, full_tiles, k_start) : 0;
        const int64_t a_koff = (int64_t)fetch_tile * a_step;
        const int64_t b_koff = (int64_t)fetch_tile * b_step;
        const uint32_t wst = smem_base + write_stage * CFG::STAGE_BYTES;
#pragma unroll
        for (int ks = 0; ks < KS; ks++) {
            /* 1. this k-step's share of the next tile's copies (predicated) */
            if (ks == 0) {
                sm80_lean_copy_part<0, KS>(copy_a, wst, a_koff, issue);
                sm80_lean_copy_part<0, KS>(copy_b, wst + LA::BYTES, b_koff, issue);
            }
            if (ks == 1) {
                sm80_lean_copy_part<1, KS>(copy_a, wst, a_koff, issue);
                sm80_lean_copy_part<1, KS>(copy_b, wst + LA::BYTES, b_koff, issue);
            }
            if (ks == 2) {
                sm80_lean_copy_part<2, KS>(copy_a, wst, a_koff, issue);
                sm80_lean_copy_part<2, KS>(copy_b, wst + LA::BYTES, b_koff, issue);
            }
            if (ks == 3) {
                sm80_lean_copy_part<3, KS>(copy_a, wst, a_koff, issue);
                sm80_lean_copy_part<3, KS>(copy_b, wst + LA::BYTES, b_koff, issue);
            }
            if (ks == KS - 1) {
                /* as the classic kernel: STAGES-1 + kt+1 groups committed,
                 * STAGES-2 may stay pending -> steps 0..kt+1 landed (ours);
                 * the barrier publishes everyone's and frees stage kt */
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
            if (A_KMAJ)
                sm80_lean_a_frags<LA, MI>(af[nbuf], rst + a_warp, a_lane, nks);
            else
                sm80_load_a_frags<LA, false, MI>(af[nbuf], rst, warp_m * CFG::WTM, nks, lane);
            if (B_KMAJ)
                sm80_lean_b_frags<LB, NJ>(bf[nbuf], rst + b_warp, b_lane, nks);
            else
                sm80_load_b_frags<LB, false, NJ>(bf[nbuf], rst + LA::BYTES, warp_n * CFG::WTN,
                                                 nks, lane);
            /* 3. this k-step's MMAs: MI*NJ independent accumulators, serpentine */
            sm80_warp_tile_mma<T>(acc, af[ks & 1], bf[ks & 1]);
        }
    }
    cuops_cp_async_wait<0>();

    sm80_epilogue<MI, NJ>(p, acc, m0 + warp_m * CFG::WTM, n0 + warp_n * CFG::WTN, lane);
}

/* ------------------------------------------------------------------------ */
/* Host                                                                     */
/* ------------------------------------------------------------------------ */

template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool A_KMAJ, bool B_KMAJ, int U = 1>
static cuops_status_t sm80_run_lean(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                    unsigned flags, const char *name)
{
    typedef sm80_ms_config<BM, BN, BK, WM, WN, STAGES, false, A_KMAJ, B_KMAJ> CFG;
    const sm80_gemm_params p = sm80_make_params(d, BM, BN, BK, flags);
    const void *kernel =
        d->ab_type == CUOPS_DTYPE_BF16
            ? (const void *)sm80_gemm_lean_kernel<BM, BN, BK, WM, WN, STAGES, A_KMAJ, B_KMAJ, U,
                                                  __nv_bfloat16>
            : (const void *)sm80_gemm_lean_kernel<BM, BN, BK, WM, WN, STAGES, A_KMAJ, B_KMAJ, U,
                                                  __half>;
    return sm80_launch(h, kernel, &p, CFG::THREADS, CFG::SMEM_BYTES, name);
}

/* BK = 32, 4 stages: every transpose */
#define LEAN32_CFG 128, 256, 32, 2, 4, 4

int sm80_supports_lean_128x256x32_s4(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    return sm80_supports_common(h, d, 128, 256, 32,
                                sm80_multistage_smem<LEAN32_CFG, false, true, true>(),
                                SM80_LAYOUT_ALL);
}

cuops_status_t sm80_launch_lean_128x256x32_s4(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                              const cuops_options_t *opt)
{
    const char *name = "sm80_lean_128x256x32_s4";
    const unsigned flags = sm80_flags(opt);
    const bool a_kmaj = d->trans_a == CUOPS_OP_N;
    const bool b_kmaj = d->trans_b == CUOPS_OP_T;
    if (a_kmaj && b_kmaj) return sm80_run_lean<LEAN32_CFG, true, true>(h, d, flags, name);
    if (a_kmaj) return sm80_run_lean<LEAN32_CFG, true, false>(h, d, flags, name);
    if (b_kmaj) return sm80_run_lean<LEAN32_CFG, false, true>(h, d, flags, name);
    return sm80_run_lean<LEAN32_CFG, false, false>(h, d, flags, name);
}

/* BK = 64, 3 stages: the seed's case (NT) */
#define LEAN64_CFG 128, 256, 64, 2, 4, 3

int sm80_supports_lean_128x256x64_s3(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    return sm80_supports_common(h, d, 128, 256, 64,
                                sm80_multistage_smem<LEAN64_CFG, false, true, true>(),
                                SM80_LAYOUT_NT);
}

cuops_status_t sm80_launch_lean_128x256x64_s3(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                              const cuops_options_t *opt)
{
    return sm80_run_lean<LEAN64_CFG, true, true>(h, d, sm80_flags(opt), "sm80_lean_128x256x64_s3");
}

/* the same kernel with the half-line copies of its first build (ablation) */
cuops_status_t sm80_launch_lean_128x256x64_s3_halfline(struct cuops_handle *h,
                                                       const cuops_gemm_desc_t *d,
                                                       const cuops_options_t *opt)
{
    return sm80_run_lean<LEAN64_CFG, true, true, 2>(h, d, sm80_flags(opt),
                                                    "sm80_lean_128x256x64_s3_halfline");
}
