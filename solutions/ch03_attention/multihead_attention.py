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
        ### BEGIN SOLUTION
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
             for _ in range(num_heads)]
        )
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        return torch.cat([head(x) for head in self.heads], dim=-1)
        ### END SOLUTION


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
        ### BEGIN SOLUTION
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        # (b, num_tokens, d_out) -> (b, num_tokens, num_heads, head_dim)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        # -> (b, num_heads, num_tokens, head_dim): one attention matrix per head
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        # back to (b, num_tokens, num_heads, head_dim), then merge the heads
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)
        ### END SOLUTION
