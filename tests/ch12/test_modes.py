"""Chapter 12: the two kinds of modes see what they should, stack, and re-enter as torch's.

A TensorFunctionMode sees public calls; it is checked against the per-type
protocol (a handler type sees the same calls in the same order) and
against torch's TorchFunctionMode on the same program. A
TensorDispatchMode sees primitives: an nn module shows as the primitives
it is made of, and torch's TorchDispatchMode on the torch twin sees the
ATen ops our table maps to.
"""

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

import tensor
import tensor.nn.functional as F
from tensor import ops
from tensor.dispatch import TensorDispatchMode
from tensor.overrides import TensorFunctionMode


class Log(TensorDispatchMode):
    def __init__(self, tag="", seen=None):
        self.tag, self.seen = tag, [] if seen is None else seen

    def __tensor_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(self.tag + func.name)
        return func(*args, **(kwargs or {}))


class FunctionLog(TensorFunctionMode):
    def __init__(self, seen=None):
        self.seen = [] if seen is None else seen

    def __tensor_function__(self, func, types, args=(), kwargs=None):
        self.seen.append(func.__name__)
        return func(*args, **(kwargs or {}))


def test_linear_shows_its_primitive():
    layer, x = tensor.nn.Linear(3, 2), tensor.randn(4, 3)
    with Log() as log:
        layer(x)
    assert log.seen == ["linear"]


def test_a_small_network_shows_the_primitives_it_is_made_of():
    net = tensor.nn.Sequential(tensor.nn.Conv2d(3, 4, 3), tensor.nn.BatchNorm2d(4).eval(),
                               tensor.nn.ReLU(), tensor.nn.MaxPool2d(2), tensor.nn.Flatten(),
                               tensor.nn.Linear(36, 5), tensor.nn.Softmax(dim=1))
    x = tensor.randn(2, 3, 8, 8)
    with Log() as log:
        y = net(x)
    assert log.seen == ["conv2d", "batch_norm", "relu", "max_pool2d", "reshape", "linear",
                        "softmax"]
    tensor.testing.assert_close(y, net(x))  # the mode changed nothing


def test_primitives_are_named_objects():
    assert repr(ops.add) == "tensor.ops.add" and ops.add.name == "add"
    assert ops.PRIMITIVES["conv2d"] is ops.conv2d
    assert callable(ops.sum.meta)
    tensor.testing.assert_close(ops.add(tensor.ones(2), tensor.ones(2)), tensor.full((2,), 2.0))
    tensor.testing.assert_close(ops.sum(tensor.ones(2, 3), (1,), False), tensor.full((2,), 3.0))


def test_dispatch_modes_stack_and_the_handler_runs_beneath_its_mode():
    seen = []
    x = tensor.randn(3)
    with Log("outer:", seen), Log("inner:", seen):
        y = tensor.relu(x) + 1.0
    # inner (the top) is asked first; calling func there passes the call to outer
    assert seen == ["inner:relu", "outer:relu", "inner:add", "outer:add"]
    tensor.testing.assert_close(y, tensor.relu(x) + 1.0)


def test_a_handler_may_call_other_primitives_which_go_beneath_it():
    seen = []

    class Double(TensorDispatchMode):
        def __tensor_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return ops.mul(out, 2.0) if func is ops.relu else out  # not seen by Double again

    x = tensor.tensor([-1.0, 2.0])
    with Log("outer:", seen), Double():
        y = tensor.relu(x)
    assert seen == ["outer:relu", "outer:mul"]
    assert y.tolist() == [0.0, 4.0]


def test_a_mode_is_entered_once_and_left_in_order():
    mode = Log()
    with mode, pytest.raises(RuntimeError, match="already active"):
        mode.__enter__()
    a, b = Log(), Log()
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="out of order"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)


def test_function_mode_sees_what_the_per_type_protocol_sees():
    calls = []

    class Logged(tensor.Tensor):  # a subclass: the per-type protocol, operators included
        @classmethod
        def __tensor_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func.__name__)
            return super().__tensor_function__(func, types, args, kwargs)

    def program(x, w):
        y = F.linear(x, w)
        return (tensor.relu(y) * 2.0).sum(dim=1).view(-1, 1) + y.t()[0]

    x, w = tensor.randn(4, 3), tensor.randn(2, 3)
    program(x.as_subclass(Logged), w)
    with FunctionLog() as log:
        program(x, w)
    assert log.seen == calls


def test_function_mode_sees_the_calls_torch_function_mode_sees():
    class TorchLog(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    def program(lib, x):
        return lib.sigmoid(x).sum(dim=0).neg()

    x, tx = tensor.randn(3, 4), torch.randn(3, 4)
    with FunctionLog() as ours:
        program(tensor, x)
    with TorchLog() as theirs:
        program(torch, tx)
    assert ours.seen == theirs.seen == ["sigmoid", "sum", "neg"]


def test_function_modes_stack_and_reenter_like_torch():
    order = []

    class Tag(TensorFunctionMode):
        def __init__(self, tag):
            self.tag = tag

        def __tensor_function__(self, func, types, args=(), kwargs=None):
            order.append(self.tag)
            return func(*args, **(kwargs or {}))

    x = tensor.ones(2)
    with Tag("outer"), Tag("inner"):
        tensor.relu(x)
    assert order == ["inner", "outer"]


def test_function_mode_may_replace_a_call():
    class NoSigmoid(TensorFunctionMode):
        def __tensor_function__(self, func, types, args=(), kwargs=None):
            if func is tensor.sigmoid:
                return tensor.zeros(*args[0].shape)
            return NotImplemented  # passes the call on, as a handler's NotImplemented does

    with NoSigmoid():
        assert tensor.sigmoid(tensor.ones(2)).tolist() == [0.0, 0.0]
        assert tensor.relu(tensor.ones(2)).tolist() == [1.0, 1.0]


# our primitive -> the ATen ops torch's dispatch mode sees for the same module (in eager,
# torch computes a 1x1 adaptive pool as a mean, and eval BatchNorm allocates its saved stats)
ATEN = {"linear": ["addmm"], "conv2d": ["convolution"], "relu": ["relu"],
        "max_pool2d": ["max_pool2d_with_indices"], "adaptive_avg_pool2d": ["mean"],
        "batch_norm": ["empty", "native_batch_norm"], "reshape": ["view"]}


def test_dispatch_mode_sees_what_torch_dispatch_mode_sees_through_a_small_table():
    class TorchLog(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.overloadpacket.__name__ not in ("t", "detach"):
                self.seen.append(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    def build(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
                                 lib.nn.MaxPool2d(2), lib.nn.AdaptiveAvgPool2d(1),
                                 lib.nn.Flatten(), lib.nn.Linear(4, 2)).eval()

    ours_model, x = build(tensor), tensor.randn(2, 3, 8, 8)
    theirs_model, tx = build(torch), torch.randn(2, 3, 8, 8)
    with Log() as ours:
        ours_model(x)
    with torch.no_grad(), TorchLog() as theirs:
        theirs_model(tx)
    assert [aten for name in ours.seen for aten in ATEN[name]] == theirs.seen
