"""Uniform views of the arrays cuops accepts: torch tensors, numpy arrays and
any object with __cuda_array_interface__ (CuPy, Numba) or DLPack. Outputs for
an input that has only __cuda_array_interface__ are CuPy arrays (CuPy must be
installed), on that input's device and CuPy's current stream there.

A view gives what a cuops call needs: a data pointer, the shape, the row
stride in elements (the leading dimension), the cuops dtype, and the device
(DEVICE_CPU or a CUDA index). Outputs are allocated with the input's library.
"""
from . import _lib

_NP_TYPESTR = {"<f2": "f16", "<f4": "f32", "<f8": "f64", "<i4": "i32", "<i8": "i64", "|u1": "u8"}
_NP_FROM_DTYPE = {"f16": "float16", "f32": "float32", "f64": "float64", "i32": "int32",
                  "i64": "int64", "u8": "uint8"}
_ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i32": 4, "i64": 8, "u8": 1}


def _torch():
    try:
        import torch
        return torch
    except ImportError:  # pragma: no cover
        return None


def torch_dtype_name(dt):
    torch = _torch()
    table = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
             torch.float64: "f64", torch.int32: "i32", torch.int64: "i64", torch.uint8: "u8"}
    if dt not in table:
        raise TypeError(f"cuops: unsupported torch dtype {dt}")
    return table[dt]


def torch_dtype(name):
    torch = _torch()
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
            "f64": torch.float64, "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8}[name]


class View:
    __slots__ = ("obj", "ptr", "shape", "ld", "dtype", "device", "kind")

    def __init__(self, obj, ptr, shape, ld, dtype, device, kind):
        self.obj, self.ptr, self.shape, self.ld = obj, ptr, tuple(shape), ld
        self.dtype, self.device, self.kind = dtype, device, kind


def _element_strides(byte_strides, item, name):
    """Byte strides as element strides; a stride between two elements (a field
    of a record array) cannot be described by a leading dimension."""
    if any(s % item for s in byte_strides):
        raise ValueError(f"cuops: {name} has strides {tuple(byte_strides)} that are not a "
                         f"multiple of its {item}-byte elements")
    return [s // item for s in byte_strides]


def _is_torch(x):
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def view(x, name="array", writable=False):
    """A View of x; rows must have unit element stride (row-major with a leading dimension).
    writable: x is written (an output), so a read-only array is refused."""
    readonly = False
    if _is_torch(x):
        dt = torch_dtype_name(x.dtype)
        dev = x.device.index if x.device.type == "cuda" else _lib.DEVICE_CPU
        if x.device.type == "cuda" and dev is None:
            dev = _torch().cuda.current_device()
        if x.device.type not in ("cuda", "cpu"):
            raise TypeError(f"cuops: {name} is on {x.device}; cuops takes CUDA or CPU tensors")
        strides = x.stride()
        kind = "torch"
        ptr = x.data_ptr()
    elif hasattr(x, "__cuda_array_interface__"):
        cai = x.__cuda_array_interface__
        dt = _NP_TYPESTR.get(cai["typestr"])
        if dt is None:
            raise TypeError(f"cuops: unsupported typestr {cai['typestr']} for {name}")
        ptr, readonly = cai["data"][0], bool(cai["data"][1])
        item = _ITEMSIZE[dt]
        if cai.get("strides") is None:
            strides, acc = [], 1
            for s in reversed(cai["shape"]):
                strides.insert(0, acc)
                acc *= s
        else:
            strides = _element_strides(cai["strides"], item, name)
        dev = _cuda_device_of_pointer(x)
        kind = "cai"
    elif hasattr(x, "__array_interface__"):
        ai = x.__array_interface__
        dt = _NP_TYPESTR.get(ai["typestr"])
        if dt is None:
            raise TypeError(f"cuops: unsupported dtype {ai['typestr']} for {name}")
        ptr, readonly = ai["data"][0], bool(ai["data"][1])
        flags = getattr(x, "flags", None)
        if flags is not None and hasattr(flags, "writeable"):
            readonly = readonly or not flags.writeable
        item = _ITEMSIZE[dt]
        strides = _element_strides(x.strides, item, name)
        dev = _lib.DEVICE_CPU
        kind = "numpy"
    elif hasattr(x, "__dlpack__"):
        torch = _torch()
        if torch is None:
            raise TypeError(f"cuops: {name} has only DLPack and torch is not installed")
        return view(torch.from_dlpack(x), name)
    else:
        raise TypeError(f"cuops: {name} of type {type(x).__name__} is not an array")
    shape = tuple(x.shape)
    if writable and readonly:
        raise ValueError(f"cuops: {name} is read-only and cuops writes it")
    if len(shape) == 0:
        raise ValueError(f"cuops: {name} must have at least one dimension")
    if len(shape) > 2:
        raise ValueError(f"cuops: {name} must be 1-D or 2-D, got shape {shape}")
    if 0 in shape:
        # no element is read or written; numpy gives such arrays strides that
        # say nothing of a layout, so the leading dimension is the row length
        return View(x, ptr, shape, max(shape[-1], 1), dt, dev, kind)
    if len(shape) == 1:
        if shape[0] > 1 and strides[0] != 1:
            raise ValueError(f"cuops: {name} must be contiguous")
        ld = shape[0]
    elif len(shape) == 2:
        if shape[1] > 1 and strides[1] != 1:
            raise ValueError(f"cuops: {name} rows must be contiguous (stride[1] == 1); "
                             "make a row-major copy first (torch: .contiguous(), "
                             "numpy: numpy.ascontiguousarray)")
        ld = strides[0] if shape[0] > 1 else max(shape[1], 1)
    else:
        raise ValueError(f"cuops: {name} must be 1-D or 2-D, got shape {shape}")
    return View(x, ptr, shape, ld, dt, dev, kind)


def dense_view(x, name="array"):
    """A View of x whose rows lie back to back (ld == row length), for the
    arguments a cuops call reads without a leading dimension (scales, zeros,
    the GPTQ/AWQ int32 tensors, the packed weight). A torch tensor or numpy
    array whose rows are unit-stride but spaced apart (a column slice) is
    copied (the copy lives in the View until the call returns; torch frees it
    in stream order); other kinds must already be contiguous, and an array
    whose rows are not unit-stride (a transpose) is refused by view() as for
    every argument."""
    v = view(x, name)
    if len(v.shape) == 2 and v.shape[0] > 1 and v.ld != v.shape[1]:
        if v.kind == "torch":
            return view(v.obj.contiguous(), name)
        if v.kind == "numpy":
            import numpy as np
            return view(np.ascontiguousarray(x), name)
        raise ValueError(f"cuops: {name} must be contiguous (its rows are read back to back)")
    return v


def _cuda_device_of_pointer(x):
    dev = getattr(x, "device", None)
    idx = getattr(dev, "id", None)
    if isinstance(idx, int):
        return idx
    # no device attribute: ask the driver which device holds the pointer
    cupy = _cupy("an array with only __cuda_array_interface__")
    attrs = cupy.cuda.runtime.pointerGetAttributes(x.__cuda_array_interface__["data"][0])
    return int(attrs.device)


def _cupy(what):
    try:
        import cupy
        return cupy
    except ImportError:
        raise TypeError(f"cuops: {what} needs CuPy installed (outputs and streams for "
                        "__cuda_array_interface__ arrays are CuPy's)") from None


def empty_like_kind(ref, shape, dtype):
    """A new uninitialised array of `shape`/`dtype` in ref's library and device."""
    if ref.kind == "torch":
        torch = _torch()
        dev = torch.device("cuda", ref.device) if ref.device >= 0 else torch.device("cpu")
        return torch.empty(shape, dtype=torch_dtype(dtype), device=dev)
    if ref.kind == "cai":
        cupy = _cupy("an output for a __cuda_array_interface__ array")
        with cupy.cuda.Device(ref.device):
            return cupy.empty(shape, dtype=_NP_FROM_DTYPE[dtype])
    import numpy as np
    if dtype == "bf16":
        raise TypeError("cuops: numpy has no bfloat16; use torch for bf16")
    return np.empty(shape, dtype=_NP_FROM_DTYPE[dtype])


def stream_of(ref):
    """The current stream of ref's library on its device (as an int), 0 on the CPU."""
    if ref.device < 0:
        return 0
    if ref.kind == "torch":
        return _torch().cuda.current_stream(ref.device).cuda_stream
    if ref.kind == "cai":
        cupy = _cupy("a __cuda_array_interface__ array")
        with cupy.cuda.Device(ref.device):
            return cupy.cuda.get_current_stream().ptr
    return 0
