"""What every chapter's suite helpers share: the reference cache, a case to check, a seed per
check, one rule for naming a mistake, one rule for charging a lower part.

Torch-free: the rules take the comparison (``fit``) from the suite that knows its values.
"""
import contextlib
import contextvars
import functools
import hashlib
import re
from typing import Any, NamedTuple, Optional, TypeVar


# key -> a reference-only result; lives as long as the grading process (never in a child: the
# zygote imports no suite, and a child sees only what its parent had in memory)
_REFERENCE = {}


def once(key, compute):
    """``compute()``, computed once per grading process: the reference's modules and answers do
    not depend on the submission, so every student shares them.

    A key is hashable and names everything the result depends on: the reference's own objects
    (a factory, a function, a module kept in this cache), configurations as tuples or their
    ``repr``, seeds, and inputs as bytes (``x.numpy().tobytes()`` with the shape). Its first item
    says what is computed ("built", "mask", ...); a reference object in the key keeps two
    chapters apart, a plain string key starts with its chapter's name. An ``id()`` is a key only
    of an object this cache keeps alive.

    Callers never mutate a value: one that runs a stateful module (train/eval, backward, a KV
    cache, ``.to()``) runs a ``copy.deepcopy`` of it. A ``compute`` that raises stores nothing."""
    if key not in _REFERENCE:
        _REFERENCE[key] = compute()
    return _REFERENCE[key]


# id -> object, of the reference's objects ``once`` keeps for good (``keep``): a key may hold the
# id() of one of these (``kept``), as of nothing else
_KEPT = {}


_Kept = TypeVar("_Kept")


def keep(obj: _Kept) -> _Kept:
    """``obj``, a value ``once`` keeps for good, marked so that ``kept(obj)`` holds."""
    _KEPT[id(obj)] = obj
    return obj


def kept(obj) -> bool:
    """Whether ``obj`` is one of the values ``keep`` marked (its id() is then a key)."""
    return _KEPT.get(id(obj)) is obj


def by_value(tensor) -> tuple:
    """A tensor as part of a key: its shape, dtype and bytes."""
    return tuple(tensor.shape), str(tensor.dtype), tensor.detach().numpy().tobytes()



class Case(NamedTuple):
    """One input of a check: the arguments, the reference's answer, how the feedback names it, and
    the known mistakes ({name: their answer, or a function computing it}) to name where one fits.
    A tuple still: ``args, expected, what, mistakes = case`` reads it."""
    args: tuple
    expected: Any
    what: str
    mistakes: Optional[dict] = None


@functools.lru_cache(maxsize=4096)  # a pure function asked again at every grading: one hash per input
def seed_of(name, salt=0):
    """A seed derived from a check's own name: adding or moving a check never shifts another's
    inputs. The name is ``file::function`` without the file's folder and ``.py``
    (``test_hidden_x::test_y``; the suites' ``seeds`` fixture passes it; inputs that several
    checks share are named after the function that makes them, ``test_hidden_x::_cases``);
    ``salt`` tells a check's several inputs apart."""
    digest = hashlib.sha256(f"{name}#{salt}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


_NAMING = contextvars.ContextVar("naming", default=True)


@contextlib.contextmanager
def unnamed():
    """Checks run without naming their mistakes (the repair search: it needs pass or fail only)."""
    token = _NAMING.set(False)
    try:
        yield
    finally:
        _NAMING.reset(token)


def naming() -> bool:
    """Whether a failed check looks for the mistake that explains it (not inside ``unnamed``)."""
    return _NAMING.get()


def known_mistake(actual, mistakes, fit) -> str | None:
    """The name of the mistake whose answer ``actual`` is, or None.

    ``mistakes`` maps a mistake's name to its answer or a function computing it (or is a function
    that makes that map, called only now, for a wrong answer). ``fit(actual, answer)``: how far
    apart they are (0 for exactly equal), or None where they do not match. Every model is tried;
    of those that match, the closest wins, so a model that merely comes close never hides the
    exact one; models that fit equally well are all named (on these inputs they coincide, and
    the evidence cannot choose)."""
    if not naming():  # the repair search: pass or fail is all it needs
        return None
    fits = []
    for name, model in ((mistakes() if callable(mistakes) else mistakes) or {}).items():
        try:
            value = model() if callable(model) else model
            error = fit(actual, value)
        except Exception:  # a mistake that cannot even run on these inputs is not this one
            continue
        if error is not None:
            fits.append((error, name))
    if not fits:
        return None
    best = min(error for error, _ in fits)
    return " or ".join(name for error, name in fits if error == best)


def differing(given, wanted) -> list:
    """The parameters of ``wanted`` ({parameter: the book's value}) whose value differs in ``given``
    (what a part passed a stand-in, bound in the grader: probes.calls_made; None where its arguments
    do not fit the book's signature: then every one)."""
    return [key for key in wanted if given is None or given.get(key) != wanted[key]]


def call_text(name, given, keys) -> str:
    """``name(key=value, ...)`` for the ``keys`` of ``given``, as the feedback shows a call."""
    if given is None:
        return f"{name} with arguments it does not take"
    return f"{name}(" + ", ".join(f"{key}={given[key]!r}" for key in keys) + ")"
# what a step's error holds where the submission's code ran into a stub (authoring.stubs writes the line)
STUB_RAISED = re.compile(r"NotImplementedError: ([\w.]+): replace this line with your code")


def blank_stub(errors: list) -> Optional[str]:
    """The one rule for a failed check beside a blank stub: where a step of the check raised a stub's
    NotImplementedError (``errors``: the texts of the steps that raised since the check began), no
    mistake is named, whatever the other answers look like (the weights after a training loop that
    raised are the weights before it, which equal a model of "no optimizer step" or "zero_grad in the
    wrong place"; the answers of a stub are not the student's yet). Returns the feedback to give
    instead (what is not written yet), or None where no stub raised. The runner applies it to every
    check: a suite need not guard against it."""
    from ..support.public_tests import not_written  # the one wording (kept lazy: the kit is torch-free)

    names = list(dict.fromkeys(m.group(1) for error in errors for m in STUB_RAISED.finditer(error)))
    return f"{not_written(names)} (a stub raised NotImplementedError during this check)" if names else None


def lower_part_wrong(student, part):
    """Whether ``part`` lost points in this grading and is really written (it earned points of its
    own, or its file does not compile): the evidence a later part needs before it credits an
    answer that is right with the student's own wrong piece from below. A blank or forged lower
    part earns nothing, so it excuses nothing."""
    lost = part in student.failed_parts
    written = part in student.passed_parts or not compiles(student.sources.get(part))
    return lost and written


def charged(student, parts, names) -> list:
    """The mistakes among ``names`` that one of ``parts`` was charged with in this grading (a failed
    check of it named them: the grader's words, ``Student.charged``) while that part is really
    written (``lower_part_wrong``). A later part may then expect, computed in the grader, the
    answer its module gives with that lower mistake: one mistake, one part, and no answer of the
    child's ever becomes the truth."""
    found = []
    for part in parts:
        if lower_part_wrong(student, part):
            said = student.charged.get(part, ())
            found += [name for name in names if name not in found and any(name in words for words in said)]
    return found


def compiles(source) -> bool:
    """Whether ``source`` (the student's text, or None) compiles: checked here, in the grader,
    never in the child, whose word about its own syntax errors cannot be trusted."""
    return source is not None and compile_problem(source) is None


@functools.lru_cache(maxsize=256)
def compile_problem(source) -> str | None:
    """Why ``source`` does not compile, in words that follow its file's name ("is not valid
    Python: line 3: ..."), or None. Compiled once per text: every check that asks about a lower
    part, and the result's syntax notes, ask about the same few files."""
    try:
        compile(source, "<submission>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"is not valid Python: line {exc.lineno}: {exc.msg}"
    except Exception as exc:  # e.g. RecursionError from absurd nesting: the student's problem, not ours
        return f"cannot be compiled: {type(exc).__name__}"
    return None


def suite_conftest(conftest: str) -> tuple:
    """The hooks every assignment's hidden suites share, for its ``conftest.py`` (whose path is
    ``conftest``): ``ref, pytest_collection_modifyitems = kit.suite_conftest(__file__)``.

    ``ref``: the reference's modules (this assignment's and those it builds on), imported in the
    trusted grader process only. The checks run in the manifest's order of parts: a check built on
    a lower part may credit or charge by what that part earned (``lower_part_wrong``, ``charged``),
    so the lower part is graded first."""
    from pathlib import Path

    import pytest

    from . import course

    assignment = course.get(Path(conftest).resolve().parent.name)

    @pytest.fixture(scope="session")
    def ref():
        return course.reference_modules(assignment)

    def pytest_collection_modifyitems(items) -> None:
        order = {part: i for i, part in enumerate(assignment.parts)}
        items.sort(key=lambda item: order.get(item.module.__name__.removeprefix("test_hidden_"), len(order)))

    return ref, pytest_collection_modifyitems
