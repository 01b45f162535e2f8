"""Public tests for section 5.1.1: text to token ids and back (listing 5.1).

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from public_tests import expect_equal
from text_tokens import text_to_token_ids, token_ids_to_text


def test_book_every_effort_moves_you(tokenizer):
    ids = text_to_token_ids("Every effort moves you", tokenizer)
    expect_equal(ids, torch.tensor([[6109, 3626, 6100, 345]]), 'text_to_token_ids("Every effort moves you")')
    expect_equal(ids.dtype, torch.int64, "the ids' dtype")
    expect_equal(token_ids_to_text(ids, tokenizer), "Every effort moves you", "token_ids_to_text of them")


def test_end_of_text_is_one_token(tokenizer):
    ids = text_to_token_ids("The end.<|endoftext|>Once upon a time", tokenizer)
    expect_equal(ids[0].tolist().count(50256), 1, "how often <|endoftext|> (id 50256) occurs in the ids")
    expect_equal(ids.shape[0], 1, "the batch dimension (a batch of one)")


def test_round_trip_and_one_dimensional_ids(tokenizer):
    text = "  Indented,\nnew lines\tand tabs: kept as they are! "
    ids = text_to_token_ids(text, tokenizer)
    expect_equal(token_ids_to_text(ids, tokenizer), text, "token_ids_to_text(text_to_token_ids(text))")
    expect_equal(token_ids_to_text(ids[0], tokenizer), text, "token_ids_to_text of a 1-D tensor of ids")


def test_book_untrained_gpt_text(book_gpt, tokenizer):
    from generate import generate_text_simple
    idx = text_to_token_ids("Every effort moves you", tokenizer)
    out = generate_text_simple(book_gpt(), idx, max_new_tokens=10, context_size=256)
    expect_equal(token_ids_to_text(out, tokenizer), "Every effort moves you rentingetic wasnم refres RexMeCHicular stren",
                 "the untrained GPT's text")
