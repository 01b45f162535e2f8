"""Every student function is checked: a function or method with a solution region that no
hidden check asks for would let any body through (as ``mask_future_scores`` once did: a
body returning the scores unmasked scored full marks).

The names come from the stub generator (each region's ``raise NotImplementedError("name: ...")``);
the probes come from grading the reference with every request the suites send recorded.
A method counts as checked when its class is built (``__init__``) or run (``forward``).
"""
import re

from autograder import stubs
from autograder.paths import SOLUTIONS
from autograder.session import StudentSession

MODULES = sorted(p for p in (SOLUTIONS / "ch03_attention").glob("*.py") if not p.name.startswith("test_"))


def solution_functions():
    """{"module.name" or "module.Class.method"} for every solution region."""
    names = set()
    for path in MODULES:
        for name in re.findall(r'raise NotImplementedError\("([\w.]+):', stubs.make_stub(path.read_text())):
            names.add(f"{path.stem}.{name}")
    return names


def test_every_solution_function_is_asked_for_by_a_hidden_check(grader, monkeypatch):
    asked = set()
    request = StudentSession.request

    def recording(self, op, *, needs, **payload):
        asked.add(needs)
        return request(self, op, needs=needs, **payload)

    monkeypatch.setattr(StudentSession, "request", recording)
    assert grader.grade(SOLUTIONS / "ch03_attention")["score"] == 100
    functions = solution_functions()
    assert len(functions) >= 25 and "causal_attention.mask_future_scores" in functions

    def checked(name):
        if name.endswith(".__init__"):
            name = name.rsplit(".", 1)[0]
        return any(a == name or a.startswith(name + ".") for a in asked)

    unchecked = sorted(f for f in functions if not checked(f))
    assert not unchecked, f"no hidden check asks for: {unchecked}"
