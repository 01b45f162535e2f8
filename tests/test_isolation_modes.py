"""In every isolation mode that grades, a submission can write nothing the grader trusts; where
its child would run as the grader's own user, nothing is graded at all.

Each mode grades, with the CLI in a subprocess, a copy of the project (as an instructor's own
checkout: readable by everyone, owned by whoever grades) and a class in it where ``m_mallory``
opens simple_attention.py with code that appends to the reference, a hidden suite, the
grader's code, a classmate's submission, another student's result and grades.csv, plants a
module in each of their folders and in the Python packages, and leaves behind a detached
process that keeps doing so for a minute. Then: every file of the checkout and the class is
what it was, byte for byte (mode and owner too); the results are one JSON and one Markdown
per student, grades.csv and the class report (report.html, summary.json), nothing else; the
honest neighbours keep their exact scores.
What mallory could read and write, and whether its process outlived the run, come back in
its own feedback (the import error carries them) and are printed by ``test_summary``.

    root, full isolation            the grader is root: namespaces, private root, uid nobody
    ordinary user, user namespaces  the grader is nobody (tests/test_unprivileged.py's user),
                                    owning its checkout: only the namespaces stand in between
    root, namespaces refused        root under ``tests/no_userns.py --all`` (Docker's default
                                    profile, Gradescope), with a Python that nobody can read:
                                    the child is a uid of its own and sees the real file system

And the issue's reproduction: an ordinary user where user namespaces are refused gets exit 3
before any submission runs, and nothing changes; ``--unsafe-same-uid`` shows why.
"""
import csv
import hashlib
import json
import os
import secrets
import signal
import stat
import subprocess
import sys
import time

import pytest

from banks import reference_sources
from hostile import TMP_TRUNCATOR, copy_base
from test_hostile import _processes_named
from test_unprivileged import NOBODY, copy_repo, user_python

NEIGHBOURS = {"a_good": ("good", 100), "b_blank": ("blank", 0), "c_simple": ("simple", 15), "z_good": ("good", 100)}
MALLORY = "m_mallory"   # graded after a_good's result is written and before z_good's
MEASURED = {}

ATTACK = r'''
import ctypes, importlib.util, json, os, signal, time
REPO, OUT, CLASS, TOKEN = @REPO@, @OUT@, @CLASS@, @TOKEN@
FILES = {"reference": REPO + "/solutions/ch03_attention/causal_attention.py",
         "suite": REPO + "/autograder/suites/ch03_attention/test_hidden_simple_attention.py",
         "grader": REPO + "/autograder/grading/runner.py",
         "classmate": CLASS + "/a_good/simple_attention.py",
         "result": OUT + "/a_good.json", "later result": OUT + "/z_good.json", "grades.csv": OUT + "/grades.csv"}
FOLDERS = {"repository/": REPO, "grader/": REPO + "/autograder", "bytecode/": REPO + "/autograder/__pycache__",
           "suites/": REPO + "/autograder/suites/ch03_attention", "reference/": REPO + "/solutions/ch03_attention",
           "results/": OUT, "class/": CLASS,
           "python packages/": os.path.dirname(os.path.dirname(importlib.util.find_spec("torch").origin))}


def readable(path):
    try:
        with open(path, "rb") as handle:
            return bool(handle.read(1))
    except OSError:
        return False


def attempt():
    wrote = []
    for name, path in FILES.items():
        try:
            with open(path, "a") as handle:
                handle.write("\nraise RuntimeError('sabotaged by m_mallory')\n")
            wrote.append(name)
        except OSError:
            pass
    for name, folder in FOLDERS.items():
        try:
            with open(os.path.join(folder, "planted_" + TOKEN + ".py"), "x") as handle:
                handle.write("raise RuntimeError('planted by m_mallory')\n")
            wrote.append(name)
        except OSError:
            pass
    return wrote


def fork():
    for _ in range(50):   # the process limit counts every process of this uid, the machine over
        try:
            return os.fork()
        except BlockingIOError:
            time.sleep(0.1)
    return None


report = {"uid": os.getuid(), "read": [name for name, path in FILES.items() if readable(path)], "wrote": attempt()}
pid = fork()
if pid == 0:   # left behind: detached, deaf to hang-ups, trying for a minute; never back in the import
    try:
        os.setsid()
        if fork() == 0:
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            ctypes.CDLL(None).prctl(15, TOKEN.encode(), 0, 0, 0)
            end = time.time() + 60
            while time.time() < end:
                attempt()
                time.sleep(0.1)
    finally:
        os._exit(0)
if pid:
    os.waitpid(pid, 0)
report["detached"] = pid is not None
raise RuntimeError("PROBE " + json.dumps(report))
'''


def snapshot(top, skip=("graded",)):
    """{relative path: (mode, owner, sha256 or link target)} of everything under ``top``."""
    seen = {}
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if os.path.relpath(os.path.join(folder, d), top) not in skip]
        for path in [folder, *(os.path.join(folder, name) for name in dirs + files)]:
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    content = hashlib.sha256(handle.read()).hexdigest()
            else:
                content = os.readlink(path) if stat.S_ISLNK(info.st_mode) else ""
            seen[os.path.relpath(path, top)] = (stat.filemode(info.st_mode), info.st_uid, content)
    return seen


def changes(before, after):
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def checkout_with_a_class(owner, token):
    """A copy of the project with the class in ``submitted/``, owned by ``owner``."""
    repo = copy_repo()
    classdir = repo / "submitted"
    for name, (base, _) in NEIGHBOURS.items():
        copy_base(base, classdir / name)
    copy_base("good", classdir / MALLORY)
    attack = ATTACK
    for key, value in {"REPO": repo, "OUT": repo / "graded", "CLASS": classdir, "TOKEN": token}.items():
        attack = attack.replace(f"@{key}@", repr(str(value)))
    module = classdir / MALLORY / "simple_attention.py"
    module.write_text(attack + "\n" + module.read_text())
    subprocess.run(["chmod", "-R", "a+rX", str(repo)], check=True)
    if owner is not None and os.geteuid() == 0:
        subprocess.run(["chown", "-R", f"{owner}:{owner}", str(repo)], check=True)
    return repo


def mode_command(mode):
    """(prefix, python, wrapper) that run the CLI in ``mode``."""
    if mode == "ordinary user, user namespaces":
        prefix, python = user_python()
        return prefix, python, []
    if os.geteuid() != 0:
        pytest.skip("the grader runs as root in this mode")
    if mode == "root, full isolation":
        return [], sys.executable, []
    _, python = user_python()   # the world-readable environment: as root, and nobody can read it
    return [], python, [python, "tests/no_userns.py", "--all"]


def cli(repo, prefix, python, wrapper, *args):
    return subprocess.run([*prefix, *wrapper, python, "-m", "autograder", *args], cwd=repo, capture_output=True,
                          text=True, timeout=600)


def probe(result):
    """What m_mallory's code reported from inside its child (its import error)."""
    for test in result["tests"]:
        if "PROBE {" in test["output"]:
            return json.JSONDecoder().raw_decode(test["output"], test["output"].index("PROBE {") + 6)[0]
    raise AssertionError(f"m_mallory's probe did not report: {result['tests'][0]['output']}")


def left_behind(token):
    """Whether m_mallory's detached process outlived the run; it is killed here either way."""
    found = _processes_named(token)
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return bool(found)


@pytest.mark.parametrize("mode", ["root, full isolation", "ordinary user, user namespaces",
                                  "root, namespaces refused"])
def test_a_submission_writes_nothing_the_grader_trusts(mode):
    prefix, python, wrapper = mode_command(mode)
    token = "m" + secrets.token_hex(5)
    repo = checkout_with_a_class(NOBODY if prefix else None, token)
    try:
        warm = cli(repo, prefix, python, wrapper, "grade", "solutions")   # the grader's own bytecode, written first
        assert warm.returncode == 0 and "total                100/100" in warm.stdout, warm.stdout + warm.stderr
        before = snapshot(repo)
        done = cli(repo, prefix, python, wrapper, "grade", "submitted", "--out", "graded", "--timeout", "3", "--jobs", "1")
        time.sleep(1.5)   # the detached process keeps trying after the run
        after = snapshot(repo)
        outlived = left_behind(token)
        assert done.returncode == 0, done.stdout + done.stderr
        assert not changes(before, after), changes(before, after)
        out = repo / "graded"
        students = [*NEIGHBOURS, MALLORY]
        written = sorted(p.name for p in out.iterdir() if p.suffix != ".svg")   # pictures: where a check drew one
        assert written == sorted([f"{s}.{ext}" for s in students for ext in ("json", "md", "html")]
                                 + ["grades.csv", "report.html", "summary.json"])
        assert all(p.name.startswith(tuple(f"{s}." for s in students)) for p in out.glob("*.svg"))
        results = {s: json.loads((out / f"{s}.json").read_text()) for s in students}
        with open(out / "grades.csv", newline="") as handle:
            grades = {row["student"]: int(row["score"]) for row in csv.DictReader(handle)}
        assert grades == {s: results[s]["score"] for s in students}
        assert {s: results[s]["score"] for s in NEIGHBOURS} == {s: score for s, (_, score) in NEIGHBOURS.items()}
        extra = results["a_good"]["extra_data"]
        if mode == "root, namespaces refused":
            assert extra["isolation"].startswith("limits only") and "a uid of its own" in extra["protections"]["held"]
        else:
            assert extra["isolation"] == "namespaces"
        found = probe(results[MALLORY])
        assert found["wrote"] == [], found
        assert found["detached"], "m_mallory could not start its process"
        MEASURED[mode] = {"isolation": extra["isolation"], "child uid": found["uid"], "read": found["read"],
                          "wrote": found["wrote"], "process left behind": outlived}
        assert not outlived, "m_mallory's detached process outlived its child"
    finally:
        left_behind(token)
        subprocess.run(["rm", "-rf", str(repo)])


def test_where_the_child_would_run_as_the_grader_nothing_is_graded_and_nothing_changes():
    """The issue's reproduction: an ordinary user, user namespaces refused (Ubuntu 24.04's
    AppArmor rule, Docker's seccomp profile). Exit 3 before the first submission, with what to do."""
    prefix, python = user_python()
    token = "m" + secrets.token_hex(5)
    repo = checkout_with_a_class(NOBODY if prefix else None, token)
    refused = [python, "tests/no_userns.py"]
    try:
        # The README's quick start still works there (the repository's own code), and writes the bytecode.
        warm = cli(repo, prefix, python, refused, "grade", "solutions")
        assert warm.returncode == 0 and "total                100/100" in warm.stdout, warm.stdout + warm.stderr
        before = snapshot(repo)
        started = time.perf_counter()
        done = cli(repo, prefix, python, refused, "grade", "submitted", "--out", "graded")
        seconds = time.perf_counter() - started
        time.sleep(0.5)
        assert done.returncode == 3, done.stdout + done.stderr
        assert "error: refusing to run the submissions: it would run as your own user" in done.stderr
        assert f"sudo {python} -m autograder grade submitted --out graded" in done.stderr
        assert "--unsafe-same-uid" in done.stderr and "Nothing was graded." in done.stderr
        assert not changes(before, snapshot(repo, skip=())), "something ran"
        assert not (repo / "graded").exists() and not left_behind(token)
        MEASURED["ordinary user, namespaces refused"] = {"isolation": f"refused: exit 3 after {seconds:.2f} s",
                                                         "wrote": "nothing ran"}
        # What the opt-out exposes, which is why it is not the default.
        done = cli(repo, prefix, python, refused, "grade", "submitted", "--out", "graded", "--unsafe-same-uid")
        time.sleep(1.5)
        outlived = left_behind(token)
        assert done.returncode == 0 and "WARNING: --unsafe-same-uid" in done.stderr, done.stdout + done.stderr
        found = probe(json.loads((repo / "graded" / f"{MALLORY}.json").read_text()))
        assert "reference" in found["wrote"] and "grader" in found["wrote"], found
        MEASURED["same, with --unsafe-same-uid"] = {
            "isolation": json.loads((repo / "graded" / f"{MALLORY}.json").read_text())["extra_data"]["isolation"],
            "child uid": found["uid"], "read": found["read"], "wrote": found["wrote"],
            "process left behind": outlived, "changed": len(changes(before, snapshot(repo)))}
    finally:
        left_behind(token)
        subprocess.run(["rm", "-rf", str(repo)])


TRUNCATOR_CLASS = ("a_truncator", "b_honest", "c_honest")   # graded in this order, one at a time


@pytest.mark.parametrize("mode", ["root, namespaces refused", "ordinary user, user namespaces"])
def test_a_process_left_behind_reaches_no_later_submission(mode):
    """Issue 43: a chapter 5 student whose code leaves a process behind (double-forked into a
    session of its own) that watches /tmp and truncates every checkpoint written there, enters
    other children's folders and reads command lines; then two honest students (the reference).
    They keep 100, nothing of the first runs once its child has ended (it saw no checkpoint but
    its own: a stray still alive would see the later ones appear), it entered no other child's
    folder, and what it could read is what the result says held."""
    prefix, python, wrapper = mode_command(mode)
    token = "t" + secrets.token_hex(5)
    repo = copy_repo()
    log = f"/tmp/{token}.log"
    try:
        os.chmod(repo, 0o1777)   # results are written here by the grader's user
        for name in TRUNCATOR_CLASS:
            (repo / "class" / name).mkdir(parents=True)
            for module, text in reference_sources("ch05_pretraining").items():
                attack = TMP_TRUNCATOR.replace("@TOKEN@", token) if name == TRUNCATOR_CLASS[0] else ""
                (repo / "class" / name / module).write_text(attack + text)
        subprocess.run(["chmod", "-R", "a+rX", str(repo / "class")], check=True)
        done = cli(repo, prefix, python, wrapper, "grade", "class", "--out", "graded", "--jobs", "1",
                   "--assignment", "ch05_pretraining")
        time.sleep(1.0)
        outlived = left_behind(token)
        assert done.returncode == 0, done.stdout + done.stderr
        results = {s: json.loads((repo / "graded" / f"{s}.json").read_text()) for s in TRUNCATOR_CLASS}
        held = results["b_honest"]["extra_data"]["protections"]["held"]
        seen = []
        if os.path.exists(log):   # where the first child had no private /tmp
            with open(log) as handle:
                seen = [json.loads(line) for line in handle]
        strays = {line["uid"] for line in seen}
        found = {"isolation": results["b_honest"]["extra_data"]["isolation"][:40], "held": held,
                 "scores": {s: results[s]["score"] for s in TRUNCATOR_CLASS}, "process left behind": outlived,
                 "checkpoints seen": [(line["owner"] in strays, line["truncated"]) for line in seen if "seen" in line],
                 "entered": [line["entered"] for line in seen if "entered" in line],
                 "cmdlines read": [(line["cmdlines"], line["out"]) for line in seen if "cmdlines" in line]}
        MEASURED[f"{mode}, chapter 5 truncator"] = found
        assert [results[s]["score"] for s in TRUNCATOR_CLASS[1:]] == [100, 100], found
        assert not outlived, found
        assert all(own for own, _ in found["checkpoints seen"]), found   # only its own: gone before the next
        assert found["entered"] == [], found
        if any(read for read, _ in found["cmdlines read"]):
            assert "hidden processes" not in held, found   # the result says what did not hold
        if mode == "root, namespaces refused":
            assert seen, "the truncator did not start"
            assert {"a uid of its own", "private temporary directory"} <= set(held), found
        else:
            assert {"private root", "hidden processes"} <= set(held), found
    finally:
        left_behind(token)
        subprocess.run(["rm", "-rf", str(repo), log])


def test_summary(capsys):
    with capsys.disabled():
        print("\nwhat a hostile submission could do, per isolation mode:")
        for mode, found in MEASURED.items():
            print(f"  {mode}: " + "; ".join(f"{k}: {v}" for k, v in found.items()))
