"""Pass 1 of prepare_fx: trace, then fuse, so that one observer watches what one int8 kernel
computes.

The trace is minifx's, with two additions of torch's ``QuantizationTracer``:
every node remembers in ``meta["scope"]`` the qualified name of the module
whose forward recorded it (convert_fx names a function's qparams after it:
``layer1_0_scale_0``), and a ``FloatFunctional`` (torch's holder of add, cat
and mul for eager quantization) is first swapped for its FX twin, whose
methods call ``torch.add`` and the like, so that they trace as functions.

Then three rewrites, each a question about two neighbouring ``call_module`` nodes:

- Conv2d followed by BatchNorm2d: the BatchNorm is folded into the
  convolution's weight and bias (chapter 7's ``fuse``, reused as it is);
- Conv2d followed by ReLU (the module, or ``F.relu``) becomes one
  ``ConvReLU2d`` module, Linear followed by ReLU one ``LinearReLU``:
  chapter 7's ``replace_node_module`` installs the fused module under the
  layer's name, and the ReLU node is erased.

The fused node keeps the layer's name (``conv1``), as in torch's prepare_fx.
"""

from __future__ import annotations

import copy
from typing import Any

from ..experimental.optimization import fuse as fold_batchnorms
from ..experimental.optimization import replace_node_module
from ..graph_module import GraphModule
from ..node import Node
from ..tracer import Tracer
from .backend import QuantBackend
from .prepare import modules_of

__all__ = ["QuantizationTracer", "fuse_for_quantization", "swap_float_functionals"]


class QuantizationTracer(Tracer):
    """minifx's Tracer, stamping each node with the module path it was recorded in."""

    def __init__(self) -> None:
        super().__init__()
        self.scope = ""

    def call_module(self, m: Any, forward: Any, args: tuple, kwargs: dict) -> Any:
        outer, self.scope = self.scope, self.path_of_module(m)
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.scope = outer

    def create_node(self, *args: Any, **kwargs: Any) -> Node:
        node = super().create_node(*args, **kwargs)
        node.meta["scope"] = self.scope
        return node


def swap_float_functionals(model: Any, backend: QuantBackend) -> None:
    """Replace (in place) every FloatFunctional submodule by its FX twin, as torch does."""
    if backend.float_functional is None:
        return
    float_functional, twin = backend.float_functional
    for name, child in list(model.named_children()):
        if isinstance(child, float_functional):
            setattr(model, name, twin())
        else:
            swap_float_functionals(child, backend)


def _trace(model: Any, backend: QuantBackend) -> GraphModule:
    model = copy.deepcopy(model)
    swap_float_functionals(model, backend)
    tracer = QuantizationTracer()
    graph = tracer.trace(model)
    return GraphModule(tracer.root, graph, type(model).__name__)


# --8<-- [start:fuse]
def fuse_for_quantization(model: Any, backend: QuantBackend) -> GraphModule:
    """Trace ``model`` (a copy), fold its BatchNorms, and fuse layer + ReLU pairs."""
    gm = fold_batchnorms(_trace(model, backend), inplace=True, no_trace=True)
    modules = modules_of(gm)
    fused_types = {backend.conv: backend.conv_relu, backend.linear: backend.linear_relu}
    for node in gm.graph.nodes:
        layer_node = node.args[0] if node.args else None
        if not _is_relu(node, modules, backend) or not isinstance(layer_node, Node) \
                or layer_node.op != "call_module" or len(layer_node.users) > 1:
            continue  # not a ReLU after a layer whose output only it reads
        layer = modules.get(layer_node.target)
        if type(layer) not in fused_types:
            continue
        relu = modules[node.target] if node.op == "call_module" else backend.relu_module()
        replace_node_module(layer_node, modules, fused_types[type(layer)](layer, relu))
        node.replace_all_uses_with(layer_node)
        gm.graph.erase_node(node)
    gm.recompile()
    return gm


def _is_relu(node: Node, modules: dict[str, Any], backend: QuantBackend) -> bool:
    relu = backend.ops["relu"]
    if node.op == "call_module":
        return type(modules.get(node.target)) in relu.modules
    return node.op == "call_function" and node.target in relu.functions
# --8<-- [end:fuse]
