"""FxGraphDrawer: DOT text that matches the graph, survives hostile names, and
turns into the SVG figures that the lessons show.

Graphviz's `dot` is needed (CI installs Debian's graphviz); torch.fx's own
drawer needs pydot, so the oracle here is torch.fx's graph itself: the boxes
and arrows must be its nodes and its users.
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minifx
import tensor
from minifx.passes.graph_drawer import FxGraphDrawer, label_text, quote_id
from minifx.passes.shape_prop import ShapeProp

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "lessons"
SVG = "{http://www.w3.org/2000/svg}"
NODE_LINE = re.compile(r'^  ("(?:[^"\\]|\\.)*") \[label=')
EDGE_LINE = re.compile(r'^  ("(?:[^"\\]|\\.)*") -> ("(?:[^"\\]|\\.)*");$')


class MyModule(tensor.nn.Module):
    def __init__(self):
        super().__init__()
        self.param = tensor.nn.Parameter(tensor.rand(3, 4))
        self.linear = tensor.nn.Linear(4, 5)

    def forward(self, x):
        return self.linear(x + self.param).clamp(min=0.0, max=1.0)


def dot_nodes_and_edges(dot_text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The quoted node ids and edges of DOT text written by DotGraph."""
    nodes, edges = [], []
    for line in dot_text.splitlines():
        if match := EDGE_LINE.match(line):
            edges.append(match.groups())
        elif match := NODE_LINE.match(line):
            nodes.append(match.group(1))
    return nodes, edges


def svg_parts(svg: bytes) -> tuple[list[str], list[str], list[str]]:
    """Node titles, edge titles and every line of text of an SVG made by dot."""
    root = ET.fromstring(svg)  # also proves the SVG is well-formed XML
    titles = {"node": [], "edge": []}
    for group in root.iter(f"{SVG}g"):
        kind = group.get("class")
        if kind in titles:
            titles[kind].append(group.find(f"{SVG}title").text)
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    return titles["node"], titles["edge"], texts


def run_dot(dot_text: str) -> subprocess.CompletedProcess:
    return subprocess.run(["dot", "-Tsvg"], input=dot_text.encode(), capture_output=True)


# -- the picture is the graph -------------------------------------------------
def test_boxes_and_arrows_are_the_nodes_and_their_users():
    gm = minifx.symbolic_trace(MyModule())
    dot = FxGraphDrawer(gm, "MyModule").get_dot_graph()
    nodes, edges = dot_nodes_and_edges(dot.to_string())
    graph_nodes = [quote_id(n.name) for n in gm.graph.nodes]
    weights = [quote_id("linear.weight"), quote_id("linear.bias")]
    assert [n for n in nodes if n not in weights] == graph_nodes
    assert sorted(nodes) == sorted(graph_nodes + weights)
    expected = {(quote_id(n.name), quote_id(u.name)) for n in gm.graph.nodes for u in n.users}
    expected |= {(w, quote_id("linear")) for w in weights}
    assert set(edges) == expected and len(edges) == len(expected)
    assert dot.get_name() == "MyModule"
    assert dot.to_string().startswith('digraph "MyModule" {')


def test_torch_module_draws_as_torch_fx_sees_it():
    torch = pytest.importorskip("torch")

    class TorchModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.param = torch.nn.Parameter(torch.rand(3, 4))
            self.linear = torch.nn.Linear(4, 5)
            self.register_buffer("offset", torch.zeros(5))

        def forward(self, x):
            y = self.linear(x + self.param).clamp(min=0.0, max=1.0)
            return torch.relu(y) + self.offset, y.sum()

    module = TorchModule()
    oracle = torch.fx.symbolic_trace(module).graph
    gm = minifx.symbolic_trace(module)
    nodes, edges = dot_nodes_and_edges(FxGraphDrawer(gm, "TorchModule").get_dot_graph()
                                       .to_string())
    weights = {f"linear.{name}" for name, _ in module.linear.named_parameters()}
    assert [n for n in nodes if n.strip('"') not in weights] == [
        quote_id(n.name) for n in oracle.nodes]
    expected = {(quote_id(n.name), quote_id(u.name)) for n in oracle.nodes for u in n.users}
    expected |= {(quote_id(w), quote_id("linear")) for w in weights}
    assert set(edges) == expected


def test_labels_name_op_target_args_and_shapes():
    gm = minifx.symbolic_trace(MyModule())
    ShapeProp(gm).propagate(tensor.randn(3, 4))
    text = FxGraphDrawer(gm, "MyModule").get_dot_graph().to_string()
    line = next(t for t in text.splitlines() if t.startswith('  "clamp"'))
    assert "name=%clamp|op_code=call_method|target=clamp" in line
    assert r"kwargs=\{min: 0.0, max: 1.0\}" in line
    assert "dtype=tensor.float32|shape=(3, 5)|stride=(5, 1)" in line
    linear = next(t for t in text.splitlines() if t.startswith('  "linear"'))
    assert "in_features=4, out_features=5, bias=True" in linear
    weight = next(t for t in text.splitlines() if t.startswith('  "linear.weight"'))
    assert "op_code=get_parameter|tensor.float32[5, 4]" in weight


def test_each_op_kind_has_its_own_colour():
    gm = minifx.symbolic_trace(MyModule())
    text = FxGraphDrawer(gm, "MyModule").get_dot_graph().to_string()
    colours = {}
    for node in gm.graph.nodes:
        line = next(t for t in text.splitlines() if t.startswith(f"  {quote_id(node.name)} ["))
        colours[node.op] = re.search(r'fillcolor="(#[0-9a-f]{6})"', line).group(1)
    assert len(colours) == 6 and len(set(colours.values())) == 6


# -- hostile text cannot break the DOT -------------------------------------------
HOSTILE = ['a"b', "{x|y}", "<tag>", "back\\slash", "trail\\", r"\N\G\l", "&lt;&amp;",
           "line1\nline2", "-->", "node", "é ∑ 中", "bell\x07"]


def hostile_module():
    """A traced module whose names, targets and constants are then made hostile.

    The names are changed after the code was generated: the drawer reads only
    the graph, and codegen would (rightly) refuse such names.
    """
    def f(x):
        return x.clamp(min=0.0).add(1.0, alpha="s")

    gm = minifx.symbolic_trace(f)
    nodes = list(gm.graph.nodes)
    for node, name in zip(nodes, HOSTILE):
        node.name = name
    nodes[1].target = HOSTILE[6]      # a call_method target
    nodes[1].args = (nodes[0], *HOSTILE[4:6], *HOSTILE[8:])
    nodes[2].kwargs = {"alpha": HOSTILE[7], HOSTILE[1]: HOSTILE[5]}
    return gm


def test_hostile_names_targets_and_constants_are_escaped():
    gm = hostile_module()
    dot_text = FxGraphDrawer(gm, 'evil"graph{').get_dot_graph().to_string()
    result = run_dot(dot_text)
    assert result.returncode == 0 and result.stderr == b"", result.stderr.decode()
    node_titles, edge_titles, texts = svg_parts(result.stdout)
    assert len(node_titles) == len(gm.graph.nodes) and len(set(node_titles)) == len(node_titles)
    assert len(edge_titles) == sum(len(n.users) for n in gm.graph.nodes)
    shown = "\n".join(texts)
    for name in HOSTILE[:4]:
        assert f"name=%{name}" in texts
    assert "target=&lt;&amp;" in texts  # entities shown as typed, not decoded
    for constant in ["trail\\,", "-->,", "node,", "é ∑ 中,"]:
        assert constant in texts
    assert "bell\\x07" in shown  # a control character shown as a code
    assert "{x|y}: \\N\\G\\l" in shown  # not replaced by the node name or a line break
    assert "alpha: line1" in texts and "line2," in texts  # a line break, not a lost string


@settings(deadline=None, max_examples=30)
@given(st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1,
               max_size=12).filter(lambda s: s.strip() == s and s not in ("x", "output")))
def test_any_printable_name_survives_the_round_trip(name):
    # Names are unique in a graph: the other two nodes are named x and output.
    gm = minifx.symbolic_trace(lambda x: x.relu())
    relu = list(gm.graph.nodes)[1]
    relu.name = name
    relu.target = name
    result = run_dot(FxGraphDrawer(gm, "g").get_dot_graph().to_string())
    assert result.returncode == 0, result.stderr.decode()
    node_titles, _, texts = svg_parts(result.stdout)
    assert len(node_titles) == 3
    assert f"name=%{name}" in texts and f"target={name}" in texts


def test_label_text_escapes_each_layer():
    assert label_text('a"b') == 'a\\"b'
    assert label_text("{|}<>") == r"\{\|\}\<\>"
    assert label_text("{|}", record=False) == "{|}"
    assert label_text("\\") == "\\\\"
    assert label_text("a\nb") == "a\\nb"
    assert label_text("&") == "&amp;"
    assert quote_id('a"b\\\n') == '"a\\"b\\\\\\n"'


# -- SVG ---------------------------------------------------------------------
def test_create_svg_runs_dot_and_is_deterministic():
    first = FxGraphDrawer(minifx.symbolic_trace(MyModule()), "MyModule").get_dot_graph()
    second = FxGraphDrawer(minifx.symbolic_trace(MyModule()), "MyModule").get_dot_graph()
    assert first.to_string() == second.to_string()
    svg = first.create_svg()
    assert svg == second.create_svg()
    node_titles, _, texts = svg_parts(svg)
    assert sorted(node_titles) == sorted(["x", "param", "add", "linear", "linear.weight",
                                          "linear.bias", "clamp", "output"])
    assert "target=operator.add" in texts


def test_write_svg(tmp_path):
    dot = FxGraphDrawer(minifx.symbolic_trace(MyModule()), "MyModule").get_dot_graph()
    dot.write_svg(tmp_path / "g.svg")
    assert (tmp_path / "g.svg").read_bytes() == dot.create_svg()


def test_missing_graphviz_is_a_clear_error(monkeypatch):
    dot = FxGraphDrawer(minifx.symbolic_trace(MyModule()), "MyModule").get_dot_graph()
    monkeypatch.setenv("PATH", "")
    with pytest.raises(RuntimeError, match="Graphviz") as info:
        dot.create_svg()
    assert "apt-get install graphviz" in str(info.value)
    assert "to_string()" in str(info.value)
    assert dot.to_string().startswith("digraph")  # the DOT text needs no Graphviz


# -- options -------------------------------------------------------------------
def test_ignore_getattr_and_weights():
    gm = minifx.symbolic_trace(MyModule())
    text = FxGraphDrawer(gm, "m", ignore_getattr=True,
                         ignore_parameters_and_buffers=True).get_dot_graph().to_string()
    nodes, edges = dot_nodes_and_edges(text)
    assert nodes == ['"x"', '"add"', '"linear"', '"clamp"', '"output"']
    assert all('"param"' not in edge for edge in edges)


def test_node_names_in_args_on_request():
    gm = minifx.symbolic_trace(MyModule())
    skipped = FxGraphDrawer(gm, "m").get_dot_graph().to_string()
    shown = FxGraphDrawer(gm, "m", skip_node_names_in_args=False).get_dot_graph().to_string()
    assert "args=(%x, %param)" not in skipped
    assert "args=(%x, %param)" in shown
    assert "args=(%clamp,)" in shown


def scale(x, factor, *, bias=0.0):
    return x * factor + bias


minifx.wrap("scale")


def test_normalize_args_names_each_argument():
    gm = minifx.symbolic_trace(lambda x: scale(x, 2.0))
    plain = FxGraphDrawer(gm, "m").get_dot_graph().to_string()
    normal = FxGraphDrawer(gm, "m", normalize_args=True).get_dot_graph().to_string()
    assert "args=(2.0,)" in plain
    assert r"kwargs=\{factor: 2.0\}" in normal


def test_parse_stack_trace_shows_the_source_line():
    class Recording(minifx.Tracer):
        record_stack_traces = True

    def f(x):
        return x.relu()

    graph = Recording().trace(f)
    gm = minifx.GraphModule({}, graph)
    text = FxGraphDrawer(gm, "m", parse_stack_trace=True).get_dot_graph().to_string()
    assert "test_graph_drawer.py:" in text and "return x.relu()" in text


def test_other_shapes_use_lines_instead_of_cells():
    gm = minifx.symbolic_trace(MyModule())
    dot = FxGraphDrawer(gm, "m", dot_graph_shape="box").get_dot_graph()
    text = dot.to_string()
    assert 'shape="box"' in text and "label=\"{" not in text
    assert r"kwargs={min: 0.0, max: 1.0}" in text
    _, _, texts = svg_parts(dot.create_svg())
    assert "kwargs={min: 0.0, max: 1.0}" in texts


def test_graph_modules_inside_get_their_own_graph():
    inner = minifx.symbolic_trace(lambda x: x.relu() + 1)
    root = tensor.nn.Module()
    root.inner = inner
    outer_graph = minifx.Graph()
    x = outer_graph.placeholder("x")
    outer_graph.output(outer_graph.call_module("inner", (x,)))
    outer = minifx.GraphModule(root, outer_graph)
    drawer = FxGraphDrawer(outer, "outer")
    assert list(drawer.get_all_dot_graphs()) == ["outer", "outer_inner"]
    assert drawer.get_dot_graph("inner") is drawer.get_submod_dot_graph("inner")
    assert drawer.get_dot_graph() is drawer.get_main_dot_graph()
    inner_nodes, _ = dot_nodes_and_edges(drawer.get_dot_graph("inner").to_string())
    assert inner_nodes == [quote_id(n.name) for n in inner.graph.nodes]
    with pytest.raises(KeyError, match="'missing'.*'inner'"):
        drawer.get_submod_dot_graph("missing")


def test_a_missing_submodule_is_named():
    gm = minifx.symbolic_trace(MyModule())
    del gm.linear
    with pytest.raises(RuntimeError, match="node linear calls module 'linear'"):
        FxGraphDrawer(gm, "m")


# -- colouring by a meta value -----------------------------------------------------
def fill_colours(gm, **options) -> dict[str, str]:
    text = FxGraphDrawer(gm, "g", **options).get_dot_graph().to_string()
    colours = {}
    for node in gm.graph.nodes:
        line = next(t for t in text.splitlines() if t.startswith(f"  {quote_id(node.name)} ["))
        colours[node.name] = re.search(r'fillcolor="(#[0-9a-f]{6})"', line).group(1)
    return colours


def test_colour_by_gives_each_meta_value_its_own_colour():
    def f(x):
        return tensor.relu(x.sigmoid() + 1) * tensor.tanh(x - 2)

    gm = minifx.symbolic_trace(f)
    groups = {"sigmoid": 0, "add": 0, "relu": 0, "sub": 1, "tanh": 1, "mul": 2}
    for node in gm.graph.nodes:
        if node.name in groups:
            node.meta["group"] = groups[node.name]
    colours = fill_colours(gm, colour_by="group")
    assert colours["sigmoid"] == colours["add"] == colours["relu"]
    assert colours["sub"] == colours["tanh"]
    assert len({colours["add"], colours["sub"], colours["mul"]}) == 3
    assert colours["x"] == colours["output"] == "#ffffff"  # not in any group
    text = FxGraphDrawer(gm, "g", colour_by="group").get_dot_graph().to_string()
    assert "group=1" in next(t for t in text.splitlines() if t.startswith('  "tanh"'))
    # without the option, the colours are the opcodes' as before
    plain = fill_colours(gm)
    assert plain["relu"] == plain["tanh"] != plain["x"]  # both call_function
    assert plain["sigmoid"] != plain["relu"]  # a method, yellow


def test_lessons_draw_figures_in_chapters_1_2_and_3():
    from book import lesson_blocks

    chapters = set()
    for page in sorted(LESSONS.glob("ch*.md")):
        if any(b.language == "figure" for b in lesson_blocks.parse_blocks(page.read_text())):
            chapters.add(page.name[:4])
    assert {"ch01", "ch02", "ch03"} <= chapters
