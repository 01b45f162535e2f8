"""A class larger than one machine: shards, and merging shards' results.

``grade submitted/ --shard K/N`` grades the students whose folder name falls in slice K of N:
the rule is ``sha256(folder name) mod N == K - 1``. It depends on the name alone, so adding or
removing students moves nobody else to another shard (a re-run shard keeps its earlier
results), and N jobs get about equal slices of a large class. In a job array K and N come from
the array itself: ``--shard slurm`` (Slurm's SLURM_ARRAY_TASK_ID, _MIN and _COUNT) or
``--shard kubernetes/N`` (an Indexed Job's JOB_COMPLETION_INDEX): ``from_array``.

``python -m autograder merge graded-1 ... graded-N --out graded`` joins the shards' results into
one grades.csv, summary.json and report.html, byte for byte what one run over the whole class
writes, or refuses (exit 2) with the reason: a student found in two shards or in the wrong one,
a shard missing or given twice (a folder with no summary.json is named as a slice that did not
finish), results graded with another version of the suites (every result
records ``extra_data.suites``, a digest of the suite files and the reference solution:
``course.suites_digest``), shards of another engine, class or assignment (each summary.json
records ``identity``: its whole class's students and the assignments graded in it), a row dropped or added, a result path that is not where a class run
writes it, or a link on the way. Nothing in a shard is taken on trust that can be recomputed:
each score is added up again from its checks, each file name again from its folder's name.
"""
import hashlib
import json
import os
import stat
import sys
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ..grading import course
from ..grading.result import Part, SubmissionResult
from ..sandbox.submission import printable
from . import classreport, report
from .files import display_name, feedback_title, own_folder, result_stem, write_atomic


def _whole(environ, name):
    """An environment variable of a job array, as a whole number (ValueError says which is missing)."""
    value = environ.get(name, "")
    if not value.strip().isdigit():
        raise ValueError(f"{name} is {'not set' if not value else repr(value)}")
    return int(value)


def from_array(text, environ=None) -> tuple:
    """(K, N) from a job array's own index: 'slurm' (SLURM_ARRAY_TASK_ID, counted from
    SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT tasks: an array like --array=1-8 or 0-7, every
    index once) or 'kubernetes/N' (an Indexed Job of N completions: JOB_COMPLETION_INDEX, from 0).
    ValueError with the reason otherwise."""
    environ = os.environ if environ is None else environ
    if text == "slurm":
        task, low, high, count = (_whole(environ, f"SLURM_ARRAY_TASK_{key}") for key in ("ID", "MIN", "MAX", "COUNT"))
        step = environ.get("SLURM_ARRAY_TASK_STEP", "1").strip()
        if step != "1" or high - low + 1 != count:
            raise ValueError(f"the Slurm array runs {count} tasks over indexes {low} to {high} (step {step}): give it "
                             "every index from its first to its last once (--array=1-8, or 0-7; a %limit is fine)")
        return task - low + 1, count
    kind, _, total = text.partition("/")
    if kind in ("kubernetes", "k8s"):
        if not total.isdigit() or int(total) < 1:
            raise ValueError(f"{text!r}: say kubernetes/N, N the Indexed Job's completions")
        index = _whole(environ, "JOB_COMPLETION_INDEX")
        if index >= int(total):
            raise ValueError(f"JOB_COMPLETION_INDEX is {index}, not below the {total} completions --shard {text} says")
        return index + 1, int(total)
    raise ValueError(f"{text!r} is not K/N (say 2/8: the second of eight slices), slurm or kubernetes/N")


def parse(text) -> tuple:
    """'K/N' (1 <= K <= N) as (K, N), or a job array's own index (``from_array``: 'slurm',
    'kubernetes/N'); argparse's type for --shard."""
    import argparse
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        try:
            k, n = from_array(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"--shard {text}: {exc}") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"shard {text}: K must be between 1 and N")
    return k, n


def in_shard(name, k, n) -> bool:
    """Whether the student folder ``name`` belongs to shard ``k`` of ``n``."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % n == k - 1


def identity(names, assignments) -> dict:
    """What a class run records of the class it grades, for ``merge`` to check: the digest of
    every student folder's name (the whole class, before a shard is cut from it) with the
    assignments graded in it (those its submissions were found to be, or --assignment), and the
    engine's version."""
    assignments = sorted(assignments)
    whole = json.dumps([assignments, sorted(names)]).encode()   # \udcxx for bytes that are not UTF-8
    return {"class": hashlib.sha256(whole).hexdigest()[:16], "assignment": assignments,
            "engine": course.engine_digest()}


class MergeError(Exception):
    """The shards cannot be joined into one class (the message says which and why)."""


def _read(folder, relative):
    """A file of a shard's folder, read without following a link anywhere below the folder."""
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or any(p in ("", ".", "..") for p in parts):
        raise MergeError(f"{folder}: {relative!r} is not a file of the shard")
    for depth in range(1, len(parts)):
        if not stat.S_ISDIR(os.lstat(folder.joinpath(*parts[:depth])).st_mode):   # a link is not a folder
            raise MergeError(f"{folder}: {'/'.join(parts[:depth])} is not a folder (a link?)")
    try:
        fd = os.open(folder.joinpath(*parts), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise MergeError(f"{folder}: {relative} cannot be read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        return handle.read().decode("utf-8")


def _recounted(result, where):
    """``result`` with its score, max score and parts added up from its checks: what one run
    would have written (a score as written is never taken)."""
    totals = {}
    for check in result.checks:
        if not 0 <= check.score <= check.max_score:
            raise MergeError(f"{where}: the check {check.name!r} scores {check.score} of {check.max_score}")
        got, most = totals.get(check.part, (0, 0))
        totals[check.part] = (got + check.score, most + check.max_score)
    return replace(result, score=sum(c.score for c in result.checks), max_score=sum(c.max_score for c in result.checks),
                   parts=tuple(Part(name, got, most) for name, (got, most) in totals.items()))


def _unfinished(folders):
    """MergeError naming every folder that holds no summary.json (a slice that wrote nothing: its
    task failed, or has not run), or None. A pattern the shell found nothing for stays as typed."""
    absent = [f for f in folders if not (f / "summary.json").is_file()]
    if not absent:
        return None
    named = ", ".join(str(f) + ("" if f.exists() else " (no folder matches)" if any(c in str(f) for c in "*?[")
                                else " (no such folder)") for f in absent)
    return MergeError(f"slices that wrote no results: {named}. No summary.json there: the task failed or has not "
                      "run (see its log); grade those slices again, then merge")


def _load_shard(folder):
    """(summary, Students) of one shard's output folder; each result read afresh from its own
    file, at the one place a class run writes it."""
    try:
        summary = json.loads(_read(folder, "summary.json"))
        rows = summary["rows"]
    except MergeError:
        raise MergeError(f"{folder} holds no readable summary.json: is it a graded folder?") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise MergeError(f"{folder}/summary.json cannot be read: {exc}") from None
    known = set(course.names())
    students = []
    for row in rows:
        try:
            name, assignment = row.get("folder", row["student"]), row["assignment"] or None
            if assignment is not None and assignment not in known:
                raise MergeError(f"{folder}: {name!r} has an assignment this course does not hold: {assignment!r}")
            result = None
            if row["result"] is not None:
                stem = result_stem(name)
                if row["result"] not in (f"{stem}.json", f"{assignment}/{stem}.json"):
                    raise MergeError(f"{folder}: the result of {name!r} is not where a class run writes it: "
                                     f"{row['result']!r}")
                where = f"{folder}/{row['result']}"
                result = _recounted(SubmissionResult.from_json(json.loads(_read(folder, row["result"]))), where)
            students.append(classreport.Student(name, printable(display_name(name)), result, row["status"],
                                                row["feedback"], row["result"], assignment))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise MergeError(f"{folder}: a row of summary.json cannot be read: {exc!r}") from None
    return summary, students


def _collected(folders):
    """The shards' collected.json (what the GitHub workflow's collect step took: platforms/collect)
    joined into one, or None where no shard has one. Every shard must have one where any does,
    all of one assignment and organisation, each student in one only."""
    records = {}
    for folder in folders:
        try:
            records[folder] = json.loads(_read(folder, "collected.json"))
        except MergeError:
            continue
        except ValueError as exc:
            raise MergeError(f"{folder}/collected.json cannot be read: {exc}") from None
    if not records:
        return None
    lacking = [str(f) for f in folders if f not in records]
    if lacking:
        raise MergeError(f"{', '.join(lacking)} hold no collected.json, and the other shards do")
    joined, where = None, {}
    for folder, record in records.items():
        try:
            head = {k: record[k] for k in ("assignment", "org", "prefix")}
            students = dict(record["students"])
        except (KeyError, TypeError, ValueError) as exc:
            raise MergeError(f"{folder}/collected.json is not a record of a collection: {exc!r}") from None
        if joined is None:
            joined = dict(head, students={})
        elif {k: joined[k] for k in head} != head:
            raise MergeError(f"{folder}/collected.json records another collection: {head}")
        for name, taken in students.items():
            if name in where:
                raise MergeError(f"{name} was collected in two shards: {where[name]} and {folder}")
            where[name] = folder
            joined["students"][name] = taken
    joined["students"] = dict(sorted(joined["students"].items()))
    return joined


def merge(folders, out) -> tuple:
    """Join shard folders into ``out``; returns (summary, rows for CI outputs). Raises MergeError."""
    folders = [Path(f) for f in folders]
    unfinished = _unfinished(folders)
    if unfinished:
        raise unfinished
    shards, everyone, where, titles, identities = {}, [], {}, set(), {}
    for folder in folders:
        summary, students = _load_shard(folder)
        titles.add(summary["title"])
        found = tuple(summary.get(key) for key in ("class", "assignment", "engine"))
        identities.setdefault(json.dumps(found), (found, folder))
        shard = tuple(summary.get("shard") or ())
        if shard in shards:
            raise MergeError(f"{shards[shard]} and {folder} are the same shard ({'/'.join(map(str, shard)) or 'whole class'})")
        shards[shard] = folder
        for student in students:
            if student.folder in where and where[student.folder] != folder:
                raise MergeError(f"{student.name} is in two shards: {where[student.folder]} and {folder}")
            if shard and not in_shard(student.folder, *shard):
                raise MergeError(f"{folder}: {student.name} does not belong to shard {shard[0]}/{shard[1]}")
            where[student.folder] = folder
            everyone.append((student, folder))
    if len(identities) > 1:
        (first, one), (second, other) = list(identities.values())[:2]
        if first[2] != second[2]:
            what = "versions of the grading engine"
        elif first[1] != second[1]:
            named = [" + ".join(a) if isinstance(a, list) else str(a) for a in (first[1], second[1])]
            what = f"assignments ({named[0] or 'none'} and {named[1] or 'none'})"
        else:
            what = "classes (their lists of students differ)"
        raise MergeError(f"the shards were graded as different {what}: {one} and {other}")
    (klass, assignment, engine), _ = next(iter(identities.values()))
    if None in (klass, engine) or not isinstance(assignment, list):
        raise MergeError(f"{folders[0]} does not say which class and engine graded it: regrade it with this version")
    if () not in shards:  # slices of one class: each exactly once, none missing
        sizes = {n for _, n in shards}
        if len(sizes) > 1:
            raise MergeError(f"the shards split the class in different numbers of slices: {sorted(sizes)}")
        (n,) = sizes
        missing = [f"{k}/{n}" for k in range(1, n + 1) if (k, n) not in shards]
        if missing:
            raise MergeError(f"shard {', '.join(missing)} missing: every slice of the class must be given")
    if identity(where, assignment)["class"] != klass:
        raise MergeError("the shards' students are not the class they were cut from: a student was dropped "
                         "or added (regrade the shards)")
    digests = {}
    for student, folder in everyone:
        if student.result is not None:
            key = student.result.assignment or student.assignment or ""
            digests.setdefault(key, {}).setdefault(student.result.suites, folder)
    for key, seen in digests.items():
        if len(seen) > 1:
            raise MergeError(f"results graded with different versions of the suites{' of ' + key if key else ''}: "
                             + ", ".join(f"{d} in {f}" for d, f in seen.items()) + ": regrade with one version")
    collected = _collected(folders)  # refused before anything is written
    # One run's order: the student folders sorted, each student's submissions as found (a
    # student is in one shard only, so a stable sort keeps those in order).
    everyone.sort(key=lambda pair: pair[0].folder)
    assignments = sorted({s.assignment for s, _ in everyone if s.assignment})
    several = len(assignments) > 1  # then results go in a folder per assignment, as one run puts them
    out = Path(out)
    try:
        own_folder(out)
    except OSError as exc:
        raise MergeError(f"{out}: {exc.strerror}") from None
    students = []
    for student, _ in everyone:
        if student.result is not None:
            stem = (f"{student.assignment}/" if several and student.assignment else "") + result_stem(student.folder)
            # written as a class run writes them: whole, private, never through a link; the
            # feedback's title says the assignment only in a class of several
            classreport.write_feedback(out / stem, student.result,
                                       feedback_title(student.folder, student.assignment, several))
            write_atomic(out / f"{stem}.json", json.dumps(student.result.to_json(), indent=1))
            student = student._replace(feedback=f"{stem}.html", result_file=f"{stem}.json")
        students.append(student)
    rows = [(display_name(s.folder), s.result, s.status, s.assignment) for s in students]
    write_atomic(out / "grades.csv", report.class_csv(rows, assignments or None))
    if collected is not None:
        write_atomic(out / "collected.json", json.dumps(collected, indent=1))
    summary = classreport.write(out, students, " + ".join(sorted(titles)),
                                identity={"class": klass, "assignment": assignment, "engine": engine})
    return summary, [(f"{name}/{a}" if several and a else name, result, status) for name, result, status, a in rows]


if __name__ == "__main__":
    # For a workflow: the names on standard input (one a line) that fall in shard K/N (argv[1]).
    k, n = parse(sys.argv[1])
    sys.stdout.writelines(line for line in sys.stdin if in_shard(line.rstrip("\n"), k, n))
