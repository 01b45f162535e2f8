"""One mistake, charged once, whatever it is (issue 44): a part that calls a lower part's class or
function is judged on the grader's stand-ins for it (a plan's ``inject``), so a lower mistake costs
the parts above it nothing, named or not, written or blank.

The banks' mutants are mostly mistakes the grader can name; these are not: each case is a lower
part with a mistake no catalogue holds, or its file left as the blank stub, beside a correct
submission of everything else. Only the parts it declares lose points, and each of them does.
"""
import pytest

from autograder.grading import course
from autograder.grading.runner import Grader
from banks import describe, edited_sources, grade_sources, reference_sources

CH02, CH03, CH04, CH05, EA = "ch02_text_data", "ch03_attention", "ch04_gpt", "ch05_pretraining", "efficient_attention"
GELU_CUBE = ("feed_forward.py", "torch.pow(x, 3)", "torch.pow(x, 2)")
MHA_SCALE = ("multihead_attention.py", "attn_scores / keys.shape[-1]**0.5", "attn_scores / keys.shape[-1]**0.25")
CH03_BLANK = ("causal_attention.py", "multihead_attention.py")

# (assignment, what, edits (file, old, new) or the files left blank, the parts that must lose points)
CASES = [
    (CH02, "targets two ids ahead", [("data_sampling.py", "token_ids[i + 1:i + max_length + 1]",
                                      "token_ids[i + 2:i + max_length + 2]")], {"data_sampling"}),
    (CH02, "the loader swaps max_length and stride", [(
        "data_sampling.py", "GPTDatasetV1(txt, tokenizer, max_length, stride)",
        "GPTDatasetV1(txt, tokenizer, stride, max_length)")], {"data_sampling"}),
    (CH02, "data_sampling.py blank", ("data_sampling.py",), {"data_sampling"}),
    (CH03, "the wrapper splits d_out over its heads", [(
        "multihead_attention.py", "[CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)",
        "[CausalAttention(d_in, d_out // num_heads, context_length, dropout, qkv_bias)")], {"multihead_attention"}),
    (CH03, "MultiHeadAttention scales by d_k ** 0.25", [MHA_SCALE], {"multihead_attention"}),
    (CH03, "multihead_attention.py blank", ("multihead_attention.py",), {"multihead_attention"}),
    # the wrapper is judged on stand-in heads: its heads' class never runs, blank or wrong
    (CH03, "causal_attention.py blank", ("causal_attention.py",), {"causal_attention"}),
    (CH03, "CausalAttention masks one token too many", [(
        "causal_attention.py", "self.mask.bool()[:num_tokens, :num_tokens]",
        "self.mask.bool()[:num_tokens, :num_tokens].roll(-1, 1)")], {"causal_attention"}),
    (CH04, "GELU with x ** 2", [GELU_CUBE], {"feed_forward"}),
    (CH04, "GELU with 0.6 for 0.5", [("feed_forward.py", "return 0.5 * x", "return 0.6 * x")], {"feed_forward"}),
    (CH04, "FeedForward expands to 2 * emb_dim", [(
        "feed_forward.py", '4 * cfg["emb_dim"]),\n            GELU(),\n            nn.Linear(4 * cfg["emb_dim"]',
        '2 * cfg["emb_dim"]),\n            GELU(),\n            nn.Linear(2 * cfg["emb_dim"]')], {"feed_forward"}),
    (CH04, "MultiHeadAttention scales by d_k ** 0.25", [MHA_SCALE], set()),
    (CH04, "chapter 3's files blank", CH03_BLANK, set()),
    (CH04, "layer_norm.py blank", ("layer_norm.py",), {"layer_norm"}),
    (CH04, "feed_forward.py blank", ("feed_forward.py",), {"feed_forward"}),
    (CH04, "transformer_block.py blank", ("transformer_block.py",), {"transformer_block"}),
    (CH05, "calc_loss_batch with the targets reordered", [(
        "losses.py", "target_batch.flatten())", "target_batch.flip(0).flatten())")], {"losses"}),
    (EA, "chapter 3's MultiHeadAttention scales by d_k ** 0.25", [MHA_SCALE], set()),
    (EA, "chapter 4's GELU with x ** 2", [GELU_CUBE], set()),
    (EA, "chapter 3's files blank", CH03_BLANK, set()),
    (EA, "chapter 4's files blank", ("layer_norm.py", "feed_forward.py"), set()),
]


def sources(assignment, change):
    """The reference submission with ``change``: edits made, or those files left as their stubs."""
    if isinstance(change, list):
        return edited_sources(assignment, change)
    found = reference_sources(assignment)
    for filename in change:
        owner = next(a for a in course.assignments() if filename in a.modules
                     and (a.name == assignment or a.name in course.get(assignment).builds_on))
        found[filename] = (owner.stubs / filename).read_text(encoding="utf-8")
    return found


@pytest.fixture(scope="module")
def grader(tmp_path_factory):
    """The grader, each assignment's reference graded first: full marks (and the reference's
    answers cached, as in a class run, so the cases' time budgets are their own)."""
    graded = set()
    with Grader() as grader:
        def grade(assignment, change):
            if assignment not in graded:
                full = grade_sources(grader, assignment, tmp_path_factory.mktemp("reference") / "s",
                                     reference_sources(assignment))
                assert full["score"] == full["max_score"], describe(full)
                graded.add(assignment)
            return grade_sources(grader, assignment, tmp_path_factory.mktemp("case") / "s", sources(assignment, change))
        yield grade


@pytest.mark.parametrize("assignment, what, change, parts", CASES, ids=[f"{a}: {w}" for a, w, _, _ in CASES])
def test_a_lower_mistake_costs_only_its_own_part(grader, assignment, what, change, parts):
    result = grader(assignment, change)
    lost = {part for part, (got, most) in result["extra_data"]["parts"].items() if got < most}
    assert lost == parts, f"{what}: points lost in {sorted(lost)}, expected in {sorted(parts)}\n{describe(result)}"
