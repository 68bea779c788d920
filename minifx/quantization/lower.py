"""convert_fx's second pass: ``dequantize -> float op -> quantize`` becomes one int8 op.

In the reference graph every quantized value is dequantized before it is
used and quantized again after. Four patterns take the float op out of its
sandwich (``op_table.py`` names the ops of each kind):

- a layer with a quantized twin (Conv2d, Linear, their fused ReLU forms),
  read through a ``dequantize`` and read only by a ``quantize_per_tensor``:
  the layer module is swapped for its quantized twin, built from the float
  weights (quantized per channel by the QConfig's weight observer) and the
  output's scale and zero point; it reads the quantized input directly. A
  module of the "own" kind (Dropout, Hardswish) is swapped the same way,
  with no weight;
- an ``add`` or ``mul`` of two dequantized values (with the ReLU after it),
  read by a ``quantize_per_tensor``: one call of the quantized op
  (add_relu, ...) that takes the output's scale and zero point as arguments;
- an op that shares its input's observer (max pool, flatten, ReLU6, ...),
  a "fixed" op (hardsigmoid, whose int8 kernel writes the fixed qparams) or
  a ``cat`` (whose inputs share one observer): it now runs on the quantized
  integers, and the dequantize and quantize around it go;
- ``x.size()`` reads the quantized tensor itself (its shape is the same).

What is left is correct as it stands: an op with no int8 kernel keeps its
``dequantize`` before and its ``quantize_per_tensor`` after, in float.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..experimental.optimization import replace_node_module
from ..graph_module import GraphModule
from ..node import Node
from .backend import QuantBackend
from .prepare import add_relu_of, binary_name, modules_of, node_kind

__all__ = ["lower_to_quantized"]


def _is_dequantize(node: Any) -> bool:
    return isinstance(node, Node) and node.op == "call_method" and node.target == "dequantize"


def _only_quantize_reader(node: Node, backend: QuantBackend) -> Node | None:
    if len(node.users) != 1:
        return None
    (user,) = node.users
    if user.op == "call_function" and user.target is backend.quantize_per_tensor:
        return user
    return None


def _attr_value(gm: GraphModule, node: Node) -> Any:
    return getattr(gm, node.target)


def _drop(gm: GraphModule, *nodes: Node) -> None:
    """Erase the nodes that nothing reads any more (get_attr attributes go with them)."""
    for node in nodes:
        if node.graph is None or node.users:
            continue
        inputs = list(node.all_input_nodes)
        gm.graph.erase_node(node)
        if node.op == "get_attr":
            delattr(gm, node.target)
        _drop(gm, *[n for n in inputs if n.op in ("get_attr", "call_method")])


def _bypass(gm: GraphModule, node: Node, q: Node, backend: QuantBackend) -> None:
    """``node`` reads its dequantized inputs' quantized sources and replaces ``q``."""
    dqs = list(node.args[0]) if isinstance(node.args[0], (list, tuple)) else [node.args[0]]
    for dq in dqs:
        node.replace_input_with(dq, dq.args[0])
    q.replace_all_uses_with(node)
    scale, zp = q.args[1], q.args[2]
    gm.graph.erase_node(q)
    _drop(gm, *dqs, scale, zp)


def _quantized_weight(module: Any, qconfig: Any, backend: QuantBackend) -> Any:
    layer = module[0] if type(module) in (backend.conv_relu, backend.linear_relu) else module
    observer = qconfig.weight()
    observer(layer.weight)
    scales, zero_points = observer.calculate_qparams()
    return backend.quantize_weight(layer.weight, np.asarray(scales), np.asarray(zero_points))


# --8<-- [start:lower]
def lower_to_quantized(gm: GraphModule, weight_qconfigs: dict, backend: QuantBackend) -> None:
    """Rewrite the reference graph of ``gm`` in place into int8 modules and ops.

    The nodes are visited in order (a copy of the list); one already erased
    (``node.graph`` is None), placeholders, get_attr and output nodes are
    skipped. Each other node's kind is ``node_kind``, except that a
    ``call_module`` node whose target an earlier node lowered (in
    ``float_layers``) is ``quantized`` again. Then:

    - ``quantized`` or ``own``, reading a ``dequantize`` first: ``_lower_layer``;
    - ``binary`` whose arguments are all ``dequantize`` nodes: ``_lower_binary``;
    - ``shares`` or ``fixed`` reading a ``dequantize`` first, ``cat`` whose list
      holds only ``dequantize`` nodes: when a ``quantize_per_tensor`` is its only
      reader (``_only_quantize_reader``), ``_bypass`` both;
    - ``info`` (``x.size()``) reading a ``dequantize``: it reads the quantized
      value instead, and the ``dequantize`` goes if nothing else reads it
      (``_drop``).

    Anything else stays as it is. At the end, submodules nothing calls any more
    are deleted and ``gm`` is recompiled.
    """
    modules = modules_of(gm)
    float_layers: dict[str, Any] = {}  # target -> float module, for layers called twice
    for node in list(gm.graph.nodes):
        if node.graph is None or node.op in ("placeholder", "output", "get_attr"):
            continue
        kind = node_kind(node, modules, backend)
        if node.op == "call_module" and node.target in float_layers:
            kind = "quantized"  # called again: rebuilt below with this call's qparams,
            # so that every call uses the last call's, as torch's convert_fx does
        if kind in ("quantized", "own") and _is_dequantize(node.args[0]):
            _lower_layer(gm, node, kind, modules, float_layers, weight_qconfigs, backend)
        elif kind == "binary" and all(_is_dequantize(a) for a in node.args):
            _lower_binary(gm, node, modules, backend)
        elif kind in ("shares", "fixed") and node.args and _is_dequantize(node.args[0]) or \
                kind == "cat" and all(_is_dequantize(a) for a in node.args[0]):
            q = _only_quantize_reader(node, backend)
            if q is not None:
                _bypass(gm, node, q, backend)
        elif kind == "info" and _is_dequantize(node.args[0]):  # x.size() reads x as it is
            dq = node.args[0]
            node.replace_input_with(dq, dq.args[0])
            _drop(gm, dq)
    gm.delete_all_unused_submodules()
    gm.recompile()


def _lower_layer(gm: GraphModule, node: Node, kind: str, modules: dict, float_layers: dict,
                 weight_qconfigs: dict, backend: QuantBackend) -> None:
    """Swap a layer (``quantized``) or an op with an observer of its own (``own``) for
    its int8 twin, when a ``quantize_per_tensor`` is the only reader of its output.

    Nothing happens without such a reader, nor for a ``quantized`` layer whose
    target has no entry in ``weight_qconfigs``. The float module is the one
    recorded in ``float_layers`` for this target (a layer called twice was swapped
    already), else ``modules[node.target]``, recorded now. Its twin's type is
    ``backend.quantized_modules[type]``; a ``quantized`` layer's weight is
    ``_quantized_weight`` with its qconfig (``own``: None). The twin is
    ``backend.build_quantized(type, float module, weight, scale, zero point)``,
    with the scale and zero point the quantize node reads (the values of its
    ``get_attr`` arguments 1 and 2); it replaces the node's module
    (``replace_node_module``), and ``_bypass`` takes the dequantize and the
    quantize out of the way.
    """
    q = _only_quantize_reader(node, backend)
    if q is None or (kind == "quantized" and node.target not in weight_qconfigs):
        return
    module = float_layers.setdefault(node.target, modules[node.target])
    quantized_type = backend.quantized_modules[type(module)]
    weight = None
    if kind == "quantized":
        weight = _quantized_weight(module, weight_qconfigs[node.target], backend)
    new = backend.build_quantized(
        quantized_type, module, weight, _attr_value(gm, q.args[1]), _attr_value(gm, q.args[2]),
    )
    replace_node_module(node, modules, new)
    _bypass(gm, node, q, backend)
# --8<-- [end:lower]


# --8<-- [start:lower_binary]
def _lower_binary(gm: GraphModule, node: Node, modules: dict, backend: QuantBackend) -> None:
    """``q(relu?(dq(a) op dq(b)))`` becomes ``quantized.op(a, b, scale, zero_point)``.

    ``node`` is an ``add`` or ``mul`` (``binary_name``) of two ``dequantize``
    nodes. The node to replace is the ReLU that reads it alone
    (``add_relu_of``), if any, else ``node`` itself; it must be read by a
    ``quantize_per_tensor`` alone (``_only_quantize_reader``), else nothing
    happens. The new ``call_function`` node, inserted before that quantize
    node, calls ``backend.quantized_binary[name]``'s plain op, or its ReLU form
    when there is a ReLU, on the two quantized sources (each dequantize's
    argument) and the quantize node's scale and zero point nodes. It takes the
    quantize node's readers; the quantize node, the ReLU and ``node`` are erased,
    and the two dequantize nodes go when nothing else reads them (``_drop``).
    """
    relu = add_relu_of(node, modules, backend)
    last = relu if relu is not None else node
    q = _only_quantize_reader(last, backend)
    if q is None:
        return
    plain, with_relu = backend.quantized_binary[binary_name(node)]
    (dq_a, dq_b), scale, zp = node.args, q.args[1], q.args[2]
    with gm.graph.inserting_before(q):
        new = gm.graph.call_function(
            with_relu if relu is not None else plain, (dq_a.args[0], dq_b.args[0], scale, zp)
        )
    q.replace_all_uses_with(new)
    gm.graph.erase_node(q)
    if relu is not None:
        gm.graph.erase_node(relu)
    gm.graph.erase_node(node)
    _drop(gm, dq_a, dq_b)
# --8<-- [end:lower_binary]

