"""CI targets: the Gradescope zip run in a simulated /autograder, and grade --junit / the job summary,
each checked against its format (GitHub and Classroom 50: test_github.py)."""
import json
import os
import resource
import shutil
import stat
import subprocess
import sys
import zipfile

import jsonschema
import pytest
import xmlschema

from autograder.grading.result import SubmissionResult
from autograder.platforms import gradescope, report
from autograder.paths import ASSIGNMENTS, ROOT, SOLUTIONS, SUITES
from hostile import CASES, materialize
from test_grader import submission

SCHEMAS = ROOT / "autograder" / "platforms" / "templates" / "schemas"
GRADESCOPE_MEMORY = 768 << 20  # Gradescope's default container memory
NO_SCALING = ("self_attention.py", "        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)\n"
              "        return attn_weights @ values\n        ### END SOLUTION\n\n\nclass SelfAttention_v2",
              "        attn_weights = torch.softmax(attn_scores, dim=-1)\n"
              "        return attn_weights @ values\n        ### END SOLUTION\n\n\nclass SelfAttention_v2")


def validator(name):
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def suite_lines():
    """Lines of the hidden suites long enough to be telling, and not in what students get
    anyway (the stubs and public tests): none may reach a student."""
    def lines(folder):
        return {line.strip() for path in folder.glob("*.py") for line in path.read_text().splitlines()}
    return {line for line in lines(SUITES / "ch03_attention") - lines(ASSIGNMENTS / "ch03_attention")
            if len(line) > 25}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    gradescope.build("ch03_attention", out)
    return out


def run_bundle(bundle, base, place, isolation="full"):
    """Unpack the zip as Gradescope does into ``base``/autograder (readable by others, as there),
    put the submission in place with ``place(submission folder)``, run run_autograder under a
    768 MB address-space limit; returns (results.json, stdout)."""
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o755)
    autograder = gradescope.unpack(bundle, base / "autograder")
    place(autograder / "submission")
    # Without namespaces only trusted submissions are run here, where nobody may be unable to read
    # this Python and the child would then keep our uid (on Gradescope it is nobody).
    env = {**os.environ, "AUTOGRADER_ROOT": str(autograder), "PYTHON": sys.executable,
           "AUTOGRADER_ISOLATION": isolation, "AUTOGRADER_UNSAFE_SAME_UID": str(int(isolation == "off"))}
    env.pop("GITHUB_STEP_SUMMARY", None)
    run = subprocess.run([str(autograder / "source" / "run_autograder")], env=env, capture_output=True, text=True,
                         timeout=300, preexec_fn=lambda: resource.setrlimit(
                             resource.RLIMIT_AS, (GRADESCOPE_MEMORY, GRADESCOPE_MEMORY)))
    assert run.returncode == 0, run.stdout + run.stderr
    source = autograder / "source"
    # A child without namespaces runs as nobody: nothing unpacked may be readable by others.
    assert stat.S_IMODE(source.stat().st_mode) == 0o700
    with zipfile.ZipFile(bundle) as zipped:
        assert not [n for n in zipped.namelist() if (source / n).stat().st_mode & 0o077]
    return json.loads((autograder / "results" / "results.json").read_text()), run.stdout


def copy_modules(source, target):
    target.mkdir(parents=True, exist_ok=True)
    for path in source.glob("*.py"):
        if not path.name.startswith("test_"):
            shutil.copy(path, target)


@pytest.fixture(scope="module")
def buggy_by_cli(tmp_path_factory):
    """A submission without 1/sqrt(d_k) in SelfAttention_v1 (loses self_attention points), graded once by the CLI as
    CI runs it: --json, --junit, and $GITHUB_STEP_SUMMARY holding an earlier step's text."""
    tmp = tmp_path_factory.mktemp("cli")
    folder = submission(tmp, "buggy", edits=[NO_SCALING])
    (tmp / "summary.md").write_text("earlier step\n")
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", str(folder), "--junit", str(tmp / "j.xml"),
                          "--json", str(tmp / "r.json")], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "GITHUB_STEP_SUMMARY": str(tmp / "summary.md")})
    assert run.returncode == 0, run.stderr
    return {"folder": folder, "result": json.loads((tmp / "r.json").read_text()), "junit": tmp / "j.xml",
            "summary": (tmp / "summary.md").read_text()}


def test_gradescope_bundle_grades_four_submissions_under_768_mb(bundle, buggy_by_cli, tmp_path):
    valid = validator("gradescope-results.schema.json")
    secrets = suite_lines()
    # correct: the modules in a folder, namespaces refused (Gradescope's seccomp)
    correct, log = run_bundle(bundle, tmp_path / "correct",
                              lambda s: copy_modules(SOLUTIONS / "ch03_attention", s / "my work"), isolation="off")
    assert correct["score"] == 100 and all(t["status"] == "passed" for t in correct["tests"])
    assert correct["extra_data"]["isolation"].startswith("limits only")
    assert "limits only" in log and "WARNING" not in correct["output"]  # the instructor's log says it
    assert "simple_attention: 15 / 15" in correct["output"].splitlines()
    # buggy: at the top level; the same score and feedback as the CLI's
    buggy, _ = run_bundle(bundle, tmp_path / "gs-buggy", lambda s: copy_modules(buggy_by_cli["folder"], s))
    expected = buggy_by_cli["result"]
    assert buggy["score"] == expected["score"]
    assert [p for p, (got, most) in buggy["extra_data"]["parts"].items() if got < most] == ["self_attention"]
    assert [(t["name"], t["score"], t["output"]) for t in buggy["tests"]] == \
        [(t["name"], t["score"], t["output"]) for t in expected["tests"]]
    assert "no 1/sqrt(d_k) scaling" in next(t["output"] for t in buggy["tests"] if t["status"] == "failed")
    # blank: the stubs in the notebook release's layout, namespaces refused
    blank, _ = run_bundle(bundle, tmp_path / "blank", lambda s: (
        shutil.copytree(ASSIGNMENTS / "ch03_attention", s / "ch03_attention"),
        (s / "ch03_attention" / "ch03_attention.ipynb").write_text("{}")), isolation="off")
    assert (blank["score"], sum(t["max_score"] for t in blank["tests"])) == (0, 100)
    # hostile: hunts for the reference and the suites in the unpacked zip; earns 15 if it finds them
    case = next(c for c in CASES if c.name == "01_gated_read_reference")
    hostile, _ = run_bundle(bundle, tmp_path / "hostile", lambda s: materialize(case, s / "sub", {
        "REPO": str(tmp_path / "hostile" / "autograder" / "source"),
        "SOLUTION": repr((SOLUTIONS / "ch03_attention" / "simple_attention.py").read_text())}))
    assert hostile["score"] == 0
    for result in (correct, buggy, blank, hostile):
        valid.validate(result)
        student_view = json.dumps({k: v for k, v in result.items() if k != "extra_data"})
        assert "/source" not in student_view and "test_hidden" not in student_view
        assert not [line for line in secrets if line in student_view]


def test_gradescope_visibility_options_reach_results_json(tmp_path):
    out = tmp_path / "a.zip"
    names = gradescope.build("ch03_attention", out, checks="after_due_date", stdout="hidden")
    with zipfile.ZipFile(out) as zipped:
        assert json.loads(zipped.read("config.json"))["checks"] == "after_due_date"
        assert {"setup.sh", "run_autograder"} <= set(names)
        assert zipped.getinfo("run_autograder").external_attr >> 16 & 0o111
        assert not [n for n in names if n.startswith(("tests/", "assignments/", "source/"))
                    or "/test_" in n and "suites" not in n]
    result = SubmissionResult.from_json({
        "score": 96, "max_score": 100, "execution_time": 1.0, "output": "WARNING: the submission ran X\nnote",
        "extra_data": {"parts": {"exercises": [15, 15], "self_attention": [16, 20]}},
        "tests": [{"name": "a", "part": "self_attention", "score": 0, "max_score": 4, "status": "failed",
                   "output": "wrong", "visibility": "visible"}]})
    for checks in ("after_due_date", "hidden"):
        converted = gradescope.to_gradescope(result, checks=checks)
        validator("gradescope-results.schema.json").validate(converted)
        assert converted["tests"][0]["visibility"] == checks and converted["stdout_visibility"] == "hidden"
        assert converted["output"].strip() == "note"  # no part scores before the checks are shown
    shown = gradescope.to_gradescope(result)["output"].splitlines()
    assert shown[-2:] == ["self_attention: 16 / 20", "exercises: 15 / 15"]
    with pytest.raises(ValueError):
        gradescope.build("ch03_attention", out, checks="sometimes")


def test_gradescope_setup_is_bash_and_installs_the_projects_pins(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as zipped:
        zipped.extractall(tmp_path)
    for script in ("setup.sh", "run_autograder"):
        check = subprocess.run(["bash", "-n", str(tmp_path / script)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    pinned = (tmp_path / "requirements.txt").read_text().splitlines()
    project = (ROOT / "requirements.txt").read_text().splitlines()
    assert "torch==2.13.0" in pinned and set(pinned) <= set(project)
    assert {p.split("==")[0] for p in pinned} == set(gradescope.GRADER_PACKAGES)
    setup = (tmp_path / "setup.sh").read_text()
    assert "download.pytorch.org/whl/cpu" in setup and "-r requirements.txt" in setup


def test_grade_junit_and_job_summary_for_ci(buggy_by_cli, tmp_path):
    result, junit = buggy_by_cli["result"], buggy_by_cli["junit"]
    schema = xmlschema.XMLSchema(SCHEMAS / "junit.xsd")
    schema.validate(junit)
    suite = schema.to_dict(junit)["testsuite"][0]
    assert len(suite["testcase"]) == len(result["tests"]) and suite["@failures"] == 1
    failed = [c for c in suite["testcase"] if "failure" in c]
    assert len(failed) == 1 and "no 1/sqrt(d_k) scaling" in failed[0]["failure"]["$"]
    points = {p["@name"]: p["@value"] for p in failed[0]["properties"]["property"]}
    lost = next(t for t in result["tests"] if t["status"] == "failed")
    # the mistake the check recognised: the result's field, in JUnit a property and the failure's type
    assert lost["extra_data"]["mistake"].startswith("no 1/sqrt(d_k) scaling")
    assert points == {"score": "0", "max_score": str(lost["max_score"]), "mistake": lost["extra_data"]["mistake"]}
    assert failed[0]["failure"]["@type"] == "KnownMistake"
    assert sum(int(p["@value"]) for c in suite["testcase"] for p in c["properties"]["property"]
               if p["@name"] == "score") == result["score"] == 100 - lost["max_score"]
    summary = buggy_by_cli["summary"]
    assert summary.startswith("earlier step\n")  # appended, not replaced
    assert f"**Score: {result['score']} / 100**" in summary
    # a class: one suite per student, a student who could not be graded is an error, not a green suite
    rows = [("alice", SubmissionResult.from_json(result), "graded"), ("bob\x01<&>", None, "not graded: no Python files")]
    (tmp_path / "class.xml").write_text(report.junit(rows))
    schema.validate(tmp_path / "class.xml")
    suites = schema.to_dict(tmp_path / "class.xml")["testsuite"]
    assert [s["@errors"] for s in suites] == [0, 1] and suites[1]["@name"] == "bob?<&>"
    assert "| `bob" in report.summary(rows) and f"{result['score']} / 100" in report.summary(rows)   # code: no link
