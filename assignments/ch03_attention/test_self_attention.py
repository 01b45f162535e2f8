"""Public tests for section 3.4: the walk-through for "journey" and listings 3.1 and 3.2.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch
from public_tests import expect_close, expect_equal

from self_attention import (
    SelfAttention_v1, SelfAttention_v2, compute_query_key_value, context_vector_for_query,
    scaled_attn_weights,
)

# "Your journey starts with one step", as simple_attention.py holds it (section 3.3.1): this part's
# tests use its own module only, so that a mistake in an earlier part fails that part's tests alone.
inputs = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                       [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])
ATOL = 1e-4


def book_weights():
    """W_query, W_key, W_value as section 3.4.1 draws them (seed 123, d_in=3, d_out=2)."""
    torch.manual_seed(123)
    return [torch.rand(3, 2) for _ in range(3)]


def test_query_of_journey_and_shapes():
    queries, keys, values = compute_query_key_value(inputs, *book_weights())
    expect_close(queries[1], torch.tensor([0.4306, 1.4551]), 'the query of "journey"', atol=ATOL)
    expect_equal(tuple(keys.shape), (6, 2), "the shape of the keys")
    expect_equal(tuple(values.shape), (6, 2), "the shape of the values")


def test_scaled_weights_of_journey():
    queries, keys, _ = compute_query_key_value(inputs, *book_weights())
    expected = torch.tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])
    unscaled = ("weights without the scaling by 1/sqrt(d_k)", torch.softmax(queries[1] @ keys.T, dim=-1))
    expect_close(scaled_attn_weights(queries[1], keys), expected, 'the scaled weights of "journey"', atol=ATOL,
                 mistakes=[unscaled])


def test_context_vector_of_journey():
    z_2 = context_vector_for_query(inputs[1], inputs, *book_weights())
    expect_close(z_2, torch.tensor([0.3061, 0.8210]), 'the context vector of "journey"', atol=ATOL)


def test_self_attention_v1_seed_123():
    torch.manual_seed(123)
    sa_v1 = SelfAttention_v1(3, 2)
    expected = torch.tensor([[0.2996, 0.8053], [0.3061, 0.8210], [0.3058, 0.8203],
                             [0.2948, 0.7939], [0.2927, 0.7891], [0.2990, 0.8040]])
    expect_close(sa_v1(inputs), expected, "SelfAttention_v1(3, 2)(inputs) under seed 123", atol=ATOL)


def test_self_attention_v2_seed_789():
    torch.manual_seed(789)
    sa_v2 = SelfAttention_v2(3, 2)
    expected = torch.tensor([[-0.0739, 0.0713], [-0.0748, 0.0703], [-0.0749, 0.0702],
                             [-0.0760, 0.0685], [-0.0763, 0.0679], [-0.0754, 0.0693]])
    expect_close(sa_v2(inputs), expected, "SelfAttention_v2(3, 2)(inputs) under seed 789", atol=ATOL)


def test_graded_structure_of_v1_and_v2():
    """What the grader checks besides values: names, creation order (the seeded tests above), trainable weights."""
    for sa in (SelfAttention_v1(3, 2), SelfAttention_v2(3, 2)):
        names = [name for name, _ in sa.named_parameters()]
        assert names in (["W_query", "W_key", "W_value"], ["W_query.weight", "W_key.weight", "W_value.weight"]), \
            f"parameters {names}: the book's W_query, W_key, W_value, each an nn.Parameter (v1) or nn.Linear (v2)"
        assert all(p.requires_grad for p in sa.parameters()), "every weight must be trainable"
        x = inputs.clone()
        sa(x).sum().backward()
        assert torch.equal(x, inputs), "forward must not change its input"
        assert all(p.grad is not None for p in sa.parameters()), "every weight must get a gradient"
