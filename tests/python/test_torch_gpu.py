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
    check(rel(r1, torch.cumsum(xf.double(), 0)) < 1e-5, f"float scan vs fp64 cumsum: {rel(r1, torch.cumsum(xf.double(), 0))}")
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


def test_quantize_edges():
    """quantize_int4 on groups of one sign and constant groups (CPU tensors):
    the round trip stays within half a step of each weight."""
    w = torch.cat([torch.full((1, 128), 0.5), torch.linspace(1.0, 1.1, 128).view(1, 128),
                   -torch.linspace(2.0, 3.0, 128).view(1, 128), torch.zeros(1, 128)]).to(torch.float16)
    q, s, z = quantize_int4(w, 128)
    lo = (q & 15).to(torch.int32)
    hi = (q >> 4).to(torch.int32)
    qq = torch.stack([lo, hi], -1).view(4, 128)
    back = (qq.float() - z.float()) * s.float()
    err = (back - w.float()).abs().max(-1).values
    check(bool((err <= 0.5 * s.float().view(-1) + 1e-3).all()), f"quantize_int4 edges: err {err.tolist()} step {s.view(-1).tolist()}")
    check(bool(back[0].eq(back[0][0]).all()) and abs(float(back[0][0]) - 0.5) < 0.05, "constant group")


def test_streams_and_dtype():
    """Two streams: each gets its own handle (scratch not shared); W4Linear
    answers in the input's dtype."""
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    x1 = torch.randint(-9, 9, (1 << 22,), device=dev, dtype=torch.int32)
    x2 = torch.randint(-9, 9, (1 << 22,), device=dev, dtype=torch.int32)
    torch.cuda.synchronize()
    with torch.cuda.stream(s1):
        y1 = cuops.scan(x1)
    with torch.cuda.stream(s2):
        y2 = cuops.scan(x2)
    torch.cuda.synchronize()
    check(torch.equal(y1, torch.cumsum(x1, 0, dtype=torch.int32)) and
          torch.equal(y2, torch.cumsum(x2, 0, dtype=torch.int32)), "scans on two streams at once")
    lin = torch.nn.Linear(256, 128, device=dev, dtype=torch.float32)
    q = W4Linear.from_linear(lin, group_size=64)
    x = torch.randn(4, 256, device=dev, dtype=torch.float32)
    check(q(x).dtype == torch.float32, f"W4Linear on f32 input returned {q(x).dtype}")


def test_errors():
    try:
        cuops.linear(torch.randn(4, 3, device=dev, dtype=torch.float16),
                     torch.randn(5, 4, device=dev, dtype=torch.float16))
        check(False, "shape mismatch did not raise")
    except (ValueError, RuntimeError) as e:  # the binding's shape error, however torch wraps it
        check("inner dimensions differ" in str(e), str(e))


run([test_gemm, test_stream_and_compile, test_scan_reduce_dequant, test_w4linear, test_quantize_edges,
     test_streams_and_dtype, test_errors])
finish("test_python_torch")
