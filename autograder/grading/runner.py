"""Run the hidden pytest suites against one submission and build its result.

The suites are ordinary pytest files; this module runs them in-process with a plugin
that provides the ``student`` fixture (a sandboxed child) and records points, one ``Check``
each. The result is built from them once (``result.SubmissionResult``); every output is
rendered from it.
"""
import contextlib
import functools
import inspect
import io
import os
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from . import course, diagnose, kit, repair, shapes
from .grade import digest, syntax_notes
from .kit import seed_of, unnamed
from .result import HINTS, NAMES_MISTAKE, Check, KnownMistake, SubmissionResult
from ..paths import PYTEST_INI
from ..sandbox.session import MESSAGE_LIMIT, GraderError, Refused, StudentFailure, StudentSession
from ..sandbox.submission import SubmissionError, clean_text, read_sources
from ..sandbox.zygote import Zygote
from ..support.public_tests import not_written, part_stubs

class Student:
    """The ``student`` fixture: the submission's sandboxed session (its probes, its sources: every
    attribute not here is the session's) and this grading's own state, kept by the grader.

    ``notes``: what a passing check has to say (a part judged right although a lower part is
    wrong), new for every check; ``failed_parts`` and ``passed_parts``: parts that lost and earned
    points so far, the evidence a later part needs before it credits a student's module that is
    wrong only through a lower part (lost points: it is wrong; earned points: it is really written);
    ``charged``: {part: the mistakes its failed checks named}, the grader's own names, so that a
    later part can build its expected answer, in the grader, with the lower part's mistake."""

    def __init__(self, session) -> None:
        self.session = session
        self.notes = []
        self.failed_parts, self.passed_parts = set(), set()
        self.charged = {}
        self.asked = set()  # the submission's "module.name" the current check called (the repair search's targets)

    def plan(self, steps, **options):
        self.asked.update(step["call"] for step in steps if isinstance(step.get("call"), str)
                          and step["call"].split(".")[0] in self.session.sources)
        return self.session.plan(steps, **options)

    def judged_anew(self) -> None:
        """The check judges again, on the grader's own stand-ins, leaving the answers of the
        student's lower pieces: the stubs and faults those met are no longer its evidence
        (``kit.blank_stub``, the repair search's fault)."""
        self.session.raised.clear()
        self.session.faults.clear()

    def state(self):
        """A copy of what a later check reads of this grading (the parts failed, passed, charged)."""
        return set(self.failed_parts), set(self.passed_parts), {k: set(v) for k, v in self.charged.items()}

    def __getattr__(self, name):  # only for names not set here
        if name == "session":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.session, name)


class _Collector:
    """pytest plugin: the ``student`` and ``seeds`` fixtures and one record per check."""

    def __init__(self, session, assignment=None) -> None:
        self.context = Student(session)
        self.assignment = assignment  # its name: where a step raised, the reference runs the same steps
        self.checks = []
        self.grader_errors = []
        self.arguments = None  # the current check's arguments, where the suites run directly (``_Suites.run``)
        self.failures = []     # repair.Failed: the failed checks a search may run again
        self.passes = []       # and the passed ones, which a repair must keep passing

    @pytest.fixture
    def student(self) -> Student:
        return self.student_session()

    @pytest.fixture
    def seeds(self, request):
        """``seeds(salt)``: the seed of this check's input ``salt``, derived from the check's name,
        ``file::function`` (``kit.seed_of``), so adding, removing or reordering checks never shifts
        another check's inputs; the salt (the input's kind and index, ``f"x{i}"``) tells one
        check's inputs apart. Seeds the book prints (123, ...) are written as the book's."""
        return seeds_of(request.path.stem, request.node.originalname)

    def student_session(self) -> Student:
        self.context.notes = []
        self.context.asked = set()
        return self.context

    def pytest_collectreport(self, report) -> None:
        # A suite file that does not import would silently shrink max_score: a grader error.
        if report.failed:
            self.grader_errors.append(f"{report.nodeid} could not be collected: "
                                      + clean_text(" ".join(report.longreprtext.strip().splitlines()[-3:])))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" or (report.when == "setup" and report.failed):
            self._record(item, call, report)

    def _record(self, item, call, report) -> None:
        self.record(_Check.of(item), report.passed, report.failed, call.excinfo.value if call.excinfo else None)

    def record(self, check, passed, failed, exc) -> None:
        """One check's outcome: ``passed``, ``failed`` (neither: skipped) with ``exc``, what it raised."""
        points, doc, part = check.points, check.doc, check.part
        if self.arguments is not None and (passed or isinstance(exc, (AssertionError, StudentFailure))):
            (self.passes if passed else self.failures).append(self._failed(check))
        output = " ".join(dict.fromkeys(self.context.notes)) if passed else ""
        mistake = None
        if passed and points:
            self.context.passed_parts.add(part)
        if failed:
            if isinstance(exc, GraderError):  # raised from a hook it would be pytest's internal error
                output = f"grader error: {clean_text(exc)}"
                self.grader_errors.append(f"{check.nodeid}: {exc}")
            elif isinstance(exc, (AssertionError, StudentFailure)):
                # whole: a crash message keeps the student's file, line and exception
                output = clean_text(str(exc) or "assertion failed", limit=MESSAGE_LIMIT)
                if isinstance(exc, KnownMistake):  # raised by a check here, never by the child
                    mistake = clean_text(exc.mistake)
                else:  # what the failure itself shows: one of diagnose's fixed names, never the child's text
                    sources = getattr(self.context.session, "sources", None)  # to read the line a failure names
                    mistake = diagnose.from_failure(str(exc), getattr(exc, "sizes", None), sources)
                    output += self._shapes(str(exc))
                    if mistake:
                        output += NAMES_MISTAKE.format(mistake)
                instead = kit.blank_stub(getattr(self.context.session, "raised", ())) if mistake else None
                if instead:  # a stub's answers are no mistake of the student's (kit.blank_stub)
                    output, mistake = clean_text(instead, limit=MESSAGE_LIMIT), None
                self.context.failed_parts.add(part)
                if mistake:
                    self.context.charged.setdefault(part, set()).add(mistake)
            else:
                output = f"internal grader error ({type(exc).__name__}: {clean_text(exc)})"
                self.grader_errors.append(f"{check.nodeid}: {output}")
        self.checks.append(Check(f"{part}: {doc}", part, points if passed else 0, points,
                                  "passed" if passed else "failed", output, mistake=mistake,
                                  picture=getattr(exc, "picture", None) if failed else None,
                                  # set by grading.compare in this process, on the answer the child gave
                                  answer_digest=getattr(exc, "answer_digest", None) if failed else None))
        if self.context.session is not None:
            self.context.session.faults.clear()  # the next check's begin afresh
            self.context.session.raised.clear()

    def _failed(self, check):
        """The check that just ran, as the repair search runs it again (``repair.Failed``)."""
        arguments, state = dict(self.arguments), self.context.state()
        faults = self.context.session.faults
        fault = (faults[-1].where.module, faults[-1].where.function, faults[-1].where.line) if faults else None

        def passes(session):
            student = Student(session)
            student.failed_parts, student.passed_parts = set(state[0]), set(state[1])
            student.charged = {k: set(v) for k, v in state[2].items()}
            try:
                with unnamed(), warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                    warnings.simplefilter("ignore")
                    check.function(**{n: student if n == "student" else arguments[n] for n in check.arguments})
            except (Exception, pytest.skip.Exception, pytest.fail.Exception, pytest.xfail.Exception):
                return False
            return True
        return repair.Failed(len(self.checks), passes, tuple(sorted(self.context.asked)), fault)

    def _shapes(self, text) -> str:
        """Where the failure is a step that raised in the student's code: their tensors' shapes
        there, and the book's where they differ (grading.shapes), as a sentence to append."""
        session = self.context.session
        fault = session.fault(text) if session is not None and self.assignment else None
        explained = shapes.explain(fault, session.sources, self.assignment) if fault else None
        return " " + clean_text(explained, limit=MESSAGE_LIMIT) if explained else ""


def seeds_of(file_stem, function_name):
    """The ``seeds`` fixture's value for the check ``function_name`` of ``file_stem``.py (given
    by pytest and by the direct run alike, so both draw the same inputs)."""
    return functools.partial(seed_of, f"{file_stem}::{function_name}")


class _Check:
    """What the grader needs of one collected check: the function, its fixtures, its points."""

    def __init__(self, nodeid, function, fixtures, arguments, points, doc, part) -> None:
        self.nodeid, self.function, self.points, self.doc, self.part = nodeid, function, points, doc, part
        self.fixtures, self.arguments = fixtures, arguments  # set up in this order; passed to the function

    @functools.cached_property
    def seeds(self):
        """Its ``seeds`` fixture: made once, the same for every grading."""
        return seeds_of(Path(self.nodeid.split("::")[0]).stem, self.function.__name__)

    @classmethod
    def of(cls, item) -> "_Check":
        marker = item.get_closest_marker("points")
        return cls(item.nodeid, item.obj, tuple(item.fixturenames), tuple(item._fixtureinfo.argnames),
                   marker.args[0] if marker else 0, (item.function.__doc__ or item.name).strip().splitlines()[0],
                   item.module.__name__.rsplit(".", 1)[-1].removeprefix("test_hidden_"))


# Hooks a suite's conftest may define that act at collection only; with any other, every
# grading runs under pytest itself.
_COLLECTION_HOOKS = {"pytest_collection_modifyitems", "pytest_configure", "pytest_generate_tests",
                     "pytest_collect_file", "pytest_ignore_collect", "pytest_itemcollected"}


class _Suites:
    """The hidden suites of one assignment, collected by pytest once per grader.

    pytest's configuration, plugins, collection and per-check reports cost about 0.1 s a run;
    a class paid them per submission. Collected once, each check is a plain call with the
    same fixtures: ``student`` (the submission) and the suites' session fixtures (``ref``),
    evaluated once per grading as pytest's session would. Suites that need more of pytest
    (other fixtures, marks that skip or parametrize, hooks around a check) are run by
    pytest.main per grading, as before (``direct`` is False)."""

    def __init__(self, assignment) -> None:
        collector = _Collector(None)
        finish = _CollectionFinish(assignment.suites.parent)
        printed = io.StringIO()
        with _no_plugin_autoload(), contextlib.redirect_stdout(printed):
            pytest.main([*_pytest_args(assignment), "--collect-only"], plugins=[collector, finish])
        self.errors, self.printed = collector.grader_errors, printed.getvalue()
        self.checks, self.fixtures = [], {}
        self.direct = finish.items is not None and self._plain(finish)
        if self.direct:
            self.checks = [_Check.of(item) for item in finish.items]

    def _plain(self, finish) -> bool:
        for plugin in finish.plugins:
            if any(name.startswith("pytest_") and name not in _COLLECTION_HOOKS for name in dir(plugin)):
                return False
        for item in finish.items:
            if hasattr(item, "callspec") or any(m.name != "points" for m in item.iter_markers()):
                return False
            if "request" in item._fixtureinfo.argnames:  # pytest's own request object: pytest's run
                return False
            if not all(self._fixture(name, item._fixtureinfo.name2fixturedefs) for name in item.fixturenames):
                return False
        return True

    def _fixture(self, name, definitions) -> bool:
        """Whether the fixture ``name`` can be had without pytest (and note how)."""
        if name in ("student", "seeds", "request"):  # given per check by ``run`` (request: only seeds's)
            return True
        defs = definitions.get(name, ())
        if len(defs) != 1:
            return False
        fixture = defs[0]
        if (fixture.scope != "session" or fixture.params is not None or inspect.isgeneratorfunction(fixture.func)
                or not all(self._fixture(arg, definitions) for arg in fixture.argnames)):
            return False
        self.fixtures[name] = fixture
        return True

    def run(self, collector) -> None:
        """Every check once, in order, recorded by ``collector`` as its pytest hooks would."""
        values, failures = {}, {}

        def value(name):  # a session fixture: evaluated once, its error repeated for every check
            if name == "student":
                return collector.student_session()
            if name in failures:
                raise failures[name]
            if name not in values:
                fixture = self.fixtures[name]
                try:
                    values[name] = fixture.func(**{arg: value(arg) for arg in fixture.argnames})
                except BaseException as exc:
                    failures[name] = exc
                    raise
            return values[name]

        # As pytest: a skip is neither passed nor failed; anything else raised fails the check.
        skipped = (pytest.skip.Exception, pytest.xfail.Exception)
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            for check in self.checks:
                try:
                    values_now = {name: check.seeds if name == "seeds" else value(name)
                                  for name in check.fixtures if name != "request"}
                except (KeyboardInterrupt, pytest.exit.Exception):
                    raise
                except BaseException as exc:  # a fixture's error: the check fails at setup
                    collector.record(check, False, True, exc)
                    continue
                collector.arguments = values_now
                try:
                    check.function(**{name: values_now[name] for name in check.arguments})
                except skipped:
                    collector.record(check, False, False, None)
                except (KeyboardInterrupt, pytest.exit.Exception):
                    raise
                except BaseException as exc:
                    collector.record(check, False, True, exc)
                else:
                    collector.record(check, True, False, None)


class _CollectionFinish:
    """pytest plugin: the collected checks, and the plugins (conftests) that saw them."""

    items = plugins = None

    def __init__(self, folder) -> None:
        self.folder = folder  # the suites' folder: conftests from there are the suites' own

    def pytest_collection_finish(self, session) -> None:
        self.items = list(session.items)
        self.plugins = [p for p in session.config.pluginmanager.get_plugins()
                        if str(getattr(p, "__file__", "")).startswith(str(self.folder))]


@contextlib.contextmanager
def _no_plugin_autoload():
    old = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only our plugin and pytest's own
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = old


def _pytest_args(assignment) -> list[str]:
    suites = assignment.suites.parent
    return [str(assignment.suites), "-c", str(PYTEST_INI), "--rootdir", str(suites),
            "--confcutdir", str(suites), "-q", "--no-header",
            # the feedback comes from the exception itself; formatting tracebacks costs ~30 ms a failure
            "--tb=no",
            # pytest's unraisable-exception plugin runs gc.collect() five times per session (0.4 s)
            "-p", "no:cacheprovider", "-p", "no:unraisableexception", "-p", "no:threadexception"]


_current = None   # the assignment whose suites and reference modules sys.modules holds now
_put_away = {}    # assignment's suites folder -> {name: module} of its suites and reference while another one runs


def _switch_to(assignment) -> None:
    """Give the suites of ``assignment`` the module names to themselves.

    The suites and the reference modules are imported by their plain names (two chapters
    both have ``exercises.py`` and ``test_hidden_exercises.py``), so grading another
    assignment in the same process first puts away the modules loaded from any course folder
    (and their folders on sys.path, which the conftests add again); they come back, still
    warm, when their assignment is graded again."""
    global _current
    if _current is None or _current.suites == assignment.suites:  # the process's first: nothing to put away
        _current = assignment
        return
    roots = {assignment.root, _current.root}
    folders = tuple(str(p) + os.sep for root in roots for p in (root / "solutions", root / "autograder" / "suites"))
    ours = {}
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if isinstance(where, str) and os.path.realpath(where).startswith(folders):
            ours[name] = sys.modules.pop(name)
    _put_away[_current.suites] = ours
    sys.path[:] = [p for p in sys.path if not (os.path.realpath(p or ".") + os.sep).startswith(folders)]
    sys.modules.update(_put_away.pop(assignment.suites, {}))
    _current = assignment


class Grader:
    """Grades submissions; holds one warm zygote for all of them."""

    def __init__(self, assignment=None, isolation="full", hidden=(), timeout=5.0, budget=60.0,
                 zygote=None, unsafe_same_uid=False, ahead=True, earlier_reference=False, hints="change",
                 repair_seconds=None) -> None:
        """``assignment``: the one every submission is graded as (default: each submission's
        own, found from its folder, see course.detect). ``zygote``: one started earlier
        (before this process imported torch, say); the grader owns it from here on.
        ``unsafe_same_uid``: grade even where a child would run with this process's uid
        (trusted code only; otherwise grade() raises Refused there). ``ahead``: start the next
        submission's child as a grading ends (False where only one is graded).
        ``earlier_reference``: a module of an earlier assignment this one builds on that the
        submission lacks is the course's reference (see course.submission_sources).
        ``hints``: how much of a verified repair a failed check's feedback shows (``result.HINTS``;
        "none": no repair search at all); ``repair_seconds``: the search's time bound per submission
        in CPU seconds (default: half the CPU seconds the grading took, its own and its child's, at
        least ``repair.MIN_SECONDS``)."""
        if hints not in HINTS:
            raise ValueError(f"hints must be one of {', '.join(HINTS)}, not {hints!r}")
        self.hints, self.repair_seconds = hints, repair_seconds
        self.assignment = course.get(assignment) if assignment else None
        self.unsafe_same_uid = unsafe_same_uid
        # Probes use tiny tensors: a second intra-op thread only adds contention with the child.
        torch.set_num_threads(1)
        self.zygote = zygote or Zygote(hidden=hidden, isolation=isolation,
                                       warm=course.warm_ups(assignment and [assignment]))
        self.timeout, self.budget = timeout, budget
        self._suites = {}  # assignment's suites folder -> _Suites, collected at its first grading
        self.ahead = ahead
        self.earlier_reference = earlier_reference

    def close(self) -> None:
        self.zygote.close()

    def __enter__(self) -> "Grader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def grade(self, folder, assignment=None):
        """``grade_result`` as the result file's dict (Gradescope's results.json shape)."""
        return self.grade_result(folder, assignment).to_json()

    def grade_result(self, folder, assignment=None):
        """Grade the submission in ``folder`` as ``assignment`` (default: the grader's, else the
        one the folder holds); returns its SubmissionResult.

        Raises SubmissionError when the folder is not a submission at all.
        """
        started, cpu_started = time.perf_counter(), time.process_time()
        sources, notes = read_sources(folder)
        if not sources:
            raise SubmissionError(f"{folder} holds no Python files")
        try:
            assignment = course.get(assignment) if assignment else self.assignment or course.detect(folder)
        except course.CourseError as exc:
            raise SubmissionError(str(exc)) from None
        syntax = syntax_notes(sources)  # the folder's own files; read once, here
        own = tuple(sources)  # the files the student wrote: the only ones a repair edits
        if assignment.builds_on:
            sources, notes = course.submission_sources(folder, assignment.name, self.earlier_reference,
                                                       own=(sources, notes))
        self.zygote.prepare()  # the child sets up its sandbox while the suites are collected
        _switch_to(assignment)
        suites = self._suites.get(assignment.suites)
        if suites is None:
            suites = self._suites[assignment.suites] = _Suites(assignment)
        # the child runs the engine's set-up modules, whatever copy the folder holds (chapter 5's checks
        # hand the student's functions the stand-in models of stand_ins.py)
        session = StudentSession(self.zygote, {**sources, **course.support_sources(assignment)},
                                 timeout=self.timeout, budget=self.budget,
                                 unsafe_same_uid=self.unsafe_same_uid)
        collector = _Collector(session, assignment.name)
        printed = io.StringIO()
        try:
            if suites.direct:
                collector.grader_errors += suites.errors
                printed.write(suites.printed)
                suites.run(collector)
            else:
                with _no_plugin_autoload(), contextlib.redirect_stdout(printed):
                    pytest.main(_pytest_args(assignment), plugins=[collector])
            # the search's bound: a share of the grading's own work, in CPU seconds as its clock counts
            work = time.process_time() - cpu_started + session.cpu_seconds()
            searched = self._repairs(collector, session, own, work, assignment)
        finally:
            session.close()
            if self.ahead:
                self.zygote.prepare()  # the next submission's
        if session.refused:  # once, not once per check
            raise Refused(session.refused)
        if collector.grader_errors or not collector.checks:
            # e.g. a suite that fails to import: pytest's own words say why
            why = collector.grader_errors or [f"the hidden suites ran no check: {printed.getvalue()[-1500:].strip()}"]
            raise GraderError("; ".join(why))
        result = SubmissionResult.build(collector.checks, notes, session.isolation, time.perf_counter() - started,
                                        protections=session.protections, assignment=assignment.name,
                                        # shards graded apart must agree on it
                                        suites=course.suites_digest(assignment.name))
        result = replace(result, repair_search=searched)
        # what each part still has to write: the public tests' one list, read here from the submission
        unwritten = {part: not_written(left) for part in assignment.parts
                     if (left := part_stubs(part, assignment.functions_of(part), sources.get))}
        return replace(result.with_notes(syntax), fingerprint=digest(sources), unwritten=unwritten or None)

    def _repairs(self, collector, session, own, seconds, assignment):
        """Search a verified one-edit repair for each failed check (``repair.search``) and put it in
        that check's feedback, first; returns what the search did (None where nothing failed, or
        ``hints`` is "none"). The checks keep their scores and statuses: a repair is feedback."""
        if self.hints == "none" or not collector.failures or session.refused:
            return None
        def new_session(sources):
            return StudentSession(self.zygote, sources, timeout=self.timeout, budget=self.budget,
                                  unsafe_same_uid=self.unsafe_same_uid)
        bound = self.repair_seconds
        if bound is None:
            bound = max(repair.MIN_SECONDS, repair.SHARE * seconds)
            if all(collector.checks[f.index].mistake for f in collector.failures):
                bound *= repair.NAMED_SHARE  # every failure is named already: a repair only adds the line
        self.zygote.prepare()  # the child a repair is confirmed in starts while the search runs
        found, done = repair.search(collector.failures, session, own, new_session, bound, kept=collector.passes,
                                    known=repair.reference_lines(assignment))
        for index, (data, others) in found.items():
            check = collector.checks[index]
            first = clean_text(repair.sentence(data, self.hints, others), limit=MESSAGE_LIMIT)
            collector.checks[index] = replace(check, output=f"{first} {check.output}", repair=data)
        return done

