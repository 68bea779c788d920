"""Our make_fx and torch's give the same ops, through the table from primitives to ATen.

For the convolutional and MLP models of chapter 9's zoo: the torch model,
converted to ``tensor`` (chapter 11) and traced by our make_fx; the torch
model traced by torch's make_fx. Each of our primitives, through
`minifx.experimental.aten_table`, must give torch's ATen ops in the same
order, after the rules that module's docstring lists.
"""

import copy

import pytest
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import tensor
from minifx.convert import torch_to_tensor
from minifx.convert.table import conversion_table
from minifx.convert.values import ValueConverter
from minifx.experimental.aten_table import TORCH_ONLY, aten_ops, normalise_inplace
from minifx.experimental.proxy_tensor import make_fx
from tests.ch09.zoo import ZOO

MODELS = ["my_module", "mlp", "mlp_sequential", "nested_sequential", "convnet",
          "residual_block", "residual_block_projection", "resnet18"]


def our_ops(gm) -> list[str]:
    """Our graph's primitives through the table, in-place ops as their functional twin;
    a copy_ back into its source op's input is that op done in place, and is dropped."""
    ops = []
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        assert isinstance(node.target, tensor.ops.OpOverload)
        if node.target is tensor.ops.copy_:
            dst, src = node.args
            assert isinstance(src, type(node)) and src.args[0] is dst, node.format_node()
            continue
        ops.extend(normalise_inplace(name) for name in aten_ops(node))
    return ops


def torch_ops(gm) -> list[str]:
    """torch's graph's ATen ops, bookkeeping dropped, in-place ops as their functional twin."""
    return [normalise_inplace(str(node.target)) for node in gm.graph.nodes
            if node.op == "call_function" and str(node.target) not in TORCH_ONLY]


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("name", MODELS)
def test_make_fx_matches_torch_make_fx_through_the_table(name, mode):
    model, inputs = ZOO[name]()
    converted = torch_to_tensor(copy.deepcopy(model), inputs)
    values = ValueConverter(conversion_table())
    ours = make_fx(converted, tracing_mode=mode)(*[values.tensor(x) for x in inputs])
    theirs = torch_make_fx(model, tracing_mode=mode, _allow_non_fake_inputs=True)(*inputs)
    assert our_ops(ours) == torch_ops(theirs)


def test_the_rules_drop_only_bookkeeping():
    """Without the rules the graphs differ (so the test above can fail), and what the rules
    drop from torch's graph is only the three kinds named in TORCH_ONLY."""
    model, inputs = ZOO["residual_block"]()
    theirs = torch_make_fx(model)(*inputs)
    targets = [str(n.target) for n in theirs.graph.nodes if n.op == "call_function"]
    assert {"aten.detach.default", "aten.empty.memory_format",
            "<built-in function getitem>", "aten.relu_.default", "aten.add_.Tensor"} \
        <= set(targets)
    converted = torch_to_tensor(copy.deepcopy(model), inputs)
    ours = make_fx(converted)(ValueConverter(conversion_table()).tensor(inputs[0]))
    assert our_ops(ours) != targets


def test_a_primitive_missing_from_the_table_is_named():
    gm = make_fx(lambda x: tensor.exp(x))(tensor.randn(2))
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    with pytest.raises(KeyError, match="tensor.ops.exp"):
        aten_ops(node)
