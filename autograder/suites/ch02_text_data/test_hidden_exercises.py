"""Hidden checks for exercises 2.1 and 2.2 (10 points)."""
import pytest

from autograder.grading.compare import value
from _text_data import (LOADER_MISTAKES, STORY, encode, expect, gpt2, loader_first_batches, per_reference, same,
                        verdict)
from autograder.grading.kit import charged

points = pytest.mark.points
SECOND = "the second batch: the loader's iterator advanced twice (next(iter(dataloader)) gives the first)"
BYTES = "the pieces as bytes (decode_single_token_bytes) instead of str: decode([token_id]) for each id"


@points(5)
def test_bpe_pieces(student):
    """exercise 2.1: each GPT-2 id of an unknown word, the text of each id, and the round trip"""
    texts = ["Akwirw ier", "someunknownPlace", STORY[:80], "naïve 🙂 end"]
    reply = student.plan([{"let": f"p{i}", "call": "exercises.bpe_pieces", "args": [text], "return": True}
                          for i, text in enumerate(texts)])
    for i, text in enumerate(texts):
        what = f"bpe_pieces({text!r})"
        ids = gpt2().encode(text, allowed_special={"<|endoftext|>"})
        expected = [ids, [gpt2().decode([t]) for t in ids], text]
        expect(value(reply, f"p{i}", what, [(r"is a bytes", BYTES)]), expected, what, {
            "each piece decoded from the whole list (decode(integers)) instead of its own id":
                [ids, [text] * len(ids), text]})


@per_reference
def _first_batch(ref, text, settings):
    return list(next(iter(ref.data_sampling.create_dataloader_v1(text, **dict(settings), shuffle=False))))


@per_reference
def _second_batch(ref, text, settings):
    batches = iter(ref.data_sampling.create_dataloader_v1(text, **dict(settings), shuffle=False))
    next(batches)
    return list(next(batches))


@points(5)
def test_first_batch(student, ref):
    """exercise 2.2: the first unshuffled batch with other strides and context sizes"""
    # the first batch needs the story's first ids only: its opening keeps the loaders small
    opening = verdict(ref)[:1500]
    cases = [(opening, dict(batch_size=4, max_length=2, stride=2)),
             (opening, dict(batch_size=4, max_length=8, stride=2)),
             (STORY, dict(batch_size=3, max_length=5, stride=3))]
    reply = student.plan([{"let": f"b{i}", "call": "exercises.first_batch", "args": [text], "kwargs": settings,
                           "return": True} for i, (text, settings) in enumerate(cases)])
    for i, (text, settings) in enumerate(cases):
        what = f"first_batch({'the opening of The Verdict' if text == opening else 'a story'}, {settings})"
        answer = value(reply, f"b{i}", what)
        expected = _first_batch(ref, text, tuple(settings.items()))
        if same(answer, expected):
            continue
        # right with a mistake data_sampling was charged with: that loader's first batch, computed here
        lower = loader_first_batches(encode(text), settings["batch_size"], settings["max_length"], settings["stride"],
                                     charged(student, ["data_sampling"], LOADER_MISTAKES))
        name = next((name for name, batch in lower.items() if same(answer, batch)), None)
        if name is not None:
            student.notes.append(f"first_batch itself is right: it gives the first batch of a data loader with the "
                                 f"mistake charged in data_sampling ({name}).")
            continue
        expect(answer, expected, what, {SECOND: _second_batch(ref, text, tuple(settings.items()))})
