"""Pass 2 of prepare_fx: put an observer on every edge whose values will be quantized.

Each node of the fused graph is of one kind (``op_table.py`` lists the ops):

- *quantized* layers (Conv2d, Linear, their fused ReLU forms), *binary* ops
  (an ``add`` or ``mul`` of two tensors, with the ReLU that may follow) and
  the ops with an observer of their *own* (Dropout, Hardswish): their output
  gets an observer of its own, and every input that is not observed yet (the
  model's inputs, the output of a float op) gets one too;
- *fixed* ops (hardsigmoid, sigmoid, tanh): the same, but the output's
  observer has fixed qparams (their values lie in [0, 1] or [-1, 1]);
- ops that *share* their input's observer (pools, ReLU, ReLU6, flatten,
  reshape, ...): they run on quantized integers without changing scale or
  zero point, so the observer after them is the *same* observer module as
  before them (a second ``call_module`` node on the same target object);
- ``cat``: its inputs are observed, then every input observer and the output
  observer are made the first input's observer object, as torch does;
- everything else stays in float.

Observers are ``call_module`` nodes named ``activation_post_process_N`` in
the order they are made, right after the node they watch; every reader of
that node reads the observer instead (an observer is the identity). Walking
the nodes in order gives torch's numbering on the models of chapter 10.
"""

from __future__ import annotations

from typing import Any

from ..graph_module import GraphModule
from ..node import Node
from .backend import QuantBackend
from .observer import FixedQParamsObserver
from .op_table import FIXED_QPARAMS
from .qconfig import QConfig, QConfigMapping

__all__ = [
    "OBSERVER_PREFIX", "add_relu_of", "binary_name", "insert_observers", "modules_of",
    "node_kind",
]

OBSERVER_PREFIX = "activation_post_process_"


def modules_of(gm: GraphModule) -> dict[str, Any]:
    """Every submodule by qualified name, including each name of a module that is shared
    (``named_modules`` lists a shared ReLU once; every call_module node needs its own name)."""
    modules = dict(gm.named_modules())
    for node in gm.graph.nodes:
        if node.op == "call_module" and node.target not in modules:
            modules[node.target] = gm.get_submodule(node.target)
    return modules


def _module(node: Node, modules: dict[str, Any]) -> Any:
    if node.op == "call_module" and node.target in modules:
        return modules[node.target]
    return None


def binary_name(node: Node) -> str:
    """'add' or 'mul': which quantized op a "binary" node becomes."""
    return getattr(node.target, "__name__", "").strip("_")


def add_relu_of(node: Node, modules: dict[str, Any], backend: QuantBackend) -> Node | None:
    """The ReLU node that is the only reader of this add (or mul) node, if there is one."""
    if len(node.users) != 1:
        return None
    (user,) = node.users
    if user.args[:1] != (node,):
        return None
    if type(_module(user, modules)) is backend.relu_module:
        return user
    if user.op == "call_function" and user.target in backend.relu_functions:
        return user
    if user.op == "call_method" and user.target == "relu":
        return user
    return None


def node_kind(node: Node, modules: dict[str, Any], backend: QuantBackend) -> str:
    """'quantized' (a layer with a quantized twin), one of op_table's kinds ('binary',
    'shares', 'cat', 'own', 'fixed', 'info'), or 'float'."""
    ops = backend.ops
    module = _module(node, modules)
    if module is not None:
        kind = type(module)
        if kind in ops["own"].modules:
            return "own"
        if kind in backend.quantized_modules:
            return "quantized"
        for name in ("shares", "fixed"):
            if kind in ops[name].modules:
                return name
        return "float"
    if node.op == "call_function":
        if node.target in ops["binary"].functions:
            two_tensors = len(node.args) == 2 and all(isinstance(a, Node) for a in node.args)
            return "binary" if two_tensors else "float"
        for name in ("cat", "shares", "fixed"):
            if node.target in ops[name].functions:
                return name
    if node.op == "call_method":
        for name in ("shares", "fixed", "info"):
            if node.target in ops[name].methods:
                return name
    return "float"


def _qconfig(node: Node, modules: dict[str, Any], mapping: QConfigMapping) -> QConfig | None:
    """A module call is looked up by its qualified name and type, a function by itself."""
    module = _module(node, modules)
    if module is not None:
        return mapping.qconfig_for(node.target, type(module))
    return mapping.qconfig_for(None, node.target)


# --8<-- [start:insert_observers]
def insert_observers(gm: GraphModule, mapping: QConfigMapping, backend: QuantBackend) -> dict:
    """Insert the observers into ``gm`` (in place). Returns {layer target: QConfig} for the
    layers that convert_fx will quantize (it needs their weight observers)."""
    graph = gm.graph
    modules = modules_of(gm)
    weight_qconfigs: dict[str, QConfig] = {}
    counter = 0

    def observe(node: Node, observer: Any) -> Node:
        nonlocal counter
        name = f"{OBSERVER_PREFIX}{counter}"
        counter += 1
        gm.add_submodule(name, observer)
        modules[name] = observer
        with graph.inserting_after(node):
            obs_node = graph.call_module(name, (node,))
        node.replace_all_uses_with(obs_node, lambda user: user is not obs_node)
        return obs_node

    def observed(node: Any) -> bool:
        return isinstance(node, Node) and node.op == "call_module" \
            and str(node.target).startswith(OBSERVER_PREFIX)

    skip: set[Node] = set()
    for node in list(graph.nodes):
        if node in skip or node.op in ("placeholder", "output", "get_attr"):
            continue
        kind = node_kind(node, modules, backend)
        qconfig = _qconfig(node, modules, mapping) if kind not in ("float", "info") else None
        if qconfig is None:
            continue
        if kind == "shares":  # the same observer object watches the output
            source = node.args[0] if node.args else None
            if observed(source):
                observe(node, modules[source.target])
            continue  # else its input stays float, so does it
        inputs = list(node.args[0]) if kind == "cat" else node.args
        inputs = [a for a in inputs if isinstance(a, Node)]
        for arg in inputs:  # inputs read through an observer already are quantized
            if not observed(arg):
                observe(arg, backend.wrap_observer(qconfig.activation()))
        if kind == "cat":  # every input, and the output, share the first input's observer
            shared = modules[node.args[0][0].target]
            for arg in node.args[0][1:]:
                gm.add_submodule(arg.target, shared)
                modules[arg.target] = shared
            observe(node, shared)
            continue
        last = node
        if kind == "binary":
            relu = add_relu_of(node, modules, backend)
            if relu is not None:
                skip.add(relu)
                last = relu
        elif kind == "quantized":
            weight_qconfigs[node.target] = qconfig
        if kind == "fixed":
            scale, zero_point = FIXED_QPARAMS[_fixed_range(node, modules, backend)]
            observer = FixedQParamsObserver(scale=scale, zero_point=zero_point)
        else:
            observer = qconfig.activation()
        observe(last, backend.wrap_observer(observer))
    gm.recompile()
    return weight_qconfigs


def _fixed_range(node: Node, modules: dict[str, Any], backend: QuantBackend) -> str:
    module = _module(node, modules)
    return backend.fixed_range[type(module) if module is not None else node.target]
# --8<-- [end:insert_observers]
