"""The chapter's exercises 3.1, 3.2 and 3.3."""
import torch

from multihead_attention import MultiHeadAttention, MultiHeadAttentionWrapper


def transfer_weights_v2_to_v1(sa_v2, sa_v1):
    """Exercise 3.1: copy the weights of a ``SelfAttention_v2`` into a ``SelfAttention_v1``.

    ``nn.Linear`` stores its weight as (d_out, d_in) and computes x @ weight.T, while
    v1 computes x @ W with W of shape (d_in, d_out). Afterwards both modules give the
    same output. Modifies ``sa_v1`` in place: the grader reads the weights it holds afterwards.
    """
    raise NotImplementedError("transfer_weights_v2_to_v1: replace this line with your code")


def build_2d_output_wrapper(d_in, context_length, dropout=0.0):
    """Exercise 3.2: a two-head ``MultiHeadAttentionWrapper`` whose context vectors are 2-D.

    Change only the constructor's arguments, not the class.
    """
    raise NotImplementedError("build_2d_output_wrapper: replace this line with your code")


def build_gpt2_small_mha(dropout=0.0):
    """Exercise 3.3: a ``MultiHeadAttention`` the size of GPT-2 small.

    12 heads, 768-dimensional inputs and outputs, a context of 1,024 tokens (the mask
    buffer's last two dimensions); ``dropout`` is passed on. No bias in the query, key and
    value layers (``qkv_bias=False``, the book's default and GPT_CONFIG_124M's in chapter 4),
    so the module has 2,360,064 parameters.
    """
    raise NotImplementedError("build_gpt2_small_mha: replace this line with your code")
