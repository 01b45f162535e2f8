"""The student release of every assignment of the course, built with nbgrader, and the master
notebook it comes from (run against the solutions: the book's values, full points per part)."""
import keyword
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from autograder.authoring import stubs
from autograder.authoring.release import kernel_path, leaks, main_release, secret_lines
from autograder.grading import course
from autograder.platforms import nbgrade
from banks import expectations

ROOT = Path(__file__).resolve().parent.parent

ASSIGNMENTS = course.names()


def notebook(assignment):
    return course.get(assignment).source / f"{assignment}.ipynb"


def grade_points(nb):
    """[(part, points)] of the notebook's grade cells, in the order they stand."""
    return [(nbgrade.part_of(c.metadata.nbgrader["grade_id"]), c.metadata.nbgrader["points"])
            for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    """Every assignment's release, built at once (each one an nbgrader process of its own)."""
    base = tmp_path_factory.mktemp("release")
    with ThreadPoolExecutor(max_workers=len(ASSIGNMENTS)) as pool:
        codes = dict(zip(ASSIGNMENTS, pool.map(lambda name: main_release(name, base / name), ASSIGNMENTS)))
    assert codes == {name: 0 for name in ASSIGNMENTS}
    return base


@pytest.fixture(params=ASSIGNMENTS)
def release(request, releases):
    return course.get(request.param), releases / request.param


def test_release_holds_the_notebook_stubs_and_public_tests(release):
    a, out = release
    expected = stubs.expected_files(a.name)
    assert sorted(p.name for p in out.iterdir()) == sorted([*expected, *a.data, notebook(a.name).name])
    for name, text in expected.items():
        assert (out / name).read_text() == text == (a.stubs / name).read_text(), name
    for name in a.data:  # shipped byte for byte
        assert (out / name).read_bytes() == (a.solutions / name).read_bytes(), name


def test_release_holds_no_solution_or_hidden_test_line(release):
    a, out = release
    assert leaks(out, a.name) == []
    # Independently of the scanner: every master's solution lines, every file, every line.
    secrets = set()
    for path in a.solutions.glob("*.py"):
        if not path.name.startswith("test_"):
            secrets |= {s for s in stubs.solution_lines(path.read_text())  # `else:` alone says nothing
                        if any(not keyword.iskeyword(w) for w in re.findall(r"\w+", s))}
    assert secrets, a.name  # the check below can fail
    for path in out.rglob("*"):
        text = path.read_text()
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text, path.name
        assert "part_score" not in text, path.name
        if path.suffix == ".py" and not path.name.startswith("test_"):
            assert not secrets & {line.strip() for line in text.splitlines()}, path.name


def test_release_notebook_has_the_locked_grade_cells_without_their_hidden_part(release):
    """One locked grade cell per part of the manifest, in its order, with the master's points
    (test_nbgrader_autograde.py proves those are the suites' points)."""
    a, out = release
    nb = nbformat.read(out / notebook(a.name).name, as_version=4)
    master = grade_points(nbformat.read(notebook(a.name), as_version=4))
    assert grade_points(nb) == master and [part for part, _ in master] == list(a.parts)
    assert sum(points for _, points in master) == 100
    cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    for cell, part in zip(cells, a.parts):
        assert cell.metadata.nbgrader["locked"] and cell.metadata.get("editable") is False
        # What validate runs: the part's public tests, nothing else.
        code = [line for line in cell.source.splitlines() if line.strip() and not line.startswith("#")]
        assert code == [f'public_tests("{part}")'], code
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_the_scanner_finds_a_leak(release, tmp_path):
    """The leak check is not vacuous: a solution line or a hidden test in any file is found."""
    a, out = release
    copy, name, module = tmp_path / "leaky", notebook(a.name).name, a.modules[-1]
    shutil.copytree(out, copy)
    line = sorted(secret_lines(a.name))[0]
    with (copy / module).open("a") as handle:
        handle.write(f"\n    {line}\n")
    nb = nbformat.read(copy / name, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(f'part_score("{a.parts[-1]}")'))
    nbformat.write(nb, copy / name)
    found = leaks(copy, a.name)
    assert any(f.startswith(f"{module}:") for f in found)
    assert any(f.startswith(name) and "part_score" in f for f in found)


def outputs_text(cell):
    return "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", []))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_master_notebook_runs_against_the_solutions_and_prints_the_books_values(assignment, tmp_path, monkeypatch):
    """Top to bottom, in a student's folder (the release's files, the reference modules, the
    earlier assignments' reference modules in their own folders beside it): no error, the book's
    numbers, and every grade cell's hidden region awards the part's full points."""
    from nbclient import NotebookClient

    book_values = expectations(assignment, "BOOK_VALUES")  # tests/<assignment>/expectations.py
    a = course.get(assignment)
    folder = tmp_path / a.name
    shutil.copytree(a.stubs, folder)
    for name in a.modules:
        shutil.copy(a.solutions / name, folder / name)
    for earlier, modules in a.builds_on.items():
        (tmp_path / earlier).mkdir()
        for name in modules:
            shutil.copy(course.get(earlier).solutions / name, tmp_path / earlier / name)
    monkeypatch.setenv("JUPYTER_PATH", kernel_path(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))  # empty: filled offline
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setenv("CH05_QUICK_RUN", "1")        # chapter 5 trains a tiny model for one epoch, not minutes
    monkeypatch.setenv("TMPDIR", str(tmp_path))      # where chapter 5 keeps its weights: this test's own
    nb = nbformat.read(notebook(assignment), as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()

    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.outputs if o.output_type == "error" or o.get("name") == "stderr"]
    text = "\n".join(outputs_text(c) for c in code)
    for value in book_values:
        assert value in text, value
    grades = {nbgrade.part_of(c.metadata.nbgrader["grade_id"]): c for c in code
              if c.metadata.get("nbgrader", {}).get("grade")}
    assert list(grades) == list(a.parts)
    for part, cell in grades.items():
        result = [o for o in cell.outputs if o.output_type == "execute_result"]
        assert result and result[0]["data"]["text/plain"] == f"{cell.metadata.nbgrader['points']}", part
        assert f"{part}: {cell.metadata.nbgrader['points']} / " in outputs_text(cell)


def test_release_course_rewrites_only_its_block_of_the_config(tmp_path):
    """Run again (or after an earlier version wrote the whole file), `release --course`
    replaces its own block and keeps every line of the instructor's."""
    from autograder.authoring.release import CONFIG_BEGIN, CONFIG_END, OLD_CONFIG, write_config

    name, config = ASSIGNMENTS[0], tmp_path / "nbgrader_config.py"
    mine = 'c.Exchange.root = "/srv/exchange"\nc.CourseDirectory.course_id = "attention"\n'
    config.write_text(mine)
    write_config(tmp_path, name)
    first = config.read_text()
    assert first.startswith(CONFIG_BEGIN) and first.endswith("\n" + mine)
    assert repr(name) in first  # the stale copy below differs
    config.write_text(first.replace(repr(name), "'stale'"))
    write_config(tmp_path, name)
    assert config.read_text() == first and first.count(CONFIG_END) == 1
    config.write_text(OLD_CONFIG + "\nimport sys\nsys.path.insert(0, '/moved')\n")
    write_config(tmp_path, name)
    assert "/moved" not in config.read_text() and config.read_text().count(CONFIG_BEGIN) == 1
