"""Hostile chapter-4 submissions cost the grader bounded time and memory and the next student
nothing: a GPTModel that allocates far more than the child may have, a generate_text_simple
that never returns (calling the model without end, or spinning), a block whose forward sleeps.

Each starts from the reference, so the points it loses are exactly the parts that need what it
broke; every failed check says why, no internal error shows, the whole grading stays inside
the session's budget, and the next honest submission is graded as before.
"""
import time
from pathlib import Path

import pytest

from banks import describe, reference_sources

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
