"""Matrix products for the numba backend: BLAS on one thread, split by us.

OpenBLAS parallelises each product over its own threads, which wait for each
other at the end of every block of work by spinning. On a machine whose
cores are busy with something else (another process, numba's threads, a
second library) one of them is often not running, and the others spin until
the scheduler brings it back: on a two-core machine with a second process
busy, a (256, 1024) @ (1024, 196) product ran several times slower on two
OpenBLAS threads than on one.

So the backend asks OpenBLAS for one thread (``single_threaded_blas``) and
splits a large product itself into independent parts (rows of the result,
or columns: whichever splits the larger operand), each a BLAS call of its own on one of
the backend's Python threads (NumPy releases the GIL during a product). A
part that starts late delays only itself, and on an idle machine the split
is as fast as OpenBLAS's own threads.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np

from . import settings

_configured = False


def single_threaded_blas() -> None:
    """Ask NumPy's OpenBLAS for one thread, once (``TENSOR_BLAS_THREADS`` overrides)."""
    global _configured
    if _configured:
        return
    _configured = True
    wanted = settings.BLAS_THREADS
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return  # not Linux: leave BLAS as it is
    for path in paths:
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                     "openblas_set_num_threads64_", "openblas_set_num_threads"):
            if hasattr(lib, name):
                getattr(lib, name)(wanted)
                break


def matmul_into(a: np.ndarray, b: np.ndarray, out: np.ndarray,
                ranges: Callable[[Callable[[int, int], None], int, int], None],
                threads: int, bias: np.ndarray | None = None) -> None:
    """``np.matmul(a, b, out=out)`` in up to ``threads`` independent parts, then
    ``out += bias`` (a Linear's bias, along the last dim) if one is given.

    ``a`` is (..., M, K) and ``b`` (..., K, N), both at least 2-d.
    ``ranges(run, n, parts)`` calls ``run(lo, hi)`` on ``parts`` ranges of [0, n).
    Each part adds the bias to its own piece of ``out`` right after its
    product, while that piece is still in its core's cache: one add over the
    whole output afterwards ran on one thread and read the output from
    memory a second time, a cost a ViT block's four Linears noticed.
    """
    single_threaded_blas()
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    work = out.size * k

    def rows(lo: int, hi: int) -> None:
        part = out[..., lo:hi, :]
        np.matmul(a[..., lo:hi, :], b, out=part)
        if bias is not None:
            np.add(part, bias, out=part)

    def columns(lo: int, hi: int) -> None:
        part = out[..., lo:hi]
        np.matmul(a, b[..., lo:hi], out=part)
        if bias is not None:
            np.add(part, bias[lo:hi], out=part)

    if threads < 2 or work < settings.BLAS_SPLIT_MIN:
        rows(0, m)
    # Every part reads the whole of the operand that is not split, so split the larger one:
    # rows of the result split a, columns split b. (A Linear at batch 1 has a small
    # activation a and a large weight b; a 1x1 convolution on a large image the reverse.)
    # Summed over both parts, the other way reads more memory, and measured slower.
    elif m >= 16 * threads and (m * k >= k * n or n < 16 * threads):
        ranges(rows, m, threads)
    elif n >= 16 * threads:
        ranges(columns, n, threads)
    else:
        rows(0, m)
