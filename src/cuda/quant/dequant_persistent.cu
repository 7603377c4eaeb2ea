/*
 * dequant_persistent.cu - int4 dequantization as a persistent, double-buffered
 * stream: the fast path of cuops_dequant_int4 at every size.
 *
 * What it changes against warp_coalesced_xU (dequant_vector.cu), and why:
 *
 *  1. No tail. warp_coalesced_x4 launches one warp per unit of 32*U chunks;
 *     at 4096x4096 f16 that is 2048 CTAs over 660 resident slots, 3.1 waves:
 *     the fourth wave runs a tenth full, and the time is linear in the CTA
 *     lifetime, not in the bytes. Here the grid is sized once so that every
 *     warp owns the same number of units (at most one fewer): with
 *     iters = ceil(units / resident_warps), the grid holds
 *     ceil(units / iters) warps. Units are dealt grid-stride (warp w takes
 *     w, w + W, w + 2W, ...), so at any moment the whole GPU writes one
 *     contiguous window of the output (DRAM rows are filled by neighbouring
 *     requests), and every warp runs until the same last round.
 *  2. Two units in flight per warp. The registers of unit i+1 (packed
 *     nibbles, raw scale bits, zero) are loaded before unit i is converted
 *     and stored; the loop alternates two register buffers, so while the
 *     warp waits for one unit the other unit's loads are already out. A
 *     buffer holds raw loaded bits only (scale bits are converted to float at
 *     the use), so no instruction between the load and the store phase
 *     waits on a load: the only scoreboard waits are at the conversions.
 *     Little's law: at 1024 threads per SM (4 CTAs of 256) and U = 4, up to
 *     1024 x 2 x 16 B = 32 KB of packed loads per SM are in flight, which the
 *     probe's read curve puts at the 4.4 TB/s plateau; the read stream here
 *     needs only a fifth of that bandwidth (f16 out), so a read latency of
 *     up to ~5 us under a saturated write stream is still covered.
 *  3. Packed bytes are read with ld.global.nc.L1::no_allocate: each byte is
 *     used once, so it should not displace the scales and zeros in L1 (16
 *     lanes share one scale; the next unit of the same row hits the line).
 *  4. Fewer instructions per chunk. ncu on warp_coalesced_x4 at 32768x8192
 *     f16: 0.73 warp instructions issued per scheduler cycle, ~130 per
 *     8-output chunk (64-bit row/column math, per-chunk branches, eight
 *     fp32 FADD/FMUL pairs and four F2FP): issue, not only DRAM, was the
 *     limit. Two cuts:
 *     a. Contiguous layout (ldq == k/2, ldo == k, k a multiple of the chunk
 *        and of the group; every dense weight): chunk t's packed word,
 *        output and group are at qweight + t*VEC/2, out + 16t and t / cpg,
 *        so a chunk costs a multiply-high for the group and immediate
 *        offsets for the rest. Other layouts take the general path (row
 *        and column by magic division, 64-bit row offsets).
 *     b. Packed-half conversion when the scales and the output are the same
 *        16-bit type (f16 -> f16, bf16 -> bf16). Bit-exact with the fp32
 *        formula because |q - z| <= 15 has 4 significant bits and the scale
 *        11 (f16) or 8 (bf16), so the product p has at most 15: it is exact
 *        in fp32 (subnormal products too: a bf16 subnormal times an integer
 *        is a multiple of 2^-133, representable in fp32), hence
 *        RN_out(RN_f32(p)) = RN_out(p), one rounding of a 16-bit multiply.
 *        The nibbles of a byte land in the two halves of a register as
 *        1024 + q (f16 0x6400|q) or 128 + q (bf16 0x4300|q), exact;
 *        x - (M + z) is the exact integer q - z; then one multiply by the
 *        scale in both halves. Per 8 outputs: 1 SHF, 4 PRMT, 4 LOP3,
 *        8 HFMA2 and 2 IMAD instead of ~36 fp32 instructions; the HFMA2 are
 *        x*1 + (-(M+z)) and d*s + (-0), each one rounding (-0 keeps the sign
 *        of a zero product, as the CUDA headers' own bf16 multiply on sm_80
 *        does), explicit .rn so nothing is contracted.
 *  5. Stores, by variant: plain st.global.v4 (the output stays in L2 for a
 *     GEMM that reads it next), st.global.cs (evict-first), or, on sm_90,
 *     staged through shared memory and written by the bulk-copy engine
 *     (cp.async.bulk.global.shared::cta): one 2 KB bulk store per warp and
 *     unit instead of sixteen 512-byte warp stores. The bulk variant needs a
 *     contiguous output (ldo == k, k a multiple of the chunk) because a unit's
 *     chunks are then one linear byte range.
 *
 * Chunks, index math and exactness are those of dequant_vector.cu: a chunk
 * is 16 output bytes (8 halves or 4 floats) of one row, VEC divides the
 * group, lane l of unit w takes chunks w*32U + u*32 + l (u < U), so every
 * warp load and store instruction covers contiguous memory. The chunk index
 * is 32-bit: the host splits calls into launches of whole rows of < 2^30
 * chunks. Row and group come from a multiply-high and a shift by
 * host-computed magic numbers (dequant_magic_divisor: exact for any divisor,
 * no division and no branch), recomputed in the store phase (cheaper than
 * holding two 64-bit offsets per chunk in both buffers). A symmetric call
 * reads its zero 8 from one device byte at step 0, so the zero load has no
 * branch either.
 *
 * Shared memory in the bulk variant: each warp owns two 32U x 16 B buffers
 * (one per register buffer). A lane writes its chunk u at (u*32 + lane)*16,
 * so a warp's st.shared.v4 covers 512 contiguous bytes: 4 wavefronts, the
 * minimum for 128-bit accesses, no bank conflict. Before refilling a buffer,
 * lane 0 waits until the bulk store issued from it two phases earlier has
 * read it (cp.async.bulk.wait_group.read 1), then the warp syncs; writers
 * fence the generic-proxy writes for the async proxy before lane 0 issues the
 * copy. At exit lane 0 waits for full completion of its bulk groups.
 *
 * Variants built from this file (names in dequant_dispatch.cu):
 *  persistent_x1 / x2 / x4   U = 1, 2, 4, plain stores
 *  persistent_x4_cs          U = 4, st.global.cs
 *  bulk_store_x4             U = 4, shared memory + cp.async.bulk (sm_90)
 *
 * Run: cuops-bench dequant --variant persistent_x4 (etc.).
 */
#include <stdio.h>
#include <string.h>

#include <type_traits>

#include "cuda/quant/dequant_common.cuh"
#include "cuda/common/ptx_sm90.cuh"

#define PERSIST_THREADS 256
#define PERSIST_WARPS (PERSIST_THREADS / 32)
#define PERSIST_MIN_CTAS 4 /* per SM: caps registers at 64 */
/* chunks per launch: t = w*32U + u*32 + lane then stays below 2^31 */
#define PERSIST_MAX_CHUNKS ((int64_t)1 << 30)
#define PERSIST_MAX_DEVICES 64

enum { STORE_PLAIN = 0, STORE_STREAM = 1, STORE_BULK = 2 };

/* ---- device helpers -------------------------------------------------------- */

/* Packed nibbles of one chunk: 4 bytes (8 outputs) or 2 bytes (4 f32 outputs),
 * read once, so not allocated in L1. */
template <int VEC> __device__ __forceinline__ uint32_t persist_load_packed(const uint8_t *p)
{
    uint32_t v;
    if constexpr (VEC == 8)
        asm("ld.global.nc.L1::no_allocate.b32 %0, [%1];" : "=r"(v) : "l"(p));
    else
        asm("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

/* Raw scale bits into a 32-bit register (zero-extended); converted at the use. */
template <typename S> __device__ __forceinline__ uint32_t persist_load_scale_bits(const S *p)
{
    uint32_t v;
    if constexpr (sizeof(S) == 4)
        asm("ld.global.nc.b32 %0, [%1];" : "=r"(v) : "l"(p));
    else
        asm("ld.global.nc.u16 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

__device__ __forceinline__ uint32_t persist_load_zero(const uint8_t *p)
{
    uint32_t v;
    asm("ld.global.nc.u8 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

template <typename S> __device__ __forceinline__ float persist_scale_from_bits(uint32_t b)
{
    if constexpr (sizeof(S) == 4) return __uint_as_float(b);
    else if constexpr (dequant_is_bf16<S>::value) return __uint_as_float(b << 16);
    else return __half2float(__ushort_as_half((unsigned short)b));
}

/* Scales and output of the same 16-bit type: the packed-half conversion. */
template <typename S, typename O> struct persist_half_path {
    static constexpr bool value = sizeof(O) == 2 && std::is_same<S, O>::value;
};

/* d = a * b + c in both halves, one rounding (RN). */
template <typename O> __device__ __forceinline__ uint32_t persist_fma2(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t d;
    if constexpr (dequant_is_bf16<O>::value)
        asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    else
        asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

/* The 8 outputs of one chunk as 4 words (first output in the low half of
 * word 0), O = S = f16 or bf16. See the header, point 4b. */
template <typename O>
__device__ __forceinline__ uint4 persist_convert8_half(uint32_t packed, uint32_t scale_bits, uint32_t zero)
{
    constexpr bool BF = dequant_is_bf16<O>::value;
    constexpr uint32_t MAGIC = BF ? 0x43004300u : 0x64006400u;   /* 128 | 1024 in each half */
    constexpr uint32_t ONE = BF ? 0x3F803F80u : 0x3C003C00u;
    constexpr uint32_t NEG_ZERO = 0x80008000u;
    /* -(M + z) in both halves: M + z has no carry into the sign (z <= 15) */
    const uint32_t neg_mz = zero * 0x00010001u + (MAGIC ^ 0x80008000u);
    const uint32_t s2 = scale_bits * 0x00010001u;
    /* byte i of `packed` holds outputs 2i (low nibble) and 2i+1 (high
     * nibble); byte i of `odd` holds output 2i+1 in its low nibble */
    const uint32_t odd = packed >> 4;
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        /* byte 0 <- packed.byte i, byte 2 <- odd.byte i (bytes 1 and 3 are masked off) */
        const uint32_t sel = (uint32_t)i * 0x0011u + (uint32_t)(4 + i) * 0x1100u;
        const uint32_t x = (__byte_perm(packed, odd, sel) & 0x000F000Fu) | MAGIC;
        const uint32_t diff = persist_fma2<O>(x, ONE, neg_mz);   /* q - z, exact */
        w[i] = persist_fma2<O>(diff, s2, NEG_ZERO);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

/* The 16 output bytes of one chunk through the fp32 formula (any types). */
template <typename S, typename O>
__device__ __forceinline__ uint4 persist_convert_f32(uint32_t packed, uint32_t scale_bits, uint32_t zero)
{
    constexpr int VEC = 16 / (int)sizeof(O);
    const float s = persist_scale_from_bits<S>(scale_bits);
    const float zm = dequant_magic(zero);
    uint32_t res[4];
#pragma unroll
    for (int j = 0; j < VEC; j += 2) {
        const float v0 = (dequant_magic((packed >> (4 * j)) & 0xFu) - zm) * s;
        const float v1 = (dequant_magic((packed >> (4 * j + 4)) & 0xFu) - zm) * s;
        if constexpr (sizeof(O) == 4) {
            res[j] = __float_as_uint(v0);
            res[j + 1] = __float_as_uint(v1);
        } else {
            res[j / 2] = cuops_pack2<O>(v0, v1);
        }
    }
    return make_uint4(res[0], res[1], res[2], res[3]);
}

template <typename S, typename O>
__device__ __forceinline__ uint4 persist_convert(uint32_t packed, uint32_t scale_bits, uint32_t zero)
{
    if constexpr (persist_half_path<S, O>::value) return persist_convert8_half<O>(packed, scale_bits, zero);
    else return persist_convert_f32<S, O>(packed, scale_bits, zero);
}

/* What one lane holds of one unit: raw bits only (see the header, point 2). */
template <int U> struct persist_buf {
    uint32_t packed[U];
    uint32_t scale_bits[U];
    uint32_t zero[U];
};

/* The zero every chunk of a symmetric call reads (zeros == NULL): the zero
 * address becomes zero_base + group_index * zero_step with step 0, so the
 * load needs no branch. Never written. */
static __device__ uint8_t persist_symmetric_zero = 8;

/* Per-thread constants of one launch, hoisted out of the unit loop. */
struct persist_ctx {
    uint32_t total;          /* chunks in this launch */
    uint32_t full_chunks;    /* chunks per row that hold VEC outputs (k / VEC) */
    const uint8_t *zero_base;
    uint32_t zero_step;      /* 1, or 0 for the symmetric zero */
};

/* Row and column chunk of chunk t (t < 2^31): a multiply-high and a shift. */
__device__ __forceinline__ void persist_row_col(const dequant_params_t &p, uint32_t t, uint32_t &r,
                                                uint32_t &cc)
{
    r = dequant_magic_div(t, p.cpr_magic, p.cpr_shift);
    cc = t - r * (uint32_t)p.chunks_per_row;
}

/* CONTIG: the launch's rows are one linear array of chunks (see the header,
 * point 4a); the host checked it. */
template <typename S, int VEC, int U, bool CONTIG>
__device__ __forceinline__ void persist_unit_load(const dequant_params_t &p, const persist_ctx &c, uint32_t w,
                                                  uint32_t lane, persist_buf<U> &b)
{
    const S *scales = (const S *)p.scales;
#pragma unroll
    for (int u = 0; u < U; u++) {
        const uint32_t t = w * (32u * U) + (uint32_t)u * 32u + lane;
        if (t < c.total) {
            uint32_t sidx;
            if constexpr (CONTIG) {
                /* t = r*cpr + cc and cpr = num_groups*cpg: t / cpg = r*num_groups + cc/cpg */
                sidx = dequant_magic_div(t, p.cpg_magic, p.cpg_shift);
                b.packed[u] = persist_load_packed<VEC>(p.qweight + (size_t)t * (VEC / 2));
            } else {
                uint32_t r, cc;
                persist_row_col(p, t, r, cc);
                /* r * num_groups + g < 2^30: a launch holds < 2^30 chunks and a
                 * row has no more groups than chunks */
                sidx = r * (uint32_t)p.num_groups + dequant_magic_div(cc, p.cpg_magic, p.cpg_shift);
                if (cc < c.full_chunks)
                    b.packed[u] = persist_load_packed<VEC>(p.qweight + (int64_t)r * p.ldq + (size_t)cc * (VEC / 2));
            }
            b.scale_bits[u] = persist_load_scale_bits<S>(scales + sidx);
            b.zero[u] = persist_load_zero(c.zero_base + sidx * c.zero_step);
        }
    }
}

#if CUOPS_SM90A_DEVICE
__device__ __forceinline__ void persist_bulk_store(void *gdst, uint32_t ssrc, uint32_t bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gdst), "r"(ssrc),
                 "r"(bytes)
                 : "memory");
}

/* All bulk groups of this thread but the newest one have read their source. */
__device__ __forceinline__ void persist_bulk_wait_read_all_but_one(void)
{
    asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
}
#endif

/* Convert and store one unit. stage: this warp's shared buffer for b (bulk only). */
template <typename S, typename O, int U, int STORE, bool CONTIG>
__device__ __forceinline__ void persist_unit_store(const dequant_params_t &p, const persist_ctx &c, uint32_t w,
                                                   uint32_t lane, const persist_buf<U> &b, uint4 *stage)
{
    constexpr int VEC = 16 / (int)sizeof(O);
#if CUOPS_SM90A_DEVICE
    if constexpr (STORE == STORE_BULK) {
        if (lane == 0) persist_bulk_wait_read_all_but_one();
        __syncwarp();
    }
#endif
#pragma unroll
    for (int u = 0; u < U; u++) {
        const uint32_t t = w * (32u * U) + (uint32_t)u * 32u + lane;
        if (t >= c.total) continue;
        if constexpr (STORE == STORE_BULK) {
            stage[u * 32 + lane] = persist_convert<S, O>(b.packed[u], b.scale_bits[u], b.zero[u]);
        } else if constexpr (CONTIG) {
            const uint4 v = persist_convert<S, O>(b.packed[u], b.scale_bits[u], b.zero[u]);
            uint4 *dst = (uint4 *)p.out + t;
            if constexpr (STORE == STORE_STREAM) __stcs(dst, v);
            else *dst = v;
        } else {
            uint32_t r, cc;
            persist_row_col(p, t, r, cc);
            const int64_t col0 = (int64_t)cc * VEC;
            if (cc < c.full_chunks) {
                const uint4 v = persist_convert<S, O>(b.packed[u], b.scale_bits[u], b.zero[u]);
                uint4 *dst = (uint4 *)((O *)p.out + (int64_t)r * p.ldo + col0);
                if constexpr (STORE == STORE_STREAM) __stcs(dst, v);
                else *dst = v;
            } else {
                /* partial last chunk of a row (k % VEC != 0): at most VEC-1 elements */
                const float s = persist_scale_from_bits<S>(b.scale_bits[u]);
                const float zm = dequant_magic(b.zero[u]);
                const uint8_t *qrow = p.qweight + (int64_t)r * p.ldq;
#pragma unroll 1
                for (int64_t col = col0; col < p.k; col++) {
                    const uint32_t q = ((uint32_t)__ldg(qrow + (col >> 1)) >> ((uint32_t)(col & 1) * 4u)) & 0xFu;
                    const float v = (dequant_magic(q) - zm) * s;
                    O *e = (O *)p.out + (int64_t)r * p.ldo + col;
                    if constexpr (sizeof(O) == 4) *(float *)e = v;
                    else *(unsigned short *)e = (unsigned short)(cuops_pack2<O>(v, 0.0f) & 0xFFFFu);
                }
            }
        }
    }
#if CUOPS_SM90A_DEVICE
    if constexpr (STORE == STORE_BULK) {
        cuops_fence_proxy_async_smem();
        __syncwarp();
        if (lane == 0) {
            const uint32_t first = w * (32u * U);
            const uint32_t chunks = c.total - first < 32u * U ? c.total - first : 32u * U;
            persist_bulk_store((uint4 *)p.out + first, cuops_smem_addr(stage), chunks * 16u);
            cuops_tma_store_commit();
        }
    }
#endif
}

template <typename S, typename O, int U, int STORE, bool CONTIG>
__global__ void __launch_bounds__(PERSIST_THREADS, PERSIST_MIN_CTAS) dequant_persistent_kernel(dequant_params_t p)
{
#if !CUOPS_SM90A_DEVICE
    if constexpr (STORE == STORE_BULK) return; /* never launched off sm_90 */
#endif
    constexpr int VEC = 16 / (int)sizeof(O);
    constexpr int STAGE_ELEMS = STORE == STORE_BULK ? PERSIST_WARPS * 2 * 32 * U : 1;
    __shared__ uint4 stage[STAGE_ELEMS];
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t warp = threadIdx.x >> 5;
    uint4 *stage_a = stage, *stage_b = stage;
    if constexpr (STORE == STORE_BULK) {
        stage_a = stage + warp * (2 * 32 * U);
        stage_b = stage_a + 32 * U;
    }
    persist_ctx c;
    c.total = (uint32_t)p.total_chunks;
    c.full_chunks = (uint32_t)(p.k / VEC);
    c.zero_base = p.zeros ? p.zeros : &persist_symmetric_zero;
    c.zero_step = p.zeros ? 1u : 0u;
    const uint32_t units = (c.total + 32u * U - 1u) / (32u * U);
    const uint32_t stride = gridDim.x * PERSIST_WARPS;
    uint32_t w = blockIdx.x * PERSIST_WARPS + warp;

    persist_buf<U> a, b;
#pragma unroll
    for (int u = 0; u < U; u++) {
        a.packed[u] = b.packed[u] = 0;
        a.scale_bits[u] = b.scale_bits[u] = 0;
        a.zero[u] = b.zero[u] = 8;
    }
    if (w < units) persist_unit_load<S, VEC, U, CONTIG>(p, c, w, lane, a);
    if (w + stride < units) persist_unit_load<S, VEC, U, CONTIG>(p, c, w + stride, lane, b);
    /* a holds unit w, b unit w + stride; each is refilled two rounds ahead
     * right after it has been stored, so the other one's loads are in flight
     * while the warp waits. All conditions are warp-uniform. */
    while (w < units) {
        persist_unit_store<S, O, U, STORE, CONTIG>(p, c, w, lane, a, stage_a);
        if (w + 2 * stride < units) persist_unit_load<S, VEC, U, CONTIG>(p, c, w + 2 * stride, lane, a);
        w += stride;
        if (w >= units) break;
        persist_unit_store<S, O, U, STORE, CONTIG>(p, c, w, lane, b, stage_b);
        if (w + 2 * stride < units) persist_unit_load<S, VEC, U, CONTIG>(p, c, w + 2 * stride, lane, b);
        w += stride;
    }
#if CUOPS_SM90A_DEVICE
    /* the shared buffers must outlive the bulk reads; full completion keeps
     * the exit ordering the same as for ordinary stores */
    if constexpr (STORE == STORE_BULK)
        if (lane == 0) cuops_tma_store_wait_all();
#endif
}

/* ---- host side ------------------------------------------------------------- */

/* Rows packed back to back with no partial chunk or group (point 4a). */
static int dequant_persistent_contiguous(const cuops_dequant_desc_t *d)
{
    const int vec = 16 / (int)cuops_dtype_size(d->out_type);
    return d->k % vec == 0 && d->k % d->group_size == 0 && d->ldq * 2 == d->k && d->ldo == d->k;
}

int dequant_persistent_supported(const struct cuops_handle *h, const cuops_dequant_desc_t *d, int bulk,
                                 char *why)
{
    const int vec = 16 / (int)cuops_dtype_size(d->out_type);
    if (!dequant_vector_supported(d, vec, why)) return 0;
    if (cuops_ceil_div(d->k, vec) > PERSIST_MAX_CHUNKS) {
        snprintf(why, 256, "k (%lld) has more than 2^30 chunks per row", (long long)d->k);
        return 0;
    }
    if (bulk) {
        if (h->sm_major != 9 || h->sm_minor != 0) {
            snprintf(why, 256, "bulk stores are built for sm_90 only (device is sm_%d%d)", h->sm_major,
                     h->sm_minor);
            return 0;
        }
        if (!dequant_persistent_contiguous(d)) {
            snprintf(why, 256, "bulk stores need the contiguous layout: ldq == k/2 (%lld), ldo == k (%lld, %lld), "
                     "k a multiple of %d and of the group (%lld)",
                     (long long)d->ldq, (long long)d->ldo, (long long)d->k, vec, (long long)d->group_size);
            return 0;
        }
    }
    return 1;
}

template <typename S, typename O, int U, int STORE, bool CONTIG>
static void launch_persistent_one(const struct cuops_handle *h, const dequant_params_t &p, cudaStream_t st)
{
    /* resident CTAs per SM for this instantiation, once per device */
    static int ctas_per_sm[PERSIST_MAX_DEVICES];
    const int dev = h->device >= 0 && h->device < PERSIST_MAX_DEVICES ? h->device : 0;
    if (ctas_per_sm[dev] <= 0) {
        int n = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, dequant_persistent_kernel<S, O, U, STORE, CONTIG>,
                                                          PERSIST_THREADS, 0) != cudaSuccess || n <= 0) {
            (void)cudaGetLastError();
            n = 1;
        }
        ctas_per_sm[dev] = n;
    }
    const int64_t units = cuops_ceil_div(p.total_chunks, 32 * (int64_t)U);
    const int64_t resident_warps = (int64_t)(h->num_sms > 0 ? h->num_sms : 1) * ctas_per_sm[dev] * PERSIST_WARPS;
    /* every warp gets `iters` units or one fewer (see the header, point 1) */
    const int64_t iters = cuops_ceil_div(units, resident_warps);
    const int64_t warps = cuops_ceil_div(units, iters);
    const int64_t ctas = cuops_ceil_div(warps, PERSIST_WARPS);
    dequant_persistent_kernel<S, O, U, STORE, CONTIG><<<(unsigned)ctas, PERSIST_THREADS, 0, st>>>(p);
}

template <typename S, typename O, bool CONTIG>
static int launch_persistent_layout(const struct cuops_handle *h, const dequant_params_t &p, int unroll,
                                    int store, cudaStream_t st)
{
    if (store == STORE_PLAIN) {
        switch (unroll) {
        case 1: launch_persistent_one<S, O, 1, STORE_PLAIN, CONTIG>(h, p, st); return 1;
        case 2: launch_persistent_one<S, O, 2, STORE_PLAIN, CONTIG>(h, p, st); return 1;
        case 4: launch_persistent_one<S, O, 4, STORE_PLAIN, CONTIG>(h, p, st); return 1;
        default: return 0;
        }
    }
    if (unroll == 4 && store == STORE_STREAM) {
        launch_persistent_one<S, O, 4, STORE_STREAM, CONTIG>(h, p, st);
        return 1;
    }
    return 0;
}

template <typename S, typename O>
static int launch_persistent_typed(const struct cuops_handle *h, const dequant_params_t &p, int contig,
                                   int unroll, int store, cudaStream_t st)
{
    if (store == STORE_BULK) {
        /* bulk stores exist for the contiguous layout only */
        if (!contig || unroll != 4) return 0;
        launch_persistent_one<S, O, 4, STORE_BULK, true>(h, p, st);
        return 1;
    }
    return contig ? launch_persistent_layout<S, O, true>(h, p, unroll, store, st)
                  : launch_persistent_layout<S, O, false>(h, p, unroll, store, st);
}

template <typename S>
static int launch_persistent_out(const struct cuops_handle *h, cuops_dtype_t out_type, const dequant_params_t &p,
                                 int contig, int unroll, int store, cudaStream_t st)
{
    switch (out_type) {
    case CUOPS_DTYPE_F16: return launch_persistent_typed<S, __half>(h, p, contig, unroll, store, st);
    case CUOPS_DTYPE_BF16: return launch_persistent_typed<S, __nv_bfloat16>(h, p, contig, unroll, store, st);
    case CUOPS_DTYPE_F32: return launch_persistent_typed<S, float>(h, p, contig, unroll, store, st);
    default: return 0;
    }
}

cuops_status_t dequant_launch_persistent(struct cuops_handle *h, const cuops_dequant_desc_t *d, int unroll,
                                         int store, const char *kernel_name)
{
    const int vec = 16 / (int)cuops_dtype_size(d->out_type);
    dequant_params_t p = dequant_params_from_desc(d, vec);
    dequant_magic_divisor((uint32_t)p.chunks_per_row, &p.cpr_magic, &p.cpr_shift);
    dequant_magic_divisor((uint32_t)p.chunks_per_group, &p.cpg_magic, &p.cpg_shift);

    /* whole rows per launch, fewer than 2^30 chunks each (one launch below
     * 8G outputs); the caller has checked that one row fits */
    const int64_t max_rows = PERSIST_MAX_CHUNKS / p.chunks_per_row;
    const size_t ses = cuops_dtype_size(d->scale_type), oes = cuops_dtype_size(d->out_type);
    const int contig = dequant_persistent_contiguous(d);
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
        switch (d->scale_type) {
        case CUOPS_DTYPE_F16: ok = launch_persistent_out<__half>(h, d->out_type, q, contig, unroll, store, st); break;
        case CUOPS_DTYPE_BF16: ok = launch_persistent_out<__nv_bfloat16>(h, d->out_type, q, contig, unroll, store, st); break;
        case CUOPS_DTYPE_F32: ok = launch_persistent_out<float>(h, d->out_type, q, contig, unroll, store, st); break;
        default: ok = 0; break;
        }
    }
    if (!ok)
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR,
                          "dequant: no persistent kernel for unroll=%d store=%d (%s -> %s)", unroll, store,
                          cuops_dtype_name(d->scale_type), cuops_dtype_name(d->out_type));
    return cuops_cuda_check_launch(h, kernel_name);
}
