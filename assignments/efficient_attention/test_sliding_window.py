"""Public tests of sliding-window attention."""
import pytest
import torch

from multihead_attention import MultiHeadAttention
from sliding_window import SlidingWindowAttention, sliding_window_mask


def test_mask_of_a_window_of_three():
    expected = torch.tensor([[0, 1, 1, 1, 1],
                             [0, 0, 1, 1, 1],
                             [0, 0, 0, 1, 1],
                             [1, 0, 0, 0, 1],   # token 3 sees tokens 1, 2, 3
                             [1, 1, 0, 0, 0]], dtype=torch.bool)
    assert torch.equal(sliding_window_mask(5, 3), expected)


def test_window_of_one_sees_only_itself():
    assert torch.equal(sliding_window_mask(4, 1), ~torch.eye(4, dtype=torch.bool))


@pytest.mark.parametrize("window", [6, 7, 100])
def test_a_long_window_is_the_causal_mask(window):
    assert torch.equal(sliding_window_mask(6, window), torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1))


def test_a_window_below_one_is_refused():
    with pytest.raises(ValueError):
        sliding_window_mask(4, 0)


def test_long_window_equals_chapter_3():
    torch.manual_seed(123)
    mha = MultiHeadAttention(6, 8, 10, 0.0, 2, qkv_bias=True).eval()
    swa = SlidingWindowAttention(6, 8, 2, 10, window=10, qkv_bias=True).eval()
    swa.load_state_dict(mha.state_dict(), strict=False)  # all but the mask
    assert torch.equal(swa.mask, sliding_window_mask(10, 10))
    x = torch.randn(2, 9, 6)
    with torch.no_grad():
        assert torch.allclose(swa(x), mha(x), atol=1e-6)


def test_tokens_outside_the_window_change_nothing():
    torch.manual_seed(0)
    swa = SlidingWindowAttention(4, 4, 2, 8, window=2).eval()
    x = torch.randn(1, 6, 4)
    changed = x.clone()
    changed[:, :3] += 5  # tokens 0-2: outside the window of tokens 4 and 5
    with torch.no_grad():
        out, out_changed = swa(x), swa(changed)
    assert torch.allclose(out[:, 4:], out_changed[:, 4:], atol=1e-6)
    assert not torch.allclose(out[:, 3], out_changed[:, 3]), "token 3 sees token 2"
    assert [n for n, _ in swa.named_parameters()] == ["W_query.weight", "W_key.weight", "W_value.weight",
                                                      "out_proj.weight", "out_proj.bias"]


@pytest.mark.parametrize("window", [1, 3, 20])
def test_cache_in_pieces_keeps_only_the_window(window):
    torch.manual_seed(1)
    swa = SlidingWindowAttention(6, 8, 2, 16, window=window, qkv_bias=True).eval()
    x, x2 = torch.randn(2, 11, 6), torch.randn(2, 4, 6)
    with torch.no_grad():
        whole, whole2 = swa(x), swa(x2)
        swa.reset_cache()
        rows, start = [], 0
        for size in [5, 1, 1, 2, 1, 1]:  # a prompt, then one or two tokens at a time
            rows.append(swa(x[:, start:start + size], use_cache=True))
            start += size
            for cache in (swa.cache_k, swa.cache_v):  # (batch, positions held, d_out) numbers, any layout
                assert cache.numel() // (2 * 8) <= window, "the cache keeps at most the last window positions"
        assert torch.allclose(torch.cat(rows, dim=1), whole, atol=1e-5)
        swa.reset_cache()
        rows2 = [swa(x2[:, :3], use_cache=True), swa(x2[:, 3:], use_cache=True)]
        assert torch.allclose(torch.cat(rows2, dim=1), whole2, atol=1e-5), "reset_cache() starts a new sequence"
    assert "cache_k" not in swa.state_dict(), "the cache is in non-persistent buffers"
