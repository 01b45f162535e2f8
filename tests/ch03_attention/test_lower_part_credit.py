"""A module built on a wrong lower part is credited only on evidence the grader computes.

A check built on a lower part (the wrapper on CausalAttention, exercise 3.3 on MultiHeadAttention)
once credited a module whose answer agreed with the student's own lower piece: two answers of the
child's, which a submission makes agree by doing nothing. Each forge here makes the lower part
return zeros (it loses its own points and keeps others) and the module built on it do no work of
its own; the grader's evidence (its linear maps standing in for the heads, the module's
configuration against the reference's) gives it nothing. An honest module on the same wrong lower
part keeps its points: that is the one mistake, one part rule, kept on trusted evidence."""
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from banks import describe, edited_sources  # noqa: E402

HEADS_ZERO = ("causal_attention.py", "        return attn_weights @ values",
              "        return torch.zeros(b, num_tokens, self.W_value.weight.shape[0])")
WRAPPER_ZERO = ("multihead_attention.py", "        return torch.cat([head(x) for head in self.heads], dim=-1)",
                "        return torch.zeros(*x.shape[:2], sum(h.W_value.weight.shape[0] for h in self.heads))")
MHA_ZERO = ("multihead_attention.py", "        return self.out_proj(context_vec)",
            "        return torch.zeros_like(self.out_proj(context_vec))")
ONE_HEAD_GPT2 = ("exercises.py", "    return MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
                 "    return MultiHeadAttention(768, 768, 1024, dropout, num_heads=1)")
WRAPPER = "multihead_attention: MultiHeadAttentionWrapper in eval mode"
GPT2 = "exercises: 3.3"

CASES = {  # edits, the check judged, whether it keeps its points
    "a wrapper returning zeros beside heads returning zeros": ((HEADS_ZERO, WRAPPER_ZERO), WRAPPER, False),
    "the book's wrapper beside heads returning zeros": ((HEADS_ZERO,), WRAPPER, True),
    "3.3 with one head beside a MultiHeadAttention returning zeros": ((MHA_ZERO, ONE_HEAD_GPT2), GPT2, False),
    "the book's 3.3 beside a MultiHeadAttention returning zeros": ((MHA_ZERO,), GPT2, True),
}


@pytest.mark.parametrize("name", CASES)
def test_lower_part_credit_needs_the_graders_evidence(grader, tmp_path, name):
    edits, check, kept = CASES[name]
    sources = edited_sources("ch03_attention", edits)
    for filename, text in sources.items():
        (tmp_path / filename).write_text(text)
    result = grader.grade(tmp_path, "ch03_attention")
    judged, = [t for t in result["tests"] if t["name"].startswith(check)]
    assert (judged["score"] == judged["max_score"]) == kept, describe(result)
    if kept and check == WRAPPER:  # (3.3 is judged on the arguments it passes: nothing to say there)
        assert "charged there" in judged["output"], judged["output"]
