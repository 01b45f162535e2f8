"""Hidden checks for section 3.4, self-attention with trainable weights (20 points)."""
import pytest
import torch

from _attention import check_forward, check_forwards, check_seeded_init, check_trainable, linear_biases, linear_weights, reference
from autograder.grading.compare import check_calls, expect_close, seeded, set_seed
from autograder.grading import probes
from autograder.grading.kit import Case

points = pytest.mark.points
# (num_tokens, d_in, d_out, scale): d_in != d_out so a missing transpose shows; one token; large inputs
SHAPES = [(6, 3, 2, 1.0), (5, 4, 6, 1.0), (1, 3, 3, 1.0), (7, 5, 3, 1.0), (6, 4, 4, 6.0)]


def walkthrough_weights(d_in, d_out, seed):
    return [seeded(d_in, d_out, seed=seed + i).abs() for i in range(3)]


@points(2)
def test_compute_query_key_value(student, ref, seeds):
    """queries, keys and values as inputs @ W"""
    calls, expected = [], []
    for i, (n, d_in, d_out, scale) in enumerate(SHAPES):
        inputs, W = seeded(n, d_in, seed=seeds(f"inputs{i}"), scale=scale), walkthrough_weights(d_in, d_out, seeds(f"W{i}"))
        for x in (inputs, inputs[-1]):
            calls.append((x, *W))
            expected.append((ref.self_attention.compute_query_key_value(x, *W), f"input of shape {tuple(x.shape)}, d_out={d_out}"))
    for call, got, (want, label) in zip(calls, probes.calls(student, "self_attention", "compute_query_key_value", calls),
                                        expected):
        if not isinstance(got, list) or len(got) != 3:
            raise AssertionError("compute_query_key_value must return (queries, keys, values)")
        x, Wq = call[0], call[1]
        for name, g, w in zip(("queries", "keys", "values"), got, want):
            copied = {} if name == "queries" else {f"the {name} projected with W_query": x @ Wq}
            expect_close(g, w, f"{name} for {label}", copied)


@points(3)
def test_scaled_attn_weights(student, ref, seeds):
    """one query's weights: softmax(q K^T / sqrt(d_k)), large scores too"""
    cases = []
    for i, (n, _, d_out, scale) in enumerate(SHAPES):
        query, keys = seeded(d_out, seed=seeds(f"query{i}"), scale=scale), seeded(n, d_out, seed=seeds(f"keys{i}"), scale=scale)
        scores = keys @ query
        cases.append(Case((query, keys), ref.self_attention.scaled_attn_weights(query, keys),
                      f"scaled_attn_weights with {n} keys of size {d_out}",
                      {"no 1/sqrt(d_k) scaling": torch.softmax(scores, dim=-1),
                       "scores divided by d_k instead of sqrt(d_k)": torch.softmax(scores / d_out, dim=-1),
                       "scaled by the number of tokens instead of d_k": torch.softmax(scores / n**0.5, dim=-1)}))
    check_calls(student, "self_attention", "scaled_attn_weights", cases)


@points(3)
def test_context_vector_for_query(student, ref, seeds):
    """the section 3.4.1 walk-through for one query token"""
    cases = []
    for i, (n, d_in, d_out, scale) in enumerate(SHAPES):
        inputs, W = seeded(n, d_in, seed=seeds(f"inputs{i}"), scale=scale), walkthrough_weights(d_in, d_out, seeds(f"W{i}"))
        keys, values = inputs @ W[1], inputs @ W[2]
        for q in {0, n // 2, n - 1}:
            scores = (inputs[q] @ W[0]) @ keys.T
            cases.append(Case((inputs[q], inputs, *W), ref.self_attention.context_vector_for_query(inputs[q], inputs, *W),
                          f"context_vector_for_query of token {q} of {n}, d_in={d_in}, d_out={d_out}",
                          {"no 1/sqrt(d_k) scaling": torch.softmax(scores, dim=-1) @ values,
                           "weighted sum of the inputs instead of the values":
                               torch.softmax(scores / d_out**0.5, dim=-1) @ inputs,
                           **({"a fixed token (inputs[1], the book's 'journey') used as the query instead of x_query":
                               torch.softmax((inputs[1] @ W[0]) @ keys.T / d_out**0.5, dim=-1) @ values}
                              if q != 1 < n else {})}))
    check_calls(student, "self_attention", "context_vector_for_query", cases)


def _v1_weights(module):
    # v1 keeps (d_in, d_out) matrices; the mistake models use nn.Linear's (d_out, d_in)
    return tuple(getattr(module, n).detach().T for n in ("W_query", "W_key", "W_value"))


def _check_shapes(student, ref_class, seeds, weights):
    name = ref_class.__name__
    checks = []
    for i, (n, d_in, d_out, scale) in enumerate(SHAPES):
        module = reference(ref_class, d_in, d_out, seed=seeds(f"module{i}"))
        checks.append(dict(module="self_attention", name=name, args=(d_in, d_out), ref_module=module,
                           x=seeded(n, d_in, seed=seeds(f"x{i}"), scale=scale),
                           what=f"{name}({d_in}, {d_out}) on {n} tokens (scale {scale})",
                           mistake_config=dict(causal=False), weights=weights(module)))
    check_forwards(student, checks)


@points(3)
def test_self_attention_v1_forward(student, ref, seeds):
    """SelfAttention_v1 with given weights, on many shapes"""
    _check_shapes(student, ref.self_attention.SelfAttention_v1, seeds, _v1_weights)


@points(2)
def test_self_attention_v1_seeded_init(student, ref):
    """SelfAttention_v1 draws W_query, W_key, W_value with torch.rand in that order"""
    for d_in, d_out in ((3, 2), (4, 5)):
        set_seed(123)
        randn = {name: torch.randn(d_in, d_out) for name in ("W_query", "W_key", "W_value")}
        check_seeded_init(student, "self_attention", "SelfAttention_v1", (d_in, d_out),
                          ref.self_attention.SelfAttention_v1, 123, order=("W_query", "W_key", "W_value"),
                          mistakes={"torch.randn instead of torch.rand": randn})


@points(3)
def test_self_attention_v2_forward(student, ref, seeds):
    """SelfAttention_v2 with given weights, on many shapes"""
    _check_shapes(student, ref.self_attention.SelfAttention_v2, seeds, linear_weights)


@points(2)
def test_self_attention_v2_seeded_init_and_bias(student, ref, seeds):
    """SelfAttention_v2: nn.Linear layers created query, key, value; qkv_bias=True adds biases"""
    check_seeded_init(student, "self_attention", "SelfAttention_v2", (3, 2), ref.self_attention.SelfAttention_v2, 789,
                      order=("W_query", "W_key", "W_value"))
    module = reference(ref.self_attention.SelfAttention_v2, 4, 3, qkv_bias=True, seed=seeds("module"))
    x = seeded(5, 4, seed=seeds("x"))
    check_forward(student, "self_attention", "SelfAttention_v2", (4, 3), module, x,
                  "SelfAttention_v2(4, 3, qkv_bias=True)", kwargs={"qkv_bias": True},
                  mistake_config=dict(causal=False, bias=linear_biases(module)))


@points(2)
def test_self_attention_trainable(student, ref, seeds):
    """every weight of v1 and v2 gets its gradient from backward; the caller's input is left unchanged"""
    for i, cls in enumerate((ref.self_attention.SelfAttention_v1, ref.self_attention.SelfAttention_v2)):
        module = reference(cls, 4, 3, seed=seeds(f"module{i}"))
        check_trainable(student, "self_attention", cls.__name__, (4, 3), module, seeded(5, 4, seed=seeds(f"x{i}")))
