"""Hidden checks for exercises 2.1 and 2.2 (10 points)."""
import pytest

from autograder.grading.compare import value, yours_vs_expected
from _text_data import (STORY, expect, gpt2, per_reference, verdict)
from autograder.grading.probes import calls_made

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
def _batches(ref, text, settings):
    """The reference loader's first two unshuffled batches: what the stand-in for the student's
    create_dataloader_v1 gives exercise 2.2 (the second tells a loader advanced twice)."""
    batches = iter(ref.data_sampling.create_dataloader_v1(text, **dict(settings), shuffle=False))
    return [list(next(batches)), list(next(batches))]


@points(5)
def test_first_batch(student, ref):
    """exercise 2.2: the first unshuffled batch with other strides and context sizes"""
    # the first batch needs the story's first ids only: its opening keeps the loaders small
    opening = verdict(ref)[:1500]
    cases = [(opening, dict(batch_size=4, max_length=2, stride=2)),
             (opening, dict(batch_size=4, max_length=8, stride=2)),
             (STORY, dict(batch_size=3, max_length=5, stride=3))]
    # create_dataloader_v1 is the grader's stand-in, giving the reference loader's batches whatever
    # the student's own loader does (data_sampling's checks judge it): judged here are the call
    # (its settings, unshuffled) and the batch taken from what it gives
    loader = "data_sampling.create_dataloader_v1"
    reply = student.plan([{"let": f"b{i}", "call": "exercises.first_batch", "args": [text], "kwargs": settings,
                           "inject": {loader: {"returns": _batches(ref, text, tuple(settings.items()))}},
                           "return": True} for i, (text, settings) in enumerate(cases)])
    for i, (text, settings) in enumerate(cases):
        what = f"first_batch({'the opening of The Verdict' if text == opening else 'a story'}, {settings})"
        answer = value(reply, f"b{i}", what)
        first, second = _batches(ref, text, tuple(settings.items()))
        calls = [given for _, given in calls_made(reply, f"b{i}", ref)]
        wanted = {"txt": text, **settings, "shuffle": False}
        if len(calls) != 1 or calls[0] is None or any(calls[0].get(k) != v for k, v in wanted.items()):
            given = [{k: v for k, v in (call or {}).items() if k != "txt"} for call in calls]
            raise AssertionError(f"{what} calls create_dataloader_v1: "
                                 + yours_vs_expected(yours=f"{len(calls)} calls, with {given}", yours_are="",
                                                     expected=f"one call, on txt with {settings} and shuffle=False")
                                 + ".")
        expect(answer, first, what, {SECOND: second})
