"""The fusion pass without running kernels: which nodes are elementwise,
how groups form and split, and the kernel source generated for a group."""

import operator

import numpy as np
import torch

import minifx
import tensor
import tensor.nn.functional as F
from minifx.compiler.elementwise import Pointwise, as_pointwise
from minifx.compiler.fusion import find_groups, fusible_nodes
from minifx.compiler.kernel import kernel_source
from minifx.passes.shape_prop import ShapeProp


def traced(fn, *inputs):
    gm = minifx.symbolic_trace(fn)
    ShapeProp(gm).propagate(*inputs)
    return gm


def group_names(fn, *inputs):
    gm = traced(fn, *inputs)
    return [[n.name for n in g] for g in find_groups(gm.graph, fusible_nodes(gm.graph))]


def node(gm, name):
    (n,) = [n for n in gm.graph.nodes if n.name == name]
    return n


# ---- recognising elementwise nodes ----------------------------------------------
def test_every_spelling_of_an_operation_has_one_canonical_form():
    def f(x, y):
        return (x + y, tensor.add(x, y), x.add(y), 2 - x, x.where(x > 0, y),
                tensor.where(x > 0, x, y), F.relu(x), x.relu(), x.clamp(min=0.5),
                tensor.pow(x, 2), x / 3, x.exp())

    gm = minifx.symbolic_trace(f)
    forms = {n.name: as_pointwise(n) for n in gm.graph.nodes}
    x, y = node(gm, "x"), node(gm, "y")
    assert forms["add"] == forms["add_1"] == forms["add_2"] == Pointwise("add", (x, y))
    assert forms["sub"] == Pointwise("sub", (2, x))
    gt, gt_1 = node(gm, "gt"), node(gm, "gt_1")
    assert forms["where"] == Pointwise("where", (gt, x, y))  # method form reordered
    assert forms["where_1"] == Pointwise("where", (gt_1, x, y))
    assert forms["relu"] == forms["relu_1"] == Pointwise("relu", (x,))
    assert forms["clamp"] == Pointwise("clamp", (x,), low=0.5)
    assert forms["pow_1"] == Pointwise("pow", (x, 2))
    assert forms["truediv"] == Pointwise("div", (x, 3))
    assert forms["exp"] == Pointwise("exp", (x,))
    assert forms["x"] is None and forms["output"] is None


def test_torch_spellings_are_recognised_too():
    def f(x, y):
        return torch.sigmoid(x) * y, torch.nn.functional.relu(x), torch.clamp(x, max=1.0)

    gm = minifx.symbolic_trace(f)
    forms = {n.name: as_pointwise(n) for n in gm.graph.nodes}
    x = node(gm, "x")
    assert forms["sigmoid"] == Pointwise("sigmoid", (x,))
    assert forms["relu"] == Pointwise("relu", (x,))  # kwargs = {inplace: False} is harmless
    assert forms["clamp"] == Pointwise("clamp", (x,), high=1.0)


def test_operations_the_backend_leaves_alone():
    def f(x, y):
        return (x @ y, tensor.add(x, y, alpha=2), F.relu(x, inplace=True), x.sum(), x[0] + 1,
                tensor.softmax(x, 0))

    gm = minifx.symbolic_trace(f)
    forms = {n.name: as_pointwise(n) for n in gm.graph.nodes}
    assert forms["matmul"] is None
    assert forms["add"] is None  # alpha=2
    assert forms["relu"] is None  # in place
    assert forms["sum_1"] is None and forms["softmax"] is None and forms["getitem"] is None
    assert forms["add_1"] is not None  # x[0] + 1 is elementwise


def test_integer_tensors_and_non_tensors_are_not_fused():
    def f(x, n):
        return (x + 1) * 2, x.size(0) + 1

    gm = traced(f, tensor.arange(6).view(2, 3), 3)
    assert fusible_nodes(gm.graph) == {}


# ---- groups ---------------------------------------------------------------------
def test_a_chain_is_one_group():
    def f(x, y):
        return tensor.sigmoid(x) * y + 1

    assert group_names(f, tensor.randn(3, 4), tensor.randn(4)) == [["sigmoid", "mul", "add"]]


def test_matmul_splits_the_chain():
    def f(x, w, b):
        return tensor.relu(x @ w + b) * 2

    assert group_names(f, tensor.randn(2, 3), tensor.randn(3, 4), tensor.randn(4)) == [
        ["add", "relu", "mul"]]


def test_an_intermediate_read_elsewhere_ends_its_group():
    def f(x, y):
        s = tensor.exp(x) + 1  # read by the output too: must stay a real tensor
        return s * y - tensor.tanh(s), s

    groups = group_names(f, tensor.randn(5), tensor.randn(5))
    assert groups == [["exp", "add"], ["mul", "tanh", "sub"]]


def test_a_value_read_by_a_non_elementwise_node_stays_materialised():
    def f(x, w):
        a = tensor.sigmoid(x) * 2
        return (a @ w) + tensor.tanh(a)

    groups = group_names(f, tensor.randn(3, 3), tensor.randn(3, 3))
    # `mul` feeds the matmul: it ends the first group; tanh and add form the second.
    assert groups == [["sigmoid", "mul"], ["tanh", "add"]]


def test_a_diamond_stays_in_one_group():
    def f(x):
        s = tensor.sigmoid(x)
        return s * s + s

    assert group_names(f, tensor.randn(4)) == [["sigmoid", "mul", "add"]]


def test_float_bool_mixtures():
    def f(x):
        return (x > 0) * x  # relu written with a mask: bool * float is float

    assert group_names(f, tensor.randn(4)) == [["gt", "mul"]]


# ---- the generated source -------------------------------------------------------
def test_generated_source_for_a_chain():
    def f(x, y):
        return tensor.sigmoid(x) * y + 1

    gm = traced(f, tensor.randn(3, 4), tensor.randn(4))
    forms = fusible_nodes(gm.graph)
    (members,) = find_groups(gm.graph, forms)
    dtypes = {n: np.dtype(np.float32) for n in gm.graph.nodes}
    name, source, inputs = kernel_source(members, forms, dtypes)
    assert name == "fused_sigmoid_mul_add"
    assert [n.name for n in inputs] == ["x", "y"]
    assert source == (
        "import numpy as np\n"
        "from tensor.backend._kernels import scalar\n"
        "\n"
        "\n"
        "def fused_sigmoid_mul_add(out, x, y):\n"
        '    """sigmoid, mul, add: one pass, no intermediate arrays."""\n'
        "    for i in range(out.size):\n"
        "        sigmoid = scalar.sigmoid(x[i])\n"
        "        mul = sigmoid * y[i]\n"
        "        add = mul + np.float32(1.0)\n"
        "        out[i] = add\n"
    )


def test_generated_source_casts_and_constants():
    def f(x, y):
        t = tensor.where(x > y, x - y, (y / 2) ** 2)
        return t.clamp(min=-1.0, max=float("inf")) + (x > 0) * x

    gm = traced(f, tensor.randn(4, dtype=tensor.float64), tensor.randn(4, dtype=tensor.float64))
    forms = fusible_nodes(gm.graph)
    (members,) = find_groups(gm.graph, forms)
    dtypes = {n: np.dtype(str(n.meta["tensor_meta"].dtype).split(".")[1])
              for n in gm.graph.nodes if "tensor_meta" in n.meta}
    _, source, _ = kernel_source(members, forms, dtypes)
    assert "gt = x[i] > y[i]" in source
    assert "truediv = y[i] / np.float64(2.0)" in source
    assert "pow_1 = truediv ** 2" in source  # a whole exponent: multiplications
    assert "where = sub if gt else pow_1" in source
    assert "clamp = scalar.minimum(scalar.maximum(where, np.float64(-1.0)), np.float64(np.inf))" \
        in source
    assert "mul = np.float64(gt_1) * x[i]" in source  # the bool mask is cast


def test_names_never_collide_with_the_kernel_own_names():
    def f(out, i):
        np = out * i
        return np + 1

    gm = traced(f, tensor.randn(3), tensor.randn(3))
    forms = fusible_nodes(gm.graph)
    (members,) = find_groups(gm.graph, forms)
    dtypes = {n: np.dtype(np.float32) for n in gm.graph.nodes}
    _, source, inputs = kernel_source(members, forms, dtypes)
    assert "def fused_mul_add(out, out_1, i_1):" in source
    assert "mul = out_1[i] * i_1[i]" in source
    compile(source, "<test>", "exec")  # valid Python


def test_every_operator_entry_is_a_binary_or_unary_template():
    from minifx.compiler.elementwise import _OPERATORS
    from minifx.compiler.kernel import TEMPLATES

    assert set(_OPERATORS.values()) <= set(TEMPLATES)
    assert operator.truediv in _OPERATORS


# ---- what the mutation tests asked for (scripts/mutation.py) --------------------
def _runtime(text):
    """The same text built at run time: equal to the literal, not the same object (as in
    a graph read back from a pickle)."""
    return "".join(list(text))


def test_the_method_form_of_where_needs_exactly_its_three_operands():
    g = minifx.Graph()
    x, c, y = g.placeholder("x"), g.placeholder("c"), g.placeholder("y")
    where = g.create_node(_runtime("call_method"), _runtime("where"), (x, c, y))
    assert as_pointwise(where) == Pointwise("where", (c, x, y))
    assert as_pointwise(g.call_method("where", (x, c))) is None
    assert as_pointwise(g.call_method("where", (x, c, y, y))) is None
    assert as_pointwise(g.call_method("where", (x, c), {"other": y})) is None


def test_a_vector_does_not_join_the_rows_of_a_reduction():
    # exp(w) has the shape of one row, not of the rows the sum reads: it stays apart.
    def f(x, w):
        y = x * w.exp()
        return y / y.sum(-1, keepdim=True)

    groups = group_names(f, tensor.randn(4, 8), tensor.randn(8))
    assert ["exp"] in groups
    assert not any("exp" in g and len(g) > 1 for g in groups)


def test_an_operand_in_another_dtype_is_converted_even_to_a_narrower_one():
    def f(x, y):
        return x * y + 1

    gm = traced(f, tensor.randn(4), tensor.randn(4))
    forms = fusible_nodes(gm.graph)
    (members,) = find_groups(gm.graph, forms)
    dtypes = {n: np.dtype(np.float32) for n in gm.graph.nodes}
    dtypes[node(gm, "x")] = np.dtype(np.float64)  # a wider operand, computed in float32
    _, source, _ = kernel_source(members, forms, dtypes)
    assert "mul = np.float32(x[i]) * y[i]" in source


def test_incomplete_or_unbounded_calls_are_not_elementwise():
    g = minifx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    assert as_pointwise(g.call_function(operator.add, (x,))) is None  # an operand missing
    assert as_pointwise(g.call_method("clamp", (x,))) is None  # no bound at all
    assert as_pointwise(g.call_method("clamp", (x,), {"min": y})) is None  # a tensor bound
    assert as_pointwise(g.call_method("clamp", (x,), {"max": 2})) == Pointwise(
        "clamp", (x,), high=2)
