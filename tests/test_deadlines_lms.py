"""Deadlines and LMS exports, without grading: the late policy on a result, the files it reads, a
class folder graded with each submission's time from a file, and the exports read back by a CSV
reader with the LMS's own columns (a student not graded is empty, never 0)."""
import csv
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from autograder.grading.result import Check, SubmissionResult
from autograder.paths import ASSIGNMENTS, ROOT, SOLUTIONS
from autograder.platforms import deadlines, lms, report, shards
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
    assert "not graded, left empty: dee (no result for this folder)" in err


def test_moodle_and_classroom50_exports(grades_folder, tmp_path, capsys):
    people = roster(tmp_path / "moodle.csv", [
        {"First name": "Ada", "Last name": "L", "ID number": "1", "Email address": "ada@x", "folder": "alice"},
        {"First name": "C", "Last name": "B", "ID number": "2", "Email address": "cb@x", "folder": "carol"}])
    assert lms.main(grades_folder, "moodle", tmp_path / "m.csv", people) == 1   # =bob graded, not in the roster
    rows = read(tmp_path / "m.csv")
    assert rows == [["First name", "Last name", "ID number", "Email address", "autograder"],
                    ["Ada", "L", "1", "ada@x", "80"], ["C", "B", "2", "cb@x", "-"]]   # a new item: '-', no grade
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


def test_export_names_its_column_after_the_assignment_graded(tmp_path):
    """Without --column the grade column is the assignment's, as --help says: read from summary.json."""
    graded = class_folder(tmp_path / "graded", [("alice", result(), "graded")])
    people = roster(tmp_path / "moodle.csv", [
        {"First name": "Ada", "Last name": "L", "ID number": "1", "Email address": "ada@x", "folder": "alice"}])
    assert lms.main(graded, "moodle", tmp_path / "m.csv", people) == 0
    assert read(tmp_path / "m.csv")[0] == ["First name", "Last name", "ID number", "Email address", "ch03_attention"]


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


def class_folder(folder, entries):
    """A class run's output folder as `grade` writes it (grades.csv, summary.json, each result):
    entries (folder name, result or None, status)."""
    from pathlib import Path
    from autograder.platforms import ci
    from autograder.platforms.files import result_stem
    folder.mkdir(parents=True, exist_ok=True)
    for name, result_, _ in entries:
        if result_ is not None:
            (folder / f"{result_stem(name)}.json").write_text(json.dumps(result_.to_json()))
    (folder / "grades.csv").write_text(report.class_csv([(display_name(n), r, s) for n, r, s in entries],
                                                        ["ch03_attention"]))
    ci.class_report(folder, [(n, "ch03_attention", r, s, Path(result_stem(n))) for n, r, s in entries], "class")
    return folder


def display_name(name):
    from autograder.platforms.files import display_name as shown
    return shown(name)


CANVAS_EXPORT = ("Student,ID,SIS User ID,SIS Login ID,Section,Attention (55),Other (56),Current Points,folder\n"
                 "    Points Possible,,,,,25.00,10.00,(read only),\n"
                 ",,,,,Manual Posting,,,\n"
                 "\"Lovelace, Ada\",101,s1,ada,A,,,,alice\n"
                 "\"Babbage, C\",102,s2,cb,A,12,,,=bob\n"
                 "Carol,103,s3,c,B,,,,carol\n"
                 "\"Student, Test\",104,,,A,,,,\n")


def test_canvas_export_of_a_canvas_roster_scales_to_the_columns_points(grades_folder, tmp_path, capsys):
    """Canvas's own gradebook export as the roster: its Points Possible row (and the blank row a
    newer export adds) are not students, the output has one Points Possible row, the column's
    points are kept (25: 80 of 100 is 20), and the test student without a folder is said so."""
    (tmp_path / "canvas.csv").write_text(CANVAS_EXPORT)
    assert lms.main(grades_folder, "canvas", tmp_path / "out.csv", tmp_path / "canvas.csv", "Attention (55)") == 0
    rows = read(tmp_path / "out.csv")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention (55)"]
    assert rows[1] == ["Points Possible", "", "", "", "", "25"] and sum(r[0] == "Points Possible" for r in rows) == 1
    assert {row[1]: row[5] for row in rows[2:]} == {"101": "20", "102": "22.5", "103": "", "104": ""}
    err = capsys.readouterr().err
    assert "Points Possible" not in err and "Manual Posting" not in err
    assert "not graded, left empty: carol" in err and "Student, Test (folder '') (no folder in the roster)" in err
    # --points wins; a new column (not in the roster) keeps the grader's points
    assert lms.main(grades_folder, "canvas", tmp_path / "p.csv", tmp_path / "canvas.csv", "Attention (55)", points=10) == 0
    assert read(tmp_path / "p.csv")[1][5] == "10" and read(tmp_path / "p.csv")[2][5] == "8"
    assert lms.main(grades_folder, "canvas", tmp_path / "n.csv", tmp_path / "canvas.csv", "New one") == 0
    assert read(tmp_path / "n.csv")[1][5] == "100" and read(tmp_path / "n.csv")[2][5] == "80"


def test_moodle_export_writes_what_moodle_reads_as_no_grade(grades_folder, tmp_path, capsys):
    """A new grade item: '-' (a blank would be stored as 0). An existing one (the roster, Moodle's
    own export, has the column): no row, so the grade there stays (blank and '-' clear it). A row
    Moodle could not find the user of (no e-mail, no ID number) is never written: it stops the import."""
    people = [{"First name": "Ada", "Last name": "L", "ID number": "1", "Email address": "ada@x", "folder": "alice"},
              {"First name": "C", "Last name": "B", "ID number": "2", "Email address": "cb@x", "folder": "carol"},
              {"First name": "B", "Last name": "B", "ID number": "", "Email address": "", "folder": "=bob"}]
    roster(tmp_path / "m.csv", people)
    assert lms.main(grades_folder, "moodle", tmp_path / "new.csv", tmp_path / "m.csv", "Attention") == 1
    assert read(tmp_path / "new.csv") == [["First name", "Last name", "ID number", "Email address", "Attention"],
                                          ["Ada", "L", "1", "ada@x", "80"], ["C", "B", "2", "cb@x", "-"]]
    err = capsys.readouterr().err
    assert "not exported, Moodle could not find the user" in err and "B B (folder '=bob')" in err
    assert "'Attention' read as a new grade item: a student not graded has '-'" in err
    roster(tmp_path / "e.csv", [dict(p, **{"Attention": "7"}) for p in people[:2]])
    assert lms.main(grades_folder, "moodle", tmp_path / "old.csv", tmp_path / "e.csv", "Attention") == 1
    assert read(tmp_path / "old.csv")[1:] == [["Ada", "L", "1", "ada@x", "80"]]   # carol's grade in Moodle stays
    assert "an existing grade item: a student not graded has no row" in capsys.readouterr().err
    assert lms.main(grades_folder, "moodle", tmp_path / "f.csv", tmp_path / "e.csv", "Attention", grade_item="new") == 1
    assert read(tmp_path / "f.csv")[-1][-1] == "-"


def test_exports_refuse_what_they_cannot_tell_apart(tmp_path, capsys):
    """Folders matched by their exact names (summary.json): '=bob' and "'=bob" are two students,
    a folder with a backslash is found; a roster naming one folder twice, or two folders that
    grades.csv alone shows alike, is refused with exit 2 and the names."""
    graded = class_folder(tmp_path / "graded", [("=bob", result(60), "graded"), ("'=bob", result(20), "graded"),
                                                ("a\\b", result(), "graded"), ("dee", None, "not graded: no files")])
    people = [{"Student": "Bob One", "ID": "1", "folder": "=bob"}, {"Student": "Bob Two", "ID": "2", "folder": "'=bob"},
              {"Student": "Back Slash", "ID": "3", "folder": "a\\b"}, {"Student": "Dee", "ID": "4", "folder": "dee"}]
    roster(tmp_path / "r.csv", people)
    assert lms.main(graded, "canvas", tmp_path / "c.csv", tmp_path / "r.csv", "A") == 0
    assert {row[1]: row[5] for row in read(tmp_path / "c.csv")[2:]} == {"1": "80", "2": "40", "3": "100", "4": ""}
    err = capsys.readouterr().err
    assert "not in the roster" not in err and err.count("left empty") == 1 and "left empty: dee" in err
    roster(tmp_path / "twice.csv", people + [{"Student": "Impostor", "ID": "9", "folder": "dee"}])
    assert lms.main(graded, "canvas", tmp_path / "x.csv", tmp_path / "twice.csv", "A") == 2
    err = capsys.readouterr().err
    assert "names one folder for several students" in err and "Dee (folder 'dee')" in err and "Impostor" in err
    (graded / "summary.json").unlink()   # grades.csv alone shows both as '=bob
    assert lms.main(graded, "canvas", tmp_path / "y.csv", tmp_path / "r.csv", "A") == 2
    assert "cannot tell these folders apart" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "y.csv").exists()


def test_classroom50_export_is_its_scores_csv(tmp_path):
    """One line per submission graded, with its tag and commit from the collect step's record, in
    roster order; one blank-score line for a student with none."""
    graded = class_folder(tmp_path / "graded", [("alice", result(), "graded"), ("bob", None, "not graded: no files")])
    (graded / "collected.json").write_text(json.dumps({"assignment": "ch03_attention", "org": "acme", "prefix": "p",
                                                       "students": {"alice": {"repo": "p-alice", "commit": "c" * 40,
                                                                              "what": "submit/x", "handed_in": "t"}}}))
    text, notes = lms.export(graded, "classroom50")
    rows = list(csv.DictReader(text.splitlines()))
    assert [(r["username"], r["score"], r["max_score"], r["submission_tag"]) for r in rows] == \
        [("alice", "100", "100", "submit/x"), ("bob", "", "", "")]
    assert rows[0]["review_url"] == f"https://github.com/acme/p-alice/commit/{'c' * 40}"
    assert notes == ["not graded, left empty: bob (not graded: no files)"]


@pytest.mark.parametrize("environ, shard", [
    ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "8",
      "SLURM_ARRAY_TASK_COUNT": "8"}, (3, 8)),
    ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "3",
      "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_STEP": "1"}, (1, 4)),
    ({"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "9",
      "SLURM_ARRAY_TASK_COUNT": "5", "SLURM_ARRAY_TASK_STEP": "2"}, "every index"),
    ({}, "SLURM_ARRAY_TASK_ID is not set")])
def test_shard_from_a_slurm_array(environ, shard, monkeypatch):
    from autograder.cli import build_parser
    for key in [k for k in os.environ if k.startswith("SLURM_")]:
        monkeypatch.delenv(key)
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    if isinstance(shard, tuple):
        assert build_parser().parse_args(["grade", "x", "--shard", "slurm"]).shard == shard
    else:
        with pytest.raises(ValueError, match=shard):
            shards.from_array("slurm", environ)


def test_shard_from_a_kubernetes_indexed_job(monkeypatch):
    from autograder.platforms import collect
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "0")
    assert shards.parse("kubernetes/4") == (1, 4)
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "3")
    assert shards.parse("kubernetes/4") == (4, 4)
    for text, why in (("kubernetes/3", "not below the 3 completions"), ("kubernetes", "say kubernetes/N"),
                      ("lsf", "not K/N")):
        with pytest.raises(Exception, match=why):
            shards.parse(text)
    monkeypatch.delenv("JOB_COMPLETION_INDEX")
    with pytest.raises(Exception, match="JOB_COMPLETION_INDEX is not set"):
        shards.parse("kubernetes/4")
    assert collect.main.__module__   # collect --shard takes the same forms (shards.parse)


def test_every_shard_of_a_mixed_class_has_the_class_layout(tmp_path):
    """A class handing in two assignments: a shard whose students hand in one of them is laid out
    as the class is (a folder per assignment), not flat, and the shards merge."""
    names = {}
    for i in range(200):   # a student of each assignment in each of the two shards
        name = f"s{i}"
        k = 1 if shards.in_shard(name, 1, 2) else 2
        if (k, "a") not in names:
            names[k, "a"] = name
        elif (k, "b") not in names and k == 2:
            names[k, "b"] = name
        if len(names) == 3:
            break
    plan = {names[1, "a"]: "ch03_attention", names[2, "a"]: "ch03_attention", names[2, "b"]: "ch02_text_data"}
    for name, assignment in plan.items():
        folder = tmp_path / "class" / name / assignment
        folder.mkdir(parents=True)
        for path in (ASSIGNMENTS / assignment).glob("*.py"):
            if not path.name.startswith("test_"):
                (folder / path.name).write_text(path.read_text())
    for k in (1, 2):
        done = grade(tmp_path / "class", "--shard", f"{k}/2", "--out", tmp_path / f"graded-{k}", "--unsafe-same-uid",
                     "--no-isolation")
        assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "graded-1" / "ch03_attention" / f"{names[1, 'a']}.json").is_file()   # one assignment here, nested
    assert not (tmp_path / "graded-1" / f"{names[1, 'a']}.json").exists()
    assert (tmp_path / "graded-2" / "ch02_text_data" / f"{names[2, 'b']}.json").is_file()
    merged = subprocess.run([sys.executable, "-m", "autograder", "merge", tmp_path / "graded-1", tmp_path / "graded-2",
                             "--out", tmp_path / "graded"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert merged.returncode == 0, merged.stdout + merged.stderr
