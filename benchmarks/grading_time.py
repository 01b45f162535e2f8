"""Seconds to grade one submission with a warm grader: the reference and the blank stubs.

One warm ``Grader`` (zygote ready, suites compiled by a first grading), then ``--rounds``
gradings of each, alternating; prints the median and the spread. Run it before and after a
change to the suites, on the same machine, to see what new checks cost.

    python benchmarks/grading_time.py [--rounds 7]
"""
import argparse
import statistics
import tempfile
import time
from pathlib import Path

from isolation_cost import ASSIGNMENTS, SOLUTIONS, Grader, _submission  # this folder's: the same set-up


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, Grader() as grader:
        subs = {"reference": _submission(SOLUTIONS, Path(tmp) / "reference"),
                "blank": _submission(ASSIGNMENTS, Path(tmp) / "blank")}
        for folder in subs.values():  # warm-up: suites imported, reference answers cached
            grader.grade(folder)
        times = {name: [] for name in subs}
        for _ in range(args.rounds):
            for name, folder in subs.items():
                started = time.perf_counter()
                result = grader.grade(folder)
                times[name].append(time.perf_counter() - started)
                assert result["score"] == (100 if name == "reference" else 0), (name, result["score"])
    for name, seconds in times.items():
        print(f"{name:10s} median {statistics.median(seconds):.3f} s  (min {min(seconds):.3f}, "
              f"max {max(seconds):.3f}, {len(seconds)} runs)")


if __name__ == "__main__":
    main()
