"""One mistake, one part, across chapters: a chapter-3 mistake costs nothing in chapter 4.

Every mutant of chapter 3's bank that edits a module chapter 4 builds on (the manifest's
builds_on: multihead_attention.py and causal_attention.py), with the student's chapter-3 files
as that mutant leaves them, beside the chapter-4 reference, keeps every chapter-4 part at full
marks: the blocks and the GPT are judged with stand-ins for the attention, and what the
attention is built with is judged on the arguments the block passes.

The one exception is a multihead_attention.py that does not import at all (a typo in an
import): then no block can even be built, so the parts that need no block keep their
points and every check that lost its points says plainly which chapter-3 file could not be
imported. Crediting a block that cannot run would hand out its points unseen.

The block's own choice of its attention's arguments is judged on what the block hands the grader's
stand-in (recorded calls, beside the reference's), never by running the student's attention: so an
attention that crashes, or makes a mistake chapter 3 has no name for, costs chapter 4 nothing either
(issue 35: judging it through the student's attention credited what a forged attention arranged).
"""
from pathlib import Path

import pytest

from banks import describe, load, mutated_sources, reference_sources

from autograder.grading import course
from autograder.grading.runner import Grader

TESTS = Path(__file__).resolve().parent

CH04 = course.get("ch04_gpt")
EARLIER = {m for modules in CH04.builds_on.values() for m in modules}  # file names
MUTANTS = [m for m in load("ch03_attention", "mutants").MUTANTS
           if {f"{m.module}.py", *(f"{a[0]}.py" for a in getattr(m, "also", ()))} & EARLIER]
NEED_NO_BLOCK = ("layer_norm", "feed_forward", "shortcuts")


@pytest.fixture(scope="module")
def grader():
    with Grader() as g:
        yield g


def submission(folder, mutant):
    """The chapter-4 reference beside the student's chapter-3 files as ``mutant`` leaves them."""
    chapter_3 = mutated_sources("ch03_attention", mutant)
    sources = {**reference_sources(CH04.name), **{name: chapter_3[name] for name in EARLIER}}
    for file, text in sources.items():
        (folder / file).write_text(text)
    return folder


def does_not_import(mutant):
    """Whether the mutant's multihead_attention.py fails to import (judged here, in the trusted
    process). A causal_attention.py that does not compile costs chapter 4 nothing: the child
    stands a placeholder in for it, and MultiHeadAttention never uses CausalAttention."""
    try:
        compile(mutated_sources("ch03_attention", mutant)["multihead_attention.py"], "multihead_attention.py", "exec")
    except SyntaxError:
        return True
    return "ImportError on import" in mutant.name


def test_the_bank_reaches_chapter_4():
    assert len(MUTANTS) >= 30
    assert any(does_not_import(m) for m in MUTANTS), "a multihead_attention.py that does not import is in the bank"


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_a_chapter_3_mistake_costs_nothing_in_chapter_4(grader, tmp_path, mutant):
    result = grader.grade(submission(tmp_path, mutant), CH04.name)
    parts = result["extra_data"]["parts"]
    failed = [t for t in result["tests"] if t["status"] != "passed"]
    if does_not_import(mutant):
        assert all(parts[p][0] == parts[p][1] for p in NEED_NO_BLOCK), describe(result)
        # the blocks and the GPT are judged on the grader's stand-ins for the attention: what fails,
        # if anything, says plainly which chapter-3 file is the cause
        assert all(any(f"{name} could not be imported" in t["output"] for name in EARLIER) for t in failed), \
            describe(result)
        return
    assert result["score"] == result["max_score"], describe(result)
    # and no check blames chapter 3 where nothing failed
    assert not any("could not be imported" in t["output"] for t in result["tests"]), describe(result)
