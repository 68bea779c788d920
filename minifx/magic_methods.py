"""The one table of Python operators that minifx knows.

Two parts of minifx read it: the Proxy installs a method for every entry (so
``proxy + 1`` records a ``call_function`` node whose target is
``operator.add``), and code generation prints a ``call_function`` node whose
target is one of these ``operator`` functions as the operator itself
(``add = x + y`` rather than ``add = operator.add(x, y)``). Adding an operator
to minifx is one line here.
"""

from __future__ import annotations

import operator

# --8<-- [start:tables]
# Binary operators that have a reflected form (``__radd__`` ...): ``2 - x``
# on a Proxy calls ``x.__rsub__(2)``, which records ``operator.sub(2, x)``.
reflectable_magic_methods: dict[str, str] = {
    "add": "{} + {}",
    "sub": "{} - {}",
    "mul": "{} * {}",
    "floordiv": "{} // {}",
    "truediv": "{} / {}",
    "div": "{} / {}",
    "mod": "{} % {}",
    "pow": "{} ** {}",
    "lshift": "{} << {}",
    "rshift": "{} >> {}",
    "and_": "{} & {}",
    "or_": "{} | {}",
    "xor": "{} ^ {}",
    "getitem": "{}[{}]",
    "matmul": "{} @ {}",
}

# Every operator printed as an operator: comparisons and unary operators
# (which have no reflected form) plus all of the above.
magic_methods: dict[str, str] = {
    "eq": "{} == {}",
    "ne": "{} != {}",
    "lt": "{} < {}",
    "gt": "{} > {}",
    "le": "{} <= {}",
    "ge": "{} >= {}",
    "pos": "+{}",
    "neg": "-{}",
    "invert": "~{}",
    **reflectable_magic_methods,
}

# In-place operators: printed as a statement, then the result rebinds the
# first operand (``x += 1;  iadd = x``).
inplace_methods: dict[str, str] = {
    "iadd": "{} += {}",
    "iand": "{} &= {}",
    "ifloordiv": "{} //= {}",
    "ilshift": "{} <<= {}",
    "imod": "{} %= {}",
    "imul": "{} *= {}",
    "imatmul": "{} @= {}",
    "ior": "{} |= {}",
    "ipow": "{} **= {}",
    "irshift": "{} >>= {}",
    "isub": "{} -= {}",
    "itruediv": "{} /= {}",
    "ixor": "{} ^= {}",
}
# --8<-- [end:tables]


def dunder(name: str) -> str:
    """The special-method name for a table entry: ``and_`` -> ``__and__``."""
    return f"__{name.rstrip('_')}__"


def reflected_dunder(name: str) -> str:
    """The reflected special-method name: ``sub`` -> ``__rsub__``."""
    return f"__r{name.rstrip('_')}__"


def operator_function(name: str):
    """The ``operator`` function a table entry records (``div`` is ``truediv``)."""
    return getattr(operator, "truediv" if name == "div" else name)


def _by_function(table: dict[str, str]) -> dict[object, str]:
    """The table keyed by the ``operator`` functions themselves (``div`` has none)."""
    return {getattr(operator, name): fmt for name, fmt in table.items()
            if hasattr(operator, name)}


# Code generation asks once per node: one dict lookup answers.
_operator_formats = _by_function(magic_methods)
_inplace_formats = _by_function(inplace_methods)


def operator_format(target: object) -> str | None:
    """The format string that prints a call of ``target`` as an operator, if any."""
    if getattr(target, "__module__", None) != "_operator":
        return None
    return _operator_formats.get(target)


def inplace_format(target: object) -> str | None:
    """The format string for an in-place operator target, if any."""
    if getattr(target, "__module__", None) != "_operator":
        return None
    return _inplace_formats.get(target)
