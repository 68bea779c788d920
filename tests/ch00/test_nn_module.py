"""Module's bookkeeping (registration, traversal, state_dict, hooks, copies) against torch."""

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch

import tensor
import tensor.nn as nn
from tests.ch00.nn_helpers import check, ours, randn, twin


def make_net(lib):
    """The same small network, built from tensor.nn or torch.nn."""
    ones = tensor.ones if lib is nn else torch.ones

    class Block(lib.Module):
        def __init__(self):
            super().__init__()
            self.conv = lib.Conv2d(3, 4, 3, padding=1)
            self.bn = lib.BatchNorm2d(4)
            self.act = lib.ReLU()
            self.register_buffer("scale", ones(1), persistent=False)

        def forward(self, x):
            return self.act(self.bn(self.conv(x))) * self.scale

    class Net(lib.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.shared = lib.Linear(4, 4)
            self.heads = lib.ModuleList([self.shared, lib.Linear(4, 2), self.shared])
            self.table = lib.ModuleDict({"pool": lib.AdaptiveAvgPool2d(1), "flat": lib.Flatten()})
            self.seq = lib.Sequential(lib.Identity(), lib.Sequential(lib.Tanh()))
            self.none_child = None
            self.register_parameter("alpha", lib.Parameter(ones(2)))
            self.register_parameter("empty", None)

        def forward(self, x):
            x = self.table["flat"](self.table["pool"](self.block(x)))
            for head in self.heads[:2]:
                x = head(x)
            return self.seq(x) * self.alpha

    return Net()


class Small(nn.Module):
    """A module-level class, so that pickle can find it."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 2, 3), nn.BatchNorm2d(2), nn.ReLU())
        self.register_buffer("offset", tensor.ones(1))

    def forward(self, x):
        return self.features(x) + self.offset


@pytest.fixture
def nets():
    return twin(make_net(nn), make_net(torch.nn))


def names(pairs):
    return [name for name, _ in pairs]


def test_traversals_match_torch(nets):
    mine, torchs = nets
    assert names(mine.named_modules()) == names(torchs.named_modules())
    assert names(mine.named_modules(remove_duplicate=False)) == names(
        torchs.named_modules(remove_duplicate=False))
    assert names(mine.named_modules(prefix="root")) == names(torchs.named_modules(prefix="root"))
    assert names(mine.named_children()) == names(torchs.named_children())
    assert names(mine.named_parameters()) == names(torchs.named_parameters())
    assert names(mine.named_parameters(remove_duplicate=False)) == names(
        torchs.named_parameters(remove_duplicate=False))
    assert names(mine.named_parameters(recurse=False)) == names(
        torchs.named_parameters(recurse=False))
    assert names(mine.named_buffers()) == names(torchs.named_buffers())
    assert names(mine.block.named_buffers(prefix="b")) == names(
        torchs.block.named_buffers(prefix="b"))
    assert len(list(mine.modules())) == len(list(torchs.modules()))
    assert len(list(mine.children())) == len(list(torchs.children()))
    assert len(list(mine.parameters())) == len(list(torchs.parameters()))
    assert len(list(mine.buffers())) == len(list(torchs.buffers()))
    assert mine.get_submodule("block.bn") is mine.block.bn
    assert mine.get_submodule("heads.1") is mine.heads[1]
    assert mine.get_submodule("") is mine
    assert mine.get_parameter("block.conv.weight") is mine.block.conv.weight
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        mine.get_submodule("block.nope")


def test_repr_of_nested_containers_matches_torch(nets):
    mine, torchs = nets
    assert repr(mine) == repr(torchs)
    pairs = [
        (nn.Sequential(), torch.nn.Sequential()),
        (nn.ModuleList(), torch.nn.ModuleList()),
        (nn.ModuleDict(), torch.nn.ModuleDict()),
        (nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Linear(2, 2), nn.ReLU()]),
         torch.nn.ModuleList([torch.nn.ReLU(), torch.nn.ReLU(), torch.nn.Linear(2, 2),
                              torch.nn.ReLU()])),
        (nn.Sequential(OrderedDict(a=nn.ModuleList([nn.Sequential(nn.Tanh())] * 3))),
         torch.nn.Sequential(OrderedDict(a=torch.nn.ModuleList(
             [torch.nn.Sequential(torch.nn.Tanh())] * 3)))),
    ]
    for ours_, theirs_ in pairs:
        assert repr(ours_) == repr(theirs_)


def test_forward_matches_torch(nets):
    mine, torchs = nets
    x = randn(2, 3, 6, 6)
    for mode in ("train", "eval"):
        getattr(mine, mode)()
        getattr(torchs, mode)()
        assert mine.block.bn.training == (mode == "train")
        check(mine(ours(x)), torchs(torch.from_numpy(x)), 1e-4)


def test_state_dict_round_trip_both_ways(nets):
    mine, torchs = nets
    sd = mine.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == list(torchs.state_dict())
    assert "block.scale" not in sd  # non-persistent buffer
    assert type(sd["block.conv.weight"]) is tensor.Tensor  # detached, like torch
    assert type(mine.state_dict(keep_vars=True)["block.conv.weight"]) is nn.Parameter
    # values share memory with the parameters
    assert np.shares_memory(sd["shared.weight"]._array, mine.shared.weight._array)

    fresh_torch = make_net(torch.nn)
    fresh_torch.load_state_dict({k: torch.from_numpy(np.array(v._array)) for k, v in sd.items()})
    for key, value in fresh_torch.state_dict().items():
        check(sd[key], value)

    fresh = make_net(nn)
    result = fresh.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for key, value in fresh.state_dict().items():
        np.testing.assert_array_equal(value._array, sd[key]._array)
        assert not np.shares_memory(value._array, sd[key]._array)


def test_load_state_dict_errors_name_the_keys():
    layer = nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as err:
        layer.load_state_dict({"weight": tensor.zeros(3, 2), "extra": tensor.zeros(1)})
    message = str(err.value)
    assert 'Error(s) in loading state_dict for Linear' in message
    assert 'Missing key(s) in state_dict: "bias"' in message
    assert 'Unexpected key(s) in state_dict: "extra"' in message
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with shape "
                       r"tensor.Size\(\[2, 2\]\) from checkpoint, the shape in current model is "
                       r"tensor.Size\(\[3, 2\]\)"):
        layer.load_state_dict({"weight": tensor.zeros(2, 2), "bias": tensor.zeros(3)})
    result = layer.load_state_dict({"weight": tensor.ones(3, 2), "extra": tensor.zeros(1)},
                                   strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert (layer.weight._array == 1).all()
    layer.load_state_dict({"weight": tensor.zeros(3, 2), "bias": tensor.zeros(3)}, assign=True)
    assert type(layer.weight) is nn.Parameter and (layer.weight._array == 0).all()


def test_setattr_registration_rules():
    m = nn.Module()
    m.w = nn.Parameter(tensor.ones(2))
    m.child = nn.ReLU()
    m.register_buffer("buf", tensor.zeros(2))
    m.plain = 3
    assert list(m._parameters) == ["w"] and list(m._modules) == ["child"]
    assert list(m._buffers) == ["buf"] and m.__dict__["plain"] == 3
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'w'"):
        m.w = tensor.ones(2)
    m.buf = tensor.ones(3)  # a tensor may replace a buffer
    assert m.buf.shape == (3,)
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'child'"):
        m.child = 1
    m.child = nn.Parameter(tensor.ones(1))  # a name lives in one store only
    assert "child" not in m._modules and "child" in m._parameters
    del m.child
    assert not hasattr(m, "child")
    assert "buf" in dir(m) and "w" in dir(m)
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'missing'"):
        _ = m.missing
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", tensor.ones(1))
    with pytest.raises(KeyError, match="already exists"):
        m.register_parameter("plain", None)

    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required '
                       r'"forward" function'):
        m(tensor.ones(1))

    class Early(nn.Module):
        def __init__(self):
            self.layer = nn.ReLU()

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_hooks():
    layer = nn.Linear(2, 2)
    seen = []
    pre = layer.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    post = layer.register_forward_hook(lambda mod, args, out: seen.append((mod, out)) or out + 1)
    out = layer(tensor.ones(1, 2))
    np.testing.assert_allclose(out._array, layer.bias._array[None] + 1, rtol=1e-6)
    assert seen[0][0] is layer
    pre.remove()
    post.remove()
    assert not layer._forward_hooks and not layer._forward_pre_hooks
    kw = layer.register_forward_pre_hook(lambda mod, args, kwargs: ((tensor.zeros(1, 2),), {}),
                                         with_kwargs=True)
    np.testing.assert_allclose(layer(tensor.ones(1, 2))._array, layer.bias._array[None])
    kw.remove()


def test_train_eval_and_apply(nets):
    mine, torchs = nets
    assert mine.eval() is mine
    assert not any(m.training for m in mine.modules())
    mine.train()
    assert all(m.training for m in mine.modules())
    visited = []
    mine.apply(lambda m: visited.append(type(m).__name__))
    torch_visited = []
    torchs.apply(lambda m: torch_visited.append(type(m).__name__))
    assert visited == torch_visited and visited[-1] == "Net"


def test_deepcopy_and_pickle(nets):
    mine, torchs = nets
    x = randn(2, 3, 6, 6)
    mine.eval()
    for clone in (copy.deepcopy(mine), pickle.loads(pickle.dumps(nn.Sequential(
            nn.Conv2d(3, 2, 3), nn.BatchNorm2d(2), nn.ReLU())))):
        assert isinstance(clone, nn.Module)
    clone = copy.deepcopy(mine)
    assert clone.heads[0] is clone.shared  # sharing is preserved
    assert clone.shared is not mine.shared
    assert type(clone.shared.weight) is nn.Parameter
    assert not np.shares_memory(clone.shared.weight._array, mine.shared.weight._array)
    np.testing.assert_array_equal(clone(ours(x))._array, mine(ours(x))._array)
    model = Small().eval()
    restored = pickle.loads(pickle.dumps(model))
    assert repr(restored) == repr(model)
    np.testing.assert_array_equal(restored(ours(x))._array, model(ours(x))._array)
    frozen = nn.Parameter(tensor.ones(2), requires_grad=False)
    assert copy.deepcopy(frozen).requires_grad is False


def test_parameter():
    data = tensor.ones(2)
    p = nn.Parameter(data)
    assert isinstance(p, tensor.Tensor) and p.requires_grad
    assert np.shares_memory(p._array, data._array)
    assert repr(p) == repr(torch.nn.Parameter(torch.ones(2)))
    assert repr(nn.Parameter(tensor.ones(2, 2, dtype=tensor.float64))) == repr(
        torch.nn.Parameter(torch.ones(2, 2, dtype=torch.float64))).replace("torch.", "tensor.")
    assert repr(nn.Parameter(data, requires_grad=False)) == repr(
        torch.nn.Parameter(torch.ones(2), requires_grad=False))
    assert type(p + 1) is tensor.Tensor  # results of ops are plain tensors, as in torch
    assert type(p.neg()) is tensor.Tensor
    assert nn.Parameter().shape == (0,)


def test_sequential_indexing_and_editing():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is seq[0]
    assert [type(m).__name__ for m in seq] == ["Linear", "ReLU", "Linear"]
    seq.append(nn.Sigmoid())
    seq[1] = nn.Tanh()
    assert isinstance(seq[1], nn.Tanh) and list(seq._modules) == ["0", "1", "2", "3"]
    del seq[0]
    assert list(seq._modules) == ["0", "1", "2"]
    named = nn.Sequential(OrderedDict(first=nn.ReLU(), second=nn.Tanh()))
    assert named.first is named[0]
    with pytest.raises(IndexError):
        seq[5]
    x = randn(4, 3)
    check(seq(ours(x)), torch.sigmoid(torch.tanh(torch.from_numpy(x)) @ torch.from_numpy(
        np.array(seq[1].weight._array)).T + torch.from_numpy(np.array(seq[1].bias._array))))


def test_module_list_and_dict():
    layers = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    layers.append(nn.Sigmoid())
    layers += [nn.Identity()]
    assert len(layers) == 4 and isinstance(layers[-1], nn.Identity)
    assert isinstance(layers[1:], nn.ModuleList) and len(layers[1:]) == 3
    layers.insert(0, nn.GELU())
    assert isinstance(layers[0], nn.GELU) and list(layers._modules) == list("01234")
    del layers[1]
    assert isinstance(layers[1], nn.Tanh) and list(layers._modules) == list("0123")
    table = nn.ModuleDict([("a", nn.ReLU())])
    table["b"] = nn.Tanh()
    table.update({"c": nn.Sigmoid()})
    assert list(table) == ["a", "b", "c"] and "b" in table and len(table) == 3
    assert isinstance(table.pop("a"), nn.ReLU) and list(table.keys()) == ["b", "c"]
    assert [type(v).__name__ for v in table.values()] == ["Tanh", "Sigmoid"]
