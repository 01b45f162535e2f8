"""Public tests for exercises 3.1 to 3.3.

Each exercise is judged on what it asks, with your own classes: 3.1 on the weights it moves, 3.2
and 3.3 beside your own class built with the book's arguments (a mistake in a class fails that
class's tests, in its own part, and the grade charges it there too).

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch
from public_tests import expect_close, expect_equal

from exercises import build_2d_output_wrapper, build_gpt2_small_mha, transfer_weights_v2_to_v1
from multihead_attention import MultiHeadAttention, MultiHeadAttentionWrapper
from self_attention import SelfAttention_v1, SelfAttention_v2

BOOK_WEIGHTS = ("W_query", "W_key", "W_value")


def test_3_1_v1_holds_v2_weights_transposed():
    torch.manual_seed(789)
    sa_v2 = SelfAttention_v2(3, 2)
    sa_v1 = SelfAttention_v1(3, 2)
    transfer_weights_v2_to_v1(sa_v2, sa_v1)
    # graded on the weights alone: v1's own forward is the self_attention part's business
    v1, v2 = dict(sa_v1.named_parameters()), dict(sa_v2.named_parameters())
    # weights held as plain tensors are self_attention's to charge: the transfer is judged on them too
    v1.update({name: t for name, t in vars(sa_v1).items() if isinstance(t, torch.Tensor) and t.dim() == 2})
    if all(name in v1 and f"{name}.weight" in v2 for name in BOOK_WEIGHTS):
        for name in BOOK_WEIGHTS:
            expect_equal(v1[name].detach(), v2[f"{name}.weight"].detach().T,
                         f"sa_v1.{name} after the transfer, beside sa_v2.{name}.weight.T")
        return
    # other names than the book's (self_attention's tests say so): v1's weights are v2's, transposed, one each
    weights = [p.detach() for p in v2.values() if p.dim() == 2]
    found = sorted((next((i for i, w in enumerate(weights) if torch.equal(p.detach(), w.T)), -1) for p in v1.values()))
    expect_equal(found, list(range(len(weights))), f"which of sa_v2's weights ({', '.join(v2)}), transposed, each of "
                 f"sa_v1's ({', '.join(v1)}) holds after the transfer (-1: none)")


def state_shapes(module):
    """{name: shape} of a module's parameters and buffers: its configuration, whatever its forward does."""
    return {name: tuple(t.shape) for name, t in module.state_dict().items()}


def assert_built_as(yours, book, what, x):
    """``yours`` (the exercise's module) is ``book()`` (your own class with the book's arguments),
    built after the same seed: the same parameters and buffers, the same output in eval mode and in
    training mode (where each draws its dropout after the same seed). Where your class's own forward fails, its tests say why and
    only the configuration is compared here."""
    torch.manual_seed(123)
    mine = yours()
    torch.manual_seed(123)
    theirs = book()
    expect_equal(state_shapes(mine), state_shapes(theirs), f"{what}: the shapes of its parameters and buffers")
    for train in (False, True):
        for module in (mine, theirs):
            module.train(train)
        try:
            torch.manual_seed(123)
            with torch.no_grad():
                expected = theirs(x)
        except Exception:
            return  # your class's own tests say why
        torch.manual_seed(123)
        with torch.no_grad():
            got = mine(x)
        if isinstance(got, torch.Tensor) and got.shape == expected.shape:  # NaN where your class gives NaN too
            both = got.isnan() & expected.isnan()
            got, expected = got.masked_fill(both, 0.0), expected.masked_fill(both, 0.0)
        expect_close(got, expected, f"{what}{' in training mode, seed 123' if train else ''}", atol=1e-6)


def test_3_2_two_heads_two_dimensional_output():
    wrapper = build_2d_output_wrapper(d_in=3, context_length=6)
    expect_equal(len(wrapper.heads), 2, "the number of heads")
    x = torch.rand(2, 6, 3, generator=torch.Generator().manual_seed(32))
    assert_built_as(lambda: build_2d_output_wrapper(3, 6, dropout=0.5),
                    lambda: MultiHeadAttentionWrapper(3, 1, 6, 0.5, num_heads=2),
                    "build_2d_output_wrapper(3, 6, dropout=0.5) beside MultiHeadAttentionWrapper(3, 1, 6, 0.5, "
                    "num_heads=2), whose output is (2, 6, 2) on (2, 6, 3)", x)


def test_3_3_gpt2_small_size():
    mha = build_gpt2_small_mha()
    assert isinstance(mha, MultiHeadAttention), f"yours is a {type(mha).__name__}, the book's a MultiHeadAttention"
    x = torch.rand(1, 4, 768, generator=torch.Generator().manual_seed(33))
    # not GPT-2's 0.1, so that a dropout written into the exercise shows
    assert_built_as(lambda: build_gpt2_small_mha(dropout=0.25),
                    lambda: MultiHeadAttention(768, 768, 1024, 0.25, num_heads=12),
                    "build_gpt2_small_mha(dropout=0.25) beside MultiHeadAttention(768, 768, 1024, 0.25, num_heads=12) "
                    "(12 heads, no qkv bias: the book's has 2,360,064 parameters)", x)
