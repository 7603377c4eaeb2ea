/*
 * w4a16_prefill_wgmma.cu - the fused W4A16 GEMM for prefill on sm_90a: the
 * int4 weight is dequantized in registers straight into the A operand of
 * wgmma, so the dense weight never exists, not even in shared memory.
 *
 * y^T = W x^T. The weight rows are the wgmma M (64 per consumer warpgroup),
 * the x rows its N (256), k the K. wgmma takes A from registers in the
 * mma.sync fragment layout (lane l of warp w: rows 16w + l/4 (+8), k
 * 2(l%4) (+1) and +8), which is what the prepacked layout hands a lane
 * (w4a16_layout.cuh) up to a k permutation inside each 64-wide tile, which
 * the lanes undo as they read the tile from shared memory (w4a16_wgmma.cuh:
 * the A loader this kernel shares with w4a16_decode_wgmma.cu).
 *
 * CTA: 384 threads. Warpgroup 0 is the producer (one warp: lane 0 issues the
 * TMA of the x tile, lanes 0-7 one 512-byte bulk copy each of the 8 strips'
 * int4 tile); warpgroups 1 and 2 each own 64 weight rows (4 strips) and run
 * per 64-k block: 8 LDS.32 of nibble words, 16 dequantized A registers
 * (LOP3, HSUB2, HMUL2 each: (q - z) * s rounded to the activation type, bit
 * for bit what cuops_dequant_int4 writes), four wgmma.m64n256k16 with A from
 * registers, commit, wait for the previous block's group, release its stage
 * (the form w4a16_prefill_wgmma).
 *
 * The form w4a16_prefill_wgmma_ahead (what auto takes): no int4 in shared
 * memory; each consumer lane loads its words, scale and zero from global
 * memory into registers three blocks ahead and dequantizes block b+1 while
 * the groups of b-1 and b run, into the third of three A register sets
 * (w4f_consume_ahead). Between the retire of a group and the issue of the
 * next there is then only the x stage's wait, as in the dense GEMM: 2-5 %
 * faster on every prefill row measured (docs/w4a16.md, steps 6-8).
 *
 * Persistent grid; tile t -> (weight block t / tiles_x, x block t %
 * tiles_x), so the CTAs of a wave share weight blocks and x stays in L2.
 * In the _ahead form the tiles of a last wave under 60 % full are cut along
 * k into equal parts that the otherwise idle SMs run side by side; every
 * part stores its fp32 tile to the workspace and counts itself on the
 * tile's counter, and the part that completes the count sums them in part
 * order (bitwise the same whichever finishes last) after its main loop and
 * runs the epilogue (w4f_unit, w4f_split_arrive, w4f_sum_parts; docs/w4a16.md
 * steps 10-12: on the power-capped H200 it recovers about half of what the
 * wave count predicts).
 *
 * Shared memory (1024-aligned): STAGES x [x tile 256 x 64 (32 KB, 128B
 * swizzle, as the GEMM's B)], STAGES x [int4 tile 8 x 512 B], per consumer
 * an epilogue buffer [256 x rows][64 weight rows] of the activation type
 * (32 KB), the mbarriers.
 *
 * Epilogue: the accumulator tile is y^T; stmatrix .trans writes it to the
 * consumer's buffer as [x row][64 weight rows] (the 16-byte chunk c of row r
 * at c ^ (r & 7): conflict-free, and the layout of TMA's 128-byte swizzle).
 * Where TMA can address y and n % 8 == 0, one thread stores the 256 x 64 box
 * with a bulk tensor store (clipped at m and n; it clips n in 16-byte units,
 * hence n % 8 == 0) and the consumers go on to the next tile; otherwise each
 * warp stores 4 rows x 128 contiguous bytes of y per instruction, or element
 * by element when y is not 16-byte aligned with ldy % 8 == 0. Edges: x rows
 * past m are TMA zeros and never stored, weight rows past n never stored.
 *
 * Serves (w4a16_prefill_wgmma_serves): sm_90, group_size a multiple of 64 or
 * one group per row (a 64-k block then has one scale and zero per row), m,
 * k < 2^31, x and y 2-byte aligned; x that TMA cannot read in place (base
 * not 16-byte aligned, ldx % 8 != 0) is packed into the workspace first.
 */
#include <string.h>

#include "cuda/gemm/gemm_sm90.h"
#include "cuda/quant/w4a16_wgmma.cuh"
#include "cuda/quant/w4a16_prefill_split.h"

#define W4F_WROWS 128 /* weight rows per tile: 2 consumers x 64 */
#define W4F_XROWS 256 /* x rows per tile: the wgmma N */
#define W4F_BK 64
#define W4F_STAGES 4
#define W4F_THREADS 384
#define W4F_STRIPS (W4F_WROWS / W4_STRIP_ROWS) /* 8 */
#define W4F_X_STAGE_BYTES (W4F_XROWS * W4F_BK * 2)          /* 32 KB */
#define W4F_Q_STAGE_BYTES (W4F_STRIPS * W4_TILE_BYTES)       /* 4 KB */
#define W4F_EPI_BYTES (W4F_XROWS * 64 * 2)                   /* 32 KB per consumer */
#define W4F_SMEM_BYTES                                                                        \
    (W4F_STAGES * (W4F_X_STAGE_BYTES + W4F_Q_STAGE_BYTES) + 2 * W4F_EPI_BYTES +               \
     2 * W4F_STAGES * 8 + 1024)
#define W4F_MAX_SPLIT_PARTS W4A16_PREFILL_MAX_SPLIT_PARTS /* w4a16_prefill_split.h */
/* 24 + 2 x 240 = 3 x 168, the registers per thread at launch; 240 because the
 * _ahead consumers' third scale/zero set and second cursor spilled at 232 */
#define W4F_PRODUCER_REGS 24
#define W4F_CONSUMER_REGS 240

typedef struct w4f_params {
    const uint8_t *tiles;    /* the packed weight region: [strips][ktiles][512 B] */
    const uint32_t *scales;  /* [strips][groups][8] scale pairs */
    const uint32_t *zeros;   /* [strips][groups][2] zero words */
    uint16_t *y;
    int64_t ldy;
    int m, n;
    int ktiles;
    int strips;              /* packed strips, a multiple of 4 */
    int num_groups;
    int tiles_per_group;     /* group_size / 64 (any value >= 1 when one group) */
    int tiles_x, num_tiles;
    /* The CTAs' work units: units below dp_tiles are whole tiles; the units
     * from dp_tiles to num_units are the parts of the remaining tiles, each
     * cut along k into split_parts (w4f_unit). No split: dp_tiles =
     * num_units = num_tiles, split_parts = 1. */
    int dp_tiles, num_units, split_parts;
    float4 *partials;        /* [split tile][consumer][part][32][128] fp32 accumulators */
    unsigned int *counters;  /* [split tile][consumer] arrivals, zero between calls */
    int y_vec_ok;            /* y 16-byte aligned and ldy % 8 == 0 */
    int y_tma;               /* y written by TMA stores (tmap_y valid): y_vec_ok */
} w4f_params_t;

#if CUOPS_SM90A_DEVICE

static __device__ __forceinline__ uint4 w4f_lds128(uint32_t addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr));
    return v;
}

/* This consumer's 64 x 256 accumulator tile (weight rows x x rows) into y
 * (x rows x weight rows), through the consumer's shared buffer `buf`.
 * w0: first weight row (y column) of the consumer, x0: first x row. */
template <typename T>
static __device__ __forceinline__ void w4f_epilogue(const w4f_params_t &p, const CUtensorMap &tmap_y,
                                                    const float (&acc)[128], uint32_t buf,
                                                    int barrier_id, int w0, int x0)
{
    const int t = threadIdx.x % 128;
    const int warp = t / 32, lane = t % 32;
    /* the previous tile's reads of the buffer are done: its TMA store (issued
     * by thread 0) has read the buffer, or every thread its own loads */
    if (p.y_tma && t == 0) cuops_tma_store_wait_read_all();
    cuops_named_bar_sync((uint32_t)barrier_id, 128);
    /* stmatrix x4: matrices (j, h), (j, h+1), (j+1, h), (j+1, h+1) for the
     * x-row blocks j, j+1 and the two 8-row halves h of the warp's 16 weight
     * rows; this lane addresses matrix q = lane / 8, row i = lane % 8. */
    const int q = lane / 8, i = lane % 8;
#pragma unroll
    for (int j = 0; j < 32; j += 2) {
        const int xr = 8 * (j + (q >> 1)) + i;           /* stored row: x row */
        const int chunk = 2 * warp + (q & 1);            /* 8 weight rows = 16 bytes */
        const uint32_t addr = buf + (uint32_t)(xr * 128 + ((chunk ^ (xr & 7)) * 16));
        cuops_stmatrix_x4_trans(addr, cuops_pack2<T>(acc[4 * j + 0], acc[4 * j + 1]),
                                cuops_pack2<T>(acc[4 * j + 2], acc[4 * j + 3]),
                                cuops_pack2<T>(acc[4 * j + 4], acc[4 * j + 5]),
                                cuops_pack2<T>(acc[4 * j + 6], acc[4 * j + 7]));
    }
    if (p.y_tma) {
        /* The buffer is laid out as TMA's 128-byte swizzle wants it (chunk c
         * of row r at c ^ (r & 7), 1024-byte aligned): one bulk tensor store
         * of the 256 x 64 box, clipped by the hardware at m and n; it runs
         * while the consumers go on to the next tile. */
        cuops_fence_proxy_async_smem();
        cuops_named_bar_sync((uint32_t)barrier_id, 128);
        if (t == 0) {
            cuops_tma_store_2d(&tmap_y, buf, w0, x0);
            cuops_tma_store_commit();
        }
        return;
    }
    cuops_named_bar_sync((uint32_t)barrier_id, 128);
    /* 256 rows x 8 chunks: thread t takes chunk t % 8 of rows t / 8 + 16 it */
    const int c = t % 8;
    const int col = w0 + 8 * c;
#pragma unroll 4
    for (int it = 0; it < 16; it++) {
        const int r = t / 8 + 16 * it;
        const int row = x0 + r;
        if (row >= p.m || col >= p.n) continue;
        const uint4 v = w4f_lds128(buf + (uint32_t)(r * 128 + ((c ^ (r & 7)) * 16)));
        uint16_t *dst = p.y + (int64_t)row * p.ldy + col;
        if (p.y_vec_ok && col + 8 <= p.n) {
            *(uint4 *)dst = v;
        } else {
            const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int e = 0; e < 8; e++)
                if (col + e < p.n) dst[e] = (uint16_t)(words[e / 2] >> (16 * (e % 2)));
        }
    }
}

/* The _ahead form's dequant of one block from its eight words already
 * shifted by the lane's pair shift. Rows g take the low nibble of each half
 * (into the mantissa of the magic: 1024 + q in f16, 128 + q in bf16). Rows
 * g + 8 take the nibble at bits 4-7: in f16 it goes unshifted into the
 * mantissa of 64.0, whose unit is 1/16, and reads 64 + q exactly, so the
 * eight shifts by 4 of the general form are not needed and z_hi is 64 + z
 * (w4f_block_meta_ahead); bf16 has no such magic (bit 7 of a half is its
 * exponent's), so it shifts. q - z is exact either way, and the one
 * multiply rounds as in w4f_dequant: the same bits. */
template <typename T>
static __device__ __forceinline__ void w4f_dequant_ahead(uint32_t (&a)[4][4], const uint32_t (&w)[8],
                                                         uint32_t z_lo, uint32_t z_hi,
                                                         uint32_t s_lo, uint32_t s_hi)
{
#pragma unroll
    for (int j = 0; j < 4; j++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const uint32_t v = w[2 * j + h];
            a[j][2 * h] = w4f_dequant<T>(v, z_lo, s_lo);
            if (w4_type<T>::is_f16) {
                const uint32_t hi = w4_nibbles_into<0x00F000F0u, 0x54005400u>(v);
                a[j][2 * h + 1] = w4_mul2(T(), w4_sub2(T(), hi, z_hi), s_hi);
            } else {
                a[j][2 * h + 1] = w4f_dequant<T>(v >> 4, z_hi, s_hi);
            }
        }
    }
}

/* One 64-k block's group: four wgmma m64n256k16 with A from the set `a`, B
 * the x stage at desc_x; the first block of a tile overwrites the
 * accumulators. */
template <typename T>
static __device__ __forceinline__ void w4f_issue_group(float (&acc)[128], const uint32_t (&a)[4][4],
                                                       uint64_t desc_x, int kb)
{
#pragma unroll
    for (int r = 0; r < 128; r++) cuops_reg_fence(acc[r]);
    cuops_wgmma_fence();
#pragma unroll
    for (int j = 0; j < 4; j++) {
        if (w4_type<T>::is_f16)
            cuops_wgmma_m64n256k16_rs_f16(acc, a[j], desc_x + 2 * j, (kb > 0 || j > 0) ? 1 : 0);
        else
            cuops_wgmma_m64n256k16_rs_bf16(acc, a[j], desc_x + 2 * j, (kb > 0 || j > 0) ? 1 : 0);
    }
    cuops_wgmma_commit();
}

/* Waits until at most N groups are in flight; the accumulators are then
 * the compiler's again. */
template <int N>
static __device__ __forceinline__ void w4f_retire(float (&acc)[128])
{
    cuops_wgmma_wait<N>();
#pragma unroll
    for (int r = 0; r < 128; r++) cuops_reg_fence(acc[r]);
}

/* The packed strip that strip `i` (0..7) of weight block `wb` reads: strips
 * past the packed ones (the last block of a weight whose strip count is 4 mod
 * 8) re-read the last strip, whose rows are never stored. */
static __device__ __forceinline__ int w4f_strip(const w4f_params_t &p, int wb, int i)
{
    return min(wb * W4F_STRIPS + i, p.strips - 1);
}

/* This lane's scale pair (row g) and zero word (rows 4(g/4) ..) of group 0
 * of `strip`; group j is j * 8 and j * 2 words on. */
static __device__ __forceinline__ void w4f_lane_meta(const w4f_params_t &p, int strip, int g,
                                                     const uint32_t *&sc, const uint32_t *&zr)
{
    sc = p.scales + (int64_t)strip * p.num_groups * 8 + g;
    zr = p.zeros + (int64_t)strip * p.num_groups * 2 + (g >> 2);
}

/* A work unit: tile t, its 64-k blocks [kb0, kb1), and which part of the
 * tile's k it is (0 for a whole tile). Unit v of the persistent loop (v =
 * blockIdx.x, + gridDim.x, ...): the whole tiles come first, in tile order;
 * dp_tiles is a multiple of the grid, so the split units dp_tiles + c fall to
 * CTAs c = 0, 1, ..., the parts of one tile to neighbouring CTAs. */
typedef struct w4f_unit {
    int t, kb0, kb1, part;
} w4f_unit_t;

static __device__ __forceinline__ w4f_unit_t w4f_unit(const w4f_params_t &p, int v)
{
    w4f_unit_t u;
    if (v < p.dp_tiles) {
        u.t = v;
        u.kb0 = 0;
        u.kb1 = p.ktiles;
        u.part = 0;
        return u;
    }
    const int s = v - p.dp_tiles;
    const int i = s / p.split_parts;
    u.part = s - i * p.split_parts;
    u.t = p.dp_tiles + i;
    u.kb0 = (int)((int64_t)p.ktiles * u.part / p.split_parts);
    u.kb1 = (int)((int64_t)p.ktiles * (u.part + 1) / p.split_parts);
    return u;
}

/* The end of a k-split unit: its fp32 accumulators go to the workspace
 * ([split tile][consumer][part][32 float4][128 threads]) and it arrives on
 * the tile's counter, one per consumer (its 64 weight rows are its own).
 * Returns this thread's pointer to part 0 of the tile in the consumer that
 * arrives last, which then sums every part in part order (w4f_sum_parts:
 * the sum does not depend on which part finished last), and NULL in the
 * others. Nobody waits: the last part needs no one else to run. The
 * accumulators are only read here: inside the main loop a write to them on
 * one path costs ptxas registers it does not have (spills). */
static __device__ __forceinline__ const float4 *w4f_split_arrive(const w4f_params_t &p,
                                                                const float (&acc)[128],
                                                                const w4f_unit_t &u, int consumer,
                                                                int ct)
{
    __shared__ int w4f_last[2];
    const int64_t slot = (int64_t)(u.t - p.dp_tiles) * 2 + consumer;
    float4 *parts = p.partials + slot * p.split_parts * (32 * 128) + ct;
#pragma unroll
    for (int q = 0; q < 32; q++)
        __stcg(parts + (int64_t)u.part * (32 * 128) + q * 128,
               make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
    /* release: this thread's partial is visible at device scope before the
     * consumer's arrival below */
    __threadfence();
    cuops_named_bar_sync((uint32_t)(1 + consumer), 128);
    unsigned int *counter = p.counters + slot;
    if (ct == 0) {
        const int last = atomicAdd(counter, 1u) == (unsigned int)(p.split_parts - 1);
        /* every part has arrived: the counter goes back to zero for the next call */
        if (last) atomicExch(counter, 0u);
        w4f_last[consumer] = last;
    }
    cuops_named_bar_sync((uint32_t)(1 + consumer), 128);
    if (!w4f_last[consumer]) return NULL;
    /* acquire: every other part's partial, fenced before its arrival; the .cg
     * loads of w4f_sum_parts read L2, never a stale L1 line */
    __threadfence();
    return parts;
}

/* The accumulators of a k-split tile: the sum of its parts' fp32 partials
 * (w4f_split_arrive; this thread's elements), added in part order, with
 * this CTA's own part `own` taken from acc rather than read back. The loads
 * of every part are issued before the adds (unrolled over the at most
 * W4F_MAX_SPLIT_PARTS parts and the 32 float4s, as many in flight as the
 * registers hold: a load-then-add per element put ~100 L2 round trips in a
 * row, measured at 2a05a72, and the split then saved nothing). Only called
 * after the main loop, where acc is free. */
static __device__ __forceinline__ void w4f_sum_parts(float (&acc)[128], const float4 *parts,
                                                     int nparts, int own)
{
#pragma unroll
    for (int q = 0; q < 32; q++) {
        const float4 mine = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
        float4 v[W4F_MAX_SPLIT_PARTS];
#pragma unroll
        for (int i = 0; i < W4F_MAX_SPLIT_PARTS; i++)
            v[i] = i < nparts && i != own ? __ldcg(parts + i * (32 * 128) + q * 128) : mine;
        const float4 sum = cuops_f4_sum_in_order(v, nparts);
        acc[4 * q] = sum.x;
        acc[4 * q + 1] = sum.y;
        acc[4 * q + 2] = sum.z;
        acc[4 * q + 3] = sum.w;
    }
}

/* Where the consumers of the _ahead form are in their loads: the (tile, 64-k
 * block) whose words (three blocks ahead of the block being issued) or scale
 * and zero (as many, or four in f16: w4f_meta_ahead) they load next, walked across the CTA's tiles so that
 * a tile's first blocks are loaded while the previous tile's last ones run.
 *
 * The pointers address the block loaded last, and each load first steps them
 * to its own block (the scale and zero pointers at a group's first block): a
 * pointer register is rewritten one step after the loads that read it. (With
 * addresses computed per load, ptxas reused the zero load's address register
 * at once, and the warp waited there for that load to leave the memory
 * queue: 7.8 % of the samples at 4096^3, ncu P115; this form ran 1.5-2 %
 * faster on every prefill row, P116.) */
typedef struct w4f_cursor {
    int v, left;    /* unit, blocks of it still to load */
    int pos;        /* blocks of the current group loaded so far */
    const uint32_t *q, *sc, *zr;
} w4f_cursor_t;

static __device__ __forceinline__ void w4f_cursor_tile(w4f_cursor_t &c, const w4f_params_t &p,
                                                       int strip_in_cta, int g, int tq)
{
    if (c.v >= p.num_units) return;
    const w4f_unit_t u = w4f_unit(p, c.v);
    c.left = u.kb1 - u.kb0;
    const int group = u.kb0 / p.tiles_per_group;
    c.pos = u.kb0 - group * p.tiles_per_group;
    const int wb = u.t / p.tiles_x;
    const int strip = w4f_strip(p, wb, strip_in_cta);
    /* this lane's words (strip tile + g*64 + 4*(t/2) bytes: every other word
     * of the lane's 64-byte row, the eight w4f_load_a reads from shared
     * memory) one block before the unit's first */
    c.q = (const uint32_t *)(p.tiles + (((int64_t)strip * p.ktiles + u.kb0 - 1) * W4_TILE_BYTES +
                                        g * 64 + 4 * (tq >> 1)));
    w4f_lane_meta(p, strip, g, c.sc, c.zr);
    c.sc += group * 8;
    c.zr += group * 2;
}

/* One block on; into the next unit after the unit's last block. */
static __device__ __forceinline__ void w4f_cursor_next(w4f_cursor_t &c, const w4f_params_t &p,
                                                       int strip_in_cta, int g, int tq)
{
    c.pos++;
    if (--c.left == 0) {
        c.v += gridDim.x;
        w4f_cursor_tile(c, p, strip_in_cta, g, tq);
    }
}

/* The words of the cursor's block into w; with NEXT, then one block on. The
 * load is unconditional: past the CTA's last unit the pointer stays on its
 * last block, which is read again and never used. (A load under the
 * condition left w its old value on the other path, and what merged the two
 * paths waited for the loads: ncu P116, ~10 % of the samples; gone at P119,
 * +0.8-1.5 % on every row.) */
template <bool NEXT>
static __device__ __forceinline__ void w4f_cursor_load_words(w4f_cursor_t &c, const w4f_params_t &p,
                                                             int strip_in_cta, int g, int tq,
                                                             uint32_t (&w)[8])
{
    if (c.v < p.num_units) c.q += W4_TILE_BYTES / 4;
#pragma unroll
    for (int i = 0; i < 8; i++)
        asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(w[i]) : "l"(c.q + 2 * i));
    if (NEXT) w4f_cursor_next(c, p, strip_in_cta, g, tq);
}

/* The scale pair and zero word of the cursor's block into (s, z), then one
 * block on (unconditional, as the words). */
static __device__ __forceinline__ void w4f_cursor_load_meta(w4f_cursor_t &c, const w4f_params_t &p,
                                                            int strip_in_cta, int g, int tq,
                                                            uint32_t &s, uint32_t &z)
{
    if (c.v < p.num_units && c.pos == p.tiles_per_group) {
        c.pos = 0;
        c.sc += 8;
        c.zr += 2;
    }
    s = __ldg(c.sc);
    z = __ldg(c.zr);
    w4f_cursor_next(c, p, strip_in_cta, g, tq);
}

/* How far ahead the _ahead consumers load a block's scale and zero: with the
 * words (three blocks: one cursor, two sets) or a block further (four: a
 * second cursor, three sets). Four measured +1-3 % in f16 but 12 % slower in
 * bf16 (P121-P123), whose dequant shifts row g + 8's nibble and holds more
 * live registers per block; so f16 only. */
template <typename T> struct w4f_meta_ahead {
    static constexpr bool four = w4_type<T>::is_f16;
    static constexpr int sets = four ? 3 : 2;
};

#define W4F_FULL_BAR(s) (bars + 8u * (uint32_t)(s))
#define W4F_EMPTY_BAR(s) (bars + 8u * (uint32_t)(W4F_STAGES + (s)))

/* The consumers of the form without int4 in shared memory (the variant
 * w4a16_prefill_wgmma_ahead). Each lane loads its eight words, scale and zero
 * of a block from global memory into registers (the words in two sets, filled
 * three blocks ahead of the block they feed; the scale and zero with them,
 * or in f16 in three sets, four ahead) and dequantizes block b+1 right after
 * issuing block b's group, into the third of three A sets: groups b-1 and b, in
 * flight, hold the other two. So when b-1 retires, the next group needs only
 * the x stage's barrier and its issue, as in the dense GEMM; the dequant runs
 * in the shadow of the two groups instead of between them. The block
 * sequence (and the rotation of the sets) runs over all of the CTA's tiles,
 * so a tile's first block is loaded and dequantized while the previous tile
 * finishes. */
template <typename T>
static __device__ __forceinline__ void w4f_consume_ahead(const w4f_params_t &p,
                                                         const CUtensorMap &tmap_y, uint32_t x_smem,
                                                         uint32_t e_smem, uint32_t bars,
                                                         int consumer, int ct)
{
    const int warp = ct / 32, lane = ct % 32;
    const int g = lane >> 2, tq = lane & 3;
    const uint32_t pair_shift = 8u * (uint32_t)(tq & 1);
    const uint32_t zero_shift = 4u * (uint32_t)(g & 3);
    const int strip_in_cta = consumer * 4 + warp;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; i++) acc[i] = 0.0f;
    uint32_t a0[4][4], a1[4][4], a2[4][4];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int r = 0; r < 4; r++) a0[j][r] = a1[j][r] = a2[j][r] = 0u;
    /* the words of two blocks; the scale pair and zero word of block j in set
     * j % SETS (w4f_meta_ahead) */
    constexpr bool FOUR = w4f_meta_ahead<T>::four;
    constexpr int SETS = w4f_meta_ahead<T>::sets;
    uint32_t w_even[8], w_odd[8], sv[3], zv[3];
#pragma unroll
    for (int i = 0; i < 8; i++) w_even[i] = w_odd[i] = 0u;
#pragma unroll
    for (int i = 0; i < 3; i++) sv[i] = zv[i] = 0u;

    auto dequant = [&](uint32_t (&a)[4][4], const uint32_t (&w)[8], uint32_t s, uint32_t z) {
        uint32_t z_lo, z_hi, s_lo, s_hi, wsh[8];
        w4f_block_meta_ahead<T>(z, s, zero_shift, z_lo, z_hi, s_lo, s_hi);
#pragma unroll
        for (int i = 0; i < 8; i++) wsh[i] = w[i] >> pair_shift;
        w4f_dequant_ahead<T>(a, wsh, z_lo, z_hi, s_lo, s_hi);
    };
    /* The words three blocks ahead of the block being issued; the scale and
     * zero as many or, with FOUR, four, by a second cursor over the same
     * block sequence (with both three ahead, the copy ptxas makes of block
     * b+1's scale at the end of step b-1 waited for its load, issued ~1.3
     * steps before: ~13 % of the samples, ncu P119). */
    w4f_cursor_t cw, cm;
    cw.v = cm.v = blockIdx.x;
    w4f_cursor_tile(cw, p, strip_in_cta, g, tq);
    if (FOUR) w4f_cursor_tile(cm, p, strip_in_cta, g, tq);
    /* the next block's words, scale and zero into (w, s, z), the cursors on */
    auto load = [&](uint32_t (&w)[8], uint32_t &s, uint32_t &z) {
        w4f_cursor_load_words<FOUR>(cw, p, strip_in_cta, g, tq, w);
        w4f_cursor_load_meta(FOUR ? cm : cw, p, strip_in_cta, g, tq, s, z);
    };
    /* blocks 0 and 1 loaded, block 0 dequantized, block 2 (and with FOUR
     * block 3's scale and zero) on its way */
    load(w_even, sv[0], zv[0]);
    load(w_odd, sv[1], zv[1]);
    dequant(a0, w_even, sv[0], zv[0]);
    load(w_even, sv[2 % SETS], zv[2 % SETS]);
    if (FOUR) w4f_cursor_load_meta(cm, p, strip_in_cta, g, tq, sv[3 % SETS], zv[3 % SETS]);

    int stage = 0, seq = 0;
    uint32_t phase = 0;
    const float4 *split_sum = NULL; /* set where this CTA sums a k-split tile */
    int split_tile = 0;
    for (int v = blockIdx.x; v < p.num_units; v += gridDim.x) {
        /* the tile and part are looked up again at the unit's end rather
         * than held across the loop, where every register is in use */
        const int nkb = w4f_unit(p, v).kb1 - w4f_unit(p, v).kb0;
        int prev_stage = 0;
        /* block b = kb of this unit: issue its group from `a`; dequantize
         * b+1 from (w, ws, wz) into `next`, then refill w with b+3's words
         * and (ws, wz) with b+3's (f16: b+4's) scale and zero; retire b-1,
         * whose set is `prev`, and release its stage */
        auto step = [&](int kb, uint32_t (&a)[4][4], uint32_t (&next)[4][4],
                        uint32_t (&prev)[4][4], uint32_t (&w)[8], uint32_t &ws, uint32_t &wz) {
            /* Block b+1's words, scale and zero (loaded two steps ago; in
             * f16 the scale and zero three) into the form the dequant takes, before anything else: a
             * use of them after the refill below would wait on the
             * scoreboard the refill's loads share (measured at 0fab819: ~25 % of the
             * samples, with ptxas placing the third and fourth wgmma of the
             * group behind that wait). The refill comes after the stage
             * wait, an acquire, which no load is hoisted above. */
            uint32_t wsh[8];
#pragma unroll
            for (int i = 0; i < 8; i++) wsh[i] = w[i] >> pair_shift;
            uint32_t z_lo, z_hi, s_lo, s_hi;
            w4f_block_meta_ahead<T>(wz, ws, zero_shift, z_lo, z_hi, s_lo, s_hi);

            cuops_mbar_wait(W4F_FULL_BAR(stage), phase);
            w4f_issue_group<T>(acc, a, cuops_wgmma_desc_k_sw128(x_smem + stage * W4F_X_STAGE_BYTES),
                               kb);
            load(w, ws, wz);
            w4f_dequant_ahead<T>(next, wsh, z_lo, z_hi, s_lo, s_hi);
            w4f_retire<1>(acc);
            cuops_keep_alive_set(prev);
            /* the stage holds only x, read by the retired group's wgmma */
            if (kb > 0) cuops_mbar_arrive(W4F_EMPTY_BAR(prev_stage));
            prev_stage = stage;
            cuops_ring_advance<W4F_STAGES>(stage, phase);
        };
        /* The sets rotate by three and the word sets by two: six steps,
         * written out so that ptxas sees which set each step writes while
         * the two groups before it are in flight (through a run-time choice
         * of sets it assumes the worst and serialises the wgmmas, C7513).
         * The rotation goes on across tiles: a tile enters it where the
         * previous one left it. */
        int kb = 0;
        switch (seq) {
        case 0:
            for (;;) {
                step(kb, a0, a1, a2, w_odd, sv[1 % SETS], zv[1 % SETS]);
                if (++kb == nkb) { seq = 1; break; }
        case 1:
                step(kb, a1, a2, a0, w_even, sv[2 % SETS], zv[2 % SETS]);
                if (++kb == nkb) { seq = 2; break; }
        case 2:
                step(kb, a2, a0, a1, w_odd, sv[3 % SETS], zv[3 % SETS]);
                if (++kb == nkb) { seq = 3; break; }
        case 3:
                step(kb, a0, a1, a2, w_even, sv[4 % SETS], zv[4 % SETS]);
                if (++kb == nkb) { seq = 4; break; }
        case 4:
                step(kb, a1, a2, a0, w_odd, sv[5 % SETS], zv[5 % SETS]);
                if (++kb == nkb) { seq = 5; break; }
        default:
                step(kb, a2, a0, a1, w_even, sv[6 % SETS], zv[6 % SETS]);
                if (++kb == nkb) { seq = 0; break; }
            }
        }
        w4f_retire<0>(acc);
        cuops_keep_alive_set(a0);
        cuops_keep_alive_set(a1);
        cuops_keep_alive_set(a2);
        cuops_mbar_arrive(W4F_EMPTY_BAR(prev_stage));
        const w4f_unit_t u = w4f_unit(p, v);
        if (v >= p.dp_tiles) {
            /* a k-split unit is a CTA's last (the host gives each CTA at
             * most one): its sum and epilogue run after the loop, where the
             * accumulators and A sets are dead and their registers free */
            split_sum = w4f_split_arrive(p, acc, u, consumer, ct);
            split_tile = u.t;
            continue;
        }
        const int wb = u.t / p.tiles_x, xb = u.t - wb * p.tiles_x;
        w4f_epilogue<T>(p, tmap_y, acc, e_smem + consumer * W4F_EPI_BYTES, 1 + consumer,
                        wb * W4F_WROWS + consumer * 64, xb * W4F_XROWS);
    }
    if (split_sum) {
        const int wb = split_tile / p.tiles_x, xb = split_tile - wb * p.tiles_x;
        /* this CTA's part: units dp_tiles + c fall to CTA c (w4f_unit) */
        w4f_sum_parts(acc, split_sum, p.split_parts, (int)blockIdx.x % p.split_parts);
        w4f_epilogue<T>(p, tmap_y, acc, e_smem + consumer * W4F_EPI_BYTES, 1 + consumer,
                        wb * W4F_WROWS + consumer * 64, xb * W4F_XROWS);
    }
    /* the shared buffer must outlive the last TMA store's reads */
    if (p.y_tma && ct == 0) cuops_tma_store_wait_all();
}

/* QREGS = 0: the int4 tiles reach shared memory by bulk copy and each lane
 * reads its words there (variant w4a16_prefill_wgmma). QREGS = 1: no int4 in
 * shared memory, the words in registers and each block dequantized one block
 * ahead (w4a16_prefill_wgmma_ahead, w4f_consume_ahead). */
template <typename T, int QREGS>
static __device__ __forceinline__ void w4f_cta(const CUtensorMap &tmap_x, const CUtensorMap &tmap_y,
                                               const w4f_params_t &p)
{
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = cuops_smem_align1024(smem_raw);
    const uint32_t x_smem = base;
    const uint32_t q_smem = x_smem + W4F_STAGES * W4F_X_STAGE_BYTES;
    const uint32_t e_smem = q_smem + W4F_STAGES * W4F_Q_STAGE_BYTES;
    const uint32_t bars = e_smem + 2 * W4F_EPI_BYTES;

    const int warpgroup = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < W4F_STAGES; s++) {
            cuops_mbar_init(W4F_FULL_BAR(s), 1);    /* producer's expect_tx + bytes */
            cuops_mbar_init(W4F_EMPTY_BAR(s), 256); /* every consumer thread */
        }
        cuops_mbar_init_fence();
    }
    __syncthreads();

    if (warpgroup == 0) {
        /* ---------------- producer ---------------- */
        cuops_setmaxnreg_dec<W4F_PRODUCER_REGS>();
        if (threadIdx.x < 32) {
            const int lane = threadIdx.x;
            uint32_t phase = 0;
            int stage = 0;
            for (int v = blockIdx.x; v < p.num_units; v += gridDim.x) {
                const w4f_unit_t u = w4f_unit(p, v);
                const int wb = u.t / p.tiles_x, xb = u.t - wb * p.tiles_x;
                /* w4f_strip: every stage always receives the same bytes */
                const int strip = w4f_strip(p, wb, lane & 7);
                const uint8_t *src = p.tiles + (int64_t)strip * p.ktiles * W4_TILE_BYTES;
                for (int kb = u.kb0; kb < u.kb1; kb++) {
                    if (lane == 0) {
                        cuops_mbar_wait(W4F_EMPTY_BAR(stage), phase ^ 1u);
                        cuops_mbar_arrive_expect_tx(W4F_FULL_BAR(stage),
                                                    W4F_X_STAGE_BYTES +
                                                        (QREGS ? 0 : W4F_Q_STAGE_BYTES));
                        cuops_tma_load_2d(x_smem + stage * W4F_X_STAGE_BYTES, &tmap_x,
                                          W4F_FULL_BAR(stage), kb * W4F_BK, xb * W4F_XROWS);
                    }
                    __syncwarp();
                    if (!QREGS && lane < W4F_STRIPS)
                        cuops_bulk_load(q_smem + stage * W4F_Q_STAGE_BYTES + lane * W4_TILE_BYTES,
                                        src + (int64_t)kb * W4_TILE_BYTES, W4_TILE_BYTES,
                                        W4F_FULL_BAR(stage));
                    cuops_ring_advance<W4F_STAGES>(stage, phase);
                }
            }
        }
    } else {
        /* ---------------- consumers ---------------- */
        cuops_setmaxnreg_inc<W4F_CONSUMER_REGS>();
        const int consumer = warpgroup - 1;
        const int ct = threadIdx.x - 128 * warpgroup;
        if constexpr (QREGS) {
            w4f_consume_ahead<T>(p, tmap_y, x_smem, e_smem, bars, consumer, ct);
            return;
        }
        const int warp = ct / 32, lane = ct % 32;
        const int g = lane >> 2, tq = lane & 3;
        const uint32_t pair_shift = 8u * (uint32_t)(tq & 1);
        const uint32_t zero_shift = 4u * (uint32_t)(g & 3);
        /* this lane's words of lane (g, j): word t/2 (columns 16j + 2t ..)
         * and word 2 + t/2 (columns 16j + 8 + 2t ..) */
        const uint32_t q_lane = (uint32_t)((consumer * 4 + warp) * W4_TILE_BYTES + g * 64 + 4 * (tq >> 1));
        float acc[128];
#pragma unroll
        for (int i = 0; i < 128; i++) acc[i] = 0.0f;
        /* wgmma reads A from registers asynchronously, but ptxas treats them
         * as consumed at issue: with one set of A registers it handed them to
         * the next block's shared loads while the previous group still ran
         * (measured: NaN and run-to-run differences; clean under
         * compute-sanitizer, which slows the issue). So two sets, used in
         * turn by even and odd blocks, and each set is kept alive until the
         * wait that retires its group. */
        uint32_t a_even[4][4], a_odd[4][4];
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) a_even[j][r] = a_odd[j][r] = 0u;

        int stage = 0;
        uint32_t phase = 0;
        /* whole tiles only: this form is launched without a k split, so the
         * producer's units are the tiles */
        for (int t = blockIdx.x; t < p.num_tiles; t += gridDim.x) {
            const int wb = t / p.tiles_x, xb = t - wb * p.tiles_x;
            const uint32_t *sc, *zr;
            w4f_lane_meta(p, w4f_strip(p, wb, consumer * 4 + warp), g, sc, zr);
            uint32_t sv = __ldg(sc), zv = __ldg(zr);
            int prev_stage = 0;
            /* group of the next block, and that block's position in it (no
             * division per block) */
            int next_group = 0, next_pos = 0;

            /* one 64-k block into the A set `a`; `other` is the set of the
             * block before, whose group the wait below retires */
            auto block = [&](int kb, uint32_t (&a)[4][4], uint32_t (&other)[4][4]) {
                /* the next block's metadata, a block ahead (L2 latency) */
                if (++next_pos == p.tiles_per_group) {
                    next_pos = 0;
                    next_group++;
                }
                const int ng = min(next_group, p.num_groups - 1);
                const uint32_t sv_next = __ldg(sc + ng * 8);
                const uint32_t zv_next = __ldg(zr + ng * 2);

                uint32_t z_lo, z_hi, s_lo, s_hi;
                w4f_block_meta<T>(zv, sv, zero_shift, z_lo, z_hi, s_lo, s_hi);

                cuops_mbar_wait(W4F_FULL_BAR(stage), phase);
                const uint32_t qt = q_smem + stage * W4F_Q_STAGE_BYTES + q_lane;
                w4f_load_a<T>(a, qt, pair_shift, z_lo, z_hi, s_lo, s_hi);
                w4f_issue_group<T>(acc, a, cuops_wgmma_desc_k_sw128(x_smem + stage * W4F_X_STAGE_BYTES),
                                   kb);
                w4f_retire<1>(acc);
                /* the previous block's group is retired: its A set is free */
                cuops_keep_alive_set(other);
                /* this thread's reads of the previous block's stage are done
                 * (its LDS fed that block's A, its wgmma group is retired).
                 * Every thread arrives: one elected lane per warp measured the
                 * same and leaves the other lanes' LDS unordered for racecheck */
                if (kb > 0) cuops_mbar_arrive(W4F_EMPTY_BAR(prev_stage));
                prev_stage = stage;
                cuops_ring_advance<W4F_STAGES>(stage, phase);
                sv = sv_next;
                zv = zv_next;
            };
#pragma unroll 1
            for (int kb = 0; kb < p.ktiles; kb++) {
                if ((kb & 1) == 0)
                    block(kb, a_even, a_odd);
                else
                    block(kb, a_odd, a_even);
            }
            w4f_retire<0>(acc);
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    cuops_keep_alive(a_even[j][r]);
                    cuops_keep_alive(a_odd[j][r]);
                }
            cuops_mbar_arrive(W4F_EMPTY_BAR(prev_stage));
            w4f_epilogue<T>(p, tmap_y, acc, e_smem + consumer * W4F_EPI_BYTES, 1 + consumer,
                            wb * W4F_WROWS + consumer * 64, xb * W4F_XROWS);
        }
        /* the shared buffer must outlive the last TMA store's reads */
        if (p.y_tma && ct == 0) cuops_tma_store_wait_all();
    }
#undef W4F_FULL_BAR
#undef W4F_EMPTY_BAR
}

#endif /* CUOPS_SM90A_DEVICE */

template <typename T, int QREGS>
__global__ void __launch_bounds__(W4F_THREADS, 1)
w4a16_prefill_wgmma_kernel(const __grid_constant__ CUtensorMap tmap_x,
                           const __grid_constant__ CUtensorMap tmap_y, const w4f_params_t p)
{
#if CUOPS_SM90A_DEVICE
    w4f_cta<T, QREGS>(tmap_x, tmap_y, p);
#endif
}

/* Arrival counters of the k-split tiles, two per tile (one per consumer):
 * the handle's (cuops_cuda_counters), put back to zero by the last part of
 * each tile. */
static_assert(2 * W4A16_PREFILL_MAX_SPLIT_TILES <= CUOPS_COUNTERS_MAX, "prefill split counters");

/* ---- host ------------------------------------------------------------------- */

typedef void (*w4f_kernel_fn)(const CUtensorMap, const CUtensorMap, const w4f_params_t);

int w4a16_prefill_wgmma_serves(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                               const w4_geometry_t *geo)
{
    if (h->sm_major != 9) return 0;
    /* 4 stages of 36 KB and two 32 KB epilogue buffers (every sm_90 part
     * offers 227 KB per block) */
    if (h->smem_optin_bytes < W4F_SMEM_BYTES) return 0;
    if (geo->group_size % W4F_BK != 0 && geo->num_groups != 1) return 0;
    if (d->m < 1 || d->m > 0x7fffff00 || d->k > 0x7fffff00 || geo->ktiles > 0x7fffffff) return 0;
    if (geo->strips > 0x7fffffff - W4F_STRIPS || d->n > 0x7fffff00) return 0;
    /* tiles must fit an int */
    if (cuops_ceil_div(d->m, W4F_XROWS) * cuops_ceil_div(geo->strips, W4F_STRIPS) > 0x7fffffff)
        return 0;
    return cuops_aligned(d->x, 2) && cuops_aligned(d->y, 2);
}

cuops_status_t w4a16_launch_prefill_wgmma(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                          const w4_geometry_t *geo, int words_in_registers,
                                          int forced_split, const char **kernel_name)
{
    const char *const name = words_in_registers ? "w4a16_prefill_wgmma_ahead" : "w4a16_prefill_wgmma";
    *kernel_name = name;
    if (!w4a16_prefill_wgmma_serves(h, d, geo))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: serves sm_90 (%d bytes of shared memory per block) with "
                          "group_size a multiple of 64 or one group per row, m and k < 2^31, x and "
                          "y 2-byte aligned (sm_%d%d, group_size %lld, k %lld)",
                          name, (int)W4F_SMEM_BYTES, h->sm_major, h->sm_minor,
                          (long long)d->group_size, (long long)d->k);

    /* x as TMA reads it: in place when it can, else packed K-major once */
    CUtensorMap tmap_x;
    cuops_status_t st = w4_wgmma_x_map(h, d, W4F_XROWS, name, &tmap_x);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    w4f_params_t p;
    memset(&p, 0, sizeof p);
    w4_wgmma_common_params(&p, d, geo);
    p.tiles_x = (int)cuops_ceil_div(d->m, W4F_XROWS);
    p.num_tiles = p.tiles_x * (int)cuops_ceil_div(geo->strips, W4F_STRIPS);
    const int sms = h->num_sms > 0 ? h->num_sms : 132;
    /* The k split (the _ahead form only): its partials take the workspace,
     * which must then not hold a packed x as well (one workspace per call),
     * and a user workspace must be large enough, else no split. */
    int split_tiles = 0;
    p.split_parts = words_in_registers ? w4a16_prefill_split_plan(p.num_tiles, sms, p.ktiles,
                                                                  forced_split, &split_tiles)
                                       : 1;
    const size_t partial_bytes = (size_t)split_tiles * 2 * (size_t)p.split_parts * 64 * 256 * 4;
    /* a user workspace also holds the counters, after the partials */
    const size_t counter_bytes = cuops_cuda_counter_bytes(h, (size_t)split_tiles * 2);
    if (p.split_parts > 1 &&
        (!cuops_sm90_tma_ok(d->x, d->ldx) ||
         (h->user_workspace && h->user_workspace_bytes < partial_bytes + counter_bytes + 16))) {
        p.split_parts = 1;
        split_tiles = 0;
    }
    p.dp_tiles = p.num_tiles - split_tiles;
    p.num_units = p.dp_tiles + split_tiles * p.split_parts;
    if (p.split_parts > 1) {
        void *ws_raw = NULL;
        st = cuops_cuda_workspace(h, partial_bytes + counter_bytes + 16, &ws_raw);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        p.partials = (float4 *)(((uintptr_t)ws_raw + 15) & ~(uintptr_t)15);
        st = cuops_cuda_counters(h, (size_t)split_tiles * 2, (uint8_t *)p.partials + partial_bytes,
                                 &p.counters);
        if (st != CUOPS_STATUS_SUCCESS) return st;
    }
    p.y_vec_ok = cuops_aligned(d->y, 16) && d->ldy % 8 == 0;
    /* y through TMA stores where TMA can address it (the same conditions as
     * for x) and n is whole 16-byte units: the store clips at n in 16-byte
     * units (measured: n = 7 wrote y[.][7]); otherwise the map stays unused */
    CUtensorMap tmap_y;
    memset(&tmap_y, 0, sizeof tmap_y);
    p.y_tma = cuops_sm90_tma_ok(d->y, d->ldy) && d->n % 8 == 0;
    if (p.y_tma) {
        st = cuops_sm90_encode_kmajor(h, &tmap_y, d->y, d->act_type, d->m, d->n, d->ldy, W4F_XROWS);
        if (st != CUOPS_STATUS_SUCCESS) return st;
    }

    const int bf16 = d->act_type == CUOPS_DTYPE_BF16;
    w4f_kernel_fn fn = words_in_registers
                           ? (bf16 ? w4a16_prefill_wgmma_kernel<__nv_bfloat16, 1>
                                   : w4a16_prefill_wgmma_kernel<__half, 1>)
                           : (bf16 ? w4a16_prefill_wgmma_kernel<__nv_bfloat16, 0>
                                   : w4a16_prefill_wgmma_kernel<__half, 0>);
    CUOPS_CUDA_TRY(h, cudaFuncSetAttribute((const void *)fn,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           W4F_SMEM_BYTES));
    const int grid = p.num_units < sms ? p.num_units : sms;
    fn<<<grid, W4F_THREADS, W4F_SMEM_BYTES, cuops_stream(h)>>>(tmap_x, tmap_y, p);
    st = cuops_cuda_check_launch(h, name);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    h->last_kernel = name;
    return CUOPS_STATUS_SUCCESS;
}
