"""Hidden checks for sections 2.2 and 2.3: the split, the vocabulary, SimpleTokenizerV1 (25 points)."""
import pytest

from autograder.grading.compare import value
from _text_data import (CASELESS, STORY, TEXTS, check_decode, encode_error_mistakes, expect, sorted_caseless,
                        permuted_vocab, split, split_mistakes, verdict, verdict_tokens, vocab_mistakes)

from autograder.grading.kit import seed_of
from autograder.grading.result import failure

points = pytest.mark.points
V1_UNKNOWN = ("an unknown word given an id by SimpleTokenizerV1 (version 1 raises KeyError: mapping unknown words "
              "to <|unk|> is version 2's job)")


@points(6)
def test_preprocess(student, ref):
    """preprocess splits on , . : ; ? _ ! " ( ) ' -- and whitespace (The Verdict: 4,690 tokens)"""
    texts = [verdict(ref), *TEXTS, STORY]
    reply = student.plan([{"let": f"t{i}", "call": "simple_tokenizer.preprocess", "args": [text], "return": True}
                          for i, text in enumerate(texts)])
    for i, text in enumerate(texts):
        where = "The Verdict" if i == 0 else repr(text[:60])
        expect(value(reply, f"t{i}", f"preprocess of {where}"), split(text), f"preprocess of {where}",
               lambda text=text: split_mistakes(text))


@points(5)
def test_build_vocab(student, ref):
    """build_vocab numbers the sorted distinct tokens from 0 (The Verdict: 1,130 entries)"""
    token_lists = [list(verdict_tokens(ref)), split(STORY), split(TEXTS[1]) * 2, ["b", "a", "b", "C", "a"], []]
    reply = student.plan([{"let": f"v{i}", "call": "simple_tokenizer.build_vocab", "args": [tokens],
                           "return": True} for i, tokens in enumerate(token_lists)])
    for i, tokens in enumerate(token_lists):
        where = "The Verdict's tokens" if i == 0 else f"{len(tokens)} tokens {tokens[:6]!r}..."
        answer = value(reply, f"v{i}", f"build_vocab of {where}")
        mistakes = vocab_mistakes(tokens)
        if sorted_caseless(answer, tokens):
            mistakes[CASELESS] = answer
        expect(answer, ref.simple_tokenizer.build_vocab(tokens), f"build_vocab of {where}", mistakes)


def _tokenizer_cases(ref):
    """(vocabulary, texts in it) pairs: The Verdict's own, and a story's with its ids permuted."""
    story_vocab = permuted_vocab(split(STORY), seed=seed_of("test_hidden_simple_tokenizer::_tokenizer_cases"))
    return [(ref.simple_tokenizer.build_vocab(verdict_tokens(ref)),
             ['"It\'s the last he painted, you know," Mrs. Gisburn said with pardonable pride.',
              "I HAD always thought Jack Gisburn rather a cheap genius--though a good fellow enough"]),
            (story_vocab, [STORY, '"Come in," the keeper\'s daughter said: "the storm (it was late) is over."',
                           "the end_ of the boats -- all"])]


@points(7)
def test_simple_tokenizer_v1_encode(student, ref):
    """SimpleTokenizerV1.encode: the split rule and the vocabulary's own ids (ids in any order)"""
    for c, (vocab, texts) in enumerate(_tokenizer_cases(ref)):
        steps = [{"let": "tok", "call": "simple_tokenizer.SimpleTokenizerV1", "args": [vocab]}]
        steps += [{"let": f"e{i}", "call": "tok.encode", "args": [text], "return": True} for i, text in enumerate(texts)]
        reply = student.plan(steps)
        for i, text in enumerate(texts):
            what = f"SimpleTokenizerV1.encode({text[:50]!r}...) with a vocabulary of {len(vocab)} tokens"
            ids = value(reply, f"e{i}", what, encode_error_mistakes())
            expect(ids, [vocab[t] for t in split(text)], what, lambda text=text, vocab=vocab: {
                name: [vocab.get(t, -1) for t in tokens] for name, tokens in split_mistakes(text).items()})
    # a word missing from the vocabulary: V1 raises KeyError (the <|unk|> token is version 2's)
    vocab, _ = _tokenizer_cases(ref)[0]
    text = "Hello, do you like tea?"
    reply = student.plan([{"let": "tok", "call": "simple_tokenizer.SimpleTokenizerV1", "args": [vocab]},
                          {"let": "unk", "call": "tok.encode", "args": [text], "return": True}])
    what = f"SimpleTokenizerV1.encode({text!r}) with The Verdict's vocabulary (no 'Hello' in it)"
    why = reply.failed("unk")
    if why is None:
        raise failure(f"{what} returned {str(reply.values['unk'])[:80]}: V1 raises KeyError for a word missing from "
                      "the vocabulary.", V1_UNKNOWN)
    if "KeyError" not in why:
        raise AssertionError(f"{what}: {why[:300]} (expected a KeyError)")


@points(7)
def test_simple_tokenizer_v1_decode(student, ref):
    """SimpleTokenizerV1.decode: one space between tokens, none before punctuation; encode(decode(ids)) == ids"""
    for vocab, texts in _tokenizer_cases(ref):
        id_lists = [[vocab[t] for t in split(text)] for text in texts]
        steps = [{"let": "tok", "call": "simple_tokenizer.SimpleTokenizerV1", "args": [vocab]}]
        steps += [{"let": f"d{i}", "call": "tok.decode", "args": [ids], "return": True} for i, ids in enumerate(id_lists)]
        reply = student.plan(steps)
        by_id = {i: t for t, i in vocab.items()}
        for i, ids in enumerate(id_lists):
            tokens = [by_id[j] for j in ids]
            what = f"SimpleTokenizerV1.decode of the ids of {texts[i][:50]!r}..."
            answer = value(reply, f"d{i}", what)
            check_decode(answer, tokens, ids, vocab, what)
            # the property the book shows: decoding then encoding again gives the ids back
            expect(ref.simple_tokenizer.SimpleTokenizerV1(vocab).encode(answer), ids,
                   f"encode(decode(ids)) for {texts[i][:50]!r}...")
