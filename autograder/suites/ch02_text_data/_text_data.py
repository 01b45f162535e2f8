"""Chapter 2's inputs, reference facts and mistake models for the hidden suites.

What does not depend on the submission (The Verdict, its tokens and vocabulary, its BPE ids,
tiktoken's GPT-2 encoding) is computed once per grader process. The mistakes students make
are pure functions of the input (the split rules of the book's listings, windows taken the
wrong way, ...): a wrong answer that equals one of them gets that mistake's name.
"""
import functools
import json
import re

import torch

from autograder.grading.compare import yours_vs_expected
from autograder.grading.kit import known_mistake, once
from autograder.grading.result import KnownMistake, failure
from autograder.sandbox.session import GraderError
from autograder.support.gpt2_offline import gpt2_offline

# The split that gives the book's numbers, and listing 2.4's as printed (fewer characters).
SPLIT = r'([,.:;?_!"()\']|--|\s)'
PRINTED_2_4 = r'([.,;?!"]|--|\s)'
ATTACHED_BY_2_4 = "'():_"   # what listing 2.4's split leaves on the words
# The marks each of the book's decode listings removes the space before (all accepted).
DECODE_MARKS = {"listing 2.3": ",.?!\"()'", "listing 2.4's companion code": ",.:;?!\"()'",
                "listing 2.4 as printed": ".,;?!\""}
ENDOFTEXT, UNK = "<|endoftext|>", "<|unk|>"

# Texts other than the book's: quotes, --, brackets, colons, underscores, apostrophes, runs of
# whitespace and newlines, and words the vocabulary of another text does not hold.
TEXTS = [
    'Hello, world. Is this-- a test?',
    '"Well," she said: "it\'s (almost) done -- isn\'t it?"\nHe nodded; _nothing_ more.',
    "  Tabs\tand\n\nnewlines:  the end!  ",
    "Mrs. Gisburn's pictures--the last (he said)--were his best; weren't they?",
    "",
    "one",
]
STORY = ('The lighthouse keeper\'s daughter said: "Come in -- quick!" The storm (it was late) '
         'broke over the bay; the boats, all of them, came home. "Is that all?" asked the keeper\'s '
         'son. "It is," she said, "for tonight."\nThe end_ of the story: no more.')


# ------------------------------------------------------------------ the grader's own copies

def gpt2():
    """tiktoken's GPT-2 encoding in the grader (the zygote's, where it was loaded before the
    fork); a grader error (not the student's) where this machine does not have it."""
    try:
        return once(("ch02 gpt2",), gpt2_offline)
    except Exception as exc:
        raise GraderError(f"tiktoken's GPT-2 encoding is not installed on the grading machine ({type(exc).__name__}):"
                          " run the README's set-up command there (the grader never downloads it)") from None


def encode(text):
    """The GPT-2 ids of ``text`` (computed once per grader process)."""
    return list(once(("ch02 gpt2 ids", text), lambda: tuple(gpt2().encode(text, allowed_special={ENDOFTEXT}))))


def per_reference(fn):
    """``fn(ref, *args)`` through the kit's ``once``: keyed by ``fn`` and the reference's modules
    (each grading makes a new ``ref`` namespace of the same modules)."""
    @functools.wraps(fn)
    def cached(ref, *args):
        return once((fn, tuple(vars(ref).values()), args), lambda: fn(ref, *args))
    return cached


@per_reference
def verdict(ref):
    """The Verdict (read once per grader process, its sha256 checked by the reference)."""
    return ref.simple_tokenizer.read_verdict()


@per_reference
def verdict_tokens(ref):
    return tuple(ref.simple_tokenizer.preprocess(verdict(ref)))


@per_reference
def verdict_ids(ref):
    return tuple(encode(verdict(ref)))


def permuted_vocab(tokens, seed, specials=()):
    """A vocabulary of ``tokens`` (then ``specials``) whose ids are a seeded permutation, so a
    tokenizer that numbers tokens itself instead of using the vocabulary's ids shows."""
    words = sorted(set(tokens)) + [s for s in specials if s not in tokens]
    order = torch.randperm(len(words), generator=torch.Generator().manual_seed(seed))
    return {word: int(i) for word, i in zip(words, order)}


# ------------------------------------------------------------------ comparisons

def _plain(value):
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _json(value):
    try:
        return json.dumps(value)
    except (TypeError, ValueError):  # tensors inside: compared one by one below
        return None


def same(a, b):
    """Equal as the book's answers are: lists (tuples) of the same items, tensors of the same
    dtype, shape and values, numbers and strings of the same type and value."""
    fast = _json(a)
    if fast is not None and fast == _json(b):  # JSON keeps 1, 1.0, True and "1" apart
        return True
    a, b = _plain(a), _plain(b)
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and bool(torch.equal(a, b)))
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(same(a[k], b[k]) for k in a))
    return type(a) is type(b) and a == b


def short(value, limit=160):
    text = repr(_plain(value.tolist() if isinstance(value, torch.Tensor) else value))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def difference(actual, expected):
    """Where a list answer first parts from the expected one, in words."""
    actual, expected = _plain(actual), _plain(expected)
    if isinstance(actual, torch.Tensor) and isinstance(expected, torch.Tensor):
        if actual.dtype != expected.dtype:
            return yours_vs_expected(yours=actual.dtype, yours_are="dtype", expected=expected.dtype)
        if actual.shape != expected.shape:
            return yours_vs_expected(yours=tuple(actual.shape), yours_are="shape", expected=tuple(expected.shape))
        actual, expected = actual.tolist(), expected.tolist()
    if isinstance(actual, list) and isinstance(expected, list):
        for i, (a, e) in enumerate(zip(actual, expected)):
            if not same(a, e):
                return f"first difference at position {i}: " + yours_vs_expected(yours=short(a, 80),
                                                                                  expected=short(e, 80))
        if len(actual) != len(expected):
            return yours_vs_expected(yours=f"{len(actual)} items", yours_are="", expected=len(expected))
    if isinstance(expected, dict) and isinstance(actual, dict):
        missing = sorted(set(expected) - set(actual), key=str)[:5]
        extra = sorted(set(actual) - set(expected), key=str)[:5]
        wrong = [k for k in expected if k in actual and not same(actual[k], expected[k])][:3]
        parts = ([f"missing {short(missing, 80)}"] if missing else []) + (
            [f"not in the reference {short(extra, 80)}"] if extra else []) + (
            [", ".join(f"{k!r}: " + yours_vs_expected(yours=short(actual[k], 30), yours_are="", expected=short(expected[k], 30))
                       for k in wrong)] if wrong else [])
        return "; ".join(parts) or "the same items in another order"
    return yours_vs_expected(yours=short(actual), expected=short(expected))


def mistake_names(actual, mistakes):
    """The names of the mistakes whose answer ``actual`` is; ``mistakes`` (or a function that
    makes them, called only for a wrong answer) maps each name to its answer or a function."""
    return known_mistake(actual, mistakes, lambda a, value: 0 if same(a, value) else None)


def expect(actual, expected, what, mistakes=None, accepted=()):
    """Fail unless ``actual`` equals ``expected`` (or one of ``accepted``, other answers the book
    gives full marks); name a known mistake where one fits, else say where the answer is off."""
    if same(actual, expected) or any(same(actual, a) for a in accepted):
        return
    raise failure(f"{what}: {difference(actual, expected)}.", mistake_names(actual, mistakes))


# ------------------------------------------------------------------ 2.2-2.3: the split

def split(text, pattern=SPLIT):
    """The tokens of ``text`` under a split rule (computed once per grader process)."""
    return list(once(("ch02 split", text, pattern),
                     lambda: tuple(item.strip() for item in re.split(pattern, text) if item.strip())))


def attached_by_2_4(text):
    """The characters listing 2.4's printed split leaves on words of ``text`` ("' and :")."""
    found = [c for c in ATTACHED_BY_2_4 if any(c in token and token != c for token in split(text, PRINTED_2_4))]
    return " and ".join(", ".join(found).rsplit(", ", 1)) if found else ""


def printed_2_4(text):
    attached = attached_by_2_4(text) or "some marks"
    return (f"the split of listing 2.4 as printed, r'([.,;?!\"]|--|\\s)': {attached} stay attached to the words "
            "(split on , . : ; ? _ ! \" ( ) ' -- and whitespace)")


def split_mistakes(text):
    """{mistake: the tokens it gives} for ``text``."""
    return {
        printed_2_4(text): split(text, PRINTED_2_4),
        "punctuation dropped: re.split without the capturing group (the parentheses keep what it splits on)":
            split(text, SPLIT.replace("(", "(?:", 1)),
        "whitespace and empty strings kept (keep only the items whose .strip() is not empty)": re.split(SPLIT, text),
        "'--' not split off (add --| to the pattern)": split(text, r'([,.:;?_!"()\']|\s)'),
        "split on whitespace only": split(text, r'(\s)'),
        "split on commas, periods and whitespace only (section 2.2's first try)": split(text, r'([,.]|\s)'),
    }


def vocab_mistakes(tokens):
    words = sorted(set(tokens))
    first_seen = list(dict.fromkeys(tokens))
    return {
        "ids in the order the tokens first appear instead of sorted": {t: i for i, t in enumerate(first_seen)},
        "ids counted from 1 instead of 0": {t: i + 1 for i, t in enumerate(words)},
        "ids numbered over the sorted list with its repeats (sorted(set(...)) numbers each token once)":
            {t: i for i, t in enumerate(sorted(tokens))},
    }


CASELESS = "sorted without regard to case (Python's plain sorted() is what the book uses)"


def sorted_caseless(answer, tokens):
    """Whether a vocabulary numbers ``tokens`` 0, 1, ... in an order sorted by str.lower (ties
    in any order: a set's order decides them)."""
    if not isinstance(answer, dict) or set(answer) != set(tokens) or sorted(answer.values()) != list(range(len(answer))):
        return False
    order = sorted(answer, key=answer.get)
    return all(a.lower() <= b.lower() for a, b in zip(order, order[1:]))


# ------------------------------------------------------------------ decode

def join_tokens(tokens, marks=DECODE_MARKS["listing 2.3"], sep=" "):
    text = sep.join(tokens)
    return re.sub(r"\s+([" + re.escape(marks) + "])", r"\1", text) if marks else text


def decode_accepted(tokens):
    return [join_tokens(tokens, marks) for marks in DECODE_MARKS.values()]


def decode_mistakes(tokens):
    mistakes = {
        "tokens joined with '' instead of ' ' (no spaces between words)": join_tokens(tokens, "", ""),
        "the spaces before punctuation left in (re.sub(r'\\s+([,.?!\"()\\'])', r'\\1', text) removes them)":
            " ".join(tokens),
    }
    return mistakes


BY_POSITION = ("tokens looked up by position (list(vocab)[i]) instead of by id (the vocabulary's ids need not be "
               "0, 1, 2, ... in token order)")


def check_decode(answer, tokens, ids, vocab, what):
    """A decode answer: any of the book's listings' punctuation rules is right."""
    accepted = decode_accepted(tokens)
    if any(same(answer, a) for a in accepted):
        return
    by_position = list(vocab)
    if all(0 <= i < len(by_position) for i in ids):
        looked_up = [by_position[i] for i in ids]
        if any(same(answer, join_tokens(looked_up, marks)) for marks in DECODE_MARKS.values()):
            raise KnownMistake(f"{what}: your answer is {short(answer)}.", BY_POSITION)
    expect(answer, accepted[0], what, decode_mistakes(tokens))


def encode_error_mistakes():
    """Errors of an encode that fit a named mistake."""
    marks = re.escape(ATTACHED_BY_2_4)

    def name(match):
        token = match.group(1)[1:-1]
        attached = " and ".join(dict.fromkeys(c for c in token if c in ATTACHED_BY_2_4))
        return (f"the split of listing 2.4 as printed, r'([.,;?!\"]|--|\\s)': {attached} stay attached to words "
                f"({token!r} is no token of the vocabulary; split on , . : ; ? _ ! \" ( ) ' -- and whitespace)")
    return [(rf"""KeyError: ('[^']*[{marks}][^']*'|"[^"]*[{marks}][^"]*")""", name)]


# ------------------------------------------------------------------ 2.6: windows

def windows(ids, max_length, stride, *, shift=1, step=None, stop=None, partial=False):
    """The (inputs, targets) rows a sliding window gives; the defaults are the book's.

    ``shift``: how far the targets are moved; ``step``: the distance between windows (default
    ``stride``); ``stop``: where the last window may start, exclusive (default
    ``len(ids) - max_length``); ``partial``: also the windows that run past the end."""
    step = step or stride
    stop = len(ids) - max_length if stop is None else stop
    rows = []
    for i in range(0, max(stop, 0), step):
        x, y = ids[i:i + max_length], ids[i + shift:i + shift + max_length]
        if not partial and (len(x) < max_length or len(y) < max_length):
            break
        rows.append((x, y))
    return rows


def window_mistakes(ids, max_length, stride):
    """{mistake: the rows it gives}, each computed only when an answer is wrong."""
    n = len(ids)
    return {
        "targets not shifted (target_chunk = token_ids[i + 1:i + max_length + 1])":
            lambda: windows(ids, max_length, stride, shift=0),
        "stride ignored: a window at every token (range(0, ..., stride))": lambda: windows(ids, max_length, 1),
        "stride ignored: windows every max_length tokens": lambda: windows(ids, max_length, max_length),
        "the last full window dropped (range(0, len(token_ids) - max_length, stride) keeps it)":
            lambda: windows(ids, max_length, stride)[:-1],
        "one window too many: the range runs to len(token_ids) - max_length + 1 (the last target runs past "
        "the end)": lambda: windows(ids, max_length, stride, stop=n - max_length + 1, partial=True),
        "windows past the end of the text (range(0, len(token_ids), stride): short last rows)":
            lambda: windows(ids, max_length, stride, stop=n, partial=True),
    }


def as_rows(pairs):
    """[[input list, target list], ...] of a dataset's (tensor, tensor) items."""
    rows = []
    for item in pairs:
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(t, torch.Tensor) for t in item)):
            raise AssertionError("a dataset item: " + yours_vs_expected(
                yours=short(item, 80), expected="a pair (input_ids, target_ids) of tensors"))
        rows.append((item[0].tolist(), item[1].tolist()))
    return rows


def batches(rows, batch_size, drop_last):
    out = []
    for i in range(0, len(rows), batch_size):
        chunk = rows[i:i + batch_size]
        if len(chunk) < batch_size and drop_last:
            break
        out.append((torch.tensor([x for x, _ in chunk]), torch.tensor([y for _, y in chunk])))
    return out


def as_batches(answer):
    """[(inputs, targets), ...] of a data loader's batches, each checked to be two tensors."""
    out = []
    for batch in answer:
        if not (isinstance(batch, list) and len(batch) == 2 and all(isinstance(t, torch.Tensor) for t in batch)):
            raise AssertionError("a batch: " + yours_vs_expected(yours=short(batch, 80),
                                                                 expected="[inputs, targets], two tensors"))
        out.append(tuple(batch))
    return out

