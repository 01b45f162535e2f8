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
    raise NotImplementedError("feed_forward_and_attention_params: replace this line with your code")


def gpt2_config(size):
    """Exercise 4.2: the configuration of a GPT-2 model, a new dict each call.

    ``size`` is "small" (GPT_CONFIG_124M), "medium" (1,024-dimensional embeddings, 24 blocks,
    16 heads), "large" (1,280, 36, 20) or "xl" (1,600, 48, 25); every other entry as in
    GPT_CONFIG_124M. Any other size raises ValueError.
    """
    raise NotImplementedError("gpt2_config: replace this line with your code")


def gpt_parameter_count(cfg):
    """Exercise 4.2: the number of parameters ``GPTModel(cfg)`` has (an int), without
    allocating its weights: GPT-2 XL would take over 6 GB.

    Compute it from ``cfg`` (embeddings, ``n_layers`` blocks of attention, feed forward and
    two norms, the final norm, the output head), or build the model on the meta device
    (``with torch.device("meta"): ...``), which records shapes but allocates nothing.
    ``cfg["qkv_bias"]`` adds the three projections' biases. GPT_CONFIG_124M gives 163,009,536.
    """
    raise NotImplementedError("gpt_parameter_count: replace this line with your code")


def gpt_size_mb(cfg):
    """Exercise 4.2: the memory ``GPTModel(cfg)``'s parameters take in float32 (4 bytes
    each), in megabytes of 1024 * 1024 bytes, as a float (621.83... for GPT_CONFIG_124M)."""
    raise NotImplementedError("gpt_size_mb: replace this line with your code")


class TransformerBlockSeparateDropout(nn.Module):
    """Exercise 4.3: ``TransformerBlock`` with its own dropout rate for each place.

    ``cfg`` is like GPT_CONFIG_124M but has "drop_rate_attn" (passed to MultiHeadAttention as
    its dropout) and "drop_rate_shortcut" (the dropout on both shortcuts) instead of one
    "drop_rate". Otherwise exactly the graded structure and forward of TransformerBlock.
    """

    def __init__(self, cfg):
        super().__init__()
        raise NotImplementedError("TransformerBlockSeparateDropout.__init__: replace this line with your code")

    def forward(self, x):
        raise NotImplementedError("TransformerBlockSeparateDropout.forward: replace this line with your code")


class GPTModelSeparateDropout(nn.Module):
    """Exercise 4.3: ``GPTModel`` with separate dropout rates.

    ``cfg`` has "drop_rate_emb" (the dropout after the embeddings), "drop_rate_shortcut" and
    "drop_rate_attn" (for the blocks, which are ``TransformerBlockSeparateDropout(cfg)``)
    instead of "drop_rate". Otherwise exactly the graded structure and forward of GPTModel.
    """

    def __init__(self, cfg):
        super().__init__()
        raise NotImplementedError("GPTModelSeparateDropout.__init__: replace this line with your code")

    def forward(self, in_idx):
        raise NotImplementedError("GPTModelSeparateDropout.forward: replace this line with your code")
