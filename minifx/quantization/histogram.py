"""The histogram observer's arithmetic: record a histogram, then choose where to clip.

Quantizing to 256 levels over [lo, hi] costs two kinds of error: values
inside the range are rounded to the nearest level (an error that grows with
the width of a level), values outside are clipped to the ends. Spreading the
levels over the full observed range makes every level wide just to cover a
few outliers. The search below narrows the range from both ends, one small
step of the value distribution at a time, and stops when the total error
stops decreasing.

The error is computed from the histogram alone, taking each bin's values as
spread evenly over the bin. For a piece of uniform density ``d`` over
[a, b] quantized to the level at ``c``, the squared error is

    d * ((b - c)^3 - (a - c)^3) / 3

Every histogram bin lies over one or more quantization levels: its first
piece goes to the level its start falls in, its last piece to the level its
end falls in, and every level wholly inside it contributes a full level's
error. Bins outside the clipping range fall into the first or last level,
which is the clipping error. This is the L2 search of torch.ao's
HistogramObserver (its docs: "minimizes the quantization error").
"""

from __future__ import annotations

import numpy as np

__all__ = ["histogram_of", "quantization_error", "rebin_histogram", "search_clipping_range"]


def histogram_of(values: np.ndarray, bins: int, lo: float, hi: float) -> np.ndarray:
    """Counts of ``values`` in ``bins`` equal bins over [lo, hi] (the last bin includes hi)."""
    if hi <= lo:
        counts = np.zeros(bins, np.float64)
        counts[0] = values.size
        return counts
    lo64, hi64 = float(lo), float(hi)
    position = (values.astype(np.float64) - lo64) * bins / (hi64 - lo64)
    index = np.clip(np.floor(position).astype(np.int64), 0, bins - 1)
    inside = (values >= lo) & (values <= hi)
    return np.bincount(index[inside], minlength=bins).astype(np.float64)


def rebin_histogram(counts: np.ndarray, lo: float, hi: float, new_lo: float, new_hi: float,
                    upsample: int = 16) -> np.ndarray:
    """The same counts over a wider range [new_lo, new_hi], torch's way: every old bin is
    cut into ``upsample`` equal pieces, each carrying its share of the count, and each
    piece goes to the new bin its midpoint falls in (float32 edges, as torch's)."""
    bins = counts.size
    f32 = np.float32
    pieces = np.repeat(counts / upsample, upsample)
    width = (f32(hi) - f32(lo)) / f32(bins * upsample)
    midpoints = np.linspace(f32(lo), f32(hi), bins * upsample + 1, dtype=f32)[:-1] \
        + f32(0.5) * width
    edges = np.linspace(f32(new_lo), f32(new_hi), bins + 1, dtype=f32)
    index = np.clip(np.searchsorted(edges, midpoints, side="right") - 1, 0, bins - 1)
    return np.bincount(index, weights=pieces, minlength=bins)


# --8<-- [start:error]
def quantization_error(
    density: np.ndarray, bin_width: float, first: int, last: int, levels: int
) -> float:
    """Total squared error of quantizing the histogram with its range clipped to the source
    bins ``first..last`` (inclusive) and ``levels`` equal quantization levels across them."""
    level_width = bin_width * (last - first + 1) / levels
    if level_width == 0.0:
        return 0.0
    starts = (np.arange(density.size) - first) * bin_width  # each bin, relative to the range
    ends = starts + bin_width
    level_of_start = np.clip(np.floor(starts / level_width), 0, levels - 1)
    level_of_end = np.clip(np.floor(ends / level_width), 0, levels - 1)
    half = level_width / 2

    def piece(a, b):  # squared error of density over [a, b] around a level centre at 0
        return density * (b**3 - a**3) / 3

    start_centre = (level_of_start + 0.5) * level_width
    error = piece(starts - start_centre, half)  # from the bin's start to its level's end
    whole_levels = level_of_end - level_of_start - 1  # levels wholly inside the bin
    error = error + whole_levels * piece(-half, half)
    end_centre = (level_of_end + 0.5) * level_width
    error = error + piece(-half, ends - end_centre)  # from its last level's start to the end
    return float(error.sum())
# --8<-- [end:error]


# --8<-- [start:search]
def search_clipping_range(
    counts: np.ndarray, lo: float, hi: float, levels: int, step: float = 1e-5
) -> tuple[float, float]:
    """The [lo', hi'] inside [lo, hi] whose quantization error is least, by greedy narrowing.

    Each round proposes to drop ``step`` more of the values' mass from the
    left or from the right (whichever end frees more bins) and keeps the
    proposal while the error goes down.
    """
    bins = counts.size
    if hi <= lo:  # every value was the same: nothing to clip
        return lo, hi
    bin_width = (hi - lo) / bins
    total = counts.sum()
    cumulative = np.cumsum(counts)
    density = counts / bin_width if bin_width > 0 else counts
    left_mass, right_mass = 0.0, 1.0  # fractions of the mass cut off below / kept below
    first, last = 0, bins - 1
    best = np.inf
    while left_mass < right_mass:
        try_left, try_right = left_mass + step, right_mass - step
        new_first, new_last = first, last
        left = first
        while left < last and cumulative[left] < try_left * total:
            left += 1
        right = last
        while right > first and cumulative[right] > try_right * total:
            right -= 1
        if left - first > last - right:
            new_first, left_mass = left, try_left
        else:
            new_last, right_mass = right, try_right
        if (new_first, new_last) == (first, last):
            continue
        error = quantization_error(density, bin_width, new_first, new_last, levels)
        if error > best:
            break
        best, first, last = error, new_first, new_last
    return lo + bin_width * first, lo + bin_width * (last + 1)
# --8<-- [end:search]
