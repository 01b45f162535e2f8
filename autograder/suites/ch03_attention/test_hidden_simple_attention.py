"""Hidden checks for section 3.3, simplified self-attention (15 points)."""
import pytest
import torch

from _attention import with_picture
from autograder.grading import probes
from autograder.grading.compare import check_calls, expect_close, seeded, yours_vs_expected
from autograder.grading.diagnose import LOOP_SHORT
from autograder.grading.kit import Case
from autograder.grading.result import failure

points = pytest.mark.points
# (num_tokens, d, scale): the book's size, wider embeddings, one token, and large magnitudes
SHAPES = [(6, 3, 1.0), (4, 7, 1.0), (1, 5, 1.0), (9, 2, 1.0), (5, 4, 8.0)]


FIXED_QUERY = "a fixed token (inputs[1], the book's 'journey') used as the query instead of the query argument"
NAIVE = "exp(x) / sum(exp(x)) without subtracting the maximum (overflows; torch.softmax does not)"


def _naive_softmax(scores):
    return torch.exp(scores) / torch.exp(scores).sum(dim=-1, keepdim=True)


def inputs_for(case, seed):
    num_tokens, d, scale = case
    return seeded(num_tokens, d, seed=seed, scale=scale)


@points(1)
def test_dot_product_loop(student, seeds):
    """dot_product_loop equals torch.dot"""
    cases = []
    for i, (_, d, scale) in enumerate(SHAPES):
        x, y = seeded(d, seed=seeds(f"x{i}"), scale=scale), seeded(d, seed=seeds(f"y{i}"), scale=scale)
        cases.append(Case((x, y), torch.dot(x, y), f"dot_product_loop on vectors of size {d}",
                          {LOOP_SHORT: torch.dot(x[:-1], y[:-1])} if d > 1 else None))
    check_calls(student, "simple_attention", "dot_product_loop", cases)


@points(2)
def test_attn_scores_for_query(student, ref, seeds):
    """scores of one query against every token"""
    cases = []
    for i, case in enumerate(SHAPES):
        inputs = inputs_for(case, seeds(i))
        for q in {0, case[0] - 1}:
            cases.append(Case((inputs, inputs[q]), ref.simple_attention.attn_scores_for_query(inputs, inputs[q]),
                          f"attn_scores_for_query, {case[0]} tokens of size {case[1]}, query {q}",
                          {"scores of the inputs with themselves (x_i . x_i)": (inputs * inputs).sum(-1),
                           **({FIXED_QUERY: inputs @ inputs[1]} if q != 1 < case[0] else {})}))
    check_calls(student, "simple_attention", "attn_scores_for_query", cases)


@points(2)
def test_attn_scores_loop(student, ref, seeds):
    """all scores with two loops"""
    cases = []
    for i, case in enumerate(SHAPES):
        inputs = inputs_for(case, seeds(i))
        cases.append(Case((inputs,), ref.simple_attention.attn_scores_matmul(inputs),
                      f"attn_scores_loop on {case[0]} tokens of size {case[1]}", None))
    check_calls(student, "simple_attention", "attn_scores_loop", cases)


@points(2)
def test_attn_scores_matmul(student, ref, seeds):
    """all scores as one matrix product"""
    cases = []
    for i, case in enumerate(SHAPES):
        inputs = inputs_for(case, seeds(i))
        cases.append(Case((inputs,), ref.simple_attention.attn_scores_matmul(inputs),
                      f"attn_scores_matmul on {case[0]} tokens of size {case[1]}",
                      {"inputs.T @ inputs instead of inputs @ inputs.T": inputs.T @ inputs}))
    check_calls(student, "simple_attention", "attn_scores_matmul", cases)


@points(1)
def test_normalize_by_sum(student, ref, seeds):
    """sum-normalisation of one query's scores"""
    cases = []
    for i, (n, _, _) in enumerate(SHAPES):
        scores = seeded(n, seed=seeds(i)).abs() + 0.1
        cases.append(Case((scores,), ref.simple_attention.normalize_by_sum(scores), f"normalize_by_sum of {n} scores",
                          {"softmax instead of dividing by the sum": torch.softmax(scores, dim=-1),
                           "divided by the vector's length (.norm()) instead of its sum": scores / scores.norm()}))
    check_calls(student, "simple_attention", "normalize_by_sum", cases)


@points(1)
def test_normalize_by_sum_adds_up_to_one(student, seeds):
    """normalize_by_sum gives one weight per score, and they add up to 1, on small and large scores alike"""
    cases = []
    for i, (n, _, scale) in enumerate(SHAPES):
        scores = seeded(n, seed=seeds(i), scale=10 * scale).abs() + 0.1
        cases.append(Case((scores,), torch.tensor(1.0), f"the sum of normalize_by_sum's weights for {n} scores",
                          {"divided by the vector's length (.norm()) instead of its sum": (scores / scores.norm()).sum()}))
    answers = probes.calls(student, "simple_attention", "normalize_by_sum", [case.args for case in cases])
    for i, case in enumerate(cases):
        weights, (scores,) = answers[i], case.args
        # the sum alone would pass any fixed weights that add up to 1, whatever the scores
        if not isinstance(weights, torch.Tensor) or weights.shape != scores.shape:
            yours = f"shape {tuple(weights.shape)}" if isinstance(weights, torch.Tensor) else f"a {type(weights).__name__}"
            raise failure(f"normalize_by_sum of {len(scores)} scores: " + yours_vs_expected(
                yours=yours, yours_are="", expected=f"one weight per score, shape {tuple(scores.shape)}") + ".")
        expect_close(weights.sum(), case.expected, case.what, case.mistakes)


@points(1)
def test_softmax_naive(student, ref, seeds):
    """softmax_naive on one query's scores"""
    cases = []
    for i, (n, _, _) in enumerate(SHAPES):
        scores = seeded(n, seed=seeds(i), scale=2.0)
        cases.append(Case((scores,), ref.simple_attention.softmax_naive(scores), f"softmax_naive of {n} scores",
                      {"exp(x) without dividing by the sum": torch.exp(scores),
                       "dividing by the plain sum (no exp)": scores / scores.sum()}))
    check_calls(student, "simple_attention", "softmax_naive", cases)


@points(2)
def test_attn_weights_from_scores(student, ref, seeds):
    """torch.softmax over the last dimension, for one query and for all, large scores too"""
    cases = []
    for i, (n, _, scale) in enumerate(SHAPES):
        # + 100: exp() overflows above ~88, so only a softmax that subtracts the maximum passes
        for scores in (seeded(n, seed=seeds(f"row{i}"), scale=scale * 3), seeded(n, n, seed=seeds(f"matrix{i}"), scale=scale * 3),
                       seeded(n, seed=seeds(f"large{i}")) + 100.0):
            cases.append(Case((scores,), ref.simple_attention.attn_weights_from_scores(scores),
                          f"attn_weights_from_scores on scores of shape {tuple(scores.shape)}",
                          {"softmax over dim=0 (columns) instead of dim=-1 (rows)": torch.softmax(scores, dim=0),
                           NAIVE: _naive_softmax(scores)}))
    book = ref.simple_attention.inputs
    with_picture(lambda: check_calls(student, "simple_attention", "attn_weights_from_scores", cases), student, ref,
                 "simple_attention", "attn_weights_from_scores", (book @ book.T,),
                 "attn_weights_from_scores(inputs @ inputs.T), the book's sentence")


@points(1)
def test_context_vector_for_query(student, ref, seeds):
    """one context vector as the weighted sum of the inputs"""
    cases = []
    for i, case in enumerate(SHAPES):
        inputs = inputs_for(case, seeds(f"inputs{i}"))
        weights = torch.softmax(seeded(case[0], seed=seeds(f"weights{i}")), dim=0)
        cases.append(Case((inputs, weights), ref.simple_attention.context_vector_for_query(inputs, weights),
                          f"context_vector_for_query with {case[0]} tokens of size {case[1]}",
                          {LOOP_SHORT: weights[:-1] @ inputs[:-1]} if case[0] > 1 else None))
    check_calls(student, "simple_attention", "context_vector_for_query", cases)


@points(2)
def test_all_context_vectors(student, ref, seeds):
    """all context vectors: softmax(X X^T) X, including large inputs"""
    cases = []
    for i, case in enumerate(SHAPES):
        inputs = inputs_for(case, seeds(i))
        cases.append(Case((inputs,), ref.simple_attention.all_context_vectors(inputs),
                      f"all_context_vectors on {case[0]} tokens of size {case[1]} (scale {case[2]})",
                      {"softmax over dim=0 instead of dim=-1": lambda inputs=inputs: torch.softmax(inputs @ inputs.T, dim=0) @ inputs,
                       "unnormalised scores times the inputs": lambda inputs=inputs: (inputs @ inputs.T) @ inputs,
                       NAIVE: lambda inputs=inputs: _naive_softmax(inputs @ inputs.T) @ inputs}))
    check_calls(student, "simple_attention", "all_context_vectors", cases)
