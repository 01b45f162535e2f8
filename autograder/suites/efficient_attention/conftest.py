"""Fixtures of the efficient-attention hidden suites.

``student`` (the sandboxed submission) comes from the grader's plugin; ``ref`` is the
reference solution, imported here, in the trusted grader process only: this assignment's modules
and those of the assignments it builds on (the manifest's builds_on).
"""
from pathlib import Path

import pytest

from autograder.grading import course

ASSIGNMENT = course.get(Path(__file__).parent.name)


@pytest.fixture(scope="session")
def ref():
    return course.reference_modules(ASSIGNMENT)


def pytest_collection_modifyitems(items):
    """The parts in the manifest's order: a check built on a lower part credits the student's own
    lower piece only where that part has already lost (and earned) points (credit for lower parts)."""
    order = {part: i for i, part in enumerate(ASSIGNMENT.parts)}
    items.sort(key=lambda item: order.get(item.module.__name__.removeprefix("test_hidden_"), len(order)))
