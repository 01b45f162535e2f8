"""Rotary position embeddings (RoPE), as Llama, Qwen, Gemma and Mistral encode positions.

GPT-2 adds a learned position vector to each token once, at the input. RoPE instead rotates
every query and key inside each attention layer by an angle proportional to its position: pairs
of coordinates turn at different frequencies. A dot product of two rotated vectors depends on
the difference of their angles, so the attention scores depend only on how far apart two tokens
are, not where they stand, and the rotation never changes a vector's length.
"""
import torch
import torch.nn as nn


def compute_rope_params(head_dim, theta_base=10_000, context_length=4096):
    """(cos, sin), each of shape (context_length, head_dim), float32.

    The frequency of pair j (j = 0 .. head_dim/2 - 1) is ``theta_base ** (-2j / head_dim)``;
    position p turns pair j by the angle p * frequency_j (p = 0 .. context_length - 1). Pair j
    is coordinates j and j + head_dim/2 (the two halves of the head, as the book's Llama code),
    so row p of cos is cos of the head_dim/2 angles, then the same head_dim/2 again; likewise
    sin. An odd head_dim raises an error: ValueError, or AssertionError as the book's Llama code
    does with ``assert head_dim % 2 == 0`` (either is accepted).
    """
    raise NotImplementedError("compute_rope_params: replace this line with your code")


def apply_rope(x, cos, sin, offset=0):
    """Rotate x of shape (batch, num_heads, num_tokens, head_dim) by its tokens' positions.

    Token t of x stands at position ``offset + t`` (offset: tokens already in a KV cache), so
    rows offset .. offset + num_tokens - 1 of cos and sin are used. With x1, x2 the first and
    second halves of the head dimension, the result is ``x * cos + cat(-x2, x1) * sin``: each
    pair (x1[j], x2[j]) turned counter-clockwise by its angle. Returns a tensor of x's shape
    and dtype (graded on a bfloat16 x too: cos and sin are float32, so ``x * cos`` is float32
    until it is cast back, as the book does with ``.to(dtype=x.dtype)``).
    """
    raise NotImplementedError("apply_rope: replace this line with your code")


class MultiHeadAttentionRoPE(nn.Module):
    """Chapter 3's multi-head attention with RoPE on the queries and keys (not the values).

    Graded structure: chapter 3's ``W_query``, ``W_key``, ``W_value`` (``nn.Linear(d_in, d_out,
    bias=qkv_bias)``), ``out_proj = nn.Linear(d_out, d_out)``, ``dropout = nn.Dropout(dropout)``,
    the causal mask as a buffer ``mask``, and ``cos``, ``sin`` from ``compute_rope_params(head_dim,
    theta_base, context_length)`` as buffers (context_length rows each, not the default 4096);
    no other parameters. forward: (batch, num_tokens, d_in) -> (batch, num_tokens, d_out): the
    heads are split as in chapter 3, then queries and keys rotated with ``apply_rope`` (positions
    0 .. num_tokens - 1), then causal attention as there, with the dropout on the attention weights
    (graded in training mode, the reference's draws after the same seed, and in eval mode, none).
    """

    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False, theta_base=10_000):
        super().__init__()
        raise NotImplementedError("MultiHeadAttentionRoPE.__init__: replace this line with your code")

    def forward(self, x):
        raise NotImplementedError("MultiHeadAttentionRoPE.forward: replace this line with your code")
