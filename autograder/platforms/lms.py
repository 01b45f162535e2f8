"""Grades an LMS imports: a class run's results joined with a roster, in the LMS's own columns.

``python -m autograder export graded/ --to canvas|moodle|classroom50 --roster roster.csv --out FILE``

Students are matched by their submission folder's exact name (summary.json keeps it; grades.csv
shows it escaped, so two folders could look alike there). A roster that names one folder twice,
or two folders that grades.csv alone could not tell apart, is refused (exit 2, with the names):
nothing is guessed.

- ``canvas``: Canvas's gradebook import CSV: ``Student, ID, SIS User ID, SIS Login ID, Section``,
  one ``Points Possible`` row and one column for the assignment. The roster is a Canvas gradebook
  export (those columns) with a ``folder`` column added; its own ``Points Possible`` row (and the
  blank-named rows a newer export adds under it) are read as what they are, not as students.
  Canvas applies the Points Possible row to the column, so scores are scaled to the assignment's
  points: ``--points``, else the roster's Points Possible of ``--column``, else the grader's maximum.
- ``moodle``: Moodle's grade import CSV: ``First name, Last name, ID number, Email address`` and
  the grade column; map "Email address" (or "ID number") to the user when importing. Moodle reads
  ``-`` as no grade for a new grade item (a blank cell there is stored as 0), and on an existing
  item a blank or ``-`` clears the grade already there: so a student not graded gets ``-`` for a
  new item and no row at all for an existing one (``--grade-item``; default: existing where the
  roster has the column). Moodle stops the whole import at a row whose user it cannot find, so a
  row with neither an e-mail address nor an ID number is not written (and is listed).
- ``classroom50``: Classroom 50's ``scores.csv`` (``gh teacher download``): ``username, first_name,
  last_name, email, section, score, max_score, datetime, submission_tag, submitted_by, review_url,
  late, override``, one line per submission graded, in roster order, and one blank-score line for a
  student with none; the roster (optional) gives the names, e-mail and section by ``folder``, and
  the collect step's ``collected.json`` (when the class came from GitHub) the tag and commit.

A student who was not graded (no submission, a grader failure, not in the results) is never 0
(an LMS reads 0 as a mark): their grade is empty (Moodle: as said above), and the command lists
them. A student graded but missing from the roster is listed too, and makes the exit code 1.
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
FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what report.csv_cell quotes with a leading '
POINTS_POSSIBLE = "Points Possible"


class ExportError(ValueError):
    pass


def read_csv(path, what) -> list:
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:  # an LMS export may start with a BOM
            return list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ExportError(f"{what} {path}: cannot be read: {exc}") from None


def _number(text):
    try:
        value = float(str(text).strip())
    except ValueError:
        return None
    return value if value == value else None  # not NaN


def _shown(value):
    """A number as a gradebook reads it: 80, 12.5 (two decimals at most)."""
    value = round(float(value), 2)
    return str(int(value)) if value == int(value) else f"{value:g}"


def grades(graded, assignment=None) -> tuple:
    """({student folder's exact name: (score or None, max score, status)}, whether the names are
    exact, the assignment exported or None where unknown): from summary.json where the class run
    wrote one, else from grades.csv (whose student cells are escaped names)."""
    graded = Path(graded)
    try:
        summary = json.loads((graded / "summary.json").read_text(encoding="utf-8"))
        rows = summary["rows"]
    except (OSError, ValueError, KeyError, TypeError):
        return _grades_csv(graded, assignment), False, assignment
    wanted = {r.get("assignment") for r in rows}
    if assignment is None and len(wanted - {None}) > 1:
        raise ExportError(f"{graded} holds several assignments: give --assignment ({', '.join(sorted(wanted - {None}))})")
    found = {}
    for row in rows:
        if assignment is not None and row.get("assignment") not in (assignment, None):
            continue
        name = row.get("folder", row["student"])
        graded_now = str(row.get("status", "")).startswith("graded") and row.get("score") is not None
        entry = (row.get("score") if graded_now else None, row.get("max_score", ""), row.get("status", ""))
        if name in found and found[name][0] is not None and entry[0] is None:
            continue  # one folder, several rows (an unknown assignment's): keep the graded one
        found[name] = entry
    return found, True, assignment or next(iter(wanted - {None}), None)


def _grades_csv(graded, assignment):
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
        found[row["student"]] = (row[f"{prefix}score"] if status.startswith("graded") else None,
                                 row[f"{prefix}max_score"], status)
    return found


def extra(graded, student, assignment=None):
    """The result's extra_data (the late policy's record among it), or {}."""
    folder = Path(graded) / assignment if assignment and (Path(graded) / assignment).is_dir() else Path(graded)
    try:
        return json.loads((folder / f"{result_stem(student)}.json").read_text(encoding="utf-8"))["extra_data"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def collected(graded) -> dict:
    """The collect step's record ({username: {repo, commit, what, org}}), or {}."""
    try:
        record = json.loads((Path(graded) / "collected.json").read_text(encoding="utf-8"))
        return {name: dict(taken, org=record.get("org")) for name, taken in record["students"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _who(person):
    """How a roster row is named in a message: its LMS name and its folder."""
    name = (person.get("Student") or " ".join(filter(None, (person.get("First name"), person.get("Last name"))))
            or person.get("username") or person.get("first_name") or "")
    return f"{name.strip() or 'a row with no name'} (folder {person.get('folder', '')!r})"


def _roster(people, target, exact):
    """(roster rows that are students, {Canvas Points Possible row or None}); refuses ambiguity."""
    students, points_row = [], None
    for person in people:
        student = (person.get("Student") or "").strip()
        if target == "canvas" and student == POINTS_POSSIBLE:
            points_row = person
            continue
        if (target == "canvas" and not student and not (person.get("ID") or "").strip()
                and not (person.get("folder") or "").strip()):
            continue  # a newer Canvas export's second header-like row ("Manual Posting", "(read only)")
        students.append(person)
    named = {}
    for person in students:
        folder = person.get("folder") or ""
        if folder:
            named.setdefault(folder, []).append(person)
    twice = {folder: rows for folder, rows in named.items() if len(rows) > 1}
    if twice:
        raise ExportError("the roster names one folder for several students, so their grades cannot be told apart: "
                          + "; ".join(f"{folder!r}: " + ", ".join(_who(p) for p in rows) for folder, rows in twice.items()))
    if not exact:  # grades.csv alone: its cells are escaped names, and two folders may share one
        cells = {}
        for folder in named:
            cells.setdefault(csv_cell(display_name(folder)), []).append(folder)
        alike = [folders for folders in cells.values() if len(folders) > 1]
        if alike:
            raise ExportError("grades.csv cannot tell these folders apart (it escapes names that start like a formula): "
                              + "; ".join(" and ".join(map(repr, f)) for f in alike)
                              + ": export from a class run's folder with its summary.json")
    return students, points_row


def export(graded, target, roster=None, column=None, assignment=None, points=None, grade_item=None) -> tuple:
    """(CSV text, [lines about students not graded or not exported])."""
    if target not in TARGETS:
        raise ExportError(f"--to {target}: say one of {', '.join(TARGETS)}")
    scores, exact, assignment = grades(graded, assignment)
    people = read_csv(roster, "--roster") if roster else None
    if people is None and target != "classroom50":
        raise ExportError(f"--to {target} needs --roster: a CSV with a folder column and the LMS's own columns "
                          f"({', '.join(CANVAS if target == 'canvas' else MOODLE)})")
    if people and "folder" not in people[0]:
        raise ExportError(f"--roster {roster}: no folder column (each student's submission folder)")
    if people is None:  # Classroom 50 without a roster: the folders the results name
        people = [{"folder": name if exact else name[1:] if name[:1] == "'" and name[1:2] in FORMULA else name}
                  for name in scores]
    header = set(people[0]) if people else set()
    people, points_row = _roster(people, target, exact)
    key = (lambda folder: folder) if exact else (lambda folder: csv_cell(display_name(folder)))
    column = column or assignment or "autograder"
    max_score = next((m for _, m, _ in scores.values() if m not in (None, "")), "")
    out, notes = io.StringIO(), []
    writer = csv.writer(out)
    if target == "canvas":
        if points is None and points_row is not None and column in points_row:
            points = _number(points_row[column])
            if points is None:
                raise ExportError(f"--roster {roster}: the Points Possible of {column!r} is "
                                  f"{points_row[column]!r}: give --points")
        writer.writerow([*CANVAS, column])
        writer.writerow([POINTS_POSSIBLE, "", "", "", "", _shown(points) if points is not None else
                         (_shown(max_score) if _number(max_score) is not None else max_score)])
    elif target == "moodle":
        grade_item = grade_item or ("existing" if column in header else "new")
        writer.writerow([*MOODLE, column])
    else:
        writer.writerow(CLASSROOM50)
    record = collected(graded)
    in_roster = set()
    for person in people:
        folder = person.get("folder") or ""
        in_roster.add(key(folder) if folder else None)
        score, most, status = scores.get(key(folder), (None, max_score, "not graded")) if folder else \
            (None, max_score, "no folder in the roster")
        if folder and key(folder) not in scores:
            status = "no result for this folder"
        if score is not None and points is not None and target == "canvas":
            score = float(score) * points / float(most or max_score)
        if score is None:
            notes.append(f"not graded, left {'empty' if target != 'moodle' else '-' if grade_item == 'new' else 'out'}:"
                         f" {folder or _who(person)} ({status})")
        shown = "" if score is None else _shown(score)
        if target == "canvas":
            writer.writerow([csv_cell(person.get(c, "")) for c in CANVAS] + [shown])
        elif target == "moodle":
            if not any((person.get(c) or "").strip() for c in ("Email address", "ID number")):
                notes.append(f"not exported, Moodle could not find the user (no Email address or ID number; one such "
                             f"row stops Moodle's whole import): {_who(person)}")
                continue
            if score is None and grade_item == "existing":
                continue  # no row: the grade Moodle has stays (a blank or '-' would clear it)
            writer.writerow([csv_cell(person.get(c, "")) for c in MOODLE] + [shown if score is not None else "-"])
        else:
            late = extra(graded, folder, assignment).get("late", {}) if score is not None else {}
            taken = record.get(folder, {}) if score is not None else {}
            tag = taken.get("what", "") if str(taken.get("what", "")).startswith("submit/") else ""
            review = (f"https://github.com/{taken['org']}/{taken['repo']}/commit/{taken['commit']}"
                      if taken.get("org") and taken.get("repo") and taken.get("commit") else "")
            writer.writerow([csv_cell(person.get("username") or folder),
                             *(csv_cell(person.get(c, "")) for c in ("first_name", "last_name", "email", "section")),
                             shown, _shown(most) if score is not None and _number(most) is not None else "",
                             late.get("handed_in", ""), csv_cell(tag), "", csv_cell(review),
                             str(late["days_late"] > 0).lower() if late else "", ""])
    for name in scores:
        if name not in in_roster and scores[name][0] is not None:
            notes.append(f"graded but not in the roster, not exported: {display_name(name) if exact else name}")
    if target == "moodle":
        notes.append(f"moodle: {column!r} read as {'a new' if grade_item == 'new' else 'an existing'} grade item: "
                     + ("a student not graded has '-' (no grade)" if grade_item == "new" else
                        "a student not graded has no row (a grade already there stays)"))
    return out.getvalue(), notes


def main(graded, target, out, roster=None, column=None, assignment=None, points=None, grade_item=None):
    import sys
    try:
        text, notes = export(graded, target, roster, column, assignment, points, grade_item)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    write_atomic(Path(out), text)
    for line in notes:
        print(line, file=sys.stderr)
    print(f"wrote {out} ({target}); {sum(n.startswith('not graded') for n in notes)} students not graded (never 0)")
    return 1 if any("not in the roster" in n or n.startswith("not exported") for n in notes) else 0
