/*
 * w4a16_layout.cuh - the prepacked int4 weight layout that the CUDA W4A16
 * GEMM reads, shared by the prepack (w4_prepack.cu), the kernels
 * (w4a16_mma_splitk.cu) and the dispatch (w4a16_dispatch.cu).
 *
 * The layout is built around one mma.sync m16n8k16 with the weight as the A
 * operand (16 weight rows x 16 k) and the activations as B (k16 x 8 rows of
 * x): y^T = W x^T. A "strip" is 16 weight rows; a "tile" is 16 rows x 64 k =
 * 512 bytes of int4, exactly one 16-byte load per lane of a warp. Lane
 * l = 4*g + t (g = l/4, t = l%4) owns rows g and g+8 of the strip and the 16
 * physical columns [64*tile + 16*t, +16). Its 4 words are its 4 k16 steps:
 * word j holds columns c = 64*tile + 16*t + 4*j + {0,1,2,3} of both rows,
 * nibble (c&1)*4 + ((c>>1)&1)*2 + row_sel, so that (word >> 4*i) & 0x000F000F
 * yields mma A register i as two nibbles in the low bits of two 16-bit halves.
 * The mma sums over its 16 logical k in any order, so the same physical
 * columns feed the lane's B registers (x row g, 32 contiguous bytes).
 *
 * Because each lane's 16 physical columns are contiguous and start at a
 * multiple of 16, one quantization group covers them whenever group_size is
 * a multiple of 16 (or the row is one group): each lane loads one scale pair
 * and one zero word per tile.
 *
 * Regions of the packed buffer (all offsets multiples of 16 bytes):
 *   weights [strips][ktiles][32 lanes][16 B]
 *   scales  [strips][groups][8] pairs (scale(row g), scale(row g+8)) of act_type
 *   zeros   [strips][groups][2] u32: word w, nibble gg = zero(row 4w+gg),
 *           nibble gg+4 = zero(row 4w+gg+8)
 * Rows past n are zero (nibble 0, zero 0, scale 0); columns past k hold the
 * nibble equal to their group's zero point, so they dequantize to exactly 0.
 */
#ifndef CUOPS_W4A16_LAYOUT_CUH
#define CUOPS_W4A16_LAYOUT_CUH

#include "cuda/common/cuda_common.cuh"
#include "cuda/quant/w4a16_bulk_ring_form.h"

#define W4_STRIP_ROWS 16
#define W4_TILE_K 64
#define W4_TILE_BYTES 512
/* Weight rows per CTA of the GEMM: 4 warps x one strip. The packed row count
 * is padded to it so no warp ever reads past the weight region. */
#define W4_CTA_ROWS 64

typedef struct w4_geometry {
    int64_t n, k, group_size;
    int64_t num_groups;   /* ceil(k / group_size) */
    int64_t strips;       /* ceil(n / 64) * 4 */
    int64_t ktiles;       /* ceil(k / 64) */
    int64_t scale_offset; /* bytes from the start of the buffer */
    int64_t zero_offset;
    int64_t total_bytes;
} w4_geometry_t;

/* Shapes the layout serves: group_size a multiple of 16, or one group per
 * row (group_size >= k). Any n >= 1, k >= 1. Returns 0 when unsupported. */
static inline int w4_geometry_init(w4_geometry_t *g, int64_t n, int64_t k, int64_t group_size,
                                   cuops_dtype_t act)
{
    if (n < 1 || k < 1 || group_size < 1) return 0;
    if (act != CUOPS_DTYPE_F16 && act != CUOPS_DTYPE_BF16) return 0;
    if (group_size % 16 != 0 && group_size < k) return 0;
    /* keep every offset well inside int64 and grid sizes sane */
    if (n > ((int64_t)1 << 40) || k > ((int64_t)1 << 40)) return 0;
    int64_t strips = cuops_ceil_div(n, W4_CTA_ROWS) * (W4_CTA_ROWS / W4_STRIP_ROWS);
    int64_t groups = cuops_ceil_div(k, group_size);
    /* the regions must fit in int64 bytes: strips * (ktiles*512 + groups*40) */
    int64_t per_strip = cuops_ceil_div(k, W4_TILE_K) * W4_TILE_BYTES + groups * 40;
    if (per_strip > INT64_MAX / strips) return 0;
    g->n = n;
    g->k = k;
    g->group_size = group_size;
    g->num_groups = cuops_ceil_div(k, group_size);
    g->strips = strips;
    g->ktiles = cuops_ceil_div(k, W4_TILE_K);
    g->scale_offset = g->strips * g->ktiles * W4_TILE_BYTES;
    g->zero_offset = g->scale_offset + g->strips * g->num_groups * 32;
    g->total_bytes = g->zero_offset + g->strips * g->num_groups * 8;
    return 1;
}

/* log2 of the 64-k tiles per quantization group, for the kernels that find
 * a tile's group by a shift (the bulk and phase rings): 30 for one group
 * per row, -1 when the group size is not 64 * 2^p */
static inline int w4_tiles_per_group_log2(const w4_geometry_t *geo)
{
    if (geo->num_groups == 1) return 30;
    if (geo->group_size % W4_TILE_K != 0) return -1;
    const int64_t tpg = geo->group_size / W4_TILE_K;
    if (tpg & (tpg - 1)) return -1;
    int l = 0;
    while (((int64_t)1 << l) < tpg) l++;
    return l;
}

/* The kernel arguments the two producer-fed decode kernels share (A:
 * w4b_args_t or w4p_args_t, zeroed by the caller): the packed regions, y,
 * the sizes, whole strips per CTA and the tiles-per-group shift. */
template <typename A>
static inline void w4_ring_common_args(A *a, const cuops_w4a16_desc_t *d, const w4_geometry_t *geo,
                                       int64_t strips, int64_t strips_per_cta, int64_t stages)
{
    a->packed = (const uint8_t *)d->packed;
    a->y = d->y;
    a->ldy = d->ldy;
    a->n = d->n;
    a->scale_offset = geo->scale_offset;
    a->zero_offset = geo->zero_offset;
    a->ktiles = (int)geo->ktiles;
    a->num_groups = (int)geo->num_groups;
    a->m = (int)d->m;
    a->strips = (int)strips;
    a->strips_per_cta = (int)strips_per_cta;
    a->tpg_log2 = w4_tiles_per_group_log2(geo);
    a->stages = (int)stages;
}

/* The quantization group whose metadata lane t uses in a tile: the group of
 * its first column, clamped for the padding past k. */
static __host__ __device__ __forceinline__ int64_t w4_lane_group(int64_t ktile, int t,
                                                                 int64_t group_size,
                                                                 int64_t num_groups)
{
    int64_t grp = (ktile * W4_TILE_K + 16 * t) / group_size;
    return grp < num_groups ? grp : num_groups - 1;
}

/* The fp32 partials of an in-kernel split-K (the decode kernels): row_tiles
 * x splits tiles of tile_floats floats from the handle's workspace, 16-byte
 * aligned for the float4 reads of the reduction (a user workspace at any
 * address is rounded up), and one arrival counter per row tile
 * (cuops_cuda_counters: the handle's, or after the partials in a user
 * workspace; row_tiles <= W4A16_SPLITK_MAX_TILES). NOT_SUPPORTED when the
 * size overflows. */
#define W4A16_SPLITK_MAX_TILES CUOPS_COUNTERS_MAX
static inline cuops_status_t w4a16_splitk_partials(struct cuops_handle *h, int64_t row_tiles,
                                                   int64_t splits, int64_t tile_floats,
                                                   float **ws, unsigned **counters)
{
    if (tile_floats > INT64_MAX / 8 / splits / row_tiles)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "w4a16 (cuda): split-K workspace overflows");
    const size_t partial_bytes = (size_t)(row_tiles * splits * tile_floats) * 4;
    const size_t counter_bytes = cuops_cuda_counter_bytes(h, (size_t)row_tiles);
    void *p = NULL;
    cuops_status_t s = cuops_cuda_workspace_aligned(h, partial_bytes + counter_bytes, 16, &p);
    if (s != CUOPS_STATUS_SUCCESS) return s;
    *ws = (float *)p;
    return cuops_cuda_counters(h, (size_t)row_tiles, (uint8_t *)p + partial_bytes, counters);
}

/* Kernel launchers (w4a16_mma_splitk.cu). splits >= 1; ws holds
 * splits * m * strips * 16 floats when splits > 1. */
cuops_status_t w4a16_launch_mma_splitk(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                       const w4_geometry_t *geo, int m_frags, int splits,
                                       float *ws, const char **kernel_name);

/* The streaming decode kernel (w4a16_decode_stream.cu): m <= 64, group_size a
 * multiple of 64 or one group per row, x 16-byte aligned with ldx % 8 == 0.
 * forced_splits > 0 forces the split count; it takes its own workspace. */
int w4a16_decode_stream_serves(const cuops_w4a16_desc_t *d, const w4_geometry_t *geo);
cuops_status_t w4a16_launch_decode_stream(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                          const w4_geometry_t *geo, int64_t forced_splits,
                                          const char **kernel_name);

/* The per-warp register-pipeline decode kernel (w4a16_decode_warp.cu):
 * m <= 16, any group size of the layout, x 16-byte aligned with
 * ldx % 8 == 0, k < 2^29, n < 2^34. forced_splits > 0 forces the K split
 * across CTAs; it takes its own workspace. */
int w4a16_decode_warp_serves(const cuops_w4a16_desc_t *d, const w4_geometry_t *geo);
cuops_status_t w4a16_launch_decode_warp(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                        const w4_geometry_t *geo, int64_t forced_splits,
                                        const char **kernel_name);

/* The fused prefill kernel (w4a16_prefill_wgmma.cu, sm_90a): the weight
 * dequantized in registers as wgmma's A operand, x through TMA. Serves sm_90,
 * group_size a multiple of 64 or one group per row, m and k < 2^31, x and y
 * 2-byte aligned (x is packed into the workspace when TMA cannot read it).
 * words_in_registers: the int4 words go from global memory straight into
 * registers and each block is dequantized a block ahead (the variant
 * w4a16_prefill_wgmma_ahead) instead of through shared memory; that form
 * also cuts the tiles of a last, partly filled wave along k over the idle
 * SMs (forced_split > 0 sets the parts per tile, 1 = no split, 0 = its
 * own choice). */
int w4a16_prefill_wgmma_serves(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                               const w4_geometry_t *geo);
cuops_status_t w4a16_launch_prefill_wgmma(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                          const w4_geometry_t *geo, int words_in_registers,
                                          int forced_split, const char **kernel_name);

/* The decode kernel on wgmma (w4a16_decode_wgmma.cu, sm_90a): m <= 64, the
 * weight dequantized in registers as wgmma's A operand, x through TMA, K
 * split across a cluster and reduced in distributed shared memory. Serves
 * sm_90, group_size a multiple of 64 or one group per row, k < 2^31, x and y
 * 2-byte aligned. kt: 64-k blocks per pipeline stage (1: the variant
 * w4a16_decode_wgmma_kt1; else the default). forced_splits > 0 forces the
 * split count (at most 8). */
int w4a16_decode_wgmma_serves(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                              const w4_geometry_t *geo);
cuops_status_t w4a16_launch_decode_wgmma(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                         const w4_geometry_t *geo, int kt, int64_t forced_splits,
                                         const char **kernel_name);

/* The decode kernel fed by a producer thread through a shared-memory ring
 * of bulk copies (w4a16_decode_bulk_ring.cu, sm_90): m <= 8, group_size
 * 64 * 2^p or one group per row, x 16-byte aligned with ldx % 8 == 0, x
 * resident in shared memory beside the ring. math_warps: 16 (the variant
 * w4a16_decode_bulk_ring) or 8 (w4a16_decode_bulk_ring_w8); xsum (16 warps
 * only: w4a16_decode_bulk_ring_xsum): the tensor core takes the biased
 * nibbles and the zero point comes off afterwards through sums of x. */
int w4a16_decode_bulk_ring_serves(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                  const w4_geometry_t *geo);
/* Whether auto takes it (m <= 8) and in which form (W4B_AUTO_NONE / _PLAIN /
 * _XSUM): w4b_auto_form (w4a16_bulk_ring_form.h) for a call it serves. */
int w4a16_decode_bulk_ring_auto(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                const w4_geometry_t *geo);
cuops_status_t w4a16_launch_decode_bulk_ring(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                             const w4_geometry_t *geo, int math_warps, int xsum,
                                             const char **kernel_name);
/* The m <= 16 decode kernel with the bulk ring's stream and x streamed by
 * TMA in phases of 1024 k beside it (w4a16_decode_phase_ring.cu, sm_90):
 * group_size 64 * 2^p or one group per row, x and y 2-byte aligned.
 * math_warps: 16 (w4a16_decode_phase_ring) or 8 (_w8). */
int w4a16_decode_phase_ring_serves(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                   const w4_geometry_t *geo);
/* Whether auto takes it: 5 <= m <= 16, it serves the call, and each CTA gets
 * >= 3 strips or k <= 4096 (after w4a16_decode_bulk_ring_auto for m <= 8). */
int w4a16_decode_phase_ring_auto(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                 const w4_geometry_t *geo);
/* quads: 0 the form's own strip quads per pass, 1 one quad (_q1) */
cuops_status_t w4a16_launch_decode_phase_ring(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                              const w4_geometry_t *geo, int math_warps, int quads,
                                              int64_t forced_splits, const char **kernel_name);

#endif /* CUOPS_W4A16_LAYOUT_CUH */
