"""A later assignment's grading cost beside the one it is measured against, in one run.

    python benchmarks/assignment_cost.py [--rounds 5]                      # efficient_attention vs ch03_attention
    python benchmarks/assignment_cost.py --base ch04_gpt --new ch05_pretraining

Each round grades the reference submission of both (the reference of what each builds on beside
it), in an order that alternates from round to round:
- with the CLI in a fresh process (``python -m autograder grade``), measuring its wall time and
  the peak memory of its whole process tree (grader, zygote, sandboxed children: summed RSS and
  PSS, sampled every 10 ms, as benchmarks/gradescope_bundle.py does);
- with one warm ``Grader`` (the suites imported and the reference answers cached by a first
  grading), as a class run grades every submission after the first.
Prints the medians, the new one's ratio to the base, and whether it meets the assignment's
budget: within 1.5x the base's time and under 768 MB for the process tree, counted
as summed PSS (what a container's memory limit counts, as the README's Gradescope figures: summed
RSS counts the pages each forked child shares with the zygote once per process).
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from gradescope_bundle import _copy_submission, measure  # this folder's: the same measurement

from autograder.grading.runner import Grader

TIME_RATIO, PEAK_MB = 1.5, 768


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--base", default="ch03_attention", help="the assignment measured against")
    parser.add_argument("--new", default="efficient_attention", help="the assignment measured")
    args = parser.parse_args(argv)
    BASE, NEW = args.base, args.new
    load_start = os.getloadavg()[0]
    cli, warm = {BASE: [], NEW: []}, {BASE: [], NEW: []}
    with tempfile.TemporaryDirectory(prefix="assignment-cost-") as tmp:
        folders = {}
        for name in (BASE, NEW):
            folders[name] = Path(tmp) / "submissions" / name
            folders[name].mkdir(parents=True)
            _copy_submission(name, folders[name])
        out = Path(tmp) / "result.json"
        for round_ in range(args.rounds):
            for name in (BASE, NEW) if round_ % 2 == 0 else (NEW, BASE):
                command = [sys.executable, "-m", "autograder", "grade", str(folders[name]), "--unsafe-same-uid",
                           "--json", str(out)]
                cli[name].append(measure(command))
        with Grader(unsafe_same_uid=True) as grader:  # our own reference code: trusted
            for name in (BASE, NEW):  # warm-up: suites imported, reference answers cached
                grader.grade(folders[name], name)
            for round_ in range(args.rounds):
                for name in (BASE, NEW) if round_ % 2 == 0 else (NEW, BASE):
                    started = time.perf_counter()
                    result = grader.grade(folders[name], name)
                    warm[name].append(time.perf_counter() - started)
                    assert result["score"] == result["max_score"], (name, result["score"], result["max_score"])
    print(f"medians of {args.rounds} rounds, {os.cpu_count()} cores, load average {load_start:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end")
    print(f"  {'':<20} {'CLI wall s':>10} {'CLI CPU s':>10} {'peak RSS MiB':>13} {'peak PSS MiB':>13} {'warm s':>8}")
    medians = {}
    for name in (BASE, NEW):
        wall, cpu, rss, pss, _ = (statistics.median(column) for column in zip(*cli[name]))
        medians[name] = (wall, cpu, rss, pss, statistics.median(warm[name]))
        print(f"  {name:<20} {wall:10.2f} {cpu:10.2f} {rss:13.0f} {pss:13.0f} {medians[name][4]:8.3f}")
    cli_ratio = medians[NEW][0] / medians[BASE][0]
    warm_ratio = medians[NEW][4] / medians[BASE][4]
    peak = max(pss for _, _, _, pss, _ in cli[NEW])
    print(f"  {NEW} / {BASE}: CLI {cli_ratio:.2f}x, warm grader {warm_ratio:.2f}x (budget {TIME_RATIO}x); "
          f"largest peak PSS of the process tree {peak:.0f} MiB (budget {PEAK_MB} MB)")
    within = cli_ratio <= TIME_RATIO and warm_ratio <= TIME_RATIO and peak * 2**20 / 1e6 < PEAK_MB
    print("  within budget" if within else "  OVER BUDGET")
    return 0 if within else 1


if __name__ == "__main__":
    raise SystemExit(main())
