"""A mistake in the student's chapter-3 or chapter-4 code costs the KV cache nothing.

The bank of mutants edits this assignment's modules only; here the mistake is in the modules
it builds on. A chapter-4 piece (LayerNorm, FeedForward) is replaced by the grader's stand-ins,
so its mistake never shows. A chapter-3 attention mistake that the student repeats in the
cached attention (the usual way: they copy their own class and add the cache) is judged
against their own model without the cache: full marks for a correct cache, with a note. The
same mistake made only in the cached attention is this part's own, and costs points here.
"""
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from banks import describe, reference_sources  # noqa: E402

UNSCALED = ("attn_scores / keys.shape[-1]**0.5", "attn_scores")
CASES = {
    "chapter 3's attention unscaled, the mistake repeated in the cached attention":
        ({"multihead_attention.py": UNSCALED, "kv_cache.py": UNSCALED}, True),
    "chapter 3's attention unscaled, the cached attention right": ({"multihead_attention.py": UNSCALED}, True),
    "chapter 4's LayerNorm with the unbiased variance": (
        {"layer_norm.py": ("x.var(dim=-1, keepdim=True, unbiased=False)", "x.var(dim=-1, keepdim=True)")}, True),
    "chapter 4's FeedForward without its GELU": ({"feed_forward.py": ("GELU(),", "")}, True),
    "the cached attention alone unscaled": ({"kv_cache.py": UNSCALED}, False),
}


@pytest.mark.parametrize("name", CASES)
def test_lower_mistakes_cost_the_cache_nothing(grader, tmp_path, name):
    edits, full_marks = CASES[name]
    sources = reference_sources("efficient_attention")
    for filename, (old, new) in edits.items():
        assert sources[filename].count(old) == 1, (filename, old)
        sources[filename] = sources[filename].replace(old, new)
    for filename, text in sources.items():
        (tmp_path / filename).write_text(text)
    result = grader.grade(tmp_path, "efficient_attention")
    got, most = result["extra_data"]["parts"]["kv_cache"]
    if full_marks:
        assert got == most > 0, describe(result)
    else:
        assert got < most, describe(result)
