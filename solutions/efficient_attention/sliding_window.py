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
    ### BEGIN SOLUTION
    if window < 1:
        raise ValueError("window must be at least 1")
    ones = torch.ones(num_tokens, num_tokens, dtype=torch.bool)
    future = torch.triu(ones, diagonal=1)
    too_far = torch.tril(ones, diagonal=-window)  # keys window or more tokens back
    return future | too_far
    ### END SOLUTION


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
        ### BEGIN SOLUTION
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", sliding_window_mask(context_length, window))
        self.window = window
        # the last window keys and values, (b, num_heads, positions held, head_dim)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.ptr_current_pos = 0  # the position in the sequence of the next token fed
        ### END SOLUTION

    def forward(self, x, use_cache=False):
        ### BEGIN SOLUTION
        b, n, _ = x.shape
        queries, keys, values = (
            w(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
            for w in (self.W_query, self.W_key, self.W_value))
        start = 0  # the position of x's first token in the sequence
        if use_cache:
            if self.cache_k is not None:
                keys = torch.cat([self.cache_k, keys], dim=2)
                values = torch.cat([self.cache_v, values], dim=2)
            start = self.ptr_current_pos
            self.ptr_current_pos += n
            # the next token sees at most window - 1 of these: older ones can go
            self.cache_k, self.cache_v = keys[:, :, -self.window:], values[:, :, -self.window:]
        first = start + n - keys.shape[2]  # the position of the first key held
        mask = self.mask[start:start + n, first:start + n]
        attn_scores = (queries @ keys.transpose(2, 3)).masked_fill(mask, -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, n, self.d_out)
        return self.out_proj(context_vec)
        ### END SOLUTION

    def reset_cache(self):
        ### BEGIN SOLUTION
        self.cache_k, self.cache_v = None, None
        self.ptr_current_pos = 0
        ### END SOLUTION
