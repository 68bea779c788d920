"""replace_pattern against torch.fx.subgraph_rewriter.replace_pattern.

Each case is written once against a library ``lib`` (``tensor`` or ``torch``):
it returns the module to rewrite, the pattern, the replacement and the example
inputs' shapes. minifx rewrites the torch version and must print exactly what
torch.fx prints and report the same matches; it rewrites the tensor version and
must print the same graph with ``torch`` read as ``tensor`` and compute the same
numbers as torch.fx's rewritten module.
"""

import numpy as np
import pytest
import torch
import torch.fx
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.fx import subgraph_rewriter as torch_rewriter

import minifx
import tensor
from minifx.subgraph_rewriter import Match, replace_pattern


def add_relu_to_mul_relu(lib):
    """The documented example: ``add`` then ``relu`` becomes ``mul`` then ``relu``, twice."""
    class M(lib.nn.Module):
        def forward(self, x, y):
            a = lib.relu(lib.add(x, y))
            b = lib.relu(lib.add(a, y))
            return a * b

    def pattern(x, y):
        return lib.relu(lib.add(x, y))

    def replacement(x, y):
        return lib.relu(lib.mul(x, y))

    return M(), pattern, replacement, [(2, 3), (2, 3)]


def cat_to_stack(lib):
    """torch.fx's docstring example: two identical ``cat`` calls become ``stack``."""
    class M(lib.nn.Module):
        def forward(self, x, w1, w2):
            m1 = lib.cat([w1, w2]).sum()
            m2 = lib.cat([w1, w2]).sum()
            return x + lib.max(m1) + lib.max(m2)

    def pattern(w1, w2):
        return lib.cat([w1, w2])

    def replacement(w1, w2):
        return lib.stack([w1, w2])

    return M(), pattern, replacement, [(2,), (3,), (3,)]


def no_match(lib):
    """``sub`` is not ``add``, and the method ``x.relu()`` is not the function ``relu``."""
    class M(lib.nn.Module):
        def forward(self, x, y):
            return lib.sub(x, y).relu() + lib.add(x, y).relu()

    def pattern(x, y):
        return lib.relu(lib.add(x, y))

    def replacement(x, y):
        return lib.relu(lib.mul(x, y))

    return M(), pattern, replacement, [(4,), (4,)]


def intermediate_used_elsewhere(lib):
    """The first ``add`` feeds the ``relu`` and the result: replacing it would lose it."""
    class M(lib.nn.Module):
        def forward(self, x, y):
            s = lib.add(x, y)
            r = lib.relu(s)
            t = lib.relu(lib.add(r, y))  # this one is self-contained
            return t + s

    def pattern(x, y):
        return lib.relu(lib.add(x, y))

    def replacement(x, y):
        return lib.relu(lib.mul(x, y))

    return M(), pattern, replacement, [(3,), (3,)]


def overlapping_matches(lib):
    """Three ``relu``s in a row hold two overlapping ``relu(relu(x))``: only the first counts."""
    class M(lib.nn.Module):
        def forward(self, x):
            return lib.relu(lib.relu(lib.relu(x)))

    def pattern(x):
        return lib.relu(lib.relu(x))

    def replacement(x):
        return lib.sigmoid(x)

    return M(), pattern, replacement, [(5,)]


def chained_matches(lib):
    """The second match reads the first one's result, which the first replacement replaced."""
    class M(lib.nn.Module):
        def forward(self, x):
            return lib.neg(lib.neg(x)) * 2

    def pattern(x):
        return lib.neg(x)

    def replacement(x):
        return lib.tanh(x)

    return M(), pattern, replacement, [(5,)]


def constants_must_agree(lib):
    """A constant in the pattern matches only the same constant."""
    class M(lib.nn.Module):
        def forward(self, x):
            return lib.add(x, 1) * lib.add(x, 2)

    def pattern(x):
        return lib.add(x, 1)

    def replacement(x):
        return lib.sub(x, 1)

    return M(), pattern, replacement, [(3,)]


def input_matches_a_constant(lib):
    """A pattern input is a wildcard: here it stands for the constant 2."""
    class M(lib.nn.Module):
        def forward(self, x):
            return lib.add(x, 2)

    def pattern(x, y):
        return lib.add(x, y)

    def replacement(x, y):
        return lib.mul(x, y)

    return M(), pattern, replacement, [(3,)]


def two_results(lib):
    """A pattern with two results: both must match, from the same input."""
    class M(lib.nn.Module):
        def forward(self, x, y):
            return lib.relu(x) + lib.sigmoid(x) + lib.relu(y)

    def pattern(x):
        return lib.relu(x), lib.sigmoid(x)

    def replacement(x):
        return lib.tanh(x), lib.neg(x)

    return M(), pattern, replacement, [(3,), (3,)]


def module_replacement(lib):
    """The replacement is a module with a submodule, which the rewritten module gains."""
    class M(lib.nn.Module):
        def forward(self, x):
            return lib.relu(x) + 1

    class Replacement(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.act = lib.nn.Sigmoid()

        def forward(self, x):
            return self.act(x)

    def pattern(x):
        return lib.relu(x)

    return M(), pattern, Replacement(), [(4,)]


def tensor_attributes(lib):
    """``get_attr`` nodes match any tensor attribute; the replacement brings its own."""
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.bias = lib.nn.Parameter(lib.ones(3))

        def forward(self, x):
            return lib.relu(x + self.bias)

    class Pattern(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.zeros(3))

        def forward(self, x):
            return x + self.w

    class Replacement(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = lib.nn.Parameter(lib.full((3,), 2.0))

        def forward(self, x):
            return x * self.scale

    return M(), Pattern(), Replacement(), [(2, 3)]


def constant_types_must_agree(lib):
    """``1`` in the pattern does not match ``1.0`` in the graph (the types differ), nor a
    node (``x + x``)."""
    class M(lib.nn.Module):
        def forward(self, x):
            return lib.add(x, 1.0) * lib.add(x, 1) - lib.add(x, x)

    def pattern(x):
        return lib.add(x, 1)

    def replacement(x):
        return lib.sub(x, 1)

    return M(), pattern, replacement, [(3,)]


def input_stands_for_one_constant(lib):
    """A pattern input read twice stands for one value: ``2`` and ``2`` match, ``2`` and
    ``3`` do not."""
    class M(lib.nn.Module):
        def forward(self, x):
            return lib.mul(lib.add(x, 2), 3) + lib.mul(lib.add(x, 2), 2)

    def pattern(x, c):
        return lib.mul(lib.add(x, c), c)

    def replacement(x, c):
        return lib.sub(x, c)

    return M(), pattern, replacement, [(3,)]


def lists_match_item_by_item(lib):
    """The list argument of ``cat`` matches item by item, a tuple as well as a list; a list
    of another length does not match."""
    class M(lib.nn.Module):
        def forward(self, x, y):
            return lib.cat((x, y)).sum() + lib.cat([x, y, x]).sum()

    def pattern(a, b):
        return lib.cat([a, b])

    def replacement(a, b):
        return lib.cat([b, a])

    return M(), pattern, replacement, [(2,), (3,)]


def two_inputs_never_match_one_node(lib):
    """``x + x`` is no match for ``add(a, b)``: two pattern inputs, one node."""
    class M(lib.nn.Module):
        def forward(self, x, y):
            return lib.add(x, x) * lib.add(x, y)

    def pattern(a, b):
        return lib.add(a, b)

    def replacement(a, b):
        return lib.sub(a, b)

    return M(), pattern, replacement, [(3,), (3,)]


def computed_node_never_matches_a_constant(lib):
    """Only a pattern input stands for a constant: the pattern's ``neg`` does not match
    the ``2.0`` of the first sum."""
    class M(lib.nn.Module):
        def forward(self, x):
            return lib.add(x, 2.0) + lib.add(x, lib.neg(x))

    def pattern(x):
        return lib.add(x, lib.neg(x))

    def replacement(x):
        return lib.sub(x, x)

    return M(), pattern, replacement, [(3,)]


def would_form_a_cycle(lib):
    """The match's input ``neg`` is computed from its own ``relu``: replaced, the new
    nodes would have to run both before and after ``neg``, so it is no match."""
    class M(lib.nn.Module):
        def forward(self, x):
            a = lib.relu(x)
            return a * lib.add(a, lib.neg(a))

    def pattern(x, y):
        a = lib.relu(x)
        return a, lib.add(a, y)

    def replacement(x, y):
        a = lib.sigmoid(x)
        return a, lib.mul(a, y)

    return M(), pattern, replacement, [(3,)]


def cycle_elsewhere_still_matches(lib):
    """As ``would_form_a_cycle``, but the second input does not come from the match."""
    class M(lib.nn.Module):
        def forward(self, x):
            a = lib.relu(x)
            return a * lib.add(a, lib.neg(x))

    def pattern(x, y):
        a = lib.relu(x)
        return a, lib.add(a, y)

    def replacement(x, y):
        a = lib.sigmoid(x)
        return a, lib.mul(a, y)

    return M(), pattern, replacement, [(3,)]


CASES = [add_relu_to_mul_relu, cat_to_stack, no_match, intermediate_used_elsewhere,
         overlapping_matches, chained_matches, constants_must_agree, input_matches_a_constant,
         two_results, module_replacement, tensor_attributes, constant_types_must_agree,
         input_stands_for_one_constant, lists_match_item_by_item,
         two_inputs_never_match_one_node, computed_node_never_matches_a_constant,
         would_form_a_cycle, cycle_elsewhere_still_matches]

EXPECTED_MATCH_COUNTS = {"add_relu_to_mul_relu": 2, "cat_to_stack": 2, "no_match": 0,
                         "intermediate_used_elsewhere": 1, "overlapping_matches": 1,
                         "chained_matches": 2, "constants_must_agree": 1,
                         "input_matches_a_constant": 1, "two_results": 1,
                         "module_replacement": 1, "tensor_attributes": 1,
                         "constant_types_must_agree": 1, "input_stands_for_one_constant": 1,
                         "lists_match_item_by_item": 1, "two_inputs_never_match_one_node": 1,
                         "computed_node_never_matches_a_constant": 1, "would_form_a_cycle": 0,
                         "cycle_elsewhere_still_matches": 1}


def describe(matches):
    """A match as names: which pattern node it grew from and what each pattern node matched."""
    return [(m.anchor.name, {p.name: getattr(g, "name", g) for p, g in m.nodes_map.items()})
            for m in matches]


def inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for shape in shapes]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_torch_model_rewritten_as_torch_fx_does(case):
    model, pattern, replacement, _ = case(torch)
    ours, theirs = minifx.symbolic_trace(model), torch.fx.symbolic_trace(model)
    our_matches = replace_pattern(ours, pattern, replacement)
    their_matches = torch_rewriter.replace_pattern(theirs, pattern, replacement)
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    assert describe(our_matches) == describe(their_matches)
    assert len(our_matches) == EXPECTED_MATCH_COUNTS[case.__name__]
    assert all(isinstance(m, Match) for m in our_matches)
    assert [name for name, _ in ours.named_modules()] == \
        [name for name, _ in theirs.named_modules()]
    ours.graph.lint()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_tensor_model_rewritten_as_torch_fx_does(case):
    model, pattern, replacement, shapes = case(tensor)
    ours = minifx.symbolic_trace(model)
    matches = replace_pattern(ours, pattern, replacement)
    torch_model, torch_pattern, torch_replacement, _ = case(torch)
    theirs = torch.fx.symbolic_trace(torch_model)
    torch_rewriter.replace_pattern(theirs, torch_pattern, torch_replacement)
    assert str(ours.graph) == str(theirs.graph).replace("torch.", "tensor.")
    assert len(matches) == EXPECTED_MATCH_COUNTS[case.__name__]
    arrays = inputs(shapes)
    expected = theirs(*[torch.from_numpy(a) for a in arrays])
    got = ours(*[tensor.tensor(a) for a in arrays])
    np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_rewritten_module_computes_the_replacement():
    model, pattern, replacement, shapes = add_relu_to_mul_relu(tensor)
    gm = minifx.symbolic_trace(model)
    replace_pattern(gm, pattern, replacement)
    x, y = (tensor.tensor(a) for a in inputs(shapes))
    a = tensor.relu(x * y)
    expected = a * tensor.relu(a * y)
    np.testing.assert_allclose(gm(x, y).numpy(), expected.numpy(), rtol=1e-6)
    assert "tensor.mul" in gm.code and "tensor.add" not in gm.code


def test_graph_arguments_are_accepted():
    model, pattern, replacement, _ = add_relu_to_mul_relu(tensor)
    gm = minifx.symbolic_trace(model)
    matches = replace_pattern(gm, minifx.symbolic_trace(pattern).graph,
                              minifx.symbolic_trace(replacement))
    assert len(matches) == 2


def test_mismatched_inputs_are_refused():
    model, pattern, _, _ = add_relu_to_mul_relu(tensor)
    with pytest.raises(ValueError, match="pattern takes 2 inputs but the replacement takes 1"):
        replace_pattern(minifx.symbolic_trace(model), pattern, lambda x: tensor.relu(x))


def test_mismatched_results_are_refused():
    model, pattern, _, _ = add_relu_to_mul_relu(tensor)
    with pytest.raises(ValueError, match="pattern returns 1 values but the replacement returns 2"):
        replace_pattern(minifx.symbolic_trace(model), pattern,
                        lambda x, y: (tensor.relu(x), tensor.relu(y)))


def test_unused_pattern_input_is_refused():
    def pattern(x, unused):
        return tensor.relu(x)

    gm = minifx.symbolic_trace(lambda x: tensor.relu(x))
    with pytest.raises(ValueError, match="'unused' is never used"):
        replace_pattern(gm, pattern, pattern)


# Random programs of torch calls, rewritten with a fixed pattern. Besides single
# calls, a step may be one of the patterns' shapes (``add`` then ``relu`` ...),
# whose intermediate value later steps may read too, so that matches, overlaps
# and intermediates used elsewhere all turn up.
UNARY = ["relu", "sigmoid", "neg", "tanh"]
BINARY = ["add", "mul"]
SHAPES = {"add_relu": ("add", "relu"), "neg_neg": ("neg", "neg"), "mul_sigmoid": ("mul", "sigmoid")}


@st.composite
def programs(draw):
    return draw(st.lists(st.tuples(st.sampled_from(UNARY + BINARY + list(SHAPES)),
                                   st.integers(0, 20), st.integers(0, 20)),
                         min_size=1, max_size=8))


def build(lib, steps):
    def call(op, a, b):
        return getattr(lib, op)(a, b) if op in BINARY else getattr(lib, op)(a)

    def forward(x, y):
        values = [x, y]
        for op, i, j in steps:
            a, b = values[i % len(values)], values[j % len(values)]
            if op in SHAPES:
                first, second = SHAPES[op]
                inner = call(first, a, b)
                values += [inner, call(second, inner, inner)]
            else:
                values.append(call(op, a, b))
        return values[-1] + values[-2]

    return forward


@settings(deadline=None, max_examples=40)
@given(programs(), st.sampled_from(["relu_after_add", "neg_neg", "sigmoid_of_mul"]))
def test_random_programs_match_torch_fx(steps, which):
    patterns = {
        "relu_after_add": (lambda x, y: torch.relu(torch.add(x, y)),
                           lambda x, y: torch.relu(torch.mul(x, y))),
        "neg_neg": (lambda x: torch.neg(torch.neg(x)), lambda x: torch.tanh(x)),
        "sigmoid_of_mul": (lambda x, y: torch.sigmoid(torch.mul(x, y)),
                           lambda x, y: torch.sigmoid(x) * y),
    }
    pattern, replacement = patterns[which]

    class M(torch.nn.Module):
        def forward(self, x, y):
            return build(torch, steps)(x, y)

    ours, theirs = minifx.symbolic_trace(M()), torch.fx.symbolic_trace(M())
    our_matches = replace_pattern(ours, pattern, replacement)
    their_matches = torch_rewriter.replace_pattern(theirs, pattern, replacement)
    assert str(ours.graph) == str(theirs.graph)
    assert describe(our_matches) == describe(their_matches)
    x, y = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(ours(x, y), theirs(x, y))


def test_replace_pattern_is_exported_where_torch_fx_has_it():
    assert minifx.replace_pattern is replace_pattern
    assert torch.fx.replace_pattern is torch_rewriter.replace_pattern
