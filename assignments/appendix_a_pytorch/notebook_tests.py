"""The notebook's helper: ``public_tests(part)`` runs the public tests of one part from a cell.

The one master of what every assignment's notebook calls (``source/<assignment>/``'s first code
cell imports it); the stub generator copies it beside the student's modules (the manifest's
``support``). A part's tests are ``test_<part>.py`` beside the notebook, whichever modules the
part's functions live in (the manifest may map a part to some of a module's functions).
"""
import glob
import os
import subprocess
import sys

_public: dict = {}


def use_earlier(*assignments: str) -> None:
    """Let the notebook import the modules of the earlier ``assignments`` it builds on: the copies
    in this folder if you made them, else those in ``../<assignment>`` (appended last, so that a
    module in this folder always comes first)."""
    for earlier in assignments:
        folder = os.path.abspath(os.path.join("..", earlier))
        if os.path.isdir(folder) and folder not in sys.path:
            sys.path.append(folder)


def public_tests(part: str) -> None:
    """Print which public tests of ``part`` (in test_<part>.py beside this notebook) pass, and fail
    with the list of those that do not. All the public tests run in a fresh Python, once for each
    version of the files in this folder. A skipped test says why and does not fail."""
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        return  # when your work is graded, the hidden checks score the part instead
    tests = f"test_{part}.py"
    if not os.path.isfile(tests):
        raise AssertionError(f"{tests} is not beside this notebook: the public tests of {part} are in it")
    files = sorted((name, os.stat(name).st_mtime_ns) for name in glob.glob("*.py"))
    if _public.get("files") != files:
        run = subprocess.run([sys.executable, "-m", "pytest", "-vv", "-rA", "--tb=no", "--color=no",
                              "-p", "no:cacheprovider", "--continue-on-collection-errors",
                              *glob.glob("test_*.py")],
                             capture_output=True, text=True)
        _public.update(files=files, lines=(run.stdout + run.stderr).splitlines())
    results = [line.replace(tests + "::", "") for line in _public["lines"]
               if tests in line and line.startswith(("PASSED", "FAILED", "ERROR", "SKIPPED"))]
    skipped = [line for line in results if line.startswith("SKIPPED")]
    failing = [line for line in results if line.startswith(("FAILED", "ERROR"))]
    for line in dict.fromkeys(line for line in _public["lines"] if line.startswith("missing: ")):
        print(line)  # a file you hand in is not here: what, and where it comes from
    print(f"{part}: {len(results) - len(failing) - len(skipped)} of {len(results)} public tests pass"
          + "".join(f"\n  {line}" for line in skipped))
    if failing or not results:
        raise AssertionError(f"public tests of {part} that do not pass:\n  "
                             + "\n  ".join(failing or [f"none ran: is {tests} beside this notebook?"]))
