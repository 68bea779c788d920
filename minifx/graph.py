"""The IR: a Graph is an ordered list of Nodes.

The nodes live in a doubly linked circular list around a sentinel ``root``
node. Inserting or erasing a node anywhere is O(1) (just relink its two
neighbours), and a node erased while a loop visits it leaves its own links
alone, so the loop still finds its way to the next live node.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import itertools
from collections.abc import Callable, Iterator
from typing import Any

from ._compat import copy_graph_fast
from .codegen import CodeGen, PythonCode
from .namespace import Namespace, snake_case
from .node import (
    OPCODES,
    Argument,
    Node,
    Target,
    fetch_path,
    map_aggregate,
    map_arg,
    pretty_target,
)


class _NodeList:
    """A live view of a graph's nodes: ``len()``, iteration, ``reversed()``."""

    def __init__(self, graph: Graph, forward: bool = True) -> None:
        self._graph, self._forward = graph, forward

    def __len__(self) -> int:
        return self._graph._len

    # --8<-- [start:iteration]
    def __iter__(self) -> Iterator[Node]:
        """Yield the graph's nodes from the one after the root round to the root:
        following ``_next`` (``_prev`` when the view is reversed), skipping
        the erased ones.

        Each node's link is read only after the caller is done with it, so
        the caller may erase the node it is visiting (its links still lead
        on) or insert nodes after it (they are visited next).
        """
        root, forward = self._graph._root, self._forward
        cur = root._next if forward else root._prev
        while cur is not root:
            # Read the link only after the caller is done with `cur`: if the
            # caller erased `cur`, its links still lead back into the list;
            # erased nodes on the way are skipped.
            if not cur._erased:
                yield cur
            cur = cur._next if forward else cur._prev
    # --8<-- [end:iteration]

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self._graph, not self._forward))

    def __repr__(self) -> str:
        return repr(list(self))


class _InsertPoint:
    """Context manager that moves a graph's insertion point and then restores it."""

    # --8<-- [start:insert_point]
    def __init__(self, graph: Graph, new_insert: Callable[[Node], None]) -> None:
        """Move the insertion point at once, not on ``__enter__``, as torch.fx does.

        Keeps the graph in ``_graph`` and its current insertion function
        (``graph._insert``) in ``_orig``, then makes ``new_insert`` the
        graph's ``_insert``: nodes created from now on go where
        ``new_insert`` puts them, even before a ``with`` block starts.
        ``__exit__`` puts ``_orig`` back.
        """
        self._graph = graph
        self._orig = graph._insert
        graph._insert = new_insert

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self._graph._insert = self._orig
    # --8<-- [end:insert_point]


class Graph:
    """An ordered list of Nodes: the program that a GraphModule runs.

    Build one by hand::

        g = Graph()
        x = g.placeholder("x")
        y = g.call_function(operator.add, (x, 1))
        g.output(y)
    """

    # --8<-- [start:graph_init]
    def __init__(self, owning_module: Any = None) -> None:
        """An empty graph: a circle of one node, the sentinel ``_root``.

        The root is never yielded by ``nodes``: it closes the circular list,
        so the first node is ``_root._next`` and the last ``_root._prev``.
        It is made without ``Node.__init__`` (``Node.__new__``: its op
        ``"root"`` is no opcode) and given every field a node has: this
        graph, the name ``""``, op ``"root"``, target ``""``, empty
        ``users``, ``_input_nodes`` and ``meta``, ``_erased`` False, empty
        ``_args`` and ``_kwargs``, no ``type``, and ``_prev`` and ``_next``
        pointing at itself.

        Then the graph's own state: ``_insert``, the insertion function, is
        ``_root.prepend`` (new nodes go at the end, before the root);
        ``_len`` counts the nodes (0); ``_graph_namespace`` is a fresh
        ``Namespace`` that names the nodes; ``owning_module`` is kept; and
        ``_codegen`` is a fresh ``CodeGen``.
        """
        root = Node.__new__(Node)  # the sentinel: never yielded, closes the circle
        root.graph, root.name, root.op, root.target = self, "", "root", ""
        root.users, root._input_nodes, root.meta, root._erased = {}, {}, {}, False
        root._args, root._kwargs, root.type = (), {}, None
        root._prev = root._next = root
        self._root = root
        self._insert: Callable[[Node], None] = root.prepend
        self._len = 0
        self._graph_namespace = Namespace()
        self.owning_module = owning_module  # the GraphModule this graph belongs to, if any
        self._codegen = CodeGen()
    # --8<-- [end:graph_init]

    @property
    def nodes(self) -> _NodeList:
        """All nodes in program order; safe to erase the node being visited."""
        return _NodeList(self)

    # --8<-- [start:output_node]
    def output_node(self) -> Node:
        """The graph's output node; a method, as in torch.fx.

        The last node whose op is ``output``, searched from the end of the
        graph (in a finished graph, the last node). A graph without one is
        a RuntimeError: ``graph has no output node`` (torch.fx asserts
        instead).
        """
        for node in reversed(self.nodes):
            if node.op == "output":
                return node
        raise RuntimeError("graph has no output node")
    # --8<-- [end:output_node]

    def find_nodes(self, *, op: str, target: Target | None = None) -> list[Node]:
        """Nodes with this op (and this target, if given), in order."""
        return [n for n in self.nodes
                if n.op == op and (target is None or n.target == target)]

    # --8<-- [start:create_node]
    def create_node(self, op: str, target: Target, args: tuple[Argument, ...] | None = None,
                    kwargs: dict[str, Argument] | None = None, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """Create a node at the insertion point (by default, the end) and return it.

        ``op`` must be one of ``OPCODES``, else a ValueError: ``unknown op
        '<op>'; expected one of ...``. ``args`` None means ``()`` and ``kwargs``
        None means ``{}``; otherwise they must be a tuple and a dict, else a
        TypeError: ``create_node(<op>): args must be a tuple, got <type>``
        (``kwargs must be a dict, got <type>``). The node's name starts from
        ``name`` when given, else from the target (``_target_to_str``), and
        the graph's namespace (``self._graph_namespace.create_name(candidate,
        None)``) makes it unique and a legal identifier, as torch.fx names
        nodes. The new Node goes in through ``self._insert`` (which
        ``inserting_before``/``inserting_after`` move) and the graph counts
        one node more (``self._len``).
        """
        if op not in OPCODES:
            raise ValueError(f"unknown op {op!r}; expected one of {OPCODES}")
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise TypeError(f"create_node({op}): args must be a tuple, got {type(args).__name__}")
        if not isinstance(kwargs, dict):
            raise TypeError(
                f"create_node({op}): kwargs must be a dict, got {type(kwargs).__name__}")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        # An argument may still be a node of another graph, as in torch.fx: a
        # program may copy nodes first and remap their inputs later. `lint` says so.
        node = Node(self, name, op, target, args, kwargs, type_expr)
        self._insert(node)
        self._len += 1
        return node
    # --8<-- [end:create_node]

    @staticmethod
    def _target_to_str(target: Target) -> str:
        """The name a node starts from when none is given, as torch.fx picks it.

        A callable target gives its ``__name__`` (or, with none, the name of
        its type: ``partial``); a string target is itself, with the
        surrounding double underscores of a dunder dropped (``"__add__"``
        gives ``add``). The result goes through ``snake_case``
        (``MyLinear`` gives ``my_linear``); the namespace makes it a unique,
        legal identifier later.
        """
        if callable(target):
            op = getattr(target, "__name__", type(target).__name__)
        else:
            op = str(target)
            if op.startswith("__") and op.endswith("__"):
                op = op[2:-2]
        return snake_case(op)

    def placeholder(self, name: str, type_expr: Any = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """An input of the function; ``default_value`` makes it optional."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """Fetch ``root.<qualified_name>`` (a parameter, buffer or constant)."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """Call the submodule ``root.<module_name>``."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """Call ``args[0].<method_name>(*args[1:], **kwargs)``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable[..., Any], args: tuple | None = None,
                      kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """Call ``the_function`` (any Python callable); its result is this node's value."""
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    # --8<-- [start:output]
    def output(self, result: Argument, type_expr: Any = None) -> Node:
        """Add the node that returns ``result`` from the graph, and return it.

        As in torch.fx it is a node of op ``output``, target ``"output"``
        (so it is named ``output``), args ``(result,)``, no kwargs, and the
        given ``type_expr`` as its type. A graph has exactly one output
        node: if it has one already (``find_nodes``), a RuntimeError names
        it: ``graph already has an output node (<name>); erase it first``.
        """
        existing = self.find_nodes(op="output")
        if existing:
            raise RuntimeError(
                f"graph already has an output node ({existing[0].name}); erase it first")
        return self.create_node("output", "output", (result,), type_expr=type_expr)
    # --8<-- [end:output]

    # --8<-- [start:erase_node]
    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that nobody reads any more.

        A RuntimeError names the node if it belongs to another graph, was
        erased already, or still has users. The node keeps its own links, so
        a loop that is visiting it can still step on; its inputs lose it as a user.
        """
        if to_erase.graph is not self:
            raise RuntimeError(f"erase_node: node {to_erase.name} belongs to another graph")
        if to_erase._erased:
            raise RuntimeError(f"erase_node: node {to_erase.name} was already erased")
        if to_erase.users:
            names = ", ".join(u.name for u in to_erase.users)
            raise RuntimeError(
                f"erase_node: node {to_erase.name} still has {len(to_erase.users)} user(s): "
                f"{names}; replace its uses first")
        # Unlink from the neighbours but keep our own links: a loop that is
        # visiting this node follows them back into the list.
        p, n = to_erase._prev, to_erase._next
        p._next, n._prev = n, p
        to_erase._erased = True
        to_erase._update_args_kwargs((), {})
        self._len -= 1
    # --8<-- [end:erase_node]

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """``with g.inserting_before(n):`` new nodes go just before ``n``.

        Answers an ``_InsertPoint`` that makes ``n.prepend`` the graph's
        insertion function (``self._insert``) until the block ends. ``n``
        None means the start of the graph: after the root sentinel
        (``self.inserting_after(self._root)``). A node of another graph is a
        ValueError: ``inserting_before: node <name> belongs to another
        graph``.
        """
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise ValueError(f"inserting_before: node {n.name} belongs to another graph")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """``with g.inserting_after(n):`` each new node goes directly after ``n``.

        Answers an ``_InsertPoint`` that makes ``n.append`` the graph's
        insertion function until the block ends, so two nodes created in one
        block come out in reverse order of creation, as in torch.fx. ``n``
        None means the end of the graph: before the root sentinel
        (``self.inserting_before(self._root)``). A node of another graph is
        a ValueError: ``inserting_after: node <name> belongs to another
        graph``.
        """
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise ValueError(f"inserting_after: node {n.name} belongs to another graph")
        # As in torch.fx, every new node goes right after ``n``: two nodes
        # created in one block come out in reverse order of creation.
        return _InsertPoint(self, n.append)

    def node_copy(self, node: Node,
                  arg_transform: Callable[[Node], Argument] = lambda x: x) -> Node:
        """Copy ``node`` (from any graph) into this one, mapping its inputs.

        Each Node inside ``node``'s args and kwargs becomes
        ``arg_transform(that node)``. The copy is created here (at the
        insertion point) with the same op, target and type, asking for the
        same name (the namespace makes it unique in this graph). Its meta is
        a shallow copy of ``node.meta``: a new dict with the same values.
        """
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g: Graph, val_map: dict[Node, Node],
                   return_output_node: bool = False) -> Argument:
        """Append all of ``g`` but its output; returns what ``g`` outputs, mapped.

        ``val_map`` maps nodes of ``g`` to nodes of this graph; it is filled
        in. The nodes of ``g`` are copied in order with ``node_copy``, their
        inputs looked up in ``val_map``; a node already in ``val_map`` is not
        copied (it stands for itself, as a given value does). At ``g``'s
        output node the copying stops and its argument comes back, each Node
        in it mapped through ``val_map``; with ``return_output_node`` the
        answer is the pair ``(that value, g's output node)``. A ``g``
        without an output gives None.
        """
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict | None = None) -> Graph:
        memo = {} if memo is None else memo
        g = Graph()
        memo[id(self)] = g
        copy_graph_fast(self, g)  # g.graph_copy(self, {}) and the output: see _compat
        g._codegen = copy.deepcopy(self._codegen, memo)
        return g

    # --8<-- [start:reduce]
    def __reduce__(self) -> tuple:
        """Pickle the graph as a flat table of its nodes, not as a linked list.

        Pickling the nodes themselves would recurse once per node (each
        links to the next), which overflows on a long graph. The answer is
        ``(_rebuild_graph, (rows, self._codegen))``: one row per node, in
        order, ``(op, name, target, args, kwargs, type, meta)``, in which
        each Node inside args and kwargs (nested ones too) is replaced by
        ``_NodeRef(i)``, ``i`` that node's position in the table. No row
        holds a Node.
        """
        index = {n: i for i, n in enumerate(self.nodes)}
        to_ref = lambda n: _NodeRef(index[n])  # noqa: E731
        rows = [(n.op, n.name, n.target, map_arg(n.args, to_ref), map_arg(n.kwargs, to_ref),
                 n.type, n.meta) for n in self.nodes]
        return (_rebuild_graph, (rows, self._codegen))
    # --8<-- [end:reduce]

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase nodes that nobody reads and that have no side effect.

        Walks backwards so a chain of dead nodes goes in one pass. Returns
        whether anything changed. ``is_impure_node`` replaces ``Node.is_impure``
        as the judge of what must stay, as in torch.fx.
        """
        is_impure = is_impure_node or Node.is_impure
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not is_impure(node):
                self.erase_node(node)
                changed = True
        return changed

    # --8<-- [start:lint]
    def lint(self) -> None:
        """Check the graph is well formed; raise RuntimeError naming the faulty node.

        One pass over the nodes, in order. A message about a node starts with
        ``Node <name> (<op> <target>)``, the target as ``pretty_target`` prints it,
        and goes on with what is wrong, checked in this order:

        - ``belongs to another graph``: the node's graph is not this one;
        - ``has unknown op '<op>'``: the op is not one of ``OPCODES``;
        - ``: duplicate node name '<name>'``: an earlier node has the name;
        - for each input: ``reads <input>, a node of another graph`` (then both
          graphs, by ``describe()``, and the advice to copy nodes with
          ``node_copy``); ``reads <input>, which was erased`` or ``reads <input>,
          which is defined later or not at all`` (not seen earlier in the pass);
          ``reads <input> but is not among its users``;
        - for each user: ``lists <user> as a user, but it does not read <name>``
          (the user is erased, of another graph, or does not read the node).

        After the pass: ``graph has no output node``; ``Node <second output>: a
        graph has one output node, found <count>``; ``Node <output>: the output
        node must be the last node``. With an owning module, every get_attr and
        call_module target must be found on it: ``Node <name> (<op>) targets
        <target>, but <the AttributeError's message>``.
        """
        seen: set[Node] = set()
        names: set[str] = set()
        outputs = []
        for node in self.nodes:
            where = f"Node {node.name} ({node.op} {pretty_target(node.target)})"
            if node.graph is not self:
                raise RuntimeError(f"{where} belongs to another graph")
            if node.op not in OPCODES:
                raise RuntimeError(f"{where} has unknown op {node.op!r}")
            if node.name in names:
                raise RuntimeError(f"{where}: duplicate node name {node.name!r}")
            names.add(node.name)
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(
                        f"{where} reads {arg.name}, a node of another graph "
                        f"({arg.graph.describe()}, not this {self.describe()}); copy nodes "
                        "with node_copy and an arg_transform that maps their inputs here")
                if arg not in seen:
                    why = "was erased" if arg._erased else "is defined later or not at all"
                    raise RuntimeError(f"{where} reads {arg.name}, which {why}")
                if node not in arg.users:
                    raise RuntimeError(f"{where} reads {arg.name} but is not among its users")
            for user in node.users:
                if user._erased or user.graph is not self or node not in user._input_nodes:
                    raise RuntimeError(
                        f"{where} lists {user.name} as a user, but it does not read {node.name}")
            if node.op == "output":
                outputs.append(node)
            seen.add(node)
        if not outputs:
            raise RuntimeError("graph has no output node")
        if len(outputs) > 1:
            raise RuntimeError(f"Node {outputs[1].name}: a graph has one output node, found "
                               f"{len(outputs)}")
        if outputs[0] is not self._root._prev:
            raise RuntimeError(f"Node {outputs[0].name}: the output node must be the last node")
        if self.owning_module is not None:
            self._lint_targets()
    # --8<-- [end:lint]

    # --8<-- [start:lint_targets]
    def _lint_targets(self) -> None:
        """``lint``'s last check, for a graph with an owning module.

        Walking the nodes in order, the target of each ``get_attr`` and
        ``call_module`` node must be found on ``self.owning_module`` by
        ``fetch_path``; the targets of other ops are not looked up. The
        first one missing is a RuntimeError: ``Node <name> (<op>) targets
        <target>, but <the AttributeError's message>``, raised ``from None``
        (the AttributeError is not chained to it).
        """
        for node in self.nodes:
            if node.op not in ("get_attr", "call_module"):
                continue
            try:
                fetch_path(self.owning_module, node.target)
            except AttributeError as e:
                raise RuntimeError(
                    f"Node {node.name} ({node.op}) targets {node.target}, but {e}") from None
    # --8<-- [end:lint_targets]

    # -- code generation ----------------------------------------------------
    def python_code(self, root_module: str = "self", *, verbose: bool = False) -> PythonCode:
        """The Python source of ``forward`` for this graph, and the globals it needs."""
        return self._codegen.gen_python_code(self, root_module, verbose=verbose)

    def on_generate_code(self, make_transformer: Callable[[Any], Any],
                         ) -> contextlib.AbstractContextManager:
        """Rewrite the generated lines (comments, instrumentation) without changing the graph.

        ``make_transformer(current)`` returns a function that takes the list of
        body lines and returns a new list. The new transformer is active at
        once; used as a context manager it is removed again on exit.
        """
        old = self._codegen._body_transformer
        self._codegen._body_transformer = make_transformer(old)
        graph = self

        @contextlib.contextmanager
        def restore() -> Iterator[None]:
            try:
                yield
            finally:
                graph._codegen._body_transformer = old

        return restore()

    # -- printing -------------------------------------------------------------
    def __str__(self) -> str:
        """``graph():`` then one line per node (``Node.format_node``), indented by four."""
        lines = ["graph():"]
        lines.extend("    " + node.format_node() for node in self.nodes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<minifx.Graph with {len(self.nodes)} nodes>"

    # --8<-- [start:printing]
    def describe(self) -> str:
        """Which graph this is, in an error message (``lint``'s ``a node of another graph``).

        ``graph of <class> at <id> with nodes [<names>]``: ``<class>`` is the
        class name of the owning module (without one, `` of <class>`` is left
        out), ``<id>`` is ``id(self)`` formatted ``#x``, and ``<names>`` are
        the names of the first three nodes joined by ``, ``, followed by
        ``, ...`` when the graph has more than three.
        """
        module = self.owning_module
        owner = f" of {type(module).__name__}" if module is not None else ""
        names = [n.name for n in itertools.islice(self.nodes, 3)]
        more = ", ..." if len(self.nodes) > 3 else ""
        return f"graph{owner} at {id(self):#x} with nodes [{', '.join(names)}{more}]"

    def print_tabular(self) -> None:
        """Print the graph as a table: one row per node under a header.

        The header is ``opcode``, ``name``, ``target``, ``args``,
        ``kwargs``; a node's row is its op, its name, its target as
        ``pretty_target`` prints it, ``str(args)`` and ``str(kwargs)``, all
        strings. With the ``tabulate`` package, as in torch.fx, the table is
        ``print(tabulate(rows, headers=header))``, the rows as lists. Without
        it (torch.fx then raises ImportError) a plain table is printed: each
        column left-justified to its widest cell, header included; cells
        joined by two spaces; the trailing spaces of each line stripped;
        under the header, a line of dashes as wide as each column.
        """
        header = ["opcode", "name", "target", "args", "kwargs"]
        rows = [[n.op, n.name, pretty_target(n.target), str(n.args), str(n.kwargs)]
                for n in self.nodes]
        try:
            from tabulate import tabulate
        except ImportError:
            widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
            fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
            print("\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)]))
        else:
            print(tabulate(rows, headers=header))
    # --8<-- [end:printing]


class _NodeRef:
    """A node's position in a pickled graph's table."""

    def __init__(self, index: int) -> None:
        self.index = index


# --8<-- [start:rebuild]
def _rebuild_graph(rows: list[tuple], codegen: Any) -> Graph:
    """Unpickle a graph: the inverse of ``Graph.__reduce__``.

    A new Graph whose ``_codegen`` is ``codegen``. Each row becomes a node,
    in order, made by ``create_node`` with the row's op, target, name and
    type, and its args and kwargs with each ``_NodeRef(i)`` replaced by the
    i-th node made (other values kept as they are). The row's meta becomes
    the node's ``meta`` (that very dict). Names come back as they were.
    """
    g = Graph()
    g._codegen = codegen
    nodes: list[Node] = []
    from_ref = lambda a: nodes[a.index] if isinstance(a, _NodeRef) else a  # noqa: E731
    for op, name, target, args, kwargs, type_expr, meta in rows:
        node = g.create_node(op, target, map_aggregate(args, from_ref),
                             map_aggregate(kwargs, from_ref), name, type_expr)
        node.meta = meta
        nodes.append(node)
    return g
# --8<-- [end:rebuild]
