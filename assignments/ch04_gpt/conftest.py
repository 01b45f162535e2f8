"""Set-up of the public tests of chapter 4 (pytest runs it before them).

Your GPT uses your chapter-3 ``MultiHeadAttention``, imported as the book does:
``from multihead_attention import MultiHeadAttention``. Copy your ``multihead_attention.py``
and ``causal_attention.py`` into this folder (you hand them in with chapter 4); until you do,
they are taken from the ``ch03_attention`` folder beside this one, and pytest says in one line
which are missing from both. tiktoken gets GPT-2's tokenizer files offline.
"""
import sys
from pathlib import Path

import pytest
import torch

try:
    import tiktoken_offline
except ImportError:  # the master folder (solutions/): the engine holds the module, the stubs a copy
    sys.path.append(str(Path(__file__).resolve().parents[2] / "autograder" / "support"))
    import tiktoken_offline

import public_tests  # beside tiktoken_offline: the public tests' order and summary

# The parts in the book's order (the stub generator writes them here from the course's
# manifest; the master reads the manifest itself).
PARTS = (
    "layer_norm",
    "feed_forward",
    "shortcuts",
    "transformer_block",
    "gpt_model",
    "generate",
    "exercises",
)
if not PARTS:
    sys.path.append(str(Path(__file__).resolve().parents[2]))
    from autograder.grading.course import get
    PARTS = get("ch04_gpt").parts

# Every file you hand in, and the assignment it comes from (the stub generator writes it here
# from the course's manifest; the master reads the manifest itself).
HAND_IN = (
    ("layer_norm.py", "ch04_gpt"),
    ("feed_forward.py", "ch04_gpt"),
    ("shortcuts.py", "ch04_gpt"),
    ("transformer_block.py", "ch04_gpt"),
    ("gpt_model.py", "ch04_gpt"),
    ("generate.py", "ch04_gpt"),
    ("exercises.py", "ch04_gpt"),
    ("causal_attention.py", "ch03_attention"),
    ("multihead_attention.py", "ch03_attention"),
)
if not HAND_IN:
    sys.path.append(str(Path(__file__).resolve().parents[2]))
    from autograder.grading.course import get
    HAND_IN = tuple((f.file, f.assignment) for f in get("ch04_gpt").hand_in)

missing = public_tests.use_earlier(__file__, HAND_IN)

tiktoken_offline.install()


def pytest_report_header():
    """One line before the tests (and after them, see below) naming what is missing, and whence."""
    return public_tests.missing_lines(missing)


def pytest_terminal_summary(terminalreporter):
    # the missing files again, below the parts
    public_tests.summary(terminalreporter, PARTS, then=pytest_report_header())


@pytest.fixture(scope="session")
def gpt_124m():
    """``gpt_124m()`` gives ``GPTModel(GPT_CONFIG_124M)`` built after ``torch.manual_seed(123)``, as
    the book builds it, once for all tests (163 million parameters take seconds), with the random
    state right after building it (the book's first forward pass draws its dropout masks from
    there). Built on the first call, inside a test: an unwritten GPTModel fails that test with
    its NotImplementedError instead of erroring in the set-up."""
    built = []

    def get():
        if not built:
            from gpt_model import GPT_CONFIG_124M, GPTModel
            torch.manual_seed(123)
            model = GPTModel(GPT_CONFIG_124M)
            built.append((model, torch.get_rng_state()))
        return built[0]
    return get


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
    public_tests.explain_collection(node, call, report)


def pytest_sessionfinish(session, exitstatus):
    public_tests.hide_stubs(session, exitstatus)
