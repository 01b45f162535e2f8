"""Hidden checks for exercises 2.1 and 2.2 (10 points)."""
import pytest

from _text_data import STORY, expect, gpt2, per_reference, same, value, verdict
from autograder.grading.kit import lower_part_wrong

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


def _own_loader(student, text, settings):
    """The first batch of the student's own create_dataloader_v1 with these settings, or None."""
    reply = student.plan([{"let": "dl", "call": "data_sampling.create_dataloader_v1", "args": [text],
                           "kwargs": {**settings, "shuffle": False}},
                          {"let": "b", "iterate": "dl", "limit": 1, "return": True}])
    return None if reply.failed("b") or not reply.values["b"] else reply.values["b"][0]


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
        # right with the student's own data loader, which lost its points in data_sampling
        if lower_part_wrong(student, "data_sampling") and same(answer, _own_loader(student, text, settings)):
            student.notes.append("first_batch itself is right: the difference from the reference comes from "
                                 "data_sampling, charged there.")
            continue
        expect(answer, expected, what, {SECOND: _second_batch(ref, text, tuple(settings.items()))})
