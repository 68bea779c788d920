"""Python code generation: turn a Graph back into the source of ``forward``.

Each node becomes one line, ``name = <expression>``, written by the method of
``CodeWriter`` named after its opcode (``emit_call_function`` ...). Everything the lines
refer to that is not a local variable (functions, classes, constants that
have no literal spelling) becomes a *global* of the generated code, under a
name handed out by the same Namespace that keeps node names unique.
"""

from __future__ import annotations

import builtins as _builtins
import enum
import keyword
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import node as node_mod
from ._compat import stack_comment
from ._framework import code_globals, library_packages, repr_literal_types
from .magic_methods import inplace_format, operator_format
from .namespace import Namespace, snake_case
from .namespace import custom_builtins as own_builtins
from .node import OPCODES, Argument, Node, last_uses, qualified_name, type_repr
from .wrapping import wrap

if TYPE_CHECKING:
    from .graph import Graph


@dataclass
class PythonCode:
    """What ``Graph.python_code`` returns: the source and the globals it runs with."""

    src: str
    globals: dict[str, Any]


def _quote(s: str) -> str:
    """A string literal for ``s`` (double quotes as torch.fx, repr when needed)."""
    if s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    return repr(s)


def is_plain_identifier(s: str) -> bool:
    """True for a name that can follow a dot: an identifier and not a keyword."""
    return s.isidentifier() and not keyword.iskeyword(s)


def format_target(base: str, target: str, getattr_name: str = "getattr") -> str:
    """``base.a.b``; a path element that is not an identifier goes through getattr.

    This is where attribute and module names enter the source, so a name
    such as ``x; import os`` becomes ``getattr(self, "x; import os")``: a string
    literal, never code. ``getattr_name`` is how the code spells ``getattr``
    (another name when a placeholder is called ``getattr``).
    """
    if is_plain_identifier(target):
        return f"{base}.{target}"  # the usual case, one plain name
    result = base
    for elem in target.split("."):
        result = f"{result}.{elem}" if is_plain_identifier(elem) else (
            f"{getattr_name}({result}, {_quote(elem)})")
    return result


_literal_types = (bool, int, str, bytes, type(None), complex)
# Exactly these types (not their subclasses, an IntEnum say) print as their repr().
_plain_literal_types = frozenset({*_literal_types, float})
# Types whose repr() is valid source because a custom builtin names their class
# come from the frameworks (torch.device prints as ``device(type='cpu')``).


class CodeGen:
    """Generates ``def forward(self, ...)`` for a graph.

    Subclasses may change the signature (``gen_fn_def``) or the return
    statement (``generate_output``); ``Graph.on_generate_code`` installs a
    function that rewrites the body lines.
    """

    def __init__(self) -> None:
        self._body_transformer: Callable[[list[str]], list[str]] | None = None

    def gen_fn_def(self, free_vars: list[str], maybe_return_annotation: str) -> str:
        """The ``def`` line. ``free_vars[0]`` is the module's own parameter (``self``,
        or ``self_1`` when a placeholder takes the name ``self``)."""
        return f"def forward({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args: Argument, repr_fn: Callable[[Any], str]) -> str:
        """The ``return`` line."""
        return f"return {repr_fn(output_args)}"

    def gen_python_code(self, graph: Graph, root_module: str, *,
                        verbose: bool = False) -> PythonCode:
        """Source and globals for ``graph``; ``root_module`` names the module (``self``)."""
        return CodeWriter(self, graph, root_module).write(verbose)


# --8<-- [start:writer]
class CodeWriter:
    """Writes ``forward`` for one graph: one ``emit_<op>`` method per opcode.

    ``write`` walks the nodes in order. Each ``emit_`` method appends the
    text of one node's line to ``body``; ``emit_frees`` ends the line. What
    the lines share lives here: the names handed out (``namespace``), the
    globals bound so far, the parameters of ``forward`` (``free_vars``).
    """

    def __init__(self, codegen: CodeGen, graph: Graph, root_module: str) -> None:
        self.codegen, self.graph = codegen, graph
        self.namespace = Namespace()
        # Globals must take neither a node's name nor a placeholder's parameter
        # name: either would shadow them (a placeholder `tensor` hides the package).
        self.taken = _names_in_use(graph)
        self.namespace.mark_used(self.taken)
        self.root = (root_module if root_module not in self.taken
                     else self.namespace.create_name(root_module))
        self.free_vars: list[str] = [self.root]
        self.body: list[str] = []
        self.placeholder_lines: list[str] = []  # `x_1 = x`: a node named apart from its parameter
        self.globals: dict[str, Any] = {}
        self.wrapped: dict[str, None] = {}  # functions `wrap`ped again above forward
        self.return_annotation = ""
        self._spelled_as: dict[int, str] = {}  # id(obj) -> spelling; obj is in globals
        self._package_names: dict[str, str] = {}
        self._builtin_names: dict[str, str] = {}
        # Bound in every code under their own names: inf, nan, NoneType (and torch's device).
        # Bound in every code: inf, nan, NoneType and the frameworks' (torch: device).
        self.custom_builtins = {**own_builtins, **code_globals()}
        for name, obj in self.custom_builtins.items():
            if name not in self.taken:
                self.globals[self.namespace.create_name(name, obj)] = obj
        self.getattr_name = self.spell_builtin("getattr")
        self.last_uses = last_uses(graph)
    # --8<-- [end:writer]

    # --8<-- [start:exercises]
    def write(self, verbose: bool = False) -> PythonCode:
        """The source of ``forward`` and the globals it runs with (``self.finish()``).

        Walks the graph's nodes in order. A node whose op is not one of
        ``OPCODES`` is a RuntimeError: ``node <name>: cannot generate code for
        op '<op>'``. With ``verbose`` (``print_readable``), ``stack_comment``
        first writes where the node was traced when that changed (pass it the
        node, the comment now in force, which it returns, and ``self.body``).
        Then ``emit_<op>`` writes the node's line, and every node but a
        placeholder and the output ends its line with ``emit_frees``.
        """
        previous_comment = None
        for node in self.graph.nodes:
            if node.op not in OPCODES:
                raise RuntimeError(f"node {node.name}: cannot generate code for op {node.op!r}")
            if verbose:  # print_readable: where each run of nodes was traced
                previous_comment = stack_comment(node, previous_comment, self.body)
            getattr(self, f"emit_{node.op}")(node)
            if node.op not in ("placeholder", "output"):
                self.emit_frees(node)
        return self.finish()

    def lhs(self, node: Node) -> str:
        """The left of a node's line: ``add``, or ``add : int`` when the node has a type."""
        return node.name + self.annotation(node)

    def annotation(self, node: Node) -> str:
        """`` : int`` when the node has a type, else nothing."""
        spelled = self.spell_type(node.type) if node.type is not None else None
        return f" : {spelled}" if spelled else ""

    def emit_placeholder(self, node: Node) -> None:
        """Adds the parameter ``x``, ``x : int = 3`` or ``*args`` to ``def forward(...)``.

        The parameter is the target with its annotation (``self.annotation``)
        and, when the placeholder has args, `` = <default>`` spelled by
        ``self.spell``; it goes into ``self.free_vars``. The target, without
        its leading ``*`` or ``**``, must be a plain identifier (no keyword)
        with at most two stars, else a ValueError: ``placeholder <name>:
        target <target!r> is not a Python identifier (or is a keyword), so it
        cannot be a parameter of forward; rename the placeholder``. When the
        node's name differs from that bare target (``x_1`` for parameter
        ``x``), the line ``<name> = <target>`` goes into
        ``self.placeholder_lines``, which come first in the body.
        """
        target = node.target.lstrip("*")
        annotation = self.annotation(node)
        if not is_plain_identifier(target) or len(node.target) - len(target) > 2:
            raise ValueError(
                f"placeholder {node.name}: target {node.target!r} is not a Python identifier "
                "(or is a keyword), so it cannot be a parameter of forward; rename "
                "the placeholder")
        default = f" = {self.spell(node.args[0])}" if node.args else ""
        self.free_vars.append(f"{node.target}{annotation}{default}")
        if target != node.name:  # first in the body, before a node may take the name
            self.placeholder_lines.append(f"{node.name} = {target}\n")

    def emit_call_function(self, node: Node) -> None:
        """Writes ``name = fn(args)``, ``name = x + y`` for an operator, ``x += y;  name = x``
        for an in-place one and ``name = x.shape`` for ``getattr(x, "shape")``.

        A node whose meta says ``is_wrapped`` (a call of a ``minifx.wrap``
        function) also records the function's spelling in ``self.wrapped``, so
        that ``finish`` writes ``wrap("name")`` above ``forward``."""
        lhs, args = self.lhs(node), node.args
        operator = operator_format(node.target)
        if operator is not None:
            self.body.append(f"{lhs} = {operator.format(*[self.spell(a) for a in args])}")
            return
        inplace = inplace_format(node.target)
        if inplace is not None:
            statement = inplace.format(*[self.spell(a) for a in args])
            self.body.append(f"{statement};  {lhs} = {self.spell(args[0])}")
            return
        fn = self.add_global(node.target)
        if (fn == self.getattr_name and len(args) == 2 and not node.kwargs
                and isinstance(args[1], str) and is_plain_identifier(args[1])):
            self.body.append(f"{lhs} = {format_target(self.spell(args[0]), args[1])}")
            return
        self.body.append(f"{lhs} = {fn}({self.format_args(args, node.kwargs)})")
        if node.meta.get("is_wrapped", False):
            self.wrapped.setdefault(fn)

    def emit_frees(self, node: Node) -> None:
        """Ends a node's line: ``;  x = y = None`` drops the values it used last (and its
        own, when nobody reads it), so memory is freed as early as in eager code."""
        dead = [value.name for value in self.last_uses.get(node, ())]
        if not node.users:  # kept for a side effect only
            dead.append(node.name)
        self.body.append(f";  {' = '.join(dead)} = None\n" if dead else "\n")
    def emit_call_method(self, node: Node) -> None:
        """Writes ``name = x.clamp(args)`` (``getattr(x, "odd name")(args)`` when the
        method name is no identifier: one name, never a path).

        The left side is ``self.lhs(node)``; the object is ``args[0]``
        spelled by ``self.spell``; the method is attribute syntax when the
        target is a plain identifier (no keyword), else a call of getattr
        (spelled ``self.getattr_name``: a parameter may shadow the builtin)
        with the target quoted by ``_quote``; the call's arguments are the
        rest of args and the kwargs, by ``self.format_args``. A target is
        never pasted in as code.
        """
        lhs, obj = self.lhs(node), self.spell(node.args[0])
        method = (f"{obj}.{node.target}" if is_plain_identifier(node.target)
                  else f"{self.getattr_name}({obj}, {_quote(node.target)})")
        self.body.append(f"{lhs} = {method}({self.format_args(node.args[1:], node.kwargs)})")

    def emit_output(self, node: Node) -> None:
        """Writes ``return <args[0]>`` and notes ``-> type`` for the ``def`` line.

        The line is what ``self.codegen.generate_output`` makes of the
        output's argument, with ``self.spell`` to spell values, then a
        newline of its own (the output gets no ``emit_frees``). When the
        node has a type, ``self.return_annotation`` becomes `` -> <type>``,
        the type spelled by ``self.spell_type`` (nothing when that gives
        nothing).
        """
        self.body.append(self.codegen.generate_output(node.args[0], self.spell))
        if node.type is not None:
            spelled = self.spell_type(node.type)
            self.return_annotation = f" -> {spelled}" if spelled else ""
        self.body.append("\n")
    # --8<-- [end:exercises]

    # --8<-- [start:emit]
    def emit_get_attr(self, node: Node) -> None:
        """Writes ``name = self.layer.weight`` (``getattr(self.layers, "0")`` for a
        path atom that is no identifier).

        The left side is ``self.lhs(node)`` (with the node's type, if any); the
        path is ``format_target`` of ``self.root`` (``self`` unless a node took
        that name), the target, and the code's spelling of ``getattr``
        (``self.getattr_name``). No line end: ``emit_frees`` writes it."""
        path = format_target(self.root, node.target, self.getattr_name)
        self.body.append(f"{self.lhs(node)} = {path}")

    def emit_call_module(self, node: Node) -> None:
        """Writes ``name = self.layer1.conv(args)``.

        The left side is ``self.lhs(node)``; the module is spelled as
        ``emit_get_attr`` spells a path (``format_target`` from
        ``self.root``); the arguments are ``self.format_args`` of the node's
        args and kwargs. No line end: ``emit_frees`` writes it."""
        lhs = self.lhs(node)
        module = format_target(self.root, node.target, self.getattr_name)
        self.body.append(f"{lhs} = {module}({self.format_args(node.args, node.kwargs)})")

    def finish(self) -> PythonCode:
        """Indent the body under the ``def`` line, with any ``wrap(...)`` lines above it.

        The body is ``self.placeholder_lines`` then ``self.body``, or
        ``["pass\n"]`` when both are empty; the code generator's
        ``_body_transformer`` (``graph.on_generate_code``), when set, gets that
        list and returns the one used. Each name in ``self.wrapped`` gives a
        line ``wrap("name")``, with ``wrap`` bound as a global through
        ``add_global`` (hint ``"wrap"``). The source is a newline, the wrap
        lines, two newlines, the ``def`` line (``gen_fn_def`` of
        ``self.free_vars`` and ``self.return_annotation``), a newline, then
        the body with leading newlines dropped and every line indented by
        four spaces. The answer is ``PythonCode(source, self.globals)``.
        """
        body = self.placeholder_lines + self.body or ["pass\n"]
        wrap_stmts = ""
        if self.wrapped:
            wrap_name = self.add_global(wrap, "wrap")
            wrap_stmts = "\n".join(f"{wrap_name}({_quote(w)})" for w in self.wrapped)
        if self.codegen._body_transformer is not None:
            body = self.codegen._body_transformer(body)
        prologue = self.codegen.gen_fn_def(self.free_vars, self.return_annotation)
        code = "".join(body).lstrip("\n")
        code = "    " + code.replace("\n", "\n    ")  # indent every line
        return PythonCode(f"\n{wrap_stmts}\n\n{prologue}\n{code}", self.globals)
    # --8<-- [end:emit]

    # -- spelling values and globals ------------------------------------------
    def spell(self, arg: Argument) -> str:
        """How the code spells a node argument: a Node by its name, a literal by its
        repr, containers item by item, anything else as a global.

        In this order: a value of exactly a plain literal type
        (``_plain_literal_types``) is its repr, a float through
        ``spell_float`` (``inf``, ``nan``); a Node is its name; a named tuple
        is its class, bound as a global (``add_global``), followed by the
        spelling of its items as a tuple; a tuple is ``(a, b)``, and ``(a,)``
        with one item; a list ``[a, b]``; a dict ``{k: v, ...}``, keys and
        values spelled; a slice ``slice(start, stop, step)`` and Ellipsis
        ``Ellipsis``, both through ``spell_builtin`` (a parameter may shadow
        the builtin); an Enum member ``Cls.NAME``, or ``Cls['odd name']``
        when the name is no identifier, with its class bound under its own
        name; a subclass of a literal type or of ``repr_literal_types()`` is
        its repr, whose leading class name goes through ``spell_builtin``
        when it is one of ``self.custom_builtins`` (``device(type='cpu')``);
        a float subclass goes through ``spell_float``; an object of a
        library package (``_package_repr``, like ``tensor.float32``) through
        ``spell_package``; anything else is bound as a global.
        """
        if type(arg) in _plain_literal_types:  # most arguments: repr is the source
            return self.spell_float(arg) if type(arg) is float else repr(arg)
        if isinstance(arg, Node):
            return arg.name
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            return f"{self.add_global(type(arg))}{self.spell(tuple(arg))}"
        if isinstance(arg, tuple):
            if len(arg) == 1:
                return f"({self.spell(arg[0])},)"
            return "(" + ", ".join(self.spell(a) for a in arg) + ")"
        if isinstance(arg, list):
            return "[" + ", ".join(self.spell(a) for a in arg) + "]"
        if isinstance(arg, dict):
            items = ", ".join(f"{self.spell(k)}: {self.spell(v)}" for k, v in arg.items())
            return "{" + items + "}"
        if isinstance(arg, slice):
            return (f"{self.spell_builtin('slice')}({self.spell(arg.start)}, "
                    f"{self.spell(arg.stop)}, {self.spell(arg.step)})")
        if isinstance(arg, enum.Enum):
            cls = self.add_global(type(arg), type(arg).__name__)
            if is_plain_identifier(arg.name):
                return f"{cls}.{arg.name}"
            return f"{cls}[{_quote(arg.name)}]"
        if arg is Ellipsis:
            return self.spell_builtin("Ellipsis")
        if isinstance(arg, _literal_types) or isinstance(arg, repr_literal_types()):
            text = repr(arg)
            head = text.partition("(")[0]
            if head in self.custom_builtins:  # device(type='cpu'): the class is a global
                text = self.spell_builtin(head) + text[len(head):]
            return text
        if isinstance(arg, float):
            return self.spell_float(arg)
        spelled = _package_repr(arg)
        if spelled is not None:  # tensor.float32: the package is a global
            return self.spell_package(spelled)
        # Anything else has no safe literal spelling: bind it as a global.
        return self.add_global(arg)

    # --8<-- [start:spell_float]
    def spell_float(self, x: float) -> str:
        """``1.5``, ``-inf``: inf and nan are globals of the code (custom builtins).

        The float's ``repr``; when that is ``inf`` or ``nan`` (a custom
        builtin, after any ``-``), the name is spelled by ``spell_builtin``,
        so a parameter called ``inf`` makes it ``-inf_1``, bound to the float
        infinity, not to the parameter. The sign stays in front."""
        text = repr(x)
        bare = text.lstrip("-")
        return text if bare not in self.custom_builtins else text.replace(
            bare, self.spell_builtin(bare))
    # --8<-- [end:spell_float]

    # --8<-- [start:globals]
    def format_args(self, args: tuple, kwargs: dict) -> str:
        """``x, 2, min = 0.0``: the inside of a call's parentheses.

        Each arg is ``self.spell``ed, in order, then each kwarg as ``key =
        value`` (spaces around ``=``, as torch.fx writes them), in order.
        Keys that are not plain identifiers (``is_plain_identifier``) cannot
        be keywords: they go together, in their order, into one ``**{...}``
        at the end, the dict spelled by ``self.spell``. The parts are joined
        with ``", "``.
        """
        parts = [self.spell(a) for a in args]
        if kwargs:
            plain = {k: v for k, v in kwargs.items() if is_plain_identifier(k)}
            parts.extend(f"{k} = {self.spell(v)}" for k, v in plain.items())
            if len(plain) < len(kwargs):  # a key that is no identifier: a string literal
                rest = {k: v for k, v in kwargs.items() if k not in plain}
                parts.append(f"**{self.spell(rest)}")
        return ", ".join(parts)

    def spell_type(self, t: Any) -> str | None:
        """An annotation as torch.fx spells it: classes, generics and even strings
        (``from __future__ import annotations``) become globals; the string
        ``'float'`` is bound under the name ``_float_``. ``node.type_repr`` is the
        plain spelling ``str(graph)`` prints; this one binds what it names.

        In this order:

        - a class that is not a generic alias: a builtin class by its
          ``__qualname__`` (``int``), any other bound with ``add_global``;
        - the empty tuple ``()``: ``"()"``;
        - a ``X | Y`` union (``types.UnionType``): each member spelled, joined
          with ``|`` and no spaces;
        - a generic (it has ``__origin__``): its origin bound with
          ``add_global`` under the hint ``type_repr(origin)``, where a
          ``typing`` alias (``typing.List[int]``, a ``typing._GenericAlias``)
          keeps typing's own origin (``_typing_origins``: ``List``, not
          ``list``); without parameters that name alone, else
          ``name[A,B]``, each parameter spelled, joined by ``,`` without
          spaces;
        - anything else (a string, ``typing.Any``): ``add_global(t,
          type_repr(t))``.
        """
        if isinstance(t, type) and not hasattr(t, "__origin__"):
            if t.__module__ == "builtins":
                return t.__qualname__
            return self.add_global(t)
        if t == ():
            return "()"
        if isinstance(t, types.UnionType):
            return "|".join(str(self.spell_type(a)) for a in typing.get_args(t))
        origin = getattr(t, "__origin__", None)
        if origin is not None:
            if isinstance(t, typing._GenericAlias):  # typing.List[int], not list[int]
                origin = _typing_origins.get(origin, origin)
            name = self.add_global(origin, type_repr(origin))
            params = typing.get_args(t)
            if not params:
                return name
            return f"{name}[{','.join(str(self.spell_type(a)) for a in params)}]"
        return self.add_global(t, type_repr(t))

    def add_global(self, obj: Any, name_hint: str | None = None) -> str:
        """Bind ``obj`` as a global of the code; return how the code spells it.

        The same object (by id) is spelled the same way every time it is
        asked for, without naming it again. An object reachable from a
        printed package (``_package_path``: ``tensor.sigmoid``) is spelled by
        that path through ``spell_package``. Anything else gets a name from
        ``self.namespace`` (hint: ``name_hint``, else ``_global_hint(obj)``)
        and is put in ``self.globals`` under it; a name already bound to
        another object is a RuntimeError: ``global <name> is already bound to
        another object``.
        """
        if id(obj) in self._spelled_as:  # asked once per node: answer before naming it
            return self._spelled_as[id(obj)]
        path = _package_path(obj)
        if path is not None:  # tensor.sigmoid: bind the package, print the path
            spelling = self.spell_package(path)
        else:
            hint = _global_hint(obj) if name_hint is None else name_hint
            spelling = self.namespace.create_name(hint, obj)
            if spelling in self.globals and self.globals[spelling] is not obj:
                raise RuntimeError(f"global {spelling} is already bound to another object")
            self.globals[spelling] = obj
        self._spelled_as[id(obj)] = spelling
        return spelling

    def spell_package(self, path: str) -> str:
        """Bind the package of ``tensor.sigmoid`` as a global; under another name
        (``tensor_1.sigmoid``) when a node or a placeholder is called ``tensor``.

        The package is the path's first dotted part; it is bound once (in
        ``self.globals``, the module from ``sys.modules``) under its own name
        unless that name is in ``self.taken``, then under a fresh name from
        ``self.namespace``. The answer is that name, a dot, and the rest of
        the path."""
        package, _, rest = path.partition(".")
        if package not in self._package_names:
            name = package if package not in self.taken else self.namespace.create_name(package)
            self._package_names[package] = name
            self.globals[name] = sys.modules[package]
        return f"{self._package_names[package]}.{rest}"

    def spell_builtin(self, name: str) -> str:
        """How the code spells a builtin it writes out (``getattr``, ``slice``,
        ``Ellipsis``): its own name, or a bound alias when a parameter shadows it.

        A name not in ``self.taken`` is spelled as itself. A taken one gets,
        once, an alias from ``self.namespace`` (``getattr_1``), bound in
        ``self.globals`` to the builtin: the custom builtin of that name
        (``self.custom_builtins``: ``inf``, ``nan``...) if there is one, else
        Python's own. Later calls give the same alias."""
        if name not in self.taken:
            return name
        if name not in self._builtin_names:
            value = (self.custom_builtins[name] if name in self.custom_builtins
                     else getattr(_builtins, name))
            self._builtin_names[name] = alias = self.namespace.create_name(name)
            self.globals[alias] = value
        return self._builtin_names[name]
    # --8<-- [end:globals]


# --8<-- [start:names_in_use]
def _names_in_use(graph: Graph) -> set[str]:
    """Node names and placeholder parameter names; a node name must be a unique identifier.

    The answer is the set of every node's name and, for each placeholder
    whose target is a str, the target without its leading stars (``*args``
    gives ``args``). A name met twice, or one that is not a plain
    identifier (``is_plain_identifier``), is a ValueError: ``node '<name>'
    (<op>): a node's name must be a unique Python identifier; ...``.
    """
    node_names: set[str] = set()
    params: set[str] = set()
    for n in graph.nodes:
        if n.name in node_names or not is_plain_identifier(n.name):
            raise ValueError(
                f"node {n.name!r} ({n.op}): a node's name must be a unique Python "
                "identifier; let the graph name nodes (create_node's name= is made safe)")
        node_names.add(n.name)
        if n.op == "placeholder" and isinstance(n.target, str):
            params.add(n.target.lstrip("*"))
    return node_names | params
# --8<-- [end:names_in_use]


# The typing names that pre-PEP 585 generics print with (typing.List[int]).
_typing_origins = {list: typing.List, dict: typing.Dict, set: typing.Set,  # noqa: UP006
                   frozenset: typing.FrozenSet, tuple: typing.Tuple}  # noqa: UP006


def _global_hint(obj: Any) -> str:
    """A name hint for a global: its qualified name (made an identifier later)."""
    try:
        return qualified_name(obj)
    except (RuntimeError, AttributeError):
        return snake_case(type(obj).__name__)


# --8<-- [start:package_path]
def _package_path(obj: Any) -> str | None:
    """``tensor.sigmoid`` if ``obj`` is reachable by that path from a printed package.

    None, unless all of these hold: ``obj`` is callable and is not a class
    of ``builtins``; it has a ``qualified_name`` (a RuntimeError or
    AttributeError there means None); that name's first dotted part is one
    of ``library_packages()`` and something follows it; every later part is
    a plain identifier; and following the path from the package
    (``node._resolve``) gives this very object (``is``). Then the answer is
    the path.
    """
    if not callable(obj) or isinstance(obj, type) and obj.__module__ == "builtins":
        return None
    try:
        path = qualified_name(obj)
    except (RuntimeError, AttributeError):
        return None
    package, _, rest = path.partition(".")
    if package not in library_packages() or not rest:
        return None
    if not all(is_plain_identifier(p) for p in rest.split(".")):
        return None  # an attribute named like code is never printed as a path
    if node_mod._resolve(package, rest) is not obj:
        return None
    return path
# --8<-- [end:package_path]


def _package_repr(obj: Any) -> str | None:
    """The repr of a non-callable package object (``tensor.float32``) if it resolves."""
    text = repr(obj)
    package, _, rest = text.partition(".")
    if (package in library_packages() and rest
            and all(is_plain_identifier(p) for p in rest.split("."))
            and node_mod._resolve(package, rest) is obj):
        return text
    return None
