"""The fast layer's int8 kernels (``tensor/backend/fast/qgemm.py``) give the taught kernels'
integers, on each of their paths: AMX tiles, AVX-512 VNNI and the portable vector code.

Each path is forced in turn (``qgemm.PATH``, what ``TENSOR_INT8_PATH`` sets for a
process). Where the CPU numba compiles for lacks a path (any CPU but a recent
Xeon for AMX; ``NUMBA_CPU_NAME=generic``, the second CPU profile, for both), the
test checks instead that forcing it is refused by name. The oracle is the taught
kernel (``TENSOR_FAST=0``'s path, itself held to torch's integers by
``test_quantized_kernels.py``), and torch's modules where one exists.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.ao.nn.intrinsic.quantized as tnniq
import torch.ao.nn.quantized as tnnq

import tensor
import tensor._quantized_ops as qops
import tensor.nn.quantized as nnq
from minifx.quantization import convert_fx, get_default_qconfig_mapping, prepare_fx
from tensor.backend.fast import qgemm
from tensor.backend.kernels import quantized as taught_kernels
from tests.ch07.ch07_models import twins
from tests.ch10.qhelpers import ints, twin_quantized, twin_weight

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.fast_layer  # the fast layer's own kernels


@pytest.fixture(autouse=True)
def fast_kernels(monkeypatch):
    """Every test here runs the quantized ops on the fast layer's kernels, whichever
    ``tensor.backend.int8()`` would pick (``TENSOR_FAST=0`` picks the taught ones)."""
    monkeypatch.setattr(qops, "int8", lambda: qgemm)


@pytest.fixture(params=["amx", "vnni", "portable"])
def kernel(request, monkeypatch):
    """The path forced for this test, or None where the CPU lacks it (after checking that
    forcing it is refused). AMX runs every layer, however few of a tile's rows its
    output rows fill (``AMX_MIN_ROWS`` 0), so the dropped windows are tested too."""
    name = request.param
    if not qgemm._AVAILABLE[name]:
        monkeypatch.setattr(qgemm, "INT8_PATH", name)
        with pytest.raises(RuntimeError, match=f"TENSOR_INT8_PATH={name}: .* no {name.upper()}"):
            qgemm._path()
        return None
    monkeypatch.setattr(qgemm, "PATH", name)
    monkeypatch.setattr(qgemm, "AMX_MIN_ROWS", 0.0)
    return name


def taught(monkeypatch, run):
    """``run()`` on the kernels layer's int8 kernels alone, as with ``TENSOR_FAST=0``."""
    with monkeypatch.context() as m:
        m.setattr(qops, "int8", lambda: taught_kernels)
        return run()


def activations(shape, seed, channels_last=False):
    """Activations in 0..127 (the x86 mapping's reduced range, where torch's GEMM is exact)."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    scale = float((x.max() - min(x.min(), 0)) / 127)
    ours, theirs = twin_quantized(x, scale, int(round(-min(x.min(), 0) / scale)))
    if channels_last:  # as a fast convolution's output is
        ours = ours._like(np.ascontiguousarray(ours._array.transpose(0, 2, 3, 1))
                          .transpose(0, 3, 1, 2))
    return ours, theirs


def twin_convs(cin, cout, k, kwargs, relu, seed=5):
    w = (np.random.default_rng(seed).standard_normal((cout, cin, *k)) * 0.2).astype(np.float32)
    ow, tw = twin_weight(w)
    ours = (nnq.ConvReLU2d if relu else nnq.Conv2d)(cin, cout, k, **kwargs)
    theirs = (tnniq.ConvReLU2d if relu else tnnq.Conv2d)(cin, cout, k, **kwargs)
    b = (np.random.default_rng(seed + 1).standard_normal(cout) * 0.1).astype(np.float32)
    ours.set_weight_bias(ow, tensor.from_numpy(b))
    theirs.set_weight_bias(tw, torch.from_numpy(b))
    ours.scale = theirs.scale = 0.05
    ours.zero_point = theirs.zero_point = 64
    return ours, theirs


CONVS = [  # (batch, in, out, kernel, size, kwargs): each layout the kernels tell apart
    (2, 3, 64, (7, 7), 33, dict(stride=2, padding=3)),  # a first layer: space to depth
    (1, 64, 64, (3, 3), 12, dict(stride=1, padding=1)),  # aligned rows, 64-byte steps
    (2, 64, 128, (3, 3), 9, dict(stride=2, padding=1)),
    (2, 64, 128, (1, 1), 8, dict(stride=2)),  # channels last in: read where it is
    (1, 128, 96, (3, 3), 2, dict(stride=1, padding=1)),  # 2x2 images: few pixels per tile
    (3, 20, 33, (3, 3), 7, dict(stride=1, padding=1)),  # channels no multiple of 4 or 64
    (2, 8, 12, (5, 5), 11, dict(padding=2, dilation=2)),  # dilated: one tap at a time
    (2, 8, 6, (3, 1), 11, dict(stride=(2, 1), padding=(1, 0))),
    (1, 4, 70, (2, 2), 9, dict(stride=2)),  # space to depth of an even kernel
]


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("config", CONVS, ids=lambda c: f"{c[1]}to{c[2]}k{c[3][0]}x{c[3][1]}")
def test_conv2d_gives_the_taught_kernels_integers(kernel, config, relu, monkeypatch):
    if kernel is None:
        return
    n, cin, cout, k, size, kwargs = config
    ours, theirs = twin_convs(cin, cout, k, kwargs, relu)
    for channels_last in (False, True):
        qx, tx = activations((n, cin, size, size), seed=cout, channels_last=channels_last)
        fast = ours(qx)
        assert fast._array.transpose(0, 2, 3, 1).flags.c_contiguous  # channels last out
        assert np.array_equal(ints(fast), ints(taught(monkeypatch, lambda qx=qx: ours(qx))))
        assert np.array_equal(ints(fast), ints(theirs(tx)))


@pytest.mark.parametrize("rows", [1, 8, 33, 130])
def test_linear_gives_the_taught_kernels_integers(kernel, rows, monkeypatch):
    if kernel is None:
        return
    w = (np.random.default_rng(7).standard_normal((70, 300)) * 0.1).astype(np.float32)
    ow, tw = twin_weight(w)
    ours, theirs = nnq.LinearReLU(300, 70), tnniq.LinearReLU(300, 70)
    ours.set_weight_bias(ow, None)
    theirs.set_weight_bias(tw, None)
    ours.scale = theirs.scale = 0.04
    ours.zero_point = theirs.zero_point = 50
    qx, tx = activations((rows, 300), seed=rows)
    fast = ours(qx)
    assert np.array_equal(ints(fast), ints(taught(monkeypatch, lambda qx=qx: ours(qx))))
    assert np.array_equal(ints(fast), ints(theirs(tx)))


def test_add_and_max_pool_keep_the_layout_and_the_integers(monkeypatch):
    """On channels-last operands (a fast convolution's outputs) the quantized add and max
    pool give the taught kernels' integers, channels last too (the max pool takes 64
    channels at a time, and leaves fewer to the taught kernel); the add's vector loop
    and its scalar tail (363 elements: 22 vectors and 11 more) both."""
    for shape in ((2, 64, 9, 9), (1, 3, 11, 11)):
        a, _ = activations(shape, seed=1, channels_last=True)
        b, _ = activations(shape, seed=2, channels_last=True)
        for name, fn in (("add_relu", lambda a=a, b=b: nnq.add_relu(a, b, 0.06, 40)),
                         ("add", lambda a=a, b=b: nnq.add(a, b, 0.06, 40)),
                         ("max_pool2d", lambda a=a: tensor.nn.functional.max_pool2d(a, 3, 2, 1))):
            fast = fn()
            assert np.array_equal(ints(fast), ints(taught(monkeypatch, fn)))
            channels_last = name != "max_pool2d" or shape[1] % 64 == 0
            assert fast._array.transpose(0, 2, 3, 1).flags.c_contiguous == channels_last


def converted_resnet():
    """Chapter 7's ResNet-18 (width 16: 16 to 128 channels) quantized by minifx."""
    ours, _ = twins(width=16)
    prepared = prepare_fx(ours, get_default_qconfig_mapping(), (tensor.zeros(2, 3, 32, 32),))
    rng = np.random.default_rng(0)
    for _ in range(2):
        prepared(tensor.from_numpy(rng.standard_normal((2, 3, 32, 32)).astype(np.float32)))
    return convert_fx(prepared)


@pytest.fixture(scope="module")
def resnet():
    return converted_resnet()


def test_resnet18_gives_the_taught_kernels_outputs(kernel, resnet, monkeypatch):
    if kernel is None:
        return
    x = tensor.from_numpy(np.random.default_rng(3).standard_normal((2, 3, 40, 40))
                          .astype(np.float32))
    assert np.array_equal(resnet(x).numpy(), taught(monkeypatch, lambda: resnet(x)).numpy())


def test_convert_fx_packs_every_weight_once():
    """Each layer's weight is packed when ``convert_fx`` builds its module, before any
    call, and a call packs nothing again."""
    model = converted_resnet()
    layers = [m for m in model.modules() if isinstance(m, (nnq.Conv2d, nnq.Linear))]
    assert len(layers) == 21
    packed = [layer.weight().__dict__["_packed"] for layer in layers]
    assert all(list(p) == [qgemm.__name__] for p in packed)
    assert all(p[qgemm.__name__].weight is layer.weight()._array
               for p, layer in zip(packed, layers))
    model(tensor.zeros(1, 3, 32, 32))
    assert all(qops.prepack(layer.weight()) is p[qgemm.__name__]
               for p, layer in zip(packed, layers))


def run(code: str, **env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TENSOR_FAST": "1", **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=env)


CONV = ("import sys, tensor, tensor.nn.quantized as nnq\n"
        "conv = nnq.Conv2d(8, 4, 3)\n"
        "y = conv(tensor.quantize_per_tensor(tensor.ones(1, 8, 5, 5), 0.1, 3, tensor.quint8))\n")


def test_the_switches_choose_the_kernels():
    """``TENSOR_FAST=0``: the taught kernels only, nothing of the fast layer imported
    but the settings that hold the switch; ``TENSOR_INT8_PATH``: the path, or a clear
    error for a name it does not know."""
    done = run(CONV + "print(y.int_repr().numpy().ravel()[0], tensor.backend.int8().__name__,"
                      " *sorted(m for m in sys.modules if m.startswith('tensor.backend.fast')))",
               TENSOR_FAST="0")
    assert done.stdout.split() == ["0", "tensor.backend.kernels.quantized", "tensor.backend.fast",
                                   "tensor.backend.fast.settings"], done.stderr
    done = run(CONV + "from tensor.backend.fast import qgemm; print(qgemm.PATH)",
               TENSOR_INT8_PATH="portable")
    assert done.stdout.split() == ["portable"], done.stderr
    done = run(CONV, TENSOR_INT8_PATH="avx9000")
    assert "TENSOR_INT8_PATH='avx9000': choose auto, amx, vnni or portable" in done.stderr
