"""Attention in tensor ops: scaled dot-product attention and torch's multi-head attention.

``tensor.nn.functional.scaled_dot_product_attention`` and
``multi_head_attention_forward`` check their arguments and call these with
Tensors. Every step here is a public tensor op (``matmul``, ``softmax``,
``where``, ``reshape``, ``cat`` ...), none a NumPy call on the data: while
a dispatch mode is on, each step is a primitive the mode sees, so
``make_fx`` records attention as it records a convolution and a fake
tensor computes its shapes; with no mode on, each step runs its kernel
directly. Two masks are made here from shapes alone (a causal mask, and
the "every key left out" test of a row when nothing traces): those are
constants, not computations.

Two mask conventions meet here, both torch's: in scaled dot-product attention a
boolean mask says which keys a query may attend to (True takes part); in
multi-head attention ``attn_mask`` and ``key_padding_mask`` say which keys to
leave out (True is masked). Float masks are added to the scores in both.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _functions as _core
from .. import dispatch as _dispatch
from .._dtype import bool_, dtype
from .._tensor import Tensor
from . import functional as F  # a cycle: functional imports this module; used at call time


def _swap_last(x: Tensor) -> Tensor:
    return x.transpose(-1, -2)


def _scalar(value: float, like: dtype) -> Tensor:
    """A 0-d tensor of ``value``: made by a creation op (torch's make_fx records its
    ``scalar_tensor`` the same way), not a number frozen into a traced graph."""
    return _core.full((), value, dtype=like)


def _dropout(x: Tensor, p: float) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p)."""
    if p >= 1.0:
        return _core.zeros_like(x)
    keep = _core.rand(tuple(x.shape)) >= p  # the tensor RNG: manual_seed applies
    return _core.where(keep, x * (1.0 / (1.0 - p)), _scalar(0.0, x.dtype))


def blocked_as_minus_inf(mask: Tensor, like: dtype) -> Tensor:
    """A boolean "leave out" mask as the float mask torch makes of it: -inf where True."""
    return _core.where(mask, _scalar(-math.inf, like), _scalar(0.0, like))


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """One more key column (for bias_k or the zero key), not masked."""
    if mask is None:
        return None
    column = _core.zeros(*mask.shape[:-1], 1, dtype=mask.dtype)
    return _core.cat([mask, column], dim=-1)


# --------------------------------------------------------------- scaled dot product


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float,
              is_causal: bool, scale: float | None, empty_rows_zero: bool = True) -> Tensor:
    """softmax(q @ k^T * scale + mask) @ v over the last two dimensions.

    ``mask`` is boolean (True takes part) or float (added). A query whose every
    key is masked gets a zero row where torch's CPU kernel gives zeros
    (``empty_rows_zero``), and NaN where torch's softmax path gives NaN.
    """
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = _core.matmul(q, _swap_last(k)) * factor
    if is_causal:  # query i sees keys 0..i: from the shapes alone, a constant
        length, source = q.shape[-2], k.shape[-2]
        mask = Tensor._from_array(np.tril(np.ones((length, source), np.bool_)))
    if mask is not None and mask.dtype == bool_:
        scores = _core.where(mask, scores, _scalar(-math.inf, scores.dtype))
    elif mask is not None:
        scores = scores + mask.to(scores.dtype)
    empty = None
    if empty_rows_zero:  # softmax of a row of -inf would be 0 / 0
        empty = (scores == -math.inf).amin(dim=-1, keepdim=True)
        if not _dispatch._routing and not empty._array.any():
            # No such row, and nothing traces: skip the two wheres. A traced run does
            # not test the values (a fake tensor has none): it records the wheres.
            empty = None
    if empty is not None:
        zero = _scalar(0.0, scores.dtype)
        scores = _core.where(empty, zero, scores)
    with np.errstate(invalid="ignore"):  # a row of -inf gives NaN, as in torch
        weights = _core.softmax(scores.contiguous(), -1)
    if empty is not None:
        weights = _core.where(empty, zero, weights)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p)
    return _core.matmul(weights, v)


def repeat_heads(k: Tensor, v: Tensor, heads: int) -> tuple[Tensor, Tensor]:
    """Grouped-query attention: each key/value head serves heads // k_heads query heads,
    in a row (head 0 ``groups`` times, then head 1 ...), as torch's repeat_interleave."""
    groups = heads // k.shape[-3]

    def repeat(x: Tensor) -> Tensor:
        *batch, kv_heads, source, features = x.shape
        spread = x.unsqueeze(-3).expand(*batch, kv_heads, groups, source, features)
        return spread.reshape(*batch, kv_heads * groups, source, features)

    return repeat(k), repeat(v)


# --------------------------------------------------------------- multi-head attention


def multi_head_attention(
    query: Tensor, key: Tensor, value: Tensor, num_heads: int,
    projections: tuple[Tensor, Tensor, Tensor],
    biases: tuple[Tensor | None, Tensor | None, Tensor | None],
    bias_kv: tuple[Tensor | None, Tensor | None], add_zero_attn: bool,
    dropout_p: float, out_weight: Tensor, out_bias: Tensor | None,
    key_padding_mask: Tensor | None, need_weights: bool, attn_mask: Tensor | None,
    static_kv: tuple[Tensor | None, Tensor | None], average_attn_weights: bool,
    is_causal: bool,
) -> tuple[Tensor, Tensor | None]:
    """torch's multi-head attention on checked, batched, sequence-first tensors.

    ``query`` is (L, N, E), ``key`` and ``value`` (S, N, kdim/vdim); the masks
    are float already (-inf where left out). Returns the (L, N, E) output and
    the weights, (N, L, S) averaged over heads or (N, H, L, S), or None.
    """
    length, batch, embed = query.shape
    head = embed // num_heads
    q, k, v = (F.linear(x, w, b) for x, w, b in zip((query, key, value), projections, biases))
    if attn_mask is not None and attn_mask.ndim == 2:
        attn_mask = attn_mask.unsqueeze(0)
    bias_k, bias_v = bias_kv
    if bias_k is not None and bias_v is not None:
        k = _core.cat([k, bias_k.expand(1, batch, embed)])
        v = _core.cat([v, bias_v.expand(1, batch, embed)])
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    q = q.reshape(length, batch * num_heads, head).transpose(0, 1)
    static_k, static_v = static_kv
    k = static_k if static_k is not None else (
        k.reshape(k.shape[0], batch * num_heads, head).transpose(0, 1))
    v = static_v if static_v is not None else (
        v.reshape(v.shape[0], batch * num_heads, head).transpose(0, 1))
    if add_zero_attn:
        zeros = _core.zeros(batch * num_heads, 1, head, dtype=q.dtype)
        k, v = _core.cat([k, zeros], dim=1), _core.cat([v, zeros], dim=1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    source = k.shape[1]
    if key_padding_mask is not None:
        padding = key_padding_mask.reshape(batch, 1, 1, source).expand(
            batch, num_heads, 1, source).reshape(batch * num_heads, 1, source)
        attn_mask = padding if attn_mask is None else attn_mask + padding
    if need_weights:
        scores = _core.matmul(q * math.sqrt(1.0 / head), _swap_last(k))
        if attn_mask is not None:
            scores = scores + attn_mask
        with np.errstate(invalid="ignore"):  # a row of -inf gives NaN, as in torch
            weights = _core.softmax(scores.contiguous(), 2)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p)
        out = _core.matmul(weights, v)
        weights = weights.reshape(batch, num_heads, length, source)
        if average_attn_weights:
            weights = weights.mean(1)
    else:
        if attn_mask is not None:
            attn_mask = (attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1
                         else attn_mask.reshape(batch, num_heads, -1, source))
        out = attention(q.reshape(batch, num_heads, length, head),
                        k.reshape(batch, num_heads, source, head),
                        v.reshape(batch, num_heads, source, head),
                        attn_mask, dropout_p, is_causal, None)
        out = out.reshape(batch * num_heads, length, head)
        weights = None
    out = out.transpose(0, 1).contiguous().reshape(length * batch, embed)
    out = F.linear(out, out_weight, out_bias).reshape(length, batch, -1)
    return out, weights
