/*
 * probe_tma.cu - how fast a TMA-fed shared-memory ring streams a large
 * K-major weight out of HBM, by the shape of its boxes, the depth of its
 * ring, the number of CTAs and how the work is dealt to them.
 *
 * Why: at 1 x 28672 x 8192 (470 MB of f16 weight) the dense decode GEMM
 * (sm90_decode_wgmma: 112 CTAs, one 256-row x 64-k box of 32 KB per stage, 6
 * stages, each freed one block late) holds DRAM at ~85.5 % of its peak by ncu,
 * cuBLAS's kernel for the same call (nvjet ..._128x8_64x12_2x1: 132 CTAs,
 * 128-row x 64-k boxes, 12 stages, clusters of two) at ~88.6 % (run P210).
 * Here the products are gone: a producer thread issues the boxes, a consumer
 * warp waits for each stage, touches it and frees it. What is left is the
 * stream alone, so the rows say whether the shape of the stream is worth the
 * 3 % or whether it is elsewhere.
 *
 * Work: the [rows x k] matrix in row tiles of TILE_ROWS rows, each walked
 * along k in units of one stage (KBOXES boxes of BOX_K columns side by side).
 * "static": CTA c takes tiles c, c + G, ...; "split": the tiles' units in
 * order, cut into G equal ranges (stream-K without the meeting of partials).
 * LAG 1 frees a stage when the next one has landed (the decode GEMM's
 * wgmma.wait_group 1), LAG 0 as soon as the consumer has read it.
 */
#include <cudaTypedefs.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "cuda/common/ptx_sm90.cuh"

#define TMA_ROWS 28672
#define TMA_K 8192

typedef struct tma_stream_args {
    int tiles;    /* row tiles of the matrix */
    int units;    /* stage-sized units per row tile (k / (BOX_K * KBOXES)) */
    int split;    /* 0: whole tiles dealt round-robin; 1: units cut into equal ranges */
} tma_stream_args_t;

#if CUOPS_SM90A_DEVICE
/* L2 eviction hint for a box that is read once: the policy register
 * (createpolicy) rides beside the TMA. */
static __device__ __forceinline__ void tma_load_2d_evict_first(uint32_t dst, const void *map,
                                                              uint32_t bar, int32_t c0,
                                                              int32_t c1, uint64_t policy)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
        "l"(map), "r"(c0), "r"(c1), "r"(bar), "l"(policy)
        : "memory");
}
#endif

/* GROUP > 1 (static deal only): GROUP consecutive units of a tile issued
 * together once their GROUP stages are free, each cut into boxes of PIECE
 * rows (the map's box height; PIECE = TILE_ROWS: whole) and issued piece by
 * piece across the group: the decode GEMM's paired issue since P213 is
 * GROUP 2, PIECE 64 on 256-row tiles. */
template <int TILE_ROWS, int BOX_K, int KBOXES, int STAGES, int LAG, int HINT, int GROUP = 1,
          int PIECE = TILE_ROWS>
__global__ void __launch_bounds__(64, 1)
    tma_stream_kernel(const __grid_constant__ CUtensorMap map, tma_stream_args_t a, uint32_t *sink)
{
#if CUOPS_SM90A_DEVICE
    static_assert(GROUP >= 1 && GROUP < STAGES && TILE_ROWS % PIECE == 0 && PIECE % 8 == 0,
                  "a group needs a free stage beyond it; pieces keep the 1 KB swizzle period");
    constexpr uint32_t BOX_BYTES = TILE_ROWS * BOX_K * 2;
    constexpr uint32_t STAGE_BYTES = BOX_BYTES * KBOXES;
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = cuops_smem_align1024(smem_raw);
    const uint32_t bars = base + STAGES * STAGE_BYTES;
#define TMA_FULL(s) (bars + 8u * (uint32_t)(s))
#define TMA_EMPTY(s) (bars + 8u * (uint32_t)(STAGES + (s)))
    if (threadIdx.x == 0) {
        cuops_tma_prefetch_map(&map);
        for (int s = 0; s < STAGES; s++) {
            cuops_mbar_init(TMA_FULL(s), 1);
            cuops_mbar_init(TMA_EMPTY(s), 1);
        }
        cuops_mbar_init_fence();
    }
    __syncthreads();

    /* this CTA's units, counted from 0: split, [u0, u0 + count) of all the
     * units in tile order; static, the units of tiles blockIdx.x + t * G */
    long u0 = 0, count;
    if (a.split) {
        const long total = (long)a.tiles * a.units;
        u0 = total * blockIdx.x / gridDim.x;
        count = total * (blockIdx.x + 1) / gridDim.x - u0;
    } else {
        const int my_tiles = (int)blockIdx.x < a.tiles ? (a.tiles - 1 - (int)blockIdx.x) / (int)gridDim.x + 1 : 0;
        count = (long)my_tiles * a.units;
    }
    auto unit_at = [&](long i, int *tile, int *ku) {
        if (a.split) {
            *tile = (int)((u0 + i) / a.units);
            *ku = (int)((u0 + i) % a.units);
        } else {
            *tile = (int)(blockIdx.x + (i / a.units) * gridDim.x);
            *ku = (int)(i % a.units);
        }
    };

    if (threadIdx.x == 0) {
        uint64_t policy = 0;
        if (HINT) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
        int stage = 0;
        uint32_t phase = 0;
        if (GROUP > 1) {
            /* units of a tile are consecutive here (static deal) and a tile's
             * count is a multiple of GROUP (the host checks) */
            for (long i = 0; i < count; i += GROUP) {
                int tile, ku;
                unit_at(i, &tile, &ku);
                int st[GROUP];
#pragma unroll
                for (int g = 0; g < GROUP; g++) {
                    st[g] = stage;
                    cuops_mbar_wait(TMA_EMPTY(stage), phase ^ 1u);
                    cuops_mbar_arrive_expect_tx(TMA_FULL(stage), STAGE_BYTES);
                    cuops_ring_advance<STAGES>(stage, phase);
                }
#pragma unroll
                for (int p = 0; p < TILE_ROWS / PIECE; p++)
#pragma unroll
                    for (int g = 0; g < GROUP; g++)
#pragma unroll
                        for (int j = 0; j < KBOXES; j++)
                            cuops_tma_load_2d(base + st[g] * STAGE_BYTES + j * BOX_BYTES +
                                                  p * PIECE * BOX_K * 2,
                                              &map, TMA_FULL(st[g]), ((ku + g) * KBOXES + j) * BOX_K,
                                              tile * TILE_ROWS + p * PIECE);
            }
        }
        for (long i = 0; GROUP == 1 && i < count; i++) {
            int tile, ku;
            unit_at(i, &tile, &ku);
            cuops_mbar_wait(TMA_EMPTY(stage), phase ^ 1u);
            cuops_mbar_arrive_expect_tx(TMA_FULL(stage), STAGE_BYTES);
#pragma unroll
            for (int j = 0; j < KBOXES; j++) {
                const uint32_t dst = base + stage * STAGE_BYTES + j * BOX_BYTES;
                const int32_t col = (ku * KBOXES + j) * BOX_K, row = tile * TILE_ROWS;
                if (HINT) tma_load_2d_evict_first(dst, &map, TMA_FULL(stage), col, row, policy);
                else cuops_tma_load_2d(dst, &map, TMA_FULL(stage), col, row);
            }
            cuops_ring_advance<STAGES>(stage, phase);
        }
    } else if (threadIdx.x >= 32) {
        const int lane = threadIdx.x - 32;
        uint32_t acc = 0;
        int stage = 0, prev = 0;
        uint32_t phase = 0;
        for (long i = 0; i < count; i++) {
            cuops_mbar_wait(TMA_FULL(stage), phase);
            uint32_t v;
            asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(base + stage * STAGE_BYTES + 4u * lane));
            acc ^= v;
            __syncwarp();
            if (lane == 0) {
                if (LAG == 0) cuops_mbar_arrive(TMA_EMPTY(stage));
                else if (i > 0) cuops_mbar_arrive(TMA_EMPTY(prev));
            }
            prev = stage;
            cuops_ring_advance<STAGES>(stage, phase);
        }
        if (acc == 0x9e3779b9u) sink[0] = acc;
    }
#undef TMA_FULL
#undef TMA_EMPTY
#else
    (void)map; (void)a; (void)sink;
#endif
}

static PFN_cuTensorMapEncodeTiled_v12000 tma_encode_fn(void)
{
    void *p = NULL;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return (PFN_cuTensorMapEncodeTiled_v12000)p;
}

/* One configuration: its map, its launch, its name. */
typedef struct tma_config {
    const char *name;
    int tile_rows, box_k, kboxes, stages, lag, hint, split, grid, group, piece;
    CUtensorMapL2promotion promotion;
    const void *kernel;
} tma_config_t;

template <int TILE_ROWS, int BOX_K, int KBOXES, int STAGES, int LAG, int HINT, int GROUP = 1,
          int PIECE = TILE_ROWS>
static tma_config_t tma_cfg(const char *name, int split, int grid,
                            CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE)
{
    tma_config_t c = {name, TILE_ROWS, BOX_K, KBOXES, STAGES, LAG, HINT, split, grid, GROUP, PIECE,
                      promotion,
                      (const void *)tma_stream_kernel<TILE_ROWS, BOX_K, KBOXES, STAGES, LAG, HINT,
                                                      GROUP, PIECE>};
    return c;
}

static size_t tma_smem_bytes(const tma_config_t &c)
{
    return (size_t)c.stages * c.tile_rows * c.box_k * 2 * c.kboxes + 16 * c.stages + 1024;
}

void probe_tma(void)
{
    if (g_dev.prop.major < 9) {
        printf("\n== tma: needs sm_90 (TMA), skipped\n");
        return;
    }
    PFN_cuTensorMapEncodeTiled_v12000 encode = tma_encode_fn();
    if (!encode) {
        printf("\n== tma: cuTensorMapEncodeTiled not available from the driver, skipped\n");
        return;
    }
    const int sms = g_dev.prop.multiProcessorCount;
    const size_t bytes = (size_t)TMA_ROWS * TMA_K * 2;
    const int nbuf = 2; /* 2 x 470 MB rotated: every launch reads HBM */
    uint8_t *buf[2];
    uint32_t *sink;
    for (int i = 0; i < nbuf; i++) {
        if (cudaMalloc(&buf[i], bytes) != cudaSuccess) {
            printf("(not enough memory for the tma probe)\n");
            while (i-- > 0) cudaFree(buf[i]);
            return;
        }
        PROBE_CHECK(cudaMemset(buf[i], 0x3c, bytes));
    }
    PROBE_CHECK(cudaMalloc(&sink, 4));
    /* timed launches per configuration and pass (CUOPS_PROBE_REPS: 1 under
     * ncu, which then sees every configuration's warm-up and one launch) */
    const char *reps_env = getenv("CUOPS_PROBE_REPS");
    const int reps = reps_env && atoi(reps_env) > 0 ? atoi(reps_env) : 15;

    /* the reference: a device copy of the same bytes (read + write) */
    uint8_t *dst = NULL;
    double copy_gbps = -1;
    if (cudaMalloc(&dst, bytes) == cudaSuccess) {
        int r = 0;
        const float t = probe_time_ms(
            [&] { cudaMemcpyAsync(dst, buf[r++ % nbuf], bytes, cudaMemcpyDeviceToDevice); }, reps,
            true);
        copy_gbps = 2.0 * bytes / (t * 1e-3) / 1e9;
        cudaFree(dst);
    } else {
        (void)cudaGetLastError();
    }

    const int g_tiles = sms; /* persistent grids: one CTA per SM */
    tma_config_t cfgs[] = {
        /* the decode GEMM's stream as it runs at 28672 x 8192 */
        tma_cfg<256, 64, 1, 6, 1, 0>("256x64 6st lag1 112 static (decode gemm)", 0, 112),
        tma_cfg<256, 64, 1, 6, 0, 0>("256x64 6st lag0 112 static", 0, 112),
        tma_cfg<256, 64, 1, 5, 1, 0>("256x64 5st lag1 112 static", 0, 112),
        tma_cfg<256, 64, 1, 7, 1, 0>("256x64 7st lag1 112 static", 0, 112),
        tma_cfg<256, 64, 1, 6, 1, 1>("256x64 6st lag1 112 static evict_first", 0, 112),
        tma_cfg<256, 64, 1, 6, 1, 0>("256x64 6st lag1 112 static promo256", 0, 112,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B),
        /* longer runs of each row per stage (same 32 KB) */
        tma_cfg<128, 64, 2, 6, 1, 0>("128x128 6st lag1 112 static", 0, 112),
        tma_cfg<64, 64, 4, 6, 1, 0>("64x256 6st lag1 112 static", 0, 112),
        /* finer stages of 16 KB, twice as many */
        tma_cfg<128, 64, 1, 12, 1, 0>("128x64 12st lag1 112 static", 0, 112),
        tma_cfg<256, 32, 1, 12, 1, 0>("256x32 12st lag1 112 static (64B swizzle)", 0, 112),
        /* every SM: cuBLAS's shape, and ours, with the units cut evenly */
        tma_cfg<128, 64, 1, 12, 1, 0>("128x64 12st lag1 132 split (cublas-like)", 1, g_tiles),
        tma_cfg<128, 64, 1, 13, 1, 0>("128x64 13st lag1 132 split", 1, g_tiles),
        tma_cfg<256, 64, 1, 6, 1, 0>("256x64 6st lag1 132 split", 1, g_tiles),
        tma_cfg<128, 64, 2, 6, 1, 0>("128x128 6st lag1 132 split", 1, g_tiles),
        tma_cfg<128, 64, 1, 12, 1, 0>("128x64 12st lag1 132 static (rounds of tiles)", 0, g_tiles),
        /* the decode GEMM's stages issued in groups (P213): pairs of 64-k
         * blocks cut in 64-row boxes (the GEMM since 2f3f184), in whole boxes,
         * in 32- and 128-row boxes, and groups of four (512 bytes per row) */
        tma_cfg<256, 64, 1, 6, 1, 0, 2, 64>("256x64 6st pairs 64-row boxes (decode gemm P213)", 0, 112),
        tma_cfg<256, 64, 1, 6, 1, 0, 2, 256>("256x64 6st pairs whole boxes", 0, 112),
        tma_cfg<256, 64, 1, 6, 1, 0, 2, 32>("256x64 6st pairs 32-row boxes", 0, 112),
        tma_cfg<256, 64, 1, 6, 1, 0, 2, 128>("256x64 6st pairs 128-row boxes", 0, 112),
        tma_cfg<256, 64, 1, 6, 1, 0, 4, 64>("256x64 6st quads 64-row boxes", 0, 112),
    };
    const int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);

    printf("\n== tma (a K-major f16 weight of %d x %d, %.0f MB, streamed by TMA into a shared ring; "
           "device copy of the same bytes %.0f GB/s)\n",
           TMA_ROWS, TMA_K, bytes / 1e6, copy_gbps);
    float t_us[2][32];
    /* two passes, the second in reverse order, so that drift shows */
    for (int pass = 0; pass < 2; pass++) {
        for (int o = 0; o < ncfg; o++) {
            const int ci = pass == 0 ? o : ncfg - 1 - o;
            const tma_config_t &c = cfgs[ci];
            t_us[pass][ci] = -1;
            const size_t smem = tma_smem_bytes(c);
            if (smem > (size_t)g_dev.prop.sharedMemPerBlockOptin) continue;
            PROBE_CHECK(cudaFuncSetAttribute(c.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
            CUtensorMap maps[2];
            bool ok = true;
            for (int b = 0; b < nbuf && ok; b++) {
                const cuuint64_t dims[2] = {(cuuint64_t)TMA_K, (cuuint64_t)TMA_ROWS};
                const cuuint64_t strides[1] = {(cuuint64_t)TMA_K * 2};
                const cuuint32_t box[2] = {(cuuint32_t)c.box_k, (cuuint32_t)c.piece};
                const cuuint32_t estr[2] = {1, 1};
                ok = encode(&maps[b], CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, buf[b], dims, strides, box, estr,
                            CU_TENSOR_MAP_INTERLEAVE_NONE,
                            c.box_k == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B, c.promotion,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
            }
            if (!ok) continue;
            tma_stream_args_t args;
            args.tiles = TMA_ROWS / c.tile_rows;
            args.units = TMA_K / (c.box_k * c.kboxes);
            args.split = c.split;
            if (c.group > 1 && (c.split || args.units % c.group)) continue; /* groups: static deal, whole */
            int rot = 0;
            t_us[pass][ci] = 1e3f * probe_time_ms(
                                        [&] {
                                            const CUtensorMap &m = maps[rot++ % nbuf];
                                            void *kargs[] = {(void *)&m, (void *)&args, (void *)&sink};
                                            cudaLaunchKernel(c.kernel, dim3(c.grid), dim3(64), kargs, smem, 0);
                                        },
                                        reps, true);
        }
    }
    printf("%-46s %6s %7s %9s %9s %9s %7s\n", "config", "CTAs", "smemKB", "us (1)", "us (2)", "GB/s",
           "of copy");
    for (int ci = 0; ci < ncfg; ci++) {
        const tma_config_t &c = cfgs[ci];
        if (t_us[0][ci] < 0 || t_us[1][ci] < 0) {
            printf("%-46s (not run: shared memory or tensor map refused)\n", c.name);
            continue;
        }
        const double med = 0.5 * (t_us[0][ci] + t_us[1][ci]);
        const double gbps = bytes / (med * 1e-6) / 1e9;
        const double of_copy = copy_gbps > 0 ? gbps / copy_gbps : -1;
        probe_add("tma", c.name, (double)bytes, gbps, "GB/s", of_copy, "of copy");
        printf("%-46s %6d %7.1f %9.2f %9.2f %9.0f %6.1f%%\n", c.name, c.grid, tma_smem_bytes(c) / 1024.0,
               t_us[0][ci], t_us[1][ci], gbps, 100.0 * of_copy);
    }
    for (int i = 0; i < nbuf; i++) cudaFree(buf[i]);
    cudaFree(sink);
}
