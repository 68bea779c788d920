"""tensor's quantized tensors against torch's: the same integers, parameters and printout."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import tensor
from tests.ch10.qhelpers import ints, twin_quantized


def values_with_ties(scale: float, n: int = 20000, seed: int = 0) -> np.ndarray:
    """Random values, and exact halves of the scale, where the rounding rule shows."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    x[:400] = ((np.arange(400) - 200) + 0.5).astype(np.float32) * np.float32(scale)
    return x


@pytest.mark.parametrize("unsigned", [True, False])
@pytest.mark.parametrize("scale,zero_point", [(0.1, 7), (0.0309, 3), (1 / 3, 0), (0.0123, -3)])
def test_quantize_per_tensor_gives_torchs_integers(unsigned, scale, zero_point):
    if unsigned and zero_point < 0:
        zero_point = 100
    ours, theirs = twin_quantized(values_with_ties(scale), scale, zero_point, unsigned)
    assert np.array_equal(ints(ours), ints(theirs))
    assert ours.dtype is (tensor.quint8 if unsigned else tensor.qint8)
    assert ours.q_scale() == theirs.q_scale() and ours.q_zero_point() == theirs.q_zero_point()
    assert np.array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())


def test_scale_and_zero_point_may_be_tensors_as_in_torch():
    x = values_with_ties(0.1, 500)
    ours = tensor.quantize_per_tensor(
        tensor.from_numpy(x), tensor.tensor(0.1), tensor.tensor(3), tensor.quint8
    )
    theirs = torch.quantize_per_tensor(
        torch.from_numpy(x), torch.tensor(0.1), torch.tensor(3), torch.quint8
    )
    assert ours.q_scale() == theirs.q_scale()  # the float32 0.1, printed 0.10000000149...
    assert np.array_equal(ints(ours), ints(theirs))


def test_quantize_per_channel_gives_torchs_integers():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((4, 3, 5)) * 2).astype(np.float32)
    scales = np.array([0.1, 0.02, 0.05, 0.3])
    zps = np.array([0, 1, -2, 3])
    ours = tensor.quantize_per_channel(
        tensor.from_numpy(x), tensor.from_numpy(scales), tensor.from_numpy(zps), 0, tensor.qint8
    )
    theirs = torch.quantize_per_channel(
        torch.from_numpy(x), torch.from_numpy(scales), torch.from_numpy(zps), 0, torch.qint8
    )
    assert np.array_equal(ints(ours), ints(theirs))
    assert np.array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())
    assert np.array_equal(ours.q_per_channel_scales().numpy(), theirs.q_per_channel_scales())
    assert ours.q_per_channel_zero_points().tolist() == theirs.q_per_channel_zero_points().tolist()
    assert ours.q_per_channel_axis() == theirs.q_per_channel_axis() == 0
    assert repr(ours.qscheme()) == "tensor.per_channel_affine"


@pytest.mark.parametrize("shape", [(2, 3), (200,), (3, 1, 4)])
def test_repr_is_torchs_with_tensor_for_torch(shape):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    ours, theirs = twin_quantized(x, 0.1, 3)
    assert repr(ours) == repr(theirs).replace("torch.", "tensor.")


def test_repr_wraps_its_suffixes_where_torchs_does():
    # The lesson's example: torch keeps ``dtype=torch.quint8`` on the last line
    # (79 characters); ours is a letter longer there and must wrap no earlier.
    x = np.array([[-1.0, -0.3, 0.0, 0.5], [1.3, 2.0, 2.6, 9.0]], np.float32)
    ours, theirs = twin_quantized(x, 0.1, 10)
    assert repr(ours) == repr(theirs).replace("torch.", "tensor.")


def test_per_channel_repr_is_torchs():
    x = np.array([[2.8, -1.5, -0.5], [1.2, 0.0, -1.8]], np.float32)
    scales, zps = np.array([0.1, 0.2]), np.array([0, 1])
    ours = tensor.quantize_per_channel(
        tensor.from_numpy(x), tensor.from_numpy(scales), tensor.from_numpy(zps), 0, tensor.qint8
    )
    theirs = torch.quantize_per_channel(
        torch.from_numpy(x), torch.from_numpy(scales), torch.from_numpy(zps), 0, torch.qint8
    )
    assert repr(ours) == repr(theirs).replace("torch.", "tensor.")


def test_ops_that_move_elements_keep_the_parameters():
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    ours, theirs = twin_quantized(x, 0.05, 10)
    for op in (lambda t, lib: lib.flatten(t, 1), lambda t, lib: t.reshape(6, 4),
               lambda t, lib: t.view(-1), lambda t, lib: t.flatten()):
        a, b = op(ours, tensor), op(theirs, torch)
        assert np.array_equal(ints(a), ints(b))
        assert (a.q_scale(), a.q_zero_point()) == (b.q_scale(), b.q_zero_point())
    assert ours.size() == (2, 3, 4) and ours.dim() == 3 and ours.numel() == 24


def test_an_op_without_a_quantized_kernel_is_refused_by_name():
    ours, _ = twin_quantized(np.ones(4, np.float32), 0.1, 0)
    with pytest.raises(NotImplementedError, match=r"tensor\.exp has no kernel for quantized"):
        tensor.exp(ours)
    with pytest.raises(NotImplementedError, match="dequantize"):
        ours + ours


def test_accessors_refuse_the_wrong_scheme():
    ours, _ = twin_quantized(np.ones(4, np.float32), 0.1, 0)
    with pytest.raises(RuntimeError, match="per-channel"):
        ours.q_per_channel_scales()
    with pytest.raises(ValueError, match="scale must be positive"):
        tensor.quantize_per_tensor(tensor.ones(2), 0.0, 0, tensor.quint8)
    with pytest.raises(TypeError, match="float Tensor"):
        tensor.quantize_per_tensor(tensor.ones(2, dtype=tensor.int64), 0.1, 0, tensor.quint8)


def test_float_tensor_dequantize_is_itself_and_pickling_keeps_everything():
    t = tensor.ones(3)
    assert t.dequantize() is t and not t.is_quantized
    ours, _ = twin_quantized(np.arange(6, dtype=np.float32), 0.5, 2)
    back = pickle.loads(pickle.dumps(ours))
    assert back.is_quantized and back.dtype is tensor.quint8
    assert np.array_equal(ints(back), ints(ours)) and back.q_scale() == 0.5
