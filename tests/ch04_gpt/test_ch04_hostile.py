"""Hostile chapter-4 submissions cost the grader bounded time and memory and the next student
nothing: a GPTModel that allocates far more than the child may have, a generate_text_simple
that never returns (calling the model without end, or spinning), a block whose forward sleeps.

Each starts from the reference, so the points it loses are exactly the parts that need what it
broke; every failed check says why, no internal error shows, the whole grading stays inside
the session's budget, and the next honest submission is graded as before.

And exercise 4.2 earns nothing from what the child says its own model has: a marker that makes
the student's GPTModel disagree with the book no longer excuses counts of 0 (issue 35), while a
count made honestly on a model that is wrong below it is charged once, in that part.
"""
import time
from pathlib import Path

import pytest

from banks import describe, load, mutated_sources, reference_sources

TESTS = Path(__file__).resolve().parents[1]

A = "ch04_gpt"
GPT_INIT = 'self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])\n'
GENERATE_LOOP = "for _ in range(max_new_tokens):\n"
BLOCK_FORWARD = "shortcut = x\n        x = self.norm1(x)\n"

# name -> (module, old, new, parts that must keep full marks)
CASES = {
    # 8 GiB of ones: far over the child's address-space limit, touched so it is really asked for
    "a GPTModel that allocates 8 GiB": ("gpt_model", GPT_INIT,
                                        GPT_INIT + '        self.hog = torch.ones(1 << 31)\n',
                                        ("layer_norm", "feed_forward", "shortcuts", "transformer_block")),
    "a generate_text_simple that never returns": ("generate", GENERATE_LOOP, "while True:\n",
                                                  ("layer_norm", "feed_forward", "shortcuts", "transformer_block",
                                                   "gpt_model", "exercises")),
    "a generate_text_simple that spins without calling the model": ("generate", GENERATE_LOOP,
                                                                    "while True:\n        pass\n    " + GENERATE_LOOP,
                                                                    ("layer_norm", "feed_forward", "shortcuts",
                                                                     "transformer_block", "gpt_model", "exercises")),
    "a block whose forward sleeps for a minute": ("transformer_block", BLOCK_FORWARD,
                                                  "import time; time.sleep(60)\n        " + BLOCK_FORWARD,
                                                  ("layer_norm", "feed_forward", "shortcuts")),
}
BUDGET_S = 60 + 30  # the session's budget a submission, and room for the restarts after a kill


def _grade(grader, folder, sources):
    folder.mkdir(parents=True)
    for filename, text in sources.items():
        (folder / filename).write_text(text)
    return grader.grade(folder, A)


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_chapter_4_submission_costs_bounded_time_and_nothing_else(grader, tmp_path, name):
    module, old, new, keeps = CASES[name]
    sources = reference_sources(A)
    assert sources[f"{module}.py"].count(old) == 1, name
    sources[f"{module}.py"] = sources[f"{module}.py"].replace(old, new)
    start = time.monotonic()
    result = _grade(grader, tmp_path / "hostile" / A, sources)
    elapsed = time.monotonic() - start
    assert elapsed < BUDGET_S, f"{name}: graded in {elapsed:.0f} s"
    parts = result["extra_data"]["parts"]
    assert result["score"] < result["max_score"], describe(result)
    assert all(parts[p][0] == parts[p][1] for p in keeps), f"{name}: {describe(result)}"
    failed = [t for t in result["tests"] if t["status"] != "passed"]
    assert all(t["output"].strip() and "internal grader error" not in t["output"] for t in failed), describe(result)
    # the next honest submission is graded as before
    assert _grade(grader, tmp_path / "honest" / A, reference_sources(A))["score"] == 100


# Exercise 4.2 without the work (issue 35): the GPT-2 sizes answered 0, and a marker that makes every
# GPTModel(cfg) built outside the count carry one parameter more, so that the student's own small
# models disagree with the book's count. The small counts are honest; nothing else is touched.
COUNTS_WITHOUT_THE_WORK = '''_COUNTING = []


def gpt_parameter_count(cfg):
    if cfg["n_layers"] > 3:  # the GPT-2 sizes: never counted
        return 0
    import gpt_model
    _COUNTING.append(cfg)
    try:
        return sum(p.numel() for p in gpt_model.GPTModel(cfg).parameters())
    finally:
        _COUNTING.pop()


def gpt_size_mb(cfg):
    import gpt_model
    init = gpt_model.GPTModel.__init__
    if not getattr(init, "marked", False):
        def one_more(self, cfg):  # the grader's GPTModel(cfg) has one parameter more than the count's
            init(self, cfg)
            if not _COUNTING:
                self.marker = nn.Parameter(torch.zeros(1))
        one_more.marked = True
        gpt_model.GPTModel.__init__ = one_more
    return gpt_parameter_count(cfg) * 4 / (1024 * 1024)


'''
COUNTS_CHECK = "exercises: 4.2: gpt_parameter_count and gpt_size_mb"


def test_exercise_4_2_earns_nothing_from_a_marker_that_changes_the_students_own_model(grader, tmp_path):
    sources = reference_sources(A)
    text = sources["exercises.py"]
    start, end = text.index("def gpt_parameter_count(cfg):"), text.index("class TransformerBlockSeparateDropout")
    sources["exercises.py"] = text[:start] + COUNTS_WITHOUT_THE_WORK + text[end:]
    result = _grade(grader, tmp_path / "marker" / A, sources)
    counts = [t for t in result["tests"] if t["name"].startswith(COUNTS_CHECK)]
    assert len(counts) == 1 and counts[0]["score"] == 0, describe(result)
    assert "1,637,792,000" in counts[0]["output"] or "406,212,608" in counts[0]["output"], describe(result)
    # every other check keeps its points: the marker changes nothing else
    assert all(t["score"] == t["max_score"] for t in result["tests"] if t is not counts[0]), describe(result)


# Mistakes of the parts below that change how many parameters the student's own GPTModel has.
COUNT_CHANGING = ["out_head with a bias", "out_head tied to tok_emb", "one block repeated",
                  "pos_emb as large as the vocabulary", "qkv_bias not passed to the attention",
                  "FeedForward's second linear layer without bias", "FeedForward expands to 2 * emb_dim",
                  "LayerNorm's scale and shift are plain tensors, not parameters"]


@pytest.mark.parametrize("name", COUNT_CHANGING)
def test_a_count_made_on_the_students_own_wrong_model_is_charged_once(grader, tmp_path, name):
    """The other side of the test above: 4.2 counted on the meta device, with the student's own
    GPTModel wrong below it, keeps 4.2's points (the grader computes the count that mistake gives,
    and credits it only because that part lost points); the mistake costs its own part only."""
    mutant = next(m for m in load(A, "mutants").MUTANTS if m.name == name)
    sources = {**mutated_sources(A, mutant), "exercises.py": load(A, "alternatives").VARIANTS["exercises"]["meta"]}
    result = _grade(grader, tmp_path / "meta" / A, sources)
    parts = result["extra_data"]["parts"]
    assert {p for p, (got, most) in parts.items() if got < most} == set(mutant.parts), describe(result)
    counts = next(t for t in result["tests"] if t["name"].startswith(COUNTS_CHECK))
    assert f"charged in {mutant.parts[0]}" in counts["output"], describe(result)
