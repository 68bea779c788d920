"""torch_to_tensor: trace a torch model, rewrite every node for ``tensor``, generate the code.

The pass is the traversal pattern of chapter 3 applied across libraries. It
walks the traced graph once, in order, and copies each node into a new graph
with what ``tensor`` needs in its place:

- ``placeholder`` and ``output``: copied as they are;
- ``call_module``: the torch leaf becomes its ``tensor.nn`` twin, weights copied
  (twins.py), stored under the same dotted name;
- ``call_function``: the target goes through the one table (table.py);
  Python's operators, ``getattr`` and ``math`` pass through;
- ``call_method``: the method name must be one that ``tensor.Tensor`` has;
- ``get_attr``: the torch tensor it names is copied as a ``tensor`` tensor;
- arguments: a torch dtype becomes tensor's.

Whatever has no twin is noted and the walk goes on, so that one
``ConversionError`` lists every problem. Finally ``GraphModule`` generates the
new model's code, which reads ``tensor.relu(x)`` where torch's read
``torch.relu(x)``.
"""

from __future__ import annotations

import builtins
import copy
import inspect
from collections.abc import Callable
from typing import Any

from .._framework import adapter, comes_from, framework_of_function
from ..graph import Graph
from ..graph_module import GraphModule
from ..interpreter import Interpreter
from ..magic_methods import dunder, inplace_methods, reflected_dunder
from ..node import Node, fetch_path, map_aggregate
from ..tracer import Tracer
from .bad_input import hook_problems, input_problems, weight_problems
from .errors import ConversionError, Unsupported, user_line
from .table import GAPS, ConversionTable, conversion_table, passes_through, qualified
from .twins import TwinError, make_twin
from .values import ValueConverter


# --8<-- [start:torch_to_tensor]
def torch_to_tensor(module: Any, example_inputs: Any = None) -> GraphModule:
    """A ``tensor`` GraphModule that computes what the torch ``module`` computes.

    ``module`` is a ``torch.nn.Module`` (or a function over torch tensors).
    ``example_inputs``, if given, are checked like the weights: tensor computes
    on the CPU in float32 and float64. Raises ``ConversionError`` listing every
    weight, hook and operation that has no ``tensor`` twin.

    Anything else than a module or a plain function is a TypeError:
    ``torch_to_tensor converts a torch.nn.Module or a function over torch
    tensors, not a <type>``. The model's name (its class's, or the function's)
    names the ConversionError. Before tracing, a module's weights
    (``weight_problems``) and hooks (``hook_problems``), and the example inputs
    (``input_problems``), are checked; any problem there is raised at once. Then
    a minifx ``Tracer`` that records stack traces (every node keeps the user's
    line) and proxies buffer reads traces the model; a ``GraphConverter`` of the
    tracer's root converts the graph, knowing which nodes hold tensors
    (``tensor_valued_nodes``) when example inputs are given. The attributes the
    trace stored on the user's module (``_tensor_constant0`` ...) are taken off
    it again, and only they: an attribute the model's own forward deleted while
    traced stays deleted, as after torch.fx.symbolic_trace. Problems of the walk
    raise one ConversionError; otherwise the answer is
    ``GraphModule(converter.attributes, new graph, name)`` in the root's training
    mode.
    """
    import torch

    if not isinstance(module, torch.nn.Module) and not inspect.isfunction(module):
        raise TypeError(
            "torch_to_tensor converts a torch.nn.Module or a function over torch tensors, "
            f"not a {type(module).__name__}")
    table = conversion_table()
    name = type(module).__name__ if isinstance(module, torch.nn.Module) else module.__name__
    problems = []
    if isinstance(module, torch.nn.Module):
        problems += weight_problems(module, table) + hook_problems(module)
    if example_inputs is not None:
        problems += input_problems(example_inputs, table)
    if problems:  # refused before tracing: nothing in the graph would run on tensor
        raise ConversionError(name, problems)

    tracer = Tracer()
    tracer.record_stack_traces = True  # every node keeps the user's file and line
    tracer.proxy_buffer_attributes = True  # self.mask[:T] on a buffer records get_attr
    attributes_before = set(vars(module))
    graph = tracer.trace(module)
    converter = GraphConverter(tracer.root, table)
    if example_inputs is not None:  # then operators on tensors are checked too
        converter.tensor_nodes = tensor_valued_nodes(tracer.root, graph, example_inputs)
    new_graph = converter.convert(graph)
    if tracer.root is module:  # the trace stored constants on it (_tensor_constant0 ...)
        for attribute in set(vars(module)) - attributes_before:
            delattr(module, attribute)
    if converter.problems:
        raise ConversionError(name, converter.problems)
    converted = GraphModule(converter.attributes, new_graph, name)
    converted.training = tracer.root.training
    return converted
# --8<-- [end:torch_to_tensor]


class GraphConverter:
    """One walk over a traced torch graph, building its ``tensor`` twin."""

    def __init__(self, root: Any, table: ConversionTable | None = None) -> None:
        self.root = root  # the traced torch module: where targets are looked up
        self.table = table or conversion_table()
        self.values = ValueConverter(self.table)
        # The new model's contents by dotted name (twins and tensors): the root
        # of the GraphModule that the pass returns.
        self.attributes: dict[str, Any] = {}
        self.problems: list[Unsupported] = []
        # Names of the nodes whose values are tensors, when example inputs told us
        # (an operator on two ints, ``B // 4``, is Python's; on a tensor, tensor's).
        self.tensor_nodes: set[str] = set()

    # --8<-- [start:convert]
    def convert(self, graph: Graph) -> Graph:
        """The new graph: every node of ``graph`` in order, rewritten for tensor.

        Each node's rule (by op: ``same_target`` for placeholders and the output,
        else the method named after the op) gives the new target and notes any
        problem. Its args, then the keywords the twin keeps (``keywords``), are
        mapped leaf by leaf through ``argument`` (a node becomes its copy, made
        before it). The copy keeps op, name and (through ``type_of``) the type
        annotation, and a shallow copy of the meta (the stack trace goes along).
        """
        new_graph = Graph()
        env: dict[Node, Node] = {}  # old node -> its copy
        rules: dict[str, Callable[[Node], Any]] = {
            "placeholder": self.same_target,
            "output": self.same_target,
            "get_attr": self.get_attr,
            "call_module": self.call_module,
            "call_function": self.call_function,
            "call_method": self.call_method,
        }
        for node in graph.nodes:
            target = rules[node.op](node)
            args = map_aggregate(node.args, lambda a, n=node: self.argument(n, a, env))
            kwargs = map_aggregate(self.keywords(node, target),
                                   lambda a, n=node: self.argument(n, a, env))
            new = new_graph.create_node(
                node.op, target, args, kwargs, node.name, self.type_of(node.type))
            new.meta = copy.copy(node.meta)  # the stack trace travels with the node
            env[node] = new
        return new_graph
    # --8<-- [end:convert]

    # --8<-- [start:rules]
    def same_target(self, node: Node) -> Any:
        return node.target

    def get_attr(self, node: Node) -> str:
        """A parameter, buffer or constant of the torch model, copied as a tensor one.

        The value (``fetch_path`` from the root) must be a torch tensor, else a
        problem ``get_attr <target>``, ``it names a <type>, not a tensor``. A
        tensor is converted (``self.values.tensor``) into ``self.attributes`` under
        the target, once. The target stays.
        """
        value = fetch_path(self.root, node.target)
        if not self._is_torch_tensor(value):
            self.problem(node, f"get_attr {node.target}",
                         f"it names a {type(value).__name__}, not a tensor")
        elif node.target not in self.attributes:
            self.attributes[node.target] = self.values.tensor(value)
        return node.target

    def call_module(self, node: Node) -> str:
        """A torch ``nn`` leaf: its ``tensor.nn`` twin, made once per submodule.

        The twin (``make_twin`` of the root's submodule) is stored in
        ``self.attributes`` under the node's target, once: a submodule called
        twice keeps one twin. A ``TwinError`` becomes a problem ``call_module
        <target> (<torch class name>)`` with the error's text as the reason and
        ``self.hint`` of the class name. The target stays.
        """
        if node.target not in self.attributes:
            module = self.root.get_submodule(node.target)
            try:
                self.attributes[node.target] = make_twin(module, self.table, self.values)
            except TwinError as exc:
                kind = type(module).__name__
                self.problem(node, f"call_module {node.target} ({kind})", str(exc),
                             self.hint(kind))
        return node.target

    def call_function(self, node: Node) -> Any:
        """A torch function: its twin from the table. Python's own functions pass.

        A target with a twin in ``self.table.functions`` is replaced by it.
        ``builtins.getattr`` on a Node (``x.shape``) needs an attribute tensor has
        (``self.table.attributes``), else a problem ``attribute .<name>``,
        ``tensor.Tensor has no attribute '<name>'``, hinted by the name; it stays.
        An operator of Python's ``_operator`` module goes through
        ``check_operator`` and stays. What passes through (``passes_through``) or
        does not come from torch (``_uses_torch`` false) stays. Anything else is a
        problem ``call_function <torch name>`` (``_torch_name``), ``tensor has no
        twin of it``, hinted by the last part of the name; the target stays.
        """
        target = node.target
        twin = self.table.functions.get(target)
        if twin is not None:
            return twin
        if target is builtins.getattr:  # x.shape, x.dtype: tensor must have the attribute
            attribute = node.args[1]
            if isinstance(node.args[0], Node) and attribute not in self.table.attributes:
                self.problem(node, f"attribute .{attribute}",
                             f"tensor.Tensor has no attribute {attribute!r}", self.hint(attribute))
            return target
        if getattr(target, "__module__", None) == "_operator":
            self.check_operator(node)
            return target
        if passes_through(target) or not _uses_torch(target):
            return target
        name = _torch_name(target)
        self.problem(node, f"call_function {name}", "tensor has no twin of it",
                     self.hint(name.rpartition(".")[2]))
        return target

    def call_method(self, node: Node) -> str:
        """A Tensor method: kept by name, if ``tensor.Tensor`` has it."""
        if node.target not in self.table.methods:
            self.problem(node, f"call_method {node.target}",
                         f"tensor.Tensor has no method {node.target!r}", self.hint(node.target))
        return node.target
    # --8<-- [end:rules]

    # --8<-- [start:helpers]
    def check_operator(self, node: Node) -> None:
        """A Python operator applied to a tensor needs tensor.Tensor's special method.

        Only operands known to hold tensors count (their names in
        ``self.tensor_nodes``); with none, the operator is Python's business. The
        method needed is the operator's dunder (``add`` needs ``__add__``); an
        in-place one (``iadd``) may fall back on its plain dunder (``__add__``);
        when the first of two operands is not a tensor, only the reflected dunder
        counts (``2 ** x`` needs ``__rpow__``). When ``tensor.Tensor`` has none of
        them, the problem is ``operator <name> (<first needed>)``, ``tensor.Tensor
        has no <first needed>``, hinted by the name without underscores.
        """
        import tensor

        name = node.target.__name__  # "add", "floordiv", "iadd", "pos" ...
        operands = [isinstance(a, Node) and a.name in self.tensor_nodes for a in node.args]
        if not any(operands):
            return  # on Python values (or nothing known about them): Python's business
        needed = [dunder(name)]
        if name in inplace_methods:  # x += y falls back to x + y
            needed.append(dunder(name[1:]))
        if len(operands) == 2 and not operands[0]:  # 2 ** x calls x.__rpow__
            needed = [reflected_dunder(name)]
        if not any(hasattr(tensor.Tensor, method) for method in needed):
            self.problem(node, f"operator {name} ({needed[0]})",
                         f"tensor.Tensor has no {needed[0]}", self.hint(name.strip("_")))

    def argument(self, node: Node, value: Any, env: dict[Node, Node]) -> Any:
        """An argument of ``node`` in the new graph: nodes mapped, torch constants converted.

        A node becomes its copy (``env``). Any other value goes through
        ``self.values.constant`` (a torch dtype becomes tensor's); a TypeError there
        is a problem ``an argument of <node name>`` with the error's text, hinted by
        the value's type name, and the value stays as it was.
        """
        if isinstance(value, Node):
            return env[value]
        try:
            return self.values.constant(value)
        except TypeError as exc:
            self.problem(node, f"an argument of {node.name}", str(exc), self.hint(
                type(value).__name__))
            return value

    def keywords(self, node: Node, target: Any) -> dict[str, Any]:
        """The keyword arguments for the twin: a keyword that tensor's function
        lacks is dropped when it holds torch's default (``return_indices=False``),
        and noted as a problem otherwise.

        The twin is the method of ``tensor.Tensor`` of that name for a method
        tensor has, or the new target of a ``call_function`` whose target was
        replaced (its torch function is the old target); any other node keeps its
        kwargs as they are, and so does a twin that takes ``**kwargs`` or has no
        signature (``_keyword_names`` is None). Each keyword the twin accepts is
        kept, in order. Another one is dropped when the torch function's default
        for it (``_defaults``; a method has none) equals the value; else it is a
        problem ``<op> <name>``, ``tensor's <name> has no argument <key>=``, hinted
        by the key. ``<name>`` is the twin's qualified name, or ``Tensor.<method>``.
        """
        import tensor

        if node.op == "call_method" and node.target in self.table.methods:
            twin, torch_fn = getattr(tensor.Tensor, target), None
        elif node.op == "call_function" and target is not node.target:
            twin, torch_fn = target, node.target
        else:
            return node.kwargs
        accepted = _keyword_names(twin)
        if accepted is None:  # **kwargs, or no signature to check against
            return node.kwargs
        defaults = _defaults(torch_fn) if torch_fn is not None else {}
        kept = {}
        for key, value in node.kwargs.items():
            if key in accepted:
                kept[key] = value
            elif key not in defaults or defaults[key] != value:
                name = qualified(twin) if torch_fn is not None else f"Tensor.{target}"
                self.problem(node, f"{node.op} {name}", f"tensor's {name} has no argument {key}=",
                             self.hint(key))
        return kept
    # --8<-- [end:helpers]

    def type_of(self, annotation: Any) -> Any:
        """A placeholder's annotation: ``torch.Tensor`` becomes ``tensor.Tensor``."""
        import torch

        import tensor

        if annotation is torch.Tensor:
            return tensor.Tensor
        return None if _uses_torch(annotation) else annotation

    def hint(self, name: str) -> str:
        """Advice for a missing ``name``: the GAPS entry, else tensor's close names."""
        if name in GAPS:
            return GAPS[name]
        nearby = self.table.nearby(name)
        return f"tensor has {', '.join(nearby)}" if nearby else ""

    def problem(self, node: Node, what: str, reason: str, hint: str = "") -> None:
        filename, lineno, code = user_line(node.stack_trace)
        self.problems.append(Unsupported(what, reason, hint, filename, lineno, code))

    @staticmethod
    def _is_torch_tensor(value: Any) -> bool:
        return adapter("torch").is_tensor(value)


def _torch_name(target: Any) -> str:
    """How torch.fx spells a torch callable (``torch.nn.functional.silu``)."""
    return adapter("torch").qualified_name(target) or getattr(
        target, "__qualname__", repr(target))


def _uses_torch(value: Any) -> bool:
    """Whether a callable or annotation comes from torch, or is a function that uses torch."""
    if value is None:
        return False
    if _torch_name_or_none(value) or comes_from(value, "torch"):
        return True
    return inspect.isfunction(value) and framework_of_function(value) is adapter("torch")


def _torch_name_or_none(value: Any) -> str | None:
    try:
        return adapter("torch").qualified_name(value)
    except Exception:  # an object whose attributes misbehave is not torch's
        return None


def _keyword_names(fn: Callable[..., Any]) -> set[str] | None:
    """The keyword names ``fn`` accepts, or None when it takes any (or has no signature)."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return None
    return {name for name, p in parameters.items() if p.kind is not p.POSITIONAL_ONLY}


def _defaults(torch_fn: Any) -> dict[str, Any]:
    """torch's default for each keyword of ``torch_fn``, where Python can see it.

    ``F.max_pool2d`` is a dispatcher on ``return_indices`` with a bare
    ``(*args, **kwargs)`` signature: its defaults are those of the branch
    taken when the flag is off.
    """
    from torch._jit_internal import boolean_dispatched

    dispatch = boolean_dispatched.get(torch_fn)
    fn = dispatch["if_false"] if dispatch else torch_fn
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    return {name: p.default for name, p in parameters.items() if p.default is not p.empty}


# --8<-- [start:tensor_valued_nodes]
def tensor_valued_nodes(root: Any, graph: Graph, example_inputs: Any) -> set[str]:
    """Run the torch graph on copies of the example inputs and return the names of
    the nodes whose values are torch tensors.

    ``example_inputs`` is one input or a tuple or list of them. An Interpreter
    runs a deep copy of ``GraphModule(root, graph)`` (running must not move the
    model's BatchNorm statistics) on deep copies of the inputs, without
    gradients, and notes the name of every node whose value is a
    ``torch.Tensor``.
    """
    import torch

    inputs = example_inputs if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    found: set[str] = set()

    class Recorder(Interpreter):
        def run_node(self, node: Node) -> Any:
            value = super().run_node(node)
            if isinstance(value, torch.Tensor):
                found.add(node.name)
            return value

    module = copy.deepcopy(GraphModule(root, graph))  # running must not move BN statistics
    with torch.no_grad():
        Recorder(module).run(*copy.deepcopy(tuple(inputs)))
    return found
# --8<-- [end:tensor_valued_nodes]
