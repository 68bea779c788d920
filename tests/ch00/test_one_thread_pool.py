"""The fast layer runs its work on one set of threads, the spinning workers: the
pools, the strided reductions, argmax and embedding, which the kernels layer
runs on numba's own thread pool (``prange``), are tasks for the workers here,
and give the same answers shared or on one thread."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tensor.backend import reference as ref
from tests.backends import NUMBA as nb
from tests.backends import share_with_workers

pytestmark = pytest.mark.fast_layer  # the fast layer's own machinery

ROOT = Path(__file__).resolve().parents[2]

# Every op family the kernels layer runs on prange, at sizes where it did, then
# which of numba's parallel kernels this process has compiled or loaded: numba
# does that on a kernel's first call, so a kernel never called has none.
SCRIPT = """
import gc
import numpy as np
from numba.core.registry import CPUDispatcher
import tensor
import tensor.nn.functional as F
from tensor.backend.kernels import reduce as rd


def parallel_kernels_run():
    return sorted(d.py_func.__name__ for d in gc.get_objects()
                  if issubclass(type(d), CPUDispatcher) and d.targetoptions.get("parallel")
                  and d.overloads)


x = tensor.randn(4, 64, 56, 56)
F.max_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 3, 2, 1), F.adaptive_avg_pool2d(x, (1, 1))
y = tensor.randn(1000, 1000)
for op in (y.sum, y.mean, y.amax, y.amin, y.argmax):
    op(0)
y.argmax(1), y.T.argmax(), y.T.sum(1), y[:, ::2].argmax(1)
F.embedding(tensor.tensor(np.random.default_rng(0).integers(0, 1000, (64, 200))), y)
print(parallel_kernels_run())
a = np.ones((1000, 1000), np.float32)
rd.reduce_strided(0, np.empty(1000, np.float32), *tensor.backend.kernels.backend.split_dims(a, [0]))
print(parallel_kernels_run())  # the kernels layer's own call: seen
"""


def test_no_prange_kernel_runs_with_the_fast_layer():
    env = dict(os.environ, TENSOR_FAST="1", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    fast, then = done.stdout.strip().splitlines()[-2:]
    assert fast == "[]"
    assert then == "['reduce_strided']"


def images(dtype=np.float32):
    return np.random.default_rng(1).standard_normal((2, 5, 17, 13)).astype(dtype)


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pools_shared_or_not(shared, dtype, monkeypatch):
    share_with_workers(monkeypatch, shared)
    x = images(dtype)
    x[0, 1, 3, 4] = np.nan
    for args in (((3, 3), (2, 2), (1, 1), (1, 1), False), ((2, 3), (1, 2), (0, 1), (2, 1), True)):
        np.testing.assert_array_equal(nb.max_pool2d(x, *args), ref.max_pool2d(x, *args))
    for args in (((3, 3), (2, 2), (1, 1), False, False), ((2, 3), (2, 1), (1, 0), True, True)):
        np.testing.assert_allclose(nb.avg_pool2d(x, *args), ref.avg_pool2d(x, *args),
                                   rtol=1e-5, atol=1e-6)
    for size in ((1, 1), (5, 4), (17, 13)):
        np.testing.assert_allclose(nb.adaptive_avg_pool2d(x, size),
                                   ref.adaptive_avg_pool2d(x, size), rtol=1e-5, atol=1e-6)
    view = x[:, :, ::2]  # not contiguous
    np.testing.assert_array_equal(nb.max_pool2d(view, (2, 2), (2, 2), (0, 0), (1, 1), False),
                                  ref.max_pool2d(view, (2, 2), (2, 2), (0, 0), (1, 1), False))


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_strided_reductions_and_argmax_shared_or_not(shared, dtype, monkeypatch):
    share_with_workers(monkeypatch, shared)
    y = np.random.default_rng(2).standard_normal((30, 40, 7)) * (100 if dtype == np.int64 else 1)
    y = y.astype(dtype)
    y[3, 5, 1] = y[3, 9, 1]  # a tie: the first wins
    for a in (y, y.transpose(2, 0, 1), y[:, ::3]):
        for dims in ((0,), (1,), (0, 2), (2, 0)):
            for op in ("sum", "amax", "amin", "mean") if dtype != np.int64 else ("sum", "amax"):
                np.testing.assert_allclose(nb.reduce(op, a, dims, False),
                                           ref.reduce(op, a, dims, False), rtol=1e-5, atol=1e-4)
        for dim in (0, 1, 2, None):
            np.testing.assert_array_equal(nb.argmax(a, dim, False), ref.argmax(a, dim, False))
    if dtype != np.int64:
        y[4, 7, 2] = np.nan
        np.testing.assert_array_equal(nb.argmax(y, 2, False), ref.argmax(y, 2, False))
        np.testing.assert_array_equal(nb.argmax(y, 0, False), ref.argmax(y, 0, False))
        np.testing.assert_array_equal(nb.reduce("amax", y, (0,), False),
                                      ref.reduce("amax", y, (0,), False))


@pytest.mark.parametrize("shared", [False, True])
def test_embedding_shared_or_not(shared, monkeypatch):
    share_with_workers(monkeypatch, shared)
    weight = np.random.default_rng(3).standard_normal((50, 8)).astype(np.float32)
    indices = np.random.default_rng(4).integers(0, 50, (6, 9)).astype(np.int32)
    np.testing.assert_array_equal(nb.embedding(indices, weight), weight[indices])
