/*
 * bench_main.cu - cuops-bench: validates, then times every op of cuops
 * against the vendor library in the same run, prints a fixed-width table on
 * stdout (progress and mismatches on stderr) and, with --json, writes the
 * run as JSON (bench_json.h).
 *
 *   cuops-bench [gemm|dequant|w4a16|scan|reduce|all]... [--dtype T]... [--shape S]...
 *               [--variant NAME|all]... [--suite square|odd|decode|llm|big]...
 *               [--trans NT] [--reps N] [--quick] [--seed N] [--json FILE]
 *
 * Exit status: 0 when every row that ran gave a valid result (rows the
 * library does not support yet are reported, not failed), 1 otherwise, 2
 * for a bad command line. Without a CUDA device the CPU reference backend
 * runs tiny shapes (bench_nodevice.cu) so the command still works.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_json.h"

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

static const char *const op_names[BENCH_NUM_OPS] = {"gemm", "dequant", "w4a16", "scan",
                                                     "reduce"};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: cuops-bench [gemm|dequant|w4a16|scan|reduce|all]... [options]\n"
        "\n"
        "Validates each op against an independent reference, then times it against the\n"
        "vendor library (cuBLAS, CUB, the Triton seed kernel) in the same run.\n"
        "\n"
        "  --dtype T        f16 bf16 f32 f64 i32 i64 (repeatable, or comma-separated).\n"
        "                   gemm: f16 bf16 f32; dequant/w4a16: f16 bf16 (output /\n"
        "                   activation type); scan/reduce: i32 i64 f32 f64.\n"
        "                   Defaults: gemm f16 bf16 (+ f32 at 1024..8192), dequant f16 bf16,\n"
        "                   w4a16 f16, scan/reduce i32 f32.\n"
        "  --shape S        MxNxK (gemm, w4a16), NxK (dequant), N (scan, reduce; 2^20 ok).\n"
        "                   Repeatable; replaces the default shapes of the ops it fits.\n"
        "  --variant V      a variant name of cuops_variant_names(), 'auto', or 'all'.\n"
        "                   NAME:split_k=N times the variant with options.split_k = N.\n"
        "  --suite S        square odd decode llm big (repeatable): default shapes tagged so.\n"
        "  --trans AB       GEMM operand layouts, e.g. NT (default: A [m,k], B [n,k]).\n"
        "  --lda N          GEMM: A's leading dimension at least N elements (default the\n"
        "                   tight one: k for A [m,k], m for A stored [k,m]).\n"
        "  --ldb N          GEMM: B's leading dimension at least N elements (default k for\n"
        "                   B [n,k], n for B stored [k,n]).\n"
        "  --reps N         timed repetitions (default: ~200 ms worth, at least 20).\n"
        "  --quick          a few small shapes per op, 10 repetitions (smoke test).\n"
        "  --interleave     gemm, w4a16: time each row's repetitions alternating with its\n"
        "                   baseline's (one series), so both run at the same clock and\n"
        "                   power state; the row's baseline_us comes from that series.\n"
        "  --seed N         data seed (default: CUOPS_BENCH_SEED or the clock).\n"
        "  --json FILE      write the run as JSON (schema: tools/bench/bench_json.h).\n"
        "  --help           this text.\n"
        "\n"
        "Table: op variant kernel dtype shape us TFLOP/s GB/s %%ceil baseline base_us speedup\n"
        "valid; %%ceil is against the copy bandwidth (memory-bound rows) or the cuBLAS bf16\n"
        "8192^3 rate (compute-bound GEMM rows), both measured in the same run.\n"
        "Environment: CUOPS_GIT_SHA, CUOPS_TRITON_SCRIPT, CUOPS_BENCH_SEED;\n"
        "CUOPS_BENCH_SAMPLES=1 prints every timed repetition (series order, buffer set): a\n"
        "median that hides two modes shows them. CUOPS_BENCH_SETS=N rotates exactly N buffer\n"
        "sets in memory-bound rows (a study of where the buffers lie; fewer may read L2-warm).\n"
        "CUOPS_BENCH_TIME_INVALID=1 times gemm and w4a16 rows that fail validation too (study\n"
        "builds that skip part of the work); they stay marked INVALID and count as failures.\n"
        "CUOPS_BENCH_SCAN_SHIFT=K (0..63) starts the scan and reduce rows' input and output\n"
        "K elements past a 256-byte boundary (misaligned inputs; cuops and CUB alike);\n"
        "CUOPS_BENCH_SCAN_OUT_SHIFT=K (0..63) sets the output's shift alone (in and out apart).\n");
}

static int parse_dtype(const char *s, cuops_dtype_t *t)
{
    static const struct { const char *name; cuops_dtype_t t; } table[] = {
        {"f16", CUOPS_DTYPE_F16}, {"fp16", CUOPS_DTYPE_F16}, {"half", CUOPS_DTYPE_F16},
        {"bf16", CUOPS_DTYPE_BF16}, {"f32", CUOPS_DTYPE_F32}, {"fp32", CUOPS_DTYPE_F32},
        {"f64", CUOPS_DTYPE_F64}, {"fp64", CUOPS_DTYPE_F64}, {"i32", CUOPS_DTYPE_I32},
        {"i64", CUOPS_DTYPE_I64}};
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(s, table[i].name) == 0) {
            *t = table[i].t;
            return 0;
        }
    return -1;
}

static int parse_shape(const char *s, bench_shape_t *shape)
{
    memset(shape, 0, sizeof(*shape));
    const char *p = s;
    while (1) {
        const char *x = strpbrk(p, "xX");
        const char *end = x ? x : p + strlen(p);
        if (shape->dims == 3) return -1;
        if (bv_parse_dim(p, end, &shape->d[shape->dims])) return -1;
        shape->dims++;
        if (!x) break;
        p = x + 1;
    }
    return 0;
}

static int parse_suite(const char *s, unsigned *mask)
{
    static const struct { const char *name; unsigned bit; } table[] = {
        {"square", BENCH_SUITE_SQUARE}, {"odd", BENCH_SUITE_ODD}, {"decode", BENCH_SUITE_DECODE},
        {"llm", BENCH_SUITE_LLM}, {"big", BENCH_SUITE_BIG}};
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(s, table[i].name) == 0) {
            *mask |= table[i].bit;
            return 0;
        }
    return -1;
}

/* Split a comma-separated argument and feed each piece to `one`. */
static int for_each_piece(const char *arg, int (*one)(const char *, void *), void *ctx)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", arg);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save))
        if (one(tok, ctx)) return -1;
    return 0;
}

static int add_dtype(const char *s, void *ctx)
{
    bench_options_t *o = (bench_options_t *)ctx;
    cuops_dtype_t t;
    if (parse_dtype(s, &t) || o->num_dtypes >= BENCH_MAX_ITEMS) {
        fprintf(stderr, "cuops-bench: unknown dtype '%s'\n", s);
        return -1;
    }
    o->dtypes[o->num_dtypes++] = t;
    return 0;
}

static int add_suite(const char *s, void *ctx)
{
    if (parse_suite(s, (unsigned *)ctx)) {
        fprintf(stderr, "cuops-bench: unknown suite '%s'\n", s);
        return -1;
    }
    return 0;
}

/* 0: run; 1: --help; -1: bad command line. */
static int parse_args(int argc, char **argv, bench_options_t *o)
{
    memset(o, 0, sizeof(*o));
    o->trans_a = CUOPS_OP_N;
    o->trans_b = CUOPS_OP_T;
    int any_op = 0;
    const char *time_invalid_env = getenv("CUOPS_BENCH_TIME_INVALID");
    o->time_invalid = time_invalid_env && atoi(time_invalid_env) != 0;
    const char *samples_env = getenv("CUOPS_BENCH_SAMPLES");
    o->print_samples = samples_env && atoi(samples_env) != 0;
    const char *sets_env = getenv("CUOPS_BENCH_SETS");
    if (sets_env && *sets_env) {
        char *end = NULL;
        long sets = strtol(sets_env, &end, 10);
        if (end == sets_env || *end != '\0' || sets < 1 || sets > 4096) {
            fprintf(stderr, "cuops-bench: CUOPS_BENCH_SETS must be 1..4096\n");
            return -1;
        }
        o->sets = (int)sets;
    }
    o->scan_out_shift = -1;
    static const char *const shift_vars[2] = {"CUOPS_BENCH_SCAN_SHIFT",
                                              "CUOPS_BENCH_SCAN_OUT_SHIFT"};
    for (int v = 0; v < 2; v++) {
        const char *shift_env = getenv(shift_vars[v]);
        if (!shift_env) continue;
        char *end = NULL;
        long shift = strtol(shift_env, &end, 10);
        if (end == shift_env || *end != '\0' || shift < 0 || shift > 63) {
            fprintf(stderr, "cuops-bench: %s must be 0..63 (elements)\n", shift_vars[v]);
            return -1;
        }
        *(v == 0 ? &o->scan_shift : &o->scan_out_shift) = (int)shift;
    }
    const char *seed_env = getenv("CUOPS_BENCH_SEED");
    o->seed = ((uint64_t)time(NULL) * 2654435761ull) ^ (uint64_t)getpid();
    if (seed_env && *seed_env && bv_parse_u64(seed_env, &o->seed)) {
        fprintf(stderr, "cuops-bench: CUOPS_BENCH_SEED must be an unsigned integer\n");
        return -1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = (i + 1 < argc) ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                             \
    do {                                                                         \
        if (!val) {                                                              \
            fprintf(stderr, "cuops-bench: %s needs a value\n", a);               \
            return -1;                                                           \
        }                                                                        \
        i++;                                                                     \
    } while (0)
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 1;
        if (strcmp(a, "all") == 0) {
            for (int op = 0; op < BENCH_NUM_OPS; op++) o->run_op[op] = 1;
            any_op = 1;
            continue;
        }
        int matched = 0;
        for (int op = 0; op < BENCH_NUM_OPS; op++)
            if (strcmp(a, op_names[op]) == 0) {
                o->run_op[op] = 1;
                any_op = matched = 1;
            }
        if (matched) continue;
        if (strcmp(a, "--dtype") == 0) {
            NEED_VALUE();
            if (for_each_piece(val, add_dtype, o)) return -1;
        } else if (strcmp(a, "--shape") == 0) {
            NEED_VALUE();
            if (o->num_shapes >= BENCH_MAX_ITEMS || parse_shape(val, &o->shapes[o->num_shapes])) {
                fprintf(stderr, "cuops-bench: bad shape '%s' (MxNxK, NxK or N)\n", val);
                return -1;
            }
            o->num_shapes++;
        } else if (strcmp(a, "--variant") == 0) {
            NEED_VALUE();
            if (strcmp(val, "all") == 0) {
                o->all_variants = 1;
            } else if (o->num_variants < BENCH_MAX_ITEMS) {
                o->variants[o->num_variants++] = val;
            } else {
                fprintf(stderr, "cuops-bench: at most %d --variant arguments\n", BENCH_MAX_ITEMS);
                return -1;
            }
        } else if (strcmp(a, "--suite") == 0) {
            NEED_VALUE();
            if (for_each_piece(val, add_suite, &o->suites)) return -1;
        } else if (strcmp(a, "--trans") == 0) {
            NEED_VALUE();
            if (strlen(val) != 2 || !strchr("NnTt", val[0]) || !strchr("NnTt", val[1])) {
                fprintf(stderr, "cuops-bench: --trans takes two letters of N/T, e.g. NT\n");
                return -1;
            }
            o->trans_a = (val[0] == 'T' || val[0] == 't') ? CUOPS_OP_T : CUOPS_OP_N;
            o->trans_b = (val[1] == 'T' || val[1] == 't') ? CUOPS_OP_T : CUOPS_OP_N;
        } else if (strcmp(a, "--lda") == 0 || strcmp(a, "--ldb") == 0) {
            NEED_VALUE();
            long long v = 0;
            if (bv_parse_ll(val, 1, 1ll << 31, &v)) {
                fprintf(stderr, "cuops-bench: %s must be 1..2^31\n", a);
                return -1;
            }
            *(strcmp(a, "--lda") == 0 ? &o->lda : &o->ldb) = v;
        } else if (strcmp(a, "--reps") == 0) {
            NEED_VALUE();
            long long v = 0;
            if (bv_parse_ll(val, 1, 1000000, &v)) {
                fprintf(stderr, "cuops-bench: --reps must be 1..1000000\n");
                return -1;
            }
            o->reps = (int)v;
        } else if (strcmp(a, "--seed") == 0) {
            NEED_VALUE();
            if (bv_parse_u64(val, &o->seed)) {
                fprintf(stderr, "cuops-bench: --seed must be an unsigned integer\n");
                return -1;
            }
        } else if (strcmp(a, "--json") == 0) {
            NEED_VALUE();
            o->json_path = val;
        } else if (strcmp(a, "--quick") == 0) {
            o->quick = 1;
        } else if (strcmp(a, "--interleave") == 0) {
            o->interleave = 1;
        } else {
            fprintf(stderr, "cuops-bench: unknown argument '%s' (see --help)\n", a);
            return -1;
        }
#undef NEED_VALUE
    }
    if (!any_op)
        for (int op = 0; op < BENCH_NUM_OPS; op++) o->run_op[op] = 1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Shared helpers of the op runners                                         */
/* ------------------------------------------------------------------------ */

int bench_dtype_wanted(const bench_env_t *env, cuops_dtype_t t, const cuops_dtype_t *defaults,
                       int num_defaults)
{
    const cuops_dtype_t *list = env->opt.num_dtypes ? env->opt.dtypes : defaults;
    int count = env->opt.num_dtypes ? env->opt.num_dtypes : num_defaults;
    for (int i = 0; i < count; i++)
        if (list[i] == t) return 1;
    return 0;
}

int bench_suite_wanted(const bench_env_t *env, unsigned tags)
{
    if (env->opt.quick) return (tags & BENCH_SUITE_QUICK) != 0;
    if (tags == BENCH_SUITE_QUICK) return 0;
    return env->opt.suites == 0 || (tags & env->opt.suites) != 0;
}

const char *bench_suite_name(unsigned tags)
{
    if (tags & BENCH_SUITE_DECODE) return "decode";
    if (tags & BENCH_SUITE_SQUARE) return "square";
    if (tags & BENCH_SUITE_ODD) return "odd";
    if (tags & BENCH_SUITE_LLM) return "llm";
    if (tags & BENCH_SUITE_BIG) return "big";
    if (tags & BENCH_SUITE_QUICK) return "quick";
    return "custom";
}

cuops_options_t bench_cuops_options(const char *variant)
{
    cuops_options_t o;
    memset(&o, 0, sizeof(o));
    char name[96];
    if (!variant || bv_parse_variant_spec(variant, name, sizeof name, &o.split_k) != 0 ||
        strcmp(name, "auto") == 0)
        return o;
    /* a plain name is the caller's string (the command line or the
     * library's name table, both alive for the process) */
    if (strchr(variant, ':') == NULL) {
        o.variant = variant;
        return o;
    }
    /* NAME:options: the name is kept here for the life of the process. At
     * most BENCH_MAX_ITEMS specs come from the command line, so the table
     * never fills. */
    static char names[BENCH_MAX_ITEMS][96];
    static int num_names = 0;
    for (int i = 0; i < num_names && !o.variant; i++)
        if (strcmp(names[i], name) == 0) o.variant = names[i];
    if (!o.variant && num_names < BENCH_MAX_ITEMS) {
        snprintf(names[num_names], sizeof names[0], "%s", name);
        o.variant = names[num_names++];
    }
    return o;
}

/* Once per (op, name): a requested variant the op does not have. */
static void warn_unknown_variant(const char *op, const char *name, const char *const *names,
                                 int count)
{
    static char seen[BENCH_MAX_ITEMS][96];
    static int num_seen = 0;
    char key[96];
    snprintf(key, sizeof(key), "%s/%s", op, name);
    for (int i = 0; i < num_seen; i++)
        if (strcmp(seen[i], key) == 0) return;
    if (num_seen < BENCH_MAX_ITEMS) snprintf(seen[num_seen++], sizeof(seen[0]), "%s", key);
    fprintf(stderr, "note: '%s' is not a %s variant; %s variants:", name, op, op);
    for (int i = 0; i < count; i++) fprintf(stderr, " %s", names[i]);
    fprintf(stderr, "\n");
}

int bench_variants(bench_env_t *env, const char *op, const char **out, int cap)
{
    const char *const *names = NULL;
    int count = 0;
    if (cuops_variant_names(op, &names, &count) != CUOPS_STATUS_SUCCESS || !names) count = 0;
    int n = 0;
    int want_auto = env->opt.all_variants || env->opt.num_variants == 0;
    for (int i = 0; i < env->opt.num_variants; i++)
        if (strcmp(env->opt.variants[i], "auto") == 0) want_auto = 1;
    if (want_auto && n < cap) out[n++] = "auto";
    if (env->opt.all_variants) {
        for (int i = 0; i < count && n < cap; i++) {
            if (strcmp(names[i], "auto") == 0) continue;
            out[n++] = names[i];
        }
        return n;
    }
    for (int i = 0; i < env->opt.num_variants && n < cap; i++) {
        const char *v = env->opt.variants[i];
        if (strcmp(v, "auto") == 0) continue;
        /* "NAME:split_k=N": the name must be the op's, the option valid */
        char name[96];
        int split_k = 0;
        const int spec_ok = bv_parse_variant_spec(v, name, sizeof name, &split_k) == 0;
        int known = 0, dup = 0;
        for (int j = 0; j < count && spec_ok; j++)
            if (strcmp(names[j], name) == 0) known = 1;
        for (int j = 0; j < n; j++)
            if (strcmp(out[j], v) == 0) dup = 1;
        if (known && !dup) out[n++] = v;
        if (!known) warn_unknown_variant(op, v, names, count);
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Rows and the table                                                       */
/* ------------------------------------------------------------------------ */

bench_row_t *bench_row_new(bench_env_t *env, const char *op, const char *variant,
                           cuops_dtype_t dtype)
{
    if (env->num_rows == env->cap_rows) {
        int cap = env->cap_rows ? 2 * env->cap_rows : 128;
        bench_row_t *rows = (bench_row_t *)realloc(env->rows, sizeof(bench_row_t) * (size_t)cap);
        if (!rows) {
            fprintf(stderr, "cuops-bench: out of host memory\n");
            exit(1);
        }
        env->rows = rows;
        env->cap_rows = cap;
    }
    bench_row_t *r = &env->rows[env->num_rows++];
    memset(r, 0, sizeof(*r));
    r->op = op;
    snprintf(r->variant, sizeof(r->variant), "%s", variant);
    /* every GEMM row of a run has the run's operand layouts (--trans) */
    if (strcmp(op, "gemm") == 0) {
        r->trans[0] = env->opt.trans_a == CUOPS_OP_T ? 'T' : 'N';
        r->trans[1] = env->opt.trans_b == CUOPS_OP_T ? 'T' : 'N';
    }
    r->dtype = bv_dtype_name(dtype);
    r->us = r->tflops = r->gbps = r->pct_of_ceiling = NAN;
    r->baseline_us = r->speedup = r->max_rel_err = NAN;
    r->triton_seed_us = r->triton_hoisted_us = NAN;
    r->copy_same_us = NAN;
    r->power = r->baseline_power = bench_power_none();
    r->status = BENCH_ROW_OK;
    return r;
}

void bench_row_fail(bench_row_t *row, bench_row_status_t status, const char *fmt, ...)
{
    row->status = status;
    row->valid = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row->note, sizeof(row->note), fmt, ap);
    va_end(ap);
}

int bench_row_first_call(bench_env_t *env, bench_row_t *row, bench_enqueue_fn fn, void *ctx)
{
    char err[256] = "";
    const int rc = fn(ctx, 0, err, sizeof(err));
    const cudaError_t ce = rc ? cudaSuccess : cudaStreamSynchronize(env->stream);
    if (rc || ce != cudaSuccess) {
        if (!rc) snprintf(err, sizeof(err), "kernel failed: %s", cudaGetErrorString(ce));
        bench_row_fail(row, rc == CUOPS_STATUS_NOT_SUPPORTED ? BENCH_ROW_UNSUPPORTED : BENCH_ROW_ERROR,
                       "%s", err);
        bench_row_done(env, row);
        return 0;
    }
    snprintf(row->kernel, sizeof(row->kernel), "%s", cuops_last_kernel(env->h));
    return 1;
}

int bench_row_stream_numbers(bench_env_t *env, bench_row_t *row, const bench_timing_t *t,
                             double bytes)
{
    if (!t->ok) {
        const int valid = row->valid;
        bench_row_fail(row, BENCH_ROW_ERROR, "timing: %s", t->err);
        row->valid = valid;
        return 0;
    }
    row->us = t->median_us;
    row->power = t->power;
    row->gbps = bytes / (t->median_us * 1e3);
    row->pct_of_ceiling = 100.0 * row->gbps / env->copy_gbps;
    return 1;
}

int bench_row_status_from(bench_env_t *env, bench_row_t *row, cuops_status_t st,
                          const char *what)
{
    if (st == CUOPS_STATUS_SUCCESS) return 1;
    bench_row_fail(row, st == CUOPS_STATUS_NOT_SUPPORTED ? BENCH_ROW_UNSUPPORTED : BENCH_ROW_ERROR,
                   "%s: %s: %s", what, cuops_status_string(st), cuops_last_error(env->h));
    return 0;
}

static void format_shape(const bench_row_t *r, char *buf, size_t len)
{
    switch (r->shape_kind) {
    case 0: snprintf(buf, len, "%lldx%lldx%lld", (long long)r->m, (long long)r->n, (long long)r->k); break;
    case 1: snprintf(buf, len, "%lldx%lld/g%lld", (long long)r->n, (long long)r->k, (long long)r->group); break;
    case 2: snprintf(buf, len, "%lld", (long long)r->n); break;
    default:
        snprintf(buf, len, "%lldx%lldx%lld/g%lld", (long long)r->m, (long long)r->n,
                 (long long)r->k, (long long)r->group);
        break;
    }
}

/* Fixed decimals for the usual magnitudes, three significant digits below
 * 1 (CPU-backend rows, tiny shapes) so nothing prints as a bare 0. */
static void format_num(char *buf, size_t len, const char *fmt, double v)
{
    if (!isfinite(v)) snprintf(buf, len, "-");
    else if (v != 0.0 && fabs(v) < 1.0) snprintf(buf, len, "%.3g", v);
    else snprintf(buf, len, fmt, v);
}

#define TABLE_FMT "%-7s %-14s %-28s %-5s %-20s %10s %8s %8s %6s %-12s %10s %7s %s\n"

void bench_print_header(void)
{
    printf(TABLE_FMT, "op", "variant", "kernel", "dtype", "shape", "us", "TFLOP/s", "GB/s",
           "%ceil", "baseline", "base_us", "speedup", "valid");
    fflush(stdout);
}

static const char *status_word(const bench_row_t *r)
{
    switch (r->status) {
    case BENCH_ROW_OK: return r->valid ? "yes" : "NO";
    case BENCH_ROW_INVALID: return "NO";
    case BENCH_ROW_UNSUPPORTED: return "not supported";
    case BENCH_ROW_ERROR: return "error";
    case BENCH_ROW_SKIPPED: return "skipped";
    }
    return "?";
}

void bench_row_done(bench_env_t *env, bench_row_t *r)
{
    if (isfinite(r->us) && isfinite(r->baseline_us) && r->us > 0.0)
        r->speedup = r->baseline_us / r->us;
    if (r->status == BENCH_ROW_OK && !r->valid) r->status = BENCH_ROW_INVALID;
    if (r->status == BENCH_ROW_INVALID || r->status == BENCH_ROW_ERROR) env->failures++;
    if (r->status == BENCH_ROW_UNSUPPORTED) env->unsupported++;

    char shape[48], us[24], tf[24], gb[24], pct[24], bus[24], sp[24];
    format_shape(r, shape, sizeof(shape));
    format_num(us, sizeof(us), "%.2f", r->us);
    format_num(tf, sizeof(tf), "%.1f", r->tflops);
    format_num(gb, sizeof(gb), "%.0f", r->gbps);
    format_num(pct, sizeof(pct), "%.1f", r->pct_of_ceiling);
    format_num(bus, sizeof(bus), "%.2f", r->baseline_us);
    format_num(sp, sizeof(sp), "%.3f", r->speedup);
    /* after the last column: the clock and power of the series (NVML; the
     * energy counter's mean where the driver has one, else the lagging power
     * reading), the row's and the baseline's, and how much of it power held
     * down */
    char valid[160];
    int len = snprintf(valid, sizeof(valid), "%s", status_word(r));
    if (r->power.samples > 0 && len > 0 && len < (int)sizeof(valid))
        len += snprintf(valid + len, sizeof(valid) - (size_t)len, "  %.0f MHz %.0f W %.0f%% pwr",
                        r->power.sm_mhz,
                        isfinite(r->power.energy_watts) ? r->power.energy_watts : r->power.watts,
                        100.0 * r->power.power_limited);
    if (r->baseline_power.samples > 0 && len > 0 && len < (int)sizeof(valid))
        snprintf(valid + len, sizeof(valid) - (size_t)len, " | base %.0f MHz %.0f W",
                 r->baseline_power.sm_mhz,
                 isfinite(r->baseline_power.energy_watts) ? r->baseline_power.energy_watts
                                                          : r->baseline_power.watts);
    /* the baseline is named only where it ran (as in the JSON) */
    printf(TABLE_FMT, r->op, r->variant, r->kernel[0] ? r->kernel : "-", r->dtype, shape, us, tf,
           gb, pct, r->baseline && isfinite(r->baseline_us) ? r->baseline : "-", bus, sp, valid);
    fflush(stdout);
    if (r->status != BENCH_ROW_OK)
        fprintf(stderr, "  %s %s %s %s: %s: %s\n", r->op, r->variant, r->dtype, shape,
                status_word(r), r->note);
    else if (r->note[0])
        fprintf(stderr, "  %s %s %s %s: note: %s\n", r->op, r->variant, r->dtype, shape, r->note);
}

/* Whether two rows were timed against the same baseline (NULL: none). */
static int same_baseline(const bench_row_t *a, const bench_row_t *b)
{
    return bv_same_name(a->baseline, b->baseline);
}

/* Geometric-mean speed-up per (op, variant, baseline), then per dtype
 * within it where its rows mix dtypes (bench_validate.h decides which rows
 * open a line and which count), and per (op, suite, baseline) of the
 * library's own choice: f32 GEMM rows, timed against cublas_sgemm, are not
 * averaged in with the f16/bf16 rows against cublas. */
static void print_geomeans(const bench_env_t *env)
{
    const int nrows = env->num_rows;
    double *v = (double *)malloc(sizeof(double) * (size_t)(nrows + 1));
    bv_speedup_row_t *g = (bv_speedup_row_t *)malloc(sizeof(bv_speedup_row_t) * (size_t)(nrows + 1));
    if (!v || !g) {
        free(v);
        free(g);
        return;
    }
    for (int i = 0; i < nrows; i++) {
        const bench_row_t *r = &env->rows[i];
        g[i].op = r->op;
        g[i].variant = r->variant;
        g[i].baseline = r->baseline;
        g[i].dtype = r->dtype;
        g[i].speedup = r->status == BENCH_ROW_OK && r->valid ? r->speedup : NAN;
    }
    printf("\n");
    for (int i = 0; i < nrows; i++) {
        if (!g[i].baseline || !bv_opens_geomean_line(g, nrows, i, 0)) continue;
        int used = 0;
        double gm = bv_group_geomean(g, nrows, i, NULL, v, &used);
        if (used)
            printf("geomean speedup %-7s %-14s vs %-12s %7.3fx over %d row(s)\n", g[i].op,
                   g[i].variant, g[i].baseline, gm, used);
        for (int d = i; d < nrows; d++) {
            if (!bv_same_geomean_group(&g[d], &g[i]) || !bv_opens_geomean_line(g, nrows, d, 1))
                continue;
            gm = bv_group_geomean(g, nrows, d, g[d].dtype, v, &used);
            if (used)
                printf("geomean speedup %-7s %-14s vs %-12s %7.3fx over %d row(s), %s only\n",
                       g[i].op, g[i].variant, g[i].baseline, gm, used, g[d].dtype);
        }
    }
    static const unsigned suites[] = {BENCH_SUITE_SQUARE, BENCH_SUITE_ODD, BENCH_SUITE_DECODE,
                                      BENCH_SUITE_LLM, BENCH_SUITE_BIG};
    static const char *const suite_names[] = {"square", "odd", "decode", "llm", "big"};
    for (int op = 0; op < BENCH_NUM_OPS; op++)
        for (int s = 0; s < 5; s++)
            for (int i = 0; i < env->num_rows; i++) {
                /* one line per baseline among the suite's auto rows */
                const bench_row_t *ri = &env->rows[i];
                if (strcmp(ri->op, op_names[op]) || strcmp(ri->variant, "auto") ||
                    !(ri->suite & suites[s]) || !ri->baseline)
                    continue;
                int first = 1;
                for (int j = 0; j < i && first; j++) {
                    const bench_row_t *r = &env->rows[j];
                    if (!strcmp(r->op, op_names[op]) && !strcmp(r->variant, "auto") &&
                        (r->suite & suites[s]) && same_baseline(r, ri))
                        first = 0;
                }
                if (!first) continue;
                int n = 0;
                for (int j = i; j < env->num_rows; j++) {
                    const bench_row_t *r = &env->rows[j];
                    if (strcmp(r->op, op_names[op]) || strcmp(r->variant, "auto")) continue;
                    if (!(r->suite & suites[s]) || !same_baseline(r, ri)) continue;
                    if (r->status == BENCH_ROW_OK && r->valid) v[n++] = r->speedup;
                }
                int used = 0;
                const double gm = bv_geomean(v, n, &used);
                if (used)
                    printf("geomean speedup %-7s auto suite %-8s vs %-12s %7.3fx over %d row(s)\n",
                           op_names[op], suite_names[s], ri->baseline, gm, used);
            }
    free(v);
    free(g);
}

/* ------------------------------------------------------------------------ */
/* Ceilings                                                                 */
/* ------------------------------------------------------------------------ */

/* A D2D copy of bytes; repetition i copies set i's buffers (set * stride
 * into src and dst: stride 0 with one set for the ceiling). */
typedef struct copy_ctx {
    uint8_t *src, *dst;
    size_t bytes, stride;
    cudaStream_t stream;
} copy_ctx_t;

static int enqueue_copy(void *p, int set, char *err, size_t len)
{
    copy_ctx_t *c = (copy_ctx_t *)p;
    cudaError_t e = cudaMemcpyAsync(c->dst + (size_t)set * c->stride, c->src + (size_t)set * c->stride,
                                    c->bytes, cudaMemcpyDeviceToDevice, c->stream);
    if (e != cudaSuccess) {
        snprintf(err, len, "cudaMemcpyAsync: %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

double bench_copy_same_bytes(bench_env_t *env, double bytes_moved)
{
    static double last_bytes = -1.0, last_us = NAN;
    if (!env->gpu || !(bytes_moved >= 2.0)) return NAN;
    if (bytes_moved == last_bytes) return last_us;
    copy_ctx_t c;
    /* The D2D copy is rounded up to whole 4 KB (at most 4095 bytes more, and
     * its time is compared as is): cudaMemcpyAsync of ~15 MB whose size was
     * 2048 bytes past a 4 KB multiple took 13.7-14.6 us on the H200 where the
     * rounded size took 11.7-11.8 (run P205; placing the sets at a 4 KB
     * stride alone changed nothing), which read the rows' "% of the copy of
     * the same bytes" ~20 % high. */
    c.bytes = bench_round_up((size_t)(bytes_moved / 2.0), 4096);
    c.stride = c.bytes;
    c.stream = env->stream;
    const int sets = bench_rotation_sets(env, 2 * c.stride, BENCH_MAX_SETS);
    c.src = c.dst = NULL;
    double us = NAN;
    if (bench_fits(2 * (size_t)sets * c.stride) &&
        cudaMalloc((void **)&c.src, (size_t)sets * c.stride) == cudaSuccess &&
        cudaMalloc((void **)&c.dst, (size_t)sets * c.stride) == cudaSuccess) {
        bench_fill(env, c.src, CUOPS_DTYPE_F32, (size_t)sets * c.stride / 4, -1.0, 1.0);
        bench_timing_t t = bench_time(env, enqueue_copy, &c, sets);
        if (t.ok) us = t.median_us;
    }
    cudaFree(c.src);
    cudaFree(c.dst);
    (void)cudaGetLastError();
    if (isfinite(us))
        fprintf(stderr, "  copy of the same %.1f MB (D2D of %.1f MB, %d set%s): %.2f us, %.0f GB/s\n",
                bytes_moved / 1e6, (double)c.bytes / 1e6, sets, sets > 1 ? "s" : "", us,
                bytes_moved / (us * 1e3));
    last_bytes = bytes_moved;
    last_us = us;
    return us;
}

static void measure_copy(bench_env_t *env)
{
    size_t bytes = (size_t)1 << 30;
    while (bytes >= ((size_t)1 << 28) && !bench_fits(2 * bytes)) bytes >>= 1;
    copy_ctx_t c;
    c.bytes = bytes;
    c.stride = 0;
    c.stream = env->stream;
    c.src = c.dst = NULL;
    if (cudaMalloc((void **)&c.src, bytes) != cudaSuccess || cudaMalloc((void **)&c.dst, bytes) != cudaSuccess) {
        fprintf(stderr, "copy ceiling: cannot allocate 2 x %zu bytes\n", bytes);
        cudaFree(c.src);
        (void)cudaGetLastError();
        return;
    }
    bench_fill(env, c.src, CUOPS_DTYPE_F32, bytes / 4, -1.0, 1.0);
    bench_timing_t t = bench_time(env, enqueue_copy, &c, 1);
    if (t.ok) {
        env->copy_gbps = 2.0 * (double)bytes / (t.median_us * 1e3);
        fprintf(stderr, "ceiling: copy %.1f GB/s (cudaMemcpyAsync D2D of %zu MiB, read + write, "
                        "median of %d)\n", env->copy_gbps, bytes >> 20, t.reps);
    } else {
        fprintf(stderr, "copy ceiling failed: %s\n", t.err);
    }
    cudaFree(c.src);
    cudaFree(c.dst);
}

typedef struct vendor_gemm_ctx {
    bench_env_t *env;
    void *a, *b, *c;
    int64_t size;
} vendor_gemm_ctx_t;

static int enqueue_vendor_gemm(void *p, int set, char *err, size_t len)
{
    (void)set;
    vendor_gemm_ctx_t *v = (vendor_gemm_ctx_t *)p;
    cublasStatus_t st = bench_cublas_gemm(v->env->cublas, CUOPS_OP_N, CUOPS_OP_T, v->size, v->size,
                                          v->size, v->a, v->size, v->b, v->size, v->c, v->size,
                                          CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, len, "cublasGemmEx: %s", cublasGetStatusString(st));
        return -1;
    }
    return 0;
}

static void measure_vendor_gemm(bench_env_t *env)
{
    vendor_gemm_ctx_t v;
    v.env = env;
    v.size = 8192;
    size_t bytes = (size_t)v.size * (size_t)v.size * 2;
    v.a = v.b = v.c = NULL;
    if (!bench_fits(3 * bytes) || cudaMalloc(&v.a, bytes) != cudaSuccess ||
        cudaMalloc(&v.b, bytes) != cudaSuccess || cudaMalloc(&v.c, bytes) != cudaSuccess) {
        fprintf(stderr, "vendor GEMM ceiling: not enough device memory\n");
        cudaFree(v.a); cudaFree(v.b);
        (void)cudaGetLastError();
        return;
    }
    bench_fill(env, v.a, CUOPS_DTYPE_BF16, bytes / 2, -1.0, 1.0);
    bench_fill(env, v.b, CUOPS_DTYPE_BF16, bytes / 2, -1.0, 1.0);
    bench_timing_t t = bench_time(env, enqueue_vendor_gemm, &v, 1);
    if (t.ok) {
        env->vendor_gemm_tflops = 2.0 * 8192.0 * 8192.0 * 8192.0 / (t.median_us * 1e6);
        fprintf(stderr, "ceiling: cuBLAS bf16 8192^3 (C = A B^T) %.1f TFLOP/s (median of %d)\n",
                env->vendor_gemm_tflops, t.reps);
    } else {
        fprintf(stderr, "vendor GEMM ceiling failed: %s\n", t.err);
    }
    cudaFree(v.a);
    cudaFree(v.b);
    cudaFree(v.c);
}

/* ------------------------------------------------------------------------ */
/* Run metadata                                                             */
/* ------------------------------------------------------------------------ */

void bench_exe_dir(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0) {
        snprintf(buf, len, ".");
        return;
    }
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash) *slash = '\0';
}

static void git_sha(char *buf, size_t len)
{
    const char *env_sha = getenv("CUOPS_GIT_SHA");
    if (env_sha && *env_sha) {
        snprintf(buf, len, "%s", env_sha);
        return;
    }
    snprintf(buf, len, "unknown");
    char dir[PATH_MAX], cmd[PATH_MAX + 64];
    bench_exe_dir(dir, sizeof(dir));
    if (strchr(dir, '\'')) return;
    snprintf(cmd, sizeof(cmd), "git -C '%s/../..' rev-parse --short HEAD 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    if (!p) return;
    char line[64] = {0};
    if (fgets(line, sizeof(line), p)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0]) snprintf(buf, len, "%s", line);
    }
    pclose(p);
}

static void utc_date(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ------------------------------------------------------------------------ */
/* main                                                                     */
/* ------------------------------------------------------------------------ */

/* A kernel of no work, for the cluster residency query in setup_gpu. */
__global__ void bench_cluster_probe_kernel(int *p)
{
    extern __shared__ int smem[];
    if (p) p[threadIdx.x] = smem[threadIdx.x];
}

/* Clusters of `size` CTAs (128 threads, smem bytes of dynamic shared memory)
 * that fit on the device at once; -1 where the runtime cannot say. */
static int cluster_residency(int size, size_t smem)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = (unsigned)size;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)size * 64u);
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = smem;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int clusters = -1;
    if (cudaOccupancyMaxActiveClusters(&clusters, (void *)bench_cluster_probe_kernel, &cfg) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return clusters;
}

static int setup_gpu(bench_env_t *env)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        return 0;
    }
    cuops_status_t st = cuops_create(&env->h, 0);
    if (st == CUOPS_STATUS_NO_DEVICE) return 0;
    if (st != CUOPS_STATUS_SUCCESS) {
        fprintf(stderr, "cuops_create(0): %s: %s\n", cuops_status_string(st), cuops_create_error());
        return -1;
    }
    env->device = 0;
    cudaSetDevice(0);
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return -1;
    snprintf(env->gpu_name, sizeof(env->gpu_name), "%s", prop.name);
    env->sm = prop.major * 10 + prop.minor;
    env->l2_bytes = prop.l2CacheSize;
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) == cudaSuccess)
        env->sm_clock_mhz = khz / 1000;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess)
        env->mem_clock_mhz = khz / 1000;
    else
        khz = 0;
    /* what tells two boards of one name apart: the memory bus the runtime
     * reports (a board with memory channels disabled reports fewer bits), the
     * board's UUID, and how many clusters fit at once (the GPC layout) */
    int bus_bits = 0;
    if (cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0) != cudaSuccess)
        bus_bits = 0;
    env->mem_bus_bits = bus_bits;
    env->dram_peak_gbps = cuops_dram_peak_gbps(khz, bus_bits);
    bv_format_uuid((const unsigned char *)prop.uuid.bytes, env->board_uuid);
    const int sizes[3] = {2, 4, 8};
    for (int i = 0; i < 3; i++) env->max_clusters[i] = -1;
    if (prop.major >= 9 &&
        cudaFuncSetAttribute(bench_cluster_probe_kernel,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)prop.sharedMemPerBlockOptin) == cudaSuccess)
        for (int i = 0; i < 3; i++)
            env->max_clusters[i] = cluster_residency(sizes[i], prop.sharedMemPerBlockOptin);
    (void)cudaGetLastError();
    if (cudaStreamCreateWithFlags(&env->stream, cudaStreamNonBlocking) != cudaSuccess) return -1;
    if (cuops_set_stream(env->h, (void *)env->stream) != CUOPS_STATUS_SUCCESS) return -1;
    if (cublasCreate(&env->cublas) != CUBLAS_STATUS_SUCCESS) return -1;
    if (cublasCreate(&env->cublas_pedantic) != CUBLAS_STATUS_SUCCESS) return -1;
    cublasSetStream(env->cublas, env->stream);
    cublasSetStream(env->cublas_pedantic, env->stream);
    cublasSetMathMode(env->cublas_pedantic, CUBLAS_PEDANTIC_MATH);
    if (bench_timing_init(env)) return -1;
    bench_power_init(env);
    env->gpu = 1;
    return 1;
}

int main(int argc, char **argv)
{
    static bench_env_t env; /* large (events, options): not on the stack */
    int pr = parse_args(argc, argv, &env.opt);
    if (pr == 1) {
        usage(stdout);
        return 0;
    }
    if (pr < 0) {
        usage(stderr);
        return 2;
    }
    env.copy_gbps = NAN;
    env.power_limit_w = NAN;
    env.vendor_gemm_tflops = NAN;
    /* tensor-core ceilings measured by cuops-probe on this GPU, if given */
    bv_probe_ceilings(getenv("CUOPS_PROBE_JSON"), &env.mma_sync_tflops, &env.wgmma_tflops);
    cudaRuntimeGetVersion(&env.runtime_version);
    fprintf(stderr, "seed: CUOPS_BENCH_SEED=%llu\n", (unsigned long long)env.opt.seed);

    if (cuops_create(&env.hc, CUOPS_DEVICE_CPU) != CUOPS_STATUS_SUCCESS) {
        fprintf(stderr, "cuops_create(CPU): %s\n", cuops_create_error());
        return 1;
    }
    int gpu = setup_gpu(&env);
    if (gpu < 0) {
        fprintf(stderr, "cuops-bench: GPU setup failed: %s\n",
                cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    if (gpu == 0) {
        printf("no CUDA device: running the CPU reference backend on small shapes "
               "(no vendor baseline)\n");
        /* the CPU rows have fixed shapes and one variant: say which options
         * of the command line they do not follow */
        const bench_options_t *o = &env.opt;
        if (o->num_shapes || o->num_variants || o->all_variants || o->suites || o->lda || o->ldb ||
            o->interleave || o->reps)
            fprintf(stderr, "cuops-bench: without a CUDA device --shape, --variant, --suite, "
                            "--lda, --ldb, --interleave and --reps are ignored (the CPU reference runs "
                            "its fixed small shapes, median of 3 calls)\n");
        fflush(stdout);
        env.h = env.hc;
        bench_run_nodevice(&env);
    } else {
        fprintf(stderr, "device: %s (sm_%d, %d MHz SM / %d MHz memory peak, L2 %lld MiB), "
                        "CUDA runtime %d\n", env.gpu_name, env.sm, env.sm_clock_mhz,
                env.mem_clock_mhz, (long long)(env.l2_bytes >> 20), env.runtime_version);
        if (isfinite(env.power_limit_w))
            fprintf(stderr, "board power limit: %.0f W (NVML, enforced)\n", env.power_limit_w);
        fprintf(stderr, "board %s: memory %d MHz x %d bits = %lld GB/s peak; clusters of 2 / 4 / 8 "
                        "at one CTA per SM: %d / %d / %d\n",
                env.board_uuid, env.mem_clock_mhz, env.mem_bus_bits, env.dram_peak_gbps,
                env.max_clusters[0], env.max_clusters[1], env.max_clusters[2]);
        measure_copy(&env);
        /* the compute ceiling of GEMM rows and of W4A16 prefill rows */
        if (env.opt.run_op[BENCH_GEMM] || env.opt.run_op[BENCH_W4A16]) measure_vendor_gemm(&env);
        bench_print_header();
        if (env.opt.run_op[BENCH_GEMM]) bench_run_gemm(&env);
        if (env.opt.run_op[BENCH_DEQUANT]) bench_run_dequant(&env);
        if (env.opt.run_op[BENCH_W4A16]) bench_run_w4a16(&env);
        if (env.opt.run_op[BENCH_SCAN]) bench_run_scan(&env, 0);
        if (env.opt.run_op[BENCH_REDUCE]) bench_run_scan(&env, 1);
    }

    print_geomeans(&env);
    printf("%d row(s): %d invalid or failed, %d not supported\n", env.num_rows, env.failures,
           env.unsupported);

    int rc = env.failures ? 1 : 0;
    if (env.num_rows == 0) {
        /* e.g. `reduce --dtype f16`: a command line that selects nothing is a
         * usage error, not a clean run */
        fprintf(stderr, "cuops-bench: no row to run: the ops, dtypes, shapes and suites asked "
                        "for select none (dtypes: gemm f16 bf16 f32; dequant, w4a16 f16 bf16; "
                        "scan, reduce i32 i64 f32 f64)\n");
        rc = 2;
    }
    if (env.opt.json_path) {
        char sha[64], date[32];
        git_sha(sha, sizeof(sha));
        utc_date(date, sizeof(date));
        if (bench_write_json(&env, env.opt.json_path, sha, date)) {
            fprintf(stderr, "cuops-bench: cannot write %s\n", env.opt.json_path);
            rc = 1;
        } else {
            fprintf(stderr, "wrote %s\n", env.opt.json_path);
        }
    }

    if (env.gpu) {
        bench_power_fini(&env);
        bench_timing_fini(&env);
        cublasDestroy(env.cublas);
        cublasDestroy(env.cublas_pedantic);
        cuops_destroy(env.h);
        cudaStreamDestroy(env.stream);
    }
    cuops_destroy(env.hc);
    free(env.rows);
    return rc;
}
