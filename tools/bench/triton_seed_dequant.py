#!/usr/bin/env python3
"""triton_seed_dequant.py - the seed 001 int4 dequantization kernel in Triton,
as a baseline for cuops-bench (which runs this script with popen when python3
has Triton).

Two load orders of the same kernel, as seed 001 studied them:
  seed     packed loaded, nibble selected, then the scale and zero loads;
  hoisted  packed, scale and zero all loaded before the nibble is touched.
Each is timed at BLOCK_K in {512, 1024, 2048} (outputs per program) and the
best is kept. Timing: triton.testing.do_bench (median, L2 flushed between
runs). Output: one JSON line
  {"seed_us": .., "hoisted_us": .., "best_block_k": .., "maxerr": ..}
where maxerr is the largest |difference| of either kernel from a torch
reference computed with the same fp32 formula (0 when bit-exact).

  python3 tools/bench/triton_seed_dequant.py --n 4096 --k 4096 --dtype float16 --group 128

Exit code 2 (with a message on stderr) when torch or triton is missing or no
CUDA device is visible.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description="seed 001 Triton int4 dequant baseline")
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--dtype", choices=["float16", "bfloat16"], default="float16")
    ap.add_argument("--group", type=int, default=128)
    args = ap.parse_args()

    try:
        import torch
        import triton
        import triton.language as tl
    except ImportError as e:
        print(f"triton_seed_dequant: needs torch and triton ({e})", file=sys.stderr)
        sys.exit(2)
    if not torch.cuda.is_available():
        print("triton_seed_dequant: no CUDA device visible to torch", file=sys.stderr)
        sys.exit(2)

    @triton.jit
    def dequant_seed_order(q_ptr, s_ptr, z_ptr, o_ptr, K, PACKED_K, NG,
                           GROUP: tl.constexpr, BLOCK_K: tl.constexpr):
        # one program per (row, BLOCK_K outputs); loads in the order the seed wrote them
        row = tl.program_id(0)
        cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
        inside = cols < K
        byte = tl.load(q_ptr + row * PACKED_K + cols // 2, mask=inside, other=0).to(tl.int32)
        odd = (cols % 2) == 1
        q = tl.where(odd, (byte >> 4) & 0xF, byte & 0xF).to(tl.float32)
        grp = cols // GROUP
        s = tl.load(s_ptr + row * NG + grp, mask=inside, other=0.0).to(tl.float32)
        z = tl.load(z_ptr + row * NG + grp, mask=inside, other=0).to(tl.float32)
        w = (q - z) * s
        tl.store(o_ptr + row * K + cols, w.to(o_ptr.dtype.element_ty), mask=inside)

    @triton.jit
    def dequant_hoisted_order(q_ptr, s_ptr, z_ptr, o_ptr, K, PACKED_K, NG,
                              GROUP: tl.constexpr, BLOCK_K: tl.constexpr):
        # same work; scale and zero loads written before the packed byte is used
        row = tl.program_id(0)
        cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
        inside = cols < K
        grp = cols // GROUP
        byte = tl.load(q_ptr + row * PACKED_K + cols // 2, mask=inside, other=0).to(tl.int32)
        s = tl.load(s_ptr + row * NG + grp, mask=inside, other=0.0).to(tl.float32)
        z = tl.load(z_ptr + row * NG + grp, mask=inside, other=0).to(tl.float32)
        odd = (cols % 2) == 1
        q = tl.where(odd, (byte >> 4) & 0xF, byte & 0xF).to(tl.float32)
        w = (q - z) * s
        tl.store(o_ptr + row * K + cols, w.to(o_ptr.dtype.element_ty), mask=inside)

    n, k, group = args.n, args.k, args.group
    dt = getattr(torch, args.dtype)
    packed_k = (k + 1) // 2
    ng = (k + group - 1) // group
    dev = "cuda"
    qweight = torch.randint(0, 256, (n, packed_k), dtype=torch.uint8, device=dev)
    scales = (torch.rand((n, ng), device=dev) * 0.2 - 0.1).to(dt)
    zeros = torch.randint(0, 16, (n, ng), dtype=torch.uint8, device=dev)
    out = torch.empty((n, k), dtype=dt, device=dev)

    # reference: the same fp32 formula, rounded once to dt
    cols = torch.arange(k, device=dev)
    byte = qweight[:, cols // 2].to(torch.int32)
    q = torch.where((cols % 2 == 1).unsqueeze(0), (byte >> 4) & 0xF, byte & 0xF).to(torch.float32)
    ref = ((q - zeros[:, cols // group].to(torch.float32)) * scales[:, cols // group].to(torch.float32)).to(dt)

    def run(kernel, block_k):
        grid = (n, triton.cdiv(k, block_k))
        kernel[grid](qweight, scales, zeros, out, k, packed_k, ng, GROUP=group, BLOCK_K=block_k)

    result = {"seed_us": None, "hoisted_us": None, "best_block_k": None, "maxerr": 0.0}
    best_seed = None
    for name, kernel in (("seed_us", dequant_seed_order), ("hoisted_us", dequant_hoisted_order)):
        best = None
        for block_k in (512, 1024, 2048):
            out.fill_(float("nan"))
            run(kernel, block_k)
            torch.cuda.synchronize()
            err = (out.to(torch.float32) - ref.to(torch.float32)).abs().max().item()
            if err != err:  # NaN: an output was never written
                err = float("inf")
            result["maxerr"] = max(result["maxerr"], err)
            ms = triton.testing.do_bench(lambda: run(kernel, block_k), return_mode="median")
            if best is None or ms < best[0]:
                best = (ms, block_k)
        result[name] = round(best[0] * 1000.0, 3)
        if name == "seed_us":
            best_seed = best
    result["best_block_k"] = best_seed[1]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
