"""The code stays clean of what ruff finds with the project's settings (pyproject.toml): unused
and undefined names, imports out of place, pycodestyle's errors."""
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
