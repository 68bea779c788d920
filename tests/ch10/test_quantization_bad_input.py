"""What prepare_fx and convert_fx do with models they cannot (fully) quantize."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import tensor
import tensor.nn as nn
from minifx.proxy import TraceError
from minifx.quantization import convert_fx, get_default_qconfig_mapping, prepare_fx


class Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if x.sum() > 0:  # control flow on a traced value
            return self.fc(x)
        return x


class TorchBranchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


@pytest.mark.parametrize("model", [Branchy(), TorchBranchy()], ids=["tensor", "torch"])
def test_an_untraceable_model_names_the_file_and_line(model):
    with pytest.raises(TraceError) as info:
        prepare_fx(model.eval(), get_default_qconfig_mapping(), (None,))
    assert "test_quantization_bad_input.py" in str(info.value)
    assert "if x.sum() > 0" in str(info.value) or "line" in str(info.value)


class WithGELU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.gelu, self.fc2 = nn.Linear(6, 6), nn.GELU(), nn.Linear(6, 3)

    def forward(self, x):
        return self.fc2(self.gelu(self.fc1(x)))


def calibrated(model, shape=(5, 6), batches=2):
    prepared = prepare_fx(model.eval(), get_default_qconfig_mapping(), (tensor.zeros(*shape),))
    rng = np.random.default_rng(0)
    for _ in range(batches):
        prepared(tensor.from_numpy(rng.standard_normal(shape).astype(np.float32)))
    return prepared


def test_an_op_without_int8_kernel_stays_float_between_dequantize_and_quantize():
    model = WithGELU()
    converted = convert_fx(calibrated(model))
    nodes = {n.name: n for n in converted.graph.nodes}
    gelu = nodes["gelu"]
    assert gelu.args[0].op == "call_method" and gelu.args[0].target == "dequantize"
    (after,) = gelu.users
    assert after.target is tensor.quantize_per_tensor
    assert type(converted.gelu) is nn.GELU
    x = tensor.from_numpy(np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32))
    assert np.abs(converted(x).numpy() - model(x).numpy()).max() < 0.1  # a calibration batch


def test_convert_without_calibration_warns_naming_the_observers():
    prepared = prepare_fx(WithGELU().eval(), get_default_qconfig_mapping(), (tensor.zeros(5, 6),))
    with pytest.warns(UserWarning, match="saw no data") as record:
        convert_fx(prepared)
    message = str(record[0].message)
    assert "activation_post_process_0" in message and "activation_post_process_3" in message


def test_partly_calibrated_names_only_the_silent_observers():
    prepared = calibrated(WithGELU())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a calibrated model converts without a warning
        convert_fx(prepared)


def test_prepare_refuses_a_model_in_training_mode_and_convert_a_plain_model():
    with pytest.raises(ValueError, match="eval"):
        prepare_fx(WithGELU().train(), get_default_qconfig_mapping(), (tensor.zeros(5, 6),))
    with pytest.raises(TypeError, match="prepare_fx"):
        convert_fx(WithGELU())


def test_a_module_name_mapped_to_none_stays_float():
    model = WithGELU()
    mapping = get_default_qconfig_mapping().set_module_name("fc2", None)
    prepared = prepare_fx(model.eval(), mapping, (tensor.zeros(5, 6),))
    prepared(tensor.randn(5, 6))
    converted = convert_fx(prepared)
    assert type(converted.fc2) is nn.Linear and type(converted.fc1).__name__ == "Linear"
    assert type(converted.fc1).__module__ == "tensor.nn.quantized.modules"


def test_a_converted_model_survives_deepcopy_and_pickle():
    converted = convert_fx(calibrated(WithGELU()))
    x = tensor.randn(5, 6)
    expected = converted(x).numpy()
    for twin in (copy.deepcopy(converted), pickle.loads(pickle.dumps(converted))):
        assert np.array_equal(twin(x).numpy(), expected)
