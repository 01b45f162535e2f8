"""Hidden checks for section 3.6, multi-head attention (25 points)."""
import pytest
import torch

from _attention import (HEADS, check_forward, check_forwards, check_mask_buffer, check_module_cases, check_seeded_init,
                        check_trainable, linear_biases, lower_answer, own_pieces, probe_module, reference)
from autograder.grading.compare import expect_close, seeded, yours_vs_expected
from autograder.sandbox.session import StudentFailure

points = pytest.mark.points
# (batch, num_tokens, context_length, d_in, d_out, scale) with the number of heads beside
WRAPPER_CASES = [(2, 6, 6, 3, 2, 1.0), (1, 4, 7, 4, 3, 1.0), (3, 5, 5, 5, 1, 1.0), (2, 3, 8, 3, 4, 8.0)]
WRAPPER_HEADS = [2, 3, 1, 2]
# the last: scores large enough that a softmax before the mask underflows (the stub says so)
MHA_CASES = [(2, 6, 6, 3, 2, 1.0), (2, 5, 8, 4, 6, 1.0), (1, 7, 7, 6, 12, 1.0), (3, 3, 6, 5, 8, 1.0),
             (2, 1, 4, 3, 6, 1.0), (2, 6, 9, 4, 4, 8.0), (2, 6, 6, 6, 6, 30.0)]
MHA_HEADS = [2, 3, 4, 2, 2, 1, 2]


@points(4)
def test_wrapper_forward(student, ref, seeds):
    """MultiHeadAttentionWrapper in eval mode: heads' outputs concatenated on the last dim"""
    check_module_cases(student, seeds, ref.multihead_attention.MultiHeadAttentionWrapper, "multihead_attention",
                       "MultiHeadAttentionWrapper", WRAPPER_CASES, heads=WRAPPER_HEADS)
    module = reference(ref.multihead_attention.MultiHeadAttentionWrapper, 4, 3, 6, 0.0, 2, qkv_bias=True, seed=seeds("module"))
    x = seeded(2, 5, 4, seed=seeds("x"))
    check_forward(student, "multihead_attention", "MultiHeadAttentionWrapper", (4, 3, 6, 0.0, 2), module,
                  x, "MultiHeadAttentionWrapper(4, 3, 6, 0.0, 2, qkv_bias=True): qkv_bias must reach every head",
                  kwargs={"qkv_bias": True},
                  own=own_pieces(("causal_attention",), "MultiHeadAttentionWrapper", heads=2))


@points(2)
def test_wrapper_heads_are_causal_attention(student, ref, seeds):
    """self.heads is an nn.ModuleList of num_heads independent CausalAttention modules"""
    for num_heads in (1, 3):
        cause = None   # the wrapper's own failure to build, where it has one
        try:
            heads, held = _heads(student, num_heads)
            registered = set(held)
        except StudentFailure as exc:
            heads, registered, cause = None, set(), exc
        if heads != ["CausalAttention"] * num_heads and "causal_attention" in student.failed_parts:
            # CausalAttention lost points (blank, say): the grader's nn.Linear of a shape no head of
            # these sizes has (7 x 4) stands in for the class while the wrapper builds, so what the
            # wrapper does with it is judged on its own: as many heads, each registered apart
            try:
                stood, held = _heads(student, num_heads, inject={HEADS: MARKED})
            except StudentFailure:
                stood = None
            if stood == ["Linear"] * num_heads and held == {str(i): [7, 4] for i in range(num_heads)}:
                heads, registered = ["CausalAttention"] * num_heads, set(held)
        if cause is not None and heads is None:
            raise cause
        if heads != ["CausalAttention"] * num_heads:
            raise AssertionError(f"MultiHeadAttentionWrapper(..., num_heads={num_heads}).heads: " + yours_vs_expected(
                yours=heads, yours_are="is", expected=f"an nn.ModuleList of {num_heads} CausalAttention modules"))
    # independent heads: each head, run alone with its own weights, gives its own columns
    module = reference(ref.multihead_attention.MultiHeadAttentionWrapper, 4, 2, 5, 0.0, 3, seed=seeds("module"))
    x = seeded(2, 5, 4, seed=seeds("x"))
    names = [f"heads.{i}" for i in range(3)]
    what = "MultiHeadAttentionWrapper(4, 2, 5, 0.0, num_heads=3)"
    reply = None
    try:
        reply = probe_module(student, "multihead_attention", "MultiHeadAttentionWrapper", 4, 2, 5, 0.0, 3, inputs=[x],
                               params={k: v.detach() for k, v in module.named_parameters()}, submodules=names)
        with torch.no_grad():
            for i, name in enumerate(names):
                expect_close(reply["sub_outputs"][name][0], module.heads[i](x),
                             f"head {i} of {what} run alone with its own weights (heads.{i}.W_query.weight, ...)")
    except (AssertionError, StudentFailure):
        # the heads' own mistake, charged in causal_attention: each head as the reference made with
        # that mistake; or, whatever the heads do, three heads registered apart (heads.0, .1, .2
        # among the parameters) that the grader's linear maps can stand in for
        own = own_pieces(("causal_attention",), "MultiHeadAttentionWrapper", heads=3)
        heads_out = None
        if isinstance(reply, dict) and all(isinstance(reply["sub_outputs"].get(n, [None])[0], torch.Tensor) for n in names):
            heads_out = torch.cat([reply["sub_outputs"][n][0] for n in names], dim=-1)
        note = lower_answer(student, own, heads_out, module, x, False, None,
                            ("multihead_attention", "MultiHeadAttentionWrapper", (4, 2, 5, 0.0, 3), {}),
                            stand_in=registered == {"0", "1", "2"})
        if not note:
            raise
        student.notes.append(note)


MARKED = {"weight": torch.zeros(7, 4), "bias": torch.zeros(7)}


def _heads(student, num_heads, **options):
    """The class names in a MultiHeadAttentionWrapper(4, 2, 5, 0.0, num_heads)'s heads, and the heads
    that hold parameters: {index: the shape of its first weight}."""
    info = probe_module(student, "multihead_attention", "MultiHeadAttentionWrapper", 4, 2, 5, 0.0, num_heads,
                        **options)["info"]
    held = {}
    for name, shape in info["params"].items():
        if name.startswith("heads.") and name.endswith(".weight"):
            held.setdefault(name.split(".")[1], shape)
    return info.get("heads"), held


@points(2)
def test_wrapper_dropout(student, ref, seeds):
    """each head applies dropout to its own weights in training mode, heads in order"""
    module = reference(ref.multihead_attention.MultiHeadAttentionWrapper, 3, 2, 6, 0.5, 2, seed=seeds("module"))
    x = seeded(2, 6, 3, seed=seeds("x"))
    check_forward(student, "multihead_attention", "MultiHeadAttentionWrapper", (3, 2, 6, 0.5, 2), module, x,
                  "MultiHeadAttentionWrapper(3, 2, 6, 0.5, num_heads=2) in training mode, seed 123", train=True, seed=123,
                  own=own_pieces(("causal_attention",), "MultiHeadAttentionWrapper", heads=2))


@points(6)
def test_multihead_attention_forward(student, ref, seeds):
    """MultiHeadAttention in eval mode: 1 to 4 heads, d_in != d_out, shorter inputs, large values"""
    check_module_cases(student, seeds, ref.multihead_attention.MultiHeadAttention, "multihead_attention",
                       "MultiHeadAttention", MHA_CASES, heads=MHA_HEADS)


@points(3)
def test_multihead_attention_dropout(student, ref, seeds):
    """dropout on the attention weights in training mode (same seed, same mask); none in eval mode"""
    # head_dim != sqrt(d_out) in each case, so "divided by d_k" and "sqrt(d_out)" can be told apart
    checks = []
    for i, (b, n, ctx, d_in, d_out, heads) in enumerate([(2, 6, 6, 3, 6, 2), (1, 5, 8, 4, 6, 3)]):
        module = reference(ref.multihead_attention.MultiHeadAttention, d_in, d_out, ctx, 0.5, heads, seed=seeds(f"module{i}"))
        x = seeded(b, n, d_in, seed=seeds(f"x{i}"))
        what = f"MultiHeadAttention({d_in}, {d_out}, {ctx}, 0.5, num_heads={heads})"
        common = dict(module="multihead_attention", name="MultiHeadAttention", args=(d_in, d_out, ctx, 0.5, heads),
                      ref_module=module, x=x, seed=123)
        checks += [dict(common, what=f"{what} in training mode, seed 123", train=True,
                        mistake_config=dict(num_heads=heads, out_proj=module.out_proj, dropout=0.5, seed=123)),
                   dict(common, what=f"{what} in eval mode (dropout must be off)",
                        mistake_config=dict(num_heads=heads, out_proj=module.out_proj, eval_dropout=0.5, seed=123))]
    check_forwards(student, checks)


@points(2)
def test_multihead_attention_mask_is_a_buffer(student, ref, seeds):
    """forward masks with the registered buffer mask, which moves with .to() (checked in float64)"""
    module = reference(ref.multihead_attention.MultiHeadAttention, 4, 6, 7, 0.0, 3, seed=seeds("module"))
    check_mask_buffer(student, "multihead_attention", "MultiHeadAttention", (4, 6, 7, 0.0, 3), module,
                      seeded(2, 5, 4, seed=seeds("x")))


@points(2)
def test_multihead_attention_trainable(student, ref, seeds):
    """every weight gets its gradient from backward; the caller's input is left unchanged (both classes)"""
    module = reference(ref.multihead_attention.MultiHeadAttention, 4, 6, 6, 0.0, 2, seed=seeds("module"))
    check_trainable(student, "multihead_attention", "MultiHeadAttention", (4, 6, 6, 0.0, 2), module,
                    seeded(2, 6, 4, seed=seeds("x")))
    module = reference(ref.multihead_attention.MultiHeadAttentionWrapper, 4, 2, 6, 0.0, 2, seed=seeds("wrapper"))
    check_trainable(student, "multihead_attention", "MultiHeadAttentionWrapper", (4, 2, 6, 0.0, 2), module,
                    seeded(2, 6, 4, seed=seeds("wrapper x")), own=own_pieces(("causal_attention",), "MultiHeadAttentionWrapper", heads=2))


@points(2)
def test_multihead_attention_seeded_init(student, ref):
    """W_query, W_key, W_value, out_proj created in that order (the book's values under seed 123)"""
    check_seeded_init(student, "multihead_attention", "MultiHeadAttention", (3, 2, 6, 0.0, 2),
                      ref.multihead_attention.MultiHeadAttention, 123, order=("W_query", "W_key", "W_value", "out_proj"))


@points(2)
def test_multihead_attention_qkv_bias(student, ref, seeds):
    """qkv_bias=True gives the query, key and value layers a bias"""
    module = reference(ref.multihead_attention.MultiHeadAttention, 4, 6, 6, 0.0, 2, qkv_bias=True, seed=seeds("module"))
    check_forward(student, "multihead_attention", "MultiHeadAttention", (4, 6, 6, 0.0, 2), module,
                  seeded(2, 6, 4, seed=seeds("x")), "MultiHeadAttention(4, 6, 6, 0.0, 2, qkv_bias=True)",
                  kwargs={"qkv_bias": True},
                  mistake_config=dict(num_heads=2, out_proj=module.out_proj, bias=linear_biases(module)))
