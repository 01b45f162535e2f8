"""Public tests for section 3.5: masking the future, dropout, and listing 3.3.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import copy

import torch
import torch.nn.functional as F
from public_tests import expect_close, expect_equal
from torch.overrides import TorchFunctionMode

from causal_attention import (
    CausalAttention, causal_attn_weights, dropout_attn_weights, masked_renormalized_weights,
    simple_causal_mask,
)

# Each part's tests use its own module only (the book's numbers stand in for the parts before it):
# a mistake in an earlier part fails that part's tests, not these, as the grade charges it there.
# "Your journey starts with one step", as simple_attention.py holds it (section 3.3.1).
inputs = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                       [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])
ATOL = 1e-4
ONLY_THE_LAYERS = "the book's layers only, no bias unless qkv_bias (the mask is a buffer: register_buffer)"
# The book's causal weights for seed 789's SelfAttention_v2 (both methods give these).
CAUSAL_WEIGHTS = torch.tensor([
    [1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
    [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
    [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
    [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
    [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
    [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529],
])


def book_scores():
    """The scores of the book's SelfAttention_v2(3, 2) under seed 789: its W_query and W_key are
    the first two nn.Linear(3, 2, bias=False) layers drawn after the seed."""
    torch.manual_seed(789)
    W_query, W_key = torch.nn.Linear(3, 2, bias=False), torch.nn.Linear(3, 2, bias=False)
    with torch.no_grad():
        return W_query(inputs) @ W_key(inputs).T


def test_simple_mask_is_lower_triangular_ones():
    upper = ("the upper triangle (torch.triu): each token would see the tokens after it", torch.ones(4, 4).triu())
    expect_equal(simple_causal_mask(4), torch.tensor(
        [[1., 0., 0., 0.], [1., 1., 0., 0.], [1., 1., 1., 0.], [1., 1., 1., 1.]]), "simple_causal_mask(4)",
        mistakes=[upper])


def test_mask_and_renormalise():
    weights = torch.softmax(book_scores() / 2**0.5, dim=-1)
    expect_close(masked_renormalized_weights(weights), CAUSAL_WEIGHTS, "the masked, renormalised weights", atol=ATOL)


def softmax_then_renormalise(scores, d_k):
    """Section 3.5.1's first recipe: a softmax over all tokens, the future zeroed, rows renormalised."""
    weights = torch.softmax(scores / d_k**0.5, dim=-1) * torch.tril(torch.ones_like(scores))
    return weights / weights.sum(dim=-1, keepdim=True)


RENORMALISED = "a softmax over all tokens, the future zeroed and the rows renormalised afterwards: on large " \
    "scores a row's kept weights underflow to 0 and 0 / 0 gives NaN (mask with -inf before the softmax)"


def test_minus_infinity_mask_before_softmax():
    expect_close(causal_attn_weights(book_scores(), d_k=2), CAUSAL_WEIGHTS, "causal_attn_weights(scores, d_k=2)",
                 atol=ATOL)
    # the graded scores include large ones (the docstring says so): each row's largest here are in its future
    large = 100.0 * torch.arange(4.0).expand(4, 4)
    expect_close(causal_attn_weights(large, d_k=2), torch.eye(4), "causal_attn_weights of large scores (100 times "
                 "the key's index), d_k=2", atol=ATOL, mistakes=[(RENORMALISED, softmax_then_renormalise(large, 2))])


def test_dropout_on_attention_weights_seed_123():
    dropped = dropout_attn_weights(CAUSAL_WEIGHTS, p=0.5, seed=123)
    # The mask nn.Dropout draws under seed 123 differs between platforms (the book's is
    # Linux's; macOS draws another, pytorch/pytorch#121595): compare with this machine's draw,
    # and with the book's printed matrix where this machine reproduces it.
    torch.manual_seed(123)
    here = torch.nn.Dropout(0.5)(CAUSAL_WEIGHTS)
    expect_close(dropped, here, "dropout_attn_weights(weights, p=0.5, seed=123) beside nn.Dropout's", atol=ATOL)
    book = torch.tensor([
        [2.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
        [0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
        [0.7599, 0.6194, 0.6206, 0.0000, 0.0000, 0.0000],
        [0.0000, 0.4921, 0.4925, 0.0000, 0.0000, 0.0000],
        [0.0000, 0.3966, 0.0000, 0.3775, 0.0000, 0.0000],
        [0.0000, 0.3327, 0.3331, 0.3084, 0.3331, 0.0000],
    ])
    if torch.equal(here != 0, book != 0):
        expect_close(dropped, book, "dropout_attn_weights(weights, p=0.5, seed=123)", atol=ATOL)


def test_causal_attention_seed_123():
    batch = torch.stack((inputs, inputs), dim=0)
    torch.manual_seed(123)
    ca = CausalAttention(3, 2, batch.shape[1], 0.0)
    context_vecs = ca(batch)
    # Head 0 of the book's two-head wrapper is this very module (same seed, same order).
    expected = torch.tensor([[-0.4519, 0.2216], [-0.5874, 0.0058], [-0.6300, -0.0632],
                             [-0.5675, -0.0843], [-0.5526, -0.0981], [-0.5299, -0.1081]])
    expect_equal(tuple(context_vecs.shape), (2, 6, 2), "the shape of CausalAttention's output")
    expect_close(context_vecs[0], expected, "CausalAttention(3, 2, 6, 0.0) under seed 123, batch item 0", atol=ATOL)
    expect_close(context_vecs[1], expected, "CausalAttention(3, 2, 6, 0.0) under seed 123, batch item 1", atol=ATOL)
    assert "mask" in dict(ca.named_buffers()), "register the causal mask with register_buffer"
    assert_finite_on_large_inputs(ca, batch, "CausalAttention(3, 2, 6, 0.0)")


def assert_finite_on_large_inputs(module, x, what):
    """The graded inputs include large values (the docstrings say so): there the book's forward,
    which masks the scores with -inf before the softmax, stays finite."""
    with torch.no_grad():
        out = module(100 * x)
    assert torch.isfinite(out).all(), (
        f"{what} on 100 * inputs: yours has NaN or inf where the book's is finite. Look at the order of the mask "
        "and the softmax: masked with -inf first, the softmax stays finite; a softmax over all tokens underflows to 0 "
        "for every token a row keeps, and renormalising afterwards divides 0 by 0")


def test_graded_structure_of_causal_attention():
    """What the grader checks besides values: names and order (the seeded test above), the mask
    buffer that forward uses, trainable weights, the input left unchanged."""
    ca = CausalAttention(3, 2, 6, 0.0)
    names = [n for n, _ in ca.named_parameters()]
    assert names == ["W_query.weight", "W_key.weight", "W_value.weight"], f"parameters {names}: {ONLY_THE_LAYERS}"
    assert isinstance(ca.dropout, torch.nn.Dropout), "self.dropout is an nn.Dropout"
    x = torch.stack((inputs, inputs))
    ca(x).sum().backward()
    assert torch.equal(x, torch.stack((inputs, inputs))), "forward must not change its input"
    assert all(p.grad is not None for p in ca.parameters()), "every weight must get a gradient"
    assert_masks_after_it_moves(ca, x)


class CausalSDPA(TorchFunctionMode):
    """Notes whether forward leaves the mask to F.scaled_dot_product_attention(..., is_causal=True)."""

    used = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.scaled_dot_product_attention and kwargs.get("is_causal", len(args) > 5 and args[5]):
            self.used = True
        return func(*args, **kwargs)


def assert_masks_after_it_moves(module, x):
    """What the grader checks of the mask, after ``.to(torch.float64)``: forward masks with
    ``self.mask`` (with the buffer transposed, its output changes), or leaves the mask to
    F.scaled_dot_product_attention(..., is_causal=True). Judged on the module's own outputs, with
    the buffer as it is and transposed, so that another mistake in forward (the softmax's
    dimension, say) fails the tests of values, not this one."""
    assert "mask" in dict(module.named_buffers()), "register the causal mask with self.register_buffer('mask', ...)"
    module = copy.deepcopy(module).to(torch.float64)
    x = x.to(torch.float64)
    with torch.no_grad(), CausalSDPA() as sdpa:
        as_registered = module(x)
        module.mask = module.mask.transpose(-2, -1).contiguous()
        transposed = module(x)
    assert sdpa.used or not torch.allclose(as_registered, transposed, equal_nan=True), (
        "forward must mask with self.mask (or F.scaled_dot_product_attention(..., is_causal=True)), in float64 too: "
        "with the buffer transposed, yours gives the same output, so its mask is not the buffer")
