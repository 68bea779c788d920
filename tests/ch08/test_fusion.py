"""The fusion pass without running kernels: which nodes are elementwise,
how groups form and split, and the kernel source generated for a group."""

import operator

import numpy as np
import torch

import minifx
import tensor
import tensor.nn.functional as F
from minifx.compiler.elementwise import Pointwise, Reduction, as_pointwise, as_reduction
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
        "from tensor.backend.kernels import scalar\n"
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


# ---- the rules beneath: names, bindings, reductions, dtypes ---------------------
def _graph_with_call(target, args, kwargs=None):
    """A graph ``x -> target(*args)`` built by hand (``x`` stands for the placeholder)."""
    graph = minifx.Graph()
    x = graph.placeholder("x")
    args = tuple(x if a == "x" else a for a in args)
    call = graph.call_function(target, args, kwargs or {})
    graph.output(call)
    return call


def test_only_the_libraries_own_functions_are_elementwise():
    # numpy.exp and numpy.sum share their last names with tensor's, not their package.
    assert as_pointwise(_graph_with_call(np.exp, ("x",))) is None
    assert as_reduction(_graph_with_call(np.sum, ("x", -1, True)), 2) is None
    exp = _graph_with_call(tensor.exp, ("x",))
    assert as_pointwise(exp) == Pointwise("exp", exp.args)
    gm = minifx.symbolic_trace(ReluThenSigmoid())
    forms = {n.op: as_pointwise(n) for n in gm.graph.nodes}
    assert forms["call_module"] is None  # a module, even one that computes relu
    assert forms["call_method"] == Pointwise("sigmoid", (node(gm, "act"),))


class ReluThenSigmoid(tensor.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = tensor.nn.ReLU()

    def forward(self, x):
        return self.act(x).sigmoid()


def test_arguments_bind_by_name_and_only_harmless_keywords_pass():
    from minifx.compiler.elementwise import _bind

    two = ("input", "other")
    assert _bind(two, (1, 2), {}) == {"input": 1, "other": 2}
    assert _bind(two, (1,), {"other": 2}) == {"input": 1, "other": 2}
    assert _bind(two, (), {"other": 2}) == {"other": 2}  # missing ones are just missing
    assert _bind(two, (1,), {"alpha": 1, "other": 2}) == {"input": 1, "other": 2}
    assert _bind(("input",), (1,), {"inplace": False, "rounding_mode": None}) == {"input": 1}
    assert _bind(("input",), (1, 2), {}) is None  # more args than parameters
    assert _bind(two, (1,), {"input": 3}) is None  # the same parameter twice
    assert _bind(two, (1, 2), {"alpha": 2}) is None
    assert _bind(("input",), (1,), {"inplace": True}) is None
    assert _bind(("input",), (1,), {"rounding_mode": "floor"}) is None
    assert _bind(("input",), (1,), {"out": None}) is None  # not a harmless keyword at all


def test_every_spelling_of_a_row_reduction():
    def f(x):
        return (x.sum(-1, keepdim=True), tensor.sum(x, dim=1, keepdim=True),
                x.mean((-1,), True), tensor.amax(x, [1], keepdim=True),
                x.sum(-1, keepdim=True, dtype=None), torch.sum(x, -1, keepdim=True),
                x.sum(0, keepdim=True), x.amax(-1), x.sum(-1, keepdim=1),
                x.sum(True, keepdim=True), x.mean(-1, keepdim=True, dtype=tensor.float64),
                x.sum((0, 1), keepdim=True), x.prod(-1, keepdim=True), x.sum(-1, True, None))

    gm = minifx.symbolic_trace(f)
    x = node(gm, "x")
    calls = [n for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
    forms = [as_reduction(n, 2) for n in calls]
    assert forms[:6] == [Reduction("sum", (x,)), Reduction("sum", (x,)), Reduction("mean", (x,)),
                         Reduction("amax", (x,)), Reduction("sum", (x,)), Reduction("sum", (x,))]
    # dim 0; keepdim left out, or 1 rather than True; a bool dim; a dtype; two dims;
    # prod; a third positional argument
    assert forms[6:] == [None] * 8
    assert as_reduction(calls[0], 3) == Reduction("sum", (x,))  # -1: the last of any
    assert as_reduction(calls[1], 3) is None  # 1 is not the last of 3 dims
    assert as_reduction(node(gm, "x"), 2) is None


def test_dtypes_that_the_kernels_compute():
    from minifx.compiler.fusion import _dtypes_fit

    f32, f64, b, i64 = (np.dtype(t) for t in (np.float32, np.float64, np.bool_, np.int64))
    gm = minifx.symbolic_trace(ReluThenSigmoid())
    x = node(gm, "x")
    add, gt = Pointwise("add", (x, x)), Pointwise("gt", (x, x))
    where = Pointwise("where", (x, x, x))
    assert _dtypes_fit(add, f32, [f32, f32]) and _dtypes_fit(add, f64, [f32, f64])
    assert _dtypes_fit(add, f32, [b, f32])  # a bool mask times a float
    assert not _dtypes_fit(add, i64, [i64, i64]) and not _dtypes_fit(add, f32, [i64, f32])
    assert not _dtypes_fit(add, f32, [f32, None]) and not _dtypes_fit(add, None, [f32, f32])
    assert _dtypes_fit(gt, b, [f32, f64])
    assert not _dtypes_fit(gt, b, [b, f32])  # comparisons compare floats
    assert not _dtypes_fit(gt, f32, [f32, f32])  # and give bool
    assert _dtypes_fit(where, f32, [b, f32, f32]) and _dtypes_fit(where, f32, [b, b, f32])
    assert not _dtypes_fit(where, f32, [f32, f32, f32])  # a float condition
    assert not _dtypes_fit(where, b, [b, b, b])  # a bool result is no float
    assert not _dtypes_fit(where, f32, [b, i64, f32])
    assert _dtypes_fit(Pointwise("where", (True, x, x)), f32, [f32, f32])


def test_fusible_nodes_hold_elementwise_nodes_and_row_reductions():
    def f(x, n):
        m = x.amax(-1, keepdim=True)
        e = (x - m).exp()
        return e / e.sum(-1, keepdim=True), x.sum(0, keepdim=True) * 2, x.size(0) + n

    gm = traced(f, tensor.randn(3, 5), 2)
    forms = fusible_nodes(gm.graph)
    x = node(gm, "x")
    assert [n.name for n in forms] == ["amax", "sub", "exp", "sum_1", "truediv", "mul"]
    assert forms[node(gm, "amax")] == Reduction("amax", (x,))
    assert forms[node(gm, "sub")] == Pointwise("sub", (x, node(gm, "amax")))
    assert forms[node(gm, "mul")] == Pointwise("mul", (node(gm, "sum_2"), 2))


# ---- groups around reductions -------------------------------------------------------
def softmax(x):
    m = x.amax(-1, keepdim=True)
    e = (x - m).exp()
    return e / e.sum(-1, keepdim=True)


def two_rows(x, y):
    return x.sum(-1, keepdim=True) + y.sum(-1, keepdim=True)


def third_shape_after(x, z):
    m = x.amax(-1, keepdim=True)
    return (x - m) + z


def other_shape_joins_first(x, y):
    m = x.amax(-1, keepdim=True)
    return (x - m) + y * 2


def row_values_around_a_reduction(x):
    m = x.amax(-1, keepdim=True) + 1
    return (x - m).sum(-1, keepdim=True)


def test_a_group_with_reductions_keeps_to_two_shapes():
    x = tensor.randn(4, 6)
    assert group_names(softmax, x) == [["amax", "sub", "exp", "sum_1", "truediv"]]
    # Reductions of the same shape share a group; of two shapes, they do not.
    assert group_names(two_rows, x, tensor.randn(4, 6)) == [["sum_1", "sum_2", "add"]]
    assert group_names(two_rows, x, tensor.randn(4, 8)) == [["sum_2"], ["sum_1", "add"]]
    # An elementwise node of a third shape keeps the reduction out ...
    assert group_names(third_shape_after, x, tensor.randn(3, 4, 6)) == [["amax"], ["sub", "add"]]
    assert group_names(other_shape_joins_first, x, tensor.randn(6)) == [
        ["amax"], ["sub", "mul", "add"]]
    # ... a value of the row shape joins a group that has a reduction already.
    assert group_names(row_values_around_a_reduction, x) == [["amax", "add", "sub", "sum_1"]]


# ---- the generated source, continued ----------------------------------------------
def test_kernel_names_inputs_and_reserved_names():
    from minifx.compiler.kernel import start_kernel

    def f(x, y, i):
        return tensor.exp(tensor.sigmoid(x) * y + i - y).abs()

    gm = traced(f, tensor.randn(3), tensor.randn(3), tensor.randn(3))
    forms = fusible_nodes(gm.graph)
    (members,) = find_groups(gm.graph, forms)
    names, inputs, function = start_kernel(members, forms, ("i", "sigmoid"))
    assert function == "fused_sigmoid_mul_add_sub"  # the first four distinct ops
    assert [n.name for n in inputs] == ["x", "y", "i"]  # in the order they are read
    assert names.create_name("i", None) == "i_1"  # reserved names stay taken
    assert names.create_name("sigmoid", None) == "sigmoid_1"
    assert names.create_name("fused_sigmoid_mul_add_sub", None) == \
        "fused_sigmoid_mul_add_sub_1"


def test_generated_source_powers_clamps_and_mixed_comparisons():
    def f(x, y):
        return ((x ** 0.5) + (x ** -0.5) + (x ** 3) + (x ** 2.5) + x.clamp(min=0.0)
                + x.clamp(max=0.0) + tensor.where(x > y, x, 2.0) + x.sigmoid())

    gm = traced(f, tensor.randn(4), tensor.randn(4, dtype=tensor.float64))
    forms = fusible_nodes(gm.graph)
    (members,) = find_groups(gm.graph, forms)
    dtypes = {n: np.dtype(str(n.meta["tensor_meta"].dtype).split(".")[1])
              for n in gm.graph.nodes if "tensor_meta" in n.meta}
    _, source, _ = kernel_source(members, forms, dtypes)
    assert "pow_1 = scalar.sqrt(x[i])" in source
    assert "pow_2 = scalar.rsqrt(x[i])" in source
    assert "pow_3 = x[i] ** 3" in source
    assert "pow_4 = scalar.power(x[i], np.float32(2.5))" in source
    assert "clamp = scalar.maximum(x[i], np.float32(0.0))" in source
    assert "clamp_1 = scalar.minimum(x[i], np.float32(0.0))" in source
    assert "gt = np.float64(x[i]) > y[i]" in source  # compared in the common dtype
    assert "where = x[i] if gt else np.float32(2.0)" in source  # where computes in its own dtype
    assert "sigmoid = scalar.sigmoid(x[i])" in source


# ---- one node in place of a group -------------------------------------------------
def _replaced(fn, *inputs):
    """``fn`` traced, its one group replaced by a kernel node; (gm, old group names, node)."""
    from minifx.compiler.fusion import replace_group

    gm = traced(fn, *inputs)
    forms = fusible_nodes(gm.graph)
    (members,) = find_groups(gm.graph, forms)
    old = {n.name: n.meta["tensor_meta"] for n in members}
    fused = replace_group(gm.graph, members, forms)
    gm.graph.lint()
    gm.recompile()
    return gm, old, fused


def test_replace_group_puts_one_kernel_node_where_the_group_was():
    from minifx.compiler.kernel import FusedKernel, work_per_element
    from minifx.compiler.rows import RowKernel

    def f(x, y):
        return (tensor.sigmoid(x) * y + 1).sum()

    x, y = tensor.randn(3, 4), tensor.randn(4)
    gm, old, fused = _replaced(f, x, y)
    assert [n.name for n in gm.graph.nodes] == ["x", "y", "sigmoid_mul_add", "sum_1", "output"]
    assert fused.op == "call_function" and fused.args == (node(gm, "x"), node(gm, "y"))
    kernel = fused.target
    assert type(kernel) is FusedKernel and kernel.__name__ == "fused_sigmoid_mul_add"
    assert kernel.dtype == np.float32 and kernel.reuse is None
    assert kernel.work == work_per_element([Pointwise("sigmoid", ("x",)), Pointwise("mul", ()),
                                            Pointwise("add", ())])
    assert fused.meta["fused"] == ["sigmoid", "mul", "add"]
    assert fused.meta["tensor_meta"] is old["add"]
    assert "writes_into" not in fused.meta
    assert node(gm, "sum_1").args == (fused,)
    np.testing.assert_allclose(gm(x, y).numpy(), f(x, y).numpy(), rtol=1e-5)

    gm, old, fused = _replaced(lambda_softmax, tensor.randn(4, 6, dtype=tensor.float64))
    kernel = fused.target
    assert type(kernel) is RowKernel and kernel.full == (4, 6) and kernel.dtype == np.float64
    assert fused.name == "amax_sub_exp_sum" and fused.meta["tensor_meta"] is old["truediv"]
    assert [n.name for n in gm.graph.nodes] == ["x", "amax_sub_exp_sum", "output"]
    # A row kernel's work counts the reductions and the nodes of the full shape, not the
    # one-value-per-row nodes (here add).
    gm, _, fused = _replaced(row_values_around_a_reduction, tensor.randn(4, 6))
    x = node(gm, "x")
    assert fused.target.work == work_per_element(
        [Reduction("amax", (x,)), Pointwise("sub", ()), Reduction("sum", (x,))])


def lambda_softmax(x):
    m = x.amax(-1, keepdim=True)
    e = (x - m).exp()
    return e / e.sum(-1, keepdim=True)


def test_replace_group_writes_into_a_dying_fresh_input():
    def f(x, w):
        return tensor.relu(tensor.matmul(x, w) + 1)  # matmul: a fresh array, dying here

    gm, _, fused = _replaced(f, tensor.randn(2, 3), tensor.randn(3, 4))
    assert fused.target.reuse == 0 and fused.meta["writes_into"] == "matmul"
    assert fused.args == (node(gm, "matmul"),)


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
