'''A bank of correct efficient-attention submissions written in other students' styles
(see tests/banks.py and tests/ch04_gpt/alternatives.py for the pattern).

Module variants (style -> source) are written once and combined into ``ALTERNATIVES``; the
"plain" variant of each module is a straightforward student's own code. Two halves, kept apart
so that the parts can be written side by side.
'''
from functools import partial

import banks


# efficient_mha, grouped_query, sliding_window, rope: {module: {style: source}}
VARIANTS_ATTENTION = {
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
}
VARIANTS_KV_CACHE = {"kv_cache": KV_CACHE}


VARIANTS = {**VARIANTS_ATTENTION, **VARIANTS_KV_CACHE}
Alternative = partial(banks.Alternative, VARIANTS)


# whole submissions whose styles are about efficient_mha, grouped_query, sliding_window, rope
ALTERNATIVES_ATTENTION = [
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
]


ALTERNATIVES = ALTERNATIVES_ATTENTION + ALTERNATIVES_KV_CACHE
