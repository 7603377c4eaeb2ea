/*
 * bench_timing.cu - the one timing harness of cuops-bench: every op, every
 * variant and every vendor baseline is timed by bench_time().
 *
 * Why it is built this way:
 *  - CUDA events around each repetition, median of the repetitions: a clock
 *    drop or a preemption moves the mean, not the median.
 *  - Small kernels (5-20 us) cost about as much to launch through cuops'
 *    argument checks as to run. If the GPU drains the queue, the gap between
 *    the start event and the kernel becomes "GPU time". A one-thread kernel
 *    spins on a host-mapped flag while the host enqueues a batch of
 *    repetitions, so the batch then runs back to back. The spin gives up
 *    after a second (a call that synchronizes inside would otherwise
 *    deadlock) and the run says so.
 *  - 50 ms pause before each series so clocks settle after the previous one.
 *  - Buffer rotation (bench_rotation_sets): repetition i uses set i % sets;
 *    sets together exceed 3x L2, so with LRU-like replacement a set has been
 *    evicted by the time it comes round again and every repetition reads HBM.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define BENCH_BATCH 64
#define BENCH_PAUSE_US 50000
#define BENCH_TARGET_US 200000.0
#define BENCH_MIN_REPS 20
#define BENCH_MAX_REPS 10000
#define BENCH_QUICK_REPS 10

double bench_host_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Holds the stream until the host sets *release (or ~timeout_ns passes). */
__global__ void bench_blocking_kernel(volatile int *release, int *timed_out,
                                      unsigned long long timeout_ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*release == 0) {
        __nanosleep(2000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            *timed_out = 1;
            break;
        }
    }
}

int bench_timing_init(bench_env_t *env)
{
    void *flag = NULL, *timed_out = NULL;
    if (cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped) != cudaSuccess) return -1;
    if (cudaHostAlloc(&timed_out, sizeof(int), cudaHostAllocMapped) != cudaSuccess) return -1;
    env->release_flag = (volatile int *)flag;
    env->blocker_timed_out = (volatile int *)timed_out;
    *env->release_flag = 0;
    *env->blocker_timed_out = 0;
    if (cudaHostGetDevicePointer((void **)&env->release_flag_dev, flag, 0) != cudaSuccess)
        return -1;
    if (cudaHostGetDevicePointer((void **)&env->blocker_timed_out_dev, timed_out, 0) !=
        cudaSuccess)
        return -1;
    for (int i = 0; i < BENCH_BATCH; i++) {
        if (cudaEventCreate(&env->ev_start[i]) != cudaSuccess) return -1;
        if (cudaEventCreate(&env->ev_stop[i]) != cudaSuccess) return -1;
    }
    return 0;
}

void bench_timing_fini(bench_env_t *env)
{
    for (int i = 0; i < BENCH_BATCH; i++) {
        if (env->ev_start[i]) cudaEventDestroy(env->ev_start[i]);
        if (env->ev_stop[i]) cudaEventDestroy(env->ev_stop[i]);
    }
    if (env->release_flag) cudaFreeHost((void *)env->release_flag);
    if (env->blocker_timed_out) cudaFreeHost((void *)env->blocker_timed_out);
}

static int bench_sync_error(bench_env_t *env, bench_timing_t *t, const char *where)
{
    cudaError_t err = cudaStreamSynchronize(env->stream);
    if (err == cudaSuccess) err = cudaGetLastError();
    if (err != cudaSuccess) {
        snprintf(t->err, sizeof(t->err), "%s: %s", where, cudaGetErrorString(err));
        return 1;
    }
    return 0;
}

/* The series as timed, before the median sorts it: function j's repetition
 * i ran on buffer set (start + i + j * set_shift) mod num_sets. */
static void print_samples(const double *samples, int reps, int n, int start, int set_shift,
                          int num_sets)
{
    for (int j = 0; j < n; j++) {
        fprintf(stderr, "  samples %s (set:us):", j == 0 ? "row" : "baseline");
        for (int i = 0; i < reps; i++)
            fprintf(stderr, "%s%d:%.2f", i % 10 == 0 ? "\n   " : " ",
                    (start + i + j * set_shift) % num_sets, samples[(size_t)j * (size_t)reps + i]);
        fprintf(stderr, "\n");
    }
}

/* Time n (1 or 2) enqueue functions over one series. With n == 2 the
 * repetitions alternate (a, b, a, b, ...) inside every batch, so both see the
 * same clock, power and thermal state; b uses buffer set (i + sets / 2) mod
 * sets, so it never reads the set a has just pulled into L2. */
static void bench_time_n(bench_env_t *env, const bench_enqueue_fn *fns, void *const *ctxs, int n,
                         int num_sets, bench_timing_t *out)
{
    for (int j = 0; j < n; j++) {
        memset(&out[j], 0, sizeof(out[j]));
        out[j].median_us = out[j].min_us = NAN;
        out[j].power = bench_power_none();
    }
    if (num_sets < 1) num_sets = 1;
    const int set_shift = n == 2 ? num_sets / 2 : 0;
    usleep(BENCH_PAUSE_US);

    /* warm-up: every set once (first touch, lazy module loading), at least 2 */
    int warm = num_sets < 2 ? 2 : (num_sets > 8 ? 8 : num_sets);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < warm; i++) {
            int rc = fns[j](ctxs[j], (i + j * set_shift) % num_sets, out[j].err, sizeof(out[j].err));
            if (rc) return;
        }
    if (bench_sync_error(env, &out[0], "warm-up")) return;

    /* estimate one repetition (of all n) to size the series */
    int reps = env->opt.reps;
    int start = warm; /* the timed series starts past the sets just touched */
    if (reps <= 0) {
        if (env->opt.quick) {
            reps = BENCH_QUICK_REPS;
        } else {
            const int probe = 3;
            start += probe;
            cudaEventRecord(env->ev_start[0], env->stream);
            for (int i = 0; i < probe; i++)
                for (int j = 0; j < n; j++) {
                    int rc = fns[j](ctxs[j], (warm + i + j * set_shift) % num_sets, out[j].err,
                                    sizeof(out[j].err));
                    if (rc) return;
                }
            cudaEventRecord(env->ev_stop[0], env->stream);
            if (bench_sync_error(env, &out[0], "estimate")) return;
            float ms = 0.0f;
            cudaEventElapsedTime(&ms, env->ev_start[0], env->ev_stop[0]);
            double est_us = 1000.0 * ms / probe;
            double want = est_us > 0.0 ? ceil(BENCH_TARGET_US * n / est_us) : BENCH_MAX_REPS;
            reps = want < BENCH_MIN_REPS ? BENCH_MIN_REPS
                                         : (want > BENCH_MAX_REPS ? BENCH_MAX_REPS : (int)want);
        }
    }
    /* a memory-bound row's series visits every set at least once: with
     * fewer repetitions than sets (--quick, a small --reps) it kept to a few
     * sets that the warm-up and the other side's series had just left in L2 */
    const int reps_asked = reps;
    reps = bench_series_reps(reps, num_sets);
    if (reps != reps_asked && env->opt.reps > 0)
        fprintf(stderr, "  %d repetitions instead of %d: one per buffer set, so none reads L2-warm "
                        "data\n", reps, reps_asked);

    double *samples = (double *)malloc(sizeof(double) * (size_t)reps * (size_t)n);
    if (!samples) {
        snprintf(out[0].err, sizeof(out[0].err), "host allocation failed");
        return;
    }
    const int per_batch = BENCH_BATCH / n; /* repetitions of each function per batch */
    *env->blocker_timed_out = 0;
    bench_power_begin(env);
    for (int done = 0; done < reps; done += per_batch) {
        int batch = reps - done < per_batch ? reps - done : per_batch;
        *env->release_flag = 0;
        bench_blocking_kernel<<<1, 1, 0, env->stream>>>(env->release_flag_dev,
                                                        env->blocker_timed_out_dev,
                                                        1000000000ull);
        int rc = 0;
        for (int i = 0; i < batch && !rc; i++)
            for (int j = 0; j < n && !rc; j++) {
                cudaEventRecord(env->ev_start[i * n + j], env->stream);
                rc = fns[j](ctxs[j], (start + done + i + j * set_shift) % num_sets, out[j].err,
                            sizeof(out[j].err));
                cudaEventRecord(env->ev_stop[i * n + j], env->stream);
            }
        __sync_synchronize();
        *env->release_flag = 1;
        if (bench_sync_error(env, &out[0], "timed run") || rc) {
            (void)bench_power_end(env);
            free(samples);
            return;
        }
        for (int i = 0; i < batch; i++)
            for (int j = 0; j < n; j++) {
                float ms = 0.0f;
                cudaEventElapsedTime(&ms, env->ev_start[i * n + j], env->ev_stop[i * n + j]);
                samples[(size_t)j * (size_t)reps + (size_t)(done + i)] = 1000.0 * ms;
            }
    }
    const bench_power_t power = bench_power_end(env);
    if (*env->blocker_timed_out)
        fprintf(stderr, "  warning: the stream-holding kernel timed out (a call synchronizes "
                        "inside?): timings may include launch gaps\n");
    if (env->opt.print_samples) print_samples(samples, reps, n, start, set_shift, num_sets);
    for (int j = 0; j < n; j++) {
        double *sj = samples + (size_t)j * (size_t)reps;
        out[j].reps = reps;
        out[j].median_us = bv_median(sj, reps); /* sorts: sj[0] is the minimum */
        out[j].min_us = sj[0];
        out[j].power = power;
        out[j].ok = 1;
    }
    free(samples);
}

bench_timing_t bench_time(bench_env_t *env, bench_enqueue_fn fn, void *ctx, int num_sets)
{
    bench_timing_t t;
    bench_time_n(env, &fn, &ctx, 1, num_sets, &t);
    return t;
}

void bench_time_pair(bench_env_t *env, bench_enqueue_fn fn_a, void *ctx_a, bench_enqueue_fn fn_b,
                     void *ctx_b, int num_sets, bench_timing_t *a, bench_timing_t *b)
{
    const bench_enqueue_fn fns[2] = {fn_a, fn_b};
    void *const ctxs[2] = {ctx_a, ctx_b};
    bench_timing_t t[2];
    bench_time_n(env, fns, ctxs, 2, num_sets, t);
    /* a failing b stops the series: say so in a's message too */
    if (!t[0].ok && !t[0].err[0] && t[1].err[0])
        snprintf(t[0].err, sizeof(t[0].err), "baseline: %.240s", t[1].err);
    *a = t[0];
    *b = t[1];
}

bench_timing_t bench_time_row(bench_env_t *env, bench_row_t *row, bench_enqueue_fn fn, void *ctx,
                              bench_enqueue_fn baseline_fn, void *baseline_ctx, int num_sets)
{
    if (!env->opt.interleave || !baseline_fn) return bench_time(env, fn, ctx, num_sets);
    bench_timing_t t, tb;
    bench_time_pair(env, fn, ctx, baseline_fn, baseline_ctx, num_sets, &t, &tb);
    if (!t.ok && strncmp(t.err, "baseline: ", 10) == 0) {
        /* the baseline stopped the series, not the row: time the row alone
         * (a sticky device error fails this too, and the row says so) */
        fprintf(stderr, "  the baseline failed (%s): the row timed without it\n", tb.err);
        (void)cudaGetLastError();
        row->baseline_us = NAN;
        return bench_time(env, fn, ctx, num_sets);
    }
    row->baseline_interleaved = 1;
    row->baseline_us = tb.ok ? tb.median_us : NAN;
    row->baseline_power = tb.power;
    return t;
}

int bench_rotation_sets(const bench_env_t *env, size_t set_bytes, int max_sets)
{
    if (set_bytes == 0) return 1;
    if (env->opt.sets > 0) return env->opt.sets < max_sets ? env->opt.sets : max_sets;
    double l2 = (double)(env->l2_bytes > 0 ? env->l2_bytes : (int64_t)64 << 20);
    double need = 3.0 * l2;
    /* --interleave: the baseline's repetitions take sets too, from the
     * middle of the rotation (bench_time_n), so a set comes round after half
     * as many of the row's own repetitions: twice the bytes and, where a set
     * is smaller than that, an even count of at least four, so that the
     * baseline never reads the set the row reads next (with 2 or 3 sets it did) */
    if (env->opt.interleave) need *= 2.0;
    int sets = (int)ceil(need / (double)set_bytes);
    /* one set of more than 3x L2 is cold by itself; a set that barely does
     * may keep its tail in L2 for its own next start, so rotate two */
    if ((double)set_bytes < 2.0 * need && sets < 2) sets = 2;
    if (env->opt.interleave && (double)set_bytes < need) {
        if (sets < 4) sets = 4;
        if (sets % 2) sets++;
    }
    if (sets < 1) sets = 1;
    if (sets > max_sets) {
        sets = max_sets;
        if ((double)sets * (double)set_bytes < need)
            fprintf(stderr, "  rotation capped at %d sets of %zu bytes (%.1f MB, under the %.0f MB "
                            "that keep each set cold): this row may read L2-warm data\n",
                    sets, set_bytes, (double)sets * (double)set_bytes / 1e6, need / 1e6);
    }
    return sets;
}

int bench_fits(size_t bytes)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return 0;
    return (double)bytes <= 0.9 * (double)free_b;
}
