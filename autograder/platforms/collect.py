"""Collect a class's submissions from GitHub: which one counts, when it was handed in, its files.

``python -m autograder.platforms.collect --org ORG --prefix PREFIX [--roster FILE] --out submitted
--times handed-in.json`` is the instructor workflow's collect step (grade-class.yml). For each
student repository ``PREFIX-username`` (every one in the organisation, or one per username of
the roster; lower case, as Classroom 50 names them) it

- clones it bare through ``gh`` (nothing in it runs: no checkout, no hooks);
- reads the pushes GitHub recorded (``gh api repos/ORG/REPO/activity``: each push's ref, the
  commit it brought and its time). A commit was handed in when the first recorded push that
  contains it arrived: its author and committer dates, which the student sets, count for nothing;
- takes the submissions: every ``submit/*`` tag (Classroom 50's `gh student submit`), or, where
  there is none, every push to the default branch; with ``--due`` the one that counts is chosen
  by the course's policy (deadlines.Deadlines.choose), else the latest;
- writes the files a student hands in (github.handed_in) from that commit into
  ``OUT/username/``, and its time into ``--times`` (username -> time) for `grade --times`;
- with ``--record FILE``, writes what it took: the assignment, the organisation, and for each
  student the repository, commit, submission (tag or push) and time (``collected.json``: the
  instructor workflow keeps it as the artifact ``collected``);
- for an assignment that builds on earlier ones (chapter 4 on chapter 3, each in its own
  repository on Classroom 50), with ``--earlier DIR`` (the earlier runs' ``collected.json`` files,
  anywhere below DIR): an earlier module the student did not hand in with this assignment is
  taken from their earlier repository at the commit graded there. A student with no earlier
  submission on record, or one of the template's stubs only (accepted, nothing pushed), is graded
  as ``--earlier-missing`` says (reference: the course's reference, through `grade
  --earlier-reference`; none: without), and the log says which.

A student with no repository, no recorded push or nothing handed in gets no folder, and the
template repository (PREFIX-template) is no student: the log says why, and an LMS export lists them
as not graded. Exit 0; 1 when the organisation has no such repository at all; 2 on bad input.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from . import deadlines, shards
from .github import earlier_files, handed_in
from ..grading import course
from ..sandbox.submission import MAX_SOURCE_BYTES

PUSHES = ("push", "force_push", "branch_creation", "pr_merge", "merge_queue_merge")
NO_COMMIT = "0" * 40


class CollectError(Exception):
    pass


def run(*command, cwd=None):
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise CollectError(f"{' '.join(command[:3])}: {(done.stderr or done.stdout).strip()[-300:]}")
    return done.stdout


def repositories(org, prefix, roster):
    """{username: repository name}: the roster's, or every PREFIX-* repository of ``org``. The
    assignment's template repository (PREFIX-template: Classroom 50's CLASSROOM-SLUG-template, the
    name ``github`` gives it) is in it as "template"; ``collect`` takes it for no student."""
    prefix = prefix.lower()
    if roster:
        names = [line.split(",")[0].strip() for line in Path(roster).read_text(encoding="utf-8").splitlines()]
        names = [n for n in names if n and not n.startswith("#") and n.lower() not in ("username", "folder")]
        return {name.lower(): f"{prefix}-{name}".lower() for name in names}
    listed = run("gh", "repo", "list", org, "--limit", "10000", "--json", "name", "--jq", ".[].name").split()
    found = {name[len(prefix) + 1:].lower(): name for name in listed if name.lower().startswith(prefix + "-")}
    if not found:
        raise CollectError(f"no repository named {prefix}-* in {org}")
    return found


def pushes(org, repo):
    """[(time, ref, commit)] of the pushes GitHub recorded for ``repo``."""
    lines = run("gh", "api", "--paginate", f"repos/{org}/{repo}/activity?per_page=100", "--jq", ".[]").splitlines()
    found = []
    for line in filter(None, lines):
        item = json.loads(line)
        if item.get("activity_type") in PUSHES and item.get("after") not in (None, NO_COMMIT):
            found.append((deadlines.parse_time(item["timestamp"], f"{repo} activity"), item["ref"], item["after"]))
    return found


def first_pushed(clone, recorded):
    """{commit: when it first reached GitHub}: the time of the first recorded push whose commit
    is it or descends from it. One `git rev-list` a push (a commit force-pushed away since is skipped)."""
    times = {}
    for when, _, after in sorted(recorded):
        listed = subprocess.run(["git", "rev-list", after], cwd=clone, capture_output=True, text=True)
        for commit in listed.stdout.split() if listed.returncode == 0 else ():
            times.setdefault(commit, when)
    return times


def submissions(clone, recorded) -> list:
    """[(time handed in, what, commit)]: every submit/* tag, else every push to the default branch."""
    tags = run("git", "for-each-ref", "--format=%(refname:short) %(objectname) %(*objectname)", "refs/tags/submit/",
               cwd=clone).splitlines()
    if tags:
        candidates = [(parts[0], parts[-1]) for parts in (line.split() for line in tags)]
    else:
        branch = run("git", "symbolic-ref", "HEAD", cwd=clone).strip()
        candidates = [(f"push to {ref.removeprefix('refs/heads/')}", after) for _, ref, after in recorded
                      if ref == branch]
    times = first_pushed(clone, recorded)
    # a commit GitHub recorded no push of has no evidence of when: it is not a submission
    return [(times[commit], what, commit) for what, commit in candidates if commit in times]


def export(clone, commit, files, folder):
    """Write ``files`` (paths in the repository) as they are at ``commit`` into ``folder``: plain
    files only (no links), each within the grader's size bound. Returns the notes."""
    notes = []
    listed = run("git", "ls-tree", "-l", "-z", commit, "--", *files, cwd=clone)  # one call for every file
    for entry in filter(None, listed.split("\0")):
        info, path = entry.split("\t", 1)
        mode, kind, blob, size = info.split()
        if path not in files:
            continue
        if kind != "blob" or mode not in ("100644", "100755"):
            notes.append(f"{path}: not a plain file, not taken")
            continue
        if int(size) > MAX_SOURCE_BYTES:
            notes.append(f"{path}: larger than {MAX_SOURCE_BYTES >> 10} KiB, not taken")
            continue
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(subprocess.run(["git", "cat-file", "blob", blob], cwd=clone, capture_output=True,
                                          check=True).stdout)
    return notes


TEMPLATE = "template"   # PREFIX-template is the assignment's template repository, never a student's
NOT_A_STUDENT = ": the assignment's template repository, no student's: not collected"


def template_only(folder, earlier, files) -> bool:
    """Whether each of ``files`` of ``earlier`` taken into ``folder`` is the course's released stub
    (what the template repository holds: the student accepted it and pushed nothing of their own)."""
    stubs = course.get(earlier).stubs
    return all((stubs / f).is_file() and (stubs / f).read_bytes() == (folder / earlier / f).read_bytes()
               for f in files)


MISSING = {"reference": "graded on the course's reference of {files} (grade --earlier-reference)",
           "none": "graded without {files}: the checks that need them fail"}


def load_records(folder):
    """{earlier assignment: {"org", "students": {username: {"repo", "commit", "what", ...}}}} from
    every collected.json below ``folder`` (the earlier runs' records). Raises CollectError when two
    records of one assignment disagree about a student."""
    found = {}
    for path in sorted(Path(folder).rglob("collected.json")) if folder else ():
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            name, students = record["assignment"], record["students"]
            if not isinstance(students, dict):
                raise TypeError("students is not an object")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CollectError(f"{path}: not a record of a collection ({exc})") from None
        known = found.setdefault(name, {"org": record.get("org"), "students": {}})
        for student, taken in students.items():
            taken = dict(taken, org=record.get("org"))
            if known["students"].setdefault(student, taken) != taken:
                raise CollectError(f"{path}: {student}'s {name} submission differs from another record's")
    return found


def take_earlier(name, assignment, folder, records, missing):
    """Export into ``folder`` each module of an earlier assignment ``assignment`` imports that
    ``folder`` lacks, from ``name``'s earlier repository at the commit graded there (``records``:
    load_records). Returns the log's notes."""
    notes = []
    for earlier, files in earlier_files(assignment).items():
        wanted = [f"{earlier}/{f}" for f in files if not (folder / earlier / f).is_file()]
        if not wanted:
            continue
        taken = records.get(earlier, {}).get("students", {}).get(name)
        if taken is None:
            notes.append(f"no {earlier} submission on record: " + MISSING[missing].format(files=", ".join(wanted)))
            continue
        with tempfile.TemporaryDirectory(prefix="collect-") as tmp:
            clone = Path(tmp) / "repo.git"
            try:
                run("gh", "repo", "clone", f"{taken['org']}/{taken['repo']}", str(clone), "--", "--bare", "--quiet")
                more = export(clone, taken["commit"], wanted, folder)
            except (CollectError, KeyError, TypeError) as exc:
                notes.append(f"{earlier} submission on record not read ({exc}): "
                             + MISSING[missing].format(files=", ".join(wanted)))
                continue
        got = [f for f in wanted if (folder / f).is_file()]
        what = f"({taken.get('what', '?')}, {str(taken['commit'])[:7]})"
        if got and template_only(folder, earlier, [f.split("/", 1)[1] for f in got]):
            for f in got:
                (folder / f).unlink()
            if not any((folder / earlier).iterdir()):
                (folder / earlier).rmdir()
            notes.append(f"the {earlier} submission graded there {what} holds only the template's stubs, nothing of "
                         "the student's: " + MISSING[missing].format(files=", ".join(wanted)))
            continue
        notes.append(f"{', '.join(got) or 'none of ' + ', '.join(wanted)} from the {earlier} submission graded there "
                     f"{what}" + "".join(f"; {n}" for n in more))
        if len(got) < len(wanted):
            notes.append(MISSING[missing].format(files=", ".join(f for f in wanted if f not in got)))
    return notes


def collect(org, prefix, roster, assignment, out, found_deadlines=None, shard=None, earlier=None,
            missing="reference", record=None) -> tuple:
    """Collect every student of the slice; returns ({username: time handed in}, [log lines]).
    ``earlier``: records of earlier assignments (load_records); ``record``: a dict filled with what
    was taken ({username: {repo, commit, what, handed_in}})."""
    students = repositories(org, prefix, roster)
    template = students.pop(TEMPLATE, None)
    if shard:
        students = {name: repo for name, repo in students.items() if shards.in_shard(name, *shard)}
    files = handed_in(assignment)
    times, log = {}, []
    record = {} if record is None else record
    out.mkdir(parents=True, exist_ok=True)
    for name, repo in sorted(students.items()):
        if not name or "/" in name or name.startswith("."):
            log.append(f"{repo}: skipped (no usable username)")
            continue
        with tempfile.TemporaryDirectory(prefix="collect-") as tmp:
            clone = Path(tmp) / "repo.git"
            try:
                run("gh", "repo", "clone", f"{org}/{repo}", str(clone), "--", "--bare", "--quiet")
                handed = submissions(clone, pushes(org, repo))
            except CollectError as exc:
                log.append(f"{name}: not collected: {exc}")
                continue
            if not handed:
                log.append(f"{name}: nothing handed in (no submit/* tag or push that GitHub recorded)")
                continue
            if found_deadlines:
                when, (what, commit) = found_deadlines.choose(name, [(w, (a, c)) for w, a, c in handed])
            else:
                when, what, commit = max(handed)
            notes = export(clone, commit, files, out / name)
        if not (out / name).exists():
            log.append(f"{name}: {what} ({commit[:7]}) holds none of the files handed in ({', '.join(files)})")
            continue
        times[name] = when
        record[name] = {"repo": repo, "commit": commit, "what": what, "handed_in": deadlines.iso(when)}
        if earlier is not None:
            notes += take_earlier(name, assignment, out / name, earlier, missing)
        late = ""
        if found_deadlines and when > found_deadlines.due_for(name):
            late = f", late (due {deadlines.iso(found_deadlines.due_for(name))})"
        log.append(f"{name}: {what} ({commit[:7]}), handed in {deadlines.iso(when)}{late}"
                   + "".join(f"; {note}" for note in notes))
    if template:
        log.append(template + NOT_A_STUDENT)
    return times, log


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.platforms.collect", description=__doc__.splitlines()[0])
    parser.add_argument("--org", required=True)
    parser.add_argument("--prefix", required=True, help="the repositories' names before -username")
    parser.add_argument("--roster", default="",
                        help="file of usernames, one a line (default: every PREFIX-* repository)")
    parser.add_argument("--assignment", required=True, choices=course.names())
    parser.add_argument("--due", default="")
    parser.add_argument("--late", default="none")
    parser.add_argument("--extensions", default="")
    parser.add_argument("--shard", type=shards.parse, metavar="K/N")
    parser.add_argument("--out", required=True, help="folder for the submissions (one folder per username)")
    parser.add_argument("--times", required=True, help="JSON file for username -> time handed in")
    parser.add_argument("--record", default="", help="JSON file for what was taken (the `collected` record)")
    parser.add_argument("--earlier", default="", help="folder of the earlier assignments' collected.json records")
    parser.add_argument("--earlier-missing", choices=sorted(MISSING), default="reference",
                        help="a student with no earlier submission on record: the course's reference, or none")
    args = parser.parse_args(argv)
    assignment = args.assignment
    record = {}
    try:
        found = deadlines.load(args.due or None, args.late, args.extensions or None)
        earlier = load_records(args.earlier) if course.get(assignment).builds_on and args.earlier else None
        if earlier is None and args.earlier and not course.get(assignment).builds_on:
            raise CollectError(f"--earlier: {assignment} builds on no earlier assignment")
        times, log = collect(args.org, args.prefix, args.roster, assignment, Path(args.out), found, args.shard,
                             earlier, args.earlier_missing, record)
    except (deadlines.DeadlineError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except CollectError as exc:
        print(f"::error::{exc}")
        return 1
    Path(args.times).write_text(json.dumps({name: deadlines.iso(when) for name, when in times.items()}, indent=1),
                                encoding="utf-8")
    if args.record:
        Path(args.record).write_text(json.dumps({"assignment": assignment, "org": args.org, "prefix": args.prefix,
                                                 "students": record}, indent=1), encoding="utf-8")
    print("\n".join(log))
    students = [line for line in log if not line.endswith(NOT_A_STUDENT)]
    print(f"collected {len(times)} of {len(students)} students' submissions into {args.out}/ (times in {args.times})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
