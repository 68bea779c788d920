"""Random programs: traced, turned into code, run; the result equals eager execution."""

import copy
import operator
import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import minifx
import tensor
import tensor.nn as nn

# (how it reads in a model, how many values it takes)
UNARY = [lambda a: tensor.sigmoid(a), lambda a: -a, lambda a: a.relu(), lambda a: a * 2.0,
         lambda a: tensor.tanh(a), lambda a: a.clamp(min=-0.5, max=0.5),
         lambda a: nn.functional.relu(a), lambda a: 1.0 - a]
BINARY = [operator.add, operator.sub, operator.mul, lambda a, b: tensor.maximum(a, b),
          lambda a, b: tensor.where(a > b, a, b)]

programs = st.lists(
    st.one_of(st.tuples(st.just(1), st.integers(0, len(UNARY) - 1), st.integers(0, 99)),
              st.tuples(st.just(2), st.integers(0, len(BINARY) - 1), st.integers(0, 99),
                        st.integers(0, 99))),
    min_size=1, max_size=12)


class Program(nn.Module):
    def __init__(self, steps):
        super().__init__()
        self.steps = steps
        self.linear = nn.Linear(3, 3)

    def forward(self, x, y):
        values = [x, self.linear(y)]
        for step in self.steps:
            if step[0] == 1:
                values.append(UNARY[step[1]](values[step[2] % len(values)]))
            else:
                a, b = values[step[2] % len(values)], values[step[3] % len(values)]
                values.append(BINARY[step[1]](a, b))
        return values[-1], values[len(values) // 2]


def same(a, b):
    np.testing.assert_allclose(np.asarray(a.numpy()), np.asarray(b.numpy()), rtol=1e-5,
                               atol=1e-6)


@settings(deadline=None, max_examples=40)
@given(programs)
def test_traced_programs_equal_eager(steps):
    model = Program(steps)
    gm = minifx.symbolic_trace(model)
    gm.graph.lint()
    x, y = tensor.randn(2, 3), tensor.randn(2, 3)
    for out, ref in zip(gm(x, y), model(x, y)):
        same(out, ref)
    again = pickle.loads(pickle.dumps(gm))
    for out, ref in zip(again(x, y), copy.deepcopy(gm)(x, y)):
        same(out, ref)
    # Regenerating from a copy of the graph gives the same source.
    assert minifx.GraphModule(gm, copy.deepcopy(gm.graph)).code == gm.code


OPS = [operator.add, operator.sub, operator.mul, operator.neg, operator.getitem, max, abs]


@settings(deadline=None, max_examples=50)
@given(st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 99), st.integers(0, 99)),
                max_size=20))
def test_hand_built_graphs_run_like_a_direct_walk(steps):
    g = minifx.Graph()
    values = [g.placeholder("x"), g.placeholder("y")]
    for op, i, j in steps:
        fn = OPS[op]
        a, b = values[i % len(values)], values[j % len(values)]
        if fn is operator.neg or fn is abs:
            values.append(g.call_function(fn, (a,)))
        elif fn is operator.getitem:
            values.append(g.call_function(fn, ((a, b, 7), j % 3)))
        else:
            values.append(g.call_function(fn, (a, b)))
    g.output({"last": values[-1], "all": list(values)})
    g.lint()
    env = {}
    inputs = iter([3, -5])
    for n in g.nodes:
        if n.op == "placeholder":
            env[n] = next(inputs)
        elif n.op == "call_function":
            env[n] = n.target(*minifx.map_arg(n.args, env.__getitem__))
        else:
            expected = minifx.map_arg(n.args[0], env.__getitem__)
    assert minifx.GraphModule({}, g)(3, -5) == expected
