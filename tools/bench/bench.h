/*
 * bench.h - what the files of cuops-bench share: command-line options, the
 * run environment (handles, stream, measured ceilings), one result row per
 * (op, variant, dtype, shape), the timing harness and device-buffer helpers.
 *
 * Flow of every op file (bench_gemm.cu, bench_quant.cu, bench_scan.cu):
 * allocate rotation sets -> fill with fresh random data -> time the vendor
 * baseline -> for each variant: poison the output, run once, validate on the
 * host, then time -> bench_row_done() prints the row. bench_main.cu parses
 * the command line, measures the ceilings, prints the summary and writes the
 * JSON; bench_nodevice.cu runs the CPU backend when there is no GPU.
 */
#ifndef CUOPS_BENCH_H
#define CUOPS_BENCH_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "cuops.h"
#include "bench_validate.h"

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum bench_op {
    BENCH_GEMM = 0,
    BENCH_DEQUANT,
    BENCH_W4A16,
    BENCH_SCAN,
    BENCH_REDUCE,
    BENCH_NUM_OPS
} bench_op_t;

/* Suites tag the default shapes; --suite keeps the tagged ones. */
enum {
    BENCH_SUITE_SQUARE = 1u << 0,
    BENCH_SUITE_ODD = 1u << 1,
    BENCH_SUITE_DECODE = 1u << 2,
    BENCH_SUITE_LLM = 1u << 3,
    BENCH_SUITE_BIG = 1u << 4,
    BENCH_SUITE_QUICK = 1u << 5 /* internal: the --quick shapes */
};

#define BENCH_MAX_ITEMS 64

typedef struct bench_shape {
    int dims;       /* 3: MxNxK, 2: NxK, 1: N */
    int64_t d[3];
} bench_shape_t;

typedef struct bench_options {
    int run_op[BENCH_NUM_OPS];
    cuops_dtype_t dtypes[BENCH_MAX_ITEMS];
    int num_dtypes;                     /* 0: each op's defaults */
    bench_shape_t shapes[BENCH_MAX_ITEMS];
    int num_shapes;                     /* 0: each op's defaults */
    const char *variants[BENCH_MAX_ITEMS];
    int num_variants;                   /* 0: "auto" only */
    int all_variants;
    unsigned suites;                    /* 0: every suite */
    const char *json_path;
    int quick;
    int reps;                           /* 0: ~200 ms worth, at least 20 */
    int interleave;                     /* gemm, w4a16: a row and its baseline alternate */
    cuops_op_t trans_a, trans_b;        /* GEMM operand layouts (default N, T) */
    int64_t lda;                        /* --lda: GEMM A's leading dimension at least this
                                           (0: the tight one, k or m) */
    int64_t ldb;                        /* --ldb: the same for B (0: the tight one, k or n) */
    uint64_t seed;
    int time_invalid;                   /* CUOPS_BENCH_TIME_INVALID: time failed gemm and w4a16
                                           rows too */
    int scan_shift;                     /* CUOPS_BENCH_SCAN_SHIFT: scan/reduce buffers start this
                                           many elements past a 256-byte boundary (0..63) */
    int scan_out_shift;                 /* CUOPS_BENCH_SCAN_OUT_SHIFT: the output alone this many
                                           (0..63); -1: scan_shift */
    int sets;                           /* CUOPS_BENCH_SETS=N: memory-bound rows rotate exactly N
                                           buffer sets (0: as many as keep each set cold) */
    int print_samples;                  /* CUOPS_BENCH_SAMPLES=1: every timed repetition to stderr,
                                           in series order, with its buffer set */
} bench_options_t;

/* ------------------------------------------------------------------------ */
/* Rows                                                                     */
/* ------------------------------------------------------------------------ */

typedef enum bench_row_status {
    BENCH_ROW_OK = 0,        /* validated and timed */
    BENCH_ROW_INVALID,       /* ran, wrong result */
    BENCH_ROW_UNSUPPORTED,   /* the library said NOT_SUPPORTED */
    BENCH_ROW_ERROR,         /* any other failure (CUDA error, bad status, no memory) */
    BENCH_ROW_SKIPPED        /* not run (device memory short) */
} bench_row_status_t;

/* The SM clock and board power while a timed series ran (bench_power.cu):
 * means over samples taken every few ms by a host thread through NVML, and
 * the share of samples in which the clock was held down by power. samples
 * == 0 (every number NAN) where NVML is not available. energy_watts: the
 * series' mean power from NVML's energy counter (NAN where the driver has
 * none); `watts`, the driver's power reading, lags by its ~1 s window. */
typedef struct bench_power {
    int samples;
    double sm_mhz, watts, power_limited;
    double energy_watts;
} bench_power_t;

typedef struct bench_row {
    const char *op;          /* "gemm", ... */
    char variant[64];
    char kernel[96];
    const char *dtype;
    char trans[3];           /* GEMM rows: op(A), op(B) as "NT", "NN", ... ("" otherwise) */
    int64_t lda;             /* GEMM rows run with --lda: A's leading dimension (0 otherwise) */
    int64_t ldb;             /* GEMM rows run with --ldb: B's leading dimension (0 otherwise) */
    int shape_kind;          /* 0: m,n,k   1: n,k,group   2: n   3: m,n,k,group */
    int64_t m, n, k, group;
    unsigned suite;          /* the BENCH_SUITE_* tags of the shape */
    double us, tflops, gbps, pct_of_ceiling;
    const char *baseline;    /* NULL: none ran */
    double baseline_us, speedup;
    int baseline_interleaved; /* the baseline's repetitions alternated with the row's
                                 (--interleave where the op supports it: gemm, w4a16) */
    int valid;
    double max_rel_err;
    bench_row_status_t status;
    double triton_seed_us, triton_hoisted_us; /* dequant rows only (NAN otherwise) */
    double copy_same_us;     /* a D2D copy moving the row's bytes (read + write; the copy rounded
                                up to whole 4 KB), same rotation and timing: dequant, scan and
                                w4a16 decode rows (NAN otherwise) */
    bench_power_t power;     /* while the row's own series ran */
    bench_power_t baseline_power; /* while the baseline's series ran */
    char note[160];          /* why a row is not ok, or how it was taken (table, stderr, JSON) */
} bench_row_t;

/* ------------------------------------------------------------------------ */
/* Environment                                                              */
/* ------------------------------------------------------------------------ */

typedef struct bench_env {
    bench_options_t opt;
    int gpu;                    /* 1: CUDA device 0 is used */
    int device;
    char gpu_name[256];
    int sm;                     /* 90 for sm_90 */
    int64_t l2_bytes;
    int sm_clock_mhz, mem_clock_mhz;
    int mem_bus_bits;           /* the runtime's memory bus width; 0 if unknown */
    long long dram_peak_gbps;   /* cuops_dram_peak_gbps of the two: what the library's rules read */
    char board_uuid[48];        /* GPU-..., as nvidia-smi prints it; "" if unknown */
    int max_clusters[3];        /* clusters of 2, 4, 8 CTAs resident at once at one CTA per SM
                                   (all the shared memory a block may opt in to): the GPC
                                   layout the cluster kernels' rules ask about; -1 unknown */
    int runtime_version;
    cuops_handle_t h;           /* the handle under test */
    cuops_handle_t hc;          /* CPU reference backend */
    cudaStream_t stream;
    cublasHandle_t cublas;      /* default math */
    cublasHandle_t cublas_pedantic; /* fp32 SGEMM without TF32 */
    double copy_gbps;           /* NAN until measured */
    double vendor_gemm_tflops;  /* NAN unless the gemm suite runs */
    double mma_sync_tflops;     /* from cuops-probe's JSON (CUOPS_PROBE_JSON), else NAN */
    double wgmma_tflops;
    bench_row_t *rows;
    int num_rows, cap_rows;
    int failures;               /* invalid or errored rows */
    int unsupported;
    /* timing harness state */
    volatile int *release_flag; /* host-mapped: the blocking kernel waits for it */
    int *release_flag_dev;
    volatile int *blocker_timed_out;
    int *blocker_timed_out_dev;
    cudaEvent_t ev_start[64], ev_stop[64];
    uint64_t fill_counter;      /* fresh random streams per buffer */
    void *power_sampler;        /* bench_power.cu; NULL without NVML */
    double power_limit_w;       /* the board's enforced power limit (NVML); NAN if unknown */
} bench_env_t;

/* A fresh row in env->rows, every number NAN, status OK, valid 0. */
bench_row_t *bench_row_new(bench_env_t *env, const char *op, const char *variant,
                           cuops_dtype_t dtype);
/* Derive speedup/pct, print the row (stdout) and its problems (stderr),
 * count failures. */
void bench_row_done(bench_env_t *env, bench_row_t *row);
void bench_print_header(void);
/* Mark a row not run / not supported / failed with a note. */
void bench_row_fail(bench_row_t *row, bench_row_status_t status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Set status from a cuops call's result (NOT_SUPPORTED vs error); returns 1 if ok. */
int bench_row_status_from(bench_env_t *env, bench_row_t *row, cuops_status_t st,
                          const char *what);

/* Variants to run for an op: "auto" and/or the requested ones. Returns count. */
int bench_variants(bench_env_t *env, const char *op, const char **out, int cap);
/* Whether dtype t is asked for (or, with no --dtype, is among the defaults). */
int bench_dtype_wanted(const bench_env_t *env, cuops_dtype_t t, const cuops_dtype_t *defaults,
                       int num_defaults);
/* Whether a default shape with these suite tags runs. */
int bench_suite_wanted(const bench_env_t *env, unsigned tags);
const char *bench_suite_name(unsigned tags);
/* Options that fill cuops_options_t for a variant name ("auto" -> defaults). */
cuops_options_t bench_cuops_options(const char *variant);

/* ------------------------------------------------------------------------ */
/* Timing harness (bench_timing.cu)                                         */
/* ------------------------------------------------------------------------ */

/* Enqueue one repetition on env->stream using buffer set `set`. Return 0, or
 * a cuops status / -1 with a message in err. */
typedef int (*bench_enqueue_fn)(void *ctx, int set, char *err, size_t err_len);

typedef struct bench_timing {
    int ok;
    double median_us, min_us;
    int reps;
    bench_power_t power;
    char err[256];
} bench_timing_t;

int bench_timing_init(bench_env_t *env);
void bench_timing_fini(bench_env_t *env);
/* Pause for the clocks, warm up, then time reps (one event pair each) with
 * the stream held by a blocking kernel while the batch is enqueued, so that
 * host launch cost never shows up as GPU time. Median of the reps. */
bench_timing_t bench_time(bench_env_t *env, bench_enqueue_fn fn, void *ctx, int num_sets);
/* The same for two functions whose repetitions alternate within every batch
 * (--interleave: a row and its vendor baseline at the same clock and power
 * state); b uses buffer set (i + sets/2) mod sets. */
void bench_time_pair(bench_env_t *env, bench_enqueue_fn fn_a, void *ctx_a, bench_enqueue_fn fn_b,
                     void *ctx_b, int num_sets, bench_timing_t *a, bench_timing_t *b);
/* A row's own series: bench_time, or with --interleave and a baseline
 * function bench_time_pair, the baseline's median and power then written
 * into the row (baseline_us, baseline_power). */
bench_timing_t bench_time_row(bench_env_t *env, bench_row_t *row, bench_enqueue_fn fn, void *ctx,
                              bench_enqueue_fn baseline_fn, void *baseline_ctx, int num_sets);
/* A row's first call, fn on buffer set 0, and the stream synchronised. A
 * refusal or a failed kernel marks the row (UNSUPPORTED for NOT_SUPPORTED,
 * else ERROR), prints it and returns 0: the caller goes on to its next row.
 * Otherwise the row is given the kernel that ran, and 1 returned. */
int bench_row_first_call(bench_env_t *env, bench_row_t *row, bench_enqueue_fn fn, void *ctx);
/* A memory-bound row's numbers from its timing: the median time, its power,
 * `bytes` over the time as GB/s and that as % of the copy ceiling. A failed
 * timing marks the row ERROR with the reason instead, keeping `valid` (the
 * check passed before the timing). Returns whether the timing was good. */
int bench_row_stream_numbers(bench_env_t *env, bench_row_t *row, const bench_timing_t *t,
                             double bytes);
/* Median us of a cudaMemcpyAsync D2D that moves bytes_moved (half read, half
 * written), rotated past L2 like the rows: the copy ceiling at the row's own
 * size, so a memory-bound row can be read against a copy of its bytes as well
 * as against the 1 GiB ceiling (which hides the launch and the ramp). NAN when
 * it cannot run. Memoized on bytes_moved (dtypes and variants share it). */
double bench_copy_same_bytes(bench_env_t *env, double bytes_moved);
/* The cap for the op rows: 32768 sets keep sets of 12 KB and more cold with
 * --interleave (6 KB without) on a 60 MB L2; until P214 it was 512, which
 * left sets under ~370 KB rotating through less than 3x L2 (the quick
 * suite's 7 x 129 x 65 GEMM, 20 KB a set, within 10 MB). */
#define BENCH_MAX_SETS 32768
/* Buffer sets needed so that together they exceed 3x L2 (each set touches
 * set_bytes per repetition). At most max_sets; where that cap leaves the
 * rotation under 3x L2 it says so on stderr (the row may read L2-warm data). */
int bench_rotation_sets(const bench_env_t *env, size_t set_bytes, int max_sets);
/* Whether `bytes` more device memory is available (keeps 10% spare). */
int bench_fits(size_t bytes);
/* v rounded up to a multiple of `to` (buffer strides, copy sizes) */
static inline size_t bench_round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }
double bench_host_seconds(void);

/* Clock and power sampling (bench_power.cu). init loads NVML with dlopen
 * (no link dependency: the bench runs where the driver has no NVML, and then
 * rows carry no samples); begin/end bracket one timed series. */
void bench_power_init(bench_env_t *env);
void bench_power_fini(bench_env_t *env);
void bench_power_begin(bench_env_t *env);
bench_power_t bench_power_end(bench_env_t *env);
/* NAN-filled, samples 0 */
bench_power_t bench_power_none(void);
/* Directory of the running cuops-bench binary (from /proc/self/exe). */
void bench_exe_dir(char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Device buffers (bench_fill.cu)                                           */
/* ------------------------------------------------------------------------ */

/* Uniform [lo, hi) in dtype (floats) or integers in [lo, hi) (ints, u8). */
int bench_fill(bench_env_t *env, void *dev, cuops_dtype_t t, size_t count, double lo,
               double hi);
/* The same with whole numbers for floats too (floor of the uniform value):
 * float sums of them are exact while the partial sums stay below 2^24. */
int bench_fill_integral(bench_env_t *env, void *dev, cuops_dtype_t t, size_t count, double lo,
                        double hi);
/* NaN for floats, 0xA5 bytes for integers. */
int bench_poison(bench_env_t *env, void *dev, cuops_dtype_t t, size_t count);
/* Host copy of device memory (malloc'd; NULL on failure). */
void *bench_to_host(const void *dev, size_t bytes);

/* ------------------------------------------------------------------------ */
/* Op runners                                                               */
/* ------------------------------------------------------------------------ */

void bench_run_gemm(bench_env_t *env);
void bench_run_dequant(bench_env_t *env);
void bench_run_w4a16(bench_env_t *env);
void bench_run_scan(bench_env_t *env, int reduce);
void bench_run_nodevice(bench_env_t *env);

/* cuBLAS on row-major operands: C[m,n] = alpha op(A) op(B) + beta C. */
cublasStatus_t bench_cublas_gemm(cublasHandle_t handle, cuops_op_t trans_a, cuops_op_t trans_b,
                                 int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                                 const void *b, int64_t ldb, void *c, int64_t ldc,
                                 cuops_dtype_t ab_type, cuops_dtype_t c_type);

#endif /* CUOPS_BENCH_H */
