"""Run the public tests of one part and report its points to GitHub Classroom.

Written into the student's repository by `python -m autograder classroom`; the workflow runs
``python .github/classroom/report.py PART POINTS FOLDER`` once per part. It writes the result
in the JSON format of Classroom's grading reporter (base64, as the step output ``result``)
and the part's feedback in Markdown to the job summary. Points are shared out by the number
of public tests that pass; the grade itself comes from the instructor's hidden tests.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from xml.etree import ElementTree


def failures(junit_xml):
    """(number of tests, [(test name, first line of its failure)]) from pytest's JUnit XML."""
    cases, failed = 0, []
    for case in ElementTree.parse(junit_xml).getroot().iter("testcase"):
        cases += 1
        for problem in (*case.iter("failure"), *case.iter("error")):
            failed.append((case.get("name"), (problem.get("message") or "failed").splitlines()[0][:300]))
            break
    return cases, failed


def main(part, points, folder):
    started = time.perf_counter()
    tests = os.path.join(folder, f"test_{part}.py")
    with tempfile.TemporaryDirectory() as tmp:
        junit = os.path.join(tmp, "junit.xml")
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", tests,
                              f"--junitxml={junit}"], capture_output=True, text=True)
        cases, failed = failures(junit) if os.path.exists(junit) else (0, [])
    passed = cases - len(failed)
    score = points * passed // cases if cases else 0
    status = "pass" if cases and not failed else "fail" if cases else "error"
    if status == "error":
        message = f"the public tests of {part} did not run: " + " ".join(run.stdout.strip().splitlines()[-3:])
    else:
        message = f"{passed} of {cases} public tests passed" + "".join(f"; {n}: {m}" for n, m in failed)
    result = {"version": 1, "status": status, "max_score": points,
              "tests": [{"name": part, "status": status, "message": message, "test_code": f"pytest {tests}",
                         "filename": tests, "line_no": 0, "duration": round((time.perf_counter() - started) * 1000),
                         "score": score}]}
    encoded = base64.b64encode(json.dumps(result).encode()).decode()
    for variable, text in (("GITHUB_OUTPUT", f"result={encoded}\n"),
                           ("GITHUB_STEP_SUMMARY", summary(part, score, points, passed, cases, failed, message))):
        if os.environ.get(variable):
            with open(os.environ[variable], "a", encoding="utf-8") as handle:
                handle.write(text)
    print(message)
    return 0  # the points are the verdict; a failing step would hide the other parts' reports


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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
