"""Public tests of chapter 3's efficient multi-head attention: each class equals your chapter-3
MultiHeadAttention once its weights are moved in.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import pytest
import torch

from efficient_mha import (MHAEinsum, MHAPyTorchClass, MHAPyTorchScaledDotProduct, MultiHeadAttentionCombinedQKV,
                           transfer_to_combined_qkv, transfer_to_einsum, transfer_to_pytorch_class, transfer_to_sdpa)
from multihead_attention import MultiHeadAttention
from public_tests import expect_close, expect_equal

PAIRS = [(MultiHeadAttentionCombinedQKV, transfer_to_combined_qkv), (MHAEinsum, transfer_to_einsum),
         (MHAPyTorchScaledDotProduct, transfer_to_sdpa), (MHAPyTorchClass, transfer_to_pytorch_class)]


def pair(cls, transfer, d_in, d_out, heads, ctx, dropout=0.0, qkv_bias=False):
    torch.manual_seed(123)
    mha = MultiHeadAttention(d_in, d_out, ctx, dropout, heads, qkv_bias=qkv_bias)
    with torch.no_grad():  # a non-zero bias everywhere, so a missing one shows
        for p in mha.parameters():
            p.add_(0.1 * torch.randn_like(p))
    other = cls(d_in, d_out, heads, ctx, dropout=dropout, qkv_bias=qkv_bias)
    before = {k: v.clone() for k, v in mha.state_dict().items()}
    transfer(mha, other)
    assert all(torch.equal(v, mha.state_dict()[k]) for k, v in before.items()), "transfer must leave mha unchanged"
    return mha, other


@pytest.mark.parametrize("cls, transfer", PAIRS, ids=[c.__name__ for c, _ in PAIRS])
@pytest.mark.parametrize("qkv_bias", [False, True])
def test_equals_chapter_3_after_transfer(cls, transfer, qkv_bias):
    d_in = 8 if cls is MHAPyTorchClass else 6  # nn.MultiheadAttention needs d_in == d_out
    mha, other = pair(cls, transfer, d_in, 8, 2, 10, dropout=0.5, qkv_bias=qkv_bias)
    mha.eval(), other.eval()  # dropout off in eval mode
    x = torch.randn(3, 7, d_in) * 3  # fewer tokens than the context
    with torch.no_grad():
        expect_close(other(x), mha(x), 'the output beside your chapter-3 MultiHeadAttention\'s', atol=1e-5)


@pytest.mark.parametrize("cls, transfer", PAIRS, ids=[c.__name__ for c, _ in PAIRS])
def test_transfer_copies_values(cls, transfer):
    """Called as you call it (autograd on), it returns None, and the copy shares no memory with mha:
    new values written into the class's parameters leave mha's as they were."""
    d_in = 8 if cls is MHAPyTorchClass else 6
    torch.manual_seed(123)
    mha = MultiHeadAttention(d_in, 8, 10, 0.0, 2, qkv_bias=True)
    other = cls(d_in, 8, 2, 10, qkv_bias=True)
    returned = transfer(mha, other)
    assert returned is None, f"{transfer.__name__} returns None (it fills the module it is given); yours returned a {type(returned).__name__}"
    before = {k: v.clone() for k, v in mha.state_dict().items()}
    with torch.no_grad():
        for p in other.parameters():
            p.add_(1.0)
    changed = [k for k, v in before.items() if not torch.equal(v, mha.state_dict()[k])]
    assert not changed, f"changing the class's parameters after {transfer.__name__} changed mha's {changed}: copy the values, share no parameter or module"


def test_graded_structure():
    combined = MultiHeadAttentionCombinedQKV(6, 8, 2, 10, qkv_bias=True)
    expect_equal([n for n, _ in combined.named_parameters()], ["qkv.weight", "qkv.bias", "proj.weight", "proj.bias"], '[n for n, _ in combined.named_parameters()]')
    assert combined.qkv.weight.shape == (24, 6) and combined.mask.shape[-1] == 10, "qkv is one Linear(d_in, 3 * d_out) and the mask is context_length wide"
    assert "mask" in dict(combined.named_buffers()), "register the causal mask with register_buffer"
    einsum = MHAEinsum(6, 8, 2, 10)
    expect_equal(sorted(n for n, _ in einsum.named_parameters()), ["W_key", "W_query", "W_value", "out_proj.bias",
                                                               "out_proj.weight"], 'sorted(n for n, _ in einsum.named_parameters())')
    expect_equal(einsum.W_query.shape, (6, 8), 'einsum.W_query.shape')
    expect_equal(sorted(n for n, _ in MHAEinsum(6, 8, 2, 10, qkv_bias=True).named_parameters())[:3], ["W_key", "W_query",
                                                                                                  "W_value"], 'sorted(n for n, _ in MHAEinsum(6, 8, 2, 10, qkv_bias=True).named_parameters())[:3]')
    assert {"bias_q", "bias_k", "bias_v"} <= {n for n, _ in MHAEinsum(6, 8, 2, 10, qkv_bias=True).named_parameters()}, "with qkv_bias=True MHAEinsum has bias_q, bias_k and bias_v"
    sdpa = MHAPyTorchScaledDotProduct(6, 8, 2, 10, dropout=0.25)
    expect_equal([n for n, _ in sdpa.named_parameters()], ["qkv.weight", "proj.weight", "proj.bias"], '[n for n, _ in sdpa.named_parameters()]')
    expect_equal(sdpa.dropout, 0.25, 'sdpa.dropout')
    torch_class = MHAPyTorchClass(8, 8, 2, 10)
    assert isinstance(torch_class.multihead_attn, torch.nn.MultiheadAttention) and torch_class.multihead_attn.batch_first, "multihead_attn is an nn.MultiheadAttention with batch_first=True"
    expect_equal(sorted(n for n, _ in torch_class.named_parameters()), [
        "multihead_attn.in_proj_weight", "multihead_attn.out_proj.weight", "proj.bias", "proj.weight"], 'sorted(n for n, _ in torch_class.named_parameters())')


@pytest.mark.parametrize("cls, transfer", PAIRS[:3], ids=[c.__name__ for c, _ in PAIRS[:3]])
def test_dropout_only_in_training(cls, transfer):
    mha, other = pair(cls, transfer, 6, 8, 2, 10, dropout=0.5)
    x = torch.randn(2, 7, 6)
    with torch.no_grad():
        other.eval()
        expect_close(other(x), other(x), "eval mode is deterministic")
        expect_close(other(x), mha.eval()(x), 'the output in eval mode beside your chapter-3 MultiHeadAttention\'s', atol=1e-5)
        other.train()
        mha.train()
        torch.manual_seed(5)
        theirs = other(x)
        torch.manual_seed(5)  # the same draws: one dropout mask over the (b, heads, n, n) attention weights
        expect_close(theirs, mha(x), 'the output in training mode, same dropout draws, beside chapter 3\'s', atol=1e-5)


def test_sdpa_masks_the_future():
    torch.manual_seed(1)
    sdpa = MHAPyTorchScaledDotProduct(4, 4, 2, 6).eval()
    x = torch.randn(1, 6, 4)
    changed = x.clone()
    changed[:, 3:] += 10  # later tokens must not change earlier outputs
    with torch.no_grad():
        expect_close(sdpa(x)[:, :3], sdpa(changed)[:, :3], 'the first three tokens\' outputs after later tokens change', atol=1e-6)
