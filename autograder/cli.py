"""``python -m autograder``: the command line (DESCRIPTION and EXIT_CODES below, as --help shows them)."""
import argparse
import sys
from pathlib import Path

from .grading import course
from .grading.result import HINTS
from .platforms import ci, shards


DESCRIPTION = """\
Grade one submission or a whole class; regenerate the student stubs; build the nbgrader
release, the Gradescope autograder, the Classroom 50 and plain-GitHub repositories and
workflows, and grades for an LMS (Canvas, Moodle). Run it from the
repository's root folder (where README.md is), or with PYTHONPATH naming that folder:
elsewhere Python answers "No module named autograder"."""
EXIT_CODES = """\
exit codes:
  0  grading ran (whatever the scores)
  1  the grader failed on some submission (or could not save its result)
  2  bad usage or input (a missing path, a folder with nothing to grade)
  3  isolation: nothing was graded because a submission would run with the grader's own uid (the
     message says how to get isolation here; --unsafe-same-uid grades anyway, for trusted code),
     or, with --require-isolation, some submission ran without full isolation (the result JSON's
     extra_data.fully_isolated says which; the report names what was missing)

example: python -m autograder grade solutions      (then: python -m autograder grade --help)"""
ASSIGNMENT = f"the assignment: {', '.join(course.names())}"
EXAMPLES = {
    "grade": "examples:\n"
             "  python -m autograder grade solutions/ch03_attention            one submission: a table\n"
             "  python -m autograder grade submitted --out graded/week3        a class: a folder per student\n"
             "  python -m autograder grade alice --json alice.json             one student's folder, as JSON",
    "merge": "example:\n  python -m autograder merge graded/shard-1 graded/shard-2 --out graded/all",
    "stubs": "examples:\n  python -m autograder stubs            rewrite what changed in assignments/\n"
             "  python -m autograder stubs --check    say what is stale (exit 1), change nothing",
    "new": "example (then: python -m autograder grade solutions/appendix_a_pytorch, 100/100):\n"
           "  python -m autograder new appendix_a_pytorch --title \"Appendix A: Introduction to PyTorch\"",
    "release": "example (writes release/ch03_attention):\n  python -m autograder release ch03_attention --course course",
    "gradescope": "example:\n  python -m autograder gradescope ch03_attention --checks after_due_date",
    "github": "example (Classroom 50's classroom ml-2026 in the organisation my-org; one call per assignment,\n"
              "into one folder: each keeps the others):\n"
              "  python -m autograder github ch03_attention --classroom ml-2026 --org my-org --out course-github\n"
              "  python -m autograder github ch04_gpt --classroom ml-2026 --org my-org --out course-github",
    "classroom": "example (the old name of `github`, kept for scripts that call it; it says what changed):\n"
                 "  python -m autograder classroom ch03_attention",
    "export": "example (Canvas's gradebook import, joined with a roster: Canvas's own gradebook export with a\n"
              "folder column added; scores scaled to that assignment's Points Possible):\n"
              "  python -m autograder export graded/week3 --to canvas --roster roster.csv --column \"Attention (55)\" "
              "--out canvas.csv",
    "similarity": "example (writes graded/week3/similarity-ch03_attention/similarity.html and .csv):\n"
                  "  python -m autograder similarity submitted --assignment ch03_attention --graded graded/week3",
}


def cmd_grade(args) -> int:
    return ci.grade(args)


def cmd_merge(args) -> int:
    return ci.merge(args)


def cmd_stubs(args) -> int:
    from .authoring import stubs

    problems = []
    for assignment in course.names():
        if args.check:
            problems += [f"assignments/{assignment}/{p}" for p in stubs.stale_files(assignment)]
            continue
        names = stubs.write_stubs(assignment)
        print(f"assignments/{assignment}: " + (f"wrote {len(names)} file{'s' if len(names) > 1 else ''} "
                                                f"({', '.join(names)})" if names else "up to date, nothing written"))
    for problem in problems:
        print(problem, file=sys.stderr)
    if args.check and not problems:
        print(f"assignments/ is up to date with solutions/ ({', '.join(course.names())})")
    return 1 if problems else 0


def cmd_new(args) -> int:
    from .authoring import scaffold

    try:
        written = scaffold.new(args.name, args.title)
    except scaffold.ScaffoldError as exc:
        print(f"new: {exc}", file=sys.stderr)
        return 2
    print(f"{args.name}: wrote {len(written)} files\n  " + "\n  ".join(written))
    print(f"next: python -m autograder grade solutions/{args.name} (100) and assignments/{args.name} (0); "
          "CONTRIBUTING.md, \"Adding an assignment\", says how it grows")
    return 0


def cmd_release(args) -> int:
    from .authoring.release import main_release
    return main_release(args.assignment, Path(args.out) if args.out else None,
                        Path(args.course) if args.course else None)


def cmd_gradescope(args) -> int:
    from .platforms import gradescope
    out = Path(args.out)
    names = gradescope.build(args.assignment, out, checks=args.checks, stdout=args.stdout,
                             earlier_reference=args.earlier_reference, hints=args.hints)
    print(f"wrote {out} ({len(names)} files): upload it as the assignment's autograder on Gradescope "
          f"(checks: {args.checks}, stdout: {args.stdout}"
          f"{', earlier assignments reference where missing' if args.earlier_reference else ''})")
    print(f"tell students to upload: {course.get(args.assignment).hand_in_text()}")
    return 0


def cmd_github(args) -> int:
    from .platforms import github
    return github.main(args.assignment, Path(args.out), args.classroom, args.org, args.due,
                       old_name=args.command == "classroom", submission_mode=args.submission_mode,
                       hints=args.hints)


def cmd_export(args) -> int:
    from .platforms import lms
    return lms.main(args.graded, args.to, args.out, args.roster, args.column, args.assignment, args.points,
                    args.grade_item)


def cmd_similarity(args) -> int:
    from .platforms import similarity
    return similarity.main(args)


HINTS_ARGS = ("--hints",)
HINTS_OPTIONS = {"choices": HINTS, "default": "change",
                 "help": "where a failed check has a verified one-edit repair of the student's own code, how much "
                         "of it the feedback shows: none (no search), line (the file and line), change (default: "
                         "and the kind of change, not the edited text) or fix (and the edit itself)"}


def classroom_name(text) -> str:
    """Classroom 50's short names: lower case letters, digits and '-'."""
    import re
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{1,38}", text):
        raise argparse.ArgumentTypeError(f"{text!r}: a classroom's short name is 2 to 39 of a-z, 0-9 and '-'")
    return text


def earlier_reference_help() -> str:
    """--earlier-reference's help, naming every module it may hand out, read from the manifests
    (a manifest's builds_on is exactly what a submission may be given)."""
    given = "; ".join(f"{a.name}: {a.builds_on_text()}" for a in course.assignments() if a.builds_on)
    return ("where a submission lacks a module of an earlier assignment it builds on, grade it on the course's "
            f"reference of that module, and say so in its result. Only these modules, as released (no solution "
            f"markers), nothing else of solutions/: {given}. The submission's code then reads them: use it only "
            "after the earlier assignment's deadline")


def _at_least(kind, low, above=False):
    """An argparse type: a ``kind`` number from ``low`` (above it, with ``above``), else a clear error."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not (value > low if above else value >= low):  # NaN included
            raise argparse.ArgumentTypeError(f"must be {'above' if above else 'at least'} {low}, not {text}")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: every subcommand, its arguments, its help and an example."""
    parser = argparse.ArgumentParser(prog="python -m autograder", description=DESCRIPTION, epilog=EXIT_CODES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    earlier_help = earlier_reference_help()
    grade = commands.add_parser("grade", help="grade a submission folder, or a folder of submission folders")
    grade.add_argument("path", help="a submission folder (the .py modules, or a folder per assignment), or a "
                                    "folder of them, one per student")
    grade.add_argument("--json", help="write the result (Gradescope results.json shape) to this file")
    grade.add_argument("--markdown", help="write the student's feedback as Markdown to this file")
    grade.add_argument("--out", help="class mode: folder for grades.csv and each student's JSON and Markdown "
                                     "feedback (default graded/NAME)")
    grade.add_argument("--regrade", action="store_true", help="class mode: ignore results of an earlier run")
    grade.add_argument("--jobs", type=_at_least(int, 0), default=0,
                       help="class mode: submissions graded in parallel (default: one per core for large classes)")
    grade.add_argument("--assignment", choices=course.names(),
                       help="grade every submission as this assignment (default: each submission's own, found "
                            "from its folder's name or the modules it holds)")
    grade.add_argument("--earlier-reference", action="store_true", help=earlier_help)
    grade.add_argument(*HINTS_ARGS, **HINTS_OPTIONS)
    grade.add_argument("--timeout", type=_at_least(float, 0, above=True), default=5.0,
                       help="seconds one check may run (default 5)")
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
                            "name); join the slices' --out folders with `merge`. In a job array: `slurm` (K and N "
                            "from SLURM_ARRAY_TASK_ID/_MIN/_COUNT) or `kubernetes/N` (an Indexed Job of N "
                            "completions: K from JOB_COMPLETION_INDEX)")
    grade.add_argument("--due", help="class mode: the due date (ISO 8601 with its zone, e.g. 2026-12-01T23:59:00Z); "
                                      "needs --times")
    grade.add_argument("--late", default="none", help="class mode: the policy for work handed in after --due: none "
                                                      "(default: graded, marked late), penalty:P (P%% of the points "
                                                      "off per day late) or refuse (scores 0)")
    grade.add_argument("--extensions", help="class mode: CSV or JSON of folder name -> that student's own due date")
    grade.add_argument("--times", help="class mode: CSV or JSON of folder name -> when that submission was handed "
                                       "in (recorded by the platform, never a commit's date)")
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
    new = commands.add_parser("new", help="write a complete, gradeable assignment in its own folders (manifest, "
                                          "module, hidden check, public test, notebook, banks) and its stubs")
    new.add_argument("name", help="the assignment's name: a folder under solutions/, source/, tests/ and "
                                  "autograder/suites/ (lower-case letters, digits, underscores)")
    new.add_argument("--title", help="its title, as the manifest, the notebook and the feedback show it")
    new.set_defaults(run=cmd_new)
    release = commands.add_parser("release", help="build the student release with nbgrader")
    release.add_argument("assignment", choices=course.names(), help=ASSIGNMENT)
    release.add_argument("--out", help="folder for the release (default release/ASSIGNMENT)")
    release.add_argument("--course", help="also keep the nbgrader course (gradebook, submitted/) in this folder")
    release.set_defaults(run=cmd_release)
    from .platforms.gradescope import VISIBILITY
    gradescope = commands.add_parser("gradescope", help="build the Gradescope autograder zip")
    gradescope.add_argument("assignment", choices=course.names(), help=ASSIGNMENT)
    gradescope.add_argument("--out", default="autograder.zip", help="the zip to write (default autograder.zip)")
    gradescope.add_argument("--checks", choices=VISIBILITY, default="visible",
                            help="when students see each check and its feedback: visible (default), "
                                 "after_due_date, after_published, or hidden (they see only the total)")
    gradescope.add_argument("--stdout", choices=VISIBILITY, default="hidden",
                            help="when students see the grader's log (which protections held, every "
                                 "check's feedback); default hidden: only instructors")
    gradescope.add_argument("--earlier-reference", action="store_true", help=earlier_help)
    gradescope.add_argument(*HINTS_ARGS, **HINTS_OPTIONS)
    gradescope.set_defaults(run=cmd_gradescope)
    for name in ("github", "classroom"):  # `classroom`: the old name, which says what changed
        github = commands.add_parser(name, help="write the Classroom 50 and plain-GitHub templates, Classroom 50's "
                                                "config files and the instructor's class-grading workflow"
                                     if name == "github" else "the old name of `github` (GitHub Classroom was "
                                                              "shut down on 28 August 2026)")
        github.add_argument("assignment", choices=course.names(), help=ASSIGNMENT)
        github.add_argument("--out", default=name, help=f"folder to write (default {name}/)")
        github.add_argument("--classroom", type=classroom_name, default="course",
                            help="Classroom 50's short name of the classroom (default course): its repositories "
                                 "are CLASSROOM-ASSIGNMENT-username")
        github.add_argument("--org", help="the organisation: names the template repository in assignments.json")
        github.add_argument("--due", help="the due date Classroom 50 shows (ISO 8601 with its zone); the grade's "
                                          "deadline is the instructor workflow's own")
        github.add_argument("--submission-mode", choices=("every-push", "tag"),
                            help="Classroom 50's submission_mode (default: its own, every-push: each push is "
                                 "graded and tagged submit/*; tag: only `gh student submit` tags are)")
        github.add_argument(*HINTS_ARGS, **HINTS_OPTIONS)
        github.set_defaults(run=cmd_github)
    export = commands.add_parser("export", help="write a class's grades for an LMS: Canvas's or Moodle's gradebook "
                                                "import CSV, or Classroom 50's scores.csv columns")
    export.add_argument("graded", help="a class run's --out folder (grades.csv and each student's result)")
    export.add_argument("--to", required=True, choices=("canvas", "moodle", "classroom50"),
                        help="the gradebook's format: Canvas's or Moodle's import CSV, or Classroom 50's scores.csv")
    export.add_argument("--roster", help="CSV: a folder column (each student's submission folder) and the LMS's "
                                         "own identity columns (required for canvas and moodle)")
    export.add_argument("--out", required=True, help="the CSV to write")
    export.add_argument("--column", help="the grade column's name (default: the assignment's; "
                                          "'autograder' where only grades.csv is left to say)")
    export.add_argument("--assignment", choices=course.names(),
                        help="which assignment, where grades.csv holds several")
    export.add_argument("--points", type=_at_least(float, 0, above=True),
                        help="canvas: the points of the Canvas assignment filled (scores are scaled to them; default: "
                             "the roster's Points Possible of --column, else the grader's maximum)")
    export.add_argument("--grade-item", choices=("new", "existing"),
                        help="moodle: whether --column is a new grade item (not graded: '-', no grade) or an existing "
                             "one (not graded: no row, so a grade already there stays); default: existing where the "
                             "roster has the column")
    export.set_defaults(run=cmd_export)
    similar = commands.add_parser("similarity", help="who shares work beyond the book: pairs of students ranked by "
                                                     "the code they share beyond the course's own and by the rare "
                                                     "wrong answers they share (evidence to read, never a verdict)")
    similar.add_argument("class_folder", metavar="CLASS_FOLDER", help="the folder of submissions, one per student")
    similar.add_argument("--assignment", required=True, choices=course.names(), help=ASSIGNMENT)
    similar.add_argument("--graded", nargs="+", metavar="GRADED",
                         help="the class run's --out folder, a merge's, or every shard's (default graded/NAME "
                              "where it exists): the wrong answers come from the results there")
    similar.add_argument("--out", help="folder for similarity.csv and similarity.html (default: "
                                       "GRADED/similarity-ASSIGNMENT, beside the class report, which links to it)")
    similar.add_argument("--threshold", type=_at_least(float, 0), default=0.4,
                         help="pairs at or above this similarity (0 to 1) are shown on the page (default 0.4)")
    similar.set_defaults(run=cmd_similarity)
    for name, command in commands.choices.items():  # an example under every subcommand's --help
        command.epilog, command.formatter_class = EXAMPLES[name], argparse.RawDescriptionHelpFormatter
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)
