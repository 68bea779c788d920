"""A forward hook on a traced `tensor` root would be lost: minifx refuses it."""

import pytest

import minifx
import tensor
import tensor.nn as nn


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(2, 2))

    def forward(self, x):
        return self.inner(x) + 1


@pytest.mark.parametrize("register", ["register_forward_hook", "register_forward_pre_hook"])
def test_hooks_on_the_root_are_refused(register):
    model = Holder()
    hook = (lambda m, i, o: o * 0) if register == "register_forward_hook" else (
        lambda m, i: (i[0] * 0,))
    getattr(model, register)(hook)
    with pytest.raises(RuntimeError, match=r"root module \(Holder\): it has forward hooks"):
        minifx.symbolic_trace(model)


def test_hooks_on_a_traced_through_submodule_run_during_the_trace_and_are_kept():
    model = Holder()
    model.inner.register_forward_hook(lambda m, i, o: o * 0)
    gm = minifx.symbolic_trace(model)
    x = tensor.randn(3, 2)
    tensor.testing.assert_close(gm(x), model(x))
    tensor.testing.assert_close(gm(x), tensor.ones(3, 2))
