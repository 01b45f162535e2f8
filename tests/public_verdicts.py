"""The public tests of one assignment run on many submissions, in one process: which tests fail.

``python tests/public_verdicts.py ASSIGNMENT`` reads a JSON list of ``[name, {file: text}]`` on
stdin and prints ``{name: [nodeid of each failed test]}``. Each submission is a folder as a
student has it (the stubs' folder with its generated conftest and support modules, the
submission's modules written over the stubs); pytest runs in this process, one session per
submission, with the previous submission's modules forgotten first (``import torch`` once, not
once per submission; no assertion rewriting and no garbage collection at every session end:
half a second a submission).
"""
import contextlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.grading import course  # noqa: E402


class _Failed:
    """Notes the tests that fail (a failed set-up or call; a module that cannot be imported
    fails every test of it, as the student's run shows)."""

    def __init__(self):
        self.failed = []

    def pytest_runtest_logreport(self, report):
        if report.failed and report.nodeid not in self.failed:
            self.failed.append(report.nodeid)

    def pytest_collectreport(self, report):
        if report.failed:
            self.failed.append(report.nodeid)


def _forget(folder):
    """Forget every module imported from ``folder`` (the student's, the tests', the conftest)."""
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path.startswith(str(folder)):
            del sys.modules[name]


def verdicts(assignment, submissions):
    """{name: [failed test nodeids, relative to the folder]} of ``submissions`` ([(name, {file: text})])."""
    stubs = course.get(assignment).stubs
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, sources) in enumerate(submissions):
            folder = Path(tmp) / f"s{i}" / assignment
            shutil.copytree(stubs, folder, ignore=shutil.ignore_patterns("__pycache__"))
            for filename, text in sources.items():
                (folder / filename).write_text(text, encoding="utf-8")
            failed = _Failed()
            path = list(sys.path)
            with contextlib.redirect_stdout(io.StringIO()):
                pytest.main(["-q", "-p", "no:cacheprovider", "--assert=plain", "-p", "no:unraisableexception",
                             "-p", "no:threadexception", str(folder)], plugins=[failed])
            sys.path[:] = path
            _forget(folder)
            out[name] = [Path(nodeid.split("::")[0]).name + nodeid[len(nodeid.split("::")[0]):]
                         for nodeid in failed.failed]
    return out


if __name__ == "__main__":
    print(json.dumps(verdicts(sys.argv[1], json.load(sys.stdin))))
