"""Where a warm grading's time goes, in the grader's process: a cProfile summary.

One warm ``Grader`` grades one submission (an assignment's reference or blank stubs, as
grading_time.py builds them) ``--warm`` times untimed (zygote ready, suites collected, the
reference's answers cached), then ``--rounds`` times under the profiler.
Prints the top entries by own time and by cumulative time, per grading. Time the grader
spends waiting for its sandboxed child shows as ``select`` (the child's own work runs in
another process).

    python benchmarks/profile_grading.py [--rounds 5] [--top 15] [--assignment A] [--kind blank]
"""
import argparse
import cProfile
import io
import pstats
import tempfile
from pathlib import Path

from grading_time import _submission  # this folder's: the same set-up
from isolation_cost import Grader


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warm", type=int, default=2)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--assignment", default="ch03_attention")
    parser.add_argument("--kind", choices=("reference", "blank"), default="reference")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, Grader(unsafe_same_uid=True) as grader:  # our own code: trusted
        folder = _submission(args.assignment, args.kind, Path(tmp) / args.kind)
        for _ in range(args.warm):
            grader.grade(folder, args.assignment)
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.rounds):
            grader.grade(folder, args.assignment)
        profile.disable()
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        stats = pstats.Stats(profile, stream=text)
        stats.sort_stats(order).print_stats(args.top)
        print(f"== by {order} (seconds over {args.rounds} gradings) ==")
        print("\n".join(line for line in text.getvalue().splitlines()[4:] if line.strip()))


if __name__ == "__main__":
    main()
