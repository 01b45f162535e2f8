"""Build the student release of an assignment with nbgrader.

``main_release(NAME)`` assembles an nbgrader course in a temporary folder:

    course/nbgrader_config.py           calls autograder.platforms.nbgrader_plugin.configure
    course/source/NAME/                 the master notebook(s) from source/,
                                        the generated stubs and public tests from assignments/

runs ``nbgrader generate_assignment``, checks that no solution or hidden-test line made it
into the result, and copies it to ``release/NAME/``. ``build_course`` is the same
course kept on disk: the gradebook, ``submitted/`` and ``nbgrader autograde`` live there.
"""
import json
import keyword
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import stubs
from ..grading.course import get as get_assignment, support_sources
from ..paths import ROOT

HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
HIDDEN_END = "### END HIDDEN TESTS"
MARKERS = (stubs.BEGIN, stubs.END, HIDDEN_BEGIN, HIDDEN_END)

CONFIG_BEGIN = "# >>> autograder >>>"
CONFIG_END = "# <<< autograder <<<"
CONFIG = '''\
{begin} written by `python -m autograder release --course`, which rewrites this block
# and keeps the rest of the file: put your own settings (the exchange...) below it.
# Autograde scores the student's modules with the hidden suites, in this trusted process.
# Without the plugin nbgrader would grade with its defaults (stubs over every submission,
# 0 for the class), so any failure to load it stops nbgrader here.
import os
import sys

autograder_repository = {root!r}
try:
    sys.path.insert(0, autograder_repository)
    from autograder.platforms.nbgrader_plugin import configure
    configure(c, {assignment!r}, os.path.dirname(os.path.abspath(__file__)))
except Exception as exc:
    sys.exit(f"nbgrader_config.py: cannot load the autograder from {{autograder_repository}} ({{exc!r}}); "
             "if the repository moved, run `python -m autograder release {assignment} --course "
             "<this folder>` from its new place")
{end}
'''


OLD_CONFIG = "# nbgrader configuration of this course, written by `python -m autograder release`."


def write_config(course, assignment) -> None:
    """Write our block of ``course/nbgrader_config.py``, keeping whatever else the file holds."""
    path = course / "nbgrader_config.py"
    block = CONFIG.format(begin=CONFIG_BEGIN, end=CONFIG_END, root=str(ROOT), assignment=assignment)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if text.startswith(OLD_CONFIG):  # written whole by an earlier version: nothing of the instructor's
        text = ""
    begin, end = text.find(CONFIG_BEGIN), text.find(CONFIG_END)
    if 0 <= begin < end:
        before, after = text[:begin], text[end + len(CONFIG_END):].lstrip("\n")
    else:
        before, after = "", text
    text = before + block + ("\n" + after if after else "")
    path.write_text(text, encoding="utf-8")


class ReleaseError(Exception):
    """The release could not be built (stale stubs, nbgrader failed, a leak)."""


def run_nbgrader(course_dir, *args, check=True) -> subprocess.CompletedProcess:
    """Run ``nbgrader ARGS`` in ``course_dir`` with this interpreter; returns the CompletedProcess."""
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course_dir,
                          capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise ReleaseError(f"nbgrader {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}"
                           f"\n{proc.stderr[-3000:]}")
    return proc


def build_course(assignment, course_dir) -> Path:
    """Write an nbgrader course for ``assignment`` into ``course_dir`` and generate its release.

    Returns the course directory (absolute). Its ``release/<assignment>/`` is the student release.
    """
    problems = stubs.stale_files(assignment)
    if problems:
        raise ReleaseError("assignments/ is out of date with solutions/ (run `python -m autograder stubs`): "
                           + "; ".join(problems))
    notebooks = sorted(get_assignment(assignment).source.glob("*.ipynb"))
    if not notebooks:
        raise ReleaseError(f"no notebook in {get_assignment(assignment).source}")
    course = Path(course_dir).resolve()
    source = course / "source" / assignment
    if source.exists():
        shutil.rmtree(source)
    source.mkdir(parents=True)
    for path in notebooks:
        shutil.copy(path, source / path.name)
    for name in [*stubs.expected_files(assignment), *get_assignment(assignment).data]:
        shutil.copy(get_assignment(assignment).stubs / name, source / name)
    write_config(course, assignment)
    run_nbgrader(course, "generate_assignment", assignment, "--force")
    return course


def _regions(source, inside, outside) -> None:
    """Sort the stripped code lines of ``source`` into solution/hidden regions and the rest."""
    region = None
    for line in source.splitlines():
        text = line.strip()
        if text in (stubs.BEGIN, HIDDEN_BEGIN):
            region = text
        elif text in (stubs.END, HIDDEN_END):
            region = None
        elif text and not text.startswith("#"):
            (inside if region else outside).add(text)


def secret_lines(assignment) -> set:
    """Stripped lines that must not appear in a release: solution code and hidden tests.

    A line counts when it occurs inside a solution or hidden-test region of a master
    (solutions/*.py, the source notebooks) and nowhere in what students get anyway
    (code outside the regions, the public tests, the engine's support modules); lines of nothing but Python's keywords
    and punctuation (a lone ``)``, ``else:``, ``return None``) say nothing and are skipped.
    """
    inside, outside = set(), set()
    for path in sorted(get_assignment(assignment).solutions.glob("*.py")):
        _regions(path.read_text(encoding="utf-8"), inside, outside)
    for path in sorted(get_assignment(assignment).source.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            _regions(source, inside, outside)
    for source in support_sources(get_assignment(assignment)).values():
        _regions(source, inside, outside)
    return {line for line in inside - outside
            if any(not keyword.iskeyword(word) for word in re.findall(r"\w+", line))}


def _file_lines(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return text.splitlines()
    lines = []
    for cell in json.loads(text).get("cells", []):
        for chunk in [cell.get("source", "")] + [o.get("text", "") for o in cell.get("outputs", [])] + \
                [v for o in cell.get("outputs", []) for v in o.get("data", {}).values()]:
            lines.extend("".join(chunk).splitlines() if isinstance(chunk, list) else str(chunk).splitlines())
    return lines + text.splitlines()


def leaks(folder, assignment) -> list:
    """'file:line: text' for every solution or hidden-test line (or marker) found under ``folder``."""
    secrets = secret_lines(assignment)
    found = []
    folder = Path(folder)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        seen = set()
        for number, line in enumerate(_file_lines(path), start=1):
            text = line.strip()
            if text in seen:
                continue
            if text in secrets or any(marker.lstrip("# ") in line for marker in MARKERS):
                seen.add(text)
                found.append(f"{path.relative_to(folder)}:{number}: {text}")
    return found


def main_release(assignment: str, out: Path = None, course: Path = None) -> int:
    """Build the student release of ``assignment`` into ``out`` (default release/<assignment>/).

    With ``course``, the nbgrader course (gradebook, source, release) is kept there for
    collecting and autograding; otherwise it is built in a temporary folder. Returns an exit code.
    """
    out = Path(out) if out else ROOT / "release" / assignment
    try:
        with tempfile.TemporaryDirectory(prefix="autograder-course-") as tmp:
            built = build_course(assignment, course or Path(tmp) / "course")
            released = built / "release" / assignment
            problems = leaks(released, assignment)
            if problems:
                raise ReleaseError("the release leaks solution or hidden-test lines:\n  " + "\n  ".join(problems))
            if out.exists():
                shutil.rmtree(out)
            shutil.copytree(released, out)
    except ReleaseError as exc:
        print(f"release failed: {exc}", file=sys.stderr)
        return 1
    files = sorted(p.name for p in out.iterdir())
    print(f"released {assignment} to {out} ({len(files)} files: {', '.join(files)})")
    if course:
        print(f"nbgrader course kept in {Path(course).resolve()}")
    return 0


def kernel_path(base) -> str:
    """A folder for JUPYTER_PATH whose ``python3`` kernel is this interpreter (the stock
    kernelspec starts whichever ``python`` is first on PATH)."""
    spec = Path(base) / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (autograder)", "language": "python"}))
    return str(Path(base) / "jupyter")

