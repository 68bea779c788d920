"""The backend switch: names, errors, and the interface every backend offers."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tensor
from tensor import backend

INTERFACE = [
    "unary",
    "binary",
    "binary_same_shape",
    "binary_scalar",
    "compare",
    "where",
    "clamp",
    "reduce",
    "argmax",
    "softmax",
    "log_softmax",
    "matmul",
    "linear",
    "conv2d",
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "batch_norm",
    "layer_norm",
    "embedding",
]


def test_numpy_is_always_available_and_names_are_known():
    assert "numpy" in backend.available()
    assert set(backend.available()) <= {"numpy", "numba"}
    with pytest.raises(ValueError, match="unknown tensor backend 'cuda'"):
        backend.set_backend("cuda")


@pytest.mark.parametrize("name", backend.available())
def test_every_backend_offers_the_whole_interface(name):
    previous = backend.get_backend()
    backend.set_backend(name)
    try:
        assert backend.get_backend() == name
        module = backend.ops()
        for attr in INTERFACE:
            assert callable(getattr(module, attr)), attr
        assert module.UNARY_OPS == (
            "neg",
            "abs",
            "exp",
            "log",
            "sqrt",
            "rsqrt",
            "sigmoid",
            "tanh",
            "relu",
            "gelu",
        )
        assert set(module.REDUCE_OPS) == {"sum", "mean", "amax", "amin"}
        assert (tensor.ones(2) + 1).tolist() == [2.0, 2.0]
    finally:
        backend.set_backend(previous)


def test_environment_variable_chooses_the_default():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, TENSOR_BACKEND="numpy", PYTHONPATH=root)
    out = subprocess.run(
        [sys.executable, "-c", "import tensor; print(tensor.backend.get_backend())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    assert out.stdout.strip() == "numpy"


def test_import_tensor_does_not_import_torch():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = "import sys, tensor; tensor.ones(2) + 1; print('torch' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=root),
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reference_softmax_against_torch(dtype):
    """The NumPy reference's softmax (exercise ch00.5): torch's values along any dim,
    the input's shape and dtype, no overflow on large values, a copy when empty."""
    import torch

    from tensor.backend import reference

    rng = np.random.default_rng(3)
    for a in (rng.standard_normal((3, 4, 5)).astype(dtype) * 4,
              np.array([[1000.0, 999.0, -1000.0], [0.0, 1.0, 2.0]], dtype),
              rng.standard_normal((2, 5)).astype(dtype).T):
        for dim in range(-a.ndim, a.ndim):
            ours = reference.softmax(a, dim)
            theirs = torch.softmax(torch.from_numpy(np.ascontiguousarray(a)), dim).numpy()
            assert ours.shape == a.shape and ours.dtype == a.dtype
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)
    empty = np.zeros((2, 0), dtype)
    result = reference.softmax(empty, 1)
    assert result.shape == (2, 0) and result.dtype == dtype and result is not empty


@pytest.mark.parametrize("values", [[[1000.0, 0.0, -5.0]], [[7.0]], [[-1000.0, -1001.0]]],
                         ids=["large", "one-value", "large-negative"])
def test_reference_softmax_is_stable_on_extreme_rows(values):
    import torch

    from tensor.backend import reference

    a = np.array(values, np.float32)
    ours = reference.softmax(a, 1)
    np.testing.assert_allclose(ours, torch.softmax(torch.from_numpy(a), 1).numpy(), rtol=1e-6)
    empty = np.zeros((3, 0), np.float32)  # nothing along dim: no maximum to shift by
    assert reference.softmax(empty, 1).shape == (3, 0)
