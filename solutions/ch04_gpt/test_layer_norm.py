"""Public tests for section 4.2: layer normalization (listing 4.2).

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from layer_norm import LayerNorm
from public_tests import expect_close, expect_equal


def book_batch():
    torch.manual_seed(123)
    return torch.randn(2, 5)


def test_normalized_rows_have_mean_0_and_variance_1():
    batch_example = book_batch()
    ln = LayerNorm(emb_dim=5)
    out_ln = ln(batch_example)
    expect_equal(out_ln.shape, (2, 5), 'the shape of the output')
    expect_close(out_ln.mean(dim=-1), torch.zeros(2), 'the mean of each normalised row', atol=1e-6)
    # the biased variance (divide by n): with Bessel's correction it would come out as 4/5
    bessel = ("rows normalised with the unbiased variance (Bessel's correction: use unbiased=False)",
              torch.full((2,), 0.8))
    expect_close(out_ln.var(dim=-1, unbiased=False), torch.ones(2), 'the variance of each normalised row', atol=1e-4,
                 mistakes=[bessel])


def test_scale_and_shift_are_the_only_parameters():
    ln = LayerNorm(4)
    expect_equal([name for name, _ in ln.named_parameters()], ["scale", "shift"], 'the parameter names')
    assert torch.equal(ln.scale.detach(), torch.ones(4)) and torch.equal(ln.shift.detach(), torch.zeros(4)), "scale starts at ones and shift at zeros"
    with torch.no_grad():
        ln.scale.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
        ln.shift.copy_(torch.tensor([0.5, 0.0, -0.5, 1.0]))
    x = torch.tensor([[1.0, 2.0, 3.0, 6.0]])
    norm_x = (x - 3.0) / (3.5 + 1e-5) ** 0.5  # mean 3, biased variance 14 / 4
    expect_close(ln(x), norm_x * ln.scale + ln.shift, 'LayerNorm with a non-trivial scale and shift', atol=1e-6)


def test_eps_is_1e_5_inside_the_square_root():
    ln = LayerNorm(4)
    # variance exactly 1e-5: the output is x / sqrt(2e-5), i.e. +-1/sqrt(2)
    x = (1e-5) ** 0.5 * torch.tensor([[1.0, -1.0, 1.0, -1.0]], dtype=torch.float64)
    ln = ln.to(torch.float64)
    expect_close(ln(x), torch.tensor([[1.0, -1.0, 1.0, -1.0]], dtype=torch.float64) / 2**0.5, 'LayerNorm of a row of variance 1e-5 (eps inside the square root)')
    # a constant row has variance 0: eps keeps the output finite (it is the shift)
    expect_equal(ln(torch.full((1, 4), 3.0, dtype=torch.float64)), torch.zeros(1, 4, dtype=torch.float64), 'LayerNorm of a constant row')


def test_last_dimension_of_a_3d_batch_gradients_and_input_unchanged():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 6) * 5 + 2
    before = x.clone()
    ln = LayerNorm(6)
    out = ln(x)
    expect_equal(x, before, "forward must not change its input")
    expected = (x - x.mean(-1, keepdim=True)) / (x.var(-1, keepdim=True, unbiased=False) + 1e-5).sqrt()
    expect_close(out, expected, 'LayerNorm over the last dimension of a 3-d batch', atol=1e-5)
    out.pow(2).sum().backward()
    assert ln.scale.grad is not None and ln.shift.grad is not None, "scale and shift must be trainable"
