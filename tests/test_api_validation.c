/*
 * test_api_validation.c - every op's argument validation, on the CPU handle
 * and (when a CUDA device is present) on a GPU handle: a table of bad calls
 * with the status each must return, checking that no buffer changed a single
 * byte and that cuops_last_error() explains the failure. Also the handle
 * calls: create/destroy, status strings, variant names, last error/kernel.
 *
 * Needs no GPU: GPU rows are skipped (and counted as skipped) without one.
 * On a GPU handle the rows pass host buffers on purpose: every row must be
 * refused by the API before any backend could touch memory, so the pointers
 * are never dereferenced.
 *
 *   make build/tests/test_api_validation && ./build/tests/test_api_validation
 */
#include <inttypes.h>

#include "test_util.h"

/* ------------------------------------------------------------------------ */
/* Buffers: one arena, restored from a random golden copy before every row   */
/* and compared byte for byte after it.                                      */
/* ------------------------------------------------------------------------ */

enum { BUF_A, BUF_B, BUF_C, BUF_Q, BUF_S, BUF_Z, BUF_OUT, BUF_X, BUF_Y, BUF_PACKED, BUF_IN,
       BUF_RES, BUF_COUNT };
#define BUF_BYTES 4096
static _Alignas(16) unsigned char arena[BUF_COUNT][BUF_BYTES];
static unsigned char golden[BUF_COUNT][BUF_BYTES];
#define BUF(i) ((void *)arena[(i)])

#define A BUF(BUF_A)
#define B BUF(BUF_B)
#define C BUF(BUF_C)
#define Q BUF(BUF_Q)
#define S BUF(BUF_S)
#define Z BUF(BUF_Z)
#define OUT BUF(BUF_OUT)
#define X BUF(BUF_X)
#define Y BUF(BUF_Y)
#define PACKED BUF(BUF_PACKED)
#define IN BUF(BUF_IN)
#define RES BUF(BUF_RES)

#define F16 CUOPS_DTYPE_F16
#define BF16 CUOPS_DTYPE_BF16
#define F32 CUOPS_DTYPE_F32
#define F64 CUOPS_DTYPE_F64
#define I32 CUOPS_DTYPE_I32
#define I64 CUOPS_DTYPE_I64
#define U8 CUOPS_DTYPE_U8
#define OPN CUOPS_OP_N
#define OPT CUOPS_OP_T
#define SUM CUOPS_REDUCE_SUM
#define MIN CUOPS_REDUCE_MIN
#define MAX CUOPS_REDUCE_MAX
#define INV CUOPS_STATUS_INVALID_VALUE
#define NSUP CUOPS_STATUS_NOT_SUPPORTED
#define OK CUOPS_STATUS_SUCCESS

#define BAD_OP ((cuops_op_t)99)
#define BAD_DTYPE ((cuops_dtype_t)99)
#define BAD_REDUCE ((cuops_reduce_op_t)99)
#define P40 ((int64_t)1 << 40)

static void arm(void) { memcpy(arena, golden, sizeof arena); }
static int untouched(void) { return memcmp(arena, golden, sizeof arena) == 0; }

/* Which handle the table is running on, for messages ("cpu" or "gpu"). Kept
 * apart from the handle: asking the handle would clear its last error. */
static const char *table_label = "cpu";
static const char *handle_label(cuops_handle_t h)
{
    (void)h;
    return table_label;
}

/* One row: the status, no byte changed anywhere, and a detail for failures
 * (a NULL handle has nowhere to keep one). */
static void check_row(cuops_handle_t h, cuops_handle_t row_handle, cuops_status_t got,
                      cuops_status_t expected, const char *call, int line)
{
    CHECK(got == expected, "[%s] line %d: %s: got %s, expected %s (detail: %s)",
          handle_label(h), line, call, cuops_status_string(got), cuops_status_string(expected),
          row_handle ? cuops_last_error(row_handle) : "-");
    CHECK(untouched(), "[%s] line %d: %s: a buffer was modified", handle_label(h), line, call);
    if (row_handle && expected != OK)
        CHECK(cuops_last_error(row_handle)[0] != '\0', "[%s] line %d: %s: empty detail",
              handle_label(h), line, call);
    if (row_handle && expected == OK)
        CHECK(cuops_last_error(row_handle)[0] == '\0', "[%s] line %d: %s: detail after success: %s",
              handle_label(h), line, call, cuops_last_error(row_handle));
}

/* `hh` is the handle the call uses (may be NULL); `h` labels the table run. */
#define ROW(hh, expected, call)                                    \
    do {                                                           \
        arm();                                                     \
        cuops_status_t row_st_ = (call);                           \
        check_row(h, (hh), row_st_, (expected), #call, __LINE__);  \
    } while (0)

static const cuops_options_t bogus_variant = {"no_such_variant", 0, 0};
static const cuops_options_t gpu_variant_on_cpu = {"sm90_ws_128x256", 0, 0};
/* a negative split count: INVALID_VALUE on every op, before dtype support */
static const cuops_options_t negative_split = {NULL, -2, 0};

/* ------------------------------------------------------------------------ */
/* The table. Baseline valid shapes:                                        */
/*   gemm    m=4 n=5 k=6, A[4,6] lda 6, B[6,5] ldb 5, C[4,5] ldc 5           */
/*   dequant n=3 k=10 group 4 (3 groups), ldq 5, ldo 10                      */
/*   w4a16   m=2 n=3 k=10 group 4, ldx 10, ldy 3                             */
/*   scan    n=100                                                          */
/* ------------------------------------------------------------------------ */

static void gemm_rows(cuops_handle_t h, int is_cpu)
{
    ROW(NULL, INV, cuops_gemm(NULL, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, BAD_OP, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, BAD_OP, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, (cuops_op_t)-1, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, BAD_DTYPE, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, BAD_DTYPE));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, (cuops_dtype_t)-1, F32));
    /* negative sizes */
    ROW(h, INV, cuops_gemm(h, OPN, OPN, -1, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, -1, 6, 1, A, 6, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, -1, 1, A, 6, B, 5, 0, C, 5, F16, F32));
    /* leading dimensions one short, for each transpose */
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 5, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPT, OPN, 4, 5, 6, 1, A, 3, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 4, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPT, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 4, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPT, OPT, 4, 5, 6, 1, A, 4, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, -6, B, 5, 0, C, 5, F16, F32));
    /* lda >= max(1, k) even when k == 0 */
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 0, 1, A, 0, B, 5, 0, C, 5, F16, F32));
    /* byte extents overflowing int64 */
    ROW(h, INV, cuops_gemm(h, OPN, OPN, P40, P40, P40, 1, A, P40, B, P40, 0, C, P40, F16, F32));
    /* elements fit (2^61) but f32 bytes (2^63) do not */
    ROW(h, INV, cuops_gemm(h, OPN, OPN, (int64_t)1 << 30, 1, (int64_t)1 << 31, 1, A,
                           (int64_t)1 << 31, B, 1, 0, C, 1, F32, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 2, 1, 1, 1, A, 1, B, 1, 0, C, INT64_MAX, F16, F32));
    /* NULL data */
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, NULL, 6, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, NULL, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, NULL, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 0, 1, NULL, 1, NULL, 5, 0.5f, NULL, 5, F16, F32));
    /* dtype combinations the library does not serve */
    ROW(h, NSUP, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F32, F16));
    ROW(h, NSUP, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F32, BF16));
    ROW(h, NSUP, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F64, F64));
    ROW(h, NSUP, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, I32, I32));
    ROW(h, NSUP, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, U8, F32));
    ROW(h, NSUP, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, F64));
    ROW(h, NSUP, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, BF16, I64));
    /* an invalid argument outranks an unsupported dtype */
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 5, B, 5, 0, C, 5, F64, F64));
    /* empty problems: success, nothing touched, NULL pointers allowed */
    ROW(h, OK, cuops_gemm(h, OPN, OPN, 0, 5, 6, 1, NULL, 6, NULL, 5, 0, NULL, 5, F16, F32));
    ROW(h, OK, cuops_gemm(h, OPT, OPT, 4, 0, 6, 1, NULL, 4, NULL, 6, 1, NULL, 1, BF16, BF16));
    ROW(h, OK, cuops_gemm(h, OPN, OPN, 0, 0, 0, 1, NULL, 1, NULL, 1, 1, NULL, 1, F32, F32));
    /* ...but their enums and leading dimensions are still checked */
    ROW(h, INV, cuops_gemm(h, BAD_OP, OPN, 0, 5, 6, 1, NULL, 6, NULL, 5, 0, NULL, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 0, 5, 6, 1, NULL, 6, NULL, 5, 0, NULL, 4, F16, F32));
    ROW(h, NSUP, cuops_gemm(h, OPN, OPN, 0, 5, 6, 1, NULL, 6, NULL, 5, 0, NULL, 5, F32, F16));
    /* data pointers between two elements (one element past an aligned base
     * is fine: the GPU tests run it); k == 0 reads neither A nor B */
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, (char *)A + 1, 6, B, 5, 0, C, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPT, 4, 5, 6, 1, A, 6, (char *)B + 1, 6, 0, C, 5, BF16, BF16));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, (char *)C + 2, 5, F16, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, (char *)A + 2, 6, B, 5, 0, C, 5, F32, F32));
    ROW(h, INV, cuops_gemm(h, OPT, OPN, 4, 5, 6, 1, A, 4, B, 5, 1, (char *)C + 3, 5, F16, F16));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 4, 5, 0, 1, NULL, 1, NULL, 5, 0.5f, (char *)C + 1, 5, F16, BF16));
    ROW(h, OK, cuops_gemm(h, OPN, OPN, 0, 5, 6, 1, (char *)A + 1, 6, (char *)B + 1, 5, 0, (char *)C + 1, 5, F16, F32));
    /* an unserved dtype outranks a misaligned pointer (the size is the dtype's) */
    ROW(h, NSUP, cuops_gemm(h, OPN, OPN, 4, 5, 6, 1, (char *)A + 1, 6, B, 5, 0, C, 5, F64, F64));
    ROW(h, INV, cuops_gemm_ex(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, F32,
                              &negative_split));
    ROW(h, INV, cuops_gemm_ex(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F64, F64,
                              &negative_split));
    ROW(h, INV, cuops_gemm_ex(h, OPN, OPN, 0, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, F32,
                              &negative_split));
    if (is_cpu) {
        ROW(h, NSUP, cuops_gemm_ex(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, F32,
                                   &bogus_variant));
        ROW(h, NSUP, cuops_gemm_ex(h, OPN, OPN, 4, 5, 6, 1, A, 6, B, 5, 0, C, 5, F16, F32,
                                   &gpu_variant_on_cpu));
    }
}

static void dequant_rows(cuops_handle_t h, int is_cpu)
{
    ROW(NULL, INV, cuops_dequant_int4(NULL, 3, 10, 4, Q, 5, S, F16, Z, OUT, 10, F32));
    ROW(h, INV, cuops_dequant_int4(h, -1, 10, 4, Q, 5, S, F16, Z, OUT, 10, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, -1, 4, Q, 5, S, F16, Z, OUT, 10, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, 10, 0, Q, 5, S, F16, Z, OUT, 10, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, 10, -2, Q, 5, S, F16, Z, OUT, 10, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, 10, 3, Q, 5, S, F16, Z, OUT, 10, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, 10, 4, Q, 4, S, F16, Z, OUT, 10, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, 11, 4, Q, 5, S, F16, Z, OUT, 11, F32)); /* ceil(11/2)=6 */
    ROW(h, INV, cuops_dequant_int4(h, 3, 10, 4, Q, 5, S, F16, Z, OUT, 9, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, 10, 4, Q, 5, S, BAD_DTYPE, Z, OUT, 10, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, 10, 4, Q, 5, S, F16, Z, OUT, 10, BAD_DTYPE));
    ROW(h, INV, cuops_dequant_int4(h, 3, 10, 4, NULL, 5, S, F16, Z, OUT, 10, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, 10, 4, Q, 5, NULL, F16, Z, OUT, 10, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, 10, 4, Q, 5, S, F16, Z, NULL, 10, F32));
    ROW(h, INV, cuops_dequant_int4(h, P40, P40, 128, Q, P40, S, F16, Z, OUT, P40, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, 10, 4, Q, 5, S, F16, Z, OUT, INT64_MAX, F32));
    ROW(h, NSUP, cuops_dequant_int4(h, 3, 10, 4, Q, 5, S, I32, Z, OUT, 10, F32));
    ROW(h, NSUP, cuops_dequant_int4(h, 3, 10, 4, Q, 5, S, U8, Z, OUT, 10, F32));
    ROW(h, NSUP, cuops_dequant_int4(h, 3, 10, 4, Q, 5, S, F64, Z, OUT, 10, F32));
    ROW(h, NSUP, cuops_dequant_int4(h, 3, 10, 4, Q, 5, S, F16, Z, OUT, 10, F64));
    ROW(h, NSUP, cuops_dequant_int4(h, 3, 10, 4, Q, 5, S, F16, Z, OUT, 10, I64));
    ROW(h, OK, cuops_dequant_int4(h, 0, 10, 4, NULL, 5, NULL, F16, NULL, NULL, 10, F32));
    ROW(h, OK, cuops_dequant_int4(h, 3, 0, 4, NULL, 1, NULL, F16, NULL, NULL, 1, F32));
    ROW(h, INV, cuops_dequant_int4(h, 3, 0, 4, NULL, 0, NULL, F16, NULL, NULL, 1, F32));
    ROW(h, INV, cuops_dequant_int4(h, 0, 10, 3, NULL, 5, NULL, F16, NULL, NULL, 10, F32));
    ROW(h, INV, cuops_dequant_int4_ex(h, 3, 10, 4, Q, 5, S, F16, Z, OUT, 10, F32, &negative_split));
    if (is_cpu)
        ROW(h, NSUP, cuops_dequant_int4_ex(h, 3, 10, 4, Q, 5, S, F16, Z, OUT, 10, F32,
                                           &bogus_variant));
}

static void w4_rows(cuops_handle_t h, int is_cpu)
{
    size_t *bytes = (size_t *)RES;
    ROW(NULL, INV, cuops_w4_packed_size(NULL, 3, 10, 4, F16, bytes));
    ROW(h, INV, cuops_w4_packed_size(h, 3, 10, 4, F16, NULL));
    ROW(h, INV, cuops_w4_packed_size(h, -1, 10, 4, F16, bytes));
    ROW(h, INV, cuops_w4_packed_size(h, 3, -1, 4, F16, bytes));
    ROW(h, INV, cuops_w4_packed_size(h, 3, 10, 0, F16, bytes));
    ROW(h, INV, cuops_w4_packed_size(h, 3, 10, 3, F16, bytes));
    ROW(h, INV, cuops_w4_packed_size(h, 3, 10, -2, F16, bytes));
    ROW(h, INV, cuops_w4_packed_size(h, 3, 10, 4, BAD_DTYPE, bytes));
    ROW(h, INV, cuops_w4_packed_size(h, (int64_t)1 << 62, (int64_t)1 << 62, 4, F16, bytes));
    ROW(h, NSUP, cuops_w4_packed_size(h, 3, 10, 4, F32, bytes));
    ROW(h, NSUP, cuops_w4_packed_size(h, 3, 10, 4, I32, bytes));

    ROW(NULL, INV, cuops_w4_prepack(NULL, 3, 10, 4, Q, 5, S, F16, Z, F16, PACKED));
    ROW(h, INV, cuops_w4_prepack(h, -1, 10, 4, Q, 5, S, F16, Z, F16, PACKED));
    ROW(h, INV, cuops_w4_prepack(h, 3, 10, 3, Q, 5, S, F16, Z, F16, PACKED));
    ROW(h, INV, cuops_w4_prepack(h, 3, 10, 0, Q, 5, S, F16, Z, F16, PACKED));
    ROW(h, INV, cuops_w4_prepack(h, 3, 10, 4, Q, 4, S, F16, Z, F16, PACKED));
    ROW(h, INV, cuops_w4_prepack(h, 3, 10, 4, Q, 5, S, BAD_DTYPE, Z, F16, PACKED));
    ROW(h, INV, cuops_w4_prepack(h, 3, 10, 4, Q, 5, S, F16, Z, BAD_DTYPE, PACKED));
    ROW(h, INV, cuops_w4_prepack(h, 3, 10, 4, NULL, 5, S, F16, Z, F16, PACKED));
    ROW(h, INV, cuops_w4_prepack(h, 3, 10, 4, Q, 5, NULL, F16, Z, F16, PACKED));
    ROW(h, INV, cuops_w4_prepack(h, 3, 10, 4, Q, 5, S, F16, Z, F16, NULL));
    ROW(h, NSUP, cuops_w4_prepack(h, 3, 10, 4, Q, 5, S, I32, Z, F16, PACKED));
    ROW(h, NSUP, cuops_w4_prepack(h, 3, 10, 4, Q, 5, S, F16, Z, F32, PACKED));
    ROW(h, OK, cuops_w4_prepack(h, 0, 10, 4, NULL, 5, NULL, F16, NULL, F16, NULL));
    ROW(h, INV, cuops_w4_prepack(h, 3, 10, 4, Q, 5, (char *)S + 1, BF16, Z, F16, PACKED));
    ROW(h, INV, cuops_w4_prepack(h, 3, 10, 4, Q, 5, (char *)S + 6, F32, Z, BF16, PACKED));

    ROW(NULL, INV, cuops_gemm_w4a16(NULL, 2, 3, 10, 4, X, 10, PACKED, Y, 3, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, -1, 3, 10, 4, X, 10, PACKED, Y, 3, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, -1, 10, 4, X, 10, PACKED, Y, 3, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, 3, -1, 4, X, 10, PACKED, Y, 3, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, 3, 10, 0, X, 10, PACKED, Y, 3, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, 3, 10, 3, X, 10, PACKED, Y, 3, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, 3, 10, 4, X, 9, PACKED, Y, 3, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, 3, 10, 4, X, 10, PACKED, Y, 2, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, 3, 10, 4, X, 10, PACKED, Y, 3, BAD_DTYPE));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, 3, 10, 4, NULL, 10, PACKED, Y, 3, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, 3, 10, 4, X, 10, NULL, Y, 3, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, 3, 10, 4, X, 10, PACKED, NULL, 3, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, P40, 3, P40, 4, X, P40, PACKED, Y, 3, F16));
    ROW(h, NSUP, cuops_gemm_w4a16(h, 2, 3, 10, 4, X, 10, PACKED, Y, 3, F32));
    ROW(h, NSUP, cuops_gemm_w4a16(h, 2, 3, 10, 4, X, 10, PACKED, Y, 3, I32));
    ROW(h, OK, cuops_gemm_w4a16(h, 0, 3, 10, 4, NULL, 10, NULL, NULL, 3, F16));
    ROW(h, OK, cuops_gemm_w4a16(h, 2, 0, 10, 4, NULL, 10, NULL, NULL, 1, BF16));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, 3, 10, 4, (char *)X + 1, 10, PACKED, Y, 3, F16));
    ROW(h, INV, cuops_gemm_w4a16(h, 2, 3, 10, 4, X, 10, PACKED, (char *)Y + 3, 3, BF16));
    ROW(h, OK, cuops_gemm_w4a16(h, 2, 0, 10, 4, (char *)X + 1, 10, NULL, (char *)Y + 1, 1, F16));
    ROW(h, INV, cuops_gemm_w4a16_ex(h, 2, 3, 10, 4, X, 10, PACKED, Y, 3, F16, &negative_split));
    if (is_cpu)
        ROW(h, NSUP, cuops_gemm_w4a16_ex(h, 2, 3, 10, 4, X, 10, PACKED, Y, 3, F16, &bogus_variant));
}

static void scan_rows(cuops_handle_t h, int is_cpu)
{
    ROW(NULL, INV, cuops_scan(NULL, SUM, 0, I32, 100, IN, OUT));
    ROW(h, INV, cuops_scan(h, BAD_REDUCE, 0, I32, 100, IN, OUT));
    ROW(h, INV, cuops_scan(h, (cuops_reduce_op_t)-1, 0, I32, 100, IN, OUT));
    ROW(h, INV, cuops_scan(h, SUM, 0, BAD_DTYPE, 100, IN, OUT));
    ROW(h, INV, cuops_scan(h, SUM, 0, I32, -1, IN, OUT));
    ROW(h, INV, cuops_scan(h, SUM, 0, I32, P40 + 1, IN, OUT));
    ROW(h, INV, cuops_scan(h, SUM, 0, I32, INT64_MAX, IN, OUT));
    ROW(h, INV, cuops_scan(h, SUM, 0, I32, P40, NULL, OUT));
    ROW(h, INV, cuops_scan(h, MIN, 1, F32, 100, NULL, OUT));
    ROW(h, INV, cuops_scan(h, MAX, 0, F64, 100, IN, NULL));
    ROW(h, NSUP, cuops_scan(h, SUM, 0, U8, 100, IN, OUT));
    ROW(h, NSUP, cuops_scan(h, SUM, 0, F16, 100, IN, OUT));
    ROW(h, NSUP, cuops_scan(h, MAX, 1, BF16, 100, IN, OUT));
    ROW(h, OK, cuops_scan(h, SUM, 0, I32, 0, NULL, NULL));
    ROW(h, INV, cuops_scan(h, BAD_REDUCE, 0, I32, 0, NULL, NULL));
    if (is_cpu) ROW(h, NSUP, cuops_scan_ex(h, SUM, 0, I32, 100, IN, OUT, &bogus_variant));
    ROW(h, INV, cuops_scan_ex(h, SUM, 0, I32, 100, IN, OUT, &negative_split));

    ROW(NULL, INV, cuops_reduce(NULL, SUM, I32, 100, IN, RES));
    ROW(h, INV, cuops_reduce(h, BAD_REDUCE, I32, 100, IN, RES));
    ROW(h, INV, cuops_reduce(h, SUM, BAD_DTYPE, 100, IN, RES));
    ROW(h, INV, cuops_reduce(h, SUM, I64, -1, IN, RES));
    ROW(h, INV, cuops_reduce(h, SUM, I64, P40 + 1, IN, RES));
    ROW(h, INV, cuops_reduce(h, SUM, I64, 100, NULL, RES));
    ROW(h, INV, cuops_reduce(h, MIN, F64, 100, IN, NULL));
    ROW(h, INV, cuops_reduce(h, MIN, F64, 0, NULL, NULL)); /* n == 0 still writes *out */
    ROW(h, NSUP, cuops_reduce(h, SUM, U8, 100, IN, RES));
    ROW(h, NSUP, cuops_reduce(h, MAX, F16, 100, IN, RES));
    ROW(h, NSUP, cuops_reduce(h, MIN, BF16, 100, IN, RES));
    ROW(h, INV, cuops_reduce_ex(h, SUM, I32, 100, IN, RES, &negative_split));
    if (is_cpu) ROW(h, NSUP, cuops_reduce_ex(h, SUM, I32, 100, IN, RES, &bogus_variant));
    /* pointers that are not a multiple of the element size (one element past
     * an aligned base is fine and is tested on the GPU) */
    ROW(h, INV, cuops_scan(h, SUM, 0, I32, 100, (char *)IN + 2, OUT));
    ROW(h, INV, cuops_scan(h, SUM, 1, F64, 100, IN, (char *)OUT + 4));
    ROW(h, INV, cuops_scan(h, MIN, 0, I64, 100, (char *)IN + 12, (char *)OUT + 8));
    ROW(h, OK, cuops_scan(h, SUM, 0, F32, 0, (char *)IN + 1, (char *)OUT + 1)); /* n == 0: no access */
    /* in and out overlapping without being equal (in == out is in place) */
    ROW(h, INV, cuops_scan(h, SUM, 0, I32, 100, IN, (char *)IN + 4));
    ROW(h, INV, cuops_scan(h, SUM, 1, F64, 100, (char *)IN + 8, IN));
    ROW(h, INV, cuops_scan(h, MAX, 0, I64, 10, IN, (char *)IN + 72));
    ROW(h, INV, cuops_reduce(h, SUM, F32, 100, (char *)IN + 1, RES));
    ROW(h, INV, cuops_reduce(h, SUM, I64, 100, (char *)IN + 8 + 4, RES));
    ROW(h, INV, cuops_reduce(h, MAX, I64, 100, IN, (char *)RES + 4));
    ROW(h, INV, cuops_reduce(h, MAX, F64, 0, NULL, (char *)RES + 2)); /* n == 0 still writes */
}

static void rejection_table(cuops_handle_t h, int is_cpu)
{
    table_label = is_cpu ? "cpu" : "gpu";
    gemm_rows(h, is_cpu);
    dequant_rows(h, is_cpu);
    w4_rows(h, is_cpu);
    scan_rows(h, is_cpu);
}

/* ------------------------------------------------------------------------ */
/* CPU-only: calls that succeed and do write                                */
/* ------------------------------------------------------------------------ */

/* The CPU layout's size at the largest k the checks accept: k = INT64_MAX and
 * INT64_MAX - 1 have the same ceil(k/2) bytes per row and the same groups, so
 * the same size, and it holds at least the nibbles, a 2-byte scale and a zero
 * byte per group (the layout once took ceil(k/2) as (k + 1) / 2, which
 * overflows at INT64_MAX). */
static void w4_size_extremes(cuops_handle_t h)
{
    size_t odd = 0, even = 0;
    CHECK_STATUS(cuops_w4_packed_size(h, 1, INT64_MAX, 128, F16, &odd), OK);
    CHECK_STATUS(cuops_w4_packed_size(h, 1, INT64_MAX - 1, 128, F16, &even), OK);
    const size_t least = ((size_t)1 << 62) + 3 * ((size_t)1 << 56);
    CHECK(odd == even && even >= least,
          "packed size %zu at k = INT64_MAX, %zu at INT64_MAX - 1 (at least %zu)", odd, even, least);
}

/* The leading-dimension bound is exact: the minimum passes, one less fails. */
static void gemm_ld_boundaries(cuops_handle_t h)
{
    const int64_t m = 3, n = 4, k = 5;
    static float a[64], b[64], c[64];
    for (int i = 0; i < 64; i++) {
        a[i] = (float)tu_rand_uniform(-1, 1);
        b[i] = (float)tu_rand_uniform(-1, 1);
    }
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            int64_t lda = ta == OPN ? k : m, ldb = tb == OPN ? n : k, ldc = n;
            tu_poison(c, F32, 64);
            cuops_status_t st = cuops_gemm(h, (cuops_op_t)ta, (cuops_op_t)tb, m, n, k, 1.0f, a,
                                           lda, b, ldb, 0.0f, c, ldc, F32, F32);
            CHECK(st == OK, "ta=%d tb=%d minimal ld: %s (%s)", ta, tb, cuops_status_string(st),
                  cuops_last_error(h));
            CHECK(strcmp(cuops_last_kernel(h), "cpu_reference") == 0, "last_kernel '%s'",
                  cuops_last_kernel(h));
            CHECK(cuops_last_error(h)[0] == '\0', "detail after success: %s", cuops_last_error(h));
            int written = 1;
            for (int64_t i = 0; i < m * n; i++) written &= !isnan(c[i]);
            CHECK(written, "ta=%d tb=%d: C not fully written", ta, tb);

            float before[64];
            memcpy(before, c, sizeof before);
            st = cuops_gemm(h, (cuops_op_t)ta, (cuops_op_t)tb, m, n, k, 1.0f, a, lda - 1, b, ldb,
                            0.0f, c, ldc, F32, F32);
            CHECK(st == INV, "ta=%d tb=%d lda-1: %s", ta, tb, cuops_status_string(st));
            CHECK(strcmp(cuops_last_kernel(h), "") == 0, "last_kernel after failure '%s'",
                  cuops_last_kernel(h));
            st = cuops_gemm(h, (cuops_op_t)ta, (cuops_op_t)tb, m, n, k, 1.0f, a, lda, b, ldb - 1,
                            0.0f, c, ldc, F32, F32);
            CHECK(st == INV, "ta=%d tb=%d ldb-1: %s", ta, tb, cuops_status_string(st));
            st = cuops_gemm(h, (cuops_op_t)ta, (cuops_op_t)tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f,
                            c, ldc - 1, F32, F32);
            CHECK(st == INV, "ta=%d tb=%d ldc-1: %s", ta, tb, cuops_status_string(st));
            CHECK(memcmp(before, c, sizeof before) == 0, "ta=%d tb=%d: C changed by a failed call",
                  ta, tb);
        }

    /* the forced CPU variant is accepted; "auto" too */
    cuops_options_t opt = {"cpu_reference", 0, 0};
    CHECK_STATUS(cuops_gemm_ex(h, OPN, OPN, m, n, k, 1, a, k, b, n, 0, c, n, F32, F32, &opt), OK);
    opt.variant = "auto";
    CHECK_STATUS(cuops_gemm_ex(h, OPN, OPN, m, n, k, 1, a, k, b, n, 0, c, n, F32, F32, &opt), OK);
}

/* Zero-size calls that have an output still write it: GEMM k == 0 gives
 * C = beta*C with a and b NULL; reduce n == 0 gives the identity. */
static void zero_size_writes(cuops_handle_t h)
{
    float c[6];
    for (int i = 0; i < 6; i++) c[i] = (float)tu_rand_uniform(0.5, 2.0);
    float c0[6];
    memcpy(c0, c, sizeof c);
    CHECK_STATUS(cuops_gemm(h, OPN, OPN, 2, 3, 0, 7.0f, NULL, 1, NULL, 3, -0.5f, c, 3, F32, F32), OK);
    int ok = 1;
    for (int i = 0; i < 6; i++) ok &= (c[i] == -0.5f * c0[i]);
    CHECK(ok, "gemm k == 0 must give C = beta*C");
    tu_poison(c, F32, 6);
    CHECK_STATUS(cuops_gemm(h, OPT, OPT, 2, 3, 0, 1.0f, NULL, 2, NULL, 1, 0.0f, c, 3, F32, F32), OK);
    ok = 1;
    for (int i = 0; i < 6; i++) ok &= (c[i] == 0.0f);
    CHECK(ok, "gemm k == 0, beta == 0 must give C = 0 over NaN");

    int32_t r32 = 12345;
    CHECK_STATUS(cuops_reduce(h, MIN, I32, 0, NULL, &r32), OK);
    CHECK(r32 == INT32_MAX, "reduce min i32 n=0 gave %d", (int)r32);
    int64_t r64 = 12345;
    CHECK_STATUS(cuops_reduce(h, MAX, I64, 0, NULL, &r64), OK);
    CHECK(r64 == INT64_MIN, "reduce max i64 n=0 gave %lld", (long long)r64);
    double rd = 1.0;
    CHECK_STATUS(cuops_reduce(h, SUM, F64, 0, NULL, &rd), OK);
    CHECK(rd == 0.0, "reduce sum f64 n=0 gave %g", rd);
    float rf = 1.0f;
    CHECK_STATUS(cuops_reduce(h, MIN, F32, 0, NULL, &rf), OK);
    CHECK(isinf(rf) && rf > 0, "reduce min f32 n=0 gave %g", (double)rf);

    size_t bytes = 777;
    CHECK_STATUS(cuops_w4_packed_size(h, 0, 10, 4, F16, &bytes), OK);
    CHECK(bytes == 0, "packed size of an empty weight is %zu", bytes);
    CHECK_STATUS(cuops_w4_packed_size(h, 3, 10, 4, BF16, &bytes), OK);
    CHECK(bytes >= 3 * 5 + 3 * 3 * 2, "packed size %zu smaller than the weight", bytes);

    /* W4A16 with k == 0: y = 0, x and packed unused */
    uint16_t y[6];
    tu_poison(y, F16, 6);
    CHECK_STATUS(cuops_gemm_w4a16(h, 2, 3, 0, 4, NULL, 1, NULL, y, 3, F16), OK);
    ok = 1;
    for (int i = 0; i < 6; i++) ok &= (y[i] == 0);
    CHECK(ok, "w4a16 k == 0 must give y = 0");
}

/* ------------------------------------------------------------------------ */
/* Handle calls                                                             */
/* ------------------------------------------------------------------------ */

static void handle_calls(void)
{
    static const struct { cuops_status_t st; const char *name; } names[] = {
        {CUOPS_STATUS_SUCCESS, "CUOPS_STATUS_SUCCESS"},
        {CUOPS_STATUS_INVALID_VALUE, "CUOPS_STATUS_INVALID_VALUE"},
        {CUOPS_STATUS_NOT_SUPPORTED, "CUOPS_STATUS_NOT_SUPPORTED"},
        {CUOPS_STATUS_NO_DEVICE, "CUOPS_STATUS_NO_DEVICE"},
        {CUOPS_STATUS_ALLOC_FAILED, "CUOPS_STATUS_ALLOC_FAILED"},
        {CUOPS_STATUS_CUDA_ERROR, "CUOPS_STATUS_CUDA_ERROR"},
        {CUOPS_STATUS_INTERNAL_ERROR, "CUOPS_STATUS_INTERNAL_ERROR"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK(strcmp(cuops_status_string(names[i].st), names[i].name) == 0, "status %d -> %s",
              (int)names[i].st, cuops_status_string(names[i].st));
    CHECK(strcmp(cuops_status_string((cuops_status_t)99), "CUOPS_STATUS_UNKNOWN") == 0, "99 -> %s",
          cuops_status_string((cuops_status_t)99));
    CHECK(strcmp(cuops_status_string((cuops_status_t)-1), "CUOPS_STATUS_UNKNOWN") == 0, "-1 -> %s",
          cuops_status_string((cuops_status_t)-1));

    /* create */
    cuops_handle_t h = (cuops_handle_t)(uintptr_t)0x1;
    CHECK_STATUS(cuops_create(NULL, CUOPS_DEVICE_CPU), INV);
    CHECK(cuops_create_error()[0] != '\0', "no create detail for a NULL handle pointer");
    CHECK_STATUS(cuops_create(&h, -2), INV);
    CHECK(h == NULL, "failed create must leave NULL");
    CHECK(cuops_create_error()[0] != '\0', "no create detail for device -2");
    h = (cuops_handle_t)(uintptr_t)0x1;
    CHECK_STATUS(cuops_create(&h, 1000000), CUOPS_STATUS_NO_DEVICE);
    CHECK(h == NULL, "failed create must leave NULL");
    CHECK(cuops_create_error()[0] != '\0', "no create detail for device 1000000");

    cuops_handle_t g = NULL;
    cuops_status_t st = cuops_create(&g, 0);
    CHECK(st == OK || st == CUOPS_STATUS_NO_DEVICE, "create(0): %s", cuops_status_string(st));
    if (st == CUOPS_STATUS_NO_DEVICE)
        CHECK(cuops_create_error()[0] != '\0' && g == NULL, "create(0) NO_DEVICE without detail");
    if (st == OK) {
        int dev = -5;
        CHECK_STATUS(cuops_get_device(g, &dev), OK);
        CHECK(dev == 0, "gpu handle device %d", dev);
        CHECK(cuops_create_error()[0] == '\0', "create detail after success: %s",
              cuops_create_error());
    }
    CHECK_STATUS(cuops_destroy(g), OK);

    CHECK_STATUS(cuops_create(&h, CUOPS_DEVICE_CPU), OK);
    CHECK(h != NULL, "cpu handle");
    CHECK(cuops_create_error()[0] == '\0', "create detail after success");
    int dev = 5;
    CHECK_STATUS(cuops_get_device(h, &dev), OK);
    CHECK(dev == CUOPS_DEVICE_CPU, "cpu handle device %d", dev);
    CHECK_STATUS(cuops_get_device(h, NULL), INV);
    CHECK_STATUS(cuops_get_device(NULL, &dev), INV);
    CHECK(strcmp(cuops_last_kernel(h), "") == 0, "fresh handle last_kernel '%s'", cuops_last_kernel(h));

    void *stream = (void *)(uintptr_t)0x1234;
    CHECK_STATUS(cuops_set_stream(h, stream), OK);
    void *got = NULL;
    CHECK_STATUS(cuops_get_stream(h, &got), OK);
    CHECK(got == stream, "stream round trip");
    CHECK_STATUS(cuops_get_stream(h, NULL), INV);
    CHECK_STATUS(cuops_set_stream(NULL, stream), INV);
    CHECK_STATUS(cuops_get_stream(NULL, &got), INV);
    CHECK_STATUS(cuops_set_stream(h, NULL), OK);
    char ws[64];
    CHECK_STATUS(cuops_set_workspace(h, ws, sizeof ws), OK);
    CHECK_STATUS(cuops_set_workspace(h, NULL, 0), OK);
    CHECK_STATUS(cuops_set_workspace(NULL, ws, sizeof ws), INV);

    CHECK(cuops_last_error(NULL) != NULL && cuops_last_error(NULL)[0] != '\0',
          "last_error(NULL) must say so");
    CHECK(cuops_last_kernel(NULL) != NULL, "last_kernel(NULL) never NULL");

    /* the detail clears on the next success */
    CHECK_STATUS(cuops_scan(h, SUM, 0, I32, -1, NULL, NULL), INV);
    CHECK(strstr(cuops_last_error(h), "n (-1)") != NULL, "detail '%s'", cuops_last_error(h));
    int32_t in[3] = {1, 2, 3}, out[3];
    CHECK_STATUS(cuops_scan(h, SUM, 0, I32, 3, in, out), OK);
    CHECK(cuops_last_error(h)[0] == '\0', "detail not cleared: %s", cuops_last_error(h));
    CHECK(out[2] == 6, "scan result %d", (int)out[2]);
    /* a detail names the argument and its value */
    cuops_gemm(h, OPN, OPN, 8, 8, 8, 1, in, 5, in, 8, 0, out, 8, F16, F32);
    CHECK(strstr(cuops_last_error(h), "lda") && strstr(cuops_last_error(h), "5"),
          "gemm lda detail: '%s'", cuops_last_error(h));
    cuops_dequant_int4(h, 3, 10, 3, in, 5, in, F16, NULL, out, 10, F32);
    CHECK(strstr(cuops_last_error(h), "group_size") && strstr(cuops_last_error(h), "3"),
          "group_size detail: '%s'", cuops_last_error(h));

    /* variant names */
    static const char *const ops[] = {"gemm", "dequant", "w4a16", "scan", "reduce"};
    for (size_t i = 0; i < 5; i++) {
        const char *const *list = NULL;
        int count = -1;
        CHECK_STATUS(cuops_variant_names(ops[i], &list, &count), OK);
        CHECK(list != NULL && count >= 1, "%s: %d variants", ops[i], count);
        for (int v = 0; list && v < count; v++)
            CHECK(list[v] != NULL && list[v][0] != '\0', "%s: variant %d empty", ops[i], v);
    }
    const char *const *list = NULL;
    int count = 0;
    CHECK_STATUS(cuops_variant_names("nope", &list, &count), INV);
    CHECK_STATUS(cuops_variant_names(NULL, &list, &count), INV);
    CHECK_STATUS(cuops_variant_names("gemm", NULL, &count), INV);
    CHECK_STATUS(cuops_variant_names("gemm", &list, NULL), INV);

    CHECK_STATUS(cuops_destroy(h), OK);
    CHECK_STATUS(cuops_destroy(NULL), OK);
}

int main(void)
{
    tu_seed_from_env();
    for (int b = 0; b < BUF_COUNT; b++)
        for (int i = 0; i < BUF_BYTES; i++) golden[b][i] = (unsigned char)tu_rand_u64();

    handle_calls();

    cuops_handle_t h = NULL;
    CHECK_STATUS(cuops_create(&h, CUOPS_DEVICE_CPU), OK);
    if (h) {
        rejection_table(h, 1);
        gemm_ld_boundaries(h);
        w4_size_extremes(h);
        zero_size_writes(h);
        cuops_destroy(h);
    }

    cuops_handle_t g = NULL;
    cuops_status_t st = cuops_create(&g, 0);
    if (st == OK) {
        h = g; /* the table labels rows by the handle in `h` */
        rejection_table(h, 0);
        cuops_destroy(g);
    } else {
        SKIP("GPU validation rows: no CUDA device (%s)", cuops_create_error());
    }
    return tu_finish("test_api_validation");
}
