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
    """Rewrite the reference graph of ``gm`` in place into int8 modules and ops."""
    graph = gm.graph
    modules = modules_of(gm)
    float_layers: dict[str, Any] = {}  # target -> float module, for layers called twice
    for node in list(graph.nodes):
        if node.graph is None or node.op in ("placeholder", "output", "get_attr"):
            continue
        kind = node_kind(node, modules, backend)
        if node.op == "call_module" and node.target in float_layers:
            kind = "quantized"  # called again: rebuilt below with this call's qparams,
            # so that every call uses the last call's, as torch's convert_fx does
        if kind in ("quantized", "own") and _is_dequantize(node.args[0]):
            q = _only_quantize_reader(node, backend)
            if q is None or (kind == "quantized" and node.target not in weight_qconfigs):
                continue
            module = float_layers.setdefault(node.target, modules[node.target])
            quantized_type = backend.quantized_modules[type(module)]
            weight = None
            if kind == "quantized":
                weight = _quantized_weight(module, weight_qconfigs[node.target], backend)
            new = backend.build_quantized(
                quantized_type, module, weight, _attr_value(gm, q.args[1]),
                _attr_value(gm, q.args[2]),
            )
            replace_node_module(node, modules, new)
            _bypass(gm, node, q, backend)
        elif kind == "binary" and all(_is_dequantize(a) for a in node.args):
            _lower_binary(gm, node, modules, backend)
        elif kind in ("shares", "fixed") and node.args and _is_dequantize(node.args[0]):
            q = _only_quantize_reader(node, backend)
            if q is not None:
                _bypass(gm, node, q, backend)
        elif kind == "info" and _is_dequantize(node.args[0]):  # x.size() reads x as it is
            dq = node.args[0]
            node.replace_input_with(dq, dq.args[0])
            _drop(gm, dq)
        elif kind == "cat" and all(_is_dequantize(a) for a in node.args[0]):
            q = _only_quantize_reader(node, backend)
            if q is not None:
                _bypass(gm, node, q, backend)
    gm.delete_all_unused_submodules()
    gm.recompile()
# --8<-- [end:lower]


def _lower_binary(gm: GraphModule, node: Node, modules: dict, backend: QuantBackend) -> None:
    """``q(relu?(dq(a) op dq(b)))`` becomes ``quantized.op(a, b, scale, zero_point)``."""
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

