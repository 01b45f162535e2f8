"""What the student-facing docstrings state, found mechanically (tests/test_stated_requirements.py).

A *student docstring* is the docstring of a student module (a master in ``solutions/<assignment>/``
with a solution region), or of a class, function or method in it whose source holds a solution
region (``### BEGIN SOLUTION``): what the stub shows beside the code a student writes.

Its *sentences*: each bullet item (a line starting with ``- ``) begins a new one; inside, a
sentence ends at ``.``, ``!`` or ``?`` followed by white space (not after ``e.g.`` or ``i.e.``).

A *requirement sentence* is a sentence holding one of the words of ``REQUIREMENT``: ``must``,
``graded``, ``raise(s)``, ``return(s)``, ``accepted``, ``exactly``, ``unchanged``, ``no other``.
These are the words this course's docstrings state an obligation (or a promise of what is
accepted) with; a docstring that states one in other words is caught by review, not here.
"""
import ast
import re
from dataclasses import dataclass
from pathlib import Path

BEGIN = "### BEGIN SOLUTION"
REQUIREMENT = re.compile(r"\b(must|graded|raises?|returns?|accepted|exactly|unchanged|no other)\b", re.IGNORECASE)
_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+")


def squash(text):
    """``text`` with every run of white space one space (docstrings wrap anywhere)."""
    return " ".join(text.split())


def sentences(doc):
    """The sentences of a docstring, white space squashed (the rule of the module docstring)."""
    out = []
    for item in re.split(r"\n[ \t]*- ", "\n" + doc):
        out += [s for s in _END.split(squash(item)) if s]
    return out


def requirement_sentences(doc):
    return [s for s in sentences(doc) if REQUIREMENT.search(s)]


def student_docstrings(source, module):
    """{item: docstring} of a module's source: ``module`` itself, ``module.name`` and
    ``module.Class.method``, for each one whose code holds a solution region (the module: any)."""
    tree = ast.parse(source)
    found = {}
    if BEGIN in source and ast.get_docstring(tree):
        found[module] = ast.get_docstring(tree)

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}"
                doc = ast.get_docstring(child)
                if doc and BEGIN in (ast.get_source_segment(source, child) or ""):
                    found[name] = doc
                walk(child, name)

    walk(tree, module)
    return found


def assignment_docstrings(solutions, modules):
    """{item: docstring} of every student module of an assignment (``modules``: file names)."""
    found = {}
    for name in modules:
        path = Path(solutions) / name
        found.update(student_docstrings(path.read_text(encoding="utf-8"), path.stem))
    return found


def collected_tests(path):
    """The names of the top-level test functions of a test file (what pytest collects from it)."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    return {n.name for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test_")}


@dataclass(frozen=True)
class Stated:
    item: str              # "module", "module.Name" or "module.Class.method"
    phrase: str            # words of that item's docstring (white space aside)
    hidden: tuple = ()     # "test_hidden_<part>.py::test_name"
    public: tuple = ()     # "test_<part>.py::test_name"
    accepted: tuple = ()   # names (or their beginnings) of alternatives written the accepted way
    free: str = ""         # why a sentence the rule picks states nothing to check
    gap: str = ""          # a stated requirement one side does not check yet: which, and why


def S(item, phrase, hidden=(), public=(), **kw):
    as_tuple = (lambda v: (v,) if isinstance(v, str) else tuple(v))
    return Stated(item, phrase, as_tuple(hidden), as_tuple(public),
                  **{k: as_tuple(v) if k == "accepted" else v for k, v in kw.items()})
