"""cuops ops registered as torch.library custom ops, with fake (meta)
implementations so torch.compile can trace them without running them."""
from typing import Optional

import torch

from . import ops
from ._arrays import torch_dtype, torch_dtype_name


def _ngroups(k, group_size):
    return (k + group_size - 1) // group_size


@torch.library.custom_op("cuops::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor, trans_a: bool, trans_b: bool, alpha: float,
         out_dtype: str) -> torch.Tensor:
    return ops.gemm_impl(a.contiguous(), b.contiguous(), trans_a, trans_b, alpha, 0.0, None,
                         out_dtype)


@gemm.register_fake
def _(a, b, trans_a, trans_b, alpha, out_dtype):
    m = a.shape[1] if trans_a else a.shape[0]
    n = b.shape[0] if trans_b else b.shape[1]
    return a.new_empty((m, n), dtype=torch_dtype(out_dtype))


@torch.library.custom_op("cuops::dequant_int4", mutates_args=())
def dequant_int4(qweight: torch.Tensor, scales: torch.Tensor, zeros: Optional[torch.Tensor],
                 k: int, group_size: int, out_dtype: str) -> torch.Tensor:
    return ops.dequant_int4_impl(qweight.contiguous(), scales.contiguous(),
                                 None if zeros is None else zeros.contiguous(), k, group_size,
                                 out_dtype)


@dequant_int4.register_fake
def _(qweight, scales, zeros, k, group_size, out_dtype):
    return qweight.new_empty((qweight.shape[0], k), dtype=torch_dtype(out_dtype))


@torch.library.custom_op("cuops::gemm_w4a16", mutates_args=())
def gemm_w4a16(x: torch.Tensor, packed: torch.Tensor, n: int, k: int,
               group_size: int) -> torch.Tensor:
    return ops.gemm_w4a16_impl(x.contiguous(), packed, n, k, group_size)


@gemm_w4a16.register_fake
def _(x, packed, n, k, group_size):
    return x.new_empty((x.shape[0], n))


@torch.library.custom_op("cuops::scan", mutates_args=())
def scan(x: torch.Tensor, op: str, exclusive: bool) -> torch.Tensor:
    return ops.scan_impl(x.contiguous(), op, exclusive)


@scan.register_fake
def _(x, op, exclusive):
    return torch.empty_like(x)


@torch.library.custom_op("cuops::reduce", mutates_args=())
def reduce(x: torch.Tensor, op: str) -> torch.Tensor:
    return ops.reduce_impl(x.contiguous(), op)


@reduce.register_fake
def _(x, op):
    return x.new_empty((1,))


def dtype_name(dt):
    return torch_dtype_name(dt)
