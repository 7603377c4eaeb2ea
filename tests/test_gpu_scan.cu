/*
 * test_gpu_scan.cu - cuops_scan and cuops_reduce on the GPU against the CPU
 * reference backend, for every variant, type, op, inclusive/exclusive, in
 * place and misaligned (base + 1 element), with NaN/sentinel-poisoned outputs
 * and a guard band after the end (and one element before a misaligned start)
 * that must stay untouched. Then bitwise reproducibility (10 runs of f32 sum
 * scan and reduce at n = 2^24) and one huge case, n = 2^31 + 7 i32 sum, for
 * every variant (skipped when the device lacks the memory).
 *
 * Tolerances: integers and float min/max exact; f32 sum |out - ref| <=
 * 1e-5 * (running sum of |x|), f64 sum 1e-12 * (running sum of |x|).
 * Without a CUDA device every case is skipped and the test exits 0.
 *
 *   build/tests/test_gpu_scan                 everything
 *   CUOPS_TEST_SEED=123 build/tests/test_gpu_scan    reproduce a run
 */
#include <cuda_runtime.h>

#include "test_util.h"

#define GUARD_ELEMS 16384 /* past the largest tile any variant uses */

static cuops_handle_t g_gpu, g_cpu;
static const char *const *g_scan_variants;
static int g_scan_variant_count;
static const char *const *g_reduce_variants;
static int g_reduce_variant_count;

static const cuops_dtype_t k_types[] = {CUOPS_DTYPE_I32, CUOPS_DTYPE_I64, CUOPS_DTYPE_F32,
                                        CUOPS_DTYPE_F64};
static const cuops_reduce_op_t k_ops[] = {CUOPS_REDUCE_SUM, CUOPS_REDUCE_MIN, CUOPS_REDUCE_MAX};
static const char *op_name(cuops_reduce_op_t op)
{
    return op == CUOPS_REDUCE_SUM ? "sum" : op == CUOPS_REDUCE_MIN ? "min" : "max";
}
static const char *type_name(cuops_dtype_t t)
{
    switch (t) {
    case CUOPS_DTYPE_I32: return "i32";
    case CUOPS_DTYPE_I64: return "i64";
    case CUOPS_DTYPE_F32: return "f32";
    case CUOPS_DTYPE_F64: return "f64";
    default: return "?";
    }
}
static size_t elem_size(cuops_dtype_t t)
{
    return (t == CUOPS_DTYPE_I32 || t == CUOPS_DTYPE_F32) ? 4 : 8;
}
static int is_float(cuops_dtype_t t) { return t == CUOPS_DTYPE_F32 || t == CUOPS_DTYPE_F64; }
/* Poison byte: 0xFF bytes are a NaN in f32 and f64; 0xA5 is the int sentinel. */
static int poison_byte(cuops_dtype_t t) { return is_float(t) ? 0xFF : 0xA5; }

/* Fresh random input. Integer sums use the full range (so they wrap); min
 * and max get a drift so the running extreme keeps changing across tiles;
 * floats are in [-1, 1) (plus the drift for min/max). */
static void fill_input(void *p, cuops_dtype_t t, cuops_reduce_op_t op, size_t n)
{
    const double drift = op == CUOPS_REDUCE_MIN ? -0.25 : op == CUOPS_REDUCE_MAX ? 0.25 : 0.0;
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case CUOPS_DTYPE_I32:
            ((int32_t *)p)[i] = op == CUOPS_REDUCE_SUM
                                    ? (int32_t)(uint32_t)tu_rand_u64()
                                    : (int32_t)((int64_t)(tu_rand_u64() % 1000003) - 500000 +
                                                (int64_t)(drift * (double)i));
            break;
        case CUOPS_DTYPE_I64:
            ((int64_t *)p)[i] = op == CUOPS_REDUCE_SUM
                                    ? (int64_t)tu_rand_u64()
                                    : (int64_t)(tu_rand_u64() % 1000003) - 500000 +
                                          (int64_t)(drift * (double)i);
            break;
        case CUOPS_DTYPE_F32:
            ((float *)p)[i] = (float)(tu_rand_uniform(-1.0, 1.0) + drift * (double)i * 1e-3);
            break;
        case CUOPS_DTYPE_F64:
            ((double *)p)[i] = tu_rand_uniform(-1.0, 1.0) + drift * (double)i * 1e-3;
            break;
        default: break;
        }
    }
}

static int guard_intact(const unsigned char *p, size_t bytes, int byte)
{
    for (size_t i = 0; i < bytes; i++)
        if (p[i] != (unsigned char)byte) return 0;
    return 1;
}

/* Compare n results; returns the number of mismatches and prints the first few.
 * abs_sum: running sum of |x| per element (float sums), NULL otherwise. */
static size_t compare(const void *got, const void *ref, const double *abs_sum, cuops_dtype_t t,
                      cuops_reduce_op_t op, size_t n, const char *what)
{
    size_t bad = 0;
    const double rel = t == CUOPS_DTYPE_F32 ? 1e-5 : 1e-12;
    for (size_t i = 0; i < n; i++) {
        int ok;
        if (!is_float(t)) {
            ok = memcmp((const char *)got + i * elem_size(t), (const char *)ref + i * elem_size(t),
                        elem_size(t)) == 0;
        } else {
            const double g = tu_get(got, t, i), r = tu_get(ref, t, i);
            if (op == CUOPS_REDUCE_SUM)
                ok = fabs(g - r) <= rel * abs_sum[i]; /* false for NaN */
            else
                ok = g == r;
        }
        if (!ok) {
            if (bad < 5)
                fprintf(stderr, "  %s: [%zu] got %.17g ref %.17g\n", what, i, tu_get(got, t, i),
                        tu_get(ref, t, i));
            bad++;
        }
    }
    return bad;
}

/* ---- scan ----------------------------------------------------------------- */

enum { MODE_OUT_OF_PLACE, MODE_IN_PLACE, MODE_MISALIGNED };
static const char *const k_mode_names[] = {"out-of-place", "in-place", "misaligned"};

static void scan_case(cuops_dtype_t t, cuops_reduce_op_t op, int exclusive, size_t n, int all_modes)
{
    const size_t es = elem_size(t);
    const size_t out_bytes = (n + 1 + GUARD_ELEMS) * es;
    unsigned char *in = (unsigned char *)malloc((n + 1) * es);
    unsigned char *ref = (unsigned char *)malloc(n * es);
    unsigned char *got = (unsigned char *)malloc(out_bytes);
    double *abs_sum = NULL;
    void *d_in = NULL, *d_out = NULL;
    if (!in || !ref || !got || cudaMalloc(&d_in, (n + 1) * es) != cudaSuccess ||
        cudaMalloc(&d_out, out_bytes) != cudaSuccess) {
        SKIP("scan %s %s n=%zu: out of memory", type_name(t), op_name(op), n);
        goto done;
    }
    fill_input(in, t, op, n);
    CHECK_STATUS(cuops_scan(g_cpu, op, exclusive, t, (int64_t)n, in, ref), CUOPS_STATUS_SUCCESS);
    if (is_float(t) && op == CUOPS_REDUCE_SUM) {
        abs_sum = (double *)malloc(n * sizeof(double));
        double s = 0;
        for (size_t i = 0; i < n; i++) abs_sum[i] = (s += fabs(tu_get(in, t, i)));
    }
    for (int v = 0; v < g_scan_variant_count; v++) {
        const char *variant = g_scan_variants[v];
        cuops_options_t opt = {0};
        opt.variant = variant;
        for (int mode = 0; mode < 3; mode++) {
            if (mode != MODE_OUT_OF_PLACE && !all_modes && v != 0) continue;
            char what[160];
            snprintf(what, sizeof what, "scan %s %s %s n=%zu variant=%s %s", type_name(t),
                     op_name(op), exclusive ? "exclusive" : "inclusive", n, variant,
                     k_mode_names[mode]);
            const int pb = poison_byte(t);
            cudaMemset(d_out, pb, out_bytes);
            unsigned char *dout = (unsigned char *)d_out;
            const void *src;
            void *dst;
            if (mode == MODE_OUT_OF_PLACE) {
                cudaMemcpy(d_in, in, n * es, cudaMemcpyHostToDevice);
                src = d_in;
                dst = dout;
            } else if (mode == MODE_IN_PLACE) {
                cudaMemcpy(dout, in, n * es, cudaMemcpyHostToDevice);
                src = dout;
                dst = dout;
            } else {
                cudaMemcpy((unsigned char *)d_in + es, in, n * es, cudaMemcpyHostToDevice);
                src = (unsigned char *)d_in + es;
                dst = dout + es;
            }
            cuops_status_t st = cuops_scan_ex(g_gpu, op, exclusive, t, (int64_t)n, src, dst, &opt);
            cudaError_t err = cudaDeviceSynchronize();
            CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess, "%s: %s (%s) %s", what,
                  cuops_status_string(st), cuops_last_error(g_gpu), cudaGetErrorString(err));
            if (st != CUOPS_STATUS_SUCCESS || err != cudaSuccess) continue;
            if (v != 0)
                CHECK(strstr(cuops_last_kernel(g_gpu), variant) != NULL,
                      "%s: ran '%s'", what, cuops_last_kernel(g_gpu));
            cudaMemcpy(got, d_out, out_bytes, cudaMemcpyDeviceToHost);
            const size_t lead = mode == MODE_MISALIGNED ? 1 : 0;
            size_t bad = compare(got + lead * es, ref, abs_sum, t, op, n, what);
            CHECK(bad == 0, "%s: %zu of %zu elements wrong", what, bad, n);
            CHECK(guard_intact(got + (lead + n) * es, out_bytes - (lead + n) * es, pb),
                  "%s: wrote past the end", what);
            if (lead) CHECK(guard_intact(got, es, pb), "%s: wrote before the start", what);
            if (mode != MODE_IN_PLACE && n <= (1u << 20)) {
                /* the input of an out-of-place scan is left alone */
                unsigned char *back = (unsigned char *)malloc(n * es);
                cudaMemcpy(back, (const unsigned char *)src, n * es, cudaMemcpyDeviceToHost);
                CHECK(memcmp(back, in, n * es) == 0, "%s: input modified", what);
                free(back);
            }
        }
    }
done:
    cudaFree(d_in);
    cudaFree(d_out);
    free(in);
    free(ref);
    free(got);
    free(abs_sum);
}

/* ---- reduce ----------------------------------------------------------------- */

static void reduce_case(cuops_dtype_t t, cuops_reduce_op_t op, size_t n)
{
    const size_t es = elem_size(t);
    unsigned char *in = (unsigned char *)malloc((n + 1) * es);
    unsigned char ref[8], got[3 * 8];
    void *d_in = NULL, *d_out = NULL;
    if (!in || cudaMalloc(&d_in, (n + 1) * es) != cudaSuccess ||
        cudaMalloc(&d_out, 3 * es) != cudaSuccess) {
        SKIP("reduce %s %s n=%zu: out of memory", type_name(t), op_name(op), n);
        goto done;
    }
    fill_input(in, t, op, n + 1);
    CHECK_STATUS(cuops_reduce(g_cpu, op, t, (int64_t)n, in, ref), CUOPS_STATUS_SUCCESS);
    {
        double abs_sum = 0;
        for (size_t i = 0; i < n; i++) abs_sum += fabs(tu_get(in, t, i));
        for (int v = 0; v < g_reduce_variant_count; v++) {
            const char *variant = g_reduce_variants[v];
            cuops_options_t opt = {0};
            opt.variant = variant;
            for (int misaligned = 0; misaligned < 2; misaligned++) {
                char what[160];
                snprintf(what, sizeof what, "reduce %s %s n=%zu variant=%s %s", type_name(t),
                         op_name(op), n, variant, misaligned ? "misaligned" : "aligned");
                const int pb = poison_byte(t);
                cudaMemset(d_out, pb, 3 * es);
                const unsigned char *src = (const unsigned char *)d_in + (misaligned ? es : 0);
                cudaMemcpy((void *)src, in, n * es, cudaMemcpyHostToDevice);
                void *dst = (unsigned char *)d_out + es;
                cuops_status_t st = cuops_reduce_ex(g_gpu, op, t, (int64_t)n, src, dst, &opt);
                cudaError_t err = cudaDeviceSynchronize();
                CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess, "%s: %s (%s) %s", what,
                      cuops_status_string(st), cuops_last_error(g_gpu), cudaGetErrorString(err));
                if (st != CUOPS_STATUS_SUCCESS || err != cudaSuccess) continue;
                if (v != 0)
                    CHECK(strstr(cuops_last_kernel(g_gpu), variant) != NULL, "%s: ran '%s'", what,
                          cuops_last_kernel(g_gpu));
                cudaMemcpy(got, d_out, 3 * es, cudaMemcpyDeviceToHost);
                size_t bad = compare(got + es, ref, &abs_sum, t, op, 1, what);
                CHECK(bad == 0, "%s: wrong result", what);
                CHECK(guard_intact(got, es, pb) && guard_intact(got + 2 * es, es, pb),
                      "%s: wrote next to *out", what);
            }
        }
    }
done:
    cudaFree(d_in);
    cudaFree(d_out);
    free(in);
}

/* ---- bitwise reproducibility ------------------------------------------------- */

static void reproducibility(void)
{
    const size_t n = (size_t)1 << 24;
    float *in = (float *)malloc(n * sizeof(float));
    float *first = (float *)malloc(n * sizeof(float));
    float *again = (float *)malloc(n * sizeof(float));
    float *d_in = NULL, *d_out = NULL;
    if (!in || !first || !again || cudaMalloc(&d_in, (n + 1) * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&d_out, (n + 1) * sizeof(float)) != cudaSuccess) {
        SKIP("reproducibility: out of memory");
        goto done;
    }
    tu_fill_float(in, CUOPS_DTYPE_F32, n, -1.0, 1.0);
    cudaMemcpy(d_in, in, n * sizeof(float), cudaMemcpyHostToDevice);
    /* aligned (vector path) and misaligned (scalar path), inclusive and exclusive */
    for (int misaligned = 0; misaligned < 2; misaligned++) {
        const float *src = d_in;
        float *dst = d_out + misaligned;
        if (misaligned) {
            cudaMemcpy(d_in + 1, in, n * sizeof(float), cudaMemcpyHostToDevice);
            src = d_in + 1;
        }
        for (int exclusive = 0; exclusive < 2; exclusive++) {
            int differing = 0;
            for (int run = 0; run < 10; run++) {
                cudaMemset(d_out, 0xFF, (n + 1) * sizeof(float));
                cuops_status_t st =
                    cuops_scan(g_gpu, CUOPS_REDUCE_SUM, exclusive, CUOPS_DTYPE_F32, (int64_t)n, src, dst);
                CHECK_STATUS(st, CUOPS_STATUS_SUCCESS);
                cudaMemcpy(run == 0 ? first : again, dst, n * sizeof(float), cudaMemcpyDeviceToHost);
                if (run > 0 && memcmp(first, again, n * sizeof(float)) != 0) differing++;
            }
            CHECK(differing == 0, "f32 sum scan n=2^24 %s %s: %d of 9 reruns differ bitwise",
                  exclusive ? "exclusive" : "inclusive", misaligned ? "misaligned" : "aligned",
                  differing);
        }
        float r0 = 0, r = 0;
        int differing = 0;
        for (int run = 0; run < 10; run++) {
            cuops_status_t st = cuops_reduce(g_gpu, CUOPS_REDUCE_SUM, CUOPS_DTYPE_F32, (int64_t)n, src, d_out);
            CHECK_STATUS(st, CUOPS_STATUS_SUCCESS);
            cudaMemcpy(run == 0 ? &r0 : &r, d_out, sizeof(float), cudaMemcpyDeviceToHost);
            if (run > 0 && memcmp(&r0, &r, sizeof r) != 0) differing++;
        }
        CHECK(differing == 0, "f32 sum reduce n=2^24 %s: %d of 9 reruns differ bitwise",
              misaligned ? "misaligned" : "aligned", differing);
    }
done:
    cudaFree(d_in);
    cudaFree(d_out);
    free(in);
    free(first);
    free(again);
}

/* ---- n = 2^31 + 7 ----------------------------------------------------------- */

static __host__ __device__ uint32_t mix32(uint64_t i, uint32_t seed)
{
    uint32_t x = (uint32_t)i ^ (uint32_t)(i >> 32) * 0x9E3779B9u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

__global__ void fill_mix32(int32_t *p, int64_t n, uint32_t seed)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        p[i] = (int32_t)mix32((uint64_t)i, seed);
}

static void huge_case(void)
{
    const int64_t n = ((int64_t)1 << 31) + 7;
    const int64_t stride = 4096, tail = 10000;
    const int64_t samples = (n - 1) / stride + 1;
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    if (free_b < (size_t)n * 4 + ((size_t)512 << 20)) {
        SKIP("n = 2^31+7: %zu MB free on the device, %lld MB needed", free_b >> 20,
             (long long)(((size_t)n * 4 + ((size_t)512 << 20)) >> 20));
        return;
    }
    const uint32_t seed = (uint32_t)tu_rand_u64();
    /* host reference: inclusive running sums (wrapping) at the sampled indices */
    uint32_t *want_s = (uint32_t *)malloc(samples * 4), *want_t = (uint32_t *)malloc(tail * 4);
    uint32_t *got_s = (uint32_t *)malloc(samples * 4), *got_t = (uint32_t *)malloc(tail * 4);
    uint32_t *x_t = (uint32_t *)malloc(tail * 4);
    int32_t *d = NULL;
    if (!want_s || !want_t || !got_s || !got_t || !x_t ||
        cudaMalloc(&d, (size_t)n * 4) != cudaSuccess) {
        SKIP("n = 2^31+7: allocation failed");
        goto done;
    }
    {
        uint32_t run = 0;
        for (int64_t i = 0; i < n; i++) {
            const uint32_t x = mix32((uint64_t)i, seed);
            run += x;
            if (i % stride == 0) want_s[i / stride] = run;
            if (i >= n - tail) {
                want_t[i - (n - tail)] = run;
                x_t[i - (n - tail)] = x;
            }
        }
        const uint32_t total = run;

        for (int v = 0; v < g_reduce_variant_count; v++) {
            cuops_options_t opt = {0};
            opt.variant = g_reduce_variants[v];
            fill_mix32<<<4096, 256>>>(d, n, seed);
            int32_t *d_res = NULL;
            cudaMalloc(&d_res, 4);
            cuops_status_t st = cuops_reduce_ex(g_gpu, CUOPS_REDUCE_SUM, CUOPS_DTYPE_I32, n, d, d_res, &opt);
            cudaError_t err = cudaDeviceSynchronize();
            uint32_t got = 0;
            cudaMemcpy(&got, d_res, 4, cudaMemcpyDeviceToHost);
            cudaFree(d_res);
            CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess && got == total,
                  "reduce i32 sum n=2^31+7 variant=%s: %s %s got %u want %u", opt.variant,
                  cuops_status_string(st), cudaGetErrorString(err), got, total);
        }
        for (int v = 0; v < g_scan_variant_count; v++) {
            for (int exclusive = 0; exclusive < 2; exclusive++) {
                if (exclusive && v != 0) continue; /* exclusive: the default only */
                cuops_options_t opt = {0};
                opt.variant = g_scan_variants[v];
                fill_mix32<<<4096, 256>>>(d, n, seed);
                cuops_status_t st =
                    cuops_scan_ex(g_gpu, CUOPS_REDUCE_SUM, exclusive, CUOPS_DTYPE_I32, n, d, d, &opt);
                cudaError_t err = cudaDeviceSynchronize();
                CHECK(st == CUOPS_STATUS_SUCCESS && err == cudaSuccess,
                      "scan i32 sum n=2^31+7 in place variant=%s: %s (%s) %s", opt.variant,
                      cuops_status_string(st), cuops_last_error(g_gpu), cudaGetErrorString(err));
                if (st != CUOPS_STATUS_SUCCESS || err != cudaSuccess) continue;
                cudaMemcpy2D(got_s, 4, d, stride * 4, 4, samples, cudaMemcpyDeviceToHost);
                cudaMemcpy(got_t, d + (n - tail), tail * 4, cudaMemcpyDeviceToHost);
                int64_t bad = 0, first_bad = -1;
                for (int64_t s = 0; s < samples; s++) {
                    /* exclusive = inclusive minus the element itself */
                    const uint32_t want =
                        exclusive ? want_s[s] - mix32((uint64_t)(s * stride), seed) : want_s[s];
                    if (got_s[s] != want) { bad++; if (first_bad < 0) first_bad = s * stride; }
                }
                for (int64_t k = 0; k < tail; k++) {
                    const uint32_t want = exclusive ? want_t[k] - x_t[k] : want_t[k];
                    if (got_t[k] != want) { bad++; if (first_bad < 0) first_bad = n - tail + k; }
                }
                CHECK(bad == 0, "scan i32 sum n=2^31+7 %s variant=%s: %lld sampled elements wrong, "
                      "first at %lld", exclusive ? "exclusive" : "inclusive", opt.variant,
                      (long long)bad, (long long)first_bad);
            }
        }
    }
done:
    cudaFree(d);
    free(want_s);
    free(want_t);
    free(got_s);
    free(got_t);
    free(x_t);
}

int main(void)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        SKIP("no CUDA device (%s)", err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        return tu_finish("test_gpu_scan");
    }
    cuops_status_t st = cuops_create(&g_gpu, 0);
    if (st == CUOPS_STATUS_NO_DEVICE) {
        SKIP("cuops_create(0): %s", cuops_create_error());
        return tu_finish("test_gpu_scan");
    }
    CHECK_STATUS(st, CUOPS_STATUS_SUCCESS);
    CHECK_STATUS(cuops_create(&g_cpu, CUOPS_DEVICE_CPU), CUOPS_STATUS_SUCCESS);
    if (st != CUOPS_STATUS_SUCCESS || g_cpu == NULL) return tu_finish("test_gpu_scan");
    tu_seed_from_env();

    CHECK_STATUS(cuops_variant_names("scan", &g_scan_variants, &g_scan_variant_count),
                 CUOPS_STATUS_SUCCESS);
    CHECK_STATUS(cuops_variant_names("reduce", &g_reduce_variants, &g_reduce_variant_count),
                 CUOPS_STATUS_SUCCESS);
    CHECK(g_scan_variant_count == 6 && strcmp(g_scan_variants[0], "auto") == 0,
          "scan variants: %d, first '%s'", g_scan_variant_count,
          g_scan_variant_count ? g_scan_variants[0] : "");
    CHECK(g_reduce_variant_count == 6 && strcmp(g_reduce_variants[0], "auto") == 0,
          "reduce variants: %d, first '%s'", g_reduce_variant_count,
          g_reduce_variant_count ? g_reduce_variants[0] : "");
    if (g_scan_variant_count < 1 || g_reduce_variant_count < 1) return tu_finish("test_gpu_scan");

    {   /* an unknown variant is refused and writes nothing */
        cuops_options_t opt = {0};
        opt.variant = "no_such_variant";
        int32_t *d = NULL;
        cudaMalloc(&d, 64 * sizeof(int32_t));
        CHECK(cuops_scan_ex(g_gpu, CUOPS_REDUCE_SUM, 0, CUOPS_DTYPE_I32, 64, d, d, &opt) !=
                  CUOPS_STATUS_SUCCESS, "unknown scan variant accepted");
        CHECK(cuops_reduce_ex(g_gpu, CUOPS_REDUCE_SUM, CUOPS_DTYPE_I32, 64, d, d, &opt) !=
                  CUOPS_STATUS_SUCCESS, "unknown reduce variant accepted");
        cudaFree(d);
    }

    static const size_t scan_sizes[] = {1, 31, 32, 33, 4095, 4096, 4097, 1u << 20,
                                        (1u << 20) + 3, 1u << 26};
    for (size_t s = 0; s < sizeof scan_sizes / sizeof scan_sizes[0]; s++)
        for (int ti = 0; ti < 4; ti++)
            for (int oi = 0; oi < 3; oi++)
                for (int ex = 0; ex < 2; ex++)
                    scan_case(k_types[ti], k_ops[oi], ex, scan_sizes[s], scan_sizes[s] < (1u << 26));

    static const size_t reduce_sizes[] = {0, 1, 31, 32, 33, 1u << 20, (1u << 26) + 1};
    for (size_t s = 0; s < sizeof reduce_sizes / sizeof reduce_sizes[0]; s++)
        for (int ti = 0; ti < 4; ti++)
            for (int oi = 0; oi < 3; oi++) reduce_case(k_types[ti], k_ops[oi], reduce_sizes[s]);

    reproducibility();
    huge_case();

    cuops_destroy(g_gpu);
    cuops_destroy(g_cpu);
    return tu_finish("test_gpu_scan");
}
