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
- a block starts on a cache line (``ALIGN``). malloc gives 16 bytes, so
  where an output landed decided whether each vector store of a kernel
  straddled two cache lines, and the same op ran at two speeds from one
  process to the next. The block is then a view of the bytes that own the
  memory; those bytes are what every view refers to, so their reference
  count is the one that says whether the block is in use;
- at most ``PER_SIZE`` blocks per shape and dtype and ``MAX_BYTES`` in all
  are kept.
"""

from __future__ import annotations

import math
from sys import getrefcount

import numpy as np

from .settings import ALLOCATOR_ALIGN as ALIGN
from .settings import ALLOCATOR_MAX_BYTES as MAX_BYTES
from .settings import ALLOCATOR_MIN_BYTES as MIN_BYTES
from .settings import ALLOCATOR_PER_SIZE as PER_SIZE

# (owner, block) pairs: the bytes that own the memory, and the aligned block in them
_free: dict[tuple, list[tuple[np.ndarray, np.ndarray]]] = {}
_kept = 0
# Bytes referred to only by their pair, their block's ``base``, the loop variable and
# getrefcount's argument: no array handed out uses them.
_UNUSED = 4


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array, reusing a freed block when one fits."""
    blocks = _free.get((shape, dtype))
    if blocks is not None:
        for owner, block in blocks:
            if getrefcount(owner) == _UNUSED:
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
    owner = np.empty(nbytes + ALIGN, np.uint8)
    start = -owner.ctypes.data % ALIGN
    block = owner[start:start + nbytes].view(dtype).reshape(shape)
    blocks.append((owner, block))
    _kept += nbytes
    return block.view()


def clear() -> None:
    """Forget every kept block (the ones still in use stay alive with their arrays)."""
    global _kept
    _free.clear()
    _kept = 0
