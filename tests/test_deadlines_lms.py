"""Deadlines and LMS exports, without grading: the late policy on a result, the files it reads, a
class folder graded with each submission's time from a file, and the exports read back by a CSV
reader with the LMS's own columns (a student not graded is empty, never 0)."""
import csv
import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from autograder.grading.result import Check, SubmissionResult
from autograder.paths import ASSIGNMENTS, ROOT, SOLUTIONS
from autograder.platforms import deadlines, lms, report
from autograder.platforms.deadlines import DeadlineError, Deadlines, Policy

DUE = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def result(score=80):
    checks = [Check("self_attention: a", "self_attention", score, 80, "passed" if score == 80 else "failed", ""),
              Check("exercises: b", "exercises", 20, 20, "passed", "")]
    return SubmissionResult.build(checks, ["a note"], "namespaces", 1.0, assignment="ch03_attention")


@pytest.mark.parametrize("policy, late, score", [
    ("none", timedelta(hours=1), 100), ("penalty:10", timedelta(hours=1), 90),
    ("penalty:10", timedelta(days=2, seconds=1), 70), ("penalty:40", timedelta(days=3), 0),
    ("refuse", timedelta(seconds=1), 0), ("refuse", timedelta(0), 100), ("penalty:10", -timedelta(days=3), 100)])
def test_policy_changes_the_score_never_the_checks(policy, late, score):
    found = Deadlines(DUE, Policy.parse(policy), {})
    adjusted = found.adjust(result(), "alice", DUE + late)
    assert adjusted.score == score
    assert adjusted.checks == result().checks and adjusted.parts == result().parts  # what the code earned
    record = dict(adjusted.more)["late"]
    assert (record["earned"], record["penalty"], record["policy"]) == (100, 100 - score, policy)
    assert ("Late: handed in" in adjusted.output) == (late > timedelta(0))
    assert "a note" in adjusted.output
    # written and read back (a resumed class run) and adjusted again: from the earned score, not twice
    again = SubmissionResult.from_json(json.loads(json.dumps(adjusted.to_json())))
    assert found.adjust(again, "alice", DUE + late).to_json() == adjusted.to_json()
    on_time = Deadlines(DUE + late + timedelta(days=9), found.policy, {}).adjust(again, "alice", DUE + late)
    assert on_time.score == 100 and "Late:" not in on_time.output and on_time.output.count("a note") == 1


def test_extensions_and_choice_follow_the_policy():
    handed = [(DUE - timedelta(days=2), "early"), (DUE - timedelta(minutes=1), "on time"),
              (DUE + timedelta(hours=5), "late")]
    assert Deadlines(DUE, Policy.parse("refuse"), {}).choose("a", handed)[1] == "on time"
    assert Deadlines(DUE, Policy.parse("penalty:5"), {}).choose("a", handed)[1] == "late"
    assert Deadlines(DUE, Policy.parse("refuse"), {}).choose("a", handed[2:])[1] == "late"  # nothing came on time
    assert Deadlines(DUE, Policy.parse("refuse"), {}).choose("a", []) is None
    extended = Deadlines(DUE, Policy.parse("refuse"), {"b": DUE + timedelta(days=1)})
    assert extended.due_for("b") == DUE + timedelta(days=1) and extended.due_for("a") == DUE
    assert extended.adjust(result(), "b", DUE + timedelta(hours=5)).score == 100
    assert extended.adjust(result(), "a", DUE + timedelta(hours=5)).score == 0


def test_bad_input_is_refused_with_the_reason(tmp_path):
    for text in ("late", "penalty", "penalty:0", "penalty:150", "refuse:3"):
        with pytest.raises(DeadlineError, match="none, refuse, or penalty:P"):
            Policy.parse(text)
    with pytest.raises(DeadlineError, match="--late penalty:5 needs --due"):
        deadlines.load(None, "penalty:5")
    assert deadlines.load(None, "none") is None
    with pytest.raises(DeadlineError, match="no time zone"):
        deadlines.parse_time("2026-12-01T12:00:00")
    (tmp_path / "t.csv").write_text("folder,time\nalice,2026-12-01T12:00:00Z\nalice,2026-12-01T13:00:00Z\n")
    with pytest.raises(DeadlineError, match="'alice' is named twice"):
        deadlines.read_times(tmp_path / "t.csv")
    (tmp_path / "t.json").write_text('["alice"]')
    with pytest.raises(DeadlineError, match="object of folder name -> time"):
        deadlines.read_times(tmp_path / "t.json")
    (tmp_path / "u.csv").write_text("alice,2026-12-01T12:00:00+01:00\nbob,2026-12-01T12:00:00Z\n")  # no header
    assert deadlines.read_times(tmp_path / "u.csv") == {"alice": DUE - timedelta(hours=1), "bob": DUE}


def grade(*args):
    return subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A plain class folder: on time (solutions), late 2 days (solutions), on time (the blank stubs),
    and one folder with no time in the file; penalty:25 a day."""
    tmp = tmp_path_factory.mktemp("class")
    for name, source in (("ann", SOLUTIONS), ("ben", SOLUTIONS), ("cat", ASSIGNMENTS), ("dan", SOLUTIONS)):
        folder = tmp / "class" / name / "ch03_attention"
        folder.mkdir(parents=True)
        for path in (source / "ch03_attention").glob("*.py"):
            if not path.name.startswith("test_"):
                (folder / path.name).write_text(path.read_text())
    (tmp / "times.json").write_text(json.dumps({"ann": "2026-12-01T11:00:00Z", "ben": "2026-12-03T11:00:00Z",
                                                "cat": "2026-12-01T12:00:00Z"}))
    done = grade(tmp / "class", "--out", tmp / "graded", "--due", "2026-12-01T12:00:00Z", "--late", "penalty:25",
                 "--times", tmp / "times.json", "--unsafe-same-uid", "--no-isolation")
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp


def test_class_folder_graded_with_times_from_a_file(graded):
    with open(graded / "graded" / "grades.csv", newline="") as handle:
        rows = {r["student"]: (r["score"], r["status"]) for r in csv.DictReader(handle)}
    assert {k: (float(v[0]), v[1]) for k, v in rows.items() if v[1] == "graded"} == \
        {"ann": (100, "graded"), "ben": (50, "graded"), "cat": (0, "graded")}
    assert rows["dan"][1] == "not graded: --times gives no hand-in time for this folder"
    assert "2 days after the due date" in (graded / "graded" / "ben.md").read_text()
    # a resumed run with another policy: kept results are adjusted again from what they earned
    done = grade(graded / "class", "--out", graded / "graded", "--due", "2026-12-01T12:00:00Z", "--late", "none",
                 "--times", graded / "times.json", "--unsafe-same-uid", "--no-isolation")
    assert done.returncode == 0, done.stderr
    ben = json.loads((graded / "graded" / "ben.json").read_text())
    late = ben["extra_data"]["late"]
    assert (ben["score"], late["policy"], late["days_late"], late["penalty"]) == (100, "none", 2, 0)
    bad = grade(graded / "class", "--out", graded / "x", "--due", "2026-12-01T12:00:00Z", "--unsafe-same-uid")
    assert bad.returncode == 2 and "--due needs --times" in bad.stderr
    one = grade(graded / "class" / "ann", "--due", "2026-12-01T12:00:00Z", "--times", graded / "times.json")
    assert one.returncode == 2 and "grade a class" in one.stderr


def roster(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def read(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.fixture
def grades_folder(tmp_path):
    """grades.csv as a class run writes it: two graded (one late, penalised), one not graded."""
    late = Deadlines(DUE, Policy.parse("penalty:10"), {}).adjust(result(), "=bob", DUE + timedelta(hours=3))
    rows = [("alice", result(60), "graded"), ("=bob", late, "graded"), ("carol", None, "not graded: no Python files")]
    folder = tmp_path / "graded"
    folder.mkdir()
    (folder / "grades.csv").write_text(report.class_csv(rows, ["ch03_attention"]))
    (folder / "=bob.json").write_text(json.dumps(late.to_json()))
    (folder / "alice.json").write_text(json.dumps(result(60).to_json()))
    return folder


def test_canvas_export_has_canvas_columns_and_leaves_the_ungraded_empty(grades_folder, tmp_path, capsys):
    people = roster(tmp_path / "canvas.csv", [
        dict(zip(lms.CANVAS + ("folder",), row)) for row in (
            ("Lovelace, Ada", "101", "s1", "ada", "A", "alice"), ("Babbage, C", "102", "s2", "cb", "A", "=bob"),
            ("Carol", "103", "s3", "c", "B", "carol"), ("Dee", "104", "s4", "d", "B", "dee"))])
    assert lms.main(grades_folder, "canvas", tmp_path / "out.csv", people, "Attention (55)") == 0
    rows = read(tmp_path / "out.csv")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention (55)"]
    assert rows[1] == ["Points Possible", "", "", "", "", "100"]
    grades = {row[1]: row[5] for row in rows[2:]}
    assert grades == {"101": "80", "102": "90", "103": "", "104": ""}   # bob 3 hours late: 10% off; never 0 for carol
    err = capsys.readouterr().err
    assert "not graded, left empty: carol (not graded: no Python files)" in err
    assert "not graded, left empty: dee (not in grades.csv)" in err


def test_moodle_and_classroom50_exports(grades_folder, tmp_path, capsys):
    people = roster(tmp_path / "moodle.csv", [
        {"First name": "Ada", "Last name": "L", "ID number": "1", "Email address": "ada@x", "folder": "alice"},
        {"First name": "C", "Last name": "B", "ID number": "2", "Email address": "cb@x", "folder": "carol"}])
    assert lms.main(grades_folder, "moodle", tmp_path / "m.csv", people) == 1   # =bob graded, not in the roster
    rows = read(tmp_path / "m.csv")
    assert rows == [["First name", "Last name", "ID number", "Email address", "autograder"],
                    ["Ada", "L", "1", "ada@x", "80"], ["C", "B", "2", "cb@x", ""]]
    assert "graded but not in the roster, not exported: '=bob" in capsys.readouterr().err
    assert lms.main(grades_folder, "classroom50", tmp_path / "s.csv") == 0
    with open(tmp_path / "s.csv", newline="") as handle:
        scores = {r["username"]: r for r in csv.DictReader(handle)}
    assert list(next(iter(scores.values()))) == list(lms.CLASSROOM50)
    assert (scores["alice"]["score"], scores["alice"]["max_score"], scores["alice"]["late"]) == ("80", "100", "")
    assert (scores["'=bob"]["score"], scores["'=bob"]["late"], scores["'=bob"]["datetime"]) == \
        ("90", "true", "2026-12-01T15:00:00Z")   # a name that starts like a formula stays text
    assert (scores["carol"]["score"], scores["carol"]["max_score"]) == ("", "")
    assert lms.main(grades_folder, "canvas", tmp_path / "c.csv") == 2   # Canvas needs the roster's identities
    done = subprocess.run([sys.executable, "-m", "autograder", "export", str(grades_folder), "--to", "moodle",
                           "--roster", str(people), "--out", str(tmp_path / "cli.csv"), "--column", "Attention"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and read(tmp_path / "cli.csv")[0][-1] == "Attention", done.stderr


def test_export_takes_one_assignment_of_several(tmp_path):
    rows = [("alice", result(), "graded", "ch03_attention"), ("alice", None, "not graded: no Python files", "ch04_gpt")]
    (tmp_path / "grades.csv").write_text(report.class_csv(rows, ["ch03_attention", "ch04_gpt"]))
    with pytest.raises(lms.ExportError, match="give --assignment"):
        lms.export(tmp_path, "classroom50")
    not_graded = ["not graded, left empty: alice (not graded: no Python files)"]
    for assignment, score, noted in (("ch03_attention", "100", []), ("ch04_gpt", "", not_graded)):
        text, notes = lms.export(tmp_path, "classroom50", assignment=assignment)
        (row,) = csv.DictReader(text.splitlines())
        assert (row["username"], row["score"], notes) == ("alice", score, noted)
