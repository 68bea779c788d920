"""Helpers shared by the chapter 10 tests: the same integers in `tensor` and in torch."""

from __future__ import annotations

import numpy as np
import torch

import tensor

torch.backends.quantized.engine = "x86"


def twin_quantized(values: np.ndarray, scale: float, zero_point: int, unsigned: bool = True):
    """A per-tensor quantized tensor in both libraries, from the same float values."""
    ours = tensor.quantize_per_tensor(
        tensor.from_numpy(values), scale, zero_point, tensor.quint8 if unsigned else tensor.qint8
    )
    theirs = torch.quantize_per_tensor(
        torch.from_numpy(values), scale, zero_point, torch.quint8 if unsigned else torch.qint8
    )
    return ours, theirs


def twin_weight(values: np.ndarray):
    """A per-channel symmetric qint8 weight in both libraries (the x86 mapping's weights)."""
    flat = np.abs(values.reshape(values.shape[0], -1)).max(axis=1)
    scales = np.maximum(flat / 127.5, 1e-8).astype(np.float64)
    zps = np.zeros(values.shape[0], dtype=np.int64)
    ours = tensor.quantize_per_channel(
        tensor.from_numpy(values), tensor.from_numpy(scales), tensor.from_numpy(zps), 0,
        tensor.qint8,
    )
    theirs = torch.quantize_per_channel(
        torch.from_numpy(values), torch.from_numpy(scales), torch.from_numpy(zps), 0, torch.qint8
    )
    return ours, theirs


def ints(x) -> np.ndarray:
    """The stored integers of a quantized tensor of either library, as int64."""
    return np.asarray(x.int_repr().numpy(), dtype=np.int64)


def mismatch_fraction(a: np.ndarray, b: np.ndarray) -> tuple[float, int]:
    """Share of differing elements, and the largest difference."""
    diff = np.abs(a - b)
    return float((diff > 0).mean()), int(diff.max(initial=0))
