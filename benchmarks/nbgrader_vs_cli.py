"""Wall time of `nbgrader autograde` beside the CLI grader's, on the same submissions, in one run.

    python benchmarks/nbgrader_vs_cli.py [--runs 3] [--class-size 20] [--skip-unsandboxed]

A temporary nbgrader course gets a class of submissions cycling through three kinds (the
reference modules, the reference with 1/sqrt(d_k) missing from CausalAttention, the blank
stubs). Every number is a median over the runs (and over the submissions, per submission):

  import torch                 `python -c "import torch"`, the floor of any fresh process
  nbgrader, one submission     `nbgrader autograde ch03_attention --student S --force`, fresh process
  ..., kernel not sandboxed    the same in a twin course whose config swaps SandboxedExecute back for
                               nbgrader's own Execute (what autograde did before the kernel sandbox)
  CLI, one submission          `python -m autograder grade FOLDER --json F`, fresh process
  nbgrader, whole class        one `nbgrader autograde ch03_attention --force`, divided by the class size
  CLI, whole class             one `python -m autograder grade submitted/ --regrade`, divided likewise
                               (fresh process: its start, the zygote's and any workers' included)
  Grader().grade, warm         in-process, one warm Grader, per submission
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.paths import ASSIGNMENTS, SOLUTIONS  # noqa: E402
from autograder.authoring.release import build_course, kernel_path  # noqa: E402
from autograder.grading.runner import Grader  # noqa: E402

ASSIGNMENT = "ch03_attention"
MODULES = ["simple_attention.py", "self_attention.py", "causal_attention.py", "multihead_attention.py",
           "exercises.py"]
SCALED = "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)"


def timed(command, cwd, env=None):
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command))} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return seconds


UNSANDBOXED = """
# For comparison only: the notebook's kernel outside the sandbox (nbgrader's own Execute).
from nbgrader.preprocessors import Execute
c.Autograde.autograde_preprocessors = [Execute if p.__name__ == "SandboxedExecute" else p
                                       for p in c.Autograde.autograde_preprocessors]
"""


def setup(base, class_size):
    os.environ["JUPYTER_PATH"] = kernel_path(base)  # the kernel is this interpreter
    course = build_course(ASSIGNMENT, base / "course")
    twin = build_course(ASSIGNMENT, base / "unsandboxed")
    with open(twin / "nbgrader_config.py", "a") as config:
        config.write(UNSANDBOXED)
    folders = {}
    kinds = (("correct", SOLUTIONS), ("buggy", SOLUTIONS), ("blank", ASSIGNMENTS))
    for i in range(class_size):
        kind, modules = kinds[i % len(kinds)]
        student = f"{kind}{i:02d}"
        folder = course / "submitted" / student / ASSIGNMENT
        shutil.copytree(course / "release" / ASSIGNMENT, folder)
        for name in MODULES:
            shutil.copy(modules / ASSIGNMENT / name, folder / name)
        folders[student] = folder
        if kind == "buggy":
            buggy = folder / "causal_attention.py"
            buggy.write_text(buggy.read_text().replace(SCALED, "attn_weights = torch.softmax(attn_scores, dim=-1)"))
    shutil.copytree(course / "submitted", twin / "submitted")
    return course, twin, folders


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--class-size", type=int, default=20)
    parser.add_argument("--skip-unsandboxed", action="store_true",
                        help="leave out the twin course with nbgrader's own kernel (halves the run)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    nbgrader = [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"]
    with tempfile.TemporaryDirectory(prefix="nbgrader-bench-") as tmp:
        course, twin, folders = setup(Path(tmp), args.class_size)
        singles = list(folders)[:3]  # one of each kind for the one-submission rows
        size = len(folders)
        rows = {"import torch": [], "nbgrader, one submission": [],
                "nbgrader, one submission, kernel not sandboxed": [], "CLI, one submission": [],
                f"nbgrader, whole class of {size}": [], f"nbgrader, class of {size}, kernel not sandboxed": [],
                f"CLI, whole class of {size}": [], "Grader().grade, warm": []}
        for _ in range(args.runs):
            rows["import torch"].append(timed([sys.executable, "-c", "import torch"], ROOT))
            for student in singles:
                rows["nbgrader, one submission"].append(timed([*nbgrader, "--student", student], course))
                if not args.skip_unsandboxed:
                    rows["nbgrader, one submission, kernel not sandboxed"].append(
                        timed([*nbgrader, "--student", student], twin))
                rows["CLI, one submission"].append(timed(
                    [sys.executable, "-m", "autograder", "grade", str(folders[student]),
                     "--json", str(Path(tmp) / "r.json")], ROOT))
            rows[f"nbgrader, whole class of {size}"].append(timed(nbgrader, course) / size)
            if not args.skip_unsandboxed:
                rows[f"nbgrader, class of {size}, kernel not sandboxed"].append(timed(nbgrader, twin) / size)
            rows[f"CLI, whole class of {size}"].append(timed(
                [sys.executable, "-m", "autograder", "grade", str(course / "submitted"), "--regrade",
                 "--out", str(Path(tmp) / "graded")], ROOT) / size)
        with Grader(ASSIGNMENT) as grader:
            grader.grade(folders[singles[0]])  # warm-up: reference, suites, zygote
            for _ in range(args.runs):
                for student in singles:
                    started = time.perf_counter()
                    grader.grade(folders[student])
                    rows["Grader().grade, warm"].append(time.perf_counter() - started)
    medians = {name: statistics.median(values) for name, values in rows.items() if values}
    print(f"median wall time per submission ({args.runs} runs, class of {size}, "
          f"{os.cpu_count()} cores, python {sys.version.split()[0]}, load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end)")
    for name, value in medians.items():
        print(f"  {name:48s} {value:7.2f} s")
    one = medians["nbgrader, one submission"] / medians["CLI, one submission"]
    whole = medians[f"nbgrader, whole class of {size}"] / medians[f"CLI, whole class of {size}"]
    print(f"ratio nbgrader / CLI, one submission each (fresh processes): {one:5.1f}x")
    print(f"ratio nbgrader / CLI, grading the whole class:              {whole:5.1f}x")
    print(f"ratio CLI, one submission / import torch:                  "
          f"{medians['CLI, one submission'] / medians['import torch']:5.2f}x")
    if args.skip_unsandboxed:
        return
    one = medians["nbgrader, one submission"] / medians["nbgrader, one submission, kernel not sandboxed"]
    whole = medians[f"nbgrader, whole class of {size}"] / medians[f"nbgrader, class of {size}, kernel not sandboxed"]
    print(f"ratio sandboxed / unsandboxed kernel, one submission:       {one:5.2f}x")
    print(f"ratio sandboxed / unsandboxed kernel, whole class:          {whole:5.2f}x")


if __name__ == "__main__":
    main()
