"""Section 4.5: the transformer block, attention and a feed forward network with shortcuts."""
import torch.nn as nn

from feed_forward import FeedForward
from layer_norm import LayerNorm
from multihead_attention import MultiHeadAttention


class TransformerBlock(nn.Module):
    """Listing 4.6: a pre-LayerNorm transformer block.

    ``cfg`` is a dict like ``GPT_CONFIG_124M`` (emb_dim, context_length, n_heads, drop_rate,
    qkv_bias). Graded structure, created in this order after a seed:
    - ``self.att``: your chapter-3 ``MultiHeadAttention(d_in=emb_dim, d_out=emb_dim,
      context_length=context_length, dropout=drop_rate, num_heads=n_heads, qkv_bias=qkv_bias)``;
    - ``self.ff = FeedForward(cfg)``; ``self.norm1`` and ``self.norm2``: ``LayerNorm(emb_dim)``;
    - one ``nn.Dropout(drop_rate)`` for the shortcuts (the book calls it ``drop_shortcut``;
      any name will do), and no other parameters.
    forward on x of shape (batch, num_tokens, emb_dim), num_tokens <= context_length:
    x = x + dropout(att(norm1(x))), then x = x + dropout(ff(norm2(x))); returns the same
    shape and leaves the caller's x unchanged. The grader runs the block with stand-ins for
    att, ff, norm1 and norm2, so only this wiring is judged here: the pieces are judged in
    their own parts (and the attention in chapter 3).
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

    def forward(self, x):
        ### BEGIN SOLUTION
        shortcut = x
        x = self.norm1(x)
        x = self.att(x)
        x = self.drop_shortcut(x)
        x = x + shortcut

        shortcut = x
        x = self.norm2(x)
        x = self.ff(x)
        x = self.drop_shortcut(x)
        return x + shortcut
        ### END SOLUTION
