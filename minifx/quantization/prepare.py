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


# --8<-- [start:node_kind]
def node_kind(node: Node, modules: dict[str, Any], backend: QuantBackend) -> str:
    """'quantized' (a layer with a quantized twin), one of op_table's kinds ('binary',
    'shares', 'cat', 'own', 'fixed', 'info'), or 'float'.

    ``backend.ops[kind]`` lists each kind's ``modules``, ``functions`` and
    ``methods``. A ``call_module`` node whose target is in ``modules`` is judged by
    its module's exact type: ``own`` first, then ``quantized`` (a key of
    ``backend.quantized_modules``), then ``shares``, then ``fixed``; any other
    module is ``float``. A ``call_function`` node: ``binary`` for a binary
    function with exactly two arguments that are both Nodes (``x + 1`` is
    ``float``); else ``cat``, ``shares`` or ``fixed``, in that order, when the
    kind's functions hold the target. A ``call_method`` node: ``shares``,
    ``fixed`` or ``info``, in that order, by the kind's methods. Anything else is
    ``float``.
    """
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
# --8<-- [end:node_kind]


def _qconfig(node: Node, modules: dict[str, Any], mapping: QConfigMapping) -> QConfig | None:
    """A module call is looked up by its qualified name and type, a function by itself."""
    module = _module(node, modules)
    if module is not None:
        return mapping.qconfig_for(node.target, type(module))
    return mapping.qconfig_for(None, node.target)


# --8<-- [start:observers]
class _Observers:
    """The observers of one GraphModule being prepared: adds each module and its node."""

    def __init__(self, gm: GraphModule, backend: QuantBackend) -> None:
        self.gm = gm
        self.backend = backend
        self.modules = modules_of(gm)
        self.count = 0  # observers made so far: the next one's number

    @staticmethod
    def observed(node: Any) -> bool:
        """Whether ``node`` is an observer's node (its readers read quantized values)."""
        return isinstance(node, Node) and node.op == "call_module" \
            and str(node.target).startswith(OBSERVER_PREFIX)
    # --8<-- [end:observers]

    # --8<-- [start:observe]
    def observe(self, node: Node, observer: Any) -> Node:
        """Watch ``node`` with ``observer``; returns the observer's node.

        The observer becomes the submodule ``activation_post_process_<count>``
        (numbered from 0 in the order they are made, ``self.count`` counts them)
        of the GraphModule and of ``self.modules``; its ``call_module`` node,
        reading ``node``, goes right after ``node``, and every other reader of
        ``node`` reads the observer's node instead. The same observer object may
        be given several times: each call makes a new name and a new node for it.
        """
        name = f"{OBSERVER_PREFIX}{self.count}"
        self.count += 1
        self.gm.add_submodule(name, observer)
        self.modules[name] = observer
        with self.gm.graph.inserting_after(node):
            observer_node = self.gm.graph.call_module(name, (node,))
        node.replace_all_uses_with(observer_node, lambda user: user is not observer_node)
        return observer_node

    def observe_inputs(self, node: Node, kind: str, qconfig: QConfig) -> None:
        """Observe every tensor input of ``node`` that is not observed yet.

        The inputs are the Node arguments of ``node`` (for ``cat``, the Nodes of
        the list that is its first argument), in order; an input that is already
        an observer's node is quantized and left alone; any other gets a new
        observer, ``self.backend.wrap_observer(qconfig.activation())``. For
        ``cat``, every input observer then becomes the first input's observer
        object (each other input's observer name is re-registered on the
        GraphModule, and in ``self.modules``, to that object), and the output is
        watched by that same object too, as torch shares one observer across a
        ``cat``.
        """
        inputs = list(node.args[0]) if kind == "cat" else node.args
        for arg in [a for a in inputs if isinstance(a, Node)]:
            if not self.observed(arg):
                self.observe(arg, self.backend.wrap_observer(qconfig.activation()))
        if kind == "cat":
            shared = self.modules[node.args[0][0].target]
            for arg in node.args[0][1:]:
                self.gm.add_submodule(arg.target, shared)
                self.modules[arg.target] = shared
            self.observe(node, shared)
    # --8<-- [end:observe]


# --8<-- [start:insert_observers]
def insert_observers(gm: GraphModule, mapping: QConfigMapping, backend: QuantBackend) -> dict:
    """Insert the observers into ``gm`` (in place). Returns {layer target: QConfig} for the
    layers that convert_fx will quantize (it needs their weight observers).

    The nodes are visited in graph order (a copy of the list: observers are
    inserted during the walk); placeholders, get_attr and output nodes are
    skipped, and so is a ReLU that an earlier ``add``/``mul`` took in. Each
    other node's kind is ``node_kind``; a ``float`` or ``info`` node, or one
    whose qconfig (``_qconfig``) is None, stays as it is. Then by kind:

    - ``shares``: when its first argument is an observer's node, the node is
      watched by that same observer object (a new node for it); otherwise it
      stays float. Nothing else is done for it;
    - every other kind first observes its inputs (``observe_inputs``); ``cat``
      is then done;
    - ``binary``: when a ReLU reads it alone (``add_relu_of``), the ReLU is the
      node to watch, and it is skipped later; ``quantized``: its target maps to
      its qconfig in the answer;
    - the node to watch gets an output observer: for ``fixed``, a
      ``FixedQParamsObserver`` with the scale and zero point of its range
      (``FIXED_QPARAMS[_fixed_range(...)]``); otherwise
      ``qconfig.activation()``; either wrapped by ``backend.wrap_observer``.

    ``gm`` is recompiled at the end.
    """
    observers = _Observers(gm, backend)
    modules = observers.modules
    weight_qconfigs: dict[str, QConfig] = {}
    skip: set[Node] = set()
    for node in list(gm.graph.nodes):
        if node in skip or node.op in ("placeholder", "output", "get_attr"):
            continue
        kind = node_kind(node, modules, backend)
        qconfig = _qconfig(node, modules, mapping) if kind not in ("float", "info") else None
        if qconfig is None:
            continue
        if kind == "shares":  # the same observer object watches the output
            source = node.args[0] if node.args else None
            if observers.observed(source):
                observers.observe(node, modules[source.target])
            continue  # else its input stays float, so does it
        observers.observe_inputs(node, kind, qconfig)
        if kind == "cat":
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
        observers.observe(last, backend.wrap_observer(observer))
    gm.recompile()
    return weight_qconfigs


def _fixed_range(node: Node, modules: dict[str, Any], backend: QuantBackend) -> str:
    module = _module(node, modules)
    return backend.fixed_range[type(module) if module is not None else node.target]
# --8<-- [end:insert_observers]
