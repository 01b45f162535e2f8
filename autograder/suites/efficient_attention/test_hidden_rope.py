"""Hidden checks of rotary position embeddings (15 points).

compute_rope_params and apply_rope are judged as values (apply_rope on the reference's cos and
sin, so a mistake in compute_rope_params costs nothing there), then by the two properties that
make RoPE what it is, computed here from what the student's apply_rope returned: lengths are
kept, and a query-key score depends only on how far apart the two tokens are. The attention
class is judged against the reference on seeded weights."""
import pytest
import torch

from _efficient import (build_and_run, ch03_params, expect_buffers, loaded, mistakes, rope_apply, rope_params, run,
                        weights)
from autograder.grading.compare import expect_close, seeded
from autograder.grading.kit import Case, once

points = pytest.mark.points
PARAMS_MISTAKES = {
    "the angles interleaved (each frequency twice in a row); pair j is coordinates j and j + head_dim/2, so the "
    "angles repeat as a whole: cat([angles, angles])": "interleaved",
    "the exponent over head_dim // 2 steps of 1 (theta_base ** (-2j / head_dim): steps of 2 over head_dim)":
        "exponent over head_dim // 2 steps",
    "positions counted from 1 (the first token stands at position 0)": "positions from 1",
    "cos and sin swapped": "cos and sin swapped",
}
APPLY_MISTAKES = {
    "the halves rotated the wrong way (cat(x2, -x1) instead of cat(-x2, x1))": "rotated the wrong way",
    "interleaved pairs rotated ((x0, x1), (x2, x3), ...; RoPE here pairs the two halves: x[j] with x[j + head_dim/2])":
        "interleaved pairs",
    "positions not offset (rows 0 .. num_tokens - 1 of cos and sin used; token t stands at offset + t)": "no offset",
    "x added instead of x * cos (x * cos + cat(-x2, x1) * sin rotates; x + ... moves it)": "x not scaled",
}


@points(4)
def test_compute_rope_params(student, ref):
    """compute_rope_params(head_dim, theta_base=10_000, context_length=4096): cos, sin of position * theta_base ** (-2j / head_dim)"""
    cases = [(8, 10_000, 12), (6, 500, 7), (16, 10_000, 40), (4, 50_000.0, 5), (2, 10_000, 4096)]
    plan = student.plan([{"let": f"p{i}", "call": "rope.compute_rope_params", "args": list(case), "return": True}
                         for i, case in enumerate(cases[:-1])]
                        + [{"let": f"p{len(cases) - 1}", "call": "rope.compute_rope_params", "args": [2], "return": True},
                           {"let": "odd", "call": "rope.compute_rope_params", "args": [7, 10_000, 8], "return": True}],
                        needs="rope.compute_rope_params")
    why = plan.failed("odd")
    if not why or "ValueError" not in why:
        raise AssertionError(f"compute_rope_params(head_dim=7) must raise ValueError (RoPE turns pairs of "
                             f"coordinates): {why or 'it returned a value'}")
    for i, (hd, theta, ctx) in enumerate(cases):
        got = plan.values[f"p{i}"]
        what = f"compute_rope_params(head_dim={hd}, theta_base={theta}, context_length={ctx})"
        if not (isinstance(got, list) and len(got) == 2):
            raise AssertionError(f"{what} gave {type(got).__name__}; expected a pair (cos, sin)")
        want = ref.rope.compute_rope_params(hd, theta, ctx)
        for k, part in enumerate(("cos", "sin")):
            found = {name: (lambda v=v, k=k: rope_params(hd, theta, ctx, v)[k]) for name, v in PARAMS_MISTAKES.items()}
            expect_close(got[k], want[k], f"{what}'s {part}", found)


def rope_cases(ref, seeds):
    hd, ctx = 8, 16
    cos, sin = ref.rope.compute_rope_params(hd, 10_000, ctx)
    return cos, sin, [(seeded(2, 3, 5, hd, seed=seeds("x0"), scale=2.0), 0), (seeded(1, 2, 4, hd, seed=seeds("x1")), 6),
                      (seeded(3, 1, 1, hd, seed=seeds("x2")), 15)]


@points(4)
def test_apply_rope(student, ref, seeds):
    """apply_rope(x, cos, sin, offset): x * cos + cat(-x2, x1) * sin with rows offset .. offset + num_tokens - 1"""
    cos, sin, cases = rope_cases(ref, seeds)
    plan = student.plan([{"let": f"r{i}", "call": "rope.apply_rope", "args": [x, cos, sin], "kwargs": {"offset": o},
                          "return": True} for i, (x, o) in enumerate(cases)], needs="rope.apply_rope")
    for i, (x, offset) in enumerate(cases):
        found = {name: (lambda x=x, o=offset, v=v: rope_apply(x, cos, sin, o, v)) for name, v in APPLY_MISTAKES.items()}
        expect_close(plan.values[f"r{i}"], ref.rope.apply_rope(x, cos, sin, offset),
                     f"apply_rope(x of shape {tuple(x.shape)}, cos, sin, offset={offset}) (cos, sin of head_dim 8)",
                     found)


@points(1)
def test_apply_rope_in_pieces(student, ref, seeds):
    """token t stands at position offset + t: the last tokens rotated with offset=k are the whole's last rows"""
    cos, sin = once(("efficient rope params", 8, 10_000, 16), lambda: ref.rope.compute_rope_params(8, 10_000, 16))
    cases = []
    for i, (n, k) in enumerate(((6, 2), (11, 10))):
        x = seeded(2, 3, n, 8, seed=seeds(i))
        piece = x[:, :, k:].contiguous()
        cases.append(Case((piece, k), ref.rope.apply_rope(x, cos, sin)[:, :, k:],
                          f"apply_rope(x[:, :, {k}:], cos, sin, offset={k}) (the last {n - k} of {n} tokens)",
                          {name: (lambda p=piece, o=k, v=v: rope_apply(p, cos, sin, o, v)) for name, v in APPLY_MISTAKES.items()}))
    plan = student.plan([{"let": f"r{i}", "call": "rope.apply_rope", "args": [case.args[0], cos, sin],
                          "kwargs": {"offset": case.args[1]}, "return": True} for i, case in enumerate(cases)],
                        needs="rope.apply_rope")
    for i, case in enumerate(cases):
        expect_close(plan.values[f"r{i}"], case.expected, case.what, case.mistakes)


@points(3)
def test_rope_keeps_lengths_and_scores_depend_only_on_distance(student, ref, seeds):
    """apply_rope keeps every vector's length; a query at m and a key at n score the same for the same m - n"""
    hd, ctx = 8, 32
    cos, sin = ref.rope.compute_rope_params(hd, 10_000, ctx)
    q, k = seeded(1, 1, 1, hd, seed=seeds("q")), seeded(1, 1, 1, hd, seed=seeds("k"))
    pairs = [(3, 1), (10, 8), (25, 23), (7, 7), (30, 30), (12, 4), (20, 12)]  # distances 2, 2, 2, 0, 0, 8, 8
    steps = []
    for m, n in pairs:
        steps += [{"let": f"q{m}_{n}", "call": "rope.apply_rope", "args": [q, cos, sin], "kwargs": {"offset": m},
                   "return": True},
                  {"let": f"k{m}_{n}", "call": "rope.apply_rope", "args": [k, cos, sin], "kwargs": {"offset": n},
                   "return": True}]
    plan = student.plan(steps, needs="rope.apply_rope")
    scores = {}
    for m, n in pairs:
        qm, kn = plan.values[f"q{m}_{n}"], plan.values[f"k{m}_{n}"]
        for name, got, x, pos in (("query", qm, q, m), ("key", kn, k, n)):
            if not (isinstance(got, torch.Tensor) and got.shape == x.shape):
                raise AssertionError(f"apply_rope on a {name} of shape {tuple(x.shape)} gave "
                                     f"{tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__}")
            if not torch.allclose(got.norm(), x.norm(), rtol=1e-4):
                raise AssertionError(f"apply_rope changed a vector's length at position {pos}: {x.norm().item():.4f} "
                                     f"became {got.norm().item():.4f} (a rotation keeps lengths)")
        scores.setdefault(m - n, []).append(((m, n), (qm * kn).sum().item()))
    for distance, found in scores.items():
        (m0, n0), first = found[0]
        for (m, n), score in found[1:]:
            if abs(score - first) > 1e-4 * max(1.0, abs(first)):
                raise AssertionError(f"the score of a query at position {m} with a key at {n} is {score:.5f}, but at "
                                     f"{m0} and {n0} (the same distance {distance}) it is {first:.5f}: with RoPE a "
                                     "score depends only on m - n")


ATT_MISTAKES = {
    "RoPE on the queries only (the keys must be rotated too)": "rope on queries only",
    "RoPE on the values too (only queries and keys are rotated)": "rope on values too",
    "no causal mask": "no mask",
    "scores not scaled by sqrt(head_dim)": "no scaling",
}


@points(3)
def test_rope_attention(student, ref, seeds):
    """MultiHeadAttentionRoPE: chapter 3's attention, queries and keys rotated after the heads split; mask, cos, sin buffers"""
    steps, expected = [], []
    for i, ((d_in, d_out, heads, ctx, qkv_bias, theta), (b, n)) in enumerate(
            [((6, 8, 2, 10, False, 10_000), (2, 9)), ((8, 12, 3, 8, True, 500), (1, 8))]):
        W = weights(d_in, d_out, qkv_bias, seed=seeds(f"W{i}"))
        args = [d_in, d_out, heads, ctx, 0.0, qkv_bias, theta]
        module = loaded(ref.rope.MultiHeadAttentionRoPE, args, ch03_params(W))
        x = seeded(b, n, d_in, seed=seeds(f"x{i}"), scale=2.0)
        steps += build_and_run(f"m{i}", "rope.MultiHeadAttentionRoPE", args, ch03_params(W), x, buffers=True)
        cos, sin = ref.rope.compute_rope_params(d_out // heads, theta, ctx)
        found = mistakes(x, W, heads, ATT_MISTAKES, rope=lambda t, cos=cos, sin=sin: rope_apply(t, cos, sin))
        found["no RoPE (chapter 3's attention)"] = lambda x=x, W=W, h=heads: mistakes(x, W, h, {"": "book"})[""]()
        expected.append((x, run(module, x), found, args))
    plan = student.plan(steps, needs="rope.MultiHeadAttentionRoPE")
    for i, (x, want, found, args) in enumerate(expected):
        d_in, d_out, heads, ctx, _, qkv_bias, theta = args
        expect_close(plan.values[f"m{i}_out"], want,
                     f"MultiHeadAttentionRoPE(d_in={d_in}, d_out={d_out}, num_heads={heads}, context_length={ctx}, "
                     f"qkv_bias={qkv_bias}, theta_base={theta}) in eval mode on input {tuple(x.shape)}", found)
        expect_buffers(plan, f"m{i}", ["mask", "cos", "sin"], "MultiHeadAttentionRoPE")
