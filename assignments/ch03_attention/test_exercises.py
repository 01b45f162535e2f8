"""Public tests for exercises 3.1 to 3.3.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch
from public_tests import expect_equal

from exercises import build_2d_output_wrapper, build_gpt2_small_mha, transfer_weights_v2_to_v1
from multihead_attention import MultiHeadAttention
from self_attention import SelfAttention_v1, SelfAttention_v2
from simple_attention import inputs


def test_3_1_v1_holds_v2_weights_transposed():
    torch.manual_seed(789)
    sa_v2 = SelfAttention_v2(3, 2)
    sa_v1 = SelfAttention_v1(3, 2)
    transfer_weights_v2_to_v1(sa_v2, sa_v1)
    # graded on the weights alone: v1's own forward is the self_attention part's business
    for name in ("W_query", "W_key", "W_value"):
        expect_equal(getattr(sa_v1, name).detach(), getattr(sa_v2, name).weight.detach().T,
                     f"sa_v1.{name} after the transfer, beside sa_v2.{name}.weight.T")


def test_3_2_two_heads_two_dimensional_output():
    wrapper = build_2d_output_wrapper(d_in=3, context_length=6)
    expect_equal(len(wrapper.heads), 2, "the number of heads")
    expect_equal(tuple(wrapper(torch.stack((inputs, inputs))).shape), (2, 6, 2), "the shape of the output")


def test_3_3_gpt2_small_size():
    mha = build_gpt2_small_mha()
    assert isinstance(mha, MultiHeadAttention), f"yours is a {type(mha).__name__}, the book's a MultiHeadAttention"
    expect_equal(tuple(mha.W_query.weight.shape), (768, 768), "the shape of W_query.weight")
    expect_equal(tuple(mha.mask.shape[-2:]), (1024, 1024), "the mask's last two dimensions")
    expect_equal(build_gpt2_small_mha(dropout=0.1).dropout.p, 0.1, "dropout.p of build_gpt2_small_mha(dropout=0.1)")
    assert mha.W_query.bias is None, "qkv_bias=False: the query, key and value layers have no bias"
    # 4 projections of 768 x 768 plus out_proj's 768 biases: 2,360,064 parameters
    expect_equal(sum(p.numel() for p in mha.parameters()), 2_360_064, "the number of parameters")
