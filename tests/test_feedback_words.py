"""Feedback never points the wrong way, and names a mistake only from evidence that fits it.

Every message that sets a student's value beside the expected one is built by
``compare.yours_vs_expected`` (keyword-only: the student's value cannot land in the expected
slot). A hidden suite or a grading module that writes "got {...}", "expected {...}", "instead
of {...}" or "the book's are {...}" into an f-string by hand fails here. The diagnoses by
property (``diagnose``) are checked on planted evidence, both where they fit and where they
must stay silent.
"""
import ast
import re
from pathlib import Path

import pytest

from autograder.grading import diagnose
from autograder.grading.compare import expect_close, yours_vs_expected

ENGINE = Path(__file__).resolve().parents[1] / "autograder"
# The words that say whose value follows: an f-string holding one before an interpolated value
# compares by hand
COMPARING = re.compile(r"\b(got|expected|instead of)\b|\bthe book's are\b")


def hand_built(source):
    """[(line, text)] of the f-strings in ``source`` that write a comparing word before a value."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            parts = node.values
            if any(isinstance(p, ast.Constant) and COMPARING.search(p.value) and i + 1 < len(parts)
                   for i, p in enumerate(parts)):
                found.append((node.lineno, "".join(p.value if isinstance(p, ast.Constant) else "{}" for p in parts)))
    return found


def test_no_suite_or_grading_module_compares_by_hand():
    offenders = []
    for folder in ("grading", "suites"):
        for path in sorted((ENGINE / folder).rglob("*.py")):
            offenders += [f"{path.relative_to(ENGINE)}:{line}: {text}"
                          for line, text in hand_built(path.read_text(encoding="utf-8"))]
    assert not offenders, ("messages that set a student's value beside the expected one by hand; build them with "
                           "compare.yours_vs_expected:\n" + "\n".join(offenders))


@pytest.mark.parametrize("source", [
    'raise AssertionError(f"{what}: got {x}, expected {y}")',
    'msg = f"{what} returned {x}; expected the prompt, {y}"',
    'msg = (f"{k!r}: {a} instead of "\n       f"{b}")',
    'msg = f"{what} has parameters {own}; the book\'s are {book}"',
])
def test_the_rule_catches_a_planted_comparison(source):
    assert hand_built(source)


@pytest.mark.parametrize("source", [
    'msg = f"{what}: " + yours_vs_expected(yours=x, expected=y)',
    'msg = f"{what} raised {exc}"',
    'msg = "expected a tensor"',
])
def test_the_rule_lets_other_messages_be(source):
    assert not hand_built(source)


def test_yours_vs_expected_labels_each_side():
    assert yours_vs_expected(yours=3, expected=4) == "got 3, expected 4"
    assert yours_vs_expected(yours=(1, 3), yours_are="shape", expected=(2, 3)) == "shape (1, 3), expected (2, 3)"
    assert yours_vs_expected(yours="3 items", yours_are="", expected=4) == "3 items, expected 4"
    assert yours_vs_expected(yours={"b", "a"}, expected={"c"}) == "got ['a', 'b'], expected ['c']"
    with pytest.raises(TypeError):
        yours_vs_expected(3, 4)  # positional: which is whose would be the caller's guess


def test_expect_close_labels_the_students_value_as_the_students():
    import torch
    with pytest.raises(AssertionError, match=r"shape \(2, 3\), expected \(3, 2\)"):
        expect_close(torch.zeros(2, 3), torch.zeros(3, 2), "x")
    with pytest.raises(AssertionError, match=r"got 5\.0000, expected 1\.0000"):
        expect_close(torch.tensor([1.0, 5.0]), torch.tensor([1.0, 1.0]), "x")


# -- diagnoses by property: named where the evidence fits, silent where it does not --------------
def load_text(own, book):
    missing = sorted(set(book) - set(own)) or "none"
    extra = sorted(set(own) - set(book)) or "none"
    return f"M() has parameters {sorted(own)}; the book's names are {sorted(book)} (missing {missing}, extra {extra})"


HEAD = ["W_key.weight", "W_query.weight", "W_value.weight"]


def test_one_head_registered_is_named_only_when_heads_0_alone_is_there():
    book = [f"heads.{i}.{n}" for i in range(3) for n in HEAD]
    assert diagnose.from_failure(load_text([f"heads.0.{n}" for n in HEAD], book)) == diagnose.ONE_HEAD
    # heads.1 alone, or heads.0 short of a weight: another mistake, not this one
    assert diagnose.from_failure(load_text([f"heads.1.{n}" for n in HEAD], book)) != diagnose.ONE_HEAD
    assert diagnose.from_failure(load_text([f"heads.0.{n}" for n in HEAD[:2]], book)) != diagnose.ONE_HEAD


def test_nothing_registered_is_named():
    assert diagnose.from_failure(load_text([], ["scale", "shift"])) == diagnose.NOT_REGISTERED
    assert diagnose.from_failure(load_text(["scale"], ["scale", "shift"])) is None


def test_a_size_from_the_wrong_argument_is_named_only_where_one_argument_gives_each_size():
    sizes = {"vocab_size": 29, "context_length": 6, "emb_dim": 16}
    text = "GPTModel(): parameter pos_emb.weight has shape (29, 16), expected (6, 16)"
    assert diagnose.from_failure(text, sizes) == "pos_emb.weight sized with vocab_size where the book uses context_length"
    assert diagnose.from_failure(text) is None  # without the sizes it built with, nothing to read against
    assert diagnose.from_failure(text, {**sizes, "n_heads": 6}) is None  # 6: context_length or n_heads
    assert diagnose.from_failure(text.replace("(29, 16)", "(30, 16)"), sizes) is None  # 30: no argument
    assert diagnose.from_failure(text.replace("(29, 16)", "(29, 8)"), sizes) is None  # two sizes differ
    # several builds: the argument must explain every one of them
    coincide = ((20, 4), (4, 4), {"vocab_size": 20, "output_dim": 4, "context_length": 4})
    apart = ((3000, 8), (4, 8), {"vocab_size": 3000, "output_dim": 8, "context_length": 4})
    assert diagnose.wrong_size("t", [coincide]) is None
    assert diagnose.wrong_size("t", [coincide, apart]) == "t sized with vocab_size where the book uses context_length"


def test_book_sizes_reads_arguments_by_name_and_a_config_inside():
    sizes = diagnose.book_sizes(("d_in", "d_out", "context_length", "dropout", "num_heads"), (3, 4, 6, 0.0, 2),
                                {"qkv_bias": True}, {"d_out // num_heads": lambda s: s["d_out"] // s["num_heads"]})
    assert sizes == {"d_in": 3, "d_out": 4, "context_length": 6, "num_heads": 2, "d_out // num_heads": 2}
    cfg = {"vocab_size": 29, "context_length": 6, "drop_rate": 0.1, "qkv_bias": False}
    assert diagnose.book_sizes(("cfg",), (cfg,), {}) == {"vocab_size": 29, "context_length": 6}


def test_dot_t_is_named_from_the_failing_line_and_a_batched_matmul_error():
    source = "import torch\n\ndef f(q, k):\n    return q @ k.T\n"
    bmm = ("M(3, 2) forward on shape (2, 6, 3) raised RuntimeError: Expected size for first two dimensions of "
           "batch2 tensor to be: [2, 2] but got: [2, 6]. (m.py line 4)")
    assert diagnose.from_failure(bmm, sources={"m": source}) == diagnose.TRANSPOSE_ALL
    assert diagnose.from_failure(bmm) is None  # the line unread: nothing to show
    assert diagnose.from_failure(bmm, sources={"m": source.replace("k.T", "k.transpose(1, 2)")}) is None
    assert diagnose.from_failure(bmm.replace("line 4", "line 3"), sources={"m": source}) is None
    other = "f() raised RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5) (m.py line 4)"
    assert diagnose.from_failure(other, sources={"m": source}) is None  # a 2-D product: .T is right there
