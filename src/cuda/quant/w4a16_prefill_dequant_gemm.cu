/*
 * w4a16_prefill_dequant_gemm.cu - W4A16 GEMM for the prefill regime
 * (m >= 256): dequantize the prepacked int4 weight a chunk of rows at a time
 * into the handle's workspace, then run cuops' dense f16/bf16 GEMM
 * (cuops_cuda_gemm: the TMA + wgmma kernel on sm_90) on that chunk.
 *
 * Why this is the right first prefill kernel. At m >= 256 the op is
 * compute-bound: 2*m*n*k FLOP against k*n/2 weight bytes is >= 1024
 * FLOP/byte, far above the H200's ~230 FLOP/byte ridge. The dense GEMM
 * already runs near the tensor-core limit, so the whole cost of the int4
 * format is the extra memory traffic of the dense chunk: write 2*rows*k
 * bytes, read them back once or more through L2. For 14336 x 4096 that is
 * 2 x 117 MB ~ 55 us at ~4.2 TB/s next to ~170 us of GEMM at m = 1024
 * (docs/w4a16.md, "Prefill", has the table). A fused kernel avoids it.
 *
 * Variant "w4a16_dequant_gemm"; kernel name reported by cuops_last_kernel:
 * "w4a16_dequant_gemm". Serves any m, n, k, ldx, ldy and x alignment the
 * W4A16 layout serves, on sm_80 and sm_90 (the GEMM picks its own kernel).
 *
 * Workspace (one cuops_cuda_workspace call per op, so no pointer moves):
 *   [x packed K-major, only when x cannot be read by TMA] [dense chunk]
 * The dense chunk is [rows][ldd], ldd = k rounded up to 64 (every row
 * 128-byte aligned; the padding columns dequantize to exactly 0 by the
 * layout's construction, and the GEMM is told k, so they are never summed).
 * The GEMM is handed TMA-readable operands only, so it never asks for
 * workspace itself and cannot overwrite the chunk (gemm_sm90.cu packs
 * misaligned operands into the same workspace).
 */
#include <string.h>

#include "cuda/gemm/gemm_sm90.h"
#include "cuda/quant/w4a16_layout.cuh"
#include "cuda/quant/w4a16_pair_ops.cuh"

/* The dense chunk's target size. Big enough that a chunk of a 4096-wide k
 * is 8192 rows (two full waves of 128 x 256 tiles at m = 1024); small
 * enough to be an acceptable scratch buffer next to a model's weights. */
#define W4P_CHUNK_BUDGET_BYTES ((size_t)64 << 20)
/* A chunk narrower than ~4096 rows leaves SMs idle at m <= 1024
 * (8 tile-rows x 16 tile-columns = 128 tiles per 4096 rows): allow up to
 * twice the budget to reach it, e.g. k = 14336 (4096 rows = 117 MB). */
#define W4P_CHUNK_FILL_ROWS 4096
#define W4P_CHUNK_HARD_CAP_BYTES ((size_t)128 << 20)
#define W4P_THREADS 256
/* 6 x 256 threads at <= 40 registers fill the register file; at 8 blocks
 * (32 registers) ptxas spills. */
#define W4P_MIN_BLOCKS 6

/* ---- dequant kernel: prepacked tiles -> dense [rows][ldd] ---------------- */

/* low half of a 16-bit pair copied into both halves, and the high half */
static __device__ __forceinline__ uint32_t w4p_splat_lo(uint32_t p) { return (p & 0xFFFFu) * 0x10001u; }
static __device__ __forceinline__ uint32_t w4p_splat_hi(uint32_t p) { return (p >> 16) * 0x10001u; }

static __device__ __forceinline__ uint4 w4p_load_stream(const uint4 *p)
{
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

typedef struct w4p_dequant_args {
    const uint4 *tiles;      /* first lane chunk of the chunk's first strip */
    const uint32_t *scales;  /* scale pairs of the chunk's first strip */
    const uint32_t *zeros;   /* zero words of the chunk's first strip */
    int64_t lane_chunks;     /* strips_in_chunk * ktiles * 32 */
    int64_t ktiles, group_size, num_groups;
    uint16_t *dense;         /* [strips_in_chunk * 16][ldd] */
    int64_t ldd;             /* ktiles * 64 */
} w4p_dequant_args_t;

/* Dequantize one of the lane's two rows (nibble shift 0: row g, 4: row
 * g+8) and store its 16 columns with the pairwise half swap.
 * vals[2j] = cols 4j, 4j+1 (nibbles at shift, shift+16); vals[2j+1] = cols
 * 4j+2, 4j+3 (shift+8, shift+24): vals[i] holds columns 2i, 2i+1. */
template <typename T>
static __device__ __forceinline__ void w4p_dequant_store_row(const uint32_t words[4], int shift,
                                                             uint32_t zero, uint32_t scale, int t,
                                                             uint16_t *row_out)
{
    uint32_t vals[8];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const uint32_t w = words[j] >> shift;
        vals[2 * j] = w4_mul2(T(), w4_sub2(T(), w4_nibbles<T, 0x000F000Fu>(w), zero), scale);
        vals[2 * j + 1] = w4_mul2(T(), w4_sub2(T(), w4_nibbles<T, 0x000F000Fu>(w >> 8), zero), scale);
    }
    /* Even t sends its upper 16 bytes (cols 8..15), odd t its lower 16
     * bytes (cols 0..7); each keeps the other half. */
    const bool odd = (t & 1) != 0;
    uint4 keep, recv;
    {
        uint32_t send[4], got[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            send[i] = odd ? vals[i] : vals[4 + i];
            got[i] = __shfl_xor_sync(0xffffffffu, send[i], 1);
        }
        keep = odd ? make_uint4(vals[4], vals[5], vals[6], vals[7])
                   : make_uint4(vals[0], vals[1], vals[2], vals[3]);
        recv = make_uint4(got[0], got[1], got[2], got[3]);
    }
    /* even t: own cols [16t, +8) first, then the partner's [16(t+1), +8);
     * odd t: the partner's [16(t-1)+8, +8) first, then own [16t+8, +8).
     * First store of the 4 lanes of a row: sectors 0 and 2 whole; second:
     * sectors 1 and 3. */
    if (odd) {
        *(uint4 *)(row_out + 16 * (t - 1) + 8) = recv;
        *(uint4 *)(row_out + 16 * t + 8) = keep;
    } else {
        *(uint4 *)(row_out + 16 * t) = keep;
        *(uint4 *)(row_out + 16 * (t + 1)) = recv;
    }
}

/* One thread per 16-byte lane chunk of a tile: rows g and g+8 of the strip,
 * columns 16t..16t+15 of the tile (w4a16_layout.cuh). The loads are the
 * packed buffer in order (fully coalesced). Each thread ends up with 32
 * contiguous output bytes per row, one 32-byte sector; a 16-byte store per
 * lane would fill half of 32 sectors per instruction, so lane pairs (t, t^1)
 * swap halves with 4 shuffles per row and every store instruction writes 16
 * whole sectors (sectors of even t, then of odd t).
 *
 * Little's law: ~4.2 TB/s x ~1 us of loaded latency = ~32 KB in flight per
 * SM, but only ~1/5 of the bytes are loads (16 B in, 64 B out): ~7 KB of
 * loads in flight per SM suffice, and 1536 resident threads (40 registers)
 * x one 16-byte load each give 24 KB; the stores are fire-and-forget. */
template <typename T>
__global__ void __launch_bounds__(W4P_THREADS, W4P_MIN_BLOCKS) w4p_dequant_kernel(w4p_dequant_args_t a)
{
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const int zero_shift = 4 * (g & 3);
    /* The grid stride is a multiple of 32, so lane == idx % 32 and a warp
     * always covers exactly one tile: the shuffles below are warp-uniform.
     * The tile's (strip, k-tile) is divided out once and then advanced by
     * the stride's own (strips, k-tiles): a 64-bit division per 16-byte
     * load made this kernel issue-bound. The group index is a 32-bit
     * division (columns < 2^32; the host clamps group_size to ldd). */
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    /* 32-bit: a chunk holds < 2^31 strips, a row < 2^25 k-tiles (ldd < 2^31) */
    const int ktiles = (int)a.ktiles;
    const int step_strips = (int)((stride >> 5) / ktiles);
    const int step_kt = (int)((stride >> 5) - (int64_t)step_strips * ktiles);
    int strip = (int)((first >> 5) / ktiles);
    int kt = (int)((first >> 5) - (int64_t)strip * ktiles);
    const uint32_t group_size = (uint32_t)a.group_size;
    const uint32_t last_group = (uint32_t)(a.num_groups - 1);
    for (int64_t idx = first; idx < a.lane_chunks; idx += stride) {
        const uint4 wv = w4p_load_stream(a.tiles + idx);
        const uint32_t grp = min(((uint32_t)kt * W4_TILE_K + 16u * (uint32_t)t) / group_size,
                                 last_group);
        const int64_t meta = (int64_t)strip * a.num_groups + grp;
        const uint32_t sv = __ldg(a.scales + meta * 8 + g);
        const uint32_t zv = __ldg(a.zeros + meta * 2 + (g >> 2));
        const uint32_t s_lo = w4p_splat_lo(sv), s_hi = w4p_splat_hi(sv);
        const uint32_t z2 = w4_nibbles<T, 0x000F000Fu>(zv >> zero_shift);
        const uint32_t z_lo = w4p_splat_lo(z2), z_hi = w4p_splat_hi(z2);

        const uint32_t words[4] = {wv.x, wv.y, wv.z, wv.w};
        uint16_t *out = a.dense + ((int64_t)strip * W4_STRIP_ROWS + g) * a.ldd + kt * W4_TILE_K;
        /* row g (nibble shift 0, scale/zero low halves), then row g+8 (shift
         * 4, high halves): one row at a time keeps 8 values live, not 16. */
        w4p_dequant_store_row<T>(words, 0, z_lo, s_lo, t, out);
        w4p_dequant_store_row<T>(words, 4, z_hi, s_hi, t, out + 8 * a.ldd);
        kt += step_kt;
        strip += step_strips;
        if (kt >= ktiles) {
            kt -= ktiles;
            strip++;
        }
    }
}

/* ---- host: chunk plan, x packing, dequant + GEMM per chunk --------------- */

/* Rows of W per chunk: a multiple of 64 (the packed row padding, so a chunk
 * is whole CTA-row groups of strips), balanced over the chunks and rounded
 * to the GEMM's 256-row tile when that keeps within the cap. */
static int64_t w4p_chunk_rows(int64_t n_pad, int64_t row_bytes, size_t ws_limit)
{
    int64_t rows = (int64_t)(W4P_CHUNK_BUDGET_BYTES / (size_t)row_bytes) / 64 * 64;
    if (rows < W4P_CHUNK_FILL_ROWS) {
        int64_t fill = W4P_CHUNK_FILL_ROWS < n_pad ? W4P_CHUNK_FILL_ROWS : n_pad;
        int64_t cap = (int64_t)(W4P_CHUNK_HARD_CAP_BYTES / (size_t)row_bytes) / 64 * 64;
        int64_t want = fill < cap ? fill : cap;
        if (want > rows) rows = want;
    }
    int64_t ws_rows = (int64_t)(ws_limit / (size_t)row_bytes) / 64 * 64;
    if (rows > ws_rows) rows = ws_rows;
    if (rows < 64) rows = 64;
    if (rows >= n_pad) return n_pad;
    int64_t chunks = cuops_ceil_div(n_pad, rows);
    int64_t even = cuops_ceil_div(n_pad, chunks);
    int64_t by256 = cuops_ceil_div(even, 256) * 256;
    int64_t by64 = cuops_ceil_div(even, 64) * 64;
    return by256 <= rows ? by256 : (by64 <= rows ? by64 : rows);
}

cuops_status_t w4a16_launch_prefill_dequant_gemm(struct cuops_handle *h,
                                                 const cuops_w4a16_desc_t *d,
                                                 const w4_geometry_t *geo,
                                                 const char **kernel_name)
{
    static const char *const name = "w4a16_dequant_gemm";
    *kernel_name = name;
    if (!cuops_aligned(d->x, 2) || !cuops_aligned(d->y, 2))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: x and y must be aligned to their 2-byte elements", name);

    const int64_t ldd = geo->ktiles * W4_TILE_K;
    const int64_t row_bytes = ldd * 2;
    if (ldd > (int64_t)0x7fffffff)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "%s: k must be below 2^31", name);
    const int64_t n_pad = geo->strips * W4_STRIP_ROWS;

    /* x is read by TMA in place when it can be; otherwise packed once here
     * (not once per chunk, which is what the GEMM's own packing would do). */
    const bool pack_x = !cuops_sm90_tma_ok(d->x, d->ldx);
    const int64_t ldx_packed = cuops_sm90_packed_ld(d->k);
    if (pack_x && d->m > (int64_t)(SIZE_MAX / 4) / ldx_packed)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "%s: m %lld too large to pack x", name,
                          (long long)d->m);
    const size_t x_bytes = pack_x ? cuops_align256((size_t)d->m * (size_t)ldx_packed * 2u) : 0;

    /* a user workspace may start anywhere: 256 bytes of slack to align it */
    size_t ws_limit = SIZE_MAX;
    if (h->user_workspace)
        ws_limit = h->user_workspace_bytes > x_bytes + 256 ? h->user_workspace_bytes - x_bytes - 256
                                                           : 0;
    const int64_t rows = w4p_chunk_rows(n_pad, row_bytes, ws_limit);
    const size_t chunk_bytes = (size_t)rows * (size_t)row_bytes;

    void *ws_raw = NULL;
    cuops_status_t st = cuops_cuda_workspace(h, x_bytes + chunk_bytes + 256, &ws_raw);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    uint8_t *ws = (uint8_t *)(((uintptr_t)ws_raw + 255) & ~(uintptr_t)255);
    uint16_t *dense = (uint16_t *)(ws + x_bytes);

    const void *x = d->x;
    int64_t ldx = d->ldx;
    if (pack_x) {
        st = cuops_sm90_pack_kmajor(h, d->x, d->ldx, 1, d->m, d->k, ws, ldx_packed);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        x = ws;
        ldx = ldx_packed;
    }

    w4p_dequant_args_t a;
    a.ktiles = geo->ktiles;
    /* the kernel's column and group arithmetic is 32-bit: a group wider
     * than the row is one group (the index clamps to the last) */
    a.group_size = geo->group_size < ldd ? geo->group_size : ldd;
    a.num_groups = geo->num_groups;
    a.dense = dense;
    a.ldd = ldd;

    cuops_options_t gemm_opt;
    memset(&gemm_opt, 0, sizeof gemm_opt); /* the GEMM's own choice */
    cudaStream_t stream = cuops_stream(h);
    const uint8_t *packed = (const uint8_t *)d->packed;
    const int64_t sms = h->num_sms > 0 ? h->num_sms : 132;

    /* Stream order makes reusing the one chunk buffer safe: the dequant of
     * chunk i+1 starts after the GEMM of chunk i has finished reading it. */
    for (int64_t row0 = 0; row0 < d->n; row0 += rows) {
        const int64_t chunk_rows = rows < n_pad - row0 ? rows : n_pad - row0;
        const int64_t strip0 = row0 / W4_STRIP_ROWS;
        const int64_t chunk_strips = chunk_rows / W4_STRIP_ROWS;
        a.tiles = (const uint4 *)packed + strip0 * geo->ktiles * 32;
        a.scales = (const uint32_t *)(packed + geo->scale_offset) + strip0 * geo->num_groups * 8;
        a.zeros = (const uint32_t *)(packed + geo->zero_offset) + strip0 * geo->num_groups * 2;
        a.lane_chunks = chunk_strips * geo->ktiles * 32;
        int64_t blocks = cuops_ceil_div(a.lane_chunks, W4P_THREADS);
        /* one resident wave (W4P_MIN_BLOCKS per SM), grid-striding */
        if (blocks > sms * W4P_MIN_BLOCKS) blocks = sms * W4P_MIN_BLOCKS;
        if (d->act_type == CUOPS_DTYPE_F16)
            w4p_dequant_kernel<__half><<<(unsigned)blocks, W4P_THREADS, 0, stream>>>(a);
        else
            w4p_dequant_kernel<__nv_bfloat16><<<(unsigned)blocks, W4P_THREADS, 0, stream>>>(a);
        st = cuops_cuda_check_launch(h, "w4p_dequant_kernel");
        if (st != CUOPS_STATUS_SUCCESS) return st;

        cuops_gemm_desc_t g;
        memset(&g, 0, sizeof g);
        g.trans_a = CUOPS_OP_N;
        g.trans_b = CUOPS_OP_T;
        g.m = d->m;
        g.n = d->n - row0 < chunk_rows ? d->n - row0 : chunk_rows;
        g.k = d->k;
        g.alpha = 1.0f;
        g.beta = 0.0f;
        g.a = x;
        g.lda = ldx;
        g.b = dense;
        g.ldb = ldd;
        g.c = (uint16_t *)d->y + row0;
        g.ldc = d->ldy;
        g.ab_type = d->act_type;
        g.c_type = d->act_type;
        st = cuops_cuda_gemm(h, &g, &gemm_opt);
        if (st != CUOPS_STATUS_SUCCESS) return st;
    }
    h->last_kernel = name;
    return CUOPS_STATUS_SUCCESS;
}
