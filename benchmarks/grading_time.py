"""Seconds to grade one submission with a warm grader: each assignment's reference and blank stubs.

One warm ``Grader`` (zygote ready, suites compiled by a first grading), then ``--rounds``
gradings of each, alternating; prints the median and the spread, and each assignment's
median beside the first's (chapters side by side, in one run), and the CPU the grader's own
process spent (the child's work is not in it; the least of the runs, as the least disturbed
by other load). Run it before and after a change to the suites, on the same machine, to see
what new checks cost.

    python benchmarks/grading_time.py [--rounds 7] [--assignment A ...]
"""
import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from isolation_cost import Grader  # this folder's: the same set-up

from autograder.grading import course


def _submission(assignment, kind, folder):
    """The reference (or the blank stubs) of ``assignment``, with the reference of what it builds on."""
    a = course.get(assignment)
    folder.mkdir(parents=True)
    for earlier, modules in a.builds_on.items():
        for name in modules:
            shutil.copy(course.get(earlier).solutions / name, folder)
    for name in a.modules:
        shutil.copy((a.solutions if kind == "reference" else a.stubs) / name, folder)
    return folder


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--assignment", action="append", help="default: every assignment")
    args = parser.parse_args(argv)
    assignments = args.assignment or [a.name for a in course.assignments()]
    with tempfile.TemporaryDirectory() as tmp, Grader(unsafe_same_uid=True) as grader:  # our own code: trusted
        subs = {(a, kind): _submission(a, kind, Path(tmp) / a / kind)
                for a in assignments for kind in ("reference", "blank")}
        for (a, _), folder in subs.items():  # warm-up: suites imported, reference answers cached
            grader.grade(folder, a)
        times = {key: [] for key in subs}
        cpu = {key: [] for key in subs}
        for _ in range(args.rounds):
            for (a, kind), folder in subs.items():
                started, used = time.perf_counter(), time.process_time()
                result = grader.grade(folder, a)
                times[a, kind].append(time.perf_counter() - started)
                cpu[a, kind].append(time.process_time() - used)
                assert result["score"] == (100 if kind == "reference" else 0), (a, kind, result["score"])
    first = {kind: statistics.median(times[assignments[0], kind]) for kind in ("reference", "blank")}
    for (a, kind), seconds in times.items():
        median = statistics.median(seconds)
        print(f"{a:16s} {kind:10s} median {median:.3f} s  (min {min(seconds):.3f}, max {max(seconds):.3f}, "
              f"{len(seconds)} runs; {median / first[kind]:.2f}x {assignments[0]}); "
              f"grader CPU min {min(cpu[a, kind]) * 1000:.0f} ms, median {statistics.median(cpu[a, kind]) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
