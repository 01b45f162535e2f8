"""Public tests for exercises 4.1 to 4.3.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import pytest
import torch

from exercises import (GPTModelSeparateDropout, TransformerBlockSeparateDropout, feed_forward_and_attention_params,
                       gpt2_config, gpt_parameter_count, gpt_size_mb)
from gpt_model import GPT_CONFIG_124M, GPTModel
from public_tests import expect_close, expect_equal

TINY = {"vocab_size": 30, "context_length": 6, "emb_dim": 8, "n_heads": 2, "n_layers": 2, "drop_rate": 0.0,
        "qkv_bias": False}


def test_4_1_feed_forward_has_twice_the_attention_parameters():
    ff, att = feed_forward_and_attention_params(GPT_CONFIG_124M)
    expect_equal((ff, att), (4_722_432, 2_360_064), 'feed_forward_and_attention_params(GPT_CONFIG_124M)')
    expect_equal(feed_forward_and_attention_params({**TINY, "qkv_bias": True}), (8 * 32 + 32 + 32 * 8 + 8, 4 * 64 + 8 + 3 * 8), 'feed_forward_and_attention_params({**TINY, "qkv_bias": True})')


def test_4_2_configs():
    expect_equal(gpt2_config("small"), GPT_CONFIG_124M, 'gpt2_config("small")')
    for size, (emb_dim, n_layers, n_heads) in {"medium": (1024, 24, 16), "large": (1280, 36, 20),
                                               "xl": (1600, 48, 25)}.items():
        expect_equal(gpt2_config(size), {**GPT_CONFIG_124M, "emb_dim": emb_dim, "n_layers": n_layers, "n_heads": n_heads}, 'gpt2_config(size)')
    assert gpt2_config("medium") is not gpt2_config("medium"), "a new dict each call"
    with pytest.raises(ValueError):
        gpt2_config("huge")


def test_4_2_parameter_counts_and_sizes():
    expect_equal(gpt_parameter_count(GPT_CONFIG_124M), 163_009_536, 'gpt_parameter_count(GPT_CONFIG_124M)')
    expect_equal(f"{gpt_size_mb(GPT_CONFIG_124M):.2f}", "621.83", 'f"{gpt_size_mb(GPT_CONFIG_124M):.2f}"')
    counts = {size: gpt_parameter_count(gpt2_config(size)) for size in ("medium", "large", "xl")}
    expect_equal(counts, {"medium": 406_212_608, "large": 838_220_800, "xl": 1_637_792_000}, 'the parameter counts of GPT-2 medium, large and xl')
    expect_equal(f"{gpt_size_mb(gpt2_config('xl')):.2f}", "6247.68", 'f"{gpt_size_mb(gpt2_config(\'xl\')):.2f}"')
    for cfg in (TINY, {**TINY, "qkv_bias": True, "n_layers": 3}):  # your GPTModel, built for real, agrees
        expect_equal(gpt_parameter_count(cfg), sum(p.numel() for p in GPTModel(cfg).parameters()), 'gpt_parameter_count(cfg) beside your GPTModel(cfg)\'s own count')


def separate(emb, shortcut, attn):
    cfg = {k: v for k, v in TINY.items() if k != "drop_rate"}
    return {**cfg, "drop_rate_emb": emb, "drop_rate_shortcut": shortcut, "drop_rate_attn": attn}


def test_4_3_each_dropout_rate_in_its_place():
    torch.manual_seed(8)
    model = GPTModelSeparateDropout(separate(0.1, 0.2, 0.3))
    expect_equal(model.drop_emb.p, 0.1, 'drop_emb.p (drop_rate_emb)')
    for block in model.trf_blocks:
        assert isinstance(block, TransformerBlockSeparateDropout), "trf_blocks holds TransformerBlockSeparateDropout blocks"
        expect_equal(block.att.dropout.p, 0.3, 'att.dropout.p (drop_rate_attn)')
        others = {m.p for name, m in block.named_modules() if isinstance(m, torch.nn.Dropout) and
                  not name.startswith("att") and not name.startswith("ff")}
        expect_equal(others, {0.2}, "the shortcut dropout uses drop_rate_shortcut")


def test_4_3_same_model_as_gptmodel_when_the_rates_agree():
    torch.manual_seed(9)
    plain = GPTModel(TINY).eval()
    torch.manual_seed(9)
    model = GPTModelSeparateDropout(separate(0.0, 0.0, 0.0)).eval()
    expect_equal([n for n, _ in model.named_parameters()], [n for n, _ in plain.named_parameters()], 'the parameter names beside GPTModel\'s')
    idx = torch.tensor([[1, 2, 3], [4, 5, 6]])
    with torch.no_grad():
        expect_close(model(idx), plain(idx), 'the logits beside GPTModel\'s with the same weights', atol=1e-6)


def test_4_3_embedding_dropout_only():
    torch.manual_seed(10)
    model = GPTModelSeparateDropout(separate(0.5, 0.0, 0.0)).train()
    idx = torch.tensor([[1, 2, 3, 4]])
    torch.manual_seed(11)
    out = model(idx)
    torch.manual_seed(11)
    with torch.no_grad():
        x = torch.nn.functional.dropout(model.tok_emb(idx) + model.pos_emb(torch.arange(4)), 0.5)
        expected = model.out_head(model.final_norm(model.trf_blocks(x)))
    expect_close(out, expected, 'the logits with dropout on the embeddings only', atol=1e-6)
