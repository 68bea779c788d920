"""Conv+BN fusion: fold each eval-mode BatchNorm into the convolution before it.

At inference a BatchNorm only scales and shifts each channel with numbers
that no longer change, so it can be baked into the convolution's weight and
bias (``fuse_conv_bn_eval`` does the arithmetic). This file is the graph
side: trace the model, find a ``call_module`` convolution whose only reader
is a ``call_module`` BatchNorm, swap the convolution's module for the fused
one, point the BatchNorm's readers at the convolution and erase the
BatchNorm node. What makes it easy is that the graph names every module
call, so "a conv followed by a bn" is a question about two nodes.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from .._framework import framework_of
from ..graph_module import GraphModule
from ..node import Node
from ..tracer import symbolic_trace

__all__ = ["fuse", "matches_module_pattern", "replace_node_module"]


def _parent_name(target: str) -> tuple[str, str]:
    """``"layer1.0.conv1"`` -> ``("layer1.0", "conv1")``; ``"conv1"`` -> ``("", "conv1")``."""
    parent, _, name = target.rpartition(".")
    return parent, name


# --8<-- [start:matches_module_pattern]
def matches_module_pattern(pattern: Iterable[type], node: Node, modules: dict[str, Any]) -> bool:
    """Whether ``node`` and its first argument are calls of modules of the two given types.

    ``pattern`` is ``(FirstType, SecondType)``: ``node.args[0]`` must call a
    ``FirstType`` module and ``node`` a ``SecondType`` one. Each must be a
    Node of op ``call_module`` whose target is a string found in ``modules``.
    Types are compared exactly, so a subclass (which may compute something
    else) never matches. A node without args never matches.
    """
    if not node.args:
        return False
    for expected_type, current in zip(pattern, (node.args[0], node)):
        if not isinstance(current, Node) or current.op != "call_module":
            return False
        if not isinstance(current.target, str) or current.target not in modules:
            return False
        if type(modules[current.target]) is not expected_type:
            return False
    return True
# --8<-- [end:matches_module_pattern]


# --8<-- [start:replace_node_module]
def replace_node_module(node: Node, modules: dict[str, Any], new_module: Any) -> None:
    """Make the ``call_module`` ``node`` call ``new_module``: install it under the same name.

    The node keeps its target; what changes is the module that the target
    names, both in the owning module tree (set on the parent module named by
    the target's dotted prefix, ``_parent_name``) and in the ``modules``
    lookup. A target that is not a string is a TypeError: ``replace_node_module:
    node <name> has target <target>, expected the dotted name of a submodule``.
    """
    if not isinstance(node.target, str):
        raise TypeError(
            f"replace_node_module: node {node.name} has target {node.target!r}, "
            "expected the dotted name of a submodule"
        )
    parent_name, name = _parent_name(node.target)
    modules[node.target] = new_module
    setattr(modules[parent_name], name, new_module)
# --8<-- [end:replace_node_module]


# --8<-- [start:fuse]
def fuse(model: Any, inplace: bool = False, no_trace: bool = False) -> GraphModule:
    """Fold every BatchNorm that directly follows a convolution into it, for inference.

    The pairs to look for come from the model's framework
    (``framework_of(model).fusion_patterns()``): triples ``(layer type, bn
    type, fold)``, where ``fold(layer, bn)`` returns the fused layer. ``model``
    is deep-copied first unless ``inplace`` (then the result shares every
    module it did not replace with ``model``); it is traced with
    ``symbolic_trace``, except that with ``no_trace`` a GraphModule is used
    as it is. The rewrite works on a deep copy of the traced graph, and the
    result is ``GraphModule(traced, new_graph)``, so it prints the graph
    torch.fx's ``fuse`` prints.

    For each pattern in turn, every BatchNorm node whose first argument calls
    the layer (``matches_module_pattern``) is folded: the layer node's module
    is replaced by the fused one (``replace_node_module``), the BatchNorm's
    readers read the layer node instead, and the BatchNorm node is erased.
    Left alone: a layer whose output is also read elsewhere (more than one
    user: the BatchNorm's output is not the only thing computed from it),
    and a BatchNorm without running statistics (``track_running_stats``
    false). A pair with a module still in training mode is an
    AssertionError, as in torch.fx: ``fuse: <layer target> (<layer type>)
    and <bn target> (<bn type>) must be in eval mode: Fusion only for eval!
    Call model.eval() before fuse().``
    """
    framework = framework_of(model)
    patterns = framework.fusion_patterns()  # its layer pairs and its own arithmetic
    if not inplace:
        model = copy.deepcopy(model)
    traced = model if no_trace and isinstance(model, GraphModule) else symbolic_trace(model)
    modules = dict(traced.named_modules())
    new_graph = copy.deepcopy(traced.graph)

    for layer_type, bn_type, fold in patterns:
        for node in new_graph.nodes:  # erasing the visited node is safe
            if not matches_module_pattern((layer_type, bn_type), node, modules):
                continue
            layer_node = node.args[0]
            if len(layer_node.users) > 1:  # the layer's output is also read elsewhere
                continue
            layer, bn = modules[layer_node.target], modules[node.target]
            if not bn.track_running_stats:  # normalises with batch statistics: nothing to fold
                continue
            if layer.training or bn.training:
                raise AssertionError(
                    f"fuse: {layer_node.target} ({type(layer).__name__}) and {node.target} "
                    f"({type(bn).__name__}) must be in eval mode: Fusion only for eval! "
                    "Call model.eval() before fuse()."
                )
            replace_node_module(layer_node, modules, fold(layer, bn))
            node.replace_all_uses_with(layer_node)
            new_graph.erase_node(node)
    return GraphModule(traced, new_graph)
# --8<-- [end:fuse]
