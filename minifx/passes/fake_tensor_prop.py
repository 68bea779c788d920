"""FakeTensorProp: ShapeProp without the data.

ShapeProp (`shape_prop.py`) runs a graph on real inputs, so it allocates
every activation the model would. FakeTensorProp runs the same
Interpreter loop under a `tensor.fake.FakeTensorMode`: each node's value is
a FakeTensor (shape, dtype, strides, no data), computed by the primitives'
meta functions, and becomes ``node.meta['val']``, as torch.fx's
FakeTensorProp records it:

- a tensor result: its fake value (a real tensor in a result, such as a
  parameter read by ``get_attr``, is made fake first);
- ``int``, ``float``, ``bool``: the value itself;
- tuples, lists and dicts: the same nesting of the above;
- anything else: ``None``, and nothing is recorded when the whole value
  is ``None``.

``propagate(*args)`` takes real inputs and makes them fake with the mode's
``from_tensor``; ``propagate_dont_convert_inputs(*fake_args)`` takes inputs
that are already fake (or meant to stay as they are). Parameters stay real
tensors in the module and the meta functions read only their shapes, so no
activation is allocated.
"""

from __future__ import annotations

from typing import Any

from tensor import Tensor
from tensor.fake import FakeTensor, FakeTensorMode

from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["FakeTensorProp"]


class FakeTensorProp(Interpreter):
    """Run ``module`` node by node on fake tensors; record each value in ``node.meta['val']``.

    ``mode`` is the FakeTensorMode to run under (a new one when None).
    """

    def __init__(self, module: Any, mode: FakeTensorMode | None = None) -> None:
        super().__init__(module)
        self._mode = FakeTensorMode() if mode is None else mode

    # --8<-- [start:run_node]
    def run_node(self, n: Node) -> Any:
        """Run ``n`` as the Interpreter does, record its fake value, return the result.

        - The result is the Interpreter's (`Interpreter.run_node`), returned
          unchanged.
        - ``n.meta['val']`` is the result with each leaf of its nesting
          (tuples, lists, dicts: `map_aggregate`) replaced: a FakeTensor stays
          itself; another Tensor (a parameter that a ``get_attr`` reads) becomes
          its fake twin from this pass's mode (``from_tensor``); an ``int``,
          ``float`` or ``bool`` stays itself; anything else becomes None.
        - When that whole value is None, ``n.meta`` gets no ``'val'``.
        """
        result = super().run_node(n)

        def extract_val(obj: Any) -> Any:
            if isinstance(obj, FakeTensor):
                return obj
            if isinstance(obj, Tensor):
                return self._mode.from_tensor(obj)
            if isinstance(obj, (int, float, bool)):
                return obj
            return None

        meta = map_aggregate(result, extract_val)
        if meta is not None:
            n.meta["val"] = meta
        return result
    # --8<-- [end:run_node]

    # --8<-- [start:propagate]
    def propagate(self, *args: Any) -> Any:
        """Make the tensors among ``args`` fake, then run the graph on them.

        Each Tensor argument becomes its fake twin from this pass's mode
        (``from_tensor``); any other argument (a number, None) is passed as it
        is. The graph then runs as `propagate_dont_convert_inputs` runs it, and
        its result is returned: a graph that returns an input returns the fake
        twin, never the caller's tensor.
        """
        fake_args = [self._mode.from_tensor(a) if isinstance(a, Tensor) else a for a in args]
        return self.propagate_dont_convert_inputs(*fake_args)
    # --8<-- [end:propagate]

    # --8<-- [start:propagate_dont_convert_inputs]
    def propagate_dont_convert_inputs(self, *args: Any) -> Any:
        """Run the graph on ``args`` as given, under the fake mode.

        The Interpreter's `run` on ``args``, unchanged, inside this pass's mode
        (``with``, so that every primitive answers with its meta function);
        its result is returned. A real tensor among ``args`` stays real (a
        graph that returns it returns it), while what the primitives compute
        from it under the mode is fake.
        """
        with self._mode:
            return super().run(*args)
    # --8<-- [end:propagate_dont_convert_inputs]
