"""A small caching allocator for the numba backend's outputs.

A fresh NumPy array of a few megabytes is memory the process has never
touched (or has handed back to the system): the first write to each 4 KB
page traps into the kernel, which finds a page and zeroes it. For a kernel
that streams through memory that costs about as much as the kernel itself.
torch avoids it with a caching allocator, which keeps freed blocks and hands
them out again; this is the same idea, as small as it can be:

- outputs of at least ``MIN_BYTES`` are views of *blocks* kept in
  ``_free[nbytes]`` (smaller ones come from ``np.empty``: malloc already
  reuses small blocks, and there are no pages to fault);
- a block is free again when nothing but this module refers to it. Every
  view NumPy makes of a view keeps a reference to the block that owns the
  memory (its ``.base``), so the block's reference count says whether any
  array, tensor or torch tensor still uses it. No hook on ``Tensor`` is
  needed, and nothing is ever freed too early;
- at most ``PER_SIZE`` blocks per size and ``MAX_BYTES`` in all are kept.
"""

from __future__ import annotations

import math
import sys

import numpy as np

MIN_BYTES = 1 << 18  # 256 KB
MAX_BYTES = 1 << 28  # 256 MB kept at most
PER_SIZE = 4
_free: dict[int, list[np.ndarray]] = {}
_kept = 0
# A block referred to only by its list, the loop variable and getrefcount's argument.
_UNUSED = 3


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array, reusing a freed block when one fits."""
    global _kept
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    blocks = _free.get(nbytes)
    if blocks is None:
        blocks = _free[nbytes] = []
    for block in blocks:
        if sys.getrefcount(block) == _UNUSED:
            return block.view(dtype).reshape(shape)
    if len(blocks) >= PER_SIZE or _kept + nbytes > MAX_BYTES:
        return np.empty(shape, dtype)
    block = np.empty(nbytes, np.uint8)
    blocks.append(block)
    _kept += nbytes
    return block.view(dtype).reshape(shape)


def clear() -> None:
    """Forget every kept block (the ones still in use stay alive with their arrays)."""
    global _kept
    _free.clear()
    _kept = 0
