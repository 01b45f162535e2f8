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
    ### BEGIN SOLUTION
    if head_dim % 2 != 0:
        raise ValueError("head_dim must be even")
    inv_freq = 1.0 / theta_base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    positions = torch.arange(context_length, dtype=torch.float32)
    angles = positions[:, None] * inv_freq[None, :]        # (context_length, head_dim // 2)
    angles = torch.cat([angles, angles], dim=1)            # (context_length, head_dim)
    return torch.cos(angles), torch.sin(angles)
    ### END SOLUTION


def apply_rope(x, cos, sin, offset=0):
    """Rotate x of shape (batch, num_heads, num_tokens, head_dim) by its tokens' positions.

    Token t of x stands at position ``offset + t`` (offset: tokens already in a KV cache), so
    rows offset .. offset + num_tokens - 1 of cos and sin are used. With x1, x2 the first and
    second halves of the head dimension, the result is ``x * cos + cat(-x2, x1) * sin``: each
    pair (x1[j], x2[j]) turned counter-clockwise by its angle. Returns a tensor of x's shape
    and dtype (graded on a bfloat16 x too: cos and sin are float32, so ``x * cos`` is float32
    until it is cast back, as the book does with ``.to(dtype=x.dtype)``).
    """
    ### BEGIN SOLUTION
    num_tokens, head_dim = x.shape[-2], x.shape[-1]
    x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2:]
    rotated = torch.cat((-x2, x1), dim=-1)
    cos, sin = cos[offset:offset + num_tokens], sin[offset:offset + num_tokens]
    return (x * cos + rotated * sin).to(x.dtype)
    ### END SOLUTION


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
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())
        cos, sin = compute_rope_params(self.head_dim, theta_base, context_length)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        b, n, _ = x.shape
        queries = self.W_query(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        queries = apply_rope(queries, self.cos, self.sin)
        keys = apply_rope(keys, self.cos, self.sin)

        attn_scores = (queries @ keys.transpose(2, 3)).masked_fill(self.mask[:n, :n], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, n, self.d_out)
        return self.out_proj(context_vec)
        ### END SOLUTION
