/*
 * w4a16_test_weight.h - the host side of an int4 weight in the seed format
 * (element c of row r is byte qweight[r*ldq + c/2], low nibble for even c;
 * scales and zeros per (row, group); NULL zeros mean 8) and its dense
 * reference, shared by the W4A16 GPU tests. Include after test_util.h.
 */
#ifndef CUOPS_W4A16_TEST_WEIGHT_H
#define CUOPS_W4A16_TEST_WEIGHT_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct host_weight {
    int64_t n, k, group_size, num_groups, ldq;
    cuops_dtype_t scale_type;
    uint8_t *qweight; /* n * ldq */
    void *scales;     /* n * num_groups of scale_type */
    uint8_t *zeros;   /* n * num_groups, or NULL */
} host_weight_t;

static size_t scale_bytes(cuops_dtype_t t) { return t == CUOPS_DTYPE_F32 ? 4 : 2; }
static const char *act_name(cuops_dtype_t t) { return t == CUOPS_DTYPE_F16 ? "f16" : "bf16"; }

/* the activation type's bits of v (round to nearest even), and back */
static uint16_t round_to_act(float v, cuops_dtype_t act)
{
    return act == CUOPS_DTYPE_F16 ? cuops_float_to_half(v) : cuops_float_to_bf16(v);
}
static float act_to_float(uint16_t b, cuops_dtype_t act)
{
    return act == CUOPS_DTYPE_F16 ? cuops_half_to_float(b) : cuops_bf16_to_float(b);
}

/* Random nibbles, rows sometimes padded (ldq up to 2 bytes past the packed
 * row), scales of mixed sign with |s| in [0.1, 0.5] / sqrt(k) so that
 * |y| ~ sqrt(k) * |q - z| * s * |x| stays O(1), zeros in 0..15 or NULL. */
static void make_weight(host_weight_t *w, int64_t n, int64_t k, int64_t gs, cuops_dtype_t st,
                        int with_zeros)
{
    w->n = n;
    w->k = k;
    w->group_size = gs;
    w->num_groups = (k + gs - 1) / gs;
    w->ldq = (k + 1) / 2 + (int64_t)(tu_rand_u64() % 3);
    w->scale_type = st;
    w->qweight = (uint8_t *)malloc((size_t)(n * w->ldq));
    for (int64_t i = 0; i < n * w->ldq; i++) w->qweight[i] = (uint8_t)tu_rand_u64();
    size_t ns = (size_t)(n * w->num_groups);
    w->scales = malloc(ns * scale_bytes(st));
    double smax = 0.5 / sqrt((double)k);
    for (size_t i = 0; i < ns; i++) {
        double v = tu_rand_uniform(0.2 * smax, smax) * ((tu_rand_u64() & 1) ? -1.0 : 1.0);
        tu_fill_float((char *)w->scales + i * scale_bytes(st), st, 1, v, v);
    }
    w->zeros = NULL;
    if (with_zeros) {
        w->zeros = (uint8_t *)malloc(ns);
        for (size_t i = 0; i < ns; i++) w->zeros[i] = (uint8_t)(tu_rand_u64() % 16);
    }
}

static void free_weight(host_weight_t *w)
{
    free(w->qweight);
    free(w->scales);
    free(w->zeros);
}

/* The dense weight, n x k floats: (q - z) * s in fp32 with s first rounded
 * to the activation type; with round_product the product is rounded to it
 * as well (what cuops_dequant_int4 stores, and so what the prefill path that
 * dequantizes to a dense chunk multiplies). */
static float *dequant_reference_rounded(const host_weight_t *w, cuops_dtype_t act, int round_product)
{
    float *d = (float *)malloc((size_t)(w->n * w->k) * sizeof(float));
    for (int64_t r = 0; r < w->n; r++)
        for (int64_t c = 0; c < w->k; c++) {
            int64_t g = c / w->group_size;
            uint8_t byte = w->qweight[r * w->ldq + c / 2];
            float q = (float)((c & 1) ? (byte >> 4) : (byte & 15));
            float z = w->zeros ? (float)w->zeros[r * w->num_groups + g] : 8.0f;
            float s = act_to_float(
                round_to_act((float)tu_get(w->scales, w->scale_type, (size_t)(r * w->num_groups + g)),
                             act),
                act);
            float v = (q - z) * s;
            d[r * w->k + c] = round_product ? act_to_float(round_to_act(v, act), act) : v;
        }
    return d;
}

#endif /* CUOPS_W4A16_TEST_WEIGHT_H */
