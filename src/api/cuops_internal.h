/*
 * cuops_internal.h - what the API layer, the CPU backend and the CUDA backend
 * share: the handle, one descriptor per op (arguments already validated), and
 * the backend entry points.
 *
 * Layers (as in CUB): src/api validates and returns a status -> a backend
 * entry (src/cpu or src/cuda/<family>/<family>_dispatch.cu) chooses a kernel -> thin
 * __global__ entry -> per-CTA logic -> warp/thread primitives.
 *
 * Plain C11; included from .cu files too.
 */
#ifndef CUOPS_INTERNAL_H
#define CUOPS_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "cuops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUOPS_ERROR_LEN 512

struct cuops_handle {
    int device;                /* CUDA index, or CUOPS_DEVICE_CPU */
    void *stream;              /* cudaStream_t */
    void *stream_event;        /* cudaEvent_t that orders a change of stream
                                * (cuops_set_stream), created on the first one */
    int queued;                /* a CUDA call has entered (work may be queued) */
    void *user_workspace;      /* set by cuops_set_workspace, or NULL */
    size_t user_workspace_bytes;
    void *own_workspace;       /* cudaMalloc'd on demand by the CUDA backend */
    size_t own_workspace_bytes;
    /* device properties read once at create (CUDA backend) */
    int sm_major, sm_minor;    /* compute capability */
    int num_sms;
    int64_t l2_bytes;
    int64_t smem_optin_bytes;  /* max dynamic shared memory per block */
    int64_t dram_gbps;         /* peak DRAM bandwidth, GB/s, from the memory clock and bus
                                * width (0 if the runtime does not say) */
    const char *last_kernel;   /* static string: what the last call ran */
    /* src/cuda/scan: device-resident scan/reduce state (tile counters, epoch,
     * look-back status words) kept across calls so that no call needs a
     * memset; zeroed when allocated, capacity in tiles (scan_state.h) */
    void *scan_state;
    int64_t scan_state_tiles;
    /* arrival counters of the kernels whose CTAs reduce across the grid
     * (the sm90 GEMM's split tail, the W4A16 split-K kernels): one buffer
     * per handle, allocated and zeroed at create and left at zero by every
     * call (cuops_cuda_counters, src/cuda/common/backend.cu) */
    void *counters;
    char last_error[CUOPS_ERROR_LEN];
};

/* The start of every call that takes a handle (ops, importers, accessors):
 * the detail and the kernel name describe the last call only, so both are
 * reset; a call that runs a kernel names it once it has run. */
static inline void cuops_begin_call(struct cuops_handle *h)
{
    h->last_error[0] = '\0';
    h->last_kernel = "";
}

/* The int4 group size the backends see, or 0 for one the API refuses. A
 * group is a positive even number of columns, so a byte's two nibbles never
 * straddle groups; a size of at least k is one group per row ("k for
 * per-channel"), taken whatever its parity as the even size ceil(k/2) * 2
 * (2 for k = 0), so an odd k per channel works and every layout and kernel
 * sees an even size and the same single group. At k = INT64_MAX that even
 * size, k + 1, does not fit int64 (the sum would be signed overflow), so an
 * odd size there is refused. */
static inline int64_t cuops_int4_group_size(int64_t group_size, int64_t k)
{
    if (group_size <= 0) return 0;
    if (group_size % 2 == 0) return group_size;
    if (group_size >= k && k < INT64_MAX) return k > 0 ? k + (k & 1) : 2;
    return 0;
}

/* Record a failure detail on the handle and return `status`. */
cuops_status_t cuops_fail(struct cuops_handle *h, cuops_status_t status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The group-size check of every int4 entry point (dequant, W4A16 packed
 * size, prepack and GEMM, the importers): INVALID_VALUE naming `op` for a
 * size cuops_int4_group_size refuses, else *group_size becomes the size the
 * backends see. */
static inline cuops_status_t cuops_check_int4_group(struct cuops_handle *h, const char *op,
                                                    int64_t k, int64_t *group_size)
{
    const int64_t g = cuops_int4_group_size(*group_size, k);
    if (g == 0 && *group_size > 0 && *group_size >= k)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: group_size (%lld) >= k (%lld) asks for one group per row, of the "
                          "even size k + 1, which overflows int64; pass an even group_size",
                          op, (long long)*group_size, (long long)k);
    if (g == 0)
        return cuops_fail(h, CUOPS_STATUS_INVALID_VALUE,
                          "%s: group_size (%lld) must be a positive even number, or at least k "
                          "(one group per row)",
                          op, (long long)*group_size);
    *group_size = g;
    return CUOPS_STATUS_SUCCESS;
}

/* Bytes of one element of a dtype (U8 = 1); 0 for an unknown dtype. */
size_t cuops_dtype_size(cuops_dtype_t t);
/* "f16", "bf16", ... for messages; "?" for an unknown dtype. */
const char *cuops_dtype_name(cuops_dtype_t t);

/* CUOPS_STATUS_SUCCESS when `p` is NULL or a multiple of `elem_size`;
 * otherwise INVALID_VALUE with a detail naming the op and the argument. Every
 * kernel loads and stores whole elements, so a pointer between two elements
 * would fault on the GPU (and is undefined behaviour in C). */
cuops_status_t cuops_check_elem_pointer(struct cuops_handle *h, const char *op, const char *name,
                                        const void *p, size_t elem_size);

/* True when the options ask for the dispatch's own choice. */
int cuops_variant_is_auto(const cuops_options_t *opt);

/* ------------------------------------------------------------------------ */
/* Op descriptors: the validated arguments of one call.                      */
/* ------------------------------------------------------------------------ */

typedef struct cuops_gemm_desc {
    cuops_op_t trans_a, trans_b;
    int64_t m, n, k;           /* m, n >= 1 here; k >= 0 */
    float alpha, beta;
    const void *a; int64_t lda;
    const void *b; int64_t ldb;
    void *c; int64_t ldc;
    cuops_dtype_t ab_type, c_type;
} cuops_gemm_desc_t;

typedef struct cuops_dequant_desc {
    int64_t n, k, group_size;  /* n, k >= 1 here */
    int64_t num_groups;        /* ceil(k / group_size) */
    const uint8_t *qweight; int64_t ldq;
    const void *scales; cuops_dtype_t scale_type;
    const uint8_t *zeros;      /* NULL: symmetric, zero = 8 */
    void *out; int64_t ldo; cuops_dtype_t out_type;
} cuops_dequant_desc_t;

/* Prepack reads a dequant-format weight; act_type names the GEMM's activations. */
typedef struct cuops_w4_prepack_desc {
    cuops_dequant_desc_t w;    /* out/ldo/out_type unused */
    cuops_dtype_t act_type;
    void *packed;
} cuops_w4_prepack_desc_t;

typedef struct cuops_w4a16_desc {
    int64_t m, n, k, group_size;  /* m, n >= 1 here; k >= 0 (k == 0: the backend writes y = 0) */
    int64_t num_groups;
    const void *x; int64_t ldx;
    const void *packed;
    void *y; int64_t ldy;
    cuops_dtype_t act_type;
} cuops_w4a16_desc_t;

typedef struct cuops_scan_desc {
    cuops_reduce_op_t op;
    int exclusive;             /* 0 or 1 */
    cuops_dtype_t type;
    int64_t n;                 /* >= 1 here */
    const void *in;
    void *out;
} cuops_scan_desc_t;

typedef struct cuops_reduce_desc {
    cuops_reduce_op_t op;
    cuops_dtype_t type;
    int64_t n;                 /* >= 0: n == 0 writes the identity */
    const void *in;
    void *out;
} cuops_reduce_desc_t;

/* GPTQ / AWQ import (src/api/import.c validates; one descriptor for both). */
typedef enum cuops_import_format {
    CUOPS_IMPORT_GPTQ = 0,
    CUOPS_IMPORT_AWQ = 1
} cuops_import_format_t;

typedef struct cuops_import_desc {
    cuops_import_format_t format;
    int gptq_version;          /* 1 or 2 (GPTQ only) */
    int64_t n, k, group_size;  /* n, k >= 1; n % 8 == 0; GPTQ: k % 8 == 0 */
    int64_t num_groups;        /* ceil(k / group_size) */
    const int32_t *qweight;    /* GPTQ [k/8, n]; AWQ [k, n/8] */
    const int32_t *qzeros;     /* [num_groups, n/8] */
    const void *scales;        /* [num_groups, n] */
    cuops_dtype_t scale_type;
    uint8_t *qweight_out; int64_t ldq_out;  /* [n, ceil(k/2)] bytes */
    void *scales_out;          /* [n, num_groups] */
    uint8_t *zeros_out;        /* [n, num_groups] */
} cuops_import_desc_t;

/* Nibble slot (0..7) in which AWQ stores column offset o (0..7) of a packed
 * word: AWQ writes slot p from column {0,2,4,6,1,3,5,7}[p]; this is the inverse. */
static inline int cuops_awq_slot_of_column(int o) { return (o >> 1) + ((o & 1) << 2); }

cuops_status_t cuops_cpu_import(struct cuops_handle *h, const cuops_import_desc_t *d);
cuops_status_t cuops_cuda_import(struct cuops_handle *h, const cuops_import_desc_t *d);

/* ------------------------------------------------------------------------ */
/* CPU reference backend (src/cpu): synchronous, accumulates in double.     */
/* ------------------------------------------------------------------------ */

cuops_status_t cuops_cpu_gemm(struct cuops_handle *h, const cuops_gemm_desc_t *d);
cuops_status_t cuops_cpu_dequant_int4(struct cuops_handle *h, const cuops_dequant_desc_t *d);
size_t cuops_cpu_w4_packed_size(int64_t n, int64_t k, int64_t group_size, cuops_dtype_t act);
cuops_status_t cuops_cpu_w4_prepack(struct cuops_handle *h, const cuops_w4_prepack_desc_t *d);
cuops_status_t cuops_cpu_gemm_w4a16(struct cuops_handle *h, const cuops_w4a16_desc_t *d);
cuops_status_t cuops_cpu_scan(struct cuops_handle *h, const cuops_scan_desc_t *d);
cuops_status_t cuops_cpu_reduce(struct cuops_handle *h, const cuops_reduce_desc_t *d);

/* ------------------------------------------------------------------------ */
/* CUDA backend (src/cuda): asynchronous on h->stream.                       */
/* ------------------------------------------------------------------------ */

/* Check the device exists, read its properties into h. NO_DEVICE with a
 * detail written to `why` (CUOPS_ERROR_LEN bytes) when it cannot. */
cuops_status_t cuops_cuda_init(struct cuops_handle *h, char *why);
void cuops_cuda_fini(struct cuops_handle *h);
/* Move the handle to `stream`: the work the handle queued on its old stream
 * is ordered before anything queued on the new one (an event recorded on the
 * old stream, waited on by the new), since both would use the handle's
 * scratch (workspace, scan state). */
cuops_status_t cuops_cuda_switch_stream(struct cuops_handle *h, void *stream);
/* Make the handle's device current for a call; returns the caller's device
 * to give back to cuops_cuda_leave. */
int cuops_cuda_enter(struct cuops_handle *h);
void cuops_cuda_leave(struct cuops_handle *h, int prev);
/* The end of an API call on the CUDA backend: the caller's device back; no
 * failure detail left by a path the call fell back from when it succeeded
 * (a workspace that could not grow, a split with no room), and no kernel
 * name left by a launch that succeeded before a later step of a failed call
 * did not (cuops.h: "" after a failure). */
static inline cuops_status_t cuops_cuda_end_call(struct cuops_handle *h, int prev,
                                                 cuops_status_t st)
{
    cuops_cuda_leave(h, prev);
    if (st == CUOPS_STATUS_SUCCESS) h->last_error[0] = '\0';
    else h->last_kernel = "";
    return st;
}

cuops_status_t cuops_cuda_gemm(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                               const cuops_options_t *opt);
cuops_status_t cuops_cuda_dequant_int4(struct cuops_handle *h, const cuops_dequant_desc_t *d,
                                       const cuops_options_t *opt);
size_t cuops_cuda_w4_packed_size(int64_t n, int64_t k, int64_t group_size, cuops_dtype_t act);
cuops_status_t cuops_cuda_w4_prepack(struct cuops_handle *h, const cuops_w4_prepack_desc_t *d);
cuops_status_t cuops_cuda_gemm_w4a16(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                     const cuops_options_t *opt);
cuops_status_t cuops_cuda_scan(struct cuops_handle *h, const cuops_scan_desc_t *d,
                               const cuops_options_t *opt);
cuops_status_t cuops_cuda_reduce(struct cuops_handle *h, const cuops_reduce_desc_t *d,
                                 const cuops_options_t *opt);

/* Variant names each CUDA op family can be forced to (static arrays), for
 * cuops_variant_names(); each family's dispatch file defines its own. */
const char *const *cuops_cuda_gemm_variant_names(int *count);
const char *const *cuops_cuda_dequant_variant_names(int *count);
const char *const *cuops_cuda_w4a16_variant_names(int *count);
const char *const *cuops_cuda_scan_variant_names(int *count);
const char *const *cuops_cuda_reduce_variant_names(int *count);

/* Free h->scan_state (src/cuda/scan/scan_state.cu); called by cuops_cuda_fini. */
void cuops_cuda_scan_state_release(struct cuops_handle *h);

#ifdef __cplusplus
}
#endif

#endif /* CUOPS_INTERNAL_H */
