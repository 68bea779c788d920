"""Random torch programs: minifx and torch.fx must trace every one of them alike.

Hypothesis writes the source of a small function of two tensors, one line per
operation, drawing each operation from a table that mixes the three spellings
torch.fx tells apart (operators, Tensor methods, torch and functional calls),
constants on either side, keyword arguments and reductions. Every value has
shape (3, 4) or (3, 1), so any two of them broadcast together.
"""

import torch
import torch.fx
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import minifx

# Each template takes two operand names; unary ones ignore the second.
TEMPLATES = [
    "{a} + {b}",
    "{a} - {b}",
    "{a} * {b}",
    "{a} / ({b}.abs() + 1.0)",
    "2.5 * {a}",
    "1.0 - {a}",
    "-{a}",
    "torch.add({a}, {b}, alpha=0.5)",
    "{a}.mul({b})",
    "torch.maximum({a}, {b})",
    "torch.relu({a})",
    "F.gelu({a})",
    "{a}.sigmoid()",
    "torch.tanh({a})",
    "F.softmax({a}, dim=-1)",
    "{a}.sum(-1, keepdim=True)",
    "torch.mean({a}, dim=1, keepdim=True)",
    "{a}.clamp(min=-1.0, max=1.0)",
    "torch.where({a} > {b}, {a}, {b})",
    "({a} > 0) * {b}",
    "{a}[:, :1] + {b}",
    "{a}.view(3, -1).amax(dim=1, keepdim=True)",
    "F.leaky_relu({a}, 0.1)",
    "{a} ** 2",
]

programs = st.lists(
    st.tuples(
        st.integers(0, len(TEMPLATES) - 1),
        st.integers(0, 1000),
        st.integers(0, 1000),
    ),
    min_size=1,
    max_size=12,
)


def source_of(steps):
    names = ["x", "y"]
    lines = ["def program(x, y):"]
    for template, i, j in steps:
        a, b = names[i % len(names)], names[j % len(names)]
        name = f"v{len(names) - 2}"
        lines.append(f"    {name} = {TEMPLATES[template].format(a=a, b=b)}")
        names.append(name)
    lines.append(f"    return {names[-1]}, {names[len(names) // 2]}")
    return "\n".join(lines) + "\n"


def build(steps):
    namespace = {"torch": torch, "F": F}
    exec(compile(source_of(steps), "<random program>", "exec"), namespace)
    return namespace["program"]


@settings(deadline=None, max_examples=40)
@given(programs)
def test_random_programs_trace_alike(steps):
    program = build(steps)
    ours, theirs = minifx.symbolic_trace(program), torch.fx.symbolic_trace(program)
    ours.graph.lint()
    assert str(ours.graph) == str(theirs.graph), source_of(steps)
    assert ours.code == theirs.code, source_of(steps)
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    torch.testing.assert_close(ours(x, y), program(x, y))
