"""minifx.quantization: FX graph-mode post-training quantization (chapter 10).

The same flow as ``torch.ao.quantization.quantize_fx``: ``prepare_fx`` fuses
and inserts observers, running the prepared model calibrates them,
``convert_fx`` swaps in int8 modules and ops. On a ``tensor`` model the int8
work runs in ``tensor.nn.quantized``'s numba kernels; on a torch model in
torch's own quantized modules, so that the two can be compared node for node.
"""

from . import quantize_fx
from .observer import HistogramObserver, MinMaxObserver, PerChannelMinMaxObserver
from .qconfig import QConfig, QConfigMapping, get_default_qconfig, get_default_qconfig_mapping
from .quantize_fx import convert_fx, prepare_fx

__all__ = [
    "HistogramObserver",
    "MinMaxObserver",
    "PerChannelMinMaxObserver",
    "QConfig",
    "QConfigMapping",
    "convert_fx",
    "get_default_qconfig",
    "get_default_qconfig_mapping",
    "prepare_fx",
    "quantize_fx",
]
