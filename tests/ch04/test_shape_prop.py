"""Chapter 4: ShapeProp records what torch.fx's ShapeProp records.

On torch, minifx's metadata must equal torch.fx's field for field. On
`tensor`, shape, dtype and stride must equal torch.fx's on the torch twin
(`requires_grad` differs on purpose: `tensor` has no autograd).
"""

import numpy as np
import pytest
import torch
import torch.fx
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

import minifx
import tensor
from minifx.passes.shape_prop import ShapeProp, TensorMetadata
from tests.ch04.ch04_models import (
    EAGER_MODELS,
    build_split,
    build_two_layer_net,
    build_views,
    example_input,
    output_of,
    to_torch,
    twins,
)

SEED_TABLE = """\
x torch.float32 torch.Size([50, 1000])
linear1 torch.float32 torch.Size([50, 100])
clamp torch.float32 torch.Size([50, 100])
linear2 torch.float32 torch.Size([50, 10])
output torch.float32 torch.Size([50, 10])"""


def table(gm):
    return "\n".join(f"{n.name} {n.meta['tensor_meta'].dtype} {n.meta['tensor_meta'].shape}"
                     for n in gm.graph.nodes)


def comparable(meta, unit_strides=True):
    """The fields both libraries share, spelled the same: shape, dtype, stride, contiguity.

    With ``unit_strides=False`` the stride of a size-1 dimension is left out:
    no element is ever reached through it, and torch and NumPy pick it by
    different rules (torch.ones(1, 2).t() * 2 has strides (1, 2) in torch and
    (1, 1) in `tensor`).
    """
    if isinstance(meta, TensorMetadata) or type(meta).__name__ == "TensorMetadata":
        contiguous = meta.memory_format in ("contiguous_format", torch.contiguous_format)
        dtype = str(meta.dtype).split(".")[-1]
        stride = tuple(s if unit_strides or size != 1 else None
                       for s, size in zip(meta.stride, meta.shape))
        return ("meta", tuple(meta.shape), dtype, stride, contiguous)
    if isinstance(meta, (tuple, list)):
        return type(meta).__name__, [comparable(m, unit_strides) for m in meta]
    if isinstance(meta, dict):
        return {k: comparable(v, unit_strides) for k, v in meta.items()}
    return meta


def propagate_three_ways(build, shape):
    """ShapeProp with minifx on tensor, minifx on torch, torch.fx on torch."""
    ours, theirs = twins(build)
    x, tx = example_input(shape)
    gm, torch_gm = minifx.symbolic_trace(ours), minifx.symbolic_trace(theirs)
    reference = torch.fx.symbolic_trace(theirs)
    ShapeProp(gm).propagate(x)
    ShapeProp(torch_gm).propagate(tx)
    TorchShapeProp(reference).propagate(tx)
    names = [n.name for n in reference.graph.nodes]
    assert [n.name for n in gm.graph.nodes] == names
    assert [n.name for n in torch_gm.graph.nodes] == names
    return gm, torch_gm, reference


# --- the seed's TwoLayerNet -----------------------------------------------------------

def test_seed_table_on_tensor():
    gm = minifx.symbolic_trace(build_two_layer_net(tensor))
    sample_input = tensor.randn(50, 1000)
    ShapeProp(gm).propagate(sample_input)
    assert table(gm) == SEED_TABLE.replace("torch", "tensor")
    meta = output_of(gm).meta["tensor_meta"]
    assert isinstance(meta.shape, tensor.Size)
    assert meta.dtype is tensor.float32
    assert meta.stride == (10, 1)


def test_seed_table_on_torch_equals_torch_fx():
    model = build_two_layer_net(torch)
    sample_input = torch.randn(50, 1000)
    gm, reference = minifx.symbolic_trace(model), torch.fx.symbolic_trace(model)
    ShapeProp(gm).propagate(sample_input)
    TorchShapeProp(reference).propagate(sample_input)
    assert table(gm) == table(reference) == SEED_TABLE
    for ours, theirs in zip(gm.graph.nodes, reference.graph.nodes):
        assert ours.meta["tensor_meta"] == theirs.meta["tensor_meta"]  # every field
        assert ours.meta["type"] is theirs.meta["type"] is torch.Tensor


# --- many models, three ways -----------------------------------------------------------

MODELS = [*EAGER_MODELS, ("views", build_views, (4, 6)), ("split", build_split, (4, 6))]


@pytest.mark.parametrize("name, build, shape", MODELS, ids=[m[0] for m in MODELS])
def test_metadata_matches_torch_fx(name, build, shape):
    gm, torch_gm, reference = propagate_three_ways(build, shape)
    for ours, on_torch, theirs in zip(gm.graph.nodes, torch_gm.graph.nodes,
                                      reference.graph.nodes):
        assert ("tensor_meta" in ours.meta) == ("tensor_meta" in theirs.meta), ours.name
        if "tensor_meta" in theirs.meta:
            # minifx on torch: equal to torch.fx in every field, nested alike.
            assert on_torch.meta["tensor_meta"] == theirs.meta["tensor_meta"], ours.name
            # minifx on tensor: the same shapes, dtypes, strides and contiguity.
            assert comparable(ours.meta["tensor_meta"]) == comparable(
                theirs.meta["tensor_meta"]), ours.name
        assert on_torch.meta["type"] is theirs.meta["type"], ours.name


def test_nested_outputs_give_nested_metadata():
    gm, _, reference = propagate_three_ways(build_views, (4, 6))
    out = output_of(gm).meta["tensor_meta"]
    # (t, p, reshape, {"first": x[0], "size": x.size(1)}): the same nesting, with
    # non-tensors (the int) kept as they are.
    assert isinstance(out, tuple) and len(out) == 4
    t_meta, p_meta, _, d = out
    assert t_meta.stride == (1, 6) and t_meta.memory_format is None
    assert p_meta.shape == tensor.Size([6, 1, 4]) and p_meta.stride == (1, 24, 6)
    assert set(d) == {"first", "size"} and d["size"] == 6
    assert isinstance(d["first"], TensorMetadata)
    assert comparable(out) == comparable(list(reference.graph.nodes)[-1].meta["tensor_meta"])


def test_non_tensor_results_get_a_type_but_no_tensor_meta():
    def build(lib):
        def fn(x):
            n = x.size(1)
            return x.reshape(n, -1), x.shape

        return fn

    ours, theirs = twins(build)
    gm, reference = minifx.symbolic_trace(ours), torch.fx.symbolic_trace(theirs)
    x, tx = example_input((2, 3))
    ShapeProp(gm).propagate(x)
    TorchShapeProp(reference).propagate(tx)
    for a, b in zip(gm.graph.nodes, reference.graph.nodes):
        assert ("tensor_meta" in a.meta) == ("tensor_meta" in b.meta), a.name
        assert a.meta["type"].__name__ == b.meta["type"].__name__, a.name  # Tensor, int, tuple
    size_node = next(n for n in gm.graph.nodes if n.name == "size")
    assert size_node.meta["type"] is int and "tensor_meta" not in size_node.meta


def test_dtypes_are_recorded():
    def build(lib):
        def fn(x):
            return (x > 0).float().sum(), x.long(), x.double() * 2, x > 0

        return fn

    gm, torch_gm, reference = propagate_three_ways(build, (3, 2))
    for ours, on_torch, theirs in zip(gm.graph.nodes, torch_gm.graph.nodes,
                                      reference.graph.nodes):
        assert comparable(ours.meta["tensor_meta"], unit_strides=False) == comparable(
            theirs.meta["tensor_meta"], unit_strides=False), ours.name
        assert on_torch.meta["tensor_meta"] == theirs.meta["tensor_meta"]
    dtypes = [m.dtype for m in output_of(gm).meta["tensor_meta"]]
    assert dtypes == [tensor.float32, tensor.int64, tensor.float64, tensor.bool]


def test_parameters_keep_requires_grad():
    class Scale(tensor.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = tensor.nn.Parameter(tensor.ones(3))

        def forward(self, x):
            return x * self.w

    gm = minifx.symbolic_trace(Scale())
    ShapeProp(gm).propagate(tensor.ones(2, 3))
    meta = {n.name: n.meta["tensor_meta"] for n in gm.graph.nodes}
    assert meta["w"].requires_grad is True
    assert meta["x"].requires_grad is False
    # tensor has no autograd: results never require grad.
    assert meta["mul"].requires_grad is False


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")
def test_torch_memory_formats_and_quantization_match_torch_fx():
    def fn(x):
        y = torch.relu(x) + 1
        q = torch.quantize_per_tensor(y, 0.1, 2, torch.quint8)
        return y, q

    x = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    gm, reference = minifx.symbolic_trace(fn), torch.fx.symbolic_trace(fn)
    ShapeProp(gm).propagate(x)
    TorchShapeProp(reference).propagate(x)
    for ours, theirs in zip(gm.graph.nodes, reference.graph.nodes):
        assert ours.meta["tensor_meta"] == theirs.meta["tensor_meta"], ours.name
    y_meta, q_meta = output_of(gm).meta["tensor_meta"]
    assert y_meta.memory_format is torch.channels_last
    assert q_meta.is_quantized and q_meta.qparams["scale"] == pytest.approx(0.1)
    assert q_meta.qparams["zero_point"] == 2


def test_propagate_returns_the_output_and_errors_name_the_node():
    gm = minifx.symbolic_trace(build_two_layer_net(tensor, d_in=6, h=4, d_out=2))
    x = tensor.randn(3, 6)
    tensor.testing.assert_close(ShapeProp(gm).propagate(x), gm(x))
    with pytest.raises(RuntimeError) as info:
        ShapeProp(gm).propagate(tensor.randn(3, 5))  # wrong width for linear1
    message = str(info.value)
    assert message.startswith("ShapeProp error for: node=%linear1 : [num_users=1] = "
                              "call_module[target=linear1](args = (%x,), kwargs = {})")
    assert "While executing %linear1" in message
    assert info.value.__cause__ is not None  # the layer's own error, kept as the cause


@settings(deadline=None, max_examples=25)
@given(rows=st.integers(1, 6), cols=st.integers(1, 6), transpose=st.booleans(),
       offset=st.integers(0, 2))
def test_random_view_chains_match_torch_fx(rows, cols, transpose, offset):
    # Non-empty results only: torch gives size-0 tensors strides by rules of its
    # own (torch.ones(1, 1)[1:] * 2 has strides (1, 0)) that `tensor` does not copy.
    assume(offset < (cols if transpose else rows))
    def build(lib):
        def fn(x):
            y = x.t() if transpose else x
            z = y[offset:] * 2
            return z.unsqueeze(1), z.sum(dim=0), y.reshape(-1).neg()

        return fn

    array = np.random.default_rng(rows * 10 + cols).standard_normal((rows, cols))
    x = tensor.Tensor._from_array(array.astype(np.float32))
    gm, reference = minifx.symbolic_trace(build(tensor)), torch.fx.symbolic_trace(build(torch))
    ShapeProp(gm).propagate(x)
    TorchShapeProp(reference).propagate(to_torch(x))
    for ours, theirs in zip(gm.graph.nodes, reference.graph.nodes):
        assert ours.name == theirs.name
        assert comparable(ours.meta["tensor_meta"], unit_strides=False) == comparable(
            theirs.meta["tensor_meta"], unit_strides=False), ours.name
