"""The __tensor_function__ protocol: who gets asked, in which order, with what.

Two kinds of handler: a Tensor subclass that wraps results (as torch's
subclasses do) and a type unrelated to Tensor that logs every call (as a
tracer's Proxy does). Both must see functions, methods and operators.
"""

import pytest

import tensor
from tensor.overrides import handle_tensor_function, has_tensor_function, relevant_args


class Logger:
    """Not a tensor at all: records each call and answers with a marker."""

    calls = []

    @classmethod
    def __tensor_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((func, types, args, kwargs or {}))
        return ("logged", func.__qualname__)


@pytest.fixture(autouse=True)
def fresh_log():
    Logger.calls = []


def test_logger_sees_functions_with_nested_arguments():
    log, t = Logger(), tensor.ones(2)
    assert tensor.sigmoid(log) == ("logged", "sigmoid")
    assert tensor.add(log, 1) == ("logged", "add")
    assert tensor.add(t, log) == ("logged", "add")
    assert tensor.cat([t, log]) == ("logged", "cat")
    assert tensor.stack((t, (t, log))) == ("logged", "stack")
    assert tensor.clamp(t, min=log) == ("logged", "clamp")  # found among keyword arguments
    funcs = [call[0] for call in Logger.calls]
    assert funcs == [tensor.sigmoid, tensor.add, tensor.add, tensor.cat, tensor.stack, tensor.clamp]
    func, types, args, kwargs = Logger.calls[-1]
    assert types == (Logger,) and args == (t,) and kwargs == {"min": log}


def test_logger_sees_methods_and_operators():
    log, t = Logger(), tensor.ones(2)
    assert tensor.Tensor.neg(log) == ("logged", "Tensor.neg")
    assert tensor.Tensor.sum(log, dim=1) == ("logged", "Tensor.sum")
    assert tensor.Tensor.__getitem__(log, 0) == ("logged", "Tensor.__getitem__")
    assert (t + log) == ("logged", "Tensor.__add__")
    assert (log + t) == ("logged", "Tensor.__radd__")  # Logger has no __add__: Python asks t
    assert (t @ log) == ("logged", "Tensor.__matmul__")
    assert (log < t) == ("logged", "Tensor.__gt__")  # Python reflects < into t > log
    funcs = [call[0] for call in Logger.calls]
    assert funcs == [
        tensor.Tensor.neg,
        tensor.Tensor.sum,
        tensor.Tensor.__getitem__,
        tensor.Tensor.__add__,
        tensor.Tensor.__radd__,
        tensor.Tensor.__matmul__,
        tensor.Tensor.__gt__,
    ]
    assert Logger.calls[4][2] == (t, log)  # reflected: self is the tensor, other the logger


def test_functions_and_methods_are_distinct_public_callables():
    assert tensor.sigmoid is not tensor.Tensor.sigmoid
    assert tensor.add is not tensor.Tensor.add is not tensor.Tensor.__add__
    assert tensor.sigmoid.__module__ == "tensor" and tensor.Tensor.neg.__qualname__ == "Tensor.neg"


class Wrapped(tensor.Tensor):
    """A subclass that keeps the default handler: every result comes back as Wrapped."""


def test_subclass_results_are_wrapped():
    w = tensor.ones(2, 3).as_subclass(Wrapped)
    plain = tensor.ones(2, 3)
    results = {
        "function": tensor.sigmoid(w),
        "method": w.sum(0),
        "operator": w + 1,
        "reflected": 1 - w,
        "with plain": plain * w,
        "view": w.t(),
        "index": w[0],
        "list arg": tensor.cat([plain, w]),
    }
    for name, result in results.items():
        assert type(result) is Wrapped, name
    values, indices = w.max(1)
    assert type(values) is Wrapped and type(indices) is Wrapped
    assert type(w.max(1)).__name__ == "max"
    assert isinstance(w.numel(), int) and w.shape == (2, 3)
    tensor.testing.assert_close(tensor.sigmoid(w), tensor.sigmoid(plain))


class Counting(tensor.Tensor):
    """A subclass with its own handler that counts and then defers to the default."""

    seen = []

    @classmethod
    def __tensor_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func.__qualname__)
        return super().__tensor_function__(func, types, args, kwargs)


def test_subclass_handler_sees_every_kind_of_call_once():
    Counting.seen = []
    c = tensor.ones(3).as_subclass(Counting)
    out = tensor.relu(c).neg() * 2
    assert type(out) is Counting
    assert Counting.seen == ["relu", "Tensor.neg", "Tensor.__mul__"]  # inner calls are not re-seen


def _declining(name, order, base=object):
    def handler(cls, func, types, args=(), kwargs=None):
        order.append(name)
        return NotImplemented

    return type(name, (base,), {"__tensor_function__": classmethod(handler)})


def test_subclasses_are_asked_before_parents_and_all_declining_raises():
    order = []
    Parent = _declining("Parent", order)
    Child = _declining("Child", order, Parent)
    Other = _declining("Other", order)
    with pytest.raises(TypeError) as info:
        tensor.add(Parent(), [Other(), Child()])
    assert order == ["Child", "Parent", "Other"]
    message = str(info.value)
    assert "tensor.add" in message and "Parent" in message and "Child" in message
    assert "Other" in message


def test_not_implemented_passes_to_the_next_handler():
    order = []
    Declines = _declining("Declines", order)
    log = Logger()
    assert tensor.maximum(Declines(), log) == ("logged", "maximum")
    assert order == ["Declines"]


def test_default_handler_declines_for_foreign_types():
    w = tensor.ones(2).as_subclass(Wrapped)
    log = Logger()
    # Wrapped's default handler sees Logger among the types and passes
    assert tensor.add(w, log) == ("logged", "add")
    assert Logger.calls[0][1] == (Wrapped, Logger)


def test_unrelated_types_are_asked_in_argument_order():
    order = []
    First = _declining("First", order)
    log = Logger()
    # Logger appears first and answers, so First is never asked
    assert tensor.add(log, First()) == ("logged", "add")
    assert order == []


def test_helpers():
    t, log = tensor.ones(1), Logger()
    assert not has_tensor_function((t, 1, [t, (t,)], {"x": t}))
    assert has_tensor_function(({"x": [log]},))
    assert relevant_args((t, [log]), {"other": {"k": log}}) == [log, log]
    assert handle_tensor_function(tensor.neg, [log], log) == ("logged", "neg")


def test_plain_tensors_take_the_fast_path():
    # with plain tensors nothing is relevant, so no handler runs at all
    Logger.calls = []
    tensor.add(tensor.ones(2), tensor.ones(2))
    assert Logger.calls == []


def test_a_type_met_twice_is_asked_once_and_the_types_after_it_too():
    order = []
    Declines = _declining("Declines", order)
    assert tensor.add(Declines(), [Declines(), Logger()]) == ("logged", "add")
    assert order == ["Declines"]


def test_handlers_still_take_over_while_subclass_dispatch_is_off():
    # Only Tensor subclasses stand aside (their default handler runs the real function).
    w, log = tensor.ones(2).as_subclass(Wrapped), Logger()
    with tensor.overrides.disable_subclass_dispatch():
        assert relevant_args((w, [log])) == [log]
        assert tensor.add(tensor.ones(2), log) == ("logged", "add")
    assert relevant_args((w, [log])) == [w, log]
