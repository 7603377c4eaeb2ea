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
#if !defined(__STDC_NO_THREADS__)
#include <threads.h> /* C11 threads: in glibc's libc since 2.34, no -lpthread */
#endif

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

/* A row whose detail must also name `needle`: proof that the check the row
 * aims at refused it, not an earlier one. */
#define ROW_SAYS(hh, expected, needle, call)                                             \
    do {                                                                                 \
        ROW(hh, expected, call);                                                         \
        CHECK(strstr(cuops_last_error(hh), (needle)) != NULL,                            \
              "[%s] line %d: detail '%s' does not mention '%s'", handle_label(h), __LINE__, \
              cuops_last_error(hh), (needle));                                           \
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
    /* ldb (trans_b N) and ldc >= max(1, n) even when n == 0 */
    ROW_SAYS(h, INV, "ldb", cuops_gemm(h, OPN, OPN, 4, 0, 6, 1, A, 6, B, 0, 0, C, 1, F16, F32));
    ROW_SAYS(h, INV, "ldc (0) < max(1, n)",
             cuops_gemm(h, OPN, OPN, 4, 0, 6, 1, A, 6, B, 1, 0, C, 0, F16, F32));
    /* byte extents overflowing int64 */
    ROW(h, INV, cuops_gemm(h, OPN, OPN, P40, P40, P40, 1, A, P40, B, P40, 0, C, P40, F16, F32));
    /* elements fit (2^61) but f32 bytes (2^63) do not */
    ROW(h, INV, cuops_gemm(h, OPN, OPN, (int64_t)1 << 30, 1, (int64_t)1 << 31, 1, A,
                           (int64_t)1 << 31, B, 1, 0, C, 1, F32, F32));
    ROW(h, INV, cuops_gemm(h, OPN, OPN, 2, 1, 1, 1, A, 1, B, 1, 0, C, INT64_MAX, F16, F32));
    /* B's extent alone overflows ((2-1) * 2^62 + 1 two-byte elements); every
     * ld and the A and C extents pass */
    ROW_SAYS(h, INV, "B extent", cuops_gemm(h, OPN, OPN, 1, 1, 2, 1, A, 2, B, (int64_t)1 << 62, 0,
                                            C, 1, F16, F32));
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
    /* ldo >= max(1, k) even when k == 0 */
    ROW_SAYS(h, INV, "ldo", cuops_dequant_int4(h, 3, 0, 4, Q, 1, S, F16, Z, OUT, 0, F32));
    /* qweight's extent alone overflows (ldq = INT64_MAX, two rows) */
    ROW_SAYS(h, INV, "qweight extent",
             cuops_dequant_int4(h, 2, 2, 2, Q, INT64_MAX, S, F16, Z, OUT, 2, F32));
    /* an odd group below k is refused (an odd one >= k is one group per row) */
    ROW_SAYS(h, INV, "group_size", cuops_dequant_int4(h, 8, 33, 3, Q, 17, S, F16, Z, OUT, 33, F32));
    /* an odd group >= k stands for the even k + 1, which int64 cannot hold at
     * k = INT64_MAX: refused by name even for an empty n (it once became a
     * negative group size) */
    ROW_SAYS(h, INV, "k + 1", cuops_dequant_int4(h, 0, INT64_MAX, INT64_MAX, NULL, (int64_t)1 << 62,
                                                 NULL, F16, NULL, NULL, INT64_MAX, F32));
    /* qweight (2^61 bytes) and f16 scales (2^62) each fit, the weight as a
     * whole (nibbles, scales and zeros) does not: the detail says so */
    ROW_SAYS(h, INV, "weight", cuops_dequant_int4(h, (int64_t)1 << 30, (int64_t)1 << 32, 2, Q,
                                                  (int64_t)1 << 31, S, F16, Z, OUT,
                                                  (int64_t)1 << 32, F16));
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
    /* nothing to pack reads no scales: misaligned ones are accepted (cuops.h:
     * a pointer the call never dereferences is not checked), k == 0 and n == 0 */
    ROW(h, OK, cuops_w4_prepack(h, 3, 0, 4, Q, 1, (char *)S + 1, F16, Z, F16, PACKED));
    ROW(h, OK, cuops_w4_prepack(h, 0, 10, 4, Q, 5, (char *)S + 2, F32, Z, BF16, PACKED));
    ROW_SAYS(h, INV, "group_size", cuops_w4_packed_size(h, 8, 33, 3, F16, bytes));
    /* per channel at k = INT64_MAX: the even size k + 1 does not fit int64 (it
     * was NOT_SUPPORTED, the detail naming a group size of INT64_MIN) */
    ROW_SAYS(h, INV, "k + 1", cuops_w4_packed_size(h, 1, INT64_MAX, INT64_MAX, F16, bytes));
    ROW_SAYS(h, INV, "k + 1", cuops_w4_prepack(h, 0, INT64_MAX, INT64_MAX, NULL, (int64_t)1 << 62,
                                               NULL, F16, NULL, F16, NULL));
    ROW_SAYS(h, INV, "k + 1", cuops_gemm_w4a16(h, 0, 1, INT64_MAX, INT64_MAX, NULL, INT64_MAX,
                                               NULL, NULL, 1, F16));
    /* each buffer fits, the weight as a whole does not (see dequant_rows) */
    ROW_SAYS(h, INV, "weight", cuops_w4_prepack(h, (int64_t)1 << 30, (int64_t)1 << 32, 2, Q,
                                                (int64_t)1 << 31, S, F16, Z, F16, PACKED));
    ROW_SAYS(h, INV, "group_size", cuops_w4_prepack(h, 8, 33, 3, Q, 17, S, F16, Z, F16, PACKED));
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
    /* y's extent alone overflows ((2-1) * 2^62 + 3 two-byte elements) */
    ROW_SAYS(h, INV, "y extent",
             cuops_gemm_w4a16(h, 2, 3, 10, 4, X, 10, PACKED, Y, (int64_t)1 << 62, F16));
    /* ldx >= max(1, k) and ldy >= max(1, n) at k == 0 and n == 0 */
    ROW_SAYS(h, INV, "ldx", cuops_gemm_w4a16(h, 2, 3, 0, 4, X, 0, PACKED, Y, 3, F16));
    ROW_SAYS(h, INV, "ldy", cuops_gemm_w4a16(h, 2, 0, 10, 4, X, 10, PACKED, Y, 0, F16));
    ROW_SAYS(h, INV, "group_size", cuops_gemm_w4a16(h, 2, 8, 33, 3, X, 33, PACKED, Y, 8, F16));
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
    /* n = 2^40 itself passes the length check (U8 is then refused as
     * unserved, not as invalid); 2^40 + 1 does not (an invalid length
     * outranks the dtype) */
    ROW(h, NSUP, cuops_scan(h, SUM, 0, U8, P40, IN, OUT));
    ROW_SAYS(h, INV, "2^40", cuops_scan(h, SUM, 0, U8, P40 + 1, IN, OUT));
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
    ROW(h, NSUP, cuops_reduce(h, SUM, U8, P40, IN, RES));
    ROW_SAYS(h, INV, "2^40", cuops_reduce(h, MAX, U8, P40 + 1, IN, RES));
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

/* The importers' refusals that test_import leaves out (it has the rest):
 * baseline n = 8, k = 8, group 8, ldq_out 4. */
static void import_rows(cuops_handle_t h)
{
    const int32_t *qw = (const int32_t *)A, *qz = (const int32_t *)B;
    uint8_t *qo = (uint8_t *)Q, *zo = (uint8_t *)Z;
    /* a negative k: GPTQ's k % 8 and the pitch ceil(k/2) <= ldq_out both
     * pass at k = -8, and AWQ at k = -1 would unpack one byte per row, so
     * the sign check alone refuses them */
    ROW_SAYS(h, INV, "k (-8)", cuops_import_gptq(h, 8, -8, 8, qw, qz, S, F16, 2, qo, 4, OUT, zo));
    ROW_SAYS(h, INV, "k (-1)", cuops_import_awq(h, 8, -1, 8, qw, qz, S, F16, qo, 4, OUT, zo));
    /* byte offsets past int64: qweight_out's pitch (15 rows of INT64_MAX
     * bytes), and the f32 scales alone (2^31 groups x 2^30 rows x 4 bytes =
     * 2^63, while the int32 qweight, qweight_out and the zeros span 2^61) */
    ROW_SAYS(h, INV, "overflow",
             cuops_import_awq(h, 16, 8, 8, qw, qz, S, F16, qo, INT64_MAX, OUT, zo));
    ROW_SAYS(h, INV, "overflow",
             cuops_import_gptq(h, (int64_t)1 << 30, (int64_t)1 << 32, 2, qw, qz, S, F32, 2, qo,
                               (int64_t)1 << 31, OUT, zo));
}

static void rejection_table(cuops_handle_t h, int is_cpu)
{
    table_label = is_cpu ? "cpu" : "gpu";
    gemm_rows(h, is_cpu);
    dequant_rows(h, is_cpu);
    w4_rows(h, is_cpu);
    scan_rows(h, is_cpu);
    import_rows(h);
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

    /* The operands those calls never read are not checked, misaligned ones
     * included (cuops.h): A and B of a GEMM with k == 0, x and packed of a
     * W4A16 GEMM with k == 0, in of a reduce with n == 0. Odd addresses into
     * a buffer nothing reads; each call still writes its output. */
    _Alignas(16) unsigned char unread[16];
    memset(unread, 0xA5, sizeof unread);
    for (int i = 0; i < 6; i++) c[i] = (float)tu_rand_uniform(0.5, 2.0);
    memcpy(c0, c, sizeof c);
    cuops_status_t r = cuops_gemm(h, OPN, OPT, 2, 3, 0, 1.0f, unread + 1, 1, unread + 3, 1, 2.0f,
                                  c, 3, F16, F32);
    ok = 1;
    for (int i = 0; i < 6; i++) ok &= (c[i] == 2.0f * c0[i]);
    CHECK(r == OK && ok, "gemm k == 0, a and b misaligned: %s (%s), C = beta*C: %d",
          cuops_status_string(r), cuops_last_error(h), ok);
    tu_poison(y, F16, 6);
    r = cuops_gemm_w4a16(h, 2, 3, 0, 4, unread + 1, 1, unread + 3, y, 3, BF16);
    ok = 1;
    for (int i = 0; i < 6; i++) ok &= (y[i] == 0);
    CHECK(r == OK && ok, "w4a16 k == 0, x and packed misaligned: %s (%s), y = 0: %d",
          cuops_status_string(r), cuops_last_error(h), ok);
    r32 = 12345;
    r = cuops_reduce(h, MAX, I32, 0, unread + 1, &r32);
    CHECK(r == OK && r32 == INT32_MIN, "reduce max i32 n == 0, in misaligned: %s (%s), gave %d",
          cuops_status_string(r), cuops_last_error(h), (int)r32);
}

/* ------------------------------------------------------------------------ */
/* CPU-only: promises of cuops.h that a successful call must keep           */
/* ------------------------------------------------------------------------ */

static size_t fsize(cuops_dtype_t t) { return t == F32 ? 4 : 2; }

/* Every element of a float output was written (outputs start as 0xFF bytes,
 * a NaN in each float type, and the data here gives finite results). */
static int all_finite(const void *p, cuops_dtype_t t, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!isfinite(tu_get(p, t, i))) return 0;
    return 1;
}

/* alpha == 0 with k > 0 still reads A and B: an Inf in A or a NaN in B
 * gives NaN in C (0 * the sum), not the 0 of the reference BLAS. And k == 0
 * gives C = beta*C for any alpha, NaN and Inf included. */
static void gemm_alpha_edges(cuops_handle_t h)
{
    float a[2] = {INFINITY, (float)tu_rand_uniform(0.5, 2)};
    float b[2] = {(float)tu_rand_uniform(0.5, 2), (float)tu_rand_uniform(0.5, 2)};
    float c = (float)tu_rand_uniform(0.5, 2);
    CHECK_STATUS(cuops_gemm(h, OPN, OPN, 1, 1, 2, 0.0f, a, 2, b, 1, 0.0f, &c, 1, F32, F32), OK);
    CHECK(isnan(c), "alpha 0, Inf in A: C = %g, expected NaN", (double)c);
    a[0] = (float)tu_rand_uniform(0.5, 2);
    b[1] = NAN;
    c = (float)tu_rand_uniform(0.5, 2);
    CHECK_STATUS(cuops_gemm(h, OPN, OPN, 1, 1, 2, 0.0f, a, 2, b, 1, 0.0f, &c, 1, F32, F32), OK);
    CHECK(isnan(c), "alpha 0, NaN in B: C = %g, expected NaN", (double)c);

    const float alphas[3] = {NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 3; i++) {
        const float c0 = (float)tu_rand_uniform(0.5, 2);
        c = c0;
        CHECK_STATUS(cuops_gemm(h, OPN, OPN, 1, 1, 0, alphas[i], NULL, 1, NULL, 1, 0.5f, &c, 1,
                                F32, F32), OK);
        CHECK(c == 0.5f * c0, "k == 0, alpha %g: C = %g, expected beta*C = %g", (double)alphas[i],
              (double)c, (double)(0.5f * c0));
    }
}

/* dequant serves any alignment on the CPU: scales, zeros and out one or two
 * bytes past an aligned base give the aligned run's bits, for every scale and
 * output type. */
static void dequant_any_alignment(cuops_handle_t h)
{
    enum { N = 3, K = 10, G = 4, NG = 3, LDQ = 5 };
    static const cuops_dtype_t types[3] = {F16, BF16, F32};
    unsigned char q[N * LDQ], z[N * NG];
    for (size_t i = 0; i < sizeof q; i++) q[i] = (unsigned char)tu_rand_u64();
    for (size_t i = 0; i < sizeof z; i++) z[i] = (unsigned char)(tu_rand_u64() & 15);
    for (int si = 0; si < 3; si++)
        for (int oi = 0; oi < 3; oi++)
            for (int off = 1; off <= 2; off++) {
                const cuops_dtype_t st = types[si], ot = types[oi];
                _Alignas(16) unsigned char sa[N * NG * 4], sm[N * NG * 4 + 8], zm[N * NG + 8];
                _Alignas(16) unsigned char oa[N * K * 4], om[N * K * 4 + 8];
                tu_fill_float(sa, st, N * NG, 0.25, 2.0);
                memcpy(sm + off, sa, N * NG * fsize(st));
                memcpy(zm + off, z, sizeof z);
                memset(oa, 0xFF, sizeof oa);
                memset(om, 0xFF, sizeof om);
                CHECK_STATUS(cuops_dequant_int4(h, N, K, G, q, LDQ, sa, st, z, oa, K, ot), OK);
                CHECK(all_finite(oa, ot, N * K), "aligned dequant left elements unwritten");
                cuops_status_t r = cuops_dequant_int4(h, N, K, G, q, LDQ, sm + off, st, zm + off,
                                                      om + off, K, ot);
                CHECK(r == OK, "scales %d / out %d at base+%d: %s (%s)", (int)st, (int)ot, off,
                      cuops_status_string(r), cuops_last_error(h));
                CHECK(memcmp(om + off, oa, N * K * fsize(ot)) == 0,
                      "scales %d / out %d at base+%d: bits differ from the aligned run", (int)st,
                      (int)ot, off);
            }
}

/* A random seed-format weight n x k (ldq = ceil(k/2)) with F16 scales,
 * prepacked for F16 activations into a malloc'd buffer of *bytes. */
static unsigned char *w4_random_packed(cuops_handle_t h, int64_t n, int64_t k, int64_t g,
                                       size_t *bytes)
{
    enum { MAXB = 512 };
    unsigned char q[MAXB], z[MAXB];
    uint16_t s[MAXB];
    const int64_t ldq = (k + 1) / 2, ng = (k + g - 1) / g;
    if (n * ldq > MAXB || n * ng > MAXB) return NULL;
    for (int64_t i = 0; i < n * ldq; i++) q[i] = (unsigned char)tu_rand_u64();
    for (int64_t i = 0; i < n * ng; i++) z[i] = (unsigned char)(tu_rand_u64() & 15);
    tu_fill_float(s, F16, (size_t)(n * ng), 0.25, 2.0);
    if (cuops_w4_packed_size(h, n, k, g, F16, bytes) != OK) return NULL;
    unsigned char *p = malloc(*bytes);
    if (p && cuops_w4_prepack(h, n, k, g, q, ldq, s, F16, z, F16, p) != OK) {
        free(p);
        return NULL;
    }
    return p;
}

/* cuops_w4_prepack writes no more than cuops_w4_packed_size bytes (64
 * sentinel bytes past them survive: odd and even k, n not a multiple of 16
 * bytes of nibbles, zeros given or NULL); and on a CPU handle `packed` needs
 * no alignment: a copy at base + 1 or + 3 gives the aligned run's y. */
static void w4_packed_bounds_and_alignment(cuops_handle_t h)
{
    unsigned char q[64], z[64];
    uint16_t s[64];
    for (int i = 0; i < 64; i++) {
        q[i] = (unsigned char)tu_rand_u64();
        z[i] = (unsigned char)(tu_rand_u64() & 15);
    }
    tu_fill_float(s, F16, 64, 0.25, 2.0);
    for (int64_t n = 3; n <= 5; n += 2)
        for (int64_t k = 10; k <= 11; k++)
            for (int with_zeros = 0; with_zeros < 2; with_zeros++) {
                size_t bytes = 0;
                CHECK_STATUS(cuops_w4_packed_size(h, n, k, 4, F16, &bytes), OK);
                unsigned char *p = malloc(bytes + 64);
                if (!p) continue;
                memset(p, 0xA5, bytes + 64);
                CHECK_STATUS(cuops_w4_prepack(h, n, k, 4, q, (k + 1) / 2, s, F16,
                                              with_zeros ? z : NULL, F16, p), OK);
                int tail = 1;
                for (size_t i = 0; i < 64; i++) tail &= p[bytes + i] == 0xA5;
                CHECK(tail, "prepack n=%lld k=%lld zeros=%d wrote past its %zu bytes", (long long)n,
                      (long long)k, with_zeros, bytes);
                free(p);
            }

    enum { M = 2, N = 3, K = 10 };
    size_t bytes = 0;
    unsigned char *pa = w4_random_packed(h, N, K, 4, &bytes);
    unsigned char *pm = malloc(bytes + 8);
    CHECK(pa != NULL && pm != NULL, "random packed weight: %s", cuops_last_error(h));
    if (pa && pm) {
        _Alignas(16) uint16_t x[M * K], ya[M * N], ym[M * N];
        tu_fill_float(x, F16, M * K, -1, 1);
        memset(ya, 0xFF, sizeof ya);
        CHECK_STATUS(cuops_gemm_w4a16(h, M, N, K, 4, x, K, pa, ya, N, F16), OK);
        CHECK(all_finite(ya, F16, M * N), "aligned w4a16 left y unwritten");
        for (int off = 1; off <= 3; off += 2) {
            memcpy(pm + off, pa, bytes);
            memset(ym, 0xFF, sizeof ym);
            cuops_status_t r = cuops_gemm_w4a16(h, M, N, K, 4, x, K, pm + off, ym, N, F16);
            CHECK(r == OK, "packed at base+%d: %s (%s)", off, cuops_status_string(r),
                  cuops_last_error(h));
            CHECK(memcmp(ym, ya, sizeof ya) == 0, "packed at base+%d: y differs", off);
        }
    }
    free(pa);
    free(pm);
}

/* A group_size >= k is one group per row whatever its parity: with odd
 * k = 33, groups k, k + 2 and INT64_MAX give the bits of group k + 1 (the
 * same [n, 1] scales and zeros) in dequant, and the same packed size and y
 * through prepack + W4A16. (An odd group below k is refused: the table.) */
static void odd_group_per_row(cuops_handle_t h)
{
    enum { N = 8, K = 33, LDQ = 17, M = 3 };
    unsigned char q[N * LDQ], z[N];
    uint16_t s[N], x[M * K];
    for (size_t i = 0; i < sizeof q; i++) q[i] = (unsigned char)tu_rand_u64();
    for (size_t i = 0; i < sizeof z; i++) z[i] = (unsigned char)(tu_rand_u64() & 15);
    tu_fill_float(s, F16, N, 0.25, 2.0);
    tu_fill_float(x, F16, M * K, -1, 1);
    float ref[N * K], got[N * K];
    memset(ref, 0xFF, sizeof ref);
    CHECK_STATUS(cuops_dequant_int4(h, N, K, K + 1, q, LDQ, s, F16, z, ref, K, F32), OK);
    CHECK(all_finite(ref, F32, N * K), "dequant group k+1 left elements unwritten");

    size_t ref_bytes = 0;
    CHECK_STATUS(cuops_w4_packed_size(h, N, K, K + 1, F16, &ref_bytes), OK);
    unsigned char *pref = malloc(ref_bytes), *pg = malloc(ref_bytes);
    uint16_t yref[M * N], y[M * N];
    memset(yref, 0xFF, sizeof yref);
    if (!pref || !pg) {
        CHECK(0, "malloc(%zu)", ref_bytes);
        free(pref);
        free(pg);
        return;
    }
    CHECK_STATUS(cuops_w4_prepack(h, N, K, K + 1, q, LDQ, s, F16, z, F16, pref), OK);
    CHECK_STATUS(cuops_gemm_w4a16(h, M, N, K, K + 1, x, K, pref, yref, N, F16), OK);
    CHECK(all_finite(yref, F16, M * N), "w4a16 group k+1 left y unwritten");

    const int64_t groups[3] = {K, K + 2, INT64_MAX};
    for (int i = 0; i < 3; i++) {
        const long long g = (long long)groups[i];
        memset(got, 0xFF, sizeof got);
        cuops_status_t r = cuops_dequant_int4(h, N, K, groups[i], q, LDQ, s, F16, z, got, K, F32);
        CHECK(r == OK, "dequant k=%d group %lld: %s (%s)", K, g, cuops_status_string(r),
              cuops_last_error(h));
        CHECK(memcmp(got, ref, sizeof ref) == 0, "dequant k=%d group %lld differs from group k+1",
              K, g);
        size_t bytes = 0;
        r = cuops_w4_packed_size(h, N, K, groups[i], F16, &bytes);
        CHECK(r == OK && bytes == ref_bytes,
              "packed size k=%d group %lld: %s, %zu (group k+1: %zu)", K, g,
              cuops_status_string(r), bytes, ref_bytes);
        if (r != OK || bytes != ref_bytes) continue;
        CHECK_STATUS(cuops_w4_prepack(h, N, K, groups[i], q, LDQ, s, F16, z, F16, pg), OK);
        memset(y, 0xFF, sizeof y);
        r = cuops_gemm_w4a16(h, M, N, K, groups[i], x, K, pg, y, N, F16);
        CHECK(r == OK, "w4a16 k=%d group %lld: %s (%s)", K, g, cuops_status_string(r),
              cuops_last_error(h));
        CHECK(memcmp(y, yref, sizeof y) == 0, "w4a16 k=%d group %lld: y differs from group k+1", K,
              g);
    }
    free(pref);
    free(pg);
}

/* Scan buffers that touch without overlapping (in = b, out = b + 10 and the
 * reverse) are not "overlapping": accepted, and the sums are right. */
static void scan_adjacent(cuops_handle_t h)
{
    int64_t b[20], src[10];
    for (int i = 0; i < 20; i++) b[i] = (int64_t)(tu_rand_u64() >> 24) - ((int64_t)1 << 39);
    for (int dir = 0; dir < 2; dir++) {
        int64_t *in = dir ? b + 10 : b, *out = dir ? b : b + 10;
        memcpy(src, in, sizeof src);
        cuops_status_t r = cuops_scan(h, SUM, 0, I64, 10, in, out);
        CHECK(r == OK, "scan in=b%s out=b%s: %s (%s)", dir ? "+10" : "", dir ? "" : "+10",
              cuops_status_string(r), cuops_last_error(h));
        int64_t acc = 0;
        int ok = 1;
        for (int i = 0; i < 10; i++) {
            acc += src[i];
            ok &= out[i] == acc && in[i] == src[i];
        }
        CHECK(ok, "scan in=b%s out=b%s: wrong prefix sums or in changed", dir ? "+10" : "",
              dir ? "" : "+10");
    }
}

/* The kernel name is per call: an empty problem (gemm m == 0, scan n == 0,
 * dequant, w4a16, prepack), cuops_w4_packed_size and every accessor reset it
 * to "" (and the detail of a failure to "") after a call that ran
 * "cpu_reference". */
static void kernel_name_resets(cuops_handle_t h)
{
    float a[6], b[6], c[4];
    tu_fill_float(a, F32, 6, -1, 1);
    tu_fill_float(b, F32, 6, -1, 1);
    int32_t in[3] = {(int32_t)(tu_rand_u64() % 1000), 2, 3}, out[3];
    CHECK_STATUS(cuops_gemm(h, OPN, OPN, 2, 2, 3, 1, a, 3, b, 2, 0, c, 2, F32, F32), OK);
    CHECK(strcmp(cuops_last_kernel(h), "cpu_reference") == 0, "gemm ran '%s'",
          cuops_last_kernel(h));
    CHECK_STATUS(cuops_gemm(h, OPN, OPN, 0, 2, 3, 1, a, 3, b, 2, 0, c, 2, F32, F32), OK);
    CHECK(cuops_last_kernel(h)[0] == '\0', "gemm m == 0 ran '%s'", cuops_last_kernel(h));
    CHECK_STATUS(cuops_scan(h, SUM, 0, I32, 3, in, out), OK);
    CHECK(strcmp(cuops_last_kernel(h), "cpu_reference") == 0, "scan ran '%s'",
          cuops_last_kernel(h));
    CHECK_STATUS(cuops_scan(h, SUM, 0, I32, 0, in, out), OK);
    CHECK(cuops_last_kernel(h)[0] == '\0', "scan n == 0 ran '%s'", cuops_last_kernel(h));
    /* the other empty problems, and cuops_w4_packed_size, which cuops.h
     * names as running none */
    static const char *const empties[4] = {"dequant n == 0", "w4a16 m == 0", "prepack k == 0",
                                           "w4_packed_size"};
    for (int i = 0; i < 4; i++) {
        CHECK_STATUS(cuops_gemm(h, OPN, OPN, 2, 2, 3, 1, a, 3, b, 2, 0, c, 2, F32, F32), OK);
        size_t bytes = 0;
        cuops_status_t r;
        switch (i) {
        case 0: r = cuops_dequant_int4(h, 0, 10, 4, NULL, 5, NULL, F16, NULL, NULL, 10, F32); break;
        case 1: r = cuops_gemm_w4a16(h, 0, 3, 10, 4, NULL, 10, NULL, NULL, 3, F16); break;
        case 2: r = cuops_w4_prepack(h, 3, 0, 4, NULL, 1, NULL, F16, NULL, F16, NULL); break;
        default: r = cuops_w4_packed_size(h, 3, 10, 4, F16, &bytes); break;
        }
        CHECK(r == OK && cuops_last_kernel(h)[0] == '\0', "%s after a gemm: %s, last_kernel '%s'",
              empties[i], cuops_status_string(r), cuops_last_kernel(h));
    }

    static const char *const names[4] = {"get_device", "set_stream(NULL)", "get_stream",
                                         "set_workspace(NULL, 0)"};
    for (int i = 0; i < 4; i++)
        for (int fail = 0; fail < 2; fail++) {
            /* before: a success that ran a kernel, or a failure with a detail */
            cuops_status_t r = cuops_gemm(h, OPN, OPN, 2, 2, 3, 1, a, fail ? 2 : 3, b, 2, 0, c, 2,
                                          F32, F32);
            CHECK(r == (fail ? INV : OK), "gemm before %s: %s", names[i], cuops_status_string(r));
            CHECK(fail ? cuops_last_error(h)[0] != '\0'
                       : strcmp(cuops_last_kernel(h), "cpu_reference") == 0,
                  "gemm before %s left no %s", names[i], fail ? "detail" : "kernel name");
            int dev;
            void *stream;
            switch (i) {
            case 0: r = cuops_get_device(h, &dev); break;
            case 1: r = cuops_set_stream(h, NULL); break;
            case 2: r = cuops_get_stream(h, &stream); break;
            default: r = cuops_set_workspace(h, NULL, 0); break;
            }
            CHECK(r == OK, "%s: %s", names[i], cuops_status_string(r));
            CHECK(cuops_last_kernel(h)[0] == '\0' && cuops_last_error(h)[0] == '\0',
                  "%s after a %s gemm: last_kernel '%s', last_error '%s'", names[i],
                  fail ? "failed" : "successful", cuops_last_kernel(h), cuops_last_error(h));
        }
}

/* Options on a CPU handle: NULL variant (zeroed options), "auto" and
 * "cpu_reference" give the plain call's bits for every op; every other name
 * cuops_variant_names lists (a CUDA kernel) is NOT_SUPPORTED and writes nothing. */
enum { VAR_OUT_BYTES = 128 };
typedef struct variant_data {
    float a[8], b[12];                 /* gemm 2x3x4, f32 */
    unsigned char q[15], z[9];         /* dequant 3x10, group 4 */
    uint16_t s[9], x[20];
    unsigned char *packed;             /* w4a16 2x3x10, group 4 */
    double in[16];                     /* scan, reduce */
} variant_data_t;

static cuops_status_t run_variant(cuops_handle_t h, int op, const cuops_options_t *o,
                                  const variant_data_t *d, void *out)
{
    switch (op) {
    case 0:
        return o ? cuops_gemm_ex(h, OPN, OPN, 2, 3, 4, 1, d->a, 4, d->b, 3, 0, out, 3, F32, F32, o)
                 : cuops_gemm(h, OPN, OPN, 2, 3, 4, 1, d->a, 4, d->b, 3, 0, out, 3, F32, F32);
    case 1:
        return o ? cuops_dequant_int4_ex(h, 3, 10, 4, d->q, 5, d->s, F16, d->z, out, 10, F32, o)
                 : cuops_dequant_int4(h, 3, 10, 4, d->q, 5, d->s, F16, d->z, out, 10, F32);
    case 2:
        return o ? cuops_gemm_w4a16_ex(h, 2, 3, 10, 4, d->x, 10, d->packed, out, 3, F16, o)
                 : cuops_gemm_w4a16(h, 2, 3, 10, 4, d->x, 10, d->packed, out, 3, F16);
    case 3:
        return o ? cuops_scan_ex(h, SUM, 0, F64, 16, d->in, out, o)
                 : cuops_scan(h, SUM, 0, F64, 16, d->in, out);
    default:
        return o ? cuops_reduce_ex(h, SUM, F64, 16, d->in, out, o)
                 : cuops_reduce(h, SUM, F64, 16, d->in, out);
    }
}

static void cpu_variants(cuops_handle_t h)
{
    static const char *const ops[5] = {"gemm", "dequant", "w4a16", "scan", "reduce"};
    static const cuops_dtype_t out_type[5] = {F32, F32, F16, F64, F64};
    static const size_t out_count[5] = {6, 30, 6, 16, 1};
    variant_data_t d;
    tu_fill_float(d.a, F32, 8, -1, 1);
    tu_fill_float(d.b, F32, 12, -1, 1);
    for (int i = 0; i < 15; i++) d.q[i] = (unsigned char)tu_rand_u64();
    for (int i = 0; i < 9; i++) d.z[i] = (unsigned char)(tu_rand_u64() & 15);
    tu_fill_float(d.s, F16, 9, 0.25, 2.0);
    tu_fill_float(d.x, F16, 20, -1, 1);
    tu_fill_float(d.in, F64, 16, -1, 1);
    size_t bytes = 0;
    d.packed = w4_random_packed(h, 3, 10, 4, &bytes);
    CHECK(d.packed != NULL, "random packed weight: %s", cuops_last_error(h));
    if (!d.packed) return;

    const cuops_options_t forms[3] = {{NULL, 0, 0}, {"auto", 0, 0}, {"cpu_reference", 0, 0}};
    _Alignas(16) unsigned char ref[VAR_OUT_BYTES], got[VAR_OUT_BYTES];
    for (int op = 0; op < 5; op++) {
        memset(ref, 0xFF, sizeof ref);
        CHECK_STATUS(run_variant(h, op, NULL, &d, ref), OK);
        CHECK(all_finite(ref, out_type[op], out_count[op]), "%s: plain call left output unwritten",
              ops[op]);
        for (int f = 0; f < 3; f++) {
            memset(got, 0xFF, sizeof got);
            cuops_status_t r = run_variant(h, op, &forms[f], &d, got);
            const char *vn = forms[f].variant ? forms[f].variant : "NULL";
            CHECK(r == OK, "%s variant %s: %s (%s)", ops[op], vn, cuops_status_string(r),
                  cuops_last_error(h));
            CHECK(memcmp(got, ref, sizeof ref) == 0,
                  "%s variant %s: output differs from the plain call", ops[op], vn);
        }
        const char *const *list = NULL;
        int count = 0, tried = 0;
        CHECK_STATUS(cuops_variant_names(ops[op], &list, &count), OK);
        for (int v = 0; list && v < count; v++) {
            if (strcmp(list[v], "auto") == 0 || strcmp(list[v], "cpu_reference") == 0) continue;
            const cuops_options_t o = {list[v], 0, 0};
            memset(got, 0xFF, sizeof got);
            cuops_status_t r = run_variant(h, op, &o, &d, got);
            int untouched_out = 1;
            for (size_t i = 0; i < sizeof got; i++) untouched_out &= got[i] == 0xFF;
            CHECK(r == NSUP && untouched_out && strstr(cuops_last_error(h), list[v]) != NULL,
                  "%s variant %s on the CPU: %s, output %s, detail '%s'", ops[op], list[v],
                  cuops_status_string(r), untouched_out ? "untouched" : "written",
                  cuops_last_error(h));
            tried++;
        }
        CHECK(tried > 0, "%s: no GPU variant listed to try", ops[op]);
    }
    free(d.packed);
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
    CHECK(strstr(cuops_last_error(h), "device pointer") != NULL, "get_device(NULL) detail: '%s'",
          cuops_last_error(h));
    CHECK_STATUS(cuops_get_device(NULL, &dev), INV);
    CHECK(strcmp(cuops_last_kernel(h), "") == 0, "fresh handle last_kernel '%s'", cuops_last_kernel(h));

    void *stream = (void *)(uintptr_t)0x1234;
    CHECK_STATUS(cuops_set_stream(h, stream), OK);
    void *got = NULL;
    CHECK_STATUS(cuops_get_stream(h, &got), OK);
    CHECK(got == stream, "stream round trip");
    CHECK_STATUS(cuops_get_stream(h, NULL), INV);
    CHECK(strstr(cuops_last_error(h), "stream pointer") != NULL, "get_stream(NULL) detail: '%s'",
          cuops_last_error(h));
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
        /* cuops.h: "auto" first */
        CHECK(list && count >= 1 && list[0] && strcmp(list[0], "auto") == 0,
              "%s: the first variant is '%s', not auto", ops[i], list && count ? list[0] : "");
        for (int v = 0; list && v < count; v++)
            CHECK(list[v] != NULL && list[v][0] != '\0', "%s: variant %d empty", ops[i], v);
    }
    {
        /* the gemm list whole: every kernel once, the fallback last (a list
         * cut at the dispatch's room lost its tail, the fallback and the
         * SIMT SGEMM entries, and forcing those by name failed) */
        const char *const *g = NULL;
        int gc = 0;
        CHECK_STATUS(cuops_variant_names("gemm", &g, &gc), OK);
        int simt = 0, dup = 0;
        for (int v = 0; g && v < gc; v++) {
            if (!strcmp(g[v], "sgemm_simt_128x128")) simt++;
            for (int w = 0; w < v; w++) dup += !strcmp(g[v], g[w]);
        }
        CHECK(g && gc >= 2 && !strcmp(g[gc - 1], "fallback_tiled"),
              "gemm: the last of %d variants is '%s', not fallback_tiled", gc,
              g && gc ? g[gc - 1] : "");
        CHECK(simt == 1, "gemm: sgemm_simt_128x128 listed %d times", simt);
        CHECK(dup == 0, "gemm: %d names listed twice", dup);
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

/* cuops_create_error() is per thread: a new thread starts with "", its own
 * failure gives it its own reason, and the main thread's reason survives. */
#if !defined(__STDC_NO_THREADS__)
typedef struct create_probe {
    int fresh_empty;
    cuops_status_t st;
    char detail[256];
} create_probe_t;

static int create_in_thread(void *arg)
{
    create_probe_t *p = arg;
    p->fresh_empty = cuops_create_error()[0] == '\0';
    cuops_handle_t g = NULL;
    p->st = cuops_create(&g, -7);
    snprintf(p->detail, sizeof p->detail, "%s", cuops_create_error());
    return 0;
}
#endif

static void create_error_per_thread(void)
{
#if !defined(__STDC_NO_THREADS__)
    cuops_handle_t g = NULL;
    CHECK_STATUS(cuops_create(&g, -5), INV);
    char mine[256];
    snprintf(mine, sizeof mine, "%s", cuops_create_error());
    CHECK(strstr(mine, "-5") != NULL, "create(-5) detail '%s'", mine);
    create_probe_t p = {0, OK, ""};
    thrd_t t;
    if (thrd_create(&t, create_in_thread, &p) != thrd_success) {
        CHECK(0, "thrd_create failed");
        return;
    }
    thrd_join(t, NULL);
    CHECK(p.fresh_empty, "a new thread's create_error was not empty");
    CHECK(p.st == INV && strstr(p.detail, "-7") != NULL, "thread create(-7): %s, detail '%s'",
          cuops_status_string(p.st), p.detail);
    CHECK(strcmp(cuops_create_error(), mine) == 0,
          "main thread's create_error became '%s' (was '%s')", cuops_create_error(), mine);
#else
    SKIP("create_error per thread: no C11 <threads.h>");
#endif
}

int main(void)
{
    tu_seed_from_env();
    for (int b = 0; b < BUF_COUNT; b++)
        for (int i = 0; i < BUF_BYTES; i++) golden[b][i] = (unsigned char)tu_rand_u64();

    handle_calls();
    create_error_per_thread();

    cuops_handle_t h = NULL;
    CHECK_STATUS(cuops_create(&h, CUOPS_DEVICE_CPU), OK);
    if (h) {
        rejection_table(h, 1);
        gemm_ld_boundaries(h);
        w4_size_extremes(h);
        zero_size_writes(h);
        gemm_alpha_edges(h);
        dequant_any_alignment(h);
        w4_packed_bounds_and_alignment(h);
        odd_group_per_row(h);
        scan_adjacent(h);
        kernel_name_resets(h);
        cpu_variants(h);
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
