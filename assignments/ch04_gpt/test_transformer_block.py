"""Public tests for section 4.5: the transformer block (listing 4.6).

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch
import torch.nn.functional as F

from feed_forward import FeedForward
from gpt_model import GPT_CONFIG_124M
from layer_norm import LayerNorm
from multihead_attention import MultiHeadAttention
from transformer_block import TransformerBlock
from public_tests import expect_close, expect_equal

SMALL = {"vocab_size": 50, "context_length": 8, "emb_dim": 12, "n_heads": 3, "n_layers": 2, "drop_rate": 0.0,
         "qkv_bias": False}


def test_book_block_keeps_the_shape():
    torch.manual_seed(123)
    x = torch.rand(2, 4, 768)
    block = TransformerBlock(GPT_CONFIG_124M)
    block.eval()
    with torch.no_grad():
        output = block(x)
    expect_equal(output.shape, (2, 4, 768), 'the shape of the output')
    shortcut = x + block.att(block.norm1(x))
    expect_close(output, shortcut + block.ff(block.norm2(shortcut)), 'the output: x + att(norm1(x)), then + ff(norm2(.))', atol=1e-4)


def test_pre_layernorm_and_two_shortcuts():
    torch.manual_seed(1)
    block = TransformerBlock(SMALL).eval()
    with torch.no_grad():  # non-trivial norms, so that each one's place shows
        for norm in (block.norm1, block.norm2):
            norm.scale.uniform_(0.5, 1.5)
            norm.shift.uniform_(-0.5, 0.5)
    x = torch.randn(2, 5, 12)
    before = x.clone()
    with torch.no_grad():
        out = block(x)
        h = x + block.att(block.norm1(x))
        expected = h + block.ff(block.norm2(h))
    expect_equal(x, before, "forward must not change its input")
    expect_close(out, expected, 'the output: pre-LayerNorm and two shortcuts', atol=1e-5)


def test_dropout_after_attention_and_after_the_feed_forward():
    cfg = {**SMALL, "drop_rate": 0.5}
    torch.manual_seed(2)
    block = TransformerBlock(cfg).train()
    x = torch.randn(2, 5, 12)
    torch.manual_seed(7)
    out = block(x)
    torch.manual_seed(7)  # the same draws, in the same order: attention's own dropout, then the shortcut's
    h = x + F.dropout(block.att(block.norm1(x)), 0.5)
    expected = h + F.dropout(block.ff(block.norm2(h)), 0.5)
    expect_close(out, expected, 'the output with dropout after attention and after the feed forward', atol=1e-5)


def test_graded_structure():
    cfg = {**SMALL, "qkv_bias": True, "drop_rate": 0.25}
    torch.manual_seed(3)
    block = TransformerBlock(cfg)
    assert isinstance(block.att, MultiHeadAttention) and isinstance(block.ff, FeedForward), "att is a MultiHeadAttention and ff a FeedForward"
    assert isinstance(block.norm1, LayerNorm) and isinstance(block.norm2, LayerNorm), "norm1 and norm2 are LayerNorms"
    assert block.att.W_query.weight.shape == (12, 12) and block.att.W_query.bias is not None, "qkv_bias reaches att"
    assert block.att.num_heads == 3 and block.att.mask.shape[-1] == 8 and block.att.dropout.p == 0.25, "att gets n_heads, context_length and drop_rate from the config"
    own = [n for n, _ in block.named_parameters() if not n.startswith("att.")]
    expect_equal(own, ["ff.layers.0.weight", "ff.layers.0.bias", "ff.layers.2.weight", "ff.layers.2.bias",
                   "norm1.scale", "norm1.shift", "norm2.scale", "norm2.shift"], 'own')
    # created in the book's order: the attention, then the feed forward network
    torch.manual_seed(3)
    MultiHeadAttention(12, 12, 8, 0.25, 3, qkv_bias=True)
    ff = FeedForward(cfg)
    expect_equal(block.ff.layers[0].weight, ff.layers[0].weight, 'the feed forward\'s weights, created after the attention')
    x = torch.randn(1, 3, 12)
    block(x).sum().backward()
    assert all(p.grad is not None for p in block.parameters()), "every parameter must get a gradient"
