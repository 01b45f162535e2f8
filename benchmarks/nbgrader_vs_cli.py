"""Wall time of `nbgrader autograde` per submission beside the CLI grader's, on the same submissions.

    python benchmarks/nbgrader_vs_cli.py [--runs 3]

Three submissions (the reference modules, the reference with 1/sqrt(d_k) missing from
CausalAttention, the blank stubs) are collected into a temporary nbgrader course. Each
number is the median over runs (and over the submissions, for the per-submission rows):

  nbgrader, one submission   `nbgrader autograde ch03_attention --student S --force`, a fresh
                             process: nbgrader start, kernel, notebook, trusted grading
  nbgrader, class of 3       one `nbgrader autograde ch03_attention --force`, divided by 3
  CLI, one submission        `python -m autograder grade FOLDER --json F`, a fresh process
  Grader().grade, warm       in-process, one warm Grader, per submission (the CLI's class mode)
"""
import argparse
import json
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
from autograder.release import build_course  # noqa: E402
from autograder.runner import Grader  # noqa: E402

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


def setup(base):
    import os
    spec = base / "jupyter" / "kernels" / "python3"  # the kernel is this interpreter
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    os.environ["JUPYTER_PATH"] = str(base / "jupyter")
    course = build_course(ASSIGNMENT, base / "course")
    folders = {}
    for student, modules in (("correct", SOLUTIONS), ("buggy", SOLUTIONS), ("blank", ASSIGNMENTS)):
        folder = course / "submitted" / student / ASSIGNMENT
        shutil.copytree(course / "release" / ASSIGNMENT, folder)
        for name in MODULES:
            shutil.copy(modules / ASSIGNMENT / name, folder / name)
        folders[student] = folder
    buggy = folders["buggy"] / "causal_attention.py"
    buggy.write_text(buggy.read_text().replace(SCALED, "attn_weights = torch.softmax(attn_scores, dim=-1)"))
    return course, folders


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    nbgrader = [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"]
    with tempfile.TemporaryDirectory(prefix="nbgrader-bench-") as tmp:
        course, folders = setup(Path(tmp))
        rows = {"nbgrader, one submission": [], "nbgrader, class of 3 (per submission)": [],
                "CLI, one submission": [], "Grader().grade, warm": []}
        for _ in range(args.runs):
            for student in folders:
                rows["nbgrader, one submission"].append(timed([*nbgrader, "--student", student], course))
            rows["nbgrader, class of 3 (per submission)"].append(timed(nbgrader, course) / len(folders))
            for student, folder in folders.items():
                rows["CLI, one submission"].append(timed(
                    [sys.executable, "-m", "autograder", "grade", str(folder), "--json", str(Path(tmp) / "r.json")],
                    ROOT))
        with Grader(ASSIGNMENT) as grader:
            grader.grade(folders["correct"])  # warm-up: reference, suites, zygote
            for _ in range(args.runs):
                for folder in folders.values():
                    started = time.perf_counter()
                    grader.grade(folder)
                    rows["Grader().grade, warm"].append(time.perf_counter() - started)
    medians = {name: statistics.median(values) for name, values in rows.items()}
    print(f"median wall time per submission ({args.runs} runs x {len(folders)} submissions, "
          f"{sys.platform}, python {sys.version.split()[0]})")
    for name, value in medians.items():
        print(f"  {name:40s} {value:7.2f} s")
    one = medians["nbgrader, one submission"] / medians["CLI, one submission"]
    warm = medians["nbgrader, class of 3 (per submission)"] / medians["Grader().grade, warm"]
    print(f"ratio nbgrader / CLI, one submission each:        {one:5.1f}x")
    print(f"ratio nbgrader class run / warm Grader per submission: {warm:5.1f}x")


if __name__ == "__main__":
    main()
