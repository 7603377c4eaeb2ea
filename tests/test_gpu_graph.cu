/*
 * test_gpu_graph.cu - cuops calls captured into a CUDA graph and replayed.
 *
 * LLM inference replays its decode step as a CUDA graph. A cuops call can be
 * captured once the handle's scratch has grown for it (the workspace and the
 * scan state grow with cudaMalloc on a call's first use, which a capture
 * refuses: cuops.h says to run each call once before capturing it, or to give
 * a workspace with cuops_set_workspace). Each case here runs the call once
 * eagerly (its bits are the reference), captures the same call on a stream in
 * global mode, instantiates the graph and replays it twice into an output
 * poisoned before each replay: every replay must give the eager bits (every
 * kernel is deterministic). The cases cover what a call keeps between calls
 * or sets up per call: the sm90 GEMM and its split tail, the decode GEMM, the
 * W4A16 decode kernels with their split-K arrival counters (the handle's),
 * the prefill kernel, dequant, scan (per-call status memset; the ring) and
 * reduce (auto: stamped partials and the epoch its waiting CTA advances;
 * the named ticket form: the ticket its last CTA resets), each with the
 * handle's own
 * workspace and with a user workspace.
 *
 *   build/tests/test_gpu_graph          (CUOPS_TEST_SEED=... to replay)
 */
#include <cuda_runtime.h>

#include "gpu_test_util.h"

typedef struct graph_case {
    const char *name;
    /* the op: int4 weights (w4 != NULL) and the rest use these buffers */
    int op; /* 0 gemm, 1 w4a16, 2 dequant, 3 scan, 4 reduce */
    int64_t m, n, k;
    cuops_dtype_t type;
    const char *variant; /* NULL: auto */
    int split_k;
} graph_case_t;

typedef struct buffers {
    void *a, *b, *out, *packed, *q, *s, *z;
    size_t out_bytes;
} buffers_t;

static cuops_handle_t g_h;
static cudaStream_t g_stream;

static cuops_status_t call_case(const graph_case_t *c, const buffers_t *b)
{
    cuops_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.variant = c->variant;
    opt.split_k = c->split_k;
    switch (c->op) {
    case 0:
        return cuops_gemm_ex(g_h, CUOPS_OP_N, CUOPS_OP_T, c->m, c->n, c->k, 1.0f, b->a, c->k, b->b,
                             c->k, 0.0f, b->out, c->n, c->type, c->type, &opt);
    case 1:
        return cuops_gemm_w4a16_ex(g_h, c->m, c->n, c->k, 128, b->a, c->k, b->packed, b->out,
                                   c->n, c->type, &opt);
    case 2:
        return cuops_dequant_int4_ex(g_h, c->n, c->k, 128, b->q, c->k / 2, b->s, c->type, b->z,
                                     b->out, c->k, c->type, &opt);
    case 3:
        return cuops_scan_ex(g_h, CUOPS_REDUCE_SUM, 0, c->type, c->n, b->a, b->out, &opt);
    default:
        return cuops_reduce_ex(g_h, CUOPS_REDUCE_SUM, c->type, c->n, b->a, b->out, &opt);
    }
}

static size_t esize(cuops_dtype_t t) { return t == CUOPS_DTYPE_F16 || t == CUOPS_DTYPE_BF16 ? 2 : 4; }

/* The inputs of a case, random (whole numbers for scan/reduce, so a float
 * sum is exact and any order gives the same bits). */
static int make_buffers(const graph_case_t *c, buffers_t *b)
{
    memset(b, 0, sizeof *b);
    const size_t es = esize(c->type);
    int ok = 1;
    if (c->op == 0 || c->op == 1) {
        const size_t a_bytes = (size_t)(c->m * c->k) * es;
        void *ha = malloc(a_bytes);
        tu_fill_float(ha, c->type, (size_t)(c->m * c->k), -1.0, 1.0);
        ok = ok && cudaMalloc(&b->a, a_bytes) == cudaSuccess &&
             cudaMemcpy(b->a, ha, a_bytes, cudaMemcpyHostToDevice) == cudaSuccess;
        free(ha);
        b->out_bytes = (size_t)(c->m * c->n) * es;
    }
    if (c->op == 0) {
        const size_t b_bytes = (size_t)(c->n * c->k) * es;
        void *hb = malloc(b_bytes);
        tu_fill_float(hb, c->type, (size_t)(c->n * c->k), -1.0, 1.0);
        ok = ok && cudaMalloc(&b->b, b_bytes) == cudaSuccess &&
             cudaMemcpy(b->b, hb, b_bytes, cudaMemcpyHostToDevice) == cudaSuccess;
        free(hb);
    }
    if (c->op == 1 || c->op == 2) {
        const int64_t groups = c->k / 128;
        const size_t q_bytes = (size_t)(c->n * c->k / 2), s_count = (size_t)(c->n * groups);
        uint8_t *hq = (uint8_t *)malloc(q_bytes), *hz = (uint8_t *)malloc(s_count);
        void *hs = malloc(s_count * es);
        for (size_t i = 0; i < q_bytes; i++) hq[i] = (uint8_t)tu_rand_u64();
        for (size_t i = 0; i < s_count; i++) hz[i] = (uint8_t)(tu_rand_u64() % 16);
        const double smax = 0.5 / sqrt((double)c->k);
        tu_fill_float(hs, c->type, s_count, 0.2 * smax, smax);
        ok = ok && cudaMalloc(&b->q, q_bytes) == cudaSuccess &&
             cudaMalloc(&b->s, s_count * es) == cudaSuccess &&
             cudaMalloc(&b->z, s_count) == cudaSuccess &&
             cudaMemcpy(b->q, hq, q_bytes, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(b->s, hs, s_count * es, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(b->z, hz, s_count, cudaMemcpyHostToDevice) == cudaSuccess;
        free(hq); free(hs); free(hz);
        if (c->op == 1 && ok) {
            size_t packed_bytes = 0;
            ok = cuops_w4_packed_size(g_h, c->n, c->k, 128, c->type, &packed_bytes) ==
                     CUOPS_STATUS_SUCCESS &&
                 cudaMalloc(&b->packed, packed_bytes) == cudaSuccess &&
                 cuops_w4_prepack(g_h, c->n, c->k, 128, b->q, c->k / 2, b->s, c->type, b->z,
                                  c->type, b->packed) == CUOPS_STATUS_SUCCESS &&
                 cudaStreamSynchronize(g_stream) == cudaSuccess;
        }
        if (c->op == 2) b->out_bytes = (size_t)(c->n * c->k) * es;
    }
    if (c->op == 3 || c->op == 4) {
        const size_t bytes = (size_t)c->n * es;
        int32_t *h = (int32_t *)malloc(bytes);
        for (int64_t i = 0; i < c->n; i++) {
            const int v = (int)(tu_rand_u64() % 17) - 8;
            if (c->type == CUOPS_DTYPE_F32) ((float *)h)[i] = (float)v;
            else h[i] = v;
        }
        ok = ok && cudaMalloc(&b->a, bytes) == cudaSuccess &&
             cudaMemcpy(b->a, h, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
        free(h);
        b->out_bytes = c->op == 3 ? bytes : es;
    }
    ok = ok && cudaMalloc(&b->out, b->out_bytes) == cudaSuccess;
    return ok;
}

static void free_buffers(buffers_t *b)
{
    cudaFree(b->a); cudaFree(b->b); cudaFree(b->out); cudaFree(b->packed);
    cudaFree(b->q); cudaFree(b->s); cudaFree(b->z);
}

/* Eager once, then captured and replayed twice; every replay gives the
 * eager bits. */
static void run_graph_case(const graph_case_t *c, const char *ws_name)
{
    buffers_t b;
    if (!make_buffers(c, &b)) {
        CHECK(0, "%s (%s): buffers", c->name, ws_name);
        free_buffers(&b);
        (void)cudaGetLastError();
        return;
    }
    uint8_t *want = (uint8_t *)malloc(b.out_bytes), *got = (uint8_t *)malloc(b.out_bytes);
    cudaMemsetAsync(b.out, 0xff, b.out_bytes, g_stream);
    cuops_status_t st = call_case(c, &b);
    cudaError_t ce = cudaStreamSynchronize(g_stream);
    CHECK(st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess, "%s (%s) eager: %s (%s) / %s", c->name,
          ws_name, cuops_status_string(st), cuops_last_error(g_h), cudaGetErrorString(ce));
    if (st == CUOPS_STATUS_SUCCESS && ce == cudaSuccess) {
        char kernel[96];
        snprintf(kernel, sizeof kernel, "%s", cuops_last_kernel(g_h));
        cudaMemcpy(want, b.out, b.out_bytes, cudaMemcpyDeviceToHost);
        cudaGraph_t graph = NULL;
        cudaGraphExec_t exec = NULL;
        ce = cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeGlobal);
        st = ce == cudaSuccess ? call_case(c, &b) : CUOPS_STATUS_CUDA_ERROR;
        const cudaError_t ce_end = ce == cudaSuccess ? cudaStreamEndCapture(g_stream, &graph) : ce;
        CHECK(ce == cudaSuccess && st == CUOPS_STATUS_SUCCESS && ce_end == cudaSuccess && graph,
              "%s (%s, kernel %s) captured: %s (%s) / %s", c->name, ws_name, kernel,
              cuops_status_string(st), cuops_last_error(g_h), cudaGetErrorString(ce_end));
        CHECK(!strcmp(cuops_last_kernel(g_h), kernel), "%s (%s): captured %s, eager %s", c->name,
              ws_name, cuops_last_kernel(g_h), kernel);
        if (graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
            for (int replay = 0; replay < 2; replay++) {
                cudaMemsetAsync(b.out, 0xff, b.out_bytes, g_stream);
                ce = cudaGraphLaunch(exec, g_stream);
                if (ce == cudaSuccess) ce = cudaStreamSynchronize(g_stream);
                CHECK(ce == cudaSuccess, "%s (%s) replay %d: %s", c->name, ws_name, replay,
                      cudaGetErrorString(ce));
                if (ce != cudaSuccess) break;
                cudaMemcpy(got, b.out, b.out_bytes, cudaMemcpyDeviceToHost);
                size_t differ = 0;
                for (size_t i = 0; i < b.out_bytes; i++) differ += got[i] != want[i];
                CHECK(differ == 0, "%s (%s, kernel %s) replay %d: %zu of %zu bytes differ from "
                      "the eager call", c->name, ws_name, kernel, replay, differ, b.out_bytes);
            }
        } else if (graph) {
            CHECK(0, "%s (%s): cudaGraphInstantiate failed", c->name, ws_name);
        }
        if (exec) cudaGraphExecDestroy(exec);
        if (graph) cudaGraphDestroy(graph);
    }
    (void)cudaGetLastError();
    free(want);
    free(got);
    free_buffers(&b);
}

int main(void)
{
    tu_seed_from_env();
    if (!tu_gpu_handle(&g_h)) return tu_finish("test_gpu_graph");
    CHECK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking) == cudaSuccess, "stream");
    CHECK_STATUS(cuops_set_stream(g_h, g_stream), CUOPS_STATUS_SUCCESS);
    cudaDeviceProp prop;
    const int sm90 = cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.major == 9;

    static const graph_case_t cases[] = {
        /* 320 128x128 tiles on 132 SMs: a last round of 56 split along K */
        {"gemm f16 2048x2560x1024 (the split tail)", 0, 2048, 2560, 1024, CUOPS_DTYPE_F16, NULL, 0},
        {"gemm f16 4095x4095x1024 (shifted C rows)", 0, 4095, 4095, 1024, CUOPS_DTYPE_F16, NULL, 0},
        {"gemm bf16 256x512x4096 (split-K in a cluster)", 0, 256, 512, 4096, CUOPS_DTYPE_BF16,
         NULL, 0},
        {"gemm bf16 128x1024x2048 (split-K partials, fixup)", 0, 128, 1024, 2048,
         CUOPS_DTYPE_BF16, "sm90_ws_128x256_splitk", 0},
        {"gemm f16 decode 4x4096x4096", 0, 4, 4096, 4096, CUOPS_DTYPE_F16, NULL, 0},
        {"gemm f16 decode_splitk_m8 split 4", 0, 4, 1024, 4096, CUOPS_DTYPE_F16,
         "decode_splitk_m8", 4},
        {"w4a16 f16 1x28672x4096", 1, 1, 28672, 4096, CUOPS_DTYPE_F16, NULL, 0},
        {"w4a16 bf16 16x4096x4096", 1, 16, 4096, 4096, CUOPS_DTYPE_BF16, NULL, 0},
        {"w4a16 decode_warp split 4", 1, 4, 4096, 4096, CUOPS_DTYPE_F16, "w4a16_decode_warp", 4},
        {"w4a16 decode_stream split 4", 1, 16, 4096, 4096, CUOPS_DTYPE_F16,
         "w4a16_decode_stream", 4},
        {"w4a16 prefill f16 256x4096x4096", 1, 256, 4096, 4096, CUOPS_DTYPE_F16, NULL, 0},
        {"dequant f16 4096x4096", 2, 0, 4096, 4096, CUOPS_DTYPE_F16, NULL, 0},
        {"scan i32 2^20+3", 3, 0, (1 << 20) + 3, 0, CUOPS_DTYPE_I32, NULL, 0},
        {"scan f32 2^24", 3, 0, 1 << 24, 0, CUOPS_DTYPE_F32, NULL, 0},
        {"scan i32 lookback_persistent", 3, 0, 3 << 20, 0, CUOPS_DTYPE_I32,
         "lookback_persistent", 0},
        {"reduce f32 2^20", 4, 0, 1 << 20, 0, CUOPS_DTYPE_F32, NULL, 0},
        {"reduce i32 2^26", 4, 0, 1 << 26, 0, CUOPS_DTYPE_I32, NULL, 0},
        {"reduce i32 2^20 ticket", 4, 0, 1 << 20, 0, CUOPS_DTYPE_I32, "vectorized_interleaved", 0},
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int w = 0; w < 2; w++) {
        /* the handle's own workspace, then a user workspace of 256 MB */
        void *ws = NULL;
        if (w == 1) {
            if (cudaMalloc(&ws, (size_t)256 << 20) != cudaSuccess) {
                CHECK(0, "user workspace");
                break;
            }
            CHECK_STATUS(cuops_set_workspace(g_h, ws, (size_t)256 << 20), CUOPS_STATUS_SUCCESS);
        }
        for (int i = 0; i < ncases; i++) {
            /* the prefill kernel and the forced sm90 entries: sm_90a */
            if (!sm90 && ((cases[i].op == 1 && cases[i].m >= 256) ||
                          (cases[i].variant && !strncmp(cases[i].variant, "sm90_", 5))))
                continue;
            run_graph_case(&cases[i], w ? "user workspace" : "own workspace");
        }
        if (ws) {
            CHECK_STATUS(cuops_set_workspace(g_h, NULL, 0), CUOPS_STATUS_SUCCESS);
            cudaFree(ws);
        }
    }
    cuops_destroy(g_h);
    cudaStreamDestroy(g_stream);
    return tu_finish("test_gpu_graph");
}
