"""Fixtures of the appendix-A hidden suites.

``student`` (the sandboxed submission) comes from the grader's plugin; ``ref`` (the reference
solution, imported in the trusted grader process only) and the checks' order (the manifest's
parts) come from the suite kit (kit.suite_conftest).
"""
from autograder.grading.kit import suite_conftest

ref, pytest_collection_modifyitems = suite_conftest(__file__)
