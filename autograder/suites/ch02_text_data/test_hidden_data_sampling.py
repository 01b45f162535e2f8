"""Hidden checks for section 2.6: input-target pairs, GPTDatasetV1 and create_dataloader_v1 (25 points)."""
import pytest
import torch

from _text_data import (ENDOFTEXT, STORY, as_batches, as_rows, batches, encode, expect, gpt2, per_reference,
                        verdict, verdict_ids, window_mistakes, windows)
from autograder.grading.compare import value, yours_vs_expected
from autograder.grading.diagnose import INT_IDS
from autograder.grading.result import failure

points = pytest.mark.points
NOT_ALLOWED = ("tokenizer.encode(txt) without allowed_special={'<|endoftext|>'}: tiktoken refuses a text that holds "
               "the special token")
AS_TEXT = ("<|endoftext|> encoded as plain text instead of the special token 50256: "
           "tokenizer.encode(txt, allowed_special={'<|endoftext|>'})")
NO_TIKTOKEN = ("data_sampling.py has no `import tiktoken` at the top (the stub's first lines): keep it, the grader "
               "hands your GPTDatasetV1 tiktoken's GPT-2 tokenizer through it")
# a short text: every (max_length, stride) pair up to its end is checked
SHORT = "The storm broke; boats came home."
TOKENIZER = {"let": "tk", "call": "data_sampling.tiktoken.get_encoding", "args": ["gpt2"]}


def _tokenizer_failed(reply):
    why = reply.failed("tk")
    if why and "defines no tiktoken" in why:
        raise AssertionError(NO_TIKTOKEN)


@points(3)
def test_input_target_pair(student, ref):
    """input_target_pair: the first context_size ids and the same window shifted by one"""
    cases = [(list(verdict_ids(ref)[50:]), 4), (list(verdict_ids(ref)[:40]), 1), (encode(STORY), 9),
             (encode(SHORT), len(encode(SHORT)) - 1)]
    reply = student.plan([{"let": f"p{i}", "call": "data_sampling.input_target_pair", "args": [ids, size],
                           "return": True} for i, (ids, size) in enumerate(cases)])
    for i, (ids, size) in enumerate(cases):
        what = f"input_target_pair of {len(ids)} ids, context_size {size}"
        expect(value(reply, f"p{i}", what), [ids[:size], ids[1:size + 1]], what, {
            "targets not shifted (y = token_ids[1:context_size + 1])": [ids[:size], ids[:size]],
            "targets one short (y = token_ids[1:context_size])": [ids[:size], ids[1:size]],
        })


@points(3)
def test_next_word_pairs(student, ref):
    """next_word_pairs: (first i ids, the id after them) for i = 1 .. context_size"""
    cases = [(list(verdict_ids(ref)[50:60]), 4), (encode(STORY), 7), (encode(SHORT), 1)]
    reply = student.plan([{"let": f"p{i}", "call": "data_sampling.next_word_pairs", "args": [ids, size],
                           "return": True} for i, (ids, size) in enumerate(cases)])
    for i, (ids, size) in enumerate(cases):
        what = f"next_word_pairs of {len(ids)} ids, context_size {size}"
        expect(value(reply, f"p{i}", what), [[ids[:k], ids[k]] for k in range(1, size + 1)], what, {
            "contexts from 0 (range(context_size) instead of range(1, context_size + 1))":
                [[ids[:k], ids[k]] for k in range(size)],
            "the desired id is the context's last one, not the next": [[ids[:k], ids[k - 1]] for k in range(1, size + 1)],
        })


def _dataset_cases(ref):
    """(text, max_length, stride): every pair up to the short text's end, The Verdict, a text
    shorter than its window, one exactly a window and a target long."""
    n = len(encode(SHORT))
    cases = [(SHORT, m, s) for m in range(n, 0, -1) for s in range(1, n + 1)]  # longest first: the
    # mistakes that coincide for windows of one token (stride ignored, or ignored the other way) part earlier
    cases += [(verdict(ref), 256, 128), (STORY, 7, 3), ("Hi.", 8, 2),
              (gpt2().decode(encode(STORY)[:9]), 8, 5)]
    return cases


def _dataset_steps(k, text, m, s, count):
    """Build the dataset, ask its len, and its first ``count`` items by index, as a DataLoader
    does (an item past len() is never asked for: a lazy __getitem__ need not check bounds)."""
    return [{"let": f"ds{k}", "call": "data_sampling.GPTDatasetV1", "args": [text, {"$ref": "tk"}, m, s]},
            {"let": f"n{k}", "len": f"ds{k}", "return": True},
            *({"let": f"ds{k}_{i}", "call": f"ds{k}.__getitem__", "args": [i], "return": True} for i in range(count))]


def _rows(reply, k, count, what):
    """The dataset's (input, target) rows, as many as its len() says (at most ``count``)."""
    n = value(reply, f"n{k}", f"{what}: len(dataset)")
    if type(n) is not int:
        raise AssertionError(f"{what}: len(dataset) is a {type(n).__name__}, expected an int")
    items = [value(reply, f"ds{k}_{i}", f"{what}: dataset[{i}]") for i in range(min(max(n, 0), count))]
    rows = as_rows(items)
    for i, item in enumerate(items):
        if item[0].dtype != torch.int64 or item[1].dtype != torch.int64:
            other_ints = all(not t.dtype.is_floating_point and not t.dtype.is_complex and t.dtype != torch.bool
                             for t in item)
            raise failure(f"{what}: " + yours_vs_expected(
                yours=f"{item[0].dtype} and {item[1].dtype} tensors", yours_are=f"dataset[{i}] holds",
                expected="torch.int64 (torch.tensor of a list of ints)") + ".", INT_IDS if other_ints else None)
    return rows


@points(8)
def test_gpt_dataset_v1_windows(student, ref):
    """GPTDatasetV1: a window every stride ids, targets shifted by one, the last full window kept"""
    cases = _dataset_cases(ref)
    steps = [TOKENIZER]
    for k, (text, m, s) in enumerate(cases):
        steps += _dataset_steps(k, text, m, s, len(windows(encode(text), m, s)) + 1)
    reply = student.plan(steps, needs="data_sampling.GPTDatasetV1", timeout=20)
    _tokenizer_failed(reply)
    for k, (text, m, s) in enumerate(cases):
        ids = encode(text)
        what = (f"GPTDatasetV1 on {'The Verdict' if len(text) > 5000 else repr(text[:40])} ({len(ids)} ids), "
                f"max_length {m}, stride {s}")
        expected = windows(ids, m, s)
        rows = _rows(reply, k, len(expected) + 1, what)
        # the first len(expected) + 1 rows came back: a wrong answer is compared as far as that
        mistakes = {name: (lambda model=model: model()[:len(expected) + 1])
                    for name, model in window_mistakes(ids, m, s).items()}
        expect(rows, expected, f"{what}: its (input, target) rows", mistakes)
        expect(reply.values[f"n{k}"], len(expected), f"{what}: len(dataset)")


@points(2)
def test_gpt_dataset_v1_special_token(student):
    """GPTDatasetV1 on a text holding <|endoftext|>: the special id 50256"""
    text = f"{STORY} {ENDOFTEXT} {SHORT} {ENDOFTEXT}"
    expected = windows(encode(text), 6, 4)
    reply = student.plan([TOKENIZER, *_dataset_steps(0, text, 6, 4, len(expected) + 1)],
                         needs="data_sampling.GPTDatasetV1")
    _tokenizer_failed(reply)
    what = "GPTDatasetV1 on a text holding <|endoftext|>, max_length 6, stride 4"
    if reply.failed("ds0"):
        value(reply, "ds0", what, [(r"disallowed special token|allowed_special", NOT_ALLOWED)])
    expect(_rows(reply, 0, len(expected) + 1, what), expected, what,
           {AS_TEXT: lambda: windows(gpt2().encode_ordinary(text), 6, 4)[:len(expected) + 1]})


def _loader_cases(ref):
    """(text, kwargs, seed, how many batches to take)."""
    return [(verdict(ref)[:2000], dict(batch_size=8, max_length=4, stride=4, shuffle=False), None, 3),
            (STORY, dict(batch_size=3, max_length=5, stride=2, shuffle=False, drop_last=False), None, 99),
            (STORY, dict(batch_size=3, max_length=5, stride=2, shuffle=False, drop_last=True), None, 99),
            (STORY, dict(batch_size=2, max_length=4, stride=3, shuffle=True, drop_last=False), 7, 99),
            (verdict(ref), dict(), 11, 99),
            (verdict(ref), dict(batch_size=5, max_length=16, stride=64, shuffle=True, drop_last=True), 3, 99)]


def _reference_batches(ref, text, kwargs, seed, limit):
    return _batches_of(ref, text, tuple(sorted(kwargs.items())), seed, limit)


@per_reference  # the reference's batches do not depend on the submission: once per grader process
def _batches_of(ref, text, kwargs, seed, limit):
    loader = ref.data_sampling.create_dataloader_v1(text, **dict(kwargs))
    if seed is not None:
        torch.manual_seed(seed)
    return [tuple(batch) for _, batch in zip(range(limit), loader)]


@points(9)
def test_create_dataloader_v1(student, ref):
    """create_dataloader_v1 passes batch_size, shuffle and drop_last on (shuffled under a seed)"""
    cases = _loader_cases(ref)
    steps = []
    for k, (text, kwargs, seed, limit) in enumerate(cases):
        steps += [{"let": f"dl{k}", "call": "data_sampling.create_dataloader_v1", "args": [text], "kwargs": kwargs},
                  {"let": f"b{k}", "iterate": f"dl{k}", "limit": limit, "return": True, "seed": seed}]
    reply = student.plan(steps, timeout=20)
    for k, (text, kwargs, seed, limit) in enumerate(cases):
        what = (f"create_dataloader_v1 on {'a story' if text == STORY else 'The Verdict'} "
                f"({', '.join(f'{key}={v}' for key, v in kwargs.items()) or 'the defaults'})")
        answer = as_batches(value(reply, f"b{k}", what))
        expected = _reference_batches(ref, text, kwargs, seed, limit)
        settings = {"batch_size": 4, "max_length": 256, "stride": 128, "shuffle": True, "drop_last": True, **kwargs}
        rows = windows(encode(text), settings["max_length"], settings["stride"])
        mistakes = {}
        if settings["shuffle"]:
            mistakes["shuffle not passed on to the DataLoader (its default is shuffle=False)"] = \
                batches(rows, settings["batch_size"], settings["drop_last"])[:limit]
        if settings["drop_last"]:
            mistakes["drop_last not passed on to the DataLoader (its default is drop_last=False)"] = \
                _reference_batches(ref, text, {**kwargs, "drop_last": False}, seed, limit)
        else:
            mistakes["drop_last=True whatever the caller asks (pass drop_last on)"] = \
                _reference_batches(ref, text, {**kwargs, "drop_last": True}, seed, limit)
        if settings["batch_size"] != 1:
            mistakes["batch_size not passed on to the DataLoader (its default is 1)"] = \
                _reference_batches(ref, text, {**kwargs, "batch_size": 1}, seed, limit)
        expect(answer, expected, what, mistakes)
