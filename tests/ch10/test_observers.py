"""Observers and QConfigMapping against torch.ao.quantization's."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from torch.ao.quantization import observer as torch_observer

import tensor
from minifx.quantization import (
    HistogramObserver,
    MinMaxObserver,
    PerChannelMinMaxObserver,
    QConfig,
    QConfigMapping,
    get_default_qconfig_mapping,
)

pytestmark = [
    # torch's notice, for its own observers, that reduce_range is deprecated
    pytest.mark.filterwarnings("ignore:Please use quant_min and quant_max"),
]


def batches(kind: str, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    raw = [rng.standard_normal((4, 16, 8, 8)).astype(np.float32) * s + m
           for s, m in [(1, 0), (2, 0.5), (0.5, -1)]]
    if kind == "one":
        return raw[:1]
    if kind == "relu":  # one-sided, like the output of a ReLU
        return [np.maximum(b, 0) for b in raw]
    if kind == "negative":  # below zero only: the range is widened up to 0
        return [-np.abs(b) - 0.5 for b in raw]
    if kind == "outliers":
        out = [b.copy() for b in raw]
        out[1].reshape(-1)[:3] = [25.0, -18.0, 40.0]
        return out
    return raw


def run_both(ours, theirs, data):
    for b in data:
        ours(tensor.from_numpy(b))
        theirs(torch.from_numpy(b))
    return ours.calculate_qparams(), theirs.calculate_qparams()


CASES = [
    (MinMaxObserver, torch_observer.MinMaxObserver, {}),
    (MinMaxObserver, torch_observer.MinMaxObserver, {"reduce_range": True}),
    (MinMaxObserver, torch_observer.MinMaxObserver,
     {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}),
    (MinMaxObserver, torch_observer.MinMaxObserver, {"quant_min": 0, "quant_max": 15}),
    (MinMaxObserver, torch_observer.MinMaxObserver, {"qscheme": "per_tensor_symmetric"}),
    (MinMaxObserver, torch_observer.MinMaxObserver,
     {"dtype": "quint8", "qscheme": "per_tensor_symmetric"}),
]


def _kwargs(kwargs, lib):
    return {k: getattr(lib, v) if isinstance(v, str) else v for k, v in kwargs.items()}


@pytest.mark.parametrize("kind", ["one", "many", "relu", "outliers", "negative"])
@pytest.mark.parametrize("ours_cls,theirs_cls,kwargs", CASES)
def test_minmax_qparams_equal_torchs(ours_cls, theirs_cls, kwargs, kind):
    (scale, zp), (their_scale, their_zp) = run_both(
        ours_cls(**_kwargs(kwargs, tensor)), theirs_cls(**_kwargs(kwargs, torch)), batches(kind)
    )
    assert scale == float(their_scale) and zp == int(their_zp)


@pytest.mark.parametrize("kind", ["one", "many", "relu", "outliers"])
@pytest.mark.parametrize("scheme", ["per_channel_symmetric", "per_channel_affine"])
def test_per_channel_qparams_equal_torchs(kind, scheme):
    kwargs = {"dtype": "qint8", "qscheme": scheme, "ch_axis": 1}
    (scales, zps), (their_scales, their_zps) = run_both(
        PerChannelMinMaxObserver(**_kwargs(kwargs, tensor)),
        torch_observer.PerChannelMinMaxObserver(**_kwargs(kwargs, torch)),
        batches(kind),
    )
    assert np.array_equal(scales, their_scales.numpy())
    assert np.array_equal(zps, their_zps.numpy())


@pytest.mark.parametrize("kind", ["one", "many", "relu", "outliers"])
@pytest.mark.parametrize("reduce_range", [True, False])
def test_histogram_scale_within_one_percent_of_torchs(kind, reduce_range):
    theirs = torch_observer.HistogramObserver(reduce_range=reduce_range)
    (scale, zp), (their_scale, their_zp) = run_both(
        HistogramObserver(reduce_range=reduce_range), theirs, batches(kind)
    )
    assert abs(scale - float(their_scale)) <= 0.01 * float(their_scale)
    assert abs(zp - int(their_zp)) <= 1


def test_histogram_clips_a_heavy_tail_that_minmax_keeps():
    x = np.random.default_rng(0).standard_t(2, 50000).astype(np.float32)
    hist, minmax = HistogramObserver(), MinMaxObserver()
    hist(tensor.from_numpy(x))
    minmax(tensor.from_numpy(x))
    assert hist.calculate_qparams()[0] < minmax.calculate_qparams()[0]


def test_with_args_and_the_default_mapping_are_torchs():
    make = MinMaxObserver.with_args(dtype=tensor.qint8, qscheme=tensor.per_tensor_symmetric)
    obs = make()
    assert (obs.quant_min, obs.quant_max, obs.symmetric) == (-128, 127, True)
    assert make.with_args(reduce_range=True)().quant_max == 63
    qconfig = get_default_qconfig_mapping().global_qconfig
    act, weight = qconfig.activation(), qconfig.weight()
    assert isinstance(act, HistogramObserver) and (act.quant_min, act.quant_max) == (0, 127)
    assert isinstance(weight, PerChannelMinMaxObserver)
    assert (weight.quant_min, weight.quant_max, weight.symmetric) == (-128, 127, True)


def test_qconfig_mapping_looks_up_name_then_type_then_global():
    a, b, c = (QConfig(MinMaxObserver, MinMaxObserver) for _ in range(3))
    mapping = QConfigMapping().set_global(a).set_object_type(tensor.nn.Linear, b)
    mapping.set_module_name("layer1", c).set_module_name("layer1.fc", None)
    assert mapping.qconfig_for("fc", tensor.nn.Linear) is b
    assert mapping.qconfig_for("conv", tensor.nn.Conv2d) is a
    assert mapping.qconfig_for("layer1.0.conv", tensor.nn.Conv2d) is c
    assert mapping.qconfig_for("layer1.fc", tensor.nn.Linear) is None


def test_an_observer_that_saw_nothing_warns_as_torch_does():
    with pytest.warns(UserWarning, match="must run observer before calling calculate_qparams"):
        assert MinMaxObserver().calculate_qparams() == (1.0, 0)


def test_histogram_of_a_constant_input_is_torchs():
    values = np.full((3, 5), 0.75, np.float32)
    ours, theirs = HistogramObserver(), torch_observer.HistogramObserver()
    (scale, zp), (their_scale, their_zp) = run_both(ours, theirs, [values])
    assert scale == pytest.approx(float(their_scale), rel=0.01) and zp == int(their_zp)


# ---- the observer's settings ------------------------------------------------------
@pytest.mark.parametrize("kwargs", [
    {}, {"reduce_range": True}, {"dtype": "qint8"}, {"dtype": "qint8", "reduce_range": True},
    {"dtype": "qint32"}, {"quant_min": 0, "quant_max": 15}, {"quant_min": -8, "quant_max": 7},
    {"dtype": "qint8", "qscheme": "per_tensor_symmetric", "eps": 1e-3},
])
def test_settings_are_torchs(kwargs):
    ours = MinMaxObserver(**_kwargs(kwargs, tensor))
    theirs = torch_observer.MinMaxObserver(**_kwargs(kwargs, torch))
    assert (ours.quant_min, ours.quant_max) == (theirs.quant_min, theirs.quant_max)
    assert type(ours.quant_min) is int and type(ours.quant_max) is int
    assert ours.eps == pytest.approx(float(theirs.eps)) and ours.reduce_range is theirs.reduce_range
    assert ours.dtype is _kwargs(kwargs, tensor).get("dtype", tensor.quint8)
    assert ours.symmetric == ("symmetric" in kwargs.get("qscheme", ""))
    assert not ours.has_data and ours.min_val == np.inf and ours.max_val == -np.inf


def test_float_bounds_become_ints_and_other_settings_are_accepted():
    obs = MinMaxObserver(quant_min=0.0, quant_max=15.0, averaging_constant=0.1)
    assert (obs.quant_min, obs.quant_max) == (0, 15) and type(obs.quant_max) is int
    assert obs._signed is False and MinMaxObserver(dtype=tensor.qint8)._signed is True
    assert obs._min.dtype == np.float32 and obs._max.dtype == np.float32


@pytest.mark.parametrize("kwargs, message", [
    ({"quant_min": 0}, "observer: give both quant_min and quant_max, or neither"),
    ({"quant_max": 15}, "observer: give both quant_min and quant_max, or neither"),
    ({"quant_min": 1, "quant_max": 15}, r"observer: the range \[quant_min, quant_max\] must "
     "contain 0"),
    ({"quant_min": -15, "quant_max": -1}, r"must contain 0"),
])
def test_a_bad_range_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MinMaxObserver(**kwargs)


def test_qparams_without_data_warn_and_give_the_defaults_as_torchs():
    for ours, theirs in [(MinMaxObserver(), torch_observer.MinMaxObserver()),
                         (HistogramObserver(), torch_observer.HistogramObserver())]:
        with pytest.warns(UserWarning, match="^must run observer before calling "
                          "calculate_qparams. Returning default scale and zero point$"):
            scale, zero_point = ours.calculate_qparams()
        with pytest.warns(UserWarning):
            their_scale, their_zp = theirs.calculate_qparams()
        assert (scale, zero_point) == (float(their_scale), int(their_zp)) == (1.0, 0)
        assert type(scale) is float and type(zero_point) is int
    with pytest.warns(UserWarning, match="^must run observer"):  # per channel: no data either
        scale, zero_point = MinMaxObserver()._qparams(np.zeros(3, np.float32),
                                                      np.ones(3, np.float32))
    assert scale.dtype == np.float32 and zero_point.dtype == np.int64 and scale.shape == (3,)



def test_the_warning_without_data_names_the_line_that_asked_for_qparams():
    for observer in (MinMaxObserver(), HistogramObserver()):
        with pytest.warns(UserWarning, match="must run observer") as record:
            line = inspect.currentframe().f_lineno + 1
            observer.calculate_qparams()
        assert (record[0].filename, record[0].lineno) == (__file__, line)


# ---- the histogram, batch by batch ----------------------------------------------------
@pytest.mark.parametrize("kind", ["one", "many", "relu", "outliers"])
def test_histogram_and_range_after_each_batch_are_torchs(kind):
    ours, theirs = HistogramObserver(bins=256), torch_observer.HistogramObserver(bins=256)
    for b in batches(kind):
        ours(tensor.from_numpy(b))
        theirs(torch.from_numpy(b))
        assert ours.min_val == float(theirs.min_val) and ours.max_val == float(theirs.max_val)
        np.testing.assert_allclose(ours.histogram, theirs.histogram.numpy(), rtol=1e-5,
                                   atol=1e-3)
    assert ours._min.dtype == np.float32 and ours._max.dtype == np.float32


def test_a_narrower_batch_keeps_the_range_and_an_empty_one_changes_nothing():
    obs = HistogramObserver(bins=8)
    obs.observe(np.array([-1.0, 3.0], np.float32))
    obs.observe(np.array([0.0, 1.0, 2.0], np.float32))  # inside the range: counted only
    assert (obs.min_val, obs.max_val) == (-1.0, 3.0) and obs.histogram.sum() == 5
    before = obs.histogram.copy()
    obs.observe(np.zeros((0, 3), np.float32))
    np.testing.assert_array_equal(obs.histogram, before)
    obs.observe(np.array([[7.0]], np.float64))  # widens the range: the old counts move
    assert obs.max_val == 7.0 and obs.histogram.sum() == pytest.approx(6)
    empty = HistogramObserver()
    empty.observe(np.zeros(0, np.float32))
    assert not empty.has_data


@pytest.mark.parametrize("ours_cls, theirs_cls, scheme", [
    (MinMaxObserver, torch_observer.MinMaxObserver, "per_tensor_symmetric"),
    (HistogramObserver, torch_observer.HistogramObserver, "per_tensor_symmetric"),
])
def test_qint32_observers_are_torchs(ours_cls, theirs_cls, scheme):
    """qint32 is signed (a symmetric zero point is 0) and has 2**32 levels to search: with
    so many levels a heavy tail costs nothing, and nothing is clipped."""
    x = [np.random.default_rng(0).standard_t(2, 50000).astype(np.float32)]
    kwargs = {"dtype": "qint32", "qscheme": scheme, "eps": 1e-12}
    ours = ours_cls(**_kwargs(kwargs, tensor))
    (scale, zp), (their_scale, their_zp) = run_both(ours, theirs_cls(**_kwargs(kwargs, torch)), x)
    assert ours._signed is True
    assert scale == pytest.approx(float(their_scale), rel=0.01) and zp == int(their_zp)


def test_an_empty_batch_changes_no_running_range_as_in_torch():
    ours, theirs = MinMaxObserver(), torch_observer.MinMaxObserver()
    ours(tensor.zeros(0, 3))
    theirs(torch.zeros(0, 3))
    assert not ours.has_data and float(theirs.min_val) == ours.min_val == np.inf
    data = [np.array([[-1.5, 2.0]], np.float32), np.zeros((0, 2), np.float32)]
    (scale, zp), (their_scale, their_zp) = run_both(ours, theirs, data)
    assert (ours.min_val, ours.max_val) == (-1.5, 2.0)
    assert scale == float(their_scale) and zp == int(their_zp)


def test_an_empty_batch_changes_nothing_and_a_single_value_counts():
    data = [np.zeros((0, 3), np.float32), np.array([9.0], np.float32), batches("one")[0],
            np.zeros((2, 0), np.float32)]
    (scale, zp), (their_scale, their_zp) = run_both(
        MinMaxObserver(), torch_observer.MinMaxObserver(), data)
    assert scale == float(their_scale) and zp == int(their_zp)
    assert abs(scale * (255 - zp) - 9.0) < scale  # the lone 9.0 is the maximum
