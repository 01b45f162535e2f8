"""First contact (issue 24): what a student's folder holds beside their work never costs them
their grade, chapter 4's hand-in names the chapter-3 files it imports wherever a student is told
what to hand in, and a student who could not be graded has an empty score, with the reason."""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from autograder import cli as autograder_cli
from autograder.authoring import stubs
from autograder.grading import course
from autograder.paths import ASSIGNMENTS, ROOT, SOLUTIONS
from test_unprivileged import copy_repo

CH02, CH03, CH04 = "ch02_text_data", "ch03_attention", "ch04_gpt"
STRAYS = {"scratch.py": "print('trying things')\n", "conftest.py": "raise SystemExit(1)\n",
          "sitecustomize.py": "raise SystemExit(1)\n", "README.md": "# my work\n"}


def modules(assignment, folder, leave_out=()):
    """The reference's modules of ``assignment`` in ``folder`` (but ``leave_out``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in course.get(assignment).modules:
        if name not in leave_out:
            shutil.copy(SOLUTIONS / assignment / name, folder / name)
    return folder


def strays(folder, names=tuple(STRAYS)):
    for name in names:
        (folder / name).write_text(STRAYS[name])
    return folder


def test_every_assignment_a_folder_holds_is_found_and_what_belongs_to_none_is_listed(tmp_path):
    alice = strays(modules(CH03, tmp_path / "alice" / CH03).parent)
    found = course.find(alice)
    assert found.submissions == ((alice / CH03, CH03),) and not found.problem
    assert found.ignored == ("README.md", "conftest.py", "scratch.py", "sitecustomize.py")
    assert found.note == "README.md, conftest.py, scratch.py, sitecustomize.py: belong to no assignment, ignored"
    # Modules at the top: that assignment's, with its other files (a helper it imports travels too).
    erin = strays(modules(CH03, tmp_path / "erin"), ["scratch.py"])
    assert course.find(erin) == course.Found(((erin, CH03),))
    # Both layouts at once: each assignment found is graded.
    both = modules(CH03, modules(CH04, tmp_path / "both") / CH03).parent
    assert set(course.find(both).submissions) == {(both / CH03, CH03), (both, CH04)}
    assert course.find(both, CH04).submissions == ((both, CH04),)
    # ... and where only chapter 4 is graded, chapter 3's folder is where its own attention comes
    # from: not "belongs to no assignment" (then "your own from ch03_attention/" in one breath)
    assert course.find(both, CH04).ignored == ()


@pytest.mark.parametrize("make, assignment, problem", [
    (lambda tmp: tmp, None, "carol/ is empty"),
    (lambda tmp: strays(tmp, ["scratch.py"]), None,
     f"carol/ holds no module of any assignment ({', '.join(course.names())}) and no folder named after one "
     "(it holds scratch.py)"),
    (lambda tmp: modules(CH02, tmp), CH03, f"carol/ holds {CH02}'s files ("),
    (lambda tmp: modules(CH02, tmp / CH02).parent, CH03, f"carol/ holds {CH02}/, not {CH03}/"),
    (lambda tmp: strays(tmp, ["scratch.py"]), CH03, f"carol/ holds no {CH03}/ and none of its modules"),
])
def test_a_folder_with_nothing_to_grade_says_why_without_the_instructors_path(tmp_path, make, assignment, problem):
    folder = tmp_path / "class" / "carol"
    folder.mkdir(parents=True)
    found = course.find(make(folder), assignment)
    assert found.submissions == () and found.problem.startswith(problem), found.problem
    assert str(tmp_path) not in found.problem
    if assignment == CH03 and "files (" in problem:  # the other assignment's files named, and this one's
        assert f"not {CH03}'s (simple_attention.py" in found.problem and "exercises.py" in found.problem


def test_chapter_4_hands_in_the_chapter_3_files_it_imports_and_every_place_says_so():
    ch04 = course.get(CH04)
    assert [(f.file, f.assignment) for f in ch04.hand_in] == [
        *((m, CH04) for m in ch04.modules), ("causal_attention.py", CH03), ("multihead_attention.py", CH03)]
    assert [f.file for f in course.get(CH03).hand_in] == list(course.get(CH03).modules)
    text = ch04.hand_in_text()
    assert text.startswith("layer_norm.py, ") and text.endswith(
        f"and your own causal_attention.py, multihead_attention.py from {CH03} (this assignment imports them)")
    # the public tests' set-up, as the stub generator writes it, and the stub checked in
    conftest = stubs.expected_files(CH04)["conftest.py"]
    assert "".join(f'    ("{f.file}", "{f.assignment}"),\n' for f in ch04.hand_in) in conftest
    assert (ASSIGNMENTS / CH04 / "conftest.py").read_text() == conftest


def test_a_missing_chapter_3_file_is_one_note_or_the_reference_when_the_instructor_says(tmp_path):
    folder = modules(CH04, tmp_path / "bob" / CH04)
    shutil.copy(SOLUTIONS / CH03 / "causal_attention.py", folder)
    sources, notes = course.submission_sources(folder, CH04)
    assert "multihead_attention" not in sources and "causal_attention" in sources
    assert notes == [f"missing: multihead_attention.py (your own from {CH03}: {CH04} imports it): "
                     f"hand it in beside {CH04}'s modules"]
    sources, notes = course.submission_sources(folder, CH04, earlier_reference=True)
    assert sources["multihead_attention"] == released(CH03, "multihead_attention.py")
    assert notes == [f"multihead_attention.py: the course's reference from {CH03} (yours is missing; your "
                     "instructor grades this assignment on the reference after that one's deadline)"]
    (folder / "causal_attention.py").write_text("# mine\n")  # the student's own is never replaced
    assert course.submission_sources(folder, CH04, earlier_reference=True)[0]["causal_attention"] == "# mine\n"
    own = modules(CH03, tmp_path / "bob" / CH03)  # their own chapter 3 beside it: taken from there
    sources, notes = course.submission_sources(folder, CH04, earlier_reference=True)
    assert sources["multihead_attention"] == (own / "multihead_attention.py").read_text()
    assert notes == [f"multihead_attention.py: your own from {CH03}/ (this folder has none)"]


MARKERS = ("BEGIN SOLUTION", "END SOLUTION")


def released(assignment, file):
    """The master in solutions/ without its marker lines: what students get after the deadline
    (written here on its own, not with the code under test)."""
    master = (SOLUTIONS / assignment / file).read_text().splitlines(keepends=True)
    assert sum(any(m in line for m in MARKERS) for line in master) >= 2, f"{file} has solution regions"
    return "".join(line for line in master if not any(m in line for m in MARKERS))


@pytest.mark.parametrize("assignment", [a.name for a in course.assignments() if a.builds_on])
def test_the_earlier_reference_is_the_released_builds_on_modules_and_nothing_else(tmp_path, assignment):
    a = course.get(assignment)
    folder = modules(assignment, tmp_path / "bob" / assignment)
    own = {m.removesuffix(".py") for m in a.modules}
    sources, notes = course.submission_sources(folder, assignment, earlier_reference=True)
    lent = {f.module: f for f in a.hand_in if f.assignment != assignment}
    # exactly the manifest's builds_on modules join the student's own: no public test, no other module
    assert set(sources) == own | set(lent), sorted(set(sources) - own)
    for module, f in lent.items():
        text = sources[module]
        assert not [line for line in text.splitlines() if any(m in line for m in MARKERS)], f.file
        assert text == released(f.assignment, f.file), f.file
        compile(text, f.file, "exec")
    # the note names every module lent and the assignment it is the reference of
    assert len(notes) == 1
    for earlier, files in a.builds_on.items():
        assert f"{', '.join(files)}: the course's reference from {earlier}" in notes[0], notes
    # the student's own copy of one still comes first, and is not named as the reference
    first = a.hand_in[-1]
    (folder / first.file).write_text("# mine\n")
    sources, notes = course.submission_sources(folder, assignment, earlier_reference=True)
    assert sources[first.module] == "# mine\n" and first.file not in notes[0]


def test_the_help_and_the_readme_name_every_module_the_earlier_reference_lends():
    readme = (ROOT / "README.md").read_text()
    helps = [" ".join(next(act for act in sub._actions if act.dest == "earlier_reference").help.split())
             for name, sub in subcommands()[1].items() if name in ("grade", "gradescope")]
    assert len(helps) == 2
    lending = [a for a in course.assignments() if a.builds_on]
    assert lending
    for a in lending:
        files = [file for files in a.builds_on.values() for file in files]
        assert all(a.name in help and file in help for help in helps for file in files), helps
        text = a.builds_on_text()
        assert all(file in text for file in files)
        assert f"- `{a.name}`: {text}\n" in readme
        assert all(f"{a.name}: {text}" in help for help in helps), helps
    # and no module it never lends
    lent = {file for a in lending for files in a.builds_on.values() for file in files}
    others = {file for a in course.assignments() for file in a.modules} - lent
    paragraph = readme[readme.index("**After an earlier assignment's deadline**"):]
    paragraph = paragraph[:paragraph.index("\n\n###")]
    assert not [file for file in others if file in paragraph or any(file in help for help in helps)]


def test_chapter_4s_public_tests_name_the_missing_chapter_3_files_in_one_line(tmp_path):
    release = tmp_path / CH04  # the student's folder, no chapter 3 beside it
    shutil.copytree(ASSIGNMENTS / CH04, release)
    shutil.copy(SOLUTIONS / CH04 / "layer_norm.py", release)

    def public_tests():
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_layer_norm.py"],
                             cwd=release, capture_output=True, text=True, timeout=300,
                             env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"})
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        return run.stdout
    line = (f"missing: causal_attention.py (your own from {CH03}), multihead_attention.py (your own from {CH03}): "
            "copy them into this folder; the tests that import them fail until you do")
    assert public_tests().count(line) == 1
    # the notebook's public_tests (what `nbgrader validate` runs) prints that line once too
    notebook = json.loads((ROOT / "source" / CH04 / f"{CH04}.ipynb").read_text())
    [cell] = ["".join(c["source"]) for c in notebook["cells"] if "import public_tests" in "".join(c["source"])]
    code = "\n".join(line for line in cell.splitlines() if not line.startswith("%"))  # IPython's magics
    run = subprocess.run([sys.executable, "-c", code + '\npublic_tests("layer_norm")'], cwd=release,
                         capture_output=True, text=True, timeout=300,
                         env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"})
    assert run.returncode == 0 and run.stdout.splitlines()[0] == line, run.stdout + run.stderr[-2000:]
    assert re.match(r"layer_norm: (\d+) of \1 public tests pass", run.stdout.splitlines()[1]), run.stdout
    shutil.copy(SOLUTIONS / CH03 / "causal_attention.py", release)
    shutil.copy(SOLUTIONS / CH03 / "multihead_attention.py", release)
    assert "missing:" not in public_tests()


def cli(*args):
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_a_class_with_stray_files_gaps_and_the_wrong_files_grades_everyone_it_can(tmp_path):
    """alice: chapter 3 in its folder, with stray files beside it; bob: chapter 4 without his
    multihead_attention.py; carol: nothing; dave: chapter 2's files; frank: a scratch file."""
    klass = tmp_path / "class"
    strays(modules(CH03, klass / "alice" / CH03).parent)
    bob = modules(CH04, klass / "bob" / CH04)
    shutil.copy(SOLUTIONS / CH03 / "causal_attention.py", bob)
    (klass / "carol").mkdir()
    modules(CH02, klass / "dave")
    (klass / "frank").mkdir()
    strays(klass / "frank", ["scratch.py"])
    run = cli("grade", klass, "--out", tmp_path / "all")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "all" / "grades.csv").open())}
    assert rows["alice"][f"{CH03}:score"] == "100" and rows["dave"][f"{CH02}:score"] == "100"
    assert rows["bob"][f"{CH04}:status"] == "graded" and int(rows["bob"][f"{CH04}:score"]) < 100
    for name, why in (("carol", "carol/ is empty"), ("frank", "frank/ holds no module of any assignment")):
        for a in (CH02, CH03, CH04):  # no score, and why, in every group: never a zero
            assert rows[name][f"{a}:score"] == "" and rows[name][f"{a}:status"].startswith(f"not graded: {why}")
        assert f"  {name}: not graded: {why}" in run.stdout
    assert "(it holds scratch.py)" in rows["frank"][f"{CH03}:status"]
    assert str(tmp_path) not in (tmp_path / "all" / "grades.csv").read_text()
    alice = json.loads((tmp_path / "all" / CH03 / "alice.json").read_text())
    assert alice["output"] == "README.md, conftest.py, scratch.py, sitecustomize.py: belong to no assignment, ignored"
    bob = json.loads((tmp_path / "all" / CH04 / "bob.json").read_text())
    assert bob["output"].splitlines()[0].startswith("missing: multihead_attention.py (your own from ch03_attention")
    summary = json.loads((tmp_path / "all" / "summary.json").read_text())
    assert {p["student"]: p["score"] for p in summary["problems"] if p["score"] is None} == {"carol": None,
                                                                                             "frank": None}
    # Graded as chapter 3: the folders of another assignment say so.
    run = cli("grade", klass, "--assignment", CH03, "--out", tmp_path / "ch03")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "ch03" / "grades.csv").open())}
    assert rows["alice"]["score"] == "100"
    assert rows["dave"]["status"].startswith(f"not graded: dave/ holds {CH02}'s files (")
    assert rows["dave"]["score"] == ""
    assert rows["bob"]["status"] == f"not graded: bob/ holds {CH04}/, not {CH03}/" and rows["bob"]["score"] == ""
    # After chapter 3's deadline: bob is graded on the course's chapter-3 attention, and told so.
    run = cli("grade", klass / "bob", "--earlier-reference", "--json", tmp_path / "bob.json")
    assert run.returncode == 0, run.stdout + run.stderr
    bob = json.loads((tmp_path / "bob.json").read_text())
    assert bob["score"] == 100 and bob["output"].startswith("multihead_attention.py: the course's reference from")


# The tests that need a Python uid nobody can run (tests/nobody.py), and one that does not.
NEEDS_NOBODY = ["tests/test_zygote.py::test_the_cli_forks_no_zygote_where_children_need_a_python_nobody_reaches",
                "tests/test_interpreter.py", "tests/test_unprivileged.py",
                "tests/test_nbgrader_kernel.py::test_nothing_the_kernel_started_survives_it",
                "tests/test_first_contact.py::test_every_assignment_a_folder_holds_is_found_and_what_belongs_to_none_is_listed"]


def readme_test_command():
    """The README's test command, as its quick start writes it."""
    found = re.search(r"Set up and run the project's tests:\n\n```bash\n(.+?)\n```", (ROOT / "README.md").read_text())
    assert found, "the README's quick start has no test command"
    return found.group(1)


@pytest.mark.skipif(os.geteuid() != 0, reason="the machine this is about is a root one")
def test_the_readmes_test_command_passes_as_root_where_no_python_for_nobody_was_built():
    """A fresh clone on a fresh root machine: this Python out of nobody's reach (as here, pyenv's
    under /root) and no /opt/autograder-venv (AUTOGRADER_USER_VENV names none). The README's
    command line as written, pip kept offline (everything is installed here already), its
    pytest given the tests that need such a Python: they skip, saying why, and nothing fails.
    A selection, not the whole suite (11 minutes): it holds every test with that precondition."""
    from autograder.sandbox import interpreter
    if interpreter.first_blocked(interpreter.own_paths()) is None:
        pytest.skip("uid nobody reaches this Python: the machine this is about has it under a mode-700 home")
    command = readme_test_command()
    assert command == "pip install -r requirements.txt && python -m pytest", command
    repo = copy_repo()
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
        env.update(AUTOGRADER_USER_VENV="/nonexistent", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
                   PATH=os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")]))
        run = subprocess.run(["bash", "-c", f"{command} -p no:cacheprovider -rs {' '.join(NEEDS_NOBODY)}"],
                             cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    finally:
        shutil.rmtree(repo, ignore_errors=True)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    summary = run.stdout.strip().splitlines()[-1]  # pytest's; pip warns on stderr outside a venv
    assert "failed" not in summary and "error" not in summary and re.search(r"\b\d+ passed\b", summary), summary
    reason = "uid nobody cannot reach this Python (/root (mode 700)), and there is no /nonexistent/bin/python"
    assert f"the zygote's children as nobody without namespaces: {reason}" in out, out[-4000:]
    assert "tests/test_zygote.py s" in out  # that test, the one that failed here (issue 24), skipped


def subcommands():
    parser = autograder_cli.build_parser()
    [group] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return parser, group.choices


def test_the_help_is_plain_text_with_a_line_for_every_argument_and_an_example_per_command(capsys):
    parser, commands = subcommands()
    top = " ".join(parser.format_help().split())
    assert "``" not in top and "Run it from the repository's root folder" in top and "exit codes:" in top
    assert set(commands) == {"grade", "merge", "stubs", "new", "release", "gradescope", "github", "classroom",
                             "export", "similarity"}
    for name, command in commands.items():
        text = command.format_help()
        assert "``" not in text and f"python -m autograder {name} " in text.split("example")[-1], name
        for action in command._actions:  # every argument, positionals included, says what it is
            assert action.help, (name, action.dest)


def test_the_command_says_where_to_run_it_from_and_runs_from_there_with_pythonpath(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    elsewhere = subprocess.run([sys.executable, "-m", "autograder", "stubs", "--check"], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=120)
    assert elsewhere.returncode == 1 and "No module named autograder" in elsewhere.stderr
    assert "repository's root folder" in autograder_cli.DESCRIPTION and "PYTHONPATH" in autograder_cli.DESCRIPTION
    there = subprocess.run([sys.executable, "-m", "autograder", "stubs", "--check"], cwd=tmp_path,
                           env={**env, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
    assert there.returncode == 0, there.stderr
    assert there.stdout == f"assignments/ is up to date with solutions/ ({', '.join(course.names())})\n"


def test_stubs_writes_only_what_changed_and_says_so(tmp_path):
    written = stubs.write_stubs(CH03, tmp_path)
    assert written == sorted(stubs.expected_files(CH03))
    assert stubs.write_stubs(CH03, tmp_path) == []  # up to date: nothing written
    (tmp_path / "simple_attention.py").write_text("# edited by hand\n")
    (tmp_path / "extra.py").write_text("")
    assert stubs.write_stubs(CH03, tmp_path) == ["extra.py", "simple_attention.py"]  # rewritten, and deleted
    assert not (tmp_path / "extra.py").exists() and stubs.stale_files(CH03, tmp_path) == []


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="a copy of the files, not a git checkout")
def test_what_the_commands_write_by_default_is_ignored_by_git():
    defaults = ["autograder.zip", "classroom/student/README.md", "graded/class/grades.csv",
                f"release/{CH03}/{CH03}.ipynb", "course/gradebook.db"]
    _, commands = subcommands()
    outs = {name: next(a.default for a in commands[name]._actions if a.dest == "out")
            for name in ("gradescope", "classroom")}
    assert outs == {"gradescope": "autograder.zip", "classroom": "classroom"}  # the two listed first
    run = subprocess.run(["git", "check-ignore", "--no-index", *defaults], cwd=ROOT, capture_output=True, text=True)
    assert run.stdout.split() == defaults, run.stdout + run.stderr


def test_a_cause_several_checks_share_is_said_once_with_the_checks_it_failed():
    from autograder.grading.result import SubmissionResult
    from autograder.platforms import report
    why = "transformer_block.py could not be imported: ModuleNotFoundError: No module named 'multihead_attention'"
    tests = [{"name": f"transformer_block: check {i}", "part": "transformer_block", "score": 0, "max_score": 2,
              "status": "failed", "output": why} for i in range(3)]
    tests.append({"name": "transformer_block: the mask", "part": "transformer_block", "score": 0, "max_score": 4,
                  "status": "failed", "output": "a mistake of its own"})
    result = SubmissionResult.from_json({"score": 0, "max_score": 10, "execution_time": 1.0, "output": "", "tests": tests,
                                         "extra_data": {"assignment": CH04, "parts": {"transformer_block": [0, 10]}}})
    table, feedback = report.table(result, "bob"), report.markdown(result, "bob")
    assert table.count(why) == feedback.count(why) == 1
    assert "  - transformer_block: 3 checks (0/6)" in table and "  - transformer_block: the mask (0/4)" in table
    assert "### transformer_block: 3 checks (0 / 6)\n\n- check 0\n- check 1\n- check 2\n" in feedback
    assert "### transformer_block: the mask (0 / 4)" in feedback and "a mistake of its own" in feedback


def test_every_platform_has_the_instructors_setting_for_a_missing_chapter_3_file(tmp_path):
    import zipfile

    from autograder.platforms import gradescope
    from autograder.platforms.nbgrader_plugin import GradeSubmission
    for setting in (False, True):
        gradescope.build(CH04, tmp_path / f"{setting}.zip", earlier_reference=setting)
        with zipfile.ZipFile(tmp_path / f"{setting}.zip") as bundle:
            assert json.loads(bundle.read("config.json"))["earlier_reference"] is setting
            # the reference it would lend is in the bundle (the hidden suites' reference reads it too)
            assert {f"solutions/{CH03}/{f.file}" for f in course.get(CH04).hand_in if f.assignment == CH03} \
                <= set(bundle.namelist())
    assert GradeSubmission().earlier_reference is False and GradeSubmission(earlier_reference=True).earlier_reference
    grade = subcommands()[1]["grade"]
    assert next(a for a in grade._actions if a.dest == "earlier_reference").default is False


def test_the_quick_starts_blank_report_fits_a_terminal_and_ends_with_the_whole_run():
    """``grade assignments`` grades every assignment's stubs at once: on an 80-column terminal no
    line wraps (each is cut, its full text in the JSON and Markdown results), and the last lines
    give every submission's score."""
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", "assignments"], cwd=ROOT,
                         env={**os.environ, "COLUMNS": "80"}, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    ending = " ".join(lines[next(i for i, line in enumerate(lines) if line.startswith("graded ")):])
    names = course.names()
    assert ending.startswith(f"graded {len(names)} submissions:")
    assert all(f"assignments/{name} 0/100" in ending for name in names), ending
