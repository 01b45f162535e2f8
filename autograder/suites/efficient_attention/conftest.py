"""Fixtures of the efficient-attention hidden suites.

``student`` (the sandboxed submission) comes from the grader's plugin; ``ref`` (the reference
solution: this assignment's modules and those of the assignments it builds on, imported in the trusted grader process only) and the checks'
order (the manifest's parts) come from the suite kit (kit.suite_conftest).
"""
from autograder.grading.kit import suite_conftest

ref, pytest_collection_modifyitems = suite_conftest(__file__)
