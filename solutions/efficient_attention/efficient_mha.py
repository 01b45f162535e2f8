"""Chapter 3's bonus: the same multi-head attention, written the ways fast code writes it.

Every class here computes exactly what your chapter-3 ``MultiHeadAttention`` computes (causal
mask, softmax of the scores scaled by sqrt(head_dim), dropout on the attention weights, heads
merged, then an output projection), once its weights are moved in by the ``transfer_to_*``
function below it: in eval mode (no dropout) and in training mode, where the dropout draws what
chapter 3's does after the same seed (one dropout over the (batch, heads, tokens, tokens)
attention weights; MHAPyTorchClass's is nn.MultiheadAttention's own, not graded in training).
Mind the argument order: these classes take ``(d_in, d_out, num_heads, context_length,
dropout=0.0, qkv_bias=False)``, chapter 3's takes ``(d_in, d_out, context_length, dropout,
num_heads, qkv_bias=False)``.

The grader copies its own weights into your classes by the names below, so how you initialise
them is not graded; their names and shapes are.

Each ``transfer_to_*(mha, other)`` copies values, as you would call it: with autograd on (no
``torch.no_grad()`` around the call, so copy in place inside one, or use ``load_state_dict``;
a bare ``param.copy_(...)`` raises there). Graded: ``other`` then computes what ``mha`` computes;
``mha`` is left as it was; the two share no memory (the grader writes new values into
``other``'s parameters afterwards, and ``mha``'s must stay as they were: assign no parameter or
module of ``mha`` to ``other``); and the function returns None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttentionCombinedQKV(nn.Module):
    """One projection for queries, keys and values together.

    Graded structure: ``qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)`` whose output holds
    the queries, then the keys, then the values (each d_out wide, heads in order inside each);
    ``proj = nn.Linear(d_out, d_out)`` (with bias), the output projection; ``dropout =
    nn.Dropout(dropout)`` on the attention weights; the causal mask as a buffer ``mask``; no
    other parameters. forward on x of shape (batch, num_tokens, d_in), num_tokens <=
    context_length, returns (batch, num_tokens, d_out); the graded sizes include d_in != d_out,
    so the heads are merged back into d_out values (not x's last size).
    """

    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        ### BEGIN SOLUTION
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        b, num_tokens, _ = x.shape
        # (b, n, 3 * d_out) -> (b, n, 3, heads, head_dim) -> (3, b, heads, n, head_dim)
        qkv = self.qkv(x).view(b, num_tokens, 3, self.num_heads, self.head_dim)
        queries, keys, values = qkv.permute(2, 0, 3, 1, 4)

        attn_scores = queries @ keys.transpose(-2, -1)
        attn_scores = attn_scores.masked_fill(self.mask[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.proj(context_vec)
        ### END SOLUTION


def transfer_to_combined_qkv(mha, combined):
    """Copy a chapter-3 ``MultiHeadAttention``'s weights into a ``MultiHeadAttentionCombinedQKV``
    of the same sizes, so both compute the same function; returns None.

    ``combined.qkv`` gets W_query, W_key and W_value stacked (and their biases where
    qkv_bias); ``combined.proj`` gets ``out_proj``. Copy values (no gradients recorded, no
    memory shared with ``mha``: see the top of this module); leave ``mha`` unchanged.
    """
    ### BEGIN SOLUTION
    with torch.no_grad():
        combined.qkv.weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        if combined.qkv.bias is not None:
            combined.qkv.bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        combined.proj.load_state_dict(mha.out_proj.state_dict())
    ### END SOLUTION


class MHAEinsum(nn.Module):
    """The projections and both attention products written with ``torch.einsum``.

    Graded structure: ``W_query``, ``W_key``, ``W_value``: ``nn.Parameter``s of shape (d_in,
    d_out) (so a query is ``einsum("bnd,de->bne", x, W_query)``: the transpose of an
    nn.Linear's weight); ``bias_q``, ``bias_k``, ``bias_v``: ``nn.Parameter``s of shape (d_out,)
    when qkv_bias, else None (no parameter); ``out_proj = nn.Linear(d_out, d_out)``;
    ``dropout = nn.Dropout(dropout)``; the causal mask as a buffer ``mask``; no other
    parameters. forward as ``MultiHeadAttentionCombinedQKV``'s: (batch, num_tokens, d_in) ->
    (batch, num_tokens, d_out), the scores and the context vectors computed with einsum.
    """

    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        ### BEGIN SOLUTION
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Parameter(torch.empty(d_in, d_out))
        self.W_key = nn.Parameter(torch.empty(d_in, d_out))
        self.W_value = nn.Parameter(torch.empty(d_in, d_out))
        for weight in (self.W_query, self.W_key, self.W_value):
            nn.init.xavier_uniform_(weight)
        if qkv_bias:
            self.bias_q = nn.Parameter(torch.zeros(d_out))
            self.bias_k = nn.Parameter(torch.zeros(d_out))
            self.bias_v = nn.Parameter(torch.zeros(d_out))
        else:
            self.bias_q = self.bias_k = self.bias_v = None
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        b, n, _ = x.shape
        queries = torch.einsum("bnd,de->bne", x, self.W_query)
        keys = torch.einsum("bnd,de->bne", x, self.W_key)
        values = torch.einsum("bnd,de->bne", x, self.W_value)
        if self.bias_q is not None:
            queries, keys, values = queries + self.bias_q, keys + self.bias_k, values + self.bias_v

        queries = queries.view(b, n, self.num_heads, self.head_dim)
        keys = keys.view(b, n, self.num_heads, self.head_dim)
        values = values.view(b, n, self.num_heads, self.head_dim)

        attn_scores = torch.einsum("bqhd,bkhd->bhqk", queries, keys)
        attn_scores = attn_scores.masked_fill(self.mask[:n, :n], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))

        context_vec = torch.einsum("bhqk,bkhd->bqhd", attn_weights, values).reshape(b, n, self.d_out)
        return self.out_proj(context_vec)
        ### END SOLUTION


def transfer_to_einsum(mha, einsum):
    """Copy a chapter-3 ``MultiHeadAttention``'s weights into an ``MHAEinsum`` of the same
    sizes, so both compute the same function; returns None.

    ``W_query`` gets the transpose of ``mha.W_query.weight`` (an nn.Linear keeps (d_out, d_in)),
    likewise keys and values; ``bias_q``/``bias_k``/``bias_v`` the biases where qkv_bias;
    ``out_proj`` gets ``out_proj``. Copy values (as for the combined class); leave ``mha``
    unchanged.
    """
    ### BEGIN SOLUTION
    with torch.no_grad():
        for mine, theirs in (("query", "q"), ("key", "k"), ("value", "v")):
            linear = getattr(mha, f"W_{mine}")
            getattr(einsum, f"W_{mine}").copy_(linear.weight.T)
            if getattr(einsum, f"bias_{theirs}") is not None:
                getattr(einsum, f"bias_{theirs}").copy_(linear.bias)
        einsum.out_proj.load_state_dict(mha.out_proj.state_dict())
    ### END SOLUTION


class MHAPyTorchScaledDotProduct(nn.Module):
    """The attention itself done by PyTorch's ``F.scaled_dot_product_attention`` (SDPA: on a GPU
    it runs FlashAttention, never writing the (num_tokens, num_tokens) matrix to memory).

    Graded structure: ``qkv`` and ``proj`` as in ``MultiHeadAttentionCombinedQKV`` (queries,
    keys, values stacked in that order); ``self.dropout`` holds the rate, a float; no other
    parameters (SDPA needs no mask buffer). forward: (batch, num_tokens, d_in) -> (batch,
    num_tokens, d_out), calling ``F.scaled_dot_product_attention`` on queries, keys and values
    of shape (batch, num_heads, num_tokens, head_dim) with the causal mask (``is_causal=True``,
    or an explicit boolean ``attn_mask``: there True means "may attend", the opposite of
    chapter 3's masked_fill mask) and ``dropout_p`` the rate in training mode, 0 in eval mode
    (SDPA is a function: it does not know the module's mode).
    """

    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        ### BEGIN SOLUTION
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.context_length = context_length
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = dropout
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        b, num_tokens, _ = x.shape
        qkv = self.qkv(x).view(b, num_tokens, 3, self.num_heads, self.head_dim)
        queries, keys, values = qkv.permute(2, 0, 3, 1, 4)
        context_vec = F.scaled_dot_product_attention(
            queries, keys, values, attn_mask=None, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        context_vec = context_vec.transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.proj(context_vec)
        ### END SOLUTION


def transfer_to_sdpa(mha, sdpa):
    """Copy a chapter-3 ``MultiHeadAttention``'s weights into an ``MHAPyTorchScaledDotProduct``
    of the same sizes (its qkv and proj, copied as for the combined class); returns None."""
    ### BEGIN SOLUTION
    transfer_to_combined_qkv(mha, sdpa)
    ### END SOLUTION


class MHAPyTorchClass(nn.Module):
    """PyTorch's own ``nn.MultiheadAttention``, made causal, followed by a projection.

    Needs d_in == d_out (nn.MultiheadAttention projects the queries from embed_dim inputs).
    Graded structure: ``multihead_attn = nn.MultiheadAttention(embed_dim=d_out,
    num_heads=num_heads, dropout=dropout, bias=qkv_bias, batch_first=True)``; ``proj =
    nn.Linear(d_out, d_out)``; the causal mask as a buffer ``mask``; no other parameters.
    forward: (batch, num_tokens, d_in) -> (batch, num_tokens, d_out): ``multihead_attn(x, x, x,
    attn_mask=..., need_weights=False)`` with a boolean causal ``attn_mask`` of shape
    (num_tokens, num_tokens), where True means "may NOT attend" (nn.MultiheadAttention's
    convention, the opposite of SDPA's), then ``proj``. nn.MultiheadAttention has its own
    output projection ``out_proj`` (with bias only when qkv_bias).
    """

    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        ### BEGIN SOLUTION
        assert d_in == d_out, "nn.MultiheadAttention needs d_in == d_out here"
        self.multihead_attn = nn.MultiheadAttention(
            embed_dim=d_out, num_heads=num_heads, dropout=dropout, bias=qkv_bias, batch_first=True)
        self.proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        num_tokens = x.shape[1]
        attn_mask = self.mask[:num_tokens, :num_tokens]
        context_vec, _ = self.multihead_attn(x, x, x, attn_mask=attn_mask, need_weights=False)
        return self.proj(context_vec)
        ### END SOLUTION


def transfer_to_pytorch_class(mha, torch_mha):
    """Copy a chapter-3 ``MultiHeadAttention``'s weights into an ``MHAPyTorchClass`` of the
    same sizes, so both compute the same function; returns None.

    ``multihead_attn.in_proj_weight`` holds W_query, W_key, W_value stacked (``in_proj_bias``
    their biases where qkv_bias). Chapter 3 has one output projection, this class two in a row
    (``multihead_attn.out_proj``, then ``proj``): make one of them do nothing (identity weight,
    zero bias) and give the other chapter 3's ``out_proj``. Copy values (as for the combined
    class); leave ``mha`` unchanged.
    """
    ### BEGIN SOLUTION
    attn = torch_mha.multihead_attn
    with torch.no_grad():
        attn.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        if attn.in_proj_bias is not None:
            attn.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        attn.out_proj.weight.copy_(torch.eye(attn.embed_dim))
        if attn.out_proj.bias is not None:
            attn.out_proj.bias.zero_()
        torch_mha.proj.load_state_dict(mha.out_proj.state_dict())
    ### END SOLUTION
