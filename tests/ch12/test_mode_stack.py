"""Chapter 12: the dispatch-mode stack and the router it switches.

`_push` and `_pop` keep the stack and switch the router (the front end's
backend calls become primitives) on with the first mode and off with the
last; a mode's ``__enter__`` and ``__exit__`` use them and keep the stack
rules; `_kernel` hands the front end back to the kernels while a
primitive's own code runs. Each test looks at the stack, at
``tensor.backend.ops()`` (the kernels or the router) and at what a mode sees.
"""

import pytest

import tensor
from tensor import dispatch, ops
from tensor.dispatch import TensorDispatchMode


class Log(TensorDispatchMode):
    def __init__(self):
        self.seen = []

    def __tensor_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(func.name)
        return func(*args, **(kwargs or {}))


class Other(Log):
    pass


@pytest.fixture
def routes(monkeypatch):
    """Every ``_route`` call, in order, still switching the router."""
    calls = []
    real = dispatch._route

    def recorded(on):
        calls.append(on)
        real(on)

    monkeypatch.setattr(dispatch, "_route", recorded)
    return calls


@pytest.fixture(autouse=True)
def empty_stack():
    assert dispatch.active_modes() == ()
    yield
    assert dispatch.active_modes() == (), "a test left modes on the stack"


def _routed() -> bool:
    return tensor.backend.ops() is ops._ROUTER


def test_push_puts_the_mode_on_top_and_the_first_one_switches_the_router_on(routes):
    a, b = Log(), Log()
    assert dispatch._push(a) is None
    assert dispatch.active_modes() == (a,) and routes == [True] and _routed()
    dispatch._push(b)
    assert dispatch.active_modes() == (a, b) and routes == [True] and _routed()
    dispatch._modes.clear()  # not with _pop: that is the next exercise
    dispatch._route(False)


def test_pop_returns_the_top_and_the_last_one_switches_the_router_off(routes):
    a, b = Log(), Log()
    dispatch._push(a)
    dispatch._push(b)
    assert dispatch._pop() is b
    assert dispatch.active_modes() == (a,) and routes == [True] and _routed()
    assert dispatch._pop() is a
    assert dispatch.active_modes() == () and routes == [True, False] and not _routed()
    with pytest.raises(IndexError):
        dispatch._pop()
    assert routes == [True, False]


def test_enter_pushes_and_returns_the_mode_exit_pops_it(routes):
    mode, x = Log(), tensor.ones(2)
    with mode as entered:
        assert entered is mode
        assert dispatch.active_modes() == (mode,) and _routed() and routes == [True]
        tensor.relu(x)  # the kernel runs with the router off (_kernel), then on again
        assert routes == [True, False, True]
    assert dispatch.active_modes() == () and not _routed()
    assert routes == [True, False, True, False] and mode.seen == ["relu"]


def test_a_mode_is_entered_once(routes):
    mode = Log()
    with mode:
        with pytest.raises(RuntimeError) as error:
            mode.__enter__()
        assert str(error.value) == "Log is already active: a mode is entered once"
        assert dispatch.active_modes() == (mode,)
        with Other() as other:  # another object of the class is another mode
            assert dispatch.active_modes() == (mode, other)
    assert routes == [True, False]


def test_a_mode_leaves_only_from_the_top(routes):
    a, b = Log(), Other()
    with pytest.raises(RuntimeError) as error:
        a.__exit__(None, None, None)
    assert str(error.value) == "Log left out of order: modes are a stack"
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="^Log left out of order: modes are a stack$"):
        a.__exit__(None, None, None)
    assert dispatch.active_modes() == (a, b)
    assert b.__exit__(None, None, None) is None
    assert dispatch.active_modes() == (a,)
    with pytest.raises(RuntimeError, match="^Other left out of order"):
        b.__exit__(None, None, None)
    a.__exit__(None, None, None)
    assert routes == [True, False] and not _routed()


def test_exit_pops_even_when_the_block_raised():
    mode = Log()
    with pytest.raises(ValueError), mode:
        raise ValueError("inside")
    assert dispatch.active_modes() == () and not _routed()


def test_kernel_hands_the_front_end_back_to_the_kernels_while_a_primitive_runs(routes):
    with Log():
        assert dispatch._routing and _routed()
        with dispatch._kernel():
            assert not dispatch._routing and not _routed()
            with dispatch._kernel():  # nested: nothing to switch
                assert not dispatch._routing
            assert not dispatch._routing and not _routed()
        assert dispatch._routing and _routed()
        assert routes == [True, False, True]
        with pytest.raises(ZeroDivisionError), dispatch._kernel():
            raise ZeroDivisionError("inside a kernel")
        assert dispatch._routing and _routed()
        assert routes == [True, False, True, False, True]
    assert routes[-1] is False


def test_kernel_switches_nothing_when_the_router_is_off(routes):
    with dispatch._kernel():
        assert not dispatch._routing
    with pytest.raises(KeyError), dispatch._kernel():
        raise KeyError("x")
    assert routes == [] and not _routed()


def test_a_primitive_run_under_a_mode_computes_with_the_kernels():
    # ops.add runs its kernel inside _kernel: the front end code it calls is not routed,
    # so the mode sees the one primitive and no call it makes.
    x = tensor.tensor([1.0, -2.0])
    with Log() as log:
        y = tensor.relu(x) + x
    assert log.seen == ["relu", "add"]
    assert y.tolist() == [2.0, -2.0]
    assert not _routed()


class Equal(Log):
    """Modes that all compare equal: the stack rules go by identity, not by ==."""

    def __eq__(self, other):
        return isinstance(other, Equal)

    __hash__ = object.__hash__


def test_a_mode_leaves_only_from_the_top_by_identity():
    a, b = Equal(), Equal()
    dispatch._push(a)
    dispatch._push(b)
    with pytest.raises(RuntimeError, match="^Equal left out of order"):
        a.__exit__(None, None, None)
    assert dispatch.active_modes() == (a, b) and dispatch._modes[-1] is b
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)
