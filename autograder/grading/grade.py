"""One submission's result as every platform gets it: the hidden suites' checks, what compiling
its files found, and the fingerprint a class run reuses it by.

Torch-free (the grader is handed in): the CLI's main process fingerprints a class without
importing torch.
"""
import hashlib

from dataclasses import replace

from . import course
from ..sandbox.submission import read_sources


def fingerprint(folder, assignment=None, earlier_reference=False):
    """Hash of the submission's Python sources (with those it takes from an earlier assignment's
    folder, or its reference): a finished result is reused only if they are unchanged."""
    if assignment and course.get(assignment).builds_on:
        sources, _ = course.submission_sources(folder, assignment, earlier_reference)
    else:
        sources, _ = read_sources(folder)
    digest = hashlib.sha256()
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + sources[name].encode() + b"\0")
    return digest.hexdigest()


def syntax_notes(folder):
    """Syntax errors found by compiling (never running) the sources, so the report says so up front."""
    notes = []
    for name, source in read_sources(folder)[0].items():
        try:
            compile(source, f"{name}.py", "exec", dont_inherit=True)
        except SyntaxError as exc:
            notes.append(f"{name}.py is not valid Python: line {exc.lineno}: {exc.msg}")
        except Exception as exc:  # e.g. RecursionError from absurd nesting: the student's problem, not ours
            notes.append(f"{name}.py cannot be compiled: {type(exc).__name__}")
    return notes


def grade_one(grader, folder, assignment=None):
    """The SubmissionResult of ``folder`` graded by ``grader`` (a runner.Grader), with the syntax
    errors its files hold up front and its fingerprint; raises as Grader.grade_result does."""
    result = grader.grade_result(folder, assignment).with_notes(syntax_notes(folder))
    return replace(result, fingerprint=fingerprint(folder, result.assignment, grader.earlier_reference))
