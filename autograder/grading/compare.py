"""Comparisons for the hidden suites: a submission's answer against the reference.

Every function runs in the trusted grader on data the child sent back, and fails with
an AssertionError whose message teaches: what was checked, on which shapes, by how
much it was off, and, when the answer equals a known mistake, the mistake's name.
"""
import hashlib
import re

import torch

from autograder.sandbox.session import StudentFailure

from . import probes
from .diagnose import BATCH_ONLY, IN_PLACE, Projection, python_number
from .kit import known_mistake, naming, once
from .result import KnownMistake, failure

ATOL, RTOL = 1e-5, 1e-4


def seeded(*shape, seed, scale=1.0, dtype=torch.float32):
    """Reproducible normal inputs from an explicit generator (never the global RNG); a copy of
    its own each time (a grading asks for the same ~200 inputs as the one before)."""
    def draw():
        return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype) * scale
    return once(("seeded", shape, seed, scale, dtype), draw).clone()


def _close(a, b, atol, rtol):
    # the same bytes are close (1 us); most answers worked out as the reference does are (allclose: 36 us)
    return (isinstance(a, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
            and (torch.equal(a, b) or torch.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True)))


def _fit(actual, value, atol, rtol) -> float | None:
    """How far a tensor answer is from a mistake's (the largest difference), or None beyond tolerance.
    A ``Projection`` model is the mistake's answer nearest ``actual`` (diagnose.Projection)."""
    if isinstance(value, Projection):
        value = value.fn(actual)
    if isinstance(value, torch.Tensor) and _close(actual, value.to(actual.dtype), atol, rtol):
        diff = (actual - value.to(actual.dtype)).abs().nan_to_num(nan=0.0)
        return diff.max().item() if diff.numel() else 0.0
    return None


def expect_tensor(actual, expected, what) -> None:
    """The answer is a tensor of the expected shape and dtype, with finite values where expected."""
    if not isinstance(actual, torch.Tensor):
        raise AssertionError(f"{what}: " + yours_vs_expected(
            yours=f"a {type(actual).__name__}", expected=f"a tensor of shape {tuple(expected.shape)}"))
    if actual.dtype != expected.dtype:
        raise AssertionError(f"{what}: " + yours_vs_expected(yours=actual.dtype, yours_are="dtype",
                                                              expected=expected.dtype))
    bad = ~torch.isfinite(actual) & torch.isfinite(expected)
    if actual.shape == expected.shape and bad.any():
        kind = "NaN" if torch.isnan(actual[bad]).any() else "inf"
        raise AssertionError(f"{what}: contains {kind} where the reference is finite")


def yours_vs_expected(*, yours, expected, yours_are="got", expected_are="expected") -> str:
    """The words that set the student's value beside the expected one: the one way every check
    writes them (tests/test_feedback_words.py holds the suites to it). Keyword-only, so that a caller
    cannot put them the wrong way round; ``*_are`` say whose each is ("" for none: "3 items,
    expected 4"). A set is shown sorted, so that the same answer reads the same every time."""
    def shown(words, value):
        if isinstance(value, (set, frozenset)):
            value = sorted(value, key=str)
        return f"{words} {value}" if words else str(value)
    return f"{shown(yours_are, yours)}, {shown(expected_are, expected)}"


def set_seed(seed) -> None:
    """``torch.manual_seed`` for the CPU generator only: the same draws, without torch's
    per-call bookkeeping for devices the grader does not use."""
    torch.default_generator.manual_seed(seed)


def answer_digest(actual) -> str | None:
    """A short digest of an answer that failed its check, kept in the result (``Check.answer_digest``)
    for the class's similarity report: two students whose code gives the same wrong answer share
    it. Computed here, in the grader, from the answer the child sent. Floats keep 10 bits of their
    mantissa (about 3 significant digits: the same mistake summed in another order gives the same
    digest), -0.0 is 0.0 and every NaN is one NaN; the dtype and shape count. None for an answer
    that is not a tensor or a Python number. A few microseconds for the tensors the suites use."""
    if isinstance(actual, bool) or not isinstance(actual, (int, float, torch.Tensor)):
        return None
    if not isinstance(actual, torch.Tensor):
        text = repr(actual) if isinstance(actual, int) else f"{actual:.3g}"
        return hashlib.sha256(f"{type(actual).__name__}:{text}".encode()).hexdigest()[:16]
    try:
        values = actual.detach()
        if values.is_floating_point():
            values = values.float() + 0.0
            values = torch.where(values.isnan(), torch.full_like(values, float("nan")), values)
            values = (values.contiguous().view(torch.int32) + (1 << 12)) >> 13  # round to 10 mantissa bits
        data = values.contiguous().numpy().tobytes()
    except (RuntimeError, TypeError):  # a layout numpy cannot take (none of the suites' answers)
        return None
    head = f"{actual.dtype}:{tuple(actual.shape)}:".encode()
    return hashlib.sha256(head + data).hexdigest()[:16]


def _with_digest(error, actual):
    """``error`` carrying the digest of the wrong answer ``actual`` (the runner puts it in the check's result)."""
    error.answer_digest = answer_digest(actual)
    return error


def _unravel(flat, shape):
    """The index of element ``flat`` of a row-major tensor of ``shape``. Not torch.unravel_index:
    its argument check imports torch.fx's symbolic shapes, and sympy with it (about 0.5 s, once
    per grading process)."""
    where = []
    for size in reversed(shape):
        flat, i = divmod(flat, size)
        where.append(i)
    return tuple(reversed(where))


def expect_close(actual, expected, what, mistakes=None, atol=ATOL, rtol=RTOL) -> None:
    """Fail unless ``actual`` matches ``expected``; name a known mistake if one fits."""
    if _close(actual, expected, atol, rtol):
        return
    name = (known_mistake(actual, mistakes, lambda a, v: _fit(a, v, atol, rtol))
            if isinstance(actual, torch.Tensor) else python_number(actual, expected))
    if isinstance(actual, torch.Tensor) and actual.shape != expected.shape:
        raise _with_digest(failure(f"{what}: " + yours_vs_expected(yours=tuple(actual.shape), yours_are="shape",
                                                                    expected=tuple(expected.shape)) + ".", name),
                           actual)
    try:
        expect_tensor(actual, expected, what)
    except AssertionError as exc:
        raise _with_digest(failure(f"{exc}.", name), actual) from None
    if not torch.allclose(actual, expected, atol=atol, rtol=rtol, equal_nan=True):
        diff = (actual - expected).abs().nan_to_num(nan=float("inf"))
        where = _unravel(int(diff.argmax()), diff.shape)
        got, want = actual[where].item(), expected[where].item()
        raise _with_digest(failure(f"{what}: wrong values, largest difference {diff.max().item():.4g} at index "
                                   f"{list(where)} ({yours_vs_expected(yours=f'{got:.4f}', expected=f'{want:.4f}')}).",
                                   name), actual)


def check_calls(student, module, name, cases) -> None:
    """Call ``module.name(*args)`` for every case in one round trip, then compare the answers
    in order; the first wrong (or failed) case fails the check.

    ``cases``: kit.Case (args, expected, what, mistakes), as for ``expect_close``."""
    answers = probes.calls(student, module, name, [args for args, *_ in cases])
    for i, (args, expected, what, mistakes) in enumerate(cases):
        try:
            expect_close(answers[i], expected, what, mistakes)
        except (AssertionError, StudentFailure) as exc:
            if isinstance(exc, KnownMistake) or not naming() or not _one_at_a_time(student, module, name, args,
                                                                                   expected):
                raise
            error = failure(str(exc), BATCH_ONLY)
            error.answer_digest = getattr(exc, "answer_digest", None)  # the wrong answer's, where there was one
            raise error from None
        after = answers.args_after[i] if i < len(answers.args_after) else [None] * len(args)
        for k, (arg, now) in enumerate(zip(args, after)):  # None: the child saw no change
            if isinstance(arg, torch.Tensor) and now is not None and not (
                    isinstance(now, torch.Tensor) and now.shape == arg.shape
                    and bool(((now == arg) | (now.isnan() & arg.isnan())).all())):
                raise failure(f"{what}: {name} changed its argument {k + 1} in place; leave the "
                              "caller's tensors as they were.", IN_PLACE)


def _one_at_a_time(student, module, name, args, expected) -> bool:
    """Whether ``module.name`` gives the expected answer for each item of a batch called on its
    own, where its one tensor argument is a batch (3-D or more): then the code is right for one
    matrix and wrong only for the batch (one more round trip, on a failure only)."""
    tensors = [k for k, a in enumerate(args) if isinstance(a, torch.Tensor)]
    if len(tensors) != 1 or args[tensors[0]].dim() < 3 or not isinstance(expected, torch.Tensor) or \
            expected.shape[:1] != args[tensors[0]].shape[:1]:
        return False
    (k,) = tensors
    items = [tuple(a[j] if m == k else a for m, a in enumerate(args)) for j in range(args[k].shape[0])]
    answers = probes.calls(student, module, name, items)
    try:
        return all(_close(answers[j], expected[j], ATOL, RTOL) for j in range(len(items)))
    except StudentFailure:
        return False


def value(reply, step, what, mistakes_on_error=()):
    """A plan step's value; a failure whose message fits a known mistake is named (the
    child's words serve the feedback only: the check fails either way).

    ``mistakes_on_error``: (regex on the error, mistake name) pairs."""
    try:
        return reply.values[step]
    except StudentFailure as exc:
        for pattern, name in mistakes_on_error:
            match = re.search(pattern, str(exc))
            if match:
                name = name(match) if callable(name) else name
                raise KnownMistake(f"{what}: {exc}.", name) from None
        raise
