"""Fixtures of the chapter-3 hidden suites.

``student`` (the sandboxed submission) comes from the grader's plugin; ``ref`` is the
reference solution, imported here, in the trusted grader process only.
"""
from pathlib import Path

import pytest

from autograder.grading import course

ASSIGNMENT = course.get(Path(__file__).parent.name)


@pytest.fixture(scope="session")
def ref():
    return course.reference_modules(ASSIGNMENT)


def pytest_collection_modifyitems(items):
    """The exercises last: a check of an exercise may credit the student's own multi-head
    class only where that class has already lost points in its own part (_attention.lower_answer)."""
    items.sort(key=lambda item: item.module.__name__.endswith("test_hidden_exercises"))
