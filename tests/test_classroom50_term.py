"""A term on Classroom 50, simulated: the course's assignments generated into one folder (each
keeping the others), then chapter 3 graded by its instructor workflow's own steps, and chapter 4,
which lives in other repositories, graded with each student's chapter-3 modules taken from the
submission graded in chapter 3's run; then every assignment of the course graded in turn, in one
shard and in two, each assignment's template repository in the organisation beside the students'
(bare git repositories per student per assignment, pushes at recorded times, a stand-in `gh`;
nothing touches the network)."""
import csv
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest
import yaml

from autograder.grading import course
from autograder.paths import ASSIGNMENTS, ROOT, SOLUTIONS
from autograder.platforms import github, shards
from test_github import step, validator

COURSE = course.names()
T0 = datetime(2026, 10, 1, 12, 0, tzinfo=timezone.utc)

FAKE_GH = r'''#!/usr/bin/env python3
"""gh as the instructor workflow uses it, answered from a folder of bare repositories, their
recorded pushes, and the artifacts of earlier workflow runs (runs/RUN/NAME/)."""
import json, os, shutil, subprocess, sys
org, args = os.environ["FAKE_ORG"], sys.argv[1:]
with open(os.path.join(org, "calls.log"), "a") as log:
    log.write(" ".join(args) + "\n")
if args[:2] == ["repo", "list"]:
    print("\n".join(sorted(n[:-4] for n in os.listdir(org) if n.endswith(".git"))))
elif args[:2] == ["repo", "clone"] and args[2].startswith("acme/"):
    repo = os.path.join(org, args[2].split("/", 1)[1] + ".git")
    if not os.path.isdir(repo):
        sys.exit("GraphQL: Could not resolve to a Repository")
    sys.exit(subprocess.run(["git", "clone", *args[5:], repo, args[3]]).returncode)
elif args[:2] == ["run", "download"]:
    run, name, into = args[2], args[args.index("--name") + 1], args[args.index("--dir") + 1]
    source = os.path.join(org, "runs", run, name)
    if not os.path.isdir(source):
        sys.exit(f"no artifact {name} in run {run}")
    shutil.copytree(source, into, dirs_exist_ok=True)
elif args[0] == "api":
    path = next(a for a in args if a.startswith("repos/"))
    for item in json.load(open(os.path.join(org, path.split("/")[2] + ".activity.json"))):
        print(json.dumps(item))
else:
    sys.exit(2)
'''


@pytest.fixture(scope="module")
def points(grader):
    """{assignment: {part: points}}, from grading the reference once."""
    return {assignment: github.part_points(assignment, grader) for assignment in COURSE}


@pytest.fixture(scope="module")
def course_out(tmp_path_factory, points):
    out = tmp_path_factory.mktemp("course")
    for assignment in COURSE:
        github.build(assignment, out, notebook=False, points=points[assignment], classroom="llm-2026",
                     org="acme", due="2026-12-01T12:00:00Z")
    return out


def workflow(out, assignment, platform="classroom50"):
    return out / platform / "instructor" / ".github" / "workflows" / github.workflow_name(assignment)


def test_a_course_generated_into_one_folder_keeps_every_assignment(course_out, points, tmp_path, monkeypatch,
                                                                    capsys):
    listed = json.loads((course_out / "classroom50" / "config" / "llm-2026" / "assignments.json").read_text())
    validator("classroom50-assignments-v1.schema.json").validate(listed)
    assert [e["slug"] for e in listed["assignments"]] == [github.slug(a) for a in COURSE]
    assert all(e["template"]["repo"] == f"llm-2026-{e['slug']}-template" for e in listed["assignments"])
    for assignment in COURSE:
        for platform in ("classroom50", "github"):
            assert (course_out / platform / assignment / "template" / assignment / "conftest.py").is_file()
            assert workflow(course_out, assignment, platform).is_file()
        script = course_out / "classroom50" / "config" / "llm-2026" / "autograders" / github.slug(assignment)
        assert (script / "autograder.py").is_file()
    flows = sorted(str(p) for p in course_out.glob("*/instructor/.github/workflows/*.yml"))
    assert len(flows) == 2 * len(COURSE)
    actionlint = shutil.which("actionlint")
    if actionlint:
        lint = subprocess.run([actionlint, "-no-color", *flows], capture_output=True, text=True)
        assert lint.returncode == 0, lint.stdout + lint.stderr
    inputs = {a: yaml.safe_load(workflow(course_out, a).read_text())[True]["workflow_dispatch"]["inputs"]
              for a in COURSE}
    assert "earlier_runs" not in inputs["ch03_attention"] and inputs["ch04_gpt"]["earlier_missing"]["default"] == \
        "reference"
    assert "ch03_attention and ch04_gpt" in inputs["efficient_attention"]["earlier_runs"]["description"]
    # each template of an assignment that builds on earlier ones has their folders, saying what goes there
    readme = course_out / "classroom50" / "ch04_gpt" / "template" / "ch03_attention" / "README.md"
    assert "`causal_attention.py`, `multihead_attention.py`" in readme.read_text()
    assert (course_out / "classroom50" / "efficient_attention" / "template" / "ch04_gpt" / "README.md").is_file()
    # generated again (a new due date): its entry changes where it stands, the others stay
    copy = tmp_path / "again"
    shutil.copytree(course_out, copy)
    github.build("ch03_attention", copy, notebook=False, points=points["ch03_attention"], classroom="llm-2026",
                 org="acme", due="2026-12-08T12:00:00Z")
    again = json.loads((copy / "classroom50" / "config" / "llm-2026" / "assignments.json").read_text())
    assert [e["slug"] for e in again["assignments"]] == [e["slug"] for e in listed["assignments"]]
    changed = [i for i, (e, f) in enumerate(zip(again["assignments"], listed["assignments"])) if e != f]
    assert changed == [COURSE.index("ch03_attention")] and again["assignments"][changed[0]]["due"] == "2026-12-08T12:00:00Z"
    assert sorted(p.name for p in (copy / "classroom50").iterdir()) == sorted([*COURSE, "config", "instructor"])
    # the command says MERGE (the classroom's live list holds the others), and warns without --org
    from autograder.cli import main
    monkeypatch.setattr(github, "part_points", lambda a, g=None: points[a])
    real = github.template
    monkeypatch.setattr(github, "template", lambda a, folder, notebook: real(a, folder, False))
    assert main(["github", "ch04_gpt", "--out", str(copy), "--classroom", "llm-2026"]) == 0
    said = capsys.readouterr()
    others = ", ".join(name.replace("_", "-") for name in COURSE if name != "ch04_gpt")
    assert f"MERGE classroom50/config/llm-2026/assignments.json (with {others}" in said.out
    assert "copy" not in said.out.lower().split("merge")[0]
    assert "no --org" in said.err and "names no template repository" in said.err
    (copy / "classroom50" / "config" / "llm-2026" / "assignments.json").write_text("[]")
    assert main(["github", "ch04_gpt", "--out", str(copy), "--classroom", "llm-2026"]) == 2
    assert "not a classroom50/assignments/v1 file" in capsys.readouterr().err


class Organisation:
    """acme: a bare repository per student per assignment (Classroom 50's CLASSROOM-SLUG-username)
    and the pushes GitHub recorded for each; runs/RUN/NAME/: an earlier workflow run's artifacts."""

    def __init__(self, root):
        self.root = root / "acme"
        self.root.mkdir(parents=True)
        self.work = {}

    def repo(self, assignment, name):
        repo = f"llm-2026-{github.slug(assignment)}-{name}"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(self.root / f"{repo}.git")], check=True)
        work = self.root.parent / "work" / repo
        subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
        (self.root / f"{repo}.activity.json").write_text("[]")
        self.work[repo] = work
        return repo

    def push(self, repo, files, at, tag=None):
        """Commit ``files`` ({path: text}, replacing what was there) and push at ``at``; with
        ``tag``, Classroom 50's runner then tags it submit/... a minute later (every-push mode)."""
        work = self.work[repo]
        for path in list(work.iterdir()):
            if path.name != ".git":
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        for path, text in files.items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text)
        env = {**os.environ, "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@x", "GIT_COMMITTER_NAME": "s",
               "GIT_COMMITTER_EMAIL": "s@x"}
        subprocess.run(["git", "add", "-A"], cwd=work, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "work"], cwd=work, env=env, check=True)
        self._push(repo, "refs/heads/main", at)
        if tag:
            subprocess.run(["git", "tag", tag, "HEAD"], cwd=work, check=True)
            self._push(repo, f"refs/tags/{tag}", at + timedelta(minutes=1))

    def _push(self, repo, ref, at):
        bare, work = self.root / f"{repo}.git", self.work[repo]
        before = subprocess.run(["git", "rev-parse", "-q", "--verify", ref], cwd=bare, capture_output=True,
                                text=True).stdout.strip() or "0" * 40
        subprocess.run(["git", "push", "-q", str(bare), f"{ref}:{ref}"], cwd=work, check=True)
        after = subprocess.run(["git", "rev-parse", ref], cwd=bare, capture_output=True, text=True).stdout.strip()
        log = self.root / f"{repo}.activity.json"
        items = json.loads(log.read_text())
        items.insert(0, {"ref": ref, "before": before, "after": after, "timestamp": at.isoformat().replace("+00:00", "Z"),
                         "activity_type": "branch_creation" if before == "0" * 40 else "push"})
        log.write_text(json.dumps(items))


def modules(assignment, source, names=None):
    """{path in the repository: text} of ``assignment``'s modules in ``source`` (solutions/ or assignments/)."""
    return {f"{assignment}/{m}": (source / assignment / m).read_text()
            for m in names or course.get(assignment).modules}


def run_step(flow, text, cwd, env):
    """Run the workflow's step whose script holds ``text``, in the job that has it."""
    jobs = yaml.safe_load(flow.read_text())["jobs"]
    (job,) = [name for name, found in jobs.items() if any(text in s.get("run", "") for s in found["steps"])]
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", step(flow, job, text)["run"]], cwd=cwd,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


LEFT_BY_A_RUN = ("earlier", "submitted", "handed-in.json", "collected.json", "collection", "shards", "graded")


def run_workflow(flow, repo, env, slices=1, runs=None):
    """The workflow's jobs in ``repo`` as GitHub runs them: the collect job (fetching the earlier
    runs' records first where ``runs`` are given), each shard's grade job, the merge; each artifact
    handed on as the folder it is downloaded to. Returns the collect step's run."""
    for leftover in LEFT_BY_A_RUN:
        target = repo / leftover
        shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
    if runs is not None:
        run_step(flow, "gh run download", repo, {**env, "RUNS": runs})
    collected = run_step(flow, "platforms.collect", repo, env)
    (repo / "collection").mkdir()   # the artifact `submitted`, as the merge job downloads it
    shutil.copy(repo / "collected.json", repo / "collection")
    (repo / "shards").mkdir()
    for k in range(1, slices + 1):
        run_step(flow, "-m autograder grade", repo, {**env, "SHARD": f"{k}/{slices}", "OUT": f"graded-{k}"})
        shutil.move(repo / f"graded-{k}", repo / "shards" / f"graded-{k}")
    run_step(flow, "autograder merge", repo, env)
    return collected


def stand_ins(tmp_path, org):
    """The stand-in `gh` (and a `sudo` that only runs its command: the tests are root already), and
    the environment GitHub gives the workflow's steps."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name, text in (("gh", FAKE_GH), ("sudo", '#!/bin/bash\nexec "$@"\n')):
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(0o755)
    return {"PATH": f"{bin_}:{os.environ['PATH']}", "FAKE_ORG": str(org.root), "ORG": "acme", "ROSTER": "",
            "DUE": "", "LATE": "none", "EXTENSIONS": "", "SHARD": "1/1", "OUT": "graded-1", "PYTHONPATH": str(ROOT),
            "GH_TOKEN": "t", "PYTHON": sys.executable, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_REPOSITORY": "acme/grader", "EARLIER_MISSING": "reference"}


def rows(path):
    with open(path, newline="") as handle:
        return {r["student"]: r for r in csv.DictReader(handle)}


def test_a_term_on_classroom50(course_out, tmp_path):
    """alice hands in chapter 3 (her own multihead_attention.py, a comment of hers in it), is graded,
    then pushes a broken chapter 3 while working on chapter 4, whose repository holds only chapter
    4's modules: her chapter 4 is graded on the chapter-3 files graded in chapter 3's run, 100.
    carol has no chapter-3 repository: graded per the setting (the course's reference), and told so."""
    from test_unprivileged import copy_repo
    org = Organisation(tmp_path / "org")
    env = stand_ins(tmp_path, org)
    own = modules("ch03_attention", SOLUTIONS)
    own["ch03_attention/multihead_attention.py"] += "\n# alice's own, as graded in chapter 3\n"
    alice3 = org.repo("ch03_attention", "alice")
    org.push(alice3, own, T0, tag="submit/2026-10-01T12-00-00Z-alice01")
    org.push(org.repo("ch03_attention", "bob"), modules("ch03_attention", SOLUTIONS), T0, tag="submit/bob")
    repo = copy_repo()
    try:
        # chapter 3's run in two shards: collect, grade, merge (its steps as written), the record kept as
        # the run's artifact
        ch03 = workflow(course_out, "ch03_attention")
        run_workflow(ch03, repo, {**env, "PREFIX": "llm-2026-ch03-attention"}, slices=2)
        assert [len(json.loads((repo / "shards" / f"graded-{k}" / "summary.json").read_text())["rows"])
                for k in (1, 2)] == [sum(shards.in_shard(n, k, 2) for n in ("alice", "bob")) for k in (1, 2)]
        assert {n: float(r["score"]) for n, r in rows(repo / "graded" / "grades.csv").items()} == {"alice": 100,
                                                                                                   "bob": 100}
        record = json.loads((repo / "graded" / "collected.json").read_text())
        assert (record["assignment"], sorted(record["students"])) == ("ch03_attention", ["alice", "bob"])
        assert record["students"]["alice"]["what"] == "submit/2026-10-01T12-00-00Z-alice01"
        (org.root / "runs" / "1001" / "collected").mkdir(parents=True)
        shutil.copy(repo / "graded" / "collected.json", org.root / "runs" / "1001" / "collected")
        for leftover in LEFT_BY_A_RUN:
            target = repo / leftover
            shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
        # later, alice breaks her chapter 3 (the stubs again): chapter 4 must not take these
        org.push(alice3, modules("ch03_attention", ASSIGNMENTS), T0 + timedelta(days=20), tag="submit/late")
        alice4, carol4 = org.repo("ch04_gpt", "alice"), org.repo("ch04_gpt", "carol")
        for name in (alice4, carol4):
            org.push(name, modules("ch04_gpt", SOLUTIONS), T0 + timedelta(days=30), tag=f"submit/{name}")
        # chapter 4's run: the earlier record fetched, then collect and grade
        ch04 = workflow(course_out, "ch04_gpt")
        run_step(ch04, "gh run download", repo, {**env, "RUNS": "1001"})
        done = run_step(ch04, "platforms.collect", repo, {**env, "PREFIX": "llm-2026-ch04-gpt"})
        taken = repo / "submitted" / "alice" / "ch03_attention" / "multihead_attention.py"
        assert taken.read_text() == own["ch03_attention/multihead_attention.py"]   # the graded one, not the late one
        assert "from the ch03_attention submission graded there (submit/2026-10-01T12-00-00Z-alice01" in done.stdout
        carol = next(line for line in done.stdout.splitlines() if line.startswith("carol:"))
        assert "no ch03_attention submission on record: graded on the course's reference" in carol
        assert not (repo / "submitted" / "carol" / "ch03_attention").exists()
        run_step(ch04, "-m autograder grade", repo, env)
        scores = rows(repo / "graded-1" / "grades.csv")
        assert {n: float(r["score"]) for n, r in scores.items()} == {"alice": 100, "carol": 100}
        told = json.loads((repo / "graded-1" / "carol.json").read_text())["output"]
        assert "the course's reference from ch03_attention" in told
        assert "the course's reference" not in json.loads((repo / "graded-1" / "alice.json").read_text())["output"]
        # the other setting: carol is collected without the modules, and the log says so
        none = run_step(ch04, "platforms.collect", repo, {**env, "PREFIX": "llm-2026-ch04-gpt",
                                                          "EARLIER_MISSING": "none"})
        assert "graded without ch03_attention/causal_attention.py" in none.stdout
        # a run id that is not one is refused before anything is fetched
        bad = subprocess.run(["bash", "-eo", "pipefail", "-c", step(ch04, "collect", "gh run download")["run"]], cwd=repo,
                             env={**os.environ, **env, "RUNS": "1001 ../x"}, capture_output=True, text=True)
        assert bad.returncode == 1 and "is not a run id" in bad.stdout
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def template_files(course_out, assignment):
    """{path: text} of the assignment's template repository, as the course generated it."""
    folder = course_out / "classroom50" / assignment / "template"
    return {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_every_assignment_of_a_term_sharded_and_not(course_out, tmp_path):
    """Every assignment of the course in turn, each run of its workflow in one shard and in two: the
    organisation holds each assignment's template repository (CLASSROOM-SLUG-template, as
    assignments.json names it) beside the students'. ada hands in every assignment (its own modules
    only: the earlier ones come from the runs before); bo accepts chapter 3 and pushes nothing (his
    repository holds the template's commit), then hands in the others. Each run ends in one
    grades.csv with no `template` student, the same in one shard and in two; bo's later chapters
    are graded on the course's reference of chapter 3 (earlier_missing), not the template's stubs;
    Canvas's and Moodle's exports take every graded student (exit 0)."""
    from test_unprivileged import copy_repo
    from autograder.platforms import lms
    org = Organisation(tmp_path / "org")
    env = stand_ins(tmp_path, org)
    for i, assignment in enumerate(COURSE):
        at = T0 + timedelta(days=10 * i)
        org.push(org.repo(assignment, "template"), template_files(course_out, assignment), at - timedelta(days=1))
        org.push(org.repo(assignment, "ada"), modules(assignment, SOLUTIONS), at, tag=f"submit/ada-{i}")
        bo = org.repo(assignment, "bo")
        if assignment == "ch03_attention":
            org.push(bo, template_files(course_out, assignment), at)   # accepted: the template's commit, his only
        else:
            org.push(bo, modules(assignment, SOLUTIONS), at, tag=f"submit/bo-{i}")
    people = tmp_path / "people"
    people.mkdir()
    (people / "canvas.csv").write_text("Student,ID,SIS User ID,SIS Login ID,Section,folder\n"
                                       "\"Lovelace, Ada\",101,s1,ada,A,ada\n\"Bo, B\",102,s2,bo,A,bo\n")
    (people / "moodle.csv").write_text("First name,Last name,ID number,Email address,folder\n"
                                       "Ada,Lovelace,1,ada@x.org,ada\nB,Bo,2,bo@x.org,bo\n")
    repo = copy_repo()
    graded = {}
    try:
        for slices in (1, 2):
            run_ids = {}
            for assignment in COURSE:
                flow = workflow(course_out, assignment)
                earlier = course.get(assignment).builds_on
                step_env = {**env, "PREFIX": f"llm-2026-{github.slug(assignment)}"}
                done = run_workflow(flow, repo, step_env, slices,
                                    " ".join(run_ids[e] for e in earlier) if earlier else None)
                assert f"llm-2026-{github.slug(assignment)}-template: the assignment's template repository" in done.stdout
                if "ch03_attention" in earlier:
                    bo_line = next(line for line in done.stdout.splitlines() if line.startswith("bo:"))
                    assert "ch03_attention submission graded there (push to main" in bo_line and \
                        "holds only the template's stubs" in bo_line, bo_line
                out = repo / "graded"
                scores = {n: float(r["score"]) for n, r in rows(out / "grades.csv").items()}
                assert sorted(scores) == ["ada", "bo"], assignment   # no `template`
                assert scores["ada"] == 100 and (scores["bo"] < 50 if assignment == "ch03_attention"
                                                 else scores["bo"] == 100), (assignment, scores)
                for target, roster in (("canvas", "canvas.csv"), ("moodle", "moodle.csv")):
                    exported = tmp_path / f"{assignment}-{slices}-{target}.csv"
                    assert lms.main(out, target, exported, people / roster) == 0, (assignment, target)
                    assert exported.read_text().splitlines()[0].endswith(f",{assignment}")
                graded[slices, assignment] = {name: (out / name).read_bytes()
                                              for name in ("grades.csv", "summary.json", "report.html")}
                run_ids[assignment] = f"{slices}{COURSE.index(assignment):03d}"
                (org.root / "runs" / run_ids[assignment] / "collected").mkdir(parents=True)
                shutil.copy(out / "collected.json", org.root / "runs" / run_ids[assignment] / "collected")
    finally:
        shutil.rmtree(repo, ignore_errors=True)
    for assignment in COURSE:   # two shards merge into what one writes
        assert graded[2, assignment] == graded[1, assignment], assignment
