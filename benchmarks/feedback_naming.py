"""How often the feedback names a bank's mistakes: each mutant graded by the project's grader.

For each bank (a module exporting ``MUTANTS``, ``tests/banks.py``'s ``Mutant``s, in the folder of
its assignment: ``tests/<assignment>/<bank>.py``) every mutant is graded once, sequentially, by one
warm ``Grader``, and a table says how many
- lose points at all (caught),
- lose points in their stated parts and nowhere else (caught in their parts only),
- are named: a failed check of the result carries a mistake's name (``extra_data["mistake"]``,
  ``Check.mistake``: what tests/test_mutants.py reads),
then lists the named ones with the names given, and the unnamed ones with the first line of
their first failed check's feedback (what the student reads first), so that a hint that blames
the wrong cause can be spotted by eye.

    python benchmarks/feedback_naming.py tests/ch03_attention/mutants_book.py [more banks ...]
    python benchmarks/feedback_naming.py --all        # every tests/*/mutants.py
    python benchmarks/feedback_naming.py --all BANK   # both
    python benchmarks/feedback_naming.py -v BANK      # and every failed check's whole feedback

A bank that is not named ``mutants.py`` is evidence, not a gate: tests/test_mutants.py collects
``mutants.py`` only.
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
sys.path[:0] = [str(ROOT), str(TESTS)]

from banks import load_path as load_bank  # noqa: E402
from banks import mutated_sources  # noqa: E402


def first_line(text, width=220):
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line if len(line) <= width else line[:width - 3] + "..."


def failed(result):
    return [t for t in result["tests"] if t["status"] != "passed"]


def names_of(result):
    """The mistake names the failed checks recorded (tests/test_mutants.py's named_mistakes)."""
    return sorted({n for t in result["tests"] if (n := t.get("extra_data", {}).get("mistake"))})


def judge(mutant, result):
    """One row of evidence about one graded mutant."""
    parts = result["extra_data"]["parts"]
    losing = sorted(p for p, (got, most) in parts.items() if got < most)
    fails = failed(result)
    return {
        "mutant": mutant,
        "score": f"{result['score']:g}/{result['max_score']:g}",
        "caught": result["score"] < result["max_score"],
        "in_parts": bool(losing) and set(losing) == set(mutant.parts),
        "losing": losing,
        "names": names_of(result),
        # where the bank declares a name: the feedback gives it, and no other (test_mutants' rule)
        "as_declared": bool(names_of(result)) and all(mutant.named in n for n in names_of(result))
        if getattr(mutant, "named", None) else None,
        "first": f"[{fails[0]['name']}] {first_line(fails[0]['output'])}" if fails else "",
        "feedback": [f"[{t['name']}] {t['output'].strip()}" for t in fails],
    }


def grade_bank(grader, path, assignment=None):
    bank = load_bank(path)
    assignment = assignment or Path(path).resolve().parent.name
    rows = []
    started = time.perf_counter()
    for i, mutant in enumerate(bank.MUTANTS, 1):
        with tempfile.TemporaryDirectory(prefix="feedback_naming_") as folder:
            for filename, text in mutated_sources(assignment, mutant).items():
                (Path(folder) / filename).write_text(text, encoding="utf-8")
            result = grader.grade(folder, assignment)
        rows.append(judge(mutant, result))
        print(f"  graded {i}/{len(bank.MUTANTS)} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return assignment, rows


def report(path, assignment, rows, verbose=False):
    n = len(rows)
    caught = [r for r in rows if r["caught"]]
    in_parts = [r for r in rows if r["in_parts"]]
    named = [r for r in rows if r["names"]]
    unnamed = [r for r in rows if not r["names"]]
    declared = [r for r in rows if r["as_declared"] is not None]
    right_names = f"{sum(r['as_declared'] for r in declared)}/{len(declared)}" if declared else "n/a"
    pct = (lambda k: f"{k:>3} ({100 * k / n:.0f}%)") if n else (lambda k: f"{k:>3}")
    try:
        shown = Path(path).resolve().relative_to(ROOT)
    except ValueError:
        shown = path
    lines = [
        "",
        f"== {shown} ({assignment}): {n} mutants",
        "| measure                              | mutants    |",
        "|--------------------------------------|------------|",
        f"| caught (lost points)                 | {pct(len(caught)):<10} |",
        f"| caught in their stated parts only    | {pct(len(in_parts)):<10} |",
        f"| named (a check gives a mistake name) | {pct(len(named)):<10} |",
        f"| named, of those caught               | {f'{len(named)}/{len(caught)}':<10} |",
        f"| named as the bank declares           | {right_names:<10} |",
        "",
        "not caught:" if len(caught) < n else "not caught: none",
        *(f"  - {r['mutant'].name}" for r in rows if not r["caught"]),
        f"charged outside their stated parts (or not in all of them): {len(caught) - len(in_parts) or 'none'}",
        *(f"  - {r['mutant'].name}: stated {list(r['mutant'].parts)}, lost in {r['losing']}"
          for r in caught if not r["in_parts"]),
        f"named: {len(named)}",
        *(f"  - {r['mutant'].name} -> {r['names']}" for r in named),
        f"unnamed (first failed check's feedback): {len(unnamed) or 'none'}",
        *(f"  - {r['mutant'].name} [{r['score']}]\n      {r['first'] or '(no failed check)'}" for r in unnamed),
    ]
    if verbose:
        lines.append("every failed check's whole feedback:")
        for r in rows:
            lines.append(f"  * {r['mutant'].name} [{r['score']}]")
            lines += [f"      {text}" for text in r["feedback"]]
    print("\n".join(lines), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("banks", nargs="*", help="bank module paths (tests/<assignment>/<bank>.py)")
    parser.add_argument("--all", action="store_true", help="also every tests/*/mutants.py")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every failed check's whole feedback")
    parser.add_argument("--assignment", help="grade as this assignment (default: the bank's folder name)")
    args = parser.parse_args(argv)
    paths = [Path(p) for p in args.banks]
    if args.all:
        paths += sorted(TESTS.glob("*/mutants.py"))
    if not paths:
        parser.error("name a bank, or --all")
    from autograder.grading.runner import Grader
    with Grader() as grader:  # one warm grader, every mutant in turn
        for path in paths:
            assignment, rows = grade_bank(grader, path, args.assignment)
            report(path, assignment, rows, args.verbose)


if __name__ == "__main__":
    main()
