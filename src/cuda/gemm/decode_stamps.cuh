/*
 * decode_stamps.cuh - a study probe for the decode GEMM kernels
 * (gemm_sm90_decode.cu), compiled only with -DCUOPS_DECODE_STAMPS (never in
 * the library's normal build): each CTA writes %globaltimer at four points
 * of its life (entry, its first stage of weight arrived, its last stage
 * arrived, its end) and its SM id; after every launch the host waits, reads
 * them back and prints where the call's time went, relative to the first
 * CTA's entry:
 *   stamps <kernel> m n k grid: span | entry | first | last | end | stream
 *   [| drained | freed | synced]
 * each as min / median / max over the CTAs in microseconds ("stream" is
 * last - first per CTA; the cluster form also stamps when its last wgmma
 * retired, when every consumer had (the C tile's memory free) and when the
 * C tile was written: before the stores, or the cluster's sum). Why: a kernel that streams the weight at ~80 % of
 * the copy rate loses the rest either in its ramp (first - entry), in an
 * uneven finish (the spread of "last") or after its stream (end - last);
 * these numbers say which.
 */
#pragma once
#ifdef CUOPS_DECODE_STAMPS
#include <stdio.h>
#include <stdlib.h>

#define DSTAMP_SLOTS 8 /* per CTA: entry, first, last, end, smid, drained, synced, freed */
enum {
    DSTAMP_ENTRY = 0,   /* thread 0 at the kernel's start */
    DSTAMP_FIRST = 1,   /* the first consumer has its first stage */
    DSTAMP_LAST = 2,    /* ... its last stage */
    DSTAMP_END = 3,     /* ... has stored its share of C */
    DSTAMP_SMID = 4,
    DSTAMP_DRAINED = 5, /* ... its last wgmma retired (cluster form) */
    DSTAMP_SYNCED = 6,  /* ... past the barrier after the C tile is written (cluster form) */
    DSTAMP_FREED = 7    /* ... past the barrier before it (every consumer drained) */
};

static __device__ __forceinline__ void dstamp(unsigned long long *buf, int slot)
{
    if (!buf) return;
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    buf[(size_t)blockIdx.x * DSTAMP_SLOTS + slot] = t;
    if (slot == DSTAMP_ENTRY) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        buf[(size_t)blockIdx.x * DSTAMP_SLOTS + DSTAMP_SMID] = smid;
    }
}

static int dstamp_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A device buffer for `ctas` CTAs (grown as needed, zeroed), or NULL. */
static unsigned long long *dstamp_buffer(int ctas)
{
    static unsigned long long *buf;
    static int cap;
    if (ctas > cap) {
        if (buf) cudaFree(buf);
        buf = NULL;
        cap = 0;
        if (cudaMalloc((void **)&buf, (size_t)ctas * DSTAMP_SLOTS * 8) != cudaSuccess) return NULL;
        cap = ctas;
    }
    cudaMemset(buf, 0, (size_t)ctas * DSTAMP_SLOTS * 8);
    return buf;
}

/* After a launch of `ctas` CTAs: wait, read the stamps, print one line. */
static void dstamp_report(cudaStream_t stream, unsigned long long *dbuf, int ctas,
                          const char *kernel, long long m, long long n, long long k)
{
    if (!dbuf || ctas <= 0) return;
    cudaStreamSynchronize(stream);
    unsigned long long *h = (unsigned long long *)malloc((size_t)ctas * DSTAMP_SLOTS * 8);
    double *v = (double *)malloc((size_t)ctas * sizeof(double));
    if (!h || !v) { free(h); free(v); return; }
    cudaMemcpy(h, dbuf, (size_t)ctas * DSTAMP_SLOTS * 8, cudaMemcpyDeviceToHost);
    unsigned long long t0 = ~0ull, t1 = 0;
    for (int c = 0; c < ctas; c++) {
        const unsigned long long e = h[c * DSTAMP_SLOTS + DSTAMP_ENTRY];
        const unsigned long long f = h[c * DSTAMP_SLOTS + DSTAMP_END];
        if (e && e < t0) t0 = e;
        if (f > t1) t1 = f;
    }
    fprintf(stderr, "stamps %s %lldx%lldx%lld grid %d: span %.2f", kernel, m, n, k, ctas,
            (t1 - t0) * 1e-3);
    static const char *const what[8] = {"entry", "first", "last", "end", "stream", "drained",
                                        "freed", "synced"};
    static const int slot[8] = {DSTAMP_ENTRY, DSTAMP_FIRST, DSTAMP_LAST, DSTAMP_END, -1,
                                DSTAMP_DRAINED, DSTAMP_FREED, DSTAMP_SYNCED};
    for (int s = 0; s < 8; s++) {
        int seen = 0;
        for (int c = 0; c < ctas; c++) {
            const unsigned long long *r = h + c * DSTAMP_SLOTS;
            if (slot[s] >= 0 && r[slot[s]] == 0) continue; /* not stamped by this form */
            v[seen++] = slot[s] >= 0 ? (double)(r[slot[s]] - t0) * 1e-3
                                     : (double)(r[DSTAMP_LAST] - r[DSTAMP_FIRST]) * 1e-3;
        }
        if (seen == 0) continue;
        qsort(v, (size_t)seen, sizeof(double), dstamp_cmp);
        fprintf(stderr, " | %s %.2f %.2f %.2f", what[s], v[0], v[seen / 2], v[seen - 1]);
    }
    /* the five CTAs whose stream ended last, with their SMs */
    fprintf(stderr, " | late:");
    int chosen[5] = {-1, -1, -1, -1, -1};
    for (int i = 0; i < 5 && i < ctas; i++) {
        int best = -1;
        for (int c = 0; c < ctas; c++) {
            int taken = 0;
            for (int q = 0; q < i; q++) taken |= chosen[q] == c;
            if (taken) continue;
            if (best < 0 || h[c * DSTAMP_SLOTS + DSTAMP_LAST] > h[best * DSTAMP_SLOTS + DSTAMP_LAST])
                best = c;
        }
        if (best < 0) break;
        chosen[i] = best;
        fprintf(stderr, " cta%d/sm%llu@%.2f", best, h[best * DSTAMP_SLOTS + DSTAMP_SMID],
                (h[best * DSTAMP_SLOTS + DSTAMP_LAST] - t0) * 1e-3);
    }
    fprintf(stderr, "\n");
    free(h);
    free(v);
}
#define DSTAMP(p, slot) dstamp((p).stamps, (slot))
#else
#define DSTAMP(p, slot) ((void)0)
#endif
