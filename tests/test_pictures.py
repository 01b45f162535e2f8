"""The pictures of attention weights: drawn in the trusted process from numbers, tokens on the
axes, every text escaped; shown in the Markdown feedback (a file beside it) and in the student's
HTML page. ``tests/pictures/`` keeps three of them as a student sees them (regenerate with
``python tests/test_pictures.py``)."""
import sys
from pathlib import Path

import torch

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS.parent))

from autograder.grading.diagnose import BOOK_TOKENS, picture  # noqa: E402
from autograder.grading.result import Check, SubmissionResult  # noqa: E402
from autograder.platforms import classreport, report  # noqa: E402

INPUTS = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                       [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])  # the book's sentence
SCORES = INPUTS @ INPUTS.T
MASK = torch.tril(torch.ones(6, 6))
CAUSAL = torch.softmax(SCORES.masked_fill(MASK == 0, -torch.inf) / 3**0.5, dim=-1)
# (file, title, the student's matrix, the expected one): three mistakes a student sees at a glance
SHOWN = [("softmax_dim0.svg", "attn_weights_from_scores(inputs @ inputs.T), the book's sentence",
          torch.softmax(SCORES, dim=0), torch.softmax(SCORES, dim=-1)),
         ("mask_triu.svg", "simple_causal_mask(6), one row per token of the book's sentence", torch.triu(torch.ones(6, 6)), MASK),
         ("causal_future.svg", "causal_attn_weights(inputs @ inputs.T, d_k=3), the book's sentence",
          torch.softmax(SCORES.masked_fill(MASK.T == 0, -torch.inf) / 3**0.5, dim=-1), CAUSAL)]


def result_with(pictured, output="wrong values"):
    checks = [Check("causal_attention: tril mask of ones", "causal_attention", 0, 2, "failed", output, picture=pictured),
              Check("causal_attention: other", "causal_attention", 3, 3, "passed", "")]
    return SubmissionResult.build(checks, [], "full", 1.0, assignment="ch03_attention")


def test_picture_is_data_and_refuses_other_shapes():
    drawn = picture("t", torch.softmax(SCORES, dim=0), torch.softmax(SCORES, dim=-1))
    assert drawn["tokens"] == list(BOOK_TOKENS) and len(drawn["yours"]) == 6 and len(drawn["expected"][0]) == 6
    assert drawn["yours"] != drawn["expected"]
    assert picture("t", torch.ones(5, 5), torch.ones(6, 6)) is None
    assert picture("t", [[1.0]], torch.ones(6, 6)) is None


def test_svg_shows_the_tokens_and_both_matrices():
    svg = classreport.attention_svg(picture(*SHOWN[1][1:]), "p0")
    assert svg.startswith("<svg") and "<script" not in svg and "data:" not in svg  # vector cells, no bitmap to load
    for token in BOOK_TOKENS:
        assert svg.count(f">{token}<") == 4  # both axes of both matrices
    assert "yours" in svg and "expected (the book&#x27;s)" in svg or "expected (the book's)" in svg
    assert len(svg) < 60_000


def test_hostile_labels_and_values_cannot_make_markup():
    drawn = picture("<img src=x onerror=alert(1)>", torch.eye(2), torch.eye(2), tokens=("<b>", "&amp;"))
    svg = classreport.attention_svg(drawn, "p0")
    assert "<img" not in svg and "<b>" not in svg and "onerror=alert(1)>" not in svg
    assert classreport.attention_svg({"tokens": ["a"], "yours": [["x"]], "expected": [[1]]}, "p") is None
    assert classreport.attention_svg({"tokens": ["a"], "yours": [[1, 2]], "expected": [[1]]}, "p") is None
    page = classreport.feedback_page(result_with(drawn, "got <script>alert(1)</script>"), "</title><script>")
    assert "<script>" not in page and "&lt;script&gt;" in page and 'src=' not in page.split("<svg", 1)[0]


def test_feedback_files_link_their_pictures(tmp_path):
    result = result_with(picture(*SHOWN[1][1:]))
    classreport.write_feedback(tmp_path / "ann lee", result, "ann lee")
    md = (tmp_path / "ann lee.md").read_text()
    assert "![your matrix beside the expected one](ann%20lee.0.svg)" in md
    assert (tmp_path / "ann lee.0.svg").read_text().startswith("<svg")
    page = (tmp_path / "ann lee.html").read_text()
    assert page.count("<svg") == 1 and "tril mask of ones" in page
    # no picture: no file, no link
    classreport.write_feedback(tmp_path / "bo", result_with(None), "bo")
    assert not list(tmp_path.glob("bo.*.svg")) and "![" not in (tmp_path / "bo.md").read_text()
    assert report.markdown(result_with(None), "bo") == (tmp_path / "bo.md").read_text()


def test_kept_pictures_are_fresh():
    """The three pictures kept under tests/pictures/ are what the code draws now."""
    for name, *args in SHOWN:
        assert (TESTS / "pictures" / name).read_text() == classreport.attention_svg(picture(*args), "p0") + "\n", name


if __name__ == "__main__":
    (TESTS / "pictures").mkdir(exist_ok=True)
    for name, *args in SHOWN:
        (TESTS / "pictures" / name).write_text(classreport.attention_svg(picture(*args), "p0") + "\n")


def test_gradescope_shows_the_picture_as_html_with_the_text_escaped():
    import base64
    import json
    import re

    import jsonschema
    from autograder.platforms import gradescope
    schema = json.loads((TESTS.parent / "autograder/platforms/templates/schemas/gradescope-results.schema.json").read_text())
    converted = gradescope.to_gradescope(result_with(picture(*SHOWN[0][1:]), "got <script>alert(1)</script>"))
    jsonschema.Draft202012Validator(schema).validate(converted)
    failed, passed = converted["tests"]
    assert (failed["output_format"], passed["output_format"]) == ("html", "text")
    assert "<script>" not in failed["output"] and "got &lt;script&gt;alert(1)&lt;/script&gt;" in failed["output"]
    png = base64.b64decode(re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', failed["output"])[1])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert 600 < width < 1000 and 300 < height < 500  # both matrices, legible, small enough for a page
    # a failed check without a picture stays plain text, word for word
    plain = gradescope.to_gradescope(result_with(None, "wrong <values>"))["tests"][0]
    assert (plain["output_format"], plain["output"]) == ("text", "wrong <values>")
