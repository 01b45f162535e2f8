"""Public tests for section 2.5: byte pair encoding with tiktoken's GPT-2 encoding.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
from bpe import bpe_decode, bpe_encode
from public_tests import expect_equal

TEXT = "Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace."


def test_the_books_ids(gpt2):
    ids = bpe_encode(TEXT)
    expect_equal(ids, [15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114, 286, 617,
                   34680, 27271, 13], 'bpe_encode(TEXT) beside tiktoken\'s own encoding')
    expect_equal(ids, gpt2.encode(TEXT, allowed_special={"<|endoftext|>"}), 'bpe_encode(TEXT) beside tiktoken\'s own encoding')


def test_decoding_gives_the_text_back(gpt2):
    expect_equal(bpe_decode(bpe_encode(TEXT)), TEXT, 'bpe_decode(bpe_encode(TEXT))')
    expect_equal(bpe_decode([50256]), "<|endoftext|>", 'bpe_decode([50256])')
    # any text: a character of several bytes (accents, CJK, emoji) may be spread over several ids
    text = "naïve café, 東京 🙂"
    expect_equal(bpe_decode(gpt2.encode(text)), text, f'bpe_decode of the GPT-2 ids of {text!r}')
