"""cuops: fast GPU kernels (GEMM, int4 dequantization, W4A16 GEMM, scan,
reduce) from Python. Tensors in, tensors out, on the current CUDA stream.

Arrays may be torch tensors (CUDA or CPU), numpy arrays (run on the CPU
reference backend) or objects with __cuda_array_interface__ (CuPy) or
DLPack. Torch tensors go through torch.library custom ops (torch.ops.cuops.*)
so torch.compile can trace them. Failures raise CuopsError with the library's
detail.
"""
from . import ops as _ops
from ._arrays import _is_torch
from ._lib import CuopsError, DEVICE_CPU, handle  # noqa: F401
from ._lib import last_handle as _last_handle

try:
    import torch as _torch
    from . import torch_ops as _torch_ops
except (ImportError, AttributeError):  # numpy-only install, or a torch without torch.library.custom_op (< 2.4)
    _torch = None
    _torch_ops = None

__all__ = ["gemm", "linear", "dequant_int4", "w4a16_prepack", "gemm_w4a16", "scan", "reduce",
           "from_gptq", "from_awq", "CuopsError", "last_kernel"]


def _name(dt):
    return None if dt is None else (dt if isinstance(dt, str) else _torch_ops.dtype_name(dt))


def gemm(a, b, *, trans_a=False, trans_b=False, alpha=1.0, beta=0.0, c=None, out_dtype=None,
         variant=None):
    """alpha * op(a) @ op(b) + beta * c, fp32 accumulation (f16/bf16 on tensor cores, f32 exact)."""
    if _torch_ops is not None and _is_torch(a) and c is None and beta == 0.0 and variant is None:
        od = _name(out_dtype) or _torch_ops.dtype_name(a.dtype)
        return _torch_ops.gemm(a, b, bool(trans_a), bool(trans_b), float(alpha), od)
    return _ops.gemm_impl(a, b, trans_a, trans_b, alpha, beta, c, _name(out_dtype), variant)


def linear(x, w):
    """x @ w.T (torch.nn.functional.linear without bias), w stored [out, in]; x of
    any rank >= 1, its last dimension the input features (as F.linear)."""
    shape = tuple(x.shape)
    if len(shape) == 2:
        return gemm(x, w, trans_b=True)
    if len(shape) == 0:
        raise ValueError("cuops: linear takes x with at least one dimension")
    y = gemm(x.reshape(-1, shape[-1]), w, trans_b=True)
    return y.reshape(*shape[:-1], y.shape[-1])


def dequant_int4(qweight, scales, zeros, k, group_size=128, out_dtype=None, variant=None):
    """Dense weight [n, k] = (q - zero) * scale from the seed int4 format."""
    if _torch_ops is not None and _is_torch(qweight) and variant is None:
        od = _name(out_dtype) or _torch_ops.dtype_name(scales.dtype)
        return _torch_ops.dequant_int4(qweight, scales, zeros, int(k), int(group_size), od)
    return _ops.dequant_int4_impl(qweight, scales, zeros, k, group_size, _name(out_dtype), variant)


def w4a16_prepack(qweight, scales, zeros, k, group_size=128, act_dtype="f16"):
    """One-time reorder of an int4 weight for gemm_w4a16 (returns a uint8 buffer)."""
    return _ops.w4a16_prepack_impl(qweight, scales, zeros, k, group_size, _name(act_dtype))


def gemm_w4a16(x, packed, n, k, group_size=128, variant=None):
    """x[m, k] @ W^T with W int4, dequantized inside the GEMM."""
    if _torch_ops is not None and _is_torch(x) and variant is None:
        return _torch_ops.gemm_w4a16(x, packed, int(n), int(k), int(group_size))
    return _ops.gemm_w4a16_impl(x, packed, n, k, group_size, variant)


def scan(x, op="sum", exclusive=False, out=None, variant=None):
    """Inclusive (or exclusive) prefix scan; deterministic for floats; out=x scans in place."""
    if _torch_ops is not None and _is_torch(x) and out is None and variant is None:
        return _torch_ops.scan(x, op, bool(exclusive))
    return _ops.scan_impl(x, op, exclusive, out, variant)


def reduce(x, op="sum", variant=None):
    """One-element array: sum, min or max of x (deterministic)."""
    if _torch_ops is not None and _is_torch(x) and variant is None:
        return _torch_ops.reduce(x, op)
    return _ops.reduce_impl(x, op, variant)


def from_gptq(qweight, qzeros, scales, group_size=128, gptq_version=1):
    """A GPTQ checkpoint's (qweight int32 [k/8, n], qzeros int32 [groups, n/8], scales
    [groups, n]) in the seed int4 format: (qweight uint8 [n, k/2], scales [n, groups],
    zeros uint8 [n, groups]), ready for dequant_int4, w4a16_prepack or W4Linear.from_int4.
    gptq_version 1 stores zero - 1 (AutoGPTQ's historical format), 2 stores it as is."""
    return _ops.from_gptq_impl(qweight, qzeros, scales, group_size, gptq_version)


def from_awq(qweight, qzeros, scales, group_size=128):
    """An AWQ ("GEMM" packing) checkpoint's (qweight int32 [k, n/8], qzeros int32
    [groups, n/8], scales [groups, n]) in the seed int4 format (as from_gptq)."""
    return _ops.from_awq_impl(qweight, qzeros, scales, group_size)


def last_kernel(device=0):
    """Name of the kernel the calling thread's last cuops call on `device` ran
    (a CUDA index; DEVICE_CPU for calls on numpy arrays, which run on the CPU
    reference backend)."""
    return _last_handle(device).last_kernel()
