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
        raise NotImplementedError("MultiHeadAttention.__init__: replace this line with your code")

    def forward(self, x, use_cache=False):
        raise NotImplementedError("MultiHeadAttention.forward: replace this line with your code")

    def reset_cache(self):
        raise NotImplementedError("MultiHeadAttention.reset_cache: replace this line with your code")


class TransformerBlock(nn.Module):
    """Chapter 4's ``TransformerBlock`` (the same ``att``, ``ff``, ``norm1``, ``norm2`` and
    shortcut dropout, built from ``cfg`` in that order), with this module's
    ``MultiHeadAttention`` as ``att``.

    ``forward(x, use_cache=False)``: chapter 4's block, passing ``use_cache`` on to ``att``
    (the norms and the feed forward network work token by token: they need no cache).
    """

    def __init__(self, cfg):
        super().__init__()
        raise NotImplementedError("TransformerBlock.__init__: replace this line with your code")

    def forward(self, x, use_cache=False):
        raise NotImplementedError("TransformerBlock.forward: replace this line with your code")


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
        raise NotImplementedError("GPTModel.__init__: replace this line with your code")

    def forward(self, in_idx, use_cache=False):
        raise NotImplementedError("GPTModel.forward: replace this line with your code")

    def reset_kv_cache(self):
        raise NotImplementedError("GPTModel.reset_kv_cache: replace this line with your code")


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
    raise NotImplementedError("generate_text_simple_cached: replace this line with your code")
