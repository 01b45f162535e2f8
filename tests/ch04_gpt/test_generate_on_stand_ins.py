"""One mistake, one part, for chapter 4's generation: generate_text_simple is judged on a model the
grader chooses where the student's GPTModel cannot be built or run (issue 36).

Before, a submission with the book's generate.py and a GPTModel not written yet scored 0 of 12 in
generate ("not written yet: GPTModel.__init__"). Now the child builds torch's own nn.Embedding,
nn.TransformerEncoderLayer and nn.Linear, reached through the student's ``import torch``, with
the grader's weights; every expected token is computed in the grader on the same weights. So the
book's generate keeps its points, and a wrong generate still loses them there.
"""
import tempfile
from pathlib import Path

import pytest

from banks import describe, reference_sources, stub_sources

A = "ch04_gpt"
CROP = "idx_cond = idx[:, -context_size:]"
PICK = "logits = logits[:, -1, :]"


def graded(grader, sources):
    with tempfile.TemporaryDirectory() as folder:
        for name, text in sources.items():
            (Path(folder) / name).write_text(text)
        return grader.grade(Path(folder), A)


def blank_gpt_model(edit=None):
    """The reference with the stubs' gpt_model.py (GPTModel not written yet) and, with ``edit``
    ((old, new) in generate.py), a wrong generate."""
    sources = reference_sources(A)
    sources["gpt_model.py"] = stub_sources(A)["gpt_model.py"]
    if edit:
        assert sources["generate.py"].count(edit[0]) == 1
        sources["generate.py"] = sources["generate.py"].replace(*edit)
    return sources


def test_the_books_generate_keeps_its_points_beside_a_blank_gpt_model(grader):
    result = graded(grader, blank_gpt_model())
    parts = result["extra_data"]["parts"]
    assert parts["gpt_model"][0] == 0, describe(result)
    assert parts["generate"][0] == parts["generate"][1] > 0, describe(result)
    assert all(got == most for part, (got, most) in parts.items() if part != "gpt_model"), describe(result)
    said = " ".join(t["output"] for t in result["tests"] if t["name"].startswith("generate"))
    assert "judged on the grader's own model" in said and "not written yet" not in said, said


@pytest.mark.parametrize("edit, check", [
    ((CROP, "idx_cond = idx"), "the model sees only the last context_size tokens"),
    ((CROP, "idx_cond = idx[:, :context_size]"), "the model sees only the last context_size tokens"),
    ((PICK, "logits = logits[:, 0, :]"), "each new token is the argmax"),
], ids=["no crop", "the first tokens", "the first position"])
def test_a_wrong_generate_still_loses_them(grader, edit, check):
    result = graded(grader, blank_gpt_model(edit))
    parts = result["extra_data"]["parts"]
    assert parts["generate"][0] < parts["generate"][1], describe(result)
    failed = [t for t in result["tests"] if t["status"] != "passed" and t["name"].startswith("generate")]
    assert any(check in t["name"] for t in failed), describe(result)
