"""A small caching allocator for the numba backend's outputs.

A fresh NumPy array of a few megabytes is memory the process has never
touched (or has handed back to the system): the first write to each 4 KB
page traps into the kernel, which finds a page and zeroes it. For a kernel
that streams through memory that costs about as much as the kernel itself.
torch avoids it with a caching allocator, which keeps freed blocks and hands
them out again; this is the same idea, as small as it can be:

- outputs of at least ``MIN_BYTES`` come from *blocks* kept in
  ``_free[(shape, dtype)]`` (smaller ones come from ``np.empty``: malloc
  already reuses small blocks, and there are no pages to fault). Keying by
  the exact shape and dtype makes a hit one dictionary lookup and one view,
  a small share of an op on 1e5 elements; a lookup by size that re-typed and
  reshaped the block cost several times as much, a share such an op notices;
- the caller gets a view of the block, never the block: whatever it does to
  its array's ``shape`` or ``dtype`` attributes, the block stays as kept;
- a block is free again when nothing but this module refers to it. Every
  view NumPy makes of a view keeps a reference to the block that owns the
  memory (its ``.base``), so the block's reference count says whether any
  array, tensor or torch tensor still uses it. No hook on ``Tensor`` is
  needed, and nothing is ever freed too early;
- at most ``PER_SIZE`` blocks per shape and dtype and ``MAX_BYTES`` in all
  are kept.
"""

from __future__ import annotations

import math
from sys import getrefcount

import numpy as np

from .settings import ALLOCATOR_MAX_BYTES as MAX_BYTES
from .settings import ALLOCATOR_MIN_BYTES as MIN_BYTES
from .settings import ALLOCATOR_PER_SIZE as PER_SIZE

_free: dict[tuple, list[np.ndarray]] = {}
_kept = 0
# A block referred to only by its list, the loop variable and getrefcount's argument.
_UNUSED = 3


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array, reusing a freed block when one fits."""
    blocks = _free.get((shape, dtype))
    if blocks is not None:
        for block in blocks:
            if getrefcount(block) == _UNUSED:
                return block.view()
    return _new_block(shape, dtype, blocks)


def _new_block(shape: tuple[int, ...], dtype: np.dtype, blocks: list | None) -> np.ndarray:
    """No free block of this shape and dtype: a new one, kept if there is room."""
    global _kept
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    if blocks is None:
        blocks = _free[(tuple(shape), np.dtype(dtype))] = []
    if len(blocks) >= PER_SIZE or _kept + nbytes > MAX_BYTES:
        return np.empty(shape, dtype)
    block = np.empty(shape, dtype)
    blocks.append(block)
    _kept += nbytes
    return block.view()


def clear() -> None:
    """Forget every kept block (the ones still in use stay alive with their arrays)."""
    global _kept
    _free.clear()
    _kept = 0
