"""The grader as most instructors run it: an ordinary user, sometimes where user namespaces
are refused (Docker's default seccomp profile, Ubuntu 24.04's AppArmor rule).

CI runs as root, so these tests drop to ``nobody`` with setpriv. ``nobody`` cannot reach
the default interpreter here (it lives under /root, mode 700), so they use a virtual
environment made from the system's python3 in a world-readable place, which .ci/run
prepares (AUTOGRADER_USER_VENV, default /opt/autograder-venv). Without it these tests
skip on a developer's machine and fail in CI. The repository is copied to a
world-readable folder first, as an instructor's own checkout would be.
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

from autograder.paths import ROOT
from hostile import CASES, SIMPLE_FUNCTIONS, copy_base, materialize

VENV = Path(os.environ.get("AUTOGRADER_USER_VENV", "/opt/autograder-venv"))
NOBODY = 65534


@pytest.fixture(scope="module")
def user():
    """(run, repo): ``run(*args, no_userns=False)`` runs ``python -m autograder ARGS`` as an
    ordinary user in ``repo``, a world-readable copy of the project."""
    if os.geteuid() == 0:
        python = VENV / "bin" / "python"
        if not python.exists():
            message = f"no virtual environment at {VENV} for an unprivileged user: run .ci/run (it builds it)"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "env", "HOME=/tmp",
                  str(python)]
    else:  # already an ordinary user
        prefix = [sys.executable]
    repo = Path(tempfile.mkdtemp(prefix="autograder-user-"))
    for name in ("autograder", "solutions", "assignments", "tests"):
        shutil.copytree(ROOT / name, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["chmod", "-R", "a+rX", str(repo)], check=True)
    os.chmod(repo, 0o777)   # results are written here by that user

    def run(*args, no_userns=False):
        wrapper = [prefix[-1], "tests/no_userns.py"] if no_userns else []
        command = [*prefix[:-1], *wrapper, prefix[-1], "-m", "autograder", *map(str, args)]
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
        result = json.loads((repo / f"{folder}.json").read_text())
        assert result["score"] == score and result["extra_data"]["fully_isolated"] is True
        held = result["extra_data"]["protections"]["held"]
        if os.geteuid() == 0:   # as nobody: every namespace from a user namespace of its own
            assert {"user namespace", "private root", "/proc", "seccomp", "no capabilities"} <= set(held), held
    assert "not written yet" in done.stdout


def test_without_user_namespaces_grading_works_and_says_what_is_missing(user):
    """Refused the way Docker refuses them: the class is graded exactly, with limits,
    no_new_privs and seccomp, and the report and the exit code say isolation was reduced."""
    run, repo = user
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
    done = run("grade", classdir, "--out", out, "--timeout", "3", "--require-isolation", no_userns=True)
    assert done.returncode == 3, done.stdout + done.stderr      # graded, isolation reduced
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
