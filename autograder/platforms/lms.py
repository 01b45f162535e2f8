"""Grades an LMS imports: a class run's grades.csv joined with a roster, in the LMS's own columns.

``python -m autograder export graded/ --to canvas|moodle|classroom50 --roster roster.csv --out FILE``

- ``canvas``: Canvas's gradebook import CSV: ``Student, ID, SIS User ID, SIS Login ID, Section``
  and one column for the assignment, after a ``Points Possible`` row. The roster is a Canvas
  gradebook export (those columns) with a ``folder`` column added: each student's submission
  folder (their GitHub username in a GitHub run).
- ``moodle``: Moodle's grade import CSV: ``First name, Last name, ID number, Email address`` and
  the grade column; map "Email address" (or "ID number") to the user when importing.
- ``classroom50``: the columns of Classroom 50's ``scores.csv`` (``gh teacher download``):
  ``username, first_name, last_name, email, section, score, max_score, datetime, submission_tag,
  submitted_by, review_url, late, override``; the roster (optional) gives the names, e-mail and
  section by ``folder``.

A student who was not graded (no submission, a grader failure, not in grades.csv) has an EMPTY
grade, never 0 (an LMS reads 0 as a mark, and empty as nothing to import), and the command
lists them. A student graded but missing from the roster is listed too, and makes the exit code 1.
"""
import csv
import io
import json
from pathlib import Path

from .files import display_name, result_stem, write_atomic
from .report import csv_cell

CANVAS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE = ("First name", "Last name", "ID number", "Email address")
CLASSROOM50 = ("username", "first_name", "last_name", "email", "section", "score", "max_score", "datetime",
               "submission_tag", "submitted_by", "review_url", "late", "override")
TARGETS = ("canvas", "moodle", "classroom50")
FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what report.csv_cell quotes with a leading '"


class ExportError(ValueError):
    pass


def read_csv(path, what):
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:  # an LMS export may start with a BOM
            return list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ExportError(f"{what} {path}: cannot be read: {exc}") from None


def grades(graded, assignment=None):
    """{student cell of grades.csv: (score or None, max score, status, the result's extra_data or {})}."""
    rows = read_csv(Path(graded) / "grades.csv", "grades.csv in")
    if not rows:
        return {}
    prefix = f"{assignment}:" if assignment else ""
    if f"{prefix}score" not in rows[0]:
        groups = sorted({key.split(":")[0] for key in rows[0] if ":" in key})
        raise ExportError(f"{graded}/grades.csv has {'no column ' + prefix + 'score' if prefix else 'several'} "
                          f"assignments: give --assignment ({', '.join(groups) or 'none found'})")
    found = {}
    for row in rows:
        status = row[f"{prefix}status"]
        graded_now = status.startswith("graded")
        found[row["student"]] = (row[f"{prefix}score"] if graded_now else None, row[f"{prefix}max_score"], status)
    return found


def extra(graded, student, assignment=None):
    """The result's extra_data (the late policy's record among it), or {}."""
    folder = Path(graded) / assignment if assignment and (Path(graded) / assignment).is_dir() else Path(graded)
    try:
        return json.loads((folder / f"{result_stem(student)}.json").read_text(encoding="utf-8"))["extra_data"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def export(graded, target, roster=None, column=None, assignment=None):
    """(CSV text, [lines about students not graded or not exported])."""
    if target not in TARGETS:
        raise ExportError(f"--to {target}: say one of {', '.join(TARGETS)}")
    scores = grades(graded, assignment)
    people = read_csv(roster, "--roster") if roster else None
    if people is None and target != "classroom50":
        raise ExportError(f"--to {target} needs --roster: a CSV with a folder column and the LMS's own columns "
                          f"({', '.join(CANVAS if target == 'canvas' else MOODLE)})")
    if people is not None and people and "folder" not in people[0]:
        raise ExportError(f"--roster {roster}: no folder column (each student's submission folder)")
    if people is None:  # Classroom 50 without a roster: the folders grades.csv names
        people = [{"folder": name[1:] if name[:1] == "'" and name[1:2] in FORMULA else name} for name in scores]
    cell = {csv_cell(display_name(p["folder"])): p for p in people}  # grades.csv writes names this way
    column = column or assignment or "autograder"
    max_score = next((m for _, m, _ in scores.values() if m), "")
    out, notes = io.StringIO(), []
    writer = csv.writer(out)
    if target == "canvas":
        writer.writerow([*CANVAS, column])
        writer.writerow(["Points Possible", "", "", "", "", max_score])
    elif target == "moodle":
        writer.writerow([*MOODLE, column])
    else:
        writer.writerow(CLASSROOM50)
    for key, person in cell.items():
        score, most, status = scores.get(key, (None, max_score, "not in grades.csv"))
        if score is None:
            notes.append(f"not graded, left empty: {person['folder']} ({status})")
        if target == "canvas":
            writer.writerow([csv_cell(person.get(c, "")) for c in CANVAS] + [score or ""])
        elif target == "moodle":
            writer.writerow([csv_cell(person.get(c, "")) for c in MOODLE] + [score or ""])
        else:
            late = extra(graded, person["folder"], assignment).get("late", {}) if score is not None else {}
            writer.writerow([csv_cell(person.get("username") or person["folder"]),
                             *(csv_cell(person.get(c, "")) for c in ("first_name", "last_name", "email", "section")),
                             score or "", most if score is not None else "", late.get("handed_in", ""), "", "",
                             "", str(late["days_late"] > 0).lower() if late else "", ""])
    for key in scores:
        if key not in cell:
            notes.append(f"graded but not in the roster, not exported: {key}")
    return out.getvalue(), notes


def main(graded, target, out, roster=None, column=None, assignment=None):
    import sys
    try:
        text, notes = export(graded, target, roster, column, assignment)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    write_atomic(Path(out), text)
    for line in notes:
        print(line, file=sys.stderr)
    print(f"wrote {out} ({target}); {sum('left empty' in n for n in notes)} students not graded (empty)")
    return 1 if any("not in the roster" in n for n in notes) else 0
