"""How a GraphModule is built, copied and trimmed, each step against torch.fx.

The exercises of graph_module.py (the module class a root asks for, the
attributes copied from a module root or installed from a dict root, deep
copies, deleting unused submodules, the readable print) are checked here on
the same structures built in both libraries.
"""

import copy
import operator

import pytest
import torch
import torch.fx as tfx

import minifx
import tensor
import tensor.nn as nn
from minifx import graph_module as gm_module
from minifx._framework import framework_of, tensor_framework

LIBS = [(minifx, tensor), (tfx, torch)]
LIB_IDS = ["minifx", "torch.fx"]


def graph_reading(fx, *targets, op="get_attr"):
    """A graph that reads each target (get_attr, or call_module on the input)."""
    g = fx.Graph()
    x = g.placeholder("x")
    outs = [g.get_attr(t) if op == "get_attr" else g.call_module(t, (x,)) for t in targets]
    g.output(tuple(outs))
    return g


# -- the module class a root asks for (_module_base_for) ---------------------

@pytest.mark.parametrize("root, expected", [
    (lambda: {}, nn.Module),
    (lambda: {"k": 3}, nn.Module),
    (lambda: {"m": nn.Linear(2, 2)}, nn.Module),
    (lambda: {"t": tensor.ones(2)}, nn.Module),
    (lambda: {"m": torch.nn.Linear(2, 2)}, torch.nn.Module),
    (lambda: {"t": torch.ones(2)}, torch.nn.Module),
    (lambda: {"k": 3, "f": len, "t": torch.ones(2)}, torch.nn.Module),
    (lambda: {"t": tensor.ones(2), "m": torch.nn.Linear(2, 2)}, nn.Module),
    (lambda: {"m": torch.nn.Linear(2, 2), "t": tensor.ones(2)}, torch.nn.Module),
    (lambda: nn.Linear(2, 2), nn.Module),
    (lambda: torch.nn.Linear(2, 2), torch.nn.Module),
], ids=["empty", "int", "tensor-module", "tensor", "torch-module", "torch-tensor",
        "first-module-or-tensor", "tensor-first", "torch-first", "tensor-root", "torch-root"])
def test_the_root_decides_the_module_class(root, expected):
    made = root()
    assert gm_module._module_base_for(made) is expected
    gm = minifx.GraphModule(made, minifx.Graph())
    assert type(gm)._module_base is expected and isinstance(gm, expected)


# -- installing one value (_install) -----------------------------------------

@pytest.mark.parametrize("fx, lib", LIBS, ids=LIB_IDS)
def test_a_dict_root_installs_tensors_as_buffers_and_the_rest_as_attributes(fx, lib):
    weight = lib.nn.Parameter(lib.ones(2))
    lin = lib.nn.Linear(2, 2)
    root = {"w": weight, "t": lib.ones(3), "sub.b": lib.zeros(2), "lin": lin, "k": 5}
    gm = fx.GraphModule(root, graph_reading(fx, *root))
    assert dict(gm.named_buffers()).keys() == {"t", "sub.b"}
    assert dict(gm.named_parameters()).keys() == {"w", "lin.weight", "lin.bias"}
    assert gm.w is weight and gm.lin is lin and gm.k == 5 and gm.t is root["t"]
    assert sorted(gm.state_dict()) == ["lin.bias", "lin.weight", "sub.b", "t", "w"]


def test_install_asks_the_frameworks_table_first_and_fills_it():
    class Pretend:
        """A framework that says: nothing is a tensor."""

        def is_tensor(self, value):
            return False

        def is_parameter(self, value):
            return False

    module = nn.Module()
    value = tensor.ones(2)
    frameworks = {type(value): Pretend()}
    gm_module._install(module, "n", value, frameworks)
    assert module.n is value and "n" not in dict(module.named_buffers())  # the table answered
    module = nn.Module()
    frameworks = {}
    gm_module._install(module, "v", value, frameworks)
    assert frameworks[type(value)] is tensor_framework()
    assert dict(module.named_buffers()) == {"v": value}
    gm_module._install(module, "c", 1.5, frameworks)
    assert frameworks[float] is framework_of(1.5) and module.c == 1.5
    assert "c" not in dict(module.named_buffers())
    plain = nn.Module()
    gm_module._install(plain, "b", tensor.ones(1))  # no table: framework_of answers
    assert "b" in dict(plain.named_buffers())


# -- walking to a parent (_parent_of) ----------------------------------------

def test_parent_of_makes_the_missing_modules_and_remembers_each_path():
    gm = minifx.GraphModule({}, minifx.Graph())
    walked = {}
    parent, field = gm._parent_of("a.b.c", walked)
    assert field == "c" and parent is gm.a.b and type(gm.a) is nn.Module
    assert "a" in gm._modules and "b" in gm.a._modules
    assert walked == {"a.b": gm.a.b}
    assert gm._parent_of("top", walked) == (gm, "top") and walked[""] is gm
    stand_in = nn.Module()
    walked["q"] = stand_in
    assert gm._parent_of("q.z", walked) == (stand_in, "z")  # remembered: not walked again
    assert not hasattr(gm, "q")
    assert gm._parent_of("x.y") == (gm.x, "y") and isinstance(gm.x, nn.Module)


def test_parent_of_refuses_a_non_module_on_the_way():
    g = minifx.Graph()
    g.output(g.get_attr("p"))
    gm = minifx.GraphModule({"p": tensor.ones(2)}, g)
    gm.k = 3
    walked = {}
    assert gm._parent_of("p.x", walked) is None and gm._parent_of("k.x") is None
    assert walked == {}
    torch_gm = minifx.GraphModule(torch.nn.Module(), minifx.Graph())
    torch_gm.add_module("t", torch.nn.Linear(1, 1))
    torch_gm.other = nn.Linear(1, 1)  # a module, but of the other framework
    assert torch_gm._parent_of("t.z") == (torch_gm.t, "z")
    assert torch_gm._parent_of("other.z") is None


# -- copying from a module root (_copy_attr, __init__) -----------------------

def _module_tree(lib):
    root = lib.nn.Module()
    root.a = lib.nn.Module()
    root.a.b = lib.nn.Linear(2, 2)
    root.a.c = lib.nn.Linear(2, 2)
    root.a.b.register_buffer("s", lib.ones(2))
    root.plain = lib.ones(3)  # a tensor that is neither parameter nor buffer
    root.other = lib.nn.Linear(1, 1)
    return root


def _shape_of(gm, root):
    """Each module's and tensor's path, and whether it is the root's object."""
    def objects(m):
        return {**dict(m.named_modules()), **dict(m.named_parameters()),
                **dict(m.named_buffers())}
    ours, theirs = objects(gm), objects(root)
    return {name: (type(obj).__name__, name in theirs and theirs[name] is obj)
            for name, obj in ours.items()}


@pytest.mark.parametrize("targets", [
    ("a.b.weight", "a.b.bias"),
    ("a.b", "a.b.weight"),
    ("a.b.weight", "a.b", "a.b.bias"),
    ("a.b.s", "a.c.weight", "a", "a.b.weight"),
    ("plain", "a.c.bias"),
], ids=["siblings", "module-first", "module-between", "parent-later", "plain-tensor"])
def test_a_module_root_copies_what_the_graph_names_like_torch_fx(targets):
    shapes = []
    for fx, lib in LIBS:
        root = _module_tree(lib)
        ops = ["call_module" if isinstance(_get(root, t), lib.nn.Module) else "get_attr"
               for t in targets]
        g = fx.Graph()
        x = g.placeholder("x")
        outs = [g.get_attr(t) if op == "get_attr" else g.call_module(t, (x,))
                for t, op in zip(targets, ops)]
        g.output(tuple(outs))
        gm = fx.GraphModule(root, g)
        shapes.append(_shape_of(gm, root))
    assert shapes[0] == shapes[1]


@pytest.mark.parametrize("fx, lib", LIBS, ids=LIB_IDS)
def test_modules_are_compared_by_identity_not_equality(fx, lib):
    class Agreeable(lib.nn.Module):
        """Equal to everything: only `is` tells it apart."""

        def __eq__(self, other):
            return True

        __hash__ = lib.nn.Module.__hash__

        def forward(self, x):
            return x

    root = lib.nn.Module()
    root.p = Agreeable()
    root.p.q = Agreeable()
    root.p.q.r = Agreeable()
    gm = fx.GraphModule(root, graph_reading(fx, "p.q.r", "p.q", op="call_module"))
    assert gm.p is not root.p and gm.p.q is root.p.q
    assert [name for name, _ in gm.named_modules()] == ["", "p", "p.q", "p.q.r"]


def _get(obj, path):
    for atom in path.split("."):
        obj = getattr(obj, atom)
    return obj


@pytest.mark.parametrize("fx, lib", LIBS, ids=LIB_IDS)
def test_a_plain_tensor_attribute_becomes_a_buffer(fx, lib):
    root = _module_tree(lib)
    gm = fx.GraphModule(root, graph_reading(fx, "plain"))
    assert dict(gm.named_buffers()) == {"plain": root.plain}


def test_the_missing_parts_of_a_target_are_named():
    root = _module_tree(tensor)
    with pytest.raises(RuntimeError) as on_the_way:
        minifx.GraphModule(root, graph_reading(minifx, "a.zz.weight"))
    assert str(on_the_way.value) == ("GraphModule: node a_zz_weight (get_attr) targets "
                                     "'a.zz.weight', but the root has no 'zz' on the way")
    with pytest.raises(RuntimeError) as at_the_end:
        minifx.GraphModule(root, graph_reading(minifx, "a.b.gone"))
    assert str(at_the_end.value) == ("GraphModule: node a_b_gone (get_attr) targets "
                                     "'a.b.gone', but the root has no attribute 'gone'")


def test_siblings_walk_their_path_once():
    reads = []

    class Counting(nn.Module):
        def __getattr__(self, name):
            reads.append(name)
            return super().__getattr__(name)

    root = Counting()
    root.a = _module_tree(tensor).a
    minifx.GraphModule(root, graph_reading(minifx, "a.b.weight", "a.b.bias", "a.c.weight",
                                           "a.c.bias"))
    assert reads.count("a") == 2  # once for a.b, once for a.c


def test_copy_attr_remembers_the_walked_paths_and_forgets_what_it_replaces():
    root = _module_tree(tensor)
    gm = minifx.GraphModule(root, minifx.Graph())
    g = graph_reading(minifx, "a.b.weight", "a.b.s", "a.b", "a.c.weight")
    nodes = {n.target: n for n in g.nodes if n.op == "get_attr"}
    walked = {}
    gm._copy_attr(root, nodes["a.b.weight"], walked)
    ours_b = gm.a.b
    assert walked == {"a.b": (root.a.b, ours_b)} and ours_b is not root.a.b
    gm._copy_attr(root, nodes["a.b.s"], walked)
    assert gm.a.b is ours_b and dict(ours_b.named_buffers()) == {"s": root.a.b.s}
    gm._copy_attr(root, nodes["a.c.weight"], walked)
    assert set(walked) == {"a.b", "a.c"}
    walked["a.b.deeper"] = ("stale", "stale")
    gm._copy_attr(root, nodes["a.b"], walked)  # replaces our a.b by the root's
    assert gm.a.b is root.a.b and set(walked) == {"a", "a.c"}
    gm._copy_attr(root, nodes["a.b.weight"])  # without a table: already copied whole
    assert gm.a.b is root.a.b


def test_init_shares_its_tables_and_names_the_class(monkeypatch):
    seen = {"copy": set(), "parent": set(), "install": set()}
    copy_attr, parent_of, install = (minifx.GraphModule._copy_attr,
                                     minifx.GraphModule._parent_of, gm_module._install)

    def spy_copy(self, from_module, node, walked=None):
        seen["copy"].add(id(walked) if walked is not None else None)
        return copy_attr(self, from_module, node, walked)

    def spy_parent(self, target, walked=None):
        seen["parent"].add(id(walked) if walked is not None else None)
        return parent_of(self, target, walked)

    def spy_install(module, field, value, frameworks=None):
        seen["install"].add(id(frameworks) if frameworks is not None else None)
        return install(module, field, value, frameworks)

    monkeypatch.setattr(minifx.GraphModule, "_copy_attr", spy_copy)
    monkeypatch.setattr(minifx.GraphModule, "_parent_of", spy_parent)
    monkeypatch.setattr(gm_module, "_install", spy_install)
    root = _module_tree(tensor).eval()
    gm = minifx.GraphModule(root, graph_reading(minifx, "a.b.weight", "a.c.weight", "plain"),
                            "Mine")
    assert len(seen["copy"]) == 1 and None not in seen["copy"]
    assert type(gm).__name__ == type(gm).__qualname__ == "Mine"
    assert gm.meta == {} and gm.training is False
    assert minifx.GraphModule(nn.Module(), minifx.Graph()).training is True
    seen["install"].clear()
    minifx.GraphModule({"a.x": tensor.ones(1), "a.y": tensor.ones(1), "b": 2},
                       graph_reading(minifx, "a.x", "a.y", "b"))
    assert len(seen["parent"]) == 1 and None not in seen["parent"]
    assert len(seen["install"]) == 1 and None not in seen["install"]


@pytest.mark.parametrize("fx, lib", LIBS, ids=LIB_IDS)
def test_a_dict_root_missing_a_target_is_refused(fx, lib):
    g = graph_reading(fx, "here", "not.here")
    with pytest.raises(RuntimeError) as caught:
        fx.GraphModule({"here": lib.ones(1)}, g)
    if fx is minifx:
        assert str(caught.value) == ("GraphModule: node not_here (get_attr) targets "
                                     "'not.here', which is not a key of the root dict")
    else:
        assert "not.here" in str(caught.value)


@pytest.mark.parametrize("order", [("a.b.c", "a", "a.b"), ("a", "a.b.c", "a.b"),
                                   ("a.b", "a.b.c", "a")])
def test_a_dict_root_installs_shallow_targets_first_like_torch_fx(order):
    shapes = []
    for fx, lib in LIBS:
        objects = {"a": lib.nn.Module(), "a.b": lib.nn.Module(), "a.b.c": lib.ones(2)}
        root = {t: objects[t] for t in order}
        ops = ["get_attr" if t == "a.b.c" else "call_module" for t in order]
        g = fx.Graph()
        x = g.placeholder("x")
        g.output(tuple(g.get_attr(t) if op == "get_attr" else g.call_module(t, (x,))
                       for t, op in zip(order, ops)))
        gm = fx.GraphModule(root, g)
        shapes.append({name: next((t for t, o in objects.items() if o is obj), None)
                       for name, obj in [*gm.named_modules(), *gm.named_buffers()]})
    assert shapes[0] == shapes[1]


def test_a_torch_root_passes_training_like_torch_fx():
    root = torch.nn.Linear(2, 2).eval()
    g = minifx.Graph()
    g.output(g.get_attr("weight"))
    assert minifx.GraphModule(root, g).training is tfx.GraphModule(root, tfx.Graph()).training


# -- deep copies (__deepcopy__) ----------------------------------------------

@pytest.mark.parametrize("fx, lib", LIBS, ids=LIB_IDS)
def test_deepcopy_keeps_the_identities_a_memo_shares(fx, lib):
    root = _module_tree(lib)
    gm = fx.GraphModule(root, graph_reading(fx, "a.b.weight"), "Named")
    gm.meta["me"] = gm
    box = copy.deepcopy({"gm": gm, "graph": gm.graph, "w": gm.a.b.weight})
    other = box["gm"]
    assert other.meta["me"] is other and other.graph is box["graph"]
    assert other.a.b.weight is box["w"] and other.a.b.weight is not gm.a.b.weight
    assert type(other) is not type(gm)
    if fx is minifx:  # torch.fx's copy is named GraphModule again; minifx keeps the name
        assert type(other).__name__ == "Named"
    assert other.graph.owning_module is other


def test_deepcopy_gets_a_class_of_its_own_next_to_the_original():
    gm = minifx.GraphModule(_module_tree(tensor), graph_reading(minifx, "a.b.weight"), "Named")
    other = copy.deepcopy(gm)
    assert type(other).__bases__ == type(gm).__bases__
    assert type(other).__qualname__ == "Named" and type(other).forward is not type(gm).forward
    assert other.code == gm.code


def test_deepcopy_runs_a_subclass_s_own_recompile():
    class Counting(minifx.GraphModule):
        compiled = 0

        def recompile(self, reuse=None):
            Counting.compiled += 1
            return super().recompile()

    gm = Counting(_module_tree(tensor), graph_reading(minifx, "a.b.weight"))
    before = Counting.compiled
    other = copy.deepcopy(gm)
    assert Counting.compiled == before + 1 and isinstance(other, Counting)
    assert other.graph is not gm.graph and other.graph.owning_module is other


def test_deepcopy_installs_the_graph_through_a_subclass_s_own_recompile():
    class Plain(minifx.GraphModule):
        def recompile(self):  # no `reuse`: only the setter may call it
            self.recompiled = True
            return super().recompile()

    gm = Plain(_module_tree(tensor), graph_reading(minifx, "a.b.weight"))
    other = copy.deepcopy(gm)
    assert other.recompiled is True and other.code == gm.code


# -- deleting what no node reaches (delete_all_unused_submodules) ------------

def _deep_tree(lib):
    root = lib.nn.Module()
    for path in ("a", "a.x", "a.x.y", "b", "b.c", "b.c.e", "b.d", "f", "f.g", "h"):
        *parent, name = path.split(".")
        holder = _get(root, ".".join(parent)) if parent else root
        holder.add_module(name, lib.nn.Identity() if path in ("a", "f.g") else lib.nn.Module())
    root.b.c.register_buffer("w", lib.ones(1))
    return root


def test_delete_all_unused_submodules_like_torch_fx():
    kept = []
    for fx, lib in LIBS:
        g = fx.Graph()
        x = g.placeholder("x")
        r = g.call_module("a", (x,))
        g.get_attr("b")  # a module read as an attribute keeps no submodule of it
        w = g.get_attr("b.c.w")
        s = g.call_function(operator.add, (r, w))
        s2 = g.call_module("f.g", (s,))
        g.output(g.call_function(operator.neg, (s2,)))
        gm = fx.GraphModule(_deep_tree(lib), g)
        for name in ("h", "b.d", "b.c.e", "f.g.z"):
            parent, _, atom = name.rpartition(".")
            _get(gm, parent).add_module(atom, lib.nn.Module()) if parent else gm.add_module(
                atom, lib.nn.Module())
        _get(gm, "a").add_module("inner", lib.nn.Module())
        gm.delete_all_unused_submodules()
        kept.append([name for name, _ in gm.named_modules()])
    assert kept[0] == kept[1]
    assert "a.inner" in kept[0] and "f.g.z" in kept[0] and "b.c.e" not in kept[0]


def test_delete_all_unused_submodules_passes_over_a_target_not_installed_yet():
    gm = minifx.GraphModule(_deep_tree(tensor), graph_reading(minifx, "a", op="call_module"))
    gm.add_module("spare", nn.Module())
    first = gm.graph.find_nodes(op="call_module")[0]
    with gm.graph.inserting_before(first):  # met before "a": the walk goes on past it
        gm.graph.call_module("later", (gm.graph.find_nodes(op="placeholder")[0],))
    gm.delete_all_unused_submodules()
    assert [name for name, _ in gm.named_modules()] == ["", "a", "a.x", "a.x.y"]


# -- the readable print (print_readable) -------------------------------------

def test_print_readable_of_nested_graph_modules_like_torch_fx(capsys):
    texts = []
    for fx, lib in LIBS:
        def leaf(name, fx=fx, lib=lib):
            g = fx.Graph()
            v = g.placeholder("v")
            g.output(g.call_function(operator.neg, (v,)))
            return fx.GraphModule(lib.nn.Module(), g, name)

        root = lib.nn.Module()
        root.first = leaf("First")
        root.plain = lib.nn.Linear(2, 2)
        root.second = leaf("Second")
        g = fx.Graph()
        x = g.placeholder("x")
        y = g.call_module("first", (x,))
        z = g.call_module("plain", (y,))
        g.output(g.call_module("second", (z,)))
        gm = fx.GraphModule(root, g, "Outer")
        text = gm.print_readable(print_output=True)
        assert capsys.readouterr().out == text + "\n"
        texts.append(text)
    assert texts[0] == texts[1].replace("torch", "tensor")


# -- deleting one submodule (delete_submodule) -------------------------------

@pytest.mark.parametrize("target", ["a.x.y", "a.x", "b.c", "b.c.w", "b.c.w.z", "nothing",
                                    "nothing.here", "b.c.e", "h", "f.g.z", "k", "k.z"])
def test_delete_submodule_like_torch_fx(target):
    answers, kept = [], []
    for fx, lib in LIBS:
        gm = fx.GraphModule(_deep_tree(lib), graph_reading(fx, "a", "b", "f", "h",
                                                         op="call_module"))
        gm.k = 3  # a plain attribute: neither a module nor a way to one
        answers.append(gm.delete_submodule(target))
        kept.append([name for name, _ in [*gm.named_modules(), *gm.named_buffers()]])
        assert gm.k == 3
    assert answers[0] == answers[1] and kept[0] == kept[1]


# -- pickling (__reduce__, _rebuild_graph_module) ----------------------------

class Picklable(minifx.GraphModule):
    """A user subclass, importable by name, for the pickle tests."""


def test_pickle_keeps_the_subclass_the_name_and_the_state():
    import pickle

    gm = Picklable(_module_tree(tensor), graph_reading(minifx, "a.b.weight", "plain"), "Named")
    gm.meta["note"] = "kept"
    gm.eval()
    logic, base, state, graph, name = gm.__reduce__()[1]
    assert (logic, base, graph, name) == (Picklable, nn.Module, gm.graph, "Named")
    assert state == gm._state() and "_graph" not in state and "_code" not in state
    back = pickle.loads(pickle.dumps(gm))
    assert isinstance(back, Picklable) and type(back) is not type(gm)
    assert type(back).__bases__[0] is type(gm).__bases__[0]
    assert type(back).__name__ == type(back).__qualname__ == "Named"
    assert back.meta == {"note": "kept"} and back.training is False
    assert back.code == gm.code and back.graph.owning_module is back
    assert dict(back.named_buffers()).keys() == {"plain"}
    plain = pickle.loads(pickle.dumps(minifx.GraphModule({}, minifx.Graph())))
    assert type(plain).__bases__[0].__bases__ == (minifx.GraphModule, nn.Module)


def test_rebuild_does_not_run_init_and_compiles_the_graph(monkeypatch):
    graph = graph_reading(minifx, "w")
    state = {"w": tensor.ones(1)}
    monkeypatch.setattr(minifx.GraphModule, "__init__", None)  # must not be called
    gm = gm_module._rebuild_graph_module(minifx.GraphModule, nn.Module, dict(state), graph, "R")
    assert type(gm).__name__ == type(gm).__qualname__ == "R" and gm.w is state["w"]
    assert gm.graph is graph and "w = self.w" in gm.code
    assert type(gm).__bases__[0]._module_base is nn.Module
