/*
 * probe_writes.cu - streams shaped like int4 dequantization, without its math.
 *
 * A dequantizing kernel reads half a byte and writes two (f16 out): four
 * fifths of its traffic are writes, where a copy is half reads, half writes.
 * Is HBM as fast for that mix as for a copy? These kernels answer it for the
 * dequant shapes: thread t reads RB bytes (chunk t of the input, one load) and
 * writes RATIO x RB bytes made from them with 16-byte stores, one chunk per
 * thread and a grid as large as the chunks, as cuops's dequant kernels run.
 *
 *   lane-contiguous  each lane's RATIO x RB bytes are one contiguous run, so a
 *                    warp's store instruction covers every other 16 bytes of
 *                    a span (half sectors at RB = 8): the pattern of
 *                    dequant's hoisted_b16 (auto).
 *   warp-coalesced   store i of the warp covers 512 contiguous bytes, lane l
 *                    bytes 16l..16l+15: whole sectors per instruction.
 *   .cs              the lane-contiguous stores with st.global.cs
 *                    (evict-first).
 *   write only       the same stores and bytes with no input read.
 *
 * Against, in the same run and on rotated buffers (L2 cold): cudaMemsetAsync
 * of the output, a cudaMemcpy moving the same total bytes (half read, half
 * written) and a 1 GiB copy (the ceiling cuops-bench divides by).
 */
#include <stdint.h>
#include <string.h>

#include "probe.h"

enum { PAT_LANE = 0, PAT_WARP = 1 };

/* The output word i of a chunk made from its input words (so the reads
 * cannot be dropped) at the cost of one integer op, as a conversion that is
 * not the subject here. */
static __device__ __forceinline__ uint32_t mix(uint32_t v, int i) { return v ^ (0x9e3779b9u * (uint32_t)(i + 1)); }

template <bool CS> static __device__ __forceinline__ void store16(uint8_t *p, uint4 v)
{
    if (CS)
        __stcs((uint4 *)p, v);
    else
        *(uint4 *)p = v;
}

/* RB = 0: no read, the stores only. */
template <int RB, int WB, int PAT, bool CS>
__global__ void __launch_bounds__(256) write_heavy(const uint8_t *__restrict__ in, uint8_t *__restrict__ out,
                                                   uint64_t chunks)
{
    static_assert(WB % 16 == 0, "16-byte stores");
    const uint64_t t = (uint64_t)blockIdx.x * 256u + threadIdx.x;
    if (t >= chunks) return;
    uint32_t w[RB >= 4 ? RB / 4 : 1];
    if constexpr (RB == 8) {
        const uint2 v = __ldg((const uint2 *)(in + t * 8));
        w[0] = v.x;
        w[1] = v.y;
    } else if constexpr (RB == 16) {
        const uint4 v = __ldg((const uint4 *)(in + t * 16));
        w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
    } else {
        static_assert(RB == 0, "RB is 0, 8 or 16");
        w[0] = (uint32_t)t;
    }
    constexpr int NW = RB >= 4 ? RB / 4 : 1;
    const uint32_t lane = threadIdx.x & 31u;
#pragma unroll
    for (int i = 0; i < WB / 16; i++) {
        const uint4 v = make_uint4(mix(w[(4 * i) % NW], 4 * i), mix(w[(4 * i + 1) % NW], 4 * i + 1),
                                   mix(w[(4 * i + 2) % NW], 4 * i + 2), mix(w[(4 * i + 3) % NW], 4 * i + 3));
        uint8_t *dst = PAT == PAT_LANE ? out + t * WB + i * 16
                                       : out + (t - lane) * WB + (uint64_t)i * 512 + lane * 16;
        store16<CS>(dst, v);
    }
}

typedef void (*write_kernel_t)(const uint8_t *, uint8_t *, uint64_t);

typedef struct write_form {
    const char *name;
    write_kernel_t kernel;
    int rb, wb; /* bytes read and written per thread */
} write_form_t;

void probe_writes(void)
{
    static const write_form_t forms[] = {
        {"read 8 B, write 32 B, lane-contiguous (hoisted_b16)", write_heavy<8, 32, PAT_LANE, false>, 8, 32},
        {"read 8 B, write 32 B, warp-coalesced", write_heavy<8, 32, PAT_WARP, false>, 8, 32},
        {"read 8 B, write 32 B, lane-contiguous .cs", write_heavy<8, 32, PAT_LANE, true>, 8, 32},
        {"read 16 B, write 64 B, lane-contiguous", write_heavy<16, 64, PAT_LANE, false>, 16, 64},
        {"read 16 B, write 64 B, warp-coalesced", write_heavy<16, 64, PAT_WARP, false>, 16, 64},
        {"write 32 B only, lane-contiguous", write_heavy<0, 32, PAT_LANE, false>, 0, 32},
        {"write 32 B only, warp-coalesced", write_heavy<0, 32, PAT_WARP, false>, 0, 32},
    };
    const int nforms = (int)(sizeof forms / sizeof forms[0]);
    /* the dequant shapes of the issue's bandwidth bar, f16 out: in = n*k/2, out = n*k*2 */
    static const int64_t shapes[2][2] = {{16384, 4096}, {32768, 8192}};
    const int nbuf = 3; /* rotated, so every launch meets HBM and not L2 */
    const size_t max_out = (size_t)32768 * 8192 * 2;
    uint8_t *in[3], *out[3];
    for (int i = 0; i < nbuf; i++) {
        /* in as large as out: the copy of the same bytes reads (in + out) / 2 from it */
        if (cudaMalloc(&in[i], max_out) != cudaSuccess || cudaMalloc(&out[i], max_out) != cudaSuccess) {
            printf("(not enough memory for the writes probe)\n");
            return;
        }
        PROBE_CHECK(cudaMemset(in[i], 0x5a, max_out));
        PROBE_CHECK(cudaMemset(out[i], 0x33, max_out));
    }
    int rot = 0;
    const size_t ceil_bytes = (size_t)1 << 30;
    uint8_t *ca, *cb;
    PROBE_CHECK(cudaMalloc(&ca, ceil_bytes));
    PROBE_CHECK(cudaMalloc(&cb, ceil_bytes));
    PROBE_CHECK(cudaMemset(ca, 0x11, ceil_bytes));
    const float ceil_ms = probe_time_ms([&] { cudaMemcpyAsync(cb, ca, ceil_bytes, cudaMemcpyDeviceToDevice); }, 15);
    const double ceil_gbps = 2.0 * ceil_bytes / (ceil_ms * 1e-3) / 1e9;
    probe_add("writes", "copy ceiling (cudaMemcpy D2D 1 GiB)", (double)ceil_bytes, ceil_gbps, "GB/s", -1, "");
    printf("\n== writes (dequant-shaped streams: 1 byte read per 4 written, no math; buffers rotated)\n");
    printf("copy ceiling (cudaMemcpy D2D, 1 GiB, read + write): %.0f GB/s\n", ceil_gbps);
    for (int s = 0; s < 2; s++) {
        const int64_t n = shapes[s][0], k = shapes[s][1];
        const size_t out_bytes = (size_t)(n * k * 2), in_bytes = out_bytes / 4;
        const size_t total = in_bytes + out_bytes;
        printf("\n%lld x %lld (f16 out): %zu bytes read + %zu written\n", (long long)n, (long long)k, in_bytes,
               out_bytes);
        printf("%-52s %10s %10s %9s %12s\n", "form", "us", "GB/s", "% ceil", "% copy same");
        const float same_ms = probe_time_ms(
            [&] {
                const int b = rot++ % nbuf;
                cudaMemcpyAsync(out[b], in[b], total / 2, cudaMemcpyDeviceToDevice);
            },
            15);
        char series[96];
        const double same_gbps = total / (same_ms * 1e-3) / 1e9;
        snprintf(series, sizeof series, "copy of the same bytes, %lldx%lld", (long long)n, (long long)k);
        probe_add("writes", series, (double)total, same_gbps, "GB/s", same_ms * 1e3, "us");
        printf("%-52s %10.2f %10.0f %8.1f%% %11.1f%%\n", "cudaMemcpy of the same bytes (half read)", same_ms * 1e3,
               same_gbps, 100.0 * same_gbps / ceil_gbps, 100.0);
        const float set_ms = probe_time_ms([&] { cudaMemsetAsync(out[rot++ % nbuf], 0x21, out_bytes); }, 15);
        const double set_gbps = out_bytes / (set_ms * 1e-3) / 1e9;
        snprintf(series, sizeof series, "cudaMemsetAsync of the output, %lldx%lld", (long long)n, (long long)k);
        probe_add("writes", series, (double)out_bytes, set_gbps, "GB/s", set_ms * 1e3, "us");
        printf("%-52s %10.2f %10.0f %8.1f%% %11.1f%%\n", "cudaMemsetAsync of the output (writes only)",
               set_ms * 1e3, set_gbps, 100.0 * set_gbps / ceil_gbps, 100.0 * set_gbps / same_gbps);
        for (int f = 0; f < nforms; f++) {
            const write_form_t *fm = &forms[f];
            const uint64_t chunks = out_bytes / (size_t)fm->wb;
            const unsigned blocks = (unsigned)((chunks + 255) / 256);
            const float ms = probe_time_ms(
                [&] {
                    const int b = rot++ % nbuf;
                    fm->kernel<<<blocks, 256>>>(in[b], out[b], chunks);
                },
                15);
            const size_t bytes = chunks * (size_t)(fm->rb + fm->wb);
            const double gbps = bytes / (ms * 1e-3) / 1e9;
            snprintf(series, sizeof series, "%s, %lldx%lld", fm->name, (long long)n, (long long)k);
            probe_add("writes", series, (double)bytes, gbps, "GB/s", ms * 1e3, "us");
            /* against the copy of the same bytes: equal when time x (bytes / total) matches */
            printf("%-52s %10.2f %10.0f %8.1f%% %11.1f%%\n", fm->name, ms * 1e3, gbps, 100.0 * gbps / ceil_gbps,
                   100.0 * gbps / same_gbps);
        }
    }
    for (int i = 0; i < nbuf; i++) {
        cudaFree(in[i]);
        cudaFree(out[i]);
    }
    cudaFree(ca);
    cudaFree(cb);
    PROBE_CHECK(cudaGetLastError());
}
