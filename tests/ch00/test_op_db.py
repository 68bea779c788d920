"""Every entry of the op table (op_db.py) on both backends, against NumPy and torch.

For each sample: the function and the method give torch's shape, dtype and
values, and NumPy's values; each error case fails with a message that names
the operation and the shapes or dtypes.
"""

import numpy as np
import pytest
import torch

import tensor
from tests.ch00.op_db import OPS
from tests.helpers import check


def to_lib(lib, value):
    if isinstance(value, (np.ndarray, np.generic)):  # a 0-d sample is a NumPy scalar
        return lib.from_numpy(np.array(value, copy=True))
    if isinstance(value, list):
        return [to_lib(lib, v) for v in value]
    return value


def inputs(lib, sample):
    args = [to_lib(lib, a) for a in sample.args]
    if not isinstance(args[0], list):
        args[0] = sample.view(args[0])
    return args


def numpy_inputs(sample):
    args = list(sample.args)
    if isinstance(args[0], (np.ndarray, np.generic)):
        args[0] = np.asarray(sample.view(torch.from_numpy(np.array(args[0]))).numpy())
    return args


def compare(op, ours, theirs, reference, where):
    if isinstance(theirs, tuple):  # chunk, split, unbind, max/min with a dim
        assert isinstance(ours, tuple) and len(ours) == len(theirs), where
        for i, (o, t) in enumerate(zip(ours, theirs)):
            compare(op, o, t, reference[i] if reference is not None else None, where)
        return
    tol = {"rtol": 0.0, "atol": 0.0} if op.exact else {"rtol": op.tolerance,
                                                       "atol": op.tolerance}
    check(ours, theirs, **tol)
    if reference is not None:
        expected = np.asarray(reference)
        assert tuple(ours.shape) == expected.shape, where
        np.testing.assert_allclose(ours.numpy().astype(np.float64),
                                   expected.astype(np.float64), rtol=op.tolerance * 10,
                                   atol=op.tolerance * 10, err_msg=where)


def samples_of(op):
    for dtype in op.dtypes:
        for sample in op.samples(dtype):
            yield dtype, sample


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_matches_torch_and_numpy(backend, op):
    for dtype, sample in samples_of(op):
        where = f"{op.name} {dtype} {sample.layout} {[getattr(a, 'shape', a) for a in sample.args]}"
        ours_args, torch_args = inputs(tensor, sample), inputs(torch, sample)
        try:
            theirs = getattr(torch, op.name)(*torch_args, **sample.kwargs)
        except (RuntimeError, TypeError, NotImplementedError):
            # What torch refuses for these dtypes (bool subtraction, bitwise on floats),
            # tensor refuses too; the error cases check the message.
            with pytest.raises((TypeError, RuntimeError)):
                getattr(tensor, op.name)(*ours_args, **sample.kwargs)
            continue
        with np.errstate(all="ignore"):  # log of a negative int: NaN, as in torch
            reference = op.ref(*numpy_inputs(sample), **sample.kwargs)
        ours = getattr(tensor, op.name)(*ours_args, **sample.kwargs)
        compare(op, ours, theirs, reference, where)
        if op.method:
            method = getattr(ours_args[0], op.name)(*ours_args[1:], **sample.kwargs)
            compare(op, method, theirs, reference, where + " (method)")


ERRORS = [(op, case) for op in OPS for case in op.errors]


@pytest.mark.parametrize("op, case", ERRORS,
                         ids=[f"{op.name}-{i}" for i, (op, _) in enumerate(ERRORS)])
def test_op_errors_name_the_op_and_the_shapes_or_dtypes(backend, op, case):
    args = [to_lib(tensor, a) for a in case.args]
    with pytest.raises(case.error) as info:
        getattr(tensor, op.name)(*args, **case.kwargs)
    message = str(info.value)
    for word in case.words:
        assert word in message, f"{op.name}: {word!r} not in {message!r}"


def test_every_public_math_and_shape_op_is_in_the_table():
    creation = {"Size", "arange", "as_tensor", "broadcast_shapes", "empty", "empty_like",
                "float32", "from_numpy", "full", "full_like", "is_tensor", "manual_seed",
                "numel", "ones", "ones_like", "rand", "rand_like", "randn", "randn_like",
                "return_types", "tensor", "zeros", "zeros_like", "max", "min"}
    public = set(tensor._functions.__all__) - creation
    assert public <= {op.name for op in OPS}, public - {op.name for op in OPS}
