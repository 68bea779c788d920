"""Transformer: an Interpreter that runs a graph on Proxies to write a new one.

An Interpreter gives each node a value. A Transformer gives each node a
Proxy on a fresh Graph instead, so "running" a node records it in the new
graph. Override ``call_function`` to return something else (say
``tensor.neg(*args)`` for ``tensor.sigmoid``) and the new graph records that
instead: a node-for-node rewrite written as if it were an interpreter.
"""

from __future__ import annotations

import inspect
from typing import Any

from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter
from .node import Argument, Node, Target, map_aggregate
from .proxy import Proxy
from .tracer import Tracer


# --8<-- [start:tracer]
class _TransformerTracer(Tracer):
    """Appends to the Transformer's new graph; every module call stays one node.

    It is a full Tracer, not just a GraphAppendingTracer, because the rules
    a user writes may call submodules or pass real tensors and parameters,
    and a Tracer knows how to record those (``call_module``, ``get_attr``).
    """

    def __init__(self, graph: Graph, root: Any) -> None:
        super().__init__()
        self.graph = graph
        self.root = root
        self.tensor_attrs: dict[int, tuple[Any, str]] = {}
        self.source_node: Node | None = None  # the old node being transformed

    def is_leaf_module(self, m: Any, module_qualified_name: str) -> bool:
        return True
    # --8<-- [end:tracer]

    # --8<-- [start:tracer_create_node]
    def create_node(self, kind: str, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Argument], name: str | None = None,
                    type_expr: Any | None = None) -> Node:
        """Make the node as any Tracer does (``super()``), then carry over from
        ``self.source_node``, the old node being transformed, when there is one:

        - its ``stack_trace``, if it has one and the new node has none yet
          (a rewrite keeps pointing at the user's line that made the old node);
        - ``meta["is_wrapped"] = True``, if the old node had it and the new
          node calls the very same target (``is``): a call of a ``minifx.wrap``
          function stays registered in the new code. A rule that records
          another function instead does not inherit the mark.

        The node is returned.
        """
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        # A new node remembers the user's line that made the old one.
        source = self.source_node
        if source is not None and source.stack_trace and not node.stack_trace:
            node.stack_trace = source.stack_trace
        # A call of a `wrap`ped function stays one: the new code registers it again.
        if source is not None and source.meta.get("is_wrapped") and target is source.target:
            node.meta["is_wrapped"] = True
        return node
    # --8<-- [end:tracer_create_node]


class Transformer(Interpreter):
    """Build a new GraphModule by running ``module``'s graph on Proxies.

    ``transform()`` needs no inputs: placeholders become placeholders of
    the new graph, and every other opcode method returns the Proxy of the
    node it records. Override those methods to change what is recorded.
    """

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        # The new graph generates code the same way as the old one.
        self.new_graph._codegen = module.graph._codegen
        self.tracer = _TransformerTracer(self.new_graph, module)

    # --8<-- [start:run_node]
    def run_node(self, n: Node) -> Any:
        """Run ``n`` as the Interpreter does, with ``self.tracer.source_node`` set to
        ``n`` meanwhile, so that every node recorded for it knows where it came
        from (``_TransformerTracer.create_node``). Afterwards, and also when the
        node raises, ``source_node`` is None again."""
        self.tracer.source_node = n
        try:
            return super().run_node(n)
        finally:
            self.tracer.source_node = None
    # --8<-- [end:run_node]

    # --8<-- [start:opcodes]
    def placeholder(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Proxy:
        """A placeholder of the same name (and default) in the new graph."""
        assert isinstance(target, str)
        default_value = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default_value),
                     self.tracer)

    def get_attr(self, target: Target, args: tuple[Argument, ...],
                 kwargs: dict[str, Any]) -> Proxy:
        """A ``get_attr`` node of the very same target in the new graph, as a Proxy
        of ``self.tracer``: the attribute is read when the new module runs, not
        now, so the new module shares the old one's attribute under the name the
        old graph used, and a method called on it is recorded, not computed."""
        assert isinstance(target, str)
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        """A ``call_module`` node in the new graph, as a Proxy.

        Look the submodule up by its dotted path (``self.fetch_attr``) and let
        ``self.tracer`` record the call through its ``call_module`` hook (with
        the submodule's ``forward``): this tracer keeps every module whole, so
        a ``ReLU`` stays one ``call_module`` node and is not traced through.
        """
        assert isinstance(target, str)
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target: Target, args: tuple[Argument, ...],
                      kwargs: dict[str, Any]) -> Any:
        """A ``call_function`` node in the new graph; override to record something else."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    # call_method and output are the Interpreter's: ``getattr(proxy, name)(...)``
    # records a call_method node, and output returns the Proxies it is given.
    # --8<-- [end:opcodes]

    # --8<-- [start:transform]
    def transform(self) -> GraphModule:
        """Run the old graph on Proxies and wrap the new graph in a GraphModule."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            strip_proxy = lambda a: a.node if isinstance(a, Proxy) else a  # noqa: E731
            new_output = self.new_graph.output(map_aggregate(result, strip_proxy))
            old_output = list(self.graph.nodes)[-1]
            new_output.meta.update(old_output.meta)
        return GraphModule(self.module, self.new_graph)
    # --8<-- [end:transform]
