"""Every math op of `tensor` against torch, on the same data, on every backend.

Inputs come in several layouts (contiguous, permuted, sliced with a step,
expanded with stride 0), several dtypes, with size-0 and size-1 dims and
negative dims; torch is the oracle.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor
from tensor._ops import OPS
from tests.ch00.tensor_helpers import data, pair, views
from tests.helpers import check

ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------------------
# unary
# ---------------------------------------------------------------------------

UNARY = [op.name for op in OPS if op.kind == "unary" and op.public]


# Each unary op as function and method, every dtype, shape and layout, against torch
# and NumPy: the op table (op_db.py, test_op_db.py).


def test_unary_operators(backend):
    ours, theirs = pair(data((3, 4)))
    check(-ours, -theirs)
    check(abs(ours), abs(theirs))
    check(-ours.t(), -theirs.t())


@pytest.mark.filterwarnings("ignore:invalid value encountered in logaddexp")
def test_unary_extremes_match_torch(backend):
    values = np.array(
        [-1000.0, -100.0, -20.0, -1e-8, 0.0, 1e-8, 20.0, 100.0, 1000.0, np.inf, -np.inf, np.nan],
        dtype=np.float32,
    )
    ours, theirs = pair(values)
    for op in UNARY:
        check(getattr(tensor, op)(ours), getattr(torch, op)(theirs))


# ---------------------------------------------------------------------------
# binary
# ---------------------------------------------------------------------------


OVERFLOWS = """
import sys, tensor
big, zero = tensor.full((N,), 3e38), tensor.zeros(N)
for case in (big * 10.0, big + big, -big - big, 10.0 * big, big * big, big ** 2,
             zero * float("inf"), zero / zero, big.sum()):
    print(case.tolist())
"""


@pytest.mark.parametrize("name", tensor.backend.available())
@pytest.mark.parametrize("n", [1, 10, 1000])
def test_overflow_and_nan_come_without_a_warning_as_in_torch(name, n):
    """3e38 * 10 is inf and 0 * inf NaN in torch, silently. NumPy warns, on the few
    elements the fast backend hands it and in the NumPy backend; tensor turns those
    warnings off when it is imported. A fresh process with ``-W error`` shows what a
    user sees: pytest sets its own warning filters around each test file's import."""
    script = OVERFLOWS.replace("N", str(n))
    done = subprocess.run([sys.executable, "-W", "error", "-c", script], capture_output=True,
                          text=True, env={**os.environ, "TENSOR_BACKEND": name}, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    big, zero = torch.full((n,), 3e38), torch.zeros(n)
    expected = [big * 10.0, big + big, -big - big, 10.0 * big, big * big, big ** 2,
                zero * float("inf"), zero / zero, big.sum()]
    assert done.stdout.splitlines() == [str(t.tolist()) for t in expected]

# Every binary op as function and method, broadcast shape pairs and dtype pairs (torch's
# promotion; what torch refuses is refused), views and Python scalars: op_db.py.


def test_binary_on_views(backend):
    for _, oa, ta in views((3, 4)):
        for _, ob, tb in views((3, 4)):
            check(oa + ob, ta + tb)
            check(oa * ob, ta * tb)
            check(tensor.div(oa, ob), torch.div(ta, tb))
            check(oa > ob, ta > tb)


OPERATORS = {
    "+": lambda x, y: x + y,
    "-": lambda x, y: x - y,
    "*": lambda x, y: x * y,
    "/": lambda x, y: x / y,
    "**": lambda x, y: x**y,
    "&": lambda x, y: x & y,
    "|": lambda x, y: x | y,
    ">": lambda x, y: x > y,
    "<": lambda x, y: x < y,
    ">=": lambda x, y: x >= y,
    "<=": lambda x, y: x <= y,
    "==": lambda x, y: x == y,
    "!=": lambda x, y: x != y,
}


@pytest.mark.parametrize("symbol", list(OPERATORS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
@pytest.mark.parametrize("scalar", [2, 2.5, True, -3], ids=repr)
def test_operators_with_python_scalars(backend, symbol, dtype, scalar):
    fn = OPERATORS[symbol]
    ours, theirs = pair(np.abs(data((2, 3), dtype)) if symbol == "**" else data((2, 3), dtype))
    for left, right, tleft, tright in (
        (ours, scalar, theirs, scalar),
        (scalar, ours, scalar, theirs),
    ):
        try:
            expected = fn(tleft, tright)
        except (RuntimeError, TypeError):
            with pytest.raises((RuntimeError, TypeError)):
                fn(left, right)
            continue
        check(fn(left, right), expected)


def test_promotion_rules():
    i64, f64, b = (
        tensor.ones(2, dtype=tensor.int64),
        tensor.ones(2, dtype=tensor.float64),
        tensor.ones(2, dtype=tensor.bool),
    )
    assert (i64 * 0.5).dtype is tensor.float32  # an int tensor meets a float number
    assert (f64 * 0.5).dtype is tensor.float64  # numbers do not upcast a float tensor
    assert (b + 1).dtype is tensor.int64
    assert (b + b).dtype is tensor.bool
    assert (i64 / 2).dtype is tensor.float32  # true division of ints
    assert (i64 > 1).dtype is tensor.bool
    zero_d = tensor.tensor(2.0, dtype=tensor.float64)
    assert (tensor.ones(2) * zero_d).dtype is tensor.float32  # a 0-d tensor ranks below dims
    assert (tensor.ones(2, dtype=tensor.int32) * zero_d).dtype is tensor.float64
    assert tensor.result_type(tensor.ones(2, dtype=tensor.int32), 1) is tensor.int32


def test_add_sub_alpha(backend):
    (oa, ta), (ob, tb) = pair(data((2, 3))), pair(data((3,)))
    check(tensor.add(oa, ob, alpha=2), torch.add(ta, tb, alpha=2))
    check(oa.sub(ob, alpha=0.5), ta.sub(tb, alpha=0.5))
    # a number as other is scaled too, keeping the tensor's dtype
    check(tensor.sub(oa, 1, alpha=3), torch.sub(ta, 1, alpha=3))
    check(tensor.add(oa, True, alpha=2), torch.add(ta, True, alpha=2))
    (oi, ti) = pair(np.arange(6).reshape(2, 3))
    check(tensor.add(oi, 2, alpha=3), torch.add(ti, 2, alpha=3))
    check(oi.sub(oi, alpha=2), ti.sub(ti, alpha=2))
    # a float alpha needs a floating-point result, as in torch
    for other in (oi, 2):
        with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
            torch.add(ti, other if isinstance(other, int) else ti, alpha=0.5)
        with pytest.raises(TypeError, match="add\\(\\): for integral input tensors, argument "
                                            "alpha must not be a floating point number"):
            tensor.add(oi, other, alpha=0.5)


def test_in_place_ops(backend):
    (oa, ta), (ob, tb) = pair(data((2, 3))), pair(data((3,)))
    same = oa
    oa += ob
    ta += tb
    assert oa is same
    check(oa, ta)
    oa.mul_(2)
    ta.mul_(2)
    check(oa, ta)
    oa.clamp_(min=-1.0, max=1.0)
    ta.clamp_(min=-1.0, max=1.0)
    check(oa, ta)
    ints = tensor.ones(3, dtype=tensor.int64)
    with pytest.raises(RuntimeError, match="can't be cast"):
        ints.add_(0.5)


# ---------------------------------------------------------------------------
# where, clamp, matmul
# ---------------------------------------------------------------------------


def test_where(backend):
    (oc, tc), (oa, ta), (ob, tb) = (
        pair(data((2, 1, 3), "bool")),
        pair(data((4, 1))),
        pair(data((3,), "int64")),
    )
    check(tensor.where(oc, oa, ob), torch.where(tc, ta, tb))
    check(tensor.where(oc, oa, 0.0), torch.where(tc, ta, 0.0))
    check(oa.where(oc, ob), ta.where(tc, tb))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_clamp(backend, dtype):
    for _, ours, theirs in views((3, 4), dtype):
        check(tensor.clamp(ours, min=-1), torch.clamp(theirs, min=-1))
        check(ours.clamp(max=1), theirs.clamp(max=1))
        check(ours.clamp(-0.5, 0.5), theirs.clamp(-0.5, 0.5))
        check(ours.clamp(min=2, max=-2), theirs.clamp(min=2, max=-2))
    (o, t), (olo, tlo) = pair(data((3, 4))), pair(data((4,)))
    check(tensor.clamp(o, min=olo), torch.clamp(t, min=tlo))


MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 1, 2, 3), (4, 3, 2)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 4)),
    ((3,), (2, 3, 1)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_matmul(backend, shapes, dtype):
    (oa, ta), (ob, tb) = pair(data(shapes[0], dtype)), pair(data(shapes[1], dtype))
    expected = torch.matmul(ta, tb)
    check(tensor.matmul(oa, ob), expected, rtol=1e-5, atol=1e-5)
    check(oa @ ob, expected, rtol=1e-5, atol=1e-5)
    check(oa.matmul(ob), expected, rtol=1e-5, atol=1e-5)


def test_matmul_on_views(backend):
    for _, oa, ta in views((4, 3)):
        for _, ob, tb in views((3, 2)):
            check(oa @ ob, ta @ tb)
        check(oa.t() @ oa, ta.t() @ ta)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------

# sum, mean, amax and amin over every dim spec, keepdim, dtype and layout: op_db.py.


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_reductions_of_empty_and_scalar(backend, op):
    for shape, dim in [((0, 3), 0), ((0, 3), 1), ((2, 0), None), ((), None), ((), 0), ((1,), 0)]:
        ours, theirs = pair(data(shape))
        kwargs = {} if dim is None else {"dim": dim}
        check(getattr(tensor, op)(ours, **kwargs), getattr(torch, op)(theirs, **kwargs))


def test_sum_dtype_argument(backend):
    ours, theirs = pair(data((3, 4), "int32"))
    check(ours.sum(), theirs.sum())
    check(ours.sum(dtype=tensor.float64), theirs.sum(dtype=torch.float64))
    check(ours.float().mean(1), theirs.float().mean(1))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_max_min_with_dim_return_values_and_indices(backend, op, dim, keepdim, dtype):
    for _, ours, theirs in views((3, 4), dtype):
        got = getattr(tensor, op)(ours, dim, keepdim=keepdim)
        want = getattr(torch, op)(theirs, dim, keepdim=keepdim)
        check(got.values, want.values)
        values, indices = got
        check(indices, want.indices)
        method = getattr(ours, op)(dim=dim, keepdim=keepdim)
        check(method[0], want[0])
        assert type(got).__name__ == op
        assert repr(got).startswith(f"tensor.return_types.{op}(\nvalues=tensor(")


def test_max_min_whole_and_elementwise(backend):
    (oa, ta), (ob, tb) = pair(data((3, 4))), pair(data((4,)))
    check(tensor.max(oa), torch.max(ta))
    check(oa.min(), ta.min())
    check(tensor.max(oa, ob), torch.max(ta, tb))
    check(tensor.min(oa, ob), torch.min(ta, tb))


def test_max_ties_and_nan_follow_torch(backend):
    values = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 1.0, np.nan, 2.0]], dtype=np.float32)
    ours, theirs = pair(values)
    for op in ("max", "min"):
        got, want = getattr(ours, op)(1), getattr(theirs, op)(1)
        check(got.values, want.values)
        check(got.indices, want.indices)
    check(ours.argmax(1), theirs.argmax(1))
    check(ours.argmax(), theirs.argmax())


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax(backend, dim, keepdim):
    for _, ours, theirs in views((3, 4), "float32"):
        check(
            tensor.argmax(ours, dim=dim, keepdim=keepdim),
            torch.argmax(theirs, dim=dim, keepdim=keepdim),
        )
        check(ours.argmax(dim, keepdim), theirs.argmax(dim, keepdim))


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax(backend, op, dim, dtype):
    for _, ours, theirs in views((2, 3, 5), dtype):
        expected = getattr(torch, op)(theirs, dim)
        check(getattr(tensor, op)(ours, dim), expected)
        check(getattr(ours, op)(dim), expected)
    big, tbig = pair(np.array([[1000.0, 0.0, -1000.0]], dtype=np.float32))
    check(getattr(tensor, op)(big, -1), getattr(torch, op)(tbig, -1))
    ints, tints = pair(data((2, 3), "int64"))
    check(
        getattr(tensor, op)(ints, 1, dtype=tensor.float32),
        getattr(torch, op)(tints, 1, dtype=torch.float32),
    )


# ---------------------------------------------------------------------------
# cat, stack
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_and_stack(backend, dim):
    (oa, ta), (ob, tb) = pair(data((2, 3))), pair(data((2, 3), "float64"))
    if dim == 0:
        (oc, tc) = pair(data((4, 3)))
    else:
        (oc, tc) = pair(data((2, 5)))
    check(tensor.cat([oa, ob], dim), torch.cat([ta, tb], dim))
    check(tensor.cat((oa, oc.t().t()), dim=dim), torch.cat((ta, tc), dim=dim))
    check(tensor.stack([oa, ob, oa.t().t()], dim), torch.stack([ta, tb, ta], dim))
    check(
        tensor.stack([oa, ob], dim=2 if dim == -1 else dim),
        torch.stack([ta, tb], dim=2 if dim == -1 else dim),
    )
    empty, tempty = pair(np.zeros((0,), np.float32))
    check(tensor.cat([oa, empty]), torch.cat([ta, tempty]))


# ---------------------------------------------------------------------------
# hypothesis: broadcasting and reductions over random shapes
# ---------------------------------------------------------------------------

dims_st = st.lists(st.integers(0, 3), min_size=0, max_size=4)


@st.composite
def broadcastable_shapes(draw):
    shape = draw(dims_st)
    other = [draw(st.sampled_from([s, 1])) for s in shape]
    cut = draw(st.integers(0, len(other)))
    return tuple(shape), tuple(other[cut:])


@settings(deadline=None, max_examples=50)
@given(
    shapes=broadcastable_shapes(),
    op=st.sampled_from(["add", "mul", "sub", "maximum", "lt", "div"]),
    swap=st.booleans(),
)
def test_hypothesis_broadcasting(shapes, op, swap):
    a_shape, b_shape = shapes if not swap else shapes[::-1]
    (oa, ta), (ob, tb) = pair(data(a_shape)), pair(data(b_shape, "int64"))
    check(getattr(tensor, op)(oa, ob), getattr(torch, op)(ta, tb))


@settings(deadline=None, max_examples=50)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data_=st.data())
def test_hypothesis_reductions(shape, data_):
    ndim = len(shape)
    dims = data_.draw(
        st.lists(
            st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim, unique_by=lambda d: d % ndim
        )
    )
    keepdim = data_.draw(st.booleans())
    ours, theirs = pair(data(tuple(shape), "float64"))
    for op in ("sum", "mean", "amax"):
        check(
            getattr(ours, op)(tuple(dims), keepdim=keepdim),
            getattr(theirs, op)(tuple(dims), keepdim=keepdim),
        )
