"""The Python binding on numpy arrays (CPU reference backend): results against
numpy in float64, errors as CuopsError, in-place scan, int4 round trip."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import cuops  # noqa: E402
from harness import check, finish, run  # noqa: E402

rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))


def rel(a, b):
    return np.linalg.norm(np.asarray(a, np.float64) - b) / max(np.linalg.norm(b), 1e-300)


def test_gemm():
    for ta in (False, True):
        for tb in (False, True):
            for dt, tol in ((np.float32, 1e-5), (np.float16, 1e-2)):
                m, n, k = 17, 9, 33
                a = rng.uniform(-1, 1, (k, m) if ta else (m, k)).astype(dt)
                b = rng.uniform(-1, 1, (n, k) if tb else (k, n)).astype(dt)
                A = a.astype(np.float64).T if ta else a.astype(np.float64)
                B = b.astype(np.float64).T if tb else b.astype(np.float64)
                c = cuops.gemm(a, b, trans_a=ta, trans_b=tb, out_dtype="f32")
                check(c.shape == (m, n) and c.dtype == np.float32, f"shape/dtype {c.shape} {c.dtype}")
                check(rel(c, A @ B) <= tol, f"gemm ta={ta} tb={tb} {dt}: rel {rel(c, A @ B)}")
    # alpha/beta with an existing C, and a strided (sliced) A
    big = rng.uniform(-1, 1, (8, 40)).astype(np.float32)
    a = big[:, :24]                      # leading dimension 40
    b = rng.uniform(-1, 1, (24, 5)).astype(np.float32)
    c0 = rng.uniform(-1, 1, (8, 5)).astype(np.float32)
    c = c0.copy()
    cuops.gemm(a, b, alpha=0.5, beta=-2.0, c=c)
    ref = 0.5 * a.astype(np.float64) @ b - 2.0 * c0
    check(rel(c, ref) <= 1e-5, f"alpha/beta/ld: rel {rel(c, ref)}")
    check(cuops.last_kernel(cuops.DEVICE_CPU) == "cpu_reference", cuops.last_kernel(cuops.DEVICE_CPU))


def test_errors():
    a = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (5, 2)).astype(np.float32)
    try:
        cuops.gemm(a, b)
        check(False, "mismatched inner dims did not raise")
    except ValueError as e:
        check("inner" in str(e), str(e))
    try:  # int32 GEMM is not a supported dtype: the library's status surfaces
        cuops.gemm(a.astype(np.int32), rng.integers(0, 3, (3, 2)).astype(np.int32))
        check(False, "int32 gemm did not raise")
    except cuops.CuopsError as e:
        check(e.status == "CUOPS_STATUS_NOT_SUPPORTED" and e.detail, f"{e.status}: {e.detail}")
    try:
        cuops.scan(np.arange(5, dtype=np.float32), op="prod")
        check(False, "bad op did not raise")
    except ValueError:
        check(True)


def test_scan_reduce():
    for dt in (np.int32, np.int64, np.float32, np.float64):
        x = (rng.integers(-50, 50, 1000) if np.issubdtype(dt, np.integer)
             else rng.uniform(-1, 1, 1000)).astype(dt)
        for op, fn in (("sum", np.cumsum), ("min", np.minimum.accumulate), ("max", np.maximum.accumulate)):
            out = cuops.scan(x, op=op)
            ref = fn(x.astype(np.float64))
            ok = np.array_equal(out, ref.astype(dt)) if op != "sum" or np.issubdtype(dt, np.integer) \
                else rel(out, ref) < 1e-5
            check(ok, f"scan {op} {dt}")
            r = cuops.reduce(x, op=op)
            check(r.shape == (1,) and abs(float(r[0]) - float(ref[-1])) <= 1e-4 * (1 + abs(ref[-1])),
                  f"reduce {op} {dt}: {r} vs {ref[-1]}")
        ex = cuops.scan(x, exclusive=True)
        check(float(ex[0]) == 0 and abs(float(ex[-1]) - float(np.sum(x[:-1], dtype=np.float64))) < 1e-3,
              f"exclusive {dt}")
    x = rng.integers(0, 9, 77).astype(np.int64)
    ref = np.cumsum(x)
    y = cuops.scan(x, out=x)  # in place
    check(y is x and np.array_equal(x, ref), "in-place scan")


def test_int4():
    n, k, g = 6, 70, 32
    q = rng.integers(0, 16, (n, k)).astype(np.uint8)
    qk = np.pad(q, ((0, 0), (0, k % 2)))
    packed = (qk[:, 0::2] | (qk[:, 1::2] << 4)).astype(np.uint8)
    ng = (k + g - 1) // g
    scales = rng.uniform(0.01, 0.1, (n, ng)).astype(np.float32)
    zeros = rng.integers(0, 16, (n, ng)).astype(np.uint8)
    w = cuops.dequant_int4(packed, scales, zeros, k, g)
    grp = np.arange(k) // g
    ref = (q.astype(np.float32) - zeros[:, grp].astype(np.float32)) * scales[:, grp]
    check(w.shape == (n, k) and np.array_equal(w, ref), "dequant bit-exact (f32)")
    wsym = cuops.dequant_int4(packed, scales, None, k, g)
    check(np.array_equal(wsym, (q.astype(np.float32) - 8.0) * scales[:, grp]), "symmetric dequant")
    # W4A16 through the CPU backend: x @ W^T with the f16-rounded scales
    m = 3
    x = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    pk = cuops.w4a16_prepack(packed, scales, zeros, k, g, act_dtype="f16")
    y = cuops.gemm_w4a16(x, pk, n, k, g)
    s16 = scales.astype(np.float16).astype(np.float32)
    wref = (q.astype(np.float32) - zeros[:, grp].astype(np.float32)) * s16[:, grp]
    yref = x.astype(np.float64) @ wref.astype(np.float64).T
    check(y.shape == (m, n) and rel(y, yref) < 1e-2, f"w4a16 rel {rel(y, yref)}")


def test_slices_and_checks():
    """Arguments read without a leading dimension (scales, zeros, the GPTQ/AWQ
    words) given as slices: the binding makes them contiguous; shapes and
    dtypes the C call cannot check are refused before it."""
    n, k, g = 6, 64, 32
    ng = k // g
    q = rng.integers(0, 16, (n, k)).astype(np.uint8)
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)
    wide_s = rng.uniform(0.01, 0.1, (n, ng + 3)).astype(np.float32)
    wide_z = rng.integers(0, 16, (n, ng + 5)).astype(np.uint8)
    s, z = wide_s[:, 1:1 + ng], wide_z[:, 2:2 + ng]          # row strides 5 and 7
    check(not s.flags["C_CONTIGUOUS"] and not z.flags["C_CONTIGUOUS"], "the slices are strided")
    w = cuops.dequant_int4(packed, s, z, k, g)
    w_ref = cuops.dequant_int4(packed, np.ascontiguousarray(s), np.ascontiguousarray(z), k, g)
    check(np.array_equal(w, w_ref), "dequant with sliced scales/zeros")
    pk = cuops.w4a16_prepack(packed, s, z, k, g)
    pk_ref = cuops.w4a16_prepack(packed, np.ascontiguousarray(s), np.ascontiguousarray(z), k, g)
    check(np.array_equal(pk, pk_ref), "prepack with sliced scales/zeros")
    x = rng.uniform(-1, 1, (2, k)).astype(np.float16)
    try:  # a packed buffer shorter than the layout needs: refused, not read past its end
        cuops.gemm_w4a16(x, pk[: pk.shape[0] // 2], n, k, g)
        check(False, "a short packed buffer did not raise")
    except ValueError as e:
        check("packed" in str(e), str(e))
    try:
        cuops.w4a16_prepack(packed, np.ascontiguousarray(s), np.ascontiguousarray(z).astype(np.int32), k, g)
        check(False, "int32 zeros did not raise")
    except ValueError as e:
        check("zeros" in str(e), str(e))
    rec = np.zeros(8, dtype=[("a", "<f4"), ("b", "<i2")])     # field stride 6 bytes
    try:
        cuops.reduce(rec["a"])
        check(False, "a stride between two elements did not raise")
    except ValueError as e:
        check("stride" in str(e), str(e))


def test_argument_contracts():
    """Outputs that are read-only, qweight widths that disagree with k, packed
    buffers of another shape, zero-size arrays, out_dtype against c."""
    x = np.frombuffer(bytes(np.arange(5, dtype=np.int64)), np.int64)  # read-only
    try:
        cuops.scan(x, out=x)
        check(False, "a read-only out was written")
    except ValueError as e:
        check("read-only" in str(e), str(e))
    check(np.array_equal(x, np.arange(5)), "the read-only array is unchanged")
    a = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    b = rng.uniform(-1, 1, (4, 2)).astype(np.float32)
    c_ro = np.zeros((3, 2), np.float32)
    c_ro.setflags(write=False)
    try:
        cuops.gemm(a, b, c=c_ro)
        check(False, "a read-only c was written")
    except ValueError as e:
        check("read-only" in str(e), str(e))
    try:
        cuops.gemm(a, b, c=np.zeros((3, 2), np.float32), out_dtype="f16")
        check(False, "out_dtype different from c's dtype was ignored")
    except ValueError as e:
        check("out_dtype" in str(e), str(e))
    # qweight narrower than k needs (a column slice) or wider
    n, k, g = 2, 8, 8
    big = rng.integers(0, 256, (n, 4), dtype=np.uint8)
    s = np.ones((n, 1), np.float32)
    z = np.full((n, 1), 8, np.uint8)
    for q, kk in ((big[:, :2], 8), (big, 6), (big, 10)):
        try:
            cuops.dequant_int4(q, s, z, kk, g)
            check(False, f"qweight {q.shape} with k={kk} was accepted")
        except ValueError as e:
            check("bytes per row" in str(e), str(e))
    w = cuops.dequant_int4(big, s, z, 7, g)  # k = 7: 4 bytes per row, the last nibble unused
    check(w.shape == (n, 7), f"odd k: shape {w.shape}")
    # one group per row with an odd k: group_size = k (odd) gives what the even size above gives
    w7 = cuops.dequant_int4(big, s, z, 7, 7)
    check(np.array_equal(w7, w), "odd k per channel (group_size = k = 7)")
    # a group size that is neither even nor >= k, or not positive: refused by name
    for bad in (0, -2, 3):
        try:
            cuops.dequant_int4(big, s, z, 7, bad)
            check(False, f"group_size {bad} was accepted")
        except ValueError as e:
            check("group_size" in str(e), str(e))
    # a buffer prepacked for another shape
    n, k, g = 8, 64, 32
    q = rng.integers(0, 256, (n, k // 2), dtype=np.uint8)
    sc = rng.uniform(0.5, 1, (n, k // g)).astype(np.float16)
    zz = rng.integers(0, 16, (n, k // g), dtype=np.uint8)
    pk = cuops.w4a16_prepack(q, sc, zz, k, g, "f16")
    xx = rng.uniform(-1, 1, (3, k)).astype(np.float16)
    for nn, kk in ((4, 64), (8, 32)):
        try:
            cuops.gemm_w4a16(xx[:, :kk], pk, nn, kk, g)
            check(False, f"a buffer for {n}x{k} served n={nn} k={kk}")
        except ValueError as e:
            check("prepacked for another shape" in str(e), str(e))
    # zero-size operands: m = 0 and n = 0 return empty results, k = 0 gives beta * C
    y = cuops.gemm(np.empty((0, 3), np.float32), b[:3])
    check(y.shape == (0, 2), f"m = 0: {y.shape}")
    y = cuops.gemm(a, np.empty((4, 0), np.float32))
    check(y.shape == (3, 0), f"n = 0: {y.shape}")
    c0 = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
    c = c0.copy()
    cuops.gemm(np.empty((3, 0), np.float32), np.empty((0, 2), np.float32), beta=0.5, c=c)
    check(np.array_equal(c, (0.5 * c0).astype(np.float32)), "k = 0: C = beta * C")
    # linear on 1-D and 3-D x, as F.linear
    w = rng.uniform(-1, 1, (5, 4)).astype(np.float32)
    x3 = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    y3 = cuops.linear(x3, w)
    check(y3.shape == (2, 3, 5) and rel(y3, x3.astype(np.float64) @ w.T) <= 1e-5, f"linear 3-D {y3.shape}")
    y1 = cuops.linear(x3[0, 0], w)
    check(y1.shape == (5,) and rel(y1, x3[0, 0].astype(np.float64) @ w.T) <= 1e-5, f"linear 1-D {y1.shape}")


def _pack_words(nibbles):
    """[..., 8] nibbles -> int32 words, nibble p in bits 4p..4p+3."""
    w = np.zeros(nibbles.shape[:-1], dtype=np.uint32)
    for p in range(8):
        w |= nibbles[..., p].astype(np.uint32) << np.uint32(4 * p)
    return w.view(np.int32)


def test_importers():
    n, k, g = 16, 64, 32
    groups = k // g
    q = rng.integers(0, 16, (n, k)).astype(np.uint8)          # W[n, k] nibbles
    z = rng.integers(1, 16, (n, groups)).astype(np.uint8)     # >= 1 so GPTQ v1 (zero - 1) fits
    s = rng.uniform(0.01, 0.1, (groups, n)).astype(np.float16)
    seed_q = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)
    # GPTQ: qweight [k/8, n], word [i][j] holds W[j, 8i+p]; qzeros [groups, n/8], row 8j+p
    gq = _pack_words(q.T.reshape(k // 8, 8, n).transpose(0, 2, 1))
    for version, stored in ((1, z - 1), (2, z)):
        gz = _pack_words(stored.T.reshape(groups, n // 8, 8))
        qo, so, zo = cuops.from_gptq(gq, gz, s, g, gptq_version=version)
        check(np.array_equal(qo, seed_q) and np.array_equal(zo, z) and np.array_equal(so, s.T),
              f"GPTQ v{version} import")
    # AWQ: qweight [k, n/8], word [c][j] nibble p holds W[8j + order[p], c]
    order = [0, 2, 4, 6, 1, 3, 5, 7]
    aq = _pack_words(q.T.reshape(k, n // 8, 8)[:, :, order])
    az = _pack_words(z.T.reshape(groups, n // 8, 8)[:, :, order])
    qo, so, zo = cuops.from_awq(aq, az, s, g)
    check(np.array_equal(qo, seed_q) and np.array_equal(zo, z) and np.array_equal(so, s.T), "AWQ import")
    # the same tensors as column slices of wider ones (a fused QKV split)
    wide = lambda a, extra: np.concatenate([a, np.zeros((a.shape[0], extra), a.dtype)], 1)[:, :a.shape[1]]
    qo2, so2, zo2 = cuops.from_awq(wide(aq, 3), wide(az, 2), wide(s, 8), g)
    check(np.array_equal(qo2, qo) and np.array_equal(so2, so) and np.array_equal(zo2, zo), "AWQ import of slices")
    try:
        cuops.from_awq(aq, az[:1], s, g)
        check(False, "short qzeros did not raise")
    except ValueError as e:
        check("qzeros" in str(e), str(e))
    # per channel (group_size None / -1) with an empty k: an empty weight, not a division by zero
    empty_s = np.zeros((0, n), np.float16)
    for fmt, qw, qz in (("GPTQ", np.zeros((0, n), np.int32), np.zeros((0, n // 8), np.int32)),
                        ("AWQ", np.zeros((0, n // 8), np.int32), np.zeros((0, n // 8), np.int32))):
        for gs in (None, -1):
            try:
                imp = cuops.from_gptq if fmt == "GPTQ" else cuops.from_awq
                qo, so, zo = imp(qw, qz, empty_s, gs)
                check(qo.shape[0] == n and qo.size == 0 and so.size == 0 and zo.size == 0,
                      f"{fmt} per channel, k = 0: shapes {qo.shape} {so.shape} {zo.shape}")
            except Exception as e:  # noqa: BLE001 - any raise is the failure
                check(False, f"{fmt} per channel, k = 0 (group_size {gs}) raised {type(e).__name__}: {e}")


run([test_gemm, test_errors, test_scan_reduce, test_int4, test_slices_and_checks, test_argument_contracts,
     test_importers])
finish("test_python_numpy")
