"""Fixtures of the chapter-4 hidden suites.

``student`` (the sandboxed submission) comes from the grader's plugin; ``ref`` is the
reference solution, imported here, in the trusted grader process only: chapter 4's modules,
and chapter 3's multi-head attention, which chapter 4 builds on (the manifest's builds_on).
"""
import importlib
import sys
import types
from pathlib import Path

import pytest

from autograder import course

ASSIGNMENT = course.get(Path(__file__).parent.name)


@pytest.fixture(scope="session")
def ref():
    # this chapter's folder first: both chapters have an exercises.py
    folders = [str(ASSIGNMENT.solutions)] + [str(course.get(name).solutions) for name in ASSIGNMENT.builds_on]
    for folder in reversed(folders):
        if folder in sys.path:
            sys.path.remove(folder)
        sys.path.insert(0, folder)
    names = ASSIGNMENT.module_names + tuple(m.removesuffix(".py") for ms in ASSIGNMENT.builds_on.values() for m in ms)
    return types.SimpleNamespace(**{name: importlib.import_module(name) for name in names})


def pytest_collection_modifyitems(items):
    """The parts in the manifest's order: a check built on a lower part credits the student's own
    lower piece only where that part has already lost (and earned) points (_gpt.own_credit)."""
    order = {part: i for i, part in enumerate(ASSIGNMENT.parts)}
    items.sort(key=lambda item: order.get(item.module.__name__.removeprefix("test_hidden_"), len(order)))
