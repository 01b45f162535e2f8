"""Grading time of two checkouts side by side in one run: a base (say main) and this one.

    python benchmarks/before_after.py BASE [--rounds 5] [--class-size 20]

Each round times, in an order that alternates from round to round, ``python -c "import
torch"``, then in each checkout the CLI grading one submission (a fresh process) and a class
of ``--class-size`` (the reference, the blank stubs and a mutant, cycled; ``--regrade --jobs
1``). Prints the medians per submission and their ratios to ``import torch`` measured in the
same run, so a machine's load moves both sides alike.
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

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))
sys.path.insert(0, str(HERE))

from banks import load, mutated_sources, reference_sources, stub_sources  # noqa: E402

ASSIGNMENT = "ch03_attention"


def _write(folder, files):
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return folder


def timed(command, cwd):
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(map(str, command))} in {cwd} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the other checkout (its root folder)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--class-size", type=int, default=20)
    args = parser.parse_args(argv)
    trees = {"base": Path(args.base).resolve(), "this": HERE}
    kinds = [reference_sources(ASSIGNMENT), stub_sources(ASSIGNMENT),
             mutated_sources(ASSIGNMENT, load(ASSIGNMENT, "mutants").MUTANTS[0])]
    load_start = os.getloadavg()[0]
    rows = {}
    with tempfile.TemporaryDirectory(prefix="before-after-") as tmp:
        tmp = Path(tmp)
        one = _write(tmp / "one" / ASSIGNMENT, kinds[0])
        for n in range(args.class_size):
            _write(tmp / "class" / f"s{n:03d}" / ASSIGNMENT, kinds[n % len(kinds)])
        py = sys.executable
        commands = {"import torch": lambda tree: timed([py, "-c", "import torch"], tree)}
        for side, tree in trees.items():
            commands[f"{side}: CLI, one submission"] = lambda tree=tree: timed(
                [py, "-m", "autograder", "grade", str(one), "--unsafe-same-uid", "--json", str(tmp / "r.json")], tree)
            commands[f"{side}: CLI, class (per submission)"] = lambda tree=tree: timed(
                [py, "-m", "autograder", "grade", str(tmp / "class"), "--regrade", "--jobs", "1", "--unsafe-same-uid",
                 "--out", str(tmp / "graded")], tree) / args.class_size
        for round_ in range(args.rounds):
            order = list(commands) if round_ % 2 == 0 else list(reversed(commands))
            for name in order:
                rows.setdefault(name, []).append(commands[name](HERE) if name == "import torch" else commands[name]())
            shutil.rmtree(tmp / "graded", ignore_errors=True)
    medians = {name: statistics.median(values) for name, values in rows.items()}
    print(f"medians of {args.rounds} rounds, {os.cpu_count()} cores, load average {load_start:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end; base = {trees['base']}")
    torch_s = medians["import torch"]
    for name, value in medians.items():
        print(f"  {name:40s} {value:6.2f} s  {value / torch_s:5.2f}x import torch")
    for what in ("CLI, one submission", "CLI, class (per submission)"):
        print(f"  {what}: this / base = {medians[f'this: {what}'] / medians[f'base: {what}']:.2f}")


if __name__ == "__main__":
    main()
