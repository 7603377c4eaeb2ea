"""`pip install ./python` with no package index (what a GPU machine cut off
from the network sees): the wheel must build from the standard library alone
and carry libcuops.so, and the installed package must load that copy (not
the source tree's) and answer a call on the CPU backend."""
import os
import subprocess
import sys
import tempfile

from harness import check, finish, run, skip

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_offline_install():
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
        skip("no pip for this python: install test skipped")
        return
    lib = os.environ.get("CUOPS_LIBRARY") or os.path.join(ROOT, "build", "lib", "libcuops.so")
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "site")
        env = dict(os.environ, CUOPS_LIBRARY=lib, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                            "--target", target, os.path.join(ROOT, "python")],
                           capture_output=True, text=True, env=env, cwd=tmp)
        check(r.returncode == 0, f"pip install failed:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        if r.returncode:
            return
        installed = os.path.join(target, "cuops", "libcuops.so")
        check(os.path.isfile(installed), "the wheel did not carry libcuops.so")
        # A fresh interpreter, outside the source tree, with no CUOPS_LIBRARY:
        # only the installed copy can be found.
        env = {k: v for k, v in os.environ.items() if k not in ("CUOPS_LIBRARY", "PYTHONPATH")}
        env["PYTHONPATH"] = target
        probe = ("import cuops, cuops._lib as L, os; "
                 "print(os.path.realpath(cuops.__file__)); print(os.path.realpath(L.lib._name)); "
                 "import numpy as np; x = np.arange(1, 101, dtype=np.int32); "
                 "print(int(np.asarray(cuops.reduce(x)).reshape(-1)[0]))")
        r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                           cwd=tmp)
        out = r.stdout.split()
        if r.returncode and "No module named 'numpy'" in r.stderr:
            skip("no numpy: the installed package's CPU call was not tried")
            return
        check(r.returncode == 0 and len(out) == 3, f"import of the installed package failed: {r.stderr[-2000:]}")
        if len(out) == 3:
            real_target = os.path.realpath(target)
            check(out[0].startswith(real_target), f"imported {out[0]}, not the installed copy")
            check(out[1] == os.path.realpath(installed), f"loaded {out[1]}, not the wheel's library")
            check(out[2] == "5050", f"cuops.reduce(1..100) = {out[2]}")


if __name__ == "__main__":
    run([test_offline_install])
    finish("test_install")
