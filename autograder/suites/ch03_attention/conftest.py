"""Fixtures of the chapter-3 hidden suites.

``student`` (the sandboxed submission) comes from the grader's plugin; ``ref`` is the
reference solution, imported here, in the trusted grader process only.
"""
import importlib
import sys
import types

import pytest

from autograder.paths import SOLUTIONS

MODULES = ("simple_attention", "self_attention", "causal_attention", "multihead_attention", "exercises")


@pytest.fixture(scope="session")
def ref():
    folder = str(SOLUTIONS / "ch03_attention")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return types.SimpleNamespace(**{name: importlib.import_module(name) for name in MODULES})
