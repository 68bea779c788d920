"""Attention on arrays: scaled dot-product attention and torch's multi-head attention.

``tensor.nn.functional.scaled_dot_product_attention`` and
``multi_head_attention_forward`` check their arguments and call these with
plain NumPy arrays, so that the work runs on the backend's matmul, linear and
softmax kernels without a dispatch per step.

Two mask conventions meet here, both torch's: in scaled dot-product attention a
boolean mask says which keys a query may attend to (True takes part); in
multi-head attention ``attn_mask`` and ``key_padding_mask`` say which keys to
leave out (True is masked). Float masks are added to the scores in both.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _functions as _core
from ..backend import ops


def _swap_last(array: np.ndarray) -> np.ndarray:
    return np.swapaxes(array, -1, -2)


def _dropout(array: np.ndarray, p: float) -> np.ndarray:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p)."""
    if p >= 1.0:
        return np.zeros_like(array)
    keep = _core.rand(array.shape)._array >= p  # the tensor RNG: manual_seed applies
    return np.where(keep, array * array.dtype.type(1.0 / (1.0 - p)), 0).astype(array.dtype)


def blocked_as_minus_inf(mask: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A boolean "leave out" mask as the float mask torch makes of it: -inf where True."""
    return np.where(mask, dtype.type(-np.inf), dtype.type(0.0))


# --------------------------------------------------------------- scaled dot product


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None,
              dropout_p: float, is_causal: bool, scale: float | None,
              empty_rows_zero: bool = True) -> np.ndarray:
    """softmax(q @ k^T * scale + mask) @ v over the last two dimensions.

    ``mask`` is boolean (True takes part) or float (added). A query whose every
    key is masked gets a zero row where torch's CPU kernel gives zeros
    (``empty_rows_zero``), and NaN where torch's softmax path gives NaN.
    """
    dtype = q.dtype
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = ops().binary_scalar("mul", ops().matmul(q, _swap_last(k)), factor, False)
    if is_causal:
        length, source = q.shape[-2], k.shape[-2]
        mask = np.tril(np.ones((length, source), np.bool_))
    if mask is not None and mask.dtype == np.bool_:
        scores = np.where(mask, scores, dtype.type(-np.inf))
    elif mask is not None:
        scores = ops().binary("add", scores, mask.astype(dtype, copy=False))
    empty = np.all(scores == -np.inf, axis=-1, keepdims=True) if empty_rows_zero else None
    if empty is not None and empty.any():  # softmax of those rows would be 0 / 0
        scores = np.where(empty, dtype.type(0.0), scores)
    else:
        empty = None
    with np.errstate(invalid="ignore"):  # a row of -inf gives NaN, as in torch
        weights = ops().softmax(np.ascontiguousarray(scores), scores.ndim - 1)
    if empty is not None:
        weights = np.where(empty, dtype.type(0.0), weights)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p)
    return ops().matmul(weights, v)


def repeat_heads(k: np.ndarray, v: np.ndarray, heads: int) -> tuple[np.ndarray, np.ndarray]:
    """Grouped-query attention: each key/value head serves heads // k_heads query heads."""
    groups = heads // k.shape[-3]
    return np.repeat(k, groups, axis=-3), np.repeat(v, groups, axis=-3)


# --------------------------------------------------------------- multi-head attention


def _pad_last(mask: np.ndarray | None) -> np.ndarray | None:
    """One more key column (for bias_k or the zero key), not masked."""
    if mask is None:
        return None
    return np.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, 1)])


def multi_head_attention(
    query: np.ndarray, key: np.ndarray, value: np.ndarray, num_heads: int,
    projections: tuple[np.ndarray, np.ndarray, np.ndarray],
    biases: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None],
    bias_kv: tuple[np.ndarray | None, np.ndarray | None], add_zero_attn: bool,
    dropout_p: float, out_weight: np.ndarray, out_bias: np.ndarray | None,
    key_padding_mask: np.ndarray | None, need_weights: bool, attn_mask: np.ndarray | None,
    static_kv: tuple[np.ndarray | None, np.ndarray | None], average_attn_weights: bool,
    is_causal: bool,
) -> tuple[np.ndarray, np.ndarray | None]:
    """torch's multi-head attention on checked, batched, sequence-first arrays.

    ``query`` is (L, N, E), ``key`` and ``value`` (S, N, kdim/vdim); the masks
    are float already (-inf where left out). Returns the (L, N, E) output and
    the weights, (N, L, S) averaged over heads or (N, H, L, S), or None.
    """
    length, batch, embed = query.shape
    head = embed // num_heads
    q, k, v = (ops().linear(x, w, b) for x, w, b in zip((query, key, value), projections, biases))
    if attn_mask is not None and attn_mask.ndim == 2:
        attn_mask = attn_mask[None]
    bias_k, bias_v = bias_kv
    if bias_k is not None and bias_v is not None:
        k = np.concatenate([k, np.broadcast_to(bias_k, (1, batch, embed))])
        v = np.concatenate([v, np.broadcast_to(bias_v, (1, batch, embed))])
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    q = q.reshape(length, batch * num_heads, head).transpose(1, 0, 2)
    static_k, static_v = static_kv
    k = static_k if static_k is not None else (
        k.reshape(k.shape[0], batch * num_heads, head).transpose(1, 0, 2))
    v = static_v if static_v is not None else (
        v.reshape(v.shape[0], batch * num_heads, head).transpose(1, 0, 2))
    if add_zero_attn:
        zeros = np.zeros((batch * num_heads, 1, head), q.dtype)
        k, v = np.concatenate([k, zeros], axis=1), np.concatenate([v, zeros], axis=1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    source = k.shape[1]
    if key_padding_mask is not None:
        padding = np.broadcast_to(key_padding_mask.reshape(batch, 1, 1, source),
                                  (batch, num_heads, 1, source))
        padding = padding.reshape(batch * num_heads, 1, source)
        attn_mask = padding if attn_mask is None else attn_mask + padding
    if need_weights:
        scaled = ops().binary_scalar("mul", q, math.sqrt(1.0 / head), False)
        scores = ops().matmul(scaled, _swap_last(k))
        if attn_mask is not None:
            scores = scores + attn_mask
        with np.errstate(invalid="ignore"):  # a row of -inf gives NaN, as in torch
            weights = ops().softmax(np.ascontiguousarray(scores), 2)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p)
        out = ops().matmul(weights, v)
        weights = weights.reshape(batch, num_heads, length, source)
        if average_attn_weights:
            weights = ops().reduce("mean", weights, (1,), False)
    else:
        if attn_mask is not None:
            attn_mask = (attn_mask[None] if attn_mask.shape[0] == 1
                         else attn_mask.reshape(batch, num_heads, -1, source))
        out = attention(q.reshape(batch, num_heads, length, head),
                        k.reshape(batch, num_heads, source, head),
                        v.reshape(batch, num_heads, source, head),
                        attn_mask, dropout_p, is_causal, None)
        out = out.reshape(batch * num_heads, length, head)
        weights = None
    out = np.ascontiguousarray(out.transpose(1, 0, 2)).reshape(length * batch, embed)
    out = ops().linear(out, out_weight, out_bias).reshape(length, batch, -1)
    return out, weights
