/*
 * w4a16_decode_wgmma_sk.cu - the W4A16 decode kernel on wgmma (m <= 64,
 * sm_90a) with its work dealt stream-K: one CTA per SM, each the same number
 * of (weight block, 64-k block) units to one, where w4a16_decode_wgmma gives
 * each CTA one 256-row block (or one split of one) and so leaves SMs idle
 * whenever the blocks do not divide by the SMs: 28672 rows are 112 blocks on
 * 132 SMs, 15 % of the chip idle on the shape that weighs most.
 *
 * Same per-block work as w4a16_decode_wgmma's 256-row form (its lean block:
 * the lane's words a block ahead, one PRMT per k16 step, the metadata once
 * per group; the int4 weight dequantized in registers as wgmma's A, x by
 * TMA), but 192-row blocks on three consumer warpgroups: a CTA runs
 * several pieces (w4a16_decode_sk_plan.h), and with an epilogue between two
 * pieces' wgmma ptxas serializes them (C7512) at the 112 registers that four
 * consumers leave each thread; three get 152.
 *
 * A piece that is its whole block stores y from the registers. The pieces of
 * a cut block leave fp32 partials in the workspace; the last to arrive
 * (per consumer warpgroup, the handle's arrival counters) adds them in k
 * order and stores y: reproducible bit for bit, and no CTA waits for
 * another.
 *
 * Serves what w4a16_decode_wgmma serves (sm_90, m <= 64, group_size a
 * multiple of 64 or one group per row), on at most 1365 SMs (three counters
 * per CTA).
 */
#include <string.h>

#include "cuda/common/cluster_splitk.cuh"
#include "cuda/gemm/gemm_sm90.h"
#include "cuda/quant/w4a16_decode_sk_plan.h"
#include "cuda/quant/w4a16_wgmma.cuh"

#define W4S_CONSUMERS 3
#define W4S_ROWS (64 * W4S_CONSUMERS) /* weight rows per block */
#define W4S_THREADS (128 * (1 + W4S_CONSUMERS))
#define W4S_STRIPS (W4S_ROWS / W4_STRIP_ROWS) /* 12 */
#define W4S_BK 64
#define W4S_KT 4 /* 64-k blocks per stage */
#define W4S_RING_BYTES (200 * 1024)
#define W4S_Q_BYTES (W4S_STRIPS * W4_TILE_BYTES) /* 6 KB of int4 per 64-k block */
#define W4S_X_BYTES(XN) ((XN) * W4S_BK * 2)
#define W4S_STAGE_BYTES(XN) (W4S_KT * (W4S_X_BYTES(XN) + W4S_Q_BYTES))
#define W4S_STAGES(XN)                                                                        \
    (W4S_RING_BYTES / W4S_STAGE_BYTES(XN) < 12 ? W4S_RING_BYTES / W4S_STAGE_BYTES(XN) : 12)
#define W4S_SMEM_BYTES(XN) (W4S_STAGES(XN) * W4S_STAGE_BYTES(XN) + 2 * W4S_STAGES(XN) * 8 + 1024)
/* 512 threads start at 128 registers; the producer warpgroup gives back 88
 * each, the consumers take 24: 128*40 + 384*152 = 63488 <= 65536 */
#define W4S_PRODUCER_REGS 40
#define W4S_CONSUMER_REGS 152
#define W4S_MAX_SMS 1365 /* three arrival counters per CTA */
static_assert(128 * W4S_PRODUCER_REGS + 128 * W4S_CONSUMERS * W4S_CONSUMER_REGS <= 65536,
              "the register split must fit what the CTA starts with");
static_assert(3 * W4S_MAX_SMS <= CUOPS_COUNTERS_MAX, "arrival counters");

typedef struct w4s_params {
    const uint8_t *tiles;   /* the packed weight region: [strips][ktiles][512 B] */
    const uint32_t *scales; /* [strips][groups][8] scale pairs */
    const uint32_t *zeros;  /* [strips][groups][2] zero words */
    uint16_t *y;
    int64_t ldy;
    int m, n;
    int ktiles;
    int strips;
    int num_groups;
    int tiles_per_group;
    int64_t units; /* blocks x ktiles */
    int64_t ctas;
    float4 *partials;   /* [slot][consumer][float4 j][thread] */
    unsigned *counters; /* [first CTA of a cut block][consumer] */
} w4s_params_t;

#if CUOPS_SM90A_DEVICE

/* float4 j of a thread's fragment (x rows 8j + 2(l%4) + {0,1}, weight rows
 * 16w + l/4 and + 8 of the consumer's 64) into y, masked at m and n. */
template <typename T>
static __device__ __forceinline__ void w4s_store_frag(const w4s_params_t &p, int64_t block,
                                                      int consumer, int warp, int g, int tq, int j,
                                                      float4 sum)
{
    const int xrow = 8 * j + 2 * tq;
    const int64_t wrow = block * W4S_ROWS + consumer * 64 + warp * 16 + g;
    const uint32_t pk[2] = {cuops_pack2<T>(sum.x, sum.y), cuops_pack2<T>(sum.z, sum.w)};
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int row = xrow + (e & 1);
        const int64_t col = wrow + 8 * (e >> 1);
        if (row < p.m && col < p.n)
            p.y[(int64_t)row * p.ldy + col] = (uint16_t)(pk[e >> 1] >> (16 * (e & 1)));
    }
}

template <typename T, int XN>
static __device__ __forceinline__ void w4s_cta(const CUtensorMap &tmap_x, const w4s_params_t &p)
{
    constexpr int KT = W4S_KT;
    constexpr int ACC = XN / 2; /* accumulators per thread */
    constexpr int F4 = ACC / 4;
    constexpr int STAGES = W4S_STAGES(XN);
    constexpr uint32_t QBYTES = W4S_Q_BYTES;
    constexpr uint32_t XBYTES = W4S_X_BYTES(XN);
    constexpr uint32_t STRIP_BYTES = KT * W4_TILE_BYTES; /* one strip's KT blocks in a stage */
    static_assert(STAGES >= 3, "the read-ahead needs 3 ring slots");
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = cuops_smem_align1024(smem_raw);
    const uint32_t x_smem = base;
    const uint32_t q_smem = x_smem + STAGES * KT * XBYTES;
    const uint32_t bars = q_smem + STAGES * KT * QBYTES;
#define W4S_FULL_BAR(s) (bars + 8u * (uint32_t)(s))
#define W4S_EMPTY_BAR(s) (bars + 8u * (uint32_t)(STAGES + (s)))

    const int64_t u_begin = w4s_unit_begin(blockIdx.x, p.units, p.ctas);
    const int64_t u_end = w4s_unit_begin((int64_t)blockIdx.x + 1, p.units, p.ctas);
    const int warpgroup = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        cuops_tma_prefetch_map(&tmap_x);
        for (int s = 0; s < STAGES; s++) {
            cuops_mbar_init(W4S_FULL_BAR(s), 1);
            cuops_mbar_init(W4S_EMPTY_BAR(s), 128 * W4S_CONSUMERS);
        }
        cuops_mbar_init_fence();
    }
    __syncthreads();

    if (warpgroup == 0) {
        /* ---------------- producer: the pieces' stages in order ---------------- */
        cuops_setmaxnreg_dec<W4S_PRODUCER_REGS>();
        if (threadIdx.x < 32) {
            const int lane = threadIdx.x;
            uint32_t phase = 0;
            int stage = 0;
            for (int64_t u = u_begin; u < u_end;) {
                const w4s_piece_t pc = w4s_piece_at(u, u_end, p.ktiles, p.units, p.ctas);
                /* strips past the packed ones (a last block that ends inside
                 * its 192 rows) re-read the last strip; never stored */
                const int strip =
                    (int)min(pc.block * W4S_STRIPS + (lane % W4S_STRIPS), (int64_t)p.strips - 1);
                const uint8_t *src = p.tiles + (int64_t)strip * p.ktiles * W4_TILE_BYTES;
                for (int kb = pc.k0; kb < pc.k1; kb += KT) {
                    const int nt = min(KT, pc.k1 - kb);
                    if (lane == 0) {
                        cuops_mbar_wait(W4S_EMPTY_BAR(stage), phase ^ 1u);
                        cuops_mbar_arrive_expect_tx(W4S_FULL_BAR(stage),
                                                    (uint32_t)nt * (XBYTES + QBYTES));
                        for (int t = 0; t < nt; t++)
                            cuops_tma_load_2d(x_smem + (stage * KT + t) * XBYTES, &tmap_x,
                                              W4S_FULL_BAR(stage), (kb + t) * W4S_BK, 0);
                    }
                    __syncwarp();
                    if (lane < W4S_STRIPS)
                        cuops_bulk_load(q_smem + stage * KT * QBYTES + lane * STRIP_BYTES,
                                        src + (int64_t)kb * W4_TILE_BYTES,
                                        (uint32_t)nt * W4_TILE_BYTES, W4S_FULL_BAR(stage));
                    cuops_ring_advance<STAGES>(stage, phase);
                }
                u += pc.k1 - pc.k0;
            }
        }
        return;
    }

    /* ---------------- consumers ---------------- */
    cuops_setmaxnreg_inc<W4S_CONSUMER_REGS>();
    const int consumer = warpgroup - 1;
    const int ct = threadIdx.x - 128 * warpgroup;
    const int warp = ct / 32, lane = ct % 32;
    const int g = lane >> 2, tq = lane & 3;
    const uint32_t zero_shift = 4u * (uint32_t)(g & 3);
    const int local = consumer * 4 + warp; /* this warp's strip of the block's 12 */
    const uint32_t q_lane_smem = q_smem + (uint32_t)(local * STRIP_BYTES + g * 64 + 4 * (tq >> 1));
    const uint32_t pair_select = w4f_pair_select(tq);

    float acc[ACC];
    uint32_t a_even[4][4], a_odd[4][4];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int r = 0; r < 4; r++) a_even[j][r] = a_odd[j][r] = 0u;
    int stage = 0;
    uint32_t phase = 0;

    /* block t of stage stg, dequantized into the A set `a`, into the
     * accumulators; `other`: the set of the block before, whose group the
     * wait retires */
    auto issue_block = [&](int stg, int t, uint32_t (&a)[4][4], uint32_t (&other)[4][4]) {
        const uint64_t desc_x = cuops_wgmma_desc_k_sw128(x_smem + (stg * KT + t) * XBYTES);
#pragma unroll
        for (int r = 0; r < ACC; r++) cuops_reg_fence(acc[r]);
        cuops_wgmma_fence();
#pragma unroll
        for (int j = 0; j < 4; j++) cuops_wgmma_m64nk16<XN, w4_type<T>::is_f16>(acc, a[j], desc_x + 2 * j, 1);
        cuops_wgmma_commit();
        cuops_wgmma_wait<1>();
#pragma unroll
        for (int r = 0; r < ACC; r++) cuops_reg_fence(acc[r]);
        w4f_keep_alive_set(other);
    };
    auto words_at = [&](int stg, int t, uint32_t (&w)[8]) {
        w4f_lds_words(w, q_lane_smem + (uint32_t)(stg * KT * QBYTES + t * W4_TILE_BYTES));
    };

    for (int64_t u = u_begin; u < u_end;) {
        const int64_t piece_u = u;
        int kt0, kt1, strip;
        {
            const w4s_piece_t pc = w4s_piece_at(u, u_end, p.ktiles, p.units, p.ctas);
            kt0 = pc.k0;
            kt1 = pc.k1;
            strip = (int)min(pc.block * W4S_STRIPS + local, (int64_t)p.strips - 1);
        }
        u += kt1 - kt0;
        const int strip_groups = strip * p.num_groups;
        auto scale_at = [&](int grp) { return __ldg(p.scales + (int64_t)(strip_groups + grp) * 8 + g); };
        auto zero_at = [&](int grp) { return __ldg(p.zeros + (int64_t)(strip_groups + grp) * 2 + (g >> 2)); };
#pragma unroll
        for (int i = 0; i < ACC; i++) acc[i] = 0.0f;

        /* the piece's k loop: w4a16_decode_wgmma's lean block (see there) */
        uint32_t z_lo, z_hi, s_lo, s_hi;
        uint32_t w[8];
        int group = kt0 / p.tiles_per_group;
        int pos = kt0 - group * p.tiles_per_group;
        w4f_block_meta_ahead<T>(zero_at(group), scale_at(group), zero_shift, z_lo, z_hi, s_lo,
                                s_hi);
        uint32_t s1 = scale_at(min(group + 1, p.num_groups - 1));
        uint32_t z1 = zero_at(min(group + 1, p.num_groups - 1));
        auto next_block = [&]() {
            if (++pos == p.tiles_per_group) {
                pos = 0;
                ++group;
                w4f_block_meta_ahead<T>(z1, s1, zero_shift, z_lo, z_hi, s_lo, s_hi);
                const int g1 = min(group + 1, p.num_groups - 1);
                s1 = scale_at(g1);
                z1 = zero_at(g1);
            }
        };
        auto block = [&](int kb, int t, uint32_t (&a)[4][4], uint32_t (&other)[4][4], bool whole) {
            if (t > 0 || kb > kt0) next_block();
            w4f_dequant_words<T>(a, w, pair_select, z_lo, z_hi, s_lo, s_hi);
            if (t + 1 < KT && (whole || kb + t + 1 < kt1)) {
                words_at(stage, t + 1, w);
            } else if (t + 1 == KT && kb + KT < kt1) {
                int ns = stage;
                uint32_t nphase = phase;
                cuops_ring_advance<STAGES>(ns, nphase);
                cuops_mbar_wait(W4S_FULL_BAR(ns), nphase);
                words_at(ns, 0, w);
            }
            issue_block(stage, t, a, other);
            if (t == 0 && kb > kt0)
                cuops_mbar_arrive(W4S_EMPTY_BAR(stage == 0 ? STAGES - 1 : stage - 1));
        };
        cuops_mbar_wait(W4S_FULL_BAR(stage), phase);
        words_at(stage, 0, w);
        int kb = kt0;
#pragma unroll 1
        for (; kb + KT <= kt1; kb += KT) {
#pragma unroll
            for (int t = 0; t < KT; t++) {
                if (t & 1)
                    block(kb, t, a_odd, a_even, true);
                else
                    block(kb, t, a_even, a_odd, true);
            }
            cuops_ring_advance<STAGES>(stage, phase);
        }
#pragma unroll 1
        for (int t = 0; kb + t < kt1; t++) {
            if (t & 1)
                block(kb, t, a_odd, a_even, false);
            else
                block(kb, t, a_even, a_odd, false);
        }
        cuops_wgmma_wait<0>();
#pragma unroll
        for (int r = 0; r < ACC; r++) cuops_reg_fence(acc[r]);
        w4f_keep_alive_set(a_even);
        w4f_keep_alive_set(a_odd);
        /* the piece's last stage is read: release it (a stage left part
         * full at the end of a piece is passed; the next piece starts on a
         * stage of its own, as the producer fills them) */
        if (kb < kt1) {
            cuops_mbar_arrive(W4S_EMPTY_BAR(stage));
            cuops_ring_advance<STAGES>(stage, phase);
        } else {
            cuops_mbar_arrive(W4S_EMPTY_BAR(stage == 0 ? STAGES - 1 : stage - 1));
        }

        /* the piece's block and place again (cheaper than holding them
         * through the k loop) */
        const w4s_piece_t pc = w4s_piece_at(piece_u, u_end, p.ktiles, p.units, p.ctas);
        if (pc.pieces > 1) {
            /* a cut block: publish this piece; the last to arrive sums */
            float4 *own = p.partials + ((size_t)pc.slot * W4S_CONSUMERS + consumer) * (F4 * 128) + ct;
#pragma unroll
            for (int j = 0; j < F4; j++)
                __stcg(own + j * 128, make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2],
                                                  acc[4 * j + 3]));
            __threadfence();
            cuops_named_bar_sync(2u + (uint32_t)consumer, 128);
            bool last = false;
            if (ct == 0) {
                unsigned *counter = p.counters + (size_t)pc.counter * W4S_CONSUMERS + consumer;
                last = atomicAdd(counter, 1u) == (unsigned)(pc.pieces - 1);
                if (last) *counter = 0u; /* ready for the next call */
                __threadfence();
            }
            last = cuops_named_bar_or(2u + (uint32_t)consumer, 128, last);
            if (!last) continue;
            __threadfence();
            /* ((p0 + p1) + p2) + ...: p0 + p1 is the same sum either way
             * round, and from p2 on every piece, this one's included, is
             * read back */
            auto slot_of = [&](int q) { return q == 0 ? 2 * pc.counter + 1 : 2 * (pc.counter + q); };
            auto piece_ptr = [&](int q) {
                return p.partials + ((size_t)slot_of(q) * W4S_CONSUMERS + consumer) * (F4 * 128) + ct;
            };
            if (pc.q > 1) {
                const float4 *o = piece_ptr(0);
#pragma unroll
                for (int j = 0; j < F4; j++) {
                    const float4 v = __ldcg(o + j * 128);
                    acc[4 * j] = v.x;
                    acc[4 * j + 1] = v.y;
                    acc[4 * j + 2] = v.z;
                    acc[4 * j + 3] = v.w;
                }
            }
            for (int q = 1; q < pc.pieces; q++) {
                const float4 *o = piece_ptr(q == 1 && pc.q == 1 ? 0 : q);
#pragma unroll
                for (int j = 0; j < F4; j++) {
                    const float4 v = __ldcg(o + j * 128);
                    acc[4 * j] += v.x;
                    acc[4 * j + 1] += v.y;
                    acc[4 * j + 2] += v.z;
                    acc[4 * j + 3] += v.w;
                }
            }
        }
#pragma unroll
        for (int j = 0; j < F4; j++)
            w4s_store_frag<T>(p, pc.block, consumer, warp, g, tq, j,
                              make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
    }
#undef W4S_FULL_BAR
#undef W4S_EMPTY_BAR
}

#endif /* CUOPS_SM90A_DEVICE */

template <typename T, int XN>
__global__ void __launch_bounds__(W4S_THREADS, 1)
w4a16_decode_wgmma_sk_kernel(const __grid_constant__ CUtensorMap tmap_x, const w4s_params_t p)
{
#if CUOPS_SM90A_DEVICE
    w4s_cta<T, XN>(tmap_x, p);
#endif
}

/* ---- host ------------------------------------------------------------------- */

typedef void (*w4s_kernel_fn)(const CUtensorMap, const w4s_params_t);

static int w4s_xn(int64_t m) { return m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64; }

static w4s_kernel_fn w4s_pick(cuops_dtype_t act, int xn)
{
    const int bf = act == CUOPS_DTYPE_BF16;
    switch (xn) {
    case 8: return bf ? w4a16_decode_wgmma_sk_kernel<__nv_bfloat16, 8> : w4a16_decode_wgmma_sk_kernel<__half, 8>;
    case 16: return bf ? w4a16_decode_wgmma_sk_kernel<__nv_bfloat16, 16> : w4a16_decode_wgmma_sk_kernel<__half, 16>;
    case 32: return bf ? w4a16_decode_wgmma_sk_kernel<__nv_bfloat16, 32> : w4a16_decode_wgmma_sk_kernel<__half, 32>;
    default: return bf ? w4a16_decode_wgmma_sk_kernel<__nv_bfloat16, 64> : w4a16_decode_wgmma_sk_kernel<__half, 64>;
    }
}

static int w4s_smem_bytes(int xn)
{
    switch (xn) {
    case 8: return W4S_SMEM_BYTES(8);
    case 16: return W4S_SMEM_BYTES(16);
    case 32: return W4S_SMEM_BYTES(32);
    default: return W4S_SMEM_BYTES(64);
    }
}

int w4a16_decode_wgmma_sk_serves(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                 const w4_geometry_t *geo)
{
    if (h->sm_major != 9 || h->num_sms > W4S_MAX_SMS) return 0;
    if (d->m < 1 || d->m > 64) return 0;
    if (h->smem_optin_bytes < W4S_SMEM_BYTES(8) || h->smem_optin_bytes < W4S_SMEM_BYTES(64)) return 0;
    if (geo->group_size % W4S_BK != 0 && geo->num_groups != 1) return 0;
    if (d->k > 0x7fffff00 || geo->ktiles > 0x7fffffff || d->n > 0x7fffff00) return 0;
    /* units x CTAs (the plan's products) well inside int64 */
    if (cuops_ceil_div(geo->strips, W4S_STRIPS) * geo->ktiles > ((int64_t)1 << 40)) return 0;
    return cuops_aligned(d->x, 2) && cuops_aligned(d->y, 2);
}

cuops_status_t w4a16_launch_decode_wgmma_sk(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                            const w4_geometry_t *geo, const char **kernel_name)
{
    const char *const name = "w4a16_decode_wgmma_sk";
    *kernel_name = name;
    const int sms = h->num_sms > 0 ? h->num_sms : 132;
    const int xn = w4s_xn(d->m);
    const int smem = w4s_smem_bytes(xn);
    if (!w4a16_decode_wgmma_sk_serves(h, d, geo))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: serves sm_90 (%d bytes of shared memory per block, at most %d "
                          "SMs) with m <= 64, group_size a multiple of 64 or one group per row, "
                          "k < 2^31, x and y 2-byte aligned (sm_%d%d, m %lld, group_size %lld, "
                          "k %lld)",
                          name, smem, W4S_MAX_SMS, h->sm_major, h->sm_minor, (long long)d->m,
                          (long long)d->group_size, (long long)d->k);

    w4s_params_t p;
    memset(&p, 0, sizeof p);
    w4_wgmma_common_params(&p, d, geo);
    const int64_t blocks = cuops_ceil_div(geo->strips, W4S_STRIPS);
    p.units = blocks * geo->ktiles;
    p.ctas = w4s_ctas(p.units, sms);

    /* the workspace after x's copy (if any): two partial slots per CTA,
     * then the counters when the workspace is the caller's */
    const size_t slot_bytes = (size_t)W4S_CONSUMERS * 128 * (size_t)(xn / 2) * 4;
    const size_t partial_bytes = 2 * (size_t)p.ctas * slot_bytes;
    const size_t ncounters = (size_t)W4S_CONSUMERS * (size_t)p.ctas;
    void *extra = NULL;
    CUtensorMap tmap_x;
    cuops_status_t st =
        w4_wgmma_x_map_extra(h, d, (uint32_t)xn, name, &tmap_x,
                             partial_bytes + cuops_cuda_counter_bytes(h, ncounters), &extra);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    p.partials = (float4 *)extra;
    st = cuops_cuda_counters(h, ncounters, (char *)extra + partial_bytes, &p.counters);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    w4s_kernel_fn fn = w4s_pick(d->act_type, xn);
    CUOPS_CUDA_TRY(h, cudaFuncSetAttribute((const void *)fn,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    fn<<<(unsigned)p.ctas, W4S_THREADS, smem, cuops_stream(h)>>>(tmap_x, p);
    st = cuops_cuda_check_launch(h, name);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    h->last_kernel = name;
    return CUOPS_STATUS_SUCCESS;
}
