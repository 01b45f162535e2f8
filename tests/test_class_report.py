"""The class report (report.html, summary.json) in a real browser, and a class graded in shards.

One class of 12 is graded once whole and once in 3 shards that are then merged: the reference,
the blank stubs, eight mutants of the bank (two with the same named mistake, one that does not
compile), a student who handed in nothing, and one whose folder name, file name and feedback are
markup that tries to run a script. The page, and every Markdown feedback file and the job summary
rendered as a Markdown renderer does before GitHub's own sanitizer, are opened in headless
Chromium (Debian's package).
"""
import csv
import html
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from banks import load, reference_sources, stub_sources
from browser import browser_or_skip
from test_course import CH03, TINY, tiny  # noqa: F401 (tiny: a course of two assignments, a fixture)
from test_course import cli as course_cli
from test_mutants import mutated_sources

from autograder.grading import course
from autograder.paths import ROOT
from autograder.platforms import report, shards
from autograder.platforms.files import result_stem

ASSIGNMENT = "ch03_attention"  # the class hands in this chapter (its mutant bank names the mistakes)

HOSTILE = "<img src=x onerror=console.error(1)>\"'&amp;<b>"
HOSTILE_FILE = "<img src=x onerror=console.error(5)>.py"  # not a module name: a note says it was ignored
HOSTILE_MESSAGE = ("<script>console.error(2)</script></code><img src=y onerror=console.error(3)> "
                   "This is exactly what you get with: <b onmouseover=console.error(4)>a forged name</b>.")
CLASS_MUTANTS = ("missing 1/sqrt(d_k) in SelfAttention_v1", "missing 1/sqrt(d_k) in SelfAttention_v2",
                 "softmax_naive without dividing by the sum", "simple_causal_mask uses triu instead of tril",
                 "heads split without transpose in MultiHeadAttention", "dot_product_loop skips the last element (range(n - 1))",
                 "syntax error in causal_attention.py (missing colon)", "exercise 3.1: weights transferred untransposed")


def make_class(root):
    """The class of 12, one folder per student."""
    mutants = {m.name: m for m in load(ASSIGNMENT, "mutants").MUTANTS}
    students = {"ref": reference_sources(ASSIGNMENT), "blank": stub_sources(ASSIGNMENT)}
    students.update({f"m{i}-{name.split()[0].strip(':')}": mutated_sources(ASSIGNMENT, mutants[name])
                     for i, name in enumerate(CLASS_MUTANTS)})
    hostile = reference_sources(ASSIGNMENT)
    hostile["simple_attention.py"] = hostile["simple_attention.py"].replace(
        "def dot_product_loop(x, y):\n", f"def dot_product_loop(x, y):\n    raise ValueError({HOSTILE_MESSAGE!r})\n", 1)
    hostile[HOSTILE_FILE] = ""
    students[HOSTILE] = hostile
    for name, sources in students.items():
        (root / name).mkdir(parents=True)
        for file, text in sources.items():
            (root / name / file).write_text(text)
    (root / "zoe").mkdir()  # handed in nothing
    assert len(list(root.iterdir())) == 12
    return root


def cli(*args, env=None):
    run = subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, env={**os.environ, **(env or {})})
    return run


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded in one run, and in 3 shards merged."""
    tmp = tmp_path_factory.mktemp("class")
    klass = make_class(tmp / "submitted")
    one = cli("grade", klass, "--out", tmp / "one", env={"GITHUB_STEP_SUMMARY": str(tmp / "job-summary.md")})
    assert one.returncode == 0, one.stdout + one.stderr
    runs = [cli("grade", klass, "--shard", f"{k}/3", "--out", tmp / f"shard-{k}") for k in (1, 2, 3)]
    for run in runs:
        assert run.returncode == 0, run.stdout + run.stderr
    merged = cli("merge", *(tmp / f"shard-{k}" for k in (1, 2, 3)), "--out", tmp / "merged")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    return {"tmp": tmp, "class": klass, "one": tmp / "one", "job_summary": tmp / "job-summary.md", "stdout": one.stdout, "merged": tmp / "merged",
            "merge_stdout": merged.stdout, "shards": [tmp / f"shard-{k}" for k in (1, 2, 3)]}


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_shards_merge_into_exactly_the_one_run(graded):
    one, merged = graded["one"], graded["merged"]
    for name in ("grades.csv", "summary.json", "report.html"):
        assert (merged / name).read_bytes() == (one / name).read_bytes(), name
    feedback = sorted(p.name for p in one.iterdir() if p.suffix in (".md", ".json"))
    assert sorted(p.name for p in merged.iterdir() if p.suffix in (".md", ".json")) == feedback
    assert all((merged / name).read_bytes() == (one / name).read_bytes() for name in feedback if name.endswith(".md"))
    # private, as a class run writes them
    assert {oct(os.stat(merged / name).st_mode & 0o777) for name in feedback} == \
        {oct(os.stat(one / name).st_mode & 0o777) for name in feedback} == {oct(0o600)}
    sizes = []
    for k, shard in enumerate(graded["shards"], start=1):
        rows = read_csv(shard / "grades.csv")
        assert json.loads((shard / "summary.json").read_text())["shard"] == [k, 3]
        folders = [r["folder"] if "folder" in r else r["student"]
                   for r in json.loads((shard / "summary.json").read_text())["rows"]]
        assert all(shards.in_shard(name, k, 3) for name in folders)
        sizes.append(len(rows))
    assert sum(sizes) == 12 and min(sizes) > 0, sizes
    assert "merged 3 shards: 11 of 12 submissions graded" in graded["merge_stdout"]


def test_merge_refuses_what_is_not_one_class(graded, tmp_path):
    s1, s2, s3 = graded["shards"]
    missing = cli("merge", s1, s2, "--out", tmp_path / "a")
    assert missing.returncode == 2 and "shard 3/3 missing" in missing.stderr, missing.stderr
    twice = cli("merge", s1, s1, s2, s3, "--out", tmp_path / "b")
    assert twice.returncode == 2 and "same shard (1/3)" in twice.stderr, twice.stderr
    overlap = cli("merge", graded["one"], s1, "--out", tmp_path / "c")
    assert overlap.returncode == 2 and "is in two shards" in overlap.stderr, overlap.stderr
    older = tmp_path / "older"
    shutil.copytree(s2, older)
    result_file = next(r["result"] for r in json.loads((older / "summary.json").read_text())["rows"] if "score" in r)
    result = json.loads((older / result_file).read_text())
    result["extra_data"]["suites"] = "0123456789abcdef"
    (older / result_file).write_text(json.dumps(result))
    stale = cli("merge", s1, older, s3, "--out", tmp_path / "d")
    assert stale.returncode == 2 and "different versions of the suites" in stale.stderr, stale.stderr
    assert not (tmp_path / "d").exists()


def _tampered(shard, tmp_path, name, edit_summary=None, edit_files=None):
    """A copy of ``shard`` with its summary.json (a dict) and/or its files changed."""
    copy = tmp_path / name
    shutil.copytree(shard, copy, symlinks=True)
    if edit_summary:
        summary = json.loads((copy / "summary.json").read_text())
        edit_summary(summary)
        (copy / "summary.json").write_text(json.dumps(summary))
    if edit_files:
        edit_files(copy, json.loads((copy / "summary.json").read_text()))
    return copy


def _graded_row(summary):
    return next(r for r in summary["rows"] if r["result"])


def test_merge_refuses_shards_it_cannot_trust(graded, tmp_path):
    """Shards of another engine, another class or another assignment, a dropped row, a result
    path outside the shard or through a link: exit 2 and the reason, nothing written."""
    s1, s2, s3 = graded["shards"]
    summary = json.loads((s2 / "summary.json").read_text())
    assert summary["engine"] == course.engine_digest() and summary["assignment"] == [ASSIGNMENT]   # the one graded
    assert summary["class"] == json.loads((graded["one"] / "summary.json").read_text())["class"]

    def link_to_a_neighbour(copy, summary):
        target = copy / _graded_row(summary)["result"]
        target.unlink()
        target.symlink_to(s1 / _graded_row(json.loads((s1 / "summary.json").read_text()))["result"])

    def set_result(path):
        return lambda summary: _graded_row(summary).update(result=path)
    cases = {
        "engine": (lambda summary: summary.update(engine="0123456789abcdef"), None,
                   "graded as different versions of the grading engine"),
        "class": (lambda summary: summary.update({"class": "0123456789abcdef"}), None, "graded as different classes"),
        "assignment": (lambda summary: summary.update(assignment="ch04_gpt"), None, "graded as different assignments"),
        "dropped": (lambda summary: summary["rows"].pop(), None, "a student was dropped or added"),
        "absolute": (set_result(str(s1 / "ref.json")), None, "not where a class run writes it"),
        "dotdot": (set_result("../shard-1/ref.json"), None, "not where a class run writes it"),
        "link": (None, link_to_a_neighbour, "cannot be read: Too many levels of symbolic links"),
    }
    for name, (edit_summary, edit_files, why) in cases.items():
        bad = _tampered(s2, tmp_path, name, edit_summary, edit_files)
        run = cli("merge", s1, bad, s3, "--out", tmp_path / f"out-{name}")
        assert run.returncode == 2 and why in run.stderr, (name, run.stderr)
        assert not (tmp_path / f"out-{name}").exists(), name


def test_merge_adds_up_each_score_from_its_checks(graded, tmp_path):
    """A result's ``score`` as written is never taken: the merge writes what one run wrote."""
    def full_marks(copy, summary):
        path = copy / _graded_row(summary)["result"]
        result = json.loads(path.read_text())
        result["score"] = result["max_score"]
        result["extra_data"]["parts"] = {k: [most, most] for k, (_, most) in result["extra_data"]["parts"].items()}
        path.write_text(json.dumps(result))
    s1, s2, s3 = graded["shards"]
    forged = _tampered(s2, tmp_path, "forged", edit_files=full_marks)
    run = cli("merge", s1, forged, s3, "--out", tmp_path / "merged")
    assert run.returncode == 0, run.stderr
    for name in ("grades.csv", "summary.json", "report.html"):
        assert (tmp_path / "merged" / name).read_bytes() == (graded["one"] / name).read_bytes(), name


def test_a_result_of_other_suites_is_regraded_not_kept(graded, tmp_path):
    out = tmp_path / "again"
    shutil.copytree(graded["one"], out)
    result = json.loads((out / "ref.json").read_text())
    digest = result["extra_data"]["suites"]
    assert digest == course.suites_digest(ASSIGNMENT)
    result["extra_data"]["suites"] = "0123456789abcdef"
    (out / "ref.json").write_text(json.dumps(result))
    run = cli("grade", graded["class"], "--out", out)
    assert run.returncode == 0, run.stderr
    assert "(10 unchanged since an earlier run, kept)" in run.stdout  # ref regraded (zoe has no result to keep)
    assert json.loads((out / "ref.json").read_text())["extra_data"]["suites"] == digest


def test_summary_has_the_numbers_of_grades_csv_and_the_terminal_a_few_lines(graded):
    rows = read_csv(graded["one"] / "grades.csv")
    summary = json.loads((graded["one"] / "summary.json").read_text())
    (a,) = summary["assignments"]
    scores = [int(r["score"]) for r in rows if r["status"] == "graded"]
    assert (a["graded"], a["median"], a["mean"]) == (len(scores), statistics.median(scores),
                                                     round(statistics.fmean(scores), 2))
    assert (a["at_zero"], a["at_full_marks"]) == (scores.count(0), scores.count(100))
    assert sum(a["histogram"]["counts"]) == len(scores)
    top = a["mistakes"][0]
    assert top["mistake"].startswith("no 1/sqrt(d_k) scaling") and top["students"] == ["m0-missing", "m1-missing"]
    assert not [m for m in a["mistakes"] if "forged" in m["mistake"]]  # a student's message is not a name
    assert [p["student"] for p in summary["problems"]] == [HOSTILE, "m6-syntax", "zoe"]  # HOSTILE: a note
    assert summary["isolation"]["graded"] == 11
    tail = graded["stdout"].splitlines()
    assert any(line.startswith("class report: ") for line in tail)
    assert any(line.startswith(f"{ASSIGNMENT}: 11 graded, median {a['median']}") for line in tail[-5:])
    assert any(f"commonest named mistakes: {top['mistake']} (2)" in line for line in tail[-5:])


READ_PAGE = """(() => {
  const text = el => el.textContent.trim();
  const section = document.querySelector("section[data-assignment]");
  return {
    stats: Object.fromEntries([...section.querySelectorAll("[data-stat]")].map(el => [el.dataset.stat, text(el)])),
    headers: [...section.querySelectorAll("table.students thead th")].map(text),
    students: [...section.querySelectorAll("table.students tbody tr")].map(tr => [...tr.cells].map(text)),
    notGraded: [...document.querySelectorAll("table.not-graded tbody tr")].map(tr => [...tr.cells].map(text)),
    mistakes: [...section.querySelectorAll("table.mistakes tbody tr")].map(tr => [...tr.cells].map(text)),
    injected: document.querySelectorAll("img, b, script:not(:last-child), [onerror], [onmouseover]").length,
    scripts: document.scripts.length,
    buttons: section.querySelectorAll("table.students th button").length,
    svgs: document.querySelectorAll(".charts figure svg").length,
    pictures: document.querySelectorAll("details.picture figure svg").length,
    width: document.documentElement.scrollWidth,
  };
})()"""


def keep(path):
    """A screenshot as a test artifact: beside the test's files, and in $AUTOGRADER_ARTIFACTS if set."""
    folder = os.environ.get("AUTOGRADER_ARTIFACTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(folder) / path.name)


@pytest.mark.browser
def test_report_page_in_a_browser(graded, tmp_path):
    page_path = graded["one"] / "report.html"
    rows = read_csv(graded["one"] / "grades.csv")
    with browser_or_skip() as browser:
        page = browser.open(page_path)
        seen = page.evaluate(READ_PAGE)
        keep(page.screenshot(tmp_path / "class-report.png"))
        keep(page.screenshot(tmp_path / "class-report-full.png", full_page=True))
        # sorting by score, with the script: ascending, then descending
        order = []
        for _ in range(2):
            page.evaluate("document.querySelectorAll('table.students th button')[1].click()")
            order.append([int(r) for r in page.evaluate(
                "[...document.querySelectorAll('table.students tbody tr')].map(tr => tr.cells[1].textContent)")])
        console, requests = page.console, page.requests
        plain = browser.open(page_path, scripts=False)
        without_script = plain.evaluate(READ_PAGE)
        assert plain.console == [] and plain.requests == [plain.url]
    assert console == [], console
    assert requests == [page.url], requests  # the page itself, nothing else: no network, no file beside it
    # the numbers shown are those of grades.csv
    graded_rows = [r for r in rows if r["status"] == "graded"]
    parts = [h.split(" ")[0] for h in seen["headers"][2:-1]]
    assert seen["students"] == [[r["student"], r["score"], *(r[p] for p in parts), r["status"]] for r in graded_rows]
    scores = [int(r["score"]) for r in graded_rows]
    assert seen["stats"]["graded"] == str(len(scores))
    assert float(seen["stats"]["median"]) == statistics.median(scores)
    assert float(seen["stats"]["mean"]) == round(statistics.fmean(scores), 2)
    assert (seen["stats"]["at_zero"], seen["stats"]["at_full_marks"]) == (str(scores.count(0)), str(scores.count(100)))
    assert seen["notGraded"] == [[r["student"], r["status"]] for r in rows if r["score"] == "" and not r["max_score"]]  # no score: not a zero
    assert seen["mistakes"][0][0].startswith("no 1/sqrt(d_k) scaling") and seen["mistakes"][0][1] == "2"
    # the hostile name and feedback are text, not markup
    assert HOSTILE in [row[0] for row in seen["students"]]
    assert seen["injected"] == 0 and seen["scripts"] == 1 and seen["svgs"] == 2
    # a named mistake with a picture shows one student's weights beside the book's, folded away
    assert seen["pictures"] == sum(1 for m in json.loads((graded["one"] / "summary.json").read_text())
                                   ["assignments"][0]["mistakes"] if m.get("picture"))
    assert order[0] == sorted(scores) and order[1] == sorted(scores, reverse=True)
    assert seen["buttons"] == len(seen["headers"]) and seen["width"] <= 1280  # no sideways scrolling
    # without the script: the same numbers, in name order, and no sort buttons
    assert without_script["students"] == seen["students"] and without_script["buttons"] == 0


def markdown_page(markdown, path):
    """``markdown`` as the HTML a Markdown renderer makes of it, raw HTML passed through (GitHub
    sanitizes after this; Gradescope and a student's editor may not)."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    path.write_text(f"<!DOCTYPE html><html><head><meta charset=utf-8><title>md</title></head><body>"
                    f"{markdown2html_mistune(markdown)}</body></html>", encoding="utf-8")
    return path


@pytest.mark.browser
def test_markdown_feedback_and_job_summary_show_the_students_text_as_text(graded, tmp_path):
    """The student's folder name, file names and error messages in every Markdown file a class
    run writes (and in the public tests' job summary on GitHub) render as text: nothing runs or loads."""
    from autograder.platforms.templates.progress import summary as classroom_summary
    files = {p.name: p.read_text(encoding="utf-8") for p in graded["one"].glob("*.md")}
    files["job-summary.md"] = graded["job_summary"].read_text(encoding="utf-8")
    files["classroom.md"] = classroom_summary("simple_attention", 0, 15, 0, 1, [(HOSTILE, HOSTILE_MESSAGE)], "")
    files["classroom-error.md"] = classroom_summary("simple_attention", 0, 15, 0, 0, [], HOSTILE_MESSAGE)
    assert len(files) == 14
    for picture in graded["one"].glob("*.svg"):  # the pictures the feedback shows, beside it
        shutil.copy(picture, tmp_path)
    shown, titles = {}, {}
    with browser_or_skip() as browser:
        for name, text in files.items():
            page = browser.open(markdown_page(text, tmp_path / f"{len(shown)}.html")).settle(300)
            pictures = sorted(re.findall(r"!\[[^\]]*\]\(([^)/:]+\.\d+\.svg)\)", text))
            assert page.console == [] and page.requests[0] == page.url, (name, page.console, page.requests)
            assert sorted(page.requests[1:]) == sorted((tmp_path / p).as_uri() for p in pictures), page.requests
            # only the renderer's own elements (its heading anchors are links within the page), and the
            # pictures drawn by the grader, beside the file
            assert page.evaluate("document.querySelectorAll('body *:not(h1,h2,h3,p,pre,code,div,span,table,thead,"
                                 "tbody,tr,th,td,ul,li,strong,a,img), a:not([href^=\"#\"]), "
                                 "img:not([src$=\".svg\"])').length") == 0, name
            shown[name] = page.evaluate("document.body.innerText")
            titles[name] = page.evaluate("Array.from((document.querySelector('h1') || {}).childNodes || [])"
                                         ".filter(n => n.nodeName != 'A').map(n => n.textContent).join('')")
    hostile = [name for name, title in titles.items() if title == f"Feedback: {HOSTILE}"]  # the heading's own text
    assert len(hostile) == 1 and HOSTILE_MESSAGE in shown[hostile[0]] and HOSTILE_FILE in shown[hostile[0]]
    assert f"{HOSTILE}: {HOSTILE_MESSAGE}" in shown["classroom.md"] and HOSTILE_MESSAGE in shown["classroom-error.md"]


def test_every_folder_shows_under_a_name_of_its_own():
    """Control characters, zero-width and bidi characters, bytes that are not UTF-8, spaces at an
    end and decomposed accents never make two folders show alike (grades.csv, the report, the
    feedback's heading), and no name can spell another's escape."""
    from autograder.platforms.files import display_name
    names = ["ann", "a\u200bnn", "ann\x01", "ann\x02", "ann\x7f", "\u202eann", "ann ", "Jos\u00e9", "Jose\u0301",
             "a\\u200bnn", "ann\udcff", "ann\udcfe", "ann\ufffd"]
    shown = [display_name(n) for n in names]
    assert len(set(shown)) == len(names), shown
    assert all(s.isprintable() for s in shown)
    assert [display_name(n) for n in ("ann", "Jos\u00e9", "名前", "o'neil-2")] == ["ann", "Jos\u00e9", "名前", "o'neil-2"]
    rows = [(s, None, "not graded: no Python files", None) for s in shown]
    cells = [r["student"] for r in csv.DictReader(report.class_csv(rows, [ASSIGNMENT]).splitlines())]
    assert len(set(cells)) == len(names)


def test_a_name_like_a_domain_is_never_a_link_in_markdown():
    """GitHub autolinks www.example.com and addresses in text, never in code: the feedback's
    heading and the job summary show a folder name as code."""
    from mistune import create_markdown

    from autograder.grading.result import SubmissionResult
    render = create_markdown(plugins=["table", "url"])
    result = SubmissionResult.build([], [], "namespaces", 0.0)
    for name in ("www.evil.com", "x@evil.com", "`www.evil.com`", "a``b.com"):
        heading = render(report.markdown(result, name)).splitlines()[0]
        assert heading.startswith("<h1>Feedback: <code>") and heading.endswith("</code></h1>"), heading
        assert html.unescape(heading[len("<h1>Feedback: <code>"):-len("</code></h1>")]) == name
        cell = render(report.summary([(name, result, "graded")]))
        assert "<code>" in cell and "<a " not in cell, cell


def test_a_results_folder_others_could_plant_links_in_is_refused(tmp_path):
    """The trusted process writes results only in a folder of its own user's alone: a link, or a
    folder others may write (where a submission run as nobody could plant links named like the
    results), is refused before anything is read or graded."""
    klass = tmp_path / "class"
    (klass / "alice").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "linked").symlink_to(elsewhere)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    (shared / "alice.json").symlink_to(tmp_path / "victim")
    for out, why in ((tmp_path / "linked", "is a link"), (shared, "not a folder of this user's alone")):
        run = cli("grade", klass, "--out", out, "--no-isolation", "--unsafe-same-uid")
        assert run.returncode == 2 and why in run.stderr, run.stderr
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "victim").exists()


def test_result_names_are_unique_by_construction():
    long = "x" * 130
    shortened = result_stem(long)
    assert shortened != long and result_stem(shortened) not in (shortened, long)
    assert {result_stem("summary"), result_stem("Report"), result_stem("GRADES")}.isdisjoint(
        {"summary", "Report", "GRADES"})
    assert [result_stem(n) for n in ("alice", "m0-missing", "bob-1234")] == ["alice", "m0-missing", "bob-1234"]


def test_a_student_named_like_anothers_shortened_result_takes_nothing(tiny, tmp_path):  # noqa: F811 (a fixture)
    """A folder *named* a long name's shortened result name, and one named like the class's own
    summary, grade into files of their own: every student keeps their score."""
    long = "x" * 130
    klass = tmp_path / "class"
    assert course_cli(tiny, "stubs").returncode == 0
    for name, source in ((long, tiny / "solutions" / CH03), (result_stem(long), tiny / "assignments" / CH03),
                         ("summary", tiny / "solutions" / CH03)):
        shutil.copytree(source, klass / name, ignore=shutil.ignore_patterns("test_*"))
    run = course_cli(tiny, "grade", klass, "--assignment", CH03, "--out", tmp_path / "out", "--no-isolation",
                     "--unsafe-same-uid")
    assert run.returncode == 0, run.stdout + run.stderr
    scores = {row["student"]: row["score"] for row in read_csv(tmp_path / "out" / "grades.csv")}
    assert scores == {long: "100", result_stem(long): "0", "summary": "100"}
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["students"] == 3   # the class's own
    assert len(list((tmp_path / "out").glob("*.json"))) == 4


def test_a_class_of_two_assignments_merges_into_the_one_run_too(tiny, tmp_path):  # noqa: F811 (a fixture)
    """Several assignments: a results folder and a report section per assignment; the merged
    shards give the one run's files, every feedback file included, byte for byte."""
    assert course_cli(tiny, "stubs").returncode == 0  # the throwaway assignment's stubs
    klass = tmp_path / "class"
    shutil.copytree(tiny / "solutions" / CH03, klass / "alice" / CH03, ignore=shutil.ignore_patterns("test_*"))
    (klass / "alice" / TINY).mkdir()
    shutil.copy(tiny / "solutions" / TINY / "exercises.py", klass / "alice" / TINY)
    shutil.copytree(tiny / "assignments" / TINY, klass / "bob")
    shutil.copytree(tiny / "solutions" / CH03, klass / "carol", ignore=shutil.ignore_patterns("test_*"))
    (klass / "dave").mkdir()
    TRUSTED = ("--no-isolation", "--unsafe-same-uid")  # the reference and the stubs only: faster without namespaces
    outs = {"one": course_cli(tiny, "grade", klass, "--out", tmp_path / "one", *TRUSTED)}
    for k in (1, 2):
        outs[k] = course_cli(tiny, "grade", klass, "--shard", f"{k}/2", "--out", tmp_path / f"s{k}", *TRUSTED)
    outs["merged"] = course_cli(tiny, "merge", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "merged")
    for run in outs.values():
        assert run.returncode == 0, run.stdout + run.stderr

    def files(folder):
        return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    one, merged = files(tmp_path / "one"), files(tmp_path / "merged")
    assert sorted(merged) == sorted(one) and {f"{CH03}/alice.md", f"{TINY}/bob.json"} <= set(one)
    def timeless(result):  # a result JSON comes from its own grading: its times differ, nothing else
        result["execution_time"] = result["extra_data"].get("repair_search", {})["seconds"] = 0
        return result
    def same(name):
        if name.endswith(".json") and name != "summary.json":
            return timeless(json.loads(one[name])) == timeless(json.loads(merged[name]))
        return one[name] == merged[name]
    assert [name for name in one if not same(name)] == []
    summary = json.loads(one["summary.json"])
    assert [a["assignment"] for a in summary["assignments"]] == [CH03, TINY]
    assert [(a["graded"], a["median"]) for a in summary["assignments"]] == [(2, 100), (2, 2.5)]
    page = one["report.html"].decode()
    # a student's name links to the feedback as a page of its own: rendered, escaped, offline
    assert f'href="{CH03}/alice.html"' in page and f'href="{TINY}/alice.html"' in page
    feedback = one[f"{CH03}/alice.html"].decode()
    assert feedback.startswith("<!DOCTYPE html>") and "Score: 100 / 100" in feedback
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", feedback)


def test_the_charts_are_the_same_from_the_painter_and_a_failed_painter_loses_nothing(graded):
    """A class run draws its charts in a helper process started with the run (its import of
    matplotlib overlaps the grader's of torch); what it draws is what this process draws, and
    where it fails the page is drawn here, the same."""
    from autograder.platforms import classreport
    summary = json.loads((graded["one"] / "summary.json").read_text())
    page = (graded["one"] / "report.html").read_text()
    assert classreport.render(summary) == page
    assert classreport.Painter().draw(summary["assignments"]) == classreport.charts(summary["assignments"])
    dead = classreport.Painter()
    dead.close()                                       # killed before its request comes
    assert dead.draw(summary["assignments"]) is None
    assert classreport.render(summary, dead.draw(summary["assignments"])) == page
