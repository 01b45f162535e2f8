"""What the project's tests keep of every assignment, in the assignment's own folder ``tests/<assignment>/``:
its banks, ``mutants.py`` (MUTANTS: buggy variants) and ``alternatives.py`` (ALTERNATIVES: correct
ones in other styles), and ``expectations.py`` (what the per-assignment tests expect of it:
``EXPECTED`` below). Nothing per assignment is kept in a test file (DESIGN.md, "Several
assignments, one engine, one seam"): a test reads these files for every ``course.names()``.

Each bank is loaded by its path under a name of its own (``<assignment>_mutants``): two folders
both hold a ``mutants.py``. A submission built from a bank holds the assignment's modules and
the modules of earlier assignments it builds on (the reference's, unless the bank edits them).
"""
import ast
import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from autograder.authoring.stubs import make_stub
from autograder.grading import course

TESTS = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Mutant:
    """A plausible mistake: the reference with ``old`` replaced by ``new`` in one module."""
    name: str             # the mistake, as a student would be told about it
    module: str           # the module file of the assignment's solutions/ it edits (without .py)
    old: str              # exact text in the reference, occurring exactly once
    new: str              # what the student wrote instead
    parts: tuple          # exactly the parts that must lose points; every other part keeps full marks
    named: str = None     # fragment of the mistake's name the feedback must give; None: no name fits
    keeps: tuple = ()     # fragments of check names, inside ``parts``, that must still pass
    also: tuple = ()      # further (module, old, new) edits of the same submission
    says: tuple = ()      # fragments the feedback must hold: the student's own object named as the student's


def with_tabs(text):
    """Indentation with tabs instead of four spaces (continuation lines keep their spaces)."""
    return re.sub(r"(?m)^((?:    )+)(?=\S)", lambda m: "\t" * (len(m.group(1)) // 4), text)


@dataclass(frozen=True)
class Alternative:
    """A correct submission in another style. A bank binds its own variants first:
    ``Alternative = functools.partial(banks.Alternative, VARIANTS)``."""
    variants: dict = field(repr=False)       # {module: {style: source}}: every module of the assignment
    name: str                                # the style, as a student would describe it
    styles: dict = field(default_factory=dict)  # module -> variant name; "plain" for the others
    newline: str = "\n"                      # line endings the files are saved with
    encoding: str = "utf-8"                  # "utf-8-sig" writes a byte-order mark
    coding_line: str = None                  # a PEP 263 line put first in every file
    tabs: bool = False                       # indented with tabs

    def sources(self):
        """{module: source text}, as Python reads it."""
        out = {}
        for module, styles in self.variants.items():
            text = styles[self.styles.get(module, "plain")]
            if self.tabs:
                text = with_tabs(text)
            if self.coding_line:
                text = f"{self.coding_line}\n# Auteur : élève de l'année, café compris\n{text}"
            out[module] = text
        return out

    def files(self):
        """{file name: bytes on disk}."""
        return {f"{module}.py": text.replace("\n", self.newline).encode(self.encoding)
                for module, text in self.sources().items()}


def plain(assignment, module):
    """The reference's ``module`` of ``assignment`` as a student who writes no docstrings has it
    (an alternatives bank's "plain" variant)."""
    tree = ast.parse((course.get(assignment).solutions / f"{module}.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str) and len(body) > 1:
            del body[0]
    return ast.unparse(tree) + "\n"


def load(assignment, kind):
    """The bank module ``tests/<assignment>/<kind>.py``, or None where the assignment has none."""
    path = TESTS / assignment / f"{kind}.py"
    return load_path(path) if path.is_file() else None


def load_path(path):
    """The bank module at ``path``, under a name of its own (``<assignment>_<kind>``)."""
    path = Path(path).resolve()
    name = f"{path.parent.name}_{path.stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before running it: dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


# What ``tests/<assignment>/expectations.py`` defines, and which test reads it.
EXPECTED = {
    "STATED": "a list of stated.S(item, phrase, hidden, public): each requirement sentence of the student "
              "docstrings, with the hidden check and the public test of it (tests/test_stated_requirements.py)",
    "BOOK_VALUES": "a list of strings the master notebook prints from the reference: the book's values "
                   "(tests/test_nbgrader_release.py)",
    "WRONG": "a tuple (module file, a line of the reference, a wrong line, what the public tests then print): "
             "one mistake a public test catches with a value (tests/test_public_tests.py)",
}


def expectations(assignment, name):
    """``name`` (one of ``EXPECTED``) of ``tests/<assignment>/expectations.py``; a failure that says
    which file to write, and what to put in it, where it is missing."""
    path = TESTS / assignment / "expectations.py"
    rel = path.relative_to(TESTS.parent)
    if not path.is_file():
        raise AssertionError(f"{assignment} has no {rel}: write one defining " +
                             "; ".join(f"{k}: {v}" for k, v in EXPECTED.items()) +
                             " (`python -m autograder new` writes a starting one)")
    module = load_path(path)
    if not hasattr(module, name):
        raise AssertionError(f"{rel} does not define {name}: {EXPECTED[name]}")
    return getattr(module, name)


def student_functions(assignment):
    """{"module.name" or "module.Class.method"} for every solution region of the assignment (the
    names the stub generator puts in each region's ``raise NotImplementedError("name: ...")``)."""
    names = set()
    a = course.get(assignment)
    for path in (a.solutions / m for m in a.modules):
        for name in re.findall(r'raise NotImplementedError\("([\w.]+):', make_stub(path.read_text())):
            names.add(f"{path.stem}.{name}")
    return names


def banks(kind):
    """[(assignment name, bank module)] for every assignment with a bank of this kind."""
    return [(a.name, bank) for a in course.assignments() if (bank := load(a.name, kind)) is not None]


def _modules(folder, names):
    return {name: (folder / name).read_text(encoding="utf-8") for name in names}


def earlier_sources(assignment):
    """{file name: text} of the reference modules of the assignments ``assignment`` builds on."""
    sources = {}
    for earlier, modules in course.get(assignment).builds_on.items():
        sources.update(_modules(course.get(earlier).solutions, modules))
    return sources


def reference_sources(assignment):
    """A whole correct submission: the reference modules (and those it builds on)."""
    a = course.get(assignment)
    return {**earlier_sources(assignment), **_modules(a.solutions, a.modules)}


def stub_sources(assignment):
    """The blank stubs (with the reference of what it builds on: only this assignment is blank)."""
    a = course.get(assignment)
    return {**earlier_sources(assignment), **_modules(a.stubs, a.modules)}


def edited_sources(assignment, edits):
    """The reference with each (file name, old, new) edit made: ``old`` occurs once, or is a
    (start, end) pair whose text from start up to end is replaced."""
    sources = reference_sources(assignment)
    for filename, old, new in edits:
        text = sources[filename]
        if isinstance(old, tuple):
            old = text[text.index(old[0]):text.index(old[1])]
        assert text.count(old) == 1, (filename, old)
        sources[filename] = text.replace(old, new)
    return sources


def mutated_sources(assignment, mutant):
    """A whole submission with the mutant's edits made (each `old` snippet must occur exactly once)."""
    reference = reference_sources(assignment)
    sources = dict(reference)
    # ``also``: further edits of the same mistake in other modules, where its cost shows only
    # beside the student's other code (a bank that does not declare it has none)
    for module, old, new in ((mutant.module, mutant.old, mutant.new), *getattr(mutant, "also", ())):
        filename = f"{module}.py"
        assert filename in reference, f"{mutant.name}: no module {filename} in the reference of {assignment}"
        source = sources[filename]
        count = source.count(old)
        assert count == 1, (f"{mutant.name}: its `old` snippet occurs {count} times in {filename}, expected exactly"
                            f" once (did the solution change? update the mutant, don't drop it)\n{old!r}")
        mutated = source.replace(old, new)
        assert mutated != source
        if "syntax error" not in mutant.name:  # otherwise a mistake in the maths, and it must compile
            compile(mutated, filename, "exec")
        sources[filename] = mutated
    return sources


def describe(result):
    lines = [f"score {result['score']}/{result['max_score']}, parts {result['extra_data']['parts']}"]
    for t in result["tests"]:
        if t["status"] != "passed":
            lines.append(f"  FAILED {t['name']} [{t['score']}/{t['max_score']}]: {t['output'][:300]}")
    return "\n".join(lines)


def part_points(result):
    """{part: points} as the suites award them (the one place points live), from a full-marks result."""
    return {part: most for part, (_, most) in result["extra_data"]["parts"].items()}


def grade_sources(grader, assignment, folder, sources):
    """``sources`` ({file name: text}) written into a new ``folder`` and graded as ``assignment``."""
    folder.mkdir(parents=True)
    for filename, text in sources.items():
        (folder / filename).write_text(text)
    return grader.grade(folder, assignment)
