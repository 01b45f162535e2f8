"""Sliding-window attention: each token attends only to the last ``window`` tokens.

Causal attention's work and its KV cache grow with the whole text; with a window they stop
growing at ``window`` tokens (Mistral, Gemma 2 and 3 alternate such layers with full ones).
Information still travels further than the window, one window per layer.
"""
import torch
import torch.nn as nn


def sliding_window_mask(num_tokens, window):
    """The (num_tokens, num_tokens) boolean mask of causal sliding-window attention, True
    where query i may NOT see key j, as chapter 3's mask (for ``masked_fill``).

    Query i sees keys i - window + 1 .. i: itself and the ``window - 1`` tokens before it
    (window=1: only itself). With window >= num_tokens it is chapter 3's causal mask. A window
    below 1 raises ValueError.
    """
    raise NotImplementedError("sliding_window_mask: replace this line with your code")


class SlidingWindowAttention(nn.Module):
    """Chapter 3's multi-head attention with the sliding-window mask instead of the causal one,
    and a KV cache that keeps only the window.

    Graded structure: chapter 3's ``W_query``, ``W_key``, ``W_value`` (``nn.Linear(d_in, d_out,
    bias=qkv_bias)``), ``out_proj = nn.Linear(d_out, d_out)``, ``dropout = nn.Dropout(dropout)``,
    no other parameters; the mask ``sliding_window_mask(context_length, window)`` as a buffer
    ``mask``.

    ``forward(x, use_cache=False)``, x of shape (batch, num_tokens, d_in) -> (batch, num_tokens,
    d_out):
    - ``use_cache=False``: each query sees the last ``window`` tokens up to itself; with window >=
      num_tokens it equals chapter 3's MultiHeadAttention with the same weights.
    - ``use_cache=True``: as ``kv_cache.py``'s attention, x holds the next tokens of a sequence
      (any number at a time) whose earlier keys and values are in the cache (none after
      ``reset_cache()``); fed in pieces, the outputs are the rows of the whole sequence run with
      ``use_cache=False``, for any window. A token never sees keys ``window`` or more back, so
      after each call the cache keeps at most the last ``window`` positions (the oldest dropped):
      its size stops growing at the window. Mind the mask: its rows are the new tokens'
      positions in the sequence, its columns the positions of the keys still held.
    - ``reset_cache()`` empties the cache: the next cached call starts a new sequence.
    The cache is kept in non-persistent buffers ``cache_k`` and ``cache_v`` (created empty, as in
    ``kv_cache.py``), in any layout of (batch, positions held, d_out) numbers, at most ``window``
    positions each after a cached call. The bound is graded by memory, not by these buffers alone:
    a long sequence fed in pieces runs where there is room for its outputs but not for every key
    and value beside them, so nothing of the positions before the window may stay anywhere else
    either (a list of every key beside trimmed buffers fails). A sequence fits in
    ``context_length`` tokens.
    """

    def __init__(self, d_in, d_out, num_heads, context_length, window, dropout=0.0, qkv_bias=False):
        super().__init__()
        raise NotImplementedError("SlidingWindowAttention.__init__: replace this line with your code")

    def forward(self, x, use_cache=False):
        raise NotImplementedError("SlidingWindowAttention.forward: replace this line with your code")

    def reset_cache(self):
        raise NotImplementedError("SlidingWindowAttention.reset_cache: replace this line with your code")
