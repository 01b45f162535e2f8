"""nbgrader configuration and preprocessors: scores come from the trusted process only.

``nbgrader autograde`` runs the student's notebook in a Jupyter kernel, and student code
runs in that kernel, so nothing the kernel prints can be trusted. Our preprocessors run
in the nbgrader process itself, around the kernel's execution:

``GradeSubmission`` (before ``Execute``)
    grades the submission's ``.py`` files with ``autograder.grading.runner.Grader`` (the hidden
    suites, the student's code in a sandboxed child) before any student code has run in
    the kernel, so a notebook cell that rewrites the modules cannot change the score. It
    reads them from ``submitted/`` with the CLI's reader (links refused), deletes what
    nbgrader copied into ``autograded/`` through a link, and copies there the student's own
    modules of an earlier assignment that the grader took from its folder beside this one.
``SandboxedExecute`` (``autograder.platforms.nbkernel``)
    nbgrader's ``Execute`` with the kernel in the sandbox; it returns only once the kernel
    and everything it started are dead, so ``SaveAutoGrades`` writes the last word.
``InertNotebook``, ``InertFolder`` (``autograder.platforms.sanitize``, after ``Execute``)
    leave nothing in the notebook, or among the files beside it, that a browser would run or
    load: ``autograded/`` is what formgrader shows and serves, and what the feedback is made of.
    ``InertNotebook`` also runs last before every HTML page (feedback, formgrader).
``OverwriteGradeOutputs`` (after ``Execute``, before ``SaveAutoGrades``)
    replaces every output of every grade cell with the trusted feedback (stdout) and the
    trusted points (a single number, nbgrader's partial credit).

Around them, for the instructor: ``supply_notebooks`` (run by ``nbgrader autograde`` before
it looks for notebooks) gives a submission whose notebook is renamed or missing the notebook
nbgrader expects, so its modules are still graded; ``ForStudents`` keeps hidden-test lines
and absolute paths out of the feedback; ``PartsExport`` adds the points per part to
``nbgrader export``.

``configure(c, assignment, course_root)`` is what a course's ``nbgrader_config.py`` calls.
"""
import atexit
import csv
import glob
import os
import re
import shutil
import sys
import tempfile

import nbformat
from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import new_markdown_cell, new_output
from nbgrader.plugins import CsvExportPlugin
from traitlets import Bool, Enum, List, Unicode

from ..grading import course
from ..grading.result import HINTS
from . import nbgrade
from ..paths import ROOT
from ..sandbox.submission import SubmissionError, read_sources
from .sanitize import InertFolder, InertNotebook

RESULT_KEY = "autograder_result"
_graders = {}


def _grader(assignment, hidden, unsafe_same_uid=False, earlier_reference=False, hints="change"):
    """One warm Grader per (assignment, hidden paths, settings) for the whole nbgrader run."""
    from ..grading.engine import Options, start_grader

    key = (assignment, tuple(hidden), unsafe_same_uid, earlier_reference, hints)
    if key not in _graders:
        _graders[key] = start_grader(Options(assignment, hidden=tuple(hidden), same_uid=unsafe_same_uid,
                                             earlier_reference=earlier_reference, hints=hints))
        if len(_graders) == 1:
            atexit.register(close_graders)
    return _graders[key]


def close_graders() -> None:
    while _graders:
        _graders.popitem()[1].close()


class GradeSubmission(Preprocessor):
    """Grade the submitted modules with the hidden suites, before the kernel runs."""

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    assignment = Unicode("", help="Assignment whose hidden suites grade the folder "
                                  "(default: nbgrader's assignment id).").tag(config=True)
    hidden = List(Unicode(), help="Paths the sandboxed child must not see (the course directory)."
                  ).tag(config=True)
    unsafe_same_uid = Bool(False, help="Grade even where the child would run as this user, able to rewrite "
                                       "the course and the gradebook (trusted code only)."
                           ).tag(config=True)
    earlier_reference = Bool(False, help="Where a submission lacks a module of an earlier assignment it builds "
                                         "on, grade it on the course's reference of that module (the child then "
                                         "reads it: only after that assignment's deadline); the result says so."
                             ).tag(config=True)
    hints = Enum(HINTS, default_value="change",
                 help="How much of a verified one-edit repair a failed check's feedback shows: none (no search), "
                      "line (the file and line), change (and the kind of change), fix (and the edit)."
                 ).tag(config=True)

    def preprocess(self, nb, resources) -> tuple:
        folder = submitted_folder(self.config, resources)
        assignment = self.assignment or resources["nbgrader"]["assignment"]
        self.log.info("Grading the modules in %s with the hidden suites of %s", folder, assignment)
        grader = _grader(assignment, self.hidden, self.unsafe_same_uid, self.earlier_reference, self.hints)
        resources[RESULT_KEY] = grader.grade_result(folder)
        autograded = resources.get("metadata", {}).get("path") or "."
        drop_followed_links(folder, autograded, self.log)
        bring_earlier_modules(folder, autograded, assignment, self.log)
        return nb, resources


def submitted_folder(config, resources):
    """The student's folder in ``submitted/``: nbgrader's copy in ``autograded/`` followed
    symbolic links (a module linked to the reference arrived there as the reference)."""
    from nbgrader.coursedir import CourseDirectory

    info = resources["nbgrader"]
    coursedir = CourseDirectory(config=config)
    return coursedir.format_path(coursedir.submitted_directory, info["student"], info["assignment"])


def drop_followed_links(submitted, autograded, log) -> None:
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


def bring_earlier_modules(submitted, autograded, assignment, log) -> None:
    """Copy into ``autograded`` the student's own modules of earlier assignments that the grader
    took from their folder beside this one (``course.submission_sources``): the notebook's kernel
    sees this folder alone, and imports what was graded instead of failing to find it."""
    try:
        own = set(read_sources(submitted)[0])
        taken = set(course.submission_sources(submitted, assignment)[0]) - own
    except SubmissionError:  # the grader said why in the result; nothing was taken
        return
    for earlier, modules in course.get(assignment).builds_on.items():
        for module in (m for m in modules if m.removesuffix(".py") in taken):
            source = os.path.join(os.path.dirname(submitted), earlier, module)
            try:  # neither end may be a link: the copy is exactly the file the grader read
                fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
                with os.fdopen(fd, "rb") as handle:
                    data = handle.read()
                fd = os.open(os.path.join(autograded, module), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o644)
            except OSError as exc:
                log.warning("%s: not copied beside the notebook (%s)", source, exc.strerror)
                continue
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            log.info("%s: the student's own, copied beside the notebook", source)


class OverwriteGradeOutputs(Preprocessor):
    """Replace the kernel's outputs of grade cells with the trusted feedback and points."""

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    def preprocess(self, nb, resources) -> tuple:
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
                *pictures(result, part),
                new_output("execute_result", data={"text/plain": f"{score:g}"},
                           execution_count=cell.get("execution_count")),
            ]
        return nb, resources


def pictures(result, part) -> list:
    """The part's pictures of attention weights (the student's beside the book's), as outputs
    the feedback page shows: drawn here, in the trusted process, from the result's numbers."""
    if part is None:
        return []
    from .classreport import attention_svg
    drawn = (attention_svg(c.picture, f"{part}-{i}") for i, c in enumerate(result.checks_of(part))
             if not c.passed and c.picture)
    return [new_output("display_data", data={"image/svg+xml": svg, "text/plain": "your matrix beside the book's"})
            for svg in drawn if svg]


class DropUnknownGradeCells(Preprocessor):
    """Turn cells that claim nbgrader metadata the gradebook never issued into plain cells,
    and give untouched grade cells back their hidden region.

    nbgrader's own handling of an invented grade cell (a new ``grade_id``) aborts the
    whole submission; here such a cell simply counts for nothing. A released grade cell
    lacks the hidden region its checksum was computed with, so nbgrader would warn that
    every grade cell of every student "has changed": only real edits are left to it.
    """

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    def preprocess(self, nb, resources) -> tuple:
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            known = {cell.name: cell.source
                     for cell in gb.find_notebook(info["notebook"], info["assignment"]).source_cells}
        for cell in nb.cells:
            meta = cell.get("metadata", {})
            if "nbgrader" not in meta:
                continue
            source = known.get(meta["nbgrader"].get("grade_id"))
            if source is None:
                self.log.warning("Cell with unknown grade_id %r: nbgrader metadata removed",
                                 meta["nbgrader"].get("grade_id"))
                del meta["nbgrader"]
            elif cell.source.strip() == HIDDEN_REGION.sub("", source).strip():
                cell.source = source
        return nb, resources


HIDDEN_REGION = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[^\n]*\n?", re.M | re.S)
# An absolute POSIX path's folders (kept: an ANSI colour code just before it); the file name stays.
FOLDERS = re.compile(r"((?:\x1b\[[\d;]*m)|(?<![\w:/.~-]))/(?:[\w.+@~-]+/)+")


def for_students(text):
    """``text`` with absolute paths cut to their last part (instructor paths say nothing to a student)."""
    return FOLDERS.sub(r"\1", text)


class ForStudents(Preprocessor):
    """Feedback shows no hidden-test region of a cell and no absolute path in an output."""

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    def preprocess(self, nb, resources) -> tuple:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            cell.source = HIDDEN_REGION.sub("", cell.source).rstrip("\n")
            for output in cell.get("outputs", []):
                if "text" in output:
                    output.text = for_students(output.text)
                if "traceback" in output:
                    output.traceback = [for_students(line) for line in output.traceback]
                if "evalue" in output:
                    output.evalue = for_students(output.evalue)
                for kind, value in output.get("data", {}).items():
                    if kind.startswith("text/") and isinstance(value, str):
                        output.data[kind] = for_students(value)
        return nb, resources


def supply_notebooks(coursedir, log) -> None:
    """Give each submission of ``coursedir.assignment_id`` every notebook the gradebook expects.

    nbgrader grades only notebooks with the released name: a renamed one
    (``<assignment>-Copy1.ipynb``) or none at all used to mean no grade and no feedback.
    The student's own notebook under the expected name (the newest, if there are several),
    else a blank copy of the released one, is written beside what was submitted, opening
    with a note that says so; the modules are graded as usual.
    """
    from nbgrader.api import Gradebook, MissingEntry

    assignment = coursedir.assignment_id
    try:
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            expected = [notebook.name for notebook in gb.find_assignment(assignment).notebooks]
    except MissingEntry:
        return  # nbgrader itself says the assignment is unknown
    released = coursedir.format_path(coursedir.release_directory, ".", assignment)
    for folder in sorted(glob.glob(coursedir.format_path(coursedir.submitted_directory, coursedir.student_id,
                                                         assignment))):
        if not os.path.isdir(folder):
            continue
        present = {os.path.splitext(os.path.basename(path))[0]: path
                   for path in glob.glob(os.path.join(folder, "*.ipynb"))}
        others = sorted((path for name, path in present.items() if name not in expected), key=os.path.getmtime)
        for name in (name for name in expected if name not in present):
            nb, note = None, (f"no notebook `{name}.ipynb` was submitted; your modules were graded "
                              "with a blank copy of the released notebook.")
            if len(expected) == 1 and others:
                try:
                    nb = nbformat.read(others[-1], as_version=4)
                    note = (f"no notebook named `{name}.ipynb` was submitted; your "
                            f"`{os.path.basename(others[-1])}` was graded in its place.")
                except Exception as exc:  # not a notebook: one student's file never stops the class
                    note += f" (`{os.path.basename(others[-1])}` is not a notebook: {type(exc).__name__})"
            nb = nb or nbformat.read(os.path.join(released, f"{name}.ipynb"), as_version=4)
            nb.cells.insert(0, new_markdown_cell(f"**Note from the grader:** {note}"))
            nbformat.write(nb, os.path.join(folder, f"{name}.ipynb"))
            log.warning("%s: %s", folder, note)


def _supply_before_autograde():
    """Make ``nbgrader autograde`` call ``supply_notebooks`` before it looks for notebooks.

    nbgrader 0.9 has no hook that runs before it lists a submission's notebooks (its
    pre_convert_hook comes after, and never for a submission without a notebook).
    """
    from nbgrader.converters import Autograde

    if getattr(Autograde.init_notebooks, "supplies_notebooks", False):
        return
    original = Autograde.init_notebooks

    def init_notebooks(self):
        supply_notebooks(self.coursedir, self.log)
        return original(self)

    init_notebooks.supplies_notebooks = True
    Autograde.init_notebooks = init_notebooks


def feedback_under_submitted_names(notebooks, **_) -> None:
    """After ``generate_feedback``: the feedback of a notebook the student submitted under
    another name is also saved under that name, because ``fetch_feedback`` looks for it by the
    name of the notebook the student submitted. (``notebooks`` are the autograded notebooks
    of one submission, in nbgrader's default folders.)"""
    if len(notebooks) != 1:
        return
    folder, name = os.path.split(notebooks[0])  # <course>/autograded/<student>/<assignment>/
    student_dir, assignment = os.path.split(folder)
    autograded, student = os.path.split(student_dir)
    root = os.path.dirname(autograded)
    html = os.path.join(root, "feedback", student, assignment, os.path.splitext(name)[0] + ".html")
    for submitted in glob.glob(os.path.join(root, "submitted", student, assignment, "*.ipynb")):
        if os.path.basename(submitted) != name and os.path.isfile(html):
            # the student named the copy: read and written without following a link at either end
            with os.fdopen(os.open(html, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
                page, mode = handle.read(), os.fstat(handle.fileno()).st_mode & 0o777
            fd, partial = tempfile.mkstemp(dir=os.path.dirname(html), prefix=".feedback-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(page)
            os.chmod(partial, mode)
            os.replace(partial, os.path.join(os.path.dirname(html),
                                             os.path.splitext(os.path.basename(submitted))[0] + ".html"))


class PartsExport(CsvExportPlugin):
    """nbgrader's CSV export (same rows and columns) plus the points of each part, in the order of
    the assignment's manifest: ``part`` columns for a gradebook of one assignment, a group of
    ``assignment:part`` columns per assignment for several."""

    def export(self, gradebook) -> None:
        from nbgrader.api import MissingEntry

        super().export(gradebook)
        dest = self.to or "grades.csv"
        with open(dest, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            fields, rows = list(reader.fieldnames), list(reader)
        ours = [course.get(name) for name in sorted({row["assignment"] for row in rows} & set(course.names()))]

        def column(assignment, part):
            return part if len(ours) == 1 else f"{assignment}:{part}"
        fields += [column(a.name, part) for a in ours for part in a.parts]
        for row in rows:
            row.update({column(a.name, part): "" for a in ours if a.name != row["assignment"] for part in a.parts})
            if row["assignment"] not in course.names():
                continue
            try:
                notebooks = gradebook.find_submission(row["assignment"], row["student_id"]).notebooks
            except MissingEntry:  # nothing submitted: nbgrader's row says 0, so do the parts
                notebooks = []
            parts = course.get(row["assignment"]).parts
            for grade in (grade for notebook in notebooks for grade in notebook.grades):
                part = nbgrade.part_of(grade.name)
                if part in parts:
                    row[column(row["assignment"], part)] = grade.score
        with open(dest, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fields, restval=0.0)
            writer.writeheader()
            writer.writerows(rows)


def configure(c, assignment, course_root):
    """Configure nbgrader so that autograde scores the student's modules, from the trusted process.

    Every assignment of the course is configured; ``assignment`` (the one released last) stays in
    the signature because the nbgrader_config.py files already written pass it."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearOutput, DeduplicateIds,
                                        GetGrades, IgnorePattern, LimitOutput, OverwriteCells,
                                        OverwriteKernelspec, SaveAutoGrades)

    from .nbkernel import execute_preprocessor

    course_root = os.path.abspath(course_root)
    c.CourseDirectory.root = course_root
    # Autograde copies the source folder's files over the submission; keep the student's modules
    # (their own copies of what the assignment builds on included) in every assignment of the
    # course, not only the one released last (one course, one gradebook, several assignments).
    c.Autograde.exclude_overwriting = {
        a.name: [f.file for f in a.hand_in] for a in course.assignments()}
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
        InertNotebook,           # what the kernel produced and the student wrote, made inert
        InertFolder,
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
    _supply_before_autograde()
    c.GenerateFeedback.preprocessors = [GetGrades, ForStudents, InertNotebook, CSSHTMLHeaderPreprocessor]
    # Every other page made from a notebook (formgrader's), also of one autograded before this rule.
    c.HTMLExporter.preprocessors = [InertNotebook]
    c.GenerateFeedback.post_convert_hook = feedback_under_submitted_names
    c.ExportApp.plugin_class = PartsExport
    # nbgrader runs `alembic` when it creates a gradebook: the one installed beside this Python.
    bindir = os.path.dirname(sys.executable)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])
    # The hidden regions import autograder.nbgrade in the kernel.
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(ROOT) not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *paths])
    return c
