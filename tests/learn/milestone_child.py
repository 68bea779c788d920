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


def main(what: str, out: str, *rest: str) -> int:
    from tests.learn.switch import use_workspace_if_asked

    use_workspace_if_asked()
    if what == "resnet50":
        result = resnet50()
    elif what == "codegen":
        result = codegen(int(rest[0]), int(rest[1]))
    else:
        raise SystemExit(f"unknown milestone child {what!r}")
    with open(out, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
