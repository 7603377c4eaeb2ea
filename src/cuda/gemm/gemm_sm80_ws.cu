/*
 * gemm_sm80_ws.cu - the lean mma.sync GEMM (gemm_sm80_lean.cu) with its
 * copies moved to a producer warp and its CTA barrier replaced by per-stage
 * mbarriers: warp specialization with the Ampere instruction set
 * (cp.async, ldmatrix, mma.sync m16n8k16) plus Hopper's setmaxnreg: sm_90
 * only.
 *
 * Why: ncu of the lean kernel on the H200 (runs P85, P86;
 * docs/gemm-mma-sync.md) has the tensor pipe busy 72 % of the cycles with
 * shared memory no longer the limit (68 % busy). With two math warps per
 * scheduler (64x64 warp tiles, ~240 registers each) the pipe idles whenever
 * one of the two is held by something other than an HMMA: an ldmatrix
 * result, the MIO queue it shares with the cp.async, the CTA barrier that
 * keeps all eight in step once per k-tile, the cp.async address registers.
 * Here the math warps do nothing but ldmatrix, mma.sync and one mbarrier
 * wait and arrive per k-tile, and they drift freely against each other.
 *
 * Shape: two math warpgroups = 8 warps (2 x 4, 64x64 warp tiles, 128 fp32
 * accumulators per thread, the lean kernel's fragment double buffer and MMA
 * order) + one producer warpgroup = 384 threads, one CTA per SM. Why a whole
 * producer warpgroup: a register file is per scheduler (16 K registers), so
 * a ninth warp would sit beside two math warps on one scheduler and cap
 * every thread at 168 registers; with setmaxnreg the producers drop to 40
 * and the math warps rise to 232 (2 x 232 + 40 = 504 per thread slot of a
 * scheduler, under 512). CTA tile 128 x 256 x 64, 4 stages of 48 KB (192
 * KB). Both operands K-major (the seed's NT case), the lean kernel's
 * XOR-swizzled layout.
 *
 * Producer warps: producer warp w copies rows [32 w, 32 w + 32) of the A
 * tile and [64 w, 64 w + 64) of the B tile; lane l copies chunk l % 8 of
 * rows l / 8 + 4 i, so each cp.async instruction fills four whole 128-byte
 * lines (line-complete, as the lean kernel since 3e89d76). Rows past M / N
 * are not copied at all: they only feed accumulator rows and columns the
 * epilogue never stores. The K tail is zero-filled (src-size), so every
 * k-tile goes through the same code. Per stage: wait `empty`, 24 cp.async
 * per lane, then cp.async.mbarrier.arrive.noinc on `full` (128 arrivals,
 * each fired when that lane's copies have landed).
 *
 * Math warps: wait `full` of the stage, read the k-steps' fragments with
 * ldmatrix one k-step ahead, and arrive on `empty` (all 256 math threads)
 * as soon as the stage's last fragments are read, before the k-step's MMAs.
 * No StaggerU (the option is ignored); grouped rasterization as the family.
 */
#include "cuda/common/ptx_sm90.cuh"
#include "cuda/gemm/gemm_sm80_multistage.cuh"

#define WS_BM 128
#define WS_BN 256
#define WS_BK 64
#define WS_MATH_WARPS 8
#define WS_PRODUCER_WARPS 4
#define WS_THREADS ((WS_MATH_WARPS + WS_PRODUCER_WARPS) * 32)
#define WS_PRODUCER_REGS 40
#define WS_MATH_REGS 232

template <int STAGES>
struct sm80_ws_config {
    typedef sm80_ms_config<WS_BM, WS_BN, WS_BK, 2, 4, STAGES, false, true, true> MS;
    /* full[s] at BARS + 8 s, empty[s] at BARS + 8 (STAGES + s) */
    static constexpr int BARS = MS::SMEM_BYTES;
    static constexpr int SMEM_BYTES = MS::SMEM_BYTES + 16 * STAGES;
};

#if CUOPS_SM90A_DEVICE
/* One producer lane's rows r0 + 4i (i < N) of one operand tile, lines LINE
 * bytes apart: `bytes` of each 16-byte chunk read, the rest zero-filled;
 * rows i >= valid (past M or N) not copied. */
template <int N, int LINE>
static __device__ __forceinline__ void sm80_ws_copy_rows(uint32_t dst, uint32_t dst_even,
                                                         uint32_t dst_odd, const char *src,
                                                         int64_t step, int bytes, int valid)
{
#pragma unroll
    for (int i = 0; i < N; i++) {
        cuops_cp_async_16_zfill_if(dst + i * 4 * LINE + ((i & 1) ? dst_odd : dst_even), src, bytes,
                                   i < valid);
        src += step;
    }
}

/* Producer warp `pw`: its rows of k-tiles 0..KT-1 into the ring. */
template <typename CFG>
static __device__ __forceinline__ void sm80_ws_produce(const sm80_gemm_params &p,
                                                       uint32_t smem_base, int64_t m0, int64_t n0,
                                                       int pw, int lane)
{
    typedef typename CFG::MS MS;
    typedef typename MS::A_LAYOUT LA;
    typedef typename MS::B_LAYOUT LB;
    constexpr int STAGES = MS::SMEM_BYTES / MS::STAGE_BYTES;
    constexpr int LINE = LA::STRIDE * 2; /* 128 bytes: one smem row of a tile */
    constexpr int A_ROWS = LA::ROWS / WS_PRODUCER_WARPS, B_ROWS = LB::ROWS / WS_PRODUCER_WARPS;
    static_assert(LA::CPR == 8 && LB::CPR == 8, "rows of 8 chunks (BK = 64)");
    static_assert(LA::STRIDE == LB::STRIDE, "same row layout for A and B");
    static_assert(A_ROWS % 8 == 0 && B_ROWS % 8 == 0, "each warp's rows start on the swizzle period");

    const int r0 = lane >> 3, c = lane & 7;
    const int64_t a_row = m0 + pw * A_ROWS + r0, b_row = n0 + pw * B_ROWS + r0;
    /* how many of this lane's rows (r0 + 4i) exist in the matrix */
    const int valid_a = p.m > a_row ? (int)min((p.m - a_row + 3) >> 2, (int64_t)A_ROWS / 4) : 0;
    const int valid_b = p.n > b_row ? (int)min((p.n - b_row + 3) >> 2, (int64_t)B_ROWS / 4) : 0;
    const char *src_a = (const char *)p.a + (min(a_row, p.m - 1) * p.lda + c * 8) * 2;
    const char *src_b = (const char *)p.b + (min(b_row, p.n - 1) * p.ldb + c * 8) * 2;
    const int64_t step_a = 4 * p.lda * 2, step_b = 4 * p.ldb * 2;
    /* row r0 + 4i sits at 4i * LINE + the swizzled chunk of row r0 + 4 (i & 1) */
    const uint32_t dst_even = LA::offset(r0, c), dst_odd = LA::offset(r0 + 4, c) - 4 * LINE;
    const uint32_t a_base = pw * A_ROWS * LINE, b_base = LA::BYTES + pw * B_ROWS * LINE;

    int stage = 0;
    uint32_t phase = 0;
    for (int kt = 0; kt < p.k_tiles; kt++) {
        cuops_mbar80_wait(smem_base + CFG::BARS + 8 * (STAGES + stage), phase ^ 1);
        /* this lane's chunk of the k-tile: 16 bytes, fewer in the K tail,
         * none past K (then it points at the row's first chunk, reads nothing) */
        const int64_t kc = (int64_t)kt * WS_BK + c * 8;
        const int64_t left = p.k - kc;
        const int bytes = left >= 8 ? 16 : (left > 0 ? (int)left * 2 : 0);
        const int64_t koff = bytes ? (int64_t)kt * WS_BK * 2 : -(int64_t)c * 16;
        const uint32_t st = smem_base + stage * MS::STAGE_BYTES;
        sm80_ws_copy_rows<A_ROWS / 4, LINE>(st + a_base, dst_even, dst_odd, src_a + koff, step_a,
                                            bytes, valid_a);
        sm80_ws_copy_rows<B_ROWS / 4, LINE>(st + b_base, dst_even, dst_odd, src_b + koff, step_b,
                                            bytes, valid_b);
        cuops_cp_async_mbar80_arrive(smem_base + CFG::BARS + 8 * stage);
        cuops_ring_advance<STAGES>(stage, phase);
    }
    cuops_cp_async_wait_all();
}
#endif /* CUOPS_SM90A_DEVICE */

template <int STAGES, typename T>
__global__ void __launch_bounds__(WS_THREADS, 1) sm80_gemm_ws_kernel(const sm80_gemm_params p)
{
#if CUOPS_SM90A_DEVICE
    typedef sm80_ws_config<STAGES> CFG;
    typedef typename CFG::MS MS;
    typedef typename MS::A_LAYOUT LA;
    typedef typename MS::B_LAYOUT LB;
    constexpr int MI = MS::MI, NJ = MS::NJ, KS = MS::KS, WN = 4;
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t smem_base = cuops_smem_addr(smem);
    const uint32_t full0 = smem_base + CFG::BARS, empty0 = full0 + 8 * STAGES;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    int tile_m, tile_n;
    sm80_tile_coords(p, blockIdx.x, &tile_m, &tile_n);
    const int64_t m0 = (int64_t)tile_m * WS_BM, n0 = (int64_t)tile_n * WS_BN;
    const int KT = p.k_tiles;

    if (tid == 0) {
        for (int s = 0; s < STAGES; s++) {
            cuops_mbar80_init(full0 + 8 * s, WS_PRODUCER_WARPS * 32);
            cuops_mbar80_init(empty0 + 8 * s, WS_MATH_WARPS * 32);
        }
    }
    __syncthreads(); /* the only CTA barrier: barriers initialised */

    if (warp >= WS_MATH_WARPS) {
        cuops_setmaxnreg_dec<WS_PRODUCER_REGS>();
        sm80_ws_produce<CFG>(p, smem_base, m0, n0, warp - WS_MATH_WARPS, lane);
        return;
    }
    cuops_setmaxnreg_inc<WS_MATH_REGS>();

    const int warp_m = warp / WN, warp_n = warp % WN;
    float acc[MI][NJ][4];
    sm80_zero_acc(acc);

    const uint32_t a_lane = sm80_lean_lane_off<LA, true>(lane & 15, lane >> 4);
    const uint32_t b_lane =
        sm80_lean_lane_off<LB, true>(((lane >> 4) << 3) + (lane & 7), (lane >> 3) & 1);
    const uint32_t a_warp = (uint32_t)(warp_m * MS::WTM * LA::STRIDE * 2);
    const uint32_t b_warp = (uint32_t)LA::BYTES + (uint32_t)(warp_n * MS::WTN * LB::STRIDE * 2);

    uint32_t af[2][MI][4];
    uint32_t bf[2][NJ][2];
    int stage = 0;
    uint32_t phase = 0;
    if (KT > 0) {
        cuops_mbar80_wait(full0, 0);
        sm80_lean_a_frags<LA, MI>(af[0], smem_base + a_warp, a_lane, 0);
        sm80_lean_b_frags<LB, NJ>(bf[0], smem_base + b_warp, b_lane, 0);
    }
    for (int kt = 0; kt < KT; kt++) {
        uint32_t rst = smem_base + stage * MS::STAGE_BYTES;
#pragma unroll
        for (int ks = 0; ks < KS; ks++) {
            const int nbuf = (ks + 1) & 1;
            if (ks < KS - 1) {
                /* fragments of the next k-step of this stage */
                sm80_lean_a_frags<LA, MI>(af[nbuf], rst + a_warp, a_lane, ks + 1);
                sm80_lean_b_frags<LB, NJ>(bf[nbuf], rst + b_warp, b_lane, ks + 1);
            } else {
                /* every read of this stage is issued: hand it back, then
                 * the next stage's first fragments */
                cuops_mbar80_arrive(empty0 + 8 * stage);
                cuops_ring_advance<STAGES>(stage, phase);
                if (kt + 1 < KT) {
                    cuops_mbar80_wait(full0 + 8 * stage, phase);
                    rst = smem_base + stage * MS::STAGE_BYTES;
                    sm80_lean_a_frags<LA, MI>(af[nbuf], rst + a_warp, a_lane, 0);
                    sm80_lean_b_frags<LB, NJ>(bf[nbuf], rst + b_warp, b_lane, 0);
                }
            }
            /* this k-step's MMAs: MI*NJ independent accumulators, serpentine */
            sm80_warp_tile_mma<T>(acc, af[ks & 1], bf[ks & 1]);
        }
    }

    sm80_epilogue<MI, NJ>(p, acc, m0 + warp_m * MS::WTM, n0 + warp_n * MS::WTN, lane);
#endif /* CUOPS_SM90A_DEVICE */
}

/* ------------------------------------------------------------------------ */
/* Host                                                                     */
/* ------------------------------------------------------------------------ */

/* sm_90 only (setmaxnreg; the kernel body exists in the sm_90a pass). */
template <int STAGES>
static int sm80_supports_ws(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    if (h->sm_major != 9) return 0;
    return sm80_supports_common(h, d, WS_BM, WS_BN, WS_BK, sm80_ws_config<STAGES>::SMEM_BYTES,
                                SM80_LAYOUT_NT);
}

template <int STAGES>
static cuops_status_t sm80_launch_ws(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                     const cuops_options_t *opt, const char *name)
{
    const sm80_gemm_params p = sm80_make_params(d, WS_BM, WS_BN, WS_BK, sm80_flags(opt));
    const void *kernel = d->ab_type == CUOPS_DTYPE_BF16
                             ? (const void *)sm80_gemm_ws_kernel<STAGES, __nv_bfloat16>
                             : (const void *)sm80_gemm_ws_kernel<STAGES, __half>;
    return sm80_launch(h, kernel, &p, WS_THREADS, sm80_ws_config<STAGES>::SMEM_BYTES, name);
}

int sm80_supports_ws_128x256x64_s4(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    return sm80_supports_ws<4>(h, d);
}

cuops_status_t sm80_launch_ws_128x256x64_s4(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                            const cuops_options_t *opt)
{
    return sm80_launch_ws<4>(h, d, opt, "sm80_ws_128x256x64_s4");
}
