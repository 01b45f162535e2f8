"""Shared fixtures of the project's own tests."""
import pytest

from autograder.grading.runner import Grader


@pytest.fixture(scope="session")
def grader():
    """One warm grader (one zygote) for every test that grades."""
    with Grader() as g:
        yield g
