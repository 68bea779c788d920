"""The child process of ``learn milestone``: trace something real, write what came out.

``python -m tests.learn.milestone_child WHAT OUT.json [SEED COUNT]`` from the
checkout. With ``MINIFX_WORKSPACE`` set it runs the learner's packages (the
switch imports them first), without it the checkout's: ``learn milestone``
starts it both ways, or compares with torch.fx, and judges.

- ``resnet50``: the shared ResNet-50 (tests/models.py) on ``tensor``, traced
  with ``minifx.symbolic_trace``: its graph and code.
- ``codegen``: COUNT random programs (tests/generators.py) drawn from SEED,
  built on torch and traced through the adapter by minifx and by torch.fx:
  both codes, and both graphs.
- ``compiled``: chapter 8's activation chain on 1024 x 1024 inputs, compiled
  with the numba backend: its code, its calls, whether it computes what eager
  ``tensor`` computes, and both times per call, ROUNDS rounds taken in turns.
- ``quantized``: torchvision's quantizable models through minifx's and
  torch.ao's prepare_fx / convert_fx (tests/ch10/torch_parity.py): both
  converted graphs, the qparams that differ, and how far the outputs are apart.

A failure of the traced code is written as its last traceback lines, so the
learner sees which of their functions raised.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any


def _error(e: BaseException) -> dict:
    lines = traceback.format_exception(e)
    return {"error": "".join(lines[-6:]).rstrip()}


def resnet50() -> dict:
    import minifx
    import tensor
    from tests import models

    try:
        gm = minifx.symbolic_trace(models.resnet50(tensor.nn))
        return {"graph": str(gm.graph), "code": gm.code}
    except Exception as e:  # the learner's code failed: show where
        return _error(e)


# torch.fx spells two things with its own private names, where minifx must use its
# own (compare marks them "~"): the assert of a None concrete argument, and the
# preamble of a wrapped function. The milestone's programs leave them out.
LEFT_OUT_OPS = ("wrapped_function",)


def random_plan(rng: Any) -> Any:
    from tests import generators

    ops = sorted(set(generators.OPS) - set(LEFT_OUT_OPS))
    steps = tuple((str(rng.choice(ops)), int(rng.integers(0, 100)), int(rng.integers(0, 100)))
                  for _ in range(int(rng.integers(3, 12))))
    modes = [generators.NO_MODE, True, False, 2]
    return generators.Plan(steps=steps, output=str(rng.choice(["single", "tuple", "dict",
                                                                "nested"])),
                           mode=modes[int(rng.integers(0, len(modes)))],
                           seed=int(rng.integers(0, 2**16)))


def codegen(seed: int, count: int) -> dict:
    import numpy as np
    import torch
    import torch.fx

    import minifx
    from tests import generators

    rng = np.random.default_rng(seed)
    programs = []
    for _ in range(count):
        plan = random_plan(rng)
        model, _, concrete = generators.build(plan, torch)
        theirs = torch.fx.symbolic_trace(model, concrete_args=concrete)
        entry = {"plan": repr(plan), "torch_code": theirs.code,
                 "torch_graph": str(theirs.graph)}
        try:
            ours = minifx.symbolic_trace(model, concrete_args=concrete)
            entry.update(code=ours.code, graph=str(ours.graph))
        except Exception as e:  # the learner's code failed: show where
            entry.update(_error(e))
        programs.append(entry)
    return {"programs": programs}


def activation(proj, gate):  # no annotations: they would show in the generated code
    """The chain of chapter 8's lesson ("Is it faster?")."""
    import tensor

    return tensor.sigmoid(gate) * tensor.tanh(proj) + 0.5 * proj


def compiled(rounds: int) -> dict:
    import timeit

    import minifx
    import tensor

    tensor.manual_seed(0)
    proj, gate = tensor.randn(1024, 1024), tensor.randn(1024, 1024)
    try:
        fast = minifx.compile(activation, backend="numba")
        got = fast(proj, gate)  # the first call traces, fuses and compiles
        gm = next(iter(fast.cache.values()))
        calls = [n for n in gm.graph.nodes if n.op.startswith("call_")]
        result = {"code": gm.code.strip(), "calls": len(calls),
                  "kernels": sum(type(n.target).__name__ == "FusedKernel" for n in calls)}
    except Exception as e:  # the learner's code failed: show where
        return _error(e)
    try:
        tensor.testing.assert_close(got, activation(proj, gate))
    except Exception as e:  # a wrong value, shape or dtype
        return {**result, "mismatch": str(e)}
    eager, yours = [], []
    for _ in range(rounds):  # in turns, so that a busy moment slows both
        eager.append(timeit.timeit(lambda: activation(proj, gate), number=3) / 3)
        yours.append(timeit.timeit(lambda: fast(proj, gate), number=3) / 3)
    return {**result, "eager": eager, "yours": yours}


QUANTIZABLE = ("quantizable_resnet18", "quantizable_mobilenet_v2",
               "quantizable_mobilenet_v3_large", "quantizable_shufflenet_v2_x0_5",
               "quantizable_googlenet")


def _qparams(gm: Any) -> dict[str, tuple[float, int]]:
    """(scale, zero point) of every quantized module and every qparams buffer pair."""
    found = {name: (float(m.scale), int(m.zero_point)) for name, m in gm.named_modules()
             if hasattr(m, "scale") and hasattr(m, "zero_point")}
    buffers = dict(gm.named_buffers())
    for name, value in buffers.items():
        if "_scale_" in name:
            zero_point = buffers.get(name.replace("_scale_", "_zero_point_"))
            found[name] = (float(value), int(zero_point) if zero_point is not None else 0)
    return found


def quantized() -> dict:
    from tests.ch10.torch_parity import output_steps, quantize_both, signature
    from tests.ch10.torchvision_models import build

    models = []
    for name in QUANTIZABLE:
        try:
            result = quantize_both(build(name), (1, 3, 64, 64))
        except Exception as e:  # the learner's code failed: show where
            models.append({"name": name, **_error(e)})
            break
        ours, theirs = result["converted"]
        entry = {"name": name, "graph": [" ".join(s) for s in signature(ours)],
                 "torch_graph": [" ".join(s) for s in signature(theirs)]}
        if entry["graph"] == entry["torch_graph"]:
            mine, torch_side = _qparams(ours), _qparams(theirs)
            entry["qparams"] = [
                f"{key}: " + (f"scale {mine[key][0]:.6g}, zero point {mine[key][1]}"
                              if key in mine else "none")
                + f"; torch.ao: scale {scale:.6g}, zero point {zp}"
                for key, (scale, zp) in torch_side.items()
                if key not in mine or mine[key][1] != zp
                or abs(mine[key][0] - scale) > 0.01 * scale]
            entry["steps"] = output_steps(result)
        models.append(entry)
    return {"models": models}


def main(what: str, out: str, *rest: str) -> int:
    from tests.learn.switch import use_workspace_if_asked

    use_workspace_if_asked()
    if what == "resnet50":
        result = resnet50()
    elif what == "codegen":
        result = codegen(int(rest[0]), int(rest[1]))
    elif what == "compiled":
        result = compiled(int(rest[0]))
    elif what == "quantized":
        result = quantized()
    else:
        raise SystemExit(f"unknown milestone child {what!r}")
    with open(out, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
