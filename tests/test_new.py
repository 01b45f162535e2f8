"""``python -m autograder new NAME`` writes a sixth assignment that needs no edit outside its own
folders (CONTRIBUTING.md, "Adding an assignment"): in a copy of the project, the reference grades
100 and the stubs 0, and the project's per-assignment tests pass with it in place."""
import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from autograder.authoring import scaffold
from test_unprivileged import copy_repo

NAME = "zz_scaffolded"
OWN = (f"autograder/suites/{NAME}/", f"solutions/{NAME}/", f"source/{NAME}/", f"tests/{NAME}/",
       f"assignments/{NAME}/")
# every test file that reads something per assignment (course.names(), banks, expectations)
PER_ASSIGNMENT = ["tests/test_stated_requirements.py", "tests/test_stubs.py", "tests/test_kit.py",
                  "tests/test_suite_docstrings.py", "tests/test_every_function_checked.py",
                  "tests/test_public_tests.py", "tests/test_mutants.py", "tests/test_alternatives.py"]


def digests(repo):
    return {str(p.relative_to(repo)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in repo.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def repo():
    repo = copy_repo()
    yield repo
    shutil.rmtree(repo, ignore_errors=True)


def run(repo, *args, timeout=600):
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOGRADER_COURSE", "PYTEST_ADDOPTS")}
    return subprocess.run([sys.executable, *args], cwd=repo, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.slow
def test_new_writes_a_gradeable_assignment_in_its_own_folders_only(repo):
    before = digests(repo)
    made = run(repo, "-m", "autograder", "new", NAME, "--title", "A scaffolded assignment")
    assert made.returncode == 0, made.stdout + made.stderr
    after = digests(repo)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    assert changed and all(p.startswith(OWN) for p in changed), [p for p in changed if not p.startswith(OWN)]
    assert {p.split("/")[0] for p in changed} == {"autograder", "solutions", "source", "tests", "assignments"}
    # graded: the reference full marks, the stubs nothing and no mistake named for a blank stub
    for folder, score in (("solutions", 100), ("assignments", 0)):
        out = repo / f"{folder}.json"
        graded = run(repo, "-m", "autograder", "grade", f"{folder}/{NAME}", "--json", out)
        result = json.loads(out.read_text())
        assert (result["score"], result["max_score"]) == (score, 100), graded.stdout + graded.stderr
        assert not [t for t in result["tests"] if t.get("extra_data", {}).get("mistake")], result["tests"]
    lint = subprocess.run(["ruff", "check", *OWN[:4]], cwd=repo, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    again = run(repo, "-m", "autograder", "new", NAME)
    assert again.returncode == 2 and "already there" in again.stderr


@pytest.mark.slow
def test_the_per_assignment_tests_pass_with_it_in_place(repo):
    if not (repo / "tests" / NAME).is_dir():
        pytest.skip("the assignment was not written (the test before says why)")
    tests = run(repo, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", NAME, *PER_ASSIGNMENT, timeout=1500)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert " passed" in tests.stdout and " failed" not in tests.stdout, tests.stdout[-2000:]


@pytest.mark.parametrize("name, title, why", [
    ("Appendix-A", None, "lower-case letters"), ("ch03_attention", None, "already there"),
    ("a1", 'say "hi"', "without double quotes")])
def test_new_refuses_what_it_cannot_write(name, title, why):
    with pytest.raises(scaffold.ScaffoldError, match=why):
        scaffold.new(name, title)


def test_every_template_is_written_and_names_its_assignment():
    files = scaffold.planned("a1", "T")
    assert "source/a1/a1.ipynb" in files and "tests/a1/expectations.py" in files
    assert not [path for path, text in files.items() if "{{" in text or "NAME" in path]
    json.loads(files["source/a1/a1.ipynb"])
