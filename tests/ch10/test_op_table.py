"""op_table.py against torch's own x86 BackendConfig: every op it lists has, in torch, the
observation type (or fixed qparams, or fusion) of its kind."""

from __future__ import annotations

import operator

import pytest
import torch
import torch.ao.quantization.quantize_fx  # noqa: F401  (loads the backend_config helpers)
from torch.ao.quantization.backend_config import ObservationType
from torch.ao.quantization.backend_config.x86 import get_x86_backend_config
from torch.ao.quantization.qconfig_mapping import _FIXED_QPARAMS_OP_TO_OBSERVER

from minifx.quantization.op_table import FIXED_QPARAMS, resolve_op_table

TABLE, FIXED_RANGE = resolve_op_table(torch)
CONFIGS = {config.pattern: config for config in get_x86_backend_config().configs}
# minifx's earlier extras, kept on purpose (op_table's docstring names them)
EXTRAS = {torch.relu, torch.reshape, "flatten"}

KIND_TO_TYPE = {
    "shares": ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT,
    "cat": ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT,
    "own": ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT,
    "fixed": ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT,
    "info": ObservationType.INPUT_OUTPUT_NOT_OBSERVED,
}


def _ops(kind: str) -> list:
    ops = TABLE[kind]
    return [*ops.modules, *ops.functions, *ops.methods]


@pytest.mark.parametrize("kind", sorted(KIND_TO_TYPE))
def test_each_op_has_its_kinds_observation_type_in_torch(kind):
    for op in _ops(kind):
        if op in EXTRAS:
            assert op not in CONFIGS
            continue
        assert op in CONFIGS, op
        assert CONFIGS[op].observation_type == KIND_TO_TYPE[kind], op


def test_fixed_qparams_are_torchs():
    for op in _ops("fixed"):
        observer = _FIXED_QPARAMS_OP_TO_OBSERVER[op]()
        scale, zero_point = FIXED_QPARAMS[FIXED_RANGE[op]]
        assert (observer.scale, observer.zero_point) == (scale, zero_point), op


def test_binary_ops_and_their_relu_patterns_are_torchs():
    assert set(TABLE["binary"].functions) == {torch.add, torch.mul, operator.add, operator.mul}
    for op in TABLE["binary"].functions:
        assert op in CONFIGS and (op, torch.nn.ReLU) in CONFIGS, op


def test_layers_fuse_with_the_relus_torch_fuses():
    for relu in _ops("relu"):
        for layer in (torch.nn.Conv2d, torch.nn.Linear):
            assert CONFIGS[(layer, relu)].fused_module is not None, (layer, relu)
