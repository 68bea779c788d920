"""``learn milestone``: the learner's own code on something real, pass or fail.

Each milestone runs the workspace's packages (everything the learner wrote
so far, the reference elsewhere) in a child process
(tests/learn/milestone_child.py) and judges what comes out against an
oracle the learner's code cannot influence:

- ``ch02``: the learner's tracer traces the shared ResNet-50 (tests/models.py,
  built on the workspace's ``tensor``); its graph and code must equal, line
  for line, what the checkout's reference minifx makes of the same model.
- ``ch06``: random programs (tests/generators.py) drawn from a fresh seed,
  built on torch, are traced through the adapter by the learner's minifx and
  by torch.fx; the generated code must equal torch.fx's character for
  character, and the graphs too. The seed is printed: ``--seed N`` runs the
  same programs again.
- ``ch08``: chapter 8's activation chain, compiled by the learner's front end
  and fusion pass with the numba backend, must be one fused kernel, compute
  what eager ``tensor`` computes, and beat it: at least ``SPEEDUP`` times as
  fast on a million elements (medians of rounds taken in turns). The reference
  clears that bar by far; a chain that is not fused runs as eager does, and the
  bar is set high enough above that for noise not to pass it.
- ``ch10``: torchvision's five quantizable models, random weights, through the
  learner's prepare_fx / convert_fx and torch.ao's: the converted graphs must
  be the same, every scale as torch.ao's (to a hundredth of it) and every zero
  point equal, and the int8 outputs at most ``STEPS`` quantization steps apart.
"""

from __future__ import annotations

import difflib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .check import kernel_cache
from .workspace import ENV_VAR, REFERENCE, LearnError, require

PROGRAMS = 5  # random programs per ch06 run
DIFF_LINES = 12
SPEEDUP = 1.25  # ch08: how many times as fast as eager tensor the compiled chain must be
ROUNDS = 7  # ch08: timed rounds of each
STEPS = 2.0  # ch10: how far apart the int8 outputs may be, in steps of the output's scale


@dataclass(frozen=True)
class Milestone:
    name: str
    after: str  # the chapter after which it makes sense
    what: str


MILESTONES = (
    Milestone("ch02", "ch02", "your tracer traces the shared ResNet-50; its graph and code "
              "equal the reference's"),
    Milestone("ch06", "ch06", f"{PROGRAMS} random torch programs, new each run, traced "
              "through the adapter: your generated code equals torch.fx's, character for "
              "character"),
    Milestone("ch08", "ch08", "your compiled chain is one fused kernel and beats eager "
              f"tensor, at least {SPEEDUP}x as fast on a million elements"),
    Milestone("ch10", "ch10", "torchvision's quantizable models through your prepare_fx / "
              "convert_fx: the same int8 models as torch.ao's, and the same outputs"),
)


def find_milestone(name: str) -> Milestone:
    for m in MILESTONES:
        if m.name == name:
            return m
    raise LearnError(f"unknown milestone {name!r}: milestones are "
                     f"{', '.join(m.name for m in MILESTONES)}")


def listing() -> str:
    return "\n".join(f"{m.name}  (after {m.after})  {m.what}" for m in MILESTONES)


def _child(what: str, workspace: Path | None, *extra: str, reference: Path = REFERENCE
           ) -> dict:
    """Run the milestone child on the workspace (or, with None, on the checkout)."""
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    if workspace is not None:
        env[ENV_VAR] = str(workspace)
        env["NUMBA_CACHE_DIR"] = str(kernel_cache(workspace))
    with tempfile.TemporaryDirectory(prefix="minifx-milestone-") as tmp:
        out = Path(tmp) / "out.json"
        done = subprocess.run([sys.executable, "-m", "tests.learn.milestone_child", what,
                               str(out), *extra], cwd=reference, env=env,
                              capture_output=True, text=True)
        if not out.exists():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-12:])
            raise LearnError(f"the milestone could not run (exit code {done.returncode}):\n"
                             f"{tail}")
        return json.loads(out.read_text())


def _indented(text: str) -> list[str]:
    return ["    " + line for line in text.splitlines()]


def _first_lines(lines: list[str]) -> list[str]:
    """At most DIFF_LINES of ``lines``, indented, and how many more there are."""
    more = len(lines) - DIFF_LINES
    return _indented("\n".join(lines[:DIFF_LINES] + [f"... ({more} more lines)"] * (more > 0)))


def _difference(expected: str, actual: str, expected_name: str) -> list[str]:
    """The lines that differ, first, as a unified diff (- expected, + yours)."""
    return _first_lines(list(difflib.unified_diff(
        expected.splitlines(), actual.splitlines(), expected_name, "yours", lineterm="", n=0)))


def resnet50(workspace: Path) -> tuple[bool, list[str]]:
    yours = _child("resnet50", workspace)
    if "error" in yours:
        return False, ["your code raised while tracing ResNet-50:",
                       *_indented(yours["error"])]
    reference = _child("resnet50", None)
    lines = []
    for part in ("graph", "code"):
        if yours[part] != reference[part]:
            lines.append(f"your {part} of ResNet-50 differs from the reference's:")
            lines += _difference(reference[part], yours[part], "reference")
    if lines:
        return False, lines
    nodes = reference["graph"].count("\n")
    return True, [f"ResNet-50 traced by your code: {nodes} nodes, graph and code equal to the "
                  "reference's"]


def codegen(workspace: Path, seed: int) -> tuple[bool, list[str]]:
    result = _child("codegen", workspace, str(seed), str(PROGRAMS))
    lines = []
    for k, program in enumerate(result["programs"], start=1):
        if "error" in program:
            lines.append(f"program {k}: your code raised while tracing it:")
            lines += _indented(program["error"])
        elif program["code"] != program["torch_code"]:
            lines.append(f"program {k}: your generated code differs from torch.fx's:")
            lines += _difference(program["torch_code"], program["code"], "torch.fx")
        elif program["graph"] != program["torch_graph"]:
            lines.append(f"program {k}: your graph prints differently from torch.fx's:")
            lines += _difference(program["torch_graph"], program["graph"], "torch.fx")
        else:
            continue
        lines.append(f"    the program: {program['plan']}")
        break
    if lines:
        return False, lines
    count = len(result["programs"])
    return True, [f"{count} random programs: your generated code equals torch.fx's, "
                  "character for character"]


def compiled_chain(workspace: Path) -> tuple[bool, list[str]]:
    result = _child("compiled", workspace, str(ROUNDS))
    if "error" in result:
        return False, ["your code raised while compiling the chain:",
                       *_indented(result["error"])]
    lines = ["your compiled code of sigmoid(gate) * tanh(proj) + 0.5 * proj:",
             *_indented(result["code"])]
    if "mismatch" in result:
        return False, [*lines, "it computes something other than eager tensor:",
                       *_indented(result["mismatch"])]
    if (result["calls"], result["kernels"]) != (1, 1):
        return False, [*lines, f"the chain should be one fused kernel: your code makes "
                       f"{result['calls']} calls, {result['kernels']} of them fused kernels"]
    return judge_speed(result["eager"], result["yours"], SPEEDUP, lines)


def judge_speed(eager: list[float], yours: list[float], speedup: float,
                lines: list[str]) -> tuple[bool, list[str]]:
    """Passed when the median of ``yours`` is at least ``speedup`` times as fast as eager's."""
    ratio = statistics.median(eager) / statistics.median(yours)
    lines = [*lines, f"a call on 1024 x 1024 inputs, medians of {len(eager)} rounds: eager "
             f"tensor {statistics.median(eager) * 1e3:.2f} ms, yours "
             f"{statistics.median(yours) * 1e3:.2f} ms: {ratio:.2f}x as fast"]
    if ratio < speedup:
        return False, [*lines, f"the milestone asks for at least {speedup}x"]
    return True, lines


def int8_models(workspace: Path) -> tuple[bool, list[str]]:
    lines = []
    for model in _child("quantized", workspace)["models"]:
        name = model["name"]
        if "error" in model:
            return False, [*lines, f"{name}: your code raised while quantizing it:",
                           *_indented(model["error"])]
        if model["graph"] != model["torch_graph"]:
            return False, [*lines, f"{name}: your converted graph differs from torch.ao's "
                           "(op, target, name of each node):",
                           *_difference("\n".join(model["torch_graph"]),
                                        "\n".join(model["graph"]), "torch.ao")]
        if model["qparams"]:
            return False, [*lines, f"{name}: your qparams differ from torch.ao's:",
                           *_first_lines(model["qparams"])]
        if model["steps"] > STEPS:
            return False, [*lines, f"{name}: your int8 outputs are {model['steps']:.1f} steps "
                           f"from torch.ao's (at most {STEPS:g} allowed)"]
        lines.append(f"{name}: {len(model['graph'])} nodes as torch.ao's, the same qparams, "
                     f"outputs {model['steps']:.2f} steps apart")
    return True, lines


def run(name: str, workspace: Path, seed: int | None = None) -> tuple[bool, str]:
    """Run one milestone on the workspace: (passed, the report's text)."""
    milestone = find_milestone(name)
    require(workspace)
    head = f"milestone {milestone.name} on {workspace}"
    if milestone.name == "ch02":
        passed, lines = resnet50(workspace)
    elif milestone.name == "ch06":
        seed = random.randrange(2**31) if seed is None else seed
        passed, lines = codegen(workspace, seed)
        head += f", seed {seed}"
    elif milestone.name == "ch08":
        passed, lines = compiled_chain(workspace)
    else:
        passed, lines = int8_models(workspace)
    verdict = "PASSED" if passed else "FAILED"
    return passed, "\n".join([head, *lines, f"milestone {milestone.name}: {verdict}"])
