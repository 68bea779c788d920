"""Pass infrastructure, at torch.fx's paths (``torch.fx.passes.infra``).

``pass_base``: what a pass returns (``PassResult``) and a class shape for
one with pre- and postconditions (``PassBase``). ``pass_manager``: runs a
list of passes in an order the constraints allow, with checks, to a fixed
point. ``recorder`` (minifx's own): keeps what every step did to the graph,
as data a test or a viewer reads.
"""

from . import pass_base, pass_manager, recorder

__all__ = ["pass_base", "pass_manager", "recorder"]
