"""tensor.testing.assert_close agrees with torch.testing.assert_close on pass and fail."""

import numpy as np
import pytest
import torch

import tensor
from tensor.testing import assert_close


def _torch_passes(actual, expected, **kwargs):
    try:
        torch.testing.assert_close(torch.as_tensor(actual), torch.as_tensor(expected), **kwargs)
    except AssertionError:
        return False
    return True


def _ours_passes(actual, expected, **kwargs):
    try:
        assert_close(
            tensor.from_numpy(np.array(actual)), tensor.from_numpy(np.array(expected)), **kwargs
        )
    except AssertionError:
        return False
    return True


@pytest.mark.parametrize("delta", [0.0, 1e-7, 5e-6, 9e-6, 2e-5, 1e-3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [1.0, 100.0, 1e-3])
def test_default_tolerances_agree_with_torch(delta, dtype, scale):
    expected = (np.array([1.0, -2.0, 3.0]) * scale).astype(dtype)
    actual = (expected + np.array([0.0, delta, 0.0])).astype(dtype)
    assert _ours_passes(actual, expected) == _torch_passes(actual, expected)


def test_special_values_and_integers_agree_with_torch():
    cases = [
        (np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), {}),
        (np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), {"equal_nan": True}),
        (np.array([np.inf, 1.0]), np.array([np.inf, 1.0]), {}),
        (np.array([np.inf]), np.array([-np.inf]), {}),
        (np.array([1, 2]), np.array([1, 3]), {}),
        (np.array([1, 2]), np.array([1, 2]), {}),
        (np.array([True, False]), np.array([True, True]), {}),
        (np.array([1.0, 2.0]), np.array([1.1, 2.0]), {"rtol": 0.2, "atol": 0.0}),
        (np.array([1.0, 2.0]), np.array([1.1, 2.0]), {"rtol": 0.0, "atol": 0.05}),
    ]
    for actual, expected, kwargs in cases:
        assert _ours_passes(actual, expected, **kwargs) == _torch_passes(
            actual, expected, **kwargs
        ), (actual, expected, kwargs)


def test_failure_message_names_the_greatest_difference():
    actual = tensor.tensor([[1.0, 2.0], [3.0, 4.0]])
    expected = tensor.tensor([[1.0, 2.5], [3.0, 4.0]])
    with pytest.raises(AssertionError) as info:
        assert_close(actual, expected)
    message = str(info.value)
    assert message.startswith("Tensor-likes are not close!")
    assert "Mismatched elements: 1 / 4 (25.0%)" in message
    assert "Greatest absolute difference: 0.5 at index (0, 1) (up to 1e-05 allowed)" in message
    assert "Greatest relative difference: 0.2 at index (0, 1) (up to 1.3e-06 allowed)" in message


def test_accepts_numpy_and_torch_and_checks_dtype_and_shape():
    ours = tensor.tensor([1.0, 2.0])
    assert_close(ours, torch.tensor([1.0, 2.0]))
    assert_close(ours, np.array([1.0, 2.0], dtype=np.float32))
    assert_close(torch.tensor([1.0, 2.0]), ours)
    with pytest.raises(AssertionError, match="dtype.*tensor.float32 != tensor.float64"):
        assert_close(ours, torch.tensor([1.0, 2.0], dtype=torch.float64))
    assert_close(ours, np.array([1.0, 2.0]), check_dtype=False)
    with pytest.raises(
        AssertionError, match=r"shape.*tensor.Size\(\[2\]\) != tensor.Size\(\[3\]\)"
    ):
        assert_close(ours, tensor.ones(3))
    with pytest.raises(ValueError, match="rtol"):
        assert_close(ours, ours, atol=1.0)
    with pytest.raises(AssertionError, match="custom"):
        assert_close(ours, ours + 1, msg="custom")


def _messages(actual, expected, **kwargs):
    """Our failure message and torch's for the same values, torch read as tensor."""
    found = []
    for lib in (tensor, torch):
        with pytest.raises(AssertionError) as info:
            lib.testing.assert_close(lib.tensor(actual), lib.tensor(expected), **kwargs)
        found.append(str(info.value).replace("torch.", "tensor."))
    return found


@pytest.mark.parametrize(
    "actual, expected",
    [
        ([1.0, 2.0], [1.0, float("nan")]),
        ([float("nan"), 5.0], [1.0, 2.0]),
        ([1.0, float("inf")], [1.0, float("-inf")]),
        ([[1.0, 2.0], [float("nan"), 3.0]], [[1.0, 2.5], [1.0, 3.0]]),
    ],
)
def test_nan_and_inf_differences_are_reported_as_torch_reports_them(actual, expected):
    ours, theirs = _messages(actual, expected)
    assert ours == theirs


@pytest.mark.parametrize(
    "actual, expected",
    [(2.0, 1.0), (float("nan"), 1.0), (1.0, float("inf")), (2, 1), (True, False)],
)
def test_zero_dim_mismatch_is_worded_as_scalars_like_torch(actual, expected):
    ours, theirs = _messages(actual, expected)
    assert ours.startswith("Scalars are not")
    assert ours == theirs


def test_msg_replaces_the_message_or_rewrites_it_when_callable():
    ours, theirs = _messages([1.0], [2.0], msg="custom")
    assert ours == theirs == "custom"
    ours, theirs = _messages([1.0], [2.0], msg=lambda detail: "wrapped: " + detail.splitlines()[0])
    assert ours == theirs == "wrapped: Tensor-likes are not close!"
