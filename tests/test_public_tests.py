"""The public tests students run: green on the reference, a clear NotImplementedError on the stubs."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from autograder.grading import course
from autograder.grading.result import SubmissionResult
from autograder.paths import ROOT
from autograder.platforms import report
from autograder.support.public_tests import part_stubs
from banks import expectations


def run_pytest(folder):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", str(folder)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "400"})  # untruncated summary lines


def counts(output):
    found = dict((kind, int(n)) for n, kind in re.findall(r"(\d+) (passed|failed)", output))
    return found.get("passed", 0), found.get("failed", 0)


def progress(output):
    """(part, how far) of each line of the summary the conftest's public_tests writes last."""
    section = output.rpartition("your progress, part by part")[2]
    return re.findall(r"^  (\w+) +(all|not written yet|\d+ of)\b", section, flags=re.M)


@pytest.fixture(scope="module")
def on_solutions():
    return {}


@pytest.mark.parametrize("assignment", course.names())
def test_public_tests_pass_on_the_solutions(assignment, on_solutions):
    run = run_pytest(course.get(assignment).solutions)
    assert run.returncode == 0, run.stdout[-2000:]
    passed, failed = on_solutions[assignment] = counts(run.stdout)
    assert passed > 0 and failed == 0
    assert progress(run.stdout) == [(part, "all") for part in course.get(assignment).parts], run.stdout[-2000:]


@pytest.mark.parametrize("assignment", course.names())
def test_public_tests_fail_on_the_stubs_with_not_implemented(assignment, on_solutions, grader):
    """A blank submission: every test fails, each in one line saying which function is not
    written yet, no traceback, and each part says so once with the functions still to write, last
    (after pytest's short summary, on a 24-line screen), in the very words the grader's feedback
    uses for the same stubs (one list: public_tests.part_stubs of the part: its module, or the manifest's functions)."""
    run = run_pytest(course.get(assignment).stubs)
    parts = course.get(assignment).parts
    total = sum(on_solutions.get(assignment) or counts(run_pytest(course.get(assignment).solutions).stdout))
    assert counts(run.stdout) == (0, total), run.stdout[-2000:]
    failures = re.findall(r"^FAILED .*$", run.stdout, flags=re.M)
    assert len(failures) == total
    assert all(" - not written yet: " in line for line in failures), failures
    for noise in ("Traceback", "NotImplementedError", "raise ", "^^^", "_ _ _", "FAILURES"):
        assert noise not in run.stdout, f"{noise!r} in the blank run:\n{run.stdout[-2000:]}"
    # one line a test, one a part, and a few of pytest's (the dots, the headings, the count, a missing file)
    assert len(run.stdout.splitlines()) <= total + len(parts) + 8, run.stdout
    # the run ends with one line per part, in the book's (the manifest's) order: none started
    assert progress(run.stdout) == [(part, "not written yet") for part in parts], run.stdout[-2000:]
    stubs = {part: re.search(rf"^  {part} +not written yet: (\d+) functions?: (.*)$", run.stdout, flags=re.M)
             for part in parts}
    a = course.get(assignment)
    for part, found in stubs.items():  # the part's functions (its module's, or the manifest's), every one to write
        left = part_stubs(part, a.functions_of(part), lambda module: (a.stubs / f"{module}.py").read_text())
        assert int(found[1]) == len(found[2].split(", ")) == len(left) > 0, (part, found[0], left)
    # the table is what the student reads last: it and pytest's count fill the screen's last lines
    screen = run.stdout.splitlines()[-24:]
    heading = next(i for i, line in enumerate(screen) if "your progress, part by part" in line)
    table = screen[heading + 1:heading + 1 + len(parts)]
    assert [line.split()[0] for line in table] == list(parts), run.stdout[-3000:]
    assert all(not line.startswith("FAILED") for line in screen[heading:]), run.stdout[-3000:]
    # the grader says the same of the same stubs, word for word
    result = SubmissionResult.from_json(grader.grade(course.get(assignment).stubs, assignment))
    blank = report.unwritten(result)
    assert sorted(blank) == sorted(parts), report.table(result, assignment)
    for line in table:
        part, said = line.split(maxsplit=1)
        assert said == blank[part], f"{part}: the public tests say {said!r}, the grader {blank[part]!r}"


def reference_copy(assignment, tmp_path):
    """The student's folder as a student with the reference's answers has it: the stubs' folder
    (its generated conftest and support modules), the reference's modules, and the files handed
    in from earlier assignments."""
    a = course.get(assignment)
    folder = tmp_path / assignment
    shutil.copytree(a.stubs, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in a.solutions.glob("*.py"):
        if not path.name.startswith("test_") and path.name != "conftest.py":
            shutil.copy(path, folder / path.name)
    for handed in a.hand_in:
        if handed.assignment != assignment:
            shutil.copy(course.get(handed.assignment).solutions / handed.file, folder / handed.file)
    return folder


@pytest.mark.parametrize("assignment", course.names())
def test_a_wrong_value_reads_yours_beside_the_books(assignment, tmp_path):
    """The reference with one wrong line: the failures show the student's numbers beside the
    book's, in the tests' words, never pytest's view of an assert (``<built-in method ...``)."""
    module, line, wrong, says = expectations(assignment, "WRONG")  # tests/<assignment>/expectations.py
    folder = reference_copy(assignment, tmp_path)
    source = (folder / module).read_text()
    assert line in source, f"{module} no longer has {line!r}: pick another wrong line"
    (folder / module).write_text(source.replace(line, wrong))
    run = run_pytest(folder)
    assert counts(run.stdout)[1] > 0, run.stdout[-2000:]
    assert says in run.stdout, run.stdout[-3000:]
    assert re.search(r"^  yours: +[\[\s-]*\d+\.\d{4}", run.stdout, flags=re.M), run.stdout[-3000:]
    assert re.search(r"^  the book's: +[\[\s-]*\d+\.\d{4}", run.stdout, flags=re.M), run.stdout[-3000:]
    for noise in ("<built-in method", "where False =", "+  where", "assert False", "Traceback"):
        assert noise not in run.stdout, f"{noise!r}:\n{run.stdout[-3000:]}"


def test_an_exception_keeps_a_short_traceback_through_the_students_files(tmp_path):
    """An error in the student's code: its type and message first, then the test's line and the
    student's lines that led there, and none of pytest's or torch's."""
    folder = reference_copy("ch03_attention", tmp_path)
    source = (folder / "simple_attention.py").read_text()
    assert "attn_scores = inputs @ inputs.T" in source
    (folder / "simple_attention.py").write_text(source.replace("attn_scores = inputs @ inputs.T",
                                                               "attn_scores = inputs @ inputs"))
    run = run_pytest(folder)
    assert "RuntimeError: mat1 and mat2 shapes cannot be multiplied" in run.stdout, run.stdout[-3000:]
    assert re.search(r"^  simple_attention\.py:\d+ in \w+: attn_scores = inputs @ inputs$", run.stdout, flags=re.M), \
        run.stdout[-3000:]
    assert re.search(r"^  test_simple_attention\.py:\d+ in test_\w+: ", run.stdout, flags=re.M), run.stdout[-3000:]
    for noise in ("site-packages", "torch/", "_pytest", "Traceback"):
        assert noise not in run.stdout, f"{noise!r}:\n{run.stdout[-3000:]}"


def test_public_tests_agree_with_the_mask_check(tmp_path):
    """Public green means no surprise in the mask check (the decision beside the "sdpa_causal"
    alternative): is_causal=True passes both, a mask forward builds on the CPU fails both."""
    from banks import load
    from test_mutants import mutated_sources

    causal = next(a for a in load("ch03_attention", "alternatives").ALTERNATIVES if "is_causal=True" in a.name)
    cpu_mask = next(m for m in load("ch03_attention", "mutants").MUTANTS
                    if m.name.startswith("MultiHeadAttention ignores its mask buffer"))
    for name, sources, expected in (("causal", {f"{m}.py": s for m, s in causal.sources().items()}, (26, 0)),
                                    ("cpu_mask", mutated_sources("ch03_attention", cpu_mask), (25, 1))):
        folder = tmp_path / name
        folder.mkdir()
        for test in course.get("ch03_attention").solutions.glob("test_*.py"):
            (folder / test.name).write_text(test.read_text())
        shutil.copy(ROOT / "autograder" / "support" / "public_tests.py", folder)  # what the tests import
        for filename, text in sources.items():
            (folder / filename).write_text(text)
        run = run_pytest(folder)
        assert counts(run.stdout) == expected, run.stdout[-2000:]
        assert expected[1] == 0 or "forward must mask with self.mask" in run.stdout


def test_a_module_that_cannot_be_imported_says_where(tmp_path):
    """A syntax error in the student's module stops the collection: each test module that imports
    it says so in one line, then the import's lines in the course's files, none of importlib's."""
    folder = reference_copy("ch03_attention", tmp_path)
    with (folder / "causal_attention.py").open("a") as handle:
        handle.write("def broken(:\n")
    run = run_pytest(folder)
    assert "could not import test_causal_attention.py: SyntaxError" in run.stdout, run.stdout[-3000:]
    assert re.search(r"^  causal_attention\.py:\d+: def broken\(:$", run.stdout, flags=re.M), run.stdout[-3000:]
    for noise in ("importlib", "_pytest", "site-packages", "<frozen"):
        assert noise not in run.stdout, f"{noise!r}:\n{run.stdout[-3000:]}"


def public_failures(assignment, submissions, jobs=2):
    """{name: [public tests that fail]} for ``submissions`` ([(name, {file: text})]), the public
    tests run as the student runs them (tests/public_verdicts.py), ``jobs`` processes at once."""
    chunks = [submissions[i::jobs] for i in range(jobs)]
    runs = [subprocess.Popen([sys.executable, str(ROOT / "tests" / "public_verdicts.py"), assignment], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in chunks]
    found = {}
    for run, chunk in zip(runs, chunks):
        out, _ = run.communicate(json.dumps(chunk), timeout=1500)
        assert run.returncode == 0
        found.update(json.loads(out))
    return found


def public_part(nodeid):
    """The part a public test belongs to: its file's (test_<part>.py), as the progress table counts it."""
    return nodeid.split("::")[0].removeprefix("test_").removesuffix(".py")


SAMPLES = 3  # a plain run takes every third mutant of the banks (the first of each three); --full the rest


@pytest.mark.parametrize("assignment,sample", [
    pytest.param(name, k, marks=[pytest.mark.full] if k else [], id=f"{name}-{k + 1}of{SAMPLES}")
    for name in course.names() for k in range(SAMPLES)])
def test_public_tests_fail_only_where_the_grade_charges(assignment, sample, graded):
    """The progress table and the grade tell the same story: for every mutant of the bank, a public
    test fails only in a part the grade charges, and every correct style of the alternatives bank
    passes every public test. (Not the converse: the hidden checks see more than the book's numbers,
    other shapes and seeds, so a mistake may pass the public tests and still cost points.) A
    public test of a part judges that part only: the book's numbers stand in for an earlier part's
    answers, a wrapper's heads are stand-ins where the student's heads are not the book's, and an
    exercise is judged beside the student's own class built with the book's arguments. Each of
    the SAMPLES runs takes every SAMPLES-th mutant, and the first every correct style too (a plain
    run takes the first only: the whole bank is minutes for chapters 4 and 5, whose public tests
    build whole GPTs; --full takes all three)."""
    from banks import earlier_sources, load, mutated_sources

    mutants = load(assignment, "mutants").MUTANTS
    alternatives = load(assignment, "alternatives").ALTERNATIVES
    # an alternative holds this assignment's modules; the files handed in from earlier ones are the reference's
    submissions = ([(m.name, mutated_sources(assignment, m)) for m in mutants[sample::SAMPLES]]
                   + [(a.name, {**earlier_sources(assignment), **{f"{module}.py": text
                                                                for module, text in a.sources().items()}})
                      for a in alternatives if not sample])
    failed = public_failures(assignment, submissions)
    disagree, green = [], 0
    for name, sources in submissions:
        parts = graded(assignment, sources)["extra_data"]["parts"]
        charged = {part for part, (got, most) in parts.items() if got < most}
        wrong = [nodeid for nodeid in failed[name] if public_part(nodeid) not in charged]
        if wrong:
            disagree.append(f"{name}: the grade charges {sorted(charged) or 'nothing'}, yet {', '.join(wrong)} fail")
        green += bool(charged) and not failed[name]
    assert not disagree, "\n".join(disagree)
    print(f"{assignment}: {len(submissions)} submissions; public tests fail only in charged parts; "
          f"{green} mutants lose points with every public test green")
