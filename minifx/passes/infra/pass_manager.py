"""PassManager: run a list of passes in a solved order, with checks, until nothing changes.

Three ideas, each a few lines below:

- **Order from constraints.** A constraint is a function ``c(a, b)`` of two
  passes that returns False when ``a`` must *not* run before ``b``.
  ``this_before_that_pass_constraint`` builds the common one. Before running,
  the manager sorts the passes topologically (Kahn's algorithm: repeatedly
  take a pass that nothing still waits on), keeping the list's order where
  the constraints leave a choice; constraints that form a cycle cannot be
  satisfied and raise.
- **Repeat to a fixed point.** One rewrite can expose another (folding a
  constant makes a new constant), so the whole list runs up to ``steps``
  times and stops after the first round in which no pass reported
  ``modified``.
- **Checks between passes.** ``check(module)`` runs once before the passes
  and, with ``run_checks_after_each_pass``, after each one, so a pass that
  breaks the graph is named at once. As in torch.fx the default check does
  nothing; hand it ``lambda gm: gm.graph.lint()`` with ``add_checks``.

Every pass must return a ``PassResult`` (``pass_result_wrapper`` adapts one
that returns None or a module). Any error inside a pass or its check is
raised again naming the pass and the passes that ran before it.

``record=True`` (minifx's own addition) keeps a ``Recorder`` of every pass
application in ``self.recorder``: see recorder.py.
"""

from __future__ import annotations

import functools
import inspect
from collections import deque
from collections.abc import Callable
from typing import Any

from ..._framework import framework_of
from ...graph_module import GraphModule
from .pass_base import PassResult
from .recorder import Recorder

Pass = Callable[[Any], Any]
Constraint = Callable[[Pass, Pass], bool]


def _pass_name(fn: Pass) -> str:
    """A plain function by its name; anything else (a PassBase, a partial) by its class."""
    return fn.__name__ if inspect.isfunction(fn) else type(fn).__name__


def pass_result_wrapper(fn: Pass | None) -> Callable[[Any], PassResult | None] | None:
    """Adapt a pass that edits in place (returns None) or returns a module.

    Both count as ``modified=True``: the wrapper cannot know better. A
    PassResult passes through; anything else becomes None, which the
    manager then refuses.
    """
    if fn is None:
        return None

    @functools.wraps(fn)
    def wrapped(gm: Any) -> PassResult | None:
        result = fn(gm)
        if result is None:
            return PassResult(gm, True)
        if isinstance(result, PassResult):
            return result
        if framework_of(result).is_module(result):
            return PassResult(result, True)
        return None

    if not inspect.isfunction(fn):
        wrapped.__name__ = type(fn).__name__
    return wrapped


def this_before_that_pass_constraint(this: Pass, that: Pass) -> Constraint:
    """A constraint saying ``this`` runs before ``that``.

    The returned ``depends_on(a, b)`` is False exactly for the forbidden
    order, ``a`` being ``that`` and ``b`` being ``this``.
    """

    def depends_on(a: Pass, b: Pass) -> bool:
        return not (a == that and b == this)

    return depends_on


def _validate_order(constraint: Constraint, passes: list[Pass]) -> None:
    for i, a in enumerate(passes):
        for j, b in enumerate(passes[i + 1:], start=i + 1):
            if not constraint(a, b):
                raise RuntimeError(
                    f"pass schedule constraint violated: {_pass_name(b)} (index {j}) must run "
                    f"before {_pass_name(a)} (index {i})")


def _topological_order(passes: list[Pass], constraints: list[Constraint]) -> list[Pass]:
    """The passes in an order every constraint allows (Kahn's algorithm)."""
    if not constraints:
        return passes
    unlocks: dict[Pass, list[Pass]] = {p: [] for p in passes}  # p -> passes waiting on p
    waiting_on = dict.fromkeys(passes, 0)  # p -> how many passes must run before p
    ready: deque[Pass] = deque()
    for a in passes:
        for b in passes:
            if a == b:
                continue
            for constraint in constraints:
                if not constraint(a, b):  # a may not precede b: b first
                    unlocks[b].append(a)
                    waiting_on[a] += 1
        if waiting_on[a] == 0:
            ready.append(a)
    order: list[Pass] = []
    done: set[Pass] = set()
    while ready:
        p = ready.popleft()
        order.append(p)
        done.add(p)
        for q in unlocks[p]:
            if q not in done:
                waiting_on[q] -= 1
                if waiting_on[q] == 0:
                    ready.append(q)
    stuck = [p for p, n in waiting_on.items() if n != 0]
    if stuck:
        raise RuntimeError(
            f"Circular dependency detected: no order satisfies the constraints between "
            f"{[_pass_name(p) for p in stuck]}")
    return order


class PassManager:
    """Runs ``passes`` on a module in an order ``constraints`` allow, up to ``steps`` rounds.

    ``run_checks_after_each_pass`` calls ``check`` after every pass.
    ``suppress_check_failures`` is stored, as torch.fx stores it, and as in
    torch.fx 2.13 nothing reads it: a failing check always raises.
    """

    steps: int = 1
    _validated: bool = False

    def __init__(self, passes: list[Pass] | None = None,
                 constraints: list[Constraint] | None = None, steps: int | None = None,
                 run_checks_after_each_pass: bool = False,
                 suppress_check_failures: bool = False,
                 record: bool | Recorder = False) -> None:
        self.passes: list[Pass] = passes or []
        self.constraints: list[Constraint] = constraints or []
        if steps:  # 0 and None both mean the default, one round
            self.steps = steps
        self.run_checks_after_each_pass = run_checks_after_each_pass
        self.suppress_check_failures = suppress_check_failures
        self.recorder: Recorder | None = (
            record if isinstance(record, Recorder) else Recorder() if record else None)

    def add_pass(self, _pass: Pass) -> None:
        """Append a pass; the order is solved again before the next run."""
        self.passes.append(_pass)
        self._validated = False

    def add_constraint(self, constraint: Constraint) -> None:
        """Add a constraint; the order is solved again before the next run."""
        self.constraints.append(constraint)
        self._validated = False

    def validate_constraints(self) -> None:
        """Raise if the list, in its current order, breaks a constraint (it is not reordered)."""
        if self._validated:
            return
        for constraint in self.constraints:
            _validate_order(constraint, self.passes)
        self._validated = True

    def solve_constraints(self) -> None:
        """Reorder ``self.passes`` so that every constraint holds, or raise on a cycle."""
        self.passes = _topological_order(self.passes, self.constraints)
        self._validated = True

    def add_checks(self, check: Callable[[Any], None]) -> None:
        """Use ``check(module)`` as the check run before the passes (and between them)."""
        n = len(inspect.signature(check).parameters)
        if n != 1:
            raise TypeError(
                f"PassManager check function should take one argument, the module; "
                f"{check!r} takes {n}")
        self.check = check  # type: ignore[method-assign]

    def check(self, module: Any) -> None:
        """The default check accepts everything."""

    def __call__(self, module: Any) -> PassResult:
        """Run the passes; return the last module and whether any pass modified it."""
        if not self._validated:
            self.solve_constraints()
        self.check(module)
        overall_modified = False
        for round_ in range(self.steps):
            modified = False
            for i, fn in enumerate(self.passes):
                name = _pass_name(fn)
                try:
                    result = (fn(module) if self.recorder is None
                              else self.recorder.run(fn, module, name=name, round_index=round_))
                    if not isinstance(result, PassResult) and not hasattr(result, "graph_module"):
                        raise TypeError(
                            f"The result of the pass {name} is a {type(result).__name__}, not a "
                            f"PassResult; wrap the pass with pass_result_wrapper()")
                    module, modified = result.graph_module, modified or result.modified
                    if isinstance(module, GraphModule):
                        module.recompile()
                    if self.run_checks_after_each_pass:
                        self.check(module)
                except Exception as e:
                    done = [_pass_name(p) for p in self.passes[:i]]
                    raise Exception(  # noqa: TRY002 (torch.fx raises a bare Exception here)
                        f"An error occurred in the pass '{name}', run after the passes "
                        f"{done}") from e
            overall_modified = overall_modified or modified
            if not modified:  # a fixed point: another round would change nothing
                break
        return PassResult(module, overall_modified)
