"""Public tests for section 3.6: listings 3.4 and 3.5 under seed 123.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch
from public_tests import expect_close, expect_equal

from causal_attention import CausalAttention
from multihead_attention import MultiHeadAttention, MultiHeadAttentionWrapper
from test_causal_attention import (ONLY_THE_LAYERS, assert_finite_on_large_inputs, assert_masks_after_it_moves,
                                   inputs)

ATOL = 1e-4
batch = torch.stack((inputs, inputs), dim=0)
# CausalAttention(3, 2, 6, 0.0) under seed 123 on the book's inputs: head 0 of the book's wrapper
BOOK_HEAD = torch.tensor([[-0.4519, 0.2216], [-0.5874, 0.0058], [-0.6300, -0.0632],
                          [-0.5675, -0.0843], [-0.5526, -0.0981], [-0.5299, -0.1081]])


def heads_are_the_books():
    """Whether your CausalAttention gives the book's values (causal_attention's tests say where it
    does not). Where it does not, the wrapper is judged with stand-ins for its heads, as the grader
    judges it: a mistake in CausalAttention is charged there, not here."""
    try:
        torch.manual_seed(123)
        with torch.no_grad():
            out = CausalAttention(3, 2, 6, 0.0)(batch)
        return isinstance(out, torch.Tensor) and out.shape == (2, 6, 2) and torch.allclose(out, BOOK_HEAD.expand(2, 6, 2),
                                                                                          atol=ATOL)
    except Exception:
        return False


def with_stand_ins(wrapper, d_in, d_out):
    """``wrapper`` with an nn.Linear(d_in, d_out) stand-in for each of its heads: what a wrapper does
    with its heads, whatever they compute, is concatenate their outputs."""
    torch.manual_seed(0)
    wrapper.heads = torch.nn.ModuleList(torch.nn.Linear(d_in, d_out) for _ in wrapper.heads)
    return wrapper


def test_wrapper_two_heads_seed_123():
    torch.manual_seed(123)
    mha = MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)
    if not heads_are_the_books():  # judged on stand-ins for the heads (see heads_are_the_books)
        mha = with_stand_ins(mha, 3, 2)
        expected = torch.cat([head(batch) for head in mha.heads], dim=-1).detach()
        expect_close(mha(batch), expected, "MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2) with nn.Linear "
                     "stand-ins for its heads (your CausalAttention differs from the book's: see its tests), beside "
                     "their outputs concatenated on the last dimension", atol=ATOL)
        return
    context_vecs = mha(batch)
    expected = torch.tensor([
        [-0.4519, 0.2216, 0.4772, 0.1063], [-0.5874, 0.0058, 0.5891, 0.3257],
        [-0.6300, -0.0632, 0.6202, 0.3860], [-0.5675, -0.0843, 0.5478, 0.3589],
        [-0.5526, -0.0981, 0.5321, 0.3428], [-0.5299, -0.1081, 0.5077, 0.3493],
    ])
    expect_equal(tuple(context_vecs.shape), (2, 6, 4), "the shape of the wrapper's output")
    expect_close(context_vecs, expected.expand(2, 6, 4), "MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2) "
                 "under seed 123", atol=ATOL)


def test_multihead_attention_seed_123():
    torch.manual_seed(123)
    mha = MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
    context_vecs = mha(batch)
    expected = torch.tensor([[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
                             [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]])
    expect_equal(tuple(context_vecs.shape), (2, 6, 2), "the shape of MultiHeadAttention's output")
    expect_close(context_vecs, expected.expand(2, 6, 2), "MultiHeadAttention(3, 2, 6, 0.0, num_heads=2) "
                 "under seed 123", atol=ATOL)
    assert_finite_on_large_inputs(mha, batch, "MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)")


def test_graded_structure_of_both_classes():
    """What the grader checks besides values: names and order (the seeded tests above), the mask
    buffer that forward uses, trainable weights, the input left unchanged. The wrapper's own part
    of it, with stand-ins for its heads: what its heads do is CausalAttention's (its tests)."""
    wrapper = MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)
    assert isinstance(wrapper.heads, torch.nn.ModuleList) and len(wrapper.heads) == 2, \
        "self.heads: an nn.ModuleList of num_heads=2 heads"
    assert all(isinstance(head, CausalAttention) for head in wrapper.heads), "each head is a CausalAttention"
    own = [{id(p) for p in head.parameters()} for head in wrapper.heads]
    assert wrapper.heads[0] is not wrapper.heads[1] and own[0].isdisjoint(own[1]), "each head has its own weights"
    mha = MultiHeadAttention(3, 4, 6, 0.0, num_heads=2)
    names = [n for n, _ in mha.named_parameters()]
    assert names == ["W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight", "out_proj.bias"], \
        f"parameters {names}: {ONLY_THE_LAYERS}"
    assert isinstance(mha.dropout, torch.nn.Dropout), "self.dropout is an nn.Dropout"
    for module in (with_stand_ins(wrapper, 3, 2), mha):
        x = batch.clone()
        module(x).sum().backward()
        assert torch.equal(x, batch), "forward must not change its input"
        assert all(p.grad is not None for p in module.parameters()), "every weight must get a gradient"
    assert_masks_after_it_moves(mha, batch)
