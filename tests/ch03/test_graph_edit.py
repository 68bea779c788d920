"""Graph editing: erase, insert points, copies, dead code (against torch.fx where it matters)."""

import copy
import operator
import pickle

import pytest
import torch.fx as tfx

import minifx


def straight(fx, n=5):
    g = fx.Graph()
    v = g.placeholder("x")
    for _ in range(n):
        v = g.call_function(operator.add, (v, 1))
    g.output(v)
    return g


def test_nodes_view_len_and_reversed():
    g = straight(minifx)
    assert len(g.nodes) == 7
    assert [n.name for n in reversed(g.nodes)] == [n.name for n in list(g.nodes)[::-1]]


def test_erase_node_with_users_names_them():
    g = straight(minifx, 2)
    add = next(n for n in g.nodes if n.name == "add")
    with pytest.raises(RuntimeError, match=r"add still has 1 user\(s\): add_1"):
        g.erase_node(add)


def test_erase_while_iterating_forward_and_backward():
    g = straight(minifx)
    for node in g.nodes:
        if node.op == "call_function":
            node.replace_all_uses_with(node.args[0])
            g.erase_node(node)
    assert [n.op for n in g.nodes] == ["placeholder", "output"]
    g.lint()
    g = straight(minifx)
    g.output_node().args = (next(iter(g.nodes)),)
    visited = [n.name for n in reversed(g.nodes)]
    g.eliminate_dead_code()
    assert visited == ["output", "add_4", "add_3", "add_2", "add_1", "add", "x"]
    assert len(g.nodes) == 2


def test_erase_the_next_node_during_iteration():
    g = straight(minifx)
    seen = []
    for node in g.nodes:
        seen.append(node.name)
        if node.name == "add_1":
            nxt = node.next
            nxt.replace_all_uses_with(node)
            g.erase_node(nxt)
    assert seen == ["x", "add", "add_1", "add_3", "add_4", "output"]
    g.lint()


@pytest.mark.parametrize("where", ["before", "after"])
def test_insert_points_match_torch_fx(where):
    def edit(fx):
        g = straight(fx, 2)
        anchor = list(g.nodes)[1]
        ctx = g.inserting_before(anchor) if where == "before" else g.inserting_after(anchor)
        with ctx:
            g.call_function(operator.mul, (anchor.prev, 2))
            g.call_function(operator.sub, (anchor.prev, 3))
        g.call_function(operator.neg, (anchor,))  # back at the end, after output
        return [n.name for n in g.nodes]

    assert edit(minifx) == edit(tfx)


def test_insert_before_none_goes_first():
    g = straight(minifx, 1)
    with g.inserting_before(None):
        g.placeholder("first")
    assert next(iter(g.nodes)).name == "first"


def test_insert_after_none_goes_last_and_the_point_comes_back():
    def edit(fx):
        g = straight(fx, 1)
        first = next(iter(g.nodes))
        with g.inserting_after(None):
            g.call_function(operator.neg, (first,))
        with g.inserting_before(first):
            g.placeholder("w")
        g.call_function(operator.pos, (first,))  # the default point again: the end
        return [n.name for n in g.nodes]

    assert edit(minifx) == edit(tfx) == ["w", "x", "add", "output", "neg", "pos"]


@pytest.mark.parametrize("where", ["inserting_before", "inserting_after"])
def test_an_insert_point_at_a_node_of_another_graph_is_refused(where):
    g, other = straight(minifx, 1), straight(minifx, 1)
    stranger = next(iter(other.nodes))
    with pytest.raises(ValueError, match=f"{where}: node x belongs to another graph"):
        getattr(g, where)(stranger)
    g.call_function(operator.neg, (next(iter(g.nodes)),))
    assert [n.name for n in g.nodes][-1] == "neg"  # the insertion point did not move


def test_node_copy_and_graph_copy():
    src = straight(minifx, 3)
    for n in src.nodes:
        n.meta["tag"] = n.name
    dst = minifx.Graph()
    val_map = {}
    out = dst.graph_copy(src, val_map)
    dst.output(out)
    assert str(dst) == str(src)
    assert all(val_map[n].meta == n.meta for n in src.nodes if n.op != "output")
    dst.lint()


def test_node_copy_maps_inputs_and_copies_meta_like_torch_fx():
    def copy_one(fx):
        src = straight(fx, 2)
        add_1 = list(src.nodes)[2]
        add_1.meta["tag"] = ["kept"]
        dst = fx.Graph()
        z = dst.placeholder("z")
        dst.call_function(operator.neg, (z,), {})  # takes the name "neg" first
        copied = dst.node_copy(add_1, lambda n: z)
        return add_1, copied

    add_1, copied = copy_one(minifx)
    theirs, their_copy = copy_one(tfx)
    assert (copied.op, copied.target, copied.name) == ("call_function", operator.add, "add_1")
    assert copied.format_node() == their_copy.format_node()
    assert copied.meta == add_1.meta and copied.meta is not add_1.meta
    assert copied.meta["tag"] is add_1.meta["tag"]  # shallow, as torch.fx
    assert their_copy.meta["tag"] is theirs.meta["tag"]


def test_graph_copy_skips_mapped_nodes_and_can_return_the_output_node():
    def copy_into(fx):
        src = straight(fx, 2)
        dst = fx.Graph()
        y = dst.placeholder("y")
        x = next(iter(src.nodes))
        val_map = {x: y}  # x is given: it is not copied, y stands for it
        out, out_node = dst.graph_copy(src, val_map, return_output_node=True)
        dst.output(out)
        return src, dst, val_map, out_node

    src, dst, val_map, out_node = copy_into(minifx)
    tsrc, tdst, tval_map, tout_node = copy_into(tfx)
    assert str(dst) == str(tdst).replace("torch.fx", "minifx")
    assert [n.name for n in dst.nodes] == ["y", "add", "add_1", "output"]
    assert out_node is src.output_node() and tout_node is tsrc.output_node()
    assert len(val_map) == len(tval_map) == 3
    dst.lint()
    empty = minifx.Graph()
    empty.placeholder("x")
    assert minifx.Graph().graph_copy(empty, {}) is None


def test_deepcopy_graph_is_independent():
    g = straight(minifx, 3)
    h = copy.deepcopy(g)
    assert str(h) == str(g)
    assert not set(h.nodes) & set(g.nodes)
    h.lint()


def test_find_nodes():
    g = straight(minifx, 3)
    assert [n.name for n in g.find_nodes(op="call_function", target=operator.add)] == [
        "add", "add_1", "add_2"]
    assert g.find_nodes(op="placeholder")[0].name == "x"
    assert g.find_nodes(op="call_function", target=operator.mul) == []


def test_eliminate_dead_code_keeps_impure():
    g = minifx.Graph()
    x = g.placeholder("x")
    dead = g.call_function(operator.add, (x, 1))
    g.call_function(operator.mul, (dead, 2))
    g.call_function(operator.setitem, (x, 0, 1.0))
    unused = g.placeholder("unused")
    g.output(x)
    assert g.eliminate_dead_code() is True
    assert [n.name for n in g.nodes] == ["x", "setitem", "unused", "output"]
    assert unused in g.nodes
    assert g.eliminate_dead_code() is False


def test_second_output_refused():
    g = straight(minifx, 1)
    with pytest.raises(RuntimeError, match="already has an output node"):
        g.output(None)


def test_on_generate_code():
    g = straight(minifx, 1)
    add_comment = lambda old: lambda body: ["# edited\n", *body]  # noqa: E731
    with g.on_generate_code(add_comment):
        assert "# edited" in g.python_code().src
    assert "# edited" not in g.python_code().src


def test_print_tabular(capsys):
    straight(minifx, 1).print_tabular()
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert out[-1].split()[:2] == ["output", "output"]
    assert any("operator.add" in line for line in out)


def test_eliminate_dead_code_takes_its_judge_of_impurity():
    """``is_impure_node`` decides what stays, as torch.fx's argument of that name does."""
    for fx in (minifx, tfx):
        g = fx.Graph()
        x = g.placeholder("x")
        kept = g.call_function(operator.add, (x, 1))
        g.call_function(operator.setitem, (x, 0, 1.0))
        g.output(x)
        def judge(n, kept=kept):
            return n is kept or n.op != "call_function"

        assert g.eliminate_dead_code(is_impure_node=judge)
        assert [n.name for n in g.nodes] == ["x", "add", "output"]


def test_graph_copy_of_an_unpickled_graph_returns_its_output_value():
    # Unpickled node ops equal "output" and the rest, but are not the same string objects.
    gm = pickle.loads(pickle.dumps(minifx.symbolic_trace(lambda x: x.relu() + 1)))
    dst = minifx.Graph()
    out = dst.graph_copy(gm.graph, {})
    assert [n.op for n in dst.nodes] == ["placeholder", "call_method", "call_function"]
    assert out is list(dst.nodes)[-1]
