"""Views from ``expand`` share writable memory as torch's do, and shape errors
name the operation and the shapes (SPEC section 5)."""

import re

import numpy as np
import pytest
import torch

import tensor
import tensor.nn as nn
import tensor.nn.functional as F


def test_numpy_of_an_expand_view_is_writable_and_shares_memory_like_torch():
    for lib in (tensor, torch):
        base = lib.zeros(3)
        view = base.expand(2, 3)
        array = view.numpy()
        assert array.flags.writeable
        array[0, 1] = 5.0  # one memory cell: every row sees it, and so does the base
        np.testing.assert_array_equal(np.asarray(base.numpy()), [0.0, 5.0, 0.0])
        np.testing.assert_array_equal(np.asarray(view.numpy()), [[0.0, 5.0, 0.0]] * 2)


@pytest.mark.parametrize("write", [
    lambda v: v.add_(1), lambda v: v.copy_(tensor.ones(2, 3)), lambda v: v.uniform_(),
    lambda v: v.normal_(),
])
def test_in_place_ops_into_an_expand_view_are_refused_as_in_torch(write):
    view = tensor.zeros(3).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        write(view)


def test_fill_zero_and_setitem_on_an_expand_view_write_through_as_in_torch():
    for lib in (tensor, torch):
        base = lib.zeros(3)
        base.expand(2, 3).fill_(2.0)
        base.expand(2, 3)[0, 0] = 7.0
        np.testing.assert_array_equal(np.asarray(base.numpy()), [7.0, 2.0, 2.0])
        base.expand(2, 3).zero_()
        assert float(base.sum()) == 0.0


def torch_message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return str(info.value)


# (our call, torch's call, op name, shapes that the message must name)
CASES = [
    ("conv2d channels",
     lambda L: L.nn.functional.conv2d(L.randn(1, 3, 5, 5), L.randn(4, 2, 3, 3)),
     "conv2d", "[1, 3, 5, 5] and [4, 2, 3, 3]"),
    ("linear", lambda L: L.nn.functional.linear(L.randn(3, 5), L.randn(2, 4)),
     "linear", "[3, 5] and [2, 4]"),
    ("Linear layer", lambda L: L.nn.Linear(4, 2)(L.randn(3, 5)), "linear", "[3, 5] and [2, 4]"),
    ("Conv2d layer", lambda L: L.nn.Conv2d(4, 2, 3)(L.randn(1, 3, 5, 5)),
     "conv2d", "[1, 3, 5, 5] and [2, 4, 3, 3]"),
    ("BatchNorm2d layer", lambda L: L.nn.BatchNorm2d(4).eval()(L.randn(1, 3, 5, 5)),
     "batch_norm", "[1, 3, 5, 5] and [4]"),
    ("LayerNorm layer", lambda L: L.nn.LayerNorm(4)(L.randn(1, 3, 5, 5)),
     "layer_norm", "[1, 3, 5, 5]"),
    ("cat", lambda L: L.cat([L.randn(2, 3), L.randn(2, 4)]), "cat", "[2, 3] and [2, 4]"),
    ("cat ndim", lambda L: L.cat([L.randn(2, 3), L.randn(3)]), "cat", "[2, 3] and [3]"),
    ("view size", lambda L: L.randn(2, 3).view(4, 2), "view", "[2, 3] and [4, 2]"),
    ("view strides", lambda L: L.randn(2, 3).t().view(6), "view", "[3, 2] and [6]"),
    ("reshape", lambda L: L.randn(2, 3).reshape(5), "reshape", "[2, 3] and [5]"),
    ("matmul", lambda L: L.randn(2, 3) @ L.randn(4, 3), "matmul", "[2, 3] and [4, 3]"),
    ("add", lambda L: L.randn(2, 3) + L.randn(4, 3), "add", "[2, 3] and [4, 3]"),
]


@pytest.mark.parametrize("label, call, op, shapes", CASES, ids=[c[0] for c in CASES])
def test_shape_errors_keep_torch_s_sentence_and_name_the_op_and_shapes(backend, label, call,
                                                                       op, shapes):
    theirs = torch_message(lambda: call(torch))
    with pytest.raises(RuntimeError) as info:
        call(tensor)
    ours = str(info.value)
    assert theirs.split("\n")[0].rstrip(".") in ours  # torch's sentence, then ours
    assert f"(in {op}: shape" in ours and shapes in ours


@pytest.mark.parametrize("call, error, words", [
    (lambda: nn.Softmax(dim=5)(tensor.randn(3)), IndexError, ("softmax():", "got 5")),
    (lambda: nn.Conv2d(1, 1, 5)(tensor.randn(1, 1, 2, 2)), RuntimeError,
     ("in conv2d: shapes [1, 1, 2, 2] and [1, 1, 5, 5]",)),
    (lambda: nn.BatchNorm2d(3)(tensor.randn(3)), ValueError,
     ("in BatchNorm2d: input shape [3]",)),
    (lambda: nn.MaxPool2d(2)(tensor.randn(3)), RuntimeError, ("max_pool2d():", "[3]")),
], ids=["Softmax", "Conv2d kernel", "BatchNorm2d ndim", "MaxPool2d ndim"])
def test_layer_modules_given_a_wrong_input_name_the_op_and_the_shape(call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value)


def test_embedding_index_error_names_the_op_and_the_weight_shape():
    with pytest.raises(IndexError, match=re.escape("index out of range in self (in embedding: "
                                                   "indices from 0 to 5, weight of shape [4, 3])")):
        nn.Embedding(4, 3)(tensor.tensor([0, 5]))
    with pytest.raises(RuntimeError, match=re.escape(
            "mat1 and mat2 shapes cannot be multiplied (3x5 and 4x2) (in linear: shapes [3, 5] "
            "and [2, 4])")):
        F.linear(tensor.randn(3, 5), tensor.randn(2, 4))
