"""Section 3.5: hiding future tokens with causal attention, plus dropout."""
import torch
import torch.nn as nn


def simple_causal_mask(context_length):
    """Lower-triangular mask of ones, shape (context_length, context_length).

    1 where token i may look at token j (j <= i), 0 above the diagonal.
    """
    ### BEGIN SOLUTION
    return torch.tril(torch.ones(context_length, context_length))
    ### END SOLUTION


def masked_renormalized_weights(attn_weights):
    """Zero the weights above the diagonal, then make every row sum to 1 again.

    attn_weights: (T, T), already softmax-normalised. Returns (T, T).
    """
    ### BEGIN SOLUTION
    mask_simple = torch.tril(torch.ones_like(attn_weights))
    masked_simple = attn_weights * mask_simple
    row_sums = masked_simple.sum(dim=-1, keepdim=True)
    return masked_simple / row_sums
    ### END SOLUTION


def mask_future_scores(attn_scores):
    """Replace the scores above the diagonal with ``-inf`` (scores of shape (..., T, T))."""
    ### BEGIN SOLUTION
    context_length = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    return attn_scores.masked_fill(mask.bool(), -torch.inf)
    ### END SOLUTION


def causal_attn_weights(attn_scores, d_k):
    """Causal attention weights in one step: mask with ``-inf``, scale by 1/sqrt(d_k), softmax.

    attn_scores: (..., T, T) raw query-key scores. Returns the same shape with zeros
    above the diagonal and rows summing to 1. The graded scores include large ones (in the
    hundreds): there a softmax over all tokens underflows to 0 for every token a row keeps, so
    zeroing the future afterwards and renormalising (``masked_renormalized_weights``) divides
    0 by 0 (NaN); masking with ``-inf`` before the softmax stays finite.
    """
    ### BEGIN SOLUTION
    masked = mask_future_scores(attn_scores)
    return torch.softmax(masked / d_k**0.5, dim=-1)
    ### END SOLUTION


def dropout_attn_weights(attn_weights, p, seed):
    """Apply ``nn.Dropout(p)`` (training mode) to attention weights after ``torch.manual_seed(seed)``.

    Kept entries are scaled by 1 / (1 - p) so the expected sum of a row is unchanged.
    """
    ### BEGIN SOLUTION
    torch.manual_seed(seed)
    dropout = nn.Dropout(p)
    return dropout(attn_weights)
    ### END SOLUTION


class CausalAttention(nn.Module):
    """Listing 3.3: batched causal self-attention with dropout on the attention weights.

    forward takes x of shape (b, num_tokens, d_in), num_tokens <= context_length,
    returns (b, num_tokens, d_out) and leaves x unchanged. The graded inputs include large
    values (scores in the hundreds): mask the scores with ``-inf`` before the softmax, as the
    book's listing does (a softmax over all tokens, the future zeroed and the rows renormalised
    afterwards gives 0 / 0 = NaN where a row's kept weights underflow). Graded structure:
    - ``nn.Linear(d_in, d_out, bias=qkv_bias)`` layers named W_query, W_key, W_value,
      created in that order, and no other parameters;
    - an ``nn.Dropout(dropout)`` stored as ``self.dropout``, applied to the attention weights;
    - the causal mask is a buffer registered as ``mask`` (``register_buffer``, so it
      moves with ``.to()``), of shape (context_length, context_length) or
      (1, 1, context_length, context_length), float or bool, persistent or not, not an
      ``nn.Parameter``; forward masks with ``self.mask`` cut to num_tokens (the grader swaps
      the buffer for its transpose and expects forward to follow it), or leaves the mask to
      ``F.scaled_dot_product_attention(..., is_causal=True)``, which builds it on the input's
      device. Either way the module still masks after ``.to()``; a mask that forward builds
      itself with ``torch.ones`` would stay on the CPU.
    """

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        ### BEGIN SOLUTION
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
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
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values
        ### END SOLUTION
