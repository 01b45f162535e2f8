"""Fixtures of the chapter-2 hidden suites.

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
    """The exercises last, as the manifest's order of parts shows them."""
    items.sort(key=lambda item: item.module.__name__.endswith("test_hidden_exercises"))
