"""Shared by the public tests of chapter 2: no test reaches the network, and the checks of
byte pair encoding use tiktoken's GPT-2 encoding from the package the README's set-up command
installs (tiktoken_offline.py, beside this file, puts its files where tiktoken looks; the course
never downloads them)."""
import socket
import sys
from pathlib import Path

import pytest

try:
    import tiktoken_offline
except ImportError:  # the master folder (solutions/): the engine holds the module, the stubs a copy
    sys.path.append(str(Path(__file__).resolve().parents[2] / "autograder" / "support"))
    import tiktoken_offline

import public_tests  # beside tiktoken_offline: the public tests' order and summary

# The parts in the book's order (the stub generator writes them here from the course's
# manifest; the master reads the manifest itself).
PARTS = {
    "simple_tokenizer": (),
    "special_tokens": (),
    "bpe": (),
    "data_sampling": (),
    "embeddings": (),
    "exercises": (),
}
if not PARTS:
    sys.path.append(str(Path(__file__).resolve().parents[2]))
    from autograder.grading.course import get
    PARTS = get("ch02_text_data").parts_table


def _refuse(*args, **kwargs):
    raise OSError("the course's tests never use the network")


@pytest.fixture(scope="session", autouse=True)
def no_network():
    """Every connection fails at once, so a missing file is a clear skip, never a download."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _refuse)
        patch.setattr(socket, "getaddrinfo", _refuse)
        patch.setattr(socket, "create_connection", _refuse)
        yield


@pytest.fixture(scope="session")
def gpt2(no_network):
    """tiktoken's GPT-2 encoding; the test is skipped (with the reason) where it is not installed."""
    import tiktoken
    try:
        tiktoken_offline.install()
        return tiktoken.get_encoding("gpt2")
    except Exception as exc:
        pytest.skip("tiktoken's GPT-2 encoding is not on this machine and the course never downloads it "
                    f"({type(exc).__name__}): run the README's set-up command, then these tests again")


def pytest_configure(config):
    public_tests.keep_going(config)


def pytest_collection_modifyitems(items):
    public_tests.book_order(items, PARTS)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failure in the tests' own words: one line for a function not written yet."""
    public_tests.explain(item, call, (yield).get_result())


def pytest_exception_interact(node, call, report):
    """A module that cannot be imported, in the same short words."""
    public_tests.explain_collection(node, call, report, PARTS)


def pytest_sessionfinish(session, exitstatus):
    public_tests.hide_stubs(session, exitstatus)


def pytest_terminal_summary(terminalreporter):
    public_tests.summary(terminalreporter, PARTS)
