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

static void bad_arguments(cuops_handle_t h)
{
    int32_t qw[64] = {0}, qz[8] = {0};
    uint16_t sc[64] = {0};
    uint8_t qout[256], zout[64];
    uint16_t sout[64];
    memset(qout, SENTINEL, sizeof qout);
    CHECK_STATUS(cuops_import_gptq(h, 12, 8, 8, qw, qz, sc, CUOPS_DTYPE_F16, 2, qout, 4, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE); /* n % 8 */
    CHECK_STATUS(cuops_import_gptq(h, 8, 12, 4, qw, qz, sc, CUOPS_DTYPE_F16, 2, qout, 6, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE); /* k % 8 */
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 3, qw, qz, sc, CUOPS_DTYPE_F16, 2, qout, 4, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE); /* odd group */
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 0, qw, qz, sc, CUOPS_DTYPE_F16, 2, qout, 4, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F16, 3, qout, 4, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE); /* version */
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F16, 2, qout, 3, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE); /* ldq_out */
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 8, NULL, qz, sc, CUOPS_DTYPE_F16, 2, qout, 4, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK_STATUS(cuops_import_awq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F16, qout, 4, sout, NULL),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK_STATUS(cuops_import_awq(h, -8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F16, qout, 4, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK_STATUS(cuops_import_awq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F64, qout, 4, sout, zout),
                 CUOPS_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cuops_import_awq(h, 8, 8, 8, qw, qz, sc, (cuops_dtype_t)99, qout, 4, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK(strlen(cuops_last_error(h)) > 0, "no detail for a bad call");
    /* the order of the checks (ops.c): a short pitch and a NULL pointer
     * outrank an unserved scale dtype; the pitch holds for an empty n too */
    CHECK_STATUS(cuops_import_awq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F64, qout, 3, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 8, qw, NULL, sc, CUOPS_DTYPE_F64, 2, qout, 4, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK_STATUS(cuops_import_gptq(h, 0, 8, 8, NULL, NULL, NULL, CUOPS_DTYPE_F16, 2, NULL, 3, NULL,
                                   NULL),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK_STATUS(cuops_import_gptq(h, 0, 8, 8, NULL, NULL, NULL, CUOPS_DTYPE_F16, 2, NULL, 4, NULL,
                                   NULL),
                 CUOPS_STATUS_SUCCESS);
    CHECK_STATUS(cuops_import_awq(h, 8, 0, 8, NULL, NULL, NULL, CUOPS_DTYPE_F16, NULL, 0, NULL, NULL),
                 CUOPS_STATUS_SUCCESS);
    CHECK_STATUS(cuops_import_awq(h, 0, 8, 8, NULL, NULL, NULL, CUOPS_DTYPE_F64, NULL, 4, NULL, NULL),
                 CUOPS_STATUS_NOT_SUPPORTED);
    /* pointers between two elements: int32 words, scales of their dtype */
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 8, (const int32_t *)((char *)qw + 2), qz, sc,
                                   CUOPS_DTYPE_F16, 2, qout, 4, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK_STATUS(cuops_import_awq(h, 8, 8, 8, qw, (const int32_t *)((char *)qz + 1), sc,
                                  CUOPS_DTYPE_F16, qout, 4, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK_STATUS(cuops_import_awq(h, 8, 8, 8, qw, qz, (char *)sc + 1, CUOPS_DTYPE_BF16, qout, 4, sout,
                                  zout),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F32, 2, qout, 4,
                                   (char *)sout + 2, zout),
                 CUOPS_STATUS_INVALID_VALUE);
    CHECK(strstr(cuops_last_error(h), "scales_out") != NULL, "detail does not name scales_out: %s",
          cuops_last_error(h));
    CHECK_STATUS(cuops_import_awq(NULL, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F16, qout, 4, sout, zout),
                 CUOPS_STATUS_INVALID_VALUE);
    /* GPTQ v1 with a stored 15 (zero 16): refused before anything is written */
    qz[0] = (int32_t)0x000F0000u;
    memset(qout, SENTINEL, sizeof qout);
    memset(sout, SENTINEL, sizeof sout);
    memset(zout, SENTINEL, sizeof zout);
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F16, 1, qout, 4, sout, zout),
                 CUOPS_STATUS_NOT_SUPPORTED);
    int untouched = 1;
    for (size_t i = 0; i < sizeof qout; i++) untouched &= qout[i] == SENTINEL;
    CHECK(untouched, "a refused call wrote qweight_out");
    untouched = 1;
    for (size_t i = 0; i < sizeof sout; i++) untouched &= ((const uint8_t *)sout)[i] == SENTINEL;
    for (size_t i = 0; i < sizeof zout; i++) untouched &= zout[i] == SENTINEL;
    CHECK(untouched, "a refused call wrote scales_out or zeros_out");
    /* the same words are fine as version 2 */
    CHECK_STATUS(cuops_import_gptq(h, 8, 8, 8, qw, qz, sc, CUOPS_DTYPE_F16, 2, qout, 4, sout, zout),
                 CUOPS_STATUS_SUCCESS);
    CHECK(zout[4] == 15, "v2 zero row 4 = %d", zout[4]);
    /* n == 0 / k == 0: nothing to do */
    CHECK_STATUS(cuops_import_awq(h, 0, 8, 8, NULL, NULL, NULL, CUOPS_DTYPE_F16, NULL, 4, NULL, NULL),
                 CUOPS_STATUS_SUCCESS);
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
