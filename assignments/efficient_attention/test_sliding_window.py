"""Public tests of sliding-window attention.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import pytest
import torch

from multihead_attention import MultiHeadAttention
from sliding_window import SlidingWindowAttention, sliding_window_mask
from public_tests import expect_close, expect_equal


def test_mask_of_a_window_of_three():
    expected = torch.tensor([[0, 1, 1, 1, 1],
                             [0, 0, 1, 1, 1],
                             [0, 0, 0, 1, 1],
                             [1, 0, 0, 0, 1],   # token 3 sees tokens 1, 2, 3
                             [1, 1, 0, 0, 0]], dtype=torch.bool)
    expect_equal(sliding_window_mask(5, 3), expected, 'sliding_window_mask(5, 3)')


def test_window_of_one_sees_only_itself():
    expect_equal(sliding_window_mask(4, 1), ~torch.eye(4, dtype=torch.bool), 'sliding_window_mask(4, 1)')


@pytest.mark.parametrize("window", [6, 7, 100])
def test_a_long_window_is_the_causal_mask(window):
    expect_equal(sliding_window_mask(6, window), torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1), 'sliding_window_mask(6, window)')


def test_a_window_below_one_is_refused():
    with pytest.raises(ValueError):
        sliding_window_mask(4, 0)


def test_long_window_equals_chapter_3():
    torch.manual_seed(123)
    mha = MultiHeadAttention(6, 8, 10, 0.0, 2, qkv_bias=True).eval()
    swa = SlidingWindowAttention(6, 8, 2, 10, window=10, qkv_bias=True).eval()
    swa.load_state_dict(mha.state_dict(), strict=False)  # all but the mask
    expect_equal(swa.mask, sliding_window_mask(10, 10), 'the mask buffer')
    x = torch.randn(2, 9, 6)
    with torch.no_grad():
        expect_close(swa(x), mha(x), 'the output with a window as long as the context, beside chapter 3\'s', atol=1e-6)


def test_tokens_outside_the_window_change_nothing():
    torch.manual_seed(0)
    swa = SlidingWindowAttention(4, 4, 2, 8, window=2).eval()
    x = torch.randn(1, 6, 4)
    changed = x.clone()
    changed[:, :3] += 5  # tokens 0-2: outside the window of tokens 4 and 5
    with torch.no_grad():
        out, out_changed = swa(x), swa(changed)
    expect_close(out[:, 4:], out_changed[:, 4:], 'tokens 4 and 5 after tokens 0-2 change', atol=1e-6)
    assert not torch.allclose(out[:, 3], out_changed[:, 3]), "token 3 sees token 2"
    expect_equal([n for n, _ in swa.named_parameters()], ["W_query.weight", "W_key.weight", "W_value.weight",
                                                      "out_proj.weight", "out_proj.bias"], '[n for n, _ in swa.named_parameters()]')


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
        expect_close(torch.cat(rows, dim=1), whole, 'the outputs fed in pieces with the cache, beside the whole', atol=1e-5)
        swa.reset_cache()
        rows2 = [swa(x2[:, :3], use_cache=True), swa(x2[:, 3:], use_cache=True)]
        expect_close(torch.cat(rows2, dim=1), whole2, "reset_cache() starts a new sequence", atol=1e-5)
    assert "cache_k" not in swa.state_dict(), "the cache is in non-persistent buffers"


def held_bytes(obj, seen=None, depth=0):
    """The bytes of the tensors ``obj`` holds, its parameters aside: in its buffers, attributes, lists
    and dicts, and its submodules' (each tensor's whole storage, once: a slice keeps what it was cut from)."""
    seen = set() if seen is None else seen
    if isinstance(obj, torch.Tensor):
        storage = obj.untyped_storage()
        if storage.data_ptr() in seen:
            return 0
        seen.add(storage.data_ptr())
        return storage.nbytes()
    if depth > 5:
        return 0
    if isinstance(obj, torch.nn.Module):
        items = [value for name, value in vars(obj).items() if name != "_parameters"]
    elif isinstance(obj, dict):
        items = list(obj.values())
    elif isinstance(obj, (list, tuple, set)):
        items = list(obj)
    else:
        return 0
    return sum(held_bytes(item, seen, depth + 1) for item in items)


def test_the_cache_stops_growing_at_the_window():
    # the grade measures memory: a long sequence runs where every key and value would not fit
    torch.manual_seed(2)
    swa = SlidingWindowAttention(4, 8, 2, 40, window=3).eval()
    x = torch.randn(2, 40, 4)
    held = []
    with torch.no_grad():
        for t in range(40):  # one token at a time
            swa(x[:, t:t + 1], use_cache=True)
            held.append(held_bytes(swa))
    assert held[-1] <= max(held[:6]), (
        f"your module holds {held[-1]} bytes of tensors after 40 tokens, {max(held[:6])} after 6 with a window "
        f"of 3: the cache grows with the sequence (keep nothing of the positions before the window)")
