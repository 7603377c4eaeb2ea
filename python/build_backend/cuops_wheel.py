"""A PEP 517 build backend for the cuops Python package that needs nothing
but the standard library.

Why not setuptools: GPU machines are often cut off from any package index,
and `pip install ./python` then fails before building anything, because
pip's isolated build environment cannot fetch setuptools or wheel. The
package is pure Python plus one prebuilt shared library, so writing the
wheel (a zip with a dist-info folder, PEP 427) is a few lines of zipfile.

The library comes from $CUOPS_LIBRARY or ../build/lib/libcuops.so (what
`make` builds in the repository root). Only build_wheel is needed for
`pip install ./python`; build_sdist packs the Python sources without it.
"""
import base64
import hashlib
import os
import sys
import sysconfig
import tarfile
import zipfile

NAME = "cuops"
VERSION = "0.1.0"
SUMMARY = ("Python binding of cuops (GEMM, int4 dequant, W4A16 GEMM, scan, reduce) "
           "with PyTorch custom ops")
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
PACKAGE_DIR = os.path.join(HERE, NAME)


def _library_path():
    lib = os.environ.get("CUOPS_LIBRARY") or os.path.join(HERE, "..", "build", "lib",
                                                          "libcuops.so")
    if not os.path.exists(lib):
        raise RuntimeError(f"{lib} not found: run `make` in the repository root first "
                           "(or set CUOPS_LIBRARY to a built libcuops.so)")
    return lib


def _platform_tag():
    # The wheel carries a Linux shared library: tag it for this platform and
    # interpreter-independent Python ("py3-none-<plat>").
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            f"Summary: {SUMMARY}\nRequires-Python: >=3.9\n")


def _package_files():
    """(path in the wheel, path on disk) for every Python file of the package."""
    out = []
    for root, dirs, files in os.walk(PACKAGE_DIR):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in sorted(files):
            if f.endswith(".py"):
                full = os.path.join(root, f)
                out.append((os.path.relpath(full, HERE).replace(os.sep, "/"), full))
    return out


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}\n"


# ---- PEP 517 hooks ----------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    tag = f"py3-none-{_platform_tag()}"
    dist_info = f"{NAME}-{VERSION}.dist-info"
    wheel_name = f"{NAME}-{VERSION}-{tag}.whl"
    entries = []
    for arcname, path in _package_files():
        with open(path, "rb") as f:
            entries.append((arcname, f.read(), 0o644))
    with open(_library_path(), "rb") as f:
        entries.append((f"{NAME}/libcuops.so", f.read(), 0o755))
    entries.append((f"{dist_info}/METADATA", _metadata().encode(), 0o644))
    wheel_meta = (f"Wheel-Version: 1.0\nGenerator: cuops_wheel\nRoot-Is-Purelib: false\n"
                  f"Tag: {tag}\n")
    entries.append((f"{dist_info}/WHEEL", wheel_meta.encode(), 0o644))
    record = "".join(_record_line(a, d) for a, d, _ in entries) + f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode(), 0o644))

    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w",
                         compression=zipfile.ZIP_DEFLATED) as z:
        for arcname, data, mode in entries:
            info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{VERSION}"
    name = f"{base}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ("pyproject.toml", "README.md"):
            t.add(os.path.join(HERE, rel), arcname=f"{base}/{rel}")
        t.add(os.path.abspath(__file__), arcname=f"{base}/build_backend/cuops_wheel.py")
        for arcname, path in _package_files():
            t.add(path, arcname=f"{base}/{arcname}")
    return name


if __name__ == "__main__":  # python build_backend/cuops_wheel.py OUTDIR: build a wheel by hand
    print(build_wheel(sys.argv[1] if len(sys.argv) > 1 else "dist"))
