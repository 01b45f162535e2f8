"""The student stubs are generated from the solutions, up to date, and leak no solution line."""
import ast

import pytest

from autograder import course, stubs
from autograder.paths import SOLUTIONS


@pytest.mark.parametrize("assignment", course.names())
def test_assignments_are_up_to_date(assignment):
    assert stubs.stale_files(assignment) == [], "run: python -m autograder stubs"


@pytest.mark.parametrize("master", [a.solutions / m for a in course.assignments() for m in a.modules],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_stub_holds_no_solution_line(master):
    stub = (course.get(master.parent.name).stubs / master.name).read_text(encoding="utf-8")
    leaked = stubs.solution_lines(master.read_text(encoding="utf-8")) & {l.strip() for l in stub.splitlines()}
    assert not leaked
    assert "### BEGIN SOLUTION" not in stub


def test_every_solution_region_becomes_not_implemented():
    master = (SOLUTIONS / "ch03_attention" / "causal_attention.py").read_text(encoding="utf-8")
    stub = stubs.make_stub(master)
    regions = master.count(stubs.BEGIN)
    assert regions == 7  # five functions, __init__ and forward
    assert stub.count("raise NotImplementedError(") == regions
    assert 'raise NotImplementedError("CausalAttention.forward: replace this line with your code")' in stub
    tree = ast.parse(stub)  # still valid Python, with every signature and docstring kept
    names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert {"CausalAttention", "forward", "__init__", "causal_attn_weights"} <= names
    assert ast.get_docstring(next(n for n in tree.body if isinstance(n, ast.ClassDef)))


def test_indentation_and_unbalanced_markers():
    source = "def f(x):\n    '''doc'''\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n"
    assert stubs.make_stub(source) == ("def f(x):\n    '''doc'''\n"
                                       '    raise NotImplementedError("f: replace this line with your code")\n')
    with pytest.raises(stubs.StubError, match="never closed"):
        stubs.make_stub("def f():\n    ### BEGIN SOLUTION\n    pass\n")
    with pytest.raises(stubs.StubError, match="without"):
        stubs.make_stub("def f():\n    pass\n    ### END SOLUTION\n")


def test_stale_and_extra_files_are_reported(tmp_path):
    stubs.write_stubs("ch03_attention", tmp_path)
    assert stubs.stale_files("ch03_attention", tmp_path) == []
    (tmp_path / "simple_attention.py").write_text("# edited by hand\n")
    (tmp_path / "extra.py").write_text("")
    assert stubs.stale_files("ch03_attention", tmp_path) == [
        "simple_attention.py: differs from the generated stub", "extra.py: not generated from solutions/"]
