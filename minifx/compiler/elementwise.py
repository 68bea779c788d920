"""Which nodes the numba backend can fuse: the elementwise operations.

An elementwise operation computes each output element from the elements at
the same position of its (broadcast) inputs, so a chain of them can run as
one loop that never writes the intermediates to memory. The same operation
reaches a graph under many spellings (``x + y``, ``tensor.add(x, y)``,
``x.add(y)``, ``torch.add(x, y)``); ``as_pointwise`` reads any of them and
returns one canonical description, a ``Pointwise``, or None for a node the
backend leaves alone.
"""

from __future__ import annotations

import numbers
import operator
from dataclasses import dataclass
from typing import Any

from .._framework import library_packages
from ..node import Argument, Node, qualified_name

# --8<-- [start:ops]
UNARY = ("neg", "exp", "log", "sigmoid", "tanh", "relu", "abs", "sqrt", "rsqrt")
BINARY = ("add", "sub", "mul", "div", "pow")
COMPARE = ("gt", "lt", "ge", "le", "eq", "ne")

# Python operators, as the Proxy records them (``x + 1`` is operator.add).
_OPERATORS = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul",
    operator.truediv: "div", operator.pow: "pow", operator.neg: "neg",
    operator.gt: "gt", operator.lt: "lt", operator.ge: "ge",
    operator.le: "le", operator.eq: "eq", operator.ne: "ne",
}

# Functions of ``tensor`` and of ``torch`` (the same names in both), by their
# path without the package: ``tensor.sigmoid`` and ``torch.sigmoid`` are "sigmoid".
_FUNCTIONS = {name: name for name in (*UNARY, *BINARY, *COMPARE, "clamp", "where")}
_FUNCTIONS.update({f"nn.functional.{name}": name for name in ("relu", "sigmoid", "tanh")})

# Tensor methods (``call_method`` targets): ``x.sigmoid()``, ``x.clamp(min=0)``.
_METHODS = {name: name for name in (*UNARY, *BINARY, *COMPARE, "clamp", "where")}

# Parameter names of each operation, in torch's order, for binding args and kwargs.
_PARAMETERS = {
    **{name: ("input",) for name in UNARY},
    **{name: ("input", "other") for name in (*BINARY, *COMPARE)},
    "pow": ("input", "exponent"),
    "clamp": ("input", "min", "max"),
    "where": ("condition", "input", "other"),
}
# Keyword arguments that are fine at their default value (and only there).
_HARMLESS = {"alpha": 1, "inplace": False, "rounding_mode": None}
# --8<-- [end:ops]

@dataclass(frozen=True)
class Pointwise:
    """One elementwise operation in canonical form.

    ``op`` is a name from UNARY, BINARY, COMPARE, or "clamp" / "where".
    ``operands`` are Nodes or Python numbers, in the order of ``_PARAMETERS``
    (so "where" is (condition, input, other) whatever the spelling was).
    "clamp" keeps its bounds, numbers or None, in ``low`` and ``high``.
    """

    op: str
    operands: tuple[Argument, ...]
    low: float | None = None
    high: float | None = None

    @property
    def input_nodes(self) -> list[Node]:
        return [a for a in self.operands if isinstance(a, Node)]


# --8<-- [start:canonical_name]
def _canonical_name(node: Node) -> str | None:
    """The operation a call_function / call_method node performs, if elementwise; else None.

    A ``call_method`` node is looked up by its target in ``_METHODS`` (a
    target that is not a string is None). A ``call_function`` node's target
    is looked up in ``_OPERATORS`` first (``x + y`` records
    ``operator.add``); otherwise by its ``qualified_name``: the first dotted
    part must be a library minifx has an adapter for (``library_packages()``,
    so ``numpy.exp`` is not ``tensor.exp``), and the rest is looked up in
    ``_FUNCTIONS`` (``sigmoid``, ``nn.functional.relu``). A target whose
    name cannot be found (``qualified_name`` raises RuntimeError or
    AttributeError) is None. Other ops are None.
    """
    if node.op == "call_method":
        return _METHODS.get(node.target) if isinstance(node.target, str) else None
    if node.op != "call_function":
        return None
    if node.target in _OPERATORS:
        return _OPERATORS[node.target]
    try:
        path = qualified_name(node.target)
    except (RuntimeError, AttributeError):
        return None
    package, _, rest = path.partition(".")
    if package not in library_packages():  # tensor.sigmoid, torch.sigmoid
        return None
    return _FUNCTIONS.get(rest)


def _bind(names: tuple[str, ...], args: tuple, kwargs: dict[str, Any]) -> dict | None:
    """args and kwargs by parameter name; None for anything unexpected.

    The args fill ``names`` in order (more args than names: None). A keyword
    that is one of ``names`` fills it, unless an arg filled it already
    (None). Any other keyword is allowed only when ``_HARMLESS`` lists it
    with exactly that value (``alpha=1``, ``inplace=False``,
    ``rounding_mode=None``); it is then left out of the result. Anything
    else (``alpha=2``, ``inplace=True``, an unknown keyword) gives None.
    Names nobody filled are simply missing from the result.
    """
    if len(args) > len(names):
        return None
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key in bound:
            return None
        if key in names:
            bound[key] = value
        elif key not in _HARMLESS or _HARMLESS[key] != value:
            return None  # add(alpha=2), relu(inplace=True), div(rounding_mode=...)
    return bound
# --8<-- [end:canonical_name]


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real)


# --8<-- [start:as_pointwise]
def as_pointwise(node: Node) -> Pointwise | None:
    """The canonical form of ``node`` if it is an elementwise operation the
    numba backend knows, with operands that are Nodes or plain numbers."""
    op = _canonical_name(node)
    if op is None:
        return None
    args, kwargs = node.args, node.kwargs
    if node.op == "call_method" and op == "where":
        # x.where(condition, y) is where(condition, x, y)
        if len(args) != 3 or kwargs:
            return None
        args = (args[1], args[0], args[2])
    bound = _bind(_PARAMETERS[op], args, kwargs)
    if bound is None:
        return None
    if op == "clamp":
        low, high = bound.get("min"), bound.get("max")
        if not all(b is None or _is_number(b) for b in (low, high)) or (low, high) == (None, None):
            return None
        operands: tuple[Argument, ...] = (bound.get("input"),)
    else:
        if set(bound) != set(_PARAMETERS[op]):
            return None  # a required operand is missing
        operands = tuple(bound[name] for name in _PARAMETERS[op])
        low = high = None
    if not all(isinstance(a, Node) or _is_number(a) for a in operands):
        return None
    if not any(isinstance(a, Node) for a in operands):
        return None
    return Pointwise(op, operands, low, high)
# --8<-- [end:as_pointwise]


# --8<-- [start:reductions]
# Reductions a fused group may hold: over the last dim, keeping it (the shape
# of ``x.sum(-1, keepdim=True)``), so that their result broadcasts back over
# the row they came from. That is how softmax and layer_norm are written
# from primitives; ``fusion.py`` wraps such a reduction in the elementwise
# work before it (its prologue) and after it (its epilogue).
REDUCTIONS = ("sum", "mean", "amax")
_REDUCTION_PARAMETERS = ("input", "dim", "keepdim")
_REDUCTION_HARMLESS = {"dtype": None}


@dataclass(frozen=True)
class Reduction:
    """``op`` over the last dim of ``operands[0]``, keeping that dim (size 1)."""

    op: str
    operands: tuple[Node]

    @property
    def input_nodes(self) -> list[Node]:
        return [self.operands[0]]


def _last_dim(dim: Any, ndim: int) -> bool:
    """Is ``dim`` (an int, or a one-element tuple or list) the last of ``ndim`` dims?"""
    if isinstance(dim, (tuple, list)) and len(dim) == 1:
        dim = dim[0]
    return isinstance(dim, int) and not isinstance(dim, bool) and ndim >= 1 \
        and dim in (-1, ndim - 1)


# --8<-- [start:as_reduction]
def as_reduction(node: Node, ndim: int) -> Reduction | None:
    """The canonical form of ``node`` if it is a sum, mean or amax over the last
    of ``ndim`` dims with ``keepdim=True``, in any spelling; else None.

    The op is a ``call_method`` target in ``REDUCTIONS`` (``x.sum(...)``), or
    a ``call_function`` whose ``qualified_name`` is a library package (see
    ``library_packages``) followed by a name in ``REDUCTIONS``
    (``tensor.sum``, ``torch.amax``); a target without a name is None. The
    keyword arguments that ``_REDUCTION_HARMLESS`` lists at their harmless
    value (``dtype=None``) are dropped; the rest, with the args, are bound to
    ``_REDUCTION_PARAMETERS`` (``_bind``, which refuses anything else). The
    input must be a Node, ``keepdim`` exactly True, and ``dim`` the last dim
    (``_last_dim``: -1 or ``ndim - 1``, alone or in a one-item tuple or list).
    """
    op = None
    if node.op == "call_method" and node.target in REDUCTIONS:
        op = node.target
    elif node.op == "call_function":
        try:
            package, _, rest = qualified_name(node.target).partition(".")
        except (RuntimeError, AttributeError):
            return None
        if package in library_packages() and rest in REDUCTIONS:
            op = rest
    if op is None:
        return None
    kwargs = {k: v for k, v in node.kwargs.items()
              if k not in _REDUCTION_HARMLESS or _REDUCTION_HARMLESS[k] != v}
    bound = _bind(_REDUCTION_PARAMETERS, node.args, kwargs)
    if bound is None or not isinstance(bound.get("input"), Node):
        return None
    if bound.get("keepdim") is not True or not _last_dim(bound.get("dim"), ndim):
        return None
    return Reduction(op, (bound["input"],))
# --8<-- [end:as_reduction]
# --8<-- [end:reductions]
