"""Recorder: what each step of a pass did to a graph, kept as JSON-able data.

A printed graph before and after a rewrite shows the result, not the
rewrite. The recorder keeps, for every step, enough to replay it: both
graphs node by node, which nodes were added, erased or replaced (and by
which), which changed their target or inputs, the generated code on both
sides, and the changes to ``node.meta`` that JSON can hold (shapes from
``tensor_meta``, fused groups). A test asserts on it; a viewer can draw it.

**What a step is.** One pass application: ``PassManager(record=True)``
records each pass it runs, and ``Recorder.run`` / ``Recorder.wrap`` record
any pass or Transformer run by hand. A pass that wants finer steps calls
``recorder.checkpoint(gm, label)`` between its rewrites. There is no hook in
``Graph``: a step is the difference of two snapshots, which finds what a
hook on create and erase would find, except a node made and erased within
one step, and leaves the core untouched.

**Which node is which.** Each node gets a small integer id the first time
a snapshot sees it, kept in a weak map from the Node object (so nothing is
written into ``node.meta``, and the map forgets erased nodes). A node edited
in place keeps its id across every step. A pass that returns a *new* graph
(a Transformer, a deepcopy) has new Node objects; there a node takes over
the id of the previous graph's node with the same name and opcode, since
those passes keep names, and the nodes left over are added or erased.
"""

from __future__ import annotations

import inspect
import itertools
import json
import weakref
from collections.abc import Callable
from typing import Any

from ...node import Node, _format_arg, pretty_target, type_repr
from ..shape_prop import TensorMetadata

# Meta keys that say where a node came from, not what the graph is: the
# same before and after, and long.
_NOT_RECORDED = ("stack_trace",)
_UNSERIALISABLE = object()


def _json_value(value: Any) -> Any:
    """``value`` as JSON data, or ``_UNSERIALISABLE``; a TensorMetadata as shape and dtype."""
    if isinstance(value, TensorMetadata):
        return {"shape": list(value.shape), "dtype": str(value.dtype)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, type):
        return type_repr(value)
    if isinstance(value, (list, tuple)):
        items = [_json_value(v) for v in value]
        return _UNSERIALISABLE if _UNSERIALISABLE in items else items
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        items = {k: _json_value(v) for k, v in value.items()}
        return _UNSERIALISABLE if _UNSERIALISABLE in items.values() else items
    return _UNSERIALISABLE


def _json_meta(meta: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in meta.items():
        data = _json_value(value)
        if key not in _NOT_RECORDED and data is not _UNSERIALISABLE:
            out[key] = data
    return out


class _ForeignNode:
    """A node of another FX (torch.fx's, when its run is recorded to compare),
    printed as ``str(graph)`` prints a node: ``%name``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return "%" + self.name


def _text(arg: Any) -> str:
    """An argument as our graphs print it, whichever FX's nodes it holds."""
    def named(value: Any) -> Any:
        if isinstance(value, Node):
            return value
        if hasattr(value, "op") and hasattr(value, "graph") and hasattr(value, "name"):
            return _ForeignNode(value.name)
        if isinstance(value, list):
            return [named(v) for v in value]
        if isinstance(value, tuple):
            return tuple(named(v) for v in value)
        if isinstance(value, dict):
            return {k: named(v) for k, v in value.items()}
        return value

    return _format_arg(named(arg))


def _graph_of(module: Any) -> Any:
    graph = getattr(module, "graph", None)
    if graph is None:
        raise TypeError(f"the recorder needs a GraphModule (something with a .graph), "
                        f"got {type(module).__name__}")
    return graph


def _module_after(result: Any, module: Any) -> Any:
    """The module a pass left: a PassResult's, the one it returned, or else its input.

    A result that is neither (None, or a mistake the caller will report)
    means the pass worked in place, if it did anything.
    """
    if hasattr(result, "graph_module"):
        return result.graph_module
    return result if hasattr(result, "graph") else module


# The fields of a node that a rewrite changes in place.
_SHAPE_FIELDS = ("op", "target", "args", "kwargs", "inputs")


class Recorder:
    """Snapshots of a graph between the steps of passes, and what changed at each step.

    ``steps`` is a list of dicts, one per step: ``name``, ``round`` (the
    PassManager round, or None), ``modified`` (what the pass reported, None
    if it returned no PassResult), ``before`` and ``after`` (snapshots:
    ``nodes``, ``graph`` text, ``code``), then ``added`` and ``erased`` (node
    ids), ``replaced`` (``{"node", "by"}``), ``changed`` (``{"node",
    "fields": {field: [before, after]}}``) and ``meta_changes`` (``{"node",
    "key", "before", "after"}``).
    """

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self._ids: weakref.WeakKeyDictionary[Node, int] = weakref.WeakKeyDictionary()
        self._fresh = itertools.count()
        self._last: dict[str, Any] | None = None  # the latest snapshot
        self._last_graph: Callable[[], Any] = lambda: None  # a weak reference to its graph

    # -- snapshots ---------------------------------------------------------
    def _identify(self, graph: Any) -> None:
        """Give every node of ``graph`` an id: its own, a namesake's in a replaced graph, or new."""
        nodes = list(graph.nodes)
        unknown = [n for n in nodes if n not in self._ids]
        if not unknown:
            return
        namesakes: dict[tuple[str, str], int] = {}
        if self._last is not None and graph is not self._last_graph():
            taken = {self._ids[n] for n in nodes if n in self._ids}
            namesakes = {(e["name"], e["op"]): e["id"] for e in self._last["nodes"]
                         if e["id"] not in taken}
        for node in unknown:
            found = namesakes.pop((node.name, node.op), None)
            self._ids[node] = next(self._fresh) if found is None else found

    def snapshot(self, module: Any) -> dict[str, Any]:
        """The graph of ``module`` now, as data; later snapshots and steps diff against it."""
        graph = _graph_of(module)
        self._identify(graph)
        ident = self._ids.get
        nodes = [{
            "id": ident(n), "name": n.name, "op": n.op, "target": pretty_target(n.target),
            "args": _text(n.args), "kwargs": _text(n.kwargs),
            "inputs": [ident(i) for i in n.all_input_nodes],
            "users": [ident(u) for u in n.users], "meta": _json_meta(n.meta),
        } for n in graph.nodes]
        shot = {"nodes": nodes, "graph": str(graph),
                "code": graph.python_code(root_module="self").src}
        self._last, self._last_graph = shot, weakref.ref(graph)
        return shot

    # -- steps -------------------------------------------------------------
    def run(self, fn: Callable[[Any], Any], module: Any, name: str | None = None,
            round_index: int | None = None) -> Any:
        """Call the pass ``fn(module)``, record the step, and return what ``fn`` returned."""
        before = self.snapshot(module)
        result = fn(module)
        after = self.snapshot(_module_after(result, module))
        modified = result.modified if hasattr(result, "modified") else None
        self._add(name or _name_of(fn), before, after, modified, round_index)
        return result

    def wrap(self, fn: Callable[[Any], Any], name: str | None = None) -> Callable[[Any], Any]:
        """``fn`` recorded at every call (a pass for any runner, or a Transformer's factory)."""
        label = name or _name_of(fn)

        def recorded(module: Any) -> Any:
            return self.run(fn, module, name=label)

        recorded.__name__ = label
        return recorded

    def checkpoint(self, module: Any, label: str) -> dict[str, Any]:
        """Record what changed since the last snapshot as a step named ``label``.

        Call it inside a pass, between rewrites, to see them one at a time.
        The first call only takes the starting snapshot and records nothing.
        """
        before = self._last
        after = self.snapshot(module)
        if before is None:
            return after
        return self._add(label, before, after, None, None)

    def _add(self, name: str, before: dict[str, Any], after: dict[str, Any],
             modified: bool | None, round_index: int | None) -> dict[str, Any]:
        step = {"index": len(self.steps), "name": name, "round": round_index, "modified": modified,
                "before": before, "after": after, **_diff(before, after)}
        self.steps.append(step)
        return step

    # -- output ------------------------------------------------------------
    def as_dict(self) -> dict[str, Any]:
        """All steps as plain data (lists, dicts, strings, numbers)."""
        return {"steps": self.steps}

    def to_json(self, indent: int | None = None) -> str:
        """``as_dict()`` as JSON text, what a viewer reads."""
        return json.dumps(self.as_dict(), indent=indent)

    def describe(self) -> str:
        """One line per step, nodes by name: what a learner reads first."""
        return "\n".join(_describe(step) for step in self.steps)


def _name_of(fn: Callable[..., Any]) -> str:
    return fn.__name__ if inspect.isfunction(fn) else type(fn).__name__


def _diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What turned ``before`` into ``after``, node by node (nodes by id)."""
    old = {e["id"]: e for e in before["nodes"]}
    new = {e["id"]: e for e in after["nodes"]}
    erased = [i for i in old if i not in new]
    kept = [i for i in new if i in old]
    replaced = []
    for gone in erased:
        # The users that read `gone` and survived now read its replacement in its place.
        by: dict[int, None] = {}
        for user in old[gone]["users"]:
            if user not in new:
                continue
            was, now = old[user]["inputs"], new[user]["inputs"]
            if len(was) == len(now):
                by.update((n, None) for o, n in zip(was, now) if o == gone and n != gone)
            else:
                by.update((n, None) for n in now if n not in was)
        if by:
            replaced.append({"node": gone, "by": list(by)})
    changed = []
    for i in kept:
        fields = {f: [old[i][f], new[i][f]] for f in _SHAPE_FIELDS if old[i][f] != new[i][f]}
        if fields:
            changed.append({"node": i, "fields": fields})
    meta_changes = [
        {"node": i, "key": key, "before": old[i]["meta"].get(key), "after": new[i]["meta"].get(key)}
        for i in kept for key in sorted(old[i]["meta"].keys() | new[i]["meta"].keys())
        if old[i]["meta"].get(key) != new[i]["meta"].get(key)]
    return {"added": [i for i in new if i not in old], "erased": erased, "replaced": replaced,
            "changed": changed, "meta_changes": meta_changes}


def _describe(step: dict[str, Any]) -> str:
    names = {e["id"]: e["name"] for e in step["before"]["nodes"] + step["after"]["nodes"]}
    parts = [f"added {[names[i] for i in step['added']]}" if step["added"] else "",
             f"erased {[names[i] for i in step['erased']]}" if step["erased"] else "",
             *(f"{names[r['node']]} replaced by {[names[i] for i in r['by']]}"
               for r in step["replaced"]),
             *(f"{names[c['node']]}.{f}: {a} -> {b}" for c in step["changed"]
               for f, (a, b) in c["fields"].items() if f != "inputs"),
             f"meta of {sorted({names[m['node']] for m in step['meta_changes']})}"
             if step["meta_changes"] else ""]
    done = "; ".join(p for p in parts if p) or "no change"
    return f"{step['index']}. {step['name']} (modified={step['modified']}): {done}"
