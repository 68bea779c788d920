"""One instruction of the IR: a Node.

A Node is one line of the program a Graph holds: an opcode (``op``), the thing
it applies (``target``), its inputs (``args`` and ``kwargs``, which may name
other Nodes, nested inside tuples, lists, dicts and slices) and a unique
``name`` that becomes the variable in generated code. Each Node also knows who
reads it (``users``), so that rewriting a graph never needs a search.
"""

from __future__ import annotations

import builtins
import operator
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._framework import has_side_effect, spell_target

if TYPE_CHECKING:
    from .graph import Graph

# What a node applies: a function for call_function, a string otherwise.
Target = Callable[..., Any] | str
# What may appear in args and kwargs: constants, Nodes, and containers of them.
Argument = Any

OPCODES = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")

_RAISE = object()


def fetch_path(obj: Any, path: str, default: Any = _RAISE) -> Any:
    """``obj.a.b`` for the dotted ``path`` ``"a.b"`` (what get_attr and call_module name).

    A missing step returns ``default`` if one is given, else raises an
    AttributeError that names the path so far and what lacks the attribute
    (``layer.7: Sequential has no attribute '7'``).
    """
    atoms = path.split(".")
    for i, atom in enumerate(atoms):
        value = getattr(obj, atom, _RAISE)
        if value is _RAISE:
            if default is not _RAISE:
                return default
            raise AttributeError(f"{'.'.join(atoms[:i + 1])}: {type(obj).__name__} has no "
                                 f"attribute {atom!r}")
        obj = value
    return obj


# Functions whose call must survive dead-code elimination even when nobody
# reads the result: ``operator.setitem`` writes into its first argument.
# Code defining such a function marks it with `register_side_effect`; a
# framework answers for its library's own (asserts, random draws, in-place
# ops) through `Framework.has_side_effect`. As in torch.fx, ``print`` is not
# one of them: a graph is a computation, and DCE drops a print nobody reads.
_side_effectful_functions: set[Any] = {operator.setitem}


def register_side_effect(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn`` as impure: ``eliminate_dead_code`` keeps its calls (torch.fx:
    the ``has_side_effect`` decorator)."""
    _side_effectful_functions.add(fn)
    return fn


# --8<-- [start:qualified_name]
# Each framework's package (``tensor``, ``torch``) prints its functions by their
# dotted path, the package itself bound as a global of the generated code:
# ``tensor.sigmoid(x)``. A framework may spell a target its own way first
# (``Framework.qualified_name``: torch's C functions need it).


def _resolve(module_name: str, qualname: str) -> Any:
    """The object reached by ``module_name`` then the attribute path ``qualname``."""
    return fetch_path(sys.modules.get(module_name), qualname, None)


# --8<-- [start:qualified_name_fn]
def qualified_name(func: Any) -> str:
    """The dotted name a target is known by: ``tensor.sigmoid``, ``getattr``.

    Built from ``__module__`` and ``__qualname__``; private module segments
    are dropped while the public parent still exposes the same object, so a
    function defined in ``tensor._functions`` and re-exported as
    ``tensor.sigmoid`` prints as ``tensor.sigmoid``.

    In this order:

    - an object whose class has ``__fx_name__`` (a fused kernel) is called
      by that;
    - a framework's own spelling (``spell_target``), when it has one;
    - a builtin (``builtins`` has this very object under its ``__name__``)
      is its bare name: ``getattr``, ``len``;
    - otherwise the name is ``__qualname__`` (or ``__name__``); an object
      with neither is a RuntimeError: ``cannot name target <repr>: it has no
      __name__``. The module is ``__module__``, or ``__unknown__`` when it
      has none;
    - when ``module.qualname`` does not lead back to the object
      (``_resolve``, compared with ``is``) but ``module.__name__`` does, the
      ``__name__`` is used (a C function whose qualname names a hidden
      class);
    - a qualname with ``<`` (``outer.<locals>.inner``, ``<lambda>``) cannot
      be reached: it becomes the ``__name__``, and a lambda ``lambda_``;
    - while a segment after the first of the module's dotted path starts
      with ``_``, the last segment is dropped as long as the parent module
      still gives the very same object under the qualname.

    The answer is ``module.qualname``.
    """
    if hasattr(type(func), "__fx_name__"):  # a target that spells itself (a fused kernel)
        return func.__fx_name__
    name = spell_target(func)
    if name is not None:
        return name
    name = getattr(func, "__name__", None)
    if name is not None and getattr(builtins, name, None) is func:
        return name
    qualname = getattr(func, "__qualname__", None) or name
    if qualname is None:
        raise RuntimeError(f"cannot name target {func!r}: it has no __name__")
    module = getattr(func, "__module__", None) or "__unknown__"
    if _resolve(module, qualname) is not func and name and _resolve(module, name) is func:
        qualname = name  # a C function whose __qualname__ names a hidden class
    if "<" in qualname:  # a lambda or a local function: no path reaches it
        qualname = name if name != "<lambda>" else "lambda_"
    parts = module.split(".")
    while len(parts) > 1 and any(p.startswith("_") for p in parts[1:]):
        parent = ".".join(parts[:-1])
        if _resolve(parent, qualname) is not func:
            break
        parts = parts[:-1]
    return f"{'.'.join(parts)}.{qualname}"
# --8<-- [end:qualified_name_fn]


def pretty_target(target: Any) -> str:
    """How ``str(graph)`` names a target: builtins and operators get a prefix."""
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None)
    name = getattr(target, "__name__", None)
    if name is not None and module == "builtins":
        return f"builtins.{name}"
    if name is not None and module == "_operator":
        return f"operator.{name}"
    try:
        return qualified_name(target)
    except RuntimeError:  # an object with no name (a functools.partial ...)
        return repr(target)
# --8<-- [end:qualified_name]


# --8<-- [start:format_helpers]
def type_repr(obj: Any) -> str:
    """A short spelling of a type annotation (``int``, ``tensor.Tensor``).

    A class (but not a generic alias such as ``list[int]``) is its
    ``__qualname__`` when it is a builtin (``int``), else its
    ``qualified_name``. ``...`` is ``"..."``, a plain function its
    ``__name__``, and anything else (``list[int]``, ``typing.List[int]``,
    a string annotation) its ``repr``.
    """
    if isinstance(obj, type) and not isinstance(obj, types.GenericAlias):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return qualified_name(obj)
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    return repr(obj)


def _format_arg(arg: Any) -> str:
    """An argument as ``str(graph)`` prints it: Nodes as ``%name``.

    Containers are printed item by item with this same spelling: a list as
    ``[a, b]``; a tuple as ``(a, b)``, a one-item tuple with its comma
    ``(a,)`` and the empty one ``()``; a dict as ``{key: value}`` with the
    key printed by ``str`` (no quotes) and the value by this spelling.
    Anything else is its ``str``: a string prints without quotes, a slice
    as ``slice(None, 2, None)``.
    """
    if isinstance(arg, Node):
        return "%" + arg.name
    if isinstance(arg, list):
        return "[" + ", ".join([_format_arg(a) for a in arg]) + "]"
    if isinstance(arg, tuple):
        items = ", ".join([_format_arg(a) for a in arg])
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, dict):
        return "{" + ", ".join([f"{k}: {_format_arg(v)}" for k, v in arg.items()]) + "}"
    return str(arg)
# --8<-- [end:format_helpers]


class Node:
    """One operation in a Graph.

    ``op`` is one of the six opcodes:

    - ``placeholder``: an input of the function; ``target`` is its name.
    - ``get_attr``: fetch a parameter or buffer; ``target`` is its dotted path.
    - ``call_function``: call ``target``, a Python callable.
    - ``call_method``: call the method named ``target`` on ``args[0]``.
    - ``call_module``: call the submodule at the dotted path ``target``.
    - ``output``: return ``args[0]``.
    """

    # --8<-- [start:node_init]
    def __init__(self, graph: Graph, name: str, op: str, target: Target, args: tuple[Argument, ...],
                 kwargs: dict[str, Argument], return_type: Any = None) -> None:
        """A node of ``graph``, not yet linked into it (``Graph.create_node`` does that).

        Checked first, each a ValueError that starts with ``Node <name>:``:
        an ``op`` that is not one of ``OPCODES`` (``unknown op '<op>'``); a
        ``call_function`` whose target is not callable (``call_function
        target <target> is not callable``); any other op with a target that
        is not a string (``<op> needs a string target, got <target>``).

        Then the fields: ``graph``, ``name``, ``op``, ``target``, ``type``
        (the ``return_type``) and an empty ``meta`` dict; ``_input_nodes``
        and ``users``, empty dicts used as ordered sets; ``_prev`` and
        ``_next`` pointing at the node itself (a circle of one); ``_erased``
        False. Last, ``args`` and ``kwargs`` go in through
        ``_update_args_kwargs`` (start ``_args`` at ``()`` and ``_kwargs`` at
        ``{}``), which records the inputs and adds this node to their users.
        """
        if op not in OPCODES:
            raise ValueError(f"Node {name}: unknown op {op!r}; expected one of {OPCODES}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node {name}: call_function target {target!r} is not callable")
        if op != "call_function" and not isinstance(target, str):
            raise ValueError(f"Node {name}: {op} needs a string target, got {target!r}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self.meta: dict[str, Any] = {}
        # The Nodes this one reads, and the Nodes that read this one. Both are
        # dicts used as ordered sets: membership and removal are O(1), and
        # unlike a set the order is the order of insertion, so walking users
        # (for replace_all_uses_with, printing, passes) is deterministic.
        self._input_nodes: dict[Node, None] = {}
        self.users: dict[Node, None] = {}
        # Neighbours in the graph's circular list; a fresh node points at itself.
        self._prev: Node = self
        self._next: Node = self
        self._erased = False
        self._args: tuple[Argument, ...] = ()
        self._kwargs: dict[str, Argument] = {}
        self._update_args_kwargs(args, kwargs)
    # --8<-- [end:node_init]

    # -- neighbours -------------------------------------------------------
    @property
    def next(self) -> Node:
        """The next node in the graph (the root sentinel after the last one)."""
        return self._next

    @property
    def prev(self) -> Node:
        """The previous node in the graph."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move (or insert) ``x`` just before this node, in the same graph.

        The nodes form a circular doubly linked list (``_prev`` and
        ``_next``; the graph's root sentinel closes the circle). ``x`` is
        first taken out of where it was (its two neighbours are linked to
        each other), then linked in between this node's previous node and
        this node. ``n.prepend(n)`` does nothing, as in torch.fx. ``x`` of
        another graph is a ValueError: ``node <x> belongs to another graph
        than <this node>``.
        """
        if x is self:
            return
        if x.graph is not self.graph:
            raise ValueError(f"node {x.name} belongs to another graph than {self.name}")
        x._prev._next, x._next._prev = x._next, x._prev  # out of where it was
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move (or insert) ``x`` just after this node."""
        self._next.prepend(x)

    # -- inputs and users -------------------------------------------------
    @property
    def args(self) -> tuple[Argument, ...]:
        """Positional arguments; assigning them keeps ``users`` in sync."""
        return self._args

    @args.setter
    def args(self, a: tuple[Argument, ...]) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict[str, Argument]:
        """Keyword arguments; assigning them keeps ``users`` in sync."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict[str, Argument]) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list[Node]:
        """Every Node this one reads, in order of first appearance."""
        return list(self._input_nodes)

    # --8<-- [start:update_args]
    def _update_args_kwargs(self, new_args: tuple[Argument, ...], new_kwargs: dict) -> None:
        """Set args and kwargs and keep both ends of every edge in sync.

        First this node leaves the ``users`` of each node it read until now.
        Then ``_args`` becomes a copy of ``new_args`` as a tuple and
        ``_kwargs`` a copy of ``new_kwargs`` as a dict (``{}`` when it is
        empty), both through ``copy_arg``, which fills a fresh
        ``_input_nodes`` with every Node they hold, in order of first
        appearance. Last, this node joins the ``users`` of each of them
        (appended at the end, once). The caller's tuple, lists and dicts
        are never kept: a later change to them does not reach the node.
        """
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = copy_arg(tuple(new_args), self._input_nodes)
        self._kwargs = copy_arg(dict(new_kwargs), self._input_nodes) if new_kwargs else {}
        for new in self._input_nodes:
            new.users.setdefault(self)
    # --8<-- [end:update_args]

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Set ``args[idx]`` to ``arg`` (a new tuple, via the setter: ``users`` stay in sync)."""
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set ``kwargs[key]`` to ``arg`` through the setter, so ``users`` stay in sync."""
        self.kwargs = {**self._kwargs, key: arg}

    # --8<-- [start:rewiring]
    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Make this node read ``new_input`` wherever it read ``old_input``."""
        swap = lambda n: new_input if n is old_input else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] | None = None, *,
                              propagate_meta: bool = False) -> list[Node]:
        """Make every user of this node read ``replace_with`` instead.

        ``delete_user_cb(user)`` may return False to keep a user unchanged.
        Returns the users that were changed.
        """
        if propagate_meta:
            if replace_with.meta:
                raise RuntimeError(
                    f"propagate_meta: {replace_with.name} already has meta; it would be lost"
                )
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if user is replace_with or (delete_user_cb is not None and not delete_user_cb(user)):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed
    # --8<-- [end:rewiring]

    # -- metadata ---------------------------------------------------------
    @property
    def stack_trace(self) -> str | None:
        """The user's source location that produced this node (kept in ``meta``)."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace: str | None) -> None:
        self.meta["stack_trace"] = trace

    # --8<-- [start:is_impure]
    def is_impure(self, impure_random: bool = True) -> bool:
        """True if removing this node could change what the program does.

        ``eliminate_dead_code`` keeps such a node even when nobody reads it.
        A placeholder and the output always are. A ``call_function`` is when
        its target was marked (``register_side_effect``, and
        ``operator.setitem``) or its framework says so
        (``has_side_effect(target, impure_random)``: asserts, in-place ops,
        and random draws unless ``impure_random`` is False). A
        ``call_module`` is when the graph has an owning module and the
        submodule it names (``get_submodule``) has a true ``_is_impure``; a
        submodule that cannot be found counts as pure. Everything else
        (``get_attr``, ``call_method``, ``print``) is pure, as in torch.fx.
        """
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return (self.target in _side_effectful_functions
                    or has_side_effect(self.target, impure_random))
        if self.op == "call_module" and self.graph.owning_module is not None:
            try:
                module = self.graph.owning_module.get_submodule(self.target)
            except AttributeError:
                return False
            return bool(getattr(module, "_is_impure", False))
        return False
    # --8<-- [end:is_impure]

    # -- printing ---------------------------------------------------------
    def format_node(self) -> str:
        """This node as one line of ``str(graph)``.

        ``%name : [num_users=N] = op[target=...](args = (...), kwargs = {...})``,
        with the type after the colon when the node has one; a placeholder
        shows its default, a get_attr has no args, the output is ``return ...``.
        """
        users = f"[num_users={len(self.users)}]"
        typ = f"{type_repr(self.type)} " if self.type is not None else ""
        if self.op == "placeholder":
            default = f"(default={self._args[0]})" if self._args else ""
            return f"%{self.name} : {typ}{users} = placeholder[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"%{self.name} : {typ}{users} = get_attr[target={self.target}]"
        if self.op == "output":
            return f"return {self._args[0]}"
        return (
            f"%{self.name} : {typ}{users} = {self.op}[target={pretty_target(self.target)}]"
            f"(args = {_format_arg(self._args)}, kwargs = {_format_arg(self._kwargs)})"
        )

    def __repr__(self) -> str:
        return self.name


_CONTAINERS = (tuple, list, dict, slice)


# --8<-- [start:last_uses]
def last_uses(graph: Graph) -> dict[Node, list[Node]]:
    """For each node, the inputs whose value is not needed after it runs.

    Walking the graph backwards, the first user met of a value is its last
    use in program order. The Interpreter frees values with it, and the
    generated code ends such a line with ``;  x = None``.
    """
    seen: set[Node] = set()
    freed_after: dict[Node, list[Node]] = {}
    for node in reversed(graph.nodes):
        for value in node._input_nodes:
            if value not in seen:
                seen.add(value)
                freed_after.setdefault(node, []).append(value)
    return freed_after
# --8<-- [end:last_uses]


# --8<-- [start:map_aggregate]
def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply ``fn`` to every leaf of ``a``, keeping its structure.

    Tuples (named tuples too), lists, dicts and slices are walked; everything
    else, Nodes included, is a leaf.
    """
    if not isinstance(a, _CONTAINERS):  # a leaf, the common case: one test
        return fn(a)
    if isinstance(a, tuple):
        items = [map_aggregate(x, fn) for x in a]
        return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),  # the last kind
                 map_aggregate(a.step, fn))


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply ``fn`` to every Node inside ``a``; other leaves stay as they are."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)
# --8<-- [end:map_aggregate]


# -- Copying arguments --------------------------------------------------------------
# Every node creation copies its arguments: Node._update_args_kwargs and
# Graph.__deepcopy__ (through _compat.copy_graph_fast) use this walk.

# Exact types of the constants that a node's arguments hold as they are (no Node
# inside): hot paths test `type(x) in PLAIN_CONSTANTS`, one lookup.
PLAIN_CONSTANTS = frozenset({int, float, bool, str, complex, type(None)})


# --8<-- [start:copy_arg]
def copy_arg(a: Argument, found: dict[Node, None],
             node_map: dict[Node, Node] | None = None) -> Argument:
    """A copy of the structure ``a`` that notes in ``found`` every Node it meets;
    with ``node_map``, each Node is first replaced by ``node_map[node]``.

    It is ``map_arg(a, node_map.__getitem__)`` (or ``map_aggregate(a, lambda
    x: x)``), fused with collecting the inputs: each Node of the answer is
    set as a key of ``found`` (value None), in the order the walk meets
    them. Tuples, lists and dicts come back as new containers of the same
    type, nested ones too, so the copy shares no container with ``a``; a
    constant (``PLAIN_CONSTANTS``) comes back as it is.

    Every node creation passes here, so the usual shapes (Nodes and
    constants in plain tuples, lists and dicts) are told apart by exact
    type, in a loop rather than a call per leaf: a list or tuple walks its
    items, a Node is noted, a constant kept, anything else copied by a
    recursive call. Anything else at the top (a named tuple, a slice) takes
    the general walk, ``map_aggregate`` with ``_note_node`` on each leaf.
    """
    kind = type(a)
    if kind is tuple or kind is list:
        items = []
        for x in a:
            if type(x) is Node:
                if node_map is not None:
                    x = node_map[x]
                found[x] = None
            elif type(x) not in PLAIN_CONSTANTS:
                x = copy_arg(x, found, node_map)
            items.append(x)
        return tuple(items) if kind is tuple else items
    if kind is dict:
        return {k: copy_arg(v, found, node_map) for k, v in a.items()}
    if kind in PLAIN_CONSTANTS:
        return a
    return map_aggregate(a, lambda x: _note_node(x, found, node_map))


def _note_node(a: Argument, found: dict[Node, None], node_map: dict | None) -> Argument:
    if isinstance(a, Node):
        a = a if node_map is None else node_map[a]
        found[a] = None
    return a
# --8<-- [end:copy_arg]
