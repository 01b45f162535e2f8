"""A course as an instructor and six students run it, with nbgrader's own exchange.

Everything happens in a temporary folder (its own HOME, exchange and course), through the
commands the README gives: the instructor releases with ``python -m autograder release
--course`` (with the interpreter's folder off PATH), adds students and releases the
assignment; the students fetch it, work, validate and submit; the instructor collects,
autogrades, generates and releases feedback and exports; the students fetch their feedback.

The students: alice (the reference), bob (no 1/sqrt(d_k) in CausalAttention), carol (the
blank stubs), dave (the reference, notebook renamed ch03_attention-Copy1.ipynb), erin (the
reference without exercises.py), frank (the reference, no notebook at all).
"""
import csv
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from autograder.grading import course as the_course
from autograder.platforms import nbgrade
from autograder.paths import SOLUTIONS
from autograder.authoring.release import CONFIG, CONFIG_BEGIN, CONFIG_END, kernel_path
from test_nbgrader_autograde import make_buggy

ROOT = Path(__file__).resolve().parent.parent

ASSIGNMENT = "ch03_attention"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
COURSE_ID = "attention"
PARTS = the_course.get(ASSIGNMENT).parts
STUDENTS = ("alice", "bob", "carol", "dave", "erin", "frank")
INSTRUCTOR_SETTINGS = "# the instructor's own settings\nc.CourseDirectory.course_id = {course!r}\nc.Exchange.root = {root!r}\n"


class Site:
    """The temporary machine: where everyone lives, and how they run commands there."""

    def __init__(self, base):
        self.base = base
        self.exchange = base / "exchange"
        self.course = base / "course"
        self.exchange.mkdir()
        self.env = dict(os.environ, JUPYTER_PATH=kernel_path(base), PYTHONPATH="")
        self.env.pop("NBGRADER_EXECUTION", None)
        self.seconds = []  # (seconds, who, command): where the module's time goes (pytest -s)

    def home(self, who):
        home = self.base / "home" / who
        home.mkdir(parents=True, exist_ok=True)
        return home

    def run(self, who, cwd, *args, check=True, path=None):
        env = dict(self.env, HOME=str(self.home(who)))
        if path is not None:
            env["PATH"] = path
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True)
        self.seconds.append((time.perf_counter() - started, who, args[2:4]))
        if check:
            assert proc.returncode == 0, f"{args}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        return proc

    @staticmethod
    def together(work, items):
        """``work(item)`` for every item at once (one student's commands do not wait for another's)."""
        with ThreadPoolExecutor(max_workers=len(items)) as pool:
            return list(pool.map(work, items))

    def nbgrader(self, who, cwd, *args, **kwargs):
        return self.run(who, cwd, "-m", "nbgrader", *args, **kwargs)

    def student(self, name, *args, **kwargs):
        folder = self.home(name)
        return self.nbgrader(name, folder, *args, "--course", COURSE_ID, f"--Exchange.root={self.exchange}",
                             **kwargs)


def do_the_work(student, folder):
    """What each student hands in: ``folder`` is the fetched assignment."""
    if student != "carol":
        for name in the_course.get(ASSIGNMENT).modules:
            shutil.copy(SOLUTIONS / ASSIGNMENT / name, folder / name)
    if student == "bob":
        make_buggy(folder)
    elif student == "dave":
        (folder / NOTEBOOK).rename(folder / f"{ASSIGNMENT}-Copy1.ipynb")
    elif student == "erin":
        (folder / "exercises.py").unlink()
    elif student == "frank":
        (folder / NOTEBOOK).unlink()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    site = Site(tmp_path_factory.mktemp("site"))
    course = site.course
    # The instructor's course folder, with settings of theirs, before the first release.
    course.mkdir()
    settings = INSTRUCTOR_SETTINGS.format(course=COURSE_ID, root=str(site.exchange))
    (course / "nbgrader_config.py").write_text(settings)
    # An instructor who did not activate the environment: nbgrader must still find alembic.
    release = site.run("instructor", ROOT, "-m", "autograder", "release", ASSIGNMENT,
                       "--out", str(site.base / "release"), "--course", str(course), path="/usr/bin:/bin")
    site.settings, site.release_output = settings, release.stdout
    for student in ("alice", "bob", "carol"):
        site.nbgrader("instructor", course, "db", "student", "add", student, f"--first-name={student.title()}")
    site.nbgrader("instructor", course, "release_assignment", ASSIGNMENT)

    def hand_in(student):
        site.student(student, "fetch_assignment", ASSIGNMENT)
        do_the_work(student, site.home(student) / ASSIGNMENT)
        site.student(student, "submit", ASSIGNMENT, "--student", student)

    site.together(hand_in, STUDENTS)
    site.nbgrader("instructor", course, "collect", ASSIGNMENT)
    site.autograde = site.nbgrader("instructor", course, "autograde", ASSIGNMENT, check=False)
    site.nbgrader("instructor", course, "generate_feedback", ASSIGNMENT)
    site.nbgrader("instructor", course, "release_feedback", ASSIGNMENT)
    site.together(lambda student: site.student(student, "fetch_feedback", ASSIGNMENT, "--student", student),
                  STUDENTS)
    site.nbgrader("instructor", course, "export")
    yield site
    print("\n".join(f"{seconds:6.1f} s  {who}: {' '.join(command)}" for seconds, who, command in site.seconds))


def gradebook(site, student):
    """{part: (score, max_score)} and the total, as nbgrader's gradebook holds them."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{site.course / 'gradebook.db'}") as gb:
        submission = gb.find_submission(ASSIGNMENT, student)
        parts = {nbgrade.part_of(grade.name): (grade.score, grade.max_score)
                 for notebook in submission.notebooks for grade in notebook.grades}
        return parts, submission.score


def feedback(site, student):
    """The feedback the student fetched. frank submitted no notebook, and nbgrader finds
    feedback by the submitted notebook's name: his stays in the course's feedback/."""
    if student == "frank":
        return (site.course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    found = list((site.home(student) / ASSIGNMENT / "feedback").rglob("*.html"))
    assert len(found) == 1, found
    return found[0].read_text()


def test_release_keeps_the_instructors_settings_and_finds_alembic(site):
    text = (site.course / "nbgrader_config.py").read_text()
    assert text.startswith(CONFIG_BEGIN) and text.count(CONFIG_END) == 1
    assert text.endswith(site.settings), text
    assert (site.course / "gradebook.db").is_file()
    assert "nbgrader course kept in" in site.release_output


def test_autograde_grades_every_submission(site):
    assert site.autograde.returncode == 0, site.autograde.stderr[-3000:]
    # Untouched grade cells are not reported as changed (nbgrader's checksum warning).
    assert "has changed" not in site.autograde.stderr
    for student in STUDENTS:
        assert (site.course / "autograded" / student / ASSIGNMENT / NOTEBOOK).is_file(), student


@pytest.mark.parametrize("student", STUDENTS)
def test_gradebook_agrees_with_the_cli_per_part(site, grader, student):
    parts, total = gradebook(site, student)
    cli = grader.grade(site.course / "submitted" / student / ASSIGNMENT)
    assert parts == {part: tuple(points) for part, points in cli["extra_data"]["parts"].items()}
    assert total == cli["score"]


def test_the_class_is_told_apart(site):
    totals = {student: gradebook(site, student)[1] for student in STUDENTS}
    assert totals["alice"] == totals["dave"] == totals["frank"] == 100  # renamed or missing notebook: no zero
    assert totals["carol"] == 0
    bob, _ = gradebook(site, "bob")
    assert bob["causal_attention"][0] < 25 and bob["simple_attention"] == (15, 15) and bob["self_attention"] == (20, 20)
    erin, _ = gradebook(site, "erin")
    assert erin["exercises"] == (0, 15) and totals["erin"] == 85


def test_feedback_shows_no_path_and_no_hidden_line(site):
    for student in STUDENTS:
        html = feedback(site, student)
        for secret in (str(site.base), str(ROOT), "BEGIN HIDDEN", "part_score", "autograder.nbgrade"):
            assert secret not in html, (student, secret)
    # carol's cells raised NotImplementedError from her modules: the traceback names the file only.
    assert "simple_attention.py" in feedback(site, "carol")


def test_feedback_names_the_mistake_and_the_missing_module(site):
    html = feedback(site, "bob")
    assert "no 1/sqrt(d_k) scaling of the scores" in html
    assert f"causal_attention: {gradebook(site, 'bob')[0]['causal_attention'][0]:g} / 25 points" in html
    erin = feedback(site, "erin")
    exercises = erin[erin.index("exercises: 0 / 15 points"):]
    assert exercises.count("[FAIL]") == 1 and "exercises" in exercises.split("[FAIL]")[1].split("\n")[0]


def test_renamed_or_missing_notebook_gets_a_note(site):
    assert f"your `{ASSIGNMENT}-Copy1.ipynb` was graded in its place" in feedback(site, "dave").replace(
        "<code>", "`").replace("</code>", "`")
    assert "blank copy of the released notebook" in feedback(site, "frank")
    assert "graded in its place" not in feedback(site, "alice")


def test_export_has_the_points_per_part(site):
    with (site.course / "grades.csv").open(newline="") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == set(STUDENTS)
    for student in STUDENTS:
        parts, total = gradebook(site, student)
        assert float(rows[student]["raw_score"]) == total
        assert {part: float(rows[student][part]) for part in PARTS} == {p: parts[p][0] for p in PARTS}


def validate(site, folder):
    return site.nbgrader("validator", folder, "validate", NOTEBOOK, check=False).stdout


@pytest.fixture(scope="module")
def verdicts(site):
    """What `nbgrader validate` says to alice, bob and carol before they submit, and to a
    student whose notebook has no modules beside it."""
    alone = site.base / "notebook_alone"
    alone.mkdir()
    released = site.base / "release"
    shutil.copy(released / NOTEBOOK, alone / NOTEBOOK)
    for test in released.glob("test_*.py"):
        shutil.copy(test, alone / test.name)
    folders = {student: site.home(student) / ASSIGNMENT for student in ("alice", "bob", "carol")} | {"alone": alone}
    return dict(zip(folders, site.together(lambda folder: validate(site, folder), list(folders.values()))))


def test_validate_passes_the_reference(verdicts):
    assert "Success! Your notebook passes all the tests." in verdicts["alice"]


def test_validate_fails_a_buggy_part_and_only_that_part(verdicts):
    text = verdicts["bob"]
    assert "VALIDATION FAILED" in text and "Success!" not in text
    assert "public tests of causal_attention that do not pass" in text
    assert "FAILED test_causal_attention_seed_123" in text
    # Multi-head attention is built from CausalAttention: its public tests may fail too.
    for part in ("simple_attention", "self_attention"):
        assert f"public tests of {part} that do not pass" not in text, part


def test_validate_fails_the_blank_stubs_in_every_part(verdicts):
    text = verdicts["carol"]
    assert "Success!" not in text
    for part in PARTS:
        assert f"public tests of {part} that do not pass" in text, part
    assert "not written yet: " in text  # each test's one line (public_tests.py)


def test_validate_fails_a_notebook_without_its_modules(verdicts):
    text = verdicts["alone"]
    assert "Success!" not in text
    assert "notebook_tests.py is not beside this notebook" in text  # in every check cell


def test_a_config_that_cannot_load_the_plugin_stops_nbgrader(site, tmp_path):
    """A moved repository: nbgrader stops before it copies or grades anything."""
    course = tmp_path / "course"
    shutil.copytree(site.course / "submitted", course / "submitted")
    (course / "nbgrader_config.py").write_text(
        CONFIG.format(begin=CONFIG_BEGIN, end=CONFIG_END, root=str(tmp_path / "moved"), assignment=ASSIGNMENT))
    proc = site.nbgrader("instructor", course, "autograde", ASSIGNMENT, check=False)
    assert proc.returncode != 0
    assert f"cannot load the autograder from {tmp_path / 'moved'}" in proc.stderr + proc.stdout
    assert not (course / "autograded").exists() and not (course / "gradebook.db").exists()
