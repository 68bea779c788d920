"""Pass 1 of prepare_fx: fuse, so that one observer watches what one int8 kernel computes.

Three rewrites, each a question about two neighbouring ``call_module`` nodes:

- Conv2d followed by BatchNorm2d: the BatchNorm is folded into the
  convolution's weight and bias (chapter 7's ``fuse``, reused as it is);
- Conv2d followed by ReLU becomes one ``ConvReLU2d`` module, Linear followed
  by ReLU one ``LinearReLU``: chapter 7's ``matches_module_pattern`` finds the
  pair, ``replace_node_module`` installs the fused module under the layer's
  name, and the ReLU node is erased.

The fused node keeps the layer's name (``conv1``), as in torch's prepare_fx.
"""

from __future__ import annotations

from typing import Any

from ..experimental.optimization import fuse as fold_batchnorms
from ..experimental.optimization import matches_module_pattern, replace_node_module
from ..graph_module import GraphModule
from .backend import QuantBackend
from .prepare import modules_of

__all__ = ["fuse_for_quantization"]


# --8<-- [start:fuse]
def fuse_for_quantization(model: Any, backend: QuantBackend) -> GraphModule:
    """Trace ``model`` (a copy), fold its BatchNorms, and fuse layer + ReLU pairs."""
    gm = fold_batchnorms(model)  # traces a deep copy; Conv+BN folded
    modules = modules_of(gm)
    pairs = [(backend.conv, backend.conv_relu), (backend.linear, backend.linear_relu)]
    for layer_type, fused_type in pairs:
        for node in gm.graph.nodes:
            if not matches_module_pattern((layer_type, backend.relu_module), node, modules):
                continue
            layer_node = node.args[0]
            if len(layer_node.users) > 1:  # the layer's output is read elsewhere too
                continue
            fused = fused_type(modules[layer_node.target], modules[node.target])
            replace_node_module(layer_node, modules, fused)
            node.replace_all_uses_with(layer_node)
            gm.graph.erase_node(node)
    gm.recompile()
    return gm
# --8<-- [end:fuse]
