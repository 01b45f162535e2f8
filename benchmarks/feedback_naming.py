"""How often the feedback names a bank's mistakes: each mutant graded by the project's grader.

For each bank (a module exporting ``MUTANTS``, ``tests/banks.py``'s ``Mutant``s, in the folder of
its assignment: ``tests/<assignment>/<bank>.py``) every mutant is graded once, sequentially, by one
warm ``Grader``, and a table says how many
- lose points at all (caught),
- lose points in their stated parts and nowhere else (caught in their parts only),
- are named: a failed check of the result carries a mistake's name (``extra_data["mistake"]``,
  ``Check.mistake``: what tests/test_mutants.py reads),
- are repaired: a failed check carries a verified one-edit repair (``extra_data["repair"]``,
  grading/repair.py) at a line the mutant edited; named or repaired (either); neither; and
  misleading: a repair at a line the mutant did not edit,
then lists the named ones with the names given, and the unnamed ones with the first line of
their first failed check's feedback (what the student reads first), so that a hint that blames
the wrong cause can be spotted by eye.

    python benchmarks/feedback_naming.py tests/ch03_attention/mutants_book.py [more banks ...]
    python benchmarks/feedback_naming.py --all        # every tests/*/mutants.py
    python benchmarks/feedback_naming.py --all BANK   # both
    python benchmarks/feedback_naming.py -v BANK      # and every failed check's whole feedback
    python benchmarks/feedback_naming.py --repair-seconds 30 BANK  # the search's reach, unbounded in time

A bank that is not named ``mutants.py`` is evidence, not a gate: tests/test_mutants.py collects
``mutants.py`` only.
"""
import argparse
import difflib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
sys.path[:0] = [str(ROOT), str(TESTS)]

from banks import load_path as load_bank  # noqa: E402
from banks import mutated_sources, reference_sources  # noqa: E402


def first_line(text, width=220):
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line if len(line) <= width else line[:width - 3] + "..."


def failed(result):
    return [t for t in result["tests"] if t["status"] != "passed"]


def names_of(result):
    """The mistake names the failed checks recorded (tests/test_mutants.py's named_mistakes)."""
    return sorted({n for t in result["tests"] if (n := t.get("extra_data", {}).get("mistake"))})


def edited_lines(assignment, mutant):
    """{file name: the lines of the mutated file that the mutant's edits changed (or sit beside a deletion)}."""
    reference, mutated = reference_sources(assignment), mutated_sources(assignment, mutant)
    lines = {}
    for filename, text in mutated.items():
        if text == reference[filename]:
            continue
        matcher = difflib.SequenceMatcher(None, reference[filename].splitlines(), text.splitlines(), autojunk=False)
        changed = set()
        for op, _, _, j1, j2 in matcher.get_opcodes():
            if op != "equal":
                changed |= set(range(j1 + 1, j2 + 1)) if j2 > j1 else {j1, j1 + 1}
        lines[filename] = changed
    return lines


def repairs_of(result):
    return [r for t in result["tests"] if (r := t.get("extra_data", {}).get("repair"))]


def judge(mutant, result, edited=None):
    """One row of evidence about one graded mutant (``edited``: its ``edited_lines``)."""
    parts = result["extra_data"]["parts"]
    repairs = repairs_of(result)
    at_line = [r for r in repairs if set(range(r["line"], r.get("last", r["line"]) + 1))
               & set((edited or {}).get(r["file"], ()))]
    losing = sorted(p for p, (got, most) in parts.items() if got < most)
    fails = failed(result)
    return {
        "mutant": mutant,
        "score": f"{result['score']:g}/{result['max_score']:g}",
        "caught": result["score"] < result["max_score"],
        "in_parts": bool(losing) and set(losing) == set(mutant.parts),
        "losing": losing,
        "names": names_of(result),
        "repaired": bool(at_line),
        "misleading": [r for r in repairs if r not in at_line],
        "repair": (at_line or repairs or [None])[0],
        "search": result["extra_data"].get("repair_search"),
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
        rows.append(judge(mutant, result, edited_lines(assignment, mutant)))
        print(f"  graded {i}/{len(bank.MUTANTS)} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return assignment, rows


def report(path, assignment, rows, verbose=False):
    n = len(rows)
    caught = [r for r in rows if r["caught"]]
    in_parts = [r for r in rows if r["in_parts"]]
    named = [r for r in rows if r["names"]]
    unnamed = [r for r in rows if not r["names"]]
    repaired = [r for r in rows if r["repaired"]]
    either = [r for r in rows if r["repaired"] or r["names"]]
    misleading = [r for r in rows if r["misleading"]]
    bounded = [r for r in rows if (r["search"] or {}).get("bound")]
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
        f"| repaired (a verified edit at its line)| {pct(len(repaired)):<10} |",
        f"| named or repaired (either)           | {pct(len(either)):<10} |",
        f"| neither (of those caught)            | {pct(len(caught) - len(either)):<10} |",
        f"| misleading (a repair at another line)| {pct(len(misleading)):<10} |",
        f"| searches that reached their bound   | {pct(len(bounded)):<10} |",
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
        f"repaired: {len(repaired)}",
        *(f"  - {r['mutant'].name} -> {r['repair']['file']} line {r['repair']['line']}: {r['repair']['fix']}"
          for r in repaired),
        f"caught, not repaired: {len([r for r in caught if not r['repaired']]) or 'none'}",
        *(f"  - {r['mutant'].name} (search: {r['search']})" for r in caught if not r["repaired"]),
        f"misleading: {len(misleading) or 'none'}",
        *(f"  - {r['mutant'].name} -> {r['misleading']}" for r in misleading),
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
    parser.add_argument("--repair-seconds", type=float, help="the repair search's bound per submission, CPU seconds "
                        "(default: the grader's, half the grading's own time)")
    args = parser.parse_args(argv)
    paths = [Path(p) for p in args.banks]
    if args.all:
        paths += sorted(TESTS.glob("*/mutants.py"))
    if not paths:
        parser.error("name a bank, or --all")
    from autograder.grading.runner import Grader
    with Grader(repair_seconds=args.repair_seconds) as grader:  # one warm grader, every mutant in turn
        for path in paths:
            assignment, rows = grade_bank(grader, path, args.assignment)
            report(path, assignment, rows, args.verbose)


if __name__ == "__main__":
    main()
