"""``import minifx`` never imports torch: the adapter loads when a torch object is met."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def python(code):
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_import_minifx_does_not_import_torch():
    result = python(
        "import sys, minifx, minifx.proxy, minifx.tracer\n"
        "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if 'torch' in m)\n"
        "print('ok')"
    )
    assert result.stdout.strip() == "ok", result.stderr


def test_tracing_tensor_code_does_not_import_torch():
    result = python(
        "import sys, minifx, tensor\n"
        "def f(x):\n"
        "    return tensor.relu(x) + 1\n"
        "gm = minifx.symbolic_trace(f)\n"
        "assert 'torch' not in sys.modules\n"
        "print('ok')"
    )
    assert result.stdout.strip() == "ok", result.stderr


def test_the_adapter_loads_on_a_torch_module():
    result = python(
        "import sys, torch, minifx\n"
        "assert 'minifx.frameworks.torch_framework' not in sys.modules\n"
        "gm = minifx.symbolic_trace(torch.nn.Sequential(torch.nn.ReLU()))\n"
        "assert 'minifx.frameworks.torch_framework' in sys.modules\n"
        "print(isinstance(gm, torch.nn.Module))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
