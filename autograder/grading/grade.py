"""What a result holds besides its checks, computed from the sources the grader read once: the
syntax errors its files hold, and the fingerprint a class run reuses it by.

Torch-free: the CLI's main process fingerprints a class without importing torch.
"""
import hashlib

from . import course
from .kit import compile_problem
from ..sandbox.submission import read_sources


def digest(sources) -> str:
    """Hash of a submission's sources ({name: text}): a finished result is reused only if they are unchanged."""
    hashed = hashlib.sha256()
    for name in sorted(sources):
        hashed.update(name.encode() + b"\0" + sources[name].encode() + b"\0")
    return hashed.hexdigest()


def fingerprint(folder, assignment=None, earlier_reference=False) -> str:
    """``digest`` of the sources in ``folder`` (with those it takes from an earlier assignment's
    folder, or its reference), as the grader reads them: what an earlier result is compared with."""
    if assignment and course.get(assignment).builds_on:
        sources, _ = course.submission_sources(folder, assignment, earlier_reference)
    else:
        sources, _ = read_sources(folder)
    return digest(sources)


def syntax_notes(sources) -> list:
    """Syntax errors found by compiling (never running) ``sources``, so the report says so up front."""
    problems = {name: compile_problem(source) for name, source in sources.items()}
    return [f"{name}.py {problem}" for name, problem in problems.items() if problem is not None]
