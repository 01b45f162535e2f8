"""The student release built with nbgrader, and the master notebook it comes from."""
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from autograder.platforms import nbgrade  # noqa: E402
from autograder.authoring import stubs
from autograder.paths import ASSIGNMENTS, SOLUTIONS, SOURCE  # noqa: E402
from autograder.authoring.release import kernel_path, leaks, main_release, secret_lines  # noqa: E402

ASSIGNMENT = "ch03_attention"
NOTEBOOK = SOURCE / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
PARTS = ("simple_attention", "self_attention", "causal_attention", "multihead_attention", "exercises")


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / ASSIGNMENT
    assert main_release(ASSIGNMENT, out) == 0
    return out


def test_release_holds_the_notebook_stubs_and_public_tests(release):
    expected = stubs.expected_files(ASSIGNMENT)
    assert sorted(p.name for p in release.iterdir()) == sorted([*expected, NOTEBOOK.name])
    for name, text in expected.items():
        assert (release / name).read_text() == text == (ASSIGNMENTS / ASSIGNMENT / name).read_text(), name


def test_release_holds_no_solution_or_hidden_test_line(release):
    assert leaks(release, ASSIGNMENT) == []
    # Independently of the scanner: every master's solution lines, every file, every line.
    secrets = set()
    for path in (SOLUTIONS / ASSIGNMENT).glob("*.py"):
        if not path.name.startswith("test_"):
            secrets |= {s for s in stubs.solution_lines(path.read_text()) if any(c.isalnum() for c in s)}
    for path in release.rglob("*"):
        text = path.read_text()
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text, path.name
        assert "part_score" not in text, path.name
        if path.suffix == ".py" and not path.name.startswith("test_"):
            assert not secrets & {line.strip() for line in text.splitlines()}, path.name


def test_release_notebook_has_the_locked_grade_cells_without_their_hidden_part(release):
    nb = nbformat.read(release / NOTEBOOK.name, as_version=4)
    cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert [nbgrade.part_of(c.metadata.nbgrader["grade_id"]) for c in cells] == list(PARTS)
    assert [c.metadata.nbgrader["points"] for c in cells] == [15, 20, 25, 25, 15]
    for cell, part in zip(cells, PARTS):
        assert cell.metadata.nbgrader["locked"] and cell.metadata.get("editable") is False
        # What validate runs: the part's public tests, nothing else.
        code = [line for line in cell.source.splitlines() if line.strip() and not line.startswith("#")]
        assert code == [f'public_tests("{part}")'], code
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_the_scanner_finds_a_leak(release, tmp_path):
    """The leak check is not vacuous: a solution line or a hidden test in any file is found."""
    copy = tmp_path / "leaky"
    shutil.copytree(release, copy)
    line = sorted(secret_lines(ASSIGNMENT))[0]
    with (copy / "exercises.py").open("a") as handle:
        handle.write(f"\n    {line}\n")
    nb = nbformat.read(copy / NOTEBOOK.name, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell('part_score("exercises")'))
    nbformat.write(nb, copy / NOTEBOOK.name)
    found = leaks(copy, ASSIGNMENT)
    assert any(f.startswith("exercises.py:") for f in found)
    assert any(f.startswith(NOTEBOOK.name) and "part_score" in f for f in found)


def outputs_text(cell):
    return "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", []))


def test_master_notebook_runs_against_the_solutions_and_prints_the_books_values(tmp_path, monkeypatch):
    """Top to bottom, with the reference modules beside it: no error, the book's numbers,
    and every grade cell's hidden region awards the part's full points."""
    from nbclient import NotebookClient

    for path in (SOLUTIONS / ASSIGNMENT).glob("*.py"):
        shutil.copy(path, tmp_path / path.name)
    monkeypatch.setenv("JUPYTER_PATH", kernel_path(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()

    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.outputs if o.output_type == "error" or o.get("name") == "stderr"]
    text = "\n".join(outputs_text(c) for c in code)
    for value in [
        "tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])",        # scores of "journey"
        "Attention weights: tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])",
        "Attention weights: tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])",
        "tensor([0.4419, 0.6515, 0.5683])",                                  # z^(2)
        "[0.4421, 0.5931, 0.5790]",                                          # all context vectors
        "tensor([0.4306, 1.4551])",                                          # query_2
        "tensor(1.8524)",
        "tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])",
        "tensor([0.3061, 0.8210])",
        "[0.2996, 0.8053]",                                                  # SelfAttention_v1
        "[-0.0739,  0.0713]",                                                # SelfAttention_v2
        "[0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000]",                  # causal weights
        "[0.2899,   -inf,   -inf,   -inf,   -inf,   -inf]",
        "[2., 2., 0., 2., 2., 0.]",                                          # dropout on ones
        "[0.7599, 0.6194, 0.6206, 0.0000, 0.0000, 0.0000]",                  # dropout on weights
        "context_vecs.shape: torch.Size([2, 6, 2])",
        "[-0.4519,  0.2216,  0.4772,  0.1063]",                              # the wrapper
        "context_vecs.shape: torch.Size([2, 6, 4])",
        "[1.3208, 1.1631, 1.2879]",
        "[0.3190, 0.4858]",                                                  # MultiHeadAttention
        "Same as v2: True",
        "Parameters: 2360064",
    ]:
        assert value in text, value
    grades = {nbgrade.part_of(c.metadata.nbgrader["grade_id"]): c for c in code
              if c.metadata.get("nbgrader", {}).get("grade")}
    for part, cell in grades.items():
        result = [o for o in cell.outputs if o.output_type == "execute_result"]
        assert result and result[0]["data"]["text/plain"] == f"{cell.metadata.nbgrader['points']}", part
        assert f"{part}: {cell.metadata.nbgrader['points']} / " in outputs_text(cell)


def test_release_course_rewrites_only_its_block_of_the_config(tmp_path):
    """Run again (or after an earlier version wrote the whole file), `release --course`
    replaces its own block and keeps every line of the instructor's."""
    from autograder.authoring.release import CONFIG_BEGIN, CONFIG_END, OLD_CONFIG, write_config

    config = tmp_path / "nbgrader_config.py"
    mine = 'c.Exchange.root = "/srv/exchange"\nc.CourseDirectory.course_id = "attention"\n'
    config.write_text(mine)
    write_config(tmp_path, ASSIGNMENT)
    first = config.read_text()
    assert first.startswith(CONFIG_BEGIN) and first.endswith("\n" + mine)
    config.write_text(first.replace("'ch03_attention'", "'stale'"))
    write_config(tmp_path, ASSIGNMENT)
    assert config.read_text() == first and first.count(CONFIG_END) == 1
    config.write_text(OLD_CONFIG + "\nimport sys\nsys.path.insert(0, '/moved')\n")
    write_config(tmp_path, ASSIGNMENT)
    assert "/moved" not in config.read_text() and config.read_text().count(CONFIG_BEGIN) == 1
