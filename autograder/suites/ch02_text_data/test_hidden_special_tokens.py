"""Hidden checks for section 2.4: special tokens and SimpleTokenizerV2 (15 points)."""
import pytest

from autograder.grading.compare import value
from _text_data import (ENDOFTEXT, PRINTED_2_4, STORY, TEXTS, UNK, check_decode, expect, permuted_vocab, split,
                        verdict_tokens)

from autograder.grading.kit import seed_of

points = pytest.mark.points
NO_UNK = "no <|unk|> for unknown words (a word missing from the vocabulary must become <|unk|>, not a KeyError)"


def _special_vocab_mistakes(tokens):
    words = sorted(set(tokens))
    return {
        "the special tokens put first (extend the sorted list with them, so the words keep their ids)":
            {t: i for i, t in enumerate([ENDOFTEXT, UNK, *words])},
        "<|unk|> before <|endoftext|> (the book adds <|endoftext|> first)":
            {t: i for i, t in enumerate([*words, UNK, ENDOFTEXT])},
        "the special tokens sorted in with the words": {t: i for i, t in enumerate(sorted({*words, ENDOFTEXT, UNK}))},
        "only <|unk|> added": {t: i for i, t in enumerate([*words, UNK])},
        "only <|endoftext|> added": {t: i for i, t in enumerate([*words, ENDOFTEXT])},
    }


@points(4)
def test_build_vocab_with_special_tokens(student, ref):
    """the sorted vocabulary, then <|endoftext|> and <|unk|> (The Verdict: 1,132 entries)"""
    token_lists = [list(verdict_tokens(ref)), split(STORY), ["b", "a", "b"]]
    reply = student.plan([{"let": f"v{i}", "call": "special_tokens.build_vocab_with_special_tokens",
                           "args": [tokens], "return": True} for i, tokens in enumerate(token_lists)])
    for i, tokens in enumerate(token_lists):
        what = f"build_vocab_with_special_tokens of {'The Verdict' if i == 0 else f'{len(tokens)} tokens'}"
        expect(value(reply, f"v{i}", what), ref.special_tokens.build_vocab_with_special_tokens(tokens), what,
               _special_vocab_mistakes(tokens))


def _cases(ref):
    """(vocabulary, texts with unknown words, <|endoftext|>, --, quotes): The Verdict's, and a
    story's with its ids permuted."""
    verdict_vocab = ref.special_tokens.build_vocab_with_special_tokens(verdict_tokens(ref))
    story_vocab = permuted_vocab(split(STORY), seed=seed_of("test_hidden_special_tokens::_cases"), specials=(ENDOFTEXT, UNK))
    return [(verdict_vocab, [" <|endoftext|> ".join(("Hello, do you like tea?", "In the sunlit terraces of the palace.")),
                             "The storm -- Gisburn's \"last\" picture? <|endoftext|> (It was) Jack's: _never_ again."]),
            (story_vocab, [STORY + " <|endoftext|> " + TEXTS[1], "<|endoftext|>", "zebra -- \"quick\" lighthouse!"])]


@points(6)
def test_simple_tokenizer_v2_encode(student, ref):
    """SimpleTokenizerV2.encode: unknown words become <|unk|>, <|endoftext|> stays one token"""
    for vocab, texts in _cases(ref):
        steps = [{"let": "tok", "call": "special_tokens.SimpleTokenizerV2", "args": [vocab]}]
        steps += [{"let": f"e{i}", "call": "tok.encode", "args": [text], "return": True} for i, text in enumerate(texts)]
        reply = student.plan(steps)
        for i, text in enumerate(texts):
            what = f"SimpleTokenizerV2.encode({text[:50]!r}...) with a vocabulary of {len(vocab)} tokens"
            ids = value(reply, f"e{i}", what, [(r"KeyError", NO_UNK)])

            def ids_of(tokens, unknown=UNK):
                return [vocab.get(t, vocab[unknown] if unknown else None) for t in tokens if unknown or t in vocab]
            # listing 2.4 as printed splits on fewer characters: the book's own code, so full marks too
            expect(ids, ids_of(split(text)), what, {
                "unknown words dropped instead of replaced by <|unk|>": ids_of(split(text), None),
                "unknown words mapped to <|endoftext|> instead of <|unk|>": ids_of(split(text), ENDOFTEXT),
            }, accepted=[ids_of(split(text, PRINTED_2_4))])


@points(5)
def test_simple_tokenizer_v2_decode(student, ref):
    """SimpleTokenizerV2.decode: the tokens of the ids, one space apart, none before punctuation"""
    for vocab, texts in _cases(ref):
        by_id = {i: t for t, i in vocab.items()}
        id_lists = [[vocab.get(t, vocab[UNK]) for t in split(text)] for text in texts]
        steps = [{"let": "tok", "call": "special_tokens.SimpleTokenizerV2", "args": [vocab]}]
        steps += [{"let": f"d{i}", "call": "tok.decode", "args": [ids], "return": True} for i, ids in enumerate(id_lists)]
        reply = student.plan(steps)
        for i, ids in enumerate(id_lists):
            what = f"SimpleTokenizerV2.decode of the ids of {texts[i][:50]!r}..."
            check_decode(value(reply, f"d{i}", what), [by_id[j] for j in ids], ids, vocab, what)
