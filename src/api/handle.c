/*
 * handle.c - the cuops handle and the calls that do no work on data: create
 * and destroy, device/stream/workspace accessors, status and error strings,
 * variant names, and the small helpers (cuops_fail, dtype sizes and names)
 * that the API layer and both backends share.
 *
 * A handle is created for a CUDA device (the CUDA backend checks the device
 * and reads its properties) or for CUOPS_DEVICE_CPU (the reference backend,
 * which needs nothing). A failed create leaves no handle behind, so its
 * reason lives in a thread-local buffer instead (cuops_create_error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cuops_internal.h"

/* Per thread, so two threads creating handles at once keep their own reason. */
static _Thread_local char create_error_text[CUOPS_ERROR_LEN];

cuops_status_t cuops_fail(struct cuops_handle *h, cuops_status_t status, const char *fmt, ...)
{
    if (h) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(h->last_error, sizeof h->last_error, fmt, args);
        va_end(args);
    }
    return status;
}

size_t cuops_dtype_size(cuops_dtype_t t)
{
    switch (t) {
    case CUOPS_DTYPE_F16: return 2;
    case CUOPS_DTYPE_BF16: return 2;
    case CUOPS_DTYPE_F32: return 4;
    case CUOPS_DTYPE_F64: return 8;
    case CUOPS_DTYPE_I32: return 4;
    case CUOPS_DTYPE_I64: return 8;
    case CUOPS_DTYPE_U8: return 1;
    }
    return 0;
}

const char *cuops_dtype_name(cuops_dtype_t t)
{
    switch (t) {
    case CUOPS_DTYPE_F16: return "f16";
    case CUOPS_DTYPE_BF16: return "bf16";
    case CUOPS_DTYPE_F32: return "f32";
    case CUOPS_DTYPE_F64: return "f64";
    case CUOPS_DTYPE_I32: return "i32";
    case CUOPS_DTYPE_I64: return "i64";
    case CUOPS_DTYPE_U8: return "u8";
    }
    return "?";
}

int cuops_variant_is_auto(const cuops_options_t *opt)
{
    return opt == NULL || opt->variant == NULL || strcmp(opt->variant, "auto") == 0;
}

/* ------------------------------------------------------------------------ */
/* Life cycle                                                               */
/* ------------------------------------------------------------------------ */

CUOPS_API cuops_status_t cuops_create(cuops_handle_t *handle, int device)
{
    create_error_text[0] = '\0';
    if (handle == NULL) {
        snprintf(create_error_text, sizeof create_error_text,
                 "cuops_create: the handle pointer is NULL");
        return CUOPS_STATUS_INVALID_VALUE;
    }
    *handle = NULL;
    if (device < CUOPS_DEVICE_CPU) {
        snprintf(create_error_text, sizeof create_error_text,
                 "cuops_create: device (%d) must be a CUDA device index >= 0 or "
                 "CUOPS_DEVICE_CPU (-1)",
                 device);
        return CUOPS_STATUS_INVALID_VALUE;
    }
    struct cuops_handle *h = calloc(1, sizeof *h);
    if (h == NULL) {
        snprintf(create_error_text, sizeof create_error_text,
                 "cuops_create: could not allocate the handle (%zu bytes)", sizeof *h);
        return CUOPS_STATUS_ALLOC_FAILED;
    }
    h->device = device;
    h->last_kernel = "";
    if (device >= 0) {
        char why[CUOPS_ERROR_LEN];
        why[0] = '\0';
        cuops_status_t st = cuops_cuda_init(h, why);
        if (st != CUOPS_STATUS_SUCCESS) {
            if (why[0] == '\0')
                snprintf(why, sizeof why, "CUDA device %d could not be opened (%s)", device,
                         cuops_status_string(st));
            why[CUOPS_ERROR_LEN - 1] = '\0';
            snprintf(create_error_text, sizeof create_error_text, "cuops_create: %s", why);
            free(h);
            return st;
        }
    }
    *handle = h;
    return CUOPS_STATUS_SUCCESS;
}

CUOPS_API cuops_status_t cuops_destroy(cuops_handle_t handle)
{
    if (handle == NULL) return CUOPS_STATUS_SUCCESS;
    if (handle->device >= 0) cuops_cuda_fini(handle);
    free(handle);
    return CUOPS_STATUS_SUCCESS;
}

CUOPS_API const char *cuops_create_error(void) { return create_error_text; }

/* ------------------------------------------------------------------------ */
/* Accessors                                                                */
/* ------------------------------------------------------------------------ */

CUOPS_API cuops_status_t cuops_get_device(cuops_handle_t handle, int *device)
{
    if (handle == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(handle);
    if (device == NULL)
        return cuops_fail(handle, CUOPS_STATUS_INVALID_VALUE, "get_device: device pointer is NULL");
    *device = handle->device;
    return CUOPS_STATUS_SUCCESS;
}

CUOPS_API cuops_status_t cuops_set_stream(cuops_handle_t handle, void *stream)
{
    if (handle == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(handle);
    if (handle->device == CUOPS_DEVICE_CPU) {
        handle->stream = stream;
        return CUOPS_STATUS_SUCCESS;
    }
    return cuops_cuda_switch_stream(handle, stream);
}

CUOPS_API cuops_status_t cuops_get_stream(cuops_handle_t handle, void **stream)
{
    if (handle == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(handle);
    if (stream == NULL)
        return cuops_fail(handle, CUOPS_STATUS_INVALID_VALUE, "get_stream: stream pointer is NULL");
    *stream = handle->stream;
    return CUOPS_STATUS_SUCCESS;
}

CUOPS_API cuops_status_t cuops_set_workspace(cuops_handle_t handle, void *workspace, size_t bytes)
{
    if (handle == NULL) return CUOPS_STATUS_INVALID_VALUE;
    cuops_begin_call(handle);
    /* NULL hands the choice back to the handle's own workspace. */
    handle->user_workspace = workspace;
    handle->user_workspace_bytes = workspace ? bytes : 0;
    return CUOPS_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Strings                                                                  */
/* ------------------------------------------------------------------------ */

CUOPS_API const char *cuops_status_string(cuops_status_t status)
{
    switch (status) {
    case CUOPS_STATUS_SUCCESS: return "CUOPS_STATUS_SUCCESS";
    case CUOPS_STATUS_INVALID_VALUE: return "CUOPS_STATUS_INVALID_VALUE";
    case CUOPS_STATUS_NOT_SUPPORTED: return "CUOPS_STATUS_NOT_SUPPORTED";
    case CUOPS_STATUS_NO_DEVICE: return "CUOPS_STATUS_NO_DEVICE";
    case CUOPS_STATUS_ALLOC_FAILED: return "CUOPS_STATUS_ALLOC_FAILED";
    case CUOPS_STATUS_CUDA_ERROR: return "CUOPS_STATUS_CUDA_ERROR";
    case CUOPS_STATUS_INTERNAL_ERROR: return "CUOPS_STATUS_INTERNAL_ERROR";
    }
    return "CUOPS_STATUS_UNKNOWN";
}

CUOPS_API const char *cuops_last_error(cuops_handle_t handle)
{
    if (handle == NULL) return "invalid handle (NULL)";
    return handle->last_error;
}

CUOPS_API const char *cuops_last_kernel(cuops_handle_t handle)
{
    if (handle == NULL || handle->last_kernel == NULL) return "";
    return handle->last_kernel;
}

CUOPS_API cuops_status_t cuops_variant_names(const char *op, const char *const **names, int *count)
{
    if (op == NULL || names == NULL || count == NULL) return CUOPS_STATUS_INVALID_VALUE;
    const char *const *list = NULL;
    int n = 0;
    if (strcmp(op, "gemm") == 0)
        list = cuops_cuda_gemm_variant_names(&n);
    else if (strcmp(op, "dequant") == 0)
        list = cuops_cuda_dequant_variant_names(&n);
    else if (strcmp(op, "w4a16") == 0)
        list = cuops_cuda_w4a16_variant_names(&n);
    else if (strcmp(op, "scan") == 0)
        list = cuops_cuda_scan_variant_names(&n);
    else if (strcmp(op, "reduce") == 0)
        list = cuops_cuda_reduce_variant_names(&n);
    else
        return CUOPS_STATUS_INVALID_VALUE;
    *names = list;
    *count = n;
    return CUOPS_STATUS_SUCCESS;
}
