"""cuops.nn.W4Linear: a drop-in replacement for torch.nn.Linear whose weight
is int4 (group-wise scale and zero), multiplied by cuops_gemm_w4a16 without
ever materialising the dense weight."""
import torch

from . import gemm_w4a16, w4a16_prepack
from .torch_ops import dtype_name


def quantize_int4(weight, group_size=128):
    """Asymmetric group-wise int4 quantization of a [n, k] float weight.

    Returns (qweight uint8 [n, ceil(k/2)] in the seed layout (low nibble = even
    column), scales [n, groups] in weight's dtype, zeros uint8 [n, groups]).
    """
    n, k = weight.shape
    groups = (k + group_size - 1) // group_size
    padded = torch.nn.functional.pad(weight.float(), (0, groups * group_size - k))
    g = padded.view(n, groups, group_size)
    # the padded tail of the last group must not widen its range
    valid = (torch.arange(groups * group_size, device=weight.device) < k).view(1, groups, group_size)
    lo = torch.where(valid, g, torch.full_like(g, float("inf"))).amin(-1)
    hi = torch.where(valid, g, torch.full_like(g, float("-inf"))).amax(-1)
    # the range holds 0, so the zero point lies in 0..15 and a group of one
    # sign is not clipped at its far end
    lo, hi = lo.clamp(max=0.0), hi.clamp(min=0.0)
    scale = ((hi - lo) / 15.0).to(weight.dtype).float()  # the kernel sees the rounded scale
    # an all-zero group, or a range below the dtype's smallest step: any
    # scale dequantizes it to zeros (q == zero)
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    zero = torch.round(-lo / scale).clamp(0, 15)
    q = torch.round(g / scale.unsqueeze(-1) + zero.unsqueeze(-1)).clamp(0, 15).to(torch.uint8)
    q = q.view(n, groups * group_size)[:, :k]
    if k % 2:
        q = torch.nn.functional.pad(q, (0, 1))
    qweight = (q[:, 0::2] | (q[:, 1::2] << 4)).contiguous()
    return qweight, scale.to(weight.dtype).contiguous(), zero.to(torch.uint8).contiguous()


class W4Linear(torch.nn.Module):
    """y = x @ W^T + b with W stored as prepacked int4."""

    def __init__(self, in_features, out_features, group_size, packed, bias=None,
                 dtype=torch.float16):
        super().__init__()
        self.in_features, self.out_features, self.group_size = in_features, out_features, group_size
        self.dtype = dtype
        self.register_buffer("packed", packed)
        self.bias = None if bias is None else torch.nn.Parameter(bias.detach().to(dtype),
                                                                 requires_grad=False)

    @classmethod
    def from_linear(cls, linear, group_size=128, dtype=None):
        """Quantize a float nn.Linear (on a CUDA device) to int4 and prepack it."""
        dtype = dtype or (linear.weight.dtype if linear.weight.dtype in (torch.float16, torch.bfloat16)
                          else torch.float16)
        w = linear.weight.detach().to(dtype)
        qweight, scales, zeros = quantize_int4(w, group_size)
        return cls.from_int4(qweight, scales, zeros, linear.in_features, group_size,
                             linear.bias, dtype)

    @classmethod
    def from_int4(cls, qweight, scales, zeros, in_features, group_size, bias=None,
                  dtype=torch.float16):
        """From a seed-format int4 weight (e.g. converted from GPTQ or AWQ)."""
        packed = w4a16_prepack(qweight, scales, zeros, in_features, group_size, dtype_name(dtype))
        return cls(in_features, qweight.shape[0], group_size, packed, bias, dtype)

    def forward(self, x):
        """In x's dtype (as nn.Linear): the products run in self.dtype."""
        shape = x.shape
        y = gemm_w4a16(x.reshape(-1, self.in_features).to(self.dtype), self.packed,
                       self.out_features, self.in_features, self.group_size)
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype).reshape(*shape[:-1], self.out_features)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"group_size={self.group_size}, dtype={self.dtype}")
