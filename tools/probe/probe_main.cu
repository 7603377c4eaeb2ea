/*
 * cuops-probe - microbenchmarks that characterize the GPU in front of you:
 * tensor-core latency/throughput (mma.sync, wgmma), shared-memory bank
 * conflicts, the latency of each level of the memory hierarchy, and
 * bandwidth against bytes in flight (Little's law), and the fixed cost of a
 * call (launches and memsets with empty bodies). On request only (not in
 * all): `streams`, the decode W4A16 weight stream without its math, in the
 * packed layout's strip-major order and as one moving window; `writes`, streams
 * shaped like int4 dequantization (4 bytes written per byte read) without its
 * math, against a copy and a memset of the same bytes; `tma`, a K-major
 * weight streamed by TMA through a shared-memory ring without its products,
 * by box shape, ring depth, grid and how the work is dealt.
 *
 *   cuops-probe [mma|smem|latency|bandwidth|launch|streams|writes|tma|all]... [--json FILE]
 *   python3 scripts/plot_probe.py FILE.json OUTDIR     (PNG plots)
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "probe.h"

probe_device_t g_dev;

#define MAX_POINTS 1024
static probe_point_t g_points[MAX_POINTS];
static int g_npoints;

void probe_add(const char *family, const char *series, double x, double value, const char *unit,
               double extra, const char *extra_unit)
{
    if (g_npoints >= MAX_POINTS) return;
    probe_point_t *p = &g_points[g_npoints++];
    snprintf(p->family, sizeof p->family, "%s", family);
    snprintf(p->series, sizeof p->series, "%s", series);
    p->x = x;
    p->value = value;
    snprintf(p->unit, sizeof p->unit, "%s", unit);
    p->extra = extra;
    snprintf(p->extra_unit, sizeof p->extra_unit, "%s", extra_unit);
}

/* one thread holding the stream for `ns` of %globaltimer (probe_time_ms, queued) */
__global__ void probe_spin_kernel(long long ns)
{
    uint64_t t0, t1;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t1)); } while ((long long)(t1 - t0) < ns);
}

static __global__ void clock_kernel(long long *out, long long spin_ns)
{
    uint64_t t0, t1;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t0));
    long long c0 = clock64();
    do { asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t1)); } while ((long long)(t1 - t0) < spin_ns);
    long long c1 = clock64();
    out[0] = c1 - c0;
    out[1] = (long long)(t1 - t0);
}

double probe_measure_clock_mhz(void)
{
    long long *d, h[2];
    PROBE_CHECK(cudaMalloc(&d, sizeof(h)));
    clock_kernel<<<1, 1>>>(d, 1000000); /* warm */
    clock_kernel<<<1, 1>>>(d, 20000000);
    PROBE_CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    cudaFree(d);
    return (double)h[0] / (double)h[1] * 1e3;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void write_json(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); return; }
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    const char *sha = getenv("CUOPS_GIT_SHA");
    fprintf(f, "{\"gpu\": ");
    json_str(f, g_dev.prop.name);
    fprintf(f, ", \"sm\": %d, \"sms\": %d, \"git_sha\": ", g_dev.prop.major * 10 + g_dev.prop.minor,
            g_dev.prop.multiProcessorCount);
    json_str(f, sha ? sha : "unknown");
    fprintf(f, ", \"date\": \"%s\", \"cuda\": \"%d.%d\", \"sm_clock_mhz\": %.0f, \"l2_bytes\": %d,\n \"points\": [\n",
            date, rt / 1000, (rt % 1000) / 10, g_dev.sm_clock_mhz, g_dev.prop.l2CacheSize);
    for (int i = 0; i < g_npoints; i++) {
        probe_point_t *p = &g_points[i];
        fprintf(f, "  {\"family\": ");
        json_str(f, p->family);
        fprintf(f, ", \"series\": ");
        json_str(f, p->series);
        fprintf(f, ", \"x\": %.17g, \"value\": %.6g, \"unit\": ", p->x, p->value);
        json_str(f, p->unit);
        if (p->extra >= 0 || p->extra_unit[0]) {
            fprintf(f, ", \"extra\": ");
            if (p->extra >= 0) fprintf(f, "%.6g", p->extra); else fprintf(f, "null");
            fprintf(f, ", \"extra_unit\": ");
            json_str(f, p->extra_unit);
        }
        fprintf(f, "}%s\n", i + 1 < g_npoints ? "," : "");
    }
    fprintf(f, " ]}\n");
    fclose(f);
    fprintf(stderr, "wrote %s (%d points)\n", path, g_npoints);
}

int main(int argc, char **argv)
{
    const char *json = NULL;
    int want_mma = 0, want_smem = 0, want_lat = 0, want_bw = 0, want_launch = 0, want_streams = 0,
        want_writes = 0, want_tma = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(argv[i], "mma")) want_mma = 1;
        else if (!strcmp(argv[i], "smem")) want_smem = 1;
        else if (!strcmp(argv[i], "latency")) want_lat = 1;
        else if (!strcmp(argv[i], "bandwidth")) want_bw = 1;
        else if (!strcmp(argv[i], "launch")) want_launch = 1;
        else if (!strcmp(argv[i], "streams")) want_streams = 1;
        else if (!strcmp(argv[i], "writes")) want_writes = 1;
        else if (!strcmp(argv[i], "tma")) want_tma = 1;
        else if (!strcmp(argv[i], "all")) want_mma = want_smem = want_lat = want_bw = want_launch = 1;
        else {
            fprintf(stderr, "usage: %s [mma|smem|latency|bandwidth|launch|streams|writes|tma|all]... [--json FILE]\n",
                    argv[0]);
            return !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ? 0 : 2;
        }
    }
    if (!(want_mma | want_smem | want_lat | want_bw | want_launch | want_streams | want_writes | want_tma))
        want_mma = want_smem = want_lat = want_bw = want_launch = 1;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("no CUDA device: cuops-probe measures a GPU and has nothing to do here\n");
        return 0;
    }
    g_dev.device = 0;
    PROBE_CHECK(cudaGetDeviceProperties(&g_dev.prop, 0));
    g_dev.sm_clock_mhz = probe_measure_clock_mhz();
    printf("%s: sm_%d%d, %d SMs, L2 %d KB, measured SM clock %.0f MHz (idle-ish, one SM)\n", g_dev.prop.name,
           g_dev.prop.major, g_dev.prop.minor, g_dev.prop.multiProcessorCount, g_dev.prop.l2CacheSize >> 10,
           g_dev.sm_clock_mhz);
    if (want_mma) probe_mma();
    if (want_smem) probe_smem();
    if (want_lat) probe_latency();
    if (want_bw) probe_bandwidth();
    if (want_launch) probe_launch();
    if (want_streams) probe_streams();
    if (want_writes) probe_writes();
    if (want_tma) probe_tma();
    if (json) write_json(json);
    return 0;
}
