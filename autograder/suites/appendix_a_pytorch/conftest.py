"""Fixtures of the appendix-A hidden suites: ``student`` (the sandboxed submission) comes from the
grader's plugin; ``ref``, the reference solution, is imported here, in the trusted grader only."""
from pathlib import Path

import pytest

from autograder.grading import course


@pytest.fixture(scope="session")
def ref():
    return course.reference_modules(course.get(Path(__file__).parent.name))
