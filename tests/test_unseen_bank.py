"""The unseen banks (``tests/<assignment>/mutants_unseen.py``) cannot rot: every entry's
``old`` text occurs exactly once in its solution file, the edit changes one line (or swaps two
adjacent lines), the mutated file still parses, and the recorded line is where the edit is.
Grading the banks is left to the benchmark that reads them; this only keeps them well formed."""
import ast

import pytest

import banks
from autograder.grading import course
from unseen_bank import line_of, solution_text

MINIMUM = {"ch02_text_data": 12, "ch03_attention": 25, "ch04_gpt": 25, "efficient_attention": 20,
           "ch05_pretraining": 12}


def bank(assignment):
    return banks.load(assignment, "mutants_unseen")


def entries():
    return [pytest.param(a, m, id=f"{a}:{m.name}") for a in MINIMUM for m in bank(a).MUTANTS]


def single_edit(before, after):
    """True where ``after`` is ``before`` with one line changed or two adjacent lines swapped."""
    a, b = before.splitlines(), after.splitlines()
    if len(a) != len(b):
        return False
    changed = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    if len(changed) == 1:
        return True
    return (len(changed) == 2 and changed[1] == changed[0] + 1
            and (a[changed[0]], a[changed[1]]) == (b[changed[1]], b[changed[0]]))


@pytest.mark.parametrize("assignment", list(MINIMUM))
def test_bank_is_large_enough_and_named_once(assignment):
    mutants = bank(assignment).MUTANTS
    assert len(mutants) >= MINIMUM[assignment]
    names = [m.name for m in mutants]
    assert len(names) == len(set(names)), "two mistakes share a name"
    edits = [(m.module, m.old, m.new) for m in mutants]
    assert len(edits) == len(set(edits)), "the same edit twice"
    parts = course.get(assignment).parts
    for m in mutants:
        assert m.parts == (m.module,) and m.module in parts, (m.name, m.parts)


@pytest.mark.parametrize("assignment, mutant", entries())
def test_entry_applies_once_and_still_parses(assignment, mutant):
    source = solution_text(assignment, mutant.module)
    assert source.count(mutant.old) == 1, f"{mutant.old!r} occurs {source.count(mutant.old)} times"
    mutated = source.replace(mutant.old, mutant.new)
    assert mutated != source
    assert single_edit(source, mutated), "not a single-line edit (nor two adjacent lines swapped)"
    ast.parse(mutated, filename=f"{mutant.module}.py")
    line = bank(assignment).LINES[mutant.name]
    assert line == line_of(assignment, mutant)
    assert mutant.old.splitlines()[0] in source.splitlines()[line - 1]
