"""The public tests students run: green on the reference, a clear NotImplementedError on the stubs."""
import os
import re
import subprocess
import sys

import pytest

from autograder import course
from autograder.paths import ROOT


def run_pytest(folder):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", str(folder)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "400"})  # untruncated summary lines


def counts(output):
    found = dict((kind, int(n)) for n, kind in re.findall(r"(\d+) (passed|failed)", output))
    return found.get("passed", 0), found.get("failed", 0)


@pytest.fixture(scope="module")
def on_solutions():
    return {}


@pytest.mark.parametrize("assignment", course.names())
def test_public_tests_pass_on_the_solutions(assignment, on_solutions):
    run = run_pytest(course.get(assignment).solutions)
    assert run.returncode == 0, run.stdout[-2000:]
    passed, failed = on_solutions[assignment] = counts(run.stdout)
    assert passed > 0 and failed == 0


@pytest.mark.parametrize("assignment", course.names())
def test_public_tests_fail_on_the_stubs_with_not_implemented(assignment, on_solutions):
    run = run_pytest(course.get(assignment).stubs)
    total = sum(on_solutions.get(assignment) or counts(run_pytest(course.get(assignment).solutions).stdout))
    assert counts(run.stdout) == (0, total), run.stdout[-2000:]
    failures = re.findall(r"^FAILED .*$", run.stdout, flags=re.M)
    assert len(failures) == total
    assert all("NotImplementedError" in line for line in failures), failures
