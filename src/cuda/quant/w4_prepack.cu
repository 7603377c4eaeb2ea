/*
 * w4_prepack.cu - one-time reorder of a seed-format int4 weight (byte
 * qweight[r*ldq + c/2], low nibble for even c) into the layout described in
 * w4a16_layout.cuh, so that the W4A16 GEMM reads each tile with one
 * coalesced 16-byte load per lane and turns every 32-bit word into four mma
 * A registers with a shift, a lop3 and two half-precision ops.
 *
 * Two kernels: one writes the weight tiles (a thread per 16-byte lane chunk,
 * so the stores are fully coalesced; the byte-wise reads of the seed format
 * are scattered but this runs once per model load), one writes the per-group
 * scale pairs (rounded to the activation type) and zero-point words.
 */
#include "cuda/quant/w4a16_layout.cuh"

typedef struct w4_prepack_args {
    const uint8_t *qweight;
    int64_t ldq;
    const void *scales;
    cuops_dtype_t scale_type;
    const uint8_t *zeros; /* NULL: symmetric, zero 8 */
    int64_t n, k, group_size, num_groups;
    int64_t strips, ktiles;
    uint8_t *packed;
    int64_t scale_offset, zero_offset;
} w4_prepack_args_t;

/* Zero point of (row, group); rows past n are all-zero padding. */
static __device__ __forceinline__ uint32_t w4_zero_at(const w4_prepack_args_t *a, int64_t row,
                                                      int64_t grp)
{
    if (row >= a->n) return 0;
    if (!a->zeros) return 8;
    return a->zeros[row * a->num_groups + grp] & 15u;
}

/* The nibble the kernel sees at (row, col); `grp` is the lane's group. */
static __device__ __forceinline__ uint32_t w4_nibble_at(const w4_prepack_args_t *a, int64_t row,
                                                        int64_t col, int64_t grp)
{
    if (row >= a->n) return 0;
    if (col >= a->k) return w4_zero_at(a, row, grp); /* (q - z) * s == 0 exactly */
    uint32_t byte = a->qweight[row * a->ldq + (col >> 1)];
    return (byte >> (4 * (col & 1))) & 15u;
}

__global__ void w4_prepack_weights_kernel(w4_prepack_args_t a)
{
    int64_t chunks = a.strips * a.ktiles * 32;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < chunks;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int lane = (int)(idx & 31);
        int64_t tile_idx = idx >> 5;
        int64_t ktile = tile_idx % a.ktiles;
        int64_t strip = tile_idx / a.ktiles;
        int g = lane >> 2, t = lane & 3;
        int64_t row0 = strip * W4_STRIP_ROWS + g;
        int64_t col0 = ktile * W4_TILE_K + 16 * t;
        int64_t grp = w4_lane_group(ktile, t, a.group_size, a.num_groups);
        uint32_t words[4];
        for (int j = 0; j < 4; j++) {
            uint32_t w = 0;
            for (int o = 0; o < 4; o++) {
                int64_t col = col0 + 4 * j + o;
                for (int row_sel = 0; row_sel < 2; row_sel++) {
                    uint32_t q = w4_nibble_at(&a, row0 + 8 * row_sel, col, grp);
                    int pos = (o & 1) * 4 + (o >> 1) * 2 + row_sel;
                    w |= q << (4 * pos);
                }
            }
            words[j] = w;
        }
        uint4 out = make_uint4(words[0], words[1], words[2], words[3]);
        ((uint4 *)a.packed)[idx] = out;
    }
}

static __device__ __forceinline__ float w4_scale_at(const w4_prepack_args_t *a, int64_t row,
                                                    int64_t grp)
{
    if (row >= a->n) return 0.0f;
    int64_t i = row * a->num_groups + grp;
    switch (a->scale_type) {
    case CUOPS_DTYPE_F16: return __half2float(((const __half *)a->scales)[i]);
    case CUOPS_DTYPE_BF16: return __bfloat162float(((const __nv_bfloat16 *)a->scales)[i]);
    default: return ((const float *)a->scales)[i];
    }
}

/* f16 -> bf16 goes through fp32 exactly, so every path rounds once (RN). */
template <typename T>
__global__ void w4_prepack_meta_kernel(w4_prepack_args_t a)
{
    int64_t items = a.strips * a.num_groups * 8;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < items;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int g = (int)(idx & 7);
        int64_t sg = idx >> 3; /* strip * num_groups + group */
        int64_t grp = sg % a.num_groups;
        int64_t strip = sg / a.num_groups;
        int64_t row0 = strip * W4_STRIP_ROWS + g;
        T s0 = cuops_from_float<T>(w4_scale_at(&a, row0, grp));
        T s1 = cuops_from_float<T>(w4_scale_at(&a, row0 + 8, grp));
        T *sc = (T *)(a.packed + a.scale_offset);
        sc[2 * idx] = s0;
        sc[2 * idx + 1] = s1;
        if (g < 2) {
            uint32_t w = 0;
            for (int gg = 0; gg < 4; gg++) {
                int64_t r = strip * W4_STRIP_ROWS + 4 * g + gg;
                w |= w4_zero_at(&a, r, grp) << (4 * gg);
                w |= w4_zero_at(&a, r + 8, grp) << (4 * (gg + 4));
            }
            ((uint32_t *)(a.packed + a.zero_offset))[sg * 2 + g] = w;
        }
    }
}

extern "C" size_t cuops_cuda_w4_packed_size(int64_t n, int64_t k, int64_t group_size,
                                            cuops_dtype_t act)
{
    w4_geometry_t geo;
    if (!w4_geometry_init(&geo, n, k, group_size, act)) return 0;
    return (size_t)geo.total_bytes;
}

static int w4_grid_for(int64_t items, int threads, const struct cuops_handle *h)
{
    int64_t blocks = cuops_ceil_div(items, threads);
    int64_t cap = (int64_t)(h->num_sms > 0 ? h->num_sms : 132) * 16;
    return (int)(blocks < cap ? (blocks > 0 ? blocks : 1) : cap);
}

extern "C" cuops_status_t cuops_cuda_w4_prepack(struct cuops_handle *h,
                                                const cuops_w4_prepack_desc_t *d)
{
    const cuops_dequant_desc_t *w = &d->w;
    w4_geometry_t geo;
    if (!w4_geometry_init(&geo, w->n, w->k, w->group_size, d->act_type))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "w4 prepack (cuda): group_size %lld with k %lld is not supported "
                          "(need a multiple of 16, or group_size >= k; act f16/bf16)",
                          (long long)w->group_size, (long long)w->k);
    if (!cuops_aligned(d->packed, 16))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "w4 prepack (cuda): the packed buffer must be 16-byte aligned");
    w4_prepack_args_t a;
    a.qweight = w->qweight;
    a.ldq = w->ldq;
    a.scales = w->scales;
    a.scale_type = w->scale_type;
    a.zeros = w->zeros;
    a.n = geo.n;
    a.k = geo.k;
    a.group_size = geo.group_size;
    a.num_groups = geo.num_groups;
    a.strips = geo.strips;
    a.ktiles = geo.ktiles;
    a.packed = (uint8_t *)d->packed;
    a.scale_offset = geo.scale_offset;
    a.zero_offset = geo.zero_offset;

    const int threads = 256;
    cudaStream_t st = cuops_stream(h);
    w4_prepack_weights_kernel<<<w4_grid_for(geo.strips * geo.ktiles * 32, threads, h), threads, 0,
                                st>>>(a);
    cuops_status_t s = cuops_cuda_check_launch(h, "w4_prepack_weights");
    if (s != CUOPS_STATUS_SUCCESS) return s;
    int meta_grid = w4_grid_for(geo.strips * geo.num_groups * 8, threads, h);
    if (d->act_type == CUOPS_DTYPE_F16)
        w4_prepack_meta_kernel<__half><<<meta_grid, threads, 0, st>>>(a);
    else
        w4_prepack_meta_kernel<__nv_bfloat16><<<meta_grid, threads, 0, st>>>(a);
    return cuops_cuda_check_launch(h, "w4_prepack");
}
