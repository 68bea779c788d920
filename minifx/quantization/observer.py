"""Observers: modules that watch the values flowing through an edge and choose qparams.

An observer is the identity on its input; as a side effect it remembers what
it saw (a running min and max, or a histogram). After calibration,
``calculate_qparams()`` turns that record into the ``(scale, zero_point)``
of an affine quantization:

    scale      = (max - min) / (quant_max - quant_min)
    zero_point = quant_min - round(min / scale)

with the range always stretched to contain 0, so that the real 0 (padding,
ReLU's floor) is exactly representable. A *symmetric* scheme centres the
range on 0 instead: ``scale = max(|min|, max) / ((quant_max - quant_min) / 2)``
and a zero point in the middle (0 for qint8). Per-channel observers do the
same for every slice along ``ch_axis`` (a convolution's output channels).

The arithmetic is torch's, step by step in float32, so the qparams are equal
to torch.ao.quantization's. An observer works on NumPy arrays; ``forward``
reads them from a ``tensor`` or a torch tensor alike, so one class serves
both frameworks (the torch adapter wraps it in a torch module).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np

import tensor
import tensor.nn as nn

from .histogram import histogram_of, rebin_histogram, search_clipping_range

__all__ = [
    "FixedQParamsObserver",
    "HistogramObserver",
    "MinMaxObserver",
    "ObserverBase",
    "PerChannelMinMaxObserver",
    "PlaceholderObserver",
    "default_qrange",
    "qparams_from_range",
]

_EPS = float(np.finfo(np.float32).eps)
_NAMES = {"quint8": "quint8", "qint8": "qint8", "qint32": "qint32"}


def _dtype_name(dtype: Any) -> str:
    """'quint8' for tensor.quint8 and for torch.quint8 alike."""
    name = str(dtype).rsplit(".", 1)[-1]
    if name not in _NAMES:
        raise ValueError(f"observer: unsupported dtype {dtype!r} (quint8, qint8 or qint32)")
    return name


def _scheme_name(qscheme: Any) -> str:
    return str(qscheme).rsplit(".", 1)[-1]


def default_qrange(dtype_name: str, reduce_range: bool) -> tuple[int, int]:
    """The integer range: reduce_range drops one bit (x86's int16 pair sums cannot overflow)."""
    if dtype_name == "quint8":
        return (0, 127) if reduce_range else (0, 255)
    if dtype_name == "qint8":
        return (-64, 63) if reduce_range else (-128, 127)
    return (-(2**31), 2**31 - 1)


def as_numpy(x: Any) -> np.ndarray:
    """The values of a ``tensor`` or torch tensor as a NumPy array (no torch import here)."""
    if isinstance(x, tensor.Tensor):
        return x._array
    if hasattr(x, "detach"):  # a torch tensor
        return x.detach().cpu().numpy()
    return np.asarray(x)


# --8<-- [start:qparams]
def qparams_from_range(
    min_val: np.ndarray, max_val: np.ndarray, quant_min: int, quant_max: int,
    symmetric: bool, signed: bool, eps: float = _EPS,
) -> tuple[np.ndarray, np.ndarray]:
    """Scale and zero point (float32, int64 arrays) for each (min, max) pair, torch's way."""
    f32 = np.float32
    min_neg = np.minimum(np.asarray(min_val, f32), f32(0))
    max_pos = np.maximum(np.asarray(max_val, f32), f32(0))
    if symmetric:
        bound = np.maximum(-min_neg, max_pos)
        scale = bound / f32((quant_max - quant_min) / 2)
        scale = np.maximum(scale, f32(eps))
        middle = 0 if signed else (quant_min + quant_max + 1) // 2
        zero_point = np.full(scale.shape, middle, dtype=np.int64)
    else:
        scale = (max_pos - min_neg) / f32(quant_max - quant_min)
        scale = np.maximum(scale, f32(eps))
        zero_point = quant_min - np.rint(min_neg / scale).astype(np.int64)
        zero_point = np.clip(zero_point, quant_min, quant_max)
    return scale.astype(f32), zero_point.astype(np.int64)
# --8<-- [end:qparams]


class _PartialConstructor:
    """What ``Observer.with_args(...)`` returns: a constructor with some arguments fixed."""

    def __init__(self, cls: type, **kwargs: Any) -> None:
        self.p = functools.partial(cls, **kwargs)

    def __call__(self, **kwargs: Any) -> ObserverBase:
        return self.p(**kwargs)

    def with_args(self, **kwargs: Any) -> _PartialConstructor:
        return _PartialConstructor(self.p.func, **{**self.p.keywords, **kwargs})

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.p.keywords.items())
        return f"{self.p.func.__name__}.with_args({args})"


# --8<-- [start:observer_base]
class ObserverBase(nn.Module):
    """Identity that records; subclasses say what they record and how it becomes qparams."""

    def __init__(self, dtype: Any = tensor.quint8, qscheme: Any = tensor.per_tensor_affine,
                 reduce_range: bool = False, quant_min: int | None = None,
                 quant_max: int | None = None, eps: float = _EPS, is_dynamic: bool = False,
                 **kwargs: Any) -> None:
        """Keep the settings and start with an empty range, as torch.ao's observers.

        ``dtype``, ``qscheme``, ``reduce_range`` and ``eps`` are kept as they
        are; other keyword arguments are accepted and ignored. The integer
        range ``quant_min``, ``quant_max`` is the one given, as ints, or else
        ``default_qrange`` of the dtype's name (``_dtype_name``) and
        ``reduce_range``. Giving only one of the two is a ValueError ``observer:
        give both quant_min and quant_max, or neither``; a range without 0 is a
        ValueError ``observer: the range [quant_min, quant_max] must contain
        0``. ``_signed`` is whether the dtype is not ``quint8``; the running
        range starts empty: ``_min`` is float32 +inf and ``_max`` float32 -inf.
        """
        super().__init__()
        self.dtype = dtype
        self.qscheme = qscheme
        self.reduce_range = reduce_range
        self.eps = eps
        name = _dtype_name(dtype)
        if (quant_min is None) != (quant_max is None):
            raise ValueError("observer: give both quant_min and quant_max, or neither")
        if quant_min is not None:
            if not quant_min <= 0 <= quant_max:
                raise ValueError("observer: the range [quant_min, quant_max] must contain 0")
            self.quant_min, self.quant_max = int(quant_min), int(quant_max)
        else:
            self.quant_min, self.quant_max = default_qrange(name, reduce_range)
        self._signed = name != "quint8"
        # The running range, per tensor (a per-channel observer keeps arrays).
        self._min = np.float32(np.inf)
        self._max = np.float32(-np.inf)

    @classmethod
    def with_args(cls, **kwargs: Any) -> _PartialConstructor:
        """A constructor with ``kwargs`` fixed, as torch's ``Observer.with_args``."""
        return _PartialConstructor(cls, **kwargs)

    @property
    def symmetric(self) -> bool:
        return _scheme_name(self.qscheme).endswith("symmetric")

    def forward(self, x: Any) -> Any:
        self.observe(as_numpy(x))
        return x

    @property
    def min_val(self) -> float:
        return float(self._min)

    @property
    def max_val(self) -> float:
        return float(self._max)

    def observe(self, values: np.ndarray) -> None:
        """Record one batch; every observer says what it keeps."""
        raise NotImplementedError(f"{type(self).__name__} does not define observe(values)")

    @property
    def has_data(self) -> bool:
        """Whether the observer saw at least one value (convert_fx warns when not)."""
        return bool(np.all(np.isfinite(self._min)) and np.all(np.isfinite(self._max)))

    def _qparams(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scale and zero point of the range [lo, hi] with this observer's settings.

        ``qparams_from_range`` with the observer's ``quant_min``, ``quant_max``,
        ``symmetric``, ``_signed`` and ``eps``. An observer without data
        (``has_data`` false) warns instead, as torch does, a UserWarning ``must
        run observer before calling calculate_qparams. Returning default scale
        and zero point``, and gives scale 1.0 (float32) and zero point 0 (int64),
        shaped like ``lo``. The warning names the line that called
        ``calculate_qparams`` (stacklevel 3: past this method and its caller), where
        the user can act on it; torch's names a line of its own observer.py.
        """
        if not self.has_data:
            warnings.warn(
                "must run observer before calling calculate_qparams. Returning default scale "
                "and zero point",
                UserWarning,
                stacklevel=3,
            )
            shape = np.shape(lo)
            return np.ones(shape, np.float32), np.zeros(shape, np.int64)
        return qparams_from_range(
            lo, hi, self.quant_min, self.quant_max, self.symmetric, self._signed, self.eps
        )
# --8<-- [end:observer_base]


class MinMaxObserver(ObserverBase):
    """The running minimum and maximum of everything seen (torch.ao's MinMaxObserver;
    its arguments are ObserverBase's)."""

    # --8<-- [start:minmax_observe]
    def observe(self, values: np.ndarray) -> None:
        """Widen the running [min, max] (float32) to this batch's; an empty one changes nothing."""
        if values.size == 0:
            return
        self._min = np.minimum(self._min, values.min()).astype(np.float32)
        self._max = np.maximum(self._max, values.max()).astype(np.float32)
    # --8<-- [end:minmax_observe]

    def calculate_qparams(self) -> tuple[float, int]:
        scale, zero_point = self._qparams(self._min, self._max)
        return float(scale), int(zero_point)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class PerChannelMinMaxObserver(ObserverBase):
    """A minimum and maximum for every slice along ``ch_axis`` (weights' output channels)."""

    def __init__(self, ch_axis: int = 0, dtype: Any = tensor.quint8,
                 qscheme: Any = tensor.per_channel_affine, **kwargs: Any) -> None:
        super().__init__(dtype=dtype, qscheme=qscheme, **kwargs)
        self.ch_axis = ch_axis
        self._min = np.zeros(0, np.float32)
        self._max = np.zeros(0, np.float32)

    @property
    def min_val(self) -> np.ndarray:
        return self._min.copy()

    @property
    def max_val(self) -> np.ndarray:
        return self._max.copy()

    @property
    def has_data(self) -> bool:
        return self._min.size > 0

    def observe(self, values: np.ndarray) -> None:
        rows = np.moveaxis(values, self.ch_axis, 0).reshape(values.shape[self.ch_axis], -1)
        lo, hi = rows.min(axis=1).astype(np.float32), rows.max(axis=1).astype(np.float32)
        if self._min.size:
            lo, hi = np.minimum(lo, self._min), np.maximum(hi, self._max)
        self._min, self._max = lo, hi

    def calculate_qparams(self) -> tuple[np.ndarray, np.ndarray]:
        """Arrays of per-channel scales (float32) and zero points (int64)."""
        if not self.has_data:
            warnings.warn("must run observer before calling calculate_qparams. Returning "
                          "default scale and zero point", UserWarning, stacklevel=2)
            return np.ones(1, np.float32), np.zeros(1, np.int64)
        return qparams_from_range(self._min, self._max, self.quant_min, self.quant_max,
                                  self.symmetric, self._signed, self.eps)

    def extra_repr(self) -> str:
        return f"min_val={self._min}, max_val={self._max}"


class HistogramObserver(ObserverBase):
    """A histogram of everything seen; its qparams clip the range where that costs least.

    min/max quantization spends the 256 levels on the whole range, outliers
    included. This observer keeps a ``bins``-bin histogram and, at
    ``calculate_qparams``, searches for the clipping range whose quantization
    error (the squared distance of every value to its quantization level,
    computed from the histogram) is smallest: see ``histogram.py``.
    """

    def __init__(self, bins: int = 2048, dtype: Any = tensor.quint8,
                 qscheme: Any = tensor.per_tensor_affine, reduce_range: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, **kwargs)
        self.bins = bins
        self.dst_nbins = 256 if _dtype_name(dtype) != "qint32" else 2**32
        self.histogram = np.zeros(bins, np.float64)

    # --8<-- [start:histogram_observer]
    def observe(self, values: np.ndarray) -> None:
        """Add one batch to the histogram, widening its range when the batch goes past it.

        The values count as a flat float32 array; an empty batch changes nothing.
        The first batch sets the range to its own min and max, and the histogram
        to its counts (``histogram_of`` with ``self.bins`` bins). A later batch
        whose min or max lies outside the range widens it: the histogram so far
        is spread over the wider range first (``rebin_histogram``), and the new
        range kept (float32). Then the batch's counts over the (possibly wider)
        range are added.
        """
        values = values.astype(np.float32).reshape(-1)
        if values.size == 0:
            return
        lo, hi = np.float32(values.min()), np.float32(values.max())
        if not self.has_data:
            self._min, self._max = lo, hi
            self.histogram = histogram_of(values, self.bins, lo, hi)
            return
        new_lo, new_hi = min(lo, self._min), max(hi, self._max)
        if (new_lo, new_hi) != (self._min, self._max):
            self.histogram = rebin_histogram(
                self.histogram, self._min, self._max, new_lo, new_hi
            )
            self._min, self._max = np.float32(new_lo), np.float32(new_hi)
        self.histogram = self.histogram + histogram_of(values, self.bins, self._min, self._max)

    def calculate_qparams(self) -> tuple[float, int]:
        """The scale and zero point (a float and an int) of the clipping range whose
        quantization error is least (``search_clipping_range`` over the histogram, the
        range and ``self.dst_nbins`` levels), through ``_qparams``. Without data,
        ``_qparams`` of the empty range: its warning and the defaults."""
        if not self.has_data:
            scale, zero_point = self._qparams(self._min, self._max)
            return float(scale), int(zero_point)
        lo, hi = search_clipping_range(
            self.histogram, float(self._min), float(self._max), self.dst_nbins
        )
        scale, zero_point = self._qparams(np.float32(lo), np.float32(hi))
        return float(scale), int(zero_point)
    # --8<-- [end:histogram_observer]

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class PlaceholderObserver(ObserverBase):
    """Records nothing; stands for "no observer here" in a QConfig (torch's NoopObserver)."""

    @property
    def has_data(self) -> bool:
        return True

    def observe(self, values: np.ndarray) -> None:
        return None


class FixedQParamsObserver(ObserverBase):
    """Qparams known before any data: an op whose values always lie in a fixed range
    (hardsigmoid and sigmoid in [0, 1]) gets the scale and zero point of that range,
    so that its int8 kernel can write its result without being told them."""

    def __init__(self, scale: float, zero_point: int, dtype: Any = tensor.quint8,
                 qscheme: Any = tensor.per_tensor_affine, quant_min: int = 0,
                 quant_max: int = 255, **kwargs: Any) -> None:
        super().__init__(dtype=dtype, qscheme=qscheme, quant_min=quant_min,
                         quant_max=quant_max, **kwargs)
        self.scale = float(scale)
        self.zero_point = int(zero_point)

    @property
    def has_data(self) -> bool:
        return True

    def observe(self, values: np.ndarray) -> None:
        return None

    def calculate_qparams(self) -> tuple[float, int]:
        return self.scale, self.zero_point

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}"
