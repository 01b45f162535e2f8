"""Where a warm grading's time goes, in the grader's process: a cProfile summary.

One warm ``Grader`` grades the reference ``--warm`` times untimed (zygote ready, suites
collected, the reference's answers cached), then ``--rounds`` times under the profiler.
Prints the top entries by own time and by cumulative time, per grading. Time the grader
spends waiting for its sandboxed child shows as ``select`` (the child's own work runs in
another process).

    python benchmarks/profile_grading.py [--rounds 5] [--top 15]
"""
import argparse
import cProfile
import io
import pstats
import tempfile
from pathlib import Path

from isolation_cost import SOLUTIONS, Grader, _submission  # this folder's: the same set-up


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warm", type=int, default=2)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, Grader() as grader:
        folder = _submission(SOLUTIONS, Path(tmp) / "reference")
        for _ in range(args.warm):
            grader.grade(folder)
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.rounds):
            grader.grade(folder)
        profile.disable()
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        stats = pstats.Stats(profile, stream=text)
        stats.sort_stats(order).print_stats(args.top)
        print(f"== by {order} (seconds over {args.rounds} gradings) ==")
        print("\n".join(line for line in text.getvalue().splitlines()[4:] if line.strip()))


if __name__ == "__main__":
    main()
