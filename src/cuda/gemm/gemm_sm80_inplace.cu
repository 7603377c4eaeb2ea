/*
 * gemm_sm80_inplace.cu - seed 000's own pipeline on mma.sync: ONE shared
 * buffer (no second BMxBK stage), refilled in place at fine grain, with the
 * seed's CTA tile translated to NVIDIA's register file; plus the classic
 * two-stage kernel on the same tile for a side-by-side comparison.
 *
 * Translation of the seed's tile: the seed ran 256x256x64 with 8 waves of 64
 * lanes, 64x128 wave tiles = 128 fp32 accumulators per lane, on a 512 KB
 * register file. An NVIDIA warp has 32 lanes and an SM 256 KB of registers:
 * a 64x128 warp tile would need 256 accumulators per thread (over the 255
 * limit), and 16 warps of 64x64 (to keep 256x256) would need 512 threads x
 * >= 200 registers > 65536. Keeping the seed's 128 accumulators per thread
 * gives 8 warps of 64x64 -> a 256x128x64 CTA tile (half the seed's, as the
 * register file is half).
 *
 * The in-place refill. A "slot" is what one step of consumption frees:
 *   slot B  = the whole 128x64 B tile, read into registers at the start of
 *             each k-tile (8 n8 blocks x 4 k-steps = 64 registers);
 *   slot Ai = A rows {wm*64 + 16i .. +15 : wm = 0..3} x 64 = WarpNumM*MMA_M
 *             x BK, the m16 block i of every warp row.
 * Each warp walks i = 0..3 (all of K for block i, 8 n8 accumulators per
 * k-step), so once every warp has read block i, slot Ai can take the next
 * k-tile's rows. One barrier per slot both publishes the slot about to be
 * read (after cp.async.wait_group) and retires the one just read:
 *   Y0: wait B(t), A0(t); refill A3 <- t        (A3(t-1) was read last)
 *   Y1: wait A1(t);       refill B, A0 <- t+1
 *   Y2: wait A2(t);       refill A1 <- t+1
 *   Y3: wait A3(t);       refill A2 <- t+1
 * Groups are committed in slot order, one per barrier, so the slot needed
 * at each barrier always has exactly MI-2 = 2 younger groups: wait_group 2
 * everywhere. Every slot's refill has three slots' worth of MMAs to land:
 * 3/4 of a k-tile, ~0.65 us at the mma.sync ceiling (a 256x128x64 k-tile is
 * 4.2 MFLOP at 4.85 TFLOP/s per SM = 0.87 us).
 *
 * Costs on NVIDIA that the seed's hardware did not have: 4 barriers per
 * k-tile instead of 1, and the B fragments of the next k-tile cannot be
 * prefetched (their 64 registers are busy), so 16 ldmatrix.x4 are exposed at
 * each k-tile start (other warps' MMAs cover them). Named variants:
 * sm80_seed_256x128x64_inplace (+ _stagger: StaggerU forced, as the seed ran)
 * and sm80_seed_256x128x64_s2 (classic double buffer, same tile).
 */
#include "cuda/gemm/gemm_sm80_multistage.cuh"

#define IP_BM 256
#define IP_BN 128
#define IP_BK 64
#define IP_WM 4
#define IP_WN 2
#define IP_THREADS (IP_WM * IP_WN * 32)
#define IP_MI 4 /* m16 blocks per warp = A slots */
#define IP_NJ 8 /* n8 blocks per warp */
#define IP_KS 4 /* k16 steps per k-tile */

typedef sm80_tile_layout<IP_BM, IP_BK, false> ip_a_layout;
typedef sm80_tile_layout<IP_BN, IP_BK, false> ip_b_layout;
#define IP_SMEM_BYTES (ip_a_layout::BYTES + ip_b_layout::BYTES)

/* Slot Ai of k-tile kt: 64 rows x 8 chunks = 256 units of 32 bytes, one per
 * thread: row (tid>>6)*64 + 16i + ((tid>>2)&15), chunks 2*(tid&3) and +1;
 * four consecutive threads read one 128-byte row segment. */
template <typename T>
static __device__ __forceinline__ void ip_load_a_slot(const sm80_gemm_params &p, uint32_t smem_a,
                                                      int slot, int kt, int64_t m0, int tid)
{
    const T *a = (const T *)p.a;
    const int chunk = (tid & 3) * 2;
    const int64_t gk = (int64_t)kt * IP_BK + chunk * 8;
    const int64_t left = p.k - gk;
    const int row_in = (tid >> 2) & 15;
    const int row8 = (tid >> 6) * 64 + slot * 16;
    const int64_t gm = m0 + row8 + row_in;
    const bool row_ok = gm < p.m;
    const int bytes0 = (row_ok && left > 0) ? (left >= 8 ? 16 : (int)left * 2) : 0;
    const int bytes1 = (row_ok && left > 8) ? (left >= 16 ? 16 : (int)(left - 8) * 2) : 0;
    const T *src = a + (row_ok ? gm * p.lda + gk : 0);
    cuops_cp_async_16_zfill(smem_a + ip_a_layout::offset_split(row8, row_in, chunk),
                            bytes0 ? (const void *)src : (const void *)a, bytes0);
    cuops_cp_async_16_zfill(smem_a + ip_a_layout::offset_split(row8, row_in, chunk + 1),
                            bytes1 ? (const void *)(src + 8) : (const void *)a, bytes1);
}

template <typename T>
static __device__ __forceinline__ void ip_load_b(const sm80_gemm_params &p, uint32_t smem_b, int kt,
                                                 int64_t n0, int tid)
{
    sm80_load_tile<ip_b_layout, IP_THREADS, 0, 1>(smem_b, (const T *)p.b, p.ldb, n0, p.n,
                                                  (int64_t)kt * IP_BK, p.k, tid);
}

template <typename T>
__global__ void __launch_bounds__(IP_THREADS, 1) sm80_gemm_inplace_kernel(const sm80_gemm_params p)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t smem_a = cuops_smem_addr(smem);
    const uint32_t smem_b = smem_a + ip_a_layout::BYTES;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp / IP_WN, warp_n = warp % IP_WN;
    int tile_m, tile_n;
    sm80_tile_coords(p, blockIdx.x, &tile_m, &tile_n);
    const int64_t m0 = (int64_t)tile_m * IP_BM, n0 = (int64_t)tile_n * IP_BN;
    const int KT = p.k_tiles;
    const int k_start = (p.stagger && KT > 0) ? (int)(blockIdx.x % (unsigned)KT) : 0;

    float acc[IP_MI][IP_NJ][4];
    sm80_zero_acc(acc);

    /* Prologue: {B, A0}, {A1}, {A2} of the first k-tile (A3 comes at Y0). */
    if (KT > 0) {
        const int k0 = sm80_k_tile(0, k_start, KT);
        ip_load_b<T>(p, smem_b, k0, n0, tid);
        ip_load_a_slot<T>(p, smem_a, 0, k0, m0, tid);
    }
    cuops_cp_async_commit();
#pragma unroll
    for (int s = 1; s < IP_MI - 1; s++) {
        if (KT > 0) ip_load_a_slot<T>(p, smem_a, s, sm80_k_tile(0, k_start, KT), m0, tid);
        cuops_cp_async_commit();
    }

    uint32_t bfr[IP_KS][IP_NJ][2];
    uint32_t afr[2][1][4];
    const int a_row0 = warp_m * (IP_MI * 16), b_col0 = warp_n * (IP_NJ * 8);

    for (int t = 0; t < KT; t++) {
        const int kcur = sm80_k_tile(t, k_start, KT);
        const bool has_next = t + 1 < KT;
        const int knext = has_next ? sm80_k_tile(t + 1, k_start, KT) : 0;

        /* Y0: B(t) and A0(t) have landed; A3 (read last in k-tile t-1) is free. */
        cuops_cp_async_wait<IP_MI - 2>();
        __syncthreads();
        ip_load_a_slot<T>(p, smem_a, IP_MI - 1, kcur, m0, tid);
        cuops_cp_async_commit();
#pragma unroll
        for (int ks = 0; ks < IP_KS; ks++)
            sm80_load_b_frags<ip_b_layout, true, IP_NJ>(bfr[ks], smem_b, b_col0, ks, lane);
        sm80_load_a_frags<ip_a_layout, true, 1>(afr[0], smem_a, a_row0, 0, lane);

#pragma unroll
        for (int i = 0; i < IP_MI; i++) {
#pragma unroll
            for (int ks = 0; ks < IP_KS; ks++) {
                const int buf = (i * IP_KS + ks) & 1;
                if (ks == IP_KS - 1 && i < IP_MI - 1) {
                    /* Y(i+1): every warp has read slot Ai (its last fragment
                     * was loaded one k-step ago) and, for i == 0, slot B. */
                    cuops_cp_async_wait<IP_MI - 2>();
                    __syncthreads();
                    if (has_next) {
                        if (i == 0) ip_load_b<T>(p, smem_b, knext, n0, tid);
                        ip_load_a_slot<T>(p, smem_a, i, knext, m0, tid);
                    }
                    cuops_cp_async_commit();
                }
                /* next A fragment: (i, ks+1) or (i+1, 0) */
                if (!(i == IP_MI - 1 && ks == IP_KS - 1)) {
                    const int ni = ks == IP_KS - 1 ? i + 1 : i;
                    const int nks = ks == IP_KS - 1 ? 0 : ks + 1;
                    sm80_load_a_frags<ip_a_layout, true, 1>(afr[buf ^ 1], smem_a, a_row0 + ni * 16,
                                                            nks, lane);
                }
                /* eight independent accumulators per k-step */
#pragma unroll
                for (int j = 0; j < IP_NJ; j++)
                    cuops_mma_m16n8k16<T>::run(acc[i][j], afr[buf][0], bfr[ks][j]);
            }
        }
    }
    cuops_cp_async_wait<0>();

    sm80_epilogue<IP_MI, IP_NJ>(p, acc, m0 + a_row0, n0 + b_col0, lane);
}

/* ------------------------------------------------------------------------ */
/* Host entries                                                             */
/* ------------------------------------------------------------------------ */

int sm80_supports_seed_inplace(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    return sm80_supports_common(h, d, IP_BM, IP_BN, IP_BK, IP_SMEM_BYTES, SM80_LAYOUT_NT);
}

static cuops_status_t run_inplace(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                  unsigned flags, const char *name)
{
    const sm80_gemm_params p = sm80_make_params(d, IP_BM, IP_BN, IP_BK, flags);
    const void *kernel = d->ab_type == CUOPS_DTYPE_BF16
                             ? (const void *)sm80_gemm_inplace_kernel<__nv_bfloat16>
                             : (const void *)sm80_gemm_inplace_kernel<__half>;
    return sm80_launch(h, kernel, &p, IP_THREADS, IP_SMEM_BYTES, name);
}

cuops_status_t sm80_launch_seed_inplace(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                        const cuops_options_t *opt)
{
    return run_inplace(h, d, sm80_flags(opt), "sm80_seed_256x128x64_inplace");
}

cuops_status_t sm80_launch_seed_inplace_stagger(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                                const cuops_options_t *opt)
{
    return run_inplace(h, d, sm80_flags(opt) | CUOPS_FLAG_STAGGER_K,
                       "sm80_seed_256x128x64_inplace_stagger");
}

/* The classic double-buffered kernel on the seed's tile: same registers and
 * CTA shape, twice the shared memory, one barrier per k-tile. */
#define SEED_S2_CFG 256, 128, 64, 4, 2, 2, false, true, true

int sm80_supports_seed_s2(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    return sm80_supports_common(h, d, 256, 128, 64, sm80_multistage_smem<SEED_S2_CFG>(),
                                SM80_LAYOUT_NT);
}

cuops_status_t sm80_launch_seed_s2(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                   const cuops_options_t *opt)
{
    return sm80_run_multistage<SEED_S2_CFG>(h, d, sm80_flags(opt), "sm80_seed_256x128x64_s2");
}
