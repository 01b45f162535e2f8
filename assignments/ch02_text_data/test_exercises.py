"""Public tests for exercises 2.1 and 2.2.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from exercises import bpe_pieces, first_batch
from simple_tokenizer import read_verdict
from public_tests import expect_equal


def test_2_1_unknown_words_become_subword_pieces(gpt2):
    integers, pieces, text_back = bpe_pieces("Akwirw ier")
    expect_equal(list(integers), [33901, 86, 343, 86, 220, 959], 'the ids of "Akwirw ier"')
    expect_equal(list(pieces), ["Ak", "w", "ir", "w", " ", "ier"], 'the pieces of "Akwirw ier"')
    expect_equal(text_back, "Akwirw ier", 'the decoded text')


def test_2_2_other_strides_and_context_sizes(gpt2):
    inputs, targets = first_batch(read_verdict(), batch_size=4, max_length=2, stride=2)
    expect_equal(inputs, torch.tensor([[40, 367], [2885, 1464], [1807, 3619], [402, 271]]), 'the inputs (batch_size=4, max_length=2, stride=2)')
    expect_equal(targets, torch.tensor([[367, 2885], [1464, 1807], [3619, 402], [271, 10899]]), 'the targets (batch_size=4, max_length=2, stride=2)')
    inputs, targets = first_batch(read_verdict(), batch_size=4, max_length=8, stride=2)
    expect_equal(inputs[0], torch.tensor([40, 367, 2885, 1464, 1807, 3619, 402, 271]), 'the first input (max_length=8, stride=2)')
    expect_equal(inputs[3], torch.tensor([402, 271, 10899, 2138, 257, 7026, 15632, 438]), 'the fourth input (max_length=8, stride=2)')
    expect_equal(targets[:, :-1], inputs[:, 1:], 'the targets, one token on from the inputs')
