"""Nothing a student's notebook holds runs in the pages people open from it (issue 17).

One course, one ``nbgrader autograde`` of three submissions with the reference modules and the
hostile bank's notebooks: 59, the finding itself (``display(HTML('<script>...<img onerror>'))``),
also handed in by a student whose id (folder name) is markup that would run where formgrader's
page writes it, and 60, every variant (JavaScript outputs, SVG, handlers, frames, ``javascript:`` and ``data:``
URLs, remote resources, Markdown and raw cells, forged output metadata and stream names,
notebook and cell metadata). Then ``nbgrader generate_feedback``, and formgrader's page for each
submission, made as formgrader makes it. Each page is opened in headless Chromium, offline:
a payload that ran would ask a listener on 127.0.0.1 and change the page's title, and a remote
resource would ask the listener too. The students' plain outputs, tables and images must still
show.
"""
import html.parser
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from browser import Listener, browser_or_skip
from hostile import CASES, materialize

from autograder.paths import SOLUTIONS
from autograder.authoring.release import build_course, kernel_path, run_nbgrader

ROOT = Path(__file__).resolve().parent.parent

ASSIGNMENT = "ch03_attention"
STUDENTS = {"finding": "59_script_in_feedback", "variants": "60_active_content_in_feedback",
            "named": "59_script_in_feedback"}


def folder_name(student, port):
    """The student's folder (their id in nbgrader): "named" hands in under markup that would run."""
    if student != "named":
        return student
    return f'<img src=x onerror="fetch(`http:&#47;&#47;127.0.0.1:{port}&#47;ran&#47;student-id`)">'

HONEST = ("HONEST-PRINT", "HONEST-TABLE", "HONEST-MARKDOWN", "HONEST-QUOTE", "HONEST-MARKDOWN-OUTPUT",
          "data:image/png;base64,", "data:image/svg+xml;base64,")
# What nbconvert's and formgrader's templates load whatever the notebook holds (offline, nothing
# is fetched: tests/browser.py resolves no host): MathJax (in its Safe configuration) and
# formgrader's own scripts and styles, served by the instructor's notebook server.
TEMPLATE_ASSETS = ("https://cdnjs.cloudflare.com/ajax/libs/mathjax/", "file://formgrader/static/")
# formgrader's page for one submission, as its handler makes it (run in the course folder, where
# formgrader reads nbgrader_config.py), for a student nbgrader added by autograde (no names: the
# page shows the id).
FORMGRADER_PAGE = """
import sys
from nbconvert.exporters import HTMLExporter
from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension
student, assignment, out = sys.argv[1:]
app = FormgradeExtension()
app.initialize([])
page, _ = HTMLExporter(config=app.config).from_filename(
    f"autograded/{student}/{assignment}/{assignment}.ipynb",
    resources={"assignment_id": assignment, "notebook_id": assignment, "submission_id": "s", "index": 0,
               "total": 1, "base_url": "/", "student": student, "last_name": None, "first_name": None,
               "notebook_path": f"autograded/{student}/{assignment}/{assignment}.ipynb"})
open(out, "w").write(page)
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    base = tmp_path_factory.mktemp("pages")
    # skip (or fail on CI) at once where there is no browser
    with browser_or_skip() as browser, Listener() as listener, pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", kernel_path(base))
        course = build_course(ASSIGNMENT, base / "course")
        case = {c.name: c for c in CASES}
        folders = {student: folder_name(student, listener.port) for student in STUDENTS}
        for student, name in STUDENTS.items():
            folder = course / "submitted" / folders[student] / ASSIGNMENT
            materialize(case[name], folder, {"PORT": str(listener.port)})
            (folder / "notes.html").write_text(f"<script>{'fetch(`/ran/file`)'}</script>")  # served by formgrader
            (folder / "plot.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" onload="x()"/>')
        autograde = run_nbgrader(course, "autograde", ASSIGNMENT, check=False)
        feedback = run_nbgrader(course, "generate_feedback", ASSIGNMENT, check=False)
        found = {}
        for student in STUDENTS:
            found[student, "feedback"] = course / "feedback" / folders[student] / ASSIGNMENT / f"{ASSIGNMENT}.html"
            found[student, "formgrader"] = base / f"formgrader-{student}.html"
            made = subprocess.run([sys.executable, "-c", FORMGRADER_PAGE, folders[student], ASSIGNMENT,
                                   str(found[student, "formgrader"])], cwd=course, capture_output=True, text=True)
            if made.returncode:
                print(made.stderr[-3000:])
        rendered = {}
        for key, path in found.items():
            before = len(listener.paths)
            if not path.exists():
                rendered[key] = {"dom": None}
                continue
            page = browser.open(path).settle()
            rendered[key] = {"dom": page.dom(), "title": page.evaluate("document.title"),
                             "text": page.evaluate("document.body.innerText"),
                             "url": page.url, "requests": page.requests, "heard": listener.paths[before:]}
        yield {"course": course, "autograde": autograde, "feedback": feedback, "pages": rendered,
               "port": listener.port, "folders": folders}


def test_autograde_and_feedback_succeed_with_full_marks(pages):
    assert pages["autograde"].returncode == 0, pages["autograde"].stderr[-3000:]
    assert pages["feedback"].returncode == 0, pages["feedback"].stderr[-3000:]
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{pages['course'] / 'gradebook.db'}") as gb:
        for folder in pages["folders"].values():
            assert gb.find_submission(ASSIGNMENT, folder).score == 100


class _Elements(html.parser.HTMLParser):
    """(tag, {attribute: value}) of every element of a page."""

    def __init__(self, text):
        super().__init__()
        self.found, self.scripts, self._in_script = [], [], False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, {k: v or "" for k, v in attrs}))
        self._in_script = tag == "script"

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)

    def handle_endtag(self, tag):
        self._in_script = False


def active_content(dom, port):
    """What of the student's could run or load in ``dom`` (as the browser left it)."""
    problems = []
    page = _Elements(dom)
    for tag, attrs in page.found:
        if tag in ("iframe", "frame", "object", "embed", "base", "form", "svg", "math"):
            problems.append(f"<{tag}>")
        if tag == "meta" and attrs.get("http-equiv", "").lower() == "refresh":
            problems.append("<meta refresh>")
        for name, value in attrs.items():
            link = tag == "a" and name == "href" and re.match(r"https?://", value)  # loads only when clicked
            data = name.startswith("data-")  # the page's own scripts' data: neither loaded nor run
            if f"127.0.0.1:{port}" in value and not (link or data) or name.startswith("on") and "ran-" in value:
                problems.append(f"<{tag} {name}={value[:60]!r}>")
            if re.match(r"\s*(javascript|vbscript|data:text)", value, re.I):
                problems.append(f"<{tag} {name}={value[:60]!r}>")
    problems += [f"<script>{s[:60]!r}" for s in page.scripts if f"127.0.0.1:{port}" in s or "ran-" in s]
    return problems


@pytest.mark.parametrize("page", ["feedback", "formgrader"])
@pytest.mark.parametrize("student", STUDENTS)
def test_nothing_of_the_student_runs_or_loads_in_the_page(pages, student, page):
    rendered = pages["pages"][student, page]
    assert rendered["dom"] is not None, f"no {page} page for {student}"
    assert rendered["heard"] == [], "the page ran the student's script or loaded a remote resource"
    # What the page asked for, the templates' own assets aside: its own URL, the student's images
    # (data: or beside the page), nothing else.
    beside = rendered["url"].rsplit("/", 1)[0] + "/"
    asked = [url for url in rendered["requests"] if not url.startswith(TEMPLATE_ASSETS)]
    assert [url for url in asked if url != rendered["url"] and not url.startswith((beside, "data:image/"))] == []
    assert "ran-" not in rendered["title"], rendered["title"]
    assert active_content(rendered["dom"], pages["port"]) == []


@pytest.mark.parametrize("page", ["feedback", "formgrader"])
@pytest.mark.parametrize("student", STUDENTS)
def test_plain_outputs_tables_and_images_still_show(pages, student, page):
    dom = pages["pages"][student, page]["dom"]
    assert [marker for marker in HONEST if marker not in dom] == []
    assert "<td>HONEST-TABLE</td>" in dom and "<strong>HONEST-MARKDOWN</strong>" in dom


def test_formgrader_shows_the_students_id_as_text(pages):
    folder = pages["folders"]["named"]
    assert folder in pages["pages"]["named", "formgrader"]["text"]


def test_autograded_holds_the_inert_notebook_and_no_file_a_browser_would_run(pages):
    """formgrader shows and serves autograded/: the notebook there is the sanitized one."""
    folder = pages["course"] / "autograded" / "variants" / ASSIGNMENT
    nb = nbformat.read(folder / f"{ASSIGNMENT}.ipynb", as_version=4)
    kinds = {mime for cell in nb.cells for out in cell.get("outputs", []) for mime in out.get("data", {})}
    assert kinds <= {"text/plain", "text/html", "image/png", "text/latex"}, kinds
    shown = [out["data"]["text/html"] for cell in nb.cells for out in cell.get("outputs", [])
             if "text/html" in out.get("data", {})] + [c.source for c in nb.cells if c.cell_type != "code"]
    for piece in shown:
        assert active_content(piece, pages["port"]) == [], piece
        elements = _Elements(piece).found
        assert not [(tag, name) for tag, attrs in elements for name in attrs if name.startswith("on")], piece
        assert not [tag for tag, _ in elements if tag in ("script", "style", "link")], piece
    assert "[output not shown: application/vnd.jupyter.widget-view+json]" in json.dumps(nb)
    assert nb.metadata.keys() <= {"kernelspec", "language_info"}
    assert not (folder / "notes.html").exists() and not (folder / "plot.svg").exists()
    submitted = pages["course"] / "submitted" / "variants" / ASSIGNMENT
    assert (submitted / "notes.html").exists()   # the student's own files are not touched
    # Only the student's files go; the modules are graded and kept.
    assert all((folder / f"{m}.py").exists() for m in ("simple_attention", "exercises"))
    assert (SOLUTIONS / ASSIGNMENT / "simple_attention.py").read_text() == (folder / "simple_attention.py").read_text()
