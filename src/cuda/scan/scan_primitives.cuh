/*
 * scan_primitives.cuh - the pieces every scan and reduce kernel of cuops is
 * built from: the three operators with their identities, warp-shuffle scan
 * and reduction, and the "striped tile" that the fast kernels (look-back scan,
 * reduce-then-scan) load, scan and store.
 *
 * Operators. Integer sums are done in the unsigned type of the same width so
 * that overflow wraps (two's complement) instead of being undefined. min is
 * `b < a ? b : a` and max is `a < b ? b : a`, the same expressions the CPU
 * reference uses; the CPU folds from the identity in index order and the
 * kernels combine in their own fixed tree, so with NaN inputs (which lose or
 * win a comparison depending on its side) and equal values of two signs (-0.0
 * and +0.0) the result may differ from the CPU's, though never from run to
 * run (cuops.h calls both unspecified). Every combine below is written as
 * op(earlier, later): a float result depends only on the code, never on
 * timing, which is what makes every cuops scan/reduce deterministic.
 *
 * Striped tile. A CTA of SCAN_BLOCK threads owns TILE = SCAN_BLOCK*VEC*NV
 * consecutive elements. Warp w owns the contiguous segment
 * [w*32*VEC*NV, (w+1)*32*VEC*NV); inside it, load j of lane l covers the VEC
 * elements starting at j*32*VEC + l*VEC. So one warp-wide load instruction
 * reads 32*VEC*sizeof(T) = 512 consecutive bytes (VEC*sizeof(T) = 16) with no
 * shared-memory transpose, and the scan order is: segment, then load j, then
 * lane, then the VEC elements of the lane. The scan of one load is a
 * 5-step warp shuffle scan of the lanes' VEC-element sums; the NV loads are
 * chained with a carry.
 */
#ifndef CUOPS_SCAN_PRIMITIVES_CUH
#define CUOPS_SCAN_PRIMITIVES_CUH

#include <stdint.h>

#include "cuda/common/cuda_common.cuh"

#define SCAN_FULL_MASK 0xffffffffu

/* Operator codes: the values of cuops_reduce_op_t. */
enum { SCAN_OP_SUM = CUOPS_REDUCE_SUM, SCAN_OP_MIN = CUOPS_REDUCE_MIN, SCAN_OP_MAX = CUOPS_REDUCE_MAX };

/* ---- element traits: wrap-around add, identities, raw bits ------------ */

template <typename T> struct scan_traits;
template <> struct scan_traits<int32_t> {
    static __host__ __device__ __forceinline__ int32_t add(int32_t a, int32_t b)
    { return (int32_t)((uint32_t)a + (uint32_t)b); }
    static __host__ __device__ __forceinline__ int32_t highest() { return INT32_MAX; }
    static __host__ __device__ __forceinline__ int32_t lowest() { return INT32_MIN; }
};
template <> struct scan_traits<int64_t> {
    static __host__ __device__ __forceinline__ int64_t add(int64_t a, int64_t b)
    { return (int64_t)((uint64_t)a + (uint64_t)b); }
    static __host__ __device__ __forceinline__ int64_t highest() { return INT64_MAX; }
    static __host__ __device__ __forceinline__ int64_t lowest() { return INT64_MIN; }
};
template <> struct scan_traits<float> {
    static __host__ __device__ __forceinline__ float add(float a, float b) { return a + b; }
    static __host__ __device__ __forceinline__ float highest() { return __builtin_huge_valf(); }
    static __host__ __device__ __forceinline__ float lowest() { return -__builtin_huge_valf(); }
};
template <> struct scan_traits<double> {
    static __host__ __device__ __forceinline__ double add(double a, double b) { return a + b; }
    static __host__ __device__ __forceinline__ double highest() { return __builtin_huge_val(); }
    static __host__ __device__ __forceinline__ double lowest() { return -__builtin_huge_val(); }
};

template <typename T, int OP>
static __host__ __device__ __forceinline__ T scan_identity()
{
    if (OP == SCAN_OP_SUM) return (T)0;
    if (OP == SCAN_OP_MIN) return scan_traits<T>::highest();
    return scan_traits<T>::lowest();
}

/* op(earlier, later). */
template <typename T, int OP>
static __device__ __forceinline__ T scan_combine(T a, T b)
{
    if (OP == SCAN_OP_SUM) return scan_traits<T>::add(a, b);
    if (OP == SCAN_OP_MIN) return b < a ? b : a;
    return a < b ? b : a;
}

/* ---- warp primitives ---------------------------------------------------- */

/* Inclusive Kogge-Stone scan over the 32 lanes (5 shuffles). */
template <typename T, int OP>
static __device__ __forceinline__ T warp_scan_inclusive(T x, int lane)
{
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        T y = __shfl_up_sync(SCAN_FULL_MASK, x, d);
        if (lane >= d) x = scan_combine<T, OP>(y, x);
    }
    return x;
}

/* Tree reduction: lane 0 ends with lanes 0..31 combined, in a fixed order. */
template <typename T, int OP>
static __device__ __forceinline__ T warp_reduce(T x)
{
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) x = scan_combine<T, OP>(x, __shfl_down_sync(SCAN_FULL_MASK, x, d));
    return x;
}

/* Block reduction in a fixed tree (shuffles, then one warp over the warp
 * totals); the result is valid in thread 0. s_warp holds BLOCK/32 values;
 * the caller must __syncthreads() before reusing it. */
template <typename T, int OP, int BLOCK>
static __device__ __forceinline__ T block_reduce(T v, T *s_warp)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_reduce<T, OP>(v);
    if (lane == 0) s_warp[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < BLOCK / 32 ? s_warp[lane] : scan_identity<T, OP>();
        v = warp_reduce<T, OP>(v);
    }
    return v;
}

/* ---- status words ---------------------------------------------------------- */

/* One 64-bit relaxed gpu-scope access: a word that packs a flag or stamp with
 * a value is never seen torn by another CTA. */
static __device__ __forceinline__ void store_relaxed_u64(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
static __device__ __forceinline__ unsigned long long load_relaxed_u64(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

/* ---- 16-byte vector access ---------------------------------------------- */

/* VEC elements of T through one 16-byte access when VEC*sizeof(T) == 16,
 * element by element otherwise (VEC == 1: the path for unaligned pointers).
 * Loads and stores are streaming (evict-first): scan and reduce touch each
 * byte once, and L2 is better spent on the look-back status words. */
template <typename T, int VEC> union scan_vec {
    uint4 raw;
    T v[VEC];
};

template <typename T, int VEC>
static __device__ __forceinline__ void vec_load(const T *p, T (&x)[VEC])
{
    if (VEC * sizeof(T) == 16) {
        scan_vec<T, VEC> u;
        u.raw = __ldcs(reinterpret_cast<const uint4 *>(p));
#pragma unroll
        for (int k = 0; k < VEC; k++) x[k] = u.v[k];
    } else {
#pragma unroll
        for (int k = 0; k < VEC; k++) x[k] = __ldcs(p + k);
    }
}

template <typename T, int VEC>
static __device__ __forceinline__ void vec_store(T *p, const T (&x)[VEC])
{
    if (VEC * sizeof(T) == 16) {
        scan_vec<T, VEC> u;
#pragma unroll
        for (int k = 0; k < VEC; k++) u.v[k] = x[k];
        __stcs(reinterpret_cast<uint4 *>(p), u.raw);
    } else {
#pragma unroll
        for (int k = 0; k < VEC; k++) __stcs(p + k, x[k]);
    }
}

/* ---- striped tile ------------------------------------------------------- */

#define SCAN_BLOCK 256
/* per-device caches of kernel attributes and occupancy (devices past this
 * are served uncached) */
#define SCAN_MAX_DEVICES 64
#define SCAN_WARPS (SCAN_BLOCK / 32)

/* Load the lane's NV x VEC elements of the warp segment starting at
 * `segment` (a global element index). `full`: the whole tile is in range
 * (vector loads); otherwise each element is guarded and missing ones are the
 * identity, so the tail tile needs no other special case. */
template <typename T, int OP, int VEC, int NV>
static __device__ __forceinline__ void tile_load(const T *in, int64_t n, int64_t segment, int lane,
                                                 bool full, T (&x)[NV][VEC])
{
    if (full) {
#pragma unroll
        for (int j = 0; j < NV; j++) vec_load<T, VEC>(in + segment + (j * 32 + lane) * VEC, x[j]);
    } else {
#pragma unroll
        for (int j = 0; j < NV; j++) {
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                int64_t i = segment + (j * 32 + lane) * VEC + k;
                x[j][k] = i < n ? in[i] : scan_identity<T, OP>();
            }
        }
    }
}

template <typename T, int VEC, int NV>
static __device__ __forceinline__ void tile_store(T *out, int64_t n, int64_t segment, int lane,
                                                  bool full, const T (&y)[NV][VEC])
{
    if (full) {
#pragma unroll
        for (int j = 0; j < NV; j++) vec_store<T, VEC>(out + segment + (j * 32 + lane) * VEC, y[j]);
    } else {
#pragma unroll
        for (int j = 0; j < NV; j++) {
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                int64_t i = segment + (j * 32 + lane) * VEC + k;
                if (i < n) out[i] = y[j][k];
            }
        }
    }
}

/* Scan of one warp segment. On return x[j][k] holds the lane-local
 * inclusive scan of its VEC elements, pre[j] the combination of everything
 * in the segment before the lane's load j, and the segment total is
 * returned (to every lane). */
template <typename T, int OP, int VEC, int NV>
static __device__ __forceinline__ T segment_scan(T (&x)[NV][VEC], T (&pre)[NV], int lane)
{
    T chunk_total[NV];
#pragma unroll
    for (int j = 0; j < NV; j++) {
#pragma unroll
        for (int k = 1; k < VEC; k++) x[j][k] = scan_combine<T, OP>(x[j][k - 1], x[j][k]);
        /* The NV scans are independent: their shuffles overlap. */
        T incl = warp_scan_inclusive<T, OP>(x[j][VEC - 1], lane);
        T excl = __shfl_up_sync(SCAN_FULL_MASK, incl, 1);
        pre[j] = lane == 0 ? scan_identity<T, OP>() : excl;
        chunk_total[j] = __shfl_sync(SCAN_FULL_MASK, incl, 31);
    }
    T carry = chunk_total[0];
#pragma unroll
    for (int j = 1; j < NV; j++) {
        pre[j] = scan_combine<T, OP>(carry, pre[j]);
        carry = scan_combine<T, OP>(carry, chunk_total[j]);
    }
    return carry;
}

/* Final values of the lane's elements given the prefix of everything before
 * the warp segment: inclusive or exclusive, written back into x. */
template <typename T, int OP, int VEC, int NV>
static __device__ __forceinline__ void segment_apply_prefix(T (&x)[NV][VEC], const T (&pre)[NV],
                                                            T prefix, int exclusive)
{
#pragma unroll
    for (int j = 0; j < NV; j++) {
        T base = scan_combine<T, OP>(prefix, pre[j]);
        if (exclusive) {
#pragma unroll
            for (int k = VEC - 1; k > 0; k--) x[j][k] = scan_combine<T, OP>(base, x[j][k - 1]);
            x[j][0] = base;
        } else {
#pragma unroll
            for (int k = 0; k < VEC; k++) x[j][k] = scan_combine<T, OP>(base, x[j][k]);
        }
    }
}

/* ---- the tile's warp totals (warp 0) ------------------------------------ */

/* Warp 0, after every warp has put its segment total in s_warp: returns the
 * tile aggregate (to every lane); *w_excl is the combination of the warps
 * before warp `lane` (lanes 1..WARPS-1). WARPS: the CTA's warps (<= 32). */
template <typename T, int OP, int WARPS = SCAN_WARPS>
static __device__ __forceinline__ T tile_scan_warp_totals(const T *s_warp, int lane, T &w_excl)
{
    static_assert(WARPS <= 32, "one warp scans the warp totals");
    const T w = lane < WARPS ? s_warp[lane] : scan_identity<T, OP>();
    const T w_incl = warp_scan_inclusive<T, OP>(w, lane);
    w_excl = __shfl_up_sync(SCAN_FULL_MASK, w_incl, 1);
    return __shfl_sync(SCAN_FULL_MASK, w_incl, WARPS - 1);
}

/* Warp 0, once the tile's exclusive prefix is known: s_warp[w] becomes the
 * prefix of warp w's segment (each lane writes only its own slot). */
template <typename T, int OP, int WARPS = SCAN_WARPS>
static __device__ __forceinline__ void tile_set_warp_prefixes(T *s_warp, int lane, T tile_prefix,
                                                              T w_excl)
{
    if (lane < WARPS)
        s_warp[lane] = lane == 0 ? tile_prefix : scan_combine<T, OP>(tile_prefix, w_excl);
}

/* ---- a lane's part of the striped tile in shared memory ----------------- */

/* The kernels that stage the tile in shared memory keep the striped layout:
 * the lane's load j (VEC elements, 16 bytes) at mine + j * 32 * VEC, mine =
 * tile + warp * 32 * VEC * NV + lane * VEC. Each lane writes and reads only
 * its own chunks, so no barrier is needed for the data. */

/* VEC elements (16 bytes) from shared memory in one access */
template <typename T, int VEC>
static __device__ __forceinline__ void vec_read_shared(const T *p, T (&x)[VEC])
{
    static_assert(VEC * sizeof(T) == 16, "one 16-byte access");
    scan_vec<T, VEC> u;
    u.raw = *reinterpret_cast<const uint4 *>(p);
#pragma unroll
    for (int k = 0; k < VEC; k++) x[k] = u.v[k];
}

/* The last tile: guarded element loads, the identity past n. */
template <typename T, int OP, int VEC, int NV>
static __device__ __forceinline__ void smem_segment_fill_guarded(T *mine, const T *in, int64_t n,
                                                                 int64_t segment, int lane)
{
#pragma unroll
    for (int j = 0; j < NV; j++)
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            const int64_t i = segment + (j * 32 + lane) * VEC + k;
            mine[j * 32 * VEC + k] = i < n ? in[i] : scan_identity<T, OP>();
        }
}

/* Pass 1: lane totals of each load, scanned across the warp. pre[j] gets the
 * combination of everything in the segment before the lane's load j (the
 * order of segment_scan); returns the segment total. */
template <typename T, int OP, int VEC, int NV>
static __device__ __forceinline__ T smem_segment_scan(const T *mine, T (&pre)[NV], int lane)
{
    T carry = scan_identity<T, OP>();
#pragma unroll
    for (int j = 0; j < NV; j++) {
        T x[VEC];
        vec_read_shared<T, VEC>(mine + j * 32 * VEC, x);
        T lane_total = x[0];
#pragma unroll
        for (int k = 1; k < VEC; k++) lane_total = scan_combine<T, OP>(lane_total, x[k]);
        const T incl = warp_scan_inclusive<T, OP>(lane_total, lane);
        const T excl = __shfl_up_sync(SCAN_FULL_MASK, incl, 1);
        const T chunk_total = __shfl_sync(SCAN_FULL_MASK, incl, 31);
        const T p = lane == 0 ? scan_identity<T, OP>() : excl;
        /* segment_scan's order: pre[0] = p, pre[j] = carry op p, carry op= total */
        pre[j] = j == 0 ? p : scan_combine<T, OP>(carry, p);
        carry = j == 0 ? chunk_total : scan_combine<T, OP>(carry, chunk_total);
        asm volatile("" ::: "memory"); /* as in pass 2 below */
    }
    return carry;
}

/* Pass 2: the elements again, scanned with `prefix` (everything before the
 * segment) and pre[j], inclusive or exclusive, and stored to out.
 * SHIFT > 0: `out + segment` lies SHIFT elements past a 16-byte boundary
 * (`in` and `out` disagree modulo 16). A full segment is then stored in the
 * aligned 16-byte chunks of `out`: lane l's chunk holds the last SHIFT
 * elements of lane l - 1 (a shuffle; lane 0 takes lane 31's of the previous
 * load) and its own first VEC - SHIFT; the chunks at the segment's two ends,
 * which it shares with its neighbours, are written element by element (the
 * first by lane 0 of load 0, the last by lane 31 of load NV - 1). SHIFT is
 * a template constant: with a run-time shift the compiler turned the
 * selects into an indexed array in local memory (32 bytes of stack, the
 * stores 2.3x slower, P178). */
template <typename T, int OP, int VEC, int NV, int SHIFT = 0>
static __device__ __forceinline__ void smem_segment_store(const T *mine, const T (&pre)[NV],
                                                          T prefix, int exclusive, T *out,
                                                          int64_t n, int64_t segment, int lane,
                                                          bool full)
{
    static_assert(SHIFT >= 0 && SHIFT < VEC, "a shift inside one 16-byte chunk");
    T last[VEC] = {}; /* SHIFT > 0: lane 31's elements of the previous load */
#pragma unroll
    for (int j = 0; j < NV; j++) {
        T x[VEC];
        vec_read_shared<T, VEC>(mine + j * 32 * VEC, x);
#pragma unroll
        for (int k = 1; k < VEC; k++) x[k] = scan_combine<T, OP>(x[k - 1], x[k]);
        const T base = scan_combine<T, OP>(prefix, pre[j]);
        if (exclusive) {
#pragma unroll
            for (int k = VEC - 1; k > 0; k--) x[k] = scan_combine<T, OP>(base, x[k - 1]);
            x[0] = base;
        } else {
#pragma unroll
            for (int k = 0; k < VEC; k++) x[k] = scan_combine<T, OP>(base, x[k]);
        }
        T *dst = out + segment + (j * 32 + lane) * VEC;
        if (full) {
            if constexpr (SHIFT > 0) {
                /* chunk element k: lane l - 1's x[VEC - SHIFT + k] for k <
                 * SHIFT, then this lane's x[k - SHIFT] */
                T c[VEC];
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    if (k < SHIFT) {
                        const T up = __shfl_up_sync(SCAN_FULL_MASK, x[VEC - SHIFT + k], 1);
                        c[k] = lane == 0 ? last[VEC - SHIFT + k] : up;
                    } else {
                        c[k] = x[k - SHIFT];
                    }
                }
#pragma unroll
                for (int k = VEC - SHIFT; k < VEC; k++)
                    last[k] = __shfl_sync(SCAN_FULL_MASK, x[k], 31);
                T *chunk = dst - SHIFT; /* 16-byte aligned */
                if (j > 0 || lane > 0) {
                    vec_store<T, VEC>(chunk, c);
                } else {
#pragma unroll
                    for (int k = SHIFT; k < VEC; k++) chunk[k] = c[k];
                }
                if (j == NV - 1 && lane == 31) {
#pragma unroll
                    for (int k = VEC - SHIFT; k < VEC; k++) dst[k] = x[k];
                }
            } else {
                vec_store<T, VEC>(dst, x);
            }
        } else {
#pragma unroll
            for (int k = 0; k < VEC; k++)
                if (segment + (j * 32 + lane) * VEC + k < n) dst[k] = x[k];
        }
        /* one load's registers at a time: many warps per SM hide the shared
         * memory latency, and hoisting all the reads would cost 3 registers
         * per element */
        asm volatile("" ::: "memory");
    }
}

/* Tile geometry of the striped kernels for an element size and path:
 * 32 KB per tile on the vector path (Little's law: ~26-36 KB in flight per
 * SM keeps HBM3e busy; a tile's loads are all issued before the first use and
 * 3 CTAs share an SM). The scalar path (unaligned pointers) takes 16
 * elements per thread: each element costs a warp scan there, and 32 would
 * need over 128 registers. */
#define SCAN_VEC(T) ((int)(16 / sizeof(T)))
#define SCAN_NV_VEC 8
#define SCAN_NV_SCALAR(T) 16

/* ---- type/op dispatch ---------------------------------------------------- */

/* Call FN<T, OP>(args...) for a runtime (type, op) pair; evaluates to its
 * cuops_status_t. Unknown types fall through to NOT_SUPPORTED via FAIL. */
#define SCAN_OP_CALL(T, op, FN, ...)                                                   \
    ((op) == CUOPS_REDUCE_SUM ? FN<T, SCAN_OP_SUM>(__VA_ARGS__)                        \
     : (op) == CUOPS_REDUCE_MIN ? FN<T, SCAN_OP_MIN>(__VA_ARGS__)                      \
                                : FN<T, SCAN_OP_MAX>(__VA_ARGS__))
#define SCAN_TYPE_OP_CALL(type, op, FAIL, FN, ...)                                     \
    ((type) == CUOPS_DTYPE_I32   ? SCAN_OP_CALL(int32_t, op, FN, __VA_ARGS__)          \
     : (type) == CUOPS_DTYPE_I64 ? SCAN_OP_CALL(int64_t, op, FN, __VA_ARGS__)          \
     : (type) == CUOPS_DTYPE_F32 ? SCAN_OP_CALL(float, op, FN, __VA_ARGS__)            \
     : (type) == CUOPS_DTYPE_F64 ? SCAN_OP_CALL(double, op, FN, __VA_ARGS__)           \
                                 : (FAIL))

static inline int scan_supported_type(cuops_dtype_t t)
{
    return t == CUOPS_DTYPE_I32 || t == CUOPS_DTYPE_I64 || t == CUOPS_DTYPE_F32 ||
           t == CUOPS_DTYPE_F64;
}


#endif /* CUOPS_SCAN_PRIMITIVES_CUH */
