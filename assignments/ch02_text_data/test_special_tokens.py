"""Public tests for section 2.4: special tokens and SimpleTokenizerV2, with the book's numbers.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import hashlib

from special_tokens import SimpleTokenizerV2, build_vocab_with_special_tokens
from public_tests import expect_equal

TEXT = " <|endoftext|> ".join(("Hello, do you like tea?", "In the sunlit terraces of the palace."))
# These tests judge this part only. The book builds its vocabulary from The Verdict's tokens, which
# simple_tokenizer's preprocess splits off (its part, its tests): where yours does not give the book's
# tokens (their digest, below), the tests here use tokens and entries of the book's they hold themselves,
# so that a mistake in preprocess fails preprocess's tests, as the grade charges it there, not these.
BOOK_TOKENS_SHA256 = "ae862686a3b8eba039ff4791108638170613d8df058fc42e5db2fc2813351cbe"  # "\n".join(the 4,690)
NOT_THE_BOOKS = "your preprocess does not give the book's 4,690 tokens of The Verdict (see its tests)"
# The entries of the book's 1,132 that TEXT uses
BOOK_ENTRIES = {",": 5, ".": 7, "?": 10, "In": 55, "do": 355, "like": 628, "of": 722, "sunlit": 956, "tea": 975,
                "terraces": 984, "the": 988, "you": 1126, "<|endoftext|>": 1130, "<|unk|>": 1131}


def books_tokens():
    """The Verdict's tokens from your preprocess where they are the book's, else None."""
    try:
        from simple_tokenizer import preprocess, read_verdict
        tokens = preprocess(read_verdict())
        text = "\n".join(tokens)
    except Exception:  # preprocess's own tests say why
        return None
    return tokens if hashlib.sha256(text.encode("utf-8")).hexdigest() == BOOK_TOKENS_SHA256 else None


def test_vocabulary_of_1132_with_the_special_tokens_last():
    tokens = books_tokens()
    if tokens is None:  # judged on tokens given here (see BOOK_TOKENS_SHA256)
        vocab = build_vocab_with_special_tokens(["tea", "?", "Do", "you", "like", "tea", ",", "dear", "?"])
        expect_equal(list(vocab.items()), [(",", 0), ("?", 1), ("Do", 2), ("dear", 3), ("like", 4), ("tea", 5),
                                           ("you", 6), ("<|endoftext|>", 7), ("<|unk|>", 8)],
                     f"build_vocab_with_special_tokens of the tokens of 'tea? Do you like tea, dear?' ({NOT_THE_BOOKS})")
        return
    vocab = build_vocab_with_special_tokens(tokens)
    expect_equal(len(vocab), 1132, 'the size of the vocabulary with the special tokens')
    expect_equal(list(vocab.items())[-5:], [("younger", 1127), ("your", 1128), ("yourself", 1129),
                                        ("<|endoftext|>", 1130), ("<|unk|>", 1131)], 'list(vocab.items())[-5:]')


def test_tokenizer_v2_on_the_books_two_texts():
    tokens = books_tokens()
    # where your preprocess is not the book's: the entries of the book's vocabulary that the texts use
    tokenizer = SimpleTokenizerV2(build_vocab_with_special_tokens(tokens) if tokens is not None else dict(BOOK_ENTRIES))
    ids = tokenizer.encode(TEXT)
    expect_equal(ids, [1131, 5, 355, 1126, 628, 975, 10, 1130, 55, 988, 956, 984, 722, 988, 1131, 7], 'tokenizer.encode(the book\'s two texts)')
    expect_equal(tokenizer.decode(ids), "<|unk|>, do you like tea? <|endoftext|> In the sunlit terraces of the <|unk|>.", 'tokenizer.decode(their ids)')


def test_tokenizer_v2_uses_the_ids_of_its_vocabulary():
    vocab = {"<|unk|>": 4, "tea": 0, "?": 9, "like": 2, "you": 7, "<|endoftext|>": 1}
    tokenizer = SimpleTokenizerV2(vocab)
    expect_equal(tokenizer.encode("Do you like tea? <|endoftext|> Tea?"), [4, 7, 2, 0, 9, 1, 4, 9], 'tokenizer.encode("Do you like tea? <|endoftext|> Tea?")')
    expect_equal(tokenizer.decode([4, 7, 2, 0, 9, 1, 4, 9]), "<|unk|> you like tea? <|endoftext|> <|unk|>?", 'tokenizer.decode([4, 7, 2, 0, 9, 1, 4, 9])')
