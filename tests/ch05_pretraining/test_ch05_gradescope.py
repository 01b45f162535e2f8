"""Chapter 5 on Gradescope: its bundle carries what its checks need beyond the other chapters'
(the engine's stand_ins.py, which the child always runs, and The Verdict) and grades a whole
submission (its own modules and the chapter-3 and chapter-4 ones it imports) within Gradescope's
768 MB, with isolation as Gradescope has it (no namespaces)."""
from autograder.platforms import gradescope
from autograder.paths import ROOT
from banks import reference_sources
from test_ci_targets import run_bundle


def test_the_chapter_5_bundle_grades_a_submission_and_the_engine_runs_its_stand_ins(tmp_path):
    bundle = tmp_path / "autograder.zip"
    gradescope.build("ch05_pretraining", bundle)

    def place(folder, sources):
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in sources.items():
            (folder / name).write_text(text)

    correct = reference_sources("ch05_pretraining")
    # a student's own copy of stand_ins.py that answers zeros: the child runs the engine's instead
    correct["stand_ins.py"] = (ROOT / "autograder" / "support" / "stand_ins.py").read_text().replace(
        "        return self.out_head(x)", "        return self.out_head(x) * 0")
    result, _ = run_bundle(bundle, tmp_path / "gs", lambda s: place(s, correct), isolation="off")
    assert result["score"] == 100, [(t["name"], t["output"][:200]) for t in result["tests"] if t["status"] != "passed"]


def test_the_verdict_is_chapter_2s_byte_for_byte():
    """Chapter 5 ships The Verdict as data of its own (a manifest's data lives in its solutions/): the
    same bytes as chapter 2's, which the book's numbers (5,145 tokens, the losses) depend on."""
    ch02, ch05 = (ROOT / "solutions" / name / "the-verdict.txt" for name in ("ch02_text_data", "ch05_pretraining"))
    assert ch05.read_bytes() == ch02.read_bytes()
    assert (ROOT / "solutions" / "ch05_pretraining" / ".gitattributes").read_text() == \
        (ROOT / "solutions" / "ch02_text_data" / ".gitattributes").read_text()
