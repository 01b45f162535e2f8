"""Set-up of the public tests of chapter 5 (pytest runs it before them).

Chapter 5 trains your chapter-4 ``GPTModel``: copy your ``gpt_model.py``, ``generate.py``,
``transformer_block.py``, ``layer_norm.py``, ``feed_forward.py`` (chapter 4) and
``multihead_attention.py``, ``causal_attention.py`` (chapter 3) into this folder (you hand them in
with chapter 5); until you do, they are taken from the folders of those assignments beside this
one, and pytest says in one line which are missing from all. tiktoken gets GPT-2's tokenizer files
offline. Most tests hand your functions the small models of ``stand_ins.py`` instead of your GPT,
as the grader does; the tests of the book's own numbers use your GPT and are skipped, saying why,
where your chapter-4 GPT does not give the book's text.
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
PARTS = ()
if not PARTS:
    sys.path.append(str(Path(__file__).resolve().parents[2]))
    from autograder.grading.course import get
    PARTS = get("ch05_pretraining").parts_table

# Every file you hand in, and the assignment it comes from (the stub generator writes it here
# from the course's manifest; the master reads the manifest itself).
HAND_IN = ()
if not HAND_IN:
    sys.path.append(str(Path(__file__).resolve().parents[2]))
    from autograder.grading.course import get
    HAND_IN = tuple((f.file, f.assignment) for f in get("ch05_pretraining").hand_in)

missing = public_tests.use_earlier(__file__, HAND_IN)

tiktoken_offline.install()


def pytest_report_header():
    """One line before the tests (and after them, see below) naming what is missing, and whence."""
    return public_tests.missing_lines(missing)


def pytest_terminal_summary(terminalreporter):
    # the missing files again, below the parts
    public_tests.summary(terminalreporter, PARTS, then=pytest_report_header())


@pytest.fixture(scope="session")
def tokenizer():
    """tiktoken's GPT-2 encoding, as the book uses it."""
    import tiktoken
    return tiktoken.get_encoding("gpt2")


# The book's chapter-5 model: GPT-2 small with a context of 256 tokens, built after seed 123.
BOOK_TEXT = "Every effort moves you rentingetic wasnم refres RexMeCHicular stren"


@pytest.fixture(scope="session")
def book_gpt(tokenizer):
    """``book_gpt()`` gives your ``GPTModel`` with GPT_CONFIG_124M and ``context_length`` 256, built
    after ``torch.manual_seed(123)`` as section 5.1 builds it, in eval mode, once for all tests
    (seconds). Where it does not generate the book's text from "Every effort moves you", the test
    is skipped: the book's numbers need the book's chapter-4 GPT (chapter 4's tests say where yours
    differs), and chapter 5's grade does not use your GPT."""
    built = []

    def get():
        if not built:
            try:
                from generate import generate_text_simple
                from gpt_model import GPT_CONFIG_124M, GPTModel
                torch.manual_seed(123)
                model = GPTModel({**GPT_CONFIG_124M, "context_length": 256}).eval()
                idx = torch.tensor([tokenizer.encode("Every effort moves you")])
                out = generate_text_simple(model, idx, max_new_tokens=10, context_size=256)
                built.append((model, tokenizer.decode(out[0].tolist())))
            except Exception as exc:  # chapter 4 not written or broken: not this chapter's test
                built.append((None, f"nothing ({type(exc).__name__}: {exc})"))
        model, text = built[0]
        if text != BOOK_TEXT:
            pytest.skip(f"your chapter-4 GPTModel generates {text!r}, not the book's {BOOK_TEXT!r} "
                        "(chapter 4's public tests say where): the book's numbers need the book's GPT")
        return model
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
    public_tests.explain_collection(node, call, report, PARTS)


def pytest_sessionfinish(session, exitstatus):
    public_tests.hide_stubs(session, exitstatus)
