# Copies the built library (../build/lib/libcuops.so, from `make`) into the
# package so that `pip install ./python` gives a self-contained install.
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithLibrary(build_py):
    def run(self):
        lib = os.environ.get("CUOPS_LIBRARY") or os.path.join(HERE, "..", "build", "lib", "libcuops.so")
        if not os.path.exists(lib):
            raise RuntimeError(f"{lib} not found: run `make` in the repository root first "
                               "(or set CUOPS_LIBRARY to a built libcuops.so)")
        shutil.copy2(lib, os.path.join(HERE, "cuops", "libcuops.so"))
        super().run()


setup(cmdclass={"build_py": BuildWithLibrary})
