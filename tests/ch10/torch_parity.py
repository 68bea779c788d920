"""One model through minifx's and torch.ao's prepare_fx / convert_fx, everything compared.

Both sides get the default x86 mapping, the same model (each its own deep copy:
torch's prepare_fx swaps FloatFunctional modules in place) and the same batches.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import torch
import torch.ao.quantization.quantize_fx as torch_qfx
from torch.ao.quantization import get_default_qconfig_mapping as torch_mapping

import tests.ch10.qhelpers  # noqa: F401  (sets torch's quantized engine to x86)
from minifx.quantization import convert_fx, get_default_qconfig_mapping, prepare_fx

OBSERVER = "activation_post_process_"


def signature(gm) -> list[tuple[str, str, str]]:
    """(op, target, name) of every node; function targets by their name."""
    out = []
    for node in gm.graph.nodes:
        target = node.target if isinstance(node.target, str) else getattr(
            node.target, "__name__", repr(node.target)
        )
        out.append((node.op, target, node.name))
    return out


def observer_groups(gm) -> list[list[str]]:
    """The observer names, grouped by the observer object they name (shared observers)."""
    groups: dict[int, list[str]] = {}
    for name, module in gm._modules.items():
        if name.startswith(OBSERVER):
            groups.setdefault(id(module), []).append(name)
    number = lambda name: int(name[len(OBSERVER):])  # noqa: E731
    return sorted(sorted(group, key=number) for group in groups.values())


def batches(shape, count: int = 2, seed: int = 0) -> list[torch.Tensor]:
    rng = np.random.default_rng(seed)
    return [torch.from_numpy(rng.standard_normal(shape).astype(np.float32)) for _ in range(count)]


def quantize_both(model: torch.nn.Module, shape: tuple[int, ...], count: int = 2) -> dict:
    """Prepare, calibrate and convert ``model`` with both libraries; what the tests compare."""
    data = batches(shape, count)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch_qfx.prepare_fx(copy.deepcopy(model), torch_mapping("x86"), (data[0],))
        ours = prepare_fx(copy.deepcopy(model), get_default_qconfig_mapping(), (data[0],))
        result = {
            "prepared": (signature(ours), signature(theirs)),
            "groups": (observer_groups(ours), observer_groups(theirs)),
        }
        with torch.no_grad():
            for batch in data:
                theirs(batch)
                ours(batch)
        result["observers"] = {
            name: (module.calculate_qparams(), theirs._modules[name].calculate_qparams())
            for name, module in ours._modules.items() if name.startswith(OBSERVER)
        }
        result["converted"] = (convert_fx(ours), torch_qfx.convert_fx(theirs))
    result["batches"] = data
    return result


def assert_prepared_equal(result: dict) -> None:
    ours, theirs = result["prepared"]
    assert ours == theirs
    ours, theirs = result["groups"]
    assert ours == theirs  # the same observers are shared


def assert_observers_equal(result: dict) -> None:
    assert result["observers"]
    for name, ((scale, zp), (their_scale, their_zp)) in result["observers"].items():
        assert abs(scale - float(their_scale)) <= 0.01 * float(their_scale), name
        assert zp == int(their_zp), name


def assert_converted_equal(result: dict) -> None:
    """The same nodes, the same qparams buffers and quantized modules (type, scale, zp)."""
    ours, theirs = result["converted"]
    assert signature(ours) == signature(theirs)
    their_buffers = dict(theirs.named_buffers())
    our_buffers = dict(ours.named_buffers())
    names = [n for n in their_buffers if "_scale_" in n or "_zero_point_" in n]
    assert names and all(n in our_buffers for n in names)
    for name in names:
        assert abs(float(our_buffers[name]) - float(their_buffers[name])) <= \
            0.01 * abs(float(their_buffers[name])), name
    their_modules = dict(theirs.named_modules())
    for name, module in ours.named_modules():
        if hasattr(module, "zero_point") and hasattr(module, "scale"):
            assert type(module) is type(their_modules[name]), name
            assert module.zero_point == their_modules[name].zero_point, name
            assert abs(module.scale - their_modules[name].scale) <= \
                0.01 * their_modules[name].scale, name


def output_steps(result: dict) -> float:
    """The largest distance of our converted outputs from torch's, in steps of the output."""
    ours, theirs = result["converted"]
    scale = _output_scale(theirs)
    with torch.no_grad():
        worst = max((ours(b) - theirs(b)).abs().max().item() for b in result["batches"])
    return worst / scale


def _output_scale(gm) -> float:
    """The scale of the value the final dequantize reads."""
    output = next(n for n in gm.graph.nodes if n.op == "output")
    source = output.args[0].args[0]
    if source.op == "call_module":
        return float(gm.get_submodule(source.target).scale)
    scale_arg = source.args[1] if source.target is torch.quantize_per_tensor else source.args[2]
    return float(getattr(gm, scale_arg.target))
