"""Proxy: a stand-in value that writes down what is done to it.

During a trace every tensor is replaced by a Proxy. Python operators, method
calls, attribute reads and calls of public ``tensor`` functions on a Proxy do
not compute anything: each one appends a Node to the tracer's Graph and
returns a new Proxy that stands for the result. Where the program needs a real
Python value (``if proxy:``, ``len(proxy)``, ``range(n)``), the Proxy has none
to give, and says so with a ``TraceError`` that points at the user's line.
"""

from __future__ import annotations

import inspect
import linecache
import operator
import traceback
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from . import magic_methods as _mm
from ._compat import unpack_count
from ._framework import library_packages, loaded_frameworks
from .node import PLAIN_CONSTANTS, Argument, Node, Target, map_aggregate

_BUILTIN_CONTAINERS = frozenset({tuple, list, dict, slice, range})


class TraceError(ValueError, RuntimeError):
    """A traced value was used where a concrete Python value is needed.

    It is a ``ValueError`` as in torch.fx, and also a ``RuntimeError`` because
    torch.fx raises that for ``len()`` on a Proxy.
    """


# --8<-- [start:user_frame]
# Frames of minifx and of the frameworks' packages (tensor, torch:
# `_framework.library_packages`) are library code: an error points past them.

WAYS_OUT = (
    "Ways out: pass the value that decides this in `concrete_args` to specialise the "
    "trace on it; move the code into a function registered with `minifx.wrap` so it is "
    "recorded as one call; or move it into a submodule that the Tracer keeps as a leaf "
    "(override `Tracer.is_leaf_module`)."
)


def _is_library_frame(frame: FrameType) -> bool:
    module = frame.f_globals.get("__name__") or ""
    package = module.split(".")[0]
    return package == "minifx" or package in library_packages()


def user_frame() -> FrameType | None:
    """The innermost frame that belongs to the user's code, not to minifx or tensor."""
    frame = inspect.currentframe()
    while frame is not None and _is_library_frame(frame):
        frame = frame.f_back
    return frame


def user_location() -> str:
    """``File "model.py", line 12, in forward: if x.sum() > 0:`` for the user's frame."""
    frame = user_frame()
    if frame is None:
        return "in an unknown place"
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    source = linecache.getline(filename, lineno).strip()
    where = f'File "{filename}", line {lineno}, in {frame.f_code.co_name}'
    return f"{where}: {source}" if source else where


def user_stack_trace() -> str:
    """The user's part of the current stack, formatted as a traceback is."""
    frame = user_frame()
    summary = traceback.StackSummary.extract(traceback.walk_stack(frame)) if frame else []
    return "".join(reversed(summary.format())) if summary else ""


def trace_error(problem: str) -> TraceError:
    """A TraceError that names the problem, the user's line and the ways out."""
    return TraceError(f"{problem}\n  at {user_location()}\n{WAYS_OUT}")
# --8<-- [end:user_frame]


# --8<-- [start:tracer_base]
class TracerBase:
    """What every tracer needs to turn Proxy operations into Nodes of ``self.graph``.

    ``Tracer`` (in tracer.py) adds modules, parameters and the trace itself;
    ``GraphAppendingTracer`` adds nothing, to record into an existing Graph.
    """

    graph: Any
    # Set to True to store the user's stack in each node's ``stack_trace``.
    record_stack_traces: bool = False

    def create_node(self, kind: str, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Argument], name: str | None = None,
                    type_expr: Any | None = None) -> Node:
        """Append one Node to the graph; every recorded operation passes here.

        ``self.graph.create_node(kind, target, args, kwargs, name, type_expr)``
        makes the node. When ``self.record_stack_traces`` is on and the node
        has no ``stack_trace`` yet, the user's stack (``user_stack_trace()``)
        becomes its ``stack_trace``; one the graph already gave it is kept, as
        torch.fx keeps it. Answer the node.
        """
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        if self.record_stack_traces and not node.stack_trace:
            node.stack_trace = user_stack_trace()
        return node

    def proxy(self, node: Node) -> Proxy:
        """Wrap a new Node in a Proxy (override to return a Proxy subclass)."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Target, args: tuple[Any, ...], kwargs: dict[str, Any],
                     name: str | None = None, type_expr: Any | None = None,
                     proxy_factory_fn: Callable[[Node], Proxy] | None = None) -> Proxy:
        """Record an operation whose inputs may be Proxies, and return its result's Proxy.

        ``args`` and ``kwargs`` go through ``self.create_arg`` (a tuple and a
        dict come back, Proxies turned into their nodes); then
        ``self.create_node(kind, target, args, kwargs, name, type_expr)``
        makes the node. The answer is ``self.proxy(node)``, or
        ``proxy_factory_fn(node)`` when a factory is given.
        """
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        assert isinstance(args_, tuple) and isinstance(kwargs_, dict)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Argument:
        """Turn a value met during tracing into something a Node can hold.

        Proxies become their Nodes; tuples, lists, dicts and slices are
        rebuilt around converted items; constants stay as they are.
        """
        if isinstance(a, Proxy):
            return a.node
        # Every recorded operation passes here with a tuple and a dict (mostly
        # empty): the exact builtin types are answered first, in one test each.
        kind = type(a)
        if kind in PLAIN_CONSTANTS or isinstance(a, Node):
            return a
        if kind is tuple:
            return tuple([self.create_arg(x) for x in a])
        if kind is dict and not a:
            return {}
        if kind not in _BUILTIN_CONTAINERS and hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            items = [self.create_arg(x) for x in a]
            return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
        if isinstance(a, list):
            return [self.create_arg(x) for x in a]
        if isinstance(a, dict):
            converted = {}
            for key, value in a.items():
                if isinstance(key, (Proxy, Node)):
                    raise TraceError(
                        f"a traced value cannot be a dictionary key (key {key!r}) at "
                        f"{user_location()}"
                    )
                converted[key] = self.create_arg(value)
            return converted
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if a is None or a is ... or isinstance(a, (str, int, float, bool, complex)):
            return a
        for framework in loaded_frameworks():
            if framework.is_tensor(a) or isinstance(a, framework.constant_types):
                return a
        raise NotImplementedError(
            f"argument of type {type(a).__qualname__} cannot be recorded in a graph "
            f"(at {user_location()}); pass it in concrete_args or register the function "
            "that receives it with minifx.wrap"
        )

    def to_bool(self, obj: Proxy) -> bool:
        """Called by ``bool(proxy)``: a trace cannot know which branch to take."""
        raise trace_error("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy) -> Iterator[Any]:
        """Called by ``iter(proxy)`` outside unpacking: the length is unknown."""
        raise trace_error(
            "Proxy object cannot be iterated: the number of items is not known while "
            "tracing (a `for` loop over a traced value, or `*value` as call arguments)"
        )

    def keys(self, obj: Proxy) -> Any:
        """Called by ``**proxy``: the keys are unknown while tracing."""
        raise trace_error("Proxy object cannot be unpacked with ** while tracing")
# --8<-- [end:tracer_base]


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to ``graph``: for building graphs through Proxies."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph


# --8<-- [start:proxy_class]
class Proxy:
    """A value seen during tracing: every use of it records a Node.

    ``Proxy(node)`` with no tracer appends to ``node.graph``, so Proxies can
    be used to write new code into an existing Graph.
    """

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if _operators_installed_by is not _install_magic_methods.__code__:
            _ensure_operators()
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, name: str) -> Attribute:
        """``proxy.name``: an ``Attribute(self, name)``, which records nothing yet.

        A dunder name (it starts and ends with ``__``) is an AttributeError
        whose text is the name: copy, pickle and NumPy probe for such names
        (``__deepcopy__``, ``__array__``) and must not get a Proxy back.
        """
        # Dunder probes (copy, pickle, NumPy's __array__) are not user attributes.
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Attribute(self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self) -> Iterator[Proxy]:
        """``a, b = proxy`` records ``proxy[0]`` and ``proxy[1]``; any other loop is an
        error. The count is read from the caller's bytecode (``_compat.unpack_count``).

        The caller is the frame that runs the unpacking
        (``inspect.currentframe().f_back``). When ``unpack_count`` of it gives
        a count ``n``, the answer is an iterator over ``self[0]`` ... ``self[n
        - 1]``, each recorded (``getitem``) before the first is handed out.
        Otherwise the tracer decides: ``self.tracer.iter(self)``, which raises
        a TraceError by default.
        """
        frame = inspect.currentframe()
        count = unpack_count(frame.f_back) if frame is not None else None
        if count is not None:
            return iter([self[i] for i in range(count)])
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise trace_error(
            "'len' is not supported in symbolic tracing by default. If you want this call "
            "to be recorded, call minifx.wrap('len') at the top level of your module"
        )

    def __index__(self) -> int:
        raise trace_error(
            "a traced value cannot be used as a Python int (in range(), as an index or a "
            "size): its value is not known while tracing"
        )

    def __int__(self) -> int:
        raise trace_error("int() of a traced value: its value is not known while tracing")

    def __float__(self) -> float:
        raise trace_error("float() of a traced value: its value is not known while tracing")

    def keys(self) -> Any:
        return self.tracer.keys(self)

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    @classmethod
    def __tensor_function__(cls, func: Callable[..., Any], types: tuple[type, ...],
                            args: tuple = (), kwargs: dict | None = None) -> Proxy:
        """``tensor.sigmoid(proxy)`` lands here: record the call instead of running it."""
        return _record_call(func, args, kwargs or {})

    __torch_function__ = __tensor_function__  # the same, for torch functions
# --8<-- [end:proxy_class]


# --8<-- [start:attribute]
class Attribute(Proxy):
    """``proxy.name``: a method call if it is called, a ``getattr`` node otherwise.

    The node is made only when the attribute is used as a value, so ``x.size(0)``
    records one ``call_method`` and no ``getattr``.
    """

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        """The attribute read's node, made on first use and then kept.

        The first time the attribute is used as a value, the tracer records
        ``create_proxy("call_function", getattr, (self.root, self.attr), {})``
        and its node is kept in ``self._node``; every later use answers that
        same node (one ``getattr`` node however often it is read). Calling
        the attribute (``__call__``, a method call) never makes it.
        """
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)
# --8<-- [end:attribute]


# --8<-- [start:record_call]
# --8<-- [start:find_proxy]
def find_proxy(args: tuple, kwargs: dict) -> Proxy | None:
    """The first Proxy among a call's arguments, nested in containers or not.

    "First" is in the order the arguments are written: the positional ones,
    then the keyword ones' values, each container (tuple, list, dict
    values, slice) walked item by item before the next argument, as
    ``map_aggregate`` walks them. So in ``(c, [y], x)`` the answer is ``y``.
    None when there is no Proxy at all.
    """
    for a in args:  # the usual case, a Proxy among the positional arguments
        if isinstance(a, Proxy):
            return a
        if isinstance(a, (tuple, list, dict, slice)):
            break  # one may be nested in here: walk everything, in order
    found: list[Proxy] = []

    def look(a: Any) -> Any:
        if isinstance(a, Proxy):
            found.append(a)
        return a

    map_aggregate((args, kwargs), look)
    return found[0] if found else None
# --8<-- [end:find_proxy]


def _record_call(func: Callable[..., Any], args: tuple, kwargs: dict) -> Proxy:
    """A Tensor method becomes ``call_method``; any other function ``call_function``."""
    proxy = find_proxy(args, kwargs)
    if proxy is None:
        raise TraceError("no Proxy among the arguments of a dispatched call")
    tracer = proxy.tracer
    for framework in loaded_frameworks():
        method = framework.method_name(func)
        if method is not None:
            return tracer.create_proxy("call_method", method, args, kwargs)
    return tracer.create_proxy("call_function", func, args, kwargs)
# --8<-- [end:record_call]


# --8<-- [start:install_magic]
def _install_magic_methods() -> None:
    """Give Proxy one method per entry of the operator table in magic_methods.py.

    For each name of ``magic_methods`` but ``"div"`` (the same operator as
    ``truediv``), Proxy gets the method ``dunder(name)`` (``__add__``,
    ``__neg__``, ``__getitem__``...): called as ``proxy.__add__(*rest)`` it
    records, through ``self.tracer.create_proxy``, a ``call_function`` node
    whose target is ``operator_function(name)`` and whose args are
    ``(self, *rest)``, with no kwargs, and returns that Proxy.

    For each name of ``reflectable_magic_methods`` but ``"div"`` and
    ``"getitem"``, Proxy also gets ``reflected_dunder(name)`` (``__rsub__``):
    ``2 - proxy`` calls ``proxy.__rsub__(2)``, which records the same
    operator with the operands in the order the user wrote them, ``(2,
    proxy)``.

    Each installed function's ``__name__`` is the name it is installed
    under. Mind Python's closures: a function made in a loop must keep its
    own operator, not the loop's last one.
    """
    for name in _mm.magic_methods:
        if name == "div":  # the same operator as truediv
            continue
        fn = _mm.operator_function(name)

        def forward(self: Proxy, *rest: Any, _fn: Callable = fn) -> Proxy:
            return self.tracer.create_proxy("call_function", _fn, (self, *rest), {})

        forward.__name__ = _mm.dunder(name)
        setattr(Proxy, _mm.dunder(name), forward)

    for name in _mm.reflectable_magic_methods:
        if name in ("div", "getitem"):
            continue
        fn = _mm.operator_function(name)

        def reflected(self: Proxy, lhs: Any, _fn: Callable = fn) -> Proxy:
            return self.tracer.create_proxy("call_function", _fn, (lhs, self), {})

        reflected.__name__ = _mm.reflected_dunder(name)
        setattr(Proxy, _mm.reflected_dunder(name), reflected)
# --8<-- [end:install_magic]


# The code of the installer that put the operators on Proxy, and the names it added.
_operators_installed_by: Any = None
_operator_names: list[str] = []


def _ensure_operators() -> None:
    """Put the operators on Proxy before a Proxy is used, once per installer's code.

    They are installed when the first Proxy is made, not when this module is
    imported: the installer is then ordinary code that runs when it is first
    needed (and ``python -m minifx learn`` can hand it out as an exercise
    without breaking the import). If the installer's code is replaced (``learn
    check`` runs the learner's and the reference's in turn), what the previous
    one added is removed and the new one installs afresh.
    """
    global _operators_installed_by
    code = _install_magic_methods.__code__
    if _operators_installed_by is code:
        return
    for name in _operator_names:
        if name in vars(Proxy):
            delattr(Proxy, name)
    before = set(vars(Proxy))
    _operators_installed_by = None
    _install_magic_methods()
    _operator_names[:] = sorted(set(vars(Proxy)) - before)
    _operators_installed_by = code
