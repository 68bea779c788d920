"""What a pass is: a callable that takes a GraphModule and says what it did.

A pass may edit the graph in place or build a new GraphModule; either way
the caller needs two facts back, the module to carry on with and whether
anything changed. ``PassResult`` is that pair. The ``modified`` flag is what
lets ``PassManager`` stop repeating its passes once a round changes nothing,
so a pass that reports it honestly can be run "until nothing is left to do".

``PassBase`` is an optional shape for a pass with preconditions and
postconditions: ``requires`` looks at the module before ``call`` runs and
``ensures`` after, so a broken assumption is caught at the pass that made it
rather than passes later.
"""

from __future__ import annotations

import abc
from typing import Any, NamedTuple


class PassResult(NamedTuple):
    """What a pass returns: the module to continue with, and whether it changed.

    A tuple, so ``gm, modified = result`` works, as with torch.fx's.
    """

    graph_module: Any  # a GraphModule, or any module a pass chooses to return
    modified: bool


class PassBase(abc.ABC):
    """A pass as a class: write ``call``; ``requires`` and ``ensures`` are optional checks.

    An instance is called like a function pass, so it can go straight into a
    ``PassManager``'s list::

        class NoAdds(PassBase):
            def call(self, gm):
                ...
                return PassResult(gm, modified)
    """

    def __call__(self, graph_module: Any) -> PassResult | None:
        """Check what the pass needs, run it, check what it promises; return ``call``'s result."""
        self.requires(graph_module)
        result = self.call(graph_module)
        self.ensures(graph_module)
        return result

    @abc.abstractmethod
    def call(self, graph_module: Any) -> PassResult | None:
        """The pass itself: rewrite ``graph_module`` and say whether it changed."""

    def requires(self, graph_module: Any) -> None:  # noqa: B027 (optional hook, empty on purpose)
        """Raise if ``graph_module`` is not something this pass can work on."""

    def ensures(self, graph_module: Any) -> None:  # noqa: B027 (optional hook, empty on purpose)
        """Raise if the pass did not leave ``graph_module`` as it promised.

        As in torch.fx, this sees the module the pass was given; a pass that
        returns a new module checks that one in its own ``call``.
        """
