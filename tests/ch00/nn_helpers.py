"""Shared helpers for the tensor.nn tests: move data between tensor and torch."""

import numpy as np
import torch

import tensor


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
    assert isinstance(actual, tensor.Tensor)
    expected = expected.detach()
    assert tuple(actual.shape) == tuple(expected.shape)
    assert str(actual.dtype).replace("tensor.", "") == str(expected.dtype).replace("torch.", "")
    if expected.is_contiguous() and expected.numel() > 1:
        assert actual.is_contiguous(), f"strides {actual.stride()}, torch's {expected.stride()}"
    np.testing.assert_allclose(actual._array, expected.numpy(), rtol=tol, atol=tol)


def twin(our_module, torch_module):
    """Give ``our_module`` the weights and buffers of ``torch_module``; return both."""
    our_module.load_state_dict(torch_module.state_dict())
    our_module.train(torch_module.training)
    return our_module, torch_module


def randn(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)
