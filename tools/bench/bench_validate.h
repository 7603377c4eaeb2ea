/*
 * bench_validate.h - the validation math of cuops-bench, in plain C11 (also
 * valid C++) so that tests/test_bench_logic.c can prove, on the CPU, that the
 * checks reject wrong results and accept right ones.
 *
 * What lives here, and why each check looks the way it does:
 *  - bv_check_gemm: GEMMs too large for an O(mnk) host loop are checked with
 *    random vectors x: C.x against alpha.op(A).(op(B).x) in fp64, O(mk+nk+mn).
 *    A single norm over the whole product dilutes a wrong tile by sqrt(mn)
 *    (one wrong 128x128 tile of a 16384^2 C moves ||Cx - ref||/||ref|| by
 *    less than 1%), so each row is also checked on its own, scaled by
 *    sqrt(sum_j (C_ij x_j)^2): output rounding moves that ratio by about the
 *    rounding unit, while a wrong 64-column block of a 4096-wide row moves it
 *    by ~0.1. Every element is scanned for NaN/Inf (outputs are NaN-poisoned,
 *    so an unwritten element shows), and a sample of elements (all of them
 *    when m*n*k is small) is recomputed exactly against the worst-case
 *    fp32-accumulation bound.
 *  - bv_check_exact: bit-exact comparison (dequantization).
 *  - bv_check_rel: norm-wise and row-wise relative error of one matrix
 *    against another (W4A16 against cuBLAS on the dequantized weight).
 *  - bv_check_scan / bv_check_scalar: integers exact; floats within
 *    tol * sum_{j<=i} |x_j|, the natural scale of a summation's rounding.
 *  - independent host references (dequant formula, scan, reduce), used when
 *    the bench runs without a GPU and by the logic test;
 *  - median, geometric mean, JSON string escaping.
 */
#ifndef CUOPS_BENCH_VALIDATE_H
#define CUOPS_BENCH_VALIDATE_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/float16.h"
#include "cuda/common/dram_peak.h" /* cuops_dram_peak_gbps: the board line's peak is the
                                       * library's own arithmetic, what its rules read */
#include "cuops.h"

#define BV_MSG_LEN 1024
#define BV_MAX_REPORTED 5 /* mismatches spelled out in the message */

typedef struct bv_result {
    int pass;
    double max_rel_err; /* the row's reported error (NAN when it cannot be computed) */
    int64_t bad_count;  /* elements / rows that failed */
    char msg[BV_MSG_LEN];
} bv_result_t;

static inline void bv_result_init(bv_result_t *r)
{
    r->pass = 1;
    r->max_rel_err = 0.0;
    r->bad_count = 0;
    r->msg[0] = '\0';
}

/* Append to the message; silently truncates when it is full. */
static inline void bv_note(bv_result_t *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static inline void bv_note(bv_result_t *r, const char *fmt, ...)
{
    size_t used = strlen(r->msg);
    if (used + 1 >= sizeof(r->msg)) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg + used, sizeof(r->msg) - used, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------------ */
/* Element access                                                           */
/* ------------------------------------------------------------------------ */

static inline size_t bv_dtype_size(cuops_dtype_t t)
{
    switch (t) {
    case CUOPS_DTYPE_F16: case CUOPS_DTYPE_BF16: return 2;
    case CUOPS_DTYPE_F32: case CUOPS_DTYPE_I32: return 4;
    case CUOPS_DTYPE_F64: case CUOPS_DTYPE_I64: return 8;
    case CUOPS_DTYPE_U8: return 1;
    }
    return 0;
}

static inline const char *bv_dtype_name(cuops_dtype_t t)
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

static inline int bv_dtype_is_int(cuops_dtype_t t)
{
    return t == CUOPS_DTYPE_I32 || t == CUOPS_DTYPE_I64 || t == CUOPS_DTYPE_U8;
}

/* Element i of an array of type t, as double. */
static inline double bv_load(const void *p, cuops_dtype_t t, int64_t i)
{
    return cuops_elem_to_double(p, t, i);
}

/* Element i of an integer array, exactly. */
static inline int64_t bv_load_int(const void *p, cuops_dtype_t t, int64_t i)
{
    switch (t) {
    case CUOPS_DTYPE_I32: return ((const int32_t *)p)[i];
    case CUOPS_DTYPE_I64: return ((const int64_t *)p)[i];
    case CUOPS_DTYPE_U8: return ((const uint8_t *)p)[i];
    default: return 0;
    }
}

/* Store a double into element i of a float array, rounding to nearest even. */
static inline void bv_store(void *p, cuops_dtype_t t, int64_t i, double v)
{
    switch (t) {
    case CUOPS_DTYPE_F16: ((uint16_t *)p)[i] = cuops_float_to_half((float)v); break;
    case CUOPS_DTYPE_BF16: ((uint16_t *)p)[i] = cuops_float_to_bf16((float)v); break;
    case CUOPS_DTYPE_F32: ((float *)p)[i] = (float)v; break;
    case CUOPS_DTYPE_F64: ((double *)p)[i] = v; break;
    case CUOPS_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case CUOPS_DTYPE_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case CUOPS_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    }
}

/* Half the distance between neighbouring values, relative: the rounding unit
 * of a store to this type. */
static inline double bv_unit_roundoff(cuops_dtype_t t)
{
    switch (t) {
    case CUOPS_DTYPE_F16: return 1.0 / 2048.0;   /* 2^-11 */
    case CUOPS_DTYPE_BF16: return 1.0 / 256.0;   /* 2^-8 */
    case CUOPS_DTYPE_F32: return 1.0 / 16777216.0; /* 2^-24 */
    case CUOPS_DTYPE_F64: return 1.1102230246251565e-16;
    default: return 0.0;
    }
}

/* ------------------------------------------------------------------------ */
/* A small seeded generator of its own (the checks must not disturb the     */
/* caller's random stream).                                                  */
/* ------------------------------------------------------------------------ */

static inline uint64_t bv_rand_next(uint64_t *s)
{
    /* splitmix64: every seed, including 0, gives a full-period stream */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static inline double bv_rand_pm1(uint64_t *s)
{
    return -1.0 + 2.0 * (double)(bv_rand_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------------------ */
/* Variant specs                                                            */
/* ------------------------------------------------------------------------ */

/* A whole decimal integer in [lo, hi] (a leading 0 is not octal): 0, or -1
 * for an empty string, trailing characters, overflow or a value out of range. */
static inline int bv_parse_ll(const char *s, long long lo, long long hi, long long *out)
{
    if (!s || !((*s >= '0' && *s <= '9') || *s == '-')) return -1; /* no leading space or '+' */
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || end == s || *end != '\0' || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* A whole unsigned 64-bit integer (decimal or 0x hex), no sign: 0 or -1. */
static inline int bv_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !(*s >= '0' && *s <= '9')) return -1; /* no sign, no leading space */
    char *end = NULL;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 0);
    if (errno == ERANGE || end == s || *end != '\0') return -1;
    *out = (uint64_t)v;
    return 0;
}

/* One shape dimension in [s, end): a decimal number >= 1 or base^e
 * (e.g. 2^20) below 4e18: 0, or -1 for anything else ("2^", "^3", "4x", ...). */
static inline int bv_parse_dim(const char *s, const char *end, int64_t *out)
{
    char buf[32];
    const size_t len = (size_t)(end - s);
    if (len == 0 || len >= sizeof(buf)) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *caret = strchr(buf, '^');
    if (caret) {
        *caret = '\0';
        long long base = 0, e = 0;
        if (caret[1] == '-' || caret[1] == '+' || buf[0] == '-' || buf[0] == '+') return -1;
        if (bv_parse_ll(buf, 1, 4000000000000000000LL, &base) ||
            bv_parse_ll(caret + 1, 0, 62, &e))
            return -1;
        if (pow((double)base, (double)e) > 4.0e18) return -1;
        int64_t r = 1;
        for (long long i = 0; i < e; i++) r *= base;
        *out = r;
        return 0;
    }
    long long v = 0;
    if (buf[0] == '-' || buf[0] == '+' || bv_parse_ll(buf, 1, 4000000000000000000LL, &v)) return -1;
    *out = v;
    return 0;
}

/* A --variant value: a variant name, optionally with options after a colon,
 * "NAME:split_k=N" (N >= 1), so that one run can time a variant with and
 * without an option side by side. Writes the name (NUL-terminated) into
 * name[cap] and the option into *split_k (0 when absent). Returns 0, or -1
 * for an empty or too long name, an unknown option or a bad number. */
static inline int bv_parse_variant_spec(const char *spec, char *name, size_t cap, int *split_k)
{
    *split_k = 0;
    const size_t len = strcspn(spec, ":");
    if (len == 0 || len >= cap) return -1;
    memcpy(name, spec, len);
    name[len] = '\0';
    if (spec[len] == '\0') return 0;
    const char *opt = spec + len + 1;
    static const char key[] = "split_k=";
    if (strncmp(opt, key, sizeof key - 1) != 0) return -1;
    const char *num = opt + sizeof key - 1;
    char *end = NULL;
    const long v = strtol(num, &end, 10);
    if (end == num || *end != '\0' || v < 1 || v > 65535) return -1;
    *split_k = (int)v;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

/* Repetitions of a timed series over num_sets rotating buffer sets: at least
 * one per set, so that each repetition reads a set last touched a full
 * rotation (>= 3x L2) earlier; reps as asked when there is one set. */
static inline int bench_series_reps(int reps, int num_sets)
{
    return num_sets > 1 && reps < num_sets ? num_sets : reps;
}

/* A GEMM row is memory-bound (timed over rotating sets, L2 cold, and put
 * against the copy ceiling) at m <= 64, or where its FLOP per byte moved is
 * below the ridge of the measured ceilings (vendor GEMM TFLOP/s over copy
 * GB/s: ~160 on the H200), e.g. 128 x 4096 x 4096 (~120). */
static inline int bench_gemm_memory_bound(int64_t m, int64_t n, int64_t k, double es, double os,
                                          double vendor_tflops, double copy_gbps)
{
    if (m <= 64) return 1;
    if (!(vendor_tflops > 0.0) || !(copy_gbps > 0.0)) return 0;
    const double flops = 2.0 * (double)m * (double)n * (double)k;
    const double bytes = ((double)m * (double)k + (double)n * (double)k) * es + (double)m * (double)n * os;
    return flops / bytes < vendor_tflops * 1e12 / (copy_gbps * 1e9);
}

static inline int bv_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n values (sorts them in place); mean of the middle two for even
 * n; NAN for n <= 0. */
static inline double bv_median(double *v, int n)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof(double), bv_cmp_double);
    if (n & 1) return v[n / 2];
    return 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Geometric mean of the finite, positive values (speed-ups); the others
 * (a missing baseline, a failed row) are left out. *used receives how many
 * counted; NAN when none did. */
static inline double bv_geomean(const double *v, int n, int *used)
{
    double log_sum = 0.0;
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (isfinite(v[i]) && v[i] > 0.0) {
            log_sum += log(v[i]);
            count++;
        }
    }
    if (used) *used = count;
    return count ? exp(log_sum / count) : NAN;
}

/* A result row as the summary's geomean lines see it. baseline, dtype:
 * NULL for none; speedup: NAN for a row that did not count (failed, invalid,
 * no baseline). */
typedef struct bv_speedup_row {
    const char *op, *variant, *baseline, *dtype;
    double speedup;
} bv_speedup_row_t;

static inline int bv_same_name(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

/* Whether two rows belong to one geomean line: same op, variant, baseline. */
static inline int bv_same_geomean_group(const bv_speedup_row_t *a, const bv_speedup_row_t *b)
{
    return bv_same_name(a->op, b->op) && bv_same_name(a->variant, b->variant) &&
           bv_same_name(a->baseline, b->baseline);
}

/* Geometric mean of the speed-ups of the rows in rows[at]'s group, only
 * those of `dtype` when it is not NULL, by bv_geomean's rule (scratch: room
 * for n values); *used as bv_geomean's. */
static inline double bv_group_geomean(const bv_speedup_row_t *rows, int n, int at,
                                      const char *dtype, double *scratch, int *used)
{
    int count = 0;
    for (int j = 0; j < n; j++) {
        if (!bv_same_geomean_group(&rows[j], &rows[at])) continue;
        if (dtype && !bv_same_name(rows[j].dtype, dtype)) continue;
        scratch[count++] = rows[j].speedup;
    }
    return bv_geomean(scratch, count, used);
}

/* Whether rows[at] opens a line: it is the first row of its group
 * (by_dtype 0) or the first of its dtype within its group where the group
 * mixes dtypes (by_dtype 1; a bar may be read per type). */
static inline int bv_opens_geomean_line(const bv_speedup_row_t *rows, int n, int at, int by_dtype)
{
    int mixed = 0;
    for (int j = 0; j < n; j++) {
        if (!bv_same_geomean_group(&rows[j], &rows[at])) continue;
        const int same_dtype = bv_same_name(rows[j].dtype, rows[at].dtype);
        if (j < at && (!by_dtype || same_dtype)) return 0;
        if (!same_dtype && rows[j].dtype) mixed = 1;
    }
    return !by_dtype || (mixed && rows[at].dtype);
}

/* ------------------------------------------------------------------------ */
/* Clock and power samples (bench_power.cu)                                 */
/* ------------------------------------------------------------------------ */

/* NVML's clock event reasons (nvmlClocksEventReason*): the bits that mean
 * "held below the requested clock by power": the software power cap (0x4),
 * hardware slowdown (0x8) and the power brake (0x80). The thermal bits
 * (0x20, 0x40) and "idle" (0x1) are not power. */
#define BV_CLOCK_REASONS_POWER 0x8cull

static inline int bv_clock_reasons_power(unsigned long long reasons)
{
    return (reasons & BV_CLOCK_REASONS_POWER) != 0;
}

/* Running sums over the samples of one timed series. */
typedef struct bv_power_acc {
    int samples;
    double mhz_sum, watt_sum;
    int power_limited; /* samples with a power reason set */
} bv_power_acc_t;

static inline void bv_power_add(bv_power_acc_t *a, unsigned sm_mhz, unsigned milliwatts,
                                unsigned long long reasons)
{
    a->samples++;
    a->mhz_sum += (double)sm_mhz;
    a->watt_sum += 1e-3 * (double)milliwatts;
    a->power_limited += bv_clock_reasons_power(reasons);
}

/* Mean board power (W) over a series from NVML's energy counter (mJ since
 * the driver loaded) read at its start and end, `seconds` apart: NAN when a
 * reading is missing (energy_* 0: the counter read failed), the counter did
 * not move (it updates on its own period; a running board never draws 0 W)
 * or went back, or no time passed. Unlike the sampled power reading, which the
 * driver averages over a window of about a second, this is the series' own
 * energy (to the counter's update granularity). */
static inline double bv_energy_watts(unsigned long long energy_begin_mj,
                                     unsigned long long energy_end_mj, double seconds)
{
    if (energy_begin_mj == 0 || energy_end_mj <= energy_begin_mj || !(seconds > 0.0)) return NAN;
    return 1e-3 * (double)(energy_end_mj - energy_begin_mj) / seconds;
}

/* Mean SM clock (MHz), mean power (W) and the share of samples held by
 * power (0..1); NAN each when there was no sample. */
static inline void bv_power_summary(const bv_power_acc_t *a, double *sm_mhz, double *watts,
                                    double *limited_share)
{
    const double n = (double)a->samples;
    *sm_mhz = a->samples > 0 ? a->mhz_sum / n : NAN;
    *watts = a->samples > 0 ? a->watt_sum / n : NAN;
    *limited_share = a->samples > 0 ? (double)a->power_limited / n : NAN;
}

/* ------------------------------------------------------------------------ */
/* The board (bench_main.cu's header): what tells two machines of one name  */
/* apart                                                                    */
/* ------------------------------------------------------------------------ */

/* The board's UUID as nvidia-smi prints it (GPU-xxxxxxxx-xxxx-xxxx-xxxx-
 * xxxxxxxxxxxx) from the 16 bytes of cudaDeviceProp.uuid: runs on one board
 * carry the same string, so a result that moves between runs can be told
 * from a machine that changed. out holds at least 41 bytes. */
static inline void bv_format_uuid(const unsigned char bytes[16], char out[41])
{
    static const char hex[] = "0123456789abcdef";
    char *o = out;
    *o++ = 'G'; *o++ = 'P'; *o++ = 'U';
    for (int i = 0; i < 16; i++) {
        if (i == 0 || i == 4 || i == 6 || i == 8 || i == 10) *o++ = '-';
        *o++ = hex[bytes[i] >> 4];
        *o++ = hex[bytes[i] & 15];
    }
    *o = '\0';
}

/* ------------------------------------------------------------------------ */
/* JSON string escaping                                                     */
/* ------------------------------------------------------------------------ */

/* Escape s for use inside a JSON string (without the surrounding quotes):
 * quote and backslash get a backslash, control characters below 0x20 become
 * \n \t \r \b \f or \u00XX; other bytes (UTF-8 included) pass through.
 * Writes at most cap bytes including the terminator (truncating on a whole
 * escape, never in the middle of one); returns the length the full escape
 * needs (excluding the terminator), like snprintf. */
static inline size_t bv_json_escape(const char *s, char *out, size_t cap)
{
    size_t need = 0;
    int full = 0; /* set once a piece did not fit: nothing more is written */
    if (cap) out[0] = '\0';
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        char piece[8];
        size_t len;
        switch (*p) {
        case '"': memcpy(piece, "\\\"", 2); len = 2; break;
        case '\\': memcpy(piece, "\\\\", 2); len = 2; break;
        case '\n': memcpy(piece, "\\n", 2); len = 2; break;
        case '\t': memcpy(piece, "\\t", 2); len = 2; break;
        case '\r': memcpy(piece, "\\r", 2); len = 2; break;
        case '\b': memcpy(piece, "\\b", 2); len = 2; break;
        case '\f': memcpy(piece, "\\f", 2); len = 2; break;
        default:
            if (*p < 0x20) {
                snprintf(piece, sizeof(piece), "\\u%04x", (unsigned)*p);
                len = 6;
            } else {
                piece[0] = (char)*p;
                len = 1;
            }
        }
        if (!full && need + len < cap) {
            memcpy(out + need, piece, len);
            out[need + len] = '\0';
        } else {
            full = 1;
        }
        need += len;
    }
    return need;
}

/* Write s as a quoted JSON string, or null when s is NULL. */
static inline void bv_json_write_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    char buf[512];
    size_t need = bv_json_escape(s, buf, sizeof(buf));
    if (need < sizeof(buf)) {
        fprintf(f, "\"%s\"", buf);
        return;
    }
    char *big = (char *)malloc(need + 1);
    if (!big) {
        fputs("null", f);
        return;
    }
    bv_json_escape(s, big, need + 1);
    fprintf(f, "\"%s\"", big);
    free(big);
}

/* ------------------------------------------------------------------------ */
/* GEMM: C = alpha * op(A) * op(B) (beta = 0), checked in fp64              */
/* ------------------------------------------------------------------------ */

typedef struct bv_gemm {
    cuops_op_t trans_a, trans_b;
    int64_t m, n, k;
    double alpha;
    const void *a; int64_t lda; /* trans_a N: [m,k]; T: [k,m] */
    const void *b; int64_t ldb; /* trans_b N: [k,n]; T: [n,k] */
    cuops_dtype_t ab_type;
    const void *c; int64_t ldc; /* [m,n] */
    cuops_dtype_t c_type;
} bv_gemm_t;

static inline double bv_gemm_a(const bv_gemm_t *g, int64_t i, int64_t p)
{
    return bv_load(g->a, g->ab_type, g->trans_a == CUOPS_OP_N ? i * g->lda + p : p * g->lda + i);
}

static inline double bv_gemm_b(const bv_gemm_t *g, int64_t p, int64_t j)
{
    return bv_load(g->b, g->ab_type, g->trans_b == CUOPS_OP_N ? p * g->ldb + j : j * g->ldb + p);
}

/* Exact C[i,j] and the sum of |terms| that bounds its rounding error. */
static inline void bv_gemm_element(const bv_gemm_t *g, int64_t i, int64_t j, double *value,
                                   double *abs_sum)
{
    double v = 0.0, s = 0.0;
    for (int64_t p = 0; p < g->k; p++) {
        double t = bv_gemm_a(g, i, p) * bv_gemm_b(g, p, j);
        v += t;
        s += fabs(t);
    }
    *value = g->alpha * v;
    *abs_sum = fabs(g->alpha) * s;
}

#define BV_GEMM_VECTORS 2

/* The fp64 side of the projection check, alpha op(A) (op(B) x) for
 * BV_GEMM_VECTORS random x: it depends on A and B only, so one shape's
 * variants share it (O(mk + nk) once, then O(mn) per checked C). */
typedef struct bv_gemm_ref {
    int64_t m, n;
    double *x;   /* [BV_GEMM_VECTORS][n] */
    double *ref; /* [BV_GEMM_VECTORS][m] */
} bv_gemm_ref_t;

static inline void bv_gemm_ref_free(bv_gemm_ref_t *r)
{
    free(r->x);
    free(r->ref);
    r->x = r->ref = NULL;
}

/* Returns 0, or -1 when host memory is short. */
static inline int bv_gemm_ref_init(bv_gemm_ref_t *r, const bv_gemm_t *g, uint64_t seed)
{
    const int64_t m = g->m, n = g->n, k = g->k, kk = k > 0 ? k : 1;
    r->m = m;
    r->n = n;
    r->x = (double *)malloc(sizeof(double) * (size_t)(BV_GEMM_VECTORS * (n > 0 ? n : 1)));
    r->ref = (double *)calloc((size_t)(BV_GEMM_VECTORS * (m > 0 ? m : 1)), sizeof(double));
    double *t = (double *)calloc((size_t)(BV_GEMM_VECTORS * kk), sizeof(double));
    if (!r->x || !r->ref || !t) {
        free(t);
        bv_gemm_ref_free(r);
        return -1;
    }
    uint64_t rng = seed;
    for (int64_t i = 0; i < BV_GEMM_VECTORS * n; i++) r->x[i] = bv_rand_pm1(&rng);
    /* t_v = op(B) x_v, walking B in storage order */
    if (g->trans_b == CUOPS_OP_T) { /* B stored [n,k] */
        for (int64_t j = 0; j < n; j++)
            for (int64_t p = 0; p < k; p++) {
                double b = bv_load(g->b, g->ab_type, j * g->ldb + p);
                for (int v = 0; v < BV_GEMM_VECTORS; v++) t[v * kk + p] += b * r->x[v * n + j];
            }
    } else { /* B stored [k,n] */
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++) {
                double b = bv_load(g->b, g->ab_type, p * g->ldb + j);
                for (int v = 0; v < BV_GEMM_VECTORS; v++) t[v * kk + p] += b * r->x[v * n + j];
            }
    }
    /* ref_v = alpha op(A) t_v */
    if (g->trans_a == CUOPS_OP_N) { /* A stored [m,k] */
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++) {
                double a = bv_load(g->a, g->ab_type, i * g->lda + p);
                for (int v = 0; v < BV_GEMM_VECTORS; v++) r->ref[v * m + i] += a * t[v * kk + p];
            }
    } else { /* A stored [k,m] */
        for (int64_t p = 0; p < k; p++)
            for (int64_t i = 0; i < m; i++) {
                double a = bv_load(g->a, g->ab_type, p * g->lda + i);
                for (int v = 0; v < BV_GEMM_VECTORS; v++) r->ref[v * m + i] += a * t[v * kk + p];
            }
    }
    for (int64_t i = 0; i < BV_GEMM_VECTORS * m; i++) r->ref[i] *= g->alpha;
    free(t);
    return 0;
}

/*
 * Check C (g->c) against alpha*op(A)*op(B), with the projections of `pr`
 * (made by bv_gemm_ref_init from the same A, B).
 *  tol         bound on ||Cx - ref|| / ||ref|| (1e-2 for f16/bf16 inputs, 1e-5 for f32)
 *  full_limit  when m*n*k <= full_limit every element is recomputed exactly
 *  samples     otherwise, how many elements are (the two corners, then random)
 *  seed        the sample positions
 * max_rel_err is the norm-wise ||Cx - ref|| / sqrt(sum (c_ij x_j)^2), worst over the vectors.
 */
static inline bv_result_t bv_check_gemm_ref(const bv_gemm_t *g, const bv_gemm_ref_t *pr,
                                            double tol, int64_t full_limit, int samples,
                                            uint64_t seed)
{
    bv_result_t r;
    bv_result_init(&r);
    const int64_t m = g->m, n = g->n, k = g->k;
    if (m <= 0 || n <= 0) return r;
    const double *x = pr->x, *ref = pr->ref;

    /* 1. one pass over C: every element must be finite (NaN poison shows
     * what was never written), and each row's projections */
    /* Rounding C to its type moves each row's ratio by about the rounding
     * unit (a random walk weighted like the scale); bf16's 2^-8 would put
     * 1e-2 within ~5 standard deviations, so rows get 10 units of room. */
    const double u_out = bv_unit_roundoff(g->c_type);
    const double row_tol = tol > 10.0 * u_out ? tol : 10.0 * u_out;
    /* The norm-wise check divides by the root-sum-square of the terms c_ij x_j
     * rather than by ||A(Bx)||: for random x both are the same size when C has
     * many rows, but with m = 1 the projection is one scalar whose value can
     * cancel to near zero by chance, and the ratio would then measure luck. */
    double diff2[BV_GEMM_VECTORS] = {0}, ref2[BV_GEMM_VECTORS] = {0};
    int64_t bad_rows = 0, nonfinite = 0;
    double worst_row = 0.0;
    for (int64_t i = 0; i < m; i++) {
        double cx[BV_GEMM_VECTORS] = {0}, scale2[BV_GEMM_VECTORS] = {0};
        for (int64_t j = 0; j < n; j++) {
            double c = bv_load(g->c, g->c_type, i * g->ldc + j);
            if (!isfinite(c)) {
                if (nonfinite < BV_MAX_REPORTED)
                    bv_note(&r, "C[%lld,%lld] = %g (not finite); ", (long long)i, (long long)j,
                            c);
                nonfinite++;
                continue;
            }
            for (int v = 0; v < BV_GEMM_VECTORS; v++) {
                double term = c * x[v * n + j];
                cx[v] += term;
                scale2[v] += term * term;
            }
        }
        if (nonfinite) continue;
        int row_bad = 0;
        for (int v = 0; v < BV_GEMM_VECTORS; v++) {
            double d = cx[v] - ref[v * m + i];
            diff2[v] += d * d;
            ref2[v] += scale2[v];
            double scale = sqrt(scale2[v]);
            double e = d == 0.0 ? 0.0 : (scale > 0.0 ? fabs(d) / scale : INFINITY);
            if (!(e <= row_tol)) {
                if (!row_bad && bad_rows < BV_MAX_REPORTED)
                    bv_note(&r, "row %lld: (Cx)=%.6g ref=%.6g rel %.3g > %.3g; ", (long long)i,
                            cx[v], ref[v * m + i], e, row_tol);
                row_bad = 1;
            }
            if (e > worst_row || e != e) worst_row = e;
        }
        bad_rows += row_bad;
    }
    if (nonfinite) {
        r.pass = 0;
        r.bad_count = nonfinite;
        r.max_rel_err = NAN;
        bv_note(&r, "%lld non-finite element(s) of %lld", (long long)nonfinite,
                (long long)(m * n));
        return r;
    }
    for (int v = 0; v < BV_GEMM_VECTORS; v++) {
        double e = ref2[v] > 0.0 ? sqrt(diff2[v] / ref2[v]) : (diff2[v] > 0.0 ? INFINITY : 0.0);
        if (e > r.max_rel_err || e != e) r.max_rel_err = e;
    }
    if (!(r.max_rel_err <= tol)) {
        r.pass = 0;
        bv_note(&r, "||Cx - A(Bx)||/||A(Bx)|| = %.3g > %.3g; ", r.max_rel_err, tol);
    }
    if (bad_rows) {
        r.pass = 0;
        r.bad_count += bad_rows;
        bv_note(&r, "%lld row(s) off (worst %.3g > %.3g); ", (long long)bad_rows, worst_row,
                row_tol);
    }

    /* 2. exact elements. Worst case of fp32 accumulation over k terms (with
     * room for truncating accumulators): 2(k+2) 2^-24 sum|a b|; then one
     * rounding to C's type. */
    uint64_t rng = seed;
    const double u_acc = 1.0 / 16777216.0;
    const int full = (double)m * (double)n * (double)(k > 0 ? k : 1) <= (double)full_limit;
    const int64_t count = full ? m * n : samples;
    int64_t bad_elems = 0;
    for (int64_t s = 0; s < count; s++) {
        int64_t i, j;
        if (full) {
            i = s / n;
            j = s % n;
        } else if (s < 2) {
            i = s ? m - 1 : 0;
            j = s ? n - 1 : 0;
        } else {
            i = (int64_t)(bv_rand_next(&rng) % (uint64_t)m);
            j = (int64_t)(bv_rand_next(&rng) % (uint64_t)n);
        }
        double want, abs_sum;
        bv_gemm_element(g, i, j, &want, &abs_sum);
        double acc_bound = 2.0 * (double)(k + 2) * u_acc * abs_sum;
        double bound = acc_bound + 2.0 * u_out * (fabs(want) + acc_bound) + 1e-300;
        double got = bv_load(g->c, g->c_type, i * g->ldc + j);
        if (!(fabs(got - want) <= bound)) {
            if (bad_elems < BV_MAX_REPORTED)
                bv_note(&r, "C[%lld,%lld] = %.8g, exact %.8g (bound %.3g); ", (long long)i,
                        (long long)j, got, want, bound);
            bad_elems++;
        }
    }
    if (bad_elems) {
        r.pass = 0;
        r.bad_count += bad_elems;
        bv_note(&r, "%lld of %lld checked element(s) off", (long long)bad_elems,
                (long long)count);
    }
    return r;
}

/* bv_gemm_ref_init + bv_check_gemm_ref in one call (seed drives both). */
static inline bv_result_t bv_check_gemm(const bv_gemm_t *g, double tol, int64_t full_limit,
                                        int samples, uint64_t seed)
{
    bv_gemm_ref_t pr;
    if (bv_gemm_ref_init(&pr, g, seed)) {
        bv_result_t r;
        bv_result_init(&r);
        r.pass = 0;
        r.max_rel_err = NAN;
        bv_note(&r, "host allocation failed in the GEMM check");
        return r;
    }
    bv_result_t r = bv_check_gemm_ref(g, &pr, tol, full_limit, samples, seed ^ 0x5A5Aull);
    bv_gemm_ref_free(&pr);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Bit-exact and relative matrix comparisons                                */
/* ------------------------------------------------------------------------ */

/* got[rows, cols] (leading dimension ld_got) against ref (ld_ref), bit for
 * bit. row_offset only labels the rows in the message (sampled row blocks).
 * max_rel_err is max |got - ref| / |ref| over the elements (0 when exact). */
static inline bv_result_t bv_check_exact(const void *got, int64_t ld_got, const void *ref,
                                         int64_t ld_ref, int64_t rows, int64_t cols,
                                         cuops_dtype_t t, int64_t row_offset)
{
    bv_result_t r;
    bv_result_init(&r);
    const size_t es = bv_dtype_size(t);
    const unsigned char *g = (const unsigned char *)got, *w = (const unsigned char *)ref;
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < cols; j++) {
            const unsigned char *pg = g + ((size_t)(i * ld_got + j)) * es;
            const unsigned char *pw = w + ((size_t)(i * ld_ref + j)) * es;
            if (memcmp(pg, pw, es) == 0) continue;
            double vg = bv_load(got, t, i * ld_got + j), vw = bv_load(ref, t, i * ld_ref + j);
            double e = fabs(vg - vw) / (vw != 0.0 ? fabs(vw) : 1.0);
            if (e != e) e = INFINITY;
            if (e > r.max_rel_err) r.max_rel_err = e;
            if (r.bad_count < BV_MAX_REPORTED) {
                uint64_t bg = 0, bw = 0;
                memcpy(&bg, pg, es < 8 ? es : 8);
                memcpy(&bw, pw, es < 8 ? es : 8);
                bv_note(&r, "[%lld,%lld] got %.8g (0x%llx) want %.8g (0x%llx); ",
                        (long long)(i + row_offset), (long long)j, vg, (unsigned long long)bg,
                        vw, (unsigned long long)bw);
            }
            r.bad_count++;
        }
    }
    if (r.bad_count) {
        r.pass = 0;
        bv_note(&r, "%lld of %lld element(s) differ", (long long)r.bad_count,
                (long long)(rows * cols));
    }
    return r;
}

/* got against ref (both [rows, cols], any float types): fails on a non-finite
 * element of either (a NaN in the reference would otherwise make every
 * comparison false and the row pass), ||got - ref||_F / ||ref||_F > tol, or
 * any row whose own relative error exceeds row_tol. max_rel_err is the
 * norm-wise error. */
static inline bv_result_t bv_check_rel(const void *got, int64_t ld_got, cuops_dtype_t t_got,
                                       const void *ref, int64_t ld_ref, cuops_dtype_t t_ref,
                                       int64_t rows, int64_t cols, double tol, double row_tol)
{
    bv_result_t r;
    bv_result_init(&r);
    double diff2 = 0.0, ref2 = 0.0, worst_row = 0.0;
    int64_t nonfinite = 0, bad_rows = 0;
    for (int64_t i = 0; i < rows; i++) {
        double rd2 = 0.0, rr2 = 0.0;
        for (int64_t j = 0; j < cols; j++) {
            double vg = bv_load(got, t_got, i * ld_got + j);
            double vr = bv_load(ref, t_ref, i * ld_ref + j);
            if (!isfinite(vg) || !isfinite(vr)) {
                if (nonfinite < BV_MAX_REPORTED)
                    bv_note(&r, "[%lld,%lld] = %g (reference %g; not finite); ", (long long)i,
                            (long long)j, vg, vr);
                nonfinite++;
                continue;
            }
            rd2 += (vg - vr) * (vg - vr);
            rr2 += vr * vr;
        }
        diff2 += rd2;
        ref2 += rr2;
        double e = rr2 > 0.0 ? sqrt(rd2 / rr2) : (rd2 > 0.0 ? INFINITY : 0.0);
        if (!(e <= row_tol)) {
            if (bad_rows < BV_MAX_REPORTED)
                bv_note(&r, "row %lld rel %.3g > %.3g; ", (long long)i, e, row_tol);
            bad_rows++;
        }
        if (e > worst_row) worst_row = e;
    }
    r.max_rel_err = ref2 > 0.0 ? sqrt(diff2 / ref2) : (diff2 > 0.0 ? INFINITY : 0.0);
    if (nonfinite) {
        r.pass = 0;
        r.max_rel_err = NAN;
        bv_note(&r, "%lld non-finite element(s); ", (long long)nonfinite);
    } else if (!(r.max_rel_err <= tol)) {
        r.pass = 0;
        bv_note(&r, "||out - ref||/||ref|| = %.3g > %.3g; ", r.max_rel_err, tol);
    }
    if (bad_rows) {
        r.pass = 0;
        bv_note(&r, "%lld row(s) off (worst %.3g)", (long long)bad_rows, worst_row);
    }
    r.bad_count = nonfinite + bad_rows;
    return r;
}

/* ------------------------------------------------------------------------ */
/* Scan and reduce                                                          */
/* ------------------------------------------------------------------------ */

/* Relative bound of float scan/reduce results, scaled by sum |x|. */
static inline double bv_scan_tol(cuops_dtype_t t)
{
    return t == CUOPS_DTYPE_F64 ? 1e-12 : 1e-5;
}

/*
 * Check len elements of an inclusive sum scan starting at global index
 * `offset`: got[i] and ref[i] are outputs offset+i, in[i] the input there,
 * abs_before = sum of |in| before offset (floats). Integers must match
 * exactly; floats within tol * sum_{j<=offset+i} |in_j|.
 * max_rel_err: the worst |got - ref| / sum|x| (integers: |got - ref| / |ref|).
 */
static inline bv_result_t bv_check_scan(const void *got, const void *ref, const void *in,
                                        cuops_dtype_t t, int64_t len, int64_t offset,
                                        double abs_before, double tol)
{
    bv_result_t r;
    bv_result_init(&r);
    double abs_sum = abs_before;
    for (int64_t i = 0; i < len; i++) {
        int bad = 0;
        double e = 0.0;
        if (bv_dtype_is_int(t)) {
            int64_t g = bv_load_int(got, t, i), w = bv_load_int(ref, t, i);
            if (g != w) {
                bad = 1;
                e = fabs((double)g - (double)w) / (w ? fabs((double)w) : 1.0);
            }
        } else {
            abs_sum += fabs(bv_load(in, t, i));
            double g = bv_load(got, t, i), w = bv_load(ref, t, i);
            e = fabs(g - w) / (abs_sum > 0.0 ? abs_sum : 1e-300);
            if (!(e <= tol)) {
                bad = 1;
                if (e != e) e = INFINITY;
            }
        }
        if (e > r.max_rel_err) r.max_rel_err = e;
        if (bad) {
            if (r.bad_count < BV_MAX_REPORTED)
                bv_note(&r, "out[%lld] = %.10g, want %.10g; ", (long long)(offset + i),
                        bv_load(got, t, i), bv_load(ref, t, i));
            r.bad_count++;
        }
    }
    if (r.bad_count) {
        r.pass = 0;
        bv_note(&r, "%lld of %lld element(s) off", (long long)r.bad_count, (long long)len);
    }
    return r;
}

/* One result (reduce): integers exact, floats within tol * abs_sum. */
static inline bv_result_t bv_check_scalar(const void *got, const void *ref, cuops_dtype_t t,
                                          double abs_sum, double tol)
{
    bv_result_t r;
    bv_result_init(&r);
    if (bv_dtype_is_int(t)) {
        int64_t g = bv_load_int(got, t, 0), w = bv_load_int(ref, t, 0);
        if (g != w) {
            r.pass = 0;
            r.bad_count = 1;
            r.max_rel_err = fabs((double)g - (double)w) / (w ? fabs((double)w) : 1.0);
            bv_note(&r, "got %lld, want %lld", (long long)g, (long long)w);
        }
        return r;
    }
    double g = bv_load(got, t, 0), w = bv_load(ref, t, 0);
    double e = fabs(g - w) / (abs_sum > 0.0 ? abs_sum : 1e-300);
    r.max_rel_err = e == e ? e : INFINITY;
    if (!(e <= tol)) {
        r.pass = 0;
        r.bad_count = 1;
        bv_note(&r, "got %.10g, want %.10g (|diff|/sum|x| = %.3g > %.3g)", g, w, e, tol);
    }
    return r;
}

/* ------------------------------------------------------------------------ */
/* Independent host references                                              */
/* ------------------------------------------------------------------------ */

/* Inclusive sum scan: integers wrap in two's complement; floats accumulate
 * in double and round once per output. */
static inline void bv_scan_ref(const void *in, void *out, cuops_dtype_t t, int64_t n)
{
    if (bv_dtype_is_int(t)) {
        uint64_t acc = 0;
        for (int64_t i = 0; i < n; i++) {
            acc += (uint64_t)bv_load_int(in, t, i);
            if (t == CUOPS_DTYPE_I32) ((int32_t *)out)[i] = (int32_t)(uint32_t)acc;
            else ((int64_t *)out)[i] = (int64_t)acc;
        }
        return;
    }
    double acc = 0.0;
    for (int64_t i = 0; i < n; i++) {
        acc += bv_load(in, t, i);
        bv_store(out, t, i, acc);
    }
}

/* Sum of n elements into *out (one element of t); *abs_sum gets sum |x|. */
static inline void bv_reduce_ref(const void *in, void *out, cuops_dtype_t t, int64_t n,
                                 double *abs_sum)
{
    double a = 0.0;
    if (bv_dtype_is_int(t)) {
        uint64_t acc = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = bv_load_int(in, t, i);
            acc += (uint64_t)v;
            a += fabs((double)v);
        }
        if (t == CUOPS_DTYPE_I32) *(int32_t *)out = (int32_t)(uint32_t)acc;
        else *(int64_t *)out = (int64_t)acc;
    } else {
        double acc = 0.0;
        for (int64_t i = 0; i < n; i++) {
            double v = bv_load(in, t, i);
            acc += v;
            a += fabs(v);
        }
        bv_store(out, t, 0, acc);
    }
    if (abs_sum) *abs_sum = a;
}

/* The seed's dequantization, as the API defines it: element c of row r is the
 * low (even c) or high (odd c) nibble of qweight[r*ldq + c/2];
 * out = (float(q) - float(zero)) * float(scale) in fp32, rounded to out_type.
 * zeros NULL means zero = 8. */
static inline void bv_dequant_ref(int64_t n, int64_t k, int64_t group, const uint8_t *qweight,
                                  int64_t ldq, const void *scales, cuops_dtype_t scale_type,
                                  const uint8_t *zeros, void *out, int64_t ldo,
                                  cuops_dtype_t out_type)
{
    const int64_t groups = (k + group - 1) / group;
    for (int64_t r = 0; r < n; r++) {
        for (int64_t c = 0; c < k; c++) {
            uint8_t byte = qweight[r * ldq + c / 2];
            int q = (c & 1) ? (byte >> 4) : (byte & 15);
            int64_t gi = r * groups + c / group;
            float zero = zeros ? (float)zeros[gi] : 8.0f;
            float scale = (float)bv_load(scales, scale_type, gi);
            volatile float w = ((float)q - zero) * scale; /* one fp32 rounding, not a wider one */
            bv_store(out, out_type, r * ldo + c, (double)w);
        }
    }
}

/*
 * The whole-GPU tensor-core ceilings cuops-probe measured: the best
 * "mma_sync" and "wgmma" TFLOP/s points of its JSON (one point per line, as
 * cuops-probe writes it). Missing families stay NAN. Returns 0 when the file
 * was read.
 */
static inline int bv_probe_ceilings(const char *path, double *mma_sync, double *wgmma)
{
    *mma_sync = NAN;
    *wgmma = NAN;
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return -1;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        double *dst = NULL;
        if (strstr(line, "\"family\": \"mma_sync\"")) dst = mma_sync;
        else if (strstr(line, "\"family\": \"wgmma\"")) dst = wgmma;
        const char *v = dst ? strstr(line, "\"value\": ") : NULL;
        if (!v) continue;
        double x = strtod(v + 9, NULL);
        if (isfinite(x) && (isnan(*dst) || x > *dst)) *dst = x;
    }
    fclose(f);
    return 0;
}

#endif /* CUOPS_BENCH_VALIDATE_H */
