/*
 * dequant_vector.cu - int4 dequantization with vector loads and stores, one
 * unit of work per warp and no loop: the vector-width ladder and the
 * warp_coalesced variants (auto before dequant_persistent.cu, kept for the
 * side-by-side comparison and for rows of more than 2^30 chunks).
 *
 * A chunk is VEC consecutive outputs of one row (4, 8, 16 or 32): one
 * VEC/2-byte load of packed nibbles, one scale and one zero for the whole
 * chunk (the dispatch only picks VEC when it divides group_size, so a chunk
 * never straddles a group), VEC*sizeof(out) bytes of 8/16-byte stores. A
 * thread handles UNROLL chunks 32 chunks apart, so every warp-wide load or
 * store instruction covers contiguous memory, and issues all of their loads
 * (packed, scale, zero) before the first use: UNROLL DRAM round trips
 * overlap instead of queueing.
 *
 * Variants built from this file (names in dequant_dispatch.cu):
 *  hoisted_b4 .. hoisted_b32   VEC = 4..32, UNROLL = 1: the per-thread width
 *                              ladder. With VEC*sizeof(out) > 16 a warp's
 *                              16-byte store instruction is strided (64 bytes
 *                              per lane at b32 f16), so each 32-byte sector
 *                              is written in two halves by two instructions.
 *  warp_coalesced_x1/x2/x4     VEC*sizeof(out) = 16 bytes (8 halves or 4
 *                              floats): each store instruction writes 512
 *                              contiguous bytes, each packed load 64/128
 *                              contiguous bytes; UNROLL = 1, 2, 4.
 *  warp_coalesced_x4_stream    the same with st.global.cs (evict-first): the
 *                              output is written once and not read here.
 *  hoisted_b16_pair / _x2      hoisted_b16 (UNROLL = 1, 2) with sector-complete
 *                              stores: lanes 2m and 2m+1 swap 16-byte halves
 *                              with __shfl_xor_sync(.., 1) before storing, so
 *                              that one store instruction writes the whole
 *                              32-byte sector of the even lane's chunk (even
 *                              lane bytes 0-15, odd lane bytes 16-31) and the
 *                              next one the odd lane's: 16 complete sectors per
 *                              instruction instead of 32 half sectors, half the
 *                              L2 sector writes (see vector_store_pair).
 *                              f32 out: the same per 32-byte sector of the
 *                              64-byte chunk.
 *  hoisted_b16_occ8            hoisted_b16 held to 32 registers, so 8 CTAs
 *                              (every warp slot) fit an SM instead of 6: a
 *                              third more loads in flight per SM.
 *  hoisted_b16_wt / _wt_occ8   hoisted_b16 (and its 32-register form) with
 *                              warp-transposed stores: the packed words go
 *                              through the warp before conversion, so that
 *                              each 16-byte store instruction writes 512
 *                              contiguous bytes (see vector_store_transposed).
 *                              16-bit out, k a multiple of 512.
 *  hoisted_b16_wt_t128         _wt_occ8 in CTAs of 128 threads (16 per SM).
 *  warp_coalesced_x1/x2_occ8   the same hold on warp_coalesced_x1/x2, whose
 *                              store instructions write whole 32-byte sectors
 *                              (the write traffic into L2 was the busiest unit
 *                              of hoisted_b16_occ8 at 32768x8192:
 *                              docs/dequant.md). x4 spills at 32 registers,
 *                              and so does the lane-pair exchange.
 *
 * Little's law at x4 on an H200: 4 chunks x (4 B packed + scale + zero) per
 * thread, 2048 threads per SM -> ~40 KB of loads in flight per SM (the reads
 * are a fifth of the traffic for f16 out); 4.3 TB/s x ~700 ns = 3 MB in
 * flight over 132 SMs = 23 KB per SM of total traffic, so the loads are not
 * the limit and the stores (fire and forget) stream behind them.
 *
 * The last chunk of a row when k % VEC != 0 is done element by element (its
 * vector load could read past the row, or past the allocation on the last
 * row).
 *
 * Run: cuops-bench dequant --variant warp_coalesced_x4 (etc.), or
 * --variant hoisted_b16 --variant hoisted_b16_pair side by side.
 */
#include <stdio.h>
#include <string.h>

#include "cuda/quant/dequant_common.cuh"

#define VECTOR_THREADS 256

template <int VEC> struct vec_traits {
    static constexpr int WORDS_IN = VEC >= 8 ? VEC / 8 : 1;
};

template <int VEC>
__device__ __forceinline__ void vector_load_packed(const uint8_t *p, uint32_t (&w)[vec_traits<VEC>::WORDS_IN])
{
    if constexpr (VEC == 4) {
        w[0] = __ldg((const unsigned short *)p);
    } else if constexpr (VEC == 8) {
        w[0] = __ldg((const unsigned int *)p);
    } else if constexpr (VEC == 16) {
        const uint2 v = __ldg((const uint2 *)p);
        w[0] = v.x; w[1] = v.y;
    } else {
        const uint4 v = __ldg((const uint4 *)p);
        w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
    }
}

template <bool STREAM> __device__ __forceinline__ void vector_store16(void *p, uint4 v)
{
    if constexpr (STREAM) __stcs((uint4 *)p, v);
    else *(uint4 *)p = v;
}
template <bool STREAM> __device__ __forceinline__ void vector_store8(void *p, uint2 v)
{
    if constexpr (STREAM) __stcs((uint2 *)p, v);
    else *(uint2 *)p = v;
}

template <typename O> __device__ __forceinline__ void vector_store_one(O *p, float v)
{
    if constexpr (sizeof(O) == 4) *(float *)p = v;
    else *(unsigned short *)p = (unsigned short)(cuops_pack2<O>(v, 0.0f) & 0xFFFFu);
}

/* The VEC outputs of one full chunk, as the 32-bit words to store. */
template <typename O, int VEC>
__device__ __forceinline__ void vector_convert(const uint32_t (&packed)[vec_traits<VEC>::WORDS_IN], float zm,
                                               float s, uint32_t (&res)[VEC * (int)sizeof(O) / 4])
{
#pragma unroll
    for (int j = 0; j < VEC; j += 2) {
        const uint32_t word = packed[j / 8];
        const uint32_t q0 = (word >> (4 * (j % 8))) & 0xFu;
        const uint32_t q1 = (word >> (4 * (j % 8) + 4)) & 0xFu;
        const float v0 = (dequant_magic(q0) - zm) * s;
        const float v1 = (dequant_magic(q1) - zm) * s;
        if constexpr (sizeof(O) == 4) {
            res[j] = __float_as_uint(v0);
            res[j + 1] = __float_as_uint(v1);
        } else {
            res[j / 2] = cuops_pack2<O>(v0, v1);
        }
    }
}

/* A partial last chunk of a row, element by element: at most VEC-1 outputs
 * (a vector load could read past the row, or past the allocation). */
template <typename O>
__device__ __forceinline__ void vector_store_tail(const dequant_params_t &p, int64_t row, int64_t col0, float zm,
                                                  float s)
{
    const uint8_t *qrow = p.qweight + row * p.ldq;
    for (int64_t c = col0; c < p.k; c++) {
        const uint32_t q = ((uint32_t)__ldg(qrow + (c >> 1)) >> ((uint32_t)(c & 1) * 4u)) & 0xFu;
        vector_store_one<O>((O *)p.out + row * p.ldo + c, (dequant_magic(q) - zm) * s);
    }
}

/* Sector-complete stores of one chunk per lane (WORDS words, a multiple of 8:
 * one or more 32-byte sectors, each stored as two 16-byte halves).
 *
 * Why: with every lane storing its own chunk, a warp's first 16-byte store
 * writes the first half of 32 different sectors and the second store the
 * other halves, so L2 sees each sector as two partial writes. Here lanes 2m
 * and 2m+1 (chunks t and t+1, t even) swap halves first: the even lane sends
 * its upper half of each sector, the odd lane its lower half. Then, sector by
 * sector, one instruction writes the even lane's chunk (even lane: its own
 * lower half at +0; odd lane: the received upper half at +16) and the next
 * one the odd lane's chunk (even lane: the received lower half at +0; odd
 * lane: its own upper half at +16): every 32-byte sector is written whole by
 * one instruction.
 *
 * Every lane of the warp must call this, whether its chunk is valid, full,
 * partial or past the end: the shuffles need all 32 lanes. ok says whether
 * this lane's chunk is to be stored from res (valid and full); a half is
 * stored only when the chunk it belongs to is ok, so a lane never writes its
 * partner's data for a partner that is past the end or takes the element-wise
 * path (that partner's res is not its output). offset is this lane's chunk
 * address as bytes from out (16-byte aligned; any value when !ok); its low
 * bit carries ok through the shuffle. An offset, not a pointer, goes through
 * the shuffle so that the compiler still knows the stores are global
 * (st.global, not generic st). */
template <int WORDS, bool STREAM>
__device__ __forceinline__ void vector_store_pair(uint8_t *out, uint64_t offset, bool ok,
                                                  const uint32_t (&res)[WORDS], uint32_t lane)
{
    static_assert(WORDS % 8 == 0, "the pair exchange swaps 16-byte halves of 32-byte sectors");
    constexpr unsigned ALL = 0xffffffffu;
    const bool odd = (lane & 1u) != 0;
    const unsigned long long own = (unsigned long long)offset | (ok ? 1ull : 0ull);
    const unsigned long long partner = __shfl_xor_sync(ALL, own, 1);
    const bool partner_ok = (partner & 1ull) != 0;
    const uint64_t partner_off = partner & ~1ull;
    /* this lane's half of the even lane's chunk and of the odd lane's chunk */
    uint8_t *even_half = out + (odd ? partner_off + 16u : offset);
    uint8_t *odd_half = out + (odd ? offset + 16u : partner_off);
    const bool even_ok = odd ? partner_ok : ok;
    const bool odd_ok = odd ? ok : partner_ok;
#pragma unroll
    for (int sec = 0; sec < WORDS / 8; sec++) {
        /* word by word, so that the choices stay selects (one SEL each)
         * rather than a branch on the lane's parity */
        uint32_t even_part[4], odd_part[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const uint32_t lo = res[8 * sec + i], hi = res[8 * sec + 4 + i];
            const uint32_t got = __shfl_xor_sync(ALL, odd ? lo : hi, 1);
            even_part[i] = odd ? got : lo;
            odd_part[i] = odd ? hi : got;
        }
        if (even_ok)
            vector_store16<STREAM>(even_half + 32 * sec,
                                   make_uint4(even_part[0], even_part[1], even_part[2], even_part[3]));
        if (odd_ok)
            vector_store16<STREAM>(odd_half + 32 * sec, make_uint4(odd_part[0], odd_part[1], odd_part[2], odd_part[3]));
    }
}

/* Warp-transposed stores of a warp's 32 chunks of 16 16-bit outputs (1 KB,
 * one row: 64 pieces of 8 outputs, lane l's chunk is pieces 2l and 2l+1).
 *
 * Why: a stream shaped like this kernel (8 bytes read, 32 written per
 * thread, no math; cuops-probe writes) ran at 77 % of the copy ceiling with
 * each lane storing its own 32 bytes and at 94 % with each store instruction
 * writing 512 contiguous bytes (H200, 32768x8192; docs/dequant.md, P202).
 * Store i (0, 1) of lane l writes piece 32 i + l, whose packed word is word
 * (l & 1) of lane 16 i + l / 2's chunk: two shuffles of the packed words and
 * two of that chunk's zero and scale per store, then the 8 outputs are
 * converted by the storing lane. base is the byte address of the warp's
 * first output. All 32 lanes must call this (the caller's chunks are all
 * valid and full: supports() asks for whole warps per row). */
template <typename O>
__device__ __forceinline__ void vector_store_transposed(uint8_t *base, const uint32_t (&packed)[2], float zm,
                                                        float s, uint32_t lane)
{
    static_assert(sizeof(O) == 2, "16-bit outputs: a piece of 8 is one packed word and 16 bytes");
    constexpr unsigned ALL = 0xffffffffu;
    const bool odd = (lane & 1u) != 0;
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int src = 16 * i + (int)(lane >> 1);
        const uint32_t w0 = __shfl_sync(ALL, packed[0], src);
        const uint32_t w1 = __shfl_sync(ALL, packed[1], src);
        const float zm_src = __shfl_sync(ALL, zm, src);
        const float s_src = __shfl_sync(ALL, s, src);
        const uint32_t piece[1] = {odd ? w1 : w0};
        uint32_t res[4];
        vector_convert<O, 8>(piece, zm_src, s_src, res);
        vector_store16<false>(base + (32u * (uint32_t)i + lane) * 16u,
                              make_uint4(res[0], res[1], res[2], res[3]));
    }
}

/* PAIR: sector-complete stores through the lane-pair exchange
 * (vector_store_pair); needs chunks of a whole number of 32-byte sectors.
 * MIN_CTAS: CTAs per SM the registers must allow (1: ptxas's choice, 40
 * registers and 6 CTAs of 256 threads for hoisted_b16; 8 of 256 or 16 of
 * 128: every warp slot of the SM, 32 registers). WT: warp-transposed stores
 * (vector_store_transposed; VEC 16, 16-bit out, whole warps per row).
 * THREADS: threads per CTA (256 but for hoisted_b16_wt_t128). */
template <typename S, typename O, int VEC, int UNROLL, bool STREAM, bool PAIR, int MIN_CTAS = 1, bool WT = false,
          int THREADS = VECTOR_THREADS>
__global__ void __launch_bounds__(THREADS, MIN_CTAS) dequant_vector_kernel(dequant_params_t p)
{
    static_assert(!WT || (VEC == 16 && sizeof(O) == 2 && !PAIR), "warp-transposed stores: 16 16-bit outputs");
    constexpr int WORDS_IN = vec_traits<VEC>::WORDS_IN;
    constexpr int WORDS_OUT = VEC * (int)sizeof(O) / 4;
    static_assert(!PAIR || WORDS_OUT % 8 == 0, "pair stores need chunks of whole 32-byte sectors");
    constexpr uint64_t SPAN = 32u * UNROLL; /* chunks per warp per iteration */
    const uint32_t lane = threadIdx.x & 31u;
    const uint64_t total = (uint64_t)p.total_chunks;
    const uint64_t warp_stride = ((uint64_t)gridDim.x * THREADS) >> 5;
    const S *scales = (const S *)p.scales;

    /* one pass in practice: the host launches a warp per 32*UNROLL chunks */
    for (uint64_t w = ((uint64_t)blockIdx.x * THREADS + threadIdx.x) >> 5; w * SPAN < total;
         w += warp_stride) {
        uint32_t packed[UNROLL][WORDS_IN];
        float scale[UNROLL];
        uint32_t zero[UNROLL];
        int64_t row[UNROLL], col0[UNROLL];
        bool valid[UNROLL], full[UNROLL];

        /* Phase 1: every address, then every load. Nothing below waits until
         * phase 2 touches packed/scale/zero. */
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const uint64_t t = w * SPAN + (uint64_t)u * 32u + lane;
            valid[u] = t < total;
            full[u] = false;
            row[u] = 0;
            col0[u] = 0;
            scale[u] = 0.0f;
            zero[u] = 8u;
#pragma unroll
            for (int i = 0; i < WORDS_IN; i++) packed[u][i] = 0;
            if (valid[u]) {
                /* total < 2^32 per launch (the host splits larger calls by rows),
                 * so the index math is 32-bit: a shift or a ~20-instruction
                 * division, never the 64-bit division routine (a call). */
                const uint32_t t32 = (uint32_t)t;
                const uint32_t cpr = (uint32_t)p.chunks_per_row, cpg = (uint32_t)p.chunks_per_group;
                const uint32_t r = p.chunks_per_row_log2 >= 0 ? t32 >> p.chunks_per_row_log2 : t32 / cpr;
                const uint32_t cc = t32 - r * cpr;
                const uint32_t g = p.chunks_per_group_log2 >= 0 ? cc >> p.chunks_per_group_log2 : cc / cpg;
                row[u] = (int64_t)r;
                col0[u] = (int64_t)cc * VEC;
                full[u] = col0[u] + VEC <= p.k;
                const int64_t sidx = (int64_t)r * p.num_groups + (int64_t)g;
                if (full[u]) vector_load_packed<VEC>(p.qweight + (int64_t)r * p.ldq + col0[u] / 2, packed[u]);
                scale[u] = dequant_load_scale<S>(scales + sidx);
                if (p.zeros) zero[u] = __ldg(p.zeros + sidx);
            }
        }

        /* Phase 2: convert and store. */
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if constexpr (WT) {
                /* valid for the whole warp or for none of it (whole warps per
                 * row), and every chunk full (k a multiple of 512) */
                if (!valid[u]) continue;
                uint8_t *base = (uint8_t *)p.out +
                                (uint64_t)(row[u] * p.ldo + col0[u] - (int64_t)lane * VEC) * sizeof(O);
                vector_store_transposed<O>(base, packed[u], dequant_magic(zero[u]), scale[u], lane);
            } else if constexpr (PAIR) {
                const float zm = dequant_magic(zero[u]);
                const float s = scale[u];
                const uint64_t offset = (uint64_t)(row[u] * p.ldo + col0[u]) * sizeof(O);
                /* all 32 lanes, valid or not, reach the exchange: an invalid or
                 * partial lane converts a chunk of zero nibbles (packed was not
                 * loaded) that is never stored; only the stores are predicated */
                uint32_t res[WORDS_OUT];
                vector_convert<O, VEC>(packed[u], zm, s, res);
                vector_store_pair<WORDS_OUT, STREAM>((uint8_t *)p.out, offset, valid[u] && full[u], res, lane);
                if (valid[u] && !full[u]) vector_store_tail<O>(p, row[u], col0[u], zm, s);
            } else {
                if (!valid[u]) continue;
                const float zm = dequant_magic(zero[u]);
                const float s = scale[u];
                O *dst = (O *)p.out + row[u] * p.ldo + col0[u];
                if (full[u]) {
                    uint32_t res[WORDS_OUT];
                    vector_convert<O, VEC>(packed[u], zm, s, res);
                    if constexpr (WORDS_OUT >= 4) {
#pragma unroll
                        for (int i = 0; i < WORDS_OUT / 4; i++)
                            vector_store16<STREAM>(dst + i * (16 / (int)sizeof(O)),
                                                   make_uint4(res[4 * i], res[4 * i + 1], res[4 * i + 2],
                                                              res[4 * i + 3]));
                    } else {
                        vector_store8<STREAM>(dst, make_uint2(res[0], res[1]));
                    }
                } else {
                    vector_store_tail<O>(p, row[u], col0[u], zm, s);
                }
            }
        }
    }
}

/* ---- host side ----------------------------------------------------------- */

int dequant_vector_transposed_supported(const cuops_dequant_desc_t *d, char *why)
{
    if (cuops_dtype_size(d->out_type) != 2) {
        snprintf(why, 256, "warp-transposed stores take 16-bit output, not %s",
                 cuops_dtype_name(d->out_type));
        return 0;
    }
    if (d->k % 512 != 0) {
        snprintf(why, 256, "warp-transposed stores need k a multiple of 512 (a warp's 32 chunks in one row), not %lld",
                 (long long)d->k);
        return 0;
    }
    return dequant_vector_supported(d, 16, why);
}

int dequant_vector_supported(const cuops_dequant_desc_t *d, int vec, char *why)
{
    const int64_t os = (int64_t)cuops_dtype_size(d->out_type);
    const int64_t ss = (int64_t)cuops_dtype_size(d->scale_type);
    const int64_t unit = (vec * os < 16) ? vec * os : 16;
    if (d->group_size % vec != 0) {
        snprintf(why, 256, "group_size %lld is not a multiple of %d outputs per chunk",
                 (long long)d->group_size, vec);
        return 0;
    }
    if (!cuops_aligned(d->qweight, (size_t)(vec / 2)) || d->ldq % (vec / 2) != 0) {
        snprintf(why, 256, "qweight (%p) or ldq (%lld) is not aligned to the %d-byte packed load",
                 (const void *)d->qweight, (long long)d->ldq, vec / 2);
        return 0;
    }
    if (!cuops_aligned(d->out, (size_t)unit) || (d->ldo * os) % unit != 0) {
        snprintf(why, 256, "out (%p) or ldo*%lld bytes (%lld) is not aligned to the %lld-byte store",
                 d->out, (long long)os, (long long)d->ldo, (long long)unit);
        return 0;
    }
    if (cuops_ceil_div(d->k, vec) > (int64_t)0xffffffffu) {
        snprintf(why, 256, "k (%lld) has more than 2^32 chunks per row", (long long)d->k);
        return 0;
    }
    if (!cuops_aligned(d->scales, (size_t)ss)) {
        snprintf(why, 256, "scales (%p) is not aligned to its element size", d->scales);
        return 0;
    }
    return 1;
}

template <typename S, typename O, int VEC, int UNROLL, bool STREAM, bool PAIR, int MIN_CTAS = 1, bool WT = false,
          int THREADS = VECTOR_THREADS>
static void launch_vector_one(const dequant_params_t &p, int64_t blocks, cudaStream_t st)
{
    dequant_vector_kernel<S, O, VEC, UNROLL, STREAM, PAIR, MIN_CTAS, WT, THREADS>
        <<<(unsigned)blocks, THREADS, 0, st>>>(p);
}

/* Threads per CTA of a store form: 128 for the warp-transposed stores held
 * to 32 registers in CTAs of 128 (6: 16 CTAs per SM, every warp slot, as 8
 * of 256), 256 for every other form. From 4096x4096 to 32768x8192, CTAs of
 * 128 measured 0.1-0.5 % faster than 256 (27 of 28 pairs, one tie), 64
 * within 0.5 % of 128 either way, 512 and 1024 1-5 % slower (H200,
 * docs/dequant.md, P207). */
static int vector_threads(int store)
{
    return store == 6 ? 128 : VECTOR_THREADS;
}

/* The (VEC, UNROLL, store) combinations the dispatch table names; store: 0
 * st.global, 1 st.global.cs, 2 st.global after the lane-pair exchange, 3
 * st.global from a kernel held to 32 registers (8 CTAs per SM), 4 / 5
 * warp-transposed stores (16-bit out, VEC 16), without / with that hold;
 * 6 the held one in CTAs of 128 threads. */
template <typename S, typename O>
static int launch_vector_typed(const dequant_params_t &p, int vec, int unroll, int store,
                               int64_t blocks, cudaStream_t st)
{
    constexpr int C16 = 16 / (int)sizeof(O); /* outputs in 16 bytes */
    if (store >= 4 && store <= 6) {
        if constexpr (sizeof(O) == 2) {
            if (vec != 16 || unroll != 1) return 0;
            if (store == 4) launch_vector_one<S, O, 16, 1, false, false, 1, true>(p, blocks, st);
            else if (store == 5) launch_vector_one<S, O, 16, 1, false, false, 8, true>(p, blocks, st);
            else launch_vector_one<S, O, 16, 1, false, false, 16, true, 128>(p, blocks, st);
            return 1;
        }
        return 0;
    }
    if (store == 2) {
        /* 16 outputs: 32 bytes (one sector) of f16/bf16, 64 bytes (two) of f32 */
        if (vec != 16) return 0;
        if (unroll == 1) { launch_vector_one<S, O, 16, 1, false, true>(p, blocks, st); return 1; }
        if (unroll == 2) { launch_vector_one<S, O, 16, 2, false, true>(p, blocks, st); return 1; }
        return 0;
    }
    if (store == 3) {
        /* held to 32 registers: 8 CTAs of 256 threads per SM */
        if (vec == 16 && unroll == 1) { launch_vector_one<S, O, 16, 1, false, false, 8>(p, blocks, st); return 1; }
        if (vec != C16) return 0;
        if (unroll == 1) { launch_vector_one<S, O, C16, 1, false, false, 8>(p, blocks, st); return 1; }
        if (unroll == 2) { launch_vector_one<S, O, C16, 2, false, false, 8>(p, blocks, st); return 1; }
        return 0;
    }
    if (unroll == 1 && store == 0) {
        switch (vec) {
        case 4: launch_vector_one<S, O, 4, 1, false, false>(p, blocks, st); return 1;
        case 8: launch_vector_one<S, O, 8, 1, false, false>(p, blocks, st); return 1;
        case 16: launch_vector_one<S, O, 16, 1, false, false>(p, blocks, st); return 1;
        case 32: launch_vector_one<S, O, 32, 1, false, false>(p, blocks, st); return 1;
        default: return 0;
        }
    }
    if (vec != C16) return 0;
    if (unroll == 2 && store == 0) { launch_vector_one<S, O, C16, 2, false, false>(p, blocks, st); return 1; }
    if (unroll == 4 && store == 0) { launch_vector_one<S, O, C16, 4, false, false>(p, blocks, st); return 1; }
    if (unroll == 4 && store == 1) { launch_vector_one<S, O, C16, 4, true, false>(p, blocks, st); return 1; }
    return 0;
}

template <typename S>
static int launch_vector_out(cuops_dtype_t out_type, const dequant_params_t &p, int vec, int unroll,
                             int store, int64_t blocks, cudaStream_t st)
{
    switch (out_type) {
    case CUOPS_DTYPE_F16: return launch_vector_typed<S, __half>(p, vec, unroll, store, blocks, st);
    case CUOPS_DTYPE_BF16: return launch_vector_typed<S, __nv_bfloat16>(p, vec, unroll, store, blocks, st);
    case CUOPS_DTYPE_F32: return launch_vector_typed<S, float>(p, vec, unroll, store, blocks, st);
    default: return 0;
    }
}

cuops_status_t dequant_launch_vector(struct cuops_handle *h, const cuops_dequant_desc_t *d,
                                     int vec, int unroll, int store, const char *kernel_name)
{
    dequant_params_t p = dequant_params_from_desc(d, vec);

    /* Launches of at most 2^32-1 chunks each (whole rows), so the kernel's
     * chunk index is 32-bit. Only outputs of 32G+ elements need a second one. */
    const int64_t max_rows = (int64_t)0xffffffffu / p.chunks_per_row;
    const size_t ses = cuops_dtype_size(d->scale_type), oes = cuops_dtype_size(d->out_type);
    cudaStream_t st = cuops_stream(h);
    int ok = 1;
    for (int64_t r0 = 0; r0 < d->n && ok; r0 += max_rows) {
        const int64_t rows = (d->n - r0 < max_rows) ? d->n - r0 : max_rows;
        dequant_params_t q = p;
        q.qweight = d->qweight + r0 * d->ldq;
        q.scales = (const uint8_t *)d->scales + (size_t)(r0 * d->num_groups) * ses;
        q.zeros = d->zeros ? d->zeros + r0 * d->num_groups : NULL;
        q.out = (uint8_t *)d->out + (size_t)(r0 * d->ldo) * oes;
        q.n = rows;
        q.total_chunks = rows * p.chunks_per_row;
        const int64_t warps = cuops_ceil_div(q.total_chunks, 32 * (int64_t)unroll);
        const int64_t blocks = cuops_ceil_div(warps, vector_threads(store) / 32);
        switch (d->scale_type) {
        case CUOPS_DTYPE_F16: ok = launch_vector_out<__half>(d->out_type, q, vec, unroll, store, blocks, st); break;
        case CUOPS_DTYPE_BF16: ok = launch_vector_out<__nv_bfloat16>(d->out_type, q, vec, unroll, store, blocks, st); break;
        case CUOPS_DTYPE_F32: ok = launch_vector_out<float>(d->out_type, q, vec, unroll, store, blocks, st); break;
        default: ok = 0; break;
        }
    }
    if (!ok)
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR,
                          "dequant: no vector kernel for vec=%d unroll=%d store=%d (%s -> %s)", vec,
                          unroll, store, cuops_dtype_name(d->scale_type), cuops_dtype_name(d->out_type));
    return cuops_cuda_check_launch(h, kernel_name);
}
