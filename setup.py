"""Build the native kernels.

Every C extension of the project is listed here; an extension whose source does not exist yet is
skipped, so a partial tree still installs.  Set CTPLUGIN_ONLY_EXT to a comma-separated list of
extension names to rebuild just those (handy while editing one kernel).
"""

import os
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).parent
EXTENSIONS = {
    "ctplugin.secp256k1._native": "ctplugin/secp256k1/_native.c",
    "ctplugin.elements._speedups": "ctplugin/elements/_speedups.c",
}
CFLAGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-function", "-fno-strict-aliasing"]

only = {name for name in os.environ.get("CTPLUGIN_ONLY_EXT", "").split(",") if name}
ext_modules = [
    Extension(name, sources=[src], extra_compile_args=CFLAGS,
              depends=sorted(str(h.relative_to(ROOT)) for h in (ROOT / src).parent.rglob("*.h")))
    for name, src in EXTENSIONS.items()
    if (ROOT / src).exists() and (not only or name in only)
]

setup(ext_modules=ext_modules)
