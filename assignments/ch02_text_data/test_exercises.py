"""Public tests for exercises 2.1 and 2.2.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from data_sampling import create_dataloader_v1
from exercises import bpe_pieces, first_batch
from simple_tokenizer import read_verdict
from public_tests import expect_equal


def test_2_1_unknown_words_become_subword_pieces(gpt2):
    integers, pieces, text_back = bpe_pieces("Akwirw ier")
    expect_equal(list(integers), [33901, 86, 343, 86, 220, 959], 'the ids of "Akwirw ier"')
    expect_equal(list(pieces), ["Ak", "w", "ir", "w", " ", "ier"], 'the pieces of "Akwirw ier"')
    expect_equal(text_back, "Akwirw ier", 'the decoded text')


def test_2_2_other_strides_and_context_sizes(gpt2):
    text = read_verdict()
    if not loader_is_the_books(text):  # judged beside your own loader (see loader_is_the_books)
        for max_length in (2, 8):
            settings = dict(batch_size=4, max_length=max_length, stride=2)
            got = first_batch(text, **settings)
            expected = next(iter(create_dataloader_v1(text, **settings, shuffle=False)))
            what = (f"first_batch(the Verdict, {settings}), beside your create_dataloader_v1's first batch unshuffled "
                    "(yours differs from the book's: see data_sampling's tests)")
            assert isinstance(got, (list, tuple)) and len(got) == 2, f"{what}: return (inputs, targets)"
            expect_equal(got[0], expected[0], f"{what}: the inputs")
            expect_equal(got[1], expected[1], f"{what}: the targets")
        return
    inputs, targets = first_batch(text, batch_size=4, max_length=2, stride=2)
    expect_equal(inputs, torch.tensor([[40, 367], [2885, 1464], [1807, 3619], [402, 271]]), 'the inputs (batch_size=4, max_length=2, stride=2)')
    expect_equal(targets, torch.tensor([[367, 2885], [1464, 1807], [3619, 402], [271, 10899]]), 'the targets (batch_size=4, max_length=2, stride=2)')
    inputs, targets = first_batch(text, batch_size=4, max_length=8, stride=2)
    expect_equal(inputs[0], torch.tensor([40, 367, 2885, 1464, 1807, 3619, 402, 271]), 'the first input (max_length=8, stride=2)')
    expect_equal(inputs[3], torch.tensor([402, 271, 10899, 2138, 257, 7026, 15632, 438]), 'the fourth input (max_length=8, stride=2)')
    expect_equal(targets[:, :-1], inputs[:, 1:], 'the targets, one token on from the inputs')


def loader_is_the_books(text):
    """Whether your create_dataloader_v1 gives the book's first batch (batch_size=4, max_length=2,
    stride=2, unshuffled). Where it does not (data_sampling's tests say why), exercise 2.2 is
    judged on what it asks, beside your own loader, as the grade judges it: a mistake in the loader
    is charged in data_sampling, not here."""
    try:
        inputs, targets = next(iter(create_dataloader_v1(text, batch_size=4, max_length=2, stride=2, shuffle=False)))
        return torch.equal(inputs, torch.tensor([[40, 367], [2885, 1464], [1807, 3619], [402, 271]])) and \
            torch.equal(targets, torch.tensor([[367, 2885], [1464, 1807], [3619, 402], [271, 10899]]))
    except Exception:
        return False
