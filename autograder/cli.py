"""``python -m autograder``: grade one submission or a whole class, regenerate stubs, release.

Exit codes: 0 grading ran (whatever the scores), 1 the grader failed on some submission (or
could not save its result), 2 bad usage or input (a missing path, an empty folder), 3 isolation:
nothing was graded because a submission would run with the grader's own uid (the message says
how to get isolation here; ``--unsafe-same-uid`` grades anyway, for trusted code), or, with
``--require-isolation``, grading ran but some submission ran without full isolation (the
result JSON's ``extra_data.fully_isolated`` says which; the report names what was missing).
"""
import argparse
import hashlib
import json
import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from . import classreport, course, report, sandbox, shards
from .paths import ASSIGNMENTS, SOLUTIONS
from .submission import SubmissionError, printable, read_sources
from .zygote import Zygote, restore_environment


def _fail(message, code=2):
    print(printable(f"error: {message}"), file=sys.stderr)
    return code


def display_name(name):
    """A folder name as text that can be written anywhere (bytes that are not UTF-8 become �)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def result_stem(name):
    """A file name for a student's results that every file system accepts (the temporary
    name beside it included): the folder's name where it is short and plain, else a
    shortened one with a hash that keeps it unique."""
    plain = printable(display_name(name)).replace("?", "_")
    if plain == name and len(name.encode()) <= 120:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{plain.encode()[:60].decode(errors='ignore')}-{digest}"


def submissions(folder, assignment=None):
    """The submissions in ``folder`` as [(folder holding the modules, assignment or None)]:
    ``folder`` itself when it holds Python files (its assignment is found from it unless
    ``assignment`` says), else each ``folder/<assignment>`` laid out like assignments/ (one
    student may hand in several). Empty when it holds neither."""
    if _holds_python(folder):
        return [(folder, assignment)]
    found = []
    for name in [assignment] if assignment else course.names():
        candidate = folder / name
        if candidate.is_symlink() or _holds_python(candidate):  # a link: read_sources refuses it, and says so
            found.append((candidate, name))
    return found


def _holds_python(folder):
    return folder.is_dir() and not folder.is_symlink() and any(p.suffix == ".py" for p in folder.iterdir())


def _write_atomic(path, text):
    """Write beside the target, then rename: a crash never leaves a half-written result."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def fingerprint(folder, assignment=None):
    """Hash of the submission's Python sources (with those it takes from an earlier assignment's
    folder): a finished result is reused only if they are unchanged."""
    if assignment and course.get(assignment).builds_on:
        sources, _ = course.submission_sources(folder, assignment)
    else:
        sources, _ = read_sources(folder)
    digest = hashlib.sha256()
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + sources[name].encode() + b"\0")
    return digest.hexdigest()


def _syntax_notes(folder):
    """Syntax errors found by compiling (never running) the sources, so the report says so up front."""
    notes = []
    for name, source in read_sources(folder)[0].items():
        try:
            compile(source, f"{name}.py", "exec", dont_inherit=True)
        except SyntaxError as exc:
            notes.append(f"{name}.py is not valid Python: line {exc.lineno}: {exc.msg}")
        except Exception as exc:  # e.g. RecursionError from absurd nesting: the student's problem, not ours
            notes.append(f"{name}.py cannot be compiled: {type(exc).__name__}")
    return notes


def grade_one(grader, folder, assignment=None):
    result = grader.grade(folder, assignment)
    notes = _syntax_notes(folder)
    if notes:
        result["output"] = "\n".join(filter(None, [*notes, result["output"]]))
    result["extra_data"]["fingerprint"] = fingerprint(folder, result["extra_data"]["assignment"])
    return result


def trusted(path):
    """The repository's own solutions/ and assignments/: the README's quick start grades them anywhere."""
    real = path.resolve()
    return any(real == top or top in real.parents for top in (SOLUTIONS.resolve(), ASSIGNMENTS.resolve()))


def same_uid_consent(path, isolation, args, hidden=()):
    """Asked of the sandbox before the first submission runs. False: a child here is kept apart
    from the grader (and the session refuses any child that is not). True: it would run with
    the grader's own uid, and may (the repository's own code, or --unsafe-same-uid, said
    loudly). None: it may not; the message saying how to get isolation here has been printed."""
    hello = sandbox.check(isolation, hidden)
    if "failed" in hello or hello["separated"]:  # a child that cannot start says why when it is asked to
        return False
    if args.unsafe_same_uid:
        print(printable(f"WARNING: --unsafe-same-uid: submissions run as your own user (uid {os.geteuid()}) and "
                        "can read and rewrite everything you can: the reference, the hidden suites, the grader "
                        f"and the results ({hello['isolation']}). Trusted code only."), file=sys.stderr)
        return True
    if trusted(path):
        print(printable(f"note: {path} is the repository's own, so it is graded as your own user "
                        f"({hello['isolation']})"), file=sys.stderr)
        return True
    print(printable(f"error: {sandbox.refusal('the submissions', hello['isolation'])}\n"
                    "For code you trust (your own), add --unsafe-same-uid. Nothing was graded."), file=sys.stderr)
    return None


def cmd_grade(args):
    path = Path(args.path)
    if not path.exists():
        return _fail(f"{path} does not exist")
    if not path.is_dir():
        return _fail(f"{path} is not a folder: give a submission folder (with the .py modules) "
                     "or a folder of submissions")
    isolation = "off" if args.no_isolation else "full"
    if path.is_symlink():
        return _fail(f"{path} is a symbolic link: give the folder itself")
    found = submissions(path, args.assignment)
    if found:
        same_uid = same_uid_consent(path, isolation, args)
        if same_uid is None:
            return 3
        return grade_student(path, found, isolation, args, same_uid)
    # A linked student folder could point anywhere (solutions/ included): listed, and refused.
    students = sorted(p for p in path.iterdir() if (p.is_dir() or p.is_symlink()) and not p.name.startswith("."))
    if not students:
        return _fail(f"{path} holds no submission: no .py files and no subfolders")
    if args.shard:  # an empty slice is no error: its (empty) outputs still go to the merge
        students = [s for s in students if shards.in_shard(s.name, *args.shard)]
    out = Path(args.out or Path("graded") / path.resolve().name)
    return grade_class(path, students, out, isolation, args)


def grade_student(path, found, isolation, args, same_uid=False):
    """One student's submissions (several, where they hand in several assignments): a table
    each; --json and --markdown get the result, or {assignment: result} for several."""
    # Forked from this process now, before the grader loads anything secret: torch once for both.
    zygote = Zygote(isolation=isolation, fork=True)
    from .runner import Grader, GraderError
    results = {}
    with Grader(isolation=isolation, timeout=args.timeout, zygote=zygote, unsafe_same_uid=same_uid,
                ahead=len(found) > 1) as grader:
        for folder, assignment in found:
            name = str(path if len(found) == 1 else folder)
            try:
                result = grade_one(grader, folder, assignment)
            except SubmissionError as exc:
                return _fail(str(exc))
            except GraderError as exc:
                ci_outputs(args, [(name, None, f"grader failed: {exc}")])
                return _fail(f"the grader failed: {exc}", 1)
            print(report.table(result, f"Submission {name}"))
            results[name] = result
    named = {r["extra_data"]["assignment"]: r for r in results.values()}
    if args.json:
        _write_atomic(Path(args.json), json.dumps(named.popitem()[1] if len(named) == 1 else named, indent=1))
    if args.markdown:
        _write_atomic(Path(args.markdown), "\n".join(report.markdown(r, name) for name, r in results.items()))
    ci_outputs(args, [(name, result, "graded") for name, result in results.items()])
    isolated = all(r["extra_data"]["fully_isolated"] for r in results.values())
    return 3 if args.require_isolation and not isolated else 0


def ci_outputs(args, rows):
    """For CI: JUnit XML (--junit) and the Markdown job summary when $GITHUB_STEP_SUMMARY is set.
    rows: (name, result or None, status) per submission."""
    if args.junit:
        _write_atomic(Path(args.junit), report.junit(rows))
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        name, result, _ = rows[0]
        text = report.markdown(result, name) if len(rows) == 1 and result else report.summary(rows)
        with open(summary_file, "a", encoding="utf-8") as handle:  # appended: other steps write there too
            handle.write(text)


def _progress(done, total, started, name):
    if not sys.stderr.isatty() and done != total and done % 10:  # a log gets every tenth line
        return
    width = 30
    filled = width * done // total
    rate = (time.perf_counter() - started) / max(done, 1)
    print(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}  {rate:.2f} s each  {printable(name)[:30]:<30}",
          end="" if sys.stderr.isatty() and done < total else "\n", file=sys.stderr, flush=True)


_grader = None  # the grading process's own Grader (one per worker in a parallel class run)


def _start_grader(isolation, timeout, hidden=(), unsafe_same_uid=False, fork=False):
    """``fork``: this process holds nothing secret yet, so the zygote is forked from it (see
    Zygote); otherwise the zygote is a fresh interpreter, whose import of torch overlaps ours."""
    global _grader
    zygote = Zygote(hidden=hidden, isolation=isolation, fork=fork)
    from .runner import Grader
    _grader = Grader(isolation=isolation, timeout=timeout, hidden=hidden, zygote=zygote,
                     unsafe_same_uid=unsafe_same_uid)


def _grade_task(folder, assignment=None):
    """(result, status, grader_failed) for one submission; never raises."""
    from .runner import GraderError
    try:
        return grade_one(_grader, folder, assignment), "graded", False
    except SubmissionError as exc:
        return None, f"not graded: {exc}", False
    except GraderError as exc:
        return None, f"grader failed: {exc}", True
    except Exception as exc:  # a grader bug on one submission must not stop the class
        return None, f"grader failed: {type(exc).__name__}: {exc}", True


def _kept(target, folder, assignment):
    """An earlier run's result, if it exists and the submission's sources are unchanged."""
    try:
        previous = json.loads(target.read_text(encoding="utf-8"))
        extra = previous["extra_data"]
        if assignment and extra.get("assignment", assignment) != assignment:
            return None
        if extra["suites"] != shards.suites_digest(extra.get("assignment") or assignment):
            return None  # graded by other suites (or another reference): grade it again
        return previous if extra["fingerprint"] == fingerprint(folder, assignment) else None
    except (OSError, ValueError, KeyError, TypeError, SubmissionError):
        return None


def _start_engine(isolation, args, hidden, count, same_uid, fork):
    """(jobs, None) with this process's grader started, or (jobs, a pool of worker processes).

    Parallel only where it pays for the workers' start. ``fork``: this process holds nothing
    secret yet, so it imports torch and the workers (or its zygote) are forked from it;
    otherwise each worker is a fresh interpreter with a zygote of its own."""
    jobs = args.jobs or min(os.cpu_count() or 1, max(1, count // 8))
    if jobs <= 1:
        _start_grader(isolation, args.timeout, hidden, same_uid, fork=fork)
        return 1, None
    if fork:
        from .zygote import import_torch
        import_torch()  # here, once: every worker is forked with it
    else:
        restore_environment()  # fresh interpreters: they inherit this process's environment
    context = multiprocessing.get_context("fork" if fork else "spawn")
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_grader,
                               initargs=(isolation, args.timeout, hidden, same_uid, fork))
    pool.submit(int)  # the first task forks every worker: now, before this process reads a result
    restore_environment()  # every worker is forked (each forks its zygote before it restores its own)
    return jobs, pool


def _class_submissions(students, forced):
    """[(student, folder, assignment or None)]: each student's submissions, one per assignment
    they hand in; a student folder that holds none is listed as it is (and found not gradable)."""
    items = []
    for student in students:
        found = [] if student.is_symlink() else submissions(student, forced)  # a link: refused
        for folder, assignment in found or [(student, forced)]:
            if assignment is None and _holds_python(folder):
                try:
                    assignment = course.detect(folder).name
                except course.CourseError:
                    pass  # the grader says why
            items.append((student, folder, assignment))
    return items


def grade_class(root, students, out, isolation, args):
    """Grade every subfolder; one JSON each as it finishes, then the CSV. Resumable.

    With several jobs, each worker process has its own grader and zygote; results are still
    written here, one atomic file at a time."""
    started = time.perf_counter()
    hidden = (str(root.resolve()), str(out.resolve()))  # other students and all results: never in a child
    items = _class_submissions(students, args.assignment)
    assignments = sorted({a for _, _, a in items if a})
    several = len(assignments) > 1  # then a folder of results per assignment, a column group each

    def target(name, assignment, suffix):
        """A result file; the suffix is appended (a folder name may hold dots: with_suffix would cut it)."""
        return (out / assignment if several and assignment else out) / (result_stem(name) + suffix)

    def make_out():
        """Made by the grader before any child runs: a child never gets to make it (in a folder it may write)."""
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return _fail(f"{out}: the results folder cannot be made: {exc.strerror}")

    # Where something is to be graded for sure, the graders start now, forked from this process
    # before it reads an earlier result (a child sees its zygote's memory): torch is imported once.
    engine = None
    if args.regrade or any(not target(s.name, a, ".json").exists() for s, _, a in items):
        same_uid = same_uid_consent(root, isolation, args, hidden)
        if same_uid is None:
            return 3
        if make_out():
            return 2
        engine = _start_engine(isolation, args, hidden, len(items), same_uid, fork=True)
    outcomes, todo = {}, []
    for student, folder, assignment in items:
        key = (student.name, assignment)
        kept = None if args.regrade else _kept(target(student.name, assignment, ".json"), folder, assignment)
        if kept:
            outcomes[key] = (kept, "graded", False)
        else:
            todo.append((key, folder, assignment))
    if engine is None:
        same_uid = same_uid_consent(root, isolation, args, hidden) if todo else False
        if same_uid is None:
            return 3
        if make_out():
            return 2

    def finish(key, outcome):
        result = outcome[0]
        if result is not None:
            try:
                _write_atomic(target(*key, ".md"), report.markdown(result, feedback_title(*key, several)))
                _write_atomic(target(*key, ".json"), json.dumps(result, indent=1))  # last: it marks it done
            except OSError as exc:  # this student's result is lost, not the class's
                outcome = (result, f"graded ({result['score']}), but the result was not saved: {exc.strerror}", True)
        outcomes[key] = outcome
        _progress(len(outcomes), len(items), started, key[0])

    if engine is None and todo:  # earlier results are in memory now: fresh interpreters only
        engine = _start_engine(isolation, args, hidden, len(todo), same_uid, fork=False)
    restore_environment()  # where nothing was graded
    jobs = engine[0] if engine else 1
    if engine and engine[1] is None:
        try:
            for key, folder, assignment in todo:
                finish(key, _grade_task(folder, assignment))
        finally:
            _grader.close()
    elif engine:
        with engine[1] as pool:
            futures = {pool.submit(_grade_task, folder, assignment): key for key, folder, assignment in todo}
            for future in as_completed(futures):
                try:
                    outcome = future.result()
                except Exception as exc:  # a worker died: that student is reported, the rest go on
                    outcome = (None, f"grader failed: {type(exc).__name__}: {exc}", True)
                finish(futures[future], outcome)
    keys = [(student.name, assignment) for student, _, assignment in items]
    rows = [(display_name(name), *outcomes[name, a][:2], a) for name, a in keys]
    try:
        _write_atomic(out / "grades.csv", report.class_csv(rows, assignments or None))
    except OSError as exc:
        print(printable(f"error: {out / 'grades.csv'} not written: {exc.strerror}"), file=sys.stderr)
        return 1
    rows = [(f"{name}/{a}" if several and a else name, result, status) for name, result, status, a in rows]
    ci_outputs(args, rows)
    report_started = time.perf_counter()
    summary = class_report(out, [(student.name, a, *outcomes[student.name, a][:2],
                                  target(student.name, a, "").relative_to(out)) for student, _, a in items],
                           root.resolve().name, args.shard)
    report_seconds = time.perf_counter() - report_started
    graded = sum(1 for _, result, _ in rows if result)
    kept = len(items) - len(todo)
    print(printable(f"graded {graded} of {len(rows)} submissions ({kept} unchanged since an earlier run, kept) in "
                    f"{report_started - started:.1f} s ({jobs} job{'s' if jobs > 1 else ''}); "
                    f"results in {out}/ (grades.csv, and a JSON and a Markdown feedback file per student"
                    f"{' and assignment, a folder per assignment' if several else ''})"))
    reduced = sorted({r["extra_data"]["isolation"] for _, r, _ in rows if r and r["extra_data"]["isolation"] != "namespaces"})
    for isolation in reduced:
        print(printable(f"WARNING: submissions ran without full isolation: {isolation}"))
    for name, _, status in rows:
        if status != "graded":
            print(printable(f"  {name}: {status}"))
    if summary:
        print(printable(f"class report: {out / 'report.html'} (written in {report_seconds:.1f} s), "
                        f"numbers for tools: {out / 'summary.json'}"))
        print("\n".join(classreport.terminal_lines(summary)))
    else:
        return 1
    if any(outcome[2] for outcome in outcomes.values()):
        return 1
    return 3 if args.require_isolation and reduced else 0


def feedback_title(name, assignment, several):
    """The title of a student's Markdown feedback (with the assignment where a class has several)."""
    return display_name(name) + (f" / {assignment}" if several else "")


def class_report(out, entries, title, shard=None):
    """report.html and summary.json for a class; entries: (folder name, assignment or None,
    result or None, status, the stem of its result files relative to ``out``). Returns the
    summary, or None when they could not be written (the grades are saved already)."""
    students = []
    for name, assignment, result, status, stem in entries:
        saved = result is not None and status == "graded"  # the JSON and the Markdown are on disk
        students.append(classreport.Student(name, printable(display_name(name)), result, status,
                                            f"{stem.as_posix()}.md" if saved else None,
                                            f"{stem.as_posix()}.json" if saved else None, assignment))
    try:
        return classreport.write(out, students, display_name(title), shard)
    except Exception as exc:  # the grades are on disk: a report that fails must not lose them
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        print(printable(f"error: the class report was not written in {out}: {why}"), file=sys.stderr)
        return None


def cmd_merge(args):
    return shards.main(args)


def cmd_stubs(args):
    from . import stubs

    problems = []
    for assignment in course.names():
        if args.check:
            problems += [f"assignments/{assignment}/{p}" for p in stubs.stale_files(assignment)]
        else:
            names = stubs.write_stubs(assignment)
            print(f"assignments/{assignment}: wrote {len(names)} files")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


def cmd_release(args):
    from .release import main_release
    return main_release(args.assignment, Path(args.out) if args.out else None,
                        Path(args.course) if args.course else None)


def cmd_gradescope(args):
    from . import gradescope
    out = Path(args.out)
    names = gradescope.build(args.assignment, out, checks=args.checks, stdout=args.stdout)
    print(f"wrote {out} ({len(names)} files): upload it as the assignment's autograder on Gradescope "
          f"(checks: {args.checks}, stdout: {args.stdout})")
    return 0


def cmd_classroom(args):
    from . import classroom
    return classroom.main(args.assignment, Path(args.out))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade a submission folder, or a folder of submission folders")
    grade.add_argument("path")
    grade.add_argument("--json", help="write the result (Gradescope results.json shape) to this file")
    grade.add_argument("--markdown", help="write the student's feedback as Markdown to this file")
    grade.add_argument("--out", help="class mode: folder for grades.csv and each student's JSON and Markdown "
                                     "feedback (default graded/NAME)")
    grade.add_argument("--regrade", action="store_true", help="class mode: ignore results of an earlier run")
    grade.add_argument("--jobs", type=int, default=0,
                       help="class mode: submissions graded in parallel (default: one per core for large classes)")
    grade.add_argument("--assignment", choices=course.names(),
                       help="grade every submission as this assignment (default: each submission's own, found "
                            "from its folder's name or the modules it holds)")
    grade.add_argument("--timeout", type=float, default=5.0, help="seconds one check may run (default 5)")
    grade.add_argument("--no-isolation", action="store_true",
                       help="run submissions without namespaces (trusted code only; for measurements)")
    grade.add_argument("--junit", help="write JUnit XML for CI test reports to this file (one testcase per check)")
    grade.add_argument("--require-isolation", action="store_true",
                       help="exit 3 when grading ran but some submission ran without full isolation")
    grade.add_argument("--unsafe-same-uid", action="store_true",
                       help="grade even where submissions would run as your own user, able to rewrite the "
                            "reference, the suites, the grader and the results (trusted code only; without it "
                            "such a run stops before the first submission, with exit 3 and what to do)")
    grade.add_argument("--shard", type=shards.parse, metavar="K/N",
                       help="class mode: grade only the K-th of N slices of the class (by a hash of each folder's "
                            "name); join the slices' --out folders with `merge`")
    grade.set_defaults(run=cmd_grade)
    merge = commands.add_parser("merge", help="join the --out folders of a class graded in shards into one")
    merge.add_argument("folders", nargs="+", help="each shard's output folder (grades.csv, summary.json, results)")
    merge.add_argument("--out", required=True, help="folder for the joined grades.csv, summary.json, report.html "
                                                    "and every student's feedback")
    merge.add_argument("--junit", help="also write JUnit XML for the whole class to this file")
    merge.set_defaults(run=cmd_merge)
    stubs = commands.add_parser("stubs", help="regenerate assignments/ from solutions/")
    stubs.add_argument("--check", action="store_true", help="only report stale files (exit 1 if any)")
    stubs.set_defaults(run=cmd_stubs)
    release = commands.add_parser("release", help="build the student release with nbgrader")
    release.add_argument("assignment", choices=course.names())
    release.add_argument("--out", help="folder for the release (default release/ASSIGNMENT)")
    release.add_argument("--course", help="also keep the nbgrader course (gradebook, submitted/) in this folder")
    release.set_defaults(run=cmd_release)
    from .gradescope import VISIBILITY
    gradescope = commands.add_parser("gradescope", help="build the Gradescope autograder zip")
    gradescope.add_argument("assignment", choices=course.names())
    gradescope.add_argument("--out", default="autograder.zip", help="the zip to write (default autograder.zip)")
    gradescope.add_argument("--checks", choices=VISIBILITY, default="visible",
                            help="when students see each check and its feedback: visible (default), "
                                 "after_due_date, after_published, or hidden (they see only the total)")
    gradescope.add_argument("--stdout", choices=VISIBILITY, default="hidden",
                            help="when students see the grader's log (which protections held, every "
                                 "check's feedback); default hidden: only instructors")
    gradescope.set_defaults(run=cmd_gradescope)
    classroom = commands.add_parser("classroom", help="write the GitHub Classroom template repository and "
                                                      "the instructor's class-grading workflow")
    classroom.add_argument("assignment", choices=course.names())
    classroom.add_argument("--out", default="classroom", help="folder to write (default classroom/)")
    classroom.set_defaults(run=cmd_classroom)
    args = parser.parse_args(argv)
    return args.run(args)
