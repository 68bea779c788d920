"""Find every copy of a small graph (the pattern) in a bigger one and swap in another.

``replace_pattern(gm, pattern, replacement)`` traces ``pattern`` and
``replacement`` into graphs, finds where the pattern's graph occurs in
``gm.graph``, and puts the replacement's graph in its place. Matching works
on use-def edges, not names: walk backwards from the pattern's result and
from a candidate node together, and require the same ``op`` and ``target``
and the same argument structure at every step. The pattern's placeholders
are wildcards that match whatever feeds the subgraph.

The behaviour (which matches are found, in which order, where the new nodes
go and what they are called) follows torch.fx 2.13's
``torch.fx.subgraph_rewriter.replace_pattern``, so the rewritten graph prints
the same.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, NamedTuple

from ._framework import framework_of
from .graph import Graph
from .graph_module import GraphModule
from .node import Argument, Node, fetch_path
from .tracer import symbolic_trace

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    # The pattern node that matching started from (its first result), as in torch.fx.
    anchor: Node
    # Each pattern node (placeholders included) -> the graph node or value it matched.
    nodes_map: dict[Node, Any]


# --8<-- [start:matcher]
class _Found:
    """One place where the pattern occurs (one consistent ``pattern node -> graph node`` map)."""

    def __init__(self, anchor: Node, nodes_map: dict[Node, Any]) -> None:
        self.anchor = anchor
        self.nodes_map = nodes_map
        self.placeholder_nodes: list[Any] = []
        self.returning_nodes: list[Node] = []


class _SubgraphMatcher:
    """Finds the non-overlapping, self-contained occurrences of ``pattern`` in a graph."""

    def __init__(self, pattern: Graph) -> None:
        nodes = list(pattern.nodes)
        if not nodes or nodes[-1].op != "output":
            raise ValueError("replace_pattern: the pattern graph has no output node")
        for node in nodes:
            if node.op == "placeholder" and not node.users:
                raise ValueError(
                    f"replace_pattern: the pattern's input {node.name!r} is never used; "
                    "a pattern takes only the inputs it reads")
            if node.op not in ("placeholder", "output") and not node.users \
                    and not node.is_impure():
                raise ValueError(
                    f"replace_pattern: pattern node {node.name!r} is dead code (nothing uses it)")
        self.placeholders = [n for n in nodes if n.op == "placeholder"]
        self.returning = nodes[-1].all_input_nodes
        # Matching starts from the pattern's results that nothing else in the pattern reads.
        self.anchors = [n for n in self.returning if len(n.users) == 1]

    # -- one node against one node --------------------------------------------
    @staticmethod
    def _same_kind(pn: Node, gn: Node) -> bool:
        if pn.op == "placeholder":  # a wildcard
            return True
        if pn.op != gn.op:
            return False
        if pn.op == "get_attr":  # constants match by kind, not by value
            return _attributes_match(pn, gn)
        return pn.target == gn.target
    # --8<-- [end:matcher]

    # --8<-- [start:match_node]
    def _match_node(self, pn: Node, gn: Node, nodes_map: dict[Node, Any]) -> bool:
        """Whether pattern node ``pn`` can be graph node ``gn``, given the pairs in ``nodes_map``.

        A pattern node already paired must be paired with ``gn``; a graph node
        pairs with one pattern node at most. Otherwise they must be of the same
        kind (``_same_kind``), and then the pair is recorded in ``nodes_map``
        (callers pass a copy they drop on failure). A placeholder matches any
        node. Any other node needs as many args as ``gn``, the same kwargs
        names in the same order, and its args followed by its kwargs' values
        matching ``gn``'s (``_match_args``).
        """
        if pn in nodes_map:
            return nodes_map[pn] is gn
        if any(v is gn for v in nodes_map.values()):  # one graph node per pattern node
            return False
        if not self._same_kind(pn, gn):
            return False
        nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True
        if len(pn.args) != len(gn.args) or list(pn.kwargs) != list(gn.kwargs):
            return False
        return self._match_args(
            [*pn.args, *pn.kwargs.values()], [*gn.args, *gn.kwargs.values()], nodes_map)

    def _match_args(self, pattern_args: Any, graph_args: Any, nodes_map: dict) -> bool:
        """Whether two argument lists match, item by item; records pairs in ``nodes_map``.

        The lists must have the same length. For each pair of items, in order
        (the first that fails decides False):

        - two Nodes match when ``_match_node`` says so;
        - two lists or tuples (either kind on either side) match when their
          items do, recursively;
        - a pattern Node against a value that is not a Node (a constant):
          only a placeholder may stand for a constant. Paired already, it must
          equal (``==``) that constant; else it is paired with it now;
        - a graph Node against a pattern constant never matches;
        - two constants match when they have the same type and are equal
          (``1`` does not match ``1.0``).
        """
        if len(pattern_args) != len(graph_args):
            return False
        for pa, ga in zip(pattern_args, graph_args):
            if isinstance(pa, Node) and isinstance(ga, Node):
                ok = self._match_node(pa, ga, nodes_map)
            elif isinstance(pa, (list, tuple)) and isinstance(ga, (list, tuple)):
                ok = self._match_args(pa, ga, nodes_map)
            elif isinstance(pa, Node):  # a pattern input may stand for a constant
                if pa.op != "placeholder":
                    ok = False
                elif pa in nodes_map:
                    ok = nodes_map[pa] == ga
                else:
                    nodes_map[pa] = ga
                    ok = True
            elif isinstance(ga, Node):
                ok = False
            else:  # two constants: same type, same value
                ok = type(pa) is type(ga) and pa == ga
            if not ok:
                return False
        return True
    # --8<-- [end:match_node]

    # -- the whole graph ------------------------------------------------------
    # --8<-- [start:match]
    def match(self, graph: Graph) -> list[_Found]:
        """Every usable occurrence of the pattern in ``graph``, in the order torch.fx finds them.

        Each anchor (``self.anchors``) has candidates: the graph's nodes of the
        same kind (``_same_kind``), in graph order. Matching tries the first
        anchor against each of its candidates in turn, and for each success the
        next anchor against each of its own, on a copy of the pairs made so far
        (a failed attempt leaves no pair behind), until every anchor matched
        consistently: that is one ``_Found``, anchored at the first anchor, its
        ``placeholder_nodes`` and ``returning_nodes`` read from the pairs in the
        order of ``self.placeholders`` and ``self.returning``. A pattern without
        anchors matches nothing. Of those found, only the ones that are
        self-contained (``_is_contained``) and convex (``_is_convex`` of their
        computed nodes) are kept, and then only those that share no computed node
        with an earlier one (``_without_overlaps``).
        """
        candidates = [[g for g in graph.nodes if self._same_kind(a, g)] for a in self.anchors]
        found: list[_Found] = []

        def extend(anchor_index: int, nodes_map: dict[Node, Any]) -> None:
            # Every anchor must match, consistently; try each candidate in graph order.
            if anchor_index == len(self.anchors):
                match = _Found(self.anchors[0], nodes_map)
                match.placeholder_nodes = [nodes_map[p] for p in self.placeholders]
                match.returning_nodes = [nodes_map[r] for r in self.returning]
                found.append(match)
                return
            for gn in candidates[anchor_index]:
                attempt = dict(nodes_map)
                if self._match_node(self.anchors[anchor_index], gn, attempt):
                    extend(anchor_index + 1, attempt)

        if self.anchors:
            extend(0, {})
        usable = [m for m in found if self._is_contained(m) and _is_convex(_compute_nodes(m))]
        return _without_overlaps(usable)

    def _is_contained(self, match: _Found) -> bool:
        """No value computed inside the match, other than its results, is read outside it."""
        inside = {gn: pn for pn, gn in match.nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in inside.items():
            if pn in self.returning:
                continue
            if any(user not in inside for user in gn.users):
                return False
        return True
    # --8<-- [end:match]


def _attributes_match(pn: Node, gn: Node) -> bool:
    """Two ``get_attr`` nodes match when both read a tensor (of the same type)."""
    p_value = _fetch(pn.graph.owning_module, pn.target)
    g_value = _fetch(gn.graph.owning_module, gn.target)
    if type(p_value) is not type(g_value):
        return False
    if framework_of(p_value).is_tensor(p_value):
        return True
    raise RuntimeError(
        f"replace_pattern: cannot match get_attr {pn.target!r}: only tensor attributes "
        f"are supported, got {type(p_value).__name__}")


def _fetch(module: Any, target: str) -> Any:
    if module is None:
        raise RuntimeError(f"replace_pattern: get_attr {target!r} in a graph with no module")
    return fetch_path(module, target)


def _compute_nodes(match: _Found) -> list[Node]:
    return [gn for pn, gn in match.nodes_map.items() if pn.op not in ("placeholder", "output")]


# --8<-- [start:is_convex]
def _is_convex(nodes: list[Node]) -> bool:
    """Whether the nodes could become one node without a cycle.

    A cycle would appear if some path left the set and came back into it: the
    merged node would then have to run both before and after that path. So
    walk forwards (through ``users``) from every user outside the set of a
    node in the set, visiting each node once: reaching a node of the set
    means False; a walk that never comes back means True (an empty set is
    convex).
    """
    inside = set(nodes)
    seen: set[Node] = set()
    stack = [user for n in nodes for user in n.users if user not in inside]
    while stack:
        node = stack.pop()
        if node in inside:
            return False
        if node in seen:
            continue
        seen.add(node)
        stack.extend(node.users)
    return True
# --8<-- [end:is_convex]


def _without_overlaps(matches: list[_Found]) -> list[_Found]:
    """Keep each match that shares no computed node with an earlier kept one."""
    taken: set[Node] = set()
    kept = []
    for match in matches:
        computed = _compute_nodes(match)
        if any(gn in taken for gn in computed):
            continue
        kept.append(match)
        taken.update(computed)
    return kept


def _graph_of(fn_or_module: Callable[..., Any] | Graph | GraphModule) -> Graph:
    if isinstance(fn_or_module, Graph):
        return fn_or_module
    if isinstance(fn_or_module, GraphModule):
        return fn_or_module.graph
    return symbolic_trace(fn_or_module).graph


# --8<-- [start:replace_pattern]
def replace_pattern(
    gm: GraphModule,
    pattern: Callable[..., Any] | Graph | GraphModule,
    replacement: Callable[..., Any] | Graph | GraphModule,
) -> list[Match]:
    """Replace each non-overlapping occurrence of ``pattern`` in ``gm`` by ``replacement``.

    ``pattern`` and ``replacement`` are functions or modules (traced with
    ``symbolic_trace``), GraphModules or graphs (``_graph_of``). Both take
    the same inputs, in the same order; an occurrence counts only if what it
    computes inside is used by nothing outside it except through its results
    (``_SubgraphMatcher(pattern graph).match(gm.graph)`` finds them).

    Each occurrence, in the order found, is replaced in place:

    - a replacement with another number of inputs than the occurrence's
      placeholders is a ValueError: ``the pattern takes <n> inputs but the
      replacement takes <m>; they must take the same``;
    - an input that an earlier replacement replaced is read from its new node
      (``_follow_replacements``);
    - the replacement graph is copied (``graph_copy``) with its placeholders
      mapped to the occurrence's inputs, before ``_insertion_point``; a
      different number of results than the pattern returns is a ValueError:
      ``the pattern returns <n> values but the replacement returns <m>``;
    - every reader of each old result reads the matching new one, and the
      pattern's computed nodes are erased, users first (the pattern's nodes
      walked backwards).

    Then ``gm`` is recompiled, and when the replacement is a module, ``gm``
    gets the submodules and attributes its copied nodes name
    (``_copy_replacement_attributes``). Returns one ``Match(anchor,
    nodes_map)`` per replaced occurrence.
    """
    graph = gm.graph
    pattern_graph = _graph_of(pattern)
    matches = _SubgraphMatcher(pattern_graph).match(graph)
    replacement_graph = _graph_of(replacement)
    replacement_inputs = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    # An earlier replacement may have swapped out a node that a later match reads.
    replaced: dict[Node, Node] = {}

    for match in matches:
        if len(match.placeholder_nodes) != len(replacement_inputs):
            raise ValueError(
                f"replace_pattern: the pattern takes {len(match.placeholder_nodes)} inputs "
                f"but the replacement takes {len(replacement_inputs)}; they must take the same")
        _follow_replacements(match, replaced)
        val_map: dict[Node, Argument] = dict(zip(replacement_inputs, match.placeholder_nodes))
        with graph.inserting_before(_insertion_point(graph, match.returning_nodes)):
            results = graph.graph_copy(replacement_graph, val_map)
        results = (results,) if isinstance(results, Node) else tuple(results)
        if len(results) != len(match.returning_nodes):
            raise ValueError(
                f"replace_pattern: the pattern returns {len(match.returning_nodes)} values "
                f"but the replacement returns {len(results)}")
        for old, new in zip(match.returning_nodes, results):
            old.replace_all_uses_with(new)
            replaced[old] = new
        for pn in reversed(pattern_graph.nodes):
            if pn.op not in ("placeholder", "output"):
                graph.erase_node(match.nodes_map[pn])

    gm.recompile()
    if not isinstance(replacement, Graph) and framework_of(replacement).is_module(replacement):
        _copy_replacement_attributes(gm, replacement)
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map) for m in matches]
# --8<-- [end:replace_pattern]


def _follow_replacements(match: _Found, replaced: dict[Node, Node]) -> None:
    """Point a match's inputs at the nodes that earlier replacements put in their place."""
    for pn, gn in list(match.nodes_map.items()):
        if pn.op == "placeholder" and isinstance(gn, Node) and gn in replaced:
            match.nodes_map[pn] = replaced[gn]
    match.placeholder_nodes = [
        replaced.get(gn, gn) if isinstance(gn, Node) else gn for gn in match.placeholder_nodes]


def _insertion_point(graph: Graph, returning: list[Node]) -> Node:
    """Where the replacement goes: before the first reader of the match's results.

    With no reader, just after the last result, so it still comes after
    everything the match reads.
    """
    readers = {user for node in returning for user in node.users}
    after_last_result = None
    for node in graph.nodes:
        if node in readers:
            return node
        if node in returning:
            after_last_result = node.next
    return after_last_result


def _copy_replacement_attributes(gm: GraphModule, replacement: Any) -> None:
    """Give ``gm`` the submodules and attributes that the inlined replacement nodes name."""
    gm.delete_all_unused_submodules()
    for node in gm.graph.nodes:
        if node.op not in ("call_module", "get_attr"):
            continue
        if _try_fetch(gm, node.target) is not None:  # gm's own attribute wins
            continue
        value = _try_fetch(replacement, node.target)
        if value is None:
            raise RuntimeError(
                f"replace_pattern: node {node.name} ({node.op}) targets {node.target!r}, which "
                "exists neither in the module being rewritten nor in the replacement")
        value = copy.deepcopy(value)
        if framework_of(value).is_module(value):
            gm.add_submodule(node.target, value)
        else:
            setattr(gm, node.target, value)
    gm.graph.lint()


def _try_fetch(module: Any, target: str) -> Any:
    try:
        return _fetch(module, target)
    except AttributeError:
        return None
