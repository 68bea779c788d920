"""ShapeProp: run a graph on example inputs and write down what each node made.

An Interpreter already visits every node with its value in hand; ShapeProp
only adds one step to ``run_node``: describe the value (shape, dtype,
strides ...) and store the description in ``node.meta['tensor_meta']``.
Later passes read shapes from there without running anything.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .._framework import framework_of
from ..interpreter import Interpreter
from ..node import Node, map_aggregate


# --8<-- [start:tensor_metadata]
class TensorMetadata(NamedTuple):
    """What ShapeProp records about one tensor (torch.fx's fields, in its order)."""

    shape: Any  # tensor.Size / torch.Size
    dtype: Any  # tensor.float32 / torch.float32 ...
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: Any  # torch.contiguous_format ...; "contiguous_format" or None for tensor
    is_quantized: bool
    qparams: dict[str, Any]
# --8<-- [end:tensor_metadata]


# --8<-- [start:extract]
def extract_tensor_metadata(result: Any) -> TensorMetadata:
    """Describe one tensor of either framework; its framework knows its layout.

    The fields, in TensorMetadata's order, as torch.fx fills them: the
    tensor's ``shape`` and ``dtype``, ``requires_grad`` as a bool (False for
    a tensor without the attribute: ``tensor`` has no autograd), then the
    four fields of ``framework_of(result).tensor_layout(result)`` (stride,
    memory format, is_quantized, qparams), in that order.
    """
    layout = framework_of(result).tensor_layout(result)
    requires_grad = bool(getattr(result, "requires_grad", False))
    return TensorMetadata(result.shape, result.dtype, requires_grad, *layout)
# --8<-- [end:extract]


# --8<-- [start:shape_prop]
class ShapeProp(Interpreter):
    """Run ``gm`` node by node and record each result's metadata on its node.

    After ``ShapeProp(gm).propagate(x)`` every node that produced a tensor
    has ``node.meta['tensor_meta']`` (a TensorMetadata, or the same nesting
    of them when the node produced a tuple, list or dict of tensors), and
    every node has ``node.meta['type']``, the type of its value.
    """

    def run_node(self, n: Node) -> Any:
        """Run ``n`` as the Interpreter does, then describe its value on ``n.meta``."""
        try:
            result = super().run_node(n)
        except Exception as e:
            raise RuntimeError(
                f"ShapeProp error for: node={n.format_node()} with meta={n.meta}") from e

        found_tensor = False

        def describe(obj: Any) -> Any:
            nonlocal found_tensor
            if framework_of(obj).is_tensor(obj):
                found_tensor = True
                return extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, describe)
        if found_tensor:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the graph on the example inputs ``args``; return its output."""
        return super().run(*args)
# --8<-- [end:shape_prop]
