"""Section 3.4: self-attention with trainable weights (scaled dot-product attention)."""
import torch
import torch.nn as nn


def compute_query_key_value(inputs, W_query, W_key, W_value):
    """Project the inputs with the three weight matrices.

    inputs: (T, d_in) or a single token (d_in,); each W: (d_in, d_out).
    Returns the tuple (queries, keys, values), each (T, d_out) or (d_out,).
    """
    raise NotImplementedError("compute_query_key_value: replace this line with your code")


def scaled_attn_weights(query, keys):
    """Attention weights of one query: softmax(q K^T / sqrt(d_k)).

    query: (d_out,); keys: (T, d_out). Returns (T,), summing to 1.
    """
    raise NotImplementedError("scaled_attn_weights: replace this line with your code")


def context_vector_for_query(x_query, inputs, W_query, W_key, W_value):
    """The whole section 3.4.1 walk-through for one query token.

    x_query: (d_in,) the token doing the attending; inputs: (T, d_in).
    Returns the context vector z of shape (d_out,).
    """
    raise NotImplementedError("context_vector_for_query: replace this line with your code")


class SelfAttention_v1(nn.Module):
    """Listing 3.1: self-attention with weights as ``nn.Parameter(torch.rand(d_in, d_out))``.

    forward takes x of shape (T, d_in) and returns (T, d_out), leaving x unchanged.
    Graded structure: exactly three parameters, named W_query, W_key, W_value, each
    (d_in, d_out), trainable, drawn with torch.rand in that order, so that a fixed seed
    gives the book's values.
    """

    def __init__(self, d_in, d_out):
        super().__init__()
        raise NotImplementedError("SelfAttention_v1.__init__: replace this line with your code")

    def forward(self, x):
        raise NotImplementedError("SelfAttention_v1.forward: replace this line with your code")


class SelfAttention_v2(nn.Module):
    """Listing 3.2: the same mechanism with ``nn.Linear`` layers (no bias by default).

    forward takes x of shape (T, d_in) and returns (T, d_out), leaving x unchanged.
    Graded structure: ``nn.Linear(d_in, d_out, bias=qkv_bias)`` layers named W_query,
    W_key, W_value, created in that order, and no other parameters.
    """

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        raise NotImplementedError("SelfAttention_v2.__init__: replace this line with your code")

    def forward(self, x):
        raise NotImplementedError("SelfAttention_v2.forward: replace this line with your code")
