"""nbgrader configuration and preprocessors: scores come from the trusted process only.

``nbgrader autograde`` runs the student's notebook in a Jupyter kernel, and student code
runs in that kernel, so nothing the kernel prints can be trusted. Our preprocessors run
in the nbgrader process itself, around the kernel's execution:

``GradeSubmission`` (before ``Execute``)
    grades the submission's ``.py`` files with ``autograder.runner.Grader`` (the hidden
    suites, the student's code in a sandboxed child) before any student code has run in
    the kernel, so a notebook cell that rewrites the modules cannot change the score. It
    reads them from ``submitted/`` with the CLI's reader (links refused), and deletes what
    nbgrader copied into ``autograded/`` through a link.
``SandboxedExecute`` (``autograder.nbkernel``)
    nbgrader's ``Execute`` with the kernel in the sandbox; it returns only once the kernel
    and everything it started are dead, so ``SaveAutoGrades`` writes the last word.
``OverwriteGradeOutputs`` (after ``Execute``, before ``SaveAutoGrades``)
    replaces every output of every grade cell with the trusted feedback (stdout) and the
    trusted points (a single number, nbgrader's partial credit).

``configure(c, assignment, course_root)`` is what a course's ``nbgrader_config.py`` calls.
"""
import atexit
import os
import shutil

from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import new_output
from traitlets import Bool, List, Unicode

from . import nbgrade
from .paths import ROOT, student_modules

RESULT_KEY = "autograder_result"
_graders = {}


def _grader(assignment, hidden):
    """One warm Grader per (assignment, hidden paths) for the whole nbgrader run."""
    from .runner import Grader

    key = (assignment, tuple(hidden))
    if key not in _graders:
        _graders[key] = Grader(assignment=assignment, hidden=hidden)
        if len(_graders) == 1:
            atexit.register(close_graders)
    return _graders[key]


def close_graders():
    while _graders:
        _graders.popitem()[1].close()


class GradeSubmission(Preprocessor):
    """Grade the submitted modules with the hidden suites, before the kernel runs."""

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    assignment = Unicode("", help="Assignment whose hidden suites grade the folder "
                                  "(default: nbgrader's assignment id).").tag(config=True)
    hidden = List(Unicode(), help="Paths the sandboxed child must not see (the course directory)."
                  ).tag(config=True)

    def preprocess(self, nb, resources):
        folder = submitted_folder(self.config, resources)
        assignment = self.assignment or resources["nbgrader"]["assignment"]
        self.log.info("Grading the modules in %s with the hidden suites of %s", folder, assignment)
        resources[RESULT_KEY] = _grader(assignment, self.hidden).grade(folder)
        drop_followed_links(folder, resources.get("metadata", {}).get("path") or ".", self.log)
        return nb, resources


def submitted_folder(config, resources):
    """The student's folder in ``submitted/``: nbgrader's copy in ``autograded/`` followed
    symbolic links (a module linked to the reference arrived there as the reference)."""
    from nbgrader.coursedir import CourseDirectory

    info = resources["nbgrader"]
    coursedir = CourseDirectory(config=config)
    return coursedir.format_path(coursedir.submitted_directory, info["student"], info["assignment"])


def drop_followed_links(submitted, autograded, log):
    """Delete from ``autograded`` what nbgrader copied through a link in ``submitted``, so the
    kernel (and the feedback) never see the file a link pointed to."""
    for top, dirs, names in os.walk(submitted):
        for name in [*dirs, *names]:
            path = os.path.join(top, name)
            copy = os.path.join(autograded, os.path.relpath(path, submitted))
            if os.path.islink(path) and os.path.lexists(copy):
                log.warning("%s is a symbolic link: not graded, and removed from %s", path, autograded)
                if os.path.isdir(copy) and not os.path.islink(copy):
                    shutil.rmtree(copy)
                else:
                    os.remove(copy)


class OverwriteGradeOutputs(Preprocessor):
    """Replace the kernel's outputs of grade cells with the trusted feedback and points."""

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    def preprocess(self, nb, resources):
        if RESULT_KEY not in resources:
            raise RuntimeError("OverwriteGradeOutputs needs GradeSubmission earlier in the preprocessors")
        result = resources[RESULT_KEY]
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell.cell_type != "code" or not meta.get("grade"):
                continue
            part = nbgrade.part_of(meta.get("grade_id"))
            points = float(meta.get("points", 0))
            if part is None:
                score, text = 0, "this cell is not one of the course's grade cells: 0 points"
            else:
                score, most = nbgrade.part_points(result, part)
                if most != points:
                    self.log.warning("grade cell %s is worth %s points, its hidden checks %s",
                                     meta.get("grade_id"), points, most)
                score = max(0, min(score, points))
                text = nbgrade.part_feedback(result, part, points=points)
            cell.outputs = [
                new_output("stream", name="stdout", text=text + "\n"),
                new_output("execute_result", data={"text/plain": f"{score:g}"},
                           execution_count=cell.get("execution_count")),
            ]
        return nb, resources


class DropUnknownGradeCells(Preprocessor):
    """Turn cells that claim nbgrader metadata the gradebook never issued into plain cells.

    nbgrader's own handling of an invented grade cell (a new ``grade_id``) aborts the
    whole submission; here such a cell simply counts for nothing.
    """

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            known = {cell.name for cell in gb.find_notebook(info["notebook"], info["assignment"]).source_cells}
        for cell in nb.cells:
            meta = cell.get("metadata", {})
            if "nbgrader" in meta and meta["nbgrader"].get("grade_id") not in known:
                self.log.warning("Cell with unknown grade_id %r: nbgrader metadata removed",
                                 meta["nbgrader"].get("grade_id"))
                del meta["nbgrader"]
        return nb, resources


def configure(c, assignment, course_root):
    """Configure nbgrader so that autograde scores the student's modules, from the trusted process."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearOutput, DeduplicateIds,
                                        IgnorePattern, LimitOutput, OverwriteCells,
                                        OverwriteKernelspec, SaveAutoGrades)

    from .nbkernel import execute_preprocessor

    course_root = os.path.abspath(course_root)
    c.CourseDirectory.root = course_root
    # Autograde copies the source folder's files over the submission; keep the student's modules.
    c.Autograde.exclude_overwriting = {assignment: student_modules(assignment)}
    c.Autograde.sanitize_preprocessors = [
        ClearOutput,
        DeduplicateIds,
        OverwriteKernelspec,
        DropUnknownGradeCells,
        OverwriteCells,
        CheckCellMetadata,
    ]
    c.Autograde.autograde_preprocessors = [
        GradeSubmission,
        execute_preprocessor(),  # the notebook's kernel in the sandbox, dead before SaveAutoGrades
        IgnorePattern,
        ClearMetadataPreprocessor,
        LimitOutput,
        OverwriteGradeOutputs,
        SaveAutoGrades,
        AssignLatePenalties,
        CheckCellMetadata,
    ]
    c.GradeSubmission.hidden = [course_root]
    c.SandboxedKernelManager.hidden = [course_root]
    # A deleted grade cell comes back (and gets the trusted score) instead of vanishing.
    c.OverwriteCells.add_missing_cells = True
    c.Execute.timeout = 120
    # The hidden regions import autograder.nbgrade in the kernel.
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(ROOT) not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *paths])
    return c
