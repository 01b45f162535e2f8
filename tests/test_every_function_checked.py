"""Every student function is checked: a function or method with a solution region that no
hidden check asks for would let any body through (as ``mask_future_scores`` once did: a
body returning the scores unmasked scored full marks).

Every assignment of the course. The names come from the stub generator (each region's
``raise NotImplementedError("name: ...")``); the probes come from grading the reference with
every plan the suites send recorded (every step's target: ``module.name``, and
a method of an earlier step's object as ``module.Class.method``). A method counts as checked
when its class is built (``__init__``) or run (``forward``).
"""

import pytest

from autograder.grading import course
from autograder.sandbox.session import StudentSession

from banks import reference_sources, student_functions as solution_functions


def plan_targets(steps):
    """What a plan exercises, by the names the stubs use."""
    origin, targets = {}, set()
    for step in steps:
        for action, suffix in (("call", ""), ("iterate", ".__iter__"), ("len", ".__len__"), ("attr", "")):
            if action not in step:
                continue
            head, _, rest = step[action].partition(".")
            if head in origin:  # an earlier step's object: its class, then the method
                name = origin[head] + ("." + rest if rest else ".forward" if action == "call" else "")
            else:
                name = step[action]
            targets.add(name + suffix)
            origin[step["let"]] = name
    return targets


@pytest.mark.parametrize("assignment", course.names())
def test_every_solution_function_is_asked_for_by_a_hidden_check(grader, monkeypatch, tmp_path, assignment):
    asked = set()
    request = StudentSession._request

    def recording(self, steps, *, needs, **kwargs):
        asked.add(needs)
        asked.update(plan_targets(steps))
        return request(self, steps, needs=needs, **kwargs)

    monkeypatch.setattr(StudentSession, "_request", recording)
    for name, text in reference_sources(assignment).items():
        (tmp_path / name).write_text(text)
    result = grader.grade(tmp_path, assignment)
    assert result["score"] == result["max_score"] > 0
    functions = solution_functions(assignment)
    assert functions

    def checked(name):
        if name.endswith(".__init__"):
            name = name.rsplit(".", 1)[0]
        return any(a == name or a.startswith(name + ".") for a in asked)

    unchecked = sorted(f for f in functions if not checked(f))
    assert not unchecked, f"no hidden check asks for: {unchecked}"
