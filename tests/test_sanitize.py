"""What autograder.sanitize removes from a student's notebook and what it keeps (issue 17).

The browser test (test_nbgrader_pages.py) proves nothing runs in the real pages; these say,
case by case and fast, what goes and what stays.
"""
import nbformat
import pytest
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbformat.v4 import new_markdown_cell, new_notebook, new_output, new_raw_cell

from autograder.sanitize import InertFolder, InertNotebook, as_markdown, clean_html, inert_output, markdown_html

REMOVED = {
    "script": ("<script>alert(1)</script>ok", "ok"),
    "style element": ("<style>@import url(http://x/)</style>ok", "ok"),
    "event handler": ('<img src="a.png" onerror="alert(1)">', '<img src="a.png">'),
    "javascript: link": ('<a href=" JaVaScRiPt:alert(1)">a</a>', '<a rel="noopener noreferrer">a</a>'),
    "entity-encoded javascript:": ('<a href="&#106;avascript:alert(1)">a</a>', '<a rel="noopener noreferrer">a</a>'),
    "data:text/html link": ('<a href="data:text/html,x">a</a>', '<a rel="noopener noreferrer">a</a>'),
    "remote image": ('<img src="https://x.example/a.png">', "<img>"),
    "protocol-relative image": ('<img src="//x.example/a.png">', "<img>"),
    "image from the server's root": ('<img src="/files/a.png">', "<img>"),
    "image up the folders": ('<img src="a/%2e%2E/b.png">', "<img>"),
    "srcset": ('<img src="a.png" srcset="https://x.example/b.png 1x">', '<img src="a.png">'),
    "iframe": ('<iframe src="https://x.example" srcdoc="<script>x</script>"></iframe>ok', "ok"),
    "object, embed": ('<object data="x"></object><embed src="x">ok', "ok"),
    "inline SVG": ('<svg onload="alert(1)"><script>x</script></svg>ok', "ok"),
    "MathML": ('<math><mtext><img src=x onerror="alert(1)"></mtext></math>ok', "ok"),
    "base, meta, link": ('<base href="https://x/"><meta http-equiv="refresh" content="0"><link rel="stylesheet" '
                         'href="https://x/a.css">ok', "ok"),
    "form": ('<form action="javascript:x"><button formaction="javascript:x">b</button></form>', "b"),
    "style that loads": ('<p style="color:red;background-image:url(https://x/)">p</p>', "<p>p</p>"),
    "id and class": ('<div id="grade" class="btn">d</div>', "<div>d</div>"),
    "comment": ("<!-- x -->ok", "ok"),
}
KEPT = {
    "table": "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>",
    "inline image": '<img src="data:image/png;base64,iVBORw0KGgo=" alt="plot" width="30">',
    "image beside the notebook": '<img src="plots/a.png">',
    "web link": '<a href="https://example.org" rel="noopener noreferrer">x</a>',
    "anchor": '<a href="#part-2" rel="noopener noreferrer">x</a>',
    "text markup": "<p><strong>b</strong> <em>i</em> <code>c</code></p><pre>x &lt; y</pre><ul><li>l</li></ul>",
    "colours": '<table><tbody><tr><td style="color:red;text-align:right">1</td></tr></tbody></table>',
}


@pytest.mark.parametrize("name", REMOVED)
def test_removed(name):
    html, expected = REMOVED[name]
    assert clean_html(html) == expected


@pytest.mark.parametrize("name", KEPT)
def test_kept(name):
    assert clean_html(KEPT[name]) == KEPT[name]


def test_outputs_keep_text_and_images_and_lose_what_runs():
    js = inert_output(new_output("display_data", data={"application/javascript": "alert(1)",
                                                        "text/plain": "<IPython.core.display.Javascript object>"}))
    assert js.data == {"text/plain": "[output not shown: application/javascript]"}
    svg = inert_output(new_output("display_data", data={"image/svg+xml": '<svg onload="x()"/>'}))
    assert svg.data["text/html"].startswith('<img src="data:image/svg+xml;base64,')   # an image: no script runs
    md = inert_output(new_output("display_data", data={"text/markdown": "**b** [x](javascript:alert(1))"}))
    assert md.data == {"text/html": '<p><strong>b</strong> <a rel="noopener noreferrer">x</a></p>\n'}
    png = inert_output(new_output("display_data", data={"image/png": "iVBO"},
                                  metadata={"image/png": {"width": "1 onerror=x", "height": 20}, "isolated": True}))
    assert png.data == {"image/png": "iVBO"} and png.metadata == {"image/png": {"height": 20}}
    stream = inert_output(new_output("stream", name='x"><script>', text="<b>as text</b>"))
    assert stream.name == "stdout" and stream.text == "<b>as text</b>"
    result = inert_output({"output_type": "execute_result", "data": {"text/plain": "1"}, "metadata": {},
                           "execution_count": "<script>"})
    assert result.execution_count is None
    unknown = inert_output(new_output("display_data", data={"application/x-unknown": "?"}))
    assert unknown.data == {"text/plain": "[output not shown: application/x-unknown]"}
    assert inert_output({"output_type": "forged", "text": "<script>"}) is None


def test_markdown_keeps_what_it_shows_and_no_text_becomes_a_link():
    source = "**b** with `[x](javascript:alert(1))` and `a < b`\n\n> quote\n\n```\nx\n\ny\n```\n\n$x^2$"
    html = markdown_html(source)
    assert "<strong>b</strong>" in html and "<blockquote>" in html and "$x^2$" in html
    rerendered = markdown2html_mistune(as_markdown(html))   # what the page's own renderer makes of it
    assert "<a" not in rerendered and "[x](javascript:alert(1))" in rerendered
    assert "<pre><code>x&#10;&#10;y&#10;</code></pre>" in rerendered   # the blank line stays inside the block


def test_the_instructors_cells_stay_and_the_students_are_sanitized(tmp_path):
    release = tmp_path / "release" / "a1"
    release.mkdir(parents=True)
    theirs = '<div class="alert">Read <b>this</b></div>'
    nbformat.write(new_notebook(cells=[new_markdown_cell(theirs)]), release / "nb.ipynb")
    nb = new_notebook(cells=[new_markdown_cell(theirs), new_markdown_cell('<img src=x onerror="alert(1)">'),
                             new_raw_cell("<script>x</script>r")],
                      metadata={"title": "</title><script>x</script>", "widgets": {},
                                "kernelspec": {"name": "python3", "display_name": "Python 3 (autograder)"}})
    nb.cells[0].metadata["tags"] = ['x" onfocus="alert(1)']
    pre = InertNotebook()
    pre.config.CourseDirectory.root = str(tmp_path)
    nb, _ = pre.preprocess(nb, {"nbgrader": {"assignment": "a1", "notebook": "nb"}})
    assert nb.cells[0].source == theirs and nb.cells[0].metadata == {}
    assert nb.cells[1].source == '<div><img src="x"></div>'
    assert nb.cells[2].source == "r"
    assert nb.metadata == {"kernelspec": {"name": "python3", "display_name": "Python 3 (autograder)"}}
    nbformat.validate(nb)


def test_autograded_loses_the_files_a_browser_would_run(tmp_path):
    for name in ("page.html", "page.htm", "plot.svg", "code.js", "data.xml", "notes.txt", "plot.png", "a.py"):
        (tmp_path / name).write_text("x")
    InertFolder().preprocess(new_notebook(), {"metadata": {"path": str(tmp_path)}})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "notes.txt", "plot.png"]
