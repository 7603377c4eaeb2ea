/*
 * gemm_sm90_tma.cu - TMA tensor maps for the Hopper GEMM.
 *
 * cuTensorMapEncodeTiled lives in the driver; cuops never links libcuda (the
 * library must load where no driver exists), so the function is fetched once
 * through the runtime's cudaGetDriverEntryPointByVersion. cuda.h and
 * cudaTypedefs.h are included for the types only.
 */
#include <cudaTypedefs.h>

#include "cuda/gemm/gemm_sm90.h"

static PFN_cuTensorMapEncodeTiled_v12000 sm90_encode_fn(void)
{
    /* Function-local static: initialised once, thread-safe in C++. */
    static PFN_cuTensorMapEncodeTiled_v12000 fn = []() -> PFN_cuTensorMapEncodeTiled_v12000 {
        void *p = NULL;
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                           cudaEnableDefault, &q);
        if (err != cudaSuccess || q != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            return NULL;
        }
        return (PFN_cuTensorMapEncodeTiled_v12000)p;
    }();
    return fn;
}

/* One tiled map of a 16-bit tensor (rank 2 or 3, innermost dimension
 * first, unit element strides). CUOPS_STATUS_SUCCESS with *r the driver's
 * answer, or a failure (with its message) before the driver is asked: no
 * encode function, or a base / row stride TMA cannot address. */
static cuops_status_t sm90_encode(struct cuops_handle *h, CUtensorMap *map, cuops_dtype_t type,
                                  uint32_t rank, const void *base, int64_t ld,
                                  const cuuint64_t *dims, const cuuint64_t *strides,
                                  const cuuint32_t *box, CUtensorMapSwizzle swizzle,
                                  CUtensorMapL2promotion promotion, CUresult *r)
{
    PFN_cuTensorMapEncodeTiled_v12000 encode = sm90_encode_fn();
    if (!encode)
        return cuops_fail(h, CUOPS_STATUS_CUDA_ERROR,
                          "gemm sm90: cuTensorMapEncodeTiled not available from the driver");
    if (!cuops_sm90_tma_ok(base, ld))
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR,
                          "gemm sm90: operand not TMA-aligned (base %p, ld %lld)", base,
                          (long long)ld);
    const CUtensorMapDataType dt = (type == CUOPS_DTYPE_BF16) ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                              : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const cuuint32_t elem_strides[3] = {1u, 1u, 1u};
    *r = encode(map, dt, rank, (void *)base, dims, strides, box, elem_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return CUOPS_STATUS_SUCCESS;
}

/* A 2D map over `rows` rows of `cols` 16-bit elements, row stride `ld`
 * elements, boxes of box_cols x box_rows: as sm90_encode, *r the driver's
 * answer. */
static cuops_status_t sm90_encode_2d_r(struct cuops_handle *h, CUtensorMap *map,
                                       const void *base, cuops_dtype_t type, int64_t rows,
                                       int64_t cols, int64_t ld, uint32_t box_cols,
                                       uint32_t box_rows, CUtensorMapSwizzle swizzle,
                                       CUtensorMapL2promotion promotion, CUresult *r)
{
    /* Innermost dimension first: (cols, rows). */
    const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)ld * 2u};
    const cuuint32_t box[2] = {box_cols, box_rows};
    return sm90_encode(h, map, type, 2, base, ld, dims, strides, box, swizzle, promotion, r);
}

/* The same; the driver's refusal becomes CUDA_ERROR with the shape in the
 * message. */
static cuops_status_t sm90_encode_2d(struct cuops_handle *h, CUtensorMap *map, const void *base,
                                     cuops_dtype_t type, int64_t rows, int64_t cols, int64_t ld,
                                     uint32_t box_cols, uint32_t box_rows,
                                     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion)
{
    CUresult r = CUDA_SUCCESS;
    cuops_status_t st = sm90_encode_2d_r(h, map, base, type, rows, cols, ld, box_cols, box_rows,
                                         swizzle, promotion, &r);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    if (r != CUDA_SUCCESS)
        return cuops_fail(h, CUOPS_STATUS_CUDA_ERROR,
                          "gemm sm90: cuTensorMapEncodeTiled failed (CUresult %d) for "
                          "rows %lld, cols %lld, ld %lld, box %ux%u",
                          (int)r, (long long)rows, (long long)cols, (long long)ld, box_rows,
                          box_cols);
    return CUOPS_STATUS_SUCCESS;
}

cuops_status_t cuops_sm90_encode_kmajor_l2(struct cuops_handle *h, CUtensorMap *map,
                                           const void *base, cuops_dtype_t type, int64_t rows,
                                           int64_t k, int64_t ld, uint32_t box_rows,
                                           int promote_256b)
{
    return sm90_encode_2d(h, map, base, type, rows, k, ld, 64u, box_rows,
                          CU_TENSOR_MAP_SWIZZLE_128B,
                          promote_256b ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                       : CU_TENSOR_MAP_L2_PROMOTION_NONE);
}

cuops_status_t cuops_sm90_encode_kmajor(struct cuops_handle *h, CUtensorMap *map,
                                        const void *base, cuops_dtype_t type, int64_t rows,
                                        int64_t k, int64_t ld, uint32_t box_rows)
{
    /* 256B L2 promotion: each box row is 128 bytes; fetching the pair of
     * lines halves the number of L2 misses a tile's rows generate when the
     * next k-block follows. */
    return cuops_sm90_encode_kmajor_l2(h, map, base, type, rows, k, ld, box_rows, 1);
}

cuops_status_t cuops_sm90_encode_mnmajor(struct cuops_handle *h, CUtensorMap *map,
                                         const void *base, cuops_dtype_t type, int64_t mn,
                                         int64_t k, int64_t ld, uint32_t box_k, int promote_256b)
{
    /* k rows of mn elements (row stride ld), boxes of box_k K-rows x 64 M/N
     * elements (64, or a multicast piece's share of 64) */
    return sm90_encode_2d(h, map, base, type, k, mn, ld, 64u, box_k, CU_TENSOR_MAP_SWIZZLE_128B,
                          promote_256b ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                       : CU_TENSOR_MAP_L2_PROMOTION_NONE);
}

/* boxes of box_mn columns are swizzled as wide as their rows */
static CUtensorMapSwizzle sm90_box_swizzle(uint32_t box_mn)
{
    return box_mn >= 64   ? CU_TENSOR_MAP_SWIZZLE_128B
           : box_mn >= 32 ? CU_TENSOR_MAP_SWIZZLE_64B
           : box_mn >= 16 ? CU_TENSOR_MAP_SWIZZLE_32B
                          : CU_TENSOR_MAP_SWIZZLE_NONE;
}

cuops_status_t cuops_sm90_encode_mnmajor_box(struct cuops_handle *h, CUtensorMap *map,
                                             const void *base, cuops_dtype_t type, int64_t mn,
                                             int64_t k, int64_t ld, uint32_t box_mn)
{
    return sm90_encode_2d(h, map, base, type, k, mn, ld, box_mn, 64u, sm90_box_swizzle(box_mn),
                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

cuops_status_t cuops_sm90_encode_mnmajor_box_try(struct cuops_handle *h, CUtensorMap *map,
                                                 const void *base, cuops_dtype_t type,
                                                 int64_t mn, int64_t k, int64_t ld,
                                                 uint32_t box_mn)
{
    CUresult r = CUDA_SUCCESS;
    cuops_status_t st = sm90_encode_2d_r(h, map, base, type, k, mn, ld, box_mn, 64u,
                                         sm90_box_swizzle(box_mn),
                                         CU_TENSOR_MAP_L2_PROMOTION_L2_256B, &r);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    /* no message where the driver refuses: the caller has a map without this one */
    return r == CUDA_SUCCESS ? CUOPS_STATUS_SUCCESS : CUOPS_STATUS_NOT_SUPPORTED;
}

cuops_status_t cuops_sm90_encode_rows_plain(struct cuops_handle *h, CUtensorMap *map,
                                            const void *base, cuops_dtype_t type, int64_t rows,
                                            int64_t cols, int64_t ld, uint32_t box_cols,
                                            uint32_t box_rows)
{
    return sm90_encode_2d(h, map, base, type, rows, cols, ld, box_cols, box_rows,
                          CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE);
}

cuops_status_t cuops_sm90_encode_residues(struct cuops_handle *h, CUtensorMap *map,
                                          const void *base, cuops_dtype_t type, int64_t groups,
                                          int64_t k, int64_t ld, uint32_t box_groups)
{
    /* (k, row group g, residue j): element (c, g, j) is row 8 g + j */
    const cuuint64_t dims[3] = {(cuuint64_t)k, (cuuint64_t)groups, 8u};
    const cuuint64_t strides[2] = {(cuuint64_t)ld * 16u, (cuuint64_t)ld * 2u};
    const cuuint32_t box[3] = {64u, box_groups, 8u};
    CUresult r = CUDA_SUCCESS;
    cuops_status_t st = sm90_encode(h, map, type, 3, base, ld, dims, strides, box,
                                    CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, &r);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    /* no message where the driver refuses: the caller has a form without this map */
    return r == CUDA_SUCCESS ? CUOPS_STATUS_SUCCESS : CUOPS_STATUS_NOT_SUPPORTED;
}
