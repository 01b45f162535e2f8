"""Public tests for section 4.3: GELU and the feed forward network (listings 4.3 and 4.4).

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch
import torch.nn.functional as F

from feed_forward import GELU, FeedForward
from gpt_model import GPT_CONFIG_124M
from public_tests import expect_close, expect_equal


def test_gelu_is_the_tanh_approximation():
    x = torch.linspace(-3, 3, 100)
    y = GELU()(x)
    expect_close(y, F.gelu(x, approximate="tanh"), 'GELU()(x) beside the tanh approximation', atol=1e-6)
    # GELU is smooth, negative for negative inputs and smallest near x = -0.75
    assert -0.85 < x[y.argmin()] < -0.65, "GELU is smallest near x = -0.75"
    expect_close(GELU()(torch.tensor([[-10.0, 0.0, 10.0]])), torch.tensor([[0.0, 0.0, 10.0]]), 'GELU at -10, 0 and 10', atol=1e-6)
    # element by element on any shape: a 4-D input gives each value as the 1-D one did
    expect_close(GELU()(x.view(2, 2, 5, 5)), y.view(2, 2, 5, 5), 'GELU on the same values as a (2, 2, 5, 5) tensor', atol=1e-6)


def test_feed_forward_expands_to_4_emb_dim_and_back():
    ffn = FeedForward(GPT_CONFIG_124M)
    shapes = {name: tuple(p.shape) for name, p in ffn.named_parameters()}
    expect_equal(shapes, {"layers.0.weight": (3072, 768), "layers.0.bias": (3072,),
                      "layers.2.weight": (768, 3072), "layers.2.bias": (768,)}, 'shapes')
    torch.manual_seed(123)
    x = torch.rand(2, 3, 768)
    before = x.clone()
    out = ffn(x)
    expect_equal(out.shape, (2, 3, 768), 'the shape of the output')
    expect_equal(x, before, "forward must not change its input")
    first, second = ffn.layers[0], ffn.layers[2]
    hidden = F.gelu(F.linear(x, first.weight, first.bias), approximate="tanh")
    expect_close(out, F.linear(hidden, second.weight, second.bias), 'the output: Linear, GELU, Linear', atol=1e-5)


def test_feed_forward_creates_its_layers_in_order():
    cfg = {**GPT_CONFIG_124M, "emb_dim": 8}
    torch.manual_seed(123)
    ffn = FeedForward(cfg)
    torch.manual_seed(123)
    first, second = torch.nn.Linear(8, 32), torch.nn.Linear(32, 8)
    assert torch.equal(ffn.layers[0].weight, first.weight) and torch.equal(ffn.layers[2].weight, second.weight), "the layers are created in the book's order: Linear(emb_dim, 4 * emb_dim), then Linear(4 * emb_dim, emb_dim)"
    expect_equal(ffn.layers[2].bias, second.bias, 'the second Linear\'s bias, created after the first')
