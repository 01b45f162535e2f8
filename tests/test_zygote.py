"""The zygote the CLI forks from itself (torch imported once) holds nothing of the grader's.

Every child is a fork of the zygote and sees its memory, so after a grading (when the grader
holds the reference, the suites and a result) the zygote must hold none of them: no module
or function of the reference or the suites, no result, and no variable of the grader's
environment beyond startup.ZYGOTE_ENV (neither in os.environ nor in /proc/self/environ, and a
secret's value nowhere in its writable memory), and its hash seed is 0 whatever the grader's.
The CLI runs as it does for a user, in a subprocess started clean (startup.clean_start); after
each grading the zygote answers a probe that lists what it holds (zygote.inventory).
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from autograder.paths import ROOT, SOLUTIONS, SUITES
from autograder.sandbox import isolate
from autograder.sandbox.startup import ZYGOTE_ENV
from autograder.sandbox.zygote import ZYGOTE_MODULES
from nobody import python_nobody_runs

SECRET = "AUTOGRADER_TEST_SECRET"
# After each grading: what the zygote holds, beside what the grader itself holds then.
PROBE = """
import json, os, sys
from autograder.sandbox.startup import clean_start
clean_start()  # as python -m autograder grade starts
from autograder import cli
from autograder.platforms import ci
original, folder = ci.start_grader, sys.argv[1]

def start_grader(options, zygote=None):
    grader = original(options, zygote)
    grade_result = grader.grade_result

    def recorded(submission, assignment=None):
        result = grade_result(submission, assignment)
        record = {"zygote": grader.zygote.inventory(find=b"do-not-leak-" + os.environ["SALT"].encode()), "grader": sorted(sys.modules), "score": result.score}
        with open(os.path.join(folder, f"{os.getpid()}-{submission.name}.json"), "w") as handle:
            json.dump(record, handle)
        return result
    grader.grade_result = recorded
    return grader

ci.start_grader = start_grader
sys.exit(cli.main(sys.argv[2:]))
"""


def _student(folder):
    folder.mkdir(parents=True)
    for path in (SOLUTIONS / "ch03_attention").glob("*.py"):
        if not path.name.startswith("test_"):
            shutil.copy(path, folder)
    return folder


@pytest.mark.parametrize("mode", ["one submission", "class", "class, two jobs"])
def test_the_zygote_holds_no_reference_suite_result_or_secret(tmp_path, mode):
    records = tmp_path / "records"
    records.mkdir()
    if mode == "one submission":
        args = ["grade", _student(tmp_path / "alice"), "--json", tmp_path / "alice.json"]
    else:
        for name in ("alice", "bob"):
            _student(tmp_path / "class" / name)
        args = ["grade", tmp_path / "class", "--out", tmp_path / "out"] + (["--jobs", "2"] if "two" in mode else [])
    salt = os.urandom(8).hex()
    env = {**os.environ, SECRET: f"do-not-leak-{salt}", "SALT": salt}
    env.pop("PYTHONHASHSEED", None)  # the grader's own seed is random: the children's must not be
    run = subprocess.run([sys.executable, "-c", PROBE, records, *map(str, args)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    found = [json.loads(p.read_text()) for p in records.iterdir()]
    assert len(found) == (1 if mode == "one submission" else 2)
    secret_files = (str(SOLUTIONS), str(SUITES))
    for record in found:
        assert record["score"] == 100
        assert any(name.startswith("test_hidden_") for name in record["grader"])  # what the grader holds
        zygote = record["zygote"]
        modules = zygote["modules"]
        assert not [n for n in modules if n.startswith(("test_hidden_", "conftest", "_attention", "solutions"))]
        assert not [n for n, f in modules.items() if f.startswith(secret_files)]
        assert {n for n in modules if n.startswith("autograder")} <= set(ZYGOTE_MODULES)
        assert not [f for f in zygote["code_files"] if f.startswith(secret_files)]
        assert zygote["results"] == 0
        assert set(zygote["environ"]) <= {*ZYGOTE_ENV, "OMP_NUM_THREADS", "PYTHONHASHSEED"}
        assert SECRET not in zygote["proc_environ"]
        assert zygote["forked"]           # torch imported once: the zygote is a fork of the grader
        assert not zygote["found"]        # the secret's value is nowhere in the zygote's memory
        assert zygote["hash_randomization"] == 0   # one hash seed: the same feedback on every run


@pytest.mark.privileged
@pytest.mark.skipif(os.geteuid() != 0, reason="children change to uid nobody only when the grader is root")
def test_the_cli_forks_no_zygote_where_children_need_a_python_nobody_reaches(tmp_path):
    """A forked zygote runs the grader's Python. Without namespaces, as root, its children are
    nobody, who may not reach that Python (pyenv's under /root): the CLI then starts the
    zygote from isolate.children_python instead, and an honest ``import statistics`` (a module
    nothing loaded before) keeps every point."""
    python_nobody_runs(isolate.CHILD_NEEDS, "the zygote's children as nobody without namespaces")
    folder = _student(tmp_path / "honest" / "ch03_attention")
    module = folder / "simple_attention.py"
    module.write_text("import statistics  # loaded by no process before the child\n" + module.read_text())
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", folder, "--no-isolation",
                          "--json", tmp_path / "r.json"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads((tmp_path / "r.json").read_text())["score"] == 100


def _graded_once(tmp_path, submission):
    """Grade ``submission`` with ``python -m autograder grade`` under PROBE: its one record."""
    records = tmp_path / "records"
    records.mkdir()
    env = {**os.environ, SECRET: "unused", "SALT": "0", "AUTOGRADER_UNSAFE_SAME_UID": "1"}
    run = subprocess.run([sys.executable, "-c", PROBE, records, "grade", submission, "--json", tmp_path / "r.json"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    [record] = [json.loads(p.read_text()) for p in records.iterdir()]
    return record


PLATFORM_ENTRIES = ("autograder.cli", "autograder.platforms.ci", "autograder.platforms.gradescope",
                    "autograder.platforms.nbgrade", "autograder.nbgrader_plugin", "autograder.grading.engine")


def test_every_platform_starts_its_zygote_before_it_imports_torch():
    """Each platform's entry modules import no torch: the zygote (a fresh interpreter where the
    children run another Python) imports torch beside this process's own import, not after it.
    Importing it here once made a chapter-3 grading 1.24x ``import torch`` (a constant the CLI read
    from the repair search's module, which imports the shape analysis and torch); without it, 1.00x."""
    code = f"import sys\nfor m in {PLATFORM_ENTRIES!r}: __import__(m)\nprint(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'pytest')))"
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[]", f"imported at start: {run.stdout.strip()[:300]}"


# A module each warm-up loads and nothing else in a zygote does: the zygote holds it only where a
# manifest of the graded assignments asks for that warm-up (a warm-up without one fails here).
WARM_MARKERS = {"tiktoken": "tiktoken", "optimizer": "torch._dynamo"}


@pytest.mark.parametrize("assignment, folder", [("ch03_attention", "ch03_attention"), ("ch04_gpt", "ch04_gpt"),
                                                ("ch05_pretraining", "ch05_pretraining"), ("ch03_attention", "alice")])
def test_the_zygote_warms_only_what_the_assignments_checks_use(tmp_path, assignment, folder):
    """One submission: the zygote prepares for its children only the warm-ups its assignment's
    manifest asks for (course.warm_ups: tiktoken's encoding, ~0.3 s, where its support has
    tiktoken_offline.py; an optimizer, ~2 s of torch._dynamo, where ``warm`` names it); chapter 3
    pays for neither, also where its folder is not named after it (alice/: found from the modules
    before the zygote starts)."""
    from autograder.grading import course
    from autograder.sandbox.zygote import WARM_UPS
    assert set(WARM_MARKERS) == set(WARM_UPS), "give each warm-up a module only it loads"
    submission = tmp_path / folder
    wanted = course.get(assignment)
    submission.mkdir()
    for hand_in in wanted.hand_in:  # its modules, and those of earlier assignments it builds on
        shutil.copy(course.get(hand_in.assignment).solutions / hand_in.file, submission)
    record = _graded_once(tmp_path, submission)
    assert record["score"] == 100
    held = {name for name, marker in WARM_MARKERS.items() if marker in record["zygote"]["modules"]}
    assert held == wanted.warm_ups, f"the zygote warmed {sorted(held)}, the manifest asks for {sorted(wanted.warm_ups)}"


def test_a_wrong_answer_makes_no_process_import_sympy(tmp_path):
    """A check that reports wrong values, and the repair search after it, load nothing heavy in
    the grading process nor in the zygote: torch.unravel_index (which imports torch.fx's symbolic
    shapes, and sympy with it, ~0.5 s) is not what finds the largest difference's index."""
    submission = _student(tmp_path / "ch03_attention")
    path = submission / "simple_attention.py"
    source = path.read_text()
    assert source.count("dim=-1)") >= 1
    path.write_text(source.replace("dim=-1)", "dim=0)", 1))
    record = _graded_once(tmp_path, submission)
    result = json.loads((tmp_path / "r.json").read_text())
    assert record["score"] < 100 and "wrong values" in json.dumps(result)
    assert "sympy" not in record["grader"] and "sympy" not in record["zygote"]["modules"]
