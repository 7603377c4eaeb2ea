/*
 * w4a16_wgmma.cuh - what the W4A16 kernels that feed wgmma from registers
 * share (w4a16_prefill_wgmma.cu, w4a16_decode_wgmma.cu): one 64-row x 64-k
 * block of the packed int4 weight, read from shared memory and dequantized
 * into the four A register sets of its four k16 steps, and the register
 * keep-alive that makes those sets safe to reuse.
 *
 * The packed layout (w4a16_layout.cuh) lets lane t's four words hold the
 * physical columns 16t..16t+15 of the 64-wide tile and treats them as that
 * lane's k positions of all four k16 steps. wgmma reads x in natural order,
 * so each lane reads, for k16 step j, words t/2 and 2 + t/2 of lane (g, j)'s
 * 16-byte chunk (physical columns 16j + 2t + {0,1} and 16j + 8 + 2t +
 * {0,1}). Column 16j + c sits in word c/4 of lane j at nibble (c&1)*4 +
 * ((c>>1)&1)*2 + row_sel, so for lane t the pair (2t, 2t+1) is the nibble
 * pair at bit 8*(t&1) (row g) and 8*(t&1) + 4 (row g+8): one shift, then the
 * usual one-LOP3 magic-number conversion.
 */
#ifndef CUOPS_W4A16_WGMMA_CUH
#define CUOPS_W4A16_WGMMA_CUH

#include "cuda/common/ptx_sm90.cuh"
#include "cuda/gemm/gemm_sm90.h"
#include "cuda/quant/w4a16_layout.cuh"
#include "cuda/quant/w4a16_pair_ops.cuh"

#if CUOPS_SM90A_DEVICE

/* (q - z) * s for the nibble pair at bits 0 and 16 of w (z already in magic
 * form, both in both halves). */
template <typename T>
static __device__ __forceinline__ uint32_t w4f_dequant(uint32_t w, uint32_t z, uint32_t s)
{
    return w4_mul2(T(), w4_sub2(T(), w4_nibbles<T, 0x000F000Fu>(w), z), s);
}


static __device__ __forceinline__ uint32_t w4f_lds32(uint32_t addr)
{
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr));
    return v;
}

/* The A registers of the four k16 steps of one 64 x 64 block: `qt` is this
 * lane's address in the block's strip tile (strip base + g*64 + 4*(t/2)),
 * pair_shift = 8*(t&1); z_lo/z_hi and s_lo/s_hi the zero (magic form) and
 * scale of rows g and g+8, each in both halves. */
template <typename T>
static __device__ __forceinline__ void w4f_load_a(uint32_t (&a)[4][4], uint32_t qt,
                                                  uint32_t pair_shift, uint32_t z_lo,
                                                  uint32_t z_hi, uint32_t s_lo, uint32_t s_hi)
{
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const uint32_t lo = w4f_lds32(qt + 16 * j) >> pair_shift;
        const uint32_t hi = w4f_lds32(qt + 16 * j + 8) >> pair_shift;
        a[j][0] = w4f_dequant<T>(lo, z_lo, s_lo);
        a[j][1] = w4f_dequant<T>(lo >> 4, z_hi, s_hi);
        a[j][2] = w4f_dequant<T>(hi, z_lo, s_lo);
        a[j][3] = w4f_dequant<T>(hi >> 4, z_hi, s_hi);
    }
}

/* The zero (magic form) and scale of rows g and g+8, each in both halves,
 * from the lane's zero word and scale pair of a block. */
template <typename T>
static __device__ __forceinline__ void w4f_block_meta(uint32_t zv, uint32_t sv, uint32_t zero_shift,
                                                      uint32_t &z_lo, uint32_t &z_hi,
                                                      uint32_t &s_lo, uint32_t &s_hi)
{
    const uint32_t z2 = w4_nibbles<T, 0x000F000Fu>(zv >> zero_shift);
    z_lo = __byte_perm(z2, 0, 0x1010);
    z_hi = __byte_perm(z2, 0, 0x3232);
    s_lo = __byte_perm(sv, 0, 0x1010);
    s_hi = __byte_perm(sv, 0, 0x3232);
}

/* w4f_block_meta for w4f_dequant_ahead: in f16, z_hi is 64 + z (0x5400 with
 * z in mantissa bits 4-7) in both halves. */
template <typename T>
static __device__ __forceinline__ void w4f_block_meta_ahead(uint32_t zv, uint32_t sv,
                                                            uint32_t zero_shift, uint32_t &z_lo,
                                                            uint32_t &z_hi, uint32_t &s_lo,
                                                            uint32_t &s_hi)
{
    w4f_block_meta<T>(zv, sv, zero_shift, z_lo, z_hi, s_lo, s_hi);
    if (w4_type<T>::is_f16) {
        /* row g + 8's zero at bits 16-19 of zv >> zero_shift, to bits 4-7 */
        z_hi = __byte_perm(w4_nibbles_into<0x000000F0u, 0x00005400u>((zv >> zero_shift) >> 12), 0,
                           0x1010);
    }
}

/* The eight words of one 64 x 64 block that w4f_load_a reads (lo and hi of
 * each k16 step, at qt + 16j and qt + 16j + 8), unshifted, for
 * w4f_dequant_words. */
static __device__ __forceinline__ void w4f_lds_words(uint32_t (&w)[8], uint32_t qt)
{
#pragma unroll
    for (int j = 0; j < 4; j++) {
        w[2 * j] = w4f_lds32(qt + 16 * j);
        w[2 * j + 1] = w4f_lds32(qt + 16 * j + 8);
    }
}

/* PRMT selector for w4f_dequant_words: the lane's nibble pairs sit in bytes
 * t&1 and 2 + (t&1) of both words; gathered as [lo, hi, lo, hi] */
static __device__ __forceinline__ uint32_t w4f_pair_select(int tq)
{
    return (tq & 1) ? 0x7351u : 0x6240u;
}

/* w4f_load_a's result from the words it reads (w4f_lds_words) and the
 * metadata in w4f_block_meta_ahead's form: per k16 step one PRMT gathers the
 * lane's two bytes of each word into v = [lo, hi, lo, hi], so that rows g
 * take the low nibbles of v (the lo word's pair) and of v >> 8 (the hi
 * word's), rows g + 8 the high ones, where f16 reads them through 64.0
 * without a shift (w4f_dequant_ahead). Two shifts fewer per step than the
 * pair shift and the shift by 4 of w4f_load_a in f16 (one PRMT and one
 * shift instead of four shifts), the same count in bf16; the same bits. */
template <typename T>
static __device__ __forceinline__ void w4f_dequant_words(uint32_t (&a)[4][4], const uint32_t (&w)[8],
                                                         uint32_t pair_select, uint32_t z_lo,
                                                         uint32_t z_hi, uint32_t s_lo, uint32_t s_hi)
{
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const uint32_t v = __byte_perm(w[2 * j], w[2 * j + 1], pair_select);
        const uint32_t v8 = v >> 8;
        a[j][0] = w4f_dequant<T>(v, z_lo, s_lo);
        a[j][2] = w4f_dequant<T>(v8, z_lo, s_lo);
        if (w4_type<T>::is_f16) {
            a[j][1] = w4_mul2(T(), w4_sub2(T(), w4_nibbles_into<0x00F000F0u, 0x54005400u>(v), z_hi), s_hi);
            a[j][3] = w4_mul2(T(), w4_sub2(T(), w4_nibbles_into<0x00F000F0u, 0x54005400u>(v8), z_hi), s_hi);
        } else {
            a[j][1] = w4f_dequant<T>(v >> 4, z_hi, s_hi);
            a[j][3] = w4f_dequant<T>(v >> 12, z_hi, s_hi);
        }
    }
}

#endif /* CUOPS_SM90A_DEVICE */

/* ---- host ------------------------------------------------------------------- */

/* The TMA map of x (K-major, 64 x box_rows boxes, 128-byte swizzle): over x
 * itself when TMA can read it in place, else over a K-major copy packed into
 * the workspace first. `name` heads the error message. */
static inline cuops_status_t w4_wgmma_x_map(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                            uint32_t box_rows, const char *name, CUtensorMap *map)
{
    const void *x = d->x;
    int64_t ldx = d->ldx;
    if (!cuops_sm90_tma_ok(d->x, d->ldx)) {
        const int64_t ldp = cuops_sm90_packed_ld(d->k);
        if (d->m > (int64_t)(SIZE_MAX / 4) / ldp)
            return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "%s: m %lld too large to pack x", name,
                              (long long)d->m);
        void *ws_raw = NULL;
        cuops_status_t st = cuops_cuda_workspace(h, (size_t)d->m * (size_t)ldp * 2u + 256, &ws_raw);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        void *ws = (void *)(((uintptr_t)ws_raw + 255) & ~(uintptr_t)255);
        st = cuops_sm90_pack_kmajor(h, d->x, d->ldx, 1, d->m, d->k, ws, ldp);
        if (st != CUOPS_STATUS_SUCCESS) return st;
        x = ws;
        ldx = ldp;
    }
    return cuops_sm90_encode_kmajor(h, map, x, d->act_type, d->m, d->k, ldx, box_rows);
}

/* The kernel parameters both wgmma kernels share (P: w4f_params_t or
 * w4d_params_t, zeroed by the caller): the packed regions, y, the sizes and
 * the 64-k blocks per quantization group. */
template <typename P>
static inline void w4_wgmma_common_params(P *p, const cuops_w4a16_desc_t *d,
                                          const w4_geometry_t *geo)
{
    const uint8_t *packed = (const uint8_t *)d->packed;
    p->tiles = packed;
    p->scales = (const uint32_t *)(packed + geo->scale_offset);
    p->zeros = (const uint32_t *)(packed + geo->zero_offset);
    p->y = (uint16_t *)d->y;
    p->ldy = d->ldy;
    p->m = (int)d->m;
    p->n = (int)d->n;
    p->ktiles = (int)geo->ktiles;
    p->strips = (int)geo->strips;
    p->num_groups = (int)geo->num_groups;
    p->tiles_per_group = geo->num_groups == 1 ? p->ktiles : (int)(geo->group_size / W4_TILE_K);
}

#endif /* CUOPS_W4A16_WGMMA_CUH */
