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
    """The exercises last: exercise 2.2 may expect the first batch of a loader with the mistake
    data_sampling was charged with (kit.charged), computed in the grader, only once that part
    has been graded (_text_data.loader_first_batches)."""
    items.sort(key=lambda item: item.module.__name__.endswith("test_hidden_exercises"))
