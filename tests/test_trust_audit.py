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
  branch towards points);
- **evidence made through a student module**: a plan step that reaches a library through a
  student's module (``checkpoints.torch.load``: a name the module imports, not one the reference
  defines) is the submission's, whatever it is called, so it may only make an input of the student's
  own functions: its value passed (``{"$ref": ...}``) to a call of a function the student wrote and
  nowhere else. Sent back (``return``), driven by the grader's own steps (``ck.__getitem__``,
  ``opt.step``), handed to a call of the grader's, or run for what it does (a ``torch.save`` whose
  value nobody takes): it would make the grader's evidence where the submission runs. The grader
  reads and writes such evidence in a ``clean`` child, or here (DESIGN, "The grader's own evidence
  is made where the submission never ran"). Steps whose ``call`` or ``let`` is built at run time
  (an f-string) are not read.

``JUSTIFIED`` may name a place with the reason it is sound; a new entry needs a
reason a reviewer can check. ``test_the_audit_catches_a_planted_check`` shows each rule failing on a
check written to break it.
"""
import ast
from pathlib import Path

import pytest

from autograder.grading import course

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
    "suites/ch05_pretraining/test_hidden_training.py::test_train_model_simple_returns_the_losses_and_tokens_seen":
        "the weights the child trained choose which of two trainings run here is expected (style: the book's "
        "through calc_loss_batch's stand-in, or each step's cross-entropy written out); both lists are the grader's",
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


def _defined(path):
    """The top-level names a module of the reference defines (functions, classes, assignments)."""
    if not path.is_file():
        return set()
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        for target in node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]:
            names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name)) if target is not None else None
    return names


# every module a student writes (any assignment's, the earlier ones it builds on included): {name: defined}
STUDENT_MODULES = {f.module: _defined(course.get(f.assignment).solutions / f.file)
                   for a in course.assignments() for f in a.hand_in}
STEP_TARGETS = ("call", "attr", "iterate", "len", "parameters", "grads", "describe", "unregistered", "backward")


def _constant(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _steps(tree):
    """Each plan step written as a dict literal: (node, {key: value node})."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = {_constant(k): v for k, v in zip(node.keys, node.values) if k is not None}
            if "let" in keys and any(k in keys for k in STEP_TARGETS + ("data",)):
                yield node, keys


def _student_function(call):
    module, _, rest = (call or "").partition(".")
    return module in STUDENT_MODULES and rest.split(".")[0] in STUDENT_MODULES[module]


def _through_namespace(call):
    module, _, rest = (call or "").partition(".")
    return module in STUDENT_MODULES and "." in rest and rest.split(".")[0] not in STUDENT_MODULES[module]


def _namespace_findings(tree, where):
    """Steps through a student module's namespace whose value is anything but a student function's input."""
    steps = list(_steps(tree))
    found = []
    for node, keys in steps:
        call, let = _constant(keys.get("call")), _constant(keys.get("let"))
        if not _through_namespace(call) or let is None:
            continue
        place = (f"{where}::{call}", node.lineno)
        module = call.split(".")[0]
        if isinstance(keys.get("return"), ast.Constant) and keys["return"].value:
            found.append((*place, f"sends back what {call} made through {module}.py's namespace"))
        inputs = 0
        for other, other_keys in steps:
            targets = [_constant(other_keys.get(k)) for k in STEP_TARGETS]
            if any(t is not None and (t == let or t.startswith(let + ".")) for t in targets):
                found.append((*place, f"{let} ({call}, through {module}.py's namespace) is driven by the grader's "
                                      f"step at line {other.lineno}"))
            refs = [n for k in ("args", "kwargs") if k in other_keys for n in ast.walk(other_keys[k])
                    if isinstance(n, ast.Dict) and [_constant(k) for k in n.keys] == ["$ref"]
                    and _constant(n.values[0]) == let]
            if refs and not _student_function(_constant(other_keys.get("call"))):
                found.append((*place, f"{let} ({call}, through {module}.py's namespace) is handed to the grader's "
                                      f"step at line {other.lineno}"))
            inputs += len(refs)
        if not inputs:
            found.append((*place, f"{call} runs through {module}.py's namespace for what it does: no function of "
                                  "the student's takes its value"))
    return found


def findings(source, where):
    """Each place in ``source`` that breaks the rule: ("where::function", line, what)."""
    tree, lines = ast.parse(source), source.splitlines()
    found = _namespace_findings(tree, where)
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
    "a saved file read by torch.load through the student's module": '''
def test_save(student):
    plan = student.plan([{"let": "save", "call": "checkpoints.save_model_and_optimizer", "args": [{"$ref": "m"}, path]},
                         {"let": "ck", "call": "checkpoints.torch.load", "args": [path]},
                         {"let": "msd", "call": "ck.__getitem__", "args": ["model_state_dict"], "return": True}])
    expect_close(plan.values["msd"]["w"], want, "the file")
''',
    "the file to load written by torch.save through the student's module": '''
def test_load(student):
    plan = student.plan([{"let": "save", "call": "checkpoints.torch.save", "args": [{"model_state_dict": want}, path]},
                         {"let": "load", "call": "checkpoints.load_model_and_optimizer", "args": [{"$ref": "m"}, path]}])
''',
    "an optimizer built through the student's module and stepped by the grader": '''
def test_resume(student):
    plan = student.plan([{"let": "opt", "call": "training.torch.optim.AdamW", "args": [{"$ref": "p"}]},
                         {"let": "step", "call": "opt.step"},
                         {"let": "after", "parameters": "m", "return": True}])
''',
    "a value made through the student's module sent back": '''
def test_tokens(student):
    plan = student.plan([{"let": "tk", "call": "text_tokens.tiktoken.get_encoding", "args": ["gpt2"], "return": True}])
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


def test_train(student):  # the tokenizer, made through the student's module, is an input of their own function
    plan = student.plan([{"let": "tk", "call": "text_tokens.tiktoken.get_encoding", "args": ["gpt2"]},
                         {"let": "out", "call": "training.train_model_simple", "args": [{"$ref": "m"}, {"$ref": "tk"}],
                          "return": True}])
'''
    assert findings(honest, "honest.py") == []
