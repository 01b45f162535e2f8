'''A bank of correct efficient-attention submissions written in other students' styles
(see tests/banks.py and tests/ch04_gpt/alternatives.py for the pattern).

Module variants (style -> source) are written once and combined into ``ALTERNATIVES``; the
"plain" variant of each module is a straightforward student's own code. Two halves, kept apart
so that the parts can be written side by side.
'''
from functools import partial

import banks


# efficient_mha, grouped_query, sliding_window, rope: {module: {style: source}}. "plain": chunk(3) and
# .data transfers, the einsum with other letters, SDPA with an explicit boolean mask, the nn.MultiheadAttention
# transfer the other way round (its out_proj does chapter 3's, proj nothing); expand+reshape for the groups,
# the size from a formula; the window by distances and heads in a loop; RoPE's halves by hand.
VARIANTS_ATTENTION = {
    "efficient_mha": {
        "plain": '''import torch
from torch import nn


def causal(n):
    return torch.ones(n, n).triu(1).bool()


class MultiHeadAttentionCombinedQKV(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.h, self.d = num_heads, d_out
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", causal(context_length))

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, n, self.h, -1).permute(0, 2, 1, 3) for t in (q, k, v))
        w = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
        w = w.masked_fill(self.mask[:n, :n], float("-inf")).softmax(-1)
        out = self.dropout(w) @ v
        return self.proj(out.permute(0, 2, 1, 3).reshape(b, n, self.d))


def transfer_to_combined_qkv(mha, combined):
    combined.qkv.weight.data = torch.cat([mha.W_query.weight.data, mha.W_key.weight.data, mha.W_value.weight.data], 0)
    if combined.qkv.bias is not None:
        combined.qkv.bias.data = torch.cat([mha.W_query.bias.data, mha.W_key.bias.data, mha.W_value.bias.data])
    combined.proj.weight.data = mha.out_proj.weight.data.clone()
    combined.proj.bias.data = mha.out_proj.bias.data.clone()


class MHAEinsum(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.h, self.d = num_heads, d_out
        self.W_query = nn.Parameter(torch.randn(d_in, d_out) * 0.02)
        self.W_key = nn.Parameter(torch.randn(d_in, d_out) * 0.02)
        self.W_value = nn.Parameter(torch.randn(d_in, d_out) * 0.02)
        if qkv_bias:
            self.bias_q = nn.Parameter(torch.zeros(d_out))
            self.bias_k = nn.Parameter(torch.zeros(d_out))
            self.bias_v = nn.Parameter(torch.zeros(d_out))
        else:
            self.register_parameter("bias_q", None)
            self.register_parameter("bias_k", None)
            self.register_parameter("bias_v", None)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", causal(context_length))

    def forward(self, x):
        b, n, _ = x.shape
        q = torch.einsum("btc,cd->btd", x, self.W_query)
        k = torch.einsum("btc,cd->btd", x, self.W_key)
        v = torch.einsum("btc,cd->btd", x, self.W_value)
        if self.bias_q is not None:
            q = q + self.bias_q
            k = k + self.bias_k
            v = v + self.bias_v
        q, k, v = (t.view(b, n, self.h, -1).transpose(1, 2) for t in (q, k, v))
        s = torch.einsum("bhid,bhjd->bhij", q, k) / q.shape[-1] ** 0.5
        s = s.masked_fill(self.mask[:n, :n], -torch.inf)
        a = self.dropout(torch.softmax(s, dim=-1))
        out = torch.einsum("bhij,bhjd->bhid", a, v)
        return self.out_proj(out.transpose(1, 2).reshape(b, n, self.d))


def transfer_to_einsum(mha, einsum):
    einsum.W_query.data = mha.W_query.weight.data.t().clone()
    einsum.W_key.data = mha.W_key.weight.data.t().clone()
    einsum.W_value.data = mha.W_value.weight.data.t().clone()
    if einsum.bias_q is not None:
        einsum.bias_q.data = mha.W_query.bias.data.clone()
        einsum.bias_k.data = mha.W_key.bias.data.clone()
        einsum.bias_v.data = mha.W_value.bias.data.clone()
    einsum.out_proj.load_state_dict(mha.out_proj.state_dict())


class MHAPyTorchScaledDotProduct(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.h, self.d = num_heads, d_out
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        b, n, _ = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.h, -1).transpose(1, 3)  # (b, heads, 3, n, hd)
        q, k, v = qkv.unbind(2)
        allowed = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
        out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed,
                                                         dropout_p=self.dropout if self.training else 0.0)
        return self.proj(out.transpose(1, 2).reshape(b, n, self.d))


def transfer_to_sdpa(mha, sdpa):
    with torch.no_grad():
        sdpa.qkv.weight[:] = torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight])
        if sdpa.qkv.bias is not None:
            sdpa.qkv.bias[:] = torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias])
        sdpa.proj.weight[:] = mha.out_proj.weight
        sdpa.proj.bias[:] = mha.out_proj.bias


class MHAPyTorchClass(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.multihead_attn = nn.MultiheadAttention(d_out, num_heads, dropout=dropout, bias=qkv_bias,
                                                    batch_first=True)
        self.proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", causal(context_length))

    def forward(self, x):
        n = x.shape[1]
        out = self.multihead_attn(x, x, x, attn_mask=self.mask[:n, :n], need_weights=False)[0]
        return self.proj(out)


def transfer_to_pytorch_class(mha, torch_mha):
    # the other way round: nn.MultiheadAttention's out_proj does chapter 3's, proj does nothing
    attn = torch_mha.multihead_attn
    with torch.no_grad():
        attn.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        if attn.in_proj_bias is not None:
            attn.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        attn.out_proj.weight.copy_(mha.out_proj.weight)
        d = mha.out_proj.weight.shape[0]
        torch_mha.proj.weight.copy_(torch.eye(d))
        if attn.out_proj.bias is not None:
            attn.out_proj.bias.copy_(mha.out_proj.bias)
            torch_mha.proj.bias.zero_()
        else:
            torch_mha.proj.bias.copy_(mha.out_proj.bias)
''',
        "float_masks": '''"""Chapter 3's bonus: the same multi-head attention, written the ways fast code writes it.

Every class here computes exactly what your chapter-3 ``MultiHeadAttention`` computes (causal
mask, softmax of the scores scaled by sqrt(head_dim), dropout on the attention weights, heads
merged, then an output projection), once its weights are moved in by the ``transfer_to_*``
function below it. Mind the argument order: these classes take ``(d_in, d_out, num_heads,
context_length, dropout=0.0, qkv_bias=False)``, chapter 3's takes ``(d_in, d_out,
context_length, dropout, num_heads, qkv_bias=False)``.

The grader copies its own weights into your classes by the names below, so how you initialise
them is not graded; their names and shapes are.
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
    context_length, returns (batch, num_tokens, d_out) and leaves x unchanged.
    """

    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        # an additive mask: 0 where a query may look, -inf where it may not
        self.register_buffer("mask", torch.full((context_length, context_length), -torch.inf).triu(1))

    def forward(self, x):
        b, num_tokens, _ = x.shape
        # (b, n, 3 * d_out) -> (b, n, 3, heads, head_dim) -> (3, b, heads, n, head_dim)
        qkv = self.qkv(x).view(b, num_tokens, 3, self.num_heads, self.head_dim)
        queries, keys, values = qkv.permute(2, 0, 3, 1, 4)

        attn_scores = queries @ keys.transpose(-2, -1)
        attn_scores = attn_scores / self.head_dim**0.5 + self.mask[:num_tokens, :num_tokens]
        attn_weights = torch.softmax(attn_scores, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.proj(context_vec)


def transfer_to_combined_qkv(mha, combined):
    """Copy a chapter-3 ``MultiHeadAttention``'s weights into a ``MultiHeadAttentionCombinedQKV``
    of the same sizes, so both compute the same function; returns None.

    ``combined.qkv`` gets W_query, W_key and W_value stacked (and their biases where
    qkv_bias); ``combined.proj`` gets ``out_proj``. Copy values (no gradients recorded); leave
    ``mha`` unchanged.
    """
    with torch.no_grad():
        combined.qkv.weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        if combined.qkv.bias is not None:
            combined.qkv.bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        combined.proj.load_state_dict(mha.out_proj.state_dict())


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

    def forward(self, x):
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
        attn_scores = torch.where(self.mask[:n, :n], torch.tensor(-torch.inf), attn_scores)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))

        context_vec = torch.einsum("bhqk,bkhd->bqhd", attn_weights, values).reshape(b, n, self.d_out)
        return self.out_proj(context_vec)


def transfer_to_einsum(mha, einsum):
    """Copy a chapter-3 ``MultiHeadAttention``'s weights into an ``MHAEinsum`` of the same
    sizes, so both compute the same function; returns None.

    ``W_query`` gets the transpose of ``mha.W_query.weight`` (an nn.Linear keeps (d_out, d_in)),
    likewise keys and values; ``bias_q``/``bias_k``/``bias_v`` the biases where qkv_bias;
    ``out_proj`` gets ``out_proj``. Copy values; leave ``mha`` unchanged.
    """
    with torch.no_grad():
        for mine, theirs in (("query", "q"), ("key", "k"), ("value", "v")):
            linear = getattr(mha, f"W_{mine}")
            getattr(einsum, f"W_{mine}").copy_(linear.weight.T)
            if getattr(einsum, f"bias_{theirs}") is not None:
                getattr(einsum, f"bias_{theirs}").copy_(linear.bias)
        einsum.out_proj.load_state_dict(mha.out_proj.state_dict())


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
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.context_length = context_length
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        b, num_tokens, _ = x.shape
        qkv = self.qkv(x).view(b, num_tokens, 3, self.num_heads, self.head_dim)
        queries, keys, values = qkv.permute(2, 0, 3, 1, 4)
        context_vec = F.scaled_dot_product_attention(
            queries, keys, values, attn_mask=torch.full((num_tokens, num_tokens), -torch.inf).triu(1),
            dropout_p=self.dropout if self.training else 0.0)
        context_vec = context_vec.transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.proj(context_vec)


def transfer_to_sdpa(mha, sdpa):
    """Copy a chapter-3 ``MultiHeadAttention``'s weights into an ``MHAPyTorchScaledDotProduct``
    of the same sizes (its qkv and proj, as for the combined class); returns None."""
    sdpa.load_state_dict({"qkv.weight": torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]),
                          **({"qkv.bias": torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias])}
                             if sdpa.qkv.bias is not None else {}),
                          "proj.weight": mha.out_proj.weight, "proj.bias": mha.out_proj.bias})


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
        assert d_in == d_out, "nn.MultiheadAttention needs d_in == d_out here"
        self.multihead_attn = nn.MultiheadAttention(
            embed_dim=d_out, num_heads=num_heads, dropout=dropout, bias=qkv_bias, batch_first=True)
        self.proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        num_tokens = x.shape[1]
        hidden = self.mask[:num_tokens, :num_tokens]
        attn_mask = torch.zeros(hidden.shape).masked_fill(hidden, -torch.inf)  # a float mask is added
        context_vec, _ = self.multihead_attn(x, x, x, attn_mask=attn_mask, need_weights=False)
        return self.proj(context_vec)


def transfer_to_pytorch_class(mha, torch_mha):
    """Copy a chapter-3 ``MultiHeadAttention``'s weights into an ``MHAPyTorchClass`` of the
    same sizes, so both compute the same function; returns None.

    ``multihead_attn.in_proj_weight`` holds W_query, W_key, W_value stacked (``in_proj_bias``
    their biases where qkv_bias). Chapter 3 has one output projection, this class two in a row
    (``multihead_attn.out_proj``, then ``proj``): make one of them do nothing (identity weight,
    zero bias) and give the other chapter 3's ``out_proj``.
    """
    attn = torch_mha.multihead_attn
    with torch.no_grad():
        attn.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        if attn.in_proj_bias is not None:
            attn.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        attn.out_proj.weight.copy_(torch.eye(attn.embed_dim))
        if attn.out_proj.bias is not None:
            attn.out_proj.bias.zero_()
        torch_mha.proj.load_state_dict(mha.out_proj.state_dict())
''',
        "book": '''import math

import torch
import torch.nn as nn


# The bonus notebook's classes, the way the book companion writes them; the one change: the heads are
# merged back into d_out values (the notebook's view(..., embed_dim) takes x's width, which is d_in).
class MultiHeadAttentionCombinedQKV(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "embed_dim is indivisible by num_heads"
        self.num_heads = num_heads
        self.context_length = context_length
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        batch_size, num_tokens, embed_dim = x.shape
        # (b, num_tokens, d_in) --> (b, num_tokens, 3 * d_out)
        qkv = self.qkv(x)
        # --> (b, num_tokens, 3, num_heads, head_dim)
        qkv = qkv.view(batch_size, num_tokens, 3, self.num_heads, self.head_dim)
        # --> (3, b, num_heads, num_tokens, head_dim)
        qkv = qkv.permute(2, 0, 3, 1, 4)
        queries, keys, values = qkv
        attn_scores = queries @ keys.transpose(-2, -1)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = attn_weights @ values
        context_vec = context_vec.transpose(1, 2)
        context_vec = context_vec.contiguous().view(batch_size, num_tokens, self.d_out)
        context_vec = self.proj(context_vec)
        return context_vec


def transfer_to_combined_qkv(mha, combined):
    state = {"qkv.weight": torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], dim=0),
             "proj.weight": mha.out_proj.weight, "proj.bias": mha.out_proj.bias}
    if combined.qkv.bias is not None:
        state["qkv.bias"] = torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias], dim=0)
    combined.load_state_dict(state, strict=False)  # the mask stays the module's own


class MHAEinsum(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Parameter(torch.randn(d_in, d_out))
        self.W_key = nn.Parameter(torch.randn(d_in, d_out))
        self.W_value = nn.Parameter(torch.randn(d_in, d_out))
        if qkv_bias:
            self.bias_q = nn.Parameter(torch.zeros(d_out))
            self.bias_k = nn.Parameter(torch.zeros(d_out))
            self.bias_v = nn.Parameter(torch.zeros(d_out))
        else:
            self.register_parameter("bias_q", None)
            self.register_parameter("bias_k", None)
            self.register_parameter("bias_v", None)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
        self.reset_parameters()

    def reset_parameters(self):
        for weight in (self.W_query, self.W_key, self.W_value):
            nn.init.kaiming_uniform_(weight, a=math.sqrt(5))
        for weight, bias in ((self.W_query, self.bias_q), (self.W_key, self.bias_k), (self.W_value, self.bias_v)):
            if bias is not None:
                fan_in, _ = nn.init._calculate_fan_in_and_fan_out(weight)
                bound = 1 / math.sqrt(fan_in)
                nn.init.uniform_(bias, -bound, bound)

    def forward(self, x):
        b, n, _ = x.shape
        Q = torch.einsum("bnd,di->bni", x, self.W_query)
        K = torch.einsum("bnd,di->bni", x, self.W_key)
        V = torch.einsum("bnd,di->bni", x, self.W_value)
        if self.bias_q is not None:
            Q += self.bias_q
            K += self.bias_k
            V += self.bias_v
        Q = Q.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        K = K.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        V = V.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        scores = torch.einsum("bhnd,bhmd->bhnm", Q, K) / (self.head_dim ** 0.5)
        mask = self.mask[:n, :n].unsqueeze(0).unsqueeze(1).expand(b, self.num_heads, n, n)
        scores = scores.masked_fill(mask.bool(), -torch.inf)
        attn_weights = torch.softmax(scores, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = torch.einsum("bhnm,bhmd->bhnd", attn_weights, V)
        context_vec = context_vec.transpose(1, 2).reshape(b, n, self.d_out)
        context_vec = self.out_proj(context_vec)
        return context_vec


def transfer_to_einsum(mha, einsum):
    with torch.no_grad():
        einsum.W_query.copy_(mha.W_query.weight.T)
        einsum.W_key.copy_(mha.W_key.weight.T)
        einsum.W_value.copy_(mha.W_value.weight.T)
        if einsum.bias_q is not None:
            einsum.bias_q.copy_(mha.W_query.bias)
            einsum.bias_k.copy_(mha.W_key.bias)
            einsum.bias_v.copy_(mha.W_value.bias)
        einsum.out_proj.weight.copy_(mha.out_proj.weight)
        einsum.out_proj.bias.copy_(mha.out_proj.bias)


class MHAPyTorchScaledDotProduct(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "embed_dim is indivisible by num_heads"
        self.num_heads = num_heads
        self.context_length = context_length
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        batch_size, num_tokens, embed_dim = x.shape
        qkv = self.qkv(x)
        qkv = qkv.view(batch_size, num_tokens, 3, self.num_heads, self.head_dim)
        qkv = qkv.permute(2, 0, 3, 1, 4)
        queries, keys, values = qkv
        use_dropout = 0. if not self.training else self.dropout
        context_vec = nn.functional.scaled_dot_product_attention(
            queries, keys, values, attn_mask=None, dropout_p=use_dropout, is_causal=True)
        context_vec = context_vec.transpose(1, 2).contiguous().view(batch_size, num_tokens, self.d_out)
        context_vec = self.proj(context_vec)
        return context_vec


def transfer_to_sdpa(mha, sdpa):
    transfer_to_combined_qkv(mha, sdpa)


class MHAPyTorchClass(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False, need_weights=True):
        super().__init__()
        self.context_length = context_length
        self.multihead_attn = nn.MultiheadAttention(
            embed_dim=d_out,
            num_heads=num_heads,
            dropout=dropout,
            bias=qkv_bias,
            batch_first=True,
        )
        self.need_weights = need_weights
        self.proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        batch_size, num_tokens, _ = x.shape
        # the mask of the tokens given, at most context_length of them
        if self.context_length >= num_tokens:
            attn_mask = self.mask[:num_tokens, :num_tokens]
        else:
            attn_mask = self.mask[:self.context_length, :self.context_length]
        # need_weights=True (the default here) also returns the averaged weights: slower, the same output
        attn_output, _ = self.multihead_attn(x, x, x, attn_mask=attn_mask, need_weights=self.need_weights)
        output = self.proj(attn_output)
        return output


def transfer_to_pytorch_class(mha, torch_mha):
    attn = torch_mha.multihead_attn
    d = attn.embed_dim
    state = {"multihead_attn.in_proj_weight": torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]),
             "multihead_attn.out_proj.weight": torch.eye(d),
             "proj.weight": mha.out_proj.weight, "proj.bias": mha.out_proj.bias}
    if attn.in_proj_bias is not None:
        state["multihead_attn.in_proj_bias"] = torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias])
        state["multihead_attn.out_proj.bias"] = torch.zeros(d)
    torch_mha.load_state_dict(state, strict=False)
''',
    },
    "grouped_query": {
        "plain": '''import torch
import torch.nn as nn
import torch.nn.functional as F


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, num_heads, num_kv_groups, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if num_heads % num_kv_groups or d_out % num_heads:
            raise ValueError(f"{num_kv_groups} groups cannot share {num_heads} heads evenly")
        self.heads, self.groups = num_heads, num_kv_groups
        self.hd = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.hd * num_kv_groups, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.hd * num_kv_groups, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1), persistent=False)

    def forward(self, x):
        b, n, _ = x.shape
        q = self.W_query(x).view(b, n, self.heads, self.hd).transpose(1, 2)
        k = self.W_key(x).view(b, n, self.groups, 1, self.hd)
        v = self.W_value(x).view(b, n, self.groups, 1, self.hd)
        size = self.heads // self.groups
        k = k.expand(b, n, self.groups, size, self.hd).reshape(b, n, self.heads, self.hd).transpose(1, 2)
        v = v.expand(b, n, self.groups, size, self.hd).reshape(b, n, self.heads, self.hd).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / self.hd ** 0.5
        scores = scores.masked_fill(self.mask[:n, :n] == 1, float("-inf"))
        weights = self.dropout(F.softmax(scores, dim=-1))
        return self.out_proj(torch.matmul(weights, v).transpose(1, 2).flatten(2))


def kv_cache_bytes(cfg, batch_size=1, bytes_per_elem=2):
    heads = cfg["n_heads"]
    groups = cfg["n_kv_groups"] if "n_kv_groups" in cfg else heads
    head_dim = cfg["emb_dim"] // heads
    elements_per_layer = 2 * batch_size * groups * cfg["context_length"] * head_dim
    return int(elements_per_layer * cfg["n_layers"] * bytes_per_elem)
''',
        "index": '''import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, num_heads, num_kv_groups, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        if num_heads % num_kv_groups != 0:
            raise ValueError("num_heads must be a multiple of num_kv_groups")
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))
        # which key/value head each query head reads: 0, 0, 1, 1, ...
        self.register_buffer("kv_index", torch.arange(num_heads) // (num_heads // num_kv_groups), persistent=False)

    def forward(self, x):
        b, n, _ = x.shape
        q = self.W_query(x).unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)
        k = self.W_key(x).unflatten(-1, (self.num_kv_groups, self.head_dim)).transpose(1, 2)
        v = self.W_value(x).unflatten(-1, (self.num_kv_groups, self.head_dim)).transpose(1, 2)
        k, v = k[:, self.kv_index], v[:, self.kv_index]
        scores = q @ k.mT
        scores.masked_fill_(self.mask[:n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ v).transpose(1, 2).flatten(2))


def kv_cache_bytes(cfg, batch_size=1, bytes_per_elem=2):
    # one key and one value tensor per layer, on the meta device: shapes only, nothing allocated
    head_dim = cfg["emb_dim"] // cfg["n_heads"]
    shape = (batch_size, cfg.get("n_kv_groups", cfg["n_heads"]), cfg["context_length"], head_dim)
    one = torch.empty(shape, device="meta")
    return 2 * cfg["n_layers"] * one.numel() * bytes_per_elem
''',
        "book": '''import math

import torch
import torch.nn as nn


# The book companion's grouped-query attention (its KV-cache chapter), with this course's signature:
# W_key and W_value created before W_query, the checks by assert, the mask not saved with the weights.
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, num_heads, num_kv_groups, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        assert num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.num_kv_groups = num_kv_groups
        self.group_size = num_heads // num_kv_groups

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1), persistent=False)

    def forward(self, x):
        b, num_tokens, d_in = x.shape

        queries = self.W_query(x)  # (b, num_tokens, num_heads * head_dim)
        keys = self.W_key(x)       # (b, num_tokens, num_kv_groups * head_dim)
        values = self.W_value(x)

        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.view(b, num_tokens, self.num_kv_groups, self.head_dim)
        values = values.view(b, num_tokens, self.num_kv_groups, self.head_dim)

        keys, values, queries = keys.transpose(1, 2), values.transpose(1, 2), queries.transpose(1, 2)

        # each key/value group serves group_size query heads, in a row
        keys = keys.repeat_interleave(self.group_size, dim=1)
        values = values.repeat_interleave(self.group_size, dim=1)

        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.reshape(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)
        return context_vec


def kv_cache_bytes(cfg, batch_size=1, bytes_per_elem=2):
    # the bonus material's memory estimate: keys and values, per layer, per token, per key/value head
    n_heads, emb_dim = cfg["n_heads"], cfg["emb_dim"]
    n_kv_heads = cfg.get("n_kv_groups", n_heads)
    head_dim = math.ceil(emb_dim / n_heads)
    per_layer = batch_size * cfg["context_length"] * head_dim * n_kv_heads * 2 * bytes_per_elem
    return per_layer * cfg["n_layers"]
''',
    },
    "sliding_window": {
        "plain": '''import torch
import torch.nn as nn


def sliding_window_mask(num_tokens, window):
    if window < 1:
        raise ValueError(f"window must be positive, got {window}")
    i = torch.arange(num_tokens).unsqueeze(1)
    j = torch.arange(num_tokens).unsqueeze(0)
    distance = i - j
    return (distance < 0) | (distance >= window)


class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, window, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", sliding_window_mask(context_length, window))
        self.window = window
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.seen = 0

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None
        self.seen = 0

    def forward(self, x, use_cache=False):
        b, n, d_in = x.shape
        heads = []
        hd = self.W_query.out_features // self.num_heads
        q_all, k_all, v_all = self.W_query(x), self.W_key(x), self.W_value(x)
        first_query = 0
        if use_cache:
            first_query = self.seen
            if self.cache_k is not None:
                k_all = torch.cat((self.cache_k, k_all), dim=1)
                v_all = torch.cat((self.cache_v, v_all), dim=1)
            self.seen += n
            drop = max(k_all.shape[1] - (self.window - 1), 0)  # the next token sees window - 1 of them
            self.cache_k = k_all[:, drop:]
            self.cache_v = v_all[:, drop:]
        # the mask from the positions of the queries and of the keys held
        q_pos = torch.arange(first_query, first_query + n).unsqueeze(1)
        k_pos = torch.arange(first_query + n - k_all.shape[1], first_query + n).unsqueeze(0)
        hidden = (k_pos > q_pos) | (q_pos - k_pos >= self.window)
        w_all = []
        for h in range(self.num_heads):
            cols = slice(h * hd, (h + 1) * hd)
            s = q_all[..., cols] @ k_all[..., cols].transpose(1, 2) / hd ** 0.5
            w_all.append(torch.softmax(s.masked_fill(hidden, -torch.inf), dim=-1))
        w_all = self.dropout(torch.stack(w_all, dim=1))  # one draw over (b, heads, n, n), as chapter 3
        for h in range(self.num_heads):
            heads.append(w_all[:, h] @ v_all[..., h * hd:(h + 1) * hd])
        return self.out_proj(torch.cat(heads, dim=-1))
''',
        "sdpa": '''import torch
import torch.nn as nn
import torch.nn.functional as F


def sliding_window_mask(num_tokens, window):
    if window <= 0:
        raise ValueError("window must be at least 1")
    mask = torch.zeros(num_tokens, num_tokens, dtype=torch.bool)
    for i in range(num_tokens):
        for j in range(num_tokens):
            mask[i, j] = j > i or i - j >= window
    return mask


class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, window, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", sliding_window_mask(context_length, window))
        self.window = window
        # a ring of window slots, rolled along as tokens come; `filled` of them hold keys
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.filled = 0
        self.pos = 0

    def reset_cache(self):
        self.cache_k = self.cache_v = None
        self.filled = self.pos = 0

    def forward(self, x, use_cache=False):
        b, n, _ = x.shape
        q, k, v = (lin(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
                   for lin in (self.W_query, self.W_key, self.W_value))
        if not use_cache:
            mask = self.mask[:n, :n]
        else:
            if self.cache_k is None:
                self.cache_k = k.new_zeros(b, self.num_heads, self.window, self.head_dim)
                self.cache_v = torch.zeros_like(self.cache_k)
            old_k = self.cache_k[:, :, self.window - self.filled:]
            old_v = self.cache_v[:, :, self.window - self.filled:]
            rows = slice(self.pos, self.pos + n)
            mask = self.mask[rows, self.pos - self.filled:self.pos + n]
            take = min(n, self.window)  # the newest keys go in at the end of the ring
            self.cache_k = torch.roll(self.cache_k, -take, dims=2)
            self.cache_v = torch.roll(self.cache_v, -take, dims=2)
            self.cache_k[:, :, self.window - take:] = k[:, :, n - take:]
            self.cache_v[:, :, self.window - take:] = v[:, :, n - take:]
            self.filled = min(self.filled + n, self.window)
            self.pos += n
            k, v = torch.cat([old_k, k], dim=2), torch.cat([old_v, v], dim=2)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=~mask,
                                             dropout_p=self.dropout.p if self.training else 0.0)
        return self.out_proj(out.transpose(1, 2).reshape(b, n, -1))
''',
    },
    "rope": {
        "plain": '''import torch
import torch.nn as nn


def compute_rope_params(head_dim, theta_base=10_000, context_length=4096):
    if head_dim % 2:
        raise ValueError("RoPE needs an even head_dim")
    j = torch.arange(head_dim // 2, dtype=torch.float32)
    freqs = theta_base ** (-2 * j / head_dim)
    angles = torch.outer(torch.arange(context_length, dtype=torch.float32), freqs)
    angles = angles.repeat(1, 2)
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin, offset=0):
    n, half = x.shape[2], x.shape[3] // 2
    c, s = cos[offset:offset + n], sin[offset:offset + n]
    first, second = x[..., :half], x[..., half:]
    out_first = first * c[:, :half] - second * s[:, :half]
    out_second = second * c[:, half:] + first * s[:, half:]
    return torch.cat([out_first, out_second], dim=-1).to(x.dtype)  # float32 tables: back to x's dtype


class MultiHeadAttentionRoPE(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False, theta_base=10_000):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
        cos, sin = compute_rope_params(self.head_dim, theta_base=theta_base, context_length=context_length)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, x):
        b, n, _ = x.shape

        def heads(t):
            return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        q = apply_rope(heads(self.W_query(x)), self.cos, self.sin)
        k = apply_rope(heads(self.W_key(x)), self.cos, self.sin)
        v = heads(self.W_value(x))
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ v).transpose(1, 2).contiguous().view(b, n, -1))
''',
        "complex": '''import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def compute_rope_params(head_dim, theta_base=10_000, context_length=4096):
    if head_dim % 2 == 1:
        raise ValueError("head_dim must be even")
    half = head_dim // 2
    freqs = torch.exp(-math.log(theta_base) * torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = torch.arange(context_length, dtype=torch.float64)[:, None] * freqs
    angles = torch.cat((angles, angles), dim=-1)
    assert angles.shape[-1] == 2 * half
    return angles.cos().float(), angles.sin().float()


def apply_rope(x, cos, sin, offset=0):
    # pair j as one complex number x[j] + i x[j + half], turned by multiplying with e^(i angle)
    n, half = x.shape[-2], x.shape[-1] // 2
    turn = torch.complex(cos[offset:offset + n, :half], sin[offset:offset + n, :half])
    z = torch.complex(x[..., :half].float(), x[..., half:].float()) * turn
    return torch.cat((z.real, z.imag), dim=-1).to(x.dtype)


class MultiHeadAttentionRoPE(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False, theta_base=10_000):
        super().__init__()
        self.num_heads = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))
        cos, sin = compute_rope_params(d_out // num_heads, theta_base, context_length)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)

    def forward(self, x):
        b, n, d = x.shape
        shape = (b, n, self.num_heads, -1)
        q = apply_rope(self.W_query(x).view(shape).transpose(1, 2), self.cos, self.sin)
        k = apply_rope(self.W_key(x).view(shape).transpose(1, 2), self.cos, self.sin)
        v = self.W_value(x).view(shape).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=~self.mask[:n, :n],
                                             dropout_p=self.dropout.p if self.training else 0.0)
        return self.out_proj(out.transpose(1, 2).reshape(b, n, -1))
''',
        "book": '''import torch
import torch.nn as nn


# RoPE as the book companion's Llama code writes it (with its Llama 3.1 frequency smoothing), and
# chapter 3's attention with it; the checks by assert.
def compute_rope_params(head_dim, theta_base=10_000, context_length=4096, freq_config=None, dtype=torch.float32):
    assert head_dim % 2 == 0, "Embedding dimension must be even"

    # the inverse frequencies
    inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2, dtype=dtype)[: (head_dim // 2)].float() / head_dim))

    if freq_config is not None:  # Llama 3.1: long wavelengths slowed down, short ones kept, smoothed between
        low_freq_wavelen = freq_config["original_context_length"] / freq_config["low_freq_factor"]
        high_freq_wavelen = freq_config["original_context_length"] / freq_config["high_freq_factor"]
        wavelen = 2 * torch.pi / inv_freq
        inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / freq_config["factor"], inv_freq)
        smooth_factor = ((freq_config["original_context_length"] / wavelen - freq_config["low_freq_factor"])
                         / (freq_config["high_freq_factor"] - freq_config["low_freq_factor"]))
        smoothed = (1 - smooth_factor) * (inv_freq / freq_config["factor"]) + smooth_factor * inv_freq
        is_medium = (wavelen <= low_freq_wavelen) & (wavelen >= high_freq_wavelen)
        inv_freq = torch.where(is_medium, smoothed, inv_freq_llama)

    positions = torch.arange(context_length, dtype=dtype)
    angles = positions.unsqueeze(1) * inv_freq.unsqueeze(0)  # (context_length, head_dim // 2)
    angles = torch.cat([angles, angles], dim=1)              # (context_length, head_dim)

    cos = torch.cos(angles)
    sin = torch.sin(angles)
    return cos, sin


def apply_rope(x, cos, sin, offset=0):
    # x: (batch_size, num_heads, seq_len, head_dim)
    batch_size, num_heads, seq_len, head_dim = x.shape
    assert head_dim % 2 == 0, "Head dimension must be even"

    x1 = x[..., : head_dim // 2]  # first half
    x2 = x[..., head_dim // 2:]   # second half

    # (1, 1, seq_len, head_dim), the rows of the tokens' positions
    cos = cos[offset:offset + seq_len, :].unsqueeze(0).unsqueeze(0)
    sin = sin[offset:offset + seq_len, :].unsqueeze(0).unsqueeze(0)

    rotated = torch.cat((-x2, x1), dim=-1)
    x_rotated = (x * cos) + (rotated * sin)

    # lower precision is fine once the rotation is done
    return x_rotated.to(dtype=x.dtype)


class MultiHeadAttentionRoPE(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False, theta_base=10_000):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

        cos, sin = compute_rope_params(head_dim=self.head_dim, theta_base=theta_base, context_length=context_length)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)

    def forward(self, x):
        b, num_tokens, d_in = x.shape

        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)

        keys = apply_rope(keys, self.cos, self.sin)
        queries = apply_rope(queries, self.cos, self.sin)

        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.reshape(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)
        return context_vec
''',
    },
}


# ----------------------------------------------------------------------------------------------
# (space between the two halves, so that each grows without touching the other)
#
#
#
#
#
#
#
#
# ----------------------------------------------------------------------------------------------


# kv_cache: {"kv_cache": {style: source}}
KV_CACHE = {
    "plain": '''import torch
from torch import nn

from feed_forward import FeedForward
from layer_norm import LayerNorm


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)  # (b, heads, n, head_dim)

    def forward(self, x, use_cache=False):
        b, n, _ = x.shape
        q = self.split(self.W_query(x))
        k = self.split(self.W_key(x))
        v = self.split(self.W_value(x))
        if use_cache:
            if self.cache_k is not None:
                k = torch.cat((self.cache_k, k), dim=2)
                v = torch.cat((self.cache_v, v), dim=2)
            self.cache_k, self.cache_v = k, v
        n_keys = k.shape[2]
        past = n_keys - n  # tokens already in the cache before these
        scores = q @ k.transpose(-2, -1) / self.head_dim ** 0.5
        scores = scores.masked_fill(self.mask[past:past + n, :n_keys], float("-inf"))
        w = self.dropout(torch.softmax(scores, dim=-1))
        out = (w @ v).transpose(1, 2).reshape(b, n, self.d_out)
        return self.out_proj(out)

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        emb = cfg["emb_dim"]
        self.att = MultiHeadAttention(emb, emb, cfg["context_length"], cfg["drop_rate"], cfg["n_heads"],
                                      cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(emb)
        self.norm2 = LayerNorm(emb)
        self.drop_resid = nn.Dropout(cfg["drop_rate"])

    def forward(self, x, use_cache=False):
        x = x + self.drop_resid(self.att(self.norm1(x), use_cache=use_cache))
        return x + self.drop_resid(self.ff(self.norm2(x)))


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        blocks = []
        for _ in range(cfg["n_layers"]):
            blocks.append(TransformerBlock(cfg))
        self.trf_blocks = nn.ModuleList(blocks)
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        self.current_pos = 0

    def forward(self, in_idx, use_cache=False):
        n = in_idx.shape[1]
        first = self.current_pos if use_cache else 0
        positions = torch.arange(first, first + n, device=in_idx.device)
        if use_cache:
            self.current_pos = first + n
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(positions))
        for blk in self.trf_blocks:
            x = blk(x, use_cache=use_cache)
        return self.out_head(self.final_norm(x))

    def reset_kv_cache(self):
        self.current_pos = 0
        for blk in self.trf_blocks:
            blk.att.reset_cache()


def generate_text_simple_cached(model, idx, max_new_tokens):
    model.reset_kv_cache()
    out = idx
    with torch.no_grad():
        logits = model(idx, use_cache=True)
        for step in range(max_new_tokens):
            nxt = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)
            out = torch.cat((out, nxt), dim=1)
            if step < max_new_tokens - 1:  # the last token's logits would go unused
                logits = model(nxt, use_cache=True)
    return out
''',
    "prealloc": '''import torch
import torch.nn as nn
from feed_forward import FeedForward
from layer_norm import LayerNorm


class MultiHeadAttention(nn.Module):
    """A preallocated cache: room for context_length tokens, filled as they come."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.filled = 0

    def forward(self, x, use_cache=False):
        b, n, _ = x.shape
        shape = (b, n, self.num_heads, self.head_dim)
        q = self.W_query(x).view(shape).permute(0, 2, 1, 3)
        k = self.W_key(x).view(shape).permute(0, 2, 1, 3)
        v = self.W_value(x).view(shape).permute(0, 2, 1, 3)
        start = 0
        if use_cache:
            if self.cache_k is None:
                room = (b, self.num_heads, self.context_length, self.head_dim)
                self.cache_k = x.new_zeros(room)
                self.cache_v = x.new_zeros(room)
            start = self.filled
            self.cache_k[:, :, start:start + n] = k
            self.cache_v[:, :, start:start + n] = v
            self.filled += n
            k = self.cache_k[:, :, :self.filled]
            v = self.cache_v[:, :, :self.filled]
        scores = torch.matmul(q, k.transpose(2, 3))
        mask = self.mask[start:start + n, :k.shape[2]] == 1
        scores = scores.masked_fill(mask, -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        context = torch.matmul(weights, v).permute(0, 2, 1, 3).flatten(2)
        return self.out_proj(context)

    def reset_cache(self):
        self.cache_k = self.cache_v = None
        self.filled = 0


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(d_in=cfg["emb_dim"], d_out=cfg["emb_dim"], context_length=cfg["context_length"],
                                      dropout=cfg["drop_rate"], num_heads=cfg["n_heads"], qkv_bias=cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1, self.norm2 = LayerNorm(cfg["emb_dim"]), LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x, use_cache=False):
        h = self.norm1(x)
        h = self.att(h, use_cache)
        x = self.drop_shortcut(h) + x
        h = self.ff(self.norm2(x))
        return self.drop_shortcut(h) + x


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.ModuleList(TransformerBlock(cfg) for _ in range(cfg["n_layers"]))
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        self.current_pos = 0

    def forward(self, in_idx, use_cache=False):
        seq_len = in_idx.size(1)
        offset = self.current_pos if use_cache else 0
        x = self.tok_emb(in_idx) + self.pos_emb.weight[offset:offset + seq_len]
        if use_cache:
            self.current_pos += seq_len
        x = self.drop_emb(x)
        for block in self.trf_blocks:
            x = block(x, use_cache)
        x = self.final_norm(x)
        return self.out_head(x)

    def reset_kv_cache(self):
        self.current_pos = 0
        for block in self.trf_blocks:
            block.att.reset_cache()


def generate_text_simple_cached(model, idx, max_new_tokens):
    b, n = idx.shape
    out = torch.empty(b, n + max_new_tokens, dtype=idx.dtype, device=idx.device)
    out[:, :n] = idx
    with torch.no_grad():
        model.reset_kv_cache()
        logits = model(idx, use_cache=True)
        for i in range(n, n + max_new_tokens):
            out[:, i] = logits[:, -1].argmax(-1)
            logits = model(out[:, i:i + 1], use_cache=True)
    return out
''',
    "lists": '''import torch
import torch.nn as nn

import feed_forward
import layer_norm


class MultiHeadAttention(nn.Module):
    # the cache as a list of chunks per sequence; positions are counted from what it holds

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.num_heads = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(1), persistent=False)
        self.keys_seen, self.values_seen = [], []

    def cached_tokens(self):
        return sum(k.shape[1] for k in self.keys_seen)

    def forward(self, x, use_cache=False):
        b, n, _ = x.shape
        hd = self.d_out // self.num_heads
        k_new = self.W_key(x).reshape(b, n, self.num_heads, hd)
        v_new = self.W_value(x).reshape(b, n, self.num_heads, hd)
        q = self.W_query(x).reshape(b, n, self.num_heads, hd).transpose(1, 2)
        past = 0
        if use_cache:
            past = self.cached_tokens()
            self.keys_seen.append(k_new)
            self.values_seen.append(v_new)
            k_new, v_new = torch.cat(self.keys_seen, dim=1), torch.cat(self.values_seen, dim=1)
        k, v = k_new.transpose(1, 2), v_new.transpose(1, 2)
        total = k.shape[2]
        scores = q @ k.transpose(2, 3)
        scores.masked_fill_(self.mask[past:past + n, :total].bool(), -torch.inf)
        weights = self.dropout(torch.softmax(scores / hd ** 0.5, dim=-1))
        ctx = (weights @ v).transpose(1, 2).contiguous().view(b, n, self.d_out)
        return self.out_proj(ctx)

    def reset_cache(self):
        self.keys_seen.clear()
        self.values_seen.clear()


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate"],
                                      cfg["n_heads"], qkv_bias=cfg["qkv_bias"])
        self.ff = feed_forward.FeedForward(cfg)
        self.norm1 = layer_norm.LayerNorm(cfg["emb_dim"])
        self.norm2 = layer_norm.LayerNorm(cfg["emb_dim"])
        self.dropout = nn.Dropout(cfg["drop_rate"])

    def forward(self, x, use_cache=False):
        shortcut = x
        x = self.dropout(self.att(x=self.norm1(x), use_cache=use_cache)) + shortcut
        shortcut = x
        return self.dropout(self.ff(self.norm2(x))) + shortcut


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = layer_norm.LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx, use_cache=False):
        start = self.trf_blocks[0].att.cached_tokens() if use_cache else 0
        pos = torch.arange(start, start + in_idx.shape[1], device=in_idx.device)
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(pos)[None])
        for block in self.trf_blocks:
            x = block(x, use_cache=use_cache)
        return self.out_head(self.final_norm(x))

    def reset_kv_cache(self):
        for block in self.trf_blocks:
            block.att.reset_cache()


@torch.no_grad()
def generate_text_simple_cached(model, idx, max_new_tokens):
    model.reset_kv_cache()
    tokens = [idx]
    feed = idx
    for _ in range(max_new_tokens):
        logits = model(in_idx=feed, use_cache=True)[:, -1, :]
        probas = torch.softmax(logits, dim=-1)
        feed = torch.topk(probas, k=1, dim=-1).indices
        tokens.append(feed)
    return torch.cat(tokens, dim=1)
''',
    "subclass": '''import torch
import torch.nn as nn
import torch.nn.functional as F

from feed_forward import FeedForward
from layer_norm import LayerNorm
from multihead_attention import MultiHeadAttention as ChapterThreeAttention


class MultiHeadAttention(ChapterThreeAttention):
    """My chapter-3 class, with a cache; scaled_dot_product_attention with an explicit mask."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.ptr = 0

    def heads(self, t):
        return t.unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)

    def forward(self, x, use_cache=False):
        b, n, _ = x.shape
        queries, keys, values = self.heads(self.W_query(x)), self.heads(self.W_key(x)), self.heads(self.W_value(x))
        first = 0
        if use_cache:
            first = self.ptr
            self.ptr += n
            if self.cache_k is None:
                self.cache_k, self.cache_v = keys, values
            else:
                self.cache_k = torch.cat([self.cache_k, keys], dim=-2)
                self.cache_v = torch.cat([self.cache_v, values], dim=-2)
            keys, values = self.cache_k, self.cache_v
        rows = torch.arange(first, first + n, device=x.device)[:, None]
        cols = torch.arange(keys.shape[-2], device=x.device)[None, :]
        allowed = cols <= rows  # True means "attend" for scaled_dot_product_attention
        p = self.dropout.p if self.training else 0.0
        out = F.scaled_dot_product_attention(queries, keys, values, attn_mask=allowed, dropout_p=p)
        return self.out_proj(out.transpose(1, 2).reshape(b, n, self.d_out))

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None
        self.ptr = 0


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.att = MultiHeadAttention(d_in=d, d_out=d, context_length=cfg["context_length"], dropout=cfg["drop_rate"],
                                      num_heads=cfg["n_heads"], qkv_bias=cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(d)
        self.norm2 = LayerNorm(d)
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x, use_cache=False):
        attn = self.att(self.norm1(x), use_cache=use_cache)
        x = x + self.drop_shortcut(attn)
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.ModuleList()
        for _ in range(cfg["n_layers"]):
            self.trf_blocks.append(TransformerBlock(cfg))
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        self.current_pos = 0

    def forward(self, in_idx, use_cache=False):
        _, seq_len = in_idx.shape
        if use_cache:
            pos_ids = self.current_pos + torch.arange(seq_len, device=in_idx.device)
            self.current_pos += seq_len
        else:
            pos_ids = torch.arange(seq_len, device=in_idx.device)
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(pos_ids))
        for i in range(len(self.trf_blocks)):
            x = self.trf_blocks[i](x, use_cache=use_cache)
        return self.out_head(self.final_norm(x))

    def reset_kv_cache(self):
        for block in self.trf_blocks:
            block.att.reset_cache()
        self.current_pos = 0


def generate_text_simple_cached(model, idx, max_new_tokens):
    with torch.no_grad():
        model.reset_kv_cache()
        new_tokens = idx
        for _ in range(max_new_tokens):
            logits = model(new_tokens, use_cache=True)
            new_tokens = logits[:, -1, :].max(dim=-1, keepdim=True).indices
            idx = torch.cat([idx, new_tokens], dim=-1)
    return idx
''',
    "einsum": '''import torch
import torch.nn as nn
import torch.nn.functional as F

from feed_forward import FeedForward
from layer_norm import LayerNorm


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be divisible by num_heads")
        self.h = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        # 1 where a query may look: the lower triangle
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)))
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        b, t, d = x.shape
        q = self.W_query(x).view(b, t, self.h, -1)
        k = self.W_key(x).view(b, t, self.h, -1)
        v = self.W_value(x).view(b, t, self.h, -1)
        offset = 0
        if use_cache:
            if self.cache_k is not None:
                offset = self.cache_k.shape[1]
                k = torch.cat([self.cache_k, k], dim=1)
                v = torch.cat([self.cache_v, v], dim=1)
            self.cache_k, self.cache_v = k, v
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / q.shape[-1] ** 0.5
        visible = self.mask[offset:offset + t, :k.shape[1]]
        scores = scores.masked_fill(visible == 0, float("-inf"))
        weights = self.dropout(F.softmax(scores, dim=-1))
        context = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, t, -1)
        return self.out_proj(context)

    def reset_cache(self):
        self.cache_k, self.cache_v = None, None


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], context_length=cfg["context_length"],
                                      dropout=cfg["drop_rate"], num_heads=cfg["n_heads"], qkv_bias=cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.p = cfg["drop_rate"]

    def forward(self, x, use_cache=False):
        x = x + F.dropout(self.att(self.norm1(x), use_cache=use_cache), self.p, self.training)
        x = x + F.dropout(self.ff(self.norm2(x)), self.p, self.training)
        return x


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.ModuleList([TransformerBlock(cfg) for i in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        self.current_pos = 0

    def forward(self, in_idx, use_cache=False):
        if not use_cache:
            self_pos = 0
        else:
            self_pos = self.current_pos
            self.current_pos += in_idx.shape[-1]
        pos = torch.arange(in_idx.shape[-1], device=in_idx.device) + self_pos
        h = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(pos))
        for layer in self.trf_blocks:
            h = layer(h, use_cache)
        return self.out_head(self.final_norm(h))

    def reset_kv_cache(self):
        self.current_pos = 0
        for layer in self.trf_blocks:
            layer.att.reset_cache()


def generate_text_simple_cached(model, idx, max_new_tokens):
    model.reset_kv_cache()
    with torch.no_grad():
        for i in range(max_new_tokens):
            feed = idx if i == 0 else idx[:, -1:]  # after the prompt, only the newest token
            logits = model(feed, use_cache=True)
            idx = torch.cat((idx, logits[:, -1].argmax(-1, keepdim=True)), dim=1)
    return idx
''',
    "book": '''import torch
import torch.nn as nn

from feed_forward import FeedForward
from layer_norm import LayerNorm


# The book companion's KV-cache GPT: its mask is not saved with the weights (persistent=False), the
# mask rows taken from ptr_current_pos, the generation able to run without the cache too.
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
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
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1), persistent=False)

        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.ptr_current_pos = 0

    def forward(self, x, use_cache=False):
        b, num_tokens, d_in = x.shape

        keys_new = self.W_key(x)  # (b, num_tokens, d_out)
        values_new = self.W_value(x)
        queries = self.W_query(x)

        keys_new = keys_new.view(b, num_tokens, self.num_heads, self.head_dim)
        values_new = values_new.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        if use_cache:
            if self.cache_k is None:
                self.cache_k, self.cache_v = keys_new, values_new
            else:
                self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)
                self.cache_v = torch.cat([self.cache_v, values_new], dim=1)
            keys, values = self.cache_k, self.cache_v
        else:
            keys, values = keys_new, values_new

        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3)

        num_tokens_Q = queries.shape[-2]
        num_tokens_K = keys.shape[-2]
        if use_cache:
            mask_bool = self.mask.bool()[self.ptr_current_pos:self.ptr_current_pos + num_tokens_Q, :num_tokens_K]
            self.ptr_current_pos += num_tokens_Q
        else:
            mask_bool = self.mask.bool()[:num_tokens_Q, :num_tokens_K]

        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)
        return context_vec

    def reset_cache(self):
        self.cache_k, self.cache_v = None, None
        self.ptr_current_pos = 0


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            context_length=cfg["context_length"],
            num_heads=cfg["n_heads"],
            dropout=cfg["drop_rate"],
            qkv_bias=cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x, use_cache=False):
        # the shortcut connection around the attention
        shortcut = x
        x = self.norm1(x)
        x = self.att(x, use_cache=use_cache)
        x = self.drop_shortcut(x)
        x = x + shortcut

        # and around the feed forward network
        shortcut = x
        x = self.norm2(x)
        x = self.ff(x)
        x = self.drop_shortcut(x)
        x = x + shortcut
        return x


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])

        self.trf_blocks = nn.ModuleList([TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.current_pos = 0

        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx, use_cache=False):
        batch_size, seq_len = in_idx.shape
        tok_embeds = self.tok_emb(in_idx)

        if use_cache:
            pos_ids = torch.arange(self.current_pos, self.current_pos + seq_len, device=in_idx.device, dtype=torch.long)
            self.current_pos += seq_len
        else:
            pos_ids = torch.arange(0, seq_len, device=in_idx.device, dtype=torch.long)
        pos_embeds = self.pos_emb(pos_ids).unsqueeze(0)

        x = tok_embeds + pos_embeds  # (batch_size, num_tokens, emb_size)
        x = self.drop_emb(x)
        for blk in self.trf_blocks:
            x = blk(x, use_cache=use_cache)
        x = self.final_norm(x)
        logits = self.out_head(x)
        return logits

    def reset_kv_cache(self):
        for blk in self.trf_blocks:
            blk.att.reset_cache()
        self.current_pos = 0


def generate_text_simple_cached(model, idx, max_new_tokens, context_size=None, use_cache=True):
    model.eval()
    ctx_len = context_size or model.pos_emb.num_embeddings

    with torch.no_grad():
        if use_cache:
            # the whole prompt once, then one token per step
            model.reset_kv_cache()
            logits = model(idx[:, -ctx_len:], use_cache=True)

            for _ in range(max_new_tokens):
                next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)
                idx = torch.cat([idx, next_idx], dim=1)
                logits = model(next_idx, use_cache=True)
        else:
            for _ in range(max_new_tokens):
                logits = model(idx[:, -ctx_len:], use_cache=False)
                next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)
                idx = torch.cat([idx, next_idx], dim=1)

    return idx
''',
}
VARIANTS_KV_CACHE = {"kv_cache": KV_CACHE}


VARIANTS = {**VARIANTS_ATTENTION, **VARIANTS_KV_CACHE}
Alternative = partial(banks.Alternative, VARIANTS)


# whole submissions whose styles are about efficient_mha, grouped_query, sliding_window, rope
ALTERNATIVES_ATTENTION = [
    Alternative("plain student: chunk(3), explicit SDPA mask, expand+reshape groups, heads in a loop, RoPE by hand"),
    Alternative("additive float masks, torch.where, SDPA with a float mask, load_state_dict transfer",
                {"efficient_mha": "float_masks"}),
    Alternative("GQA by indexing the key/value heads, the cache size on the meta device", {"grouped_query": "index"}),
    Alternative("sliding-window mask by loops, attention by SDPA with ~mask, the cache a rolled ring of window slots", {"sliding_window": "sdpa"}),
    Alternative("RoPE with complex numbers in float64 parameters, attention by SDPA", {"rope": "complex"}),
    Alternative("mixed: float masks, indexed groups, SDPA window, complex RoPE",
                {"efficient_mha": "float_masks", "grouped_query": "index", "sliding_window": "sdpa",
                 "rope": "complex"}),
    Alternative("float masks with loops for the window", {"efficient_mha": "float_masks", "sliding_window": "sdpa",
                                                        "grouped_query": "plain"}),
    Alternative("saved on Windows: UTF-8 with a byte-order mark and CRLF line endings (attention half)",
                {"rope": "complex"}, newline="\r\n", encoding="utf-8-sig"),
    Alternative("indented with tabs (attention half)", {"grouped_query": "index"}, tabs=True),
    Alternative("a coding line and a French comment first (attention half)", {"sliding_window": "sdpa"},
                coding_line="# -*- coding: utf-8 -*-"),
    Alternative("the book companion's own code: the bonus notebook's classes (heads merged into d_out), its "
                "grouped-query attention (W_key first, asserts, a non-persistent mask), its Llama RoPE (asserts)",
                {"efficient_mha": "book", "grouped_query": "book", "rope": "book"}),
]


# ----------------------------------------------------------------------------------------------
#
#
#
#
#
#
#
#
# ----------------------------------------------------------------------------------------------


# whole submissions whose styles are about kv_cache
ALTERNATIVES_KV_CACHE = [
    Alternative("KV cache: keys cached after the transpose (dim=2), the mask offset from the cache's length, "
                "generation that skips the last token's unused forward", {"kv_cache": "plain"}),
    Alternative("KV cache preallocated for context_length tokens and filled by slices; positions sliced from "
                "pos_emb.weight; generation into a preallocated tensor", {"kv_cache": "prealloc"}),
    Alternative("KV cache as lists of chunks; positions from the cache's length (no current_pos); blocks in an "
                "nn.Sequential looped over; calls by keyword; generation by softmax and topk", {"kv_cache": "lists"}),
    Alternative("KV cache on a subclass of my chapter-3 MultiHeadAttention, scaled_dot_product_attention with an "
                "explicit boolean mask (True attends)", {"kv_cache": "subclass"}),
    Alternative("KV cache in einsum, a float lower-triangle mask, the offset from cache_k's length, F.dropout, "
                "generation feeding idx[:, -1:]", {"kv_cache": "einsum"}),
    Alternative("KV cache, saved on Windows and indented with tabs", {"kv_cache": "plain"}, newline="\r\n",
                tabs=True),
    Alternative("KV cache as the book companion writes it: a non-persistent mask, ptr_current_pos, a generation "
                "that takes context_size and use_cache", {"kv_cache": "book"}),
]


ALTERNATIVES = ALTERNATIVES_ATTENTION + ALTERNATIVES_KV_CACHE
