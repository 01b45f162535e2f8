"""The grader end to end: scores, the results.json shape, the CLI's errors and class mode."""
import json
import os
import shutil
import subprocess
import sys

import pytest
import torch

from autograder.grading.grade import fingerprint
from autograder.sandbox import protocol
from autograder.paths import ASSIGNMENTS, ROOT, SOLUTIONS

PART_POINTS = {"simple_attention": 15, "self_attention": 20, "causal_attention": 25,
               "multihead_attention": 25, "exercises": 15}


def submission(tmp_path, name, base=SOLUTIONS, edits=()):
    """A copy of the reference (or the stubs) without its tests, with (file, old, new) edits."""
    folder = tmp_path / name
    folder.mkdir()
    for path in (base / "ch03_attention").glob("*.py"):
        if not path.name.startswith("test_"):
            shutil.copy(path, folder)
    for file, old, new in edits:
        text = (folder / file).read_text()
        assert text.count(old) == 1, (file, old)
        (folder / file).write_text(text.replace(old, new))
    return folder


def cli(*args):
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_reference_scores_full_marks_in_results_json_shape(grader):
    result = grader.grade(SOLUTIONS / "ch03_attention")
    assert (result["score"], result["max_score"]) == (100, 100)
    assert result["extra_data"]["parts"] == {p: [n, n] for p, n in PART_POINTS.items()}
    assert result["extra_data"]["isolation"] == "namespaces"
    assert len(result["tests"]) >= 30
    for test in result["tests"]:
        assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
        assert test["status"] == "passed" and test["score"] == test["max_score"] > 0


def test_blank_stubs_score_zero_with_a_reason_per_check(grader):
    result = grader.grade(ASSIGNMENTS / "ch03_attention")
    assert result["score"] == 0 and result["max_score"] == 100
    assert all(t["status"] == "failed" and "NotImplementedError" in t["output"] for t in result["tests"])


def test_a_broken_part_costs_that_part_only(grader, tmp_path):
    folder = submission(tmp_path, "half", edits=[
        ("self_attention.py", "        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)\n"
         "        return attn_weights @ values\n        ### END SOLUTION\n\n\nclass SelfAttention_v2",
         "        attn_weights = torch.softmax(attn_scores, dim=-1)\n"
         "        return attn_weights @ values\n        ### END SOLUTION\n\n\nclass SelfAttention_v2")])
    result = grader.grade(folder)
    parts = result["extra_data"]["parts"]
    assert parts["self_attention"] == [17, 20]  # only SelfAttention_v1's forward check (3 points) is lost,
    # not exercise 3.1, which transfers weights into SelfAttention_v1
    assert result["score"] == 97
    failed = [t for t in result["tests"] if t["status"] == "failed"]
    assert len(failed) == 1 and "no 1/sqrt(d_k) scaling" in failed[0]["output"]
    assert failed[0]["extra_data"]["mistake"].startswith("no 1/sqrt(d_k) scaling")  # the name, as data
    # every grader's result (nbgrader's too: it calls grade_result) has the fingerprint of what it read
    assert result["extra_data"]["fingerprint"] == fingerprint(folder)
    # a v1 forward that raises also shows no gradient (2 more points), exercise 3.1 still untouched
    crash = submission(tmp_path, "crash", edits=[("self_attention.py", "        keys = x @ self.W_key\n",
                                                   "        raise RuntimeError('unfinished')\n")])
    result = grader.grade(crash)
    assert result["extra_data"]["parts"]["self_attention"] == [15, 20] and result["score"] == 95


def test_syntax_error_is_reported_and_other_parts_are_graded(grader, tmp_path):
    folder = submission(tmp_path, "syntax", edits=[("simple_attention.py", "def softmax_naive(x):", "def softmax_naive(x:")])
    run = cli("grade", folder, "--json", tmp_path / "r.json")
    assert run.returncode == 0, run.stderr
    assert "simple_attention.py is not valid Python: line" in run.stdout
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["extra_data"]["parts"]["simple_attention"] == [0, 15]
    assert result["score"] == 85
    assert all("SyntaxError" in t["output"] for t in result["tests"] if t["part"] == "simple_attention")
    # the note comes with the grader's result itself, whichever platform asked (nbgrader's included)
    assert grader.grade_result(folder).output.startswith("simple_attention.py is not valid Python: line")


@pytest.mark.parametrize("make, message", [
    (lambda tmp: tmp / "missing", "does not exist"),
    (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty", "holds no submission"),
    (lambda tmp: (tmp / "f.py").write_text("x = 1") and tmp / "f.py", "is not a folder"),
])
def test_bad_paths_give_a_readable_error(tmp_path, make, message):
    run = cli("grade", make(tmp_path))
    assert run.returncode == 2
    assert run.stderr.startswith("error: ") and message in run.stderr
    assert "Traceback" not in run.stderr


def test_class_mode_grades_everyone_and_resumes(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    submission(klass, "alice")
    submission(klass, "bob", base=ASSIGNMENTS)
    (klass / "carol").mkdir()  # handed in nothing
    submission(klass, "eve", edits=[("simple_attention.py", "import torch\n",  # the parser runs out of memory
                                     "import torch\nx = " + "-" * 200_000 + "1\n")])
    layout = klass / "dave" / "ch03_attention"  # laid out like assignments/
    layout.parent.mkdir()
    shutil.copytree(SOLUTIONS / "ch03_attention", layout)
    out = tmp_path / "out"
    run = cli("grade", klass, "--out", out)
    assert run.returncode == 0, run.stderr
    rows = (out / "grades.csv").read_text().splitlines()
    assert rows[0].startswith("student,score,max_score,simple_attention")
    assert [r.split(",")[:2] for r in rows[1:]] == [["alice", "100"], ["bob", "0"], ["carol", ""], ["dave", "100"],
                                                   ["eve", "85"]]
    assert "carol: not graded: carol/ is empty" in run.stdout  # no score: not a zero
    assert "simple_attention.py cannot be compiled: MemoryError" in (out / "eve.md").read_text()
    first = json.loads((out / "alice.json").read_text())
    run = cli("grade", klass, "--out", out)
    assert run.returncode == 0
    assert json.loads((out / "alice.json").read_text()) == first  # kept, not regraded
    assert sorted(p.name for p in out.iterdir()) == ["alice.html", "alice.json", "alice.md", "bob.html", "bob.json",
                                                    "bob.md", "dave.html", "dave.json", "dave.md", "eve.html",
                                                    "eve.json", "eve.md", "grades.csv", "report.html", "summary.json"]
    assert "**Score: 100 / 100**" in (out / "alice.md").read_text()
    assert "| causal_attention | 0 / 25 |" in (out / "bob.md").read_text()
    # two worker processes give the same grades as one
    parallel = tmp_path / "parallel"
    run = cli("grade", klass, "--out", parallel, "--jobs", "2")
    assert run.returncode == 0 and "(2 jobs)" in run.stdout, run.stderr
    for name in ("grades.csv", "summary.json"):  # the class report's numbers too
        assert (parallel / name).read_text() == (out / name).read_text()


def test_channel_round_trip_and_refusals():
    message = {"a": [1, 2.5, None, "x"], "t": torch.arange(6.0).view(2, 3), "n": {"u": torch.tensor(7)}}
    frame = protocol.encode(message)
    header_len, blob_len = protocol.PREFIX.unpack(frame[:protocol.PREFIX.size])
    back = protocol.decode(frame[12:12 + header_len], frame[12 + header_len:])
    assert back["a"] == [1, 2.5, None, "x"] and torch.equal(back["t"], message["t"])
    assert torch.equal(back["n"]["u"], torch.tensor(7))
    # every dtype the channel writes itself, and views: strided, offset, negated, needing grad
    tensors = [torch.randn(3, 4).t(), torch.randn(6)[1:4], torch._neg_view(torch.randn(3)), torch.tensor(2.5),
               torch.randn(2, requires_grad=True) * 2, torch.zeros(0, 3), torch.ones(3, dtype=torch.bool),
               *(torch.randn(2, 3).to(d) for d in (torch.float64, torch.float16, torch.bfloat16, torch.int8,
                                                   torch.uint8, torch.int16, torch.int32, torch.int64))]
    frame = protocol.encode({"t": tensors})
    header_len, _ = protocol.PREFIX.unpack(frame[:protocol.PREFIX.size])
    for sent, got in zip(tensors, protocol.decode(frame[12:12 + header_len], frame[12 + header_len:])["t"], strict=True):
        assert got.dtype == sent.dtype and torch.equal(got, sent.detach().resolve_neg()), (sent, got)
    # a blob whose bytes do not belong each to exactly one tensor of its shape is refused, as safetensors does
    for header, data in [({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, 8),      # a gap
                         ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                           "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, 8),     # an overlap
                         ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, 8),      # too few bytes
                         ({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, 8),     # past the end
                         ({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, 8)]:     # bytes left over
        text = json.dumps(header).encode()
        with pytest.raises(protocol.ChannelError, match="malformed frame"):
            protocol.decode(b"{}", len(text).to_bytes(8, "little") + text + bytes(data))
    with pytest.raises(protocol.ChannelError):
        protocol.decode(b'{"x": {"$tensor": "9"}}', b"")  # names a tensor it does not carry
    with pytest.raises(protocol.ChannelError):
        protocol.decode(b"\x80\x04pickle", b"")
    with pytest.raises(TypeError):
        protocol.encode({"f": object()})
    a, b = __import__("socket").socketpair()
    a.sendall(protocol.PREFIX.pack(protocol.MAX_JSON + 1, 0))
    with pytest.raises(protocol.ChannelError, match="over the limit"):
        protocol.recv(b)


def test_a_suite_that_does_not_import_is_a_grader_error_not_a_smaller_total(tmp_path):
    # a course of its own (AUTOGRADER_COURSE), graded in a fresh process
    suites = tmp_path / "autograder" / "suites"
    shutil.copytree(ROOT / "autograder" / "suites", suites)
    (tmp_path / "solutions").symlink_to(SOLUTIONS)
    (suites / "ch03_attention" / "test_hidden_exercises.py").write_text("def broken(:\n")
    script = (f"from autograder.grading import runner\n"
              f"with runner.Grader() as g: g.grade({str(SOLUTIONS / 'ch03_attention')!r})\n")
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "AUTOGRADER_COURSE": str(tmp_path)})
    assert run.returncode != 0
    assert "GraderError: ch03_attention/test_hidden_exercises.py could not be collected" in run.stderr
    assert "SyntaxError" in run.stderr


def test_markdown_feedback_fences_untrusted_text():
    from autograder.grading.result import SubmissionResult
    from autograder.platforms import report
    result = SubmissionResult.from_json({
        "score": 0, "max_score": 2, "execution_time": 1.0, "output": "", "extra_data": {"parts": {"exercises": [0, 2]}},
        "tests": [{"name": "exercises: 3.1", "part": "exercises", "score": 0, "max_score": 2,
                   "status": "failed", "output": "raised ValueError: ```\n# Score: 100 / 100"}]})
    text = report.markdown(result, "mallory")
    assert "**Score: 0 / 2**" in text and "**Score: 100" not in text
    fence = "````"  # longer than the three backticks the student's message holds
    assert f"{fence}text\nraised ValueError: ```\n# Score: 100 / 100\n{fence}" in text



@pytest.mark.parametrize("encode", [
    lambda text: b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode(),           # Windows: BOM and CRLF
    lambda text: text.replace("\n", "\r").encode(),                                # classic Mac: CR only
    lambda text: ("# -*- coding: latin-1 -*-\n" + text + "\nNAME = 'é'\n").encode("latin-1"),  # PEP 263
    lambda text: text.replace("    ", "\t").encode(),                              # tabs for indentation
], ids=["bom-crlf", "cr", "coding-latin-1", "tabs"])
def test_sources_are_read_as_python_reads_them(grader, tmp_path, encode):
    folder = submission(tmp_path, "platform")
    for path in folder.glob("*.py"):
        path.write_bytes(encode(path.read_text()))
    result = grader.grade(folder)
    assert result["score"] == 100, [t["output"] for t in result["tests"] if t["status"] != "passed"]
    assert result["output"] == ""


def test_a_file_invalid_in_its_encoding_is_a_note_for_that_module(grader, tmp_path):
    folder = submission(tmp_path, "latin")
    path = folder / "simple_attention.py"
    path.write_bytes(path.read_bytes() + b"\nNAME = '\xe9'\n")  # a latin-1 byte and no coding line
    bad_cookie = folder / "exercises.py"
    bad_cookie.write_bytes(b"# coding: klingon\n" + bad_cookie.read_bytes())
    result = grader.grade(folder)
    line = path.read_bytes().count(b"\n")
    assert result["output"] == (f"exercises.py: cannot be read as Python source (unknown encoding: klingon), ignored\n"
                                f"simple_attention.py: line {line} is not valid utf-8 text (save the file as UTF-8), ignored")
    assert result["extra_data"]["parts"]["simple_attention"] == [0, 15]
    assert result["extra_data"]["parts"]["exercises"] == [0, 15]
    assert result["score"] == 70  # the other parts import neither module
