/*
 * gemm_decode.cu - decode-shaped GEMM (m <= 64, C = A * B^T with B stored
 * [n,k]): the weight B is streamed from HBM straight into mma.sync operand
 * registers, K is split across the warps of a CTA and, when the tiles alone
 * cannot keep HBM busy, across CTAs (classic split-K or stream-K), with a
 * deterministic reduction. Table: cuops_gemm_decode_kernel_table().
 *
 * Why this shape of kernel. At m <= 64 the GEMM is a weight stream: for
 * n x k = 28672 x 8192 the weight is 470 MB against 1 MB of activations, so
 * the time is n*k*2 / HBM bandwidth and everything below serves that.
 *  - The weight is the mma A operand (16 weight rows), the activations are B
 *    (8 rows of A per mma): we compute C^T = B * A^T, so m = 1..8 costs one
 *    m16n8k16 per 16x16 weight block instead of the two that A-as-A needs.
 *  - A "chunk" is 16 weight rows x 32 columns = 1 KB. Lane l = 4g + t loads
 *    16 bytes of row g and 16 bytes of row g+8 at columns 8t..8t+7 of the
 *    chunk: those eight registers ARE the A fragments of the chunk's two k16
 *    steps, because the mma's logical k {2t,2t+1,2t+8,2t+9} of step s is
 *    mapped to the physical columns 8t+4s+{0,1,2,3}. The same map applied to
 *    the activations makes lane l's B fragments one 16-byte load of row g of
 *    the 8-row activation block at the same columns. The map is a bijection
 *    on the chunk's 32 columns, so the dot products are unchanged. No shared
 *    memory, no shuffles on the weight path.
 *  - Weight loads are ld.global.nc.L1::no_allocate (read once: keep L1 for
 *    the activations, which every warp of the SM re-reads). Each warp keeps
 *    U chunks in flight in a rolling register pipeline (chunk j+U is issued
 *    as soon as chunk j has been fed to the mma). Little's law: ~4.4 TB/s x
 *    ~0.8 us loaded latency = ~3.5 MB in flight over the GPU = ~27 KB per
 *    SM. Requested per SM: m8 16 warps x 8 KB, m16 16 x 6 KB, m32 12 x 6 KB,
 *    m64 8 x 4 KB (registers decide: see the table entries).
 *  - L1 bandwidth is the second limit at m = 64: per weight chunk a warp
 *    reads 64 rows x 64 B = 4 KB of activations through L1 (128 B/clk/SM):
 *    ~40 L1 cycles per KB of weight, a ceiling of ~5.9 TB/s over 132 SMs
 *    (73% busy at full HBM speed). Two strips per warp would share the
 *    activation registers and halve that (template parameter R), but ptxas
 *    spills at R = 2 with m >= 32 under the 2-3 CTAs/SM register budget, so
 *    every entry uses R = 1 for now.
 *  - K is split over the W warps of a CTA (chunks dealt round-robin), and the
 *    warps' fp32 accumulators are summed in shared memory in warp order. Over
 *    CTAs the work is the flat sequence of (tile, chunk) units cut into equal
 *    contiguous ranges: G = #tiles is the plain one-launch case, G = #tiles x
 *    s is split-K, anything else is stream-K. A CTA whose range covers a
 *    whole tile stores C directly; a partial tile writes fp32 partials to the
 *    workspace (two slots per CTA: first and last segment), and the CTA that
 *    arrives last on the tile's counter sums them in CTA order (past 4096
 *    tiles, without counters, a second kernel does). Everything is in a fixed
 *    order: the bytes of C are reproducible run to run for a given device.
 * supports(): sm >= 80, ab F16/BF16, c F16/BF16/F32, trans_a = N,
 * trans_b = T, m <= the tile's m, a and b 16-byte aligned, lda and ldb
 * multiples of 8, k % 8 == 0 (so a lane's 16 bytes are all inside k or all
 * past it), k and lda <= 2^24 (32-bit indices), c aligned to its element.
 * Ragged n and m are masked.
 *
 * decode_realign_m8..m64: the same kernel reading rows that are off 16 bytes
 * (odd k with ld = k, odd ld, bases off 16 bytes) in place, with 16-byte
 * loads on the 16-byte grid realigned in registers (decode_mma_realign, and
 * at m16 decode_mma_realign_rr); supports() asks a and b only to be on their
 * element, and any k and ld. On those rows the L2::256B hint and the way
 * chunks are dealt to warps decide how many DRAM bytes the kernel reads
 * (H100, P223: 1.11x to 1.65x the weight), so the form is chosen per m tile.
 * From m16 up an x off the grid is first copied onto it in the workspace,
 * so that only the weight is realigned (x's m rows are re-read by every
 * warp for every chunk; P224).
 */
#include <stdint.h>
#include <string.h>

#include "cuda/common/cuda_common.cuh"
#include "cuda/common/ptx_sm80.cuh"
#include "cuda/gemm/gemm_kernels.h"
#include "cuda/gemm/gemm_sm90.h" /* cuops_sm90_pack_kmajor: x copied onto the 16-byte grid */

#define DECODE_CHUNK_K 32      /* columns per chunk: two k16 mma steps */
#define DECODE_STRIP_ROWS 16   /* weight rows per strip: the mma's M */
/* Largest k and lda served: keeps every column index and activation offset
 * of the kernel inside a 32-bit int (see supports()). */
#define DECODE_MAX_K ((int64_t)1 << 24)

typedef struct decode_args {
    const uint16_t *a;   /* activations [m, k], lda */
    const uint16_t *b;   /* weight [n, k], ldb */
    void *c;             /* [m, n], ldc */
    float *ws;           /* [ctas][2][tile] partials, or NULL when no tile is split */
    int64_t lda, ldb, ldc;
    int64_t m, n, k;
    float alpha, beta;
    int c_type;          /* cuops_dtype_t */
    int64_t tiles;       /* ceil(n / rows per tile) */
    int64_t chunks;      /* ceil(k / 32) per tile; 0 when k == 0 */
    int64_t total;       /* tiles * chunks */
    int64_t ctas;        /* G: ranges of the flat unit sequence */
    int64_t split;       /* > 0: ctas = tiles * split (aligned split-K); 0: stream-K */
    unsigned *counters;  /* per tile, zero between calls: the last CTA to write a split tile's
                            partials sums them; NULL: decode_fixup_kernel does, after the GEMM */
} decode_args_t;

/* ---- unit ranges ----------------------------------------------------------- */

/* First flat unit of CTA c (c in 0..ctas; cta_start(ctas) == total). Split-K
 * gives tile t's K to CTAs t*s .. t*s+s-1 in equal parts; stream-K cuts the
 * whole sequence evenly (ctas <= 2^20 and total <= 2^40 there, so the product
 * fits in 64 bits). */
static __device__ __forceinline__ int64_t cta_start(const decode_args_t &p, int64_t c)
{
    if (p.split > 0) {
        const int64_t tile = c / p.split, part = c - tile * p.split;
        return tile * p.chunks + (part * p.chunks) / p.split;
    }
    return (c * p.total) / p.ctas;
}

/* ---- loads --------------------------------------------------------------- */

/* 16 bytes of weight, read once: not allocated in L1, with the L2::256B
 * (HINT = 256) or L2::128B (128) prefetch or none (0). Zero when !valid (the
 * predicate keeps the lane off memory it must not touch). The hint pays where the warps of a CTA read a
 * row's 64-byte pieces side by side (decode_mma_aligned); where each warp
 * reads its own run of a row, the 256-byte block it fetches reaches into the
 * previous warp's run, read much later, and the kernel read 1.41x the weight
 * from DRAM (P223: decode_realign_m8 drops it). */
#define DECODE_LOAD_WEIGHT_ASM(L2_HINT)                                                 \
    "{\n"                                                                             \
    " .reg .pred p;\n"                                                                \
    " setp.ne.b32 p, %5, 0;\n"                                                        \
    " mov.b32 %0, 0; mov.b32 %1, 0; mov.b32 %2, 0; mov.b32 %3, 0;\n"                  \
    " @p ld.global.nc.L1::no_allocate" L2_HINT ".v4.u32 {%0, %1, %2, %3}, [%4];\n"    \
    "}\n"
template <int HINT>
static __device__ __forceinline__ uint4 load_weight_16_hinted(const uint16_t *ptr, bool valid)
{
    uint4 v;
    if (HINT == 256)
        asm volatile(DECODE_LOAD_WEIGHT_ASM(".L2::256B")
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(ptr), "r"((int)valid));
    else if (HINT == 128)
        asm volatile(DECODE_LOAD_WEIGHT_ASM(".L2::128B")
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(ptr), "r"((int)valid));
    else
        asm volatile(DECODE_LOAD_WEIGHT_ASM("")
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(ptr), "r"((int)valid));
    return v;
}

static __device__ __forceinline__ uint4 load_weight_16(const uint16_t *ptr, bool valid)
{
    return load_weight_16_hinted<256>(ptr, valid);
}

/* How a decode kernel reads its operands (template parameter FORM): rows on
 * 16 bytes with chunks dealt round-robin to the warps (decode_mma_aligned),
 * or rows anywhere, realigned, each warp taking a contiguous run of chunks
 * (decode_mma_realign) or chunks dealt round-robin (decode_mma_realign_rr),
 * with an L2 prefetch of HINT = 0, 128 or 256 bytes on the weight loads.
 * DECODE_FORM_XGRID added to a realigning form: x's rows on the 16-byte grid
 * (the launch copies them there first where they are not), so only the
 * weight is realigned. */
#define DECODE_FORM_ALIGNED 0
#define DECODE_FORM_RUNS(HINT) (1000 + (HINT))
#define DECODE_FORM_RR(HINT) (2000 + (HINT))
#define DECODE_FORM_XGRID 10000
#define DECODE_FORM_KIND(FORM) (((FORM) / 1000) % 10) /* 0 aligned, 1 runs, 2 round-robin */
#define DECODE_FORM_HINT(FORM) ((FORM) % 1000)

/* 16 bytes of activations: cached in L1, where every warp of the CTA (and the
 * other CTAs on the SM working on the same K) finds them again. */
static __device__ __forceinline__ uint4 load_act_16(const uint16_t *ptr, bool valid)
{
    uint4 v;
    asm volatile(
        "{\n"
        " .reg .pred p;\n"
        " setp.ne.b32 p, %5, 0;\n"
        " mov.b32 %0, 0; mov.b32 %1, 0; mov.b32 %2, 0; mov.b32 %3, 0;\n"
        " @p ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n"
        "}\n"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(ptr), "r"((int)valid));
    return v;
}

/* ---- epilogue ------------------------------------------------------------ */

/* C[row, col] = alpha * sum + beta * C[row, col]; beta == 0 never reads C. */
static __device__ __forceinline__ void store_c(const decode_args_t &p, int64_t row, int64_t col,
                                               float sum)
{
    const int64_t off = row * p.ldc + col;
    float v = p.alpha * sum;
    if (p.c_type == CUOPS_DTYPE_F32) {
        float *c = (float *)p.c + off;
        if (p.beta != 0.0f) v += p.beta * *c;
        *c = v;
    } else if (p.c_type == CUOPS_DTYPE_F16) {
        __half *c = (__half *)p.c + off;
        if (p.beta != 0.0f) v += p.beta * __half2float(*c);
        *c = __float2half_rn(v);
    } else {
        __nv_bfloat16 *c = (__nv_bfloat16 *)p.c + off;
        if (p.beta != 0.0f) v += p.beta * __bfloat162float(*c);
        *c = __float2bfloat16_rn(v);
    }
}

/* ---- realigned reads (the decode_realign kernels) ------------------------- */

/* The first n_ok (<= 8) elements at ptr, zero after them, read one by one (ptr
 * anywhere on 2 bytes; nothing past them is touched). */
static __device__ __forceinline__ uint4 load_elements(const uint16_t *ptr, int n_ok)
{
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const uint32_t lo = 2 * i < n_ok ? (uint32_t)__ldg((const unsigned short *)ptr + 2 * i) : 0u;
        const uint32_t hi =
            2 * i + 1 < n_ok ? (uint32_t)__ldg((const unsigned short *)ptr + 2 * i + 1) : 0u;
        w[i] = lo | hi << 16;
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

/* The 8 halves that start `mis` halves into the 16 halves lo:hi (lo.x's low
 * half first, as in memory): two rounds of word selects by the bits of
 * mis / 2, then a byte permute that moves by one half when mis is odd. */
static __device__ __forceinline__ uint4 realign_halves(uint4 lo, uint4 hi, int mis)
{
    const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    const bool by1 = (mis & 2) != 0, by2 = (mis & 4) != 0;
    const uint32_t sel = (mis & 1) ? 0x5432u : 0x3210u;
    uint32_t u[7], v[5];
#pragma unroll
    for (int j = 0; j < 7; j++) u[j] = by1 ? w[j + 1] : w[j];
#pragma unroll
    for (int j = 0; j < 5; j++) v[j] = by2 ? u[j + 2] : u[j];
    return make_uint4(__byte_perm(v[0], v[1], sel), __byte_perm(v[1], v[2], sel),
                      __byte_perm(v[2], v[3], sel), __byte_perm(v[3], v[4], sel));
}

/* ---- the GEMM ------------------------------------------------------------ */

/* Weight row of lane (g, r, hh) in tile `tile`, clamped to n-1: a row past
 * n only feeds its own output row, which is never stored, so it may read any
 * valid row and needs no predicate. */
template <int R>
static __device__ __forceinline__ int64_t decode_weight_row(const decode_args_t &p, int64_t tile,
                                                           int r, int hh, int g)
{
    const int64_t row = tile * (DECODE_STRIP_ROWS * R) + 16 * r + 8 * hh + g;
    return row < p.n ? row : p.n - 1;
}

/* Activation row 8i + g, clamped to m-1 like the weight rows (a row past m
 * only feeds an output column that is never stored). */
static __device__ __forceinline__ int decode_act_row(const decode_args_t &p, int i, int g)
{
    return 8 * i + g < (int)p.m ? 8 * i + g : (int)p.m - 1;
}

/*
 * One segment (chunks c0..c1-1 of one tile) into acc, operands on 16 bytes:
 * every warp takes chunks c0 + warp, c0 + warp + W, ...
 */
template <typename T, int M8, int R, int U, int W>
static __device__ __forceinline__ void decode_mma_aligned(const decode_args_t &p, int64_t tile,
                                                          int64_t c0, int64_t c1, int warp,
                                                          int g, int t, float (&acc)[R][M8][4])
{
    /* Start of this lane's weight rows (decode_weight_row). Column 0 of
     * the row: the lane's column (its 8t included) is added once, below,
     * from col_first. */
    const uint16_t *wrow[R][2];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++)
            wrow[r][hh] = p.b + decode_weight_row<R>(p, tile, r, hh, g) * p.ldb;
    /* Activation rows (decode_act_row). Element offsets fit in 32 bits:
     * supports() bounds lda (and so 63 * lda < 2^31). */
    int a_off[M8];
#pragma unroll
    for (int i = 0; i < M8; i++) a_off[i] = decode_act_row(p, i, g) * (int)p.lda;

    /* Column of this lane's 8 elements in the warp's chunk j is
     * col_first + j*col_step; it is valid iff it is below col_end
     * (chunks past the segment start at c1*32 or later). Every load
     * address below is row start + exactly that column, the value
     * its predicate tests, for weight and activations alike; with
     * k % 8 == 0 the 8 elements are then all inside k or all past
     * it. Addresses advance by col_step elements per chunk: within
     * the unrolled slot loop they become immediate offsets of one
     * base register. A predicated-off load never touches its
     * address. The ints cannot overflow: supports() bounds k by
     * DECODE_MAX_K, and the largest value formed, col_next after the
     * last refill, is below k + (U + 2) * col_step. */
    const int nseg = (int)(c1 - c0);
    const int count = nseg > warp ? (nseg - warp + W - 1) / W : 0;
    const int col_step = W * DECODE_CHUNK_K;
    const int col_first = (int)(c0 + warp) * DECODE_CHUNK_K + 8 * t;
    const int col_end = (int)min(p.k, c1 * DECODE_CHUNK_K);

    uint4 buf[U][R][2];
#pragma unroll
    for (int s = 0; s < U; s++) {
        const bool in = col_first + s * col_step < col_end;
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int hh = 0; hh < 2; hh++)
                buf[s][r][hh] =
                    load_weight_16(wrow[r][hh] + col_first + s * col_step, in);
    }
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++) wrow[r][hh] += col_first + U * col_step;

    int col = col_first;                     /* chunk being multiplied */
    int col_next = col_first + U * col_step; /* chunk being refilled */
    const uint16_t *xp = p.a + col_first;
#pragma unroll 1
    for (int j0 = 0; j0 < count; j0 += U) {
#pragma unroll
        for (int s = 0; s < U; s++) {
            if (j0 + s >= count) break; /* warp-uniform */
            /* past k (last chunk) x must be 0 too: padding may be NaN */
            const bool x_in = col < col_end;
            uint4 xa[M8];
#pragma unroll
            for (int i = 0; i < M8; i++) xa[i] = load_act_16(xp + a_off[i], x_in);
#pragma unroll
            for (int step = 0; step < 2; step++) {
#pragma unroll
                for (int r = 0; r < R; r++) {
                    const uint4 lo = buf[s][r][0], hi = buf[s][r][1];
                    uint32_t af[4];
                    af[0] = step ? lo.z : lo.x; /* row g,   k 2t..2t+1  */
                    af[1] = step ? hi.z : hi.x; /* row g+8, k 2t..2t+1  */
                    af[2] = step ? lo.w : lo.y; /* row g,   k 2t+8..2t+9 */
                    af[3] = step ? hi.w : hi.y; /* row g+8, k 2t+8..2t+9 */
#pragma unroll
                    for (int i = 0; i < M8; i++) {
                        uint32_t bf[2];
                        bf[0] = step ? xa[i].z : xa[i].x;
                        bf[1] = step ? xa[i].w : xa[i].y;
                        cuops_mma_m16n8k16<T>::run(acc[r][i], af, bf);
                    }
                }
            }
            /* refill this slot with chunk j + U */
            const bool in = col_next < col_end;
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    buf[s][r][hh] = load_weight_16(wrow[r][hh], in);
                    wrow[r][hh] += col_step;
                }
            col += col_step;
            col_next += col_step;
            xp += col_step;
        }
    }
}

/*
 * The same segment with operand rows anywhere on 2 bytes (odd k, odd leading
 * dimensions, bases off 16 bytes), read in place. Every load is a 16-byte
 * block on the 16-byte grid; a row that starts `mis` elements past that grid
 * has the lane's 8 columns 8t..8t+7 of a chunk at offsets mis..mis+7 of its
 * own block and the next one.
 *  - Weight: lane (g, t) loads block t of the chunk in each of its rows and
 *    receives block t+1 from lane t+1 by shuffle; lane 3's block t+1 is
 *    block 0 of the next chunk, which is why each warp takes a contiguous
 *    run of chunks (not every W-th): that block is already in the lane-0
 *    slot of the register pipeline, one chunk ahead, and only the chunk past
 *    the run costs an extra 16-byte load. The weight bytes are read once.
 *  - Activations (re-read from L1 by every warp): each lane loads both of
 *    its blocks, the second only where the row is off the grid.
 *  - Chunks below c_safe = (k - 8) / 32 touch no block past column k - 1 of
 *    the operands' last rows: they run in the register pipeline with no
 *    bounds tests. The rest (at most two chunks at the end of K) run one at
 *    a time: there a block that would pass an operand's last element is read
 *    element by element (the allocation may end there), and the lane's
 *    columns from k on are zeroed in both operands (they hold the next row
 *    or NaN padding).
 */
/* Both k16 steps of one chunk for activation row block i: wa holds the
 * lane's 8 columns of its weight rows (g, g+8 of each strip), xa of its
 * activation row. */
template <typename T, int M8, int R>
static __device__ __forceinline__ void realign_mma_row(const uint4 (&wa)[R][2], uint4 xa, int i,
                                                       float (&acc)[R][M8][4])
{
#pragma unroll
    for (int step = 0; step < 2; step++) {
        uint32_t bf[2];
        bf[0] = step ? xa.z : xa.x;
        bf[1] = step ? xa.w : xa.y;
#pragma unroll
        for (int r = 0; r < R; r++) {
            uint32_t af[4];
            af[0] = step ? wa[r][0].z : wa[r][0].x;
            af[1] = step ? wa[r][1].z : wa[r][1].x;
            af[2] = step ? wa[r][0].w : wa[r][0].y;
            af[3] = step ? wa[r][1].w : wa[r][1].y;
            cuops_mma_m16n8k16<T>::run(acc[r][i], af, bf);
        }
    }
}

/* The activations of one chunk against the lane's realigned weight columns
 * wa: one activation row at a time, its blocks realigned (unless XGRID: the
 * rows on the 16-byte grid, one block each), feeds both k16 steps (only one
 * row's registers live); col is the lane's first column. */
template <typename T, int M8, int R, bool XGRID>
static __device__ __forceinline__ void realign_mma_x(const decode_args_t &p, const uint4 (&wa)[R][2],
                                                     const int (&xoff)[M8], const int (&xmis)[M8],
                                                     int col, float (&acc)[R][M8][4])
{
#pragma unroll
    for (int i = 0; i < M8; i++) {
        const uint16_t *xb = p.a + xoff[i] + col;
        const uint4 b1 = load_act_16(xb, true);
        if (XGRID) {
            realign_mma_row<T, M8, R>(wa, b1, i, acc);
        } else {
            const uint4 b2 = load_act_16(xb + 8, xmis[i] > 0);
            realign_mma_row<T, M8, R>(wa, realign_halves(b1, b2, xmis[i]), i, acc);
        }
    }
}

/* The lane's 8 weight columns of a chunk: its own block `lo` and the next
 * one, which lane t + 1 of the quad holds in `give` (lane 3 takes `own_hi`). */
template <int R>
static __device__ __forceinline__ void realign_weight(const uint4 (&lo)[R][2], const uint4 (&give)[R][2],
                                                      const uint4 (&own_hi)[R][2], bool use_own,
                                                      const int (&wmis)[R][2], int src_lane,
                                                      uint4 (&wa)[R][2])
{
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            uint4 got;
            got.x = __shfl_sync(0xffffffffu, give[r][hh].x, src_lane);
            got.y = __shfl_sync(0xffffffffu, give[r][hh].y, src_lane);
            got.z = __shfl_sync(0xffffffffu, give[r][hh].z, src_lane);
            got.w = __shfl_sync(0xffffffffu, give[r][hh].w, src_lane);
            wa[r][hh] = realign_halves(lo[r][hh], use_own ? own_hi[r][hh] : got, wmis[r][hh]);
        }
}

/* One chunk of the pipeline: the lane's weight blocks `cur` and the lane-0
 * blocks of the next chunk `ahead` (already loaded), its activations loaded
 * here; col is the lane's first column. */
template <typename T, int M8, int R, bool XGRID>
static __device__ __forceinline__ void realign_chunk(const decode_args_t &p, const uint4 (&cur)[R][2],
                                                     const uint4 (&ahead)[R][2],
                                                     const int (&wmis)[R][2], const int (&xoff)[M8],
                                                     const int (&xmis)[M8], int col, int t,
                                                     int src_lane, float (&acc)[R][M8][4])
{
    uint4 give[R][2], wa[R][2];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++) give[r][hh] = t == 0 ? ahead[r][hh] : cur[r][hh];
    realign_weight<R>(cur, give, cur, false, wmis, src_lane, wa);
    realign_mma_x<T, M8, R, XGRID>(p, wa, xoff, xmis, col, acc);
}

/* A chunk at the end of K (past c_safe): each lane reads its own 8 columns
 * element by element, those from col_end on as zero. */
template <typename T, int M8, int R>
static __device__ __forceinline__ void realign_tail_chunk(const decode_args_t &p, int64_t tile, int g,
                                                          const int (&xoff)[M8], const int (&xmis)[M8],
                                                          int col, int col_end, float (&acc)[R][M8][4])
{
    const int nv = min(8, col_end - col);
    uint4 wa[R][2];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++)
            wa[r][hh] = load_elements(p.b + decode_weight_row<R>(p, tile, r, hh, g) * p.ldb + col, nv);
#pragma unroll
    for (int i = 0; i < M8; i++)
        realign_mma_row<T, M8, R>(wa, load_elements(p.a + xoff[i] + xmis[i] + col, nv), i, acc);
}

/* A realigning segment's rows: each weight row's offset from the 16-byte grid
 * (rows clamped to n - 1 as in the aligned kernel) and the lane's block at its
 * first column col0; each activation row's offset and column 0's block
 * relative to p.a. */
template <int M8, int R>
static __device__ __forceinline__ void realign_rows(const decode_args_t &p, int64_t tile, int g,
                                                    int col0, const uint16_t *(&wnext)[R][2],
                                                    int (&wmis)[R][2], int (&xoff)[M8],
                                                    int (&xmis)[M8])
{
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            const uint16_t *rowp = p.b + decode_weight_row<R>(p, tile, r, hh, g) * p.ldb;
            wmis[r][hh] = (int)(((uintptr_t)rowp >> 1) & 7);
            wnext[r][hh] = rowp + (col0 - wmis[r][hh]);
        }
#pragma unroll
    for (int i = 0; i < M8; i++) {
        const int row = decode_act_row(p, i, g);
        xmis[i] = (int)(((uintptr_t)(p.a + row * p.lda) >> 1) & 7);
        xoff[i] = row * (int)p.lda - xmis[i];
    }
}

/* A pipeline slot: the lane's weight blocks of chunk jn of the warp's run
 * (relative to its first), loaded where the warp multiplies that chunk in
 * the pipeline (jn < count_main) or, for lane 0 of a row off the grid, where
 * it is the chunk after the last one there (lane 3's next block; it starts
 * below column k - 8, so it is whole); then wnext moves on one chunk. */
template <int R, int HINT>
static __device__ __forceinline__ void realign_load_slot(uint4 (&slot)[R][2],
                                                         const uint16_t *(&wnext)[R][2],
                                                         const int (&wmis)[R][2], int jn,
                                                         int count_main, int t)
{
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            const bool want = jn < count_main || (jn == count_main && t == 0 && wmis[r][hh] > 0);
            slot[r][hh] = load_weight_16_hinted<HINT>(wnext[r][hh], want);
            wnext[r][hh] += DECODE_CHUNK_K;
        }
}

template <typename T, int M8, int R, int U, int W, int HINT, bool XGRID>
static __device__ __forceinline__ void decode_mma_realign(const decode_args_t &p, int64_t tile,
                                                          int64_t c0, int64_t c1, int warp,
                                                          int g, int t, float (&acc)[R][M8][4])
{
    static_assert(U >= 2, "lane 3 reads the next chunk's slot");
    const int nseg = (int)(c1 - c0);
    const int lo = (int)c0 + (warp * nseg) / W;
    const int count = (int)c0 + ((warp + 1) * nseg) / W - lo;
    const int c_safe = p.k >= 8 ? (int)((p.k - 8) / DECODE_CHUNK_K) : 0;
    const int count_main = min(count, max(0, c_safe - lo));
    const int col_end = (int)min(p.k, c1 * DECODE_CHUNK_K);
    const int col0 = lo * DECODE_CHUNK_K + 8 * t; /* the lane's columns in its first chunk */
    const int src_lane = 4 * g + ((t + 1) & 3);

    const uint16_t *wnext[R][2];
    int wmis[R][2], xoff[M8], xmis[M8];
    realign_rows<M8, R>(p, tile, g, col0, wnext, wmis, xoff, xmis);

    /* The pipeline over chunks lo .. lo + count_main - 1 (realign_load_slot) */
    if (count_main > 0) {
        int col = col0; /* the lane's first column in the chunk being multiplied */
        uint4 buf[U][R][2];
        int jn = 0; /* next chunk to load, relative to lo */
#pragma unroll
        for (int s = 0; s < U; s++) realign_load_slot<R, HINT>(buf[s], wnext, wmis, jn++, count_main, t);
#pragma unroll 1
        for (int j0 = 0; j0 < count_main; j0 += U) {
#pragma unroll
            for (int s = 0; s < U; s++) {
                if (j0 + s >= count_main) break; /* warp-uniform: the shuffles need every lane */
                realign_chunk<T, M8, R, XGRID>(p, buf[s], buf[(s + 1) % U], wmis, xoff, xmis, col,
                                               t, src_lane, acc);
                /* refill this slot with chunk jn = j0 + s + U */
                realign_load_slot<R, HINT>(buf[s], wnext, wmis, jn++, count_main, t);
                col += DECODE_CHUNK_K;
            }
        }
    }

    /* The tail (at most two chunks at the end of K) */
#pragma unroll 1
    for (int j = count_main; j < count; j++)
        realign_tail_chunk<T, M8, R>(p, tile, g, xoff, xmis, col0 + j * DECODE_CHUNK_K, col_end, acc);
}

/*
 * The realigning segment with its chunks (decode_realign_m16's form)
 * dealt round-robin as in decode_mma_aligned (warp w: chunks c0 + w,
 * c0 + w + W, ...), so that the W warps of a CTA read adjacent 64-byte
 * pieces of each row at the same time (the run form has them W runs apart).
 * Lane t's block t + 1 comes from lane t + 1 by shuffle; lane 3's, block 0
 * of the next chunk (another warp's), it loads itself, one chunk ahead of
 * its use: an extra 16-byte load per row and chunk for lane 3, which the
 * other warp's load of the same bytes has mostly brought into L2.
 */
template <typename T, int M8, int R, int U, int W, int HINT, bool XGRID>
static __device__ __forceinline__ void decode_mma_realign_rr(const decode_args_t &p, int64_t tile,
                                                             int64_t c0, int64_t c1, int warp,
                                                             int g, int t, float (&acc)[R][M8][4])
{
    const int nseg = (int)(c1 - c0);
    const int count = nseg > warp ? (nseg - warp + W - 1) / W : 0;
    const int first = (int)c0 + warp; /* chunk j of the warp is first + j * W */
    const int c_safe = p.k >= 8 ? (int)((p.k - 8) / DECODE_CHUNK_K) : 0;
    const int count_main = min(count, max(0, (c_safe - first + W - 1) / W));
    const int col_end = (int)min(p.k, c1 * DECODE_CHUNK_K);
    const int col_step = W * DECODE_CHUNK_K;
    const int col0 = first * DECODE_CHUNK_K + 8 * t;
    const int src_lane = 4 * g + ((t + 1) & 3);

    const uint16_t *wnext[R][2];
    int wmis[R][2], xoff[M8], xmis[M8];
    realign_rows<M8, R>(p, tile, g, col0, wnext, wmis, xoff, xmis);

    if (count_main > 0) {
        uint4 buf[U][R][2], ext[R][2];
#pragma unroll
        for (int s = 0; s < U; s++)
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
                for (int hh = 0; hh < 2; hh++)
                    buf[s][r][hh] = load_weight_16_hinted<HINT>(wnext[r][hh] + s * col_step, s < count_main);
        /* lane 3's next block for chunk 0: 8 elements past its own */
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                ext[r][hh] = load_weight_16_hinted<HINT>(wnext[r][hh] + 8, t == 3 && wmis[r][hh] > 0);
                wnext[r][hh] += U * col_step;
            }
        int col = col0;
#pragma unroll 1
        for (int j0 = 0; j0 < count_main; j0 += U) {
#pragma unroll
            for (int s = 0; s < U; s++) {
                const int j = j0 + s;
                if (j >= count_main) break; /* warp-uniform: the shuffles need every lane */
                uint4 wa[R][2];
                realign_weight<R>(buf[s], buf[s], ext, t == 3, wmis, src_lane, wa);
                /* lane 3's block for chunk j + 1 (wnext is at chunk j + U), and
                 * this slot refilled with chunk j + U */
#pragma unroll
                for (int r = 0; r < R; r++)
#pragma unroll
                    for (int hh = 0; hh < 2; hh++) {
                        ext[r][hh] = load_weight_16_hinted<HINT>(wnext[r][hh] - (U - 1) * col_step + 8,
                                                    t == 3 && wmis[r][hh] > 0 && j + 1 < count_main);
                        buf[s][r][hh] = load_weight_16_hinted<HINT>(wnext[r][hh], j + U < count_main);
                        wnext[r][hh] += col_step;
                    }
                realign_mma_x<T, M8, R, XGRID>(p, wa, xoff, xmis, col, acc);
                col += col_step;
            }
        }
    }

#pragma unroll 1
    for (int j = count_main; j < count; j++)
        realign_tail_chunk<T, M8, R>(p, tile, g, xoff, xmis, col0 + j * col_step, col_end, acc);
}

/*
 * A split tile's sum: the partials of CTAs first_cta..last_cta (each wrote
 * the tile to slot 0 if it was the CTA's first segment, else slot 1), added
 * in CTA order, stored to C. NT threads, each with TILE / NT elements (at
 * least one); each CTA's slot is found once for all of them (cta_start's
 * 64-bit divisions per element and CTA took the m32 fix-up to 9.5 us at
 * 32 x 14336 x 4095, H100 ncu, P224 call 10). The partials are read past L1:
 * other SMs wrote them during the same launch.
 */
template <int TILE_N, int TILE_M, int NT>
static __device__ __forceinline__ void decode_sum_tile(const decode_args_t &p, int64_t tile,
                                                       int64_t first_cta, int64_t last_cta, int tid)
{
    constexpr int TILE = TILE_N * TILE_M;
    constexpr int PER_THREAD = (TILE + NT - 1) / NT;
    static_assert(NT % TILE_N == 0, "a thread keeps its n row");
    /* element tid + NT i: n row tid % TILE_N, m column tid / TILE_N + (NT / TILE_N) i */
    const int nrow = tid % TILE_N, mcol0 = tid / TILE_N;
    const bool row_in = tile * TILE_N + nrow < p.n;
    float sum[PER_THREAD];
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) sum[i] = 0.0f;
    for (int64_t c = first_cta; c <= last_cta; c++) {
        const int slot = (cta_start(p, c) / p.chunks == tile) ? 0 : 1;
        const float *part = p.ws + (c * 2 + slot) * TILE + tid;
#pragma unroll
        for (int i = 0; i < PER_THREAD; i++)
            if (row_in && mcol0 + (NT / TILE_N) * i < p.m) sum[i] += __ldcg(part + NT * i);
    }
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) {
        const int mcol = mcol0 + (NT / TILE_N) * i;
        if (row_in && mcol < p.m) store_c(p, mcol, tile * TILE_N + nrow, sum[i]);
    }
}

/*
 * W warps per CTA; a tile is R strips (16R weight rows) by 8*M8 activation
 * rows; U chunks in flight per warp. Per CTA: walk its unit range segment by
 * segment (a segment = the part of one tile's K inside the range); per
 * segment the warps multiply their chunks (decode_mma_aligned, or
 * decode_mma_realign or decode_mma_realign_rr by FORM), then their sums meet
 * in shared memory.
 */
template <typename T, int M8, int R, int U, int W, int MIN_BLOCKS, int FORM>
__global__ void __launch_bounds__(W * 32, MIN_BLOCKS) decode_splitk_kernel(decode_args_t p)
{
    constexpr int TILE_N = DECODE_STRIP_ROWS * R;
    constexpr int TILE_M = 8 * M8;
    constexpr int TILE = TILE_N * TILE_M;
    /* [warp][m col][n row], row padded by 4 floats: a lane (g, t) writes
     * n = g (+8), m = 2t (+1), so the 32 lanes of one store hit
     * 2t*(TILE_N+4) + g = banks {0,8,16,24} + g: conflict-free; the summing
     * pass reads consecutive n rows. */
    __shared__ float red[W][TILE_M][TILE_N + 4];

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;

#pragma unroll 1
    for (int64_t cta = blockIdx.x; cta < p.ctas; cta += gridDim.x) {
        int64_t u = 0, u_end = 0;
        if (p.chunks > 0) {
            u = cta_start(p, cta);
            u_end = cta_start(p, cta + 1);
            if (u >= u_end) continue; /* never with ctas <= total; CTA-uniform */
        }
        bool first = true;
        do {
            int64_t tile, c0, c1;
            if (p.chunks == 0) { /* k == 0: C = beta * C, one tile per CTA */
                tile = cta;
                c0 = c1 = 0;
            } else {
                tile = u / p.chunks;
                c0 = u - tile * p.chunks;
                c1 = min(p.chunks, c0 + (u_end - u));
            }
            const bool full = (c0 == 0 && c1 == p.chunks);

            float acc[R][M8][4];
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
                for (int i = 0; i < M8; i++)
                    acc[r][i][0] = acc[r][i][1] = acc[r][i][2] = acc[r][i][3] = 0.0f;
            if (DECODE_FORM_KIND(FORM) == 1)
                decode_mma_realign<T, M8, R, U, W, DECODE_FORM_HINT(FORM),
                                   (FORM >= DECODE_FORM_XGRID)>(p, tile, c0, c1, warp, g, t, acc);
            else if (DECODE_FORM_KIND(FORM) == 2)
                decode_mma_realign_rr<T, M8, R, U, W, DECODE_FORM_HINT(FORM),
                                      (FORM >= DECODE_FORM_XGRID)>(p, tile, c0, c1, warp, g, t, acc);
            else
                decode_mma_aligned<T, M8, R, U, W>(p, tile, c0, c1, warp, g, t, acc);

            /* acc[r][i][q]: n row 16r + g + 8(q>>1), m col 8i + 2t + (q&1) */
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
                for (int i = 0; i < M8; i++)
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        red[warp][8 * i + 2 * t + (q & 1)][16 * r + g + 8 * (q >> 1)] =
                            acc[r][i][q];
            __syncthreads();

            const int slot = first ? 0 : 1;
            for (int e = threadIdx.x; e < TILE; e += W * 32) {
                const int mcol = e / TILE_N, nrow = e - mcol * TILE_N;
                const int64_t ncol = tile * TILE_N + nrow;
                if (mcol >= p.m || ncol >= p.n) continue;
                float sum = red[0][mcol][nrow];
#pragma unroll
                for (int w = 1; w < W; w++) sum += red[w][mcol][nrow];
                if (full)
                    store_c(p, mcol, ncol, sum);
                else
                    p.ws[(cta * 2 + slot) * TILE + e] = sum;
            }
            if (!full && p.counters) {
                /* arrive on the tile; the CTA that arrives last sums its
                 * partials (every covering CTA writes one segment of it) */
                __shared__ int last_in;
                __shared__ int64_t cover[2];
                __threadfence();
                __syncthreads();
                if (threadIdx.x == 0) {
                    const int64_t tile_begin = tile * p.chunks, tile_end = tile_begin + p.chunks;
                    int64_t lo = cta, hi = cta;
                    while (lo > 0 && cta_start(p, lo) > tile_begin) lo--;
                    while (hi + 1 < p.ctas && cta_start(p, hi + 1) < tile_end) hi++;
                    const unsigned arrived = atomicAdd(&p.counters[tile], 1u) + 1u;
                    last_in = arrived == (unsigned)(hi - lo + 1);
                    if (last_in) p.counters[tile] = 0u; /* no arrival left: zero for the next call */
                    cover[0] = lo;
                    cover[1] = hi;
                }
                __syncthreads();
                if (last_in) {
                    __threadfence();
                    decode_sum_tile<TILE_N, TILE_M, W * 32>(p, tile, cover[0], cover[1], threadIdx.x);
                }
            }
            __syncthreads(); /* red is rewritten by the next segment */

            u += c1 - c0;
            first = false;
        } while (u < u_end);
    }
}

/*
 * Split tiles without arrival counters: the CTA that holds a tile's last
 * unit (and started inside the tile) sums the partials of every CTA that
 * covered it.
 */
template <int TILE_N, int TILE_M>
__global__ void __launch_bounds__(128) decode_fixup_kernel(decode_args_t p)
{
    static_assert((TILE_N * TILE_M) % 128 == 0, "a tile is 16 R x 8 M8 elements");
    for (int64_t cta = blockIdx.x; cta < p.ctas; cta += gridDim.x) {
        const int64_t u0 = cta_start(p, cta), u1 = cta_start(p, cta + 1);
        const int64_t tile = u0 / p.chunks;
        const int64_t tile_begin = tile * p.chunks;
        if (u0 == tile_begin || tile_begin + p.chunks > u1) continue; /* owns nothing */
        int64_t first_cta = cta;
        while (first_cta > 0 && cta_start(p, first_cta) > tile_begin) first_cta--;
        decode_sum_tile<TILE_N, TILE_M, 128>(p, tile, first_cta, cta, threadIdx.x);
    }
}

/* ---- plan and launch ------------------------------------------------------ */

/* Bytes in flight HBM needs, per SM: Little's law with margin (see header). */
#define DECODE_INFLIGHT_PER_SM (32 * 1024)
#define DECODE_MAX_SPLIT 4096
#define DECODE_STREAMK_MAX_TOTAL ((int64_t)1 << 40)
#define DECODE_STREAMK_MAX_CTAS ((int64_t)1 << 20)

typedef struct decode_plan {
    int64_t tiles, chunks, ctas, split;
    int fixup; /* some tile is split across CTAs */
} decode_plan_t;

/*
 * G (number of unit ranges):
 *  - forced split_k = s: G = tiles * s (s clamped to the chunk count);
 *  - tiles >= slots (resident CTAs on the GPU): one tile per CTA, unless the
 *    last partial wave would leave too few bytes in flight or the grid fills
 *    less than 90 % of its waves (then stream-K with G = slots: every CTA
 *    the same work, all resident, no tail). H200, m = 1: n x k = 14336 x 4096
 *    ran plain as 896 CTAs = 3.4 waves of 264 in 41.8 us, 4096 x 14336 (the
 *    same bytes, 256 CTAs, one wave) in 36.1 us;
 *  - tiles < slots: one tile per CTA if that already covers the SMs and the
 *    bytes in flight; else split K s = slots / tiles ways (one wave, equal
 *    work), keeping at least two chunks per warp; with fill_slots, where
 *    those tiles * s CTAs would fill less than 90 % of the slots, stream-K
 *    with G = slots instead.
 */
static decode_plan_t decode_make_plan(const struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                      const cuops_options_t *opt, int tile_n, int warps,
                                      int64_t cta_inflight, int blocks_per_sm, int fill_slots)
{
    decode_plan_t pl;
    const int64_t sms = h->num_sms > 0 ? h->num_sms : 132;
    const int64_t slots = sms * (blocks_per_sm > 0 ? blocks_per_sm : 1);
    const int64_t need = sms * DECODE_INFLIGHT_PER_SM;
    pl.tiles = cuops_ceil_div(d->n, tile_n);
    pl.chunks = cuops_ceil_div(d->k, DECODE_CHUNK_K);
    pl.ctas = pl.tiles;
    pl.split = 1;
    pl.fixup = 0;
    if (pl.chunks == 0) return pl;
    const int64_t total = pl.tiles * pl.chunks;

    int64_t s = 1;
    if (opt && opt->split_k > 0) {
        s = opt->split_k;
    } else if (pl.tiles >= slots) {
        const int64_t rem = pl.tiles % slots;
        /* whole waves the plain grid runs for, against the work it holds:
         * below 90 % the last wave's idle slots cost more than the fix-up */
        const int64_t waves = cuops_ceil_div(pl.tiles, slots);
        const int ragged = 10 * pl.tiles < 9 * waves * slots;
        if (rem != 0 && (rem * cta_inflight < need || ragged) &&
            total <= DECODE_STREAMK_MAX_TOTAL && slots <= DECODE_STREAMK_MAX_CTAS) {
            pl.ctas = slots; /* stream-K */
            pl.split = 0;
            pl.fixup = !(pl.tiles % pl.ctas == 0);
            return pl;
        }
    } else if (!(pl.tiles >= sms && pl.tiles * cta_inflight >= need)) {
        s = slots / pl.tiles;
        const int64_t cap = pl.chunks / (2 * (int64_t)warps);
        if (s > cap) s = cap;
    }
    if (s > pl.chunks) s = pl.chunks;
    if (s > DECODE_MAX_SPLIT) s = DECODE_MAX_SPLIT;
    if (s > INT32_MAX / pl.tiles) s = INT32_MAX / pl.tiles;
    if (s < 1) s = 1;
    /* fill_slots: a grid of tiles * s CTAs that leaves more than a tenth of
     * the slots empty (one tile per CTA on 132-395 of 396 slots) runs with
     * one or two 4-warp CTAs per SM; stream-K over every slot instead, where
     * each CTA still gets two chunks per warp. */
    if (fill_slots && !(opt && opt->split_k > 0) && pl.tiles < slots &&
        10 * pl.tiles * s < 9 * slots &&
        total >= 2 * (int64_t)warps * slots && total <= DECODE_STREAMK_MAX_TOTAL &&
        slots <= DECODE_STREAMK_MAX_CTAS) {
        pl.ctas = slots;
        pl.split = 0;
        pl.fixup = 1;
        return pl;
    }
    pl.split = s;
    pl.ctas = pl.tiles * s;
    pl.fixup = s > 1;
    return pl;
}

#define DECODE_MAX_DEVICES 64

/*
 * Resident CTAs per SM of one instantiation on the handle's device (current
 * during the call), asked once per device: the answer depends on the
 * device's register file and on the code built for its arch, so a process
 * with two different GPUs must not share it. Devices past the table are
 * asked every call. It only steers the plan, never correctness.
 */
template <typename T, int M8, int R, int U, int W, int MIN_BLOCKS, int FORM>
static int decode_blocks_per_sm(const struct cuops_handle *h)
{
    static int cached[DECODE_MAX_DEVICES]; /* 0: not asked yet on that device */
    const int dev = h->device;
    const bool cacheable = dev >= 0 && dev < DECODE_MAX_DEVICES;
    if (cacheable) {
        const int known = __atomic_load_n(&cached[dev], __ATOMIC_RELAXED);
        if (known > 0) return known;
    }
    int nb = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &nb, decode_splitk_kernel<T, M8, R, U, W, MIN_BLOCKS, FORM>, W * 32, 0) != cudaSuccess ||
        nb < 1) {
        (void)cudaGetLastError();
        return MIN_BLOCKS; /* not cached: the next call asks again */
    }
    if (cacheable) __atomic_store_n(&cached[dev], nb, __ATOMIC_RELAXED);
    return nb;
}

/* opt with split_k = 1 (the call unsplit), in *buf */
static const cuops_options_t *decode_unsplit(const cuops_options_t *opt, cuops_options_t *buf)
{
    if (opt) *buf = *opt;
    else memset(buf, 0, sizeof *buf);
    buf->split_k = 1;
    return buf;
}

/* x's rows on the 16-byte grid: what the XGRID forms read without realigning */
static bool decode_x_on_grid(const cuops_gemm_desc_t *d)
{
    return cuops_aligned(d->a, 16) && d->lda % 8 == 0;
}

template <typename T, int M8, int R, int U, int W, int MIN_BLOCKS, int FORM>
static cuops_status_t decode_launch_typed(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                          const cuops_options_t *opt, const char *name)
{
    constexpr int TILE_N = DECODE_STRIP_ROWS * R, TILE_M = 8 * M8;
    constexpr bool XGRID = FORM >= DECODE_FORM_XGRID;
    constexpr int IN_PLACE = XGRID ? FORM - DECODE_FORM_XGRID : FORM; /* x realigned in place */
    static_assert(!XGRID || DECODE_FORM_KIND(FORM) != 0, "XGRID: a realigning form");
    void (*kernel)(decode_args_t) = decode_splitk_kernel<T, M8, R, U, W, MIN_BLOCKS, FORM>;
    /* x copied onto the grid in the workspace first, unless it is there
     * already (or k == 0); operands inside the handle's workspace (the W4A16
     * dequant-then-GEMM path's dense chunk) would be overwritten, so those
     * calls realign x in place */
    const bool pack_x = XGRID && d->k > 0 && !decode_x_on_grid(d);
    if (pack_x && cuops_cuda_gemm_operands_in_workspace(h, d))
        return decode_launch_typed<T, M8, R, U, W, MIN_BLOCKS, IN_PLACE>(h, d, opt, name);
    const int blocks_per_sm = decode_blocks_per_sm<T, M8, R, U, W, MIN_BLOCKS, FORM>(h);
    const int64_t cta_inflight = (int64_t)W * U * R * DECODE_STRIP_ROWS * DECODE_CHUNK_K * 2;
    /* operands inside the handle's workspace: the split-K partials would
     * overwrite them, so the call runs unsplit */
    cuops_options_t unsplit;
    if (cuops_cuda_gemm_operands_in_workspace(h, d)) opt = decode_unsplit(opt, &unsplit);
    /* The realigning kernels of 4 warps (m32, m64) spend their time issuing
     * (every warp realigns its weight blocks, and in place x's, for every
     * chunk), so their speed follows the warps resident per SM, and one tile
     * per CTA on 256 of 396 slots gives an SM 4 or 8: those fill every slot
     * by stream-K (H100, P224 call 3, x in place: decode_realign_m32 24 x
     * 4096 x 14335 135.5 -> 96.3 us, 32 x 4096 x 14335 176.2 -> 104.6, 32 x
     * 5120 x 4095 55.4 -> 49.1). The others stream the weight near DRAM's
     * pace with fewer CTAs, and the fix-up launch cost them more than the
     * balance gave (decode_splitk_m32 32 x 4096 x 4096 28.5 -> 32.5 us;
     * decode_realign_m8 1 x 3072 x 4095 17.2 -> 21.4, m16 16 x 3072 x 4095
     * 25.7 -> 29.2). With the split tiles summed inside the GEMM (no fix-up
     * launch) the same rule still lost for them: 17.4 -> 20.9 and 25.2 ->
     * 28.9 us (H100, P225 call 5; docs/gemm.md). */
    const int fill_slots = FORM != DECODE_FORM_ALIGNED && W <= 4;
    const decode_plan_t pl =
        decode_make_plan(h, d, opt, TILE_N, W, cta_inflight, blocks_per_sm, fill_slots);

    decode_args_t p;
    memset(&p, 0, sizeof p);
    p.a = (const uint16_t *)d->a;
    p.b = (const uint16_t *)d->b;
    p.c = d->c;
    p.lda = d->lda;
    p.ldb = d->ldb;
    p.ldc = d->ldc;
    p.m = d->m;
    p.n = d->n;
    p.k = d->k;
    p.alpha = d->alpha;
    p.beta = d->beta;
    p.c_type = (int)d->c_type;
    p.tiles = pl.tiles;
    p.chunks = pl.chunks;
    p.total = pl.tiles * pl.chunks;
    p.ctas = pl.ctas;
    p.split = pl.split;
    p.ws = NULL;
    /* the workspace: x's copy (256-byte multiple), the partials, and with a
     * user workspace the tiles' arrival counters (the handle's own are kept
     * zeroed by the handle); past CUOPS_COUNTERS_MAX tiles, no counters: the
     * fix-up kernel sums the split tiles after the GEMM */
    const bool arrive = pl.fixup && pl.tiles <= CUOPS_COUNTERS_MAX;
    const size_t x_bytes = pack_x ? cuops_sm90_packed_bytes(d->m, d->k) : 0;
    const size_t part_bytes = pl.fixup ? (size_t)pl.ctas * 2 * TILE_N * TILE_M * sizeof(float) : 0;
    const size_t count_bytes = arrive ? cuops_cuda_counter_bytes(h, (size_t)pl.tiles) : 0;
    if (x_bytes + part_bytes + count_bytes > 0) {
        void *ws = NULL;
        cuops_status_t st = cuops_cuda_workspace_aligned(h, x_bytes + part_bytes + count_bytes,
                                                         pack_x ? 256 : sizeof(float), &ws);
        if (cuops_cuda_workspace_short(h, st)) {
            /* a user workspace without room for x's copy: realign it in
             * place; without room for the partials of the plan's own split:
             * run unsplit (as the sm90 split-K kernels do) */
            if (pack_x) return decode_launch_typed<T, M8, R, U, W, MIN_BLOCKS, IN_PLACE>(h, d, opt, name);
            if (!(opt && opt->split_k > 1))
                return decode_launch_typed<T, M8, R, U, W, MIN_BLOCKS, FORM>(
                    h, d, decode_unsplit(opt, &unsplit), name);
        }
        if (st != CUOPS_STATUS_SUCCESS) return st;
        if (pack_x) {
            const int64_t ld = cuops_sm90_packed_ld(d->k);
            st = cuops_sm90_pack_kmajor(h, d->a, d->lda, 1, d->m, d->k, ws, ld);
            if (st != CUOPS_STATUS_SUCCESS) return st;
            p.a = (const uint16_t *)ws;
            p.lda = ld;
        }
        if (pl.fixup) p.ws = (float *)((char *)ws + x_bytes);
        if (arrive) {
            st = cuops_cuda_counters(h, (size_t)pl.tiles, (char *)ws + x_bytes + part_bytes,
                                     &p.counters);
            if (st != CUOPS_STATUS_SUCCESS) return st;
        }
    }

    cudaStream_t stream = cuops_stream(h);
    const unsigned grid = (unsigned)(pl.ctas < INT32_MAX ? pl.ctas : INT32_MAX);
    kernel<<<grid, W * 32, 0, stream>>>(p);
    cuops_status_t st = cuops_cuda_check_launch(h, name);
    if (st != CUOPS_STATUS_SUCCESS || !pl.fixup || p.counters) return st;
    decode_fixup_kernel<TILE_N, TILE_M><<<grid, 128, 0, stream>>>(p);
    return cuops_cuda_check_launch(h, name);
}

/* ---- table entries --------------------------------------------------------- */

/* realign: the decode_realign kernels, which read rows anywhere on 2 bytes
 * (any k, lda, ldb; bases on their element); else 16-byte rows only. */
static int decode_supports_m(const struct cuops_handle *h, const cuops_gemm_desc_t *d,
                             int64_t m_tile, int realign)
{
    if (h->sm_major < 8) return 0;
    if (d->ab_type != CUOPS_DTYPE_F16 && d->ab_type != CUOPS_DTYPE_BF16) return 0;
    if (d->c_type != CUOPS_DTYPE_F16 && d->c_type != CUOPS_DTYPE_BF16 &&
        d->c_type != CUOPS_DTYPE_F32)
        return 0;
    if (d->trans_a != CUOPS_OP_N || d->trans_b != CUOPS_OP_T) return 0;
    if (d->m < 1 || d->m > m_tile || d->n < 1 || d->k < 0) return 0;
    /* Column indices and activation offsets (63 rows x lda) are 32-bit ints
     * in the kernel: decline larger k or lda rather than widen them all. The
     * API already asks lda >= k; k is bounded on its own all the same. */
    if (d->k > DECODE_MAX_K || d->lda > DECODE_MAX_K) return 0;
    if (!cuops_aligned(d->c, cuops_dtype_size(d->c_type))) return 0;
    const int rows_on_16 = cuops_aligned(d->b, 16) && d->ldb % 8 == 0;
    const int weight_on_16 = rows_on_16 && d->k % 8 == 0;
    if (realign) {
        /* The weight's rows must need it: with only x off 16 bytes the
         * packed-x paths stream the weight faster (H100, P221 call 1: 16 x
         * 32000 x 4096 lda 4097 98.4 us on sm90_ws_128x256 with x packed,
         * 139.3 here, where every warp realigns x for every chunk). So must
         * they on sm_90 from the m32 tile up where the rows are on 16 bytes
         * and only k % 8 != 0: TMA reads such a weight in place (H100, P224
         * call 8, x off 16 bytes: 32 x 14336 x 4100 with ldb 14344 58.9 us on
         * sm90_ws_128x256_splitk_dsmem against 74.2 on decode_realign_m32,
         * 64 x 14336 x 4100 with ldb 4104 57.9 against 117.5; at m <= 16
         * the realigning kernels were level or faster: 1 x 14336 x 4100
         * 49.9 against 59.8). */
        if (h->sm_major == 9 && m_tile >= 32 && rows_on_16) return 0;
        return !weight_on_16 && cuops_aligned(d->a, 2) && cuops_aligned(d->b, 2);
    }
    if (!weight_on_16 || !cuops_aligned(d->a, 16)) return 0;
    return d->lda % 8 == 0;
}

/*
 * Configurations <kind, realign, m tile, M8, R, U, W, min CTAs/SM>; registers
 * from ptxas -v (sm_90a / sm_80, no spills): splitk m8 119/119, m16 120/121,
 * m32 158/158, m64 214/214 (2 CTAs of 4 warps per SM); realign m8 125/127,
 * m16 128/128 (round-robin), m32 168/168, m64 253/249 (their U is smaller: the realigning
 * registers, and the shuffle that waits on the next chunk, cost a slot of
 * depth; larger U spilled); the fix-up kernel 42/48.
 */
#define DECODE_ENTRY(KIND, FORM, MT, M8, R, U, W, MINB)                                        \
    static int decode_##KIND##_supports_m##MT(const struct cuops_handle *h,                    \
                                              const cuops_gemm_desc_t *d)                      \
    {                                                                                          \
        return decode_supports_m(h, d, MT, FORM != DECODE_FORM_ALIGNED);                       \
    }                                                                                          \
    static cuops_status_t decode_##KIND##_launch_m##MT(                                        \
        struct cuops_handle *h, const cuops_gemm_desc_t *d, const cuops_options_t *opt)        \
    {                                                                                          \
        if (d->ab_type == CUOPS_DTYPE_BF16)                                                    \
            return decode_launch_typed<__nv_bfloat16, M8, R, U, W, MINB, FORM>(                \
                h, d, opt, "decode_" #KIND "_m" #MT);                                          \
        return decode_launch_typed<__half, M8, R, U, W, MINB, FORM>(h, d, opt,                 \
                                                                      "decode_" #KIND "_m" #MT); \
    }

DECODE_ENTRY(splitk, DECODE_FORM_ALIGNED, 8, 1, 1, 8, 8, 2)
DECODE_ENTRY(splitk, DECODE_FORM_ALIGNED, 16, 2, 1, 6, 8, 2)
DECODE_ENTRY(splitk, DECODE_FORM_ALIGNED, 32, 4, 1, 6, 4, 3)
DECODE_ENTRY(splitk, DECODE_FORM_ALIGNED, 64, 8, 1, 4, 4, 2)
/* decode_realign: m8 and m32 read their runs with the L2::128B prefetch (the
 * 256-byte one read 1.41x the weight from DRAM at m8, no prefetch 1.11x;
 * 128 bytes ran fastest on most rows), m16 deals its chunks round-robin
 * with the 256-byte one (3-5 % faster at m = 9-16 though it reads more
 * bytes): the fastest forms on the odd-k rows (H100, P223 calls 5-9); m64
 * the runs with the 256-byte prefetch. From m16 up, x is copied onto the
 * 16-byte grid first, so only the weight is realigned (H100, P224 calls
 * 5-6, against the same kernels realigning x in place: m32 13-27 % faster,
 * m16 2-14 %, m64 36-50 %; at m8 the copy's launch cost more than the one
 * row block it saved: 1 x 14336 x 4095 62.2 -> 66.3 us). */
DECODE_ENTRY(realign, DECODE_FORM_RUNS(128), 8, 1, 1, 5, 8, 2)
DECODE_ENTRY(realign, DECODE_FORM_RR(256) + DECODE_FORM_XGRID, 16, 2, 1, 3, 8, 2)
DECODE_ENTRY(realign, DECODE_FORM_RUNS(128) + DECODE_FORM_XGRID, 32, 4, 1, 4, 4, 3)
DECODE_ENTRY(realign, DECODE_FORM_RUNS(256) + DECODE_FORM_XGRID, 64, 8, 1, 3, 4, 2)
/* study forms (forced only): the runs with the 256-byte hint at m8, m16 and
 * m32 (the decode_realign kernels before P223), the round-robin form without
 * the hint at m16, the runs without it at m8 and m32, the round-robin form
 * with the L2::128B hint at m16 (these realign x in place), and auto's m16,
 * m32 and m64 realigning x in place (decode_realign_xinplace_*: what those
 * run where the workspace cannot hold x's copy) */
DECODE_ENTRY(realign_runs_hint, DECODE_FORM_RUNS(256), 8, 1, 1, 5, 8, 2)
DECODE_ENTRY(realign_runs_hint, DECODE_FORM_RUNS(256), 16, 2, 1, 3, 8, 2)
DECODE_ENTRY(realign_rr_nohint, DECODE_FORM_RR(0), 16, 2, 1, 3, 8, 2)
DECODE_ENTRY(realign_nohint, DECODE_FORM_RUNS(0), 32, 4, 1, 4, 4, 3)
DECODE_ENTRY(realign_nohint, DECODE_FORM_RUNS(0), 8, 1, 1, 5, 8, 2)
DECODE_ENTRY(realign_rr_l2_128, DECODE_FORM_RR(128), 16, 2, 1, 3, 8, 2)
DECODE_ENTRY(realign_runs_hint, DECODE_FORM_RUNS(256), 32, 4, 1, 4, 4, 3)
DECODE_ENTRY(realign_xinplace, DECODE_FORM_RR(256), 16, 2, 1, 3, 8, 2)
DECODE_ENTRY(realign_xinplace, DECODE_FORM_RUNS(128), 32, 4, 1, 4, 4, 3)
DECODE_ENTRY(realign_xinplace, DECODE_FORM_RUNS(256), 64, 8, 1, 3, 4, 2)

#define DECODE_ROW(KIND, MT) {"decode_" #KIND "_m" #MT, decode_##KIND##_supports_m##MT, \
                              decode_##KIND##_launch_m##MT}

/* Smallest m tile first: the first entry that accepts a call is the tightest
 * fit; the realigning kernels after the others, for what those decline.
 * decode_realign_m64 reads the weight's rows off 16 bytes at m = 33-64
 * (P224 call 6, an H100: 64 x 32000 x 4095 217.4 us against 300.4 for
 * sm90_ws_128x256 on packed operands, 33 x 4096 x 14335 89.7 against 147.6
 * on the 128 x 128 split; before x's copy onto the grid, 358.7 and 176.4,
 * which kept it forced only). */
static const cuops_gemm_kernel_t decode_table[] = {
    DECODE_ROW(splitk, 8),  DECODE_ROW(splitk, 16),  DECODE_ROW(splitk, 32), DECODE_ROW(splitk, 64),
    DECODE_ROW(realign, 8), DECODE_ROW(realign, 16), DECODE_ROW(realign, 32), DECODE_ROW(realign, 64),
};

extern "C" const cuops_gemm_kernel_t cuops_gemm_decode_study[CUOPS_GEMM_DECODE_STUDY_COUNT] = {
    DECODE_ROW(realign_runs_hint, 8),  DECODE_ROW(realign_runs_hint, 16),
    DECODE_ROW(realign_rr_nohint, 16), DECODE_ROW(realign_nohint, 32),
    DECODE_ROW(realign_nohint, 8),     DECODE_ROW(realign_rr_l2_128, 16),
    DECODE_ROW(realign_runs_hint, 32), DECODE_ROW(realign_xinplace, 16),
    DECODE_ROW(realign_xinplace, 32),  DECODE_ROW(realign_xinplace, 64)};

extern "C" const cuops_gemm_kernel_t *cuops_gemm_decode_kernel_table(int *count)
{
    *count = (int)(sizeof(decode_table) / sizeof(decode_table[0]));
    return decode_table;
}
