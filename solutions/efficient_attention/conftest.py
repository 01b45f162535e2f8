"""Set-up of the public tests of the efficient-attention assignment (pytest runs it first).

Your modules here build on your chapter-3 attention and your chapter-4 LayerNorm and
FeedForward, imported as the book does (``from layer_norm import LayerNorm``). Copy those files
into this folder (you hand them in with this assignment); until you do, they are taken from the
``ch03_attention`` and ``ch04_gpt`` folders beside this one, and pytest says in one line which
are missing from both.
"""
import sys
from pathlib import Path

import pytest

try:
    import public_tests
except ImportError:  # the master folder (solutions/): the engine holds the module, the stubs a copy
    sys.path.append(str(Path(__file__).resolve().parents[2] / "autograder" / "support"))
    import public_tests

# The parts in the book's order (the stub generator writes them here from the course's
# manifest; the master reads the manifest itself).
PARTS = ()
if not PARTS:
    sys.path.append(str(Path(__file__).resolve().parents[2]))
    from autograder.grading.course import get
    PARTS = get("efficient_attention").parts_table

# Every file you hand in, and the assignment it comes from (the stub generator writes it here
# from the course's manifest; the master reads the manifest itself).
HAND_IN = ()
if not HAND_IN:
    sys.path.append(str(Path(__file__).resolve().parents[2]))
    from autograder.grading.course import get
    HAND_IN = tuple((f.file, f.assignment) for f in get("efficient_attention").hand_in)

missing = public_tests.use_earlier(__file__, HAND_IN)


def pytest_report_header():
    """One line before the tests (and after them, see below) naming what is missing, and whence."""
    return public_tests.missing_lines(missing)


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
    # the missing files again, below the parts
    public_tests.summary(terminalreporter, PARTS, then=pytest_report_header())
