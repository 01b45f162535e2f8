"""Shared fixtures of the project's own tests, their tiers (pyproject.toml's markers), and a
line for each shared set-up.

``python -m pytest`` runs every test but the rest of the checks over whole banks that it samples
(marked ``full``; ``python -m pytest --full`` runs them too, before a release). A contributor's
quick run leaves the other tiers out: ``python -m pytest -m "not slow and not browser and not privileged"``.

Some fixtures shared by a module's tests run for minutes (building an nbgrader course and
autograding a class in it, say), and pytest prints nothing meanwhile: each module- or
session-scoped fixture says on the terminal what it sets up, and then how long it took."""
import copy
import hashlib
import json
import time

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


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true",
                     help="also run the tests marked full: the whole of each check over a bank that a plain run samples")


def pytest_collection_modifyitems(config, items):
    full = pytest.mark.skip(reason="the full tier (a plain run samples this bank): python -m pytest --full")
    for item in items:
        if item.get_closest_marker("full") and not config.getoption("--full"):
            item.add_marker(full)
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


@pytest.fixture(scope="session")
def graded(grader, tmp_path_factory):
    """graded(assignment, files) -> the result of grading ``files`` ({file name: text or bytes}) as
    ``assignment``, in a folder of its own: each distinct submission is graded once for the whole
    run (the banks' tests, the public tests' agreement and the alternatives share their gradings);
    each call gets a copy of its own."""
    cache = {}

    def grade(assignment, files):
        files = {name: data.encode() if isinstance(data, str) else data for name, data in files.items()}
        key = hashlib.sha256(json.dumps([assignment, sorted((name, data.hex()) for name, data in files.items())])
                             .encode()).hexdigest()
        if key not in cache:
            folder = tmp_path_factory.mktemp("graded")
            for name, data in files.items():
                (folder / name).write_bytes(data)
            cache[key] = grader.grade(folder, assignment)
        return copy.deepcopy(cache[key])
    return grade


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    plugins = request.config.pluginmanager
    terminal, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if fixturedef.scope not in ("module", "session") or terminal is None or capture is None:
        yield
        return
    where = request.node.nodeid.split("::")[0] if fixturedef.scope == "module" else "the session"
    with capture.global_and_fixture_disabled():  # the terminal itself, whatever -s says
        if getattr(terminal._tw, "width_of_current_line", 0):  # after a test's dot: a line of its own
            terminal.write("\n")
        terminal.write(f"[set-up] {fixturedef.argname} for {where} ... ", flush=True)
    started = time.perf_counter()
    yield
    with capture.global_and_fixture_disabled():
        terminal.write(f"{time.perf_counter() - started:.1f} s\n", flush=True)
