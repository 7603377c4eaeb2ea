/*
 * w4a16_decode_warp.cu - the decode W4A16 GEMM for m <= 16 built so that no
 * warp ever waits for another while the weight streams: each warp keeps its
 * own rolling register pipeline of U weight tiles, the activations and the
 * quantization metadata are staged in shared memory once per chunk of k (not
 * once per tile), and split-K is reduced in shared memory within a CTA and by
 * the last-arriving CTA across CTAs, in fixed order (bitwise reproducible).
 *
 * Variant "w4a16_decode_warp", auto for m <= 16 where it serves the call
 * (measured faster than w4a16_decode_stream on 15 of 16 decode rows, H200,
 * docs/w4a16.md). Side by side:
 *   cuops-bench w4a16 --variant auto --variant w4a16_decode_warp
 *
 * What the two earlier decode kernels left on the table, and what this one
 * does instead:
 *  - w4a16_decode_stream refills a cp.async ring behind one __syncthreads per
 *    64-k tile: every warp waits for the slowest copy group of the CTA, and
 *    the ring drains at each barrier (it measured ~47 % of copy bandwidth).
 *    Here the weight never goes through shared memory: a warp owns one 16-row
 *    strip and a contiguous k range, holds tiles j .. j+U-1 in registers
 *    (one 16-byte ld.global.nc.L1::no_allocate per lane per tile, 512
 *    contiguous bytes per warp-instruction thanks to the strip-major layout)
 *    and issues tile j+U as soon as tile j is consumed, so U x 512 B are
 *    always in flight per warp: U = 8, 16 warps per SM -> 64 KB per SM,
 *    above the ~32-48 KB Little's law asks for at ~4.3 TB/s.
 *  - w4a16_decode_splitk (register batches) spent ~190 instructions per tile:
 *    a 64-bit division for the group index, 64-bit address math and x
 *    fragment loads through L1 per tile. Here the group index is tracked
 *    incrementally in 32 bits, the weight addresses are immediates off one
 *    pointer bumped once per U tiles, and x and the metadata come from shared
 *    memory at immediate or 32-bit offsets.
 *  - x (m rows) and the scale pairs / zero words of the groups each warp
 *    touches are copied into shared memory in chunks of xc tiles per k slice
 *    (cp.async, x zero-filled past k), double-buffered: one __syncthreads per
 *    chunk of 8..64 tiles (a single one before the loop when the warps have
 *    <= 64 tiles each). A barrier does not drain the weight stream: the U
 *    tiles of every warp stay in flight across it. Holding the
 *    metadata in the register pipeline instead would cost 2 registers and 2
 *    loads per tile.
 *
 * Per 512-byte strip-tile and warp, m <= 8, f16, group_size % 64 == 0 (the
 * scale applied in fp32 to the tile's mma partial, rows g+8 taken as 16 q
 * with the 0x00F000F0 mask, as in w4a16_decode_stream): 1 LDG.128 (weight,
 * predicated refill), 2 LDS.128 (x), 2 LDS.32 (scale pair, zero word) with
 * ~3 address ops, ~5 of group tracking, ~6 for the zero/scale operands,
 * 4 x (1 shift, 4 lop3, 4 sub) of dequant, 4 HMMA, 4 FFMA, 1 LOP3 (below):
 * ~70 instructions. With the scale folded into the weights (m <= 8 with
 * other group sizes, and every m <= 16 call): 4 x (3 shifts, 4 lop3, 4 sub,
 * 4 mul), no FFMA: ~85; m <= 16 adds 2 LDS.128 and 4 HMMA: ~91.
 *
 * CTA: 8 warps. R = 1 << r_log2 strips (16 rows each) x KS = 8 / R k slices;
 * warp w owns strip w % R of the CTA and slice w / R of the CTA's k range.
 * The dispatch picks R in {8, 4, 2, 1} and the number of K splits across
 * CTAs per shape (w4w_choose_plan): enough CTAs for one resident wave, the
 * least extra traffic (x copies + split-K partials + a fixed price for the
 * cross-CTA reduction).
 *
 * Shared memory (dynamic, <= 96 KB, w4w_smem_budget), per chunk buffer:
 *   X    [KS][m rows][xc tiles][128 B]  16-byte chunk c of x row r stored at
 *        chunk c ^ (r & 7) of its 128-byte tile segment: lane (g, t) reads
 *        chunks 2t, 2t+1 of row 8i+g, so a quarter-warp (g in {2h, 2h+1},
 *        t = 0..3) hits the chunk positions (2t) ^ g: 8 distinct 16-byte bank
 *        groups. Rows past m are never stored: lanes whose x row is >= m read
 *        row m-1, which only feeds the mma output columns of x rows >= m,
 *        never written.
 *   META [8 warps][meta_groups][32 B scale pairs], then [meta_groups][8 B zero
 *        words], both copied as they lie in the packed buffer.
 * After the loop the same memory holds the per-slice partial sums
 * [KS][m][R*16] fp32.
 *
 * Serves: m <= 16, act f16/bf16, every group size the packed format has,
 * x 16-byte aligned with ldx % 8 == 0 (cp.async sources), k < 2^29.
 */
#include <string.h>

#include "cuda/common/ptx_sm80.cuh"
#include "cuda/quant/w4a16_layout.cuh"
#include "cuda/quant/w4a16_warp_tile.cuh"

#define W4W_WARPS 8
#define W4W_THREADS (32 * W4W_WARPS)
/* 2 CTAs x 8 warps per SM: <= 128 registers per thread. */
#define W4W_MIN_CTAS 2
/* Weight tiles in flight per warp (the rolling register pipeline's depth,
 * 4 registers each): 16 warps x 8 x 512 B = 64 KB requested per SM at all
 * times. ptxas (13.0) fits U = 8 and 10 in 128 registers without spills;
 * 8 keeps a margin. */
#define W4W_U 8
/* Shared memory per CTA at most (x and metadata chunks); w4w_smem_budget. */
#define W4W_SMEM_BUDGET_MAX (96 * 1024)
/* Tiles per slice in one chunk at most (a multiple of U): the first chunk's
 * metadata and x gate the first barrier, so not too many; later chunks are
 * fetched one ahead. Each chunk costs every warp a few hundred instructions
 * of copy set-up, so not too few either: 32 cost ~14 instructions per tile
 * at m = 1 (ncu instruction counts, docs/w4a16.md). */
#define W4W_MAX_CHUNK_TILES 64
/* Split-K planning: a warp should have at least this many tiles... */
#define W4W_MIN_TILES_PER_WARP 4
/* ...and a cross-CTA split costs a fence, an atomic and the last CTA's L2
 * round trips (~1.5-2 us on the critical path), priced as this many bytes of
 * extra traffic when the plans are compared. */
#define W4W_REDUCE_FIXED_BYTES ((int64_t)8 << 20)

/* Arrival counters for the cross-CTA split-K, one per row tile: the
 * handle's (w4a16_splitk_partials); the last CTA of a tile puts its counter
 * back to zero. */
#define W4W_MAX_SPLIT_TILES W4A16_SPLITK_MAX_TILES

typedef struct w4w_args {
    const uint16_t *x;
    int64_t ldx;
    const uint8_t *packed;
    void *y;
    int64_t ldy;
    float *ws; /* [row tiles][splits][m][R*16] partials; NULL when splits == 1 */
    int64_t n, k, strips, ktiles;
    int64_t scale_offset, zero_offset;
    int m;
    int num_groups;
    int last_group;      /* num_groups - 1 */
    int gs_eff;          /* group size in columns; 1 << 30 when one group spans k */
    int q64, r64;        /* 64 = q64 * gs_eff + r64: group advance per tile */
    int r_log2;          /* strips per CTA = 1 << r_log2, k slices = 8 >> r_log2 */
    int x_wpr_log2;      /* log2 of the warps copying one x row (8 / (slices * m), at least 1) */
    int tiles_per_split; /* k tiles per CTA (the last split may have fewer) */
    int tiles_per_slice; /* k tiles per warp slice: ceil(tiles_per_split / KS) */
    int xc;              /* tiles per slice in one chunk (a multiple of U if chunked) */
    int meta_groups;     /* groups one warp's chunk can touch (metadata slots) */
    int x_chunk_bytes;   /* KS * m * xc * 128: x part of a chunk buffer */
    int warp_meta_bytes; /* meta_groups * 40 rounded up to 16: one warp's metadata */
    int splits;
    unsigned int *counters; /* [row tile] arrivals, zero between calls; NULL when splits == 1 */
    uint32_t chain_zero; /* 0, as a value the compiler cannot see (w4w_tile) */
} w4w_args_t;

/* ---- loads and copies ---------------------------------------------------------- */

/* One weight tile chunk, predicated rather than branched so the refill of a
 * pipeline slot stays in the tile's basic block. The weight is read exactly
 * once: keep it out of L1. When `pred` is 0 nothing is read and the result
 * is never used. */
static __device__ __forceinline__ uint4 w4w_ldg_stream_if(const uint4 *p, int pred)
{
    uint4 v;
    asm("{\n"
        " .reg .pred p;\n"
        " setp.ne.b32 p, %5, 0;\n"
        " @p ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
        "}\n"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p), "r"(pred));
    return v;
}

/* 8-byte global->shared copy (.ca: the only form that takes 8 bytes); the
 * zero words of a strip are 8-byte aligned. */
static __device__ __forceinline__ void w4w_cp_async_8(uint32_t smem_dst, const void *src)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem_dst), "l"(src) : "memory");
#endif
}

/* ---- staging: x and the metadata, one chunk at a time ---------------------------- */

/* First quantization group whose metadata a warp needs in its chunk that
 * starts at global tile kt (lane t = 0 has the lowest column). */
static __device__ __forceinline__ int w4w_chunk_group0(const w4w_args_t &a, int kt)
{
    return min(kt * W4_TILE_K / a.gs_eff, a.last_group);
}

/*
 * Copy chunk `chunk` into the buffer at shared address buf:
 *  - x: xc tiles of every slice of the CTA, rows 0..m-1, 16 bytes per
 *    cp.async, zero past k (the packed padding dequantizes to exactly 0, and
 *    0 * x must not meet a NaN left in shared memory). Tiles past a slice's
 *    end are not copied: no warp reads them. Warps take whole rows (several
 *    warps share a row when the CTA has fewer than 8), lanes consecutive
 *    16-byte pieces of the row.
 *  - metadata: each warp copies the scale pairs (32 B per group, contiguous
 *    in the packed buffer) and zero words (8 B per group) of the groups its
 *    own tiles of the chunk touch, into its own slots [meta_groups][32 B]
 *    [meta_groups][8 B]. They come from HBM like the weight, so they are
 *    fetched a chunk ahead instead of holding 2 registers per tile in flight.
 */
template <bool TILE_META>
static __device__ __forceinline__ void w4w_copy_chunk(const w4w_args_t &a, uint32_t buf, int chunk)
{
    /* everything from the launch parameters and the thread's indices: these
     * few instructions per chunk are cheaper than keeping the values live in
     * registers across the tile loop */
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int ks = W4W_WARPS >> a.r_log2;
    const int m = a.m, xc = a.xc, kws = a.tiles_per_slice;
    const int kt_cta = (int)blockIdx.y * a.tiles_per_split;
    const int cta_tiles = min(a.tiles_per_split, (int)a.ktiles - kt_cta);
    const int rows = ks * m;
    /* 8 / rows warps per row when rows < 8 (a power of two for rows 1..8,
     * from the host), else one; no division in here: the row's slice s and
     * x row r = rowid - s*m are stepped, not divided */
    const int wpr_log2 = a.x_wpr_log2;
    const int row_step = W4W_WARPS >> wpr_log2;
    const int piece_step = 32 << wpr_log2;
    int rowid = warp >> wpr_log2, s = 0, r = rowid;
    while (r >= m) {
        r -= m;
        s++;
    }
    for (; rowid < rows; rowid += row_step) {
        const int s_begin = min(s * kws, cta_tiles);
        const int s_end = min(s_begin + kws, cta_tiles);
        const int tile0 = s_begin + chunk * xc; /* CTA-relative */
        const int pieces = min(xc, s_end - tile0) * 8;
        const int col_base = (kt_cta + tile0) * W4_TILE_K;
        const uint16_t *src_row = a.x + (int64_t)r * a.ldx + col_base;
        const uint32_t dst_row = buf + (uint32_t)rowid * (uint32_t)xc * 128u;
        const int swz = r & 7;
        for (int q = ((warp & ((1 << wpr_log2) - 1)) << 5) + lane; q < pieces; q += piece_step) {
            const int left = (int)a.k - (col_base + q * 8); /* columns from here to k */
            const int bytes = left >= 8 ? 16 : (left > 0 ? left * 2 : 0);
            const void *src = bytes ? (const void *)(src_row + q * 8) : (const void *)a.x;
            cuops_cp_async_16_zfill(dst_row + ((q >> 3) << 7) + (((q & 7) ^ swz) << 4), src, bytes);
        }
        r += row_step;
        while (r >= m) {
            r -= m;
            s++;
        }
    }

    /* this warp's own tiles of the chunk: [t0, t1) of its slice */
    const int strip = ((int)blockIdx.x << a.r_log2) + (warp & ((1 << a.r_log2) - 1));
    const int my_begin = min((warp >> a.r_log2) * kws, cta_tiles);
    const int kw = strip < (int)a.strips ? min(my_begin + kws, cta_tiles) - my_begin : 0;
    const int t0 = chunk * xc, t1 = min(t0 + xc, kw);
    if (TILE_META && t0 < t1) {
        /* one slot per tile, [xc][32 B] then [xc][8 B]: the group is the
         * same for all lanes of a tile, so the loop reads its slot at an
         * immediate offset instead of tracking the group (docs/w4a16.md) */
        const int kt0 = kt_cta + my_begin;
        const uint32_t mbase =
            buf + (uint32_t)a.x_chunk_bytes + (uint32_t)(warp * a.warp_meta_bytes);
        const uint32_t zbase = mbase + (uint32_t)a.meta_groups * 32u;
        for (int j = lane; j < t1 - t0; j += 32) { /* a lane per tile: one division */
            const int grp = w4w_chunk_group0(a, kt0 + t0 + j);
            const int64_t sg = (int64_t)strip * a.num_groups + grp;
            const uint8_t *ssrc = a.packed + a.scale_offset + sg * 32;
            cuops_cp_async_16_zfill(mbase + j * 32, ssrc, 16);
            cuops_cp_async_16_zfill(mbase + j * 32 + 16, ssrc + 16, 16);
            w4w_cp_async_8(zbase + j * 8, a.packed + a.zero_offset + sg * 8);
        }
    } else if (t0 < t1) {
        const int kt0 = kt_cta + my_begin;
        const int g0 = w4w_chunk_group0(a, kt0 + t0);
        const int g1 = min(((kt0 + t1 - 1) * W4_TILE_K + 48) / a.gs_eff, a.last_group);
        const int count = g1 - g0 + 1; /* <= meta_groups (w4w_meta_groups) */
        const uint32_t mbase =
            buf + (uint32_t)a.x_chunk_bytes + (uint32_t)(warp * a.warp_meta_bytes);
        const int64_t sg0 = (int64_t)strip * a.num_groups + g0;
        const uint8_t *ssrc = a.packed + a.scale_offset + sg0 * 32;
        for (int q = lane; q < 2 * count; q += 32)
            cuops_cp_async_16_zfill(mbase + q * 16, ssrc + q * 16, 16);
        const uint8_t *zsrc = a.packed + a.zero_offset + sg0 * 8;
        const uint32_t zbase = mbase + (uint32_t)a.meta_groups * 32u;
        for (int q = lane; q < count; q += 32) w4w_cp_async_8(zbase + q * 8, zsrc + q * 8);
    }
}

/* ---- the kernel ---------------------------------------------------------------- */

/*
 * grid = (row tiles of R strips, K splits), 8 warps. M8 fragments of 8 x
 * rows (m <= 8 * M8), U weight tiles in flight per warp. The loop over
 * chunks has the same trip count in every warp (its barriers); inside a
 * chunk each warp walks its own tiles.
 */
template <typename T, int M8, bool SCALE_F32, bool TILE_META, int U>
__global__ void __launch_bounds__(W4W_THREADS, W4W_MIN_CTAS) w4a16_decode_warp_kernel(w4w_args_t a)
{
    extern __shared__ __align__(128) unsigned char w4w_smem[];
    /* TILE_META (one group covers each 64-k tile, as the fp32 scale also
     * needs): the metadata is staged per tile, read at immediate offsets */
    static_assert(TILE_META || !SCALE_F32, "the fp32 scale needs one group per tile");

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t = lane & 3;
    const int r_log2 = a.r_log2;
    const int ks = W4W_WARPS >> r_log2;
    const int strip_local = warp & ((1 << r_log2) - 1);
    const int slice = warp >> r_log2;
    const int strip = ((int)blockIdx.x << r_log2) + strip_local;
    const int m = a.m;

    /* the CTA's k tiles [kt_cta, kt_cta + cta_tiles); this warp's slice of them
     * (tile and strip indices fit 32 bits: w4a16_decode_warp_serves) */
    const int kt_cta = (int)blockIdx.y * a.tiles_per_split;
    const int cta_tiles = min(a.tiles_per_split, (int)a.ktiles - kt_cta);
    const int kws = a.tiles_per_slice;
    const int my_begin = min(slice * kws, cta_tiles);
    const int kw = strip < (int)a.strips ? min(my_begin + kws, cta_tiles) - my_begin : 0;
    const int kt0 = kt_cta + my_begin;

    /* ---- chunk 0 of x and the metadata first: they are small and gate the
     * first barrier; queued behind the weight loads they would arrive last
     * and leave HBM idle for a latency after it. Then one chunk ahead. ---- */
    const int xc = a.xc;
    const uint32_t row_bytes = (uint32_t)xc * 128u;
    const uint32_t buf_bytes = (uint32_t)a.x_chunk_bytes + W4W_WARPS * (uint32_t)a.warp_meta_bytes;
    const int nchunks = (min(kws, cta_tiles) + xc - 1) / xc; /* slice 0 is the longest */
    const uint32_t smem0 = cuops_smem_addr(w4w_smem);
    w4w_copy_chunk<TILE_META>(a, smem0, 0);
    cuops_cp_async_commit();

    /* ---- the weight pipeline: tiles 0 .. U-1 ---- */
    const uint4 *wp = (const uint4 *)a.packed +
                      ((int64_t)(strip < (int)a.strips ? strip : 0) * a.ktiles + kt0) * 32 + lane;
    uint4 wv[U];
#pragma unroll
    for (int u = 0; u < U; u++) wv[u] = w4w_ldg_stream_if(wp + u * 32, u < kw);

    /* x fragment i of this lane: row min(8i+g, m-1), chunks 2t, 2t+1 swizzled */
    uint32_t xoff_a[M8], xoff_b[M8];
#pragma unroll
    for (int i = 0; i < M8; i++) {
        const int row = min(8 * i + g, m - 1);
        const uint32_t base = (uint32_t)(slice * m + row) * row_bytes;
        const uint32_t c0 = (uint32_t)((2 * t) ^ (row & 7));
        xoff_a[i] = base + (c0 << 4);
        xoff_b[i] = base + ((c0 ^ 1u) << 4);
    }
    /* this lane's scale pair (word g) and zero word (g / 4) in the warp's slots */
    const uint32_t meta0 = (uint32_t)a.x_chunk_bytes + (uint32_t)(warp * a.warp_meta_bytes);
    const uint32_t meta_sc = meta0 + 4 * g;
    const uint32_t meta_zw = meta0 + (uint32_t)a.meta_groups * 32u + 4 * (g >> 2);
    const int zshift = 4 * (g & 3);
    const int gs = a.gs_eff, q64 = a.q64, r64 = a.r64;
    /* group of the lane's first column of the next tile to consume, and the
     * column's offset inside it, advanced by 64 columns per tile (clamped for
     * the padding past k when used, as w4_lane_group does) */
    int grp, rem;
    {
        const int col0 = kt0 * W4_TILE_K + 16 * t;
        grp = col0 / gs;
        rem = col0 - grp * gs;
    }

    float acc[M8][4];
#pragma unroll
    for (int i = 0; i < M8; i++) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;

    for (int c = 0; c < nchunks; c++) {
        /* chunk c landed for everyone, and everyone is done with chunk c-1,
         * whose buffer the copy below overwrites */
        cuops_cp_async_wait<0>();
        __syncthreads();
        if (c + 1 < nchunks)
            w4w_copy_chunk<TILE_META>(a, smem0 + ((c + 1) & 1) * buf_bytes, c + 1);
        cuops_cp_async_commit();

        const int jend = min(kw, (c + 1) * xc);
        int jb = c * xc;
        const unsigned char *buf = w4w_smem + (c & 1) * buf_bytes;
        const unsigned char *xt = buf;
        const int gfirst = (!TILE_META && jb < jend) ? w4w_chunk_group0(a, kt0 + jb) : 0;
        /* group gc is in slot gc - gfirst (TILE_META: tile c*xc + j in slot j) */
        const unsigned char *msc = buf + meta_sc;
        const unsigned char *mzw = buf + meta_zw;
        /* full blocks of U tiles: consume tile jb+u, refill its slot with
         * tile jb+u+U (chunks are multiples of U tiles when there are several,
         * so slot u always holds tile jb+u) */
        for (; jb + U <= jend; jb += U) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int slot = TILE_META ? u : min(grp, a.last_group) - gfirst;
                const uint32_t sc = *(const uint32_t *)(msc + slot * 32);
                const uint32_t zw = *(const uint32_t *)(mzw + slot * 8);
                w4w_tile<T, M8, SCALE_F32>(acc, wv[u], sc, zw, zshift, a.chain_zero, xt + u * 128,
                                           xoff_a, xoff_b);
                wv[u] = w4w_ldg_stream_if(wp + (u + U) * 32, jb + u + U < kw);
                if (!TILE_META) {
                    rem += r64;
                    grp += q64;
                    if (rem >= gs) {
                        rem -= gs;
                        grp++;
                    }
                }
            }
            wp += U * 32;
            xt += U * 128;
            if (TILE_META) {
                msc += U * 32;
                mzw += U * 8;
            }
        }
        /* the slice's last, partial block: nothing left to refill */
        if (jb < jend) {
#pragma unroll
            for (int u = 0; u < U - 1; u++) {
                if (jb + u < jend) {
                    const int slot = TILE_META ? u : min(grp, a.last_group) - gfirst;
                    const uint32_t sc = *(const uint32_t *)(msc + slot * 32);
                    const uint32_t zw = *(const uint32_t *)(mzw + slot * 8);
                    w4w_tile<T, M8, SCALE_F32>(acc, wv[u], sc, zw, zshift, a.chain_zero,
                                               xt + u * 128, xoff_a, xoff_b);
                    if (!TILE_META) {
                        rem += r64;
                        grp += q64;
                        if (rem >= gs) {
                            rem -= gs;
                            grp++;
                        }
                    }
                }
            }
        }
    }

    /* ---- reduction over the CTA's k slices, in slice order ---- */
    cuops_cp_async_wait<0>(); /* only empty groups remain */
    __syncthreads();          /* every warp is done with x: the buffers become partial sums */
    float *red = (float *)w4w_smem;
    const int r16_log2 = 4 + r_log2;
    const int outs = m << r16_log2; /* [m][R*16] per slice */
#pragma unroll
    for (int i = 0; i < M8; i++)
#pragma unroll
        for (int cc = 0; cc < 4; cc++) {
            /* c0, c1: weight row g, x rows 2t, 2t+1; c2, c3: weight row g+8 */
            const int xrow = 8 * i + 2 * t + (cc & 1);
            if (xrow < m)
                red[slice * outs + (xrow << r16_log2) + strip_local * 16 + g + 8 * (cc >> 1)] =
                    acc[i][cc];
        }
    __syncthreads();

    const int64_t col0 = (int64_t)blockIdx.x << r16_log2; /* first weight row of the CTA */
    if (a.splits == 1) {
        for (int q = tid; q < outs; q += W4W_THREADS) {
            float s = red[q];
            for (int sl = 1; sl < ks; sl++) s += red[sl * outs + q];
            const int64_t xrow = q >> r16_log2;
            const int64_t col = col0 + (q & ((1 << r16_log2) - 1));
            if (col < a.n) ((T *)a.y)[xrow * a.ldy + col] = cuops_from_float<T>(s);
        }
        return;
    }

    /* ---- split-K across CTAs: this split's partial tile, then the arrival ---- */
    float *part = a.ws + ((int64_t)blockIdx.x * a.splits + blockIdx.y) * outs;
    for (int q = tid; q < outs; q += W4W_THREADS) {
        float s = red[q];
        for (int sl = 1; sl < ks; sl++) s += red[sl * outs + q];
        __stcg(part + q, s);
    }
    /* release: the partial is visible at device scope before the arrival */
    __threadfence();
    __syncthreads();
    __shared__ int w4w_is_last;
    unsigned int *counter = a.counters + blockIdx.x;
    if (tid == 0) w4w_is_last = atomicAdd(counter, 1u) == (unsigned int)(a.splits - 1);
    __syncthreads();
    if (!w4w_is_last) return;
    /* acquire: every other split's partial (fenced before its arrival) is
     * visible; .cg loads read L2, never a stale L1 line */
    __threadfence();
    const float4 *tile = (const float4 *)(a.ws + (int64_t)blockIdx.x * a.splits * outs);
    const int quads = outs >> 2; /* R*16 is a multiple of 16 */
    for (int q4 = tid; q4 < quads; q4 += W4W_THREADS) {
        float4 s = __ldcg(tile + q4);
        for (int sp = 1; sp < a.splits; sp++) {
            const float4 v = __ldcg(tile + (int64_t)sp * quads + q4);
            s.x += v.x;
            s.y += v.y;
            s.z += v.z;
            s.w += v.w;
        }
        const int q = 4 * q4;
        const int64_t xrow = q >> r16_log2;
        const int64_t col = col0 + (q & ((1 << r16_log2) - 1));
        T *yrow = (T *)a.y + xrow * a.ldy;
        const float out[4] = {s.x, s.y, s.z, s.w};
#pragma unroll
        for (int e = 0; e < 4; e++)
            if (col + e < a.n) yrow[col + e] = cuops_from_float<T>(out[e]);
    }
    /* every split of this tile has arrived: the counter can go back to zero */
    if (tid == 0) atomicExch(counter, 0u);
}

/* ---- host side: the plan (strips per CTA, splits, chunks), launch -------------- */

typedef struct w4w_plan {
    int r_log2;
    int64_t row_tiles, splits;
    int64_t tiles_per_split, tiles_per_slice, xc;
    int64_t meta_groups, x_chunk_bytes, warp_meta_bytes;
    size_t smem;
    int64_t active_warps; /* warps that own at least one tile */
    int64_t extra_bytes;  /* x copies + partials written and read + split price */
} w4w_plan_t;

/* Metadata slots one warp needs for xc tiles: one per tile where it is staged
 * per tile (tile_meta); else one per group its lanes' columns touch, which
 * span at most 64*xc - 16 (first lane 0 to last lane 3): that / gs + 2. */
static int64_t w4w_meta_groups(int64_t xc, int64_t gs_eff, int64_t num_groups, int tile_meta)
{
    if (tile_meta) return xc;
    int64_t gcount = (W4_TILE_K * xc - 16) / gs_eff + 2;
    return gcount < num_groups ? gcount : num_groups;
}

/*
 * One candidate: R = 1 << r_log2 strips per CTA. Splits fill one resident
 * wave (row tiles x splits <= slots) with at least W4W_MIN_TILES_PER_WARP
 * tiles per warp; x and the metadata either fit whole (one chunk, one
 * buffer) or are double-buffered in chunks of a multiple of U tiles.
 * Returns 0 when nothing fits the budget.
 */
static int w4w_make_plan(w4w_plan_t *p, int r_log2, int64_t m, int64_t k, int64_t strips,
                         int64_t ktiles, int64_t gs_eff, int64_t num_groups, int64_t slots,
                         int64_t forced_splits, int64_t budget, int u, int tile_meta)
{
    const int64_t R = (int64_t)1 << r_log2, ks = W4W_WARPS >> r_log2;
    const int64_t row_tiles = cuops_ceil_div(strips, R);
    int64_t splits;
    if (forced_splits > 0) {
        splits = forced_splits;
    } else {
        splits = row_tiles >= slots ? 1 : slots / row_tiles;
        const int64_t cap = ktiles / (ks * W4W_MIN_TILES_PER_WARP);
        if (splits > cap) splits = cap;
    }
    if (row_tiles > W4W_MAX_SPLIT_TILES) splits = 1; /* the counters cover this many tiles */
    if (splits > ktiles) splits = ktiles;
    if (splits > 65535) splits = 65535;
    if (splits < 1) splits = 1;
    /* no empty split: all but the last get ceil(ktiles / splits) tiles */
    const int64_t kt = cuops_ceil_div(ktiles, splits);
    splits = cuops_ceil_div(ktiles, kt);
    const int64_t kws = cuops_ceil_div(kt, ks);

    /* one chunk buffer: x [KS][m][xc][128 B], then 8 warps' metadata slots;
     * at most W4W_MAX_CHUNK_TILES per chunk */
    const int64_t x_per_tile = ks * m * 128;
    int64_t xc = kws, nbuf = 1;
    int64_t groups = w4w_meta_groups(xc, gs_eff, num_groups, tile_meta);
    int64_t wmb = (groups * 40 + 15) / 16 * 16;
    if (xc > W4W_MAX_CHUNK_TILES || xc * x_per_tile + W4W_WARPS * wmb > budget) {
        nbuf = 2;
        xc = budget / 2 / x_per_tile / u * u;
        if (xc > W4W_MAX_CHUNK_TILES) xc = W4W_MAX_CHUNK_TILES / u * u; /* a multiple of u */
        for (; xc >= u; xc -= u) {
            groups = w4w_meta_groups(xc, gs_eff, num_groups, tile_meta);
            wmb = (groups * 40 + 15) / 16 * 16;
            if (2 * (xc * x_per_tile + W4W_WARPS * wmb) <= budget) break;
        }
        if (xc < u) return 0;
    }
    const int64_t chunk_bytes = xc * x_per_tile + W4W_WARPS * wmb;
    const int64_t red_bytes = ks * m * R * W4_STRIP_ROWS * 4;

    p->r_log2 = r_log2;
    p->row_tiles = row_tiles;
    p->splits = splits;
    p->tiles_per_split = kt;
    p->tiles_per_slice = kws;
    p->xc = xc;
    p->meta_groups = groups;
    p->x_chunk_bytes = xc * x_per_tile;
    p->warp_meta_bytes = wmb;
    p->smem = (size_t)(nbuf * chunk_bytes > red_bytes ? nbuf * chunk_bytes : red_bytes);
    p->active_warps = strips * splits * cuops_ceil_div(kt, kws);
    p->extra_bytes = row_tiles * m * k * 2; /* each row tile reads x once */
    if (splits > 1)
        p->extra_bytes +=
            2 * row_tiles * splits * m * R * W4_STRIP_ROWS * 4 + W4W_REDUCE_FIXED_BYTES;
    return 1;
}

/*
 * The choice: plans that fit one resident wave if any do; among them those
 * within 75 % of the most busy warps (capped at the resident warps); among
 * those the least extra traffic, ties to more strips per CTA. E.g. on 132
 * SMs at m = 1: 4096 x 4096 gets 1 strip x 8 slices per CTA, 256 CTAs and no
 * cross-CTA split; 28672 x 8192 8 strips per CTA, 224 CTAs; at m = 16 the
 * plans keep 8 strips per CTA (x read from L2 once per 128 rows) and split K
 * across CTAs.
 */
static int w4w_choose_plan(w4w_plan_t *best, int64_t m, int64_t k, int64_t strips, int64_t ktiles,
                           int64_t gs_eff, int64_t num_groups, int64_t slots, int64_t forced_splits,
                           int64_t budget, int u, int tile_meta)
{
    w4w_plan_t plans[4];
    int ok[4], any_one_wave = 0;
    for (int i = 0; i < 4; i++) {
        ok[i] = w4w_make_plan(&plans[i], 3 - i, m, k, strips, ktiles, gs_eff, num_groups, slots,
                              forced_splits, budget, u, tile_meta);
        if (ok[i] && plans[i].row_tiles * plans[i].splits <= slots) any_one_wave = 1;
    }
    const int64_t resident_warps = slots * W4W_WARPS;
    int64_t busy[4], most = 0;
    for (int i = 0; i < 4; i++) {
        if (ok[i] && any_one_wave && plans[i].row_tiles * plans[i].splits > slots) ok[i] = 0;
        if (!ok[i]) continue;
        busy[i] = plans[i].active_warps < resident_warps ? plans[i].active_warps : resident_warps;
        if (busy[i] > most) most = busy[i];
    }
    int pick = -1;
    for (int i = 0; i < 4; i++) {
        if (!ok[i] || 4 * busy[i] < 3 * most) continue;
        if (pick < 0 || plans[i].extra_bytes < plans[pick].extra_bytes) pick = i;
    }
    if (pick < 0) return 0;
    *best = plans[pick];
    return 1;
}

/* Shared memory per CTA for the chunks: two CTAs per SM (the register
 * budget's limit anyway), at most 96 KB. From the per-block opt-in limit
 * (per-SM capacity minus the 1 KB reserved per CTA): H100/H200 96 KB,
 * A100 80 KB. */
static int64_t w4w_smem_budget(const struct cuops_handle *h)
{
    int64_t optin = h->smem_optin_bytes > 0 ? h->smem_optin_bytes : 48 * 1024;
    int64_t b = (optin + 1024) / W4W_MIN_CTAS - 2048;
    if (b > W4W_SMEM_BUDGET_MAX) b = W4W_SMEM_BUDGET_MAX;
    if (b > optin) b = optin;
    return b / 1024 * 1024;
}

/* Resident CTAs per SM of one instantiation at the full budget (cached;
 * only steers the plan, never correctness). */
template <typename T, int M8, bool SCALE_F32, bool TILE_META, int U>
static int w4w_ctas_per_sm(int64_t budget)
{
    static int cached = 0;
    if (cached == 0) {
        int v = 0;
        const void *fn = (const void *)w4a16_decode_warp_kernel<T, M8, SCALE_F32, TILE_META, U>;
        if (cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)budget) !=
                cudaSuccess ||
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &v, w4a16_decode_warp_kernel<T, M8, SCALE_F32, TILE_META, U>, W4W_THREADS, (size_t)budget) !=
                cudaSuccess ||
            v < 1) {
            (void)cudaGetLastError();
            v = 1;
        }
        cached = v;
    }
    return cached;
}

template <typename T, int M8, bool SCALE_F32, bool TILE_META, int U>
static cuops_status_t w4w_launch(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                 const w4_geometry_t *geo, int64_t forced_splits, const char *name)
{
    const int64_t budget = w4w_smem_budget(h);
    const int64_t sms = h->num_sms > 0 ? h->num_sms : 132;
    const int64_t slots = sms * w4w_ctas_per_sm<T, M8, SCALE_F32, TILE_META, U>(budget);
    const int64_t gs_eff = geo->num_groups == 1 ? ((int64_t)1 << 30) : geo->group_size;
    w4w_plan_t plan;
    if (!w4w_choose_plan(&plan, d->m, geo->k, geo->strips, geo->ktiles, gs_eff, geo->num_groups,
                         slots, forced_splits, budget, U, TILE_META))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "w4a16 (cuda): w4a16_decode_warp cannot stage x for m %lld in %lld bytes "
                          "of shared memory",
                          (long long)d->m, (long long)budget);
    if (plan.row_tiles > 0x7fffffff)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "w4a16 (cuda): n %lld too large",
                          (long long)d->n);

    const int64_t R16 = (int64_t)W4_STRIP_ROWS << plan.r_log2;
    float *ws = NULL;
    unsigned *counters = NULL;
    if (plan.splits > 1) {
        cuops_status_t s =
            w4a16_splitk_partials(h, plan.row_tiles, plan.splits, d->m * R16, &ws, &counters);
        /* a user workspace without room for the split the plan chose: the
         * call runs unsplit */
        if (cuops_cuda_workspace_short(h, s) && forced_splits <= 0)
            return w4w_launch<T, M8, SCALE_F32, TILE_META, U>(h, d, geo, 1, name);
        if (s != CUOPS_STATUS_SUCCESS) return s;
    }

    w4w_args_t a;
    a.x = (const uint16_t *)d->x;
    a.ldx = d->ldx;
    a.packed = (const uint8_t *)d->packed;
    a.y = d->y;
    a.ldy = d->ldy;
    a.ws = ws;
    a.n = geo->n;
    a.k = geo->k;
    a.strips = geo->strips;
    a.ktiles = geo->ktiles;
    a.scale_offset = geo->scale_offset;
    a.zero_offset = geo->zero_offset;
    a.m = (int)d->m;
    a.num_groups = (int)geo->num_groups;
    a.last_group = (int)geo->num_groups - 1;
    /* one group per row: a group larger than any column index, never left */
    a.gs_eff = (int)gs_eff;
    a.q64 = W4_TILE_K / a.gs_eff;
    a.r64 = W4_TILE_K % a.gs_eff;
    a.r_log2 = plan.r_log2;
    {
        const int64_t rows = (int64_t)(W4W_WARPS >> plan.r_log2) * d->m;
        int wl = 0;
        while (rows < W4W_WARPS && (rows << (wl + 1)) <= W4W_WARPS) wl++;
        a.x_wpr_log2 = wl;
    }
    a.tiles_per_split = (int)plan.tiles_per_split;
    a.tiles_per_slice = (int)plan.tiles_per_slice;
    a.xc = (int)plan.xc;
    a.meta_groups = (int)plan.meta_groups;
    a.x_chunk_bytes = (int)plan.x_chunk_bytes;
    a.warp_meta_bytes = (int)plan.warp_meta_bytes;
    a.splits = (int)plan.splits;
    a.chain_zero = 0;
    a.counters = counters;

    const void *fn = (const void *)w4a16_decode_warp_kernel<T, M8, SCALE_F32, TILE_META, U>;
    if (plan.smem > 48 * 1024) {
        /* per function and device; cheap next to a launch, so simply repeated */
        cudaError_t err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)budget);
        if (err != cudaSuccess) return cuops_cuda_fail(h, err, name);
    }
    dim3 grid((unsigned)plan.row_tiles, (unsigned)plan.splits, 1);
    w4a16_decode_warp_kernel<T, M8, SCALE_F32, TILE_META, U>
        <<<grid, W4W_THREADS, plan.smem, cuops_stream(h)>>>(a);
    return cuops_cuda_check_launch(h, name);
}

int w4a16_decode_warp_serves(const cuops_w4a16_desc_t *d, const w4_geometry_t *geo)
{
    if (d->m < 1 || d->m > 16) return 0;
    if (!cuops_aligned(d->x, 16) || d->ldx % 8 != 0) return 0;
    /* 32-bit column, group and strip arithmetic in the kernel */
    if (geo->k >= ((int64_t)1 << 29) || geo->strips >= ((int64_t)1 << 30)) return 0;
    return 1;
}

/*
 * Instantiations: m <= 8 (M8 = 1) with the scale applied in fp32 per tile
 * when one group covers a whole 64-k tile (group_size % 64 == 0 or one group
 * per row), else ("_g16": any multiple of 16) folded into the weights per
 * lane; m <= 16 (M8 = 2) always folded: with fp32 scaling its two partial
 * sets push ptxas past 128 registers (spills at every U tried, 4..10). Where
 * one group covers each tile the metadata is staged per tile (no group
 * tracking in the loop); "_g16" kernels track each lane's group.
 */
cuops_status_t w4a16_launch_decode_warp(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                        const w4_geometry_t *geo, int64_t forced_splits,
                                        const char **kernel_name)
{
    static const char *const names[2][4] = {
        {"w4a16_decode_warp_f16_m8", "w4a16_decode_warp_f16_m8_g16", "w4a16_decode_warp_f16_m16",
         "w4a16_decode_warp_f16_m16_g16"},
        {"w4a16_decode_warp_bf16_m8", "w4a16_decode_warp_bf16_m8_g16",
         "w4a16_decode_warp_bf16_m16", "w4a16_decode_warp_bf16_m16_g16"}};
    const int bf = d->act_type == CUOPS_DTYPE_BF16;
    const int tile_group = geo->group_size % W4_TILE_K == 0 || geo->num_groups == 1;
    const int kind = (d->m > 8 ? 2 : 0) + (tile_group ? 0 : 1);
    const char *name = names[bf][kind];
    *kernel_name = name;
    if (!bf) {
        switch (kind) {
        case 0: return w4w_launch<__half, 1, true, true, W4W_U>(h, d, geo, forced_splits, name);
        case 1: return w4w_launch<__half, 1, false, false, W4W_U>(h, d, geo, forced_splits, name);
        case 2: return w4w_launch<__half, 2, false, true, W4W_U>(h, d, geo, forced_splits, name);
        default: return w4w_launch<__half, 2, false, false, W4W_U>(h, d, geo, forced_splits, name);
        }
    }
    switch (kind) {
    case 0: return w4w_launch<__nv_bfloat16, 1, true, true, W4W_U>(h, d, geo, forced_splits, name);
    case 1: return w4w_launch<__nv_bfloat16, 1, false, false, W4W_U>(h, d, geo, forced_splits, name);
    case 2: return w4w_launch<__nv_bfloat16, 2, false, true, W4W_U>(h, d, geo, forced_splits, name);
    default: return w4w_launch<__nv_bfloat16, 2, false, false, W4W_U>(h, d, geo, forced_splits, name);
    }
}
