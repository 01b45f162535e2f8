"""The notebook side of grading: one grade cell per part, scored by the hidden suites.

Each autograded cell of a chapter notebook ends with a hidden region such as::

    ### BEGIN HIDDEN TESTS
    from autograder.nbgrade import part_score
    part_score("causal_attention")
    ### END HIDDEN TESTS

``part_score`` grades the notebook's folder with the same hidden suites as
``python -m autograder grade`` (once per kernel, in a fresh grader process, because
the kernel has already imported the student's modules under the reference's names),
prints the part's checks and returns its points, which nbgrader reads as partial credit.

Under ``nbgrader autograde`` the kernel is not trusted: student code runs in it and can
patch anything there. So in that mode the kernel does not grade at all; the trusted
nbgrader process grades the submitted files before the kernel starts and overwrites the
outputs of every grade cell (see ``autograder.platforms.nbgrader_plugin``). If that plugin is not
configured, the cells score 0: the kernel never awards points on its own during autograde.
"""
import json
import os
import subprocess
import sys

from ..grading.result import SubmissionResult
from ..paths import ROOT

GRADE_ID_PREFIX = "grade_"
_cache = {}


def grade_id(part):
    """nbgrader grade_id of the autograded cell of ``part`` (a module name)."""
    return GRADE_ID_PREFIX + part


def part_of(grade_id_):
    """The part a grade cell scores, or None for a cell that is not one of ours."""
    if isinstance(grade_id_, str) and grade_id_.startswith(GRADE_ID_PREFIX):
        return grade_id_[len(GRADE_ID_PREFIX):] or None
    return None


def part_points(result, part):
    """(score, max_score) of ``part`` in a SubmissionResult; (0, 0) when no check scores it."""
    found = result.part(part)
    return (found.score, found.max_score) if found else (0, 0)


def part_feedback(result, part, points=None) -> str:
    """Plain-text feedback for one part: a header, then one line per check."""
    score, most = part_points(result, part)
    if points is not None and most != points:
        most_text = f"{most} (cell worth {points})"
    else:
        most_text = str(most)
    lines = [f"{part}: {score} / {most_text} points"]
    checks = result.checks_of(part)
    if not checks:
        lines.append("  no hidden check scores this part")
    outputs = [c.output or "" for c in checks]
    shortest = min(outputs, key=len, default="")
    if len(checks) > 1 and shortest and all(not c.passed and o.startswith(shortest)
                                            for c, o in zip(checks, outputs)):
        # One cause for every check (a missing module, a failed import): say it once.
        lines.append(f"  [FAIL] all {len(checks)} checks: {shortest}")
        checks = []
    for check in checks:
        mark = "PASS" if check.passed else "FAIL"
        name = check.name.split(": ", 1)[-1]
        lines.append(f"  [{mark}] {name} ({check.score}/{check.max_score})")
        if check.output:
            lines.append(f"         {check.output}")
    if result.output:
        lines.append(result.output)
    return "\n".join(lines)


def grade_in_subprocess(folder, assignment=None, timeout=600):
    """Grade ``folder`` with the hidden suites in a fresh interpreter; returns its SubmissionResult.
    ``assignment``: as Grader's (default: the one the folder holds)."""
    code = ("import json, sys; from autograder.platforms.nbgrade import _grade_folder; "
            "print(json.dumps(_grade_folder(sys.argv[1], sys.argv[2])))")
    proc = subprocess.run([sys.executable, "-c", code, os.path.abspath(folder), assignment or ""],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"grading {folder} failed:\n{proc.stderr[-2000:]}")
    return SubmissionResult.from_json(json.loads(proc.stdout.strip().splitlines()[-1]))


def _grade_folder(folder, assignment):
    from ..grading.engine import Options, start_grader

    # Outside autograde (see part_score) the kernel asking has already run these modules as this
    # user: a child with the same uid exposes nothing more.
    with start_grader(Options(assignment or None, same_uid=True, ahead=False)) as grader:
        return grader.grade(folder)


def part_score(part, folder=".", assignment=None):
    """Print the checks of ``part`` on the modules in ``folder`` and return its points.

    The folder is graded once per process; later calls reuse the result.
    """
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        print(f"{part}: scored by the trusted grader after this notebook has run")
        return 0
    key = (os.path.abspath(folder), assignment)
    if key not in _cache:
        _cache[key] = grade_in_subprocess(folder, assignment)
    result = _cache[key]
    print(part_feedback(result, part))
    return part_points(result, part)[0]
