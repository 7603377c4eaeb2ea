/*
 * gemm_sm90_cluster.cu - the second generation of cuops's Hopper f16/bf16
 * GEMM: the warp-specialized TMA + wgmma design of gemm_sm90.cu with three
 * changes, each aimed at a measured shortfall against cuBLAS.
 *
 *   1. 2-CTA clusters with TMA multicast of B ("_c2" configurations). The two
 *      CTAs of a cluster compute vertically adjacent tiles (tile rows 2i and
 *      2i+1, same tile column), so they need the same B box every k-block.
 *      Each CTA loads half of it and multicasts the half to both, so a CTA
 *      pulls A 16 KB + B 16 KB from L2 per k-block instead of 16 + 32 KB
 *      (128 x 256 tile): a third less L2 -> SM traffic for the same MMAs.
 *      At ~960 TFLOP/s one 128x256x64 k-block is ~1024 clocks of tensor work,
 *      so 132 SMs draw 132 x 48 KB / 1024 clk = 6.2 KB/clk from L2 without
 *      multicast and 4.1 KB/clk with it.
 *   2. Staged epilogue: the accumulators go to a dedicated 32 KB of shared
 *      memory (2 consumers x 2 buffers of 64 rows x 128 bytes) in the TMA
 *      128B-swizzle layout and leave by TMA store (cp.async.bulk.tensor),
 *      whole 128-byte row segments, while the consumer already waits on the
 *      next tile's first stage (the producer has been prefetching it). The
 *      ring keeps its 4 stages (BN = 256: 4 x 48 KB + 32 KB = 224 KB). C that
 *      TMA cannot address (base or ldc*esize not 16-byte multiples) and
 *      beta != 0 (C must be read) take the register epilogue of the first
 *      version.
 *   3. Stage release by one lane per warp (8 arrivals per CTA, 16 with the
 *      peer's) instead of 256 thread arrivals per stage. An mbarrier arrive
 *      is a shared-memory atomic; 256 of them on one address per ~1024-clock
 *      k-block compete with the wgmma operand reads for the shared-memory
 *      pipe, which is the limiter of this design (see the waves model).
 *
 * Configurations (one table entry each, gemm_sm90.cu):
 *   sm90_tma_128x256_c2  tile 128x256, 4 stages, cluster 2 along M
 *   sm90_tma_128x128_c2  tile 128x128 (each consumer m64n128), 6 stages, cluster 2
 *   sm90_tma_128x256     tile 128x256, no cluster (ablation of 1.)
 *   sm90_tma_128x128     tile 128x128, no cluster
 *   sm90_tma_pick        picks one of the above by a waves model (below);
 *                        what auto runs on sm_90.
 *
 * Waves model: a persistent grid of G work slots (SMs, or clusters of two)
 * runs U work units in ceil(U / G) rounds. A 128x128 unit costs ~0.65 of a
 * 128x256 unit: half the MMAs, but shared memory is the limiter of both
 * (per 16 of K a wgmma m64nNk16 reads 2 KB of A + 32N bytes of B, and TMA
 * writes the stage: 80 + 48 = 128 B/clk at full tensor rate for 128x256,
 * 94 + 64 = 158 B/clk for 128x128, against ~128 B/clk per SM), so the
 * narrow tile runs at most ~128/158 of peak. The 128x128 tile wins when it
 * needs fewer than 1/0.65 as many rounds: 1024^2 (16 units of 128x256
 * pairs: 1 round at 1.0 vs 32 units of 128x128 pairs: 1 round at 0.65),
 * 1537x3001 (2 rounds vs 3 x 0.65). 2048^2 and larger keep 128x256.
 *
 * Cluster protocol. full[s]: count 1 (own producer's arrive.expect_tx of the
 * bytes that land in THIS CTA: its A box plus both B halves), paid off by its
 * own A load and by both CTAs' B multicasts. A peer's bytes for round r can
 * only arrive after this CTA's consumers released stage s of round r-1
 * (they arrive on the peer's empty[s] too), i.e. after full[s] phase r-1
 * completed, so they count toward phase r. empty[s]: count 16 = 8 consumer
 * warps x 2 CTAs, because each producer writes into both CTAs' stage s.
 * Both CTAs walk the same units and k-blocks, so phases stay in step. The
 * second CTA of a cluster whose tile row is past M still multicasts its
 * B half and releases stages, but loads no A and stores nothing; a B half
 * whose rows all lie past N is loaded by neither CTA and expected by
 * neither (no TMA box ever lies wholly outside its tensor). A cluster barrier after the mbarrier init (before any multicast)
 * and before exit (after every remote arrive) brackets the kernel.
 *
 * Build: the body exists only in the sm_90a pass (CUOPS_SM90A_DEVICE).
 */
#include "cuda/common/ptx_sm90.cuh"
#include "cuda/gemm/gemm_kernels.h"
#include "cuda/gemm/gemm_sm90.h"

#define TC_BM 128
#define TC_BK 64
#define TC_THREADS 384
#define TC_A_STAGE_BYTES (TC_BM * TC_BK * 2)   /* 16 KB */
#define TC_EPI_BUF_BYTES (64 * 128)            /* 64 rows x 128 bytes */
#define TC_EPI_BYTES (2 * 2 * TC_EPI_BUF_BYTES) /* 2 consumers x 2 buffers */
#define TC_GROUP_ROWS 16
#define TC_PRODUCER_REGS 40
#define TC_CONSUMER_REGS 232

/* Compile-time shape of one configuration. 6 stages of 32 KB for the
 * 128x128 tile keep the same 192 KB ring: one 128x128x64 k-block is ~512
 * clocks of MMA, so 5 stages ahead give the loads ~2500 clocks to land. */
__host__ __device__ constexpr int tc_stages(int bn) { return bn == 256 ? 4 : 6; }
__host__ __device__ constexpr int tc_b_stage_bytes(int bn) { return bn * TC_BK * 2; }
__host__ __device__ constexpr int tc_smem_bytes(int bn)
{
    return tc_stages(bn) * (TC_A_STAGE_BYTES + tc_b_stage_bytes(bn)) + TC_EPI_BYTES +
           2 * tc_stages(bn) * 8 + 1024;
}
/* Both configurations: 196608 + 32768 + 64|96 + 1024 <= 230496 bytes. */
#define TC_SMEM_MAX (tc_smem_bytes(128) > tc_smem_bytes(256) ? tc_smem_bytes(128) : tc_smem_bytes(256))

typedef struct tc_params {
    void *c;
    int64_t ldc;
    int m, n;
    float alpha, beta;
    int tiles_m, tiles_n;  /* tiles of 128 x BN */
    int units_m;           /* ceil(tiles_m / cluster): a unit is a cluster's tile column pair */
    int num_units;         /* units_m * tiles_n */
    int k_blocks;
    int group_rows;        /* units per raster group; 0: row-major unit order */
    int stagger_k;
    int c_pair_ok;         /* register epilogue: two adjacent C elements in one store */
    int tma_store;         /* staged epilogue (beta == 0, C TMA-aligned) */
} tc_params_t;

#if CUOPS_SM90A_DEVICE

/* Unit u -> (unit row, tile column); grouped as in gemm_sm90.cu so that the
 * units in flight at once share A and B panels in L2. */
__device__ __forceinline__ void tc_unit_coords(const tc_params_t &p, int u, int *um, int *tn)
{
    if (p.group_rows <= 0) {
        *um = u / p.tiles_n;
        *tn = u - *um * p.tiles_n;
        return;
    }
    const int per_group = p.group_rows * p.tiles_n;
    const int g = u / per_group;
    const int first = g * p.group_rows;
    const int rows = min(p.group_rows, p.units_m - first);
    const int local = u - g * per_group;
    *um = first + local % rows;
    *tn = local / rows;
}

__device__ __forceinline__ void tc_wgmma(float (&acc)[128], uint64_t da, uint64_t db, int accum,
                                         bool bf16)
{
    if (bf16) cuops_wgmma_m64n256k16_bf16(acc, da, db, accum);
    else cuops_wgmma_m64n256k16_f16(acc, da, db, accum);
}
__device__ __forceinline__ void tc_wgmma(float (&acc)[64], uint64_t da, uint64_t db, int accum,
                                         bool bf16)
{
    if (bf16) cuops_wgmma_m64n128k16_bf16(acc, da, db, accum);
    else cuops_wgmma_m64n128k16_f16(acc, da, db, accum);
}

/* Two adjacent outputs into the staging buffer. */
__device__ __forceinline__ void tc_st_pair(uint32_t addr, float a, float b, const __half *)
{
    __half2 v = __floats2half2_rn(a, b);
    cuops_st_shared_u32(addr, *(uint32_t *)&v);
}
__device__ __forceinline__ void tc_st_pair(uint32_t addr, float a, float b, const __nv_bfloat16 *)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
    cuops_st_shared_u32(addr, *(uint32_t *)&v);
}
__device__ __forceinline__ void tc_st_pair(uint32_t addr, float a, float b, const float *)
{
    cuops_st_shared_v2_f32(addr, a, b);
}

/* Staged epilogue of one consumer's 64 x BN accumulator tile: chunks of
 * 64 rows x 128 bytes (64 halves or 32 floats), double-buffered.
 *
 * Bank argument: thread (warp w, lane l) holds rows 16w + l/4 (+8) and
 * columns 8j + 2(l%4) (+1). In a plain 128-byte-pitch layout the 8 rows a
 * warp writes for one j all start at bank 0 (8-way conflict). The 128B
 * swizzle XORs the 16-byte chunk index with row % 8, so for one j the 8 rows
 * land in 8 different 16-byte chunks and the 4 lanes of a row fill one chunk:
 * 32 distinct banks per 32-bit store (f16/bf16); the 64-bit f32 stores are
 * split by the hardware into half-warps, each of which covers 4 rows x 32
 * bytes in distinct chunks: also conflict-free. TMA reads the same layout
 * because the C tensor map uses SWIZZLE_128B and every buffer is
 * 1024-aligned.
 *
 * Buffer reuse: chunk c writes buffer c % 2; before that the leader waits
 * until at most one bulk group (chunk c-1's) still reads shared memory, so
 * chunk c-2's store from the same buffer is done, and a named barrier
 * (consumer warpgroup only) publishes it. */
template <int BN, typename OutT>
__device__ __forceinline__ void tc_epilogue_tma(const tc_params_t &p, const CUtensorMap *tmap_c,
                                                const float (&acc)[BN / 2], uint32_t bufs,
                                                uint32_t bar_id, uint32_t &epi_count, int row0,
                                                int col0)
{
    constexpr int ES = (int)sizeof(OutT);
    constexpr int CW = 128 / ES;       /* columns per chunk */
    constexpr int CHUNKS = BN / CW;
    constexpr int JPC = CW / 8;        /* 8-column accumulator groups per chunk */
    const int t = threadIdx.x % 128;
    const int warp = t / 32, lane = t % 32;
    const bool leader = (t == 0);
    if (row0 >= p.m) return; /* uniform over the warpgroup */
#pragma unroll
    for (int ch = 0; ch < CHUNKS; ch++) {
        if (col0 + ch * CW >= p.n) break; /* uniform; no later chunk is in range either */
        const uint32_t buf = bufs + (epi_count & 1u) * TC_EPI_BUF_BYTES;
        epi_count++;
        if (leader) cuops_tma_store_wait_read<1>();
        cuops_named_bar_sync(bar_id, 128);
#pragma unroll
        for (int jj = 0; jj < JPC; jj++) {
            const int j = ch * JPC + jj;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const uint32_t r = (uint32_t)(warp * 16 + lane / 4 + 8 * h);
                const uint32_t byte = (uint32_t)((8 * jj + 2 * (lane % 4)) * ES);
                const uint32_t addr = buf + r * 128u + ((((byte >> 4) ^ (r & 7u))) << 4) + (byte & 15u);
                tc_st_pair(addr, p.alpha * acc[4 * j + 2 * h], p.alpha * acc[4 * j + 2 * h + 1],
                           (const OutT *)0);
            }
        }
        /* Generic-proxy writes must be visible to the TMA (async proxy). */
        cuops_fence_proxy_async_smem();
        cuops_named_bar_sync(bar_id, 128);
        if (leader) {
            cuops_tma_store_2d(tmap_c, buf, col0 + ch * CW, row0);
            cuops_tma_store_commit();
        }
    }
}

__device__ __forceinline__ void tc_store_pair(__half *p, float a, float b)
{
    *(__half2 *)p = __floats2half2_rn(a, b);
}
__device__ __forceinline__ void tc_store_pair(__nv_bfloat16 *p, float a, float b)
{
    *(__nv_bfloat162 *)p = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void tc_store_pair(float *p, float a, float b)
{
    *(float2 *)p = make_float2(a, b);
}

/* Register epilogue (beta != 0, or C that TMA cannot address): straight to
 * global memory, masked at the M/N edges; beta == 0 never reads C. */
template <int BN, typename OutT>
__device__ __forceinline__ void tc_epilogue_regs(const tc_params_t &p, const float (&acc)[BN / 2],
                                                 int row0, int col0)
{
    const int t = threadIdx.x % 128;
    const int warp = t / 32, lane = t % 32;
    const int row_a = row0 + warp * 16 + lane / 4;
    const int col_a = col0 + 2 * (lane % 4);
    OutT *c = (OutT *)p.c;
    const bool read_c = (p.beta != 0.0f);
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = row_a + 8 * half;
        if (row >= p.m) continue;
        OutT *c_row = c + (int64_t)row * p.ldc;
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            const int col = col_a + 8 * j;
            float v0 = p.alpha * acc[4 * j + 2 * half + 0];
            float v1 = p.alpha * acc[4 * j + 2 * half + 1];
            if (col + 1 < p.n) {
                if (read_c) {
                    v0 += p.beta * cuops_to_float(c_row[col]);
                    v1 += p.beta * cuops_to_float(c_row[col + 1]);
                }
                if (p.c_pair_ok) {
                    tc_store_pair(c_row + col, v0, v1);
                } else {
                    c_row[col] = cuops_from_float<OutT>(v0);
                    c_row[col + 1] = cuops_from_float<OutT>(v1);
                }
            } else if (col < p.n) {
                if (read_c) v0 += p.beta * cuops_to_float(c_row[col]);
                c_row[col] = cuops_from_float<OutT>(v0);
            }
        }
    }
}

#endif /* CUOPS_SM90A_DEVICE */

/* ---- the kernel ---------------------------------------------------------- */

template <int BN, int CLUSTER, bool AB_BF16, typename OutT>
__global__ void __launch_bounds__(TC_THREADS, 1)
sm90_tc_kernel(const __grid_constant__ CUtensorMap tmap_a,
               const __grid_constant__ CUtensorMap tmap_b,
               const __grid_constant__ CUtensorMap tmap_c, const tc_params_t p)
{
#if CUOPS_SM90A_DEVICE
    constexpr int STAGES = tc_stages(BN);
    constexpr uint32_t B_STAGE = (uint32_t)tc_b_stage_bytes(BN);
    constexpr uint32_t B_PART = B_STAGE / CLUSTER;  /* what this CTA's B load carries */
    constexpr int B_PART_ROWS = BN / CLUSTER;
    extern __shared__ uint8_t smem_raw[];
    /* Same offset in every CTA of the cluster: multicast writes rely on it. */
    const uint32_t smem_base = (cuops_smem_addr(smem_raw) + 1023u) & ~1023u;
    const uint32_t a_smem = smem_base;
    const uint32_t b_smem = a_smem + STAGES * TC_A_STAGE_BYTES;
    const uint32_t epi_smem = b_smem + STAGES * B_STAGE;
    const uint32_t bars = epi_smem + TC_EPI_BYTES;
#define TC_FULL_BAR(s) (bars + 8u * (uint32_t)(s))
#define TC_EMPTY_BAR(s) (bars + 8u * (uint32_t)(STAGES + (s)))

    const int warpgroup = threadIdx.x / 128;
    const uint32_t rank = CLUSTER > 1 ? cuops_cluster_ctarank() : 0u;
    const int cluster_id = (int)(blockIdx.x / CLUSTER);
    const int num_clusters = (int)(gridDim.x / CLUSTER);

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            cuops_mbar_init(TC_FULL_BAR(s), 1);
            /* one lane per consumer warp (8), from each CTA of the cluster */
            cuops_mbar_init(TC_EMPTY_BAR(s), 8 * CLUSTER);
        }
        cuops_mbar_init_fence();
    }
    /* The peer's barriers must be initialised before our first multicast
     * completes bytes on them. */
    if (CLUSTER > 1) cuops_cluster_sync();
    else __syncthreads();

    if (warpgroup == 0) {
        /* ---------------- producer ---------------- */
        cuops_setmaxnreg_dec<TC_PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            int stage = 0;
            uint32_t phase = 0;
            for (int u = cluster_id; u < p.num_units; u += num_clusters) {
                int um, tn;
                tc_unit_coords(p, u, &um, &tn);
                const int tm = um * CLUSTER + (int)rank;
                /* Boxes that lie wholly outside A or B are not issued (their
                 * bytes are not expected): the MMAs then read stale shared
                 * memory for rows / columns that are never stored. */
                const bool a_valid = tm < p.tiles_m;
                uint32_t tx_bytes = a_valid ? (uint32_t)TC_A_STAGE_BYTES : 0u;
#pragma unroll
                for (int r = 0; r < CLUSTER; r++)
                    if (tn * BN + r * B_PART_ROWS < p.n) tx_bytes += B_PART;
                const bool b_mine = tn * BN + (int)rank * B_PART_ROWS < p.n;
                int kb = p.stagger_k ? (u % p.k_blocks) : 0;
                for (int i = 0; i < p.k_blocks; i++) {
                    cuops_mbar_wait(TC_EMPTY_BAR(stage), phase ^ 1u);
                    cuops_mbar_arrive_expect_tx(TC_FULL_BAR(stage), tx_bytes);
                    if (a_valid)
                        cuops_tma_load_2d(a_smem + stage * TC_A_STAGE_BYTES, &tmap_a,
                                          TC_FULL_BAR(stage), kb * TC_BK, tm * TC_BM);
                    if (CLUSTER == 1)
                        cuops_tma_load_2d(b_smem + stage * B_STAGE, &tmap_b, TC_FULL_BAR(stage),
                                          kb * TC_BK, tn * BN);
                    else if (b_mine)
                        cuops_tma_load_2d_multicast(
                            b_smem + stage * B_STAGE + rank * B_PART, &tmap_b, TC_FULL_BAR(stage),
                            kb * TC_BK, tn * BN + (int)rank * B_PART_ROWS,
                            (uint16_t)((1u << CLUSTER) - 1u));
                    if (++kb == p.k_blocks) kb = 0;
                    if (++stage == STAGES) {
                        stage = 0;
                        phase ^= 1u;
                    }
                }
            }
        }
    } else {
        /* ---------------- consumers ---------------- */
        cuops_setmaxnreg_inc<TC_CONSUMER_REGS>();
        const int consumer = warpgroup - 1;
        const int lane = threadIdx.x % 32;
        const uint32_t peer = rank ^ 1u;
        const uint32_t epi_bufs = epi_smem + (uint32_t)consumer * 2u * TC_EPI_BUF_BYTES;
        uint32_t epi_count = 0;
        float acc[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; i++) acc[i] = 0.0f;

        int stage = 0;
        uint32_t phase = 0;
        for (int u = cluster_id; u < p.num_units; u += num_clusters) {
            int um, tn;
            tc_unit_coords(p, u, &um, &tn);
            const int tm = um * CLUSTER + (int)rank;
            int prev_stage = 0;
            for (int i = 0; i < p.k_blocks; i++) {
                cuops_mbar_wait(TC_FULL_BAR(stage), phase);
                const uint64_t desc_a = cuops_wgmma_desc_k_sw128(
                    a_smem + stage * TC_A_STAGE_BYTES + consumer * (64 * TC_BK * 2));
                const uint64_t desc_b = cuops_wgmma_desc_k_sw128(b_smem + stage * B_STAGE);
#pragma unroll
                for (int r = 0; r < BN / 2; r++) cuops_reg_fence(acc[r]);
                cuops_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < TC_BK / 16; kk++)
                    tc_wgmma(acc, desc_a + 2 * kk, desc_b + 2 * kk, (i > 0 || kk > 0) ? 1 : 0,
                             AB_BF16);
                cuops_wgmma_commit();
                cuops_wgmma_wait<1>();
#pragma unroll
                for (int r = 0; r < BN / 2; r++) cuops_reg_fence(acc[r]);
                /* wait_group is warp-synchronous: once it returns, this warp's
                 * part of k-block i-1 no longer reads its stage; the stage is
                 * free when all 8 warps (x CLUSTER CTAs) have said so. */
                if (i > 0 && lane == 0) {
                    cuops_mbar_arrive(TC_EMPTY_BAR(prev_stage));
                    if (CLUSTER > 1) cuops_mbar_arrive_cluster(cuops_map_cluster_rank(TC_EMPTY_BAR(prev_stage), peer));
                }
                prev_stage = stage;
                if (++stage == STAGES) {
                    stage = 0;
                    phase ^= 1u;
                }
            }
            cuops_wgmma_wait<0>();
#pragma unroll
            for (int r = 0; r < BN / 2; r++) cuops_reg_fence(acc[r]);
            if (lane == 0) {
                cuops_mbar_arrive(TC_EMPTY_BAR(prev_stage));
                if (CLUSTER > 1) cuops_mbar_arrive_cluster(cuops_map_cluster_rank(TC_EMPTY_BAR(prev_stage), peer));
            }

            if (tm < p.tiles_m) {
                const int row0 = tm * TC_BM + consumer * 64, col0 = tn * BN;
                if (p.tma_store)
                    tc_epilogue_tma<BN, OutT>(p, &tmap_c, acc, epi_bufs, 1u + (uint32_t)consumer,
                                              epi_count, row0, col0);
                else
                    tc_epilogue_regs<BN, OutT>(p, acc, row0, col0);
            }
        }
        /* The staging buffers must outlive the bulk stores reading them. */
        if (p.tma_store && (threadIdx.x % 128) == 0) cuops_tma_store_wait_all();
    }
    /* No CTA may leave while its peer can still arrive on its barriers. */
    if (CLUSTER > 1) cuops_cluster_sync();
#undef TC_FULL_BAR
#undef TC_EMPTY_BAR
#endif /* CUOPS_SM90A_DEVICE */
}

/* ---- host side ----------------------------------------------------------- */

typedef void (*tc_kernel_fn)(const CUtensorMap, const CUtensorMap, const CUtensorMap,
                             const tc_params_t);

template <int BN, int CLUSTER>
static tc_kernel_fn tc_pick_kernel(cuops_dtype_t ab, cuops_dtype_t c)
{
    const bool bf = (ab == CUOPS_DTYPE_BF16);
    switch (c) {
    case CUOPS_DTYPE_F16:
        return bf ? sm90_tc_kernel<BN, CLUSTER, true, __half>
                  : sm90_tc_kernel<BN, CLUSTER, false, __half>;
    case CUOPS_DTYPE_BF16:
        return bf ? sm90_tc_kernel<BN, CLUSTER, true, __nv_bfloat16>
                  : sm90_tc_kernel<BN, CLUSTER, false, __nv_bfloat16>;
    case CUOPS_DTYPE_F32:
        return bf ? sm90_tc_kernel<BN, CLUSTER, true, float>
                  : sm90_tc_kernel<BN, CLUSTER, false, float>;
    default:
        return NULL;
    }
}

int cuops_sm90_tma_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    /* tile_n 128: the stricter tile-count limit of the two widths */
    return cuops_sm90_common_supports(h, d, (size_t)TC_SMEM_MAX, 128);
}

/* How many 2-CTA clusters of this kernel the device runs at once (66 on a
 * 132-SM H200 if every GPC pairs up; fewer if some cannot). Cached per
 * device and tile width; a racing first call computes the same value. */
static int tc_max_clusters(struct cuops_handle *h, tc_kernel_fn fn, int bn, int smem)
{
    static int cache[16][2];
    const int dev = h->device, slot = bn == 256 ? 1 : 0;
    if (dev >= 0 && dev < 16 && cache[dev][slot] > 0) return cache[dev][slot];
    int fallback = h->num_sms / 2 > 0 ? h->num_sms / 2 : 1;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(2 * (unsigned)fallback);
    cfg.blockDim = dim3(TC_THREADS);
    cfg.dynamicSmemBytes = (size_t)smem;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, (const void *)fn, &cfg) != cudaSuccess ||
        clusters <= 0) {
        (void)cudaGetLastError();
        return fallback;
    }
    if (dev >= 0 && dev < 16) cache[dev][slot] = clusters;
    return clusters;
}

template <int BN, int CLUSTER>
static cuops_status_t tc_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                const cuops_options_t *opt, const char *name)
{
    if (!cuops_sm90_tma_supports(h, d))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: needs sm_90, f16/bf16 inputs, f16/bf16/f32 output, m > 64", name);
    if (d->k == 0) {
        cuops_status_t st = cuops_sm90_scale_c(h, d);
        if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = name;
        return st;
    }
    const unsigned flags = opt ? opt->flags : 0u;

    const void *a = NULL, *b = NULL;
    int64_t lda = 0, ldb = 0;
    cuops_status_t st = cuops_sm90_kmajor_operands(h, d, &a, &lda, &b, &ldb);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    CUtensorMap tmap_a, tmap_b, tmap_c;
    st = cuops_sm90_encode_kmajor(h, &tmap_a, a, d->ab_type, d->m, d->k, lda, TC_BM);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = cuops_sm90_encode_kmajor(h, &tmap_b, b, d->ab_type, d->n, d->k, ldb,
                                  (uint32_t)(BN / CLUSTER));
    if (st != CUOPS_STATUS_SUCCESS) return st;
    const size_t esize = cuops_dtype_size(d->c_type);
    const int tma_store = d->beta == 0.0f && cuops_sm90_c_store_ok(d->c, d->ldc, esize);
    memset(&tmap_c, 0, sizeof(tmap_c));
    if (tma_store) {
        st = cuops_sm90_encode_c_store(h, &tmap_c, d->c, d->c_type, d->m, d->n, d->ldc);
        if (st != CUOPS_STATUS_SUCCESS) return st;
    }

    tc_params_t p;
    memset(&p, 0, sizeof(p));
    p.c = d->c;
    p.ldc = d->ldc;
    p.m = (int)d->m;
    p.n = (int)d->n;
    p.alpha = d->alpha;
    p.beta = d->beta;
    p.tiles_m = (int)cuops_ceil_div(d->m, TC_BM);
    p.tiles_n = (int)cuops_ceil_div(d->n, BN);
    p.units_m = (int)cuops_ceil_div(p.tiles_m, CLUSTER);
    p.num_units = p.units_m * p.tiles_n;
    p.k_blocks = (int)cuops_ceil_div(d->k, TC_BK);
    /* 16 tile rows per raster group, as in the first version */
    p.group_rows = (flags & CUOPS_FLAG_NO_SWIZZLE) ? 0 : TC_GROUP_ROWS / CLUSTER;
    p.stagger_k = (flags & CUOPS_FLAG_STAGGER_K) ? 1 : 0;
    p.c_pair_ok = cuops_aligned(d->c, 2 * esize) && (d->ldc % 2 == 0);
    p.tma_store = tma_store;

    tc_kernel_fn fn = tc_pick_kernel<BN, CLUSTER>(d->ab_type, d->c_type);
    if (!fn) return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "%s: no kernel for c_type", name);
    const int smem = tc_smem_bytes(BN);
    CUOPS_CUDA_TRY(h, cudaFuncSetAttribute((const void *)fn,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    if (CLUSTER == 1) {
        const int grid = p.num_units < h->num_sms ? p.num_units : h->num_sms;
        fn<<<grid, TC_THREADS, smem, cuops_stream(h)>>>(tmap_a, tmap_b, tmap_c, p);
        return cuops_cuda_check_launch(h, name);
    }
    const int max_clusters = tc_max_clusters(h, fn, BN, smem);
    const int clusters = p.num_units < max_clusters ? p.num_units : max_clusters;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = CLUSTER;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)(clusters * CLUSTER));
    cfg.blockDim = dim3(TC_THREADS);
    cfg.dynamicSmemBytes = (size_t)smem;
    cfg.stream = cuops_stream(h);
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    cudaError_t err = cudaLaunchKernelEx(&cfg, fn, tmap_a, tmap_b, tmap_c, p);
    if (err != cudaSuccess) return cuops_cuda_fail(h, err, name);
    return cuops_cuda_check_launch(h, name);
}

cuops_status_t cuops_sm90_tma_launch_128x256_c2(struct cuops_handle *h,
                                                const cuops_gemm_desc_t *d,
                                                const cuops_options_t *opt)
{
    cuops_status_t st = tc_launch<256, 2>(h, d, opt, "sm90_tma_128x256_c2");
    if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = "sm90_tma_128x256_c2";
    return st;
}
cuops_status_t cuops_sm90_tma_launch_128x128_c2(struct cuops_handle *h,
                                                const cuops_gemm_desc_t *d,
                                                const cuops_options_t *opt)
{
    cuops_status_t st = tc_launch<128, 2>(h, d, opt, "sm90_tma_128x128_c2");
    if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = "sm90_tma_128x128_c2";
    return st;
}
cuops_status_t cuops_sm90_tma_launch_128x256(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                             const cuops_options_t *opt)
{
    cuops_status_t st = tc_launch<256, 1>(h, d, opt, "sm90_tma_128x256");
    if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = "sm90_tma_128x256";
    return st;
}
cuops_status_t cuops_sm90_tma_launch_128x128(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                             const cuops_options_t *opt)
{
    cuops_status_t st = tc_launch<128, 1>(h, d, opt, "sm90_tma_128x128");
    if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = "sm90_tma_128x128";
    return st;
}

/* The waves model of the header comment. One tile row (m <= 128) would leave
 * the second CTA of every cluster idle, so it runs without clusters. */
cuops_status_t cuops_sm90_tma_launch_pick(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                          const cuops_options_t *opt)
{
    const int64_t tiles_m = cuops_ceil_div(d->m, TC_BM);
    const int64_t pair_rows = tiles_m == 1 ? 1 : cuops_ceil_div(tiles_m, 2);
    const int64_t slots = tiles_m == 1 ? (h->num_sms > 0 ? h->num_sms : 1)
                                       : (h->num_sms / 2 > 0 ? h->num_sms / 2 : 1);
    const int64_t rounds_256 = cuops_ceil_div(pair_rows * cuops_ceil_div(d->n, 256), slots);
    const int64_t rounds_128 = cuops_ceil_div(pair_rows * cuops_ceil_div(d->n, 128), slots);
    const bool narrow = 13 * rounds_128 < 20 * rounds_256; /* 0.65 x rounds_128 < rounds_256 */
    if (tiles_m == 1)
        return narrow ? cuops_sm90_tma_launch_128x128(h, d, opt)
                      : cuops_sm90_tma_launch_128x256(h, d, opt);
    return narrow ? cuops_sm90_tma_launch_128x128_c2(h, d, opt)
                  : cuops_sm90_tma_launch_128x256_c2(h, d, opt);
}
