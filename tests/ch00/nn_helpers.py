"""Shared helpers for the tensor.nn tests: move data between tensor and torch."""

import numpy as np
import torch

import tensor
from tests.helpers import check as shared_check
from tests.helpers import copy_weights


def ours(array_or_torch) -> tensor.Tensor:
    """A tensor.Tensor holding a copy of a NumPy array or torch tensor."""
    if isinstance(array_or_torch, torch.Tensor):
        array_or_torch = array_or_torch.detach().numpy()
    return tensor.Tensor._from_array(np.array(array_or_torch))


def theirs(t: tensor.Tensor) -> torch.Tensor:
    """A torch tensor holding a copy of a tensor.Tensor."""
    return torch.from_numpy(np.array(t._array))


def check(actual: tensor.Tensor, expected: torch.Tensor, tol: float = 1e-5) -> None:
    """Same shape, same dtype, contiguous where torch is, same values (within tol)."""
    shared_check(actual, expected, rtol=tol, atol=tol, contiguous=True)


def twin(our_module, torch_module):
    """Give ``our_module`` the weights and buffers of ``torch_module``; return both."""
    copy_weights(torch_module, our_module)
    our_module.train(torch_module.training)
    return our_module, torch_module


def randn(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)
