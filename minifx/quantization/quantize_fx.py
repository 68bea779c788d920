"""prepare_fx and convert_fx: post-training static quantization as graph passes.

    prepared = prepare_fx(model, get_default_qconfig_mapping(), example_inputs)
    for batch in calibration_data:
        prepared(batch)                      # the observers record ranges
    quantized = convert_fx(prepared)         # int8 modules and ops

``prepare_fx`` is two passes over a traced copy of the model: fuse
(``fuse.py``) and insert observers (``prepare.py``). Calibration is just
running the prepared GraphModule. ``convert_fx`` is two more: observers to
quantize / dequantize pairs (``convert.py``) and the sandwiches of float ops
to int8 ops (``lower.py``).
"""

from __future__ import annotations

import copy
from typing import Any

from .._framework import framework_of
from ..graph_module import GraphModule
from .backend import backend_for
from .convert import insert_quantize_dequantize
from .fuse import fuse_for_quantization
from .lower import lower_to_quantized
from .prepare import insert_observers
from .qconfig import QConfigMapping

__all__ = ["convert_fx", "prepare_fx"]

_WEIGHT_QCONFIGS = "_minifx_weight_qconfigs"


def prepare_fx(model: Any, qconfig_mapping: QConfigMapping, example_inputs: tuple) -> GraphModule:
    """Trace ``model`` (in eval mode), fuse it and insert observers; the model is not changed.

    ``example_inputs`` is accepted for torch's signature (tracing is symbolic and does not
    need it). A model that cannot be traced raises minifx's TraceError, naming the file and
    line of the user's code.
    """
    if not isinstance(example_inputs, tuple):
        raise TypeError("prepare_fx: example_inputs must be a tuple of example arguments")
    if getattr(model, "training", False):
        raise ValueError("prepare_fx: post-training quantization needs model.eval() first")
    backend = backend_for(framework_of(model))
    gm = fuse_for_quantization(model, backend)
    weight_qconfigs = insert_observers(gm, qconfig_mapping, backend)
    setattr(gm, _WEIGHT_QCONFIGS, weight_qconfigs)  # convert_fx's weight observers
    return gm


def convert_fx(prepared: GraphModule) -> GraphModule:
    """The int8 model of a calibrated ``prepared`` model (which is not changed).

    Warns, naming them, when observers saw no data (the model was not calibrated).
    """
    if not hasattr(prepared, _WEIGHT_QCONFIGS):
        raise TypeError("convert_fx: expected a model returned by prepare_fx")
    weight_qconfigs = getattr(prepared, _WEIGHT_QCONFIGS)
    backend = backend_for(framework_of(prepared))
    gm = copy.deepcopy(prepared)
    insert_quantize_dequantize(gm, backend)
    lower_to_quantized(gm, weight_qconfigs, backend)
    if hasattr(gm, _WEIGHT_QCONFIGS):
        delattr(gm, _WEIGHT_QCONFIGS)
    return gm
