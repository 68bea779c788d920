"""Chapter 0: the general path of the dispatch protocol, and the helpers it stands on.

`dispatch` asks the top function mode, then the handlers, then runs the
implementation; `_kind_of` classifies an argument type once; `_tensor_types`
gives a mode the Tensor types of a plain call; `relevant_args` finds the
arguments that take over; `disable_subclass_dispatch` turns Tensor
subclasses off for a while. Each is called directly here, with a recording
implementation, and through the public API.
"""

import collections

import numpy as np
import pytest

import tensor
from tensor import overrides
from tensor.overrides import TensorFunctionMode


def impl(*args, **kwargs):
    return ("impl", args, kwargs)


def func(*args, **kwargs):
    raise AssertionError("the public callable is only passed on, never called here")


class Handler:
    @classmethod
    def __tensor_function__(cls, f, types, args=(), kwargs=None):
        return ("handler", f, types, args, kwargs)


class Declines:
    @classmethod
    def __tensor_function__(cls, f, types, args=(), kwargs=None):
        return NotImplemented


class Sub(tensor.Tensor):
    pass


class Mode(TensorFunctionMode):
    def __init__(self, answer=None):
        self.calls, self.answer = [], answer

    def __tensor_function__(self, f, types, args=(), kwargs=None):
        self.calls.append((f, types, args, kwargs, tuple(overrides._function_modes)))
        if isinstance(self.answer, str) and self.answer == "raise":
            raise KeyError("from the mode")
        return ("mode", types) if self.answer is None else self.answer


@pytest.fixture(autouse=True)
def no_modes():
    """Each test starts and ends with no function mode and subclass dispatch on. What
    a buggy exercise leaves behind is cleared (then reported), so that it cannot fail
    the tests of another exercise run after it in the same process (``learn check``)."""
    assert overrides._function_modes == [] and overrides._subclass_dispatch_off == 0
    yield
    left = (list(overrides._function_modes), overrides._subclass_dispatch_off)
    overrides._function_modes.clear()
    overrides._subclass_dispatch_off = 0
    assert left == ([], 0), "a test left a mode on the stack or subclass dispatch off"


def test_dispatch_runs_the_implementation_when_nothing_takes_over():
    x = tensor.ones(2)
    assert overrides.dispatch(func, impl, (x, 2.0)) == ("impl", (x, 2.0), {})
    assert overrides.dispatch(func, impl, (x,), {"dim": 0}) == ("impl", (x,), {"dim": 0})
    assert overrides.dispatch(func, impl, ([x, (x,)],), None) == ("impl", ([x, (x,)],), {})


def test_dispatch_hands_a_handler_the_call():
    h = Handler()
    out = overrides.dispatch(func, impl, (1, [h]), {"k": h})
    assert out == ("handler", func, (Handler,), (1, [h]), {"k": h})
    with pytest.raises(TypeError, match="no implementation found"):
        overrides.dispatch(func, impl, (Declines(),))


def test_the_top_mode_is_asked_first_and_off_the_stack_while_it_runs():
    outer, inner = Mode(), Mode()
    x = tensor.ones(2)
    with outer, inner:
        out = overrides.dispatch(func, impl, (x, 3))
    assert out == ("mode", (tensor.Tensor,))
    assert outer.calls == []
    ((f, types, args, kwargs, stack),) = inner.calls
    assert f is func and args == (x, 3) and kwargs == {}
    assert stack == (outer,)  # inner is off the stack while it runs


def test_a_mode_gets_the_handler_types_ordered_else_the_tensor_types():
    mode = Mode()
    h, s, x = Handler(), tensor.ones(2).as_subclass(Sub), tensor.ones(1)
    with mode:
        overrides.dispatch(func, impl, (h, s), {"x": x})
        overrides.dispatch(func, impl, (x,), {"y": [x]})
        overrides.dispatch(func, impl, (1, "a"))
    assert [c[1] for c in mode.calls] == [(Handler, Sub), (tensor.Tensor,), ()]


def test_a_mode_that_declines_passes_the_call_on():
    mode = Mode(answer=NotImplemented)
    h = Handler()
    with mode:
        assert overrides.dispatch(func, impl, (h,))[0] == "handler"
        assert overrides.dispatch(func, impl, (1,), {"a": 2}) == ("impl", (1,), {"a": 2})
        assert overrides._function_modes == [mode]
    assert len(mode.calls) == 2


def test_a_mode_that_raises_is_back_on_the_stack():
    mode = Mode(answer="raise")
    with mode:
        with pytest.raises(KeyError, match="from the mode"):
            overrides.dispatch(func, impl, (1,))
        assert overrides._function_modes == [mode]


def test_a_mode_that_answers_falsy_is_answered():
    mode = Mode(answer=0)
    with mode:
        assert overrides.dispatch(func, impl, (Handler(),)) == 0


def test_a_mode_answer_is_told_from_not_implemented_by_identity():
    answer = np.array([1.0, 2.0])  # == and != on it compare elementwise
    with Mode(answer=answer):
        assert overrides.dispatch(func, impl, (1,)) is answer


def test_public_calls_take_the_general_path_with_a_mode():
    mode = Mode(answer=NotImplemented)
    x = tensor.tensor([-1.0, 2.0])
    with mode:
        y = tensor.relu(x)
    assert y.tolist() == [0.0, 2.0]
    assert mode.calls[0][0] is tensor.relu and mode.calls[0][1] == (tensor.Tensor,)


def _fresh(kind_of_type):
    """_kind_of on a type, checking that it records what it returns."""
    kind = overrides._kind_of(kind_of_type)
    assert overrides._KIND.pop(kind_of_type) == kind
    return kind


def test_kind_of_each_kind_of_type():
    Point = collections.namedtuple("Point", "x y")

    class Items(list):
        pass

    class Table(dict):
        pass

    class Plain:
        pass

    class NoneHandler:
        __tensor_function__ = None

    class Sub2(tensor.Tensor):
        pass

    class HandlerDict(dict):  # a dict first, whatever else it defines
        __tensor_function__ = Handler.__tensor_function__

    assert _fresh(Point) == overrides._CONTAINER
    assert _fresh(Items) == overrides._CONTAINER
    assert _fresh(Table) == overrides._MAPPING
    assert _fresh(HandlerDict) == overrides._MAPPING
    assert _fresh(Plain) == overrides._INERT
    assert _fresh(NoneHandler) == overrides._INERT
    assert _fresh(Sub2) == overrides._SUBCLASS
    assert _fresh(Handler) == overrides._HANDLER
    overrides._KIND[Handler] = overrides._HANDLER


def test_kind_of_before_tensor_is_registered(monkeypatch):
    class Sub3(tensor.Tensor):
        pass

    monkeypatch.setattr(overrides, "_base_tensor", None)
    assert _fresh(Sub3) == overrides._HANDLER


def test_containers_of_new_types_are_searched():
    Pair = collections.namedtuple("Pair", "a b")

    class Table(dict):
        pass

    h = Handler()
    assert overrides.relevant_args((Pair(1, h),)) == [h]
    assert overrides.relevant_args((Table(k=h),)) == [h]
    for t in (Pair, Table):
        overrides._KIND.pop(t, None)


def test_tensor_types_in_order_one_level_deep():
    x, s = tensor.ones(1), tensor.ones(1).as_subclass(Sub)
    assert overrides._tensor_types((x, s, x), {}) == (tensor.Tensor, Sub)
    assert overrides._tensor_types((1, [s, x]), {"a": x}) == (Sub, tensor.Tensor)
    assert overrides._tensor_types((2,), {"a": (x,), "b": s}) == (tensor.Tensor, Sub)
    assert overrides._tensor_types(([[x]], {"k": x}), {}) == ()  # not deeper, not in dicts
    assert overrides._tensor_types((Handler(), "s"), {}) == ()
    assert type(overrides._tensor_types((), {})) is tuple


def test_tensor_types_before_tensor_is_registered(monkeypatch):
    monkeypatch.setattr(overrides, "_base_tensor", None)
    assert overrides._tensor_types((tensor.ones(1),), {}) == ()


def test_relevant_args_positional_first_then_keywords():
    a, b, c = Handler(), Handler(), Handler()
    assert overrides.relevant_args((1, [a, (b,)]), {"k": {"x": c}}) == [a, b, c]
    assert overrides.relevant_args((a,), {"k": b}) == [a, b]
    assert overrides.relevant_args((a,)) == [a]
    assert overrides.relevant_args((a,), {}) == [a]
    assert overrides.relevant_args((), {"k": b}) == [b]
    first = overrides.relevant_args((a,))
    assert overrides.relevant_args((a,)) is not first  # a new list each time


def test_disable_subclass_dispatch_counts_and_nests():
    s = tensor.ones(1).as_subclass(Sub)
    assert overrides._subclass_dispatch_off == 0
    with overrides.disable_subclass_dispatch() as inside:
        assert inside is None
        assert overrides._subclass_dispatch_off == 1
        assert overrides.relevant_args((s,)) == []
        with overrides.disable_subclass_dispatch():
            assert overrides._subclass_dispatch_off == 2
        assert overrides._subclass_dispatch_off == 1
    assert overrides._subclass_dispatch_off == 0
    assert overrides.relevant_args((s,)) == [s]
    with pytest.raises(ValueError), overrides.disable_subclass_dispatch():
        raise ValueError("inside")
    assert overrides._subclass_dispatch_off == 0
