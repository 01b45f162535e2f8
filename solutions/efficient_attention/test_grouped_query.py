"""Public tests of grouped-query attention and the KV cache's size.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import pytest
import torch

from grouped_query import GroupedQueryAttention, kv_cache_bytes
from multihead_attention import MultiHeadAttention
from public_tests import expect_close, expect_equal

LLAMA_2_7B_LIKE = {"emb_dim": 4096, "n_heads": 32, "n_layers": 32, "context_length": 32768}


def copy_parameters(into, source):
    """source's parameters copied into ``into`` by name; the buffers stay each module's own (a mask
    may be non-persistent, as the book's KV-cache code registers it, or float where the other's is bool)."""
    theirs = dict(source.named_parameters())
    expect_equal(sorted(n for n, _ in into.named_parameters()), sorted(theirs), 'the parameters\' names')
    with torch.no_grad():
        for name, param in into.named_parameters():
            param.copy_(theirs[name])


def test_as_many_groups_as_heads_is_multi_head_attention():
    torch.manual_seed(123)
    mha = MultiHeadAttention(6, 8, 10, 0.0, 4, qkv_bias=True).eval()
    gqa = GroupedQueryAttention(6, 8, 4, 4, 10, qkv_bias=True).eval()
    copy_parameters(gqa, mha)  # the same names and shapes
    x = torch.randn(2, 7, 6)
    with torch.no_grad():
        expect_close(gqa(x), mha(x), 'the output with as many groups as heads, beside MultiHeadAttention\'s', atol=1e-6)


def test_keys_and_values_are_smaller():
    gqa = GroupedQueryAttention(16, 16, 8, 2, 10)
    expect_equal(gqa.W_query.weight.shape, (16, 16), 'gqa.W_query.weight.shape')
    assert gqa.W_key.weight.shape == (4, 16) and gqa.W_value.weight.shape == (4, 16), "W_key and W_value give num_kv_groups * head_dim outputs"  # 2 groups of head_dim 2
    assert gqa.W_key.bias is None and gqa.out_proj.bias is not None, "no bias in W_key unless qkv_bias; out_proj has one"
    # the names, in any order (the book creates W_key and W_value before W_query)
    expect_equal(sorted(n for n, _ in gqa.named_parameters()), ["W_key.weight", "W_query.weight", "W_value.weight",
                                                            "out_proj.bias", "out_proj.weight"], 'sorted(n for n, _ in gqa.named_parameters())')
    assert "mask" in dict(gqa.named_buffers()), "register the causal mask with register_buffer"


def test_query_heads_share_key_value_heads_in_order():
    """Query heads 0 and 1 use key/value head 0, heads 2 and 3 use head 1 (repeat_interleave)."""
    torch.manual_seed(0)
    gqa = GroupedQueryAttention(4, 8, 4, 2, 6).eval()  # head_dim 2
    x = torch.randn(1, 5, 4)
    with torch.no_grad():
        q = gqa.W_query(x).view(1, 5, 4, 2).transpose(1, 2)
        k = gqa.W_key(x).view(1, 5, 2, 2).transpose(1, 2)
        v = gqa.W_value(x).view(1, 5, 2, 2).transpose(1, 2)
        heads = []
        for h in range(4):
            kh, vh = k[:, h // 2], v[:, h // 2]
            scores = (q[:, h] @ kh.transpose(1, 2)).masked_fill(torch.ones(5, 5).triu(1).bool(), -torch.inf)
            heads.append(torch.softmax(scores / 2**0.5, dim=-1) @ vh)
        expected = gqa.out_proj(torch.cat(heads, dim=-1))
        expect_close(gqa(x), expected, 'the output, heads 0-1 sharing key/value head 0 and heads 2-3 head 1', atol=1e-6)


@pytest.mark.parametrize("num_heads, num_kv_groups", [(4, 3), (6, 4), (2, 4)])
def test_groups_must_divide_the_heads(num_heads, num_kv_groups):
    with pytest.raises((ValueError, AssertionError)):  # ValueError, or the book's assert
        GroupedQueryAttention(12, 12, num_heads, num_kv_groups, 6)


def by_hand(gqa, x, heads, groups, dropout=0.0):
    """The output worked out step by step from gqa's weights: query head h reads key/value head
    h // (heads // groups); the dropout (in training mode) on the (b, heads, n, n) attention weights."""
    b, n, _ = x.shape
    d_out = gqa.out_proj.weight.shape[0]
    hd = d_out // heads
    q = gqa.W_query(x).view(b, n, heads, hd).transpose(1, 2)
    k = gqa.W_key(x).view(b, n, groups, hd).transpose(1, 2)
    v = gqa.W_value(x).view(b, n, groups, hd).transpose(1, 2)
    share = torch.arange(heads) // (heads // groups)
    k, v = k[:, share], v[:, share]
    scores = (q @ k.transpose(2, 3)).masked_fill(torch.ones(n, n).triu(1).bool(), -torch.inf)
    weights = torch.nn.functional.dropout(torch.softmax(scores / hd**0.5, dim=-1), dropout)
    return gqa.out_proj((weights @ v).transpose(1, 2).reshape(b, n, d_out))


def test_dropout_only_in_training():
    torch.manual_seed(1)
    gqa = GroupedQueryAttention(6, 8, 4, 2, 10, dropout=0.5)
    x = torch.randn(2, 7, 6)
    with torch.no_grad():
        gqa.eval()
        expect_close(gqa(x), by_hand(gqa, x, 4, 2), 'the output in eval mode (no dropout)', atol=1e-6)
        gqa.train()
        torch.manual_seed(5)
        yours = gqa(x)
        torch.manual_seed(5)  # the same draws: one dropout mask over the (b, heads, n, n) attention weights
        expect_close(yours, by_hand(gqa, x, 4, 2, dropout=0.5), 'the output in training mode, same dropout draws',
                     atol=1e-6)


def test_kv_cache_bytes_of_the_bonus_material():
    expect_equal(kv_cache_bytes(LLAMA_2_7B_LIKE), 17_179_869_184, 'kv_cache_bytes(LLAMA_2_7B_LIKE)')            # 17.18 GB (bf16)
    expect_equal(kv_cache_bytes({**LLAMA_2_7B_LIKE, "n_kv_groups": 8}), 4_294_967_296, 'kv_cache_bytes({**LLAMA_2_7B_LIKE, "n_kv_groups": 8})')  # 4.29 GB
    ratio = kv_cache_bytes(LLAMA_2_7B_LIKE) / kv_cache_bytes({**LLAMA_2_7B_LIKE, "n_kv_groups": 4})
    expect_equal(ratio, 32 / 4, 'how many times smaller 4 groups make the cache')  # num_heads / num_kv_groups times smaller
    expect_equal(kv_cache_bytes(LLAMA_2_7B_LIKE, batch_size=2, bytes_per_elem=4), 4 * 17_179_869_184, 'kv_cache_bytes(LLAMA_2_7B_LIKE, batch_size=2, bytes_per_elem=4)')
    assert type(kv_cache_bytes(LLAMA_2_7B_LIKE)) is int, "kv_cache_bytes returns an int"


def test_kv_cache_bytes_matches_the_tensors():
    cfg = {"emb_dim": 12, "n_heads": 6, "n_layers": 3, "context_length": 5, "n_kv_groups": 2}
    gqa = GroupedQueryAttention(12, 12, 6, 2, 5)
    x = torch.randn(4, 5, 12)
    with torch.no_grad():
        one_layer = gqa.W_key(x).element_size() * (gqa.W_key(x).numel() + gqa.W_value(x).numel())
    expect_equal(kv_cache_bytes(cfg, batch_size=4, bytes_per_elem=4), cfg["n_layers"] * one_layer, 'kv_cache_bytes(cfg, batch_size=4, bytes_per_elem=4)')
