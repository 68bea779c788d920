"""Helpers for the tensor core tests: the same data and views in `tensor` and in torch."""

import numpy as np
import torch

import tensor

RNG = np.random.default_rng(1234)

NP_DTYPES = {
    "float32": np.float32,
    "float64": np.float64,
    "int32": np.int32,
    "int64": np.int64,
    "bool": np.bool_,
}


def data(shape, dtype="float32", low=-3.0, high=3.0):
    """Random NumPy data of a dtype name; ints avoid zero so that division is defined."""
    if dtype == "bool":
        return RNG.random(shape) > 0.5
    if dtype in ("int32", "int64"):
        values = RNG.integers(1, 6, shape) * RNG.choice([-1, 1], shape)
        return values.astype(NP_DTYPES[dtype])
    return RNG.uniform(low, high, shape).astype(NP_DTYPES[dtype])


def pair(array):
    """(ours, theirs): a tensor.Tensor and a torch.Tensor holding copies of `array`."""
    return tensor.from_numpy(np.array(array, copy=True)), torch.from_numpy(
        np.array(array, copy=True)
    )


# Layouts a tensor can have: each takes a base shape and returns (make_base_shape, view_fn)
# such that view_fn(base) has the requested shape. The same view_fn works on both libraries.
def layouts(shape):
    """Ways to get a tensor of `shape`: contiguous, permuted, sliced with a step, expanded."""
    shape = tuple(shape)
    out = {"contiguous": (shape, lambda x: x)}
    if len(shape) >= 2:
        rev = tuple(reversed(shape))
        dims = tuple(range(len(shape) - 1, -1, -1))
        out["permuted"] = (rev, lambda x, dims=dims: x.permute(*dims))
    if len(shape) >= 1:
        doubled = (shape[0] * 2,) + shape[1:]
        out["sliced"] = (doubled, lambda x: x[::2])
        if shape[0] != 1:
            ones = (1,) + shape[1:]
            out["expanded"] = (ones, lambda x, s=shape: x.expand(*s))
    return out


def views(shape, dtype="float32"):
    """Yield (name, ours, theirs) for every layout of `shape`."""
    for name, (base_shape, fn) in layouts(shape).items():
        ours, theirs = pair(data(base_shape, dtype))
        yield name, fn(ours), fn(theirs)
