"""The command line's platform, and any CI's: grading a submission or a class into files.

``grade`` is ``python -m autograder grade``: one submission (a table on the terminal; the result
as JSON and Markdown where asked) or a class (a JSON and a Markdown feedback file per student,
grades.csv, summary.json and report.html, JUnit XML and the GitHub job summary where asked);
resumable (an unchanged submission keeps its result), parallel (a grader per worker) and
sharded (``--shard K/N``; ``merge`` joins the slices). Exit codes: see ``autograder.cli``.
"""
import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from . import classreport, deadlines, report, shards
from .files import display_name, feedback_title, own_folder, result_stem, write_atomic
from ..grading import course
from ..grading.engine import Options, start_grader, start_zygote
from ..grading.grade import fingerprint
from ..grading.result import SubmissionResult
from ..paths import ASSIGNMENTS, SOLUTIONS
from ..sandbox import isolate
from ..sandbox.submission import SubmissionError, printable
from ..sandbox.startup import import_torch, restore_environment


def _fail(message, code=2):
    print(printable(f"error: {message}"), file=sys.stderr)
    return code


def _relative(text, root):
    """A status without the instructor's own path: folders named relative to the class folder."""
    for prefix in sorted({str(root.resolve()), str(root.absolute())}, key=len, reverse=True):
        text = text.replace(prefix + os.sep, "")
    return text


def trusted(path) -> bool:
    """The repository's own solutions/ and assignments/: the README's quick start grades them anywhere."""
    real = path.resolve()
    return any(real == top or top in real.parents for top in (SOLUTIONS.resolve(), ASSIGNMENTS.resolve()))


def same_uid_consent(path, isolation, unsafe_same_uid, hidden=(), checking=None) -> bool | None:
    """Asked of the sandbox before the first submission runs. False: a child here is kept apart
    from the grader (and the session refuses any child that is not). True: it would run with
    the grader's own uid, and may (the repository's own code, or --unsafe-same-uid, said
    loudly). None: it may not; the message saying how to get isolation here has been printed.
    ``unsafe_same_uid``: the user said --unsafe-same-uid. ``checking``: the check, started earlier (isolate.start_check) with the same ``hidden``."""
    hello = (checking or isolate.start_check(isolation, hidden))()
    if "failed" in hello or hello["separated"]:  # a child that cannot start says why when it is asked to
        return False
    if unsafe_same_uid:
        print(printable(f"WARNING: --unsafe-same-uid: submissions run as your own user (uid {os.geteuid()}) and "
                        "can read and rewrite everything you can: the reference, the hidden suites, the grader "
                        f"and the results ({hello['isolation']}). Trusted code only."), file=sys.stderr)
        return True
    if trusted(path):
        print(printable(f"note: {path} is the repository's own, so it is graded as your own user "
                        f"({hello['isolation']})"), file=sys.stderr)
        return True
    print(printable(f"error: {isolate.refusal('the submissions', hello['isolation'])}\n"
                    "For code you trust (your own), add --unsafe-same-uid. Nothing was graded."), file=sys.stderr)
    return None


def grade(args):
    """``grade PATH``: one submission (or one student's several), or a class."""
    path = Path(args.path)
    if not path.exists():
        return _fail(f"{path} does not exist")
    if not path.is_dir():
        return _fail(f"{path} is not a folder: give a submission folder (with the .py modules) "
                     "or a folder of submissions")
    isolation = "off" if args.no_isolation else "full"
    if path.is_symlink():
        return _fail(f"{path} is a symbolic link: give the folder itself")
    found = course.find(path, args.assignment)
    if found.submissions and (args.due or args.times or args.extensions):
        return _fail("--due, --times and --extensions grade a class: give the folder of submission folders")
    if found.submissions:
        return grade_student(path, found, isolation, args)
    # A linked student folder could point anywhere (solutions/ included): listed, and refused.
    students = sorted(p for p in path.iterdir() if (p.is_dir() or p.is_symlink()) and not p.name.startswith("."))
    if not students and not args.shard:  # a shard's slice may be empty (its collect step found nobody)
        return _fail(f"{path} holds no submission: it {found.problem.split('/ ', 1)[-1]}")
    # One layout for the class: flat for one assignment, a folder per assignment for several, as the
    # whole class decides it (a shard of a mixed class that holds one assignment is nested as well).
    assignments = sorted({a for _, _, a in _class_submissions(students, args.assignment)[0] if a})
    identity = shards.identity([s.name for s in students], assignments)  # of the whole class, for merge
    layout = assignments if args.shard else None
    if args.shard:  # an empty slice is no error: its (empty) outputs still go to the merge
        students = [s for s in students if shards.in_shard(s.name, *args.shard)]
    out = Path(args.out or Path("graded") / path.resolve().name)
    try:
        args.deadlines = deadlines.for_class(args)
    except deadlines.DeadlineError as exc:
        return _fail(str(exc))
    return grade_class(path, students, out, isolation, args, identity, layout)


def grade_student(path, found, isolation, args):
    """One student's submissions (several, where they hand in several assignments): a table
    each; --json and --markdown get the result, or {assignment: result} for several."""
    checking = isolate.start_check(isolation)  # its interpreter starts beside our import of torch
    # Forked from this process now, before the grader loads anything secret: torch once for both.
    # Warm only what these assignments' checks use (tiktoken, an optimizer). No child is started
    # before the consent.
    options = Options(isolation=isolation, timeout=args.timeout, fork=True,
                      warm=course.warm_ups([a for _, a in found.submissions]),
                      ahead=len(found.submissions) > 1, earlier_reference=args.earlier_reference, hints=args.hints)
    zygote = start_zygote(options)
    same_uid = same_uid_consent(path, isolation, args.unsafe_same_uid, checking=checking)
    if same_uid is None:
        zygote.close()
        return 3
    from ..grading.runner import GraderError
    results = {}
    with start_grader(replace(options, same_uid=same_uid), zygote) as grader:
        for folder, assignment in found.submissions:
            name = str(path if len(found.submissions) == 1 else folder)
            try:
                result = grader.grade_result(folder, assignment).with_notes([found.note])
            except SubmissionError as exc:
                return _fail(str(exc))
            except GraderError as exc:
                ci_outputs(args, [(name, None, f"grader failed: {exc}")])
                return _fail(f"the grader failed: {exc}", 1)
            # several at once (the Quick start's folders): each line cut to the terminal's width
            columns = report.terminal_width() if len(found.submissions) > 1 else None
            print(report.table(result, f"Submission {name}", columns))
            results[name] = result
    if len(results) > 1:
        print(printable(report.run_line(results, report.terminal_width())))
    named = {r.assignment: r.to_json() for r in results.values()}
    if args.json:
        write_atomic(Path(args.json), json.dumps(named.popitem()[1] if len(named) == 1 else named, indent=1))
    if args.markdown:
        write_atomic(Path(args.markdown), "\n".join(report.markdown(r, name) for name, r in results.items()))
    ci_outputs(args, [(name, result, "graded") for name, result in results.items()])
    _warn_uncounted_memory(results.values())
    isolated = all(r.fully_isolated for r in results.values())
    return 3 if args.require_isolation and not isolated else 0


def _warn_uncounted_memory(results):
    """Where neither a memory cgroup nor a private root held, memory was limited per process
    (address space) only, and files left in a shared tmpfs count nowhere. (In a private root
    the only tmpfs is the child's own, capped; the result records the missing cgroup anyway.)"""
    missing = set()
    for result in results:
        protections = result.protections or {}
        if "private root" not in protections.get("held", []):
            missing.add(protections.get("unavailable", {}).get("memory cgroup"))
    for why in sorted(missing - {None}):
        print(printable(f"WARNING: submissions' memory was limited per process only, not where it is charged "
                        f"(memory cgroup unavailable: {why}): files a submission leaves in a shared tmpfs such "
                        "as /dev/shm are not counted"))


def ci_outputs(args, rows) -> None:
    """For CI: JUnit XML (--junit) and the Markdown job summary when $GITHUB_STEP_SUMMARY is set.
    rows: (name, result or None, status) per submission."""
    if args.junit:
        write_atomic(Path(args.junit), report.junit(rows))
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


def _start_grader(options):
    """This process's grader. ``options.fork``: this process holds nothing secret yet, so the
    zygote is forked from it (see Zygote); otherwise the zygote is a fresh interpreter, whose
    import of torch overlaps ours."""
    global _grader
    _grader = start_grader(options)


def _grade_task(folder, assignment=None):
    """(result, status, grader_failed) for one submission; never raises."""
    from ..grading.runner import GraderError
    try:
        return _grader.grade_result(folder, assignment), "graded", False
    except SubmissionError as exc:
        return None, f"not graded: {exc}", False
    except GraderError as exc:
        return None, f"grader failed: {exc}", True
    except Exception as exc:  # a grader bug on one submission must not stop the class
        return None, f"grader failed: {type(exc).__name__}: {exc}", True


def _kept(target, folder, assignment, earlier_reference=False):
    """An earlier run's result, if it exists and the submission's sources are unchanged."""
    try:
        previous = json.loads(target.read_text(encoding="utf-8"))
        extra = previous["extra_data"]
        if assignment and extra.get("assignment", assignment) != assignment:
            return None
        if extra["suites"] != course.suites_digest(extra.get("assignment") or assignment):
            return None  # graded by other suites (or another reference): grade it again
        if extra["fingerprint"] == fingerprint(folder, assignment, earlier_reference):
            return SubmissionResult.from_json(previous)
        return None
    except (OSError, ValueError, KeyError, TypeError, SubmissionError):
        return None


def _start_engine(isolation, args, hidden, count, same_uid, fork, warm):
    """(jobs, None) with this process's grader started, or (jobs, a pool of worker processes).

    Parallel only where it pays for the workers' start. ``fork``: this process holds nothing
    secret yet and has imported torch, so the workers (or its zygote) are forked from it;
    otherwise each worker is a fresh interpreter with a zygote of its own. ``warm``: the zygotes'
    warm-ups (course.warm_ups of the class's assignments)."""
    options = Options(isolation=isolation, timeout=args.timeout, hidden=hidden, same_uid=same_uid, fork=fork, warm=warm,
                      jobs=args.jobs or min(os.cpu_count() or 1, max(1, count // 8)),
                      earlier_reference=args.earlier_reference, hints=args.hints)
    if options.jobs <= 1:
        _start_grader(options)
        return 1, None
    if not fork:
        restore_environment()  # fresh interpreters: they inherit this process's environment
    context = multiprocessing.get_context("fork" if fork else "spawn")
    pool = ProcessPoolExecutor(options.jobs, mp_context=context, initializer=_start_grader, initargs=(options,))
    pool.submit(int)  # the first task forks every worker: now, before this process reads a result
    restore_environment()  # every worker is forked (each forks its zygote before it restores its own)
    return options.jobs, pool


def _class_submissions(students, forced):
    """([(student, folder, assignment or None)], {(student's name, assignment): (note, problem)}):
    each student's submissions, one per assignment they hand in (course.find), with the note on
    what their folder holds that belongs to none; a student with none is listed once, with why."""
    items, found = [], {}
    for student in students:
        holds = (course.Found((), problem=f"{student.name} is a symbolic link: not followed") if student.is_symlink()
                 else course.find(student, forced))
        for folder, assignment in holds.submissions or [(student, forced if holds.submissions else None)]:
            items.append((student, folder, assignment))
            found[student.name, assignment] = (holds.note, holds.problem)
    return items, found


def grade_class(root, students, out, isolation, args, identity=None, layout=None):
    """Grade every subfolder; one JSON each as it finishes, then the CSV. Resumable.

    With several jobs, each worker process has its own grader and zygote; results are still
    written here, one atomic file at a time. ``layout``: the whole class's assignments, where
    ``students`` is a shard of it (the results' layout follows the class, not the slice)."""
    painter = classreport.Painter()  # the report's charts: its import of matplotlib runs beside ours of torch
    try:
        return _grade_class(root, students, out, isolation, args, painter, identity, layout)
    finally:
        painter.close()


def _grade_class(root, students, out, isolation, args, painter, identity, layout=None):
    started = time.perf_counter()
    hidden = (str(root.resolve()), str(out.resolve()))  # other students and all results: never in a child
    items, found = _class_submissions(students, args.assignment)
    assignments = sorted({a for _, _, a in items if a})
    several = len(layout or assignments) > 1  # then a folder of results per assignment, a column group each

    def target(name, assignment, suffix):
        """A result file; the suffix is appended (a folder name may hold dots: with_suffix would cut it)."""
        return (out / assignment if several and assignment else out) / (result_stem(name) + suffix)

    def make_out():
        """Made by the grader before any child runs: a child never gets to make it (in a folder it may write)."""
        try:
            own_folder(out)
        except OSError as exc:
            return _fail(f"{out}: the results folder cannot be used: {exc.strerror}")

    if out.exists() or out.is_symlink():  # before any earlier result in it is read
        try:
            own_folder(out)
        except OSError as exc:
            return _fail(f"{out}: the results folder cannot be used: {exc.strerror}")
    taken = {}
    for student, _, assignment in items:  # unique by construction (result_stem); refused loudly if not
        other = taken.setdefault(target(student.name, assignment, ""), student.name)
        if other != student.name:
            return _fail(printable(f"{display_name(other)!r} and {display_name(student.name)!r} would share the "
                                   "result files: rename one of the folders"))
    # Where something is to be graded for sure, the graders start now, forked from this process
    # before it reads an earlier result (a child sees its zygote's memory): torch is imported once.
    engine = None
    if args.regrade or any(not target(s.name, a, ".json").exists() for s, _, a in items if not found[s.name, a][1]):
        checking = isolate.start_check(isolation, hidden)  # its interpreter starts beside our import of torch
        import_torch()  # once, here: the graders are forked with it
        same_uid = same_uid_consent(root, isolation, args.unsafe_same_uid, hidden, checking)
        if same_uid is None:
            return 3
        if make_out():
            return 2
        engine = _start_engine(isolation, args, hidden, len(items), same_uid, fork=True,
                               warm=course.warm_ups({a for _, _, a in items if a}))
    outcomes, todo = {}, []
    for student, folder, assignment in items:
        key = (student.name, assignment)
        if found[key][1]:
            outcomes[key] = (None, f"not graded: {found[key][1]}", False)
            continue
        kept = None if args.regrade else _kept(target(student.name, assignment, ".json"), folder, assignment,
                                                   args.earlier_reference)
        if kept:
            outcomes[key] = (kept, "graded", False)
        else:
            todo.append((key, folder, assignment))
    if engine is None:
        same_uid = same_uid_consent(root, isolation, args.unsafe_same_uid, hidden) if todo else False
        if same_uid is None:
            return 3
        if make_out():
            return 2

    def finish(key, outcome, kept=False) -> None:
        outcome = deadlines.apply(*args.deadlines, key[0], outcome)  # the late policy, on the earned score
        if not kept:  # a kept result has its notes and status already
            result = outcome[0] and outcome[0].with_notes([found[key][0]])
            outcome = (result, _relative(outcome[1], root), outcome[2])
        result = outcome[0]
        if result is not None:
            try:
                classreport.write_feedback(target(*key, ""), result, feedback_title(*key, several))
                write_atomic(target(*key, ".json"), json.dumps(result.to_json(), indent=1))  # last: it marks it done
            except OSError as exc:  # this student's result is lost, not the class's
                outcome = (result, f"graded ({result.score}), but the result was not saved: {exc.strerror}", True)
        outcomes[key] = outcome
        _progress(len(outcomes), len(items), started, key[0])

    if args.deadlines[0]:  # a kept result gets today's due dates and policy too
        for key in [key for key in outcomes if outcomes[key][0]]:
            finish(key, outcomes[key], kept=True)
    if engine is None and todo:  # earlier results are in memory now: fresh interpreters only
        engine = _start_engine(isolation, args, hidden, len(todo), same_uid, fork=False,
                               warm=course.warm_ups({a for _, _, a in todo if a}))
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
        write_atomic(out / "grades.csv", report.class_csv(rows, (layout or assignments) or None))
    except OSError as exc:
        print(printable(f"error: {out / 'grades.csv'} not written: {exc.strerror}"), file=sys.stderr)
        return 1
    rows = [(f"{name}/{a}" if several and a else name, result, status) for name, result, status, a in rows]
    ci_outputs(args, rows)
    report_started = time.perf_counter()
    summary = class_report(out, [(student.name, a, *outcomes[student.name, a][:2],
                                  target(student.name, a, "").relative_to(out)) for student, _, a in items],
                           root.resolve().name, args.shard, painter, identity)
    report_seconds = time.perf_counter() - report_started
    graded = sum(1 for _, result, _ in rows if result)
    kept = len(items) - len(todo) - sum(1 for s, _, a in items if found[s.name, a][1])  # not gradable: not kept
    print(printable(f"graded {graded} of {len(rows)} submissions ({kept} unchanged since an earlier run, kept) in "
                    f"{report_started - started:.1f} s ({jobs} job{'s' if jobs > 1 else ''}); "
                    f"results in {out}/ (grades.csv, and a JSON and a Markdown feedback file per student"
                    f"{' and assignment, a folder per assignment' if several else ''})"))
    reduced = sorted({r.isolation for _, r, _ in rows if r and r.isolation != "namespaces"})
    for isolation in reduced:
        print(printable(f"WARNING: submissions ran without full isolation: {isolation}"))
    _warn_uncounted_memory(result for _, result, _ in rows if result)
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


def class_report(out, entries, title, shard=None, painter=None, identity=None):
    """report.html and summary.json for a class; entries: (folder name, assignment or None,
    result or None, status, the stem of its result files relative to ``out``). Returns the
    summary, or None when they could not be written (the grades are saved already).
    ``painter``: the classreport.Painter started with the run, if any."""
    students = []
    for name, assignment, result, status, stem in entries:
        saved = result is not None and status == "graded"  # the JSON and the Markdown are on disk
        students.append(classreport.Student(name, printable(display_name(name)), result, status,
                                            f"{stem.as_posix()}.html" if saved else None,
                                            f"{stem.as_posix()}.json" if saved else None, assignment))
    try:
        return classreport.write(out, students, display_name(title), shard, painter, identity)
    except Exception as exc:  # the grades are on disk: a report that fails must not lose them
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        print(printable(f"error: the class report was not written in {out}: {why}"), file=sys.stderr)
        return None


def merge(args) -> int:
    """``python -m autograder merge``: exit 0 merged, 2 refused."""
    try:
        summary, rows = shards.merge(args.folders, args.out)
    except shards.MergeError as exc:
        print(printable(f"error: not merged: {exc}"), file=sys.stderr)
        return 2
    ci_outputs(args, rows)
    print(printable(f"merged {len(args.folders)} shards: {summary['graded']} of {summary['students']} submissions "
                    f"graded; results in {args.out}/ (grades.csv, summary.json, report.html, and each student's "
                    "feedback)"))
    for line in classreport.terminal_lines(summary):
        print(line)
    return 0
