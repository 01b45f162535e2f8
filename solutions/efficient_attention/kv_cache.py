"""The KV cache (chapter 4's bonus material): generation that feeds one new token per step.

Without a cache, every step of ``generate_text_simple`` runs the whole sequence through the
model again, although the keys and values of the earlier tokens never change (the mask keeps
each token from seeing later ones). A cache keeps them: after the prompt, each step feeds only
the new token, whose query attends to the cached keys and values plus its own.

This module is chapter 4's GPT again, with a cache: your chapter-3 attention rewritten to keep
one, the block and the model passing ``use_cache`` down, and a generation loop that uses it.
The layer norm and the feed forward network are your chapter-4 ones, imported as the book
does. The grader runs the model with its own linear maps in place of the norms and the feed
forward networks (as chapter 4 does), so only the cache, the attention and the wiring count.
"""
import torch
import torch.nn as nn

from feed_forward import FeedForward
from layer_norm import LayerNorm


class MultiHeadAttention(nn.Module):
    """Chapter 3's ``MultiHeadAttention`` (same arguments, same ``W_query``, ``W_key``,
    ``W_value``, ``out_proj``, ``dropout`` and causal ``mask`` buffer, persistent or not: the
    book's KV-cache code registers it with ``persistent=False``) with a KV cache. The dropout on
    the attention weights is chapter 3's: graded in training mode without the cache (the
    reference's draws after the same seed) and in eval mode (none).

    ``forward(x, use_cache=False)``, x of shape (b, num_tokens, d_in):
    - ``use_cache=False``: exactly chapter 3's attention over x's tokens; the cache is neither
      read nor changed.
    - ``use_cache=True``: x holds the *next* tokens of a sequence whose earlier tokens' keys and
      values are in the cache (none after ``reset_cache()``). Their keys and values are appended
      to the cache, and each new token attends to every cached token and to the new ones up to
      itself. So feeding a sequence in pieces (the prompt, then one token at a time, or any
      chunks) gives, piece by piece, the rows of the uncached output of the whole sequence.
      The mask row of a new token is its position in the sequence, not its index in x.
    - ``reset_cache()`` empties the cache: the next cached call starts a new sequence.
    The cache is kept in non-persistent buffers ``cache_k`` and ``cache_v`` (created empty,
    e.g. ``register_buffer("cache_k", None, persistent=False)``): they move with ``.to(device)``
    but stay out of the ``state_dict`` (graded: the state_dict after cached calls holds the same
    names as before). A sequence fits in ``context_length`` tokens.
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
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
        # the cache: keys and values of the tokens seen so far, (b, tokens, num_heads, head_dim)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.ptr_current_pos = 0  # the position in the sequence of the next token fed
        ### END SOLUTION

    def forward(self, x, use_cache=False):
        ### BEGIN SOLUTION
        b, num_tokens, d_in = x.shape
        keys_new = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim)
        values_new = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim)

        if use_cache:
            if self.cache_k is None:
                self.cache_k, self.cache_v = keys_new, values_new
            else:
                # the tokens' dimension grows
                self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)
                self.cache_v = torch.cat([self.cache_v, values_new], dim=1)
            keys, values = self.cache_k, self.cache_v
        else:
            keys, values = keys_new, values_new

        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)

        # the new tokens are rows ptr_current_pos.. of the whole sequence's mask
        num_tokens_k = keys.shape[-2]
        if use_cache:
            start = self.ptr_current_pos
            self.ptr_current_pos += num_tokens
        else:
            start = 0
        mask_bool = self.mask.bool()[start:start + num_tokens, :num_tokens_k]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)
        ### END SOLUTION

    def reset_cache(self):
        ### BEGIN SOLUTION
        self.cache_k, self.cache_v = None, None
        self.ptr_current_pos = 0
        ### END SOLUTION


class TransformerBlock(nn.Module):
    """Chapter 4's ``TransformerBlock`` (the same ``att``, ``ff``, ``norm1``, ``norm2`` and
    shortcut dropout, built from ``cfg`` in that order), with this module's
    ``MultiHeadAttention`` as ``att``.

    ``forward(x, use_cache=False)``: chapter 4's block, passing ``use_cache`` on to ``att``
    (the norms and the feed forward network work token by token: they need no cache).
    """

    def __init__(self, cfg):
        super().__init__()
        ### BEGIN SOLUTION
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            context_length=cfg["context_length"],
            num_heads=cfg["n_heads"],
            dropout=cfg["drop_rate"],
            qkv_bias=cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])
        ### END SOLUTION

    def forward(self, x, use_cache=False):
        ### BEGIN SOLUTION
        shortcut = x
        x = self.norm1(x)
        x = self.att(x, use_cache=use_cache)
        x = self.drop_shortcut(x)
        x = x + shortcut

        shortcut = x
        x = self.norm2(x)
        x = self.ff(x)
        x = self.drop_shortcut(x)
        return x + shortcut
        ### END SOLUTION


class GPTModel(nn.Module):
    """Chapter 4's ``GPTModel`` (``tok_emb``, ``pos_emb``, ``drop_emb``, ``trf_blocks``,
    ``final_norm``, ``out_head``, built from ``cfg`` in that order) with this module's
    ``TransformerBlock``s. ``trf_blocks`` holds ``n_layers`` blocks, ``trf_blocks[i]`` being
    block i (an ``nn.ModuleList``, or an ``nn.Sequential`` that you loop over yourself: calling
    a Sequential cannot pass ``use_cache`` on).

    ``forward(in_idx, use_cache=False)``, in_idx of shape (batch, num_tokens):
    - ``use_cache=False``: chapter 4's model, positions 0..num_tokens-1;
    - ``use_cache=True``: in_idx holds the next tokens of the sequence being cached, so their
      positions go on from the tokens already fed (the book counts them in ``current_pos``):
      a prompt of 5 tokens gets positions 0..4, the token fed after it position 5. Every block
      gets ``use_cache=True``. Returns the logits of the tokens fed, (batch, num_tokens, vocab).
    ``reset_kv_cache()`` resets every block's attention cache and the positions: the next cached
    call starts a new sequence at position 0.
    """

    def __init__(self, cfg):
        super().__init__()
        ### BEGIN SOLUTION
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.ModuleList([TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        self.current_pos = 0  # the position of the next token fed with use_cache=True
        ### END SOLUTION

    def forward(self, in_idx, use_cache=False):
        ### BEGIN SOLUTION
        batch_size, seq_len = in_idx.shape
        tok_embeds = self.tok_emb(in_idx)
        if use_cache:
            pos_ids = torch.arange(self.current_pos, self.current_pos + seq_len, device=in_idx.device)
            self.current_pos += seq_len
        else:
            pos_ids = torch.arange(seq_len, device=in_idx.device)
        x = tok_embeds + self.pos_emb(pos_ids)
        x = self.drop_emb(x)
        for block in self.trf_blocks:
            x = block(x, use_cache=use_cache)
        x = self.final_norm(x)
        return self.out_head(x)
        ### END SOLUTION

    def reset_kv_cache(self):
        ### BEGIN SOLUTION
        for block in self.trf_blocks:
            block.att.reset_cache()
        self.current_pos = 0
        ### END SOLUTION


def generate_text_simple_cached(model, idx, max_new_tokens):
    """Chapter 4's greedy ``generate_text_simple`` with the cache: the same tokens, less work.

    ``model``: this module's ``GPTModel``; ``idx``: (batch, num_tokens) prompt ids, with
    num_tokens + max_new_tokens <= the model's context_length. Without gradients: reset the
    model's cache first (a second call starts afresh and gives the same text), feed the whole
    prompt once with ``use_cache=True``, then, for each new token, take the argmax of the
    logits at the last position fed, append it, and feed only that one token (batch, 1) with
    ``use_cache=True``. (Feeding the last new token too, as the book does, or stopping before
    it, are both fine.) Returns a new (batch, num_tokens + max_new_tokens) tensor that starts
    with ``idx``: token for token what ``generate_text_simple`` gives on the same model.
    """
    ### BEGIN SOLUTION
    with torch.no_grad():
        model.reset_kv_cache()
        logits = model(idx, use_cache=True)
        for _ in range(max_new_tokens):
            next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, next_idx], dim=1)
            logits = model(next_idx, use_cache=True)
    return idx
    ### END SOLUTION
