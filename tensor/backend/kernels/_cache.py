"""Where the compiled kernels are cached on disk: a folder keyed by every kernel source.

numba checks only a kernel's own file before loading it from the cache, so a
kernel that inlines a scalar function of another file would keep stale code
after that file changes. A cache folder named after a digest of all the
kernel files (this folder's and the fast layer's) makes any edit start a
fresh cache. The name also says whether the fast layer's float32 maths was
registered (``scalar.FLOAT32``): the same kernel source compiles to
different code with it and without it. numba reads the folder when a kernel
is decorated, so it is set only while a kernel module imports or a kernel
factory builds a kernel.
"""

import contextlib
import hashlib
import os
from pathlib import Path

import numba

from . import scalar

_HERE = Path(__file__).parent
# The files that hold kernels, or functions that kernels inline.
_FAST_KERNELS = ("amx", "int8_simd", "math32", "qgemm", "spin", "tasks", "winograd_kernels")
_SOURCES = [*sorted(_HERE.glob("*.py")),
            *(_HERE.parent / "fast" / f"{name}.py" for name in _FAST_KERNELS)]


def _sources_digest() -> str:
    digest = hashlib.sha256()
    for path in _SOURCES:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


_DIGEST = _sources_digest()


@contextlib.contextmanager
def keyed_by_every_kernel_source():
    """numba's cache folder set to ``<cache>/kernels-<digest>-<maths>`` for the ``with`` body."""
    base = os.environ.get("NUMBA_CACHE_DIR") or str(_HERE / "__pycache__")
    maths = "fast" if scalar.FLOAT32 else "libm"
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = os.path.join(base, f"kernels-{_DIGEST}-{maths}")
    try:
        yield
    finally:
        numba.config.CACHE_DIR = previous
