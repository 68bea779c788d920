"""A float tensor to the power 2, 3, -1, -2, 1/2 or -1/2, computed as torch does.

torch does not call pow for these exponents: it multiplies, divides or
takes a square root, which is exact or nearly so and many times cheaper
(x * x is one multiply, where pow is a log, a multiply and an exp). Its
answers then are those operations' answers, to the bit, including where
they part from C's pow: (-0.0) ** 0.5 is sqrt(-0.0) = -0.0, and
(-inf) ** 0.5 is NaN. Both backends route these exponents here, so that
each gives torch's result.

Only a number exponent, as in torch: ``x ** tensor(2.0)`` runs pow. A number
reaches a backend's ``binary`` as a NumPy scalar, a tensor as an array,
even a 0-d one, and ``binary_scalar`` takes only numbers.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np


def _square(ops: ModuleType, a: np.ndarray) -> np.ndarray:
    return ops.binary_same_shape("mul", a, a)


# exponent -> how torch computes a ** exponent from other operations
_BY_OTHER_OPS = {
    1.0: lambda ops, a: np.array(a),  # a copy, as an array even of a NumPy scalar
    2.0: _square,
    3.0: lambda ops, a: ops.binary_same_shape("mul", _square(ops, a), a),
    -1.0: lambda ops, a: ops.binary_scalar("div", a, 1.0, True),
    -2.0: lambda ops, a: ops.binary_scalar("div", _square(ops, a), 1.0, True),
    0.5: lambda ops, a: ops.unary("sqrt", a),
    -0.5: lambda ops, a: ops.unary("rsqrt", a),
}


def is_number(exponent) -> bool:
    """Whether ``binary``'s exponent came from a number (a NumPy scalar), not a tensor."""
    return not isinstance(exponent, np.ndarray)


def by_other_ops(ops: ModuleType, a: np.ndarray, exponent) -> np.ndarray | None:
    """``a ** exponent`` from the backend ``ops``'s other entries when torch computes
    it so (a float ``a``, one of the exponents above), else None."""
    if a.dtype.kind != "f":
        return None
    way = _BY_OTHER_OPS.get(float(exponent))
    return None if way is None else way(ops, a)


def computed_by_other_ops(a: np.ndarray, exponent) -> bool:
    """Whether ``by_other_ops`` takes ``a ** exponent`` (an in-place pow then leaves it
    to the caller, which computes it out of place and copies it back)."""
    return a.dtype.kind == "f" and float(exponent) in _BY_OTHER_OPS
