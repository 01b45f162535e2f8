"""A hidden suite's docstring says its points ("(N points)"); they must be the checks' @points total,
the one place points live (a check added or re-weighted without the docstring fails here)."""
import ast
import re
from pathlib import Path

import pytest

SUITES = sorted((Path(__file__).resolve().parents[1] / "autograder" / "suites").rglob("test_hidden_*.py"))


def points_in(tree):
    """The sum of ``@points(n)`` over the module's checks (``points = pytest.mark.points``)."""
    total = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for mark in node.decorator_list:
                if isinstance(mark, ast.Call) and getattr(mark.func, "id", getattr(mark.func, "attr", None)) == "points":
                    total += mark.args[0].value
    return total


def said(tree):
    found = re.search(r"\((\d+) points?\)", ast.get_docstring(tree) or "")
    return int(found.group(1)) if found else None


@pytest.mark.parametrize("suite", SUITES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_suite_docstring_states_its_points_total(suite):
    tree = ast.parse(suite.read_text(encoding="utf-8"))
    assert said(tree) == points_in(tree), f"{suite.name}: its docstring says {said(tree)} points, its checks add to {points_in(tree)}"


def test_the_rule_catches_a_docstring_out_of_date():
    tree = ast.parse('"""Hidden checks (5 points)."""\n@points(2)\ndef test_a(): pass\n@points(2)\ndef test_b(): pass\n')
    assert (said(tree), points_in(tree)) == (5, 4)
    assert SUITES, "no suite found"
