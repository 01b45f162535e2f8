"""Public tests for exercises 3.1 to 3.3."""
import torch

from exercises import build_2d_output_wrapper, build_gpt2_small_mha, transfer_weights_v2_to_v1
from multihead_attention import MultiHeadAttention
from self_attention import SelfAttention_v1, SelfAttention_v2
from simple_attention import inputs


def test_3_1_v1_matches_v2_after_transfer():
    torch.manual_seed(789)
    sa_v2 = SelfAttention_v2(3, 2)
    sa_v1 = SelfAttention_v1(3, 2)
    transfer_weights_v2_to_v1(sa_v2, sa_v1)
    assert torch.allclose(sa_v1(inputs), sa_v2(inputs), atol=1e-6)


def test_3_2_two_heads_two_dimensional_output():
    wrapper = build_2d_output_wrapper(d_in=3, context_length=6)
    assert len(wrapper.heads) == 2
    assert wrapper(torch.stack((inputs, inputs))).shape == (2, 6, 2)


def test_3_3_gpt2_small_size():
    mha = build_gpt2_small_mha()
    assert isinstance(mha, MultiHeadAttention)
    assert (mha.num_heads, mha.head_dim, mha.d_out) == (12, 64, 768)
    assert mha.W_query.weight.shape == (768, 768)
    assert mha.mask.shape == (1024, 1024)
    # 4 projections of 768 x 768 plus out_proj's 768 biases: 2,360,064 parameters
    assert sum(p.numel() for p in mha.parameters()) == 2_360_064
