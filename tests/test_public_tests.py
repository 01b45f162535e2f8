"""The public tests students run: green on the reference, a clear NotImplementedError on the stubs."""
import os
import re
import subprocess
import sys

from autograder.paths import ASSIGNMENTS, ROOT, SOLUTIONS


def run_pytest(folder):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", str(folder)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "400"})  # untruncated summary lines


def counts(output):
    found = dict((kind, int(n)) for n, kind in re.findall(r"(\d+) (passed|failed)", output))
    return found.get("passed", 0), found.get("failed", 0)


def test_public_tests_pass_on_the_solutions():
    run = run_pytest(SOLUTIONS / "ch03_attention")
    assert run.returncode == 0, run.stdout[-2000:]
    assert counts(run.stdout) == (26, 0)


def test_public_tests_fail_on_the_stubs_with_not_implemented():
    run = run_pytest(ASSIGNMENTS / "ch03_attention")
    assert counts(run.stdout) == (0, 26), run.stdout[-2000:]
    failures = re.findall(r"^FAILED .*$", run.stdout, flags=re.M)
    assert len(failures) == 26
    assert all("NotImplementedError" in line for line in failures), failures
