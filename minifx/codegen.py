"""Python code generation: turn a Graph back into the source of ``forward``.

Each node becomes one line, ``name = <expression>``. Everything the lines
refer to that is not a local variable (functions, classes, constants that
have no literal spelling) becomes a *global* of the generated code, under a
name handed out by the same Namespace that keeps node names unique.
"""

from __future__ import annotations

import builtins as _builtins
import enum
import keyword
import math
import re
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import node as node_mod
from ._framework import code_globals, library_packages, repr_literal_types
from .magic_methods import inplace_format, operator_format
from .namespace import Namespace, snake_case
from .namespace import custom_builtins as own_builtins
from .node import Argument, Node, qualified_name
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
    if target.isidentifier() and not keyword.iskeyword(target):
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

    # --8<-- [start:gen_python_code]
    def gen_python_code(self, graph: Graph, root_module: str, *,
                        verbose: bool = False) -> PythonCode:
        """Source and globals for ``graph``; ``root_module`` names the module (``self``)."""
        namespace = Namespace()
        # Globals must take neither a node's name nor a placeholder's parameter name:
        # either would shadow them (a placeholder called `torch` hides the module).
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
        taken = node_names | params
        namespace.mark_used(taken)
        root = root_module if root_module not in taken else namespace.create_name(root_module)
        free_vars: list[str] = [root]
        body: list[str] = []
        placeholder_lines: list[str] = []
        globals_: dict[str, Any] = {}
        wrapped: dict[str, None] = {}
        # Bound in every code: inf, nan, NoneType and the frameworks' (torch: device).
        custom_builtins = {**own_builtins, **code_globals()}
        return_annotation = ""

        spelled_as: dict[int, str] = {}  # id(obj) -> spelling; objects are in globals_

        def add_global(obj: Any, name_hint: str | None = None) -> str:
            """Bind ``obj`` as a global of the code; return how the code spells it."""
            if id(obj) in spelled_as:  # asked once per node: answer before naming it
                return spelled_as[id(obj)]
            hint = _global_hint(obj) if name_hint is None else name_hint
            spelled_as[id(obj)] = spelling = _spell_global(hint, obj)
            return spelling

        package_names: dict[str, str] = {}

        def spell_package(path: str) -> str:
            """Bind the package of ``tensor.sigmoid`` as a global; under another name
            (``tensor_1.sigmoid``) when a node or a placeholder is called ``tensor``."""
            package, _, rest = path.partition(".")
            if package not in package_names:
                name = package if package not in taken else namespace.create_name(package)
                package_names[package] = name
                globals_[name] = sys.modules[package]
            return f"{package_names[package]}.{rest}"

        builtin_names: dict[str, str] = {}

        def spell_builtin(name: str) -> str:
            """How the code spells a builtin it writes out (``getattr``, ``slice``,
            ``Ellipsis``): its own name, or a bound alias when a parameter shadows it."""
            if name not in taken:
                return name
            if name not in builtin_names:
                value = custom_builtins[name] if name in custom_builtins else getattr(
                    _builtins, name)
                builtin_names[name] = alias = namespace.create_name(name)
                globals_[alias] = value
            return builtin_names[name]

        def _spell_global(name_hint: str, obj: Any) -> str:
            path = _package_path(obj)
            if path is not None:  # tensor.sigmoid: bind the package, print the path
                return spell_package(path)
            name = namespace.create_name(name_hint, obj)
            if name in globals_ and globals_[name] is not obj:
                raise RuntimeError(f"global {name} is already bound to another object")
            globals_[name] = obj
            return name

        for name, obj in custom_builtins.items():  # bound under their own names
            if name not in taken:
                globals_[namespace.create_name(name, obj)] = obj

        def type_repr(t: Any) -> str | None:
            """An annotation as torch.fx spells it: classes, generics and even
            strings (``from __future__ import annotations``) become globals;
            the string ``'float'`` is bound under the name ``_float_``."""
            if isinstance(t, type) and not hasattr(t, "__origin__"):
                if t.__module__ == "builtins":
                    return t.__qualname__
                return add_global(t)
            if t == ():
                return "()"
            if isinstance(t, types.UnionType):
                return "|".join(str(type_repr(a)) for a in typing.get_args(t))
            origin = getattr(t, "__origin__", None)
            if origin is not None:
                if isinstance(t, typing._GenericAlias):  # typing.List[int], not list[int]
                    origin = _typing_origins.get(origin, origin)
                name = add_global(origin, node_mod.type_repr(origin))
                params = typing.get_args(t)
                return f"{name}[{','.join(str(type_repr(a)) for a in params)}]" if params else name
            return add_global(t, node_mod.type_repr(t))

        def get_repr(arg: Argument) -> str:
            if type(arg) in _plain_literal_types:  # most arguments: repr is the source
                if type(arg) is float and not math.isfinite(arg):
                    text = repr(arg)
                    bare = text.lstrip("-")
                    return text.replace(bare, spell_builtin(bare))
                return repr(arg)
            if isinstance(arg, Node):
                return arg.name
            if isinstance(arg, tuple) and hasattr(arg, "_fields"):
                cls = add_global(type(arg))
                return f"{cls}{get_repr(tuple(arg))}"
            if isinstance(arg, tuple):
                if len(arg) == 1:
                    return f"({get_repr(arg[0])},)"
                return "(" + ", ".join(get_repr(a) for a in arg) + ")"
            if isinstance(arg, list):
                return "[" + ", ".join(get_repr(a) for a in arg) + "]"
            if isinstance(arg, dict):
                items = ", ".join(f"{get_repr(k)}: {get_repr(v)}" for k, v in arg.items())
                return "{" + items + "}"
            if isinstance(arg, slice):
                return (f"{spell_builtin('slice')}({get_repr(arg.start)}, "
                        f"{get_repr(arg.stop)}, {get_repr(arg.step)})")
            if isinstance(arg, enum.Enum):
                cls = add_global(type(arg), type(arg).__name__)
                if is_plain_identifier(arg.name):
                    return f"{cls}.{arg.name}"
                return f"{cls}[{_quote(arg.name)}]"
            if arg is Ellipsis:
                return spell_builtin("Ellipsis")
            if isinstance(arg, _literal_types) or isinstance(arg, repr_literal_types()):
                text = repr(arg)
                head = text.partition("(")[0]
                if head in custom_builtins:  # device(type='cpu'): the class is a global
                    text = spell_builtin(head) + text[len(head):]
                return text
            if isinstance(arg, float):
                text = repr(arg)  # inf and nan are globals of the code
                bare = text.lstrip("-")
                return text if bare not in custom_builtins else text.replace(
                    bare, spell_builtin(bare))
            spelled = _package_repr(arg)
            if spelled is not None:  # tensor.float32: the package is a global
                return spell_package(spelled)
            # Anything else has no safe literal spelling: bind it as a global.
            return add_global(arg)

        def format_args(args: tuple, kwargs: dict) -> str:
            parts = [get_repr(a) for a in args]
            if kwargs:
                plain = {k: v for k, v in kwargs.items() if is_plain_identifier(k)}
                parts.extend(f"{k} = {get_repr(v)}" for k, v in plain.items())
                if len(plain) < len(kwargs):  # a key that is no identifier: a string literal
                    rest = {k: v for k, v in kwargs.items() if k not in plain}
                    parts.append(f"**{get_repr(rest)}")
            return ", ".join(parts)

        # Each value is freed after its last use (`;  x = y = None`): walking
        # backwards, the first reader met is the last one.
        freed_after: dict[Node, list[str]] = {}
        last_used: set[Node] = set()
        for n in reversed(graph.nodes):
            for inp in n._input_nodes:
                if inp not in last_used:
                    last_used.add(inp)
                    freed_after.setdefault(n, []).append(inp.name)

        prev_summary = None
        for n in graph.nodes:
            if verbose and n.op not in ("placeholder", "output"):
                summary = stack_summary(n.stack_trace) or "No stacktrace found for following nodes"
                if summary != prev_summary:
                    body.append(f"\n# {summary}\n")
                    prev_summary = summary
            annotation = ""
            if n.type is not None and n.op != "output":
                spelled = type_repr(n.type)
                annotation = f" : {spelled}" if spelled else ""
            if n.op == "placeholder":
                target = n.target.lstrip("*")
                if not is_plain_identifier(target) or len(n.target) - len(target) > 2:
                    raise ValueError(
                        f"placeholder {n.name}: target {n.target!r} is not a Python identifier "
                        "(or is a keyword), so it cannot be a parameter of forward; rename "
                        "the placeholder")
                default = f" = {get_repr(n.args[0])}" if n.args else ""
                free_vars.append(f"{n.target}{annotation}{default}")
                if target != n.name:  # first, before any node may take the name `target`
                    placeholder_lines.append(f"{n.name} = {target}\n")
                continue
            self._emit(n, annotation, body, root, get_repr, format_args, add_global,
                       wrapped, spell_builtin("getattr"))
            if n.op == "output":
                if n.type is not None:
                    spelled = type_repr(n.type)
                    return_annotation = f" -> {spelled}" if spelled else ""
                body.append("\n")
                continue
            dead = freed_after.get(n, [])
            if not n.users:  # kept for a side effect: drop its value at once
                dead.append(n.name)
            body.append(f";  {' = '.join(dead)} = None\n" if dead else "\n")

        body[:0] = placeholder_lines
        if not body:
            body.append("pass\n")
        wrap_stmts = ""
        if wrapped:
            wrap_name = add_global(wrap, "wrap")
            wrap_stmts = "\n".join(f"{wrap_name}({_quote(w)})" for w in wrapped)
        if self._body_transformer is not None:
            body = self._body_transformer(body)
        prologue = self.gen_fn_def(free_vars, return_annotation)
        code = "".join(body).lstrip("\n")
        code = "    " + code.replace("\n", "\n    ")  # indent every line
        return PythonCode(f"\n{wrap_stmts}\n\n{prologue}\n{code}", globals_)
    # --8<-- [end:gen_python_code]

    # --8<-- [start:emit_node]
    def _emit(self, n: Node, annotation: str, body: list[str], root_module: str,
              get_repr: Callable, format_args: Callable, add_global: Callable,
              wrapped: dict[str, None], getattr_name: str = "getattr") -> None:
        """Append the line for one node (without its newline) to ``body``."""
        lhs = f"{n.name}{annotation}"
        op, args, kwargs = n.op, n.args, n.kwargs
        if op == "call_function":
            fmt = operator_format(n.target)
            if fmt is not None:
                body.append(f"{lhs} = {fmt.format(*[get_repr(a) for a in args])}")
                return
            fmt = inplace_format(n.target)
            if fmt is not None:
                body.append(f"{fmt.format(*[get_repr(a) for a in args])};  "
                            f"{lhs} = {get_repr(args[0])}")
                return
            fn = add_global(n.target)
            if (fn == getattr_name and len(args) == 2 and not kwargs
                    and isinstance(args[1], str) and is_plain_identifier(args[1])):
                body.append(f"{lhs} = {format_target(get_repr(args[0]), args[1])}")
                return
            body.append(f"{lhs} = {fn}({format_args(args, kwargs)})")
            if n.meta.get("is_wrapped", False):
                wrapped.setdefault(fn)
        elif op == "call_method":
            # One attribute name, never a path: the Interpreter does getattr(obj, target).
            self_obj = get_repr(args[0])
            obj = (f"{self_obj}.{n.target}" if is_plain_identifier(n.target)
                   else f"{getattr_name}({self_obj}, {_quote(n.target)})")
            body.append(f"{lhs} = {obj}({format_args(args[1:], kwargs)})")
        elif op == "call_module":
            module = format_target(root_module, n.target, getattr_name)
            body.append(f"{lhs} = {module}({format_args(args, kwargs)})")
        elif op == "get_attr":
            body.append(f"{lhs} = {format_target(root_module, n.target, getattr_name)}")
        elif op == "output":
            body.append(self.generate_output(args[0], get_repr))
        else:
            raise RuntimeError(f"node {n.name}: cannot generate code for op {op!r}")
    # --8<-- [end:emit_node]


# The typing names that pre-PEP 585 generics print with (typing.List[int]).
_typing_origins = {list: typing.List, dict: typing.Dict, set: typing.Set,  # noqa: UP006
                   frozenset: typing.FrozenSet, tuple: typing.Tuple}  # noqa: UP006


def _global_hint(obj: Any) -> str:
    """A name hint for a global: its qualified name (made an identifier later)."""
    try:
        return qualified_name(obj)
    except (RuntimeError, AttributeError):
        return snake_case(type(obj).__name__)


def _package_path(obj: Any) -> str | None:
    """``tensor.sigmoid`` if ``obj`` is reachable by that path from a printed package."""
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


def _package_repr(obj: Any) -> str | None:
    """The repr of a non-callable package object (``tensor.float32``) if it resolves."""
    text = repr(obj)
    package, _, rest = text.partition(".")
    if (package in library_packages() and rest
            and all(is_plain_identifier(p) for p in rest.split("."))
            and node_mod._resolve(package, rest) is obj):
        return text
    return None
