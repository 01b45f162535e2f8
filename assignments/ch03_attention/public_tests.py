"""The public tests' order, messages and summary, shared by every chapter's conftest.py (copied
beside the stubs). The tests run in the book's order. A failure reads in the tests' own words:
a function not written yet is one line; a check that fails says what it compared, your value
beside the book's (``expect_close``, ``expect_equal``); an exception from your code keeps a
short traceback through your own files (``pytest --tb=long`` shows pytest's full one). The run
ends with one line per part, in the book's order, after pytest's own short summary: the last thing
on the screen. The functions a part's line names as not written yet are ``stubs_left`` of its
module, the one list the grader's feedback gives too."""
import math
import re
import sys
import sysconfig
import traceback
from pathlib import Path

import pytest
import torch

STUB = re.compile(r"([\w.]+): replace this line with your code")  # the stub generator's NotImplementedError
STUB_LINE = re.compile(r"raise NotImplementedError\(\"([\w.]+): replace this line with your code\"\)")
# The line of a part not started: the heading for the progress table and the grader's feedback alike.
NOT_WRITTEN = "not written yet"
DECIMALS = 4  # as the book prints its tensors
SHOWN = 36  # values shown in full (the 6 x 6 attention weights); a larger tensor shows where it differs most
# Python's and the packages' folders (pytest, torch): their frames are never the student's code.
LIBRARIES = tuple({str(Path(path).resolve()) for key, path in sysconfig.get_paths().items()
                   if key in ("stdlib", "platstdlib", "purelib", "platlib")})
BOOKS = "the book's:"
SET_UP = ("conftest.py", "public_tests.py", "tiktoken_offline.py")  # the course's, beside the tests


# -- what a failing check says ------------------------------------------------------------------------

def _number(value):
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    return f"{value:.{DECIMALS}f}" if math.isfinite(value) and abs(value) < 1e5 else f"{value:.4g}"


def _values(tensor, width):
    """Nested brackets, one row of the last dimension a line, numbers rounded and aligned."""
    if tensor.dim() == 0:
        return _number(tensor.item()).rjust(width)
    if tensor.dim() == 1:
        return "[" + ", ".join(_number(v).rjust(width) for v in tensor.tolist()) + "]"
    rows = (",\n" + "\n" * (tensor.dim() - 2)).join(_values(row, width) for row in tensor)
    return "[" + rows.replace("\n", "\n ").replace("\n \n", "\n\n") + "]"


def _side_by_side(yours, book):
    """Your values and the book's, each under its own label."""
    numbers = [_number(v) for t in (yours, book) for v in t.flatten().tolist()]
    width = max(map(len, numbers), default=1)
    lines = []
    for label, tensor in (("yours:", yours), (BOOKS, book)):
        text = _values(tensor, width).splitlines() or [""]
        lines += [f"  {label:<12}{text[0]}"] + [f"  {'':<12}{line}" if line else "" for line in text[1:]]
    return lines


def _shape(tensor):
    return "(" + ", ".join(map(str, tensor.shape)) + (",)" if tensor.dim() == 1 else ")")


def _kind(value):
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {_shape(value)}"
    return f"{type(value).__name__} {_short(value, 100)}"


def _short(value, limit=300):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + " ..."


def expect_close(yours, book, what, atol=1e-4, rtol=1e-5, mistakes=()) -> None:
    """Passes where ``torch.allclose(yours, book, atol=atol, rtol=rtol)`` holds; otherwise fails,
    saying ``what`` was compared, with your values beside the book's (and both shapes where they
    differ). ``mistakes``: (sentence, model) pairs; where your values are a known mistake's model
    (on the same inputs), the message names that mistake."""
    if not isinstance(yours, torch.Tensor):
        raise AssertionError(f"{what}: yours is {_kind(yours)}, the book's is {_kind(book)}")
    yours, book = yours.detach(), book.detach()
    if yours.dtype != book.dtype:
        raise AssertionError(f"{what}: yours has dtype {yours.dtype}, the book's {book.dtype}")
    try:
        if torch.allclose(yours, book, atol=atol, rtol=rtol):
            return
    except RuntimeError:  # shapes that do not broadcast
        pass
    _differs(yours, book, what, f"tolerance {atol:g}", mistakes)


def expect_equal(yours, book, what, mistakes=()) -> None:
    """Passes where ``yours`` equals ``book`` (tensors: ``torch.equal``; anything else: ``==``);
    otherwise fails, saying ``what`` was compared, yours beside the book's."""
    if isinstance(book, torch.Tensor):
        if not isinstance(yours, torch.Tensor):
            raise AssertionError(f"{what}: yours is {_kind(yours)}, the book's is {_kind(book)}")
        if not torch.equal(yours, book):
            _differs(yours.detach(), book, what, "they must be equal", mistakes)
        return
    if _same(yours, book):
        return
    if isinstance(yours, torch.Tensor):
        raise AssertionError(f"{what}: yours is {_kind(yours)}, the book's is {_kind(book)}")
    head = f"{what}: yours differs from the book's"
    if isinstance(yours, (list, tuple)) and isinstance(book, (list, tuple)):
        notes = [f"{len(yours)} items, the book's {len(book)}"] if len(yours) != len(book) else []
        first = next((i for i, (a, b) in enumerate(zip(yours, book)) if not _same(a, b)), None)
        if first is not None:
            notes.append(f"first at item {first}: yours {_short(yours[first], 60)}, "
                         f"the book's {_short(book[first], 60)}")
        head += f" ({'; '.join(notes)})" if notes else ""
    named = [sentence for sentence, model in mistakes if _same(yours, model)]
    lines = [f"{what}: yours looks like {named[0]}", f"  ({head})"] if named else [head]
    lines += [f"  {'yours:':<12}{_short(yours)}", f"  {BOOKS:<12}{_short(book)}"]
    raise AssertionError("\n".join(lines))


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:  # a comparison that gives no truth value (a tensor beside a list)
        return False


def _differs(yours, book, what, tolerance, mistakes):
    """Fails with where ``yours`` differs from ``book`` and, where it is one, the mistake it matches."""
    lines = []
    if yours.shape != book.shape:
        lines.append(f"{what}: yours has shape {_shape(yours)}, the book's {_shape(book)}")
    else:
        gap = (yours.double() - book.double()).abs().nan_to_num(nan=math.inf)
        at = [int(i) for i in torch.unravel_index(gap.argmax(), gap.shape)] if gap.dim() else []
        detail = f"largest difference {_number(gap.max().item())}" + (f" at {at}" if at else "") + f"; {tolerance}"
        named = [sentence for sentence, model in mistakes if model.shape == yours.shape and  # NaN where it has NaN
                 torch.allclose(yours.double(), model.detach().double(), atol=1e-4, equal_nan=True)]
        lines += [f"{what}: yours look like {named[0]}", f"  ({detail})"] if named else \
            [f"{what}: yours differ from the book's ({detail})"]
    if yours.numel() <= SHOWN and book.numel() <= SHOWN:
        lines += _side_by_side(yours, book)
    elif yours.shape == book.shape:
        lines.append(f"  {int((gap > 0).sum()):,} of {gap.numel():,} values differ; the largest differences:")
        for flat in gap.flatten().topk(min(4, gap.numel())).indices.tolist():
            index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), gap.shape))
            lines.append(f"  at {list(index)}: yours {_number(yours[index].item())}, "
                         f"the book's {_number(book[index].item())}")
    raise AssertionError("\n".join(lines))


# -- how a failure reads ------------------------------------------------------------------------------

class Failure:
    """A failed test's report in the tests' own words: ``lines[0]`` is the headline (pytest's
    one-line summary and JUnit's message show it), the rest explain."""

    def __init__(self, lines, path, lineno):
        self.lines = lines
        self.reprcrash = _Crash(path, lineno, lines[0])

    def toterminal(self, out) -> None:
        for line in self.lines:
            out.line(line)

    def __str__(self):
        return "\n".join(self.lines)


class _Crash:
    def __init__(self, path, lineno, message):
        self.path, self.lineno, self.message = path, lineno, message

    def __str__(self):
        return f"{self.path}:{self.lineno}: {self.message}"


def _course_frames(tb):
    """The frames of a traceback in the course's files (the tests and the student's modules),
    without Python's, pytest's, torch's or the tests' set-up."""
    return [frame for frame in traceback.extract_tb(tb)
            if Path(frame.filename).is_file() and Path(frame.filename).name not in SET_UP
            and not str(Path(frame.filename).resolve()).startswith(LIBRARIES)]


def _is_test(frame):
    return Path(frame.filename).name.startswith("test_")


def _where(frame):
    return f"{Path(frame.filename).name}:{frame.lineno}"


def explain(item, call, report):
    """Gives a failed test's report in the tests' own words (see the module's docstring); keeps
    pytest's traceback where the student asks for it (``--tb=long`` or ``--tb=native``).
    ``report.not_written``: the function whose stub failed the test, if one did."""
    if not report.failed or call.excinfo is None:
        return report
    error = call.excinfo.value
    stub = STUB.search(str(error)) if isinstance(error, NotImplementedError) else None
    report.not_written = stub[1] if stub else None
    # the file whose stub raised: another part's, or an earlier assignment's (chapter 4's generate.py)
    report.not_written_in = Path(traceback.extract_tb(call.excinfo.tb)[-1].filename).name if stub else None
    if item.config.option.tbstyle in ("long", "native"):
        return report
    frames = _course_frames(call.excinfo.tb)
    last = frames[-1] if frames else None
    if stub:
        lines = [f"not written yet: {stub[1]}"]
    elif isinstance(error, (AssertionError, pytest.fail.Exception)) and last and _is_test(last):
        message = str(error).strip() if isinstance(error, AssertionError) else str(error.msg).strip()
        lines = message.splitlines() if message else [f"this check failed: {last.line}"]
        lines.append(f"  (checked at {_where(last)})")
    else:
        lines = [f"{type(error).__name__}: {error}".strip().splitlines()[0] or type(error).__name__,
                 *[f"  {line}" for line in f"{error}".strip().splitlines()[1:]]]
        lines += [f"  {_where(frame)} in {frame.name}: {frame.line}" for frame in frames]
    report.longrepr = Failure(lines, Path(last.filename).name if last else report.location[0],
                              last.lineno if last else 0)
    return report


def _own_modules(test_file, parts):
    """The files that hold the part ``test_<part>.py`` tests: its own module, or those ``parts``
    maps its functions to."""
    part = test_file.removeprefix("test_").removesuffix(".py")
    functions = parts.get(part, ()) if isinstance(parts, dict) else ()
    return {f"{name.split('.')[0]}.py" for name in functions} or {f"{part}.py"}


def explain_collection(node, call, report, parts=None) -> None:
    """A test module that could not be imported (an error in a module it imports): the error and
    its lines in the course's files, instead of pytest's and importlib's frames. Where the error
    is in another part's module (``parts``: the conftest's PARTS), the tests are skipped instead,
    naming that module: its own tests fail and say why."""
    if not isinstance(report, pytest.CollectReport) or not report.failed or call.excinfo is None:
        return
    error = call.excinfo.value
    error = error.__cause__ or error.__context__ or error  # pytest wraps the import's error
    frames = _course_frames(error.__traceback__)
    origin = Path(error.filename).name if isinstance(error, SyntaxError) and error.filename else \
        Path(frames[-1].filename).name if frames else None
    if parts is not None and origin and not origin.startswith("test_") and origin not in SET_UP \
            and origin not in _own_modules(node.path.name, parts):
        report.outcome = "skipped"
        report.longrepr = (str(node.path), 0, f"Skipped: {origin} does not import "
                           f"({type(error).__name__}: {error}): its own tests say why; these run once it does")
        return
    lines = [f"could not import {node.path.name}: {type(error).__name__}: {error}"]
    lines += [f"  {_where(frame)} in {frame.name}: {frame.line}" for frame in frames]
    if isinstance(error, SyntaxError) and error.filename and error.text:
        lines.append(f"  {Path(error.filename).name}:{error.lineno}: {error.text.strip()}")
    last = frames[-1] if frames else None
    report.longrepr = Failure(lines, Path(last.filename).name if last else node.path.name, last.lineno if last else 0)


# -- what is not written yet ------------------------------------------------------------------------

def stubs_left(source):
    """The functions of a module's ``source`` whose stub still raises the generator's
    NotImplementedError, in the module's order: the one list of what is not written yet, which
    the public tests' progress table and the grader's feedback both give (the grader reads it
    from the submission's text, the table from the file beside the tests)."""
    return STUB_LINE.findall(source or "")


def part_stubs(part, functions, read):
    """The stubs left in part ``part``, as ``stubs_left`` names them: every stub of its own module
    (``functions`` empty), or those of ``functions`` ("module.name": a function, or a class and its
    methods), the manifest's ``[functions]`` of the part. ``read(module)``: that module's source
    (no .py), or None where it is not there."""
    if not functions:
        return stubs_left(read(part))
    wanted = {}
    for function in functions:
        module, _, name = function.partition(".")
        wanted.setdefault(module, set()).add(name)
    return [stub for module, names in wanted.items() for stub in stubs_left(read(module))
            if stub in names or stub.partition(".")[0] in names]


def not_written(functions):
    """The one line for a part whose ``functions`` (``stubs_left``) are still to write."""
    count = len(functions)
    return (f"{NOT_WRITTEN}: {count} function{'s' if count != 1 else ''}: {', '.join(functions)}" if count
            else f"{NOT_WRITTEN} (the stubs still raise NotImplementedError)")


# -- order and summary --------------------------------------------------------------------------------

def _part(nodeid, parts):
    name = nodeid.split("::")[0].rsplit("/", 1)[-1].removeprefix("test_").removesuffix(".py")
    return name if name in parts else None


def book_order(items, parts) -> None:
    """Sort the collected tests by their part's place in the book (a stable sort: within a file,
    the tests keep the file's order)."""
    place = {part: i for i, part in enumerate(parts)}
    items.sort(key=lambda item: place.get(_part(item.nodeid, parts), len(place)))


def _stub(report):
    return getattr(report, "not_written", None)


def hide_stubs(session, exitstatus) -> None:
    """Keeps the tests of functions not written yet out of pytest's FAILURES section: their
    one-line reason shows in pytest's short summary, and the part's line names them. Called as the
    session finishes, where pytest's terminal summary follows (pytest's own condition), and undone
    by ``summary``, which runs after the FAILURES section and before the short summary."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if not session.config.pluginmanager.has_plugin(_LAST):
        session.config.pluginmanager.register(_Last(), _LAST)
    if _hidden:  # another conftest's call (tests of several folders in one run)
        return
    summarised = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED,
                  pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.NO_TESTS_COLLECTED)
    if reporter is None or reporter.no_summary or exitstatus not in summarised:
        return
    _hidden[:] = reporter.stats.get("failed", [])
    if _hidden:
        reporter.stats["failed"] = [report for report in _hidden
                                    if not (_stub(report) and isinstance(report.longrepr, Failure))]


_hidden = []  # every failed report while hide_stubs keeps some out of pytest's FAILURES section
_LAST = "public_tests: the progress table, last"
HEADING = "your progress, part by part (in the book's order)"


class _Last:
    """Writes the progress table (and the lines a conftest adds below it) after pytest's short
    summary, where a student's screen ends: pytest's own terminal summary is a wrapper that writes
    its short summary as it finishes, and this one wraps it (registered by ``hide_stubs`` as the
    session finishes, before the terminal summary begins)."""

    def __init__(self):
        self.pending = []  # (table, lines below it) of each conftest's summary, in order

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter):
        try:
            return (yield)
        finally:
            for table, then in self.pending:
                _write(terminalreporter, table, then)
            self.pending.clear()


def summary(terminalreporter, parts, then=()) -> None:
    """One line per part, in the book's order: all its tests pass, or how many do, or "not
    written yet" and the functions still to write; then the lines ``then``. Written last, after
    pytest's short summary (``_Last``), where the session set that up; else at once."""
    if _hidden:  # see hide_stubs
        terminalreporter.stats["failed"] = _hidden[:]
        _hidden.clear()
    table, last = _table(terminalreporter, parts), terminalreporter.config.pluginmanager.get_plugin(_LAST)
    if last is not None:
        last.pending.append((table, list(then)))
    else:
        _write(terminalreporter, table, then)


def _write(terminalreporter, table, then):
    if table:
        terminalreporter.section(HEADING)
    for line in [*table, *then]:
        terminalreporter.write_line(line)


def _table(terminalreporter, parts):
    """The progress table's lines: none where no test of a part ran."""
    counts = {part: {"passed": 0, "failed": 0, "stubs": 0, "folder": None, "unimported": None, "elsewhere": set(),
                     "waits_on": None} for part in parts}
    for report in terminalreporter.stats.get("skipped", []):  # explain_collection's: another part's module
        part = _part(getattr(report, "nodeid", ""), parts)
        if part is not None and isinstance(report, pytest.CollectReport) and isinstance(report.longrepr, tuple):
            counts[part]["waits_on"] = report.longrepr[2].removeprefix("Skipped: ").split(" ")[0]
    for kind in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(kind, []):
            part = _part(getattr(report, "nodeid", ""), parts)
            if part is not None and isinstance(report, pytest.CollectReport) and report.failed:
                error = getattr(report.longrepr, "lines", [""])[0] if isinstance(report.longrepr, Failure) else ""
                counts[part]["unimported"] = error.split(": ", 1)[-1] or "an error while importing it"
            if part is None or getattr(report, "when", "call") not in ("call", "setup"):
                continue
            entry = counts[part]
            entry["passed" if kind == "passed" else "failed"] += 1
            entry["stubs"] += kind != "passed" and bool(_stub(report))
            if kind != "passed" and _stub(report) and getattr(report, "not_written_in", None) not in (None, f"{part}.py"):
                entry["elsewhere"].add(f"{report.not_written} in {report.not_written_in}")
            entry["folder"] = (terminalreporter.config.rootpath / report.nodeid.split("::")[0]).parent
    if not any(entry["passed"] + entry["failed"] or entry["unimported"] or entry["waits_on"] for entry in counts.values()):
        return []  # nothing ran
    lines = []
    for part, entry in counts.items():
        total = entry["passed"] + entry["failed"]
        if not total and entry["unimported"]:  # its test module stops at an import: 0 of its tests run
            lines.append(f"  {part:<22} its tests cannot run: {entry['unimported']}")
        elif not total and entry["waits_on"]:
            lines.append(f"  {part:<22} waits for {entry['waits_on']}, which does not import")
        if not total:
            continue
        # the stubs still in the part's functions (its own module, or those ``parts`` maps it to),
        # whichever function a test met first
        stubs = part_stubs(part, parts.get(part, ()) if isinstance(parts, dict) else (),
                           lambda module, folder=entry["folder"]: _read(folder / f"{module}.py"))
        to_write = not_written(stubs)
        waits = f"waits for {', '.join(sorted(entry['elsewhere']))} ({NOT_WRITTEN})" if entry["elsewhere"] else \
            f"waits for an earlier part ({NOT_WRITTEN})"
        if not entry["failed"]:
            line = f"all {total} tests pass"
        elif entry["stubs"] == entry["failed"] and not entry["passed"]:
            line = to_write if stubs else waits
        else:
            line = f"{entry['passed']} of {total} tests pass" + "".join(
                f"; {what}" for what, shown in ((to_write, stubs), (waits, entry["elsewhere"])) if shown)
        lines.append(f"  {part:<22} {line}")
    return lines


def _read(path):
    return path.read_text(encoding="utf-8") if path.is_file() else None


def keep_going(config) -> None:
    """A test module that cannot be imported (a missing module of an earlier assignment, say) fails
    its own part's line in the table; the other parts' tests still run."""
    config.option.continue_on_collection_errors = True


def use_earlier(conftest, hand_in) -> list:
    """For an assignment that imports the student's own modules of earlier ones: puts the folders
    of those assignments beside this one last on sys.path (modules in this folder come first), and
    gives the ``hand_in`` files ((file, assignment)) found in neither place."""
    here = Path(conftest).resolve().parent
    for name in dict.fromkeys(assignment for _, assignment in hand_in if assignment != here.name):
        if (here.parent / name).is_dir():
            sys.path.append(str(here.parent / name))
    return [(file, assignment) for file, assignment in hand_in
            if not (here / file).is_file() and not (here.parent / assignment / file).is_file()]


def missing_lines(missing) -> list:
    """One line naming the files ``use_earlier`` found missing, and whence; none when nothing is."""
    if not missing:
        return []
    return ["missing: " + ", ".join(f"{file} (your own from {assignment})" for file, assignment in missing)
            + ": copy them into this folder; the tests that import them fail until you do"]


def conftest_hooks(parts) -> dict:
    """The pytest hooks a public tests' conftest needs, for ``parts`` (its PARTS): the book's order,
    a failure in the tests' own words, the progress table last. A conftest with nothing else to
    set up is ``globals().update(public_tests.conftest_hooks(PARTS))``."""
    def pytest_configure(config) -> None:
        keep_going(config)

    def pytest_collection_modifyitems(items) -> None:
        book_order(items, parts)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        """A failure in the tests' own words: one line for a function not written yet."""
        explain(item, call, (yield).get_result())

    def pytest_exception_interact(node, call, report) -> None:
        """A module that cannot be imported, in the same short words."""
        explain_collection(node, call, report, parts)

    def pytest_sessionfinish(session, exitstatus) -> None:
        hide_stubs(session, exitstatus)

    def pytest_terminal_summary(terminalreporter) -> None:
        summary(terminalreporter, parts)

    return {hook.__name__: hook for hook in (pytest_configure, pytest_collection_modifyitems, pytest_runtest_makereport,
                                             pytest_exception_interact, pytest_sessionfinish, pytest_terminal_summary)}
