/*
 * gemm_sm80_packed.cu - "sm80_packed": the mma.sync GEMM for operands that
 * cp.async cannot read in place.
 *
 * Every mma.sync kernel (gemm_sm80_*.cu) copies A and B into shared memory
 * 16 bytes at a time, so it declines an operand whose base is off 16 bytes
 * or whose leading dimension is not a multiple of 8 elements: any odd k in
 * the usual layouts (4095^3, 1537 x 3001 x 2049), an odd lda, a tensor
 * sliced at an odd column. On sm_80..sm_89, where the wgmma kernels (which
 * pack such operands themselves, gemm_sm90.cu) do not run, those calls went
 * to fallback_tiled, a CUDA-core loop at a few TFLOP/s.
 *
 * This entry writes each such operand K-major onto rows of k rounded up to 64
 * elements (128-byte lines, zeros after k) in the workspace, with the packing
 * kernels the Hopper GEMM uses (gemm_sm90_pack.cu: a shifting row copy at 16
 * bytes per access for K-major sources, both operands in one launch; a
 * shared-memory transpose for the others), then runs the first kernel that
 * accepts the packed call (sm80_packed_inner). Operands that
 * cp.async reads already stay in place (a transposed but aligned one too:
 * the classic kernel takes every layout, and rewriting a weight costs a
 * read and a write of it). C needs nothing: the kernels store to any ldc.
 *
 * Cost: one read and one write of each packed operand, O(mk + nk) bytes
 * beside the O(mnk) product. At small m the packed call goes to the split-K
 * decode kernels first (sm80_packed_decode_first), which run it unsplit:
 * their partial sums would go where the packs are.
 */
#include "cuda/gemm/gemm_sm80_common.cuh"
#include "cuda/gemm/gemm_sm90.h"
#include "cuda/gemm/gemm_tuning.h"

#define SM80_PACKED_NAME "sm80_packed"

/* What cp.async reads in place: a 16-byte base and rows of whole 16 bytes */
static int sm80_operand_in_place(const void *p, int64_t ld)
{
    return cuops_aligned(p, 16) && ld % 8 == 0;
}

typedef struct sm80_pack_plan {
    bool pack_a, pack_b;
    int64_t ld;              /* the packed rows' leading dimension */
    size_t a_bytes, b_bytes; /* 256-byte multiples, 0 where in place */
} sm80_pack_plan_t;

static sm80_pack_plan_t sm80_pack_plan(const cuops_gemm_desc_t *d)
{
    sm80_pack_plan_t p;
    p.pack_a = !sm80_operand_in_place(d->a, d->lda);
    p.pack_b = !sm80_operand_in_place(d->b, d->ldb);
    p.ld = cuops_sm90_packed_ld(d->k);
    p.a_bytes = p.pack_a ? cuops_sm90_packed_bytes(d->m, d->k) : 0;
    p.b_bytes = p.pack_b ? cuops_sm90_packed_bytes(d->n, d->k) : 0;
    return p;
}

/* The call the inner kernel sees: packed operands K-major at a_at / b_at.
 * Where both operands are packed, their rows are zeros from k to ld, so k
 * rounded up to 8 gives the same products and lets the decode kernels
 * (k % 8 == 0) take an odd k. */
static cuops_gemm_desc_t sm80_packed_desc(const cuops_gemm_desc_t *d, const sm80_pack_plan_t *p,
                                          const void *a_at, const void *b_at)
{
    cuops_gemm_desc_t g = *d;
    if (p->pack_a && p->pack_b) g.k = (d->k + 7) / 8 * 8;
    if (p->pack_a) {
        g.a = a_at;
        g.lda = p->ld;
        g.trans_a = CUOPS_OP_N;
    }
    if (p->pack_b) {
        g.b = b_at;
        g.ldb = p->ld;
        g.trans_b = CUOPS_OP_T;
    }
    return g;
}

/* Whether the decode kernels go first: m <= 32, or m <= 64 where 128 x 256
 * tiles would cover under a quarter of the SMs. Forced on an H100 (P220 call
 * 4) the decode kernel, unsplit on the packs, ran 1 x 4096 x 4095 in 46.3 us
 * against 102.2 on the lean tiles, 16 x 32000 x 4095 321.9 against 367.1,
 * 64 x 4096 x 14336 (x off 16 bytes; 16 tiles) 80.2 against 254.9, but
 * 64 x 14336 x 4097 (56 tiles) 192.6 against 181.7. */
static bool sm80_packed_decode_first(const struct cuops_handle *h, const cuops_gemm_desc_t *g)
{
    if (g->m > 64) return false;
    if (g->m <= 32) return true;
    const int64_t sms = h->num_sms > 0 ? h->num_sms : 108;
    return 4 * cuops_ceil_div(g->n, 256) < sms;
}

/* The kernel that runs the packed call `g`: where sm80_packed_decode_first
 * says so, the first split-K decode kernel that takes it (every SM streams
 * the weight, where 128 x 256 tiles leave most of them idle; with the packs
 * inside the workspace it runs unsplit, its partials having no room), else
 * the first mma.sync kernel of the family's table that does */
static const cuops_gemm_kernel_t *sm80_packed_inner(const struct cuops_handle *h,
                                                    const cuops_gemm_desc_t *g)
{
    int count = 0;
    const cuops_gemm_kernel_t *t = NULL;
    if (sm80_packed_decode_first(h, g) && cuops_gemm_decode_kernel_table) {
        t = cuops_gemm_decode_kernel_table(&count);
        for (int i = 0; i < count; i++)
            if (t[i].supports(h, g)) return &t[i];
    }
    if (!cuops_gemm_sm80_kernel_table) return NULL; /* a tree built without the family */
    t = cuops_gemm_sm80_kernel_table(&count);
    for (int i = 0; i < count; i++)
        if (t[i].supports(h, g)) return &t[i];
    return NULL;
}

static int sm80_packed_supports(const struct cuops_handle *h, const cuops_gemm_desc_t *d)
{
    if (h->sm_major < 8) return 0;
    if (d->ab_type != CUOPS_DTYPE_F16 && d->ab_type != CUOPS_DTYPE_BF16) return 0;
    if (d->m < 1 || d->n < 1 || d->k < 0) return 0;
    if (d->c_type != CUOPS_DTYPE_F16 && d->c_type != CUOPS_DTYPE_BF16 &&
        d->c_type != CUOPS_DTYPE_F32)
        return 0;
    /* k == 0 reads neither operand: C = beta * C, whatever A and B are */
    if (d->k == 0) return cuops_aligned(d->c, cuops_dtype_size(d->c_type));
    if (!cuops_aligned(d->a, 2) || !cuops_aligned(d->b, 2)) return 0;
    /* the packs must not overwrite an operand that lives in the workspace */
    if (cuops_cuda_gemm_operands_in_workspace(h, d)) return 0;
    const sm80_pack_plan_t p = sm80_pack_plan(d);
    const size_t need = p.a_bytes + p.b_bytes;
    /* a user workspace pays up to 255 bytes to reach 256-byte alignment */
    if (h->user_workspace && need > 0 && h->user_workspace_bytes < need + 256) return 0;
    /* any 256-byte aligned address stands for the workspace here */
    const void *at = (const void *)(uintptr_t)256;
    const cuops_gemm_desc_t g = sm80_packed_desc(d, &p, at, at);
    return sm80_packed_inner(h, &g) != NULL;
}

static cuops_status_t sm80_packed_launch(struct cuops_handle *h, const cuops_gemm_desc_t *d,
                                         const cuops_options_t *opt)
{
    if (!sm80_packed_supports(h, d))
        return cuops_fail(h, CUOPS_STATUS_NOT_SUPPORTED,
                          SM80_PACKED_NAME ": needs sm_80+, f16/bf16 A/B, a mma.sync kernel for "
                                           "the packed call and workspace for the packs");
    if (d->k == 0) {
        const cuops_status_t st = cuops_sm90_scale_c(h, d);
        if (st == CUOPS_STATUS_SUCCESS) h->last_kernel = SM80_PACKED_NAME;
        return st;
    }
    const sm80_pack_plan_t p = sm80_pack_plan(d);
    void *ws = NULL;
    cuops_status_t st = cuops_cuda_workspace_aligned(h, p.a_bytes + p.b_bytes, 256, &ws);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    char *a_at = (char *)ws, *b_at = (char *)ws + p.a_bytes;
    const int a_k_major = d->trans_a == CUOPS_OP_N, b_k_major = d->trans_b == CUOPS_OP_T;
    if (p.pack_a && p.pack_b) {
        const cuops_sm90_rows_t ra = {d->a, d->lda, a_at, p.ld, d->m};
        const cuops_sm90_rows_t rb = {d->b, d->ldb, b_at, p.ld, d->n};
        st = cuops_sm90_pack_pair(h, &ra, a_k_major, &rb, b_k_major, d->k);
    } else if (p.pack_a) {
        st = cuops_sm90_pack_kmajor(h, d->a, d->lda, a_k_major, d->m, d->k, a_at, p.ld);
    } else if (p.pack_b) {
        st = cuops_sm90_pack_kmajor(h, d->b, d->ldb, b_k_major, d->n, d->k, b_at, p.ld);
    }
    if (st != CUOPS_STATUS_SUCCESS) return st;
    const cuops_gemm_desc_t g = sm80_packed_desc(d, &p, a_at, b_at);
    const cuops_gemm_kernel_t *inner = sm80_packed_inner(h, &g);
    if (!inner)
        return cuops_fail(h, CUOPS_STATUS_INTERNAL_ERROR,
                          SM80_PACKED_NAME ": no mma.sync kernel took the packed call");
    st = inner->launch(h, &g, opt);
    if (st != CUOPS_STATUS_SUCCESS) return st;
    h->last_kernel = SM80_PACKED_NAME;
    return CUOPS_STATUS_SUCCESS;
}

extern "C" const cuops_gemm_kernel_t cuops_gemm_sm80_packed = {
    SM80_PACKED_NAME, sm80_packed_supports, sm80_packed_launch};
