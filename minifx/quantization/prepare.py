"""Pass 2 of prepare_fx: put an observer on every edge whose values will be quantized.

The nodes of the fused graph fall in three kinds:

- *quantized ops* (a Conv2d, Linear or their fused ReLU forms with a
  quantized twin; an ``add`` of two tensors, with the ReLU that may follow
  it): their output gets an observer of its own, and every input that is not
  observed yet (the model's inputs, the output of a float op) gets one too;
- *shared ops* (max pool, adaptive average pool, ReLU, flatten, reshape):
  they run on quantized integers without changing scale or zero point, so
  the observer after them is the *same* observer module as before them
  (a second ``call_module`` node on the same target object);
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
from .qconfig import QConfig, QConfigMapping

__all__ = ["OBSERVER_PREFIX", "add_relu_of", "insert_observers", "modules_of", "node_kind"]

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


def add_relu_of(node: Node, modules: dict[str, Any], backend: QuantBackend) -> Node | None:
    """The ReLU node that is the only reader of this add node, if there is one."""
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
    """'quantized', 'add', 'shared' or 'float' (see the module docstring)."""
    module = _module(node, modules)
    if module is not None:
        if type(module) in backend.quantized_modules:
            return "quantized"
        if isinstance(module, backend.shared_modules):
            return "shared"
        return "float"
    if node.op == "call_function":
        if node.target in backend.add_functions and len(node.args) == 2 and all(
            isinstance(a, Node) for a in node.args
        ):
            return "add"
        if node.target in backend.shared_functions:
            return "shared"
    if node.op == "call_method" and node.target in backend.shared_methods:
        return "shared"
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
    observer_of: dict[Node, Node] = {}  # node -> the observer node that watches its output
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
        observer_of[node] = obs_node
        return obs_node

    skip: set[Node] = set()
    for node in list(graph.nodes):
        if node in skip or node.op in ("placeholder", "output", "get_attr"):
            continue
        kind = node_kind(node, modules, backend)
        qconfig = _qconfig(node, modules, mapping) if kind != "float" else None
        if qconfig is None:
            continue
        inputs = [a for a in node.args if isinstance(a, Node)]
        if kind == "shared":
            source = inputs[0] if inputs else None
            if source is None or source.op != "call_module" or source.target not in modules \
                    or not source.target.startswith(OBSERVER_PREFIX):
                continue  # its input stays float, so does it
            observe(node, modules[source.target])  # the same observer object
            continue
        for arg in inputs:  # inputs read through an observer already are quantized
            if not (arg.op == "call_module" and str(arg.target).startswith(OBSERVER_PREFIX)):
                observe(arg, backend.wrap_observer(qconfig.activation()))
        last = node
        if kind == "add":
            relu = add_relu_of(node, modules, backend)
            if relu is not None:
                skip.add(relu)
                last = relu
        else:
            weight_qconfigs[node.target] = qconfig
        observe(last, backend.wrap_observer(qconfig.activation()))
    gm.recompile()
    return weight_qconfigs
# --8<-- [end:insert_observers]
