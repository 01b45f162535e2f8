"""Section 4.6: the GPT model, token and position embeddings, transformer blocks, output head."""
import torch
import torch.nn as nn

from layer_norm import LayerNorm
from transformer_block import TransformerBlock

# GPT-2 small ("124M"): the configuration the chapter builds.
GPT_CONFIG_124M = {
    "vocab_size": 50257,     # vocabulary size of the GPT-2 tokenizer
    "context_length": 1024,  # the most tokens the model reads at once
    "emb_dim": 768,          # embedding dimension
    "n_heads": 12,           # attention heads
    "n_layers": 12,          # transformer blocks
    "drop_rate": 0.1,        # dropout rate
    "qkv_bias": False,       # bias in the query, key and value projections
}


class GPTModel(nn.Module):
    """Listing 4.7: the GPT architecture.

    Graded structure, created in this order after a seed (the book's numbers depend on it):
    ``tok_emb = nn.Embedding(vocab_size, emb_dim)``, ``pos_emb = nn.Embedding(context_length,
    emb_dim)``, ``drop_emb = nn.Dropout(drop_rate)``, ``trf_blocks``: an ``nn.Sequential`` of
    ``n_layers`` distinct ``TransformerBlock(cfg)`` (a loop or a comprehension; not one block
    repeated), ``final_norm = LayerNorm(emb_dim)``, ``out_head = nn.Linear(emb_dim,
    vocab_size, bias=False)``; no other parameters.
    forward(in_idx), in_idx of shape (batch, num_tokens) with num_tokens <= context_length:
    token embeddings plus the position embeddings of positions 0..num_tokens-1, dropout,
    the blocks in order, the final norm, the output head; returns logits of shape (batch,
    num_tokens, vocab_size) for every position, and leaves in_idx unchanged. The grader runs the model with stand-ins for
    the blocks and the final norm, so only this wiring is judged here.
    """

    def __init__(self, cfg):
        super().__init__()
        raise NotImplementedError("GPTModel.__init__: replace this line with your code")

    def forward(self, in_idx):
        raise NotImplementedError("GPTModel.forward: replace this line with your code")
