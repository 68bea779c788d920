"""After ``import tensor``, every subpackage that torch exposes after ``import torch`` is
there as an attribute (``tensor.nn.quantized.Linear`` without importing
``tensor.nn.quantized`` first), and torch is still not imported."""

import json
import pkgutil
import subprocess
import sys

import tensor


def public_submodules() -> list[str]:
    """Every module of the tensor package whose dotted path has no private part."""
    names = [m.name for m in pkgutil.walk_packages(tensor.__path__, "tensor.")]
    return sorted(n for n in names if not any(part.startswith("_") for part in n.split(".")))


def attribute_chains(package: str, names: list[str]) -> dict[str, bool]:
    """In a fresh interpreter: after ``import <package>`` alone, which dotted names resolve
    as attributes from the package down (no import of the submodule itself)."""
    code = (
        "import functools, json, sys\n"
        f"import {package}\n"
        f"names = {names!r}\n"
        "def there(name):\n"
        "    parts = name.split('.')\n"
        "    try:\n"
        "        functools.reduce(getattr, parts[1:], sys.modules[parts[0]])\n"
        "    except AttributeError:\n"
        "        return False\n"
        "    return True\n"
        "print(json.dumps({'there': {n: there(n) for n in names},\n"
        "                  'torch': 'torch' in sys.modules}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def test_every_subpackage_torch_exposes_is_an_attribute_after_import():
    ours = public_submodules()
    assert "tensor.nn.quantized" in ours and "tensor.nn.intrinsic" in ours
    twins = [name.replace("tensor", "torch", 1) for name in ours]
    in_torch = attribute_chains("torch", twins)["there"]
    expected = [name for name, twin in zip(ours, twins) if in_torch[twin]]
    assert "tensor.nn.quantized" in expected  # torch.nn.quantized is there after import torch
    result = attribute_chains("tensor", expected)
    missing = [name for name in expected if not result["there"][name]]
    assert missing == [], f"not attributes after import tensor: {missing}"
    assert result["torch"] is False
