/*
 * gemm_tuning.h - the GEMM tuning table: which kernels may serve a call, in
 * which order of preference, by architecture and dtype. The dispatch
 * (gemm_dispatch.cu) walks this list and launches the first kernel whose
 * supports() accepts the call; kernels decide shape/alignment limits
 * themselves, this file decides preference only. Change the order here, not
 * in the kernels.
 *
 * Families:
 *  - decode table (gemm_decode.cu: weight streamed into mma.sync operand
 *    registers, K split over warps and CTAs): sm_80 and newer, F16/BF16
 *    inputs, m <= 64, NT; decode_splitk_* for rows on 16 bytes, then
 *    decode_realign_m8/m16/m32/m64 for weight rows anywhere on 2 bytes (odd
 *    k, odd ldb, a base off 16 bytes, read in place; from m16 up x is copied
 *    onto the 16-byte grid first); their supports() decline everything else;
 *  - sm90 tables (TMA + wgmma, gemm_sm90*.cu): only on sm_90, F16/BF16 inputs;
 *  - sm80 tables (cp.async + ldmatrix + mma.sync, gemm_sm80*.cu): sm_80 and
 *    newer, F16/BF16 inputs;
 *  - sgemm_simt (sgemm_simt.cu): F32 inputs, aligned data;
 *  - fallback_tiled (gemm_fallback.cu): every call the API accepts; last.
 *
 * The decode/sm90/sm80 table functions live in files that may not be built
 * into a given tree; they are weak references here, and a null address is an
 * empty table, so the library links with or without them.
 */
#ifndef CUOPS_GEMM_TUNING_H
#define CUOPS_GEMM_TUNING_H

#include "cuda/gemm/gemm_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gemm_fallback.cu */
extern const cuops_gemm_kernel_t cuops_gemm_fallback_tiled;
/* sgemm_simt.cu: BK = 8 (the default) and BK = 16 (half the barriers per FLOP) */
extern const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_128x128;
extern const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_128x128_bk16;
/* sgemm_simt.cu: lane order for packed LDS.128 returns, conflict-free stores */
extern const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_128x128_bk16_paired;
extern const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_128x128_bk32_paired;
/* sgemm_simt.cu: operands off 16 bytes copied onto aligned rows, then bk16_paired */
extern const cuops_gemm_kernel_t cuops_gemm_sgemm_simt_packed;
/* gemm_sm80_packed.cu: f16/bf16 operands off 16 bytes (or ld off 8) packed
 * K-major, then the first mma.sync kernel of their table that takes the call */
extern const cuops_gemm_kernel_t cuops_gemm_sm80_packed;

/* Tables of other kernel families: array order is that family's preference. */
__attribute__((weak, visibility("hidden")))
const cuops_gemm_kernel_t *cuops_gemm_sm90_kernel_table(int *count);
__attribute__((weak, visibility("hidden")))
const cuops_gemm_kernel_t *cuops_gemm_sm80_kernel_table(int *count);
/* gemm_sm90.cu: the 128 x 128- or 64 x 128-tile entry auto runs before the
 * sm90 table for this call (grids that 128 x 256 tiles fill poorly), or NULL */
__attribute__((weak, visibility("hidden")))
const cuops_gemm_kernel_t *cuops_gemm_sm90_auto_tile128(const struct cuops_handle *h,
                                                       const cuops_gemm_desc_t *d);
/* gemm_sm90_decode.cu: the decode GEMM on TMA + wgmma with cluster split-K */
__attribute__((weak, visibility("hidden")))
extern const cuops_gemm_kernel_t cuops_gemm_sm90_decode_wgmma;
/* gemm_sm90_decode.cu: the same with 128-row blocks whatever n (two consumers) */
__attribute__((weak, visibility("hidden")))
extern const cuops_gemm_kernel_t cuops_gemm_sm90_decode_wgmma128;
/* gemm_sm90_decode.cu: its blocks with the weight issued one stage at a time / in pairs */
__attribute__((weak, visibility("hidden")))
extern const cuops_gemm_kernel_t cuops_gemm_sm90_decode_wgmma_single;
__attribute__((weak, visibility("hidden")))
extern const cuops_gemm_kernel_t cuops_gemm_sm90_decode_wgmma_pairs64;
/* gemm_sm90_decode.cu: the cluster form for a weight whose rows are off 16 bytes */
__attribute__((weak, visibility("hidden")))
extern const cuops_gemm_kernel_t cuops_gemm_sm90_decode_shift;
/* gemm_sm90_decode.cu: the same with 64-row blocks (one consumer) */
__attribute__((weak, visibility("hidden")))
extern const cuops_gemm_kernel_t cuops_gemm_sm90_decode_wgmma64;
/* gemm_sm90_decode.cu: its narrow form (x as the wgmma A, 8-256-row tiles,
 * all of K, k-blocks issued in pairs) */
__attribute__((weak, visibility("hidden")))
extern const cuops_gemm_kernel_t cuops_gemm_sm90_decode_narrow;
/* gemm_sm90_decode.cu: the narrow form issuing one k-block at a time (study) */
__attribute__((weak, visibility("hidden")))
extern const cuops_gemm_kernel_t cuops_gemm_sm90_decode_narrow_single;
/* gemm_decode.cu: study forms of the realigning kernel, forced only:
 * decode_realign_runs_hint_m8/m16/m32, decode_realign_rr_nohint_m16,
 * decode_realign_nohint_m8/m32, decode_realign_rr_l2_128_m16, and
 * decode_realign_xinplace_m16/m32/m64 (auto's m16, m32 and m64 realigning x
 * in place, without the copy onto the 16-byte grid) */
__attribute__((weak, visibility("hidden")))
extern const cuops_gemm_kernel_t cuops_gemm_decode_study[CUOPS_GEMM_DECODE_STUDY_COUNT];
/* gemm_decode.cu: small-M (decode) kernels that stream the weight with split-K */
__attribute__((weak, visibility("hidden")))
const cuops_gemm_kernel_t *cuops_gemm_decode_kernel_table(int *count);

#ifdef __cplusplus
}
#endif

/* A family table, or an empty one when its file is not linked in. */
static inline const cuops_gemm_kernel_t *
cuops_gemm_family_table(const cuops_gemm_kernel_t *(*table_fn)(int *), int *count)
{
    *count = 0;
    if (!table_fn) return NULL;
    const cuops_gemm_kernel_t *t = table_fn(count);
    if (!t || *count < 0) *count = 0;
    return t;
}

/* Weight rows per tile of the narrow decode form (gemm_sm90_decode.cu): the
 * fewest multiple of 8 that covers n with one tile per SM, 8 to 256 (wgmma
 * N and the TMA box): 32 at n = 4096, 112 at 14336, 224 at 28672 on 132 SMs. */
static inline int cuops_decode_narrow_rows(int64_t n, int64_t sms)
{
    int64_t rows = sms > 0 ? (n + sms - 1) / sms : n;
    rows = (rows + 7) / 8 * 8;
    return rows < 8 ? 8 : rows > 256 ? 256 : (int)rows;
}

/* Weight rows per CTA of the cluster decode form (gemm_sm90_decode.cu): 256
 * (four consumer warpgroups), but 128 (two) where 256-row blocks cover fewer
 * than 3/4 of the SMs, so that K would be split over a cluster, and 128-row
 * blocks cover 3/4 to all of them unsplit (n ~ 12550-16900 on 132 SMs: the
 * shape cuBLAS takes at 14336 x 4096, 112 CTAs of 128 rows). */
static inline int cuops_decode_wgmma_rows(int64_t n, int64_t sms)
{
    const int64_t b256 = (n + 255) / 256, b128 = (n + 127) / 128;
    return 4 * b256 < 3 * sms && 4 * b128 >= 3 * sms && b128 <= sms ? 128 : 256;
}

/* Whether 64-row cluster blocks would split K: they cover at most half of
 * the SMs (n <= 4224 on 132 SMs). */
static inline int cuops_decode_rows64_split(int64_t n, int64_t sms)
{
    return 2 * ((n + 63) / 64) <= sms;
}

/* Weight rows per CTA of the cluster form as auto launches it: 256 or 128
 * where those blocks run unsplit (cuops_decode_wgmma_rows); where they
 * would cover at most half of the SMs, so K is split over a cluster, and
 * 64-row blocks would be split too, 64-row blocks (one consumer warpgroup,
 * 12-22 stages: the most weight in flight per row), but 128-row ones where
 * K is long (k > 8192) and 64-row blocks would split it 4 ways or more.
 * H200 (P153-P156, docs/gemm.md decode step 8), m = 1 f16 us, 64- / 128- /
 * 256-row blocks: 4096 x 14336 34.0 / 35.9 / -, 3072 x 4096 12.6 / 12.8 /
 * 14.2, 2048 x 4096 10.5 / 10.9 / 11.5, 2048 x 2048 8.4 / 8.6 / 9.7,
 * 1024 x 4096 8.5 / 8.6 / 10.1, 2048 x 8192 15.4 / 15.1 / 15.3 (m = 64:
 * 16.1 / 17.0 / 18.1), but 1024 x 14336 13.9 / 13.5 / 16.7 and
 * 2048 x 14336 22.5 / 21.1 / 20.9. */
static inline int cuops_decode_wgmma_block_rows(int64_t n, int64_t k, int64_t sms)
{
    const int rows = cuops_decode_wgmma_rows(n, sms);
    if (2 * ((n + rows - 1) / rows) > sms || !cuops_decode_rows64_split(n, sms)) return rows;
    return k > 8192 && 4 * ((n + 63) / 64) <= sms ? 128 : 64;
}

/* Whether auto takes the narrow decode form (H200, 8b98b4b, measured against
 * the cluster form in the same run):
 *  - its tiles keep 3/4 of the SMs busy (n against rounds x SMs x rows);
 *  - tiles of 32 rows or more: 8- and 16-row tiles hold too little weight
 *    per stage to stream a long K (2048 x 8192: 21.4 us against 15.6;
 *    1024 x 4096: 13.3 against 10.2), and at 2048 x 2048 (9.4 us) 64-row
 *    cluster blocks are faster too (8.4, P155);
 *  - not where 64-row cluster blocks would split K (n <= 4224 on 132 SMs):
 *    at 4096 x 14336 those (split 2, 128 CTAs) took 34.0 us against 34.6
 *    at m = 1 and 34.2 against 34.8 at m = 16 (P155), level at m = 64; at
 *    4096 x 4096 and 4096 x 8192 (P214, after both forms' paired issue)
 *    3-8 % faster than the narrow form at m = 1 / 16 / 64 (1 x 4096 x 8192
 *    21.1 us against 22.9);
 *  - the cluster form would split K (its blocks, 256 or 128 rows by
 *    cuops_decode_wgmma_rows, cover fewer than 3/4 of the SMs): where 256-row
 *    blocks cover more it runs unsplit, with four consumer warpgroups, and
 *    measured 0.3-3 % faster (28672 x 8192); 128-row blocks unsplit at
 *    14336 x 4096 2-5 % faster than the narrow form at m = 1..64 (H200,
 *    P151: docs/gemm.md, decode step 7).
 * The last two hold on the H200's 4.9 TB/s. On a GPU with less DRAM bandwidth
 * (dram_gbps below CUOPS_DECODE_NARROW_ALL_GBPS; 0 = unknown takes the H200
 * rule) the narrow form is taken wherever its tiles fit: on an H100 (3.35 TB/s,
 * P214 call 2, both forms with paired issue, decode suite f16 / bf16 twice)
 * it was ahead of the cluster form at 4096^2 by 5 %, 14336 x 4096 by 1-2.5 %,
 * 28672 x 8192 by 0.2-1.8 % and 64 x 4096 x 14336 by 1.3 %, behind only at
 * 1 x 4096 x 14336 (1 %): suite 1.046-1.049x cuBLAS forced against auto's
 * 1.027-1.030x. */
#define CUOPS_DECODE_NARROW_ALL_GBPS 4000
static inline int cuops_decode_narrow_fits(int64_t n, int64_t sms, int64_t dram_gbps)
{
    const int64_t rows = cuops_decode_narrow_rows(n, sms);
    const int64_t tiles = (n + rows - 1) / rows;
    const int64_t rounds = sms > 0 ? (tiles + sms - 1) / sms : 1;
    const int64_t wrows = cuops_decode_wgmma_rows(n, sms);
    const int64_t blocks = (n + wrows - 1) / wrows;
    const int fits = 4 * n >= 3 * rounds * sms * rows && rows >= 32;
    if (dram_gbps > 0 && dram_gbps < CUOPS_DECODE_NARROW_ALL_GBPS) return fits;
    return fits && 4 * blocks < 3 * sms && !cuops_decode_rows64_split(n, sms);
}

/* The decode kernel's x box for x stored [k, m] (trans_a = T; the wgmma N):
 * 8, 16, 32 or 64 columns by m. */
static inline int cuops_decode_x_box_cols(int64_t m)
{
    return m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64;
}

/* The columns its tensor map reads per K-row in every k-block but the last
 * (sdw_prepare in gemm_sm90_decode.cu): the whole box where that stays in
 * the caller's x, else m (TMA zero-fills the rest of the box). Past column
 * m, K-row r's box row holds the caller's memory up to row r + 1; the
 * last K-row, which may end the allocation at column m, is only read in the
 * last k-block, through a map m columns wide. Rows r <= k - 2 then read up
 * to element r * lda + cols - 1 <= (k - 1) * lda + m - 1, the allocation's
 * last element, exactly when cols - m <= lda. H200 (P202, docs/gemm.md, "x
 * read as wide as its box"): 24 / 40 / 48 x 4096^2 TN with lda 64 15.7-21.3
 * -> 15.0 us, with tight lda 17.4-21.7 -> 16.8-19.0. */
static inline int64_t cuops_decode_x_read_cols(int64_t m, int64_t lda)
{
    const int64_t box = cuops_decode_x_box_cols(m);
    return box > m && box - m <= lda ? box : m;
}

/*
 * Split-tail plan of the sm90 plain kernels (gemm_sm90.cu; grid = min(#SMs,
 * tiles), units dealt round-robin): how many pieces S to split each tile of a
 * partial last round into along K, 0 for none. L = tiles mod #SMs tiles sit
 * in that round; their L S pieces are dealt after the whole tiles, so the
 * round takes ceil(L S / #SMs) pieces' time, ceil(L S / #SMs) / S of a
 * tile's. S is 2 or 3, whichever makes that shorter (2 on a tie: fewer
 * partials to read back), and only where it is under a whole tile and each
 * piece keeps >= 4 k-blocks (one ring of stages). On 132 SMs: L <= 44: S =
 * 3, 1/3; L <= 66: S = 2, 1/2; L <= 88: S = 3, 2/3; more: no tail. E.g.
 * 1537 x 3001 x 2049 with 128 x 128 tiles, 312 = 2 rounds + 48: S = 2;
 * 8192^3 with 128 x 256, 2048 = 15 + 68: S = 3 (204 pieces, 72 CTAs take
 * two); 4095^3, 512 = 3 + 116: none. H200, P194 (docs/gemm.md, "The split
 * tail"): 8192 x 8192 x 28672 1.5-1.8 % faster, big suite 1.014x -> 1.025x
 * cuBLAS. At most 1024 SMs (the counters: two per tail tile), and the
 * kernel counts its units in 32 bits.
 */
#define CUOPS_SM90_TAIL_MIN_BLOCKS_PER_PIECE 4
#define CUOPS_SM90_TAIL_MAX_SMS 1024

static inline int cuops_sm90_tail_splits(int64_t tiles, int64_t k_blocks, int64_t sms)
{
    if (sms <= 0 || sms > CUOPS_SM90_TAIL_MAX_SMS || tiles <= sms) return 0;
    const int64_t last = tiles % sms;
    if (last == 0 || tiles + 2 * last > 0x7fffffff) return 0;
    /* the tail round's time in sixths of a tile for S = 2 and 3 (whole: 6) */
    const int64_t t2 = 3 * ((2 * last + sms - 1) / sms), t3 = 2 * ((3 * last + sms - 1) / sms);
    int s = t3 < t2 ? 3 : 2;
    if ((s == 3 ? t3 : t2) >= 6) return 0;
    if (s == 3 && k_blocks < 3 * CUOPS_SM90_TAIL_MIN_BLOCKS_PER_PIECE) s = t2 < 6 ? 2 : 0;
    if (s < 2 || k_blocks < (int64_t)s * CUOPS_SM90_TAIL_MIN_BLOCKS_PER_PIECE) return 0;
    return s;
}

/*
 * Auto's tile for grids that 128 x 256 tiles fill poorly (gemm_sm90.cu,
 * cuops_gemm_sm90_auto_tile128, which measures the call and asks this rule;
 * the measurements behind it are in its comment and in docs/gemm.md, "Small
 * grids" and "Larger clusters"). Where even 128 x 128 tiles cover at most
 * half of the SMs ("grid64", m > 64): operands on 128-byte lines take the
 * plain 64 x 128 tile where its own tiles fill 2/3 of the SMs in one round
 * with k <= 2048; rows off the lines with k <= 1024 (on a device under
 * 4 TB/s of DRAM bandwidth: 3072, or 4096 with >= 64 tiles), C stored in
 * place and >= 32 tiles take clusters of four sharing B where all fit at
 * once; rows off the lines in the one-round grids take the pairs where the
 * grid covers 90 % of the SMs or k <= 1024 (C in place), else the plain
 * tile. Then the
 * cluster split on 128 x 128 tiles where its plan splits; nothing where the
 * 128 x 128 split-K plan splits or 128 x 128 tiles are not fuller than
 * 128 x 256 ones by 8 % (fill = tiles / (rounds * SMs)); else the plain
 * 64 x 128 tile in the grid64 range where its rounds are fuller than
 * 128 x 128's counting it 20 % less efficient per tile slot, else 128 x 128.
 */
typedef enum cuops_sm90_small_pick {
    CUOPS_SM90_PICK_TABLE = 0,  /* none: the sm90 table decides */
    CUOPS_SM90_PICK_64,         /* sm90_ws_64x128 */
    CUOPS_SM90_PICK_64_MC2,     /* sm90_ws_64x128_mc2 */
    CUOPS_SM90_PICK_64_MC4,     /* sm90_ws_64x128_mc4 */
    CUOPS_SM90_PICK_128_DSMEM,  /* sm90_ws_128x128_splitk_dsmem */
    CUOPS_SM90_PICK_128         /* sm90_ws_128x128 */
} cuops_sm90_small_pick_t;

typedef struct cuops_sm90_small_call {
    int64_t m, n, k, sms;
    int lines;        /* both operands read on whole 128-byte lines */
    int c_shifted;    /* a 16-bit C that TMA cannot store in place */
    int can_run64;    /* the 64 x 128 kernels serve the call's types and sizes */
    int mc2_ok;       /* the device holds a cluster of two of those CTAs */
    int mc4_clusters; /* clusters of four it holds at once (<= 0: none) */
    int dsmem128;     /* the cluster split on 128 x 128 tiles splits the call */
    int splitk128;    /* the split-K plan on 128 x 128 tiles splits the call */
    int64_t dram_gbps; /* the device's peak DRAM bandwidth (0: unknown) */
} cuops_sm90_small_call_t;

/* Below this DRAM bandwidth (an H100's 3.35 TB/s, not an H200's 4.8) the
 * clusters of four serve rows off the lines up to k = 4096, not 1024 (with
 * the guard below past k = 3072):
 * measured on an H100 after the multicast kernels' start-up and end
 * barriers went (P236 call 3, f16 / bf16, interleaved with cuBLAS):
 * 768 x 1024 x 2000 12.03 / 12.00 us against the plain tile's 14.78 /
 * 14.50, 768 x 1024 x 4000 17.18 / 17.28 against 21.66 / 21.82. On the
 * H200 the plain tile was ahead from k = 2000 (P198: 12.4 against 13.0 us
 * at 768 x 1024 x 2000), so there the rule stays. */
#define CUOPS_SM90_MC4_LONG_K_GBPS 4000
#define CUOPS_SM90_MC4_LONG_K_MAX 4096
/* Past k = 3072 that range needs >= 64 tiles: with fewer, the split-K
 * cluster form on 128 x 128 tiles spreads K over more SMs than the fours
 * occupy (H100, P237 call 3, f16 us, the split / the fours / the plain
 * tile): 256 x 1024 x 4000 (32 tiles) 16.03 / 16.96 / 16.58, 384 x 1024 x
 * 4000 (48) 16.00 / 16.42 / 16.74; while 512 x 1024 x 4000 (64) 18.75 /
 * 16.48, 448 x 1024 x 3000 (56) 22.59 / 15.30 and 256 x 1024 x 2000 (32)
 * 14.18 / 11.78 keep the fours. */
#define CUOPS_SM90_MC4_LONG_K_FEW_TILES_MAX 3072
#define CUOPS_SM90_MC4_LONG_K_MIN_TILES 64

static inline cuops_sm90_small_pick_t cuops_sm90_small_grid_pick(const cuops_sm90_small_call_t *c)
{
    const int64_t sms = c->sms;
    if (sms <= 0 || c->k <= 0 || c->m <= 0 || c->n <= 0) return CUOPS_SM90_PICK_TABLE;
    const int64_t tn256 = (c->n + 255) / 256, tn128 = (c->n + 127) / 128;
    const int64_t t256 = ((c->m + 127) / 128) * tn256, t128 = ((c->m + 127) / 128) * tn128;
    const int64_t t64 = ((c->m + 63) / 64) * tn128;
    const int64_t r256 = (t256 + sms - 1) / sms, r128 = (t128 + sms - 1) / sms;
    const int64_t r64 = (t64 + sms - 1) / sms;
    const int grid64 = c->m > 64 && 2 * t128 <= sms && c->can_run64;
    /* its own tiles fill 2/3 of the SMs in one round */
    const int round64 = grid64 && 3 * t64 >= 2 * sms && t64 <= sms;
    if (round64 && c->lines && c->k <= 2048) return CUOPS_SM90_PICK_64;
    /* rows off the lines, short K (to 4096 where DRAM is slower): clusters
     * of four sharing B where all of them (one per block of 4 x 1 tiles)
     * fit at once */
    const int slow_dram = c->dram_gbps > 0 && c->dram_gbps < CUOPS_SM90_MC4_LONG_K_GBPS;
    const int mc4_k = c->k <= 1024 ||
                      (slow_dram && c->k <= CUOPS_SM90_MC4_LONG_K_MAX &&
                       (c->k <= CUOPS_SM90_MC4_LONG_K_FEW_TILES_MAX || t64 >= CUOPS_SM90_MC4_LONG_K_MIN_TILES));
    if (grid64 && !c->lines && mc4_k && t64 >= 32 && !c->c_shifted &&
        ((c->m + 255) / 256) * tn128 <= c->mc4_clusters)
        return CUOPS_SM90_PICK_64_MC4;
    if (round64 && !c->lines)
        return (10 * t64 >= 9 * sms || c->k <= 1024) && !c->c_shifted && c->mc2_ok
                   ? CUOPS_SM90_PICK_64_MC2
                   : CUOPS_SM90_PICK_64;
    if (c->dsmem128) return CUOPS_SM90_PICK_128_DSMEM;
    if (c->m <= 64 || c->splitk128) return CUOPS_SM90_PICK_TABLE;
    if (92 * t128 * r256 <= 100 * t256 * r128) return CUOPS_SM90_PICK_TABLE;
    if (grid64 && 80 * t64 * r128 > 92 * t128 * r64) return CUOPS_SM90_PICK_64;
    return CUOPS_SM90_PICK_128;
}

/* Upper bound on the number of kernels the dispatch can know about. The
 * lists below stop at it, cutting their tail (the fallback last), so a table
 * grown past it shows in test_api_validation's check of the gemm names: at
 * 64, the study entries of P228 pushed the fallback and the SIMT SGEMM
 * entries off the end, where forcing them by name failed. */
#define CUOPS_GEMM_MAX_KERNELS 128

/* out[(*n)++] = k while there is room */
static inline void cuops_gemm_list_add(const cuops_gemm_kernel_t **out, int max, int *n,
                                       const cuops_gemm_kernel_t *k)
{
    if (*n < max) out[(*n)++] = k;
}

/*
 * Every kernel the library holds, each once (for forced variants and for the
 * variant-name list), the fallback last. Returns how many were written to
 * `out` (at most `max`).
 */
static inline int cuops_gemm_all_kernels(const cuops_gemm_kernel_t **out, int max)
{
    int n = 0, count = 0;
    const cuops_gemm_kernel_t *t = cuops_gemm_family_table(cuops_gemm_decode_kernel_table, &count);
    for (int i = 0; i < count; i++) cuops_gemm_list_add(out, max, &n, &t[i]);
    for (int i = 0; i < CUOPS_GEMM_DECODE_STUDY_COUNT && cuops_gemm_decode_study; i++)
        cuops_gemm_list_add(out, max, &n, &cuops_gemm_decode_study[i]);
    t = cuops_gemm_family_table(cuops_gemm_sm90_kernel_table, &count);
    for (int i = 0; i < count; i++) cuops_gemm_list_add(out, max, &n, &t[i]);
    /* weak symbols: absent from builds without sm_90a code */
    const cuops_gemm_kernel_t *const sm90_decode[] = {
        &cuops_gemm_sm90_decode_wgmma,        &cuops_gemm_sm90_decode_wgmma128,
        &cuops_gemm_sm90_decode_wgmma64,      &cuops_gemm_sm90_decode_wgmma_single,
        &cuops_gemm_sm90_decode_wgmma_pairs64, &cuops_gemm_sm90_decode_shift,
        &cuops_gemm_sm90_decode_narrow,       &cuops_gemm_sm90_decode_narrow_single};
    for (size_t i = 0; i < sizeof sm90_decode / sizeof sm90_decode[0]; i++)
        if (sm90_decode[i]) cuops_gemm_list_add(out, max, &n, sm90_decode[i]);
    t = cuops_gemm_family_table(cuops_gemm_sm80_kernel_table, &count);
    for (int i = 0; i < count; i++) cuops_gemm_list_add(out, max, &n, &t[i]);
    const cuops_gemm_kernel_t *const rest[] = {
        &cuops_gemm_sm80_packed,
        &cuops_gemm_sgemm_simt_128x128,
        &cuops_gemm_sgemm_simt_128x128_bk16,
        &cuops_gemm_sgemm_simt_128x128_bk16_paired,
        &cuops_gemm_sgemm_simt_128x128_bk32_paired,
        &cuops_gemm_sgemm_simt_packed,
        &cuops_gemm_fallback_tiled};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) cuops_gemm_list_add(out, max, &n, rest[i]);
    return n;
}

/*
 * The candidates for the automatic choice, best first. The fallback is always
 * last, so the list is never empty.
 *
 *  F16/BF16, small M on sm_90 (m <= 64, a weight TMA can read, k >= 1; the
 *    cluster form packs an x that TMA cannot read into the workspace first:
 *    x off 16 bytes 6-19 % faster than on the split-K GEMM, H100, P225):
 *    sm90_decode_narrow where its tiles (8-256 rows by n) keep 3/4 of the
 *    SMs busy, hold 32 rows or more, and the cluster form would split K
 *    with 128- or 256-row blocks, not 64-row ones (cuops_decode_narrow_fits:
 *    n ~ 4225-12550 and 16900-25100 on 132 SMs; between them 128-row
 *    cluster blocks run unsplit; on GPUs under 4 TB/s of DRAM bandwidth,
 *    wherever its tiles fit); else sm90_decode_wgmma (weight by TMA, wgmma from shared
 *    memory; 256- or 128-row blocks unsplit, 64- or 128-row blocks with
 *    cluster split-K: cuops_decode_wgmma_block_rows); both ahead of the
 *    decode kernels. A weight whose rows are off 16 bytes (which both
 *    decline): sm90_decode_shift at m > 8 with n >= 8192, else the
 *    realigning decode kernels.
 *  F16/BF16, small M (decode: m <= 64, NT) on sm_80 and newer: the decode
 *    kernels first (their supports() accepts only those calls): they split K
 *    so every SM streams the weight, where a 128-row tile would leave most
 *    SMs idle; weight rows off 16 bytes on the realigning ones, in place
 *    (H100, P221: 1 x 32000 x 4095 133.8 us against 307.0 on
 *    sm90_ws_128x256 with both operands packed, cuBLAS 113.3; 16 x 32000 x
 *    4095 170.7 against 306.1, cuBLAS 197.3; 32 x 32000 x 4095 187.9 against
 *    304.6, cuBLAS 216.6; since P224, with x copied onto the 16-byte grid
 *    from m16 up, 16 / 32 / 64 x 32000 x 4095 143 / 152 / 217 us, the last
 *    against 300 on the packed path, cuBLAS 240).
 *  F16/BF16 on sm_90: the 128 x 128-tile entry cuops_gemm_sm90_auto_tile128
 *    picks (its cluster split-K where that plan splits with >= 16 k-blocks
 *    per split, else the unsplit 128 x 128 tile where its rounds are fuller
 *    than the 128 x 256 grid's: 1024 x 2048 x 4096, 1537 x 3001 x 2049, ...;
 *    the 64 x 128 tile where even 128 x 128 tiles cover at most half of the
 *    SMs: 1024^3, 768 x 1024 x 2048; with operand rows off the 128-byte
 *    lines its clusters of two or four sharing B where they pay: 1000^3,
 *    640 x 1024 x 1000),
 *    then the wgmma kernels (TMA, 4th-gen tensor cores) in their own
 *    order (gemm_sm90.cu: sm90_ws_128x256_splitk_dsmem and
 *    sm90_ws_128x256_splitk, which accept only the calls whose tile grid
 *    covers at most half of the SMs and k > 448 - the cluster reduction
 *    where the device holds every tile's cluster at once, else the fixup
 *    kernel - then sm90_ws_128x256), then the mma.sync kernels (they run on Hopper at ~65%
 *    of the wgmma peak, see anchors), then the fallback. The split-K entry
 *    accepts m <= 64 too: the small-m calls the decode kernels decline
 *    (transposed operands; x alone off 16 bytes where the workspace
 *    cannot hold its copy) reach it before the
 *    mma.sync kernels, and where it does not split them, sm90_ws_128x256 on
 *    packed operands (16 x 32000 x 4095 NT 307 us against 1677 on
 *    fallback_tiled, H100, P219; NT calls with the weight's rows off 16
 *    bytes like that one run on decode_realign_* since P221, at m = 33-64
 *    since P224).
 *  F16/BF16 on sm_80..sm_89 (and later arches, through compute_80 PTX):
 *    mma.sync kernels, then sm80_packed (operands off 16 bytes or with ld
 *    off 8 elements packed K-major into the workspace, then the first
 *    kernel that takes the packed call, the decode kernels first at small
 *    m, else the mma.sync table: 4095^3 f16 415 us against
 *    14917 on the fallback, forced on an H100, P220), then the fallback (a
 *    user workspace too small for the packs, operands inside it).
 *  F32: the paired-lane SIMT SGEMM with BK = 16 (H200, 4096^3: 47.0 TFLOP/s,
 *    against 45.3 for the plain BK = 16 kernel and 43.4 for BK = 8), then the
 *    plain BK = 16 kernel (for what the paired one declines), then
 *    sgemm_simt_packed (operands off 16 bytes or off 4-float rows copied onto
 *    aligned rows first), then the fallback (k == 0).
 */
static inline int cuops_gemm_auto_candidates(const struct cuops_handle *h,
                                             const cuops_gemm_desc_t *d,
                                             const cuops_gemm_kernel_t **out, int max)
{
    int n = 0, count = 0;
    if (d->ab_type == CUOPS_DTYPE_F16 || d->ab_type == CUOPS_DTYPE_BF16) {
        /* sm90_decode_narrow (no split) where its tiles keep 3/4 of the SMs
         * busy. With 32-row tiles it measured 0.97-1.17x cuBLAS on the
         * twelve 4096-row decode rows against 0.76-1.00x for the cluster
         * form (H200, 0995f1f), 4 % faster than it at n = 8192 (ea345f6),
         * and lost where CTAs got 3-7 tiles (n = 11008, 14336, 28672) or a
         * 1.5-tile average (6144): 0.80-0.95x. With tile rows by n (one
         * tile per SM, 8b98b4b) it is ahead of the cluster form at n = 6144,
         * 8192, 11008 (m = 1) and 14336 (m = 64), level at 14336 (m <= 16),
         * behind at 28672 and for tiles under 32 rows (above). With both
         * forms issuing k-blocks in pairs (P214) it is 2-17 % ahead at
         * n = 6144-22016 but 3-8 % behind the 64-row split blocks at
         * n = 4096 (k = 4096, 8192), which it therefore leaves to them. */
        if (h->sm_major == 9 && &cuops_gemm_sm90_decode_narrow && d->k >= 1 &&
            cuops_decode_narrow_fits(d->n, h->num_sms > 0 ? h->num_sms : 132, h->dram_gbps))
            out[n++] = &cuops_gemm_sm90_decode_narrow;
        /* sm90_decode_wgmma measured 0.77-1.01x cuBLAS on the decode suite
         * against 0.41-0.97x for the mma.sync decode kernels (H200, 5c8d568);
         * with 64- and 128-row blocks where K is split, also ahead of them on
         * small weights at m <= 8 (P155: 1 x 2048 x 8192 15.4 us against
         * 20.5, 1 x 1024 x 4096 8.5 against 14.2, 1 x 3072 x 4096 12.6
         * against 13.9): first for every m. x stored [k, m] alike since its
         * x tiles are as narrow as m (P201: 8 x 4096 x 4096 TN 16.0-16.3 us
         * against 23.8-24.0 on the split GEMM) */
        if (h->sm_major == 9 && &cuops_gemm_sm90_decode_wgmma)
            out[n++] = &cuops_gemm_sm90_decode_wgmma;
        /* sm90_decode_shift (a weight whose rows are off 16 bytes, which the
         * forms above decline) ahead of the realigning decode kernels where
         * it measured faster: m > 8 on n >= 8192 (H100, P225: 16 / 32 / 64 x
         * 14336 x 4095 15 / 12 / 30 % faster, 64 x 32000 x 4095 35 %, rows on
         * 8 bytes 64 x 14336 x 4100 42 %); at m <= 8 level to 12 % slower
         * (1 x 28672 x 8191), and slower on n <= 4096 (16 x 3072 x 4095 +8 %,
         * 1 x 3072 x 4095 +53 %, 24 x 4096 x 14335 +1.5 %). */
        if (h->sm_major == 9 && &cuops_gemm_sm90_decode_shift && d->m > 8 && d->n >= 8192)
            out[n++] = &cuops_gemm_sm90_decode_shift;
        if (h->sm_major >= 8) {
            const cuops_gemm_kernel_t *t =
                cuops_gemm_family_table(cuops_gemm_decode_kernel_table, &count);
            for (int i = 0; i < count && n < max - 1; i++) out[n++] = &t[i];
        }
        if (h->sm_major == 9) {
            const cuops_gemm_kernel_t *k128 =
                cuops_gemm_sm90_auto_tile128 ? cuops_gemm_sm90_auto_tile128(h, d) : NULL;
            if (k128) out[n++] = k128;
            const cuops_gemm_kernel_t *t =
                cuops_gemm_family_table(cuops_gemm_sm90_kernel_table, &count);
            for (int i = 0; i < count && n < max - 1; i++) out[n++] = &t[i];
        }
        if (h->sm_major >= 8) {
            const cuops_gemm_kernel_t *t =
                cuops_gemm_family_table(cuops_gemm_sm80_kernel_table, &count);
            for (int i = 0; i < count && n < max - 1; i++) out[n++] = &t[i];
            /* what every mma.sync kernel declines for its operands' alignment */
            if (n < max - 1) out[n++] = &cuops_gemm_sm80_packed;
        }
    } else if (d->ab_type == CUOPS_DTYPE_F32) {
        out[n++] = &cuops_gemm_sgemm_simt_128x128_bk16_paired;
        out[n++] = &cuops_gemm_sgemm_simt_128x128_bk16;
        out[n++] = &cuops_gemm_sgemm_simt_packed;
    }
    out[n++] = &cuops_gemm_fallback_tiled;
    return n;
}

#endif /* CUOPS_GEMM_TUNING_H */
