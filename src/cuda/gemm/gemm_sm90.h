/*
 * gemm_sm90.h - what the Hopper GEMM's files share: TMA tensor-map encoding
 * (gemm_sm90_tma.cu) and the operand packing / k == 0 helpers
 * (gemm_sm90_pack.cu) that let the TMA + wgmma kernel (gemm_sm90.cu) serve
 * every transpose, leading dimension and pointer alignment.
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

/* The same map with the L2 promotion chosen: promote_256b = 0 fetches only
 * the sectors a box row covers. With rows off the 128-byte lines (k = 1000)
 * the 64 x 128 tile ran 0.6 (in clusters of two) to 1.4 us faster at 1000^3
 * without promotion, and level on rows on the lines (H200, docs/gemm.md,
 * "Rows off the lines, continued"). */
cuops_status_t cuops_sm90_encode_kmajor_l2(struct cuops_handle *h, CUtensorMap *map,
                                           const void *base, cuops_dtype_t type, int64_t rows,
                                           int64_t k, int64_t ld, uint32_t box_rows,
                                           int promote_256b);

/* An MN-major operand: a [k, mn] array (A stored [k, m] for trans_a = T, B
 * stored [k, n] for trans_b = N), row stride `ld` elements, boxes of box_k
 * K-rows x 64 M/N elements (128 bytes) with 128-byte swizzle, as wgmma reads an
 * M/N-major operand (cuops_wgmma_desc_mn_sw128): box_k 64, or a multicast
 * piece's share of the 64 rows (cuops_tma_load_mn_piece_multicast). Same
 * base and ld rules. */
cuops_status_t cuops_sm90_encode_mnmajor(struct cuops_handle *h, CUtensorMap *map,
                                         const void *base, cuops_dtype_t type, int64_t mn,
                                         int64_t k, int64_t ld, uint32_t box_k, int promote_256b);

/* The same for a narrow MN-major operand (the decode kernel's x stored
 * [k, m]): boxes of 64 K-rows x box_mn elements, box_mn 8, 16, 32 or 64,
 * swizzled as wide as a box row (none, 32B, 64B, 128B), as
 * cuops_wgmma_desc_mn_box<box_mn> reads them. */
cuops_status_t cuops_sm90_encode_mnmajor_box(struct cuops_handle *h, CUtensorMap *map,
                                             const void *base, cuops_dtype_t type, int64_t mn,
                                             int64_t k, int64_t ld, uint32_t box_mn);

/* The same map where the driver may refuse it (`mn` wider than the row
 * stride ld: rows that overlap): CUOPS_STATUS_NOT_SUPPORTED without a
 * message then, so that the caller can fall back to a map it can have. */
cuops_status_t cuops_sm90_encode_mnmajor_box_try(struct cuops_handle *h, CUtensorMap *map,
                                                 const void *base, cuops_dtype_t type,
                                                 int64_t mn, int64_t k, int64_t ld,
                                                 uint32_t box_mn);

/* A 2D map over `rows` rows of `cols` 16-bit elements, row stride `ld`
 * elements, boxes of box_cols x box_rows without swizzle (rows of box_cols
 * elements, dense, in shared memory); the C maps of the shifted-rows
 * epilogue (gemm_sm90.cu, sm90_shift_maps_t). Same base and ld rules. */
cuops_status_t cuops_sm90_encode_rows_plain(struct cuops_handle *h, CUtensorMap *map,
                                            const void *base, cuops_dtype_t type, int64_t rows,
                                            int64_t cols, int64_t ld, uint32_t box_cols,
                                            uint32_t box_rows);

/* A 3D K-major map over the rows 8 g + j (g < groups, j < 8) of a [rows, k]
 * array with row stride ld: dimensions (k, g, j), boxes of 64 x box_groups x
 * 8 with 128-byte swizzle, so that one box lands as 8 slabs of box_groups
 * rows, slab j holding the rows j mod 8 (the shifted-rows kernel's A tile).
 * Same base and ld rules. NOT_SUPPORTED, with no message, where the driver
 * refuses the map (the caller loads the slabs one by one instead). */
cuops_status_t cuops_sm90_encode_residues(struct cuops_handle *h, CUtensorMap *map,
                                          const void *base, cuops_dtype_t type, int64_t groups,
                                          int64_t k, int64_t ld, uint32_t box_groups);

/* Whether a 16-bit operand at `base` with row stride `ld` elements can be
 * read by TMA directly: base 16-byte aligned, the stride a multiple of 16
 * bytes and below 2^40 bytes (cuTensorMapEncodeTiled's limit; the API lets a
 * one-row operand have any ld). */
static inline int cuops_sm90_tma_ok(const void *base, int64_t ld)
{
    return ld < ((int64_t)1 << 39) && cuops_aligned(base, 16) && ((ld * 2) % 16) == 0;
}

/* Leading dimension of a packed operand (or of a staged C): k rounded up to
 * 64 elements, so every row starts on a 128-byte line. TMA needs only 16
 * bytes, but with rows 16 bytes off the line each 128-byte box row spans two
 * lines: the GEMM kernel took 1.18-1.20 ms at 8191x8193x4097 on operands
 * packed with ld = 4104 (k rounded to 8), against 0.79 ms for the whole
 * aligned 8192x8192x4096 call (H200, dbca219, docs/gemm.md). */
static inline int64_t cuops_sm90_packed_ld(int64_t k) { return (k + 63) / 64 * 64; }

/* Workspace bytes of an operand of `rows` rows packed K-major onto rows of
 * cuops_sm90_packed_ld(k) 16-bit elements, rounded up to 256 bytes */
static inline size_t cuops_sm90_packed_bytes(int64_t rows, int64_t k)
{
    return cuops_align256((size_t)rows * (size_t)cuops_sm90_packed_ld(k) * 2u);
}

/* Write the logical [rows, k] K-major operand into dst[rows, ld_dst]
 * (ld_dst % 8 == 0, e.g. cuops_sm90_packed_ld(k); dst 16-byte aligned), zeros in columns
 * k..ld_dst-1. The source element (r, c) is src[r*lds + c] when src_k_major,
 * else src[c*lds + r] (a transposed operand). */
cuops_status_t cuops_sm90_pack_kmajor(struct cuops_handle *h, const void *src, int64_t lds,
                                      int src_k_major, int64_t rows, int64_t k, void *dst,
                                      int64_t ld_dst);

/* A 16-bit [rows, *] array and where it goes: src[r * lds + c] -> dst[r * ldd + c]. */
typedef struct {
    const void *src;
    int64_t lds;
    void *dst;
    int64_t ldd;
    int64_t rows;
} cuops_sm90_rows_t;

/* Both operands of a GEMM packed as cuops_sm90_pack_kmajor does each (a.ldd
 * == b.ldd, k columns): one launch where both are K-major, else two. */
cuops_status_t cuops_sm90_pack_pair(struct cuops_handle *h, const cuops_sm90_rows_t *a,
                                    int a_k_major, const cuops_sm90_rows_t *b, int b_k_major,
                                    int64_t k);

/* dst[r, 0..width) = src[r, 0..cols) then zeros, for r < rows (width >=
 * cols): 16-bit rows at any 2-byte alignment on either side, 16 bytes per
 * access away from the row ends. Packs misaligned K-major operands, and
 * copies a C staged in aligned workspace out to its place. */
cuops_status_t cuops_sm90_copy_rows(struct cuops_handle *h, const void *src, int64_t lds,
                                    void *dst, int64_t ldd, int64_t rows, int64_t cols,
                                    int64_t width);

/* C = beta * C (beta == 0 writes zeros without reading C): the k == 0 GEMM. */
cuops_status_t cuops_sm90_scale_c(struct cuops_handle *h, const cuops_gemm_desc_t *d);

#endif /* CUOPS_GEMM_SM90_H */
