"""Chapter 12: FakeTensorProp records what ShapeProp records, without computing.

The oracle is ShapeProp on real inputs (chapter 4): on chapter 4's models,
chapter 7's ResNet twin and make_fx graphs, every node's ``meta['val']``
has the shape, dtype and strides of ShapeProp's ``tensor_meta``.
"""

import pytest

import minifx
import tensor
from minifx.experimental.proxy_tensor import make_fx
from minifx.passes.fake_tensor_prop import FakeTensorProp
from minifx.passes.shape_prop import ShapeProp
from tensor.fake import FakeTensor, FakeTensorMode
from tests.ch04.ch04_models import EAGER_MODELS, build_split, build_views, example_input
from tests.ch07 import ch07_models


def fields(meta):
    """(shape, dtype, stride) of a FakeTensor or a TensorMetadata, in the same nesting."""
    if isinstance(meta, FakeTensor):
        return (tuple(meta.shape), meta.dtype, meta.stride())
    if isinstance(meta, tuple) and not hasattr(meta, "stride"):
        return tuple(fields(m) for m in meta)
    if isinstance(meta, list):
        return [fields(m) for m in meta]
    if isinstance(meta, dict):
        return {k: fields(v) for k, v in meta.items()}
    if hasattr(meta, "stride"):
        return (tuple(meta.shape), meta.dtype, tuple(meta.stride))
    return meta


def assert_same_as_shape_prop(gm, *args):
    ShapeProp(gm).propagate(*args)
    real = {n.name: n.meta.get("tensor_meta") for n in gm.graph.nodes}
    FakeTensorProp(gm).propagate(*args)
    checked = 0
    for node in gm.graph.nodes:
        if real[node.name] is not None:
            assert fields(node.meta["val"]) == fields(real[node.name]), node.format_node()
            checked += 1
    assert checked >= 2


@pytest.mark.parametrize("name, builder, shape", EAGER_MODELS)
def test_ch04_models(name, builder, shape):
    model = builder(tensor).eval()
    assert_same_as_shape_prop(minifx.symbolic_trace(model), example_input(shape)[0])


def test_ch04_views_and_split():
    x = example_input((3, 6))[0]
    assert_same_as_shape_prop(minifx.symbolic_trace(build_views(tensor)), x)
    assert_same_as_shape_prop(minifx.symbolic_trace(build_split(tensor)), x)


def test_ch07_resnet_twin():
    model, _ = ch07_models.twins(width=8)
    x = tensor.randn(2, 3, 32, 32)
    assert_same_as_shape_prop(minifx.symbolic_trace(model), x)
    assert_same_as_shape_prop(make_fx(model)(x), x)


def test_val_records_numbers_and_nothing_for_other_values():
    def fn(x):
        return x.size(1), x.relu(), "label"

    gm = minifx.symbolic_trace(fn)
    FakeTensorProp(gm).propagate(tensor.randn(2, 5))
    size, relu, output = (gm.graph.find_nodes(op="call_method")[0],
                          gm.graph.find_nodes(op="call_method")[1], gm.graph.output_node())
    assert size.meta["val"] == 5
    assert isinstance(relu.meta["val"], FakeTensor)
    assert output.meta["val"][2] is None


def test_propagate_dont_convert_inputs_and_a_given_mode():
    gm = minifx.symbolic_trace(tensor.nn.Linear(4, 3))
    mode = FakeTensorMode()
    with mode:
        x = tensor.empty(10, 4)
    out = FakeTensorProp(gm, mode).propagate_dont_convert_inputs(x)
    assert isinstance(out, FakeTensor) and out.fake_mode is mode and out.shape == (10, 3)


def _scaled(x, n):
    return x, x.relu() * n


def test_propagate_makes_the_tensors_fake_and_passes_the_rest_on():
    gm = minifx.symbolic_trace(_scaled)
    mode = FakeTensorMode()
    x = tensor.randn(2, 3)
    same, scaled = FakeTensorProp(gm, mode).propagate(x, 2.0)
    assert isinstance(same, FakeTensor) and same.fake_mode is mode and same is not x
    assert (tuple(same.shape), same.stride(), same.dtype) == ((2, 3), (3, 1), x.dtype)
    assert isinstance(scaled, FakeTensor) and scaled.fake_mode is mode
    assert type(x) is tensor.Tensor  # the caller's tensor is not touched
    placeholders = gm.graph.find_nodes(op="placeholder")
    assert placeholders[0].meta["val"] is same and placeholders[1].meta["val"] == 2.0
    FakeTensorProp(gm, mode).propagate(x, 3)
    assert type(placeholders[1].meta["val"]) is int  # as it is


class _Watched(FakeTensorProp):
    """Notes the dispatch modes on the stack as each node runs."""

    def run_node(self, n):
        self.modes = getattr(self, "modes", []) + [tensor.dispatch.active_modes()]
        return super().run_node(n)


def test_propagate_dont_convert_inputs_runs_the_graph_under_the_mode():
    gm = minifx.symbolic_trace(_scaled)
    mode, other = FakeTensorMode(), FakeTensorMode()
    x = other.from_tensor(tensor.randn(2, 3))  # another mode's: propagate would convert it
    prop = _Watched(gm, mode)
    same, scaled = prop.propagate_dont_convert_inputs(x, 3.0)
    assert same is x  # as given
    assert isinstance(scaled, FakeTensor) and scaled.shape == (2, 3)
    assert prop.modes == [(mode,)] * len(gm.graph.nodes)
    assert tensor.dispatch.active_modes() == ()
    assert prop.propagate(x, 3.0)[0].fake_mode is mode
