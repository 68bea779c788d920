"""The tracer's bookkeeping of tensors and attributes, and unpacking, against torch.fx."""

import operator

import pytest
import torch
import torch.fx

import minifx
import tensor
from minifx.proxy import Proxy
from minifx.tracer import Tracer
from tests.ch02.ch02_twins import assert_same_trace


def build_shared_tensor(lib):
    class Shared(lib.nn.Module):
        def __init__(self):
            super().__init__()
            t = lib.ones(2)
            self.t = t
            self.a = lib.nn.Module()
            self.b = lib.nn.Module()
            self.a.c = t
            self.b.c = t
            self.a.own = lib.zeros(2)
            self.a.count = 3

        def forward(self, x):
            found = [v for v in (self.t, self.a.own)]  # read, then used as arguments
            return lib.add(lib.add(x, found[0]), found[1])

    return Shared()


def test_a_tensor_at_several_paths_is_read_from_the_last_like_torch_fx():
    ours, _ = assert_same_trace(build_shared_tensor)
    assert [n.target for n in ours.graph.find_nodes(op="get_attr")] == ["b.c", "a.own"]


def test_collect_tensor_attrs_remembers_each_tensor_by_identity():
    root = build_shared_tensor(tensor)
    tracer = Tracer()
    tracer.submodule_paths = {m: name for name, m in root.named_modules()}
    tracer.tensor_attrs = {}
    tracer._collect_tensor_attrs()
    assert tracer.tensor_attrs == {id(root.t): (root.t, "b.c"),
                                   id(root.a.own): (root.a.own, "a.own")}
    torch_root = build_shared_tensor(torch)
    tracer.submodule_paths = {m: name for name, m in torch_root.named_modules()}
    tracer.tensor_attrs = {}
    tracer._collect_tensor_attrs()
    assert {path for _, path in tracer.tensor_attrs.values()} == {"b.c", "a.own"}


def build_taken_names(lib):
    class Taken(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self._tensor_constant0 = "taken"
            self._tensor_constant2 = 5

        def forward(self, x):
            one, two = lib.ones(3), lib.zeros(3)
            return x + one + two + one

    return Taken()


def test_fresh_tensors_take_the_first_free_constant_names_like_torch_fx():
    ours, _ = assert_same_trace(build_taken_names)
    reads = [n.target for n in ours.graph.find_nodes(op="get_attr")]
    assert reads == ["_tensor_constant1", "_tensor_constant3", "_tensor_constant1"]
    x = tensor.randn(3)
    tensor.testing.assert_close(ours(x), x + 2.0)


def test_tensor_constant_reuses_a_known_tensor_and_checks_it_is_the_same():
    tracer = Tracer()
    tracer.root = tensor.nn.Module()
    tracer.graph = minifx.Graph()
    tracer.tensor_attrs = {}
    first, second = tensor.ones(1), tensor.zeros(1)
    a = tracer._tensor_constant(first)
    b = tracer._tensor_constant(first)
    c = tracer._tensor_constant(second)
    assert (a.op, a.target, a.args, a.kwargs) == ("get_attr", "_tensor_constant0", (), {})
    assert a is not b and b.target == "_tensor_constant0" and c.target == "_tensor_constant1"
    assert tracer.root._tensor_constant0 is first and tracer.root._tensor_constant1 is second
    assert tracer.tensor_attrs[id(first)] == (first, "_tensor_constant0")
    # A stale entry (another object under the same id) is not trusted.
    stale = tensor.full((1,), 7.0)
    tracer.tensor_attrs[id(stale)] = (object(), "elsewhere")
    d = tracer._tensor_constant(stale)
    assert d.target == "_tensor_constant2" and tracer.tensor_attrs[id(stale)][0] is stale


def test_proxy_for_attr_finds_by_identity_and_caches_the_proxy():
    tracer = Tracer()
    tracer.graph = minifx.Graph()
    w, equal_w = tensor.ones(2), tensor.ones(2)
    pairs = [("other", equal_w), ("w", w), ("again", w)]
    cache = {}
    first = tracer._proxy_for_attr(w, iter(pairs), cache)
    assert isinstance(first, Proxy) and first.node.target == "w" and cache == {"w": first}
    assert (first.node.op, first.node.args, first.node.kwargs) == ("get_attr", (), {})
    assert tracer._proxy_for_attr(w, iter(pairs), cache) is first
    assert len(tracer.graph.nodes) == 1
    assert tracer._proxy_for_attr(tensor.ones(2), iter(pairs), cache) is None


def build_reads_a_parameter_twice(lib):
    class Twice(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.ones(3))
            self.register_buffer("b", lib.ones(3))

        def forward(self, x):
            return x * self.w + self.w + self.b

    return Twice()


def test_a_parameter_read_twice_is_one_get_attr_like_torch_fx():
    ours, _ = assert_same_trace(build_reads_a_parameter_twice)
    assert [n.target for n in ours.graph.find_nodes(op="get_attr")] == ["w", "b"]


def unpacks_three(x):
    a, b, c = x.chunk(3)
    return a + b * c


def test_unpacking_records_each_item_like_torch_fx():
    ours, theirs = Tracer().trace(unpacks_three), torch.fx.Tracer().trace(unpacks_three)
    assert str(ours).replace("tensor", "torch") == str(theirs)
    getitems = [n.args[1] for n in ours.nodes if n.target is operator.getitem]
    assert getitems == [0, 1, 2]


def loops_over(x):
    return [y for y in x]


@pytest.mark.parametrize("tracer_cls", [Tracer, torch.fx.Tracer], ids=["minifx", "torch.fx"])
def test_a_loop_over_a_proxy_asks_the_tracer(tracer_cls):
    class Counting(tracer_cls):
        asked = 0

        def iter(self, obj):
            Counting.asked += 1
            return iter([obj[0]])

    graph = Counting().trace(loops_over)
    assert Counting.asked == 1
    assert [n.op for n in graph.nodes] == ["placeholder", "call_function", "output"]
    with pytest.raises(Exception, match="cannot be iterated"):
        tracer_cls().trace(loops_over)


def _autowrap_module():
    """A module with what the autowrap scan must take and what it must pass over."""
    import types

    module = types.ModuleType("autowrap_here")
    exec("def public(x):\n    return x\n\n"
         "def _private(x):\n    return x\n\n"
         "class Maker:\n    pass\n\n"
         "constant = 3.5\nname_list = [1]\n", vars(module))
    return module


def test_tracer_init_collects_the_autowrap_ids_like_torch_fx():
    module = _autowrap_module()

    def extra(x):
        return x

    ours = Tracer(autowrap_modules=(module,), autowrap_functions=(extra, len))
    theirs = torch.fx.Tracer(autowrap_modules=(module,), autowrap_functions=(extra, len))
    assert ours._autowrap_function_ids == theirs._autowrap_function_ids
    assert ours._autowrap_function_ids == {id(module.public), id(module.Maker), id(extra),
                                           id(len)}
    assert ours._autowrap_search == theirs._autowrap_search == [module]
    assert type(ours._autowrap_search) is list
    assert ours.submodule_paths is None
    default = Tracer()
    assert default._autowrap_function_ids == torch.fx.Tracer()._autowrap_function_ids
    assert default._autowrap_search == torch.fx.Tracer()._autowrap_search
    # Each instance has its own set: one tracer's functions are not another's.
    assert Tracer(autowrap_modules=())._autowrap_function_ids == set()


def test_create_node_keeps_a_stack_trace_the_graph_gave_like_torch_fx():
    def given_graph(base):
        class Given(base):
            def create_node(self, *args, **kwargs):
                node = super().create_node(*args, **kwargs)
                if node.op == "placeholder":
                    node.stack_trace = "given by the graph"
                return node

        return Given()

    kept = []
    for lib in (minifx, torch.fx):
        tracer = lib.Tracer()
        tracer.graph = given_graph(lib.Graph)
        tracer.record_stack_traces = True
        x = tracer.create_node("placeholder", "x", (), {}, name="inp", type_expr=int)
        y = tracer.create_node("call_function", operator.neg, (x,), {})
        assert (x.name, x.type, y.args) == ("inp", int, (x,))
        kept.append(x.stack_trace)
        if lib is minifx:  # torch.fx finds no user frame outside a trace; ours does
            assert __file__ in y.stack_trace
    assert kept == ["given by the graph"] * 2
