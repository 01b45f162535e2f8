"""Section 3.6: multi-head attention, first as a stack of heads, then with weight splits."""
import torch
import torch.nn as nn

from causal_attention import CausalAttention


class MultiHeadAttentionWrapper(nn.Module):
    """Listing 3.4: ``num_heads`` independent ``CausalAttention`` heads, concatenated.

    ``self.heads`` is an ``nn.ModuleList`` of ``num_heads`` ``CausalAttention`` modules,
    each with its own weights (heads.0.W_query, ...). forward takes (b, num_tokens, d_in),
    returns (b, num_tokens, num_heads * d_out), head 0's columns first, and leaves x unchanged.
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        raise NotImplementedError("MultiHeadAttentionWrapper.__init__: replace this line with your code")

    def forward(self, x):
        raise NotImplementedError("MultiHeadAttentionWrapper.forward: replace this line with your code")


class MultiHeadAttention(nn.Module):
    """Listing 3.5: all heads from one projection per W, split into ``num_heads`` views.

    num_heads divides d_out (the book asserts it; the grader never passes sizes where it does
    not); head_dim = d_out // num_heads. forward takes
    (b, num_tokens, d_in), returns (b, num_tokens, d_out) after the ``out_proj`` linear
    layer, and leaves x unchanged. The graded inputs include large values, as for
    ``CausalAttention``: mask the scores with ``-inf`` before the softmax. Graded structure:
    - ``nn.Linear(d_in, d_out, bias=qkv_bias)`` layers named W_query, W_key, W_value, then
      ``out_proj = nn.Linear(d_out, d_out)`` (with bias), created in that order, and no
      other parameters;
    - an ``nn.Dropout(dropout)`` stored as ``self.dropout``, applied to the attention weights;
    - the causal mask is a buffer registered as ``mask``, as in ``CausalAttention``
      (either shape, float or bool, persistent or not); forward masks with ``self.mask`` or
      with ``F.scaled_dot_product_attention(..., is_causal=True)``, as there.
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        raise NotImplementedError("MultiHeadAttention.__init__: replace this line with your code")

    def forward(self, x):
        raise NotImplementedError("MultiHeadAttention.forward: replace this line with your code")
