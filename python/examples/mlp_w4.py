"""A small LLM-style MLP block (gate/up/down projections with SiLU) run three
ways on the GPU: torch fp16, cuops GEMM, and cuops W4A16 with int4 weights.
Prints the error of each against torch and which kernels ran."""
import torch

import cuops
from cuops.nn import W4Linear, quantize_int4

torch.manual_seed(0)
dev = "cuda"
d_model, d_ff, tokens = 1024, 2816, 16
gate = torch.nn.Linear(d_model, d_ff, bias=False, device=dev, dtype=torch.float16)
up = torch.nn.Linear(d_model, d_ff, bias=False, device=dev, dtype=torch.float16)
down = torch.nn.Linear(d_ff, d_model, bias=False, device=dev, dtype=torch.float16)
x = torch.randn(tokens, d_model, device=dev, dtype=torch.float16)


def mlp(x, g, u, d):
    return d(torch.nn.functional.silu(g(x)) * u(x))


with torch.no_grad():
    ref = mlp(x, gate, up, down)

    # cuops dense GEMM (torch.nn.functional.linear semantics), also under torch.compile
    lin = lambda layer: (lambda t: cuops.linear(t, layer.weight))
    dense = mlp(x, lin(gate), lin(up), lin(down))
    compiled = torch.compile(lambda t: mlp(t, lin(gate), lin(up), lin(down)))(x)

    # int4 weights, dequantized inside the GEMM
    qg, qu, qd = (W4Linear.from_linear(l, group_size=128) for l in (gate, up, down))
    w4 = mlp(x, qg, qu, qd)
    # the same int4 weights dequantized to fp16 by cuops and multiplied by torch:
    # separates the kernel's error from the quantization error
    def dequantized(layer):
        w = cuops.dequant_int4(*quantize_int4(layer.weight.detach(), 128), layer.in_features, 128)
        return lambda t: torch.nn.functional.linear(t, w)
    w4_ref = mlp(x, dequantized(gate), dequantized(up), dequantized(down))
    torch.cuda.synchronize()

rel = lambda a, b: ((a.float() - b.float()).norm() / b.float().norm()).item()
print(f"cuops dense GEMM vs torch:        rel err {rel(dense, ref):.2e}")
print(f"cuops dense GEMM, torch.compile:  rel err {rel(compiled, ref):.2e}")
print(f"cuops W4A16 vs its fp16 dequant:  rel err {rel(w4, w4_ref):.2e}")
print(f"cuops W4A16 vs fp16 (quant. err): rel err {rel(w4, ref):.2e}")
print(f"last kernel: {cuops.last_kernel(0)}")
assert rel(dense, ref) < 1e-2 and rel(compiled, ref) < 1e-2 and rel(w4, w4_ref) < 2e-2
print("ok")
