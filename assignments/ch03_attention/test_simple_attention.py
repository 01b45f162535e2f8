"""Public tests for section 3.3: the values the book prints for "Your journey starts with one step".

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch
from public_tests import expect_close

from simple_attention import (
    all_context_vectors, attn_scores_for_query, attn_scores_loop, attn_scores_matmul,
    attn_weights_from_scores, context_vector_for_query, dot_product_loop, inputs,
    normalize_by_sum, softmax_naive,
)

# Printed with four decimals in the book.
ATOL = 1e-4
SCORES_JOURNEY = torch.tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])
ALL_SCORES = torch.tensor([
    [0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
    [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
    [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
    [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
    [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
    [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450],
])
ALL_CONTEXT = torch.tensor([
    [0.4421, 0.5931, 0.5790],
    [0.4419, 0.6515, 0.5683],
    [0.4431, 0.6496, 0.5671],
    [0.4304, 0.6298, 0.5510],
    [0.4671, 0.5910, 0.5266],
    [0.4177, 0.6503, 0.5645],
])


def test_dot_product_loop_matches_torch_dot():
    res = dot_product_loop(inputs[0], inputs[1])
    expect_close(res, torch.tensor(0.9544), "dot_product_loop(inputs[0], inputs[1])", atol=ATOL)
    expect_close(res, torch.dot(inputs[0], inputs[1]), "dot_product_loop(inputs[0], inputs[1]) beside torch.dot")


def test_scores_of_journey():
    expect_close(attn_scores_for_query(inputs, inputs[1]), SCORES_JOURNEY, 'the scores of "journey"', atol=ATOL)


def test_sum_normalisation():
    weights = normalize_by_sum(SCORES_JOURNEY)
    expected = torch.tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
    expect_close(weights, expected, "normalize_by_sum(scores of journey)", atol=ATOL)
    expect_close(weights.sum(), torch.tensor(1.0), "the sum of normalize_by_sum's weights")


def test_softmax_naive_and_torch_softmax_agree():
    expected = torch.tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
    expect_close(softmax_naive(SCORES_JOURNEY), expected, "softmax_naive(scores of journey)", atol=ATOL)
    expect_close(attn_weights_from_scores(SCORES_JOURNEY), expected, "attn_weights_from_scores(scores of journey)",
                 atol=ATOL)


def test_context_vector_of_journey():
    weights = attn_weights_from_scores(attn_scores_for_query(inputs, inputs[1]))
    expect_close(context_vector_for_query(inputs, weights), torch.tensor([0.4419, 0.6515, 0.5683]),
                 'the context vector of "journey"', atol=ATOL)


def test_all_scores_loop_and_matmul():
    expect_close(attn_scores_loop(inputs), ALL_SCORES, "attn_scores_loop(inputs)", atol=ATOL)
    expect_close(attn_scores_matmul(inputs), ALL_SCORES, "attn_scores_matmul(inputs)", atol=ATOL)


def test_all_weights_rows_sum_to_one():
    weights = attn_weights_from_scores(ALL_SCORES)
    over_columns = ("a softmax over the columns (dim=0): each row's weights must sum to 1",
                    torch.softmax(ALL_SCORES, dim=0)[0])
    expect_close(weights[0], torch.tensor([0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452]),
                 "the first row of attn_weights_from_scores(all scores)", atol=ATOL, mistakes=[over_columns])
    expect_close(weights.sum(dim=-1), torch.ones(6), "the sums of attn_weights_from_scores's rows")


def test_all_context_vectors():
    expect_close(all_context_vectors(inputs), ALL_CONTEXT, "all_context_vectors(inputs)", atol=ATOL)
