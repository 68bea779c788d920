"""What torch.fx does only for speed or for compatibility: skip it on a first read.

Each piece is used in one place, which says so in its docstring:

- ``stack_comment``: the ``# File: model.py:12 in forward, code: ...`` comments of
  ``GraphModule.print_readable`` (codegen.py, ``CodeWriter.write``).
- ``unpack_count``: how ``a, b = proxy`` knows it wants two items: it reads the
  caller's bytecode (proxy.py, ``Proxy.__iter__``).
- ``compiled_code`` / ``with_filename``: a deepcopied GraphModule reuses its
  original's compiled ``forward`` instead of compiling the same source again,
  the dearest step of a copy (graph_module.py, ``GraphModule.recompile``).
- ``copy_graph_fast``: ``Graph.__deepcopy__`` in one loop (graph.py).
"""

from __future__ import annotations

import copy
import dis
import re
import types
from types import FrameType
from typing import TYPE_CHECKING, Any

from .node import Node, copy_arg

if TYPE_CHECKING:
    from .graph import Graph

_stack_re = re.compile(r'^File "(.+)", line (\d+), in (.+)$')


def stack_summary(stack_trace: str | None) -> str | None:
    """``File: <file>:<line> in <fn>, code: <code>`` from the innermost frame."""
    if not stack_trace:
        return None
    lines = stack_trace.strip().split("\n")
    for i in range(len(lines) - 2, -1, -1):
        match = _stack_re.match(lines[i].strip())
        if match:
            file, lineno, name = match.groups()
            return f"File: {file}:{lineno} in {name}, code: {lines[i + 1].strip()}"
    return None


def stack_comment(node: Node, previous: str | None, body: list[str]) -> str | None:
    """Append ``# <where node was traced>`` to ``body`` when it differs from ``previous``
    (the last comment written); return the comment now in force."""
    if node.op in ("placeholder", "output"):
        return previous
    summary = stack_summary(node.stack_trace) or "No stacktrace found for following nodes"
    if summary != previous:
        body.append(f"\n# {summary}\n")
    return summary


def unpack_count(frame: FrameType | None) -> int | None:
    """If ``frame`` is executing ``UNPACK_SEQUENCE n`` (``a, b = proxy``), return n."""
    if frame is None:
        return None
    current = None
    for inst in dis.get_instructions(frame.f_code):
        if inst.offset > frame.f_lasti:
            break
        current = inst
    if current is not None and current.opname == "UNPACK_SEQUENCE":
        return int(current.argval)
    return None


def compiled_code(forward: Any, src: str) -> types.CodeType | None:
    """The code ``forward`` was made from, if it was compiled from ``src``
    (``_forward_from_src`` keeps both on each ``forward`` as ``_fx_compiled``)."""
    compiled = getattr(forward, "_fx_compiled", None)
    return compiled[1] if compiled is not None and compiled[0] == src else None


def with_filename(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` as if compiled under ``filename`` (the functions it defines too)."""
    consts = tuple(with_filename(c, filename) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def copy_graph_fast(source: Graph, g: Graph) -> None:
    """What ``g.graph_copy(source, {})`` then ``g.output(...)`` do, in one loop without
    the checks that cannot fail here (every input is already copied into ``g``, which
    has no output yet): deepcopy is a hot path (a compile copies its module)."""
    val_map: dict[Node, Node] = {}
    for node in source.nodes:
        if node.op == "output":
            rv = copy_arg(node.args[0], {}, val_map)
            g.create_node("output", "output", (rv,), type_expr=node.type)
            break
        name = g._graph_namespace.create_name(node.name, None)
        new = Node(g, name, node.op, node.target, copy_arg(node._args, {}, val_map),
                   copy_arg(node._kwargs, {}, val_map), node.type)
        new.meta = copy.copy(node.meta)
        g._insert(new)
        g._len += 1
        val_map[node] = new
