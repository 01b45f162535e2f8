"""Public tests of the KV cache: the cache changes the work, never the answer.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch
from kv_cache import (
    GPTModel,
    MultiHeadAttention,
    TransformerBlock,
    generate_text_simple_cached,
)
from multihead_attention import MultiHeadAttention as ChapterThreeAttention
from public_tests import expect_close, expect_equal

CFG = {"vocab_size": 50, "context_length": 12, "emb_dim": 12, "n_heads": 3, "n_layers": 2, "drop_rate": 0.0,
       "qkv_bias": True}


def copy_parameters(into, source):
    """source's parameters copied into ``into`` by name; the buffers stay each module's own (the book's
    KV-cache code registers its mask with persistent=False; a float mask is not chapter 3's bool one)."""
    theirs = dict(source.named_parameters())
    expect_equal(sorted(n for n, _ in into.named_parameters()), sorted(theirs), 'the parameters\' names')
    with torch.no_grad():
        for name, param in into.named_parameters():
            param.copy_(theirs[name])


def in_pieces(module, x, sizes):
    """x's tokens fed in pieces of ``sizes`` with use_cache=True, the outputs concatenated."""
    outs, start = [], 0
    with torch.no_grad():
        for size in sizes:
            outs.append(module(x[:, start:start + size], use_cache=True))
            start += size
    return torch.cat(outs, dim=1)


def test_without_the_cache_it_is_chapter_3s_attention():
    torch.manual_seed(1)
    att = MultiHeadAttention(7, 12, 10, 0.0, 3).eval()
    book = ChapterThreeAttention(7, 12, 10, 0.0, 3).eval()
    copy_parameters(book, att)
    x, x2 = torch.randn(2, 6, 7), torch.randn(3, 10, 7)
    with torch.no_grad():
        expect_close(att(x), book(x), 'the output without the cache, beside chapter 3\'s', atol=1e-6)
        att.reset_cache()
        att(x[:, :3], use_cache=True)
        expect_close(att(x2, use_cache=False), book(x2), 'use_cache=False after a cached call, beside chapter 3\'s', atol=1e-6)  # no cache read
        fourth = att(x[:, 3:4], use_cache=True)  # ... and none changed
    expect_close(fourth, book(x[:, :4])[:, 3:], 'the fourth token fed alone after three cached ones', atol=1e-6)


def test_dropout_only_in_training():
    """Chapter 3's dropout on the attention weights: none in eval mode, in training mode the same
    draws as your chapter-3 MultiHeadAttention after the same seed."""
    torch.manual_seed(7)
    att = MultiHeadAttention(7, 12, 10, 0.5, 3)
    book = ChapterThreeAttention(7, 12, 10, 0.5, 3)
    copy_parameters(book, att)
    x = torch.randn(2, 6, 7)
    with torch.no_grad():
        expect_close(att.eval()(x), book.eval()(x), 'the output in eval mode, beside chapter 3\'s', atol=1e-6)
        att.train(), book.train()
        torch.manual_seed(5)
        yours = att(x)
        torch.manual_seed(5)  # the same draws: one dropout mask over the (b, heads, n, n) attention weights
        expect_close(yours, book(x), 'the output in training mode, same dropout draws, beside chapter 3\'s', atol=1e-6)


def test_attention_in_pieces_gives_the_rows_of_the_whole():
    torch.manual_seed(2)
    att = MultiHeadAttention(5, 8, 11, 0.0, 2, qkv_bias=True).eval()
    x, x2 = torch.randn(2, 7, 5), torch.randn(2, 4, 5)
    with torch.no_grad():
        whole, whole2 = att(x), att(x2)
    att.reset_cache()
    expect_close(in_pieces(att, x, [3, 1, 1, 2]), whole, 'in_pieces(att, x, [3, 1, 1, 2])', atol=1e-6)
    att.reset_cache()  # a new sequence
    expect_close(in_pieces(att, x2, [2, 1, 1]), whole2, 'in_pieces(att, x2, [2, 1, 1])', atol=1e-6)


def test_the_block_passes_use_cache_on():
    torch.manual_seed(3)
    block = TransformerBlock(CFG).eval()
    x = torch.randn(2, 7, CFG["emb_dim"])
    with torch.no_grad():
        whole = block(x)
    block.att.reset_cache()
    expect_close(in_pieces(block, x, [3, 1, 1, 2]), whole, 'in_pieces(block, x, [3, 1, 1, 2])', atol=1e-5)


def test_the_model_goes_on_from_the_positions_fed_and_resets():
    torch.manual_seed(4)
    model = GPTModel(CFG).eval()
    idx, idx2 = torch.randint(0, 50, (2, 5)), torch.randint(0, 50, (2, 4))
    with torch.no_grad():
        whole, whole2 = model(idx), model(idx2)
    model.reset_kv_cache()
    expect_close(in_pieces(model, idx, [3, 1, 1]), whole, 'in_pieces(model, idx, [3, 1, 1])', atol=1e-5)
    model.reset_kv_cache()
    expect_close(in_pieces(model, idx2, [2, 1, 1]), whole2, 'in_pieces(model, idx2, [2, 1, 1])', atol=1e-5)
    with torch.no_grad():  # without the cache: positions from 0, the cache left alone
        expect_close(model(idx2, use_cache=False), whole2, 'model(idx2, use_cache=False)', atol=1e-5)


def greedy_without_cache(model, idx, max_new_tokens):
    """Chapter 4's generate_text_simple: the whole sequence through the model at every step."""
    with torch.no_grad():
        for _ in range(max_new_tokens):
            idx = torch.cat([idx, model(idx)[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
    return idx


def test_cached_generation_gives_the_same_tokens_again_and_again():
    torch.manual_seed(5)
    model = GPTModel(CFG).eval()
    first, second = torch.randint(0, 50, (2, 3)), torch.randint(0, 50, (2, 3))
    expected = greedy_without_cache(model, first, 3)
    out = generate_text_simple_cached(model, first, 3)
    expect_equal(out, expected, 'the cached generation beside the one without a cache')
    expect_equal(generate_text_simple_cached(model, second, 3), greedy_without_cache(model, second, 3), 'generate_text_simple_cached(model, second, 3)')
    expect_equal(generate_text_simple_cached(model, first, 3), expected, "the cache is reset each call")


def test_after_the_prompt_each_step_feeds_one_token():
    torch.manual_seed(6)
    model = GPTModel(CFG).eval()
    idx = torch.randint(0, 50, (2, 4))
    seen = []
    def hook(module, args, kwargs, output):  # x passed by position or by keyword
        seen.append(next(v for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor)).shape)
    hook = model.trf_blocks[0].att.register_forward_hook(hook, with_kwargs=True)
    try:
        out = generate_text_simple_cached(model, idx, 6)
    finally:
        hook.remove()
    expect_equal(out, greedy_without_cache(model, idx, 6), 'the cached generation beside the one without a cache')
    expect_equal(seen[0], (2, 4, CFG["emb_dim"]), "the whole prompt in one call first")
    assert len(seen) - 1 in (5, 6) and all(shape == (2, 1, CFG["emb_dim"]) for shape in seen[1:]), seen


def test_the_cache_stays_out_of_the_state_dict():
    model = GPTModel(CFG).eval()
    before = sorted(model.state_dict())
    model.reset_kv_cache()
    with torch.no_grad():
        model(torch.randint(0, 50, (2, 4)), use_cache=True)
    expect_equal(sorted(model.state_dict()), before, 'the state_dict\'s keys after a cached call')
