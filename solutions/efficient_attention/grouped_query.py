"""Grouped-query attention: fewer key/value heads, each shared by a group of query heads.

While generating, a model keeps the keys and values of every earlier token of every layer (the
KV cache). With ``num_kv_groups`` key/value heads instead of ``num_heads`` that cache is
``num_heads / num_kv_groups`` times smaller, and the model barely loses quality (Llama 2 70B,
Llama 3, Qwen, Gemma use it).
"""
import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    """Causal multi-head attention whose keys and values have only ``num_kv_groups`` heads.

    head_dim = d_out // num_heads. ``num_kv_groups`` must divide ``num_heads`` (and num_heads
    d_out): otherwise the constructor raises ValueError (or AssertionError, as the book's
    ``assert`` does: either is accepted). Query heads 0 .. group_size-1 (group_size
    = num_heads // num_kv_groups) share key/value head 0, the next group_size share head 1, and
    so on (``repeat_interleave``, not ``repeat``).
    Graded structure, as chapter 3's MultiHeadAttention except for the key and value widths:
    ``W_query = nn.Linear(d_in, d_out, bias=qkv_bias)``; ``W_key`` and ``W_value``:
    ``nn.Linear(d_in, num_kv_groups * head_dim, bias=qkv_bias)``; ``out_proj = nn.Linear(d_out,
    d_out)``; ``dropout = nn.Dropout(dropout)`` on the attention weights; the causal mask as a
    buffer ``mask``; no other parameters. Their names are graded, not the order you create them
    in (the grader copies its weights in by name; the book creates W_key and W_value first).
    With num_kv_groups == num_heads it holds the same weights as chapter 3's class and computes
    the same function. forward: (batch, num_tokens, d_in) -> (batch, num_tokens, d_out),
    num_tokens <= context_length; the dropout is graded in training mode (the reference's draws
    after the same seed) and in eval mode (none).
    """

    def __init__(self, d_in, d_out, num_heads, num_kv_groups, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        ### BEGIN SOLUTION
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        if num_heads % num_kv_groups != 0:
            raise ValueError("num_kv_groups must divide num_heads")
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.group_size = num_heads // num_kv_groups
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        b, num_tokens, _ = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)

        # each key/value head serves group_size query heads in a row: k0 k0 k1 k1, not k0 k1 k0 k1
        keys = keys.repeat_interleave(self.group_size, dim=1)
        values = values.repeat_interleave(self.group_size, dim=1)

        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))

        context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)
        ### END SOLUTION


def kv_cache_bytes(cfg, batch_size=1, bytes_per_elem=2):
    """The bytes a model's KV cache takes when full, as an int, computed without allocating it.

    ``cfg`` holds ``emb_dim``, ``n_heads``, ``n_layers``, ``context_length`` and optionally
    ``n_kv_groups`` (key/value heads; absent means multi-head attention: as many as n_heads).
    Every layer keeps a key and a value vector of ``n_kv_groups * head_dim`` numbers (head_dim =
    emb_dim // n_heads) for each of ``context_length`` tokens of each of ``batch_size``
    sequences, each number ``bytes_per_elem`` bytes (2 for bf16 or fp16, 4 for fp32). The
    defaults are graded too: one sequence, 2 bytes (bf16).
    Llama-2-7B-like (emb_dim 4096, 32 heads, 32 layers, 32,768 tokens, bf16): 17,179,869,184
    bytes (17.18 GB) with multi-head attention; with 8 key/value heads (groups of 4 query heads)
    4,294,967,296 (4.29 GB), the bonus material's two figures for that model.
    """
    ### BEGIN SOLUTION
    head_dim = cfg["emb_dim"] // cfg["n_heads"]
    kv_heads = cfg.get("n_kv_groups", cfg["n_heads"])
    per_token = 2 * kv_heads * head_dim  # a key and a value
    return batch_size * cfg["context_length"] * cfg["n_layers"] * per_token * bytes_per_elem
    ### END SOLUTION
