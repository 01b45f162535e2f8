"""``python -m autograder``: grade one submission or a whole class, regenerate stubs, release.

Exit codes: 0 grading ran (whatever the scores), 1 the grader failed on some submission (or
could not save its result), 2 bad usage or input (a missing path, an empty folder), 3 isolation:
nothing was graded because a submission would run with the grader's own uid (the message says
how to get isolation here; ``--unsafe-same-uid`` grades anyway, for trusted code), or, with
``--require-isolation``, grading ran but some submission ran without full isolation (the
result JSON's ``extra_data.fully_isolated`` says which; the report names what was missing).
"""
import argparse
import sys
from pathlib import Path

from .grading import course
from .platforms import ci, shards


def cmd_grade(args):
    return ci.grade(args)


def cmd_merge(args):
    return ci.merge(args)


def cmd_stubs(args):
    from .authoring import stubs

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
    from .authoring.release import main_release
    return main_release(args.assignment, Path(args.out) if args.out else None,
                        Path(args.course) if args.course else None)


def cmd_gradescope(args):
    from .platforms import gradescope
    out = Path(args.out)
    names = gradescope.build(args.assignment, out, checks=args.checks, stdout=args.stdout)
    print(f"wrote {out} ({len(names)} files): upload it as the assignment's autograder on Gradescope "
          f"(checks: {args.checks}, stdout: {args.stdout})")
    return 0


def cmd_classroom(args):
    from .platforms import classroom
    return classroom.main(args.assignment, Path(args.out))


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
    grade.add_argument("--jobs", type=_at_least(int, 0), default=0,
                       help="class mode: submissions graded in parallel (default: one per core for large classes)")
    grade.add_argument("--assignment", choices=course.names(),
                       help="grade every submission as this assignment (default: each submission's own, found "
                            "from its folder's name or the modules it holds)")
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
    from .platforms.gradescope import VISIBILITY
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
