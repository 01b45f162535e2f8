"""Public tests for section 2.4: special tokens and SimpleTokenizerV2, with the book's numbers.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
from simple_tokenizer import preprocess, read_verdict
from special_tokens import SimpleTokenizerV2, build_vocab_with_special_tokens
from public_tests import expect_equal

TEXT = " <|endoftext|> ".join(("Hello, do you like tea?", "In the sunlit terraces of the palace."))


def test_vocabulary_of_1132_with_the_special_tokens_last():
    vocab = build_vocab_with_special_tokens(preprocess(read_verdict()))
    expect_equal(len(vocab), 1132, 'the size of the vocabulary with the special tokens')
    expect_equal(list(vocab.items())[-5:], [("younger", 1127), ("your", 1128), ("yourself", 1129),
                                        ("<|endoftext|>", 1130), ("<|unk|>", 1131)], 'list(vocab.items())[-5:]')


def test_tokenizer_v2_on_the_books_two_texts():
    tokenizer = SimpleTokenizerV2(build_vocab_with_special_tokens(preprocess(read_verdict())))
    ids = tokenizer.encode(TEXT)
    expect_equal(ids, [1131, 5, 355, 1126, 628, 975, 10, 1130, 55, 988, 956, 984, 722, 988, 1131, 7], 'tokenizer.encode(the book\'s two texts)')
    expect_equal(tokenizer.decode(ids), "<|unk|>, do you like tea? <|endoftext|> In the sunlit terraces of the <|unk|>.", 'tokenizer.decode(their ids)')


def test_tokenizer_v2_uses_the_ids_of_its_vocabulary():
    vocab = {"<|unk|>": 4, "tea": 0, "?": 9, "like": 2, "you": 7, "<|endoftext|>": 1}
    tokenizer = SimpleTokenizerV2(vocab)
    expect_equal(tokenizer.encode("Do you like tea? <|endoftext|> Tea?"), [4, 7, 2, 0, 9, 1, 4, 9], 'tokenizer.encode("Do you like tea? <|endoftext|> Tea?")')
    expect_equal(tokenizer.decode([4, 7, 2, 0, 9, 1, 4, 9]), "<|unk|> you like tea? <|endoftext|> <|unk|>?", 'tokenizer.decode([4, 7, 2, 0, 9, 1, 4, 9])')
