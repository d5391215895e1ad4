"""Build the native kernels.

Every C extension of the project is listed here; an extension whose source does not exist yet is
skipped, so a partial tree still installs.  ``make native`` rebuilds them in place through an
editable reinstall (``pip install -e .``; never a deprecated ``setup.py`` command); set
CTPLUGIN_ONLY_EXT to a comma-separated list of extension names to rebuild just those (handy
while editing one kernel); CTPLUGIN_NO_IFMA=1 leaves the AVX-512 IFMA lanes out (see below).

Each extension is ONE translation unit (its module file #includes its headers, as libsecp256k1
does).  Headers shared by several extensions live in ctplugin/native/ and are included by their
path from the repository root (``#include "ctplugin/native/sha256.h"``).
"""

import os
import platform
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).parent
EXTENSIONS = {
    "ctplugin._hashes": "ctplugin/_hashes.c",
    "ctplugin.secp256k1._native": "ctplugin/secp256k1/_native.c",
    "ctplugin.elements._speedups": "ctplugin/elements/_speedups.c",
}
# The kernel again with the BMI2/ADX field multiplication (x86-64 assembly); kernel.py uses it
# only on CPUs that have those instructions.
if platform.machine().lower() in ("x86_64", "amd64"):
    EXTENSIONS["ctplugin.secp256k1._native_adx"] = "ctplugin/secp256k1/_native_adx.c"
CFLAGS = ["-O3", "-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-function", "-fno-strict-aliasing"]
SHARED_HEADERS = sorted(str(h.relative_to(ROOT)) for h in (ROOT / "ctplugin/native").glob("*.h"))


def _depends(src: str) -> list[str]:
    own = (ROOT / src).parent
    # an extension at the package root (ctplugin/_hashes.c) depends only on the shared headers
    local = [] if own == ROOT / "ctplugin" else sorted(
        str(h.relative_to(ROOT)) for h in own.rglob("*.h"))
    return local + SHARED_HEADERS


only = {name for name in os.environ.get("CTPLUGIN_ONLY_EXT", "").split(",") if name}
# CTPLUGIN_NO_IFMA=1 builds the kernel without its AVX-512 IFMA lanes (a build flag, not a run-time
# switch: the library never reads the environment), so that an IFMA machine measures the scalar
# paths an AVX2-only CPU takes; the kernel's IFMA_BUILT says which build is installed.
macros = [("CTP_NO_IFMA", "1")] if os.environ.get("CTPLUGIN_NO_IFMA") == "1" else []
ext_modules = [
    Extension(name, sources=[src], include_dirs=["."], extra_compile_args=CFLAGS,
              define_macros=macros, depends=_depends(src))
    for name, src in EXTENSIONS.items()
    if (ROOT / src).exists() and (not only or name in only)
]

setup(ext_modules=ext_modules)
