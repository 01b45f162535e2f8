"""Run each part's public tests and show the student their progress: one row per part.

Written by `python -m autograder github`, and the same file on both platforms: Classroom 50 runs
it as the assignment's autograder (CLASSROOM/autograders/SLUG/autograder.py, served by the
organisation's public GitHub Pages), a plain GitHub template runs it from its workflow
(.github/autograder.py). It writes ``./result.json`` (Classroom 50's ``classroom50/result/v1``)
and the Markdown feedback to the job summary, and exits 0: the points are the verdict, and a
failing step would hide the other parts. A part's points are shared out over its public tests as
Classroom 50's own python tests score them: round(points * passed / total), and at most points - 1
while any fails (full points only when all pass). These points show progress; the grade comes from
the instructor's hidden tests, which are never here.

Time: Classroom 50 kills its grade job after 15 minutes, and its runner installs nothing (no pip
cache either): the install of the pinned requirements and every part share BUDGET seconds, counted
from the start. A part gets what is left but MIN_PART seconds for each part after it, at most
PART_SECONDS; a part the budget no longer reaches is shown with 0 points and why, never left out.
An assignment that imports modules of earlier ones (EARLIER) says first, in one line, which are
missing here and what to do; every part is still shown.
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from xml.etree import ElementTree

FOLDER = "@FOLDER@"     # the assignment's folder in the student's repository
PARTS = {}  # @PARTS@: {part: points}, in the order the parts are graded
EARLIER = {}  # @EARLIER@: {earlier assignment: its modules this one imports}
CPU_TORCH = "https://download.pytorch.org/whl/cpu"
BUDGET = 780        # seconds for the install and every part: 13 of Classroom 50's 15 minutes (checkout,
                    # Python's set-up and the release take the rest)
PART_SECONDS = 600  # one part's public tests at most; the others still run
MIN_PART = 20       # seconds kept for each part still to run
STARTED = time.monotonic()


def failures(junit_xml):
    """(number of tests, [(test name, first line of its failure)]) from pytest's JUnit XML."""
    cases, failed = 0, []
    for case in ElementTree.parse(junit_xml).getroot().iter("testcase"):
        cases += 1
        for problem in (*case.iter("failure"), *case.iter("error")):
            failed.append((case.get("name"), (problem.get("message") or "failed").splitlines()[0][:300]))
            break
    return cases, failed


def missing():
    """[(earlier assignment, file)] of the modules of earlier assignments found neither in this
    assignment's folder nor in the earlier assignment's folder beside it (where the public tests look)."""
    return [(earlier, name) for earlier, files in EARLIER.items() for name in files
            if not os.path.isfile(os.path.join(FOLDER, name)) and not os.path.isfile(os.path.join(earlier, name))]


def missing_line(absent):
    """One line: what is missing, and what to do; "" when nothing is."""
    if not absent:
        return ""
    where = {}
    for earlier, name in absent:
        where.setdefault(earlier, []).append(name)
    return ("Missing: " + "; ".join(f"your own {', '.join(names)} from {earlier}" for earlier, names in where.items())
            + f". {FOLDER} imports them: copy them from your " + " and ".join(f"{e} repository into {e}/"
                                                                            for e in where)
            + " in this repository (or into " + FOLDER + "/). Until then the parts that import them fail here; "
            "your grade takes them from your graded " + " and ".join(where) + " submission where you do not hand "
            "them in here.")


def seconds_for(left_after):
    """The seconds the next part may run: what the budget has left, less MIN_PART for each part after it."""
    return min(PART_SECONDS, BUDGET - (time.monotonic() - STARTED) - MIN_PART * left_after)


def run_part(part, points, seconds=None, note=""):
    """The row of one part: {test-name, passed, score, max-score, message} and its summary.
    ``seconds``: how long its tests may run (default PART_SECONDS); ``note`` ends its message."""
    seconds = PART_SECONDS if seconds is None else seconds
    tests = os.path.join(FOLDER, f"test_{part}.py")
    with tempfile.TemporaryDirectory() as tmp:
        junit = os.path.join(tmp, "junit.xml")
        if seconds < 1:
            output = f"not run: the {BUDGET} s this check has (Classroom 50 stops it at 15 minutes) ran out"
        else:
            try:
                run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", tests,
                                      f"--junitxml={junit}"], capture_output=True, text=True, timeout=seconds)
                output = run.stdout + run.stderr
            except subprocess.TimeoutExpired:
                output = f"they did not finish in {seconds:.0f} s (a loop that never ends?)"
        cases, failed = failures(junit) if os.path.exists(junit) else (0, [])
    passed = cases - len(failed)
    score = round(points * passed / cases) if cases else 0
    if failed:  # as Classroom 50's runner caps a failing python test: full points only when all pass
        score = min(score, max(0, points - 1))
    if not cases:
        message = f"the public tests of {part} did not run: " + " ".join(output.strip().splitlines()[-3:])
    else:
        message = f"{passed} of {cases} public tests passed" + "".join(f"; {n}: {m}" for n, m in failed)
    if note and failed or note and not cases:
        message += f" ({note})"
    row = {"test-name": part, "passed": bool(cases) and not failed, "score": score, "max-score": points,
           "message": message}
    return row, summary(part, score, points, passed, cases, failed, message)


def code(text):
    """The student's text (a test's name, a failure's message, pytest's output) as a Markdown code
    span: shown as it is, never as a tag, link or image (no backquote inside can end it)."""
    return "`" + " ".join(str(text).replace("`", "'").splitlines()) + "`"


def summary(part, score, points, passed, cases, failed, message):
    lines = [f"### {part}: {score} / {points} points ({passed} of {cases} public tests pass)", ""]
    if failed:
        lines += [f"- {code(name)}: {code(text)}" for name, text in failed]
    elif not cases:
        lines.append(code(message))
    return "\n".join(lines) + "\n\n"


def committed():
    """The commit's committer date, as Classroom 50's result records it (the grade never uses it)."""
    try:
        seconds = int(subprocess.run(["git", "log", "-1", "--format=%ct"], capture_output=True, text=True).stdout)
    except (OSError, ValueError):  # no git, or not a repository
        seconds = datetime.datetime.now().timestamp()
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def install():
    """Classroom 50's runner sets up Python only: the pinned requirements, with the CPU torch."""
    try:
        import torch  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--extra-index-url", CPU_TORCH,
                        "-r", "requirements.txt"], check=False)


def main():
    install()
    rows, text = [], []
    line = missing_line(missing())
    for i, (part, points) in enumerate(PARTS.items()):
        row, shown = run_part(part, points, seconds_for(len(PARTS) - i - 1),
                              "see the missing modules above" if line else "")
        rows.append(row)
        text.append(shown)
    env = os.environ.get
    sha = env("GITHUB_SHA", "")
    commit = env("COMMIT_URL") or f"{env('GITHUB_SERVER_URL', 'https://github.com')}/{env('GITHUB_REPOSITORY', '')}" \
                                  f"/commit/{sha}"
    result = {"schema": "classroom50/result/v1", "classroom": env("CLASSROOM") or env("GITHUB_REPOSITORY_OWNER", "-"),
              "assignment": env("ASSIGNMENT") or FOLDER, "assignment_type": env("ASSIGNMENT_TYPE") or "individual",
              "owner": env("OWNER") or env("USERNAME") or env("GITHUB_ACTOR", "-"),
              "submission": env("SUBMISSION_TAG") or f"submit/{sha[:7] or 'local'}", "commit": commit,
              "release": env("RELEASE_URL") or commit, "review": env("REVIEW_URL") or commit,
              "datetime": committed(), "score": sum(r["score"] for r in rows),
              "max-score": sum(PARTS.values()), "tests": rows}
    with open("result.json", "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
    header = (f"## Public tests: {result['score']} / {result['max-score']} points\n\n"
              "Progress only: your grade comes from the course's hidden tests.\n\n"
              + (f"**{line}**\n\n" if line else ""))
    if env("GITHUB_STEP_SUMMARY"):
        with open(env("GITHUB_STEP_SUMMARY"), "a", encoding="utf-8") as handle:
            handle.write(header + "".join(text))
    print(header + "".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
