"""Fill numba's on-disk kernel cache, so that the tests do not compile it silently.

The numba backend compiles a kernel the first time an op meets a dtype (and,
for the threaded path, the first time an output is large enough to be shared
with the worker threads), then keeps the machine code on disk
(``tensor/backend/kernels/__pycache__/kernels-<digest>``, or under
``NUMBA_CACHE_DIR``). Without this step the first test that touches an op pays
for its compilation inside its own time, and a fresh checkout's first run looks
hung. ``scripts/setup.sh`` runs this once per set-up: on an empty cache it
compiles every op family; on a full one each kernel is loaded from disk, which
is what makes the step cheap the second time.

Each op of the op table (``tensor/_ops.py``) runs once per float dtype, on a
small input (one thread) and on one large enough to be split among the
threads, plus the hand-written families: where, clamp, softmax, the norms,
conv2d, the pools, linear and embedding.

    python scripts/warm_kernels.py
"""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np

import tensor
import tensor.nn.functional as F
from tensor._ops import BINARY_OPS, COMPARE_OPS, REDUCE_OPS, UNARY_OPS
from tensor.backend.kernels._cache import keyed_by_every_kernel_source

# More than the backend's SMALL (smaller inputs go to NumPy), less than SPIN_MIN.
SMALL_SHAPE = (2, 3, 8, 8)
# Past _SPLIT, so the output is shared with the worker threads.
LARGE_SHAPE = (4, 4, 128, 128)
INT_ONLY = {"bitwise_and", "bitwise_or"}


def _families(x: tensor.Tensor) -> None:
    """Every elementwise and reduction op once on ``x`` (positive, so log and pow are defined)."""
    for op in UNARY_OPS:
        F.gelu(x) if op == "gelu" else getattr(tensor, op)(x)
    for op in BINARY_OPS + COMPARE_OPS:
        if op in INT_ONLY:
            continue
        fn = getattr(tensor, op)
        fn(x, x)  # two tensors
        fn(x, 2.0)  # a tensor and a number
        fn(x, x[:, :1])  # broadcast: a strided operand
    for op in REDUCE_OPS:
        getattr(x, op)()
        getattr(x, op)(-1)
        getattr(x, op)(1)
    x.argmax(1)
    tensor.where(x > 1.5, x, x)
    tensor.clamp(x, min=0.5, max=1.5)
    tensor.softmax(x, -1)
    tensor.log_softmax(x, -1)
    y = x.clone()
    y.add_(x)
    y.mul_(2.0)
    F.relu(y, inplace=True)


def _nn(x: tensor.Tensor, dtype: np.dtype) -> None:
    """The layers of the lessons' models once on ``x``, of shape (N, C, H, W)."""
    c, w = x.shape[1], x.shape[3]

    def ones(*shape: int) -> tensor.Tensor:
        return tensor.from_numpy(np.ones(shape, dtype))

    v = ones(c)
    F.conv2d(x, ones(4, c, 3, 3), ones(4), 1, 1)
    F.batch_norm(x, v, v, v, v, False, 0.1, 1e-5)
    F.layer_norm(x, (w,))
    F.max_pool2d(x, 2)
    F.avg_pool2d(x, 2)
    F.adaptive_avg_pool2d(x, 1)
    F.linear(x, ones(5, w), ones(5))
    tensor.matmul(x, x)
    F.embedding(tensor.from_numpy(np.arange(8, dtype=np.int64)), ones(10, w))


def _compiled() -> set[Path]:
    """The machine-code files in the kernels' cache folder (one per compiled signature)."""
    with keyed_by_every_kernel_source():
        folder = Path(numba.config.CACHE_DIR)
    return set(folder.rglob("*.nbc")) if folder.is_dir() else set()


def warm() -> str:
    """Run every family once; say how many kernels were compiled and how many loaded."""
    before = _compiled()
    tensor.backend.set_backend("numba")
    for dtype in (np.float32, np.float64):
        for shape in (SMALL_SHAPE, LARGE_SHAPE):
            x = tensor.from_numpy(np.full(shape, 1.25, dtype))
            _families(x)
            _nn(x, np.dtype(dtype))
    after = _compiled()
    new = len(after - before)
    if new == 0:
        return f"all {len(after)} kernels were already compiled"
    return f"compiled {new} kernels ({len(after)} in the cache)"


if __name__ == "__main__":
    print(warm())
