"""Every requirement a student docstring states is graded and publicly tested (DESIGN.md, "fair
before strict": public green means no structural surprise).

``STATED`` of ``tests/<assignment>/expectations.py`` lists what the student docstrings state: a phrase of the docstring
of one item (``module``, ``module.Name`` or ``module.Class.method``), with
- ``hidden``: the hidden checks that grade it (``test_hidden_<part>.py::test_name``), and
- ``public``: the public tests that exercise it (``test_<part>.py::test_name``, copied to students);
or, for a promise that a way of writing it is accepted, ``accepted``: names of the alternatives
(``tests/<assignment>/alternatives.py``) written that way, which tests/test_alternatives.py grades
at full marks and tests/test_public_tests.py runs the public tests on; or ``free``: why a
sentence that the rule picks states nothing to check (it says what is left free). A ``gap`` is a
stated requirement that one side does not check yet: it names the side and stays listed, in
plain sight, until that side checks it.

The test fails where
- a listed phrase is no longer in its item's docstring (the docstring changed: update the list),
- a named hidden check, public test or alternative does not exist,
- an entry names neither both sides, nor an acceptance, nor a reason (``free`` or ``gap``),
- a requirement sentence of a student docstring (tests/stated.py's rule: a sentence with
  ``must``, ``graded``, ``raise(s)``, ``return(s)``, ``accepted``, ``exactly``, ``unchanged`` or
  ``no other``) holds no listed phrase: a new requirement, written without saying what checks it,
- an assignment of the course has no list (the failure names the file to write).
The list is what the project claims; which check really grades what is proved by the banks
(a mutant of each graded requirement loses points in its part: tests/test_mutants.py).
"""
import pytest

from autograder.grading import course
from banks import expectations, load
from stated import (REQUIREMENT, S, assignment_docstrings, collected_tests, requirement_sentences, sentences, squash,
                    student_docstrings)


# ------------------------------------------------------------------------------------ the checks
def problems(stated, docstrings, hidden_tests, public_tests, alternatives):
    """What is wrong with one assignment's list ``stated``, as lines; none when it holds.

    ``docstrings``: {item: docstring} of its student modules; ``hidden_tests`` and
    ``public_tests``: {file name: {test function names}}; ``alternatives``: the names of its
    alternatives bank."""
    found = []
    docs = {item: squash(doc) for item, doc in docstrings.items()}

    def exists(node, tests, kind):
        file, _, name = node.partition("::")
        if name not in tests.get(file, ()):
            found.append(f"{kind} {node} does not exist")

    for s in stated:
        where = f"{s.item}: {s.phrase!r}"
        if s.item not in docs:
            found.append(f"{where}: no student docstring {s.item}")
        elif squash(s.phrase) not in docs[s.item]:
            found.append(f"{where}: no longer in the docstring")
        for node in s.hidden:
            exists(node, hidden_tests, "hidden check")
        for node in s.public:
            exists(node, public_tests, "public test")
        for name in s.accepted:
            if not any(a.startswith(name) for a in alternatives):
                found.append(f"{where}: no alternative named {name!r}")
        if not (s.hidden and s.public) and not (s.accepted or s.free or s.gap):
            found.append(f"{where}: names no hidden check and public test (or acceptance, free, gap)")
    listed = {}
    for s in stated:
        listed.setdefault(s.item, []).append(squash(s.phrase))
    for item, doc in docstrings.items():
        for sentence in requirement_sentences(doc):
            if not any(phrase in sentence for phrase in listed.get(item, ())):
                found.append(f"{item}: requirement sentence not listed: {sentence!r}")
    return found


def evidence(assignment):
    a = course.get(assignment)
    hidden = {p.name: collected_tests(p) for p in a.suites.glob("test_hidden_*.py")}
    public = {p.name: collected_tests(p) for p in a.solutions.glob("test_*.py")}
    bank = load(assignment, "alternatives")
    alternatives = [alt.name for alt in getattr(bank, "ALTERNATIVES", ())]
    return assignment_docstrings(a.solutions, a.modules), hidden, public, alternatives


@pytest.mark.parametrize("assignment", course.names())
def test_stated_requirements_are_graded_and_publicly_tested(assignment):
    found = problems(expectations(assignment, "STATED"), *evidence(assignment))
    assert not found, "\n".join(found)


def test_gaps_are_few_and_say_which_side_is_missing():
    """A gap names its missing side by being empty there, and says why: it is a to-do, not a pass."""
    for s in (s for a in course.names() for s in expectations(a, "STATED") if s.gap):
        assert not (s.hidden and s.public), f"{s.item}: {s.phrase!r} has both sides: drop its gap"
        assert len(s.gap) > 40, f"{s.item}: {s.phrase!r}: say why the gap is open"


def test_a_missing_expectations_file_says_which_file_to_write_and_what_it_holds(tmp_path, monkeypatch):
    import banks
    monkeypatch.setattr(banks, "TESTS", tmp_path / "tests")
    with pytest.raises(AssertionError, match=r"no tests/a9/expectations.py: write one defining STATED: .*BOOK_VALUES: "
                                             r".*WRONG: .*autograder new"):
        expectations("a9", "STATED")
    (tmp_path / "tests" / "a9").mkdir(parents=True)
    (tmp_path / "tests" / "a9" / "expectations.py").write_text("STATED = []\n")
    assert expectations("a9", "STATED") == []
    with pytest.raises(AssertionError, match=r"tests/a9/expectations.py does not define WRONG: a tuple"):
        expectations("a9", "WRONG")


# -------------------------------------------------------------------------- the rule, on planted docs
PLANTED = '''"""A student module."""


def pick(x, k):
    """The first ``k`` entries of ``x``.

    Returns a new list; ``x`` itself is left unchanged. A ``k`` below 0 raises ValueError.
    The book's slice is fine (e.g. ``x[:k]``).
    - ``k`` must be an int.
    """
    ### BEGIN SOLUTION
    return list(x[:k])
    ### END SOLUTION


def helper(x):
    """Given: returns ``x``. Not the student's to write, so not theirs to read as a requirement."""
    return x
'''


def planted(**changes):
    docs = student_docstrings(PLANTED, "planted")
    hidden = {"test_hidden_planted.py": {"test_pick", "test_pick_refuses"}}
    public = {"test_planted.py": {"test_pick_public"}}
    stated = [S("planted.pick", "Returns a new list; ``x`` itself is left unchanged",
                "test_hidden_planted.py::test_pick", "test_planted.py::test_pick_public"),
              S("planted.pick", "raises ValueError", "test_hidden_planted.py::test_pick_refuses",
                "test_planted.py::test_pick_public"),
              S("planted.pick", "must be an int", "test_hidden_planted.py::test_pick", "test_planted.py::test_pick_public")]
    stated = changes.pop("stated", stated)
    return problems(stated, changes.pop("docs", docs), hidden, public, ["the book's way"])


def test_rule_on_a_planted_module():
    docs = student_docstrings(PLANTED, "planted")
    assert set(docs) == {"planted", "planted.pick"}, "a function without a solution region is not the student's"
    assert sentences(docs["planted.pick"])[-1] == "``k`` must be an int."
    assert requirement_sentences(docs["planted.pick"]) == [
        "Returns a new list; ``x`` itself is left unchanged.", "A ``k`` below 0 raises ValueError.",
        "``k`` must be an int."]
    assert REQUIREMENT.search("The book's slice is fine (e.g. ``x[:k]``).") is None
    assert planted() == []


def test_planted_failures():
    """Each way the list can fall behind fails."""
    full = [S("planted.pick", "Returns a new list; ``x`` itself is left unchanged",
              "test_hidden_planted.py::test_pick", "test_planted.py::test_pick_public"),
            S("planted.pick", "raises ValueError", "test_hidden_planted.py::test_pick_refuses",
              "test_planted.py::test_pick_public")]
    # a requirement sentence nobody listed
    assert planted(stated=full) == [
        "planted.pick: requirement sentence not listed: '``k`` must be an int.'"]
    # a listed phrase the docstring no longer states
    changed = {"planted.pick": student_docstrings(PLANTED, "planted")["planted.pick"].replace("raises ValueError",
                                                                                             "gives []")}
    assert any("no longer in the docstring" in p for p in planted(docs=changed))
    # a hidden check or public test that does not exist; an entry with one side only
    ghost = [*full, S("planted.pick", "must be an int", "test_hidden_planted.py::test_ghost", "test_planted.py::test_nope")]
    assert set(planted(stated=ghost)) == {"hidden check test_hidden_planted.py::test_ghost does not exist",
                                          "public test test_planted.py::test_nope does not exist"}
    one_side = [*full, S("planted.pick", "must be an int", "test_hidden_planted.py::test_pick")]
    assert planted(stated=one_side) == [
        "planted.pick: 'must be an int': names no hidden check and public test (or acceptance, free, gap)"]
    # an acceptance backed by no alternative
    unbacked = [*full, S("planted.pick", "must be an int", accepted="another way")]
    assert planted(stated=unbacked) == ["planted.pick: 'must be an int': no alternative named 'another way'"]
