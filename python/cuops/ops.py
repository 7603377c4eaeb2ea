"""The cuops ops on arrays: shapes and dtypes checked here, then one C call on
the array's device (CUDA index, or the CPU reference backend for host arrays)
and, on a GPU, on the current stream of the array's library.

These `*_impl` functions serve every array kind; `cuops/__init__.py` routes
torch tensors through the registered torch.library custom ops (so that
torch.compile traces them) and everything else straight here.
"""
import functools

from . import _lib
from ._arrays import dense_view, empty_like_kind, stream_of, view


def _handle_for(ref, *others):
    """The calling thread's handle for ref's device and current stream: one
    handle per stream, so calls in flight on two streams never share a
    handle's scratch (its workspace, scan state and split-K partials)."""
    for o in others:
        if o is not None and o.device != ref.device:
            raise ValueError(f"cuops: arrays on different devices ({ref.device} and {o.device})")
    stream = stream_of(ref) if ref.device >= 0 else 0
    return _lib.handle(ref.device, stream)


def _need(cond, msg):
    if not cond:
        raise ValueError("cuops: " + msg)


def gemm_impl(a, b, trans_a=False, trans_b=False, alpha=1.0, beta=0.0, c=None,
              out_dtype=None, variant=None):
    """C = alpha * op(A) @ op(B) + beta * C. A, B 2-D row-major; returns C."""
    va, vb = view(a, "a"), view(b, "b")
    _need(len(va.shape) == 2 and len(vb.shape) == 2, "gemm takes 2-D a and b")
    _need(va.dtype == vb.dtype, f"a and b dtypes differ ({va.dtype}, {vb.dtype})")
    m, k = (va.shape[1], va.shape[0]) if trans_a else va.shape
    kb, n = (vb.shape[1], vb.shape[0]) if trans_b else vb.shape
    _need(k == kb, f"inner dimensions differ: op(a) is {m}x{k}, op(b) is {kb}x{n}")
    if c is None:
        _need(beta == 0.0, "beta != 0 needs c")
        c = empty_like_kind(va, (m, n), out_dtype or va.dtype)
    vc = view(c, "c", writable=True)
    _need(vc.shape == (m, n), f"c has shape {vc.shape}, expected {(m, n)}")
    _need(out_dtype is None or out_dtype == vc.dtype,
          f"out_dtype {out_dtype} differs from c's dtype {vc.dtype}")
    h = _handle_for(va, vb, vc)
    h.check(_lib.lib.cuops_gemm_ex(h.ptr, int(trans_a), int(trans_b), m, n, k, alpha,
                                   va.ptr, va.ld, vb.ptr, vb.ld, beta, vc.ptr, vc.ld,
                                   _lib.DTYPE[va.dtype], _lib.DTYPE[vc.dtype],
                                   _lib.options(variant)), "cuops_gemm")
    return c


def _check_groups(vs, vz, n, k, group_size):
    """scales [n, groups] (or flat) of a float type, zeros uint8 of the same shape."""
    _need(group_size > 0 and (group_size % 2 == 0 or group_size >= k),
          f"group_size must be a positive even number, or at least k = {k} (one group per row); "
          f"got {group_size}")
    ngroups = (k + group_size - 1) // group_size
    _need(vs.shape in ((n, ngroups),) or (len(vs.shape) == 1 and vs.shape[0] == n * ngroups),
          f"scales must be [{n}, {ngroups}], got {vs.shape}")
    _need(vs.dtype in ("f16", "bf16", "f32"), f"scales must be float16, bfloat16 or float32, got {vs.dtype}")
    if vz is not None:
        _need(vz.dtype == "u8", f"zeros must be uint8, got {vz.dtype}")
        _need(vz.shape in ((n, ngroups),) or (len(vz.shape) == 1 and vz.shape[0] == n * ngroups),
              f"zeros must be [{n}, {ngroups}], got {vz.shape}")


def _check_qweight(vq, k):
    """qweight uint8 [n, ceil(k/2)]: its width must match k, or the library
    would read bytes past each row of a slice (or past the buffer)."""
    _need(vq.dtype == "u8" and len(vq.shape) == 2, "qweight must be a 2-D uint8 array [n, ceil(k/2)]")
    _need(vq.shape[1] == (k + 1) // 2,
          f"qweight has {vq.shape[1]} bytes per row; k = {k} needs {(k + 1) // 2}")


def dequant_int4_impl(qweight, scales, zeros, k, group_size, out_dtype=None, variant=None):
    """Dense [n, k] weight from the seed int4 format (see cuops_dequant_int4)."""
    vq, vs = view(qweight, "qweight"), dense_view(scales, "scales")
    vz = dense_view(zeros, "zeros") if zeros is not None else None
    _check_qweight(vq, k)
    n = vq.shape[0]
    _check_groups(vs, vz, n, k, group_size)
    out = empty_like_kind(vq, (n, k), out_dtype or vs.dtype)
    vo = view(out, "out")
    h = _handle_for(vq, vs, vz, vo)
    h.check(_lib.lib.cuops_dequant_int4_ex(h.ptr, n, k, group_size, vq.ptr, vq.ld, vs.ptr,
                                           _lib.DTYPE[vs.dtype], vz.ptr if vz else None,
                                           vo.ptr, vo.ld, _lib.DTYPE[vo.dtype],
                                           _lib.options(variant)), "cuops_dequant_int4")
    return out


@functools.lru_cache(maxsize=1024)
def w4_packed_size(device, n, k, group_size, act_dtype):
    """Bytes of the prepacked layout: a pure function of its arguments, so
    cached (gemm_w4a16 checks it on every call); a refusal raises and is not
    cached."""
    h = _lib.handle(device, record=False)  # a query: last_kernel stays the last op's
    size = _lib.ctypes.c_size_t()
    h.check(_lib.lib.cuops_w4_packed_size(h.ptr, n, k, group_size, _lib.DTYPE[act_dtype],
                                          _lib.ctypes.byref(size)), "cuops_w4_packed_size")
    return size.value


def w4a16_prepack_impl(qweight, scales, zeros, k, group_size, act_dtype):
    """Prepacked uint8 buffer for gemm_w4a16 (same device as qweight)."""
    vq, vs = view(qweight, "qweight"), dense_view(scales, "scales")
    vz = dense_view(zeros, "zeros") if zeros is not None else None
    _check_qweight(vq, k)
    n = vq.shape[0]
    _check_groups(vs, vz, n, k, group_size)
    nbytes = w4_packed_size(vq.device, n, k, group_size, act_dtype)
    packed = empty_like_kind(vq, (nbytes,), "u8")
    vp = view(packed, "packed")
    h = _handle_for(vq, vs, vz, vp)
    h.check(_lib.lib.cuops_w4_prepack(h.ptr, n, k, group_size, vq.ptr, vq.ld, vs.ptr,
                                      _lib.DTYPE[vs.dtype], vz.ptr if vz else None,
                                      _lib.DTYPE[act_dtype], vp.ptr), "cuops_w4_prepack")
    return packed


def gemm_w4a16_impl(x, packed, n, k, group_size, variant=None):
    """y[m, n] = x[m, k] @ W^T with W prepacked by w4a16_prepack."""
    vx, vp = view(x, "x"), dense_view(packed, "packed")
    _need(len(vx.shape) == 2 and vx.shape[1] == k, f"x must be [m, {k}], got {vx.shape}")
    _need(vx.dtype in ("f16", "bf16"), "x must be float16 or bfloat16")
    _need(vp.dtype == "u8" and len(vp.shape) == 1, "packed must be the 1-D uint8 buffer of w4a16_prepack")
    need = w4_packed_size(vx.device, n, k, group_size, vx.dtype)
    # exactly its size: a buffer prepacked for another n, k or group size is
    # refused (one for the other 16-bit act_dtype of the same size cannot be
    # told apart here: w4a16_prepack's act_dtype must be x's dtype)
    _need(vp.shape[0] == need, f"packed holds {vp.shape[0]} bytes; n={n}, k={k}, "
          f"group_size={group_size} for {vx.dtype} needs {need} (prepacked for another shape?)")
    m = vx.shape[0]
    y = empty_like_kind(vx, (m, n), vx.dtype)
    vy = view(y, "y")
    h = _handle_for(vx, vp, vy)
    h.check(_lib.lib.cuops_gemm_w4a16_ex(h.ptr, m, n, k, group_size, vx.ptr, vx.ld, vp.ptr,
                                         vy.ptr, vy.ld, _lib.DTYPE[vx.dtype],
                                         _lib.options(variant)), "cuops_gemm_w4a16")
    return y


def scan_impl(x, op="sum", exclusive=False, out=None, variant=None):
    """Prefix scan of a 1-D array (out may be x itself: in place)."""
    vx = view(x, "x")
    _need(len(vx.shape) == 1, "scan takes a 1-D array")
    _need(op in _lib.REDUCE_OP, f"op must be one of {sorted(_lib.REDUCE_OP)}")
    if out is None:
        out = empty_like_kind(vx, vx.shape, vx.dtype)
    vo = view(out, "out", writable=True)
    _need(vo.shape == vx.shape and vo.dtype == vx.dtype, "out must match x in shape and dtype")
    h = _handle_for(vx, vo)
    h.check(_lib.lib.cuops_scan_ex(h.ptr, _lib.REDUCE_OP[op], int(bool(exclusive)),
                                   _lib.DTYPE[vx.dtype], vx.shape[0], vx.ptr, vo.ptr,
                                   _lib.options(variant)), "cuops_scan")
    return out


def reduce_impl(x, op="sum", variant=None):
    """A one-element array holding the reduction of a 1-D array."""
    vx = view(x, "x")
    _need(len(vx.shape) == 1, "reduce takes a 1-D array")
    _need(op in _lib.REDUCE_OP, f"op must be one of {sorted(_lib.REDUCE_OP)}")
    out = empty_like_kind(vx, (1,), vx.dtype)
    vo = view(out, "out")
    h = _handle_for(vx, vo)
    h.check(_lib.lib.cuops_reduce_ex(h.ptr, _lib.REDUCE_OP[op], _lib.DTYPE[vx.dtype],
                                     vx.shape[0], vx.ptr, vo.ptr, _lib.options(variant)),
            "cuops_reduce")
    return out


def _import_impl(fmt, qweight, qzeros, scales, group_size, gptq_version=1):
    """GPTQ/AWQ int32 packings -> (qweight uint8 [n, ceil(k/2)], scales [n, groups], zeros uint8)."""
    vq, vz, vs = dense_view(qweight, "qweight"), dense_view(qzeros, "qzeros"), dense_view(scales, "scales")
    _need(vq.dtype == "i32" and vz.dtype == "i32", "qweight and qzeros must be int32")
    _need(len(vq.shape) == 2 and len(vs.shape) == 2, "qweight and scales must be 2-D")
    if fmt == "gptq":
        k, n = vq.shape[0] * 8, vq.shape[1]
    else:
        k, n = vq.shape[0], vq.shape[1] * 8
    if group_size is None or group_size <= 0:
        # per channel (GPTQ's -1); an empty k still needs a positive size
        # (the groups count below divides by it)
        group_size = max(k, 1)
    groups = (k + group_size - 1) // group_size
    _need(vs.shape == (groups, n), f"scales must be [{groups}, {n}], got {vs.shape}")
    _need(vz.shape == (groups, n // 8), f"qzeros must be [{groups}, {n // 8}], got {vz.shape}")
    q_out = empty_like_kind(vq, (n, (k + 1) // 2), "u8")
    s_out = empty_like_kind(vq, (n, groups), vs.dtype)
    z_out = empty_like_kind(vq, (n, groups), "u8")
    vqo, vso, vzo = view(q_out, "qweight_out"), view(s_out, "scales_out"), view(z_out, "zeros_out")
    h = _handle_for(vq, vz, vs, vqo)
    if fmt == "gptq":
        st = _lib.lib.cuops_import_gptq(h.ptr, n, k, group_size, vq.ptr, vz.ptr, vs.ptr,
                                        _lib.DTYPE[vs.dtype], int(gptq_version), vqo.ptr, vqo.ld,
                                        vso.ptr, vzo.ptr)
    else:
        st = _lib.lib.cuops_import_awq(h.ptr, n, k, group_size, vq.ptr, vz.ptr, vs.ptr,
                                       _lib.DTYPE[vs.dtype], vqo.ptr, vqo.ld, vso.ptr, vzo.ptr)
    h.check(st, f"cuops_import_{fmt}")
    return q_out, s_out, z_out


def from_gptq_impl(qweight, qzeros, scales, group_size, gptq_version=1):
    return _import_impl("gptq", qweight, qzeros, scales, group_size, gptq_version)


def from_awq_impl(qweight, qzeros, scales, group_size):
    return _import_impl("awq", qweight, qzeros, scales, group_size)
