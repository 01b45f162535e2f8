"""Shared fixtures of the project's own tests, and their tiers (pyproject.toml's markers).

``python -m pytest`` runs every test. A contributor's quick run leaves the tiers out:
``python -m pytest -m "not slow and not browser and not privileged"``."""
import pytest

from autograder.grading.runner import Grader

# Whole banks graded, or the CLI, nbgrader and Gradescope run end to end in other processes:
# minutes each on two cores.
SLOW = {"test_mutants", "test_alternatives", "test_hostile", "test_ch02_hostile", "test_ch04_hostile",
        "test_ch04_builds_on_ch03", "test_class_report", "test_zygote", "test_course", "test_fairness",
        "test_public_tests", "test_ci_targets", "test_isolation_modes", "test_unprivileged",
        "test_nbgrader_autograde", "test_nbgrader_lifecycle", "test_nbgrader_kernel", "test_nbgrader_pages",
        "test_nbgrader_release"}
# The grader as root, dropping to nobody or making namespaces: what an ordinary user's run skips.
PRIVILEGED = {"test_unprivileged", "test_isolation_modes"}
# Whole modules whose fixture opens the pages in a browser (single tests carry the mark themselves).
BROWSER = {"test_nbgrader_pages"}


def pytest_collection_modifyitems(items):
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        if module in SLOW:
            item.add_marker(pytest.mark.slow)
        if module in PRIVILEGED:
            item.add_marker(pytest.mark.privileged)
        if module in BROWSER:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def grader():
    """One warm grader (one zygote) for every test that grades."""
    with Grader() as g:
        yield g
