"""Fixtures of the chapter-5 hidden suites.

``student`` (the sandboxed submission) comes from the grader's plugin; ``ref`` is the
reference solution, imported here, in the trusted grader process only: chapter 5's modules,
and the chapter-4 and chapter-3 modules it builds on (the manifest's builds_on).
"""
from pathlib import Path

import pytest

from autograder.grading import course

ASSIGNMENT = course.get(Path(__file__).parent.name)


@pytest.fixture(scope="session")
def ref():
    return course.reference_modules(ASSIGNMENT)


def pytest_collection_modifyitems(items):
    """The parts in the manifest's order: a check built on a lower part may expect the answer the
    book's piece gives with the mistake that part was charged with (kit.charged), computed in the
    grader, only once that part has been graded."""
    order = {part: i for i, part in enumerate(ASSIGNMENT.parts)}
    items.sort(key=lambda item: order.get(item.module.__name__.removeprefix("test_hidden_"), len(order)))
