"""``python -m autograder``: grade one submission or a whole class, regenerate stubs, release.

Exit codes: 0 grading ran (whatever the scores), 1 the grader failed on some submission (or
could not save its result), 2 bad usage or input (a missing path, an empty folder), 3 only with
``--require-isolation``: grading ran, but some submission ran without full isolation (the
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

from . import report
from .paths import ASSIGNMENT_NAMES
from .submission import SubmissionError, printable, read_sources
from .zygote import Zygote


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


def submission_folder(folder):
    """The folder holding a submission's modules: ``folder`` itself, or ``folder/<assignment>``
    when it is laid out like assignments/. None when it holds neither."""
    for candidate in (folder, *(folder / name for name in ASSIGNMENT_NAMES)):
        if candidate.is_symlink() and candidate != folder:
            return candidate  # read_sources refuses it, and says so
        if candidate.is_dir() and any(p.suffix == ".py" for p in candidate.iterdir()):
            return candidate
    return None


def _write_atomic(path, text):
    """Write beside the target, then rename: a crash never leaves a half-written result."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def fingerprint(folder):
    """Hash of the submission's Python sources: a finished result is reused only if they are unchanged."""
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


def grade_one(grader, folder):
    result = grader.grade(folder)
    notes = _syntax_notes(folder)
    if notes:
        result["output"] = "\n".join(filter(None, [*notes, result["output"]]))
    result["extra_data"]["fingerprint"] = fingerprint(folder)
    return result


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
    single = submission_folder(path)
    if single:
        # Forked from this process now, before the grader loads anything secret: torch once for both.
        zygote = Zygote(isolation=isolation, fork=True)
        from .runner import Grader, GraderError
        with Grader(isolation=isolation, timeout=args.timeout, zygote=zygote, ahead=False) as grader:
            try:
                result = grade_one(grader, single)
            except SubmissionError as exc:
                return _fail(str(exc))
            except GraderError as exc:
                ci_outputs(args, [(str(path), None, f"grader failed: {exc}")])
                return _fail(f"the grader failed: {exc}", 1)
        print(report.table(result, f"Submission {path}"))
        if args.json:
            _write_atomic(Path(args.json), json.dumps(result, indent=1))
        if args.markdown:
            _write_atomic(Path(args.markdown), report.markdown(result, str(path)))
        ci_outputs(args, [(str(path), result, "graded")])
        return 3 if args.require_isolation and not result["extra_data"]["fully_isolated"] else 0
    # A linked student folder could point anywhere (solutions/ included): listed, and refused.
    students = sorted(p for p in path.iterdir() if (p.is_dir() or p.is_symlink()) and not p.name.startswith("."))
    if not students:
        return _fail(f"{path} holds no submission: no .py files and no subfolders")
    out = Path(args.out or Path("graded") / path.resolve().name)
    return grade_class(path, students, out, isolation, args)


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


def _start_grader(isolation, timeout, hidden=(), fork=False):
    """``fork``: this process holds nothing secret yet, so the zygote is forked from it (see
    Zygote); otherwise the zygote is a fresh interpreter, whose import of torch overlaps ours."""
    global _grader
    zygote = Zygote(hidden=hidden, isolation=isolation, fork=fork)
    from .runner import Grader
    _grader = Grader(isolation=isolation, timeout=timeout, hidden=hidden, zygote=zygote)


def _grade_task(folder):
    """(result, status, grader_failed) for one submission; never raises."""
    from .runner import GraderError
    try:
        return grade_one(_grader, folder), "graded", False
    except SubmissionError as exc:
        return None, f"not graded: {exc}", False
    except GraderError as exc:
        return None, f"grader failed: {exc}", True
    except Exception as exc:  # a grader bug on one submission must not stop the class
        return None, f"grader failed: {type(exc).__name__}: {exc}", True


def _kept(target, folder):
    """An earlier run's result, if it exists and the submission's sources are unchanged."""
    try:
        previous = json.loads(target.read_text(encoding="utf-8"))
        return previous if previous["extra_data"]["fingerprint"] == fingerprint(folder) else None
    except (OSError, ValueError, KeyError, TypeError, SubmissionError):
        return None


def _start_engine(isolation, args, hidden, count, fork):
    """(jobs, None) with this process's grader started, or (jobs, a pool of worker processes).

    Parallel only where it pays for the workers' start. ``fork``: this process holds nothing
    secret yet, so it imports torch and the workers (or its zygote) are forked from it;
    otherwise each worker is a fresh interpreter with a zygote of its own."""
    jobs = args.jobs or min(os.cpu_count() or 1, max(1, count // 8))
    if jobs <= 1:
        _start_grader(isolation, args.timeout, hidden, fork=fork)
        return 1, None
    if fork:
        from .zygote import import_torch
        import_torch()  # here, once: every worker is forked with it
    context = multiprocessing.get_context("fork" if fork else "spawn")
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_grader,
                               initargs=(isolation, args.timeout, hidden, fork))
    pool.submit(int)  # the first task forks every worker: now, before this process reads a result
    return jobs, pool


def grade_class(root, students, out, isolation, args):
    """Grade every subfolder; one JSON each as it finishes, then the CSV. Resumable.

    With several jobs, each worker process has its own grader and zygote; results are still
    written here, one atomic file at a time."""
    started = time.perf_counter()
    hidden = (str(root.resolve()), str(out.resolve()))  # other students and all results: never in a child
    # Where something is to be graded for sure, the graders start now, forked from this process
    # before it reads an earlier result (a child sees its zygote's memory): torch is imported once.
    engine = None
    if args.regrade or any(not (out / f"{result_stem(s.name)}.json").exists() for s in students):
        engine = _start_engine(isolation, args, hidden, len(students), fork=True)
    outcomes, todo = {}, []
    for student in students:
        folder = student if student.is_symlink() else submission_folder(student) or student  # a link: refused
        kept = None if args.regrade else _kept(out / f"{result_stem(student.name)}.json", folder)
        if kept:
            outcomes[student.name] = (kept, "graded", False)
        else:
            todo.append((student.name, folder))

    def finish(name, outcome):
        result = outcome[0]
        if result is not None:
            stem = result_stem(name)
            try:
                _write_atomic(out / f"{stem}.md", report.markdown(result, display_name(name)))
                _write_atomic(out / f"{stem}.json", json.dumps(result, indent=1))  # last: it marks the student done
            except OSError as exc:  # this student's result is lost, not the class's
                outcome = (result, f"graded ({result['score']}), but the result was not saved: {exc.strerror}", True)
        outcomes[name] = outcome
        _progress(len(outcomes), len(students), started, name)

    if engine is None and todo:  # earlier results are in memory now: fresh interpreters only
        engine = _start_engine(isolation, args, hidden, len(todo), fork=False)
    jobs = engine[0] if engine else 1
    if engine and engine[1] is None:
        try:
            for name, folder in todo:
                finish(name, _grade_task(folder))
        finally:
            _grader.close()
    elif engine:
        with engine[1] as pool:
            futures = {pool.submit(_grade_task, folder): name for name, folder in todo}
            for future in as_completed(futures):
                try:
                    outcome = future.result()
                except Exception as exc:  # a worker died: that student is reported, the rest go on
                    outcome = (None, f"grader failed: {type(exc).__name__}: {exc}", True)
                finish(futures[future], outcome)
    rows = [(display_name(s.name), *outcomes[s.name][:2]) for s in students]
    try:
        _write_atomic(out / "grades.csv", report.class_csv(rows))
    except OSError as exc:
        print(printable(f"error: {out / 'grades.csv'} not written: {exc.strerror}"), file=sys.stderr)
        return 1
    ci_outputs(args, rows)
    graded = sum(1 for _, result, _ in rows if result)
    kept = len(students) - len(todo)
    print(printable(f"graded {graded} of {len(rows)} submissions ({kept} unchanged since an earlier run, kept) in "
                    f"{time.perf_counter() - started:.1f} s ({jobs} job{'s' if jobs > 1 else ''}); "
                    f"results in {out}/ (grades.csv, and a JSON and a Markdown feedback file per student)"))
    reduced = sorted({r["extra_data"]["isolation"] for _, r, _ in rows if r and r["extra_data"]["isolation"] != "namespaces"})
    for isolation in reduced:
        print(printable(f"WARNING: submissions ran without full isolation: {isolation}"))
    for name, _, status in rows:
        if status != "graded":
            print(printable(f"  {name}: {status}"))
    if any(outcome[2] for outcome in outcomes.values()):
        return 1
    return 3 if args.require_isolation and reduced else 0


def cmd_stubs(args):
    from . import stubs

    problems = []
    for assignment in ASSIGNMENT_NAMES:
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
    grade.add_argument("--timeout", type=float, default=5.0, help="seconds one check may run (default 5)")
    grade.add_argument("--no-isolation", action="store_true",
                       help="run submissions without namespaces (trusted code only; for measurements)")
    grade.add_argument("--junit", help="write JUnit XML for CI test reports to this file (one testcase per check)")
    grade.add_argument("--require-isolation", action="store_true",
                       help="exit 3 when grading ran but some submission ran without full isolation")
    grade.set_defaults(run=cmd_grade)
    stubs = commands.add_parser("stubs", help="regenerate assignments/ from solutions/")
    stubs.add_argument("--check", action="store_true", help="only report stale files (exit 1 if any)")
    stubs.set_defaults(run=cmd_stubs)
    release = commands.add_parser("release", help="build the student release with nbgrader")
    release.add_argument("assignment")
    release.add_argument("--out", help="folder for the release (default release/ASSIGNMENT)")
    release.add_argument("--course", help="also keep the nbgrader course (gradebook, submitted/) in this folder")
    release.set_defaults(run=cmd_release)
    from .gradescope import VISIBILITY
    gradescope = commands.add_parser("gradescope", help="build the Gradescope autograder zip")
    gradescope.add_argument("assignment", choices=ASSIGNMENT_NAMES)
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
    classroom.add_argument("assignment", choices=ASSIGNMENT_NAMES)
    classroom.add_argument("--out", default="classroom", help="folder to write (default classroom/)")
    classroom.set_defaults(run=cmd_classroom)
    args = parser.parse_args(argv)
    return args.run(args)
