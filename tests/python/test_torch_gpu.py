"""The Python binding on CUDA torch tensors: ops against torch references,
the current stream, torch.compile tracing the custom ops, W4Linear."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from harness import check, finish, run, skip  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

if torch is None or not torch.cuda.is_available():
    skip("torch with CUDA not available: torch GPU tests skipped")
    finish("test_python_torch")

import cuops  # noqa: E402
from cuops.nn import W4Linear, quantize_int4  # noqa: E402

dev = "cuda"


def rel(a, b):
    return ((a.double() - b.double()).norm() / b.double().norm().clamp_min(1e-300)).item()


def test_gemm():
    for dt in (torch.float16, torch.bfloat16):
        for (m, n, k) in ((1, 4096, 4096), (129, 65, 1537), (512, 512, 512)):
            x = torch.randn(m, k, device=dev, dtype=dt)
            w = torch.randn(n, k, device=dev, dtype=dt)
            y = cuops.linear(x, w)
            ref = x.double() @ w.double().T
            check(y.dtype == dt and y.shape == (m, n) and rel(y, ref) < 1e-2, f"linear {dt} {m}x{n}x{k}: {rel(y, ref)}")
    a = torch.randn(64, 48, device=dev)
    b = torch.randn(48, 80, device=dev)
    check(rel(cuops.gemm(a, b), a.double() @ b.double()) < 1e-5, "sgemm")


def test_stream_and_compile():
    s = torch.cuda.Stream()
    x = torch.randn(256, 256, device=dev, dtype=torch.float16)
    w = torch.randn(256, 256, device=dev, dtype=torch.float16)
    with torch.cuda.stream(s):
        y = cuops.linear(x, w)
    s.synchronize()
    check(rel(y, x.double() @ w.double().T) < 1e-2, "on a side stream")

    def f(x, w):
        return torch.relu(cuops.linear(x, w)) + cuops.scan(x[0].float())[-1]

    cf = torch.compile(f, fullgraph=True)
    out = cf(x, w)
    check(rel(out, f(x, w)) < 1e-3, "torch.compile(fullgraph) of cuops ops")


def test_scan_reduce_dequant():
    x = torch.randint(-100, 100, (1 << 20,), device=dev, dtype=torch.int32)
    check(torch.equal(cuops.scan(x), torch.cumsum(x, 0, dtype=torch.int32)), "scan i32")
    check(int(cuops.reduce(x)[0]) == int(x.sum()), "reduce i32")
    xf = torch.rand(1 << 20, device=dev)
    r1, r2 = cuops.scan(xf), cuops.scan(xf)
    check(torch.equal(r1, r2), "float scan bitwise reproducible")
    w = torch.randn(512, 1024, device=dev, dtype=torch.float16)
    q, s, z = quantize_int4(w, 128)
    wd = cuops.dequant_int4(q, s, z, 1024, 128)
    check(wd.shape == w.shape and rel(wd, w) < 0.2, f"dequant(quantize) error {rel(wd, w)}")


def test_w4linear():
    lin = torch.nn.Linear(1024, 768, device=dev, dtype=torch.float16)
    q = W4Linear.from_linear(lin, group_size=128)
    x = torch.randn(16, 1024, device=dev, dtype=torch.float16)
    wq = cuops.dequant_int4(*quantize_int4(lin.weight.detach(), 128), 1024, 128)
    ref = torch.nn.functional.linear(x.double(), wq.double(), lin.bias.double())
    check(rel(q(x), ref) < 1e-2, f"W4Linear vs dequantized fp64: {rel(q(x), ref)}")


def test_errors():
    try:
        cuops.linear(torch.randn(4, 3, device=dev, dtype=torch.float16),
                     torch.randn(5, 4, device=dev, dtype=torch.float16))
        check(False, "shape mismatch did not raise")
    except (ValueError, RuntimeError):
        check(True)


run([test_gemm, test_stream_and_compile, test_scan_reduce_dequant, test_w4linear, test_errors])
finish("test_python_torch")
