"""nbgrader autograde agrees with the CLI grader, records per-part points, and cannot be gamed.

One course is built in a temporary folder and one ``nbgrader autograde`` run grades every
collected submission below (each one a real Jupyter kernel), so the module costs one
nbgrader start, one warm grader and a kernel per submission.
"""
import csv
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from autograder.platforms import nbgrade  # noqa: E402
from autograder.paths import ASSIGNMENTS, SOLUTIONS  # noqa: E402
from autograder.authoring.release import build_course, kernel_path, run_nbgrader  # noqa: E402

ASSIGNMENT = "ch03_attention"
PARTS = ("simple_attention", "self_attention", "causal_attention", "multihead_attention", "exercises")
MODULES = [f"{part}.py" for part in PARTS]
SCALED = "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)"

# A first notebook cell that attacks the kernel: it pretends not to be autograded, copies the
# reference modules over the submission, and patches the helper the hidden tests call.
PATCH_CELL = f"""
import os, shutil, sys
os.environ.pop("NBGRADER_EXECUTION", None)
sys.path.insert(0, {str(ROOT)!r})
for name in {MODULES!r}:
    shutil.copy(os.path.join({str(SOLUTIONS / ASSIGNMENT)!r}, name), name)
import autograder.nbgrade
FULL = {{"simple_attention": 15, "self_attention": 20, "causal_attention": 25,
        "multihead_attention": 25, "exercises": 15}}
autograder.nbgrade.part_score = lambda part, *args, **kwargs: FULL[part]
print("patched")
"""


def is_grade_cell(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade", False)


def submit(course, student, modules_from, notebook_change=None):
    folder = course / "submitted" / student / ASSIGNMENT
    shutil.copytree(course / "release" / ASSIGNMENT, folder)
    for name in MODULES:
        shutil.copy(modules_from / name, folder / name)
    if notebook_change:
        path = folder / f"{ASSIGNMENT}.ipynb"
        nb = nbformat.read(path, as_version=4)
        notebook_change(nb, folder)
        nbformat.write(nb, path)
    return folder


def make_buggy(folder):
    path = folder / "causal_attention.py"
    text = path.read_text()
    assert text.count(SCALED) == 1
    path.write_text(text.replace(SCALED, "attn_weights = torch.softmax(attn_scores, dim=-1)"))


def edit_grade_cells(nb, _folder):
    """Unlock every grade cell, make it print its full points and fix up the checksum."""
    from nbgrader.utils import compute_checksum
    for cell in nb.cells:
        if is_grade_cell(cell):
            meta = cell.metadata.nbgrader
            cell.source = f"{meta['points']:g}"
            meta["points"] = 100
            meta["locked"] = False
            cell.metadata["editable"] = True
            meta["checksum"] = compute_checksum(cell)
    nb.cells.append(nbformat.v4.new_code_cell("50", metadata={"nbgrader": {
        "grade": True, "grade_id": "bonus", "points": 50, "locked": False, "solution": False,
        "task": False, "schema_version": 3}}))


def delete_grade_cells(nb, _folder):
    nb.cells = [cell for cell in nb.cells if not is_grade_cell(cell)]


def patch_kernel(nb, _folder):
    nb.cells.insert(0, nbformat.v4.new_code_cell(PATCH_CELL))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A course, its collected submissions, and one `nbgrader autograde` of all of them.

    edits_cells: grade cells unlocked, rewritten to print their points, points raised,
    checksums recomputed, plus an invented 50-point grade cell (blank modules).
    deletes_cells_correct: every grade cell deleted (reference modules).
    patches_kernel: a first cell that fakes the environment, copies the reference over the
    modules and patches the helper the hidden tests call (blank modules).
    """
    base = tmp_path_factory.mktemp("nbgrader")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", kernel_path(base))
        course = build_course(ASSIGNMENT, base / "course")
        stubs, reference = ASSIGNMENTS / ASSIGNMENT, SOLUTIONS / ASSIGNMENT
        folders = {
            "correct": submit(course, "correct", reference),
            "buggy": submit(course, "buggy", reference),
            "blank": submit(course, "blank", stubs),
            "edits_cells": submit(course, "edits_cells", stubs, edit_grade_cells),
            "deletes_cells_correct": submit(course, "deletes_cells_correct", reference, delete_grade_cells),
            "patches_kernel": submit(course, "patches_kernel", stubs, patch_kernel),
        }
        make_buggy(folders["buggy"])
        proc = run_nbgrader(course, "autograde", ASSIGNMENT, check=False)
        yield {"course": course, "folders": folders, "proc": proc, "env": dict(JUPYTER_PATH=str(base / "jupyter"))}


@pytest.fixture(scope="module")
def cli_results(graded, grader):
    """What the CLI's grader (tests/conftest.py's warm Grader) says about the same folders."""
    return {name: grader.grade(graded["folders"][name]) for name in ("correct", "buggy", "blank")}


def gradebook_scores(course, student):
    """{part: (score, max_score)} and the total, read from nbgrader's SQLite gradebook."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        submission = gb.find_submission(ASSIGNMENT, student)
        notebook = submission.notebooks[0]
        parts = {}
        for grade in notebook.grades:
            assert not grade.needs_manual_grade, grade.name
            parts[nbgrade.part_of(grade.name)] = (grade.score, grade.max_score)
        return parts, submission.score


def test_autograde_succeeds(graded):
    assert graded["proc"].returncode == 0, graded["proc"].stderr[-3000:]
    for student in graded["folders"]:
        assert (graded["course"] / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file(), student


@pytest.mark.parametrize("student", ["correct", "buggy", "blank"])
def test_nbgrader_and_cli_agree_per_part(graded, cli_results, student):
    parts, total = gradebook_scores(graded["course"], student)
    cli = cli_results[student]
    assert set(parts) == set(PARTS)
    for part in PARTS:
        score, most = cli["extra_data"]["parts"][part]
        assert parts[part] == (score, most), part
    assert total == cli["score"]


def test_the_three_submissions_are_told_apart(graded):
    assert gradebook_scores(graded["course"], "correct")[1] == 100
    assert gradebook_scores(graded["course"], "blank")[1] == 0
    parts, total = gradebook_scores(graded["course"], "buggy")
    assert 0 < total < 100
    assert parts["causal_attention"][0] < 25 and parts["simple_attention"][0] == 15


def test_notebook_points_are_the_suites_points(cli_results):
    """The grade cells' points and the hidden suites' points are the same numbers."""
    nb = nbformat.read(ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    cells = {nbgrade.part_of(c.metadata.nbgrader["grade_id"]): c.metadata.nbgrader["points"]
             for c in nb.cells if is_grade_cell(c)}
    assert cells == {part: most for part, (_, most) in cli_results["correct"]["extra_data"]["parts"].items()}
    assert sum(cells.values()) == 100


def test_trusted_feedback_replaces_the_kernel_output(graded):
    nb = nbformat.read(graded["course"] / "autograded" / "buggy" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                       as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "grade_causal_attention")
    assert [o.output_type for o in cell.outputs] == ["stream", "execute_result"]
    assert "no 1/sqrt(d_k) scaling" in cell.outputs[0].text
    assert "scored by the trusted grader" not in cell.outputs[0].text


@pytest.mark.parametrize("student", ["edits_cells", "patches_kernel"])
def test_tampering_gains_nothing(graded, student):
    parts, total = gradebook_scores(graded["course"], student)
    assert set(parts) == set(PARTS)  # deleted cells come back, invented ones do not count
    assert all(score == 0 and most == points for (score, most), points in
               zip((parts[p] for p in PARTS), (15, 20, 25, 25, 15)))
    assert total == 0


def test_the_kernel_attack_really_ran(graded):
    """The patching cell ran, in the sandboxed kernel, where the reference does not exist and
    nothing it writes reaches the course (tests/test_nbgrader_kernel.py has more)."""
    folder = graded["course"] / "autograded" / "patches_kernel" / ASSIGNMENT
    assert (folder / "causal_attention.py").read_text() != (SOLUTIONS / ASSIGNMENT / "causal_attention.py").read_text()
    nb = nbformat.read(folder / f"{ASSIGNMENT}.ipynb", as_version=4)
    assert nb.cells[0].outputs[-1].get("ename") == "FileNotFoundError"


def test_deleted_grade_cells_come_back_with_the_trusted_score(graded):
    """Deleting the grade cells neither hides them nor changes what they award."""
    parts, total = gradebook_scores(graded["course"], "deletes_cells_correct")
    assert set(parts) == set(PARTS) and total == 100
    nb = nbformat.read(graded["course"] / "autograded" / "deletes_cells_correct" / ASSIGNMENT
                       / f"{ASSIGNMENT}.ipynb", as_version=4)
    restored = [c for c in nb.cells if is_grade_cell(c)]
    assert len(restored) == len(PARTS)
    assert all(c.outputs[-1]["data"]["text/plain"] == f"{c.metadata.nbgrader['points']:g}" for c in restored)


def test_feedback_is_readable(graded):
    run_nbgrader(graded["course"], "generate_feedback", ASSIGNMENT, "--student", "buggy")
    html = (graded["course"] / "feedback" / "buggy" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    score = gradebook_scores(graded["course"], "buggy")[0]["causal_attention"][0]
    assert f"causal_attention: {score:g} / 25 points" in html
    assert "no 1/sqrt(d_k) scaling of the scores" in html
    assert "[FAIL] CausalAttention in eval mode" in html


def test_export_writes_a_csv(graded):
    out = graded["course"] / "grades.csv"
    run_nbgrader(graded["course"], "export", "--to", str(out))
    rows = {row["student_id"]: row for row in csv.DictReader(out.open())}
    for student in ("correct", "buggy", "blank"):
        assert float(rows[student]["raw_score"]) == gradebook_scores(graded["course"], student)[1]
        assert float(rows[student]["max_score"]) == 100


def test_student_modules_are_graded_not_the_course_copies(graded):
    """Autograde must not overwrite a submission's modules with the course's stubs."""
    folder = graded["course"] / "autograded" / "correct" / ASSIGNMENT
    for name in MODULES:
        assert (folder / name).read_text() == (SOLUTIONS / ASSIGNMENT / name).read_text(), name
