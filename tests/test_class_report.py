"""The class report (report.html, summary.json) in a real browser, and a class graded in shards.

One class of 12 is graded once whole and once in 3 shards that are then merged: the reference,
the blank stubs, eight mutants of the bank (two with the same named mistake, one that does not
compile), a student who handed in nothing, and one whose folder name, file name and feedback are
markup that tries to run a script. The page, and every Markdown feedback file and the job summary
rendered as a Markdown renderer does before GitHub's own sanitizer, are opened in headless
Chromium (Debian's package).
"""
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grading import course
from autograder.platforms import shards
from autograder.paths import ROOT
from banks import load, reference_sources, stub_sources
from browser import browser_or_skip
from test_course import CH03, TINY, tiny  # noqa: F401 (tiny: a course of two assignments, a fixture)
from test_course import cli as course_cli
from test_mutants import mutated_sources

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
    assert seen["notGraded"] == [[r["student"], r["status"]] for r in rows if r["score"] == "0" and not r["max_score"]]
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


def test_markdown_feedback_and_job_summary_show_the_students_text_as_text(graded, tmp_path):
    """The student's folder name, file names and error messages in every Markdown file a class
    run writes (and in Classroom's job summary) render as text: nothing runs or loads."""
    from autograder.platforms.templates.classroom_report import summary as classroom_summary
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
            titles[name] = page.evaluate("(document.querySelector('h1') || {}).firstChild?.textContent")
    hostile = [name for name, title in titles.items() if title == f"Feedback: {HOSTILE}"]  # the heading's own text
    assert len(hostile) == 1 and HOSTILE_MESSAGE in shown[hostile[0]] and HOSTILE_FILE in shown[hostile[0]]
    assert f"{HOSTILE}: {HOSTILE_MESSAGE}" in shown["classroom.md"] and HOSTILE_MESSAGE in shown["classroom-error.md"]


def test_a_class_of_two_assignments_merges_into_the_one_run_too(tiny, tmp_path):
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
    def same(name):  # a result JSON comes from its own grading: its time differs, nothing else
        if name.endswith(".json") and name != "summary.json":
            return {**json.loads(one[name]), "execution_time": 0} == {**json.loads(merged[name]), "execution_time": 0}
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
