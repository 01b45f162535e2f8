"""The similarity report (``python -m autograder similarity``): who shares work beyond the book.

The class is tests/similarity_class.py's: built from the project's own banks, with one student who
copied the "einsum everywhere" student's distinctive code and renamed the variables, three who
copied another alternative student's each and disguised it (statements reordered and dead ones
added; names rewritten mechanically, ``x`` as ``[x][0]``; both), two who hand in
the reference itself, five who make the same common mistake and two who make one rare mistake,
written two different ways. Fast tests compare its code alone (nothing graded) and check the digest
of a wrong answer; the slow ones grade the class in two shards, merge them, and read the results
from the merged folder and from the shards themselves, then open the page in headless Chromium.
"""
import csv
import json
import subprocess
import sys

import pytest
import torch
from browser import browser_or_skip
from similarity_class import ASSIGNMENT, COPIER, DISGUISES, HOSTILE_COMMENT, known_class, write

from autograder.grading import compare
from autograder.grading.result import Check, SubmissionResult
from autograder.paths import ROOT
from autograder.platforms import classreport, similarity

ORIGINAL = "alt-0"        # the einsum student, whom the copier copied
COPIES = [{COPIER, ORIGINAL}] + [{copier, copied} for copier, (copied, _) in DISGUISES.items()]
COMMON = [f"common-{i}" for i in range(5)]
CLEAR_MARGIN = 0.3


def cli(*args):
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def score(rows, a, b):
    row = next(r for r in rows if {r["student_a"], r["student_b"]} == {a, b})
    return float(row["similarity"])


# -- the digest of a wrong answer --------------------------------------------------------------

def test_a_wrong_answer_digest_is_the_answer_not_its_rounding():
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(0)) * 100
    same = compare.answer_digest(x)
    assert len(same) == 16 and compare.answer_digest(x.clone()) == same
    assert compare.answer_digest(x * (1 + 1e-7)) == same          # the same mistake, summed in another order
    assert compare.answer_digest(x * 1.01) != same                  # another answer
    assert compare.answer_digest(x.reshape(6, 4)) != same           # the shape counts
    assert compare.answer_digest(x.double()) != same                # so does the dtype
    zeros = torch.zeros(3)
    assert compare.answer_digest(-zeros) == compare.answer_digest(zeros)
    nan = torch.tensor([float("nan")])
    assert compare.answer_digest(nan) == compare.answer_digest(-nan)
    assert compare.answer_digest(torch.tensor([1, 2, 3])) != compare.answer_digest(torch.tensor([1, 2, 4]))
    assert compare.answer_digest(3) == compare.answer_digest(3) != compare.answer_digest(4)
    assert compare.answer_digest(None) is None and compare.answer_digest("x") is None
    assert compare.answer_digest(True) is None


def test_a_failed_comparison_carries_its_digest_into_the_result():
    expected = torch.ones(2, 3)
    wrong = torch.full((2, 3), 2.0)
    with pytest.raises(AssertionError) as failed:
        compare.expect_close(wrong, expected, "the weights")
    assert failed.value.answer_digest == compare.answer_digest(wrong)
    with pytest.raises(AssertionError) as shape:
        compare.expect_close(torch.ones(3, 2), expected, "the weights")
    assert shape.value.answer_digest == compare.answer_digest(torch.ones(3, 2))
    check = Check("p: c", "p", 0, 2, "failed", "off.", answer_digest=failed.value.answer_digest)
    data = check.to_json()
    assert data["extra_data"] == {"answer_digest": failed.value.answer_digest}
    assert Check.from_json(data) == check
    assert "extra_data" not in Check("p: c", "p", 2, 2, "passed", "").to_json()  # nothing new where nothing failed


def test_the_runner_records_the_digest_set_by_the_grader():
    from autograder.grading.runner import _Check, _Collector
    collector = _Collector(None)
    check = _Check("test_hidden_p.py::test_c", None, (), (), 2, "a check", "p")
    error = AssertionError("wrong values")
    error.answer_digest = "0123456789abcdef"
    collector.record(check, False, True, error)
    collector.record(check, False, True, AssertionError("no answer to digest"))
    collector.record(check, True, False, None)
    assert [c.answer_digest for c in collector.checks] == ["0123456789abcdef", None, None]


# -- the scores, on data -----------------------------------------------------------------------

def test_a_rare_shared_wrong_answer_outweighs_a_common_one_on_many_checks():
    """Two students sharing one wrong answer nobody else gave rank above five who share a common
    one on four checks (a common mistake fails many checks alike: the part counts once)."""
    rare = {("p: c0", "r"): "p"}
    common = {(f"q: c{i}", f"c{i}"): "q" for i in range(4)}
    scores, listed = similarity.answer_scores([rare, rare, *[common] * 5])
    assert scores[0, 1] == pytest.approx(similarity.ANSWER_WEIGHT)
    assert listed[0, 1] == [("p: c0", 2)]
    assert all(scores[a, b] < scores[0, 1] / 2 for a in range(2, 7) for b in range(a + 1, 7))


# -- the code alone, nothing graded ------------------------------------------------------------

@pytest.fixture(scope="module")
def code_only(tmp_path_factory):
    """The class on disk, compared on its code alone (no results), and the pairs."""
    root = write(tmp_path_factory.mktemp("similarity") / "class", known_class())
    marker = root.parent / "ran"
    (root / "runs-on-import").mkdir()  # a student whose code, if it ever ran, would leave a file
    reference = {f.name: f.read_text() for f in (root / "ref-a").iterdir()}
    for name, text in reference.items():
        (root / "runs-on-import" / name).write_text(f"open({str(marker)!r}, 'w').close()\n{text}")
    out = root.parent / "out"
    submissions, pairs, notes, _ = similarity.run(root, ASSIGNMENT, [], out)
    return {"root": root, "out": out, "marker": marker, "submissions": submissions, "pairs": pairs, "notes": notes}


def pair_names(code_only):
    subs = code_only["submissions"]
    return [{subs[p.a].folder, subs[p.b].folder} for p in code_only["pairs"]]


def test_the_copiers_rank_first_on_code_alone(code_only):
    pairs, names = code_only["pairs"], pair_names(code_only)
    assert names[0] == {COPIER, ORIGINAL}, names[:3]
    copies = len(COPIES)
    assert all(n in COPIES for n in names[:copies]), names[:copies + 1]
    assert pairs[copies - 1].similarity - pairs[copies].similarity >= CLEAR_MARGIN, pairs[copies - 1:copies + 1]
    reference = next(p for p, n in zip(pairs, names) if n == {"ref-a", "ref-b"})
    assert reference.similarity == 0 and reference.shared == 0     # the book, typed twice: nothing in common
    assert not code_only["marker"].exists()                         # student code is read, never run
    rows = read_csv(code_only["out"] / "similarity.csv")
    assert tuple(rows[0]) == similarity.CSV_HEADER and list(rows[0])[:3] == ["student_a", "student_b", "similarity"]
    subs = code_only["submissions"]
    assert len(rows) == len(subs) * (len(subs) - 1) // 2
    values = [float(r["similarity"]) for r in rows]
    assert values == sorted(values, reverse=True) and all(0 <= v <= 1 for v in values)


def test_the_courses_own_code_is_base_code(code_only):
    """A student who hands in the stubs, the reference and its support files has no code of their own."""
    texts = similarity.base_texts(ASSIGNMENT)
    assert any(k.startswith("assignments/") for k in texts) and any(k.startswith("solutions/") for k in texts)
    boilerplate = similarity.base_hashes(texts)
    reference = next(s for s in code_only["submissions"] if s.folder == "ref-a")
    for name, text in reference.files.items():
        assert similarity.fingerprint(text, boilerplate) == {}, name


@pytest.mark.parametrize("copier", DISGUISES)
def test_a_disguised_copy_ranks_first(code_only, copier):
    """Each disguised copy's pair is the top pair of both students, by a clear margin over their
    next and over every pair that is not a copy: reordering, dead statements and mechanical
    renaming change no fingerprint."""
    pairs, names = code_only["pairs"], pair_names(code_only)
    copied = DISGUISES[copier][0]
    theirs = [p for p, n in zip(pairs, names) if n & {copier, copied}]
    copy = next(p for p, n in zip(pairs, names) if n == {copier, copied})
    assert theirs[0] is copy, (theirs[:2], copy)
    assert copy.similarity - theirs[1].similarity >= CLEAR_MARGIN, theirs[:2]
    assert all(copy.similarity - p.similarity >= CLEAR_MARGIN for p, n in zip(pairs, names) if n not in COPIES)


def test_dead_code_wrappers_and_names_change_no_fingerprint():
    plain = "def f(a, b):\n    c = a @ b\n    d = c.softmax(dim=-1)\n    return d * b\n"
    disguised = ("def f(x, y):\n    'a docstring'\n    unused = len(str(3))\n    z = [x][0] @ (y + 0)\n"
                 "    if False:\n        print(z)\n    pass\n    w = ((z,)[0]).softmax(dim=-1)\n    w2 = w2 + 1\n"
                 "    return 1 * y * [w][0]\n    print('never')\n")
    assert similarity.fingerprint(plain).keys() == similarity.fingerprint(disguised).keys()
    swapped = "def f(a, b):\n    d = b @ a\n    c = a @ b\n    return c * d\n"
    assert similarity.fingerprint(swapped).keys() == similarity.fingerprint(swapped.replace(
        "    d = b @ a\n    c = a @ b\n", "    c = a @ b\n    d = b @ a\n")).keys()
    assert similarity.fingerprint("def f(a):\n    return a\n").keys() == similarity.fingerprint(
        "def f(a):\n    return a\n    a = a @ a\n").keys()                                 # after a return: dead
    assert similarity.fingerprint("def f(:\n") is None                                      # not Python


# -- a graded class: shards, merged -------------------------------------------------------------

@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded in two shards, merged; the similarity report from the merged folder (its
    default place, beside the class report) and from the two shards' folders."""
    tmp = tmp_path_factory.mktemp("similarity-graded")
    root = write(tmp / "class", known_class())
    for k in (1, 2):
        run = cli("grade", root, "--shard", f"{k}/2", "--out", tmp / f"shard-{k}")
        assert run.returncode == 0, run.stdout + run.stderr
    merged = cli("merge", tmp / "shard-1", tmp / "shard-2", "--out", tmp / "merged")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    before = {p.relative_to(tmp / "merged"): p.read_bytes() for p in (tmp / "merged").rglob("*") if p.is_file()}
    from_merged = cli("similarity", root, "--assignment", ASSIGNMENT, "--graded", tmp / "merged")
    assert from_merged.returncode == 0, from_merged.stdout + from_merged.stderr
    from_shards = cli("similarity", root, "--assignment", ASSIGNMENT, "--graded", tmp / "shard-1", tmp / "shard-2",
                      "--out", tmp / "from-shards")
    assert from_shards.returncode == 0, from_shards.stdout + from_shards.stderr
    return {"tmp": tmp, "root": root, "merged": tmp / "merged", "before": before, "stdout": from_merged.stdout,
            "out": tmp / "merged" / classreport.similarity_folder(ASSIGNMENT), "from_shards": tmp / "from-shards"}


@pytest.mark.slow
def test_the_ranking_of_a_graded_class(graded):
    rows = read_csv(graded["out"] / "similarity.csv")
    assert (graded["out"] / "similarity.csv").read_bytes() == (graded["from_shards"] / "similarity.csv").read_bytes()
    copies = len(COPIES)
    assert {rows[0]["student_a"], rows[0]["student_b"]} == {COPIER, ORIGINAL}, rows[:3]
    assert all({r["student_a"], r["student_b"]} in COPIES for r in rows[:copies]), rows[:copies + 1]
    assert float(rows[copies - 1]["similarity"]) - float(rows[copies]["similarity"]) >= CLEAR_MARGIN, rows[:copies + 1]
    flagged = [r for r in rows if float(r["similarity"]) >= similarity.THRESHOLD]
    assert len(flagged) >= 2
    assert score(rows, "ref-a", "ref-b") < min(float(r["similarity"]) for r in flagged)
    # one rare wrong answer, two students, written two ways: above every pair sharing only the common one
    rare = next(r for r in rows if {r["student_a"], r["student_b"]} == {"rare-a", "rare-b"})
    assert float(rare["code"]) == 0 and rare["rarest_wrong_answer_students"] == "2", rare
    assert rare["wrong_answer_checks"].startswith("causal_attention: ")
    common = [score(rows, a, b) for i, a in enumerate(COMMON) for b in COMMON[i + 1:]]
    assert float(rare["similarity"]) > max(common) > 0
    assert rare in flagged and all(c < similarity.THRESHOLD for c in common)
    assert "evidence for a person to read, never a verdict" in graded["stdout"]


@pytest.mark.slow
def test_nothing_in_the_grades_or_feedback_changes(graded):
    merged = graded["merged"]
    after = {p.relative_to(merged): p.read_bytes() for p in merged.rglob("*") if p.is_file()}
    similar = classreport.similarity_folder(ASSIGNMENT)
    assert {k: v for k, v in after.items() if k.parts[0] != similar} == graded["before"]
    assert sorted(str(k) for k in after if k.parts[0] == similar) == [f"{similar}/similarity.csv",
                                                                     f"{similar}/similarity.html"]
    # the class report's section points to the page where the command writes it by default
    page = (merged / "report.html").read_text()
    assert f'href="{similar}/similarity.html"' in page and "never a verdict" in page


@pytest.mark.slow
@pytest.mark.browser
def test_the_page_in_a_browser(graded, tmp_path):
    path = graded["out"] / "similarity.html"
    text = path.read_text()
    assert "<script" not in text and HOSTILE_COMMENT[:20] not in text
    with browser_or_skip() as browser:
        page = browser.open(path).settle(500)
        seen = page.evaluate("""(() => ({
          injected: document.querySelectorAll("img, script, [onerror], [onmouseover]").length,
          scripts: document.scripts.length,
          pairs: [...document.querySelectorAll("table.pairs tbody tr")].map(tr => [...tr.cells].map(c => c.textContent.trim())),
          first: document.querySelector("section.pair h3").textContent,
          code: [...document.querySelector("section.pair").querySelectorAll("pre")].map(p => p.textContent).join(" "),
          marks: document.querySelectorAll("section.pair mark").length,
          verdict: document.querySelector(".verdict").textContent,
          width: document.documentElement.scrollWidth,
        }))()""")
        page.screenshot(tmp_path / "similarity.png", full_page=True)
        console, requests = page.console, page.requests
    assert console == [] and requests == [page.url], (console, requests)   # nothing runs, nothing loads
    assert seen["injected"] == 0 and seen["scripts"] == 0
    assert seen["pairs"][0][1:3] == [COPIER, ORIGINAL] and COPIER in seen["first"]   # names shown as text
    assert HOSTILE_COMMENT[:-1] in seen["code"] and "\u202e" not in seen["code"]   # code as text, no bidi override
    assert seen["marks"] > 0 and "never a verdict" in seen["verdict"] and seen["width"] <= 1280
    shown = [set(row[1:3]) for row in seen["pairs"]]
    assert all(n in COPIES for n in shown[:len(COPIES)]) and shown[len(COPIES)] == {"rare-a", "rare-b"}, shown


# -- what the command refuses ------------------------------------------------------------------

def test_the_command_says_what_is_wrong(tmp_path):
    missing = cli("similarity", tmp_path / "nowhere", "--assignment", ASSIGNMENT, "--out", tmp_path / "o")
    assert missing.returncode == 2 and "is not a folder of submissions" in missing.stderr
    lonely = tmp_path / "a-class-of-one-never-graded"  # no graded/<its name> beside the repository either
    (lonely / "ann").mkdir(parents=True)
    not_graded = cli("similarity", lonely, "--assignment", ASSIGNMENT, "--graded", lonely, "--out", tmp_path / "o")
    assert not_graded.returncode == 2 and "is it a graded folder?" in not_graded.stderr
    alone = cli("similarity", lonely, "--assignment", ASSIGNMENT, "--out", tmp_path / "o")
    assert alone.returncode == 2 and "fewer than two students" in alone.stderr


def test_an_earlier_result_without_digests_is_said(tmp_path):
    """Results graded before answers were digested: the code is still compared, and the page says why
    the wrong answers are not."""
    root = tmp_path / "class"
    for name in ("ann", "bo"):
        (root / name).mkdir(parents=True)
        (root / name / "simple_attention.py").write_text("import torch\n")
    graded = tmp_path / "graded"
    graded.mkdir()
    students = []
    for name in ("ann", "bo"):
        result = SubmissionResult.build([Check("p: c", "p", 0, 2, "failed", "off.")], [], "namespaces", 1.0,
                                        assignment=ASSIGNMENT, suites="0" * 16)
        (graded / f"{name}.json").write_text(json.dumps(result.to_json()))
        students.append(classreport.Student(name, name, result, "graded", f"{name}.html", f"{name}.json", ASSIGNMENT))
    classreport.write(graded, students, "class")
    _, _, notes, _ = similarity.run(root, ASSIGNMENT, [graded], tmp_path / "out")
    assert any("`grade --regrade`" in note for note in notes)
    assert "grade --regrade" in (tmp_path / "out" / "similarity.html").read_text()
