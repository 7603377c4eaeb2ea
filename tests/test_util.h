/*
 * test_util.h - the small test harness every cuops test shares (C11 and C++):
 * counters, CHECK macros that print where and why, a seeded random generator,
 * and the closing line "name: P passed, F failed, S skipped" that
 * scripts/run-tests.sh sums.
 */
#ifndef CUOPS_TEST_UTIL_H
#define CUOPS_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/float16.h"
#include "cuops.h"

static int tu_passed, tu_failed, tu_skipped;

/* One named check: counts it, prints the failure with file:line and a message. */
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            tu_passed++;                                                   \
        } else {                                                           \
            tu_failed++;                                                   \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
        }                                                                  \
    } while (0)

#define CHECK_STATUS(expr, expected)                                                  \
    do {                                                                              \
        cuops_status_t tu_st_ = (expr);                                               \
        CHECK(tu_st_ == (expected), "got %s, expected %s", cuops_status_string(tu_st_), \
              cuops_status_string(expected));                                         \
    } while (0)

#define SKIP(...)                                   \
    do {                                            \
        tu_skipped++;                               \
        fprintf(stderr, "SKIP: ");                  \
        fprintf(stderr, __VA_ARGS__);               \
        fprintf(stderr, "\n");                      \
    } while (0)

/* Print the closing line; the exit code is non-zero when anything failed. */
static inline int tu_finish(const char *name)
{
    printf("%s: %d passed, %d failed, %d skipped\n", name, tu_passed, tu_failed, tu_skipped);
    return tu_failed ? 1 : 0;
}

/* xorshift64*: fast, seedable, good enough for test data. */
static uint64_t tu_rng_state = 0x9E3779B97F4A7C15ull;
static inline void tu_seed(uint64_t s) { tu_rng_state = s ? s : 0x9E3779B97F4A7C15ull; }
static inline uint64_t tu_rand_u64(void)
{
    uint64_t x = tu_rng_state;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    tu_rng_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}
/* Uniform in [lo, hi). */
static inline double tu_rand_uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(tu_rand_u64() >> 11) * (1.0 / 9007199254740992.0);
}
/* Uniform integer in [0, n), n > 0. */
static inline int64_t tu_rand_below(int64_t n) { return (int64_t)(tu_rand_u64() % (uint64_t)n); }
/* Uniform integer in [lo, hi]. */
static inline int64_t tu_rand_between(int64_t lo, int64_t hi) { return lo + tu_rand_below(hi - lo + 1); }
/* Log-uniform integer in [lo, hi], lo >= 1: sizes from 1 to 10 as likely as
 * from 1000 to 10000 (the random-shape sections). */
static inline int64_t tu_rand_log(int64_t lo, int64_t hi)
{
    const int64_t v = (int64_t)exp(tu_rand_uniform(log((double)lo), log((double)hi + 1.0)));
    return v < lo ? lo : v > hi ? hi : v;
}
/* The seed of random case i of a run seeded with `seed` (splitmix64 of the
 * two): each case draws from its own, so one case replays alone and the
 * cases do not depend on what the sections before them drew. */
static inline uint64_t tu_case_seed(uint64_t seed, int i)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* How many random cases a section runs: CUOPS_TEST_RANDOM_CASES, else
 * `fallback`; 0 (or less) turns the section off. */
static inline int tu_random_cases(int fallback)
{
    const char *s = getenv("CUOPS_TEST_RANDOM_CASES");
    if (s == NULL || s[0] == 0) return fallback;
    return atoi(s) > 0 ? atoi(s) : 0;
}
/* An environment flag: set, not empty and not "0". */
static inline int tu_env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] && strcmp(v, "0") != 0;
}
/* Seed from the environment (CUOPS_TEST_SEED) or the clock: fresh data every run,
 * reproducible when the printed seed is given back. */
static inline uint64_t tu_seed_from_env(void)
{
    const char *s = getenv("CUOPS_TEST_SEED");
    uint64_t seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) * 2654435761ull;
    tu_seed(seed);
    fprintf(stderr, "seed: CUOPS_TEST_SEED=%llu\n", (unsigned long long)seed);
    return seed;
}

/* Fill n elements of a 16/32/64-bit float type with uniform values in [lo, hi). */
static inline void tu_fill_float(void *p, cuops_dtype_t t, size_t n, double lo, double hi)
{
    for (size_t i = 0; i < n; i++) {
        double v = tu_rand_uniform(lo, hi);
        switch (t) {
        case CUOPS_DTYPE_F16: ((uint16_t *)p)[i] = cuops_float_to_half((float)v); break;
        case CUOPS_DTYPE_BF16: ((uint16_t *)p)[i] = cuops_float_to_bf16((float)v); break;
        case CUOPS_DTYPE_F32: ((float *)p)[i] = (float)v; break;
        case CUOPS_DTYPE_F64: ((double *)p)[i] = v; break;
        default: break;
        }
    }
}

/* Element i of an array as double. */
static inline double tu_get(const void *p, cuops_dtype_t t, size_t i)
{
    return cuops_elem_to_double(p, t, (int64_t)i);
}

/* Fill n elements of a float type with NaN (the poison that shows unwritten outputs). */
static inline void tu_poison(void *p, cuops_dtype_t t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case CUOPS_DTYPE_F16: ((uint16_t *)p)[i] = 0x7e00; break;
        case CUOPS_DTYPE_BF16: ((uint16_t *)p)[i] = 0x7fc0; break;
        case CUOPS_DTYPE_F32: ((float *)p)[i] = NAN; break;
        case CUOPS_DTYPE_F64: ((double *)p)[i] = NAN; break;
        default: memset(p, 0xA5, n * 4); return;
        }
    }
}

#endif /* CUOPS_TEST_UTIL_H */
