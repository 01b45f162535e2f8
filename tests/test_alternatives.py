"""Fairness: every correct solution in another student's style gets full marks.

``tests/<assignment>/alternatives.py`` holds whole correct submissions (for chapter 3: einsum,
bmm, F.linear, torch.where, bool or float masks of other shapes, scaled_dot_product_attention,
loops over heads, keyword arguments, files saved with a BOM, CRLF, a coding line or tabs).
Each is written to disk byte for byte as a student's editor would save it, graded once
by the session's warm grader, and must score full marks (the reference's total). Each must
also really differ from the reference, or the bank would prove nothing.
"""
import ast
from pathlib import Path

import pytest

from autograder.grading import course
from autograder.sandbox.submission import decode_python_source
from banks import banks, describe, earlier_sources, reference_sources

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

BANKS = banks("alternatives")
CASES = [(assignment, alternative) for assignment, bank in BANKS for alternative in bank.ALTERNATIVES]
IDS = [f"{assignment}: {alternative.name}" for assignment, alternative in CASES]


@pytest.fixture(scope="module")
def graded(graded):
    """graded(assignment, key, files) -> results dict: ``files`` beside the earlier assignments'
    references (``key`` names the case; the session's ``graded`` grades each submission once)."""
    session = graded
    return lambda assignment, key, files: session(assignment, {**earlier_sources(assignment), **files})


def test_every_bank_is_well_formed():
    assert BANKS, "no assignment has an alternatives bank"
    for assignment, bank in BANKS:
        names = [a.name for a in bank.ALTERNATIVES]
        parts = len(course.get(assignment).parts)
        assert len(bank.ALTERNATIVES) >= max(3, parts), (
            f"{assignment}: {len(bank.ALTERNATIVES)} alternatives for {parts} parts: a bank shows at least three "
            "correct styles (and one per part), which together rewrite every student function "
            "(test_bank_rewrites_every_student_function) and each keep full marks")
        assert len(set(names)) == len(names), f"{assignment}: alternative names must be unique"
        for alternative in bank.ALTERNATIVES:
            assert sorted(alternative.files()) == sorted(course.get(assignment).modules), alternative.name


@pytest.mark.parametrize("assignment, alternative", CASES, ids=IDS)
def test_alternative_gets_full_marks(graded, assignment, alternative):
    full_marks = graded(assignment, "<the reference>", reference_sources(assignment))["score"]
    result = graded(assignment, alternative.name, alternative.files())
    assert result["max_score"] == full_marks, describe(result)
    assert result["score"] == full_marks, f"{alternative.name}: a correct solution lost points\n{describe(result)}"
    notes = [line for line in result["output"].splitlines() if line.strip() and not line.startswith("WARNING")]
    assert not notes, f"{alternative.name}: notes about files that Python reads fine: {notes}"


def _code(text):
    """The module's code without comments, docstrings or layout: {qualified name: AST dump}."""
    tree = ast.parse(text)
    found = {"<module>": ast.dump(tree)}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.ClassDef)):
                name = prefix + child.name
                body = child.body[1:] if ast.get_docstring(child) else child.body
                found[name] = ast.dump(ast.Module(body=body, type_ignores=[]))
                visit(child, name + ".")
    visit(tree, "")
    return found


REFERENCE_CODE = {assignment: {f[:-3]: _code(reference_sources(assignment)[f]) for f in course.get(assignment).modules}
                  for assignment, _ in BANKS}


@pytest.mark.parametrize("assignment, alternative", CASES, ids=IDS)
def test_alternative_is_not_the_reference(assignment, alternative):
    """Every module is read as Python reads the file on disk, and its code is not the reference's."""
    for filename, data in alternative.files().items():
        module = filename[:-3]
        code = _code(decode_python_source(data))
        assert code["<module>"] != REFERENCE_CODE[assignment][module]["<module>"], \
            f"{alternative.name}: {filename} is the reference"


@pytest.mark.parametrize("assignment", [assignment for assignment, _ in BANKS])
def test_bank_rewrites_every_student_function(assignment):
    """Each function and method of the reference is written differently by some alternative."""
    rewritten = set()
    reference = REFERENCE_CODE[assignment]
    for alternative in dict(BANKS)[assignment].ALTERNATIVES:
        for module, text in alternative.sources().items():
            code = _code(text)
            rewritten |= {(module, name) for name, dump in reference[module].items() if code.get(name) != dump}
    same_everywhere = [f"{module}.{name}" for module in reference for name in reference[module]
                       if (module, name) not in rewritten]
    assert not same_everywhere, f"no alternative writes these differently from the reference: {same_everywhere}"
