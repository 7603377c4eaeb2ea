/*
 * test_gpu_dequant.cu - cuops_dequant_int4 and the GPTQ/AWQ importers on the
 * GPU, compared bit for bit with the CPU backend (the oracle), which is itself
 * checked against the formula computed here.
 *
 * Covers every scale_type x out_type, zeros and NULL zeros, group sizes 32,
 * 64, 128, 2, 6, 130 and k, k + 2 for odd k (one group per row), k = 1, 7,
 * 129, 4095, 4098 (partial last groups), n = 1,
 * 17, 1537, padded ldq/ldo, pointers offset by one byte/element, every forced
 * variant (NOT_SUPPORTED allowed only for the vector variants, and each
 * variant must run somewhere; the bulk-store ones only on sm_90), calls
 * larger than one resident wave for the persistent variants (their unit loop,
 * both buffers, magic division by non-powers of two), every way a lane pair
 * of the pair-store variants can be mixed (full / partial / past the end,
 * pairs straddling rows, rows half a sector off), NaN-poisoned outputs whose
 * row padding and a guard band after the last row must stay untouched, and
 * 16384x4096 checked on sampled rows. Last, random cases of auto (random_cases: shape,
 * types, group, strides and placement drawn per case; CUOPS_TEST_RANDOM_CASES, default
 * 150; CUOPS_TEST_RANDOM_ONLY=1 runs them alone). Without a CUDA device it SKIPs.
 * CUOPS_TEST_QUICK=1 (the compute-sanitizer run) drops the large shapes and takes 15
 * random cases.
 */
#include <cuda_runtime.h>

#include "gpu_test_util.h"

#define GUARD 64 /* elements after the last row that must stay poisoned */

static cuops_handle_t gpu, cpu;
static int quick;

static const char *const *variant_names;
static int variant_count;
static int variant_ran[32];

static size_t esz(cuops_dtype_t t) { return t == CUOPS_DTYPE_F32 ? 4 : 2; }

typedef struct dq_case {
    int64_t n, k, group;
    cuops_dtype_t st, ot;
    int zeros;
    int64_t ldq_pad, ldo_pad;
    int64_t q_off, s_off, z_off, o_off; /* bytes for q/z, elements for s/out */
    int s_byte, o_byte;                 /* bytes more on the device's s/out pointers:
                                         * between two elements (the byte-wise path) */
    const char *variant;                /* NULL: auto */
    double s_lo, s_hi;                  /* scale range; both 0: [-1.5, 1.5] */
} dq_case_t;

/* The formula, computed here: (float(q) - float(z)) * s, rounded to ot. */
static uint32_t formula_bits(uint32_t q, uint32_t z, float s, cuops_dtype_t ot)
{
    float v = ((float)q - (float)z) * s;
    if (ot == CUOPS_DTYPE_F16) return cuops_float_to_half(v);
    if (ot == CUOPS_DTYPE_BF16) return cuops_float_to_bf16(v);
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

static uint32_t elem_bits(const uint8_t *p, size_t es, int64_t i)
{
    uint32_t u = 0;
    memcpy(&u, p + (size_t)i * es, es);
    return u;
}

static void *dev_copy(const void *h, size_t bytes)
{
    void *d = NULL;
    if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess) return NULL;
    cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    return d;
}

static int variant_index(const char *name)
{
    for (int i = 0; i < variant_count; i++)
        if (name && strcmp(variant_names[i], name) == 0) return i;
    return 0;
}

/* The whole case in one line (failure messages, the random cases' replay). */
static void describe(const dq_case_t *c, char *what, size_t size)
{
    int len = snprintf(what, size,
                       "n=%lld k=%lld group=%lld %s->%s zeros=%d ldq+%lld ldo+%lld off(q%lld s%lld+%dB z%lld o%lld+%dB) %s",
                       (long long)c->n, (long long)c->k, (long long)c->group,
                       c->st == CUOPS_DTYPE_F16 ? "f16" : c->st == CUOPS_DTYPE_BF16 ? "bf16" : "f32",
                       c->ot == CUOPS_DTYPE_F16 ? "f16" : c->ot == CUOPS_DTYPE_BF16 ? "bf16" : "f32", c->zeros,
                       (long long)c->ldq_pad, (long long)c->ldo_pad, (long long)c->q_off, (long long)c->s_off,
                       c->s_byte, (long long)c->z_off, (long long)c->o_off, c->o_byte, c->variant ? c->variant : "auto");
    if ((c->s_lo != 0.0 || c->s_hi != 0.0) && len > 0 && (size_t)len < size)
        snprintf(what + len, size - (size_t)len, " scales in [%g, %g)", c->s_lo, c->s_hi);
}

/* Runs one case; returns 1 when compared, 0 when the forced variant declined. */
static int run_case(const dq_case_t *c)
{
    const int64_t ng = (c->k + c->group - 1) / c->group;
    const int64_t ldq = (c->k + 1) / 2 + c->ldq_pad, ldo = c->k + c->ldo_pad;
    const size_t ses = esz(c->st), oes = esz(c->ot);
    const size_t qbytes = (size_t)(c->q_off + c->n * ldq);
    const size_t sbytes = (size_t)(c->s_off + c->n * ng) * ses;
    const size_t zbytes = (size_t)(c->z_off + c->n * ng);
    const size_t oelems = (size_t)(c->o_off + c->n * ldo + GUARD);
    char what[256];
    describe(c, what, sizeof what);

    uint8_t *hq = (uint8_t *)malloc(qbytes), *hs = (uint8_t *)malloc(sbytes), *hz = (uint8_t *)malloc(zbytes);
    uint8_t *ref = (uint8_t *)malloc(oelems * oes), *got = (uint8_t *)malloc(oelems * oes);
    for (size_t i = 0; i < qbytes; i++) hq[i] = (uint8_t)tu_rand_u64();
    for (size_t i = 0; i < zbytes; i++) hz[i] = (uint8_t)(tu_rand_u64() & 15);
    if (c->s_lo != 0.0 || c->s_hi != 0.0) tu_fill_float(hs, c->st, sbytes / ses, c->s_lo, c->s_hi);
    else tu_fill_float(hs, c->st, sbytes / ses, -1.5, 1.5);
    tu_poison(ref, c->ot, oelems);
    tu_poison(got, c->ot, oelems);

    uint8_t *dq = (uint8_t *)dev_copy(hq, qbytes), *ds = NULL, *dz = (uint8_t *)dev_copy(hz, zbytes),
            *dout = NULL;
    /* scales and out land s_byte / o_byte bytes into their device buffers;
     * the host arrays stay element-aligned */
    /* (a call with no groups has no scales; cudaMalloc of 0 bytes gives NULL) */
    if (cudaMalloc((void **)&ds, sbytes + c->s_byte > 0 ? sbytes + c->s_byte : 1) == cudaSuccess)
        cudaMemcpy(ds + c->s_byte, hs, sbytes, cudaMemcpyHostToDevice);
    if (cudaMalloc((void **)&dout, oelems * oes + c->o_byte) == cudaSuccess)
        cudaMemcpy(dout + c->o_byte, got, oelems * oes, cudaMemcpyHostToDevice);
    CHECK(dq && ds && dz && dout, "%s: cudaMalloc failed", what);
    int compared = 0;
    if (dq && ds && dz && dout) {
        cuops_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.variant = c->variant;
        cuops_status_t sg = cuops_dequant_int4_ex(gpu, c->n, c->k, c->group, dq + c->q_off, ldq,
                                                  ds + c->s_byte + c->s_off * ses, c->st,
                                                  c->zeros ? dz + c->z_off : NULL,
                                                  dout + c->o_byte + c->o_off * oes, ldo, c->ot, &opt);
        cudaError_t ce = cudaDeviceSynchronize();
        CHECK(ce == cudaSuccess, "%s: CUDA error %s", what, cudaGetErrorString(ce));
        cudaMemcpy(got, dout + c->o_byte, oelems * oes, cudaMemcpyDeviceToHost);
        /* the one-output-per-thread variants ("..._b1") serve every call; "_b16" is a vector one */
        const size_t vlen = c->variant ? strlen(c->variant) : 0;
        const int scalar_variant = vlen >= 3 && strcmp(c->variant + vlen - 3, "_b1") == 0;
        if (sg == CUOPS_STATUS_NOT_SUPPORTED && c->variant && !scalar_variant) {
            /* a declining variant must leave the output alone */
            uint8_t *poison = (uint8_t *)malloc(oelems * oes);
            tu_poison(poison, c->ot, oelems);
            CHECK(memcmp(poison, got, oelems * oes) == 0, "%s: NOT_SUPPORTED but the output changed", what);
            free(poison);
        } else {
            CHECK(sg == CUOPS_STATUS_SUCCESS, "%s: gpu %s (%s)", what, cuops_status_string(sg), cuops_last_error(gpu));
            cuops_status_t sc = cuops_dequant_int4(cpu, c->n, c->k, c->group, hq + c->q_off, ldq, hs + c->s_off * ses,
                                                   c->st, c->zeros ? hz + c->z_off : NULL, ref + c->o_off * oes,
                                                   ldo, c->ot);
            CHECK(sc == CUOPS_STATUS_SUCCESS, "%s: cpu %s (%s)", what, cuops_status_string(sc), cuops_last_error(cpu));
            if (sg == CUOPS_STATUS_SUCCESS && sc == CUOPS_STATUS_SUCCESS) {
                compared = 1;
                variant_ran[variant_index(c->variant)]++;
                /* the oracle against the formula (every element), then the GPU against the oracle
                 * (the whole buffer: padding and the guard band are compared as poison) */
                int64_t bad_ref = 0, bad = 0;
                for (int64_t r = 0; r < c->n; r++)
                    for (int64_t col = 0; col < c->k; col++) {
                        const int64_t gi = r * ng + col / c->group;
                        const uint32_t q = (hq[c->q_off + r * ldq + col / 2] >> ((col & 1) * 4)) & 15u;
                        const uint32_t z = c->zeros ? hz[c->z_off + gi] : 8u;
                        const float s = (float)tu_get(hs, c->st, (size_t)(c->s_off + gi));
                        const uint32_t want = formula_bits(q, z, s, c->ot);
                        const uint32_t have = elem_bits(ref, oes, c->o_off + r * ldo + col);
                        if (want != have && bad_ref++ < 3)
                            fprintf(stderr, "  oracle r=%lld c=%lld: 0x%x, formula 0x%x\n", (long long)r,
                                    (long long)col, have, want);
                    }
                for (int64_t i = 0; i < (int64_t)oelems; i++) {
                    const uint32_t a = elem_bits(got, oes, i), b = elem_bits(ref, oes, i);
                    if (a != b && bad++ < 5) {
                        const int64_t rel = i - c->o_off;
                        fprintf(stderr, "  elem %lld (row %lld col %lld): gpu 0x%x cpu 0x%x\n", (long long)i,
                                (long long)(rel >= 0 ? rel / ldo : -1), (long long)(rel >= 0 ? rel % ldo : -1), a, b);
                    }
                }
                CHECK(bad_ref == 0, "%s: CPU oracle differs from the formula at %lld elements", what, (long long)bad_ref);
                CHECK(bad == 0, "%s: GPU differs from CPU at %lld elements (padding/guard included)", what, (long long)bad);
                uint8_t *poison = (uint8_t *)malloc(GUARD * oes);
                tu_poison(poison, c->ot, GUARD);
                CHECK(memcmp(got + (oelems - GUARD) * oes, poison, GUARD * oes) == 0, "%s: guard band written", what);
                free(poison);
            }
        }
    }
    cudaFree(dq); cudaFree(ds); cudaFree(dz); cudaFree(dout);
    free(hq); free(hs); free(hz); free(ref); free(got);
    return compared;
}

static dq_case_t mk(int64_t n, int64_t k, int64_t group, cuops_dtype_t st, cuops_dtype_t ot, int zeros)
{
    dq_case_t c;
    memset(&c, 0, sizeof c);
    c.n = n; c.k = k; c.group = group; c.st = st; c.ot = ot; c.zeros = zeros;
    return c;
}

static const cuops_dtype_t types[3] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32};

static void dequant_cases(void)
{
    /* every dtype pair, zeros and symmetric */
    for (int s = 0; s < 3; s++)
        for (int o = 0; o < 3; o++)
            for (int z = 0; z < 2; z++) {
                dq_case_t a = mk(17, 129, 32, types[s], types[o], z);
                run_case(&a);
                dq_case_t b = mk(7, 4098, 128, types[s], types[o], z);
                run_case(&b);
            }
    /* group sizes x odd k x small n */
    const int64_t groups[6] = {32, 64, 128, 2, 6, 130};
    const int64_t ks[5] = {1, 7, 129, 4095, 4098};
    const int64_t ns[2] = {1, 17};
    int i = 0;
    for (int g = 0; g < 6; g++)
        for (int kk = 0; kk < 5; kk++)
            for (int nn = 0; nn < 2; nn++, i++) {
                dq_case_t c = mk(ns[nn], ks[kk], groups[g], types[i % 3], types[(i / 3) % 3], i % 2);
                run_case(&c);
            }
    /* per-channel with an odd k: group_size = k (odd) and k + 2, both one
     * group per row (the API hands the backends the even size k + 1) */
    for (int kk = 0; kk < 4; kk++)
        for (int extra = 0; extra <= 2; extra += 2, i++) {
            const int64_t k = ks[kk];
            dq_case_t c = mk(ns[i % 2], k, k + extra, types[i % 3], types[(i / 3) % 3], i % 2);
            run_case(&c);
        }
    /* aligned rows with a partial last chunk (the auto fast path's tail) */
    for (int o = 0; o < 3; o++) {
        dq_case_t a = mk(17, 4095, 128, types[o], types[o], o % 2);
        a.ldo_pad = 1;
        run_case(&a);
        dq_case_t b = mk(3, 129, 64, types[(o + 1) % 3], types[o], 1);
        b.ldq_pad = 15; b.ldo_pad = 15;
        run_case(&b);
    }
    /* Subnormal scales and products: the 16-bit multiply of the f16 -> f16
     * and bf16 -> bf16 fast path must round them as the fp32 formula does
     * (no flush to zero). f16 below 2^-14 ~ 6.1e-5; bf16 below 2^-126 ~ 1.2e-38.
     * Contiguous rows (the fast layout) and a partial-chunk one. */
    for (int t = 0; t < 2; t++)
        for (int kk = 0; kk < 2; kk++) {
            dq_case_t c = mk(65, kk ? 4095 : 4096, 128, types[t], types[t], 1);
            c.s_lo = t ? -4e-38 : -2e-6;
            c.s_hi = -c.s_lo;
            run_case(&c);
        }
    /* many rows */
    if (!quick) {
        dq_case_t a = mk(1537, 4095, 128, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1);
        run_case(&a);
        dq_case_t b = mk(1537, 4098, 6, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 0);
        run_case(&b);
        dq_case_t c = mk(1537, 256, 64, CUOPS_DTYPE_F32, CUOPS_DTYPE_F32, 1);
        run_case(&c);
    }
    /* layouts: padded strides and offset pointers, every out type */
    const int64_t pads[4][6] = {/* ldq_pad, ldo_pad, q_off, s_off, z_off, o_off */
                                {3, 5, 0, 0, 0, 0}, {16, 8, 0, 0, 0, 0}, {0, 0, 1, 1, 1, 1}, {7, 3, 3, 1, 5, 1}};
    for (int p = 0; p < 4; p++)
        for (int o = 0; o < 3; o++) {
            dq_case_t c = mk(65, p % 2 ? 129 : 4098, p % 2 ? 64 : 128, types[(o + p) % 3], types[o], (p + o) % 2);
            c.ldq_pad = pads[p][0]; c.ldo_pad = pads[p][1];
            c.q_off = pads[p][2]; c.s_off = pads[p][3]; c.z_off = pads[p][4]; c.o_off = pads[p][5];
            run_case(&c);
        }
    /* scales and out between two elements (the API promises any alignment):
     * one byte off for 2-byte types, one to three for f32; auto must find
     * the byte-wise path */
    for (int s = 0; s < 3; s++)
        for (int o = 0; o < 3; o++) {
            dq_case_t c = mk(9, 130, 64, types[s], types[o], (s + o) % 2);
            c.s_byte = 1 + (s == 2 ? o : 0);
            c.o_byte = 1 + (o == 2 ? s : 0);
            run_case(&c);
            c.s_byte = 0;
            run_case(&c);
            c.s_byte = 1;
            c.o_byte = 0;
            run_case(&c);
        }
}

/* Every (n, k, group, ldq_pad, ldo_pad) of `shapes` x every scale type x
 * the first `outs` output types (f16, bf16, f32) x zeros or symmetric, forced
 * on `name`, which must serve each; shape `off_shape` with the output 16
 * bytes into its buffer. */
static void must_serve_sweep(const char *name, const int64_t (*shapes)[5], int nshapes, int outs, int off_shape)
{
    for (int sh = 0; sh < nshapes; sh++)
        for (int s = 0; s < 3; s++)
            for (int o = 0; o < outs; o++)
                for (int z = 0; z < 2; z++) {
                    dq_case_t c = mk(shapes[sh][0], shapes[sh][1], shapes[sh][2], types[s], types[o], z);
                    c.ldq_pad = shapes[sh][3];
                    c.ldo_pad = shapes[sh][4];
                    if (sh == off_shape) c.o_off = 16 / (int64_t)esz(types[o]);
                    c.variant = name;
                    CHECK(run_case(&c), "%s declined %lldx%lld (shape %d)", name, (long long)c.n,
                          (long long)c.k, sh);
                }
}

static void variant_cases(void)
{
    for (int v = 1; v < variant_count; v++) {
        const char *name = variant_names[v];
        dq_case_t cs[8];
        cs[0] = mk(17, 4096, 128, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 1);
        cs[1] = mk(33, 4098, 64, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32, 0);
        cs[2] = mk(5, 129, 32, CUOPS_DTYPE_F32, CUOPS_DTYPE_BF16, 1);
        cs[3] = mk(17, 4095, 128, CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, 1);
        cs[3].o_off = 1; /* misaligned output: only the scalar variants serve it */
        cs[4] = mk(9, 1000, 6, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F16, 1);
        cs[5] = mk(300, 1024, 32, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 0);
        cs[5].ldq_pad = 16; cs[5].ldo_pad = 32; /* aligned padding keeps the fast paths */
        /* k % chunk != 0 with aligned rows: every vector variant takes its element-wise tail */
        cs[6] = mk(17, 4095, 128, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F16, 1);
        cs[6].ldo_pad = 1;
        cs[7] = mk(3, 129, 64, CUOPS_DTYPE_F32, CUOPS_DTYPE_F32, 0);
        cs[7].ldq_pad = 15; cs[7].ldo_pad = 15;
        for (int i = 0; i < 8; i++) {
            cs[i].variant = name;
            run_case(&cs[i]);
        }
    }
    /* The lane-pair variants (hoisted_b16_pair*): lanes 2m and 2m+1 store
     * halves of each other's chunk, so every way a pair can be mixed must
     * come out exact and leave the rest poisoned. k = 4095: 256 chunks per
     * row, the partial last one on an odd lane whose even partner is full.
     * k = 200: 13 chunks per row (pairs straddle rows), the partial last one
     * (8 outputs) on an even lane in every other row; group 48 = 3 chunks (a
     * division). 37 x 208: 481 full chunks, so the last warp holds one valid
     * lane whose partner is past the end. 3 x 24: a row of one full and one
     * partial chunk, 6 valid lanes. 9 x 4096 with ldo + 8 and the output 16
     * bytes in: rows that start half a sector off (16-bit out). Every scale
     * type x f16 / bf16 / f32 out x zeros or symmetric; each must be served. */
    for (int v = 1; v < variant_count; v++) {
        const char *name = variant_names[v];
        if (strstr(name, "_pair") == NULL) continue;
        static const int64_t shapes[5][5] = {/* n, k, group, ldq_pad, ldo_pad */
                                             {37, 4095, 128, 0, 1}, {37, 200, 48, 4, 0}, {37, 208, 16, 0, 0},
                                             {3, 24, 16, 4, 8}, {9, 4096, 128, 0, 8}};
        must_serve_sweep(name, shapes, 5, 3, 4);
    }

    /* The warp-transposed variants (hoisted_b16_wt*): store i of lane l
     * writes the 8 outputs of piece 32 i + l of its warp's 1 KB, converted
     * from a packed word and a zero and scale that another lane loaded, so a
     * wrong source lane or word shows in every row. k a multiple of 512 (a
     * warp's chunks in one row): 37 x 512 (one warp per row), 5 x 2048
     * group 32 with padded packed rows and output rows 8 elements longer,
     * 3 x 1536 group 64 with the output 16 bytes in; every scale type x
     * f16 / bf16 out x zeros or symmetric; each must be served. f32 out and
     * k = 528 (a warp's chunks across two rows) must be declined. */
    for (int v = 1; v < variant_count; v++) {
        const char *name = variant_names[v];
        if (strstr(name, "_wt") == NULL) continue;
        static const int64_t shapes[3][5] = {/* n, k, group, ldq_pad, ldo_pad */
                                             {37, 512, 128, 0, 0}, {5, 2048, 32, 8, 8}, {3, 1536, 64, 0, 24}};
        must_serve_sweep(name, shapes, 3, 2, 2);
        dq_case_t f = mk(9, 1024, 128, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, 1);
        f.variant = name;
        CHECK(!run_case(&f), "%s served f32 out", name);
        dq_case_t r = mk(9, 528, 16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F16, 0);
        r.variant = name;
        CHECK(!run_case(&r), "%s served k = 528", name);
    }

    /* The persistent variants loop: a warp takes units w, w + W, ... and
     * alternates two register buffers (two shared buffers for the bulk
     * stores), and the grid is sized to what is resident, so only a call
     * larger than one wave reaches the second buffer, the refills and the
     * wait on an earlier bulk store. 2113 x 4600 f16 is 1,214,975 chunks of
     * 8: on an H200 3 units per warp at U = 4 (~4200 resident warps), 4 at
     * U = 2, 6 at U = 1, so every buffer is refilled at least once; a
     * partial last unit; 575 chunks per row and 5 per group of 40 (not
     * powers of two: the magic division), bf16 -> bf16 (the packed-half
     * conversion). Then f32 out (4 outputs per chunk) with symmetric zeros,
     * f16 -> f16 with padded rows (the general layout) and f32 -> bf16 (the
     * fp32 conversion). */
    int major = 0, dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    for (int v = 1; v < variant_count; v++) {
        const char *name = variant_names[v];
        const int bulk = strncmp(name, "bulk_", 5) == 0;
        if (strncmp(name, "persistent_", 11) != 0 && !bulk) continue;
        /* contiguous, aligned, chunk-divisible: every one of them must serve it */
        const int must_serve = !bulk || major == 9;
        dq_case_t a = mk(2113, 4600, 40, CUOPS_DTYPE_BF16, CUOPS_DTYPE_BF16, 1);
        a.variant = name;
        CHECK(run_case(&a) || !must_serve, "%s declined 2113x4600 bf16", name);
        if (!quick) {
            dq_case_t b = mk(1031, 2000, 40, CUOPS_DTYPE_F16, CUOPS_DTYPE_F32, 0);
            b.variant = name;
            CHECK(run_case(&b) || !must_serve, "%s declined 1031x2000 f32", name);
            /* padded output: the general (non-contiguous) layout; bulk declines */
            dq_case_t c = mk(2113, 4600, 40, CUOPS_DTYPE_F16, CUOPS_DTYPE_F16, 0);
            c.ldo_pad = 8;
            c.variant = name;
            CHECK(run_case(&c) || bulk, "%s declined 2113x4600 f16 ldo+8", name);
            dq_case_t e = mk(2113, 4600, 40, CUOPS_DTYPE_F32, CUOPS_DTYPE_BF16, 1);
            e.variant = name;
            CHECK(run_case(&e) || !must_serve, "%s declined 2113x4600 f32->bf16", name);
        }
    }

    /* an unknown name is refused */
    cuops_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.variant = "no_such_variant";
    CHECK_STATUS(cuops_dequant_int4_ex(gpu, 1, 2, 2, (const void *)16, 1, (const void *)16, CUOPS_DTYPE_F16, NULL,
                                       (void *)16, 2, CUOPS_DTYPE_F16, &opt),
                 CUOPS_STATUS_NOT_SUPPORTED);
    /* bulk-copy variants exist on sm_90 only; elsewhere they decline every call */
    for (int v = 0; v < variant_count; v++) {
        if (major != 9 && strncmp(variant_names[v], "bulk_", 5) == 0) {
            CHECK(variant_ran[v] == 0, "variant %s ran on sm_%d", variant_names[v], major);
            continue;
        }
        CHECK(variant_ran[v] > 0, "variant %s was never compared", variant_names[v]);
    }
}

/* 32768 x 4096 (2^27 outputs: auto's hoisted_b16_wt_t128 path) on the GPU, every row
 * checked against the CPU backend (a second of host time; 50 sampled rows let a bug confined
 * to a few rows through). */
static void large_case(void)
{
    const int64_t n = 32768, k = 4096, group = 128, ng = k / group, ldq = k / 2, ldo = k;
    const size_t qb = (size_t)(n * ldq), sb = (size_t)(n * ng) * 2, zb = (size_t)(n * ng);
    const size_t ob = (size_t)(n * ldo + GUARD) * 2;
    uint8_t *hq = (uint8_t *)malloc(qb), *hs = (uint8_t *)malloc(sb), *hz = (uint8_t *)malloc(zb);
    uint8_t *got = (uint8_t *)malloc(ob), *ref = (uint8_t *)malloc((size_t)(n * ldo) * 2);
    for (size_t i = 0; i < qb; i++) hq[i] = (uint8_t)tu_rand_u64();
    for (size_t i = 0; i < zb; i++) hz[i] = (uint8_t)(tu_rand_u64() & 15);
    tu_fill_float(hs, CUOPS_DTYPE_BF16, (size_t)(n * ng), -1.0, 1.0);
    tu_poison(got, CUOPS_DTYPE_BF16, ob / 2);
    uint8_t *dq = (uint8_t *)dev_copy(hq, qb), *ds = (uint8_t *)dev_copy(hs, sb);
    uint8_t *dz = (uint8_t *)dev_copy(hz, zb), *dout = (uint8_t *)dev_copy(got, ob);
    CHECK(dq && ds && dz && dout && ref, "large: allocation failed");
    if (dq && ds && dz && dout && ref) {
        CHECK_STATUS(cuops_dequant_int4(gpu, n, k, group, dq, ldq, ds, CUOPS_DTYPE_BF16, dz, dout, ldo, CUOPS_DTYPE_BF16),
                     CUOPS_STATUS_SUCCESS);
        fprintf(stderr, "large: kernel %s\n", cuops_last_kernel(gpu));
        CHECK(strcmp(cuops_last_kernel(gpu), "dequant_hoisted_b16_wt_t128") == 0,
              "large: auto ran %s, not dequant_hoisted_b16_wt_t128 (2^27 outputs)", cuops_last_kernel(gpu));
        CHECK(cudaDeviceSynchronize() == cudaSuccess, "large: CUDA error");
        cudaMemcpy(got, dout, ob, cudaMemcpyDeviceToHost);
        int64_t bad = 0;
        CHECK_STATUS(cuops_dequant_int4(cpu, n, k, group, hq, ldq, hs, CUOPS_DTYPE_BF16, hz, ref,
                                        ldo, CUOPS_DTYPE_BF16),
                     CUOPS_STATUS_SUCCESS);
        for (int64_t r = 0; r < n; r++)
            if (memcmp(ref + (size_t)(r * ldo) * 2, got + (size_t)(r * ldo) * 2, (size_t)k * 2) != 0 &&
                bad++ < 3)
                fprintf(stderr, "  large: row %lld differs\n", (long long)r);
        CHECK(bad == 0, "large: %lld of %lld rows differ", (long long)bad, (long long)n);
        uint8_t poison[GUARD * 2];
        tu_poison(poison, CUOPS_DTYPE_BF16, GUARD);
        CHECK(memcmp(got + (size_t)(n * ldo) * 2, poison, GUARD * 2) == 0, "large: guard band written");
    }
    cudaFree(dq); cudaFree(ds); cudaFree(dz); cudaFree(dout);
    free(hq); free(hs); free(hz); free(got); free(ref);
}

/* Auto from 2^24 outputs: the warp-transposed stores where they serve
 * (16-bit out, k a multiple of 512), hoisted_b16 where they do not (k = 4112:
 * packed rows of 2056 bytes, a multiple of its 8-byte loads); each call
 * compared with the CPU over the whole output. */
static void auto_choice_cases(void)
{
    const struct {
        int64_t n, k;
        cuops_dtype_t ot;
        const char *kernel;
    } cases[3] = {{4096, 4096, CUOPS_DTYPE_F16, "dequant_hoisted_b16_wt_t128"},
                  {4096, 4112, CUOPS_DTYPE_BF16, "dequant_hoisted_b16"},
                  {4096, 4096, CUOPS_DTYPE_F32, "dequant_hoisted_b16"}};
    for (int i = 0; i < 3; i++) {
        dq_case_t c = mk(cases[i].n, cases[i].k, 128, CUOPS_DTYPE_F16, cases[i].ot, 1);
        CHECK(run_case(&c), "auto declined %lldx%lld", (long long)c.n, (long long)c.k);
        CHECK(strcmp(cuops_last_kernel(gpu), cases[i].kernel) == 0, "auto ran %s for %lldx%lld %s, not %s",
              cuops_last_kernel(gpu), (long long)c.n, (long long)c.k,
              cases[i].ot == CUOPS_DTYPE_F32 ? "f32" : "16-bit", cases[i].kernel);
    }
}

/* ---- importers: GPU against CPU ------------------------------------------ */

static void import_case(int awq, int version, int64_t n, int64_t k, int64_t group, cuops_dtype_t st, int64_t pad,
                        int force_overflow)
{
    const int64_t ng = (k + group - 1) / group, ldq = (k + 1) / 2 + pad;
    const size_t es = esz(st);
    const size_t qw_words = awq ? (size_t)(k * (n / 8)) : (size_t)(k / 8 * n);
    const size_t qz_words = (size_t)(ng * (n / 8));
    uint32_t *qw = (uint32_t *)malloc(qw_words * 4), *qz = (uint32_t *)malloc(qz_words * 4);
    uint8_t *sc = (uint8_t *)malloc((size_t)(ng * n) * es);
    for (size_t i = 0; i < qw_words; i++) qw[i] = (uint32_t)tu_rand_u64();
    for (size_t i = 0; i < qz_words; i++) {
        qz[i] = (uint32_t)tu_rand_u64();
        if (version == 1 && !awq) qz[i] &= 0x77777777u; /* no stored 15 */
    }
    if (force_overflow) qz[qz_words / 2] |= 0xF0u;
    tu_fill_float(sc, st, (size_t)(ng * n), -0.1, 0.1);
    const size_t ob = (size_t)(n * ldq), sb = (size_t)(n * ng) * es, zb = (size_t)(n * ng);
    uint8_t *rq = (uint8_t *)malloc(ob), *rs = (uint8_t *)malloc(sb), *rz = (uint8_t *)malloc(zb);
    uint8_t *gq = (uint8_t *)malloc(ob), *gs = (uint8_t *)malloc(sb), *gz = (uint8_t *)malloc(zb);
    memset(rq, 0xA5, ob); memset(rs, 0xA5, sb); memset(rz, 0xA5, zb);
    int32_t *dqw = (int32_t *)dev_copy(qw, qw_words * 4), *dqz = (int32_t *)dev_copy(qz, qz_words * 4);
    void *dsc = dev_copy(sc, (size_t)(ng * n) * es);
    uint8_t *doq = (uint8_t *)dev_copy(rq, ob), *dos = (uint8_t *)dev_copy(rs, sb), *doz = (uint8_t *)dev_copy(rz, zb);
    char what[160];
    snprintf(what, sizeof what, "import %s v%d n=%lld k=%lld group=%lld es=%zu pad=%lld%s", awq ? "awq" : "gptq", version,
             (long long)n, (long long)k, (long long)group, es, (long long)pad, force_overflow ? " overflow" : "");
    cuops_status_t sg, sc_;
    if (awq) {
        sg = cuops_import_awq(gpu, n, k, group, dqw, dqz, dsc, st, doq, ldq, dos, doz);
        sc_ = cuops_import_awq(cpu, n, k, group, (int32_t *)qw, (int32_t *)qz, sc, st, rq, ldq, rs, rz);
    } else {
        sg = cuops_import_gptq(gpu, n, k, group, dqw, dqz, dsc, st, version, doq, ldq, dos, doz);
        sc_ = cuops_import_gptq(cpu, n, k, group, (int32_t *)qw, (int32_t *)qz, sc, st, version, rq, ldq, rs, rz);
    }
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "%s: CUDA error", what);
    cudaMemcpy(gq, doq, ob, cudaMemcpyDeviceToHost);
    cudaMemcpy(gs, dos, sb, cudaMemcpyDeviceToHost);
    cudaMemcpy(gz, doz, zb, cudaMemcpyDeviceToHost);
    const cuops_status_t want = force_overflow ? CUOPS_STATUS_NOT_SUPPORTED : CUOPS_STATUS_SUCCESS;
    CHECK(sg == want, "%s: gpu %s (%s)", what, cuops_status_string(sg), cuops_last_error(gpu));
    CHECK(sc_ == want, "%s: cpu %s (%s)", what, cuops_status_string(sc_), cuops_last_error(cpu));
    /* a refusal names no kernel, although the GPU ran its overflow check before refusing */
    CHECK(sg == CUOPS_STATUS_SUCCESS || cuops_last_kernel(gpu)[0] == '\0',
          "%s: refused, yet last_kernel is '%s'", what, cuops_last_kernel(gpu));
    /* identical outputs, padding included (both untouched on a refusal) */
    CHECK(memcmp(gq, rq, ob) == 0, "%s: qweight_out differs", what);
    CHECK(memcmp(gs, rs, sb) == 0, "%s: scales_out differs", what);
    CHECK(memcmp(gz, rz, zb) == 0, "%s: zeros_out differs", what);
    cudaFree(dqw); cudaFree(dqz); cudaFree(dsc); cudaFree(doq); cudaFree(dos); cudaFree(doz);
    free(qw); free(qz); free(sc); free(rq); free(rs); free(rz); free(gq); free(gs); free(gz);
}

static void import_cases(void)
{
    for (int t = 0; t < 3; t++) {
        import_case(0, 1, 64, 256, 128, types[t], 0, 0);
        import_case(0, 2, 136, 264, 32, types[t], 5, 0);
        import_case(0, 2, 8, 96, 6, types[t], 1, 0);
        import_case(1, 2, 64, 256, 128, types[t], 0, 0);
        import_case(1, 2, 136, 4095, 128, types[t], 3, 0);
        import_case(1, 2, 8, 7, 2, types[t], 0, 0);
    }
    import_case(0, 1, 64, 256, 64, CUOPS_DTYPE_F16, 2, 1);
    /* AWQ per channel with an odd k: group_size = k */
    import_case(1, 2, 8, 33, 33, CUOPS_DTYPE_BF16, 1, 0);
    if (!quick) import_case(0, 2, 4096, 4096, 128, CUOPS_DTYPE_F16, 0, 0);
}

/* ---- random cases of auto ------------------------------------------------ */

/* Auto picks its kernel by output count, k, out type and alignment
 * (choose_auto in dequant_dispatch.cu: the warp-transposed or b16 kernels
 * from 2^24 outputs, warp_coalesced x1 / x2 / x4 by chunks per resident
 * thread, else the widest hoisted_bN whose loads and stores line up, else
 * the scalar path), so each case here draws its shape and placement at
 * random: k log-uniform up to 16384, a multiple of 512 (the warp-transposed
 * stores) or within 3 of a multiple of 128; group 32 / 64 / 128, another
 * even size, a multiple of 16, k or more (one group per row, odd too); n
 * for a log-uniform output count up to 2^25 (2^22 quick), or straddling one
 * of auto's lines (2^24 outputs, the x2 / x4 chunk counts); now and then n
 * or k = 0 or tiny (subnormal) scales; every scale / out type, zeros or
 * NULL; half the cases with rows and pointers on the vector kernels'
 * alignment, half with padding and offsets drawn freely (scales and out
 * between two elements now and then). run_case checks each as every case
 * above is checked.
 *
 * Case i draws from its own seed (CUOPS_TEST_SEED and i), so a failure,
 * printed with that seed and i, replays with the same CUOPS_TEST_SEED.
 * Cost on an H100 host: outputs average ~2M per log-uniform case and ~9M
 * per case at a line (1 in 6), at ~40 ns of host work each (fill, the CPU
 * oracle, the formula and the whole-buffer compare; the GPU's share is
 * negligible), so the default 150 cases take ~20 s (18 s measured). */
static uint64_t g_seed;

/* 0 half the time, else a multiple of `step` or any small count */
static int64_t pick_offset(int64_t step)
{
    const int64_t r = tu_rand_below(4);
    return r < 2 ? 0 : r == 2 ? step * (1 + tu_rand_below(3)) : 1 + tu_rand_below(2 * step);
}

static dq_case_t random_case(int64_t max_outputs, int64_t sms)
{
    dq_case_t c;
    memset(&c, 0, sizeof c);
    c.st = types[tu_rand_below(3)];
    c.ot = types[tu_rand_below(3)];
    c.zeros = (int)tu_rand_below(2);
    const int64_t ses = (int64_t)esz(c.st), oes = (int64_t)esz(c.ot), c16 = 16 / oes;
    const int64_t kind = tu_rand_below(3);
    c.k = kind == 0 ? tu_rand_log(1, 16384) : kind == 1 ? 512 * tu_rand_log(1, 16) : 128 * tu_rand_log(1, 64) + tu_rand_below(7) - 3;
    static const int64_t common[3] = {32, 64, 128};
    const int64_t g = tu_rand_below(8);
    c.group = g < 4   ? common[g % 3]
              : g == 4 ? 2 * (1 + tu_rand_below(128))  /* any even size */
              : g == 5 ? 16 * (1 + tu_rand_below(128)) /* whole chunks, rarely a power of two */
              : g == 6 ? c.k
                       : c.k + tu_rand_below(64);
    if (c.group < 1) c.group = 2; /* k = 0 */
    /* auto's lines in outputs: 2^24, and warp_coalesced_x2 / x4's chunk counts */
    const int64_t lines[3] = {(int64_t)1 << 24, 2 * 2048 * sms * c16, 4 * 2048 * sms * c16};
    const int64_t line = lines[tu_rand_below(3)];
    if (tu_rand_below(6) == 0 && line <= max_outputs)
        c.n = line / c.k + tu_rand_below(3) - 1; /* just below, at or just above it */
    else
        c.n = tu_rand_log(1, max_outputs) / c.k;
    if (c.n < 1) c.n = 1;
    if (tu_rand_below(50) == 0) { /* an empty call writes nothing */
        if (tu_rand_below(2)) c.n = 0;
        else c.k = 0;
    }
    if (tu_rand_below(10) == 0) {
        c.s_hi = c.st == CUOPS_DTYPE_F16 ? 2e-6 : 4e-38;
        c.s_lo = -c.s_hi;
    }
    const int64_t row = (c.k + 1) / 2;
    if (tu_rand_below(2)) {
        /* half the cases lay rows and pointers out as the vector kernels
         * need (8-byte packed loads, 16-byte stores), where only the group
         * size can turn them down; independent draws would rarely do so */
        c.ldq_pad = (8 - row % 8) % 8 + 8 * tu_rand_below(2);
        c.ldo_pad = (c16 - c.k % c16) % c16 + c16 * tu_rand_below(2);
        c.q_off = 8 * tu_rand_below(3);
        c.s_off = tu_rand_below(4);
        c.z_off = tu_rand_below(17);
        c.o_off = c16 * tu_rand_below(3);
    } else {
        c.ldq_pad = tu_rand_below(2) ? 0 : tu_rand_below(2) ? 8 * (1 + tu_rand_below(2)) : 1 + tu_rand_below(15);
        c.ldo_pad = tu_rand_below(2) ? 0 : tu_rand_below(2) ? c16 * (1 + tu_rand_below(2)) : 1 + tu_rand_below(2 * c16);
        c.q_off = pick_offset(8);
        c.s_off = pick_offset(16 / ses);
        c.z_off = pick_offset(16);
        c.o_off = pick_offset(c16);
        if (tu_rand_below(8) == 0) c.s_byte = (int)(1 + tu_rand_below(ses - 1));
        if (tu_rand_below(8) == 0) c.o_byte = (int)(1 + tu_rand_below(oes - 1));
    }
    if (c.k == 0) { /* ldq and ldo >= 1 */
        c.ldq_pad += c.ldq_pad == 0 ? 8 : 0;
        c.ldo_pad += c.ldo_pad == 0 ? c16 : 0;
    }
    return c;
}

static void random_cases(void)
{
    const int cases = tu_random_cases(quick ? 15 : 150);
    int dev = 0, sms = 0, passed = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    const int64_t max_outputs = quick ? (int64_t)1 << 22 : (int64_t)1 << 25;
    const uint64_t saved = tu_rng_state;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < cases; i++) {
        tu_seed(tu_case_seed(g_seed, i));
        const dq_case_t c = random_case(max_outputs, sms > 0 ? sms : 132);
        const int failed = tu_failed;
        const int ok = run_case(&c) && tu_failed == failed;
        char what[256];
        describe(&c, what, sizeof what);
        CHECK(ok, "random case %d of CUOPS_TEST_SEED=%llu (kernel '%s'): %s", i, (unsigned long long)g_seed,
              cuops_last_kernel(gpu), what);
        passed += ok;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tu_rng_state = saved;
    printf("random dequant cases (auto): %d run, %d passed (%.1f s)\n", cases, passed,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
}

int main(void)
{
    g_seed = tu_seed_from_env();
    quick = getenv("CUOPS_TEST_QUICK") != NULL;
    if (!tu_gpu_handle(&gpu)) return tu_finish("test_gpu_dequant");
    CHECK_STATUS(cuops_create(&cpu, CUOPS_DEVICE_CPU), CUOPS_STATUS_SUCCESS);
    if (cpu == NULL) return tu_finish("test_gpu_dequant");

    CHECK_STATUS(cuops_variant_names("dequant", &variant_names, &variant_count), CUOPS_STATUS_SUCCESS);
    CHECK(variant_count >= 10 && variant_count <= 32 && strcmp(variant_names[0], "auto") == 0,
          "dequant variants: %d, first %s", variant_count, variant_count ? variant_names[0] : "-");
    if (variant_count > 32) variant_count = 32;

    /* CUOPS_TEST_RANDOM_ONLY=1: the random cases alone (a longer search) */
    if (!tu_env_flag("CUOPS_TEST_RANDOM_ONLY")) {
        dequant_cases();
        variant_cases();
        if (!quick) {
            large_case();
            auto_choice_cases();
        }
        import_cases();
    }
    random_cases();

    cuops_destroy(gpu);
    cuops_destroy(cpu);
    return tu_finish("test_gpu_dequant");
}
