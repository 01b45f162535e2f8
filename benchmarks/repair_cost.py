"""What the repair search (grading/repair.py) costs: the same submissions graded side by side, in one
run, by a grader without it (``hints="none"``: grading as before the search) and one with it (the
default, ``hints="change"``, with its default bounds), alternating which goes first.

- a correct submission (the reference): the medians of ``--repeat`` gradings each;
- a submission with one failing part (the bank's mutants that lose points in exactly one part):
  the median of each one's time with the search over its time without;
- a class: ``--class-size`` submissions, a mix of correct ones and the bank's mutants, graded in
  turn by each grader: the total times.

    python benchmarks/repair_cost.py --assignment ch03_attention --class-size 200
"""
import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from banks import load, mutated_sources, reference_sources  # noqa: E402


def timed(grader, folder, assignment):
    started = time.perf_counter()
    result = grader.grade(folder, assignment)
    return time.perf_counter() - started, result


def write(root, name, sources):
    folder = Path(root) / name
    folder.mkdir()
    for filename, text in sources.items():
        (folder / filename).write_text(text, encoding="utf-8")
    return folder


def side_by_side(graders, folder, assignment, flip):
    """{"off": seconds, "on": seconds} for one submission, the order flipped by ``flip``."""
    times = {}
    for key in (("on", "off") if flip else ("off", "on")):
        times[key], _ = timed(graders[key], folder, assignment)
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="ch03_attention")
    parser.add_argument("--repeat", type=int, default=7, help="gradings of the correct submission, each grader")
    parser.add_argument("--failing", type=int, default=12, help="mutants with one failing part to time")
    parser.add_argument("--class-size", type=int, default=40)
    args = parser.parse_args(argv)
    from autograder.grading.runner import Grader
    a = args.assignment
    mutants = load(a, "mutants").MUTANTS
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as root, Grader(a, hints="none") as off, Grader(a) as on:
        graders = {"off": off, "on": on}
        correct = write(root, "correct", reference_sources(a))
        for g in graders.values():  # warm: the suites collected, the reference cached
            timed(g, correct, a)
        runs = [side_by_side(graders, correct, a, i % 2) for i in range(args.repeat)]
        ok_off, ok_on = (statistics.median(r[k] for r in runs) for k in ("off", "on"))
        one_part = [m for m in mutants if len(m.parts) == 1 and not m.also][:args.failing]
        ratios, searched = [], []
        for i, m in enumerate(one_part):
            folder = write(root, f"m{i}", mutated_sources(a, m))
            t = side_by_side(graders, folder, a, i % 2)
            ratios.append(t["on"] / t["off"])
            _, result = timed(on, folder, a)
            searched.append(result["extra_data"].get("repair_search") or {})
        pool = [("correct", reference_sources(a))] * max(1, len(mutants) // 2) + \
               [(m.name, mutated_sources(a, m)) for m in mutants]
        members = [write(root, f"c{i}", pool[rng.randrange(len(pool))][1]) for i in range(args.class_size)]
        totals = {"off": 0.0, "on": 0.0}
        for i, folder in enumerate(members):
            for key, seconds in side_by_side(graders, folder, a, i % 2).items():
                totals[key] += seconds
    found = sum(bool(s.get("found")) for s in searched)
    bounded = sum(bool(s.get("bound")) for s in searched)
    print(f"== repair search cost, {a} (medians; 'off' = hints none, grading as before the search)")
    print("| submission                       | off        | on         | on/off |")
    print("|----------------------------------|------------|------------|--------|")
    print(f"| correct (median of {args.repeat})            | {ok_off:8.3f} s | {ok_on:8.3f} s | {ok_on / ok_off:.3f}  |")
    print(f"| one failing part ({len(ratios)} mutants; median ratio) |            |            | "
          f"{statistics.median(ratios):.3f}  |")
    print(f"| class of {args.class_size} mixed (total)          | {totals['off']:8.1f} s | {totals['on']:8.1f} s | "
          f"{totals['on'] / totals['off']:.3f}  |")
    print(f"one failing part: a repair found for {found} of {len(searched)}, the bound reached in {bounded}; "
          f"ratios {', '.join(f'{r:.2f}' for r in ratios)}")


if __name__ == "__main__":
    main()
