"""Seconds to grade one submission with a warm grader: each assignment's reference and blank stubs.

One warm ``Grader`` (zygote ready, suites compiled by a first grading), then ``--rounds``
gradings of each, alternating; prints the median and the spread, and each assignment's
median beside the first's (chapters side by side, in one run), and the CPU the grader's own
process spent (the child's work is not in it). Run it before and after a change to the
suites, on the same machine, to see what new checks cost.

``--trees A B ...``: checkouts side by side, in one run: one warm grader per checkout (each in
a process of its own that imports that checkout's engine), taking turns grading by grading, so
that a machine's changing load falls on every checkout alike.

    python benchmarks/grading_time.py [--rounds 7] [--assignment A ...] [--trees CHECKOUT ...]
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _submission(assignment, kind, folder):
    """The reference (or the blank stubs) of ``assignment``, with the reference of what it builds on."""
    from autograder.grading import course
    a = course.get(assignment)
    folder.mkdir(parents=True)
    for earlier, modules in a.builds_on.items():
        for name in modules:
            shutil.copy(course.get(earlier).solutions / name, folder)
    for name in a.modules:
        shutil.copy((a.solutions if kind == "reference" else a.stubs) / name, folder)
    return folder


def serve(assignments):
    """One warm grader answering "assignment kind" lines with "seconds cpu-seconds"."""
    import autograder
    from autograder.grading.runner import Grader
    with tempfile.TemporaryDirectory() as tmp, Grader(unsafe_same_uid=True) as grader:  # our own code: trusted
        subs = {(a, kind): _submission(a, kind, Path(tmp) / a / kind)
                for a in assignments for kind in ("reference", "blank")}
        for (a, _), folder in subs.items():  # warm-up: suites imported, reference answers cached
            grader.grade(folder, a)
        print(Path(autograder.__file__).resolve().parents[1], flush=True)  # the engine it runs
        for line in sys.stdin:
            a, kind = line.split()
            started, used = time.perf_counter(), time.process_time()
            result = grader.grade(subs[a, kind], a)
            seconds, cpu = time.perf_counter() - started, time.process_time() - used
            assert result["score"] == (100 if kind == "reference" else 0), (a, kind, result["score"])
            print(seconds, cpu, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--assignment", action="append", help="default: every assignment")
    parser.add_argument("--trees", nargs="+", default=[str(ROOT)], help="checkouts to time side by side "
                        "(default: this one)")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # the checkout whose grader this process is
    args = parser.parse_args(argv)
    sys.path.insert(0, args.serve or str(ROOT))
    from autograder.grading import course
    assignments = args.assignment or [a.name for a in course.assignments()]
    if args.serve:
        return serve(assignments)
    workers = {}
    for tree in args.trees:  # each checkout's own engine, timed by this file
        workers[tree] = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(Path(tree).resolve()), *(f"--assignment={a}" for a in assignments)],
            cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for tree, worker in workers.items():
        assert worker.stdout.readline().strip() == str(Path(tree).resolve()), f"{tree}: another checkout's engine"
    times = {(tree, a, kind): [] for tree in workers for a in assignments for kind in ("reference", "blank")}
    cpu = {key: [] for key in times}
    for r in range(args.rounds):
        for a in assignments:
            for kind in ("reference", "blank"):
                for tree, worker in (workers.items() if r % 2 == 0 else reversed(workers.items())):
                    worker.stdin.write(f"{a} {kind}\n")
                    worker.stdin.flush()
                    seconds, used = map(float, worker.stdout.readline().split())
                    times[tree, a, kind].append(seconds)
                    cpu[tree, a, kind].append(used)
    for worker in workers.values():
        worker.stdin.close()
        worker.wait()
    first = {(tree, kind): statistics.median(times[tree, assignments[0], kind]) for tree in workers
             for kind in ("reference", "blank")}
    for (tree, a, kind), seconds in times.items():
        median = statistics.median(seconds)
        print(f"{tree if len(workers) > 1 else '':20s} {a:16s} {kind:10s} median {median:.3f} s  (min {min(seconds):.3f}, "
              f"max {max(seconds):.3f}, {len(seconds)} runs; {median / first[tree, kind]:.2f}x {assignments[0]}); "
              f"grader CPU median {statistics.median(cpu[tree, a, kind]) * 1000:.0f} ms, min {min(cpu[tree, a, kind]) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
