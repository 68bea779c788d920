"""Random programs for the properties: one generator, for `tensor` and for torch.

A program is a `Plan`, plain data that hypothesis draws: a list of steps, each
one operation from `OPS` applied to two earlier values, an output form (one
tensor, a tuple or a dict) and, sometimes, a non-tensor argument `mode` that
the trace fixes with `concrete_args`. `build(plan, lib)` turns a plan into a
module written against `lib` (`tensor` or `torch`, the same source for both),
with leaf submodules (Linear, ReLU, LayerNorm), a submodule that is traced
through (`Block`, with its own parameter and buffer, called with a keyword
argument), a parameter, a buffer, a plain tensor attribute (a constant),
Python constants, keyword arguments and a function registered with `wrap`.
Every value has shape (2, 4), so any step can follow any other.

The properties import this module as `tests.generators` (`tests` is a
package); `check_all_paths` is the list of paths that
must agree on every program.
"""

from __future__ import annotations

import copy
import pickle
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.fx
from hypothesis import strategies as st

import minifx
from minifx.passes.shape_prop import ShapeProp

NO_MODE = "absent"  # the plan's `mode` when forward takes no non-tensor argument


def clipped(a, limit):
    """A function with control flow on a Python value: recorded whole (``wrap``)."""
    return a.clamp(min=-limit, max=limit) if limit > 0 else a


minifx.wrap("clipped")
torch.fx.wrap("clipped")

# name -> step(module, lib, a, b, mode); every result has shape (2, 4).
OPS = {
    "add": lambda m, L, a, b, mode: a + b,
    "sub": lambda m, L, a, b, mode: a - b,
    "mul": lambda m, L, a, b, mode: a * b,
    "rsub_constant": lambda m, L, a, b, mode: 1.5 - a,
    "scale_constant": lambda m, L, a, b, mode: a * 0.5,
    "neg": lambda m, L, a, b, mode: -a,
    "relu": lambda m, L, a, b, mode: L.relu(a),
    "sigmoid": lambda m, L, a, b, mode: L.sigmoid(a),
    "tanh_method": lambda m, L, a, b, mode: a.tanh(),
    "abs_method": lambda m, L, a, b, mode: a.abs(),
    "clamp_kwargs": lambda m, L, a, b, mode: a.clamp(min=-1.0, max=1.0),
    "softmax_kwarg": lambda m, L, a, b, mode: L.softmax(a, dim=-1),
    "gelu_functional": lambda m, L, a, b, mode: L.nn.functional.gelu(a),
    "maximum": lambda m, L, a, b, mode: L.maximum(a, b),
    "where": lambda m, L, a, b, mode: L.where(a > b, a, b),
    "sum_keepdim": lambda m, L, a, b, mode: a.sum(dim=-1, keepdim=True) + b,
    "mean_dim0": lambda m, L, a, b, mode: L.mean(a, dim=0, keepdim=True) * b,
    # contiguous() first: a view of cat_slice's strided result is refused, by torch too
    "view_roundtrip": lambda m, L, a, b, mode: a.contiguous().view(4, 2).view(2, 4),
    "matmul_twice": lambda m, L, a, b, mode: (a @ b.t()) @ b * 0.25,
    "getitem_row": lambda m, L, a, b, mode: a[0] * b,
    "cat_slice": lambda m, L, a, b, mode: L.cat([a, b], dim=1)[:, 2:6],
    "size_method": lambda m, L, a, b, mode: a * a.size(1),
    "parameter": lambda m, L, a, b, mode: a @ m.weight,
    "buffer": lambda m, L, a, b, mode: a + m.shift,
    "tensor_constant": lambda m, L, a, b, mode: a * m.const,
    "leaf_linear": lambda m, L, a, b, mode: m.linear(a),
    "leaf_relu": lambda m, L, a, b, mode: m.act(a),
    "leaf_layer_norm": lambda m, L, a, b, mode: m.norm(a),
    "traced_through_block": lambda m, L, a, b, mode: m.block(a, other=b),
    "wrapped_function": lambda m, L, a, b, mode: clipped(a, 0.5),
    "mode_branch": lambda m, L, a, b, mode: a * 2.0 if mode else a + 1.0,
    "ellipsis_none_index": lambda m, L, a, b, mode: a[..., None][..., 0],
    "expand": lambda m, L, a, b, mode: a[:1].expand(2, 4) + b,
    "bool_times_float": lambda m, L, a, b, mode: (a > 0) * b,
    "transpose_back": lambda m, L, a, b, mode: a.transpose(0, 1).transpose(1, 0),
    "reshape_inferred": lambda m, L, a, b, mode: a.reshape(-1).reshape(2, -1),
    "pow": lambda m, L, a, b, mode: a ** 2,
    "div": lambda m, L, a, b, mode: a / (b.abs() + 1.0),
    "stack_sum": lambda m, L, a, b, mode: L.stack([a, b], dim=0).sum(0),
    "exp_bounded": lambda m, L, a, b, mode: L.exp(a.clamp(max=2.0)),
    "amax_keepdim": lambda m, L, a, b, mode: a.amax(dim=1, keepdim=True) - b,
    "unsqueeze_squeeze": lambda m, L, a, b, mode: a.unsqueeze(0).squeeze(0),
    "flatten_view": lambda m, L, a, b, mode: a.flatten().view(2, 4),
    "leaf_called_twice": lambda m, L, a, b, mode: m.act(m.act(a) - 0.5),
    "nested_parameter": lambda m, L, a, b, mode: a * m.block.gain,
    "int_roundtrip": lambda m, L, a, b, mode: (a * 4).long().float() * 0.25,
    "shape_attribute": lambda m, L, a, b, mode: a.view(a.shape[0], -1),
}


@dataclass(frozen=True)
class Plan:
    """One random program, as data: printed by hypothesis when a property fails."""

    steps: tuple[tuple[str, int, int], ...]
    output: str  # "single", "tuple", "dict" or "nested"
    mode: Any  # NO_MODE, or the value concrete_args fixes (True, False, 2, None)
    seed: int


def plans(max_steps: int = 8) -> st.SearchStrategy[Plan]:
    """Hypothesis strategy for `Plan`s."""
    step = st.tuples(st.sampled_from(sorted(OPS)), st.integers(0, 99), st.integers(0, 99))
    return st.builds(
        Plan,
        steps=st.lists(step, min_size=1, max_size=max_steps).map(tuple),
        output=st.sampled_from(["single", "tuple", "dict", "nested"]),
        mode=st.sampled_from([NO_MODE, True, False, 2, None]),
        seed=st.integers(0, 2**16),
    )


def _array(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.5).astype(np.float32)


def build(plan: Plan, L: Any) -> tuple[Any, tuple, dict | None]:
    """The module of ``plan`` for library ``L``, its inputs and its concrete_args.

    Weights and inputs come from ``plan.seed``, so the `tensor` and torch
    versions of one plan hold the same numbers.
    """
    rng = np.random.default_rng(plan.seed)

    def t(array: np.ndarray) -> Any:
        return L.from_numpy(array.copy())

    class Block(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.gain = L.nn.Parameter(t(_array(rng, 4)))
            self.register_buffer("offset", t(_array(rng, 4)))

        def forward(self, a, other=None):
            return a * self.gain + other * self.offset

    class Program(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = L.nn.Linear(4, 4)
            self.linear.weight = L.nn.Parameter(t(_array(rng, 4, 4)))
            self.linear.bias = L.nn.Parameter(t(_array(rng, 4)))
            self.act = L.nn.ReLU()
            self.norm = L.nn.LayerNorm(4)
            self.block = Block()
            self.weight = L.nn.Parameter(t(_array(rng, 4, 4)))
            self.register_buffer("shift", t(_array(rng, 4)))
            self.const = t(_array(rng, 4))  # neither parameter nor buffer: a constant

        def body(self, x, y, mode):
            values = [x, y]
            for name, i, j in plan.steps:  # unrolled by the trace
                a, b = values[i % len(values)], values[j % len(values)]
                values.append(OPS[name](self, L, a, b, mode))
            if plan.output == "tuple":
                return values[-1], values[len(values) // 2]
            if plan.output == "dict":
                return {"out": values[-1], "mid": values[1]}
            if plan.output == "nested":  # an input returned as it is, inside a dict
                return {"pair": (values[-1], values[len(values) // 2]), "input": x}
            return values[-1]

    if plan.mode == NO_MODE:
        class Model(Program):
            def forward(self, x, y):
                return self.body(x, y, None)

        concrete, extra = None, ()
    else:
        class Model(Program):
            def forward(self, x, y, mode):
                return self.body(x, y, mode)

        concrete, extra = {"mode": plan.mode}, (plan.mode,)
    model = Model()
    x, y = t(_array(rng, 2, 4)), t(_array(rng, 2, 4))
    return model, (x, y, *extra), concrete


# -- the paths that must agree --------------------------------------------------


def leaves(value: Any) -> list[Any]:
    """The tensors of an output, in order (a tensor, a tuple or a dict of them)."""
    if isinstance(value, dict):
        return [v for k in sorted(value) for v in leaves(value[k])]
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in leaves(item)]
    return [value]


def as_numpy(value: Any) -> np.ndarray:
    """A tensor's numbers (a torch tensor that requires grad is detached first)."""
    detach = getattr(value, "detach", None)
    return np.asarray((detach() if detach is not None else value).numpy())


def assert_same(actual: Any, expected: Any, where: str) -> None:
    """Same structure (tuple or dict keys) and the same numbers, float32 tolerances."""
    assert type(actual) is type(expected) or not isinstance(expected, (tuple, dict)), where
    if isinstance(expected, dict):
        assert list(actual) == list(expected), where
    got, want = leaves(actual), leaves(expected)
    assert len(got) == len(want), where
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape), f"{where}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(as_numpy(g), as_numpy(w), rtol=1e-4, atol=1e-5,
                                   err_msg=where)


def placeholders_first(graph: Any) -> list[str]:
    """``str(graph)`` lines with placeholders moved to the top: a retrace makes every
    placeholder first, where ``concrete_args`` put a check after each specialised one."""
    lines = str(graph).splitlines()
    return ([line for line in lines if "placeholder[" in line]
            + [line for line in lines if "placeholder[" not in line])


class _Recorder(minifx.Interpreter):
    """An Interpreter that keeps every node's value (to check ShapeProp against)."""

    def __init__(self, gm: Any) -> None:
        super().__init__(gm, garbage_collect_values=False)
        self.values: dict[Any, Any] = {}

    def run_node(self, n: Any) -> Any:
        self.values[n] = result = super().run_node(n)
        return result


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _shapes(value: Any) -> Any:
    """The shapes inside a value (tensors become tuples of ints), or None."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return tuple(value.shape)
    if isinstance(value, (tuple, list)):
        return tuple(_shapes(v) for v in value)
    if isinstance(value, dict):
        return {k: _shapes(v) for k, v in value.items()}
    return None


def _meta_shapes(meta: Any) -> Any:
    if hasattr(meta, "shape") and hasattr(meta, "stride"):
        return tuple(meta.shape)
    if isinstance(meta, (tuple, list)):
        return tuple(_meta_shapes(v) for v in meta)
    if isinstance(meta, dict):
        return {k: _meta_shapes(v) for k, v in meta.items()}
    return None


def check_all_paths(model: Any, args: tuple, concrete: dict | None) -> Any:
    """Every path of SPEC section 2 gives eager's result; lint after every pass.

    Returns the traced GraphModule (for further oracles, such as torch.fx).
    """
    eager = model(*args)
    gm = minifx.symbolic_trace(model, concrete_args=concrete)
    gm.graph.lint()
    assert_same(gm(*args), eager, "symbolic_trace")

    recorder = _Recorder(gm)
    assert_same(recorder.run(*args), eager, "Interpreter")

    transformed = minifx.Transformer(gm).transform()
    transformed.graph.lint()
    assert transformed.code == gm.code
    assert_same(transformed(*args), eager, "Transformer")

    for label, twin in (("deepcopy", copy.deepcopy(gm)),
                        ("pickle", pickle.loads(pickle.dumps(gm)))):
        twin.graph.lint()
        assert twin.code == gm.code, label
        assert_same(twin(*args), eager, label)

    again = minifx.symbolic_trace(gm)
    again.graph.lint()
    assert again.code == gm.code
    assert placeholders_first(again.graph) == placeholders_first(gm.graph)
    assert_same(again(*args), eager, "retrace")

    for backend in ("eager", "numba"):
        compiled = minifx.compile(model, backend=backend)
        assert_same(compiled(*args), eager, f"minifx.compile(backend={backend!r})")
        for fn in compiled.cache.values():
            if isinstance(fn, minifx.GraphModule):
                fn.graph.lint()

    ShapeProp(gm).propagate(*args)
    gm.graph.lint()
    for node in gm.graph.nodes:
        value = recorder.values[node]
        if node.op == "output":
            assert _meta_shapes(node.meta.get("tensor_meta")) == _shapes(eager)
        elif any(_is_tensor(v) for v in leaves(value)):
            assert _meta_shapes(node.meta["tensor_meta"]) == _shapes(value), node.name
        else:  # a size, an int: ShapeProp describes tensors only, as torch.fx's does
            assert "tensor_meta" not in node.meta, node.name
    return gm
