/*
 * w4a16_decode_wgmma.cu - the W4A16 GEMM for small m (decode, m <= 64) on
 * sm_90a: the fused prefill kernel's idea (the int4 weight dequantized in
 * registers straight into wgmma's A operand, x through TMA) with the x tile
 * cut to the m of the call and the K loop split across a thread-block
 * cluster whose CTAs add their partial sums through distributed shared
 * memory.
 *
 * y^T = W x^T: weight rows are the wgmma M, x rows its N. N = XN, the
 * smallest of 8, 16, 32, 64 that holds m (x rows past m are TMA zeros and
 * never stored). At m = 64 a weight element feeds 64 products, so the tensor
 * time per weight byte is close to the HBM time per byte (at 3.5 TB/s the
 * weight takes ~8.5 us for 14336 x 4096, the 7.5 GFLOP ~8 us at the wgmma
 * rate): the kernel must stream and multiply at once. Below m = 32 it is a
 * pure stream of the weight.
 *
 * CTA: 640 threads, one unit = 256 weight rows x a K range. Warpgroup 0 is
 * the producer (one warp: per stage of KT = 4 64-k blocks, lane 0 issues the
 * KT TMA loads of the x tiles, lanes 0-15 one bulk copy each of a strip's
 * KT int4 tiles, 2 KB contiguous in the packed layout); warpgroups 1-4 each
 * own 64 weight rows and per 64-k block run 8 LDS.32, 16 dequantized A
 * registers, four wgmma.m64nXNk16 with A from registers, commit, wait for
 * the previous block's group; the first block of a stage releases the stage
 * before. Two A register sets used in turn, as in the prefill kernel (ptxas
 * does not keep in-flight A registers alive). 256 rows per CTA, not 128,
 * halve the x bytes each weight byte brings from L2 (at m = 64 an x block is
 * as large as the CTA's int4 block); four consumer warpgroups, not two, give
 * each scheduler four warps to hide the dequantization's latencies (with two
 * it issued 0.37 instructions per cycle, ncu, a72522a).
 *
 * 64-row CTAs (KP = 4), where 64-row blocks fit the SMs in one round (n <=
 * 64 x SMs): the same 640 threads, but every consumer has the CTA's 64 rows
 * and takes block c of each 4-block stage (K in four phases inside the
 * CTA); at the end the four partial sums meet in shared memory and are
 * added in consumer order (then over the cluster, below). Why: 256-row
 * CTAs leave 4096 rows 16 blocks, which need an 8-way cluster split to fill
 * the SMs, and the split's fixed cost grows with m (the dense decode GEMM
 * measured 19.5 against 15.3 us at m = 64, 4096^2, without it); 64-row CTAs
 * fill 128 SMs with a 2-way split.
 *
 * Split-K: the S CTAs of a weight block form one cluster (S <= 8), CTA rank
 * r takes 64-k blocks [r*K/S, (r+1)*K/S). After its loop each consumer
 * thread writes its accumulators to its own shared memory (the stage ring,
 * free by then), the cluster synchronises, CTA r adds the float4 columns
 * [r*XN/(8S), (r+1)*XN/(8S)) of every thread's fragment over s = 0..S-1 in
 * that order (ld.shared::cluster; bitwise reproducible) and stores them to
 * y, and the cluster synchronises again before any CTA exits. S = 1 is a
 * plain launch (no cluster) whose consumers store y straight from their
 * registers. Splits: as many as fill the SMs once (one
 * CTA per SM), at most 8, at most one per 64-k block, and lowered until all
 * clusters are resident at once.
 *
 * Serves (w4a16_decode_wgmma_serves): sm_90, m <= 64, group_size a multiple
 * of 64 or one group per row, k < 2^31, x and y 2-byte aligned (x that TMA
 * cannot read in place is packed into the workspace first).
 */
#include <string.h>

#include "cuda/common/cluster_splitk.cuh"
#include "cuda/gemm/gemm_sm90.h"
#include "cuda/quant/w4a16_decode_wgmma_form.h"
#include "cuda/quant/w4a16_wgmma.cuh"

#define W4D_WROWS 256 /* weight rows per CTA: 4 consumers x 64 */
#define W4D_BK 64
/* KP: k phases inside a CTA. KP = 1: 256 rows per CTA, each consumer its 64
 * rows over the whole K range; KP = 4: 64 rows per CTA, consumer c the 64-k
 * block c of every 4-block stage (below) */
#define W4D_ROWS(KP) (W4D_WROWS / (KP))
#define W4D_RING_BYTES (200 * 1024) /* stage ring: one CTA per SM */
#define W4D_CONSUMERS 4 /* warpgroups of 64 weight rows each */
#define W4D_THREADS (128 * (1 + W4D_CONSUMERS))
#define W4D_STRIPS (W4D_WROWS / W4_STRIP_ROWS)         /* 16 */
#define W4D_Q_TILE_BYTES(KP) (W4D_STRIPS / (KP) * W4_TILE_BYTES) /* 8 KB of int4 per 64-k block at KP = 1 */
#define W4D_X_TILE_BYTES(XN) ((XN) * W4D_BK * 2)      /* XN rows of 128 B per 64-k block */
/* a stage holds KT 64-k blocks; as many stages (at most 12) as fit the ring */
#define W4D_STAGE_BYTES(XN, KT, KP) ((KT) * (W4D_X_TILE_BYTES(XN) + W4D_Q_TILE_BYTES(KP)))
#define W4D_STAGES(XN, KT, KP)                                                                \
    (W4D_RING_BYTES / W4D_STAGE_BYTES(XN, KT, KP) < 12 ? W4D_RING_BYTES / W4D_STAGE_BYTES(XN, KT, KP) : 12)
#define W4D_SMEM_BYTES(XN, KT, KP)                                                            \
    (W4D_STAGES(XN, KT, KP) * W4D_STAGE_BYTES(XN, KT, KP) + 2 * W4D_STAGES(XN, KT, KP) * 8 + 1024)
#define W4D_MAX_SPLITS CUOPS_CLUSTER_MAX_SPLITS
static_assert(W4D_MAX_SPLITS == W4A16_DECODE_WGMMA_MAX_SPLITS, "the form rule assumes the cluster size");
#define W4D_KT 4 /* 64-k blocks per stage of the default variant (the study's: 1) */
/* 640 threads start at 96 registers (65536 / 640, rounded down to 8); the
 * producer gives back 64 each, the consumers take 16: 128*32 + 512*112 =
 * 61440 = 640*96 */
#define W4D_PRODUCER_REGS 32
#define W4D_CONSUMER_REGS 112

typedef struct w4d_params {
    const uint8_t *tiles;    /* the packed weight region: [strips][ktiles][512 B] */
    const uint32_t *scales;  /* [strips][groups][8] scale pairs */
    const uint32_t *zeros;   /* [strips][groups][2] zero words */
    uint16_t *y;
    int64_t ldy;
    int m, n;
    int ktiles;
    int strips;              /* packed strips, a multiple of 4 */
    int num_groups;
    int tiles_per_group;     /* group_size / 64 (ktiles when one group) */
    int splits;              /* cluster size: CTAs per weight block */
} w4d_params_t;

#if CUOPS_SM90A_DEVICE

/* float4 j of a thread's fragment (x rows 8j + 2(l%4) + {0,1}, weight rows
 * 16w + l/4 and + 8 of the consumer's 64) into y, masked at m and n. */
template <typename T, int KP>
static __device__ __forceinline__ void w4d_store_frag(const w4d_params_t &p, int wb, int consumer,
                                                      int warp, int g, int tq, int j, float4 sum)
{
    const int xrow = 8 * j + 2 * tq;
    const int wrow = wb * W4D_ROWS(KP) + consumer * 64 + warp * 16 + g;
    const uint32_t pk[2] = {cuops_pack2<T>(sum.x, sum.y), cuops_pack2<T>(sum.z, sum.w)};
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int row = xrow + (e & 1), col = wrow + 8 * (e >> 1);
        if (row < p.m && col < p.n)
            p.y[(int64_t)row * p.ldy + col] = (uint16_t)(pk[e >> 1] >> (16 * (e & 1)));
    }
}

template <typename T, int XN, int KT, int KP>
static __device__ __forceinline__ void w4d_cta(const CUtensorMap &tmap_x, const w4d_params_t &p)
{
    static_assert(KP == 1 || (KP == W4D_CONSUMERS && KT == W4D_CONSUMERS),
                  "KP = 4 gives each consumer one block of a 4-block stage");
    constexpr int ACC = XN / 2;              /* accumulators per block and thread */
    constexpr int F4 = ACC / 4;              /* float4s of the accumulators per thread */
    constexpr int STAGES = W4D_STAGES(XN, KT, KP);
    constexpr uint32_t QBYTES = W4D_Q_TILE_BYTES(KP);
    constexpr int STRIPS = W4D_STRIPS / KP; /* 16-row strips per CTA */
    constexpr uint32_t XBYTES = W4D_X_TILE_BYTES(XN);
    constexpr uint32_t STRIP_BYTES = KT * W4_TILE_BYTES; /* one strip's KT blocks in a stage */
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = cuops_smem_align1024(smem_raw);
    /* stage s: x tiles at x_smem + (s*KT + t)*XBYTES (each 1024-aligned),
     * int4 at q_smem + s*KT*8K as [strip][KT][512 B] */
    const uint32_t x_smem = base;
    const uint32_t q_smem = x_smem + STAGES * KT * XBYTES;
    const uint32_t bars = q_smem + STAGES * KT * QBYTES;
#define W4D_FULL_BAR(s) (bars + 8u * (uint32_t)(s))
#define W4D_EMPTY_BAR(s) (bars + 8u * (uint32_t)(STAGES + (s)))

    const int split = (int)cuops_cluster_ctarank();
    const int wb = (int)blockIdx.x / p.splits;
    int kt0, kt1;
    cuops_cluster_k_share(split, p.ktiles, p.splits, &kt0, &kt1);

    const int warpgroup = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        /* the first TMA's descriptor fetch overlaps the barrier set-up */
        cuops_tma_prefetch_map(&tmap_x);
        for (int s = 0; s < STAGES; s++) {
            cuops_mbar_init(W4D_FULL_BAR(s), 1);    /* producer's expect_tx + bytes */
            cuops_mbar_init(W4D_EMPTY_BAR(s), 128 * W4D_CONSUMERS); /* every consumer thread */
        }
        cuops_mbar_init_fence();
    }
    __syncthreads();

    if (warpgroup == 0) {
        /* ---------------- producer ---------------- */
        cuops_setmaxnreg_dec<W4D_PRODUCER_REGS>();
        if (threadIdx.x < 32) {
            const int lane = threadIdx.x;
            /* strips past the packed ones (a last block that ends inside the
             * 256 rows) re-read the last strip; those rows are never stored */
            const int strip = min(wb * STRIPS + (lane & (STRIPS - 1)), p.strips - 1);
            const uint8_t *src = p.tiles + (int64_t)strip * p.ktiles * W4_TILE_BYTES;
            uint32_t phase = 0;
            int stage = 0;
            for (int kb = kt0; kb < kt1; kb += KT) {
                const int nt = min(KT, kt1 - kb); /* 64-k blocks in this stage */
                if (lane == 0) {
                    cuops_mbar_wait(W4D_EMPTY_BAR(stage), phase ^ 1u);
                    cuops_mbar_arrive_expect_tx(W4D_FULL_BAR(stage),
                                                (uint32_t)nt * (XBYTES + QBYTES));
                    for (int t = 0; t < nt; t++)
                        cuops_tma_load_2d(x_smem + (stage * KT + t) * XBYTES, &tmap_x,
                                          W4D_FULL_BAR(stage), (kb + t) * W4D_BK, 0);
                }
                __syncwarp();
                /* the strip's nt blocks are contiguous in the packed layout */
                if (lane < STRIPS)
                    cuops_bulk_load(q_smem + stage * KT * QBYTES + lane * STRIP_BYTES,
                                    src + (int64_t)kb * W4_TILE_BYTES, (uint32_t)nt * W4_TILE_BYTES,
                                    W4D_FULL_BAR(stage));
                cuops_ring_advance<STAGES>(stage, phase);
            }
        }
        /* the consumers' two cluster barriers (every thread of every CTA
         * takes part) */
        if (p.splits > 1) {
            cuops_cluster_sync();
            cuops_cluster_sync_relaxed();
        }
    } else {
        /* ---------------- consumers ---------------- */
        cuops_setmaxnreg_inc<W4D_CONSUMER_REGS>();
        const int consumer = warpgroup - 1;
        const int ct = threadIdx.x - 128 * warpgroup;
        const int warp = ct / 32, lane = ct % 32;
        const int g = lane >> 2, tq = lane & 3;
        const uint32_t zero_shift = 4u * (uint32_t)(g & 3);
        /* this warp's strip: consumer*4 + warp of the CTA's 16 (KP = 1), or
         * warp of its 4 (KP = 4: every consumer has the CTA's 64 rows) */
        const int rows64 = KP == 1 ? consumer : 0;
        const int local = rows64 * 4 + warp;
        const uint32_t q_lane = (uint32_t)(local * STRIP_BYTES + g * 64 + 4 * (tq >> 1));
        const int strip = min(wb * STRIPS + local, p.strips - 1);

        float acc[ACC];
#pragma unroll
        for (int i = 0; i < ACC; i++) acc[i] = 0.0f;
        uint32_t a_even[4][4], a_odd[4][4];
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) a_even[j][r] = a_odd[j][r] = 0u;

        int stage = 0;
        uint32_t phase = 0;

        /* block t of stage stg, already dequantized into the A set `a`,
         * into the accumulators; `other` is the set of this consumer's block
         * before, whose group the wait retires */
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
            /* the previous block's group is retired: its A set is free, and
             * when it was this consumer's last block of the previous stage,
             * this thread's reads of that stage are done */
            cuops_keep_alive_set(other);
        };
        if constexpr (KP == 1) {
            /* The lean block (P138, P139): per k16 step one PRMT gathers the
             * lane's nibble pairs (w4f_dequant_words, no shifts in f16),
             * each block's words are read as soon as the block before has
             * been dequantized (the read overlaps that block's wgmma issue
             * and wait), a stage's blocks run in a straight line, and the
             * metadata is turned into its four registers once per group. */
            const uint32_t pair_select = w4f_pair_select(tq);
            /* the lane's scale pair and zero word of group grp (the strip's
             * groups are consecutive in both regions; strips x groups <
             * 2^29 for any weight that fits in memory) */
            const int strip_groups = strip * p.num_groups;
            auto scale_at = [&](int grp) { return __ldg(p.scales + (int64_t)(strip_groups + grp) * 8 + g); };
            auto zero_at = [&](int grp) { return __ldg(p.zeros + (int64_t)(strip_groups + grp) * 2 + (g >> 2)); };
            /* the current block's group: zero (magic form) and scale of
             * rows g and g + 8, as w4f_dequant_words takes them */
            uint32_t z_lo, z_hi, s_lo, s_hi;
            /* The lane's base address through a shuffle, which ptxas does
             * not recompute, so it stays in one register: computed plainly,
             * ptxas (at 112 registers) rebuilt it from the thread index
             * before three blocks of every four, ~10 instructions each.
             * With the whole-stage reads below the steady loop runs ~122
             * instructions per block instead of ~134, and m = 17..64 on
             * 256-row CTAs 2.1-3.2 % faster (P218; docs/w4a16.md). */
            const uint32_t q_lane_smem = __shfl_sync(0xffffffffu, q_smem + q_lane, lane);
            /* this lane's words of block t of stage stg */
            auto words_at = [&](int stg, int t, uint32_t (&w)[8]) {
                w4f_lds_words(w, q_lane_smem + (uint32_t)(stg * KT * QBYTES + t * W4_TILE_BYTES));
            };
            /* the words of the block about to be dequantized */
            uint32_t w[8];
            /* a stage's last block waits for the next stage's bytes before
             * it releases the stage before: with 3 slots or more that wait
             * never needs this consumer's release */
            static_assert(STAGES >= 3, "the read-ahead needs 3 ring slots");

            /* the current block's group and its position in it; the raw
             * metadata of the next group, loaded when the current one
             * starts (L2 or DRAM latency: a block ahead was too little,
             * ncu P137) */
            int group = kt0 / p.tiles_per_group;
            int pos = kt0 - group * p.tiles_per_group;
            w4f_block_meta_ahead<T>(zero_at(group), scale_at(group), zero_shift, z_lo,
                                    z_hi, s_lo, s_hi);
            uint32_t s1 = scale_at(min(group + 1, p.num_groups - 1));
            uint32_t z1 = zero_at(min(group + 1, p.num_groups - 1));
            /* one block on (every block but the range's first) */
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

            /* block t of the stage at kb: after its dequantization the
             * words of block t + 1, or of the next stage's first once its
             * bytes have landed; `whole`: the stage holds all KT blocks (no
             * bound test before reading block t + 1) */
            auto block = [&](int kb, int t, uint32_t (&a)[4][4], uint32_t (&other)[4][4], bool whole) {
                if (t > 0 || kb > kt0) next_block();
                w4f_dequant_words<T>(a, w, pair_select, z_lo, z_hi, s_lo, s_hi);
                if (t + 1 < KT && (whole || kb + t + 1 < kt1)) {
                    words_at(stage, t + 1, w);
                } else if (t + 1 == KT && kb + KT < kt1) {
                    int ns = stage;
                    uint32_t nphase = phase;
                    cuops_ring_advance<STAGES>(ns, nphase);
                    cuops_mbar_wait(W4D_FULL_BAR(ns), nphase);
                    words_at(ns, 0, w);
                }
                issue_block(stage, t, a, other);
                if (t == 0 && kb > kt0)
                    cuops_mbar_arrive(W4D_EMPTY_BAR(stage == 0 ? STAGES - 1 : stage - 1));
            };

            cuops_mbar_wait(W4D_FULL_BAR(stage), phase);
            words_at(stage, 0, w);
            /* whole stages in a straight line, two at a time when KT is
             * odd, so that each block's A set (by its parity) is known at
             * compile time */
            constexpr int UNIT = KT % 2 == 0 ? KT : 2 * KT;
            int kb = kt0;
#pragma unroll 1
            for (; kb + UNIT <= kt1; kb += UNIT) {
#pragma unroll
                for (int u = 0; u < UNIT; u++) {
                    if (u & 1)
                        block(kb + u / KT * KT, u % KT, a_odd, a_even, true);
                    else
                        block(kb + u / KT * KT, u % KT, a_even, a_odd, true);
                    if (u % KT == KT - 1) cuops_ring_advance<STAGES>(stage, phase);
                }
            }
            /* the range's last blocks, fewer than UNIT, in one stage (kb -
             * kt0 is a multiple of UNIT, even: block t's parity is t's) */
#pragma unroll 1
            for (int t = 0; kb + t < kt1; t++) {
                if (t & 1)
                    block(kb, t, a_odd, a_even, false);
                else
                    block(kb, t, a_even, a_odd, false);
            }
        } else {
            /* KP = 4: block `consumer` of every stage (none in a last stage
             * that holds fewer blocks), read with w4f_load_a when its stage
             * has landed, its metadata a stage ahead: the form of ee07edd.
             * The lean block of KP = 1 (words a block ahead or at the block's
             * start, w4f_dequant_words, metadata by group index) measured
             * 1-4 % slower in this form (P138, P139). */
            const int t = consumer;
            const uint32_t pair_shift = 8u * (uint32_t)(tq & 1);
            const uint32_t *sc = p.scales + (int64_t)strip * p.num_groups * 8 + g;
            const uint32_t *zr = p.zeros + (int64_t)strip * p.num_groups * 2 + (g >> 2);
            auto mma_block = [&](uint32_t (&a)[4][4], uint32_t (&other)[4][4], uint32_t svc,
                                 uint32_t zvc) {
                const uint32_t z2 = w4_nibbles<T, 0x000F000Fu>(zvc >> zero_shift);
                const uint32_t qt = q_smem + stage * KT * QBYTES + t * W4_TILE_BYTES;
                w4f_load_a<T>(a, qt + q_lane, pair_shift, __byte_perm(z2, 0, 0x1010),
                              __byte_perm(z2, 0, 0x3232), __byte_perm(svc, 0, 0x1010),
                              __byte_perm(svc, 0, 0x3232));
                issue_block(stage, t, a, other);
            };
            /* kn = grp * tpg + pos, 0 <= pos < tpg; a stage moves kn by KT
             * = step_groups * tpg + step_pos, so grp and pos follow with one
             * carry at most, and the loop has no division */
            const int tpg = p.tiles_per_group;
            int kn = kt0 + t;
            int grp = kn / tpg;
            int pos = kn - grp * tpg;
            const int step_groups = KT / tpg, step_pos = KT - step_groups * tpg;
            uint32_t sv = kn < kt1 ? __ldg(sc + grp * 8) : 0u;
            uint32_t zv = kn < kt1 ? __ldg(zr + grp * 2) : 0u;
            bool even = true;
            int prev_stage = 0;
#pragma unroll 1
            for (int kb = kt0; kb < kt1; kb += KT) {
                if (t < min(KT, kt1 - kb)) {
                    cuops_mbar_wait(W4D_FULL_BAR(stage), phase);
                    uint32_t sv_next = sv, zv_next = zv;
                    kn += KT;
                    grp += step_groups;
                    pos += step_pos;
                    if (pos >= tpg) {
                        pos -= tpg;
                        ++grp;
                    }
                    if (kn < kt1) {
                        sv_next = __ldg(sc + grp * 8);
                        zv_next = __ldg(zr + grp * 2);
                    }
                    if (even)
                        mma_block(a_even, a_odd, sv, zv);
                    else
                        mma_block(a_odd, a_even, sv, zv);
                    even = !even;
                    if (kb > kt0) cuops_mbar_arrive(W4D_EMPTY_BAR(prev_stage));
                    sv = sv_next;
                    zv = zv_next;
                }
                prev_stage = stage;
                cuops_ring_advance<STAGES>(stage, phase);
            }
        }
        cuops_wgmma_wait<0>();
#pragma unroll
        for (int r = 0; r < ACC; r++) cuops_reg_fence(acc[r]);
        cuops_keep_alive_set(a_even);
        cuops_keep_alive_set(a_odd);

        if constexpr (KP == 4) {
            /* The four consumers hold partial sums of the same 64 x XN
             * block: [consumer][float4 j][thread] to shared memory (the
             * ring is free once every consumer is past its loop), then
             * summer q = split * 4 + consumer of the cluster's 4S adds
             * float4s [q F4 / 4S, (q+1) F4 / 4S) over consumers 0..3, each
             * over ranks 0..S-1, in that order (bitwise reproducible). */
            cuops_named_bar_sync(1, 128 * W4D_CONSUMERS);
#pragma unroll
            for (int j = 0; j < F4; j++)
                cuops_st_shared_f4(base + (uint32_t)(((consumer * F4 + j) * 128 + ct) * 16),
                                   acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
            if (p.splits > 1) cuops_cluster_sync();
            else cuops_named_bar_sync(1, 128 * W4D_CONSUMERS);
            const int summers = 4 * p.splits, q = split * 4 + consumer;
            const int j0 = q * F4 / summers, j1 = (q + 1) * F4 / summers;
            for (int j = j0; j < j1; j++) {
                float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
                for (int c = 0; c < W4D_CONSUMERS; c++) {
                    const uint32_t addr = base + (uint32_t)(((c * F4 + j) * 128 + ct) * 16);
                    const float4 v = p.splits > 1 ? cuops_cluster_sum_f4(addr, p.splits)
                                                  : cuops_ld_shared_f4(addr);
                    if (c == 0) {
                        sum = v;
                    } else {
                        sum.x += v.x;
                        sum.y += v.y;
                        sum.z += v.z;
                        sum.w += v.w;
                    }
                }
                w4d_store_frag<T, KP>(p, wb, 0, warp, g, tq, j, sum);
            }
            if (p.splits > 1) cuops_cluster_sync_relaxed(); /* no CTA leaves while its partials are read */
            return;
        }
        if (p.splits == 1) {
            /* no partner (and no cluster launched): y from the registers */
#pragma unroll
            for (int j = 0; j < F4; j++)
                w4d_store_frag<T, KP>(p, wb, consumer, warp, g, tq, j,
                                      make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2],
                                                  acc[4 * j + 3]));
            return;
        }
        /* Partials to this CTA's shared memory, [consumer][float4 j][thread]:
         * the ring is free once every consumer is past its last wgmma
         * (every load of the range has landed and been consumed). */
        cuops_named_bar_sync(1, 128 * W4D_CONSUMERS);
        const uint32_t part = base + (uint32_t)((consumer * F4 * 128 + ct) * 16);
#pragma unroll
        for (int j = 0; j < F4; j++)
            cuops_st_shared_f4(part + (uint32_t)(j * 128 * 16), acc[4 * j], acc[4 * j + 1],
                               acc[4 * j + 2], acc[4 * j + 3]);
        cuops_cluster_sync(); /* every CTA's partials in its shared memory */

        /* CTA `split` adds float4s [j0, j1) of every thread over the cluster
         * in rank order and stores them */
        const int j0 = split * F4 / p.splits, j1 = (split + 1) * F4 / p.splits;
        cuops_cluster_reduce_store(part, 128 * 16, p.splits, j0, j1, [&](int j, const float4 &sum) {
            w4d_store_frag<T, KP>(p, wb, consumer, warp, g, tq, j, sum);
        });
        cuops_cluster_sync_relaxed(); /* no CTA leaves while its partials are read */
    }
#undef W4D_FULL_BAR
#undef W4D_EMPTY_BAR
}

#endif /* CUOPS_SM90A_DEVICE */

template <typename T, int XN, int KT, int KP>
__global__ void __launch_bounds__(W4D_THREADS, 1)
w4a16_decode_wgmma_kernel(const __grid_constant__ CUtensorMap tmap_x, const w4d_params_t p)
{
#if CUOPS_SM90A_DEVICE
    w4d_cta<T, XN, KT, KP>(tmap_x, p);
#endif
}

/* ---- host ------------------------------------------------------------------- */

typedef void (*w4d_kernel_fn)(const CUtensorMap, const w4d_params_t);

/* x rows per tile for m rows of x */
static int w4d_xn(int64_t m) { return m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64; }

template <int KT, int KP> static w4d_kernel_fn w4d_pick_kt(int bf, int xn)
{
    switch (xn) {
    case 8: return bf ? w4a16_decode_wgmma_kernel<__nv_bfloat16, 8, KT, KP> : w4a16_decode_wgmma_kernel<__half, 8, KT, KP>;
    case 16: return bf ? w4a16_decode_wgmma_kernel<__nv_bfloat16, 16, KT, KP> : w4a16_decode_wgmma_kernel<__half, 16, KT, KP>;
    case 32: return bf ? w4a16_decode_wgmma_kernel<__nv_bfloat16, 32, KT, KP> : w4a16_decode_wgmma_kernel<__half, 32, KT, KP>;
    default: return bf ? w4a16_decode_wgmma_kernel<__nv_bfloat16, 64, KT, KP> : w4a16_decode_wgmma_kernel<__half, 64, KT, KP>;
    }
}

/* The three forms: kt = 1 (one 64-k block per stage, the study's), kt =
 * W4D_KT with kp = 1 (256-row CTAs) or kp = 4 (64-row CTAs, K in four
 * phases inside the CTA). */
static w4d_kernel_fn w4d_pick(cuops_dtype_t act, int xn, int kt, int kp)
{
    const int bf = act == CUOPS_DTYPE_BF16;
    if (kt == 1) return w4d_pick_kt<1, 1>(bf, xn);
    return kp == 4 ? w4d_pick_kt<W4D_KT, 4>(bf, xn) : w4d_pick_kt<W4D_KT, 1>(bf, xn);
}

#define W4D_SMEM_CASE(XN, kt, kp)                                                             \
    ((kt) == 1 ? W4D_SMEM_BYTES(XN, 1, 1)                                                     \
               : (kp) == 4 ? W4D_SMEM_BYTES(XN, W4D_KT, 4) : W4D_SMEM_BYTES(XN, W4D_KT, 1))
static int w4d_smem_bytes(int xn, int kt, int kp)
{
    switch (xn) {
    case 8: return W4D_SMEM_CASE(8, kt, kp);
    case 16: return W4D_SMEM_CASE(16, kt, kp);
    case 32: return W4D_SMEM_CASE(32, kt, kp);
    default: return W4D_SMEM_CASE(64, kt, kp);
    }
}
#undef W4D_SMEM_CASE

/* Clusters of `size` CTAs of the form's XN kernel that device `dev` holds
 * at once (cudaOccupancyMaxActiveClusters; f16 and bf16 instances use the
 * same resources). -1 when the query fails. */
static int w4d_max_clusters(int dev, int xn, int kt, int kp, int size)
{
    static int cache[16][3][4][W4D_MAX_SPLITS + 1];
    const int xi = xn == 8 ? 0 : xn == 16 ? 1 : xn == 32 ? 2 : 3;
    const int form = kt == 1 ? 0 : kp == 4 ? 2 : 1;
    if (dev < 0 || dev >= 16 || size < 1 || size > W4D_MAX_SPLITS) return -1;
    int *slot = &cache[dev][form][xi][size];
    if (__atomic_load_n(slot, __ATOMIC_RELAXED) == 0)
        __atomic_store_n(slot,
                         cuops_cluster_max_active((const void *)w4d_pick(CUOPS_DTYPE_F16, xn, kt, kp),
                                                  W4D_THREADS, size, w4d_smem_bytes(xn, kt, kp)),
                         __ATOMIC_RELAXED);
    return __atomic_load_n(slot, __ATOMIC_RELAXED);
}

int w4a16_decode_wgmma_serves(const struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                              const w4_geometry_t *geo)
{
    if (h->sm_major != 9) return 0;
    if (d->m < 1 || d->m > 64) return 0;
    /* both stage depths use at most this much */
    if (h->smem_optin_bytes < W4D_RING_BYTES + 2 * 12 * 8 + 1024) return 0;
    if (geo->group_size % W4D_BK != 0 && geo->num_groups != 1) return 0;
    if (d->k > 0x7fffff00 || geo->ktiles > 0x7fffffff || d->n > 0x7fffff00) return 0;
    /* grid = weight blocks x splits must fit an int */
    if (cuops_ceil_div(geo->strips, W4D_STRIPS) > 0x7fffffff / W4D_MAX_SPLITS) return 0;
    return cuops_aligned(d->x, 2) && cuops_aligned(d->y, 2);
}

cuops_status_t w4a16_launch_decode_wgmma(struct cuops_handle *h, const cuops_w4a16_desc_t *d,
                                         const w4_geometry_t *geo, int kt, int64_t forced_splits,
                                         const char **kernel_name)
{
    const char *const name = kt == 1 ? "w4a16_decode_wgmma_kt1" : "w4a16_decode_wgmma";
    *kernel_name = name;
    kt = kt == 1 ? 1 : W4D_KT;
    const int sms = h->num_sms > 0 ? h->num_sms : 132;
    const int xn = w4d_xn(d->m);
    /* 64-row CTAs where 64-row blocks fit the SMs in one round, but for
     * long K ranges at m <= 32 (w4a16_decode_wgmma_form.h) */
    const int kp = w4a16_decode_wgmma_kphases(d->m, geo->strips, geo->ktiles, sms, kt == 1);
    const int smem = w4d_smem_bytes(xn, kt, kp);
    if (!w4a16_decode_wgmma_serves(h, d, geo))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          "%s: serves sm_90 (%d bytes of shared memory per block) with m <= 64, "
                          "group_size a multiple of 64 or one group per row, k < 2^31, x and y "
                          "2-byte aligned (sm_%d%d, m %lld, group_size %lld, k %lld)",
                          name, smem, h->sm_major, h->sm_minor, (long long)d->m,
                          (long long)d->group_size, (long long)d->k);
    /* x as TMA reads it: in place when it can, else packed K-major once */
    CUtensorMap tmap_x;
    cuops_status_t st = w4_wgmma_x_map(h, d, (uint32_t)xn, name, &tmap_x);
    if (st != CUOPS_STATUS_SUCCESS) return st;

    w4d_params_t p;
    memset(&p, 0, sizeof p);
    w4_wgmma_common_params(&p, d, geo);

    /* splits: fill the SMs once (one CTA each), at most 8 and one per
     * 64-k block, all clusters resident at once (else fewer) */
    const int64_t blocks = cuops_ceil_div(geo->strips, W4D_STRIPS / kp);
    int64_t s = forced_splits > 0 ? forced_splits : w4a16_decode_wgmma_fill_splits(blocks, sms);
    if (s > W4D_MAX_SPLITS) s = W4D_MAX_SPLITS;
    if (s > geo->ktiles) s = geo->ktiles;
    if (s < 1) s = 1;
    /* auto: every cluster resident at once; forced: at least one fits */
    while (s > 1 &&
           (forced_splits > 0 ? 1 : blocks) > w4d_max_clusters(h->device, xn, kt, kp, (int)s))
        s--;
    p.splits = (int)s;

    w4d_kernel_fn fn = w4d_pick(d->act_type, xn, kt, kp);
    CUOPS_CUDA_TRY(h, cudaFuncSetAttribute((const void *)fn,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    if (s == 1) {
        /* no split: a plain launch (the kernel takes no cluster step then) */
        fn<<<(unsigned)blocks, W4D_THREADS, smem, cuops_stream(h)>>>(tmap_x, p);
    } else {
        cudaLaunchConfig_t cfg;
        cudaLaunchAttribute attr;
        cuops_cluster_launch_config(&cfg, &attr, (int)(blocks * s), W4D_THREADS, (int)s, smem,
                                    cuops_stream(h));
        CUOPS_CUDA_TRY(h, cudaLaunchKernelEx(&cfg, fn, tmap_x, p));
    }
    st = cuops_cuda_check_launch(h, name);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    h->last_kernel = name;
    return CUOPS_STATUS_SUCCESS;
}
