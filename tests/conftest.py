"""Shared fixtures of the project's own tests, and a line for each shared set-up.

Some fixtures shared by a module's tests run for minutes (building an nbgrader course and
autograding a class in it, say), and pytest prints nothing meanwhile: each module- or
session-scoped fixture says on the terminal what it sets up, and then how long it took."""
import time

import pytest

from autograder.grading.runner import Grader


@pytest.fixture(scope="session")
def grader():
    """One warm grader (one zygote) for every test that grades."""
    with Grader() as g:
        yield g


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
