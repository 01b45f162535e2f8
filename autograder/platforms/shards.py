"""A class larger than one machine: shards, and merging shards' results.

``grade submitted/ --shard K/N`` grades the students whose folder name falls in slice K of N:
the rule is ``sha256(folder name) mod N == K - 1``. It depends on the name alone, so adding or
removing students moves nobody else to another shard (a re-run shard keeps its earlier
results), and N jobs get about equal slices of a large class.

``python -m autograder merge graded-1 ... graded-N --out graded`` joins the shards' results into
one grades.csv, summary.json and report.html, byte for byte what one run over the whole class
writes. It refuses a student found in two shards, a shard missing or given twice, and results
graded with another version of the suites (every result records ``extra_data.suites``, a
digest of the suite files and the reference solution: ``course.suites_digest``).
"""
import hashlib
import json
import shutil
import sys
from pathlib import Path

from . import classreport, report
from .files import display_name, feedback_title, write_atomic
from ..grading.result import SubmissionResult


def parse(text):
    """'K/N' (1 <= K <= N) as (K, N); argparse's type for --shard."""
    import argparse
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N (say 2/8: the second of eight slices)") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"shard {text}: K must be between 1 and N")
    return k, n


def in_shard(name, k, n):
    """Whether the student folder ``name`` belongs to shard ``k`` of ``n``."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % n == k - 1


class MergeError(Exception):
    """The shards cannot be joined into one class (the message says which and why)."""


def _load_shard(folder):
    """(summary, Students) of one shard's output folder."""
    try:
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MergeError(f"{folder} holds no summary.json: is it a graded folder?") from None
    except (OSError, ValueError) as exc:
        raise MergeError(f"{folder}/summary.json cannot be read: {exc}") from None
    students = []
    for row in summary["rows"]:
        result = None
        if "score" in row:
            try:
                result = SubmissionResult.from_json(json.loads((folder / row["result"]).read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError, KeyError) as exc:
                raise MergeError(f"{folder}: the result of {row['student']} cannot be read: {exc}") from None
        students.append(classreport.Student(row.get("folder", row["student"]), row["student"], result, row["status"],
                                row["feedback"], row["result"], row["assignment"] or None))
    return summary, students


def merge(folders, out):
    """Join shard folders into ``out``; returns (summary, rows for CI outputs). Raises MergeError."""
    folders = [Path(f) for f in folders]
    shards, everyone, where, titles = {}, [], {}, set()
    for folder in folders:
        summary, students = _load_shard(folder)
        titles.add(summary["title"])
        shard = tuple(summary.get("shard") or ())
        if shard in shards:
            raise MergeError(f"{shards[shard]} and {folder} are the same shard ({'/'.join(map(str, shard)) or 'whole class'})")
        shards[shard] = folder
        for student in students:
            if student.folder in where and where[student.folder] != folder:
                raise MergeError(f"{student.name} is in two shards: {where[student.folder]} and {folder}")
            where[student.folder] = folder
            everyone.append((student, folder))
    if () not in shards:  # slices of one class: each exactly once, none missing
        sizes = {n for _, n in shards}
        if len(sizes) > 1:
            raise MergeError(f"the shards split the class in different numbers of slices: {sorted(sizes)}")
        (n,) = sizes
        missing = [f"{k}/{n}" for k in range(1, n + 1) if (k, n) not in shards]
        if missing:
            raise MergeError(f"shard {', '.join(missing)} missing: every slice of the class must be given")
    digests = {}
    for student, folder in everyone:
        if student.result is not None:
            key = student.result.assignment or student.assignment or ""
            digests.setdefault(key, {}).setdefault(student.result.suites, folder)
    for key, seen in digests.items():
        if len(seen) > 1:
            raise MergeError(f"results graded with different versions of the suites{' of ' + key if key else ''}: "
                             + ", ".join(f"{d} in {f}" for d, f in seen.items()) + ": regrade with one version")
    # One run's order: the student folders sorted, each student's submissions as found (a
    # student is in one shard only, so a stable sort keeps those in order).
    everyone.sort(key=lambda pair: pair[0].folder)
    assignments = sorted({s.assignment for s, _ in everyone if s.assignment})
    several = len(assignments) > 1  # then results go in a folder per assignment, as one run puts them
    out = Path(out)
    students = []
    for student, folder in everyone:
        if student.result_file:
            stem = (f"{student.assignment}/" if several and student.assignment else "") + \
                Path(student.result_file).stem
            target = out / f"{stem}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            if (folder / student.result_file).resolve() != target.resolve():
                shutil.copyfile(folder / student.result_file, target)
            # written anew: its title says the assignment only in a class of several
            classreport.write_feedback(out / stem, student.result,
                                       feedback_title(student.folder, student.assignment, several))
            student = student._replace(feedback=f"{stem}.html", result_file=f"{stem}.json")
        students.append(student)
    rows = [(display_name(s.folder), s.result, s.status, s.assignment) for s in students]
    write_atomic(out / "grades.csv", report.class_csv(rows, assignments or None))
    summary = classreport.write(out, students, " + ".join(sorted(titles)))
    return summary, [(f"{name}/{a}" if several and a else name, result, status) for name, result, status, a in rows]


if __name__ == "__main__":
    # For a workflow: the names on standard input (one a line) that fall in shard K/N (argv[1]).
    k, n = parse(sys.argv[1])
    sys.stdout.writelines(line for line in sys.stdin if in_shard(line.rstrip("\n"), k, n))
