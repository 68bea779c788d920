"""Twins of the library functions that torch.fx records whole.

torchvision registers a few of its own functions with ``torch.fx.wrap``, so a
trace keeps each call as one ``call_function`` node instead of going inside:
``stochastic_depth`` (EfficientNet, ConvNeXt, Swin, MaxViT) and Swin's
window attention and its two helpers. A converted graph needs a ``tensor``
function for each, written here from what the function computes, and found
by the torch function's qualified name, so that nothing here imports
torchvision: the table picks these up only when the traced model has
already imported it.

Swin's attention, in brief. The image (N, H, W, C) is cut into windows of
``window_size`` patches; attention runs inside each window, with a learned
bias per relative position. Every other block first rolls the image by
``shift_size`` so that windows straddle the previous block's borders; the
patches that the roll brought in from the far side must not attend to their
new neighbours, so the attention gets a mask of -100 between patches that
come from different regions. The mask depends on sizes only: it is computed
here with NumPy, as a constant.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import tensor
import tensor.nn.functional as F


def stochastic_depth(input: Any, p: float, mode: str, training: bool = True) -> Any:
    """Drop whole residual branches at random while training (``"row"``: per sample,
    ``"batch"``: all at once), scaling what survives by 1 / (1 - p); the identity in eval."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"stochastic_depth: p must be between 0 and 1, got {p}")
    if mode not in ("batch", "row"):
        raise ValueError(f"stochastic_depth: mode must be 'batch' or 'row', got {mode!r}")
    if not training or p == 0.0:
        return input
    keep = 1.0 - p
    shape = [input.shape[0]] + [1] * (input.ndim - 1) if mode == "row" else [1] * input.ndim
    noise = (tensor.rand(*shape) < keep).to(input.dtype)
    return input * (noise / keep if keep > 0.0 else noise)


def patch_merging_pad(x: Any) -> Any:
    """Pad H and W to even sizes, then stack each 2x2 block of patches along the
    channels: (..., H, W, C) -> (..., H/2, W/2, 4C), in the order (0,0), (1,0), (0,1), (1,1)."""
    h, w = x.shape[-3], x.shape[-2]
    x = F.pad(x, (0, 0, 0, w % 2, 0, h % 2))
    corners = [x[..., dy::2, dx::2, :] for dx, dy in ((0, 0), (0, 1), (1, 0), (1, 1))]
    return tensor.cat(corners, -1)


def relative_position_bias(table: Any, index: Any, window_size: list[int]) -> Any:
    """The learned bias of each (query, key) pair of a window, one plane per head:
    rows of ``table`` picked by ``index``, as (1, heads, N, N) for N patches per window."""
    n = window_size[0] * window_size[1]
    bias = table[index].view(n, n, -1)
    return bias.permute(2, 0, 1).contiguous().unsqueeze(0)


def _roll(x: Any, shifts: tuple[int, int], dims: tuple[int, int]) -> Any:
    """``torch.roll`` over two dims, as two concatenations of slices."""
    for shift, dim in zip(shifts, dims):
        size = x.shape[dim]
        shift %= size
        if shift:
            head = (slice(None),) * dim + (slice(size - shift, None),)
            tail = (slice(None),) * dim + (slice(0, size - shift),)
            x = tensor.cat([x[head], x[tail]], dim)
    return x


def _unit_rows(x: Any) -> Any:
    """Each row of the last dim scaled to length 1 (``F.normalize``; eps 1e-12)."""
    return x / tensor.clamp(tensor.sqrt((x * x).sum(-1, keepdim=True)), min=1e-12)


def _shift_mask(height: int, width: int, window: list[int], shift: list[int]) -> np.ndarray:
    """(windows, N, N): 0 between patches of the same region of the rolled image, -100
    between patches of different regions (brought together by the roll)."""
    region = np.zeros((height, width), np.float32)
    rows = (slice(0, height - window[0]), slice(height - window[0], height - shift[0]),
            slice(height - shift[0], height))
    cols = (slice(0, width - window[1]), slice(width - window[1], width - shift[1]),
            slice(width - shift[1], width))
    for i, (r, c) in enumerate((r, c) for r in rows for c in cols):
        region[r, c] = i
    per_window = (region.reshape(height // window[0], window[0], width // window[1], window[1])
                  .transpose(0, 2, 1, 3).reshape(-1, window[0] * window[1]))
    differ = per_window[:, None, :] != per_window[:, :, None]
    return np.where(differ, np.float32(-100.0), np.float32(0.0))


def shifted_window_attention(
    input: Any, qkv_weight: Any, proj_weight: Any, relative_position_bias: Any,
    window_size: list[int], num_heads: int, shift_size: list[int],
    attention_dropout: float = 0.0, dropout: float = 0.0, qkv_bias: Any = None,
    proj_bias: Any = None, logit_scale: Any = None, training: bool = True,
) -> Any:
    """Multi-head self-attention inside (shifted) windows of an (N, H, W, C) image.

    With ``logit_scale`` (Swin V2), the scores are cosine similarities times a learned
    temperature, at most 100, and the keys get no bias."""
    n, h, w, c = input.shape
    pad_h, pad_w = -h % window_size[0], -w % window_size[1]
    x = F.pad(input, (0, 0, 0, pad_w, 0, pad_h))
    full_h, full_w = h + pad_h, w + pad_w
    # A window as large as the image has nothing to shift across.
    shift = [0 if window_size[0] >= full_h else shift_size[0],
             0 if window_size[1] >= full_w else shift_size[1]]
    shifted = sum(shift) > 0
    if shifted:
        x = _roll(x, (-shift[0], -shift[1]), (1, 2))
    rows, cols = full_h // window_size[0], full_w // window_size[1]
    patches = window_size[0] * window_size[1]
    x = x.view(n, rows, window_size[0], cols, window_size[1], c)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(n * rows * cols, patches, c)

    if logit_scale is not None and qkv_bias is not None:  # V2: no bias on the keys
        third = qkv_bias.shape[0] // 3
        qkv_bias = tensor.cat([qkv_bias[:third], tensor.zeros(third, dtype=qkv_bias.dtype),
                               qkv_bias[2 * third:]])
    heads = F.linear(x, qkv_weight, qkv_bias)
    heads = heads.reshape(x.shape[0], patches, 3, num_heads, c // num_heads)
    q, k, v = heads.permute(2, 0, 3, 1, 4).unbind(0)
    if logit_scale is None:
        scores = (q * (c // num_heads) ** -0.5) @ k.transpose(-2, -1)
    else:
        scores = _unit_rows(q) @ _unit_rows(k).transpose(-2, -1)
        scores = scores * tensor.exp(tensor.clamp(logit_scale, max=math.log(100.0)))
    scores = scores + relative_position_bias
    if shifted:
        mask = tensor.from_numpy(_shift_mask(full_h, full_w, window_size, shift))
        scores = scores.view(n, rows * cols, num_heads, patches, patches)
        scores = (scores + mask.unsqueeze(1).unsqueeze(0)).view(-1, num_heads, patches, patches)
    attention = F.dropout(F.softmax(scores, dim=-1), p=attention_dropout, training=training)
    x = (attention @ v).transpose(1, 2).reshape(x.shape[0], patches, c)
    x = F.dropout(F.linear(x, proj_weight, proj_bias), p=dropout, training=training)

    x = x.view(n, rows, cols, window_size[0], window_size[1], c)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(n, full_h, full_w, c)
    if shifted:
        x = _roll(x, (shift[0], shift[1]), (1, 2))
    return x[:, :h, :w, :].contiguous()


# torch function's qualified name -> its twin.
TWINS = {
    "torchvision.ops.stochastic_depth.stochastic_depth": stochastic_depth,
    "torchvision.models.swin_transformer._patch_merging_pad": patch_merging_pad,
    "torchvision.models.swin_transformer._get_relative_position_bias": relative_position_bias,
    "torchvision.models.swin_transformer.shifted_window_attention": shifted_window_attention,
}
