"""Public tests for sections 2.2 and 2.3: the book's numbers for The Verdict.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import pytest

from simple_tokenizer import VERDICT, SimpleTokenizerV1, build_vocab, preprocess, read_verdict
from public_tests import expect_equal

BOOK_SENTENCE = '"It\'s the last he painted, you know," Mrs. Gisburn said with pardonable pride.'
BOOK_IDS = [1, 56, 2, 850, 988, 602, 533, 746, 5, 1126, 596, 5, 1, 67, 7, 38, 851, 1108, 754, 793, 7]
# The sentence decoded with the spaces removed before listing 2.4's printed marks, . , ; ? ! " (the
# docstring accepts them, and the companion code's , . : ; ? ! " ( ) ', which decode it as listing 2.3 does)
PRINTED_DECODE = '" It \' s the last he painted, you know," Mrs. Gisburn said with pardonable pride.'


def test_preprocess_the_books_example():
    expect_equal(preprocess("Hello, world. Is this-- a test?"), [
        "Hello", ",", "world", ".", "Is", "this", "--", "a", "test", "?"], 'preprocess("Hello, world. Is this-- a test?")')


def test_the_verdict_has_4690_tokens(tmp_path):
    raw_text = read_verdict()
    expect_equal(len(raw_text), 20479, 'the number of characters in The Verdict')
    # a copy with Windows line endings is refused, with the reason
    changed = tmp_path / "the-verdict.txt"
    changed.write_bytes(VERDICT.read_bytes().replace(b"\n", b"\r\n"))
    with pytest.raises(ValueError, match="sha256"):
        read_verdict(changed)
    preprocessed = preprocess(raw_text)
    expect_equal(len(preprocessed), 4690, 'the number of tokens in The Verdict')
    expect_equal(preprocessed[:30], [
        "I", "HAD", "always", "thought", "Jack", "Gisburn", "rather", "a", "cheap", "genius", "--", "though",
        "a", "good", "fellow", "enough", "--", "so", "it", "was", "no", "great", "surprise", "to", "me", "to",
        "hear", "that", ",", "in"], 'preprocessed[:30]')


def test_vocabulary_of_1130_sorted_tokens():
    vocab = build_vocab(preprocess(read_verdict()))
    expect_equal(len(vocab), 1130, 'the size of the vocabulary')
    expect_equal(list(vocab.items())[:8], [("!", 0), ('"', 1), ("'", 2), ("(", 3), (")", 4), (",", 5), ("--", 6),
                                       (".", 7)], 'list(vocab.items())[:8]')
    expect_equal(list(vocab.items())[45:51], [("Had", 45), ("Hang", 46), ("Has", 47), ("He", 48), ("Her", 49),
                                          ("Hermia", 50)], 'list(vocab.items())[45:51]')


def test_tokenizer_v1_encodes_and_decodes_the_books_sentence():
    tokenizer = SimpleTokenizerV1(build_vocab(preprocess(read_verdict())))
    ids = tokenizer.encode(BOOK_SENTENCE)
    expect_equal(ids, BOOK_IDS, 'tokenizer.encode(the book\'s sentence)')
    decoded = tokenizer.decode(ids)
    if decoded != PRINTED_DECODE:  # the marks of listing 2.4 as printed (. , ; ? ! "): accepted too
        expect_equal(decoded, '" It\' s the last he painted, you know," Mrs. Gisburn said with pardonable pride.', 'tokenizer.decode(its ids)')


def test_tokenizer_v1_uses_the_ids_of_its_vocabulary():
    # ids in an order other than the tokens': decode(encode(x)) still gives x back
    vocab = {"tea": 7, "?": 3, "Do": 10, "you": 0, "like": 42, ",": 5, "dear": 1}
    tokenizer = SimpleTokenizerV1(vocab)
    expect_equal(tokenizer.encode("Do you like tea, dear?"), [10, 0, 42, 7, 5, 1, 3], 'tokenizer.encode("Do you like tea, dear?")')
    expect_equal(tokenizer.decode([10, 0, 42, 7, 5, 1, 3]), "Do you like tea, dear?", 'tokenizer.decode([10, 0, 42, 7, 5, 1, 3])')


def test_tokenizer_v1_knows_no_unknown_words():
    tokenizer = SimpleTokenizerV1(build_vocab(preprocess(read_verdict())))
    with pytest.raises(KeyError):
        tokenizer.encode("Hello, do you like tea?")
