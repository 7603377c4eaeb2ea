/*
 * gemm_sm90.cu - cuops's default f16/bf16 GEMM on Hopper (sm_90a): TMA loads,
 * wgmma tensor-core MMAs, warp specialization, persistent CTAs.
 *
 *   C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C[m,n], fp32 accumulate,
 *   C in f16, bf16 or f32.
 *
 * Kernel "sm90_ws_128x256" (one table entry):
 *   - CTA tile 128 x 256 x 64, 384 threads = 3 warpgroups:
 *       warpgroup 0  producer: one thread issues every TMA load; the group
 *                    gives its registers back (setmaxnreg 40);
 *       warpgroups 1, 2  consumers: rows 0-63 and 64-127 of the tile, one
 *                    wgmma m64n256k16 per 16 of K (setmaxnreg 232; the
 *                    64 x 256 fp32 accumulator is 128 registers per thread).
 *   - 4-stage ring of (A 128x64, B 256x64) = 48 KB stages = 192 KB of shared
 *     memory, each stage guarded by a `full` mbarrier (TMA bytes landed) and
 *     an `empty` mbarrier (both consumers done reading it).
 *   - Persistent: grid = min(#SMs, #tiles); CTA b takes tiles b, b + grid, ...
 *     in grouped order (16 tile-rows per group) so the tiles in flight at once
 *     share A and B panels in L2. CUOPS_FLAG_NO_SWIZZLE: plain row-major
 *     order. CUOPS_FLAG_STAGGER_K: each tile starts its K loop at k-block
 *     (tile index mod #k-blocks), seed 000's StaggerU (the fp32 sum is taken
 *     in a rotated order, so results may differ in the last bits).
 *   - Split tail: where the last round holds fewer tiles than there are
 *     CTAs, each of those tiles is split along K into 2 or 3 pieces dealt
 *     like tiles (the plan: cuops_sm90_tail_splits in gemm_tuning.h; the
 *     units: sm90_tail_unit): the pieces' fp32 partials go to workspace and
 *     the last piece of each tile to arrive (a per-tile counter in the
 *     handle's gemm state) sums them in piece order and stores the tile;
 *     bitwise identical run to run.
 *     cuops_last_kernel then names the kernel with "_tail";
 *     options.split_k = 1 turns the tail off.
 *   - Epilogue: for 16-bit C, beta == 0, n % 8 == 0 and a C that TMA can
 *     address, stmatrix into two 8 KB shared buffers per consumer (64 x 64
 *     boxes, 128-byte swizzle) and TMA stores, which the warps do not wait
 *     for (sm90_epilogue_tma; 4-24 % faster, docs/gemm.md). A 16-bit C
 *     with beta == 0 that TMA cannot address in place (odd ldc, base off 16
 *     bytes, n % 8 != 0): the same boxes, each row moved in shared memory
 *     onto C's own 16-byte units and stored by TMA through maps over the
 *     rows j mod 8, A's tile rows loaded in that order (sm90_shift_maps_t,
 *     sm90_epilogue_shift, kernel sm90_ws_shift_kernel); the multicast
 *     form writes such a C into aligned workspace and copies it out
 *     (sm90_ws_run: "staged C"). Otherwise (f32 C, beta != 0)
 *     straight from the accumulator registers to global memory, masked at
 *     the ragged M/N edges; beta == 0 never reads C.
 *
 * Kernel "sm90_ws_128x256_splitk" (its own table entry, listed before
 * "sm90_ws_128x256"): the same main loop (one CTA body, sm90_ws_cta, with
 * a compile-time SPLIT switch) for the calls whose tile grid covers at most
 * half of the SMs (m = 128, n = 4096: 16 tiles on 132 SMs), with K split S
 * ways (sm90_splitk_splits). Work unit u = tile * S + s covers k-blocks
 * [s*kb/S, (s+1)*kb/S) of tile u / S; its CTA writes the fp32 accumulators
 * to a workspace of partials, and a second kernel (sm90_splitk_fixup_kernel)
 * sums the S partials of each tile in the fixed order s = 0..S-1, applies
 * alpha and beta and stores C. No atomics: bitwise identical run to run.
 * CUOPS_FLAG_STAGGER_K does not apply (each split is its own K range).
 *
 * Kernel "sm90_ws_128x256_splitk_dsmem" (first in the table, so auto's
 * split path wherever its clusters fit): the same split, with the S CTAs of
 * a tile launched as one thread-block cluster (S <= 8, and only where the
 * device can hold all the clusters at once). After its main loop each CTA
 * keeps its fp32 partial in its own shared memory (the stage ring is free
 * by then: 128 KB of the 192), the cluster synchronises, and CTA r sums
 * 1/S of the tile's columns over the S CTAs' shared memory (distributed
 * shared memory, ld.shared::cluster) in the fixed order s = 0..S-1 and
 * stores C. No workspace, no second kernel, no partials through L2/HBM;
 * bitwise identical run to run.
 *
 * Kernel "sm90_ws_128x256_mc2" (a study entry after "sm90_ws_128x256_direct_c";
 * auto never reaches it): the unsplit kernel in clusters of two CTAs along M
 * that share each k-block's B tile by TMA multicast (sm90_ws_cta, MCM x
 * MCN): 32 instead of 48 KB from L2 per CTA and k-block; measured +0-1 % on
 * the big suite (docs/gemm.md, "Clusters of two sharing B"). The same form
 * on the 128-column tiles: "sm90_ws_64x128_mc2" and, in clusters of four
 * along M, "sm90_ws_64x128_mc4" (auto's picks for small grids whose operand
 * rows sit off the 128-byte lines: 1000^3, 640 x 1024 x 1000), the study
 * entry "sm90_ws_128x128_mc2" (slower than 128 x 128 wherever measured), and
 * the study entries "sm90_ws_64x128_mc2x2" and "_mc4x2", whose clusters
 * also share A along N (not faster than four along M where measured:
 * docs/gemm.md, "Larger clusters").
 * Study entries "sm90_ws_128x256_pack_inside" and "sm90_ws_128x128_pack_inside"
 * (kernel sm90_ws_shift_pack_kernel): operands that are only misaligned
 * packed inside the shifted-rows kernel by the producer warpgroup's three
 * idle warps (gemm_sm90_fused_pack.cuh), where the plain entries launch the
 * row copy before it; measured slower (docs/gemm.md, P226-P227). Their
 * forms "_pack_bulk" fetch each row's window by one bulk copy. The same
 * kernel with whole CTAs packing instead (sm90_pack_cta): "_pack_ctas",
 * "_pack_ctas8", "_pack_ctas24" (16, 8, 24 packer CTAs, which then exit)
 * and "_pack_join", "_pack_join8" (16, 8, which then run tiles too, every
 * unit claimed from a counter); "sm90_ws_128x128_pack_join" (P228).
 * Kernels "sm90_ws_128x128", "sm90_ws_128x128_splitk_dsmem" and
 * "sm90_ws_64x128" (last in the table): the same CTA body with a smaller
 * tile (sm90_tile<BM, BN>; in a 64-row tile the two consumers split the
 * columns), for grids that 128 x 256 tiles leave mostly idle. Auto reaches
 * them through cuops_gemm_sm90_auto_tile128 (measured rule, below the
 * table), which gemm_tuning.h asks before walking the table.
 *
 * Operands are read in place K-major (A as [m,k], B as [n,k]: the trans_a =
 * N, trans_b = T case of torch linear) or MN-major (A as [k,m], B as [k,n]:
 * 64 x 64 boxes that wgmma reads with its transpose immediate; sm90_ws_cta's
 * MN, in every form but the multicast study entries, A not in the
 * shifted-rows form). Any other operand, and any operand whose base is not
 * 16-byte aligned or whose row stride is not a multiple of 16 bytes, is first
 * packed K-major into the workspace (gemm_sm90_pack.cu). TMA zero-fills
 * out-of-range rows and K columns, so no shape needs padding.
 *
 * Why these numbers (H200: 132 SMs, ~1.83 GHz under load, dense f16 989
 * TFLOP/s = ~4096 FLOP/clock/SM): a stage holds 128*256*64*2 = 4.2 MFLOP =
 * ~1024 clocks of tensor-core work and 48 KB of operands (47 B/clock/SM, from
 * L2 mostly). With 3 stages in flight ahead of the MMAs the loads have ~3000
 * clocks to land, several times the L2/HBM latency (Little's law: 3 x 48 KB
 * in flight per SM covers ~3000 clocks at 47 B/clock).
 *
 * Build: the body exists only in the sm_90a pass (CUOPS_SM90A_DEVICE); the
 * sm_80 pass compiles empty kernels that the dispatch never launches.
 */
#include "cuda/common/cluster_splitk.cuh"
#include "cuda/common/ptx_sm90.cuh"
#include "cuda/gemm/gemm_kernels.h"
#include "cuda/gemm/gemm_sm90.h"
#include "cuda/gemm/gemm_sm90_fused_pack.cuh"
#include "cuda/gemm/gemm_tuning.h"

#define SM90_BK 64
#define SM90_THREADS 384
/* Epilogue through TMA stores: per consumer two buffers of one 64 x 64
 * 16-bit box (8 KB, 128B swizzle), filled and stored in turn. */
#define SM90_EPI_BUF_BYTES (64 * 64 * 2)
#define SM90_EPI_BYTES (2 * 2 * SM90_EPI_BUF_BYTES)
#define SM90_GROUP_ROWS 16
#define SM90_PRODUCER_REGS 40
#define SM90_CONSUMER_REGS 232
/* setmaxnreg.inc waits until the CTA's pool holds what it asks for, and the
 * pool is what the launch gave: 384 threads at 168 registers. Counts past
 * it hang the kernel (80 + 2 x 216 did, P197). */
static_assert(SM90_PRODUCER_REGS + 2 * SM90_CONSUMER_REGS <= 3 * 168,
              "setmaxnreg: the warpgroups' counts must fit the registers of the launch");
/* Auto packs misaligned operands inside the kernel (1) or by a launch
 * before it (0): measured slower inside so far, the bulk form included
 * (docs/gemm.md, "The operands packed inside the GEMM kernel", P226-P227). */
#define SM90_PACK_INSIDE_AUTO 0
/* The kernel that packs its operands (gemm_sm90_fused_pack.cuh): the
 * producer warpgroup's three packer warps need more than 40 (ptxas spilled
 * at 40 and 48). A 256-column consumer keeps 224 without spilling; the
 * 128-column ones (64 accumulators) give more, and their producer still
 * spilled at 56. */
#define SM90_PACK_PRODUCER_REGS(BN) ((BN) == 256 ? 56 : 80)
#define SM90_PACK_CONSUMER_REGS(BN) ((BN) == 256 ? 224 : 208)
static_assert(SM90_PACK_PRODUCER_REGS(256) + 2 * SM90_PACK_CONSUMER_REGS(256) <= 3 * 168 &&
                  SM90_PACK_PRODUCER_REGS(128) + 2 * SM90_PACK_CONSUMER_REGS(128) <= 3 * 168,
              "setmaxnreg: the warpgroups' counts must fit the registers of the launch");

/* Split-K (see sm90_splitk_splits for the plan). */
#define SM90_SPLITK_MAX_SPLITS 16
#define SM90_SPLITK_MIN_K_BLOCKS 8          /* k > 448 */
#define SM90_SPLITK_MIN_BLOCKS_PER_SPLIT 4  /* >= one full ring of stages */
/* 128-column tiles split only where each split keeps >= 16 k-blocks: at 8
 * (1024^3, S = 2) the split ran 11.9 us against 10.6 unsplit (H200, 68a9c98) */
#define SM90_SPLITK_MIN_BLOCKS_PER_SPLIT_128 16
/* Fixup: one CTA of 128 threads (thread t reads what consumer thread t
 * wrote) per (tile, consumer, group of 4 float4 columns). */
#define SM90_FIXUP_THREADS 128
#define SM90_FIXUP_F4 4
#define SM90_FIXUP_BATCH 4 /* splits whose loads are issued together */
/* Cluster split-K: the S CTAs of a tile in one cluster (portable size). */
#define SM90_DSMEM_MAX_SPLITS CUOPS_CLUSTER_MAX_SPLITS

/* The tiles, BM x BN. 128 x 256 (4 stages of A 16 KB + B 32 KB): the
 * default. 128 x 128 (6 stages of 16 + 16 KB) and 64 x 128 (8 stages of
 * 8 + 16 KB): two or four times the tiles where 128 x 256 tiles leave SMs
 * idle (1024^3: 32 tiles on 132 SMs), at more operand bytes per FLOP from L2.
 * Every ring holds 192 KB. The two consumer warpgroups split a 128-row tile
 * by rows (each 64 x BN) and a 64-row tile by columns (each 64 x BN / 2). */
template <int BM, int BN> struct sm90_tile {
    static_assert((BM == 128 && (BN == 128 || BN == 256)) || (BM == 64 && BN == 128),
                  "tiles 128 x 256, 128 x 128 and 64 x 128");
    static constexpr int A_STAGE_BYTES = BM * SM90_BK * 2;
    static constexpr int B_STAGE_BYTES = BN * SM90_BK * 2;
    static constexpr int STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES;
    static constexpr int STAGES = 192 * 1024 / STAGE_BYTES;
    /* consumer c computes rows c * ROW_STEP .. + 63 and columns
     * c * COL_STEP .. + CN - 1 of the tile */
    static constexpr int CN = BM == 128 ? BN : BN / 2;
    static constexpr int ROW_STEP = BM == 128 ? 64 : 0;
    static constexpr int COL_STEP = BM == 128 ? 0 : CN;
    /* a consumer's 64 x CN fp32 accumulator per thread, as floats and as
     * float4s (the split-K partials: [consumer][float4 j][thread]) */
    static constexpr int ACC = CN / 2;
    static constexpr int F4 = CN / 8;
    static constexpr int PARTIAL_F4_PER_UNIT = 2 * F4 * 128;
    static constexpr int FIXUP_CTAS_PER_TILE = 2 * F4 / SM90_FIXUP_F4;
    /* stages + epilogue buffers + 2 mbarriers per stage + slack to align the
     * base to 1024 bytes (the 128B-swizzle atom: 8 rows x 128 bytes) */
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + SM90_EPI_BYTES + 2 * STAGES * 8 + 1024;
};

/* The kernel that packs its operands (sm90_ws_shift_pack_kernel): a ring
 * one stage shorter, the epilogue buffers and the barriers, then the three
 * packer warps' batch slots (128-byte aligned). */
template <int BM, int BN> __host__ __device__ constexpr int sm90_pack_smem_bytes()
{
    return sm90_tile<BM, BN>::SMEM_BYTES - sm90_tile<BM, BN>::STAGE_BYTES - 16 + 128 +
           SM90_PACK_WARPS * sm90_pack_slots(BN) * SM90_PACK_SLOT_BYTES + SM90_PACK_BAR_BYTES;
}
static_assert(sm90_pack_smem_bytes<128, 256>() <= 227 * 1024 &&
                  sm90_pack_smem_bytes<128, 128>() <= 227 * 1024 &&
                  sm90_pack_smem_bytes<64, 128>() <= 227 * 1024,
              "the packing kernels' shared memory");

typedef struct sm90_gemm_params {
    void *c;
    int64_t ldc;
    int m, n, k;
    float alpha, beta;
    int tiles_m, tiles_n, num_tiles, k_blocks;
    int group_rows;   /* 0: row-major tile order */
    int stagger_k;
    int c_pair_ok;    /* two adjacent C elements can be stored as one word */
    int c_tma;        /* 16-bit C, beta == 0, TMA-addressable: epilogue by TMA stores */
    int c_shift;      /* 16-bit C, beta == 0, rows off 16 bytes: sm90_epilogue_shift */
    /* Split tail (the plain kernel; cuops_sm90_tail_splits): units 0..dp_units-1 are
     * whole tiles; each of the sk_tiles tiles after them is split along K
     * into sk_splits pieces, units dp_units.. (sm90_tail_unit); all dealt
     * round-robin. sk_tiles = 0: no tail, dp_units = every tile. */
    int dp_units;
    int sk_tiles, sk_splits;
    float4 *sk_partials;    /* [piece][consumer][j][thread] */
    unsigned *sk_counters;  /* [tail tile][consumer]: pieces arrived; 0 between calls */
} sm90_gemm_params_t;

/* Shifted rows: a 16-bit C whose rows TMA cannot store to in place (ldc or
 * base off 16 bytes), beta == 0 (p.c_shift). A tensor store's box rows must
 * begin on 16-byte boundaries of global memory (an illegal instruction
 * otherwise, docs/gemm.md), and C's row r begins off[r mod 8] elements past
 * one: rows j, j + 8, ... share that offset and lie 8 ldc elements = 16 ldc
 * bytes apart, a row stride TMA accepts. So:
 *  - map c[j] covers the rows j mod 8, its base rounded down to 16 bytes (its
 *    column x is the row's element x - off[j]); its columns end on the last
 *    16-byte boundary at or before n (n_al[j] in row elements), since a
 *    store writes whole 16-byte units;
 *  - a tile's A rows are loaded as 8 slabs of BM / 8 rows, slab j the rows
 *    j mod 8 (A is aligned, or packed): one box of the 3D map a3 (k, row
 *    group, residue), or, for the tile row holding rows past 8 a3_groups
 *    (a3's groups end at floor(m / 8)), one box per slab from maps a[j]; so
 *    the accumulator rows come out as slabs of one residue each (the 3D
 *    box took 2 of the 2.5 us per tile the 8 boxes cost at 1537 x 3001 x
 *    2049, H200 P195);
 *  - the epilogue (sm90_epilogue_shift) moves each box row in shared memory
 *    by its residue's offset, so that its 16-byte units are C's own, and
 *    stores each slab through its map: a box's row elements [c - off, c + 64
 *    - off) from map column c, the row's first box of the tile
 *    [c + 8 - off, c + 64 - off) through a 56-wide map c56[j] (the elements
 *    before belong to the tile on the left);
 *  - the threads store what lies between two tiles' 16-byte units (a tile
 *    row's first 8 - off and last off elements; from registers, in aligned
 *    stores of 2, 4 and 8 bytes) and, element by element, what lies past
 *    n_al[j].
 * No staged C in workspace and no second pass over C. */
typedef struct sm90_shift_maps {
    CUtensorMap a3;    /* A as (k, row group, residue): a tile's 8 slabs in one box */
    CUtensorMap a[8];
    CUtensorMap c[8];
    CUtensorMap c56[8];
    int off[8];
    int n_al[8];
    int a3_groups;     /* tiles whose rows all lie below 8 a3_groups take a3; 0: none */
} sm90_shift_maps_t;

/* What only the split-K kernels need. A separate argument, so that the
 * unsplit kernel's parameters (and code) stay as they were. */
typedef struct sm90_splitk_params {
    float4 *partials; /* [unit][consumer][j 0..31][thread 0..127], unit = tile * splits + s */
    int splits;       /* S >= 2; every split holds >= 1 k-block (host plan) */
} sm90_splitk_params_t;

/* ---- per-CTA logic ------------------------------------------------------- */

/* Tile t -> (tile row, tile column). Grouped order: tiles run down a group of
 * group_rows tile-rows, then across, so a wave of 132 tiles covers about
 * 16 x 8 tiles (2048 x 2048 of C) and its k-block reads ~2048 rows of A and
 * ~2048 rows of B; in row-major order (n = 8192: 32 tiles per row) the same
 * wave reads ~512 rows of A but all 8192 rows of B. The host asks it too
 * (which rows the first round reads: sm90_first_round_rows). */
__host__ __device__ __forceinline__ void sm90_grouped_coords(int tiles_m, int tiles_n,
                                                             int group_rows, int t, int *tm,
                                                             int *tn)
{
    if (group_rows <= 0) {
        *tm = t / tiles_n;
        *tn = t - *tm * tiles_n;
        return;
    }
    const int per_group = group_rows * tiles_n;
    const int g = t / per_group;
    const int first = g * group_rows;
    const int rows = group_rows < tiles_m - first ? group_rows : tiles_m - first;
    const int local = t - g * per_group;
    *tm = first + local % rows;
    *tn = local / rows;
}

/* The split tail. The plain kernel's last, partial round of tiles (fewer
 * tiles than CTAs) would leave SMs idle while the others finish whole tiles.
 * Instead each of its L = sk_tiles tiles is split along K into S = sk_splits
 * pieces, piece s covering k-blocks [s k_blocks / S, (s + 1) k_blocks / S),
 * and the L S pieces follow the whole tiles as units dp_units + j, dealt
 * round-robin like them: piece j is piece j / L of tail tile j % L, so the
 * first pieces dealt are every tile's piece 0, then piece 1, ... Pieces with
 * the same s read the same k-blocks, so the CTAs of one tile-row or
 * tile-column read the same A or B k-blocks at about the same time, as the
 * whole tiles do (a first version that cut one flat sequence of the tail's
 * k-blocks evenly over the CTAs lost that and ran slower: docs/gemm.md).
 * Each piece writes its fp32 accumulators to the partials and counts itself
 * in; the last to arrive sums the pieces in piece order and stores the tile
 * (sm90_tail_piece). */
__host__ __device__ __forceinline__ void sm90_tail_unit(const sm90_gemm_params_t &p, int u, int *t,
                                                        int *kb_first, int *kb_count)
{
    const int j = u - p.dp_units;
    const int s = j / p.sk_tiles;
    *t = p.dp_units + (j - s * p.sk_tiles);
    *kb_first = s * p.k_blocks / p.sk_splits;
    *kb_count = (s + 1) * p.k_blocks / p.sk_splits - *kb_first;
}

#if CUOPS_SM90A_DEVICE

__device__ __forceinline__ void sm90_tile_coords(const sm90_gemm_params_t &p, int t, int *tm,
                                                 int *tn)
{
    sm90_grouped_coords(p.tiles_m, p.tiles_n, p.group_rows, t, tm, tn);
}

/* The multicast kernel's work unit: a block of MCM x MCN tiles (tile rows
 * MCM i .. MCM i + MCM - 1, tile columns MCN j .. MCN j + MCN - 1), the CTA
 * at (rm, rn) of the cluster taking tile (MCM i + rm, MCN j + rn); blocks run
 * in the grouped order of the block grid (the same 16 tile-rows per group).
 * Where MCM or MCN does not divide the tile counts, the last blocks' tiles
 * past m or n are computed but not stored. */
template <int MCM, int MCN>
__device__ __forceinline__ void sm90_cluster_coords(const sm90_gemm_params_t &p, int u, int rm,
                                                    int rn, int *tm, int *tn)
{
    int bm, bn;
    sm90_grouped_coords((p.tiles_m + MCM - 1) / MCM, (p.tiles_n + MCN - 1) / MCN,
                        p.group_rows / MCM, u, &bm, &bn);
    *tm = MCM * bm + rm;
    *tn = MCN * bn + rn;
}

__device__ __forceinline__ void sm90_store_pair(__half *p, float a, float b)
{
    *(__half2 *)p = __floats2half2_rn(a, b);
}
__device__ __forceinline__ void sm90_store_pair(__nv_bfloat16 *p, float a, float b)
{
    *(__nv_bfloat162 *)p = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void sm90_store_pair(float *p, float a, float b)
{
    *(float2 *)p = make_float2(a, b);
}

/* C[row, col..col+1] = (v0, v1) + beta * C (read only when read_c), masked
 * at the N edge; v0, v1 already carry alpha. */
template <typename OutT>
__device__ __forceinline__ void sm90_store_c2(const sm90_gemm_params_t &p, OutT *c_row, int col,
                                              float v0, float v1, bool read_c)
{
    if (col + 1 < p.n) {
        if (read_c) {
            v0 += p.beta * cuops_to_float(c_row[col]);
            v1 += p.beta * cuops_to_float(c_row[col + 1]);
        }
        if (p.c_pair_ok) {
            sm90_store_pair(c_row + col, v0, v1);
        } else {
            c_row[col] = cuops_from_float<OutT>(v0);
            c_row[col + 1] = cuops_from_float<OutT>(v1);
        }
    } else if (col < p.n) {
        if (read_c) v0 += p.beta * cuops_to_float(c_row[col]);
        c_row[col] = cuops_from_float<OutT>(v0);
    }
}

/* Write this thread's part of a consumer's 64 x BN accumulator tile (ACC =
 * BN / 2). row0/col0: the tile's first row/column of C for this consumer. */
template <typename OutT, int ACC>
__device__ __forceinline__ void sm90_epilogue(const sm90_gemm_params_t &p, const float (&acc)[ACC],
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
        for (int j = 0; j < ACC / 4; j++) {
            const int col = col_a + 8 * j;
            float v0 = p.alpha * acc[4 * j + 2 * half + 0];
            float v1 = p.alpha * acc[4 * j + 2 * half + 1];
            sm90_store_c2(p, c_row, col, v0, v1, read_c);
        }
    }
}

/* The same tile through shared memory and TMA stores (p.c_tma: 16-bit C,
 * beta == 0). Per 64-column chunk: stmatrix the 64 x 64 box into one of the
 * consumer's two buffers in TMA's 128-byte swizzle (16-byte chunk c of row r
 * at c ^ (r & 7): conflict-free), then thread 0 issues the bulk tensor
 * store, clipped at m and n by the hardware, and the warps go on; a buffer
 * is refilled once the store that last read it is done reading. The
 * buffers alternate across tiles too (`parity`, the consumer's count of
 * boxes mod 2): with one box per tile (64 x 128 tiles) the next tile would
 * otherwise refill the buffer whose store may still be reading it. */
template <typename OutT, int ACC>
__device__ __forceinline__ void sm90_epilogue_tma(const sm90_gemm_params_t &p,
                                                  const CUtensorMap *tmap_c,
                                                  const float (&acc)[ACC], uint32_t bufs,
                                                  int consumer, int row0, int col0,
                                                  uint32_t &parity)
{
    /* 16-bit C only (the caller's test; this keeps f32 instances empty) */
    if constexpr (sizeof(OutT) == 2) {
        const int t = threadIdx.x % 128;
        const int warp = t / 32, lane = t % 32;
        const int q = lane / 8, i = lane % 8;
        const uint32_t bar_id = 2u + (uint32_t)consumer;
        /* stmatrix x4 of matrices (j, h), (j, h+1), (j+1, h), (j+1, h+1): this
         * lane gives row i of matrix q, i.e. tile row 16 warp + 8 (q & 1) + i */
        const int r = 16 * warp + 8 * (q & 1) + i;
#pragma unroll
        for (int cc = 0; cc < ACC / 32; cc++) {
            const uint32_t buf = bufs + ((uint32_t)cc + parity) % 2u * SM90_EPI_BUF_BYTES;
            if (t == 0) cuops_tma_store_wait_read<1>();
            cuops_named_bar_sync(bar_id, 128);
#pragma unroll
            for (int jj = 0; jj < 8; jj += 2) {
                const int j = 8 * cc + jj;
                const int chunk = jj + (q >> 1);
                const uint32_t addr = buf + (uint32_t)(r * 128 + ((chunk ^ (r & 7)) * 16));
                cuops_stmatrix_x4(addr, cuops_pack2<OutT>(p.alpha * acc[4 * j + 0], p.alpha * acc[4 * j + 1]),
                                  cuops_pack2<OutT>(p.alpha * acc[4 * j + 2], p.alpha * acc[4 * j + 3]),
                                  cuops_pack2<OutT>(p.alpha * acc[4 * j + 4], p.alpha * acc[4 * j + 5]),
                                  cuops_pack2<OutT>(p.alpha * acc[4 * j + 6], p.alpha * acc[4 * j + 7]));
            }
            cuops_fence_proxy_async_smem();
            cuops_named_bar_sync(bar_id, 128);
            if (t == 0) {
                cuops_tma_store_2d(tmap_c, buf, col0 + 64 * cc, row0);
                cuops_tma_store_commit();
            }
        }
        if constexpr ((ACC / 32) % 2 == 1) parity ^= 1u;
    }
}

/* 16-bit element e of row `row` of an epilogue box buffer (128-byte
 * swizzle: 16-byte chunk c of row r at c ^ (r & 7)) */
__device__ __forceinline__ uint16_t sm90_box_elem(uint32_t buf, int row, int e)
{
    uint16_t v;
    asm volatile("ld.shared.u16 %0, [%1];"
                 : "=h"(v)
                 : "r"(buf + (uint32_t)(row * 128 + (((e >> 3) ^ (row & 7)) << 4) + (e & 7) * 2)));
    return v;
}

__device__ __forceinline__ uint4 sm90_box_chunk(uint32_t buf, int row, int c)
{
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(buf + (uint32_t)(row * 128 + ((c ^ (row & 7)) << 4))));
    return v;
}

/* The 8 elements starting at element S (1..7) of the 16 in (lo, hi). */
template <int S>
__device__ __forceinline__ uint4 sm90_chunk_at(uint4 lo, uint4 hi)
{
    const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    constexpr int o = S / 2;
    constexpr uint32_t bits = (S & 1) * 16;
    return make_uint4(__funnelshift_r(w[o], w[o + 1], bits), __funnelshift_r(w[o + 1], w[o + 2], bits),
                      __funnelshift_r(w[o + 2], w[o + 3], bits), __funnelshift_r(w[o + 3], w[o + 4], bits));
}

/* Output chunks 4h .. 4h + 3 of a box row moved by S = 8 - off elements:
 * chunk q takes the 8 elements from element S of the natural chunks (q +
 * base, q + base + 1), base = -1 (chunk -1 is `prev`, the row's chunk 7 of
 * the box before) or 0 (the first box of a tile row). */
template <int S>
__device__ __forceinline__ void sm90_shift_half(const uint4 (&in)[5], uint4 (&out)[4])
{
#pragma unroll
    for (int x = 0; x < 4; x++) out[x] = sm90_chunk_at<S>(in[x], in[x + 1]);
}

/* Bytes [B0, B1) of the 16-byte unit image u stored to the unit at `unit`
 * (16-byte aligned; B0, B1 even, B0 = 0 or B1 = 16): at most three aligned
 * stores of 2, 4 and 8 bytes instead of one per element. */
template <int B0, int B1>
__device__ __forceinline__ void sm90_store_unit_part(uint8_t *unit, uint4 u)
{
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
    if constexpr (B1 == 16) {
        constexpr int b2 = B0, b4 = B0 + (B0 & 2), b8 = b4 + (b4 & 4);
        if constexpr (b2 & 2) *(uint16_t *)(unit + b2) = (uint16_t)(w[b2 / 4] >> 16);
        if constexpr (b4 & 4) *(uint32_t *)(unit + b4) = w[b4 / 4];
        if constexpr (b8 & 8) *(uint2 *)(unit + b8) = make_uint2(w[b8 / 4], w[b8 / 4 + 1]);
    } else {
        constexpr int b4 = B1 & 8, b2 = b4 + (B1 & 4);
        if constexpr (B1 & 8) *(uint2 *)unit = make_uint2(w[0], w[1]);
        if constexpr (B1 & 4) *(uint32_t *)(unit + b4) = w[b4 / 4];
        if constexpr (B1 & 2) *(uint16_t *)(unit + b2) = (uint16_t)(w[b2 / 4] & 0xffffu);
    }
}

/* One box row of a residue with offset OFF (compile time): out = the row
 * moved as sm90_shift_half says, and the two 16-byte units no map stores,
 * which a tile row shares with its neighbours, written from registers: the
 * head (the row's first 8 - OFF elements, h = 0 of a tile row's first box:
 * bytes [2 OFF, 16) of the unit that starts OFF elements before the box) and
 * the tail (its last OFF elements, h = 1 of the last box: bytes [0, 2 OFF)
 * of the unit that starts at box element 64 - OFF). */
template <int OFF>
__device__ __forceinline__ void sm90_shift_row(const uint4 (&in)[5], uint4 chunk7,
                                               uint4 (&out)[4], uint16_t *box_row, bool head,
                                               bool tail)
{
    if constexpr (OFF == 0) {
#pragma unroll
        for (int x = 0; x < 4; x++) out[x] = in[x + 1]; /* base -1: chunks 4h .. 4h + 3 */
    } else {
        const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
        sm90_shift_half<8 - OFF>(in, out);
        if (head) /* in[0] is chunk 0 (base 0) */
            sm90_store_unit_part<2 * OFF, 16>((uint8_t *)(box_row - OFF),
                                              sm90_chunk_at<8 - OFF>(zero, in[0]));
        if (tail)
            sm90_store_unit_part<0, 2 * OFF>((uint8_t *)(box_row + 64 - OFF),
                                             sm90_chunk_at<8 - OFF>(chunk7, zero));
    }
}

__device__ __forceinline__ uint4 sm90_pick4(const uint4 (&v)[4], int x)
{
    return x == 0 ? v[0] : x == 1 ? v[1] : x == 2 ? v[2] : v[3];
}

/* The TMA-store epilogue for rows off 16 bytes (p.c_shift; the maps and
 * the scheme: sm90_shift_maps_t). Per 64 x 64 box, each warp on its own 16
 * rows, which are its slab(s) (SLAB rows of one residue; the stmatrix rows
 * of warp w are 16 w .. 16 w + 15, and so are the rows its thread pairs
 * move): stmatrix into one of the consumer's two buffers; each row's pair
 * of threads (row t / 2) stores the row's tile-edge units from registers and
 * its past-n_al elements from the buffer, moves the row by its residue's
 * offset in place, and lane 0 stores the warp's slab(s) through the maps.
 * Only warp-level synchronisation: no warp waits for another's stores or
 * stragglers (the first form synchronised the 128 threads four times per
 * box and ran 7-11 % slower than the plain kernel on 128 x 256 tiles, H200
 * P195). tile_row0: the tile's first row of C; rrow0: its first row in every
 * map (tile_row0 / 8); col0: the consumer's first column. */
template <typename OutT, int ACC, int SLAB>
__device__ __forceinline__ void sm90_epilogue_shift(const sm90_gemm_params_t &p,
                                                    const sm90_shift_maps_t *sm,
                                                    const float (&acc)[ACC], uint32_t bufs,
                                                    int consumer, int tile_row0, int col0,
                                                    uint32_t &parity)
{
    if constexpr (sizeof(OutT) == 2) {
        static_assert(SLAB == 8 || SLAB == 16, "a warp's 16 rows are one or two slabs");
        const int t = threadIdx.x % 128;
        const int warp = t / 32, lane = t % 32;
        const int q = lane / 8, i = lane % 8;
        const int r = 16 * warp + 8 * (q & 1) + i; /* stmatrix row of this lane */
        /* box rows: slab rho / SLAB is residue j0 + rho / SLAB */
        const int j0 = SLAB == 16 ? 4 * consumer : 0;
        const int rho = t >> 1, h = t & 1;
        const int jr = j0 + rho / SLAB;
        const int off = sm->off[jr], n_al = sm->n_al[jr];
        const int grow = tile_row0 + 8 * (rho % SLAB) + jr;
        uint16_t *crow = (uint16_t *)p.c + (int64_t)grow * p.ldc;
        constexpr int NB = ACC / 32;
        uint4 prev = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
        for (int cc = 0; cc < NB; cc++) {
            const uint32_t buf = bufs + ((uint32_t)cc + parity) % 2u * SM90_EPI_BUF_BYTES;
            const int cbox = col0 + 64 * cc;
            /* this warp's rows of the buffer, last read by its own store two boxes ago */
            if (lane == 0) cuops_tma_store_wait_read<1>();
            __syncwarp();
#pragma unroll
            for (int jj = 0; jj < 8; jj += 2) {
                const int j = 8 * cc + jj;
                const int chunk = jj + (q >> 1);
                const uint32_t addr = buf + (uint32_t)(r * 128 + ((chunk ^ (r & 7)) * 16));
                cuops_stmatrix_x4(addr, cuops_pack2<OutT>(p.alpha * acc[4 * j + 0], p.alpha * acc[4 * j + 1]),
                                  cuops_pack2<OutT>(p.alpha * acc[4 * j + 2], p.alpha * acc[4 * j + 3]),
                                  cuops_pack2<OutT>(p.alpha * acc[4 * j + 4], p.alpha * acc[4 * j + 5]),
                                  cuops_pack2<OutT>(p.alpha * acc[4 * j + 6], p.alpha * acc[4 * j + 7]));
            }
            __syncwarp();
            /* the row moved by off, read whole before anything is written
             * (a tile row's first box: left by 8 - off, from its element
             * 8 - off on, 7 units; the others: right by off, the box
             * before's last off elements first) */
            const int base = off > 0 && cc == 0 ? 0 : -1;
            uint4 in[5], out[4];
#pragma unroll
            for (int x = 0; x < 5; x++) {
                const int c = 4 * h + base + x;
                in[x] = c < 0 ? prev : (c < 8 ? sm90_box_chunk(buf, rho, c) : make_uint4(0u, 0u, 0u, 0u));
            }
            prev = sm90_box_chunk(buf, rho, 7);
            const bool live = grow < p.m;
            /* elements at or past n_al, from the natural box (h = 0; a few
             * may be stored twice, the same bits); they include the tile-edge
             * units' elements wherever those reach past n */
            if (live && h == 0) {
                const int e0 = n_al > cbox ? n_al - cbox : 0;
                const int e1 = p.n - cbox < 64 ? p.n - cbox : 64;
                for (int e = e0; e < e1; e++) crow[cbox + e] = sm90_box_elem(buf, rho, e);
            }
            const bool head = live && h == 0 && cc == 0 && cbox + 8 - off <= p.n;
            const bool tail = live && h == 1 && cc == NB - 1 && cbox + 64 <= p.n;
            uint16_t *box_row = crow + cbox;
            switch (off) {
            case 1: sm90_shift_row<1>(in, prev, out, box_row, head, tail); break;
            case 2: sm90_shift_row<2>(in, prev, out, box_row, head, tail); break;
            case 3: sm90_shift_row<3>(in, prev, out, box_row, head, tail); break;
            case 4: sm90_shift_row<4>(in, prev, out, box_row, head, tail); break;
            case 5: sm90_shift_row<5>(in, prev, out, box_row, head, tail); break;
            case 6: sm90_shift_row<6>(in, prev, out, box_row, head, tail); break;
            case 7: sm90_shift_row<7>(in, prev, out, box_row, head, tail); break;
            default: sm90_shift_row<0>(in, prev, out, box_row, false, false); break;
            }
            __syncwarp();
            {
                /* written back unswizzled (rows of 112 or 128 bytes: the
                 * maps' boxes, 56 or 64 wide), slab rho / SLAB at its
                 * 128-byte-row place. At pitch 128 the rows' chunks go in an
                 * order rotated by rho & 3, so that the 8 lanes of each
                 * quarter-warp store hit 8 different bank groups (in chunk
                 * order, 4 rows' chunk x would share one); at 112 the rows
                 * already spread. */
                const int pitch = base == 0 ? 112 : 128;
                const int rot = base == 0 ? 0 : (rho & 3);
                const uint32_t row_addr =
                    buf + (uint32_t)((rho / SLAB) * SLAB * 128 + (rho % SLAB) * pitch);
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    const int xs = (x + rot) & 3;
                    const int qo = 4 * h + xs;
                    if (base == 0 && qo == 7) continue;
                    const uint4 v = sm90_pick4(out, xs);
                    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};"
                                 ::"r"(row_addr + (uint32_t)(qo * 16)), "r"(v.x), "r"(v.y),
                                 "r"(v.z), "r"(v.w)
                                 : "memory");
                }
            }
            cuops_fence_proxy_async_smem();
            __syncwarp();
            if (lane == 0) {
                const int rrow0 = tile_row0 / 8;
#pragma unroll
                for (int s = 0; s < 16 / SLAB; s++) {
                    const int sl = warp * (16 / SLAB) + s;
                    const int j = j0 + sl;
                    if (sm->off[j] > 0 && cc == 0)
                        cuops_tma_store_2d(&sm->c56[j], buf + (uint32_t)(sl * SLAB * 128), cbox + 8,
                                           rrow0);
                    else
                        cuops_tma_store_2d(&sm->c[j], buf + (uint32_t)(sl * SLAB * 128), cbox,
                                           rrow0);
                }
                cuops_tma_store_commit();
            }
        }
        if constexpr (NB % 2 == 1) parity ^= 1u;
    }
}

/* Split-K work unit u -> its tile and its k-block range [*kb_first,
 * *kb_first + *kb_count). The S units of a tile are consecutive, so they run
 * in the same wave; the ranges differ in length by at most one k-block. */
__device__ __forceinline__ void sm90_split_unit(const sm90_gemm_params_t &p, int splits, int u,
                                                int *tile, int *kb_first, int *kb_count)
{
    const int t = u / splits;
    const int s = u - t * splits;
    const int first = s * p.k_blocks / splits;
    *tile = t;
    *kb_first = first;
    *kb_count = (s + 1) * p.k_blocks / splits - first;
}

/* A consumer's accumulators into the partials of unit u, in register order:
 * float4 j of thread t at [u][consumer][j][t], so each warp store is 512
 * contiguous bytes and the fixup reads them back the same way. */
template <int ACC>
__device__ __forceinline__ void sm90_store_partials(float4 *partials, int u, int consumer,
                                                    const float (&acc)[ACC])
{
    constexpr int F4 = ACC / 4;
    const int t = threadIdx.x % 128;
    float4 *dst = partials + (size_t)u * (2 * F4 * 128) + (size_t)consumer * (F4 * 128) + t;
#pragma unroll
    for (int j = 0; j < F4; j++)
        dst[j * 128] = make_float4(acc[4 * j + 0], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
}

/* The same, into this CTA's shared memory at `base` (the stage ring, free
 * once both consumers are done): [consumer][j][t] float4, BN / 4 KB per
 * consumer; consecutive threads write consecutive 16 bytes. */
template <int ACC>
__device__ __forceinline__ void sm90_store_partials_smem(uint32_t base, int consumer,
                                                         const float (&acc)[ACC])
{
    constexpr int F4 = ACC / 4;
    const int t = threadIdx.x % 128;
    const uint32_t dst = base + (uint32_t)((consumer * F4 * 128 + t) * 16);
#pragma unroll
    for (int j = 0; j < F4; j++)
        asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(dst + (uint32_t)(j * 128 * 16)),
                     "f"(acc[4 * j + 0]), "f"(acc[4 * j + 1]), "f"(acc[4 * j + 2]),
                     "f"(acc[4 * j + 3])
                     : "memory");
}

/* The last piece of a split tail tile to arrive: acc (this CTA's piece q_own
 * of pieces 0..pieces-1, whose partials sit at slots slot0, slot0 + stride,
 * ...) becomes their sum in piece order, ((p0 + p1) + p2) + ..., whichever
 * piece arrived last: p0 + p1 is the same sum either way round, and from p2
 * on every piece, this CTA's own included, is read back from the partials.
 * So the result is bitwise the same from run to run. Reads through L2
 * (ld.global.cg): other SMs wrote them during this kernel. */
template <int ACC>
__device__ __forceinline__ void sm90_sum_pieces(float (&acc)[ACC], const float4 *partials,
                                                int slot0, int stride, int pieces, int q_own,
                                                int consumer)
{
    constexpr int F4 = ACC / 4;
    const float4 *base = partials + (size_t)consumer * (F4 * 128) + threadIdx.x % 128;
    const size_t per_slot = 2 * F4 * 128;
    /* acc = p0 when this CTA's piece is not among the first two (one float4
     * in flight per element: the accumulator already holds 128 registers) */
    if (q_own > 1) {
        const float4 *o = base + (size_t)slot0 * per_slot;
#pragma unroll
        for (int j = 0; j < F4; j++) {
            const float4 v = __ldcg(o + j * 128);
            acc[4 * j + 0] = v.x;
            acc[4 * j + 1] = v.y;
            acc[4 * j + 2] = v.z;
            acc[4 * j + 3] = v.w;
        }
    }
    /* then + p1 (or + p0 onto p1, the same sum), + p2, ... */
    for (int q = 1; q < pieces; q++) {
        const int from = q == 1 && q_own == 1 ? 0 : q;
        const float4 *o = base + (size_t)(slot0 + from * stride) * per_slot;
#pragma unroll
        for (int j = 0; j < F4; j++) {
            const float4 v = __ldcg(o + j * 128);
            acc[4 * j + 0] += v.x;
            acc[4 * j + 1] += v.y;
            acc[4 * j + 2] += v.z;
            acc[4 * j + 3] += v.w;
        }
    }
}

/* A consumer's tail piece (unit u): publish it, and return whether it was
 * its tile's last piece to arrive (then acc holds the tile's sum and the
 * caller stores it). The counter goes back to 0 with the last arrival, ready
 * for the next call. */
template <int ACC>
__device__ __forceinline__ bool sm90_tail_piece(const sm90_gemm_params_t &p, int u, int consumer,
                                                float (&acc)[ACC])
{
    /* piece j = s L + i (piece s of tail tile i) has partials slot j */
    const int j = u - p.dp_units;
    const int q_own = j / p.sk_tiles, i = j - q_own * p.sk_tiles;
    sm90_store_partials(p.sk_partials, j, consumer, acc);
    __threadfence();
    cuops_named_bar_sync(2u + (uint32_t)consumer, 128);
    bool last = false;
    if (threadIdx.x % 128 == 0) {
        unsigned *counter = p.sk_counters + 2 * i + consumer;
        last = atomicAdd(counter, 1u) == (unsigned)(p.sk_splits - 1);
        if (last) *counter = 0u;
        __threadfence();
    }
    last = cuops_named_bar_or(2u + (uint32_t)consumer, 128, last);
    if (!last) return false;
    __threadfence();
    sm90_sum_pieces(acc, p.sk_partials, i, p.sk_tiles, p.sk_splits, q_own, consumer);
    return true;
}

/* Cluster split-K reduction, run by the 256 consumer threads of every CTA of
 * the cluster after the partials are in shared memory (cluster barrier
 * before and after). CTA rank r of the tile's S owns float4 columns
 * [32r/S, 32(r+1)/S) of both consumers; thread (consumer, t) adds what
 * consumer thread t of each CTA s = 0..S-1 wrote there, in that order, and
 * stores the C elements sm90_epilogue would (same rows, columns, masking). */
template <int BM, int BN, typename OutT>
__device__ __forceinline__ void sm90_cluster_reduce_store(const sm90_gemm_params_t &p, int splits,
                                                          uint32_t base)
{
    constexpr int F4 = sm90_tile<BM, BN>::F4;
    const int ct = threadIdx.x - 128;
    const int consumer = ct / 128, t = ct % 128;
    const int rank = (int)cuops_cluster_ctarank();
    const int j0 = rank * F4 / splits;
    const int j1 = (rank + 1) * F4 / splits;
    int tm, tn;
    sm90_tile_coords(p, (int)blockIdx.x / splits, &tm, &tn);
    const int warp = t / 32, lane = t % 32;
    const int row_a = tm * BM + consumer * sm90_tile<BM, BN>::ROW_STEP + warp * 16 + lane / 4;
    const int col_a = tn * BN + consumer * sm90_tile<BM, BN>::COL_STEP + 2 * (lane % 4);
    OutT *c = (OutT *)p.c;
    const bool read_c = (p.beta != 0.0f);
    const uint32_t src = base + (uint32_t)((consumer * F4 * 128 + t) * 16);
    /* the S partials in split order (cluster_splitk.cuh) */
    cuops_cluster_reduce_store(src, 128 * 16, splits, j0, j1, [&](int j, const float4 &sum) {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int row = row_a + 8 * half;
            if (row >= p.m) continue;
            OutT *c_row = c + (int64_t)row * p.ldc;
            const float v0 = half ? sum.z : sum.x;
            const float v1 = half ? sum.w : sum.y;
            sm90_store_c2<OutT>(p, c_row, col_a + 8 * j, p.alpha * v0, p.alpha * v1, read_c);
        }
    });
}

#endif /* CUOPS_SM90A_DEVICE */

/* ---- the kernels ---------------------------------------------------------- */

#if CUOPS_SM90A_DEVICE

/* Multicast masks over a cluster of MCM x MCN CTAs (rank = rm + MCM rn):
 * the CTAs of cluster row rm (one tile row: they share A) and of cluster
 * column rn (one tile column: they share B). */
template <int MCM, int MCN>
__device__ __forceinline__ uint16_t sm90_cluster_row_mask(int rm)
{
    uint32_t mask = 0;
#pragma unroll
    for (int j = 0; j < MCN; j++) mask |= 1u << (rm + MCM * j);
    return (uint16_t)mask;
}
template <int MCM>
__device__ __forceinline__ uint16_t sm90_cluster_col_mask(int rn)
{
    return (uint16_t)(((1u << MCM) - 1u) << (MCM * rn));
}

/* A consumer warp's release of a stage it has finished reading (its wgmma
 * group retired): lane 0 arrives on the stage's empty barrier. Multicast
 * (clusters of MCM x MCN): every CTA whose producer writes into this CTA's
 * stage must hear of it: the MCM CTAs of its cluster column (B pieces,
 * itself included) and the other MCN - 1 of its cluster row (A pieces),
 * one lane each, in one instruction. */
template <int MCM, int MCN>
__device__ __forceinline__ void sm90_release_stage(uint32_t empty_bar, int rm, int rn)
{
    const int lane = (int)(threadIdx.x % 32);
    if (MCM * MCN == 1) {
        if (lane == 0) cuops_mbar_arrive(empty_bar);
    } else if (lane < MCM) {
        cuops_mbar_arrive_rank(empty_bar, (uint32_t)(lane + MCM * rn));
    } else if (lane < MCM + MCN - 1) {
        const int j = lane - MCM;
        cuops_mbar_arrive_rank(empty_bar, (uint32_t)(rm + MCM * (j < rn ? j : j + 1)));
    }
}

/* Producer and consumers of one CTA over its work. SPLIT = false: units are
 * whole tiles and the epilogue writes C (sm90_ws_128x256). SPLIT = true:
 * units are (tile, K range) pairs and the epilogue writes partials
 * (sm90_ws_128x256_splitk; OutT unused). Both roles walk exactly the same
 * units and k-blocks, so the stage index and parity carry on across units.
 * DSMEM (with SPLIT; sm90_ws_128x256_splitk_dsmem): one unit per CTA, the
 * S CTAs of a tile form a cluster; the partials go to shared memory and the
 * cluster reduces them (sm90_cluster_reduce_store). Each role runs its own
 * two cluster barriers inside its branch, so no code after the branches runs
 * at the producer's reduced register count.
 * MCM x MCN > 1 (sm90_ws_128x256_mc2, sm90_ws_64x128_mc4x2, ...): clusters
 * of MCM x MCN CTAs computing a block of MCM tile rows by MCN tile columns
 * (sm90_cluster_coords). The MCM CTAs of a tile column share its B tile:
 * each loads BN / MCM of its rows, multicast into all of their stages; the
 * MCN CTAs of a tile row share its A tile likewise (BM / MCN rows each).
 * So the L2 -> SM bytes per CTA and k-block drop from (BM + BN) to
 * (BM / MCN + BN / MCM) rows (128 x 256 in pairs along M: 48 to 32 KB). A
 * stage is refilled once the consumers of every CTA this producer writes
 * into have released it (sm90_release_stage).
 * MN: bit 0 set, A is read M-major (stored [k, m], the call's trans_a = T;
 * every form but the shifted rows), bit 1, B N-major (stored [k, n],
 * trans_b = N; every form), in place: TMA loads boxes of 64 K-rows x 64 M/N
 * elements, BM / 64 (BN / 64) per stage, and wgmma reads them with its
 * transpose immediate, where the operand would otherwise be transposed into
 * K-major workspace first. In a cluster each CTA loads 64 / MCM K-rows of
 * every B box and multicasts them, where the K-major form shares out the
 * tile's rows; an M-major A only in clusters along M (MCN = 1), where each
 * CTA loads its own. */
template <int BM, int BN, bool AB_BF16, typename OutT, bool SPLIT, bool DSMEM = false,
          int MCM = 1, int MCN = 1, bool SHIFT = false, int MN = 0, bool PACK = false>
__device__ __forceinline__ void sm90_ws_cta(const CUtensorMap &tmap_a, const CUtensorMap &tmap_b,
                                            const CUtensorMap *tmap_c,
                                            const sm90_gemm_params_t &p, float4 *partials,
                                            int splits, const sm90_shift_maps_t *smaps = NULL,
                                            const sm90_fused_pack_t *pk = NULL)
{
    using tile = sm90_tile<BM, BN>;
    /* PACK: one stage fewer, its shared memory the packers' (sm90_pack_smem_bytes) */
    constexpr int STAGES = PACK ? tile::STAGES - 1 : tile::STAGES;
    constexpr bool MCAST = MCM * MCN > 1;
    constexpr int CLUSTER = MCM * MCN;
    static_assert(!MCAST || !SPLIT, "multicast: the unsplit kernels");
    static_assert(MCM * MCN <= 8 && BN % (8 * MCM) == 0 && BM % (8 * MCN) == 0,
                  "multicast pieces: whole 8-row swizzle atoms, a portable cluster");
    static_assert(!SHIFT || (!SPLIT && !MCAST && sizeof(OutT) == 2),
                  "shifted rows: the plain kernel with a 16-bit C");
    constexpr bool A_MN = (MN & 1) != 0, B_MN = (MN & 2) != 0;
    static_assert(!SHIFT || MN == 0 || MN == 2,
                  "MN-major operands: B in every form, A in every form but the shifted rows");
    static_assert((MN & 1) == 0 || MCN == 1, "M-major A: not shared along N (no A pieces)");
    static_assert(!PACK || (SHIFT && MN == 0), "packing in the kernel: the shifted-rows form, K-major");
    extern __shared__ uint8_t smem_raw[];
    const uint32_t smem_base = cuops_smem_align1024(smem_raw);
    const uint32_t a_smem = smem_base;
    const uint32_t b_smem = smem_base + STAGES * tile::A_STAGE_BYTES;
    const uint32_t epi_smem = b_smem + STAGES * tile::B_STAGE_BYTES;
    const uint32_t bars = epi_smem + SM90_EPI_BYTES;
#define SM90_FULL_BAR(s) (bars + 8u * (uint32_t)(s))
#define SM90_EMPTY_BAR(s) (bars + 8u * (uint32_t)(STAGES + (s)))
    /* PACK: the packer warps' batch slots, after the barriers */
    const uint32_t pack_smem = (bars + 16u * (uint32_t)STAGES + 127u) & ~127u;

    const int warpgroup = threadIdx.x / 128;
    /* MCAST: each cluster walks blocks of MCM x MCN tiles (sm90_cluster_coords) */
    const int rank = MCAST ? (int)cuops_cluster_ctarank() : 0;
    const int rm = rank % MCM, rn = rank / MCM;
    const int units =
        SPLIT   ? p.num_tiles * splits
        : MCAST ? ((p.tiles_m + MCM - 1) / MCM) * ((p.tiles_n + MCN - 1) / MCN)
                : p.dp_units + p.sk_tiles * p.sk_splits;
    constexpr bool TAIL = !SPLIT && !MCAST; /* the plain kernel may have a split tail */
    /* PACK with packer CTAs (pk->pack_ctas): the first pack_ctas CTAs to
     * start pack (sm90_pack_cta), the others run the units as a grid of
     * gridDim.x - pack_ctas, numbered in the order they started. Roles by
     * order of start, not by blockIdx: the GEMM's CTAs wait for the packers'
     * rows, and a CTA that has started is running, so no CTA waits for one
     * that may not be resident yet. pk->join: every unit is claimed from a
     * counter instead (sm90_unit_post / sm90_unit_take), and the packer CTAs
     * claim units too once their items are done. */
    __shared__ int start_ticket;
    const bool pack_ctas = PACK && pk->pack_ctas > 0;
    const bool join = pack_ctas && pk->join;
    /* join: the producer passes each unit it claims to the consumers
     * through a 4-entry mailbox (full / empty barriers, then the words) in
     * the packer warps' room, which the GEMM CTAs leave unused here */
    const uint32_t box = pack_smem;
    auto init_barriers = [&]() {
        for (int s = 0; s < STAGES; s++) {
            /* full: the producer's one arrive.expect_tx + the TMA bytes. */
            cuops_mbar_init(SM90_FULL_BAR(s), 1);
            /* empty: lane 0 of each of the 8 consumer warps arrives once the
             * warp's wgmma group that read the stage is retired (8 arrivals,
             * not one per thread: fewer shared-memory atomics per stage).
             * MCAST: the producers of the MCM + MCN - 1 CTAs sharing with
             * this one write into the stage, and this producer into theirs:
             * the consumers of each release it here. */
            cuops_mbar_init(SM90_EMPTY_BAR(s), 8 * (MCM + MCN - 1));
        }
        if (join) sm90_unit_box_init(box);
        cuops_mbar_init_fence();
    };

    if (threadIdx.x == 0) {
        bool gemm_cta = true;
        if (pack_ctas) {
            start_ticket = (int)atomicAdd(pk->counters, 1u);
            gemm_cta = start_ticket >= pk->pack_ctas;
        }
        if (gemm_cta) init_barriers();
    }
    /* MCAST: the peers' barriers must be initialised before this CTA's
     * multicast or releases reach them. Thread 0's fence.mbarrier_init
     * orders its inits before its arrive, so the arrive can be relaxed: the
     * release form costs every thread a MEMBAR.ALL.GPU at the start (ncu at
     * 1000^3: 6 % of the warp samples sat behind it, docs/gemm.md P235). */
    if (MCAST)
        cuops_cluster_sync_relaxed();
    else
        __syncthreads();
    if (pack_ctas && start_ticket < pk->pack_ctas) {
        /* a packer CTA: the whole shared memory its ring (the GEMM barriers
         * above were not initialised here) */
        constexpr int NSLOTS = sm90_pack_cta_slots(sm90_pack_smem_bytes<BM, BN>());
        sm90_pack_cta<NSLOTS, 8, SM90_THREADS / 32>(*pk, smem_base, start_ticket);
        __syncthreads();
        if (!join) {
            if (threadIdx.x < 32) sm90_pack_finish(*pk);
            return;
        }
        /* join the tiles: the ring's memory was read by the drains (generic
         * proxy) and is written next by TMA (async proxy) */
        cuops_fence_proxy_async_smem();
        if (threadIdx.x == 0) init_barriers();
        __syncthreads();
    }
    const int first_unit = pack_ctas ? start_ticket - pk->pack_ctas : (int)blockIdx.x / CLUSTER;
    const int unit_step = pack_ctas ? (int)gridDim.x - pk->pack_ctas : (int)gridDim.x / CLUSTER;
    int box_n = 0; /* join: units through the mailbox so far */

    if (warpgroup == 0) {
        /* ---------------- producer ---------------- */
        cuops_setmaxnreg_dec<PACK ? SM90_PACK_PRODUCER_REGS(BN) : SM90_PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            uint32_t phase = 0;
            int stage = 0;
            /* PACK: slices seen packed, per phase (sm90_pack_wait) */
            int ready0 = 0, ready1 = 0;
            for (int u = join ? sm90_unit_post(box, *pk, units, box_n) : first_unit; u < units;
                 u = join ? sm90_unit_post(box, *pk, units, box_n) : u + unit_step) {
                int t = u, kb_first = 0, kb_count = p.k_blocks;
                const bool sk = TAIL && u >= p.dp_units;
                if (sk) sm90_tail_unit(p, u, &t, &kb_first, &kb_count);
                if (SPLIT) sm90_split_unit(p, splits, u, &t, &kb_first, &kb_count);
                int tm, tn;
                if (MCAST)
                    sm90_cluster_coords<MCM, MCN>(p, u, rm, rn, &tm, &tn);
                else
                    sm90_tile_coords(p, t, &tm, &tn);
                /* MCAST: a tile row past m loads no A (its results are not
                 * stored; the CTAs sharing that A lie in the same tile row,
                 * so none of them expects it) but still sends its piece of
                 * B to its cluster column */
                const bool a_live = !MCAST || tm < p.tiles_m;
                int kb = kb_first;
                if (!SPLIT && !sk && p.stagger_k) kb = t % p.k_blocks;
                for (int i = 0; i < kb_count; i++) {
                    /* Wait for both consumers to have released this slot in
                     * the previous round (first round passes: parity 1 of a
                     * fresh barrier counts as complete). */
                    cuops_mbar_wait(SM90_EMPTY_BAR(stage), phase ^ 1u);
                    if (PACK) {
                        /* this k-block's slice of the tile's A and B rows,
                         * packed by the phase that holds them */
                        const int slice = kb / SM90_PACK_SLICE_KB;
                        if (pk->a_rows > 0) {
                            if (tm * BM < pk->a_first)
                                sm90_pack_wait(*pk, 0, slice, &ready0);
                            else
                                sm90_pack_wait(*pk, 1, slice, &ready1);
                        }
                        if (pk->b_rows > 0) {
                            if (tn * BN < pk->b_first)
                                sm90_pack_wait(*pk, 0, slice, &ready0);
                            else
                                sm90_pack_wait(*pk, 1, slice, &ready1);
                        }
                    }
                    cuops_mbar_arrive_expect_tx(SM90_FULL_BAR(stage),
                                                a_live ? tile::STAGE_BYTES : tile::B_STAGE_BYTES);
                    if (SHIFT && (tm + 1) * (BM / 8) <= smaps->a3_groups) {
                        /* one box: 8 slabs of BM / 8 rows, slab j = tile rows j, j + 8, ... */
                        cuops_tma_load_3d(a_smem + stage * tile::A_STAGE_BYTES, &smaps->a3,
                                          SM90_FULL_BAR(stage), kb * SM90_BK, tm * (BM / 8), 0);
                    } else if (SHIFT) {
                        /* the tile row holding the rows past 8 a3_groups: a box per slab */
#pragma unroll
                        for (int j = 0; j < 8; j++)
                            cuops_tma_load_2d(a_smem + stage * tile::A_STAGE_BYTES +
                                                  (uint32_t)(j * (BM / 8) * 128),
                                              &smaps->a[j], SM90_FULL_BAR(stage), kb * SM90_BK,
                                              tm * (BM / 8));
                    } else if (A_MN && a_live) {
                        /* M-major A: the tile's BM rows as BM / 64 boxes of
                         * 64 K-rows x 64 M elements, box after box */
                        cuops_tma_load_mn_boxes<BM / 64>(a_smem + stage * tile::A_STAGE_BYTES,
                                                         &tmap_a, SM90_FULL_BAR(stage), tm * BM,
                                                         kb * SM90_BK);
                    } else if (A_MN) {
                        /* a tile row past m (multicast): no A, as below */
                    } else if (a_live && MCN > 1) {
                        /* this CTA's piece of A (tmap_a's box is BM / MCN
                         * rows), into its cluster row's stages */
                        cuops_tma_load_2d_multicast(
                            a_smem + stage * tile::A_STAGE_BYTES +
                                (uint32_t)rn * (tile::A_STAGE_BYTES / MCN),
                            &tmap_a, SM90_FULL_BAR(stage), kb * SM90_BK,
                            tm * BM + rn * (BM / MCN), sm90_cluster_row_mask<MCM, MCN>(rm));
                    } else if (a_live) {
                        cuops_tma_load_2d(a_smem + stage * tile::A_STAGE_BYTES, &tmap_a,
                                          SM90_FULL_BAR(stage), kb * SM90_BK, tm * BM);
                    }
                    if (B_MN && MCM > 1) {
                        /* N-major B in a cluster column: this CTA's K-rows
                         * of every box, to the whole column */
                        cuops_tma_load_mn_piece_multicast<BN / 64, SM90_BK / MCM>(
                            b_smem + stage * tile::B_STAGE_BYTES, &tmap_b, SM90_FULL_BAR(stage),
                            tn * BN, kb * SM90_BK, rm, sm90_cluster_col_mask<MCM>(rn));
                    } else if (B_MN) {
                        /* N-major B: BN / 64 boxes of 64 K-rows x 64 N elements */
                        cuops_tma_load_mn_boxes<BN / 64>(b_smem + stage * tile::B_STAGE_BYTES,
                                                         &tmap_b, SM90_FULL_BAR(stage), tn * BN,
                                                         kb * SM90_BK);
                    } else if (MCM > 1) {
                        /* this CTA's piece of B (tmap_b's box is BN / MCM
                         * rows), into its cluster column's stages */
                        cuops_tma_load_2d_multicast(
                            b_smem + stage * tile::B_STAGE_BYTES +
                                (uint32_t)rm * (tile::B_STAGE_BYTES / MCM),
                            &tmap_b, SM90_FULL_BAR(stage), kb * SM90_BK,
                            tn * BN + rm * (BN / MCM), sm90_cluster_col_mask<MCM>(rn));
                    } else {
                        cuops_tma_load_2d(b_smem + stage * tile::B_STAGE_BYTES, &tmap_b,
                                          SM90_FULL_BAR(stage), kb * SM90_BK, tn * BN);
                    }
                    /* Wraps only for stagger-K; a split's range ends at
                     * k_blocks at most, where the wrap is after its last load. */
                    if (++kb == p.k_blocks) kb = 0;
                    cuops_ring_advance<STAGES>(stage, phase);
                }
            }
            if (MCAST) {
                /* The tail: wait until every stage's last fill has been
                 * released by the consumers of all the CTAs it went to. Then
                 * every peer has read what this CTA multicast, and every
                 * remote release meant for this CTA's barriers has landed:
                 * nothing in the cluster touches this CTA's shared memory
                 * any more, so the CTA may exit without a cluster barrier
                 * (which would cost each consumer thread a MEMBAR.ALL.GPU;
                 * ncu at 1000^3: 4 % of the warp samples, docs/gemm.md). A
                 * stage never filled passes at once (parity 1 of a fresh
                 * barrier), as in the loop's first round. */
                for (int s = 0; s < STAGES; s++) {
                    cuops_mbar_wait(SM90_EMPTY_BAR(stage), phase ^ 1u);
                    cuops_ring_advance<STAGES>(stage, phase);
                }
            }
        } else if (PACK && !pack_ctas && threadIdx.x >= 32) {
            /* warps 1-3: the packers */
            constexpr int SLOTS = sm90_pack_slots(BN);
            const int w = (int)threadIdx.x / 32 - 1;
            const uint32_t slots = pack_smem + (uint32_t)(w * SLOTS * SM90_PACK_SLOT_BYTES);
            /* the bulk form's barriers after all three warps' slots */
            const uint32_t bars = pack_smem + (uint32_t)(SM90_PACK_WARPS * SLOTS * SM90_PACK_SLOT_BYTES +
                                                         w * SLOTS * 8);
            constexpr int GROUP = sm90_pack_drain_rows(BN);
            if (pk->bulk)
                sm90_pack_worker<SLOTS, GROUP, true>(*pk, slots, bars);
            else
                sm90_pack_worker<SLOTS, GROUP, false>(*pk, slots, bars);
        }
        if (PACK) {
            /* the whole warpgroup done with the call's packing (the TMA
             * thread's last wait included): the last CTA zeroes the counters */
            __syncwarp();
            cuops_named_bar_sync(SM90_PACK_BAR_ID, 128);
            if (threadIdx.x < 32) sm90_pack_finish(*pk);
        }
        if (DSMEM) {
            __syncwarp();
            cuops_cluster_sync(); /* partials of every CTA in shared memory */
            cuops_cluster_sync_relaxed(); /* every CTA done reading them */
        }
    } else {
        /* ---------------- consumers ---------------- */
        cuops_setmaxnreg_inc<PACK ? SM90_PACK_CONSUMER_REGS(BN) : SM90_CONSUMER_REGS>();
        const int consumer = warpgroup - 1;
        float acc[tile::ACC];
#pragma unroll
        for (int i = 0; i < tile::ACC; i++) acc[i] = 0.0f;

        int stage = 0;
        uint32_t phase = 0;
        uint32_t epi_parity = 0; /* sm90_epilogue_tma's buffer alternation */
        for (int u = join ? sm90_unit_take(box, box_n) : first_unit; u < units;
             u = join ? sm90_unit_take(box, box_n) : u + unit_step) {
            /* kb_count >= 1 (host plan; a tail piece is never empty), so
             * prev_stage below is always a stage this unit read. */
            int t = u, kb_first = 0, kb_count = p.k_blocks;
            if (TAIL && u >= p.dp_units) sm90_tail_unit(p, u, &t, &kb_first, &kb_count);
            if (SPLIT) sm90_split_unit(p, splits, u, &t, &kb_first, &kb_count);
            (void)kb_first;
            int tm, tn;
            if (MCAST)
                sm90_cluster_coords<MCM, MCN>(p, u, rm, rn, &tm, &tn);
            else
                sm90_tile_coords(p, t, &tm, &tn);
            int prev_stage = 0;
            for (int i = 0; i < kb_count; i++) {
                cuops_mbar_wait(SM90_FULL_BAR(stage), phase);
                /* a consumer's rows (columns) start ROW_STEP (COL_STEP) x
                 * 128 bytes into the stage in either layout: K-major rows
                 * are 128 bytes, and ROW_STEP, COL_STEP are 0 or 64, one
                 * whole MN-major box */
                const uint32_t a_addr = a_smem + stage * tile::A_STAGE_BYTES +
                                        consumer * (tile::ROW_STEP * SM90_BK * 2);
                const uint32_t b_addr = b_smem + stage * tile::B_STAGE_BYTES +
                                        consumer * (tile::COL_STEP * SM90_BK * 2);
                const uint64_t desc_a =
                    A_MN ? cuops_wgmma_desc_mn_sw128(a_addr) : cuops_wgmma_desc_k_sw128(a_addr);
                const uint64_t desc_b =
                    B_MN ? cuops_wgmma_desc_mn_sw128(b_addr) : cuops_wgmma_desc_k_sw128(b_addr);
                constexpr uint64_t A_KSTEP = cuops_wgmma_k16_step<A_MN>();
                constexpr uint64_t B_KSTEP = cuops_wgmma_k16_step<B_MN>();
#pragma unroll
                for (int r = 0; r < tile::ACC; r++) cuops_reg_fence(acc[r]);
                cuops_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < SM90_BK / 16; kk++) {
                    /* the first MMA of each unit overwrites the accumulators */
                    cuops_wgmma_m64nk16<tile::CN, !AB_BF16, A_MN ? 1 : 0, B_MN ? 1 : 0>(
                        acc, desc_a + A_KSTEP * kk, desc_b + B_KSTEP * kk,
                        (i > 0 || kk > 0) ? 1 : 0);
                }
                cuops_wgmma_commit();
                /* Keep this k-block's group in flight; the previous one is
                 * done after wait<1>, so its stage can go back to the producer. */
                cuops_wgmma_wait<1>();
#pragma unroll
                for (int r = 0; r < tile::ACC; r++) cuops_reg_fence(acc[r]);
                if (i > 0) sm90_release_stage<MCM, MCN>(SM90_EMPTY_BAR(prev_stage), rm, rn);
                prev_stage = stage;
                cuops_ring_advance<STAGES>(stage, phase);
            }
            cuops_wgmma_wait<0>();
#pragma unroll
            for (int r = 0; r < tile::ACC; r++) cuops_reg_fence(acc[r]);
            sm90_release_stage<MCM, MCN>(SM90_EMPTY_BAR(prev_stage), rm, rn);

            /* a tail piece: only the tile's last piece to arrive stores it */
            if (TAIL && u >= p.dp_units && !sm90_tail_piece(p, u, consumer, acc)) continue;
            if (MCAST && (tm >= p.tiles_m || tn >= p.tiles_n)) {
                /* a block's tile past m or n: nothing to store (both
                 * consumers skip alike, so the epilogue's named barriers
                 * stay matched) */
            } else if (SPLIT && DSMEM) {
                /* both consumers done with the ring (their wgmma reads have
                 * completed: wait<0> above), so its memory takes the partials */
                cuops_named_bar_sync(1, 256);
                cuops_fence_proxy_async_smem();
                sm90_store_partials_smem(smem_base, consumer, acc);
            } else if (SPLIT) {
                sm90_store_partials(partials, u, consumer, acc);
            } else if (SHIFT) {
                sm90_epilogue_shift<OutT, tile::ACC, BM / 8>(
                    p, smaps, acc, epi_smem + (uint32_t)(consumer * 2 * SM90_EPI_BUF_BYTES),
                    consumer, tm * BM, tn * BN + consumer * tile::COL_STEP, epi_parity);
            } else if (sizeof(OutT) == 2 && p.c_tma) {
                sm90_epilogue_tma<OutT>(p, tmap_c, acc,
                                        epi_smem + (uint32_t)(consumer * 2 * SM90_EPI_BUF_BYTES),
                                        consumer, tm * BM + consumer * tile::ROW_STEP,
                                        tn * BN + consumer * tile::COL_STEP, epi_parity);
            } else {
                sm90_epilogue<OutT>(p, acc, tm * BM + consumer * tile::ROW_STEP,
                                    tn * BN + consumer * tile::COL_STEP);
            }
        }
        /* the epilogue buffers must outlive the last TMA store's reads */
        if (!SPLIT && sizeof(OutT) == 2 && (p.c_tma || SHIFT) &&
            threadIdx.x % (SHIFT ? 32 : 128) == 0)
            cuops_tma_store_wait_all();
        if (DSMEM) {
            cuops_cluster_sync();
            sm90_cluster_reduce_store<BM, BN, OutT>(p, splits, smem_base);
            cuops_cluster_sync_relaxed();
        }
        /* MCAST: no cluster barrier at the end; the producer's tail wait
         * keeps the CTA alive until its peers are done with it */
    }
#undef SM90_FULL_BAR
#undef SM90_EMPTY_BAR
}

#endif /* CUOPS_SM90A_DEVICE */

/* The unsplit kernel; MCM x MCN > 1 (sm90_ws_128x256_mc2, ...): launched in
 * clusters of MCM x MCN CTAs that share each k-block's A and B tiles by TMA
 * multicast. */
template <int BM, int BN, bool AB_BF16, typename OutT, int MCM = 1, int MCN = 1, int MN = 0>
__global__ void __launch_bounds__(SM90_THREADS, 1)
sm90_ws_kernel(const __grid_constant__ CUtensorMap tmap_a,
               const __grid_constant__ CUtensorMap tmap_b,
               const __grid_constant__ CUtensorMap tmap_c, const sm90_gemm_params_t p)
{
#if CUOPS_SM90A_DEVICE
    sm90_ws_cta<BM, BN, AB_BF16, OutT, false, false, MCM, MCN, false, MN>(tmap_a, tmap_b, &tmap_c,
                                                                          p, NULL, 1);
#endif
}

/* The unsplit kernel for a 16-bit C whose rows TMA cannot store to in
 * place (sm90_shift_maps_t); MN: 0, or 2 (B N-major, read in place). */
template <int BM, int BN, bool AB_BF16, typename OutT, int MN = 0>
__global__ void __launch_bounds__(SM90_THREADS, 1)
sm90_ws_shift_kernel(const __grid_constant__ CUtensorMap tmap_b,
                     const __grid_constant__ sm90_shift_maps_t maps, const sm90_gemm_params_t p)
{
#if CUOPS_SM90A_DEVICE
    sm90_ws_cta<BM, BN, AB_BF16, OutT, false, false, 1, 1, true, MN>(maps.a[0], tmap_b, NULL, p,
                                                                      NULL, 1, &maps);
#endif
}

/* The same, with misaligned K-major operands packed inside the kernel by the
 * producer warpgroup's idle warps (gemm_sm90_fused_pack.cuh) instead of by a
 * launch before it. */
template <int BM, int BN, bool AB_BF16, typename OutT>
__global__ void __launch_bounds__(SM90_THREADS, 1)
sm90_ws_shift_pack_kernel(const __grid_constant__ CUtensorMap tmap_b,
                          const __grid_constant__ sm90_shift_maps_t maps, const sm90_gemm_params_t p,
                          const __grid_constant__ sm90_fused_pack_t pk)
{
#if CUOPS_SM90A_DEVICE
    sm90_ws_cta<BM, BN, AB_BF16, OutT, false, false, 1, 1, true, 0, true>(maps.a[0], tmap_b, NULL,
                                                                          p, NULL, 1, &maps, &pk);
#endif
}

/* The main loop of split-K: fp32 partials, no C access. */
template <int BM, int BN, bool AB_BF16, int MN = 0>
__global__ void __launch_bounds__(SM90_THREADS, 1)
sm90_ws_splitk_kernel(const __grid_constant__ CUtensorMap tmap_a,
                      const __grid_constant__ CUtensorMap tmap_b, const sm90_gemm_params_t p,
                      const sm90_splitk_params_t sp)
{
#if CUOPS_SM90A_DEVICE
    sm90_ws_cta<BM, BN, AB_BF16, float, true, false, 1, 1, false, MN>(tmap_a, tmap_b, NULL, p,
                                                                      sp.partials, sp.splits);
#endif
}

/* Split-K with the reduction in the cluster: grid = tiles * S CTAs in
 * clusters of S (one unit each). */
template <int BM, int BN, bool AB_BF16, typename OutT, int MN = 0>
__global__ void __launch_bounds__(SM90_THREADS, 1)
sm90_ws_splitk_dsmem_kernel(const __grid_constant__ CUtensorMap tmap_a,
                            const __grid_constant__ CUtensorMap tmap_b, const sm90_gemm_params_t p,
                            const int splits)
{
#if CUOPS_SM90A_DEVICE
    sm90_ws_cta<BM, BN, AB_BF16, OutT, true, true, 1, 1, false, MN>(tmap_a, tmap_b, NULL, p, NULL,
                                                                    splits);
#endif
}

/* Split-K fixup: C = alpha * (sum over s = 0..S-1 of the partials, in that
 * order, fp32) + beta * C. With F = BN / 32 CTAs per consumer half (8 at
 * BN = 256), CTA b serves tile b / 2F, consumer half (b % 2F) / F, float4
 * columns j0 .. j0 + 3 with j0 = 4 * (b % F). Thread t
 * stands for consumer thread t of the main kernel: it reads the float4s that
 * thread wrote (coalesced: 512 contiguous bytes per warp and j) and owns the
 * same C elements as in sm90_epilogue (row 16*warp + lane/4 (+8), column
 * 8*j + 2*(lane%4) (+1)), stored with the same masking. The partials were
 * written by the previous kernel on the stream, so they are read through L2
 * (ld.global.cg): 16 MB for m = 128, n = k = 4096, S = 8, held in the 50 MB
 * L2. */
#if CUOPS_SM90A_DEVICE
__device__ __forceinline__ void sm90_add4(float4 &a, const float4 b)
{
    a.x += b.x;
    a.y += b.y;
    a.z += b.z;
    a.w += b.w;
}
#endif

template <int BM, int BN, typename OutT>
__global__ void __launch_bounds__(SM90_FIXUP_THREADS)
sm90_splitk_fixup_kernel(const sm90_gemm_params_t p, const sm90_splitk_params_t sp)
{
#if CUOPS_SM90A_DEVICE
    constexpr int F4 = sm90_tile<BM, BN>::F4;
    constexpr int PER_UNIT = sm90_tile<BM, BN>::PARTIAL_F4_PER_UNIT;
    const int tile = blockIdx.x / sm90_tile<BM, BN>::FIXUP_CTAS_PER_TILE;
    const int part = blockIdx.x - tile * sm90_tile<BM, BN>::FIXUP_CTAS_PER_TILE;
    const int consumer = part / (F4 / SM90_FIXUP_F4);
    const int j0 = (part % (F4 / SM90_FIXUP_F4)) * SM90_FIXUP_F4;
    const int t = threadIdx.x;

    const float4 *src = sp.partials + (size_t)tile * sp.splits * PER_UNIT +
                        (size_t)consumer * (F4 * 128) + j0 * 128 + t;
    float4 sum[SM90_FIXUP_F4];
#pragma unroll
    for (int j = 0; j < SM90_FIXUP_F4; j++) sum[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    /* Four splits' loads (16 float4 = 256 bytes per thread) are issued before
     * their adds, so up to 32 KB per 128-thread CTA is in flight against the
     * L2 latency; the adds stay in split order (no reassociation without
     * fast-math), which makes the result independent of timing. */
    int s = 0;
    for (; s + SM90_FIXUP_BATCH <= sp.splits; s += SM90_FIXUP_BATCH) {
        float4 v[SM90_FIXUP_BATCH][SM90_FIXUP_F4];
#pragma unroll
        for (int q = 0; q < SM90_FIXUP_BATCH; q++)
#pragma unroll
            for (int j = 0; j < SM90_FIXUP_F4; j++)
                v[q][j] = __ldcg(src + (size_t)(s + q) * PER_UNIT + j * 128);
#pragma unroll
        for (int q = 0; q < SM90_FIXUP_BATCH; q++)
#pragma unroll
            for (int j = 0; j < SM90_FIXUP_F4; j++) sm90_add4(sum[j], v[q][j]);
    }
    for (; s < sp.splits; s++) {
#pragma unroll
        for (int j = 0; j < SM90_FIXUP_F4; j++)
            sm90_add4(sum[j], __ldcg(src + (size_t)s * PER_UNIT + j * 128));
    }

    int tm, tn;
    sm90_tile_coords(p, tile, &tm, &tn);
    const int warp = t / 32, lane = t % 32;
    const int row_a = tm * BM + consumer * sm90_tile<BM, BN>::ROW_STEP + warp * 16 + lane / 4;
    const int col_a = tn * BN + consumer * sm90_tile<BM, BN>::COL_STEP + 2 * (lane % 4) + 8 * j0;
    OutT *c = (OutT *)p.c;
    const bool read_c = (p.beta != 0.0f);
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = row_a + 8 * half;
        if (row >= p.m) continue;
        OutT *c_row = c + (int64_t)row * p.ldc;
#pragma unroll
        for (int j = 0; j < SM90_FIXUP_F4; j++) {
            const float v0 = half ? sum[j].z : sum[j].x;
            const float v1 = half ? sum[j].w : sum[j].y;
            sm90_store_c2<OutT>(p, c_row, col_a + 8 * j, p.alpha * v0, p.alpha * v1, read_c);
        }
    }
#endif
}

/* ---- host side ----------------------------------------------------------- */

typedef void (*sm90_kernel_fn)(const CUtensorMap, const CUtensorMap, const CUtensorMap,
                               const sm90_gemm_params_t);
typedef void (*sm90_shift_kernel_fn)(const CUtensorMap, const sm90_shift_maps_t,
                                     const sm90_gemm_params_t);
typedef void (*sm90_shift_pack_kernel_fn)(const CUtensorMap, const sm90_shift_maps_t,
                                          const sm90_gemm_params_t, const sm90_fused_pack_t);
typedef void (*sm90_splitk_kernel_fn)(const CUtensorMap, const CUtensorMap,
                                      const sm90_gemm_params_t, const sm90_splitk_params_t);
typedef void (*sm90_fixup_kernel_fn)(const sm90_gemm_params_t, const sm90_splitk_params_t);
typedef void (*sm90_dsmem_kernel_fn)(const CUtensorMap, const CUtensorMap, const sm90_gemm_params_t,
                                     const int);

template <int BM, int BN, int MCM = 1, int MCN = 1, int MN = 0>
static sm90_kernel_fn sm90_pick_kernel(cuops_dtype_t ab, cuops_dtype_t c)
{
    const bool bf = (ab == CUOPS_DTYPE_BF16);
    switch (c) {
    case CUOPS_DTYPE_F16:
        return bf ? sm90_ws_kernel<BM, BN, true, __half, MCM, MCN, MN>
                  : sm90_ws_kernel<BM, BN, false, __half, MCM, MCN, MN>;
    case CUOPS_DTYPE_BF16:
        return bf ? sm90_ws_kernel<BM, BN, true, __nv_bfloat16, MCM, MCN, MN>
                  : sm90_ws_kernel<BM, BN, false, __nv_bfloat16, MCM, MCN, MN>;
    case CUOPS_DTYPE_F32:
        return bf ? sm90_ws_kernel<BM, BN, true, float, MCM, MCN, MN>
                  : sm90_ws_kernel<BM, BN, false, float, MCM, MCN, MN>;
    default:
        return NULL;
    }
}

/* The unsplit kernel (plain, or multicast in clusters of MCM x MCN) with A
 * M-major (mn bit 0) and / or B N-major (bit 1) read in place (sm90_ws_cta's
 * MN). */
template <int BM, int BN, int MCM = 1, int MCN = 1>
static sm90_kernel_fn sm90_pick_mn_kernel(cuops_dtype_t ab, cuops_dtype_t c, int mn)
{
    switch (mn) {
    case 1: return sm90_pick_kernel<BM, BN, MCM, MCN, 1>(ab, c);
    case 2: return sm90_pick_kernel<BM, BN, MCM, MCN, 2>(ab, c);
    case 3: return sm90_pick_kernel<BM, BN, MCM, MCN, 3>(ab, c);
    default: return sm90_pick_kernel<BM, BN, MCM, MCN>(ab, c);
    }
}

/* The shifted-rows kernel for a 16-bit C (NULL for any other C type). */
template <int BM, int BN, int MN = 0>
static sm90_shift_kernel_fn sm90_pick_shift_kernel(cuops_dtype_t ab, cuops_dtype_t c)
{
    const bool bf = (ab == CUOPS_DTYPE_BF16);
    switch (c) {
    case CUOPS_DTYPE_F16:
        return bf ? sm90_ws_shift_kernel<BM, BN, true, __half, MN>
                  : sm90_ws_shift_kernel<BM, BN, false, __half, MN>;
    case CUOPS_DTYPE_BF16:
        return bf ? sm90_ws_shift_kernel<BM, BN, true, __nv_bfloat16, MN>
                  : sm90_ws_shift_kernel<BM, BN, false, __nv_bfloat16, MN>;
    default:
        return NULL;
    }
}

/* The shifted-rows kernel that packs its operands itself (16-bit C). */
template <int BM, int BN>
static sm90_shift_pack_kernel_fn sm90_pick_shift_pack_kernel(cuops_dtype_t ab, cuops_dtype_t c)
{
    const bool bf = (ab == CUOPS_DTYPE_BF16);
    switch (c) {
    case CUOPS_DTYPE_F16:
        return bf ? sm90_ws_shift_pack_kernel<BM, BN, true, __half>
                  : sm90_ws_shift_pack_kernel<BM, BN, false, __half>;
    case CUOPS_DTYPE_BF16:
        return bf ? sm90_ws_shift_pack_kernel<BM, BN, true, __nv_bfloat16>
                  : sm90_ws_shift_pack_kernel<BM, BN, false, __nv_bfloat16>;
    default:
        return NULL;
    }
}

template <int BM, int BN> static sm90_fixup_kernel_fn sm90_pick_fixup_kernel(cuops_dtype_t c)
{
    switch (c) {
    case CUOPS_DTYPE_F16: return sm90_splitk_fixup_kernel<BM, BN, __half>;
    case CUOPS_DTYPE_BF16: return sm90_splitk_fixup_kernel<BM, BN, __nv_bfloat16>;
    case CUOPS_DTYPE_F32: return sm90_splitk_fixup_kernel<BM, BN, float>;
    default: return NULL;
    }
}

/* MN: bit 0 A M-major, bit 1 B N-major, read in place (sm90_ws_cta) */
template <int BM, int BN, int MN = 0>
static sm90_dsmem_kernel_fn sm90_pick_dsmem_kernel(cuops_dtype_t ab, cuops_dtype_t c)
{
    const bool bf = (ab == CUOPS_DTYPE_BF16);
    switch (c) {
    case CUOPS_DTYPE_F16:
        return bf ? sm90_ws_splitk_dsmem_kernel<BM, BN, true, __half, MN>
                  : sm90_ws_splitk_dsmem_kernel<BM, BN, false, __half, MN>;
    case CUOPS_DTYPE_BF16:
        return bf ? sm90_ws_splitk_dsmem_kernel<BM, BN, true, __nv_bfloat16, MN>
                  : sm90_ws_splitk_dsmem_kernel<BM, BN, false, __nv_bfloat16, MN>;
    case CUOPS_DTYPE_F32:
        return bf ? sm90_ws_splitk_dsmem_kernel<BM, BN, true, float, MN>
                  : sm90_ws_splitk_dsmem_kernel<BM, BN, false, float, MN>;
    default:
        return NULL;
    }
}

/* The cluster split-K kernel for A M-major (mn bit 0) and / or B N-major
 * (bit 1) read in place. */
template <int BM, int BN>
static sm90_dsmem_kernel_fn sm90_pick_dsmem_mn_kernel(cuops_dtype_t ab, cuops_dtype_t c, int mn)
{
    switch (mn) {
    case 1: return sm90_pick_dsmem_kernel<BM, BN, 1>(ab, c);
    case 2: return sm90_pick_dsmem_kernel<BM, BN, 2>(ab, c);
    case 3: return sm90_pick_dsmem_kernel<BM, BN, 3>(ab, c);
    default: return sm90_pick_dsmem_kernel<BM, BN>(ab, c);
    }
}

/* The split-K main loop (fp32 partials) for A M-major (mn bit 0) and / or
 * B N-major (bit 1) read in place. */
template <int BM, int BN> static sm90_splitk_kernel_fn sm90_pick_splitk_kernel(bool bf, int mn)
{
    switch (mn) {
    case 1:
        return bf ? sm90_ws_splitk_kernel<BM, BN, true, 1> : sm90_ws_splitk_kernel<BM, BN, false, 1>;
    case 2:
        return bf ? sm90_ws_splitk_kernel<BM, BN, true, 2> : sm90_ws_splitk_kernel<BM, BN, false, 2>;
    case 3:
        return bf ? sm90_ws_splitk_kernel<BM, BN, true, 3> : sm90_ws_splitk_kernel<BM, BN, false, 3>;
    default:
        return bf ? sm90_ws_splitk_kernel<BM, BN, true> : sm90_ws_splitk_kernel<BM, BN, false>;
    }
}

/* Tiles of BM x BN over the call's C. */
template <int BM, int BN> static int64_t sm90_tiles(const cuops_gemm_desc_t *d)
{
    return cuops_ceil_div(d->m, BM) * cuops_ceil_div(d->n, BN);
}

/* TMA coordinates and the tile arithmetic are 32-bit. */
#define SM90_MAX_DIM ((int64_t)0x7fffffff - 1024)

/* Arch, dtypes, shared memory, size limits and element alignment: what
 * every table entry needs. */
template <int BM, int BN>
static int sm90_ws_can_run(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    if (h->sm_major != 9) return 0;
    if (d->ab_type != CUOPS_DTYPE_F16 && d->ab_type != CUOPS_DTYPE_BF16) return 0;
    if (d->c_type != CUOPS_DTYPE_F16 && d->c_type != CUOPS_DTYPE_BF16 &&
        d->c_type != CUOPS_DTYPE_F32)
        return 0;
    if (h->smem_optin_bytes < sm90_tile<BM, BN>::SMEM_BYTES) return 0;
    if (d->m > SM90_MAX_DIM || d->n > SM90_MAX_DIM || d->k > SM90_MAX_DIM) return 0;
    if (sm90_tiles<BM, BN>(d) > 0x7fffffff) return 0;
    /* Elements must at least sit at their natural alignment. */
    if (!cuops_aligned(d->a, 2) || !cuops_aligned(d->b, 2) ||
        !cuops_aligned(d->c, cuops_dtype_size(d->c_type)))
        return 0;
    /* A user workspace too small for the operands that must be packed (rows
     * TMA cannot read in place): decline, so that auto goes on down its list
     * (to fallback_tiled) instead of failing the call for want of room. */
    if (h->user_workspace) {
        const size_t need = (cuops_sm90_tma_ok(d->a, d->lda) ? 0 : cuops_sm90_packed_bytes(d->m, d->k)) +
                            (cuops_sm90_tma_ok(d->b, d->ldb) ? 0 : cuops_sm90_packed_bytes(d->n, d->k));
        if (need > 0 && h->user_workspace_bytes < need + 256) return 0;
    }
    return 1;
}

template <int BM, int BN>
static int sm90_ws_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    /* Decode-sized M (m <= 64) leaves a 128-row tile mostly empty, but the
     * auto order puts the decode kernels and the split-K entries first, so
     * only the small-m calls they all decline get here: operands TMA cannot
     * read in place (rows off 16 bytes, e.g. odd k) with more tiles than a
     * split takes or K too short to split. Packed, they stream the weight
     * over one tile row per CTA; before, they went to fallback_tiled. */
    return sm90_ws_can_run<BM, BN>(h, d);
}

/*
 * Split-K plan: how many ways to split K, or 0 for "do not split".
 *
 * Split only when the tile grid covers at most half of the SMs (otherwise a
 * split buys less than it costs: the partials round trip and a second
 * launch) and K holds at least 8 k-blocks. S = min(#SMs / tiles,
 * k_blocks / 4, 16): the S units of every tile fit in one wave (tiles * S <=
 * #SMs), each split runs >= 4 k-blocks (one full ring of stages, so the
 * pipeline fills before the epilogue), and the partials stay a few tens of MB
 * (S * tiles * 128 KB <= #SMs * 128 KB = 16.5 MB on 132 SMs, inside L2).
 * On 132 SMs: 128 x 4096 x 4096 -> 16 tiles, S = 8; 1000^3 and 1024^3 ->
 * 32 tiles, S = 4; 128 x 4096 x 1024 -> 16 tiles, S = 4.
 */
template <int BM, int BN>
static int sm90_splitk_splits(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    const int64_t sms = h->num_sms;
    const int64_t tiles = sm90_tiles<BM, BN>(d);
    const int64_t k_blocks = cuops_ceil_div(d->k, SM90_BK);
    if (sms <= 0 || tiles <= 0 || 2 * tiles > sms || k_blocks < SM90_SPLITK_MIN_K_BLOCKS) return 0;
    const int64_t by_k = k_blocks / (BN == 128 ? SM90_SPLITK_MIN_BLOCKS_PER_SPLIT_128
                                               : SM90_SPLITK_MIN_BLOCKS_PER_SPLIT);
    int64_t s = sms / tiles;
    if (s > by_k) s = by_k;
    if (s > SM90_SPLITK_MAX_SPLITS) s = SM90_SPLITK_MAX_SPLITS;
    return s >= 2 ? (int)s : 0;
}

/* Clusters of `size` CTAs of the DSMEM kernel that device `dev` holds at
 * once (cudaOccupancyMaxActiveClusters; every instantiation has the same
 * block, shared memory and registers, so one answer per size and device).
 * -1 when the query fails. */
template <int BM, int BN> static int sm90_dsmem_max_clusters(int dev, int size)
{
    static int cache[16][SM90_DSMEM_MAX_SPLITS + 1]; /* one per BN */
    if (dev < 0 || dev >= 16 || size < 2 || size > SM90_DSMEM_MAX_SPLITS) return -1;
    int *slot = &cache[dev][size];
    if (__atomic_load_n(slot, __ATOMIC_RELAXED) == 0)
        __atomic_store_n(slot,
                         cuops_cluster_max_active(
                             (const void *)sm90_ws_splitk_dsmem_kernel<BM, BN, false, __half>,
                             SM90_THREADS, size, sm90_tile<BM, BN>::SMEM_BYTES),
                         __ATOMIC_RELAXED);
    return __atomic_load_n(slot, __ATOMIC_RELAXED);
}

/* Clusters of MCM x MCN CTAs of the multicast kernel that device `dev`
 * holds at once (a GPC whose free SMs are not a multiple of the cluster
 * size leaves some idle); -1 when the query fails. */
template <int BM, int BN, int MCM, int MCN> static int sm90_mc_max_clusters(int dev)
{
    static int cache[16];
    if (dev < 0 || dev >= 16) return -1;
    if (__atomic_load_n(&cache[dev], __ATOMIC_RELAXED) == 0)
        __atomic_store_n(
            &cache[dev],
            cuops_cluster_max_active((const void *)sm90_ws_kernel<BM, BN, false, __half, MCM, MCN>,
                                     SM90_THREADS, MCM * MCN, sm90_tile<BM, BN>::SMEM_BYTES),
            __ATOMIC_RELAXED);
    return __atomic_load_n(&cache[dev], __ATOMIC_RELAXED);
}

template <int BM = 128, int BN = 256, int MCM = 2, int MCN = 1>
static int sm90_ws_mc_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    return sm90_ws_supports<BM, BN>(h, d) && sm90_mc_max_clusters<BM, BN, MCM, MCN>(h->device) >= 1;
}

/* The multicast entries' names: sm90_ws_<BM>x<BN>_mc<MCM>[x<MCN>]. */
template <int BM, int BN, int MCM, int MCN> static const char *sm90_mc_name(void)
{
    if (BN == 256) return "sm90_ws_128x256_mc2";
    if (BM == 128) return "sm90_ws_128x128_mc2";
    if (MCN == 1) return MCM == 2 ? "sm90_ws_64x128_mc2" : "sm90_ws_64x128_mc4";
    return MCM == 2 ? "sm90_ws_64x128_mc2x2" : "sm90_ws_64x128_mc4x2";
}

/* Cluster split-K plan: the split-K plan's S capped at the portable cluster
 * size (8) and lowered until every tile's cluster is resident at once (a
 * second wave of clusters would double the time); 0 where none fits. */
template <int BM, int BN>
static int sm90_dsmem_splits(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    int s = sm90_splitk_splits<BM, BN>(h, d);
    if (s > SM90_DSMEM_MAX_SPLITS) s = SM90_DSMEM_MAX_SPLITS;
    const int64_t tiles = sm90_tiles<BM, BN>(d);
    for (; s >= 2; s--)
        if (tiles <= sm90_dsmem_max_clusters<BM, BN>(h->device, s)) return s;
    return 0;
}

template <int BM, int BN>
static int sm90_ws_dsmem_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    /* sm90_dsmem_splits is 0 wherever the split-K plan does not split */
    return sm90_ws_can_run<BM, BN>(h, d) && sm90_dsmem_splits<BM, BN>(h, d) > 0;
}

/* The split-K entry serves every m, m <= 64 included (with K split the few
 * tiles still reach every SM); the decode kernels come first in the auto
 * order and keep the NT calls of that range. */
static int sm90_ws_splitk_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    return sm90_ws_can_run<128, 256>(h, d) && sm90_splitk_splits<128, 256>(h, d) > 0;
}

/* two arrival counters per tail tile (cuops_cuda_counters), fewer tiles than SMs */
static_assert(2 * CUOPS_SM90_TAIL_MAX_SMS <= CUOPS_COUNTERS_MAX, "tail counters");

/* A 16-bit C, beta == 0 (C never read), that TMA stores to in place: n
 * whole 16-byte units (the store clips at n in 16-byte units), base and ldc
 * TMA-addressable. A 16-bit C with beta == 0 that fails this needs the
 * shifted rows or the staged C (sm90_ws_run). */
static bool sm90_c_tma_direct(const cuops_gemm_desc_t *d)
{
    return cuops_dtype_size(d->c_type) == 2 && d->beta == 0.0f && d->n % 8 == 0 &&
           cuops_sm90_tma_ok(d->c, d->ldc);
}

static bool sm90_c_shifted(const cuops_gemm_desc_t *d)
{
    return cuops_dtype_size(d->c_type) == 2 && d->beta == 0.0f && !sm90_c_tma_direct(d);
}

/* Packer CTAs of the study entries "_pack_ctas" (pack_inside 3), "_pack_ctas8"
 * (4) and "_pack_ctas24" (5): 16, 8 or 24 of the SMs pack the operands while
 * the others run the tiles (sm90_pack_cta); "_pack_join" (6) and
 * "_pack_join8" (7): 16 or 8, which then run tiles too, every unit claimed
 * from a counter (sm90_fused_pack_t's join). 0 for the other forms, and at
 * least half the SMs left to the tiles. */
static int sm90_pack_cta_count(int pack_inside, int sms)
{
    static const int want[8] = {0, 0, 0, 16, 8, 24, 16, 8};
    const int w = pack_inside >= 0 && pack_inside < 8 ? want[pack_inside] : 0;
    return w < sms / 2 ? w : sms / 2;
}

/* The rows of A and B that the grid's first round of units reads: A rows
 * [0, *a_end), B rows [0, *b_end) (whole tiles, clipped to m and n; the
 * grouped and the row-major orders both start their rounds at tile (0, 0)
 * and fill tile rows and columns from 0). The in-kernel pack packs them
 * first (sm90_fused_pack_t's phase 0). */
template <int BM, int BN>
static void sm90_first_round_rows(const sm90_gemm_params_t &p, int grid, int *a_end, int *b_end)
{
    const int units = p.dp_units + p.sk_tiles * p.sk_splits;
    int tm_max = 0, tn_max = 0;
    for (int u = 0; u < grid && u < units; u++) {
        int t = u, kb_first = 0, kb_count = 0;
        if (u >= p.dp_units) sm90_tail_unit(p, u, &t, &kb_first, &kb_count);
        int tm = 0, tn = 0;
        sm90_grouped_coords(p.tiles_m, p.tiles_n, p.group_rows, t, &tm, &tn);
        if (tm > tm_max) tm_max = tm;
        if (tn > tn_max) tn_max = tn;
    }
    const int64_t a = (int64_t)(tm_max + 1) * BM, b = (int64_t)(tn_max + 1) * BN;
    *a_end = (int)(a < p.m ? a : p.m);
    *b_end = (int)(b < p.n ? b : p.n);
}

/* One GEMM on the TMA + wgmma kernel: splits >= 2 runs the split-K pair
 * (main kernel + fixup), or with dsmem the cluster split-K kernel (splits <=
 * 8, clusters resident at once: sm90_dsmem_splits); splits == 0 the plain
 * kernel. Needs k > 0 and a call sm90_ws_can_run accepts.
 *
 * A 16-bit C that TMA cannot store to (ldc or base not 16-byte aligned, or
 * n % 8 != 0) with beta == 0: the plain kernel stores it in place with
 * shifted rows (sm90_shift_maps_t; C 2-byte aligned, m, n >= 8). Where that
 * does not serve (the multicast form, m or n < 8) it writes C through TMA
 * stores into an aligned [m, cuops_sm90_packed_ld(n)] array in the
 * workspace, and cuops_sm90_copy_rows moves it to C ("staged C";
 * docs/gemm.md). direct_c (the study entry sm90_ws_128x256_direct_c), and
 * for the staged C too small a user workspace or operands inside the
 * workspace: the register epilogue writes C in place. */
template <int BM, int BN, int MCM = 1, int MCN = 1>
static cuops_status_t sm90_ws_run(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                  const cuops_options_t *opt, int splits, int dsmem, int direct_c,
                                  int *tail_ran = NULL, int pack_inside = 0)
{
    if (tail_ran) *tail_ran = 0;
    using tile = sm90_tile<BM, BN>;
    constexpr bool mcast = MCM * MCN > 1;
    if (splits == 0) dsmem = 0;
    if (mcast && splits > 0)
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "multicast: no split-K form");
    /* the 64-row tile has no split-K form (its entry never asks for one) */
    if (BM == 64 && splits > 0)
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "sm90_ws_64x128: no split-K form");
    const char *const name = dsmem ? (BN == 256 ? "sm90_ws_128x256_splitk_dsmem"
                                                : "sm90_ws_128x128_splitk_dsmem")
                             : splits > 0 ? (BN == 256 ? "sm90_ws_128x256_splitk"
                                                       : "sm90_ws_128x128_splitk")
                             : mcast      ? sm90_mc_name<BM, BN, MCM, MCN>()
                             : BM == 64   ? "sm90_ws_64x128"
                                          : (BN == 256 ? "sm90_ws_128x256" : "sm90_ws_128x128");
    const unsigned flags = opt ? opt->flags : 0u;

    const size_t esize = cuops_dtype_size(d->c_type);
    const bool c_tma_direct = sm90_c_tma_direct(d);
    /* A 16-bit C that TMA cannot store to in place, beta == 0: the plain
     * kernel stores it with shifted rows (sm90_shift_maps_t), which need C's
     * elements 2-byte aligned, 8 rows and 8 columns; otherwise (and for the
     * multicast form) the staged C: TMA stores into aligned workspace, then
     * a row copy out to C. Its maps step 8 rows of C and of A at a time: the
     * row strides, 16 * ld bytes, must stay below TMA's 2^40. */
    const int64_t shift_ld_max = (int64_t)1 << 36;
    const bool shift_c = splits == 0 && !mcast && !direct_c && esize == 2 && d->beta == 0.0f &&
                         !c_tma_direct && cuops_aligned(d->c, 2) && d->m >= 8 && d->n >= 8 &&
                         d->ldc < shift_ld_max && d->lda < shift_ld_max;

    /* Operands: K-major [rows, k] arrays TMA can read in place; MN-major ones
     * in place too (sm90_ws_cta's MN): B with trans_b = N and A with trans_a
     * = T in every form but the multicast study entries, except A in the
     * shifted-rows form (its A maps are K-major); anything else packed into
     * K-major workspace. */
    const void *a = d->a, *b = d->b;
    int64_t lda = d->lda, ldb = d->ldb;
    constexpr bool mn_forms = !mcast || (BM == 64 && BN == 128 && MCN == 1);
    const bool a_tma = cuops_sm90_tma_ok(d->a, d->lda), b_tma = cuops_sm90_tma_ok(d->b, d->ldb);
    const bool a_mn = mn_forms && !shift_c && d->trans_a == CUOPS_OP_T && a_tma;
    const bool b_mn = mn_forms && d->trans_b == CUOPS_OP_N && b_tma;
    const int mn = (a_mn ? 1 : 0) | (b_mn ? 2 : 0); /* sm90_ws_cta's MN */
    const bool pack_a = !a_mn && (d->trans_a != CUOPS_OP_N || !a_tma);
    const bool pack_b = !b_mn && (d->trans_b != CUOPS_OP_T || !b_tma);
    const int64_t ldp = cuops_sm90_packed_ld(d->k);
    const size_t a_bytes = pack_a ? cuops_sm90_packed_bytes(d->m, d->k) : 0;
    const size_t b_bytes = pack_b ? cuops_sm90_packed_bytes(d->n, d->k) : 0;
    const int64_t num_tiles = sm90_tiles<BM, BN>(d);
    const size_t partial_bytes =
        (splits > 0 && !dsmem)
            ? (size_t)num_tiles * (size_t)splits * tile::PARTIAL_F4_PER_UNIT * sizeof(float4)
            : 0;
    /* operands inside the handle's workspace (a caller inside cuops, e.g. the
     * W4A16 dequant-then-GEMM path): nothing of this call may be put there */
    const bool operands_in_ws = cuops_cuda_gemm_operands_in_workspace(h, d);
    bool stage_c = !shift_c && splits == 0 && !direct_c && esize == 2 && d->beta == 0.0f &&
                   !c_tma_direct && !operands_in_ws;
    const int64_t ldc_staged = cuops_sm90_packed_ld(d->n);
    size_t c_bytes = stage_c ? cuops_align256((size_t)d->m * (size_t)ldc_staged * 2u) : 0;
    if (stage_c && h->user_workspace &&
        h->user_workspace_bytes < a_bytes + b_bytes + partial_bytes + c_bytes + 256) {
        stage_c = false;
        c_bytes = 0;
    }
    /* the "_pack_ctas" entries: that many CTAs pack, the rest run the tiles
     * (the split tail planned for them whether or not this call packs) */
    const int pack_ctas = sm90_pack_cta_count(pack_inside, h->num_sms);
    const bool pack_join = pack_ctas > 0 && pack_inside >= 6;
    const int gemm_sms = h->num_sms - pack_ctas;
    /* the split tail's round: every CTA where the packers join the tiles */
    const int tail_sms = pack_join ? h->num_sms : gemm_sms;
    /* The split tail (plain kernel; options.split_k = 1 forbids it, as it
     * forbids any split): its partials after the staged C, and with a user
     * workspace its counters too, cleared per call (nothing is allocated
     * there). Without room, or with operands in the workspace, no tail. */
    int sk_splits = 0;
    if (splits == 0 && !mcast && !(opt && opt->split_k == 1))
        sk_splits = cuops_sm90_tail_splits(num_tiles, cuops_ceil_div(d->k, SM90_BK), tail_sms);
    int sk_tiles = sk_splits > 0 ? (int)(num_tiles % tail_sms) : 0;
    size_t tail_bytes =
        sk_tiles > 0 ? (size_t)sk_tiles * sk_splits * tile::PARTIAL_F4_PER_UNIT * sizeof(float4) : 0;
    /* Operands that are only misaligned (K-major, rows off 16 bytes), with C
     * in the shifted-rows form: packed by a launch before the kernel, or, in
     * the study entries "_pack_inside" (SM90_PACK_INSIDE_AUTO: in auto too),
     * inside the GEMM kernel by the producer warpgroup's idle warps while
     * the tiles run (sm90_ws_shift_pack_kernel, gemm_sm90_fused_pack.cuh),
     * where its counters and shared memory fit. */
    const int64_t pack_slices = cuops_ceil_div(ldp, SM90_PACK_SLICE);
    bool fuse_pack = shift_c && (pack_inside || SM90_PACK_INSIDE_AUTO) && (pack_a || pack_b) && !b_mn &&
                     (!pack_a || d->trans_a == CUOPS_OP_N) && (!pack_b || d->trans_b == CUOPS_OP_T) &&
                     !operands_in_ws && d->m + d->n < 0x7fffffff &&
                     h->smem_optin_bytes >= sm90_pack_smem_bytes<BM, BN>() &&
                     2 * (int64_t)sk_tiles + sm90_pack_counters(pack_slices) <= CUOPS_COUNTERS_MAX;
    if (fuse_pack && h->user_workspace &&
        h->user_workspace_bytes <
            a_bytes + b_bytes + c_bytes +
                cuops_align256(cuops_cuda_counter_bytes(h, (size_t)sm90_pack_counters(pack_slices))) +
                256)
        fuse_pack = false;
    const int64_t pack_counters = fuse_pack ? sm90_pack_counters(pack_slices) : 0;
    size_t counter_bytes =
        cuops_align256(cuops_cuda_counter_bytes(h, 2u * (size_t)sk_tiles + (size_t)pack_counters));
    if (sk_tiles > 0 &&
        (operands_in_ws ||
         (h->user_workspace && h->user_workspace_bytes < a_bytes + b_bytes + partial_bytes +
                                                             c_bytes + tail_bytes +
                                                             counter_bytes + 256))) {
        sk_tiles = sk_splits = 0;
        tail_bytes = 0;
        counter_bytes = cuops_align256(cuops_cuda_counter_bytes(h, (size_t)pack_counters));
    }
    const size_t sk_bytes = tail_bytes + counter_bytes;

    /* One workspace region for everything this call keeps there, carved as
     * [packed A][packed B][partials][staged C][tail partials][tail counters
     * (user workspace)]: a second cuops_cuda_workspace call could move the
     * block (the handle's own grows by reallocation) and leave the first
     * pointer dangling. +256: a workspace given through
     * cuops_set_workspace may start at any address; the packed arrays must be
     * 16-byte aligned for TMA, the partials for float4. */
    void *ws = NULL;
    if (a_bytes + b_bytes + partial_bytes + c_bytes + sk_bytes > 0) {
        const size_t need = a_bytes + b_bytes + partial_bytes + c_bytes + sk_bytes + 256;
        if (splits > 0 && !dsmem) {
            /* Without room for the partials the plain kernel still serves the
             * call (cuops_last_kernel then says so). */
            const bool too_small = h->user_workspace && h->user_workspace_bytes < need;
            if (too_small || operands_in_ws)
                return sm90_ws_run<BM, BN>(h, d, opt, 0, 0, direct_c, NULL, pack_inside);
        }
        void *ws_raw = NULL;
        cuops_status_t st = cuops_cuda_workspace(h, need, &ws_raw);
        if (st == CUOPS_STATUS_ALLOC_FAILED && splits > 0 && !dsmem)
            return sm90_ws_run<BM, BN>(h, d, opt, 0, 0, direct_c, NULL, pack_inside);
        /* without room for the tail's partials, no tail */
        if (st == CUOPS_STATUS_ALLOC_FAILED && sk_tiles > 0) {
            cuops_options_t no_tail;
            memset(&no_tail, 0, sizeof no_tail);
            if (opt) no_tail = *opt;
            no_tail.split_k = 1;
            return sm90_ws_run<BM, BN, MCM, MCN>(h, d, &no_tail, 0, 0, direct_c, tail_ran,
                                                 pack_inside);
        }
        /* without room for the staged C, the register epilogue */
        if (st == CUOPS_STATUS_ALLOC_FAILED && stage_c)
            return sm90_ws_run<BM, BN, MCM, MCN>(h, d, opt, 0, 0, 1, tail_ran, pack_inside);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        ws = (void *)(((uintptr_t)ws_raw + 255) & ~(uintptr_t)255);
    }
    if (fuse_pack) {
        /* packed by the GEMM kernel itself */
    } else if (pack_a && pack_b) {
        const cuops_sm90_rows_t pa = {d->a, d->lda, ws, ldp, d->m};
        const cuops_sm90_rows_t pb = {d->b, d->ldb, (uint8_t *)ws + a_bytes, ldp, d->n};
        cuops_status_t st = cuops_sm90_pack_pair(h, &pa, d->trans_a == CUOPS_OP_N, &pb,
                                                 d->trans_b == CUOPS_OP_T, d->k);
        if (st != CUOPS_STATUS_SUCCESS) return st;
    } else if (pack_a) {
        cuops_status_t st = cuops_sm90_pack_kmajor(h, d->a, d->lda, d->trans_a == CUOPS_OP_N,
                                                   d->m, d->k, ws, ldp);
        if (st != CUOPS_STATUS_SUCCESS) return st;
    } else if (pack_b) {
        cuops_status_t st = cuops_sm90_pack_kmajor(h, d->b, d->ldb, d->trans_b == CUOPS_OP_T,
                                                   d->n, d->k, (uint8_t *)ws + a_bytes, ldp);
        if (st != CUOPS_STATUS_SUCCESS) return st;
    }
    if (pack_a) {
        a = ws;
        lda = ldp;
    }
    if (pack_b) {
        b = (uint8_t *)ws + a_bytes;
        ldb = ldp;
    }

    CUtensorMap tmap_a, tmap_b;
    memset(&tmap_a, 0, sizeof tmap_a);
    cuops_status_t st = CUOPS_STATUS_SUCCESS;
    /* 256-byte L2 promotion, except on the 64 x 128 tile, plain and
     * multicast: operand rows off the 128-byte lines run faster without it
     * (1000^3 14.1 -> 12.6 us plain, 11.9 -> 11.3 in clusters of two),
     * rows on the lines level (docs/gemm.md, "Rows off the lines,
     * continued"); and none on an N-major B that one tile row reads alone
     * (m <= BM): NN at 128 x 14336 x 4096, 128 x 4096 x 14336 and 128 x 28672
     * x 8192 ran 2-4 % faster without it, as the decode kernels' weight did,
     * while a K-major B there ran level or 2-3 % slower (H200, P202 call 7;
     * docs/gemm.md, "The weight maps without the 256-byte L2 promotion") */
    const int promote_a = BM != 64;
    const int promote_b = BM != 64 && !(b_mn && d->m <= BM);
    /* the shifted-rows kernel reads A through its own maps (sm90_shift_maps_t);
     * the multicast kernel's CTAs each load BM / MCN rows of the A tile and
     * BN / MCM of the B tile */
    if (a_mn)
        st = cuops_sm90_encode_mnmajor(h, &tmap_a, a, d->ab_type, d->m, d->k, lda, SM90_BK,
                                       promote_a);
    else if (!shift_c)
        st = cuops_sm90_encode_kmajor_l2(h, &tmap_a, a, d->ab_type, d->m, d->k, lda, BM / MCN,
                                         promote_a);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    st = b_mn ? cuops_sm90_encode_mnmajor(h, &tmap_b, b, d->ab_type, d->n, d->k, ldb,
                                          SM90_BK / MCM, promote_b)
              : cuops_sm90_encode_kmajor_l2(h, &tmap_b, b, d->ab_type, d->n, d->k, ldb, BN / MCM,
                                            promote_b);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    sm90_gemm_params_t p;
    memset(&p, 0, sizeof(p));
    p.c = d->c;
    p.ldc = d->ldc;
    p.m = (int)d->m;
    p.n = (int)d->n;
    p.k = (int)d->k;
    p.alpha = d->alpha;
    p.beta = d->beta;
    p.tiles_m = (int)cuops_ceil_div(d->m, BM);
    p.tiles_n = (int)cuops_ceil_div(d->n, BN);
    p.num_tiles = p.tiles_m * p.tiles_n;
    p.k_blocks = (int)cuops_ceil_div(d->k, SM90_BK);
    p.group_rows = (flags & CUOPS_FLAG_NO_SWIZZLE) ? 0 : SM90_GROUP_ROWS;
    /* Stagger-K rotates a whole tile's K loop; a split is one K range. */
    p.stagger_k = (splits == 0 && (flags & CUOPS_FLAG_STAGGER_K)) ? 1 : 0;
    p.c_pair_ok = cuops_aligned(d->c, 2 * esize) && (d->ldc % 2 == 0);
    /* the unsplit kernel's epilogue by TMA stores: 16-bit C that TMA can
     * address, n whole 16-byte units (the store clips at n in 16-byte units:
     * n = 7 wrote column 7 in the W4A16 kernel), no C to read (beta == 0);
     * or the staged C, whose extra columns n..ldc_staged-1 are never copied */
    CUtensorMap tmap_c;
    memset(&tmap_c, 0, sizeof tmap_c);
    void *c_staged = stage_c ? (uint8_t *)ws + a_bytes + b_bytes + partial_bytes : NULL;
    p.c_tma = splits == 0 && (c_tma_direct || stage_c);
    p.dp_units = (int)num_tiles;
    /* the tail's counters, then the in-kernel pack's, in one block */
    unsigned *counters = NULL;
    if (sk_tiles > 0 || pack_counters > 0) {
        uint8_t *tail = (uint8_t *)ws + a_bytes + b_bytes + partial_bytes + c_bytes;
        st = cuops_cuda_counters(h, 2u * (size_t)sk_tiles + (size_t)pack_counters,
                                 tail + tail_bytes, &counters);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        if (sk_tiles > 0) {
            p.dp_units = (int)(num_tiles - sk_tiles);
            p.sk_tiles = sk_tiles;
            p.sk_splits = sk_splits;
            p.sk_partials = (float4 *)tail;
            p.sk_counters = counters;
        }
    }
    if (p.c_tma) {
        st = stage_c ? cuops_sm90_encode_kmajor(h, &tmap_c, c_staged, d->c_type, d->m, ldc_staged,
                                                ldc_staged, 64)
                     : cuops_sm90_encode_kmajor(h, &tmap_c, d->c, d->c_type, d->m, d->n, d->ldc, 64);
        if (st != CUOPS_STATUS_SUCCESS) return st;
    }

    if (shift_c) {
        /* maps over the rows j mod 8 (row stride 8 ld): A's (aligned, or
         * packed above); C's with the base rounded down to 16 bytes, the
         * columns ending on the last 16-byte boundary at or before n */
        sm90_shift_maps_t smaps;
        memset(&smaps, 0, sizeof smaps);
        /* A's rows below 8 floor(m / 8) as one 3D map (the map's row groups
         * end there: a group past it would read rows past m) */
        if (cuops_sm90_encode_residues(h, &smaps.a3, a, d->ab_type, d->m / 8, d->k, lda,
                                       BM / 8) == CUOPS_STATUS_SUCCESS)
            smaps.a3_groups = (int)(d->m / 8); /* >= 1: m >= 8 */
        for (int j = 0; j < 8; j++) {
            const int64_t rows_j = (d->m - j + 7) / 8; /* >= 1: m >= 8 */
            st = cuops_sm90_encode_kmajor(h, &smaps.a[j], (const uint8_t *)a + j * lda * 2,
                                          d->ab_type, rows_j, d->k, 8 * lda, BM / 8);
            if (st != CUOPS_STATUS_SUCCESS) return st;
            const uintptr_t c_j = (uintptr_t)d->c + (uintptr_t)(j * d->ldc * 2);
            const int off = (int)((c_j & 15u) / 2u);
            const int64_t cols = (d->n + off) / 8 * 8; /* >= 8: n >= 8 */
            const void *c_base = (const void *)(c_j - 2u * (uintptr_t)off);
            st = cuops_sm90_encode_rows_plain(h, &smaps.c[j], c_base, d->c_type, rows_j, cols,
                                              8 * d->ldc, 64, BM / 8);
            if (st != CUOPS_STATUS_SUCCESS) return st;
            /* the 56-wide map serves the rows off 16 bytes only */
            if (off > 0)
                st = cuops_sm90_encode_rows_plain(h, &smaps.c56[j], c_base, d->c_type, rows_j,
                                                  cols, 8 * d->ldc, 56, BM / 8);
            if (st != CUOPS_STATUS_SUCCESS) return st;
            smaps.off[j] = off;
            smaps.n_al[j] = (int)(cols - off);
        }
        p.c_shift = 1;
        const int grid = p.num_tiles < gemm_sms ? p.num_tiles : gemm_sms;
        if (fuse_pack) {
            sm90_fused_pack_t pk;
            memset(&pk, 0, sizeof pk);
            pk.a = pack_a ? (const uint16_t *)d->a : NULL;
            pk.b = pack_b ? (const uint16_t *)d->b : NULL;
            pk.lda = d->lda;
            pk.ldb = d->ldb;
            pk.pa = pack_a ? (uint16_t *)ws : NULL;
            pk.pb = pack_b ? (uint16_t *)((uint8_t *)ws + a_bytes) : NULL;
            pk.ldp = ldp;
            pk.a_rows = pack_a ? (int)d->m : 0;
            pk.b_rows = pack_b ? (int)d->n : 0;
            pk.a_end = pack_a ? pk.a + (d->m - 1) * d->lda + d->k : NULL;
            pk.b_end = pack_b ? pk.b + (d->n - 1) * d->ldb + d->k : NULL;
            pk.k = (int)d->k;
            sm90_first_round_rows<BM, BN>(p, grid, &pk.a_first, &pk.b_first);
            if (!pack_a) pk.a_first = 0;
            if (!pack_b) pk.b_first = 0;
            pk.slices = (int)pack_slices;
            pk.groups0 = (int)cuops_ceil_div(pk.a_first + pk.b_first, SM90_PACK_ITEM_ROWS);
            pk.groups1 = (int)cuops_ceil_div(pk.a_rows - pk.a_first + pk.b_rows - pk.b_first,
                                             SM90_PACK_ITEM_ROWS);
            pk.counters = counters + 2 * sk_tiles;
            pk.bulk = pack_inside >= 2;
            pk.pack_ctas = pack_ctas;
            pk.join = pack_join ? 1 : 0;
            sm90_shift_pack_kernel_fn fn = sm90_pick_shift_pack_kernel<BM, BN>(d->ab_type, d->c_type);
            if (!fn)
                return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "%s: no packing kernel", name);
            const int smem = sm90_pack_smem_bytes<BM, BN>();
            CUOPS_CUDA_TRY(h, cudaFuncSetAttribute(
                                  (const void *)fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
            fn<<<grid + pack_ctas, SM90_THREADS, smem, cuops_stream(h)>>>(tmap_b, smaps, p, pk);
            st = cuops_cuda_check_launch(h, name);
            if (st == CUOPS_STATUS_SUCCESS && tail_ran) *tail_ran = sk_tiles > 0;
            return st;
        }
        sm90_shift_kernel_fn fn = b_mn ? sm90_pick_shift_kernel<BM, BN, 2>(d->ab_type, d->c_type)
                                       : sm90_pick_shift_kernel<BM, BN>(d->ab_type, d->c_type);
        if (!fn)
            return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "%s: no shifted-rows kernel", name);
        CUOPS_CUDA_TRY(h, cudaFuncSetAttribute((const void *)fn,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               tile::SMEM_BYTES));
        fn<<<grid, SM90_THREADS, tile::SMEM_BYTES, cuops_stream(h)>>>(tmap_b, smaps, p);
        st = cuops_cuda_check_launch(h, name);
        if (st == CUOPS_STATUS_SUCCESS && tail_ran) *tail_ran = sk_tiles > 0;
        return st;
    }

    if (splits == 0) {
        sm90_kernel_fn fn = NULL;
        if constexpr (mn_forms)
            fn = sm90_pick_mn_kernel<BM, BN, MCM, MCN>(d->ab_type, d->c_type, mn);
        else
            fn = sm90_pick_kernel<BM, BN, MCM, MCN>(d->ab_type, d->c_type);
        if (!fn)
            return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "%s: no kernel for c_type", name);
        CUOPS_CUDA_TRY(h, cudaFuncSetAttribute((const void *)fn,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               tile::SMEM_BYTES));
        if (mcast) {
            /* persistent clusters: as many as the device holds at once, at
             * most one per block of MCM x MCN tiles (sm90_cluster_coords) */
            const int max_clusters = sm90_mc_max_clusters<BM, BN, MCM, MCN>(h->device);
            if (max_clusters < 1)
                return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                                  "%s: the device holds no cluster of %d of its CTAs", name,
                                  MCM * MCN);
            const int blocks = ((p.tiles_m + MCM - 1) / MCM) * ((p.tiles_n + MCN - 1) / MCN);
            const int clusters = blocks < max_clusters ? blocks : max_clusters;
            cudaLaunchConfig_t cfg;
            cudaLaunchAttribute attr;
            cuops_cluster_launch_config(&cfg, &attr, MCM * MCN * clusters, SM90_THREADS,
                                        MCM * MCN, tile::SMEM_BYTES, cuops_stream(h));
            CUOPS_CUDA_TRY(h, cudaLaunchKernelEx(&cfg, fn, tmap_a, tmap_b, tmap_c, p));
        } else {
            const int grid = p.num_tiles < h->num_sms ? p.num_tiles : h->num_sms;
            fn<<<grid, SM90_THREADS, tile::SMEM_BYTES, cuops_stream(h)>>>(tmap_a, tmap_b, tmap_c,
                                                                          p);
        }
        st = cuops_cuda_check_launch(h, name);
        if (st == CUOPS_STATUS_SUCCESS && tail_ran) *tail_ran = sk_tiles > 0;
        if (st != CUOPS_STATUS_SUCCESS || !stage_c) return st;
        st = cuops_sm90_copy_rows(h, c_staged, ldc_staged, d->c, d->ldc, d->m, d->n, d->n);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        h->last_kernel = name;
        return CUOPS_STATUS_SUCCESS;
    }

    /* split-K: the 128-row tiles only (not instantiated for 64 rows) */
    if constexpr (BM == 64) {
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "%s: no split-K form", name);
    } else {
        if (dsmem) {
            sm90_dsmem_kernel_fn fn = sm90_pick_dsmem_mn_kernel<BM, BN>(d->ab_type, d->c_type, mn);
            if (!fn)
                return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "%s: no kernel for c_type", name);
            CUOPS_CUDA_TRY(h, cudaFuncSetAttribute((const void *)fn,
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   tile::SMEM_BYTES));
            cudaLaunchConfig_t cfg;
            cudaLaunchAttribute attr;
            /* one unit per CTA */
            cuops_cluster_launch_config(&cfg, &attr, p.num_tiles * splits, SM90_THREADS, splits,
                                        tile::SMEM_BYTES, cuops_stream(h));
            CUOPS_CUDA_TRY(h, cudaLaunchKernelEx(&cfg, fn, tmap_a, tmap_b, p, splits));
            return cuops_cuda_check_launch(h, name);
        }

        sm90_splitk_params_t sp;
        sp.partials = (float4 *)((uint8_t *)ws + a_bytes + b_bytes);
        sp.splits = splits;
        const bool bf = d->ab_type == CUOPS_DTYPE_BF16;
        sm90_splitk_kernel_fn fn = sm90_pick_splitk_kernel<BM, BN>(bf, mn);
        sm90_fixup_kernel_fn fixup = sm90_pick_fixup_kernel<BM, BN>(d->c_type);
        if (!fixup)
            return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "%s: no fixup for c_type", name);
        CUOPS_CUDA_TRY(h, cudaFuncSetAttribute((const void *)fn,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               tile::SMEM_BYTES));
        /* The plan keeps num_tiles * splits <= #SMs: one unit per CTA, one wave. */
        const int units = p.num_tiles * splits;
        const int grid = units < h->num_sms ? units : h->num_sms;
        fn<<<grid, SM90_THREADS, tile::SMEM_BYTES, cuops_stream(h)>>>(tmap_a, tmap_b, p, sp);
        st = cuops_cuda_check_launch(h, name);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        fixup<<<(unsigned)(p.num_tiles * tile::FIXUP_CTAS_PER_TILE), SM90_FIXUP_THREADS, 0,
                cuops_stream(h)>>>(p, sp);
        st = cuops_cuda_check_launch(h, "sm90_splitk_fixup_kernel");
        if (st != CUOPS_STATUS_SUCCESS) return st;
        h->last_kernel = name;
        return CUOPS_STATUS_SUCCESS;
    }
}

/* The plain kernel under `name`; direct_c: C written from the registers
 * where TMA cannot store to it; pack_inside: misaligned operands packed
 * inside the GEMM kernel where it can (sm90_ws_run). */
template <int BM, int BN>
static cuops_status_t sm90_ws_plain(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                    const cuops_options_t *opt, const char *name,
                                    const char *tail_name, int direct_c, int pack_inside)
{
    if (!sm90_ws_supports<BM, BN>(h, d))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: needs sm_90, f16/bf16 inputs, f16/bf16/f32 output", name);
    int tail = 0;
    cuops_status_t st = d->k == 0 ? cuops_sm90_scale_c(h, d)
                                  : sm90_ws_run<BM, BN>(h, d, opt, 0, 0, direct_c, &tail, pack_inside);
    if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = tail ? tail_name : name;
    return st;
}

/* An unsplit entry's name, or with tail what cuops_last_kernel says when
 * the call ran with a split tail (the name + "_tail") */
#define SM90_PLAIN_NAME(s) (tail ? s "_tail" : s)
template <int BM, int BN, int DIRECT_C, int PACK_INSIDE>
static const char *sm90_plain_name(bool tail)
{
    return DIRECT_C           ? SM90_PLAIN_NAME("sm90_ws_128x256_direct_c")
           : PACK_INSIDE == 3 ? SM90_PLAIN_NAME("sm90_ws_128x256_pack_ctas")
           : PACK_INSIDE == 4 ? SM90_PLAIN_NAME("sm90_ws_128x256_pack_ctas8")
           : PACK_INSIDE == 5 ? SM90_PLAIN_NAME("sm90_ws_128x256_pack_ctas24")
           : PACK_INSIDE == 6 ? (BN == 128 ? SM90_PLAIN_NAME("sm90_ws_128x128_pack_join")
                                           : SM90_PLAIN_NAME("sm90_ws_128x256_pack_join"))
           : PACK_INSIDE == 7 ? SM90_PLAIN_NAME("sm90_ws_128x256_pack_join8")
           : PACK_INSIDE == 2 ? (BN == 128 ? SM90_PLAIN_NAME("sm90_ws_128x128_pack_bulk")
                                           : SM90_PLAIN_NAME("sm90_ws_128x256_pack_bulk"))
           : PACK_INSIDE      ? (BN == 128 ? SM90_PLAIN_NAME("sm90_ws_128x128_pack_inside")
                                           : SM90_PLAIN_NAME("sm90_ws_128x256_pack_inside"))
           : BM == 64         ? SM90_PLAIN_NAME("sm90_ws_64x128")
           : BN == 128        ? SM90_PLAIN_NAME("sm90_ws_128x128")
                              : SM90_PLAIN_NAME("sm90_ws_128x256");
}
#undef SM90_PLAIN_NAME

/* The unsplit entries: "sm90_ws_128x256", "sm90_ws_128x128",
 * "sm90_ws_64x128" (see sm90_tile), and the study entries
 * "sm90_ws_128x256_direct_c": the 128 x 256 kernel with C always written in
 * place from the registers where TMA cannot store to it (no staged C), to
 * measure what the staging gains; "sm90_ws_128x256_pack_inside" and
 * "sm90_ws_128x128_pack_inside": misaligned operands packed inside the
 * kernel (sm90_ws_shift_pack_kernel) where the plain entry packs them by a
 * launch before it, to measure what that gains; "_pack_bulk" (PACK_INSIDE
 * 2): the same with the packers' rows fetched by bulk copies. Auto never chooses a study entry (the plain entry before it
 * accepts the same calls). */
template <int BM, int BN, int DIRECT_C, int PACK_INSIDE = 0>
static cuops_status_t sm90_ws_plain_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                           const cuops_options_t *opt)
{
    static_assert(!PACK_INSIDE || (BM == 128 && !DIRECT_C), "the pack_inside entries: 128-row tiles");
    static_assert(PACK_INSIDE < 3 || PACK_INSIDE == 6 || BN == 256,
                  "the packer-CTA entries: 128 x 256 tiles, and _pack_join on 128 x 128");
    return sm90_ws_plain<BM, BN>(h, d, opt, sm90_plain_name<BM, BN, DIRECT_C, PACK_INSIDE>(false),
                                 sm90_plain_name<BM, BN, DIRECT_C, PACK_INSIDE>(true), DIRECT_C,
                                 PACK_INSIDE);
}

/* The multicast entries: the unsplit kernel of the BM x BN tile in clusters
 * of MCM x MCN sharing A and B (sm90_mc_name: "sm90_ws_128x256_mc2",
 * "sm90_ws_128x128_mc2", "sm90_ws_64x128_mc2", "sm90_ws_64x128_mc4",
 * "sm90_ws_64x128_mc2x2", "sm90_ws_64x128_mc4x2"); the same calls as the
 * plain entry of the tile. */
template <int BM = 128, int BN = 256, int MCM = 2, int MCN = 1>
static cuops_status_t sm90_ws_mc_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                        const cuops_options_t *opt)
{
    const char *const name = sm90_mc_name<BM, BN, MCM, MCN>();
    if (!sm90_ws_mc_supports<BM, BN, MCM, MCN>(h, d))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: needs sm_90, f16/bf16 inputs, f16/bf16/f32 output and "
                          "room for a cluster of %d CTAs",
                          name, MCM * MCN);
    cuops_status_t st =
        d->k == 0 ? cuops_sm90_scale_c(h, d) : sm90_ws_run<BM, BN, MCM, MCN>(h, d, opt, 0, 0, 0);
    if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = name;
    return st;
}

static cuops_status_t sm90_ws_splitk_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                            const cuops_options_t *opt)
{
    if (!sm90_ws_splitk_supports(h, d))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "sm90_ws_128x256_splitk: needs sm_90, f16/bf16 inputs, f16/bf16/f32 "
                          "output, a tile grid of at most half the SMs and k > %d",
                          (SM90_SPLITK_MIN_K_BLOCKS - 1) * SM90_BK);
    /* options.split_k = 1 forbids splitting: the plain kernel on the same tile */
    const int splits = opt && opt->split_k == 1 ? 0 : sm90_splitk_splits<128, 256>(h, d);
    return sm90_ws_run<128, 256>(h, d, opt, splits, 0, 0);
}

template <int BM, int BN>
static cuops_status_t sm90_ws_dsmem_run(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                        const cuops_options_t *opt, const char *name)
{
    if (!sm90_ws_dsmem_supports<BM, BN>(h, d))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: needs sm_90, f16/bf16 inputs, f16/bf16/f32 output, a tile grid of "
                          "at most half the SMs, k > %d, and room for every tile's cluster of "
                          "splits at once",
                          name, (SM90_SPLITK_MIN_K_BLOCKS - 1) * SM90_BK);
    /* options.split_k = 1 forbids splitting: the plain kernel on the same tile */
    const int splits = opt && opt->split_k == 1 ? 0 : sm90_dsmem_splits<BM, BN>(h, d);
    return sm90_ws_run<BM, BN>(h, d, opt, splits, 1, 0);
}

static cuops_status_t sm90_ws_dsmem_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                           const cuops_options_t *opt)
{
    return sm90_ws_dsmem_run<128, 256>(h, d, opt, "sm90_ws_128x256_splitk_dsmem");
}

static cuops_status_t sm90_ws_128_dsmem_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                               const cuops_options_t *opt)
{
    return sm90_ws_dsmem_run<128, 128>(h, d, opt, "sm90_ws_128x128_splitk_dsmem");
}

/* ---- table ----------------------------------------------------------------- */

/* Preference order: the split-K entries first; their supports() accept only
 * the calls the plan splits, everything else goes on to the plain kernel.
 * The cluster reduction before the fixup kernel: faster on every small-grid
 * shape measured (9eb5e0c: 128x4096x4096 25.7 -> 18.5 us, 1000^3 19.0 ->
 * 17.1 us, docs/gemm.md); the fixup path stays for the splits whose
 * clusters the device cannot hold at once. The 128 x 128 entries come last,
 * after entries that accept the same calls: auto reaches them only through
 * cuops_gemm_sm90_auto_tile128 (gemm_tuning.h puts its pick first). */
#define SM90_ENTRY_128_DSMEM \
    {"sm90_ws_128x128_splitk_dsmem", sm90_ws_dsmem_supports<128, 128>, sm90_ws_128_dsmem_launch}
#define SM90_ENTRY_128 \
    {"sm90_ws_128x128", sm90_ws_supports<128, 128>, sm90_ws_plain_launch<128, 128, 0>}
#define SM90_ENTRY_64 {"sm90_ws_64x128", sm90_ws_supports<64, 128>, sm90_ws_plain_launch<64, 128, 0>}
#define SM90_ENTRY_64_MC2 \
    {"sm90_ws_64x128_mc2", sm90_ws_mc_supports<64, 128>, sm90_ws_mc_launch<64, 128>}
#define SM90_ENTRY_64_MC4 \
    {"sm90_ws_64x128_mc4", sm90_ws_mc_supports<64, 128, 4, 1>, sm90_ws_mc_launch<64, 128, 4, 1>}
static const cuops_gemm_kernel_t sm90_table[] = {
    {"sm90_ws_128x256_splitk_dsmem", sm90_ws_dsmem_supports<128, 256>, sm90_ws_dsmem_launch},
    {"sm90_ws_128x256_splitk", sm90_ws_splitk_supports, sm90_ws_splitk_launch},
    {"sm90_ws_128x256", sm90_ws_supports<128, 256>, sm90_ws_plain_launch<128, 256, 0>},
    {"sm90_ws_128x256_direct_c", sm90_ws_supports<128, 256>, sm90_ws_plain_launch<128, 256, 1>},
    {"sm90_ws_128x256_pack_inside", sm90_ws_supports<128, 256>, sm90_ws_plain_launch<128, 256, 0, 1>},
    {"sm90_ws_128x256_pack_bulk", sm90_ws_supports<128, 256>, sm90_ws_plain_launch<128, 256, 0, 2>},
    {"sm90_ws_128x256_pack_ctas", sm90_ws_supports<128, 256>, sm90_ws_plain_launch<128, 256, 0, 3>},
    {"sm90_ws_128x256_pack_ctas8", sm90_ws_supports<128, 256>, sm90_ws_plain_launch<128, 256, 0, 4>},
    {"sm90_ws_128x256_pack_ctas24", sm90_ws_supports<128, 256>, sm90_ws_plain_launch<128, 256, 0, 5>},
    {"sm90_ws_128x256_pack_join", sm90_ws_supports<128, 256>, sm90_ws_plain_launch<128, 256, 0, 6>},
    {"sm90_ws_128x256_pack_join8", sm90_ws_supports<128, 256>, sm90_ws_plain_launch<128, 256, 0, 7>},
    {"sm90_ws_128x256_mc2", sm90_ws_mc_supports<>, sm90_ws_mc_launch<>},
    SM90_ENTRY_128_DSMEM,
    SM90_ENTRY_128,
    {"sm90_ws_128x128_pack_inside", sm90_ws_supports<128, 128>, sm90_ws_plain_launch<128, 128, 0, 1>},
    {"sm90_ws_128x128_pack_bulk", sm90_ws_supports<128, 128>, sm90_ws_plain_launch<128, 128, 0, 2>},
    {"sm90_ws_128x128_pack_join", sm90_ws_supports<128, 128>, sm90_ws_plain_launch<128, 128, 0, 6>},
    SM90_ENTRY_64,
    {"sm90_ws_128x128_mc2", sm90_ws_mc_supports<128, 128>, sm90_ws_mc_launch<128, 128>},
    SM90_ENTRY_64_MC2,
    /* the 64 x 128 tile in larger clusters, sharing B over 4 tile rows and /
     * or A over 2 tile columns (fewer operand rows per CTA and k-block: 96,
     * 96, 64 against the pairs' 128); auto takes the first for rows off the
     * lines with short K where its clusters fit at once, the others are
     * study entries */
    SM90_ENTRY_64_MC4,
    {"sm90_ws_64x128_mc2x2", sm90_ws_mc_supports<64, 128, 2, 2>, sm90_ws_mc_launch<64, 128, 2, 2>},
    {"sm90_ws_64x128_mc4x2", sm90_ws_mc_supports<64, 128, 4, 2>, sm90_ws_mc_launch<64, 128, 4, 2>},
};

extern "C" const cuops_gemm_kernel_t *cuops_gemm_sm90_kernel_table(int *count)
{
    *count = (int)(sizeof(sm90_table) / sizeof(sm90_table[0]));
    return sm90_table;
}

/* Auto's 128 x 128 tile (ahead of the table above; NULL: the table decides).
 * Measured (H200, 68a9c98, f16 / bf16, against the entries auto took before):
 * the cluster split on 128-column tiles 15.5 against 18.5 us at 128 x 4096 x
 * 4096 and 19.9 against 24.7 at 256 x 4096 x 4096; unsplit 128 x 128 tiles
 * 10.6 against 14.8 at 1024^3, 12.4 against 16.1 at 1000^3, 26.8 against
 * 32.4 at 1024 x 2048 x 4096, 73.0 against 76.2 at 1537 x 3001 x 2049 (312
 * tiles in 3 rounds against 156 in 2); but 8 % slower at 4096^3 and 2-6 %
 * at 2048^3 and 1024 x 4096 x 4096, where 128 x 256 tiles fill their rounds
 * (twice the operand bytes per FLOP from L2). So: the split form where its
 * plan splits; else the unsplit form where its rounds are fuller than the
 * 128 x 256 grid's by more than that 8 %.
 * The 64 x 128 tile (H200, 306ccaf): 8.5 against 10.6 us (128 x 128) at
 * 1024^3, 11.0 against 13.7 (128 x 128 split) at 768 x 1024 x 2048, but
 * 14.1 against 12.4 at 1000^3, whose operand rows (2000 bytes) sit off the
 * 128-byte lines (with the maps' 256-byte L2 promotion), and 12-14 %
 * slower than 128 x 256 at 2048^3.
 * The 64 x 128 multicast form (sm90_ws_64x128_mc2, maps without L2
 * promotion; H200, P197): 11.3 against 12.3 us (128 x 128) at 1000^3 and
 * 11.2 against 12.0-12.1 at 1024 x 1024 x 1000, but 9.7 against 8.7 (plain
 * 64 x 128) at 1024^3.
 * Without L2 promotion the plain 64 x 128 tile serves rows off the lines
 * too (H200, P198, f16): 10.2 against 11.9 us (128 x 128) at 640 x 1024 x
 * 1000, 12.5 against 13.4 (pairs) at 768 x 1024 x 2000, 17.7 against 21.1
 * (128 x 128 split) at 768 x 1024 x 4000; the pairs stay ahead where the
 * grid nearly fills the SMs (1000 x 1000 x 1000 .. 8000: 11.4 / 14.5 /
 * 21.3 / 33.4 against plain 13.0 / 15.4 / 23.8 / 33.8, and the split's
 * 23.4 at k = 4000) or K is short (768 x 1024 x 1000: 10.7 against 11.1).
 * Clusters of four sharing B (sm90_ws_64x128_mc4), where the device holds
 * all of them at once (30 of these on the H200: 1000^3's 32 take two
 * rounds, 13.9 us), ahead of both at k = 1000 (256 / 640 / 768 x 1024 x
 * 1000: 9.4 / 9.9 / 9.9 against 10.2 / 10.4 / 10.7), behind the plain tile
 * from k = 2000 (768 x 1024 x 2000: 13.0 against 12.4). On an H100, with
 * the multicast kernels' start-up and end barriers gone (P236), clusters of
 * four are ahead at k = 2000 and 4000 too (768 x 1024 x 2000: 12.0 against
 * the plain tile's 14.8; x 4000: 17.2 against 21.7), so on a device under
 * 4 TB/s of DRAM bandwidth they serve up to k = 3072, and to 4096 with
 * >= 64 tiles: with fewer the split-K cluster form is ahead there (256 x
 * 1024 x 4000: 16.0 against 17.0 us; gemm_tuning.h).
 * So (the rule is cuops_sm90_small_grid_pick in gemm_tuning.h, checked on
 * the CPU by tests/test_gemm_small_grid_pick.c; this function measures the
 * call for it), where 128 x 128 tiles cover at most half of the SMs: for
 * operands on the lines, the plain tile where its own tiles fill 2/3 of the
 * SMs in one round with K <= 2048 (the range measured); rows off the lines
 * with K <= 1024 (under 4 TB/s of DRAM bandwidth 3072, or 4096 with >= 64
 * tiles), C stored in place (a staged C would add a copy) and >= 32 tiles
 * (the range measured): clusters of four where they fit at once; rows off
 * the lines in the one-round grids, at any K: the pairs where the grid
 * covers 90 % of the SMs or K <= 1024 and C is stored in place, else the
 * plain tile. Beyond those grids, on or off the lines, the plain tile where
 * its rounds are fuller than 128 x 128's, counting it 20 % less efficient
 * per tile slot (an estimate). */
extern "C" const cuops_gemm_kernel_t *cuops_gemm_sm90_auto_tile128(const struct cuops_handle *h,
                                                                   const cuops_gemm_desc_t *d)
{
    const int64_t sms = h->num_sms;
    if (sms <= 0 || d->k == 0 || !sm90_ws_can_run<128, 128>(h, d)) return NULL;
    static const cuops_gemm_kernel_t dsmem128 = SM90_ENTRY_128_DSMEM, plain128 = SM90_ENTRY_128,
                                     plain64 = SM90_ENTRY_64, mc64 = SM90_ENTRY_64_MC2,
                                     mc4_64 = SM90_ENTRY_64_MC4;
    cuops_sm90_small_call_t c;
    memset(&c, 0, sizeof c);
    c.m = d->m;
    c.n = d->n;
    c.k = d->k;
    c.sms = sms;
    /* operands read on whole 128-byte lines: packed (onto rows of
     * cuops_sm90_packed_ld, in workspace aligned to 256 bytes), or in place
     * with rows on the lines. The forms picked here read either major order
     * in place where TMA can (a K-major row and an MN-major box row alike
     * are 128 bytes at stride ld). */
    const bool a_lines = !cuops_sm90_tma_ok(d->a, d->lda) ||
                         (cuops_aligned(d->a, 128) && (d->lda * 2) % 128 == 0);
    const bool b_lines = !cuops_sm90_tma_ok(d->b, d->ldb) ||
                         (cuops_aligned(d->b, 128) && (d->ldb * 2) % 128 == 0);
    c.lines = a_lines && b_lines;
    c.c_shifted = sm90_c_shifted(d);
    c.can_run64 = sm90_ws_can_run<64, 128>(h, d);
    /* the device queries (cached) only for the grids the rule asks them of:
     * 128 x 128 tiles on at most half of the SMs */
    const bool small = 2 * sm90_tiles<128, 128>(d) <= sms;
    c.mc2_ok = small && sm90_ws_mc_supports<64, 128>(h, d);
    c.mc4_clusters = small ? sm90_mc_max_clusters<64, 128, 4, 1>(h->device) : 0;
    c.dsmem128 = small && sm90_dsmem_splits<128, 128>(h, d) > 0;
    c.splitk128 = sm90_splitk_splits<128, 128>(h, d) > 0;
    c.dram_gbps = h->dram_gbps;
    switch (cuops_sm90_small_grid_pick(&c)) {
    case CUOPS_SM90_PICK_64: return &plain64;
    case CUOPS_SM90_PICK_64_MC2: return &mc64;
    case CUOPS_SM90_PICK_64_MC4: return &mc4_64;
    case CUOPS_SM90_PICK_128_DSMEM: return &dsmem128;
    case CUOPS_SM90_PICK_128: return &plain128;
    default: return NULL;
    }
}
