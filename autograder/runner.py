"""Run the hidden pytest suites against one submission and build its result.

The suites are ordinary pytest files; this module runs them in-process with a plugin
that provides the ``student`` fixture (a sandboxed child) and records points. The result
has the shape of Gradescope's results.json; every other output is rendered from it.
"""
import contextlib
import io
import os
import time

import pytest
import torch

from .paths import SUITES
from .session import MESSAGE_LIMIT, GraderError, StudentFailure, StudentSession
from .shards import suites_digest
from .submission import SubmissionError, clean_text, read_sources
from .zygote import Zygote

REDUCED_WARNING = ("WARNING: the submission ran WITHOUT full isolation ({why}); depending on what is missing it "
                   "could read files, reach the network or signal your processes. Grade untrusted code where "
                   "user namespaces are allowed (see the README).")


class _Collector:
    """pytest plugin: the ``student`` fixture and one record per check."""

    def __init__(self, session):
        self.session = session
        self.records = []
        self.grader_errors = []

    @pytest.fixture
    def student(self):
        # notes: what a passing check has to say (a part judged right although a lower part is
        # wrong); failed_parts and passed_parts: parts that lost and earned points so far, the
        # evidence a later part needs before it credits a student's module that is wrong only
        # through a lower part (lost points: it is wrong; earned points: it is really written).
        self.session.notes = []
        if not hasattr(self.session, "failed_parts"):
            self.session.failed_parts, self.session.passed_parts = set(), set()
        return self.session

    def pytest_collectreport(self, report):
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

    def _record(self, item, call, report):
        marker = item.get_closest_marker("points")
        points = marker.args[0] if marker else 0
        doc = (item.function.__doc__ or item.name).strip().splitlines()[0]
        part = item.module.__name__.rsplit(".", 1)[-1].removeprefix("test_hidden_")
        output = " ".join(dict.fromkeys(getattr(self.session, "notes", []))) if report.passed else ""
        if report.passed and points and hasattr(self.session, "passed_parts"):
            self.session.passed_parts.add(part)
        if report.failed:
            exc = call.excinfo.value if call.excinfo else None
            if isinstance(exc, GraderError):  # raised from a hook it would be pytest's internal error
                output = f"grader error: {clean_text(exc)}"
                self.grader_errors.append(f"{item.nodeid}: {exc}")
            elif isinstance(exc, (AssertionError, StudentFailure)):
                # whole: a crash message keeps the student's file, line and exception
                output = clean_text(str(exc) or "assertion failed", limit=MESSAGE_LIMIT)
                if hasattr(self.session, "failed_parts"):
                    self.session.failed_parts.add(part)
            else:
                output = f"internal grader error ({type(exc).__name__}: {clean_text(exc)})"
                self.grader_errors.append(f"{item.nodeid}: {output}")
        self.records.append({
            "name": f"{part}: {doc}", "part": part, "score": points if report.passed else 0,
            "max_score": points, "status": "passed" if report.passed else "failed",
            "output": output, "visibility": "visible",
        })


def _pytest_args(assignment):
    suite = SUITES / assignment
    return [str(suite), "-c", str(SUITES / "pytest.ini"), "--rootdir", str(SUITES),
            "--confcutdir", str(SUITES), "-q", "--no-header",
            # the feedback comes from the exception itself; formatting tracebacks costs ~30 ms a failure
            "--tb=no",
            # pytest's unraisable-exception plugin runs gc.collect() five times per session (0.4 s)
            "-p", "no:cacheprovider", "-p", "no:unraisableexception", "-p", "no:threadexception"]


class Grader:
    """Grades submissions of one assignment; holds one warm zygote for all of them."""

    def __init__(self, assignment="ch03_attention", isolation="full", hidden=(), timeout=5.0, budget=60.0,
                 zygote=None):
        """``zygote``: one started earlier (before this process imported torch, say); the
        grader owns it from here on."""
        self.assignment = assignment
        # Probes use tiny tensors: a second intra-op thread only adds contention with the child.
        torch.set_num_threads(1)
        self.zygote = zygote or Zygote(hidden=hidden, isolation=isolation)
        self.timeout, self.budget = timeout, budget
        self.suites = suites_digest(assignment)  # in every result: shards graded apart must agree on it

    def close(self):
        self.zygote.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def grade(self, folder):
        """Grade the submission in ``folder``; returns a results.json-shaped dict.

        Raises SubmissionError when the folder is not a submission at all.
        """
        started = time.perf_counter()
        sources, notes = read_sources(folder)
        if not sources:
            raise SubmissionError(f"{folder} holds no Python files")
        session = StudentSession(self.zygote, sources, timeout=self.timeout, budget=self.budget)
        collector = _Collector(session)
        old = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only our plugin and pytest's own
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                pytest.main(_pytest_args(self.assignment), plugins=[collector])
        finally:
            session.close()
            if old is None:
                os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
            else:
                os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = old
        if collector.grader_errors or not collector.records:
            # e.g. a suite that fails to import: pytest's own words say why
            why = collector.grader_errors or [f"the hidden suites ran no check: {printed.getvalue()[-1500:].strip()}"]
            raise GraderError("; ".join(why))
        result = build_result(collector.records, notes, session.isolation, time.perf_counter() - started)
        result["extra_data"]["protections"] = session.protections
        result["extra_data"]["suites"] = self.suites
        return result


def build_result(tests, notes, isolation, seconds):
    parts = {}
    for test in tests:
        got, most = parts.get(test["part"], (0, 0))
        parts[test["part"]] = (got + test["score"], most + test["max_score"])
    output = list(notes)
    if isolation and not isolation.startswith("namespaces"):
        output.insert(0, REDUCED_WARNING.format(why=isolation))
    return {
        "score": sum(t["score"] for t in tests),
        "max_score": sum(t["max_score"] for t in tests),
        "execution_time": round(seconds, 3),
        "output": "\n".join(output),
        "tests": tests,
        "extra_data": {"parts": {p: list(v) for p, v in parts.items()}, "isolation": isolation,
                       "fully_isolated": isolation == "namespaces"},
    }
