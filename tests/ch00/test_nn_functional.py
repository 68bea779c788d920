"""tensor.nn.functional against torch.nn.functional on identical inputs."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor
import tensor.nn.functional as F
from tests.ch00.nn_helpers import check, ours, randn, theirs

# Every test runs once per available backend (the `backend` fixture in conftest.py).
pytestmark = pytest.mark.usefixtures("backend")


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh", "gelu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activations(name, dtype):
    x = randn(3, 4, dtype=dtype)
    check(getattr(F, name)(ours(x)), getattr(TF, name)(torch.from_numpy(x)))


def test_gelu_tanh_and_relu_inplace():
    x = randn(5, 2)
    check(F.gelu(ours(x), approximate="tanh"), TF.gelu(torch.from_numpy(x), approximate="tanh"))
    t = ours(x)
    assert F.relu(t, inplace=True) is t
    check(t, TF.relu(torch.from_numpy(x)))


def test_relu_keeps_integer_dtype():
    x = np.array([-2, 0, 3], dtype=np.int64)
    check(F.relu(ours(x)), TF.relu(torch.from_numpy(x)))


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_softmax_and_log_softmax(dim):
    x = randn(2, 3, 4) * 10
    check(F.softmax(ours(x), dim), TF.softmax(torch.from_numpy(x), dim))
    check(F.log_softmax(ours(x), dim=dim), TF.log_softmax(torch.from_numpy(x), dim=dim))


def test_softmax_dtype_and_bad_dim():
    x = randn(2, 3)
    check(F.softmax(ours(x), 1, dtype=tensor.float64),
          TF.softmax(torch.from_numpy(x), 1, dtype=torch.float64))
    with pytest.raises(IndexError, match=r"range of \[-2, 1\], but got 2"):
        F.softmax(ours(x), 2)


def test_dropout():
    x = randn(200, 50) + 5
    check(F.dropout(ours(x), 0.3, training=False), torch.from_numpy(x))
    tensor.manual_seed(0)
    out = F.dropout(ours(x), 0.25)._array
    kept = out != 0
    np.testing.assert_allclose(out[kept], x[kept] / 0.75, rtol=1e-6)
    assert 0.2 < 1 - kept.mean() < 0.3
    tensor.manual_seed(0)
    np.testing.assert_array_equal(F.dropout(ours(x), 0.25)._array, out)  # the tensor RNG
    assert (F.dropout(ours(x), 1.0)._array == 0).all()
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        F.dropout(ours(x), 1.5)


@pytest.mark.parametrize("shape", [(4,), (2, 4), (2, 3, 4)])
def test_linear(shape):
    x, w, b = randn(*shape), randn(5, 4, seed=1), randn(5, seed=2)
    check(F.linear(ours(x), ours(w), ours(b)),
          TF.linear(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)))
    check(F.linear(ours(x), ours(w)), TF.linear(torch.from_numpy(x), torch.from_numpy(w)))


def test_linear_shape_mismatch_names_both_shapes():
    message = r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"
    with pytest.raises(RuntimeError, match=message):
        F.linear(ours(randn(2, 3)), ours(randn(5, 4)))
    with pytest.raises(RuntimeError, match=r"\(14x3 and 4x5\)"):
        F.linear(ours(randn(2, 7, 3)), ours(randn(5, 4)))
    # torch says the same
    with pytest.raises(RuntimeError, match=r"\(2x3 and 4x5\)"):
        TF.linear(torch.randn(2, 3), torch.randn(5, 4))


def test_unsupported_dtype_is_a_type_error_naming_it():
    ints = ours(np.ones((2, 4), dtype=np.int64))
    with pytest.raises(TypeError, match="linear.*tensor.int64"):
        F.linear(ints, ours(randn(5, 4)))
    with pytest.raises(TypeError, match="conv2d.*tensor.int64"):
        F.conv2d(ours(np.ones((1, 1, 3, 3), dtype=np.int64)), ours(randn(1, 1, 2, 2)))
    with pytest.raises(TypeError, match="tensor.float64"):
        F.linear(ours(randn(2, 4)), ours(randn(5, 4, dtype=np.float64)))
    with pytest.raises(TypeError, match="embedding.*tensor.float32"):
        F.embedding(ours(randn(3)), ours(randn(5, 2)))
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        F.relu([1.0, 2.0])


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize(
    "stride, padding, dilation, groups",
    [(1, 0, 1, 1), (2, 1, 1, 1), ((2, 1), (0, 2), (1, 2), 1), (1, 1, 1, 2), (1, 1, 2, 4),
     (1, "same", 1, 1), (1, "same", 2, 2), (2, "valid", 1, 1)],
)
def test_conv2d(stride, padding, dilation, groups):
    x, w, b = randn(2, 4, 9, 8), randn(8, 4 // groups, 3, 2, seed=1), randn(8, seed=2)
    check(
        F.conv2d(ours(x), ours(w), ours(b), stride, padding, dilation, groups),
        TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride,
                  padding, dilation, groups),
        1e-4,
    )


@pytest.mark.filterwarnings("ignore:Using padding='same'")
def test_conv2d_unbatched_and_even_kernel_same():
    x, w = randn(3, 6, 7), randn(2, 3, 2, 4, seed=1)
    check(F.conv2d(ours(x), ours(w), stride=np.int64(2), padding=[1]),
          TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=2, padding=1), 1e-4)
    check(F.conv2d(ours(x), ours(w), padding="same"),
          TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding="same"), 1e-4)


def test_conv2d_bad_input():
    x = ours(randn(2, 4, 10, 10))
    with pytest.raises(RuntimeError, match=r"weight of size \[8, 3, 3, 3\], expected "
                       r"input\[2, 4, 10, 10\] to have 3 channels, but got 4 channels"):
        F.conv2d(x, ours(randn(8, 3, 3, 3)))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        F.conv2d(ours(randn(1, 1, 2, 2)), ours(randn(1, 1, 3, 3)))
    with pytest.raises(RuntimeError, match=r"expected bias to be 1-dimensional with 8 elements"):
        F.conv2d(x, ours(randn(8, 4, 3, 3)), ours(randn(4)))
    with pytest.raises(RuntimeError, match="3D .* or 4D"):
        F.conv2d(ours(randn(4, 10)), ours(randn(8, 4, 3, 3)))
    with pytest.raises(ValueError, match="strided"):
        F.conv2d(x, ours(randn(8, 4, 3, 3)), stride=2, padding="same")


@settings(deadline=None, max_examples=30)
@given(
    n=st.integers(1, 2), cg=st.integers(1, 3), og=st.integers(1, 3), groups=st.integers(1, 3),
    h=st.integers(3, 9), w=st.integers(3, 9), kh=st.integers(1, 3), kw=st.integers(1, 3),
    stride=st.integers(1, 3), padding=st.integers(0, 2), dilation=st.integers(1, 2),
)
def test_conv2d_hypothesis(n, cg, og, groups, h, w, kh, kw, stride, padding, dilation):
    x, wt = randn(n, cg * groups, h, w), randn(og * groups, cg, kh, kw, seed=1)
    if h + 2 * padding < dilation * (kh - 1) + 1 or w + 2 * padding < dilation * (kw - 1) + 1:
        with pytest.raises(RuntimeError, match="Kernel size"):
            F.conv2d(ours(x), ours(wt), None, stride, padding, dilation, groups)
        return
    check(F.conv2d(ours(x), ours(wt), None, stride, padding, dilation, groups),
          TF.conv2d(torch.from_numpy(x), torch.from_numpy(wt), None, stride, padding,
                    dilation, groups), 1e-4)


@pytest.mark.parametrize(
    "kernel, stride, padding, dilation, ceil_mode",
    [(2, None, 0, 1, False), (3, 2, 1, 1, False), (3, 2, 1, 1, True), ((3, 2), (2, 3), (1, 0), 1,
     True), (2, 1, 1, 2, False)],
)
def test_max_pool2d(kernel, stride, padding, dilation, ceil_mode):
    x = randn(2, 3, 11, 8)
    check(F.max_pool2d(ours(x), kernel, stride, padding, dilation, ceil_mode),
          TF.max_pool2d(torch.from_numpy(x), kernel, stride, padding, dilation, ceil_mode))


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize(
    "kernel, stride, padding, ceil_mode",
    [(2, None, 0, False), (3, 2, 1, False), (3, 2, 1, True), ((3, 2), (2, 3), (1, 1), True)],
)
def test_avg_pool2d(kernel, stride, padding, ceil_mode, count_include_pad):
    x = randn(2, 3, 11, 8)
    check(F.avg_pool2d(ours(x), kernel, stride, padding, ceil_mode, count_include_pad),
          TF.avg_pool2d(torch.from_numpy(x), kernel, stride, padding, ceil_mode,
                        count_include_pad))


def test_pool_bad_input():
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(ours(randn(1, 1, 5, 5)), 2, padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.max_pool2d(ours(randn(1, 3, 2, 2)), 3)


@pytest.mark.parametrize("size", [1, 3, (2, 5), (None, 2), (7, 7), (0, 2)])
def test_adaptive_avg_pool2d(size):
    x = randn(2, 3, 7, 6)
    check(F.adaptive_avg_pool2d(ours(x), size), TF.adaptive_avg_pool2d(torch.from_numpy(x), size))
    check(F.adaptive_avg_pool2d(ours(x[0]), size),
          TF.adaptive_avg_pool2d(torch.from_numpy(x[0]), size))


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (4, 3, 5, 2)])
def test_batch_norm_eval_and_train(shape):
    x = randn(*shape)
    w, b = randn(3, seed=1), randn(3, seed=2)
    mean, var = randn(3, seed=3), np.abs(randn(3, seed=4)) + 0.5
    check(F.batch_norm(ours(x), ours(mean), ours(var), ours(w), ours(b)),
          TF.batch_norm(*map(torch.from_numpy, (x, mean, var, w, b))))
    our_mean, our_var = ours(mean), ours(var)
    torch_mean, torch_var = torch.from_numpy(mean.copy()), torch.from_numpy(var.copy())
    check(F.batch_norm(ours(x), our_mean, our_var, ours(w), ours(b), training=True,
                       momentum=0.3, eps=1e-3),
          TF.batch_norm(torch.from_numpy(x), torch_mean, torch_var, torch.from_numpy(w),
                        torch.from_numpy(b), training=True, momentum=0.3, eps=1e-3))
    check(our_mean, torch_mean)
    check(our_var, torch_var)
    check(F.batch_norm(ours(x), None, None, training=True),
          TF.batch_norm(torch.from_numpy(x), None, None, training=True))


def test_batch_norm_bad_input():
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(ours(randn(1, 3)), None, None, training=True)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(ours(randn(2, 3)), ours(randn(4)), ours(randn(4)))


def test_layer_norm():
    x, w, b = randn(2, 3, 4), randn(3, 4, seed=1), randn(3, 4, seed=2)
    check(F.layer_norm(ours(x), (3, 4), ours(w), ours(b)),
          TF.layer_norm(torch.from_numpy(x), (3, 4), torch.from_numpy(w), torch.from_numpy(b)))
    check(F.layer_norm(ours(x), 4, eps=0.1), TF.layer_norm(torch.from_numpy(x), (4,), eps=0.1))
    with pytest.raises(RuntimeError, match=r"normalized_shape=\[3\], expected input with shape "
                       r"\[\*, 3\], but got input of size\[2, 3, 4\]"):
        F.layer_norm(ours(x), [3])


def test_embedding():
    idx = np.array([[0, 2, 4], [4, 3, 1]], dtype=np.int64)
    w = randn(5, 3)
    check(F.embedding(ours(idx), ours(w)), TF.embedding(torch.from_numpy(idx), torch.from_numpy(w)))
    check(F.embedding(ours(idx.astype(np.int32)), ours(w)),
          TF.embedding(torch.from_numpy(idx.astype(np.int32)), torch.from_numpy(w)))
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding(ours(np.array([5])), ours(w))


def test_embedding_max_norm_renormalises_weight_in_place():
    idx = np.array([0, 2, 2], dtype=np.int64)
    w = randn(4, 3) * 3
    our_w, torch_w = ours(w), torch.from_numpy(w.copy())
    check(F.embedding(ours(idx), our_w, max_norm=1.0),
          TF.embedding(torch.from_numpy(idx), torch_w, max_norm=1.0))
    check(our_w, torch_w)


def test_functions_dispatch_to_tensor_function_handlers():
    calls = []

    class Spy:
        @classmethod
        def __tensor_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func)
            return "handled"

    spy = Spy()
    assert F.relu(spy) == "handled"
    assert F.conv2d(ours(randn(1, 1, 3, 3)), spy) == "handled"
    assert F.batch_norm(spy, None, None, training=True) == "handled"
    assert calls == [F.relu, F.conv2d, F.batch_norm]
    assert theirs(ours(randn(2))).shape == (2,)


def test_tensor_subclass_results_keep_the_subclass():
    class Tagged(tensor.Tensor):
        pass

    x = ours(randn(1, 2, 4, 4)).as_subclass(Tagged)
    assert type(F.relu(x)) is Tagged
    assert type(F.max_pool2d(x, 2)) is Tagged
    layer = tensor.nn.Conv2d(2, 3, 3)
    assert type(layer(x)) is Tagged
    weight = tensor.nn.Linear(3, 1).weight
    assert type(F.linear(ours(randn(2, 3)), weight)) is tensor.Tensor  # parameters do not spread
