"""ctypes binding of libcuops.so: prototypes, status -> exception, handles.

The library is found, in order, at $CUOPS_LIBRARY, beside this file (what
`pip install ./python` puts there) and at build/lib/libcuops.so of the source
tree this package sits in.
"""
import ctypes
import os
import threading

c_i64 = ctypes.c_int64
c_vp = ctypes.c_void_p
c_int = ctypes.c_int
c_float = ctypes.c_float

STATUS_NAMES = {
    0: "CUOPS_STATUS_SUCCESS",
    1: "CUOPS_STATUS_INVALID_VALUE",
    2: "CUOPS_STATUS_NOT_SUPPORTED",
    3: "CUOPS_STATUS_NO_DEVICE",
    4: "CUOPS_STATUS_ALLOC_FAILED",
    5: "CUOPS_STATUS_CUDA_ERROR",
    6: "CUOPS_STATUS_INTERNAL_ERROR",
}

# enum values of include/cuops.h
DTYPE = {"f16": 0, "bf16": 1, "f32": 2, "f64": 3, "i32": 4, "i64": 5, "u8": 6}
OP = {"n": 0, "t": 1}
REDUCE_OP = {"sum": 0, "min": 1, "max": 2}
DEVICE_CPU = -1


class CuopsError(RuntimeError):
    """A cuops call failed; `status` is the status name, `detail` the library's message."""

    def __init__(self, status, detail, call=""):
        self.status = STATUS_NAMES.get(status, f"status {status}")
        self.code = status
        self.detail = detail
        super().__init__(f"{call}: {self.status}: {detail}" if call else f"{self.status}: {detail}")


class Options(ctypes.Structure):
    _fields_ = [("variant", ctypes.c_char_p), ("split_k", c_int), ("flags", ctypes.c_uint)]


def _candidates():
    env = os.environ.get("CUOPS_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libcuops.so")
    yield os.path.join(here, "..", "..", "build", "lib", "libcuops.so")


def _load():
    errors = []
    for path in _candidates():
        if os.path.exists(path):
            try:
                return ctypes.CDLL(os.path.abspath(path))
            except OSError as e:  # pragma: no cover - reported below
                errors.append(f"{path}: {e}")
    raise ImportError("libcuops.so not found (set CUOPS_LIBRARY, or run `make` and "
                      "`pip install ./python`): " + "; ".join(errors))


lib = _load()

_PROTOTYPES = {
    "cuops_create": [ctypes.POINTER(c_vp), c_int],
    "cuops_destroy": [c_vp],
    "cuops_set_stream": [c_vp, c_vp],
    "cuops_set_workspace": [c_vp, c_vp, ctypes.c_size_t],
    "cuops_gemm_ex": [c_vp, c_int, c_int, c_i64, c_i64, c_i64, c_float, c_vp, c_i64, c_vp, c_i64,
                      c_float, c_vp, c_i64, c_int, c_int, ctypes.POINTER(Options)],
    "cuops_dequant_int4_ex": [c_vp, c_i64, c_i64, c_i64, c_vp, c_i64, c_vp, c_int, c_vp, c_vp,
                              c_i64, c_int, ctypes.POINTER(Options)],
    "cuops_w4_packed_size": [c_vp, c_i64, c_i64, c_i64, c_int, ctypes.POINTER(ctypes.c_size_t)],
    "cuops_w4_prepack": [c_vp, c_i64, c_i64, c_i64, c_vp, c_i64, c_vp, c_int, c_vp, c_int, c_vp],
    "cuops_gemm_w4a16_ex": [c_vp, c_i64, c_i64, c_i64, c_i64, c_vp, c_i64, c_vp, c_vp, c_i64, c_int,
                            ctypes.POINTER(Options)],
    "cuops_import_gptq": [c_vp, c_i64, c_i64, c_i64, c_vp, c_vp, c_vp, c_int, c_int, c_vp, c_i64,
                          c_vp, c_vp],
    "cuops_import_awq": [c_vp, c_i64, c_i64, c_i64, c_vp, c_vp, c_vp, c_int, c_vp, c_i64, c_vp,
                         c_vp],
    "cuops_scan_ex": [c_vp, c_int, c_int, c_int, c_i64, c_vp, c_vp, ctypes.POINTER(Options)],
    "cuops_reduce_ex": [c_vp, c_int, c_int, c_i64, c_vp, c_vp, ctypes.POINTER(Options)],
}
for _name, _args in _PROTOTYPES.items():
    _fn = getattr(lib, _name)
    _fn.argtypes = _args
    _fn.restype = c_int

for _name in ("cuops_status_string", "cuops_create_error"):
    getattr(lib, _name).restype = ctypes.c_char_p
lib.cuops_status_string.argtypes = [c_int]
lib.cuops_create_error.argtypes = []
for _name in ("cuops_last_error", "cuops_last_kernel"):
    getattr(lib, _name).restype = ctypes.c_char_p
    getattr(lib, _name).argtypes = [c_vp]


class Handle:
    """One cuops handle (one per device per thread); destroyed with the object."""

    def __init__(self, device):
        h = c_vp()
        st = lib.cuops_create(ctypes.byref(h), device)
        if st != 0:
            raise CuopsError(st, lib.cuops_create_error().decode(), f"cuops_create({device})")
        self.ptr = h
        self.device = device

    def check(self, status, call):
        if status != 0:
            raise CuopsError(status, lib.cuops_last_error(self.ptr).decode(), call)

    def set_stream(self, stream_ptr):
        self.check(lib.cuops_set_stream(self.ptr, c_vp(stream_ptr)), "cuops_set_stream")

    def last_kernel(self):
        return lib.cuops_last_kernel(self.ptr).decode()

    def __del__(self):
        ptr = getattr(self, "ptr", None)
        if ptr is not None and lib is not None:
            lib.cuops_destroy(ptr)
            self.ptr = None


_local = threading.local()


def handle(device, stream=0, record=True):
    """The calling thread's handle for `device` (DEVICE_CPU or a CUDA index)
    and `stream` (a cudaStream_t as an int; 0 the default stream). A handle
    keeps scratch (workspace, scan state) that two calls in flight at once
    must not share, so each stream gets its own. `record`: count it as the
    handle of the thread's last call on `device` (last_kernel)."""
    cache = getattr(_local, "handles", None)
    if cache is None:
        cache = _local.handles = {}
        _local.last = {}
    key = (device, stream)
    h = cache.get(key)
    if h is None:
        h = cache[key] = Handle(device)
        if device >= 0:
            h.set_stream(stream)
    if record:
        _local.last[device] = h
    return h


def last_handle(device):
    """The handle the calling thread's last call on `device` used."""
    last = getattr(_local, "last", None)
    h = last.get(device) if last else None
    return h if h is not None else handle(device)


def options(variant=None, split_k=0, flags=0):
    if variant is None and split_k == 0 and flags == 0:
        return None
    return ctypes.byref(Options(variant.encode() if variant else None, split_k, flags))
