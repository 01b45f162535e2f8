"""The code stays clean of what ruff finds with the project's settings (pyproject.toml): unused
and undefined names, imports out of place, pycodestyle's errors; and the engine's return types,
which mypy checks against the code (pyproject.toml, [tool.mypy])."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff():
    """ruff's command: the one installed beside this Python, else on PATH, else None."""
    beside = Path(sys.executable).with_name("ruff")
    return str(beside) if beside.exists() else shutil.which("ruff")


def test_ruff_finds_nothing():
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -r requirements.txt)")
    run = subprocess.run([ruff, "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_ruff_would_catch_an_unused_import(tmp_path):
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -r requirements.txt)")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "bad.py").write_text("import os\n")
    run = subprocess.run([ruff, "check", "--no-cache", "."], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "F401" in run.stdout


def _mypy(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def _has_mypy():
    return subprocess.run([sys.executable, "-c", "import mypy"], capture_output=True).returncode == 0


def public_functions_without_a_return_type():
    """["file:line name"] of every public function and method of the engine (autograder/, not the
    course's suites or templates; module level and in classes, not nested) without a return type."""
    import ast
    missing = []
    for path in sorted((ROOT / "autograder").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(("autograder/suites/", "autograder/platforms/templates/",
                                "autograder/authoring/templates/")):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes = [tree] + [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
        missing += [f"{relative}:{node.lineno} {node.name}" for scope in scopes for node in scope.body
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_")
                    and node.returns is None]
    return missing


# Public functions still without a return type: the number only goes down (a new function states its
# type; mypy then checks it against the body).
MAX_UNTYPED = 151


def test_the_engines_public_functions_state_their_return_types():
    missing = public_functions_without_a_return_type()
    assert len(missing) <= MAX_UNTYPED, (
        f"{len(missing)} public functions of the engine without a return type, more than the {MAX_UNTYPED} left "
        "to do: give the new ones `-> T` (mypy checks it against the body):\n  " + "\n  ".join(missing))


def test_mypy_finds_nothing():
    if not _has_mypy():
        pytest.skip("mypy is not installed (pip install -r requirements.txt)")
    run = _mypy()
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_mypy_would_catch_a_wrong_return_type(tmp_path):
    if not _has_mypy():
        pytest.skip("mypy is not installed (pip install -r requirements.txt)")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "autograder").mkdir()
    (tmp_path / "autograder" / "bad.py").write_text('def count() -> int:\n    return "three"\n')
    run = _mypy(cwd=tmp_path)
    assert run.returncode == 1 and "Incompatible return value type" in run.stdout, run.stdout
