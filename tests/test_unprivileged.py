"""The grader as most instructors run it: an ordinary user, sometimes where user namespaces
are refused (Docker's default seccomp profile, Ubuntu 24.04's AppArmor rule).

CI runs as root, so these tests drop to ``nobody`` with setpriv. ``nobody`` cannot reach
the default interpreter here (it lives under /root, mode 700), so they use a virtual
environment made from the system's python3 in a world-readable place, which .ci/run
prepares (AUTOGRADER_USER_VENV, default /opt/autograder-venv). Without it these tests
skip on a developer's machine and fail in CI. The repository is copied to a
world-readable folder first, as a fresh clone would hold it (git's files only: nothing
ignored, built or cached here), as an instructor's own checkout would be.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.grading import course
from autograder.paths import ROOT
from hostile import CASES, SIMPLE_FUNCTIONS, copy_base, materialize
from nobody import unmet

VENV = Path(os.environ.get("AUTOGRADER_USER_VENV", "/opt/autograder-venv"))
NOBODY = 65534


def user_python():
    """(prefix, python): the command that runs Python as an ordinary user (``nobody`` with the
    world-readable virtual environment when we are root, else ourselves)."""
    if os.geteuid() != 0:   # already an ordinary user
        return [], sys.executable
    python = VENV / "bin" / "python"
    if not python.exists():
        unmet(f"no virtual environment at {VENV} for an unprivileged user: run .ci/run (it builds it)")
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "env", "HOME=/tmp"], str(python)


def copy_repo():
    """A world-readable copy of the project as a fresh clone holds it: the files git tracks (and
    new ones it does not ignore, so a change not yet committed is tested too), nothing else."""
    repo = Path(tempfile.mkdtemp(prefix="autograder-user-"))
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():   # a file deleted but not yet committed is not listed as such
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name, follow_symlinks=False)
    subprocess.run(["chmod", "-R", "a+rX", str(repo)], check=True)
    return repo


@pytest.fixture(scope="module")
def user():
    """(run, repo): ``run(*args, no_userns=False)`` runs ``python -m autograder ARGS`` as an
    ordinary user in ``repo``, a world-readable copy of the project."""
    prefix, python = user_python()
    repo = copy_repo()
    os.chmod(repo, 0o1777)   # results are written here by that user (sticky: no one else may swap its folders)

    def run(*args, no_userns=False):
        wrapper = [python, "tests/no_userns.py"] if no_userns else []
        command = [*prefix, *wrapper, python, "-m", "autograder", *map(str, args)]
        return subprocess.run(command, cwd=repo, capture_output=True, text=True, timeout=600)

    yield run, repo
    shutil.rmtree(repo, ignore_errors=True)


def test_an_ordinary_user_grades_the_readme_examples(user):
    run, repo = user
    for folder, score in (("solutions", 100), ("assignments", 0)):
        done = run("grade", folder, "--json", f"{folder}.json", "--require-isolation")
        assert done.returncode == 0, done.stdout + done.stderr
        assert re.search(rf"total +{score}/100\n", done.stdout), done.stdout
        assert "(isolation: namespaces)" in done.stdout and "WARNING" not in done.stdout
        # solutions/ and assignments/ hold every assignment: one result per assignment.
        results = json.loads((repo / f"{folder}.json").read_text())
        assert set(results) == set(course.names()), results.keys()
        for result in results.values():
            assert result["score"] == score and result["extra_data"]["fully_isolated"] is True
            held = result["extra_data"]["protections"]["held"]
            if os.geteuid() == 0:   # as nobody: every namespace from a user namespace of its own
                assert {"user namespace", "private root", "/proc", "seccomp", "no capabilities"} <= set(held), held
    assert "not written yet" in done.stdout


def test_an_ordinary_user_runs_the_readme_test_command_in_a_fresh_checkout(user):
    """The README's test command as that user, in that checkout, on the tests a fresh machine
    failed (issue 17): pytest's folder is that user's, the kernel's Python is the one it runs,
    and the kernel without namespaces (``off``) keeps that user's uid."""
    _, repo = user
    prefix, python = user_python()
    done = subprocess.run([*prefix, python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/test_nbgrader_kernel.py::test_nothing_the_kernel_started_survives_it",
                           "tests/test_interpreter.py"], cwd=repo, capture_output=True, text=True, timeout=600,
                          env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    # the kernel with and without namespaces, and every interpreter test but the one for root alone
    assert re.search(r"\b5 passed, 1 skipped\b", done.stdout), done.stdout[-1000:]


def test_an_ordinary_user_runs_the_first_contact_tests_in_a_fresh_checkout(user):
    """tests/test_first_contact.py as that user: a class with stray files, a gap, nothing and
    another assignment's files graded by that user, the public tests' line, the help. Skipped
    there: the README's command as root, and git's ignore rules (the copy is no checkout)."""
    _, repo = user
    prefix, python = user_python()
    done = subprocess.run([*prefix, python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                           "tests/test_first_contact.py"], cwd=repo, capture_output=True, text=True, timeout=900,
                          env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"\b\d+ passed, 2 skipped\b", done.stdout), done.stdout[-1500:]


def test_without_user_namespaces_only_trusted_code_is_graded_and_says_what_is_missing(user):
    """Refused the way Docker refuses them, the child would run as the grader's own user: a
    class is refused before anything runs (tests/test_isolation_modes.py), the repository's own
    solutions/ are graded, and with --unsafe-same-uid a class is graded exactly, with limits,
    no_new_privs and seccomp, and the report, the WARNING and the exit code say what was missing."""
    run, repo = user
    done = run("grade", "solutions", no_userns=True)
    assert done.returncode == 0 and re.search(r"total +100/100\n", done.stdout), done.stdout + done.stderr
    assert "note: solutions is the repository's own, so it is graded as your own user" in done.stderr
    classdir, out = repo / "class", repo / "graded"
    for name, base in (("a_good", "good"), ("b_blank", "blank"), ("c_simple", "simple")):
        copy_base(base, classdir / name)
    ctx = {"PID": str(os.getpid()), "SOLUTION": repr((ROOT / "solutions" / "ch03_attention" / "simple_attention.py").read_text()),
           "TOKEN": "unprivileged", "FUNCTIONS": repr(SIMPLE_FUNCTIONS)}
    # Without a PID namespace or a user of its own, these are what seccomp alone must stop.
    attacks = [c for c in CASES if c.name in ("07_kill_grader", "46_gated_sysv_shm",
                                              "47_gated_keyring", "08_monkeypatch")]
    for case in attacks:
        materialize(case, classdir / case.name, ctx)
    subprocess.run(["chmod", "-R", "a+rwX", str(classdir)], check=True)
    done = run("grade", classdir, "--out", out, "--timeout", "3", "--require-isolation", "--unsafe-same-uid",
               no_userns=True)
    assert done.returncode == 3, done.stdout + done.stderr      # graded, isolation reduced
    assert "WARNING: --unsafe-same-uid: submissions run as your own user" in done.stderr, done.stderr
    assert "WARNING: submissions ran without full isolation: limits only: user" in done.stdout, done.stdout
    scores = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json") if p.name != "summary.json"}
    assert {k: v["score"] for k, v in scores.items()} == {"a_good": 100, "b_blank": 0, "c_simple": 15,
                                                          **{c.name: c.score for c in attacks}}
    good = scores["a_good"]
    assert good["extra_data"]["fully_isolated"] is False
    assert good["output"].startswith("WARNING: the submission ran WITHOUT full isolation (limits only: ")
    missing = good["extra_data"]["protections"]["unavailable"]
    assert missing["user namespace"] == "unshare: Operation not permitted", missing
    assert {"mount namespace", "PID namespace", "private root", "a user of its own"} <= set(missing)
    assert {"seccomp", "no_new_privs", "limits"} <= set(good["extra_data"]["protections"]["held"])
    isolation = json.loads((out / "summary.json").read_text())["isolation"]  # the class report says it too
    assert isolation["reduced"] == len(scores) and isolation["fully_isolated"] == 0
    assert "reduced isolation" in (out / "report.html").read_text()


def test_a_notebook_kernel_that_would_run_as_the_instructor_does_not_start(user):
    """nbgrader's sandboxed kernel follows the CLI's rule: without namespaces an ordinary user's
    kernel would have the user's own uid, so it is not started (unless trusted by name)."""
    from autograder.sandbox.kernel_sandbox import LAUNCH
    _, repo = user
    prefix, python = user_python()
    private = repo / "nbkernel-private"   # where that user may write
    private.mkdir()
    os.chmod(private, 0o777)
    ran = private / "ran"
    spec = {"private": str(private), "hidden": [str(repo)], "isolation": "off"}

    def launch():
        kernel = [python, "-c", f"open({str(ran)!r}, 'w').close()"]   # stands in for ipykernel
        return subprocess.run([*prefix, python, "-P", "-c", LAUNCH, str(repo), json.dumps(spec), *kernel],
                              cwd=private, capture_output=True, text=True, timeout=60)
    done = launch()
    assert done.returncode == 3 and "refusing to run the notebook's kernel: it would run as your own user" \
        in done.stderr, done.stderr
    assert "sudo " in done.stderr and not ran.exists()
    spec["unsafe_same_uid"] = True
    done = launch()
    assert done.returncode == 0 and ran.exists(), done.stderr
    assert "WARNING: the notebook's kernel runs WITHOUT namespace isolation" in done.stderr
