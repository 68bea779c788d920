"""The passes of prepare_fx and convert_fx one at a time, on small torch models that
hold every kind of node, each held against torch.ao: the observers inserted (and
which of them are one object), the reference model of quantize/dequantize pairs
(torch's ``convert_to_reference_fx``), and the int8 model (torch's ``convert_fx``)."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
import torch.ao.quantization.quantize_fx as torch_qfx
from torch.ao.quantization import get_default_qconfig_mapping as torch_mapping

import minifx
import tests.ch10.qhelpers  # noqa: F401  (sets torch's quantized engine to x86)
from minifx._framework import framework_of
from minifx.quantization import convert_fx, get_default_qconfig_mapping, prepare_fx
from minifx.quantization.backend import backend_for
from minifx.quantization.convert import insert_quantize_dequantize
from minifx.quantization.prepare import node_kind
from tests.ch10.torch_parity import (
    assert_converted_equal,
    assert_observers_equal,
    assert_prepared_equal,
    batches,
    output_steps,
    quantize_both,
    signature,
)

nn = torch.nn


class Kinds(nn.Module):
    """A node of most kinds: layers, add + relu, mul, cat, ops that share their input's
    observer, fixed ones, size."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.conv_relu = nn.Conv2d(4, 4, 1)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.hsig = nn.Hardsigmoid()
        self.fc = nn.Linear(8 * 4 * 4, 6)

    def forward(self, x):
        a = self.conv(x)
        b = self.relu(self.conv_relu(a))
        s = torch.relu(a + b)  # add followed by its ReLU
        m = s * a  # mul of two tensors
        c = torch.cat([m, s], 1)
        flat = torch.flatten(self.pool(c), 1)
        n = flat.size(0)
        h = self.hsig(torch.sigmoid(flat.reshape(n, -1)))
        return self.fc(h)


class LayerTwice(nn.Module):
    """The same Linear called twice: both calls use the last call's qparams, as torch's."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x):
        return self.fc(self.fc(x))


class OwnObservers(nn.Module):
    """Dropout and Hardswish: an observer of their own, then an int8 module of their own."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)
        self.drop, self.swish = nn.Dropout(0.5), nn.Hardswish()

    def forward(self, x):
        return self.b(self.swish(self.drop(self.a(x))))


class MulRelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.a(x) * self.b(x)) + self.b(x)


MODELS = {"kinds": (Kinds, (2, 3, 8, 8)), "layer_twice": (LayerTwice, (3, 5)),
          "mul_relu": (MulRelu, (3, 4)), "own_observers": (OwnObservers, (3, 4))}


@pytest.fixture(scope="module", params=sorted(MODELS))
def both(request):
    cls, shape = MODELS[request.param]
    torch.manual_seed(0)
    return quantize_both(cls().eval(), shape, count=2)


def test_observers_go_where_torch_puts_them_and_are_shared_as_torch_shares_them(both):
    assert_prepared_equal(both)
    assert_observers_equal(both)


def test_the_int8_model_is_torchs(both):
    assert_converted_equal(both)
    assert output_steps(both) <= 1.0001


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_reference_model_is_torchs(name):
    cls, shape = MODELS[name]
    torch.manual_seed(0)
    model = cls().eval()
    data = batches(shape, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch_qfx.prepare_fx(copy.deepcopy(model), torch_mapping("x86"), (data[0],))
        ours = prepare_fx(copy.deepcopy(model), get_default_qconfig_mapping(), (data[0],))
        for batch in data:
            theirs(batch)
            ours(batch)
        theirs = torch_qfx.convert_to_reference_fx(theirs)
    insert_quantize_dequantize(ours, backend_for(framework_of(ours)))
    ours.graph.lint()
    assert signature(ours) == signature(theirs)
    their_buffers = dict(theirs.named_buffers())
    names = [n for n in their_buffers if "_scale_" in n or "_zero_point_" in n]
    our_buffers = {n: b for n, b in ours.named_buffers() if "_scale_" in n or "_zero_point_" in n}
    assert names and sorted(our_buffers) == sorted(names)
    for n in names:
        assert float(our_buffers[n]) == pytest.approx(float(their_buffers[n]), rel=0.01), n
        assert our_buffers[n].dtype == their_buffers[n].dtype, n
    with torch.no_grad():
        for batch in data:  # the reference model computes in float, rounding each edge
            torch.testing.assert_close(ours(batch), theirs(batch), rtol=0, atol=0.05)


def test_an_uncalibrated_observer_warns_once_naming_every_silent_observer():
    model = LayerTwice().eval()
    ours = prepare_fx(model, get_default_qconfig_mapping(), (torch.randn(3, 5),))
    with pytest.warns(UserWarning) as record:
        insert_quantize_dequantize(ours, backend_for(framework_of(ours)))
    (warning,) = [w for w in record if "saw no data" in str(w.message)]
    assert str(warning.message) == (
        "convert_fx: these observers saw no data, so their scale and zero point are the "
        "defaults (1.0, 0): activation_post_process_0, activation_post_process_1, "
        "activation_post_process_2. Calibrate first: run the prepared model on "
        "representative inputs before convert_fx.")
    assert float(ours.fc_input_scale_0) == 1.0 and int(ours.fc_input_zero_point_0) == 0


def test_each_node_has_its_kind():
    torch.manual_seed(0)
    gm = prepare_fx(Kinds().eval(), get_default_qconfig_mapping(), (torch.randn(2, 3, 8, 8),))
    backend = backend_for(framework_of(gm))
    modules = dict(gm.named_modules())
    kinds = {n.name: node_kind(n, modules, backend) for n in gm.graph.nodes
             if not n.name.startswith("activation_post_process")}
    assert kinds == {
        "x": "float", "conv": "quantized", "conv_relu": "quantized", "add": "binary",
        "relu_1": "shares", "mul": "binary", "cat": "cat", "pool": "shares",
        "flatten": "shares", "size": "info", "reshape": "shares", "sigmoid": "fixed",
        "hsig": "fixed", "fc": "quantized", "output": "float"}
    gm = prepare_fx(OwnObservers().eval(), get_default_qconfig_mapping(), (torch.randn(3, 4),))
    modules = dict(gm.named_modules())
    assert [node_kind(n, modules, backend) for n in gm.graph.nodes
            if n.op == "call_module" and n.target in ("drop", "swish")] == ["own", "own"]


def test_a_binary_op_needs_two_tensors_and_an_unknown_op_stays_float():
    class Floats(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gelu = nn.GELU()

        def forward(self, x):
            return self.gelu(x + 1.0) + x.exp()

    backend = backend_for(framework_of(nn.Module()))
    gm = minifx.symbolic_trace(Floats())
    modules = dict(gm.named_modules())
    assert {n.name: node_kind(n, modules, backend) for n in gm.graph.nodes} == {
        "x": "float", "add": "float", "gelu": "float", "exp": "float", "add_1": "binary",
        "output": "float"}


def test_a_layer_mapped_to_none_between_quantized_ones_stays_float_as_torchs():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 3)).eval()
    data = batches((3, 4), 2)
    ours_mapping = get_default_qconfig_mapping().set_module_name("1", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch_qfx.prepare_fx(copy.deepcopy(model),
                                      torch_mapping("x86").set_module_name("1", None), (data[0],))
        ours = prepare_fx(copy.deepcopy(model), ours_mapping, (data[0],))
        for batch in data:
            theirs(batch)
            ours(batch)
        theirs = torch_qfx.convert_fx(theirs)
        ours = convert_fx(ours)
    # (the qparams buffers are named after module 1 here, torch names them after 2's input)
    calls = [[(op, target) for op, target, _ in signature(gm) if op != "get_attr"]
             for gm in (ours, theirs)]
    assert calls[0] == calls[1]
    assert type(ours.get_submodule("1")) is nn.Linear
    assert [type(m).__name__ for m in ours.children()] == \
        [type(m).__name__ for m in theirs.children()]
