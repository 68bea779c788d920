"""Everything torch-specific sits behind the Framework interface.

The core asks the registered frameworks; no module outside minifx/frameworks/
branches on a framework's name, and importing an adapter (or the compiler)
changes no other module's state. Both adapters answer every question, and
torch's answers are torch's own.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.nn.utils.fusion import fuse_conv_bn_eval as torch_fold

import tensor
from minifx import _framework
from minifx._framework import Framework, TensorLayout, adapter
from tensor.nn.utils.fusion import fuse_conv_bn_eval as tensor_fold

PACKAGE = Path(_framework.__file__).parent
LIBRARIES = {"tensor", "torch"}


def _name_branches(path: Path) -> list[int]:
    """Lines of ``x.name == "torch"`` (or ``!=``, ``in``) comparisons in one file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        names_attr = any(isinstance(s, ast.Attribute) and s.attr == "name" for s in sides)
        names_library = any(isinstance(s, ast.Constant) and s.value in LIBRARIES for s in sides)
        if names_attr and names_library:
            found.append(node.lineno)
    return found


def test_no_module_outside_the_adapters_branches_on_a_framework_name():
    outside = [p for p in PACKAGE.rglob("*.py") if "frameworks" not in p.parts]
    hits = {str(p.relative_to(PACKAGE)): _name_branches(p) for p in outside}
    assert {path: lines for path, lines in hits.items() if lines} == {}


def test_the_branch_finder_finds_a_branch(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('x = 1\nif framework_of(v).name == "torch":\n    pass\n', encoding="utf-8")
    assert _name_branches(probe) == [2]


# Imports the core, snapshots the state of node, namespace, codegen and proxy,
# imports MODULE, and prints what changed.
_SNAPSHOT = textwrap.dedent("""
    import importlib, sys
    import minifx
    from minifx import codegen, namespace, node, proxy

    def snapshot():
        state = {}
        for mod in (node, namespace, codegen, proxy):
            for key, value in vars(mod).items():
                if isinstance(value, (dict, set, list, frozenset, tuple)):
                    state[mod.__name__ + "." + key] = repr(sorted(map(repr, value)))
                else:
                    state[mod.__name__ + "." + key] = id(value)
        return state

    before = snapshot()
    importlib.import_module(sys.argv[1])
    after = snapshot()
    print(sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k)))
""")


def _changed_by_importing(module: str) -> str:
    result = subprocess.run([sys.executable, "-c", _SNAPSHOT, module],
                            capture_output=True, text=True, timeout=300, check=True)
    return result.stdout.strip()


def test_importing_the_torch_adapter_changes_no_other_module():
    assert _changed_by_importing("minifx.frameworks.torch_framework") == "[]"


def test_importing_the_compilers_kernels_changes_no_other_module():
    assert _changed_by_importing("minifx.compiler.kernel") == "[]"


def test_the_snapshot_sees_a_change():
    script = _SNAPSHOT.replace("importlib.import_module(sys.argv[1])",
                               "node.__dict__['added_by_test'] = 1")
    result = subprocess.run([sys.executable, "-c", script, "unused"], capture_output=True,
                            text=True, timeout=300, check=True)
    assert result.stdout.strip() == "['minifx.node.added_by_test']"


def test_both_adapters_implement_the_whole_interface():
    for library in ("tensor", "torch"):
        framework = adapter(library)
        assert isinstance(framework, Framework) and framework.name == library
        assert not getattr(type(framework), "__abstractmethods__", None)


def test_spelling_and_globals():
    torch_fw, tensor_fw = adapter("torch"), adapter("tensor")
    assert torch_fw.qualified_name(torch.relu) == "torch.relu"
    assert torch_fw.qualified_name(torch.nn.functional.linear) == "torch._C._nn.linear"
    assert torch_fw.qualified_name(tensor.relu) is None
    assert tensor_fw.qualified_name(tensor.relu) is None  # the general rule spells tensor
    assert torch_fw.code_globals() == {"device": torch.device}
    assert _framework.reserved_names()["torch"] is torch
    assert _framework.reserved_names()["tensor"] is tensor
    assert torch.device in _framework.repr_literal_types()


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor:UserWarning")
def test_layouts_agree_with_each_other_and_with_torch():
    values = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    ours = adapter("tensor").tensor_layout(tensor.from_numpy(values))
    theirs = adapter("torch").tensor_layout(torch.from_numpy(values))
    assert ours == TensorLayout((12, 4, 1), "contiguous_format", False, {})
    assert theirs == TensorLayout((12, 4, 1), torch.contiguous_format, False, {})
    last = torch.zeros(1, 3, 2, 2).to(memory_format=torch.channels_last)
    assert adapter("torch").tensor_layout(last).memory_format is torch.channels_last
    q = torch.quantize_per_channel(torch.ones(2, 3), torch.tensor([0.5, 0.25]),
                                   torch.tensor([1, 2]), 0, torch.qint8)
    layout = adapter("torch").tensor_layout(q)
    assert layout.is_quantized and layout.qparams == {
        "qscheme": torch.per_channel_affine, "scale": [0.5, 0.25], "zero_point": [1, 2],
        "axis": 0}


def test_numpy_round_trip_shares_memory():
    array = np.ones((2, 2), dtype=np.float32)
    for library in ("tensor", "torch"):
        framework = adapter(library)
        t = framework.from_numpy(array)
        assert framework.is_tensor(t)
        back = framework.to_numpy(t)
        assert np.shares_memory(back, array)
    grad = torch.ones(2, requires_grad=True)
    assert adapter("torch").to_numpy(grad).tolist() == [1.0, 1.0]


def test_fusion_patterns_are_each_librarys_own():
    assert adapter("tensor").fusion_patterns() == [
        (tensor.nn.Conv2d, tensor.nn.BatchNorm2d, tensor_fold)]
    torch_pairs = adapter("torch").fusion_patterns()
    assert (torch.nn.Conv2d, torch.nn.BatchNorm2d, torch_fold) in torch_pairs
    assert len(torch_pairs) == 4


def test_side_effects_are_each_librarys_own():
    """Each adapter answers for its own library's impure functions, and only those."""
    tensor_fw, torch_fw = adapter("tensor"), adapter("torch")
    assert tensor_fw.has_side_effect(tensor.randn) and not tensor_fw.has_side_effect(tensor.relu)
    assert torch_fw.has_side_effect(torch._assert) and torch_fw.has_side_effect(torch.randn)
    assert torch_fw.has_side_effect(torch.ops.aten.add_.Tensor)  # its schema says it mutates
    assert not torch_fw.has_side_effect(torch.ops.aten.add.Tensor)
    assert not torch_fw.has_side_effect(tensor.randn) and not tensor_fw.has_side_effect(torch.randn)
