"""tensor: a small tensor library with torch's names, on NumPy (and numba).

Write `tensor` where a torch snippet says `torch`: `tensor.randn(2, 3)`,
`x.sum(dim=1)`, `tensor.nn.Linear(4, 2)`. Every public function and method
goes through the `__tensor_function__` protocol (see `tensor.overrides`),
which is what lets minifx trace programs written against it.
"""

from . import _functions, backend
from ._dtype import bool_ as bool  # noqa: A004 (torch's name)
from ._dtype import (  # noqa: E402, I001  (quantized dtypes, chapter 10)
    dtype,
    float32,
    float64,
    int32,
    int64,
    promote_types,
    qint8,
    qint32,
    quint8,
    result_type,
)
from ._functions import *  # noqa: F403  (the public functions and Size: _functions.__all__)
from ._quantized import (  # noqa: E402
    QTensor,
    per_channel_affine,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qscheme,
    quantize_per_channel,
    quantize_per_tensor,
)
from ._tensor import Tensor

# torch's aliases for the dtypes
float = float32  # noqa: A001
double = float64
long = int64
int = int32  # noqa: A001

__version__ = "0.1.0"

# nn builds on everything above; dispatch, fake and ops are chapter 12's primitives and modes
from . import dispatch, fake, nn, ops, overrides, testing  # noqa: E402

__all__ = [
    *_functions.__all__,
    "Tensor",
    "backend",
    "bool",
    "dispatch",
    "double",
    "dtype",
    "fake",
    "float",
    "float64",
    "int",
    "int32",
    "int64",
    "long",
    "nn",
    "ops",
    "overrides",
    "promote_types",
    "result_type",
    "testing",
    # chapter 10: quantized tensors
    "QTensor",
    "per_channel_affine",
    "per_channel_symmetric",
    "per_tensor_affine",
    "per_tensor_symmetric",
    "qint32",
    "qint8",
    "qscheme",
    "quantize_per_channel",
    "quantize_per_tensor",
    "quint8",
]
