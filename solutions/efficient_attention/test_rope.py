"""Public tests of rotary position embeddings.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import math

import pytest
import torch

from multihead_attention import MultiHeadAttention
from rope import MultiHeadAttentionRoPE, apply_rope, compute_rope_params
from public_tests import expect_close, expect_equal


def test_rope_params_values():
    cos, sin = compute_rope_params(head_dim=4, theta_base=100, context_length=3)
    assert cos.shape == sin.shape == (3, 4), "cos and sin are context_length x head_dim"
    # frequencies 100 ** (-0/4) = 1 and 100 ** (-2/4) = 0.1; position 2 turns them by 2 and 0.2
    expect_close(cos[2], torch.tensor([math.cos(2), math.cos(0.2), math.cos(2), math.cos(0.2)]), 'cos[2]')
    expect_close(sin[2], torch.tensor([math.sin(2), math.sin(0.2), math.sin(2), math.sin(0.2)]), 'sin[2]')
    assert torch.equal(cos[0], torch.ones(4)) and torch.equal(sin[0], torch.zeros(4)), "position 0 is not turned: cos 1, sin 0"


def test_rope_params_defaults_and_odd_head_dim():
    cos, sin = compute_rope_params(16)
    assert cos.shape == (4096, 16) and cos.dtype == torch.float32, "the defaults: context_length 4096, float32"
    with pytest.raises((ValueError, AssertionError)):  # ValueError, or the book's assert
        compute_rope_params(7)


def test_apply_rope_rotates_the_halves():
    cos, sin = compute_rope_params(4, theta_base=100, context_length=8)
    x = torch.tensor([1.0, 2.0, 3.0, 4.0]).view(1, 1, 1, 4)
    out = apply_rope(x, cos, sin, offset=2)  # the token stands at position 2
    a, b = 2.0, 0.2
    expected = torch.tensor([1 * math.cos(a) - 3 * math.sin(a), 2 * math.cos(b) - 4 * math.sin(b),
                             3 * math.cos(a) + 1 * math.sin(a), 4 * math.cos(b) + 2 * math.sin(b)])
    expect_close(out.flatten(), expected, 'apply_rope of [1, 2, 3, 4] at position 2', atol=1e-6)


def test_apply_rope_keeps_lengths_and_depends_only_on_distance():
    cos, sin = compute_rope_params(8, context_length=64)
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)

    def score(m, n):
        return (apply_rope(q, cos, sin, offset=m) * apply_rope(k, cos, sin, offset=n)).sum()
    expect_close(apply_rope(q, cos, sin, offset=37).norm(), q.norm(), 'the length of a rotated query beside the original\'s')
    expect_close(score(5, 2), score(45, 42), 'the score at positions 5 and 2 beside 45 and 42', atol=1e-5)
    assert not torch.allclose(score(5, 2), score(5, 4), atol=1e-3), "a different distance gives a different score"


def test_apply_rope_keeps_the_dtype():
    cos, sin = compute_rope_params(8, context_length=12)  # float32 tables
    x = torch.randn(2, 3, 5, 8)
    for dtype in (torch.bfloat16, torch.float64):
        out = apply_rope(x.to(dtype), cos, sin, offset=4)
        expect_equal(out.dtype, dtype, f'the dtype of apply_rope on a {dtype} x')
        expect_close(out.float(), apply_rope(x, cos, sin, offset=4), f'apply_rope on a {dtype} x, beside a float32 one',
                     atol=3e-2, rtol=3e-2)


def test_offset_is_the_position_of_the_first_token():
    cos, sin = compute_rope_params(6, context_length=20)
    x = torch.randn(2, 3, 7, 6)
    whole = apply_rope(x, cos, sin)
    expect_close(apply_rope(x[:, :, 4:], cos, sin, offset=4), whole[:, :, 4:], 'apply_rope(x[:, :, 4:], cos, sin, offset=4)')


def by_hand(att, x, dropout=0.0):
    """MultiHeadAttentionRoPE(d_in, 8, 2, ...)'s output worked out step by step from its weights (head_dim 4),
    the dropout (in training mode) on the attention weights."""
    b, n, _ = x.shape
    q = att.W_query(x).view(b, n, 2, 4).transpose(1, 2)
    k = att.W_key(x).view(b, n, 2, 4).transpose(1, 2)
    v = att.W_value(x).view(b, n, 2, 4).transpose(1, 2)
    cos, sin = compute_rope_params(4, context_length=10)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    scores = (q @ k.transpose(2, 3)).masked_fill(torch.ones(n, n).triu(1).bool(), -torch.inf)
    weights = torch.nn.functional.dropout(torch.softmax(scores / 2, dim=-1), dropout)
    return att.out_proj((weights @ v).transpose(1, 2).reshape(b, n, 8))


def test_rope_attention():
    torch.manual_seed(123)
    att = MultiHeadAttentionRoPE(6, 8, 2, 10, qkv_bias=True).eval()
    expect_equal([n for n, _ in att.named_parameters()], ["W_query.weight", "W_query.bias", "W_key.weight", "W_key.bias",
                                                      "W_value.weight", "W_value.bias", "out_proj.weight",
                                                      "out_proj.bias"], '[n for n, _ in att.named_parameters()]')
    expect_equal(att.cos, compute_rope_params(4, context_length=10)[0], 'the cos buffer (context_length rows)')
    assert {"mask", "cos", "sin"} <= set(dict(att.named_buffers())), "register mask, cos and sin with register_buffer"
    x = torch.randn(2, 9, 6)
    with torch.no_grad():
        expect_close(att(x), by_hand(att, x), 'the output of MultiHeadAttentionRoPE', atol=1e-6)
        mha = MultiHeadAttention(6, 8, 10, 0.0, 2, qkv_bias=True).eval()
        mha.load_state_dict(att.state_dict(), strict=False)
        assert not torch.allclose(att(x), mha(x)), "RoPE changes the scores"


def test_rope_attention_dropout_only_in_training():
    torch.manual_seed(1)
    att = MultiHeadAttentionRoPE(6, 8, 2, 10, dropout=0.5)
    x = torch.randn(2, 7, 6)
    with torch.no_grad():
        att.eval()
        expect_close(att(x), by_hand(att, x), 'the output in eval mode (no dropout)', atol=1e-6)
        att.train()
        torch.manual_seed(5)
        yours = att(x)
        torch.manual_seed(5)  # the same draws: one dropout mask over the (b, heads, n, n) attention weights
        expect_close(yours, by_hand(att, x, dropout=0.5), 'the output in training mode, same dropout draws', atol=1e-6)
