/*
 * gemm_sm90.h - what the Hopper GEMM's files share: TMA tensor-map encoding
 * (gemm_sm90_tma.cu) and the operand packing / k == 0 helpers
 * (gemm_sm90_pack.cu) that let the TMA + wgmma kernel (gemm_sm90.cu) serve
 * every transpose, leading dimension and pointer alignment; and the entry
 * points of the staged-epilogue / cluster kernels (gemm_sm90_cluster.cu)
 * that gemm_sm90.cu's table lists.
 */
#ifndef CUOPS_GEMM_SM90_H
#define CUOPS_GEMM_SM90_H

#include <cuda.h> /* CUtensorMap and its enums only; libcuda is never linked */

#include "cuda/common/cuda_common.cuh"

/* A 2D K-major tensor map over `rows` rows of `k` 16-bit elements, row
 * stride `ld` elements, boxes of 64 (K, 128 bytes) x box_rows with 128-byte
 * swizzle, out-of-bounds elements read as zero. Requires base 16-byte aligned
 * and ld*2 a multiple of 16 (cuops_sm90_tma_ok). */
cuops_status_t cuops_sm90_encode_kmajor(struct cuops_handle *h, CUtensorMap *map,
                                        const void *base, cuops_dtype_t type, int64_t rows,
                                        int64_t k, int64_t ld, uint32_t box_rows);

/* Whether a 16-bit operand at `base` with row stride `ld` elements can be
 * read by TMA directly. */
static inline int cuops_sm90_tma_ok(const void *base, int64_t ld)
{
    return cuops_aligned(base, 16) && ((ld * 2) % 16) == 0;
}

/* Whether C (element size es) can be written by TMA store: 16-byte-aligned
 * base, row stride a multiple of 16 bytes. */
static inline int cuops_sm90_c_store_ok(const void *base, int64_t ld, size_t es)
{
    return cuops_aligned(base, 16) && (((size_t)ld * es) % 16) == 0;
}

/* A 2D map over C[rows, cols] (row stride ld elements) for TMA stores of
 * 64-row x 128-byte boxes with 128-byte swizzle. Requires cuops_sm90_c_store_ok. */
cuops_status_t cuops_sm90_encode_c_store(struct cuops_handle *h, CUtensorMap *map, void *base,
                                         cuops_dtype_t type, int64_t rows, int64_t cols,
                                         int64_t ld);

/* Leading dimension of a packed operand: k rounded up to 8 elements (16 bytes). */
static inline int64_t cuops_sm90_packed_ld(int64_t k) { return (k + 7) / 8 * 8; }

/* Write the logical [rows, k] K-major operand into dst[rows, ld_dst]
 * (ld_dst = cuops_sm90_packed_ld(k), dst 16-byte aligned), zeros in columns
 * k..ld_dst-1. The source element (r, c) is src[r*lds + c] when src_k_major,
 * else src[c*lds + r] (a transposed operand). */
cuops_status_t cuops_sm90_pack_kmajor(struct cuops_handle *h, const void *src, int64_t lds,
                                      int src_k_major, int64_t rows, int64_t k, void *dst,
                                      int64_t ld_dst);

/* C = beta * C (beta == 0 writes zeros without reading C): the k == 0 GEMM. */
cuops_status_t cuops_sm90_scale_c(struct cuops_handle *h, const cuops_gemm_desc_t *d);

/* The operands of d as K-major [rows, k] arrays TMA can read: the caller's
 * own when they already are, else packed into the workspace (gemm_sm90.cu). */
cuops_status_t cuops_sm90_kmajor_operands(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                          const void **a, int64_t *lda, const void **b,
                                          int64_t *ldb);

/* What every sm90 GEMM kernel needs from a call (arch, dtypes, m > 64, sizes
 * the 32-bit tile arithmetic can index, element-aligned pointers), given the
 * kernel's dynamic shared memory and tile width. */
int cuops_sm90_common_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d,
                               size_t smem_bytes, int tile_n);

/* gemm_sm90_cluster.cu: the staged-epilogue kernels (one entry per
 * configuration) and the entry that picks among them by a waves model. */
int cuops_sm90_tma_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d);
cuops_status_t cuops_sm90_tma_launch_pick(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                          const cuops_options_t *opt);
cuops_status_t cuops_sm90_tma_launch_128x256_c2(struct cuops_handle *h,
                                                const cuops_gemm_desc_t *d,
                                                const cuops_options_t *opt);
cuops_status_t cuops_sm90_tma_launch_128x256(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                             const cuops_options_t *opt);
cuops_status_t cuops_sm90_tma_launch_128x128_c2(struct cuops_handle *h,
                                                const cuops_gemm_desc_t *d,
                                                const cuops_options_t *opt);
cuops_status_t cuops_sm90_tma_launch_128x128(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                             const cuops_options_t *opt);

#endif /* CUOPS_GEMM_SM90_H */
