"""From our primitives to ATen: what torch's make_fx records where ours records a primitive.

Our `make_fx` records `tensor.ops` primitives; torch's records ATen ops
(``aten.convolution.default``, ``aten.addmm.default``, ...). The two tracers
work the same way, one level below the public API, so on the same model
their graphs say the same thing in two vocabularies. `ATEN` is the
dictionary between them, in one place: for each primitive, the ATen ops
torch's make_fx records in its place (on the models of chapter 9's zoo,
float32, eval mode, batch-first 2-D inputs to ``linear``).

The names are strings (``str(node.target)`` of torch's nodes), so this
module imports no torch; tests/ch12/test_aten_table.py uses it to match
the two graphs one for one, after these rules, each applied to one side:

- torch's side: drop what is autograd's or the backend's bookkeeping,
  not part of the computation (`TORCH_ONLY`): ``aten.detach`` (make_fx
  runs with grad on, and autograd keeps a detached alias of what
  ``relu`` and friends return for the backward pass),
  ``aten.empty.memory_format`` (the reserve buffer that
  ``batch_norm`` makes for a cuDNN backward, empty on CPU), and
  ``getitem`` (picking the outputs of an op with several:
  ``native_batch_norm`` answers three, ``max_pool2d_with_indices`` two;
  our primitives answer one).
- in place: torch records ``aten.relu_``, ``aten.add_``. We record
  ``tensor.ops.relu_`` for ``ReLU(inplace=True)`` too, but ``out += identity``
  is an ``add`` whose result ``copy_`` writes back. `normalise_inplace`
  strips the trailing ``_`` of in-place ops on both sides, and our ``copy_``
  of a primitive's result into that primitive's own first input is dropped:
  both sides then say what is computed, not where it is stored.
- `adaptive_avg_pool2d` depends on its argument: to ``(1, 1)`` (every zoo
  model's head) torch computes a mean over the last two dims
  (``aten.mean.dim``); to another size, ``aten._adaptive_avg_pool2d``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ATEN", "TORCH_ONLY", "aten_ops", "normalise_inplace"]

ATEN: dict[str, tuple[str, ...]] = {
    "linear": ("aten.t.default", "aten.addmm.default"),  # weight transposed, then bias + x @ w.T
    "matmul": ("aten.mm.default",),
    "conv2d": ("aten.convolution.default",),
    "batch_norm": ("aten.native_batch_norm.default",),  # eval: running statistics
    "max_pool2d": ("aten.max_pool2d_with_indices.default",),
    "avg_pool2d": ("aten.avg_pool2d.default",),
    "adaptive_avg_pool2d": ("aten.mean.dim",),  # to (1, 1); see aten_ops
    "relu": ("aten.relu.default",),
    "relu_": ("aten.relu_.default",),  # ReLU(inplace=True)
    "gelu": ("aten.gelu.default",),
    "tanh": ("aten.tanh.default",),
    "sigmoid": ("aten.sigmoid.default",),
    "clamp": ("aten.clamp.default",),
    "add": ("aten.add.Tensor",),
    "sub": ("aten.sub.Tensor",),
    "mul": ("aten.mul.Tensor",),
    "reshape": ("aten.view.default",),  # flatten of a contiguous tensor: a view
    "view": ("aten.view.default",),
    "permute": ("aten.permute.default",),
    "transpose": ("aten.transpose.int",),
    "t": ("aten.t.default",),
    "unsqueeze": ("aten.unsqueeze.default",),
    "cat": ("aten.cat.default",),
}

TORCH_ONLY: frozenset[str] = frozenset({
    "aten.detach.default",
    "aten.empty.memory_format",
    "<built-in function getitem>",
})


def aten_ops(node: Any) -> tuple[str, ...]:
    """The ATen ops torch's make_fx records for one of our ``call_function`` nodes.

    A primitive missing from `ATEN` raises a KeyError that names it.
    """
    name = node.target.name
    if name == "adaptive_avg_pool2d" and tuple(node.args[1]) != (1, 1):
        return ("aten._adaptive_avg_pool2d.default",)
    if name not in ATEN:
        raise KeyError(f"no ATen ops known for tensor.ops.{name}: add it to ATEN")
    return ATEN[name]


def normalise_inplace(aten_name: str) -> str:
    """``aten.relu_.default`` -> ``aten.relu.default``: an in-place op as its functional twin."""
    namespace, op, overload = aten_name.split(".")
    return f"{namespace}.{op.rstrip('_')}.{overload}" if op.endswith("_") else aten_name
