"""Public tests for section 2.5: byte pair encoding with tiktoken's GPT-2 encoding."""
from bpe import bpe_decode, bpe_encode

TEXT = "Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace."


def test_the_books_ids(gpt2):
    ids = bpe_encode(TEXT)
    assert ids == [15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114, 286, 617,
                   34680, 27271, 13]
    assert ids == gpt2.encode(TEXT, allowed_special={"<|endoftext|>"})


def test_decoding_gives_the_text_back(gpt2):
    assert bpe_decode(bpe_encode(TEXT)) == TEXT
    assert bpe_decode([50256]) == "<|endoftext|>"
