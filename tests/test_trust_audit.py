"""The audit of DESIGN's rule "credit only what the trusted side can check", kept by a test.

Everything inside the child is the submission's: its hooks, its counters, every answer it gives. A
point is earned only by a child's answer that matches one the grader computed itself. This test
reads the grading code (the hidden suites and ``autograder/grading``) and lists every place that
breaks that rule in one of the ways it has been broken before:

- **truth from the child**: a comparison (``expect_close``, ``expect_tokens``, ``same``, ...) whose
  expected side is a value that came from the child (``plan.values[...]``, a probe's ``reply``, or
  a name bound to one in the same function): the student's own answer made the truth, or two
  answers of the child's compared with each other;
- **a count kept in the child**: reading what the child's hooks recorded (``.records``) or counted
  (``.counts``) anywhere but in a line marked ``# feedback only`` (words for the student, never a
  branch towards points).

``JUSTIFIED`` may name a place with the reason it is sound; it is empty, and a new entry needs a
reason a reviewer can check. ``test_the_audit_catches_a_planted_check`` shows each rule failing on a
check written to break it.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "autograder"
SCANNED = sorted([*(ROOT / "suites").rglob("*.py"), *(ROOT / "grading").glob("*.py")])
# the comparisons of the grading code: (function name, index of the expected argument)
COMPARISONS = {"expect_close": 1, "expect_tokens": 1, "expect_tensor": 1, "same": 1, "same_close": 1, "close": 1,
               "_fits": 1, "_close": 1, "equal": 1, "allclose": 1}
CHILD_CHANNELS = {"records", "counts"}          # what the child's hooks and counters say
CHILD_NAMES = {"reply", "replies", "answers"}   # what the probes' helpers call a child's answer
FEEDBACK_ONLY = "# feedback only"
JUSTIFIED = {  # "path::function": why the place is sound
    "suites/ch03_attention/test_hidden_exercises.py::test_3_1_transfer_weights":
        "v2's weights are accepted only where each equals one of the book's draws, made by the grader "
        "(_known_weights): the expected values are the grader's tensors; only their order is the child's",
    "suites/efficient_attention/test_hidden_kv_cache.py::test_attention_without_cache":
        "the chapter-3 mistake of the attention without the cache is chosen by matching its answer to models "
        "the grader computes (base_mistake); the expected answer is the reference's cache built with it, here",
    "suites/ch04_gpt/test_hidden_transformer_block.py::test_block_structure_and_attention_arguments":
        "the names of the parameters the block's attention holds choose which of the grader's weights are "
        "copied in; every expected answer is attention_answers on those grader tensors, computed in the grader",
}


def _from_child(node, tainted):
    """Whether an expression reads the child's answers, directly or through a tainted name."""
    methods = {id(sub.func) for sub in ast.walk(node) if isinstance(sub, ast.Call)}  # d.values() is a dict's
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in {"values"} | CHILD_CHANNELS and isinstance(sub.ctx, ast.Load) \
                and id(sub) not in methods:
            if not (isinstance(sub.value, ast.Name) and sub.value.id == "self"):
                return True
        if isinstance(sub, ast.Name) and (sub.id in CHILD_NAMES or sub.id in tainted):
            return True
    return False


def _tainted(function):
    """The names a function binds (directly or through others) to values that came from the child."""
    names, grew = set(), True
    while grew:
        grew = False
        for node in ast.walk(function):
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            pairs = [(t, node.value) for t in targets]
            if len(targets) == 1 and isinstance(targets[0], ast.Tuple) and isinstance(node.value, ast.Tuple) \
                    and len(targets[0].elts) == len(node.value.elts):  # a, b = x, y: each from its own
                pairs = list(zip(targets[0].elts, node.value.elts))
            for target, value in pairs:
                if _from_child(value, names):
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name) and sub.id not in names:
                            names.add(sub.id)
                            grew = True
    return names


def findings(source, where):
    """Each place in ``source`` that breaks the rule: ("where::function", line, what)."""
    tree, lines = ast.parse(source), source.splitlines()
    found = []
    for function in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        tainted = _tainted(function)
        for node in ast.walk(function):
            place = (f"{where}::{function.name}", getattr(node, "lineno", 0))
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                index = COMPARISONS.get(name)
                expected = node.args[index] if index is not None and len(node.args) > index else None
                if expected is not None and _from_child(expected, tainted):
                    found.append((*place, f"{name}() takes its expected value from the child"))
            if isinstance(node, ast.Attribute) and node.attr in CHILD_CHANNELS and isinstance(node.ctx, ast.Load) \
                    and not (isinstance(node.value, ast.Name) and node.value.id == "self") \
                    and FEEDBACK_ONLY not in lines[node.lineno - 1]:
                found.append((*place, f"reads .{node.attr}, which only the child keeps"))
    return sorted(set(found))


def test_no_grading_code_credits_what_only_the_child_says():
    found = [f"{where}:{line}: {what}" for path in SCANNED
             for where, line, what in findings(path.read_text(), path.relative_to(ROOT).as_posix())
             if where not in JUSTIFIED]
    assert not found, "\n".join(found)
    assert all(reason.strip() for reason in JUSTIFIED.values())


PLANTED = {
    "the student's own answer made the truth": '''
def test_cache(student):
    plan = student.plan(steps)
    want = plan.values["whole"]
    expect_close(plan.values["pieces"], want, "pieces")
''',
    "two answers of the child's compared": '''
def check(student):
    reply = probe(student)
    mine, theirs = reply["outputs"][0], reply["sub_outputs"][0]
    return same(mine, theirs)
''',
    "a hook's count credited": '''
def test_one_token(student):
    plan = student.plan(steps)
    if all(len(c[0]) == 1 for c in plan.records["gen"]["m"]):
        return
    raise AssertionError("fed more than one token")
''',
}


@pytest.mark.parametrize("name", PLANTED)
def test_the_audit_catches_a_planted_check(name):
    assert findings(PLANTED[name], "planted.py"), name


def test_feedback_and_trusted_comparisons_pass_the_audit():
    honest = '''
def test_cache(student, ref):
    plan = student.plan(steps)
    want = ref.model(x)
    fed = [len(c) for c in plan.records["gen"]["m"]]  # feedback only
    expect_close(plan.values["out"], want, f"fed {fed}")
'''
    assert findings(honest, "honest.py") == []
