"""The course: its assignments, each described by one manifest.

``autograder/suites/<name>/manifest.toml`` is the one place that says an assignment's title,
its graded parts in order (part P is graded by ``test_hidden_P.py`` beside it), the modules
students write (masters in ``solutions/<name>/``), the data files beside those masters that
ship byte for byte with the stubs, the release and the grader (``data``, e.g. a text the
chapter reads), the engine's support modules students run too (``support``, e.g.
tiktoken_offline.py), the modules of earlier assignments it imports (``[builds_on]``), what
the grader's zygote warms up for its children beyond torch's operators (``warm``, from
``zygote.WARM_UPS``: an optimizer, say) and, for a part that is not a module of its own, the
functions it grades (``[functions]``: part = ["module.name", ...]; a part not listed there is its
own module, ``<part>.py``). Points live on the hidden checks themselves. Nothing else in the
engine names a chapter.

The course lives under ``ROOT`` (the repository, or ``$AUTOGRADER_COURSE``: the tests build a
throwaway course in a temporary folder and point the engine at it).
"""
import functools
import hashlib
import importlib
import json
import os
import sys
import tomllib
import types
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..paths import PYTEST_INI
from ..sandbox.submission import MAX_TOTAL_SOURCE_BYTES, SubmissionError, read_sources

ROOT = paths.COURSE
MANIFEST = "manifest.toml"
ENGINE = Path(__file__).resolve().parent.parent / "support"   # where a manifest's support modules live


class CourseError(ValueError):
    """A manifest is missing, malformed or names what is not there; or an assignment is unknown."""


@dataclass(frozen=True)
class HandIn:
    """One file a student hands in for an assignment, and the assignment whose module it is."""
    file: str
    assignment: str

    @property
    def module(self) -> str:
        return self.file.removesuffix(".py")


@dataclass(frozen=True)
class Assignment:
    name: str
    title: str
    parts: tuple        # graded parts, in the order they run and are shown
    modules: tuple      # file names students write and hand in
    builds_on: dict     # {earlier assignment: (module file names it imports)}
    root: Path
    data: tuple = ()    # file names in solutions/<name>/ shipped byte for byte (stubs, release, grader)
    support: tuple = () # engine modules (autograder/support/<file>) copied beside the stubs: set-up students run too
    warm: tuple = ()    # the zygote's warm-ups its checks use (zygote.WARM_UPS), besides tiktoken's
    functions: dict = field(default_factory=dict)  # {part: ("module.name", ...)} for a part that is not its own module

    @property
    def warm_ups(self) -> frozenset:
        """What the grader's zygote prepares for this assignment's children: the manifest's
        ``warm``, and tiktoken's GPT-2 encoding where its students' code uses tiktoken."""
        return frozenset(self.warm) | ({"tiktoken"} if "tiktoken_offline.py" in self.support else set())

    def functions_of(self, part: str) -> tuple:
        """What part ``part`` grades: ("module.name", ...) from the manifest's ``[functions]``, or ()
        for a part that is its own module (every function of ``<part>.py``). The public tests'
        progress table, the grader's list of what is left to write and the notebook read this."""
        return self.functions.get(part, ())

    @property
    def parts_table(self) -> dict:
        """{part: functions_of(part)}, in the manifest's order: what the stubs' conftest is given."""
        return {part: self.functions_of(part) for part in self.parts}

    @property
    def solutions(self) -> Path:
        return self.root / "solutions" / self.name

    @property
    def stubs(self) -> Path:
        return self.root / "assignments" / self.name

    @property
    def source(self) -> Path:
        return self.root / "source" / self.name

    @property
    def suites(self) -> Path:
        return self.root / "autograder" / "suites" / self.name

    def suite(self, part) -> Path:
        return self.suites / f"test_hidden_{part}.py"

    @property
    def module_names(self) -> tuple:
        """The modules as Python imports them (no .py)."""
        return tuple(m.removesuffix(".py") for m in self.modules)

    @property
    def hand_in(self) -> tuple:
        """Every file a student hands in for this assignment, as HandIn (file, the assignment it
        comes from): its own modules, then its own copy of each module of an earlier assignment
        this one imports. What every platform tells a student to hand in, and checks, reads this."""
        return (tuple(HandIn(m, self.name) for m in self.modules)
                + tuple(HandIn(m, earlier) for earlier, modules in self.builds_on.items() for m in modules))

    def hand_in_text(self) -> str:
        """The hand-in in one sentence, for instructions."""
        own = ", ".join(f.file for f in self.hand_in if f.assignment == self.name)
        earlier = {}
        for f in self.hand_in:
            if f.assignment != self.name:
                earlier.setdefault(f.assignment, []).append(f.file)
        return own + "".join(f", and your own {', '.join(files)} from {name} (this assignment imports them)"
                             for name, files in earlier.items())

    def missing_note(self, missing) -> str:
        """The one line that says which hand-in files (HandIn) are missing and where they come from."""
        where = {}
        for f in missing:
            where.setdefault(f.assignment, []).append(f.file)
        def whence(name, files) -> str:
            if name == self.name:
                return "this assignment's"
            return f"your own from {name}: {self.name} imports {'it' if len(files) == 1 else 'them'}"
        return ("missing: " + "; ".join(f"{', '.join(files)} ({whence(name, files)})" for name, files in where.items())
                + f": hand {'it' if len(missing) == 1 else 'them'} in beside {self.name}'s modules")

    def builds_on_text(self) -> str:
        """The modules of earlier assignments it imports, in words ("ch03_attention's
        causal_attention.py and multihead_attention.py"), or "" where it builds on none: what
        ``--earlier-reference`` may hand its submissions, as the help and the README say."""
        return ", and ".join(f"{earlier}'s {' and '.join(modules)}" for earlier, modules in self.builds_on.items())

    def in_order(self, parts) -> list:
        """``parts`` sorted as the manifest lists them (unknown ones last, by name)."""
        order = {p: i for i, p in enumerate(self.parts)}
        return sorted(parts, key=lambda p: (order.get(p, len(order)), p))


def _strings(value, what, where) -> tuple:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise CourseError(f"{where}: `{what}` must be a non-empty list of strings")
    if len(set(value)) != len(value):
        raise CourseError(f"{where}: `{what}` lists a name twice")
    return tuple(value)


def load(folder, root=None) -> Assignment:
    """The assignment described by ``folder/manifest.toml``, checked against the files it names."""
    folder = Path(folder)
    where = folder / MANIFEST
    try:
        data = tomllib.loads(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CourseError(f"{where}: cannot be read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise CourseError(f"{where}: not valid TOML ({exc})") from None
    unknown = sorted(set(data) - {"title", "parts", "modules", "builds_on", "data", "support", "warm",
                                     "functions"})
    if unknown:
        raise CourseError(f"{where}: unknown key(s) {', '.join(unknown)}")
    if not isinstance(data.get("title"), str) or not data["title"].strip():
        raise CourseError(f"{where}: `title` must be a non-empty string")
    parts = _strings(data.get("parts"), "parts", where)
    modules = _strings(data.get("modules"), "modules", where)
    files = _strings(data["data"], "data", where) if "data" in data else ()
    support = _strings(data["support"], "support", where) if "support" in data else ()
    warm = _strings(data["warm"], "warm", where) if "warm" in data else ()
    from ..sandbox.zygote import WARM_UPS
    if set(warm) - set(WARM_UPS):
        raise CourseError(f"{where}: `warm` names {', '.join(sorted(set(warm) - set(WARM_UPS)))}: the zygote "
                          f"knows {', '.join(WARM_UPS)}")
    builds_on = data.get("builds_on", {})
    if not isinstance(builds_on, dict):
        raise CourseError(f"{where}: `builds_on` must be a table of assignment = [modules]")
    assignment = Assignment(name=folder.name, title=data["title"].strip(), parts=parts, modules=modules,
                            builds_on={k: _strings(v, f"builds_on.{k}", where) for k, v in builds_on.items()},
                            root=Path(root) if root else folder.parent.parent.parent, data=files,
                            support=support, warm=warm,
                            functions=_functions(data.get("functions", {}), parts, modules, where))
    for module in modules:
        if not module.endswith(".py") or module.startswith("test_"):
            raise CourseError(f"{where}: module {module!r} must be a .py file that is not a test")
        if not (assignment.solutions / module).is_file():
            raise CourseError(f"{where}: module {module} has no master {assignment.solutions / module}")
    for name in files:
        if "/" in name or "\\" in name or name.endswith(".py") or name.startswith("."):
            raise CourseError(f"{where}: data file {name!r} must be a plain file name that is not a .py")
        if not (assignment.solutions / name).is_file():
            raise CourseError(f"{where}: data file {name} is not in {assignment.solutions}")
    for name in support:
        if "/" in name or not name.endswith(".py") or not (ENGINE / name).is_file():
            raise CourseError(f"{where}: support module {name!r} is not a module of {ENGINE}")
    for part in parts:
        if not assignment.suite(part).is_file():
            raise CourseError(f"{where}: part {part} has no suite {assignment.suite(part).name}")
    strays = sorted(p.name for p in folder.glob("test_hidden_*.py")
                    if p.name.removeprefix("test_hidden_").removesuffix(".py") not in parts)
    if strays:
        raise CourseError(f"{where}: {', '.join(strays)} grade(s) no part listed in `parts`")
    return assignment


def _functions(table, parts, modules, where) -> dict:
    """The manifest's ``[functions]``: part = ["module.name", ...], each part one of ``parts`` and
    each module one of ``modules``."""
    if not isinstance(table, dict):
        raise CourseError(f"{where}: `functions` must be a table of part = [\"module.name\", ...]")
    stems = {m.removesuffix(".py") for m in modules}
    for part, names in table.items():
        if part not in parts:
            raise CourseError(f"{where}: functions.{part}: no part {part} in `parts`")
        for name in _strings(names, f"functions.{part}", where):
            if name.partition(".")[0] not in stems or not name.partition(".")[2]:
                raise CourseError(f"{where}: functions.{part}: {name!r} is not module.name of a module in `modules`")
    return {part: tuple(names) for part, names in table.items()}


def _check_builds_on(assignments, root) -> None:
    for a in assignments.values():
        for earlier, modules in a.builds_on.items():
            if earlier not in assignments:
                raise CourseError(f"{a.suites / MANIFEST}: builds on {earlier}, which is no assignment of the "
                                  f"course in {root}")
            missing = sorted(set(modules) - set(assignments[earlier].modules))
            if missing:
                raise CourseError(f"{a.suites / MANIFEST}: builds on {', '.join(missing)}, which {earlier} "
                                  "does not list in its modules")


_cache = {}


def forget() -> None:
    """Forget the manifests read so far: the next question reads the course again (``new`` wrote an
    assignment)."""
    _cache.clear()


def _course(root=None):
    root = Path(root or ROOT).resolve()
    if root not in _cache:
        suites = root / "autograder" / "suites"
        found = {p.parent.name: load(p.parent, root) for p in sorted(suites.glob(f"*/{MANIFEST}"))}
        _check_builds_on(found, root)
        _cache[root] = found
    return _cache[root]


def assignments(root=None) -> list:
    """Every assignment of the course, sorted by name."""
    return list(_course(root).values())


def names(root=None) -> tuple:
    return tuple(_course(root))


def warm_ups(names=None, root=None) -> frozenset:
    """What a zygote grading the assignments ``names`` (default: every one) warms up: the union
    of their manifests' warm-ups, so a class of several assignments warms each once."""
    return frozenset().union(*(get(n, root).warm_ups for n in (names or _course(root))))


def get(name, root=None) -> Assignment:
    """The assignment called ``name``; a clear error for a name the course does not have."""
    if isinstance(name, Assignment):
        return name
    course = _course(root)
    if name not in course:
        known = ", ".join(course) or "none"
        raise CourseError(f"no assignment called {name!r} in the course (its assignments: {known})")
    return course[name]


@dataclass(frozen=True)
class Found:
    """What a student's folder holds: ``submissions``, (folder, assignment name) for each
    assignment found in it; ``ignored``, the names of what belongs to no assignment; and, where
    nothing can be graded, ``problem``, why (naming the folder by its own name only)."""
    submissions: tuple
    ignored: tuple = ()
    problem: str = ""

    @property
    def listed(self) -> str:
        """The ignored names, the first eight of them, in one line."""
        more = len(self.ignored) - 8
        return ", ".join(self.ignored[:8]) + (f" and {more} more" if more > 0 else "")

    @property
    def note(self) -> str:
        """The one line a result carries about what was ignored ("" when nothing was)."""
        if not self.ignored:
            return ""
        return f"{self.listed}: belong{'s' if len(self.ignored) == 1 else ''} to no assignment, ignored"


def _entries(folder) -> dict | None:
    """{name: is a folder (or a link, which the reader refuses and says so)} of what ``folder``
    holds, without hidden names and Python's caches; None when it cannot be read."""
    try:
        with os.scandir(folder) as scan:
            return {e.name: e.is_dir(follow_symlinks=False) or e.is_symlink() for e in scan
                    if not e.name.startswith(".") and e.name != "__pycache__"}
    except OSError:
        return None


def _best(present, course, forced=None) -> tuple | tuple[None, str]:
    """(the assignment whose modules ``present`` holds the most of, "") (see detect), or (None,
    why): "" when it holds none. ``forced``: that one, unless another assignment's modules are
    more of what is there."""
    counts = {a.name: len(present & set(a.modules)) for a in course.values()}
    best = max(counts.values(), default=0)
    fits = [name for name, count in counts.items() if count == best]
    if forced:
        if counts[forced] and counts[forced] == best:
            return forced, ""
        if best:
            theirs = sorted(present & set(course[fits[0]].modules))
            return None, (f"holds {fits[0]}'s files ({', '.join(theirs)}), not {forced}'s "
                          f"({', '.join(course[forced].modules)})")
        return None, ""  # find says what the folder holds instead
    if best == 0:
        return None, ""
    whole = [name for name in fits if set(course[name].modules) <= present]
    fits = whole if len(whole) == 1 else fits
    if len(fits) > 1:
        return None, f"holds as many modules of {' and '.join(fits)}: say which with --assignment"
    return fits[0], ""


def find(folder, assignment=None, root=None) -> Found:
    """The submissions in a student's ``folder`` (a Found), from everything it holds: a folder
    named after an assignment is that assignment's; each subfolder named after one is a
    submission of it; the folder's own .py files are one of the assignment whose modules they
    hold the most of (see detect), unless a subfolder hands that one in already. Whatever
    belongs to none (a scratch.py, a conftest.py, a README, a notebook) is ignored and listed:
    a stray file never decides that nothing is graded. ``assignment``: only that one is looked
    for, and a folder of another assignment's files says so."""
    folder = Path(folder)
    course = _course(root)
    if assignment:
        get(assignment, root)
    if folder.name in course and assignment in (None, folder.name):
        return Found(((folder, folder.name),))
    entries = _entries(folder)
    if entries is None:
        return Found((), problem=f"{folder.name}/ cannot be read")
    if not entries:
        return Found((), problem=f"{folder.name}/ is empty")
    wanted = [assignment] if assignment else list(course)
    subfolders = [name for name in wanted if entries.get(name)]
    found = [(folder / name, name) for name in subfolders]
    python = {name for name, is_folder in entries.items() if not is_folder and name.endswith(".py")}
    own, why = _best(python, course, assignment) if python else (None, "")
    if own and own not in subfolders:
        found.append((folder, own))
        used = set(entries) - {name for name, is_folder in entries.items() if is_folder}
    else:
        used = set()
    used |= set(subfolders)
    # a folder of an earlier assignment a submission builds on is where its own modules come from
    used |= {earlier for _, name in found for earlier in course[name].builds_on if entries.get(earlier)}
    ignored = tuple(sorted(n + "/" if entries[n] else n for n in set(entries) - used))
    if found:
        return Found(tuple(found), ignored)
    others = [name for name in course if entries.get(name)]
    if why:  # another assignment's files, or as many of two
        return Found((), ignored, f"{folder.name}/ {why}")
    if assignment and others:
        return Found((), ignored, f"{folder.name}/ holds {others[0]}/, not {assignment}/")
    why = (f"holds no {assignment}/ and none of its modules ({', '.join(course[assignment].modules)})" if assignment
           else f"holds no module of any assignment ({', '.join(course)}) and no folder named after one")
    listed = Found((), ignored).listed
    return Found((), ignored, f"{folder.name}/ {why}" + (f" (it holds {listed})" if listed else ""))


def detect(folder, root=None):
    """The assignment a submission folder is for: the one it is named after, else the one
    whose modules it holds the most of (a folder may also hold the modules of an assignment it
    builds on, but fewer), and on a tie the one whose modules are all there (two assignments
    may both have an exercises.py). A clear error when no assignment, or more than one, fits."""
    folder = Path(folder)
    course = _course(root)
    if folder.name in course:
        return course[folder.name]
    entries = _entries(folder) or {}
    name, why = _best({n for n, is_folder in entries.items() if not is_folder and n.endswith(".py")}, course)
    if name is None:
        why = why or f"holds no module of any assignment ({', '.join(course)}): say which with --assignment"
        raise CourseError(f"{folder.name}/ {why}")
    return course[name]


def support_sources(assignment) -> dict:
    """{module: source} of the engine's support modules of ``assignment`` (autograder/support/)."""
    return {name.removesuffix(".py"): _support_text(name) for name in assignment.support}


@functools.lru_cache(maxsize=None)
def _support_text(name):
    return (ENGINE / name).read_text(encoding="utf-8")


def submission_sources(folder, assignment, earlier_reference=False, own=None) -> tuple[dict, list]:
    """A submission's modules as {name: source}, and notes: the folder's own, plus each module of
    an earlier assignment this one builds on that the folder lacks, from the student's folder of
    that assignment beside it (``alice/<earlier>/`` for ``alice/<assignment>/``; only a folder
    named after its assignment has such a neighbour, not a student's folder in a class).
    ``earlier_reference``: what is still missing is the course's reference of that module, as
    released (``released_reference``: no marker line), and nothing else of solutions/ (the
    instructor's setting after the earlier assignment's deadline: the child then reads it).
    What is missing after all that is named in one note, with where it comes from.
    ``own``: what read_sources(folder) gave, where it was read already."""
    sources, notes = own if own is not None else read_sources(folder)
    sources, notes = dict(sources), list(notes)
    total = sum(len(json.dumps(text)) for text in sources.values())
    a = get(assignment)
    for earlier in a.builds_on:
        wanted = [f.module for f in a.hand_in if f.assignment == earlier and f.module not in sources]
        sibling = Path(folder).parent / earlier
        if not wanted or Path(folder).name != assignment or not (sibling.is_dir() or sibling.is_symlink()):
            continue
        try:
            theirs, _ = read_sources(sibling)
        except SubmissionError as exc:
            notes.append(f"{', '.join(m + '.py' for m in wanted)}: not taken from {earlier}/ ({exc})")
            continue
        for name in (name for name in wanted if name in theirs):
            total += len(json.dumps(theirs[name]))
            if total > MAX_TOTAL_SOURCE_BYTES:
                notes.append(f"{name}.py: not taken from {earlier}/ (the Python files would exceed "
                             f"{MAX_TOTAL_SOURCE_BYTES // 1024} KiB in all)")
                continue
            sources[name] = theirs[name]
            notes.append(f"{name}.py: your own from {earlier}/ (this folder has none)")
    missing = [f for f in a.hand_in if f.assignment != a.name and f.module not in sources]
    if missing and earlier_reference:
        where = {}
        for f in missing:  # only builds_on modules (hand_in), each as released: never a marker line
            sources[f.module] = released_reference(get(f.assignment).solutions / f.file)
            where.setdefault(f.assignment, []).append(f.file)
        notes.append("; ".join(f"{', '.join(files)}: the course's reference from {earlier}"
                               for earlier, files in where.items())
                     + f" (yours {'is' if len(missing) == 1 else 'are'} missing; your instructor grades this "
                       f"assignment on the reference after {'that one' if len(where) == 1 else 'each one'}'s "
                       "deadline)")
    elif missing:
        notes.append(a.missing_note(missing))
    return sources, notes


# nbgrader's solution markers (authoring.stubs replaces the regions they enclose)
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def released_reference(path) -> str:
    """The reference module at ``path`` as the course releases it after its deadline: the master
    without nbgrader's marker lines (the code between them is the reference, and stays). What
    ``--earlier-reference`` hands a submission, whose code can read it."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(line for line in lines if line.strip() not in SOLUTION_MARKERS)


def reference_modules(assignment):
    """The hidden suites' ``ref``: the reference's modules, this assignment's and those it builds
    on, as one namespace. Imported in the trusted grader process only (the suites' conftest)."""
    # this assignment's folder first: two chapters have an exercises.py
    folders = [str(assignment.solutions)] + [str(get(name).solutions) for name in assignment.builds_on]
    for folder in reversed(folders):
        if folder in sys.path:
            sys.path.remove(folder)
        sys.path.insert(0, folder)
    names = assignment.module_names + tuple(m.removesuffix(".py") for ms in assignment.builds_on.values() for m in ms)
    return types.SimpleNamespace(**{name: importlib.import_module(name) for name in names})


@functools.lru_cache(maxsize=None)
def suites_digest(assignment) -> str:
    """What a score depends on besides the submission: the hidden suites (and their helpers and
    settings) and the reference solution. Results with different digests are not comparable."""
    a = get(assignment)
    folders = [a.suites, a.solutions, *(get(name).solutions for name in sorted(a.builds_on))]
    digest = hashlib.sha256(PYTEST_INI.read_bytes() + b"\0")
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                name = f"{folder.parent.name}/{folder.name}/{path.relative_to(folder).as_posix()}"
                digest.update(f"{name}\0".encode() + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def engine_digest() -> str:
    """The grading engine's version: every file of ``autograder/`` but the suites (which
    ``suites_digest`` covers). Shards graded by two versions of the grader are not one run."""
    engine = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(engine.rglob("*")):
        relative = path.relative_to(engine)
        if path.is_file() and "__pycache__" not in relative.parts and relative.parts[0] != "suites":
            digest.update(f"{relative.as_posix()}\0".encode() + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
