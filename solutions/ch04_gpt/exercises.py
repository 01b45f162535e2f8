"""The chapter's exercises 4.1, 4.2 and 4.3."""
import torch
import torch.nn as nn

from feed_forward import FeedForward
from gpt_model import GPT_CONFIG_124M
from layer_norm import LayerNorm
from multihead_attention import MultiHeadAttention


def feed_forward_and_attention_params(cfg):
    """Exercise 4.1: (parameters of the feed forward module, parameters of the multi-head
    attention module) of one transformer block built from ``cfg``, as two ints.

    Count the parameters of your own ``FeedForward(cfg)`` and of the ``MultiHeadAttention``
    a ``TransformerBlock(cfg)`` builds (see transformer_block.py). For GPT_CONFIG_124M the
    feed forward module has about twice as many as the attention module.
    """
    ### BEGIN SOLUTION
    ff = FeedForward(cfg)
    att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate"],
                             cfg["n_heads"], cfg["qkv_bias"])
    return sum(p.numel() for p in ff.parameters()), sum(p.numel() for p in att.parameters())
    ### END SOLUTION


def gpt2_config(size):
    """Exercise 4.2: the configuration of a GPT-2 model, a new dict each call.

    ``size`` is "small" (GPT_CONFIG_124M), "medium" (1,024-dimensional embeddings, 24 blocks,
    16 heads), "large" (1,280, 36, 20) or "xl" (1,600, 48, 25); every other entry as in
    GPT_CONFIG_124M. Any other size raises ValueError.
    """
    ### BEGIN SOLUTION
    changes = {"small": {}, "medium": {"emb_dim": 1024, "n_layers": 24, "n_heads": 16},
               "large": {"emb_dim": 1280, "n_layers": 36, "n_heads": 20},
               "xl": {"emb_dim": 1600, "n_layers": 48, "n_heads": 25}}
    if size not in changes:
        raise ValueError(f"unknown GPT-2 size {size!r}: small, medium, large or xl")
    return {**GPT_CONFIG_124M, **changes[size]}
    ### END SOLUTION


def gpt_parameter_count(cfg):
    """Exercise 4.2: the number of parameters ``GPTModel(cfg)`` has (an int), without
    allocating its weights: GPT-2 XL would take over 6 GB.

    Compute it from ``cfg`` (embeddings, ``n_layers`` blocks of attention, feed forward and
    two norms, the final norm, the output head), or build the model on the meta device
    (``with torch.device("meta"): ...``), which records shapes but allocates nothing.
    ``cfg["qkv_bias"]`` adds the three projections' biases. GPT_CONFIG_124M gives 163,009,536.
    """
    ### BEGIN SOLUTION
    emb, vocab, ctx = cfg["emb_dim"], cfg["vocab_size"], cfg["context_length"]
    attention = 4 * emb * emb + emb + (3 * emb if cfg["qkv_bias"] else 0)  # W_query, W_key, W_value, out_proj
    feed_forward = emb * 4 * emb + 4 * emb + 4 * emb * emb + emb
    norm = 2 * emb                                                        # scale and shift
    block = attention + feed_forward + 2 * norm
    return vocab * emb + ctx * emb + cfg["n_layers"] * block + norm + emb * vocab
    ### END SOLUTION


def gpt_size_mb(cfg):
    """Exercise 4.2: the memory ``GPTModel(cfg)``'s parameters take in float32 (4 bytes
    each), in megabytes of 1024 * 1024 bytes, as a float (621.83... for GPT_CONFIG_124M)."""
    ### BEGIN SOLUTION
    return gpt_parameter_count(cfg) * 4 / (1024 * 1024)
    ### END SOLUTION


class TransformerBlockSeparateDropout(nn.Module):
    """Exercise 4.3: ``TransformerBlock`` with its own dropout rate for each place.

    ``cfg`` is like GPT_CONFIG_124M but has "drop_rate_attn" (passed to MultiHeadAttention as
    its dropout) and "drop_rate_shortcut" (the dropout on both shortcuts) instead of one
    "drop_rate". Otherwise exactly the graded structure and forward of TransformerBlock.
    """

    def __init__(self, cfg):
        super().__init__()
        ### BEGIN SOLUTION
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            context_length=cfg["context_length"],
            num_heads=cfg["n_heads"],
            dropout=cfg["drop_rate_attn"],
            qkv_bias=cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate_shortcut"])
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))
        ### END SOLUTION


class GPTModelSeparateDropout(nn.Module):
    """Exercise 4.3: ``GPTModel`` with separate dropout rates.

    ``cfg`` has "drop_rate_emb" (the dropout after the embeddings), "drop_rate_shortcut" and
    "drop_rate_attn" (for the blocks, which are ``TransformerBlockSeparateDropout(cfg)``)
    instead of "drop_rate". Otherwise exactly the graded structure and forward of GPTModel.
    """

    def __init__(self, cfg):
        super().__init__()
        ### BEGIN SOLUTION
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate_emb"])
        self.trf_blocks = nn.Sequential(
            *[TransformerBlockSeparateDropout(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        ### END SOLUTION

    def forward(self, in_idx):
        ### BEGIN SOLUTION
        positions = torch.arange(in_idx.shape[1], device=in_idx.device)
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(positions))
        return self.out_head(self.final_norm(self.trf_blocks(x)))
        ### END SOLUTION
