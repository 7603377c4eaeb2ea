/*
 * gemm_sm90_pack.cu - operand packing for the Hopper GEMM, C staging for
 * leading dimensions TMA cannot store to, and the k == 0 case.
 *
 * The TMA + wgmma kernel reads both operands K-major through tensor maps,
 * which need a 16-byte-aligned base and a row stride that is a multiple of
 * 16 bytes. Any operand that is transposed (A with trans_a = T, B with
 * trans_b = N) or misaligned is first rewritten here into the handle's
 * workspace as a dense K-major [rows, ld] array, ld = k rounded up to 8
 * elements, zero-padded. Cost: one read and one write of the operand,
 * O(MK + NK) bytes against the GEMM's O(MNK) work (see docs/gemm.md).
 *
 * Transposed sources go through a 64 x 64 shared-memory tile as tile[row][k]
 * so the global writes are 16-byte row segments. The tile row pitch is 66
 * halves = 33 words: 33 = 1 mod 32, so the transposed fill (32 consecutive
 * rows, one k) and the row read-out (4 rows x 8 threads of 4 consecutive
 * words) each hit 32 distinct banks.
 *
 * K-major sources that are only misaligned (an odd lda such as 4095) are a
 * row copy between two different 2-byte alignments: sm90_copy_rows_kernel
 * moves them 16 bytes per access on both sides (A and B in one launch when
 * both need it: cuops_sm90_pack_pair). The same kernel copies a C
 * that the GEMM wrote into aligned workspace (TMA stores) out to a C whose
 * leading dimension TMA cannot address.
 */
#include "cuda/gemm/gemm_sm90.h"

#define PACK_TILE 64
#define PACK_PITCH_WORDS 33 /* 66 halves */
#define PACK_THREADS 256

__global__ void __launch_bounds__(PACK_THREADS)
sm90_pack_kmajor_kernel(const uint16_t *__restrict__ src, int64_t lds, int64_t rows, int64_t k,
                        uint16_t *__restrict__ dst, int64_t ld_dst)
{
    __shared__ uint32_t tile_words[PACK_TILE * PACK_PITCH_WORDS];
    uint16_t *tile = (uint16_t *)tile_words;
    const int t = threadIdx.x;
    const int64_t r0 = (int64_t)blockIdx.x * PACK_TILE;
    const int64_t k_tiles = (ld_dst + PACK_TILE - 1) / PACK_TILE;

    for (int64_t kt = blockIdx.y; kt < k_tiles; kt += gridDim.y) {
        const int64_t k0 = kt * PACK_TILE;
        /* Fill: the fast-varying thread index walks the source's contiguous
         * dimension (rows of the packed operand), so each warp reads 32
         * consecutive elements. */
        const int r_local = t % PACK_TILE;
        for (int k_local = t / PACK_TILE; k_local < PACK_TILE; k_local += PACK_THREADS / PACK_TILE) {
            const int64_t r = r0 + r_local, c = k0 + k_local;
            uint16_t v = 0;
            if (r < rows && c < k) v = src[c * lds + r];
            tile[r_local * (2 * PACK_PITCH_WORDS) + k_local] = v;
        }
        __syncthreads();
        /* Drain: 8 threads per row, 8 halves (16 bytes) each. */
        for (int pass = 0; pass < PACK_TILE / (PACK_THREADS / 8); pass++) {
            const int r_local = t / 8 + pass * (PACK_THREADS / 8);
            const int k_local = (t % 8) * 8;
            const int64_t r = r0 + r_local, c = k0 + k_local;
            if (r < rows && c < ld_dst) { /* ld_dst % 8 == 0: c < ld_dst implies c + 8 <= ld_dst */
                const uint32_t *w = tile_words + r_local * PACK_PITCH_WORDS + k_local / 2;
                uint4 out = make_uint4(w[0], w[1], w[2], w[3]);
                *(uint4 *)(dst + r * ld_dst + c) = out;
            }
        }
        __syncthreads();
    }
}

/* ---- row copy between any two 2-byte alignments ----------------------- */

#define COPY_ROWS_THREADS 256

/* floor(a / 8) for any sign */
__device__ __forceinline__ int64_t floor_div8(int64_t a) { return a >= 0 ? a / 8 : -((7 - a) / 8); }

/* Destination chunks [jb, je] of a row, all whole on both sides: chunk j is
 * the 8 halves at offset SH of source chunks j and j + 1 (s_q is the source
 * row's chunk array already moved by qoff). SH is a template argument so the
 * shift is a fixed funnel shift per word. The exit test after each chunk
 * keeps one chunk's loads in flight per lane; issuing four chunks' loads
 * before their stores measured no faster (50d5e1a, docs/gemm.md). */
template <int SH>
__device__ __forceinline__ void copy_span(const uint4 *__restrict__ s_q, uint4 *__restrict__ d_chunks,
                                          int64_t jb, int64_t je, int lane)
{
#pragma unroll 4
    for (int64_t j = jb + lane; j <= je; j += 32) {
        const uint4 lo = __ldg(s_q + j);
        if (SH == 0) {
            d_chunks[j] = lo;
        } else {
            const uint4 hi = __ldg(s_q + j + 1);
            const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
            constexpr int o = SH / 2;
            constexpr uint32_t bits = (SH & 1) * 16;
            d_chunks[j] = make_uint4(__funnelshift_r(w[o], w[o + 1], bits),
                                     __funnelshift_r(w[o + 1], w[o + 2], bits),
                                     __funnelshift_r(w[o + 2], w[o + 3], bits),
                                     __funnelshift_r(w[o + 3], w[o + 4], bits));
        }
    }
}

/*
 * dst row r, elements [0, width): src row r's elements [0, cols), then zeros
 * (width >= cols), for the rows of one array pair or of two (`second`: the
 * two operands a GEMM packs, in one launch). Either row may start at any
 * 2-byte address. Destination chunk j of a row is its j-th aligned 16
 * bytes; its 8 elements lie in two aligned 16-byte source chunks (one when
 * both rows share the misalignment), shifted by the difference of the two
 * misalignments. Chunks at a row's ends - the destination chunk reaching
 * outside [0, width), or a source chunk outside [0, cols) - go element by
 * element, so nothing outside either row is read or written; chunks wholly
 * in the zero fill are stored as zeros.
 *
 * A warp takes one of the `parts` equal pieces of a row at a time, pieces
 * dealt round-robin; the host picks `parts` so the pieces divide evenly
 * over the resident warps (whole rows per warp left a partial second round:
 * 8191 rows over 5280 warps ran at 3.1 TB/s, dbca219).
 */
__global__ void __launch_bounds__(COPY_ROWS_THREADS)
sm90_copy_rows_kernel(cuops_sm90_rows_t first, cuops_sm90_rows_t second, int64_t rows, int64_t cols,
                      int64_t width, int parts)
{
    const int lane = threadIdx.x % 32;
    const int64_t warps = (int64_t)gridDim.x * (COPY_ROWS_THREADS / 32);
    const int64_t pieces = rows * parts;
    for (int64_t u = (int64_t)blockIdx.x * (COPY_ROWS_THREADS / 32) + threadIdx.x / 32; u < pieces;
         u += warps) {
        const int64_t r = u / parts;
        const int part = (int)(u - r * parts);
        /* rows [0, first.rows) come from the first array pair, the rest from the second */
        const bool in_first = r < first.rows;
        const int64_t rr = in_first ? r : r - first.rows;
        const uint16_t *s_row = (const uint16_t *)(in_first ? first.src : second.src) +
                                rr * (in_first ? first.lds : second.lds);
        uint16_t *d_row = (uint16_t *)(in_first ? first.dst : second.dst) +
                          rr * (in_first ? first.ldd : second.ldd);
        const int dmis = (int)(((uintptr_t)d_row & 15u) / 2); /* halves before d_row in its chunk */
        const int smis = (int)(((uintptr_t)s_row & 15u) / 2);
        const uint4 *s_chunks = (const uint4 *)(s_row - smis);
        uint4 *d_chunks = (uint4 *)(d_row - dmis);
        /* destination chunk j holds elements e0 = 8j - dmis .. e0 + 7, which
         * sit at source chunk q = j + qoff, offset sh (0..7) */
        const int diff = smis - dmis;
        const int qoff = diff < 0 ? -1 : 0;
        const int sh = diff - 8 * qoff;
        const int64_t chunks = (width + dmis + 7) / 8;
        /* this piece: chunks [pb, pe) */
        const int64_t pb = part * chunks / parts, pe = (part + 1) * chunks / parts;
        /* chunks [j_lo, j_hi] are whole on both sides */
        int64_t j_lo = dmis > 0 ? 1 : 0;
        if ((smis > 0 ? 1 : 0) - qoff > j_lo) j_lo = (smis > 0 ? 1 : 0) - qoff;
        int64_t j_hi = floor_div8(cols - 8 + dmis);
        const int64_t q_hi = floor_div8(cols - 8 + smis) - qoff - (sh != 0 ? 1 : 0);
        if (q_hi < j_hi) j_hi = q_hi;
        const int64_t jb = pb > j_lo ? pb : j_lo, je = pe - 1 < j_hi ? pe - 1 : j_hi;
        if (jb <= je) {
            const uint4 *s_q = s_chunks + qoff;
            switch (sh) { /* the same for the whole warp */
            case 0: copy_span<0>(s_q, d_chunks, jb, je, lane); break;
            case 1: copy_span<1>(s_q, d_chunks, jb, je, lane); break;
            case 2: copy_span<2>(s_q, d_chunks, jb, je, lane); break;
            case 3: copy_span<3>(s_q, d_chunks, jb, je, lane); break;
            case 4: copy_span<4>(s_q, d_chunks, jb, je, lane); break;
            case 5: copy_span<5>(s_q, d_chunks, jb, je, lane); break;
            case 6: copy_span<6>(s_q, d_chunks, jb, je, lane); break;
            default: copy_span<7>(s_q, d_chunks, jb, je, lane); break;
            }
        }
        /* the piece's chunks outside [jb, je]: [pb, jb) and (je, pe) */
        const int64_t tail0 = je + 1 > jb ? je + 1 : jb;
        const int64_t edge = (jb - pb) + (pe - tail0);
        for (int64_t i = lane; i < edge; i += 32) {
            const int64_t j = i < jb - pb ? pb + i : tail0 + (i - (jb - pb));
            const int64_t e0 = 8 * j - dmis;
            if (e0 >= cols && e0 + 8 <= width) {
                d_chunks[j] = make_uint4(0u, 0u, 0u, 0u);
                continue;
            }
#pragma unroll
            for (int x = 0; x < 8; x++) {
                const int64_t e = e0 + x;
                if (e >= 0 && e < width) d_row[e] = e < cols ? s_row[e] : (uint16_t)0;
            }
        }
    }
}

/* Pieces per row for `rows` rows of `chunks` chunks over `warps` resident
 * warps: few rows - split them until every warp has a piece (a piece keeps
 * at least 32 chunks, one per lane); many rows - the split (1..4) whose
 * rounds of pieces come out fullest. */
static int copy_rows_parts(int64_t rows, int64_t chunks, int64_t warps)
{
    if (rows < warps) {
        int64_t p = warps / rows;
        const int64_t max_p = chunks / 32 > 1 ? chunks / 32 : 1;
        if (p > max_p) p = max_p;
        return (int)(p > 1024 ? 1024 : p);
    }
    int best = 1;
    double best_fill = 0.0;
    for (int p = 1; p <= 4; p++) {
        const int64_t pieces = rows * p;
        const int64_t rounds = (pieces + warps - 1) / warps;
        const double fill = (double)pieces / (double)(rounds * warps);
        if (fill > best_fill + 0.02) {
            best = p;
            best_fill = fill;
        }
    }
    return best;
}

/* One launch over the rows of `first` and then `second` (second.rows may
 * be 0), all rows [0, cols) into [0, width). */
static cuops_status_t sm90_copy_rows_launch(struct cuops_handle *h, cuops_sm90_rows_t first,
                                            cuops_sm90_rows_t second, int64_t cols, int64_t width)
{
    if (!cuops_aligned(first.src, 2) || !cuops_aligned(first.dst, 2) || width < cols ||
        (second.rows > 0 && (!cuops_aligned(second.src, 2) || !cuops_aligned(second.dst, 2))))
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "gemm sm90 row copy: bad arguments");
    const int64_t rows = first.rows + second.rows;
    if (rows <= 0 || width <= 0) return CUOPS_STATUS_SUCCESS;
    /* CTAs the device holds at once (per device; one kernel, fixed block) */
    static int per_sm_cache[16];
    const int dev = h->device >= 0 && h->device < 16 ? h->device : 0;
    if (__atomic_load_n(&per_sm_cache[dev], __ATOMIC_RELAXED) == 0) {
        int per_sm = 0;
        CUOPS_CUDA_TRY(h, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                              &per_sm, sm90_copy_rows_kernel, COPY_ROWS_THREADS, 0));
        __atomic_store_n(&per_sm_cache[dev], per_sm > 0 ? per_sm : 1, __ATOMIC_RELAXED);
    }
    const int64_t resident = (int64_t)(h->num_sms > 0 ? h->num_sms : 1) *
                             __atomic_load_n(&per_sm_cache[dev], __ATOMIC_RELAXED);
    const int64_t warps_per_cta = COPY_ROWS_THREADS / 32;
    const int parts = copy_rows_parts(rows, (width + 7) / 8, resident * warps_per_cta);
    int64_t ctas = cuops_ceil_div(rows * parts, warps_per_cta);
    if (ctas > resident) ctas = resident;
    sm90_copy_rows_kernel<<<(unsigned)ctas, COPY_ROWS_THREADS, 0, cuops_stream(h)>>>(
        first, second, rows, cols, width, parts);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return cuops_cuda_fail(h, err, "sm90_copy_rows_kernel");
    return CUOPS_STATUS_SUCCESS;
}

cuops_status_t cuops_sm90_copy_rows(struct cuops_handle *h, const void *src, int64_t lds,
                                    void *dst, int64_t ldd, int64_t rows, int64_t cols,
                                    int64_t width)
{
    const cuops_sm90_rows_t first = {src, lds, dst, ldd, rows > 0 ? rows : 0};
    const cuops_sm90_rows_t none = {NULL, 0, NULL, 0, 0};
    return sm90_copy_rows_launch(h, first, none, cols, width);
}

/* A packed operand's rows: 16-byte aligned for TMA, whole 16-byte units, k fits */
static int sm90_pack_dst_ok(const void *dst, int64_t ld_dst, int64_t k)
{
    return cuops_aligned(dst, 16) && ld_dst % 8 == 0 && ld_dst >= k;
}

cuops_status_t cuops_sm90_pack_kmajor(struct cuops_handle *h, const void *src, int64_t lds,
                                      int src_k_major, int64_t rows, int64_t k, void *dst,
                                      int64_t ld_dst)
{
    if (!sm90_pack_dst_ok(dst, ld_dst, k))
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "gemm sm90 pack: bad destination");
    /* K-major and only misaligned: a row copy, 16 bytes per access */
    if (src_k_major) return cuops_sm90_copy_rows(h, src, lds, dst, ld_dst, rows, k, ld_dst);
    const int64_t row_tiles = cuops_ceil_div(rows, PACK_TILE);
    const int64_t k_tiles = cuops_ceil_div(ld_dst, PACK_TILE);
    if (row_tiles > 0x7fffffff)
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED, "gemm sm90 pack: %lld rows too many",
                          (long long)rows);
    dim3 grid((unsigned)row_tiles, (unsigned)(k_tiles < 65535 ? k_tiles : 65535));
    sm90_pack_kmajor_kernel<<<grid, PACK_THREADS, 0, cuops_stream(h)>>>(
        (const uint16_t *)src, lds, rows, k, (uint16_t *)dst, ld_dst);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return cuops_cuda_fail(h, err, "sm90_pack_kmajor_kernel");
    return CUOPS_STATUS_SUCCESS;
}

cuops_status_t cuops_sm90_pack_pair(struct cuops_handle *h, const cuops_sm90_rows_t *a,
                                    int a_k_major, const cuops_sm90_rows_t *b, int b_k_major,
                                    int64_t k)
{
    const int64_t ld = a->ldd;
    /* two K-major operands with the same destination rows: one row-copy
     * launch instead of two (docs/gemm.md, "Both packs in one launch") */
    if (a_k_major && b_k_major && b->ldd == ld) {
        if (!sm90_pack_dst_ok(a->dst, ld, k) || !sm90_pack_dst_ok(b->dst, ld, k))
            return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR, "gemm sm90 pack: bad destination");
        return sm90_copy_rows_launch(h, *a, *b, k, ld);
    }
    cuops_status_t st =
        cuops_sm90_pack_kmajor(h, a->src, a->lds, a_k_major, a->rows, k, a->dst, a->ldd);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    return cuops_sm90_pack_kmajor(h, b->src, b->lds, b_k_major, b->rows, k, b->dst, b->ldd);
}

/* ---- k == 0: C = beta * C ------------------------------------------------ */

template <typename T>
__global__ void sm90_scale_c_kernel(T *c, int64_t ldc, int64_t m, int64_t n, float beta)
{
    const int64_t total = m * n;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / n, col = i - r * n;
        T *p = c + r * ldc + col;
        const float v = (beta == 0.0f) ? 0.0f : beta * cuops_to_float(*p);
        *p = cuops_from_float<T>(v);
    }
}

cuops_status_t cuops_sm90_scale_c(struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    const int64_t total = d->m * d->n;
    int64_t blocks = cuops_ceil_div(total, 256);
    const int64_t cap = (int64_t)(h->num_sms > 0 ? h->num_sms : 1) * 16;
    if (blocks > cap) blocks = cap;
    dim3 grid((unsigned)blocks);
    cudaStream_t s = cuops_stream(h);
    switch (d->c_type) {
    case CUOPS_DTYPE_F16:
        sm90_scale_c_kernel<__half><<<grid, 256, 0, s>>>((__half *)d->c, d->ldc, d->m, d->n, d->beta);
        break;
    case CUOPS_DTYPE_BF16:
        sm90_scale_c_kernel<__nv_bfloat16><<<grid, 256, 0, s>>>((__nv_bfloat16 *)d->c, d->ldc, d->m,
                                                                d->n, d->beta);
        break;
    default:
        sm90_scale_c_kernel<float><<<grid, 256, 0, s>>>((float *)d->c, d->ldc, d->m, d->n, d->beta);
        break;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return cuops_cuda_fail(h, err, "sm90_scale_c_kernel");
    return CUOPS_STATUS_SUCCESS;
}
