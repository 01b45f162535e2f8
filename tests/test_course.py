"""A course of several assignments: manifests, finding a submission's assignment, class runs with
a column group per assignment, and a throwaway assignment that the engine grades, releases and
bundles for Gradescope with no change to the engine (only its own folders and manifest). Its
module and its part are both called ``exercises``, as chapter 3's are: one process grades both."""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from autograder.grading import course
from autograder.platforms import gradescope, report
from autograder.paths import ROOT
from autograder.grading.result import SubmissionResult
from autograder.grading.runner import Grader

CH03 = "ch03_attention"
TINY = "tiny_sums"
# a data file of the throwaway assignment: CRLF and a non-ASCII byte, to prove it ships byte for byte
NUMBERS = b"1\r\n2\n\xc3\xa9\n"

SUMS = '''\
"""A throwaway assignment: sums, and a score that builds on chapter 3's simple attention."""
import torch
from simple_attention import attn_scores_matmul


def total(x):
    """The sum of every element of ``x`` (a 0-dimensional tensor)."""
    ### BEGIN SOLUTION
    return x.sum()
    ### END SOLUTION


def half_scores(inputs):
    """``attn_scores_matmul(inputs) / 2``, with the attention scores of chapter 3."""
    ### BEGIN SOLUTION
    return attn_scores_matmul(inputs) / 2
    ### END SOLUTION
'''
PUBLIC = '''\
import torch
from exercises import total


def test_total():
    assert total(torch.tensor([1.0, 2.0, 3.0])).item() == 6.0
'''
MANIFEST = '''\
title = "A throwaway assignment"
parts = ["exercises"]
modules = ["exercises.py"]
data = ["numbers.txt"]
[builds_on]
ch03_attention = ["simple_attention.py"]
'''
CONFTEST = '''\
import importlib
import sys
from pathlib import Path

import pytest

from autograder.grading import course

ASSIGNMENT = course.get(Path(__file__).parent.name)


@pytest.fixture(scope="session")
def ref():
    for earlier in (ASSIGNMENT.name, *ASSIGNMENT.builds_on):
        folder = str(course.get(earlier).solutions)
        if folder not in sys.path:
            sys.path.append(folder)
    return importlib.import_module("exercises")
'''
SUITE = '''\
import pytest
import torch


@pytest.mark.points(2)
def test_total(student, ref):
    """total sums every element"""
    x = torch.rand(3, 4, generator=torch.Generator().manual_seed(0))
    plan = student.plan([{"let": "t", "call": "exercises.total", "args": [x], "return": True}])
    assert torch.allclose(plan.values["t"], ref.total(x)), "total(x) is not the sum of x"


@pytest.mark.points(3)
def test_half_scores(student, ref):
    """half_scores halves the scores"""
    x = torch.rand(5, 3, generator=torch.Generator().manual_seed(1))
    plan = student.plan([{"let": "h", "call": "exercises.half_scores", "args": [x], "return": True}])
    assert torch.allclose(plan.values["h"], ref.half_scores(x)), "half_scores(x) is off"
'''


def notebook():
    def cell(kind, source, **nbgrader):
        c = {"cell_type": kind, "metadata": {}, "source": source, "id": f"c{abs(hash(source)) % 10 ** 8}"}
        if kind == "code":
            c.update(execution_count=None, outputs=[])
        if nbgrader:
            c["metadata"]["nbgrader"] = {"schema_version": 3, "solution": False, "task": False, "locked": True,
                                         **nbgrader}
        return c
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                         "language_info": {"name": "python"}},
            "cells": [cell("markdown", "# Sums\nWrite `exercises.py`."),
                      cell("code", "import torch\nfrom exercises import total\ntotal(torch.ones(3))"),
                      cell("code", "# graded\n### BEGIN HIDDEN TESTS\nfrom autograder.nbgrade import part_score\n"
                                   "part_score(\"exercises\")\n### END HIDDEN TESTS",
                           grade=True, grade_id="grade_exercises", points=5)]}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A course of its own: a copy of chapter 3 and the throwaway assignment, nothing else."""
    root = tmp_path_factory.mktemp("course")
    for top in ("solutions", "autograder/suites", "source"):
        shutil.copytree(ROOT / top / CH03, root / top / CH03, ignore=shutil.ignore_patterns("__pycache__"))
    for folder, files in {"solutions": {"exercises.py": SUMS, "test_exercises.py": PUBLIC},
                          "autograder/suites": {"manifest.toml": MANIFEST, "conftest.py": CONFTEST,
                                                "test_hidden_exercises.py": SUITE},
                          "source": {f"{TINY}.ipynb": json.dumps(notebook(), indent=1)}}.items():
        (root / folder / TINY).mkdir(parents=True)
        for name, text in files.items():
            (root / folder / TINY / name).write_text(text)
    (root / "solutions" / TINY / "numbers.txt").write_bytes(NUMBERS)
    return root


def cli(root, *args, env=None):
    env = {**os.environ, "AUTOGRADER_COURSE": str(root), **(env or {})}
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_throwaway_assignment_is_graded_released_and_bundled_without_an_engine_change(tiny, tmp_path):
    # stubs: generated from the master by the same command
    run = cli(tiny, "stubs")
    assert run.returncode == 0, run.stderr
    stub = (tiny / "assignments" / TINY / "exercises.py").read_text()
    assert 'raise NotImplementedError("total: replace this line with your code")' in stub and "x.sum()" not in stub
    assert (tiny / "assignments" / TINY / "numbers.txt").read_bytes() == NUMBERS
    # a class: alice hands in both assignments (her tiny folder takes her own chapter-3 module
    # from the folder beside it), bob only the blank stubs of the tiny one, in a plain folder
    klass = tmp_path / "class"
    shutil.copytree(tiny / "solutions" / CH03, klass / "alice" / CH03)
    (klass / "alice" / TINY).mkdir()
    shutil.copy(tiny / "solutions" / TINY / "exercises.py", klass / "alice" / TINY)
    shutil.copytree(tiny / "assignments" / TINY, klass / "bob")
    run = cli(tiny, "grade", klass, "--out", tmp_path / "graded", "--no-isolation", "--unsafe-same-uid")  # our own code
    assert run.returncode == 0, run.stdout + run.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "graded" / "grades.csv").read_text())))
    assert list(rows[0]) == ["student", *[f"{a}:{c}" for a, parts in ((CH03, course.get(CH03).parts), (TINY, ["exercises"]))
                                          for c in ("score", "max_score", *parts, "status")]]
    alice, bob = rows
    assert (alice[f"{CH03}:score"], alice[f"{TINY}:score"], alice[f"{TINY}:exercises"]) == ("100", "5", "5")
    assert (bob[f"{CH03}:status"], bob[f"{TINY}:score"], bob[f"{TINY}:max_score"]) == ("not submitted", "0", "5")
    result = json.loads((tmp_path / "graded" / TINY / "alice.json").read_text())
    assert result["extra_data"]["assignment"] == TINY
    assert f"simple_attention.py: your own from {CH03}/ (this folder has none)" in result["output"]
    assert (tmp_path / "graded" / CH03 / "alice.json").is_file()
    # one student: the folder of the tiny assignment alone, found by its name
    run = cli(tiny, "grade", klass / "alice" / TINY, "--json", tmp_path / "one.json", "--no-isolation", "--unsafe-same-uid")  # our own code
    assert run.returncode == 0 and json.loads((tmp_path / "one.json").read_text())["score"] == 5, run.stderr
    # release with nbgrader: stubs, public tests and the stripped notebook, nothing hidden
    run = cli(tiny, "release", TINY, "--out", tmp_path / "release")
    assert run.returncode == 0, run.stdout + run.stderr
    assert {p.name for p in (tmp_path / "release").iterdir()} >= {"exercises.py", "test_exercises.py", f"{TINY}.ipynb"}
    assert "part_score" not in (tmp_path / "release" / f"{TINY}.ipynb").read_text()
    assert (tmp_path / "release" / "numbers.txt").read_bytes() == NUMBERS
    # Gradescope: the bundle holds the assignment and the one it builds on, and grades a submission
    run = cli(tiny, "gradescope", TINY, "--out", tmp_path / "autograder.zip")
    assert run.returncode == 0, run.stderr
    names = zipfile.ZipFile(tmp_path / "autograder.zip").namelist()
    assert f"autograder/suites/{TINY}/test_hidden_exercises.py" in names and f"solutions/{TINY}/exercises.py" in names
    assert f"solutions/{CH03}/simple_attention.py" in names and f"solutions/{TINY}/test_exercises.py" not in names
    assert zipfile.ZipFile(tmp_path / "autograder.zip").read(f"solutions/{TINY}/numbers.txt") == NUMBERS
    bundle = gradescope.unpack(tmp_path / "autograder.zip", tmp_path / "autograder")
    for name in ("exercises.py", "simple_attention.py"):
        shutil.copy(tiny / "solutions" / (TINY if name == "exercises.py" else CH03) / name, bundle / "submission")
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_COURSE"}
    env.update(AUTOGRADER_ROOT=str(bundle), AUTOGRADER_ISOLATION="off", AUTOGRADER_UNSAFE_SAME_UID="1",
               PYTHON=sys.executable)  # our own code
    run = subprocess.run([str(bundle / "source" / "run_autograder")], env=env, capture_output=True, text=True,
                         timeout=600)
    results = json.loads((bundle / "results" / "results.json").read_text())
    assert results["score"] == 5, run.stdout + run.stderr


def test_two_assignments_with_the_same_module_and_part_names_take_turns_in_one_grader(tiny, monkeypatch):
    """Both hold exercises.py and test_hidden_exercises.py: each is graded with its own."""
    monkeypatch.setattr(course, "ROOT", tiny)
    with Grader(isolation="off", unsafe_same_uid=True) as grader:  # our own code
        first = grader.grade(tiny / "solutions" / CH03)
        other = grader.grade(tiny / "solutions" / TINY)   # simple_attention.py from ch03_attention/ beside it
        again = grader.grade(tiny / "solutions" / CH03)
    assert (first["score"], first["max_score"], other["score"], other["max_score"]) == (100, 100, 5, 5)
    assert other["extra_data"]["parts"] == {"exercises": [5, 5]}
    assert [t["name"] for t in again["tests"]] == [t["name"] for t in first["tests"]]
    assert again["extra_data"]["parts"] == first["extra_data"]["parts"]


def write_manifest(root, name, text, modules=("m.py",), suites=("p",)):
    (root / "solutions" / name).mkdir(parents=True)
    (root / "autograder" / "suites" / name).mkdir(parents=True)
    for module in modules:
        (root / "solutions" / name / module).write_text("")
    for part in suites:
        (root / "autograder" / "suites" / name / f"test_hidden_{part}.py").write_text("")
    (root / "autograder" / "suites" / name / "manifest.toml").write_text(text)


GOOD = 'title = "T"\nparts = ["p"]\nmodules = ["m.py"]\n'


@pytest.mark.parametrize("text, kwargs, why", [
    (GOOD.replace('["p"]', '["p", "q"]'), {}, "part q has no suite test_hidden_q.py"),
    (GOOD.replace('["m.py"]', '["m.py", "n.py"]'), {}, "module n.py has no master"),
    (GOOD, {"suites": ("p", "old")}, "test_hidden_old.py grade"),
    (GOOD + "points = 3\n", {}, "unknown key"),
    (GOOD + 'data = ["text.txt"]\n', {}, "data file text.txt is not in"),
    (GOOD + 'data = ["../m.py"]\n', {}, "must be a plain file name"),
    (GOOD.replace('title = "T"\n', ""), {}, "`title` must be"),
    (GOOD.replace('["p"]', "[]"), {}, "`parts` must be a non-empty list"),
    (GOOD + "[builds_on]\nelsewhere = [\"x.py\"]\n", {}, "builds on elsewhere, which is no assignment"),
    ("title = \n", {}, "not valid TOML"),
    (GOOD + '[functions]\nq = ["m.f"]\n', {}, "functions.q: no part q"),
    (GOOD + '[functions]\np = ["n.f"]\n', {}, "'n.f' is not module.name of a module"),
    (GOOD + '[functions]\np = ["m"]\n', {}, "'m' is not module.name"),
])
def test_a_manifest_that_does_not_match_its_files_is_refused_clearly(tmp_path, text, kwargs, why):
    write_manifest(tmp_path, "a1", text, **kwargs)
    with pytest.raises(course.CourseError, match=why):
        course.assignments(tmp_path)


def test_a_part_may_be_some_of_a_modules_functions(tmp_path):
    """The manifest's [functions] maps parts to functions of one module: each part's stubs left are
    its own functions' (the progress table and the grader read the same), a part not listed is its
    module; the stubs' conftest is given the table."""
    from autograder.authoring import stubs
    from autograder.support.public_tests import part_stubs

    write_manifest(tmp_path, "a1", 'title = "T"\nparts = ["p", "q", "m"]\nmodules = ["m.py"]\n'
                   '[functions]\np = ["m.f", "m.Net"]\nq = ["m.g"]\n', suites=("p", "q", "m"))
    a = course.get("a1", tmp_path)
    assert a.parts_table == {"p": ("m.f", "m.Net"), "q": ("m.g",), "m": ()}
    source = stubs.make_stub("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n\n\n"
                             "def g():\n    ### BEGIN SOLUTION\n    return 2\n    ### END SOLUTION\n\n\n"
                             "class Net:\n    def __init__(self):\n        ### BEGIN SOLUTION\n        pass\n"
                             "        ### END SOLUTION\n\n    def forward(self):\n        ### BEGIN SOLUTION\n"
                             "        pass\n        ### END SOLUTION\n")
    read = {"m": source}.get
    assert part_stubs("p", a.functions_of("p"), read) == ["f", "Net.__init__", "Net.forward"]
    assert part_stubs("q", a.functions_of("q"), read) == ["g"]
    assert part_stubs("m", a.functions_of("m"), read) == ["f", "g", "Net.__init__", "Net.forward"]
    assert part_stubs("q", a.functions_of("q"), {}.get) == []


def test_assignments_are_found_by_folder_name_then_by_their_modules(tmp_path):
    write_manifest(tmp_path, "a1", GOOD.replace("m.py", "one.py").replace("]\n", "]\n", 1), modules=("one.py",))
    write_manifest(tmp_path, "a2", GOOD.replace('["m.py"]', '["two.py", "three.py"]') +
                   '[builds_on]\na1 = ["one.py"]\n', modules=("two.py", "three.py"))
    assert [a.name for a in course.assignments(tmp_path)] == ["a1", "a2"]
    with pytest.raises(course.CourseError, match=r"no assignment called 'a3' .*its assignments: a1, a2"):
        course.get("a3", tmp_path)
    folder = tmp_path / "work" / "a1"   # named after an assignment: that one, whatever it holds
    folder.mkdir(parents=True)
    assert course.detect(folder, tmp_path).name == "a1"
    mixed = tmp_path / "work" / "mine"   # a2's modules and the one it builds on: a2
    mixed.mkdir()
    for name in ("one.py", "two.py", "three.py"):
        (mixed / name).write_text("")
    assert course.detect(mixed, tmp_path).name == "a2"
    (mixed / "two.py").unlink()   # as many of each, but all of a1's: a1
    assert course.detect(mixed, tmp_path).name == "a1"
    (mixed / "one.py").unlink()
    (mixed / "m.py").write_text("")
    write_manifest(tmp_path, "a3", GOOD.replace('["m.py"]', '["m.py", "four.py"]'), modules=("m.py", "four.py"))
    course._cache.clear()
    with pytest.raises(course.CourseError, match="as many modules of a2 and a3"):  # one of each, neither whole
        course.detect(mixed, tmp_path)


def test_one_assignment_keeps_todays_csv_and_several_get_a_column_group_each():
    parts = course.get(CH03).parts
    result = SubmissionResult.from_json({"score": 7, "max_score": 100, "execution_time": 1.0, "output": "", "tests": [],
                                         "extra_data": {"assignment": CH03, "parts": {p: [1, 20] for p in parts}}})
    one = report.class_csv([("alice", result, "graded"), ("bob", None, "not graded: empty")])
    assert one.splitlines() == [",".join(["student", "score", "max_score", *parts, "status"]),
                                "alice,7,100,1,1,1,1,1,graded", "bob,,,,,,,,not graded: empty"]  # empty, not 0
    assert report.class_csv([("alice", result, "graded", CH03)], [CH03]) == one.splitlines(True)[0] + \
        one.splitlines(True)[1]


def test_a_submission_of_no_known_assignment_says_why_in_every_column_group(tiny, monkeypatch):
    monkeypatch.setattr(course, "ROOT", tiny)
    result = SubmissionResult.from_json({"score": 5, "max_score": 5, "execution_time": 1.0, "output": "", "tests": [],
                                         "extra_data": {"assignment": TINY, "parts": {"exercises": [5, 5]}}})
    text = report.class_csv([("alice", result, "graded", TINY), ("carol", None, "not graded: which?", None)],
                            [CH03, TINY])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0][f"{CH03}:status"] == "not submitted" and rows[0][f"{TINY}:exercises"] == "5"
    assert rows[1][f"{CH03}:status"] == rows[1][f"{TINY}:status"] == "not graded: which?"
