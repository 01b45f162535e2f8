"""The public tests students run: green on the reference, a clear NotImplementedError on the stubs."""
import os
import re
import subprocess
import sys

import pytest

from autograder.grading import course
from autograder.paths import ROOT


def run_pytest(folder):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", str(folder)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "400"})  # untruncated summary lines


def counts(output):
    found = dict((kind, int(n)) for n, kind in re.findall(r"(\d+) (passed|failed)", output))
    return found.get("passed", 0), found.get("failed", 0)


def progress(output):
    """(part, how far) of each line of the summary the conftest's public_tests writes last."""
    section = output.rpartition("your progress, part by part")[2]
    return re.findall(r"^  (\w+) +(all|not written yet|\d+ of)\b", section, flags=re.M)


@pytest.fixture(scope="module")
def on_solutions():
    return {}


@pytest.mark.parametrize("assignment", course.names())
def test_public_tests_pass_on_the_solutions(assignment, on_solutions):
    run = run_pytest(course.get(assignment).solutions)
    assert run.returncode == 0, run.stdout[-2000:]
    passed, failed = on_solutions[assignment] = counts(run.stdout)
    assert passed > 0 and failed == 0
    assert progress(run.stdout) == [(part, "all") for part in course.get(assignment).parts], run.stdout[-2000:]


@pytest.mark.parametrize("assignment", course.names())
def test_public_tests_fail_on_the_stubs_with_not_implemented(assignment, on_solutions):
    run = run_pytest(course.get(assignment).stubs)
    total = sum(on_solutions.get(assignment) or counts(run_pytest(course.get(assignment).solutions).stdout))
    assert counts(run.stdout) == (0, total), run.stdout[-2000:]
    failures = re.findall(r"^FAILED .*$", run.stdout, flags=re.M)
    assert len(failures) == total
    assert all("NotImplementedError" in line for line in failures), failures
    # the run ends with one line per part, in the book's (the manifest's) order: none started
    assert progress(run.stdout) == [(part, "not written yet") for part in course.get(assignment).parts], \
        run.stdout[-2000:]


def test_public_tests_agree_with_the_mask_check(tmp_path):
    """Public green means no surprise in the mask check (the decision beside the "sdpa_causal"
    alternative): is_causal=True passes both, a mask forward builds on the CPU fails both."""
    from banks import load
    from test_mutants import mutated_sources

    causal = next(a for a in load("ch03_attention", "alternatives").ALTERNATIVES if "is_causal=True" in a.name)
    cpu_mask = next(m for m in load("ch03_attention", "mutants").MUTANTS
                    if m.name.startswith("MultiHeadAttention ignores its mask buffer"))
    for name, sources, expected in (("causal", {f"{m}.py": s for m, s in causal.sources().items()}, (26, 0)),
                                    ("cpu_mask", mutated_sources("ch03_attention", cpu_mask), (25, 1))):
        folder = tmp_path / name
        folder.mkdir()
        for test in course.get("ch03_attention").solutions.glob("test_*.py"):
            (folder / test.name).write_text(test.read_text())
        for filename, text in sources.items():
            (folder / filename).write_text(text)
        run = run_pytest(folder)
        assert counts(run.stdout) == expected, run.stdout[-2000:]
        assert expected[1] == 0 or "forward must mask with self.mask" in run.stdout
