/*
 * cuops.h - the whole public C API of cuops.
 *
 * cuops is a C library of GPU kernels for the work LLM inference and
 * data-parallel code spend their time on: GEMM, int4 dequantization, W4A16
 * GEMM, scan and reduction. Every op has a CPU reference backend (the test
 * oracle) reachable through the same calls with CUOPS_DEVICE_CPU.
 *
 * Conventions (cuBLAS/BLIS style):
 *  - every function returns a cuops_status_t (CUOPS_STATUS_SUCCESS is 0),
 *    except the four string getters, which return a const char * that is
 *    never NULL;
 *  - a handle keeps a human-readable detail of its last call's failure
 *    (cuops_last_error) and the name of the kernel its last call ran
 *    (cuops_last_kernel); every call that takes a handle, the accessors
 *    included, resets both;
 *  - sizes, strides and leading dimensions are int64_t, counted in elements
 *    (bytes for packed int4 data); matrices are row-major;
 *  - on a GPU handle every data pointer is a device pointer and the work is
 *    enqueued on the handle's stream (asynchronous, like cuBLAS); on a CPU
 *    handle pointers are host pointers and the call is synchronous;
 *  - bad input never crashes and never writes: it returns a specific status
 *    and leaves the detail in cuops_last_error(h);
 *  - a pointer the call never dereferences is not checked (NULL or
 *    misaligned is accepted): A and B of a GEMM with k == 0, x and packed of
 *    a W4A16 GEMM with k == 0, every operand of an empty problem but the
 *    output the call writes (C of a GEMM with k == 0, y of a W4A16 GEMM with
 *    k == 0, *out of a reduce with n == 0).
 *
 * This header is C11 and needs no CUDA header.
 */
#ifndef CUOPS_H
#define CUOPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define CUOPS_API __declspec(dllexport)
#else
#define CUOPS_API __attribute__((visibility("default")))
#endif

#define CUOPS_VERSION_MAJOR 0
#define CUOPS_VERSION_MINOR 1
#define CUOPS_VERSION_PATCH 0

/** Pass as `device` to cuops_create() for the CPU reference backend. */
#define CUOPS_DEVICE_CPU (-1)

/** Status of every cuops call. */
typedef enum cuops_status {
    CUOPS_STATUS_SUCCESS = 0,        /**< the call did what it says */
    CUOPS_STATUS_INVALID_VALUE = 1,  /**< a bad argument: null pointer, negative or
                                          overflowing size, leading dimension too small,
                                          bad enum; nothing was touched */
    CUOPS_STATUS_NOT_SUPPORTED = 2,  /**< a valid request this build or device cannot
                                          serve (dtype combination, forced variant) */
    CUOPS_STATUS_NO_DEVICE = 3,      /**< no CUDA device (or driver) with that index */
    CUOPS_STATUS_ALLOC_FAILED = 4,   /**< a host or device allocation failed */
    CUOPS_STATUS_CUDA_ERROR = 5,     /**< the CUDA runtime reported an error */
    CUOPS_STATUS_INTERNAL_ERROR = 6  /**< a bug in cuops: please report it */
} cuops_status_t;

/** Element types. */
typedef enum cuops_dtype {
    CUOPS_DTYPE_F16 = 0,   /**< IEEE binary16 */
    CUOPS_DTYPE_BF16 = 1,  /**< bfloat16 */
    CUOPS_DTYPE_F32 = 2,
    CUOPS_DTYPE_F64 = 3,
    CUOPS_DTYPE_I32 = 4,
    CUOPS_DTYPE_I64 = 5,
    CUOPS_DTYPE_U8 = 6
} cuops_dtype_t;

/** Whether a GEMM operand is used as stored (N) or transposed (T). */
typedef enum cuops_op {
    CUOPS_OP_N = 0,
    CUOPS_OP_T = 1
} cuops_op_t;

/** Binary operator of scan and reduce. */
typedef enum cuops_reduce_op {
    CUOPS_REDUCE_SUM = 0,
    CUOPS_REDUCE_MIN = 1,
    CUOPS_REDUCE_MAX = 2
} cuops_reduce_op_t;

/** Opaque library context: device, stream, workspace, last error. */
typedef struct cuops_handle *cuops_handle_t;

/**
 * Options of the `_ex` calls, for study and tuning. Zero-initialise
 * (`cuops_options_t o = {0};`) for the library's own choice.
 */
typedef struct cuops_options {
    /** NULL or "auto": the dispatch chooses. Otherwise the name of a variant
     *  from cuops_variant_names(); a variant that cannot serve the call
     *  returns CUOPS_STATUS_NOT_SUPPORTED with the reason. */
    const char *variant;
    /** GEMM: number of K splits; 0 lets the dispatch choose, 1 forbids splitting
     *  (split-K, and the sm_90 kernels' split of a partial last round of tiles).
     *  Negative: CUOPS_STATUS_INVALID_VALUE (every op). */
    int split_k;
    /** CUOPS_FLAG_* study switches. */
    unsigned flags;
} cuops_options_t;

/** Study switches for cuops_options_t.flags. */
#define CUOPS_FLAG_STAGGER_K (1u << 0)   /**< GEMM: each CTA starts its K loop at a
                                              different offset (seed 000's StaggerU) */
#define CUOPS_FLAG_NO_SWIZZLE (1u << 1)  /**< GEMM: plain row-major CTA rasterization */

/* ------------------------------------------------------------------------ */
/* Handle                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * Create a handle.
 * @param handle  receives the handle.
 * @param device  a CUDA device index (>= 0), or CUOPS_DEVICE_CPU for the CPU
 *                reference backend.
 * @return CUOPS_STATUS_NO_DEVICE when there is no such CUDA device or no
 *         driver (the handle is not created; the reason is in
 *         cuops_create_error()), CUOPS_STATUS_ALLOC_FAILED when the 16 KB
 *         of device memory a GPU handle keeps from its creation (counters of
 *         the kernels that reduce across the grid) cannot be allocated,
 *         CUOPS_STATUS_CUDA_ERROR when the runtime refuses that (the reason is
 *         in cuops_create_error()), CUOPS_STATUS_INVALID_VALUE for a null
 *         handle pointer or a device below -1. Creating a handle while a
 *         stream is being captured into a CUDA graph is allowed. A GPU
 *         handle's other scratch (workspace, scan state) is allocated by the
 *         first call that needs it, unless a workspace is given with
 *         cuops_set_workspace.
 */
CUOPS_API cuops_status_t cuops_create(cuops_handle_t *handle, int device);

/** Destroy a handle and the workspace it owns. NULL is a no-op. */
CUOPS_API cuops_status_t cuops_destroy(cuops_handle_t handle);

/** Why this thread's last cuops_create() call failed; "" when it succeeded
 *  (never NULL). */
CUOPS_API const char *cuops_create_error(void);

/** The device index the handle was created for (CUOPS_DEVICE_CPU for the CPU). */
CUOPS_API cuops_status_t cuops_get_device(cuops_handle_t handle, int *device);

/**
 * Set the CUDA stream (a cudaStream_t passed as void*) the handle's work is
 * enqueued on. NULL is the legacy default stream. Ignored by the CPU backend.
 * A handle's calls share its scratch (workspace, scan state), so a change of
 * stream orders the work already queued on the old stream before the new
 * stream's next work (an event, no host wait; a device-wide wait if the old
 * stream no longer exists). While either stream is being captured into a CUDA
 * graph no ordering is added: order captured work yourself. For calls that
 * run at once on several streams, use one handle per stream.
 */
CUOPS_API cuops_status_t cuops_set_stream(cuops_handle_t handle, void *stream);

/** The handle's CUDA stream (as void*). */
CUOPS_API cuops_status_t cuops_get_stream(cuops_handle_t handle, void **stream);

/**
 * Give the handle a device workspace to use instead of its own. Calls that
 * need more than `bytes` return CUOPS_STATUS_NOT_SUPPORTED with the size they
 * need in the detail (where a kernel's split across CTAs is its own choice,
 * it runs unsplit instead). `workspace == NULL` returns to the handle's own,
 * grown on demand. The memory must stay valid while work that uses it runs,
 * and the operands of the handle's calls must not lie inside it: a call
 * may overwrite it.
 *
 * CUDA graphs: the handle's own workspace and scan state grow with
 * cudaMalloc on a call's first use, which a stream capture refuses; to
 * capture a call, run it once before the capture, or give a workspace here
 * that holds what it needs (then no call allocates).
 */
CUOPS_API cuops_status_t cuops_set_workspace(cuops_handle_t handle, void *workspace,
                                             size_t bytes);

/** Name of a status ("CUOPS_STATUS_SUCCESS", ...); never NULL. */
CUOPS_API const char *cuops_status_string(cuops_status_t status);

/** Human-readable detail of the handle's last call's failure ("" after a
 *  success). */
CUOPS_API const char *cuops_last_error(cuops_handle_t handle);

/** Name of the kernel the handle's last call ran (e.g. "sm90_ws_128x256",
 *  "cpu_reference"); "" when that call failed or ran none (an accessor, an
 *  empty problem, cuops_w4_packed_size). */
CUOPS_API const char *cuops_last_kernel(cuops_handle_t handle);

/**
 * The variants an op can be forced to through `cuops_options_t.variant` on a
 * GPU handle (the CUDA backend's kernels), "auto" first. A CPU handle serves
 * "auto" and "cpu_reference" only; every other name listed here is
 * NOT_SUPPORTED there.
 * @param op     "gemm", "dequant", "w4a16", "scan" or "reduce".
 * @param names  receives a static array of `*count` names.
 */
CUOPS_API cuops_status_t cuops_variant_names(const char *op, const char *const **names,
                                             int *count);

/* ------------------------------------------------------------------------ */
/* GEMM                                                                     */
/* ------------------------------------------------------------------------ */

/**
 * C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C[m,n], accumulated in fp32.
 *
 * All matrices are row-major:
 *  - trans_a == N: A is stored [m,k], lda >= max(1,k); T: A is stored [k,m], lda >= max(1,m);
 *  - trans_b == N: B is stored [k,n], ldb >= max(1,n); T: B is stored [n,k], ldb >= max(1,k)
 *    (the K-major case of torch.nn.functional.linear: y = x W^T);
 *  - C is [m,n], ldc >= max(1,n).
 * Types: ab_type F16 or BF16 (tensor cores) with c_type F16, BF16 or F32; or
 * ab_type F32 with c_type F32 (true fp32 on CUDA cores, no TF32).
 * beta == 0 means C is not read (it may hold NaN). k == 0 gives C = beta*C.
 * alpha == 0 with k > 0 still reads A and B (unlike the reference BLAS): an
 * Inf or NaN there gives NaN in C, as alpha * (the sum) does.
 * m == 0 or n == 0 is a no-op. a, b and c must be aligned to their element
 * size (CUOPS_STATUS_INVALID_VALUE otherwise); any further alignment is
 * optional: aligned data (16 bytes, leading dimensions multiple of 8
 * elements) takes the fast paths.
 */
CUOPS_API cuops_status_t cuops_gemm(cuops_handle_t handle, cuops_op_t trans_a,
                                    cuops_op_t trans_b, int64_t m, int64_t n, int64_t k,
                                    float alpha, const void *a, int64_t lda, const void *b,
                                    int64_t ldb, float beta, void *c, int64_t ldc,
                                    cuops_dtype_t ab_type, cuops_dtype_t c_type);

/** cuops_gemm() with options (forced variant, split-K, study flags). */
CUOPS_API cuops_status_t cuops_gemm_ex(cuops_handle_t handle, cuops_op_t trans_a,
                                       cuops_op_t trans_b, int64_t m, int64_t n, int64_t k,
                                       float alpha, const void *a, int64_t lda, const void *b,
                                       int64_t ldb, float beta, void *c, int64_t ldc,
                                       cuops_dtype_t ab_type, cuops_dtype_t c_type,
                                       const cuops_options_t *options);

/* ------------------------------------------------------------------------ */
/* int4 dequantization                                                      */
/* ------------------------------------------------------------------------ */

/**
 * out[r,c] = (float(q[r,c]) - float(zero[r,g])) * float(scale[r,g]),  g = c / group_size,
 * computed in fp32 and rounded (to nearest even) to out_type.
 *
 * @param n, k        rows and columns of the dense weight (n, k >= 0).
 * @param group_size  columns per quantization group: a positive even number
 *                    (32, 64, 128, ...), or any size >= k for one group per
 *                    row (k for per-channel, odd k included); the last group
 *                    of a row may be partial.
 * @param qweight     packed int4: element c of row r is byte qweight[r*ldq + c/2],
 *                    low nibble for even c, high nibble for odd c. ldq >= max(1, ceil(k/2))
 *                    bytes.
 * @param scales      [n, ceil(k/group_size)] contiguous, scale_type F16, BF16 or F32.
 * @param zeros       [n, ceil(k/group_size)] contiguous uint8 holding 0..15, or NULL
 *                    for symmetric weights (zero = 8). Bytes above 15 give
 *                    unspecified results (the backends may differ).
 * @param out         [n, k] with leading dimension ldo >= max(1, k); out_type F16, BF16 or
 *                    F32.
 * Any pointer alignment works (scales and out off their element size are
 * read and written byte by byte, on a slow path).
 */
CUOPS_API cuops_status_t cuops_dequant_int4(cuops_handle_t handle, int64_t n, int64_t k,
                                            int64_t group_size, const void *qweight,
                                            int64_t ldq, const void *scales,
                                            cuops_dtype_t scale_type, const void *zeros,
                                            void *out, int64_t ldo, cuops_dtype_t out_type);

/** cuops_dequant_int4() with options (forced variant). */
CUOPS_API cuops_status_t cuops_dequant_int4_ex(cuops_handle_t handle, int64_t n, int64_t k,
                                               int64_t group_size, const void *qweight,
                                               int64_t ldq, const void *scales,
                                               cuops_dtype_t scale_type, const void *zeros,
                                               void *out, int64_t ldo, cuops_dtype_t out_type,
                                               const cuops_options_t *options);

/* ------------------------------------------------------------------------ */
/* W4A16 GEMM                                                               */
/* ------------------------------------------------------------------------ */

/**
 * Bytes of the prepacked form of an n x k int4 weight with that group size,
 * for activations of act_type (F16 or BF16). The prepacked buffer lives where
 * the handle's data lives (device memory on a GPU handle). On a GPU handle
 * group_size must be a multiple of 16, or at least k (one group per row):
 * CUOPS_STATUS_NOT_SUPPORTED otherwise (the CPU backend takes every group
 * size cuops_dequant_int4 takes).
 */
CUOPS_API cuops_status_t cuops_w4_packed_size(cuops_handle_t handle, int64_t n, int64_t k,
                                              int64_t group_size, cuops_dtype_t act_type,
                                              size_t *bytes);

/**
 * One-time reorder of a seed-format int4 weight (arguments as in
 * cuops_dequant_int4, but scales aligned to their element size:
 * CUOPS_STATUS_INVALID_VALUE otherwise) into the layout cuops_gemm_w4a16()
 * reads. Scales are rounded to act_type. `packed` must hold
 * cuops_w4_packed_size() bytes.
 */
CUOPS_API cuops_status_t cuops_w4_prepack(cuops_handle_t handle, int64_t n, int64_t k,
                                          int64_t group_size, const void *qweight,
                                          int64_t ldq, const void *scales,
                                          cuops_dtype_t scale_type, const void *zeros,
                                          cuops_dtype_t act_type, void *packed);

/**
 * y[m,n] = x[m,k] * W^T with W the int4 weight prepacked by cuops_w4_prepack()
 * (same n, k, group_size, act_type), dequantized inside the GEMM; fp32
 * accumulation. x and y are row-major of act_type (F16 or BF16),
 * ldx >= max(1, k), ldy >= max(1, n), each aligned to its 2-byte elements
 * (CUOPS_STATUS_INVALID_VALUE otherwise). On a GPU handle `packed` must be
 * 16-byte aligned (cudaMalloc gives 256; CUOPS_STATUS_NOT_SUPPORTED otherwise).
 * Kernels form the weight (q - z) * s in act_type or apply s in fp32 after
 * the products; results agree within fp16-GEMM tolerance while 15 * |s|
 * fits act_type (65504 for F16), and beyond that depend on the kernel.
 */
CUOPS_API cuops_status_t cuops_gemm_w4a16(cuops_handle_t handle, int64_t m, int64_t n,
                                          int64_t k, int64_t group_size, const void *x,
                                          int64_t ldx, const void *packed, void *y,
                                          int64_t ldy, cuops_dtype_t act_type);

/** cuops_gemm_w4a16() with options (forced variant, split-K). */
CUOPS_API cuops_status_t cuops_gemm_w4a16_ex(cuops_handle_t handle, int64_t m, int64_t n,
                                             int64_t k, int64_t group_size, const void *x,
                                             int64_t ldx, const void *packed, void *y,
                                             int64_t ldy, cuops_dtype_t act_type,
                                             const cuops_options_t *options);

/* ------------------------------------------------------------------------ */
/* Importers: GPTQ / AWQ checkpoints into the cuops_dequant_int4 format      */
/* ------------------------------------------------------------------------ */

/**
 * Convert a 4-bit GPTQ checkpoint tensor set (AutoGPTQ / GPTQModel packing,
 * no act-order permutation) into the seed format of cuops_dequant_int4().
 *
 * @param n, k        output and input features: the dense weight is W[n,k];
 *                    k and n must be multiples of 8.
 * @param group_size  a positive even number, or any size >= k (pass k for
 *                    per-channel, GPTQ's -1).
 * @param qweight     int32 [k/8, n]: word [i][j] holds W[j, 8i+p] in bits 4p..4p+3.
 * @param qzeros      int32 [ceil(k/group), n/8]: word [g][j] holds the zero of
 *                    row 8j+p, group g, in bits 4p..4p+3.
 * @param scales      [ceil(k/group), n] of scale_type (F16, BF16 or F32).
 * @param gptq_version 1: the checkpoint stores zero-1 (AutoGPTQ's historical
 *                    format; a stored 15 would mean zero 16, which the seed format
 *                    cannot hold: CUOPS_STATUS_NOT_SUPPORTED); 2: stored as is.
 * @param qweight_out [n, ceil(k/2)] bytes with row pitch ldq_out >= ceil(k/2)
 *                    (low nibble = even k); bytes past ceil(k/2) are not written.
 * @param scales_out  [n, ceil(k/group)] of scale_type.
 * @param zeros_out   [n, ceil(k/group)] uint8 in 0..15.
 * On a GPU handle every pointer is a device pointer; with gptq_version 1 the
 * call waits for its own work (it reads back whether a zero overflowed).
 * qweight and qzeros must be 4-byte aligned, scales and scales_out aligned to
 * their element size (CUOPS_STATUS_INVALID_VALUE otherwise).
 */
CUOPS_API cuops_status_t cuops_import_gptq(cuops_handle_t handle, int64_t n, int64_t k,
                                           int64_t group_size, const int32_t *qweight,
                                           const int32_t *qzeros, const void *scales,
                                           cuops_dtype_t scale_type, int gptq_version,
                                           uint8_t *qweight_out, int64_t ldq_out,
                                           void *scales_out, uint8_t *zeros_out);

/**
 * Convert a 4-bit AWQ checkpoint (AutoAWQ "GEMM" packing) into the seed format.
 * @param n, k     n a multiple of 8; any k (k == 0 is an empty call).
 * group_size as for cuops_import_gptq.
 * @param qweight  int32 [k, n/8]: word [c][j] holds W[8j + o, c] for the nibble at
 *                 bits 4p..4p+3 with o = {0,2,4,6,1,3,5,7}[p].
 * @param qzeros   int32 [ceil(k/group), n/8], same interleaved nibble order;
 *                 zeros are stored as is.
 * @param scales   [ceil(k/group), n] of scale_type.
 * Outputs as in cuops_import_gptq().
 */
CUOPS_API cuops_status_t cuops_import_awq(cuops_handle_t handle, int64_t n, int64_t k,
                                          int64_t group_size, const int32_t *qweight,
                                          const int32_t *qzeros, const void *scales,
                                          cuops_dtype_t scale_type, uint8_t *qweight_out,
                                          int64_t ldq_out, void *scales_out,
                                          uint8_t *zeros_out);

/* ------------------------------------------------------------------------ */
/* Scan and reduce                                                          */
/* ------------------------------------------------------------------------ */

/**
 * Prefix scan of n elements: out[i] = in[0] op ... op in[i] (inclusive), or
 * in[0] op ... op in[i-1] with out[0] = identity (exclusive). Identities:
 * 0 for sum, the type's maximum (+inf for floats) for min, its minimum (-inf)
 * for max. Integer sums wrap in two's complement. Float results are bitwise
 * identical from run to run. min/max over inputs holding NaN, and which of
 * +0 and -0 they return, are unspecified (the backends may differ), as is
 * the sign of a float sum of zeros. in == out
 * is allowed (in place); in and out that overlap otherwise are refused
 * (CUOPS_STATUS_INVALID_VALUE). type I32, I64, F32 or F64; 0 <= n <= 2^40.
 * in and out must be aligned to the element size (CUOPS_STATUS_INVALID_VALUE
 * otherwise); any further alignment is optional.
 */
CUOPS_API cuops_status_t cuops_scan(cuops_handle_t handle, cuops_reduce_op_t op, int exclusive,
                                    cuops_dtype_t type, int64_t n, const void *in, void *out);

/** cuops_scan() with options (forced variant). */
CUOPS_API cuops_status_t cuops_scan_ex(cuops_handle_t handle, cuops_reduce_op_t op,
                                       int exclusive, cuops_dtype_t type, int64_t n,
                                       const void *in, void *out,
                                       const cuops_options_t *options);

/**
 * *out = in[0] op ... op in[n-1] (the identity when n == 0); out points to one
 * element of `type` (device memory on a GPU handle). Integer sums wrap in
 * two's complement, as in cuops_scan. Deterministic (float sums: the same
 * bits for the same input at the same address; min/max over NaN or signed
 * zeros as unspecified as for cuops_scan). in and out must be aligned to the
 * element size (CUOPS_STATUS_INVALID_VALUE otherwise).
 */
CUOPS_API cuops_status_t cuops_reduce(cuops_handle_t handle, cuops_reduce_op_t op,
                                      cuops_dtype_t type, int64_t n, const void *in, void *out);

/** cuops_reduce() with options (forced variant). */
CUOPS_API cuops_status_t cuops_reduce_ex(cuops_handle_t handle, cuops_reduce_op_t op,
                                         cuops_dtype_t type, int64_t n, const void *in,
                                         void *out, const cuops_options_t *options);

#ifdef __cplusplus
}
#endif

#endif /* CUOPS_H */
