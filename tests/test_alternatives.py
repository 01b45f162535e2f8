"""Fairness: every correct solution in another student's style gets full marks.

``tests/alternatives.py`` holds whole correct submissions (einsum, bmm, F.linear,
torch.where, bool or float masks of other shapes, scaled_dot_product_attention, loops
over heads, keyword arguments, files saved with a BOM, CRLF, a coding line or tabs).
Each is written to disk byte for byte as a student's editor would save it, graded once
by the session's warm grader, and must score full marks. Each must also really differ
from the reference, or the bank would prove nothing.
"""
import ast
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
for path in (str(ROOT), str(TESTS)):
    if path not in sys.path:
        sys.path.insert(0, path)

from alternatives import ALTERNATIVES, MODULES  # noqa: E402
from autograder.submission import decode_python_source  # noqa: E402
from test_mutants import FULL_MARKS, REFERENCE, describe  # noqa: E402


@pytest.fixture(scope="module")
def graded(grader, tmp_path_factory):
    """graded(alternative) -> results dict; each alternative is graded once for the module."""
    cache = {}

    def run(alternative):
        if alternative.name not in cache:
            folder = tmp_path_factory.mktemp("alternative")
            for filename, data in alternative.files().items():
                (folder / filename).write_bytes(data)
            cache[alternative.name] = grader.grade(folder)
        return cache[alternative.name]
    return run


def test_bank_is_well_formed():
    names = [a.name for a in ALTERNATIVES]
    assert len(ALTERNATIVES) >= 18
    assert len(set(names)) == len(names), "alternative names must be unique"
    for alternative in ALTERNATIVES:
        assert sorted(alternative.files()) == sorted(f"{m}.py" for m in MODULES), alternative.name


@pytest.mark.parametrize("alternative", ALTERNATIVES, ids=[a.name for a in ALTERNATIVES])
def test_alternative_gets_full_marks(graded, alternative):
    result = graded(alternative)
    assert result["max_score"] == FULL_MARKS, describe(result)
    assert result["score"] == FULL_MARKS, f"{alternative.name}: a correct solution lost points\n{describe(result)}"
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


REFERENCE_CODE = {m: _code(REFERENCE[f"{m}.py"]) for m in MODULES}


@pytest.mark.parametrize("alternative", ALTERNATIVES, ids=[a.name for a in ALTERNATIVES])
def test_alternative_is_not_the_reference(alternative):
    """Every module is read as Python reads the file on disk, and its code is not the reference's."""
    for filename, data in alternative.files().items():
        module = filename[:-3]
        code = _code(decode_python_source(data))
        assert code["<module>"] != REFERENCE_CODE[module]["<module>"], f"{alternative.name}: {filename} is the reference"


def test_bank_rewrites_every_student_function():
    """Each function and method of the reference is written differently by some alternative."""
    rewritten = set()
    for alternative in ALTERNATIVES:
        for module, text in alternative.sources().items():
            code = _code(text)
            rewritten |= {(module, name) for name, dump in REFERENCE_CODE[module].items()
                          if code.get(name) != dump}
    same_everywhere = [f"{module}.{name}" for module in MODULES for name in REFERENCE_CODE[module]
                       if (module, name) not in rewritten]
    assert not same_everywhere, f"no alternative writes these differently from the reference: {same_everywhere}"
