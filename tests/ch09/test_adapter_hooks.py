"""The torch adapter's answers, each checked against torch.fx's own: which module
hooks a trace would lose, which calls dead-code elimination keeps, and what
ShapeProp records about a tensor's layout."""

import functools
import operator

import pytest
import torch
import torch.fx
from torch.fx.passes.shape_prop import _extract_tensor_metadata

import minifx
from minifx.frameworks.torch_framework import (
    TORCH,
    _hooks_of,
    _side_effects,
    refuse_lost_hooks,
    torch_layout,
    torch_qualified_name,
)

# ---- names --------------------------------------------------------------------------
CALLABLES = [
    torch.relu, torch.add, torch.cat, torch.nn.functional.relu, torch.nn.functional.gelu,
    torch._C._nn.linear, torch.Tensor.add, torch.Tensor.size, torch.Tensor.__add__,
    torch.segment_reduce, torch.ops.aten.add.Tensor, torch.ops.aten.add,
    torch.ops.aten.relu.default, torch.nn.functional.softmax, torch.ones_like,
]


@pytest.mark.parametrize("func", CALLABLES, ids=str)
def test_a_torch_callable_is_spelled_as_torch_fx_spells_it(func):
    assert torch_qualified_name(func) == torch.fx.node._get_qualified_name(func)


def test_callables_that_are_not_torch_s_have_no_torch_name():
    import math

    assert torch_qualified_name(math.sqrt) is None
    assert torch_qualified_name(operator.add) is None
    assert torch_qualified_name(functools.partial(torch.relu)) is None  # no __name__
    assert torch_qualified_name(str.upper) is None  # a method descriptor of another type
    assert torch_qualified_name(torch.Tensor.shape.__get__) is None


@pytest.mark.parametrize("func", [
    torch.Tensor.add, torch.Tensor.__add__, torch.Tensor.size, torch.Tensor.shape.__get__,
    torch.Tensor.T.__get__, torch.relu, torch.add, torch.nn.functional.relu, len,
], ids=str)
def test_tensor_methods_and_properties_are_what_torch_overrides_says(func):
    is_method = torch.overrides.is_tensor_method_or_property(func)
    assert TORCH.method_name(func) == (func.__name__ if is_method else None)


def test_a_callable_without_a_name_is_no_method():
    assert TORCH.method_name(functools.partial(torch.relu)) is None


# ---- hooks ---------------------------------------------------------------------
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())

    def forward(self, x):
        return self.inner(x) + 1


def save(module, args, output):
    return None


def shift(module, args):
    return None


class Counter:
    def __call__(self, module, args, output):
        return None


def test_hooks_are_named_pre_hooks_first_in_the_order_registered():
    m = torch.nn.Linear(2, 2)
    assert _hooks_of(m) == []
    m.register_forward_hook(save)
    m.register_forward_hook(Counter())
    m.register_forward_hook(functools.partial(save))
    m.register_forward_pre_hook(shift)
    assert _hooks_of(m) == ["forward pre-hook shift", "forward hook save",
                            "forward hook Counter", "forward hook partial"]


def test_a_module_with_hooks_is_refused_naming_where_and_what():
    m = Net()
    refuse_lost_hooks(m, "")  # no hooks: nothing to say
    m.inner.register_forward_hook(save)
    m.inner.register_forward_pre_hook(shift)
    with pytest.raises(RuntimeError) as error:
        refuse_lost_hooks(m.inner, "inner")
    assert str(error.value) == (
        "cannot trace submodule 'inner' (Sequential): it has forward pre-hook shift, "
        "forward hook save, which tracing would lose because its forward is recorded op "
        "by op. Remove the hook, or make the module a leaf (override "
        "Tracer.is_leaf_module) so that the GraphModule calls it and its hooks run.")
    m.register_forward_hook(save)
    with pytest.raises(RuntimeError, match=r"^cannot trace the root module \(Net\): it has "
                                           r"forward hook save, which"):
        refuse_lost_hooks(m, "")
    only_inner = Net()
    only_inner.inner.register_forward_hook(save)
    with pytest.raises(RuntimeError, match=r"submodule 'inner' \(Sequential\)"):
        minifx.symbolic_trace(only_inner)  # the tracer asks the adapter


# ---- dead-code elimination --------------------------------------------------------
aten = torch.ops.aten
TARGETS = [
    operator.add, operator.setitem, print, torch.relu, torch.randn, torch.rand_like,
    torch.randint, torch.randperm, torch.bernoulli, torch.normal, torch.multinomial,
    torch._assert, torch._assert_async, torch._C._set_grad_enabled,
    torch.amp.autocast_mode._enter_autocast, torch.amp.autocast_mode._exit_autocast,
    aten.add.Tensor, aten.add_.Tensor, aten.copy_.default, aten.add_, aten.relu,
    aten.rand.default, aten.bernoulli.default, aten.normal.Tensor_Tensor, aten.rand,
    aten._assert_async.msg, aten._assert_scalar.default,
    aten.sym_constrain_range.default, aten.dropout.default, aten.native_dropout.default,
]


@pytest.mark.parametrize("impure_random", [True, False])
@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_dead_code_elimination_keeps_the_torch_calls_torch_fx_keeps(target, impure_random):
    verdicts = []
    for fx in (minifx, torch.fx):
        g = fx.Graph()
        x = g.placeholder("x")
        call = g.call_function(target, (x,))
        g.output(x)
        verdicts.append(call.is_impure(impure_random))
    assert verdicts[0] == verdicts[1], f"minifx: {verdicts[0]}, torch.fx: {verdicts[1]}"
    assert TORCH.has_side_effect(target, impure_random) is verdicts[1] or \
        target in (operator.setitem,)  # setitem: the core's own rule, not torch's


def test_the_side_effect_set_is_the_named_objects_this_torch_has():
    from minifx.frameworks.torch_framework import _SIDE_EFFECT_NAMES, _torch_objects

    found = _torch_objects(_SIDE_EFFECT_NAMES)
    assert isinstance(found, frozenset)
    assert {torch._assert, torch.randn, torch._C._set_grad_enabled,
            torch.amp.autocast_mode._enter_autocast, aten._assert_async.msg} <= found
    assert torch.relu not in found and aten.add.Tensor not in found
    assert len(found) == 21  # every name of _SIDE_EFFECT_NAMES is in this torch
    assert _side_effects() == found and _side_effects() is _side_effects()  # looked up once


def test_a_name_this_torch_lacks_is_skipped():
    from minifx.frameworks.torch_framework import _torch_objects

    names = ["_assert", "no_such_function", "amp.no_such_module.enter", "rand", "rand"]
    assert _torch_objects(names) == frozenset({torch._assert, torch.rand})
    assert _torch_objects([]) == frozenset()


# ---- the layout ShapeProp records -------------------------------------------------
def _tensors():
    x = torch.randn(2, 3, 4, 5)
    q = torch.quantize_per_tensor(torch.randn(3, 4), 0.1, 3, torch.quint8)
    sym = torch.quantize_per_tensor(torch.randn(3, 4), 0.2, 0, torch.qint8)
    per_channel = torch.quantize_per_channel(torch.randn(3, 4), torch.tensor([0.1, 0.2, 0.3]),
                                             torch.tensor([1, 2, 3]), 0, torch.quint8)
    return {
        "contiguous": x,
        "channels_last": x.to(memory_format=torch.channels_last),
        "channels_last_3d": torch.randn(1, 2, 3, 4, 5).to(memory_format=torch.channels_last_3d),
        "transposed": x.transpose(1, 2),
        "one element": torch.randn(1, 1, 1, 1),
        "per tensor": q,
        "per tensor, qint8": sym,
        "per channel": per_channel,
        "per channel, float zero points": torch.quantize_per_channel(
            torch.randn(2, 3), torch.tensor([0.1, 0.2, 0.3]), torch.tensor([0.5, 1.0, 0.0]), 1,
            torch.quint8),
        "sparse": torch.randn(3, 4).to_sparse(),
    }


LAYOUTS = ["contiguous", "channels_last", "channels_last_3d", "transposed", "one element",
           "per tensor", "per tensor, qint8", "per channel", "per channel, float zero points",
           "sparse"]


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor:UserWarning")
@pytest.mark.parametrize("name", LAYOUTS)
def test_the_layout_is_what_torch_fx_records(name):
    t = _tensors()[name]
    ours, theirs = torch_layout(t), _extract_tensor_metadata(t)
    assert ours.stride == theirs.stride
    assert ours.memory_format == theirs.memory_format
    assert ours.is_quantized == theirs.is_quantized
    assert ours.qparams == theirs.qparams
    assert list(ours.qparams) == list(theirs.qparams)  # the same keys, in the same order
