"""No points for a KV cache that caches nothing: every kv_cache check holds a witness.

Three ways to pass a cache's checks without keeping one, each graded: an attention that keeps
its inputs and recomputes every key and value at each call (outputs equal, one token fed per
step); a model that keeps the token ids and reruns the whole sequence through its modules'
``forward()`` (no hook sees it), feeding its attention a dummy of the new tokens' size; and a
submission that rewrites the sandbox's reply encoder inside its own process, so that its
answers agree with one another wherever the grader once trusted that agreement. The grader
changes W_key and W_value between calls, and only a cache that keeps what each call computed
gives the reference's answers then."""
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from banks import describe, edited_sources  # noqa: E402

ATT_CACHE = """        if use_cache:
            if self.cache_k is None:
                self.cache_k, self.cache_v = keys_new, values_new
            else:
                # the tokens' dimension grows
                self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)
                self.cache_v = torch.cat([self.cache_v, values_new], dim=1)
            keys, values = self.cache_k, self.cache_v"""
ATT_RESET = "        self.cache_k, self.cache_v = None, None\n        self.ptr_current_pos = 0"
GPT_FORWARD = "        batch_size, seq_len = in_idx.shape\n        tok_embeds = self.tok_emb(in_idx)"
GPT_RESET = "            block.att.reset_cache()\n        self.current_pos = 0"

RECOMPUTES = [(ATT_CACHE, """        if use_cache:  # the inputs kept, every key and value made again
            kept = getattr(self, "inputs_kept", None)
            self.inputs_kept = x if kept is None else torch.cat([kept, x], dim=1)
            t = self.inputs_kept.shape[1]
            keys = self.W_key(self.inputs_kept).view(b, t, self.num_heads, self.head_dim)
            values = self.W_value(self.inputs_kept).view(b, t, self.num_heads, self.head_dim)
            self.cache_k, self.cache_v = keys, values"""),
              (ATT_RESET, ATT_RESET + "\n        self.inputs_kept = None")]
RERUNS = [(GPT_FORWARD, """        batch_size, seq_len = in_idx.shape
        if use_cache:  # the ids kept, the whole sequence run again through forward() itself
            kept = getattr(self, "ids_kept", None)
            self.ids_kept = in_idx if kept is None else torch.cat([kept, in_idx], dim=1)
            ids = self.ids_kept
            x = self.tok_emb.forward(ids) + self.pos_emb.forward(torch.arange(ids.shape[1]))
            for block in self.trf_blocks:
                x = block.forward(x)
            logits = self.out_head.forward(self.final_norm.forward(x))[:, -seq_len:]
            self.trf_blocks[0].att(torch.zeros(batch_size, seq_len, x.shape[-1]))  # what a hook would count
            return logits
        tok_embeds = self.tok_emb(in_idx)"""),
          (GPT_RESET, GPT_RESET + "\n        self.ids_kept = None")]
# every floating answer sent back becomes zeros: the uncached, the chapter-3 and the cached
# answers then agree with one another, and with nothing the grader computed
ENCODER = '''
import sys as _sys

import torch as _torch


def _zeros(value):
    if isinstance(value, _torch.Tensor) and value.is_floating_point():
        return _torch.zeros_like(value)
    if isinstance(value, dict):
        return {k: _zeros(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_zeros(v) for v in value]
    return value


_protocol = _sys.modules.get("autograder.sandbox.protocol")
if _protocol is not None and not getattr(_protocol, "_patched", False):
    _encode = _protocol.encode
    _protocol.encode = lambda reply: _encode({**reply, "values": _zeros(reply.get("values", {}))})
    _protocol._patched = True
'''
# the checks whose module holds a real cache in the model rerun: its attention and block are the book's
ATTENTION_AND_BLOCK = ("chapter 3's MultiHeadAttention", "reset_cache() starts", "TransformerBlock(")
# the one check that judges no cache: the attention's dropout, without the cache, against the grader's
# answers (a submission that caches nothing may earn it; the encoder's zeros do not)
NO_CACHE_JUDGED = ("chapter 3's dropout on the attention weights",)

CHEATS = {
    "the attention keeps its inputs and recomputes the keys and values": (RECOMPUTES, False, ()),
    "the model reruns the whole sequence through forward() and feeds a dummy": (RERUNS, False, ATTENTION_AND_BLOCK),
    "the sandbox's reply encoder rewritten inside the child": (RECOMPUTES, True, ()),
}


@pytest.mark.parametrize("name", CHEATS)
def test_a_cache_that_caches_nothing_earns_no_cache_points(grader, tmp_path, name):
    edits, patch_encoder, real = CHEATS[name]
    sources = edited_sources("efficient_attention", [("kv_cache.py", old, new) for old, new in edits])
    if patch_encoder:
        sources["kv_cache.py"] += ENCODER
    for filename, text in sources.items():
        (tmp_path / filename).write_text(text)
    result = grader.grade(tmp_path, "efficient_attention")
    kv = [t for t in result["tests"] if t["name"].startswith("kv_cache:")]
    earned = [t["name"] for t in kv if t["score"] and not any(f in t["name"] for f in (*real, *NO_CACHE_JUDGED))]
    assert len(kv) == 9 and not earned, describe(result)
    # what holds a real cache keeps its points: the model's cheat costs the model's checks only
    assert all(t["score"] == t["max_score"] for t in kv if any(f in t["name"] for f in real)), describe(result)
