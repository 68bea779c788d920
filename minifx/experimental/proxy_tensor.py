"""make_fx: trace a function by running it, and record the primitives it calls.

`symbolic_trace` (chapter 2) runs ``forward`` on Proxies and records the
*public* calls it sees; a leaf module stays one ``call_module`` node and a
Python ``if`` on a Proxy is an error. `make_fx`, like torch's, works one
level lower and the other way round: it runs the function on real (or
fake) tensors, under a dispatch mode (`tensor.dispatch`) that sees each
*primitive* (`tensor.ops`) the run calls, and records each as one
``call_function`` node. So:

- the graph's op set is the primitive table: ``tensor.ops.linear``,
  ``tensor.ops.conv2d``, ``tensor.ops.add``, ... whatever module or
  functional made them; modules are inlined, there is no ``call_module``
  or ``call_method``;
- parameters and buffers become ``get_attr`` nodes (their qualified names
  when ``fn`` is a Module, as torch's make_fx finds them on its root;
  ``_param_constant0``, ``_tensor_constant0`` ... for other tensors the run
  meets that no primitive made);
- Python control flow is evaluated, with the run's values: the graph is
  the path those inputs took, specialised to them (what a branch's test
  computed is dead code, and erased, as torch's make_fx erases it). Under
  ``tracing_mode="fake"`` there are no values, and a branch on one raises.

Node names follow torch: placeholders ``arg0_1``, ``arg1_1`` ...; a
primitive's node is named after it, ``add``, ``add_1``, ... (torch names
them after the ATen op).

How values find their nodes: each primitive's result is a Tensor around a
NumPy array (a FakeArray under fake tensors); the recorder keys nodes by
that array's identity and keeps the arrays alive while tracing. An array
that reaches a primitive, that no primitive made, and that shares memory
with one that was, was made by front-end code outside the primitive table:
that is refused with an error naming the primitive, since the graph would
silently lose the view. No layer of `tensor.nn` computes so (attention and
BatchNorm's training statistics are written in primitives too); the check
guards front-end code yet to come.

``decomposition_table`` maps a public op (``tensor.nn.functional.gelu``)
or a primitive (``tensor.ops.linear``) to a function that computes it from
other ops; the function runs in its place, and the graph records what it
calls.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

import tensor
from tensor import Tensor
from tensor.dispatch import TensorDispatchMode
from tensor.fake import FakeTensorMode
from tensor.overrides import TensorFunctionMode

from .._lazy_graph_module import _LazyGraphModule
from ..graph import Graph
from ..graph_module import GraphModule
from ..namespace import _illegal_chars, _split_name
from ..node import Node

__all__ = ["make_fx"]


class _Recorder(TensorDispatchMode):
    """The dispatch mode that writes each primitive call into ``graph``."""

    def __init__(self, graph: Graph, named: dict[int, tuple[str, Tensor]],
                 decompositions: dict) -> None:
        self.graph = graph
        self.nodes: dict[int, Node] = {}  # id(array) -> the node that made it
        self.alive: list[Any] = []  # the arrays, so that no id is reused while tracing
        self.memory: set[int] = set()  # the memory the first `seen` of them are views of
        self.seen = 0
        self.named = named  # id(array) -> (qualified name, tensor) of a parameter or buffer
        self.attrs: dict[str, Tensor] = {}  # get_attr target -> the tensor it reads
        self.constants: Counter[str] = Counter()  # _param_constant / _tensor_constant: how many
        self.decompositions = decompositions

    def bind(self, value: Tensor, node: Node) -> None:
        self.nodes[id(value._array)] = node
        self.alive.append(value._array)

    def shares_traced_memory(self, arr: Any) -> bool:
        """Whether ``arr`` is a view of the memory of an array bound to a node (`_memory_of`).

        The owners are worked out when asked, for the arrays bound since the
        last question: only a tensor that no primitive made and that is no
        parameter asks, which is rare, and `bind` stays a dict entry.
        """
        for bound in self.alive[self.seen:]:
            self.memory.add(id(_memory_of(bound)))
        self.seen = len(self.alive)
        return id(_memory_of(arr)) in self.memory

    # --8<-- [start:node_of]
    def node_of(self, value: Tensor, func: Any) -> Node:
        """The node that stands for the Tensor ``value``, an argument of primitive ``func``.

        - A tensor already bound (a placeholder's, a primitive's result, a
          constant met before): its node, found by its array's identity
          (``self.nodes`` is keyed by ``id(value._array)``).
        - Otherwise a new ``get_attr`` node, bound (`bind`) so that the next
          call finds it, named ``_attr_node_name(target)``. Its target is the
          qualified name ``self.named`` gives the array's identity (a
          parameter or buffer of the traced Module); for any other tensor, a
          new constant in ``self.constants`` (the tensor under its name):
          ``_param_constant{k}`` for a `tensor.nn.Parameter`,
          ``_tensor_constant{k}`` for the rest, k the number of constants of
          that prefix so far.
        - A tensor with no name whose memory (`_memory_of` its array) is one
          a bound tensor is a view of (``self.memory``) was made outside the
          primitives: RuntimeError naming ``func`` (its repr) and saying it
          "shares memory with a traced value"; no node is made.
        """
        arr = value._array
        node = self.nodes.get(id(arr))
        if node is not None:
            return node
        name, attr = self.named.get(id(arr), (None, value))
        if name is None and self.shares_traced_memory(arr):
            raise RuntimeError(
                f"make_fx: an argument of {func!r} shares memory with a traced value but no "
                "tensor.ops primitive made it: a view computed outside the primitives (front-end "
                "code the dispatch mode cannot see); the graph would lose it")
        if name is None:
            prefix = "_param_constant" if isinstance(value, tensor.nn.Parameter) else \
                "_tensor_constant"
            name = f"{prefix}{self.constants[prefix]}"
            self.constants[prefix] += 1
        self.attrs[name] = attr
        node = self.graph.create_node("get_attr", name, name=_attr_node_name(name))
        self.bind(value, node)
        return node
    # --8<-- [end:node_of]

    def arg_nodes(self, args: tuple, func: Any) -> tuple:
        """A primitive's positional arguments with each Tensor replaced by its node
        (`node_of`), also in a list or tuple of Tensors (cat's and stack's); numbers,
        sizes and dims stay as they are. One level down, as the primitives take
        Tensors (`tensor.ops`); `as_arg` walks any nesting.

        Speed only: a Tensor already bound is found here (a Node is always true),
        not through a call of `node_of`, and a tuple of sizes is not rebuilt.
        """
        nodes = self.nodes
        return tuple([nodes.get(id(a._array)) or self.node_of(a, func) if isinstance(a, Tensor)
                      else type(a)([self.node_of(v, func) if isinstance(v, Tensor) else v
                                    for v in a])
                      if isinstance(a, (tuple, list)) and a and isinstance(a[0], Tensor)
                      else a for a in args])

    # --8<-- [start:as_arg]
    def as_arg(self, value: Any, func: Any) -> Any:
        """``value`` with every Tensor in it, at any depth, replaced by its node: what a
        primitive's keyword arguments and make_fx's output become in the graph.

        - A Tensor: ``self.node_of(value, func)``, ``func`` passed on (its
          bound node, or a new ``get_attr`` node; a view of traced memory
          raises there, naming ``func``).
        - A tuple or a list: a new one of the same type (``type(value)``: a
          list stays a list, a tuple a tuple), of ``as_arg`` of each item, in
          order; the nesting is kept.
        - A dict: a new dict with the same keys in the same order, each value
          through ``as_arg``.
        - Anything else (a number, a string, None, a dtype, ...): ``value``
          itself, the same object.

        ``value`` is not changed.
        """
        if isinstance(value, Tensor):
            return self.node_of(value, func)
        if isinstance(value, (tuple, list)):
            return type(value)([self.as_arg(v, func) for v in value])
        if isinstance(value, dict):
            return {k: self.as_arg(v, func) for k, v in value.items()}
        return value
    # --8<-- [end:as_arg]

    # --8<-- [start:tensor_dispatch]
    def __tensor_dispatch__(self, func, types, args=(), kwargs=None):
        """Record one primitive call as one node, run it beneath this mode, return its result.

        - ``kwargs`` None means no keyword arguments.
        - A primitive with an entry in ``self.decompositions``: that function
          runs in its place, on the same arguments, with this recorder entered
          again around it (the handler runs with its mode off the stack), so
          the primitives it calls are recorded; its result is returned and no
          node is made for ``func`` itself.
        - Otherwise: first one ``call_function`` node in ``self.graph``, its
          target ``func``, its args and kwargs the call's with every Tensor
          replaced by its node: `arg_nodes` for the args (a Tensor, or a list
          of Tensors, as the primitives take them), `as_arg` for the kwargs
          (any nesting). Both make a ``get_attr`` node for a parameter, buffer
          or constant they meet for the first time (`node_of`): those come
          before the call's node. Then the primitive runs,
          ``func(*args, **kwargs)``: beneath this mode, that is the kernel, or
          the fake mode's meta function.
        - A Tensor result is bound to the node (`bind`), so that later calls
          taking it find the node; the result is returned as it is.
        """
        kwargs = kwargs or {}
        decomposition = self.decompositions.get(func)
        if decomposition is not None:
            with self:  # what the decomposition calls is recorded
                return decomposition(*args, **kwargs)
        node = self.graph.call_function(func, self.arg_nodes(args, func),
                                        self.as_arg(kwargs, func) if kwargs else None)
        out = func(*args, **kwargs)  # beneath this mode: the kernel, or a fake mode's meta
        if isinstance(out, Tensor):
            self.bind(out, node)
        return out
    # --8<-- [end:tensor_dispatch]


@functools.lru_cache(maxsize=4096)
def _attr_node_name(target: str) -> str:
    """``layer1.0.conv1.weight`` -> ``layer1_0_conv1_weight``: the name a ``get_attr``
    node of ``target`` starts from, made legal as `Namespace.create_name` makes it.

    Speed only: ``graph.get_attr(target)`` gives the node the same name, but
    makes a dotted target legal with two regular expressions per node; a
    ResNet-50 has 267 of them, the same ones at every trace, so the legal
    spelling is worked out once per target and handed to ``create_node``.
    """
    candidate = Graph._target_to_str(target)
    if _split_name(candidate)[0] is None:
        candidate = _illegal_chars.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
    return candidate


def _memory_of(arr: Any) -> Any:
    """The array that owns an array's memory: the last array on its chain of ``.base``
    (one that owns its data, or one made over a buffer: each fake array's window,
    though all the windows share one reserved mapping)."""
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


class _Decomposer(TensorFunctionMode):
    """Runs a public op's decomposition in its place (the decompositions of public ops)."""

    def __init__(self, table: dict) -> None:
        self.table = table

    def __tensor_function__(self, func, types, args=(), kwargs=None):
        decomposition = self.table.get(func)
        if decomposition is None:
            return func(*args, **(kwargs or {}))
        with self:
            return decomposition(*args, **(kwargs or {}))


def _named_tensors(fn: Any) -> dict[int, tuple[str, Tensor]]:
    """id(array) -> (qualified name, tensor), for the parameters, then the buffers, of a
    Module ``fn``, as ``named_parameters()`` and ``named_buffers()`` list them; an array
    under two names keeps the first.

    Speed only: one walk of the module tree, reading each module's two stores;
    the two generators walk it twice, each through a generator per level.
    """
    if not isinstance(fn, tensor.nn.Module):
        return {}
    params: dict[int, tuple[str, Tensor]] = {}
    buffers: dict[int, tuple[str, Tensor]] = {}
    for prefix, module in fn.named_modules():
        dot = prefix + "." if prefix else ""
        for found, store in ((params, module._parameters), (buffers, module._buffers)):
            for name, value in store.items():
                if value is not None:
                    found.setdefault(id(value._array), (dot + name, value))
    for key, named in buffers.items():
        params.setdefault(key, named)
    return params


# --8<-- [start:make_fx]
def make_fx(fn: Callable[..., Any], decomposition_table: dict | None = None,
            tracing_mode: str = "real") -> Callable[..., GraphModule]:
    """``make_fx(fn)(*args)``: a GraphModule of the primitives ``fn(*args)`` calls.

    ``tracing_mode="real"`` runs ``fn`` on the inputs; ``"fake"`` runs it on
    fake twins under a `tensor.fake.FakeTensorMode`, computing shapes only
    and allocating no activation. Either way the GraphModule computes what
    ``fn`` computes, for inputs that take the same Python path.

    - Another ``tracing_mode`` raises ValueError("make_fx: tracing_mode must
      be 'real' or 'fake', got {tracing_mode!r}") at once.
    - ``decomposition_table`` (None is empty) is split: entries keyed by a
      primitive (a `tensor.ops.OpOverload`) go to the recorder; the others,
      public ops, to a `_Decomposer` mode, made only when there are some.
    - Each call of the returned function traces afresh: a new Graph and a
      `_Recorder` of it, told the qualified name of each parameter and
      buffer of a Module ``fn`` by its array's identity (`_named_tensors`;
      a tensor held under two names keeps the first). Under ``"fake"``, a
      new `FakeTensorMode`, and each Tensor argument becomes its fake twin
      (``from_tensor``); other arguments stay as they are.
    - One placeholder per argument, ``arg0_1``, ``arg1_1``, ..., a Tensor
      bound to its placeholder (`_Recorder.bind`). Then ``fn`` runs on them
      with the modes entered by `_Modes`: the fake mode at the bottom, the
      recorder, the decomposer on top.
    - The output node's argument is the result with each Tensor replaced by
      its node (`_output_arg`); then the dead code is eliminated.
    - The result is a `_LazyGraphModule` of the graph, its root holding the
      recorder's constants and the named tensors some ``get_attr`` reads,
      named after ``fn``'s class for a Module, else ``fn.__name__``, else
      ``"GraphModule"``.
    """
    if tracing_mode not in ("real", "fake"):
        raise ValueError(f"make_fx: tracing_mode must be 'real' or 'fake', got {tracing_mode!r}")
    table = dict(decomposition_table or {})

    def traced(*args: Any) -> GraphModule:
        graph = Graph()
        primitive = {f: d for f, d in table.items() if isinstance(f, tensor.ops.OpOverload)}
        public = {f: d for f, d in table.items() if f not in primitive}
        recorder = _Recorder(graph, _named_tensors(fn), primitive)
        fake = FakeTensorMode() if tracing_mode == "fake" else None
        inputs = [fake.from_tensor(a) if fake and isinstance(a, Tensor) else a for a in args]
        for i, value in enumerate(inputs):
            node = graph.placeholder(f"arg{i}_1")
            if isinstance(value, Tensor):
                recorder.bind(value, node)
        with _Modes(fake, recorder, _Decomposer(public) if public else None):
            result = fn(*inputs)
        graph.output(_output_arg(result, recorder))
        graph.eliminate_dead_code()  # what a branch's test computed, as torch's make_fx does
        name = type(fn).__name__ if isinstance(fn, tensor.nn.Module) else \
            getattr(fn, "__name__", "GraphModule")
        return _LazyGraphModule(recorder.attrs, graph, name)  # installs what get_attr nodes read

    return traced
# --8<-- [end:make_fx]


def _output_arg(result: Any, recorder: _Recorder) -> Any:
    return recorder.as_arg(result, "output")


class _Modes:
    """Enter the fake mode (bottom), the recorder, then the decomposer; leave in reverse."""

    def __init__(self, *modes: Any) -> None:
        self.modes = [m for m in modes if m is not None]

    def __enter__(self) -> None:
        for m in self.modes:
            m.__enter__()

    def __exit__(self, *exc_info: Any) -> None:
        for m in reversed(self.modes):
            m.__exit__(*exc_info)


