"""Without a private root, uid nobody needs a Python it can reach (autograder.sandbox.interpreter).

A fresh machine's default Python can live under a mode-700 home (pyenv's under /root, and a
virtual environment made from it points there): a child or kernel dropped to nobody outside
a private root then cannot import what it had not loaded. These tests check the choice of an
interpreter, the one-line message where there is none, and an honest submission graded
without namespaces that imports a module the warm process never loaded.
"""
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.sandbox import interpreter
from autograder.paths import SOLUTIONS
from autograder.grading.runner import Grader
from nobody import python_nobody_runs

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="children change to uid nobody only when the grader is root")


@pytest.fixture
def open_tmp():
    """A folder every user can reach (pytest's own tmp_path is under a mode-700 folder)."""
    folder = Path(tempfile.mkdtemp(dir="/tmp", prefix="interpreter-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_blocked_names_the_folder_that_stops_nobody(open_tmp):
    home = open_tmp / "home"
    (home / "lib").mkdir(parents=True)
    (home / "lib" / "os.py").write_text("")
    home.chmod(0o700)
    assert interpreter.blocked(home / "lib" / "os.py") == f"{home} (mode 700)"
    home.chmod(0o711)   # can pass, cannot list: enough to reach a file by name
    assert interpreter.blocked(home / "lib" / "os.py") is None
    (home / "lib" / "os.py").chmod(0o600)
    assert interpreter.blocked(home / "lib" / "os.py") == f"{home / 'lib' / 'os.py'} (mode 600)"


def test_where_nobody_cannot_reach_python_the_message_says_which_path_and_what_to_do(open_tmp, monkeypatch):
    home = open_tmp / "home"
    home.mkdir(mode=0o700)
    monkeypatch.setattr(interpreter, "own_paths", lambda: [str(home)])
    monkeypatch.setenv(interpreter.USER_VENV, str(open_tmp / "no-venv"))
    python, why = interpreter.python_for_others(("torch",))
    assert python is None
    assert "\n" not in why
    assert why.startswith(f"uid nobody cannot reach this Python ({home} (mode 700)), and there is no "
                          f"{open_tmp / 'no-venv' / 'bin' / 'python'}: make a virtual environment")
    assert f"-m venv {open_tmp / 'no-venv'}" in why and "$AUTOGRADER_USER_VENV" in why
    # A virtual environment nobody cannot reach either is no way out, and is named.
    venv = open_tmp / "private-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    venv.chmod(0o700)
    monkeypatch.setenv(interpreter.USER_VENV, str(venv))
    python, why = interpreter.python_for_others(("torch",))
    assert python is None and f"{venv / 'bin' / 'python'} " in why
    if os.geteuid() == 0:   # (its owner, an ordinary user, runs it: then it is the wrong Python, and named)
        assert f"nor {venv / 'bin' / 'python'} (" in why


def test_python_for_others_is_this_one_where_nobody_reaches_it(monkeypatch):
    monkeypatch.setattr(interpreter, "own_paths", lambda: ["/usr"])
    assert interpreter.python_for_others(("torch",)) == (sys.executable, None)


@pytest.mark.privileged
@ROOT_ONLY
def test_without_namespaces_a_child_as_nobody_imports_what_the_zygote_never_loaded(tmp_path):
    """An honest student's ``import statistics`` must not cost points where the grader's own
    Python is out of nobody's reach (the zygote then runs one it can reach)."""
    python_nobody_runs(("torch", "safetensors", "numpy"), "a child as nobody without namespaces")
    folder = tmp_path / "honest"
    shutil.copytree(SOLUTIONS / "ch03_attention", folder, ignore=shutil.ignore_patterns("test_*", "__pycache__"))
    module = folder / "simple_attention.py"
    module.write_text("import colorsys, fractions, statistics  # loaded by nobody before\n" + module.read_text())
    with Grader(isolation="off") as grader:
        result = grader.grade(folder)
    assert result["score"] == 100, [t["output"] for t in result["tests"] if t["status"] != "passed"][:2]
    assert "a uid of its own" in result["extra_data"]["protections"]["held"]   # another user than root
