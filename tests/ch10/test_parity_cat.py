"""``cat`` (torch's ``_get_cat_config``): its inputs and output share the first input's
observer, and the int8 ``cat`` joins the integers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tensor
from minifx.quantization import convert_fx, get_default_qconfig_mapping, prepare_fx
from tests.ch10.parity_models import copy_weights, inception_like
from tests.ch10.qhelpers import ints, twin_quantized
from tests.ch10.torch_parity import (
    assert_converted_equal,
    assert_observers_equal,
    assert_prepared_equal,
    output_steps,
    quantize_both,
)

SHAPE = (2, 3, 12, 12)


def _model():
    torch.manual_seed(0)
    return inception_like(torch).eval()


@pytest.fixture(scope="module")
def both():
    return quantize_both(_model(), SHAPE, count=3)


def test_prepared_graph_and_shared_observers_match_torch(both):
    assert_prepared_equal(both)
    ours, _ = both["groups"]
    assert max(len(group) for group in ours) == 4  # three branch outputs and the cat's


def test_observers_match_torch(both):
    assert_observers_equal(both)


def test_converted_graph_and_qparams_match_torch(both):
    assert_converted_equal(both)


def test_outputs_within_two_steps_of_torch(both):
    assert output_steps(both) <= 2.0001


def test_cat_kernel_gives_torchs_integers():
    """Same qparams: the integers joined; different ones: the others brought to the first's."""
    rng = np.random.default_rng(0)
    a = rng.normal(0, 1, (2, 3, 4)).astype(np.float32)
    b = rng.normal(0, 2, (2, 5, 4)).astype(np.float32)
    ours_a, theirs_a = twin_quantized(a, 0.02, 100)
    for scale, zero_point in ((0.02, 100), (0.05, 90)):
        ours_b, theirs_b = twin_quantized(b, scale, zero_point)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's notice for different qparams
            expected = torch.cat([theirs_a, theirs_b], 1)
        actual = tensor.cat([ours_a, ours_b], 1)
        assert (actual.q_scale(), actual.q_zero_point()) == (0.02, 100)
        np.testing.assert_array_equal(ints(actual), ints(expected))


def test_tensor_model_quantizes_as_torch_does(both):
    ours = inception_like(tensor)
    copy_weights(_model(), ours)
    prepared = prepare_fx(ours.eval(), get_default_qconfig_mapping(), (tensor.zeros(*SHAPE),))
    for batch in both["batches"]:
        prepared(tensor.from_numpy(batch.numpy()))
    converted = convert_fx(prepared)
    _, torch_converted = both["converted"]
    scale = torch_converted.head.scale
    for batch in both["batches"]:
        mine = converted(tensor.from_numpy(batch.numpy())).numpy()
        assert np.abs(mine - torch_converted(batch).numpy()).max() <= 2.0001 * scale
