"""The row kernels of tensor/backend/kernels/rows.py against torch: softmax
with its exp and sum in one pass and the vectorised row max (NaN and
infinities in a row), and layer_norm with its affine step folded into the
one write (each of the four weight/bias combinations), on one thread and on
several."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tests.backends import NUMBA as nb
from tests.backends import share_with_workers


@pytest.fixture(params=["serial", "shared"])
def threads(request, monkeypatch):
    """On this thread alone, or shared with the spinning workers from the first row."""
    share_with_workers(monkeypatch, request.param == "shared")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_rows_with_nan_and_infinities(threads, dtype):
    a = (np.random.default_rng(0).standard_normal((6, 300)) * 5).astype(dtype)
    a[1, 17] = np.nan
    a[2, :] = -np.inf
    a[3, 5] = np.inf
    a[4, :] = 1e30  # large and equal: exp(0) each, 1/300 each
    for fn, ref in ((nb.softmax, torch.softmax), (nb.log_softmax, torch.log_softmax)):
        got, want = fn(a, 1), ref(torch.from_numpy(a), 1).numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_layer_norm_each_affine_combination(threads, affine):
    x = np.random.default_rng(1).standard_normal((40, 7, 30)).astype(np.float32) * 3 + 2
    w = np.random.default_rng(2).standard_normal((7, 30)).astype(np.float32)
    b = np.random.default_rng(3).standard_normal((7, 30)).astype(np.float32)
    weight = w if affine in ("both", "weight") else None
    bias = b if affine in ("both", "bias") else None
    got = nb.layer_norm(x, 2, weight, bias, 1e-5)
    want = F.layer_norm(torch.from_numpy(x), (7, 30),
                        None if weight is None else torch.from_numpy(weight),
                        None if bias is None else torch.from_numpy(bias), 1e-5).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
