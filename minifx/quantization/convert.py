"""convert_fx's first pass: every observer becomes a quantize / dequantize pair.

After calibration each observer knows its ``(scale, zero_point)``. This pass
replaces the observer node by four nodes, right where it was::

    x_scale = get_attr[<prefix>_scale_0]
    x_zero_point = get_attr[<prefix>_zero_point_0]
    q = quantize_per_tensor(x, x_scale, x_zero_point, quint8)
    dq = q.dequantize()

and its readers read ``dq``. The model still computes in float, but every
value that crosses an observed edge is rounded as int8 inference will round
it: torch calls this the *reference* model. The second pass (``lower.py``)
then turns ``dequantize -> float op -> quantize`` sandwiches into int8 ops.

The attributes are named after what the observer watched, as torch names
them: the module's qualified name (``layer1_0_relu_scale_0``), the first
reader's name plus ``_input`` for a model input (``conv1_input_scale_0``),
and for a function's output the module whose forward called it
(``layer1_0_scale_0``, from the ``scope`` the trace recorded).
"""

from __future__ import annotations

import warnings

from ..graph_module import GraphModule
from ..node import Node
from .backend import QuantBackend
from .prepare import OBSERVER_PREFIX

__all__ = ["insert_quantize_dequantize", "observer_nodes"]


def observer_nodes(gm: GraphModule) -> list[Node]:
    return [
        n for n in gm.graph.nodes
        if n.op == "call_module" and str(n.target).startswith(OBSERVER_PREFIX)
    ]


def _prefix(observed: Node, observer_node: Node) -> str:
    if observed.op == "call_module":
        return str(observed.target).replace(".", "_")
    if observed.op == "placeholder":
        first_reader = next(iter(observer_node.users), None)
        base = _prefix(first_reader, observer_node) if first_reader is not None else ""
        return f"{base}_input"
    return str(observed.meta.get("scope", "")).replace(".", "_")


def _fresh_attr(gm: GraphModule, prefix: str) -> str:
    i = 0
    while hasattr(gm, f"{prefix}{i}"):
        i += 1
    return f"{prefix}{i}"


# --8<-- [start:insert_qdq]
def insert_quantize_dequantize(gm: GraphModule, backend: QuantBackend) -> None:
    """Replace every observer node of ``gm`` (in place) by get_attr, quantize, dequantize.

    For each observer node (``observer_nodes``), in graph order: its module's
    ``calculate_qparams()`` (warnings silenced) gives the scale and zero point.
    They become two buffers of ``gm``, ``backend.scalar(float(scale))`` and
    ``backend.scalar(int(zero_point))``, named ``<prefix>_scale_<i>`` and
    ``<prefix>_zero_point_<i>``: the prefix is ``_prefix`` of the observed node
    (the observer node's argument), ``i`` the first number not yet taken
    (``_fresh_attr``). Just before the observer node come two ``get_attr`` nodes
    reading them, a ``call_function`` of ``backend.quantize_per_tensor`` with
    (observed node, scale node, zero point node, ``backend.quint8``), and a
    ``call_method`` ``dequantize`` of that; the observer node's readers read
    the dequantize node, and the observer node is erased.

    Observers that saw no data (``has_data`` false) still get their default
    qparams; at the end one UserWarning names them all: ``convert_fx: these
    observers saw no data, so their scale and zero point are the defaults (1.0,
    0): <targets, joined by ', '>. Calibrate first: run the prepared model on
    representative inputs before convert_fx.``
    """
    graph = gm.graph
    unobserved = []
    for obs_node in observer_nodes(gm):
        observer = gm.get_submodule(obs_node.target)
        if not observer.has_data:
            unobserved.append(obs_node.target)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # reported once, by name, below
            scale, zero_point = observer.calculate_qparams()
        observed = obs_node.args[0]
        prefix = _prefix(observed, obs_node)
        scale_name = _fresh_attr(gm, f"{prefix}_scale_")
        gm.register_buffer(scale_name, backend.scalar(float(scale)))
        zp_name = _fresh_attr(gm, f"{prefix}_zero_point_")
        gm.register_buffer(zp_name, backend.scalar(int(zero_point)))
        with graph.inserting_before(obs_node):
            scale_node = graph.get_attr(scale_name)
            zp_node = graph.get_attr(zp_name)
            q = graph.call_function(
                backend.quantize_per_tensor, (observed, scale_node, zp_node, backend.quint8)
            )
            dq = graph.call_method("dequantize", (q,))
        obs_node.replace_all_uses_with(dq)
        graph.erase_node(obs_node)
    if unobserved:
        warnings.warn(
            "convert_fx: these observers saw no data, so their scale and zero point are the "
            f"defaults (1.0, 0): {', '.join(unobserved)}. Calibrate first: run the prepared "
            "model on representative inputs before convert_fx.",
            UserWarning,
            stacklevel=3,
        )
# --8<-- [end:insert_qdq]
