"""Passes: programs that walk or run a GraphModule's graph to learn something about it.

``shape_prop.ShapeProp`` runs the graph on example inputs and records each
node's shape and dtype in ``node.meta``; ``graph_drawer.FxGraphDrawer``
draws the graph. ``infra`` holds torch.fx's pass infrastructure
(``PassResult``, ``PassBase``, ``PassManager``) and a recorder of what
each pass step did.
"""
