/*
 * w4a16_mma_splitk.cu - W4A16 GEMM with the int4 weight streamed straight
 * from HBM into mma.sync A registers (never written out dense), split over K
 * across CTAs so that every SM streams, with a deterministic fp32 reduction.
 *
 * Why this shape of kernel. At decode (m <= 64) the op is a weight stream:
 * N=14336, K=4096 is 29 MB of int4 against 8 KB..512 KB of activations, and
 * the time is bytes / bandwidth. So:
 *  - the weight is the mma A operand (16 weight rows) and the activations are
 *    B (8 rows of x per mma), computing y^T = W x^T: m = 1..8 costs one mma
 *    per 16x16 weight block instead of the two that x-as-A would need;
 *  - each warp owns one 16-row strip and walks its K range tile by tile; a
 *    tile (16 rows x 64 k, 512 B) is one 16-byte ld.global.nc.L1::no_allocate
 *    per lane (read once: keep it out of L1, where x lives);
 *  - U tiles (U = 8 at m <= 16) are loaded before the first is used: Little's
 *    law at ~4.3 TB/s and ~1 us of loaded latency wants ~32 KB in flight per
 *    SM, i.e. 16 warps x 4 KB;
 *  - int4 -> f16 is (nibble | 0x6400) read as half = 1024 + q, exact since
 *    f16 has a unit ulp in [1024, 2048); minus (1024 + zero) is exactly q - z;
 *    times the scale rounds once: the result is bit-identical to the dequant
 *    formula rounded to f16. bf16 uses 0x4300 (128 + q, unit ulp in
 *    [128, 256)) the same way;
 *  - K is split across CTAs (grid.y) when the N tiles alone cannot fill the
 *    SMs; every split writes its fp32 partials to the workspace and a second
 *    kernel adds them in split order (bitwise reproducible).
 * The same kernel walks m in blocks of 64 rows (grid.z) for larger m: correct,
 * but it re-streams the weight per block and moves 16x the weight bytes of x
 * through L1 per tile, so it is far from a tuned prefill kernel.
 */
#include <string.h>

#include "cuda/quant/w4a16_layout.cuh"
#include "cuda/quant/w4a16_pair_ops.cuh"

typedef struct w4a16_args {
    const uint16_t *x;
    int64_t ldx;
    const uint8_t *packed;
    void *y;
    int64_t ldy;
    float *ws; /* [splits][m][strips*16] partials, or NULL when splits == 1 */
    int64_t m, n, k, group_size, num_groups, strips, ktiles;
    int64_t scale_offset, zero_offset;
    int64_t tiles_per_split;
    int64_t m_blocks;
    int x_vec; /* x 16-byte aligned and ldx % 8 == 0: 16-byte loads of x */
} w4a16_args_t;

/* ---- per-type constants and ops ---------------------------------------- */

/* (biased - bias) * scale: exact subtraction, one rounding. */
static __device__ __forceinline__ uint32_t w4_dequant_pair(uint32_t biased, __half2 bias, __half2 scale)
{
    return w4_as_u32(__hmul2(__hsub2(w4_as_pair<__half2>(biased), bias), scale));
}
static __device__ __forceinline__ uint32_t w4_dequant_pair(uint32_t biased, __nv_bfloat162 bias,
                                                           __nv_bfloat162 scale)
{
    return w4_as_u32(__hmul2(__hsub2(w4_as_pair<__nv_bfloat162>(biased), bias), scale));
}

static __device__ __forceinline__ __half2 w4_splat_lo(__half2 p) { return __low2half2(p); }
static __device__ __forceinline__ __half2 w4_splat_hi(__half2 p) { return __high2half2(p); }
static __device__ __forceinline__ __nv_bfloat162 w4_splat_lo(__nv_bfloat162 p) { return __low2bfloat162(p); }
static __device__ __forceinline__ __nv_bfloat162 w4_splat_hi(__nv_bfloat162 p) { return __high2bfloat162(p); }

static __device__ __forceinline__ void w4_mma(__half, float c[4], uint32_t a0, uint32_t a1,
                                              uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
static __device__ __forceinline__ void w4_mma(__nv_bfloat16, float c[4], uint32_t a0, uint32_t a1,
                                              uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* The weight is read exactly once: do not let it evict x from L1. */
static __device__ __forceinline__ uint4 w4_load_stream(const uint4 *p)
{
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}

/* x[row][col0 .. col0+15] as 8 words (word w = columns 2w, 2w+1), zero past
 * m and past k. Word 2j and 2j+1 are the B registers of k16 step j. */
static __device__ __forceinline__ void w4_load_x(const w4a16_args_t *a, int64_t row, int64_t col0,
                                                 uint32_t xr[8])
{
    if (row >= a->m || col0 >= a->k) {
#pragma unroll
        for (int w = 0; w < 8; w++) xr[w] = 0;
        return;
    }
    const uint16_t *base = a->x + row * a->ldx + col0;
    if (a->x_vec && col0 + 16 <= a->k) {
        uint4 lo = __ldg((const uint4 *)base);
        uint4 hi = __ldg((const uint4 *)base + 1);
        xr[0] = lo.x; xr[1] = lo.y; xr[2] = lo.z; xr[3] = lo.w;
        xr[4] = hi.x; xr[5] = hi.y; xr[6] = hi.z; xr[7] = hi.w;
        return;
    }
    int64_t valid = a->k - col0; /* >= 1 here */
#pragma unroll
    for (int w = 0; w < 8; w++) {
        uint32_t lo = (2 * w < valid) ? (uint32_t)__ldg(base + 2 * w) : 0u;
        uint32_t hi = (2 * w + 1 < valid) ? (uint32_t)__ldg(base + 2 * w + 1) : 0u;
        xr[w] = lo | (hi << 16);
    }
}

/* ---- the GEMM ------------------------------------------------------------ */

/* 4 warps per CTA, one 16-row strip each; grid = (strips/4, splits, m blocks).
 * M8 = 8-row fragments of x per m block (m block = 8*M8 rows); U = tiles
 * loaded ahead per batch. */
template <typename T, int M8, int U, int MIN_BLOCKS>
__global__ void __launch_bounds__(128, MIN_BLOCKS) w4a16_mma_splitk_kernel(w4a16_args_t a)
{
    typedef typename w4_type<T>::pair P;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const int64_t strip = (int64_t)blockIdx.x * 4 + warp;
    const int64_t kt_begin = (int64_t)blockIdx.y * a.tiles_per_split;
    const int64_t kt_end = min(kt_begin + a.tiles_per_split, a.ktiles);

    const uint4 *wtiles = (const uint4 *)a.packed + strip * a.ktiles * 32 + lane;
    const uint32_t *scales =
        (const uint32_t *)(a.packed + a.scale_offset) + strip * a.num_groups * 8 + g;
    const uint32_t *zeros =
        (const uint32_t *)(a.packed + a.zero_offset) + strip * a.num_groups * 2 + (g >> 2);
    const int zero_shift = 4 * (g & 3);

    for (int64_t mb = blockIdx.z; mb < a.m_blocks; mb += gridDim.z) {
        const int64_t mrow0 = mb * 8 * M8;
        float acc[M8][4];
#pragma unroll
        for (int i = 0; i < M8; i++)
            acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;

        for (int64_t kt0 = kt_begin; kt0 < kt_end; kt0 += U) {
            /* Issue the whole batch of weight and metadata loads first. */
            uint4 wv[U];
            uint32_t sv[U], zv[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                int64_t kt = kt0 + u;
                if (kt < kt_end) {
                    wv[u] = w4_load_stream(wtiles + kt * 32);
                    int64_t grp = w4_lane_group(kt, t, a.group_size, a.num_groups);
                    sv[u] = __ldg(scales + grp * 8);
                    zv[u] = __ldg(zeros + grp * 2);
                } else {
                    wv[u] = make_uint4(0, 0, 0, 0);
                    sv[u] = zv[u] = 0;
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                int64_t kt = kt0 + u;
                if (kt >= kt_end) break; /* warp-uniform */
                uint32_t xr[M8][8];
#pragma unroll
                for (int i = 0; i < M8; i++)
                    w4_load_x(&a, mrow0 + 8 * i + g, kt * W4_TILE_K + 16 * t, xr[i]);

                P s2 = w4_as_pair<P>(sv[u]);
                P s_lo = w4_splat_lo(s2), s_hi = w4_splat_hi(s2);
                P z2 = w4_as_pair<P>(w4_nibbles<T, 0x000F000Fu>(zv[u] >> zero_shift));
                P z_lo = w4_splat_lo(z2), z_hi = w4_splat_hi(z2);
                uint32_t words[4] = {wv[u].x, wv[u].y, wv[u].z, wv[u].w};
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    uint32_t w = words[j];
                    /* pair i = nibbles i and i+4: rows g, g+8, g, g+8 */
                    uint32_t a0 = w4_dequant_pair(w4_nibbles<T, 0x000F000Fu>(w), z_lo, s_lo);
                    uint32_t a1 = w4_dequant_pair(w4_nibbles<T, 0x000F000Fu>(w >> 4), z_hi, s_hi);
                    uint32_t a2 = w4_dequant_pair(w4_nibbles<T, 0x000F000Fu>(w >> 8), z_lo, s_lo);
                    uint32_t a3 = w4_dequant_pair(w4_nibbles<T, 0x000F000Fu>(w >> 12), z_hi, s_hi);
#pragma unroll
                    for (int i = 0; i < M8; i++)
                        w4_mma(T(), acc[i], a0, a1, a2, a3, xr[i][2 * j], xr[i][2 * j + 1]);
                }
            }
        }

        /* c0,c1: weight row g, x rows 2t, 2t+1; c2,c3: weight row g+8. */
        const int64_t col0 = strip * W4_STRIP_ROWS + g;
#pragma unroll
        for (int i = 0; i < M8; i++) {
#pragma unroll
            for (int c = 0; c < 4; c++) {
                int64_t row = mrow0 + 8 * i + 2 * t + (c & 1);
                int64_t col = col0 + 8 * (c >> 1);
                if (row >= a.m || col >= a.n) continue;
                if (a.ws) {
                    int64_t ld = a.strips * W4_STRIP_ROWS;
                    a.ws[((int64_t)blockIdx.y * a.m + row) * ld + col] = acc[i][c];
                } else {
                    ((T *)a.y)[row * a.ldy + col] = cuops_from_float<T>(acc[i][c]);
                }
            }
        }
    }
}

/* y = sum over splits of the partials, in split order (reproducible). */
template <typename T>
__global__ void w4a16_splitk_reduce_kernel(const float *ws, int splits, int64_t m, int64_t n,
                                           int64_t ld_ws, T *y, int64_t ldy)
{
    int64_t total = m * n;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int64_t row = idx / n, col = idx - row * n;
        const float *p = ws + row * ld_ws + col;
        float s = 0.0f;
        for (int sp = 0; sp < splits; sp++) s += p[(int64_t)sp * m * ld_ws];
        y[row * ldy + col] = cuops_from_float<T>(s);
    }
}

/* ---- launch -------------------------------------------------------------- */

template <typename T, int M8>
static cuops_status_t w4a16_launch_typed(struct cuops_handle *h, const w4a16_args_t *a,
                                         int splits, dim3 grid, const char *name)
{
    cudaStream_t st = cuops_stream(h);
    /* Registers: M8 = 1, 2 hold 8 tiles of weights (32 regs) and fit 4 CTAs
     * (16 warps) per SM; M8 = 8 holds 64 x registers per tile, so fewer
     * tiles ahead and fewer CTAs. */
    if constexpr (M8 <= 2)
        w4a16_mma_splitk_kernel<T, M8, 8, 4><<<grid, 128, 0, st>>>(*a);
    else if constexpr (M8 == 4)
        w4a16_mma_splitk_kernel<T, M8, 4, 4><<<grid, 128, 0, st>>>(*a);
    else
        w4a16_mma_splitk_kernel<T, M8, 2, 2><<<grid, 128, 0, st>>>(*a);
    cuops_status_t s = cuops_cuda_check_launch(h, name);
    if (s != CUOPS_STATUS_SUCCESS || splits == 1) return s;
    int64_t total = a->m * a->n;
    int64_t blocks = cuops_ceil_div(total, 256);
    int64_t cap = (int64_t)(h->num_sms > 0 ? h->num_sms : 132) * 8;
    if (blocks > cap) blocks = cap;
    w4a16_splitk_reduce_kernel<T><<<(unsigned)blocks, 256, 0, st>>>(
        a->ws, splits, a->m, a->n, a->strips * W4_STRIP_ROWS, (T *)a->y, a->ldy);
    return cuops_cuda_check_launch(h, name);
}

cuops_status_t w4a16_launch_mma_splitk(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                       const w4_geometry_t *geo, int m_frags, int splits,
                                       float *ws, const char **kernel_name)
{
    w4a16_args_t a;
    a.x = (const uint16_t *)d->x;
    a.ldx = d->ldx;
    a.packed = (const uint8_t *)d->packed;
    a.y = d->y;
    a.ldy = d->ldy;
    a.ws = splits > 1 ? ws : NULL;
    a.m = d->m;
    a.n = geo->n;
    a.k = geo->k;
    a.group_size = geo->group_size;
    a.num_groups = geo->num_groups;
    a.strips = geo->strips;
    a.ktiles = geo->ktiles;
    a.scale_offset = geo->scale_offset;
    a.zero_offset = geo->zero_offset;
    a.tiles_per_split = cuops_ceil_div(geo->ktiles, splits);
    a.m_blocks = cuops_ceil_div(d->m, 8 * (int64_t)m_frags);
    a.x_vec = cuops_aligned(d->x, 16) && (d->ldx % 8 == 0);

    dim3 grid((unsigned)(geo->strips / 4), (unsigned)splits,
              (unsigned)(a.m_blocks < 65535 ? a.m_blocks : 65535));
    static const char *const names[2][4] = {
        {"w4a16_mma_splitk_f16_m8", "w4a16_mma_splitk_f16_m16", "w4a16_mma_splitk_f16_m32",
         "w4a16_mma_splitk_f16_m64"},
        {"w4a16_mma_splitk_bf16_m8", "w4a16_mma_splitk_bf16_m16", "w4a16_mma_splitk_bf16_m32",
         "w4a16_mma_splitk_bf16_m64"}};
    int ti = d->act_type == CUOPS_DTYPE_BF16;
    int mi = m_frags == 1 ? 0 : m_frags == 2 ? 1 : m_frags == 4 ? 2 : 3;
    const char *name = names[ti][mi];
    *kernel_name = name;
    if (ti == 0) {
        switch (m_frags) {
        case 1: return w4a16_launch_typed<__half, 1>(h, &a, splits, grid, name);
        case 2: return w4a16_launch_typed<__half, 2>(h, &a, splits, grid, name);
        case 4: return w4a16_launch_typed<__half, 4>(h, &a, splits, grid, name);
        default: return w4a16_launch_typed<__half, 8>(h, &a, splits, grid, name);
        }
    }
    switch (m_frags) {
    case 1: return w4a16_launch_typed<__nv_bfloat16, 1>(h, &a, splits, grid, name);
    case 2: return w4a16_launch_typed<__nv_bfloat16, 2>(h, &a, splits, grid, name);
    case 4: return w4a16_launch_typed<__nv_bfloat16, 4>(h, &a, splits, grid, name);
    default: return w4a16_launch_typed<__nv_bfloat16, 8>(h, &a, splits, grid, name);
    }
}
