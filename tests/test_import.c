/*
 * test_import.c - GPTQ / AWQ importers on the CPU backend: random seed-format
 * weights are packed into each checkpoint format by packers written here
 * (independently of the library), imported back, and compared exactly;
 * hand-built words pin the nibble orders; bad arguments return their status
 * and touch nothing. The GPU importers are compared with these CPU ones in
 * test_gpu_dequant (it has the CUDA runtime to hold device buffers).
 */
#include "test_util.h"

#define SENTINEL 0xA5

typedef struct seed_weights {
    int64_t n, k, group, ng;
    cuops_dtype_t st;
    uint8_t *w;       /* [n, k] nibbles, one per byte (unpacked) */
    uint8_t *zeros;   /* [n, ng] */
    uint8_t *scales;  /* [n, ng] raw elements */
} seed_weights_t;

static seed_weights_t make_seed(int64_t n, int64_t k, int64_t group, cuops_dtype_t st, int zero_lo)
{
    seed_weights_t s;
    s.n = n; s.k = k; s.group = group; s.ng = (k + group - 1) / group; s.st = st;
    size_t es = st == CUOPS_DTYPE_F32 ? 4 : 2;
    s.w = malloc((size_t)(n * k));
    s.zeros = malloc((size_t)(n * s.ng));
    s.scales = malloc((size_t)(n * s.ng) * es);
    for (int64_t i = 0; i < n * k; i++) s.w[i] = (uint8_t)(tu_rand_u64() & 15);
    for (int64_t i = 0; i < n * s.ng; i++) s.zeros[i] = (uint8_t)(zero_lo + (int)(tu_rand_u64() % (uint64_t)(16 - zero_lo)));
    tu_fill_float(s.scales, st, (size_t)(n * s.ng), -0.05, 0.05);
    return s;
}

static void free_seed(seed_weights_t *s) { free(s->w); free(s->zeros); free(s->scales); }

static size_t esize(cuops_dtype_t t) { return t == CUOPS_DTYPE_F32 ? 4 : 2; }

/* [n, ng] -> [ng, n] */
static uint8_t *transpose_scales(const seed_weights_t *s)
{
    size_t es = esize(s->st);
    uint8_t *t = malloc((size_t)(s->n * s->ng) * es);
    for (int64_t r = 0; r < s->n; r++)
        for (int64_t g = 0; g < s->ng; g++)
            memcpy(t + (size_t)(g * s->n + r) * es, s->scales + (size_t)(r * s->ng + g) * es, es);
    return t;
}

/* GPTQ: qweight [k/8, n] (slot = k%8), qzeros [ng, n/8] (slot = n%8), v1 stores zero-1. */
static void pack_gptq(const seed_weights_t *s, int version, int32_t **qw, int32_t **qz)
{
    uint32_t *w = calloc((size_t)(s->k / 8 * s->n), 4);
    uint32_t *z = calloc((size_t)(s->ng * (s->n / 8)), 4);
    for (int64_t r = 0; r < s->n; r++)
        for (int64_t c = 0; c < s->k; c++)
            w[(c / 8) * s->n + r] |= (uint32_t)s->w[r * s->k + c] << (4 * (c % 8));
    for (int64_t r = 0; r < s->n; r++)
        for (int64_t g = 0; g < s->ng; g++) {
            uint32_t stored = (uint32_t)(s->zeros[r * s->ng + g] - (version == 1 ? 1 : 0)) & 15u;
            z[g * (s->n / 8) + r / 8] |= stored << (4 * (r % 8));
        }
    *qw = (int32_t *)w;
    *qz = (int32_t *)z;
}

/* AWQ: qweight [k, n/8], qzeros [ng, n/8]; slot p of a word holds column offset order[p]. */
static const int awq_order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
static int awq_slot(int o)
{
    for (int p = 0; p < 8; p++)
        if (awq_order[p] == o) return p;
    return -1;
}
static void pack_awq(const seed_weights_t *s, int32_t **qw, int32_t **qz)
{
    uint32_t *w = calloc((size_t)(s->k * (s->n / 8)), 4);
    uint32_t *z = calloc((size_t)(s->ng * (s->n / 8)), 4);
    for (int64_t r = 0; r < s->n; r++)
        for (int64_t c = 0; c < s->k; c++)
            w[c * (s->n / 8) + r / 8] |= (uint32_t)s->w[r * s->k + c] << (4 * awq_slot((int)(r % 8)));
    for (int64_t r = 0; r < s->n; r++)
        for (int64_t g = 0; g < s->ng; g++)
            z[g * (s->n / 8) + r / 8] |= (uint32_t)s->zeros[r * s->ng + g] << (4 * awq_slot((int)(r % 8)));
    *qw = (int32_t *)w;
    *qz = (int32_t *)z;
}

/* Compare the importer's output with the seed weights it was packed from. */
static int check_imported(const seed_weights_t *s, const uint8_t *qout, int64_t ldq, const uint8_t *sout,
                          const uint8_t *zout, const char *what)
{
    int bad = 0;
    int64_t rb = (s->k + 1) / 2;
    for (int64_t r = 0; r < s->n && bad < 5; r++) {
        for (int64_t b = 0; b < ldq; b++) {
            uint8_t want;
            if (b < rb) {
                int64_t c = 2 * b;
                want = (uint8_t)(s->w[r * s->k + c] | ((c + 1 < s->k ? s->w[r * s->k + c + 1] : 0) << 4));
            } else {
                want = SENTINEL; /* padding must stay untouched */
            }
            if (qout[r * ldq + b] != want) {
                if (bad++ < 5)
                    fprintf(stderr, "  %s: qweight row %lld byte %lld = 0x%02x, want 0x%02x\n", what,
                            (long long)r, (long long)b, qout[r * ldq + b], want);
            }
        }
    }
    size_t es = esize(s->st);
    if (memcmp(sout, s->scales, (size_t)(s->n * s->ng) * es) != 0) {
        fprintf(stderr, "  %s: scales differ\n", what);
        bad++;
    }
    if (memcmp(zout, s->zeros, (size_t)(s->n * s->ng)) != 0) {
        fprintf(stderr, "  %s: zeros differ\n", what);
        bad++;
    }
    return bad;
}

static void round_trip(cuops_handle_t h, int awq, int version, int64_t n, int64_t k, int64_t group,
                       cuops_dtype_t st, int64_t pad)
{
    seed_weights_t s = make_seed(n, k, group, st, (!awq && version == 1) ? 1 : 0);
    int32_t *qw, *qz;
    if (awq) pack_awq(&s, &qw, &qz);
    else pack_gptq(&s, version, &qw, &qz);
    uint8_t *sc = transpose_scales(&s);
    int64_t ldq = (k + 1) / 2 + pad;
    size_t es = esize(st);
    uint8_t *qout = malloc((size_t)(n * ldq));
    uint8_t *sout = malloc((size_t)(n * s.ng) * es);
    uint8_t *zout = malloc((size_t)(n * s.ng));
    memset(qout, SENTINEL, (size_t)(n * ldq));
    memset(sout, SENTINEL, (size_t)(n * s.ng) * es);
    memset(zout, SENTINEL, (size_t)(n * s.ng));
    cuops_status_t r = awq ? cuops_import_awq(h, n, k, group, qw, qz, sc, st, qout, ldq, sout, zout)
                           : cuops_import_gptq(h, n, k, group, qw, qz, sc, st, version, qout, ldq, sout, zout);
    char what[160];
    snprintf(what, sizeof what, "%s%s n=%lld k=%lld group=%lld scale=%d pad=%lld", awq ? "awq" : "gptq_v",
             awq ? "" : (version == 1 ? "1" : "2"), (long long)n, (long long)k, (long long)group, (int)st,
             (long long)pad);
    CHECK(r == CUOPS_STATUS_SUCCESS, "%s: %s (%s)", what, cuops_status_string(r), cuops_last_error(h));
    if (r == CUOPS_STATUS_SUCCESS) {
        int bad = check_imported(&s, qout, ldq, sout, zout, what);
        CHECK(bad == 0, "%s: %d mismatches", what, bad);
    }
    free(qw); free(qz); free(sc); free(qout); free(sout); free(zout);
    free_seed(&s);
}

/* Hand-built words: pins the documented nibble orders independently of the packers. */
static void hand_built(cuops_handle_t h)
{
    /* GPTQ n=8, k=8, one group: qweight[0][r] holds W[r, 0..7] in slots 0..7. */
    int32_t qw[8], qz[1];
    uint16_t sc[8];
    for (int r = 0; r < 8; r++) { qw[r] = 0; sc[r] = cuops_float_to_half(0.5f + (float)r); }
    qw[0] = (int32_t)0x76543210u;           /* W[0, c] = c */
    qw[3] = (int32_t)0x0000F000u;           /* W[3, 3] = 15 */
    qz[0] = (int32_t)0x01234567u;           /* v2: zero of row r = nibble r: 7,6,5,4,3,2,1,0 */
    uint8_t qout[8 * 4], zout[8];
    uint16_t sout[8];
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F16, 2, qout, 4, sout, zout),
                 CUOPS_STATUS_SUCCESS);
    CHECK(qout[0] == 0x10 && qout[1] == 0x32 && qout[2] == 0x54 && qout[3] == 0x76,
          "gptq row 0 bytes %02x %02x %02x %02x", qout[0], qout[1], qout[2], qout[3]);
    CHECK(qout[3 * 4 + 1] == 0xF0, "gptq W[3,3] byte = %02x, want f0", qout[3 * 4 + 1]);
    CHECK(zout[0] == 7 && zout[1] == 6 && zout[7] == 0, "gptq zeros %d %d %d", zout[0], zout[1], zout[7]);
    CHECK(sout[5] == sc[5], "gptq scale row 5");
    /* v1 adds one to every stored zero */
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F16, 1, qout, 4, sout, zout),
                 CUOPS_STATUS_SUCCESS);
    CHECK(zout[0] == 8 && zout[7] == 1, "gptq v1 zeros %d %d", zout[0], zout[7]);

    /* AWQ n=8, k=2: word [c][0], slot p holds row {0,2,4,6,1,3,5,7}[p]. */
    int32_t aw[2] = {(int32_t)0x000A0000u /* slot 4 -> row 1 */, (int32_t)0x30000000u /* slot 7 -> row 7 */};
    int32_t az[1] = {(int32_t)0x00000050u /* slot 1 -> row 2 */};
    uint8_t aq[8], azout[8];
    uint16_t asout[8];
    CHECK_STATUS(cuops_import_awq(h, 8, 2, 2, aw, az, sc, CUOPS_DTYPE_F16, aq, 1, asout, azout),
                 CUOPS_STATUS_SUCCESS);
    CHECK(aq[1] == 0x0A && aq[7] == 0x30 && aq[0] == 0 && aq[2] == 0, "awq bytes r1=%02x r7=%02x r0=%02x",
          aq[1], aq[7], aq[0]);
    CHECK(azout[2] == 5 && azout[0] == 0, "awq zero row 2 = %d", azout[2]);
}

static int all_sentinel(const void *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        if (((const uint8_t *)p)[i] != SENTINEL) return 0;
    return 1;
}

/* A refused call: its status, no byte of any output written (each refilled
 * with the sentinel first) and, on a handle, a detail in cuops_last_error. */
#define REFUSED(hh, expected, call)                                                        \
    do {                                                                                   \
        memset(qout, SENTINEL, sizeof qout);                                               \
        memset(sout, SENTINEL, sizeof sout);                                               \
        memset(zout, SENTINEL, sizeof zout);                                               \
        CHECK_STATUS((call), (expected));                                                  \
        CHECK(all_sentinel(qout, sizeof qout) && all_sentinel(sout, sizeof sout) &&        \
                  all_sentinel(zout, sizeof zout),                                         \
              "line %d: a refused call wrote an output", __LINE__);                        \
        if ((hh) != NULL)                                                                  \
            CHECK(cuops_last_error(hh)[0] != '\0', "line %d: no detail for a refused call", \
                  __LINE__);                                                               \
    } while (0)

static void bad_arguments(cuops_handle_t h)
{
    int32_t qw[64] = {0}, qz[8] = {0};
    uint16_t sc[64] = {0};
    uint8_t qout[256], zout[64];
    uint16_t sout[64];
    const cuops_dtype_t F16 = CUOPS_DTYPE_F16;
    const cuops_status_t INV = CUOPS_STATUS_INVALID_VALUE;
    /* n % 8, k % 8, an odd group below k, group 0, version 3, a short ldq_out */
    REFUSED(h, INV, cuops_import_gptq(h, 12, 8, 8, qw, qz, sc, F16, 2, qout, 4, sout, zout));
    REFUSED(h, INV, cuops_import_gptq(h, 8, 12, 4, qw, qz, sc, F16, 2, qout, 6, sout, zout));
    REFUSED(h, INV, cuops_import_gptq(h, 8, 8, 3, qw, qz, sc, F16, 2, qout, 4, sout, zout));
    REFUSED(h, INV, cuops_import_gptq(h, 8, 8, 0, qw, qz, sc, F16, 2, qout, 4, sout, zout));
    REFUSED(h, INV, cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, F16, 3, qout, 4, sout, zout));
    REFUSED(h, INV, cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, F16, 2, qout, 3, sout, zout));
    REFUSED(h, INV, cuops_import_gptq(h, 8, 8, 8, NULL, qz, sc, F16, 2, qout, 4, sout, zout));
    REFUSED(h, INV, cuops_import_awq(h, 8, 8, 8, qw, qz, sc, F16, qout, 4, sout, NULL));
    REFUSED(h, INV, cuops_import_awq(h, -8, 8, 8, qw, qz, sc, F16, qout, 4, sout, zout));
    REFUSED(h, CUOPS_STATUS_NOT_SUPPORTED,
            cuops_import_awq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F64, qout, 4, sout, zout));
    REFUSED(h, INV,
            cuops_import_awq(h, 8, 8, 8, qw, qz, sc, (cuops_dtype_t)99, qout, 4, sout, zout));
    /* the detail of a failure is gone after the next success */
    CHECK_STATUS(cuops_import_awq(h, 8, 8, 8, qw, qz, sc, F16, qout, 4, sout, zout),
                 CUOPS_STATUS_SUCCESS);
    CHECK(cuops_last_error(h)[0] == '\0', "detail after a successful import: %s",
          cuops_last_error(h));
    /* the order of the checks (ops.c): a short pitch and a NULL pointer
     * outrank an unserved scale dtype; the pitch holds for an empty n too */
    REFUSED(h, INV, cuops_import_awq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F64, qout, 3, sout, zout));
    REFUSED(h, INV,
            cuops_import_gptq(h, 8, 8, 8, qw, NULL, sc, CUOPS_DTYPE_F64, 2, qout, 4, sout, zout));
    REFUSED(h, INV,
            cuops_import_gptq(h, 0, 8, 8, NULL, NULL, NULL, F16, 2, NULL, 3, NULL, NULL));
    CHECK_STATUS(cuops_import_gptq(h, 0, 8, 8, NULL, NULL, NULL, F16, 2, NULL, 4, NULL, NULL),
                 CUOPS_STATUS_SUCCESS);
    CHECK_STATUS(cuops_import_awq(h, 8, 0, 8, NULL, NULL, NULL, F16, NULL, 0, NULL, NULL),
                 CUOPS_STATUS_SUCCESS);
    REFUSED(h, CUOPS_STATUS_NOT_SUPPORTED,
            cuops_import_awq(h, 0, 8, 8, NULL, NULL, NULL, CUOPS_DTYPE_F64, NULL, 4, NULL, NULL));
    /* pointers between two elements: int32 words, scales of their dtype */
    REFUSED(h, INV, cuops_import_gptq(h, 8, 8, 8, (const int32_t *)((char *)qw + 2), qz, sc, F16, 2,
                                      qout, 4, sout, zout));
    REFUSED(h, INV, cuops_import_awq(h, 8, 8, 8, qw, (const int32_t *)((char *)qz + 1), sc, F16,
                                     qout, 4, sout, zout));
    REFUSED(h, INV, cuops_import_awq(h, 8, 8, 8, qw, qz, (char *)sc + 1, CUOPS_DTYPE_BF16, qout, 4,
                                     sout, zout));
    REFUSED(h, INV, cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F32, 2, qout, 4,
                                      (char *)sout + 2, zout));
    CHECK(strstr(cuops_last_error(h), "scales_out") != NULL, "detail does not name scales_out: %s",
          cuops_last_error(h));
    REFUSED(NULL, INV, cuops_import_awq(NULL, 8, 8, 8, qw, qz, sc, F16, qout, 4, sout, zout));
    /* GPTQ v1 with a stored 15 (zero 16): refused before anything is written */
    qz[0] = (int32_t)0x000F0000u;
    REFUSED(h, CUOPS_STATUS_NOT_SUPPORTED,
            cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, F16, 1, qout, 4, sout, zout));
    /* the same words are fine as version 2, and the detail is cleared */
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, F16, 2, qout, 4, sout, zout),
                 CUOPS_STATUS_SUCCESS);
    CHECK(zout[4] == 15, "v2 zero row 4 = %d", zout[4]);
    CHECK(cuops_last_error(h)[0] == '\0', "detail after a successful import: %s",
          cuops_last_error(h));
    /* n == 0 / k == 0: nothing to do */
    CHECK_STATUS(cuops_import_awq(h, 0, 8, 8, NULL, NULL, NULL, F16, NULL, 4, NULL, NULL),
                 CUOPS_STATUS_SUCCESS);
    /* ...but an odd group >= k at k = INT64_MAX, one group per row of the
     * even size k + 1, does not fit int64 and is refused by name */
    REFUSED(h, INV, cuops_import_awq(h, 0, INT64_MAX, INT64_MAX, NULL, NULL, NULL, F16, NULL,
                                     (int64_t)1 << 62, NULL, NULL));
    CHECK(strstr(cuops_last_error(h), "k + 1") != NULL, "detail does not name k + 1: %s",
          cuops_last_error(h));
}

/* A group_size >= k is one group per row whatever its parity: AWQ with odd
 * k = 33 and group 33 or 35 (GPTQ: k = 32, group 33) imports exactly what
 * the even single group does; an odd group below k is refused, and the
 * detail names group_size. */
static void odd_group_per_row(cuops_handle_t h)
{
    for (int awq = 0; awq < 2; awq++) {
        const int64_t n = 8, k = awq ? 33 : 32, ldq = (k + 1) / 2;
        const int64_t groups[3] = {k + (k & 1), k | 1, (k | 1) + 2}; /* the even one first */
        seed_weights_t s = make_seed(n, k, groups[0], CUOPS_DTYPE_F16, 0);
        int32_t *qw, *qz;
        if (awq) pack_awq(&s, &qw, &qz);
        else pack_gptq(&s, 2, &qw, &qz);
        uint8_t *sc = transpose_scales(&s);
        uint8_t qout[3][8 * 17], sout[3][8 * 2], zout[3][8];
        for (int i = 0; i < 3; i++) {
            memset(qout[i], SENTINEL, sizeof qout[i]);
            memset(sout[i], SENTINEL, sizeof sout[i]);
            memset(zout[i], SENTINEL, sizeof zout[i]);
            const cuops_dtype_t f16 = CUOPS_DTYPE_F16;
            cuops_status_t r =
                awq ? cuops_import_awq(h, n, k, groups[i], qw, qz, sc, f16, qout[i], ldq, sout[i],
                                       zout[i])
                    : cuops_import_gptq(h, n, k, groups[i], qw, qz, sc, f16, 2, qout[i], ldq,
                                        sout[i], zout[i]);
            char what[96];
            snprintf(what, sizeof what, "%s k=%lld group=%lld", awq ? "awq" : "gptq", (long long)k,
                     (long long)groups[i]);
            CHECK(r == CUOPS_STATUS_SUCCESS, "%s: %s (%s)", what, cuops_status_string(r),
                  cuops_last_error(h));
            CHECK(check_imported(&s, qout[i], ldq, sout[i], zout[i], what) == 0, "%s: wrong import",
                  what);
            CHECK(memcmp(qout[i], qout[0], sizeof qout[0]) == 0 &&
                      memcmp(sout[i], sout[0], sizeof sout[0]) == 0 &&
                      memcmp(zout[i], zout[0], sizeof zout[0]) == 0,
                  "%s: outputs differ from group %lld", what, (long long)groups[0]);
        }
        cuops_status_t r =
            awq ? cuops_import_awq(h, n, k, 3, qw, qz, sc, CUOPS_DTYPE_F16, qout[0], ldq, sout[0],
                                   zout[0])
                : cuops_import_gptq(h, n, k, 3, qw, qz, sc, CUOPS_DTYPE_F16, 2, qout[0], ldq,
                                    sout[0], zout[0]);
        CHECK(r == CUOPS_STATUS_INVALID_VALUE && strstr(cuops_last_error(h), "group_size") != NULL,
              "%s k=%lld group 3: %s, detail '%s'", awq ? "awq" : "gptq", (long long)k,
              cuops_status_string(r), cuops_last_error(h));
        free(qw);
        free(qz);
        free(sc);
        free_seed(&s);
    }
}

int main(void)
{
    tu_seed_from_env();
    cuops_handle_t h = NULL;
    if (cuops_create(&h, CUOPS_DEVICE_CPU) != CUOPS_STATUS_SUCCESS) {
        CHECK(0, "cuops_create(CPU): %s", cuops_create_error());
        return tu_finish("test_import");
    }
    hand_built(h);
    bad_arguments(h);
    odd_group_per_row(h);

    const cuops_dtype_t types[3] = {CUOPS_DTYPE_F16, CUOPS_DTYPE_BF16, CUOPS_DTYPE_F32};
    const int64_t gptq_shapes[][3] = {{8, 8, 8}, {16, 128, 32}, {64, 256, 128}, {136, 264, 128},
                                      {24, 96, 6}, {8, 520, 130}, {40, 64, 2}, {8, 4096, 4096}};
    for (size_t i = 0; i < sizeof gptq_shapes / sizeof gptq_shapes[0]; i++)
        for (int t = 0; t < 3; t++)
            for (int version = 1; version <= 2; version++)
                round_trip(h, 0, version, gptq_shapes[i][0], gptq_shapes[i][1], gptq_shapes[i][2], types[t],
                           (int64_t)(i % 3) * 5);
    const int64_t awq_shapes[][3] = {{8, 1, 2}, {8, 7, 2}, {16, 129, 32}, {64, 256, 128},
                                     {136, 4095, 128}, {24, 100, 6}, {8, 390, 130}, {32, 128, 128}};
    for (size_t i = 0; i < sizeof awq_shapes / sizeof awq_shapes[0]; i++)
        for (int t = 0; t < 3; t++)
            round_trip(h, 1, 2, awq_shapes[i][0], awq_shapes[i][1], awq_shapes[i][2], types[t],
                       (int64_t)(i % 3) * 3);
    cuops_destroy(h);
    return tu_finish("test_import");
}
