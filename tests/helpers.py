"""Helpers every chapter's tests share: compare a tensor.Tensor with torch's
answer, move values and weights between the two libraries.

Chapter-specific helpers stay beside their tests (tests/ch00/tensor_helpers.py
makes the data and views, tests/ch04/ch04_models.py the twin programs); what
more than one chapter needs lives here, once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import tensor


def dtype_name(dt: Any) -> str:
    """``tensor.float32`` and ``torch.float32`` both give ``"float32"``."""
    return str(dt).split(".")[-1]


def check(actual: Any, expected: torch.Tensor, *, exact: bool = False, equal_nan: bool = True,
          rtol: float | None = None, atol: float | None = None,
          contiguous: bool = False) -> None:
    """``actual`` is a tensor.Tensor with torch's shape, dtype and values.

    ``exact`` asks for equal values; ``contiguous`` also asks that the result be
    contiguous wherever torch's is (layers and functional ops promise that)."""
    assert isinstance(actual, tensor.Tensor), type(actual)
    expected = expected.detach()
    assert tuple(actual.shape) == tuple(expected.shape), (actual.shape, expected.shape)
    assert dtype_name(actual.dtype) == dtype_name(expected.dtype), (actual.dtype, expected.dtype)
    if contiguous and expected.is_contiguous() and expected.numel() > 1:
        assert actual.is_contiguous(), f"strides {actual.stride()}, torch's {expected.stride()}"
    if exact:
        rtol = atol = 0.0
    tensor.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)


def to_torch(value: Any) -> Any:
    """A torch copy of a tensor.Tensor (other values unchanged, containers walked)."""
    if isinstance(value, tensor.Tensor):
        return torch.from_numpy(np.array(value.numpy()))
    if isinstance(value, (tuple, list)):
        return type(value)(to_torch(v) for v in value)
    if isinstance(value, dict):
        return {k: to_torch(v) for k, v in value.items()}
    return value


def copy_weights(source: Any, target: Any) -> None:
    """Give ``target`` the parameter and buffer values of ``source``, a module of
    the other library (or the same one). tensor's ``load_state_dict`` takes torch
    tensors as they are; torch's needs torch copies of ours."""
    state = source.state_dict()
    if isinstance(target, torch.nn.Module):
        state = {k: to_torch(v) for k, v in state.items()}
    target.load_state_dict(state)
