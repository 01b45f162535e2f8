"""Hidden checks for section 3.5, causal attention and dropout (25 points)."""
import pytest
import torch

from _attention import (RENORMALISED, check_forwards, check_mask_buffer, check_module_cases, check_seeded_init,
                        check_trainable, reference, with_picture)
from autograder.grading.compare import check_calls, seeded, set_seed
from autograder.grading.diagnose import dropout_mask_models
from autograder.grading.kit import Case

points = pytest.mark.points
# (batch, num_tokens, context_length, d_in, d_out, scale): full and shorter than the context,
# d_in != d_out, one token, batch above 1, large magnitudes
CASES = [(2, 6, 6, 3, 2, 1.0), (1, 8, 8, 4, 4, 1.0), (3, 4, 7, 5, 3, 1.0), (2, 1, 5, 3, 4, 1.0),
         (2, 5, 9, 6, 2, 8.0)]


def _functional(scores, d_k, **change):
    T = scores.shape[-1]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=change.get("diagonal", 1))
    divisor = d_k**0.5 if change.get("scale", True) else 1.0
    dim = change.get("dim", -1)
    if change.get("post_mask"):
        weights = torch.softmax(scores / divisor, dim=dim).masked_fill(mask, 0.0)
        return weights / weights.sum(dim=-1, keepdim=True) if change.get("renormalise") else weights
    return torch.softmax(scores.masked_fill(mask, change.get("fill", -torch.inf)) / divisor, dim=dim)


@points(2)
def test_simple_causal_mask(student, ref):
    """tril mask of ones"""
    with_picture(lambda: check_calls(student, "causal_attention", "simple_causal_mask", [
        ((n,), ref.causal_attention.simple_causal_mask(n), f"simple_causal_mask({n})",
         {"triu instead of tril (ones above the diagonal)": torch.triu(torch.ones(n, n)),
          "the diagonal is masked too": torch.tril(torch.ones(n, n), diagonal=-1)})
        for n in (1, 2, 5, 8)]), student, ref, "causal_attention", "simple_causal_mask", (6,),
        "simple_causal_mask(6), one row per token of the book's sentence")


@points(2)
def test_masked_renormalized_weights(student, ref, seeds):
    """zero the future, then renormalise each row"""
    cases = []
    for i, n in enumerate((1, 4, 6, 9)):
        weights = torch.softmax(seeded(n, n, seed=seeds(i), scale=2.0), dim=-1)
        masked = weights * torch.tril(torch.ones(n, n))
        cases.append(Case((weights,), ref.causal_attention.masked_renormalized_weights(weights),
                      f"masked_renormalized_weights on {n}x{n} weights",
                      {"masked but not renormalised": masked,
                       "renormalised over columns (dim=0)": masked / masked.sum(0, keepdim=True),
                       "row sums without keepdim=True (they broadcast over the columns)": masked / masked.sum(-1)}))
    check_calls(student, "causal_attention", "masked_renormalized_weights", cases)


def _mistakes(scores, d_k):
    return {"no 1/sqrt(d_k) scaling": lambda: _functional(scores, d_k, scale=False),
            "scores divided by d_k instead of sqrt(d_k)": lambda: _functional(scores, d_k**2),
            "softmax over the wrong dimension (use dim=-1)": lambda: _functional(scores, d_k, dim=-2),
            "the mask also hides the diagonal (use diagonal=1)": lambda: _functional(scores, d_k, diagonal=0),
            "masked scores filled with 0 instead of -inf": lambda: _functional(scores, d_k, fill=0.0),
            "weights zeroed after the softmax without renormalising": lambda: _functional(scores, d_k, post_mask=True),
            RENORMALISED: lambda: _functional(scores, d_k, post_mask=True, renormalise=True)}


@points(2)
def test_mask_future_scores(student, ref, seeds):
    """-inf above the diagonal, the scores kept elsewhere, on (T, T) and batched scores"""
    cases = []
    for i, shape in enumerate(((5, 5), (2, 4, 4), (2, 3, 6, 6), (1, 1))):
        scores = seeded(*shape, seed=seeds(i), scale=3.0)
        T = shape[-1]
        cases.append(Case((scores,), ref.causal_attention.mask_future_scores(scores),
                      f"mask_future_scores on scores of shape {shape}",
                      {"no causal mask (the scores returned unmasked)": scores,
                       "the mask also hides the diagonal (use diagonal=1)":
                           scores.masked_fill(torch.ones(T, T).triu().bool(), -torch.inf),
                       "masked scores filled with 0 instead of -inf": scores.masked_fill(torch.ones(T, T).triu(1).bool(), 0.0),
                       "the past masked instead of the future (tril instead of triu)":
                           scores.masked_fill(torch.ones(T, T).tril(-1).bool(), -torch.inf)}))
    check_calls(student, "causal_attention", "mask_future_scores", cases)


@points(3)
def test_causal_attn_weights(student, ref, seeds):
    """-inf mask before the scaled softmax, on (T, T) and batched scores, large too"""
    cases = []
    # the last: scores large enough that a softmax before the mask underflows (the stub says so)
    shapes = [((6, 6), 2, 1.0), ((2, 5, 5), 4, 1.0), ((2, 3, 4, 4), 3, 1.0), ((1, 1), 2, 1.0), ((7, 7), 2, 20.0),
              ((2, 6, 6), 2, 200.0)]
    for i, (shape, d_k, scale) in enumerate(shapes):
        scores = seeded(*shape, seed=seeds(i), scale=scale)
        cases.append(Case((scores, d_k), ref.causal_attention.causal_attn_weights(scores, d_k),
                      f"causal_attn_weights on scores of shape {shape} with d_k={d_k}", _mistakes(scores, d_k)))
    book = ref.simple_attention.inputs
    with_picture(lambda: check_calls(student, "causal_attention", "causal_attn_weights", cases), student, ref,
                 "causal_attention", "causal_attn_weights", (book @ book.T, 3),
                 "causal_attn_weights(inputs @ inputs.T, d_k=3), the book's sentence")


@points(3)
def test_dropout_attn_weights(student, ref, seeds):
    """nn.Dropout on the weights after torch.manual_seed(seed): same mask, kept values scaled by 1/(1-p)"""
    cases = []
    for i, (shape, p, seed) in enumerate((((6, 6), 0.5, 123), ((2, 4, 4), 0.2, 7), ((5, 5), 0.0, 1))):
        weights = torch.softmax(seeded(*shape, seed=seeds(i)), dim=-1)
        set_seed(seed)
        kept = torch.nn.Dropout(p)(torch.ones(shape)) != 0
        cases.append(Case((weights, p, seed), ref.causal_attention.dropout_attn_weights(weights, p, seed),
                      f"dropout_attn_weights on shape {shape}, p={p}, seed={seed}",
                      {"kept values not scaled by 1/(1-p)": weights * kept, "dropout not applied": weights,
                       **dropout_mask_models(weights, p)}))
    check_calls(student, "causal_attention", "dropout_attn_weights", cases)


@points(4)
def test_causal_attention_forward(student, ref, seeds):
    """CausalAttention in eval mode on many shapes, num_tokens < context_length included"""
    check_module_cases(student, seeds, ref.causal_attention.CausalAttention, "causal_attention", "CausalAttention",
                       CASES, dropout=0.0)


@points(3)
def test_causal_attention_dropout(student, ref, seeds):
    """dropout on the attention weights in training mode (same seed, same mask); none in eval mode"""
    checks = []
    for i, (b, n, ctx, d_in, d_out, _) in enumerate(CASES[:3]):
        for p in (0.5, 0.2):
            module = reference(ref.causal_attention.CausalAttention, d_in, d_out, ctx, p, seed=seeds(f"module{i}"))
            x = seeded(b, n, d_in, seed=seeds(f"x{i}"))
            what = f"CausalAttention({d_in}, {d_out}, {ctx}, dropout={p}) on {(b, n, d_in)}"
            common = dict(module="causal_attention", name="CausalAttention", args=(d_in, d_out, ctx, p),
                          ref_module=module, x=x, seed=123)
            checks += [dict(common, what=what + " in training mode, seed 123", train=True,
                            mistake_config=dict(dropout=p, seed=123)),
                       dict(common, what=what + " in eval mode (dropout must be off)", train=False,
                            mistake_config=dict(eval_dropout=p, seed=123))]
    check_forwards(student, checks)


@points(2)
def test_causal_attention_mask_is_a_buffer(student, ref, seeds):
    """forward masks with the registered buffer mask, which moves with .to() (checked in float64)"""
    module = reference(ref.causal_attention.CausalAttention, 4, 3, 7, 0.0, seed=seeds("module"))
    check_mask_buffer(student, "causal_attention", "CausalAttention", (4, 3, 7, 0.0), module, seeded(2, 5, 4, seed=seeds("x")))


@points(2)
def test_causal_attention_trainable(student, ref, seeds):
    """every weight gets its gradient from backward; the caller's input is left unchanged"""
    module = reference(ref.causal_attention.CausalAttention, 4, 3, 6, 0.0, seed=seeds("module"))
    check_trainable(student, "causal_attention", "CausalAttention", (4, 3, 6, 0.0), module,
                    seeded(2, 6, 4, seed=seeds("x")))


@points(2)
def test_causal_attention_seeded_init(student, ref):
    """W_query, W_key, W_value are nn.Linear layers created in that order"""
    check_seeded_init(student, "causal_attention", "CausalAttention", (3, 2, 6, 0.0),
                      ref.causal_attention.CausalAttention, 123, order=("W_query", "W_key", "W_value"))
