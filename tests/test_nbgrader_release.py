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
from banks import TESTS, load_path

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


# What each chapter's notebook prints from the reference: the book's values (an assignment's own
# folder may say it: tests/<assignment>/expectations.py's BOOK_VALUES).
BOOK_VALUES = {
    "appendix_a_pytorch": load_path(TESTS / "appendix_a_pytorch" / "expectations.py").BOOK_VALUES,
    "ch02_text_data": [
        "Total number of characters: 20479",
        "Vocabulary size: 1130",
        "[1, 56, 2, 850, 988, 602, 533, 746, 5, 1126, 596, 5, 1, 67, 7, 38, 851, 1108, 754, 793, 7]",
        "KeyError: 'Hello'",
        "1132",
        "[1131, 5, 355, 1126, 628, 975, 10, 1130, 55, 988, 956, 984, 722, 988, 1131, 7]",   # <|unk|>
        "[15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114, 286, 617, "
        "34680, 27271, 13]",                                                                    # BPE
        "5145",
        "x: [290, 4920, 2241, 287]",
        "y: [4920, 2241, 287, 257]",
        " and established himself ---->  in",
        "[tensor([[  40,  367, 2885, 1464]]), tensor([[ 367, 2885, 1464, 1807]])]",            # stride 1
        "[ 0.3374, -0.1778, -0.1690]",                                                          # embeddings
        "torch.Size([8, 4, 256])",
        "[33901, 86, 343, 86, 220, 959]",                                                      # exercise 2.1
    ],
    "ch03_attention": [
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
    ],
    "ch04_gpt": [
        "tensor([[6109, 3626, 6100,  345],",
        "Variance:\n tensor([[1.0000],",                                                      # LayerNorm
        # the book's 0.00020173587836325169 and 1.3258544206619263 to 7 digits: the last ones follow the
        # CPU's kernels (this VM's AVX-512 ones print ...584925942123 and ...541822433472)
        "layers.0.0.weight has gradient mean of 0.0002017358",                               # no shortcuts
        "layers.4.0.weight has gradient mean of 1.325854",                                   # shortcuts
        "Your MultiHeadAttention comes from ../ch03_attention/multihead_attention.py",
        "Output shape: torch.Size([2, 4, 50257])",
        "[ 0.3613,  0.4222, -0.0711,  ...,  0.3483,  0.4661, -0.2838]",
        "Total number of parameters: 163,009,536",
        "Number of trainable parameters considering weight tying: 124,412,160",
        "Total size of the model: 621.83 MB",
        "encoded: [15496, 11, 314, 716]",
        "Output: tensor([[15496,    11,   314,   716, 27018, 24086, 47843, 30961, 42348,  7267]])",
        "Hello, I am Featureiman Byeswickattribute argue",
        "Feed forward module: 4,722,432 parameters",
        "GPT-2 xl    : 1,637,792,000 parameters (1,557,380,800 with weight tying),  6247.68 MB",
        "Same count as your GPTModel: True",
        "Same logits as GPTModel: True",
    ],
    "ch05_pretraining": [
        "tensor([[6109, 3626, 6100,  345]])",
        "Every effort moves you rentingetic wasnم refres RexMeCHicular stren",             # untrained, seed 123
        "Outputs batch 1:  Armed heNetflix",
        "tensor([ -9.5042, -10.3796, -11.3677, -11.4798,  -9.7764, -12.2561])",
        "Loss: tensor(10.7940)",
        "Perplexity: tensor(48725.8203)",
        "Characters: 20479",
        "Tokens: 5145",
        "Training tokens: 4608",
        "Validation tokens: 512",
        # the book's 10.98758347829183: the last digits follow the order the shuffled batches come in
        "Training loss: 10.98758",
        "Validation loss: 10.9811",
        "Ep 1 (Step 000015): Train loss",                                  # train_model_simple (QUICK_RUN)
        "582 x forward",                                                   # print_sampled_tokens
        "343 x toward",
        "is drawn 32 times in 1,000",                                      # exercise 5.1: pizza at temperature 5
        "tensor([0.0615, 0.0000, 0.0000, 0.5775, 0.0000, 0.0000, 0.0000, 0.3610, 0.0000])",  # top-k
        "Temperature 0 is greedy: True",
        "Top-1 sampling is greedy: True",
        "Resumed from the checkpoint, same weights as without a break: True",   # exercise 5.4
        "Weights only, with a fresh optimizer, same weights: False",
        "Left as they were: []",                                           # load_weights_into_gpt
        "W_key of block 1 is the middle third of c_attn, transposed: True",
        "Output head is wte: True",
        "Queries, keys and values as GPT-2 computes them: True",
    ],
    "efficient_attention": [
        "MultiHeadAttentionCombinedQKV  largest difference",
        "MHAPyTorchClass                largest difference",
        "Same as chapter 3: True",
        "Cached equals uncached: True",                                   # GPT-2 small, 30 new tokens
        "MHA total KV cache: 17.18 GB",                                   # the bonus material's figures
        "GQA total KV cache: 4.29 GB",
        "One group per head is multi-head attention: True",
        "A window as long as the context is causal attention: True",
        "query at 40, key at 37 (distance 3): score 2.5151",              # RoPE: only m - n counts
        "query at  5, key at  2 (distance 3): score 2.5151",
        "Length before: 3.1241, after a rotation to position 37: 3.1241",
    ],
}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_master_notebook_runs_against_the_solutions_and_prints_the_books_values(assignment, tmp_path, monkeypatch):
    """Top to bottom, in a student's folder (the release's files, the reference modules, the
    earlier assignments' reference modules in their own folders beside it): no error, the book's
    numbers, and every grade cell's hidden region awards the part's full points."""
    from nbclient import NotebookClient

    assert assignment in BOOK_VALUES, f"say what the notebook of {assignment} must print"
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
    for value in BOOK_VALUES[assignment]:
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
