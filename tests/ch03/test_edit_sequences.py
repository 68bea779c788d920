"""Random edit sequences (insert, erase, replace uses) keep the graph well formed."""

import operator

from hypothesis import given, settings
from hypothesis import strategies as st

import minifx

OPS = [operator.add, operator.sub, operator.mul, max]


def run(graph, *inputs):
    """Evaluate the graph directly, node by node (a reference for the generated code)."""
    env, it = {}, iter(inputs)
    for n in graph.nodes:
        if n.op == "placeholder":
            env[n] = next(it)
        elif n.op == "call_function":
            env[n] = n.target(*minifx.map_arg(n.args, env.__getitem__))
        elif n.op == "output":
            return minifx.map_arg(n.args[0], env.__getitem__)


def start():
    g = minifx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    g.output(g.call_function(operator.add, (x, y)))
    return g


edits = st.lists(st.tuples(st.sampled_from(["insert", "erase", "replace"]),
                           st.integers(0, 10**6), st.integers(0, 10**6),
                           st.sampled_from(OPS)), max_size=25)


@settings(deadline=None, max_examples=50)
@given(edits)
def test_random_edits_keep_lint_green(steps):
    g = start()
    for kind, i, j, fn in steps:
        body = [n for n in g.nodes if n.op != "output"]
        if kind == "insert":
            anchor = body[i % len(body)]
            earlier = body[: body.index(anchor) + 1]
            with g.inserting_after(anchor):
                g.call_function(fn, (earlier[j % len(earlier)], earlier[i % len(earlier)]))
        else:
            calls = [n for n in body if n.op == "call_function"]
            if not calls:
                continue
            victim = calls[i % len(calls)]
            earlier = body[: body.index(victim)]
            victim.replace_all_uses_with(earlier[j % len(earlier)])
            if kind == "erase":
                g.erase_node(victim)
            assert victim.users == {}
        g.lint()
    g.eliminate_dead_code()
    g.lint()
    gm = minifx.GraphModule({}, g)
    assert gm(3, 5) == run(g, 3, 5)
