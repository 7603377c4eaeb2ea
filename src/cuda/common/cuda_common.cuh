/*
 * cuda_common.cuh - what every CUDA file of cuops shares: stream and
 * workspace access, launch-error checking, and the element-type helpers that
 * let one kernel template serve f16, bf16 and f32.
 */
#ifndef CUOPS_CUDA_COMMON_CUH
#define CUOPS_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "api/cuops_internal.h"

static inline cudaStream_t cuops_stream(const struct cuops_handle *h)
{
    return (cudaStream_t)h->stream;
}

/* A device workspace of at least `bytes` for this call: the user's, or the
 * handle's own (grown with cudaMalloc after synchronizing the stream). */
cuops_status_t cuops_cuda_workspace(struct cuops_handle *h, size_t bytes, void **ptr);

/* The same, `align` (a power of two, at most 256) aligned: a workspace set
 * with cuops_set_workspace may start at any address; when it is not aligned
 * the request grows by the bytes that bring it to `align`, and the pointer is
 * rounded up. */
cuops_status_t cuops_cuda_workspace_aligned(struct cuops_handle *h, size_t bytes, size_t align,
                                            void **ptr);

/* Arrival counters for a kernel whose CTAs reduce across the grid: `count`
 * (at most CUOPS_COUNTERS_MAX) unsigned ints that are zero when the kernel
 * starts and that it leaves at zero (the last arrival resets each). With
 * the handle's own workspace they are the handle's: one buffer, allocated
 * and zeroed by cuops_cuda_init; a handle's calls run in stream order, so no
 * two of its kernels use it at once, and calls of other handles (on other
 * streams) have their own. With a user workspace the handle allocates nothing: the caller
 * passes `in_workspace`, count * 4 bytes of its call's workspace region
 * (4-byte aligned), which is zeroed on the handle's stream and returned. */
#define CUOPS_COUNTERS_MAX 4096
cuops_status_t cuops_cuda_counters(struct cuops_handle *h, size_t count, void *in_workspace,
                                   unsigned **out);

/* The workspace bytes a call reserves for `count` arrival counters: count * 4
 * with a user workspace (they live in it), none with the handle's own. */
static inline size_t cuops_cuda_counter_bytes(const struct cuops_handle *h, size_t count)
{
    return h->user_workspace ? count * 4 : 0;
}

/* A workspace request answered `st` because a user workspace is too small
 * (cuops_cuda_workspace): where the split was the kernel's own choice, the
 * call then runs unsplit instead. */
static inline bool cuops_cuda_workspace_short(const struct cuops_handle *h, cuops_status_t st)
{
    return st == CUOPS_STATUS_NOT_SUPPORTED && h->user_workspace != NULL;
}

/* Whether p lies inside the handle's current workspace (the user's or its
 * own). A caller inside cuops may hand an op operands that live there (the
 * W4A16 dequant-then-GEMM path's dense chunk and packed x): that op must not
 * take the workspace for scratch of its own, which would overwrite them (and
 * growing the handle's own block would free them). */
int cuops_cuda_in_workspace(const struct cuops_handle *h, const void *p);

/* Whether any of a GEMM's A, B, C lies inside the handle's workspace. */
static inline int cuops_cuda_gemm_operands_in_workspace(const struct cuops_handle *h,
                                                        const cuops_gemm_desc_t *d)
{
    return cuops_cuda_in_workspace(h, d->a) || cuops_cuda_in_workspace(h, d->b) ||
           cuops_cuda_in_workspace(h, d->c);
}

/* Free a device buffer the handle owns (*p; NULL after), on the handle's
 * device once its stream has drained: calls still queued may use it. */
void cuops_cuda_release(struct cuops_handle *h, void **p);

/* After a launch: CUDA_ERROR with the runtime's message if it failed. */
cuops_status_t cuops_cuda_check_launch(struct cuops_handle *h, const char *kernel);

/* Map a runtime error to CUOPS_STATUS_CUDA_ERROR (or ALLOC_FAILED) with detail. */
cuops_status_t cuops_cuda_fail(struct cuops_handle *h, cudaError_t err, const char *what);

#define CUOPS_CUDA_TRY(h, call)                                   \
    do {                                                          \
        cudaError_t cuops_err_ = (call);                          \
        if (cuops_err_ != cudaSuccess)                            \
            return cuops_cuda_fail((h), cuops_err_, #call);       \
    } while (0)

static inline int64_t cuops_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Round a workspace size or offset up to 256 bytes (regions carved from one
 * workspace block stay 256-byte aligned). */
static inline size_t cuops_align256(size_t b) { return (b + 255) & ~(size_t)255; }

/* ---- element types as template parameters ---------------------------- */

template <typename T> struct cuops_elem;
template <> struct cuops_elem<__half> {
    static __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
    static __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
};
template <> struct cuops_elem<__nv_bfloat16> {
    static __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
    static __device__ __forceinline__ __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
};
template <> struct cuops_elem<float> {
    static __device__ __forceinline__ float to_float(float v) { return v; }
    static __device__ __forceinline__ float from_float(float v) { return v; }
};

template <typename T> __device__ __forceinline__ float cuops_to_float(T v) { return cuops_elem<T>::to_float(v); }
template <typename T> __device__ __forceinline__ T cuops_from_float(float v) { return cuops_elem<T>::from_float(v); }

/* Two floats as the 32-bit word of a 16-bit output pair, each rounded to
 * nearest even, the first at the lower address. */
template <typename T> __device__ __forceinline__ uint32_t cuops_pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t cuops_pack2<__half>(float lo, float hi)
{
    __half2 v = __floats2half2_rn(lo, hi);
    return *(uint32_t *)&v;
}
template <> __device__ __forceinline__ uint32_t cuops_pack2<__nv_bfloat16>(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *(uint32_t *)&v;
}

/* v[0] + v[1] + ... + v[n - 1] (n <= N), added in that order: the fixed
 * order that keeps the split-K reductions bitwise the same run to run. */
template <int N> __device__ __forceinline__ float4 cuops_f4_sum_in_order(const float4 (&v)[N], int n)
{
    float4 sum = v[0];
#pragma unroll
    for (int i = 1; i < N; i++) {
        if (i < n) {
            sum.x += v[i].x;
            sum.y += v[i].y;
            sum.z += v[i].z;
            sum.w += v[i].w;
        }
    }
    return sum;
}

/* True when p is aligned to `bytes`. */
static inline int cuops_aligned(const void *p, size_t bytes) { return ((uintptr_t)p % bytes) == 0; }
/* Elements of `elem` bytes from p to its next multiple of `boundary` bytes
 * (0 when p is one); p is element-aligned. The head a kernel takes apart
 * before streaming an aligned body (reduce.cu, scan_ring.cu). */
static inline int64_t cuops_elems_to_boundary(const void *p, size_t boundary, size_t elem)
{
    return (int64_t)((boundary - (uintptr_t)p % boundary) % boundary / elem);
}

/* Compile the body of an sm_90a-only kernel only in the sm_90a pass: the
 * sm_80 pass sees an empty kernel (the dispatch never launches it there). */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CUOPS_SM90A_DEVICE 1
#else
#define CUOPS_SM90A_DEVICE 0
#endif

#endif /* CUOPS_CUDA_COMMON_CUH */
