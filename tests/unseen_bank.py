"""Shared pieces of the unseen banks (``tests/<assignment>/mutants_unseen.py``).

An unseen bank holds single-edit mistakes written from the book and the reference solutions
alone, without looking at the grader's checks or at the other banks: it measures how well the
feedback finds mistakes nobody foresaw. Each entry is a ``banks.Mutant`` (so the code that
grades ``mutants.py`` banks can grade these too) whose ``parts`` is the one part the edited
module belongs to (where the mistake lives; a mistake may also cost points in later parts that
use the module). An edit changes one line, or swaps two adjacent lines ("two statements swapped").

Each bank module sets ``ASSIGNMENT``, ``MUTANTS`` and ``LINES = lines(ASSIGNMENT, MUTANTS)``:
the line of the solution file each mistake is on, computed from the text it replaces.
"""
from banks import Mutant
from autograder.grading import course


def mistake(name, module, old, new):
    """A single-edit mistake in ``solutions/<assignment>/<module>.py``: ``old`` becomes ``new``.
    Its part is the module's own (every manifest names a part after the module it grades)."""
    return Mutant(name=name, module=module, old=old, new=new, parts=(module,))


def solution_text(assignment, module):
    return (course.get(assignment).solutions / f"{module}.py").read_text(encoding="utf-8")


def line_of(assignment, mutant):
    """The 1-based line of the solution file on which ``mutant.old`` starts."""
    text = solution_text(assignment, mutant.module)
    return text[:text.index(mutant.old)].count("\n") + 1


def lines(assignment, mutants):
    """{mutant name: the line its edit is on}."""
    return {m.name: line_of(assignment, m) for m in mutants}
