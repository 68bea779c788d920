"""FxGraphDrawer: a GraphModule's graph as a picture.

A printed graph lists nodes one per line; a picture shows at a glance which
node feeds which. The drawer writes the graph in Graphviz's DOT language (one
box per node, one arrow from each node to each of its users) and hands the
text to Graphviz's ``dot`` program to lay it out as SVG.

torch.fx builds the same picture through the pydot package. minifx writes
the DOT text itself, which keeps it free of dependencies and lets it make
the text deterministic: the same graph always gives the same bytes, so a
lesson can rewrite its figures without changing them.

Everything that comes from the graph (node names, targets, string constants)
is escaped before it enters the DOT text, so no name can break the syntax.
"""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..graph_module import GraphModule
from ..node import Node, fetch_path, map_aggregate, pretty_target, qualified_name

# --8<-- [start:palette]
# One fill colour per opcode, so the kind of each box shows before its text
# is read: inputs blue, stored values grey, computations green (functions),
# yellow (methods) and rose (modules), the result lilac.
OP_COLOURS = {
    "placeholder": "#cfe2f3",
    "get_attr": "#e0e0e0",
    "call_function": "#d9ead3",
    "call_method": "#fff2cc",
    "call_module": "#f4cccc",
    "output": "#d9d2e9",
}
WEIGHT_COLOUR = "#fce5cd"  # parameters and buffers inside a leaf module
UNKNOWN_COLOUR = "#ffffff"
# With ``colour_by``, boxes are coloured by a node.meta value instead (a group
# number, a partition): one colour per distinct value, in order of first use.
GROUP_COLOURS = (
    "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
    "#fdb462", "#b3de69", "#fccde5", "#bc80bd", "#ccebc5",
)
# --8<-- [end:palette]

RECORD_SHAPES = ("record", "Mrecord")
MAX_LIST_ITEMS = 8  # longer lists and tuples in a label end in "..."
LONG_FIELD = 40  # args or kwargs longer than this get one line per item

GRAPHVIZ_MISSING = (
    "FxGraphDrawer needs Graphviz's `{prog}` program to turn DOT text into {format}, "
    "and `{prog}` is not on PATH. Install Graphviz (Debian/Ubuntu: "
    "`sudo apt-get install graphviz`; macOS: `brew install graphviz`; conda: "
    "`conda install graphviz`), or call to_string() and render the DOT text elsewhere."
)


# --8<-- [start:escaping]
def quote_id(text: str) -> str:
    """A DOT identifier for any string: quoted, with quotes and newlines escaped.

    Inside a quoted DOT string only ``\\"`` is special to the parser (and a
    backslash before a newline), so escaping backslashes, quotes and line
    breaks is enough to keep any name in one piece.
    """
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r") + '"'


_RECORD_SPECIALS = re.compile(r"([{}|<>])")


def label_text(text: str, record: bool = True) -> str:
    """Raw text made safe inside a quoted DOT label, to be shown exactly as it is.

    Labels are read three times: by the DOT parser (quotes), by the label
    formatter (backslash escapes such as ``\\N``, which would print the node
    name; HTML entities such as ``&lt;``) and, for record shapes, by the
    record parser (``{ } | < >`` split and name fields). Each reading gets
    its escape. A line break in the text becomes a line break in the box;
    other control characters become visible ``\\xNN`` codes, because SVG
    (XML) cannot carry them.
    """
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")
    if record:
        text = _RECORD_SPECIALS.sub(r"\\\1", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return "".join(
        f"\\\\x{ord(c):02x}" if (ord(c) < 32 and c != "\t") or c == "\x7f" else c for c in text
    )
# --8<-- [end:escaping]


def format_arg(arg: Any) -> str:
    """An argument as a label shows it: Nodes as ``%name``, long lists cut short."""
    if isinstance(arg, Node):
        return "%" + arg.name
    if isinstance(arg, (list, tuple)):
        items = [format_arg(a) for a in arg[:MAX_LIST_ITEMS]]
        if len(arg) > MAX_LIST_ITEMS:
            items.append(f"...[total_len={len(arg)}]")
        inner = ", ".join(items)
        if isinstance(arg, list):
            return f"[{inner}]"
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg)


def _mentions_node(arg: Any) -> bool:
    found = []
    map_aggregate(arg, lambda a: found.append(a) if isinstance(a, Node) else None)
    return bool(found)


def _normalized(node: Node) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A call_function node's arguments, all by keyword where the signature allows."""
    try:
        bound = inspect.signature(node.target).bind(*node.args, **node.kwargs)
    except (TypeError, ValueError):  # no signature (a C builtin), or it does not fit
        return node.args, node.kwargs
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        kind = bound.signature.parameters[name].kind
        if kind is inspect.Parameter.POSITIONAL_ONLY:
            args.append(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            args.extend(value)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            kwargs.update(value)
        else:
            kwargs[name] = value
    return tuple(args), kwargs


def _parse_stack_trace(stack_trace: str) -> tuple[str, str, str] | None:
    """(file, line, code) of the innermost frame of a recorded stack trace."""
    lines = stack_trace.strip().split("\n")
    for i in range(len(lines) - 2, -1, -1):
        match = re.match(r'File "(.+)", line (\d+), in .+$', lines[i].strip())
        if match:
            return match.group(1), match.group(2), lines[i + 1].strip()
    return None


def _leaf_module(graph_module: Any, node: Node) -> Any:
    """The submodule a call_module node calls, with an error naming what is missing."""
    try:
        return fetch_path(graph_module, node.target)
    except AttributeError as e:
        raise RuntimeError(
            f"FxGraphDrawer: node {node.name} calls module {node.target!r}, but {e}") from None


def _type_name(obj: Any) -> str:
    try:
        return qualified_name(type(obj))
    except RuntimeError:
        return type(obj).__name__


# --8<-- [start:dot_graph]
class DotGraph:
    """A DOT digraph under construction: nodes and edges in the order they are added.

    It offers the part of pydot's ``Dot`` that FxGraphDrawer's users call:
    ``to_string()``, ``create_svg()`` and ``write_svg(path)``.
    """

    def __init__(self, name: str, node_shape: str = "record") -> None:
        self.name = name
        self.node_shape = node_shape
        self.nodes: list[tuple[str, str, str]] = []  # (id, label, fill colour)
        self.edges: list[tuple[str, str]] = []  # (tail id, head id)

    def get_name(self) -> str:
        return self.name

    def add_node(self, node_id: str, label: str, fillcolor: str) -> None:
        """Add a box; ``label`` is DOT label text, already escaped."""
        self.nodes.append((node_id, label, fillcolor))

    def add_edge(self, tail: str, head: str) -> None:
        self.edges.append((tail, head))

    def to_string(self) -> str:
        lines = [
            f"digraph {quote_id(self.name)} {{",
            "  rankdir=TB;",
            f"  node [shape={quote_id(self.node_shape)}, style=\"filled,rounded\", "
            'fontname="Helvetica", fontsize=11, color="#555555", penwidth=1];',
            '  edge [color="#555555", arrowsize=0.7];',
        ]
        for node_id, label, colour in self.nodes:
            lines.append(f'  {quote_id(node_id)} [label="{label}", fillcolor="{colour}"];')
        for tail, head in self.edges:
            lines.append(f"  {quote_id(tail)} -> {quote_id(head)};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def create(self, prog: str = "dot", format: str = "svg") -> bytes:
        """Run Graphviz's ``prog`` on this graph and return its ``format`` output."""
        executable = shutil.which(prog)
        if executable is None:
            raise RuntimeError(GRAPHVIZ_MISSING.format(prog=prog, format=format.upper()))
        result = subprocess.run(
            [executable, f"-T{format}"],
            input=self.to_string().encode("utf-8"),
            capture_output=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"Graphviz's `{prog}` failed on graph {self.name!r} "
                f"(exit code {result.returncode}):\n{result.stderr.decode(errors='replace')}")
        return result.stdout

    def create_svg(self) -> bytes:
        return self.create(format="svg")

    def write_svg(self, path: str | Path) -> None:
        Path(path).write_bytes(self.create_svg())
# --8<-- [end:dot_graph]


# --8<-- [start:drawer]
class FxGraphDrawer:
    """Draw a GraphModule's graph, and the graph of every GraphModule it calls.

    ``FxGraphDrawer(gm, "name").get_dot_graph()`` is the main graph;
    ``get_submod_dot_graph("sub")`` is the graph of the GraphModule that a
    ``call_module`` node with target ``sub`` calls (drawn as ``name_sub``).
    """

    def __init__(
        self,
        graph_module: GraphModule,
        name: str,
        ignore_getattr: bool = False,
        ignore_parameters_and_buffers: bool = False,
        skip_node_names_in_args: bool = True,
        parse_stack_trace: bool = False,
        dot_graph_shape: str | None = None,
        normalize_args: bool = False,
        colour_by: str | None = None,
    ) -> None:
        """``colour_by`` names a ``node.meta`` key: nodes with the same value share a
        fill colour (and show the value), nodes without it are white. It draws a
        partition of the graph, such as the groups a compiler fuses; torch.fx's
        drawer has no such option."""
        self._name = name
        self.colour_by = colour_by
        self.dot_graph_shape = dot_graph_shape if dot_graph_shape is not None else "record"
        self.normalize_args = normalize_args
        self._options = (ignore_getattr, ignore_parameters_and_buffers,
                         skip_node_names_in_args, parse_stack_trace)
        self._dot_graphs = {name: self._to_dot(graph_module, name)}
        for node in graph_module.graph.nodes:
            if node.op == "call_module":
                submodule = _leaf_module(graph_module, node)
                if isinstance(submodule, GraphModule):
                    sub_name = f"{name}_{node.target}"
                    self._dot_graphs[sub_name] = self._to_dot(submodule, sub_name)

    def get_dot_graph(self, submod_name: str | None = None) -> DotGraph:
        """The drawing of the graph, or of the GraphModule called as ``submod_name``.

        A ``DotGraph`` rather than a string, because turning DOT into a
        picture (``create_svg``) is a separate step that needs Graphviz.
        """
        if submod_name is None:
            return self.get_main_dot_graph()
        return self.get_submod_dot_graph(submod_name)

    def get_main_dot_graph(self) -> DotGraph:
        """The drawing of the top-level graph."""
        return self._dot_graphs[self._name]

    def get_submod_dot_graph(self, submod_name: str) -> DotGraph:
        key = f"{self._name}_{submod_name}"
        if key not in self._dot_graphs:
            drawn = [k[len(self._name) + 1:] for k in self._dot_graphs if k != self._name]
            raise KeyError(
                f"FxGraphDrawer: no GraphModule is called as {submod_name!r}; "
                f"the submodules drawn are {drawn}")
        return self._dot_graphs[key]

    def get_all_dot_graphs(self) -> dict[str, DotGraph]:
        return dict(self._dot_graphs)

    # -- building one graph ------------------------------------------------
    def _to_dot(self, graph_module: GraphModule, name: str) -> DotGraph:
        ignore_getattr, ignore_weights, _, _ = self._options
        dot = DotGraph(name, self.dot_graph_shape)
        drawn = [n for n in graph_module.graph.nodes
                 if not (ignore_getattr and n.op == "get_attr")]
        group_colours: dict[Any, str] = {}
        for node in drawn:
            colour = OP_COLOURS.get(node.op, UNKNOWN_COLOUR)
            if self.colour_by is not None:
                colour = UNKNOWN_COLOUR
                if self.colour_by in node.meta:
                    value = node.meta[self.colour_by]
                    if value not in group_colours:
                        index = len(group_colours) % len(GROUP_COLOURS)
                        group_colours[value] = GROUP_COLOURS[index]
                    colour = group_colours[value]
            dot.add_node(node.name, self._node_label(graph_module, node), colour)
            if node.op == "call_module" and not ignore_weights:
                submodule = _leaf_module(graph_module, node)
                if not isinstance(submodule, GraphModule):
                    self._add_weights(dot, node, submodule)
        for node in drawn:
            for user in node.users:  # an ordered set: the edge order is stable
                dot.add_edge(node.name, user.name)
        return dot

    def _add_weights(self, dot: DotGraph, node: Node, module: Any) -> None:
        """One small box per parameter and buffer of a leaf module, pointing at its call."""
        weights = [(n, t, "get_parameter") for n, t in module.named_parameters()]
        weights += [(n, t, "get_buffer") for n, t in module.named_buffers()]
        for weight_name, value, kind in weights:
            weight_id = f"{node.name}.{weight_name}"
            described = f"{value.dtype}{list(value.shape)}"
            fields = [weight_id, f"op_code={kind}", described]
            dot.add_node(weight_id, self._join(fields), WEIGHT_COLOUR)
            dot.add_edge(weight_id, node.name)

    def _join(self, fields: list[str]) -> str:
        """Fields (raw text) as one label: a column of cells, or lines of text."""
        record = self.dot_graph_shape in RECORD_SHAPES
        cells = [label_text(f, record) for f in fields]
        if record:
            return "{" + "|".join(cells) + "}"
        return "\\n".join(cells)

    def _node_label(self, graph_module: GraphModule, node: Node) -> str:
        _, _, skip_node_names, parse_stack = self._options
        fields = [f"name=%{node.name}", f"op_code={node.op}"]
        if node.op == "call_module":
            submodule = _leaf_module(graph_module, node)
            extra = submodule.extra_repr() if hasattr(submodule, "extra_repr") else ""
            fields.append(f"target={node.target}")
            fields.append(f"{_type_name(submodule)}\n{extra}" if extra else _type_name(submodule))
        elif node.op != "output":
            fields.append(f"target={pretty_target(node.target)}")
        args, kwargs = node.args, node.kwargs
        if self.normalize_args and node.op == "call_function":
            args, kwargs = _normalized(node)
        arg_items = [format_arg(a) for a in args
                     if not (skip_node_names and _mentions_node(a))]
        kwarg_items = [f"{k}: {format_arg(v)}" for k, v in kwargs.items()
                       if not (skip_node_names and _mentions_node(v))]
        if arg_items:
            fields.append(self._listing("args=(", arg_items, ")"))
        if kwarg_items:
            fields.append(self._listing("kwargs={", kwarg_items, "}"))
        if node.op != "output":
            fields.append(f"num_users={len(node.users)}")
        fields += self._tensor_meta_fields(node.meta.get("tensor_meta"))
        if self.colour_by is not None and self.colour_by in node.meta:
            fields.append(f"{self.colour_by}={node.meta[self.colour_by]}")
        if parse_stack and node.stack_trace:
            frame = _parse_stack_trace(node.stack_trace)
            if frame is not None:
                file, line, code = frame
                short_file = "/".join(file.split("/")[-2:])
                fields.append(f"file={short_file}:{line} {code}")
        return self._join(fields)

    @staticmethod
    def _listing(opening: str, items: list[str], closing: str) -> str:
        """``args=(a, b)`` on one line, or one item per line when that is long."""
        if len(items) == 1 and opening == "args=(":
            return f"{opening}{items[0]},{closing}"
        one_line = f"{opening}{', '.join(items)}{closing}"
        if len(one_line) <= LONG_FIELD:
            return one_line
        return opening + "\n" + ",\n".join(items) + "\n" + closing

    def _tensor_meta_fields(self, meta: Any) -> list[str]:
        """dtype, shape and stride of each tensor ShapeProp recorded (nested: in order)."""
        if meta is None:
            return []
        if hasattr(meta, "shape") and hasattr(meta, "dtype"):  # one TensorMetadata
            fields = [f"dtype={meta.dtype}", f"shape={tuple(meta.shape)}"]
            stride = getattr(meta, "stride", None)
            if stride is not None:
                fields.append(f"stride={tuple(stride)}")
            return fields
        if isinstance(meta, dict):
            meta = list(meta.values())
        if isinstance(meta, (list, tuple)):
            return [field for item in meta for field in self._tensor_meta_fields(item)]
        raise RuntimeError(
            f"FxGraphDrawer: node meta 'tensor_meta' holds a {type(meta).__name__}; "
            f"expected tensor metadata or a list, tuple or dict of it")
# --8<-- [end:drawer]
